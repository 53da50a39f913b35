"""RFC 6902 JSON patch (`application/json-patch+json`) on JSON dicts (layer L4, apiserver).

kube-apiserver applies JSON patches with evanphx/json-patch v4: the operations are applied in
order to a copy of the object; a document that is not a list of operation objects is a 400;
an operation that cannot be applied (failed `test`, missing path, bad index, unknown `op`) is a
422 whose cause carries the library's message, e.g.
`testing value /spec/replicas failed: test failed`. Array indices may be `-` (append, `add`
only) or a decimal index; negative indices count from the end as v4 allows.

Worked example: `{"a": [1, 2]}` with `[{"op": "add", "path": "/a/1", "value": 9},
{"op": "remove", "path": "/a/0"}]` → `{"a": [9, 2]}`.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from apiserver.patch.errors import PatchError

_MISSING = object()
MAX_JSON_PATCH_OPERATIONS = 10000  # kube-apiserver maxJSONPatchOperations
# bytes all `copy` operations of one patch may duplicate (the request body limit): without it a
# few dozen doubling copies build gigabytes before any size check sees the result
MAX_COPY_BYTES = 3 * 1024 * 1024


def _go_type(value: Any) -> str:
    """The JSON type name encoding/json puts in its unmarshal errors."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null"


def json_copy(doc: Any) -> Any:
    """A deep copy of a JSON value (a stored object): an orjson round trip, several times faster
    than copy.deepcopy on these trees; a value orjson cannot encode takes copy.deepcopy."""
    try:
        return orjson.loads(orjson.dumps(doc))
    except TypeError:
        return copy.deepcopy(doc)


def json_equal(a: Any, b: Any) -> bool:
    """Deep JSON equality: numbers compare by value (1 == 1.0) but booleans are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def parse_pointer(pointer: str) -> list[str]:
    """RFC 6901: `/a~1b/c~0d` → `["a/b", "c~d"]`; `""` is the whole document."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f'JSON pointer must be empty or start with a "/": {pointer!r}')
    return [tok.replace("~1", "/").replace("~0", "~") for tok in pointer[1:].split("/")]


def _index(token: str, length: int, *, allow_end: bool) -> int:
    """A list index from a pointer token; `length` is allowed only for add (insert at end)."""
    if token == "-" and allow_end:
        return length
    try:
        idx = int(token)
    except ValueError:
        raise PatchError(f"Unable to access invalid index: {token}: invalid index referenced") from None
    if token != str(idx) and not (token.startswith("-") and token[1:].isdigit()):
        raise PatchError(f"Unable to access invalid index: {token}: invalid index referenced")
    limit = length if allow_end else length - 1
    if idx < 0:
        if idx < -length:
            raise PatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
        idx += length
    if idx > limit:
        raise PatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
    return idx


def _container(doc: Any, tokens: list[str]) -> Any:
    """The value holding the last token, or `_MISSING` when a step does not exist."""
    node = doc
    for tok in tokens[:-1]:
        if isinstance(node, dict):
            if tok not in node:
                return _MISSING
            node = node[tok]
        elif isinstance(node, list):
            try:
                node = node[_index(tok, len(node), allow_end=False)]
            except PatchError:
                return _MISSING
        else:
            return _MISSING
    return node


