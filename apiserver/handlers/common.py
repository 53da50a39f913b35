"""What every HTTP handler shares: the resource path parser, query options, rendering (layer L4).

Data flow: `dispatch` parses the URL into a `Target` with `parse_resource_path`; the verb,
watch and subresource handlers read their options with the helpers here and render with
`respond` (Warning headers, `as=Table` negotiation).

URL shapes (as kube-apiserver):
  /api/v1/<res>[/<name>[/<sub>]]                         cluster-scoped, or all-namespaces list/watch
  /api/v1/namespaces/<ns>/<res>[/<name>[/<sub>]]         namespaced
  /apis/<group>/<version>/...                            the same for named groups
The parser reads the live `ResourceRegistry`, so CRDs are served the moment they are registered.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from multidict import MultiMapping

from apiserver.core import ApiCore
from apiserver.handlers import codec
from apiserver.handlers.tables import body_printer, to_table
from apiserver.keys import REQUEST_USER, REQUEST_WARNINGS
from apiserver.strategies import decode_error
from apiserver.strategies.rest import rv_int
from apiserver.strategies.schema import delete_options_type_error
from minik3s.api import errors
from minik3s.api.errors import ApiError, BadRequestError, MethodNotAllowedError, PathNotFoundError
from minik3s.api.options import DeleteOptions, WriteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.user import ADMIN, UserInfo
from minik3s.api.validation import forbidden, not_supported

# /api/v1/namespaces/<name>/<sub> names the namespace's own subresource, not a namespaced list
NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass(slots=True)
class Target:
    info: ResourceInfo
    namespace: str | None
    name: str | None
    subresource: str | None


def not_found_path() -> PathNotFoundError:
    return PathNotFoundError()


class RouteMethodNotAllowedError(MethodNotAllowedError):
    """The 405 kube-apiserver answers when no route serves the method on a path (go-restful's
    route selection error, rendered by the apiserver's service error handler through
    `NewGenericServerResponse(405, "", GroupResource{}, "", ...)`): the fixed message and an
    empty, but present, `details` object. No `Allow` header: that handler drops go-restful's."""

    def __init__(self) -> None:
        super().__init__("the server does not allow this method on the requested resource")

    shows_empty_details = True


def method_not_allowed() -> RouteMethodNotAllowedError:
    """A method the path has no route for (`PATCH` on a collection, `POST` on an item, `FOO`)."""
    return RouteMethodNotAllowedError()


def parse_resource_path(core: ApiCore, parts: list[str]) -> Target:
    """parts: path split after /api/v1 or /apis/<g>/<v> resolution: [group, version, *rest]."""
    group, version, rest = parts[0], parts[1], parts[2:]
    reg = core.registry
    if not reg.serves_group_version(group, version):
        raise not_found_path()
    namespace: str | None = None
    if len(rest) >= 2 and rest[0] == "namespaces" and not (len(rest) == 3 and rest[2] in NAMESPACE_SUBRESOURCES
                                                            and group == ""):
        # /namespaces/<ns>/<res>... (but /namespaces/<name>/status|finalize is the namespace's subresource)
        if len(rest) >= 3:
            namespace = rest[1]
            rest = rest[2:]
    if not rest:
        raise not_found_path()
    info = reg.get(group, version, rest[0])
    if info is None:
        raise not_found_path()
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if len(rest) > 3:
        raise not_found_path()
    if info.namespaced and namespace is None and name is not None:
        raise not_found_path()
    if not info.namespaced and namespace is not None:
        raise not_found_path()
    if sub is not None and sub not in info.subresources and not core.serves_subresource(info, sub):
        raise not_found_path()
    return Target(info, namespace, name, sub)


def retry_after(err: ApiError) -> dict[str, str] | None:
    """ErrorNegotiated: a Status with `details.retryAfterSeconds > 0` is mirrored in a Retry-After
    header (client-go then retries the request itself). Only errors that ask for it get one: the
    eviction of a pod whose PDB is "still being processed" (10 s), never a plain PDB refusal."""
    secs = err.details.get("retryAfterSeconds") if isinstance(err.details, dict) else None
    if isinstance(secs, int) and not isinstance(secs, bool) and secs > 0:
        return {"Retry-After": str(secs)}
    return None


