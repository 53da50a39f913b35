"""CPU per pod of the API side of a bind, in three parts, through an in-process server.

1. `bind`: POST pods/binding of pre-created pods through the in-process client (`LocalClient.bind`),
   32 at a time as the scheduler's binding cycles overlap, each awaited until committed.
2. `confirm`: the scheduler cache's confirmation of an assumed pod by the bound pod the informer
   delivers (`Cache.assume_pod` of the assumed copy, then `Cache.add_pod` of the stored bound pod).
3. `event`: the Scheduled Event, built by the scheduler's recorder and written by its API writer,
   emitted in bursts of 500 while the writer runs (`event_cpu_us`), then one per loop turn with
   0.5 ms of other CPU work between, as the scheduler emits them (`event_trickle_cpu_us`, the
   spin's CPU subtracted).

Prints one JSON line: CPU microseconds (`time.process_time`: every thread, the SQLite writer's
included) per bind, per confirm and per event, and the store's transactions per event. Only
`minik3s.server`, `rs.client` and scheduler internals that also exist in earlier checkouts are
used, so the same file runs against a base checkout for interleaved A/B pairs:
`PYTHONPATH=<checkout> python bench/bench_bind_cost.py 4000` (docs/performance.md "Session 5: the
bind's API side"). Components (scheduler, controllers, kubelets) are off.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from minik3s import server
from minik3s.api.resources import EVENTS, NAMESPACES, NODES, PODS
from minik3s.config import ServerConfig

CONCURRENCY = 32
NS = "bench"


def pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p-{i:06d}", "labels": {"app": "bench"}},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}


def node(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n-{i}"},
            "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                       "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}


async def bind_all(client: Any, pending: list[dict[str, Any]], namespace: str = NS) -> None:
    """Bind every pod of `pending` (`p-<i>` to node `n-<i mod 8>`), CONCURRENCY at a time as the
    scheduler's binding cycles overlap, each awaited until committed."""
    todo = iter(range(len(pending)))

    async def binder() -> None:
        for i in todo:
            await client.bind(namespace, f"p-{i:06d}", f"n-{i % 8}", uid=pending[i]["metadata"]["uid"])

    await asyncio.gather(*(binder() for _ in range(CONCURRENCY)))


async def run(n: int) -> dict[str, Any]:
    from scheduler.backend.cache import Cache
    from scheduler.framework.types import PodInfo
    from scheduler.scheduler import Scheduler, _assumed_pod_info

    with tempfile.TemporaryDirectory() as d:
        rs = await server.start(ServerConfig(port=0, data_dir=Path(d),
                                             disable={"scheduler", "controllers", "kubelet", "descheduler"}))
        try:
            c = rs.client
            await c.create(NAMESPACES, {"metadata": {"name": NS}})
            for i in range(8):
                await c.create(NODES, node(i))
            pending = [await c.create(PODS, pod(i), NS) for i in range(n)]
            out: dict[str, Any] = {"pods": n}

            cpu0 = time.process_time()
            await bind_all(c, pending)
            out["bind_cpu_us"] = round((time.process_time() - cpu0) / n * 1e6, 1)

            bound = (await c.list(PODS, NS))["items"]
            cache = Cache()
            for i in range(8):
                cache.add_node(node(i))
            by_name = {p["metadata"]["name"]: p for p in pending}
            cpu0 = time.process_time()
            for b in bound:
                p = by_name[b["metadata"]["name"]]
                cache.assume_pod(_assumed_pod_info(PodInfo(p), b["spec"]["nodeName"]))
            cpu1 = time.process_time()
            for b in bound:
                cache.add_pod(b)
            out["confirm_cpu_us"] = round((time.process_time() - cpu1) / n * 1e6, 1)
            out["assume_cpu_us"] = round((cpu1 - cpu0) / n * 1e6, 1)

            sched = Scheduler(client=c, informers=rs.informers)
            writer = asyncio.create_task(sched.writer.run())
            stats = rs.store.stats
            batches0, ops0 = stats.batches, stats.ops
            cpu0 = time.process_time()
            for start in range(0, n, 500):
                for b in bound[start:start + 500]:
                    m = b["metadata"]
                    sched._record_event(b, "Normal", "Scheduled", "Binding",
                                        f"Successfully assigned {m['namespace']}/{m['name']} to {b['spec']['nodeName']}")
                while sched.writer.pending():
                    await asyncio.sleep(0.001)
            while stats.ops - ops0 < n:  # every event committed
                await asyncio.sleep(0.001)
            out["event_cpu_us"] = round((time.process_time() - cpu0) / n * 1e6, 1)
            out["store_transactions_per_event"] = round((stats.batches - batches0) / n, 3)
            out["events_dropped"] = sched.writer.dropped_events
            assert len((await c.list(EVENTS, NS, read_only=True))["items"]) == n

            # trickle: one event per loop turn with ~0.5 ms of other work between (as the
            # scheduler emits one per bound pod); the spin's CPU is subtracted
            spin = 0.0005

            def busy() -> None:
                end = time.process_time() + spin
                while time.process_time() < end:
                    pass

            batches0, ops0, dropped0 = stats.batches, stats.ops, sched.writer.dropped_events
            cpu0 = time.process_time()
            for b in bound:
                m = b["metadata"]
                sched._record_event(b, "Normal", "Scheduled", "Preempted", f"again {m['name']}")
                busy()
                await asyncio.sleep(0)
            while stats.ops - ops0 < n - (sched.writer.dropped_events - dropped0):
                await asyncio.sleep(0.001)
            out["event_trickle_cpu_us"] = round(((time.process_time() - cpu0) / n - spin) * 1e6, 1)
            out["events_dropped_trickle"] = sched.writer.dropped_events - dropped0
            out["store_transactions_per_event_trickle"] = round((stats.batches - batches0) / n, 3)
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)
            return out
        finally:
            await server.stop(rs)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    print(json.dumps(asyncio.run(run(n))))


if __name__ == "__main__":
    main()
