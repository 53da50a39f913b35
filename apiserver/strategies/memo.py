"""Bounded memos keyed on a value's exact JSON, for the request core's pure steps (layer L4).

Why: validating and decoding a pod spec are pure functions of the spec, and the pods of one
template repeat the same spec; `apiserver.strategies.podspec` (validation) and
`apiserver.strategies.schema` (decoding) remember their answers per spec. Both key on the
spec's JSON written with orjson's passthrough options (`exact_json`: subclasses of
str/int/dict/list, dataclasses and datetimes refuse to encode, so only plain JSON values are
keys) and admit a key on its second sighting (`SecondSightLRU`: a stream of specs unlike each
other pays one encoding each, not an entry each).

Data flow: caller -> `exact_json(value, max_bytes)` -> key -> `SecondSightLRU.get` / `first_sighting`
/ `put`. Servers in other threads of one process may share a memo: every step is a single
dict operation or tolerates a concurrent eviction.
"""

from __future__ import annotations

import contextlib
import re
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

import orjson

from minik3s.api.types import JsonDict

_EXACT = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def exact_json(value: Any, max_bytes: int) -> bytes | None:
    """`value`'s JSON when it is plain JSON data and at most `max_bytes` long, else None (not a
    memo key: a bytes key tells 1, 1.0 and True apart; a caller also compares values, since
    the bytes do not tell a tuple from a list or NaN from null)."""
    try:
        data = orjson.dumps(value, option=_EXACT)
    except TypeError:
        return None
    return data if len(data) <= max_bytes else None


class SecondSightLRU(Generic[K, V]):
    """At most `size` entries and `size` remembered sightings, least recently used out first;
    a key is stored only after `first_sighting` has seen it once."""

    __slots__ = ("_entries", "_seen", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._seen: OrderedDict[K, None] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            with contextlib.suppress(KeyError):  # another thread's server may have evicted it
                self._entries.move_to_end(key)
        return value

    def first_sighting(self, key: K) -> bool:
        """True the first time `key` is asked about (it is remembered as seen); False when it
        was seen before (the sighting is used up: `put` it now or it starts over)."""
        if key in self._seen:
            self._seen.pop(key, None)
            return False
        self._seen[key] = None
        _trim(self._seen, self.size)
        return True

    def put(self, key: K, value: V) -> None:
        self._entries[key] = value
        _trim(self._entries, self.size)

    def __len__(self) -> int:
        return len(self._entries)


def _trim(d: OrderedDict[Any, Any], size: int) -> None:
    """Drop the oldest entries beyond `size` (each step atomic)."""
    while len(d) > size:
        try:
            d.popitem(last=False)
        except KeyError:
            return


# The ServiceAccount plugin names every pod's token volume kube-api-access-<5 random>: a memo key
# with that name as is would never repeat, so keys carry one placeholder instead (a character
# the generated names never use, so no real name equals it).
_TOKEN_VOLUME_PREFIX = "kube-api-access-"
_TOKEN_VOLUME_NAME = re.compile(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}\Z")
_TOKEN_PLACEHOLDER_NAME = "kube-api-access-00000"
_TOKEN_PLACEHOLDER = b'"' + _TOKEN_PLACEHOLDER_NAME.encode() + b'"'


def without_token_volume_name(spec: JsonDict, data: bytes) -> tuple[bytes, str]:
    """`data` (a pod spec's JSON) with the generated token volume's name, wherever it is a whole
    JSON string, replaced by the placeholder, and that name; `(data, "")` (the same bytes object)
    when the spec has none. A memo's answer for the placeholder spec holds for the real one when
    it does not quote the name (decoding and validation treat two such names alike: DNS labels of
    one length, each used where the other is) and `same_but_token_name` holds."""
    volumes = spec.get("volumes")
    if not isinstance(volumes, list):
        return data, ""
    for v in volumes:
        name = v.get("name") if isinstance(v, dict) else None
        if isinstance(name, str) and name.startswith(_TOKEN_VOLUME_PREFIX) and _TOKEN_VOLUME_NAME.match(name):
            if _TOKEN_PLACEHOLDER in data:
                return data, ""
            return data.replace(b'"' + name.encode() + b'"', _TOKEN_PLACEHOLDER), name
    return data, ""


def same_but_token_name(spec: JsonDict, plain: JsonDict, name: str) -> bool:
    """`spec == plain` once the token volume's `name` is the placeholder in the volume and in the
    containers' mounts (copies of the few dicts on those paths; `spec` is not changed). False
    when the name also appears elsewhere (the placeholder spec has it there too): the caller then
    walks the spec itself."""
    placeholder = _TOKEN_PLACEHOLDER_NAME
    renamed = dict(spec)
    renamed["volumes"] = [{**v, "name": placeholder} if isinstance(v, dict) and v.get("name") == name else v
                          for v in spec["volumes"]]
    for key in ("initContainers", "containers"):
        containers = spec.get(key)
        if not isinstance(containers, list):
            continue
        out = []
        for c in containers:
            mounts = c.get("volumeMounts") if isinstance(c, dict) else None
            if isinstance(mounts, list):
                c = {**c, "volumeMounts": [{**m, "name": placeholder}
                                           if isinstance(m, dict) and m.get("name") == name else m for m in mounts]}
            out.append(c)
        renamed[key] = out
    return renamed == plain
