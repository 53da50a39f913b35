"""What every `minik3s` command shares (layer L5, CLI): the event-loop runner, logging set-up
and the client flags (`--server`, `--kubeconfig`) with their resolution.

Data flow: argparse flags + KUBECONFIG -> `cluster_access` (through `minik3s.client.kubeconfig`:
URL, CA, client certificate, token) -> the command's `HttpClient.for_access`; `run_async(main)` runs the command's coroutine until it ends or
SIGTERM/SIGINT cancels it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from minik3s.client.kubeconfig import ClusterAccess

DEFAULT_KUBECONFIG = Path(".minik3s") / "kubeconfig.yaml"  # what `minik3s server` writes by default


def setup_logging(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def run_async(main: Callable[[], Awaitable[Any]]) -> int:
    """Run on uvloop where it installs; SIGTERM/SIGINT cancel the main task (clean shutdown)."""
    try:
        import uvloop

        runner = asyncio.Runner(loop_factory=uvloop.new_event_loop)
    except ImportError:  # pragma: no cover - platforms without uvloop
        runner = asyncio.Runner()

    async def wrapper() -> Any:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, task.cancel)  # type: ignore[union-attr]
            except (NotImplementedError, RuntimeError):
                pass
        try:
            return await main()
        except asyncio.CancelledError:
            return 0

    with runner:
        result = runner.run(wrapper())
    return int(result or 0)


def client_args(sp: argparse.ArgumentParser) -> None:
    """`--server` and `--kubeconfig`, on every command that talks to an API server."""
    sp.add_argument("--server", default=None, help="API server URL (default: from the kubeconfig)")
    sp.add_argument("--kubeconfig", default=None)


def server_url(args: argparse.Namespace) -> str:
    """--server, else the kubeconfig (--kubeconfig, KUBECONFIG, ./.minik3s/kubeconfig.yaml)."""
    from minik3s.client.kubeconfig import resolve_server_url  # YAML and TLS: only for client commands

    url = resolve_server_url(server=getattr(args, "server", None), kubeconfig=getattr(args, "kubeconfig", None),
                             environ=os.environ, default=DEFAULT_KUBECONFIG)
    if url is None:
        raise SystemExit("minik3s: no API server given: pass --server URL or --kubeconfig FILE "
                         "(or run from the directory holding .minik3s/)")
    return url


def cluster_access(args: argparse.Namespace) -> ClusterAccess:
    """The server and credentials: --server (or the kubeconfig's), with the kubeconfig's CA,
    client certificate and token (--kubeconfig, KUBECONFIG, ./.minik3s/kubeconfig.yaml)."""
    from minik3s.client.kubeconfig import KubeconfigError, resolve_access

    try:
        access = resolve_access(server=getattr(args, "server", None), kubeconfig=getattr(args, "kubeconfig", None),
                                environ=os.environ, default=DEFAULT_KUBECONFIG)
        if access is not None:
            access.ssl_context()  # unusable TLS material fails here, as a message
    except KubeconfigError as e:
        raise SystemExit(f"minik3s: invalid kubeconfig: {e}") from None
    if access is None:
        raise SystemExit("minik3s: no API server given: pass --server URL or --kubeconfig FILE "
                         "(or run from the directory holding .minik3s/)")
    return access
