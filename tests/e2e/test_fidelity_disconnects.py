"""Clients that vanish mid-stream (a reset connection: SO_LINGER 0, then close) are an ordinary
end of a watch or a followed log: the server logs it at DEBUG, never as an error, and keeps
serving. kube-apiserver likewise ends such a watch quietly (the write fails, the watcher
stops)."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from minik3s.testing.server import ServerProcess
from minik3s.testing.wait import wait_for


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with ServerProcess(tmp_path_factory.mktemp("fidelity-disconnects"), nodes=1, log_level="DEBUG") as s:
        yield s


@pytest.fixture(scope="module")
def http(srv: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        yield c


def server_log(srv: ServerProcess) -> list[str]:
    return (Path(srv.data_dir) / "server.log").read_text(errors="replace").splitlines()


def errors_in(lines: list[str]) -> list[str]:
    return [ln for ln in lines if " ERROR " in ln or "Traceback" in ln or " CRITICAL " in ln]


def open_stream(srv: ServerProcess, path: str) -> socket.socket:
    """A raw connection with `path` requested and the response head read."""
    u = urlsplit(srv.url)
    s = socket.create_connection((u.hostname, u.port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # little room: the server's writes back up
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        assert chunk, "closed before the response head"
        head += chunk
    assert head.startswith(b"HTTP/1.1 200"), head
    return s


def reset(s: socket.socket) -> None:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close sends RST
    s.close()


def test_watch_clients_that_reset_mid_stream_are_not_errors(srv: ServerProcess, http: httpx.Client, ns: str) -> None:
    # enough history that a watch replaying it backs up the server's send buffer (the handler
    # then waits for drain when the reset arrives), and writes that keep events flowing
    first = ""
    for i in range(300):
        r = http.post(f"/api/v1/namespaces/{ns}/configmaps",
                      json={"metadata": {"name": f"old{i}", "labels": {"i": str(i % 2)}}, "data": {"x": "y" * 4000}})
        r.raise_for_status()
        first = first or r.json()["metadata"]["resourceVersion"]
    before = len(server_log(srv))
    stop = threading.Event()

    def write() -> None:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            i = 0
            while not stop.is_set():
                c.post(f"/api/v1/namespaces/{ns}/configmaps",
                       json={"metadata": {"name": f"cm{i}", "labels": {"i": str(i % 2)}}, "data": {"x": "y" * 4000}})
                i += 1

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    base = f"/api/v1/namespaces/{ns}/configmaps?watch=1"
    paths = [base + f"&resourceVersion={first}", base + f"&resourceVersion={first}&labelSelector=i%3D1",
             base + "&resourceVersion=0", base + "&allowWatchBookmarks=true",
             f"/api/v1/configmaps?watch=1&resourceVersion={first}&fieldSelector=metadata.namespace%3D{ns}"] * 2
    try:
        for path in paths:
            s = open_stream(srv, path)
            assert s.recv(1)  # events are flowing
            reset(s)

        def all_noticed() -> bool:
            lines = server_log(srv)[before:]
            ended = [ln for ln in lines if "watch client went away" in ln or "internal error serving" in ln
                     or "Error handling request" in ln]
            return len(ended) >= len(paths)

        wait_for(all_noticed, timeout=30)
    finally:
        stop.set()
        writer.join()
    assert errors_in(server_log(srv)[before:]) == []
    # still serving: a new watch sees a new write
    with http.stream("GET", f"/api/v1/namespaces/{ns}/configmaps",
                     params={"watch": "1", "fieldSelector": "metadata.name=after"}) as resp:
        http.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "after"}}).raise_for_status()
        ev = json.loads(next(resp.iter_lines()))
        assert (ev["type"], ev["object"]["metadata"]["name"]) == ("ADDED", "after")


def test_a_followed_log_client_that_resets_is_not_an_error(srv: ServerProcess, http: httpx.Client, ns: str) -> None:
    before = len(server_log(srv))
    http.post(f"/api/v1/namespaces/{ns}/pods", json={
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "example.com/app:1.36"}]}}).raise_for_status()
    wait_for(lambda: http.get(f"/api/v1/namespaces/{ns}/pods/p").json()["status"].get("phase") == "Running",
             timeout=30)
    s = open_stream(srv, f"/api/v1/namespaces/{ns}/pods/p/log?follow=true")
    assert s.recv(1)  # the first line
    reset(s)
    # the pod changes (the follow wakes and writes to the reset connection), then goes
    http.delete(f"/api/v1/namespaces/{ns}/pods/p", params={"gracePeriodSeconds": "0"}).raise_for_status()
    wait_for(lambda: any("log client went away" in ln or "log client went away before the end" in ln
                         for ln in server_log(srv)[before:]), timeout=30)
    assert errors_in(server_log(srv)[before:]) == []
    assert http.get("/readyz").text == "ok"


def dechunk(raw: bytes) -> bytes:
    out, rest = b"", raw
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return out
        out, rest = out + rest[:size], rest[size + 2:]


def test_followed_logs_of_clients_that_do_not_read_are_complete_and_wedge_nothing(
        srv: ServerProcess, http: httpx.Client, ns: str) -> None:
    """Clients that follow a log and read nothing until the container exits: the server's writes
    wait on the transport (aiohttp drains), other requests are served meanwhile, and each client
    then reads the whole stream, ended by the chunked terminator."""
    http.post(f"/api/v1/namespaces/{ns}/pods", json={
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "short", "annotations": {"sim.minik3s.io/run-seconds": "3",
                                                      "sim.minik3s.io/exit-code": "0"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "example.com/app:1.36"}]}}).raise_for_status()
    wait_for(lambda: http.get(f"/api/v1/namespaces/{ns}/pods/short").json()["status"].get("phase") == "Running",
             timeout=30)
    followers = [open_stream(srv, f"/api/v1/namespaces/{ns}/pods/short/log?follow=true") for _ in range(20)]
    try:
        # while nobody reads, the API answers
        for _ in range(20):
            assert http.get(f"/api/v1/namespaces/{ns}/pods/short").status_code == 200
        wait_for(lambda: http.get(f"/api/v1/namespaces/{ns}/pods/short").json()["status"].get("phase")
                 == "Succeeded", timeout=30)
        for s in followers:
            raw = b""
            while not raw.endswith(b"0\r\n\r\n"):
                chunk = s.recv(7)  # slowly
                assert chunk, f"stream closed before its end: {raw!r}"
                raw += chunk
            lines = dechunk(raw).decode().splitlines()
            assert lines[0].startswith(f"minik3s: simulated container of pod {ns}/short")
            assert lines[1:] == ["minik3s: container c exited with code 0 (Completed)"]
    finally:
        for s in followers:
            s.close()
