"""PodTopologySpread filtering and scoring (upstream podtopologyspread filtering_test.go, scoring_test.go)."""

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.interface import Code
from scheduler.plugins.pod_topology_spread import PodTopologySpread

OK = (Code.SUCCESS, [])
SKEW = (Code.UNSCHEDULABLE, ["node(s) didn't match pod topology spread constraints"])
NOLABEL = (
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    ["node(s) didn't match pod topology spread constraints (missing required label)"],
)
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}


def _four_nodes():
    return [
        make_node("node-a").labels(zone="zone1", node="node-a").obj(),
        make_node("node-b").labels(zone="zone1", node="node-b").obj(),
        make_node("node-x").labels(zone="zone2", node="node-x").obj(),
        make_node("node-y").labels(zone="zone2", node="node-y").obj(),
    ]


def _pods(spec):
    """{"node-a": 2, ...} -> that many pods labelled foo on each node."""
    out = []
    for node, n in spec.items():
        for i in range(n):
            out.append(make_pod(f"p-{node}-{i}").labels(foo="").node(node).obj())
    return out


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "want"),
    [
        pytest.param(
            make_pod("p").labels(foo="").spread_constraint(1, "zone", selector=FOO).obj(),
            _four_nodes(),
            [],
            {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
            id="no-existing-pods",
        ),
        pytest.param(
            make_pod("p").labels(foo="").spread_constraint(1, "zone", selector=FOO).obj(),
            _four_nodes(),
            [
                make_pod("o1").namespace("ns2").labels(foo="").node("node-a").obj(),
                make_pod("o2").namespace("ns2").labels(foo="").node("node-b").obj(),
            ],
            {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
            id="other-namespace-pods-ignored",
        ),
        pytest.param(
            make_pod("p").labels(foo="").spread_constraint(1, "zone", selector=FOO).obj(),
            [
                make_node("node-a").labels(zone="zone1", node="node-a").obj(),
                make_node("node-b").labels(node="node-b").obj(),
                make_node("node-x").labels(zone="zone2", node="node-x").obj(),
                make_node("node-y").labels(zone="zone2", node="node-y").obj(),
            ],
            _pods({"node-a": 1, "node-b": 1, "node-y": 2}),
            {"node-a": OK, "node-b": NOLABEL, "node-x": SKEW, "node-y": SKEW},
            id="node-missing-zone-label-rejected-and-not-counted",
        ),
        pytest.param(
            make_pod("p").labels(foo="").spread_constraint(1, "node", selector=FOO).obj(),
            _four_nodes(),
            _pods({"node-a": 2, "node-b": 1, "node-y": 3}),
            {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": SKEW},
            id="spread-2-1-0-3-only-x-fits",
        ),
        pytest.param(
            make_pod("p").labels(foo="").spread_constraint(2, "node", selector=FOO).obj(),
            _four_nodes(),
            _pods({"node-a": 2, "node-b": 1, "node-y": 3}),
            {"node-a": SKEW, "node-b": OK, "node-x": OK, "node-y": SKEW},
            id="max-skew-2-b-and-x-fit",
        ),
        pytest.param(
            make_pod("p").spread_constraint(1, "node", selector={"matchLabels": {"bar": ""}}).obj(),
            _four_nodes(),
            _pods({"node-a": 2}),
            {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
            id="pod-not-matching-itself",
        ),
        pytest.param(
            make_pod("p").labels(foo="").spread_constraint(1, "zone", selector=FOO, min_domains=3).obj(),
            _four_nodes(),
            _pods({"node-a": 1, "node-x": 1}),
            {"node-a": SKEW, "node-b": SKEW, "node-x": SKEW, "node-y": SKEW},
            id="fewer-domains-than-min-domains-global-min-zero",
        ),
        pytest.param(
            make_pod("p")
            .labels(foo="")
            .spread_constraint(1, "zone", selector=FOO)
            .spread_constraint(1, "node", selector=FOO)
            .obj(),
            _four_nodes(),
            _pods({"node-a": 1, "node-x": 1, "node-y": 1}),
            {"node-a": SKEW, "node-b": OK, "node-x": SKEW, "node-y": SKEW},
            id="two-constraints-anded",
        ),
        pytest.param(
            make_pod("p")
            .labels(foo="")
            .node_affinity_in("zone", ["zone1"])
            .spread_constraint(1, "node", selector=FOO)
            .obj(),
            _four_nodes(),
            _pods({"node-a": 1, "node-b": 1}),
            {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
            id="node-affinity-policy-honor-ignores-other-zone-domains",
        ),
        pytest.param(
            make_pod("p")
            .labels(foo="")
            .node_affinity_in("zone", ["zone1"])
            .spread_constraint(1, "node", selector=FOO, node_affinity_policy="Ignore")
            .obj(),
            _four_nodes(),
            _pods({"node-a": 1, "node-b": 1}),
            {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": OK},
            id="node-affinity-policy-ignore-counts-all-nodes",
        ),
        pytest.param(
            make_pod("p")
            .labels(foo="", tier="a")
            .spread_constraint(1, "node", selector=FOO, match_label_keys=["tier"])
            .obj(),
            _four_nodes(),
            [
                make_pod("o").labels(foo="", tier="b").node("node-a").obj(),
                make_pod("o2").labels(foo="", tier="b").node("node-a").obj(),
            ],
            {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
            id="match-label-keys-narrow-selector",
        ),
        pytest.param(
            make_pod("p").labels(foo="").spread_constraint(1, "node", selector=FOO).obj(),
            _four_nodes(),
            [make_pod("t").labels(foo="").node("node-a").terminating().obj()],
            {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
            id="terminating-pods-not-counted",
        ),
    ],
)
def test_filter(fw, pod, nodes, existing, want):
    snap = fw.Snapshot(nodes, existing)
    statuses, *_ = fw.filter_nodes(PodTopologySpread, pod, snap)
    assert fw.codes(statuses) == want


def test_node_taints_policy_honor_excludes_tainted_domain(fw):
    nodes = _four_nodes()
    nodes[2]["spec"]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    nodes[3]["spec"]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    existing = _pods({"node-a": 1, "node-b": 1})
    pod_ignore = make_pod("p").labels(foo="").spread_constraint(1, "zone", selector=FOO).obj()
    pod_honor = (
        make_pod("p")
        .labels(foo="")
        .spread_constraint(1, "zone", selector=FOO, node_taints_policy="Honor")
        .obj()
    )
    snap = fw.Snapshot(nodes, existing)
    pl = PodTopologySpread
    statuses, *_ = fw.filter_nodes(pl, pod_ignore, snap)
    assert fw.codes(statuses)["node-a"] == SKEW  # zone2 (0 pods) counts as the global minimum
    statuses, *_ = fw.filter_nodes(pl, pod_honor, snap)
    assert fw.codes(statuses)["node-a"] == OK  # zone2 is not eligible; zone1 alone is the minimum


def test_pre_filter_skips_pod_without_constraints(fw):
    snap = fw.Snapshot(_four_nodes())
    _, _, _, state = fw.filter_nodes(PodTopologySpread, make_pod("p").obj(), snap)
    assert "PodTopologySpread" in state.skip_filter_plugins


def _score_nodes():
    return [
        make_node(n).labels({"kubernetes.io/hostname": n, "zone": z}).obj()
        for n, z in (("node-a", "zone1"), ("node-b", "zone1"), ("node-c", "zone2"), ("node-d", "zone2"))
    ]


def _score_pods(spec):
    return [make_pod(f"p-{n}-{i}").labels(foo="").node(n).obj() for n, c in spec.items() for i in range(c)]


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(
            make_pod("p")
            .labels(foo="")
            .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO)
            .obj(),
            {},
            {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
            id="no-existing-pods",
        ),
        pytest.param(
            make_pod("p")
            .labels(foo="")
            .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO)
            .obj(),
            {"node-a": 1, "node-b": 1, "node-c": 1, "node-d": 1},
            {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
            id="same-count-everywhere",
        ),
        # weight ln(6); raw a=round(2*1.79)=4, b=2, c=0, d=5 -> 100*(5+0-raw)//5
        pytest.param(
            make_pod("p")
            .labels(foo="")
            .spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", FOO)
            .obj(),
            {"node-a": 2, "node-b": 1, "node-d": 3},
            {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
            id="hostname-counts-2-1-0-3",
        ),
        # 2 zones: weight ln(4); zone1 raw round(2*1.386)=3, zone2 0
        pytest.param(
            make_pod("p").labels(foo="").spread_constraint(1, "zone", "ScheduleAnyway", FOO).obj(),
            {"node-a": 1, "node-b": 1},
            {"node-a": 0, "node-b": 0, "node-c": 100, "node-d": 100},
            id="zone-counts-2-0",
        ),
        pytest.param(
            make_pod("p").labels(foo="").spread_constraint(1, "zone", "DoNotSchedule", FOO).obj(),
            {"node-a": 1},
            # zone1 (node-a, node-b) would exceed maxSkew: Filter rejects it, so only the
            # feasible zone2 nodes reach PreScore, which skips (no soft constraint)
            {"node-c": 0, "node-d": 0},
            id="only-hard-constraints-skip-scoring",
        ),
    ],
)
def test_score(fw, pod, existing, want):
    snap = fw.Snapshot(_score_nodes(), _score_pods(existing))
    assert fw.score_nodes(PodTopologySpread, pod, snap) == want


def test_score_ignores_nodes_missing_topology_key(fw):
    nodes = _score_nodes() + [make_node("node-e").labels({"kubernetes.io/hostname": "node-e"}).obj()]
    snap = fw.Snapshot(nodes, _score_pods({"node-a": 1, "node-b": 1}))
    pod = make_pod("p").labels(foo="").spread_constraint(1, "zone", "ScheduleAnyway", FOO).obj()
    got = fw.score_nodes(PodTopologySpread, pod, snap)
    assert got == {"node-a": 0, "node-b": 0, "node-c": 100, "node-d": 100, "node-e": 0}


def test_system_default_constraints_use_owner_replicaset_selector(fw):
    nodes = [
        make_node(n).labels({"kubernetes.io/hostname": n, "topology.kubernetes.io/zone": "z1"}).obj()
        for n in ("n1", "n2")
    ]
    existing = [make_pod(f"e{i}").labels(app="web").node("n1").obj() for i in range(2)]
    rs = {
        "metadata": {"name": "rs1", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
    }
    snap = fw.Snapshot(nodes, existing, informers={"replicasets": [rs]})
    pl = PodTopologySpread
    pod = make_pod("p").labels(app="web").owner("ReplicaSet", "rs1").obj()
    # hostname weight ln(4), zone weight ln(3): n1 round(2*1.386+2+2*1.099+4)=11, n2 round(2+2.197+4)=8
    assert fw.score_nodes(pl, pod, snap) == {"n1": 100 * (11 + 8 - 11) // 11, "n2": 100}
    assert fw.score_nodes(pl, make_pod("q").labels(app="web").obj(), snap) == {"n1": 0, "n2": 0}


def test_service_selector_feeds_default_constraints(fw):
    nodes = [make_node(n).labels({"kubernetes.io/hostname": n}).obj() for n in ("n1", "n2")]
    svc = {"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": {"app": "web"}}}
    snap = fw.Snapshot(nodes, [make_pod("e").labels(app="web").node("n1").obj()], informers={"services": [svc]})
    pl = PodTopologySpread
    got = fw.score_nodes(pl, make_pod("p").labels(app="web").obj(), snap)
    assert got["n2"] == 100 and got["n1"] < 100


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(
            {
                "defaultingType": "System",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
                ],
            },
            id="system-with-constraints",
        ),
        pytest.param(
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
                ],
            },
            id="zero-max-skew",
        ),
        pytest.param(
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                        "labelSelector": {"matchLabels": {"a": "b"}},
                    }
                ],
            },
            id="selector-forbidden",
        ),
    ],
)
def test_args_validation(args):
    with pytest.raises(ValueError):
        PodTopologySpread.Args.model_validate(args)
