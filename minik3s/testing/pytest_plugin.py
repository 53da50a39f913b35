"""pytest fixtures that give a test a real `minik3s server` *process* (this repo's suite loads
them with `pytest_plugins = ["minik3s.testing.pytest_plugin"]`; other projects use the registered
in-process plugin `minik3s.pytest_plugin`, whose `minik3s_cluster` is the full cluster).

- `minik3s_api`: a module-scoped API-only server process (no scheduler, controllers or kubelets).
- `minik3s_server_factory`: start server processes with any arguments (restarts, signals, flags;
  `tls=True` for HTTPS with authentication; `fsync=False` for `--unsafe-no-fsync`, default
  `ServerProcess.fsync_by_default`); all are stopped at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from minik3s.testing.server import ServerProcess

API_ONLY = ["--disable", "scheduler", "--disable", "controllers", "--disable", "kubelet"]


@pytest.fixture
def minik3s_server_factory(tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    started: list[ServerProcess] = []

    def make(*args: str, nodes: str | int = 0, name: str = "srv", start: bool = True, tls: bool = False,
             fsync: bool | None = None) -> ServerProcess:
        srv = ServerProcess(tmp_path / f"{name}-{len(started)}", nodes=nodes, args=list(args), tls=tls,
                            fsync=fsync)
        started.append(srv)
        return srv.start() if start else srv

    yield make
    for srv in started:
        srv.stop()


@pytest.fixture(scope="module")
def minik3s_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = ServerProcess(tmp_path_factory.mktemp("minik3s-api"), nodes=0, args=API_ONLY)
    srv.start()
    yield srv
    srv.stop()
