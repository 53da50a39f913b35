"""DefaultPreemption's exact dry-run shortcuts (a node without lower-priority pods; a node where
the pod does not fit even with every lower-priority pod gone) against the full clone-and-filter
simulation, on randomized clusters through the real framework runtime."""

import random

import numpy as np
import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.interface import Code
from scheduler.framework.types import PodInfo
from scheduler.plugins.default_preemption import DefaultPreemption
from scheduler.plugins.node_ports import NodePorts
from scheduler.plugins.node_resources.fit import NodeResourcesFit
from scheduler.plugins.pod_topology_spread import PodTopologySpread
from scheduler.plugins.taint_toleration import TaintToleration

PRIOS = (0, 10, 100, 1000)


def _cluster(rng, fw):
    nodes, pods, nominated = [], [], {}
    for i in range(rng.randint(8, 30)):
        name = f"n{i}"
        b = make_node(name).capacity(cpu=str(rng.choice((2, 4, 8))), memory="8Gi", pods=str(rng.choice((3, 110))))
        b.labels({"zone": f"z{i % 3}"})
        if rng.random() < 0.15:
            b.taints(("k", "v", "NoSchedule"))
        nodes.append(b.obj())
        for j in range(rng.randint(0, 4)):
            pb = make_pod(f"{name}-p{j}").req(cpu=f"{rng.choice((250, 500, 1000, 2000))}m", memory="256Mi")
            pb.priority(rng.choice(PRIOS)).node(name).start_time(f"2026-01-01T00:00:{rng.randint(0, 59):02d}Z")
            pb.labels({"app": rng.choice(("a", "b"))})
            if rng.random() < 0.2:
                pb.host_port(8080)
            pods.append(pb.obj())
        if rng.random() < 0.15:
            nom = make_pod(f"{name}-nom").req(cpu="1").priority(rng.choice(PRIOS)).obj()
            nominated[name] = [PodInfo(nom)]
    pdbs = [{
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb-a", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "a"}}},
        "status": {"disruptionsAllowed": 1},
    }]
    return fw.Snapshot(nodes, pods, informers={"poddisruptionbudgets": pdbs}, nominated=nominated), len(nodes)


def _preemptor(rng, *, cpu=None):
    b = make_pod("incoming").req(cpu=cpu or f"{rng.choice((500, 1000, 3000, 5000, 9000))}m", memory="256Mi")
    b.priority(rng.choice((10, 100, 1000))).labels({"app": "a"})
    if rng.random() < 0.3:
        b.host_port(8080)
    return b.obj()


def _view(result):
    cands, statuses = result
    return (
        [(c.name, [v.uid for v in c.victims], c.num_pdb_violations) for c in cands],
        {n: (s.code, list(s.reasons), s.plugin) for n, s in statuses.items()},
    )


PLUGIN_SETS = [
    [NodeResourcesFit, DefaultPreemption],
    [TaintToleration, NodePorts, NodeResourcesFit, DefaultPreemption],
    # PodTopologySpread's RemovePod is called by the full simulation; the shortcut skips it
    [TaintToleration, NodeResourcesFit, PodTopologySpread, DefaultPreemption],
]


@pytest.mark.parametrize("seed", range(40))
def test_shortcut_matches_full_simulation(fw, seed):
    rng = random.Random(seed)
    plugins = PLUGIN_SETS[seed % len(PLUGIN_SETS)]
    cluster, _ = _cluster(rng, fw)
    run = fw.Run(plugins, cluster)
    pod = _preemptor(rng)
    statuses, _, st, state = run.filter(pod)
    if not st.is_success():
        pytest.skip("PreFilter rejected the pod")
    pl = run.plugin("DefaultPreemption")
    potential = [ni for ni in run.scheduler.snapshot.node_info_list
                 if statuses[ni.name].code == Code.UNSCHEDULABLE]
    if not potential:
        pytest.skip("no potential node")
    fit_failed = frozenset(n.name for n in potential if statuses[n.name].plugin == "NodeResourcesFit")
    simulated = []
    full_select = pl.select_victims_on_node

    def counting(*a, **kw):
        simulated.append(a[2].name)
        return full_select(*a, **kw)

    pl.select_victims_on_node = counting
    pi = PodInfo(pod)
    pdbs = pl._pdbs()
    offset = rng.randrange(len(potential))
    want_n = rng.randint(1, len(potential))
    results = {}
    for shortcuts in (True, False):
        pl.shortcuts = shortcuts
        simulated.clear()
        results[shortcuts] = _view(pl.dry_run_preemption(
            state, pi, potential, pdbs, offset, want_n, fit_failed=fit_failed))
        if shortcuts:
            short_sims = list(simulated)
    full_sims = list(simulated)
    assert results[True] == results[False]
    # the shortcut simulated a subset of the nodes the full path did
    assert set(short_sims) <= set(full_sims)


