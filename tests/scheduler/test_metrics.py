"""scheduler/metrics.py's own counters and histograms expose exactly what prometheus_client's
`Counter` / `Histogram` with upstream kube-scheduler's names, labels and buckets would: the same
`/metrics` bytes after the same observations (bucket edges, +Inf, NaN, `_created`), and the
framework's extension points are still timed per run."""

from __future__ import annotations

import random
import types

import prometheus_client.metrics
import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from scheduler.metrics import SchedulerMetrics

WALL = 1_780_000_000.25


def _exp(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


def _reference(reg: CollectorRegistry) -> dict[str, Counter | Histogram]:
    """kube-scheduler v1.33's scheduler metrics as prometheus_client would declare them."""
    ns = {"namespace": "scheduler", "registry": reg}
    return {
        "attempts": Counter("schedule_attempts_total",
                            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
                            "not be scheduled, while 'error' means an internal scheduler problem.",
                            labelnames=("result", "profile"), **ns),
        "attempt_duration": Histogram("scheduling_attempt_duration_seconds",
                                      "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
                                      labelnames=("result", "profile"), buckets=_exp(0.001, 2, 15), **ns),
        "preemption": Counter("preemption_attempts_total", "Total preemption attempts in the cluster till now", **ns),
        "victims": Histogram("preemption_victims", "Number of selected preemption victims", buckets=_exp(1, 2, 7),
                             **ns),
        "sli": Histogram("pod_scheduling_sli_duration_seconds",
                         "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue "
                         "and might involve multiple scheduling attempts.",
                         labelnames=("attempts",), buckets=_exp(0.01, 2, 20), **ns),
        "pod_attempts": Histogram("pod_scheduling_attempts", "Number of attempts to successfully schedule a pod.",
                                  buckets=_exp(1, 2, 5), **ns),
        "incoming": Counter("queue_incoming_pods_total",
                            "Number of pods added to scheduling queues by event and queue type.",
                            labelnames=("queue", "event"), **ns),
        "ep": Histogram("framework_extension_point_duration_seconds",
                        "Latency for running all plugins of a specific extension point.",
                        labelnames=("extension_point", "status", "profile"), buckets=_exp(0.0001, 2, 12), **ns),
        "permit_wait": Histogram("permit_wait_duration_seconds", "Duration of waiting on permit.",
                                 labelnames=("result",), buckets=_exp(0.001, 2, 15), **ns),
    }


@pytest.fixture
def fixed_wall(monkeypatch: pytest.MonkeyPatch) -> None:
    """prometheus_client stamps `_created` with time.time(); pin it to the value ours is given."""
    monkeypatch.setattr(prometheus_client.metrics, "time", types.SimpleNamespace(time=lambda: WALL))


def _observe_both(ours: SchedulerMetrics, ref: dict[str, Counter | Histogram], seed: int) -> None:
    rng = random.Random(seed)
    edges = [0.0, 0.0001, 0.0008, 0.001, 0.016384, 0.2048, 16.384, 1e9, -0.5]
    for _ in range(400):
        secs = rng.choice(edges) if rng.random() < 0.3 else rng.expovariate(200.0)
        kind = rng.randrange(6)
        if kind == 0:
            result, profile = rng.choice(["scheduled", "unschedulable", "error"]), rng.choice(["default-scheduler",
                                                                                               "other"])
            ours.attempt(result, profile, secs)
            ref["attempts"].labels(result, profile).inc()
            ref["attempt_duration"].labels(result, profile).observe(secs)
        elif kind == 1:
            attempts = rng.choice([1, 1, 2, 3, 15, 40])
            ours.bound(attempts, secs)
            ref["pod_attempts"].observe(attempts)
            ref["sli"].labels("15+" if attempts >= 15 else str(attempts)).observe(secs)
        elif kind == 2:
            queue, event = rng.choice(["active", "backoff", "unschedulable"]), rng.choice(["PodAdd", "NodeAdd"])
            ours._on_incoming(queue, event)
            ref["incoming"].labels(queue, event).inc()
        elif kind == 3:
            ep, status = rng.choice(["PreFilter", "Score", "Permit"]), rng.choice(["Success", "Unschedulable"])
            ours._observe_extension_point(ep, status, "default-scheduler", secs)
            ref["ep"].labels(ep, status, "default-scheduler").observe(secs)
        elif kind == 4:
            n = rng.choice([0, 1, 2, 3, 64, 65, 1000])
            ours.preemption_victims.observe(n)
            ref["victims"].observe(n)
        elif kind == 5:
            result = rng.choice(["Success", "Unschedulable"])
            ours._child(ours.permit_wait, result).observe(secs)
            ref["permit_wait"].labels(result).observe(secs)
        else:
            ours.preemption_attempts.inc()
            ref["preemption"].inc()


@pytest.mark.usefixtures("fixed_wall")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_exposition_is_prometheus_clients_byte_for_byte(seed: int) -> None:
    ours_reg, ref_reg = CollectorRegistry(), CollectorRegistry()
    ours = SchedulerMetrics(ours_reg, wall=lambda: WALL)
    ref = _reference(ref_reg)
    assert generate_latest(ours_reg) == generate_latest(ref_reg)  # before any observation too
    _observe_both(ours, ref, seed)
    got = generate_latest(ours_reg)
    assert got == generate_latest(ref_reg)
    assert b'scheduler_framework_extension_point_duration_seconds_bucket{extension_point="' in got
    assert b'le="+Inf"' in got and b"scheduler_schedule_attempts_created" in got


@pytest.mark.usefixtures("fixed_wall")
def test_nan_and_disabled_created_series_match(monkeypatch: pytest.MonkeyPatch) -> None:
    ours_reg, ref_reg = CollectorRegistry(), CollectorRegistry()
    ours = SchedulerMetrics(ours_reg, wall=lambda: WALL)
    ref = _reference(ref_reg)
    ours.attempt("scheduled", "p", float("nan"))
    ref["attempts"].labels("scheduled", "p").inc()
    ref["attempt_duration"].labels("scheduled", "p").observe(float("nan"))
    ours.attempt("scheduled", "p", 0.003)
    ref["attempts"].labels("scheduled", "p").inc()
    ref["attempt_duration"].labels("scheduled", "p").observe(0.003)
    monkeypatch.setattr(prometheus_client.metrics, "_use_created", False)
    got = generate_latest(ours_reg)
    assert got == generate_latest(ref_reg)
    assert b"_created" not in got and b"scheduler_scheduling_attempt_duration_seconds_sum" in got
    # a NaN adds to the sum but to no bucket, so not to the count either (prometheus_client's loop)
    assert b'scheduler_scheduling_attempt_duration_seconds_count{profile="p",result="scheduled"} 1.0' in got
    assert b'scheduler_scheduling_attempt_duration_seconds_sum{profile="p",result="scheduled"} NaN' in got


def test_duplicate_registration_and_bad_labels_are_refused() -> None:
    reg = CollectorRegistry()
    m = SchedulerMetrics(reg)
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        SchedulerMetrics(reg)
    with pytest.raises(ValueError, match="label values"):
        m.schedule_attempts.labels("scheduled")
    with pytest.raises(ValueError, match="non-negative"):
        m.preemption_attempts.inc(-1)
