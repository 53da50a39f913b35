"""Subresources over HTTP: `<resource>/<name>/<sub>` served by the storage the kind registered
(layer L4).

Data flow: `dispatch` -> `core.subresource(info, sub)` (the kind's own storage: pods/binding,
pods/eviction, pods/log, namespaces/finalize; or the generic status / scale one) -> a method it
serves, else 405. Subresources whose body is the parent object (status, finalize) go through
the ordinary update/patch handlers with `subresource` set.
"""

from __future__ import annotations

from aiohttp import web

from apiserver.core import ApiCore
from apiserver.handlers import codec, verbs
from apiserver.handlers.common import Target, method_not_allowed, respond, write_options


async def subresource(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    info, name, m = t.info, t.name or "", request.method
    rest = core.subresource(info, t.subresource or "")
    if m not in rest.verbs:
        raise method_not_allowed(m, t)
    if m == "GET":
        out = rest.get(core, info, t.namespace, name)
        if isinstance(out, str):
            return web.Response(text=out, content_type="text/plain")
        return respond(out, 200, None, request, info if rest.body_is_parent else None)
    if m == "PATCH":
        return await verbs.patch(request, core, t, subresource=rest.name)
    if m == "PUT" and rest.body_is_parent:
        return await verbs.update(request, core, t, subresource=rest.name, check_body=rest.decode_check)
    opts = write_options(request)
    body = (codec.decode_object(await codec.read_body(request), codec.media_type(request))
            if rest.takes_body else None)
    if m == "PUT":
        return codec.json_response(await rest.update(core, info, t.namespace, name, body, opts))
    if m == "POST":
        return codec.json_response(await rest.create(core, info, t.namespace, name, body, opts),
                                   status=rest.create_status)
    raise method_not_allowed(m, t)
