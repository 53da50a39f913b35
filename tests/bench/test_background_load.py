"""The batch-with-background workloads (bench.background_load, bench_unschedulable, bench_churn) at a
tiny size against a real in-process server: what they report is what happened in the cluster."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from bench.background_load import BACKGROUND_NS, BatchShape, compare, every, run_batch
from bench.bench_churn import churner
from bench.bench_unschedulable import injector, large_cpu_pod, setup
from minik3s.api.resources import NODES, PODS, SERVICES


async def test_every_ticks_on_its_grid_until_stopped() -> None:
    stop = asyncio.Event()
    seen: list[float] = []
    start = time.monotonic()

    async def tick(n: int) -> None:
        seen.append(time.monotonic() - start)
        if n == 4:
            stop.set()

    assert await every(0.02, stop, tick) == 5
    # tick n runs at (n + 1) * interval or later, never before its slot
    for n, t in enumerate(seen):
        assert t >= (n + 1) * 0.02 - 0.002
    assert seen == sorted(seen)


def test_compare_reports_medians_ratio_and_slowdown() -> None:
    base = [{"rate_pods_per_second": r} for r in (100.0, 300.0, 200.0)]
    loaded = [{"rate_pods_per_second": r} for r in (150.0, 190.0, 170.0)]
    out = compare(base, loaded)
    assert out["baseline_rate_median"] == 200.0
    assert out["loaded_rate_median"] == 170.0
    assert out["ratio"] == 0.85
    assert out["slowdown_percent"] == 15.0
    assert out["baseline_rate_spread"] == [100.0, 300.0]


def test_the_injected_pod_is_upstreams_large_cpu_pod() -> None:
    pod = large_cpu_pod("x")
    assert pod["metadata"]["namespace"] == BACKGROUND_NS
    assert pod["spec"]["priorityClassName"] == "bench-high"
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "9", "memory": "500Mi"}


async def test_injected_pods_fit_nowhere_and_are_tried_once_each() -> None:
    r = await run_batch(BatchShape(nodes=5, init_pods=1, measured_pods=40), background=injector(0.01),
                        setup=setup)
    injected = r["background"]["injected_pods"]
    assert injected >= 1
    assert r["background"]["injected_bound"] == 0
    sched = r["scheduler"]
    assert sched["schedule_attempts"]["scheduled"] == 40
    # each injected pod that reached the scheduler failed once and was not retried: binding the
    # batch (assigned-pod adds) is no event that could make a 9-CPU pod fit a 4-CPU node
    failed = sched["schedule_attempts"].get("unschedulable", 0)
    assert failed <= injected
    assert sched["queue_incoming"].get("unschedulable/ScheduleAttemptFailure", 0) == failed
    assert not any(k.startswith(("active/", "backoff/")) and not k.endswith("UnschedulablePodAdd")
                   for k in sched["queue_incoming"])
    assert sched["preemption_attempts"] == failed
    assert r["rate_pods_per_second"] > 0
    assert r["batch_seconds"] >= r["first_bind_seconds"]


async def test_churn_creates_then_deletes_a_node_a_pod_and_a_service() -> None:
    seen: dict[str, Any] = {}

    async def watch_and_churn(rs: Any, stop: asyncio.Event) -> dict[str, Any]:
        out = await churner(0.01)(rs, stop)
        seen["nodes"] = [n["metadata"]["name"] for n in (await rs.client.list(NODES))["items"]
                         if n["metadata"]["name"].startswith("node-churn-")]
        seen["pods"] = [p["metadata"]["name"] for p in (await rs.client.list(PODS, BACKGROUND_NS))["items"]]
        seen["services"] = [s["metadata"]["name"] for s in (await rs.client.list(SERVICES, BACKGROUND_NS))["items"]]
        return out

    r = await run_batch(BatchShape(nodes=5, init_pods=0, measured_pods=60), background=watch_and_churn, setup=setup)
    bg = r["background"]
    assert bg["ticks"] >= 1
    # even ticks create three objects, odd ticks delete them: what is left is the last create's
    assert bg["created"] == 3 * ((bg["ticks"] + 1) // 2)
    assert bg["deleted"] == 3 * (bg["ticks"] // 2)
    left = 1 if bg["ticks"] % 2 else 0
    assert len(seen["nodes"]) == len(seen["pods"]) == len(seen["services"]) == left
    assert r["scheduler"]["schedule_attempts"]["scheduled"] == 60


async def test_created_mode_creates_the_batch_while_the_scheduler_runs() -> None:
    r = await run_batch(BatchShape(nodes=3, init_pods=2, measured_pods=30), background=None, mode="created")
    assert r["scheduler"]["schedule_attempts"] == {"scheduled": 30}
    assert r["background"] == {}
    assert r["rate_pods_per_second"] > 0


async def test_a_bad_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="mode must be prefilled or created"):
        await run_batch(BatchShape(1, 0, 2), background=None, mode="sideways")
