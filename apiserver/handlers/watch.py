"""Watch streams over HTTP: one chunked JSON line per event (layer L4).

Data flow: `core.watch` yields (type, object) -> encoded once per event state and shared by
every watcher through `WATCH_ENCODE_CACHE` (or rendered as a Table row for `as=Table`) ->
`StreamSender` -> the chunked response. Events already at hand (an unfiltered watch whose store
watcher has more buffered: a group commit publishes several at once) are joined into one write,
so a watcher costs one write per wakeup, not one per event.

Direct delivery (no wake-up per watcher per commit): a plain JSON watch whose events are all
sent as stored (no selectors, bookmarks, Table or stored-version conversion) attaches a
`DirectSink` to its store watcher whenever it is idle (nothing buffered, nothing held). The
broadcaster then hands each commit batch's events to the sink, which writes them, encoded once
and shared through the same cache, as one chunk straight to the connection's transport while
the client has less than the send bound left unread, and the handler coroutine stays asleep.
When it has more (or the connection is closing) the sink refuses the batch: the events go to the store watcher's
bounded queue in order, the handler wakes and sends them through `StreamSender` exactly as
without the sink (slow-client budget and abort included), and re-attaches once idle. The stream registers a `WatchStream` in `WATCHES` so
server shutdown can end it (by moving its deadline to now); it ends at `timeoutSeconds`
(default: a random time in [t, 2t) for `ServingLimits.min_request_timeout` t, as
kube-apiserver's `--min-request-timeout`) or when the client goes away.

Slow clients (upstream's cacher terminates a watcher whose buffer stays full): a watch
connection's send buffer is bounded (`ServingLimits.watch_send_buffer` bytes in the transport,
the kernel's socket buffer capped to the same). While it has room, writes never wait. When an
event does not fit, the handler waits for the client at most `watch_send_timeout` seconds; a
client that reads nothing in that time cannot keep up, and its connection is aborted (the
client sees the stream end, re-lists and re-watches). Meanwhile the events the store publishes
queue in the watcher's bounded store queue, whose overflow also ends the watch; writers and
other watchers never wait for this one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import orjson
from aiohttp import web

from apiserver.core import ApiCore
from apiserver.handlers.common import Target, bool_param, end_stream, int_param, wants_table, warning_headers
from apiserver.handlers.tables import check_include_object, watch_table_event
from apiserver.keys import (
    REQUEST_WARNINGS,
    SERVING,
    WATCH_ENCODE_CACHE,
    WATCHES,
    ServingLimits,
    WatchEncodeKey,
    WatchStream,
)
from apiserver.storage.broadcaster import SinkBatch, StoreWatcher
from minik3s.api.options import ListOptions, WatchOptions
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

ENCODE_CACHE_MAX = 8192
# events at hand are joined into one write up to this many bytes
FLUSH_BYTES = 64 * 1024
# chunk-size line and CRLFs aiohttp adds around each chunk
_CHUNK_OVERHEAD = 16


@dataclass(slots=True, eq=False)
class StreamSender:
    """Writes a long-running response under a bounded send buffer (see the module docstring).

    A write that fits under `limit` bytes of buffered output goes straight to the response. One
    that does not runs under `budget` seconds: the stream's own deadline is moved to now +
    `budget` for that write and restored after it. If the deadline fires, `stalled` is still set
    and the caller aborts the connection instead of ending the response."""

    response: web.StreamResponse
    transport: asyncio.Transport | None
    deadline: asyncio.Timeout
    limit: int
    budget: float
    stalled: bool = False

    @classmethod
    def open(cls, request: web.Request, response: web.StreamResponse, deadline: asyncio.Timeout,
             limits: ServingLimits) -> StreamSender:
        transport = request.transport  # uvloop's transports are not asyncio.Transport subclasses
        if transport is not None:
            limit = limits.watch_send_buffer
            transport.set_write_buffer_limits(high=limit, low=limit // 4)
            sock = transport.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError, AttributeError):
                    # Linux doubles the value asked for (bookkeeping overhead)
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, max(limit // 2, 4096))
        return cls(response, transport, deadline, limits.watch_send_buffer, limits.watch_send_timeout)

    async def send(self, data: bytes) -> None:
        t = self.transport
        if t is None or t.get_write_buffer_size() + len(data) + _CHUNK_OVERHEAD < self.limit:
            await self.response.write(data)
            return
        end = self.deadline.when()
        now = asyncio.get_running_loop().time()
        self.stalled = True
        self.deadline.reschedule(now + self.budget if end is None else min(end, now + self.budget))
        await self.response.write(data)
        self.stalled = False
        self.deadline.reschedule(end)

    def abort(self, path: str) -> None:
        """End a stalled stream: its buffer is full, so no clean end of the chunked body fits."""
        logger.info("watch closed: the client cannot keep up path=%s send_buffer=%d timeout=%.1fs",
                    path, self.limit, self.budget)
        if self.transport is not None:
            self.transport.abort()


def encode_event(cache: dict[WatchEncodeKey, bytes], etype: str, obj: JsonDict, api_version: str) -> bytes:
    """One watch line for an event as stored, shared by every watcher through `cache`."""
    ck = (etype, (obj.get("metadata") or {}).get("resourceVersion"), api_version)
    cached = cache.get(ck)
    if cached is None:
        cached = orjson.dumps({"type": etype, "object": obj}) + b"\n"
        if len(cache) > ENCODE_CACHE_MAX:
            cache.clear()
        cache[ck] = cached
    return cached


@dataclass(slots=True, eq=False)
class DirectSink:
    """Writes a store watcher's events straight to the watch connection (module docstring)."""

    transport: asyncio.Transport
    cache: dict[WatchEncodeKey, bytes]
    api_version: str
    limit: int

    def deliver(self, batch: SinkBatch) -> bool:
        t = self.transport
        # The bound is on what the client has left unread, not on this batch's size: a commit
        # batch larger than the bound (a burst's group commit) still goes out as one write to a
        # client that keeps up; its bytes are shared with every other watcher's transport.
        # Sizing the batch against the bound sent every watcher of a burst down the per-event
        # path, which cost more than the bytes (1,000 watchers: 334 vs 911 pods/s bound).
        if t.is_closing() or t.get_write_buffer_size() >= self.limit:
            return False
        frame = batch.encoded.get(self.api_version)
        if frame is None:
            # the first sink of this batch and apiVersion encodes; the others write the same bytes
            cache, api_version = self.cache, self.api_version
            body = b"".join([encode_event(cache, ev.type, ev.object, api_version) for ev in batch.events])
            frame = batch.encoded[api_version] = b"%x\r\n%b\r\n" % (len(body), body)  # one chunk
        t.write(frame)
        return True

    async def run(self, watcher: StoreWatcher, budget: float) -> None:
        """Keep the sink attached until the watcher has something for the normal path (events
        the sink refused, overflow, close); returns at once if it has already."""
        if not watcher.attach(self):
            return
        try:
            while not await watcher.wait(budget):
                pass
        finally:
            watcher.detach()


