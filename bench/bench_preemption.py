"""Benchmark: preemption throughput in kube-scheduler `scheduler_perf`'s PreemptionBasic shape,
through a real in-process minik3s server (API server + SQLite storage + watch + the embedded
scheduler with asynchronous preemption).

    python -m bench.bench_preemption [--nodes 500] [--runs 3] [--init-pods N] [--measured-pods N]

Shape (upstream test/integration/scheduler_perf config "PreemptionBasic"): nodes are plain API
objects (no kubelets) with 4 CPU / 32Gi / 110 pods; init pods request 900m CPU / 500Mi at priority
0 with terminationGracePeriodSeconds 0, four per node (3,600m of 4,000m), so the cluster is full;
measured pods request 3,000m / 500Mi at priority 10 (a PriorityClass, as admission requires), so
each one evicts three init pods. 500 nodes: 2,000 init / 500 measured (upstream's sizes).

Nothing runs a kubelet: a victim deleted with its grace period of 0 is removed by the API server
at once, so the preemptor's retry binds as soon as the deletions come back through the watch.
Measured: `pods/s` = measured pods / (last measured binding - first measured create), and per-pod
latency from create to the informer seeing `spec.nodeName` (two scheduling attempts and the
preemption task in between). `--runs N` reports the median of each figure.
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

from bench.bench_scheduler import CREATORS, BindWatcher, _create_all, _wait, node_obj
from bench.common import emit, pct
from minik3s import server
from minik3s.api.resources import NODES, PODS, PRIORITYCLASSES
from minik3s.config import ServerConfig

logger = logging.getLogger(__name__)

HIGH_CLASS = "perf-preemptor"
HIGH_PRIORITY = 10


def _pod(name: str, cpu: str, *, high: bool) -> dict[str, Any]:
    res = {"cpu": cpu, "memory": "500Mi"}
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "pause",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": dict(res), "limits": dict(res)},
            }
        ],
        "terminationGracePeriodSeconds": 0,
    }
    if high:
        spec["priorityClassName"] = HIGH_CLASS
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


class DeleteWatcher:
    def __init__(self) -> None:
        self.deleted = 0

    def on_delete(self, obj: dict[str, Any]) -> None:
        if obj["metadata"]["name"].startswith("init-"):
            self.deleted += 1


async def run_once(nodes: int, init_pods: int, measured_pods: int) -> dict[str, Any]:
    from scheduler.scheduler import Scheduler

    with tempfile.TemporaryDirectory(prefix="bench-preempt-") as d:
        cfg = ServerConfig(
            port=0, data_dir=Path(d), disable={"kubelet", "controllers", "scheduler", "descheduler"}
        )
        rs = await server.start(cfg)
        tasks: list[asyncio.Task[Any]] = []
        try:
            await rs.client.create(
                PRIORITYCLASSES,
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": HIGH_CLASS},
                    "value": HIGH_PRIORITY,
                    "preemptionPolicy": "PreemptLowerPriority",
                },
            )
            node_it = iter([node_obj(i, {}) for i in range(nodes)])

            async def node_creator() -> None:
                for n in node_it:
                    await rs.client.create(NODES, n)

            async with asyncio.TaskGroup() as tg:
                for i in range(CREATORS):
                    tg.create_task(node_creator(), name=f"bench-node-creator-{i}")
            sched = Scheduler(client=rs.client, informers=rs.informers)
            watcher = BindWatcher()
            deletes = DeleteWatcher()
            rs.informers.informer(PODS).add_handler(
                on_add=watcher.on_add, on_update=watcher.on_update, on_delete=deletes.on_delete
            )
            tasks.append(asyncio.create_task(rs.informers.run(), name="bench-informers"))
            tasks.append(asyncio.create_task(sched.run(), name="bench-scheduler"))
            await rs.informers.wait_for_sync()
            t1 = time.monotonic()
            await _create_all(rs, [_pod(f"init-{i:06d}", "900m", high=False) for i in range(init_pods)], None)
            await _wait(
                lambda: sum(1 for k in watcher.bound_at if k.startswith("init-")) >= init_pods,
                watcher,
                900,
                "init pods bound",
                tasks,
            )
            init_s = time.monotonic() - t1
            watcher.measured_prefix = "measured-"
            created_at: dict[str, float] = {}
            t2 = time.monotonic()
            await _create_all(
                rs, [_pod(f"measured-{i:06d}", "3", high=True) for i in range(measured_pods)], created_at
            )
            await _wait(
                lambda: watcher.measured_bound >= measured_pods, watcher, 1800, "measured pods bound", tasks
            )
            last = max(watcher.bound_at[n] for n in created_at)
            lat = [(watcher.bound_at[n] - t) * 1000 for n, t in created_at.items()]
            return {
                "init_pods_seconds": round(init_s, 2),
                "pods_per_second": round(measured_pods / (last - t2), 1),
                "victims_deleted": deletes.deleted,
                "latency_p50_ms": round(pct(lat, 50), 1),
                "latency_p90_ms": round(pct(lat, 90), 1),
                "latency_p99_ms": round(pct(lat, 99), 1),
            }
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await server.stop(rs)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=500)
    p.add_argument("--init-pods", type=int, default=None, help="default: 4 per node (upstream 2,000 at 500)")
    p.add_argument(
        "--measured-pods", type=int, default=None, help="default: 1 per node (upstream 500 at 500)"
    )
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--log-level", default="WARNING")
    args = p.parse_args()
    logging.basicConfig(level=args.log_level)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    init = args.init_pods if args.init_pods is not None else 4 * args.nodes
    measured = args.measured_pods if args.measured_pods is not None else args.nodes
    runs = []
    for i in range(args.runs):
        r = asyncio.run(run_once(args.nodes, init, measured))
        logger.warning("PreemptionBasic/%dNodes run %d: %s", args.nodes, i + 1, r)
        runs.append(r)
    emit(
        f"preemption_{args.nodes}nodes",
        {
            "workload": f"PreemptionBasic/{args.nodes}Nodes",
            "nodes": args.nodes,
            "init_pods": init,
            "measured_pods": measured,
            "runs": len(runs),
            "median": {k: round(statistics.median(r[k] for r in runs), 1) for k in runs[0]},
            "all_runs": runs,
            "note": "shared 2-core machine: figures are noisy",
        },
    )


if __name__ == "__main__":
    main()
