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
from apiserver.patch import ApplyConflictError, PatchError
from apiserver.patch.apply import server_side_apply as _ssa
from apiserver.patch.apply import update_managed_fields
from apiserver.patch.json_patch import apply_json_patch
from apiserver.patch.merge_patch import apply_merge_patch
from apiserver.patch.strategic_merge import apply_strategic_merge_patch
from apiserver.patch.strategic_merge import patch_meta_for as _patch_meta_for
from minik3s.api.options import WriteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.selectors import label_selector_from_dict, parse_field_selector, parse_label_selector
from minik3s.api.types import JsonDict

__all__ = [
    "PatchError", "apply_json_patch", "apply_merge_patch", "apply_strategic_merge_patch", "evict",
    "label_selector_from_dict", "parse_field_selector", "parse_label_selector", "register_crd",
    "unregister_crd",
]


def strategy_for(info: ResourceInfo) -> Any:
    if info.builtin:
        return _strategies.strategy_for(info.group, info.kind)
    return _strategies.strategy_for(info.group, info.kind, resource=info)


def type_error(info: ResourceInfo, obj: Any) -> str | None:
    """Go's `json: cannot unmarshal ...` for the first wrongly typed value (built-in kinds), or None."""
    if not info.builtin or not isinstance(obj, dict):
        return None
    return _strategies.type_error(info.group, info.kind, obj)


def go_map_repr(v: Any) -> str:
    """Go's `%+v` of a decoded JSON value, as upstream quotes an SMP body in errors.
    Example: {"data": {"a": 1}} -> `map[data:map[a:1]]`."""
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{go_map_repr(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(go_map_repr(x) for x in v) + "]"
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def decode_error(info: ResourceInfo, obj: Any) -> str | None:
    """What kube-apiserver's decoder says about a body with a wrongly typed value (built-in kinds):
    `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal ...`."""
    if not info.builtin or not isinstance(obj, dict):
        return None
    err = _strategies.type_error(info.group, info.kind, obj)
    if err is None:
        return None
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) and obj.get("kind") else info.kind
    api_version = obj.get("apiVersion") if isinstance(obj.get("apiVersion"), str) else ""
    version = api_version.rsplit("/", 1)[-1] if api_version else info.version
    return f'{kind} in version "{version}" cannot be handled as a {info.kind}: {err}'


def unknown_fields(info: ResourceInfo, obj: JsonDict) -> list[str]:
    if not info.builtin:
        if not info.crd_schema:
            return []
        return list(_strategies.unknown_fields(info.group, info.kind, obj, schema=info.crd_schema))
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
