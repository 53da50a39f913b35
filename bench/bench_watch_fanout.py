"""Watch fan-out benchmark: many healthy watchers, a steady write rate, event delivery lag.

Shape (issue 17, goal: 1,000 watchers at 500 writes/s with lag p99 < 100 ms):
- A real `minik3s server` process (API only).
- A separate watcher process (uvloop, raw asyncio protocols, so the server's CPU is measured
  apart from the clients') opens `--watchers` HTTP watch streams on one namespace's ConfigMaps
  from the same resourceVersion. Every watcher reads everything; `--measured` of them also
  find each event's object name in the raw bytes and record its receive time; the others only
  count bytes (a Python client cannot parse 500k events/s, and the server's work is the same
  either way).
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
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.common import emit, pct
from minik3s.testing.server import ServerProcess

NS = "fanout"
_NAME = re.compile(rb'"name":"fan-(\d+)"')


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- watcher process
class _Watch(asyncio.Protocol):
    def __init__(self, measured: bool, seen: dict[int, float] | None, started: asyncio.Event,
                 counter: list[int]) -> None:
        self.measured = measured
        self.seen = seen
        self.started = started
        self.counter = counter
        self.tail = b""
        self.headers_done = False
        self.closed = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.counter[0] += len(data)
        if not self.headers_done:
            if b"\r\n\r\n" in self.tail + data:
                self.headers_done = True
                self.started.set()
        if self.measured and self.seen is not None:
            now = time.monotonic()
            buf = self.tail + data
            for m in _NAME.finditer(buf):
                self.seen.setdefault(int(m.group(1)), now)
            self.tail = buf[-64:]
        else:
            self.tail = data[-4:]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def _watchers_main(host: str, port: int, n: int, measured: int, rv: str, out: Path) -> None:
    loop = asyncio.get_running_loop()
    counter = [0]
    seen: list[dict[int, float]] = [{} for _ in range(measured)]
    protos: list[_Watch] = []
    req = (f"GET /api/v1/namespaces/{NS}/configmaps?watch=1&resourceVersion={rv} HTTP/1.1\r\n"
           f"Host: {host}:{port}\r\nAccept: application/json\r\n\r\n").encode()
    for i in range(n):
        started = asyncio.Event()
        tr, p = await loop.create_connection(
            lambda i=i, started=started: _Watch(i < measured, seen[i] if i < measured else None, started, counter),
            host, port)
        tr.write(req)
        protos.append(p)
        await asyncio.wait_for(started.wait(), 30)
    print("ready", flush=True)
    # run until stdin closes (the benchmark is over), then report
    await loop.run_in_executor(None, sys.stdin.read)
    out.write_text(json.dumps({"bytes": counter[0], "seen": [{str(k): v for k, v in s.items()} for s in seen]}))


def watchers_child(args: argparse.Namespace) -> None:
    try:
        import uvloop

        runner = asyncio.Runner(loop_factory=uvloop.new_event_loop)
    except ImportError:  # pragma: no cover
        runner = asyncio.Runner()
    with runner:
        runner.run(_watchers_main(args.host, args.port, args.watchers, args.measured, args.rv, Path(args.out)))


# ---------------------------------------------------------------- writer and orchestration
async def write_load(url: str, *, rate: float, seconds: float, writers: int) -> tuple[dict[int, float], list[float]]:
    acks: dict[int, float] = {}
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
                    await r.read()
                    assert r.status == 201, r.status
                t1 = time.monotonic()
                acks[i] = t1
                latencies.append(t1 - t0)

        await asyncio.gather(*(writer() for _ in range(writers)))
    return acks, latencies


async def run_once(args: argparse.Namespace, data_dir: Path) -> dict:
    srv = ServerProcess(data_dir, nodes=0, args=["--disable", "scheduler", "--disable", "controllers",
                                                 "--disable", "kubelet"])
    srv.start()
    try:
        assert srv.proc is not None
        async with aiohttp.ClientSession(base_url=srv.url) as s:
            async with s.post("/api/v1/namespaces", json={"metadata": {"name": NS}}) as r:
                assert r.status == 201
            async with s.get(f"/api/v1/namespaces/{NS}/configmaps?limit=1") as r:
                rv = (await r.json())["metadata"]["resourceVersion"]
        host, port = srv.url.split("//", 1)[1].split(":")
        out = data_dir / "watchers.json"
        child = subprocess.Popen(
            [sys.executable, "-m", "bench.bench_watch_fanout", "--child", "--host", host, "--port", port,
             "--watchers", str(args.watchers), "--measured", str(args.measured), "--rv", rv, "--out", str(out)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdin is not None
        line = await asyncio.get_running_loop().run_in_executor(None, child.stdout.readline)
        assert line.strip() == "ready", line
        load_before = os.getloadavg()
        s_cpu0, c_cpu0, t0 = cpu_seconds(srv.proc.pid), cpu_seconds(child.pid), time.monotonic()
        acks, latencies = await write_load(srv.url, rate=args.rate, seconds=args.seconds, writers=args.writers)
        elapsed = time.monotonic() - t0
        await asyncio.sleep(2.0)  # let the last events arrive before the watchers report
        s_cpu1, c_cpu1 = cpu_seconds(srv.proc.pid), cpu_seconds(child.pid)
        load_after = os.getloadavg()
        child.stdin.close()
        child.wait(60)
        got = json.loads(out.read_text())
    finally:
        srv.stop()
    lags: list[float] = []
    missing = 0
    for seen in got["seen"]:
        for i, ack in acks.items():
            t = seen.get(str(i))
            if t is None:
                missing += 1
            else:
                lags.append(t - ack)
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
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--host", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--rv", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        watchers_child(args)
        return
    runs = []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="minik3s-fanout-") as d:
            runs.append(asyncio.run(run_once(args, Path(d) / f"run{i}")))
    emit("watch_fanout", {"runs": runs})


if __name__ == "__main__":
    main()
