"""node.k8s.io/v1 wire types: RuntimeClass (layer L2).

A RuntimeClass names a container runtime configuration (`handler`) and may carry a fixed
per-pod resource overhead and scheduling constraints. The RuntimeClass admission plugin copies
them into pods that name the class (`spec.runtimeClassName`): `overhead.podFixed` becomes
`spec.overhead` (counted by the scheduler on top of the containers' requests),
`scheduling.nodeSelector` is merged into `spec.nodeSelector`, `scheduling.tolerations` appended
to `spec.tolerations` (upstream k8s.io/api/node/v1).
"""

from __future__ import annotations

from minik3s.api.core import ResourceList, Toleration
from minik3s.api.meta import K8sModel, TypedObject


class Overhead(K8sModel):
    podFixed: ResourceList | None = None


class Scheduling(K8sModel):
    nodeSelector: dict[str, str] | None = None
    tolerations: list[Toleration] | None = None


class RuntimeClass(TypedObject):
    handler: str = ""
    overhead: Overhead | None = None
    scheduling: Scheduling | None = None
