"""Server-side apply and field ownership (`metadata.managedFields`) (layer L4, apiserver).

Why: `kubectl apply --server-side` sends the whole intended configuration; the server merges it
into the live object, remembers which manager set which field, refuses (409) to let one manager
silently change a field another manager set, and removes fields a manager stopped applying when
nobody else uses them. Ordinary writes record ownership too (`update_managed_fields`), so an
apply conflicts with an earlier `kubectl edit` or client-side apply exactly as upstream
(k8s.io/apimachinery/pkg/util/managedfields + sigs.k8s.io/structured-merge-diff).

Model: a field set is a Python set of paths; a path is a tuple of fieldsV1 elements:
`f:<name>` (a map member), `k:{"name":"c"}` (a keyed list item, keys sorted, compact JSON),
`v:<json>` (a set member), `i:<n>` (an index). Leaves, list items, atomic values and map entries
are members; `fieldsV1` marks a member that also has members below it with `".": {}`.
Keyed lists are the kinds' `+listType=map` lists from `PatchMeta`; with no schema (custom
resources) maps are granular and lists atomic.

Apply, in order (structured-merge-diff Updater.Apply):
1. merged = live ⊕ applied (applied wins on leaves; keyed lists merge by key);
2. the applier now owns exactly the applied field set;
3. prune: fields the applier owned before, owns no longer, and no manager owns → removed;
4. compare live and merged: fields added or changed that other managers own are conflicts
   (409 unless `force`; with `force` the others lose them); removed fields leave every set.
Applying a value equal to the live one is no conflict: both managers then share the field.

Worked example: live `spec.replicas: 3` owned by `kubectl-client-side-apply` (Update);
manager `kubectl` applies `spec.replicas: 5` → conflict `.spec.replicas`; applying `3` instead
succeeds and both own `f:spec.f:replicas`.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

from apiserver.patch.errors import ApplyConflictError, PatchError
from apiserver.patch.json_patch import json_equal
from apiserver.patch.strategic_merge import DEDUCED, PatchMeta, canonical, patch_meta_for

Path = tuple[str, ...]
FieldSet = set[Path]

BEFORE_FIRST_APPLY = "before-first-apply"

# stripmeta.go: fields no manager ever owns
_STRIPPED: tuple[Path, ...] = (
    ("f:apiVersion",),
    ("f:kind",),
    ("f:metadata", "f:name"),
    ("f:metadata", "f:namespace"),
    ("f:metadata", "f:creationTimestamp"),
    ("f:metadata", "f:selfLink"),
    ("f:metadata", "f:uid"),
    ("f:metadata", "f:clusterName"),
    ("f:metadata", "f:generation"),
    ("f:metadata", "f:managedFields"),
    ("f:metadata", "f:resourceVersion"),
)

_MISSING: Any = object()


class _Lookup:
    """Sentinel: find the schema from the object's apiVersion/kind."""


LOOKUP = _Lookup()


