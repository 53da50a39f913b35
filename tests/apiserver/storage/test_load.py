"""SqliteStore start-up load: a large load is frozen out of the cyclic GC, a small one is not,
and either way every object is served, writable and durable afterwards."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from typing import Any

import pytest

from apiserver.storage import sqlite_store


@pytest.fixture
def unfreeze_after() -> Iterator[None]:
    yield
    gc.unfreeze()  # hand the frozen objects (this test's and anything else's) back to the collector


def pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "pause"}]}}


async def fill(open_store: Any, n: int) -> None:
    store = await open_store()
    await asyncio.gather(*(store.create(f"core/pods/default/p{i:04d}", pod(i)) for i in range(n)),
                         store.create("core/pods/default/last", pod(n)))
    await store.close()


async def test_a_large_load_is_frozen_and_stays_served_and_writable(
    open_store: Any, monkeypatch: pytest.MonkeyPatch, unfreeze_after: None
) -> None:
    await fill(open_store, 300)
    monkeypatch.setattr(sqlite_store, "_FREEZE_MIN_OBJECTS", 200)
    gc.unfreeze()
    store = await open_store()
    # each loaded pod is at least 5 tracked containers (object, metadata, spec, containers list, container)
    assert gc.get_freeze_count() >= 301 * 5
    assert len(store) == 301
    got = store.get("core/pods/default/p0007")
    assert got is not None and got["metadata"]["name"] == "p7"
    items, _ = store.list("core/pods/default/")
    assert [o["metadata"]["name"] for o in items[:2]] == ["p300", "p0"]  # keys "last" < "p0000"
    await store.update("core/pods/default/p0007", {**pod(7), "spec": {"containers": [], "nodeName": "n1"}})
    await store.delete("core/pods/default/p0008")
    await store.close()

    gc.unfreeze()
    store = await open_store()
    assert len(store) == 300
    assert store.get("core/pods/default/p0007")["spec"]["nodeName"] == "n1"  # type: ignore[index]
    assert store.get("core/pods/default/p0008") is None


async def test_a_small_load_is_left_to_the_collector(
    open_store: Any, monkeypatch: pytest.MonkeyPatch, unfreeze_after: None
) -> None:
    await fill(open_store, 300)
    monkeypatch.setattr(sqlite_store, "_FREEZE_MIN_OBJECTS", 1000)
    gc.unfreeze()
    store = await open_store()
    assert gc.get_freeze_count() == 0
    assert len(store) == 301
