"""API server benchmark: durable pod creates/s, request latency, and watch delivery lag.

Shapes (issue "API server", 2-core machine):
- HTTP: a real `minik3s server` process (API only); 32 concurrent connections create pods
  (generateName) round-robin over 100 namespaces. The load comes from `wrk` (a C load
  generator) when it is installed, so the Python client does not compete with the server for
  the two cores; otherwise from 32 aiohttp coroutines (reported as such).
- Watch lag: during that load, 100 watchers (one per namespace, in this process) receive
  every event, and a probe writer creates ~100 pods/s carrying their send time in an
  annotation; lag = receive time - send time of the probe pods, so it includes the probe
  request's own latency (an upper bound on delivery lag).
- In-process: the same creates through the in-process transport (`LocalClient`) against an
  in-process server, 32 concurrent coroutines.
- CPU per create: the server process's CPU time (user + system, from /proc) over the HTTP load
  divided by the creates it served (wrk's requests + the probes), and this process's CPU time
  over the in-process creates divided by their number (the SQLite writer thread included).
  Unlike creates/s, these barely move with what else the machine runs.
- In-process status patches: then a strategic-merge `pods/status` patch adding a condition to
  each of the first `--status-patches` pods (a kubelet's or the scheduler's write: managedFields
  update, patch engine, decoding, status reset), 32 concurrent; CPU per patch as above.

Run: python -m bench.bench_api [--seconds 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
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
JSON = {"Content-Type": "application/json"}

WRK_LUA = r"""
local n = 0
local body = '{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"w-","labels":{"app":"bench"}},' ..
  '"spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.9",' ..
  '"resources":{"requests":{"cpu":"100m","memory":"500Mi"}}}]}}'
request = function()
  n = n + 1
  return wrk.format("POST", "/api/v1/namespaces/b" .. (n % 100) .. "/pods",
                    {["Content-Type"] = "application/json"}, body)
