"""Disruption controller (layer L4), after kube-controller-manager's `pkg/controller/disruption`.

Keeps every PodDisruptionBudget's status current so the eviction subresource (in the API
server) can decide: currentHealthy (Ready, not terminating, not recently evicted pods),
desiredHealthy and expectedPods (from minAvailable / maxUnavailable, ints or percentages; a
percentage, and maxUnavailable, are taken of the owning controllers' declared scale),
disruptionsAllowed, disruptedPods (evictions the API server recorded, kept until the pod is
seen terminating or for 2 minutes), observedGeneration and the DisruptionAllowed condition
(SufficientPods / InsufficientPods / SyncFailed). It also resets a pod's DisruptionTarget=True
condition to False when the pod has not started terminating 2 minutes after it was set.

Data flow: PDB, Pod and workload informers -> PDB keys -> `sync(key)` -> `poddisruptionbudgets/status`;
pod events -> pod keys -> `sync_stale_pod_disruption(key)` -> `pods/status`.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from minik3s.api.errors import ConflictError, NotFoundError
from minik3s.api.helpers.pods import is_pod_ready, pod_condition
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
    is_pod_terminal,
    meta,
    now_str,
    run_workers,
    scaled_value,
)
from minik3s.controllers.replicaset import NAMESPACE_INDEX, namespace_index
from minik3s.utils.clock import Clock, parse_time, rfc3339

logger = logging.getLogger(__name__)

DELETION_TIMEOUT = 120.0  # seconds an eviction stays in disruptedPods without the pod terminating
STALE_POD_DISRUPTION_TIMEOUT = 120.0  # seconds a DisruptionTarget=True waits for the pod to terminate
TERMINATION_BY_KUBELET = "TerminationByKubelet"  # v1.PodReasonTerminationByKubelet: never stale
_BY_Q = {r.qualified: r for r in builtin_resources()}
STATEFULSETS = _BY_Q["statefulsets.apps"]
REPLICATIONCONTROLLERS = _BY_Q["replicationcontrollers"]


class SyncFailed(Exception):
    """The PDB cannot be computed (e.g. a pod's controller is unknown): fail safe."""


def go_label_selector(sel: JsonDict | None) -> str:
    """How Go's %v prints a *metav1.LabelSelector (its generated String()), as the UnmanagedPods
    event quotes it. Example: {matchLabels: {foo: bar}} ->
    `&LabelSelector{MatchLabels:map[string]string{foo: bar,},MatchExpressions:[]LabelSelectorRequirement{},}`."""
    if sel is None:
        return "nil"
    ml = sel.get("matchLabels") or {}
    labels = "".join(f"{k}: {ml[k]}," for k in sorted(ml))
    exprs = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key') or ''},Operator:{e.get('operator') or ''},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in sel.get("matchExpressions") or [] if isinstance(e, dict))
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}")


def unmanaged_pods_message(pdb: JsonDict) -> str:
    return (f"Pods selected by this PodDisruptionBudget (selector: "
            f"{go_label_selector((pdb.get('spec') or {}).get('selector'))}) were found to be unmanaged. "
            "As a result, the status of the PDB cannot be calculated correctly, which may result in undefined "
            'behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.')


def _api_group(api_version: str) -> str | None:
    """schema.ParseGroupVersion's group: "" for "v1", "apps" for "apps/v1"; None when malformed."""
    if not api_version:
        return ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return ""
    if len(parts) == 2:
        return parts[0]
    return None


def verify_group_kind(ref: JsonDict, kind: str, groups: Sequence[str]) -> bool:
    """verifyGroupKind: the controllerRef names `kind` in one of `groups`."""
    group = _api_group(str(ref.get("apiVersion") or ""))
    return group is not None and ref.get("kind") == kind and group in groups


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
    """failSafe: no disruptions allowed, DisruptionAllowed=False/SyncFailed with the error; the
    rest of the status (observedGeneration too) stays as it was."""
    st = dict(pdb.get("status") or {})
    st["disruptionsAllowed"] = 0
    return _with_condition(pdb, st, {"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed",
                                     "message": message}, now)