def _get(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        return doc
    parent = _container(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        return parent.get(last, _MISSING)
    if isinstance(parent, list):
        try:
            return parent[_index(last, len(parent), allow_end=False)]
        except PatchError:
            return _MISSING
    return _MISSING


def _add(doc: Any, path: str, value: Any) -> Any:
    tokens = parse_pointer(path)
    if not tokens:
        return value
    parent = _container(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(last, len(parent), allow_end=True), value)
    else:
        raise PatchError(f'add operation does not apply: doc is missing path: "{path}": missing value')
    return doc


def _remove(doc: Any, path: str, *, op: str = "remove") -> Any:
    tokens = parse_pointer(path)
    if not tokens:
        raise PatchError(f"{op} operation does not apply: cannot remove the whole document")
    parent = _container(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(
                f"error in {op} for path: '{path}': Unable to remove nonexistent key: {last}: missing value"
            )
        del parent[last]
    elif isinstance(parent, list):
        del parent[_index(last, len(parent), allow_end=False)]
    else:
        raise PatchError(f'{op} operation does not apply: doc is missing path: "{path}": missing value')
    return doc


def _replace(doc: Any, path: str, value: Any) -> Any:
    tokens = parse_pointer(path)
    if not tokens:
        return value
    parent = _container(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"replace operation does not apply: doc is missing key: {path}: missing value")
        parent[last] = value
    elif isinstance(parent, list):
        parent[_index(last, len(parent), allow_end=False)] = value
    else:
        raise PatchError(f"replace operation does not apply: doc is missing path: {path}: missing value")
    return doc


def _required(op: dict[str, Any], field: str) -> Any:
    if field not in op:
        raise PatchError(f"{op.get('op')} operation missing {field} field: missing value")
    value = op[field]
    if field in ("path", "from"):
        # json-patch decodes the pointer into a Go string: null is "", another type an error
        if value is None:
            return ""
        if not isinstance(value, str):
            raise PatchError(f"{op.get('op')} operation failed to decode {field}: missing value")
    return value


def _encoded_size(value: Any) -> int:
    try:
        return len(orjson.dumps(value))
    except orjson.JSONEncodeError:
        return MAX_COPY_BYTES + 1  # nests too deep to encode: it could never be stored


def apply_json_patch(doc: dict[str, Any], ops: Any) -> dict[str, Any]:
    """Apply RFC 6902 operations to a deep copy of `doc` and return the result.

    Raises `PatchError(code=400)` when `ops` is not a list of objects, 413 beyond 10000
    operations, and 422 when an operation cannot be applied. `doc` is never mutated.
    """
    if not isinstance(ops, list):
        raise PatchError(
            f"json: cannot unmarshal {_go_type(ops)} into Go value of type jsonpatch.Patch", code=400
        )
    for op in ops:
        if not isinstance(op, dict):
            raise PatchError(
                f"json: cannot unmarshal {_go_type(op)} into Go value of type jsonpatch.Operation", code=400
            )
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise PatchError(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}",
            code=413,
        )
    result: Any = json_copy(doc)
    copied = 0
    for op in ops:
        kind = op.get("op")
        if kind == "add":
            path = _required(op, "path")
            result = _add(result, path, copy.deepcopy(_required(op, "value")))
        elif kind == "remove":
            result = _remove(result, _required(op, "path"))
        elif kind == "replace":
            path = _required(op, "path")
            result = _replace(result, path, copy.deepcopy(_required(op, "value")))
        elif kind == "move":
            src, dst = _required(op, "from"), _required(op, "path")
            if dst != src and dst.startswith(src + "/"):
                raise PatchError(f"move operation does not apply: cannot move {src} into its own child {dst}")
            value = _get(result, parse_pointer(src))
            if value is _MISSING:
                raise PatchError(
                    f'move operation does not apply: doc is missing from path: "{src}": missing value'
                )
            if dst == src:
                continue
            result = _remove(result, src, op="move")
            result = _add(result, dst, value)
        elif kind == "copy":
            src, dst = _required(op, "from"), _required(op, "path")
            value = _get(result, parse_pointer(src))
            if value is _MISSING:
                raise PatchError(
                    f'copy operation does not apply: doc is missing from path: "{src}": missing value'
                )
            copied += _encoded_size(value)
            if copied > MAX_COPY_BYTES:
                raise PatchError(
                    f"Unable to copy, would exceed the limit of {MAX_COPY_BYTES} bytes copied by one JSON patch",
                    code=413,
                )
            result = _add(result, dst, copy.deepcopy(value))
        elif kind == "test":
            path = _required(op, "path")
            expected = op.get("value")
            actual = _get(result, parse_pointer(path))
            if actual is _MISSING:
                if expected is None:
                    continue  # v4: testing a missing path against null succeeds
                raise PatchError(f"testing value {path} failed: test failed")
            if not json_equal(actual, expected):
                raise PatchError(f"testing value {path} failed: test failed")
        else:
            raise PatchError(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
    if not isinstance(result, dict):
        raise PatchError("the patched document is not a JSON object")
    return result
