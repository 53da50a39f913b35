"""Namespace controller (layer L4), after kube-controller-manager's `pkg/controller/namespace`
(namespaced_resources_deleter.go).

When a namespace is being deleted (the API server set deletionTimestamp and phase
Terminating and keeps `spec.finalizers: ["kubernetes"]`), the controller deletes every
namespaced object in it -- all built-in namespaced resources plus the namespaced custom
resources of the CRDs that exist -- with deletecollection (or list + delete where that verb is
not served), reports progress in the status conditions (NamespaceDeletionDiscoveryFailure,
NamespaceDeletionGroupVersionParsingFailure, NamespaceDeletionContentFailure,
NamespaceContentRemaining, NamespaceFinalizersRemaining), waits until nothing is left, then
removes the `kubernetes` finalizer through `PUT /api/v1/namespaces/{name}/finalize`. The API
server removes the namespace once spec.finalizers and metadata.finalizers are empty.

Data flow: Namespace informer -> name keys -> `sync(name)` -> deletecollection/list per
resource -> `namespaces/status` and `namespaces/finalize` writes.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable

from minik3s.api.errors import ApiError, ConflictError, MethodNotAllowedError, NotFoundError
from minik3s.api.resources import CRDS, NAMESPACES, ResourceInfo, builtin_resources
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import meta, now_str, run_workers
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

FINALIZER_KUBERNETES = "kubernetes"
CONDITION_TYPES = ("NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
                   "NamespaceDeletionContentFailure", "NamespaceContentRemaining",
                   "NamespaceFinalizersRemaining")
_OK = {
    "NamespaceDeletionDiscoveryFailure": ("ResourcesDiscovered", "All resources successfully discovered"),
    "NamespaceDeletionGroupVersionParsingFailure": ("ParsedGroupVersions",
                                                    "All legacy kube types successfully parsed"),
    "NamespaceDeletionContentFailure": ("ContentDeleted",
                                        "All content successfully deleted, may be waiting on finalization"),
    "NamespaceContentRemaining": ("ContentRemoved", "All content successfully removed"),
    "NamespaceFinalizersRemaining": ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}


def crd_resource(crd: JsonDict) -> ResourceInfo | None:
    """The served ResourceInfo of a CRD (its storage version), or None when cluster-scoped."""
    spec = crd.get("spec") or {}
    if spec.get("scope") != "Namespaced":
        return None
    versions = spec.get("versions") or []
    version = next((v.get("name") for v in versions if v.get("storage")), None) or (
        versions[0].get("name") if versions else None)
    names = spec.get("names") or {}
    if not version or not names.get("plural"):
        return None
    return ResourceInfo(str(spec.get("group")), str(version), str(names["plural"]), str(names.get("kind")),
                        True, builtin=False)


def namespace_conditions(old: list[JsonDict], *, remaining: dict[str, int], finalizers: dict[str, int],
                         failures: list[str], now: str) -> list[JsonDict]:
    """The five deletion conditions, upstream's wording."""
    by_type = {c.get("type"): c for c in old}
    out: list[JsonDict] = []
    for ctype in CONDITION_TYPES:
        reason, message = _OK[ctype]
        status = "False"
        if ctype == "NamespaceContentRemaining" and remaining:
            status, reason = "True", "SomeResourcesRemain"
            message = "Some resources are remaining: " + ", ".join(
                f"{r} has {n} resource instances" for r, n in sorted(remaining.items()))
        elif ctype == "NamespaceFinalizersRemaining" and finalizers:
            status, reason = "True", "SomeFinalizersRemain"
            message = "Some content in the namespace has finalizers remaining: " + ", ".join(
                f"{f} in {n} resource instances" for f, n in sorted(finalizers.items()))
        elif ctype == "NamespaceDeletionContentFailure" and failures:
            status, reason = "True", "ContentDeletionFailed"
            message = "Failed to delete all resource types, " + str(len(failures)) + " remaining: " + \
                ", ".join(failures)
        cur = by_type.get(ctype)
        ltt = cur.get("lastTransitionTime") if cur and cur.get("status") == status else now
        out.append({"type": ctype, "status": status, "lastTransitionTime": ltt, "reason": reason,
                    "message": message})
    return out


