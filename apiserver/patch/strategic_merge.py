"""Strategic merge patch (`application/strategic-merge-patch+json`) for built-in kinds (layer L4, apiserver).

Why: `kubectl apply` (second time), `cordon`, `taint`, `patch` and the Python client's dict
PATCH all send SMP; treating it as a JSON merge patch silently drops list elements. SMP is a
merge patch that knows, per field, how lists merge. That knowledge lives in the Go struct tags
of k8s.io/api (`patchStrategy:"merge" patchMergeKey:"name"`) and, for server-side apply, in
the `+listType=map` / `+listMapKey=` markers; `PatchMeta` is our own transcription of both for
the kinds minik3s serves (`patch_meta_for`). Custom resources have no such table: the handler
answers 415 for SMP on them, as upstream does.

Semantics (k8s.io/apimachinery/pkg/util/strategicpatch):
- maps merge recursively; `null` deletes a field; a value of another type replaces;
- lists whose field has the `merge` strategy merge element-wise by the merge key (lists of
  maps) or as an ordered set (lists of scalars, e.g. `finalizers`); all other lists are
  replaced whole (`tolerations`, `args`, `taints`);
- directives: `$patch: replace|delete` in a map or as a keyed list element (`$patch: merge`
  is refused, as upstream), `$retainKeys` (keep only the listed keys of the live map),
  `$setElementOrder/<field>` (order of the resulting list), `$deleteFromPrimitiveList/<field>`
  (drop scalars). Directives are never stored. A `$patch: delete` element removes every
  entry with that key.

Order of a merged list (upstream normalizeElementOrder / mergeSortedSlice): the items named by
the patch keep the patch's (or `$setElementOrder`'s) relative order, items only on the server
keep theirs, and the two runs interleave: a server-only item goes first only when it precedes
the next patch item on the server; an item new to the server goes before the server-only items
still waiting. Worked example: server `[a, b, c]`, patch `[c', d]` → `[a, b, c', d]`; patch
`[d, a']` → `[d, a', b, c]`; patch `[c', a']` → `[b, c', a']`.
With `$setElementOrder`, "the server" is what upstream's caller still sees of the live list
after the merge worked on it in place: deleted entries shift later ones left and new entries
fill the freed slots (Go slices share their array), so server `[1, 2, 4]`, order `[2, 3]`,
patch `[3, {1: delete}]` → `[2, 4, 3]` while server `[1, 3]`, order `[1, 2]`, patch `[2]` →
`[1, 2, 3]`. Errors keep upstream's text (Go's `%v` of maps: `map[image:x]`) and class: 400
for mergepatch's format errors, 422 for lists of lists, 500 for the rest.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from apiserver.patch.errors import PatchError
from apiserver.patch.json_patch import json_copy

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ELEMENT_ORDER_PREFIX = "$setElementOrder"
DELETE_FROM_PRIMITIVE_LIST_PREFIX = "$deleteFromPrimitiveList"


@dataclass(slots=True)
class PatchMeta:
    """How one field (and what is below it) merges, for SMP and for server-side apply.

    `strategy`/`merge_key` are the SMP struct tags (`"merge"`, `"merge,retainKeys"`,
    `"retainKeys"`, `"replace"`, or `""` = replace lists); `list_type`/`list_keys` are the
    server-side-apply markers (`"map"` with its keys, `"set"`, or `""` = atomic);
    `key_defaults` fills list-map keys the user may omit (`protocol: TCP`); `atomic` marks maps
    and structs owned as one value (`+structType=atomic`, e.g. LabelSelector); `item` is the
    schema of list elements; `fields` the known children of a struct. `struct` marks nodes
    that are Go structs (present even when empty), `always_present` lists that exist as `null`
    in an empty object; both only shape managedFields the way upstream's typed objects do.
    `deduced` is the schema-less mode used for custom resources: maps granular, lists atomic.
    """

    fields: Mapping[str, PatchMeta] = field(default_factory=dict)
    item: PatchMeta | None = None
    strategy: str = ""
    merge_key: str = ""
    list_type: str = ""
    list_keys: tuple[str, ...] = ()
    key_defaults: Mapping[str, Any] = field(default_factory=dict)
    atomic: bool = False
    struct: bool = False
    always_present: bool = False
    deduced: bool = False

    def child(self, name: str) -> PatchMeta:
        if self.deduced:
            return self
        return self.fields.get(name) or _UNKNOWN

    def element(self) -> PatchMeta:
        if self.deduced:
            return self
        return self.item or _UNKNOWN

    @property
    def merges(self) -> bool:
        return "merge" in self.strategy.split(",")

    @property
    def replaces_map(self) -> bool:
        return self.strategy == "replace"


_UNKNOWN = PatchMeta()
DEDUCED = PatchMeta(deduced=True)


# --- the strategy table ---------------------------------------------------------------------------


def _s(**fields: PatchMeta) -> PatchMeta:
    return PatchMeta(fields=fields, struct=True)


def _keyed(
    key: str,
    item: PatchMeta | None = None,
    *,
    strategy: str = "merge",
    list_keys: tuple[str, ...] | None = None,
    list_type: str = "map",
    key_defaults: Mapping[str, Any] | None = None,
    always_present: bool = False,
) -> PatchMeta:
    return PatchMeta(
        item=item,
        strategy=strategy,
        merge_key=key if "merge" in strategy.split(",") else "",
        list_type=list_type,
        list_keys=list_keys if list_keys is not None else (key,),
        key_defaults=key_defaults or {},
        always_present=always_present,
    )


def _set_list(*, strategy: str = "merge") -> PatchMeta:
    return PatchMeta(strategy=strategy, list_type="set")


@lru_cache(maxsize=1)
def _table() -> dict[tuple[str, str], PatchMeta]:
    """(apiVersion, kind) → PatchMeta, transcribed from k8s.io/api v1.33 struct tags and markers."""
    atomic_struct = PatchMeta(atomic=True, struct=True)  # metav1.LabelSelector: +structType=atomic
    object_meta = _s(
        finalizers=_set_list(),  # patchStrategy:"merge", +listType=set
        ownerReferences=_keyed("uid"),  # patchStrategy:"merge" patchMergeKey:"uid", listMapKey=uid
    )
    container = _s(
        ports=_keyed(
            "containerPort",
            list_keys=("containerPort", "protocol"),
            key_defaults={"protocol": "TCP"},
        ),
        env=_keyed("name"),
        volumeMounts=_keyed("mountPath"),
        volumeDevices=_keyed("devicePath"),
        resources=_s(claims=_keyed("name", strategy="")),  # +listType=map, no patch strategy
    )
    pod_spec = _s(
        volumes=_keyed("name", strategy="merge,retainKeys"),
        initContainers=_keyed("name", container),
        containers=_keyed("name", container, always_present=True),
        ephemeralContainers=_keyed("name", container),
        imagePullSecrets=_keyed("name"),
        hostAliases=_keyed("ip"),
        topologySpreadConstraints=_keyed(
            "topologyKey",
            _s(labelSelector=atomic_struct),
            list_keys=("topologyKey", "whenUnsatisfiable"),
        ),
        schedulingGates=_keyed("name"),
        resourceClaims=_keyed("name", strategy="merge,retainKeys"),
        # tolerations, readinessGates, args, command: no strategy → replaced, atomic for SSA
    )
    pod_status = _s(
        conditions=_keyed("type"),
        podIPs=_keyed("ip"),
        hostIPs=_keyed("ip", list_type=""),  # patch merge by ip, +listType=atomic
        resourceClaimStatuses=_keyed("name", strategy="merge,retainKeys"),
    )
    template = _s(metadata=object_meta, spec=pod_spec)
    conditions_status = _s(conditions=_keyed("type"))

    def root(**fields: PatchMeta) -> PatchMeta:
        return _s(metadata=object_meta, **fields)

    workload_spec = {"selector": atomic_struct, "template": template}
    job_spec = _s(selector=atomic_struct, template=template)
    table: dict[tuple[str, str], PatchMeta] = {
        ("v1", "Pod"): root(spec=pod_spec, status=pod_status),
        ("v1", "PodTemplate"): root(template=template),
        ("v1", "ReplicationController"): root(
            spec=_s(selector=PatchMeta(atomic=True), template=template), status=conditions_status
        ),
        ("v1", "Node"): root(
            spec=_s(podCIDRs=_set_list()),  # taints: no strategy → replaced
            status=_s(conditions=_keyed("type"), addresses=_keyed("type")),
        ),
        ("v1", "Service"): root(
            spec=_s(
                ports=_keyed("port", list_keys=("port", "protocol"), key_defaults={"protocol": "TCP"}),
                selector=PatchMeta(atomic=True),  # +mapType=atomic (SMP still merges maps)
            ),
            status=conditions_status,
        ),
        ("v1", "Namespace"): root(spec=_s(), status=conditions_status),
        ("v1", "ServiceAccount"): root(secrets=_keyed("name", list_type="")),
        ("v1", "PersistentVolumeClaim"): root(spec=_s(selector=atomic_struct), status=conditions_status),
        ("v1", "PersistentVolume"): root(spec=_s()),
        ("apps/v1", "Deployment"): root(
            spec=_s(strategy=PatchMeta(strategy="retainKeys", struct=True), **workload_spec),
            status=conditions_status,
        ),
        ("apps/v1", "ReplicaSet"): root(spec=_s(**workload_spec), status=conditions_status),
        ("apps/v1", "StatefulSet"): root(spec=_s(**workload_spec), status=conditions_status),
        ("apps/v1", "DaemonSet"): root(spec=_s(**workload_spec), status=conditions_status),
        ("batch/v1", "Job"): root(spec=job_spec, status=_s(conditions=_keyed("type", list_type=""))),
        ("batch/v1", "CronJob"): root(spec=_s(jobTemplate=_s(metadata=object_meta, spec=job_spec))),
        # spec.metrics and behavior policies are +listType=atomic (replaced); conditions merge on type.
        # autoscaling/v1 (served converted) is patched in its v1 form, which has no lists.
        ("autoscaling/v2", "HorizontalPodAutoscaler"): root(spec=_s(), status=conditions_status),
        ("autoscaling/v1", "HorizontalPodAutoscaler"): root(spec=_s(), status=_s()),
        ("policy/v1", "PodDisruptionBudget"): root(
            spec=_s(selector=PatchMeta(atomic=True, struct=True, strategy="replace")),
            status=conditions_status,
        ),
        ("networking.k8s.io/v1", "ServiceCIDR"): root(spec=_s(), status=conditions_status),
        ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema"): root(spec=_s(), status=conditions_status),
        ("flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration"): root(spec=_s(), status=conditions_status),
    }
    for api_version, kind in (
        ("v1", "ConfigMap"),
        ("v1", "Secret"),
        ("v1", "Event"),
        ("v1", "Endpoints"),
        ("v1", "ResourceQuota"),
        ("v1", "LimitRange"),
        ("apps/v1", "ControllerRevision"),
        ("coordination.k8s.io/v1", "Lease"),
        ("scheduling.k8s.io/v1", "PriorityClass"),
        ("node.k8s.io/v1", "RuntimeClass"),  # scheduling.tolerations: +listType=atomic, replaced
        ("events.k8s.io/v1", "Event"),
        ("autoscaling/v1", "Scale"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ):
        table[(api_version, kind)] = root()
    return table


def patch_meta_for(api_version: str, kind: str) -> PatchMeta | None:
    """The merge schema of a built-in kind, or None (custom resources: SMP → 415)."""
    return _table().get((api_version, kind))


def builtin_patch_meta(api_version: str, kind: str) -> PatchMeta:
    """The strategic merge schema of any built-in kind: its table entry, else the object meta's
    rules alone (finalizers a set, ownerReferences keyed by uid), every other list replaced, as
    for upstream's types whose lists carry no patch strategy (Ingress rules, ClusterRole rules,
    StorageClass mountOptions, ...)."""
    return _table().get((api_version, kind)) or _table()[("v1", "ConfigMap")]


# --- helpers ------------------------------------------------------------------------------------


def canonical(value: Any) -> str:
    """A hashable identity for a JSON value (merge keys, set members)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def strip_directives(value: Any) -> Any:
    """A copy of `value` without SMP directives or null members (what is stored on replace)."""
    if isinstance(value, dict):
        return {k: strip_directives(v) for k, v in value.items() if v is not None and not k.startswith("$")}
    if isinstance(value, list):
        return [
            strip_directives(v) for v in value if not (isinstance(v, dict) and DIRECTIVE in v and len(v) == 1)
        ]
    return value


