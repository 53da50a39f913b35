"""StatefulSet controller (layer L4), after kube-controller-manager's `pkg/controller/statefulset`.

Keeps pods `<set>-<start> .. <set>-<start+N-1>` with stable identity: labels
`statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index` and
`controller-revision-hash` (the ControllerRevision name), `hostname`/`subdomain` from the
name and `serviceName`, one PVC `<claim>-<pod>` per `volumeClaimTemplates` entry (created
before the pod, and again for a Pending pod that lost it).

One sync is upstream's UpdateStatefulSet: claim the pods (adopt matching orphans named
`<set>-<n>`, release owned pods that stopped matching), find the current and update
ControllerRevisions, then process the replicas in ordinal order. A Failed or Succeeded replica
is deleted (recreated on a later sync), a missing one is created at the current revision below
the partition and at the update revision above it. OrderedReady stops at the first replica
that is not Running, Ready and Available (minReadySeconds) and scales down one pod at a time
from the highest ordinal once every replica is healthy; Parallel does all of it at once (in
slow-start batches). RollingUpdate then deletes the highest-ordinal pod at or above the
partition that is not at the update revision, waiting for each to be healthy; OnDelete only
recreates pods the user deleted. A pod whose identity labels drifted is repaired.

`persistentVolumeClaimRetentionPolicy` makes the set (whenDeleted: Delete) or the condemned pod
(whenScaled: Delete) the *controller* of each claim so the garbage collector removes it; with
both Delete a condemned pod's claims move from the set to the pod. Claims controlled by someone
else are left alone (a warning event), stale references (same name, other uid) keep a claim
untouched and block recreating its pod.

Status is computed from the sync's own view (created pods not yet counted, a pod just deleted
for an update no longer current): replicas, readyReplicas, currentReplicas, updatedReplicas,
availableReplicas, currentRevision, updateRevision (equal once a rolling update completed),
observedGeneration, collisionCount; it is written only when a counted field changed.

Data flow: StatefulSet, Pod and ControllerRevision informers -> handlers enqueue `ns/name`
-> `sync(key)` -> pod/PVC/ControllerRevision writes and `statefulsets/status` through the
Client.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
from collections.abc import Awaitable, Callable
from datetime import datetime

from minik3s.api.errors import AlreadyExistsError, ApiError, ConflictError, NotFoundError
from minik3s.api.helpers.pods import is_pod_ready
from minik3s.api.resources import CONTROLLERREVISIONS, PERSISTENTVOLUMECLAIMS, PODS, STATEFULSETS
from minik3s.api.selectors import label_selector_from_dict
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
    claim_objects,
    ensure_revision,
    owned_revisions,
    trim_history,
)
from minik3s.controllers.replicaset import (
    NAMESPACE_INDEX,
    namespace_index,
    pod_from_template,
    slow_start_batches,
)
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
RETAIN = "Retain"
DELETE = "Delete"
SET_API_VERSION, SET_KIND = "apps/v1", "StatefulSet"
POD_API_VERSION, POD_KIND = "v1", "Pod"

_STATEFUL_POD = re.compile(r"(.*)-([0-9]+)$")


# --------------------------------------------------------------------------- identity


def parent_name_and_ordinal(pod: JsonDict) -> tuple[str, int]:
    """getParentNameAndOrdinal: `<parent>-<n>` -> (parent, n); ("", -1) for other names.

    Example: "web-2" -> ("web", 2); "1-bar" -> ("", -1)."""
    m = _STATEFUL_POD.fullmatch(str(meta(pod).get("name") or ""))
    if m is None:
        return "", -1
    n = int(m.group(2))
    return m.group(1), (n if n < 2**31 else -1)


def get_ordinal(pod: JsonDict) -> int:
    return parent_name_and_ordinal(pod)[1]


def ordinal_of(sts: JsonDict, pod: JsonDict) -> int | None:
    """The ordinal of a member of `sts`, None for a pod that is not one."""
    parent, ordinal = parent_name_and_ordinal(pod)
    return ordinal if ordinal >= 0 and parent == meta(sts).get("name") else None


def is_member_of(sts: JsonDict, pod: JsonDict) -> bool:
    return parent_name_and_ordinal(pod)[0] == meta(sts).get("name")


def start_ordinal(sts: JsonDict) -> int:
    return get_int(((sts.get("spec") or {}).get("ordinals") or {}), "start")


def end_ordinal(sts: JsonDict) -> int:
    return start_ordinal(sts) + get_int(sts.get("spec"), "replicas", 1) - 1


def pod_in_ordinal_range(pod: JsonDict, sts: JsonDict) -> bool:
    o = get_ordinal(pod)
    return start_ordinal(sts) <= o <= end_ordinal(sts)


def pod_name(sts: JsonDict, ordinal: int) -> str:
    return f"{meta(sts).get('name')}-{ordinal}"


def claim_name(claim: JsonDict, pod_name: str) -> str:
    """getPersistentVolumeClaimName: `<template>-<set>-<ordinal>` (= `<template>-<pod>`)."""
    return f"{meta(claim).get('name')}-{pod_name}"


def identity_matches(sts: JsonDict, pod: JsonDict) -> bool:
    """identityMatches: a member's name, namespace and pod-name label agree with the set."""
    parent, ordinal = parent_name_and_ordinal(pod)
    m = meta(pod)
    return (ordinal >= 0 and parent == meta(sts).get("name") and m.get("name") == pod_name(sts, ordinal)
            and m.get("namespace") == meta(sts).get("namespace")
            and (m.get("labels") or {}).get(POD_NAME_LABEL) == m.get("name"))


