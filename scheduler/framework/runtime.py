"""The framework runtime: runs one profile's plugins at every extension point (layer L4).

Upstream: pkg/scheduler/framework/runtime/framework.go. A `Framework` is built from a registry
(plugin name -> class), the profile's plugin sets (after multiPoint expansion, see
`expand_plugins`) and the `pluginConfig` args. Plugins are instantiated once per profile as
`cls(args, handle)` and shared by every extension point they implement.

Data flow per pod: run_pre_filter -> run_filter (per node, first failure wins) ->
run_post_filter on failure -> run_pre_score -> run_score (raw -> normalize -> x weight -> sum)
-> run_reserve -> run_permit; then in the binding task wait_on_permit -> run_pre_bind ->
run_bind -> run_post_bind. The runtime is the only place that catches broadly: a plugin that
raises, or returns None, becomes `Status(ERROR)` naming the plugin.

Weighted total example: TaintToleration normalized 100 x weight 3 + NodeResourcesFit 40 x 1
= 340 for that node.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from minik3s.api.types import JsonDict
from minik3s.utils.clock import Clock
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    ActionType,
    BindPlugin,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    GangDemand,
    GangDemandPlugin,
    NodeScore,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    Status,
)
from scheduler.framework.node_arrays import IntArray, NodeArrays
from scheduler.framework.types import NodeInfo, PodInfo

logger = logging.getLogger(__name__)
# upstream's wrapping of a Score / NormalizeScore failure: "running Score plugins: plugin %q failed with: %w"
_SCORE_FAILED = "running Score plugins: plugin"
_NORMALIZE_FAILED = "running Normalize on Score plugins: plugin"

# Upstream maxTimeout for Permit WAIT.
MAX_PERMIT_TIMEOUT = 15 * 60.0
# Upstream MaxTotalScore is MaxInt64; we only guard against absurd weights.
MAX_TOTAL_SCORE = 2**63 - 1

_MIN_REDUCE = np.minimum.reduce
_MAX_REDUCE = np.maximum.reduce
_INT64 = np.dtype(np.int64)
_UINT64 = np.dtype(np.uint64)

# extension point config name -> plugin base class
EXTENSION_POINTS: dict[str, type[Plugin]] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": PostBindPlugin,
}

WILDCARD_EVENT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "WildCardEvent")


class FrameworkError(ValueError):
    """The profile cannot be turned into a framework (unknown plugin, duplicate, no binder...)."""


@dataclass(slots=True)
class PluginEntry:
    name: str
    weight: int = 0


@dataclass(slots=True)
class PluginSetSpec:
    enabled: list[PluginEntry] = field(default_factory=list)
    disabled: list[PluginEntry] = field(default_factory=list)


@dataclass(slots=True)
class ProfileSpec:
    """A profile in runtime terms: extension point name (config spelling, plus "multiPoint")
    -> PluginSetSpec, pluginConfig args (raw dicts) and the profile's percentageOfNodesToScore."""

    scheduler_name: str = "default-scheduler"
    plugins: dict[str, PluginSetSpec] = field(default_factory=dict)
    plugin_args: dict[str, JsonDict] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None


def expand_plugins(spec: ProfileSpec, registry: Mapping[str, type[Plugin]]) -> dict[str, list[PluginEntry]]:
    """Per extension point, the ordered enabled plugins after multiPoint expansion (upstream
    expandMultiPointPlugins): explicitly configured plugins that override a multiPoint one
    first (in their configured order), then the multiPoint plugins, then the remaining explicit
    ones. A plugin disabled at a point (or `*`) is not expanded there. Score weights (upstream
    getScoreWeights): a plugin listed at `score` takes that entry's weight, even when it is 0
    (then 1: the multiPoint weight does not fill it in); a multiPoint-only plugin its multiPoint
    weight, else 1."""
    multi = spec.plugins.get("multiPoint", PluginSetSpec())
    out: dict[str, list[PluginEntry]] = {}
    for ep, base in EXTENSION_POINTS.items():
        ps = spec.plugins.get(ep, PluginSetSpec())
        explicit: dict[str, PluginEntry] = {}
        for e in ps.enabled:
            if e.name not in registry:
                raise FrameworkError(f'{ep} plugin "{e.name}" does not exist')
            if e.name in explicit:
                raise FrameworkError(f'plugin "{e.name}" already registered as "{ep}"')
            if not issubclass(registry[e.name], base):
                raise FrameworkError(f'plugin "{e.name}" does not extend {ep} plugin')
            explicit[e.name] = e
        disabled = {d.name for d in ps.disabled}
        if "*" in disabled:
            out[ep] = list(explicit.values())
            continue
        overrides: list[str] = []
        multi_enabled: list[PluginEntry] = []
        for e in multi.enabled:
            cls = registry.get(e.name)
            if cls is None:
                raise FrameworkError(f'multiPoint plugin "{e.name}" does not exist')
            if not issubclass(cls, base) or e.name in disabled:
                continue
            if e.name in explicit:
                overrides.append(e.name)
                continue
            if any(m.name == e.name for m in multi_enabled):
                raise FrameworkError(f'plugin "{e.name}" already registered as "{ep}"')
            multi_enabled.append(e)
        ordered = [explicit[n] for n in explicit if n in overrides]
        ordered += multi_enabled
        ordered += [explicit[n] for n in explicit if n not in overrides]
        out[ep] = [PluginEntry(e.name, (e.weight or 1) if ep == "score" else 0) for e in ordered]
    return out


