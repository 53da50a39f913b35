"""The scheduling queue: activeQ, backoffQ, unschedulablePods, nominator (layer L4).

Upstream: pkg/scheduler/backend/queue/scheduling_queue.go (+ active_queue.go, backoff_queue.go,
nominator.go), v1.33 with its default feature gates (SchedulerQueueingHints and
SchedulerPopFromBackoffQ on).

- activeQ: heap ordered by the profile's QueueSort `less` (PrioritySort: priority desc, then
  timestamp asc). `pop()` blocks until it has a pod; when activeQ is empty it pops the head of
  backoffQ's plugin-rejected half instead (SchedulerPopFromBackoffQ), never an errored pod.
  Popping clears the pod's unschedulable/pending plugins for the next attempt.
- backoffQ: two heaps, pods rejected by plugins and pods that failed with an error (no plugin).
  Backoff = initial x 2^(attempts-1), capped: with 1 s / 10 s, attempts 1, 2, 3, 4, 5 -> 1, 2,
  4, 8, 10 s. A pod with 0 attempts has none. With `pop_from_backoff` the expiry is truncated to
  a whole-second window and a pod is still backing off while its window is not before the
  current one (so a 1 s backoff begun at t=10.3 ends at 12.0: expiry window 11, done once the
  clock's window is 12); within a window the plugin-rejected heap is ordered like activeQ.
- unschedulablePods: pods a plugin rejected (remembering which plugins: unschedulable_plugins,
  pending_plugins), plus pods gated at PreEnqueue (gated=True, gating_plugin set). Gated pods
  are never popped. PreEnqueue runs when a pod moves to activeQ, and (pop_from_backoff) when it
  moves to backoffQ instead of when it leaves it.

A cluster event (`move_all_to_active_or_backoff`) moves an unschedulable pod only if one of the
plugins that rejected it registered a matching ClusterEvent and its queueing hint says Queue
(a hint that raises counts as Queue): a pending plugin's Queue skips the backoff, an
unschedulable plugin's Queue goes through it. Gated pods are looked at only for events their
gating plugin registered. Pods rejected by no plugin (errors) always requeue after backoff.
Bound-pod adds and label updates look only at pods with a required affinity term matching the
bound pod or rejected by PodTopologySpread in its namespace (upstream's cross-topology
pre-filter). Events that arrive while a pod is being scheduled are kept (in-flight events) and
replayed when that pod comes back as unschedulable, so they are not lost; so is an Activate of
an in-flight pod. `run()` flushes finished backoffs every second (aligned to the windows) and
unschedulable pods older than 5 min every 30 s.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from minik3s.api.types import JsonDict
from minik3s.utils.clock import Clock
from scheduler.backend.heap import KeyedHeap
from scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    Status,
)
from scheduler.framework.types import PodInfo
from scheduler.plugins.helpers import CompiledTerm, NamespaceLabels, compiled_affinity

logger = logging.getLogger(__name__)

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
POD_MAX_IN_UNSCHEDULABLE_DURATION = 300.0
BACKOFF_FLUSH_INTERVAL = 1.0
UNSCHEDULABLE_FLUSH_INTERVAL = 30.0
# upstream backoffQOrderingWindowDuration (KEP-5142)
BACKOFF_ORDERING_WINDOW = 1.0

# Well-known events (upstream framework/events.go labels)
EVENT_NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
EVENT_ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd")
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE,
                                            "UnschedulablePodUpdate")
EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD, "UnschedulablePodAdd")
EVENT_UNSCHEDULED_POD_DELETE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.DELETE,
                                            "UnschedulablePodDelete")
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
EVENT_FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "ForceActivate")
# `event` labels of scheduler_queue_incoming_pods_total that are no cluster event (upstream's)
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"

# a bound pod's change that may free room for a pod NodeResourcesFit rejected: every parked pod is
# looked at, not only the cross-topology ones (upstream AssignedPodUpdated)
_POD_SCALE_DOWN = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN)
_POD_TOPOLOGY_SPREAD = "PodTopologySpread"

_ACTIVE, _BACKOFF, _UNSCHEDULABLE = "activeQ", "backoffQ", "unschedulablePods"
# the `queue` label upstream's metrics give each of them
_QUEUE_LABEL = {_ACTIVE: "active", _BACKOFF: "backoff", _UNSCHEDULABLE: "unschedulable"}

PodLister = Callable[[str, str], JsonDict | None]


class QueueFramework(Protocol):
    """What the queue needs from a profile's Framework."""

    def queue_sort_less(self, a: Any, b: Any) -> bool: ...

    def run_pre_enqueue(self, pod: JsonDict) -> Status: ...

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]: ...


