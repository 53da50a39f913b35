"""Benchmark: one descheduling cycle with the seed's policy (LowNodeUtilization 30/30 -> 50/50,
RemovePodsViolatingTopologySpread, RemovePodsViolatingInterPodAntiAffinity) inside an
in-process minik3s API, in dry-run mode so every cycle sees the same cluster.

    python -m bench.bench_descheduler --nodes 500 --pods-per-node 20 [--runs 3]

Half the nodes are loaded (pods of 250m on 8-cpu nodes: 62.5%), half are empty, so
LowNodeUtilization picks two pods per loaded node. Reported: cycle seconds and evictions,
without and with loop avoidance (one scheduler what-if per eviction over every node).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import emit
from descheduler.descheduler import Descheduler, DeschedulerOptions
from descheduler.metrics import DeschedulerMetrics
from descheduler.plugins.registry import in_tree_registry
from descheduler.policy import load_policy
from minik3s import server
from minik3s.api.resources import NODES, PODS
from minik3s.config import ServerConfig
from scheduler.scheduler import Scheduler
from scheduler.whatif import WhatIf

SEED = Path(__file__).resolve().parents[1] / "examples" / "descheduler" / "policy.yaml"


async def _populate(rs: Any, nodes: int, per_node: int) -> None:
    sem = asyncio.Semaphore(64)

    async def node(i: int) -> None:
        async with sem:
            n = await rs.client.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {
                "name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}",
                                            "topology.kubernetes.io/zone": f"z{i % 3}"}}})
            rl = {"cpu": "8", "memory": "32Gi", "pods": "110"}
            n["status"] = {"capacity": rl, "allocatable": rl, "conditions": [{"type": "Ready", "status": "True"}]}
            await rs.client.update_status(NODES, n)

    async def pod(i: int, j: int) -> None:
        async with sem:
            await rs.client.create(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": f"p{i}-{j}", "namespace": "default", "labels": {"app": f"a{j % 10}"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"rs{j % 10}",
                                     "uid": f"rs-{j % 10}", "controller": True}]},
                "spec": {"nodeName": f"n{i}", "containers": [{"name": "c", "image": "nginx:1", "resources": {
                    "requests": {"cpu": "250m", "memory": "256Mi"}}}]}})

    await asyncio.gather(*(node(i) for i in range(nodes)))
    await asyncio.gather(*(pod(i, j) for i in range(nodes // 2) for j in range(per_node)))


async def _bench(nodes: int, per_node: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = ServerConfig(data_dir=Path(tmp), port=0, nodes="0",
                           disable={"scheduler", "controllers", "kubelet", "descheduler"})
        rs = await server.start(cfg)
        task = asyncio.create_task(rs.informers.run())
        try:
            await _populate(rs, nodes, per_node)
            sched = Scheduler(client=rs.client, informers=rs.informers)
            reg = in_tree_registry()
            policy, profiles = load_policy(SEED, reg)
            out: dict[str, Any] = {"nodes": nodes, "pods": nodes // 2 * per_node}
            for label, placement in (("plain", None), ("loop_avoidance", WhatIf(sched))):
                from prometheus_client import CollectorRegistry

                d = Descheduler(policy, profiles, client=rs.client, informers=rs.informers, registry=reg,
                                metrics=DeschedulerMetrics(CollectorRegistry()), placement=placement,
                                options=DeschedulerOptions(dry_run=True, loop_avoidance=placement is not None))
                await d.wait_for_sync()
                pods_inf = rs.informers.informer(PODS)
                while len(pods_inf.store.list()) < out["pods"]:
                    await asyncio.sleep(0.05)
                times, evicted = [], 0
                for _ in range(runs):
                    t0 = time.perf_counter()
                    evicted = len(await d.run_once())
                    times.append(time.perf_counter() - t0)
                out[label] = {"cycle_seconds_median": sorted(times)[len(times) // 2], "evictions": evicted}
            return out
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await server.stop(rs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods-per-node", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    emit("descheduler_cycle", asyncio.run(_bench(a.nodes, a.pods_per_node, a.runs)))


if __name__ == "__main__":
    main()