class WaitingPod:
    """A pod parked at Permit (upstream waitingPod). Each waiting plugin has its own timeout;
    the pod is allowed when every plugin allowed it, rejected as soon as one rejects."""

    __slots__ = ("pod_info", "_pending", "_future", "_timers")

    def __init__(self, pod_info: PodInfo, plugin_timeouts: dict[str, float]) -> None:
        self.pod_info = pod_info
        self._pending: dict[str, float] = dict(plugin_timeouts)
        self._future: asyncio.Future[Status] = asyncio.get_running_loop().create_future()
        self._timers: list[asyncio.Task[None]] = []

    @property
    def pod(self) -> JsonDict:
        return self.pod_info.pod

    def pending_plugins(self) -> list[str]:
        return sorted(self._pending)

    def allow(self, plugin: str) -> None:
        self._pending.pop(plugin, None)
        if not self._pending and not self._future.done():
            self._future.set_result(Status.success())
            self._cancel_timers()

    def reject(self, plugin: str, msg: str) -> None:
        if not self._future.done():
            self._future.set_result(Status.unschedulable(msg, plugin=plugin))
            self._cancel_timers()

    def _cancel_timers(self) -> None:
        current = asyncio.current_task()
        for t in self._timers:
            if t is not current:
                t.cancel()

    async def wait(self) -> Status:
        return await self._future


