"""argparse wiring of `minik3s apply|get|delete|describe` (layer L5, CLI).

Data flow: argparse -> `_cmd` (sync; resolves the server from the kubeconfig and runs the loop
through `minik3s.cli.runner.run_async`) -> discovery -> the `run_*` coroutine -> stdout/stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from minik3s.cli.common import cluster_access, run_async

# A command's implementation (and the HTTP client under it) is imported when the command runs,
# not when the parser is built: `minik3s server` and `minik3s --help` do not load them.
Run = Callable[..., Awaitable[int]]


def _run(command: str) -> Run:
    if command == "apply":
        from minik3s.cli.kubectl.apply import run_apply

        return run_apply
    if command == "get":
        from minik3s.cli.kubectl.get import run_get

        return run_get
    if command == "delete":
        from minik3s.cli.kubectl.delete import run_delete

        return run_delete
    from minik3s.cli.kubectl.describe import run_describe

    return run_describe


def _bool(v: str) -> bool:
    if v.lower() in ("true", "1", "yes", "y"):
        return True
    if v.lower() in ("false", "0", "no", "n"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean value {v!r}")


def _cmd(command: str) -> Callable[[argparse.Namespace], int]:
    def func(args: argparse.Namespace) -> int:
        from minik3s.api.errors import ApiError
        from minik3s.cli.kubectl.api import Api
        from minik3s.cli.kubectl.discovery import Discovery
        from minik3s.cli.kubectl.errors import CommandError, format_error
        from minik3s.cli.kubectl.palette import Palette
        from minik3s.client.rest import HttpClient, default_user_agent

        run = _run(command)
        access = cluster_access(args)
        err_pal = Palette.for_stream(sys.stderr)

        async def main() -> int:
            client = HttpClient.for_access(access, user_agent=default_user_agent("minik3s-cli"))
            api = Api(client)
            try:
                disc = await Discovery.load(api)
                return int(await run(api, disc, args, out=sys.stdout, err=sys.stderr))
            except (ApiError, CommandError) as e:
                print(err_pal.paint("red", format_error(e)), file=sys.stderr)
                return 1
            finally:
                await client.close()

        return run_async(main)

    return func


class _IntermixedParser(argparse.ArgumentParser):
    """Options may come between the names, as with kubectl: `get pods -n kube-system web-1`
    (argparse's intermixed parsing, used when the top-level parser hands over to the subcommand)."""

    _inner = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self._inner:
            return super().parse_known_args(args, namespace)
        self._inner = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._inner = False


def add_subcommands(subparsers: Any, client_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """Register `apply`, `get`, `delete`, `describe` on the `minik3s` parser's subparsers."""
    saved = subparsers._parser_class
    subparsers._parser_class = _IntermixedParser
    try:
        _add_subcommands(subparsers, client_args)
    finally:
        subparsers._parser_class = saved


def _add_subcommands(subparsers: Any, client_args: Callable[[argparse.ArgumentParser], None]) -> None:

    def common(p: argparse.ArgumentParser, *, all_ns: bool = True) -> None:
        client_args(p)
        p.add_argument("-n", "--namespace", default=None, help="namespace (default: default)")
        if all_ns:
            p.add_argument("-A", "--all-namespaces", action="store_true", help="across all namespaces")

    def files(p: argparse.ArgumentParser, *, required: bool) -> None:
        p.add_argument(
            "-f",
            "--filename",
            action="append",
            required=required,
            default=None,
            help="a manifest file, a directory of them, or - for stdin (repeatable)",
        )
        p.add_argument(
            "-R", "--recursive", action="store_true", help="descend into directories given with -f"
        )

    a = subparsers.add_parser(
        "apply",
        help="create or update objects from manifests (server-side apply)",
        usage="minik3s apply -f FILE|DIR|- [-f ...] [-R] [-n NS] [--dry-run=server]",
    )
    common(a, all_ns=False)
    files(a, required=True)
    a.add_argument("--dry-run", choices=("none", "server"), default="none")
    a.set_defaults(func=_cmd("apply"))

    g = subparsers.add_parser(
        "get",
        help="list objects as kubectl does (server-side tables)",
        usage="minik3s get KIND[,KIND...] [NAME...] | KIND/NAME... [-n NS | -A] "
        "[-o wide|yaml|json|name] [-l SELECTOR] [-w]",
    )
    common(g)
    g.add_argument("resources", nargs="+", metavar="ARG")
    g.add_argument("-o", "--output", default=None, help="wide | yaml | json | name")
    g.add_argument("-l", "--selector", default=None, help="label selector, e.g. app=web,tier!=db")
    g.add_argument("--field-selector", default=None)
    g.add_argument("-w", "--watch", action="store_true", help="after listing, watch for changes")
    g.add_argument("--watch-only", action="store_true", help="watch without listing first")
    g.add_argument("--show-labels", action="store_true")
    g.add_argument("--no-headers", action="store_true")
    g.set_defaults(func=_cmd("get"))

    d = subparsers.add_parser(
        "delete",
        help="delete objects and wait until they are gone",
        usage="minik3s delete KIND NAME... | KIND/NAME... | -f FILE | KIND -l SEL | KIND --all "
        "[-n NS] [--grace-period N] [--wait=false]",
    )
    common(d)
    d.add_argument("resources", nargs="*", metavar="ARG")
    files(d, required=False)
    d.add_argument("-l", "--selector", default=None)
    d.add_argument("--field-selector", default=None)
    d.add_argument("--all", action="store_true", help="every object of the kind in the namespace")
    d.add_argument(
        "--grace-period", type=int, default=-1, help="seconds to terminate gracefully (-1: the object's)"
    )
    d.add_argument("--now", action="store_true", help="same as --grace-period=1")
    d.add_argument("--force", action="store_true", help="with --grace-period=0: remove at once, do not wait")
    d.add_argument(
        "--wait",
        nargs="?",
        const=True,
        default=True,
        type=_bool,
        help="wait until the objects are gone (default true; --wait=false or --no-wait to skip)",
    )
    d.add_argument("--no-wait", dest="wait", action="store_false")
    d.add_argument("--timeout", type=float, default=0.0, help="seconds to wait (0: no limit)")
    d.add_argument("--cascade", choices=("background", "foreground", "orphan"), default="background")
    d.add_argument("--ignore-not-found", action="store_true")
    d.set_defaults(func=_cmd("delete"))

    s = subparsers.add_parser(
        "describe",
        help="show an object in detail, with its events",
        usage="minik3s describe KIND [NAME_PREFIX...] | KIND/NAME... [-n NS | -A] [-l SELECTOR]",
    )
    common(s)
    s.add_argument("resources", nargs="+", metavar="ARG")
    s.add_argument("-l", "--selector", default=None)
    s.add_argument("--show-events", nargs="?", const=True, default=True, type=_bool)
    s.set_defaults(func=_cmd("describe"))
