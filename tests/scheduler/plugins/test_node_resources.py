"""NodeResourcesFit, its scoring strategies, and NodeResourcesBalancedAllocation (upstream
noderesources fit_test.go, least/most_allocated_test.go, requested_to_capacity_ratio_test.go,
balanced_allocation_test.go)."""

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.interface import Code
from scheduler.framework.types import PodInfo
from scheduler.plugins.node_resources.balanced_allocation import NodeResourcesBalancedAllocation
from scheduler.plugins.node_resources.fit import NodeResourcesFit

EXT = "example.com/aaa"
U = Code.UNSCHEDULABLE


def _node(pods=32, ext=5):
    return make_node("n1").capacity({"cpu": "10m", "memory": "20", "pods": pods, EXT: ext}).obj()


@pytest.mark.parametrize(
    ("pod", "existing", "node", "want"),
    [
        pytest.param(
            make_pod("p").obj(),
            [make_pod("e").req(cpu="10m", memory="20")],
            _node(),
            (Code.SUCCESS, []),
            id="no-resources-requested-always-fits",
        ),
        pytest.param(
            make_pod("p").req(cpu="1m", memory="1").obj(),
            [make_pod("e").req(cpu="10m", memory="20")],
            _node(),
            (U, ["Insufficient cpu", "Insufficient memory"]),
            id="every-insufficient-resource-reported",
        ),
        pytest.param(
            make_pod("p").req(cpu="1m", memory="1").init_req(cpu="3m", memory="1").obj(),
            [make_pod("e").req(cpu="8m", memory="19")],
            _node(),
            (U, ["Insufficient cpu"]),
            id="init-container-cpu-too-big",
        ),
        pytest.param(
            make_pod("p").req(cpu="1m", memory="1").obj(),
            [make_pod("e").req(cpu="5m", memory="5")],
            _node(),
            (Code.SUCCESS, []),
            id="both-resources-fit",
        ),
        pytest.param(
            make_pod("p").req(cpu="2m", memory="1").obj(),
            [make_pod("e").req(cpu="9m", memory="5")],
            _node(),
            (U, ["Insufficient cpu"]),
            id="memory-fits-cpu-not",
        ),
        pytest.param(
            make_pod("p").req(cpu="1m", memory="2").obj(),
            [make_pod("e").req(cpu="5m", memory="19")],
            _node(),
            (U, ["Insufficient memory"]),
            id="cpu-fits-memory-not",
        ),
        pytest.param(
            make_pod("p").req(cpu="5m", memory="1").obj(),
            [make_pod("e").req(cpu="5m", memory="19")],
            _node(),
            (Code.SUCCESS, []),
            id="equal-edge-case",
        ),
        pytest.param(
            make_pod("p").req({EXT: 6}).obj(),
            [],
            _node(),
            (U, [f"Insufficient {EXT}"]),
            id="extended-resource-too-many",
        ),
        pytest.param(
            make_pod("p").req({EXT: 2}).obj(),
            [make_pod("e").req({EXT: 3})],
            _node(),
            (Code.SUCCESS, []),
            id="extended-resource-fits",
        ),
        pytest.param(
            make_pod("p").req({"example.com/bbb": 1}).obj(),
            [],
            _node(),
            (U, ["Insufficient example.com/bbb"]),
            id="extended-resource-missing-on-node",
        ),
        pytest.param(
            make_pod("p").obj(), [make_pod("e")], _node(pods=1), (U, ["Too many pods"]), id="too-many-pods"
        ),
        pytest.param(
            make_pod("p").req(cpu="11m").obj(),
            [make_pod("e")],
            _node(pods=1),
            (U, ["Too many pods", "Insufficient cpu"]),
            id="too-many-pods-and-cpu",
        ),
        pytest.param(
            make_pod("p").req(cpu="1m").overhead(cpu="5m").obj(),
            [make_pod("e").req(cpu="5m")],
            _node(),
            (U, ["Insufficient cpu"]),
            id="overhead-counts",
        ),
    ],
)
def test_fit_filter(fw, pod, existing, node, want):
    snap = fw.Snapshot([node], [b.node("n1").obj() for b in existing])
    statuses, *_ = fw.filter_nodes(NodeResourcesFit, pod, snap)
    assert fw.codes(statuses)["n1"] == want


@pytest.mark.parametrize(
    ("nominated_priority", "want"),
    [
        pytest.param(100, (Code.UNSCHEDULABLE, ["Insufficient cpu"]), id="higher-priority-nomination-reserves-room"),
        pytest.param(1, (Code.SUCCESS, []), id="lower-priority-nomination-is-ignored"),
    ],
)
def test_fit_filter_counts_nominated_pods(fw, nominated_priority, want):
    """The runtime filters as if pods nominated to the node with priority >= the pod's ran there."""
    nominated = PodInfo(make_pod("nom").req(cpu="3").priority(nominated_priority).nominated("n1").obj())
    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").obj()
    snap = fw.Snapshot([node], nominated={"n1": [nominated]})
    statuses, *_ = fw.filter_nodes(NodeResourcesFit, make_pod("p").req(cpu="2").priority(10).obj(), snap)
    assert fw.codes(statuses)["n1"] == want


