"""Kubernetes protobuf request bodies → the JSON dicts the same objects have in JSON (layer L4).

kubectl's typed clients POST/DELETE with `Content-Type: application/vnd.kubernetes.protobuf`.
The body is the 4-byte magic `k8s\\x00` followed by a `runtime.Unknown` envelope
{typeMeta{apiVersion, kind}, raw, contentEncoding, contentType}; `raw` is the object's own message.
`decode_protobuf` unwraps the envelope, looks the kind up in `schema.KINDS` and walks the raw bytes
with the hand-written field tables, producing exactly the JSON shape (camelCase names, RFC 3339
times, quantities as strings, IntOrString as int or string, bytes as base64, embedded structs
inlined) so the rest of the apiserver never knows the body was protobuf.

Data flow: body bytes → envelope (wire.iter_fields) → message table walk → JsonDict.
Errors: malformed input → `ProtobufError`; a well-formed body of a kind without a table →
`UnsupportedKindError` (answer 415, as kube-apiserver does for unknown media/kind pairs).
"""

from __future__ import annotations

import base64
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from apiserver.protobuf.schema import FieldSpec, message_for, message_tables
from apiserver.protobuf.wire import (
    FIXED32,
    FIXED64,
    LEN,
    VARINT,
    ProtobufError,
    iter_fields,
    read_varint,
    to_signed,
)
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
_MAX_DEPTH = 64
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class UnsupportedKindError(ProtobufError):
    """The envelope is valid but minik3s has no field table for this apiVersion/kind."""

    def __init__(self, api_version: str, kind: str) -> None:
        super().__init__(f"protobuf decoding of {api_version}, Kind={kind} is not supported; send JSON")
        self.api_version = api_version
        self.kind = kind


def decode_protobuf(body: bytes) -> JsonDict:
    """Decode a `k8s\\x00`-prefixed protobuf body into a JSON-shaped object with apiVersion/kind."""
    api_version, kind, raw = decode_envelope(body)
    name = message_for(api_version, kind)
    if name is None:
        raise UnsupportedKindError(api_version, kind)
    out: JsonDict = {}
    if api_version:
        out["apiVersion"] = api_version
    if kind:
        out["kind"] = kind
    out.update(decode_message(name, raw))
    return out


