"""The durability settings a real store's writer connection runs with.

test_durability.py kills a writer with SIGKILL and checks that acknowledged writes survive, but a
process kill cannot tell `synchronous=FULL` from `OFF` (the OS still flushes the page cache), so
that test would pass with durability switched off. This one asks SQLite, on the very connection
the single writer commits through, what is in effect: WAL journal and synchronous=FULL (2), as
etcd fsyncs before acknowledging. A reopened store keeps them (journal_mode is persistent in the
file; synchronous is per connection, so the reopen must set it again).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiosqlite

from apiserver.storage.sqlite_store import SqliteStore

SYNCHRONOUS_FULL = 2


async def writer_pragmas(store: SqliteStore) -> tuple[str, int]:
    """(journal_mode, synchronous) as seen by the writer task's own connection."""

    async def job(db: aiosqlite.Connection) -> tuple[str, int]:
        async with db.execute("PRAGMA journal_mode") as cur:
            journal = await cur.fetchone()
        async with db.execute("PRAGMA synchronous") as cur:
            sync = await cur.fetchone()
        assert journal is not None and sync is not None
        return str(journal[0]).lower(), int(sync[0])

    # The store runs maintenance jobs on the writer's connection between batches; this is the
    # only way to see per-connection settings of the connection that commits.
    result: tuple[str, int] = await store._call(job)  # noqa: SLF001
    return result


async def test_writer_commits_with_wal_and_synchronous_full(
        open_store: Callable[..., Awaitable[SqliteStore]], db_path: Path) -> None:
    store = await open_store()
    await store.create("core/configmaps/default/a", {"metadata": {"name": "a"}})
    assert await writer_pragmas(store) == ("wal", SYNCHRONOUS_FULL)
    assert db_path.with_name(db_path.name + "-wal").exists(), "a WAL file is written next to the database"


async def test_reopened_store_sets_synchronous_full_again(
        open_store: Callable[..., Awaitable[SqliteStore]], db_path: Path) -> None:
    first = await open_store()
    await first.create("core/configmaps/default/a", {"metadata": {"name": "a"}})
    await first.close()
    with sqlite3.connect(db_path) as raw:  # journal_mode=WAL is recorded in the file itself
        assert raw.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
    second = await open_store()
    assert await writer_pragmas(second) == ("wal", SYNCHRONOUS_FULL)
    assert second.get("core/configmaps/default/a") is not None


async def test_fsync_false_commits_with_synchronous_off_and_the_default_stays_full(
        open_store: Callable[..., Awaitable[SqliteStore]], db_path: Path) -> None:
    """`minik3s server --unsafe-no-fsync` (etcd's flag; the test suite's throwaway clusters use
    it) opens the store with fsync=False: still WAL, commits with synchronous=OFF (0). The same
    file reopened without it is back to FULL: the setting belongs to the process, not the file."""
    fast = await open_store(fsync=False)
    await fast.create("core/configmaps/default/a", {"metadata": {"name": "a"}})
    assert await writer_pragmas(fast) == ("wal", 0)
    await fast.close()
    durable = await open_store()
    assert await writer_pragmas(durable) == ("wal", SYNCHRONOUS_FULL)
    assert durable.get("core/configmaps/default/a") is not None