def bool_param(v: str | None) -> bool:
    """A boolean query parameter as upstream's Convert_Slice_string_To_bool reads it: absent,
    "0" or "false" (any case) is false, any other value, the empty one included, is true."""
    return v is not None and v != "0" and v.lower() != "false"


def int_param(q: MultiMapping[str], name: str) -> int | None:
    v = q.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise BadRequestError(f'invalid value for {name}: "{v}"') from None


def check_list_options(q: MultiMapping[str], *, watch: bool) -> None:
    """Validate list/watch parameters before anything is read or a response is started, as
    upstream's ValidateListOptions does (422 on `ListOptions.meta.k8s.io`); a resourceVersion that
    is not an unsigned integer is a 400, a bad timeoutSeconds or limit too."""
    rv = q.get("resourceVersion") or ""
    if rv:
        rv_int(rv)
    int_param(q, "timeoutSeconds")
    int_param(q, "limit")
    match = q.get("resourceVersionMatch") or ""
    has_initial = q.get("sendInitialEvents") is not None
    cont = q.get("continue") or ""
    causes: list[JsonDict] = []
    if watch:
        if has_initial and match != "NotOlderThan":
            causes.append(forbidden("resourceVersionMatch",
                                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
        if match:
            if not has_initial:
                causes.append(forbidden("resourceVersionMatch",
                                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                                        "provided"))
            if match != "NotOlderThan":
                causes.append(not_supported("resourceVersionMatch", match, ["NotOlderThan"]))
            if cont:
                causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is "
                                                                "provided"))
    else:
        if match:
            if not rv:
                causes.append(forbidden("resourceVersionMatch",
                                        "resourceVersionMatch is forbidden unless resourceVersion is provided"))
            if cont:
                causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is "
                                                                "provided"))
            if match not in ("Exact", "NotOlderThan"):
                causes.append(not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]))
            if match == "Exact" and rv == "0":
                causes.append(forbidden("resourceVersionMatch",
                                        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
        if has_initial:
            causes.append(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    if causes:
        parts = [f"{c['field']}: {c['message']}" for c in causes]
        summary = errors.aggregate(parts)
        raise errors.InvalidError(f'ListOptions.meta.k8s.io "" is invalid: {summary}',
                                  details={**errors.status_details("ListOptions", "meta.k8s.io", ""),
                                           "causes": causes})


_ACCEPTABLE = frozenset({"*/*", "application/*", "application/json", "application/yaml",
                         "application/vnd.kubernetes.protobuf"})


def check_acceptable(request: web.Request) -> None:
    """406 when no entry of the Accept header names a media type the API serves (upstream's
    content negotiation); a missing or empty header accepts anything."""
    accept = request.headers.get("Accept", "")
    if not accept.strip():
        return
    for entry in accept.split(","):
        mt = entry.split(";", 1)[0].strip().lower()
        if not mt or mt in _ACCEPTABLE:
            return
    raise errors.NotAcceptableError(
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf")


def write_options(request: web.Request) -> WriteOptions:
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
    user = request.get(REQUEST_USER)  # set by authentication / impersonation; unset on plain loopback
    opts = WriteOptions(dry_run=bool(dry), field_manager=fm, field_validation=fv, force=bool_param(q.get("force")),
                        user=request_user(request), authorize=isinstance(user, UserInfo))
    # the same list: an error answer carries what was collected before it (a webhook's warnings
    # beside another one's denial, as kube-apiserver's dispatcher records them first); a
    # deprecated resource's warning, recorded before the verb ran, stays first
    opts.warn(request.get(REQUEST_WARNINGS) or ())
    request[REQUEST_WARNINGS] = opts.warnings
    return opts


def warning_headers(warnings: list[str] | None) -> dict[str, str]:
    """RFC 7234 warn-code 299 headers (kubectl prints "Warning: <text>"), at most 20."""
    if not warnings:
        return {}
    return {"Warning": header_value(", ".join('299 - "' + w.replace('"', '\\"') + '"' for w in warnings[:20]))}


# what a header value cannot carry: control characters but HTAB (aiohttp refuses to write them)
_HEADER_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def header_value(text: str) -> str:
    """A response header value as Go's http.Header.Write writes it: line breaks become spaces
    (headerNewlineToSpace), so a request's text echoed into a header (a warning naming an unknown
    field `"a\nb"`, an `Audit-ID`) can never end the header early; the other control characters,
    which aiohttp will not write (Go writes them raw), become spaces too."""
    return _HEADER_CONTROL.sub(" ", text)


def default_manager(request: web.Request) -> str:
    ua = request.headers.get("User-Agent", "")
    return (ua.split("/", 1)[0] or "unknown")[:128]


def delete_options(request: web.Request, raw: bytes) -> DeleteOptions:
    body = codec.decode_delete_options(raw, codec.media_type(request)) or {}
    bad = delete_options_type_error(body)
    if bad:
        raise BadRequestError(bad)
    q = request.query
    gp = int_param(q, "gracePeriodSeconds")
    if gp is not None and "gracePeriodSeconds" not in body:
        body["gracePeriodSeconds"] = gp
    if q.get("propagationPolicy") and "propagationPolicy" not in body:
        body["propagationPolicy"] = q.get("propagationPolicy")
    if q.get("orphanDependents") and "orphanDependents" not in body:
        body["orphanDependents"] = bool_param(q.get("orphanDependents"))
    if q.getall("dryRun", []):
        body["dryRun"] = ["All"]
    try:
        opts = DeleteOptions.from_dict(body)
    except (TypeError, ValueError, AttributeError):
        raise BadRequestError("invalid DeleteOptions") from None
    opts.user = request_user(request)
    return opts


def request_user(request: web.Request) -> UserInfo:
    """The authenticated (or impersonated) user of the request; on the plain-HTTP loopback
    listener (nothing set) every request is the admin's (`ADMIN`)."""
    user = request.get(REQUEST_USER)
    return user if isinstance(user, UserInfo) else ADMIN


def check_decodable(info: ResourceInfo, body: Any) -> None:
    """kube-apiserver decodes a create/update body into the Go type first: a value of the wrong
    JSON type is a 400 before anything else happens."""
    msg = decode_error(info, body)
    if msg:
        raise BadRequestError(msg)


def wants_table(request: web.Request) -> bool:
    return "as=Table" in request.headers.get("Accept", "")


def table(request: web.Request, info: ResourceInfo, objs: list[JsonDict], list_meta: JsonDict | None) -> JsonDict:
    inc = request.query.get("includeObject") or "Metadata"
    return to_table(info, objs, now=datetime.now(UTC), include_object=inc, list_meta=list_meta)


def respond(obj: Any, status: int, opts: WriteOptions | None, request: web.Request,
            info: ResourceInfo | None = None) -> web.StreamResponse:
    headers = warning_headers(opts.warnings if opts is not None else None)
    if info is not None and wants_table(request) and isinstance(obj, dict) and obj.get("kind") != "Status":
        obj = to_table(info, [obj], now=datetime.now(UTC), include_object=request.query.get("includeObject") or "Metadata",
                       printer=body_printer(obj))
    return codec.json_response(obj, status=status, headers=headers or None)


logger = logging.getLogger(__name__)


async def end_stream(resp: web.StreamResponse, request: web.Request, what: str) -> web.StreamResponse:
    """End a long-running response (a watch, a followed log) with a complete chunked body; a
    client that already went away is only logged (`what` names the stream in the log)."""
    try:
        await resp.write_eof()
    except (ConnectionError, RuntimeError):
        logger.debug("%s client went away before the end of the stream path=%s", what, request.path)
    return resp
