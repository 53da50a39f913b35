"""A real request core for the apiserver unit tests: `ApiCore` over an in-memory SqliteStore,
the built-in resource table and a fake clock, with the `default` namespace created."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from apiserver.core import ApiCore
from apiserver.storage.sqlite_store import SqliteStore
from minik3s.api.resources import ResourceRegistry
from minik3s.utils.clock import FakeClock


@pytest.fixture
async def core() -> AsyncIterator[ApiCore]:
    clock = FakeClock()
    store = SqliteStore(":memory:", compact_interval=0, clock=clock)
    await store.start()
    c = ApiCore(store, ResourceRegistry(), clock=clock, rng=random.Random(7))
    namespaces = c.registry.get("", "v1", "namespaces")
    assert namespaces is not None
    await c.create(namespaces, None, {"metadata": {"name": "default"}})
    yield c
    await store.close()
