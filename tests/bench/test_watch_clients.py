"""bench.watch_clients: HTTP watch streams in a child process see every event of a real server,
and the scheduler bench turns their arrival times into lag and silence figures."""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.bench_scheduler import _watch_clients_result
from bench.watch_clients import WatchClients
from minik3s import server
from minik3s.api.resources import NAMESPACES, PODS
from minik3s.config import ServerConfig


def test_result_counts_lag_silence_and_missing_events_of_the_burst_only() -> None:
    submitted = {"10": 1.0, "11": 2.0, "12": 3.0, "9": 0.5}  # "9" before the burst: not counted
    got = {"bytes": 123, "seen": [{"10": 1.01, "11": 2.05, "12": 3.02}, {"10": 1.02, "12": 3.5}]}
    r = _watch_clients_result(got, submitted, 1.0, 3.0)
    assert r["watchers_events"] == 3 and r["watchers_missing_events"] == 1
    assert r["watchers_lag_max_ms"] == 500.0
    assert r["watchers_max_gap_ms"] == round((3.5 - 1.02) * 1000, 1)
    assert r["watchers_bytes"] == 123


async def test_child_watchers_see_each_write_by_its_resource_version() -> None:
    with tempfile.TemporaryDirectory() as d:
        rs = await server.start(ServerConfig(port=0, data_dir=Path(d),
                                             disable={"scheduler", "controllers", "kubelet", "descheduler"}))
        clients = None
        try:
            await rs.client.create(NAMESPACES, {"metadata": {"name": "w"}})
            rv = (await rs.client.list(PODS, "w", limit=1))["metadata"]["resourceVersion"]
            clients = WatchClients(rs.url, "/api/v1/namespaces/w/pods", rv, watchers=5, measured=2,
                                   out=Path(d) / "seen.json")
            await clients.ready()
            written = []
            for i in range(20):
                p = await rs.client.create(PODS, {"metadata": {"name": f"p{i}"},
                                                  "spec": {"containers": [{"name": "c", "image": "x"}]}}, "w")
                written.append(p["metadata"]["resourceVersion"])
            got = clients.stop()  # the child drains what is in flight before it reports
            clients = None
        finally:
            if clients is not None:
                clients.kill()
            await server.stop(rs)
    assert got is not None and len(got["seen"]) == 2
    for seen in got["seen"]:
        assert set(written) <= set(seen)
    assert got["bytes"] > 0
