"""The API's listening socket with kube-apiserver's connection bounds (layer L4, beside `app`).

Why: an HTTP server that waits forever for a request's headers, or keeps idle connections
open, can be exhausted by clients that connect and say nothing (slowloris). kube-apiserver's
`http.Server` (k8s.io/apiserver `SecureServingInfo.Serve`) bounds this with
`ReadHeaderTimeout: 32s`, `IdleTimeout: 90s` and `MaxHeaderBytes: 1 MiB`; it sets no
`ReadTimeout` (a slow body is bounded by the request timeout of non-long-running requests, see
`handlers.codec.read_body`), and no `WriteTimeout` (watches and `pods/log?follow` stream for
as long as they last).

How the bounds map onto aiohttp:
- idle keep-alive: aiohttp's `keepalive_timeout` (`RUNNER_IDLE_TIMEOUT` default 90 s). aiohttp
  starts that timer when a connection opens and again after each response, and closes the
  connection when it fires while no request is being handled - so it also bounds a request
  whose headers arrive too slowly on a kept-alive connection (90 s from the last response
  rather than Go's 32 s from the request's first byte).
- the first request's headers: `HeaderTimeoutSite` wraps each connection's protocol in
  `_HeaderDeadline`, which aborts the connection when the end of the first request's header
  block (`CRLF CRLF`) has not arrived `header_timeout` seconds after the connection opened
  (Go closes such a connection without an answer too).
- the unread rest of a body after the answer (a 413, a 504 for a body still trickling in): read
  and dropped for at most `LINGERING_TIME` (2 s), then the connection closes; Go's server
  likewise drains a little of an unread body before it closes the connection.
- header size: aiohttp's per-line limits (`create_app`'s `max_line_size`/`max_field_size`);
  a longer line is answered 400 by aiohttp's parser.
- what the parser refuses is answered with a Status body (`_StatusErrors`), not plain text.
- a method outside llhttp's fixed list (`FOO`): Go's server parses any token as a method and
  kube-apiserver routes it (405 Status on an API path, 404 on an unknown one). aiohttp's C parser
  refuses such a request line; `_MethodFallback` then hands that connection, from the start of
  the refused request, to aiohttp's pure-Python parser (which accepts any token), so the request
  is authenticated and routed like any other. Connections that never send such a method keep
  the C parser.

Data flow: accept -> `_HeaderDeadline` (counts nothing once the first header block is complete)
-> aiohttp's `RequestHandler` -> the app.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import logging
import re
import socket
import ssl
from collections.abc import Callable
from ssl import SSLContext
from typing import Any

import orjson
from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, HttpProcessingError
from aiohttp.http_parser import HttpRequestParserPy
from aiohttp.web_protocol import MAX_MSG_QUEUE_SIZE, RequestHandler
from aiohttp.web_request import BaseRequest

from minik3s.api.errors import ApiError, BadRequestError

logger = logging.getLogger(__name__)

# k8s.io/apiserver secure_serving.go: ReadHeaderTimeout "just shy of requestTimeoutUpperBound"
READ_HEADER_TIMEOUT = 32.0
# IdleTimeout "matches http.DefaultTransport keep-alive timeout"
IDLE_TIMEOUT = 90.0
LINGERING_TIME = 2.0


# RFC 9110 `method = token`, followed by the space of a request line
_METHOD_SP = re.compile(rb"[0-9A-Za-z!#$%&'*+\-.^_`|~]+ ")


class _MethodFallback:
    """The connection's request parser: aiohttp's C parser until it refuses a method, then
    aiohttp's pure-Python parser fed from the start of the refused request.

    llhttp knows a fixed list of methods and refuses any other at the first byte that leaves the
    list, before the request line is complete. Its error carries the line it was reading (the
    bytes before and after the error position, up to the line's end); when that line opens the
    chunk just received and starts like a request line (`TOKEN SP`), the refused request began
    at the chunk's first byte, so the Python parser takes over from there: `FOO /api/v1/pods
    HTTP/1.1` becomes a request whose method is `FOO`. Anything else (not HTTP at all, TLS on
    the plain port, a refused line in the middle of a chunk) stays the C parser's 400."""

    __slots__ = ("_inner", "_handler")

    def __init__(self, inner: Any, handler: RequestHandler) -> None:
        self._inner = inner
        self._handler = handler

    def feed_data(self, data: bytes) -> Any:
        try:
            return self._inner.feed_data(data)
        except BadHttpMethod as exc:
            if isinstance(self._inner, HttpRequestParserPy) or not _refused_at_start(exc, data):
                raise
            h = self._handler
            try:
                kw: dict[str, Any] = h._manager._kwargs if h._manager is not None else {}
                parser = HttpRequestParserPy(
                    h, h._loop, h._read_bufsize, max_line_size=kw.get("max_line_size", 8190),
                    max_field_size=kw.get("max_field_size", 8190), max_headers=kw.get("max_headers", 128),
                    payload_exception=web.RequestPayloadError, auto_decompress=kw.get("auto_decompress", True),
                    max_msg_queue_size=MAX_MSG_QUEUE_SIZE)
            except (AttributeError, TypeError):  # another aiohttp's internals: the C parser's 400 stays
                logger.debug("no Python parser fallback for this aiohttp", exc_info=True)
                raise exc from None
            self._inner = parser
            logger.debug("request with a method outside llhttp's list; connection parsed in Python peer=%s",
                         h.transport.get_extra_info("peername") if h.transport is not None else None)
            return self._inner.feed_data(data)

    def pause_reading(self) -> None:
        self._inner.pause_reading()

    def message_consumed(self) -> None:
        self._inner.message_consumed()

    def feed_eof(self) -> Any:
        return self._inner.feed_eof()

    def set_upgraded(self, val: bool) -> None:
        self._inner.set_upgraded(val)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _refused_at_start(exc: BadHttpMethod, data: bytes) -> bool:
    """Whether llhttp refused the method of a request line that opens `data`. Its message is
    `<reason>:\n\n  <repr of the line>\n  <pointer>`."""
    parts = exc.message.split("\n") if isinstance(exc.message, str) else []
    if len(parts) < 3:
        return False
    try:
        line = ast.literal_eval(parts[2].strip())
    except (ValueError, SyntaxError):
        return False
    return isinstance(line, bytes) and bool(line) and data.startswith(line) and _METHOD_SP.match(data) is not None


class _StatusErrors(RequestHandler):
    """aiohttp's request handler, answering what its HTTP parser refused (a malformed request
    line, header or chunk size, an over-long line) with a Status body rather than plain text.
    A method outside llhttp's list (`FOO`) is not refused: `_MethodFallback` parses it, and it
    is routed like any method the API does not serve on that path (405 Status)."""

    __slots__ = ()

    def log_exception(self, *args: Any, **kw: Any) -> None:
        """A request the parser refused is the client's error, answered with its 400: logged at
        debug level, as Go's http.Server does not log it (a traceback at ERROR level each time
        let any client fill the log)."""
        exc = kw.get("exc_info")
        if isinstance(exc, HttpProcessingError) and (exc.code or 400) < 500:
            self.logger.debug(*args, **kw)
            return
        super().log_exception(*args, **kw)

    def handle_error(self, request: BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        resp = super().handle_error(request, status, exc, message)
        if status >= 500 or not isinstance(resp, web.Response) or not isinstance(resp.body, bytes):
            return resp
        lines = resp.body.decode("utf-8", "replace").strip().splitlines()
        text = lines[0].rstrip(":") if lines else "bad request"
        err = BadRequestError(f"the request could not be parsed: {text}") if status == 400 else \
            ApiError(text, code=status, reason="BadRequest")
        out = web.Response(body=orjson.dumps(err.to_status()) + b"\n", status=status, content_type="application/json")
        out.force_close()
        return out


def _with_status_errors(handler: RequestHandler) -> RequestHandler:
    # aiohttp builds the handler (with the runner's and the app's settings); only its error
    # answers change, so the instance takes the subclass (same slots, no state of its own)
    if type(handler) is RequestHandler:
        handler.__class__ = _StatusErrors
        handler._parser = _MethodFallback(handler._parser, handler)  # type: ignore[assignment]
    return handler


class _HeaderDeadline(asyncio.Protocol):
    """Forwards everything to aiohttp's protocol; aborts the connection when the first
    request's header block is not complete within the deadline."""

    __slots__ = ("_inner", "_timeout", "_timer", "_tail", "_transport")

    def __init__(self, inner: asyncio.Protocol, timeout: float) -> None:
        self._inner = inner
        self._timeout = timeout
        self._timer: asyncio.TimerHandle | None = None
        self._tail = b""
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport
        self._timer = asyncio.get_running_loop().call_later(self._timeout, self._expire)
        self._inner.connection_made(transport)

    def _expire(self) -> None:
        self._timer = None
        t = self._transport
        if t is not None and not t.is_closing():
            peer = t.get_extra_info("peername")
            logger.info("connection closed: no complete request headers within %.1fs peer=%s", self._timeout, peer)
            abort = getattr(t, "abort", None)  # uvloop's transports are not asyncio.Transport subclasses
            if abort is not None:
                abort()
            else:
                t.close()

    def data_received(self, data: bytes) -> None:
        if self._timer is not None:
            seen = self._tail + data
            if b"\r\n\r\n" in seen or b"\n\n" in seen:
                self._timer.cancel()
                self._timer = None
                self._tail = b""
            else:
                self._tail = seen[-3:]
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._transport = None
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


class _SniffingListener:
    """The listening socket of a site that serves plain HTTP and TLS on one port: each accepted
    connection's first byte is peeked (MSG_PEEK, nothing consumed) and the connection handed to
    the HTTP protocol with TLS when it is a TLS handshake record (0x16), as is otherwise. Has
    the `close()` / `sockets` an `asyncio.Server` offers BaseSite."""

    def __init__(self, sock: socket.socket, factory: Callable[[], asyncio.Protocol], tls: SSLContext,
                 first_byte_timeout: float) -> None:
        self.sockets = [sock]
        self._factory, self._tls, self._timeout = factory, tls, first_byte_timeout
        self._pending: set[asyncio.Task[None]] = set()
        self._task = asyncio.ensure_future(self._accept())

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        sock = self.sockets[0]
        while True:
            try:
                conn, _ = await loop.sock_accept(sock)
            except OSError as e:  # EMFILE and the like: as asyncio's own accept loop, go on
                logger.warning("accept failed: %s", e)
                await asyncio.sleep(0.1)
                continue
            task = asyncio.ensure_future(self._hand_over(conn))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)

    async def _hand_over(self, conn: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        conn.setblocking(False)
        readable: asyncio.Future[None] = loop.create_future()
        fd = conn.fileno()

        def ready() -> None:
            if not readable.done():
                readable.set_result(None)

        loop.add_reader(fd, ready)
        try:
            async with asyncio.timeout(self._timeout):
                await readable
            first = conn.recv(1, socket.MSG_PEEK)
        except (TimeoutError, OSError):
            conn.close()  # nothing sent within the header timeout, or gone: as the deadline does
            return
        finally:
            loop.remove_reader(fd)
        try:
            await loop.connect_accepted_socket(self._factory, conn, ssl=self._tls if first == b"\x16" else None,
                                               ssl_handshake_timeout=self._timeout if first == b"\x16" else None)
        except (OSError, ssl.SSLError, TimeoutError) as e:
            logger.debug("connection dropped before its first request: %s", e)
            conn.close()

    def close(self) -> None:
        self._task.cancel()
        for task in list(self._pending):
            task.cancel()
        self.sockets[0].close()

    async def wait_closed(self) -> None:
        for task in (self._task, *self._pending):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


class HeaderTimeoutSite(web.BaseSite):
    """A TCP site (as `web.TCPSite`) whose connections must send their first request's headers
    within `header_timeout` seconds. With `loopback_tls` (a plain-HTTP site), a client that
    opens with a TLS handshake on the same port is answered over TLS with that context."""

    __slots__ = ("_host", "_port", "_reuse_address", "_header_timeout", "_listener", "_loopback_tls")

    def __init__(self, runner: web.BaseRunner, host: str, port: int, *,
                 header_timeout: float = READ_HEADER_TIMEOUT, ssl_context: SSLContext | None = None,
                 reuse_address: bool = True, loopback_tls: SSLContext | None = None) -> None:
        super().__init__(runner, ssl_context=ssl_context)
        self._host = host
        self._port = port
        self._reuse_address = reuse_address
        self._header_timeout = header_timeout
        self._listener: asyncio.Server | _SniffingListener | None = None
        self._loopback_tls = loopback_tls if ssl_context is None else None

    @property
    def name(self) -> str:
        scheme = "https" if self._ssl_context else "http"
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"{scheme}://{host}:{self.port}"

    @property
    def port(self) -> int:
        """The bound port (the one the OS chose when asked for port 0)."""
        if self._listener is not None and self._listener.sockets:
            return int(self._listener.sockets[0].getsockname()[1])
        return self._port

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None  # BaseSite's constructor checked it
        timeout = self._header_timeout

        def factory() -> asyncio.Protocol:
            return _HeaderDeadline(_with_status_errors(server()), timeout)

        if self._loopback_tls is not None:
            family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                if self._reuse_address:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((self._host, self._port))
                sock.listen(self._backlog)
                sock.setblocking(False)
            except OSError:
                sock.close()
                raise
            self._listener = _SniffingListener(sock, factory, self._loopback_tls, timeout)
        else:
            self._listener = await asyncio.get_running_loop().create_server(
                factory, self._host, self._port,
                ssl=self._ssl_context, backlog=self._backlog, reuse_address=self._reuse_address)
        self._server = self._listener  # type: ignore[assignment]  # BaseSite.stop closes it
