"""The REST verbs over HTTP: list (or watch), create, get, update, patch, delete,
deletecollection (layer L4).

Data flow: `dispatch` -> one handler here -> read query options and decode the body (`codec`)
-> the request core (`ApiCore`), which does every semantic step -> `respond` renders the
object (or a Table), with the warnings the core collected. A JSON LIST is written from the
store's committed encoding of each item (`list_body`), the same bytes without encoding again.
"""

from __future__ import annotations

from typing import cast

import orjson
from aiohttp import web

from apiserver.core import ApiCore, ListPage
from apiserver.handlers import codec
from apiserver.handlers.authn import token_review
from apiserver.handlers.common import (
    Target,
    bool_param,
    check_decodable,
    check_list_options,
    default_manager,
    delete_options,
    int_param,
    method_not_allowed,
    request_user,
    respond,
    table,
    wants_table,
    write_options,
)
from apiserver.handlers.watch import watch
from apiserver.keys import AUTHORIZER
from apiserver.reviews import review
from apiserver.storage.interface import Store
from minik3s.api.options import ListOptions


async def list_or_watch(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    q = request.query
    is_watch = bool_param(q.get("watch"))
    check_list_options(q, watch=is_watch)
    if is_watch:
        return await watch(request, core, t)
    opts = ListOptions(label_selector=q.get("labelSelector"), field_selector=q.get("fieldSelector"),
                       limit=int_param(q, "limit"), continue_=q.get("continue") or None,
                       resource_version=q.get("resourceVersion"), resource_version_match=q.get("resourceVersionMatch"))
    await core.wait_fresh(opts)
    page = core.list_page(t.info, t.namespace, opts)
    if wants_table(request):
        return codec.json_response(table(request, t.info, page.items, page.metadata))
    body = list_body(page, core.store)
    return web.Response(body=body, content_type=codec.JSON_CT)


def list_body(page: ListPage, store: Store) -> bytes:
    """The JSON of `page.to_dict()` plus the closing newline, byte for byte what
    `codec.json_response` writes, built from the store's committed encoding of each item: the
    envelope is encoded, the items are joined, no object is encoded again (a 50,000-pod LIST:
    ~100 MB that orjson would otherwise produce from the dicts). A converted view, or an item
    whose encoding is missing, is encoded from the dicts."""
    keys = page.keys
    encoded = store.encoded
    items = [encoded(k) for k in keys] if keys is not None else None
    if items is None or None in items:
        return orjson.dumps(page.to_dict()) + b"\n"
    head = orjson.dumps({"kind": page.kind, "apiVersion": page.api_version, "metadata": page.metadata})
    # '{"kind":..,"metadata":{..}}' -> '{"kind":..,"metadata":{..},"items":[' + items + ']}\n'
    head = head[:-1] + b',"items":['
    parts = cast("list[bytes]", items)
    if not parts:
        return head + b"]}\n"
    # one join copies the body once: the envelope rides on the first and last items
    parts[0] = head + parts[0]
    parts[-1] = parts[-1] + b"]}\n"
    return b",".join(parts)


async def get(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    return respond(core.get(t.info, t.namespace, t.name or ""), 200, None, request, t.info)


async def create(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    opts = write_options(request)
    raw = await codec.read_body(request)
    if t.info.virtual:
        # reviews are answered for the request's user (access reviews from the authorizer,
        # TokenReview from the authenticators), never stored
        body = codec.decode_object(raw, codec.media_type(request))
        if t.info.group == "authentication.k8s.io" and t.info.kind == "TokenReview":
            return codec.json_response(token_review(request, t.info, body), status=201)
        return codec.json_response(review(t.info, body, user=request_user(request),
                                          authorizer=request.app[AUTHORIZER], namespace=t.namespace), status=201)
    body = codec.decode_object(raw, codec.media_type(request))
    if opts.field_validation != "Ignore":
        opts.duplicate_fields = codec.duplicate_fields(raw, codec.media_type(request), body)
    if opts.field_manager is None:
        opts.field_manager = default_manager(request)
    check_decodable(t.info, body)
    obj = await core.create(t.info, t.namespace, body, opts)
    return respond(obj, 201, opts, request, t.info)


async def update(request: web.Request, core: ApiCore, t: Target, subresource: str | None = None,
                 *, check_body: bool = True) -> web.StreamResponse:
    opts = write_options(request)
    if opts.field_manager is None:
        opts.field_manager = default_manager(request)
    raw = await codec.read_body(request)
    body = codec.decode_object(raw, codec.media_type(request))
    if opts.field_validation != "Ignore":
        opts.duplicate_fields = codec.duplicate_fields(raw, codec.media_type(request), body)
    if check_body:
        check_decodable(t.info, body)
    existed = core.exists(t.info, t.namespace, t.name or "")
    obj = await core.update(t.info, t.namespace, t.name or "", body, opts, subresource=subresource)
    return respond(obj, 200 if existed else 201, opts, request, t.info)


async def patch(request: web.Request, core: ApiCore, t: Target, subresource: str | None = None) -> web.StreamResponse:
    opts = write_options(request)
    raw = await codec.read_body(request)
    ptype, body = codec.decode_patch(raw, codec.media_type(request))
    if opts.field_manager is None and ptype != "apply":
        opts.field_manager = default_manager(request)
    existed = core.exists(t.info, t.namespace, t.name or "")
    obj = await core.patch(t.info, t.namespace, t.name or "", ptype, body, opts, subresource=subresource)
    return respond(obj, 200 if existed or ptype != "apply" else 201, opts, request, t.info)


async def delete(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    raw = await codec.read_body(request)
    opts = delete_options(request, raw)
    obj, finished = await core.delete(t.info, t.namespace, t.name or "", opts)
    status = 200
    if not finished and opts.orphan_dependents is False:
        status = 202
    return codec.json_response(obj, status=status)


async def delete_collection(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    if "deletecollection" not in t.info.verbs:
        raise method_not_allowed()
    raw = await codec.read_body(request)
    opts = delete_options(request, raw)
    q = request.query
    lst = await core.delete_collection(t.info, t.namespace, ListOptions(label_selector=q.get("labelSelector"),
                                                                        field_selector=q.get("fieldSelector")), opts)
    return codec.json_response(lst)
