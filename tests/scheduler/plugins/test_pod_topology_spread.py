"""PodTopologySpread filtering and scoring (upstream podtopologyspread filtering_test.go, scoring_test.go)."""

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.interface import Code
from scheduler.framework.types import PodInfo
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


# --- domain counts remembered across cycles (PreScore and PreFilter) ---------------------------

HOST = "kubernetes.io/hostname"
TZONE = "topology.kubernetes.io/zone"


def _spread_node(name, zone=None, **extra):
    labels = {HOST: name, **extra}
    if zone is not None:
        labels[TZONE] = zone
    return make_node(name).labels(labels).obj()


def _web(name, node, **labels):
    return make_pod(name).labels(app="web", **labels).owner("ReplicaSet", "rs1").node(node).obj()


def _probes():
    soft_zone = {"matchLabels": {"app": "web"}}
    return {
        # system defaults (hostname/3 + zone/5) with the owner ReplicaSet's selector
        "system-default": make_pod("probe-d").labels(app="web").owner("ReplicaSet", "rs1").obj(),
        # own soft constraints: every key required, nodes without the zone label ignored
        "own-soft": make_pod("probe-s").labels(app="web")
        .spread_constraint(1, TZONE, "ScheduleAnyway", soft_zone)
        .spread_constraint(2, HOST, "ScheduleAnyway", soft_zone)
        .obj(),
        # a hard zone constraint next to the soft one: PreFilter's counts are remembered too
        "hard-and-soft": make_pod("probe-h").labels(app="web", tier="a")
        .spread_constraint(3, TZONE, "DoNotSchedule", soft_zone)
        .spread_constraint(1, TZONE, "ScheduleAnyway", {"matchLabels": {"tier": "a"}})
        .obj(),
    }


