"""Benchmark: the simulated kubelet fleet inside a real, in-process minik3s server.

Measures, per fleet size:
  * registration time: every Node + Lease created (target: 5,000 nodes < 30 s);
  * idle CPU, at every size: process CPU time / wall time (the whole server: API, storage, watch
    cache, informers and the fleet) while the fleet only heartbeats, and the writes that reach
    the store per second by resource (Lease renewals every 10 s: 1,000 nodes = 100 writes/s;
    node status every `--status-report-frequency` s, 300 s by default as the kubelet's
    nodeStatusReportFrequency when nothing changed). Target: 1,000 nodes < 20 % of one core;
  * pod throughput, at the first size: pods created with spec.nodeName, until every one is
    Running (KWOK's published claim is 20 nodes or pods per second).

    python -m bench.bench_kubelet_fleet --nodes 1000,5000 --idle-seconds 60 --pods 2000
    python -m bench.bench_kubelet_fleet --nodes 1000 --status-report-frequency 10   # status every 10 s

The server runs without scheduler, controllers or descheduler so only the API server and the
fleet are measured (the composition root's own fleet is disabled; this one is built here).
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
from kubelet_sim.controller import FleetOptions, KubeletFleet
from minik3s import server
from minik3s.api.resources import PODS
from minik3s.config import ServerConfig

logger = logging.getLogger(__name__)


async def _wait(cond: Any, timeout: float, poll: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        await asyncio.sleep(poll)


class WriteCounter:
    """Writes submitted to the store, by `group/resource` (the first two parts of the key)."""

    def __init__(self, store: Any) -> None:
        self.counts: dict[str, int] = {}
        inner = store._submit
        counts = self.counts

        def submit(kind: int, key: str, obj: Any, expected_rv: Any) -> Any:
            res = "/".join(key.split("/")[:2])
            counts[res] = counts.get(res, 0) + 1
            return inner(kind, key, obj, expected_rv)

        store._submit = submit

    def snapshot(self) -> dict[str, int]:
        return dict(self.counts)


async def run_size(n_nodes: int, *, idle_seconds: float, n_pods: int,
                   options: FleetOptions | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"bench-fleet-{n_nodes}-") as d:
        return await _run_size(Path(d), n_nodes, idle_seconds=idle_seconds, n_pods=n_pods, options=options)


async def _run_size(data_dir: Path, n_nodes: int, *, idle_seconds: float, n_pods: int,
                    options: FleetOptions | None) -> dict[str, Any]:
    cfg = ServerConfig(port=0, data_dir=data_dir, nodes="0",
                       disable={"scheduler", "controllers", "descheduler", "kubelet"})
    rs = await server.start(cfg)
    result: dict[str, Any] = {"nodes": n_nodes}
    background: list[asyncio.Task[None]] = []
    try:
        background.append(asyncio.create_task(rs.informers.run(), name="bench-informers"))
        writes = WriteCounter(rs.store)
        fleet = KubeletFleet(parse_fleet(n_nodes), client=rs.client, informers=rs.informers, options=options)
        t0 = time.monotonic()
        await fleet.agent.register_all()
        result["register_seconds"] = round(time.monotonic() - t0, 2)
        result["register_nodes_per_second"] = round(n_nodes / max(1e-9, result["register_seconds"]), 1)
        background.append(asyncio.create_task(fleet.run_registered(), name="bench-fleet"))
        await rs.informers.wait_for_sync()

        if idle_seconds > 0:
            await asyncio.sleep(min(10.0, idle_seconds / 4))  # settle into steady renewals
            renew0 = sum(st.renewals for st in fleet.agent.nodes.values())
            w0 = writes.snapshot()
            cpu0, wall0 = time.process_time(), time.monotonic()
            await asyncio.sleep(idle_seconds)
            cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
            renewals = sum(st.renewals for st in fleet.agent.nodes.values()) - renew0
            w1 = writes.snapshot()
            result["idle_seconds"] = round(wall, 1)
            result["idle_cpu_percent"] = round(100 * cpu / wall, 1)
            result["lease_renewals_per_second"] = round(renewals / wall, 1)
            result["store_writes_per_second"] = {k: round((v - w0.get(k, 0)) / wall, 1)
                                                 for k, v in sorted(w1.items()) if v > w0.get(k, 0)}

        if n_pods > 0:
            pod_inf = rs.informers.informer(PODS)
            await rs.informers.wait_for_sync()
            names = list(fleet.agent.nodes)
            sem = asyncio.Semaphore(64)

            async def create(i: int) -> None:
                async with sem:
                    await rs.client.create(PODS, {
                        "apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": f"bench-{i}", "namespace": "default"},
                        "spec": {"nodeName": names[i % len(names)],
                                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}})

            def running() -> int:
                return sum(1 for p in pod_inf.store.list() if (p.get("status") or {}).get("phase") == "Running")

            t0 = time.monotonic()
            async with asyncio.TaskGroup() as tg:
                for i in range(n_pods):
                    tg.create_task(create(i), name=f"bench-create-{i}")
            created = time.monotonic() - t0
            await _wait(lambda: running() >= n_pods, timeout=max(60.0, n_pods / 5))
            elapsed = time.monotonic() - t0
            result["pods"] = n_pods
            result["pods_create_seconds"] = round(created, 2)
            result["pods_running_seconds"] = round(elapsed, 2)
            result["pods_per_second"] = round(n_pods / elapsed, 1)
    finally:
        for t in background:
            t.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        await server.stop(rs)
    return result


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    options = FleetOptions(status_report_frequency=args.status_report_frequency)
    for n in (int(x) for x in args.nodes.split(",") if x.strip()):
        # idle CPU at every size; the pod numbers at the first (1,000-node) size only
        first = not out
        res = await run_size(n, idle_seconds=args.idle_seconds, n_pods=args.pods if first else 0, options=options)
        logger.warning("fleet size done: %s", res)
        out.append(res)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", default="1000,5000", help="comma-separated fleet sizes")
    p.add_argument("--idle-seconds", type=float, default=60.0)
    p.add_argument("--pods", type=int, default=2000)
    p.add_argument("--status-report-frequency", type=float, default=300.0,
                   help="seconds between unchanged node status reports (kubelet nodeStatusReportFrequency)")
    p.add_argument("--log-level", default="WARNING")
    args = p.parse_args()
    logging.basicConfig(level=args.log_level)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    if args.idle_seconds < 0 or args.pods < 0 or args.status_report_frequency <= 0:
        p.error("--idle-seconds and --pods must be >= 0, --status-report-frequency > 0")
    runs = asyncio.run(main_async(args))
    print(f"\n{'nodes':>6} {'register s':>10} {'idle CPU % of a core':>21} {'lease/s':>8}  store writes/s")
    for r in runs:
        print(f"{r['nodes']:>6} {r['register_seconds']:>10} {r.get('idle_cpu_percent', '-'):>21} "
              f"{r.get('lease_renewals_per_second', '-'):>8}  {r.get('store_writes_per_second', '-')}")
    emit("kubelet_fleet", {"status_report_frequency": args.status_report_frequency, "sizes": runs, "targets": {
        "register_5000_seconds": 30, "idle_cpu_percent_1000": 20, "kwok_pods_per_second": 20}})


if __name__ == "__main__":
    main()
