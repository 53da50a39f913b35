"""The NumPy paths (NodeArrays columns, vector fast accepts, vector scores, the window walk, the
vector select_host) decide exactly as the scalar paths do.

A randomized cluster — mixed node sizes, bound pods, extended resources and ephemeral storage,
nodes that are full, tainted, cordoned or hold images — is created through the real in-process
API; a real Scheduler's informers and cache pick it up. Then, per test pod (requests of every
resource kind): every Filter plugin's vector fast accept only accepts nodes its scalar `filter`
passes, every Score plugin's `score_rows` equals its scalar score node by node (also for
MostAllocated / RequestedToCapacityRatio / weighted resource lists), and whole scheduling
decisions with the NumPy paths on and off (same random seed) are identical.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest

from minik3s.api.resources import NODES, PODS, REPLICASETS
from minik3s.testing.builders import make_node, make_pod
from scheduler.config import parse_config
from scheduler.explain import AttemptRecord
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import FilterPlugin, NodeScore, ScorePlugin
from scheduler.framework.node_arrays import NodeArrays
from scheduler.framework.types import PodInfo
from scheduler.scheduler import FitError, Scheduler, SchedulingError, _assumed_pod_info

GPU = "example.com/gpu"
ZONE = "topology.kubernetes.io/zone"


def _nodes(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        res: dict[str, Any] = {"cpu": rng.choice(["1", "2", "4", "500m"]),
                               "memory": rng.choice(["1Gi", "4Gi", "32Gi"]),
                               "pods": str(rng.choice([2, 4, 110]))}
        if rng.random() < 0.5:
            res["ephemeral-storage"] = rng.choice(["1Gi", "10Gi"])
        if rng.random() < 0.3:
            res[GPU] = str(rng.choice([0, 1, 4]))
        b = make_node(f"n{i:03d}").labels({ZONE: f"z{i % 3}"}).capacity(res)
        r = rng.random()
        if r < 0.08:
            b = b.taints(("dedicated", "db", "NoSchedule"))
        elif r < 0.16:
            b = b.taints(("soft", "", "PreferNoSchedule"))
        elif r < 0.22:
            b = b.unschedulable()
        if rng.random() < 0.15:
            b = b.images((["registry.k8s.io/pause:3.10"], 300 * 1024 * 1024), (["busybox:latest"], 40 * 1024 * 1024))
        out.append(b.obj())
    return out


def _requests(rng: random.Random) -> dict[str, Any]:
    req: dict[str, Any] = {}
    if rng.random() < 0.8:
        req["cpu"] = rng.choice(["100m", "300m", "900m", "2"])
    if rng.random() < 0.8:
        req["memory"] = rng.choice(["128Mi", "700Mi", "3Gi"])
    if rng.random() < 0.3:
        req["ephemeral-storage"] = rng.choice(["500Mi", "5Gi"])
    if rng.random() < 0.25:
        req[GPU] = str(rng.choice([1, 2]))
    return req


def _pod(name: str, rng: random.Random, node: str | None = None) -> dict[str, Any]:
    req = _requests(rng)
    # an extended resource cannot be overcommitted: its limit equals its request (API validation)
    b = make_pod(name).container(requests=req, limits={GPU: req[GPU]} if GPU in req else None)
    if rng.random() < 0.2:
        b = b.toleration("dedicated", "db", "NoSchedule")
    if node:
        b = b.node(node)
    return b.obj()


PROFILES = {
    "default": {},
    "most-allocated-weighted": {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
        "name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated", "resources": [
            {"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1},
            {"name": "ephemeral-storage", "weight": 2}, {"name": GPU, "weight": 5}, {"name": "pods", "weight": 1}]}}}]}]},
    "requested-to-capacity-ratio": {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
        "name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}, {"name": GPU, "weight": 3}],
            "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10}, {"utilization": 40, "score": 2},
                                                   {"utilization": 100, "score": 7}]}}}}]}]},
    "least-allocated-with-extended": {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
        "name": "NodeResourcesFit", "args": {"ignoredResourceGroups": ["example.com"], "scoringStrategy": {
            "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": GPU, "weight": 2},
                                                    {"name": "ephemeral-storage", "weight": 4}]}}}]}]},
}


async def _cluster(real_api: Any, cfg: dict[str, Any], seed: int,
                   schedulers: int = 1) -> tuple[list[Scheduler], random.Random]:
    """`schedulers` Schedulers (same random seed) watching one randomized cluster; they see the
    same events in the same order, so their caches list the nodes in the same order."""
    rng = random.Random(seed)
    scheds = [Scheduler(parse_config(cfg), client=real_api, informers=real_api, clock=real_api.clock,
                        rng=random.Random(3)) for _ in range(schedulers)]
    for n in _nodes(rng, 60):
        await real_api.create(NODES, n)
    names = [f"n{i:03d}" for i in range(60)]
    for i in range(70):  # bound pods (some nodes end up full or overcommitted)
        await real_api.create(PODS, _pod(f"bound-{i}", rng, rng.choice(names)))
    await real_api.settle()
    for sched in scheds:
        sched.cache.update_snapshot(sched.snapshot)
    return scheds, rng


@pytest.mark.parametrize("profile", list(PROFILES), ids=lambda p: f"{p}-vector-equals-scalar")
async def test_vector_filters_and_scores_equal_the_scalar_plugins(real_api: Any, profile: str) -> None:
    (sched,), rng = await _cluster(real_api, PROFILES[profile], seed=len(profile))
    fw = next(iter(sched.frameworks.values()))
    snap = sched.snapshot
    nodes = snap.node_info_list
    assert len(nodes) == 60 and sum(len(n.pods) for n in nodes) == 70
    arrays = snap.node_arrays()
    rows = np.arange(len(nodes), dtype=np.int64)
    vector_scorers = [pl for pl in fw.score_plugins if type(pl).score_rows is not ScorePlugin.score_rows]
    vector_filters = [pl for pl in fw.filter_plugins if type(pl).filter_accept_mask is not FilterPlugin.filter_accept_mask]
    assert {pl.name() for pl in vector_filters} >= {"NodeResourcesFit", "TaintToleration", "NodeUnschedulable"}
    assert {pl.name() for pl in vector_scorers} >= {"NodeResourcesFit", "NodeResourcesBalancedAllocation"}
    accepted = rejected = 0
    for i in range(40):
        pi = PodInfo(_pod(f"probe-{i}", rng))
        state = CycleState()
        _, st, _ = fw.run_pre_filter(state, pi, nodes)
        assert st.is_success(), st
        for pl in vector_filters:
            mask = pl.filter_accept_mask(state, pi, arrays, rows)
            if mask is None:
                continue
            for ni, ok in zip(nodes, mask.tolist(), strict=True):
                scalar = pl.filter(state, pi, ni)
                if ok:
                    accepted += 1
                    assert scalar.is_success(), (pl.name(), ni.name, scalar)
                elif not scalar.is_success():
                    rejected += 1
        assert fw.run_pre_score(state, pi, nodes).is_success()
        for pl in vector_scorers:
            if pl.name() in state.skip_score_plugins:
                continue
            vec = pl.score_rows(state, pi, arrays, rows, nodes)
            assert vec is not None, pl.name()
            assert vec.tolist() == [pl.score(state, pi, ni)[0] for ni in nodes], (pl.name(), pi.requests)
        totals, st = fw.run_score(state, pi, nodes, arrays=arrays, rows=rows)
        scalar_totals, st2 = fw.run_score(state, pi, nodes)
        assert st.is_success() and st2.is_success()
        assert totals.tolist() == scalar_totals
    assert accepted > 100 and rejected > 100  # the cluster has both kinds of node for the probes


def _decide(sched: Scheduler, pods: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Each pod's decision, start index after it, and what `explain` would show of the cycle."""
    fw = next(iter(sched.frameworks.values()))
    out: list[tuple[str, Any]] = []
    for i, pod in enumerate(pods):
        pi = PodInfo(pod)
        pi.uid = f"uid-new-{i}"
        sched.cache.update_snapshot(sched.snapshot)
        rec = AttemptRecord(pi.namespace, pi.name, pi.uid, fw.profile_name, 1, i, "t")
        try:
            r = sched.schedule_pod(fw, CycleState(), pi, rec)
        except (FitError, SchedulingError) as e:
            out.append((f"error: {e}", (sched.next_start_node_index, json.dumps(rec.to_dict()))))
            continue
        sched.cache.assume_pod(_assumed_pod_info(pi, r.suggested_host))
        out.append((r.suggested_host, (sched.next_start_node_index, json.dumps(rec.to_dict()))))
        if i % 10 == 9:  # an assumed pod is forgotten again: its node's row must follow
            victim = sched.cache.get_pod(f"uid-new-{i - 4}")
            if victim is not None:
                sched.cache.forget_pod(victim)
    return out


