"""Protocol-buffers wire format, by hand (layer L4, apiserver; pure, stdlib only).

Why hand-written: minik3s decodes the few Kubernetes messages kubectl sends as protobuf from its
own field tables, so it needs only the wire layer: varint (type 0), 64-bit (1), length-delimited
(2) and 32-bit (5) fields; groups (3/4) are obsolete and rejected. Every malformed input raises
`ProtobufError` — never IndexError/struct.error — so the HTTP layer can answer 400.

Data flow: bytes → `iter_fields(buf)` → (field number, wire type, value) triples, where value is
an int for varint/fixed fields and a `memoryview` slice for length-delimited ones.
"""

from __future__ import annotations

from collections.abc import Iterator

VARINT = 0
FIXED64 = 1
LEN = 2
FIXED32 = 5

_MAX_VARINT_BYTES = 10


class ProtobufError(ValueError):
    """A protobuf body could not be decoded (the message says what and where)."""


def read_varint(buf: memoryview | bytes, pos: int) -> tuple[int, int]:
    """Decode a base-128 varint at `pos`; returns (value, next position).

    Worked example: b"\\xac\\x02" → 0x2c | (0x02 << 7) = 300.
    """
    result = 0
    shift = 0
    end = len(buf)
    for i in range(_MAX_VARINT_BYTES):
        if pos >= end:
            raise ProtobufError(f"truncated varint at offset {pos}")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            if i == _MAX_VARINT_BYTES - 1 and b > 1:
                raise ProtobufError("varint overflows 64 bits")
            return result, pos
        shift += 7
    raise ProtobufError("varint longer than 10 bytes")


def iter_fields(buf: memoryview | bytes) -> Iterator[tuple[int, int, int | memoryview]]:
    """Yield (field number, wire type, value) for each field of one message, in wire order."""
    mv = buf if isinstance(buf, memoryview) else memoryview(buf)
    pos = 0
    end = len(mv)
    while pos < end:
        key, pos = read_varint(mv, pos)
        number, wtype = key >> 3, key & 7
        if number == 0:
            raise ProtobufError(f"invalid field number 0 at offset {pos}")
        if wtype == VARINT:
            value, pos = read_varint(mv, pos)
            yield number, wtype, value
        elif wtype == LEN:
            length, pos = read_varint(mv, pos)
            if length > end - pos:
                raise ProtobufError(f"field {number}: length {length} exceeds the remaining {end - pos} bytes")
            yield number, wtype, mv[pos:pos + length]
            pos += length
        elif wtype == FIXED64:
            if end - pos < 8:
                raise ProtobufError(f"field {number}: truncated 64-bit value")
            yield number, wtype, int.from_bytes(mv[pos:pos + 8], "little")
            pos += 8
        elif wtype == FIXED32:
            if end - pos < 4:
                raise ProtobufError(f"field {number}: truncated 32-bit value")
            yield number, wtype, int.from_bytes(mv[pos:pos + 4], "little")
            pos += 4
        else:
            raise ProtobufError(f"field {number}: unsupported wire type {wtype}")


def to_signed(value: int, bits: int) -> int:
    """Two's-complement view of a varint (negative int32/int64 are sent as 10-byte varints)."""
    value &= (1 << 64) - 1
    if bits == 32:
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value >= 1 << 31 else value
    return value - (1 << 64) if value >= 1 << 63 else value


# ---- encoding (used for tests and for any future protobuf responses) ------------------------


def encode_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def encode_key(number: int, wtype: int) -> bytes:
    return encode_varint((number << 3) | wtype)


def encode_len(number: int, payload: bytes) -> bytes:
    return encode_key(number, LEN) + encode_varint(len(payload)) + payload
