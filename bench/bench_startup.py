"""Benchmark: how long until an embedded minik3s cluster is usable (goal: a 3-node cluster ready,
API answering and every node Ready, in < 0.5 s median on a 2-core machine).

Measures, each over --runs starts (median, p90, max):
  * async: `async with minik3s.Cluster(nodes=N)` in the caller's loop, start until handed over;
  * sync: `with minik3s.Cluster(nodes=N)` (the background-thread twin);
  * stop: leaving the `async with` block (components cancelled, port, SQLite, temp dir gone);
  * cold: a fresh interpreter that imports minik3s and starts one cluster (imports included),
    timed inside the child, over --cold-runs;
  * process: `minik3s server` as a child process (`minik3s.testing.server.ServerProcess`) until
    its nodes are Ready, the alternative the embedding API replaces, over --cold-runs.

    python -m bench.bench_startup --nodes 3 --runs 20 --cold-runs 5
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import emit, pct
from minik3s.embed import Cluster, node_ready
from minik3s.testing.server import ServerProcess

COLD = """
import time, sys
t0 = time.perf_counter()
import minik3s
with minik3s.Cluster(nodes={nodes}) as c:
    t1 = time.perf_counter()
print(t1 - t0)
"""


def summary(values: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(values), 4), "p90_s": round(pct(values, 90), 4),
            "max_s": round(max(values), 4), "runs": len(values)}


async def async_starts(nodes: int, runs: int) -> tuple[list[float], list[float]]:
    starts: list[float] = []
    stops: list[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        cluster = Cluster(nodes=nodes)
        await cluster.__aenter__()
        t1 = time.perf_counter()
        await cluster.__aexit__(None, None, None)
        stops.append(time.perf_counter() - t1)
        starts.append(t1 - t0)
    return starts, stops


def sync_starts(nodes: int, runs: int) -> list[float]:
    out: list[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        with Cluster(nodes=nodes):
            out.append(time.perf_counter() - t0)
    return out


def cold_starts(nodes: int, runs: int) -> list[float]:
    out: list[float] = []
    for _ in range(runs):
        r = subprocess.run([sys.executable, "-c", COLD.format(nodes=nodes)], capture_output=True, text=True,
                           check=True, timeout=120)
        out.append(float(r.stdout.strip().splitlines()[-1]))
    return out


def process_starts(nodes: int, runs: int) -> list[float]:
    out: list[float] = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="minik3s-bench-") as d:
            t0 = time.perf_counter()
            srv = ServerProcess(Path(d), nodes=nodes).start()
            try:
                with httpx.Client(base_url=srv.url) as c:
                    while True:
                        items = c.get("/api/v1/nodes").json()["items"]
                        if len(items) == nodes and all(node_ready(n) for n in items):
                            break
                        time.sleep(0.005)
                out.append(time.perf_counter() - t0)
            finally:
                srv.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--cold-runs", type=int, default=5)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(async_starts(args.nodes, 2))  # warm-up: imports and first-use caches
    starts, stops = asyncio.run(async_starts(args.nodes, args.runs))
    result: dict[str, Any] = {
        "nodes": args.nodes,
        "async_start": summary(starts),
        "stop": summary(stops),
        "sync_start": summary(sync_starts(args.nodes, args.runs)),
        "cold_start_with_imports": summary(cold_starts(args.nodes, args.cold_runs)),
        "server_process_start": summary(process_starts(args.nodes, args.cold_runs)),
    }
    emit("startup", result)


if __name__ == "__main__":
    main()
