"""Benchmark: gang scheduling in the shape of kube-scheduler scheduler_perf's GangScheduling
workloads (test/integration/scheduler_perf/gangscheduling: 5000Nodes_{1000,2000,3000}Gangs,
gangs of 3), through a real in-process minik3s server and the embedded scheduler.

    python -m bench.bench_gang [--nodes 5000] [--gangs 1000] [--gang-size 3] [--runs 3]

Shape: nodes as bench_scheduler's (4 CPU / 32Gi / 110 pods, Ready, no kubelets). Each gang is
a `scheduling.k8s.io/v1alpha1` Workload with one podGroup `gang: {minCount: 3}` and three pods
(100m / 500Mi) joined through `spec.workloadRef`; 32 concurrent creators each create a
Workload and then its pods.

Figures (per run; with --runs N the median over runs):
- group attempt (upstream's metric `scheduler_podgroup_scheduling_attempt_duration_seconds`,
  perf-dash ~3.7 / 5.0 / 5.7 ms, CI limits 8 / 10 / 12 ms): per gang, from the first member
  entering PreFilter to the Permit that completes its quorum (all members then bind at once),
  measured inside the scheduler by timing GangScheduling's own extension points. minik3s
  schedules a gang pod by pod (as upstream's v1.35 alpha), so this includes the other pods
  the queue interleaves; gangs of one Workload leave the queue back to back (QueueSort).
- group end to end: from the Workload's create request to the pod informer seeing the last
  member bound (API, watch and binding included).
- pods/s over the measured phase.
The machine is shared: figures are noisy, compare medians of several runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.bench_scheduler import CREATORS, BindWatcher, _wait, node_obj
from bench.common import emit, pct
from minik3s import server
from minik3s.api.helpers.gang import group_key
from minik3s.api.resources import NODES, PODS, WORKLOADS
from minik3s.config import ServerConfig

logger = logging.getLogger(__name__)

UPSTREAM = {1000: (3.7, 8.0), 2000: (5.0, 10.0), 3000: (5.7, 12.0)}  # gangs -> (perf-dash ms, limit ms)


def workload(name: str, size: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": size}}}]}}


def member(gang: str, i: int) -> dict[str, Any]:
    res = {"cpu": "100m", "memory": "500Mi"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{gang}-{i}", "namespace": "default"},
            "spec": {"workloadRef": {"name": gang, "podGroup": "workers"},
                     "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": dict(res), "limits": dict(res)}}]}}


class GangTimer:
    """Wraps the GangScheduling plugin instance's PreFilter and Permit to time each gang's
    attempt: first member's PreFilter -> the Permit that reaches the quorum."""

    def __init__(self, plugin: Any) -> None:
        self.start: dict[str, float] = {}
        self.done: dict[str, float] = {}
        pre_filter, permit = plugin.pre_filter, plugin.permit

        def timed_pre_filter(state: Any, pod: Any, nodes: Any) -> Any:
            self.start.setdefault(group_key(pod.pod), time.perf_counter())
            return pre_filter(state, pod, nodes)

        def timed_permit(state: Any, pod: Any, node: str) -> Any:
            st, timeout = permit(state, pod, node)
            if st.is_success():
                self.done.setdefault(group_key(pod.pod), time.perf_counter())
            return st, timeout

        plugin.pre_filter = timed_pre_filter
        plugin.permit = timed_permit

    def attempts_ms(self) -> list[float]:
        return [(self.done[k] - self.start[k]) * 1000 for k in self.done if k in self.start]


