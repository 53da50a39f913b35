"""The gang bookkeeping both gang plugins share (upstream: scheduler-plugins coscheduling/core
PodGroupManager), layer L4.

It answers, from informer caches and the framework's waiting map only (never the API):
which gang a pod is in and what the gang asks for (minik3s.api.helpers.gang), how many
members exist, how many are *assigned* (assumed by this scheduler or bound), which members are
parked at Permit, and whether the cluster could hold the gang's `minResources` at all.

Data flow: pod informer (indexed by gang key) + PodGroup / Workload / Queue informers ->
PodGroupManager -> Coscheduling / GangScheduling extension points. Reserve adds a pod to its
gang's reserved set and Unreserve removes it, so "assigned" = reserved-or-bound members that
still exist. Example: minMember 4, three members already waiting at Permit; the fourth passes
Reserve -> assigned 4 >= 4 -> Permit allows all four at once, and only then do they bind.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import UTC
from typing import Any, cast

from minik3s.api.gang import VOLCANO_PODGROUPS, VOLCANO_QUEUES, XK8S_PODGROUPS, GangApi
from minik3s.api.helpers.gang import (
    GANG_INDEX,
    GroupPolicy,
    GroupRef,
    gang_index,
    group_key,
    group_policy,
    group_ref,
    task_name,
)
from minik3s.api.resources import PODS, WORKLOADS, ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.utils.clock import Clock, parse_time
from scheduler.framework.interface import Handle
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins.helpers import as_pod_info

logger = logging.getLogger(__name__)

GROUP_RESOURCES: dict[GangApi, ResourceInfo] = {
    "volcano": VOLCANO_PODGROUPS,
    "x-k8s": XK8S_PODGROUPS,
    "workload": WORKLOADS,
}
TERMINAL_PHASES = ("Succeeded", "Failed")


def _uid(pod: JsonDict) -> str:
    return str((pod.get("metadata") or {}).get("uid") or "")


def _terminal(pod: JsonDict) -> bool:
    return (pod.get("status") or {}).get("phase") in TERMINAL_PHASES


def format_resources(res: dict[str, int]) -> str:
    """`cpu: 500m, nvidia.com/gpu: 1` (cpu in milli-cores, the rest in base units), sorted."""
    return ", ".join(f"{k}: {v}m" if k == "cpu" else f"{k}: {v}" for k, v in sorted(res.items()))


def ref_of(x: Any) -> GroupRef | None:
    """The gang of a pod dict, PodInfo or queued pod; cached on the PodInfo (hot in QueueSort
    and queueing hints; PodInfos are immutable, a changed pod gets a new one)."""
    if isinstance(x, dict):
        return group_ref(x)
    pi = x if isinstance(x, PodInfo) else as_pod_info(x)
    ex = pi._extra
    if ex is None:
        ex = pi._extra = {}
    else:
        hit = ex.get("gang")
        if hit is not None:
            return cast(GroupRef | None, hit[0])
    ref = group_ref(pi.pod)
    ex["gang"] = (ref,)
    return ref


class PodGroupManager:
    """Gang state for the APIs in `apis` (Coscheduling: volcano + x-k8s; GangScheduling: workload)."""

    def __init__(self, handle: Handle | None, *, apis: Iterable[GangApi], clock: Clock | None = None) -> None:
        self.apis = frozenset(apis)
        self.handle = handle
        informers = handle.informers if handle is not None else None
        self.clock = clock or (handle.clock if handle is not None else Clock())
        self._pods: Any = None
        self._groups: dict[GangApi, Any] = {}
        self._queues: Any = None
        if informers is not None:
            self._pods = getattr(informers.informer(PODS), "store", None)
            if self._pods is not None and hasattr(self._pods, "add_index"):
                self._pods.add_index(GANG_INDEX, gang_index)
            for api in sorted(self.apis):
                self._groups[api] = informers.informer(GROUP_RESOURCES[api])
            if "volcano" in self.apis:
                self._queues = informers.informer(VOLCANO_QUEUES)
        # the pod informer's store, indexed by gang key
        # gang key -> uids that passed Reserve (assumed by us) and were not unreserved
        self._reserved: dict[str, set[str]] = {}
        # gang key -> monotonic deadline: recently rejected (podGroupBackoffSeconds)
        self._backed_off: dict[str, float] = {}
        # gang key -> monotonic deadline: minResources check passed (valid one timeout window)
        self._permitted: dict[str, float] = {}
        # (gang key, group uid) -> creation time on the monotonic scale (QueueSort)
        self._created: dict[tuple[str, str], float] = {}

    # ---- membership -----------------------------------------------------------------------------
    def ref(self, pod: JsonDict) -> GroupRef | None:
        ref = group_ref(pod)
        return ref if ref is not None and ref.api in self.apis else None

    def pod_ref(self, pod: PodInfo) -> GroupRef | None:
        """`ref` of a PodInfo, read through its cache (`ref_of`): the scheduling cycle asks it
        at PreFilter, Reserve and Permit."""
        ref = ref_of(pod)
        return ref if ref is not None and ref.api in self.apis else None

    def group_object(self, ref: GroupRef) -> JsonDict | None:
        inf = self._groups.get(ref.api)
        if inf is None:
            return None
        obj: JsonDict | None = inf.store.get(ref.object_key)
        return obj

    def policy(self, ref: GroupRef) -> GroupPolicy | None:
        return group_policy(ref, self.group_object(ref))

    def queue_exists(self, name: str) -> bool:
        return self._queues is not None and self._queues.store.get(name) is not None

    def members(self, ref: GroupRef) -> list[JsonDict]:
        if self._pods is None:
            return []
        if hasattr(self._pods, "by_index"):
            pods: list[JsonDict] = self._pods.by_index(GANG_INDEX, ref.key)
            return pods
        return [p for p in self._pods.list() if group_key(p) == ref.key]

    def assigned(self, ref: GroupRef, *, exclude_uid: str = "") -> int:
        """Members assumed by this scheduler (reserved) or bound, not terminated. Reservations
        of members now bound (the informer shows their nodeName) or gone are dropped here, so
        the reserved sets stay as small as the gangs in flight."""
        reserved = self._reserved.get(ref.key)
        n = 0
        keep: set[str] = set()
        for p in self.members(ref):
            uid = _uid(p)
            bound = bool((p.get("spec") or {}).get("nodeName"))
            if reserved is not None and uid in reserved and not bound:
                keep.add(uid)
            if uid == exclude_uid or _terminal(p):
                continue
            if bound or (reserved is not None and uid in reserved):
                n += 1
        if reserved is not None and keep != reserved:
            if keep:
                self._reserved[ref.key] = keep
            else:
                del self._reserved[ref.key]
        return n

    def assigned_by_task(self, ref: GroupRef, *, exclude_uid: str = "") -> dict[str, int]:
        reserved = self._reserved.get(ref.key, set())
        out: dict[str, int] = {}
        for p in self.members(ref):
            if _terminal(p) or (exclude_uid and _uid(p) == exclude_uid):
                continue
            if _uid(p) in reserved or (p.get("spec") or {}).get("nodeName"):
                t = task_name(p)
                out[t] = out.get(t, 0) + 1
        return out

    def members_by_task(self, ref: GroupRef) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.members(ref):
            t = task_name(p)
            out[t] = out.get(t, 0) + 1
        return out

    def pending_siblings(self, ref: GroupRef, *, exclude_uid: str = "") -> list[JsonDict]:
        """Members not bound, not reserved and not terminated (candidates to activate)."""
        reserved = self._reserved.get(ref.key, set())
        return [p for p in self.members(ref)
                if _uid(p) != exclude_uid and _uid(p) not in reserved and not _terminal(p)
                and not (p.get("spec") or {}).get("nodeName")]

    def reserve(self, ref: GroupRef, uid: str) -> None:
        self._reserved.setdefault(ref.key, set()).add(uid)

    def unreserve(self, ref: GroupRef, uid: str) -> None:
        s = self._reserved.get(ref.key)
        if s is not None:
            s.discard(uid)
            if not s:
                del self._reserved[ref.key]

    def reserved(self, ref: GroupRef) -> set[str]:
        return set(self._reserved.get(ref.key, ()))

    def waiting_pods(self, ref: GroupRef) -> list[Any]:
        """Members parked at Permit (framework WaitingPod objects)."""
        if self.handle is None:
            return []
        out = []
        for wp in self.handle.iterate_waiting_pods():
            r = group_ref(wp.pod)
            if r is not None and r.key == ref.key:
                out.append(wp)
        return out

    # ---- backoff and the minResources window -----------------------------------------------------
    def back_off(self, ref: GroupRef, seconds: float) -> None:
        if seconds > 0:
            self._backed_off[ref.key] = self.clock.monotonic() + seconds

    def backed_off(self, ref: GroupRef) -> bool:
        until = self._backed_off.get(ref.key)
        if until is None:
            return False
        if until <= self.clock.monotonic():
            del self._backed_off[ref.key]
            return False
        return True

    def permit_window(self, ref: GroupRef, seconds: float) -> None:
        if len(self._permitted) > 10_000:  # drop windows of gangs long gone
            now = self.clock.monotonic()
            self._permitted = {k: v for k, v in self._permitted.items() if v > now}
        self._permitted[ref.key] = self.clock.monotonic() + seconds

    def in_permit_window(self, ref: GroupRef) -> bool:
        until = self._permitted.get(ref.key)
        return until is not None and until > self.clock.monotonic()

    def forget_permit_window(self, ref: GroupRef) -> None:
        self._permitted.pop(ref.key, None)

    def resource_gap(self, ref: GroupRef, policy: GroupPolicy, nodes: Sequence[NodeInfo]) -> dict[str, int]:
        """What `minResources` (+ minMember pod slots) lacks over the free capacity of all nodes,
        counting the group's own pods as free (upstream CheckClusterResource); {} if it fits.
        Example: minResources nvidia.com/gpu 4 on three free 1-GPU nodes -> {nvidia.com/gpu: 1}."""
        need = {k: v for k, v in policy.min_resources.items() if v > 0}
        if policy.min_member > 0:
            need["pods"] = policy.min_member
        if not need:
            return {}
        key = ref.key
        for ni in nodes:
            if ni.node is None:
                continue
            own = [p for p in ni.pods if group_key(p.pod) == key]
            pods_free = ni.allocatable.allowed_pod_number - len(ni.pods) + len(own)
            for name in list(need):
                if name == "pods":
                    free = pods_free
                else:
                    free = ni.allocatable.get(name) - ni.requested.get(name) + sum(p.requests.get(name) for p in own)
                left = need[name] - max(free, 0)
                if left <= 0:
                    del need[name]
                else:
                    need[name] = left
            if not need:
                return {}
        return need

    # ---- ordering --------------------------------------------------------------------------------
    def creation_monotonic(self, ref: GroupRef) -> float | None:
        """The group object's creationTimestamp on the clock's monotonic scale (queue timestamps
        are monotonic), or None without a group object."""
        obj = self.group_object(ref)
        if obj is None:
            return None
        meta = obj.get("metadata") or {}
        ck = (ref.key, str(meta.get("uid") or ""))
        hit = self._created.get(ck)
        if hit is not None:
            return hit
        created = parse_time(meta.get("creationTimestamp"))
        if created is None:
            return None
        now = self.clock.now()
        if now.tzinfo is None:
            now = now.replace(tzinfo=UTC)
        value = self.clock.monotonic() - (now - created).total_seconds()
        if len(self._created) > 10_000:
            self._created.clear()
        self._created[ck] = value
        return value
