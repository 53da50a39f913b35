"""Watch streams over HTTP: replay from a revision, synthetic ADDED, selectors, bookmarks,
timeouts, 410 after compaction, resumption across a restart, and durability across kill -9."""

from __future__ import annotations

import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from minik3s.testing.server import ServerProcess
from minik3s.testing.wait import wait_for


def read_events(client: httpx.Client, path: str, params: dict, *, until: int, timeout: float = 20.0) -> list[dict]:
    """Collect watch events until `until` have arrived (or the server ends the stream)."""
    out: list[dict] = []
    params = {**params, "watch": "true"}
    with client.stream("GET", path, params=params, timeout=httpx.Timeout(timeout)) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if not line.strip():
                continue
            out.append(json.loads(line))
            if len(out) >= until:
                break
    return out


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess):
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


def mkns(http) -> str:
    n = "w-" + uuid.uuid4().hex[:8]
    http.post("/api/v1/namespaces", json={"metadata": {"name": n}}).raise_for_status()
    return n


def cm(name: str, **labels: str) -> dict:
    return {"metadata": {"name": name, "labels": labels}, "data": {}}


def test_watch_from_revision_replays_then_streams_live(http):
    n = mkns(http)
    base = f"/api/v1/namespaces/{n}/configmaps"
    first = http.post(base, json=cm("a")).json()
    rv = first["metadata"]["resourceVersion"]
    http.post(base, json=cm("b")).raise_for_status()
    http.patch(f"{base}/a", content=b'{"data":{"x":"1"}}', headers={"Content-Type": "application/merge-patch+json"})
    http.delete(f"{base}/b")

    # "c" is created only once the three replayed events have been read off the open stream, so
    # its ADDED can only arrive live (a replay could not contain an object that did not exist).
    evs: list[dict] = []
    live_rv = ""
    params = {"watch": "true", "resourceVersion": rv}
    with http.stream("GET", base, params=params, timeout=httpx.Timeout(20.0)) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if not line.strip():
                continue
            evs.append(json.loads(line))
            if len(evs) == 3:
                assert http.get(f"{base}/c").status_code == 404
                live_rv = http.post(base, json=cm("c")).json()["metadata"]["resourceVersion"]
            if len(evs) == 4:
                break
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in evs] == [
        ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b"), ("ADDED", "c")]
    assert evs[3]["object"]["metadata"]["resourceVersion"] == live_rv
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in evs]
    assert rvs == sorted(rvs) and rvs[0] > int(rv)


def test_watch_without_revision_starts_with_synthetic_added(http):
    n = mkns(http)
    base = f"/api/v1/namespaces/{n}/configmaps"
    for name in ("x", "y"):
        http.post(base, json=cm(name)).raise_for_status()
    evs = read_events(http, base, {}, until=2)
    assert sorted((e["type"], e["object"]["metadata"]["name"]) for e in evs) == [("ADDED", "x"), ("ADDED", "y")]
    evs = read_events(http, base, {"resourceVersion": "0"}, until=2)
    assert {e["type"] for e in evs} == {"ADDED"}


def test_watch_selectors_turn_non_matching_into_deleted(http):
    n = mkns(http)
    base = f"/api/v1/namespaces/{n}/configmaps"
    rv = http.post(base, json=cm("m", app="a")).json()["metadata"]["resourceVersion"]
    http.post(base, json=cm("other", app="b")).raise_for_status()
    http.patch(f"{base}/m", content=b'{"metadata":{"labels":{"app":"z"}}}',
               headers={"Content-Type": "application/merge-patch+json"}).raise_for_status()
    http.patch(f"{base}/m", content=b'{"metadata":{"labels":{"app":"a"}}}',
               headers={"Content-Type": "application/merge-patch+json"}).raise_for_status()
    evs = read_events(http, base, {"resourceVersion": str(int(rv) - 1), "labelSelector": "app=a"}, until=3)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in evs] == [
        ("ADDED", "m"), ("DELETED", "m"), ("ADDED", "m")]
    evs = read_events(http, base, {"resourceVersion": str(int(rv) - 1), "fieldSelector": "metadata.name=other"},
                      until=1)
    assert evs[0]["object"]["metadata"]["name"] == "other"


def test_watch_timeout_seconds_closes_the_stream(http):
    n = mkns(http)
    t0 = time.monotonic()
    evs = read_events(http, f"/api/v1/namespaces/{n}/configmaps", {"timeoutSeconds": "1",
                                                                   "resourceVersion": "1"}, until=10_000)
    assert time.monotonic() - t0 < 10
    assert all(e["type"] != "ERROR" for e in evs)


def test_watch_errors_are_status_before_stream(http):
    r = http.get("/api/v1/pods", params={"watch": "true", "fieldSelector": "spec.bogus=1"})
    assert r.status_code == 400 and r.json()["kind"] == "Status"