def update_identity(sts: JsonDict, pod: JsonDict) -> None:
    """updateIdentity: name, namespace and the pod-name / pod-index labels from the ordinal."""
    ordinal = get_ordinal(pod)
    m = pod.setdefault("metadata", {})
    m["name"] = pod_name(sts, ordinal)
    m["namespace"] = meta(sts).get("namespace")
    labels = m.get("labels")
    if not isinstance(labels, dict):
        labels = m["labels"] = {}
    labels[POD_NAME_LABEL] = m["name"]
    labels[POD_INDEX_LABEL] = str(ordinal)


def persistent_volume_claims(sts: JsonDict, pod: JsonDict) -> dict[str, JsonDict]:
    """getPersistentVolumeClaims: template name -> the pod's claim (the template with the
    per-pod name, the set's namespace and the selector's matchLabels over its own labels)."""
    spec = sts.get("spec") or {}
    selector_labels = (spec.get("selector") or {}).get("matchLabels")
    out: dict[str, JsonDict] = {}
    for t in spec.get("volumeClaimTemplates") or []:
        claim = copy.deepcopy(t)
        cm = claim.setdefault("metadata", {})
        cm["name"] = f"{meta(t).get('name')}-{meta(sts).get('name')}-{get_ordinal(pod)}"
        cm["namespace"] = meta(sts).get("namespace")
        if cm.get("labels") is not None:
            cm["labels"] = {**cm["labels"], **(selector_labels or {})}
        elif selector_labels is not None:
            cm["labels"] = dict(selector_labels)
        out[str(meta(t).get("name"))] = claim
    return out


def storage_matches(sts: JsonDict, pod: JsonDict) -> bool:
    """storageMatches: every claim template has a volume of its name using the pod's claim."""
    ordinal = get_ordinal(pod)
    if ordinal < 0:
        return False
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    for t in (sts.get("spec") or {}).get("volumeClaimTemplates") or []:
        v = volumes.get(meta(t).get("name"))
        pvc = (v or {}).get("persistentVolumeClaim")
        if not pvc or pvc.get("claimName") != f"{meta(t).get('name')}-{meta(sts).get('name')}-{ordinal}":
            return False
    return True


def update_storage(sts: JsonDict, pod: JsonDict) -> None:
    """updateStorage: one volume per claim template (replacing any of the same name) using the
    pod's claim; the pod's other volumes are kept."""
    claims = persistent_volume_claims(sts, pod)
    spec = pod.setdefault("spec", {})
    vols: list[JsonDict] = [{"name": name, "persistentVolumeClaim": {"claimName": meta(c)["name"]}}
                            for name, c in claims.items()]
    vols.extend(v for v in spec.get("volumes") or [] if v.get("name") not in claims)
    spec["volumes"] = vols


# --------------------------------------------------------------------------- pod state


def pod_phase(pod: JsonDict) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def is_created(pod: JsonDict) -> bool:
    """The API holds the pod (every stored pod has a phase; one built by this sync has none)."""
    return pod_phase(pod) != ""


def is_running_and_ready(pod: JsonDict) -> bool:
    return pod_phase(pod) == "Running" and is_pod_ready(pod)


def is_running_and_available(pod: JsonDict, min_ready_seconds: int, now: datetime) -> bool:
    """isRunningAndAvailable: podutil.IsPodAvailable (Ready for longer than minReadySeconds)."""
    return is_pod_available(pod, min_ready_seconds, now)


def is_failed(pod: JsonDict) -> bool:
    """Failed or Succeeded: a terminal replica is replaced (upstream isFailed || isSucceeded)."""
    return pod_phase(pod) in ("Failed", "Succeeded")


def is_healthy(pod: JsonDict) -> bool:
    return is_running_and_ready(pod) and not is_deleting(pod)


