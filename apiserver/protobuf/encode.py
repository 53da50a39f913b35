"""JSON-shaped objects → Kubernetes protobuf, from the same field tables (layer L4).

The inverse of `decode.py`, used by tests (round trips) and available for protobuf responses.
Fields are written in ascending field-number order like gogo-protobuf; zero values of non-pointer
fields are skipped (the decoder treats them as unset anyway).

Data flow: JsonDict → `encode_message(name, obj)` → bytes; `encode_protobuf(obj)` adds the
`k8s\\x00` + runtime.Unknown envelope using the object's apiVersion/kind.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from apiserver.protobuf.schema import FieldSpec, message_for, message_tables
from apiserver.protobuf.wire import VARINT, ProtobufError, encode_key, encode_len, encode_varint
from minik3s.api.types import JsonDict
from minik3s.utils.clock import parse_time

_MAGIC = b"k8s\x00"


def encode_protobuf(obj: JsonDict) -> bytes:
    api_version = str(obj.get("apiVersion") or "")
    kind = str(obj.get("kind") or "")
    name = message_for(api_version, kind)
    if name is None:
        raise ProtobufError(f"no protobuf table for {api_version}/{kind}")
    raw = encode_message(name, obj)
    type_meta = encode_len(1, api_version.encode()) + encode_len(2, kind.encode())
    envelope = encode_len(1, type_meta) + encode_len(2, raw) + encode_len(3, b"") + encode_len(4, b"")
    return _MAGIC + envelope


def encode_message(name: str, obj: JsonDict) -> bytes:
    table = message_tables()[name]
    out = bytearray()
    for number in sorted(table):
        spec = table[number]
        if spec.inline:
            out += encode_len(number, encode_message(spec.type, obj))
            continue
        if spec.json_name not in obj or obj[spec.json_name] is None:
            continue
        value = obj[spec.json_name]
        if spec.type.startswith("map:"):
            for k in sorted(value):
                entry = encode_len(1, str(k).encode()) + _encode_value(spec, spec.type[4:], 2, value[k])
                out += encode_len(number, entry)
        elif spec.repeated:
            for item in value:
                out += _encode_value(spec, spec.type, number, item)
        else:
            out += _encode_value(spec, spec.type, number, value)
    return bytes(out)


def _time(value: str) -> bytes:
    dt = parse_time(value)
    if dt is None:
        raise ValueError(f"not an RFC 3339 time: {value!r}")
    seconds = int(dt.timestamp() // 1)
    nanos = dt.microsecond * 1000
    body = encode_key(1, VARINT) + encode_varint(seconds)
    if nanos:
        body += encode_key(2, VARINT) + encode_varint(nanos)
    return body


def _encode_value(spec: FieldSpec, type_: str, number: int, value: Any) -> bytes:
    if type_ == "bool":
        return encode_key(number, VARINT) + encode_varint(1 if value else 0)
    if type_ in ("i32", "i64"):
        return encode_key(number, VARINT) + encode_varint(int(value))
    if type_ == "s":
        return encode_len(number, str(value).encode())
    if type_ == "b":
        return encode_len(number, base64.b64decode(value))
    if type_ in ("T", "MT"):
        return encode_len(number, _time(value))
    if type_ == "Q":
        return encode_len(number, encode_len(1, str(value).encode()))
    if type_ == "IOS":
        if isinstance(value, str):
            body = encode_key(1, VARINT) + encode_varint(1) + encode_len(3, value.encode())
        else:
            body = encode_key(1, VARINT) + encode_varint(0) + encode_key(2, VARINT) + encode_varint(int(value))
        return encode_len(number, body)
    if type_ in ("raw", "f1"):
        return encode_len(number, encode_len(1, orjson.dumps(value)))
    if not isinstance(value, dict):
        raise ProtobufError(f"{spec.json_name}: expected an object")
    return encode_len(number, encode_message(type_, value))


__all__ = ["encode_message", "encode_protobuf"]
