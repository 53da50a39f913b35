"""The watch handler's direct path over a real loopback connection: a commit batch larger than
the send bound still goes to a client that keeps up as one chunk, straight from the store's
publish (no event left for the handler's per-event path); a client that leaves more than the
bound unread gets its next batch through the watcher's bounded queue instead, in order."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from apiserver.handlers.watch import DirectSink
from apiserver.storage.sqlite_store import SqliteStore

LIMIT = 4096


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "ns"}, "data": {"k": "x" * 200}}


class Peer:
    """The client's end: collects what arrives; `pause()` stops reading (a stuck client)."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.arrived = asyncio.Event()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.connected = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.connected.set()
        while chunk := await reader.read(65536):
            self.data += chunk
            self.arrived.set()

    def pause(self) -> None:
        assert self.writer is not None
        self.writer.transport.pause_reading()  # type: ignore[attr-defined]

    def events(self) -> list[dict[str, Any]]:
        """The chunked body's watch lines, decoded."""
        out, buf = [], bytes(self.data)
        while buf:
            size, _, rest = buf.partition(b"\r\n")
            n = int(size, 16)
            out.extend(orjson.loads(line) for line in rest[:n].splitlines() if line)
            buf = rest[n + 2:]
        return out


@pytest.fixture
async def store() -> AsyncIterator[SqliteStore]:
    s = SqliteStore(":memory:", compact_interval=0)
    await s.start()
    yield s
    await s.close()


@dataclass
class Link:
    """A loopback connection: `transport` is the watch's end, `peer` the client's."""

    peer: Peer
    transport: asyncio.Transport


@pytest.fixture
async def link() -> AsyncIterator[Link]:
    peer = Peer()
    server = await asyncio.start_server(peer.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport, _ = await asyncio.get_running_loop().create_connection(asyncio.Protocol, "127.0.0.1", port)
    await peer.connected.wait()
    yield Link(peer, transport)
    transport.abort()
    server.close()
    await server.wait_closed()


async def burst(store: SqliteStore, first: int, n: int) -> None:
    await asyncio.gather(*(store.create(f"core/configmaps/ns/c{i:04d}", configmap(f"c{i:04d}"))
                           for i in range(first, first + n)))


async def wait_for(predicate: Any, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


async def test_a_batch_over_the_send_bound_goes_out_whole_to_a_client_that_keeps_up(store: SqliteStore,
                                                                                  link: Link) -> None:
    w = store.watch("core/configmaps/ns/", 0)
    sink = DirectSink(link.transport, {}, "v1", LIMIT)
    assert w.attach(sink)
    await burst(store, 0, 40)  # one group commit, ~10 KiB encoded: over the 4 KiB bound
    assert w.sink is sink and not w.ready()  # taken by the sink, nothing left for the handler
    await wait_for(lambda: len(link.peer.events()) == 40)
    names = [ev["object"]["metadata"]["name"] for ev in link.peer.events()]
    assert names == [f"c{i:04d}" for i in range(40)]
    assert all(ev["type"] == "ADDED" for ev in link.peer.events())
    w.close()


async def test_a_client_with_more_than_the_bound_unread_gets_the_next_batch_through_the_queue(
        store: SqliteStore, link: Link) -> None:
    w = store.watch("core/configmaps/ns/", 0)
    sink = DirectSink(link.transport, {}, "v1", LIMIT)
    assert w.attach(sink)
    link.peer.pause()
    first = 0
    while link.transport.get_write_buffer_size() < LIMIT:  # the kernel's buffers fill first
        await burst(store, first, 40)
        assert w.sink is sink and not w.ready()
        first += 40
    await burst(store, first, 3)
    assert w.sink is None  # refused: detached, the handler's path takes over
    queued = [(await anext(w)).object["metadata"]["name"] for _ in range(3)]
    assert queued == [f"c{i:04d}" for i in range(first, first + 3)]
    w.close()


async def test_a_closing_connection_refuses_the_batch(store: SqliteStore, link: Link) -> None:
    w = store.watch("core/configmaps/ns/", 0)
    assert w.attach(DirectSink(link.transport, {}, "v1", LIMIT))
    link.transport.close()
    await burst(store, 0, 2)
    assert w.sink is None
    assert [(await anext(w)).revision for _ in range(2)] == [1, 2]
    w.close()
