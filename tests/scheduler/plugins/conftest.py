"""A miniature framework to drive plugins exactly as the runtime does (PreFilter -> Filter;
PreScore -> Score -> NormalizeScore), plus a fake snapshot/handle/client. Exposed as the `fw`
fixture because test modules cannot import each other under --import-mode=importlib."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from minik3s.api.errors import NotFoundError
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    Code,
    FilterPlugin,
    NodeScore,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from scheduler.framework.types import ImageStateSummary, NodeInfo, PodInfo


class Snapshot:
    def __init__(self, nodes: Iterable[dict[str, Any]], pods: Iterable[dict[str, Any]] = ()) -> None:
        self._infos: dict[str, NodeInfo] = {}
        for n in nodes:
            ni = NodeInfo(n)
            self._infos[ni.name] = ni
        for p in pods:
            nn = (p.get("spec") or {}).get("nodeName")
            if nn in self._infos:
                self._infos[nn].add_pod(PodInfo(p))
        counts: dict[str, int] = {}
        sizes: dict[str, int] = {}
        for ni in self._infos.values():
            for img in ((ni.node or {}).get("status") or {}).get("images") or ():
                for name in img.get("names") or ():
                    counts[name] = counts.get(name, 0) + 1
                    sizes.setdefault(name, int(img.get("sizeBytes") or 0))
        for ni in self._infos.values():
            ni.image_states = {}
            for img in ((ni.node or {}).get("status") or {}).get("images") or ():
                for name in img.get("names") or ():
                    ni.image_states[name] = ImageStateSummary(sizes[name], counts[name])

    def node_infos(self) -> list[NodeInfo]:
        return list(self._infos.values())

    def get(self, name: str) -> NodeInfo | None:
        return self._infos.get(name)

    def have_pods_with_affinity(self) -> list[NodeInfo]:
        return [n for n in self._infos.values() if n.pods_with_affinity]

    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        return [n for n in self._infos.values() if n.pods_with_required_anti_affinity]


class Store:
    def __init__(self, objs: Iterable[dict[str, Any]] = ()) -> None:
        self._d: dict[str, dict[str, Any]] = {}
        for o in objs:
            m = o.get("metadata") or {}
            key = f"{m['namespace']}/{m['name']}" if m.get("namespace") else m["name"]
            self._d[key] = o

    def get(self, key: str) -> dict[str, Any] | None:
        return self._d.get(key)

    def list(self) -> list[dict[str, Any]]:
        return list(self._d.values())


class Informers:
    """`informer(res).store` over fixed objects, keyed by the resource's plural name."""

    def __init__(self, objects: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self.objects = objects or {}

    def informer(self, res: Any, namespace: str | None = None, **_: Any) -> Any:
        class _Inf:
            pass

        inf = _Inf()
        inf.store = Store(self.objects.get(res.resource, []))  # type: ignore[attr-defined]
        return inf


class FakeClient:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.missing: set[str] = set()
        self.fail_bind: Exception | None = None

    async def bind(self, namespace: str, name: str, node_name: str, *, uid: str | None = None) -> None:
        self.calls.append(("bind", namespace, name, node_name, uid))
        if self.fail_bind is not None:
            raise self.fail_bind

    async def patch(
        self, res: Any, name: str, patch: Any, namespace: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        self.calls.append(("patch", res.resource, namespace, name, patch, kw.get("subresource")))
        if f"{namespace}/{name}" in self.missing:
            raise NotFoundError(f'pods "{name}" not found')
        return {}

    async def delete(self, res: Any, name: str, namespace: str | None = None, **kw: Any) -> dict[str, Any]:
        self.calls.append(("delete", res.resource, namespace, name))
        if f"{namespace}/{name}" in self.missing:
            raise NotFoundError(f'pods "{name}" not found')
        return {}


class Handle:
    """Framework handle with a filter pipeline, used by DefaultPreemption's dry run."""

    def __init__(
        self,
        snapshot: Snapshot | None = None,
        *,
        informers: Informers | None = None,
        client: FakeClient | None = None,
        filter_plugins: Sequence[Any] = (),
        nominated: dict[str, list[PodInfo]] | None = None,
    ) -> None:
        self._snapshot = snapshot
        self.informers = informers
        self.client = client or FakeClient()
        self.filter_plugins = list(filter_plugins)
        self.nominated = nominated or {}
        self.waiting: dict[str, Any] = {}

    def snapshot(self) -> Snapshot | None:
        return self._snapshot

    def get_waiting_pod(self, uid: str) -> Any | None:
        return self.waiting.get(uid)

    def iterate_waiting_pods(self) -> list[Any]:
        return list(self.waiting.values())

    def nominated_pods_for_node(self, node: str) -> list[PodInfo]:
        return self.nominated.get(node, [])

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status:
        for p in self.filter_plugins:
            if p.NAME in state.skip_filter_plugins:
                continue
            st = p.filter(state, pod, node)
            if not st.is_success():
                return st
        return Status()

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, victim: PodInfo, node: NodeInfo
    ) -> Status:
        for p in self.filter_plugins:
            if (
                isinstance(p, PreFilterPlugin)
                and p.has_pre_filter_extensions()
                and p.NAME not in state.skip_filter_plugins
            ):
                st = p.remove_pod(state, pod, victim, node)
                if not st.is_success():
                    return st
        return Status()

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, victim: PodInfo, node: NodeInfo
    ) -> Status:
        for p in self.filter_plugins:
            if (
                isinstance(p, PreFilterPlugin)
                and p.has_pre_filter_extensions()
                and p.NAME not in state.skip_filter_plugins
            ):
                st = p.add_pod(state, pod, victim, node)
                if not st.is_success():
                    return st
        return Status()


