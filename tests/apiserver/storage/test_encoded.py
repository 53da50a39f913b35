"""SqliteStore.encoded: each current object's committed JSON, equal to orjson's encoding of
what `get` returns, through creates, updates (in one batch too), deletes, a failed write and a
restart; update and delete undo images stay the previous state's bytes."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from apiserver.storage.sqlite_store import SqliteStore


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"note": "é ü", **spec}}


def key(name: str) -> str:
    return f"core/pods/default/{name}"


def assert_consistent(store: SqliteStore) -> None:
    for k in store.keys(""):
        assert store.encoded(k) == orjson.dumps(store.get(k)), k


async def test_encoded_follows_every_write_and_a_restart(open_store: Any) -> None:
    store = await open_store(history_window=1000)
    await store.create(key("a"), pod("a"))
    await store.create(key("b"), pod("b"))
    assert store.encoded(key("a")) == orjson.dumps(store.get(key("a")))
    assert b'"resourceVersion":"1"' in (store.encoded(key("a")) or b"")
    # an update and a second update of the same key in one batch; a delete; a create of a new key
    await asyncio.gather(store.update(key("a"), pod("a", v=2)), store.update(key("a"), pod("a", v=3)),
                         store.delete(key("b")), store.create(key("c"), pod("c")))
    assert orjson.loads(store.encoded(key("a")) or b"")["spec"]["v"] == 3
    assert store.encoded(key("b")) is None
    assert_consistent(store)
    # an unencodable update fails alone and leaves the committed bytes as they were
    before = store.encoded(key("c"))
    bad = pod("c", v={1, 2})
    results = await asyncio.gather(store.update(key("c"), bad), return_exceptions=True)
    assert isinstance(results[0], Exception)
    assert store.encoded(key("c")) == before
    await store.close()

    store = await open_store(history_window=1000)
    assert_consistent(store)
    assert sorted(store.keys("")) == [key("a"), key("c")]
    # the history rebuilt from the undo images: a's two updates and b's delete carry the right prev
    w = store.watch("core/pods/", 2)
    events = [await w.__anext__() for _ in range(4)]
    w.close()
    by_rev = {e.revision: e for e in events}
    assert by_rev[3].prev is not None and "v" not in by_rev[3].prev["spec"]
    assert by_rev[4].prev is not None and by_rev[4].prev["spec"]["v"] == 2
    assert by_rev[5].type == "DELETED" and by_rev[5].prev is not None and by_rev[5].prev["metadata"]["name"] == "b"
