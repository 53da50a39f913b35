"""RBAC strategies (layer L4, apiserver): pkg/apis/rbac/validation and the v1 defaults.

Role / ClusterRole: names are path segments (`system:node` is fine); every rule needs verbs,
and either nonResourceURLs (cluster roles only, never mixed with resources) or apiGroups plus
resources. A ClusterRole's aggregationRule needs at least one selector.
RoleBinding / ClusterRoleBinding: roleRef.apiGroup defaults to rbac.authorization.k8s.io and
must be it; roleRef.kind is Role or ClusterRole (ClusterRole only for a ClusterRoleBinding);
roleRef is immutable. Subjects: ServiceAccount (core group, a DNS subdomain name, namespace
required in a cluster binding), User or Group (rbac group, defaulted).
The objects are stored only: minik3s does not authorize requests with them.
Data flow: core create/update -> default -> validate / validate_update -> storage.
"""

from __future__ import annotations

import json
from typing import Any

from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    invalid,
    is_dns1123_subdomain,
    is_path_segment_name,
    not_supported,
    required,
    validate_label_selector,
)

from .base import Strategy

RBAC_GROUP = "rbac.authorization.k8s.io"


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def validate_policy_rule(rule: Any, path: str, *, namespaced: bool) -> list[JsonDict]:
    if not isinstance(rule, dict):
        return [invalid(path, rule, "must be an object")]
    errs: list[JsonDict] = []
    if not _list(rule.get("verbs")):
        errs.append(required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = _list(rule.get("nonResourceURLs"))
    if urls:
        if namespaced:
            errs.append(invalid(f"{path}.nonResourceURLs", urls,
                                "namespaced rules cannot apply to non-resource URLs"))
        if _list(rule.get("apiGroups")) or _list(rule.get("resources")) or _list(rule.get("resourceNames")):
            errs.append(invalid(f"{path}.nonResourceURLs", urls,
                                "rules cannot apply to both regular resources and non-resource URLs"))
        return errs
    if not _list(rule.get("apiGroups")):
        errs.append(required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
    if not _list(rule.get("resources")):
        errs.append(required(f"{path}.resources", "resource rules must supply at least one resource"))
    return errs


def _validate_rules(obj: JsonDict, *, namespaced: bool) -> list[JsonDict]:
    errs: list[JsonDict] = []
    for i, rule in enumerate(_list(obj.get("rules"))):
        errs.extend(validate_policy_rule(rule, f"rules[{i}]", namespaced=namespaced))
    return errs


class RoleStrategy(Strategy):
    kind = "Role"
    group = RBAC_GROUP
    name_format = "path"

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        return _validate_rules(obj, namespaced=True)


class ClusterRoleStrategy(Strategy):
    kind = "ClusterRole"
    group = RBAC_GROUP
    name_format = "path"

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        errs = _validate_rules(obj, namespaced=False)
        agg = obj.get("aggregationRule")
        if agg is not None:
            selectors = _list(agg.get("clusterRoleSelectors")) if isinstance(agg, dict) else []
            if not selectors:
                errs.append(required("aggregationRule.clusterRoleSelectors",
                                     "at least one clusterRoleSelector required if aggregationRule is non-nil"))
            for i, sel in enumerate(selectors):
                errs.extend(validate_label_selector(sel, f"aggregationRule.clusterRoleSelectors[{i}]"))
        return errs


def _default_binding(obj: JsonDict) -> None:
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = RBAC_GROUP
    for s in _list(obj.get("subjects")):
        if isinstance(s, dict) and not s.get("apiGroup"):
            if s.get("kind") in ("User", "Group"):
                s["apiGroup"] = RBAC_GROUP
            elif "apiGroup" in s:  # a ServiceAccount's is "", which the wire omits (omitempty)
                del s["apiGroup"]


def validate_subject(s: Any, path: str, *, namespaced: bool) -> list[JsonDict]:
    if not isinstance(s, dict):
        return [invalid(path, s, "must be an object")]
    errs: list[JsonDict] = []
    name = s.get("name") or ""
    if not name:
        errs.append(required(f"{path}.name"))
    kind = s.get("kind") or ""
    api_group = s.get("apiGroup") or ""
    if kind == "ServiceAccount":
        if name:
            errs.extend(invalid(f"{path}.name", name, m) for m in is_dns1123_subdomain(str(name)))
        if api_group:
            errs.append(not_supported(f"{path}.apiGroup", api_group, [""]))
        if not namespaced and not s.get("namespace"):
            errs.append(required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if api_group != RBAC_GROUP:
            errs.append(not_supported(f"{path}.apiGroup", api_group, [RBAC_GROUP]))
    else:
        errs.append(not_supported(f"{path}.kind", kind, ["ServiceAccount", "User", "Group"]))
    return errs


def _validate_binding(obj: JsonDict, *, namespaced: bool) -> list[JsonDict]:
    errs: list[JsonDict] = []
    ref = obj.get("roleRef")
    ref = ref if isinstance(ref, dict) else {}
    if (ref.get("apiGroup") or "") != RBAC_GROUP:
        errs.append(not_supported("roleRef.apiGroup", ref.get("apiGroup") or "", [RBAC_GROUP]))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if (ref.get("kind") or "") not in kinds:
        errs.append(not_supported("roleRef.kind", ref.get("kind") or "", kinds))
    name = ref.get("name") or ""
    if not name:
        errs.append(required("roleRef.name"))
    else:
        errs.extend(invalid("roleRef.name", name, m) for m in is_path_segment_name(str(name)))
    for i, s in enumerate(_list(obj.get("subjects"))):
        errs.extend(validate_subject(s, f"subjects[{i}]", namespaced=namespaced))
    return errs


class _GoRoleRef:
    """The new roleRef as Go's %#v prints the struct in upstream's error message."""

    def __init__(self, ref: Any) -> None:
        self.ref = ref if isinstance(ref, dict) else {}

    def __str__(self) -> str:
        r = self.ref
        return (f'rbac.RoleRef{{APIGroup:{json.dumps(str(r.get("apiGroup") or ""))}, '
                f'Kind:{json.dumps(str(r.get("kind") or ""))}, Name:{json.dumps(str(r.get("name") or ""))}}}')


class _BindingStrategy(Strategy):
    group = RBAC_GROUP
    name_format = "path"
    namespaced = True

    def _default(self, obj: JsonDict) -> None:
        _default_binding(obj)

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        return _validate_binding(obj, namespaced=self.namespaced)

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        if new.get("roleRef") != old.get("roleRef"):
            return [invalid("roleRef", _GoRoleRef(new.get("roleRef")), "cannot change roleRef")]
        return []


class RoleBindingStrategy(_BindingStrategy):
    kind = "RoleBinding"


class ClusterRoleBindingStrategy(_BindingStrategy):
    kind = "ClusterRoleBinding"
    namespaced = False
