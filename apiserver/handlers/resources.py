"""Path parsing and per-verb HTTP handlers (layer L4).

URL shapes (as kube-apiserver):
  /api/v1/<res>[/<name>[/<sub>]]                         cluster-scoped, or all-namespaces list/watch
  /api/v1/namespaces/<ns>/<res>[/<name>[/<sub>]]         namespaced
  /apis/<group>/<version>/...                            the same for named groups
One catch-all route parses the path against the live `ResourceRegistry`, so CRDs are served
the moment they are registered.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import web

from apiserver.app import CORE, EXPLAIN, OPENAPI_CACHE, READY, WATCH_ENCODE_CACHE, WATCHES
from apiserver.core import ApiCore, meta_of
from apiserver.handlers import codec, discovery
from apiserver.reviews import review
from minik3s.api import errors
from minik3s.api.errors import ApiError, BadRequestError, MethodNotAllowedError, NotFoundError
from minik3s.api.options import DeleteOptions, ListOptions, WatchOptions, WriteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

NAMESPACE_SUBRESOURCES = ("status", "finalize")
DEFAULT_WATCH_TIMEOUT = 1800.0


@dataclass(slots=True)
class Target:
    info: ResourceInfo
    namespace: str | None
    name: str | None
    subresource: str | None


def _not_found_path() -> NotFoundError:
    return NotFoundError("the server could not find the requested resource", details={})


def parse_resource_path(core: ApiCore, parts: list[str]) -> Target:
    """parts: path split after /api/v1 or /apis/<g>/<v> resolution: [group, version, *rest]."""
    group, version, rest = parts[0], parts[1], parts[2:]
    reg = core.registry
    if not reg.for_group_version(group, version):
        raise _not_found_path()
    namespace: str | None = None
    if len(rest) >= 2 and rest[0] == "namespaces" and not (len(rest) == 3 and rest[2] in NAMESPACE_SUBRESOURCES
                                                            and group == ""):
        # /namespaces/<ns>/<res>... (but /namespaces/<name>/status|finalize is the namespace's subresource)
        if len(rest) >= 3:
            namespace = rest[1]
            rest = rest[2:]
    if not rest:
        raise _not_found_path()
    info = reg.get(group, version, rest[0])
    if info is None:
        raise _not_found_path()
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if len(rest) > 3:
        raise _not_found_path()
    if info.namespaced and namespace is None and name is not None:
        raise _not_found_path()
    if not info.namespaced and namespace is not None:
        raise _not_found_path()
    if sub is not None and sub not in info.subresources and not (sub == "log" and info.resource == "pods"):
        raise _not_found_path()
    return Target(info, namespace, name, sub)


# ---------------------------------------------------------------------------- middleware
@web.middleware
async def error_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    try:
        resp: web.StreamResponse = await handler(request)
        return resp
    except ApiError as e:
        return codec.json_response(e.to_status(), status=e.code, headers=_retry_after(e))
    except web.HTTPException as e:
        if e.status == 413:
            err: ApiError = errors.RequestEntityTooLargeError("the server has received a request that is too large")
        elif e.status == 405:
            err = MethodNotAllowedError("the server does not allow this method on the requested resource")
        elif e.status == 404:
            err = _not_found_path()
        elif e.status < 400:
            raise
        else:
            err = ApiError(e.reason or "error", code=e.status, reason="BadRequest" if e.status == 400 else "InternalError")
        return codec.json_response(err.to_status(), status=err.code)
    except (asyncio.CancelledError, ConnectionResetError):
        raise
    except Exception as e:  # noqa: BLE001 - the one place that turns a fault into a 500 Status
        logger.exception("internal error serving method=%s path=%s", request.method, request.path)
        err = errors.InternalError(f"Internal error occurred: {type(e).__name__}: {e}")
        return codec.json_response(err.to_status(), status=500)


# ---------------------------------------------------------------------------- helpers
def _retry_after(err: ApiError) -> dict[str, str] | None:
    """ErrorNegotiated: a Status with `details.retryAfterSeconds > 0` is mirrored in a Retry-After
    header (client-go then retries the request itself). Only errors that ask for it get one: the
    eviction of a pod whose PDB is "still being processed" (10 s), never a plain PDB refusal."""
    secs = err.details.get("retryAfterSeconds") if isinstance(err.details, dict) else None
    if isinstance(secs, int) and not isinstance(secs, bool) and secs > 0:
        return {"Retry-After": str(secs)}
    return None


def _bool(v: str | None) -> bool:
    return v is not None and v.lower() in ("true", "1", "yes")


def _int(q: Any, name: str) -> int | None:
    v = q.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise BadRequestError(f'invalid value for {name}: "{v}"') from None


def _write_options(request: web.Request) -> WriteOptions:
    q = request.query
    fv = q.get("fieldValidation") or "Warn"
    if fv not in ("Strict", "Warn", "Ignore"):
        raise BadRequestError(f"fieldValidation must be one of Ignore, Warn or Strict, got {fv}")
    dry = q.getall("dryRun", [])
    for d in dry:
        if d != "All":
            raise BadRequestError(f'Invalid value: "{d}": supported values: "All"')
    fm = q.get("fieldManager")
    if fm is not None and len(fm) > 128:
        raise errors.invalid("", "", [errors.cause("fieldManager", "Too long: may not be more than 128 bytes",
                                                   "FieldValueTooLong")])
    return WriteOptions(dry_run=bool(dry), field_manager=fm, field_validation=fv, force=_bool(q.get("force")))


def _default_manager(request: web.Request) -> str:
    ua = request.headers.get("User-Agent", "")
    return (ua.split("/", 1)[0] or "unknown")[:128]


def _respond(obj: Any, status: int, opts: WriteOptions | None, request: web.Request,
             info: ResourceInfo | None = None) -> web.StreamResponse:
    headers: dict[str, str] = {}
    if opts is not None and opts.warnings:
        # RFC 7234 warn-code 299; kubectl prints "Warning: <text>"
        headers["Warning"] = ", ".join('299 - "' + w.replace('"', '\\"') + '"' for w in opts.warnings[:20])
    if info is not None and _wants_table(request) and isinstance(obj, dict) and obj.get("kind") != "Status":
        obj = _table(request, info, [obj], None)
    return codec.json_response(obj, status=status, headers=headers or None)


def _wants_table(request: web.Request) -> bool:
    accept = request.headers.get("Accept", "")
    return "as=Table" in accept


def _table(request: web.Request, info: ResourceInfo, objs: list[JsonDict], list_meta: JsonDict | None) -> JsonDict:
    from apiserver.handlers.tables import to_table

    inc = request.query.get("includeObject") or "Metadata"
    return to_table(info, objs, now=datetime.now(UTC), include_object=inc, list_meta=list_meta)


# ---------------------------------------------------------------------------- dispatch
async def dispatch(request: web.Request) -> web.StreamResponse:
    core = request.app[CORE]
    path = request.path
    parts = [p for p in path.split("/") if p]
    method = request.method
    if not parts:
        return codec.json_response({"paths": ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/openapi/v2",
                                              "/openapi/v3", "/readyz", "/version"]})
    head = parts[0]
    if head in ("healthz", "livez", "readyz"):
        if head == "readyz" and not request.app[READY].is_set():
            return web.Response(text="[-]minik3s-ready failed: not ready\nreadyz check failed", status=500)
        return web.Response(text="ok", content_type="text/plain")
    if head == "version":
        return codec.json_response(discovery.VERSION_INFO)
    if head == "openapi":
        return _openapi(request, parts)
    if head == "debug" and len(parts) >= 2 and parts[1] == "minik3s":
        return _debug(request, parts[2:])
    if head == "api":
        if len(parts) == 1:
            return codec.json_response(discovery.api_versions())
        if len(parts) == 2:
            doc = discovery.resource_list(core.registry, "", parts[1])
            if doc is None:
                raise _not_found_path()
            return codec.json_response(doc)
        target = parse_resource_path(core, ["", *parts[1:]])
    elif head == "apis":
        if len(parts) == 1:
            return codec.json_response(discovery.api_group_list(core.registry))
        if len(parts) == 2:
            doc = discovery.api_group(core.registry, parts[1])
            if doc is None:
                raise _not_found_path()
            return codec.json_response(doc)
        if len(parts) == 3:
            doc = discovery.resource_list(core.registry, parts[1], parts[2])
            if doc is None:
                raise _not_found_path()
            return codec.json_response(doc)
        target = parse_resource_path(core, parts[1:])
    else:
        raise _not_found_path()
    if target.subresource:
        return await _subresource(request, core, target)
    if target.name is None:
        if method == "GET":
            return await _list_or_watch(request, core, target)
        if method == "POST":
            return await _create(request, core, target)
        if method == "DELETE":
            return await _delete_collection(request, core, target)
        raise _method_not_allowed(method, target)
    if method == "GET":
        return _respond(core.get(target.info, target.namespace, target.name), 200, None, request, target.info)
    if method == "PUT":
        return await _update(request, core, target)
    if method == "PATCH":
        return await _patch(request, core, target)
    if method == "DELETE":
        return await _delete(request, core, target)
    raise _method_not_allowed(method, target)


def _method_not_allowed(method: str, target: Target) -> MethodNotAllowedError:
    return MethodNotAllowedError("the server does not allow this method on the requested resource",
                                 details={"kind": target.info.resource, "name": target.name or "",
                                          **({"group": target.info.group} if target.info.group else {})})


async def _list_or_watch(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    q = request.query
    if _bool(q.get("watch")):
        return await _watch(request, core, t)
    opts = ListOptions(label_selector=q.get("labelSelector"), field_selector=q.get("fieldSelector"),
                       limit=_int(q, "limit"), continue_=q.get("continue") or None,
                       resource_version=q.get("resourceVersion"), resource_version_match=q.get("resourceVersionMatch"))
    lst = core.list(t.info, t.namespace, opts)
    if _wants_table(request):
        return codec.json_response(_table(request, t.info, lst["items"], lst["metadata"]))
    return codec.json_response(lst)


async def _watch(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    q = request.query
    timeout = _int(q, "timeoutSeconds")
    opts = WatchOptions(label_selector=q.get("labelSelector"), field_selector=q.get("fieldSelector"),
                        resource_version=q.get("resourceVersion"), allow_bookmarks=_bool(q.get("allowWatchBookmarks")),
                        timeout_seconds=float(timeout) if timeout else None,
                        send_initial_events=_bool(q.get("sendInitialEvents")))
    # validate selectors before committing to a 200
    core.compile_selectors(t.info, opts.label_selector, opts.field_selector)
    table = _wants_table(request)
    resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json",
                                                   "Cache-Control": "no-cache, private"})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    watches = request.app[WATCHES]
    resp._minik3s_task = asyncio.current_task()  # type: ignore[attr-defined]
    watches.add(resp)
    duration = opts.timeout_seconds if opts.timeout_seconds else DEFAULT_WATCH_TIMEOUT * (1 + random.random())
    first_table = True
    encode_cache = request.app[WATCH_ENCODE_CACHE]
    try:
        async with asyncio.timeout(duration):
            async for etype, obj in core.watch(t.info, t.namespace, opts):
                if table and etype not in ("ERROR", "BOOKMARK"):
                    from apiserver.handlers.tables import watch_table_event

                    ev = watch_table_event(t.info, etype, obj, datetime.now(UTC),
                                           include_object=q.get("includeObject") or "Metadata",
                                           no_headers=not first_table)
                    first_table = False
                    line = orjson.dumps(ev) + b"\n"
                elif etype == "BOOKMARK":
                    bm = {"kind": t.info.kind, "apiVersion": t.info.api_version, **obj}
                    line = orjson.dumps({"type": etype, "object": bm}) + b"\n"
                else:
                    rv = (obj.get("metadata") or {}).get("resourceVersion")
                    ck = (etype, rv)  # a resourceVersion names one object state cluster-wide
                    cached = encode_cache.get(ck)  # one encoding per event for all watchers
                    line = cached if cached is not None else b""
                    if cached is None:
                        line = orjson.dumps({"type": etype, "object": obj}) + b"\n"
                        if len(encode_cache) > 8192:
                            encode_cache.clear()
                        encode_cache[ck] = line
                await resp.write(line)
    except TimeoutError:
        pass
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        watches.discard(resp)
    try:
        await resp.write_eof()
    except (ConnectionResetError, RuntimeError):
        pass
    return resp



async def _create(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    opts = _write_options(request)
    raw = await codec.read_body(request)
    if t.info.virtual:
        # reviews are answered from the kind alone: their attributes do not change the answer
        # (every request is an admin's), so a protobuf review we have no field table for is fine
        try:
            body = codec.decode_object(raw, codec.media_type(request))
        except errors.UnsupportedMediaTypeError:
            body = {}
        return codec.json_response(review(t.info, body), status=201)
    body = codec.decode_object(raw, codec.media_type(request))
    if t.info.resource == "bindings" and t.info.group == "":
        if not isinstance(body, dict):
            raise BadRequestError("the object provided is not a JSON object")
        name = meta_of(body).get("name") or ""
        res = await core.bind(t.namespace or "", name, body, opts)
        return codec.json_response(res, status=201)
    if opts.field_manager is None:
        opts.field_manager = _default_manager(request)
    _check_decodable(t.info, body)
    obj = await core.create(t.info, t.namespace, body, opts)
    return _respond(obj, 201, opts, request, t.info)


def _check_decodable(info: ResourceInfo, body: Any) -> None:
    """kube-apiserver decodes a create/update body into the Go type first: a value of the wrong
    JSON type is a 400 before anything else happens."""
    from apiserver import compat

    msg = compat.decode_error(info, body)
    if msg:
        raise BadRequestError(msg)


async def _update(request: web.Request, core: ApiCore, t: Target, subresource: str | None = None
                  ) -> web.StreamResponse:
    opts = _write_options(request)
    if opts.field_manager is None:
        opts.field_manager = _default_manager(request)
    raw = await codec.read_body(request)
    body = codec.decode_object(raw, codec.media_type(request))
    if subresource is None or subresource == "status":
        _check_decodable(t.info, body)
    existed = core.store.get(t.info.key(t.namespace if t.info.namespaced else None, t.name or "")) is not None
    obj = await core.update(t.info, t.namespace, t.name or "", body, opts, subresource=subresource)
    return _respond(obj, 200 if existed else 201, opts, request, t.info)


async def _patch(request: web.Request, core: ApiCore, t: Target, subresource: str | None = None
                 ) -> web.StreamResponse:
    opts = _write_options(request)
    raw = await codec.read_body(request)
    ptype, body = codec.decode_patch(raw, codec.media_type(request))
    if opts.field_manager is None and ptype != "apply":
        opts.field_manager = _default_manager(request)
    existed = core.store.get(t.info.key(t.namespace if t.info.namespaced else None, t.name or "")) is not None
    obj = await core.patch(t.info, t.namespace, t.name or "", ptype, body, opts, subresource=subresource)
    return _respond(obj, 200 if existed or ptype != "apply" else 201, opts, request, t.info)


def _delete_options(request: web.Request, raw: bytes) -> DeleteOptions:
    body = codec.decode_delete_options(raw, codec.media_type(request)) or {}
    q = request.query
    gp = _int(q, "gracePeriodSeconds")
    if gp is not None and "gracePeriodSeconds" not in body:
        body["gracePeriodSeconds"] = gp
    if q.get("propagationPolicy") and "propagationPolicy" not in body:
        body["propagationPolicy"] = q.get("propagationPolicy")
    if q.get("orphanDependents") and "orphanDependents" not in body:
        body["orphanDependents"] = _bool(q.get("orphanDependents"))
    if q.getall("dryRun", []):
        body["dryRun"] = ["All"]
    try:
        return DeleteOptions.from_dict(body)
    except (TypeError, ValueError):
        raise BadRequestError("invalid DeleteOptions") from None


async def _delete(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    raw = await codec.read_body(request)
    opts = _delete_options(request, raw)
    obj, finished = await core.delete(t.info, t.namespace, t.name or "", opts)
    status = 200
    if not finished and opts.orphan_dependents is False:
        status = 202
    return codec.json_response(obj, status=status)


async def _delete_collection(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    if "deletecollection" not in t.info.verbs:
        raise _method_not_allowed("DELETE", t)
    raw = await codec.read_body(request)
    opts = _delete_options(request, raw)
    q = request.query
    lst = await core.delete_collection(t.info, t.namespace, ListOptions(label_selector=q.get("labelSelector"),
                                                                        field_selector=q.get("fieldSelector")), opts)
    return codec.json_response(lst)


async def _subresource(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    sub = t.subresource
    m = request.method
    info = t.info
    name = t.name or ""
    if sub == "status":
        if m == "GET":
            return _respond(core.get(info, t.namespace, name), 200, None, request, info)
        if m == "PUT":
            return await _update(request, core, t, subresource="status")
        if m == "PATCH":
            return await _patch(request, core, t, subresource="status")
    elif sub == "scale":
        if m == "GET":
            return codec.json_response(core.get_scale(info, t.namespace, name))
        if m == "PUT":
            opts = _write_options(request)
            raw = await codec.read_body(request)
            body = codec.decode_object(raw, codec.media_type(request))
            return codec.json_response(await core.update_scale(info, t.namespace, name, body, opts))
        if m == "PATCH":
            return await _patch(request, core, t, subresource="scale")
    elif sub == "binding":
        if m == "POST":
            opts = _write_options(request)
            raw = await codec.read_body(request)
            body = codec.decode_object(raw, codec.media_type(request))
            if isinstance(body, dict):
                bname = meta_of(body).get("name")
                if bname and bname != name:
                    raise BadRequestError("name in URL does not match name in Binding object")
            return codec.json_response(await core.bind(t.namespace or "", name, body, opts), status=201)
    elif sub == "eviction":
        if m == "POST":
            raw = await codec.read_body(request)
            body = codec.decode_object(raw, codec.media_type(request))
            return codec.json_response(await core.evict(t.namespace or "", name, body), status=201)
    elif sub == "finalize":
        if m == "PUT":
            return await _update(request, core, t, subresource="finalize")
    elif sub == "log":
        if m == "GET":
            pod = core.get(info, t.namespace, name)
            node = (pod.get("spec") or {}).get("nodeName") or "<none>"
            return web.Response(text=f"minik3s: simulated container of pod {t.namespace}/{name} on node {node}\n",
                                content_type="text/plain")
    raise _method_not_allowed(m, t)


# ---------------------------------------------------------------------------- openapi & debug
def _openapi(request: web.Request, parts: list[str]) -> web.StreamResponse:
    from apiserver import openapi

    core = request.app[CORE]
    cache = request.app[OPENAPI_CACHE]
    if len(parts) >= 2 and parts[1] == "v2":
        doc = cache.get("v2")
        if doc is None:
            doc = cache["v2"] = codec.dumps(openapi.openapi_v2(core.registry))
        return web.Response(body=doc, content_type="application/json")
    if len(parts) >= 2 and parts[1] == "v3":
        if len(parts) == 2:
            doc = cache.get("v3")
            if doc is None:
                doc = cache["v3"] = codec.dumps(openapi.openapi_v3_root(core.registry))
            return web.Response(body=doc, content_type="application/json")
        rest = parts[2:]
        if rest[0] == "api" and len(rest) == 2:
            group, version = "", rest[1]
        elif rest[0] == "apis" and len(rest) == 3:
            group, version = rest[1], rest[2]
        else:
            raise _not_found_path()
        key = f"v3/{group}/{version}"
        doc = cache.get(key)
        if doc is None:
            if not core.registry.for_group_version(group, version):
                raise _not_found_path()
            doc = cache[key] = codec.dumps(openapi.openapi_v3_group_version(core.registry, group, version))
        return web.Response(body=doc, content_type="application/json")
    raise _not_found_path()


def _debug(request: web.Request, parts: list[str]) -> web.StreamResponse:
    # /debug/minik3s/explain/namespaces/<ns>/pods/<name>
    if len(parts) == 5 and parts[0] == "explain" and parts[1] == "namespaces" and parts[3] == "pods":
        provider = request.app[EXPLAIN]
        if provider is None:
            raise errors.ServiceUnavailableError("the scheduler is not running in this server")
        doc = provider(parts[2], parts[4])  # type: ignore[operator]
        if doc is None:
            raise NotFoundError(f'no scheduling attempt recorded for pod "{parts[2]}/{parts[4]}"',
                                details={"name": parts[4], "kind": "pods"})
        return codec.json_response(doc)
    raise _not_found_path()
