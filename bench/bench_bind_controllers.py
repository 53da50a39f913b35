"""CPU per bind with the embedded controllers running: what the kube-controller-manager side
(informer store indices and every controller's pod-update handler) adds to a pod's bind.

An in-process server with the scheduler, kubelets and descheduler off; 8 nodes and N pending
pods are created, then bound through the in-process client (`pods/binding`, 32 at a time, as
the scheduler's binding cycles overlap) while the informers deliver each bound pod to the
controllers' handlers. Printed: CPU microseconds per bind (`time.process_time`, every thread,
including 0.5 s after the last bind for the work the handlers queued), with the controllers on
and off, medians over `--runs`.

`PYTHONPATH=<checkout> python -m bench.bench_bind_controllers --runs 3` runs it against another
checkout for interleaved A/B pairs (docs/performance.md "Session 15").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.bench_bind_cost import NS, bind_all, node, pod
from minik3s import server
from minik3s.api.resources import NAMESPACES, NODES, PODS
from minik3s.config import ServerConfig


async def run(n: int, controllers: bool) -> float:
    disable = {"scheduler", "kubelet", "descheduler"} | (set() if controllers else {"controllers"})
    with tempfile.TemporaryDirectory() as d:
        rs = await server.start(ServerConfig(port=0, data_dir=Path(d), disable=disable))
        tasks: list[asyncio.Future[None]] = [asyncio.ensure_future(fn()) for _, fn in server.build_components(rs)]
        try:
            c = rs.client
            await c.create(NAMESPACES, {"metadata": {"name": NS}})
            for i in range(8):
                await c.create(NODES, node(i))
            pending = [await c.create(PODS, pod(i), NS) for i in range(n)]
            await asyncio.sleep(2.0)  # the controllers have seen the pending pods
            cpu0 = time.process_time()
            await bind_all(c, pending)
            await asyncio.sleep(0.5)  # the handlers' queued work
            return (time.process_time() - cpu0) / n * 1e6
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await server.stop(rs)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, list[float]] = {"controllers_on": [], "controllers_off": []}
    for _ in range(args.runs):
        out["controllers_on"].append(round(await run(args.pods, True), 1))
        out["controllers_off"].append(round(await run(args.pods, False), 1))
    return {"pods": args.pods, **out,
            "median_on_us_per_bind": statistics.median(out["controllers_on"]),
            "median_off_us_per_bind": statistics.median(out["controllers_off"])}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pods", type=int, default=3000)
    p.add_argument("--runs", type=int, default=3)
    print(json.dumps(asyncio.run(main_async(p.parse_args()))))


if __name__ == "__main__":
    main()