def run_pre_filters(
    plugins: Sequence[Any], state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
) -> tuple[PreFilterResult | None, Status]:
    result: PreFilterResult | None = None
    for p in plugins:
        if not isinstance(p, PreFilterPlugin):
            continue
        r, st = p.pre_filter(state, pod, nodes)
        if st.is_skip():
            state.skip_filter_plugins.add(p.NAME)
            continue
        if not st.is_success():
            return None, st
        if r is not None:
            result = r if result is None else result.merge(r)
    return result, Status()


def filter_nodes(
    plugins: Sequence[Any] | Any,
    pod: dict[str, Any],
    snapshot: Snapshot,
) -> tuple[dict[str, Status], PreFilterResult | None, Status, CycleState]:
    """PreFilter then Filter every node (pipeline of plugins); returns per-node statuses."""
    plugins = list(plugins) if isinstance(plugins, (list, tuple)) else [plugins]
    state = CycleState()
    pi = PodInfo(pod)
    nodes = snapshot.node_infos()
    result, st = run_pre_filters(plugins, state, pi, nodes)
    out: dict[str, Status] = {}
    if not st.is_success():
        return {n.name: st for n in nodes}, result, st, state
    for n in nodes:
        out[n.name] = Status()
        for p in plugins:
            if not isinstance(p, FilterPlugin) or p.NAME in state.skip_filter_plugins:
                continue
            s = p.filter(state, pi, n)
            if not s.is_success():
                out[n.name] = s
                break
    return out, result, st, state


def score_nodes(
    plugin: Any, pod: dict[str, Any], snapshot: Snapshot, feasible: Sequence[str] | None = None
) -> dict[str, int]:
    """PreScore -> Score -> NormalizeScore over the feasible nodes (default: all)."""
    state = CycleState()
    pi = PodInfo(pod)
    nodes = [n for n in snapshot.node_infos() if feasible is None or n.name in feasible]
    if isinstance(plugin, PreScorePlugin):
        st = plugin.pre_score(state, pi, nodes)
        if st.is_skip():
            return {n.name: 0 for n in nodes}
        assert st.is_success(), st
    assert isinstance(plugin, ScorePlugin)
    scores = []
    for n in nodes:
        v, st = plugin.score(state, pi, n)
        assert st.is_success(), st
        scores.append(NodeScore(n.name, v))
    st = plugin.normalize_score(state, pi, scores)
    assert st.is_success(), st
    return {s.name: s.score for s in scores}


def codes(statuses: dict[str, Status]) -> dict[str, tuple[Code, list[str]]]:
    return {k: (v.code, list(v.reasons)) for k, v in statuses.items()}


class _Fw:
    Snapshot = Snapshot
    Handle = Handle
    Informers = Informers
    FakeClient = FakeClient
    filter_nodes = staticmethod(filter_nodes)
    score_nodes = staticmethod(score_nodes)
    codes = staticmethod(codes)
    ok = (Code.SUCCESS, [])


@pytest.fixture
def fw() -> type[_Fw]:
    return _Fw
