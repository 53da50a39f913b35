"""TaintToleration (upstream tainttoleration/taint_toleration_test.go)."""

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.interface import Code
from scheduler.plugins.taint_toleration import TaintToleration


@pytest.mark.parametrize(
    ("pod", "taints", "want"),
    [
        pytest.param(
            make_pod("p").obj(),
            [("dedicated", "user1", "NoSchedule")],
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["node(s) had untolerated taint {dedicated: user1}"]),
            id="pod-without-toleration-rejected-by-noschedule-taint",
        ),
        pytest.param(
            make_pod("p").toleration("dedicated", "user1", "NoSchedule").obj(),
            [("dedicated", "user1", "NoSchedule")],
            (Code.SUCCESS, []),
            id="equal-toleration-admits",
        ),
        pytest.param(
            make_pod("p").toleration("dedicated", "user2", "NoSchedule").obj(),
            [("dedicated", "user1", "NoSchedule")],
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["node(s) had untolerated taint {dedicated: user1}"]),
            id="toleration-with-other-value-rejected",
        ),
        pytest.param(
            make_pod("p").toleration("foo", operator="Exists", effect="NoSchedule").obj(),
            [("foo", "bar", "NoSchedule")],
            (Code.SUCCESS, []),
            id="exists-toleration-admits",
        ),
        pytest.param(
            make_pod("p").toleration("foo", "bar", "NoSchedule").obj(),
            [("foo", "bar", "NoSchedule"), ("foo", "blah", "NoSchedule")],
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["node(s) had untolerated taint {foo: blah}"]),
            id="second-taint-untolerated",
        ),
        pytest.param(
            make_pod("p").toleration("foo", "bar", "PreferNoSchedule").obj(),
            [("foo", "blah", "PreferNoSchedule")],
            (Code.SUCCESS, []),
            id="prefer-no-schedule-ignored-by-filter",
        ),
        pytest.param(
            make_pod("p").obj(),
            [("node.kubernetes.io/not-ready", "", "NoExecute")],
            (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                ["node(s) had untolerated taint {node.kubernetes.io/not-ready: }"],
            ),
            id="noexecute-taint-rejects",
        ),
        pytest.param(
            make_pod("p").toleration(operator="Exists").obj(),
            [("a", "b", "NoExecute"), ("c", "", "NoSchedule")],
            (Code.SUCCESS, []),
            id="tolerate-everything",
        ),
    ],
)
def test_filter(fw, pod, taints, want):
    snap = fw.Snapshot([make_node("n1").taints(*taints).obj()])
    statuses, *_ = fw.filter_nodes(TaintToleration, pod, snap)
    assert fw.codes(statuses)["n1"] == want


@pytest.mark.parametrize(
    ("pod", "nodes", "want"),
    [
        pytest.param(
            make_pod("p").toleration("foo", "bar", "PreferNoSchedule").obj(),
            {"n1": [("foo", "bar", "PreferNoSchedule")], "n2": [("foo", "blah", "PreferNoSchedule")]},
            {"n1": 100, "n2": 0},
            id="tolerated-taint-preferred",
        ),
        pytest.param(
            make_pod("p")
            .toleration("cpu-type", "arm64", "PreferNoSchedule")
            .toleration("disk-type", "ssd", "PreferNoSchedule")
            .obj(),
            {
                "n1": [],
                "n2": [("cpu-type", "arm64", "PreferNoSchedule")],
                "n3": [("cpu-type", "arm64", "PreferNoSchedule"), ("disk-type", "ssd", "PreferNoSchedule")],
            },
            {"n1": 100, "n2": 100, "n3": 100},
            id="all-tolerated-equal",
        ),
        pytest.param(
            make_pod("p").obj(),
            {
                "n1": [],
                "n2": [("cpu-type", "arm64", "PreferNoSchedule")],
                "n3": [("cpu-type", "arm64", "PreferNoSchedule"), ("disk-type", "ssd", "PreferNoSchedule")],
            },
            {"n1": 100, "n2": 50, "n3": 0},
            id="more-untolerated-lower-score",
        ),
        pytest.param(
            make_pod("p").toleration("cpu-type", "arm64", "NoSchedule").obj(),
            {
                "n1": [],
                "n2": [("cpu-type", "arm64", "NoSchedule")],
                "n3": [("cpu-type", "arm64", "PreferNoSchedule")],
            },
            {"n1": 100, "n2": 100, "n3": 0},
            id="only-prefer-no-schedule-counted",
        ),
    ],
)
def test_score(fw, pod, nodes, want):
    snap = fw.Snapshot([make_node(n).taints(*t).obj() for n, t in nodes.items()])
    assert fw.score_nodes(TaintToleration, pod, snap) == want
