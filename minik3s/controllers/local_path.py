"""The local-path provisioner K3s runs (layer L4), simulated: rancher/local-path-provisioner
(provisioner.go) on top of sig-storage-lib-external-provisioner (controller/controller.go).

In K3s it is a Deployment in kube-system serving the `local-path` StorageClass (provisioner
`rancher.io/local-path`, WaitForFirstConsumer, reclaim Delete); `--disable local-storage` removes
both. Here it is an in-process controller with the same API effects (no helper pods, no
directories: nothing runs on the simulated nodes):

Provisioning (the lib's shouldProvision + provisionClaimOperation, local-path's Provision):
a claim without `volumeName` whose `volume.kubernetes.io/storage-provisioner` (or the beta
annotation) is `rancher.io/local-path` and, for a WaitForFirstConsumer class, that carries
`volume.kubernetes.io/selected-node`, gets PV `pvc-<claim uid>`:
- hostPath `/var/lib/rancher/k3s/storage/pvc-<uid>_<namespace>_<name>`, type DirectoryOrCreate
  (`local` instead when the claim's `volumeType` annotation, or the class's `defaultVolumeType`
  annotation, says `local`), volumeMode Filesystem (local-path always writes Filesystem);
- capacity = the claim's storage request, the claim's access modes (ReadWriteOnce and
  ReadWriteOncePod only), the class's reclaim policy and name;
- required node affinity `kubernetes.io/hostname In [<the node's hostname label, else its name>]`;
- claimRef to the claim with uid and resourceVersion; annotations
  `pv.kubernetes.io/provisioned-by: rancher.io/local-path` and
  `local.path.provisioner/selected-node: <node>`.
Events on the claim, from `rancher.io/local-path_<instance>`: Normal `Provisioning`
"External provisioner is provisioning volume for claim \"ns/name\"", then Normal
`ProvisioningSucceeded` "Successfully provisioned volume pvc-...", or Warning
`ProvisioningFailed` "failed to provision volume with StorageClass \"local-path\": ..." (a
selector, other access modes, no or an unknown node). The PV controller then binds the claim to
the pre-bound volume.

Deleting (the lib's shouldDelete + deleteVolumeOperation): a Released volume it provisioned
with reclaim policy Delete is deleted (its directory would be removed by a helper pod first).

Data flow: claim, volume, class and node informers -> claim / volume work queues -> PV creates
and deletes through the Client; Events through minik3s.client.record.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import uuid

from minik3s.api.errors import AlreadyExistsError, NotFoundError
from minik3s.api.helpers import persistent_volumes as pvh
from minik3s.api.resources import NODES, PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, STORAGECLASSES
from minik3s.api.storage import LOCAL_PATH_PROVISIONER as PROVISIONER
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import meta, run_workers
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

DEFAULT_PATH = "/var/lib/rancher/k3s/storage"  # K3s' local-path-config nodePathMap default
ANN_SELECTED_NODE = "local.path.provisioner/selected-node"
KEY_NODE = "kubernetes.io/hostname"


class ProvisionError(Exception):
    """local-path refused the claim (the lib turns it into a ProvisioningFailed Event)."""


def _spec(obj: JsonDict) -> JsonDict:
    s = obj.get("spec")
    return s if isinstance(s, dict) else {}


class LocalPathProvisioner:
    NAME = "local-path-provisioner"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None,
                 base_path: str = DEFAULT_PATH, identity: str | None = None) -> None:
        self._client = client
        self._base_path = base_path.rstrip("/") or "/"
        self._claims = informers.informer(PERSISTENTVOLUMECLAIMS)
        self._volumes = informers.informer(PERSISTENTVOLUMES)
        self._classes = informers.informer(STORAGECLASSES)
        self._nodes = informers.informer(NODES)
        self.claim_queue = WorkQueue()
        self.volume_queue = WorkQueue()
        # the lib's identity: <provisioner>_<host>_<uuid> (the Events' source component)
        self.identity = identity or f"{PROVISIONER}_{self.NAME}_{uuid.uuid4()}"
        self.recorder = EventRecorder(client, self.identity, clock=clock)
        self._failed: dict[str, str] = {}  # claim uid -> the last failure reported
        self._claims.add_handler(on_add=self._claim_seen, on_update=lambda _o, n: self._claim_seen(n))
        self._volumes.add_handler(on_add=self._volume_seen, on_update=lambda _o, n: self._volume_seen(n))

    def _claim_seen(self, claim: JsonDict) -> None:
        if self._should_provision(claim):
            self.claim_queue.add(pvh.claim_key(claim))

    def _volume_seen(self, volume: JsonDict) -> None:
        if self._should_delete(volume):
            self.volume_queue.add(str(meta(volume).get("name")))

    # ------------------------------------------------------------------ provisioning
    def _should_provision(self, claim: JsonDict) -> bool:
        """The lib's shouldProvision: unbound, handed to this provisioner, and for a delayed
        class, a node selected by the scheduler."""
        if _spec(claim).get("volumeName") or meta(claim).get("deletionTimestamp"):
            return False
        anns = pvh.annotations_of(claim)
        if (anns.get(pvh.ANN_STORAGE_PROVISIONER) or anns.get(pvh.ANN_BETA_STORAGE_PROVISIONER)) != PROVISIONER:
            return False
        cls = self._classes.store.get(pvh.claim_class(claim))
        if cls is not None and cls.get("volumeBindingMode") == "WaitForFirstConsumer":
            return pvh.ANN_SELECTED_NODE in anns
        return True

    @staticmethod
    def volume_name(claim: JsonDict) -> str:
        return f"pvc-{meta(claim).get('uid')}"

    def volume_for(self, claim: JsonDict, cls: JsonDict, node: JsonDict | None) -> JsonDict:
        """local-path's Provision, plus what the lib adds (name, claimRef, class, annotation)."""
        spec = _spec(claim)
        for mode in spec.get("accessModes") or ():
            if mode not in ("ReadWriteOnce", "ReadWriteOncePod"):
                raise ProvisionError("NodePath only supports ReadWriteOnce and ReadWriteOncePod (1.22+) access modes")
        if node is None:
            raise ProvisionError("configuration error, no node was specified")
        if spec.get("selector") is not None:
            raise ProvisionError("claim.Spec.Selector is not supported")
        m = meta(claim)
        name = self.volume_name(claim)
        path = f"{self._base_path}/{name}_{m.get('namespace')}_{m.get('name')}"
        volume_type = pvh.annotations_of(cls).get("defaultVolumeType", "hostPath")
        volume_type = pvh.annotations_of(claim).get("volumeType", volume_type)
        if volume_type.lower() == "local":
            source: JsonDict = {"local": {"path": path}}
        elif volume_type.lower() == "hostpath":
            source = {"hostPath": {"path": path, "type": "DirectoryOrCreate"}}
        else:
            raise ProvisionError(f'"{volume_type}" is not a recognised volume type')
        node_name = str(meta(node).get("name"))
        hostname = (meta(node).get("labels") or {}).get(KEY_NODE) or node_name
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        return {
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {ANN_SELECTED_NODE: node_name,
                                                       pvh.ANN_DYNAMICALLY_PROVISIONED: PROVISIONER}},
            "spec": {
                "persistentVolumeReclaimPolicy": cls.get("reclaimPolicy") or "Delete",
                "accessModes": copy.deepcopy(spec.get("accessModes") or []),
                "volumeMode": "Filesystem",
                "capacity": {"storage": storage},
                **source,
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": KEY_NODE, "operator": "In", "values": [hostname]}]}]}},
                "claimRef": pvh.claim_reference(claim),
                "storageClassName": pvh.claim_class(claim),
            },
        }

    async def sync_claim(self, key: str) -> None:
        claim = self._claims.store.get(key)
        if claim is None or not self._should_provision(claim):
            return
        name = self.volume_name(claim)
        if self._volumes.store.get(name) is not None:
            return  # already provisioned
        try:
            await self._client.get(PERSISTENTVOLUMES, name)
            return
        except NotFoundError:
            pass
        class_name = pvh.claim_class(claim)
        cls = self._classes.store.get(class_name)
        node_name = pvh.annotations_of(claim).get(pvh.ANN_SELECTED_NODE)
        node = self._nodes.store.get(node_name) if node_name else None
        ref = claim if claim.get("kind") else {**claim, "kind": "PersistentVolumeClaim", "apiVersion": "v1"}
        try:
            if cls is None:
                raise ProvisionError(f'storageclass.storage.k8s.io "{class_name}" not found')
            if node_name and node is None:
                raise ProvisionError(f'failed to get target node: nodes "{node_name}" not found')
            self.recorder.event(ref, "Normal", "Provisioning",
                                f'External provisioner is provisioning volume for claim "{key}"')
            volume = self.volume_for(claim, cls, node)
        except ProvisionError as e:
            message = f'failed to provision volume with StorageClass "{class_name}": {e}'
            uid = str(meta(claim).get("uid"))
            if self._failed.get(uid) != message:  # once per failure, not on every claim update
                self._failed[uid] = message
                self.recorder.event(ref, "Warning", "ProvisioningFailed", message)
            logger.info("provisioning failed claim=%s err=%s", key, e)
            return
        try:
            await self._client.create(PERSISTENTVOLUMES, volume, read_only=True)
        except AlreadyExistsError:
            return
        self._failed.pop(str(meta(claim).get("uid")), None)
        logger.info("volume provisioned claim=%s volume=%s node=%s", key, name, node_name)
        self.recorder.event(ref, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {name}")

    # ------------------------------------------------------------------ deleting
    @staticmethod
    def _should_delete(volume: JsonDict) -> bool:
        """The lib's shouldDelete: provisioned here, Released, reclaim policy Delete."""
        return (pvh.annotations_of(volume).get(pvh.ANN_DYNAMICALLY_PROVISIONED) == PROVISIONER
                and (volume.get("status") or {}).get("phase") == "Released"
                and _spec(volume).get("persistentVolumeReclaimPolicy") == "Delete"
                and not meta(volume).get("deletionTimestamp"))

    async def sync_volume(self, name: str) -> None:
        volume = self._volumes.store.get(name)
        if volume is None or not self._should_delete(volume):
            return
        logger.info("deleting volume volume=%s", name)
        try:
            await self._client.delete(PERSISTENTVOLUMES, name)
        except NotFoundError:
            pass

    # ------------------------------------------------------------------ run
    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            for inf in (self._claims, self._volumes, self._classes, self._nodes):
                await inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(run_workers(self.claim_queue, self.sync_claim, workers=1, name=f"{self.NAME}-claims"))
            tg.create_task(run_workers(self.volume_queue, self.sync_volume, workers=1, name=f"{self.NAME}-volumes"))
