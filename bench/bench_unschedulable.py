"""Benchmark: upstream scheduler_perf's `Unschedulable` workload. Pods that fit nowhere are injected at
5/s while a SchedulingBasic batch is scheduled; the batch must not slow by more than 10 %.

    python -m bench.bench_unschedulable [--nodes 5000 --init-pods 100 --measured-pods 10000] [--runs 3]
                                        [--mode prefilled|created] [--interval-ms 200]

Shape (upstream misc/performance-config.yaml, `Unschedulable` 5kNodes/100Init/10kPods, threshold
590 pods/s on upstream's CI machine): nodes as scheduler_perf's node-default (4 CPU / 32Gi / 110
pods), init pods and measured pods pod-default (100m / 500Mi); the injected pods are
pod-high-priority-large-cpu: 9 CPU (more than any node has) at priority 10, one every 200 ms
(churn mode `create`, no limit), from the moment the scheduler starts until the batch is bound.
Priority here comes from a PriorityClass `bench-high` (value 10): minik3s runs the Priority
admission plugin, which refuses a bare spec.priority as kube-apiserver does; upstream's test
apiserver runs without it.

Every injected pod is higher priority than the batch, so it jumps the active queue, fails Filter
on every node, runs PostFilter (preemption: no node has 9 CPU even with every victim gone) and
parks in the unschedulable queue. Upstream's queueing hints keep it there: NodeResourcesFit
rejected it, and binding other pods (assigned-pod Add) is not an event that can make it fit, so
its cost is one failed cycle per injected pod, not one per bind.

Reported per side (baseline: no injection; injected): the median of `--runs` runs (interleaved) of
the batch's rate (see bench.background_load), the slowdown in percent (target <= 10 %), and the
scheduler's attempt and queue-move counters, which show whether injected pods were retried; the
mean attempt duration per result (`attempt_mean_ms_by_result.unschedulable`: one injected pod's
failed cycle, PostFilter included) is the figure to compare when the machine's load makes
single-run rates noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
from typing import Any

from bench.background_load import BACKGROUND_NS, BatchShape, compare, every, run_batch
from bench.bench_scheduler import _container
from bench.common import emit
from minik3s.api.resources import PODS, PRIORITYCLASSES

logger = logging.getLogger(__name__)

PRIORITY_CLASS = "bench-high"
UPSTREAM_THRESHOLD = 590  # 5kNodes/100Init/10kPods, pods/s on upstream's CI machine
TARGET_SLOWDOWN_PERCENT = 10.0


def large_cpu_pod(name: str) -> dict[str, Any]:
    """scheduler_perf's pod-high-priority-large-cpu: 9 CPU, priority 10 (via the PriorityClass)."""
    c = _container()
    c["resources"] = {"requests": {"cpu": "9", "memory": "500Mi"}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": BACKGROUND_NS},
            "spec": {"priorityClassName": PRIORITY_CLASS, "containers": [c]}}


async def setup(rs: Any) -> None:
    await rs.client.create(PRIORITYCLASSES, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                             "metadata": {"name": PRIORITY_CLASS}, "value": 10})


def injector(interval: float) -> Any:
    async def inject(rs: Any, stop: asyncio.Event) -> dict[str, Any]:
        async def tick(n: int) -> None:
            await rs.client.create(PODS, large_cpu_pod(f"unschedulable-{n:06d}"), BACKGROUND_NS)

        created = await every(interval, stop, tick)
        pods = (await rs.client.list(PODS, BACKGROUND_NS)).get("items") or []
        bound = sum(1 for p in pods if (p.get("spec") or {}).get("nodeName"))
        if bound:
            raise RuntimeError(f"{bound} pods requesting 9 CPU were bound to 4-CPU nodes")
        return {"injected_pods": created, "injected_bound": bound}

    return inject


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    shape = BatchShape(args.nodes, args.init_pods, args.measured_pods)
    baseline: list[dict[str, Any]] = []
    injected: list[dict[str, Any]] = []
    for i in range(args.runs):
        for side, bg, out in (("baseline", None, baseline), ("injected", injector(args.interval_ms / 1000), injected)):
            prof = args.profile if (args.profile and bg is not None and i == args.runs - 1) else None
            r = await run_batch(shape, background=bg, mode=args.mode, setup=setup, profile=prof)
            r["load_average_1m"] = round(os.getloadavg()[0], 2)
            logger.warning("run %d/%d %s: %s pods/s (load %s) %s", i + 1, args.runs, side,
                           r["rate_pods_per_second"], r["load_average_1m"], r["scheduler"])
            out.append(r)
    cmp = compare(baseline, injected)
    return {"nodes": args.nodes, "init_pods": args.init_pods, "measured_pods": args.measured_pods,
            "mode": args.mode, "injection_interval_ms": args.interval_ms, "runs": args.runs,
            **cmp, "target_slowdown_percent": TARGET_SLOWDOWN_PERCENT,
            "meets_target": cmp["slowdown_percent"] is not None and cmp["slowdown_percent"] <= TARGET_SLOWDOWN_PERCENT,
            "upstream_threshold_pods_per_second": UPSTREAM_THRESHOLD,
            "injected_vs_upstream_threshold": round(cmp["loaded_rate_median"] / UPSTREAM_THRESHOLD, 2),
            "baseline_runs": baseline, "injected_runs": injected}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--init-pods", type=int, default=100)
    p.add_argument("--measured-pods", type=int, default=10000)
    p.add_argument("--interval-ms", type=float, default=200.0, help="one unschedulable pod per interval (5/s)")
    p.add_argument("--mode", choices=("prefilled", "created"), default="prefilled",
                   help="measured pods created before the scheduler starts (default) or while it runs")
    p.add_argument("--runs", type=int, default=3, help="runs per side, interleaved; medians reported")
    p.add_argument("--profile", default=None, help="cProfile the loaded side's measured phase of the last run")
    p.add_argument("--log-level", default="WARNING")
    args = p.parse_args()
    if args.runs < 1 or args.nodes < 1 or args.measured_pods < 2 or args.interval_ms <= 0:
        p.error("--runs and --nodes must be >= 1, --measured-pods >= 2, --interval-ms > 0")
    logging.basicConfig(level=args.log_level)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    res = asyncio.run(main_async(args))
    print(f"\nUnschedulable {args.nodes} nodes, {args.measured_pods} measured, one 9-CPU pod every "
          f"{args.interval_ms:.0f} ms ({args.mode}, {args.runs} runs per side)")
    print(f"  baseline {res['baseline_rate_median']:>8.1f} pods/s {res['baseline_rate_spread']}")
    print(f"  injected {res['loaded_rate_median']:>8.1f} pods/s {res['loaded_rate_spread']}   "
          f"slowdown {res['slowdown_percent']} % (target <= {TARGET_SLOWDOWN_PERCENT:.0f} %)")
    emit("unschedulable", res)


if __name__ == "__main__":
    main()