async def run_once(nodes: int, gangs: int, size: int) -> dict[str, Any]:
    from scheduler.scheduler import Scheduler

    with tempfile.TemporaryDirectory(prefix="bench-gang-") as d:
        cfg = ServerConfig(port=0, data_dir=Path(d), disable={"kubelet", "controllers", "scheduler", "descheduler"})
        rs = await server.start(cfg)
        tasks: list[asyncio.Task[Any]] = []
        try:
            t0 = time.monotonic()
            node_it = iter([node_obj(i, {}) for i in range(nodes)])

            async def node_creator() -> None:
                for n in node_it:
                    await rs.client.create(NODES, n)

            async with asyncio.TaskGroup() as tg:
                for i in range(CREATORS):
                    tg.create_task(node_creator(), name=f"bench-node-creator-{i}")
            nodes_s = time.monotonic() - t0
            sched = Scheduler(None, client=rs.client, informers=rs.informers)
            timer = GangTimer(sched.frameworks["default-scheduler"].plugins["GangScheduling"])
            watcher = BindWatcher()
            rs.informers.informer(PODS).add_handler(on_add=watcher.on_add, on_update=watcher.on_update)
            tasks.append(asyncio.create_task(rs.informers.run(), name="bench-informers"))
            tasks.append(asyncio.create_task(sched.run(), name="bench-scheduler"))
            await rs.informers.wait_for_sync()
            created_at: dict[str, float] = {}
            gang_it = iter(f"gang-{g:05d}" for g in range(gangs))

            async def gang_creator() -> None:
                for gang in gang_it:
                    created_at[gang] = time.monotonic()
                    await rs.client.create(WORKLOADS, workload(gang, size), "default")
                    for i in range(size):
                        await rs.client.create(PODS, member(gang, i), "default")

            t1 = time.monotonic()
            async with asyncio.TaskGroup() as tg:
                for i in range(CREATORS):
                    tg.create_task(gang_creator(), name=f"bench-gang-creator-{i}")
            total = gangs * size
            await _wait(lambda: len(watcher.bound_at) >= total, watcher, 1800, "gangs bound", tasks)
            last = max(watcher.bound_at.values())
            e2e = [(max(watcher.bound_at[f"{g}-{i}"] for i in range(size)) - t) * 1000 for g, t in created_at.items()]
            spread = [(max(watcher.bound_at[f"{g}-{i}"] for i in range(size))
                       - min(watcher.bound_at[f"{g}-{i}"] for i in range(size))) * 1000 for g in created_at]
            attempts = timer.attempts_ms()
            return {
                "setup_nodes_seconds": round(nodes_s, 2),
                "group_attempt_p50_ms": round(pct(attempts, 50), 2),
                "group_attempt_p90_ms": round(pct(attempts, 90), 2),
                "group_attempt_p99_ms": round(pct(attempts, 99), 2),
                "group_attempt_mean_ms": round(statistics.fmean(attempts), 2),
                "group_e2e_p50_ms": round(pct(e2e, 50), 1),
                "group_e2e_p99_ms": round(pct(e2e, 99), 1),
                "member_bind_spread_p50_ms": round(pct(spread, 50), 1),
                "pods_per_second": round(total / (last - t1), 1),
                "gangs_timed": len(attempts),
            }
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await server.stop(rs)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--gangs", type=int, default=1000)
    p.add_argument("--gang-size", type=int, default=3)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--log-level", default="WARNING")
    args = p.parse_args()
    logging.basicConfig(level=args.log_level)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    runs = []
    for i in range(args.runs):
        r = asyncio.run(run_once(args.nodes, args.gangs, args.gang_size))
        logger.warning("GangScheduling/%dNodes_%dGangs run %d: %s", args.nodes, args.gangs, i + 1, r)
        runs.append(r)
    median = {k: round(statistics.median(r[k] for r in runs), 2) for k in runs[0]}
    ref = UPSTREAM.get(args.gangs)
    emit("gang", {
        "workload": f"GangScheduling/{args.nodes}Nodes_{args.gangs}Gangs", "gang_size": args.gang_size,
        "upstream_perf_dash_ms": ref[0] if ref else None, "upstream_limit_ms": ref[1] if ref else None,
        "note": "shared 2-core machine: noisy; group attempt = first member's PreFilter -> quorum Permit",
        "runs": len(runs), "median": median, "all_runs": runs,
    })


if __name__ == "__main__":
    main()
