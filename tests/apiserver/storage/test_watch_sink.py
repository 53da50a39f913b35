"""Direct delivery from the broadcaster to an attached WatchSink: one call per watcher per
commit batch, in revision order, and a refused batch falls back to the watcher's own bounded
queue without losing, duplicating or reordering an event."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from apiserver.storage.broadcaster import SinkBatch
from apiserver.storage.interface import WatchOverflowError
from apiserver.storage.sqlite_store import SqliteStore


def obj(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}}


def key(name: str, namespace: str = "ns") -> str:
    return f"core/configmaps/{namespace}/{name}"


@dataclass
class Recorder:
    """A sink that takes batches until `refuse_after` of them were taken."""

    refuse_after: int = 1_000_000
    batches: list[list[int]] = field(default_factory=list)
    refused: list[list[int]] = field(default_factory=list)

    def deliver(self, batch: SinkBatch) -> bool:
        revs = [ev.revision for ev in batch.events]
        if len(self.batches) >= self.refuse_after:
            self.refused.append(revs)
            return False
        self.batches.append(revs)
        return True


async def burst(store: SqliteStore, names: list[str]) -> None:
    await asyncio.gather(*(store.create(key(n), obj(n)) for n in names))


async def test_attach_is_refused_until_the_replay_is_drained(store: SqliteStore) -> None:
    await store.create(key("a"), obj("a"))
    w = store.watch("core/configmaps/ns/", 0)
    sink = Recorder()
    assert not w.attach(sink)  # revision 1 is still to be replayed
    ev = await anext(w)
    assert ev.revision == 1
    assert w.attach(sink)
    await store.create(key("b"), obj("b"))
    assert sink.batches == [[2]]
    assert not w.ready()  # nothing went to the buffer
    w.close()


async def test_a_commit_batch_reaches_the_sink_in_one_call_in_order(store: SqliteStore) -> None:
    w = store.watch("core/configmaps/ns/", 0)
    other = store.watch("core/configmaps/elsewhere/", 0)
    sink, other_sink = Recorder(), Recorder()
    assert w.attach(sink) and other.attach(other_sink)
    await burst(store, [f"c{i}" for i in range(40)])
    delivered = [r for b in sink.batches for r in b]
    assert delivered == list(range(1, 41))
    # concurrent creates commit in groups: fewer calls than events
    assert len(sink.batches) < 40
    assert other_sink.batches == []  # prefix filtering still applies
    w.close()
    other.close()


async def test_a_refused_batch_goes_to_the_queue_in_order_and_the_sink_is_detached(store: SqliteStore) -> None:
    w = store.watch("core/configmaps/ns/", 0)
    sink = Recorder(refuse_after=1)
    assert w.attach(sink)
    await store.create(key("first"), obj("first"))
    await burst(store, [f"d{i}" for i in range(10)])
    await store.create(key("last"), obj("last"))
    assert sink.batches == [[1]]
    assert len(sink.refused) == 1 and sink.refused[0][0] == 2  # refused once, then detached
    assert w.sink is None
    got: list[int] = []
    async with asyncio.timeout(10):
        while len(got) < 11:
            got.append((await anext(w)).revision)
    assert got == list(range(2, 13))
    assert not w.ready()
    # idle again: it may be attached anew and receives only what comes next
    again = Recorder()
    assert w.attach(again)
    await store.create(key("after"), obj("after"))
    assert again.batches == [[13]]
    w.close()


async def test_a_refused_batch_larger_than_the_queue_overflows_the_watch(store: SqliteStore) -> None:
    w = store.watch("core/configmaps/ns/", 0, queue_size=3)
    sink = Recorder(refuse_after=0)
    assert w.attach(sink)
    await burst(store, [f"e{i}" for i in range(20)])
    assert w.overflowed
    with pytest.raises(WatchOverflowError):
        async with asyncio.timeout(10):
            async for _ in w:
                pass
    assert store.watcher_count == 0


async def test_events_at_or_below_the_start_revision_are_not_delivered(store: SqliteStore) -> None:
    w = store.watch("core/configmaps/ns/", 5)  # from a revision the store has not reached
    sink = Recorder()
    assert w.attach(sink)
    await burst(store, [f"f{i}" for i in range(8)])
    assert [r for b in sink.batches for r in b] == [6, 7, 8]
    w.close()


async def test_close_detaches_the_sink(store: SqliteStore) -> None:
    w = store.watch("core/configmaps/ns/", 0)
    sink = Recorder()
    assert w.attach(sink)
    w.close()
    assert w.sink is None
    await store.create(key("g"), obj("g"))
    assert sink.batches == []


class Broken:
    """A sink with a bug: every delivery raises."""

    def deliver(self, batch: SinkBatch) -> bool:
        raise RuntimeError("sink bug")


async def test_a_sink_that_raises_costs_nobody_an_event(store: SqliteStore) -> None:
    """The writes commit and answer; the broken sink's watcher gets the events through its own
    queue; another watcher of the same prefix, attached after it, gets them through its sink."""
    w = store.watch("core/configmaps/ns/", 0)
    other = store.watch("core/configmaps/ns/", 0)
    good = Recorder()
    assert w.attach(Broken()) and other.attach(good)
    created = await store.create(key("a"), obj("a"))
    assert created["metadata"]["resourceVersion"] == "1"
    assert good.batches == [[1]]
    assert w.sink is None
    assert (await anext(w)).revision == 1
    await store.create(key("b"), obj("b"))
    assert good.batches == [[1], [2]]
    assert (await anext(w)).revision == 2
    w.close()
    other.close()


async def test_a_watcher_whose_delivery_raises_is_closed_and_the_others_get_the_batch(
        store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from apiserver.storage.broadcaster import StoreWatcher

    w = store.watch("core/configmaps/ns/", 0)
    other = store.watch("core/configmaps/ns/", 0)
    sink = Recorder()
    assert other.attach(sink)
    real_push = StoreWatcher.push

    def push(self: StoreWatcher, ev: Any) -> bool:
        if self is w:
            raise RuntimeError("push bug")
        return real_push(self, ev)

    monkeypatch.setattr(StoreWatcher, "push", push)
    await store.create(key("a"), obj("a"))
    assert sink.batches == [[1]]
    assert w.closed
    with pytest.raises(StopAsyncIteration):
        await anext(w)
    other.close()
