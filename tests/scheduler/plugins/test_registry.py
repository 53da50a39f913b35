"""The in-tree registry: every upstream default plugin, constructible with default args."""

from scheduler.framework.interface import EnqueueExtensions
from scheduler.plugins.registry import in_tree_registry


def test_registry_names_match_plugins():
    reg = in_tree_registry()
    assert set(reg) == {
        "PrioritySort",
        "SchedulingGates",
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeZone",
        "VolumeBinding",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "InterPodAffinity",
        "PodTopologySpread",
        "DefaultPreemption",
        "DefaultBinder",
        "Coscheduling",
        "GangScheduling",
    }
    for name, cls in reg.items():
        assert cls.NAME == name
        plugin = cls(None, None)
        if isinstance(plugin, EnqueueExtensions):
            assert plugin.events_to_register()