def pod_revision(pod: JsonDict) -> str:
    return str((meta(pod).get("labels") or {}).get(CONTROLLER_REVISION_HASH) or "")


# --------------------------------------------------------------------------- claim ownership


def retention_policy(sts: JsonDict) -> JsonDict:
    """getPersistentVolumeClaimRetentionPolicy: the set's policy, Retain/Retain when unset."""
    p = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy")
    if not isinstance(p, dict):
        return {"whenDeleted": RETAIN, "whenScaled": RETAIN}
    return {"whenDeleted": p.get("whenDeleted", RETAIN), "whenScaled": p.get("whenScaled", RETAIN)}


def matches_ref(ref: JsonDict, obj: JsonDict, api_version: str, kind: str) -> bool:
    """matchesRef: same apiVersion, kind and name (the uid is not compared)."""
    return bool(ref.get("apiVersion") == api_version and ref.get("kind") == kind
                and ref.get("name") == meta(obj).get("name"))


def has_owner_ref(target: JsonDict, owner: JsonDict) -> bool:
    """hasOwnerRef: some ownerReference carries the owner's uid (controller or not)."""
    uid = meta(owner).get("uid")
    return any(r.get("uid") == uid for r in meta(target).get("ownerReferences") or [])


def has_stale_owner_ref(target: JsonDict, obj: JsonDict, api_version: str, kind: str) -> bool:
    """hasStaleOwnerRef: the first reference naming `obj` carries another uid."""
    for r in meta(target).get("ownerReferences") or []:
        if matches_ref(r, obj, api_version, kind):
            return bool(r.get("uid") != meta(obj).get("uid"))
    return False


def has_unexpected_controller(claim: JsonDict, sts: JsonDict, pod: JsonDict) -> bool:
    """hasUnexpectedController: under a non-Retain policy, a controller that is neither the set
    nor the pod, or a reference to them with a stale uid."""
    policy = retention_policy(sts)
    if policy["whenScaled"] == RETAIN and policy["whenDeleted"] == RETAIN:
        return False
    for r in meta(claim).get("ownerReferences") or []:
        if matches_ref(r, sts, SET_API_VERSION, SET_KIND):
            if r.get("uid") != meta(sts).get("uid"):
                return True
            continue
        if matches_ref(r, pod, POD_API_VERSION, POD_KIND):
            if r.get("uid") != meta(pod).get("uid"):
                return True
            continue
        if r.get("controller"):
            return True
    return False


def has_non_controller_owner(claim: JsonDict, sts: JsonDict, pod: JsonDict) -> bool:
    """hasNonControllerOwner: the set or the pod (by uid) owns the claim without controlling it."""
    uids = (meta(sts).get("uid"), meta(pod).get("uid"))
    return any(r.get("uid") in uids and not r.get("controller") for r in meta(claim).get("ownerReferences") or [])


def is_claim_owner_up_to_date(claim: JsonDict, sts: JsonDict, pod: JsonDict) -> bool:
    """isClaimOwnerUpToDate: whether the claim's owners agree with the retention policy.

    Retain/Retain: neither set nor pod; whenDeleted Delete only: the set; whenScaled Delete
    only: the pod once condemned (outside the ordinal range); both Delete: the set while the
    pod is in range, the pod alone once condemned. Stale references and claims another
    controller manages count as up to date (they are not touched)."""
    if has_stale_owner_ref(claim, sts, SET_API_VERSION, SET_KIND) or has_stale_owner_ref(claim, pod, POD_API_VERSION,
                                                                                         POD_KIND):
        return True
    if has_unexpected_controller(claim, sts, pod):
        return not (has_owner_ref(claim, sts) or has_owner_ref(claim, pod))
    if has_non_controller_owner(claim, sts, pod):
        return False
    policy = retention_policy(sts)
    scaled, deleted = policy["whenScaled"], policy["whenDeleted"]
    set_ref, pod_ref = has_owner_ref(claim, sts), has_owner_ref(claim, pod)
    if scaled == RETAIN and deleted == DELETE:
        return set_ref and not pod_ref
    if scaled == DELETE and deleted == RETAIN:
        return not set_ref and (not pod_in_ordinal_range(pod, sts)) == pod_ref
    if scaled == DELETE and deleted == DELETE:
        condemned = not pod_in_ordinal_range(pod, sts)
        return condemned != set_ref and condemned == pod_ref
    return not set_ref and not pod_ref  # Retain/Retain (and unknown values, treated as Retain)


def _add_controller_ref(refs: list[JsonDict], owner: JsonDict, api_version: str, kind: str) -> list[JsonDict]:
    if any(r.get("uid") == meta(owner).get("uid") for r in refs):
        return refs
    return [*refs, make_controller_ref(owner, api_version=api_version, kind=kind)]


