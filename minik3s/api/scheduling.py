"""scheduling.k8s.io/v1 wire types: PriorityClass (layer L2)."""

from __future__ import annotations

from typing import Literal

from minik3s.api.meta import TypedObject

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
