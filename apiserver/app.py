"""The aiohttp application factory (layer L4, the top of apiserver).

`create_app(core, ...)` is a pure factory: it wires one catch-all route to
`apiserver.handlers.dispatch`, stores its collaborators in the typed `web.AppKey`s of
`apiserver.keys`, and cancels every open watch stream on shutdown (otherwise aiohttp's shutdown
waits for them).

Data flow: request -> error middleware -> dispatch -> handlers -> `ApiCore` -> storage.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from apiserver.core import ApiCore
from apiserver.handlers.dispatch import dispatch, error_middleware
from apiserver.handlers.metrics import RequestMetrics, serve_metrics
from apiserver.handlers.watch import close_watches
from apiserver.keys import (
    CORE,
    EXPLAIN,
    METRICS,
    OPENAPI_CACHE,
    READY,
    USAGE,
    WATCH_ENCODE_CACHE,
    WATCHES,
    ExplainProvider,
    MetricsProvider,
)
from minik3s.api.metrics import UsageProvider

__all__ = ["READY", "create_app"]


def create_app(
    core: ApiCore, *, explain: ExplainProvider | None = None, metrics: MetricsProvider | None = None,
    usage: UsageProvider | None = None, request_metrics: RequestMetrics | None = None,
) -> web.Application:
    # request metrics outermost: they see the status the error middleware rendered
    middlewares = [error_middleware] if request_metrics is None else [request_metrics.middleware, error_middleware]
    app = web.Application(middlewares=middlewares, client_max_size=4 * 1024 * 1024,
                          handler_args={"max_field_size": 65536, "max_line_size": 65536})
    app[CORE] = core
    app[WATCHES] = set()
    app[EXPLAIN] = explain
    app[READY] = asyncio.Event()
    app[OPENAPI_CACHE] = {}
    app[WATCH_ENCODE_CACHE] = {}
    app[METRICS] = metrics
    app[USAGE] = usage
    core.crd_listeners.append(app[OPENAPI_CACHE].clear)
    app.router.add_get("/metrics", serve_metrics)
    app.router.add_route("*", "/{tail:.*}", dispatch)
    app.on_shutdown.append(close_watches)
    return app
