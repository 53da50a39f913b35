"""CPU per durable pod create through the in-process transport (`LocalClient`).

A 32-coroutine loop of creates of the bench pod against an in-process server with every
component off; prints `<CPU µs per create> <creates per second>`. CPU is the whole process's
(`time.process_time`: the SQLite writer thread included). The script uses only
`minik3s.server.start`/`stop` and `rs.client`, so the same file runs against an older checkout
(`PYTHONPATH=<checkout> python bench/bench_create_cost.py 6000`) for interleaved A/B runs, which
is how docs/benchmarks.md "Create cost" was measured (PYTHONPATH wins over this tree's editable
install as long as the current directory is not on sys.path first, as it is with `python -c`).

The loop drops each create's result, as the controllers creating pods do (ReplicaSet, Job,
DaemonSet only read the name), so it passes `read_only=True` as they do when the checkout's
`LocalClient.create` has the flag (no copy out); a second argument `copy` makes it take the
caller-owned copy anyway (`python bench/bench_create_cost.py 6000 copy`).
"""

from __future__ import annotations

import asyncio
import inspect
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


async def run(n: int, *, copy_out: bool = False) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as d:
        rs = await server.start(ServerConfig(port=0, data_dir=Path(d),
                                             disable={"scheduler", "controllers", "kubelet", "descheduler"}))
        try:
            c = rs.client
            for k in range(NS):
                await c.create(NAMESPACES, {"metadata": {"name": f"b{k}"}})
            todo = iter(range(n))
            kw: dict[str, Any] = {}
            if not copy_out and "read_only" in inspect.signature(c.create).parameters:
                kw["read_only"] = True

            async def worker() -> None:
                for i in todo:
                    await c.create(PODS, pod(i), f"b{i % NS}", **kw)

            cpu0, t0 = time.process_time(), time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
            return (time.process_time() - cpu0) / n * 1e6, n / (time.perf_counter() - t0)
        finally:
            await server.stop(rs)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    cpu_us, rate = asyncio.run(run(n, copy_out=len(sys.argv) > 2 and sys.argv[2] == "copy"))
    print(f"{cpu_us:.0f} {rate:.0f}")


if __name__ == "__main__":
    main()
