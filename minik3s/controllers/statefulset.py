"""StatefulSet controller (layer L4), after kube-controller-manager's `pkg/controller/statefulset`.

Keeps pods `<set>-0 .. <set>-(N-1)` with stable identity: labels
`statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index` and
`controller-revision-hash` (the ControllerRevision name), `hostname`/`subdomain` from the
name and `serviceName`, one PVC `<claim>-<pod>` per `volumeClaimTemplates` entry.
OrderedReady creates ordinals in order, each after the previous is Running and Ready, and
removes surplus ordinals from the highest, one at a time; Parallel creates and deletes at
once. RollingUpdate replaces pods at ordinals >= `partition` from the highest down, one at a
time, waiting for each to be Ready; OnDelete only recreates pods the user deleted, at the
update revision. `persistentVolumeClaimRetentionPolicy` Delete makes the claims owned by
the set (whenDeleted) or by the condemned pod (whenScaled) so the garbage collector removes
them. Status: replicas, readyReplicas, currentReplicas, updatedReplicas, availableReplicas,
currentRevision, updateRevision, observedGeneration, collisionCount.

Data flow: StatefulSet, Pod and ControllerRevision informers -> handlers enqueue `ns/name`
-> `sync(key)` -> pod/PVC/ControllerRevision writes and `statefulsets/status` through the
Client.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
from typing import Any

from minik3s.api.errors import AlreadyExistsError, ApiError, ConflictError, NotFoundError
from minik3s.api.helpers.pods import is_pod_ready
from minik3s.api.resources import CONTROLLERREVISIONS, PERSISTENTVOLUMECLAIMS, PODS, STATEFULSETS
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory, object_key
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import (
    controller_ref,
    get_int,
    is_deleting,
    is_pod_available,
    make_controller_ref,
    meta,
    run_workers,
)
from minik3s.controllers.history import (
    CONTROLLER_REVISION_HASH,
    ensure_revision,
    owned_revisions,
    trim_history,
)
from minik3s.controllers.replicaset import NAMESPACE_INDEX, namespace_index, pod_from_template
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def ordinal_of(sts: JsonDict, pod: JsonDict) -> int | None:
    """The ordinal in `<set>-<n>`, None when the name does not have that shape."""
    m = re.fullmatch(re.escape(str(meta(sts).get("name"))) + r"-(0|[1-9][0-9]*)", str(meta(pod).get("name") or ""))
    return int(m.group(1)) if m else None


def start_ordinal(sts: JsonDict) -> int:
    return get_int(((sts.get("spec") or {}).get("ordinals") or {}), "start")


def claim_name(claim: JsonDict, pod_name: str) -> str:
    return f"{meta(claim).get('name')}-{pod_name}"


def is_running_and_ready(pod: JsonDict) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_pod_ready(pod)


def is_failed(pod: JsonDict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded")


def pod_revision(pod: JsonDict) -> str:
    return str((meta(pod).get("labels") or {}).get(CONTROLLER_REVISION_HASH) or "")


def new_pod(sts: JsonDict, revision: JsonDict, ordinal: int) -> JsonDict:
    """newVersionedStatefulSetPod: the revision's template (controller.GetPodFromTemplate) with
    the identity of `ordinal`."""
    m = meta(sts)
    spec = sts.get("spec") or {}
    template = ((revision.get("data") or {}).get("spec") or {}).get("template") or {}
    name = f"{m.get('name')}-{ordinal}"
    pod = pod_from_template(sts, api_version="apps/v1", kind="StatefulSet", template=template)
    base = pod["metadata"]
    base.pop("generateName", None)
    pod["metadata"] = pmeta = {"name": name, **base}
    pmeta["labels"].update({POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal),
                            CONTROLLER_REVISION_HASH: str(meta(revision).get("name"))})
    pod_spec = pod["spec"]
    pod_spec["hostname"] = name
    if spec.get("serviceName"):
        pod_spec["subdomain"] = spec["serviceName"]
    claims = spec.get("volumeClaimTemplates") or []
    if claims:
        vols = [v for v in pod_spec.get("volumes") or []
                if v.get("name") not in {meta(c).get("name") for c in claims}]
        for c in claims:
            vols.append({"name": meta(c).get("name"),
                         "persistentVolumeClaim": {"claimName": claim_name(c, name)}})
        pod_spec["volumes"] = vols
    return pod


class StatefulSetController:
    NAME = "statefulset-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._sts_inf = informers.informer(STATEFULSETS)
        self._pod_inf = informers.informer(PODS)
        self._rev_inf = informers.informer(CONTROLLERREVISIONS)
        for inf in (self._sts_inf, self._pod_inf, self._rev_inf):
            inf.add_index(NAMESPACE_INDEX, namespace_index)
        self.queue = WorkQueue()
        self.recorder = EventRecorder(client, self.NAME, clock=self._clock)
        self._sts_inf.add_handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n),
                                  on_delete=self._enqueue)
        self._pod_inf.add_handler(on_add=self._pod_event, on_update=lambda _o, n: self._pod_event(n),
                                  on_delete=self._pod_event)

    def _enqueue(self, sts: JsonDict) -> None:
        self.queue.add(object_key(sts))

    def _pod_event(self, pod: JsonDict) -> None:
        ref = controller_ref(pod)
        if ref and ref.get("kind") == "StatefulSet":
            self.queue.add(f"{meta(pod).get('namespace')}/{ref.get('name')}")

    async def run(self, workers: int = 5) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            for inf in (self._sts_inf, self._pod_inf, self._rev_inf):
                await inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(run_workers(self.queue, self.sync, workers=workers, name=self.NAME),
                           name=f"{self.NAME}-workers")

    # ---- sync

    async def sync(self, key: str) -> None:
        sts = self._sts_inf.store.get(key)
        if sts is None or is_deleting(sts):
            return
        ns = str(meta(sts).get("namespace") or "")
        uid = meta(sts).get("uid")
        pods = [p for p in self._pod_inf.by_index(NAMESPACE_INDEX, ns)
                if (controller_ref(p) or {}).get("uid") == uid]
        revisions = owned_revisions(self._rev_inf.by_index(NAMESPACE_INDEX, ns), sts)
        selector_labels = dict(((sts.get("spec") or {}).get("selector") or {}).get("matchLabels") or {})
        update_rev, collisions = await ensure_revision(self._client, sts, revisions, kind="StatefulSet",
                                                       selector_labels=selector_labels)
        if meta(update_rev).get("name") not in {meta(r).get("name") for r in revisions}:
            revisions.append(update_rev)
        by_name = {str(meta(r).get("name")): r for r in revisions}
        by_name[str(meta(update_rev).get("name"))] = update_rev
        cur_name = str((sts.get("status") or {}).get("currentRevision") or "")
        current_rev = by_name.get(cur_name, update_rev)
        try:
            await self._update_replicas(sts, pods, current_rev, update_rev)
        finally:
            pods = [p for p in self._pod_inf.by_index(NAMESPACE_INDEX, ns)
                    if (controller_ref(p) or {}).get("uid") == uid]
            await self._update_status(sts, pods, current_rev, update_rev, collisions)
            live = {pod_revision(p) for p in pods} | {meta(current_rev).get("name"), meta(update_rev).get("name")}
            keep = get_int(sts.get("spec"), "revisionHistoryLimit", 10)
            await trim_history(self._client, owned_revisions(self._rev_inf.by_index(NAMESPACE_INDEX, ns), sts),
                               keep=keep, live={str(x) for x in live})

    async def _update_replicas(self, sts: JsonDict, pods: list[JsonDict], current_rev: JsonDict,
                               update_rev: JsonDict) -> None:
        spec = sts.get("spec") or {}
        replicas = get_int(spec, "replicas", 1)
        start = start_ordinal(sts)
        monotonic = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        strategy = spec.get("updateStrategy") or {}
        rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        partition = get_int(strategy.get("rollingUpdate"), "partition")
        upd_name = str(meta(update_rev).get("name"))
        status_current = get_int(sts.get("status"), "currentReplicas")

        wanted: dict[int, JsonDict | None] = {o: None for o in range(start, start + replicas)}
        condemned: list[JsonDict] = []
        for p in pods:
            o = ordinal_of(sts, p)
            if o is None:
                continue
            if o in wanted:
                wanted[o] = p
            else:
                condemned.append(p)
        condemned.sort(key=lambda p: -(ordinal_of(sts, p) or 0))

        def revision_for(ordinal: int) -> JsonDict:
            # upstream: RollingUpdate pods below the partition stay at the current revision
            if rolling and ordinal < start + (partition if strategy.get("rollingUpdate") is not None
                                              else status_current):
                return current_rev
            return update_rev

        # first unhealthy pod blocks an OrderedReady set
        for o in sorted(wanted):
            pod = wanted[o]
            if pod is not None and is_failed(pod) and not is_deleting(pod):
                await self._delete_pod(sts, pod, "failed")
                if monotonic:
                    return
                continue
            if pod is None:
                await self._create_pod(sts, revision_for(o), o)
                if monotonic:
                    return
                continue
            if monotonic and (is_deleting(pod) or not is_running_and_ready(pod)):
                return
            await self._ensure_claims(sts, pod, o, condemned=False)

        # surplus ordinals: highest first; OrderedReady needs every pod healthy and goes one at a time
        for pod in condemned:
            if is_deleting(pod):
                if monotonic:
                    return
                continue
            if monotonic and any(p is None or not is_running_and_ready(p) for p in wanted.values()):
                return
            o = ordinal_of(sts, pod) or 0
            await self._ensure_claims(sts, pod, o, condemned=True)
            await self._delete_pod(sts, pod, "scale down")
            if monotonic:
                return

        if not rolling:
            return
        # rolling update: highest ordinal at or above the partition first, one at a time
        for o in sorted(wanted, reverse=True):
            if o < start + partition:
                break
            pod = wanted[o]
            if pod is None:
                return
            if pod_revision(pod) != upd_name:
                if not is_deleting(pod):
                    await self._delete_pod(sts, pod, "update")
                return
            if not is_running_and_ready(pod):
                return

    async def _ensure_claims(self, sts: JsonDict, pod: JsonDict, ordinal: int, *, condemned: bool) -> None:
        """Create missing claims; under a Delete retention policy give them the owner that
        lets the garbage collector remove them."""
        spec = sts.get("spec") or {}
        policy = spec.get("persistentVolumeClaimRetentionPolicy") or {}
        ns = meta(sts).get("namespace")
        pod_name = str(meta(pod).get("name"))
        for c in spec.get("volumeClaimTemplates") or []:
            name = claim_name(c, pod_name)
            owners: list[JsonDict] = []
            if policy.get("whenDeleted") == "Delete":
                ref = make_controller_ref(sts, api_version="apps/v1", kind="StatefulSet")
                ref["controller"] = False
                owners.append(ref)
            if condemned and policy.get("whenScaled") == "Delete" and meta(pod).get("uid"):
                ref = make_controller_ref(pod, api_version="v1", kind="Pod")
                ref["controller"] = False
                owners.append(ref)
            try:
                cur = await self._client.get(PERSISTENTVOLUMECLAIMS, name, ns)
            except NotFoundError:
                cur = None
            if cur is None:
                labels = dict(meta(c).get("labels") or {})
                labels.update((spec.get("selector") or {}).get("matchLabels") or {})
                body: JsonDict = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                  "metadata": {"name": name, "namespace": ns, "labels": labels},
                                  "spec": copy.deepcopy(c.get("spec") or {})}
                if meta(c).get("annotations"):
                    body["metadata"]["annotations"] = dict(meta(c)["annotations"])
                if owners:
                    body["metadata"]["ownerReferences"] = owners
                try:
                    await self._client.create(PERSISTENTVOLUMECLAIMS, body, ns, read_only=True)
                    self.recorder.event(sts, "Normal", "SuccessfulCreate",
                                        f"create Claim {name} Pod {pod_name} in StatefulSet "
                                        f"{meta(sts).get('name')} success")
                except AlreadyExistsError:
                    pass
                continue
            have = {r.get("uid") for r in meta(cur).get("ownerReferences") or []}
            missing = [o for o in owners if o.get("uid") not in have]
            if missing:
                refs = list(meta(cur).get("ownerReferences") or []) + missing
                try:
                    await self._client.patch(PERSISTENTVOLUMECLAIMS, name, {"metadata": {"ownerReferences": refs}}, ns, read_only=True)
                except (NotFoundError, ConflictError):
                    pass

    async def _create_pod(self, sts: JsonDict, revision: JsonDict, ordinal: int) -> None:
        body = new_pod(sts, revision, ordinal)
        await self._ensure_claims(sts, body, ordinal, condemned=False)
        name = body["metadata"]["name"]
        try:
            await self._client.create(PODS, body, meta(sts).get("namespace"), read_only=True)
        except AlreadyExistsError:
            return
        except ApiError as e:
            self.recorder.event(sts, "Warning", "FailedCreate",
                                f"create Pod {name} in StatefulSet {meta(sts).get('name')} failed error: {e.message}")
            raise
        self.recorder.event(sts, "Normal", "SuccessfulCreate",
                            f"create Pod {name} in StatefulSet {meta(sts).get('name')} successful")

    async def _delete_pod(self, sts: JsonDict, pod: JsonDict, why: str) -> None:
        name = meta(pod).get("name")
        logger.debug("%s: deleting pod=%s/%s reason=%s", self.NAME, meta(pod).get("namespace"), name, why)
        try:
            await self._client.delete(PODS, str(name), meta(pod).get("namespace"))
        except NotFoundError:
            return
        self.recorder.event(sts, "Normal", "SuccessfulDelete",
                            f"delete Pod {name} in StatefulSet {meta(sts).get('name')} successful")

    async def _update_status(self, sts: JsonDict, pods: list[JsonDict], current_rev: JsonDict,
                             update_rev: JsonDict, collisions: int) -> None:
        spec = sts.get("spec") or {}
        cur_name, upd_name = str(meta(current_rev).get("name")), str(meta(update_rev).get("name"))
        min_ready = get_int(spec, "minReadySeconds")
        now = self._clock.now()
        st: dict[str, Any] = {"observedGeneration": get_int(meta(sts), "generation"), "replicas": 0,
                              "readyReplicas": 0, "currentReplicas": 0, "updatedReplicas": 0,
                              "availableReplicas": 0, "collisionCount": collisions}
        for p in pods:
            if ordinal_of(sts, p) is None:
                continue
            st["replicas"] += 1
            if is_running_and_ready(p):
                st["readyReplicas"] += 1
                if is_pod_available(p, min_ready, now):
                    st["availableReplicas"] += 1
            if not is_deleting(p):
                if pod_revision(p) == cur_name:
                    st["currentReplicas"] += 1
                if pod_revision(p) == upd_name:
                    st["updatedReplicas"] += 1
        st["currentRevision"], st["updateRevision"] = cur_name, upd_name
        rolling = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
        if rolling and st["updatedReplicas"] == st["replicas"] and st["readyReplicas"] == st["replicas"]:
            # completeRollingUpdate
            st["currentRevision"], st["currentReplicas"] = upd_name, st["updatedReplicas"]
        old = dict(sts.get("status") or {})
        merged = {**old, **st}
        if merged == old:
            return
        body = copy.copy(sts)
        body["status"] = merged
        try:
            await self._client.update_status(STATEFULSETS, body, read_only=True)
        except NotFoundError:
            return
        except ConflictError:
            self.queue.add_rate_limited(object_key(sts))
