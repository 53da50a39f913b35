"""The scheduler: the scheduling loop and the binding cycle (layer L4).

Upstream: pkg/scheduler/scheduler.go and schedule_one.go. Data flow:

    informers -> EventHandlers -> Cache (assigned pods, nodes) / PriorityQueue (pending pods)
    schedule_one: queue.pop -> cache.update_snapshot -> PreFilter -> Filter (round-robin from
      next_start_node_index, stopping after num_feasible_nodes_to_find) -> [PostFilter on
      failure] -> PreScore/Score -> select_host -> assume -> Reserve -> Permit
    binding task (tracked, off the hot path): WaitOnPermit -> PreBind -> Bind -> PostBind
    preemption task (tracked, started by DefaultPreemption's PostFilter through the framework's
      `spawn`): victim status patches, deletes, events; the preemptor waits at PreEnqueue
    failures -> queue.add_unschedulable_if_not_present + FailedScheduling event + PodScheduled
      condition (status writes and events go through ApiWriter, never blocking the loop)

Speed without changing decisions: outside preemption dry runs, Filter runs plugin by plugin
over chunks of nodes (`FilterPlugin.filter_nodes`, `_filter_batched`) and reproduces the
sequential walk exactly (same feasible nodes, statuses and next start index); Score uses each
plugin's `score_nodes` / `normalize_raw_scores` batch forms where they exist.

Search size (upstream numFeasibleNodesToFind): below 100 nodes all are checked; otherwise
percentage = percentageOfNodesToScore, or adaptive 50 - N/125 (floor 5) when 0, and
N x pct / 100 nodes, at least 100. 5,000 nodes -> 10 % = 500; 1,000 -> 42 % = 420.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import socket
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from minik3s.api.errors import NotFoundError
from minik3s.api.helpers.pods import condition_status_patch
from minik3s.api.resources import EVENTS, NAMESPACES, NODES, PODS
from minik3s.api.types import JsonDict
from minik3s.utils.clock import Clock, rfc3339
from scheduler.backend.cache import Cache
from scheduler.backend.queue import (
    EVENT_ASSIGNED_POD_DELETE,
    PriorityQueue,
    QueuedPodInfo,
    nominated_node_name,
    scheduler_name,
)
from scheduler.backend.snapshot import Snapshot
from scheduler.config import (
    ConfigError,
    KubeSchedulerConfiguration,
    build_registry,
    parse_config,
    profile_spec,
    validate_plugin_args,
)
from scheduler.event_series import FINISH_SECONDS, REFRESH_SECONDS, EventSeries, Write
from scheduler.eventhandlers import EventHandlers
from scheduler.explain import AttemptRecord, Explainer, gang_section
from scheduler.framework.cycle_state import FEASIBLE_ROWS_KEY, CycleState
from scheduler.framework.interface import Code, Plugin, Status
from scheduler.framework.node_arrays import IntArray, NodeArrays
from scheduler.framework.runtime import Framework, FrameworkError, WaitingPod
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.metrics import ERROR, SCHEDULED, UNSCHEDULABLE, SchedulerMetrics

logger = logging.getLogger(__name__)

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NOTE_LENGTH_LIMIT = 1024
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
DEFAULT_COMPONENT = "default-scheduler"
# loop iterations given to other tasks after each scheduling cycle (see Scheduler.run)
YIELDS_PER_POD = 4


_REJECTED = frozenset((Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING))
_COUNT_NONZERO = np.count_nonzero
_MAX_REDUCE = np.maximum.reduce


class _SlowPath(Exception):
    """A Filter returned Skip/Error: let the runtime's run_filter produce the exact status."""


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes to look for (upstream numFeasibleNodesToFind)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct <= 0:
        pct = 50 - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num = num_all_nodes * pct // 100
    if num < MIN_FEASIBLE_NODES_TO_FIND:
        return MIN_FEASIBLE_NODES_TO_FIND
    return min(num, num_all_nodes)


