"""ReplicaSet controller (layer L4), after kube-controller-manager's `pkg/controller/replicaset`.

Keeps `spec.replicas` active pods for every ReplicaSet: creates pods from the template
(generateName `<rs>-`, a controller ownerReference with blockOwnerDeletion) in slow-start
batches 1, 2, 4, ..., deletes the surplus ranked as upstream (unassigned, pending, not ready,
cheap, doubled-up, recently ready, restarting, young pods go first), adopts matching orphans
and releases pods whose labels stopped matching, and writes status (replicas,
fullyLabeledReplicas, readyReplicas, availableReplicas, observedGeneration).

Data flow: ReplicaSet and Pod informers -> handlers enqueue `ns/name` -> workers run
`sync(key)` -> pod create/delete/patch and `replicasets/status` writes through the Client.
Expectations keep a sync from acting twice before the pod informer caught up.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import logging
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from minik3s.api.errors import ApiError, ConflictError, NotFoundError
from minik3s.api.helpers.pods import is_pod_ready, pod_condition
from minik3s.api.resources import PODS, REPLICASETS
from minik3s.api.selectors import LabelSelector, label_selector_from_dict
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory, object_key
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import (
    POD_CONTROLLER_UID_INDEX,
    available_cutoff,
    controller_ref,
    get_int,
    is_deleting,
    is_pod_active,
    make_controller_ref,
    meta,
    now_str,
    owned_and_orphan_pods,
    pod_controller_uid_index,
    ready_before,
    run_workers,
    set_condition,
)
from minik3s.controllers.expectations import Expectations
from minik3s.utils.clock import Clock, parse_time

logger = logging.getLogger(__name__)

BURST_REPLICAS = 500
SLOW_START_INITIAL_BATCH = 1
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
NAMESPACE_INDEX = "namespace"


def namespace_index(obj: JsonDict) -> list[str]:
    return [meta(obj).get("namespace") or ""]


# --------------------------------------------------------------------------- pure parts


def pod_from_template(rs: JsonDict, *, api_version: str = "apps/v1", kind: str = "ReplicaSet",
                      template: JsonDict | None = None) -> JsonDict:
    """controller.GetPodFromTemplate: labels, annotations, finalizers and spec of the
    template (the owner's `spec.template` unless another is given, e.g. a StatefulSet's
    revision); generateName `<owner>-`; one controller ownerReference."""
    if template is None:
        template = (rs.get("spec") or {}).get("template") or {}
    tmeta = template.get("metadata") or {}
    m = meta(rs)
    pod_meta: JsonDict = {
        "generateName": f"{m.get('name')}-",
        "namespace": m.get("namespace"),
        "labels": dict(tmeta.get("labels") or {}),
        "ownerReferences": [make_controller_ref(rs, api_version=api_version, kind=kind)],
    }
    if tmeta.get("annotations"):
        pod_meta["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        pod_meta["finalizers"] = list(tmeta["finalizers"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta,
            "spec": copy.deepcopy(template.get("spec") or {})}


def slow_start_batches(count: int, initial: int = SLOW_START_INITIAL_BATCH) -> list[int]:
    """Batch sizes of controller.slowStartBatch: 1, 2, 4, ... capped by what remains.

    Example: 10 -> [1, 2, 4, 3]."""
    out: list[int] = []
    remaining = count
    batch = min(remaining, initial)
    while batch > 0:
        out.append(batch)
        remaining -= batch
        batch = min(2 * batch, remaining)
    return out


_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def _deletion_cost(pod: JsonDict) -> int:
    raw = (meta(pod).get("annotations") or {}).get(POD_DELETION_COST)
    try:
        return int(raw) if raw is not None else 0
    except ValueError:
        return 0


def _ready_time(pod: JsonDict) -> datetime | None:
    c = pod_condition(pod, "Ready")
    if not c or c.get("status") != "True":
        return None
    return parse_time(c.get("lastTransitionTime"))


def _max_restarts(pod: JsonDict) -> tuple[int, int]:
    """maxContainerRestarts: the most restarts of a regular container, then of a sidecar (an
    init container with restartPolicy Always)."""
    status = pod.get("status") or {}
    regular = max((int(cs.get("restartCount") or 0) for cs in status.get("containerStatuses") or []), default=0)
    sidecars = {c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or []
                if c.get("restartPolicy") == "Always"}
    sidecar = max((int(cs.get("restartCount") or 0) for cs in status.get("initContainerStatuses") or []
                   if cs.get("name") in sidecars), default=0)
    return regular, sidecar


def _log_rank(t: datetime, now: datetime) -> int:
    """log2 of the age in nanoseconds (upstream logarithmicRankDiff), -1 when not positive."""
    d = (now - t).total_seconds() * 1e9
    return int(math.log2(d)) if d > 0 else -1


def _time_less(t1: datetime | None, t2: datetime | None, now: datetime | None, uid1: str, uid2: str) -> bool:
    """Empty < newer < older, bucketed logarithmically (LogarithmicScaleDown, on by default)."""
    if now is None or t1 is None or t2 is None:
        if t1 is None or t2 is None:
            return t1 is None and t2 is not None
        return t1 > t2
    diff = _log_rank(t1, now) - _log_rank(t2, now)
    if diff == 0:
        return uid1 < uid2
    return diff < 0


def _pod_less(a: JsonDict, ra: int, b: JsonDict, rb: int, now: datetime | None) -> bool:
    """controller.ActivePodsWithRanks.Less: True when `a` should be deleted before `b`."""
    na = (a.get("spec") or {}).get("nodeName") or ""
    nb = (b.get("spec") or {}).get("nodeName") or ""
    if na != nb and (not na or not nb):
        return not na  # 1. unassigned < assigned
    pa = _PHASE_ORDINAL.get((a.get("status") or {}).get("phase") or "", 0)
    pb = _PHASE_ORDINAL.get((b.get("status") or {}).get("phase") or "", 0)
    if pa != pb:
        return pa < pb  # 2. Pending < Unknown < Running
    ready_a, ready_b = is_pod_ready(a), is_pod_ready(b)
    if ready_a != ready_b:
        return not ready_a  # 3. not ready < ready
    ca, cb = _deletion_cost(a), _deletion_cost(b)
    if ca != cb:
        return ca < cb  # 4. lower pod-deletion-cost first
    if ra != rb:
        return ra > rb  # 5. doubled up < not doubled up
    uid_a, uid_b = str(meta(a).get("uid") or ""), str(meta(b).get("uid") or "")
    if ready_a and ready_b:  # 6. ready for less time first
        ta, tb = _ready_time(a), _ready_time(b)
        if ta != tb:
            return _time_less(ta, tb, now, uid_a, uid_b)
    ra_, rb_ = _max_restarts(a), _max_restarts(b)
    if ra_ != rb_:
        return ra_ > rb_  # 7. more restarts first (regular containers, then sidecars)
    ta, tb = parse_time(meta(a).get("creationTimestamp")), parse_time(meta(b).get("creationTimestamp"))
    if ta != tb:
        return _time_less(ta, tb, now, uid_a, uid_b)  # 8. newer first
    return False


def rank_pods_for_deletion(pods: Sequence[JsonDict], related: Sequence[JsonDict], *,
                           now: datetime | None = None) -> list[JsonDict]:
    """Pods ordered deletion-first (getPodsRankedByRelatedPodsOnSameNode + sort).

    A pod's rank is the number of active related pods (of this ReplicaSet and its siblings
    under the same Deployment) on its node: doubled-up pods go first."""
    on_node: dict[str, int] = {}
    for p in related:
        if is_pod_active(p):
            n = (p.get("spec") or {}).get("nodeName") or ""
            on_node[n] = on_node.get(n, 0) + 1
    ranked = [(p, on_node.get((p.get("spec") or {}).get("nodeName") or "", 0)) for p in pods]

    def cmp(x: tuple[JsonDict, int], y: tuple[JsonDict, int]) -> int:
        if _pod_less(x[0], x[1], y[0], y[1], now):
            return -1
        if _pod_less(y[0], y[1], x[0], x[1], now):
            return 1
        return 0

    return [p for p, _ in sorted(ranked, key=functools.cmp_to_key(cmp))]


def pods_to_delete(pods: Sequence[JsonDict], related: Sequence[JsonDict], diff: int, *,
                   now: datetime | None = None) -> list[JsonDict]:
    if diff >= len(pods):
        return list(pods)
    return rank_pods_for_deletion(pods, related, now=now)[:diff]


def pod_readiness(pod: JsonDict) -> tuple[bool, datetime | None]:
    """Whether the pod is Ready, and since when (lastTransitionTime of its Ready condition)."""
    c = pod_condition(pod, "Ready")
    if not c or c.get("status") != "True":
        return False, None
    return True, parse_time(c.get("lastTransitionTime"))


# (the pod, active, Ready, Ready since, labels), as PodFacts remembers them
PodFact = tuple[JsonDict, bool, bool, "datetime | None", dict[str, str]]


class PodFacts:
    """What a ReplicaSet sync reads of every owned pod (active, Ready, Ready since, labels),
    remembered per informer object. The informer replaces a pod's dict on every change and
    never edits one in place, so an entry holding the very object it was read from is current;
    the controller forgets an object when the informer replaces or drops it. A sync reads every
    owned pod, so a burst of N pods costs N dict lookups per sync instead of N phase and
    condition walks and timestamp parses."""

    __slots__ = ("_memo",)

    def __init__(self) -> None:
        self._memo: dict[int, PodFact] = {}

    def _fresh(self, pod: JsonDict) -> PodFact:
        ready, since = pod_readiness(pod)
        e = self._memo[id(pod)] = (pod, is_pod_active(pod), ready, since, meta(pod).get("labels") or {})
        return e

    def read(self, pod: JsonDict) -> PodFact:
        e = self._memo.get(id(pod))
        return e if e is not None and e[0] is pod else self._fresh(pod)

    def read_all(self, pods: Sequence[JsonDict]) -> list[PodFact]:
        get = self._memo.get
        out: list[PodFact] = []
        for pod in pods:
            e = get(id(pod))
            out.append(e if e is not None and e[0] is pod else self._fresh(pod))
        return out

    def forget(self, pod: JsonDict) -> None:
        e = self._memo.get(id(pod))
        if e is not None and e[0] is pod:
            del self._memo[id(pod)]

    def __len__(self) -> int:
        return len(self._memo)


def calculate_status(rs: JsonDict, pods: Sequence[JsonDict], *, now: datetime,
                     manage_error: str | None = None, now_s: str = "", facts: PodFacts | None = None) -> JsonDict:
    """replica_set_utils.calculateStatus. `facts`: the controller's memo of its pods' readings."""
    spec = rs.get("spec") or {}
    template_labels = (((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}).items()
    min_ready = get_int(spec, "minReadySeconds")
    cutoff = available_cutoff(min_ready, now)
    fully = ready = available = 0
    for _, _, is_ready, since, labels in (facts or PodFacts()).read_all(pods):
        # every template label present with the same value (labels.SelectorFromSet(...).Matches)
        if template_labels <= labels.items():
            fully += 1
        if is_ready:
            ready += 1
            if ready_before(since, cutoff):
                available += 1
    old = rs.get("status") or {}
    status: JsonDict = {
        "replicas": len(pods),
        "fullyLabeledReplicas": fully,
        "readyReplicas": ready,
        "availableReplicas": available,
        "observedGeneration": get_int(meta(rs), "generation"),
    }
    # ReplicaSetStatus: `replicas` is always written, the other counts are omitempty
    status = {k: v for k, v in status.items() if v or k == "replicas"}
    conditions = [dict(c) for c in old.get("conditions") or []]
    if manage_error is not None:
        reason = "FailedCreate" if len(pods) < get_int(spec, "replicas", 1) else "FailedDelete"
        set_condition(conditions, {"type": "ReplicaFailure", "status": "True", "reason": reason,
                                   "message": manage_error}, now=now_s)
    else:
        conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"]
    if conditions:
        status["conditions"] = conditions
    return status


def _status_differs(old: JsonDict, new: JsonDict) -> bool:
    keys = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration")
    if any(get_int(old, k) != get_int(new, k) for k in keys):
        return True
    return (old.get("conditions") or []) != (new.get("conditions") or [])


# --------------------------------------------------------------------------- controller


class ReplicaSetController:
    """Upstream ReplicaSetController: one worker pass per ReplicaSet key."""

    NAME = "replicaset-controller"
    # the ReplicationController controller reuses this loop with its own resource and selector
    RESOURCE = REPLICASETS
    API_VERSION = "apps/v1"
    KIND = "ReplicaSet"

    @staticmethod
    def selector_of(rs: JsonDict) -> LabelSelector:
        """spec.selector as a LabelSelector (raises ValueError when malformed)."""
        return label_selector_from_dict((rs.get("spec") or {}).get("selector"))

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None,
                 burst_replicas: int = BURST_REPLICAS) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._burst = burst_replicas
        self._rs_inf = informers.informer(self.RESOURCE)
        self._pod_inf = informers.informer(PODS)
        self._rs_inf.add_index(NAMESPACE_INDEX, namespace_index)
        self._pod_inf.add_index(NAMESPACE_INDEX, namespace_index)
        self._pod_inf.add_index(POD_CONTROLLER_UID_INDEX, pod_controller_uid_index)
        self._facts = PodFacts()
        self.expectations = Expectations(self._clock)
        self.queue = WorkQueue()
        self.recorder = EventRecorder(client, self.NAME, clock=self._clock)
        self._rs_inf.add_handler(on_add=self._rs_added, on_update=self._rs_updated, on_delete=self._rs_deleted)
        self._pod_inf.add_handler(on_add=self._pod_added, on_update=self._pod_updated,
                                  on_delete=self._pod_deleted)

    # ---- handlers (fast: enqueue only)

    def _rs_added(self, rs: JsonDict) -> None:
        self.queue.add(object_key(rs))

    def _rs_updated(self, old: JsonDict, cur: JsonDict) -> None:
        self.queue.add(object_key(cur))

    def _rs_deleted(self, rs: JsonDict) -> None:
        key = object_key(rs)
        self.expectations.delete(key)
        self.queue.add(key)

    def _resolve(self, namespace: str, ref: JsonDict | None) -> JsonDict | None:
        if not ref or ref.get("kind") != self.KIND:
            return None
        group = self.RESOURCE.group
        api_version = str(ref.get("apiVersion", ""))
        if (group and not api_version.startswith(group + "/")) or (not group and "/" in api_version):
            return None
        rs = self._rs_inf.store.get(f"{namespace}/{ref.get('name')}")
        if rs is None or meta(rs).get("uid") != ref.get("uid"):
            return None
        return rs

    def _matching_rses(self, pod: JsonDict) -> list[JsonDict]:
        labels = meta(pod).get("labels") or {}
        if not labels:
            return []
        out = []
        for rs in self._rs_inf.by_index(NAMESPACE_INDEX, meta(pod).get("namespace") or ""):
            try:
                sel = self.selector_of(rs)
            except ValueError:
                continue
            if not sel.empty and sel.matches(labels):
                out.append(rs)
        return out

    def _pod_added(self, pod: JsonDict) -> None:
        if is_deleting(pod):
            self._pod_deleted(pod)
            return
        ns = meta(pod).get("namespace") or ""
        ref = controller_ref(pod)
        if ref is not None:
            rs = self._resolve(ns, ref)
            if rs is not None:
                key = object_key(rs)
                self.expectations.creation_observed(key)
                self.queue.add(key)
            return
        for rs in self._matching_rses(pod):
            self.queue.add(object_key(rs))

    def _pod_updated(self, old: JsonDict, cur: JsonDict) -> None:
        self._facts.forget(old)
        if meta(old).get("resourceVersion") == meta(cur).get("resourceVersion"):
            return
        ns = meta(cur).get("namespace") or ""
        labels_changed = meta(old).get("labels") != meta(cur).get("labels")
        if is_deleting(cur):
            self._pod_deleted(cur)
            if labels_changed:
                self._pod_deleted(old)
            return
        cur_ref, old_ref = controller_ref(cur), controller_ref(old)
        if old_ref is not None and old_ref != cur_ref:
            rs = self._resolve(ns, old_ref)
            if rs is not None:
                self.queue.add(object_key(rs))
        if cur_ref is not None:
            rs = self._resolve(ns, cur_ref)
            if rs is None:
                return
            key = object_key(rs)
            self.queue.add(key)
            min_ready = get_int(rs.get("spec"), "minReadySeconds")
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(cur):
                self.queue.add_after(key, float(min_ready) + 1.0)
            return
        if labels_changed or old_ref != cur_ref:
            for rs in self._matching_rses(cur):
                self.queue.add(object_key(rs))

    def _pod_deleted(self, pod: JsonDict) -> None:
        self._facts.forget(pod)
        ns = meta(pod).get("namespace") or ""
        rs = self._resolve(ns, controller_ref(pod))
        if rs is None:
            return
        key = object_key(rs)
        self.expectations.deletion_observed(key, object_key(pod))
        self.queue.add(key)

    # ---- run

    async def run(self, workers: int = 5) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            await self._rs_inf.wait_for_sync()
            await self._pod_inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(run_workers(self.queue, self.sync, workers=workers, name=self.NAME),
                           name=f"{self.NAME}-workers")

    # ---- sync

    async def sync(self, key: str) -> None:
        rs = self._rs_inf.store.get(key)
        if rs is None:
            self.expectations.delete(key)
            return
        needs_sync = self.expectations.satisfied(key)
        try:
            selector = self.selector_of(rs)
        except ValueError as e:
            logger.info("%s: invalid selector rs=%s err=%s", self.NAME, key, e)
            return
        facts = self._facts
        if len(facts) > 2 * len(self._pod_inf.store) + 1024:
            facts = self._facts = PodFacts()  # objects that never passed through the informer (adopted copies)
        controlled, orphans = owned_and_orphan_pods(self._pod_inf, rs)
        owned = await self._claim_pods(rs, selector, [e for e in facts.read_all(controlled) if e[1]],
                                       [e for e in facts.read_all(orphans) if e[1]])
        manage_error: str | None = None
        if needs_sync and not is_deleting(rs):
            manage_error = await self._manage_replicas(rs, owned)
        await self._update_status(rs, owned, manage_error)
        spec = rs.get("spec") or {}
        min_ready = get_int(spec, "minReadySeconds")
        if manage_error is None and min_ready > 0:
            now = self._clock.now()
            cutoff = available_cutoff(min_ready, now)
            readings = facts.read_all(owned)
            ready = sum(1 for e in readings if e[2])
            avail = sum(1 for e in readings if e[2] and ready_before(e[3], cutoff))
            if ready == get_int(spec, "replicas", 1) and avail != ready:
                self.queue.add_after(key, float(min_ready))

    async def _claim_pods(self, rs: JsonDict, selector: LabelSelector, controlled: list[PodFact],
                          orphans: list[PodFact]) -> list[JsonDict]:
        """PodControllerRefManager.ClaimPods over the active pods this ReplicaSet controls and the
        namespace's active pods without a controller: keep controlled matches, release controlled
        mismatches, adopt matching orphans."""
        out: list[JsonDict] = []
        deleting = is_deleting(rs)
        matches = selector.matches
        for e in controlled:
            if not selector.empty and matches(e[4]):
                out.append(e[0])
            elif not deleting:
                await self._release(rs, e[0])
        if deleting or selector.empty:
            return out
        adopt = [e[0] for e in orphans if matches(e[4])]
        if adopt:
            fresh = await self._can_adopt(rs)
            if fresh:
                for pod in adopt:
                    adopted = await self._adopt(rs, pod)
                    if adopted is not None:
                        out.append(adopted)
        return out

    async def _can_adopt(self, rs: JsonDict) -> bool:
        """RecheckDeletionTimestamp on an uncached read, as upstream does before adopting."""
        m = meta(rs)
        try:
            fresh = await self._client.get(self.RESOURCE, m["name"], m.get("namespace"))
        except NotFoundError:
            return False
        return meta(fresh).get("uid") == m.get("uid") and not is_deleting(fresh)

    async def _adopt(self, rs: JsonDict, pod: JsonDict) -> JsonDict | None:
        m = meta(pod)
        refs = [dict(r) for r in m.get("ownerReferences") or []]
        refs.append(make_controller_ref(rs, api_version=self.API_VERSION, kind=self.KIND))
        patch = {"metadata": {"ownerReferences": refs, "uid": m.get("uid"),
                              "resourceVersion": m.get("resourceVersion")}}
        try:
            return await self._client.patch(PODS, m["name"], patch, m.get("namespace"))
        except (NotFoundError, ConflictError):
            return None
        except ApiError as e:
            logger.info("%s: adopt failed pod=%s/%s err=%r", self.NAME, m.get("namespace"), m.get("name"), e)
            return None

    async def _release(self, rs: JsonDict, pod: JsonDict) -> None:
        m = meta(pod)
        uid = meta(rs).get("uid")
        refs = [r for r in m.get("ownerReferences") or [] if r.get("uid") != uid]
        patch = {"metadata": {"ownerReferences": refs or None, "uid": m.get("uid"),
                              "resourceVersion": m.get("resourceVersion")}}
        try:
            await self._client.patch(PODS, m["name"], patch, m.get("namespace"), read_only=True)
        except (NotFoundError, ConflictError):
            pass

    async def _manage_replicas(self, rs: JsonDict, pods: list[JsonDict]) -> str | None:
        key = object_key(rs)
        want = get_int(rs.get("spec"), "replicas", 1)
        diff = len(pods) - want
        if diff < 0:
            n = min(-diff, self._burst)
            self.expectations.expect_creations(key, n)
            logger.debug("%s: too few replicas rs=%s need=%d creating=%d", self.NAME, key, want, n)
            created = 0
            error: str | None = None
            for batch in slow_start_batches(n):
                results = await asyncio.gather(*(self._create_pod(rs) for _ in range(batch)),
                                               return_exceptions=True)
                for r in results:
                    if isinstance(r, asyncio.CancelledError):
                        raise r
                failures = [r for r in results if isinstance(r, BaseException)]
                created += batch - len(failures)
                if failures:
                    error = str(failures[0])
                    break
            if created < n:
                # creations that failed or were never attempted will not be observed
                self.expectations.lower_creations(key, n - created)
            return error
        if diff > 0:
            n = min(diff, self._burst)
            related = self._related_pods(rs)
            victims = pods_to_delete(pods, related, n, now=self._clock.now())
            self.expectations.expect_deletions(key, [object_key(p) for p in victims])
            logger.debug("%s: too many replicas rs=%s need=%d deleting=%d", self.NAME, key, want, n)
            outcomes = await asyncio.gather(*(self._delete_pod(rs, p) for p in victims), return_exceptions=True)
            for o in outcomes:
                if isinstance(o, asyncio.CancelledError):
                    raise o
            errs = [o for o in outcomes if isinstance(o, BaseException)]
            return str(errs[0]) if errs else None
        return None

    def _related_pods(self, rs: JsonDict) -> list[JsonDict]:
        """Pods of this ReplicaSet and of sibling ReplicaSets under the same controller."""
        ns = meta(rs).get("namespace") or ""
        owner = controller_ref(rs)
        uids = {meta(rs).get("uid")}
        if owner is not None:
            for other in self._rs_inf.by_index(NAMESPACE_INDEX, ns):
                ref = controller_ref(other)
                if ref is not None and ref.get("uid") == owner.get("uid"):
                    uids.add(meta(other).get("uid"))
        out: list[JsonDict] = []
        for uid in uids:
            out += self._pod_inf.by_index(POD_CONTROLLER_UID_INDEX, str(uid or ""))
        return out

    async def _create_pod(self, rs: JsonDict) -> JsonDict:
        m = meta(rs)
        body = pod_from_template(rs, api_version=self.API_VERSION, kind=self.KIND)
        try:
            pod = await self._client.create(PODS, body, m.get("namespace"), read_only=True)  # only read
        except ApiError as e:
            self.recorder.event(rs, "Warning", "FailedCreate", f"Error creating: {e.message}")
            raise
        self.recorder.event(rs, "Normal", "SuccessfulCreate", f"Created pod: {meta(pod).get('name')}")
        return pod

    async def _delete_pod(self, rs: JsonDict, pod: JsonDict) -> None:
        m = meta(pod)
        key = object_key(rs)
        try:
            await self._client.delete(PODS, m["name"], m.get("namespace"))
        except NotFoundError:
            self.expectations.deletion_observed(key, object_key(pod))
            return
        except ApiError as e:
            self.expectations.deletion_observed(key, object_key(pod))
            self.recorder.event(rs, "Warning", "FailedDelete", f"Error deleting: {e.message}")
            raise
        self.recorder.event(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {m.get('name')}")

    async def _update_status(self, rs: JsonDict, pods: list[JsonDict], manage_error: str | None) -> None:
        status = calculate_status(rs, pods, now=self._clock.now(), manage_error=manage_error,
                                  now_s=now_str(self._clock), facts=self._facts)
        if not _status_differs(rs.get("status") or {}, status):
            return
        body: dict[str, Any] = copy.copy(rs)
        body["status"] = status
        m = meta(rs)
        for attempt in range(2):
            try:
                await self._client.update_status(self.RESOURCE, body, read_only=True)
                return
            except NotFoundError:
                return
            except ConflictError:
                if attempt:
                    raise
                fresh = await self._client.get(self.RESOURCE, m["name"], m.get("namespace"))
                if meta(fresh).get("uid") != m.get("uid"):
                    return
                body = dict(fresh)
                body["status"] = status
