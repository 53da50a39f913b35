"""The one catch-all route: error rendering and dispatch by path and method (layer L4).

Data flow: aiohttp -> `error_middleware` (ApiError -> upstream-shaped Status, anything else ->
500 Status, never a bare traceback) -> `dispatch`: health, version, discovery, OpenAPI, debug,
`nodes/{name}/proxy/...` (`node_proxy`, the simulated kubelets), or a resource path
(`common.parse_resource_path`) -> `verbs` / `subresources` handlers (for a deprecated version,
its warning first: `deprecation`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from apiserver.core import ApiCore
from apiserver.handlers import codec, component_status, discovery, metrics_api, node_proxy, verbs
from apiserver.handlers.authz import authorize_request
from apiserver.handlers.common import (
    Target,
    check_acceptable,
    method_not_allowed,
    not_found_path,
    parse_resource_path,
    retry_after,
    warning_headers,
)
from apiserver.handlers.debug import serve_debug
from apiserver.handlers.deprecation import add_warning_header, deprecation_warning, record
from apiserver.handlers.health import health
from apiserver.handlers.openapi import serve_openapi
from apiserver.handlers.subresources import subresource
from apiserver.keys import CORE, METRICS_API, REGISTRY_DOCS, REQUEST_WARNINGS, SERVING_NAMES, USAGE
from apiserver.storage.interface import (
    UNENCODABLE_MESSAGE,
    KeyNotFoundError,
    ObjectTooLargeError,
    UnencodableObjectError,
)
from minik3s.api import errors
from minik3s.api.errors import ApiError
from minik3s.api.resources import ALL_VERBS
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# what the access log and request metrics record for a request whose client went away before
# its answer (nginx's convention; the closed connection never carries it)
_CLIENT_CLOSED_REQUEST = 499


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as e:
        headers = {**(retry_after(e) or {}), **warning_headers(request.get(REQUEST_WARNINGS))}
        return codec.json_response(e.to_status(), status=e.code, headers=headers or None)
    except web.HTTPException as e:
        if e.status == 413:
            err: ApiError = errors.RequestEntityTooLargeError("the server has received a request that is too large")
        elif e.status == 405:
            err = method_not_allowed()
        elif e.status == 404:
            err = not_found_path()
        elif e.status < 400:
            raise
        else:
            err = ApiError(e.reason or "error", code=e.status, reason="BadRequest" if e.status == 400 else "InternalError")
        return codec.json_response(err.to_status(), status=err.code)
    except ObjectTooLargeError:
        # what kube-apiserver relays when etcd refuses an object over its request limit
        err = errors.RequestEntityTooLargeError("etcdserver: request is too large")
        return codec.json_response(err.to_status(), status=err.code)
    except UnencodableObjectError:
        # a write built a value the encoder refuses (nesting beyond the store's bound)
        err = errors.BadRequestError(UNENCODABLE_MESSAGE)
        return codec.json_response(err.to_status(), status=err.code)
    except KeyNotFoundError:
        # the object went away between the read and the write (a concurrent delete)
        err = errors.NotFoundError("the object was deleted while the request was served")
        return codec.json_response(err.to_status(), status=err.code)
    except asyncio.CancelledError:
        raise
    except ConnectionError:
        # the client went away while its request was served (reset, broken pipe, aiohttp's
        # "Connection lost" from a write waiting for drain): nothing to answer, nothing wrong
        # with the server. Raised on, aiohttp would log it as an error; the streaming handlers
        # (watch, pods/log) catch it themselves and end their response.
        logger.debug("client went away method=%s path=%s", request.method, request.path)
        if request.transport is not None:
            request.transport.close()
        return web.Response(status=_CLIENT_CLOSED_REQUEST)
    except Exception as e:  # noqa: BLE001 - the one place that turns a fault into a 500 Status
        logger.exception("internal error serving method=%s path=%s", request.method, request.path)
        err = errors.InternalError(f"Internal error occurred: {type(e).__name__}: {e}")
        return codec.json_response(err.to_status(), status=500)


# bodies a browser may POST cross-origin without a CORS preflight ("simple" requests)
_SIMPLE_CONTENT_TYPES = frozenset({"text/plain", "multipart/form-data", "application/x-www-form-urlencoded"})
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def _host_name(value: str) -> str:
    """`127.0.0.1:6443` -> `127.0.0.1`, `[::1]:6443` -> `::1`, `LocalHost.` -> `localhost`."""
    v = value.strip().lower()
    if v.startswith("["):
        return v[1:].split("]", 1)[0]
    if v.count(":") == 1:
        v = v.split(":", 1)[0]
    return v.rstrip(".")


def _is_loopback(name: str) -> bool:
    return name in _LOOPBACK_NAMES or name.endswith(".localhost") or name.startswith("127.")


def browser_guard(request: web.Request) -> None:
    """What keeps a web page from driving the API.

    - On the plain-HTTP loopback listener (no TLS, no auth), the Host must be a loopback name or
      the listener's address: another name means a DNS-rebinding page (403). On a TLS listener
      (`SERVING_NAMES` set) the Host may also be any name of its serving certificate (the bind
      address and every --tls-san).
    - A request carrying an Origin that is neither loopback nor (on TLS) one of those names
      comes from another site's page (403).
    - POST/PUT/PATCH bodies typed text/plain, multipart/form-data or form-urlencoded are what a
      page can send without a preflight; upstream decodes none of them (415)."""
    sock = request.transport.get_extra_info("sockname") if request.transport is not None else None
    local = str(sock[0]) if isinstance(sock, tuple) and sock else ""
    names = request.app[SERVING_NAMES] or frozenset()
    host = _host_name(request.headers.get("Host", ""))
    if host and not _is_loopback(host) and host != local and host not in names:
        if request.app[SERVING_NAMES] is not None:
            raise errors.ForbiddenError(
                f'Host "{host}" is not allowed: this API answers only requests addressed to a name of its '
                f'serving certificate ({", ".join(sorted(names))})')
        if local and _is_loopback(local):
            raise errors.ForbiddenError(
                f'Host "{host}" is not allowed: this API listens on a loopback address and answers only '
                f'requests addressed to localhost or {local} (DNS rebinding protection)')
    origin = request.headers.get("Origin")
    if origin is not None:
        name = _host_name(origin.split("://", 1)[-1].split("/", 1)[0]) if "://" in origin else origin
        if not _is_loopback(name) and name not in names:
            raise errors.ForbiddenError(
                f'Origin "{origin}" is not allowed: requests from web pages of other sites are refused')
    if request.method in ("POST", "PUT", "PATCH") and codec.media_type(request) in _SIMPLE_CONTENT_TYPES \
            and request.body_exists:
        raise errors.UnsupportedMediaTypeError(
            f'the body of the request was in an unknown format - accepted media types include: application/json, '
            f'application/yaml, application/vnd.kubernetes.protobuf (got "{codec.media_type(request)}": a content '
            f'type a browser may send cross-origin without a preflight is never decoded)')


# the routes kube-apiserver's installer registers for a resource, by the verbs its storage
# implements: at the collection path (LIST/WATCH, POST, DELETECOLLECTION) and the item path
# (GET, PUT, PATCH, DELETE)
_COLLECTION_ROUTES: dict[str, tuple[str, ...]] = {"GET": ("list", "watch"), "POST": ("create",), "DELETE": ("deletecollection",)}
_ITEM_ROUTES: dict[str, tuple[str, ...]] = {"GET": ("get",), "PUT": ("update",), "PATCH": ("patch",), "DELETE": ("delete",)}


def _has_route(method: str, verbs: frozenset[str] | tuple[str, ...], routes: dict[str, tuple[str, ...]]) -> None:
    """A path no route serves is go-restful's 404; a path served for other methods only, its 405
    (a create-only review or `bindings`: GET on the collection is 405, any item path 404)."""
    if verbs is ALL_VERBS:
        return  # the common case: every route (the method was matched by the caller)
    if not any(v in verbs for vs in routes.values() for v in vs):
        raise not_found_path()
    if not any(v in verbs for v in routes.get(method, ())):
        raise method_not_allowed()


def _get_only(method: str) -> None:
    """/version, /api, /api/v1 and /apis/<group>/<version> are go-restful web services with one
    GET route each in kube-apiserver: any other method is the route-selection 405. (/healthz,
    /apis and /openapi are plain handlers there, which answer every method.)"""
    if method != "GET":
        raise method_not_allowed()


def page_not_found() -> web.Response:
    """What kube-apiserver answers for a path outside every API web service (`/foo`, a group no
    API serves: `/apis/nope/v1/things`): its NotFoundHandler's plain `http.NotFound`, not a
    Status. Paths under a served group (`/apis/apps/v9/...`, `/api/v1/foos`) are go-restful's,
    and answer the generic 404 Status (`not_found_path`)."""
    return web.Response(text="404 page not found\n", status=404, content_type="text/plain", charset="utf-8",
                        headers={"X-Content-Type-Options": "nosniff"})


def _aggregated_response(request: web.Request, key: str, build: Callable[[], list[JsonDict]]) -> web.Response:
    """The aggregated discovery document (built once per registry state: REGISTRY_DOCS) with its
    ETag (a hash of the body; a matching If-None-Match gets 304, as kube-apiserver answers
    clients that cache it) and `Vary: Accept` (the same URL serves the legacy form)."""
    docs = request.app[REGISTRY_DOCS]
    body = docs.get(key)
    if body is None:
        body = docs[key] = codec.dumps(discovery.aggregated_list(build()))
    etag = '"' + hashlib.sha256(body).hexdigest()[:32].upper() + '"'
    headers = {"ETag": etag, "Vary": "Accept"}
    if request.headers.get("If-None-Match") == etag:
        return web.Response(status=304, headers=headers)
    return web.Response(body=body, headers={**headers, "Content-Type": discovery.AGGREGATED_V2})


async def dispatch(request: web.Request) -> web.StreamResponse:
    core = request.app[CORE]
    browser_guard(request)
    authorize_request(request)  # RBAC, when authentication or impersonation named a user
    parts = [p for p in request.path.split("/") if p]
    method = request.method
    if not parts:
        return codec.json_response({"paths": ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/openapi/v2",
                                              "/openapi/v3", "/readyz", "/version"]})
    head = parts[0]
    if head in ("healthz", "livez", "readyz"):
        return health(request, head, parts[1:])
    if head == "version":
        _get_only(method)
        return web.Response(body=discovery.VERSION_BODY, content_type=codec.JSON_CT)
    if head == "openapi":
        return serve_openapi(request, parts)
    if head == "debug" and len(parts) >= 2 and parts[1] == "minik3s":
        return serve_debug(request, parts[2:])
    if head == "api":
        if len(parts) == 1:
            _get_only(method)
            if discovery.wants_aggregated(request.headers.get("Accept", "")):
                def core_group() -> list[JsonDict]:
                    core_v1 = discovery.resource_list(core.registry, "", "v1",
                                                      subresources=node_proxy.served_subresources(core))
                    return [discovery.discovery_group("", [("v1", core_v1)])] if core_v1 is not None else []
                return _aggregated_response(request, "discovery/api", core_group)
            return codec.json_response(discovery.api_versions())
        if len(parts) == 2:
            _get_only(method)
            doc = discovery.resource_list(core.registry, "", parts[1], subresources=node_proxy.served_subresources(core))
            if doc is None:
                raise not_found_path()
            return codec.json_response(doc)
        if len(parts) >= 5 and parts[2] == "nodes" and parts[4] == "proxy":  # the kubelet, through the API server
            proxied = node_proxy.proxy_target(request.path)
            if proxied is not None:
                return await node_proxy.serve(request, core, *proxied)
        target = parse_resource_path(core, ["", *parts[1:]])
    elif head == "apis":
        metrics_served = request.app[USAGE] is not None and request.app[METRICS_API]
        if len(parts) == 1 and discovery.wants_aggregated(request.headers.get("Accept", "")):
            _get_only(method)

            def named_groups() -> list[JsonDict]:
                items = discovery.aggregated_groups(core.registry, core.subresource_names)
                if metrics_served:
                    items.append(discovery.discovery_group(metrics_api.GROUP, [(metrics_api.VERSION,
                                                                                metrics_api.resource_list())]))
                return items
            return _aggregated_response(request, "discovery/apis", named_groups)
        if len(parts) == 1:
            groups = discovery.api_group_list(core.registry)
            if metrics_served:  # listed as kube-apiserver lists an available aggregated API
                entry = metrics_api.api_group()
                groups["groups"].append({k: entry[k] for k in ("name", "versions", "preferredVersion")})
            return codec.json_response(groups)
        if parts[1] == metrics_api.GROUP:
            if not request.app[METRICS_API]:  # no metrics-server: no APIService, nothing served
                return page_not_found()
            if len(parts) == 2:
                if not metrics_served:
                    return page_not_found()
                return codec.json_response(metrics_api.api_group())
            if len(parts) == 3 and parts[2] == metrics_api.VERSION and metrics_served:
                return codec.json_response(metrics_api.resource_list())
            return await metrics_api.serve(request, parts)
        if len(parts) == 2:
            doc = discovery.api_group(core.registry, parts[1])
            if doc is None:  # no version of the group is served
                return page_not_found()
            return codec.json_response(doc)
        if not core.registry.serves_group_version(parts[1], parts[2]) and not core.registry.serves_group(parts[1]):
            return page_not_found()  # the group scan only on this failure path, never per request
        if len(parts) == 3:
            doc = discovery.resource_list(core.registry, parts[1], parts[2], subresources=core.subresource_names)
            if doc is None:
                raise not_found_path()
            _get_only(method)
            return codec.json_response(doc)
        target = parse_resource_path(core, parts[1:])
    else:
        return page_not_found()
    if target.info.group == "" and target.info.resource == "componentstatuses" and not target.subresource:
        return await component_status.serve(request, target)  # probed, never stored; warns itself
    return await serve_resource(request, core, target, deprecation_warning(target.info))


async def serve_resource(request: web.Request, core: ApiCore, target: Target,
                         deprecation: str | None = None) -> web.StreamResponse:
    """A resource request, once its path is routed (acceptable media type, a route for the
    method). A deprecated version's warning is recorded then, before the verb runs, and goes on
    whatever the verb answers (upstream's AddWarningsHandler around every route's handler)."""
    if target.subresource is None:
        check_acceptable(request)
        _has_route(request.method, target.info.verbs, _COLLECTION_ROUTES if target.name is None else _ITEM_ROUTES)
    if deprecation is None:
        return await _serve_verb(request, core, target)
    record(request, deprecation)
    return add_warning_header(request, await _serve_verb(request, core, target))


async def _serve_verb(request: web.Request, core: ApiCore, target: Target) -> web.StreamResponse:
    method = request.method
    if target.subresource:
        return await subresource(request, core, target)
    if target.name is None:
        if method == "GET":
            return await verbs.list_or_watch(request, core, target)
        if method == "POST":
            return await verbs.create(request, core, target)
        if method == "DELETE":
            return await verbs.delete_collection(request, core, target)
        raise method_not_allowed()
    if method == "GET":
        return await verbs.get(request, core, target)
    if method == "PUT":
        return await verbs.update(request, core, target)
    if method == "PATCH":
        return await verbs.patch(request, core, target)
    if method == "DELETE":
        return await verbs.delete(request, core, target)
    raise method_not_allowed()
