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
import dataclasses
import sys
from pathlib import Path
from typing import Any

from minik3s.cli.common import client_args, cluster_access, run_async


def cmd_scheduler(args: argparse.Namespace) -> int:
    from minik3s.client.informer import SharedInformerFactory
    from minik3s.client.leaderelection import LeaseElector
    from minik3s.client.rest import HttpClient, default_user_agent
    from scheduler.config import LeaderElection, load_config
    from scheduler.scheduler import Scheduler

    access = cluster_access(args)
    cfg = load_config(Path(args.scheduler_config)) if args.scheduler_config else None
    election = (cfg.leader_election if cfg is not None else LeaderElection()).election()
    if args.leader_elect is not None:
        election = dataclasses.replace(election, leader_elect=args.leader_elect)

    async def main() -> int:
        client = HttpClient.for_access(access, user_agent=default_user_agent("kube-scheduler"))
        informers = SharedInformerFactory(client)
        sched = Scheduler(cfg, client=client, informers=informers)
        elector = LeaseElector(client, election) if election.leader_elect else None
        try:
            return await _scheduler_tasks(informers, sched, elector)
        except ExceptionGroup as eg:
            if eg.subgroup(LeaderElectionLost) is None:
                raise
            print("E leaderelection lost", file=sys.stderr)
            return 1
        finally:
            if elector is not None:
                await elector.release()
            await client.close()

    return run_async(main)


async def _scheduler_tasks(informers: Any, sched: Any, elector: Any) -> int:
    async with asyncio.TaskGroup() as tg:
        tg.create_task(informers.run(), name="informers")
        if elector is not None:
            # kube-scheduler schedules only while it holds the Lease and exits when it loses it
            await elector.acquire()
            tg.create_task(_until_lost(elector), name="leader-election")
        tg.create_task(sched.run(), name="scheduler")
    return 0


class LeaderElectionLost(RuntimeError):
    pass


async def _until_lost(elector: Any) -> None:
    await elector.renew()
    raise LeaderElectionLost("leaderelection lost")


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


def _flag_bool(value: str) -> bool:
    """A Go-style boolean flag value (pflag's strconv.ParseBool)."""
    v = value.strip().lower()
    if v in ("1", "t", "true"):
        return True
    if v in ("0", "f", "false"):
        return False
    raise argparse.ArgumentTypeError(f'invalid argument "{value}": strconv.ParseBool: parsing "{value}": invalid syntax')


def add_parsers(sub: Any) -> None:
    """Register `scheduler`, `kubelet-sim` and `node` on the `minik3s` parser's subparsers."""
    sc = sub.add_parser("scheduler", help="run the scheduler against an API server")
    client_args(sc)
    sc.add_argument("--scheduler-config", default=None)
    sc.add_argument("--leader-elect", type=_flag_bool, nargs="?", const=True, default=None,
                    help="hold the kube-system Lease while scheduling (default: the configuration's "
                         "leaderElection.leaderElect, true); --leader-elect=false for a second scheduler")
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
