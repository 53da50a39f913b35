"""The `minik3s` parser and entry point (layer L5, CLI).

  minik3s server [--bind 127.0.0.1] [--port 6443] [--data-dir ./.minik3s] [--nodes N|FILE] ...
  minik3s scheduler --server URL [--scheduler-config FILE]
  minik3s kubelet-sim --server URL --nodes N|FILE
  minik3s node fail|recover NAME
  minik3s explain pod NAME [-n NS]
  minik3s apply -f FILE|DIR|-      minik3s get KIND [NAME] [-n NS|-A] [-o wide|yaml|json] [-w]
  minik3s delete KIND NAME...      minik3s describe KIND NAME

Data flow: argv -> `build_parser` (server flags from `minik3s.cli.server`, components from
`minik3s.cli.components`, client commands from `minik3s.cli.kubectl`) -> the chosen command's
`func(args)` -> exit code.
"""

from __future__ import annotations

import argparse
import os

from minik3s.cli import components, server
from minik3s.cli.common import client_args, setup_logging
from minik3s.cli.kubectl.commands import add_subcommands


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minik3s", description="A single-process Kubernetes control plane.")
    p.add_argument("--log-level", default=os.environ.get("MINIK3S_LOG_LEVEL", "INFO"))
    sub = p.add_subparsers(dest="command", required=True)
    server.add_parser(sub)
    components.add_parsers(sub)
    add_subcommands(sub, client_args)
    components.add_explain_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.log_level)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
