"""API server benchmark: durable pod creates/s and watch delivery lag.

Shapes (issue "API server"):
- HTTP: a real `minik3s server` process (API only), 32 concurrent clients creating pods spread
  over 100 namespaces; per-request latency p50/p99; creates/s.
- Watch lag: during that load, 100 watchers (one per namespace) receive every event; lag is
  receive time minus the client's send time of that create (carried in an annotation), so it
  is an upper bound that includes the request's own latency.
- In-process: the same creates through the in-process transport (`LocalClient`) against an
  in-process server, 32 concurrent coroutines.

Run: python -m bench.bench_api [--pods 20000] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

from bench.common import emit, pct
from minik3s.api.resources import NAMESPACES, PODS
from minik3s.testing.server import ServerProcess

NS = 100
CONCURRENCY = 32


def pod(i: int, sent: float) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p-{i}", "labels": {"app": "bench", "shard": str(i % 10)},
                         "annotations": {"bench/sent": repr(sent)}},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}


async def http_run(url: str, n: int) -> dict:
    conn = aiohttp.TCPConnector(limit=CONCURRENCY + NS + 8)
    async with aiohttp.ClientSession(connector=conn) as s:
        for k in range(NS):
            async with s.post(url + "/api/v1/namespaces", data=orjson.dumps({"metadata": {"name": f"b{k}"}}),
                              headers={"Content-Type": "application/json"}) as r:
                assert r.status in (201, 409)
        async with s.get(url + "/api/v1/pods?limit=1") as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        lags: list[float] = []
        received = 0
        done = asyncio.Event()

        async def watcher(k: int) -> None:
            nonlocal received
            async with s.get(f"{url}/api/v1/namespaces/b{k}/pods?watch=true&resourceVersion={rv}",
                             timeout=aiohttp.ClientTimeout(total=None)) as r:
                buf = b""
                async for chunk in r.content.iter_any():
                    now = time.time()
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        ev = orjson.loads(line)
                        sent = float(ev["object"]["metadata"]["annotations"]["bench/sent"])
                        lags.append(now - sent)
                        received += 1
                        if received >= n:
                            done.set()

        watchers = [asyncio.create_task(watcher(k)) for k in range(NS)]
        await asyncio.sleep(0.5)
        lat: list[float] = []
        counter = iter(range(n))

        async def worker() -> None:
            for i in counter:
                t0 = time.time()
                body = orjson.dumps(pod(i, t0))
                async with s.post(f"{url}/api/v1/namespaces/b{i % NS}/pods", data=body,
                                  headers={"Content-Type": "application/json"}) as r:
                    await r.read()
                    assert r.status == 201, r.status
                lat.append(time.time() - t0)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        elapsed = time.perf_counter() - t0
        try:
            await asyncio.wait_for(done.wait(), 30)
        except TimeoutError:
            pass
        for w in watchers:
            w.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
    return {"creates_per_s": n / elapsed, "p50_ms": pct(lat, 50) * 1000, "p99_ms": pct(lat, 99) * 1000,
            "watch_events": received, "watch_lag_p50_ms": pct(lags, 50) * 1000,
            "watch_lag_p99_ms": pct(lags, 99) * 1000}


async def inproc_run(n: int) -> dict:
    from minik3s import server
    from minik3s.config import ServerConfig

    with tempfile.TemporaryDirectory() as d:
        cfg = ServerConfig(port=0, data_dir=Path(d), disable={"scheduler", "controllers", "kubelet", "descheduler"})
        rs = await server.start(cfg)
        try:
            c = rs.client
            for k in range(NS):
                await c.create(NAMESPACES, {"metadata": {"name": f"b{k}"}})
            lat: list[float] = []
            counter = iter(range(n))

            async def worker() -> None:
                for i in counter:
                    t0 = time.perf_counter()
                    await c.create(PODS, pod(i, 0.0), f"b{i % NS}")
                    lat.append(time.perf_counter() - t0)

            t0 = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
            elapsed = time.perf_counter() - t0
        finally:
            await server.stop(rs)
    return {"creates_per_s": n / elapsed, "p50_ms": pct(lat, 50) * 1000, "p99_ms": pct(lat, 99) * 1000}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    http_runs, local_runs = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as d:
            srv = ServerProcess(d, nodes=0, args=["--disable", "scheduler", "--disable", "controllers",
                                                  "--disable", "kubelet"])
            srv.start()
            try:
                http_runs.append(asyncio.run(http_run(srv.url, args.pods)))
            finally:
                srv.stop()
        try:
            import uvloop

            local_runs.append(uvloop.run(inproc_run(args.pods)))
        except ImportError:
            local_runs.append(asyncio.run(inproc_run(args.pods)))
    med = lambda runs, k: statistics.median(r[k] for r in runs)  # noqa: E731
    emit("api", {
        "pods_per_run": args.pods, "runs": args.runs, "concurrency": CONCURRENCY, "watchers": NS,
        "http": {k: med(http_runs, k) for k in http_runs[0]},
        "inprocess": {k: med(local_runs, k) for k in local_runs[0]},
        "raw": {"http": http_runs, "inprocess": local_runs},
    })


if __name__ == "__main__":
    main()