@pytest.mark.parametrize("profile", ["default", "most-allocated-weighted", "requested-to-capacity-ratio"])
async def test_decisions_with_numpy_paths_equal_scalar_paths(real_api: Any, profile: str) -> None:
    """Two schedulers on the same cluster (the same informer events, the same random seed),
    one with the NumPy paths off, are fed the same pod stream: same nodes, start indexes and
    explanations (per-node verdicts, raw / normalized / total scores, as JSON)."""
    (vector_sched, scalar_sched), rng = await _cluster(real_api, PROFILES[profile], seed=11, schedulers=2)
    scalar_sched.vector_paths = False
    pods = [_pod(f"new-{i}", rng) for i in range(120)]
    vector = _decide(vector_sched, pods)
    scalar = _decide(scalar_sched, pods)
    assert vector_sched.snapshot.node_arrays().row_updates > 50  # the vector run followed the journal
    assert vector == scalar
    assert sum(1 for host, _ in vector if host.startswith("error")) > 3  # some pods fit nowhere
    assert len({host for host, _ in vector}) > 20  # and the others spread over many nodes


async def test_weights_beyond_int64_sum_python_integers_and_decide_alike(real_api: Any) -> None:
    """A score weight of 2**60 (valid: upstream only refuses negative weights) would overflow
    int64 totals; the runtime then sums Python integers, and the decisions stay the same."""
    cfg = {"profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [
        {"name": "NodeResourcesFit", "weight": 2**60}]}}}]}
    (vector_sched, scalar_sched), rng = await _cluster(real_api, cfg, seed=4, schedulers=2)
    scalar_sched.vector_paths = False
    pods = [_pod(f"w-{i}", rng) for i in range(30)]
    vector = _decide(vector_sched, pods)
    assert vector == _decide(scalar_sched, pods)
    assert not any(host.startswith("error: running") for host, _ in vector)  # no overflow error
    assert max(json.loads(extra[1]).get("nodes", {}).get(host, {}).get("totalScore", 0)
               for host, extra in vector if not host.startswith("error")) > 2**63


