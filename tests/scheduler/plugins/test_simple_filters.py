"""NodeName, NodeUnschedulable, NodePorts, SchedulingGates, PrioritySort (upstream nodename,
nodeunschedulable, nodeports, schedulinggates, queuesort tests)."""

from dataclasses import dataclass

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.interface import Code
from scheduler.framework.types import PodInfo
from scheduler.plugins.node_name import NodeName
from scheduler.plugins.node_ports import NodePorts
from scheduler.plugins.node_unschedulable import NodeUnschedulable
from scheduler.plugins.priority_sort import PrioritySort
from scheduler.plugins.scheduling_gates import SchedulingGates

UNRES = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod("p").obj(), (Code.SUCCESS, []), id="no-node-name-fits-any"),
        pytest.param(make_pod("p").node("n1").obj(), (Code.SUCCESS, []), id="same-node-name"),
        pytest.param(
            make_pod("p").node("n2").obj(),
            (UNRES, ["node(s) didn't match the requested node name"]),
            id="other-node-name-rejected",
        ),
    ],
)
def test_node_name(fw, pod, want):
    statuses, *_ = fw.filter_nodes(NodeName, pod, fw.Snapshot([make_node("n1").obj()]))
    assert fw.codes(statuses)["n1"] == want


@pytest.mark.parametrize(
    ("pod", "unschedulable", "want"),
    [
        pytest.param(make_pod("p").obj(), False, (Code.SUCCESS, []), id="schedulable-node"),
        pytest.param(
            make_pod("p").obj(), True, (UNRES, ["node(s) were unschedulable"]), id="cordoned-node-rejects"
        ),
        pytest.param(
            make_pod("p").toleration("node.kubernetes.io/unschedulable", effect="NoSchedule").obj(),
            True,
            (Code.SUCCESS, []),
            id="pod-tolerating-unschedulable-taint-fits",
        ),
    ],
)
def test_node_unschedulable(fw, pod, unschedulable, want):
    snap = fw.Snapshot([make_node("n1").unschedulable(unschedulable).obj()])
    statuses, *_ = fw.filter_nodes(NodeUnschedulable, pod, snap)
    assert fw.codes(statuses)["n1"] == want


PORTS_MSG = "node(s) didn't have free ports for the requested pod ports"


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(make_pod("p").obj(), [], (Code.SUCCESS, []), id="nothing-running"),
        pytest.param(
            make_pod("p").host_port(8080, "UDP", "127.0.0.1").obj(),
            [make_pod("e").host_port(9090, "UDP", "127.0.0.1")],
            (Code.SUCCESS, []),
            id="other-port",
        ),
        pytest.param(
            make_pod("p").host_port(8080, "UDP", "127.0.0.1").obj(),
            [make_pod("e").host_port(8080, "UDP", "127.0.0.1")],
            (Code.UNSCHEDULABLE, [PORTS_MSG]),
            id="same-port",
        ),
        pytest.param(
            make_pod("p").host_port(8080, "UDP", "127.0.0.2").obj(),
            [make_pod("e").host_port(8080, "UDP", "127.0.0.1")],
            (Code.SUCCESS, []),
            id="different-host-ip",
        ),
        pytest.param(
            make_pod("p").host_port(8080, "UDP", "127.0.0.1").obj(),
            [make_pod("e").host_port(8080, "TCP", "127.0.0.1")],
            (Code.SUCCESS, []),
            id="different-protocol",
        ),
        pytest.param(
            make_pod("p").host_port(8001, "TCP", "0.0.0.0").obj(),
            [make_pod("e").host_port(8001, "TCP", "127.0.0.1")],
            (Code.UNSCHEDULABLE, [PORTS_MSG]),
            id="wildcard-conflicts-with-specific",
        ),
        pytest.param(
            make_pod("p").host_port(8001, "TCP", "127.0.0.1").obj(),
            [make_pod("e").host_port(8001, "TCP")],
            (Code.UNSCHEDULABLE, [PORTS_MSG]),
            id="specific-conflicts-with-wildcard",
        ),
    ],
)
def test_node_ports(fw, pod, existing, want):
    snap = fw.Snapshot([make_node("n1").obj()], [b.node("n1").obj() for b in existing])
    statuses, *_ = fw.filter_nodes(NodePorts, pod, snap)
    assert fw.codes(statuses)["n1"] == want


def test_node_ports_prefilter_skips_pod_without_ports(fw):
    _, _, st, state = fw.filter_nodes(NodePorts, make_pod("p").obj(), fw.Snapshot([make_node("n1").obj()]))
    assert "NodePorts" in state.skip_filter_plugins


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod("p").obj(), (Code.SUCCESS, []), id="no-gates"),
        pytest.param(
            make_pod("p").scheduling_gates("foo", "bar").obj(),
            (UNRES, ["waiting for scheduling gates: [foo bar]"]),
            id="gated-pod-waits",
        ),
    ],
)
def test_scheduling_gates(pod, want):
    st = SchedulingGates().pre_enqueue(pod)
    assert (st.code, st.reasons) == want


def test_scheduling_gates_hint_only_for_same_pod():
    pl = SchedulingGates()
    (ev,) = pl.events_to_register()
    pod = make_pod("p").obj()
    assert ev.hint_fn(pod, pod, make_pod("p").obj()) == 1
    assert ev.hint_fn(pod, None, make_pod("other").obj()) == 0


@dataclass
class QPI:
    pod_info: PodInfo
    timestamp: float


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param((100, 2.0), (50, 1.0), True, id="higher-priority-first"),
        pytest.param((50, 1.0), (100, 2.0), False, id="lower-priority-later"),
        pytest.param((100, 1.0), (100, 2.0), True, id="same-priority-earlier-first"),
    ],
)
def test_priority_sort(a, b, want):
    qa = QPI(PodInfo(make_pod("a").priority(a[0]).obj()), a[1])
    qb = QPI(PodInfo(make_pod("b").priority(b[0]).obj()), b[1])
    assert PrioritySort().less(qa, qb) is want
