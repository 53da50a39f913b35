"""Watch streams over HTTP: one chunked JSON line per event (layer L4).

Data flow: `core.watch` yields (type, object) -> encoded once per event state and shared by
every watcher through `WATCH_ENCODE_CACHE` (or rendered as a Table row for `as=Table`) ->
written to the chunked response. The stream registers a `WatchStream` in `WATCHES` so server
shutdown can end it (by moving its deadline to now); it ends at `timeoutSeconds` (default: 30-60 min, as kube-apiserver's
randomised MinRequestTimeout) or when the client goes away.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import orjson
from aiohttp import web

from apiserver.core import ApiCore
from apiserver.handlers.common import Target, bool_param, int_param, wants_table
from apiserver.handlers.tables import watch_table_event
from apiserver.keys import WATCH_ENCODE_CACHE, WATCHES, WatchStream
from minik3s.api.options import WatchOptions

logger = logging.getLogger(__name__)

DEFAULT_WATCH_TIMEOUT = 1800.0
ENCODE_CACHE_MAX = 8192


async def watch(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    q = request.query
    timeout = int_param(q, "timeoutSeconds")
    opts = WatchOptions(label_selector=q.get("labelSelector"), field_selector=q.get("fieldSelector"),
                        resource_version=q.get("resourceVersion"),
                        allow_bookmarks=bool_param(q.get("allowWatchBookmarks")),
                        timeout_seconds=float(timeout) if timeout else None,
                        send_initial_events=bool_param(q.get("sendInitialEvents")))
    # validate selectors before committing to a 200
    core.compile_selectors(t.info, opts.label_selector, opts.field_selector)
    table = wants_table(request)
    resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json",
                                                   "Cache-Control": "no-cache, private"})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    watches = request.app[WATCHES]
    duration = opts.timeout_seconds if opts.timeout_seconds else DEFAULT_WATCH_TIMEOUT * (1 + core.rng.random())
    first_table = True
    encode_cache = request.app[WATCH_ENCODE_CACHE]
    stream: WatchStream | None = None
    try:
        async with asyncio.timeout(duration) as deadline:
            stream = WatchStream(resp, deadline)
            watches.add(stream)
            async for etype, obj in core.watch(t.info, t.namespace, opts):
                if table and etype not in ("ERROR", "BOOKMARK"):
                    ev = watch_table_event(t.info, etype, obj, datetime.now(UTC),
                                           include_object=q.get("includeObject") or "Metadata",
                                           no_headers=not first_table)
                    first_table = False
                    line = orjson.dumps(ev) + b"\n"
                elif etype == "BOOKMARK":
                    bm = {"kind": t.info.kind, "apiVersion": t.info.api_version, **obj}
                    line = orjson.dumps({"type": etype, "object": bm}) + b"\n"
                else:
                    ck = (etype, (obj.get("metadata") or {}).get("resourceVersion"))
                    cached = encode_cache.get(ck)
                    if cached is None:
                        cached = orjson.dumps({"type": etype, "object": obj}) + b"\n"
                        if len(encode_cache) > ENCODE_CACHE_MAX:
                            encode_cache.clear()
                        encode_cache[ck] = cached
                    line = cached
                await resp.write(line)
    except TimeoutError:
        pass  # timeoutSeconds elapsed, or the server is shutting down: the normal end of a watch
    except ConnectionResetError:
        logger.debug("watch client went away path=%s", request.path)
        return resp
    finally:
        if stream is not None:
            watches.discard(stream)
    try:
        await resp.write_eof()
    except (ConnectionResetError, RuntimeError):
        logger.debug("watch client went away before the end of the stream path=%s", request.path)
    return resp


async def close_watches(app: web.Application) -> None:
    """on_shutdown: end every open watch so aiohttp's shutdown does not wait for them."""
    watches = app[WATCHES]
    for stream in list(watches):
        stream.end_now()
    watches.clear()