async def test_node_arrays_follow_every_cache_change(real_api: Any) -> None:
    (sched,), rng = await _cluster(real_api, {}, seed=5)
    snap = sched.snapshot
    arrays = snap.node_arrays()
    rebuilds = arrays.rebuilds

    def fresh() -> NodeArrays:
        a = NodeArrays()
        a.sync(snap)
        return a

    def same(a: NodeArrays, b: NodeArrays) -> None:
        for col in ("alloc_cpu", "alloc_mem", "alloc_eph", "alloc_pods", "req_cpu", "req_mem", "req_eph",
                    "nz_cpu", "nz_mem", "npods", "tainted", "unschedulable", "has_images", "untainted",
                    "schedulable"):
            assert getattr(a, col).tolist() == getattr(b, col).tolist(), col
        for k in set(a.scalar_alloc) | set(b.scalar_alloc):
            assert a.scalar_columns(k)[0].tolist() == b.scalar_columns(k)[0].tolist(), k
            assert a.scalar_columns(k)[1].tolist() == b.scalar_columns(k)[1].tolist(), k

    pi = PodInfo(make_pod("assumed").container(requests={"cpu": "250m", "memory": "1Gi", GPU: "1"},
                                               limits={GPU: "1"}).obj())
    pi.uid = "uid-assumed"
    sched.cache.assume_pod(_assumed_pod_info(pi, "n007"))
    sched.cache.update_snapshot(snap)
    same(snap.node_arrays(), fresh())
    assert arrays.rebuilds == rebuilds and arrays.row_updates >= 1  # one row rewritten, no rebuild
    sched.cache.forget_pod(_assumed_pod_info(pi, "n007"))
    await real_api.delete(PODS, "bound-3", "default")
    await real_api.patch(NODES, "n010", {"status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "3",
                                                                    "example.com/fpga": "2"}}},
                         patch_type="merge", subresource="status")
    # a node cordoned and tainted, another uncordoned and untainted: the flag columns follow
    cordoned = next(n.name for n in snap.node_info_list if not n.unschedulable and not n.taints)
    freed = next(n.name for n in snap.node_info_list if n.unschedulable or n.taints)
    await real_api.patch(NODES, cordoned, {"spec": {"unschedulable": True, "taints": [
        {"key": "k", "value": "v", "effect": "NoSchedule"}]}}, patch_type="merge")
    await real_api.patch(NODES, freed, {"spec": {"unschedulable": None, "taints": None}}, patch_type="merge")
    await real_api.settle()
    sched.cache.update_snapshot(snap)
    same(snap.node_arrays(), fresh())
    assert arrays.rebuilds == rebuilds
    assert arrays.scalar_columns("example.com/fpga")[0][arrays.index["n010"]] == 2
    row, row2 = arrays.index[cordoned], arrays.index[freed]
    assert (arrays.schedulable[row], arrays.untainted[row]) == (False, False)
    assert (arrays.schedulable[row2], arrays.untainted[row2]) == (True, True)
    await real_api.create(NODES, make_node("n999").capacity(cpu="1", memory="1Gi").obj())
    await real_api.settle()
    sched.cache.update_snapshot(snap)
    same(snap.node_arrays(), fresh())
    assert arrays.rebuilds == rebuilds + 1 and arrays.n == 61  # a new node: the columns are rebuilt


async def test_a_node_too_large_for_int64_leaves_the_cycle_to_the_scalar_path(real_api: Any) -> None:
    (sched,), _ = await _cluster(real_api, {}, seed=9)
    await real_api.create(NODES, make_node("huge").capacity(cpu="4", memory="8Ei").obj())
    await real_api.settle()
    sched.cache.update_snapshot(sched.snapshot)
    arrays = sched.snapshot.node_arrays()
    assert not arrays.safe
    fw = next(iter(sched.frameworks.values()))
    pi = PodInfo(make_pod("big").req(cpu="100m", memory="7Ei").obj())
    r = sched.schedule_pod(fw, CycleState(), pi)
    assert r.suggested_host == "huge"  # Python integers: no overflow, the only node with room


def test_vector_select_host_draws_like_the_reservoir() -> None:
    rng = random.Random(0)
    for trial in range(300):
        m = rng.randint(1, 200)
        totals = [rng.choice([100, 200, 300, rng.randint(0, 400)]) for _ in range(m)]
        nodes = [type("N", (), {"name": f"n{i}"})() for i in range(m)]
        a = Scheduler.__new__(Scheduler)
        b = Scheduler.__new__(Scheduler)
        a.rng = random.Random(trial)
        b.rng = random.Random(trial)
        assert a.select_host_array(nodes, np.asarray(totals, dtype=np.int64)) == b.select_host(nodes, totals)
        assert a.rng.random() == b.rng.random()  # the same number of draws


# ---- the vector reject path (NodeResourcesFit.filter_reject_rows) ------------------------------

def _reject_pod(name: str, rng: random.Random) -> dict[str, Any]:
    """Mostly pods that fit few or no nodes: several resources short at once, extended
    resources, empty requests (only "Too many pods" can reject them), a zone selector or
    toleration so that earlier plugins (NodeUnschedulable, TaintToleration, NodeAffinity)
    reject some nodes before NodeResourcesFit sees them."""
    kind = rng.random()
    if kind < 0.15:
        req: dict[str, Any] = {}
    elif kind < 0.55:
        req = {"cpu": rng.choice(["3", "9"]), "memory": rng.choice(["5Gi", "64Gi"])}
        if rng.random() < 0.5:
            req["ephemeral-storage"] = rng.choice(["5Gi", "50Gi"])
        if rng.random() < 0.4:
            req[GPU] = str(rng.choice([2, 8]))
    else:
        req = _requests(rng)
    b = make_pod(name).container(requests=req or None, limits={GPU: req[GPU]} if GPU in req else None)
    if rng.random() < 0.3:
        b = b.toleration("dedicated", "db", "NoSchedule")
    if rng.random() < 0.3:
        b = b.node_affinity_in(ZONE, [rng.choice(["z0", "z1", "z2"])])
    return b.obj()


async def _big_cluster(real_api: Any, seed: int, schedulers: int) -> tuple[list[Scheduler], random.Random]:
    """Like `_cluster`, with 300 nodes (several filter chunks, a moving round-robin start)."""
    rng = random.Random(seed)
    scheds = [Scheduler(parse_config({}), client=real_api, informers=real_api, clock=real_api.clock,
                        rng=random.Random(3)) for _ in range(schedulers)]
    for n in _nodes(rng, 300):
        await real_api.create(NODES, n)
    names = [f"n{i:03d}" for i in range(300)]
    for i in range(400):
        await real_api.create(PODS, _pod(f"bound-{i}", rng, rng.choice(names)))
    await real_api.settle()
    for sched in scheds:
        sched.cache.update_snapshot(sched.snapshot)
    return scheds, rng


