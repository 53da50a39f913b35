"""The writer's commit path: one SQL statement per batch, no checkpoint inside a commit.

Why these matter to users: a watcher hears of a write only after its batch committed. Python's
sqlite3 re-takes the GIL after every statement step, and while the event loop is busy each re-take
can wait a long time, so a batch written as hundreds of steps (executemany) held every watcher for
seconds during a scheduling burst; and SQLite's automatic checkpoint ran inside the COMMIT that
crossed the WAL threshold. These tests pin the shape that removed both stalls and check that the
state written that way is exactly what a restart reads back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiosqlite

from apiserver.storage.sqlite_store import SqliteStore


def key(name: str) -> str:
    return f"core/configmaps/default/{name}"


def cm(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": dict(data)}


async def until(cond: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def traced_statements(store: SqliteStore) -> list[str]:
    """Start recording the top-level SQL statements the writer's own connection runs."""
    seen: list[str] = []

    async def job(db: aiosqlite.Connection) -> None:
        def trace(sql: str) -> None:
            # sqlite3 reports each statement a trigger runs with its parent's (expanded) text:
            # consecutive repeats are one top-level statement
            if not seen or seen[-1] != sql:
                seen.append(sql)

        await db.set_trace_callback(trace)

    await store._call(job)  # noqa: SLF001 - per-connection state of the connection that commits
    return seen


async def test_a_burst_of_writes_commits_as_one_statement(
        open_store: Callable[..., Awaitable[SqliteStore]]) -> None:
    store = await open_store()
    seen = await traced_statements(store)
    batches = store.stats.batches
    created = await asyncio.gather(*(store.create(key(f"c{i}"), cm(f"c{i}", v=str(i))) for i in range(300)))
    assert store.stats.batches == batches + 1, "300 concurrent creates are one group commit"
    assert len(seen) == 1 and seen[0].startswith("INSERT INTO batch"), seen[:5]
    assert [c["metadata"]["resourceVersion"] for c in created] == [str(r) for r in range(1, 301)]


async def test_a_batch_split_over_several_statements_is_one_transaction_and_reloads_identically(
        open_store: Callable[..., Awaitable[SqliteStore]]) -> None:
    store = await open_store()
    store._rows_per_statement = 4  # noqa: SLF001 - force the multi-statement path with few rows
    seen = await traced_statements(store)
    await store.create(key("keep"), cm("keep", v="0"))
    old = store.get(key("keep"))
    assert old is not None
    # queued together, so they land in one batch: several writes to the same keys in order
    ops = [
        store.create(key("a"), cm("a", v="1")),
        store.update(key("keep"), cm("keep", v="1")),
        store.update(key("a"), cm("a", v="2")),
        store.delete(key("keep")),
        store.create(key("keep"), cm("keep", v="again")),
        store.create(key("b"), cm("b", v="1")),
        store.delete(key("b")),
        store.create(key("c"), cm("c", v="1")),
        store.update(key("c"), cm("c", v="2")),
        store.update(key("c"), cm("c", v="3")),
    ]
    seen.clear()
    await asyncio.gather(*ops)
    assert seen[0] == "BEGIN IMMEDIATE" and seen[-1] == "COMMIT", seen
    assert sum(s.startswith("INSERT INTO batch") for s in seen) == 3  # 10 rows, 4 per statement
    state = {k: store.get(key(k)) for k in ("a", "b", "c", "keep")}
    assert state["b"] is None
    assert state["a"] is not None and state["a"]["data"] == {"v": "2"}
    assert state["c"] is not None and state["c"]["data"] == {"v": "3"}
    assert state["keep"] is not None and state["keep"]["data"] == {"v": "again"}
    final = store.revision
    assert final == 11
    w = store.watch("", 0, queue_size=100)
    before = [await w.__anext__() for _ in range(final)]
    await store.close()

    again = await open_store()
    assert again.revision == final
    assert {k: again.get(key(k)) for k in state} == state
    w = again.watch("", 0, queue_size=100)
    after = [await w.__anext__() for _ in range(final)]
    assert [(e.type, e.key, e.revision, e.object, e.prev) for e in after] == [
        (e.type, e.key, e.revision, e.object, e.prev) for e in before
    ]


async def test_commits_leave_checkpoints_to_the_background_checkpointer(
        open_store: Callable[..., Awaitable[SqliteStore]], db_path: Path) -> None:
    store = await open_store()

    async def autocheckpoint(db: aiosqlite.Connection) -> int:
        async with db.execute("PRAGMA wal_autocheckpoint") as cur:
            row = await cur.fetchone()
        assert row is not None
        return int(row[0])

    assert await store._call(autocheckpoint) == 0  # noqa: SLF001 - no checkpoint inside a COMMIT
    wal = db_path.with_name(db_path.name + "-wal")
    blob = "x" * 50_000
    sizes = []
    # 8 rounds of 10 MB (80 MB in all); SQLite alone, with autocheckpoint off, would keep every
    # frame in the WAL. Every 2 rounds pass the checkpointer's threshold (1,000 16-KiB pages);
    # it copies the frames into the database file between commits, so the WAL restarts from its
    # beginning and stays a fraction of what was written.
    before = store.stats.checkpoints
    for rnd in range(8):
        await asyncio.gather(*(store.create(key(f"r{rnd}-{i}"), cm(f"r{rnd}-{i}", blob=blob))
                               for i in range(200)))
        if rnd % 2 == 1:
            await until(lambda b=before: store.stats.checkpoints > b)
            before = store.stats.checkpoints
        sizes.append(wal.stat().st_size)
    assert store.stats.checkpoints >= 4
    assert store.stats.forced_checkpoints == 0
    assert max(sizes) < 40 << 20, sizes
    assert len(store) == 8 * 200


async def test_memory_store_runs_without_a_checkpointer(
        open_store: Callable[..., Awaitable[SqliteStore]]) -> None:
    store = await open_store(path=":memory:")
    await asyncio.gather(*(store.create(key(f"m{i}"), cm(f"m{i}", blob="y" * 50_000)) for i in range(400)))
    assert store.stats.checkpoints == 0
    assert len(store) == 400


async def test_an_idle_loop_does_not_spin_while_a_commit_is_in_sqlites_thread(
        open_store: Callable[..., Awaitable[SqliteStore]]) -> None:
    """A commit that takes long in SQLite's thread (here: a statement made to last 0.4 s) must
    leave the idle event loop asleep in its poll. A loop that spins meanwhile holds the GIL the
    commit's thread needs after every step: two overlapping HTTP creates on an idle server then
    took ~100-200 ms each instead of ~2 ms."""
    store = await open_store()
    slow = 0.4

    async def job(db: aiosqlite.Connection) -> None:
        def trace(sql: str) -> None:
            if sql.startswith("INSERT INTO batch"):
                time.sleep(slow)  # releases the GIL, as SQLite's own work does

        await db.set_trace_callback(trace)

    await store._call(job)  # noqa: SLF001 - per-connection state of the connection that commits
    cpu0, wall0 = time.thread_time(), time.monotonic()
    await store.create(key("slow"), cm("slow"))
    cpu, wall = time.thread_time() - cpu0, time.monotonic() - wall0
    assert wall >= slow
    # the loop's own thread worked a little (encoding, the GIL hand-over timers every 1 ms once the
    # commit is 100 ms old), not the whole wait (a spinning loop: more CPU than the commit's length)
    assert cpu < 0.5 * wall, f"the event loop's thread used {cpu * 1000:.0f} ms of CPU in a {wall * 1000:.0f} ms commit"