def update_claim_owner_refs(claim: JsonDict, sts: JsonDict, pod: JsonDict) -> None:
    """updateClaimOwnerRefForSetAndPod: drop every reference naming the set or the pod, then
    (unless another controller manages the claim) add the controller reference the policy wants."""
    unexpected = has_unexpected_controller(claim, sts, pod)
    refs = [r for r in meta(claim).get("ownerReferences") or []
            if not (matches_ref(r, sts, SET_API_VERSION, SET_KIND) or matches_ref(r, pod, POD_API_VERSION, POD_KIND))]
    if not unexpected:
        policy = retention_policy(sts)
        condemned = not pod_in_ordinal_range(pod, sts)
        if policy["whenScaled"] == RETAIN and policy["whenDeleted"] == DELETE:
            refs = _add_controller_ref(refs, sts, SET_API_VERSION, SET_KIND)
        elif policy["whenScaled"] == DELETE and policy["whenDeleted"] == RETAIN:
            if condemned:
                refs = _add_controller_ref(refs, pod, POD_API_VERSION, POD_KIND)
        elif policy["whenScaled"] == DELETE and policy["whenDeleted"] == DELETE:
            refs = _add_controller_ref(refs, pod, POD_API_VERSION, POD_KIND) if condemned \
                else _add_controller_ref(refs, sts, SET_API_VERSION, SET_KIND)
    claim.setdefault("metadata", {})["ownerReferences"] = refs


# --------------------------------------------------------------------------- revisions and pods


def apply_revision(sts: JsonDict, revision: JsonDict) -> JsonDict:
    """ApplyRevision: the set with the revision's pod template."""
    out = copy.deepcopy(sts)
    template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    out.setdefault("spec", {})["template"] = template
    return out


def new_pod(sts: JsonDict, revision: JsonDict, ordinal: int) -> JsonDict:
    """newStatefulSetPod at a revision: the revision's template (controller.GetPodFromTemplate)
    with the identity of `ordinal`, its hostname/subdomain, its claims' volumes and the
    revision label."""
    template = ((revision.get("data") or {}).get("spec") or {}).get("template") or {}
    name = pod_name(sts, ordinal)
    pod = pod_from_template(sts, api_version=SET_API_VERSION, kind=SET_KIND, template=template)
    base = pod["metadata"]
    base.pop("generateName", None)
    pod["metadata"] = {"name": name, **base}
    update_identity(sts, pod)
    pod["metadata"]["labels"][CONTROLLER_REVISION_HASH] = str(meta(revision).get("name"))
    pod["spec"]["hostname"] = name
    if (sts.get("spec") or {}).get("serviceName"):
        pod["spec"]["subdomain"] = sts["spec"]["serviceName"]
    if (sts.get("spec") or {}).get("volumeClaimTemplates"):
        update_storage(sts, pod)
    return pod


def new_versioned_pod(sts: JsonDict, current: JsonDict, update: JsonDict, ordinal: int) -> JsonDict:
    """newVersionedStatefulSetPod: below the partition (RollingUpdate) a new pod is made at the
    current revision, elsewhere at the update revision."""
    strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
    ru = strategy.get("rollingUpdate")
    start = start_ordinal(sts)
    if isinstance(ru, dict):
        below = ordinal < start + get_int(ru, "partition")
    else:
        below = strategy.get("type", "RollingUpdate") == "RollingUpdate" and \
            ordinal < start + get_int(sts.get("status"), "currentReplicas")
    return new_pod(sts, current if below else update, ordinal)