async def test_fit_vector_rejects_equal_the_scalar_filter(real_api: Any) -> None:
    """For every row, `filter_reject_rows` rejects exactly the nodes NodeResourcesFit's scalar
    `filter` rejects, with an equal Status (reasons in upstream's order)."""
    (sched,), rng = await _big_cluster(real_api, seed=5, schedulers=1)
    fw = next(iter(sched.frameworks.values()))
    fit = next(pl for pl in fw.filter_plugins if pl.name() == "NodeResourcesFit")
    assert fw.vector_reject_plugins == {"NodeResourcesFit", "InterPodAffinity", "PodTopologySpread"}
    nodes = sched.snapshot.node_info_list
    arrays = sched.snapshot.node_arrays()
    rows = np.arange(len(nodes), dtype=np.int64)
    multi = seen_pods_only = 0
    for i in range(60):
        pi = PodInfo(_reject_pod(f"probe-{i}", rng))
        state = CycleState()
        assert fw.run_pre_filter(state, pi, nodes)[1].is_success()
        out = fit.filter_reject_rows(state, pi, arrays, rows)
        assert out is not None
        bad_rows, sts = out
        got = dict(zip(bad_rows.tolist(), sts, strict=True))
        for r, ni in enumerate(nodes):
            scalar = fit.filter(state, pi, ni)
            if scalar.is_success():
                assert r not in got, (ni.name, got[r])
            else:
                assert got[r] == scalar, (ni.name, got[r], scalar)
                multi += len(scalar.reasons) > 1
                seen_pods_only += scalar.reasons == ["Too many pods"]
    assert multi > 100 and seen_pods_only > 10  # several reasons at once, and pod-count-only rejections


def _decide_with_diagnosis(sched: Scheduler, pods: list[dict[str, Any]]) -> list[Any]:
    """`_decide` plus, for a pod that fits nowhere, its whole diagnosis: NodeToStatus in order,
    the unschedulable/pending plugin sets and the FailedScheduling message."""
    fw = next(iter(sched.frameworks.values()))
    out: list[Any] = []
    for i, pod in enumerate(pods):
        pi = PodInfo(pod)
        pi.uid = f"uid-new-{i}"
        sched.cache.update_snapshot(sched.snapshot)
        rec = AttemptRecord(pi.namespace, pi.name, pi.uid, fw.profile_name, 1, i, "t")
        try:
            r = sched.schedule_pod(fw, CycleState(), pi, rec)
        except FitError as e:
            d = e.diagnosis
            out.append((str(e), [(n, st.code, st.reasons, st.plugin) for n, st in d.node_to_status.items()],
                        sorted(d.unschedulable_plugins), sorted(d.pending_plugins), sched.next_start_node_index,
                        json.dumps(rec.to_dict())))
            continue
        sched.cache.assume_pod(_assumed_pod_info(pi, r.suggested_host))
        out.append((r.suggested_host, sched.next_start_node_index, json.dumps(rec.to_dict())))
    return out


def _decide_three_ways(scheds: list[Scheduler], pods: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    """The same pod stream through three schedulers on one cluster: vector rejects on, off
    (NumPy walk, `filter_nodes` for rejected rows), and every NumPy path off; asserts they
    decide and diagnose alike. Returns the decisions and the failures among them."""
    vec, no_rejects, scalar = scheds
    no_rejects.vector_rejects = False
    scalar.vector_paths = False
    got = _decide_with_diagnosis(vec, pods)
    assert got == _decide_with_diagnosis(no_rejects, pods)
    assert got == _decide_with_diagnosis(scalar, pods)
    return got, [g for g in got if len(g) == 6]


async def test_decisions_and_diagnoses_with_vector_rejects_equal_scalar_paths(real_api: Any) -> None:
    """Three schedulers on one cluster, same pod stream: vector rejects on, off (NumPy walk,
    `filter_nodes` for rejected rows), and every NumPy path off. Same decisions, the same
    per-node statuses in the same order, plugin sets and FailedScheduling messages."""
    scheds, rng = await _big_cluster(real_api, seed=9, schedulers=3)
    got, failures = _decide_three_ways(scheds, [_reject_pod(f"new-{i}", rng) for i in range(80)])
    assert len(failures) > 10 and len(got) - len(failures) > 10
    msgs = " ".join(g[0] for g in failures)
    for reason in ("Insufficient cpu", "Insufficient memory", "Too many pods", "node(s) were unschedulable",
                   "untolerated taint", "didn't match Pod's node affinity/selector"):
        assert reason in msgs, reason  # earlier plugins and Fit both reject in the failures
    assert any("NodeResourcesFit" in g[2] and len(g[2]) > 1 for g in failures)


# ---- RowMemo: per-row scores and fast accepts remembered across cycles -------------------------

def _memos(sched: Scheduler) -> list[Any]:
    fw = next(iter(sched.frameworks.values()))
    out = []
    for pl in (*fw.score_plugins, *fw.filter_plugins):
        for attr in ("_row_memo", "_accept_memo"):
            m = getattr(pl, attr, None)
            if m is not None and m not in out:
                out.append(m)
    return out


@pytest.mark.parametrize("profile", ["default", "most-allocated-weighted", "least-allocated-with-extended"])
async def test_remembered_rows_decide_like_the_scalar_paths_while_nodes_change(real_api: Any, profile: str) -> None:
    """Pods of three request shapes in turn (a Deployment-like stream: the memo hits), with
    assumed pods, forgotten pods, a deleted pod and a node whose allocatable changes between
    cycles: the vector scheduler (remembered rows) decides exactly as the scalar one, with the
    same explanations."""
    (vector_sched, scalar_sched), rng = await _cluster(real_api, PROFILES[profile], seed=23, schedulers=2)
    scalar_sched.vector_paths = False
    shapes = [_pod(f"shape-{i}", rng) for i in range(3)]

    def stream(lo: int, hi: int) -> list[dict[str, Any]]:
        out = []
        for i in range(lo, hi):
            pod = json.loads(json.dumps(shapes[i % 3]))
            pod["metadata"]["name"] = f"rep-{i}"
            out.append(pod)
        return out

    first = stream(0, 45)
    assert _decide(vector_sched, first) == _decide(scalar_sched, first)
    # nodes change under the memo: the assumed pods are forgotten (many rows at once), a bound
    # pod goes, a node grows and gains an extended resource
    for sched in (vector_sched, scalar_sched):
        for i in range(45):
            assumed = sched.cache.get_pod(f"uid-new-{i}")
            if assumed is not None:
                sched.cache.forget_pod(assumed)
    await real_api.delete(PODS, "bound-5", "default")
    await real_api.patch(NODES, "n004", {"status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110",
                                                                    GPU: "8"}}},
                         patch_type="merge", subresource="status")
    await real_api.settle()
    second = stream(45, 90)
    assert _decide(vector_sched, second) == _decide(scalar_sched, second)
    memos = _memos(vector_sched)
    assert len(memos) >= 2
    assert sum(m.hits for m in memos) > 100  # the rows were remembered, not recomputed
    assert not any(m.hits for m in _memos(scalar_sched))