def test_remembered_domain_counts_score_like_a_fresh_count_after_every_change(fw):
    """A sequence of cycles with pods added and removed, a pod relabelled, nodes relabelled,
    added and removed between them: the scores from counts kept across cycles equal those
    from a plugin whose memory was cleared, every time."""
    nodes = [_spread_node(f"n{i}", f"z{i % 3}") for i in range(6)] + [_spread_node("bare")]
    rs = {"metadata": {"name": "rs1", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"app": "web"}}}}
    initial = [_web("w0", "n0", tier="a"), _web("w1", "n0"), _web("w2", "n3"), _web("w3", "bare")]
    run = fw.Run(PodTopologySpread, fw.Snapshot(nodes, initial, informers={"replicasets": [rs]}))
    cache, snap = run.scheduler.cache, run.scheduler.snapshot
    pl = run.plugin("PodTopologySpread")
    other_ns = make_pod("x").namespace("other").labels(app="web").node("n1").obj()
    moved = _spread_node("n1", "z9")
    steps = [
        ("nothing-changed", lambda: None),
        ("pods-added", lambda: [cache.add_pod(_web("w4", "n1", tier="a")), cache.add_pod(_web("w5", "n1"))]),
        ("pod-in-another-namespace", lambda: cache.add_pod(other_ns)),
        ("pod-removed", lambda: cache.remove_pod(initial[0])),
        ("pod-terminating", lambda: cache.update_pod(
            initial[2], {**initial[2], "metadata": {**initial[2]["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}})),
        ("pod-relabelled-out", lambda: cache.update_pod(initial[1], {**initial[1], "metadata": {
            **initial[1]["metadata"], "labels": {"app": "db"}}})),
        ("node-moved-zone", lambda: cache.update_node(nodes[1], moved)),
        ("node-lost-zone-label", lambda: cache.update_node(nodes[4], _spread_node("n4"))),
        ("node-added", lambda: [cache.add_node(_spread_node("n6", "z0")), cache.add_pod(_web("w6", "n6"))]),
        ("node-removed", lambda: cache.remove_node(nodes[0])),
    ]
    reused = 0
    for step, change in steps:
        change()
        cache.update_snapshot(snap)
        for probe_name, probe in _probes().items():
            before = {k: id(v) for k, v in pl._domain_memo.items()}
            remembered = run.score(probe)
            reused += sum(1 for k, v in pl._domain_memo.items() if before.get(k) == id(v))
            assert pl._domain_memo, f"{step}/{probe_name}: the remembered path was not taken"
            kept = dict(pl._domain_memo)
            pl._domain_memo.clear()
            fresh = run.score(probe)
            assert remembered == fresh, f"{step}/{probe_name}"
            pl._domain_memo.clear()
            pl._domain_memo.update(kept)  # the next step refreshes these, not a recount
    # counts kept from the step before were refreshed in place (not rebuilt) in every step
    # without a node added or removed: 4 memo keys for the 3 probes, 8 steps
    assert reused >= 4 * 8


def test_remembered_counts_are_bounded(fw, monkeypatch):
    """Every selector seen adds an entry; beyond the bound the least recently used goes first."""
    import scheduler.plugins.pod_topology_spread as pts

    monkeypatch.setattr(pts, "MAX_DOMAIN_MEMOS", 3)
    nodes = [_spread_node(f"n{i}", f"z{i % 2}") for i in range(4)]
    run = fw.Run(PodTopologySpread, fw.Snapshot(nodes, [make_pod("e").labels(app="a0").node("n0").obj()]))
    pl = run.plugin("PodTopologySpread")

    def probe(i):
        return make_pod(f"p{i}").labels(app=f"a{i}").spread_constraint(
            1, TZONE, "ScheduleAnyway", {"matchLabels": {"app": f"a{i}"}}).obj()

    for i in range(3):
        run.score(probe(i))
    run.score(probe(0))  # a0 used again: a1 is now the oldest
    run.score(probe(3))
    kept = [next(iter(req[2])) for k in pl._domain_memo for req in k[0].requirements]
    assert len(pl._domain_memo) == 3
    assert sorted(kept) == ["a0", "a2", "a3"]
    assert run.score(probe(0)) == {"n0": 0, "n1": 100, "n2": 0, "n3": 100}


def test_default_selector_follows_services_and_controllers_created_later(fw):
    """The default selector is remembered on the pod while no Service / ReplicaSet store changed:
    a Service created (or deleted) between two cycles of the same pod changes it at once."""
    nodes = [make_node(n).labels({"kubernetes.io/hostname": n}).obj() for n in ("n1", "n2")]
    run = fw.Run(PodTopologySpread, fw.Snapshot(nodes, []))
    pl = next(p for p in run.framework.score_plugins if p.name() == "PodTopologySpread")
    pi = PodInfo(make_pod("p").labels(app="web", tier="front").owner("ReplicaSet", "rs1").obj())
    assert pl.default_selector(pi).empty
    assert pl.default_selector(pi).empty  # remembered: same answer
    services, replicasets = pl._stores["Service"], pl._stores["ReplicaSet"]
    svc = {"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": {"app": "web"}}}
    services.put("default/s", svc)
    sel = pl.default_selector(pi)
    assert not sel.empty and sel.matches({"app": "web"}) and not sel.matches({"app": "db"})
    rs = {"metadata": {"name": "rs1", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"tier": "front"}}}}
    replicasets.put("default/rs1", rs)
    sel = pl.default_selector(pi)
    assert sel.matches({"app": "web", "tier": "front"}) and not sel.matches({"app": "web"})
    services.remove("default/s")
    replicasets.remove("default/rs1")
    assert pl.default_selector(pi).empty


def test_default_selector_is_shared_by_pods_alike_and_only_by_them(fw):
    """Pods of one template (same namespace, labels and controller) share one default selector;
    a pod differing in any of them gets its own, and a Service written since is seen by all."""
    nodes = [make_node(n).labels({"kubernetes.io/hostname": n}).obj() for n in ("n1", "n2")]
    run = fw.Run(PodTopologySpread, fw.Snapshot(nodes, []))
    pl = next(p for p in run.framework.score_plugins if p.name() == "PodTopologySpread")
    pl._stores["ReplicaSet"].put("default/rs1", {"metadata": {"name": "rs1", "namespace": "default"},
                                                 "spec": {"selector": {"matchLabels": {"app": "web"}}}})
    pl._stores["ReplicaSet"].put("default/rs2", {"metadata": {"name": "rs2", "namespace": "default"},
                                                 "spec": {"selector": {"matchLabels": {"app": "db"}}}})

    def sel(name, labels, owner="rs1", ns="default"):
        b = make_pod(name).labels(**labels).owner("ReplicaSet", owner)
        return pl.default_selector(PodInfo(b.namespace(ns).obj() if ns != "default" else b.obj()))

    first = sel("a", {"app": "web"})
    assert sel("b", {"app": "web"}) is first  # a second pod of the template: the same selector
    assert first.matches({"app": "web"}) and not first.matches({"app": "db"})
    assert sel("c", {"app": "web"}, owner="rs2").matches({"app": "db"})  # another controller
    assert sel("d", {"app": "web"}, ns="other").empty  # no rs1 in that namespace
    pl._stores["Service"].put("default/s", {"metadata": {"name": "s", "namespace": "default"},
                                            "spec": {"selector": {"tier": "front"}}})
    after = sel("e", {"app": "web"})
    assert after is not first and after.matches({"app": "web"})  # recomputed: a store it reads changed
    fronted = sel("g", {"app": "web", "tier": "front"})
    assert fronted.matches({"app": "web", "tier": "front"}) and not fronted.matches({"app": "web"})