def _with_condition(pdb: JsonDict, status: JsonDict, cond: JsonDict, now: str) -> JsonDict:
    """apimeta.SetStatusCondition on a copy of the PDB's conditions: an existing condition is
    updated in place (its transition time kept while the status holds), a new one appended;
    observedGeneration is the new status's."""
    status = {k: v for k, v in status.items() if v is not None}
    conditions = [dict(c) for c in (pdb.get("status") or {}).get("conditions") or []]
    new = dict(cond)
    new["observedGeneration"] = get_int(status, "observedGeneration")
    for i, cur in enumerate(conditions):
        if cur.get("type") == cond["type"]:
            same = cur.get("status") == cond["status"]
            new["lastTransitionTime"] = cur.get("lastTransitionTime", now) if same else now
            conditions[i] = new
            break
    else:
        new["lastTransitionTime"] = now
        conditions.append(new)
    status["conditions"] = conditions
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
        self.stale_queue = WorkQueue()
        self._pods.add_handler(on_add=self._pod_added, on_update=lambda o, n: self._pod_updated(o, n),
                               on_delete=self._pod_changed)

    def _enqueue(self, pdb: JsonDict) -> None:
        self.queue.add(object_key(pdb))

    def _pdbs_for(self, pod: JsonDict) -> list[JsonDict]:
        labels = meta(pod).get("labels") or {}
        out = []
        for pdb in self._pdbs.by_index(NAMESPACE_INDEX, meta(pod).get("namespace") or ""):
            try:
                sel = label_selector_from_dict((pdb.get("spec") or {}).get("selector"))
            except ValueError:
                continue
            if sel.matches(labels):
                out.append(pdb)
        return out

    def _pod_changed(self, pod: JsonDict) -> None:
        for pdb in self._pdbs_for(pod):
            self._enqueue(pdb)

    def _pod_added(self, pod: JsonDict) -> None:
        self._pod_changed(pod)
        self._check_stale_disruption(pod)

    def _pod_updated(self, old: JsonDict, cur: JsonDict) -> None:
        self._pod_changed(cur)
        if meta(old).get("labels") != meta(cur).get("labels"):
            self._pod_changed(old)
        self._check_stale_disruption(cur)

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
            tg.create_task(run_workers(self.stale_queue, self.sync_stale_pod_disruption, workers=workers,
                                       name=f"{self.NAME}-stale-pod-disruption"),
                           name=f"{self.NAME}-stale-workers")

    # ---- expected scale

    def _lookup(self, res: ResourceInfo, ns: str, name: str, uid: str) -> JsonDict | None:
        obj = self._workloads[res.kind].store.get(f"{ns}/{name}")
        if obj is None or meta(obj).get("uid") != uid:
            return None
        return obj

    def find_replica_set(self, ref: JsonDict, ns: str) -> tuple[str, int] | None:
        """getPodReplicaSet: a ReplicaSet not controlled by a Deployment -> (uid, spec.replicas)."""
        if not verify_group_kind(ref, "ReplicaSet", ("apps", "extensions")):
            return None
        rs = self._lookup(REPLICASETS, ns, str(ref.get("name")), str(ref.get("uid")))
        if rs is None:
            return None
        owner = controller_ref(rs)
        if owner is not None and owner.get("kind") == "Deployment":
            return None
        return str(meta(rs).get("uid")), get_int(rs.get("spec"), "replicas", 1)

    def find_deployment(self, ref: JsonDict, ns: str) -> tuple[str, int] | None:
        """getPodDeployment: the Deployment controlling the pod's ReplicaSet."""
        if not verify_group_kind(ref, "ReplicaSet", ("apps", "extensions")):
            return None
        rs = self._lookup(REPLICASETS, ns, str(ref.get("name")), str(ref.get("uid")))
        if rs is None:
            return None
        owner = controller_ref(rs)
        if owner is None or not verify_group_kind(owner, "Deployment", ("apps", "extensions")):
            return None
        d = self._lookup(DEPLOYMENTS, ns, str(owner.get("name")), str(owner.get("uid")))
        if d is None:
            return None
        return str(meta(d).get("uid")), get_int(d.get("spec"), "replicas", 1)

    def find_replication_controller(self, ref: JsonDict, ns: str) -> tuple[str, int] | None:
        """getPodReplicationController (core group only)."""
        if not verify_group_kind(ref, "ReplicationController", ("",)):
            return None
        rc = self._lookup(REPLICATIONCONTROLLERS, ns, str(ref.get("name")), str(ref.get("uid")))
        if rc is None:
            return None
        return str(meta(rc).get("uid")), get_int(rc.get("spec"), "replicas", 1)

    def find_stateful_set(self, ref: JsonDict, ns: str) -> tuple[str, int] | None:
        """getPodStatefulSet (apps only)."""
        if not verify_group_kind(ref, "StatefulSet", ("apps",)):
            return None
        ss = self._lookup(STATEFULSETS, ns, str(ref.get("name")), str(ref.get("uid")))
        if ss is None:
            return None
        return str(meta(ss).get("uid")), get_int(ss.get("spec"), "replicas", 1)

    def find_scale_controller(self, ref: JsonDict, ns: str) -> tuple[str, int] | None:
        """getScaleController, for the built-in kinds with a scale subresource known to the
        informers (a ReplicaSet whose Deployment is gone counts with its own replicas).
        Raises SyncFailed for a kind it has no mapping for."""
        api_version = str(ref.get("apiVersion") or "")
        group = _api_group(api_version)
        res = next((r for r in (REPLICASETS, DEPLOYMENTS, STATEFULSETS, REPLICATIONCONTROLLERS)
                    if r.kind == ref.get("kind") and r.group == group), None)
        if res is None:  # the RESTMapper's NoKindMatchError for the one version searched
            version = api_version.rsplit("/", 1)[-1]
            raise SyncFailed(f'no matches for kind "{ref.get("kind")}" in version '
                             f'"{f"{group}/{version}" if group else version}"')
        obj = self._lookup(res, ns, str(ref.get("name")), str(ref.get("uid")))
        if obj is None:
            return None
        return str(meta(obj).get("uid")), get_int(obj.get("spec"), "replicas", 1)

    def expected_scale(self, pods: Sequence[JsonDict]) -> tuple[int, list[str]]:
        """getExpectedScale: sum of the declared replicas of the pods' controllers, each
        counted once (a ReplicaSet owned by a Deployment counts as the Deployment), and the
        names of the pods without a controller (left out, as upstream since 1.26).
        Raises SyncFailed when a pod's controller is found by no finder."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        finders = (self.find_replica_set, self.find_deployment, self.find_replication_controller,
                   self.find_stateful_set, self.find_scale_controller)
        for pod in pods:
            ref = controller_ref(pod)
            if ref is None:
                unmanaged.append(str(meta(pod).get("name")))
                continue
            if str(ref.get("uid")) in scales:
                continue
            ns = meta(pod).get("namespace") or ""
            for finder in finders:
                found = finder(ref, ns)
                if found is not None:
                    scales[found[0]] = found[1]
                    break
            else:
                raise SyncFailed(f'found no controllers for pod "{meta(pod).get("name")}"')
        return sum(scales.values()), unmanaged

    # ---- sync

    async def sync(self, key: str) -> None:
        pdb = self._pdbs.store.get(key)
        if pdb is None:
            return
        now = self._clock.now()
        now_s = rfc3339(now)
        ns = meta(pdb).get("namespace") or ""
        try:
            # a null selector selects nothing, an empty one every pod of the namespace (policy/v1)
            sel = label_selector_from_dict((pdb.get("spec") or {}).get("selector"))
        except ValueError as e:
            self.recorder.event(pdb, "Warning", "NoPods", f"Failed to get pods: {e}")
            await self._write(pdb, fail_safe_status(pdb, str(e), now_s))
            return
        pods = [p for p in self._pods.by_index(NAMESPACE_INDEX, ns) if sel.matches(meta(p).get("labels") or {})]
        if not pods:
            self.recorder.event(pdb, "Normal", "NoPods", "No matching pods found")
        spec = pdb.get("spec") or {}
        needs_scale = spec.get("maxUnavailable") is not None or (
            isinstance(spec.get("minAvailable"), str) and str(spec.get("minAvailable")).endswith("%"))
        unmanaged: list[str] = []
        try:
            scale: int | None = None
            if needs_scale:
                scale, unmanaged = self.expected_scale(pods)
            expected, desired = desired_and_expected(pdb, pods, scale)
        except (SyncFailed, ValueError) as e:
            self.recorder.event(pdb, "Warning", "CalculateExpectedPodCountFailed",
                                f"Failed to calculate the number of expected pods: {e}")
            await self._write(pdb, fail_safe_status(pdb, str(e), now_s))
            return
        if unmanaged:
            logger.debug("%s: unmanaged pods pdb=%s pods=%s", self.NAME, key, unmanaged)
            self.recorder.event(pdb, "Warning", "UnmanagedPods", unmanaged_pods_message(pdb))
        disrupted, recheck = build_disrupted(pdb, pods, now)
        healthy = count_healthy(pods, disrupted, now)
        await self._write(pdb, pdb_status(pdb, expected=expected, desired=desired, healthy=healthy,
                                          disrupted=disrupted, now=now_s))
        if recheck is not None:
            self.queue.add_after(key, max(0.0, (recheck - now).total_seconds()) + 0.5)

    # ---- stale DisruptionTarget conditions

    def stale_disruption_wait(self, pod: JsonDict) -> float | None:
        """nonTerminatingPodHasStaleDisruptionCondition: None when the pod has no DisruptionTarget
        condition that can go stale (none, not True, set by the kubelet, a terminating or
        terminal pod); else the seconds left until it is stale (0 = now)."""
        if is_deleting(pod):
            return None
        cond = pod_condition(pod, "DisruptionTarget")
        if (cond is None or cond.get("status") != "True" or cond.get("reason") == TERMINATION_BY_KUBELET
                or is_pod_terminal(pod)):
            return None
        since = parse_time(cond.get("lastTransitionTime")) or datetime.min.replace(tzinfo=UTC)
        return max(0.0, STALE_POD_DISRUPTION_TIMEOUT - (self._clock.now() - since).total_seconds())

    def _check_stale_disruption(self, pod: JsonDict) -> None:
        wait = self.stale_disruption_wait(pod)
        if wait is not None:
            self.stale_queue.add_after(object_key(pod), wait)

    async def sync_stale_pod_disruption(self, key: str) -> None:
        """syncStalePodDisruption: a DisruptionTarget=True condition whose pod did not start
        terminating within 2 minutes is set back to False (reason and message cleared)."""
        pod = self._pods.store.get(key)
        if pod is None:
            return
        wait = self.stale_disruption_wait(pod)
        if wait is None:
            return
        if wait > 0:
            self.stale_queue.add_after(key, wait)
            return
        body = copy.copy(pod)
        status = dict(pod.get("status") or {})
        conditions = [dict(c) for c in status.get("conditions") or []]
        for i, c in enumerate(conditions):
            if c.get("type") == "DisruptionTarget":
                conditions[i] = {"type": "DisruptionTarget", "status": "False",
                                 "lastTransitionTime": now_str(self._clock)}
        status["conditions"] = conditions
        body["status"] = status
        try:
            await self._client.update_status(PODS, body, read_only=True)
        except NotFoundError:
            return
        logger.info("%s: reset stale DisruptionTarget condition to False pod=%s", self.NAME, key)

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
