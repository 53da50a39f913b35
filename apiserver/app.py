"""The aiohttp application factory (layer L4).

`create_app(core, ...)` is a pure factory: it wires one catch-all route to the dispatcher in
`apiserver.handlers.resources`, stores its collaborators in typed `web.AppKey`s, and closes
every open watch stream on shutdown (otherwise aiohttp's shutdown waits for them).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from aiohttp import web

from apiserver.core import ApiCore

logger = logging.getLogger(__name__)

CORE = web.AppKey("core", ApiCore)
WATCHES = web.AppKey("watches", set[web.StreamResponse])
EXPLAIN = web.AppKey("explain", object)  # Callable[[str, str], dict | None] | None
READY = web.AppKey("ready", asyncio.Event)
OPENAPI_CACHE = web.AppKey("openapi_cache", dict)
# one JSON encoding per watch event, shared by every watcher that receives it
WATCH_ENCODE_CACHE = web.AppKey("watch_encode_cache", dict)
# Prometheus text exposition of the components' metrics, provided by the composition root
METRICS = web.AppKey("metrics", object)  # Callable[[], bytes] | None


def create_app(core: ApiCore, *, explain: Callable[[str, str], Any] | None = None,
               metrics: Callable[[], bytes] | None = None) -> web.Application:
    from apiserver.handlers.resources import dispatch, error_middleware

    app = web.Application(middlewares=[error_middleware], client_max_size=4 * 1024 * 1024,
                          handler_args={"max_field_size": 65536, "max_line_size": 65536})
    app[CORE] = core
    app[WATCHES] = set()
    app[EXPLAIN] = explain
    app[READY] = asyncio.Event()
    app[OPENAPI_CACHE] = {}
    app[WATCH_ENCODE_CACHE] = {}
    app[METRICS] = metrics
    core.crd_listeners.append(lambda: app[OPENAPI_CACHE].clear())
    app.router.add_get("/metrics", _metrics)
    app.router.add_route("*", "/{tail:.*}", dispatch)
    app.on_shutdown.append(_close_watches)
    return app


async def _metrics(request: web.Request) -> web.Response:
    provider = request.app[METRICS]
    body = provider() if callable(provider) else b""
    return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})


async def _close_watches(app: web.Application) -> None:
    watches: set[web.StreamResponse] = app[WATCHES]
    for resp in list(watches):
        task = getattr(resp, "_minik3s_task", None)
        if task is not None and not task.done():
            task.cancel()
    watches.clear()
