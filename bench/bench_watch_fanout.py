"""Watch fan-out benchmark: many healthy watchers, a steady write rate, event delivery lag.

Shape (issue 17, goal: 1,000 watchers at 500 writes/s with lag p99 < 100 ms):
- A real `minik3s server` process (API only).
- A separate watcher process (bench.watch_clients: uvloop, raw asyncio protocols, so the
  server's CPU is measured apart from the clients') opens `--watchers` HTTP watch streams on one
  namespace's ConfigMaps from the same resourceVersion. Every watcher reads everything;
  `--measured` of them also find each event's resourceVersion in the raw bytes and record its
  receive time; the others only count bytes (a Python client cannot parse 500k events/s, and
  the server's work is the same either way).
- This process writes ConfigMaps named `fan-<seq>` at `--rate` per second (paced, from
  `--writers` concurrent connections) and records each write's acknowledgement time.
- lag = receive time (watcher process) - write ack time (writer), both CLOCK_MONOTONIC, so it
  excludes the write request's own latency; a negative value (an event seen before its ack
  arrived) is kept as is.
- Reported: achieved writes/s and write latency, lag p50/p99/max over every (measured watcher,
  event), events delivered per second (all watchers), server and client CPU (from /proc), the
  load average before and after (the machine is shared).

Run: python -m bench.bench_watch_fanout [--watchers 1000] [--rate 500] [--seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

from bench.common import emit, pct
from bench.watch_clients import WatchClients, arrival_lags
from minik3s.testing.server import ServerProcess

NS = "fanout"


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- writer and orchestration
async def write_load(url: str, *, rate: float, seconds: float, writers: int) -> tuple[dict[str, float], list[float]]:
    """Paced ConfigMap creates; returns each write's acknowledgement time by the
    resourceVersion its response carries, and the write latencies."""
    acks: dict[str, float] = {}
    latencies: list[float] = []
    start = time.monotonic()
    total = int(rate * seconds)
    seq = iter(range(total))
    async with aiohttp.ClientSession(base_url=url) as s:
        async def writer() -> None:
            for i in seq:
                due = start + i / rate
                delay = due - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                t0 = time.monotonic()
                async with s.post(f"/api/v1/namespaces/{NS}/configmaps",
                                  json={"metadata": {"name": f"fan-{i}"}, "data": {"seq": str(i), "pad": "x" * 200}}) as r:
                    body = await r.read()
                    assert r.status == 201, r.status
                t1 = time.monotonic()
                acks[orjson.loads(body)["metadata"]["resourceVersion"]] = t1
                latencies.append(t1 - t0)

        await asyncio.gather(*(writer() for _ in range(writers)))
    return acks, latencies


async def run_once(args: argparse.Namespace, data_dir: Path) -> dict:
    srv = ServerProcess(data_dir, nodes=0, args=["--disable", "scheduler", "--disable", "controllers",
                                                 "--disable", "kubelet"])
    srv.start()
    clients: WatchClients | None = None
    try:
        assert srv.proc is not None
        async with aiohttp.ClientSession(base_url=srv.url) as s:
            async with s.post("/api/v1/namespaces", json={"metadata": {"name": NS}}) as r:
                assert r.status == 201
            async with s.get(f"/api/v1/namespaces/{NS}/configmaps?limit=1") as r:
                rv = (await r.json())["metadata"]["resourceVersion"]
        clients = WatchClients(srv.url, f"/api/v1/namespaces/{NS}/configmaps", rv, watchers=args.watchers,
                               measured=args.measured, out=data_dir / "watchers.json")
        await clients.ready()
        load_before = os.getloadavg()
        s_cpu0, c_cpu0, t0 = cpu_seconds(srv.proc.pid), cpu_seconds(clients.proc.pid), time.monotonic()
        acks, latencies = await write_load(srv.url, rate=args.rate, seconds=args.seconds, writers=args.writers)
        elapsed = time.monotonic() - t0
        await asyncio.sleep(2.0)  # let the last events arrive before the watchers report
        s_cpu1, c_cpu1 = cpu_seconds(srv.proc.pid), cpu_seconds(clients.proc.pid)
        load_after = os.getloadavg()
        got = clients.stop()
        clients = None
    finally:
        if clients is not None:
            clients.kill()
        srv.stop()
    lags, missing, _ = arrival_lags(got["seen"], acks)
    writes = len(acks)
    event_bytes = got["bytes"] / max(1, writes * args.watchers)
    return {
        "watchers": args.watchers, "measured_watchers": args.measured, "target_writes_per_s": args.rate,
        "writes": writes, "writes_per_s": round(writes / elapsed, 1),
        "write_latency_ms": {"p50": round(pct(latencies, 50) * 1000, 2), "p99": round(pct(latencies, 99) * 1000, 2)},
        "lag_ms": {"p50": round(pct(lags, 50) * 1000, 2), "p99": round(pct(lags, 99) * 1000, 2),
                   "max": round(max(lags) * 1000, 2) if lags else None},
        "events_missing_at_measured_watchers": missing,
        "events_delivered_per_s": round(writes * args.watchers / elapsed),
        "bytes_per_event_per_watcher": round(event_bytes),
        "server_cpu_percent": round((s_cpu1 - s_cpu0) / (elapsed + 2.0) * 100, 1),
        "client_cpu_percent": round((c_cpu1 - c_cpu0) / (elapsed + 2.0) * 100, 1),
        "loadavg_before": [round(x, 2) for x in load_before], "loadavg_after": [round(x, 2) for x in load_after],
        "goal": "the target write rate, lag p99 < 100 ms",
        "goal_met": bool(lags) and pct(lags, 99) < 0.1 and missing == 0 and writes / elapsed >= 0.95 * args.rate,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--watchers", type=int, default=1000)
    ap.add_argument("--measured", type=int, default=20, help="watchers that record per-event receive times")
    ap.add_argument("--rate", type=float, default=500.0, help="writes per second")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--writers", type=int, default=64, help="concurrent writer connections")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    runs = []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="minik3s-fanout-") as d:
            runs.append(asyncio.run(run_once(args, Path(d) / f"run{i}")))
    emit("watch_fanout", {"runs": runs})


if __name__ == "__main__":
    main()
