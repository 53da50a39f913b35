"""Queueing hints: which cluster events may make a rejected pod schedulable (upstream
*_test.go Test_isSchedulableAfter* tables)."""

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.interface import ActionType, EventResource, QueueingHint
from scheduler.plugins.inter_pod_affinity import InterPodAffinity
from scheduler.plugins.node_affinity import NodeAffinity
from scheduler.plugins.node_ports import NodePorts
from scheduler.plugins.node_resources.fit import NodeResourcesFit
from scheduler.plugins.node_unschedulable import NodeUnschedulable
from scheduler.plugins.pod_topology_spread import PodTopologySpread
from scheduler.plugins.taint_toleration import TaintToleration

Q, S = QueueingHint.QUEUE, QueueingHint.SKIP


def _hint(plugin, resource, action):
    for ev in plugin.events_to_register():
        if ev.event.resource == resource and ev.event.action & action:
            return ev.hint_fn
    raise AssertionError(f"{plugin.NAME} does not register {resource} {action}")


@pytest.mark.parametrize(
    ("plugin", "resource", "action", "pod", "old", "new", "want"),
    [
        pytest.param(
            TaintToleration(),
            EventResource.NODE,
            ActionType.ADD,
            make_pod("p").obj(),
            None,
            make_node("n").obj(),
            Q,
            id="taint-node-added-without-taints",
        ),
        pytest.param(
            TaintToleration(),
            EventResource.NODE,
            ActionType.UPDATE_NODE_TAINT,
            make_pod("p").obj(),
            make_node("n").taints(("k", "v", "NoSchedule")).obj(),
            make_node("n").obj(),
            Q,
            id="taint-removed",
        ),
        pytest.param(
            TaintToleration(),
            EventResource.NODE,
            ActionType.UPDATE_NODE_TAINT,
            make_pod("p").obj(),
            make_node("n").obj(),
            make_node("n").taints(("k", "v", "NoSchedule")).obj(),
            S,
            id="taint-added-still-untolerated",
        ),
        pytest.param(
            NodeAffinity(),
            EventResource.NODE,
            ActionType.UPDATE_NODE_LABEL,
            make_pod("p").node_selector(zone="a").obj(),
            make_node("n").obj(),
            make_node("n").labels(zone="a").obj(),
            Q,
            id="node-gains-selected-label",
        ),
        pytest.param(
            NodeAffinity(),
            EventResource.NODE,
            ActionType.ADD,
            make_pod("p").node_selector(zone="a").obj(),
            None,
            make_node("n").labels(zone="b").obj(),
            S,
            id="new-node-not-matching-selector",
        ),
        pytest.param(
            NodeUnschedulable(),
            EventResource.NODE,
            ActionType.UPDATE_NODE_TAINT,
            make_pod("p").obj(),
            make_node("n").unschedulable().obj(),
            make_node("n").obj(),
            Q,
            id="node-uncordoned",
        ),
        pytest.param(
            NodeResourcesFit(),
            EventResource.NODE,
            ActionType.ADD,
            make_pod("p").req(cpu="2").obj(),
            None,
            make_node("n").capacity(cpu="1", memory="1Gi").obj(),
            S,
            id="new-node-too-small",
        ),
        pytest.param(
            NodeResourcesFit(),
            EventResource.NODE,
            ActionType.ADD,
            make_pod("p").req(cpu="2").obj(),
            None,
            make_node("n").capacity(cpu="4", memory="1Gi").obj(),
            Q,
            id="new-node-big-enough",
        ),
        pytest.param(
            NodeResourcesFit(),
            EventResource.POD,
            ActionType.DELETE,
            make_pod("p").req(cpu="2").obj(),
            make_pod("e").node("n").obj(),
            None,
            Q,
            id="assigned-pod-deleted-frees-resources",
        ),
        pytest.param(
            NodePorts(),
            EventResource.ASSIGNED_POD,
            ActionType.DELETE,
            make_pod("p").host_port(80).obj(),
            make_pod("e").host_port(80).node("n").obj(),
            None,
            Q,
            id="pod-using-port-deleted",
        ),
        pytest.param(
            NodePorts(),
            EventResource.ASSIGNED_POD,
            ActionType.DELETE,
            make_pod("p").host_port(80).obj(),
            make_pod("e").host_port(81).node("n").obj(),
            None,
            S,
            id="pod-using-other-port-deleted",
        ),
        pytest.param(
            InterPodAffinity(),
            EventResource.ASSIGNED_POD,
            ActionType.ADD,
            make_pod("p").pod_affinity("zone", {"app": "db"}).obj(),
            None,
            make_pod("e").labels(app="db").node("n").obj(),
            Q,
            id="affinity-target-pod-added",
        ),
        pytest.param(
            InterPodAffinity(),
            EventResource.ASSIGNED_POD,
            ActionType.ADD,
            make_pod("p").pod_affinity("zone", {"app": "db"}).obj(),
            None,
            make_pod("e").labels(app="web").node("n").obj(),
            S,
            id="unrelated-pod-added",
        ),
        pytest.param(
            InterPodAffinity(),
            EventResource.ASSIGNED_POD,
            ActionType.DELETE,
            make_pod("p").pod_anti_affinity("zone", {"app": "db"}).obj(),
            make_pod("e").labels(app="db").node("n").obj(),
            None,
            Q,
            id="anti-affinity-target-deleted",
        ),
        pytest.param(
            InterPodAffinity(),
            EventResource.ASSIGNED_POD,
            ActionType.UPDATE_POD_LABEL,
            make_pod("p").pod_anti_affinity("zone", {"app": "db"}).obj(),
            make_pod("e").labels(app="db").node("n").obj(),
            make_pod("e").labels(app="x").node("n").obj(),
            Q,
            id="anti-affinity-target-relabelled",
        ),
        pytest.param(
            PodTopologySpread(),
            EventResource.POD,
            ActionType.DELETE,
            make_pod("p").labels(app="a").spread_constraint(1, "zone", selector={"app": "a"}).obj(),
            make_pod("e").labels(app="a").node("n").obj(),
            None,
            Q,
            id="spread-matching-pod-deleted",
        ),
        pytest.param(
            PodTopologySpread(),
            EventResource.POD,
            ActionType.DELETE,
            make_pod("p").labels(app="a").spread_constraint(1, "zone", selector={"app": "a"}).obj(),
            make_pod("e").labels(app="b").node("n").obj(),
            None,
            S,
            id="spread-unrelated-pod-deleted",
        ),
    ],
)
def test_hints(plugin, resource, action, pod, old, new, want):
    assert _hint(plugin, resource, action)(pod, old, new) == want