@dataclass(slots=True)
class ManagerEntry:
    """One `metadata.managedFields` entry, decoded."""

    manager: str
    operation: str
    api_version: str
    time: str | None
    fields: FieldSet = field(default_factory=set)
    subresource: str = ""

    def same_manager(self, manager: str, operation: str, subresource: str, api_version: str = "") -> bool:
        """Upstream's manager identity (BuildManagerIdentifier): manager, operation and
        subresource, and for an Update also the API version written through (an applier is one
        manager whichever version it applies in)."""
        if (self.manager, self.operation, self.subresource) != (manager, operation, subresource):
            return False
        return operation == "Apply" or self.api_version == api_version

    def printed(self) -> str:
        """How upstream names a manager in conflict messages (printManager)."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text


# --- paths and fieldsV1 -----------------------------------------------------------------------


def _item_element(item: Any, meta: PatchMeta, index: int) -> str:
    if meta.list_type == "set":
        if type(item) is str:
            return _set_element(item)
        return "v:" + canonical(item)
    if meta.list_type == "map" and isinstance(item, dict):
        keys = {}
        for k in meta.list_keys:
            if k in item and item[k] is not None:
                keys[k] = item[k]
            elif k in meta.key_defaults:
                keys[k] = meta.key_defaults[k]
        # string and integer keys (every built-in kind's) through the memo; bools, floats and
        # containers would collide in a hash key (True == 1) or cannot be one
        if all(type(v) is str or type(v) is int for v in keys.values()):
            return _map_element(tuple(keys.items()))
        return "k:" + canonical(keys)
    return f"i:{index}"


@functools.lru_cache(maxsize=4096)
def _set_element(item: str) -> str:
    return "v:" + canonical(item)


@functools.lru_cache(maxsize=4096)
def _map_element(keys: tuple[tuple[str, str | int], ...]) -> str:
    """`k:` + the canonical JSON of a keyed item's keys, memoised: a pod's conditions and
    containers are named by the same few keys on every write."""
    return "k:" + canonical(dict(keys))


def _granular_list(meta: PatchMeta) -> bool:
    return not meta.deduced and meta.list_type in ("map", "set")


def to_field_set(obj: Any, schema: PatchMeta | None) -> FieldSet:
    """The field set an applied configuration sets (typed.ToFieldSet)."""
    out: FieldSet = set()
    _walk_set(obj, schema or DEDUCED, (), out)
    return out


def _walk_set(value: Any, meta: PatchMeta, path: Path, out: FieldSet) -> None:
    if isinstance(value, dict) and not meta.atomic:
        for k, v in value.items():
            p = (*path, f"f:{k}")
            _walk_set(v, meta.child(k), p, out)
            # members of a map are members even when not leaves; fields of a struct only as leaves
            if not meta.struct or v is None:
                out.add(p)
        return
    if isinstance(value, list) and _granular_list(meta):
        element = meta.element()
        for i, item in enumerate(value):
            p = (*path, _item_element(item, meta, i))
            _walk_set(item, element, p, out)
            out.add(p)
        return
    if path:
        out.add(path)


def encode_fields(fields: FieldSet) -> dict[str, Any]:
    """A field set in the FieldsV1 JSON encoding (a fresh tree the caller owns). Memoised on
    the set: the entries of one manager on objects of one shape (every pod's PodScheduled
    condition by kube-scheduler, the creator's fields of a ReplicaSet's pods) encode alike."""
    key = frozenset(fields)
    try:
        return cast(dict[str, Any], orjson.loads(_encoded_fields(key)))
    except TypeError:  # nested deeper than orjson encodes: the store refuses such an object anyway
        return _fields_tree(key)


@functools.lru_cache(maxsize=1024)
def _encoded_fields(fields: frozenset[Path]) -> bytes:
    return orjson.dumps(_fields_tree(fields))


def _fields_tree(fields: frozenset[Path]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for path in sorted(fields):
        node = root
        for element in path:
            node = node.setdefault(element, {})
    for path in fields:
        node = root
        for element in path:
            node = node[element]
        if node and "." not in node:
            node["."] = {}
    return _sorted_tree(root)


def _sorted_tree(node: dict[str, Any]) -> dict[str, Any]:
    def order(k: str) -> tuple[int, str]:
        return (0, "") if k == "." else ({"f": 1, "k": 2, "v": 3, "i": 4}.get(k[:1], 5), k)

    return {k: _sorted_tree(node[k]) for k in sorted(node, key=order)}


def decode_fields(fields_v1: Any) -> FieldSet:
    """The field set of a FieldsV1 tree (a fresh set the caller may change). Memoised on the
    tree's JSON bytes, for the same reason as `encode_fields`; a tree orjson cannot encode is
    walked directly."""
    if not isinstance(fields_v1, dict):
        return set()
    try:
        data = orjson.dumps(fields_v1)
    except TypeError:
        return _walk_fields(fields_v1)
    return set(_decoded_fields(data))


@functools.lru_cache(maxsize=1024)
def _decoded_fields(data: bytes) -> frozenset[Path]:
    return frozenset(_walk_fields(orjson.loads(data)))


def _walk_fields(fields_v1: dict[str, Any]) -> FieldSet:
    out: FieldSet = set()

    def walk(node: dict[str, Any], path: Path) -> None:
        for k, v in node.items():
            if k == ".":
                if path:
                    out.add(path)
                continue
            p = (*path, k)
            if isinstance(v, dict) and v:
                walk(v, p)
            else:
                out.add(p)

    walk(fields_v1, ())
    return out


def path_string(path: Path) -> str:
    """structured-merge-diff Path.String(): `.spec.containers[name="c"].image`."""
    parts: list[str] = []
    for element in path:
        kind, rest = element[:2], element[2:]
        if kind == "f:":
            parts.append("." + rest)
        elif kind == "k:":
            keys = json.loads(rest)
            parts.append("[" + ",".join(f"{k}={json.dumps(v)}" for k, v in sorted(keys.items())) + "]")
        elif kind == "v:":
            parts.append(f"[={rest}]")
        else:
            parts.append(f"[{rest}]")
    return "".join(parts)


_PATH_TOKEN = re.compile(r"\.?([^.\[]+)|\[(\d+)\]")


def field_path_to_smd(obj: Any, dotted: str, schema: PatchMeta | None) -> str:
    """A decoder's field path (`spec.containers[0].bogus`) as structured-merge-diff prints the
    same place in `obj`: list items by their keys (`.spec.containers[name="c"].bogus`), set
    items by value, other lists by index."""
    meta = schema or DEDUCED
    path: list[str] = []
    node: Any = obj
    for m in _PATH_TOKEN.finditer(dotted):
        name, index = m.group(1), m.group(2)
        if name is not None:
            path.append(f"f:{name}")
            node = node.get(name) if isinstance(node, dict) else None
            meta = meta.child(name)
            continue
        i = int(index)
        item = node[i] if isinstance(node, list) and i < len(node) else None
        path.append(_item_element(item, meta, i) if _granular_list(meta) else f"i:{i}")
        node, meta = item, meta.element()
    return path_string(tuple(path))


def typed_patch_error(object_name: str, gvk: str, errors: list[str]) -> PatchError:
    """fieldmanager's `failed to create typed patch object (<ns>/<name>; <gvk>): <errs>`: an
    apply configuration with fields the kind's schema does not declare. Upstream returns it
    as a plain error, which the handler answers with a reason-less 500."""
    detail = errors[0] if len(errors) == 1 else "\n".join(["errors:", *(f"  {e}" for e in errors)])
    return PatchError(f"failed to create typed patch object ({object_name}; {gvk}): {detail}", code=500)


def _strip(fields: FieldSet, reset: Iterable[Path] = ()) -> FieldSet:
    heads, pairs = _stripped_prefixes(tuple(reset))
    meta = ("f:metadata",)
    return {p for p in fields if not p or (p[0] not in heads and p[:2] not in pairs and p != meta)}


@functools.lru_cache(maxsize=64)
def _stripped_prefixes(reset: tuple[Path, ...]) -> tuple[frozenset[str], frozenset[Path]]:
    """The stripped and reset paths as the first elements (paths of one element) and first
    pairs (paths of two) a dropped path starts with; no stripped or reset path is longer."""
    banned = (*_STRIPPED, *reset)
    if any(len(b) not in (1, 2) for b in banned):
        raise ValueError(f"stripped paths have one or two elements: {banned}")
    return frozenset(b[0] for b in banned if len(b) == 1), frozenset(b for b in banned if len(b) == 2)


# --- compare (typed.Compare) ------------------------------------------------------------------


@dataclass(slots=True)
class Comparison:
    added: FieldSet = field(default_factory=set)
    modified: FieldSet = field(default_factory=set)
    removed: FieldSet = field(default_factory=set)


def _empty(v: Any) -> bool:
    return v is _MISSING or v is None or v == {} or v == []


def compare(old: Any, new: Any, schema: PatchMeta | None) -> Comparison:
    """Fields added, modified (leaf values only) and removed going from `old` to `new`."""
    result = Comparison()
    _cmp(old, new, schema or DEDUCED, (), result)
    return result


def _cmp(lhs: Any, rhs: Any, meta: PatchMeta, path: Path, res: Comparison) -> None:
    if lhs is rhs or (isinstance(lhs, (dict, list)) and type(lhs) is type(rhs) and lhs == rhs):
        return  # unchanged subtree (a schema never lets one field hold both a bool and a number)
    if lhs is _MISSING:
        _present(rhs, meta, path, res.added)
        return
    if rhs is _MISSING:
        _present(lhs, meta, path, res.removed)
        return
    both_empty = _empty(lhs) and _empty(rhs)
    if (
        not both_empty
        and not meta.atomic
        and (lhs is _MISSING or isinstance(lhs, dict))
        and (rhs is _MISSING or isinstance(rhs, dict))
    ):
        l_map = {} if lhs is _MISSING else lhs
        r_map = {} if rhs is _MISSING else rhs
        for k in [*l_map, *(k for k in r_map if k not in l_map)]:
            lv, rv = l_map.get(k, _MISSING), r_map.get(k, _MISSING)
            if lv is rv or (type(lv) is type(rv) and lv == rv):
                continue  # what the call would decide: an unchanged value adds no path
            _cmp(lv, rv, meta.child(k), (*path, f"f:{k}"), res)
        if path and not meta.struct:
            _mark_container(lhs, rhs, path, res)
        return
    if (
        not both_empty
        and _granular_list(meta)
        and (lhs is _MISSING or isinstance(lhs, list))
        and (rhs is _MISSING or isinstance(rhs, list))
    ):
        l_items = _index_items([] if lhs is _MISSING else lhs, meta)
        r_items = _index_items([] if rhs is _MISSING else rhs, meta)
        element = meta.element()
        for pe in [*l_items, *(pe for pe in r_items if pe not in l_items)]:
            li, ri = l_items.get(pe, _MISSING), r_items.get(pe, _MISSING)
            if li is ri or (type(li) is type(ri) and li == ri):
                continue  # unchanged item: neither it nor its container mark changes anything
            p = (*path, pe)
            _cmp(li, ri, element, p, res)
            if isinstance(li, dict) or isinstance(ri, dict):
                _mark_container(li, ri, p, res)
        if path and not meta.always_present:
            _mark_container(lhs, rhs, path, res)
        return
    if lhs is _MISSING:
        res.added.add(path)
    elif rhs is _MISSING:
        res.removed.add(path)
    elif not json_equal(lhs, rhs):
        res.modified.add(path)


def _present(value: Any, meta: PatchMeta, path: Path, out: FieldSet) -> None:
    """`_cmp` of a value against a missing one: every field of `value` goes into `out` (added or
    removed), walked without comparing anything."""
    if isinstance(value, dict):
        if value and not meta.atomic:
            child = meta.child
            for k, v in value.items():
                _present(v, child(k), (*path, f"f:{k}"), out)
            if path and not meta.struct:
                out.add(path)
            return
    elif isinstance(value, list) and value and _granular_list(meta):
        element = meta.element()
        for pe, item in _index_items(value, meta).items():
            p = (*path, pe)
            _present(item, element, p, out)
            if isinstance(item, dict):
                out.add(p)
        if path and not meta.always_present:
            out.add(path)
        return
    out.add(path)


def _mark_container(lhs: Any, rhs: Any, path: Path, res: Comparison) -> None:
    if lhs is _MISSING:
        res.added.add(path)
    elif rhs is _MISSING:
        res.removed.add(path)


def _index_items(items: list[Any], meta: PatchMeta) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, item in enumerate(items):
        out.setdefault(_item_element(item, meta, i), item)
    return out


# --- merge (typed.Merge) ----------------------------------------------------------------------


def _merge(lhs: Any, rhs: Any, meta: PatchMeta) -> Any:
    if isinstance(lhs, dict) and isinstance(rhs, dict) and not meta.atomic:
        out = dict(lhs)
        for k, v in rhs.items():
            out[k] = _merge(lhs[k], v, meta.child(k)) if k in lhs else copy.deepcopy(v)
        return out
    if isinstance(lhs, list) and isinstance(rhs, list) and _granular_list(meta):
        return _merge_list(lhs, rhs, meta)
    return copy.deepcopy(rhs)


def _merge_list(lhs: list[Any], rhs: list[Any], meta: PatchMeta) -> list[Any]:
    """Keyed/set list merge keeping live-only items in place and applied items in applied order."""
    l_order = list(_index_items(lhs, meta).items())
    r_index = _index_items(rhs, meta)
    r_order = list(r_index.items())
    l_index = dict(l_order)
    shared = [pe for pe, _ in r_order if pe in l_index]
    element = meta.element()
    out: list[Any] = []
    li = ri = 0
    next_shared = shared.pop(0) if shared else None
    while li < len(l_order) or ri < len(r_order):
        progressed = False
        if li < len(l_order) and ri < len(r_order):
            lpe = l_order[li][0]
            if lpe == r_order[ri][0]:
                out.append(_merge(l_order[li][1], r_order[ri][1], element))
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if lpe in r_index and next_shared is not None and next_shared != lpe:
                li += 1
                continue
        if li < len(l_order) and l_order[li][0] not in r_index:
            out.append(copy.deepcopy(l_order[li][1]))
            li += 1
            continue
        if ri < len(r_order):
            rpe, rval = r_order[ri]
            out.append(_merge(l_index[rpe], rval, element) if rpe in l_index else copy.deepcopy(rval))
            ri += 1
            progressed = True
            if next_shared == rpe:
                next_shared = shared.pop(0) if shared else None
        if not progressed:
            li += 1  # a shared item already emitted
    return out


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


# --- removal (typed.RemoveItems) --------------------------------------------------------------


def _remove_path(obj: dict[str, Any], path: Path, schema: PatchMeta) -> None:
    """Remove the value at `path`; containers emptied by the removal disappear too."""
    trail: list[tuple[Any, Any]] = []  # (container, key-or-index)
    node: Any = obj
    meta = schema
    for element in path:
        if element.startswith("f:"):
            name = element[2:]
            if not isinstance(node, dict) or name not in node:
                return
            trail.append((node, name))
            node, meta = node[name], meta.child(name)
        else:
            if not isinstance(node, list):
                return
            for i, item in enumerate(node):
                if _item_element(item, meta, i) == element:
                    trail.append((node, i))
                    node = item
                    break
            else:
                return
            meta = meta.element()
    while trail:
        container, key = trail.pop()
        del container[key]
        if container or not trail:
            break


def _is_key_field(path: Path) -> bool:
    """True for `...k:{"name":"c"}, f:name`: the key of a list item is part of its identity."""
    if len(path) < 2 or not path[-2].startswith("k:") or not path[-1].startswith("f:"):
        return False
    return path[-1][2:] in json.loads(path[-2][2:])


# --- managedFields encode/decode --------------------------------------------------------------


def decode_managed_fields(entries: Any) -> list[ManagerEntry]:
    out: list[ManagerEntry] = []
    if not isinstance(entries, list):
        return out
    for e in entries:
        if not isinstance(e, dict) or not e.get("manager"):
            continue
        out.append(
            ManagerEntry(
                manager=str(e.get("manager")),
                operation=str(e.get("operation") or "Update"),
                api_version=str(e.get("apiVersion") or ""),
                time=e.get("time"),
                fields=decode_fields(e.get("fieldsV1")),
                subresource=str(e.get("subresource") or ""),
            )
        )
    return out


def encode_managed_fields(entries: list[ManagerEntry]) -> list[dict[str, Any]]:
    """Entries in upstream's order: Apply before Update, then by time, manager, apiVersion."""
    ordered = sorted(
        (e for e in entries if e.fields),
        key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource),
    )
    out: list[dict[str, Any]] = []
    for e in ordered:
        d: dict[str, Any] = {"manager": e.manager, "operation": e.operation, "apiVersion": e.api_version}
        if e.time:
            d["time"] = e.time
        d["fieldsType"] = "FieldsV1"
        d["fieldsV1"] = encode_fields(e.fields)
        if e.subresource:
            d["subresource"] = e.subresource
        out.append(d)
    return out


