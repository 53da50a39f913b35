"""Benchmark: end to end with simulated kubelets. Pod creation to Running at 1,000 nodes, through bare
pods and through a Deployment (SLO: p99 <= 5 s; goal < 1 s).

    python -m bench.bench_e2e [--nodes 1000] [--pods 1000 --rate 50] [--replicas 1000] [--runs 3]

The server is the whole embedded `minik3s server`: `minik3s.server.start` plus every component
`build_components` starts (controllers, scheduler, a kubelet fleet of `--nodes` simulated nodes
renewing their Leases; no descheduler, which runs only with a policy), as `minik3s server --nodes N`
runs them. Simulated pods start with the default stages (no startup delay), so what is measured
is the control plane: create, queue, schedule, bind, the kubelet's ContainerCreating and Running
status writes, and each watch in between.

The latency is Kubernetes' pod startup SLI (the SIG Scalability SLO "startup latency of schedulable
stateless pods, excluding image pulls, p99 <= 5 s"): from the pod's creation to its Running status
observed through a watch, per pod. Creation is taken at sub-second resolution rather than from
metadata.creationTimestamp (whole seconds on the wire): for bare pods, just before the create
request; for Deployment pods (created by the ReplicaSet controller), when the benchmark's pod watch
first sees the pod, which trails the write by the watch lag.
  * bare pods: `--pods` pods created at `--rate` pods/s (0: all at once by 32 creators), one
    container each (10m / 16Mi);
  * Deployment: one Deployment of `--replicas` replicas (the same pod template) created at once;
    the ReplicaSet controller's slow-start batches make it a burst; also reported: seconds from the
    Deployment's create to availableReplicas == replicas, and the server process's CPU over that
    time per replica (`cpu_ms_per_pod`, every thread: steadier than the latencies on a shared
    machine, and the bound on them when the burst is CPU-bound).
Reported per phase: p50 / p90 / p99 / max of creation -> bound and creation -> Running, in ms; with
`--runs N`, the median of each figure over N runs (each a fresh server).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.background_load import scheduler_counters
from bench.common import emit, pct
from minik3s import server
from minik3s.api.resources import DEPLOYMENTS, NODES, PODS
from minik3s.config import ServerConfig

logger = logging.getLogger(__name__)

SLO_P99_MS = 5000.0
GOAL_P99_MS = 1000.0
CREATORS = 32
NAMESPACE = "default"


def pod_spec() -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}


class PodTimes:
    """Per pod name: when the watch first saw it, saw it bound, saw it Running."""

    def __init__(self) -> None:
        self.seen: dict[str, float] = {}
        self.bound: dict[str, float] = {}
        self.running: dict[str, float] = {}
        self.wake = asyncio.Event()

    def on_add(self, obj: dict[str, Any]) -> None:
        self._see(obj)

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self._see(new)

    def _see(self, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        now = time.monotonic()
        self.seen.setdefault(name, now)
        if (obj.get("spec") or {}).get("nodeName") and name not in self.bound:
            self.bound[name] = now
        if (obj.get("status") or {}).get("phase") == "Running" and name not in self.running:
            self.running[name] = now
            self.wake.set()


def latency_summary(created: dict[str, float], reached: dict[str, float]) -> dict[str, float]:
    lat = [(reached[n] - t) * 1000 for n, t in created.items() if n in reached]
    if len(lat) != len(created):
        raise RuntimeError(f"{len(created) - len(lat)} of {len(created)} pods never got there")
    return {"p50_ms": round(pct(lat, 50), 1), "p90_ms": round(pct(lat, 90), 1),
            "p99_ms": round(pct(lat, 99), 1), "max_ms": round(max(lat), 1)}


async def _until(cond: Any, times: PodTimes, timeout: float, tasks: list[asyncio.Task[Any]], what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        for t in tasks:
            if t.done() and not t.cancelled() and t.exception() is not None:
                raise RuntimeError(f"component {t.get_name()} failed") from t.exception()
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        times.wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(times.wake.wait(), 0.5)


async def bare_pods(rs: Any, times: PodTimes, tasks: list[asyncio.Task[Any]], *, n: int,
                    rate: float) -> dict[str, Any]:
    created: dict[str, float] = {}
    names = [f"bare-{i:06d}" for i in range(n)]
    t0 = time.monotonic()

    async def create(name: str) -> None:
        created[name] = time.monotonic()
        await rs.client.create(PODS, {"apiVersion": "v1", "kind": "Pod",
                                      "metadata": {"name": name, "namespace": NAMESPACE}, "spec": pod_spec()},
                               NAMESPACE)

    if rate > 0:  # a steady rate on a fixed grid; each create runs on its own so a slow one delays none
        async with asyncio.TaskGroup() as tg:
            for i, name in enumerate(names):
                delay = t0 + i / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                tg.create_task(create(name), name=f"bench-create-{name}")
    else:
        it = iter(names)

        async def creator() -> None:
            for name in it:
                await create(name)

        async with asyncio.TaskGroup() as tg:
            for i in range(CREATORS):
                tg.create_task(creator(), name=f"bench-creator-{i}")
    create_s = time.monotonic() - t0
    await _until(lambda: all(k in times.running for k in names), times, max(120.0, n / 5), tasks, "bare pods Running")
    return {"pods": n, "rate": rate, "create_seconds": round(create_s, 2),
            "all_running_seconds": round(time.monotonic() - t0, 2),
            "to_bound": latency_summary(created, times.bound),
            "to_running": latency_summary(created, times.running)}


async def deployment(rs: Any, times: PodTimes, tasks: list[asyncio.Task[Any]], *, replicas: int) -> dict[str, Any]:
    dep_inf = rs.informers.informer(DEPLOYMENTS)
    t0 = time.monotonic()
    cpu0 = time.process_time()
    await rs.client.create(DEPLOYMENTS, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "e2e", "namespace": NAMESPACE},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "e2e"}},
                 "template": {"metadata": {"labels": {"app": "e2e"}}, "spec": pod_spec()}}}, NAMESPACE)

    def available() -> bool:
        st = (dep_inf.store.get(f"{NAMESPACE}/e2e") or {}).get("status") or {}
        return st.get("availableReplicas") == replicas

    await _until(available, times, max(120.0, replicas / 5), tasks, "Deployment available")
    available_s = time.monotonic() - t0
    cpu_s = time.process_time() - cpu0
    pods = [p["metadata"]["name"] for p in rs.informers.informer(PODS).store.list()
            if ((p["metadata"].get("labels") or {}).get("app") == "e2e")]
    created = {n: times.seen[n] for n in pods}
    return {"replicas": replicas, "available_seconds": round(available_s, 2),
            "cpu_ms_per_pod": round(cpu_s * 1000 / replicas, 2),
            "to_bound": latency_summary(created, times.bound),
            "to_running": latency_summary(created, times.running)}


async def _component(fn: Callable[[], Awaitable[None]]) -> None:
    await fn()


async def run_once(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-e2e-") as d:
        cfg = ServerConfig(port=0, data_dir=Path(d), nodes=str(args.nodes), disable={"descheduler"})
        rs = await server.start(cfg)
        tasks: list[asyncio.Task[Any]] = []
        try:
            times = PodTimes()
            rs.informers.informer(PODS).add_handler(on_add=times.on_add, on_update=times.on_update)
            t0 = time.monotonic()
            for name, fn in server.build_components(rs):
                tasks.append(asyncio.create_task(_component(fn), name=name))
            fleet = rs.components["kubelet"]
            node_inf = rs.informers.informer(NODES)
            await _until(lambda: len(node_inf.store.list()) >= args.nodes
                         and all(st.registered for st in fleet.agent.nodes.values()),
                         times, 300, tasks, "nodes registered")
            await rs.informers.wait_for_sync()
            result: dict[str, Any] = {"nodes": args.nodes, "ready_seconds": round(time.monotonic() - t0, 2)}
            if args.pods > 0:
                result["bare_pods"] = await bare_pods(rs, times, tasks, n=args.pods, rate=args.rate)
            if args.replicas > 0:
                result["deployment"] = await deployment(rs, times, tasks, replicas=args.replicas)
            result["scheduler"] = scheduler_counters(rs.metrics)
            return result
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await server.stop(rs)


def _median(runs: list[dict[str, Any]]) -> Any:
    first = runs[0]
    if isinstance(first, dict):
        return {k: _median([r[k] for r in runs]) for k in first}
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        return round(statistics.median(runs), 2)
    return first


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--pods", type=int, default=1000, help="bare pods (0: skip)")
    p.add_argument("--rate", type=float, default=50.0, help="bare pods created per second (0: all at once)")
    p.add_argument("--replicas", type=int, default=1000, help="Deployment replicas (0: skip)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--log-level", default="WARNING")
    args = p.parse_args()
    if args.runs < 1 or args.nodes < 1 or args.pods < 0 or args.replicas < 0 or args.rate < 0:
        p.error("--runs and --nodes must be >= 1; --pods, --replicas and --rate >= 0")
    logging.basicConfig(level=args.log_level)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    runs = []
    for i in range(args.runs):
        r = asyncio.run(run_once(args))
        r["load_average_1m"] = round(os.getloadavg()[0], 2)
        logger.warning("e2e run %d/%d: %s", i + 1, args.runs, r)
        runs.append(r)
    med = _median(runs)
    print(f"\nend to end, {args.nodes} simulated nodes ({args.runs} runs, medians)     p50 ms   p99 ms   max ms")
    for phase in ("bare_pods", "deployment"):
        if phase in med:
            for what in ("to_bound", "to_running"):
                s = med[phase][what]
                print(f"  {phase:11} creation -> {what[3:]:8} {s['p50_ms']:>17.0f} {s['p99_ms']:>8.0f} {s['max_ms']:>8.0f}")
    print(f"  SLO p99 <= {SLO_P99_MS:.0f} ms, goal < {GOAL_P99_MS:.0f} ms")
    emit("e2e", {"slo_p99_ms": SLO_P99_MS, "goal_p99_ms": GOAL_P99_MS, "runs": args.runs,
                 "median": med, "all_runs": runs})


if __name__ == "__main__":
    main()
