"""Fixtures for the SQLite store tests: a started store on a temp file, and a pod-ish object."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from apiserver.storage.sqlite_store import SqliteStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "state.db"


@pytest.fixture
async def open_store(db_path: Path) -> AsyncIterator[Callable[..., Awaitable[SqliteStore]]]:
    """Factory: `await open_store(**kwargs)` starts a store on the test's database file; all
    stores it opened are closed at teardown (closing twice is harmless)."""
    opened: list[SqliteStore] = []

    async def _open(**kwargs: Any) -> SqliteStore:
        kwargs.setdefault("compact_interval", 0)
        s = SqliteStore(kwargs.pop("path", db_path), **kwargs)
        await s.start()
        opened.append(s)
        return s

    yield _open
    for s in opened:
        await s.close()


@pytest.fixture
async def store(open_store: Callable[..., Awaitable[SqliteStore]]) -> SqliteStore:
    return await open_store()
