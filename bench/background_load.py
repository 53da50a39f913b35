"""A measured SchedulingBasic batch with a background load beside it (bench_unschedulable, bench_churn).

Why: upstream scheduler_perf's `Unschedulable` and `SchedulingWithMixedChurn` workloads measure the
throughput of ordinary pods (100m / 500Mi, scheduler_perf's pod-default) while a `churn` op runs in
the background: pods that fit nowhere created at a steady rate, or nodes, pods and Services created
and deleted in a loop. The question each answers is how much the background costs the batch, so
every figure here comes in pairs: the same batch without the background (baseline) and with it,
runs interleaved (baseline, loaded, baseline, loaded, ...) so a shared machine's load drifts over
both alike.

Data flow, per run, against a real in-process server (`minik3s.server.start`, API + SQLite + watch
cache; the composition root's scheduler, controllers and kubelets off, the scheduler built here
with the Prometheus metrics `minik3s server` runs it with):
  1. nodes (4 CPU / 32Gi / 110 pods, hostname + zone labels, bench_scheduler.node_obj), then init
     pods created bound round robin (spec.nodeName), then `setup(rs)` (e.g. a PriorityClass);
  2. mode "prefilled" (default, issue 14's measurement): the measured pods are created before the
     scheduler starts; mode "created" (upstream's): they are created by 32 creators while the
     scheduler runs;
  3. the scheduler and `background(rs, stop)` start together; the run ends when every measured pod
     is bound (the pod informer sees spec.nodeName), then `stop` is set and the background's own
     summary (what it created and deleted) is kept;
  4. throughput: `rate` = (bound measured pods - 1) / (last bind - first bind) from the informer's
     times (the comparison figure: it does not depend on 1-s sampling, which a 2-s quick batch
     cannot fill), plus scheduler_perf's 1-s samples from PodScheduled times (average/p50/p99);
     the scheduler's own counters (attempts by result, preemption attempts, queue moves by event)
     say where extra work went.
"""

from __future__ import annotations

import asyncio
import contextlib
import cProfile
import logging
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.bench_scheduler import (
    BindWatcher,
    _create_all,
    _wait,
    default_pod,
    node_labels,
    node_name,
    node_obj,
    podscheduled_samples,
)
from bench.common import pct
from minik3s import server
from minik3s.api.resources import NAMESPACES, NODES, PODS
from minik3s.config import ServerConfig

logger = logging.getLogger(__name__)

MEASURED_NS = "measured"
# the background's own objects (churn pods, Services) live here, apart from the measured pods
BACKGROUND_NS = "churn"

