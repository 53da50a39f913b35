"""Many raw HTTP watch clients in a child process, for event-lag measurements from outside the server.

    python -m bench.watch_clients --url http://127.0.0.1:PORT --path /api/v1/namespaces/NS/pods \
        --rv RV --watchers 1000 --measured 20 --out seen.json

The child opens `--watchers` watch streams on `--path` from `--rv` (raw asyncio protocols under
uvloop: reading is cheap, so the server's fan-out, not the clients' parsing, is what a run
loads), prints `ready` once every stream has its response headers, and keeps reading until its
stdin closes and then until nothing has arrived for 0.3 s. Then it writes `--out`: the bytes every stream received and, for the first
`--measured` streams, when each event's `resourceVersion` first arrived (CLOCK_MONOTONIC, the
same clock the benchmark process reads, so lag = arrival here - submission there).

`WatchClients` is the parent's side: start, wait for ready, stop, read what was seen.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

# the first resourceVersion of a watch line is the object's own (metadata comes first in
# what the server writes; pods carry no other resourceVersion field)
_RV = re.compile(rb'"resourceVersion":"(\d+)"')


class _Watch(asyncio.Protocol):
    def __init__(self, seen: dict[str, float] | None, started: asyncio.Event, counter: list[int]) -> None:
        self.seen = seen
        self.started = started
        self.counter = counter
        self.buf = b""
        self.headers_done = False

    def data_received(self, data: bytes) -> None:
        self.counter[0] += len(data)
        if not self.headers_done:
            self.buf += data
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if not sep:
                return
            self.headers_done = True
            self.started.set()
            data, self.buf = rest, b""
        if self.seen is None:
            return
        now = time.monotonic()
        self.buf += data
        *lines, self.buf = self.buf.split(b"\n")
        seen = self.seen
        for line in lines:
            m = _RV.search(line)
            if m is not None:
                seen.setdefault(m.group(1).decode(), now)


def _same(watch: _Watch) -> _Watch:
    return watch


async def _main(url: str, path: str, rv: str, n: int, measured: int, out: Path) -> None:
    loop = asyncio.get_running_loop()
    u = urlsplit(url)
    host, port = u.hostname or "127.0.0.1", u.port or 80
    counter = [0]
    seen: list[dict[str, float]] = [{} for _ in range(measured)]
    req = (f"GET {path}?watch=1&resourceVersion={rv}&allowWatchBookmarks=false HTTP/1.1\r\n"
           f"Host: {host}:{port}\r\nAccept: application/json\r\n\r\n").encode()
    transports = []
    for i in range(n):
        started = asyncio.Event()
        watch = _Watch(seen[i] if i < measured else None, started, counter)
        tr, _ = await loop.create_connection(functools.partial(_same, watch), host, port)
        tr.write(req)
        transports.append(tr)
        await asyncio.wait_for(started.wait(), 30)
    print("ready", flush=True)
    await loop.run_in_executor(None, sys.stdin.read)  # until the benchmark closes our stdin
    # then drain what is in flight: stop once nothing has arrived for 0.3 s (at most 10 s)
    end = time.monotonic() + 10
    last = -1
    while counter[0] != last and time.monotonic() < end:
        last = counter[0]
        await asyncio.sleep(0.3)
    for tr in transports:
        tr.close()
    out.write_text(json.dumps({"bytes": counter[0], "seen": seen}))


def arrival_lags(seen_maps: list[dict[str, float]], sent: dict[str, float]) -> tuple[list[float], int, float]:
    """What the measured watchers saw of the writes in `sent` (resourceVersion -> when the write
    was sent or acknowledged, on the watchers' monotonic clock): every event's lag (arrival - sent),
    how many (watcher, write) pairs never arrived, and the longest silence between two arrivals at
    one watcher."""
    lags: list[float] = []
    missing = 0
    longest = 0.0
    for seen in seen_maps:
        arrivals = []
        for rv, t in sent.items():
            at = seen.get(rv)
            if at is None:
                missing += 1
            else:
                lags.append(at - t)
                arrivals.append(at)
        arrivals.sort()
        longest = max([longest, *(b - a for a, b in zip(arrivals, arrivals[1:], strict=False))])
    return lags, missing, longest


class WatchClients:
    """The parent's handle on a `bench.watch_clients` child process."""

    def __init__(self, url: str, path: str, rv: str, *, watchers: int, measured: int, out: Path) -> None:
        self.out = out
        self.watchers = watchers
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.watch_clients", "--url", url, "--path", path, "--rv", rv,
             "--watchers", str(watchers), "--measured", str(measured), "--out", str(out)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    async def ready(self) -> None:
        assert self.proc.stdout is not None
        line = await asyncio.get_running_loop().run_in_executor(None, self.proc.stdout.readline)
        if line.strip() != "ready":
            self.proc.kill()
            raise RuntimeError(f"watch clients did not start: {line!r}")

    def stop(self) -> dict[str, object]:
        """Close the child's stdin, wait for its report and return it ({"bytes", "seen"})."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(120)
        return json.loads(self.out.read_text())  # type: ignore[no-any-return]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--rv", required=True)
    ap.add_argument("--watchers", type=int, default=1000)
    ap.add_argument("--measured", type=int, default=20)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    try:
        import uvloop

        runner = asyncio.Runner(loop_factory=uvloop.new_event_loop)
    except ImportError:  # pragma: no cover
        runner = asyncio.Runner()
    with runner:
        runner.run(_main(args.url, args.path, args.rv, args.watchers, min(args.measured, args.watchers),
                         Path(args.out)))


if __name__ == "__main__":
    main()