# --- Go's view of decoded JSON (error texts and value identity) ---------------------------------


def _go_value(v: Any) -> str:
    """Go's `%v` of a decoded JSON value, as mergepatch quotes maps and lists in its errors.
    Example: {"image": "x", "ports": [80]} -> `map[image:x ports:[80]]`."""
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{_go_value(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(_go_value(x) for x in v) + "]"
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    return str(v)


def _go_type(v: Any) -> str:
    """reflect.TypeOf of a decoded JSON value (k8s.io/apimachinery/pkg/util/json: int64 or float64)."""
    if isinstance(v, dict):
        return _MAP
    if isinstance(v, list):
        return _SLICE
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, str):
        return "string"
    return "int64" if isinstance(v, int) else "float64"


_MAP = "map[string]interface {}"
_SLICE = "[]interface {}"
_Ident = tuple[str, str]


def _ident(v: Any) -> _Ident:
    """A hashable identity with Go's `==` on interface values (an int64 1 is not a float64 1)."""
    return _go_type(v), canonical(v)


def _no_merge_key(m: dict[str, Any], key: str) -> PatchError:
    return PatchError(f"map: {_go_value(m)} does not contain declared merge key: {key}", code=500)


def _bad_arg_type(expected: str, actual: Any) -> PatchError:
    return PatchError(f"expected a {expected}, but received a {_go_type(actual)}", code=500)


def _bad_patch_type(directive: Any, m: dict[str, Any]) -> PatchError:
    return PatchError(f"unknown patch type: {_go_value(directive)} in map: {_go_value(m)}", code=500)


def _directive_target(key: str, prefix: str, message: str) -> str:
    """extractKey: `$setElementOrder/containers` -> `containers`; a malformed key is a 400."""
    head, sep, tail = key.partition("/")
    if not sep or head != prefix:
        raise PatchError(message, code=400)
    return tail


def _slice_kind(*lists: list[Any]) -> str:
    """sliceElementType: the Go type every element shares, or upstream's error."""
    kind: str | None = None
    for items in lists:
        for v in items:
            t = _go_type(v)
            if kind is None:
                if t == _SLICE:
                    raise PatchError("lists of lists are not supported", code=422)
                kind = t
            elif t != kind:
                raise PatchError(f"list element types are not identical: {_go_value(list(lists))}", code=500)
    if kind is None:
        raise PatchError("no elements in any of the given slices", code=500)
    return kind


def _item_ident(item: Any, merge_key: str, is_map: bool) -> _Ident:
    """upstream `index`'s getValFn: the merge key's value of a map item (nil when absent), or the item."""
    if not is_map:
        return _ident(item)
    return _ident(item.get(merge_key) if isinstance(item, dict) else None)


def _positions(items: list[Any], merge_key: str, is_map: bool) -> dict[_Ident, int]:
    out: dict[_Ident, int] = {}
    for i, item in enumerate(items):
        out.setdefault(_item_ident(item, merge_key, is_map), i)
    return out


# --- element order (upstream normalizeElementOrder) ----------------------------------------------


def _check_merge_keys(merge_key: str, *lists: list[Any]) -> None:
    """validateMergeKeyInLists."""
    for items in lists:
        for item in items:
            if not isinstance(item, dict):
                raise _bad_arg_type(_MAP, item)
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)


