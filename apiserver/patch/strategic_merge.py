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
- directives: `$patch: replace|delete|merge` in a map or as a keyed list element,
  `$retainKeys` (keep only the listed keys of the live map), `$setElementOrder/<field>`
  (order of the resulting list), `$deleteFromPrimitiveList/<field>` (drop scalars). Directives
  are never stored.

Order of a merged list (upstream normalizeElementOrder): the items named by the patch keep the
patch's relative order, items only on the server keep theirs, and the two runs interleave by
server position, items new to the server going after the server-only items before them.
Worked example: server `[a, b, c]`, patch `[c', d]` → `[a, b, c', d]`; patch `[c', a']` →
`[b, c', a']` (b precedes c on the server, so it comes first).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from apiserver.patch.errors import PatchError
from apiserver.patch.json_patch import json_copy, json_equal

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ELEMENT_ORDER = "$setElementOrder/"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList/"


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


def _merge_sorted(
    server_only: list[Any], patch_items: list[Any], server_order: list[str], key: Callable[[Any], str]
) -> list[Any]:
    """Interleave two ordered runs by server position (upstream mergeSortedSlice).

    An item absent from the server sorts after any server item, so new items follow the
    server-only items that precede them.
    """
    position = {k: i for i, k in reversed(list(enumerate(server_order)))}
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(patch_items):
        if i >= len(server_only):
            out.append(patch_items[j])
            j += 1
        elif j >= len(patch_items):
            out.append(server_only[i])
            i += 1
        else:
            li = position.get(key(server_only[i]), -1)
            ri = position.get(key(patch_items[j]), -1)
            take_left = li < ri if (li >= 0 and ri >= 0) else li > ri
            if take_left:
                out.append(server_only[i])
                i += 1
            else:
                out.append(patch_items[j])
                j += 1
    return out


def _normalize_order(
    merged: list[Any], patch_order: list[Any], server: list[Any], key: Callable[[Any], str]
) -> list[Any]:
    """Patch items in patch order, server-only items in server order, interleaved by server position."""
    order_index: dict[str, int] = {}
    for i, item in enumerate(patch_order):
        order_index.setdefault(key(item), i)
    server_keys = [key(x) for x in server]
    server_index: dict[str, int] = {}
    for i, k in enumerate(server_keys):
        server_index.setdefault(k, i)
    in_patch = [x for x in merged if key(x) in order_index]
    server_only = [x for x in merged if key(x) not in order_index]
    in_patch.sort(key=lambda x: order_index[key(x)])
    server_only.sort(key=lambda x: server_index.get(key(x), len(server_keys)))
    return _merge_sorted(server_only, in_patch, server_keys, key)


def _key_fn(merge_key: str) -> Callable[[Any], str]:
    if merge_key:
        return lambda item: canonical(item.get(merge_key) if isinstance(item, dict) else item)
    return canonical


# --- merging ------------------------------------------------------------------------------------


