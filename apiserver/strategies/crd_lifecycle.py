"""A CustomResourceDefinition's life: established on create, re-served on update, and deleted
through the `customresourcecleanup.apiextensions.k8s.io` finalizer (layer L4, apiserver/strategies).

Upstream: apiextensions-apiserver's CRD REST Delete (pkg/registry/customresourcedefinition/
etcd.go) and finalizer controller (pkg/controller/finalizer/crd_finalizer.go):
1. create -> the resource is served at once; status NamesAccepted + Established;
2. DELETE of a live CRD -> one update: deletionTimestamp (grace 0), the cleanup finalizer, and
   condition Terminating=True reason InstanceDeletionPending; the DELETE answers that object
   (the generic DELETE does this through the strategy's delete hooks);
3. the cleanup deletes every custom object (each through an ordinary DELETE, so their own
   finalizers hold them): Terminating reason InstanceDeletionInProgress while any remain;
   creates are refused meanwhile ("create not allowed while custom resource definition is
   terminating");
4. when none remain (at once, or when the last held object goes) -> reason
   InstanceDeletionCompleted and the cleanup finalizer is removed; once every finalizer is gone
   (a user's too) the update removes the CRD (ShouldDeleteDuringUpdate);
5. the CRD left storage -> its resources leave the registry (routing, discovery, OpenAPI) and
   anything still stored under them is purged, so a re-created CRD starts empty.
Beside these, kube-apiserver's CRD registration controller: every group-version some CRD serves
has a local APIService `<version>.<group>` (labelled automanaged "true", Available: Local),
created as the first such CRD is, removed with the last (`sync_api_services`).
Here the cleanup runs inside the DELETE request (and again after each held object's own
deletion) instead of in a background controller; the observable states are upstream's.
"""

from __future__ import annotations

import functools
import logging

from apiserver.crd import crd_resource_infos, register_crd, unregister_crd
from minik3s.api import errors
from minik3s.api.apiregistration import AUTOMANAGED_LABEL, crd_apiservice, local_available_status
from minik3s.api.errors import ApiError
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict

from .rest import RegistryOps

logger = logging.getLogger(__name__)

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
CRD_GROUP = "apiextensions.k8s.io"
APISERVICE_GROUP = "apiregistration.k8s.io"


def crds_info(ops: RegistryOps) -> ResourceInfo:
    info = ops.registry.get(CRD_GROUP, "v1", "customresourcedefinitions")
    if info is None:
        raise errors.InternalError("the customresourcedefinitions resource is not registered")
    return info


def _set_condition(crd: JsonDict, cond: JsonDict, now: str) -> None:
    conds = crd.setdefault("status", {}).setdefault("conditions", [])
    for c in conds:
        if c.get("type") == cond["type"]:
            if c.get("status") != cond["status"]:
                c["lastTransitionTime"] = now
            c.update({k: v for k, v in cond.items() if k != "type"})
            return
    conds.append({**cond, "lastTransitionTime": now})


def _terminating(reason: str, message: str) -> JsonDict:
    return {"type": "Terminating", "status": "True", "reason": reason, "message": message}


async def established(ops: RegistryOps, crd: JsonDict) -> JsonDict:
    """Serve the new CRD's resources and report NamesAccepted + Established."""
    register_crd(ops.registry, crd)
    ops.resources_changed()
    names = (crd.get("spec") or {}).get("names") or {}
    now = ops.now()

    def mutate(o: JsonDict) -> None:
        st = o.setdefault("status", {})
        st["acceptedNames"] = names
        st["storedVersions"] = [v.get("name") for v in (o.get("spec") or {}).get("versions") or []
                                if v.get("storage")] or st.get("storedVersions") or []
        st["conditions"] = [
            {"type": "NamesAccepted", "status": "True", "lastTransitionTime": now, "reason": "NoConflicts",
             "message": "no conflicts found"},
            {"type": "Established", "status": "True", "lastTransitionTime": now, "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted"},
        ]

    try:
        out = await ops.guaranteed_update(crds_info(ops), None, crd["metadata"]["name"], mutate,
                                          subresource="status")
    except ApiError:
        out = crd
    await sync_api_services(ops, _group(crd))
    return out


async def updated(ops: RegistryOps, crd: JsonDict) -> None:
    register_crd(ops.registry, crd)
    ops.resources_changed()
    await sync_api_services(ops, _group(crd))


def _group(crd: JsonDict) -> str:
    return str((crd.get("spec") or {}).get("group") or "")


def _set_status(status: JsonDict, obj: JsonDict) -> None:
    obj["status"] = status