def _normalize_slice_order(to_sort: list[Any], order: list[Any], merge_key: str, is_map: bool) -> list[Any]:
    """normalizeSliceOrder: `to_sort` stably sorted by position in `order`, `$patch: delete` items last.
    Every caller passes items that `order` contains; one it lacks would sort first (upstream's
    comparator calls it "less")."""
    to_delete: list[Any] = []
    if is_map:
        _check_merge_keys(merge_key, to_sort, order)
        to_delete = [x for x in to_sort if x.get(DIRECTIVE) == "delete"]
        to_sort = [x for x in to_sort if x.get(DIRECTIVE) != "delete"]
    pos = _positions(order, merge_key, is_map)
    ordered = sorted(to_sort, key=lambda x: pos.get(_item_ident(x, merge_key, is_map), -1))
    return ordered + to_delete


def _merge_sorted_slice(left: list[Any], right: list[Any], server_order: list[Any], merge_key: str,
                        is_map: bool) -> list[Any]:
    """mergeSortedSlice: interleave server-only items (`left`) with patch items (`right`), both
    already ordered. A left item goes first only when both are on the server list and it comes
    earlier there; an item the server list does not have (a new one) goes before the rest."""
    pos = _positions(server_order, merge_key, is_map)
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right):
            out.append(left[i])
            i += 1
            continue
        if i < len(left):
            li = pos.get(_item_ident(left[i], merge_key, is_map))
            ri = pos.get(_item_ident(right[j], merge_key, is_map))
            if li is not None and ri is not None and li < ri:
                out.append(left[i])
                i += 1
                continue
        out.append(right[j])
        j += 1
    return out


