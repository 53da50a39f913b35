"""HorizontalPodAutoscaler controller (layer L4): kube-controller-manager's podautoscaler.

Data flow, every sync period (`--horizontal-pod-autoscaler-sync-period`, 15 s) per HPA:
  GET the target's `/scale` (Deployment, ReplicaSet, StatefulSet, any CRD with a scale
  subresource) -> pods by `status.selector` (shared pod informer) -> usage samples from the
  injected `UsageProvider` (the metrics.k8s.io source) -> one replica proposal per metric
  (`calc_utilization_replicas` / `calc_average_value_replicas`, upstream's replica calculator)
  -> the largest proposal -> stabilization and rate limits (`behavior`, or upstream's legacy
  rules when there is none) -> PUT `/scale` when it changed -> status (currentReplicas,
  desiredReplicas, currentMetrics, conditions AbleToScale / ScalingActive / ScalingLimited)
  and events (SuccessfulRescale, FailedGetResourceMetric, FailedComputeMetricsReplicas,
  FailedGetScale, FailedRescale).

The replica calculator (upstream replica_calculator.go): pods being deleted or Failed are
ignored; Pending pods are unready; for cpu a pod is also unready while inside the cpu
initialization period (5 min from start) if it is not Ready or its Ready transition is less than
one metric window old, and after it when it is not Ready and never became Ready within the
initial readiness delay (30 s); pods without a sample are missing. With ratio = usage/target
over the ready pods: inside the tolerance (0.1) nothing changes; otherwise, when nothing is
missing or unready, ceil(ratio * ready). Missing pods count as 100 % of their request on a
scale-down and 0 % on a scale-up, unready pods as 0 % on a scale-up; if that flips the direction
or lands inside the tolerance, nothing changes.
Worked example: 3 pods requesting 200m using 320m each at a 50 % target: utilization 160 %,
ratio 3.2, ceil(3.2 * 3) = 10, capped by the scale-up rule max(3 + 4, 3 * 2) = 7, then max 9.

Normalization (upstream horizontal.go): the first sync of an HPA records the target's current
size as a recommendation, so a fresh HPA does not scale down within its downscale window.
Without `behavior` the proposal is raised to the highest recommendation of the last 5 min, then
capped by max(2 * current, 4) and min/max replicas; with it, the current size is brought within
[lowest recommendation of the scale-up window, highest of the scale-down window] and capped by
the policies, each counting from the period's start size (current - added + removed in it).
Pods selected by two HPAs' targets make both ScalingActive=False AmbiguousSelector.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from minik3s.api.errors import ApiError, NotFoundError
from minik3s.api.helpers.resources import quantity_to_int
from minik3s.api.metrics import MetricsUnavailableError, PodUsage, UsageProvider
from minik3s.api.quantity import format_milli
from minik3s.api.resources import CRDS, HPAS, PODS, ResourceInfo, ResourceRegistry
from minik3s.api.selectors import LabelSelector, parse_label_selector
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import meta, now_str, run_workers, set_condition
from minik3s.controllers.namespace import crd_resource
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

DEFAULT_TOLERANCE = 0.1
CPU_INITIALIZATION_PERIOD = 300.0
INITIAL_READINESS_DELAY = 30.0
DEFAULT_SYNC_PERIOD = 15.0
DOWNSCALE_STABILIZATION = 300.0  # --horizontal-pod-autoscaler-downscale-stabilization
SCALE_UP_LIMIT_FACTOR = 2.0
SCALE_UP_LIMIT_MINIMUM = 4.0


class MetricError(Exception):
    """A metric could not be computed (the message is upstream's)."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One pod's usage of a resource, in milli-units (upstream's metricsclient.PodMetric)."""

    value: int
    timestamp: datetime
    window: float


@dataclass(frozen=True, slots=True)
class Proposal:
    replicas: int
    utilization: int | None  # percent of request (Utilization targets)
    raw_average: int  # milli-units per pod


def _milli(resource: str, q: Any) -> int:
    v = quantity_to_int(resource, q)
    return v if resource == "cpu" else v * 1000


def pod_requests(pods: Iterable[JsonDict], resource: str, container: str | None) -> dict[str, int]:
    """pod name -> request of `resource` (milli-units), upstream calculatePodRequests: the regular
    containers plus the restartable (sidecar) init containers, only `container` when one is named
    (0 when the pod has no such container); a counted container without the request is an error."""
    out: dict[str, int] = {}
    for pod in pods:
        name = str(meta(pod).get("name"))
        spec = pod.get("spec") or {}
        containers = list(spec.get("containers") or ())
        containers += [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
        total = 0
        for c in containers:
            if container and c.get("name") != container:
                continue
            req = ((c.get("resources") or {}).get("requests") or {}).get(resource)
            if req is None:
                raise MetricError(f"missing request for {resource} in container {c.get('name')} of Pod {name}")
            total += _milli(resource, req)
        out[name] = total
    return out


def samples_for(usage: Iterable[PodUsage], resource: str, container: str | None) -> dict[str, Sample]:
    """pod name -> sample; a pod without the named container has none."""
    out: dict[str, Sample] = {}
    for u in usage:
        cs = [c for c in u.containers if not container or c.name == container]
        if not cs:
            continue
        v = sum(c.cpu_milli if resource == "cpu" else c.memory_bytes * 1000 for c in cs)
        out[u.name] = Sample(v, u.timestamp, u.window_seconds)
    return out


# Go's zero time.Time: what upstream compares against when a Ready condition has no lastTransitionTime
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)


def _parse_time(v: Any) -> datetime | None:
    if not isinstance(v, str) or not v:
        return None
    try:
        return datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None


def group_pods(pods: list[JsonDict], samples: dict[str, Sample], resource: str, now: datetime, *,
               cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD,
               initial_readiness_delay: float = INITIAL_READINESS_DELAY
               ) -> tuple[int, set[str], set[str], set[str]]:
    """(ready count, unready, missing, ignored) as upstream's groupPods."""
    ready = 0
    unready: set[str] = set()
    missing: set[str] = set()
    ignored: set[str] = set()
    for pod in pods:
        m = meta(pod)
        name = str(m.get("name"))
        status = pod.get("status") or {}
        if m.get("deletionTimestamp") or status.get("phase") == "Failed":
            ignored.add(name)
            continue
        if status.get("phase") == "Pending":
            unready.add(name)
            continue
        sample = samples.get(name)
        if sample is None:
            missing.add(name)
            continue
        if resource == "cpu":
            cond = next((c for c in status.get("conditions") or () if c.get("type") == "Ready"), None)
            start = _parse_time(status.get("startTime"))
            if cond is None or start is None:
                is_unready = True
            else:
                transition = _parse_time(cond.get("lastTransitionTime")) or ZERO_TIME
                if start + timedelta(seconds=cpu_initialization_period) > now:
                    is_unready = cond.get("status") == "False" or \
                        sample.timestamp < transition + timedelta(seconds=sample.window)
                else:
                    is_unready = cond.get("status") == "False" and \
                        start + timedelta(seconds=initial_readiness_delay) > transition
            if is_unready:
                unready.add(name)
                continue
        ready += 1
    return ready, unready, missing, ignored


def utilization_ratio(samples: dict[str, Sample], requests: dict[str, int], target: int
                      ) -> tuple[float, int, int]:
    """upstream GetResourceUtilizationRatio: (ratio, utilization %, raw average); a sample of a pod
    without a request is an extraneous metric and left out."""
    total = req_total = entries = 0
    for name, s in samples.items():
        req = requests.get(name)
        if req is None:
            continue
        total += s.value
        req_total += req
        entries += 1
    if req_total == 0:
        raise MetricError("no metrics returned matched known pods")
    utilization = (total * 100) // req_total
    return utilization / target, utilization, total // entries


def usage_ratio(samples: dict[str, Sample], target_milli: int) -> tuple[float, int]:
    """upstream GetMetricUsageRatio: (ratio, average usage) over every sample."""
    avg = sum(s.value for s in samples.values()) // len(samples)
    return avg / target_milli, avg


def _within(ratio: float, tolerance: float) -> bool:
    """upstream Tolerances.isWithin (v1.33): 1 - tolerance <= ratio <= 1 + tolerance."""
    return 1.0 - tolerance <= ratio <= 1.0 + tolerance


def calc_utilization_replicas(current: int, target_utilization: int, pods: list[JsonDict],
                              samples: dict[str, Sample], resource: str, container: str | None, now: datetime, *,
                              tolerance: float = DEFAULT_TOLERANCE,
                              cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD,
                              initial_readiness_delay: float = INITIAL_READINESS_DELAY) -> Proposal:
    """upstream GetResourceReplicas (`samples` are what the metrics API returned for the selector)."""
    if not samples:
        raise MetricError(f"unable to get metrics for resource {resource}: no metrics returned from resource "
                          "metrics API")
    if not pods:
        raise MetricError("no pods returned by selector while calculating replica count")
    ready, unready, missing, ignored = group_pods(pods, samples, resource, now,
                                                  cpu_initialization_period=cpu_initialization_period,
                                                  initial_readiness_delay=initial_readiness_delay)
    metrics = {k: v for k, v in samples.items() if k not in ignored and k not in unready}
    if not metrics:
        raise MetricError("did not receive metrics for targeted pods (pods might be unready)")
    requests = pod_requests(pods, resource, container)
    ratio, utilization, raw = utilization_ratio(metrics, requests, target_utilization)
    scale_up_with_unready = bool(unready) and ratio > 1.0
    if not scale_up_with_unready and not missing:
        if _within(ratio, tolerance):
            return Proposal(current, utilization, raw)
        return Proposal(math.ceil(ratio * ready), utilization, raw)
    stamp = next(iter(metrics.values()))
    if missing:
        # a scale-down counts a missing pod at 100 % of its request, or at the target when it is higher
        fallback = max(100, target_utilization)
        for name in missing:
            if ratio < 1.0:
                metrics[name] = Sample(requests[name] * fallback // 100, stamp.timestamp, stamp.window)
            elif ratio > 1.0:
                metrics[name] = Sample(0, stamp.timestamp, stamp.window)
    if scale_up_with_unready:
        for name in unready:
            metrics[name] = Sample(0, stamp.timestamp, stamp.window)
    new_ratio, _, _ = utilization_ratio(metrics, requests, target_utilization)
    if _within(new_ratio, tolerance) or (ratio < 1.0 < new_ratio) or (new_ratio < 1.0 < ratio):
        return Proposal(current, utilization, raw)
    new_replicas = math.ceil(new_ratio * len(metrics))
    if (new_ratio < 1.0 and new_replicas > current) or (new_ratio > 1.0 and new_replicas < current):
        return Proposal(current, utilization, raw)
    return Proposal(new_replicas, utilization, raw)


def calc_average_value_replicas(current: int, target_milli: int, pods: list[JsonDict],
                                samples: dict[str, Sample], resource: str, now: datetime, *,
                                tolerance: float = DEFAULT_TOLERANCE,
                                cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD,
                                initial_readiness_delay: float = INITIAL_READINESS_DELAY) -> Proposal:
    """upstream GetRawResourceReplicas -> calcPlainMetricReplicas (also the Pods-metric path when
    `resource` is not cpu: no cpu readiness rules)."""
    if not samples:
        raise MetricError(f"unable to get metrics for resource {resource}: no metrics returned from resource "
                          "metrics API")
    if not pods:
        raise MetricError("no pods returned by selector while calculating replica count")
    ready, unready, missing, ignored = group_pods(pods, samples, resource, now,
                                                  cpu_initialization_period=cpu_initialization_period,
                                                  initial_readiness_delay=initial_readiness_delay)
    metrics = {k: v for k, v in samples.items() if k not in ignored and k not in unready}
    if not metrics:
        raise MetricError("did not receive metrics for targeted pods (pods might be unready)")
    ratio, raw = usage_ratio(metrics, target_milli)
    scale_up_with_unready = bool(unready) and ratio > 1.0
    if not scale_up_with_unready and not missing:
        if _within(ratio, tolerance):
            return Proposal(current, None, raw)
        return Proposal(math.ceil(ratio * ready), None, raw)
    stamp = next(iter(metrics.values()))
    for name in missing:
        if ratio < 1.0:
            metrics[name] = Sample(target_milli, stamp.timestamp, stamp.window)
        elif ratio > 1.0:
            metrics[name] = Sample(0, stamp.timestamp, stamp.window)
    if scale_up_with_unready:
        for name in unready:
            metrics[name] = Sample(0, stamp.timestamp, stamp.window)
    new_ratio, _ = usage_ratio(metrics, target_milli)
    if _within(new_ratio, tolerance) or (ratio < 1.0 < new_ratio) or (new_ratio < 1.0 < ratio):
        return Proposal(current, None, raw)
    new_replicas = math.ceil(new_ratio * len(metrics))
    if (new_ratio < 1.0 and new_replicas > current) or (new_ratio > 1.0 and new_replicas < current):
        return Proposal(current, None, raw)
    return Proposal(new_replicas, None, raw)


# ---------------------------------------------------------------------------------- behavior


@dataclass(slots=True)
class ScaleEvent:
    change: int
    at: float
    outdated: bool = False


@dataclass(slots=True)
class Recommendation:
    replicas: int
    at: float


def _rules(behavior: JsonDict | None, which: str) -> JsonDict:
    """A behavior's rules with upstream's defaults filled in (also for a missing behavior)."""
    if which == "scaleUp":
        base: JsonDict = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                          "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                       {"type": "Percent", "value": 100, "periodSeconds": 15}]}
    else:
        base = {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
    given = (behavior or {}).get(which) or {}
    return {k: given.get(k) if given.get(k) is not None else v for k, v in base.items()}


def replicas_change_in_period(period: float, events: list[ScaleEvent], now: float) -> int:
    """upstream getReplicasChangePerPeriod: the replicas the events newer than `period` changed."""
    return sum(e.change for e in events if e.at > now - period)


def _period_start(current: int, period: float, up_events: list[ScaleEvent], down_events: list[ScaleEvent],
                  now: float) -> int:
    """The replica count at the start of the period: minus what was added, plus what was removed."""
    return current - replicas_change_in_period(period, up_events, now) + \
        replicas_change_in_period(period, down_events, now)


def scale_up_limit(current: int, up_events: list[ScaleEvent], down_events: list[ScaleEvent], rules: JsonDict,
                   now: float) -> int:
    """upstream calculateScaleUpLimitWithScalingRules."""
    if rules.get("selectPolicy") == "Disabled":
        return current
    pick_min = rules.get("selectPolicy") == "Min"
    result = 2**31 - 1 if pick_min else -(2**31)
    for p in rules.get("policies") or ():
        start = _period_start(current, float(p["periodSeconds"]), up_events, down_events, now)
        if p["type"] == "Pods":
            proposed = start + int(p["value"])
        else:
            proposed = math.ceil(start * (1 + int(p["value"]) / 100))
        result = min(result, proposed) if pick_min else max(result, proposed)
    return result


def scale_down_limit(current: int, up_events: list[ScaleEvent], down_events: list[ScaleEvent], rules: JsonDict,
                     now: float) -> int:
    """upstream calculateScaleDownLimitWithBehaviors (the lowest change under Min is a maximum)."""
    if rules.get("selectPolicy") == "Disabled":
        return current
    pick_min_change = rules.get("selectPolicy") == "Min"
    result = -(2**31) if pick_min_change else 2**31 - 1
    for p in rules.get("policies") or ():
        start = _period_start(current, float(p["periodSeconds"]), up_events, down_events, now)
        if p["type"] == "Pods":
            proposed = start - int(p["value"])
        else:
            proposed = int(start * (1 - int(p["value"]) / 100))
        result = max(result, proposed) if pick_min_change else min(result, proposed)
    return result


def _replace_old_or_append(items: list[Any], old: int, new: Any) -> None:
    if old >= 0:
        items[old] = new
    else:
        items.append(new)


def store_scale_event(up_events: list[ScaleEvent], down_events: list[ScaleEvent], behavior: JsonDict | None,
                      prev: int, new: int, now: float) -> None:
    """upstream storeScaleEvent: nothing without a behavior; else the events older than the
    direction's longest policy period are marked outdated and the last of those is reused."""
    if behavior is None:
        return
    events, which = (up_events, "scaleUp") if new > prev else (down_events, "scaleDown")
    longest = max((float(p["periodSeconds"]) for p in _rules(behavior, which)["policies"] or ()), default=0.0)
    old = -1
    for i, e in enumerate(events):
        if e.at < now - longest:
            e.outdated = True
        if e.outdated:
            old = i
    _replace_old_or_append(events, old, ScaleEvent(abs(new - prev), now))


def stabilize_recommendation(recommendations: list[Recommendation], proposed: int, window: float, now: float) -> int:
    """upstream stabilizeRecommendation (an HPA without behavior): the highest recommendation of the
    downscale stabilization window; the proposal replaces the last older one, or is appended."""
    best = proposed
    old = -1
    for i, r in enumerate(recommendations):
        if r.at < now - window:
            old = i
        elif r.replicas > best:
            best = r.replicas
    _replace_old_or_append(recommendations, old, Recommendation(proposed, now))
    return best


def stabilize_recommendation_with_behaviors(recommendations: list[Recommendation], current: int, proposed: int,
                                            up_window: float, down_window: float, now: float
                                            ) -> tuple[int, str, str]:
    """upstream stabilizeRecommendationWithBehaviors: the current count brought within [lowest
    recommendation of the scale-up window, highest of the scale-down window]; the proposal
    replaces the last recommendation older than both windows, or is appended."""
    up_rec = down_rec = proposed
    up_cut, down_cut = now - up_window, now - down_window
    old = -1
    for i, r in enumerate(recommendations):
        if r.at > up_cut:
            up_rec = min(up_rec, r.replicas)
        if r.at > down_cut:
            down_rec = max(down_rec, r.replicas)
        if r.at < up_cut and r.at < down_cut:
            old = i
    rec = max(current, up_rec)
    rec = min(rec, down_rec)
    _replace_old_or_append(recommendations, old, Recommendation(proposed, now))
    if proposed >= current:
        return rec, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the " \
                                         "lowest recent recommendation"
    return rec, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the " \
                                       "highest recent recommendation"


@dataclass(slots=True)
class Limited:
    replicas: int
    reason: str
    message: str
    limited: bool


def limit_with_behavior(current: int, desired: int, min_replicas: int, max_replicas: int, behavior: JsonDict | None,
                        up_events: list[ScaleEvent], down_events: list[ScaleEvent], now: float) -> Limited:
    """upstream convertDesiredReplicasWithBehaviorRate."""
    if desired > current:
        limit = scale_up_limit(current, up_events, down_events, _rules(behavior, "scaleUp"), now)
        limit = max(limit, current)
        allowed = min(max_replicas, limit)
        if desired > allowed:
            if allowed == max_replicas:
                return Limited(allowed, "TooManyReplicas", "the desired replica count is more than the maximum "
                                                            "replica count", True)
            return Limited(allowed, "ScaleUpLimit", "the desired replica count is increasing faster than the "
                                                    "maximum scale rate", True)
    elif desired < current:
        limit = scale_down_limit(current, up_events, down_events, _rules(behavior, "scaleDown"), now)
        limit = min(limit, current)
        allowed = max(min_replicas, limit)
        if desired < allowed:
            if allowed == min_replicas:
                return Limited(allowed, "TooFewReplicas", "the desired replica count is less than the minimum "
                                                          "replica count", True)
            return Limited(allowed, "ScaleDownLimit", "the desired replica count is decreasing faster than the "
                                                      "maximum scale rate", True)
    return Limited(desired, "DesiredWithinRange", "the desired count is within the acceptable range", False)


def limit_legacy(current: int, desired: int, min_replicas: int, max_replicas: int) -> Limited:
    """upstream convertDesiredReplicasWithRules (an HPA without behavior)."""
    up = int(max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM))
    if max_replicas > up:
        allowed, reason, msg = up, "ScaleUpLimit", "the desired replica count is increasing faster than the " \
                                                   "maximum scale rate"
    else:
        allowed, reason, msg = max_replicas, "TooManyReplicas", "the desired replica count is more than the " \
                                                                "maximum replica count"
    if desired < min_replicas:
        return Limited(min_replicas, "TooFewReplicas", "the desired replica count is less than the minimum "
                                                       "replica count", True)
    if desired > allowed:
        return Limited(allowed, reason, msg, True)
    return Limited(desired, "DesiredWithinRange", "the desired count is within the acceptable range", False)


# ---------------------------------------------------------------------------------- controller


@dataclass(slots=True)
class HPAState:
    """Per-HPA memory kept between syncs (upstream's recommendations and scale events maps)."""

    recommendations: list[Recommendation] = field(default_factory=list)
    up_events: list[ScaleEvent] = field(default_factory=list)
    down_events: list[ScaleEvent] = field(default_factory=list)


def _metric_name(kind: str, resource: str, utilization: bool) -> str:
    what = "container resource" if kind == "ContainerResource" else "resource"
    return f"{resource} {what} utilization (percentage of request)" if utilization else f"{resource} {what}"


class HorizontalPodAutoscalerController:
    NAME = "horizontal-pod-autoscaler"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, usage: UsageProvider,
                 clock: Clock | None = None, sync_period: float = DEFAULT_SYNC_PERIOD,
                 tolerance: float = DEFAULT_TOLERANCE, downscale_stabilization: float = DOWNSCALE_STABILIZATION,
                 cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD,
                 initial_readiness_delay: float = INITIAL_READINESS_DELAY) -> None:
        self._client = client
        self._usage = usage
        self._clock = clock or Clock()
        self.sync_period = sync_period
        self.tolerance = tolerance
        self.downscale_stabilization = downscale_stabilization
        self.cpu_initialization_period = cpu_initialization_period
        self.initial_readiness_delay = initial_readiness_delay
        # upstream hpaSelectors: every known HPA, with the selector of its target once it was synced
        self._selectors: dict[str, LabelSelector | None] = {}
        self._hpas = informers.informer(HPAS)
        self._pods = informers.informer(PODS)
        self._builtin = ResourceRegistry()
        self.queue = WorkQueue()
        self.recorder = EventRecorder(client, "horizontal-pod-autoscaler", clock=self._clock)
        self.state: dict[str, HPAState] = {}
        self._hpas.add_handler(on_add=self._enqueue, on_update=self._on_update, on_delete=self._forget)

    def _key(self, hpa: JsonDict) -> str:
        m = meta(hpa)
        return f"{m.get('namespace')}/{m.get('name')}"

    def _enqueue(self, hpa: JsonDict) -> None:
        self._selectors.setdefault(self._key(hpa), None)
        self.queue.add(self._key(hpa))

    def _on_update(self, old: JsonDict, new: JsonDict) -> None:
        self._selectors.setdefault(self._key(new), None)
        # status writes come back as updates: only a spec change syncs before the next period
        if meta(old).get("generation") != meta(new).get("generation"):
            self._enqueue(new)

    def _forget(self, hpa: Any) -> None:
        if isinstance(hpa, dict):
            self.state.pop(self._key(hpa), None)
            self._selectors.pop(self._key(hpa), None)

    async def run(self, workers: int = 5) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            for inf in (self._hpas, self._pods):
                await inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(run_workers(self.queue, self._sync_and_requeue, workers=workers, name=self.NAME),
                           name=f"{self.NAME}-workers")

    async def _sync_and_requeue(self, key: str) -> None:
        try:
            await self.sync(key)
        finally:
            if self._hpas.store.get(key) is not None:
                self.queue.add_after(key, self.sync_period)

    async def _scale_resource(self, ref: JsonDict) -> ResourceInfo | None:
        api_version = str(ref.get("apiVersion") or "")
        kind = str(ref.get("kind") or "")
        info = self._builtin.by_kind(api_version, kind)
        if info is not None:
            return info if "scale" in info.subresources else None
        group, _, version = api_version.rpartition("/")
        for crd in (await self._client.list(CRDS)).get("items") or ():
            spec = crd.get("spec") or {}
            if spec.get("group") != group or (spec.get("names") or {}).get("kind") != kind:
                continue
            for v in spec.get("versions") or ():
                if v.get("name") == version and (v.get("subresources") or {}).get("scale") is not None:
                    res = crd_resource(crd)
                    if res is not None:
                        return ResourceInfo(res.group, version, res.resource, res.kind, True, builtin=False,
                                            subresources=("scale",))
        return None

    async def sync(self, key: str) -> None:
        hpa = self._hpas.store.get(key)
        if hpa is None:
            self.state.pop(key, None)
            return
        ns = str(meta(hpa).get("namespace"))
        spec = hpa.get("spec") or {}
        status = dict(hpa.get("status") or {})
        conditions: list[JsonDict] = [dict(c) for c in status.get("conditions") or ()]
        now_s = now_str(self._clock)

        def cond(ctype: str, st: str, reason: str, message: str) -> None:
            set_condition(conditions, {"type": ctype, "status": st, "reason": reason, "message": message}, now=now_s)

        ref = spec.get("scaleTargetRef") or {}
        reference = f"{ref.get('kind')}/{ref.get('name')}"
        info = await self._scale_resource(ref)
        scale: JsonDict | None = None
        err_msg = ""
        if info is None:
            err_msg = f'no matches for kind "{ref.get("kind")}" in group "{str(ref.get("apiVersion") or "").rpartition("/")[0]}"'
        else:
            try:
                scale = await self._client.get(info, str(ref.get("name")), ns, subresource="scale")
            except ApiError as e:
                err_msg = e.message
        if scale is None or info is None:
            self.recorder.event(hpa, "Warning", "FailedGetScale", err_msg)
            cond("AbleToScale", "False", "FailedGetScale", f"the HPA controller was unable to get the target's "
                                                            f"current scale: {err_msg}")
            await self._write_status(hpa, status, conditions)
            return
        cond("AbleToScale", "True", "SucceededGetScale", "the HPA controller was able to get the target's current "
                                                          "scale")
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        min_r = int(spec.get("minReplicas") or 1)
        max_r = int(spec.get("maxReplicas") or 0)
        status["currentReplicas"] = int((scale.get("status") or {}).get("replicas") or 0)
        now = self._clock.monotonic()
        state = self.state.get(key)
        if state is None:  # upstream recordInitialRecommendation: the current size is the first one
            state = self.state[key] = HPAState(recommendations=[Recommendation(current, now)])
        rescale_reason = ""
        desired = current
        if current == 0 and min_r != 0:
            desired = 0
            cond("ScalingActive", "False", "ScalingDisabled", "scaling is disabled since the replica count of the "
                                                               "target is zero")
        elif current > max_r:
            rescale_reason = "Current number of replicas above Spec.MaxReplicas"
            desired = max_r
        elif current < min_r:
            rescale_reason = "Current number of replicas below Spec.MinReplicas"
            desired = min_r
        else:
            proposal = self._compute(hpa, scale, current, status, cond)
            if proposal is None:
                await self._write_status(hpa, status, conditions)
                return
            metric_replicas, metric_name = proposal
            # upstream names the reason from the metrics' proposal, before normalization
            if metric_replicas > current:
                rescale_reason = f"{metric_name} above target"
            elif metric_replicas < current:
                rescale_reason = "All metrics below target"
            behavior = spec.get("behavior")
            if behavior is None:
                stabilized = stabilize_recommendation(state.recommendations, metric_replicas,
                                                      self.downscale_stabilization, now)
                reason, message = "ScaleDownStabilized", "recent recommendations were higher than current one, " \
                                                         "applying the highest recent recommendation"
            else:
                stabilized, reason, message = stabilize_recommendation_with_behaviors(
                    state.recommendations, current, metric_replicas,
                    float(_rules(behavior, "scaleUp")["stabilizationWindowSeconds"]),
                    float(_rules(behavior, "scaleDown")["stabilizationWindowSeconds"]), now)
            if stabilized != metric_replicas:
                cond("AbleToScale", "True", reason, message)
            else:
                cond("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size")
            if behavior is None:
                lim = limit_legacy(current, stabilized, min_r, max_r)
            else:
                lim = limit_with_behavior(current, stabilized, min_r, max_r, behavior,
                                          state.up_events, state.down_events, now)
            cond("ScalingLimited", "True" if lim.limited else "False", lim.reason, lim.message)
            desired = lim.replicas
        if desired != current:
            body = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": dict(scale.get("metadata") or {}),
                    "spec": {"replicas": desired}}
            try:
                await self._client.update(info, body, subresource="scale", read_only=True)
            except ApiError as e:
                self.recorder.event(hpa, "Warning", "FailedRescale", f"New size: {desired}; reason: {rescale_reason}; "
                                                                      f"error: {e.message}")
                cond("AbleToScale", "False", "FailedUpdateScale", f"the HPA controller was unable to update the "
                                                                  f"target scale: {e.message}")
                await self._write_status(hpa, status, conditions)
                return
            cond("AbleToScale", "True", "SucceededRescale", f"the HPA controller was able to update the target "
                                                            f"scale to {desired}")
            self.recorder.event(hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {rescale_reason}")
            store_scale_event(state.up_events, state.down_events, spec.get("behavior"), current, desired, now)
            logger.info("%s: rescaled hpa=%s target=%s from=%d to=%d reason=%s", self.NAME, key, reference, current,
                        desired, rescale_reason)
            status["lastScaleTime"] = now_s
        status["desiredReplicas"] = desired
        await self._write_status(hpa, status, conditions)

    def _compute(self, hpa: JsonDict, scale: JsonDict, current: int, status: JsonDict, cond: Any
                 ) -> tuple[int, str] | None:
        """(replicas, metric name) of the largest valid proposal; None when none is valid."""
        ns = str(meta(hpa).get("namespace"))
        selector_s = (scale.get("status") or {}).get("selector")
        metrics = (hpa.get("spec") or {}).get("metrics") or []
        statuses: list[JsonDict] = []
        best: tuple[int, str] | None = None
        invalid = 0
        first_err = ""
        if not selector_s:
            self.recorder.event(hpa, "Warning", "SelectorRequired", "selector is required")
            cond("ScalingActive", "False", "InvalidSelector", "the HPA target's scale is missing a selector")
            self._failed_compute(hpa, "selector is required")
            return None
        try:
            sel = parse_label_selector(str(selector_s))
        except ValueError as e:
            msg = f"couldn't convert selector into a corresponding internal selector object: {e}"
            self.recorder.event(hpa, "Warning", "InvalidSelector", msg)
            cond("ScalingActive", "False", "InvalidSelector", msg)
            self._failed_compute(hpa, msg)
            return None
        key = self._key(hpa)
        if key in self._selectors:
            self._selectors[key] = sel
        pods = [p for p in self._pods.store.list() if meta(p).get("namespace") == ns
                and sel.matches(meta(p).get("labels"))]
        controlling = self._hpas_controlling(ns, pods)
        if len(controlling) > 1:
            msg = f"pods by selector {selector_s} are controlled by multiple HPAs: [{' '.join(controlling)}]"
            self.recorder.event(hpa, "Warning", "AmbiguousSelector", msg)
            cond("ScalingActive", "False", "AmbiguousSelector", msg)
            self._failed_compute(hpa, msg)
            return None
        # the metrics API is asked with the target's selector: only the selected pods' samples
        selected = {str(meta(p).get("name")) for p in pods}
        unavailable: str | None = None  # the metrics API's own error, for every metric
        try:
            usage = [u for u in self._usage.pod_usage(ns) if u.name in selected]
        except MetricsUnavailableError as e:
            usage, unavailable = [], str(e)
        now = self._clock.now()
        for m in metrics:
            typ = m.get("type")
            src = m.get("resource") if typ == "Resource" else m.get("containerResource") \
                if typ == "ContainerResource" else None
            if not isinstance(src, dict):
                invalid += 1
                first_err = first_err or f"the HPA controller does not serve {typ} metrics in this cluster"
                statuses.append({"type": typ or ""})
                cond("ScalingActive", "False", "InvalidMetricSourceType", f"the HPA was unable to compute the "
                     f"replica count: unrecognized metric source type {typ!r}")
                continue
            resource = str(src.get("name") or "")
            container = str(src.get("container") or "") if typ == "ContainerResource" else None
            target = src.get("target") or {}
            key = "resource" if typ == "Resource" else "containerResource"
            reason = "FailedGetResourceMetric" if typ == "Resource" else "FailedGetContainerResourceMetric"
            try:
                if unavailable is not None:  # the replica calculator's wrapping of the client error
                    raise MetricError(f"unable to get metrics for resource {resource}: {unavailable}")
                samples = samples_for(usage, resource, container)
                if target.get("averageUtilization") is not None:
                    p = calc_utilization_replicas(current, int(target["averageUtilization"]), pods, samples,
                                                  resource, container, now, tolerance=self.tolerance,
                                                  cpu_initialization_period=self.cpu_initialization_period,
                                                  initial_readiness_delay=self.initial_readiness_delay)
                    cur: JsonDict = {"averageUtilization": p.utilization,
                                     "averageValue": _format_milli(resource, p.raw_average)}
                    name = _metric_name(str(typ), resource, True)
                else:
                    target_milli = _milli(resource, target.get("averageValue") or 0)
                    if target_milli <= 0:
                        raise MetricError("invalid resource metric source: neither a utilization target nor a value "
                                          "target was set")
                    p = calc_average_value_replicas(current, target_milli, pods, samples, resource, now,
                                                    tolerance=self.tolerance,
                                                    cpu_initialization_period=self.cpu_initialization_period,
                                                    initial_readiness_delay=self.initial_readiness_delay)
                    cur = {"averageValue": _format_milli(resource, p.raw_average)}
                    name = _metric_name(str(typ), resource, False)
            except MetricError as e:
                what = "utilization" if target.get("averageUtilization") is not None else "usage"
                msg = f"failed to get {resource} {what}: {e}"
                if typ == "ContainerResource":
                    msg = f"failed to get {resource} {what} of container {container}: {e}"
                invalid += 1
                first_err = first_err or msg
                statuses.append({"type": typ})
                self.recorder.event(hpa, "Warning", reason, msg)
                cond("ScalingActive", "False", reason, f"the HPA was unable to compute the replica count: {msg}")
                continue
            entry: JsonDict = {"name": resource, "current": cur}
            if container is not None:
                entry["container"] = container
            statuses.append({"type": typ, key: entry})
            if best is None or p.replicas > best[0]:
                best = (p.replicas, name)
        status["currentMetrics"] = statuses or None
        if best is None or invalid >= len(metrics) or (invalid > 0 and best[0] < current):
            msg = f"invalid metrics ({invalid} invalid out of {len(metrics)}), first error is: {first_err}"
            self.recorder.event(hpa, "Warning", "FailedComputeMetricsReplicas", msg)
            return None
        cond("ScalingActive", "True", "ValidMetricFound", f"the HPA was able to successfully calculate a replica "
                                                          f"count from {best[1]}")
        return best

    def _hpas_controlling(self, ns: str, pods: list[JsonDict]) -> list[str]:
        """upstream hpasControllingPodsUnderSelector: the known HPAs of the namespace whose synced
        selector selects one of the pods, as Go prints their keys ({name namespace}), sorted."""
        out: list[str] = []
        for key, sel in self._selectors.items():
            hpa_ns, _, name = key.partition("/")
            if sel is not None and hpa_ns == ns and any(sel.matches(meta(p).get("labels")) for p in pods):
                out.append(f"{{{name} {hpa_ns}}}")
        return sorted(out)

    def _failed_compute(self, hpa: JsonDict, message: str) -> None:
        self.recorder.event(hpa, "Warning", "FailedComputeMetricsReplicas", message)

    async def _write_status(self, hpa: JsonDict, status: JsonDict, conditions: list[JsonDict]) -> None:
        status["conditions"] = conditions
        gen = meta(hpa).get("generation")
        if gen is not None:
            status["observedGeneration"] = gen
        status.setdefault("desiredReplicas", int((hpa.get("status") or {}).get("desiredReplicas") or 0))
        status = {k: v for k, v in status.items() if v is not None}
        if status == (hpa.get("status") or {}):
            return
        body = dict(hpa)
        body["status"] = status
        try:
            await self._client.update_status(HPAS, body, read_only=True)
        except NotFoundError:
            return


def _format_milli(resource: str, milli: int) -> str:
    """upstream resource.NewMilliQuantity(v, DecimalSI).String() for the usage values."""
    if resource != "cpu" and milli % 1000 == 0:
        return str(milli // 1000)
    return format_milli(milli)
