"""Benchmark: upstream scheduler_perf's `SchedulingWithMixedChurn`. Nodes, unschedulable pods and
Services are created and deleted in a loop while a SchedulingBasic batch is scheduled.

    python -m bench.bench_churn [--nodes 5000 --measured-pods 10000] [--runs 3] [--mode prefilled|created]

Shape (upstream misc/performance-config.yaml, `SchedulingWithMixedChurn` 5000Nodes_10000Pods,
threshold 710 pods/s on upstream's CI machine): `initNodes` node-default nodes (4 CPU / 32Gi / 110
pods), no init pods, measured pods pod-default (100m / 500Mi). The churn op is mode `recreate`,
number 1, every 1,000 ms, over three templates: on even ticks it creates one of each, on odd ticks
it deletes what the previous tick created:
  * churn/node-default: a Ready node with capacity `pods: "0"` (no CPU, no room for a pod);
  * pod-high-priority-large-cpu: 9 CPU at priority 10 (here via PriorityClass `bench-high`,
    since minik3s admits priority as kube-apiserver does), which fits no node;
  * churn/service-default: a Service selecting app=foo, TCP 8080 -> 8080.
Each kind exercises a scheduler path: a node add/delete reaches the queue (NodeAdd may requeue the
unschedulable pod only if the node could fit it: it cannot), the Service changes the default
spreading selector (PodTopologySpread's system defaults select by the Services matching the pod),
and the high-priority pod runs a failed cycle with preemption.

Reported like bench_unschedulable: baseline (no churn) and churned runs interleaved, medians of the
batch's rate, the slowdown, and each side's scheduler counters.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
from typing import Any

from bench.background_load import BACKGROUND_NS, BatchShape, compare, every, run_batch
from bench.bench_unschedulable import large_cpu_pod, setup
from bench.common import emit
from minik3s.api.errors import NotFoundError
from minik3s.api.resources import NODES, PODS, SERVICES

logger = logging.getLogger(__name__)

UPSTREAM_THRESHOLD = 710  # 5000Nodes_10000Pods, pods/s on upstream's CI machine


def churn_node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": {"pods": "0"}, "conditions": [{"type": "Ready", "status": "True"}],
                       "phase": "Running"}}


def churn_service(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": BACKGROUND_NS},
            "spec": {"selector": {"app": "foo"}, "ports": [{"protocol": "TCP", "port": 8080, "targetPort": 8080}]}}


def churner(interval: float) -> Any:
    async def churn(rs: Any, stop: asyncio.Event) -> dict[str, Any]:
        counts = {"created": 0, "deleted": 0}

        async def tick(n: int) -> None:
            k = n // 2
            objs = ((NODES, churn_node(f"node-churn-{k:05d}"), None),
                    (PODS, large_cpu_pod(f"pod-h-{k:05d}"), BACKGROUND_NS),
                    (SERVICES, churn_service(f"service-churn-{k:05d}"), BACKGROUND_NS))
            if n % 2 == 0:
                for res, obj, ns in objs:
                    await rs.client.create(res, obj, ns)
                    counts["created"] += 1
            else:
                for res, obj, ns in objs:
                    with contextlib.suppress(NotFoundError):
                        await rs.client.delete(res, obj["metadata"]["name"], ns)
                        counts["deleted"] += 1

        ticks = await every(interval, stop, tick)
        return {"ticks": ticks, **counts}

    return churn


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    shape = BatchShape(args.nodes, 0, args.measured_pods)
    baseline: list[dict[str, Any]] = []
    churned: list[dict[str, Any]] = []
    for i in range(args.runs):
        for side, bg, out in (("baseline", None, baseline), ("churn", churner(args.interval_ms / 1000), churned)):
            prof = args.profile if (args.profile and bg is not None and i == args.runs - 1) else None
            r = await run_batch(shape, background=bg, mode=args.mode, setup=setup, profile=prof)
            r["load_average_1m"] = round(os.getloadavg()[0], 2)
            logger.warning("run %d/%d %s: %s pods/s (load %s) %s %s", i + 1, args.runs, side,
                           r["rate_pods_per_second"], r["load_average_1m"], r["background"], r["scheduler"])
            out.append(r)
    cmp = compare(baseline, churned)
    return {"nodes": args.nodes, "measured_pods": args.measured_pods, "mode": args.mode,
            "churn_interval_ms": args.interval_ms, "runs": args.runs, **cmp,
            "upstream_threshold_pods_per_second": UPSTREAM_THRESHOLD,
            "churn_vs_upstream_threshold": round(cmp["loaded_rate_median"] / UPSTREAM_THRESHOLD, 2),
            "baseline_runs": baseline, "churn_runs": churned}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--measured-pods", type=int, default=10000)
    p.add_argument("--interval-ms", type=float, default=1000.0, help="churn tick (create, then delete)")
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
    print(f"\nSchedulingWithMixedChurn {args.nodes} nodes, {args.measured_pods} measured, churn every "
          f"{args.interval_ms:.0f} ms ({args.mode}, {args.runs} runs per side)")
    print(f"  baseline {res['baseline_rate_median']:>8.1f} pods/s {res['baseline_rate_spread']}")
    print(f"  churn    {res['loaded_rate_median']:>8.1f} pods/s {res['loaded_rate_spread']}   "
          f"slowdown {res['slowdown_percent']} %; upstream CI threshold {UPSTREAM_THRESHOLD}")
    emit("mixed_churn", res)


if __name__ == "__main__":
    main()