def truncate_message(msg: str) -> str:
    if len(msg) <= NOTE_LENGTH_LIMIT:
        return msg
    suffix = " ..."
    return msg[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


@dataclass(slots=True)
class Diagnosis:
    node_to_status: dict[str, Status] = field(default_factory=dict)
    absent_status: Status | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    # the feasible nodes' snapshot rows when the vector walk found them (NodeArrays), else None
    feasible_rows: IntArray | None = None


class FitError(Exception):
    """No node fits (upstream framework.FitError); `str()` is the FailedScheduling message."""

    def __init__(self, pod_info: PodInfo, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod_info = pod_info
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        d = self.diagnosis
        msg = f"0/{self.num_all_nodes} nodes are available:"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            counts: dict[str, int] = {}
            # statuses are shared (one per reason set): count each distinct one, then its reasons
            per_status = Counter(map(id, d.node_to_status.values()))
            for st in _distinct_statuses(d.node_to_status.values()):
                times = per_status[id(st)]
                for r in st.reasons:
                    counts[r] = counts.get(r, 0) + times
            absent = self.num_all_nodes - len(d.node_to_status)
            if d.absent_status is not None and d.absent_status.is_rejected() and absent > 0:
                for r in d.absent_status.reasons:
                    counts[r] = counts.get(r, 0) + absent
            hist = sorted(f"{n} {r}" for r, n in counts.items())
            if hist:
                msg += f" {', '.join(hist)}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg


class SchedulingError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


@dataclass(slots=True)
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int


class ApiWriter:
    """Off-hot-path API writes: status patches (coalesced per pod, never dropped) and events
    (bounded; dropped with a log line when `max_pending_events` are already queued, as
    client-go's event broadcaster does).

    Events are written in batches, as upstream's broadcaster writes them from its own goroutine:
    a worker takes every queued event (up to `EVENT_BATCH`) and creates them concurrently, so
    they reach the storage writer together and commit in one transaction instead of one each;
    the events queued while a batch commits form the next one. Each event is still one create,
    with its own content, in the order emitted."""

    EVENT_BATCH = 128

    def __init__(self, client: Any, *, workers: int = 4, max_pending_events: int = 1000) -> None:
        self._client = client
        self._workers = workers
        self._max_events = max_pending_events
        self._status: dict[tuple[str, str], JsonDict] = {}
        self._events: list[JsonDict] = []
        self._series: list[Write] = []
        self._wake = asyncio.Event()
        self.dropped_events = 0

    def patch_status(self, namespace: str, name: str, status_patch: JsonDict) -> None:
        key = (namespace, name)
        prev = self._status.get(key)
        self._status[key] = {**prev, **status_patch} if prev else status_patch
        self._wake.set()

    def emit_event(self, event: JsonDict) -> None:
        if len(self._events) >= self._max_events:
            self.dropped_events += 1
            logger.debug("dropping event reason=%s", event.get("reason"))
            return
        self._events.append(event)
        self._wake.set()

    def emit_series(self, write: Write) -> None:
        """A series' count to write (a strategic-merge patch; a create when the event is gone)."""
        self._series.append(write)
        self._wake.set()

    def pending(self) -> int:
        return len(self._status) + len(self._events) + len(self._series)

    def _next(self) -> Callable[[], Awaitable[Any]] | None:
        if self._status:
            (ns, name), patch = next(iter(self._status.items()))
            del self._status[(ns, name)]
            return lambda: self._client.patch(PODS, name, {"status": patch}, ns,
                                              patch_type="strategic", subresource="status", read_only=True)
        if self._series:
            write = self._series.pop(0)
            return lambda: self._write_series(write)
        if self._events:
            batch = self._events[:self.EVENT_BATCH]
            del self._events[:self.EVENT_BATCH]
            return lambda: self._create_events(batch)
        return None

    async def _create_events(self, batch: list[JsonDict]) -> None:
        if len(batch) == 1:
            ev = batch[0]
            await self._client.create(EVENTS, ev, ev["metadata"]["namespace"], read_only=True, handover=True)
            return
        results = await asyncio.gather(
            *(self._client.create(EVENTS, ev, ev["metadata"]["namespace"], read_only=True, handover=True)
              for ev in batch),
            return_exceptions=True)
        for ev, res in zip(batch, results, strict=True):
            if isinstance(res, asyncio.CancelledError):
                raise res
            if isinstance(res, BaseException):
                logger.info("api write failed event=%s err=%s", ev["metadata"]["name"], res)

    async def _write_series(self, write: Write) -> None:
        meta = write.event["metadata"]
        assert write.patch is not None
        try:
            await self._client.patch(EVENTS, meta["name"], write.patch, meta["namespace"], patch_type="strategic",
                                     read_only=True)
        except NotFoundError:  # the event expired or was deleted: created again, with its series
            # not handed over: its nested parts are shared with the series' cached copy
            await self._client.create(EVENTS, write.event, meta["namespace"], read_only=True)

    async def _do(self, job: Callable[[], Awaitable[Any]]) -> None:
        try:
            await job()
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a failed status/event write is logged, never fatal
            logger.info("api write failed err=%s", e)

    async def flush(self) -> None:
        """Perform every pending write now (tests; shutdown)."""
        while (job := self._next()) is not None:
            await self._do(job)

    async def _worker(self) -> None:
        while True:
            job = self._next()
            if job is None:
                self._wake.clear()
                await self._wake.wait()
                continue
            await self._do(job)

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            for i in range(self._workers):
                tg.create_task(self._worker(), name=f"scheduler-api-writer-{i}")


@dataclass(slots=True)
class EventStamps:
    """RFC 3339 times from the injected clock: seconds (an attempt's explain timestamp) and an
    Event's eventTime with microseconds; the seconds text is formatted once per second (every
    bound pod gets an Event, hundreds per second), the microseconds appended to it."""

    _sec: float = float("nan")
    _text: str = ""

    def seconds(self, now: datetime, epoch: float) -> str:
        """metav1.Time (RFC 3339 seconds); `epoch` is now.timestamp() (the caller has it)."""
        sec = epoch // 1
        if sec != self._sec:
            self._sec, self._text = sec, rfc3339(now)
        return self._text

    def micro(self, now: datetime, epoch: float) -> str:
        """metav1.MicroTime (an Event's eventTime)."""
        return f"{self.seconds(now, epoch)[:-1]}.{now.microsecond:06d}Z"


def _pod_lister(informers: Any) -> Callable[[str, str], JsonDict | None] | None:
    """(namespace, name) -> the pod informer's current object: the nominator drops nominations
    of pods that are gone or bound (upstream nominator's podLister)."""
    try:
        store = informers.informer(PODS).store
    except Exception:  # noqa: BLE001 - no pod informer (unit setups): nominations unchecked
        return None

    def lookup(namespace: str, name: str) -> JsonDict | None:
        got: JsonDict | None = store.get(f"{namespace}/{name}")
        return got

    return lookup


def _namespace_labels(informers: Any) -> Callable[[str], Mapping[str, str] | None] | None:
    """namespace -> its labels, for affinity terms' namespaceSelector in the queue's bound-pod
    pre-filter (None without a namespace informer: such terms then select no namespace)."""
    try:
        store = informers.informer(NAMESPACES).store
    except Exception:  # noqa: BLE001 - no namespace informer
        return None

    def lookup(ns: str) -> Mapping[str, str] | None:
        obj = store.get(ns)
        return ((obj or {}).get("metadata") or {}).get("labels")

    return lookup


class Scheduler:
    """The embedded kube-scheduler. `run()` until cancelled; `explain(ns, name)` for debugging."""

    def __init__(
        self,
        config: KubeSchedulerConfiguration | None = None,
        *,
        client: Any,
        informers: Any,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        registry: Mapping[str, type[Plugin]] | None = None,
        explain_capacity: int = 10_000,
        max_pending_events: int = 1000,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        self.config = config or parse_config({})
        self.client = client
        self.informers = informers
        self.clock = clock or Clock()
        self.rng = rng or random.Random()
        if registry is None:
            registry = build_registry(self.config, _in_tree_registry())
        self.registry = dict(registry)
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.waiting_pods: dict[str, WaitingPod] = {}
        self.frameworks: dict[str, Framework] = {}
        validate_plugin_args(self.config, self.registry)
        for i, prof in enumerate(self.config.profiles):
            spec = profile_spec(prof, self.registry, global_percentage=self.config.percentage_of_nodes_to_score)
            try:
                self.frameworks[prof.scheduler_name] = Framework(
                    spec, self.registry, client=client, informers=informers, snapshot=self.snapshot,
                    waiting_pods=self.waiting_pods, clock=self.clock, rng=self.rng)
            except FrameworkError as e:
                raise ConfigError(f"profiles[{i}].plugins: {e}") from None
            fw = self.frameworks[prof.scheduler_name]
            # upstream NewFramework's profile checks (a bare Framework, as tests build, skips them)
            if len(fw.queue_sort_plugins) != 1:
                raise ConfigError(f"profiles[{i}].plugins: only one queue sort plugin required for profile with "
                                  f'scheduler name "{prof.scheduler_name}", but got {len(fw.queue_sort_plugins)}')
            if not fw.bind_plugins:
                raise ConfigError(f"profiles[{i}].plugins: at least one bind plugin is needed for profile with "
                                  f'scheduler name "{prof.scheduler_name}"')
        self.queue = PriorityQueue(
            self.frameworks, clock=self.clock,
            pod_initial_backoff=float(self.config.pod_initial_backoff_seconds),
            pod_max_backoff=float(self.config.pod_max_backoff_seconds),
            pod_lister=_pod_lister(informers), namespace_labels=_namespace_labels(informers))
        for fw in self.frameworks.values():
            fw.nominator = self.queue.nominator
            fw.spawner = self._spawn
            fw.pod_activator = self.queue.activate
            fw.event_recorder = self._record_event
        self.explainer = Explainer(explain_capacity)
        self.writer = ApiWriter(client, max_pending_events=max_pending_events)
        self.next_start_node_index = 0
        # the NumPy paths (NodeArrays filter walk, vector scores, vector select_host); off: the
        # scalar batch paths, with the same decisions (tests compare the two)
        self.vector_paths = True
        # within them, the vector reject paths (`filter_reject_rows`: NodeResourcesFit's statuses
        # from columns); off: rejected rows go through `filter_nodes` (tests compare the two)
        self.vector_rejects = True
        self.handlers = EventHandlers(self.cache, self.queue, self.frameworks,
                                      reject_waiting_pod=self._reject_waiting)
        self._pod_informer = informers.informer(PODS)
        self._node_informer = informers.informer(NODES)
        self.handlers.register(self._pod_informer, self._node_informer)
        # gang scheduling: PodGroup / Workload / Queue changes wake the gang's pods
        self.handlers.register_gang_informers(informers, self.frameworks)
        # volume plugins: PersistentVolume / claim / StorageClass / CSI changes wake their pods
        self._storage_informers = self.handlers.register_storage_informers(informers, self.frameworks)
        self.explainer.add_section("gang", gang_section(self.frameworks, self._pod_informer.store))
        self._tg: asyncio.TaskGroup | None = None
        self._binding_tasks: set[asyncio.Task[None]] = set()
        self._event_seq = itertools.count()
        self._event_stamps = EventStamps()
        self._hostname = socket.gethostname()
        # isomorphic events aggregated into series, as client-go's events.k8s.io broadcaster does
        self.event_series = EventSeries()
        self.scheduled_count = 0
        self.yields_per_pod = YIELDS_PER_POD
        self.metrics = metrics
        if metrics is not None:
            metrics.attach(self)

    # ---- lifecycle ----------------------------------------------------------------------
    async def run(self) -> None:
        """Wait for the pod/node informers (the composition root runs the factory), then
        schedule until cancelled."""
        await self._pod_informer.wait_for_sync()
        await self._node_informer.wait_for_sync()
        for inf in self._storage_informers:
            await inf.wait_for_sync()
        logger.info("scheduler started profiles=%s", ",".join(self.frameworks))
        try:
            async with asyncio.TaskGroup() as tg:
                self._tg = tg
                tg.create_task(self.queue.run(), name="scheduler-queue-flush")
                tg.create_task(self.writer.run(), name="scheduler-api-writer")
                tg.create_task(self._event_series_timer(), name="scheduler-event-series")
                while await self.schedule_one():
                    # let informers, binding tasks and the API writer run between pods: pop()
                    # does not suspend while activeQ has pods. Several yields, because a watch
                    # stream may need more than one loop iteration per event (upstream runs
                    # informers on their own goroutines; here they share the loop with us)
                    for _ in range(self.yields_per_pod):
                        await asyncio.sleep(0)
        finally:
            self._tg = None
            self.queue.close()
            for fw in self.frameworks.values():
                fw.close()

    async def _event_series_timer(self) -> None:
        """finishSeries every FINISH_SECONDS, refreshExistingEventSeries every REFRESH_SECONDS."""
        since_refresh = 0.0
        while True:
            await self.clock.sleep(FINISH_SECONDS)
            since_refresh += FINISH_SECONDS
            for write in self.event_series.finish(self.clock.now()):
                self.writer.emit_series(write)
            if since_refresh >= REFRESH_SECONDS:
                since_refresh = 0.0
                for write in self.event_series.refresh():
                    self.writer.emit_series(write)

    def _spawn(self, coro: Any, name: str) -> None:
        if self._tg is not None:
            self._tg.create_task(coro, name=name)
            return
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._binding_tasks.add(task)
        task.add_done_callback(self._binding_tasks.discard)

    async def wait_for_bindings(self) -> None:
        """Await binding tasks spawned outside `run()` (tests)."""
        while self._binding_tasks:
            await asyncio.gather(*list(self._binding_tasks), return_exceptions=True)

    def explain(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.explainer.explain(namespace, name)

    def what_if(self, pod: JsonDict, *, exclude_nodes: frozenset[str] = frozenset()) -> dict[str, Any]:
        """Where would `pod` land now? Runs PreFilter/Filter/Score on the current cache without
        assuming, reserving or writing anything (for the descheduler and debugging). Returns
        {"node": name | None, "message": FailedScheduling text when no node fits}."""
        fw = self.frameworks.get(scheduler_name(pod)) or next(iter(self.frameworks.values()))
        self.cache.update_snapshot(self.snapshot)
        spec = dict(pod.get("spec") or {})
        spec.pop("nodeName", None)
        pi = PodInfo({**pod, "spec": spec})
        saved = self.next_start_node_index
        try:
            if exclude_nodes:
                return self._what_if_excluding(fw, pi, exclude_nodes)
            result = self.schedule_pod(fw, CycleState(), pi)
            return {"node": result.suggested_host, "message": ""}
        except FitError as fe:
            return {"node": None, "message": str(fe)}
        except SchedulingError as se:
            return {"node": None, "message": se.status.message()}
        finally:
            self.next_start_node_index = saved

    def _what_if_excluding(self, fw: Framework, pi: PodInfo, exclude: frozenset[str]) -> dict[str, Any]:
        snap = self.snapshot
        kept = [n for n in snap.node_info_list if n.name not in exclude]
        full = snap.node_info_list
        snap.node_info_list = kept
        snap.mark_structural_change()
        vector, self.vector_paths = self.vector_paths, False  # no NodeArrays rebuild for a one-off subset
        try:
            result = self.schedule_pod(fw, CycleState(), pi)
            return {"node": result.suggested_host, "message": ""}
        finally:
            self.vector_paths = vector
            snap.node_info_list = full
            snap.mark_structural_change()

    def pending_pods(self) -> list[dict[str, Any]]:
        return self.queue.pending_pods()

    def _reject_waiting(self, uid: str) -> None:
        wp = self.waiting_pods.get(uid)
        if wp is not None:
            wp.reject("", "pod deleted")

    # ---- scheduling cycle ---------------------------------------------------------------
    async def schedule_one(self) -> bool:
        """One pod through the scheduling cycle. Returns False once the queue is closed."""
        q = await self.queue.pop()
        if q is None:
            return False
        pod = q.pod
        fw = self.frameworks.get(scheduler_name(pod))
        if fw is None:
            self.queue.done(q.uid)
            return True
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            self._record_event(pod, "Warning", "FailedScheduling", "Scheduling",
                               f"skip schedule deleting pod: {q.pod_info.key}")
            self.queue.done(q.uid)
            return True
        if self.cache.is_assumed(q.uid):
            self.queue.done(q.uid)
            return True
        try:
            await self._scheduling_cycle(fw, q)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # never let one pod kill the loop
            logger.exception("scheduling cycle crashed pod=%s", q.pod_info.key)
            try:
                self._handle_failure(fw, q, Status.as_error(str(e)), None, None)
            except Exception:
                logger.exception("failure handling crashed pod=%s", q.pod_info.key)
                self.queue.done(q.uid)
        return True

    async def _scheduling_cycle(self, fw: Framework, q: QueuedPodInfo) -> None:
        pi = q.pod_info
        state = CycleState()
        self.cache.update_snapshot(self.snapshot)
        rec: AttemptRecord | None = None
        if self.explainer.capacity > 0:
            now = self.clock.now()
            rec = AttemptRecord(pi.namespace, pi.name, pi.uid, fw.profile_name, q.attempts,
                                self.queue.scheduling_cycle, self._event_stamps.seconds(now, now.timestamp()))
        try:
            result = self.schedule_pod(fw, state, pi, rec)
        except FitError as fe:
            nominating: str | None = None
            diag = fe.diagnosis
            if fw.has_post_filter_plugins():
                filtered = diag.node_to_status
                if diag.absent_status is not None:
                    filtered = dict(filtered)
                    for ni in self.snapshot.node_info_list:
                        filtered.setdefault(ni.name, diag.absent_status)
                pres, pst = await fw.run_post_filter(state, pi, filtered)
                diag.post_filter_msg = pst.message()
                if pst.code == Code.ERROR:
                    logger.error("post filter failed pod=%s err=%s", pi.key, pst.message())
                if pres is not None:
                    nominating = pres.nominated_node_name
                if rec is not None:
                    rec.post_filter_status = pst
                    rec.nominated_node = nominating or ""
            self._handle_failure(fw, q, Status(Code.UNSCHEDULABLE, [str(fe)]), fe, nominating, rec=rec)
            return
        except SchedulingError as se:
            self._handle_failure(fw, q, se.status, None, None, rec=rec)
            return
        host = result.suggested_host
        assumed = _assumed_pod_info(pi, host)
        try:
            self.cache.assume_pod(assumed)
        except ValueError as e:
            self._handle_failure(fw, q, Status.as_error(str(e)), None, "", rec=rec)
            return
        self.queue.nominator.delete(pi.uid)
        st = fw.run_reserve(state, assumed, host)
        if not st.is_success():
            fw.run_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            self._fail_on_node(fw, q, st, host, rec)
            return
        st = fw.run_permit(state, assumed, host)
        if not st.is_success() and st.code != Code.WAIT:
            fw.run_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            self._fail_on_node(fw, q, st, host, rec)
            return
        if rec is not None:
            rec.selected_node = host
            rec.result = "Scheduled"
            self.explainer.record(rec)
        self._spawn(self._binding_cycle(fw, state, q, assumed, host, rec), name=f"bind:{pi.key}")

    def _fail_on_node(self, fw: Framework, q: QueuedPodInfo, st: Status, host: str,
                      rec: AttemptRecord | None, *, clear_nomination: bool = True) -> None:
        """A Reserve/Permit/binding rejection: a FitError over the one chosen node."""
        if st.is_rejected():
            diag = Diagnosis(node_to_status={host: st}, unschedulable_plugins={st.plugin} if st.plugin else set())
            fe = FitError(q.pod_info, 1, diag)
            self._handle_failure(fw, q, Status(st.code, [str(fe)], st.plugin), fe,
                                 "" if clear_nomination else None, rec=rec)
        else:
            self._handle_failure(fw, q, st, None, "" if clear_nomination else None, rec=rec)

    def schedule_pod(self, fw: Framework, state: CycleState, pi: PodInfo,
                     rec: AttemptRecord | None = None) -> ScheduleResult:
        """Upstream schedulePod: find feasible nodes, score them, pick one. Raises FitError /
        SchedulingError."""
        all_nodes = self.snapshot.node_info_list
        if not all_nodes:
            raise SchedulingError(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [NO_NODES_AVAILABLE]))
        feasible, diag = self._find_nodes_that_fit(fw, state, pi, all_nodes, rec)
        if rec is not None:
            rec.num_all_nodes = len(all_nodes)
            rec.node_statuses = dict(diag.node_to_status)  # to_dict adds the feasible ones
            rec.feasible_nodes = feasible
            rec.skipped_filter_plugins = sorted(state.skip_filter_plugins)
            rec.filter_plugins = [p.name() for p in fw.active_filter_plugins(state)]
        if not feasible:
            raise FitError(pi, len(all_nodes), diag)
        evaluated = len(diag.node_to_status) + len(feasible)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, evaluated, 1)
        rows = diag.feasible_rows
        if rows is not None and fw.has_score_plugins():
            got = self._prioritize_rows(fw, state, pi, feasible, rows, rec)
            host = (self.select_host_array(feasible, got) if isinstance(got, np.ndarray)
                    else self.select_host(feasible, got))
            return ScheduleResult(host, evaluated, len(feasible))
        totals = self._prioritize(fw, state, pi, feasible, rec)
        host = self.select_host(feasible, totals)
        return ScheduleResult(host, evaluated, len(feasible))

    def _find_nodes_that_fit(self, fw: Framework, state: CycleState, pi: PodInfo,
                             all_nodes: list[NodeInfo],
                             rec: AttemptRecord | None) -> tuple[list[NodeInfo], Diagnosis]:
        diag = Diagnosis()
        pre_res, st, narrowing = fw.run_pre_filter(state, pi, all_nodes)
        if not st.is_success():
            if not st.is_rejected():
                raise SchedulingError(st)
            diag.absent_status = st
            diag.pre_filter_msg = st.message()
            # upstream: the plugins whose PreFilterResults left no node (all of them), plus the
            # status's plugin (AddPluginStatus; run_pre_filter turns a Pending into an Error)
            diag.unschedulable_plugins.update(narrowing)
            if st.plugin:
                diag.unschedulable_plugins.add(st.plugin)
            if rec is not None:
                rec.pre_filter_status = st
            return [], diag
        # a nominated node (from an earlier preemption) is tried first
        nnn = nominated_node_name(pi.pod)
        if nnn:
            ni = self.snapshot.get(nnn)
            if ni is not None and (pre_res is None or pre_res.node_names is None or nnn in pre_res.node_names):
                d2 = Diagnosis()
                feasible = self._find_nodes_that_pass_filters(fw, state, pi, [ni], d2, advance=False)
                if feasible:
                    return feasible, diag
        nodes = all_nodes
        if pre_res is not None and pre_res.node_names is not None:
            smap = self.snapshot.node_info_map
            nodes = [smap[n] for n in sorted(pre_res.node_names) if n in smap]
            diag.absent_status = Status.unresolvable(
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]")
            # upstream: the narrowing plugins rejected the nodes left out, so they are among the
            # plugins whose events may make the pod schedulable
            diag.unschedulable_plugins.update(narrowing)
        feasible = self._find_nodes_that_pass_filters(fw, state, pi, nodes, diag, num_all_nodes=len(all_nodes))
        return feasible, diag

    def _find_nodes_that_pass_filters(self, fw: Framework, state: CycleState, pi: PodInfo,
                                      nodes: list[NodeInfo], diag: Diagnosis, *,
                                      advance: bool = True, num_all_nodes: int = 0) -> list[NodeInfo]:
        """Filter `nodes` round robin from next_start_node_index; with `advance`, the index then
        moves on by the nodes processed, modulo `num_all_nodes` (all the snapshot's nodes, as
        upstream, also when a PreFilterResult narrowed `nodes`; default len(nodes))."""
        n = len(nodes)
        total = num_all_nodes or n
        if n == 0:
            return []
        to_find = num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score, n)
        if not fw.has_score_plugins():
            to_find = 1
        start = self.next_start_node_index % n
        if not fw.has_filter_plugins():
            picked = [nodes[(start + i) % n] for i in range(min(to_find, n))]
            if advance:
                self.next_start_node_index = (self.next_start_node_index + len(picked)) % total
            return picked
        plugins = fw.active_filter_plugins(state)
        if not fw.nominator and self.vector_paths and advance and nodes is self.snapshot.node_info_list \
                and self.snapshot.tracked:
            arrays = self.snapshot.node_arrays()
            if arrays.safe and arrays.n == n:
                try:
                    rejects = fw.vector_reject_plugins if self.vector_rejects else frozenset()
                    rows, failed, processed = _filter_vector(plugins, fw.vector_filter_plugins, rejects, state, pi,
                                                             nodes, arrays, start, to_find)
                except _SlowPath:
                    pass  # as below: the node-by-node path reports it exactly
                else:
                    diag.node_to_status.update(failed)
                    for st in _distinct_statuses([st for _, st in failed]):  # shared statuses: once each
                        if st.plugin:
                            (diag.pending_plugins if st.code == Code.PENDING
                             else diag.unschedulable_plugins).add(st.plugin)
                    self.next_start_node_index = (self.next_start_node_index + processed) % total
                    diag.feasible_rows = rows
                    return arrays.nodes_at(rows)
        ordered = nodes[start:] + nodes[:start] if start else nodes
        if not fw.nominator:
            try:
                feasible, failed, processed = _filter_batched(plugins, state, pi, ordered, to_find)
            except _SlowPath:
                pass  # a Skip/Error status or a raising plugin: the node-by-node path reports it exactly
            else:
                statuses = diag.node_to_status
                for name, st in failed:
                    statuses[name] = st
                    if st.plugin:
                        (diag.pending_plugins if st.code == Code.PENDING else diag.unschedulable_plugins).add(st.plugin)
                if advance:
                    self.next_start_node_index = (self.next_start_node_index + processed) % total
                return feasible
        nominated = bool(len(fw.nominator or ()))
        run = fw.run_filter_with_nominated_pods if nominated else fw.run_filter
        feasible = []
        statuses = diag.node_to_status
        processed = 0
        for ni in ordered:
            processed += 1
            nst = run(state, pi, ni, plugins)
            if nst is None:
                feasible.append(ni)
                if len(feasible) >= to_find:
                    break
                continue
            if nst.code == Code.ERROR:
                if advance:  # upstream moves the index on past the nodes processed, error or not
                    self.next_start_node_index = (self.next_start_node_index + processed - 1) % total
                raise SchedulingError(nst)
            statuses[ni.name] = nst
            if nst.plugin:
                (diag.pending_plugins if nst.code == Code.PENDING else diag.unschedulable_plugins).add(nst.plugin)
        if advance:
            self.next_start_node_index = (self.next_start_node_index + processed) % total
        return feasible

    def _prioritize(self, fw: Framework, state: CycleState, pi: PodInfo, feasible: list[NodeInfo],
                    rec: AttemptRecord | None) -> list[int]:
        if not fw.has_score_plugins():
            return [1] * len(feasible)
        record = self._pre_score(fw, state, pi, feasible, rec)
        totals, st = fw.run_score(state, pi, feasible, record=record)
        self._scored(st, state, rec, record, totals)
        return totals

    def _prioritize_rows(self, fw: Framework, state: CycleState, pi: PodInfo, feasible: list[NodeInfo],
                         rows: IntArray, rec: AttemptRecord | None) -> IntArray | list[int]:
        """`_prioritize` with the feasible nodes' snapshot rows: vector scores and int64 totals
        (a plain list when the profile's weights could overflow int64: the runtime then sums
        Python integers)."""
        arrays = self.snapshot.node_arrays()
        state.write(FEASIBLE_ROWS_KEY, (arrays, rows, feasible))
        record = self._pre_score(fw, state, pi, feasible, rec)
        totals, st = fw.run_score(state, pi, feasible, record=record, arrays=arrays, rows=rows)
        self._scored(st, state, rec, record, totals)
        return totals

    @staticmethod
    def _pre_score(fw: Framework, state: CycleState, pi: PodInfo, feasible: list[NodeInfo],
                   rec: AttemptRecord | None) -> dict[str, Any] | None:
        """PreScore (raising on failure); the dict explain's record collects scores in, if any."""
        st = fw.run_pre_score(state, pi, feasible)
        if not st.is_success():
            raise SchedulingError(st)
        return {} if rec is not None else None

    @staticmethod
    def _scored(st: Status, state: CycleState, rec: AttemptRecord | None, record: dict[str, Any] | None,
                totals: IntArray | list[int]) -> None:
        """Raise on a failed Score; else keep the scores in explain's record, if any."""
        if not st.is_success():
            raise SchedulingError(st)
        if rec is not None and record is not None:
            rec.scores = record
            rec.totals = totals
            rec.skipped_score_plugins = sorted(state.skip_score_plugins)

    def select_host_array(self, nodes: list[NodeInfo], totals: IntArray) -> str:
        """`select_host` over an int64 array: the same rows tie, the same single draw picks one."""
        m = len(totals)
        if m < 2:
            return nodes[0].name
        ties = (totals == _MAX_REDUCE(totals)).nonzero()[0]  # 1-D: flatnonzero without its wrappers
        if len(ties) == 1:
            return nodes[int(ties[0])].name
        return nodes[int(ties[self.rng.randrange(len(ties))])].name

    def select_host(self, nodes: list[NodeInfo], totals: list[int]) -> str:
        """Highest total; a tie at the top is broken uniformly at random (upstream selectHost's
        reservoir sampling over the nodes with the top score keeps each with probability 1/k; one
        `randrange(k)` over the tied nodes, in node order, draws from the same distribution)."""
        best = max(totals)
        ties = [i for i, s in enumerate(totals) if s == best]
        if len(ties) == 1:
            return nodes[ties[0]].name
        return nodes[ties[self.rng.randrange(len(ties))]].name

    # ---- binding cycle ------------------------------------------------------------------
    async def _binding_cycle(self, fw: Framework, state: CycleState, q: QueuedPodInfo,
                             assumed: PodInfo, host: str, rec: AttemptRecord | None) -> None:
        try:
            st = await fw.wait_on_permit(assumed)
            if st.is_success():
                st = await fw.run_pre_bind(state, assumed, host)
            if st.is_success():
                st = await fw.run_bind(state, assumed, host)
                if st.code == Code.SKIP:
                    st = Status.as_error("no bind plugin bound the pod")
            if not st.is_success():
                self._handle_binding_error(fw, state, q, assumed, host, st, rec)
                return
            self.cache.finish_binding(assumed)
            self.scheduled_count += 1
            m = self.metrics
            if m is not None:
                now = self.clock.monotonic()
                m.attempt(SCHEDULED, fw.profile_name, now - q.attempt_start)
                first = q.initial_attempt_timestamp
                m.bound(q.attempts, now - first if first is not None else None)
            self._record_event(q.pod, "Normal", "Scheduled", "Binding",
                               f"Successfully assigned {assumed.key} to {host}")
            if rec is not None:
                rec.result = "Bound"
            await fw.run_post_bind(state, assumed, host)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            logger.exception("binding cycle crashed pod=%s", assumed.key)
            self._handle_binding_error(fw, state, q, assumed, host, Status.as_error(str(e)), rec)
        finally:
            self.queue.done(q.uid)

    def _handle_binding_error(self, fw: Framework, state: CycleState, q: QueuedPodInfo, assumed: PodInfo,
                              host: str, st: Status, rec: AttemptRecord | None) -> None:
        fw.run_unreserve(state, assumed, host)
        try:
            self.cache.forget_pod(assumed)
        except ValueError:
            logger.exception("forget pod failed pod=%s", assumed.key)
        # the resources it held may let other pods fit
        uid = assumed.uid
        self.queue.move_all_to_active_or_backoff(
            EVENT_ASSIGNED_POD_DELETE, assumed.pod, None,
            (lambda p: (p.get("metadata") or {}).get("uid") != uid) if st.is_rejected() else None)
        if rec is not None:
            rec.result = "BindingFailed"
        self._fail_on_node(fw, q, st, host, rec)

    # ---- failure handling ---------------------------------------------------------------
    def _handle_failure(self, fw: Framework, q: QueuedPodInfo, st: Status, fe: FitError | None,
                        nominating: str | None, *, rec: AttemptRecord | None = None) -> None:
        """Upstream handleSchedulingFailure: requeue, nominate, event, PodScheduled condition."""
        pi = q.pod_info
        rejected = st.is_rejected()
        reason = REASON_UNSCHEDULABLE if rejected else REASON_SCHEDULER_ERROR
        if self.metrics is not None:
            self.metrics.attempt(UNSCHEDULABLE if rejected else ERROR, fw.profile_name,
                                 self.clock.monotonic() - q.attempt_start)
        msg = st.message()  # with a FitError, every caller hands its message as st's one reason
        if fe is not None:
            q.unschedulable_plugins = set(fe.diagnosis.unschedulable_plugins)
            q.pending_plugins = set(fe.diagnosis.pending_plugins)
            q.consecutive_errors = 0
        elif rejected:
            q.unschedulable_plugins = set()
            q.pending_plugins = set()
        else:
            q.unschedulable_plugins = set()
            q.pending_plugins = set()
            q.consecutive_errors += 1
        if rec is not None:
            rec.message = msg
            rec.result = rec.result if rec.result == "BindingFailed" else reason
            self.explainer.record(rec)
        logger.debug("unable to schedule pod=%s reason=%s msg=%s", pi.key, reason, msg)
        current = self._pod_informer.store.get(pi.key)
        if current is None or (current.get("metadata") or {}).get("uid") != pi.uid:
            logger.debug("pod deleted, not requeued pod=%s", pi.key)
            self.queue.done(pi.uid)
            return
        if (current.get("spec") or {}).get("nodeName"):
            logger.debug("pod already assigned, not requeued pod=%s", pi.key)
            self.queue.done(pi.uid)
            return
        if current is not pi.pod:
            q.pod_info = PodInfo(current)
        self.queue.add_unschedulable_if_not_present(q, self.queue.scheduling_cycle)
        if nominating is not None:
            if nominating:
                self.queue.nominator.add(q.pod_info, nominating)
            else:
                self.queue.nominator.delete(pi.uid)
        self._record_event(current, "Warning", "FailedScheduling", "Scheduling", truncate_message(msg))
        self._update_pod_status(current, reason, msg, nominating)

    def _update_pod_status(self, pod: JsonDict, reason: str, msg: str, nominating: str | None) -> None:
        status = pod.get("status") or {}
        old = next((c for c in status.get("conditions") or () if c.get("type") == "PodScheduled"), None)
        cond_changed = old is None or old.get("status") != "False" or old.get("reason") != reason \
            or old.get("message") != msg
        cur_nnn = status.get("nominatedNodeName") or ""
        nnn_changed = nominating is not None and nominating != cur_nnn
        if not cond_changed and not nnn_changed:
            return
        patch: JsonDict = {}
        if cond_changed:
            ltt = old.get("lastTransitionTime") if old is not None and old.get("status") == "False" else None
            patch.update(condition_status_patch(pod, {
                "type": "PodScheduled", "status": "False", "lastProbeTime": None,
                "lastTransitionTime": ltt or rfc3339(self.clock.now()), "reason": reason, "message": msg,
            }))
        if nnn_changed:
            patch["nominatedNodeName"] = nominating or None
        meta = pod.get("metadata") or {}
        self.writer.patch_status(meta.get("namespace") or "default", meta.get("name") or "", patch)

    def _record_event(self, pod: JsonDict, type_: str, reason: str, action: str, message: str, *,
                      related: JsonDict | None = None) -> None:
        meta = pod.get("metadata") or {}
        now = self.clock.now()
        ns = meta.get("namespace") or "default"
        name = meta.get("name") or ""
        # upstream builds one event recorder per profile, named by its schedulerName
        component = str((pod.get("spec") or {}).get("schedulerName") or DEFAULT_COMPONENT)
        seq = next(self._event_seq)
        epoch = now.timestamp()
        stamp = int(epoch * 1e9) + seq
        event_time = self._event_stamps.micro(now, epoch)
        # events.k8s.io/v1 as client-go's recorder makes it (stored as core/v1): eventTime, the
        # reporting controller and instance, no deprecated source/first/last timestamp/count
        event: JsonDict = {
            "kind": "Event",
            "apiVersion": "v1",
            "metadata": {"name": f"{name}.{stamp:x}", "namespace": ns},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": ns, "name": name,
                               "uid": meta.get("uid") or "", "resourceVersion": meta.get("resourceVersion") or ""},
            "reason": reason,
            "message": message,
            "type": type_,
            "eventTime": event_time,
            "action": action,
            "reportingComponent": component,
            "reportingInstance": f"{component}-{self._hostname}",
        }
        if related is not None:
            rmeta = related.get("metadata") or {}
            event["related"] = {"apiVersion": "v1", "kind": "Pod", "namespace": rmeta.get("namespace") or ns,
                                "name": rmeta.get("name") or "", "uid": rmeta.get("uid") or ""}
        write = self.event_series.observe(event, now)
        if write is None:
            return
        if write.patch is None:
            self.writer.emit_event(event)
        else:
            self.writer.emit_series(write)