async def watch(request: web.Request, core: ApiCore, t: Target) -> web.StreamResponse:
    q = request.query
    timeout = int_param(q, "timeoutSeconds")
    opts = WatchOptions(label_selector=q.get("labelSelector"), field_selector=q.get("fieldSelector"),
                        resource_version=q.get("resourceVersion"),
                        allow_bookmarks=bool_param(q.get("allowWatchBookmarks")),
                        timeout_seconds=float(timeout) if timeout else None,
                        send_initial_events=bool_param(q.get("sendInitialEvents")))
    probe: list[Callable[[], bool]] = []
    opts.ready_probe = probe.append
    direct: list[StoreWatcher] = []
    table = wants_table(request)
    if table:  # a bad includeObject is a 400 before the stream's 200 goes out
        check_include_object(request.query.get("includeObject"))
    else:
        opts.direct_probe = direct.append
    # validate selectors before committing to a 200
    core.compile_selectors(t.info, opts.label_selector, opts.field_selector)
    if opts.send_initial_events:
        # the initial events must be those of a state at least as new as the resourceVersion
        # asked for: wait for it as a list does (504 "Too large resource version" after 3 s);
        # a plain watch from a future resourceVersion just skips the events up to it
        await core.wait_fresh(ListOptions(resource_version=opts.resource_version,
                                          resource_version_match=q.get("resourceVersionMatch")))
    # a deprecated resource's warning (recorded by dispatch) goes out with the stream's headers
    resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json",
                                                   "Cache-Control": "no-cache, private",
                                                   **warning_headers(request.get(REQUEST_WARNINGS))})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    watches = request.app[WATCHES]
    limits = request.app[SERVING]
    # upstream: timeoutSeconds when given, else MinRequestTimeout * (1 + rand) ("spread the load")
    duration = opts.timeout_seconds if opts.timeout_seconds else limits.min_request_timeout * (1 + core.rng.random())
    first_table = True
    encode_cache = request.app[WATCH_ENCODE_CACHE]
    stream: WatchStream | None = None
    sender: StreamSender | None = None
    sink: DirectSink | None = None
    pending: list[bytes] = []
    pending_size = 0
    try:
        async with asyncio.timeout(duration) as deadline:
            stream = WatchStream(resp, deadline)
            sender = StreamSender.open(request, resp, deadline, limits)
            if sender.transport is not None:
                sink = DirectSink(sender.transport, encode_cache, t.info.api_version, sender.limit)
            watches.add(stream)
            events = contextlib.aclosing(core.watch(t.info, t.namespace, opts))
            async with events as stream_events:
                async for etype, obj in stream_events:
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
                        line = encode_event(encode_cache, etype, obj, t.info.api_version)
                    if probe and pending_size < FLUSH_BYTES and probe[0]():
                        # the next event is at hand: one write (one syscall) for the run of them
                        pending.append(line)
                        pending_size += len(line)
                        continue
                    if pending:
                        pending.append(line)
                        line = b"".join(pending)
                        pending.clear()
                        pending_size = 0
                    await sender.send(line)
                    if direct and sink is not None:
                        # idle now: later events go straight to the transport until it refuses
                        await sink.run(direct[0], duration)
                if pending:  # the watch ended (overflow, expiry) with events still held
                    await sender.send(b"".join(pending))
    except TimeoutError:
        if sender is not None and sender.stalled:
            sender.abort(request.path)
            return resp
        # timeoutSeconds elapsed, or the server is shutting down: the normal end of a watch
    except ConnectionError:
        # the client closed or reset the connection (aiohttp raises a plain ConnectionError
        # "Connection lost" from a write waiting for drain): an ordinary end of a watch
        logger.debug("watch client went away path=%s", request.path)
        return resp
    except Exception:
        # a bug while streaming: the 200 and part of the body are out, so no error answer can
        # follow in this response (a second status line would corrupt the chunked framing).
        # The connection is cut; the client sees the stream end, re-lists and re-watches.
        logger.exception("watch failed while streaming path=%s", request.path)
        if request.transport is not None:
            request.transport.abort()
        return resp
    finally:
        if stream is not None:
            watches.discard(stream)
    return await end_stream(resp, request, "watch")


async def close_watches(app: web.Application) -> None:
    """on_shutdown: end every open watch so aiohttp's shutdown does not wait for them."""
    watches = app[WATCHES]
    for stream in list(watches):
        stream.end_now()
    watches.clear()