def _without_managed_fields(obj: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of `obj` without managedFields; only the top level and metadata are copied."""
    if not obj:
        return {}
    out = dict(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta = dict(meta)
        meta.pop("managedFields", None)
        out["metadata"] = meta
    return out


def _with_managed_fields(obj: dict[str, Any], entries: list[ManagerEntry]) -> dict[str, Any]:
    encoded = encode_managed_fields(entries)
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    if encoded:
        meta["managedFields"] = encoded
    else:
        meta.pop("managedFields", None)
    return obj


def _resolve_schema(schema: PatchMeta | None | _Lookup, obj: dict[str, Any]) -> PatchMeta | None:
    if isinstance(schema, _Lookup):
        return patch_meta_for(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
    return schema


def _record_update(
    entries: list[ManagerEntry],
    old: dict[str, Any],
    new: dict[str, Any],
    *,
    manager: str,
    operation: str,
    api_version: str,
    now: str,
    schema: PatchMeta | None,
    subresource: str,
    reset: tuple[Path, ...],
) -> list[ManagerEntry]:
    diff = compare(old, new, schema)
    changed = _strip(diff.added | diff.modified, reset)
    for e in entries:
        e.fields -= changed
        e.fields -= diff.removed
    if changed:
        mine = next((e for e in entries if e.same_manager(manager, operation, subresource, api_version)), None)
        if mine is None:
            mine = ManagerEntry(manager, operation, api_version, now, set(), subresource)
            entries.append(mine)
        mine.fields |= changed
        mine.time = now
        mine.api_version = api_version
    return [e for e in entries if e.fields]


# --- create fast path -------------------------------------------------------------------------

_ORDER = {"f": 1, "k": 2, "v": 3, "i": 4}


def _order(k: str) -> tuple[int, str]:
    return (0, "") if k == "." else (_ORDER.get(k[:1], 5), k)


# banned paths as a trie: path element -> the trie below it; the key None marks a banned path
_BannedTrie = dict[str | None, Any]


@functools.lru_cache(maxsize=64)
def _banned_trie(paths: tuple[Path, ...]) -> _BannedTrie:
    """Shared and cached per set of paths: callers only read it."""
    root: _BannedTrie = {}
    for p in paths:
        node = root
        for e in p:
            node = node.setdefault(e, {})
        node[None] = True
    return root


def _created_tree(
    value: Any, meta: PatchMeta, banned: _BannedTrie | None, *, root: bool = False, metadata: bool = False
) -> tuple[dict[str, Any], bool] | None:
    """FieldsV1 subtree that `compare({}, obj)` + `encode_fields` would give for this field, built
    in one walk: (children, whether the field itself is a member). None when nothing at or below
    it is recorded. `banned` is the trie of stripped paths below this field (None: nothing below
    is stripped), so the walk builds no path tuples; `root` marks the object itself, `metadata`
    the top-level metadata field. Parity with the general algorithm is pinned by tests
    (tests/apiserver/patch/test_apply_create_fastpath.py)."""
    if isinstance(value, dict) and value and not meta.atomic:
        children: dict[str, Any] = {}
        child = meta.child
        for k, v in value.items():
            pe = "f:" + k
            below = None
            if banned is not None:
                below = banned.get(pe)
                if below is not None and None in below:
                    continue
            if not isinstance(v, (dict, list)):
                children[pe] = {}  # a scalar: a member without children (most fields)
                continue
            if root and below is None and k != "metadata":
                node = _top_level_node(v, child(k))
                if node is not None:
                    children[pe] = node
                continue
            sub = _created_tree(v, child(k), below, metadata=root and k == "metadata")
            if sub is not None:
                children[pe] = _field_node(*sub) if isinstance(v, dict) else _node(*sub)
        member = not root and not meta.struct and not metadata
        return (children, member) if children or member else None
    if isinstance(value, list) and value and _granular_list(meta):
        element = meta.element()
        children = {}
        for pe, item in _index_items(value, meta).items():
            below = banned.get(pe) if banned is not None else None
            if below is not None and None in below:
                sub = None
            else:
                sub = _created_tree(item, element, below)
            children[pe] = _node(sub[0] if sub is not None else {}, True)
        member = not root and not meta.always_present
        return (children, member) if children or member else None
    return None if root else ({}, True)


class _Same:
    """A cache key part comparing by identity (schema nodes are unhashable dataclasses); it
    holds the node, so the id cannot be reused while a cache entry refers to it."""

    __slots__ = ("obj",)

    def __init__(self, obj: PatchMeta) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj


@functools.lru_cache(maxsize=512)
def _encoded_top_level_node(meta: _Same, data: bytes) -> bytes | None:
    """The fieldsV1 node of one top-level field (e.g. `spec`) whose JSON encoding is `data`, as
    JSON, or None when nothing in it is recorded. A pure function of its arguments, memoised:
    the pods one controller creates share their spec byte for byte (same template, same
    defaults), so the walk runs once per distinct spec instead of once per create."""
    value = orjson.loads(data)
    sub = _created_tree(value, meta.obj, None)
    if sub is None:
        return None
    return orjson.dumps(_field_node(*sub) if isinstance(value, dict) else _node(*sub))


def _top_level_node(value: dict[str, Any] | list[Any], meta: PatchMeta) -> dict[str, Any] | None:
    """`_created_tree` + `_field_node`/`_node` for a top-level field with nothing stripped below
    it, through the memo keyed by the field's exact JSON bytes (equal bytes, equal value, equal
    tree; the key never loses information, so a hit is always right). Every call returns a fresh
    tree the caller may own. A value orjson cannot encode, or larger than `_MEMO_MAX_BYTES`,
    takes the direct walk."""
    try:
        encoded = _encoded_top_level_node(_Same(meta), _bounded_json(value))
    except _NoShape:  # nested deeper than orjson encodes, or too large to be a memo key
        sub = _created_tree(value, meta, None)
        if sub is None:
            return None
        return _field_node(*sub) if isinstance(value, dict) else _node(*sub)
    return None if encoded is None else cast(dict[str, Any], orjson.loads(encoded))


def _field_node(children: dict[str, Any], member: bool) -> dict[str, Any]:
    """`_node` for a map's children: every key is "f:<name>" (plus "."), so plain string order is
    `_order`'s order ("." sorts before "f:")."""
    if children and member:
        children["."] = {}
    if len(children) < 2:
        return children
    return {k: children[k] for k in sorted(children)}