def test_row_memo_recomputes_only_rows_rewritten_since() -> None:
    """The memo keeps every row's value and recomputes the rows the arrays rewrote since: one by
    one with `compute_one` up to SCALAR_ROWS of them, as a vector beyond; another key, another
    arrays object, a rebuild or a write log that no longer reaches back start from scratch;
    the least recently used key goes first."""
    from scheduler.backend.snapshot import Snapshot
    from scheduler.framework import node_arrays
    from scheduler.framework.node_arrays import RowMemo

    snap = Snapshot.from_objects([make_node(f"m{i:02d}").capacity(cpu="4", memory="4Gi").obj() for i in range(20)])
    arrays = NodeArrays()
    arrays.sync(snap)
    calls: list[tuple[str, Any]] = []

    def compute(rs: Any) -> Any:  # the value of a row: its pod count x 10 + the row
        calls.append(("vector", rs.tolist()))
        return arrays.npods[rs] * 10 + rs

    def compute_one(r: int) -> int:
        calls.append(("one", r))
        return len(arrays.node(r).pods) * 10 + r

    def add_pods(*rows: int) -> None:
        for r in rows:
            snap.node_info_list[r].add_pod(PodInfo(make_pod(f"p{r}-{len(calls)}").node(f"m{r:02d}").obj()))
        arrays.sync(snap)  # an untracked snapshot: the rows whose generation moved are rewritten

    memo = RowMemo(size=2)
    rows = np.array([3, 1, 7], dtype=np.int64)
    # first sighting of a key: just the rows asked, nothing kept (all-different pods cost the same)
    assert memo.values(arrays, "k", rows, compute, compute_one).tolist() == [3, 1, 7]
    assert calls == [("vector", [3, 1, 7])] and memo.misses == 1
    calls.clear()
    # second sighting: every row, kept
    assert memo.values(arrays, "k", rows, compute, compute_one).tolist() == [3, 1, 7]
    assert calls == [("vector", list(range(20)))] and memo.misses == 2
    calls.clear()
    assert memo.values(arrays, "k", rows, compute, compute_one).tolist() == [3, 1, 7]
    assert calls == [] and memo.hits == 1
    add_pods(7, 7)  # one row rewritten (twice): recomputed once, alone
    assert memo.values(arrays, "k", rows, compute, compute_one).tolist() == [3, 1, 27]
    assert calls == [("one", 7)]
    calls.clear()
    changed = list(range(RowMemo.SCALAR_ROWS + 1))  # more rows than SCALAR_ROWS: one vector call
    add_pods(*changed)
    assert memo.values(arrays, "k", rows, compute, compute_one).tolist() == [13, 11, 37]
    assert calls == [("vector", changed)]
    calls.clear()
    got = memo.values(arrays, "k", rows, compute, compute_one)  # a copy: changing it changes nothing
    got[:] = 0
    assert memo.values(arrays, "k", rows, compute, compute_one).tolist() == [13, 11, 37]
    # two more keys (each seen twice): "k" is the least recently used when "k3" comes, so it
    # goes (size 2)
    for k in ("k2", "k2", "k3", "k3"):
        memo.values(arrays, k, rows, compute, compute_one)
    calls.clear()
    memo.values(arrays, "k3", rows, compute, compute_one)
    assert calls == []
    memo.values(arrays, "k", rows, compute, compute_one)
    assert calls == [("vector", list(range(20)))]
    calls.clear()
    # the write log dropped the writes after the entry's mark: from scratch
    saved = node_arrays._LOG_LIMIT
    node_arrays._LOG_LIMIT = 4
    try:
        add_pods(0, 1, 2, 4, 5, 6)
    finally:
        node_arrays._LOG_LIMIT = saved
    assert memo.values(arrays, "k", rows, compute, compute_one).tolist() == [13, 21, 37]
    assert calls == [("vector", list(range(20)))]
    calls.clear()
    # a rebuild (rows may now be other nodes) or another arrays object: from scratch
    snap.node_info_list = list(snap.node_info_list)
    arrays.sync(snap)
    memo.values(arrays, "k", rows, compute, compute_one)
    assert calls == [("vector", list(range(20)))]
    calls.clear()
    other = NodeArrays()
    other.sync(snap)
    memo.values(other, "k", rows, compute, compute_one)
    assert calls == [("vector", list(range(20)))]
    calls.clear()
    # a stream of pods that never repeat a key: each computes only its rows, as without a memo
    for j in range(30):
        memo.values(other, ("distinct", j), rows, compute, compute_one)
    assert calls == [("vector", [3, 1, 7])] * 30


HOSTNAME = "kubernetes.io/hostname"


