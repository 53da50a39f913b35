"""What one admission request is about (layer L4, apiserver.webhooks leaf): upstream's
`admission.Attributes`, as the request core fills it for the webhooks.

Data flow: `apiserver.core` builds one `Attributes` per write attempt; `rules` matches it
against webhooks and `call` turns it into an AdmissionReview request.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.user import APISERVER, UserInfo

# kube-apiserver's own loopback identity, the user of an in-process call that named none
APISERVER_USER = APISERVER

CREATE = "CREATE"
UPDATE = "UPDATE"
DELETE = "DELETE"
CONNECT = "CONNECT"


@dataclass(slots=True)
class Attributes:
    """One request. `info` is the resource the object is stored as (its group, version, kind);
    `namespace` is "" for cluster-scoped objects and, as upstream, the namespace's own name for
    requests on a namespace. `obj` is None on DELETE, `old` None on CREATE. `options` is the
    wire CreateOptions / UpdateOptions / DeleteOptions. Webhooks' warnings go to `warnings`."""

    info: ResourceInfo
    operation: str
    name: str
    namespace: str
    obj: JsonDict | None
    old: JsonDict | None
    options: JsonDict | None  # None: CONNECT (the review's `options` is null)
    dry_run: bool = False
    subresource: str = ""
    user: UserInfo | None = None
    warnings: list[str] = field(default_factory=list)
    # the object's group/version/kind when it is not the resource's (pods/eviction: policy/v1 Eviction)
    object_kind: JsonDict | None = None

    @property
    def user_info(self) -> UserInfo:
        return self.user or APISERVER_USER

    @property
    def is_namespace(self) -> bool:
        return self.info.group == "" and self.info.resource == "namespaces"