@pytest.mark.parametrize("seed", range(20))
async def test_unschedulable_preemptor_message_matches(fw, seed):
    """A pod that fits nowhere even after evicting everything (the benchmark's 9-CPU pod): the
    PostFilter message is the same with and without the shortcuts, and no node is simulated."""
    rng = random.Random(1000 + seed)
    plugins = PLUGIN_SETS[seed % len(PLUGIN_SETS)]
    cluster, num_nodes = _cluster(rng, fw)
    run = fw.Run(plugins, cluster)
    pod = _preemptor(rng, cpu="9")
    statuses, _, _, state = run.filter(pod)
    failed = {k: v for k, v in statuses.items() if not v.is_success()}
    pl = run.plugin("DefaultPreemption")
    calls = []
    full_select = pl.select_victims_on_node
    pl.select_victims_on_node = lambda *a, **kw: calls.append(a[2].name) or full_select(*a, **kw)
    got = {}
    for shortcuts in (True, False):
        pl.shortcuts = shortcuts
        calls.clear()
        result, st = await run.framework.run_post_filter(state, PodInfo(pod), failed)
        got[shortcuts] = (result.nominated_node_name if result else None, st.code, st.reasons)
        if shortcuts:
            # only nodes with higher-priority nominations, or whose failure was not
            # NodeResourcesFit's, still need the simulation
            exempt = {n for n, s in failed.items() if s.plugin != "NodeResourcesFit"}
            exempt |= {n for n, ps in cluster.nominated.items() if any(p.priority >= 10 for p in ps)}
            assert set(calls) <= exempt
    assert got[True] == got[False]
    assert got[True][2][0].startswith(f"preemption: 0/{num_nodes} nodes are available: ")
    assert run.client.calls == []


async def test_bench_shape_message(fw):
    """9-CPU pods on 4-CPU nodes: lower-priority pods everywhere but one node, one tainted node."""
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory="32Gi").obj() for i in range(4)]
    nodes.append(make_node("t").capacity(cpu="4", memory="32Gi").taints(("k", "v", "NoSchedule")).obj())
    pods = [make_pod(f"low{i}").req(cpu="100m", memory="500Mi").priority(0).node(f"n{i}").obj() for i in range(3)]
    pods.append(make_pod("high3").req(cpu="100m").priority(100).node("n3").obj())
    run = fw.Run([TaintToleration, NodeResourcesFit, DefaultPreemption], fw.Snapshot(nodes, pods))
    pod = make_pod("big").req(cpu="9").priority(10).obj()
    statuses, _, _, state = run.filter(pod)
    result, st = await run.framework.run_post_filter(
        state, PodInfo(pod), {k: v for k, v in statuses.items() if not v.is_success()})
    assert st.code == Code.UNSCHEDULABLE
    assert st.reasons == [
        "preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling, 3 Insufficient cpu."
    ]
    assert result.nominated_node_name == ""


GPU = "example.com/gpu"


def _wide_cluster(rng, fw):
    """Many nodes of a few allocatable shapes (some with an extended resource), most holding
    only lower-priority pods, some empty, some keeping pods at or above the preemptor's range,
    a few with nominations: the shapes the array path groups."""
    nodes, pods, nominated = [], [], {}
    shapes = [dict(cpu=str(c), memory=m, pods=str(p)) for c in (2, 4) for m in ("4Gi", "8Gi") for p in (2, 110)]
    for i in range(rng.randint(20, 80)):
        name = f"n{i:02d}"
        cap = dict(rng.choice(shapes))
        if rng.random() < 0.2:
            cap[GPU] = str(rng.choice((0, 1, 2)))
        b = make_node(name).capacity(cap)
        if rng.random() < 0.1:
            b.taints(("k", "v", "NoSchedule"))
        nodes.append(b.obj())
        top = rng.choice((0, 10, 10, 10, 1000))  # most nodes: only low pods
        for j in range(rng.choice((0, 1, 2, 2, 3))):
            pb = make_pod(f"{name}-p{j}").req(cpu=f"{rng.choice((100, 500, 1000))}m", memory="256Mi")
            pb.priority(rng.choice((0, top))).node(name).start_time(f"2026-01-01T00:00:{rng.randint(0, 59):02d}Z")
            pods.append(pb.obj())
        if rng.random() < 0.1:
            nom = make_pod(f"{name}-nom").req(cpu="1").priority(rng.choice(PRIOS)).obj()
            nominated[name] = [PodInfo(nom)]
    return fw.Snapshot(nodes, pods, nominated=nominated)


