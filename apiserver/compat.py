"""One import point for the request core: strategies, patch engines, selectors, CRDs (layer L4).

`apiserver.core` calls these thin adapters so that the per-kind strategies (apiserver/strategies),
the patch engines (apiserver/patch) and the selector grammar (minik3s.api.selectors) keep their
own signatures, and custom resources get a schema-driven strategy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver import strategies as _strategies
from apiserver.crd import register_crd, unregister_crd
from apiserver.eviction import evict
from minik3s.api.options import WriteOptions
from apiserver.patch import PatchError
from apiserver.patch.apply import ApplyConflictError, update_managed_fields
from apiserver.patch.apply import server_side_apply as _ssa
from apiserver.patch.json_patch import apply_json_patch
from apiserver.patch.merge_patch import apply_merge_patch
from apiserver.patch.strategic_merge import apply_strategic_merge_patch
from apiserver.patch.strategic_merge import patch_meta_for as _patch_meta_for
from minik3s.api import errors
from minik3s.api.resources import ResourceInfo
from minik3s.api.selectors import label_selector_from_dict, parse_field_selector, parse_label_selector
from minik3s.api.types import JsonDict

__all__ = [
    "PatchError", "apply_json_patch", "apply_merge_patch", "apply_strategic_merge_patch", "evict",
    "label_selector_from_dict", "parse_field_selector", "parse_label_selector", "register_crd",
    "unregister_crd",
]


class _CustomStrategy:
    """Strategy for custom resources: schema defaulting, pruning and validation; status
    subresource rules when the CRD enables it."""

    def __init__(self, info: ResourceInfo) -> None:
        self.info = info
        self.schema = info.crd_schema
        self.has_status = "status" in info.subresources
        self._base = _strategies.strategy_for(info.group, info.kind)

    def default(self, obj: JsonDict) -> None:
        if self.schema:
            _strategies.default_custom(obj, self.schema)
            _strategies.prune_custom(obj, self.schema)

    def prepare_for_create(self, obj: JsonDict) -> None:
        if self.has_status:
            obj.pop("status", None)

    def prepare_for_update(self, new: JsonDict, old: JsonDict) -> None:
        if self.has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        nm, om = new.setdefault("metadata", {}), old.get("metadata") or {}
        gen = int(om.get("generation") or 1)
        changed = {k: v for k, v in new.items() if k not in ("metadata", "status")} != \
            {k: v for k, v in old.items() if k not in ("metadata", "status")}
        nm["generation"] = gen + 1 if changed else gen

    def prepare_for_status_update(self, new: JsonDict, old: JsonDict) -> None:
        status = new.get("status")
        for k in list(new.keys()):
            if k not in ("status", "metadata", "apiVersion", "kind"):
                del new[k]
        for k, v in old.items():
            if k not in ("status", "metadata"):
                new[k] = v
        if status is None:
            new.pop("status", None)
        nm, om = new.setdefault("metadata", {}), old.get("metadata") or {}
        for k, v in om.items():
            if k not in ("labels", "annotations", "finalizers", "ownerReferences"):
                nm[k] = v

    def validate(self, obj: JsonDict) -> list[JsonDict]:
        causes = list(self._base.validate(obj))
        if self.schema:
            causes += _strategies.validate_custom(obj, self.schema)
        return causes

    def validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return self.validate(new)

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return self.validate(new)


_custom_cache: dict[int, tuple[ResourceInfo, _CustomStrategy]] = {}


def strategy_for(info: ResourceInfo) -> Any:
    if info.builtin:
        return _strategies.strategy_for(info.group, info.kind)
    hit = _custom_cache.get(id(info))
    if hit is None or hit[0] is not info:
        hit = (info, _CustomStrategy(info))
        if len(_custom_cache) > 1000:
            _custom_cache.clear()
        _custom_cache[id(info)] = hit
    return hit[1]


def unknown_fields(info: ResourceInfo, obj: JsonDict) -> list[str]:
    if not info.builtin:
        return []
    return list(_strategies.unknown_fields(info.group, info.kind, obj))


async def admit(info: ResourceInfo, operation: str, obj: JsonDict, old: JsonDict | None,
                lookup: Callable[..., JsonDict | None]) -> None:
    await _strategies.admit(info.group, info.kind, operation, obj, old, lookup)


def patch_meta_for(info: ResourceInfo) -> Any:
    return _patch_meta_for(info.api_version, info.kind)


def _reset_fields(info: ResourceInfo, subresource: str | None) -> tuple[str, ...]:
    if "status" not in info.subresources:
        return ()
    return ("spec",) if subresource == "status" else ("status",)


def server_side_apply(live: JsonDict | None, applied: JsonDict, *, manager: str, force: bool, schema: Any,
                      now: str, info: ResourceInfo, subresource: str | None = None) -> JsonDict:
    try:
        return _ssa(live, applied, manager=manager, force=force, schema=schema, now=now,
                    api_version=info.api_version, subresource=subresource,
                    reset_fields=_reset_fields(info, subresource))
    except ApplyConflictError as e:
        raise e.to_api_error() from None


def record_managed_fields(info: ResourceInfo, old: JsonDict | None, new: JsonDict, opts: WriteOptions,
                          operation: str, now: str, *, subresource: str | None = None) -> None:
    """Record field ownership for ordinary writes (so SSA can detect conflicts against them)."""
    if operation == "Apply" or not opts.field_manager:
        return
    if subresource not in (None, "status"):
        return
    updated = update_managed_fields(old, new, manager=opts.field_manager, operation=operation,
                                    api_version=info.api_version, now=now, subresource=subresource,
                                    reset_fields=_reset_fields(info, subresource))
    if updated is not new:
        meta = updated.get("metadata")
        if isinstance(meta, dict) and "managedFields" in meta:
            new.setdefault("metadata", {})["managedFields"] = meta["managedFields"]


def selector_to_string(sel: JsonDict) -> str:
    """metav1.LabelSelector -> its string form (`a=b,c in (x,y)`), as the scale subresource reports."""
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        op = e.get("operator")
        key = e.get("key")
        vals = ",".join(sorted(e.get("values") or []))
        if op == "In":
            parts.append(f"{key} in ({vals})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({vals})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)