async def _web_replicaset(real_api: Any) -> dict[str, Any]:
    """A ReplicaSet selecting app=web: its pods get PodTopologySpread's system defaults."""
    return await real_api.create(REPLICASETS, {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                               "metadata": {"name": "web", "namespace": "default"}, "spec": {
        "replicas": 0, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})


def test_label_codes_tables_follow_the_codes_they_were_built_on() -> None:
    """Codes come in first-seen order as rows are read, -1 for a node without the label; a
    table built from values and counts is indexed by those codes with a 0 slot that -1 reads;
    a value no row has shown is left out, and the stamp taken with the table stops being
    current once rows show a new value (the table would miss it)."""
    from scheduler.backend.snapshot import Snapshot
    from scheduler.framework.node_arrays import LabelCodes

    nodes = [make_node(f"m{i}").labels({ZONE: f"z{i % 3}"} if i != 4 else {}).obj() for i in range(6)]
    snap = Snapshot.from_objects(nodes)
    arrays = NodeArrays()
    arrays.sync(snap)
    labels = LabelCodes()
    first = labels.rows(arrays, np.array([2, 4], dtype=np.int64), ZONE)
    assert first.tolist() == [0, -1] and labels.names(ZONE) == ["z2"]
    stamp = labels.stamp(ZONE)
    counts = {"z2": 5, "z0": 7}  # z0: no row read yet has it
    table = labels.table(ZONE, counts.keys(), counts.values())
    assert table.tolist() == [5, 0] and table[first].tolist() == [5, 0]
    assert labels.table(ZONE, ["z2", "z9"]).tolist() == [1, 0]
    assert labels.is_current(ZONE, stamp)
    every = labels.rows(arrays, np.arange(6, dtype=np.int64), ZONE)
    assert not labels.is_current(ZONE, stamp)  # z0 and z1 got codes
    assert [labels.names(ZONE)[c] if c >= 0 else None for c in every.tolist()] == ["z0", "z1", "z2", "z0", None, "z2"]
    table = labels.table(ZONE, counts.keys(), counts.values())
    assert table[every].tolist() == [7, 0, 5, 7, 0, 5]


async def test_topology_spread_vector_scores_equal_the_scalar_scores(real_api: Any) -> None:
    """PodTopologySpread's `score_rows` / `normalize_score_array` / `normalize_raw_scores` equal
    its node-by-node Score and NormalizeScore, with explicit ScheduleAnyway constraints (nodes
    missing a key are ignored: 0) and with the system defaults of a ReplicaSet's pods (hostname
    counts from the remembered per-node counts), and the runtime's vector totals equal its
    scalar totals."""
    rng = random.Random(5)
    sched = Scheduler(parse_config({}), client=real_api, informers=real_api, clock=real_api.clock,
                      rng=random.Random(3))
    for i in range(40):
        labels = {}
        if i % 7:
            labels[ZONE] = f"z{i % 4}"
        if i % 9:
            labels[HOSTNAME] = f"n{i:03d}"
        await real_api.create(NODES, make_node(f"n{i:03d}").labels(labels).capacity(
            {"cpu": "8", "memory": "32Gi", "pods": "110"}).obj())
    rs = await _web_replicaset(real_api)
    for i in range(90):  # bound pods matching the selector, unevenly over the nodes
        b = make_pod(f"bound-{i}").labels(app="web" if i % 5 else "other").node(f"n{rng.randrange(40):03d}")
        await real_api.create(PODS, b.obj())
    await real_api.settle()
    sched.cache.update_snapshot(sched.snapshot)
    fw = next(iter(sched.frameworks.values()))
    pl = next(p for p in fw.score_plugins if p.name() == "PodTopologySpread")
    nodes = sched.snapshot.node_info_list
    arrays = sched.snapshot.node_arrays()
    rows = np.arange(len(nodes), dtype=np.int64)
    explicit = make_pod("explicit").labels(app="web").spread_constraint(
        1, ZONE, "ScheduleAnyway", selector={"matchLabels": {"app": "web"}}).spread_constraint(
        2, HOSTNAME, "ScheduleAnyway", selector={"matchLabels": {"app": "web"}}).obj()
    owned = make_pod("owned").labels(app="web").owner("ReplicaSet", "web", uid=rs["metadata"]["uid"]).obj()
    for pod in (explicit, owned):
        pi = PodInfo(pod)
        state = CycleState()
        fw.run_pre_filter(state, pi, nodes)
        assert fw.run_pre_score(state, pi, nodes).is_success()
        assert "PodTopologySpread" not in state.skip_score_plugins
        scalar = [pl.score(state, pi, ni)[0] for ni in nodes]
        vec = pl.score_rows(state, pi, arrays, rows, nodes)
        assert vec is not None and vec.tolist() == scalar
        assert len(set(scalar)) > 2  # the counts differ from node to node
        scores = [NodeScore(ni.name, v) for ni, v in zip(nodes, scalar, strict=True)]
        pl.normalize_score(state, pi, scores)
        normalized = pl.normalize_score_array(state, pi, vec)
        assert normalized is not None and normalized.tolist() == [s.score for s in scores]
        assert pl.normalize_raw_scores(state, pi, scalar) == [s.score for s in scores]
        totals, st = fw.run_score(state, pi, nodes, arrays=arrays, rows=rows)
        scalar_totals, st2 = fw.run_score(state, pi, nodes)
        assert st.is_success() and st2.is_success() and totals.tolist() == scalar_totals
    # the explicit constraints ignore the nodes without both keys
    pi = PodInfo(explicit)
    state = CycleState()
    fw.run_pre_filter(state, pi, nodes)
    fw.run_pre_score(state, pi, nodes)
    vec = pl.score_rows(state, pi, arrays, rows, nodes)
    normalized = pl.normalize_score_array(state, pi, vec)
    missing = [i for i, ni in enumerate(nodes) if ZONE not in ni.labels or HOSTNAME not in ni.labels]
    assert missing and all(normalized[i] == 0 for i in missing)


async def test_topology_spread_remembered_rows_decide_like_the_scalar_paths(real_api: Any) -> None:
    """A ReplicaSet's pods in a stream (system-default spreading over zone and hostname, scored
    from rows remembered across cycles) with assumed and forgotten pods, a node relabelled into
    another zone, a node losing its hostname label, a new zone value and a bound pod deleted
    between cycles, a node losing its zone label (a domain of its own: ""): the vector scheduler
    decides exactly as the scalar one, and the rows were remembered rather than recomputed."""
    rng = random.Random(11)
    scheds = [Scheduler(parse_config({}), client=real_api, informers=real_api, clock=real_api.clock,
                        rng=random.Random(3)) for _ in range(2)]
    vector_sched, scalar_sched = scheds
    scalar_sched.vector_paths = False
    for i in range(30):
        await real_api.create(NODES, make_node(f"n{i:03d}").labels({ZONE: f"z{i % 3}", HOSTNAME: f"n{i:03d}"}).capacity(
            {"cpu": "8", "memory": "32Gi", "pods": "110"}).obj())
    rs = await _web_replicaset(real_api)
    for i in range(40):
        await real_api.create(PODS, make_pod(f"bound-{i}").labels(app="web").node(
            f"n{rng.randrange(30):03d}").obj())
    await real_api.settle()
    for sched in scheds:
        sched.cache.update_snapshot(sched.snapshot)
    uid = rs["metadata"]["uid"]

    def stream(lo: int, hi: int) -> list[dict[str, Any]]:
        return [make_pod(f"rep-{i}").labels(app="web").owner("ReplicaSet", "web", uid=uid).container(
            requests={"cpu": "100m", "memory": "100Mi"}).obj() for i in range(lo, hi)]

    first = stream(0, 40)
    assert _decide(vector_sched, first) == _decide(scalar_sched, first)
    for sched in scheds:  # the assumed pods are forgotten (many rows at once; _decide reuses uids)
        for i in range(40):
            assumed = sched.cache.get_pod(f"uid-new-{i}")
            if assumed is not None:
                sched.cache.forget_pod(assumed)
    await real_api.patch(NODES, "n004", {"metadata": {"labels": {ZONE: "z2"}}}, patch_type="merge")
    await real_api.patch(NODES, "n007", {"metadata": {"labels": {HOSTNAME: None}}}, patch_type="merge")
    await real_api.patch(NODES, "n010", {"metadata": {"labels": {ZONE: "z-new"}}}, patch_type="merge")
    await real_api.patch(NODES, "n013", {"metadata": {"labels": {ZONE: None}}}, patch_type="merge")
    await real_api.delete(PODS, "bound-3", "default")
    await real_api.settle()
    second = stream(40, 80)
    assert _decide(vector_sched, second) == _decide(scalar_sched, second)
    pl = next(p for p in next(iter(vector_sched.frameworks.values())).score_plugins
              if p.name() == "PodTopologySpread")
    assert pl._host_rows.hits > 40 and pl._labels.hits > 40


def _probe_rejects(sched: Scheduler, name: str, probes: list[dict[str, Any]]) -> tuple[dict[str, int], int]:
    """`_rejects_match_filter` of plugin `name` for each probe pod whose PreFilter succeeds and
    leaves the plugin's Filter on; the rejection reasons counted, and the nodes that passed."""
    sched.cache.update_snapshot(sched.snapshot)
    fw = next(iter(sched.frameworks.values()))
    plugin = next(pl for pl in fw.filter_plugins if pl.name() == name)
    assert name in fw.vector_reject_plugins
    nodes = sched.snapshot.node_info_list
    arrays = sched.snapshot.node_arrays()
    seen: dict[str, int] = {}
    passed = 0
    for pod in probes:
        pi = PodInfo(pod)
        state = CycleState()
        if not fw.run_pre_filter(state, pi, nodes)[1].is_success() or name in state.skip_filter_plugins:
            continue
        passed += _rejects_match_filter(plugin, state, pi, arrays, nodes, seen)
    return seen, passed


def _rejects_match_filter(plugin: Any, state: CycleState, pi: PodInfo, arrays: Any, nodes: list[Any],
                          seen: dict[str, int]) -> int:
    """Asks `plugin.filter_reject_rows` about every row, the window in two pieces as the filter
    walk's chunks ask (the remembered rows then answer the second), and asserts it rejects
    exactly the rows `filter` rejects, with an equal Status. Counts each rejection reason in
    `seen`; returns how many nodes pass."""
    rows = np.arange(len(nodes), dtype=np.int64)
    got: dict[int, Any] = {}
    for part in (rows[: len(rows) // 3], rows[len(rows) // 3:]):
        out = plugin.filter_reject_rows(state, pi, arrays, part)
        assert out is not None
        bad_rows, sts = out
        assert len(bad_rows) == len(sts) and set(bad_rows.tolist()) <= set(part.tolist())
        got.update(zip(bad_rows.tolist(), sts, strict=True))
    passed = 0
    for r, ni in enumerate(nodes):
        scalar = plugin.filter(state, pi, ni)
        if scalar.is_success():
            passed += 1
            assert r not in got, (ni.name, got[r])
        else:
            assert got[r] == scalar, (ni.name, got[r], scalar)
            seen[scalar.reasons[0]] = seen.get(scalar.reasons[0], 0) + 1
    return passed


# ---- InterPodAffinity.filter_reject_rows -------------------------------------------------------

HOSTNAME = "kubernetes.io/hostname"


def _anti_pod(name: str, rng: random.Random, node: str | None = None) -> dict[str, Any]:
    """A pod labelled color=green|blue, app=web|db, mostly with required anti-affinity on the
    hostname or the zone (against color or app), some with none; no required affinity."""
    b = make_pod(name).labels(color=rng.choice(["green", "blue"]), app=rng.choice(["web", "db"]))
    r = rng.random()
    if r < 0.45:
        b = b.pod_anti_affinity(HOSTNAME, {"matchLabels": {"color": rng.choice(["green", "blue"])}})
    elif r < 0.6:
        b = b.pod_anti_affinity(ZONE, {"matchLabels": {"app": rng.choice(["web", "db"])}})
    elif r < 0.75:
        b = (b.pod_anti_affinity(HOSTNAME, {"matchLabels": {"app": "db"}})
             .pod_anti_affinity(ZONE, {"matchLabels": {"color": "blue"}}))
    if node:
        b = b.node(node)
    return b.obj()


async def test_inter_pod_affinity_vector_rejects_equal_the_scalar_filter(real_api: Any) -> None:
    """For every row, InterPodAffinity's `filter_reject_rows` rejects exactly the nodes its
    scalar `filter` rejects, with an equal Status: the incoming pod's anti-affinity first, then
    existing pods' anti-affinity, on hostname- and zone-keyed terms; nodes without the key
    never blocked."""
    rng = random.Random(21)
    sched = Scheduler(parse_config({}), client=real_api, informers=real_api, clock=real_api.clock,
                      rng=random.Random(3))
    names = []
    for i in range(240):
        b = make_node(f"n{i:03d}").capacity(cpu="8", memory="32Gi", pods="110")
        labels = {ZONE: f"z{i % 4}"} if i % 11 else {}  # some nodes without a zone label
        if i % 13:
            labels[HOSTNAME] = f"n{i:03d}"  # and some without a hostname label
        await real_api.create(NODES, b.labels(labels).obj())
        names.append(f"n{i:03d}")
    for i in range(300):
        await real_api.create(PODS, _anti_pod(f"bound-{i}", rng, rng.choice(names)))
    await real_api.settle()
    seen, passed = _probe_rejects(sched, "InterPodAffinity", [_anti_pod(f"probe-{i}", rng) for i in range(60)])
    # both reasons, many times each, and nodes that pass
    assert seen.get("node(s) didn't match pod anti-affinity rules", 0) > 100
    assert seen.get("node(s) didn't satisfy existing pods anti-affinity rules", 0) > 100
    assert passed > 500


async def test_decisions_with_inter_pod_affinity_vector_rejects_equal_scalar_paths(real_api: Any) -> None:
    """A stream of anti-affinity pods until nodes run out: vector rejects on, off, and every
    NumPy path off decide alike, with the same per-node statuses, in the same order."""
    rng = random.Random(17)
    scheds = [Scheduler(parse_config({}), client=real_api, informers=real_api, clock=real_api.clock,
                        rng=random.Random(3)) for _ in range(3)]
    for i in range(150):
        await real_api.create(NODES, make_node(f"n{i:03d}").capacity(cpu="8", memory="32Gi", pods="110").labels(
            {ZONE: f"z{i % 3}", HOSTNAME: f"n{i:03d}"}).obj())
    for i in range(60):
        await real_api.create(PODS, _anti_pod(f"bound-{i}", rng, f"n{rng.randrange(150):03d}"))
    await real_api.settle()
    for s in scheds:
        s.cache.update_snapshot(s.snapshot)
    got, failures = _decide_three_ways(scheds, [_anti_pod(f"new-{i}", rng) for i in range(200)])
    assert failures and len(got) - len(failures) > 50
    assert any("anti-affinity" in g[0] for g in failures)


# ---- PodTopologySpread.filter_reject_rows ------------------------------------------------------

RACK = "example.com/rack"


def _spread_pod(name: str, rng: random.Random, node: str | None = None) -> dict[str, Any]:
    """A pod labelled app=web|db, mostly with DoNotSchedule constraints on the zone, the
    hostname or a rack label (some nodes lack it), tight or loose skews, minDomains, selectors
    that match the pod itself or not; some with two constraints, some with none."""
    app = rng.choice(["web", "db"])
    b = make_pod(name).labels(app=app)
    r = rng.random()
    if r < 0.3:
        b = b.spread_constraint(rng.choice([1, 2]), ZONE, selector={"matchLabels": {"app": app}})
    elif r < 0.5:
        b = b.spread_constraint(1, HOSTNAME, selector={"matchLabels": {"app": rng.choice(["web", "db"])}})
    elif r < 0.7:
        b = b.spread_constraint(1, RACK, selector={"matchLabels": {"app": app}},
                                min_domains=rng.choice([None, 5]))
    elif r < 0.85:
        b = (b.spread_constraint(1, ZONE, selector={"matchLabels": {"app": "web"}})
             .spread_constraint(2, RACK, selector={"matchLabels": {"app": "db"}}))
    if node:
        b = b.node(node)
    return b.obj()


async def _spread_cluster(real_api: Any, rng: random.Random, n_nodes: int, n_pods: int) -> list[str]:
    names = []
    for i in range(n_nodes):
        labels = {ZONE: f"z{i % 3}", HOSTNAME: f"n{i:03d}"}
        if i % 7:
            labels[RACK] = f"r{i % 9}"  # every seventh node without a rack
        await real_api.create(NODES, make_node(f"n{i:03d}").capacity(cpu="8", memory="32Gi", pods="110")
                              .labels(labels).obj())
        names.append(f"n{i:03d}")
    for i in range(n_pods):
        await real_api.create(PODS, _spread_pod(f"bound-{i}", rng, rng.choice(names)))
    await real_api.settle()
    return names


async def test_topology_spread_vector_rejects_equal_the_scalar_filter(real_api: Any) -> None:
    """For every row, PodTopologySpread's `filter_reject_rows` rejects exactly the nodes its
    scalar `filter` rejects, with an equal Status: a missing topology label (unresolvable)
    or a skew above maxSkew, constraint by constraint in order."""
    rng = random.Random(33)
    sched = Scheduler(parse_config({}), client=real_api, informers=real_api, clock=real_api.clock,
                      rng=random.Random(3))
    await _spread_cluster(real_api, rng, 210, 260)
    seen, passed = _probe_rejects(sched, "PodTopologySpread", [_spread_pod(f"probe-{i}", rng) for i in range(80)])
    assert seen.get("node(s) didn't match pod topology spread constraints", 0) > 100
    assert seen.get("node(s) didn't match pod topology spread constraints (missing required label)", 0) > 20
    assert passed > 1000


async def test_decisions_with_topology_spread_vector_rejects_equal_scalar_paths(real_api: Any) -> None:
    """A stream of spreading pods: vector rejects on, off, and every NumPy path off decide
    alike, with the same per-node statuses in the same order."""
    rng = random.Random(27)
    scheds = [Scheduler(parse_config({}), client=real_api, informers=real_api, clock=real_api.clock,
                        rng=random.Random(3)) for _ in range(3)]
    await _spread_cluster(real_api, rng, 120, 90)
    for s in scheds:
        s.cache.update_snapshot(s.snapshot)
    got, failures = _decide_three_ways(scheds, [_spread_pod(f"new-{i}", rng) for i in range(160)])
    assert len(got) - len(failures) > 100
