"""The client layer: both transports behave the same; informers list, watch, index, resume
and relist after a 410."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from minik3s import server
from minik3s.api.errors import AlreadyExistsError, ConflictError, InvalidError, NotFoundError
from minik3s.api.resources import CONFIGMAPS, PODS
from minik3s.client.informer import Informer
from minik3s.client.rest import HttpClient
from minik3s.config import ServerConfig


@pytest.fixture
async def running(tmp_path: Path):
    cfg = ServerConfig(port=0, data_dir=tmp_path, history_window=100, compact_interval=3600,
                       disable={"scheduler", "controllers", "kubelet", "descheduler"})
    rs = await server.start(cfg)
    http = HttpClient(rs.url)
    try:
        yield rs, http
    finally:
        await http.close()
        await server.stop(rs)


async def wait_until(pred, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not pred():
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("transport", ["local", "http"])
async def test_transports_raise_the_same_errors(running, transport):
    rs, http = running
    c = rs.client if transport == "local" else http
    cm = {"metadata": {"name": f"cm-{transport}"}, "data": {"a": "1"}}
    created = await c.create(CONFIGMAPS, cm, "default")
    assert created["metadata"]["resourceVersion"]
    with pytest.raises(AlreadyExistsError) as e:
        await c.create(CONFIGMAPS, cm, "default")
    assert e.value.message == f'configmaps "cm-{transport}" already exists'
    with pytest.raises(NotFoundError):
        await c.get(CONFIGMAPS, "missing", "default")
    stale = dict(created, data={"a": "2"})
    await c.update(CONFIGMAPS, stale)
    with pytest.raises(ConflictError):
        await c.update(CONFIGMAPS, dict(created, data={"a": "3"}))
    bad = {"metadata": {"name": "bad"}, "spec": {"containers": []}}
    with pytest.raises(InvalidError) as e:
        await c.create(PODS, bad, "default")
    assert e.value.causes[0]["field"] == "spec.containers"
    patched = await c.patch(CONFIGMAPS, f"cm-{transport}", {"data": {"b": "2"}}, "default")
    assert patched["data"] == {"a": "2", "b": "2"}


@pytest.mark.parametrize("transport", ["local", "http"])
async def test_informer_lists_watches_indexes_and_relists_after_410(running, transport):
    rs, http = running
    c = rs.client if transport == "local" else http
    await c.create(CONFIGMAPS, {"metadata": {"name": "pre", "labels": {"g": "a"}}}, "default")
    inf = Informer(c, CONFIGMAPS, "default")
    inf.add_index("by-g", lambda o: [(o["metadata"].get("labels") or {}).get("g", "")])
    seen: list[tuple[str, str]] = []
    inf.add_handler(on_add=lambda o: seen.append(("add", o["metadata"]["name"])),
                    on_update=lambda old, new: seen.append(("update", new["metadata"]["name"])),
                    on_delete=lambda o: seen.append(("delete", o["metadata"]["name"])))
    task = asyncio.create_task(inf.run())
    try:
        await asyncio.wait_for(inf.wait_for_sync(), 10)
        assert ("add", "pre") in seen
        await c.create(CONFIGMAPS, {"metadata": {"name": "live", "labels": {"g": "b"}}}, "default")
        await c.patch(CONFIGMAPS, "pre", {"data": {"x": "1"}}, "default")
        await c.delete(CONFIGMAPS, "live", "default")
        await wait_until(lambda: ("delete", "live") in seen)
        assert seen.index(("add", "live")) < seen.index(("delete", "live"))
        assert ("update", "pre") in seen
        assert [o["metadata"]["name"] for o in inf.by_index("by-g", "a")] == ["pre"]
        assert inf.store.get("default/live") is None
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


class StreamBreaker:
    """Wraps the HTTP client: counts lists, and can cut every open watch stream (as a server
    restart or a watch timeout does)."""

    shares_items = False  # as the wrapped HTTP transport

    def __init__(self, client: HttpClient) -> None:
        self.client = client
        self.lists = 0
        self.streams: list = []

    async def list(self, *a, **k):
        self.lists += 1
        return await self.client.list(*a, **k)

    def watch(self, *a, **k):
        s = self.client.watch(*a, **k)
        self.streams.append(s)
        return s

    async def cut(self) -> None:
        for s in self.streams:
            await s.close()


async def test_informer_resumes_a_cut_watch_and_relists_after_410(running):
    rs, http = running
    proxy = StreamBreaker(http)
    await rs.client.create(CONFIGMAPS, {"metadata": {"name": "pre"}}, "default")
    inf = Informer(proxy, CONFIGMAPS, "default")
    deleted: list[str] = []
    inf.add_handler(on_delete=lambda o: deleted.append(o["metadata"]["name"]))
    task = asyncio.create_task(inf.run())
    try:
        await asyncio.wait_for(inf.wait_for_sync(), 10)
        assert proxy.lists == 1
        # a cut stream inside the retained history resumes from the last resourceVersion: no relist
        await proxy.cut()
        await rs.client.create(CONFIGMAPS, {"metadata": {"name": "during-cut"}}, "default")
        await wait_until(lambda: inf.store.get("default/during-cut") is not None)
        assert proxy.lists == 1
        # move the history floor past the informer's resourceVersion (writes elsewhere, compaction),
        # change things it cares about, then cut: the resume gets 410 and it relists
        for i in range(300):
            await rs.client.create(CONFIGMAPS, {"metadata": {"name": f"churn-{i}"}}, "kube-system")
        await proxy.cut()
        await rs.store.compact()
        await rs.client.delete(CONFIGMAPS, "pre", "default")
        await rs.client.create(CONFIGMAPS, {"metadata": {"name": "after"}}, "default")
        await wait_until(lambda: inf.store.get("default/after") is not None and inf.store.get("default/pre") is None)
        assert "pre" in deleted
        assert proxy.lists >= 2
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_a_large_initial_list_lets_the_loop_run_before_it_is_synced(running):
    from minik3s.client.informer import YIELD_EVERY

    rs, _http = running
    n = YIELD_EVERY * 3 + 5
    await asyncio.gather(*(rs.client.create(CONFIGMAPS, {"metadata": {"name": f"big-{i:04d}"}}, "default")
                           for i in range(n)))
    inf = Informer(rs.client, CONFIGMAPS, "default")
    added: list[str] = []
    inf.add_handler(on_add=lambda o: added.append(o["metadata"]["name"]))
    seen_while_listing: list[int] = []

    async def probe() -> None:
        # runs whenever the loop is free; records how far the informer's initial list had got
        while not inf.has_synced:
            seen_while_listing.append(len(added))
            await asyncio.sleep(0)

    task = asyncio.create_task(inf.run())
    try:
        await asyncio.wait_for(probe(), 10)
        await inf.wait_for_sync()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert sorted(added) == [f"big-{i:04d}" for i in range(n)]
    # the loop ran between slices of the list: the probe saw it partly applied, more than once
    partial = sorted({c for c in seen_while_listing if 0 < c < n})
    assert len(partial) >= 3, seen_while_listing
