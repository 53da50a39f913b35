"""Watch bookmarks from the request core: sent only when allowed, after an idle interval, with
the current resourceVersion; events are delivered without waiting for the interval."""

from __future__ import annotations

import asyncio

from apiserver.core import ApiCore
from apiserver.storage.sqlite_store import SqliteStore
from minik3s.api.options import WatchOptions
from minik3s.api.resources import ResourceRegistry


async def test_bookmarks_only_when_allowed_and_idle() -> None:
    store = SqliteStore(":memory:", compact_interval=0)
    await store.start()
    core = ApiCore(store, ResourceRegistry())
    core.bookmark_interval = 0.2
    info = core.registry.get("", "v1", "configmaps")
    assert info is not None
    try:
        await store.create("core/namespaces//default", {"metadata": {"name": "default"}})
        got: list[tuple[str, str]] = []

        async def consume(allow: bool, n: int) -> None:
            async for etype, obj in core.watch(info, "default", WatchOptions(resource_version=str(store.revision),
                                                                             allow_bookmarks=allow)):
                got.append((etype, obj["metadata"].get("name") or obj["metadata"]["resourceVersion"]))
                if len(got) >= n:
                    return

        task = asyncio.create_task(consume(True, 3))
        await asyncio.sleep(0.05)
        await core.create(info, "default", {"metadata": {"name": "a"}})
        await asyncio.wait_for(task, 5)
        assert got[0] == ("ADDED", "a")  # delivered at once, not after the interval
        assert [t for t, _ in got[1:]] == ["BOOKMARK", "BOOKMARK"]
        assert got[1][1] == str(store.revision)
        got.clear()
        task = asyncio.create_task(consume(False, 1))
        await asyncio.sleep(0.5)
        assert got == []  # no bookmarks unless asked for
        await core.create(info, "default", {"metadata": {"name": "b"}})
        await asyncio.wait_for(task, 5)
        assert got == [("ADDED", "b")]
    finally:
        await store.close()
