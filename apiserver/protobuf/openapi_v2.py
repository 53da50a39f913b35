"""The OpenAPI v2 document in its protobuf form (layer L4; pure functions).

kubectl asks `/openapi/v2` for `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
and parses the answer as gnostic's `openapi.v2.Document`. This module encodes the JSON
document `apiserver.openapi.openapi_v2` builds into that message, field by field, from our own
tables of the gnostic field numbers (openapiv2/OpenAPIv2.proto) — no generated code. Values
that gnostic keeps as `Any` (vendor extensions, defaults, enums, examples) carry their YAML
text (JSON, which is YAML) in `Any.yaml`, as gnostic itself does.

Data flow: handlers/openapi.py -> `encode_document(doc)` -> bytes cached with the JSON form.
"""

from __future__ import annotations

import json
import struct
from typing import Any

from .wire import encode_key, encode_len, encode_varint

JsonDict = dict[str, Any]
MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"  # what clients ask for
# what kube-openapi answers with: the same type with "@" (not a valid token for Go's mime
# parser) spelled "."
RESPONSE_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def _s(number: int, value: Any) -> bytes:
    return encode_len(number, str(value).encode()) if value not in (None, "") else b""


def _ss(number: int, values: Any) -> bytes:
    return b"".join(encode_len(number, str(v).encode()) for v in values or [])


def _bool(number: int, value: Any) -> bytes:
    return encode_key(number, 0) + encode_varint(1) if value else b""


def _int(number: int, value: Any) -> bytes:
    if not isinstance(value, int) or isinstance(value, bool):
        return b""
    return encode_key(number, 0) + encode_varint(value & 0xFFFFFFFFFFFFFFFF)


def _double(number: int, value: Any) -> bytes:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return b""
    return encode_key(number, 1) + struct.pack("<d", float(value))


def _any(value: Any) -> bytes:
    """gnostic `Any`: field 2 holds the value as YAML text."""
    return encode_len(2, json.dumps(value, separators=(",", ":")).encode())


def _extensions(number: int, obj: JsonDict) -> bytes:
    return b"".join(encode_len(number, _s(1, k) + encode_len(2, _any(v)))
                    for k, v in obj.items() if k.startswith("x-"))


def schema(s: JsonDict) -> bytes:
    out = [_s(1, s.get("$ref")), _s(2, s.get("format")), _s(3, s.get("title")), _s(4, s.get("description"))]
    if "default" in s:
        out.append(encode_len(5, _any(s["default"])))
    out += [_double(6, s.get("multipleOf")), _double(7, s.get("maximum")), _bool(8, s.get("exclusiveMaximum")),
            _double(9, s.get("minimum")), _bool(10, s.get("exclusiveMinimum")), _int(11, s.get("maxLength")),
            _int(12, s.get("minLength")), _s(13, s.get("pattern")), _int(14, s.get("maxItems")),
            _int(15, s.get("minItems")), _bool(16, s.get("uniqueItems")), _int(17, s.get("maxProperties")),
            _int(18, s.get("minProperties")), _ss(19, s.get("required"))]
    out += [encode_len(20, _any(v)) for v in s.get("enum") or []]
    ap = s.get("additionalProperties")
    if isinstance(ap, dict):
        out.append(encode_len(21, encode_len(1, schema(ap))))
    elif isinstance(ap, bool):
        out.append(encode_len(21, encode_key(2, 0) + encode_varint(int(ap))))
    t = s.get("type")
    if t:
        out.append(encode_len(22, _ss(1, t if isinstance(t, list) else [t])))
    items = s.get("items")
    if isinstance(items, dict):
        out.append(encode_len(23, encode_len(1, schema(items))))
    elif isinstance(items, list):
        out.append(encode_len(23, b"".join(encode_len(1, schema(i)) for i in items)))
    out += [encode_len(24, schema(a)) for a in s.get("allOf") or []]
    props = s.get("properties")
    if isinstance(props, dict):
        out.append(encode_len(25, b"".join(encode_len(1, _s(1, k) + encode_len(2, schema(v)))
                                           for k, v in props.items())))
    out += [_bool(27, s.get("readOnly"))]
    if "example" in s:
        out.append(encode_len(30, _any(s["example"])))
    out.append(_extensions(31, s))
    return b"".join(out)


