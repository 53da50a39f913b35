"""Benchmark: time for a 1,000-replica Deployment to become fully available on 100 simulated
nodes, inside a real in-process minik3s server (API server + controllers + kubelet fleet +
scheduler).

    python -m bench.bench_deployment --replicas 1000 --nodes 100 [--binder round-robin]

Reported: seconds until the ReplicaSet has created every pod, until every pod is bound, and
until the Deployment reports `availableReplicas == replicas` with `Progressing` reason
`NewReplicaSetAvailable`. With `--binder round-robin` a
trivial round-robin binder stands in and the result says so.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import emit
from kubelet_sim.config import parse_fleet
from kubelet_sim.controller import KubeletFleet
from minik3s import server
from minik3s.api.resources import DEPLOYMENTS, PODS
from minik3s.config import ServerConfig
from minik3s.controllers import ControllerConfig, all_controllers

logger = logging.getLogger(__name__)


def _scheduler(rs: Any) -> Any:
    from scheduler.scheduler import Scheduler

    return Scheduler(None, client=rs.client, informers=rs.informers)


async def _round_robin_binder(rs: Any, nodes: list[str]) -> None:
    inf = rs.informers.informer(PODS)
    await inf.wait_for_sync()
    i = 0
    sem = asyncio.Semaphore(64)
    inflight: set[str] = set()

    async def bind(ns: str, name: str, node: str) -> None:
        async with sem:
            with contextlib.suppress(Exception):
                await rs.client.bind(ns, name, node)
        inflight.discard(f"{ns}/{name}")

    async with asyncio.TaskGroup() as tg:
        while True:
            for p in inf.store.list():
                m = p["metadata"]
                key = f"{m['namespace']}/{m['name']}"
                if p["spec"].get("nodeName") or m.get("deletionTimestamp") or key in inflight:
                    continue
                inflight.add(key)
                tg.create_task(bind(m["namespace"], m["name"], nodes[i % len(nodes)]), name=f"bind-{key}")
                i += 1
            await asyncio.sleep(0.02)


async def run(replicas: int, n_nodes: int, binder: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-deploy-") as d:
        cfg = ServerConfig(port=0, data_dir=Path(d), nodes="0",
                           disable={"scheduler", "controllers", "descheduler", "kubelet"})
        rs = await server.start(cfg)
        tasks: list[asyncio.Task[Any]] = []
        result: dict[str, Any] = {"replicas": replicas, "nodes": n_nodes}
        try:
            fleet = KubeletFleet(parse_fleet(n_nodes), client=rs.client, informers=rs.informers)
            await fleet.agent.register_all()
            for name, fn in all_controllers(rs.client, rs.informers, config=ControllerConfig()):
                tasks.append(asyncio.create_task(fn(), name=name))
            sched = _scheduler(rs) if binder == "scheduler" else None
            if sched is not None:
                tasks.append(asyncio.create_task(sched.run(), name="scheduler"))
                result["binder"] = "scheduler"
            else:
                tasks.append(asyncio.create_task(_round_robin_binder(rs, list(fleet.agent.nodes)), name="binder"))
                result["binder"] = "round-robin"
            tasks.append(asyncio.create_task(fleet.run_registered(), name="fleet"))
            tasks.append(asyncio.create_task(rs.informers.run(), name="informers"))
            await rs.informers.wait_for_sync()
            pod_inf = rs.informers.informer(PODS)
            dep_inf = rs.informers.informer(DEPLOYMENTS)
            await rs.client.create(DEPLOYMENTS, {
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "bench", "namespace": "default"},
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "bench"}},
                         "template": {"metadata": {"labels": {"app": "bench"}}, "spec": {"containers": [
                             {"name": "c", "image": "registry.k8s.io/pause:3.10",
                              "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}}})
            t0 = time.monotonic()
            marks: dict[str, float] = {}
            deadline = t0 + max(300.0, replicas / 2)
            while time.monotonic() < deadline:
                for t in tasks:
                    if t.done() and not t.cancelled() and t.exception() is not None:
                        raise RuntimeError(f"task {t.get_name()} failed") from t.exception()
                pods = [p for p in pod_inf.store.list() if p["metadata"].get("labels", {}).get("app") == "bench"]
                if "created" not in marks and len(pods) >= replicas:
                    marks["created"] = time.monotonic() - t0
                if "bound" not in marks and sum(1 for p in pods if p["spec"].get("nodeName")) >= replicas:
                    marks["bound"] = time.monotonic() - t0
                dep = dep_inf.store.get("default/bench") or {}
                st = dep.get("status") or {}
                prog = next((c for c in st.get("conditions") or [] if c.get("type") == "Progressing"), {})
                if st.get("availableReplicas") == replicas and prog.get("reason") == "NewReplicaSetAvailable":
                    marks["available"] = time.monotonic() - t0
                    break
                await asyncio.sleep(0.05)
            else:
                raise TimeoutError(f"deployment not available; status={st}")
            result.update({f"{k}_seconds": round(v, 2) for k, v in marks.items()})
            result["pods_per_second"] = round(replicas / marks["available"], 1)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await server.stop(rs)
        return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--replicas", type=int, default=1000)
    p.add_argument("--nodes", type=int, default=100)
    p.add_argument("--binder", choices=("scheduler", "round-robin"), default="scheduler")
    p.add_argument("--log-level", default="WARNING")
    args = p.parse_args()
    logging.basicConfig(level=args.log_level)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    res = asyncio.run(run(args.replicas, args.nodes, args.binder))
    emit("deployment", res)


if __name__ == "__main__":
    main()
