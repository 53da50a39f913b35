"""Access and identity reviews (layer L4): minik3s serves plain HTTP on loopback with no
authentication or authorization, so every request acts as a cluster admin. The review APIs say
so, as a kube-apiserver with an always-allow authorizer would: `kubectl auth can-i ...` answers
"yes" and `kubectl auth whoami` names the admin user. Reviews are answered, never stored.
"""

from __future__ import annotations

from typing import Any

from minik3s.api.errors import BadRequestError
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict

ADMIN = {"username": "minik3s-admin", "groups": ["system:masters", "system:authenticated"]}
ALLOW_ALL_RULE = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}


def review(info: ResourceInfo, body: Any) -> JsonDict:
    if not isinstance(body, dict):
        raise BadRequestError("the object provided is not a JSON object")
    out: JsonDict = {"kind": info.kind, "apiVersion": info.api_version,
                     "metadata": {"creationTimestamp": None, **(body.get("metadata") or {})},
                     "spec": body.get("spec") or {}}
    if info.resource == "selfsubjectreviews":
        out.pop("spec")
        out["status"] = {"userInfo": dict(ADMIN)}
    elif info.resource == "selfsubjectrulesreviews":
        out["status"] = {"resourceRules": [dict(ALLOW_ALL_RULE)],
                         "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}
    else:
        out["status"] = {"allowed": True, "reason": "minik3s serves every request as a cluster admin"}
    return out