def _node(children: dict[str, Any], member: bool) -> dict[str, Any]:
    if children and member:
        children["."] = {}
    return {k: children[k] for k in sorted(children, key=_order)}


def _created_fields_v1_walk(obj: dict[str, Any], schema: PatchMeta, reset: tuple[Path, ...]) -> dict[str, Any]:
    banned = _banned_trie((*_STRIPPED, *reset))
    sub = _created_tree(obj, schema, banned, root=True)
    return _field_node(sub[0], False) if sub is not None else {}


# Values whose JSON is larger than this are never part of a memo key (the memo would hold them).
_MEMO_MAX_BYTES = 64 * 1024
_CONTAINER_TYPES = (dict, list)  # a constant tuple: `isinstance(v, dict | list)` builds a union per call
# exact JSON scalar types: a value of one of these is never a container (one set lookup decides it)
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
_Token = tuple[str, Any] | None


class _NoShape(Exception):
    """The object has a value the shape memo does not take (too large, not encodable)."""


def _shape_token(v: Any) -> _Token:
    """What a create's fieldsV1 can depend on in one value: None for a scalar (every scalar is a
    leaf, whatever its value); ("d", keys) for a map of scalars (only its keys become fields:
    labels, annotations, ConfigMap data); ("j", JSON) for any other container, whose values may
    name fields (keyed list items, set members)."""
    if isinstance(v, dict):
        scalar = _SCALAR_TYPES
        for x in v.values():
            if type(x) not in scalar and isinstance(x, _CONTAINER_TYPES):
                return ("j", _bounded_json(v))
        return ("d", tuple(v))
    if isinstance(v, list):
        return ("j", _bounded_json(v))
    return None


