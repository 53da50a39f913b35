"""The scheduler's fast paths decide exactly as the plain per-node paths do.

Fast paths under test: `FilterPlugin.filter_nodes` with the chunked `_filter_batched` walk,
`ScorePlugin.score_nodes`, `normalize_raw_scores`, and PodTopologySpread's domain counts kept
across cycles through the snapshot's change journal. Each story schedules the same pod stream
twice on identical clusters with the same random seed, once with every fast path switched off,
and compares every decision (chosen node or the FailedScheduling message) and the round-robin
start index."""

from __future__ import annotations

import random
from typing import Any

import pytest

import scheduler.scheduler as sched_mod
from minik3s.testing.builders import make_node, make_pod
from scheduler.backend.snapshot import Snapshot
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import NodeScore, ScorePlugin
from scheduler.framework.types import PodInfo
from scheduler.plugins.helpers import default_normalize_raw, default_normalize_score
from scheduler.scheduler import FitError, Scheduler, SchedulingError, _assumed_pod_info

ZONE = "topology.kubernetes.io/zone"


def _cluster(n: int, rng: random.Random) -> list[dict[str, Any]]:
    nodes = []
    for i in range(n):
        b = make_node(f"n{i:03d}").labels({ZONE: f"z{i % 3}", "kubernetes.io/hostname": f"n{i:03d}"})
        b = b.capacity(cpu=rng.choice(["1", "2", "4"]), memory=rng.choice(["2Gi", "4Gi"]),
                       pods=str(rng.choice([3, 110])))
        r = rng.random()
        if r < 0.1:
            b = b.taints(("dedicated", "db", "NoSchedule"))
        elif r < 0.2:
            b = b.taints(("soft", "", "PreferNoSchedule"))
        elif r < 0.25:
            b = b.unschedulable()
        if i % 7 == 0:
            b = b.labels(disk="ssd")
        nodes.append(b.obj())
    return nodes


