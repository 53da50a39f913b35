"""The aiohttp application factory (layer L4, the top of apiserver).

`create_app(core, ...)` is a pure factory: it wires one catch-all route to
`apiserver.handlers.dispatch`, stores its collaborators in the typed `web.AppKey`s of
`apiserver.keys`, and cancels every open watch stream on shutdown (otherwise aiohttp's shutdown
waits for them). With `authn` settings (the TLS listener) every request is authenticated first
(`handlers.authn`); without them (plain HTTP on loopback) no request carries a user.

Data flow: request -> error middleware -> authentication -> impersonation -> dispatch
(authorization first) -> handlers -> `ApiCore` -> storage.
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from dataclasses import replace

from aiohttp import hdrs, web

from apiserver.apf import Classifier
from apiserver.core import ApiCore
from apiserver.handlers import exec_stream
from apiserver.handlers.authn import authn_middleware
from apiserver.handlers.authz import impersonation_middleware, parsed_request_attributes
from apiserver.handlers.common import header_value
from apiserver.handlers.dispatch import dispatch, error_middleware
from apiserver.handlers.metrics import RequestMetrics, serve_metrics
from apiserver.handlers.watch import close_watches
from apiserver.keys import (
    APF,
    AUTHN,
    AUTHORIZER,
    COMPONENT_HEALTH,
    CORE,
    EXEC_PROCESSES,
    EXEC_TOKENS,
    EXPLAIN,
    METRICS,
    METRICS_API,
    READY,
    REGISTRY_DOCS,
    REQUEST_USER,
    SERVING,
    SERVING_NAMES,
    USAGE,
    WATCH_ENCODE_CACHE,
    WATCHES,
    AuthnSettings,
    ComponentHealth,
    ExplainProvider,
    MetricsProvider,
    ServingLimits,
)
from apiserver.rbac import Authorizer, EscalationCheck
from minik3s.api.errors import ApiError
from minik3s.api.metrics import UsageProvider
from minik3s.api.user import ADMIN

__all__ = ["READY", "create_app"]


async def _close_authorizer(app: web.Application) -> None:
    app[AUTHORIZER].close()  # its store watchers
    app[APF].close()


_LONG_RUNNING_SUBRESOURCES = frozenset({"exec", "attach", "portforward", "proxy"})


def _apf_headers(request: web.Request, response: web.StreamResponse) -> None:
    """WithPriorityAndFairness's response headers: the UIDs of the request's FlowSchema and
    PriorityLevelConfiguration, on every classified request (watches and exempt ones too); not
    on long-running requests other than watches (exec, attach, port-forward, proxy, a followed
    log), which skip the filter, nor on an authentication failure, which never reaches it."""
    if response.status == 401:
        return
    user = request.get(REQUEST_USER) or ADMIN
    try:
        attrs = parsed_request_attributes(request, user)
    except ApiError:
        return
    if attrs.subresource in _LONG_RUNNING_SUBRESOURCES or attrs.verb == "proxy" or (
            attrs.subresource == "log" and request.query.get("follow") in ("true", "1")):
        return
    if attrs.user is not user:
        attrs = replace(attrs, user=user)
    got = request.app[APF].classify(attrs)
    if got is not None:
        response.headers["X-Kubernetes-Pf-Flowschema-Uid"], response.headers["X-Kubernetes-Pf-Prioritylevel-Uid"] = got


def _new_audit_id() -> str:
    """A random (version 4) UUID as uuid.New().String() writes it; about twice as fast as
    str(uuid.uuid4()) (~1.4 µs against ~3 µs), which matters once per response."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


async def _filter_headers(request: web.Request, response: web.StreamResponse) -> None:
    """The headers kube-apiserver's handler chain puts on every response, set just before
    aiohttp writes them (so watch streams, errors and aiohttp's own answers get them too).

    WithAuditInit: `Audit-Id` echoes the request's `Audit-ID` or is a new UUID; WithCacheControl:
    `Cache-Control: no-cache, private` unless the handler set one. Go's http.Server writes no
    `Server` header, so aiohttp's is dropped."""
    headers = response.headers
    headers.popall(hdrs.SERVER, None)
    if "Audit-Id" not in headers:
        headers["Audit-Id"] = header_value(request.headers.get("Audit-Id") or "") or _new_audit_id()
    if hdrs.CACHE_CONTROL not in headers:
        headers[hdrs.CACHE_CONTROL] = "no-cache, private"
    _apf_headers(request, response)


def create_app(
    core: ApiCore, *, explain: ExplainProvider | None = None, metrics: MetricsProvider | None = None,
    usage: UsageProvider | None = None, authn: AuthnSettings | None = None,
    serving_names: frozenset[str] | None = None, limits: ServingLimits | None = None,
    request_metrics: RequestMetrics | None = None, component_health: ComponentHealth | None = None,
    metrics_api: bool = True,
) -> web.Application:
    """`authn`: authenticate every request (the TLS listener); `serving_names`: the TLS
    listener's certificate names, which the browser guard accepts as Host."""
    # request metrics outermost (they see the status the error middleware rendered); then
    # authentication: impersonation (which replaces the authenticated user) and authorization
    # read its user; the plain-HTTP loopback listener has none (no per-request cost)
    middlewares = [*([request_metrics.middleware] if request_metrics is not None else []), error_middleware,
                   *([authn_middleware] if authn is not None else []), impersonation_middleware]
    app = web.Application(middlewares=middlewares, client_max_size=4 * 1024 * 1024,
                          handler_args={"max_field_size": 65536, "max_line_size": 65536})
    app[CORE] = core
    app[AUTHORIZER] = Authorizer(core.store, core.registry)
    app[APF] = Classifier(core.store, core.registry)
    # RBAC's escalation prevention on role/binding writes (once per core)
    core.write_guards[:] = [g for g in core.write_guards if not isinstance(g, EscalationCheck)]
    core.write_guards.append(EscalationCheck(app[AUTHORIZER]))
    app[SERVING] = limits or ServingLimits()
    app[WATCHES] = set()
    app[EXEC_TOKENS] = OrderedDict()
    app[EXEC_PROCESSES] = OrderedDict()
    app[EXPLAIN] = explain
    app[READY] = asyncio.Event()
    app[REGISTRY_DOCS] = {}
    app[WATCH_ENCODE_CACHE] = {}
    app[METRICS] = metrics
    app[USAGE] = usage
    app[METRICS_API] = metrics_api
    app[COMPONENT_HEALTH] = component_health
    app[AUTHN] = authn
    app[SERVING_NAMES] = serving_names
    core.crd_listeners.append(app[REGISTRY_DOCS].clear)
    app.router.add_get("/metrics", serve_metrics)
    app.router.add_route("*", "/{tail:.*}", dispatch)
    app.on_response_prepare.append(_filter_headers)
    app.on_shutdown.append(close_watches)
    app.on_shutdown.append(exec_stream.stop_processes)
    app.on_cleanup.append(_close_authorizer)
    return app
