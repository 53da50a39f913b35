"""Disruption controller (layer L4), after kube-controller-manager's `pkg/controller/disruption`.

Keeps every PodDisruptionBudget's status current so the eviction subresource (in the API
server) can decide: currentHealthy (Ready, not terminating, not recently evicted pods),
desiredHealthy and expectedPods (from minAvailable / maxUnavailable, ints or percentages; a
percentage, and maxUnavailable, are taken of the owning controllers' declared scale),
disruptionsAllowed, disruptedPods (evictions the API server recorded, kept until the pod is
seen terminating or for 2 minutes), observedGeneration and the DisruptionAllowed condition
(SufficientPods / InsufficientPods / SyncFailed).

Data flow: PDB, Pod and workload informers -> PDB keys -> `sync(key)` -> `poddisruptionbudgets/status`.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

from minik3s.api.errors import ConflictError, NotFoundError
from minik3s.api.helpers.pods import is_pod_ready
from minik3s.api.resources import (
    DEPLOYMENTS,
    PODDISRUPTIONBUDGETS,
    PODS,
    REPLICASETS,
    ResourceInfo,
    builtin_resources,
)
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
    meta,
    run_workers,
    scaled_value,
)
from minik3s.controllers.replicaset import NAMESPACE_INDEX, namespace_index
from minik3s.utils.clock import Clock, parse_time, rfc3339

logger = logging.getLogger(__name__)

DELETION_TIMEOUT = 120.0  # seconds an eviction stays in disruptedPods without the pod terminating
_BY_Q = {r.qualified: r for r in builtin_resources()}
STATEFULSETS = _BY_Q["statefulsets.apps"]
REPLICATIONCONTROLLERS = _BY_Q["replicationcontrollers"]


class SyncFailed(Exception):
    """The PDB cannot be computed (e.g. a pod's controller is unknown): fail safe."""


def desired_and_expected(pdb: JsonDict, pods: Sequence[JsonDict], expected_scale: int | None) -> tuple[int, int]:
    """getExpectedPodCount -> (expectedPods, desiredHealthy).

    `expected_scale` is the sum of the owning controllers' replicas (needed for percentages
    and maxUnavailable). Examples: minAvailable 2 of 3 pods -> (3, 2); maxUnavailable "50%"
    with a scale of 5 -> maxUnavailable 3 (rounded up) -> (5, 2); minAvailable "50%" of 5 -> (5, 3)."""
    spec = pdb.get("spec") or {}
    if spec.get("maxUnavailable") is not None:
        if expected_scale is None:
            raise SyncFailed("expected scale unavailable")
        mu = scaled_value(spec["maxUnavailable"], expected_scale, round_up=True)
        return expected_scale, max(0, expected_scale - mu)
    min_avail = spec.get("minAvailable")
    if min_avail is None:
        return 0, 0
    if isinstance(min_avail, int) or (isinstance(min_avail, str) and not min_avail.endswith("%")):
        return len(pods), int(min_avail)
    if expected_scale is None:
        raise SyncFailed("expected scale unavailable")
    return expected_scale, scaled_value(min_avail, expected_scale, round_up=True)


def build_disrupted(pdb: JsonDict, pods: Sequence[JsonDict], now: datetime) -> tuple[dict[str, str], datetime | None]:
    """buildDisruptedPodMap: entries for live, non-terminating pods still within the 2 minute
    window; returns the map and the earliest time an entry will expire (for a recheck)."""
    recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
    out: dict[str, str] = {}
    recheck: datetime | None = None
    for pod in pods:
        name = str(meta(pod).get("name"))
        if is_deleting(pod) or name not in recorded:
            continue
        t = parse_time(recorded[name])
        if t is None:
            continue
        expires = t + timedelta(seconds=DELETION_TIMEOUT)
        if expires < now:
            logger.info("pod %s/%s was expected to be deleted at %s but it wasn't", meta(pod).get("namespace"),
                        name, rfc3339(expires))
            continue
        out[name] = recorded[name]
        if recheck is None or expires < recheck:
            recheck = expires
    return out, recheck


def count_healthy(pods: Sequence[JsonDict], disrupted: dict[str, str], now: datetime) -> int:
    healthy = 0
    for pod in pods:
        if is_deleting(pod):
            continue
        t = parse_time(disrupted.get(str(meta(pod).get("name"))))
        if t is not None and t + timedelta(seconds=DELETION_TIMEOUT) > now:
            continue
        if is_pod_ready(pod):
            healthy += 1
    return healthy


def pdb_status(pdb: JsonDict, *, expected: int, desired: int, healthy: int, disrupted: dict[str, str],
               now: str) -> JsonDict:
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    cond = ({"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods", "message": ""}
            if allowed > 0 else
            {"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods", "message": ""})
    return _with_condition(pdb, {
        "observedGeneration": get_int(meta(pdb), "generation"),
        "disruptedPods": disrupted or None,
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
    }, cond, now)


def fail_safe_status(pdb: JsonDict, message: str, now: str) -> JsonDict:
    st = dict(pdb.get("status") or {})
    st["disruptionsAllowed"] = 0
    st["observedGeneration"] = get_int(meta(pdb), "generation")
    return _with_condition(pdb, st, {"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed",
                                     "message": message}, now)


def _with_condition(pdb: JsonDict, status: JsonDict, cond: JsonDict, now: str) -> JsonDict:
    status = {k: v for k, v in status.items() if v is not None}
    old = [dict(c) for c in (pdb.get("status") or {}).get("conditions") or []]
    cur = next((c for c in old if c.get("type") == cond["type"]), None)
    new = dict(cond)
    new["observedGeneration"] = get_int(meta(pdb), "generation")
    if cur is not None and cur.get("status") == cond["status"]:
        new["lastTransitionTime"] = cur.get("lastTransitionTime", now)
    else:
        new["lastTransitionTime"] = now
    status["conditions"] = [c for c in old if c.get("type") != cond["type"]] + [new]
    return status


class DisruptionController:
    NAME = "disruption-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._pdbs = informers.informer(PODDISRUPTIONBUDGETS)
        self._pods = informers.informer(PODS)
        self._pdbs.add_index(NAMESPACE_INDEX, namespace_index)
        self._pods.add_index(NAMESPACE_INDEX, namespace_index)
        self._workloads = {r.kind: informers.informer(r)
                           for r in (REPLICASETS, DEPLOYMENTS, STATEFULSETS, REPLICATIONCONTROLLERS)}
        for inf in self._workloads.values():
            inf.add_handler(on_update=lambda o, n: self._workload_changed(o, n))
        self.queue = WorkQueue()
        self.recorder = EventRecorder(client, self.NAME, clock=self._clock)
        self._pdbs.add_handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n),
                               on_delete=self._enqueue)
        self._pods.add_handler(on_add=self._pod_changed, on_update=lambda o, n: self._pod_updated(o, n),
                               on_delete=self._pod_changed)

    def _enqueue(self, pdb: JsonDict) -> None:
        self.queue.add(object_key(pdb))

    def _pdbs_for(self, pod: JsonDict) -> list[JsonDict]:
        labels = meta(pod).get("labels") or {}
        out = []
        for pdb in self._pdbs.by_index(NAMESPACE_INDEX, meta(pod).get("namespace") or ""):
            try:
                sel = label_selector_from_dict((pdb.get("spec") or {}).get("selector") or {})
            except ValueError:
                continue
            if sel.matches(labels):
                out.append(pdb)
        return out

    def _pod_changed(self, pod: JsonDict) -> None:
        for pdb in self._pdbs_for(pod):
            self._enqueue(pdb)

    def _pod_updated(self, old: JsonDict, cur: JsonDict) -> None:
        self._pod_changed(cur)
        if meta(old).get("labels") != meta(cur).get("labels"):
            self._pod_changed(old)

    def _workload_changed(self, old: JsonDict, cur: JsonDict) -> None:
        if (old.get("spec") or {}).get("replicas") == (cur.get("spec") or {}).get("replicas"):
            return
        for pdb in self._pdbs.by_index(NAMESPACE_INDEX, meta(cur).get("namespace") or ""):
            self._enqueue(pdb)

    async def run(self, workers: int = 2) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            for inf in (self._pdbs, self._pods, *self._workloads.values()):
                await inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(run_workers(self.queue, self.sync, workers=workers, name=self.NAME),
                           name=f"{self.NAME}-workers")

    # ---- expected scale

    def _lookup(self, res: ResourceInfo, ns: str, name: str, uid: str) -> JsonDict | None:
        obj = self._workloads[res.kind].store.get(f"{ns}/{name}")
        if obj is None or meta(obj).get("uid") != uid:
            return None
        return obj

    def expected_scale(self, pods: Sequence[JsonDict]) -> int:
        """getExpectedScale: sum of the declared replicas of the pods' controllers, each
        counted once (a ReplicaSet owned by a Deployment counts as the Deployment)."""
        scales: dict[str, int] = {}
        seen: set[str] = set()
        for pod in pods:
            ref = controller_ref(pod)
            if ref is None:
                continue  # unmanaged pods are ignored, as upstream since 1.26
            ns = meta(pod).get("namespace") or ""
            uid = str(ref.get("uid"))
            if uid in seen:
                continue
            seen.add(uid)
            kind = ref.get("kind")
            found: tuple[str, int] | None = None
            if kind == "ReplicaSet":
                rs = self._lookup(REPLICASETS, ns, str(ref.get("name")), uid)
                if rs is not None:
                    owner = controller_ref(rs)
                    if owner is not None and owner.get("kind") == "Deployment":
                        d = self._lookup(DEPLOYMENTS, ns, str(owner.get("name")), str(owner.get("uid")))
                        if d is not None:
                            found = (str(owner.get("uid")), get_int(d.get("spec"), "replicas", 1))
                    if found is None:
                        found = (uid, get_int(rs.get("spec"), "replicas", 1))
            elif kind == "StatefulSet":
                ss = self._lookup(STATEFULSETS, ns, str(ref.get("name")), uid)
                if ss is not None:
                    found = (uid, get_int(ss.get("spec"), "replicas", 1))
            elif kind == "ReplicationController":
                rc = self._lookup(REPLICATIONCONTROLLERS, ns, str(ref.get("name")), uid)
                if rc is not None:
                    found = (uid, get_int(rc.get("spec"), "replicas", 1))
            if found is None:
                raise SyncFailed(f'found no controllers for pod "{meta(pod).get("name")}"')
            scales[found[0]] = found[1]
        return sum(scales.values())

    # ---- sync

    async def sync(self, key: str) -> None:
        pdb = self._pdbs.store.get(key)
        if pdb is None:
            return
        now = self._clock.now()
        now_s = rfc3339(now)
        ns = meta(pdb).get("namespace") or ""
        try:
            sel = label_selector_from_dict((pdb.get("spec") or {}).get("selector") or {})
        except ValueError as e:
            await self._write(pdb, fail_safe_status(pdb, str(e), now_s))
            return
        pods = [p for p in self._pods.by_index(NAMESPACE_INDEX, ns) if sel.matches(meta(p).get("labels") or {})]
        spec = pdb.get("spec") or {}
        needs_scale = spec.get("maxUnavailable") is not None or (
            isinstance(spec.get("minAvailable"), str) and str(spec.get("minAvailable")).endswith("%"))
        try:
            scale = self.expected_scale(pods) if needs_scale else None
            expected, desired = desired_and_expected(pdb, pods, scale)
        except (SyncFailed, ValueError) as e:
            self.recorder.event(pdb, "Warning", "CalculateExpectedPodCountFailed",
                                f"Failed to calculate the number of expected pods: {e}")
            await self._write(pdb, fail_safe_status(pdb, str(e), now_s))
            return
        disrupted, recheck = build_disrupted(pdb, pods, now)
        healthy = count_healthy(pods, disrupted, now)
        await self._write(pdb, pdb_status(pdb, expected=expected, desired=desired, healthy=healthy,
                                          disrupted=disrupted, now=now_s))
        if recheck is not None:
            self.queue.add_after(key, max(0.0, (recheck - now).total_seconds()) + 0.5)

    async def _write(self, pdb: JsonDict, status: JsonDict) -> None:
        old = pdb.get("status") or {}

        def strip(s: JsonDict) -> JsonDict:
            s = dict(s)
            s["conditions"] = [{k: v for k, v in c.items() if k != "lastTransitionTime"}
                               for c in s.get("conditions") or []]
            return {k: v for k, v in s.items() if v not in (None, {}, 0)}
        if strip(old) == strip(status):
            return
        body = copy.copy(pdb)
        body["status"] = status
        try:
            await self._client.update_status(PODDISRUPTIONBUDGETS, body, read_only=True)
        except NotFoundError:
            return
        except ConflictError:
            self.queue.add_rate_limited(object_key(pdb))
