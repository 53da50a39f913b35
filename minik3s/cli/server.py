"""`minik3s server` (layer L5, CLI): every flag of the server command, parsed into a
`ServerConfig` and handed to `minik3s.server.run`. Server flags are added here and only here.

Data flow: argv -> `add_parser` flags -> `cmd_server` -> `ServerConfig` (validated) ->
`minik3s.server.run(config, on_ready=...)` on the event loop until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from minik3s.cli.common import run_async
from minik3s.config import COMPONENTS, ServerConfig
from minik3s.utils.duration import parse_duration


def _duration_seconds(text: str) -> float:
    """A Go-style duration ("5m", "1h30m", "45s") or plain seconds, as --descheduling-interval takes."""
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


def add_parser(sub: Any) -> None:
    """Register `server` on the `minik3s` parser's subparsers."""
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
    s.add_argument("--no-addons", action="store_true",
                   help="deploy none of K3s' packaged add-on Deployments (coredns, metrics-server) while "
                        "metrics.k8s.io stays served, as servers built in code and the test helpers start")
    s.add_argument("--disable-admission-plugins", default="", metavar="PLUGINS",
                   help="comma-separated admission plugins to turn off (kube-apiserver's flag; "
                        "PersistentVolumeClaimResize, ResourceQuota, ServiceAccount or StorageObjectInUseProtection, "
                        "the last two also off "
                        "with --disable controllers)")
    s.add_argument("--node-monitor-grace-period", type=float, default=50.0,
                   help="seconds without a Lease renewal before a node is Unknown (default 50)")
    s.add_argument("--node-monitor-period", type=_duration_seconds, default=5.0,
                   help="period of the node lifecycle controller's Lease checks, e.g. 5s, 1s (default 5s)")
    s.add_argument("--horizontal-pod-autoscaler-sync-period", type=_duration_seconds, default=15.0,
                   help="period between HorizontalPodAutoscaler syncs, e.g. 15s, 2s (default 15s)")
    s.add_argument("--history-window", type=int, default=100_000,
                   help="revisions of change history kept for watch resumption (default 100000)")
    s.add_argument("--compact-interval", type=float, default=60.0,
                   help="seconds between history compactions (default 60)")
    s.add_argument("--unsafe-no-fsync", action="store_true",
                   help="do not fsync commits (etcd's flag): faster, and an acknowledged write survives the "
                        "process but not a machine crash; for throwaway clusters such as test suites")
    s.add_argument("--tls", action=argparse.BooleanOptionalAction, default=None,
                   help="serve HTTPS with client authentication (default: on unless --bind is a loopback address; "
                        "--no-tls is refused beyond loopback)")
    s.add_argument("--tls-san", action="append", default=None, metavar="NAME",
                   help="an extra host name or IP address of the serving certificate (repeatable)")
    s.add_argument("--token-auth-file", "--token-file", dest="token_auth_file", default=None, metavar="FILE",
                   help="static bearer tokens, CSV token,user,uid,\"group1,group2\" (kube-apiserver "
                        "--token-auth-file; TLS only)")
    s.add_argument("--min-request-timeout", type=_duration_seconds, default=1800.0,
                   help="a watch without timeoutSeconds ends after a random time in [t, 2t) "
                        "(kube-apiserver's flag; default 1800 s)")
    s.add_argument("--request-timeout", type=_duration_seconds, default=60.0,
                   help="longest time a request body may take to arrive, then 504 (default 1m)")
    s.add_argument("--read-header-timeout", type=_duration_seconds, default=32.0,
                   help="a new connection must send its request headers within this (kube-apiserver: 32s)")
    s.add_argument("--idle-timeout", type=_duration_seconds, default=90.0,
                   help="an idle keep-alive connection is closed after this (kube-apiserver: 90s)")
    s.add_argument("--watch-send-timeout", type=_duration_seconds, default=10.0,
                   help="a watch whose client reads nothing for this long while events wait is closed "
                        "(default 10s)")
    s.set_defaults(func=cmd_server)


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
                           disable=disable, addons=not args.no_addons,
                           disable_admission_plugins={p.strip() for p in args.disable_admission_plugins.split(",")
                                                      if p.strip()},
                           node_monitor_grace_period=args.node_monitor_grace_period,
                           node_monitor_period=args.node_monitor_period,
                           horizontal_pod_autoscaler_sync_period=args.horizontal_pod_autoscaler_sync_period,
                           history_window=args.history_window, compact_interval=args.compact_interval,
                           unsafe_no_fsync=args.unsafe_no_fsync,
                           tls=args.tls, tls_san=list(args.tls_san or []),
                           token_auth_file=Path(args.token_auth_file) if args.token_auth_file else None,
                           min_request_timeout=args.min_request_timeout, request_timeout=args.request_timeout,
                           read_header_timeout=args.read_header_timeout, idle_timeout=args.idle_timeout,
                           watch_send_timeout=args.watch_send_timeout)
    except Exception as e:  # pydantic ValidationError: a clear message naming the field
        raise SystemExit(f"minik3s: invalid configuration: {e}") from None

    def ready(rs: Any) -> None:
        print(f"minik3s server listening on {rs.url}", flush=True)
        print(f"kubeconfig written to {cfg.kubeconfig_path}", flush=True)
        print(f"export KUBECONFIG={cfg.kubeconfig_path.resolve()}", flush=True)

    async def main() -> None:
        await server.run(cfg, on_ready=ready)

    try:
        return run_async(main)
    except ValueError as e:  # scheduler ConfigError and friends: name the field, no traceback
        print(f"minik3s: invalid configuration: {e}", file=sys.stderr)
        return 2
