"""/debug/minik3s/...: minik3s' own diagnostics (layer L4).

`/debug/minik3s/explain/namespaces/<ns>/pods/<name>`: the scheduler's per-node, per-plugin
verdicts of the pod's last attempt, from the `EXPLAIN` provider the composition root injects
(503 when no scheduler runs in this server, 404 when the pod has no recorded attempt).
"""

from __future__ import annotations

from aiohttp import web

from apiserver.handlers import codec
from apiserver.handlers.common import not_found_path
from apiserver.keys import EXPLAIN
from minik3s.api import errors
from minik3s.api.errors import NotFoundError


def serve_debug(request: web.Request, parts: list[str]) -> web.StreamResponse:
    if len(parts) == 5 and parts[0] == "explain" and parts[1] == "namespaces" and parts[3] == "pods":
        provider = request.app[EXPLAIN]
        if provider is None:
            raise errors.ServiceUnavailableError("the scheduler is not running in this server")
        doc = provider(parts[2], parts[4])
        if doc is None:
            raise NotFoundError(f'no scheduling attempt recorded for pod "{parts[2]}/{parts[4]}"',
                                details={"name": parts[4], "kind": "pods"})
        return codec.json_response(doc)
    raise not_found_path()
