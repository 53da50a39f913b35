"""The in-tree plugin registry (upstream plugins/registry.go): name -> plugin class. A function,
not a module-level dict, so nobody mutates a shared registry."""

from __future__ import annotations

from scheduler.framework.interface import Plugin
from scheduler.plugins import names
from scheduler.plugins.coscheduling import Coscheduling
from scheduler.plugins.default_binder import DefaultBinder
from scheduler.plugins.default_preemption import DefaultPreemption
from scheduler.plugins.gang_scheduling import GangScheduling
from scheduler.plugins.image_locality import ImageLocality
from scheduler.plugins.inter_pod_affinity import InterPodAffinity
from scheduler.plugins.node_affinity import NodeAffinity
from scheduler.plugins.node_name import NodeName
from scheduler.plugins.node_ports import NodePorts
from scheduler.plugins.node_resources.balanced_allocation import NodeResourcesBalancedAllocation
from scheduler.plugins.node_resources.fit import NodeResourcesFit
from scheduler.plugins.node_unschedulable import NodeUnschedulable
from scheduler.plugins.node_volume_limits import NodeVolumeLimits
from scheduler.plugins.pod_topology_spread import PodTopologySpread
from scheduler.plugins.priority_sort import PrioritySort
from scheduler.plugins.scheduling_gates import SchedulingGates
from scheduler.plugins.taint_toleration import TaintToleration
from scheduler.plugins.volume_binding import VolumeBinding
from scheduler.plugins.volume_restrictions import VolumeRestrictions
from scheduler.plugins.volume_zone import VolumeZone


def in_tree_registry() -> dict[str, type[Plugin]]:
    return {
        names.PRIORITY_SORT: PrioritySort,
        names.SCHEDULING_GATES: SchedulingGates,
        names.NODE_UNSCHEDULABLE: NodeUnschedulable,
        names.NODE_NAME: NodeName,
        names.TAINT_TOLERATION: TaintToleration,
        names.NODE_AFFINITY: NodeAffinity,
        names.NODE_PORTS: NodePorts,
        names.NODE_RESOURCES_FIT: NodeResourcesFit,
        names.VOLUME_RESTRICTIONS: VolumeRestrictions,
        names.NODE_VOLUME_LIMITS: NodeVolumeLimits,
        names.VOLUME_ZONE: VolumeZone,
        names.NODE_RESOURCES_BALANCED_ALLOCATION: NodeResourcesBalancedAllocation,
        names.IMAGE_LOCALITY: ImageLocality,
        names.INTER_POD_AFFINITY: InterPodAffinity,
        names.POD_TOPOLOGY_SPREAD: PodTopologySpread,
        names.VOLUME_BINDING: VolumeBinding,
        names.DEFAULT_PREEMPTION: DefaultPreemption,
        names.DEFAULT_BINDER: DefaultBinder,
        names.COSCHEDULING: Coscheduling,
        names.GANG_SCHEDULING: GangScheduling,
    }