def _bounded_json(v: Any) -> bytes:
    try:
        data = orjson.dumps(v)
    except TypeError:  # e.g. an integer beyond 64 bits, nesting deeper than orjson encodes
        raise _NoShape from None
    if len(data) > _MEMO_MAX_BYTES:
        raise _NoShape
    return data


def _creation_shape(obj: dict[str, Any]) -> tuple[Any, ...]:
    """The key of `_encoded_created_fields`: per top-level field its name alone when a scalar,
    else (name, token); metadata's fields one level deeper, the same way (so the name, uid and
    label values of each object do not matter); managedFields left out. Raises _NoShape.
    Example: two pods from one template, differing in name, uid and a label's value, have one
    shape."""
    parts: list[Any] = []
    add = parts.append
    scalar = _SCALAR_TYPES
    for k, v in obj.items():
        if type(v) in scalar:  # most fields; what the isinstance checks below decide for them too
            add(k)
        elif isinstance(v, dict) and k == "metadata":
            meta: list[Any] = []
            for mk, mv in v.items():
                if type(mv) not in scalar and isinstance(mv, _CONTAINER_TYPES):
                    if mk != "managedFields":
                        meta.append((mk, _shape_token(mv)))
                else:
                    meta.append(mk)
            add((k, ("m", tuple(meta))))
        elif isinstance(v, _CONTAINER_TYPES):
            add((k, _shape_token(v)))
        else:
            add(k)
    return tuple(parts)


