"""Coscheduling: all-or-nothing placement of a PodGroup (upstream: kubernetes-sigs/scheduler-plugins
pkg/coscheduling), for Volcano (`scheduling.volcano.sh/v1beta1`) and scheduler-plugins
(`scheduling.x-k8s.io/v1alpha1`) PodGroups. `GangPlugin` holds the extension points the
Workload API's GangScheduling plugin (gang_scheduling.py) shares.

Extension points, in the order a gang's pod meets them:
- QueueSort: priority, then the *group's* creation time (a pod without a group: its queue
  timestamp, exactly as PrioritySort), then the group key, then the pod name, so a gang's pods
  leave activeQ back to back and an older gang is tried before a younger one.
- PreEnqueue: the PodGroup (and, for Volcano, its Queue) must exist.
- PreFilter (UnschedulableAndUnresolvable, so no preemption): the group failed recently
  (podGroupBackoffSeconds); fewer members exist than minMember (Volcano: or than a task's
  minTaskMember); minResources (plus minMember pod slots) exceed the cluster's free capacity
  (checked once per `permitWaitingTimeSeconds` window). A PodGroup that is missing passes, as
  upstream (Permit rejects "PodGroup not found"); GangScheduling rejects a missing Workload.
- PostFilter: a member fits nowhere and the group cannot reach minMember (more than 10 % of
  it missing) -> every waiting member is rejected (their reservations released), so two gangs
  that together exceed the cluster never each keep part of it; the group is backed off if it
  has all its minMember pods.
- Reserve / Unreserve: the member counts as assigned / no longer; Unreserve (a timeout or a
  rejection of any member) rejects every waiting member.
- Permit: Wait until assumed + bound members, the permitted pod counted, reach minMember
  (and each minTaskMember), then allow all waiting members at once; binding starts only
  then. The wait lasts `scheduleTimeoutSeconds` of the x-k8s PodGroup, else
  `permitWaitingTimeSeconds` (60 s).
- Queueing hints: a sibling pod added, relabelled or ungated, its PodGroup / Workload / Queue
  added or updated, a node added or grown, an assigned pod deleted. The first member to wait at
  Permit also activates its siblings waiting in backoff (upstream ActivateSiblings).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from minik3s.api.gang import VOLCANO_GROUP, WORKLOAD_GROUP, XK8S_GROUP, GangApi
from minik3s.api.helpers.gang import GroupPolicy, GroupRef, group_ref, task_name
from minik3s.api.types import JsonDict
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    GangDemand,
    GangDemandPlugin,
    Handle,
    PermitPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    QueueSortPlugin,
    ReservePlugin,
    Status,
)
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import SUCCESS, as_pod_info
from scheduler.plugins.podgroup_manager import PodGroupManager, format_resources, ref_of

logger = logging.getLogger(__name__)

DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60
# PostFilter: when at most this fraction of minMember is missing, only the failing pod fails
POD_GROUP_REJECT_PERCENTAGE = 0.1
_API_OF_GROUP = {VOLCANO_GROUP: "volcano", XK8S_GROUP: "x-k8s", WORKLOAD_GROUP: "workload"}


class CoschedulingArgs(BaseModel):
    """CoschedulingArgs (scheduler-plugins apis/config): the Permit wait when the PodGroup sets
    no scheduleTimeoutSeconds, and how long a rejected group is refused at PreFilter (0 = off)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    permit_waiting_time_seconds: int = Field(default=DEFAULT_PERMIT_WAITING_TIME_SECONDS, gt=0,
                                             alias="permitWaitingTimeSeconds")
    pod_group_backoff_seconds: int = Field(default=0, ge=0, alias="podGroupBackoffSeconds")


