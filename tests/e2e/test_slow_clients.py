"""Slow and stuck clients (issue 17): watches whose clients stop reading are closed within the
send bound while writers keep their throughput and a healthy watcher sees every event in order;
connections that send partial headers, sit idle or trickle a body are closed as kube-apiserver's
HTTP server closes them. Against a real server process, with its bounds made short by flags."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from minik3s.testing.pytest_plugin import API_ONLY
from minik3s.testing.server import ServerProcess

SEND_TIMEOUT = 1.5
HEADER_TIMEOUT = 1.0
IDLE_TIMEOUT = 2.0
REQUEST_TIMEOUT = 2.0


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    s = ServerProcess(tmp_path_factory.mktemp("slow"), nodes=0, log_level="INFO",
                      args=[*API_ONLY, "--watch-send-timeout", str(SEND_TIMEOUT),
                            "--read-header-timeout", str(HEADER_TIMEOUT), "--idle-timeout", str(IDLE_TIMEOUT),
                            "--request-timeout", str(REQUEST_TIMEOUT)])
    s.start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def addr(srv: ServerProcess) -> tuple[str, int]:
    u = urlsplit(srv.url)
    assert u.hostname and u.port
    return u.hostname, u.port


def connect(addr: tuple[str, int], *, rcvbuf: int | None = None) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(addr)
    return s


def closed_within(s: socket.socket, timeout: float) -> float | None:
    """Read (and discard) until the server closes or resets the connection; seconds it took,
    or None when it was still open after `timeout`."""
    start = time.monotonic()
    end = start + timeout
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return None
        s.settimeout(left)
        try:
            if not s.recv(65536):
                return time.monotonic() - start
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - start
        except TimeoutError:
            return None


def server_sockets(port: int, peers: set[int]) -> tuple[int, int]:
    """(how many of the server's connections on `port` to the client ports `peers` are still
    established, bytes in their kernel send queues), from /proc/net/tcp. The file also lists every
    connection earlier tests left in TIME_WAIT, so lines are matched on the local port's text
    before any is split: the sampler below must not starve the writers of the test's own GIL."""
    count = queued = 0
    local_port = f":{port:04X} "
    with open("/proc/net/tcp") as f:
        for line in f:
            if local_port not in line:
                continue
            fields = line.split()
            if fields[3] != "01" or not fields[1].endswith(local_port.rstrip()):
                continue
            if int(fields[2].rsplit(":", 1)[1], 16) in peers:
                count += 1
                queued += int(fields[4].split(":")[0], 16)
    return count, queued