@dataclass(slots=True)
class QueuedPodInfo:
    pod_info: PodInfo
    timestamp: float = 0.0
    attempts: int = 0
    # when the pod first entered activeQ (upstream InitialAttemptTimestamp, the SLI's start)
    initial_attempt_timestamp: float | None = None
    # when the current attempt started (popped), for scheduler_scheduling_attempt_duration_seconds
    attempt_start: float = 0.0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated: bool = False
    gating_plugin: str = ""
    # errors in a row (the scheduler's bookkeeping; the backoff, as upstream v1.33's, counts
    # attempts only)
    consecutive_errors: int = 0
    # spec.schedulerName, read once (immutable on a pod): the requeue walk asks it per event
    profile: str | None = None
    # when the backoff ends, worked out once (upstream BackoffExpiration): it depends on the
    # timestamp and the attempts, so it is forgotten when either changes (a pop, a failure)
    backoff_expiration: float | None = None

    @property
    def pod(self) -> JsonDict:
        return self.pod_info.pod

    @property
    def uid(self) -> str:
        return self.pod_info.uid


def scheduler_name(pod: JsonDict) -> str:
    return (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"


def nominated_node_name(pod: JsonDict) -> str:
    return (pod.get("status") or {}).get("nominatedNodeName") or ""


class Nominator:
    """Pods nominated to nodes (by preemption): node -> [PodInfo]. Filter on a node accounts for
    nominated pods of equal or higher priority. With a `pod_lister` ((namespace, name) -> the
    informer's current pod or None), a pod that is gone or already bound is not nominated
    (upstream nominator's podLister check)."""

    def __init__(self, pod_lister: PodLister | None = None) -> None:
        self._by_node: dict[str, list[PodInfo]] = {}
        self._node_of: dict[str, str] = {}
        self.pod_lister = pod_lister  # public: tests may drop it (upstream NewPodNominator(nil))

    def add(self, pi: PodInfo, node_name: str = "") -> None:
        """Nominate `pi` to `node_name` (upstream ModeOverride), or with "" to the node its
        status names (ModeNoop: none named, none nominated)."""
        self.delete(pi.uid)
        node = node_name or nominated_node_name(pi.pod)
        if not node or pi.node_name:
            return
        if self.pod_lister is not None:
            current = self.pod_lister(pi.namespace, pi.name)
            if current is None or (current.get("spec") or {}).get("nodeName"):
                return
        self._node_of[pi.uid] = node
        self._by_node.setdefault(node, []).append(pi)

    def delete(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        lst = [p for p in self._by_node.get(node, ()) if p.uid != uid]
        if lst:
            self._by_node[node] = lst
        else:
            self._by_node.pop(node, None)

    def update(self, old_uid: str, pi: PodInfo, old_pod: JsonDict | None = None) -> None:
        """Keep an in-memory nomination when neither the old nor the new API object carries one
        (upstream UpdateNominatedPod); a nomination the update adds, changes or removes is
        taken from the new object."""
        keep = ""
        if not nominated_node_name(pi.pod) and (old_pod is None or not nominated_node_name(old_pod)):
            keep = self._node_of.get(old_uid, "")
        self.delete(old_uid)
        self.add(pi, keep)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """A copy: callers may change the list."""
        lst = self._by_node.get(node_name)
        return list(lst) if lst else []

    def nodes(self) -> list[str]:
        """The nodes at least one pod is nominated to."""
        return list(self._by_node)

    def nominated_node(self, uid: str) -> str:
        return self._node_of.get(uid, "")

    def __len__(self) -> int:
        return len(self._node_of)


@dataclass(slots=True)
class _InFlightEvent:
    seq: int
    event: ClusterEvent
    old: Any
    new: Any


class _BackoffQ:
    """backoffQ as upstream's backoffQueue: pods some plugin rejected (`rejected`, the heap a pop
    may take from when activeQ is empty) and pods that failed with an error (`errored`), each
    ordered by backoff expiry; `rejected` breaks ties with activeQ's order when the expiries
    are windows."""

    __slots__ = ("rejected", "errored")

    def __init__(self, rejected_less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
                 errored_less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self.rejected: KeyedHeap[QueuedPodInfo] = KeyedHeap(_uid, rejected_less)
        self.errored: KeyedHeap[QueuedPodInfo] = KeyedHeap(_uid, errored_less)

    def add(self, q: QueuedPodInfo) -> None:
        if q.unschedulable_plugins or q.pending_plugins:
            self.errored.delete(q.uid)
            self.rejected.add_or_update(q)
        else:
            self.rejected.delete(q.uid)
            self.errored.add_or_update(q)

    def refresh(self, q: QueuedPodInfo) -> None:
        """Re-place an item whose pod changed."""
        (self.rejected if q.uid in self.rejected else self.errored).add_or_update(q)

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self.rejected.get(uid) or self.errored.get(uid)

    def delete(self, uid: str) -> QueuedPodInfo | None:
        return self.rejected.delete(uid) or self.errored.delete(uid)

    def pop_completed(self, backing_off: Callable[[QueuedPodInfo], bool]) -> list[QueuedPodInfo]:
        out: list[QueuedPodInfo] = []
        for heap in (self.rejected, self.errored):
            while True:
                q = heap.peek()
                if q is None or backing_off(q):
                    break
                heap.pop()
                out.append(q)
        return out

    def __contains__(self, uid: object) -> bool:
        return uid in self.rejected or uid in self.errored

    def __len__(self) -> int:
        return len(self.rejected) + len(self.errored)

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        return itertools.chain(self.rejected, self.errored)


class PriorityQueue:
    def __init__(
        self,
        frameworks: Mapping[str, QueueFramework],
        *,
        clock: Clock | None = None,
        pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        pod_max_in_unschedulable_duration: float = POD_MAX_IN_UNSCHEDULABLE_DURATION,
        pop_from_backoff: bool = True,
        pod_lister: PodLister | None = None,
        namespace_labels: NamespaceLabels | None = None,
    ) -> None:
        self._frameworks = frameworks
        self._clock = clock or Clock()
        self.pod_initial_backoff = pod_initial_backoff
        self.pod_max_backoff = pod_max_backoff
        self.pod_max_in_unschedulable_duration = pod_max_in_unschedulable_duration
        # upstream's SchedulerPopFromBackoffQ feature gate (beta, on by default in v1.33)
        self.pop_from_backoff = pop_from_backoff
        # namespace -> labels, for affinity terms' namespaceSelector in the bound-pod pre-filter
        self._namespace_labels = namespace_labels
        first = next(iter(frameworks.values()), None)
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] = (
            first.queue_sort_less if first is not None else (lambda a, b: a.timestamp < b.timestamp))
        self._less = less
        # the profile's precomputed sort keys, when it offers them (Framework.queue_sort_key):
        # the same order as `less`, compared in C
        sort_key: Callable[[QueuedPodInfo], tuple[Any, ...] | None] | None = (
            getattr(first, "queue_sort_key", None) if first is not None else (lambda q: (q.timestamp,)))
        self._active: KeyedHeap[QueuedPodInfo] = KeyedHeap(_uid, less, sort_key=sort_key)
        self._backoff = _BackoffQ(
            self._backoff_less_with_priority if pop_from_backoff else self._backoff_less, self._backoff_less)
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._events: dict[str, dict[str, list[ClusterEventWithHint]]] = {
            name: fw.events_to_register() for name, fw in frameworks.items()}
        self._match_cache: dict[ClusterEvent, bool] = {}
        # (event, profile) -> the plugins of that profile with a registration matching the event
        self._matching_plugins: dict[tuple[ClusterEvent, str], frozenset[str]] = {}
        self.nominator = Nominator(pod_lister)
        self._has_items = asyncio.Event()
        self._closed = False
        self.scheduling_cycle = 0
        self._seq = itertools.count(1)
        self._in_flight: dict[str, int] = {}  # uid -> seq at pop
        self._in_flight_events: list[_InFlightEvent] = []
        # (queue, event) of every pod entering activeQ / backoffQ / unschedulablePods, for the
        # scheduler_queue_incoming_pods_total counter; None = not counted
        self.on_incoming: Callable[[str, str], None] | None = None

    # ---- helpers ------------------------------------------------------------------------
    def _backoff_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.backoff_expiry(a) < self.backoff_expiry(b)

    def _backoff_less_with_priority(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        ea, eb = self.backoff_expiry(a), self.backoff_expiry(b)
        if ea != eb:
            return ea < eb
        return self._less(a, b)

    def _align(self, t: float) -> float:
        """The start of t's ordering window (t itself without pop_from_backoff)."""
        if not self.pop_from_backoff:
            return t
        return math.floor(t / BACKOFF_ORDERING_WINDOW) * BACKOFF_ORDERING_WINDOW

    def backoff_duration(self, q: QueuedPodInfo) -> float:
        """initial x 2^(attempts-1) capped at max (upstream calculateBackoffDuration)."""
        n = q.attempts
        if n <= 0:
            return 0.0
        d = self.pod_initial_backoff
        for _ in range(1, n):
            if d > self.pod_max_backoff - d:
                return self.pod_max_backoff
            d += d
        return min(d, self.pod_max_backoff)

    def backoff_expiry(self, q: QueuedPodInfo) -> float:
        """When the backoff ends (its window with pop_from_backoff); -inf for a pod never tried."""
        if q.attempts <= 0:
            return -math.inf
        exp = q.backoff_expiration
        if exp is None:
            exp = q.backoff_expiration = self._align(q.timestamp + self.backoff_duration(q))
        return exp

    def is_backing_off(self, q: QueuedPodInfo) -> bool:
        """Still backing off while the expiry is not before now (its window not before now's)."""
        return not self.backoff_expiry(q) < self._align(self._clock.monotonic())

    def _framework_for(self, pod: JsonDict) -> QueueFramework | None:
        return self._frameworks.get(scheduler_name(pod))

    def _poppable(self) -> bool:
        return bool(len(self._active) or (self.pop_from_backoff and len(self._backoff.rejected)))

    def _wake(self) -> None:
        if self._closed or self._poppable():
            self._has_items.set()

    def _run_pre_enqueue(self, q: QueuedPodInfo) -> bool:
        fw = self._framework_for(q.pod)
        st = fw.run_pre_enqueue(q.pod) if fw is not None else Status.success()
        if st.is_success():
            q.gated = False
            q.gating_plugin = ""
            return True
        q.gated = True
        q.gating_plugin = st.plugin
        q.unschedulable_plugins = {st.plugin} if st.plugin else set()
        q.pending_plugins = set()
        return False

    def _incoming(self, queue: str, event: str) -> None:
        rec = self.on_incoming
        if rec is not None:
            rec(_QUEUE_LABEL[queue], event)

    def _to_unschedulable(self, q: QueuedPodInfo, event: str) -> None:
        self._unschedulable[q.uid] = q
        self._incoming(_UNSCHEDULABLE, event)

    def _to_backoff(self, q: QueuedPodInfo, event: str) -> None:
        self._backoff.add(q)
        self._incoming(_BACKOFF, event)

    def _move_to_active(self, q: QueuedPodInfo, event: str) -> bool:
        """Run PreEnqueue (not for a pod whose backoff completed: with pop_from_backoff it ran
        when the pod entered backoffQ); gated pods go (back) to unschedulablePods."""
        if not (self.pop_from_backoff and event == BACKOFF_COMPLETE) and not self._run_pre_enqueue(q):
            if q.uid not in self._active and q.uid not in self._backoff and q.uid not in self._unschedulable:
                self._to_unschedulable(q, event)
            return False
        self._unschedulable.pop(q.uid, None)
        self._backoff.delete(q.uid)
        if q.initial_attempt_timestamp is None:
            q.initial_attempt_timestamp = self._clock.monotonic()
        self._active.add_or_update(q)
        self._incoming(_ACTIVE, event)
        self._wake()
        return True

    def _move_to_backoff(self, q: QueuedPodInfo, event: str) -> bool:
        """With pop_from_backoff PreEnqueue runs here (a pod may be popped straight out of
        backoffQ); a gated pod goes to unschedulablePods instead."""
        if self.pop_from_backoff and not self._run_pre_enqueue(q):
            if q.uid not in self._unschedulable:
                self._to_unschedulable(q, event)
            return False
        self._unschedulable.pop(q.uid, None)
        self._to_backoff(q, event)
        self._wake()
        return True

    def _new_qpi(self, pod: JsonDict) -> QueuedPodInfo:
        now = self._clock.monotonic()
        return QueuedPodInfo(PodInfo(pod), timestamp=now)

    # ---- pod lifecycle ------------------------------------------------------------------
    def add(self, pod: JsonDict) -> None:
        q = self._new_qpi(pod)
        uid = q.uid
        if uid in self._active or uid in self._backoff or uid in self._unschedulable:
            self.update(None, pod)
            return
        self._add(q, EVENT_UNSCHEDULED_POD_ADD.label)

    def _add(self, q: QueuedPodInfo, event: str) -> None:
        if self._move_to_active(q, event):
            self.nominator.add(q.pod_info)

    def activate(self, pods: list[JsonDict], *, gated_by: str | None = None) -> None:
        """Move the given pods (if in backoffQ / unschedulablePods) to activeQ (ForceActivate).
        A pod being scheduled gets a ForceActivate in-flight event instead, so that it is
        requeued when it comes back. With `gated_by`, only pods held at PreEnqueue by that
        plugin (e.g. DefaultPreemption releasing a preemptor whose requeue events arrived while
        it was held)."""
        for pod in pods:
            uid = (pod.get("metadata") or {}).get("uid") or ""
            q = self._unschedulable.get(uid) or self._backoff.get(uid)
            if q is None:
                if gated_by is None and uid in self._in_flight:
                    self._in_flight_events.append(_InFlightEvent(next(self._seq), EVENT_FORCE_ACTIVATE, None, pod))
                continue
            if gated_by is not None and not (q.gated and q.gating_plugin == gated_by):
                continue
            self._backoff.delete(uid)  # gated on the way, it lands in unschedulablePods
            self._move_to_active(q, EVENT_FORCE_ACTIVATE.label)

    def update(self, old: JsonDict | None, new: JsonDict) -> None:
        uid = (new.get("metadata") or {}).get("uid") or ""
        if uid in self._in_flight:
            # being scheduled: the update is replayed if the attempt fails
            if old is not None:
                for evt in pod_scheduling_property_changes(new, old):
                    self._record_in_flight(evt, old, new)
            return
        q = self._active.get(uid)
        if q is not None:
            old_pod = q.pod
            self.nominator.update(uid, _refresh(q, new), old if old is not None else old_pod)
            self._active.add_or_update(q)
            return
        q = self._backoff.get(uid)
        if q is not None:
            old_pod = q.pod
            self.nominator.update(uid, _refresh(q, new), old if old is not None else old_pod)
            self._backoff.refresh(q)
            return
        q = self._unschedulable.get(uid)
        if q is not None:
            old_pod = old if old is not None else q.pod
            self.nominator.update(uid, _refresh(q, new), old_pod)
            if q.gated:
                # the gate may be lifted: PreEnqueue runs again on the way out
                self._unschedulable.pop(uid, None)
                self._requeue_with_strategy(q, "backoff", EVENT_UNSCHEDULED_POD_UPDATE.label)
                return
            for evt in pod_scheduling_property_changes(new, old_pod):
                hint = self._is_pod_worth_requeuing(q, evt, old_pod, new)
                where = self._requeue_with_strategy(q, hint, evt.label)
                if where != _UNSCHEDULABLE:
                    return
            return
        self._add(self._new_qpi(new), EVENT_UNSCHEDULED_POD_UPDATE.label)

    def delete(self, pod: JsonDict) -> None:
        uid = (pod.get("metadata") or {}).get("uid") or ""
        self.nominator.delete(uid)
        self._active.delete(uid)
        self._backoff.delete(uid)
        self._unschedulable.pop(uid, None)
        if uid in self._in_flight:
            self._record_in_flight(EVENT_UNSCHEDULED_POD_DELETE, pod, None)

    async def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule (activeQ's head, else with pop_from_backoff backoffQ's
        plugin-rejected head); None once closed. Marks it in flight."""
        while True:
            if self._closed:
                return None
            q = self._active.pop()
            if q is None and self.pop_from_backoff:
                q = self._backoff.rejected.pop()
                if q is not None:
                    self._incoming(_ACTIVE, POP_FROM_BACKOFF_Q)
            if q is not None:
                if not self._poppable():
                    self._has_items.clear()
                if q.uid in self._in_flight:
                    # the same pod twice (a bug elsewhere): discard this copy, as upstream
                    logger.error("pod popped while already in flight, discarded pod=%s", q.pod_info.key)
                    continue
                q.attempts += 1
                q.backoff_expiration = None
                q.attempt_start = self._clock.monotonic()
                if q.initial_attempt_timestamp is None:
                    q.initial_attempt_timestamp = q.attempt_start
                # the next failure names its own plugins
                q.unschedulable_plugins = set()
                q.pending_plugins = set()
                self.scheduling_cycle += 1
                self._in_flight[q.uid] = next(self._seq)
                return q
            self._has_items.clear()
            await self._has_items.wait()

    def done(self, uid: str) -> None:
        """The scheduling attempt of `uid` is over (success or requeued)."""
        if self._in_flight.pop(uid, None) is None:
            return
        if not self._in_flight:
            self._in_flight_events.clear()
            return
        oldest = min(self._in_flight.values())
        ev = self._in_flight_events
        i = 0
        while i < len(ev) and ev[i].seq < oldest:
            i += 1
        if i:
            del ev[:i]

    def in_flight(self) -> list[str]:
        """The uids of the pods being scheduled (popped, not yet done)."""
        return list(self._in_flight)

    def _record_in_flight(self, event: ClusterEvent, old: Any, new: Any) -> None:
        if self._in_flight:
            self._in_flight_events.append(_InFlightEvent(next(self._seq), event, old, new))

    def add_unschedulable_if_not_present(self, q: QueuedPodInfo, scheduling_cycle: int = 0) -> None:
        """Return a pod whose attempt failed (upstream AddUnschedulableIfNotPresent). A pod some
        plugin rejected goes to unschedulablePods unless an event recorded during its attempt
        may have helped; an errored pod (no plugin) goes through backoff."""
        uid = q.uid
        if uid in self._active or uid in self._backoff or uid in self._unschedulable:
            self.done(uid)
            return
        q.timestamp = self._clock.monotonic()
        q.backoff_expiration = None
        if q.unschedulable_plugins or q.pending_plugins:
            q.consecutive_errors = 0
            hint = self._hint_for_in_flight_pod(q)
        else:
            hint = "backoff"
        self._requeue_with_strategy(q, hint, SCHEDULE_ATTEMPT_FAILURE)
        self.nominator.add(q.pod_info)
        self.done(uid)

    def _hint_for_in_flight_pod(self, q: QueuedPodInfo) -> str:
        """The strongest hint of the events recorded since `q` was popped (upstream
        determineSchedulingHintForInFlightPod)."""
        popped_seq = self._in_flight.get(q.uid)
        if popped_seq is None:
            return "skip"
        hint = "skip"
        for ev in self._in_flight_events:
            if ev.seq <= popped_seq:
                continue
            h = self._is_pod_worth_requeuing(q, ev.event, ev.old, ev.new)
            if h == "immediate":
                return h
            if h == "backoff":
                hint = h
                if not q.pending_plugins:
                    return h
        return hint

    def _requeue_with_strategy(self, q: QueuedPodInfo, hint: str, event: str) -> str:
        """Where a pod leaving unschedulablePods (or coming back from an attempt) goes
        (upstream requeuePodWithQueueingStrategy)."""
        if hint == "skip":
            if q.uid not in self._unschedulable:
                self._to_unschedulable(q, event)
            return _UNSCHEDULABLE
        if hint == "backoff" and self.is_backing_off(q):
            return _BACKOFF if self._move_to_backoff(q, event) else _UNSCHEDULABLE
        return _ACTIVE if self._move_to_active(q, event) else _UNSCHEDULABLE

    # ---- events -------------------------------------------------------------------------
    def _is_pod_worth_requeuing(self, q: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> str:
        """"skip", "backoff" or "immediate" (upstream isPodWorthRequeuing): the hints of the
        plugins that rejected the pod, in the profile's plugin order; a pending plugin's Queue
        is "immediate", an unschedulable plugin's "backoff"."""
        if q.gated:
            rejectors = {q.gating_plugin} if q.gating_plugin else set()
        else:
            rejectors = q.unschedulable_plugins | q.pending_plugins
        if not rejectors:
            return "backoff"
        if event.resource == EventResource.WILDCARD:
            # a wildcard event naming a pod (ForceActivate) is for that pod only
            if new is not None and _object_uid(new) != q.uid:
                return "skip"
            return "backoff"
        regs = self._events.get(scheduler_name(q.pod))
        if regs is None:
            return "backoff"  # no registrations for the pod's profile (upstream: a bug)
        pending = q.pending_plugins
        result = "skip"
        pod = q.pod_info  # hints get the parsed pod (helpers.as_pod_info), never a re-parse
        for plugin, lst in regs.items():
            if plugin not in rejectors:
                continue
            for reg in lst:
                if not reg.event.matches(event):
                    continue
                if reg.hint_fn is None:
                    hint = QueueingHint.QUEUE
                else:
                    try:
                        hint = reg.hint_fn(pod, old, new)
                    except Exception:
                        logger.exception("queueing hint failed plugin=%s pod=%s event=%s",
                                         plugin, q.pod_info.key, event.label)
                        hint = QueueingHint.QUEUE
                if hint == QueueingHint.SKIP:
                    continue
                if plugin in pending:
                    return "immediate"
                if not pending:
                    return "backoff"
                result = "backoff"
        return result

    def _gating_plugin_interested(self, q: QueuedPodInfo, event: ClusterEvent) -> bool:
        """Whether the plugin gating `q` registered `event` (upstream GatingPluginEvents)."""
        regs = self._events.get(scheduler_name(q.pod), {}).get(q.gating_plugin, ())
        return any(reg.event.matches(event) for reg in regs)

    def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any = None, new: Any = None,
                                      precheck: Callable[[JsonDict], bool] | None = None) -> None:
        """Requeue the unschedulable pods this event may help (those `precheck` accepts, when
        given; it is not called for an event no plugin registered)."""
        if not self._may_match(event):
            return
        if precheck is None:
            pods = list(self._unschedulable.values())
        else:
            pods = [q for q in self._unschedulable.values() if precheck(q.pod)]
        self._move_pods(pods, event, old, new)

    def _move_pods(self, pods: list[QueuedPodInfo], event: ClusterEvent, old: Any, new: Any) -> None:
        """upstream movePodsToActiveOrBackoffQueue (the caller checked the event is of interest)."""
        # Per scheduler name, the plugins with a registration matching this event, worked out
        # once per event rather than per pod: a pod none of whose rejecting plugins is among them
        # is a "skip" without evaluating anything (what _is_pod_worth_requeuing would answer).
        # Worked example: 3,000 pods rejected by NodeResourcesFit and a bind (AssignedPod/Add,
        # which Fit does not register): one set lookup per pod instead of hint bookkeeping
        # per pod and registration (issue 14 Unschedulable workload; docs/benchmarks.md).
        matching: dict[str, frozenset[str]] = {}
        wildcard = event.resource == EventResource.WILDCARD
        # every queued pod belongs to one of our profiles: with one profile, that one
        only = next(iter(self._events)) if len(self._events) == 1 else None
        for q in pods:
            if q.gated:
                if not self._gating_plugin_interested(q, event):
                    continue
            elif not wildcard and (q.unschedulable_plugins or q.pending_plugins):
                name = only or q.profile
                if name is None:
                    name = q.profile = scheduler_name(q.pod)
                plugins = matching.get(name)
                if plugins is None:
                    plugins = matching[name] = self._plugins_matching(event, name)
                if plugins.isdisjoint(q.unschedulable_plugins) and plugins.isdisjoint(q.pending_plugins):
                    continue
            hint = self._is_pod_worth_requeuing(q, event, old, new)
            if hint == "skip":
                continue
            self._unschedulable.pop(q.uid, None)
            self._requeue_with_strategy(q, hint, event.label)
        self._record_in_flight(event, old, new)

    def _plugins_matching(self, event: ClusterEvent, profile: str) -> frozenset[str]:
        """The plugins of `profile` with a registration matching `event` (the registrations are
        fixed when the queue is built, so cached per event and profile)."""
        key = (event, profile)
        hit = self._matching_plugins.get(key)
        if hit is None:
            hit = self._matching_plugins[key] = frozenset(
                plugin for plugin, regs in self._events.get(profile, {}).items()
                if any(reg.event.matches(event) for reg in regs))
        return hit

    def _may_match(self, event: ClusterEvent) -> bool:
        """Whether any registration of any profile matches `event` (cached per event)."""
        hit = self._match_cache.get(event)
        if hit is None:
            hit = event.resource == EventResource.WILDCARD or any(
                reg.event.matches(event)
                for regs in self._events.values() for lst in regs.values() for reg in lst)
            self._match_cache[event] = hit
        return hit

    def _cross_topology_pods(self, pod: JsonDict) -> list[QueuedPodInfo]:
        """The unschedulable pods a bound pod's add or label change may help: rejected by
        PodTopologySpread in its namespace, or with a required affinity term selecting it
        (upstream getUnschedulablePodsWithCrossTopologyTerm)."""
        bound = PodInfo(pod)
        out: list[QueuedPodInfo] = []
        for q in self._unschedulable.values():
            pi = q.pod_info
            if _POD_TOPOLOGY_SPREAD in q.unschedulable_plugins and pi.namespace == bound.namespace:
                out.append(q)
                continue
            if not pi.required_affinity_terms:
                continue
            for term in _required_affinity(pi):
                if term.matches(bound, self._namespace_labels):
                    out.append(q)
                    break
        return out

    def assigned_pod_added(self, pod: JsonDict) -> None:
        if self._may_match(EVENT_ASSIGNED_POD_ADD):
            pods = self._cross_topology_pods(pod) if self._unschedulable else []
            self._move_pods(pods, EVENT_ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old: JsonDict | None, new: JsonDict, event: ClusterEvent | None = None) -> None:
        """A bound pod changed: `event`, or each event its change describes. A scale-down looks
        at every parked pod, other changes only at the cross-topology ones."""
        events = [event] if event is not None else assigned_pod_update_events(old or {}, new)
        for evt in events:
            if _POD_SCALE_DOWN.matches(evt):
                self.move_all_to_active_or_backoff(evt, old, new)
            elif self._may_match(evt):
                pods = self._cross_topology_pods(new) if self._unschedulable else []
                self._move_pods(pods, evt, old, new)

    def assigned_pod_deleted(self, pod: JsonDict) -> None:
        self.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)

    # ---- flushing -----------------------------------------------------------------------
    def flush_backoff_completed(self) -> None:
        for q in self._backoff.pop_completed(self.is_backing_off):
            self._move_to_active(q, BACKOFF_COMPLETE)

    def flush_unschedulable_left_over(self) -> None:
        now = self._clock.monotonic()
        old = [q for q in self._unschedulable.values() if now - q.timestamp > self.pod_max_in_unschedulable_duration]
        if old:
            self._move_pods(old, EVENT_UNSCHEDULABLE_TIMEOUT, None, None)

    async def run(self) -> None:
        """Periodic flushes until cancelled: backoffQ at each window's start, unschedulable pods
        every 30 s."""
        ticks = 0
        every = max(1, round(UNSCHEDULABLE_FLUSH_INTERVAL / BACKOFF_FLUSH_INTERVAL))
        now = self._clock.monotonic()
        delay = self._align(now + BACKOFF_FLUSH_INTERVAL) - now if self.pop_from_backoff else BACKOFF_FLUSH_INTERVAL
        while True:
            await self._clock.sleep(delay)
            delay = BACKOFF_FLUSH_INTERVAL
            self.flush_backoff_completed()
            ticks += 1
            if ticks % every == 0:
                self.flush_unschedulable_left_over()

    def close(self) -> None:
        self._closed = True
        self._has_items.set()

    # ---- introspection ------------------------------------------------------------------
    def pending_counts(self) -> dict[str, int]:
        """scheduler_pending_pods by queue: activeQ, backoffQ, unschedulablePods attempted and
        failed, and pods never attempted because PreEnqueue gates them."""
        gated = sum(1 for q in self._unschedulable.values() if q.gated)
        return {"active": len(self._active), "backoff": len(self._backoff),
                "unschedulable": len(self._unschedulable) - gated, "gated": gated}

    def pending_pods(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for where, items in ((_ACTIVE, list(self._active)), (_BACKOFF, list(self._backoff)),
                             (_UNSCHEDULABLE, list(self._unschedulable.values()))):
            for q in items:
                out.append({
                    "pod": q.pod_info.key, "uid": q.uid, "queue": where, "attempts": q.attempts,
                    "unschedulablePlugins": sorted(q.unschedulable_plugins),
                    "pendingPlugins": sorted(q.pending_plugins), "gated": q.gated,
                    "gatingPlugin": q.gating_plugin,
                })
        return out

    def where(self, uid: str) -> str | None:
        if uid in self._active:
            return _ACTIVE
        if uid in self._backoff:
            return _BACKOFF
        if uid in self._unschedulable:
            return _UNSCHEDULABLE
        if uid in self._in_flight:
            return "inFlight"
        return None

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self._active.get(uid) or self._backoff.get(uid) or self._unschedulable.get(uid)

    def __len__(self) -> int:
        return len(self._active) + len(self._backoff) + len(self._unschedulable)

    def active_len(self) -> int:
        return len(self._active)


def _object_uid(obj: Any) -> str | None:
    if isinstance(obj, dict):
        return (obj.get("metadata") or {}).get("uid")
    uid = getattr(obj, "uid", None)
    return uid if isinstance(uid, str) else None


def _required_affinity(pi: PodInfo) -> list[CompiledTerm]:
    return compiled_affinity(pi).required_affinity

def _uid(q: QueuedPodInfo) -> str:
    return q.pod_info.uid


def _refresh(q: QueuedPodInfo, pod: JsonDict) -> PodInfo:
    q.pod_info = PodInfo(pod)
    return q.pod_info


def _requests_reduced(old: JsonDict, new: JsonDict) -> bool:
    a = PodInfo(old).requests
    b = PodInfo(new).requests
    if b.milli_cpu < a.milli_cpu or b.memory < a.memory or b.ephemeral_storage < a.ephemeral_storage:
        return True
    return any(v < a.scalar.get(k, 0) for k, v in b.scalar.items())


def pod_scheduling_property_changes(new: JsonDict, old: JsonDict, *,
                                    resource: EventResource = EventResource.UNSCHEDULED_POD) -> list[ClusterEvent]:
    """Events describing how a pod changed (upstream PodSchedulingPropertiesChange, same order:
    labels, scale down, gates eliminated, tolerations); a pod update none of these describe is
    UPDATE_POD_OTHER, which only plugins registering the general Pod/Update see."""
    prefix = "UnscheduledPod" if resource == EventResource.UNSCHEDULED_POD else "AssignedPod"
    out: list[ClusterEvent] = []
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    os_, ns_ = old.get("spec") or {}, new.get("spec") or {}
    if (om.get("labels") or {}) != (nm.get("labels") or {}):
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_LABEL, f"{prefix}UpdatePodLabel"))
    if _requests_reduced(old, new):
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_SCALE_DOWN, f"{prefix}UpdatePodScaleDown"))
    if os_.get("schedulingGates") and not ns_.get("schedulingGates"):
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
                                f"{prefix}UpdatePodSchedulingGatesEliminated"))
    if (os_.get("tolerations") or []) != (ns_.get("tolerations") or []):
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_TOLERATIONS, f"{prefix}UpdatePodToleration"))
    if not out:
        out.append(ClusterEvent(resource, ActionType.UPDATE_POD_OTHER, f"{prefix}OtherUpdate"))
    return out


