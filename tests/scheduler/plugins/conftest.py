"""Drive plugins through the real scheduler: its framework runtime, cache and snapshot.

`fw.Snapshot(nodes, pods, informers=..., nominated=...)` describes a cluster; `fw.run(plugins,
cluster)` builds a real `Scheduler` whose one profile enables exactly the plugins under test
(plus PrioritySort and DefaultBinder, which neither filter nor score) through the configuration
path (multiPoint with `*` disabled, pluginConfig args, default score weights), so the framework,
the plugin instances and their args come from the in-tree registry as in production. Nodes and
pods go into the scheduler's `Cache`, which builds the real `Snapshot` (image states, affinity
lists, change journal); nominated pods go into the queue's nominator.

`run.filter(pod)` is the scheduler's sequence: PreFilter (Skip marks the Filter skipped, a
PreFilterResult narrows the nodes; nodes outside it get the scheduler's absent-node status),
then Filter per node through `run_filter_with_nominated_pods` (nominated pods of equal or higher
priority added as the runtime does), and, when nothing is nominated, the same decision again
through the scheduler's batched Filter path, which must agree. `run.score(pod)` runs PreFilter
and Filter first, then PreScore, Score and NormalizeScore on the feasible nodes through
`run_score` (batch scorers and raw normalizers included), and checks the plain per-node path
gives the same scores. Listers (`informers=`) are fixed object lists, as upstream's plugin tests
use fake listers; the default client records the calls plugins make (preemption's patch/delete);
`client=real_api` (tests/conftest.py) gives the plugins the real in-process API instead.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

import scheduler.scheduler as sched_mod
from minik3s.client.store import Store, object_key
from minik3s.utils.clock import FakeClock
from scheduler.config import DEFAULT_MULTI_POINT, parse_config
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import Code, PreFilterResult, Status
from scheduler.framework.runtime import Framework
from scheduler.framework.types import PodInfo
from scheduler.scheduler import Scheduler

DEFAULT_WEIGHTS = dict(DEFAULT_MULTI_POINT)
HELPERS = ("PrioritySort", "DefaultBinder")


class Lister:
    """An informer's read side over fixed objects (what plugins read through `handle.informers`)."""

    def __init__(self, objs: Iterable[dict[str, Any]] = ()) -> None:
        self.store = Store()
        for o in objs:
            self.store.put(object_key(o), o)
        self.has_synced = True

    def add_handler(self, **_: Any) -> None:
        return None

    async def wait_for_sync(self) -> None:
        return None