_MIN_FILTER_CHUNK = 64


def _filter_batched(plugins: list[Any], state: CycleState, pi: PodInfo, ordered: list[NodeInfo],
                    to_find: int) -> tuple[list[NodeInfo], list[tuple[str, Status]], int]:
    """Filter `ordered` plugin by plugin over chunks of nodes (each plugin's `filter_nodes`),
    with the result of the sequential walk: the first `to_find` feasible nodes, the rejected
    nodes before the last of them (name, first rejecting plugin's status), and how many nodes
    that walk processed. A chunk holds as many nodes as are still wanted (at least 64), so a
    cluster with room evaluates about `to_find` nodes, as upstream. Raises _SlowPath on any
    status that is neither Success nor a rejection, or when a plugin raises."""
    feasible: list[NodeInfo] = []
    failed: list[tuple[str, Status]] = []
    rejected = _REJECTED
    n = len(ordered)
    pos = 0
    try:
        while pos < n:
            size = to_find - len(feasible)
            chunk = ordered[pos:pos + (size if size > _MIN_FILTER_CHUNK else _MIN_FILTER_CHUNK)]
            alive = chunk
            fails: dict[str, Status] = {}
            for pl in plugins:
                sts = pl.filter_nodes(state, pi, alive)
                if sts.count(None) == len(alive):
                    continue
                plugin_name = pl.NAME or pl.name()
                survivors: list[NodeInfo] = []
                for ni, st in zip(alive, sts, strict=True):
                    if st is None:
                        survivors.append(ni)
                        continue
                    if st.code not in rejected:
                        raise _SlowPath
                    fails[ni.name] = st if st.plugin == plugin_name else st.with_plugin(plugin_name)
                alive = survivors
                if not alive:
                    break
            for i, ni in enumerate(chunk):
                st = fails.get(ni.name) if fails else None
                if st is None:
                    feasible.append(ni)
                    if len(feasible) >= to_find:
                        return feasible, failed, pos + i + 1
                else:
                    failed.append((ni.name, st))
            pos += len(chunk)
    except _SlowPath:
        raise
    except asyncio.CancelledError:
        raise
    except Exception as e:
        raise _SlowPath from e
    return feasible, failed, n