def test_fit_ignored_resources(fw):
    pl = (NodeResourcesFit, {"ignoredResources": [EXT]})
    statuses, *_ = fw.filter_nodes(pl, make_pod("p").req({EXT: 100}).obj(), fw.Snapshot([_node()]))
    assert fw.codes(statuses)["n1"] == (Code.SUCCESS, [])
    pl = (NodeResourcesFit, {"ignoredResourceGroups": ["example.com"]})
    statuses, *_ = fw.filter_nodes(pl, make_pod("p").req({EXT: 100}).obj(), fw.Snapshot([_node()]))
    assert fw.codes(statuses)["n1"] == (Code.SUCCESS, [])


POD = make_pod("p").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000").obj()
NODES = [
    make_node("n1").capacity(cpu="4000m", memory="10000").obj(),
    make_node("n2").capacity(cpu="6000m", memory="10000").obj(),
]


@pytest.mark.parametrize(
    ("args", "want"),
    [
        # n1: cpu (4000-3000)*100//4000 = 25, mem 50 -> 37; n2: cpu 50, mem 50 -> 50
        pytest.param(None, {"n1": 37, "n2": 50}, id="least-allocated-default"),
        # n1: cpu 75, mem 50 -> 62; n2: 50
        pytest.param(
            {"scoringStrategy": {"type": "MostAllocated"}}, {"n1": 62, "n2": 50}, id="most-allocated"
        ),
        # shape 0->10, 100->0: n1 cpu util 75 -> 25, mem 50 -> 50, round(37.5) = 38; n2 50/50 -> 50
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                    },
                }
            },
            {"n1": 38, "n2": 50},
            id="requested-to-capacity-ratio",
        ),
        # weights cpu 3 mem 1: n1 (25*3+50)//4 = 31
        pytest.param(
            {
                "scoringStrategy": {
                    "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}]
                }
            },
            {"n1": 31, "n2": 50},
            id="weighted-resources",
        ),
    ],
)
def test_fit_score(fw, args, want):
    assert fw.score_nodes((NodeResourcesFit, args), POD, fw.Snapshot(NODES)) == want


def test_least_allocated_uses_non_zero_requests(fw):
    # a pod without requests counts as 100m / 200Mi; existing best-effort pod too
    nodes = [make_node("n1").capacity(cpu="1000m", memory="1000Mi").obj()]
    snap = fw.Snapshot(nodes, [make_pod("e").node("n1").obj()])
    # cpu (1000-200)*100//1000 = 80, mem (1000-400)*100//1000 = 60 -> 70
    assert fw.score_nodes(NodeResourcesFit, make_pod("p").obj(), snap) == {"n1": 70}


@pytest.mark.parametrize(
    "args",
    [
        pytest.param({"scoringStrategy": {"type": "RequestedToCapacityRatio"}}, id="rtcr-without-shape"),
        pytest.param({"scoringStrategy": {"resources": [{"name": "cpu", "weight": 0}]}}, id="zero-weight"),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]
                    },
                }
            },
            id="shape-not-increasing",
        ),
        pytest.param({"ignoredResourceGroups": ["example.com/aaa"]}, id="group-with-slash"),
    ],
)
def test_fit_args_validation(args):
    with pytest.raises(ValueError):
        NodeResourcesFit.Args.model_validate(args)


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        # n1: 3000/4000 = .75, 5000/10000 = .5 -> std .125 -> 87; n2: .5/.5 -> 100
        pytest.param(POD, [], {"n1": 87, "n2": 100}, id="uneven-fractions-score-lower"),
        pytest.param(make_pod("p").obj(), [], {"n1": 0, "n2": 0}, id="best-effort-pod-skipped"),
        # n2 with existing 3000m/0: cpu (3000+3000)/6000 = 1, mem .5 -> 75
        pytest.param(
            POD,
            [make_pod("e").req(cpu="3000m").node("n2")],
            {"n1": 87, "n2": 75},
            id="existing-requests-count",
        ),
        # fractions above 1 are capped: cpu 8000/4000 -> 1, mem .5 -> 75
        pytest.param(
            make_pod("p").req(cpu="8000m", memory="5000").obj(),
            [],
            {"n1": 75, "n2": 75},
            id="fraction-capped-at-one",
        ),
    ],
)
def test_balanced_allocation(fw, pod, existing, want):
    snap = fw.Snapshot(NODES, [b.obj() for b in existing])
    assert fw.score_nodes(NodeResourcesBalancedAllocation, pod, snap) == want
