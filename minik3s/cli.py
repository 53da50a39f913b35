"""The `minik3s` command line (layer L5).

  minik3s server [--bind 127.0.0.1] [--port 6443] [--data-dir ./.minik3s] [--nodes N|FILE] ...
  minik3s scheduler --server URL [--scheduler-config FILE]
  minik3s kubelet-sim --server URL --nodes N|FILE
  minik3s node fail|recover NAME
  minik3s explain pod NAME [-n NS]
  minik3s apply -f FILE|DIR|-      minik3s get KIND [NAME] [-n NS|-A] [-o wide|yaml|json] [-w]
  minik3s delete KIND NAME...      minik3s describe KIND NAME
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
from typing import Any

import yaml

from minik3s.config import COMPONENTS, ServerConfig

logger = logging.getLogger("minik3s")


def _setup_logging(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def _run_async(main: Callable[[], Awaitable[Any]]) -> int:
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


def _server_url(args: argparse.Namespace) -> str:
    if getattr(args, "server", None):
        return str(args.server)
    candidates = []
    if getattr(args, "kubeconfig", None):
        candidates.append(Path(args.kubeconfig))
    if os.environ.get("KUBECONFIG"):
        candidates.extend(Path(p) for p in os.environ["KUBECONFIG"].split(os.pathsep) if p)
    candidates.append(Path(".minik3s") / "kubeconfig.yaml")
    for p in candidates:
        if p.is_file():
            doc = yaml.safe_load(p.read_text()) or {}
            ctx_name = doc.get("current-context")
            cluster_name = None
            for c in doc.get("contexts") or []:
                if c.get("name") == ctx_name:
                    cluster_name = (c.get("context") or {}).get("cluster")
            for c in doc.get("clusters") or []:
                if cluster_name is None or c.get("name") == cluster_name:
                    return str((c.get("cluster") or {}).get("server"))
    raise SystemExit("minik3s: no API server given: pass --server URL or --kubeconfig FILE "
                     "(or run from the directory holding .minik3s/)")


def cmd_server(args: argparse.Namespace) -> int:
    from minik3s import server

    disable = set(args.disable or [])
    for d in disable:
        if d not in COMPONENTS:
            raise SystemExit(f"minik3s: --disable {d}: unknown component (one of {', '.join(COMPONENTS)})")
    try:
        cfg = ServerConfig(bind=args.bind, port=args.port, data_dir=Path(args.data_dir), nodes=args.nodes,
                           scheduler_config=Path(args.scheduler_config) if args.scheduler_config else None,
                           descheduler_policy=Path(args.descheduler_policy) if args.descheduler_policy else None,
                           descheduling_interval=args.descheduling_interval,
                           descheduler_dry_run=args.descheduler_dry_run,
                           descheduler_loop_avoidance=args.descheduler_loop_avoidance,
                           disable=disable, node_monitor_grace_period=args.node_monitor_grace_period,
                           history_window=args.history_window, compact_interval=args.compact_interval)
    except Exception as e:  # pydantic ValidationError: a clear message naming the field
        raise SystemExit(f"minik3s: invalid configuration: {e}") from None

    def ready(rs: Any) -> None:
        print(f"minik3s server listening on {rs.url}", flush=True)
        print(f"kubeconfig written to {cfg.kubeconfig_path}", flush=True)
        print(f"export KUBECONFIG={cfg.kubeconfig_path.resolve()}", flush=True)

    async def main() -> None:
        await server.run(cfg, on_ready=ready)

    try:
        return _run_async(main)
    except ValueError as e:  # scheduler ConfigError and friends: name the field, no traceback
        print(f"minik3s: invalid configuration: {e}", file=sys.stderr)
        return 2


def cmd_scheduler(args: argparse.Namespace) -> int:
    from minik3s.client.informer import SharedInformerFactory
    from minik3s.client.rest import HttpClient
    from scheduler.config import load_config
    from scheduler.scheduler import Scheduler

    url = _server_url(args)
    cfg = load_config(Path(args.scheduler_config)) if args.scheduler_config else None

    async def main() -> None:
        client = HttpClient(url, user_agent="minik3s-scheduler")
        informers = SharedInformerFactory(client)
        sched = Scheduler(cfg, client=client, informers=informers)
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(informers.run(), name="informers")
                tg.create_task(sched.run(), name="scheduler")
        finally:
            await client.close()

    return _run_async(main)


def cmd_kubelet_sim(args: argparse.Namespace) -> int:
    from kubelet_sim.controller import run_standalone

    url = _server_url(args)
    return _run_async(lambda: run_standalone(url, args.nodes))


def cmd_node(args: argparse.Namespace) -> int:
    from kubelet_sim.node_agent import fail_node, recover_node
    from minik3s.client.rest import HttpClient

    url = _server_url(args)

    async def main() -> None:
        client = HttpClient(url)
        try:
            if args.action == "fail":
                await fail_node(client, args.name)
                print(f"node/{args.name} failed (heartbeats stopped)")
            else:
                await recover_node(client, args.name)
                print(f"node/{args.name} recovered")
        finally:
            await client.close()

    return _run_async(main)


def cmd_explain(args: argparse.Namespace) -> int:
    from minik3s.client.rest import HttpClient
    from minik3s.render import render_explain

    url = _server_url(args)

    async def main() -> int:
        client = HttpClient(url)
        try:
            doc = await client.request("GET", f"/debug/minik3s/explain/namespaces/{args.namespace}/pods/{args.name}")
        finally:
            await client.close()
        print(render_explain(doc, color=sys.stdout.isatty()))
        return 0

    return _run_async(main)


def _duration_seconds(text: str) -> float:
    """A Go-style duration ("5m", "1h30m", "45s") or plain seconds, as --descheduling-interval takes."""
    from minik3s.utils.duration import parse_duration

    try:
        value = float(text)
    except ValueError:
        try:
            value = parse_duration(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minik3s", description="A single-process Kubernetes control plane.")
    p.add_argument("--log-level", default=os.environ.get("MINIK3S_LOG_LEVEL", "INFO"))
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("server", help="run the API server with the embedded components")
    s.add_argument("--bind", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=6443, help="port (default 6443; 0 picks a free one)")
    s.add_argument("--data-dir", default=".minik3s", help="SQLite database and kubeconfig (default ./.minik3s)")
    s.add_argument("--nodes", default=None, help="simulated nodes: a count or a fleet YAML file (default 6; 0 = none)")
    s.add_argument("--scheduler-config", default=None, help="KubeSchedulerConfiguration YAML file")
    s.add_argument("--descheduler-policy", default=None,
                   help="DeschedulerPolicy (descheduler/v1alpha2) YAML file; the descheduler runs only with one")
    s.add_argument("--descheduling-interval", type=_duration_seconds, default=300.0,
                   help="time between descheduling cycles, e.g. 5m, 30s (default 5m)")
    s.add_argument("--descheduler-dry-run", action="store_true",
                   help="log and count the evictions the descheduler would make, evict nothing")
    s.add_argument("--descheduler-loop-avoidance", action=argparse.BooleanOptionalAction, default=True,
                   help="skip evictions whose pod the scheduler would put back on the same node (default on)")
    s.add_argument("--disable", action="append", choices=COMPONENTS, help="do not start a component (repeatable)")
    s.add_argument("--node-monitor-grace-period", type=float, default=50.0,
                   help="seconds without a Lease renewal before a node is Unknown (default 50)")
    s.add_argument("--history-window", type=int, default=100_000,
                   help="revisions of change history kept for watch resumption (default 100000)")
    s.add_argument("--compact-interval", type=float, default=60.0,
                   help="seconds between history compactions (default 60)")
    s.set_defaults(func=cmd_server)

    def client_args(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--server", default=None, help="API server URL (default: from the kubeconfig)")
        sp.add_argument("--kubeconfig", default=None)

    sc = sub.add_parser("scheduler", help="run the scheduler against an API server")
    client_args(sc)
    sc.add_argument("--scheduler-config", default=None)
    sc.set_defaults(func=cmd_scheduler)

    k = sub.add_parser("kubelet-sim", help="run simulated kubelets against an API server")
    client_args(k)
    k.add_argument("--nodes", required=True, help="a count or a fleet YAML file")
    k.set_defaults(func=cmd_kubelet_sim)

    n = sub.add_parser("node", help="simulate node failure and recovery")
    client_args(n)
    n.add_argument("action", choices=("fail", "recover"))
    n.add_argument("name")
    n.set_defaults(func=cmd_node)

    from minik3s.kubectl import add_subcommands

    add_subcommands(sub, client_args)

    e = sub.add_parser("explain", help="why a pod landed where it did (or is Pending)")
    client_args(e)
    e.add_argument("kind", choices=("pod", "pods", "po"))
    e.add_argument("name")
    e.add_argument("-n", "--namespace", default="default")
    e.set_defaults(func=cmd_explain)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _setup_logging(args.log_level)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
