"""Who is making a request (layer L1): the user an authenticator produced, as upstream's
`user.Info` and the wire `UserInfo` of authentication.k8s.io/v1.

Data flow: the HTTP layer's authentication sets one `UserInfo` per request (impersonation may
replace it); the handlers pass it to the request core in `WriteOptions.user` /
`DeleteOptions.user`, where admission (webhooks' `AdmissionReview.request.userInfo`) reads it.
In-process components (scheduler, controllers, kubelets) carry their own identities
(`component_user`). `None` in an options object means "an in-process caller that named no
identity", which is trusted like kube-apiserver's loopback client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from minik3s.api.types import JsonDict

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
MASTERS = "system:masters"


@dataclass(frozen=True, slots=True)
class UserInfo:
    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def to_wire(self) -> JsonDict:
        """authentication.k8s.io/v1 UserInfo (empty fields omitted, as upstream's omitempty)."""
        out: JsonDict = {"username": self.username}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out

    def in_group(self, group: str) -> bool:
        return group in self.groups


# K3s's admin identity: the written kubeconfig's user, in system:masters
ADMIN = UserInfo("system:admin", groups=(MASTERS, AUTHENTICATED))
ANONYMOUS = UserInfo("system:anonymous", groups=(UNAUTHENTICATED,))
# who an in-process write without an identity is (kube-apiserver's loopback client)
APISERVER = UserInfo("system:apiserver", groups=(MASTERS, AUTHENTICATED))

# identities of the embedded components (upstream's names for the same binaries)
_COMPONENTS = {
    "kube-scheduler": "system:kube-scheduler",
    "kube-controller-manager": "system:kube-controller-manager",
    "descheduler": "system:serviceaccount:kube-system:descheduler-sa",
}


def component_user(binary: str, *, node: str | None = None) -> UserInfo:
    """The identity an embedded component acts as: `system:kube-scheduler`,
    `system:kube-controller-manager`, `system:node:<name>` (group `system:nodes`) for a kubelet."""
    if binary == "kubelet" or node is not None:
        return UserInfo(f"system:node:{node or 'unknown'}", groups=("system:nodes", AUTHENTICATED))
    name = _COMPONENTS.get(binary, f"system:{binary}")
    return UserInfo(name, groups=(AUTHENTICATED,))