def decode_envelope(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw message bytes) from the magic-prefixed runtime.Unknown envelope."""
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise ProtobufError("protobuf body must be bytes")
    data = bytes(body)
    if not data.startswith(MAGIC):
        raise ProtobufError("protobuf body does not start with the k8s\\x00 magic prefix")
    envelope = decode_message("Unknown", data[len(MAGIC):])
    encoding = envelope.get("contentEncoding") or ""
    if encoding:
        raise ProtobufError(f"unsupported protobuf contentEncoding {encoding!r}")
    type_meta = envelope.get("typeMeta") or {}
    api_version = str(type_meta.get("apiVersion") or "")
    kind = str(type_meta.get("kind") or "")
    if not kind:
        raise ProtobufError("protobuf envelope has no kind")
    raw_b64 = envelope.get("raw") or ""
    raw = base64.b64decode(raw_b64) if raw_b64 else b""
    return api_version, kind, raw


def decode_message(name: str, buf: bytes | memoryview) -> JsonDict:
    """Decode one message by table name (public for tests and for nested use)."""
    return _Decoder().message(name, memoryview(bytes(buf)) if not isinstance(buf, memoryview) else buf, 0)


def _is_zero(value: Any) -> bool:
    return value is None or value == "" or value is False or (isinstance(value, int) and value == 0) \
        or value == {} or value == []


class _Decoder:
    __slots__ = ()

    def message(self, name: str, buf: memoryview, depth: int) -> JsonDict:
        if depth > _MAX_DEPTH:
            raise ProtobufError("protobuf message nesting is too deep")
        table = message_tables()[name]
        out: JsonDict = {}
        inline_parts: list[JsonDict] = []
        for number, wtype, value in iter_fields(buf):
            spec = table.get(number)
            if spec is None:
                logger.debug("protobuf: skipping unknown field message=%s field=%d", name, number)
                continue
            try:
                if spec.inline:
                    inline_parts.append(self.message(spec.type, self._need_len(spec, wtype, value), depth + 1))
                elif spec.type.startswith("map:"):
                    key, val = self.map_entry(spec, self._need_len(spec, wtype, value), depth)
                    out.setdefault(spec.json_name, {})[key] = val
                elif spec.repeated:
                    out.setdefault(spec.json_name, []).extend(self.repeated_values(spec, wtype, value, depth))
                else:
                    out[spec.json_name] = self.value(spec, spec.type, wtype, value, depth)
            except ProtobufError as err:
                if str(err).startswith(f"{name}."):
                    raise
                raise ProtobufError(f"{name}.{spec.json_name}: {err}") from None
        for part in inline_parts:
            for k, v in part.items():
                out.setdefault(k, v)
        for spec in table.values():
            if spec.keep_zero or spec.inline:
                continue
            if spec.json_name in out and _is_zero(out[spec.json_name]):
                del out[spec.json_name]
        return out

    @staticmethod
    def _need_len(spec: FieldSpec, wtype: int, value: int | memoryview) -> memoryview:
        if wtype != LEN or not isinstance(value, memoryview):
            raise ProtobufError(f"wrong wire type {wtype} for field {spec.number} (want length-delimited)")
        return value

    def repeated_values(self, spec: FieldSpec, wtype: int, value: int | memoryview, depth: int) -> list[Any]:
        if spec.type in ("i32", "i64", "bool") and wtype == LEN and isinstance(value, memoryview):
            items: list[Any] = []
            pos = 0
            while pos < len(value):  # packed encoding
                v, pos = read_varint(value, pos)
                items.append(self._varint_scalar(spec.type, v))
            return items
        return [self.value(spec, spec.type, wtype, value, depth)]

    @staticmethod
    def _varint_scalar(type_: str, v: int) -> Any:
        if type_ == "bool":
            return v != 0
        if type_ == "i32":
            return to_signed(v, 32)
        return to_signed(v, 64)

    def value(self, spec: FieldSpec, type_: str, wtype: int, value: int | memoryview, depth: int) -> Any:
        if type_ in ("bool", "i32", "i64"):
            if wtype == VARINT and isinstance(value, int):
                return self._varint_scalar(type_, value)
            if wtype in (FIXED32, FIXED64) and isinstance(value, int) and type_ != "bool":
                return to_signed(value, 32 if wtype == FIXED32 else 64)
            raise ProtobufError(f"wrong wire type {wtype} for numeric field {spec.number}")
        buf = self._need_len(spec, wtype, value)
        if type_ == "s":
            try:
                return bytes(buf).decode("utf-8")
            except UnicodeDecodeError:
                raise ProtobufError(f"field {spec.number} is not valid UTF-8") from None
        if type_ == "b":
            return base64.b64encode(bytes(buf)).decode("ascii")
        if type_ in ("T", "MT"):
            return self.time(buf, micro=type_ == "MT")
        if type_ == "Q":
            q = self.message_fields(buf)
            return q.get(1, "")
        if type_ == "IOS":
            return self.int_or_string(buf)
        if type_ in ("raw", "f1"):
            raw = self.message_fields(buf).get(1, "", raw=True)
            if not raw:
                return {}
            try:
                return orjson.loads(raw)
            except orjson.JSONDecodeError:
                raise ProtobufError(f"field {spec.number} does not hold JSON") from None
        return self.message(type_, buf, depth + 1)

    def map_entry(self, spec: FieldSpec, buf: memoryview, depth: int) -> tuple[str, Any]:
        key = ""
        val: Any = None
        vtype = spec.type[4:]
        for number, wtype, value in iter_fields(buf):
            if number == 1:
                key = self.value(spec, "s", wtype, value, depth)
            elif number == 2:
                val = self.value(spec, {"s": "s", "b": "b", "Q": "Q", "T": "T"}[vtype], wtype, value, depth)
        if val is None:
            val = "" if vtype in ("s", "b", "Q") else None
        return key, val

    def time(self, buf: memoryview, *, micro: bool) -> str | None:
        """metav1.Time {1 seconds, 2 nanos}; an empty message is the zero time (JSON null)."""
        if len(buf) == 0:
            return None
        seconds = 0
        nanos = 0
        for number, wtype, value in iter_fields(buf):
            if wtype != VARINT or not isinstance(value, int):
                raise ProtobufError("malformed Time")
            if number == 1:
                seconds = to_signed(value, 64)
            elif number == 2:
                nanos = to_signed(value, 32)
        try:
            dt = _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
        except OverflowError:
            raise ProtobufError("Time out of range") from None
        if micro:
            return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return dt.strftime("%Y-%m-%dT%H:%M:%SZ")

    def int_or_string(self, buf: memoryview) -> int | str:
        kind = 0
        int_val = 0
        str_val = ""
        for number, wtype, value in iter_fields(buf):
            if number == 1 and wtype == VARINT and isinstance(value, int):
                kind = to_signed(value, 64)
            elif number == 2 and wtype == VARINT and isinstance(value, int):
                int_val = to_signed(value, 32)
            elif number == 3 and wtype == LEN and isinstance(value, memoryview):
                try:
                    str_val = bytes(value).decode("utf-8")
                except UnicodeDecodeError:
                    raise ProtobufError("IntOrString.strVal is not valid UTF-8") from None
            else:
                raise ProtobufError("malformed IntOrString")
        return str_val if kind == 1 else int_val

    @staticmethod
    def message_fields(buf: memoryview) -> _Fields:
        return _Fields(buf)


class _Fields:
    """Tiny accessor for one-field wrapper messages (Quantity, RawExtension, FieldsV1)."""

    __slots__ = ("_values",)

    def __init__(self, buf: memoryview) -> None:
        self._values: dict[int, memoryview] = {}
        for number, wtype, value in iter_fields(buf):
            if wtype == LEN and isinstance(value, memoryview):
                self._values[number] = value

    def get(self, number: int, default: Any, *, raw: bool = False) -> Any:
        v = self._values.get(number)
        if v is None:
            return default
        if raw:
            return bytes(v)
        try:
            return bytes(v).decode("utf-8")
        except UnicodeDecodeError:
            raise ProtobufError("string is not valid UTF-8") from None
