"""pvc-protection and pv-protection controllers (layer L4), after kube-controller-manager's
pkg/controller/volume/pvcprotection and pvprotection.

The StorageObjectInUseProtection admission plugin gives every new claim the
`kubernetes.io/pvc-protection` finalizer and every new volume `kubernetes.io/pv-protection`.
Deleting them only marks them (Terminating) until these controllers remove the finalizer:
- a claim once no scheduled pod of its namespace uses it (a `persistentVolumeClaim` volume naming
  it, or a generic ephemeral volume `<pod>-<volume>` of a pod not yet finished); the informer's
  answer is confirmed by a live list of the namespace's pods before the finalizer goes, as
  upstream does;
- a volume once it is not Bound.

Data flow: claim, volume and pod informers -> work queues of claim / volume keys -> the
finalizer removed with a JSON patch guarded by the object's resourceVersion (a Conflict is
retried from the newer object).
"""

from __future__ import annotations

import asyncio
import logging

from minik3s.api.errors import NotFoundError
from minik3s.api.helpers.storage_volume import ephemeral_claim_name
from minik3s.api.resources import PERSISTENTVOLUMECLAIMS, PODS, ResourceInfo, builtin_resources
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import is_pod_terminal, meta, run_workers

logger = logging.getLogger(__name__)

PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"
NAMESPACE_INDEX = "namespace"
PERSISTENTVOLUMES = next(r for r in builtin_resources() if (r.group, r.resource) == ("", "persistentvolumes"))


def _namespace_index(obj: JsonDict) -> list[str]:
    ns = meta(obj).get("namespace")
    return [ns] if ns else []


def claims_used_by(pod: JsonDict) -> set[str]:
    """The claim names a scheduled pod keeps in use (podUsesPVC): its persistentVolumeClaim
    volumes, and while it has not finished, the claims of its generic ephemeral volumes."""
    spec = pod.get("spec") or {}
    if not spec.get("nodeName"):
        return set()  # the kubelet will not start a pod whose claim is being deleted
    out: set[str] = set()
    running = not is_pod_terminal(pod)
    for v in spec.get("volumes") or ():
        if not isinstance(v, dict):
            continue
        claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
        if claim:
            out.add(str(claim))
        elif running and isinstance(v.get("ephemeral"), dict):
            out.add(ephemeral_claim_name(pod, v))
    return out


def _deleting_with(obj: JsonDict, finalizer: str) -> bool:
    m = meta(obj)
    return bool(m.get("deletionTimestamp")) and finalizer in (m.get("finalizers") or ())


class StorageProtectionController:
    NAME = "pvc-protection-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, claims: bool = True,
                 volumes: bool = True) -> None:
        self._client = client
        self._claims_on, self._volumes_on = claims, volumes
        self._claims = informers.informer(PERSISTENTVOLUMECLAIMS)
        self._volumes = informers.informer(PERSISTENTVOLUMES)
        self._pods = informers.informer(PODS)
        self._pods.add_index(NAMESPACE_INDEX, _namespace_index)
        self.claim_queue = WorkQueue()
        self.volume_queue = WorkQueue()
        if claims:
            self._claims.add_handler(on_add=self._claim_changed, on_update=lambda _o, n: self._claim_changed(n))
            self._pods.add_handler(on_update=self._pod_updated, on_delete=self._pod_gone)
        if volumes:
            self._volumes.add_handler(on_add=self._volume_changed, on_update=lambda _o, n: self._volume_changed(n))

    # ------------------------------------------------------------------ claims
    def _claim_changed(self, pvc: JsonDict) -> None:
        if _deleting_with(pvc, PVC_PROTECTION_FINALIZER):
            self.claim_queue.add(f"{meta(pvc).get('namespace')}/{meta(pvc).get('name')}")

    def _pod_gone(self, pod: JsonDict) -> None:
        ns = meta(pod).get("namespace")
        spec = pod.get("spec") or {}
        names = {str((v.get("persistentVolumeClaim") or {}).get("claimName") or "")
                 for v in spec.get("volumes") or () if isinstance(v, dict)}
        names |= {ephemeral_claim_name(pod, v) for v in spec.get("volumes") or ()
                  if isinstance(v, dict) and isinstance(v.get("ephemeral"), dict)}
        for name in names - {""}:
            pvc = self._claims.store.get(f"{ns}/{name}")
            if pvc is not None:
                self._claim_changed(pvc)

    def _pod_updated(self, old: JsonDict, new: JsonDict) -> None:
        # what a pod holds changes only with its node (volumes are immutable) or when it finishes;
        # most updates (the kubelet's status writes) leave both as they were
        old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
        if old_spec.get("nodeName") == new_spec.get("nodeName") and is_pod_terminal(old) == is_pod_terminal(new):
            return
        if claims_used_by(old) - claims_used_by(new):
            self._pod_gone(old)

    def _in_use(self, namespace: str, name: str, pods: list[JsonDict]) -> bool:
        return any(name in claims_used_by(p) for p in pods if meta(p).get("namespace") == namespace)

    async def sync_claim(self, key: str) -> None:
        pvc = self._claims.store.get(key)
        if pvc is None or not _deleting_with(pvc, PVC_PROTECTION_FINALIZER):
            return
        ns, name = str(meta(pvc).get("namespace")), str(meta(pvc).get("name"))
        if self._in_use(ns, name, self._pods.by_index(NAMESPACE_INDEX, ns)):
            return
        live = (await self._client.list(PODS, ns, read_only=self._client.shares_items)).get("items") or []
        if self._in_use(ns, name, live):
            return
        await self._remove_finalizer(PERSISTENTVOLUMECLAIMS, pvc, PVC_PROTECTION_FINALIZER)

    # ------------------------------------------------------------------ volumes
    def _volume_changed(self, pv: JsonDict) -> None:
        if _deleting_with(pv, PV_PROTECTION_FINALIZER):
            self.volume_queue.add(str(meta(pv).get("name")))

    async def sync_volume(self, key: str) -> None:
        pv = self._volumes.store.get(key)
        if pv is None or not _deleting_with(pv, PV_PROTECTION_FINALIZER):
            return
        if (pv.get("status") or {}).get("phase") == "Bound":
            return  # still bound to a claim
        await self._remove_finalizer(PERSISTENTVOLUMES, pv, PV_PROTECTION_FINALIZER)

    async def _remove_finalizer(self, res: ResourceInfo, obj: JsonDict, finalizer: str) -> None:
        m = meta(obj)
        finalizers = [f for f in m.get("finalizers") or () if f != finalizer]
        patch = {"metadata": {"finalizers": finalizers or None, "resourceVersion": m.get("resourceVersion")}}
        try:
            await self._client.patch(res, str(m.get("name")), patch, m.get("namespace"), read_only=True)
        except NotFoundError:
            pass

    async def run(self, workers: int = 1) -> None:
        await self._claims.wait_for_sync()
        await self._volumes.wait_for_sync()
        await self._pods.wait_for_sync()
        logger.info("%s: caches synced", self.NAME)
        async with asyncio.TaskGroup() as tg:
            if self._claims_on:
                tg.create_task(run_workers(self.claim_queue, self.sync_claim, workers=workers,
                                           name="pvc-protection-controller"))
            if self._volumes_on:
                tg.create_task(run_workers(self.volume_queue, self.sync_volume, workers=workers,
                                           name="pv-protection-controller"))