def _fresh(patch_value: Any) -> tuple[Any, bool]:
    """The stored form of a patch value with nothing to merge into, and whether to keep it.

    Upstream (removeDirectives) drops any map that carries `$patch` and discards nulls; the
    remaining `$`-keys would be dropped when the object is decoded, so they go here too.
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


def _merge_map(original: dict[str, Any], patch: dict[str, Any], meta: PatchMeta) -> dict[str, Any]:
    """Merge `patch` into `original` (both private copies; `original` is modified and returned)."""
    directive = patch.get(DIRECTIVE)
    if directive == "replace":
        replaced: dict[str, Any] = strip_directives(patch)
        return replaced
    if directive == "delete":
        return {}
    if directive not in (None, "merge"):
        raise PatchError(f"unknown patch type: {directive} in map: {patch}", code=500)

    retain = patch.get(RETAIN_KEYS)
    if retain is not None:
        if not isinstance(retain, list) or not all(isinstance(k, str) for k in retain):
            raise PatchError("invalid patch format of retainKeys", code=400)
        for k, v in patch.items():
            if not k.startswith("$") and v is not None and k not in retain:
                raise PatchError("patch content doesn't match retainKeys list", code=422)
        for k in [k for k in original if k not in retain]:
            del original[k]

    orders: dict[str, list[Any]] = {}
    for k, v in patch.items():
        if k.startswith(SET_ELEMENT_ORDER):
            if not isinstance(v, list):
                raise PatchError("invalid patch format of setElementOrder list", code=400)
            orders[k[len(SET_ELEMENT_ORDER) :]] = v
        elif k.startswith(DELETE_FROM_PRIMITIVE_LIST):
            if not isinstance(v, list):
                raise PatchError("invalid patch format of primitive list", code=400)
            name = k[len(DELETE_FROM_PRIMITIVE_LIST) :]
            current = original.get(name)
            if isinstance(current, list):
                original[name] = [x for x in current if not any(json_equal(x, d) for d in v)]
    server_lists = {name: list(original.get(name) or []) for name in orders}

    for k, pv in patch.items():
        if k.startswith("$"):
            continue
        child = meta.child(k)
        if pv is None:
            original.pop(k, None)
            continue
        ov = original.get(k)
        if ov is None:
            _set_fresh(original, k, pv)
        elif isinstance(ov, dict) and isinstance(pv, dict):
            original[k] = strip_directives(pv) if child.replaces_map else _merge_map(ov, pv, child)
        elif isinstance(ov, list) and isinstance(pv, list):
            original[k] = _merge_list(ov, pv, child)
        else:
            _set_fresh(original, k, pv)

    for name, order in orders.items():
        current = original.get(name)
        if isinstance(current, list):
            key = _key_fn(meta.child(name).merge_key)
            original[name] = _normalize_order(current, order, server_lists[name], key)
    return original


def _merge_list(original: list[Any], patch: list[Any], meta: PatchMeta) -> list[Any]:
    if not meta.merges:
        replaced: list[Any] = strip_directives(patch)
        return replaced
    if not original and not patch:
        return []
    if any(isinstance(x, list) for x in patch) or any(isinstance(x, list) for x in original):
        raise PatchError("lists of lists are not supported", code=422)
    if not any(isinstance(x, dict) for x in [*original, *patch]):
        merged_scalars: list[Any] = []
        seen: set[str] = set()
        for x in [*original, *patch]:
            c = canonical(x)
            if c not in seen:
                seen.add(c)
                merged_scalars.append(x)
        return _normalize_order(merged_scalars, patch, original, canonical)

    merge_key = meta.merge_key
    if not merge_key:
        raise PatchError("cannot merge lists without merge key", code=500)
    key = _key_fn(merge_key)
    replace = False
    items: list[dict[str, Any]] = []
    server = list(original)
    for item in patch:
        if not isinstance(item, dict):
            raise PatchError(f"cannot merge a non-map element into a list of maps: {item!r}", code=500)
        directive = item.get(DIRECTIVE)
        if directive is None:
            items.append(item)
        elif directive == "delete":
            if merge_key not in item:
                raise PatchError(f"map: {item} does not contain declared merge key: {merge_key}", code=500)
            server = [o for o in server if not (isinstance(o, dict) and key(o) == key(item))]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise PatchError("merging lists cannot yet be specified in the patch", code=500)
        else:
            raise PatchError(f"unknown patch type: {directive} in map: {item}", code=500)
    if replace:
        kept: list[Any] = strip_directives(items)
        return kept

    merged = list(server)
    element = meta.element()
    for item in items:
        if merge_key not in item:
            raise PatchError(f"map: {item} does not contain declared merge key: {merge_key}", code=500)
        k = key(item)
        for i, existing in enumerate(merged):
            if isinstance(existing, dict) and key(existing) == k:
                merged[i] = _merge_map(existing, item, element)
                break
        else:
            merged.append(_merge_map({}, item, element))
    return _normalize_order(merged, items, server, key)


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
    if not isinstance(patch, dict):
        raise PatchError("Invalid JSON document", code=400)
    return _merge_map(json_copy(doc), copy.deepcopy(patch), schema)
