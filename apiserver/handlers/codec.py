"""Request body decoding and response encoding for the HTTP layer (layer L4).

Bodies: JSON (also when Content-Type is missing, as kubectl and the Python client send),
YAML, Kubernetes protobuf (`application/vnd.kubernetes.protobuf`, kubectl's typed create
commands and DELETE bodies), form-encoded DeleteOptions, and the four PATCH media types.
Bodies over 3 MiB are refused with 413 before they are read whole, as kube-apiserver does.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any
from urllib.parse import parse_qsl

import orjson
import yaml
from aiohttp import web

from apiserver.keys import SERVING
from apiserver.protobuf import ProtobufError, UnsupportedKindError, decode_protobuf
from apiserver.storage.interface import MAX_OBJECT_LEVELS, check_object_levels
from minik3s.api.errors import (
    BadRequestError,
    RequestEntityTooLargeError,
    TimeoutError_,
    UnsupportedMediaTypeError,
)

MAX_BODY = 3 * 1024 * 1024

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": "apply-cbor",
}

JSON_CT = "application/json"


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj)


def json_response(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """A JSON body ending in the newline Go's json.Encoder writes after every value, as every
    response kube-apiserver serializes does. Text that is not valid Unicode (an error message
    quoting header bytes that are not UTF-8, which the HTTP parser keeps as lone surrogates) is
    written with U+FFFD in place of each bad byte, as Go's encoder writes it."""
    try:
        body = orjson.dumps(obj)
    except orjson.JSONEncodeError:
        body = orjson.dumps(_valid_text(obj))
    return web.Response(body=body + b"\n", status=status, content_type=JSON_CT, headers=headers)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_text(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_valid_text(k): _valid_text(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_valid_text(v) for v in value]
    return value


def media_type(request: web.Request) -> str:
    ct = request.headers.get("Content-Type", "")
    return ct.split(";", 1)[0].strip().lower()


async def read_body(request: web.Request) -> bytes:
    cl = request.content_length
    if cl is not None and cl > MAX_BODY:
        raise RequestEntityTooLargeError("the server has received a request that is too large",
                                         details={"causes": [{"message": f"limit is {MAX_BODY}"}]})
    chunks: list[bytes] = []
    total = 0
    # kube-apiserver's timeout filter bounds a non-long-running request (and so the reading of
    # its body; its http.Server has no ReadTimeout): a body still arriving then is a 504
    limit = request.app[SERVING].request_timeout
    try:
        async with asyncio.timeout(limit):
            while True:
                chunk = await request.content.read(65536)
                if not chunk:
                    break
                total += len(chunk)
                if total > MAX_BODY:
                    raise RequestEntityTooLargeError("the server has received a request that is too large")
                chunks.append(chunk)
    except TimeoutError:
        # aiohttp answers, then reads and drops what is left of the body for a short lingering
        # time and closes the connection (an unfinished body is never parsed as a request)
        raise TimeoutError_("Timeout: request did not complete within requested timeout - context deadline "
                            "exceeded") from None
    return b"".join(chunks)


_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class _Loader(_BASE_LOADER):  # type: ignore[misc]
    """YAML as sigs.k8s.io/yaml reads it into JSON: a timestamp-looking scalar stays the string
    it is (go-yaml v2 decodes timestamps into interface{} as strings), `!!binary` is its decoded
    text."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP]
    for first, resolvers in _BASE_LOADER.yaml_implicit_resolvers.items()}
# go-yaml v2 also reads an exponent without a dot as a float (`1e3`), which YAML 1.1 (PyYAML)
# leaves a string; checked after the int and float resolvers, so `123` stays an int
_Loader.add_implicit_resolver("tag:yaml.org,2002:float",
                              re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$"),
                              list("-+.0123456789"))
_Loader.add_constructor(_TIMESTAMP, lambda loader, node: loader.construct_scalar(node))
_Loader.add_constructor("tag:yaml.org,2002:binary",
                        lambda loader, node: yaml.SafeLoader.construct_yaml_binary(loader, node)
                        .decode("utf-8", "replace"))
_LOADER = _Loader

# go-yaml v2's alias budget (what sigs.k8s.io/yaml decodes with): up to 400,000 decoded nodes 99% may
# come from alias expansions, from 4,000,000 on only 10%, linear in between
_ALIAS_LOW, _ALIAS_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= _ALIAS_LOW:
        return 0.99
    if decoded >= _ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_LOW) / (_ALIAS_HIGH - _ALIAS_LOW)


def _check_aliasing(raw: bytes) -> None:
    """Refuse a YAML document whose alias expansions dominate what it decodes to (a "billion
    laughs" bomb), counting as go-yaml's decoder does, from the event stream (nothing expanded).

    Example: `a: &a [x, x]`, `b: &b [*a, *a]`, ... 30 levels: 400 bytes that decode to 2^30 nodes
    -> "yaml: document contains excessive aliasing" once the aliased share passes the budget."""
    decoded = 0  # nodes the decoder would visit, counting every alias expansion
    aliased = 0  # of those, visited inside an expansion
    sizes: dict[str, int] = {}  # anchor -> nodes its expansion visits
    open_anchors: list[tuple[str | None, int]] = []  # per open collection: (anchor, decoded at its start)

    def check() -> None:
        if aliased > 100 and decoded > 1000 and aliased / decoded > _allowed_alias_ratio(decoded):
            raise BadRequestError("error converting YAML to JSON: yaml: document contains excessive aliasing")

    for ev in yaml.parse(raw, Loader=_LOADER):
        if isinstance(ev, yaml.AliasEvent):
            size = sizes.get(ev.anchor or "", 0)
            decoded += 1 + size
            aliased += size
            check()
        elif isinstance(ev, yaml.ScalarEvent):
            decoded += 1
            if ev.anchor:
                sizes[ev.anchor] = 1
            check()
        elif isinstance(ev, yaml.CollectionStartEvent):
            decoded += 1
            open_anchors.append((ev.anchor, decoded - 1))
            check()
        elif isinstance(ev, yaml.CollectionEndEvent) and open_anchors:
            anchor, start = open_anchors.pop()
            if anchor:
                sizes[anchor] = decoded - start


# a body nested deeper could be decoded but not stored with its managedFields, or served
MAX_DEPTH = MAX_OBJECT_LEVELS
_DEPTH_MSG = f"the body of the request was in an unknown format: exceeded max depth of {MAX_DEPTH}"


def check_depth(obj: Any) -> None:
    """Refuse values nested deeper than MAX_DEPTH (a 400, before any recursive walk)."""
    if isinstance(obj, dict | list):
        try:
            check_object_levels(obj)
        except orjson.JSONEncodeError as e:
            if "ecursion" in str(e):
                raise BadRequestError(_DEPTH_MSG) from None
            raise BadRequestError(f"the body of the request was in an unknown format: {e}") from None


def _yaml_load(raw: bytes) -> Any:
    try:
        if b"*" in raw and b"&" in raw:
            _check_aliasing(raw)
        obj = _json_keys(yaml.load(raw, Loader=_LOADER))  # noqa: S506 - a safe loader
    except yaml.YAMLError as e:
        raise BadRequestError(f"error converting YAML to JSON: {str(e).splitlines()[0]}") from None
    except RecursionError:
        raise BadRequestError(_DEPTH_MSG) from None
    check_depth(obj)
    return obj


def _json_keys(v: Any) -> Any:
    """sigs.k8s.io/yaml's JSON conversion of YAML mapping keys: integers, floats and booleans
    become their text (`1: a` -> "1", `true: a` -> "true"); another key (null, a sequence) is a
    400 "error converting YAML to JSON"; a `!!set` becomes a mapping to nulls. A float with no
    fraction is written as the integer Go's json.Marshal writes for it (`replicas: 1.0` and
    `1e3` reach the typed decoding as 1 and 1000, so an int32 field takes them)."""
    if type(v) is float:
        return int(v) if v.is_integer() and abs(v) < 1e21 else v
    if isinstance(v, set | frozenset):
        v = dict.fromkeys(v)
    if isinstance(v, dict):
        if all(type(k) is str for k in v):
            return {k: _json_keys(x) for k, x in v.items()} if any(isinstance(x, dict | list | set | float) for x in
                                                                   v.values()) else v
        out: dict[str, Any] = {}
        for k, x in v.items():
            if isinstance(k, bool):
                key = "true" if k else "false"
            elif isinstance(k, int | float | str):
                key = str(k) if not isinstance(k, float) else format(k, "g")
            else:
                raise BadRequestError(f"error converting YAML to JSON: unsupported map key of type: "
                                      f"{type(k).__name__}, key: {k!r}")
            out[key] = _json_keys(x)
        return out
    if isinstance(v, list):
        return [_json_keys(x) for x in v] if any(isinstance(x, dict | list | set | float) for x in v) else v
    return v


def decode_json(raw: bytes) -> Any:
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise BadRequestError(f"the body of the request was in an unknown format: {e}") from None
    check_depth(obj)
    return obj


# `"` then optional blanks then `:`: once per object key in a JSON text (and rarely in a string)
_KEY_COLON = re.compile(rb'"[ \t\r\n]*:')


def _count_keys(v: Any) -> int:
    if isinstance(v, dict):
        return len(v) + sum(_count_keys(x) for x in v.values() if isinstance(x, dict | list))
    if isinstance(v, list):
        return sum(_count_keys(x) for x in v if isinstance(x, dict | list))
    return 0


def _key_colons(decoded: Any, raw: bytes) -> int:
    """What `_KEY_COLON` would count in `raw` if it had no duplicate key. Without `\\u` escapes
    in `raw`, every `"`-then-`:` inside a string is spelled as orjson re-encodes it (`\\"`, a
    literal `:` and blanks), so counting in the C-speed re-encoding equals counting keys plus
    those; with escapes, the keys are counted by a walk (raw then counts at least as many)."""
    if b"\\u" in raw:
        return _count_keys(decoded)
    try:
        return len(_KEY_COLON.findall(orjson.dumps(decoded)))
    except orjson.JSONEncodeError:
        return _count_keys(decoded)


def duplicate_fields(raw: bytes, ct: str, decoded: Any) -> list[tuple[str, str]]:
    """The duplicate object keys of a create/update body, as upstream's strict decoder reports
    them: (path, message) with JSON's `duplicate field "paused"` and YAML's
    `line 12: key "paused" already set in map`, in document order. The path (`spec.paused`) lets
    the core report a field both unknown and duplicated only as unknown (typed kinds).

    JSON costs one regex count when there is no duplicate: a text with as many `":` as the
    decoded value has keys has none (a duplicate collapses two keys into one); only otherwise
    is it parsed again keeping every pair."""
    if ct in ("", JSON_CT, "*/*", "text/plain"):
        if len(_KEY_COLON.findall(raw)) == _key_colons(decoded, raw):
            return []
        found: list[tuple[str, str]] = []

        def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
            seen: dict[str, Any] = {}
            for k, v in items:
                if k in seen:
                    found.append((k, f'duplicate field "{k}"'))
                seen[k] = v
            return seen

        try:
            json.loads(raw, object_pairs_hook=pairs)
        except (ValueError, RecursionError):
            return []
        # the hook sees inner objects first: report in document order, placing each duplicate
        # at a later occurrence of its key in the text
        text = raw.decode("utf-8", "replace")
        nth: dict[str, int] = {}

        def where(d: tuple[str, str]) -> int:
            k = d[0]
            nth[k] = nth.get(k, 0) + 1
            hits = [m.start() for m in re.finditer(re.escape(json.dumps(k)) + r"[ \t\r\n]*:", text)]
            return hits[min(nth[k], len(hits) - 1)] if hits else 0

        return sorted(found, key=where)
    if ct in ("application/yaml", "application/x-yaml", "text/yaml"):
        try:
            root = yaml.compose(raw, Loader=_LOADER)
        except (yaml.YAMLError, RecursionError):
            return []
        out: list[tuple[str, str]] = []
        stack: list[yaml.Node] = [root] if root is not None else []
        while stack:
            node = stack.pop()
            if isinstance(node, yaml.MappingNode):
                keys: set[str] = set()
                for k, v in node.value:
                    if isinstance(k, yaml.ScalarNode):
                        if k.value in keys:
                            out.append((k.value, f'line {k.start_mark.line + 1}: key "{k.value}" already set in map'))
                        keys.add(k.value)
                    stack.append(v)
            elif isinstance(node, yaml.SequenceNode):
                stack.extend(node.value)
        out.sort(key=lambda d: int(d[1].split(":", 1)[0][5:]))
        return out
    return []


def decode_object(raw: bytes, ct: str) -> Any:
    """Decode a create/update body into a JSON-shaped value."""
    if not raw.strip():
        raise BadRequestError("the body of the request was empty")
    if ct in ("", JSON_CT, "*/*", "text/plain"):
        return decode_json(raw)
    if ct in ("application/yaml", "application/x-yaml", "text/yaml"):
        return _yaml_load(raw)
    if ct == "application/vnd.kubernetes.protobuf":
        try:
            return decode_protobuf(raw)
        except UnsupportedKindError as e:
            raise UnsupportedMediaTypeError(f"the body of the request was in an unknown format: {e}") from None
        except ProtobufError as e:
            raise BadRequestError(f"the body of the request was in an unknown format: {e}") from None
    raise UnsupportedMediaTypeError(
        f'the body of the request was in an unknown format - accepted media types include: '
        f'application/json, application/yaml, application/vnd.kubernetes.protobuf (got "{ct}")')


def decode_patch(raw: bytes, ct: str) -> tuple[str, Any]:
    kind = PATCH_TYPES.get(ct)
    if kind is None:
        raise UnsupportedMediaTypeError(
            f'the body of the request was in an unknown format - accepted media types include: '
            f'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, '
            f'application/strategic-merge-patch+json (got "{ct}")')
    if not raw.strip():
        raise BadRequestError("the body of the request was empty")
    if kind == "apply":
        return "apply", _yaml_load(raw)
    if kind == "apply-cbor":
        raise UnsupportedMediaTypeError("application/apply-patch+cbor is not supported")
    return kind, decode_json(raw)


def decode_delete_options(raw: bytes, ct: str) -> dict[str, Any] | None:
    if not raw.strip():
        return None
    if ct == "application/x-www-form-urlencoded":
        if raw.lstrip()[:1] == b"{":
            # `curl -X DELETE -d '{"gracePeriodSeconds":0}'`: a JSON body under curl's default type
            return decode_delete_options(raw, JSON_CT)
        return _form_delete_options(raw)
    obj = decode_object(raw, ct)
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise BadRequestError("DeleteOptions must be a JSON object")
    return obj


def _form_delete_options(raw: bytes) -> dict[str, Any]:
    """`gracePeriodSeconds=0&propagationPolicy=Foreground&orphanDependents=false&dryRun=All`,
    typed as the DeleteOptions query parameters are."""
    out: dict[str, Any] = {}
    for k, v in parse_qsl(raw.decode("utf-8", "replace")):
        if k == "gracePeriodSeconds":
            try:
                out[k] = int(v)
            except ValueError:
                raise BadRequestError(f'invalid value for gracePeriodSeconds: "{v}"') from None
        elif k == "orphanDependents":
            out[k] = v.lower() in ("true", "1")
        elif k == "dryRun":
            out.setdefault(k, []).append(v)
        else:
            out[k] = v
    return out