def assigned_pod_update_events(old: JsonDict, new: JsonDict) -> list[ClusterEvent]:
    return pod_scheduling_property_changes(new, old, resource=EventResource.ASSIGNED_POD)


def node_scheduling_property_changes(new: JsonDict, old: JsonDict) -> list[ClusterEvent]:
    """Node update classification (upstream nodeSchedulingPropertiesChange)."""
    out: list[ClusterEvent] = []
    os_, ns_ = old.get("spec") or {}, new.get("spec") or {}
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    ost, nst = old.get("status") or {}, new.get("status") or {}
    if bool(os_.get("unschedulable")) != bool(ns_.get("unschedulable")):
        out.append(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT, "UpdateNodeTaint"))
    if (om.get("labels") or {}) != (nm.get("labels") or {}):
        out.append(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL, "UpdateNodeLabel"))
    if (os_.get("taints") or []) != (ns_.get("taints") or []):
        out.append(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT, "UpdateNodeTaint"))
    if (ost.get("allocatable") or {}) != (nst.get("allocatable") or {}):
        out.append(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_ALLOCATABLE, "UpdateNodeAllocatable"))
    if _conditions(ost) != _conditions(nst):
        out.append(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_CONDITION, "UpdateNodeCondition"))
    if (om.get("annotations") or {}) != (nm.get("annotations") or {}):
        out.append(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_ANNOTATION, "UpdateNodeAnnotation"))
    return out


def _conditions(status: JsonDict) -> dict[str, str]:
    return {c.get("type", ""): c.get("status", "") for c in status.get("conditions") or ()}