def _from_token(t: _Token) -> Any:
    """A representative value with the token's shape (scalars None, maps of scalars with their
    keys): the walk gives it exactly the fields it gives every value of that shape."""
    if t is None:
        return None
    tag, data = t
    if tag == "d":
        return dict.fromkeys(data)
    if tag == "j":
        return orjson.loads(data)
    return _from_parts(data)


def _from_parts(parts: tuple[Any, ...]) -> dict[str, Any]:
    return {p: None for p in parts if isinstance(p, str)} | {p[0]: _from_token(p[1]) for p in parts
                                                            if not isinstance(p, str)}


@functools.lru_cache(maxsize=512)
def _encoded_created_fields(schema: _Same, reset: tuple[Path, ...], shape: tuple[Any, ...]) -> bytes:
    """The creator's fieldsV1 for every object of `shape` (`_creation_shape`), as JSON. A pure
    function of its arguments, memoised: the objects one client creates in a row (a controller's
    pods, a benchmark's) share one shape, so the walk runs once per shape instead of per create."""
    rep = _from_parts(shape)
    return orjson.dumps(_created_fields_v1_walk(rep, schema.obj, reset))


@functools.lru_cache(maxsize=512)
def _shared_created_fields(schema: _Same, reset: tuple[Path, ...], shape: tuple[Any, ...]) -> dict[str, Any]:
    """`_encoded_created_fields` as one tree per shape, shared by every object that records it
    (read-only, as the stored objects holding it are)."""
    return cast(dict[str, Any], orjson.loads(_encoded_created_fields(schema, reset, shape)))


def _created_fields_v1(obj: dict[str, Any], schema: PatchMeta | None, reset: tuple[Path, ...], *,
                       shared: bool = False) -> dict[str, Any]:
    """The fieldsV1 a create records for its manager (every field, minus the stripped and reset
    ones), through the shape memo: a fresh tree per call, or with `shared` the memo's own tree;
    objects the memo does not take (values over `_MEMO_MAX_BYTES` or not JSON-encodable) take
    the walk directly."""
    meta = schema or DEDUCED
    try:
        shape = _creation_shape(obj)
    except _NoShape:
        return _created_fields_v1_walk(_without_managed_fields(obj), meta, reset)
    if shared:
        return _shared_created_fields(_Same(meta), reset, shape)
    return cast(dict[str, Any], orjson.loads(_encoded_created_fields(_Same(meta), reset, shape)))


def _creator_entry(new: dict[str, Any], schema: PatchMeta | None, reset: tuple[Path, ...], *, manager: str,
                   operation: str, api_version: str | None, now: str, subresource: str | None,
                   shared: bool) -> dict[str, Any] | None:
    """The one managedFields entry of a create (None when the creator owns no field)."""
    tree = _created_fields_v1(new, schema, reset, shared=shared)
    if not tree:
        return None
    entry: dict[str, Any] = {"manager": manager, "operation": operation,
                             "apiVersion": api_version or str(new.get("apiVersion") or ""),
                             "time": now, "fieldsType": "FieldsV1", "fieldsV1": tree}
    if subresource:
        entry["subresource"] = subresource
    return entry


# --- update fast path -------------------------------------------------------------------------

# Stored fieldsV1 trees are never changed in place, so a tree's field set is memoised on the tree
# object itself (the memo holds the tree: its id cannot be reused while the entry lives).
_TREE_FIELDS: dict[int, tuple[dict[str, Any], frozenset[Path]]] = {}
_TREE_FIELDS_MAX = 16384


def _tree_fields(tree: dict[str, Any]) -> frozenset[Path]:
    hit = _TREE_FIELDS.get(id(tree))
    if hit is not None and hit[0] is tree:
        return hit[1]
    fields = frozenset(decode_fields(tree))
    _remember_tree(tree, fields)
    return fields


def _remember_tree(tree: dict[str, Any], fields: frozenset[Path]) -> None:
    if len(_TREE_FIELDS) >= _TREE_FIELDS_MAX:
        _TREE_FIELDS.clear()
    _TREE_FIELDS[id(tree)] = (tree, fields)


@functools.lru_cache(maxsize=4096)
def _shared_fields_tree(fields: frozenset[Path]) -> dict[str, Any]:
    """`encode_fields` as one tree per field set, shared by the stored objects recording it
    (read-only, as they are)."""
    tree = _fields_tree(fields)
    _remember_tree(tree, fields)
    return tree


# the key orders `encode_managed_fields` writes an entry in (time and subresource optional)
_ENTRY_KEY_ORDERS = frozenset({
    ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"),
    ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"),
    ("manager", "operation", "apiVersion", "fieldsType", "fieldsV1"),
    ("manager", "operation", "apiVersion", "fieldsType", "fieldsV1", "subresource"),
})


def _entry_order(e: dict[str, Any]) -> tuple[str, str, str, str, str]:
    return (e["operation"], e.get("time") or "", e["manager"], e["apiVersion"], e.get("subresource", ""))


