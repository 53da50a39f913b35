"""Layer L5: the `minik3s` command line (`[project.scripts] minik3s = "minik3s.cli:main"`).

  main.py        the parser and entry point
  server.py      `minik3s server`: every server flag -> ServerConfig -> minik3s.server.run
  components.py  standalone `scheduler`, `kubelet-sim`, `node fail|recover`, `explain`
  common.py      the event-loop runner, logging, `--server`/`--kubeconfig` resolution
  kubectl/       `apply|get|delete|describe`, kubectl 1.33's behaviour over the public HTTP API
  render.py      terminal rendering of the scheduler's explanation

Data flow: argv -> main.build_parser -> a command -> `minik3s.server.run` (server) or an
`HttpClient` (L3) against a running server -> stdout/stderr and the exit code.
"""

from minik3s.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
