"""The Strategy base: create/update/status rules shared by every kind (layer L4, apiserver).

Why: kube-apiserver's generic registry calls a per-kind RESTCreateStrategy /
RESTUpdateStrategy (PrepareForCreate, PrepareForUpdate, Validate, ValidateUpdate) and, for the
status subresource, a status strategy. This base class carries the behaviour most kinds share;
each kind's module overrides the hooks it needs (`_default`, `_validate`, `_validate_update`).

Data flow (create): handler -> default -> prepare_for_create -> validate -> admit -> storage.
(update): handler -> default -> prepare_for_update(new, old) -> validate_update -> admit.
(status): handler -> prepare_for_status_update(new, old) -> validate_status_update.

Objects are plain JSON dicts and are changed in place; `old` is never changed.

Registry hooks (upstream genericregistry.Store's fields and the REST overrides of a kind's
storage), all no-ops here, so a kind overrides only what it needs:
- `return_deleted_object` (ReturnDeletedObject): DELETE answers with the object, not a Status;
- `allow_create_on_update` (AllowCreateOnUpdate): a PUT of a missing object creates it;
- `begin_create` / `after_create`, `begin_update` / `after_update`, `after_delete`
  (BeginCreate/AfterCreate, BeginUpdate/AfterUpdate, AfterDelete);
- `graceful_delete_seconds` (CheckGracefulDelete), `finalization_pending`
  (ShouldDeleteDuringUpdate's extra condition), `delete_finalizers` and `prepare_for_delete`
  (what a starting deletion adds: a CRD's cleanup finalizer, a namespace's Terminating phase),
  `deletion_started` (after that write: a CRD's cleanup of its custom objects);
- `subresources`: the kind's own subresource storages (pods/binding, pods/eviction, pods/log,
  namespaces/finalize); `status` and `scale` come from the resources table;
- `create_via`: a resource whose create is another storage's (POST bindings is pods/binding);
- `convert_to_storage` / `convert_from_storage`: for a version served by conversion (a
  ResourceInfo with `storage_version`, e.g. autoscaling/v1 HorizontalPodAutoscalers stored as
  v2), the request body decoded into the stored version before defaulting and validation, and a
  stored object encoded at the requested version for every answer (get, list, watch, writes).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from apiserver.patch.json_patch import json_copy
from minik3s.api.options import DeleteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.user import UserInfo
from minik3s.api.validation import validate_object_meta

from .rest import FinishFunc, RegistryOps, Subresource

NO_SUBRESOURCES: Mapping[str, Subresource] = MappingProxyType({})

# metadata fields only the server sets: an update keeps the stored value
IMMUTABLE_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds")
# metav1.ResetObjectMetaForStatus: a status write may not change these
STATUS_RESET_META = (
    "deletionTimestamp", "generation", "selfLink", "labels", "annotations", "finalizers", "ownerReferences",
)
_TOP_LEVEL_META = ("apiVersion", "kind", "metadata", "status")


def _meta(obj: JsonDict) -> JsonDict:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    return meta


def copy_meta_fields(new: JsonDict, old: JsonDict, fields: tuple[str, ...]) -> None:
    nm, om = _meta(new), old.get("metadata") or {}
    for f in fields:
        if f in om:
            nm[f] = om[f]
        else:
            nm.pop(f, None)


class Strategy:
    """Defaults, validation and create/update preparation for one kind.

    Class attributes describe the kind:
    - `has_status`: the kind serves a `status` subresource, so the main resource ignores status
      changes and the status subresource ignores everything else;
    - `tracks_generation`: metadata.generation starts at 1 and grows when the spec changes;
    - `name_format`: "subdomain" (most kinds), "label" (namespaces), "dns1035" (services).
    """

    kind = ""
    group = ""
    has_status = False
    tracks_generation = False
    name_format = "subdomain"
    return_deleted_object = False
    allow_create_on_update = False
    subresources: ClassVar[Mapping[str, Subresource]] = NO_SUBRESOURCES
    create_via: ClassVar[Subresource | None] = None

    # ---- registry hooks (see the module docstring) ---------------------------------------------

    def convert_to_storage(self, version: str, obj: JsonDict, *, creating: bool = False) -> JsonDict:
        """A body at served `version` as the stored version's object; may raise an ApiError
        (`creating`: the body of a create, which some versions validate more strictly)."""
        raise NotImplementedError(f"{self.kind} has no conversion from version {version}")

    def convert_from_storage(self, version: str, obj: JsonDict) -> JsonDict:
        """A stored object as served `version` returns it (a new dict: `obj` is not changed)."""
        raise NotImplementedError(f"{self.kind} has no conversion to version {version}")

    def validate_served_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        """For the strategy of a converted view: rules an update through that version adds to
        the stored kind's (`new` and `old` are stored objects; upstream passes the request
        version to the kind's validation)."""
        return []

    def begin_create(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> FinishFunc | None:
        """After defaulting and admission, before validation; may reserve something (returned
        FinishFunc releases it once the create committed or failed) or raise an ApiError."""
        return None

    async def after_create(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> JsonDict:
        """After the create committed; returns the object the client gets."""
        return obj

    def begin_update(self, ops: RegistryOps, info: ResourceInfo, new: JsonDict, old: JsonDict) -> None:
        """After a valid update of the main resource is prepared, before it is written."""
        return None

    async def after_update(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> None:
        """After an update (of the object or a subresource) committed."""
        return None

    def record_requester(self, obj: JsonDict, user: UserInfo) -> None:
        """On create, after `prepare_for_create`: kinds that record who asked (upstream reads
        the request's user from its context) write it into the object. Default: nothing."""

    def refuse_delete(self, name: str) -> None:
        """A kind's REST.Delete override that refuses some names outright (raises an ApiError),
        before the object is looked up; DeleteCollection does not ask. Default: nothing."""

    def graceful_delete_seconds(self, obj: JsonDict, options: DeleteOptions) -> int | None:
        """CheckGracefulDelete: the grace period a DELETE gives this object, or None (no
        graceful deletion: gone at once unless finalizers hold it)."""
        return None

    def finalization_pending(self, obj: JsonDict) -> bool:
        """Whether kind-specific finalization (beyond metadata.finalizers) still holds a
        deleted object (namespaces: spec.finalizers)."""
        return False

    def delete_finalizers(self, obj: JsonDict) -> tuple[str, ...]:
        """Finalizers the kind adds when its deletion starts (a CRD: customresourcecleanup)."""
        return ()

    def prepare_for_delete(self, obj: JsonDict, now: str) -> bool:
        """Mutate an object whose graceful deletion is starting or continuing; True when changed."""
        return False

    async def deletion_started(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> None:
        """After the write that set deletionTimestamp committed (the object still exists)."""
        return None

    async def after_delete(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> None:
        """After the object left storage (by DELETE or by an update that finished deletion)."""
        return None

    # ---- hooks for subclasses -------------------------------------------------------------------

    def _default(self, obj: JsonDict) -> None:
        return None

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj.pop("status", None)

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        return []

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return []

    def _prepare_for_update(self, new: JsonDict, old: JsonDict) -> None:
        return None

    def _spec_changed(self, new: JsonDict, old: JsonDict) -> bool:
        """Whether the user-owned content changed (drives metadata.generation)."""
        if "spec" in new or "spec" in old:
            return new.get("spec") != old.get("spec")
        keys = (set(new) | set(old)) - set(_TOP_LEVEL_META)
        return any(new.get(k) != old.get(k) for k in keys)

    # ---- the API the handlers call -----------------------------------------------------------------

    def default(self, obj: JsonDict) -> None:
        """Upstream defaulting, in place; unknown fields are never dropped."""
        self._default(obj)

    def prepare_for_create(self, obj: JsonDict) -> None:
        meta = _meta(obj)
        if self.has_status:
            self._reset_status_on_create(obj)
        if self.tracks_generation:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)

    def prepare_for_update(self, new: JsonDict, old: JsonDict) -> None:
        copy_meta_fields(new, old, IMMUTABLE_META)
        if self.has_status:
            if "status" in old:
                new["status"] = json_copy(old["status"])
            else:
                new.pop("status", None)
        self._prepare_for_update(new, old)
        meta = _meta(new)
        old_gen = (old.get("metadata") or {}).get("generation")
        if self.tracks_generation:
            gen = old_gen if isinstance(old_gen, int) else 1
            meta["generation"] = gen + 1 if self._spec_changed(new, old) else gen
        elif old_gen is not None:
            meta["generation"] = old_gen
        else:
            meta.pop("generation", None)

    def prepare_for_status_update(self, new: JsonDict, old: JsonDict) -> None:
        """Keep everything but status from `old` (upstream status strategies + ResetObjectMetaForStatus)."""
        for k in list(new):
            if k not in _TOP_LEVEL_META:
                del new[k]
        for k, v in old.items():
            if k not in _TOP_LEVEL_META:
                new[k] = json_copy(v)
        copy_meta_fields(new, old, IMMUTABLE_META + self._status_reset_meta())

    def _status_reset_meta(self) -> tuple[str, ...]:
        return STATUS_RESET_META

    def validate(self, obj: JsonDict) -> list[JsonDict]:
        errs = validate_object_meta(obj.get("metadata"), name_format=self.name_format)
        errs.extend(self._validate(obj))
        return errs

    def validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs = self.validate(new)
        errs.extend(self._validate_update(new, old))
        return errs

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return validate_object_meta(new.get("metadata"), name_format=self.name_format)

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        """WarningsOnCreate: texts for the client's `Warning` headers about a valid object that
        is accepted but probably not what its author meant (deprecated fields, values the
        system rounds, duplicates a later apply would drop). None by default."""
        return []

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        """WarningsOnUpdate: as `warnings_on_create`, for an update of the main resource (status
        and other subresources warn nothing, as upstream's status strategies)."""
        return []


def as_dict(v: Any) -> JsonDict:
    return v if isinstance(v, dict) else {}


def as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []
