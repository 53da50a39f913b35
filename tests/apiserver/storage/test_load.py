"""SqliteStore start-up load: objects are kept as their committed bytes and decoded on first read
or by `decode_in_background`; a large load's decoded objects are frozen out of the cyclic GC, a
small one's are not; either way every object is served, writable and durable afterwards, and
reads, LISTs and history replays are the same whichever way an object was decoded."""

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
    frozen = gc.get_freeze_count()
    await store.wait_decoded()
    # each decoded pod is at least 3 tracked containers (the object, spec and the containers list;
    # CPython does not track a dict holding only strings, as metadata and the container here do)
    assert gc.get_freeze_count() - frozen >= 301 * 3
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
    await store.wait_decoded()
    assert gc.get_freeze_count() == 0
    assert len(store) == 301



async def test_reads_before_during_and_after_the_background_decoding_agree(open_store: Any) -> None:
    store = await open_store()
    keys = [f"core/pods/default/p{i:04d}" for i in range(1200)]
    for i, key in enumerate(keys):
        await store.create(key, pod(i))
    for key in keys[::3]:
        await store.update(key, {**pod(0), "spec": {"nodeName": "n"}})
    for key in keys[1::7]:
        await store.delete(key)
    want_items, want_rev = store.list("core/pods/")
    want_bytes = {k: store.encoded(k) for k in store.keys("")}
    await store.close()

    store = await open_store()
    assert store.revision == want_rev and len(store) == len(want_bytes)
    # first reads decode on demand: the same objects as before the restart
    assert store.get(keys[0]) == want_items[0] and store.get(keys[1]) is None
    page = [o for _i, (_k, o) in zip(range(10), store.iter_after("core/pods/", keys[100]), strict=False)]
    start = next(i for i, o in enumerate(want_items) if o["metadata"]["resourceVersion"] == page[0]["metadata"][
        "resourceVersion"])
    assert page == want_items[start:start + 10]
    store.decode_in_background()
    items, rev = store.list("core/pods/")  # the decoder has not run yet: LIST decodes what it needs
    assert rev == want_rev and items == want_items
    assert items[start] is page[0]  # decoded once, then the same object
    await store.wait_decoded()
    items2, _ = store.list("core/pods/")
    assert all(a is b for a, b in zip(items, items2, strict=True))
    assert {k: store.encoded(k) for k in store.keys("")} == want_bytes
    # writes on objects decoded either way
    assert store.get(keys[3])["spec"] == {"nodeName": "n"}  # type: ignore[index]
    await store.update(keys[3], pod(3))
    await store.delete(keys[6])
    await store.create(keys[1], pod(1))
    assert len(store) == len(want_bytes) and store.get(keys[3])["spec"] == pod(3)["spec"]  # type: ignore[index]


async def test_a_write_before_the_background_decoding_is_not_undone_by_it(open_store: Any) -> None:
    await fill(open_store, 50)
    store = await open_store()
    await store.update("core/pods/default/p0001", {**pod(1), "spec": {"nodeName": "n1"}})
    await store.delete("core/pods/default/p0002")
    await store.wait_decoded()
    assert store.get("core/pods/default/p0001")["spec"] == {"nodeName": "n1"}  # type: ignore[index]
    assert store.get("core/pods/default/p0002") is None and len(store) == 50
    assert store.keys("core/pods/default/p000") == [f"core/pods/default/p000{i}" for i in (0, 1, 3, 4, 5, 6, 7, 8, 9)]


async def test_a_list_of_a_large_load_decodes_in_frozen_chunks(
    open_store: Any, monkeypatch: pytest.MonkeyPatch, unfreeze_after: None
) -> None:
    """A LIST that reaches objects nothing decoded yet (the background decoding not started)
    decodes them with the collector paused and freezes them, as the background decoding does:
    otherwise the collections after a first full LIST walk every decoded container again."""
    await fill(open_store, 300)
    monkeypatch.setattr(sqlite_store, "_FREEZE_MIN_OBJECTS", 200)
    monkeypatch.setattr(sqlite_store, "_DECODE_CHUNK", 64)
    gc.unfreeze()
    store = await open_store()
    frozen = gc.get_freeze_count()
    page = [o for _i, (_k, o) in zip(range(10), store.iter_after("core/pods/default/"), strict=False)]
    assert [o["metadata"]["name"] for o in page[:2]] == ["p300", "p0"]
    assert 64 * 3 <= gc.get_freeze_count() - frozen < 2 * 64 * 3 + 1000  # one chunk, not the whole load
    items, _ = store.list("core/pods/default/")
    assert len(items) == 301 and items[0] is page[0]
    assert gc.get_freeze_count() - frozen >= 301 * 3