def _filter_vector(plugins: list[Any], vector_names: set[str], reject_names: AbstractSet[str],
                   state: CycleState, pi: PodInfo, nodes: list[NodeInfo], arrays: NodeArrays, start: int,
                   to_find: int) -> tuple[IntArray, list[tuple[str, Status]], int]:
    """`_filter_batched` over snapshot rows: the window of rows visited from `start` (round
    robin, as upstream) is filtered plugin by plugin; a plugin with a vector fast accept
    (`filter_accept_mask`) is asked through `filter_nodes` only about the rows it could not
    accept, any other plugin about every row still alive. Returns the rows of the first
    `to_find` feasible nodes in visiting order, the rejected nodes before the last of them
    (name, status) and how many nodes the sequential walk processed. Raises _SlowPath as
    `_filter_batched` does."""
    rejected = _REJECTED
    n = len(nodes)
    found: list[IntArray] = []
    n_found = 0
    failed: list[tuple[str, Status]] = []
    pos = 0
    try:
        while pos < n:
            want = to_find - n_found
            size = min(want if want > _MIN_FILTER_CHUNK else _MIN_FILTER_CHUNK, n - pos)
            chunk = arrays.window(start, pos, size)
            alive = chunk
            fails: dict[int, Status] = {}
            for pl in plugins:
                plugin_name = pl.NAME or pl.name()
                check = alive
                if plugin_name in vector_names:
                    mask = pl.filter_accept_mask(state, pi, arrays, alive)
                    if mask is not None:
                        if _COUNT_NONZERO(mask) == len(mask):  # mask.all(), without the ufunc reduce
                            continue
                        check = alive[~mask]
                if plugin_name in reject_names:
                    rej = pl.filter_reject_rows(state, pi, arrays, check)
                    if rej is not None:
                        bad_rows, bad_sts = rej
                        if not len(bad_rows):
                            continue
                        if bad_sts[0].plugin != plugin_name:  # one plugin's statuses: all or none named
                            bad_sts = [st.with_plugin(plugin_name) for st in bad_sts]
                        fails.update(zip(bad_rows.tolist(), bad_sts, strict=True))
                        alive = _without(alive, bad_rows, arrays.n)
                        if not len(alive):
                            break
                        continue
                check_rows = check.tolist()
                sts = pl.filter_nodes(state, pi, [nodes[r] for r in check_rows])
                if sts.count(None) == len(check_rows):
                    continue
                bad: list[int] = []
                for r, st in zip(check_rows, sts, strict=True):
                    if st is None:
                        continue
                    if st.code not in rejected:
                        raise _SlowPath
                    fails[r] = st if st.plugin == plugin_name else st.with_plugin(plugin_name)
                    bad.append(r)
                alive = _without(alive, np.asarray(bad, dtype=np.int64), arrays.n)
                if not len(alive):
                    break
            if n_found + len(alive) >= to_find:
                take = alive[:to_find - n_found]
                found.append(take)
                processed = (int(take[-1]) - start) % n + 1  # take is never empty: to_find > n_found
                if fails:
                    for r in _visit_order(fails, start, n):
                        if (r - start) % n < processed:
                            failed.append((nodes[r].name, fails[r]))
                return np.concatenate(found), failed, processed
            found.append(alive)
            n_found += len(alive)
            if fails:
                failed.extend([(nodes[r].name, fails[r]) for r in _visit_order(fails, start, n)])
            pos += size
    except _SlowPath:
        raise
    except asyncio.CancelledError:
        raise
    except Exception as e:
        raise _SlowPath from e
    rows = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    return rows, failed, n