def _pods(kind: str, count: int, rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        b = make_pod(f"{kind}-{i:03d}").req(cpu=rng.choice(["100m", "300m", "900m"]),
                                             memory=rng.choice(["128Mi", "700Mi"]))
        if kind == "spread":
            b = b.labels(app="web").spread_constraint(1, ZONE, selector={"matchLabels": {"app": "web"}})
            if i % 4 == 0:
                b = b.spread_constraint(2, "kubernetes.io/hostname", "ScheduleAnyway",
                                        selector={"matchLabels": {"app": "web"}})
        elif kind == "anti":
            b = b.labels(color="green").pod_anti_affinity("kubernetes.io/hostname",
                                                          {"matchLabels": {"color": "green"}})
        elif kind == "affinity":
            r = rng.random()
            if r < 0.3:
                b = b.labels(app="db")
            elif r < 0.6:
                b = b.labels(app="web").pod_affinity(ZONE, {"matchLabels": {"app": "db"}})
            else:
                b = b.labels(app="cache").pod_anti_affinity(ZONE, {"matchLabels": {"app": "web"}},
                                                            namespaces=["default", "other"])
        elif kind == "scoring":
            # hostname anti-affinity everywhere, plus existing pods whose terms score for others
            b = b.labels(color="green", app=rng.choice(["web", "db"])).pod_anti_affinity(
                "kubernetes.io/hostname", {"matchLabels": {"color": "green"}})
            r = rng.random()
            if r < 0.2:
                b = b.pod_affinity(ZONE, {"matchLabels": {"app": "db"}}, weight=rng.choice([1, 50]))
            elif r < 0.4:
                b = b.pod_anti_affinity(ZONE, {"matchLabels": {"app": "web"}}, weight=30)
        elif kind == "mixed":
            r = rng.random()
            if r < 0.3:
                b = b.toleration("dedicated", "db", "NoSchedule")
            elif r < 0.5:
                b = b.node_affinity_in("disk", ["ssd"])
            elif r < 0.7:
                b = b.req({"example.com/gpu": "1"})
        out.append(b.obj())
    return out


def _run(api: Any, nodes: list[dict[str, Any]], pods: list[dict[str, Any]], *, fast: bool,
         monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    # the cycle reads only the scheduler's cache: the nodes and pods go straight into it (the
    # real in-process API only provides the informers the Scheduler registers with)
    s = Scheduler(None, client=api, informers=api, rng=random.Random(7))
    fw = next(iter(s.frameworks.values()))
    with monkeypatch.context() as m:
        if not fast:
            def no_batch(*_: Any, **__: Any) -> Any:
                raise sched_mod._SlowPath

            m.setattr(sched_mod, "_filter_batched", no_batch)
            m.setattr(Snapshot, "record_changes", lambda self, names, *, structural: None)
            fw._batch_scorers = set()
            fw._raw_normalizers = set()
        for n in nodes:
            s.cache.add_node(n)
        out: list[tuple[str, int]] = []
        for p in pods:
            pi = PodInfo(p)
            s.cache.update_snapshot(s.snapshot)
            try:
                r = s.schedule_pod(fw, CycleState(), pi)
            except (FitError, SchedulingError) as e:
                out.append((f"error: {e}", s.next_start_node_index))
                continue
            s.cache.assume_pod(_assumed_pod_info(pi, r.suggested_host))
            out.append((r.suggested_host, s.next_start_node_index))
            if len(out) % 9 == 0:  # a bound pod goes away: counts must drop again
                victim = out[-5][0]
                for q in list(s.cache.get_node_info(victim).pods if not victim.startswith("error") else ()):
                    s.cache.forget_pod(q)
                    break
    return out


@pytest.mark.parametrize(
    ("kind", "n_nodes", "n_pods"),
    [
        pytest.param("basic", 150, 120, id="default-pods-fill-mixed-size-nodes-identically"),
        pytest.param("mixed", 150, 120, id="tolerations-node-affinity-and-extended-resources-decide-identically"),
        pytest.param("spread", 150, 120, id="topology-spread-with-remembered-domain-counts-decides-identically"),
        pytest.param("anti", 60, 80, id="required-anti-affinity-until-nodes-run-out-decides-identically"),
        pytest.param("scoring", 90, 80, id="hostname-anti-affinity-with-remembered-scoring-pods-decides-identically"),
        pytest.param("affinity", 90, 90, id="zone-affinity-and-anti-affinity-with-remembered-counts-decide-identically"),
    ],
)
async def test_fast_paths_decide_like_per_node_paths(kind: str, n_nodes: int, n_pods: int, real_api: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(hash(kind) & 0xFFFF)
    nodes = _cluster(n_nodes, rng)
    pods = _pods(kind, n_pods, rng)
    fast = _run(real_api, nodes, pods, fast=True, monkeypatch=monkeypatch)
    slow = _run(real_api, nodes, pods, fast=False, monkeypatch=monkeypatch)
    assert fast == slow
    assert any(not host.startswith("error") for host, _ in fast)


async def test_spread_counts_follow_node_relabel_and_pod_removal(real_api: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A node moving to a new zone and pods leaving are seen by the remembered counts."""
    s = Scheduler(None, client=real_api, informers=real_api, rng=random.Random(1))
    fw = next(iter(s.frameworks.values()))
    nodes = [make_node(f"n{i}").labels({ZONE: f"z{i % 2}"}).capacity(cpu="8", memory="16Gi").obj()
             for i in range(4)]
    for n in nodes:
        s.cache.add_node(n)
    placed = []
    for i in range(6):
        p = make_pod(f"p{i}").labels(app="a").spread_constraint(
            1, ZONE, selector={"matchLabels": {"app": "a"}}).obj()
        pi = PodInfo(p)
        s.cache.update_snapshot(s.snapshot)
        r = s.schedule_pod(fw, CycleState(), pi)
        a = _assumed_pod_info(pi, r.suggested_host)
        s.cache.assume_pod(a)
        placed.append(a)
    relabeled = make_node("n0").labels({ZONE: "z9"}).capacity(cpu="8", memory="16Gi").obj()
    s.cache.update_node(nodes[0], relabeled)
    s.cache.forget_pod(placed[1])
    s.cache.update_snapshot(s.snapshot)
    probe = PodInfo(make_pod("probe").labels(app="a").spread_constraint(
        1, ZONE, selector={"matchLabels": {"app": "a"}}).obj())
    pl = fw.plugins["PodTopologySpread"]
    st = CycleState()
    pl.pre_filter(st, probe, s.snapshot.node_info_list)
    remembered = st.read("PreFilterPodTopologySpread").counts
    monkeypatch.setattr(Snapshot, "nodes_changed_since", lambda self, seq: None)
    st2 = CycleState()
    pl.pre_filter(st2, probe, s.snapshot.node_info_list)
    assert remembered == st2.read("PreFilterPodTopologySpread").counts
    assert "z9" in remembered[0]


@pytest.mark.parametrize(
    ("raw", "reverse"),
    [
        pytest.param([2, 11, 4], False, id="scaled-by-maximum"),
        pytest.param([0, 1, 2], True, id="reversed-taint-counts"),
        pytest.param([0, 0, 0], True, id="all-zero-reversed-is-all-max"),
        pytest.param([0, 0], False, id="all-zero-unchanged"),
    ],
)
def test_raw_normalize_equals_node_score_normalize(raw: list[int], reverse: bool) -> None:
    scores = [NodeScore(f"n{i}", v) for i, v in enumerate(raw)]
    default_normalize_score(scores, reverse=reverse)
    assert default_normalize_raw(raw, reverse=reverse) == [s.score for s in scores]


async def test_every_default_score_plugin_batch_matches_per_node(real_api: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    nodes = _cluster(40, rng)
    s = Scheduler(None, client=real_api, informers=real_api, rng=random.Random(1))
    fw = next(iter(s.frameworks.values()))
    for n in nodes:
        s.cache.add_node(n)
    for p in _pods("basic", 30, rng):
        pi = PodInfo(p)
        s.cache.update_snapshot(s.snapshot)
        r = s.schedule_pod(fw, CycleState(), pi)
        s.cache.assume_pod(_assumed_pod_info(pi, r.suggested_host))
    s.cache.update_snapshot(s.snapshot)
    infos = s.snapshot.node_info_list
    pod = PodInfo(make_pod("x").req(cpu="200m", memory="1Gi").toleration("soft", "", "PreferNoSchedule")
                  .images("nginx").obj())
    state = CycleState()
    fw.run_pre_filter(state, pod, infos)
    fw.run_pre_score(state, pod, infos)
    checked = 0
    for pl in fw.score_plugins:
        if pl.name() in state.skip_score_plugins or type(pl).score_nodes is ScorePlugin.score_nodes:
            continue
        batch, st = pl.score_nodes(state, pod, infos)
        assert st.is_success()
        assert batch == [pl.score(state, pod, n)[0] for n in infos], pl.name()
        checked += 1
    for pl in fw.filter_plugins:
        if pl.name() in state.skip_filter_plugins:
            continue
        got = [None if st is None else (st.code, st.reasons) for st in pl.filter_nodes(state, pod, infos)]
        want = [None if not (st := pl.filter(state, pod, n)).code else (st.code, st.reasons) for n in infos]
        assert got == want, pl.name()
    assert checked >= 4


@pytest.mark.parametrize(
    ("journal", "since", "want"),
    [
        pytest.param([(["n1"], False), (["n2", "n1"], False)], 0, {"n1", "n2"}, id="union-of-later-refreshes"),
        pytest.param([(["n1"], False), (["n2"], False)], 1, {"n2"}, id="only-refreshes-after-seq"),
        pytest.param([(["n1"], False)], 1, set(), id="nothing-new"),
        pytest.param([(["n1"], False), ([], True)], 1, None, id="node-added-or-removed-forces-rebuild"),
        pytest.param([(["n1"], False)], 5, None, id="seq-from-the-future-is-unknown"),
    ],
)
def test_snapshot_change_journal(journal: list[tuple[list[str], bool]], since: int,
                                 want: set[str] | None) -> None:
    snap = Snapshot()
    for names, structural in journal:
        snap.record_changes(names, structural=structural)
    assert snap.nodes_changed_since(since) == want


def test_hand_built_snapshot_never_answers_the_journal() -> None:
    snap = Snapshot.from_objects([make_node("n1").obj()])
    assert snap.nodes_changed_since(0) is None
