"""Standalone components and cluster tools (layer L5, CLI): `minik3s scheduler`,
`minik3s kubelet-sim`, `minik3s node fail|recover`, `minik3s explain pod`.

Each runs one component or request against an API server found with `--server` or the
kubeconfig, over the HTTP transport, with the component's upstream identity as user agent
(the standalone scheduler is `kube-scheduler`, so its writes carry that field manager).

Data flow: argv -> `add_parsers` flags -> `cmd_*` -> `HttpClient(url)` -> the component's
`run()` (or one request) on the event loop -> stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from minik3s.cli.common import client_args, cluster_access, run_async


def cmd_scheduler(args: argparse.Namespace) -> int:
    from minik3s.client.informer import SharedInformerFactory
    from minik3s.client.rest import HttpClient, default_user_agent
    from scheduler.config import load_config
    from scheduler.scheduler import Scheduler

    access = cluster_access(args)
    cfg = load_config(Path(args.scheduler_config)) if args.scheduler_config else None

    async def main() -> None:
        client = HttpClient.for_access(access, user_agent=default_user_agent("kube-scheduler"))
        informers = SharedInformerFactory(client)
        sched = Scheduler(cfg, client=client, informers=informers)
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(informers.run(), name="informers")
                tg.create_task(sched.run(), name="scheduler")
        finally:
            await client.close()

    return run_async(main)


def cmd_kubelet_sim(args: argparse.Namespace) -> int:
    from kubelet_sim.controller import run_standalone

    access = cluster_access(args)
    return run_async(lambda: run_standalone(access, args.nodes))


def cmd_node(args: argparse.Namespace) -> int:
    from kubelet_sim.node_agent import fail_node, recover_node
    from minik3s.client.rest import HttpClient

    access = cluster_access(args)

    async def main() -> None:
        client = HttpClient.for_access(access)
        try:
            if args.action == "fail":
                await fail_node(client, args.name)
                print(f"node/{args.name} failed (heartbeats stopped)")
            else:
                await recover_node(client, args.name)
                print(f"node/{args.name} recovered")
        finally:
            await client.close()

    return run_async(main)


def cmd_explain(args: argparse.Namespace) -> int:
    from minik3s.cli.render import render_explain
    from minik3s.client.rest import HttpClient

    access = cluster_access(args)

    async def main() -> int:
        client = HttpClient.for_access(access)
        try:
            doc = await client.request("GET", f"/debug/minik3s/explain/namespaces/{args.namespace}/pods/{args.name}")
        finally:
            await client.close()
        print(render_explain(doc, color=sys.stdout.isatty()))
        return 0

    return run_async(main)


def add_parsers(sub: Any) -> None:
    """Register `scheduler`, `kubelet-sim` and `node` on the `minik3s` parser's subparsers."""
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


def add_explain_parser(sub: Any) -> None:
    """Register `explain` (after the client commands, where `minik3s --help` has listed it)."""
    e = sub.add_parser("explain", help="why a pod landed where it did (or is Pending)")
    client_args(e)
    e.add_argument("kind", choices=("pod", "pods", "po"))
    e.add_argument("name")
    e.add_argument("-n", "--namespace", default="default")
    e.set_defaults(func=cmd_explain)