async def sync_api_services(ops: RegistryOps, group: str) -> None:
    """The CRD registration controller for one group: an APIService for each version a stored
    CRD of the group serves (unless one of that name exists: a built-in's or a user's), and
    away with the automanaged ones no CRD serves any more. Idempotent; races with another sync
    (AlreadyExists, NotFound) are the other's work done."""
    apis = ops.registry.get(APISERVICE_GROUP, "v1", "apiservices")
    if not group or apis is None:
        return
    served = {str(v.get("name")) for crd in ops.stored(crds_info(ops)) if _group(crd) == group
              for v in (crd.get("spec") or {}).get("versions") or () if v.get("served", True) and v.get("name")}
    existing = {o["metadata"]["name"]: o for o in ops.stored(apis) if (o.get("spec") or {}).get("group") == group}
    for version in sorted(served):
        name = f"{version}.{group}"
        if name in existing:
            continue
        try:
            await ops.create(apis, None, crd_apiservice(group, version))
        except errors.AlreadyExistsError:
            continue
        try:
            await ops.guaranteed_update(apis, None, name, functools.partial(_set_status, local_available_status(ops.now())),
                                        subresource="status")
        except errors.NotFoundError:
            continue
    for name, obj in existing.items():
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if labels.get(AUTOMANAGED_LABEL) == "true" and (obj.get("spec") or {}).get("version") not in served:
            try:
                await ops.delete(apis, None, name)
            except errors.NotFoundError:
                continue


def mark_terminating(crd: JsonDict, now: str) -> bool:
    """Rule 2's condition, applied by the generic DELETE as it sets deletionTimestamp and adds
    the cleanup finalizer (`CustomResourceDefinitionStrategy.delete_finalizers`)."""
    before = [dict(c) for c in (crd.get("status") or {}).get("conditions") or []]
    _set_condition(crd, _terminating("InstanceDeletionPending", "CustomResourceDefinition marked for deletion; "
                                     "CustomResource deletion will begin soon"), now)
    return bool(before != crd["status"]["conditions"])


async def cleanup(ops: RegistryOps, crd: JsonDict) -> None:
    """Rule 3: delete every custom object of the CRD, then rule 4."""
    name = crd["metadata"]["name"]
    infos = _served(ops, crd)
    await _condition(ops, name, _terminating("InstanceDeletionInProgress", "CustomResource deletion is in progress"))
    for info in infos:
        for obj in ops.stored(info):
            m = obj.get("metadata") or {}
            if m.get("deletionTimestamp"):
                continue
            try:
                await ops.delete(info, m.get("namespace") if info.namespaced else None, m["name"])
            except errors.NotFoundError:
                continue
    await finish_cleanup(ops, name)


async def finish_cleanup(ops: RegistryOps, crd_name: str) -> None:
    """Rule 4, when the CRD is terminating with the cleanup finalizer and no custom object is
    left; otherwise nothing. Safe to call any number of times."""
    crds = crds_info(ops)
    try:
        crd = ops.get(crds, None, crd_name)
    except errors.NotFoundError:
        return
    meta = crd.get("metadata") or {}
    if not meta.get("deletionTimestamp") or CLEANUP_FINALIZER not in (meta.get("finalizers") or []):
        return
    if any(ops.count_stored(info) for info in _served(ops, crd)):
        return
    await _condition(ops, crd_name, _terminating("InstanceDeletionCompleted", "removed all instances"))

    def unfinalize(o: JsonDict) -> None:
        om = o["metadata"]
        om["finalizers"] = [f for f in om.get("finalizers") or [] if f != CLEANUP_FINALIZER]

    try:
        await ops.guaranteed_update(crds, None, crd_name, unfinalize)
    except errors.NotFoundError:
        return


async def removed(ops: RegistryOps, crd: JsonDict) -> None:
    """Rule 5."""
    infos = unregister_crd(ops.registry, crd)
    ops.resources_changed()
    await sync_api_services(ops, _group(crd))
    for info in infos:
        n = await ops.purge(info)
        if n:
            logger.info("purged custom objects of a removed CRD crd=%s resource=%s count=%d",
                        (crd.get("metadata") or {}).get("name"), info.resource, n)


def terminating_crd_refuses_create(ops: RegistryOps, info: ResourceInfo) -> None:
    """Rule 3's guard: 405 for a create while the custom resource's CRD is terminating."""
    crds = ops.registry.get(CRD_GROUP, "v1", "customresourcedefinitions")
    if crds is None:
        return
    try:
        crd = ops.get(crds, None, f"{info.resource}.{info.group}")
    except errors.NotFoundError:
        return
    if (crd.get("metadata") or {}).get("deletionTimestamp"):
        raise errors.MethodNotAllowedError("create not allowed while custom resource definition is terminating",
                                           details={"group": info.group, "kind": info.resource})


async def custom_object_deleted(ops: RegistryOps, info: ResourceInfo) -> None:
    """A custom object left storage: its terminating CRD may now finish (rule 4)."""
    await finish_cleanup(ops, f"{info.resource}.{info.group}")


def _served(ops: RegistryOps, crd: JsonDict) -> list[ResourceInfo]:
    out = []
    for info in crd_resource_infos(crd):
        live = ops.registry.get(info.group, info.version, info.resource)
        if live is not None and not live.builtin:
            out.append(live)
    return out


async def _condition(ops: RegistryOps, crd_name: str, cond: JsonDict) -> None:
    now = ops.now()

    def mutate(o: JsonDict) -> None:
        _set_condition(o, cond, now)

    try:
        await ops.guaranteed_update(crds_info(ops), None, crd_name, mutate, subresource="status")
    except errors.NotFoundError:
        return