def _stored_entries(entries: Any) -> list[tuple[dict[str, Any], frozenset[Path]]] | None:
    """The live entries with their field sets when they are exactly what `encode_managed_fields`
    writes (every key in its order, string values, non-empty trees, the list in its order), so
    the ones an update leaves alone can be kept as they are; None otherwise."""
    if entries is None or entries == []:
        return []
    if not isinstance(entries, list):
        return None
    out = []
    previous: tuple[str, ...] | None = None
    for e in entries:
        if not isinstance(e, dict) or tuple(e) not in _ENTRY_KEY_ORDERS or e["fieldsType"] != "FieldsV1":
            return None
        tree = e["fieldsV1"]
        if not isinstance(tree, dict) or not tree or not all(
                type(e[k]) is str and (e[k] or k == "apiVersion") for k in e if k != "fieldsV1"):
            return None
        order = _entry_order(e)
        if previous is not None and order < previous:
            return None
        previous = order
        out.append((e, _tree_fields(tree)))
    return out


def record_updated_fields(old: dict[str, Any], new: dict[str, Any], *, manager: str, operation: str,
                          api_version: str, now: str, subresource: str | None = None,
                          reset_fields: tuple[str, ...] = ()) -> bool:
    """`update_managed_fields(old, new)` done in place on `new`, for the request core's updates
    (stored objects are never changed in place): the entries the write leaves alone are kept as
    the live object holds them, and changed ones get the field-set memo's shared tree, so an
    update decodes and encodes nothing but what it changes. A Lease renewal or a pod status
    write by its owner only moves that owner's `time`.

    Returns False, changing nothing, when `new` sends managedFields other than the live ones
    (a client editing them: the sent entries are the base) or the live entries are not in the
    form this server stores them; the caller then takes `update_managed_fields`. The result is
    the general algorithm's (tests/apiserver/patch/test_apply_update_fastpath.py compares them)."""
    old_meta = old.get("metadata")
    live = old_meta.get("managedFields") if isinstance(old_meta, dict) else None
    new_meta = new.get("metadata")
    sent = new_meta.get("managedFields") if isinstance(new_meta, dict) else None
    if sent and sent is not live and sent != live:
        return False
    stored = _stored_entries(live)
    if stored is None or not isinstance(new_meta, dict):
        return False
    reset = _reset_paths(reset_fields)
    diff = compare(_without_managed_fields(old), _without_managed_fields(new), _resolve_schema(LOOKUP, new))
    changed = _strip(diff.added | diff.modified, reset)
    removed = diff.removed
    if not changed and not removed:
        if live:
            new_meta["managedFields"] = live
        else:
            new_meta.pop("managedFields", None)
        return True
    sub = subresource or ""
    out: list[dict[str, Any]] = []
    mine: tuple[dict[str, Any], frozenset[Path]] | None = None
    at = -1  # where the writer's entry goes: its place in the live list (the sort is stable)
    for e, fields in stored:
        if mine is None and e["manager"] == manager and e["operation"] == operation \
                and e.get("subresource", "") == sub and (operation == "Apply" or e.get("apiVersion") == api_version):
            mine, at = (e, fields), len(out)
            continue
        if fields.isdisjoint(changed) and fields.isdisjoint(removed):
            out.append(e)
            continue
        rest = fields - changed - removed
        if rest:
            out.append({**e, "fieldsV1": _shared_fields_tree(rest)})
    if changed:
        kept = mine[1] - removed if mine is not None else frozenset()
        fields = kept | changed
        tree = mine[0]["fieldsV1"] if mine is not None and fields == mine[1] else _shared_fields_tree(fields)
        entry: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": api_version,
                                 "time": now, "fieldsType": "FieldsV1", "fieldsV1": tree}
        if sub:
            entry["subresource"] = sub
        out.insert(at if mine is not None else len(out), entry)
    elif mine is not None:
        rest = mine[1] - removed
        if rest == mine[1]:
            out.insert(at, mine[0])
        elif rest:
            out.insert(at, {**mine[0], "fieldsV1": _shared_fields_tree(rest)})
    if out:
        out.sort(key=_entry_order)
        new_meta["managedFields"] = out
    else:
        new_meta.pop("managedFields", None)
    return True


# --- public API -------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _reset_paths(reset_fields: tuple[str, ...]) -> tuple[Path, ...]:
    """The fieldsV1 paths of a resource's reset top-level fields (`status` -> ("f:status",)):
    a handful of distinct tuples, built once each."""
    return tuple((f"f:{name}",) for name in reset_fields)


def record_created_fields(new: dict[str, Any], *, manager: str, operation: str, api_version: str, now: str,
                          subresource: str | None = None, reset_fields: tuple[str, ...] = ()) -> bool:
    """`update_managed_fields(None, new, share_created_fields=True)` done in place: when `new`
    sends no managedFields, set its creator's entry (the shape memo's shared tree) on `new`
    itself, without the copy of its top level and metadata `update_managed_fields` returns.
    For the request core's creates (the object is stored next and never changed in place).
    Returns False, changing nothing, when `new` sends managedFields (the caller takes the
    general path)."""
    meta = new.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields"):
        return False
    reset = _reset_paths(reset_fields)
    entry = _creator_entry(new, _resolve_schema(LOOKUP, new), reset, manager=manager, operation=operation,
                           api_version=api_version, now=now, subresource=subresource, shared=True)
    if entry is not None:
        if not isinstance(meta, dict):
            meta = new["metadata"] = {}
        meta["managedFields"] = [entry]
    return True