def complete_rolling_update(sts: JsonDict, status: JsonDict) -> None:
    """completeRollingUpdate: every one of spec.replicas updated and ready -> the update
    revision becomes the current one."""
    spec = sts.get("spec") or {}
    want = get_int(spec, "replicas", 1)
    if ((spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
            and status["updatedReplicas"] == want and status["readyReplicas"] == want and status["replicas"] == want):
        status["currentReplicas"] = status["updatedReplicas"]
        status["currentRevision"] = status["updateRevision"]


_COUNTED = ("replicas", "currentReplicas", "readyReplicas", "updatedReplicas", "currentRevision",
            "availableReplicas", "updateRevision")


def inconsistent_status(sts: JsonDict, status: JsonDict) -> bool:
    """inconsistentStatus: a newer observedGeneration or any counted field differs."""
    old = sts.get("status") or {}
    if get_int(status, "observedGeneration") > get_int(old, "observedGeneration"):
        return True
    return any((old.get(k) or (0 if k.endswith("Replicas") or k == "replicas" else "")) != status.get(k)
               for k in _COUNTED)


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
        self._pod_inf.add_handler(on_add=self._pod_added, on_update=self._pod_updated,
                                  on_delete=self._pod_deleted)

    def _enqueue(self, sts: JsonDict) -> None:
        self.queue.add(object_key(sts))

    def _resolve(self, namespace: str, ref: JsonDict | None) -> JsonDict | None:
        if not ref or ref.get("kind") != SET_KIND:
            return None
        sts = self._sts_inf.store.get(f"{namespace}/{ref.get('name')}")
        return sts if sts is not None and meta(sts).get("uid") == ref.get("uid") else None

    def _sets_for_orphan(self, pod: JsonDict) -> list[JsonDict]:
        labels = meta(pod).get("labels") or {}
        out = []
        for sts in self._sts_inf.by_index(NAMESPACE_INDEX, str(meta(pod).get("namespace") or "")):
            try:
                sel = label_selector_from_dict((sts.get("spec") or {}).get("selector"))
            except ValueError:
                continue
            if not sel.empty and sel.matches(labels):
                out.append(sts)
        return out

    def _pod_added(self, pod: JsonDict) -> None:
        if is_deleting(pod):
            self._pod_deleted(pod)
            return
        ns = str(meta(pod).get("namespace") or "")
        ref = controller_ref(pod)
        if ref is not None:
            sts = self._resolve(ns, ref)
            if sts is not None:
                self._enqueue(sts)
            return
        for sts in self._sets_for_orphan(pod):
            self._enqueue(sts)

    def _pod_updated(self, old: JsonDict, cur: JsonDict) -> None:
        if meta(old).get("resourceVersion") == meta(cur).get("resourceVersion"):
            return
        ns = str(meta(cur).get("namespace") or "")
        old_ref, cur_ref = controller_ref(old), controller_ref(cur)
        if old_ref is not None and old_ref != cur_ref:
            sts = self._resolve(ns, old_ref)
            if sts is not None:
                self._enqueue(sts)
        if cur_ref is not None:
            sts = self._resolve(ns, cur_ref)
            if sts is None:
                return
            self._enqueue(sts)
            min_ready = get_int(sts.get("spec"), "minReadySeconds")
            if min_ready > 0 and not is_running_and_ready(old) and is_running_and_ready(cur):
                self.queue.add_after(object_key(sts), float(min_ready))
            return
        if meta(old).get("labels") != meta(cur).get("labels") or old_ref != cur_ref:
            for sts in self._sets_for_orphan(cur):
                self._enqueue(sts)

    def _pod_deleted(self, pod: JsonDict) -> None:
        sts = self._resolve(str(meta(pod).get("namespace") or ""), controller_ref(pod))
        if sts is not None:
            self._enqueue(sts)

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
        """One UpdateStatefulSet pass; raises (so the key is retried) when a write failed."""
        sts = self._sts_inf.store.get(key)
        if sts is None:
            return
        ns = str(meta(sts).get("namespace") or "")
        try:
            selector = label_selector_from_dict((sts.get("spec") or {}).get("selector"))
        except ValueError as e:
            logger.info("%s: invalid selector sts=%s err=%s", self.NAME, key, e)
            return
        uid = meta(sts).get("uid")
        # ListRevisions + adoptOrphanRevisions: the selected revisions it controls or nobody does
        candidates = [r for r in self._rev_inf.by_index(NAMESPACE_INDEX, ns)
                      if selector.matches(meta(r).get("labels") or {})
                      and (controller_ref(r) is None or (controller_ref(r) or {}).get("uid") == uid)]
        revisions = owned_revisions(await claim_objects(
            self._client, CONTROLLERREVISIONS, sts, STATEFULSETS, candidates, match=lambda _r: True,
            kind=SET_KIND, release=False), sts)
        pods = await claim_objects(
            self._client, PODS, sts, STATEFULSETS,
            [p for p in self._pod_inf.by_index(NAMESPACE_INDEX, ns)
             if controller_ref(p) is None or (controller_ref(p) or {}).get("uid") == uid],
            match=lambda p: selector.matches(meta(p).get("labels") or {}) and is_member_of(sts, p), kind=SET_KIND)
        update_rev, collisions = await ensure_revision(self._client, sts, revisions, kind=SET_KIND)
        by_name = {str(meta(r).get("name")): r for r in revisions}
        current_rev = by_name.get(str((sts.get("status") or {}).get("currentRevision") or ""), update_rev)
        errors: list[BaseException] = []
        status = await self._update_statefulset(sts, current_rev, update_rev, collisions, pods, errors)
        try:
            await self._update_status(sts, status)
        except ApiError as e:
            errors.append(e)
        live = {pod_revision(p) for p in pods} | {str(meta(current_rev).get("name")), str(meta(update_rev).get("name"))}
        await trim_history(self._client, revisions, keep=get_int(sts.get("spec"), "revisionHistoryLimit", 10),
                           live=live)
        if errors:
            raise errors[0]

    async def _update_statefulset(self, sts: JsonDict, current_rev: JsonDict, update_rev: JsonDict, collisions: int,
                                  pods: list[JsonDict], errors: list[BaseException]) -> JsonDict:
        """updateStatefulSet: create, repair and delete pods; returns the status to record.
        Write errors are appended to `errors`."""
        spec = sts.get("spec") or {}
        update_set = apply_revision(sts, update_rev)
        min_ready = get_int(spec, "minReadySeconds")
        now = self._clock.now()
        cur_name, upd_name = str(meta(current_rev).get("name")), str(meta(update_rev).get("name"))
        status: JsonDict = {"observedGeneration": get_int(meta(sts), "generation"), "currentRevision": cur_name,
                            "updateRevision": upd_name, "collisionCount": collisions}
        start = start_ordinal(sts)
        replicas: list[JsonDict] = []
        by_ordinal: dict[int, JsonDict] = {}
        condemned: list[JsonDict] = []
        for p in pods:
            if pod_in_ordinal_range(p, sts):
                by_ordinal[get_ordinal(p)] = p
            elif get_ordinal(p) >= 0:
                condemned.append(p)
        for o in range(start, end_ordinal(sts) + 1):
            replicas.append(by_ordinal.get(o) or new_versioned_pod(sts, current_rev, update_rev, o))
        condemned.sort(key=lambda p: -get_ordinal(p))
        unhealthy = [p for p in replicas if not is_healthy(p)] + [p for p in reversed(condemned) if not is_healthy(p)]
        first_unhealthy = unhealthy[0] if unhealthy else None

        def finish() -> JsonDict:
            self._count(status, replicas + condemned, min_ready, now, cur_name, upd_name)
            return status

        if is_deleting(sts):
            return finish()
        monotonic = bool(spec.get("podManagementPolicy", "OrderedReady") != "Parallel")

        async def process_replica(i: int) -> bool:
            pod = replicas[i]
            if is_failed(pod):
                if not is_deleting(pod):
                    await self._delete_pod(sts, pod)
                return True
            if not is_created(pod):
                if await self._claim_is_stale(sts, pod):
                    return True
                await self._create_pod(sts, pod)
                if monotonic:
                    return True
            if pod_phase(pod) == "Pending":
                await self._create_claims(sts, pod)
                await self._update_claims_for_policy(sts, pod)
            if monotonic and (is_deleting(pod) or not is_running_and_ready(pod)
                              or not is_running_and_available(pod, min_ready, now)):
                return True
            try:
                retention_match = await self._claims_match_policy(update_set, pod)
            except ApiError:
                retention_match = True
            if identity_matches(sts, pod) and storage_matches(sts, pod) and retention_match:
                return False
            await self._update_pod(update_set, copy.deepcopy(pod))
            return False

        if await self._run_for_all(len(replicas), process_replica, monotonic, errors):
            return finish()

        async def fix_claims(i: int) -> bool:
            if not await self._claims_match_policy(update_set, condemned[i]):
                await self._update_claims_for_policy(update_set, condemned[i])
            return False

        if await self._run_for_all(len(condemned), fix_claims, monotonic, errors):
            return finish()

        async def process_condemned(i: int) -> bool:
            pod = condemned[i]
            if is_deleting(pod):
                return monotonic
            if monotonic and pod is not first_unhealthy and (
                    not is_running_and_ready(pod) or not is_running_and_available(pod, min_ready, now)):
                return True
            await self._delete_pod(sts, pod)
            return True

        if await self._run_for_all(len(condemned), process_condemned, monotonic, errors):
            return finish()
        finish()
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") == "OnDelete":
            return status
        update_min = get_int(strategy.get("rollingUpdate"), "partition") if strategy.get("rollingUpdate") else 0
        for target in range(len(replicas) - 1, update_min - 1, -1):
            pod = replicas[target]
            if pod_revision(pod) != upd_name and not is_deleting(pod):
                try:
                    await self._delete_pod(sts, pod)
                except NotFoundError:
                    pass
                except ApiError as e:
                    errors.append(e)
                    return status
                status["currentReplicas"] -= 1
                return status
            if not is_healthy(pod):
                return status
        return status

    @staticmethod
    async def _run_for_all(n: int, fn: Callable[[int], Awaitable[bool]], monotonic: bool,
                           errors: list[BaseException]) -> bool:
        """runForAll: in order, stopping at the first blocked or failed step (OrderedReady), or
        every step in slow-start batches, stopping after a batch with an error (Parallel).
        Returns whether the sync must stop here."""
        if monotonic:
            for i in range(n):
                try:
                    if await fn(i):
                        return True
                except ApiError as e:
                    errors.append(e)
                    return True
            return False
        pos = 0
        for batch in slow_start_batches(n):
            results = await asyncio.gather(*(fn(i) for i in range(pos, pos + batch)), return_exceptions=True)
            pos += batch
            for r in results:
                if isinstance(r, asyncio.CancelledError):
                    raise r
            failed = [r for r in results if isinstance(r, BaseException)]
            for r in failed:
                if not isinstance(r, ApiError):
                    raise r
            if failed:
                errors.extend(failed)
                return True
        return False

    @staticmethod
    def _count(status: JsonDict, pods: list[JsonDict], min_ready: int, now: datetime, cur_name: str,
               upd_name: str) -> None:
        """updateStatus: created pods are replicas; Running+Ready ones ready (and available after
        minReadySeconds); created, non-terminating ones count by revision."""
        c = {"replicas": 0, "readyReplicas": 0, "availableReplicas": 0, "currentReplicas": 0, "updatedReplicas": 0}
        for p in pods:
            created = is_created(p)
            if created:
                c["replicas"] += 1
            if is_running_and_ready(p):
                c["readyReplicas"] += 1
                if is_running_and_available(p, min_ready, now):
                    c["availableReplicas"] += 1
            if created and not is_deleting(p):
                if pod_revision(p) == cur_name:
                    c["currentReplicas"] += 1
                if pod_revision(p) == upd_name:
                    c["updatedReplicas"] += 1
        status.update(c)

    # ---- pods and claims

    def _event(self, sts: JsonDict, verb: str, pod: JsonDict, err: BaseException | None) -> None:
        """recordPodEvent: `<verb> Pod <pod> in StatefulSet <set> successful|failed error: ...`."""
        if err is None:
            self.recorder.event(sts, "Normal", f"Successful{verb.title()}",
                                f"{verb} Pod {meta(pod).get('name')} in StatefulSet {meta(sts).get('name')} successful")
        else:
            msg = getattr(err, "message", None) or str(err)
            self.recorder.event(sts, "Warning", f"Failed{verb.title()}",
                                f"{verb} Pod {meta(pod).get('name')} in StatefulSet {meta(sts).get('name')} "
                                f"failed error: {msg}")

    async def _get_claim(self, namespace: str, name: str) -> JsonDict | None:
        try:
            return await self._client.get(PERSISTENTVOLUMECLAIMS, name, namespace)
        except NotFoundError:
            return None

    async def _create_claims(self, sts: JsonDict, pod: JsonDict) -> None:
        """createPersistentVolumeClaims: create the pod's missing claims (a claim being deleted
        is an error: the pod must wait for it to go)."""
        errs: list[ApiError] = []
        pod_name_ = meta(pod).get("name")
        for claim in persistent_volume_claims(sts, pod).values():
            cm = claim["metadata"]
            cur = await self._get_claim(str(cm.get("namespace")), str(cm["name"]))
            if cur is None:
                body: JsonDict = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", **claim}
                try:
                    await self._client.create(PERSISTENTVOLUMECLAIMS, body, cm.get("namespace"), read_only=True)
                except AlreadyExistsError:
                    continue
                except ApiError as e:
                    errs.append(e)
                    self.recorder.event(sts, "Warning", "FailedCreate",
                                        f"create Claim {cm['name']} for Pod {pod_name_} in StatefulSet "
                                        f"{meta(sts).get('name')} failed error: {e.message}")
                    continue
                self.recorder.event(sts, "Normal", "SuccessfulCreate",
                                    f"create Claim {cm['name']} Pod {pod_name_} in StatefulSet "
                                    f"{meta(sts).get('name')} success")
            elif is_deleting(cur):
                errs.append(ApiError(f"pvc {cm['name']} is being deleted"))
        if errs:
            raise errs[0]

    async def _claims_match_policy(self, sts: JsonDict, pod: JsonDict) -> bool:
        """ClaimsMatchRetentionPolicy: every existing claim of the pod is owned as the policy wants."""
        for claim in persistent_volume_claims(sts, pod).values():
            cur = await self._get_claim(str(meta(claim).get("namespace")), str(meta(claim)["name"]))
            if cur is not None and not is_claim_owner_up_to_date(cur, sts, pod):
                return False
        return True

    async def _update_claims_for_policy(self, sts: JsonDict, pod: JsonDict) -> None:
        """UpdatePodClaimForRetentionPolicy: rewrite the owner references of claims that disagree
        with the policy (a claim another controller manages gets a ConflictingController warning)."""
        for claim in persistent_volume_claims(sts, pod).values():
            name = str(meta(claim)["name"])
            cur = await self._get_claim(str(meta(claim).get("namespace")), name)
            if cur is None:
                continue
            if has_unexpected_controller(cur, sts, pod):
                self.recorder.event(sts, "Warning", "ConflictingController",
                                    f"PersistentVolumeClaim {name} has a conflicting OwnerReference that acts as a "
                                    "manging controller, the retention policy is ignored for this claim")
            if is_claim_owner_up_to_date(cur, sts, pod):
                continue
            body = copy.deepcopy(cur)
            update_claim_owner_refs(body, sts, pod)
            await self._client.update(PERSISTENTVOLUMECLAIMS, body, read_only=True)

    async def _claim_is_stale(self, sts: JsonDict, pod: JsonDict) -> bool:
        """PodClaimIsStale: under whenScaled Delete, a claim still naming an older pod of this
        name blocks creating the pod."""
        if retention_policy(sts)["whenScaled"] == RETAIN:
            return False
        for claim in persistent_volume_claims(sts, pod).values():
            cur = await self._get_claim(str(meta(claim).get("namespace")), str(meta(claim)["name"]))
            if cur is not None and has_stale_owner_ref(cur, pod, POD_API_VERSION, POD_KIND):
                return True
        return False

    async def _create_pod(self, sts: JsonDict, pod: JsonDict) -> None:
        """CreateStatefulPod: the claims first, then the pod, then the claims' owners."""
        try:
            await self._create_claims(sts, pod)
        except ApiError as e:
            self._event(sts, "create", pod, e)
            raise
        try:
            await self._client.create(PODS, pod, meta(sts).get("namespace"), read_only=True)
        except AlreadyExistsError:
            raise
        except ApiError as e:
            self._event(sts, "create", pod, e)
            raise
        try:
            await self._update_claims_for_policy(sts, pod)
        except ApiError as e:
            self._event(sts, "update", pod, e)
            raise
        self._event(sts, "create", pod, None)

    async def _update_pod(self, sts: JsonDict, pod: JsonDict) -> None:
        """UpdateStatefulPod: repair the identity labels, create missing claims and fix the
        claims' owners, then write the pod."""
        consistent = True
        if not identity_matches(sts, pod):
            update_identity(sts, pod)
            consistent = False
        if not storage_matches(sts, pod):
            update_storage(sts, pod)
            consistent = False
            await self._create_claims(sts, pod)
        if not await self._claims_match_policy(sts, pod):
            await self._update_claims_for_policy(sts, pod)
            consistent = False
        if consistent:
            return
        try:
            await self._client.update(PODS, pod, read_only=True)
        except ApiError as e:
            self._event(sts, "update", pod, e)
            raise
        self._event(sts, "update", pod, None)

    async def _delete_pod(self, sts: JsonDict, pod: JsonDict) -> None:
        name = str(meta(pod).get("name"))
        try:
            await self._client.delete(PODS, name, meta(pod).get("namespace"))
        except ApiError as e:
            self._event(sts, "delete", pod, e)
            raise
        self._event(sts, "delete", pod, None)

    async def _update_status(self, sts: JsonDict, status: JsonDict) -> None:
        """updateStatefulSetStatus: complete a finished rolling update, then write the status if
        a counted field changed (retrying on a stale read)."""
        complete_rolling_update(sts, status)
        if not inconsistent_status(sts, status):
            return
        cur = sts
        for attempt in range(10):
            body = copy.copy(cur)
            body["status"] = {**(cur.get("status") or {}), **status}
            try:
                await self._client.update_status(STATEFULSETS, body, read_only=True)
                return
            except NotFoundError:
                return
            except ConflictError:
                if attempt == 9:
                    raise
                m = meta(sts)
                cur = await self._client.get(STATEFULSETS, str(m.get("name")), m.get("namespace"))


__all__ = [
    "POD_INDEX_LABEL", "POD_NAME_LABEL", "StatefulSetController", "apply_revision", "claim_name",
    "complete_rolling_update", "get_ordinal", "has_non_controller_owner", "has_owner_ref", "has_stale_owner_ref",
    "has_unexpected_controller", "identity_matches", "inconsistent_status", "is_claim_owner_up_to_date",
    "is_member_of", "is_running_and_available", "is_running_and_ready", "matches_ref", "new_pod",
    "new_versioned_pod", "ordinal_of", "parent_name_and_ordinal", "persistent_volume_claims", "pod_in_ordinal_range",
    "retention_policy", "storage_matches", "update_claim_owner_refs", "update_identity", "update_storage",
]
