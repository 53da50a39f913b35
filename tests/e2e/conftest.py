"""Fixtures shared by the end-to-end modules that drive the module-scoped full cluster
(`minik3s_cluster`: every component, 6 simulated nodes, in-process through the registered plugin's
`cluster_fixture`, handed over with every node Ready). Modules that talk to another server
define their own `http` fixture, which takes precedence.

`kubectl_bin` is the real kubectl 1.33 (`scripts/fetch-kubectl`, cached at .cache/kubectl/kubectl).
If it cannot be obtained, every test using it FAILS with the reason; only an explicit
`MINIK3S_SKIP_KUBECTL_TESTS=1` turns that into a skip (CI never sets it)."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from minik3s.embed import Cluster
from minik3s.pytest_plugin import cluster_fixture

ROOT = Path(__file__).resolve().parents[2]
KUBECTL = ROOT / ".cache" / "kubectl" / "kubectl"
SKIP_KUBECTL_ENV = "MINIK3S_SKIP_KUBECTL_TESTS"


def kubectl_problem() -> str | None:
    """None when kubectl is usable (fetching it first if needed), else the reason it is not."""
    if not KUBECTL.is_file():
        try:
            r = subprocess.run(["bash", str(ROOT / "scripts" / "fetch-kubectl")], capture_output=True,
                               text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"scripts/fetch-kubectl failed: {e}"
        if r.returncode != 0 or not KUBECTL.is_file():
            return f"kubectl not available (scripts/fetch-kubectl rc={r.returncode}: {r.stderr.strip()[-300:]})"
    try:
        r = subprocess.run([str(KUBECTL), "version", "--client"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{KUBECTL} does not run: {e}"
    if r.returncode != 0:
        return f"{KUBECTL} does not run: {r.stderr.strip()[-300:]}"
    return None


@pytest.fixture(scope="session")
def kubectl_bin() -> Path:
    """The kubectl binary; a missing one fails the test unless MINIK3S_SKIP_KUBECTL_TESTS=1."""
    problem = kubectl_problem()
    if problem is None:
        return KUBECTL
    if os.environ.get(SKIP_KUBECTL_ENV) == "1":
        pytest.skip(f"{problem} ({SKIP_KUBECTL_ENV}=1)")
    pytest.fail(f"{problem}. Run scripts/fetch-kubectl, or set {SKIP_KUBECTL_ENV}=1 to skip the kubectl tests.",
                pytrace=False)


# one cluster per module, for speed (a fresh one per test is the plugin's default)
minik3s_cluster = cluster_fixture(scope="module", name="minik3s_cluster", nodes=6, node_monitor_grace_period=8)


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
