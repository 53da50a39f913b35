"""The field order kube-apiserver writes objects in (layer L2): Go's encoding/json emits a
struct's fields in declaration order, so every object it serves starts `kind`, `apiVersion`,
`metadata`, then the type's own fields (`spec` before `status`), and `metadata` itself runs
`name`, `generateName`, `namespace`, `uid`, `resourceVersion`, ... `managedFields`.

Why: what a client sees on the wire (`curl`, `kubectl get --raw`, a watch) should read as it
would from a real cluster, whatever order the writer's JSON had. `order_fields` reorders one
object in place (keys popped and put back: the dicts stay the same objects, so references held
elsewhere keep seeing them); the store applies it to each object it commits. Keys the tables do
not name keep their relative order after the named ones.

Nested types below metadata keep the order their writers gave them (Go order for every nested
struct of every kind would need the whole schema; clients compare objects, not key orders),
except the structs `_NESTED` names: a Node's status and node info, whose zero values the Node
strategy adds and which `kubectl get node -o json` shows in Go's order.
"""

from __future__ import annotations

from minik3s.api.types import JsonDict

__all__ = ["order_fields"]

# metav1.ObjectMeta, in declaration order
OBJECT_META = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
               "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
               "ownerReferences", "finalizers", "managedFields")

# the fields after TypeMeta and ObjectMeta of kinds whose own fields are not just spec/status
_KIND_FIELDS: dict[str, tuple[str, ...]] = {
    "Event": ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count", "type",
              "eventTime", "series", "action", "related", "reportingComponent", "reportingInstance"),
    "ConfigMap": ("immutable", "data", "binaryData"),
    "Secret": ("immutable", "data", "stringData", "type"),
}
_DEFAULT_FIELDS = ("spec", "status")

# core/v1 NodeStatus and NodeSystemInfo, in declaration order
NODE_STATUS = ("capacity", "allocatable", "phase", "conditions", "addresses", "daemonEndpoints", "nodeInfo",
               "images", "volumesInUse", "volumesAttached", "config", "runtimeHandlers", "features")
NODE_SYSTEM_INFO = ("machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "containerRuntimeVersion",
                    "kubeletVersion", "kubeProxyVersion", "operatingSystem", "architecture", "swap")
# nested structs kept in Go order too: kind -> (path below the object, the struct's field order)
_NESTED: dict[str, tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]] = {
    "Node": ((("status",), NODE_STATUS), (("status", "nodeInfo"), NODE_SYSTEM_INFO)),
}


# key sequence seen -> the sequence to put them in (None: already in order); the shapes of
# objects repeat (every pod of a Deployment), so each is worked out once
_TOP: dict[tuple[object, tuple[str, ...]], tuple[str, ...] | None] = {}
_META: dict[tuple[str, ...], tuple[str, ...] | None] = {}
_INNER: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...] | None] = {}
_MEMO_LIMIT = 4096


def _target(keys: tuple[str, ...], named: tuple[str, ...]) -> tuple[str, ...] | None:
    first = tuple(k for k in named if k in keys)
    want = first + tuple(k for k in keys if k not in named)
    return None if want == keys else want


def _put_in(d: JsonDict, order: tuple[str, ...]) -> None:
    """Move `d`'s keys into `order`: the keys after the longest prefix already in place are
    popped and put back in order."""
    i = 0
    for have, want in zip(d, order, strict=False):
        if have != want:
            break
        i += 1
    for k in order[i:]:
        d[k] = d.pop(k)


def order_fields(obj: JsonDict) -> None:
    """Reorder `obj`'s top level, its metadata and the `_NESTED` structs of its kind in place, as
    kube-apiserver would write them."""
    kind = obj.get("kind")
    keys = tuple(obj)
    memo_key = (kind, keys)
    if memo_key in _TOP:
        want = _TOP[memo_key]
    else:
        own = _KIND_FIELDS.get(kind, _DEFAULT_FIELDS) if isinstance(kind, str) else _DEFAULT_FIELDS
        want = _target(keys, ("kind", "apiVersion", "metadata", *own))
        if len(_TOP) >= _MEMO_LIMIT:
            _TOP.clear()
        _TOP[memo_key] = want
    if want is not None:
        _put_in(obj, want)
    md = obj.get("metadata")
    if isinstance(md, dict):
        mkeys = tuple(md)
        if mkeys in _META:
            mwant = _META[mkeys]
        else:
            mwant = _target(mkeys, OBJECT_META)
            if len(_META) >= _MEMO_LIMIT:
                _META.clear()
            _META[mkeys] = mwant
        if mwant is not None:
            _put_in(md, mwant)
    nested = _NESTED.get(kind) if isinstance(kind, str) else None
    if nested:
        for path, order in nested:
            d: object = obj
            for step in path:
                d = d.get(step) if isinstance(d, dict) else None
            if isinstance(d, dict):
                ikey = (order, tuple(d))
                if ikey in _INNER:
                    iwant = _INNER[ikey]
                else:
                    iwant = _target(ikey[1], order)
                    if len(_INNER) >= _MEMO_LIMIT:
                        _INNER.clear()
                    _INNER[ikey] = iwant
                if iwant is not None:
                    _put_in(d, iwant)
