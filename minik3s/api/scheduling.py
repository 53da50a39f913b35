"""scheduling.k8s.io wire types (layer L2): v1 PriorityClass and the v1.35 alpha (v1alpha1)
Workload of KEP-4671 gang scheduling."""

from __future__ import annotations

from typing import Literal

from minik3s.api.meta import K8sModel, TypedObject

SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"
# name -> value, as upstream's SystemPriorityClasses()
SYSTEM_PRIORITY_CLASSES: dict[str, int] = {
    SYSTEM_NODE_CRITICAL: SYSTEM_CRITICAL_PRIORITY + 1000,
    SYSTEM_CLUSTER_CRITICAL: SYSTEM_CRITICAL_PRIORITY,
}


def system_priority_class(name: str) -> dict[str, object]:
    """The built-in PriorityClass object for a system class name (for bootstrapping)."""
    desc = {
        SYSTEM_NODE_CRITICAL: "Used for system critical pods that must not be moved from their current node.",
        SYSTEM_CLUSTER_CRITICAL: "Used for system critical pods that must run in the cluster, but can be "
        "moved to another node if necessary.",
    }[name]
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": SYSTEM_PRIORITY_CLASSES[name],
        "globalDefault": False,
        "description": desc,
        "preemptionPolicy": "PreemptLowerPriority",
    }


class PriorityClass(TypedObject):
    value: int
    globalDefault: bool | None = None
    description: str | None = None
    preemptionPolicy: Literal["PreemptLowerPriority", "Never"] | None = None


# ---- scheduling.k8s.io/v1alpha1 Workload (KEP-4671, the v1.35 alpha shape) ----------------------

class BasicSchedulingPolicy(K8sModel):
    pass


class GangSchedulingPolicy(K8sModel):
    minCount: int


class PodGroupPolicy(K8sModel):
    basic: BasicSchedulingPolicy | None = None
    gang: GangSchedulingPolicy | None = None


class WorkloadPodGroup(K8sModel):
    name: str
    policy: PodGroupPolicy


class TypedLocalObjectReference(K8sModel):
    apiGroup: str | None = None
    kind: str
    name: str


class WorkloadSpec(K8sModel):
    controllerRef: TypedLocalObjectReference | None = None
    podGroups: list[WorkloadPodGroup]


class Workload(TypedObject):
    spec: WorkloadSpec
