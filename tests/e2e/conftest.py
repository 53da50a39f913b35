"""Fixtures shared by the end-to-end modules that drive the module-scoped full cluster
(`minik3s_cluster`: every component, 6 simulated nodes). Modules that talk to another server
define their own `http` fixture, which takes precedence.

`kubectl_bin` (the real kubectl 1.33, failing rather than skipping when it cannot be obtained)
lives in the root `tests/conftest.py`, so tests outside e2e use it too."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from minik3s.testing.server import ServerProcess
from minik3s.testing.wait import wait_for


@pytest.fixture(scope="module")
def http(minik3s_cluster: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=minik3s_cluster.url, timeout=30) as c:
        wait_for(lambda: len(c.get("/api/v1/nodes").json()["items"]) == 6)
        yield c


@pytest.fixture
def ns(http: httpx.Client, request: pytest.FixtureRequest) -> str:
    """A fresh namespace, named after the test module (e.g. `jobs-1a2b3c4d`)."""
    prefix = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").replace("_", "-")[:20]
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    return name
