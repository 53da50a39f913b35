"""Gang status controller (layer L4): each gang API's status and events, as its project keeps them.

- scheduler-plugins PodGroup (`scheduling.x-k8s.io/v1alpha1`, its controllers/podgroup_controller):
  "" -> Pending; Pending -> Scheduling once minMember pods exist (scheduleStartTime and
  occupiedBy are filled then); Scheduling -> Running once running + succeeded >= minMember;
  Failed when a member failed and failed + running + succeeded >= minMember; Finished when
  succeeded >= minMember; back to Pending when fewer than minMember pods exist. `running`,
  `succeeded`, `failed` count member pods. Written through `podgroups/status`.
- Volcano PodGroup (`scheduling.volcano.sh/v1beta1`, its scheduler's jobStatus + gang plugin
  + enqueue action): Pending -> Inqueue once minMember pods exist and minResources fit the
  cluster's allocatable x 1.2 (the overcommit plugin's factor) less what bound pods request;
  Running once allocated (bound or succeeded) >= minMember, Completed when all of those
  succeeded; Unknown while some run but the group is unschedulable; Pending again when it
  falls below minMember (unless Inqueue). Conditions: `Unschedulable` (NotEnoughTasks /
  NotEnoughResources) and `Scheduled` ("tasks in gang are ready to be scheduled"). The CRD has
  no status subresource, as Volcano's: status is written with the object.
- Workload (`scheduling.k8s.io/v1alpha1`) has no status in the v1.35 alpha: events only.

Events on the group object: Warning `Unschedulable` when a gang waits (e.g. "3/4 pods are
scheduled, minMember 4; 1 Pending: 1 Unschedulable"), Normal `Scheduled` when it reaches its
minimum. Data flow: pod / PodGroup / Workload / node informers -> group keys -> `sync(key)` ->
status write (+ events through the EventRecorder).
"""

from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass
from typing import Any

from minik3s.api.errors import NotFoundError
from minik3s.api.gang import (
    REASON_NOT_ENOUGH_RESOURCES,
    REASON_NOT_ENOUGH_TASKS,
    VOLCANO_COMPLETED,
    VOLCANO_INQUEUE,
    VOLCANO_PENDING,
    VOLCANO_PODGROUPS,
    VOLCANO_RUNNING,
    VOLCANO_SCHEDULED_TYPE,
    VOLCANO_UNKNOWN,
    VOLCANO_UNSCHEDULABLE_TYPE,
    XK8S_FAILED,
    XK8S_FINISHED,
    XK8S_PENDING,
    XK8S_PODGROUPS,
    XK8S_RUNNING,
    XK8S_SCHEDULING,
)
from minik3s.api.helpers.gang import GANG_INDEX, GroupRef, gang_index, group_policy, group_ref
from minik3s.api.helpers.pods import pod_condition
from minik3s.api.helpers.resources import node_allocatable, pod_requests
from minik3s.api.resources import NODES, PODS, WORKLOADS, ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import meta, now_str, run_workers, set_condition
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

SCHEDULED_REASON = "tasks in gang are ready to be scheduled"
OVERCOMMIT_FACTOR = 1.2
_RESOURCES: dict[str, ResourceInfo] = {"volcano": VOLCANO_PODGROUPS, "x-k8s": XK8S_PODGROUPS, "workload": WORKLOADS}


@dataclass(slots=True)
class GangStats:
    """Member pod counts of one gang."""

    total: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    bound: int = 0  # assigned to a node and not terminated
    pending: int = 0  # not assigned
    unschedulable: int = 0  # pending with PodScheduled=False, reason Unschedulable
    first_owner: str = ""

    @property
    def allocated(self) -> int:
        return self.bound + self.succeeded