def _normalize_element_order(patch_items: list[Any], server_only: list[Any], patch_order: list[Any],
                             server_order: list[Any], merge_key: str, is_map: bool) -> list[Any]:
    """normalizeElementOrder: patch items in patch order, server-only items in server order, merged."""
    patch_items = _normalize_slice_order(patch_items, patch_order, merge_key, is_map)
    server_only = _normalize_slice_order(server_only, server_order, merge_key, is_map)
    return _merge_sorted_slice(server_only, patch_items, server_order, merge_key, is_map)


def _partition(items: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    """partitionMapsByPresentInList / partitionPrimitivesByPresentInList: (in `by`, not in `by`)."""
    if not merge_key:
        present = {_ident(v) for v in by}
        return [v for v in items if _ident(v) in present], [v for v in items if _ident(v) not in present]
    keys: set[_Ident] = set()
    for i, v in enumerate(by):
        if not isinstance(v, dict):
            raise PatchError(f"value for key {i} is not a map", code=500)
        if merge_key in v:
            keys.add(_ident(v[merge_key]))
    inside: list[Any] = []
    outside: list[Any] = []
    for v in items:
        if not isinstance(v, dict):
            raise _bad_arg_type(_MAP, v)
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        (inside if _ident(v[merge_key]) in keys else outside).append(v)
    return inside, outside


# --- merging (upstream mergeMap / mergeSlice) ---------------------------------------------------


def _fresh(patch_value: Any) -> tuple[Any, bool]:
    """The stored form of a patch value with nothing to merge into, and whether to keep it.

    Upstream (discardNullValuesFromPatch, removeDirectives) discards nulls and drops any map that
    carries `$patch`; the remaining `$`-keys are dropped when the object is decoded, so they go here too.
    """
    if isinstance(patch_value, dict):
        if DIRECTIVE in patch_value:
            return None, False
        out: dict[str, Any] = {}
        for k, v in patch_value.items():
            if k.startswith("$") or v is None:
                continue
            value, keep = _fresh(v)
            if keep:
                out[k] = value
        return out, True
    if isinstance(patch_value, list):
        items: list[Any] = []
        for v in patch_value:
            value, keep = _fresh(v)
            if keep:
                items.append(value)
        return items, True
    return patch_value, True


def _set_fresh(original: dict[str, Any], key: str, patch_value: Any) -> None:
    value, keep = _fresh(patch_value)
    if keep:
        original[key] = value
    else:
        original.pop(key, None)


def _decoded(value: Any) -> Any:
    """A patch item appended to a list as it is stored: upstream appends it raw and decoding the
    object into its Go type drops the `$`-keys and the nulls."""
    if isinstance(value, dict):
        return {k: _decoded(v) for k, v in value.items() if v is not None and not k.startswith("$")}
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    return value


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """applyRetainKeysDirective: keep only the listed keys of `original`; the patch may not set others."""
    if RETAIN_KEYS not in patch:
        return
    retain = patch.pop(RETAIN_KEYS)
    if not isinstance(retain, list):
        raise PatchError("invalid patch format of retainKeys", code=400)
    keep = {k for k in retain if isinstance(k, str)}
    for k, v in patch.items():
        if v is None or k.startswith(DELETE_FROM_PRIMITIVE_LIST_PREFIX) or k.startswith(SET_ELEMENT_ORDER_PREFIX):
            continue
        if k not in keep:  # upstream answers ErrBadPatchFormatForRetainKeys here (400)
            raise PatchError("invalid patch format of retainKeys", code=400)
    for k in [k for k in original if k not in keep]:
        del original[k]


def _validate_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """validatePatchWithSetOrderList: the patch list's items (deletions aside) appear in
    `$setElementOrder` in the same relative order."""
    if not order or not patch_list:
        return
    items = patch_list
    if merge_key:
        for v in patch_list:
            if not isinstance(v, dict):
                raise _bad_arg_type(_MAP, v)
        items = [v for v in patch_list if v.get(DIRECTIVE) != "delete"]
    p = s = 0
    while p < len(items) and s < len(order):
        if isinstance(items[p], dict) and DIRECTIVE in items[p]:
            p += 1
            continue
        if _merge_key_equal(items[p], order[s], merge_key):
            p += 1
        s += 1
    if p < len(items) and s >= len(order):
        raise PatchError(
            f"The order in patch list:\n{_go_value(patch_list)}\n doesn't match $setElementOrder list:\n"
            f"{_go_value(order)}\n",
            code=500,
        )


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _ident(left) == _ident(right)
    for v in (left, right):
        if not isinstance(v, dict):
            raise _bad_arg_type(_MAP, v)
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
    return bool(_ident(left[merge_key]) == _ident(right[merge_key]))


def _merge_ordered_lists(original: dict[str, Any], patch: dict[str, Any], meta: PatchMeta) -> dict[str, Any]:
    """mergePatchIntoOriginal: merge each list named by a `$setElementOrder/<field>` with its patch
    list and order the result. Returns the patch without what was consumed.

    The server order that decides where server-only items go is what upstream's caller still sees
    of the original list after mergeSlice worked on it in place (Go slices share their array):
    deletions shift later items left and new items fill the freed slots (`view`)."""
    rest = dict(patch)
    for key, order in patch.items():
        if not key.startswith(SET_ELEMENT_ORDER_PREFIX):
            continue
        del rest[key]
        if not isinstance(order, list):
            raise _bad_arg_type(_SLICE, order)
        name = _directive_target(key, SET_ELEMENT_ORDER_PREFIX, "invalid patch format of setElementOrder list")
        found_original, found_patch = name in original, name in rest
        original_list = original.get(name)
        patch_list = rest.get(name)
        if found_original and not isinstance(original_list, list):
            raise _bad_arg_type(_SLICE, original_list)
        if found_patch and not isinstance(patch_list, list):
            raise _bad_arg_type(_SLICE, patch_list)
        original_items: list[Any] = original_list or []
        patch_items: list[Any] = patch_list or []
        child = meta.child(name)
        merge_key = child.merge_key
        _validate_order(patch_items, order, merge_key)
        view = original_items
        if found_original and found_patch:
            if child.merges:
                merged, view = _merge_list(original_items, patch_items, child)
            else:
                merged = strip_directives(patch_items)
        elif found_original:
            merged = original_items
        elif found_patch:
            merged, _ = _fresh(patch_items)
        else:
            continue
        is_map = _slice_kind(original_items, patch_items) == _MAP
        if is_map and not merge_key:
            original[name] = merged  # a list of maps without merge key keeps the patch's order
        else:
            inside, outside = _partition(merged, order, merge_key)
            original[name] = _normalize_element_order(inside, outside, order, view, merge_key, is_map)
        rest.pop(name, None)
    return rest


def _merge_map(original: dict[str, Any], patch: dict[str, Any], meta: PatchMeta) -> dict[str, Any]:
    """mergeMap: merge `patch` into `original` (private copies; `original` is changed and returned)."""
    if DIRECTIVE in patch:
        directive = patch[DIRECTIVE]
        if directive == "replace":
            replaced: dict[str, Any] = strip_directives(patch)
            return replaced
        if directive == "delete":
            return {}
        raise _bad_patch_type(directive, patch)

    _apply_retain_keys(original, patch)
    rest = _merge_ordered_lists(original, patch, meta)
    for k, pv in rest.items():
        is_delete_list = False
        if k.startswith(DELETE_FROM_PRIMITIVE_LIST_PREFIX):
            k = _directive_target(k, DELETE_FROM_PRIMITIVE_LIST_PREFIX, "invalid patch format of primitive list")
            is_delete_list = True
        elif k.startswith("$"):
            continue  # not a field: decoding the object would drop it
        if pv is None:
            original.pop(k, None)
            continue
        if k not in original:
            if not is_delete_list:
                _set_fresh(original, k, pv)
            continue
        ov = original[k]
        child = meta.child(k)
        if isinstance(ov, dict) and isinstance(pv, dict):
            original[k] = strip_directives(pv) if child.replaces_map else _merge_map(ov, pv, child)
        elif isinstance(ov, list) and isinstance(pv, list):
            if child.merges:
                original[k] = _merge_list(ov, pv, child, is_delete_list)[0]
            else:
                original[k] = strip_directives(pv)
        elif not is_delete_list:
            _set_fresh(original, k, pv)
    return original


def _merge_list(original: list[Any], patch: list[Any], meta: PatchMeta,
                is_delete_list: bool = False) -> tuple[list[Any], list[Any]]:
    """mergeSlice for a field with the merge strategy: (merged list, the caller's view of the
    original list afterwards; see `_merge_ordered_lists`)."""
    if not original and not patch:
        return original, original
    if _slice_kind(original, patch) != _MAP:
        if is_delete_list:
            gone = {_ident(v) for v in patch}
            return [v for v in original if _ident(v) not in gone], original
        merged: list[Any] = []
        seen: set[_Ident] = set()
        for v in [*original, *patch]:
            if _ident(v) not in seen:
                seen.add(_ident(v))
                merged.append(v)
        inside, outside = _partition(merged, patch, "")
        return _normalize_element_order(inside, outside, patch, original, "", False), original

    merge_key = meta.merge_key
    if not merge_key:
        raise PatchError("cannot merge lists without merge key", code=500)
    n = len(original)
    arr = list(original)  # the shared array; arr[:live] is mergeSlice's own slice
    keys = [_ident(x[merge_key]) if merge_key in x else None for x in arr]  # every element is a map
    live = n

    def find(value: Any) -> int:
        want = _ident(value)
        for i in range(live):
            if keys[i] == want:
                return i
        return -1

    items: list[dict[str, Any]] = []
    replace = False
    for v in patch:
        directive = v.get(DIRECTIVE, _ABSENT) if isinstance(v, dict) else _ABSENT
        if directive is _ABSENT:
            items.append(v)
        elif directive == "delete":
            if merge_key not in v:
                raise _no_merge_key(v, merge_key)
            while (i := find(v[merge_key])) >= 0:  # every matching entry goes
                arr[i : live - 1] = arr[i + 1 : live]
                keys[i : live - 1] = keys[i + 1 : live]
                live -= 1
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise PatchError("merging lists cannot yet be specified in the patch", code=500)
        else:
            raise _bad_patch_type(directive, v)
    if replace:
        _check_merge_keys(merge_key, items)
        return [_decoded(v) for v in items], arr[:n]

    survivors = arr[:live]
    element = meta.element()
    for v in items:
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        i = find(v[merge_key])
        if i >= 0:
            arr[i] = _merge_map(arr[i], v, element)
        else:
            if live < len(arr):
                arr[live], keys[live] = _decoded(v), _ident(v[merge_key])
            else:
                arr.append(_decoded(v))
                keys.append(_ident(v[merge_key]))
            live += 1
    inside, outside = _partition(arr[:live], items, merge_key)
    return _normalize_element_order(inside, outside, items, survivors, merge_key, True), arr[:n]


_ABSENT = object()


def patched_top_level_fields(patch: dict[str, Any]) -> frozenset[str]:
    """The top-level fields a merge or strategic merge patch can change: its keys, and the
    field a `$setElementOrder/<f>` / `$deleteFromPrimitiveList/<f>` directive names. Every other
    top-level field of the result is the target's own. Example:
    `{"status": {...}, "$setElementOrder/spec": [...]}` -> {"status", "$setElementOrder/spec", "spec"}."""
    out = set(patch)
    for k in patch:
        if k.startswith("$") and "/" in k:
            out.add(k.split("/", 1)[1])
    return frozenset(out)


def apply_strategic_merge_patch(doc: dict[str, Any], patch: Any, schema: PatchMeta) -> dict[str, Any]:
    """Apply a strategic merge patch to a copy of `doc` using the kind's `schema`.

    Raises `PatchError` (400 for a patch that is not an object or a malformed directive, 422
    for content that contradicts `$retainKeys`, 500 for what upstream leaves unclassified such
    as a keyed element without its merge key). `doc` and `patch` are never mutated.
    """
    if not isinstance(doc, dict) or not isinstance(patch, dict):
        raise PatchError("invalid JSON document", code=400)
    return _merge_map(json_copy(doc), copy.deepcopy(patch), schema)
