"""ephemeral-volume controller (layer L4), after kube-controller-manager's
pkg/controller/volume/ephemeral/controller.go (v1.33).

A pod's generic ephemeral volume (`spec.volumes[].ephemeral.volumeClaimTemplate`) is backed by a
claim named `<pod>-<volume>` (minik3s.api.helpers.storage_volume.ephemeral_claim_name) in the
pod's namespace. For every pod not being deleted this controller creates the missing claims: the
template's labels and annotations, its spec as is, and the pod as controlling owner (apiVersion
v1, kind Pod, controller and blockOwnerDeletion true), so the garbage collector deletes the claim
with the pod. Nothing is changed on a claim once it exists.

A claim of that name that the pod does not control (VolumeIsForPod: same namespace, an owner
reference with controller true and the pod's uid) is left alone: the pod gets a Warning
`FailedBinding` Event "ephemeral volume <volume>: PVC <ns>/<claim> was not created for pod
<ns>/<pod> (pod is not owner)" and is retried with backoff, as upstream returns the error to its
work queue. A failed create reports "ephemeral volume <volume>: create PVC <claim>: <error>" the
same way; the recorder's correlator counts the repeats on one Event, as upstream's. Where upstream treats AlreadyExists (the claim informer lagging behind) as a failure,
here the live claim is read and judged as above, so only a foreign claim is reported.

As upstream: pod updates are ignored (volumes are immutable), pod deletions too (the claims go
through their owner reference), and a deleted claim is recreated for the pods that still use it.

Data flow: pod + claim informers -> work queue of pod keys -> sync -> claim creates through the
Client; Events through minik3s.client.record.
"""

from __future__ import annotations

import asyncio
import copy
import logging

from minik3s.api.errors import AlreadyExistsError, ApiError, NotFoundError
from minik3s.api.helpers.storage_volume import ephemeral_claim_error, ephemeral_claim_name
from minik3s.api.resources import PERSISTENTVOLUMECLAIMS, PODS
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import is_deleting, make_controller_ref, meta, run_workers
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

EPHEMERAL_CLAIM_INDEX = "ephemeral-claim"
FAILED_BINDING = "FailedBinding"  # upstream pkg/controller/volume/events


class EphemeralVolumeError(ApiError):
    """A claim could not be provided for an ephemeral volume: the pod is retried with backoff."""


def _ephemeral_volumes(pod: JsonDict) -> list[JsonDict]:
    spec = pod.get("spec") or {}
    return [v for v in spec.get("volumes") or () if isinstance(v, dict) and isinstance(v.get("ephemeral"), dict)]


def _claim_index(pod: JsonDict) -> list[str]:
    ns = meta(pod).get("namespace")
    return [f"{ns}/{ephemeral_claim_name(pod, v)}" for v in _ephemeral_volumes(pod)]


def _pod_key(pod: JsonDict) -> str:
    return f"{meta(pod).get('namespace')}/{meta(pod).get('name')}"


def claim_for(pod: JsonDict, volume: JsonDict) -> JsonDict:
    """The claim upstream creates for one ephemeral volume of `pod`."""
    template = (volume.get("ephemeral") or {}).get("volumeClaimTemplate") or {}
    tmeta = template.get("metadata") or {}
    md: JsonDict = {"name": ephemeral_claim_name(pod, volume), "namespace": meta(pod).get("namespace"),
                    "ownerReferences": [make_controller_ref(pod, api_version="v1", kind="Pod")]}
    if tmeta.get("labels"):
        md["labels"] = dict(tmeta["labels"])
    if tmeta.get("annotations"):
        md["annotations"] = dict(tmeta["annotations"])
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md,
            "spec": copy.deepcopy(template.get("spec") or {})}


class EphemeralVolumeController:
    NAME = "ephemeral_volume"  # the Events' source component, as upstream

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None) -> None:
        self._client = client
        self._pods = informers.informer(PODS)
        self._claims = informers.informer(PERSISTENTVOLUMECLAIMS)
        self._pods.add_index(EPHEMERAL_CLAIM_INDEX, _claim_index)
        self.queue = WorkQueue()
        self.recorder = EventRecorder(client, self.NAME, clock=clock)
        self._pods.add_handler(on_add=self._enqueue_pod)
        self._claims.add_handler(on_delete=self._claim_gone)

    # ------------------------------------------------------------------ handlers
    def _enqueue_pod(self, pod: JsonDict) -> None:
        if not is_deleting(pod) and _ephemeral_volumes(pod):
            self.queue.add(_pod_key(pod))

    def _claim_gone(self, claim: JsonDict) -> None:
        # deleted by someone while a pod still needs it: create it again
        key = f"{meta(claim).get('namespace')}/{meta(claim).get('name')}"
        for pod in self._pods.by_index(EPHEMERAL_CLAIM_INDEX, key):
            self._enqueue_pod(pod)

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        pod = self._pods.store.get(key)
        if pod is None or is_deleting(pod):
            return
        for volume in _ephemeral_volumes(pod):
            error = await self._handle_volume(pod, volume)
            if error:
                message = f"ephemeral volume {volume.get('name')}: {error}"
                self._event(pod, message)
                raise EphemeralVolumeError(f"pod {key}, {message}")

    async def _handle_volume(self, pod: JsonDict, volume: JsonDict) -> str:
        """"" once the volume's claim exists for the pod, else what is wrong."""
        ns = str(meta(pod).get("namespace"))
        name = ephemeral_claim_name(pod, volume)
        existing = self._claims.store.get(f"{ns}/{name}")
        if existing is not None:
            return ephemeral_claim_error(pod, existing)
        try:
            await self._client.create(PERSISTENTVOLUMECLAIMS, claim_for(pod, volume), ns, read_only=True,
                                      handover=True)
        except AlreadyExistsError:
            # our informer has not seen it yet: judge the live claim
            try:
                live = await self._client.get(PERSISTENTVOLUMECLAIMS, name, ns)
            except NotFoundError:  # deleted meanwhile: retried, nothing to report
                raise EphemeralVolumeError(f"claim {ns}/{name} was deleted while being created") from None
            return ephemeral_claim_error(pod, live)
        except ApiError as e:
            return f"create PVC {name}: {e.message}"
        logger.debug("%s: created claim %s/%s for pod %s", self.NAME, ns, name, meta(pod).get("name"))
        return ""

    def _event(self, pod: JsonDict, message: str) -> None:
        obj = pod if pod.get("kind") else {**pod, "kind": "Pod", "apiVersion": "v1"}
        self.recorder.event(obj, "Warning", FAILED_BINDING, message)

    async def run(self, workers: int = 5) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            await self._pods.wait_for_sync()
            await self._claims.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(run_workers(self.queue, self.sync, workers=workers, name="ephemeral-volume-controller"))