@pytest.mark.parametrize("seed", range(40))
def test_array_shortcuts_match_full_simulation(fw, seed):
    """The dry run with the snapshot rows (both shortcuts decided over the node arrays), without
    them (node by node) and with no shortcut at all: the same candidates, victims and statuses,
    for every offset and candidate count, also when the walk stops early."""
    rng = random.Random(5000 + seed)
    plugins = PLUGIN_SETS[seed % len(PLUGIN_SETS)]
    run = fw.Run(plugins, _wide_cluster(rng, fw))
    b = make_pod("incoming").req(cpu=rng.choice(("500m", "1500m", "3", "9")), memory="256Mi")
    b.priority(rng.choice((10, 100)))
    if rng.random() < 0.3:
        b.req(cpu="500m", memory="256Mi", **{GPU: "1"})
    pod = b.obj()
    statuses, _, st, state = run.filter(pod)
    if not st.is_success():
        pytest.skip("PreFilter rejected the pod")
    snap = run.scheduler.snapshot
    rows = [i for i, ni in enumerate(snap.node_info_list) if statuses[ni.name].code == Code.UNSCHEDULABLE]
    potential = [snap.node_info_list[i] for i in rows]
    if not potential:
        pytest.skip("no potential node")
    fit_failed = frozenset(n.name for n in potential if statuses[n.name].plugin == "NodeResourcesFit")
    pl = run.plugin("DefaultPreemption")
    pi = PodInfo(pod)
    simulated: list[str] = []
    full_select = pl.select_victims_on_node
    pl.select_victims_on_node = lambda *a, **kw: simulated.append(a[2].name) or full_select(*a, **kw)
    for _ in range(3):
        offset = rng.randrange(len(potential))
        want_n = rng.choice((1, 2, len(potential)))
        got, sims = [], []
        for shortcuts, with_rows in ((True, True), (True, False), (False, False)):
            pl.shortcuts = shortcuts
            simulated.clear()
            got.append(_view(pl.dry_run_preemption(
                state, pi, potential, [], offset, want_n, fit_failed=fit_failed,
                rows=np.array(rows, dtype=np.int64) if with_rows else None)))
            sims.append(list(simulated))
        assert got[0] == got[2] and got[1] == got[2]
        assert sims[0] == sims[1]  # the array path simulates exactly the nodes the node-by-node one does


def test_node_arrays_priority_columns(fw):
    """min_prio / max_prio follow pods added and removed through the cache."""
    nodes = [make_node(n).capacity(cpu="4", memory="8Gi").obj() for n in ("a", "b", "c")]
    pods = [make_pod("a1").priority(5).node("a").obj(), make_pod("a2").priority(-3).node("a").obj(),
            make_pod("b1").priority(7).node("b").obj()]
    run = fw.Run([NodeResourcesFit, DefaultPreemption], fw.Snapshot(nodes, pods))
    s = run.scheduler
    arrays = s.snapshot.node_arrays()
    row = arrays.index
    assert (arrays.min_prio[row["a"]], arrays.max_prio[row["a"]]) == (-3, 5)
    assert (arrays.min_prio[row["b"]], arrays.max_prio[row["b"]]) == (7, 7)
    assert arrays.min_prio[row["c"]] > 2**31 and arrays.max_prio[row["c"]] < -(2**31)  # no pods
    s.cache.remove_pod(make_pod("a2").priority(-3).node("a").obj())
    s.cache.add_pod(make_pod("c1").priority(2**40).node("c").obj())  # beyond int32: kept comparable
    s.cache.update_snapshot(s.snapshot)
    arrays = s.snapshot.node_arrays()
    assert (arrays.min_prio[row["a"]], arrays.max_prio[row["a"]]) == (5, 5)
    assert arrays.min_prio[row["c"]] == arrays.max_prio[row["c"]] == 2**40


@pytest.mark.parametrize(("huge_node", "prio"), [(True, 10), (False, 2**62), (False, 10)])
async def test_array_path_falls_back_exactly(fw, huge_node, prio):
    """A node holding an exabyte (the arrays are not int64-safe) or a preemptor priority beyond
    the clamped priority columns: the node-by-node path answers, with the full simulation's
    message; in the plain case the array path answers the same."""
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi").obj() for i in range(6)]
    if huge_node:
        nodes.append(make_node("huge").capacity(cpu="4", memory=str(2**60)).obj())
    pods = [make_pod(f"low{i}").req(cpu="1").priority(0).node(f"n{i}").obj() for i in range(4)]
    run = fw.Run([NodeResourcesFit, DefaultPreemption], fw.Snapshot(nodes, pods))
    pod = make_pod("big").req(cpu="9").priority(prio).obj()
    statuses, _, _, state = run.filter(pod)
    failed = {k: v for k, v in statuses.items() if not v.is_success()}
    pl = run.plugin("DefaultPreemption")
    used = []
    full_known = pl._vector_known
    pl._vector_known = lambda *a, **kw: used.append(1) or full_known(*a, **kw)
    got = {}
    for shortcuts in (True, False):
        pl.shortcuts = shortcuts
        _, st = await run.framework.run_post_filter(state, PodInfo(pod), failed)
        got[shortcuts] = st.reasons
    assert got[True] == got[False]
    n = len(nodes)
    assert got[True] == [f"preemption: 0/{n} nodes are available: {n - 4} No preemption victims found for "
                         f"incoming pod, 4 Insufficient cpu."]
    assert bool(used) == (not huge_node and prio == 10)
