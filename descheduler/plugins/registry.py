"""The in-tree plugin registry (a function, no global state): upstream names -> classes."""

from __future__ import annotations

from descheduler.framework.interface import Plugin
from descheduler.plugins.default_evictor import DefaultEvictor
from descheduler.plugins.high_node_utilization import HighNodeUtilization
from descheduler.plugins.low_node_utilization import LowNodeUtilization
from descheduler.plugins.pod_life_time import PodLifeTime
from descheduler.plugins.remove_duplicates import RemoveDuplicates
from descheduler.plugins.remove_failed_pods import RemoveFailedPods
from descheduler.plugins.remove_pods_having_too_many_restarts import RemovePodsHavingTooManyRestarts
from descheduler.plugins.remove_pods_violating_inter_pod_anti_affinity import (
    RemovePodsViolatingInterPodAntiAffinity,
)
from descheduler.plugins.remove_pods_violating_node_affinity import RemovePodsViolatingNodeAffinity
from descheduler.plugins.remove_pods_violating_node_taints import RemovePodsViolatingNodeTaints
from descheduler.plugins.remove_pods_violating_topology_spread_constraint import (
    RemovePodsViolatingTopologySpread,
    RemovePodsViolatingTopologySpreadConstraint,
)


def in_tree_registry() -> dict[str, type[Plugin]]:
    classes: list[type[Plugin]] = [
        DefaultEvictor, LowNodeUtilization, HighNodeUtilization, RemoveDuplicates,
        RemovePodsViolatingTopologySpreadConstraint, RemovePodsViolatingTopologySpread,
        RemovePodsViolatingInterPodAntiAffinity, RemovePodsViolatingNodeAffinity, RemovePodsViolatingNodeTaints,
        PodLifeTime, RemovePodsHavingTooManyRestarts, RemoveFailedPods,
    ]
    return {c.NAME: c for c in classes}