end
"""


def pod(i: int, sent: float, *, generate: bool = False) -> dict:
    meta: dict = {"labels": {"app": "bench", "shard": str(i % 10)}, "annotations": {"bench/sent": repr(sent)}}
    if generate:
        meta["generateName"] = "probe-"
    else:
        meta["name"] = f"p-{i}"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}


def _ms(v: str, unit: str) -> float:
    return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc/<pid>/stat (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def parse_wrk(out: str) -> dict:
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    lat = {int(p): _ms(v, u) for p, v, u in re.findall(r"^\s+(\d+)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)}
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return {"creates_per_s": rps, "p50_ms": lat.get(50), "p99_ms": lat.get(99), "requests": total,
            "non_2xx": int(non2xx.group(1)) if non2xx else 0}


async def http_run(url: str, seconds: float, wrk: str | None, server_pid: int | None = None) -> dict:
    conn = aiohttp.TCPConnector(limit=CONCURRENCY + NS + 8)
    async with aiohttp.ClientSession(connector=conn) as s:
        for k in range(NS):
            async with s.post(url + "/api/v1/namespaces", data=orjson.dumps({"metadata": {"name": f"b{k}"}}),
                              headers=JSON) as r:
                assert r.status in (201, 409)
        async with s.get(url + "/api/v1/pods?limit=1") as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        lags: list[float] = []
        received = 0

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
                        received += 1
                        if b"bench/sent" in line:
                            ev = orjson.loads(line)
                            lags.append(now - float(ev["object"]["metadata"]["annotations"]["bench/sent"]))

        watchers = [asyncio.create_task(watcher(k)) for k in range(NS)]
        await asyncio.sleep(0.5)
        stop = time.monotonic() + seconds
        probes = 0

        async def probe() -> None:
            nonlocal probes
            while time.monotonic() < stop:
                body = orjson.dumps(pod(probes, time.time(), generate=True))
                async with s.post(f"{url}/api/v1/namespaces/b{probes % NS}/pods", data=body, headers=JSON) as r:
                    await r.read()
                probes += 1
                await asyncio.sleep(0.01)

        lat: list[float] = []
        created = 0

        async def worker() -> None:
            nonlocal created
            i = 0
            while time.monotonic() < stop:
                t0 = time.time()
                async with s.post(f"{url}/api/v1/namespaces/b{i % NS}/pods",
                                  data=orjson.dumps(pod(i, t0, generate=True)), headers=JSON) as r:
                    await r.read()
                    assert r.status == 201, r.status
                lat.append(time.time() - t0)
                created += 1
                i += 1

        t0 = time.perf_counter()
        cpu0 = proc_cpu_seconds(server_pid) if server_pid else 0.0
        probe_task = asyncio.create_task(probe())
        if wrk:
            with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
                f.write(WRK_LUA)
            proc = await asyncio.create_subprocess_exec(
                wrk, "-t2", f"-c{CONCURRENCY}", f"-d{int(seconds)}s", "--latency", "-s", f.name, url,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            out = (await proc.communicate())[0].decode()
            Path(f.name).unlink()
            result = parse_wrk(out)
            result["load"] = "wrk"
        else:
            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
            elapsed = time.perf_counter() - t0
            result = {"creates_per_s": created / elapsed, "p50_ms": pct(lat, 50) * 1000,
                      "p99_ms": pct(lat, 99) * 1000, "requests": created, "load": "aiohttp"}
        await probe_task
        if server_pid:
            served = result["requests"] - result.get("non_2xx", 0) + probes
            result["server_cpu_us_per_create"] = (proc_cpu_seconds(server_pid) - cpu0) / max(served, 1) * 1e6
        await asyncio.sleep(1.0)
        for w in watchers:
            w.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
    result.update({"watch_events": received, "probes": probes, "watch_lag_p50_ms": pct(lags, 50) * 1000,
                   "watch_lag_p99_ms": pct(lags, 99) * 1000})
    return result


async def inproc_run(n: int, status_patches: int = 0) -> dict:
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
            cpu0 = time.process_time()
            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
            elapsed = time.perf_counter() - t0
            cpu = time.process_time() - cpu0
            m = min(status_patches, n)
            patch = {"status": {"conditions": [{"type": "PodScheduled", "status": "True",
                                                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
            targets = iter(range(m))

            async def patcher() -> None:
                for i in targets:
                    await c.patch(PODS, f"p-{i}", patch, f"b{i % NS}", patch_type="strategic", subresource="status")

            cpu1, t1 = time.process_time(), time.perf_counter()
            await asyncio.gather(*(patcher() for _ in range(CONCURRENCY)))
            patch_cpu, patch_elapsed = time.process_time() - cpu1, time.perf_counter() - t1
        finally:
            await server.stop(rs)
    out = {"creates_per_s": n / elapsed, "p50_ms": pct(lat, 50) * 1000, "p99_ms": pct(lat, 99) * 1000,
           "cpu_us_per_create": cpu / n * 1e6}
    if m:
        out.update({"status_patches_per_s": m / patch_elapsed, "cpu_us_per_status_patch": patch_cpu / m * 1e6})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--inproc-pods", type=int, default=20000, help="in-process creates per run (0: skip the in-process run)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--status-patches", type=int, default=5000, help="in-process pods/status patches after the creates")
    ap.add_argument("--no-wrk", action="store_true", help="use the Python load generator even if wrk exists")
    args = ap.parse_args()
    if args.inproc_pods < 0 or args.runs < 1:
        ap.error("--inproc-pods must be >= 0 and --runs >= 1")
    wrk = None if args.no_wrk else shutil.which("wrk")
    try:
        import uvloop

        run = uvloop.run
    except ImportError:
        run = asyncio.run
    http_runs, local_runs = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as d:
            srv = ServerProcess(d, nodes=0, args=["--disable", "scheduler", "--disable", "controllers",
                                                  "--disable", "kubelet"])
            srv.start()
            try:
                pid = srv.proc.pid if srv.proc is not None else None
                http_runs.append(run(http_run(srv.url, args.seconds, wrk, pid)))
            finally:
                srv.stop()
        if args.inproc_pods:
            local_runs.append(run(inproc_run(args.inproc_pods, args.status_patches)))

    def med(runs: list[dict], k: str) -> float | str:
        vals = [r[k] for r in runs]
        return statistics.median(vals) if isinstance(vals[0], (int, float)) else vals[0]

    emit("api", {
        "runs": args.runs, "concurrency": CONCURRENCY, "watchers": NS,
        "http": {k: med(http_runs, k) for k in http_runs[0]},
        "inprocess": {k: med(local_runs, k) for k in local_runs[0]} if local_runs else {},
        "raw": {"http": http_runs, "inprocess": local_runs},
    })


if __name__ == "__main__":
    main()
