"""The scale subresource (autoscaling/v1 Scale) of every kind that lists `scale` in the
resources table: Deployments, ReplicaSets, StatefulSets, ReplicationControllers and custom
resources with `subresources.scale` (layer L4, apiserver/strategies).

Upstream: pkg/registry/apps/deployment/storage/storage.go ScaleREST (and the CRD scale
storage): GET renders spec.replicas / status.replicas / status.selector as a Scale; PUT and
PATCH change only spec.replicas, with the Scale's resourceVersion as a precondition.

Data flow: handler -> `core.subresource(info, "scale")` -> `ScaleREST` -> `ops.get` /
`ops.guaranteed_update` of the parent -> the parent's Scale view back.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from apiserver.patch import PatchError, update_managed_fields
from apiserver.patch.json_patch import apply_json_patch
from apiserver.patch.managed import (
    SCALE_API_VERSION,
    parent_entries_after_scale,
    scale_entries,
    server_side_apply,
)
from apiserver.patch.merge_patch import apply_merge_patch
from minik3s.api import errors
from minik3s.api.errors import BadRequestError
from minik3s.api.options import WriteOptions
from minik3s.api.resources import ResourceInfo, dig
from minik3s.api.selectors import label_selector_string
from minik3s.api.types import JsonDict

from .rest import RegistryOps, Subresource, UpdateRules, meta_of, rv_int
from .schema import scale_type_error


def to_scale(obj: JsonDict, info: ResourceInfo | None = None) -> JsonDict:
    """The Scale of `obj`: spec.replicas / status.replicas / the selector of a built-in kind, or
    the values at a custom resource's scale paths (`info.scale_paths`; a missing replicas reads
    0, a missing selector "")."""
    meta = obj.get("metadata") or {}
    paths = info.scale_paths if info is not None else None
    if paths is not None:
        spec_path, status_path, selector_path = paths
        replicas, status_replicas = dig(obj, spec_path), dig(obj, status_path)
        found = dig(obj, selector_path) if selector_path else None
        selector = found if isinstance(found, str) else ""
        spec_replicas = replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 0
        status_count = (status_replicas if isinstance(status_replicas, int) and not isinstance(status_replicas, bool)
                        else 0)
    else:
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        sel = spec.get("selector") or {}
        if isinstance(sel, dict) and ("matchLabels" in sel or "matchExpressions" in sel):
            selector = label_selector_string(sel) or ""
        elif isinstance(sel, dict):
            selector = ",".join(f"{k}={v}" for k, v in sorted(sel.items()))
        else:
            selector = ""
        spec_replicas = int(spec.get("replicas") or 0)
        status_count = int(status.get("replicas") or 0)
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace"), "uid": meta.get("uid"),
                     "resourceVersion": meta.get("resourceVersion"),
                     "creationTimestamp": meta.get("creationTimestamp")},
        "spec": {"replicas": spec_replicas},
        "status": {"replicas": status_count, "selector": selector},
    }


def _set_replicas(obj: JsonDict, info: ResourceInfo, replicas: int) -> None:
    """Write the replicas where the kind keeps them (a custom resource: its specReplicasPath,
    creating the maps on the way, 400 when a value on the way is not a map)."""
    path = info.scale_paths[0] if info.scale_paths is not None else "spec.replicas"
    *parents, leaf = path.split(".")
    node = obj
    for part in parents:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise BadRequestError("spec replicas value cannot be set because one of the nesting levels is not a "
                                  "map[string]interface{}")
        node = child
    node[leaf] = replicas


class ScaleREST(Subresource):
    """PUT / PATCH / server-side apply of the Scale. Built-in kinds track the ownership of
    spec.replicas through the Scale as upstream's ScaleHandler does: the parent's managers
    owning it become the Scale's, the Scale's field manager records the write (subresource
    `scale`, conflicts for an apply), and the result maps back onto the parent's entries.
    Custom resources keep their managedFields, as kube-apiserver v1.33's (kubernetes#131892).
    Admission webhooks and policies see the Scales (UPDATE of `<resource>/scale`)."""

    name = "scale"
    verbs = frozenset({"GET", "PUT", "PATCH"})

    def get(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict | str:
        obj = ops.get(info, namespace, name)
        if info.scale_paths is not None and not isinstance(dig(obj, info.scale_paths[0]), int):
            # apiextensions-apiserver's ScaleREST.Get
            raise errors.InternalError(f'Internal error occurred: the spec replicas field ".{info.scale_paths[0]}" '
                                       "does not exist")
        return to_scale(obj, info)

    def prepare_update(self, rules: UpdateRules, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        # the parent as the scale write left it (spec.replicas, managedFields): the kind's update
        # rules (generation) and validation, as upstream's store runs them for the scale update
        rules.prepare_for_update(new, old)
        return rules.validate_update(new, old)

    async def update(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str, body: object,
                     opts: WriteOptions) -> JsonDict:
        if not isinstance(body, dict):
            raise BadRequestError("the object provided is not a JSON object")
        _check_scale(body)
        rv = meta_of(body).get("resourceVersion")

        def change(cur: JsonDict, now: str) -> JsonDict:
            new = copy.deepcopy(body)
            # a body without its TypeMeta decodes as the endpoint's kind (autoscaling/v1 Scale)
            new.setdefault("apiVersion", SCALE_API_VERSION)
            new.setdefault("kind", "Scale")
            return self._record(info, cur, new, opts, now)

        return await self._write(ops, info, namespace, name, opts, change, rv_int(rv) if rv else None)

    async def patch(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str,
                    patch_type: str, body: object, opts: WriteOptions) -> JsonDict:
        if patch_type == "apply":
            if not isinstance(body, dict):
                raise BadRequestError("the body of the request was in an unknown format: apply configuration "
                                      "must be an object")
            if not opts.field_manager:
                raise BadRequestError("PATCH, application/apply-patch+yaml requires fieldManager to be set")
            _check_scale(body)
            manager = opts.field_manager

            def apply(cur: JsonDict, now: str) -> JsonDict:
                if not info.builtin:
                    return _merged(cur, body)
                try:
                    return server_side_apply(cur, body, manager=manager, force=bool(opts.force), schema=None,
                                             now=now, info=_SCALE_INFO, subresource="scale")
                except PatchError as e:
                    raise e.to_api_error() from None

            return await self._write(ops, info, namespace, name, opts, apply, None)

        def change(cur: JsonDict, now: str) -> JsonDict:
            try:
                new = apply_json_patch(cur, body) if patch_type == "json" else apply_merge_patch(cur, body)
            except PatchError as e:
                raise e.to_api_error() from None
            if not isinstance(new, dict):
                raise BadRequestError("the patched object is not an object")
            _check_scale(new)
            return self._record(info, cur, new, opts, now)

        return await self._write(ops, info, namespace, name, opts, change, None)

    @staticmethod
    def _record(info: ResourceInfo, cur: JsonDict, new: JsonDict, opts: WriteOptions, now: str) -> JsonDict:
        """The Scale's field manager for an ordinary write (subresource `scale`)."""
        if not info.builtin or not opts.field_manager:
            return new
        return update_managed_fields(cur, new, manager=opts.field_manager, api_version=SCALE_API_VERSION,
                                     now=now, schema=None, subresource="scale")

    async def _write(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str,
                     opts: WriteOptions, change: Callable[[JsonDict, str], JsonDict], precondition: int | None
                     ) -> JsonDict:
        """Read the parent, compute the new Scale from its Scale (with the replicas owners),
        admit it, and write spec.replicas and the mapped managedFields to the parent with the
        resourceVersion read as precondition (again on a concurrent write, unless the client
        sent its own)."""
        for _ in range(_MAX_RETRIES):
            parent = ops.get(info, namespace, name)
            cur = to_scale(parent, info)
            if info.builtin:
                entries = scale_entries((parent.get("metadata") or {}).get("managedFields"))
                if entries:
                    cur["metadata"]["managedFields"] = entries
            new = change(copy.deepcopy(cur), ops.now())
            new = await ops.admit_subresource_update(info, namespace, name, "scale", new, cur, opts)
            replicas = _replicas(new, name)
            mapped = (parent_entries_after_scale((parent.get("metadata") or {}).get("managedFields"),
                                                 (new.get("metadata") or {}).get("managedFields"), info.api_version)
                      if info.builtin else None)

            def mutate(obj: JsonDict, replicas: int = replicas, mapped: list[JsonDict] | None = mapped) -> None:
                _set_replicas(obj, info, replicas)
                if mapped is not None:
                    meta = obj.setdefault("metadata", {})
                    if mapped:
                        meta["managedFields"] = mapped
                    else:
                        meta.pop("managedFields", None)

            expected = precondition if precondition is not None else rv_int(parent["metadata"]["resourceVersion"])
            try:
                updated = await ops.guaranteed_update(info, namespace, name, mutate, opts, subresource="scale",
                                                      precondition_rv=expected)
            except errors.ConflictError:
                if precondition is not None:
                    raise
                continue  # the parent changed since it was read: compute the Scale again
            return to_scale(updated, info)
        raise errors.conflict(info.resource, info.group, name)


_MAX_RETRIES = 16
_SCALE_INFO = ResourceInfo(group="autoscaling", version="v1", resource="scale", kind="Scale", namespaced=True)


def _check_scale(body: JsonDict) -> None:
    bad = scale_type_error(body)
    if bad:
        raise BadRequestError(f'Scale in version "v1" cannot be handled as a Scale: {bad}')


def _replicas(scale: JsonDict, name: str) -> int:
    replicas = (scale.get("spec") or {}).get("replicas")
    if replicas is None:
        return 0  # ScaleSpec.replicas is an omitempty int32: absent or null decodes as 0
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.invalid("Scale", name, [errors.cause(
            "spec.replicas", f"Invalid value: {replicas}: must be greater than or equal to 0")], "autoscaling")
    return replicas


def _merged(cur: JsonDict, applied: JsonDict) -> JsonDict:
    """An apply to a custom resource's Scale: the applied replicas, no ownership (v1.33)."""
    out = copy.deepcopy(cur)
    spec = applied.get("spec")
    if isinstance(spec, dict) and "replicas" in spec:
        out.setdefault("spec", {})["replicas"] = spec["replicas"]
    return out


SCALE = ScaleREST()