def gang_stats(pods: list[JsonDict]) -> GangStats:
    s = GangStats(total=len(pods))
    owners: list[str] = []
    for p in pods:
        phase = (p.get("status") or {}).get("phase")
        if phase == "Succeeded":
            s.succeeded += 1
            continue
        if phase == "Failed":
            s.failed += 1
            continue
        if phase == "Running":
            s.running += 1
        if (p.get("spec") or {}).get("nodeName"):
            s.bound += 1
        else:
            s.pending += 1
            cond = pod_condition(p, "PodScheduled")
            if cond is not None and cond.get("status") == "False" and cond.get("reason") == "Unschedulable":
                s.unschedulable += 1
        m = meta(p)
        for ref in m.get("ownerReferences") or ():
            if isinstance(ref, dict) and ref.get("name"):
                owners.append(f"{m.get('namespace') or 'default'}/{ref['name']}")
    s.first_owner = ",".join(sorted(set(owners)))
    return s


def waiting_message(stats: GangStats, min_member: int, *, what: str = "minMember") -> str:
    """`3/4 pods are scheduled, minMember 4; 1 Pending: 1 Unschedulable`."""
    msg = f"{stats.allocated}/{stats.total} pods are scheduled, {what} {min_member}"
    if stats.pending:
        msg += f"; {stats.pending} Pending"
        if stats.unschedulable:
            msg += f": {stats.unschedulable} Unschedulable"
    return msg


def not_enough_tasks_message(stats: GangStats, min_member: int, *, what: str = "minMember") -> str:
    return f"{stats.total}/{min_member} pods of the gang exist, {what} {min_member}"


class PodGroupStatusController:
    NAME = "podgroup-status-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._pods = informers.informer(PODS)
        self._pods.add_index(GANG_INDEX, gang_index)
        self._nodes = informers.informer(NODES)
        self._groups = {api: informers.informer(res) for api, res in _RESOURCES.items()}
        self.queue = WorkQueue()
        self.recorder = EventRecorder(client, self.NAME, clock=self._clock)
        # gang key -> last (reason, message) event, so waiting gangs do not repeat themselves
        self._last_event: dict[str, tuple[str, str]] = {}
        # Workload ns/name -> the gangs (podGroup x replica key) its pods name
        self._workload_gangs: dict[str, set[GroupRef]] = {}
        self._pods.add_handler(on_add=self._pod_changed, on_update=self._pod_updated, on_delete=self._pod_changed)
        for api, inf in self._groups.items():
            self._watch_groups(api, inf)
        self._nodes.add_handler(on_add=self._capacity_changed)

    # ---- event handlers ---------------------------------------------------------------------------
    def _watch_groups(self, api: str, inf: Any) -> None:
        def changed(obj: JsonDict) -> None:
            self._enqueue(api, obj)

        def updated(_old: JsonDict, new: JsonDict) -> None:
            self._enqueue(api, new)

        inf.add_handler(on_add=changed, on_update=updated, on_delete=changed)

    def _enqueue(self, api: str, obj: JsonDict) -> None:
        m = meta(obj)
        self.queue.add(f"{api}|{m.get('namespace') or 'default'}/{m.get('name')}")

    def _enqueue_ref(self, ref: GroupRef | None) -> None:
        if ref is not None:
            if ref.api == "workload":
                self._workload_gangs.setdefault(ref.object_key, set()).add(ref)
            self.queue.add(f"{ref.api}|{ref.object_key}")

    def _pod_changed(self, pod: JsonDict) -> None:
        self._enqueue_ref(group_ref(pod))

    def _pod_updated(self, old: JsonDict, new: JsonDict) -> None:
        a, b = group_ref(old), group_ref(new)
        self._enqueue_ref(b)
        if a != b:
            self._enqueue_ref(a)

    def _capacity_changed(self, _node: JsonDict) -> None:
        for obj in self._groups["volcano"].store.list():
            if (obj.get("status") or {}).get("phase") in (None, "", VOLCANO_PENDING):
                self._enqueue("volcano", obj)

    async def run(self, workers: int = 2) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            for inf in (self._pods, self._nodes):
                await inf.wait_for_sync()
            # the gang CRDs may be absent on a foreign server: do not block on their informers
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(run_workers(self.queue, self.sync, workers=workers, name=self.NAME),
                           name=f"{self.NAME}-workers")

    # ---- reconcile ----------------------------------------------------------------------------------
    def _members(self, ref: GroupRef) -> list[JsonDict]:
        pods: list[JsonDict] = self._pods.by_index(GANG_INDEX, ref.key)
        return pods

    async def sync(self, key: str) -> None:
        api, _, nskey = key.partition("|")
        inf = self._groups.get(api)
        if inf is None:
            return
        obj = inf.store.get(nskey)
        ns, _, name = nskey.partition("/")
        if obj is None:
            prefix = f"{api}/{nskey}"
            for k in [k for k in self._last_event if k == prefix or k.startswith(prefix + "/")]:
                del self._last_event[k]
            if api == "workload":
                self._workload_gangs.pop(nskey, None)
            return
        if api == "workload":
            self._sync_workload(obj, ns, name)
        elif api == "x-k8s":
            await self._sync_xk8s(obj, GroupRef("x-k8s", ns, name))
        else:
            await self._sync_volcano(obj, GroupRef("volcano", ns, name))

    def _event_once(self, obj: JsonDict, key: str, event_type: str, reason: str, message: str, *,
                    token: str = "") -> None:
        """Record the event unless the gang's last one had the same reason and token (the
        message, unless the caller groups messages, e.g. one event while members appear)."""
        mark = (reason, token or message)
        if self._last_event.get(key) == mark:
            return
        self._last_event[key] = mark
        self.recorder.event(obj, event_type, reason, message)

    def _gang_events(self, obj: JsonDict, ref: GroupRef, stats: GangStats, min_member: int, *,
                     what: str = "minMember", prefix: str = "") -> None:
        if min_member <= 0:
            return
        if stats.allocated >= min_member:
            self._event_once(obj, ref.key, "Normal", "Scheduled",
                             f"{prefix}{stats.allocated}/{stats.total} pods are scheduled, {what} {min_member}")
        elif stats.total < min_member:
            self._event_once(obj, ref.key, "Warning", "Unschedulable",
                             prefix + not_enough_tasks_message(stats, min_member, what=what),
                             token=REASON_NOT_ENOUGH_TASKS)
        elif stats.unschedulable:
            self._event_once(obj, ref.key, "Warning", "Unschedulable",
                             prefix + waiting_message(stats, min_member, what=what))

    # Workload: events per gang (podGroup x replica key), no status
    def _sync_workload(self, obj: JsonDict, ns: str, name: str) -> None:
        # each (podGroup, replica key) is one gang; replica keys are known only from pods
        refs = {r.key: r for r in self._workload_gangs.get(f"{ns}/{name}", set())}
        for ref in list(refs.values()):
            if not self._members(ref):
                del refs[ref.key]
                self._workload_gangs[f"{ns}/{name}"].discard(ref)
        for ref in refs.values():
            policy = group_policy(ref, obj)
            if policy is None or not policy.gang:
                continue
            pods = self._members(ref)
            if not pods:
                continue
            stats = gang_stats(pods)
            tail = f"/{ref.replica_key}" if ref.replica_key else ""
            self._gang_events(obj, ref, stats, policy.min_member, what="minCount",
                              prefix=f"podGroup {ref.pod_group}{tail}: ")

    async def _sync_xk8s(self, obj: JsonDict, ref: GroupRef) -> None:
        policy = group_policy(ref, obj)
        if policy is None:
            return
        pods = self._members(ref)
        stats = gang_stats(pods)
        old = obj.get("status") or {}
        status = copy.deepcopy(old)
        phase = old.get("phase") or ""
        mm = policy.min_member
        if phase == "":
            status["phase"] = XK8S_PENDING
        elif phase == XK8S_PENDING:
            if stats.total >= mm:
                status["phase"] = XK8S_SCHEDULING
                status["scheduleStartTime"] = now_str(self._clock)
                if stats.first_owner:
                    status["occupiedBy"] = stats.first_owner
        else:
            status["running"], status["succeeded"], status["failed"] = stats.running, stats.succeeded, stats.failed
            if stats.total < mm:
                status["phase"] = XK8S_PENDING
            else:
                if phase == XK8S_SCHEDULING and stats.running + stats.succeeded >= mm:
                    status["phase"] = XK8S_RUNNING
                if stats.failed and stats.failed + stats.running + stats.succeeded >= mm:
                    status["phase"] = XK8S_FAILED
                if stats.succeeded >= mm:
                    status["phase"] = XK8S_FINISHED
        self._gang_events(obj, ref, stats, mm)
        if status != old:
            new = copy.deepcopy(obj)
            new["status"] = status
            try:
                await self._client.update_status(XK8S_PODGROUPS, new, read_only=True)
            except NotFoundError:
                return
            # the informer's update event re-runs the state machine for the next transition
            if status.get("phase") != phase:
                logger.info("podgroup phase group=%s phase=%s->%s", ref.key, phase or '""', status.get("phase"))

    def _fits_overcommitted(self, need: dict[str, int], ref: GroupRef) -> bool:
        if not need:
            return True
        total: dict[str, float] = {}
        for node in self._nodes.store.list():
            for k, v in node_allocatable(node).items():
                total[k] = total.get(k, 0.0) + v * OVERCOMMIT_FACTOR
        for pod in self._pods.store.list():
            spec = pod.get("spec") or {}
            if not spec.get("nodeName") or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            r = group_ref(pod)
            if r is not None and r.key == ref.key:
                continue
            for k, v in pod_requests(pod).items():
                if k in need:
                    total[k] = total.get(k, 0.0) - v
        return all(total.get(k, 0.0) >= v for k, v in need.items())

    async def _sync_volcano(self, obj: JsonDict, ref: GroupRef) -> None:
        policy = group_policy(ref, obj)
        if policy is None:
            return
        pods = self._members(ref)
        stats = gang_stats(pods)
        old = obj.get("status") or {}
        status = copy.deepcopy(old)
        conditions: list[JsonDict] = list(status.get("conditions") or [])
        now = now_str(self._clock)
        mm = policy.min_member
        phase = old.get("phase") or VOLCANO_PENDING
        ready = stats.allocated >= mm
        if ready:
            set_condition(conditions, {"type": VOLCANO_SCHEDULED_TYPE, "status": "True",
                                       "reason": SCHEDULED_REASON, "message": ""}, now=now)
            unsched = next((c for c in conditions if c.get("type") == VOLCANO_UNSCHEDULABLE_TYPE), None)
            if unsched is not None and unsched.get("status") == "True":
                set_condition(conditions, {**unsched, "status": "False"}, now=now)
        elif stats.total < mm:
            set_condition(conditions, {"type": VOLCANO_UNSCHEDULABLE_TYPE, "status": "True",
                                       "reason": REASON_NOT_ENOUGH_TASKS,
                                       "message": not_enough_tasks_message(stats, mm)}, now=now)
        elif stats.unschedulable:
            set_condition(conditions, {"type": VOLCANO_UNSCHEDULABLE_TYPE, "status": "True",
                                       "reason": REASON_NOT_ENOUGH_RESOURCES,
                                       "message": waiting_message(stats, mm)}, now=now)
        unschedulable = any(c.get("type") == VOLCANO_UNSCHEDULABLE_TYPE and c.get("status") == "True"
                            for c in conditions)
        if stats.running and unschedulable:
            new_phase = VOLCANO_UNKNOWN
        elif ready and mm > 0:
            new_phase = VOLCANO_COMPLETED if stats.succeeded == stats.allocated else VOLCANO_RUNNING
        elif phase == VOLCANO_INQUEUE and stats.total >= mm:
            new_phase = VOLCANO_INQUEUE
        elif stats.total >= mm and self._fits_overcommitted(dict(policy.min_resources), ref):
            new_phase = VOLCANO_INQUEUE
        else:
            new_phase = VOLCANO_PENDING
        status["phase"] = new_phase
        status["running"], status["succeeded"], status["failed"] = stats.running, stats.succeeded, stats.failed
        if conditions:
            status["conditions"] = conditions
        self._gang_events(obj, ref, stats, mm)
        if status == old:
            return
        new = copy.deepcopy(obj)
        new["status"] = status
        try:
            await self._client.update(VOLCANO_PODGROUPS, new, read_only=True)
        except NotFoundError:
            return
        if new_phase != old.get("phase"):
            logger.info("podgroup phase group=%s phase=%s->%s", ref.key, old.get("phase") or '""', new_phase)