class Framework:
    """One profile's plugins plus the `Handle` they see (upstream frameworkImpl)."""

    def __init__(
        self,
        spec: ProfileSpec,
        registry: Mapping[str, type[Plugin]],
        *,
        client: Any = None,
        informers: Any = None,
        snapshot: Any = None,
        waiting_pods: dict[str, WaitingPod] | None = None,
        nominator: Any = None,
        clock: Clock | None = None,
        rng: Any = None,
        parse_args: Callable[[type[Plugin], JsonDict | None], Any] | None = None,
    ) -> None:
        self.profile_name = spec.scheduler_name
        self.percentage_of_nodes_to_score = spec.percentage_of_nodes_to_score
        self._client = client
        self._informers = informers
        self._snapshot = snapshot
        self._waiting_pods: dict[str, WaitingPod] = waiting_pods if waiting_pods is not None else {}
        self.nominator = nominator
        self.clock = clock or Clock()
        self.rng = rng
        # set by the scheduler that owns this framework (None when driven alone, e.g. in tests):
        # where plugins' background tasks run, how pods are requeued, how events are recorded
        self.spawner: Callable[[Any, str], None] | None = None
        self.pod_activator: Callable[..., None] | None = None
        self.event_recorder: Callable[..., None] | None = None
        self._timer_tasks: set[asyncio.Task[None]] = set()
        expanded = expand_plugins(spec, registry)
        needed: list[str] = []
        for entries in expanded.values():
            for e in entries:
                if e.name not in needed:
                    needed.append(e.name)
        self.plugins: dict[str, Plugin] = {}
        for name in needed:
            cls = registry[name]
            raw = spec.plugin_args.get(name)
            args = (parse_args or default_parse_args)(cls, raw)
            self.plugins[name] = cls(args, self)
        p = self.plugins

        def of(ep: str) -> list[Any]:
            return [p[e.name] for e in expanded[ep]]

        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = of("preEnqueue")
        self.queue_sort_plugins: list[QueueSortPlugin] = of("queueSort")
        self.pre_filter_plugins: list[PreFilterPlugin] = of("preFilter")
        self.filter_plugins: list[FilterPlugin] = of("filter")
        self.post_filter_plugins: list[PostFilterPlugin] = of("postFilter")
        self.pre_score_plugins: list[PreScorePlugin] = of("preScore")
        self.score_plugins: list[ScorePlugin] = of("score")
        self.reserve_plugins: list[ReservePlugin] = of("reserve")
        self.permit_plugins: list[PermitPlugin] = of("permit")
        self.pre_bind_plugins: list[PreBindPlugin] = of("preBind")
        self.bind_plugins: list[BindPlugin] = of("bind")
        self.post_bind_plugins: list[PostBindPlugin] = of("postBind")
        self.score_weights: dict[str, int] = {e.name: e.weight for e in expanded["score"]}
        self._batch_scorers = {p.name() for p in self.score_plugins
                               if type(p).score_nodes is not ScorePlugin.score_nodes}
        self._normalizers = {p.name() for p in self.score_plugins if p.has_normalize_score()}
        self._raw_normalizers = {p.name() for p in self.score_plugins if p.has_normalize_score()
                                 and type(p).normalize_raw_scores is not ScorePlugin.normalize_raw_scores}
        self._vector_scorers = {p.name() for p in self.score_plugins
                                if type(p).score_rows is not ScorePlugin.score_rows}
        self._vector_normalizers = {p.name() for p in self.score_plugins if p.has_normalize_score()
                                    and type(p).normalize_score_array is not ScorePlugin.normalize_score_array}
        # int64 totals cannot overflow: the weights' sum times MaxNodeScore stays far inside int64
        self._vector_totals = sum(self.score_weights.values()) * MAX_NODE_SCORE < 2**62
        self.vector_filter_plugins = {p.name() for p in self.filter_plugins
                                      if type(p).filter_accept_mask is not FilterPlugin.filter_accept_mask}
        self.vector_reject_plugins = {p.name() for p in self.filter_plugins
                                      if type(p).filter_reject_rows is not FilterPlugin.filter_reject_rows}
        if len(self.queue_sort_plugins) > 1:
            raise FrameworkError(
                f"only one queue sort plugin required for profile with scheduler name "
                f'"{self.profile_name}", but got {len(self.queue_sort_plugins)}')
        self._less = self.queue_sort_plugins[0].less if self.queue_sort_plugins else None
        self._active_filters: dict[frozenset[str], list[FilterPlugin]] = {}
        self._sort_key = self.queue_sort_plugins[0].sort_key if self.queue_sort_plugins else None

    # ---- Handle -------------------------------------------------------------------------
    def snapshot(self) -> Any:
        return self._snapshot

    def set_snapshot(self, snapshot: Any) -> None:
        self._snapshot = snapshot

    def iterate_waiting_pods(self) -> list[WaitingPod]:
        return list(self._waiting_pods.values())

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self._waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self._waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    @property
    def client(self) -> Any:
        return self._client

    @property
    def informers(self) -> Any:
        return self._informers

    @property
    def scheduler_name(self) -> str:
        return self.profile_name

    def spawn(self, coro: Any, name: str) -> None:
        """Run `coro` as a named task owned by the scheduler (upstream: a goroutine the
        plugin starts; here it is tracked, and cancelled with the scheduler)."""
        if self.spawner is not None:
            self.spawner(coro, name)
            return
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._timer_tasks.add(task)
        task.add_done_callback(self._timer_tasks.discard)

    def activate(self, pods: list[JsonDict], *, gated_by: str | None = None) -> None:
        """Move `pods` to activeQ if they wait in backoffQ or unschedulablePods (upstream
        Handle.Activate); with `gated_by`, only those held at PreEnqueue by that plugin. A no-op
        without a queue (a framework driven alone)."""
        if self.pod_activator is not None and pods:
            self.pod_activator(pods, gated_by=gated_by)

    def record_event(self, obj: JsonDict, type_: str, reason: str, action: str, message: str, *,
                     related: JsonDict | None = None) -> None:
        """Emit an Event about `obj` through the scheduler's event writer (upstream EventRecorder)."""
        if self.event_recorder is not None:
            self.event_recorder(obj, type_, reason, action, message, related=related)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """Pods nominated to `node_name` (by preemption), for PostFilter plugins."""
        return list(self.nominator.nominated_pods_for_node(node_name)) if self.nominator is not None else []

    def nodes_with_nominated_pods(self) -> list[str]:
        """The nodes pods are nominated to in memory ([] without a nominator)."""
        return list(self.nominator.nodes()) if self.nominator is not None else []

    def nominated_node_name(self, uid: str) -> str:
        """The in-memory nomination of pod `uid` ("" without one or without a nominator)."""
        return self.nominator.nominated_node(uid) if self.nominator is not None else ""

    def add_nominated_pod(self, pod: PodInfo, node_name: str) -> None:
        """Nominate `pod` to `node_name` in memory; a no-op without a nominator."""
        if self.nominator is not None:
            self.nominator.add(pod, node_name)

    def gang_demand(self, pod: PodInfo) -> GangDemand | None:
        """Asks the profile's PostFilter plugins that know gangs, in order; the first answer wins."""
        for pl in self.post_filter_plugins:
            if isinstance(pl, GangDemandPlugin):
                demand = pl.gang_demand(pod)
                if demand is not None:
                    return demand
        return None

    def run_filter_plugins(self, state: CycleState, pi: PodInfo, node: NodeInfo) -> Status:
        """Handle form of `run_filter` for plugins: Success instead of None when the node passes."""
        return self.run_filter(state, pi, node) or Status.success()

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pi: PodInfo, node: NodeInfo) -> Status:
        """Handle form of `run_filter_with_nominated_pods` (preemption's dry runs)."""
        return self.run_filter_with_nominated_pods(state, pi, node) or Status.success()

    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter_plugins)

    def list_plugins(self) -> dict[str, list[PluginEntry]]:
        """The plugins each extension point runs, in order, after multiPoint expansion (upstream
        ListPlugins): config spellings as keys, points without plugins left out, weights only at
        `score` (0 elsewhere)."""
        out: dict[str, list[PluginEntry]] = {}
        for ep, plugins in (("preEnqueue", self.pre_enqueue_plugins), ("queueSort", self.queue_sort_plugins),
                            ("preFilter", self.pre_filter_plugins), ("filter", self.filter_plugins),
                            ("postFilter", self.post_filter_plugins), ("preScore", self.pre_score_plugins),
                            ("score", self.score_plugins), ("reserve", self.reserve_plugins),
                            ("permit", self.permit_plugins), ("preBind", self.pre_bind_plugins),
                            ("bind", self.bind_plugins), ("postBind", self.post_bind_plugins)):
            if plugins:
                out[ep] = [PluginEntry(p.name(), self.score_weights.get(p.name(), 1) if ep == "score" else 0)
                           for p in plugins]
        return out

    # ---- queue-facing -------------------------------------------------------------------
    def queue_sort_less(self, a: Any, b: Any) -> bool:
        if self._less is None:
            return bool(a.timestamp < b.timestamp)
        return bool(self._less(a, b))

    def queue_sort_key(self, item: Any) -> tuple[Any, ...] | None:
        """The QueueSort plugin's `sort_key` for `item` (see QueueSortPlugin.sort_key)."""
        if self._sort_key is None:
            return (item.timestamp,)
        return self._sort_key(item)

    def run_pre_enqueue(self, pod: JsonDict) -> Status:
        """First rejection wins; its plugin becomes the pod's gating plugin."""
        for pl in self.pre_enqueue_plugins:
            st = self._call(pl, "pre_enqueue", pod)
            if not st.is_success():
                return st
        return Status.success()

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """plugin name -> events that may make a pod it rejected schedulable. Plugins that can
        reject but declare nothing get the wildcard (any event requeues), as upstream."""
        out: dict[str, list[ClusterEventWithHint]] = {}
        rejectors: list[Plugin] = [*self.pre_enqueue_plugins, *self.pre_filter_plugins, *self.filter_plugins,
                                   *self.reserve_plugins, *self.permit_plugins]
        for pl in rejectors:
            name = pl.name()
            if name in out:
                continue
            if isinstance(pl, EnqueueExtensions):
                try:
                    out[name] = list(pl.events_to_register() or [])
                except Exception:
                    logger.exception("events_to_register failed plugin=%s", name)
                    out[name] = [ClusterEventWithHint(WILDCARD_EVENT)]
            else:
                out[name] = [ClusterEventWithHint(WILDCARD_EVENT)]
        return out

    # ---- scheduling cycle ---------------------------------------------------------------
    def _call(self, pl: Plugin, method: str, *args: Any) -> Status:
        try:
            st = getattr(pl, method)(*args)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the runtime is the one place that catches broadly
            logger.exception("plugin raised plugin=%s point=%s", pl.name(), method)
            return Status.as_error(f'running {method} plugin "{pl.name()}": {e}', pl.name())
        return self._checked(pl, method, st)

    @staticmethod
    def _checked(pl: Plugin, method: str, st: Any) -> Status:
        """A plugin's return value as a Status naming the plugin when it is not a success (None
        or a non-Status become an Error)."""
        if st is None:
            return Status.as_error(f'plugin "{pl.name()}" returned no status from {method}', pl.name())
        if not isinstance(st, Status):
            return Status.as_error(f'plugin "{pl.name()}" returned {type(st).__name__}, not a Status, '
                                   f"from {method}", pl.name())
        if st.code and not st.plugin:
            return st.with_plugin(pl.name())
        return st

    def run_pre_filter(self, state: CycleState, pi: PodInfo,
                       nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status, set[str]]:
        """Returns (merged result, status, plugins that narrowed the node set). Skip marks the
        plugin's Filter skipped; UnschedulableAndUnresolvable or an error stops at once (any other
        code, Pending included, is an error, as upstream), an Unschedulable is returned after the
        remaining PreFilter plugins ran (upstream since v1.29: preemption needs their state; the
        last one is returned). Results that leave no node are UnschedulableAndUnresolvable without
        a plugin, naming the narrowing plugins sorted, as upstream's sets.List."""
        result: PreFilterResult | None = None
        narrowing: list[str] = []
        skipped = state.skip_filter_plugins
        rejected: Status | None = None
        for pl in self.pre_filter_plugins:
            name = pl.name()
            try:
                out = pl.pre_filter(state, pi, nodes)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                logger.exception("plugin raised plugin=%s point=pre_filter", name)
                return None, Status.as_error(f'running PreFilter plugin "{name}": {e}', name), set()
            if out is None or not isinstance(out, tuple) or out[1] is None:
                return None, Status.as_error(f'plugin "{name}" returned no status from PreFilter', name), set()
            r, st = out
            if st.code == Code.SKIP:
                skipped.add(name)
                continue
            if not st.is_success():
                if st.code == Code.UNSCHEDULABLE:
                    # preemption runs later in this cycle and needs every PreFilter's state, so
                    # an Unschedulable does not stop the others (kubernetes#119770)
                    rejected = st.with_plugin(name)
                    continue
                if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, st.with_plugin(name), {name}
                return None, Status.as_error(f'running PreFilter plugin "{name}": {st.message()}', name), set()
            if r is not None and not r.all_nodes():
                narrowing.append(name)
            result = r if result is None else result.merge(r)
            if result is not None and result.node_names is not None and not result.node_names:
                if len(narrowing) == 1:
                    msg = f"node(s) didn't satisfy plugin {narrowing[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}] simultaneously"
                return result, Status.unresolvable(msg), set(narrowing)
        if rejected is not None:
            return result, rejected, {rejected.plugin} | set(narrowing)
        return result, Status.success(), set(narrowing)

    def active_filter_plugins(self, state: CycleState) -> list[FilterPlugin]:
        """The Filter plugins minus those whose PreFilter returned Skip this cycle (a shared list:
        callers do not mutate it), remembered per skip set (at most one per subset of the
        profile's PreFilter plugins)."""
        skip = state.skip_filter_plugins
        if not skip:
            return self.filter_plugins
        key = frozenset(skip)
        got = self._active_filters.get(key)
        if got is None:
            got = self._active_filters[key] = [p for p in self.filter_plugins if p.name() not in skip]
        return got

    def run_filter(self, state: CycleState, pi: PodInfo, node: NodeInfo,
                   plugins: Sequence[FilterPlugin] | None = None) -> Status | None:
        """None means the node passed. On failure the Status names the rejecting plugin; a
        non-rejection failure becomes an Error."""
        for pl in (self.active_filter_plugins(state) if plugins is None else plugins):
            try:
                st = pl.filter(state, pi, node)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                logger.exception("plugin raised plugin=%s point=filter node=%s", pl.name(), node.name)
                return Status.as_error(f'running "{pl.name()}" filter plugin: {e}', pl.name())
            if st is None:
                return Status.as_error(f'plugin "{pl.name()}" returned no status from Filter', pl.name())
            if st.code:
                if st.code == Code.SKIP:
                    continue
                if st.code not in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING):
                    return Status.as_error(f'running "{pl.name()}" filter plugin: {st.message()}', pl.name())
                return st.with_plugin(pl.name())
        return None

    def run_filter_with_nominated_pods(self, state: CycleState, pi: PodInfo, node: NodeInfo,
                                       plugins: Sequence[FilterPlugin] | None = None) -> Status | None:
        """Filter twice when pods of equal or higher priority are nominated to the node: once as
        if they were running there, once without (upstream RunFilterPluginsWithNominatedPods)."""
        nominator = self.nominator
        nominated = nominator.nominated_pods_for_node(node.name) if nominator is not None else None
        if nominated:
            added = False
            node2 = node
            state2 = state
            for npi in nominated:
                if npi.priority >= pi.priority and npi.uid != pi.uid:
                    if not added:
                        node2 = node.clone()
                        state2 = state.clone()
                        added = True
                    node2.add_pod(npi)
                    st = self.run_pre_filter_extension_add_pod(state2, pi, npi, node2)
                    if not st.is_success():
                        return st
            if added:
                st2 = self.run_filter(state2, pi, node2, plugins)
                if st2 is not None:
                    return st2
        return self.run_filter(state, pi, node, plugins)

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: PodInfo,
                                         pod_to_add: PodInfo, node: NodeInfo) -> Status:
        return self._run_pre_filter_extension("add_pod", "AddPod", state, pod_to_schedule, pod_to_add, node)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: PodInfo,
                                            pod_to_remove: PodInfo, node: NodeInfo) -> Status:
        return self._run_pre_filter_extension("remove_pod", "RemovePod", state, pod_to_schedule, pod_to_remove,
                                              node)

    def _run_pre_filter_extension(self, method: str, label: str, state: CycleState, pod_to_schedule: PodInfo,
                                  other: PodInfo, node: NodeInfo) -> Status:
        """AddPod/RemovePod of every PreFilter plugin with extensions (preemption's what-if)."""
        for pl in self.pre_filter_plugins:
            if pl.name() in state.skip_filter_plugins or not pl.has_pre_filter_extensions():
                continue
            st = self._call(pl, method, state, pod_to_schedule, other, node)
            if not st.is_success():
                return Status.as_error(f'running {label} on PreFilter plugin "{pl.name()}": {st.message()}',
                                       pl.name())
        return Status.success()

    async def run_post_filter(self, state: CycleState, pi: PodInfo,
                              filtered: dict[str, Status]) -> tuple[PostFilterResult | None, Status]:
        """First success wins; an Error stops; otherwise the rejection messages are joined."""
        reasons: list[str] = []
        result: PostFilterResult | None = None
        rejector = ""
        rejector_said = False
        for pl in self.post_filter_plugins:
            try:
                out = await pl.post_filter(state, pi, filtered)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                logger.exception("plugin raised plugin=%s point=post_filter", pl.name())
                return None, Status.as_error(f'running PostFilter plugin "{pl.name()}": {e}', pl.name())
            if out is None or not isinstance(out, tuple) or out[1] is None:
                return None, Status.as_error(f'plugin "{pl.name()}" returned no status from PostFilter',
                                             pl.name())
            r, st = out
            if st.is_success():
                return r, st.with_plugin(pl.name())
            if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, st if st.plugin else st.with_plugin(pl.name())
            if not st.is_rejected():
                return None, st if st.plugin else st.with_plugin(pl.name())
            if r is not None:  # a result overrides the nomination, "" clears it (upstream ModeOverride)
                result = r
            reasons.extend(st.reasons)
            # the first rejecting plugin, as upstream; one with nothing to say gives the credit to
            # the first later one that gave a reason
            if not rejector or (st.reasons and not rejector_said):
                rejector = pl.name()
                rejector_said = bool(st.reasons)
        return result, Status(Code.UNSCHEDULABLE, reasons, rejector)

    def run_pre_score(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        """Skip marks the plugin's Score skipped for this cycle; the first failure stops."""
        skip = state.skip_score_plugins
        for pl in self.pre_score_plugins:
            try:  # `_call` inlined: ~7 plugins per pod, most of them Success or Skip
                out = pl.pre_score(state, pi, nodes)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                logger.exception("plugin raised plugin=%s point=%s", pl.name(), "pre_score")
                st = Status.as_error(f'running PreScore plugin "{pl.name()}": {e}', pl.name())
            else:
                code = out.code if isinstance(out, Status) else None
                if code == Code.SUCCESS:
                    continue
                if code == Code.SKIP:
                    skip.add(pl.name())
                    continue
                st = self._checked(pl, "pre_score", out)
            if st.code == Code.SKIP:
                skip.add(pl.name())
                continue
            if not st.is_success():
                return Status.as_error(f'running PreScore plugin "{pl.name()}": {st.message()}', pl.name())
        return Status.success()

    @overload
    def run_score(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo], *,
                  record: dict[str, Any] | None = None, arrays: None = None,
                  rows: None = None) -> tuple[list[int], Status]: ...

    @overload
    def run_score(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo], *,
                  record: dict[str, Any] | None = None, arrays: NodeArrays,
                  rows: IntArray) -> tuple[IntArray, Status]: ...

    def run_score(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo], *,
                  record: dict[str, Any] | None = None, arrays: NodeArrays | None = None,
                  rows: IntArray | None = None) -> tuple[list[int] | IntArray, Status]:
        """Totals per node (same order as `nodes`). `record`, when given, receives per plugin
        {"raw": [...], "normalized": [...], "weight": w} for explain (int64 arrays where a plugin
        scored or normalized as a vector). With `arrays` and `rows`
        (`nodes[i]` is snapshot row `rows[i]`) the totals are an int64 array, plugins with a
        `score_rows` form score the window at once, and the sum is a vector sum."""
        vector = arrays is not None and rows is not None and self._vector_totals
        totals_arr = np.zeros(len(nodes), dtype=np.int64) if vector else None
        totals = [0] * len(nodes)
        skip = state.skip_score_plugins
        for pl in self.score_plugins:
            name = pl.name()
            if name in skip:
                continue
            normalized_arr: IntArray | None = None
            normalized: list[int] = []
            raw: list[int] | IntArray
            ni: NodeInfo | None = None
            try:
                raw_arr = (pl.score_rows(state, pi, arrays, rows, nodes)
                           if vector and name in self._vector_scorers and arrays is not None and rows is not None
                           else None)
                if raw_arr is not None:
                    if len(raw_arr) != len(nodes):
                        return totals, Status.as_error(
                            f'plugin "{name}" returned {len(raw_arr)} scores for {len(nodes)} nodes', name)
                    raw = raw_arr
                else:
                    batch = pl.score_nodes(state, pi, nodes) if name in self._batch_scorers else None
                    if batch is not None:
                        if not isinstance(batch, tuple) or batch[1] is None:
                            return totals, Status.as_error(f'plugin "{name}" returned no status from Score', name)
                        if batch[1].code:
                            return totals, Status.as_error(
                                f'{_SCORE_FAILED} "{name}" failed with: {batch[1].message()}', name)
                        raw = list(batch[0])
                        if len(raw) != len(nodes):
                            return totals, Status.as_error(
                                f'plugin "{name}" returned {len(raw)} scores for {len(nodes)} nodes', name)
                    else:
                        raw = []
                        append = raw.append
                        score_fn = pl.score
                        for ni in nodes:
                            out = score_fn(state, pi, ni)
                            if out is None or out[1] is None:
                                return totals, Status.as_error(f'plugin "{name}" returned no status from Score',
                                                               name)
                            s, st = out
                            if st.code:
                                return totals, Status.as_error(
                                    f'{_SCORE_FAILED} "{name}" failed with: {st.message()}', name)
                            append(s)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                logger.exception("plugin raised plugin=%s point=score node=%s", name, ni.name if ni else "")
                return totals, Status.as_error(f'{_SCORE_FAILED} "{name}" failed with: {e}', name)
            if isinstance(raw, np.ndarray) and name not in self._normalizers:
                normalized_arr = raw
            elif name in self._normalizers:
                fast: list[int] | IntArray | None = None
                try:
                    if isinstance(raw, np.ndarray) and name in self._vector_normalizers:
                        fast = pl.normalize_score_array(state, pi, raw)
                    if fast is None and name in self._raw_normalizers:
                        fast = pl.normalize_raw_scores(state, pi, raw.tolist() if isinstance(raw, np.ndarray)
                                                       else raw)
                except asyncio.CancelledError:
                    raise
                except Exception as e:
                    logger.exception("plugin raised plugin=%s point=normalize_score", name)
                    return totals, Status.as_error(f'{_NORMALIZE_FAILED} "{name}" failed with: {e}', name)
                if fast is not None and len(fast) != len(nodes):
                    return totals, Status.as_error(
                        f'plugin "{name}" normalized {len(fast)} scores for {len(nodes)} nodes', name)
                if isinstance(fast, np.ndarray):
                    normalized_arr = fast
                elif fast is not None:
                    normalized = fast
                else:
                    scores = [NodeScore(n.name, int(v)) for n, v in zip(nodes, raw.tolist() if isinstance(
                        raw, np.ndarray) else raw, strict=True)]
                    st = self._call(pl, "normalize_score", state, pi, scores)
                    if not st.is_success():
                        return totals, Status.as_error(
                            f'{_NORMALIZE_FAILED} "{name}" failed with: {st.message()}', name)
                    normalized = [ns.score for ns in scores]
            else:
                assert isinstance(raw, list)
                normalized = raw
            weight = self.score_weights.get(name, 1)
            if normalized_arr is not None:  # the ufuncs' reduce: ndarray.min/max without their Python wrappers
                if (not len(normalized_arr) or normalized_arr.dtype is _INT64
                        and int(_MAX_REDUCE(normalized_arr.view(_UINT64))) <= MAX_NODE_SCORE):
                    # every value in [0, MAX_NODE_SCORE] (a negative int64 reads >= 2**63 as uint64)
                    lo, hi = MIN_NODE_SCORE, MIN_NODE_SCORE
                else:
                    lo = int(_MIN_REDUCE(normalized_arr))
                    hi = int(_MAX_REDUCE(normalized_arr))
            else:
                lo, hi = min(normalized, default=0), max(normalized, default=0)
            if hi > MAX_NODE_SCORE or lo < MIN_NODE_SCORE:
                bad = hi if hi > MAX_NODE_SCORE else lo
                return totals, Status.as_error(
                    f'applying score defaultWeights on Score plugins: plugin "{name}" returns an invalid score '
                    f"{bad}, it should in the range of "
                    f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing", name)
            if totals_arr is not None:
                vec = normalized_arr if normalized_arr is not None else np.asarray(normalized, dtype=np.int64)
                if weight == 1:
                    totals_arr += vec
                else:
                    totals_arr += vec * weight
            else:
                if normalized_arr is not None:
                    normalized = normalized_arr.tolist()
                if weight == 1:
                    totals = [t + v for t, v in zip(totals, normalized, strict=True)]
                else:
                    totals = [t + v * weight for t, v in zip(totals, normalized, strict=True)]
            if record is not None:  # arrays stay arrays (explain converts them when asked)
                record[name] = {"raw": raw, "normalized": normalized_arr if normalized_arr is not None
                                else normalized, "weight": weight}
        if totals_arr is not None:
            return totals_arr, Status.success()
        return totals, Status.success()

    def run_reserve(self, state: CycleState, pi: PodInfo, node_name: str) -> Status:
        for pl in self.reserve_plugins:
            st = self._call(pl, "reserve", state, pi, node_name)
            if not st.is_success():
                if st.is_rejected():
                    return st
                return Status.as_error(f'running Reserve plugin "{pl.name()}": {st.message()}', pl.name())
        return Status.success()

    def run_unreserve(self, state: CycleState, pi: PodInfo, node_name: str) -> None:
        """Reverse order; errors are logged, never raised (upstream RunReservePluginsUnreserve)."""
        for pl in reversed(self.reserve_plugins):
            try:
                pl.unreserve(state, pi, node_name)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("unreserve failed plugin=%s pod=%s", pl.name(), pi.key)

    def run_permit(self, state: CycleState, pi: PodInfo, node_name: str) -> Status:
        """Rejection or error stops at once; WAIT from any plugin parks the pod in the waiting map
        with each plugin's own timeout (capped at 15 min)."""
        waits: dict[str, float] = {}
        for pl in self.permit_plugins:
            name = pl.name()
            try:
                out = pl.permit(state, pi, node_name)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                logger.exception("plugin raised plugin=%s point=permit", name)
                return Status.as_error(f'running Permit plugin "{name}": {e}', name)
            if out is None or not isinstance(out, tuple) or out[0] is None:
                return Status.as_error(f'plugin "{name}" returned no status from Permit', name)
            st, timeout = out
            if st.is_success():
                continue
            if st.is_rejected():
                return st.with_plugin(name)
            if st.code == Code.WAIT:
                waits[name] = min(float(timeout or 0), MAX_PERMIT_TIMEOUT)
                continue
            return Status.as_error(f'running Permit plugin "{name}": {st.message()}', name)
        if waits:
            wp = WaitingPod(pi, waits)
            self._waiting_pods[pi.uid] = wp
            for name, t in waits.items():
                task = asyncio.get_running_loop().create_task(
                    self._permit_timer(wp, name, t), name=f"permit-timeout:{pi.key}:{name}")
                wp._timers.append(task)
                self._timer_tasks.add(task)
                task.add_done_callback(self._timer_tasks.discard)
            return Status(Code.WAIT, [f'one or more plugins asked to wait and no plugin rejected pod "{pi.name}"'])
        return Status.success()

    async def _permit_timer(self, wp: WaitingPod, plugin: str, timeout: float) -> None:
        await self.clock.sleep(timeout)
        wp.reject(plugin, f"rejected due to timeout after waiting {_fmt_duration(timeout)} at plugin {plugin}")

    async def wait_on_permit(self, pi: PodInfo) -> Status:
        wp = self._waiting_pods.get(pi.uid)
        if wp is None:
            return Status.success()
        try:
            st = await wp.wait()
        finally:
            self._waiting_pods.pop(pi.uid, None)
        if st.is_success():
            return st
        if st.is_rejected():
            return st
        return Status.as_error(f"waiting on permit for pod: {st.message()}", st.plugin)

    async def run_pre_bind(self, state: CycleState, pi: PodInfo, node_name: str) -> Status:
        for pl in self.pre_bind_plugins:
            st = await self._acall(pl, "pre_bind", state, pi, node_name)
            if st.code == Code.SKIP:
                continue
            if not st.is_success():
                if st.is_rejected():
                    return st
                return Status.as_error(f'running PreBind plugin "{pl.name()}": {st.message()}', pl.name())
        return Status.success()

    async def run_bind(self, state: CycleState, pi: PodInfo, node_name: str) -> Status:
        """The first bind plugin that does not Skip decides; all skipping is a SKIP status."""
        if not self.bind_plugins:
            return Status.skip()
        for pl in self.bind_plugins:
            st = await self._acall(pl, "bind", state, pi, node_name)
            if st.code == Code.SKIP:
                continue
            if not st.is_success():
                if st.is_rejected():
                    return st
                return Status.as_error(f'running Bind plugin "{pl.name()}": {st.message()}', pl.name())
            return st
        return Status.skip()

    async def run_post_bind(self, state: CycleState, pi: PodInfo, node_name: str) -> None:
        for pl in self.post_bind_plugins:
            try:
                await pl.post_bind(state, pi, node_name)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("post_bind failed plugin=%s pod=%s", pl.name(), pi.key)

    async def _acall(self, pl: Plugin, method: str, *args: Any) -> Status:
        try:
            st = await getattr(pl, method)(*args)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            logger.exception("plugin raised plugin=%s point=%s", pl.name(), method)
            return Status.as_error(f'running {method} plugin "{pl.name()}": {e}', pl.name())
        if st is None:
            return Status.as_error(f'plugin "{pl.name()}" returned no status from {method}', pl.name())
        if not isinstance(st, Status):
            return Status.as_error(f'plugin "{pl.name()}" returned {type(st).__name__}, not a Status, '
                                   f"from {method}", pl.name())
        if st.code and not st.plugin:
            st = st.with_plugin(pl.name())
        return st

    def close(self) -> None:
        for t in list(self._timer_tasks):
            t.cancel()


def default_parse_args(cls: type[Plugin], raw: JsonDict | None) -> Any:
    """A plugin's `Args` pydantic model validated from the pluginConfig entry (defaults when absent);
    plugins without `Args` get the raw dict (or None)."""
    args_model = getattr(cls, "Args", None)
    if args_model is None:
        return raw
    return args_model.model_validate(raw or {})


def _fmt_duration(seconds: float) -> str:
    """Go's time.Duration String(): 0s, 1.5µs, 500ms, 10s, 2.5s, 1m30s, 1h0m0s."""
    ns = round(seconds * 1_000_000_000)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    u = abs(ns)
    if u < 1_000:
        return f"{sign}{u}ns"
    if u < 1_000_000_000:
        unit, prec = ("µs", 3) if u < 1_000_000 else ("ms", 6)
        whole, frac = divmod(u, 10**prec)
        return f"{sign}{whole}{_fmt_frac(frac, prec)}{unit}"
    secs, frac = divmod(u, 1_000_000_000)
    mins, secs = divmod(secs, 60)
    out = f"{secs}{_fmt_frac(frac, 9)}s"
    if mins:
        hours, mins = divmod(mins, 60)
        out = f"{mins}m{out}"
        if hours:
            out = f"{hours}h{out}"
    return sign + out


def _fmt_frac(frac: int, prec: int) -> str:
    """Go's fmtFrac: the fraction's digits without trailing zeros, none (and no point) for 0."""
    digits = str(frac).rjust(prec, "0").rstrip("0")
    return f".{digits}" if digits else ""
