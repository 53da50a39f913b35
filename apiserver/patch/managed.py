"""Server-side apply and managedFields for one served resource (layer L4, apiserver/patch).

Why: the apply engine (`apply.py`) works on plain objects; a resource adds its apiVersion and
its reset fields (a kind with a status subresource: the main resource does not own `status`,
the status subresource owns only `status`, as upstream's ResetFieldsStrategy).

Data flow: request core -> `server_side_apply(live, applied, info=...)` / `record_managed_fields`
-> `apply.server_side_apply` / `apply.update_managed_fields`.
"""

from __future__ import annotations

from apiserver.patch.apply import (
    ManagerEntry,
    decode_managed_fields,
    encode_managed_fields,
    record_created_fields,
    record_updated_fields,
    update_managed_fields,
)
from apiserver.patch.apply import server_side_apply as _ssa
from apiserver.patch.errors import ApplyConflictError, PatchError
from apiserver.patch.strategic_merge import PatchMeta
from minik3s.api.options import WriteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict


def reset_fields(info: ResourceInfo, subresource: str | None) -> tuple[str, ...]:
    if "status" not in info.subresources:
        return ()
    return ("spec",) if subresource == "status" else ("status",)


def server_side_apply(live: JsonDict | None, applied: JsonDict, *, manager: str, force: bool,
                      schema: PatchMeta | None, now: str, info: ResourceInfo,
                      subresource: str | None = None) -> JsonDict:
    """Apply `applied` for `manager`; a field-ownership conflict is the upstream 409."""
    try:
        return _ssa(live, applied, manager=manager, force=force, schema=schema, now=now,
                    api_version=info.api_version, subresource=subresource,
                    reset_fields=reset_fields(info, subresource))
    except (ApplyConflictError, PatchError) as e:
        raise e.to_api_error() from None


def records_managed_fields(opts: WriteOptions, operation: str, subresource: str | None) -> bool:
    """Whether `record_managed_fields` records anything for this write: an ordinary write (not
    an apply, which records its own) with a field manager, on the main resource or /status
    (a binding or another subresource's trusted write records nothing, as upstream)."""
    return operation != "Apply" and bool(opts.field_manager) and subresource in (None, "status")


def record_managed_fields(info: ResourceInfo, old: JsonDict | None, new: JsonDict, opts: WriteOptions,
                          operation: str, now: str, *, subresource: str | None = None) -> None:
    """Record field ownership for ordinary writes (so SSA can detect conflicts against them).
    `new` is about to be stored, and stored objects are never changed in place, so a create
    shares the creator's fieldsV1 tree with the other objects of its shape."""
    if not records_managed_fields(opts, operation, subresource):
        return
    assert opts.field_manager is not None
    reset = reset_fields(info, subresource)
    if old is None and record_created_fields(new, manager=opts.field_manager, operation=operation,
                                             api_version=info.api_version, now=now, subresource=subresource,
                                             reset_fields=reset):
        return
    if old is not None and record_updated_fields(old, new, manager=opts.field_manager, operation=operation,
                                                 api_version=info.api_version, now=now,
                                                 subresource=subresource, reset_fields=reset):
        return
    updated = update_managed_fields(old, new, manager=opts.field_manager, operation=operation,
                                    api_version=info.api_version, now=now, subresource=subresource,
                                    reset_fields=reset, share_created_fields=True)
    if updated is not new:
        meta = updated.get("metadata")
        if isinstance(meta, dict) and "managedFields" in meta:
            new.setdefault("metadata", {})["managedFields"] = meta["managedFields"]
        elif isinstance(new.get("metadata"), dict):  # every entry lost its fields: none are kept
            new["metadata"].pop("managedFields", None)


# --- the scale subresource (managedfields.ScaleHandler) --------------------------------------------

SCALE_API_VERSION = "autoscaling/v1"
_REPLICAS: tuple[str, ...] = ("f:spec", "f:replicas")


def _entry_key(e: ManagerEntry) -> tuple[str, str, str]:
    return (e.manager, e.operation, e.subresource)


def scale_entries(parent_entries: object) -> list[JsonDict]:
    """ToSubresource: the parent's managers owning spec.replicas, as the Scale's managedFields
    (each owning the Scale's spec.replicas, in autoscaling/v1, time and identity kept)."""
    out = []
    for e in decode_managed_fields(parent_entries):
        if _REPLICAS in e.fields:
            out.append(ManagerEntry(e.manager, e.operation, SCALE_API_VERSION, e.time, {_REPLICAS}, e.subresource))
    return encode_managed_fields(out)


def parent_entries_after_scale(parent_entries: object, scale_result: object, parent_api_version: str
                               ) -> list[JsonDict]:
    """ToParent: merge the Scale's managedFields after a scale write back into the parent's. A
    parent manager that owned spec.replicas keeps it while the Scale still lists it and loses
    it otherwise; a manager new on the Scale owning spec.replicas gets a parent entry of its own
    owning spec.replicas, in the parent's version, with the parent's time for that manager
    (none for a new one, as upstream's handler leaves it)."""
    scale = {_entry_key(e): e for e in decode_managed_fields(scale_result)}
    out: list[ManagerEntry] = []
    times: dict[tuple[str, str, str], str | None] = {}
    for e in decode_managed_fields(parent_entries):
        key = _entry_key(e)
        times[key] = e.time
        if _REPLICAS not in e.fields:
            out.append(e)
            continue
        if key in scale:
            out.append(e)  # still the Scale's: kept as it is
            del scale[key]
            continue
        e.fields.discard(_REPLICAS)  # taken by the scale write
        if e.fields:
            out.append(e)
    for key, s in scale.items():
        if _REPLICAS in s.fields:
            out.append(ManagerEntry(s.manager, s.operation, parent_api_version, times.get(key), {_REPLICAS},
                                    s.subresource))
    return encode_managed_fields(out)
