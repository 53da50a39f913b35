"""/metrics: the Prometheus text exposition of the components running in this server (layer L4).

kube-apiserver and the descheduler each serve `/metrics`; in one process the composition root
owns one `prometheus_client` registry and hands the apiserver a provider (`METRICS`) that
renders it, so the apiserver imports no component.
"""

from __future__ import annotations

from aiohttp import web

from apiserver.handlers.authz import authorize_request
from apiserver.keys import METRICS

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


async def serve_metrics(request: web.Request) -> web.Response:
    authorize_request(request)  # `get` on the non-resource path /metrics (system:monitoring has it)
    provider = request.app[METRICS]
    body = provider() if provider is not None else b""
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})
