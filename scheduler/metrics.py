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
- `scheduler_permit_wait_duration_seconds{result}` (1 ms x2, 15): per pod a Permit plugin held,
  how long it waited, by the outcome (Success, Unschedulable, Error);
- `scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}`
  (0.1 ms x2, 12): every run of PreEnqueue, PreFilter, PostFilter, PreScore, Score, Reserve,
  Unreserve, Permit, PreBind, Bind, PostBind, as upstream records them (not sampled; upstream samples only
  the per-plugin `scheduler_plugin_execution_duration_seconds`, not served here).

Data flow: `Scheduler(metrics=SchedulerMetrics(registry))` calls `attach(scheduler)`, which hooks
the queue's `on_incoming` and wraps each framework's extension-point runners; the scheduler calls
`attempt()` / `bound()`. The composition root owns the `CollectorRegistry` (no global registry).
Cost: the counters and histograms are this module's own (`_Counter`, `_Histogram`): plain
float counters and a `bisect` into the bucket bounds, no lock (every observation comes from the
scheduler's event-loop thread), label children cached per runner; they render the same samples
in the same order as prometheus_client's `Counter` / `Histogram` (names, HELP, labels, `le`
spelling, `_created` series), so `/metrics` is byte-for-byte what those classes would expose.
About 12 observations per scheduled pod.
"""

from __future__ import annotations

import functools
import time
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

import prometheus_client.metrics
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

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


# the `le` label spelling of prometheus_client (Go's float formatting: 0.001, 2.0, +Inf)
_go_float = cast(Callable[[float], str], floatToGoString)


def _created_series() -> bool:
    """prometheus_client's switch for the `_created` samples (PROMETHEUS_DISABLE_CREATED_SERIES,
    `disable_created_metrics()`), read at scrape time as its own metrics do."""
    return bool(getattr(prometheus_client.metrics, "_use_created", True))


class _CounterChild:
    __slots__ = ("value", "created")

    def __init__(self, created: float) -> None:
        self.value = 0.0
        self.created = created

    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("Counters can only be incremented by non-negative amounts.")
        self.value += amount


class _HistogramChild:
    __slots__ = ("bounds", "counts", "sum", "created")

    def __init__(self, bounds: list[float], created: float) -> None:
        self.bounds = bounds
        self.counts = [0] * len(bounds)
        self.sum = 0.0
        self.created = created

    def observe(self, amount: float) -> None:
        self.sum += amount
        if amount == amount:  # NaN lands in no bucket, as in prometheus_client's loop
            self.counts[bisect_left(self.bounds, amount)] += 1


class _Family(Collector):
    """A metric family registered in `registry` (prometheus_client's MetricWrapperBase without
    its locks): children by label values in creation order; an unlabelled family has its one
    child from the start."""

    _type = ""

    def __init__(self, name: str, documentation: str, *, labelnames: Sequence[str] = (),
                 registry: CollectorRegistry, wall: Callable[[], float]) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self._wall = wall
        self._children: dict[tuple[str, ...], Any] = {}
        if not self.labelnames:
            self._children[()] = self._new_child()
        registry.register(self)

    def _new_child(self) -> Any:
        raise NotImplementedError

    def _child_samples(self, child: Any, created: bool) -> Iterator[tuple[str, dict[str, str], float]]:
        raise NotImplementedError

    def labels(self, *values: str) -> Any:
        if not self.labelnames or len(values) != len(self.labelnames):
            raise ValueError(f"{self.name}: {len(self.labelnames)} label values expected, got {len(values)}")
        key = tuple(str(v) for v in values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self._new_child()
        return child

    def describe(self) -> Iterator[Metric]:
        yield Metric(self.name, self.documentation, self._type)

    def collect(self) -> Iterator[Metric]:
        metric = Metric(self.name, self.documentation, self._type)
        created = _created_series()
        for values, child in list(self._children.items()):
            series = list(zip(self.labelnames, values, strict=True))
            for suffix, extra, value in self._child_samples(child, created):
                metric.add_sample(self.name + suffix, dict(series + list(extra.items())), value)
        yield metric


class _Counter(_Family):
    """prometheus_client's `Counter("x_total", ...)` as served: family `x`, samples `x_total`
    and `x_created`."""

    _type = "counter"

    def __init__(self, name: str, documentation: str, *, labelnames: Sequence[str] = (),
                 registry: CollectorRegistry, wall: Callable[[], float]) -> None:
        super().__init__(name.removesuffix("_total"), documentation, labelnames=labelnames, registry=registry,
                         wall=wall)

    def _new_child(self) -> _CounterChild:
        return _CounterChild(self._wall())

    def inc(self, amount: float = 1.0) -> None:
        """An unlabelled counter's increment."""
        child: _CounterChild = self._children[()]
        child.inc(amount)

    def _child_samples(self, child: Any, created: bool) -> Iterator[tuple[str, dict[str, str], float]]:
        yield "_total", {}, child.value
        if created:
            yield "_created", {}, child.created