def _non_body(p: JsonDict) -> bytes:
    """Query/path/header/formData parameter sub-schemas share their leading fields; the
    numbering differs by one where query and formData carry allowEmptyValue."""
    where = p.get("in")
    head = _bool(1, p.get("required")) + _s(2, where) + _s(3, p.get("description")) + _s(4, p.get("name"))
    if where in ("query", "formData"):
        body = head + _bool(5, p.get("allowEmptyValue")) + _s(6, p.get("type")) + _s(7, p.get("format")) + \
            _s(9, p.get("collectionFormat")) + _bool(20, p.get("uniqueItems")) + _extensions(23, p)
        return encode_len(3 if where == "query" else 2, body)
    body = head + _s(5, p.get("type")) + _s(6, p.get("format")) + _s(8, p.get("collectionFormat")) + \
        _bool(19, p.get("uniqueItems")) + _extensions(22, p)
    return encode_len(4 if where == "path" else 1, body)


def _parameter_item(p: JsonDict) -> bytes:
    if "$ref" in p:
        return encode_len(2, _s(1, p["$ref"]) + _s(2, p.get("description")))
    if p.get("in") == "body":
        body = _s(1, p.get("description")) + _s(2, p.get("name")) + _s(3, "body") + \
            _bool(4, p.get("required")) + encode_len(5, schema(p.get("schema") or {})) + _extensions(6, p)
        return encode_len(1, encode_len(1, body))
    return encode_len(1, encode_len(2, _non_body(p)))


def _responses(rs: JsonDict) -> bytes:
    out = []
    for code, r in rs.items():
        if not isinstance(r, dict):
            continue
        if "$ref" in r:
            value = encode_len(2, _s(1, r["$ref"]))
        else:
            resp = _s(1, r.get("description"))
            if isinstance(r.get("schema"), dict):
                resp += encode_len(2, encode_len(1, schema(r["schema"])))
            value = encode_len(1, resp + _extensions(5, r))
        out.append(encode_len(1, _s(1, code) + encode_len(2, value)))
    return b"".join(out)


def _operation(op: JsonDict) -> bytes:
    out = [_ss(1, op.get("tags")), _s(2, op.get("summary")), _s(3, op.get("description")),
           _s(5, op.get("operationId")), _ss(6, op.get("produces")), _ss(7, op.get("consumes"))]
    out += [encode_len(8, _parameter_item(p)) for p in op.get("parameters") or [] if isinstance(p, dict)]
    if isinstance(op.get("responses"), dict):
        out.append(encode_len(9, _responses(op["responses"])))
    out += [_ss(10, op.get("schemes")), _bool(11, op.get("deprecated")), _extensions(13, op)]
    return b"".join(out)


_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def _path_item(item: JsonDict) -> bytes:
    out = [_s(1, item.get("$ref"))]
    out += [encode_len(n, _operation(item[m])) for m, n in _METHODS.items() if isinstance(item.get(m), dict)]
    out += [encode_len(9, _parameter_item(p)) for p in item.get("parameters") or [] if isinstance(p, dict)]
    out.append(_extensions(10, item))
    return b"".join(out)


def encode_document(doc: JsonDict) -> bytes:
    """gnostic openapi.v2.Document bytes of a Swagger 2.0 JSON document."""
    info = doc.get("info") or {}
    out = [_s(1, doc.get("swagger")),
           encode_len(2, _s(1, info.get("title")) + _s(2, info.get("version")) + _s(3, info.get("description"))),
           _s(3, doc.get("host")), _s(4, doc.get("basePath")), _ss(5, doc.get("schemes")),
           _ss(6, doc.get("consumes")), _ss(7, doc.get("produces"))]
    paths = doc.get("paths") or {}
    out.append(encode_len(8, b"".join(encode_len(2, _s(1, k) + encode_len(2, _path_item(v)))
                                      for k, v in paths.items() if isinstance(v, dict))))
    defs = doc.get("definitions") or {}
    out.append(encode_len(9, b"".join(encode_len(1, _s(1, k) + encode_len(2, schema(v)))
                                      for k, v in defs.items() if isinstance(v, dict))))
    out.append(_extensions(16, doc))
    return b"".join(out)