def rss_bytes(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


class EventReader(threading.Thread):
    """A healthy watcher: reads the chunked stream over httpx and keeps every event."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.events: list[dict] = []
        self.started = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with httpx.Client(timeout=60) as c, c.stream("GET", self.url) as r:
                r.raise_for_status()
                self.started.set()
                for line in r.iter_lines():
                    if line:
                        self.events.append(json.loads(line))
        except httpx.ReadError:
            pass
        except BaseException as e:  # noqa: BLE001 - reported by the test
            self.error = e
        finally:
            self.started.set()


# each write's event is this large, so the load overflows every stuck watch's bounded buffers
# (server transport + kernel send buffer + the client's receive buffer) whatever the write rate
BLOB = 8 * 1024
# what one stuck watch's connection can absorb before the server must wait for its client:
# the transport's bound, the kernel send buffer capped to it, the client's small receive buffer
ABSORB = 256 * 1024 + 256 * 1024 + 64 * 1024


def write_load(url: str, ns: str, *, seconds: float, prefix: str, writers: int = 4,
               min_writes: int = 0) -> tuple[int, float]:
    """`writers` threads creating BLOB-sized ConfigMaps for `seconds`, and on until `min_writes`
    writes are done in all; (writes, writes per second)."""
    count = [0] * writers

    def work(i: int) -> None:
        with httpx.Client(base_url=url, timeout=30) as c:
            end = time.monotonic() + seconds
            n = 0
            while time.monotonic() < end or sum(count) + n < min_writes:
                r = c.post(f"/api/v1/namespaces/{ns}/configmaps",
                           json={"metadata": {"name": f"{prefix}-{i}-{n}"}, "data": {"blob": "x" * BLOB}})
                assert r.status_code == 201, r.text
                n += 1
                count[i] = n

    start = time.monotonic()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = sum(count)
    return total, total / (time.monotonic() - start)


def test_stuck_watchers_are_closed_and_writers_keep_their_throughput(srv: ServerProcess, addr, capsys):
    http = httpx.Client(base_url=srv.url, timeout=30)
    ns = "slow-" + uuid.uuid4().hex[:6]
    http.post("/api/v1/namespaces", json={"metadata": {"name": ns}}).raise_for_status()
    watch_path = f"/api/v1/namespaces/{ns}/configmaps?watch=1"
    rv_before = http.get(f"/api/v1/namespaces/{ns}/configmaps?limit=1").json()["metadata"]["resourceVersion"]
    healthy = EventReader(f"{srv.url}{watch_path}&resourceVersion={rv_before}")
    healthy.start()
    assert healthy.started.wait(10)
    # the stuck watches' kernel send queues and the server's RSS, every 50 ms; it runs (and the
    # healthy watcher reads) through the baseline too, so the two loads differ only by the stuck
    # watchers, not by what the test process itself does meanwhile
    peers: set[int] = set()
    peaks = {"queue": 0, "rss": 0}
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.wait(0.05):
            peaks["queue"] = max(peaks["queue"], server_sockets(addr[1], peers)[1])
            peaks["rss"] = max(peaks["rss"], rss_bytes(srv.proc.pid))

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        # the baseline: the same write load without the stuck watchers
        _, baseline = write_load(srv.url, ns, seconds=3, prefix="base")
        rv0 = http.get(f"/api/v1/namespaces/{ns}/configmaps?limit=1").json()["metadata"]["resourceVersion"]
        rss0 = rss_bytes(srv.proc.pid)
        stuck: list[socket.socket] = []
        for _ in range(200):
            s = connect(addr, rcvbuf=16384)
            s.sendall(f"GET {watch_path}&resourceVersion={rv0} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            stuck.append(s)
        for s in stuck:  # the response has started; from here on these clients read nothing
            s.settimeout(10)
            assert s.recv(64).startswith(b"HTTP/1.1 200")
        peers.update(s.getsockname()[1] for s in stuck)
        assert server_sockets(addr[1], peers)[0] == 200
        load_start = time.monotonic()
        peaks.update(queue=0, rss=rss0)
        # at least three times what a stuck watch can absorb, however slow the machine writes
        writes, loaded = write_load(srv.url, ns, seconds=6, prefix="load", min_writes=3 * ABSORB // BLOB)
        # every stuck watch is closed (by the server: its side of the connection is gone) once it
        # has waited the send timeout for its client
        deadline = time.monotonic() + SEND_TIMEOUT + 15
        while server_sockets(addr[1], peers)[0] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server_sockets(addr[1], peers)[0] == 0
        closed_after = time.monotonic() - load_start
    finally:
        sampling.set()
        sampler.join()
    peak_queue, peak_rss = peaks["queue"], peaks["rss"]
    # a stuck client that reads again finds the stream ended
    for s in stuck[:5]:
        assert closed_within(s, 10) is not None
    for s in stuck:
        s.close()
    # the healthy watcher saw every write, in resourceVersion order
    def seen_writes() -> list[dict]:
        return [e for e in list(healthy.events)
                if e["type"] == "ADDED" and e["object"]["metadata"]["name"].startswith("load-")]

    deadline = time.monotonic() + 20
    while len(seen_writes()) < writes and time.monotonic() < deadline:
        time.sleep(0.05)
    seen = seen_writes()
    assert healthy.error is None
    assert len(seen) == writes
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in seen]
    assert rvs == sorted(rvs) and len(set(rvs)) == len(rvs)
    with capsys.disabled():
        print(f"\nstuck watchers: baseline {baseline:.0f} writes/s, with 200 stuck + 1 healthy watcher "
              f"{loaded:.0f} writes/s ({writes} writes); stuck watches' kernel send queues at most "
              f"{peak_queue / 2**20:.1f} MiB; server RSS {rss0 / 2**20:.0f} -> {peak_rss / 2**20:.0f} MiB; "
              f"all stuck watches closed {closed_after:.1f} s after the load began (load: 6 s)")
    # bounded: at most a send buffer per stuck watch in the kernel, and in the process the bounded
    # transport buffers (200 x 256 KiB) plus what the load itself stored (each object, its stored
    # encoding, the shared watch-line cache, the history: a few copies of every write) - not a
    # copy per stuck watcher, which is what unbounded buffering would hold (200 x the written bytes)
    assert peak_queue <= 200 * 512 * 1024
    assert peak_rss - rss0 < 100 * 2**20 + 5 * writes * BLOB, (peak_rss - rss0, writes)
    # writers are not held up by the stuck watchers (a generous bound for a shared machine)
    assert loaded >= 0.4 * baseline, (baseline, loaded)
    assert http.get("/readyz").text == "ok"


def test_watch_ends_by_min_request_timeout_with_jitter(minik3s_server_factory):
    srv = minik3s_server_factory(*API_ONLY, "--min-request-timeout", "1")
    durations = []
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        for _ in range(4):
            start = time.monotonic()
            with c.stream("GET", "/api/v1/namespaces/default/configmaps?watch=1") as r:
                assert r.status_code == 200
                for _ in r.iter_lines():
                    pass  # ends cleanly (a complete chunked body) when the server ends it
            durations.append(time.monotonic() - start)
        # timeoutSeconds wins when given
        start = time.monotonic()
        with c.stream("GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=2") as r:
            for _ in r.iter_lines():
                pass
        explicit = time.monotonic() - start
    assert all(1.0 <= d < 2.6 for d in durations), durations
    assert max(durations) - min(durations) > 0.05, durations  # random in [t, 2t), not one fixed value
    assert 2.0 <= explicit < 3.5


# ---------------------------------------------------------------- connection timeouts (slowloris)
def test_partial_headers_are_closed_after_the_header_timeout(srv, addr):
    s = connect(addr)
    s.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    took = closed_within(s, HEADER_TIMEOUT + 10)
    assert took is not None and took >= HEADER_TIMEOUT - 0.1
    s.close()


def test_a_silent_connection_is_closed_after_the_header_timeout(srv, addr):
    s = connect(addr)
    took = closed_within(s, HEADER_TIMEOUT + 10)
    assert took is not None and took >= HEADER_TIMEOUT - 0.1
    s.close()


def test_idle_keep_alive_connection_is_closed_after_the_idle_timeout(srv, addr):
    s = connect(addr)
    s.sendall(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    s.settimeout(10)
    first = s.recv(4096)
    assert first.startswith(b"HTTP/1.1 200") and first.endswith(b"ok")
    # the header timeout bounds only a connection's first request: a second one sent after it
    # has passed is served (the wait is the subject of the test, not a synchronisation)
    time.sleep(HEADER_TIMEOUT + 0.2)
    start = time.monotonic()
    s.sendall(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert s.recv(4096).startswith(b"HTTP/1.1 200")
    # ... and closed once idle for the idle timeout
    took = closed_within(s, IDLE_TIMEOUT + 10)
    assert took is not None and IDLE_TIMEOUT - 0.1 <= took
    assert time.monotonic() - start < IDLE_TIMEOUT + 10
    s.close()


def test_trickling_body_gets_a_504_status_after_the_request_timeout(srv, addr):
    s = connect(addr)
    body = json.dumps({"metadata": {"name": "trickle"}}).encode()
    s.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body[:5])
    s.settimeout(REQUEST_TIMEOUT + 10)
    start = time.monotonic()
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    took = time.monotonic() - start
    head, _, payload = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 504"), data
    st = json.loads(payload)
    assert st == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                  "message": "Timeout: request did not complete within requested timeout - context deadline exceeded",
                  "reason": "Timeout", "code": 504}
    assert took >= REQUEST_TIMEOUT - 0.2
    assert closed_within(s, 10) is not None  # the rest of the body is not read as another request
    s.close()
    assert httpx.get(f"{srv.url}/api/v1/namespaces/default/configmaps/trickle").status_code == 404


def test_long_running_requests_outlive_the_connection_bounds(srv):
    """A watch idles longer than the header, idle and request timeouts together and still
    delivers the next event."""
    ns = "default"
    name = "late-" + uuid.uuid4().hex[:6]
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        rv = c.get(f"/api/v1/namespaces/{ns}/configmaps?limit=1").json()["metadata"]["resourceVersion"]
        with c.stream("GET", f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}") as r:
            assert r.status_code == 200
            done = threading.Event()

            def write_later() -> None:
                # outlast every connection bound before writing (the wait is the test's subject)
                done.wait(HEADER_TIMEOUT + IDLE_TIMEOUT + REQUEST_TIMEOUT + 0.5)
                httpx.post(f"{srv.url}/api/v1/namespaces/{ns}/configmaps",
                           json={"metadata": {"name": name}}).raise_for_status()

            t = threading.Thread(target=write_later)
            t.start()
            for line in r.iter_lines():
                ev = json.loads(line)
                if ev["object"]["metadata"]["name"] == name:
                    break
            t.join()