class Listers:
    """`informer(res)` -> a Lister over the objects given for `res.resource` (plural name)."""

    def __init__(self, objects: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self.objects = objects or {}

    def informer(self, res: Any, namespace: str | None = None, **_: Any) -> Lister:
        return Lister(self.objects.get(res.resource, []))


class RecordingClient:
    """Records the API writes preemption makes in PostFilter (as upstream's tests record a fake
    clientset's actions)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    async def patch(self, res: Any, name: str, patch: Any, namespace: str | None = None, **kw: Any) -> dict[str, Any]:
        self.calls.append(("patch", res.resource, namespace, name, patch, kw.get("subresource")))
        return {}

    async def delete(self, res: Any, name: str, namespace: str | None = None, **kw: Any) -> dict[str, Any]:
        self.calls.append(("delete", res.resource, namespace, name))
        return {}


class Cluster:
    """What the scheduler's informers would have delivered: nodes, pods, listers, nominations."""

    def __init__(self, nodes: Iterable[dict[str, Any]], pods: Iterable[dict[str, Any]] = (), *,
                 informers: dict[str, list[dict[str, Any]]] | None = None,
                 nominated: dict[str, list[PodInfo]] | None = None) -> None:
        self.nodes = list(nodes)
        self.pods = list(pods)
        self.informers = informers or {}
        self.nominated = nominated or {}


PluginSpec = type | tuple[type, dict[str, Any] | None]


def _entries(plugins: PluginSpec | Sequence[PluginSpec]) -> list[tuple[str, dict[str, Any] | None]]:
    items: Sequence[PluginSpec] = plugins if isinstance(plugins, list) else [plugins]
    out: list[tuple[str, dict[str, Any] | None]] = []
    for it in items:
        cls, args = it if isinstance(it, tuple) else (it, None)
        out.append((cls.NAME, args))
    return out


class PluginRun:
    """A real Scheduler (one profile: the plugins under test) over one cluster."""

    def __init__(self, plugins: PluginSpec | Sequence[PluginSpec], cluster: Cluster, *,
                 client: Any = None, clock: FakeClock | None = None) -> None:
        entries = _entries(plugins)
        self.names = [n for n, _ in entries]
        enabled = [{"name": n, **({"weight": DEFAULT_WEIGHTS[n]} if DEFAULT_WEIGHTS.get(n) else {})}
                   for n in self.names]
        enabled += [{"name": n} for n in HELPERS if n not in self.names]
        cfg = parse_config({"profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}},
            "pluginConfig": [{"name": n, "args": a} for n, a in entries if a is not None],
        }]})
        self.client = client or RecordingClient()
        objects = dict(cluster.informers)
        # the pod informer holds every pod of the cluster, nominated ones included (the queue's
        # nominator drops nominations of pods its informer does not list, as upstream's)
        objects.setdefault("pods", [*cluster.pods, *(pi.pod for pis in cluster.nominated.values() for pi in pis)])
        self.scheduler = Scheduler(cfg, client=self.client, informers=Listers(objects),
                                   clock=clock or FakeClock(), rng=random.Random(0))
        self.framework: Framework = self.scheduler.frameworks["default-scheduler"]
        for n in cluster.nodes:
            self.scheduler.cache.add_node(n)
        for p in cluster.pods:
            if (p.get("spec") or {}).get("nodeName"):
                self.scheduler.cache.add_pod(p)
        for node, pis in cluster.nominated.items():
            for pi in pis:
                self.scheduler.queue.nominator.add(pi, node)
        self.scheduler.cache.update_snapshot(self.scheduler.snapshot)

    def plugin(self, name: str) -> Any:
        return self.framework.plugins[name]

    @property
    def waiting_pods(self) -> dict[str, Any]:
        return self.scheduler.waiting_pods

    # ------------------------------------------------------------------ PreFilter -> Filter
    def filter(self, pod: dict[str, Any]) -> tuple[dict[str, Status], PreFilterResult | None, Status, CycleState]:
        fwk = self.framework
        nodes = self.scheduler.snapshot.node_info_list
        state = CycleState()
        pi = PodInfo(pod)
        result, st, narrowing = fwk.run_pre_filter(state, pi, nodes)
        if not st.is_success():
            return {n.name: st for n in nodes}, result, st, state
        candidates = nodes
        absent: Status | None = None
        if result is not None and result.node_names is not None:
            candidates = [n for n in nodes if n.name in result.node_names]
            absent = Status.unresolvable(f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]")
        statuses: dict[str, Status] = {}
        for ni in nodes:
            if absent is not None and ni not in candidates:
                statuses[ni.name] = absent
                continue
            nst = fwk.run_filter_with_nominated_pods(state, pi, ni)
            statuses[ni.name] = nst if nst is not None else Status()
        if not len(self.scheduler.queue.nominator) and candidates:
            self._check_batched_filter(state, pi, candidates, statuses)
        return statuses, result, st, state

    def _check_batched_filter(self, state: CycleState, pi: PodInfo, candidates: list[Any],
                              statuses: dict[str, Status]) -> None:
        try:
            feasible, failed, _ = sched_mod._filter_batched(
                self.framework.active_filter_plugins(state), state, pi, candidates, len(candidates))
        except sched_mod._SlowPath:  # Skip/Error statuses: the scheduler takes the per-node path too
            return
        batched = {ni.name: (Code.SUCCESS, []) for ni in feasible}
        batched.update({name: (s.code, list(s.reasons)) for name, s in failed})
        plain = {ni.name: (statuses[ni.name].code, list(statuses[ni.name].reasons)) for ni in candidates}
        assert batched == plain, "the scheduler's batched Filter path decided differently"

    # ------------------------------------------------------------------ PreScore -> Score -> NormalizeScore
    def score(self, pod: dict[str, Any], feasible: Sequence[str] | None = None) -> dict[str, int]:
        fast = self._score(pod, feasible)
        fwk = self.framework
        saved = (fwk._batch_scorers, fwk._raw_normalizers)
        fwk._batch_scorers, fwk._raw_normalizers = set(), set()
        try:
            plain = self._score(pod, feasible)
        finally:
            fwk._batch_scorers, fwk._raw_normalizers = saved
        assert fast == plain, "batch Score / raw normalize paths differ from the per-node path"
        return fast

    def _score(self, pod: dict[str, Any], feasible: Sequence[str] | None) -> dict[str, int]:
        fwk = self.framework
        statuses, _, st, state = self.filter(pod)
        assert st.is_success(), st
        pi = PodInfo(pod)
        nodes = [ni for ni in self.scheduler.snapshot.node_info_list
                 if statuses[ni.name].is_success() and (feasible is None or ni.name in feasible)]
        st = fwk.run_pre_score(state, pi, nodes)
        assert st.is_success(), st
        record: dict[str, Any] = {}
        _, st = fwk.run_score(state, pi, nodes, record=record)
        assert st.is_success(), st
        scorers = [p.name() for p in fwk.score_plugins if p.name() in self.names]
        assert len(scorers) == 1, f"score() needs exactly one score plugin under test, got {scorers}"
        got = record.get(scorers[0])
        if got is None:  # PreScore returned Skip: the plugin does not score this pod
            return {ni.name: 0 for ni in nodes}
        return {ni.name: v for ni, v in zip(nodes, got["normalized"], strict=True)}


def filter_nodes(plugins: PluginSpec | Sequence[PluginSpec], pod: dict[str, Any], cluster: Cluster
                 ) -> tuple[dict[str, Status], PreFilterResult | None, Status, CycleState]:
    """PreFilter then Filter every node through the real scheduler; per-node statuses."""
    return PluginRun(plugins, cluster).filter(pod)


def score_nodes(plugin: PluginSpec, pod: dict[str, Any], cluster: Cluster,
                feasible: Sequence[str] | None = None) -> dict[str, int]:
    """Normalized scores of the plugin on the feasible nodes (optionally only `feasible`)."""
    return PluginRun(plugin, cluster).score(pod, feasible)


def codes(statuses: dict[str, Status]) -> dict[str, tuple[Code, list[str]]]:
    return {k: (v.code, list(v.reasons)) for k, v in statuses.items()}


class _Fw:
    Snapshot = Cluster
    Run = PluginRun
    RecordingClient = RecordingClient
    filter_nodes = staticmethod(filter_nodes)
    score_nodes = staticmethod(score_nodes)
    codes = staticmethod(codes)
    ok = (Code.SUCCESS, [])


@pytest.fixture
def fw() -> type[_Fw]:
    return _Fw

