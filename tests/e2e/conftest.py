"""Fixtures shared by the end-to-end modules that drive the module-scoped full cluster
(`minik3s_cluster`: every component, 6 simulated nodes, in-process through the registered plugin's
`cluster_fixture`, handed over with every node Ready). Modules that talk to another server
define their own `http` fixture, which takes precedence.

`kubectl_bin` (the real kubectl 1.33, failing rather than skipping when it cannot be obtained)
lives in the root `tests/conftest.py`, so tests outside e2e use it too."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from minik3s.embed import Cluster
from minik3s.pytest_plugin import cluster_fixture

# one cluster per module, for speed (a fresh one per test is the plugin's default)
minik3s_cluster = cluster_fixture(scope="module", name="minik3s_cluster", nodes=6, node_monitor_grace_period=8,
                                  node_monitor_period=1)


@pytest.fixture(scope="module")
def http(minik3s_cluster: Cluster) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=minik3s_cluster.url, timeout=30) as c:
        yield c


@pytest.fixture
def ns(http: httpx.Client, request: pytest.FixtureRequest) -> str:
    """A fresh namespace, named after the test module (e.g. `jobs-1a2b3c4d`)."""
    prefix = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").replace("_", "-")[:20]
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    return name
