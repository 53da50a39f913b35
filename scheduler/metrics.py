"""kube-scheduler's Prometheus metrics for the embedded scheduler (layer L4, scheduler).

Names, labels, help texts and buckets follow upstream pkg/scheduler/metrics (v1.33):

- `scheduler_schedule_attempts_total{result,profile}` and
  `scheduler_scheduling_attempt_duration_seconds{result,profile}` (buckets 1 ms x2, 15): one per
  attempt, from the pop to its end: `scheduled` when the binding succeeded, `unschedulable` when
  plugins rejected the pod (FitError, Reserve/Permit/PreBind/Bind rejection), `error` otherwise;
- `scheduler_pending_pods{queue=active|backoff|unschedulable|gated}`: read from the queue when
  scraped (no cost per pod);
- `scheduler_queue_incoming_pods_total{queue,event}`: every pod entering a queue, by the event
  that moved it (`UnschedulablePodAdd`, `ScheduleAttemptFailure`, `BackoffComplete`, `NodeAdd`...);
- `scheduler_pod_scheduling_sli_duration_seconds{attempts}` (10 ms x2, 20) and
  `scheduler_pod_scheduling_attempts` (1 x2, 5): per bound pod, from its first entry into activeQ;
- `scheduler_preemption_attempts_total`: every PostFilter run of DefaultPreemption (where
  upstream's DefaultPreemption counts it); `scheduler_preemption_victims` (1 x2, 7): the victims
  of each preemption carried out;
- `scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}`
  (0.1 ms x2, 12): every run of PreEnqueue, PreFilter, PostFilter, PreScore, Score, Reserve,
  Unreserve, Permit, PreBind, Bind, PostBind, as upstream records them (not sampled; upstream samples only
  the per-plugin `scheduler_plugin_execution_duration_seconds`, not served here).

Data flow: `Scheduler(metrics=SchedulerMetrics(registry))` calls `attach(scheduler)`, which hooks
the queue's `on_incoming` and wraps each framework's extension-point runners; the scheduler calls
`attempt()` / `bound()`. The composition root owns the `CollectorRegistry` (no global registry).
Cost: label children are cached, so an observation is one dict lookup plus prometheus_client's
locked add (~1 µs); ~12 per scheduled pod.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from scheduler.framework.interface import Code, Status

if TYPE_CHECKING:
    from scheduler.framework.runtime import Framework

SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
ERROR = "error"

# upstream's Code.String()
_CODE_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


def _exponential(start: float, factor: float, count: int) -> tuple[float, ...]:
    """prometheus ExponentialBuckets: start, start*factor, ... (count buckets)."""
    return tuple(start * factor**i for i in range(count))


def _status_of(out: Any) -> str:
    """The Status code name of an extension point's return value (None: Success)."""
    st = out[1] if isinstance(out, tuple) else out
    return _CODE_NAMES[st.code] if isinstance(st, Status) else "Success"


class SchedulerParts(Protocol):
    """What `attach` needs of a scheduler (scheduler.scheduler.Scheduler; no import of it here,
    the scheduler imports this module): its queue and its profiles' frameworks."""

    @property
    def queue(self) -> Any: ...

    @property
    def frameworks(self) -> Mapping[str, Framework]: ...


class _PendingPods(Collector):
    """`scheduler_pending_pods`, computed from the queue at scrape time."""

    def __init__(self, counts: Callable[[], dict[str, int]]) -> None:
        self._counts = counts

    def collect(self) -> Iterator[Metric]:
        fam = GaugeMetricFamily(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
            "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
            "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the "
            "number of unschedulable pods that the scheduler never attempted to schedule because "
            "they are gated.", labels=["queue"])
        for queue, n in self._counts().items():
            fam.add_metric([queue], float(n))
        yield fam


class SchedulerMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.schedule_attempts = Counter(
            "schedule_attempts_total",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
            "scheduled, while 'error' means an internal scheduler problem.",
            labelnames=("result", "profile"), namespace="scheduler", registry=registry)
        self.attempt_duration = Histogram(
            "scheduling_attempt_duration_seconds", "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            labelnames=("result", "profile"), namespace="scheduler", registry=registry,
            buckets=_exponential(0.001, 2, 15))
        self.preemption_attempts = Counter(
            "preemption_attempts_total", "Total preemption attempts in the cluster till now",
            namespace="scheduler", registry=registry)
        self.preemption_victims = Histogram(
            "preemption_victims", "Number of selected preemption victims",
            namespace="scheduler", registry=registry, buckets=_exponential(1, 2, 7))
        self.sli_duration = Histogram(
            "pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might "
            "involve multiple scheduling attempts.",
            labelnames=("attempts",), namespace="scheduler", registry=registry, buckets=_exponential(0.01, 2, 20))
        self.pod_attempts = Histogram(
            "pod_scheduling_attempts", "Number of attempts to successfully schedule a pod.",
            namespace="scheduler", registry=registry, buckets=_exponential(1, 2, 5))
        self.incoming = Counter(
            "queue_incoming_pods_total", "Number of pods added to scheduling queues by event and queue type.",
            labelnames=("queue", "event"), namespace="scheduler", registry=registry)
        self.extension_point = Histogram(
            "framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            labelnames=("extension_point", "status", "profile"), namespace="scheduler", registry=registry,
            buckets=_exponential(0.0001, 2, 12))
        self._children: dict[tuple[str, ...], Any] = {}
        self._pending: _PendingPods | None = None

    def _child(self, metric: Any, *labels: str) -> Any:
        key = (metric._name, *labels)  # noqa: SLF001 - the family's name keys the cache
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    # ---- wiring --------------------------------------------------------------------------
    def attach(self, sched: SchedulerParts) -> None:
        """Hook one scheduler: its queue's incoming pods, its pending counts, its frameworks."""
        if self._pending is not None:
            raise ValueError("SchedulerMetrics already attached to a scheduler")
        self._pending = _PendingPods(sched.queue.pending_counts)
        self.registry.register(self._pending)
        sched.queue.on_incoming = self._on_incoming
        for fw in sched.frameworks.values():
            self._instrument(fw)

    def _on_incoming(self, queue: str, event: str) -> None:
        self._child(self.incoming, queue, event).inc()

    def _instrument(self, fw: Framework) -> None:
        """Time every extension-point runner of `fw` (instance attributes shadow the methods)."""
        profile = fw.profile_name
        clock = fw.clock
        observe = self._observe_extension_point
        for ep, name in (("PreEnqueue", "run_pre_enqueue"), ("PreFilter", "run_pre_filter"),
                         ("PreScore", "run_pre_score"), ("Score", "run_score"), ("Reserve", "run_reserve"),
                         ("Unreserve", "run_unreserve"), ("Permit", "run_permit")):
            setattr(fw, name, _timed_sync(getattr(fw, name), ep, profile, clock.monotonic, observe))
        for ep, name in (("PostFilter", "run_post_filter"), ("PreBind", "run_pre_bind"), ("Bind", "run_bind"),
                         ("PostBind", "run_post_bind")):
            setattr(fw, name, _timed_async(getattr(fw, name), ep, profile, clock.monotonic, observe))
        if "DefaultPreemption" in {pl.name() for pl in fw.post_filter_plugins}:
            inner = fw.run_post_filter

            @functools.wraps(inner)
            async def post_filter(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await inner(*args, **kwargs)
                finally:
                    self.preemption_attempts.inc()

            setattr(fw, "run_post_filter", post_filter)  # noqa: B010 - shadow the method on this instance
            for pl in fw.post_filter_plugins:
                if pl.name() == "DefaultPreemption":
                    self._count_victims(pl)

    def _count_victims(self, pl: Any) -> None:
        """`scheduler_preemption_victims`: the victims of each chosen candidate, observed when
        the preemption is carried out (upstream observes the best candidate's victims); a gang's
        plan counts every member's victims."""
        single, gang = pl.prepare_candidate_async, pl.prepare_gang_async
        victims = self.preemption_victims

        @functools.wraps(single)
        def prepare_candidate(c: Any, pod: Any) -> None:
            victims.observe(len(c.victims))
            single(c, pod)

        @functools.wraps(gang)
        def prepare_gang(plan: Any, pod: Any) -> None:
            victims.observe(sum(len(p.victims) for p in plan))
            gang(plan, pod)

        pl.prepare_candidate_async = prepare_candidate
        pl.prepare_gang_async = prepare_gang

    def _observe_extension_point(self, ep: str, status: str, profile: str, seconds: float) -> None:
        self._child(self.extension_point, ep, status, profile).observe(seconds)

    # ---- per attempt ---------------------------------------------------------------------
    def attempt(self, result: str, profile: str, seconds: float) -> None:
        self._child(self.schedule_attempts, result, profile).inc()
        self._child(self.attempt_duration, result, profile).observe(seconds)

    def bound(self, attempts: int, since_first_queued: float | None) -> None:
        self.pod_attempts.observe(attempts)
        if since_first_queued is not None:
            self._child(self.sli_duration, "15+" if attempts >= 15 else str(attempts)).observe(since_first_queued)


def _timed_sync(fn: Callable[..., Any], ep: str, profile: str, now: Callable[[], float],
                observe: Callable[[str, str, str, float], None]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        t = now()
        out = fn(*args, **kwargs)
        observe(ep, _status_of(out), profile, now() - t)
        return out

    return run


def _timed_async(fn: Callable[..., Any], ep: str, profile: str, now: Callable[[], float],
                 observe: Callable[[str, str, str, float], None]) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> Any:
        t = now()
        out = await fn(*args, **kwargs)
        observe(ep, _status_of(out), profile, now() - t)
        return out

    return run