def test_many_watchers_and_a_slow_one_do_not_block_writes(minik3s_api, http):
    n = mkns(http)
    base = f"/api/v1/namespaces/{n}/configmaps"
    rv = http.get(base).json()["metadata"]["resourceVersion"]
    # a watcher that never reads
    slow = httpx.Client(base_url=minik3s_api.url, timeout=None)
    slow_stream = slow.stream("GET", base, params={"watch": "true", "resourceVersion": rv})
    slow_stream.__enter__()
    results: list[int] = []
    connected = threading.Semaphore(0)

    def watcher():
        with httpx.Client(base_url=minik3s_api.url) as c, c.stream(
                "GET", base, params={"watch": "true", "resourceVersion": rv}, timeout=httpx.Timeout(60)) as r:
            assert r.status_code == 200
            connected.release()  # the watch is registered before the writes start
            n = 0
            for line in r.iter_lines():
                if line.strip():
                    n += 1
                    if n == 50:
                        break
            results.append(n)

    with ThreadPoolExecutor(max_workers=40) as pool:
        futs = [pool.submit(watcher) for _ in range(40)]
        for _ in range(40):
            assert connected.acquire(timeout=60), "watchers did not connect"
        t0 = time.monotonic()
        for i in range(50):
            http.post(base, json={"metadata": {"name": f"c{i}"}, "data": {"blob": "x" * 20000}}).raise_for_status()
        write_time = time.monotonic() - t0
        for f in futs:
            f.result(timeout=60)
    assert results == [50] * 40
    assert write_time < 20
    slow_stream.__exit__(None, None, None)
    slow.close()


def test_410_after_compaction(minik3s_server_factory):
    srv = minik3s_server_factory("--disable", "scheduler", "--disable", "controllers", "--disable", "kubelet",
                                 "--history-window", "100", "--compact-interval", "0.2")
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        first_rv = http.get("/api/v1/namespaces").json()["metadata"]["resourceVersion"]
        for i in range(300):
            http.post("/api/v1/namespaces/default/configmaps", json=cm(f"churn-{i}")).raise_for_status()
        deadline = time.monotonic() + 30
        evs: list[dict] = []
        while time.monotonic() < deadline:
            evs = read_events(http, "/api/v1/namespaces/default/configmaps", {"resourceVersion": first_rv}, until=1)
            if evs and evs[0]["type"] == "ERROR":
                break
            time.sleep(0.3)
        assert evs[0]["type"] == "ERROR", evs[:1]
        st = evs[0]["object"]
        assert st["code"] == 410 and st["reason"] == "Expired"
        assert st["message"].startswith(f"too old resource version: {first_rv} (")


def test_watch_resumes_after_restart_and_kill9_loses_no_acknowledged_write(minik3s_server_factory):
    srv = minik3s_server_factory("--disable", "scheduler", "--disable", "controllers", "--disable", "kubelet")
    url = srv.url
    with httpx.Client(base_url=url, timeout=30) as http:
        rv = http.post("/api/v1/namespaces/default/configmaps", json=cm("before")).json()["metadata"]["resourceVersion"]
    srv.stop()
    srv.start()
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        http.post("/api/v1/namespaces/default/configmaps", json=cm("after-restart")).raise_for_status()
        evs = read_events(http, "/api/v1/namespaces/default/configmaps", {"resourceVersion": rv}, until=1)
        assert evs[0]["type"] == "ADDED" and evs[0]["object"]["metadata"]["name"] == "after-restart"
        assert int(evs[0]["object"]["metadata"]["resourceVersion"]) > int(rv)
    # concurrent writers; every acknowledged create must survive SIGKILL
    acked: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def writer(k: int) -> None:
        with httpx.Client(base_url=srv.url, timeout=10) as c:
            i = 0
            while not stop.is_set():
                name = f"k{k}-{i}"
                try:
                    r = c.post("/api/v1/namespaces/default/configmaps", json=cm(name))
                except httpx.HTTPError:
                    return
                if r.status_code == 201:
                    with lock:
                        acked.append(name)
                i += 1

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    wait_for(lambda: len(acked) >= 400, timeout=60)
    srv.kill()
    stop.set()
    for t in threads:
        t.join()
    srv.start()
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        names = {i["metadata"]["name"] for i in http.get("/api/v1/namespaces/default/configmaps").json()["items"]}
        missing = [a for a in acked if a not in names]
        assert not missing, f"{len(missing)} acknowledged writes lost, e.g. {missing[:5]}"
        rv2 = http.post("/api/v1/namespaces/default/configmaps", json=cm("post-kill")).json()["metadata"]
        assert int(rv2["resourceVersion"]) > int(rv)