def update_managed_fields(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    operation: str = "Update",
    api_version: str | None = None,
    now: str,
    schema: PatchMeta | None | _Lookup = LOOKUP,
    subresource: str | None = None,
    reset_fields: tuple[str, ...] = (),
    share_created_fields: bool = False,
) -> dict[str, Any]:
    """Record ownership for an ordinary write (create/update/patch) and return the new object.

    The result is a new dict whose top level and metadata are fresh copies; nested values
    (spec, status) are shared with `new`, which is not modified.

    `old` is the live object (None on create), `new` the object about to be stored. Fields the
    write added or changed now belong to `manager` (taken from whoever owned them: updates
    never conflict); removed fields leave every manager. The entries sent in `new` are the
    base when present (clients may edit managedFields), else those of `old`. `reset_fields`
    names top-level fields this endpoint ignores (`("status",)` for a main resource with a
    status subresource, `("spec", "metadata")`-like for `/status`).

    `share_created_fields`: on create, the creator's fieldsV1 is the shape memo's own tree,
    shared by every object of that shape, for a caller that stores the object and never changes
    it in place (the request core: stored objects are read-only). Objects of one shape then hold
    one tree instead of ~40 dicts each (memory, garbage collection, no copy per create).
    """
    schema_ = _resolve_schema(schema, new)
    new_meta = new.get("metadata")
    sent = new_meta.get("managedFields") if isinstance(new_meta, dict) else None
    reset = _reset_paths(reset_fields)
    if old is None and not sent:
        # create: every field belongs to the creator; one walk instead of compare + encode
        out = _without_managed_fields(new)
        entry = _creator_entry(new, schema_, reset, manager=manager, operation=operation,
                               api_version=api_version, now=now, subresource=subresource,
                               shared=share_created_fields)
        if entry is not None:
            out.setdefault("metadata", {})["managedFields"] = [entry]
        return out
    entries = decode_managed_fields(sent) if sent else []
    if not entries and old is not None and not _resets_managed_fields(sent):
        # a client that does not know managedFields (sends none, or entries that do not decode)
        # keeps the live ones
        entries = decode_managed_fields((old.get("metadata") or {}).get("managedFields"))
    entries = _record_update(
        entries,
        _without_managed_fields(old),
        _without_managed_fields(new),
        manager=manager,
        operation=operation,
        api_version=api_version or str(new.get("apiVersion") or ""),
        now=now,
        schema=schema_,
        subresource=subresource or "",
        reset=reset,
    )
    return _with_managed_fields(_without_managed_fields(new), entries)


def _resets_managed_fields(sent: Any) -> bool:
    """`managedFields: [{}]`, upstream's documented way to clear them: the write starts from no
    entries, so only the fields it changes are recorded (none: the object has no managedFields
    afterwards). An empty list does not reset them (clients unaware of the field send that)."""
    return isinstance(sent, list) and len(sent) == 1 and sent[0] == {}


def server_side_apply(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    *,
    manager: str,
    force: bool,
    schema: PatchMeta | None,
    now: str,
    api_version: str | None = None,
    subresource: str | None = None,
    reset_fields: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Merge an applied configuration into `live` (None: create) and return the new object.

    The result carries updated `metadata.managedFields`. When nothing changes, the result
    equals `live` (the handler may skip the write). Raises `ApplyConflictError` when the apply
    would change fields other managers own and `force` is False, and `PatchError(400)` for a
    body that is not an object or that sets `metadata.managedFields`. `reset_fields` are
    top-level fields this endpoint ignores in the applied config (e.g. `("status",)` on the
    main resource of a kind with a status subresource).
    """
    if not isinstance(applied, dict):
        raise PatchError("the applied configuration must be an object", code=400)
    applied_meta = applied.get("metadata")
    if isinstance(applied_meta, dict) and applied_meta.get("managedFields"):
        raise PatchError("metadata.managedFields must be nil", code=400)
    meta_schema = schema or DEDUCED
    sub = subresource or ""
    version = api_version or str(applied.get("apiVersion") or (live or {}).get("apiVersion") or "")
    reset = _reset_paths(reset_fields)
    config = {k: v for k, v in copy.deepcopy(applied).items() if k not in reset_fields}

    live_obj = _without_managed_fields(copy.deepcopy(live) if live is not None else None)
    entries = decode_managed_fields(((live or {}).get("metadata") or {}).get("managedFields"))
    if live is not None and not entries:
        # skipnonapplied.go: everything already there belongs to "before-first-apply"
        entries = _record_update(
            [],
            {},
            live_obj,
            manager=BEFORE_FIRST_APPLY,
            operation="Update",
            api_version=version,
            now=now,
            schema=schema,
            subresource="",
            reset=reset,
        )

    mine = next((e for e in entries if e.same_manager(manager, "Apply", sub)), None)
    last_set = set(mine.fields) if mine is not None else set()
    new_set = _strip(to_field_set(config, schema), reset)
    if mine is None:
        mine = ManagerEntry(manager, "Apply", version, now, set(), sub)
        entries.append(mine)
    previous_time = mine.time
    mine.fields = new_set
    mine.api_version = version

    merged = _merge(live_obj, config, meta_schema) if live is not None else copy.deepcopy(config)

    # prune what this applier dropped and nobody else owns (Updater.prune)
    owned: FieldSet = set().union(*(e.fields for e in entries))
    if last_set - owned:
        merged = copy.deepcopy(merged)  # merge shares untouched subtrees with live_obj
    for path in sorted(last_set - owned, key=lambda p: (len(p), p)):  # parents first
        if _is_key_field(path) or any(o[: len(path)] == path for o in owned):
            continue  # a kept item keeps its key fields and whatever others own below it
        _remove_path(merged, path, meta_schema)
    merged = _drop_nulls(merged)

    diff = compare(live_obj, merged, schema)
    changed = diff.added | diff.modified
    conflicts: list[tuple[ManagerEntry, Path]] = []
    for e in entries:
        if e is mine:
            continue
        for path in sorted(e.fields & changed):
            conflicts.append((e, path))
    if conflicts and not force:
        conflicts.sort(key=lambda c: (c[0].printed(), c[1]))
        raise ApplyConflictError([(e.printed(), path_string(p)) for e, p in conflicts])
    for e in entries:
        if e is not mine:
            e.fields -= changed
        e.fields -= diff.removed
    entries = [e for e in entries if e.fields]

    unchanged = live is not None and json_equal(merged, live_obj)
    if unchanged:
        mine.time = previous_time
    else:
        mine.time = now
    result = _with_managed_fields(merged, entries)
    if unchanged and json_equal(result, live):
        return copy.deepcopy(live) if live is not None else result
    return result
