"""SPDY/3.1 framing, as the kubelet's streaming server reads and writes it (layer L4, apiserver
handlers; no I/O here).

Why: kubectl 1.33's `port-forward` speaks SPDY/3.1 (k8s.io/apimachinery's httpstream/spdy over
moby/spdystream) tunnelled in WebSocket binary messages (subprotocol
`SPDY/3.1+portforward.k8s.io`); the API server passes the bytes to the kubelet, whose SPDY
server pairs the streams. Only what that exchange uses is here: a byte-stream decoder
(`Decoder.feed` -> frames, whatever the message boundaries) and the frames a server sends
(SYN_REPLY, DATA, RST_STREAM, PING, GOAWAY).

Wire format (draft-mbelshe-httpbis-spdy-00, SPDY/3): every frame has an 8-byte header. A
control frame: the top bit set, a 15-bit version (3), a 16-bit type, 8 bits of flags, a 24-bit
length. A data frame: the top bit clear, a 31-bit stream id, flags (FIN = 1), a 24-bit length.
Header blocks (SYN_STREAM, SYN_REPLY, HEADERS) are a count and length-prefixed names and values
(big-endian 32-bit), deflated with one zlib stream per direction for the whole connection,
primed with the protocol's fixed dictionary and sync-flushed after each block.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
DATA = 0  # not a control type: how `Frame.kind` names a data frame
FLAG_FIN = 0x01
# the RST_STREAM status codes this server sends
PROTOCOL_ERROR, CANCEL = 1, 5
VERSION = 3
# a header block inflates to at most this much (spdystream bounds a name or value at 16 MiB;
# nothing a port-forward sends comes near a small fraction of it)
_MAX_HEADER_BLOCK = 1 << 20

# SPDY/3's compression dictionary: these names and values, each with a 4-byte big-endian
# length before it, then one run of common response text with no lengths.
_DICTIONARY_WORDS = (
    "options head post put delete trace accept accept-charset accept-encoding accept-language "
    "accept-ranges age allow authorization cache-control connection content-base content-encoding "
    "content-language content-length content-location content-md5 content-range content-type date etag "
    "expect expires from host if-match if-modified-since if-none-match if-range if-unmodified-since "
    "last-modified location max-forwards pragma proxy-authenticate proxy-authorization range referer "
    "retry-after server te trailer transfer-encoding upgrade user-agent vary via warning www-authenticate "
    "method get status|200 OK|version HTTP/1.1 url public set-cookie keep-alive origin"
)
_DICTIONARY_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request"
    "401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented"
    "503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 "
    "Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,"
    "application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age="
    "gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)


def _dictionary() -> bytes:
    words: list[str] = []
    for chunk in _DICTIONARY_WORDS.split("|"):
        # "200 OK" is one word with a space in it; the rest split on spaces
        words.extend([chunk] if chunk == "200 OK" else chunk.split())
    out = b"".join(struct.pack(">I", len(w)) + w.encode("ascii") for w in words)
    return out + _DICTIONARY_TAIL.encode("ascii")


DICTIONARY = _dictionary()


class SpdyError(Exception):
    """The peer sent what a SPDY/3 framer cannot read; the connection ends."""


@dataclass(slots=True)
class Frame:
    kind: int  # DATA or a control type
    flags: int
    stream_id: int = 0
    data: bytes = b""
    headers: dict[str, list[str]] = field(default_factory=dict)
    status: int = 0  # RST_STREAM, GOAWAY
    ping_id: int = 0

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


class Decoder:
    """Frames from a byte stream (the client's WebSocket payloads, concatenated)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames: list[Frame] = []
        while len(self._buffer) >= 8:
            length = int.from_bytes(self._buffer[5:8], "big")
            if len(self._buffer) < 8 + length:
                break
            head, body = bytes(self._buffer[:8]), bytes(self._buffer[8:8 + length])
            del self._buffer[:8 + length]
            frames.append(self._frame(head, body))
        return frames

    def _frame(self, head: bytes, body: bytes) -> Frame:
        word, flags = int.from_bytes(head[:4], "big"), head[4]
        if not word & 0x80000000:
            return Frame(DATA, flags, stream_id=word & 0x7FFFFFFF, data=body)
        version, kind = (word >> 16) & 0x7FFF, word & 0xFFFF
        if version != VERSION:
            raise SpdyError(f"unsupported SPDY version {version}")
        if kind == SYN_STREAM:
            if len(body) < 10:
                raise SpdyError("invalid control frame")
            sid = int.from_bytes(body[:4], "big") & 0x7FFFFFFF
            if sid == 0:
                raise SpdyError("stream id zero is disallowed")
            return Frame(kind, flags, stream_id=sid, headers=self._headers(body[10:]))
        if kind in (SYN_REPLY, HEADERS):
            if len(body) < 4:
                raise SpdyError("invalid control frame")
            return Frame(kind, flags, stream_id=int.from_bytes(body[:4], "big") & 0x7FFFFFFF,
                         headers=self._headers(body[4:]))
        if kind in (RST_STREAM, GOAWAY):
            if len(body) != 8:
                raise SpdyError("invalid control frame")
            return Frame(kind, flags, stream_id=int.from_bytes(body[:4], "big") & 0x7FFFFFFF,
                         status=int.from_bytes(body[4:], "big"))
        if kind == PING:
            if len(body) != 4:
                raise SpdyError("invalid control frame")
            return Frame(kind, flags, ping_id=int.from_bytes(body, "big"))
        if kind in (SETTINGS, WINDOW_UPDATE):
            return Frame(kind, flags, data=body)  # read and dropped: spdystream keeps no windows
        raise SpdyError("unknown frame type")

    def _headers(self, block: bytes) -> dict[str, list[str]]:
        try:
            raw = self._inflate.decompress(block, _MAX_HEADER_BLOCK)
        except zlib.error as err:
            raise SpdyError(f"header block: {err}") from None
        if self._inflate.unconsumed_tail:
            raise SpdyError("header block too large")
        headers: dict[str, list[str]] = {}
        try:
            (count,), at = struct.unpack_from(">I", raw), 4
            for _ in range(count):
                (n,) = struct.unpack_from(">I", raw, at)
                name = raw[at + 4:at + 4 + n]
                at += 4 + n
                (v,) = struct.unpack_from(">I", raw, at)
                value = raw[at + 4:at + 4 + v]
                at += 4 + v
                if len(name) != n or len(value) != v:
                    raise SpdyError("invalid header block")
                text = name.decode("latin-1")
                if text != text.lower():
                    raise SpdyError("header was not lowercased")
                if text in headers:
                    raise SpdyError("multiple headers with same name")
                headers[text] = value.decode("latin-1").split("\x00")
        except struct.error:
            raise SpdyError("invalid header block") from None
        return headers


class Encoder:
    """The frames a server writes; header blocks share one deflate stream, so frames must be
    sent in the order they are made."""

    def __init__(self) -> None:
        self._deflate = zlib.compressobj(zlib.Z_BEST_COMPRESSION, zlib.DEFLATED, 15, 8,
                                         zlib.Z_DEFAULT_STRATEGY, DICTIONARY)

    @staticmethod
    def _control(kind: int, flags: int, body: bytes) -> bytes:
        return struct.pack(">HHI", 0x8000 | VERSION, kind, (flags << 24) | len(body)) + body

    def _block(self, headers: dict[str, str]) -> bytes:
        raw = struct.pack(">I", len(headers)) + b"".join(
            struct.pack(">I", len(k)) + k.lower().encode("latin-1") + struct.pack(">I", len(v)) + v.encode("latin-1")
            for k, v in headers.items())
        return self._deflate.compress(raw) + self._deflate.flush(zlib.Z_SYNC_FLUSH)

    def syn_reply(self, stream_id: int, headers: dict[str, str] | None = None, fin: bool = False) -> bytes:
        return self._control(SYN_REPLY, FLAG_FIN if fin else 0,
                             struct.pack(">I", stream_id) + self._block(headers or {}))

    @staticmethod
    def data(stream_id: int, payload: bytes, fin: bool = False) -> bytes:
        return struct.pack(">II", stream_id & 0x7FFFFFFF, ((FLAG_FIN if fin else 0) << 24) | len(payload)) + payload

    @classmethod
    def rst_stream(cls, stream_id: int, status: int) -> bytes:
        return cls._control(RST_STREAM, 0, struct.pack(">II", stream_id, status))

    @classmethod
    def ping(cls, ping_id: int) -> bytes:
        return cls._control(PING, 0, struct.pack(">I", ping_id))

    @classmethod
    def goaway(cls, last_stream_id: int, status: int = 0) -> bytes:
        return cls._control(GOAWAY, 0, struct.pack(">II", last_stream_id, status))