Background = Callable[[Any, asyncio.Event], Coroutine[Any, Any, dict[str, Any]]]
Setup = Callable[[Any], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class BatchShape:
    nodes: int
    init_pods: int
    measured_pods: int


def scheduler_counters(registry: Any) -> dict[str, Any]:
    """The scheduler's Prometheus counters that tell where the work went: attempts by result,
    preemption attempts, pods moved into each queue by event, the mean attempt duration (all
    results, and per result: `unschedulable` is the cost of one failed cycle, PostFilter and
    failure handling included) and the seconds spent in each extension point (all profiles, all
    results)."""
    attempts: dict[str, float] = {}
    incoming: dict[str, float] = {}
    preemption = 0.0
    attempt_sum = attempt_count = 0.0
    by_result: dict[str, list[float]] = {}
    points: dict[str, float] = {}
    for metric in registry.collect():
        for s in metric.samples:
            if s.name == "scheduler_schedule_attempts_total":
                attempts[s.labels.get("result", "")] = attempts.get(s.labels.get("result", ""), 0) + s.value
            elif s.name == "scheduler_preemption_attempts_total":
                preemption += s.value
            elif s.name == "scheduler_queue_incoming_pods_total":
                k = f"{s.labels.get('queue', '')}/{s.labels.get('event', '')}"
                incoming[k] = incoming.get(k, 0) + s.value
            elif s.name == "scheduler_scheduling_attempt_duration_seconds_sum":
                attempt_sum += s.value
                by_result.setdefault(s.labels.get("result", ""), [0.0, 0.0])[0] += s.value
            elif s.name == "scheduler_scheduling_attempt_duration_seconds_count":
                attempt_count += s.value
                by_result.setdefault(s.labels.get("result", ""), [0.0, 0.0])[1] += s.value
            elif s.name == "scheduler_framework_extension_point_duration_seconds_sum":
                ep = s.labels.get("extension_point", "")
                points[ep] = points.get(ep, 0.0) + s.value
    return {"schedule_attempts": {k: int(v) for k, v in sorted(attempts.items())},
            "preemption_attempts": int(preemption),
            "queue_incoming": {k: int(v) for k, v in sorted(incoming.items())},
            "attempt_mean_ms": round(1000 * attempt_sum / attempt_count, 2) if attempt_count else None,
            "attempt_mean_ms_by_result": {k: round(1000 * t / c, 2) for k, (t, c) in sorted(by_result.items()) if c},
            "extension_point_seconds": {k: round(v, 3) for k, v in sorted(points.items(), key=lambda kv: -kv[1])}}


async def run_batch(shape: BatchShape, *, background: Background | None, mode: str = "prefilled",
                    setup: Setup | None = None, profile: str | None = None) -> dict[str, Any]:
    """One run: the batch, with `background` beside it (None: the baseline). `profile`: a file
    the measured phase's cProfile is written to (from the scheduler's start to the last bind)."""
    if mode not in ("prefilled", "created"):
        raise ValueError(f"mode must be prefilled or created, not {mode!r}")
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as d:
        cfg = ServerConfig(port=0, data_dir=Path(d), nodes="0",
                           disable={"kubelet", "controllers", "scheduler", "descheduler"})
        rs = await server.start(cfg)
        try:
            return await _run(rs, shape, background=background, mode=mode, setup=setup, profile=profile)
        finally:
            await server.stop(rs)


async def _run(rs: Any, shape: BatchShape, *, background: Background | None, mode: str,
               setup: Setup | None, profile: str | None) -> dict[str, Any]:
    from scheduler.metrics import SchedulerMetrics
    from scheduler.scheduler import Scheduler

    tasks: list[asyncio.Task[Any]] = []
    stop = asyncio.Event()
    try:
        for ns in (MEASURED_NS, BACKGROUND_NS):
            await rs.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        await _create_all(rs, [node_obj(i, node_labels(i)) for i in range(shape.nodes)], None, resource=NODES)
        init = []
        for i in range(shape.init_pods):
            pod = default_pod(f"init-{i:06d}", "default")
            pod["spec"]["nodeName"] = node_name(i % shape.nodes)
            init.append(pod)
        await _create_all(rs, init, None)
        if setup is not None:
            await setup(rs)
        measured = [default_pod(f"measured-{i:06d}", MEASURED_NS) for i in range(shape.measured_pods)]
        if mode == "prefilled":
            await _create_all(rs, measured, None)
        sched = Scheduler(None, client=rs.client, informers=rs.informers, metrics=SchedulerMetrics(rs.metrics))
        watcher = BindWatcher()
        watcher.measured_prefix = "measured-"
        rs.informers.informer(PODS).add_handler(on_add=watcher.on_add, on_update=watcher.on_update)
        tasks.append(asyncio.create_task(rs.informers.run(), name="bench-informers"))
        await rs.informers.wait_for_sync()
        await _wait(lambda: sum(1 for k in watcher.bound_at if k.startswith("init-")) >= shape.init_pods,
                    watcher, 600, "init pods synced", tasks)
        watcher.measured_bound = 0
        prof = cProfile.Profile() if profile else None
        if prof is not None:
            prof.enable()
        t0 = time.monotonic()
        tasks.append(asyncio.create_task(sched.run(), name="bench-scheduler"))
        bg: asyncio.Task[dict[str, Any]] | None = None
        if background is not None:
            bg = asyncio.create_task(background(rs, stop), name="bench-background")
            tasks.append(bg)
        if mode == "created":
            await _create_all(rs, measured, None)
        await _wait(lambda: watcher.measured_bound >= shape.measured_pods, watcher, 1800,
                    "measured pods bound", tasks)
        stop.set()
        if prof is not None:
            prof.disable()
            prof.dump_stats(profile or "")
        bg_summary: dict[str, Any] = {}
        if bg is not None:
            bg_summary = await asyncio.wait_for(bg, 60)
        times = sorted(watcher.bound_at[p["metadata"]["name"]] for p in measured)
        span = times[-1] - times[0]
        rate = (len(times) - 1) / span if span > 0 else float("nan")
        listed = await rs.client.list(PODS, MEASURED_NS)
        samples, bound = podscheduled_samples(listed.get("items") or [], "measured-")
        if bound != shape.measured_pods:
            raise RuntimeError(f"{bound} of {shape.measured_pods} measured pods carry PodScheduled=True")
        return {
            "rate_pods_per_second": round(rate, 1),
            "throughput_average": round(statistics.fmean(samples), 1) if samples else None,
            "throughput_p50": round(pct(samples, 50), 1) if samples else None,
            "throughput_p99": round(pct(samples, 99), 1) if samples else None,
            "throughput_samples": len(samples),
            "first_bind_seconds": round(times[0] - t0, 2),
            "batch_seconds": round(times[-1] - t0, 2),
            "background": bg_summary,
            "scheduler": scheduler_counters(rs.metrics),
        }
    finally:
        stop.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def every(interval: float, stop: asyncio.Event, tick: Callable[[int], Awaitable[None]]) -> int:
    """Call `tick(n)` every `interval` seconds (on a fixed grid: a slow tick does not shift the
    next one, as a Go time.Ticker drops none) until `stop` is set; returns the ticks run."""
    start = time.monotonic()
    n = 0
    while not stop.is_set():
        due = start + (n + 1) * interval
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), max(0.0, due - time.monotonic()))
        if stop.is_set():
            break
        await tick(n)
        n += 1
    return n


def compare(baseline: list[dict[str, Any]], loaded: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of the two sides and the loaded/baseline ratio of the batch's rate."""
    b = statistics.median(r["rate_pods_per_second"] for r in baseline)
    lo = statistics.median(r["rate_pods_per_second"] for r in loaded)
    return {"baseline_rate_median": round(b, 1), "loaded_rate_median": round(lo, 1),
            "baseline_rate_spread": [min(r["rate_pods_per_second"] for r in baseline),
                                     max(r["rate_pods_per_second"] for r in baseline)],
            "loaded_rate_spread": [min(r["rate_pods_per_second"] for r in loaded),
                                   max(r["rate_pods_per_second"] for r in loaded)],
            "ratio": round(lo / b, 3) if b > 0 else None,
            "slowdown_percent": round(100 * (1 - lo / b), 1) if b > 0 else None}
