"""persistentvolume-binder (layer L4): kube-controller-manager's PersistentVolume controller,
after pkg/controller/volume/persistentvolume/pv_controller.go and pv_controller_base.go.

It keeps the two-way pointer between a claim (`spec.volumeName`) and a volume
(`spec.claimRef`) and the phases on both sides:

Claims (syncClaim; a claim without `pv.kubernetes.io/bind-completed` is unbound):
1. No `volumeName`: the best matching volume (minik3s.api.helpers.persistent_volumes: a volume
   pre-bound to the claim wins, else the smallest Available one that fits; for a
   WaitForFirstConsumer class only a pre-bound one) is bound. Without a match: a claim with no
   class at all gets the default StorageClass (retroactive assignment); a delayed claim without
   `volume.kubernetes.io/selected-node` waits (Normal `WaitForFirstConsumer`, or
   `WaitForPodScheduled` naming unscheduled pods that use it); a claim with a class is handed to
   its provisioner (an external one gets the two storage-provisioner annotations and Normal
   `ExternalProvisioning`; in-tree `kubernetes.io/...` provisioners do not exist here: Warning
   `ProvisioningFailed`); a claim without a class gets Normal `FailedBinding`.
2. `volumeName` set by the user: bound to that volume when it is free (and satisfies the
   claim: else Warning `VolumeMismatch`) or already pre-bound to the claim; Pending otherwise.
3. Bound claims: Lost (Warning `ClaimLost`) when the volume is gone or `volumeName` was cleared;
   `ClaimMisbound` when the volume names another claim.
Bind order, as upstream: volume claimRef (+ `pv.kubernetes.io/bound-by-controller` unless it was
pre-bound), volume status Bound, claim volumeName + bound-by-controller + bind-completed, claim
status Bound with the volume's access modes and capacity.

Volumes (syncVolume): no claimRef or a claimRef without uid -> Available; claimRef to a claim
that is gone (or was replaced by one with another uid, checked against the API) -> Released and
the reclaim policy runs: Retain keeps it; Delete leaves volumes of external provisioners to
them (local-path deletes its own), deletes /tmp hostPath volumes (the hostPath deleter) and marks
others Failed (Warning `VolumeFailedDelete`); Recycle (deprecated) scrubs hostPath/NFS volumes
and makes them Available again, else Failed with Warning `VolumeFailedRecycle`.
Status writes that change the phase set `lastPhaseTransitionTime` (GA in 1.31) from the clock.

Like upstream, the controller keeps its own newest copy of every object it wrote (informers lag
behind the writes), one worker per queue, and a full resync every 15 s
(--pvclaimbinder-sync-period). A resync repeats the Events of a claim that still waits; the
recorder's correlator counts them on one Event, as upstream's does.

Data flow: claim, volume, class and pod informers -> claim / volume work queues -> sync ->
writes through the Client; Events through minik3s.client.record.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re

from minik3s.api.errors import NotFoundError
from minik3s.api.helpers import persistent_volumes as pvh
from minik3s.api.resources import PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, PODS, STORAGECLASSES
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import is_pod_terminal, meta, now_str, run_workers
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

SYNC_PERIOD = 15.0  # --pvclaimbinder-sync-period
POD_PVC_INDEX = "pod-pvc"
_HOSTPATH_DELETABLE = re.compile(r"/tmp/.+")


def _pod_pvc_index(pod: JsonDict) -> list[str]:
    ns = meta(pod).get("namespace")
    return [f"{ns}/{c}" for c in pvh.claims_of_pod(pod)]


def _rv(obj: JsonDict | None) -> int:
    try:
        return int(meta(obj or {}).get("resourceVersion") or 0)
    except (TypeError, ValueError):
        return 0


def _with_kind(obj: JsonDict, kind: str) -> JsonDict:
    if obj.get("kind"):
        return obj
    return {**obj, "kind": kind, "apiVersion": "v1"}


def _phase(obj: JsonDict) -> str:
    return str((obj.get("status") or {}).get("phase") or "")


def _spec(obj: JsonDict) -> JsonDict:
    s = obj.get("spec")
    return s if isinstance(s, dict) else {}


class PersistentVolumeController:
    NAME = "persistentvolume-controller"  # the Events' source component, as upstream

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None,
                 sync_period: float = SYNC_PERIOD) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._sync_period = sync_period
        self._claims = informers.informer(PERSISTENTVOLUMECLAIMS)
        self._volumes = informers.informer(PERSISTENTVOLUMES)
        self._classes = informers.informer(STORAGECLASSES)
        self._pods = informers.informer(PODS)
        self._pods.add_index(POD_PVC_INDEX, _pod_pvc_index)
        self.claim_queue = WorkQueue()
        self.volume_queue = WorkQueue()
        self.recorder = EventRecorder(client, self.NAME, clock=self._clock)
        # the newest copy of each object this controller wrote (upstream's own caches)
        self._claim_cache: dict[str, JsonDict] = {}
        self._volume_cache: dict[str, JsonDict] = {}
        self._claims.add_handler(on_add=self._claim_seen, on_update=lambda _o, n: self._claim_seen(n),
                                 on_delete=self._claim_gone)
        self._volumes.add_handler(on_add=self._volume_seen, on_update=lambda _o, n: self._volume_seen(n),
                                  on_delete=self._volume_gone)

    # ------------------------------------------------------------------ handlers
    def _claim_seen(self, claim: JsonDict) -> None:
        self.claim_queue.add(pvh.claim_key(claim))

    def _claim_gone(self, claim: JsonDict) -> None:
        key = pvh.claim_key(claim)
        self._claim_cache.pop(key, None)
        volume = _spec(claim).get("volumeName")
        if volume:  # its volume is released at once, not at the next resync
            self.volume_queue.add(str(volume))

    def _volume_seen(self, volume: JsonDict) -> None:
        self.volume_queue.add(str(meta(volume).get("name")))

    def _volume_gone(self, volume: JsonDict) -> None:
        self._volume_cache.pop(str(meta(volume).get("name")), None)
        ref = _spec(volume).get("claimRef")
        if isinstance(ref, dict):  # its claim turns Lost at once
            self.claim_queue.add(f"{ref.get('namespace')}/{ref.get('name')}")

    # ------------------------------------------------------------------ caches
    def _claim(self, key: str) -> JsonDict | None:
        informed = self._claims.store.get(key)
        cached = self._claim_cache.get(key)
        if informed is None:
            self._claim_cache.pop(key, None)
            return None
        return cached if cached is not None and _rv(cached) > _rv(informed) else informed

    def _volume(self, name: str) -> JsonDict | None:
        informed = self._volumes.store.get(name)
        cached = self._volume_cache.get(name)
        if informed is None:
            self._volume_cache.pop(name, None)
            return None
        return cached if cached is not None and _rv(cached) > _rv(informed) else informed

    def _all_volumes(self) -> list[JsonDict]:
        out = []
        for v in self._volumes.store.list():
            cur = self._volume(str(meta(v).get("name")))
            if cur is not None:
                out.append(cur)
        return out

    def _remember_claim(self, claim: JsonDict) -> JsonDict:
        self._claim_cache[pvh.claim_key(claim)] = claim
        return claim

    def _remember_volume(self, volume: JsonDict) -> JsonDict:
        self._volume_cache[str(meta(volume).get("name"))] = volume
        return volume

    def _event(self, obj: JsonDict, kind: str, event_type: str, reason: str, message: str) -> None:
        """Record an Event; a repeat (every resync while a claim waits) is counted on the first
        one by the recorder's correlator, as upstream's "(x4 over 1m)"."""
        self.recorder.event(_with_kind(obj, kind), event_type, reason, message)

    # ------------------------------------------------------------------ writes
    async def _update_claim(self, claim: JsonDict) -> JsonDict:
        return self._remember_claim(await self._client.update(PERSISTENTVOLUMECLAIMS, claim, read_only=True))

    async def _update_volume(self, volume: JsonDict) -> JsonDict:
        return self._remember_volume(await self._client.update(PERSISTENTVOLUMES, volume, read_only=True))

    async def _update_claim_status(self, claim: JsonDict, phase: str, volume: JsonDict | None) -> JsonDict:
        """updateClaimStatus: the phase, and the volume's access modes and (when the claim is
        becoming Bound) capacity; both cleared without a volume."""
        status = dict(claim.get("status") or {})
        dirty = False
        if status.get("phase") != phase:
            status["phase"] = phase
            dirty = True
        if volume is None:
            for k in ("accessModes", "capacity"):
                if status.pop(k, None) is not None:
                    dirty = True
        else:
            modes = _spec(volume).get("accessModes")
            if status.get("accessModes") != modes:
                status["accessModes"] = copy.deepcopy(modes)
                dirty = True
            if _phase(claim) != phase:
                cap = _spec(volume).get("capacity") or {}
                if "storage" not in cap:
                    raise ValueError(f'PersistentVolume "{meta(volume).get("name")}" is without a storage capacity')
                if pvh.storage_of(cap) != pvh.storage_of(status.get("capacity")) or "capacity" not in status:
                    status["capacity"] = copy.deepcopy(cap)
                    dirty = True
        if not dirty:
            return claim
        new = {**claim, "status": status}
        out = self._remember_claim(await self._client.update_status(PERSISTENTVOLUMECLAIMS, new, read_only=True))
        logger.info("claim entered phase claim=%s phase=%s", pvh.claim_key(claim), phase)
        return out

    async def _claim_status_with_event(self, claim: JsonDict, phase: str, event_type: str, reason: str,
                                       message: str) -> None:
        if _phase(claim) == phase:
            return
        new = await self._update_claim_status(claim, phase, None)
        self.recorder.event(_with_kind(new, "PersistentVolumeClaim"), event_type, reason, message)

    async def _update_volume_phase(self, volume: JsonDict, phase: str, message: str = "") -> JsonDict:
        if _phase(volume) == phase:
            return volume
        status = dict(volume.get("status") or {})
        status["phase"] = phase
        if message:
            status["message"] = message
        else:
            status.pop("message", None)
        status["lastPhaseTransitionTime"] = now_str(self._clock)
        out = self._remember_volume(await self._client.update_status(
            PERSISTENTVOLUMES, {**volume, "status": status}, read_only=True))
        logger.info("volume entered phase volume=%s phase=%s", meta(volume).get("name"), phase)
        return out

    async def _volume_phase_with_event(self, volume: JsonDict, phase: str, event_type: str, reason: str,
                                       message: str) -> JsonDict:
        if _phase(volume) == phase:
            return volume
        new = await self._update_volume_phase(volume, phase, message)
        self.recorder.event(_with_kind(new, "PersistentVolume"), event_type, reason, message)
        return new

    # ------------------------------------------------------------------ binding
    async def _bind_volume_to_claim(self, volume: JsonDict, claim: JsonDict) -> JsonDict:
        """GetBindVolumeToClaim + update: claimRef to the claim; bound-by-controller unless the
        volume was pre-bound to it."""
        pre_bound = pvh.is_volume_bound_to_claim(volume, claim)
        ref = _spec(volume).get("claimRef") or {}
        m = meta(claim)
        new = copy.deepcopy(volume)
        dirty = False
        if (ref.get("name"), ref.get("namespace"), ref.get("uid")) != (m.get("name"), m.get("namespace"), m.get("uid")):
            new["spec"]["claimRef"] = pvh.claim_reference(claim)
            dirty = True
        anns = new["metadata"].setdefault("annotations", {})
        if not pre_bound and pvh.ANN_BOUND_BY_CONTROLLER not in anns:
            anns[pvh.ANN_BOUND_BY_CONTROLLER] = "yes"
            dirty = True
        if not anns:
            del new["metadata"]["annotations"]
        if not dirty:
            return volume
        logger.info("claim bound to volume claim=%s volume=%s", pvh.claim_key(claim), m.get("name"))
        return await self._update_volume(new)

    async def _bind_claim_to_volume(self, claim: JsonDict, volume: JsonDict) -> JsonDict:
        name = meta(volume).get("name")
        new = copy.deepcopy(claim)
        anns = new["metadata"].setdefault("annotations", {})
        dirty = False
        if _spec(claim).get("volumeName") != name:
            new["spec"]["volumeName"] = name
            anns.setdefault(pvh.ANN_BOUND_BY_CONTROLLER, "yes")
            dirty = True
        if pvh.ANN_BIND_COMPLETED not in anns:
            anns[pvh.ANN_BIND_COMPLETED] = "yes"
            dirty = True
        if not dirty:
            return claim
        return await self._update_claim(new)

    async def bind(self, volume: JsonDict, claim: JsonDict) -> None:
        """Volume first (claimRef, then phase Bound), then the claim (volumeName and
        annotations, then phase Bound); a failure leaves the rest to the next sync."""
        volume = await self._bind_volume_to_claim(volume, claim)
        volume = await self._update_volume_phase(volume, "Bound")
        claim = await self._bind_claim_to_volume(claim, volume)
        await self._update_claim_status(claim, "Bound", volume)

    async def _unbind_volume(self, volume: JsonDict) -> None:
        new = copy.deepcopy(volume)
        anns = new["metadata"].get("annotations") or {}
        if pvh.ANN_BOUND_BY_CONTROLLER in anns:
            new["spec"].pop("claimRef", None)
            del anns[pvh.ANN_BOUND_BY_CONTROLLER]
            if not anns:
                new["metadata"].pop("annotations", None)
        else:  # pre-bound by the user: keep the reservation, drop the uid
            new["spec"]["claimRef"].pop("uid", None)
        updated = await self._update_volume(new)
        await self._update_volume_phase(updated, "Available")

    # ------------------------------------------------------------------ claims
    async def sync_claim(self, key: str) -> None:
        claim = self._claim(key)
        if claim is None:
            return
        if pvh.ANN_BIND_COMPLETED not in pvh.annotations_of(claim):
            await self._sync_unbound_claim(claim)
        else:
            await self._sync_bound_claim(claim)

    def _class(self, name: str) -> JsonDict | None:
        return self._classes.store.get(name) if name else None

    def _delay_binding(self, claim: JsonDict) -> bool:
        """IsDelayBindingMode: the claim's class exists and is WaitForFirstConsumer."""
        cls = self._class(pvh.claim_class(claim))
        return cls is not None and cls.get("volumeBindingMode") == "WaitForFirstConsumer"

    async def _sync_unbound_claim(self, claim: JsonDict) -> None:
        volume_name = _spec(claim).get("volumeName")
        if not volume_name:
            delay = self._delay_binding(claim)
            volume = pvh.find_best_match_for_claim(claim, self._all_volumes(), delay_binding=delay)
            if volume is not None:
                await self.bind(volume, claim)
                return
            if await self._assign_default_class(claim):
                return  # the update event syncs the claim again
            if delay and pvh.ANN_SELECTED_NODE not in pvh.annotations_of(claim):
                self._wait_for_first_consumer(claim)
            elif pvh.claim_class(claim):
                await self._provision_claim(claim)
                return
            else:
                self._event(claim, "PersistentVolumeClaim", "Normal", "FailedBinding",
                            "no persistent volumes available for this claim and no storage class is set")
            await self._update_claim_status(claim, "Pending", None)
            return
        volume = self._volume(str(volume_name))
        if volume is None:  # asked for a volume that does not exist (yet)
            await self._update_claim_status(claim, "Pending", None)
            return
        ref = _spec(volume).get("claimRef")
        if ref is None:
            problem = self._unsatisfied_by(volume, claim)
            if problem:
                self._event(claim, "PersistentVolumeClaim", "Warning", "VolumeMismatch",
                            f'Cannot bind to requested volume "{volume_name}": {problem}')
                await self._update_claim_status(claim, "Pending", None)
                return
            await self.bind(volume, claim)
        elif pvh.is_volume_bound_to_claim(volume, claim):
            await self.bind(volume, claim)
        else:
            self._event(claim, "PersistentVolumeClaim", "Warning", "FailedBinding",
                        f'volume "{volume_name}" already bound to a different claim.')
            if pvh.ANN_BOUND_BY_CONTROLLER not in pvh.annotations_of(claim):
                await self._update_claim_status(claim, "Pending", None)

    @staticmethod
    def _unsatisfied_by(volume: JsonDict, claim: JsonDict) -> str:
        """checkVolumeSatisfyClaim: why a requested volume cannot take the claim ("" if it can)."""
        if meta(volume).get("deletionTimestamp"):
            return f'the volume is marked for deletion "{meta(volume).get("name")}"'
        if pvh.volume_capacity(volume) < pvh.requested_storage(claim):
            return "requested PV is too small"
        if pvh.volume_class(volume) != pvh.claim_class(claim):
            return "storageClassName does not match"
        if pvh.volume_mode_mismatch(claim, volume):
            return "incompatible volumeMode"
        if not pvh.access_modes_satisfied(claim, volume):
            return "incompatible accessMode"
        return ""

    def _wait_for_first_consumer(self, claim: JsonDict) -> None:
        """emitEventForUnboundDelayBindingClaim."""
        m = meta(claim)
        pods = [p for p in self._pods.by_index(POD_PVC_INDEX, pvh.claim_key(claim))
                if not is_pod_terminal(p) and not _spec(p).get("nodeName")]
        names = [str(meta(p).get("name")) for p in pods]
        if not names:
            self._event(claim, "PersistentVolumeClaim", "Normal", "WaitForFirstConsumer",
                        "waiting for first consumer to be created before binding")
        elif len(names) == 1:
            self._event(claim, "PersistentVolumeClaim", "Normal", "WaitForPodScheduled",
                        f"waiting for pod {names[0]} to be scheduled")
        else:
            self._event(claim, "PersistentVolumeClaim", "Normal", "WaitForPodScheduled",
                        f"waiting for pods {','.join(names)} to be scheduled")
        logger.debug("claim waits for its first consumer claim=%s/%s", m.get("namespace"), m.get("name"))

    async def _assign_default_class(self, claim: JsonDict) -> bool:
        """Retroactive default StorageClass: a claim with no class at all (not even "") gets the
        default class, if there is one."""
        if pvh.claim_has_class(claim):
            return False
        default = pvh.default_storage_class(self._classes.store.list())
        if default is None:
            return False
        new = copy.deepcopy(claim)
        new["spec"]["storageClassName"] = meta(default).get("name")
        await self._update_claim(new)
        logger.info("default StorageClass assigned claim=%s class=%s", pvh.claim_key(claim), meta(default).get("name"))
        return True

    async def _provision_claim(self, claim: JsonDict) -> None:
        """provisionClaim: hand the claim to its class's provisioner."""
        class_name = pvh.claim_class(claim)
        cls = self._class(class_name)
        if cls is None:
            self._event(claim, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
                        f'storageclass.storage.k8s.io "{class_name}" not found')
            return
        provisioner = str(cls.get("provisioner") or "")
        if provisioner.startswith("kubernetes.io/"):
            # no in-tree volume plugin provisions here (kubernetes.io/no-provisioner included)
            self._event(claim, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
                        f"no volume plugin matched name: {provisioner}")
            return
        anns = pvh.annotations_of(claim)
        if anns.get(pvh.ANN_STORAGE_PROVISIONER) != provisioner:
            new = copy.deepcopy(claim)
            new_anns = new["metadata"].setdefault("annotations", {})
            new_anns[pvh.ANN_BETA_STORAGE_PROVISIONER] = provisioner
            new_anns[pvh.ANN_STORAGE_PROVISIONER] = provisioner
            claim = await self._update_claim(new)
        self._event(claim, "PersistentVolumeClaim", "Normal", "ExternalProvisioning",
                    f"Waiting for a volume to be created either by the external provisioner '{provisioner}' "
                    "or manually by the system administrator. If volume creation is delayed, please verify "
                    "that the provisioner is running and correctly registered.")

    async def _sync_bound_claim(self, claim: JsonDict) -> None:
        volume_name = _spec(claim).get("volumeName")
        if not volume_name:
            await self._claim_status_with_event(
                claim, "Lost", "Warning", "ClaimLost",
                "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
            return
        volume = self._volume(str(volume_name))
        if volume is None:
            await self._claim_status_with_event(
                claim, "Lost", "Warning", "ClaimLost",
                "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
            return
        ref = _spec(volume).get("claimRef")
        if ref is None or ref.get("uid") == meta(claim).get("uid"):
            await self.bind(volume, claim)  # re-binds a volume that came unbound; else nothing
        else:
            await self._claim_status_with_event(
                claim, "Lost", "Warning", "ClaimMisbound",
                "Two claims are bound to the same volume, this one is bound incorrectly")

    # ------------------------------------------------------------------ volumes
    async def sync_volume(self, name: str) -> None:
        volume = self._volume(name)
        if volume is None:
            return
        ref = _spec(volume).get("claimRef")
        if not isinstance(ref, dict) or not ref.get("uid"):
            # unused, or reserved for a claim whose sync will bind it
            await self._update_volume_phase(volume, "Available")
            return
        ckey = f"{ref.get('namespace')}/{ref.get('name')}"
        claim = self._claim(ckey)
        if claim is None and _phase(volume) not in ("Released", "Failed"):
            claim = await self._live_claim(ref)  # a provisioner's PV may beat the claim to the cache
        if claim is not None and meta(claim).get("uid") != ref.get("uid"):
            claim = await self._live_claim(ref)
            if claim is not None and meta(claim).get("uid") != ref.get("uid"):
                claim = None  # the claim was deleted and another of its name created
        if claim is None:
            if _phase(volume) not in ("Released", "Failed"):
                logger.info("volume is released and reclaim policy will be executed volume=%s policy=%s",
                            name, _spec(volume).get("persistentVolumeReclaimPolicy"))
                volume = await self._update_volume_phase(volume, "Released")
            await self._reclaim(volume)
            return
        claimed = _spec(claim).get("volumeName")
        if not claimed:
            if pvh.volume_mode_mismatch(claim, volume):
                self._event(volume, "PersistentVolume", "Warning", "VolumeMismatch",
                            f'Cannot bind PersistentVolume to requested PersistentVolumeClaim "{meta(claim).get("name")}" '
                            "due to incompatible volumeMode.")
                self._event(claim, "PersistentVolumeClaim", "Warning", "VolumeMismatch",
                            f'Cannot bind PersistentVolume "{name}" to requested PersistentVolumeClaim due to '
                            "incompatible volumeMode.")
                return
            self.claim_queue.add(ckey)  # the claim's sync finishes the binding
            return
        if claimed == name:
            await self._update_volume_phase(volume, "Bound")
            return
        anns = pvh.annotations_of(volume)
        if pvh.ANN_DYNAMICALLY_PROVISIONED in anns and _spec(volume).get("persistentVolumeReclaimPolicy") == "Delete":
            # provisioned for this claim, which got bound elsewhere: not needed any more
            if _phase(volume) not in ("Released", "Failed"):
                volume = await self._update_volume_phase(volume, "Released")
            await self._reclaim(volume)
            return
        await self._unbind_volume(volume)

    async def _live_claim(self, ref: JsonDict) -> JsonDict | None:
        try:
            return await self._client.get(PERSISTENTVOLUMECLAIMS, str(ref.get("name")), str(ref.get("namespace")))
        except NotFoundError:
            return None

    async def _reclaim(self, volume: JsonDict) -> None:
        """reclaimVolume: run the volume's reclaim policy."""
        if pvh.annotations_of(volume).get(pvh.ANN_MIGRATED_TO):
            return  # the CSI driver's provisioner acts on it
        policy = _spec(volume).get("persistentVolumeReclaimPolicy") or "Retain"
        if policy == "Retain":
            return
        if policy == "Recycle":
            await self._recycle(volume)
        elif policy == "Delete":
            await self._delete(volume)
        else:
            await self._volume_phase_with_event(volume, "Failed", "Warning", "VolumeUnknownReclaimPolicy",
                                                "Volume has unrecognized PersistentVolumeReclaimPolicy")

    async def _still_released(self, volume: JsonDict) -> JsonDict | None:
        """isVolumeReleased on the volume read again: its claim is gone (or bound elsewhere)."""
        try:
            cur = await self._client.get(PERSISTENTVOLUMES, str(meta(volume).get("name")))
        except NotFoundError:
            return None
        ref = _spec(cur).get("claimRef")
        if not isinstance(ref, dict) or not ref.get("uid"):
            return None
        claim = self._claim(f"{ref.get('namespace')}/{ref.get('name')}")
        if claim is not None and meta(claim).get("uid") == ref.get("uid"):
            claimed = _spec(claim).get("volumeName")
            if not claimed or claimed == meta(cur).get("name"):
                return None
        return cur

    async def _delete(self, volume: JsonDict) -> None:
        """deleteVolumeOperation: volumes of external provisioners are theirs to delete; an
        in-tree deleter exists only for hostPath volumes under /tmp."""
        if meta(volume).get("deletionTimestamp"):
            return
        provisioner = pvh.annotations_of(volume).get(pvh.ANN_DYNAMICALLY_PROVISIONED)
        if provisioner and not provisioner.startswith("kubernetes.io/"):
            return  # external deleter requested
        if isinstance(_spec(volume).get("csi"), dict):
            return  # a CSI volume's external provisioner deletes it (HonorPVReclaimPolicy)
        current = await self._still_released(volume)
        if current is None:
            return
        name = str(meta(volume).get("name"))
        host_path = _spec(current).get("hostPath")
        if isinstance(host_path, dict):
            path = str(host_path.get("path") or "")
            if not _HOSTPATH_DELETABLE.fullmatch(path):
                await self._volume_phase_with_event(
                    current, "Failed", "Warning", "VolumeFailedDelete",
                    f"host_path deleter only supports /tmp/.+ but received provided {path}")
                return
            logger.info("volume deleted volume=%s", name)
            try:
                await self._client.delete(PERSISTENTVOLUMES, name)
            except NotFoundError:
                pass
            return
        await self._volume_phase_with_event(
            current, "Failed", "Warning", "VolumeFailedDelete",
            f'error getting deleter volume plugin for volume "{name}": no deletable volume plugin matched')

    async def _recycle(self, volume: JsonDict) -> None:
        """recycleVolumeOperation (Recycle is deprecated): hostPath and NFS volumes are scrubbed by
        a recycler pod and become Available; other volumes have no recycler."""
        current = await self._still_released(volume)
        if current is None:
            return
        spec = _spec(current)
        if not isinstance(spec.get("hostPath"), dict) and not isinstance(spec.get("nfs"), dict):
            await self._volume_phase_with_event(current, "Failed", "Warning", "VolumeFailedRecycle",
                                                "No recycler plugin found for the volume!")
            return
        ref = spec.get("claimRef") or {}
        ckey = f"{ref.get('namespace')}/{ref.get('name')}"
        users = sorted(f"{meta(p).get('namespace')}/{meta(p).get('name')}"
                       for p in self._pods.by_index(POD_PVC_INDEX, ckey) if not is_pod_terminal(p))
        if users and self._claim(ckey) is None:
            self._event(current, "PersistentVolume", "Normal", "VolumeFailedRecycle",
                        f"Volume is used by pods: {','.join(users)}")
            return
        self.recorder.event(_with_kind(current, "PersistentVolume"), "Normal", "VolumeRecycled", "Volume recycled")
        await self._unbind_volume(current)

    # ------------------------------------------------------------------ run
    async def _resync(self) -> None:
        while True:
            await self._clock.sleep(self._sync_period)
            for c in self._claims.store.list():
                self.claim_queue.add(pvh.claim_key(c))
            for v in self._volumes.store.list():
                self.volume_queue.add(str(meta(v).get("name")))

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            for inf in (self._claims, self._volumes, self._classes, self._pods):
                await inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(self._resync(), name=f"{self.NAME}-resync")
            # one worker per queue: syncClaim is not reentrant (two syncs could bind one volume twice)
            tg.create_task(run_workers(self.volume_queue, self.sync_volume, workers=1, name="volume-worker"))
            tg.create_task(run_workers(self.claim_queue, self.sync_claim, workers=1, name="claim-worker"))