def _without(rows: IntArray, drop: IntArray, n: int) -> IntArray:
    """`rows` (distinct rows of 0..n-1) without those in `drop`, order kept: one scatter and one
    gather over a scratch flag per row (np.isin sorts both sides)."""
    flag = np.zeros(n, dtype=np.bool_)
    flag[drop] = True
    out: IntArray = rows[~flag[rows]]
    return out


def _distinct_statuses(statuses: Collection[Status]) -> list[Status]:
    """The distinct Status instances (by identity) of `statuses`, first seen first; the walk
    stops once every one is found (rejections share a few instances)."""
    want = set(map(id, statuses))
    out: list[Status] = []
    for st in statuses:
        key = id(st)
        if key in want:
            want.discard(key)
            out.append(st)
            if not want:
                break
    return out


def _visit_order(rows: dict[int, Status], start: int, n: int) -> list[int]:
    """The rows of `rows` in round-robin visiting order from `start` (distinct keys: a sort
    of their offsets)."""
    arr = np.fromiter(rows, dtype=np.int64, count=len(rows))
    out: list[int] = arr[np.argsort((arr - start) % n, kind="stable")].tolist()
    return out


def _assumed_pod_info(pi: PodInfo, host: str) -> PodInfo:
    """A copy of `pi` whose pod carries spec.nodeName = host (the shared pod is not mutated)."""
    return pi.on_node(host)


def _in_tree_registry() -> dict[str, type[Plugin]]:
    try:
        from scheduler.plugins.registry import in_tree_registry
    except ImportError:
        logger.warning("scheduler.plugins.registry not available; no in-tree plugins")
        return {}
    return dict(in_tree_registry())
