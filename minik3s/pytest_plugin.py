"""pytest plugin (layer L5, over the embedding API `minik3s.embed.Cluster`), registered through
the `pytest11` entry point `minik3s`: installing minik3s makes the fixtures available, and nothing
starts until a test asks for one.

Fixtures:
- `minik3s_cluster`: a fresh cluster per test (3 nodes; `@pytest.mark.minik3s(...)` or indirect
  parametrization passes `Cluster` keyword arguments: nodes, zones, simulated_time, tls,
  scheduler_config, descheduler_policy, node_monitor_grace_period, node_monitor_period, disable, ...).
- `minik3s_session_cluster`: one cluster for the whole session (`--minik3s-nodes`, default 3);
  pair it with `minik3s_namespace` for isolation.
- `minik3s_namespace`: a fresh namespace per test, deleted afterwards (on the test's own
  `minik3s_cluster` when it uses one, else on the session cluster).
- `kubeconfig`: the kubeconfig path of that cluster; exported as `KUBECONFIG` for the test's
  duration with `@pytest.mark.minik3s(export_kubeconfig=True)` or `--minik3s-export-kubeconfig`.
- `k8s_client`: the official `kubernetes` client's `ApiClient` for that cluster (skips the test
  when the `kubernetes` package is not installed).

`cluster_fixture(scope=..., **options)` builds a fixture with another scope or fixed options
(e.g. a module-scoped 6-node cluster in a conftest.py: `minik3s_cluster = cluster_fixture(...)`).
Every cluster is handed over only when the API answers and every node is Ready, and is stopped
(no threads, tasks, files or ports left) when its scope ends.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from minik3s.embed import Cluster

MARKER = "minik3s"
CLUSTER_ONLY_OPTIONS = ("export_kubeconfig",)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("minik3s", "minik3s clusters for tests")
    group.addoption("--minik3s-nodes", default="3",
                    help="simulated nodes of minik3s_session_cluster: a count or a nodes file (default 3)")
    group.addoption("--minik3s-export-kubeconfig", action="store_true", default=False,
                    help="export KUBECONFIG for every test that uses the kubeconfig fixture")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "minik3s(**options): options of the test's minik3s_cluster (nodes=, zones=, simulated_time=, tls=, "
                   "scheduler_config=, descheduler_policy=, node_monitor_grace_period=, node_monitor_period=, disable=, ...) and "
                   "export_kubeconfig=True")


def _marker_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    node = getattr(request, "node", None)
    if node is not None:
        # closest marker last, so a test's marker overrides its class's and module's
        for mark in reversed(list(node.iter_markers(MARKER))):
            if mark.args:
                raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keyword arguments only, got {mark.args!r}")
            opts.update(mark.kwargs)
    param = getattr(request, "param", None)
    if isinstance(param, dict):
        opts.update(param)
    elif param is not None:
        opts["nodes"] = param  # parametrize(..., [1, 3, "fleet.yaml"], indirect=True)
    return opts


def _cluster_options(request: pytest.FixtureRequest, base: dict[str, Any]) -> dict[str, Any]:
    opts = dict(base)
    opts.update(_marker_options(request))
    for key in CLUSTER_ONLY_OPTIONS:
        opts.pop(key, None)
    return opts


def _start(opts: dict[str, Any]) -> Cluster:
    try:
        cluster = Cluster(**opts)
    except TypeError as e:
        raise pytest.UsageError(f"bad minik3s cluster options {opts!r}: {e}") from e
    return cluster.__enter__()


def cluster_fixture(*, scope: str = "function", name: str | None = None, **options: Any
                    ) -> Callable[..., Iterator[Cluster]]:
    """A cluster fixture with `scope` and default `options` (markers still override them for
    function-scoped fixtures)."""

    def fixture(request: pytest.FixtureRequest) -> Iterator[Cluster]:
        opts = _cluster_options(request, options) if scope == "function" else dict(options)
        cluster = _start(opts)
        try:
            yield cluster
        finally:
            cluster.__exit__(None, None, None)

    return pytest.fixture(scope=scope, name=name)(fixture)  # type: ignore[call-overload, no-any-return]


minik3s_cluster = cluster_fixture(scope="function", name="minik3s_cluster")


@pytest.fixture(scope="session")
def minik3s_session_cluster(pytestconfig: pytest.Config) -> Iterator[Cluster]:
    nodes: str | int = pytestconfig.getoption("--minik3s-nodes")
    if isinstance(nodes, str) and nodes.isdigit():
        nodes = int(nodes)
    cluster = _start({"nodes": nodes})
    try:
        yield cluster
    finally:
        cluster.__exit__(None, None, None)


def _test_cluster(request: pytest.FixtureRequest) -> Cluster:
    """The test's own cluster when it uses `minik3s_cluster`, else the session cluster."""
    if "minik3s_cluster" in request.fixturenames:
        c: Cluster = request.getfixturevalue("minik3s_cluster")
    else:
        c = request.getfixturevalue("minik3s_session_cluster")
    return c


@pytest.fixture
def minik3s_namespace(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace named after the test (`test-<name>-<8 hex>`), deleted afterwards."""
    from minik3s.api.errors import NotFoundError
    from minik3s.api.resources import NAMESPACES

    cluster = _test_cluster(request)
    stem = "".join(ch if ch.isalnum() else "-" for ch in request.node.name.lower()).strip("-")[:40].strip("-")
    name = f"{stem or 'test'}-{uuid.uuid4().hex[:8]}"
    cluster.call(cluster.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": name}}))
    try:
        yield name
    finally:
        if cluster.running:
            try:
                cluster.call(cluster.client.delete(NAMESPACES, name))
            except NotFoundError:
                pass


@pytest.fixture
def kubeconfig(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kubeconfig of the test's cluster; optionally exported as KUBECONFIG for the test."""
    cluster = _test_cluster(request)
    export = bool(request.config.getoption("--minik3s-export-kubeconfig"))
    export = bool(_marker_options(request).get("export_kubeconfig", export))
    if export:
        monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig_path))
    return cluster.kubeconfig_path


@pytest.fixture
def k8s_client(kubeconfig: Path) -> Iterator[Any]:
    """`kubernetes.client.ApiClient` for the test's cluster (the official client)."""
    k8s_config = pytest.importorskip("kubernetes.config", reason="the `kubernetes` package is not installed")
    api_client = k8s_config.new_client_from_config(config_file=str(kubeconfig))
    try:
        yield api_client
    finally:
        api_client.close()