class GangPlugin(PreEnqueuePlugin, PreFilterPlugin, PostFilterPlugin, GangDemandPlugin, ReservePlugin,
                 PermitPlugin, EnqueueExtensions):
    """The gang extension points, for the APIs in `APIS`."""

    APIS: ClassVar[tuple[GangApi, ...]] = ()
    # scheduler-plugins: a pod naming a group that does not exist passes PreFilter (Permit rejects
    # it) and PostFilter answers "can not find pod group"; otherwise PreFilter rejects it
    MISSING_GROUP_PASSES_PRE_FILTER: ClassVar[bool] = False
    Args = CoschedulingArgs

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        super().__init__(args if args is not None else CoschedulingArgs(), handle)
        self.mgr = PodGroupManager(handle, apis=self.APIS)
        self._event_memo: tuple[JsonDict, GroupRef | None] | None = None

    # ---- helpers ---------------------------------------------------------------------------------
    def _timeout(self, policy: GroupPolicy) -> float:
        if policy.schedule_timeout_seconds:
            return policy.schedule_timeout_seconds
        return float(self.args.permit_waiting_time_seconds)

    def _missing_group(self, ref: GroupRef) -> Status:
        if ref.api == "workload":
            if self.mgr.group_object(ref) is None:
                return Status.unresolvable(f"waiting for Workload {ref.object_key} to be created", plugin=self.NAME)
            return Status.unresolvable(f"podGroup {ref.pod_group!r} is not defined in Workload {ref.object_key}",
                                       plugin=self.NAME)
        return Status.unresolvable(f"podGroup {ref.object_key} not found", plugin=self.NAME)

    def _quorum(self, ref: GroupRef, policy: GroupPolicy, pod: PodInfo) -> bool:
        """Upstream: assigned + 1 >= minMember, the `+ 1` being `pod` at Permit. It counts once
        whether or not it passed Reserve or shows in the pod informer yet."""
        if self.mgr.assigned(ref, exclude_uid=pod.uid) + 1 < policy.min_member:
            return False
        if policy.min_task_member:
            by_task = self.mgr.assigned_by_task(ref, exclude_uid=pod.uid)
            own = task_name(pod.pod)
            by_task[own] = by_task.get(own, 0) + 1
            return all(by_task.get(t, 0) >= m for t, m in policy.min_task_member.items())
        return True

    # ---- PreEnqueue ------------------------------------------------------------------------------
    def pre_enqueue(self, pod: JsonDict) -> Status:
        ref = self.mgr.ref(pod)
        if ref is None:
            return SUCCESS
        policy = self.mgr.policy(ref)
        if policy is None:
            return self._missing_group(ref)
        if ref.api == "volcano":
            queue = policy.queue or "default"
            if not self.mgr.queue_exists(queue):
                return Status.unresolvable(f"queue {queue!r} of podGroup {ref.object_key} does not exist",
                                           plugin=self.NAME)
        return SUCCESS

    # ---- PreFilter -------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        ref = self.mgr.pod_ref(pod)
        if ref is None:
            return None, SUCCESS
        policy = self.mgr.policy(ref)
        if policy is None:
            return None, SUCCESS if self.MISSING_GROUP_PASSES_PRE_FILTER else self._missing_group(ref)
        if not policy.gang:
            return None, SUCCESS
        if self.mgr.backed_off(ref):
            return None, Status.unresolvable(f"podGroup {ref.display()} failed recently", plugin=self.NAME)
        n = len(self.mgr.members(ref))
        if n < policy.min_member:
            return None, Status.unresolvable(
                f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods number: {n}, "
                f"minMember of group: {policy.min_member}", plugin=self.NAME)
        if policy.min_task_member:
            by_task = self.mgr.members_by_task(ref)
            for task, m in sorted(policy.min_task_member.items()):
                if by_task.get(task, 0) < m:
                    return None, Status.unresolvable(
                        f"pre-filter pod {pod.name} cannot find enough pods of task {task}, current pods number: "
                        f"{by_task.get(task, 0)}, minTaskMember of task: {m}", plugin=self.NAME)
        if policy.min_resources and not self.mgr.in_permit_window(ref):
            gap = self.mgr.resource_gap(ref, policy, nodes)
            if gap:
                return None, Status.unresolvable(
                    f"podGroup {ref.display()} minResources do not fit the cluster, resource gap: "
                    f"{format_resources(gap)}", plugin=self.NAME)
            # upstream keeps the pass for the plugin-wide wait, not the group's scheduleTimeoutSeconds
            self.mgr.permit_window(ref, float(self.args.permit_waiting_time_seconds))
        return None, SUCCESS

    # ---- PostFilter ------------------------------------------------------------------------------
    async def post_filter(self, state: CycleState, pod: PodInfo,
                          filtered_node_status: dict[str, Status]) -> tuple[PostFilterResult | None, Status]:
        ref = self.mgr.pod_ref(pod)
        policy = self.mgr.policy(ref) if ref is not None else None
        if ref is not None and policy is None and self.MISSING_GROUP_PASSES_PRE_FILTER:
            return None, Status.unschedulable("can not find pod group", plugin=self.NAME)
        # a pod outside any gang: upstream also says "can not find pod group", but Coscheduling is in
        # the default profile here and every FailedScheduling message would end with it
        if ref is None or policy is None or not policy.gang:
            return None, Status.unschedulable(plugin=self.NAME)
        assigned = self.mgr.assigned(ref)
        if assigned >= policy.min_member:
            return None, Status.unschedulable(plugin=self.NAME)
        missing = (policy.min_member - assigned) / policy.min_member
        if missing <= POD_GROUP_REJECT_PERCENTAGE:
            return None, Status.unschedulable(plugin=self.NAME)
        waiting = self.mgr.waiting_pods(ref)
        for wp in waiting:
            wp.reject(self.NAME, "optimistic rejection in PostFilter")
        if len(self.mgr.members(ref)) >= policy.min_member:  # upstream: a group still missing pods is not backed off
            self.mgr.back_off(ref, float(self.args.pod_group_backoff_seconds))
        self.mgr.forget_permit_window(ref)
        if waiting:
            logger.info("gang rejected group=%s pod=%s waiting=%d", ref.key, pod.key, len(waiting))
        # no PostFilterResult: a nomination the pod holds stays (upstream's nil NominatingInfo is Noop)
        return None, Status.unschedulable(
            f"PodGroup {ref.display()} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter",
            plugin=self.NAME)

    # ---- gang-aware preemption -----------------------------------------------------------------
    def gang_demand(self, pod: PodInfo) -> GangDemand | None:
        """For DefaultPreemption: how many members of `pod`'s gang must still be placed (the pod
        included) and which pending siblings may take the other places, so it preempts only
        when the whole gang fits after the evictions."""
        ref = self.mgr.pod_ref(pod)
        policy = self.mgr.policy(ref) if ref is not None else None
        if ref is None or policy is None or not policy.gang:
            return None
        need = policy.min_member - self.mgr.assigned(ref, exclude_uid=pod.uid)
        siblings = [PodInfo(p) for p in self.mgr.pending_siblings(ref, exclude_uid=pod.uid)
                    if not (p.get("metadata") or {}).get("deletionTimestamp")
                    and not (p.get("spec") or {}).get("schedulingGates")]
        siblings.sort(key=lambda s: s.key)
        return GangDemand(ref.display(), need, siblings)

    # ---- Reserve ---------------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        ref = self.mgr.pod_ref(pod)
        if ref is not None:
            self.mgr.reserve(ref, pod.uid)
        return SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        ref = self.mgr.pod_ref(pod)
        if ref is None:
            return
        self.mgr.unreserve(ref, pod.uid)
        waiting = [wp for wp in self.mgr.waiting_pods(ref) if wp.pod_info.uid != pod.uid]
        for wp in waiting:
            wp.reject(self.NAME, "rejection in Unreserve")
        self.mgr.forget_permit_window(ref)
        if waiting:
            logger.info("gang released group=%s pod=%s waiting=%d", ref.key, pod.key, len(waiting))

    # ---- Permit ----------------------------------------------------------------------------------
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]:
        ref = self.mgr.pod_ref(pod)
        if ref is None:
            return SUCCESS, 0.0
        policy = self.mgr.policy(ref)
        if policy is None:
            return Status.unschedulable("PodGroup not found", plugin=self.NAME), 0.0
        if not policy.gang:
            return SUCCESS, 0.0
        waiting = self.mgr.waiting_pods(ref)
        if self._quorum(ref, policy, pod):
            for wp in waiting:
                wp.allow(self.NAME)
            logger.info("gang permitted group=%s pod=%s", ref.key, pod.key)
            return SUCCESS, 0.0
        if not waiting and self.handle is not None:
            # the first member to wait wakes its siblings that sit in backoff or unschedulable
            # (upstream ActivateSiblings), so the gang is tried together within the timeout
            self.handle.activate(self.mgr.pending_siblings(ref, exclude_uid=pod.uid))
        return Status.wait(self.NAME), self._timeout(policy)

    # ---- explain -------------------------------------------------------------------------------
    def explain_gang(self, pod: JsonDict) -> dict[str, Any] | None:
        """The pod's gang as this plugin sees it now (for `minik3s explain pod`)."""
        ref = self.mgr.ref(pod)
        if ref is None:
            return None
        policy = self.mgr.policy(ref)
        out: dict[str, Any] = {"api": ref.api, "group": ref.display(), "plugin": self.NAME}
        if policy is None:
            out["waiting"] = self._missing_group(ref).message()
            return out
        members = self.mgr.members(ref)
        reserved = self.mgr.reserved(ref)
        waiting = sorted(wp.pod_info.name for wp in self.mgr.waiting_pods(ref))
        bound = sorted(str((p.get("metadata") or {}).get("name")) for p in members
                       if (p.get("spec") or {}).get("nodeName"))
        out.update({
            "minMember": policy.min_member,
            "gang": policy.gang,
            "members": len(members),
            "assumed": len(waiting),
            "bound": len(bound),
            "assigned": self.mgr.assigned(ref),
            "waitingAtPermit": waiting,
            "boundPods": bound,
            "reserved": len(reserved),
        })
        if policy.min_resources:
            out["minResources"] = format_resources(policy.min_resources)
        if not policy.gang:
            out["waiting"] = ""
        elif out["assigned"] >= policy.min_member:
            out["waiting"] = ""
            out["state"] = "QuorumReached"
        elif self.mgr.backed_off(ref):
            out["state"] = "BackedOff"
            out["waiting"] = f"podGroup {ref.display()} failed recently"
        elif len(members) < policy.min_member:
            out["state"] = "WaitingForMembers"
            out["waiting"] = (f"{len(members)}/{policy.min_member} member pods exist; waiting for "
                              f"{policy.min_member - len(members)} more to be created")
        else:
            snap = self.handle.snapshot() if self.handle is not None else None
            nodes = snap.node_info_list if snap is not None and hasattr(snap, "node_info_list") else []
            gap = self.mgr.resource_gap(ref, policy, nodes) if policy.min_resources and nodes else {}
            if gap:
                out["state"] = "InsufficientResources"
                out["waiting"] = f"minResources do not fit the cluster, resource gap: {format_resources(gap)}"
            else:
                out["state"] = "WaitingAtPermit" if waiting else "Scheduling"
                out["waiting"] = (f"{out['assigned']}/{policy.min_member} members assumed or bound; binding waits "
                                  f"until {policy.min_member} are (timeout {self._timeout(policy):g}s)")
        return out

    # ---- queueing hints --------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL
                                              | ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                                 self._sibling_changed),
            ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, ActionType.ADD | ActionType.UPDATE),
                                 self._group_changed),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                                 self._in_gang),
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), self._in_gang),
        ]

    def _own_ref(self, pod: Any) -> GroupRef | None:
        ref = ref_of(pod)
        return ref if ref is not None and ref.api in self.APIS else None

    def _in_gang(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.QUEUE if self._own_ref(pod) is not None else QueueingHint.SKIP

    def _sibling_changed(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        ref = self._own_ref(pod)
        if ref is None or not isinstance(new, dict):
            return QueueingHint.SKIP
        # one event is offered to every pending pod: parse the new pod's gang once
        memo = self._event_memo
        if memo is not None and memo[0] is new:
            other = memo[1]
        else:
            other = group_ref(new)
            self._event_memo = (new, other)
        return QueueingHint.QUEUE if other is not None and other.key == ref.key else QueueingHint.SKIP

    def _group_changed(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        ref = self._own_ref(pod)
        if ref is None or not isinstance(new, dict):
            return QueueingHint.SKIP
        group = str(new.get("apiVersion") or "").rpartition("/")[0]
        meta = new.get("metadata") or {}
        if new.get("kind") == "Queue" and group == VOLCANO_GROUP:
            policy = self.mgr.policy(ref)
            queue = (policy.queue or "default") if policy is not None else ""
            return QueueingHint.QUEUE if ref.api == "volcano" and meta.get("name") == queue else QueueingHint.SKIP
        same = (_API_OF_GROUP.get(group) == ref.api and meta.get("name") == ref.name
                and (meta.get("namespace") or "default") == ref.namespace)
        return QueueingHint.QUEUE if same else QueueingHint.SKIP


class Coscheduling(GangPlugin, QueueSortPlugin):
    NAME = names.COSCHEDULING
    APIS = ("volcano", "x-k8s")
    MISSING_GROUP_PASSES_PRE_FILTER = True

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        # ordering keeps every kind of gang together, Workload gangs included
        self._order = PodGroupManager(handle, apis=("volcano", "x-k8s", "workload"))

    def _sort_key(self, pi: PodInfo, ref: GroupRef | None, ts: float) -> tuple[float, str, str]:
        if ref is None:
            return ts, "", pi.key
        created = self._order.creation_monotonic(ref)
        return (created if created is not None else ts), ref.key, pi.key

    def sort_key(self, item: Any) -> tuple[Any, ...] | None:
        """(-priority, timestamp, "") for a pod outside any gang, ordered as `less` orders it
        against another such pod (priority, then timestamp) or, through `less`, against a gang
        member (whose group key is never empty, so "" sorts first on equal times as
        `_sort_key`'s ""). None for a gang member: its order follows its PodGroup's creation
        time, which can appear or change while it waits, so it is compared live."""
        pi = getattr(item, "pod_info", None) or as_pod_info(item)
        extra = pi._extra
        cached = extra.get("gang") if extra is not None else None
        ref = cached[0] if cached is not None else ref_of(pi)
        if ref is not None:
            return None
        return -pi.priority, float(getattr(item, "timestamp", 0.0)), ""

    def less(self, a: Any, b: Any) -> bool:
        ai = getattr(a, "pod_info", None) or as_pod_info(a)
        bi = getattr(b, "pod_info", None) or as_pod_info(b)
        if ai.priority != bi.priority:
            return ai.priority > bi.priority
        ta, tb = float(getattr(a, "timestamp", 0.0)), float(getattr(b, "timestamp", 0.0))
        # the gang refs cached on the PodInfos (hot: ~20 comparisons per heap pop)
        ea, eb = ai._extra, bi._extra
        ha = ea.get("gang") if ea is not None else None
        hb = eb.get("gang") if eb is not None else None
        ra = ha[0] if ha is not None else ref_of(ai)
        rb = hb[0] if hb is not None else ref_of(bi)
        if ra is None and rb is None:
            return ta < tb  # both outside any gang: PrioritySort's order exactly
        return self._sort_key(ai, ra, ta) < self._sort_key(bi, rb, tb)
