"""CPU per durable pod create through the in-process transport (`LocalClient`).

A 32-coroutine loop of creates of the bench pod against an in-process server with every
component off; prints `<CPU µs per create> <creates per second>`. CPU is the whole process's
(`time.process_time`: the SQLite writer thread included). The script uses only
`minik3s.server.start`/`stop` and `rs.client`, so the same file runs against an older checkout
(`PYTHONPATH=<checkout> python bench/bench_create_cost.py 6000`) for interleaved A/B runs, which
is how docs/benchmarks.md "Session 3: create cost against session 1's code" was measured.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from minik3s import server
from minik3s.api.resources import NAMESPACES, PODS
from minik3s.config import ServerConfig

NS = 8
CONCURRENCY = 32


def pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p-{i}", "labels": {"app": "bench", "shard": str(i % 10)},
                         "annotations": {"bench/sent": "0.0"}},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}


async def run(n: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as d:
        rs = await server.start(ServerConfig(port=0, data_dir=Path(d),
                                             disable={"scheduler", "controllers", "kubelet", "descheduler"}))
        try:
            c = rs.client
            for k in range(NS):
                await c.create(NAMESPACES, {"metadata": {"name": f"b{k}"}})
            todo = iter(range(n))

            async def worker() -> None:
                for i in todo:
                    await c.create(PODS, pod(i), f"b{i % NS}")

            cpu0, t0 = time.process_time(), time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
            return (time.process_time() - cpu0) / n * 1e6, n / (time.perf_counter() - t0)
        finally:
            await server.stop(rs)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    cpu_us, rate = asyncio.run(run(n))
    print(f"{cpu_us:.0f} {rate:.0f}")


if __name__ == "__main__":
    main()
