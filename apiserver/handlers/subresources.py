"""Subresources over HTTP: `<resource>/<name>/<sub>` served by the storage the kind registered
(layer L4).

Data flow: `dispatch` -> `core.subresource(info, sub)` (the kind's own storage: pods/binding,
pods/eviction, pods/log, namespaces/finalize; or the generic status / scale one) -> a method it
serves, else 405. Subresources whose body is the parent object (status, finalize) go through
the ordinary update/patch handlers with `subresource` set. pods/log is streamed by `stream_log`
(text/plain, chunked; with `follow` it reads the pod's watch and registers in WATCHES so server
shutdown ends it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from aiohttp import web

from apiserver.core import ApiCore
from apiserver.handlers import codec, exec_stream, verbs
from apiserver.handlers.common import (
    Target,
    default_manager,
    end_stream,
    method_not_allowed,
    respond,
    write_options,
)
from apiserver.handlers.tables import body_printer
from apiserver.keys import WATCHES, WatchStream
from apiserver.strategies.pod_rest import LogPlan, LogREST, StreamREST, follow_lines
from minik3s.api.options import WatchOptions
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)


async def subresource(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    info, name, m = t.info, t.name or "", request.method
    rest = core.subresource(info, t.subresource or "")
    if m not in rest.verbs:
        raise method_not_allowed()
    if m == "GET" and isinstance(rest, LogREST):
        return await stream_log(request, core, t, rest)
    if isinstance(rest, StreamREST):  # exec, attach, portforward: the query names the container
        if rest.name in ("exec", "attach"):
            return await exec_stream.serve(request, core, info, t.namespace, name, rest.name)
        return await exec_stream.serve_portforward(request, core, info, t.namespace, name)
    if m == "GET":
        out = rest.get(core, info, t.namespace, name)
        if isinstance(out, str):
            return web.Response(text=out, content_type="text/plain")
        # a Table of the body: the parent's printer, or the body's own (a Scale's)
        return respond(out, 200, None, request, info if rest.body_is_parent or body_printer(out) else None)
    if m == "PATCH":
        return await verbs.patch(request, core, t, subresource=rest.name)
    if m == "PUT" and rest.body_is_parent:
        return await verbs.update(request, core, t, subresource=rest.name, check_body=rest.decode_check)
    opts = write_options(request)
    body = (codec.decode_object(await codec.read_body(request), codec.media_type(request))
            if rest.takes_body else None)
    if m == "PUT":
        if opts.field_manager is None:  # as every update: the manager named after the user agent
            opts.field_manager = default_manager(request)
        return codec.json_response(await rest.update(core, info, t.namespace, name, body, opts))
    if m == "POST":
        return codec.json_response(await core.subresource_create(info, t.namespace, name, rest.name, body, opts),
                                   status=rest.create_status)
    raise method_not_allowed()


async def _follow(resp: web.StreamResponse, core: ApiCore, t: Target, opts: WatchOptions, plan: LogPlan) -> None:
    """Stream the followed run: the lines a newer state of the pod adds (its watch), and the
    lines a played command prints over time (on the API's clock, `plan.next_due`), until the
    run ends, the pod goes or the byte limit is reached."""
    events = aiter(core.watch(t.info, t.namespace, opts))
    pending: asyncio.Future[tuple[str, JsonDict]] = asyncio.ensure_future(anext(events))
    timer: asyncio.Future[None] | None = None
    try:
        while True:
            due = plan.next_due()
            timer = None
            if due is not None:
                timer = asyncio.ensure_future(core.clock.sleep((due - core.clock.now()).total_seconds()))
            waiting: set[asyncio.Future[Any]] = {pending} if timer is None else {pending, timer}
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if timer is not None and timer not in done:
                timer.cancel()
            if pending not in done:
                await resp.write(plan.render(plan.due_lines(core.clock.now())))
                if plan.exhausted:
                    return
                continue
            try:
                etype, obj = pending.result()
            except StopAsyncIteration:
                return
            if etype == "BOOKMARK":
                pending = asyncio.ensure_future(anext(events))
                continue
            if etype != "MODIFIED":
                return  # DELETED, or an ERROR (the resourceVersion expired): the run is gone
            lines, ended = follow_lines(obj, plan)
            await resp.write(plan.render(lines))
            if ended or plan.exhausted:
                return
            pending = asyncio.ensure_future(anext(events))
    finally:
        for fut in (pending, timer):
            if fut is not None and not fut.done():
                fut.cancel()
        with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, Exception):
            await pending  # its outcome is no longer wanted
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()


async def stream_log(request: web.Request, core: ApiCore, t: Target, rest: LogREST) -> web.StreamResponse:
    """pods/log: the lines so far; with `follow`, then the pod's watch (from the resourceVersion
    the lines were read at) until the followed container run ends, the pod is deleted, the
    client goes away or the server shuts down (registered in WATCHES like a watch).

    Backpressure: each `resp.write` waits for the transport to drain once more than 64 KiB are
    pending (aiohttp's writer), so a client that stops reading holds at most that plus the
    transport's high-water mark, and the handler sleeps until it reads again (kube-apiserver
    likewise blocks on a stalled log stream, with no write timeout). A simulated run adds two
    lines (start, exit), so a follow's whole output is far below that bound."""
    plan = rest.plan(core, t.info, t.namespace, t.name or "", request.query)
    resp = web.StreamResponse(status=200, headers={"Content-Type": "text/plain", "Cache-Control": "no-cache, private"})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    watches = request.app[WATCHES]
    stream: WatchStream | None = None
    try:
        await resp.write(plan.render(plan.lines))
        if plan.follow_id is not None and not plan.exhausted:
            opts = WatchOptions(field_selector=f"metadata.name={plan.pod}", resource_version=plan.resource_version)
            async with asyncio.timeout(None) as deadline:
                stream = WatchStream(resp, deadline)
                watches.add(stream)
                await _follow(resp, core, t, opts, plan)
    except TimeoutError:
        pass  # the server is shutting down
    except ConnectionError:  # reset, broken pipe, or aiohttp's "Connection lost" while draining
        logger.debug("log client went away path=%s", request.path)
        return resp
    finally:
        if stream is not None:
            watches.discard(stream)
    return await end_stream(resp, request, "log")