class _Histogram(_Family):
    """prometheus_client's `Histogram` as served: cumulative `_bucket{le}` (the bounds plus
    +Inf), `_count`, `_sum`, `_created`."""

    _type = "histogram"

    def __init__(self, name: str, documentation: str, *, buckets: Sequence[float], labelnames: Sequence[str] = (),
                 registry: CollectorRegistry, wall: Callable[[], float]) -> None:
        bounds = [float(b) for b in buckets]
        if not bounds or bounds != sorted(bounds):
            raise ValueError("Buckets not in sorted order")
        if bounds[-1] != float("inf"):
            bounds.append(float("inf"))
        self.bounds = bounds
        self._le = [_go_float(b) for b in bounds]
        super().__init__(name, documentation, labelnames=labelnames, registry=registry, wall=wall)

    def _new_child(self) -> _HistogramChild:
        return _HistogramChild(self.bounds, self._wall())

    def observe(self, amount: float) -> None:
        """An unlabelled histogram's observation."""
        child: _HistogramChild = self._children[()]
        child.observe(amount)

    def _child_samples(self, child: Any, created: bool) -> Iterator[tuple[str, dict[str, str], float]]:
        acc = 0.0
        for le, n in zip(self._le, list(child.counts), strict=True):
            acc += n
            yield "_bucket", {"le": le}, acc
        yield "_count", {}, acc
        if self.bounds[0] >= 0:
            yield "_sum", {}, child.sum
        if created:
            yield "_created", {}, child.created


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
    def __init__(self, registry: CollectorRegistry, *, wall: Callable[[], float] = time.time) -> None:
        """`wall` stamps each series' `_created` sample (prometheus_client uses time.time)."""
        self.registry = registry
        kw: dict[str, Any] = {"registry": registry, "wall": wall}
        self.schedule_attempts = _Counter(
            "scheduler_schedule_attempts_total",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
            "scheduled, while 'error' means an internal scheduler problem.",
            labelnames=("result", "profile"), **kw)
        self.attempt_duration = _Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            labelnames=("result", "profile"), buckets=_exponential(0.001, 2, 15), **kw)
        self.preemption_attempts = _Counter(
            "scheduler_preemption_attempts_total", "Total preemption attempts in the cluster till now", **kw)
        self.preemption_victims = _Histogram(
            "scheduler_preemption_victims", "Number of selected preemption victims",
            buckets=_exponential(1, 2, 7), **kw)
        self.sli_duration = _Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might "
            "involve multiple scheduling attempts.",
            labelnames=("attempts",), buckets=_exponential(0.01, 2, 20), **kw)
        self.pod_attempts = _Histogram(
            "scheduler_pod_scheduling_attempts", "Number of attempts to successfully schedule a pod.",
            buckets=_exponential(1, 2, 5), **kw)
        self.incoming = _Counter(
            "scheduler_queue_incoming_pods_total", "Number of pods added to scheduling queues by event and queue type.",
            labelnames=("queue", "event"), **kw)
        self.extension_point = _Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            labelnames=("extension_point", "status", "profile"), buckets=_exponential(0.0001, 2, 12), **kw)
        self.permit_wait = _Histogram(
            "scheduler_permit_wait_duration_seconds", "Duration of waiting on permit.",
            labelnames=("result",), buckets=_exponential(0.001, 2, 15), **kw)
        self._children: dict[tuple[str, ...], Any] = {}
        self._pending: _PendingPods | None = None

    def _child(self, metric: _Family, *labels: str) -> Any:
        key = (metric.name, *labels)
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
        family = self.extension_point
        for ep, name in (("PreEnqueue", "run_pre_enqueue"), ("PreFilter", "run_pre_filter"),
                         ("PreScore", "run_pre_score"), ("Score", "run_score"), ("Reserve", "run_reserve"),
                         ("Unreserve", "run_unreserve"), ("Permit", "run_permit")):
            setattr(fw, name, _timed_sync(getattr(fw, name), _PointTimer(family, ep, profile), clock.monotonic))
        for ep, name in (("PostFilter", "run_post_filter"), ("PreBind", "run_pre_bind"), ("Bind", "run_bind"),
                         ("PostBind", "run_post_bind")):
            setattr(fw, name, _timed_async(getattr(fw, name), _PointTimer(family, ep, profile), clock.monotonic))
        self._time_permit_wait(fw)
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

    def _time_permit_wait(self, fw: Framework) -> None:
        """`scheduler_permit_wait_duration_seconds{result}`: how long a pod that a Permit plugin
        held waited, by the outcome (upstream WaitOnPermit; pods that did not wait are not
        observed)."""
        inner = fw.wait_on_permit
        clock = fw.clock
        timer = self.permit_wait

        @functools.wraps(inner)
        async def wait_on_permit(pi: Any) -> Status:
            if fw.get_waiting_pod(pi.uid) is None:
                return await inner(pi)
            t = clock.monotonic()
            st = await inner(pi)
            self._child(timer, _CODE_NAMES[st.code]).observe(clock.monotonic() - t)
            return st

        setattr(fw, "wait_on_permit", wait_on_permit)  # noqa: B010 - shadow the method on this instance

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


class _PointTimer:
    """One extension point's histogram children by Status code, resolved once each."""

    __slots__ = ("_family", "_ep", "_profile", "_children")

    def __init__(self, family: _Histogram, ep: str, profile: str) -> None:
        self._family = family
        self._ep = ep
        self._profile = profile
        self._children: dict[Code, _HistogramChild] = {}

    def observe(self, out: Any, seconds: float) -> None:
        st = out[1] if isinstance(out, tuple) else out
        code = st.code if isinstance(st, Status) else Code.SUCCESS
        child = self._children.get(code)
        if child is None:
            child = self._children[code] = self._family.labels(self._ep, _CODE_NAMES[code], self._profile)
        child.observe(seconds)


def _timed_sync(fn: Callable[..., Any], timer: _PointTimer, now: Callable[[], float]) -> Callable[..., Any]:
    observe = timer.observe

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        t = now()
        out = fn(*args, **kwargs)
        observe(out, now() - t)
        return out

    return run


def _timed_async(fn: Callable[..., Any], timer: _PointTimer, now: Callable[[], float]) -> Callable[..., Any]:
    observe = timer.observe

    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> Any:
        t = now()
        out = await fn(*args, **kwargs)
        observe(out, now() - t)
        return out

    return run
