"""`minik3s server` lifecycle: ready line and kubeconfig, clean SIGTERM with open watches,
restart on the same data dir keeps everything."""

from __future__ import annotations

import signal
import threading
import time

import httpx
import yaml


def test_sigterm_closes_watches_and_exits_cleanly(minik3s_server_factory):
    srv = minik3s_server_factory(nodes=2)
    kc = yaml.safe_load(srv.kubeconfig.read_text())
    assert kc["clusters"][0]["cluster"]["server"] == srv.url
    deadline = time.monotonic() + 10  # the export line follows the ready line on stdout
    while not any(line.startswith("export KUBECONFIG=") for line in srv.stdout_lines):
        assert time.monotonic() < deadline, srv.stdout_lines
        time.sleep(0.05)
    connected = threading.Semaphore(0)
    ended = threading.Semaphore(0)

    def watch() -> None:
        with httpx.Client(base_url=srv.url, timeout=None) as c, \
                c.stream("GET", "/api/v1/pods", params={"watch": "true"}) as r:
            assert r.status_code == 200
            connected.release()
            for _ in r.iter_lines():
                pass
        ended.release()

    threads = [threading.Thread(target=watch, daemon=True) for _ in range(5)]
    for t in threads:
        t.start()
    for _ in threads:
        assert connected.acquire(timeout=10), "a watch did not connect"
    with httpx.Client(base_url=srv.url) as c:
        assert c.get("/readyz").status_code == 200
        c.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "kept"}}).raise_for_status()
    rc = srv.stop(timeout=15, sig=signal.SIGTERM)
    assert rc == 0
    for _ in threads:
        assert ended.acquire(timeout=5), "watch streams were not closed on shutdown"
    assert "Traceback" not in srv.tail_log(400)
    srv.start()
    with httpx.Client(base_url=srv.url) as c:
        assert c.get("/api/v1/namespaces/default/configmaps/kept").status_code == 200


def test_unsafe_no_fsync_is_announced_and_the_default_is_durable(minik3s_server_factory):
    """The flag reaches the store (the store test checks the pragma) and says what it costs; a
    server started without it says nothing of the kind. (This suite's conftest starts its servers
    with the flag; `fsync=True` asks for the default.)"""
    fast = minik3s_server_factory("--disable", "kubelet", fsync=False)
    durable = minik3s_server_factory("--disable", "kubelet", fsync=True, name="durable")
    assert httpx.get(f"{fast.url}/readyz").text == "ok" and httpx.get(f"{durable.url}/readyz").text == "ok"
    warning = "--unsafe-no-fsync: writes are not fsynced; a machine crash can lose acknowledged writes"
    assert warning in fast.tail_log()
    assert "--unsafe-no-fsync" not in durable.tail_log()