class NamespaceController:
    NAME = "namespace-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None,
                 resources: Callable[[], list[ResourceInfo]] | None = None, recheck_delay: float = 1.0) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._static = resources or (lambda: [r for r in builtin_resources()
                                              if r.namespaced and "delete" in r.verbs and "list" in r.verbs])
        self.recheck_delay = recheck_delay
        self._ns = informers.informer(NAMESPACES)
        self.queue = WorkQueue()
        self._ns.add_handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n))

    def _enqueue(self, ns: JsonDict) -> None:
        if meta(ns).get("deletionTimestamp"):
            self.queue.add(str(meta(ns).get("name")))

    async def run(self, workers: int = 2) -> None:
        await self._ns.wait_for_sync()
        logger.info("%s: caches synced", self.NAME)
        await run_workers(self.queue, self.sync, workers=workers, name=self.NAME)

    async def _resources(self) -> list[ResourceInfo]:
        out = list(self._static())
        seen = {(r.group, r.resource) for r in out}
        try:
            crds = (await self._client.list(CRDS)).get("items") or []
        except ApiError as e:
            logger.info("%s: CRD discovery failed err=%r", self.NAME, e)
            crds = []
        for crd in crds:
            res = crd_resource(crd)
            if res is not None and (res.group, res.resource) not in seen:
                out.append(res)
        return out

    async def sync(self, name: str) -> None:
        try:
            ns = await self._client.get(NAMESPACES, name)
        except NotFoundError:
            return
        if not meta(ns).get("deletionTimestamp"):
            return
        if FINALIZER_KUBERNETES not in ((ns.get("spec") or {}).get("finalizers") or []):
            return
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        failures: list[str] = []
        for res in await self._resources():
            try:
                left = await self._delete_all(res, name)
            except ApiError as e:
                logger.info("%s: deleting %s in %s failed err=%r", self.NAME, res.qualified, name, e)
                failures.append(res.qualified)
                continue
            if left:
                remaining[res.qualified] = len(left)
                for obj in left:
                    for f in meta(obj).get("finalizers") or []:
                        finalizers[f] = finalizers.get(f, 0) + 1
        await self._set_conditions(ns, remaining, finalizers, failures)
        if remaining or failures:
            logger.debug("%s: namespace=%s waiting for %s", self.NAME, name, remaining)
            self.queue.add_after(name, self.recheck_delay)
            return
        await self._finalize(name)

    async def _delete_all(self, res: ResourceInfo, namespace: str) -> list[JsonDict]:
        """deleteAllContentForGroupVersionResource: delete, then return what is still there."""
        if "deletecollection" in res.verbs:
            try:
                await self._client.delete_collection(res, namespace)
            except (MethodNotAllowedError, NotFoundError):
                await self._delete_each(res, namespace)
        else:
            await self._delete_each(res, namespace)
        try:
            return list((await self._client.list(res, namespace)).get("items") or [])
        except NotFoundError:
            return []

    async def _delete_each(self, res: ResourceInfo, namespace: str) -> None:
        try:
            items = (await self._client.list(res, namespace)).get("items") or []
        except NotFoundError:
            return
        for obj in items:
            if meta(obj).get("deletionTimestamp"):
                continue
            try:
                await self._client.delete(res, str(meta(obj).get("name")), namespace)
            except NotFoundError:
                pass

    async def _set_conditions(self, ns: JsonDict, remaining: dict[str, int], finalizers: dict[str, int],
                              failures: list[str]) -> None:
        status = ns.get("status") or {}
        conds = namespace_conditions(list(status.get("conditions") or []), remaining=remaining,
                                     finalizers=finalizers, failures=failures, now=now_str(self._clock))
        if conds == status.get("conditions"):
            return
        body = copy.deepcopy(ns)
        body.setdefault("status", {})["conditions"] = conds
        body["status"]["phase"] = "Terminating"
        try:
            await self._client.update_status(NAMESPACES, body, read_only=True)
        except (ConflictError, NotFoundError):
            pass

    async def _finalize(self, name: str) -> None:
        for _ in range(5):
            try:
                ns = await self._client.get(NAMESPACES, name)
            except NotFoundError:
                return
            body = copy.deepcopy(ns)
            fins = [f for f in (body.get("spec") or {}).get("finalizers") or [] if f != FINALIZER_KUBERNETES]
            body.setdefault("spec", {})["finalizers"] = fins
            try:
                await self._client.update(NAMESPACES, body, subresource="finalize", read_only=True)
                logger.info("%s: namespace=%s finalized", self.NAME, name)
                return
            except ConflictError:
                continue
            except NotFoundError:
                return
        raise ConflictError(f"could not finalize namespace {name}")


