"""GangScheduling: all-or-nothing placement of a Workload's pod groups (upstream: the v1.35 alpha
plugin of KEP-4671, pkg/scheduler/framework/plugins/gangscheduling), layer L4.

Pods join through `spec.workloadRef {name, podGroup, podGroupReplicaKey}`; each (podGroup,
replica key) of a Workload with a `gang: {minCount}` policy is one gang, a `basic` policy none.

- PreEnqueue (upstream's barrier): the pod stays out of activeQ until its Workload exists,
  names its podGroup, and at least minCount pods of the gang exist ("waiting for minCount pods
  from a gang to appear in scheduling queue").
- Permit (upstream's barrier): Wait until minCount members are assumed or bound, then allow
  them all together.
- Beyond upstream's alpha, and shared with Coscheduling (coscheduling.GangPlugin): PreFilter,
  PostFilter rejection of the whole gang when a member fits nowhere, Unreserve releasing every
  waiting member, and the Permit timeout (`permitWaitingTimeSeconds`, default 60 s), so a
  Workload gang can neither hold part of the cluster nor deadlock with another gang.
"""

from __future__ import annotations

from minik3s.api.types import JsonDict
from scheduler.framework.interface import Status
from scheduler.plugins import names
from scheduler.plugins.coscheduling import GangPlugin
from scheduler.plugins.helpers import SUCCESS

WAITING_FOR_MEMBERS = "waiting for minCount pods from a gang to appear in scheduling queue"


class GangScheduling(GangPlugin):
    NAME = names.GANG_SCHEDULING
    APIS = ("workload",)

    def pre_enqueue(self, pod: JsonDict) -> Status:
        ref = self.mgr.ref(pod)
        if ref is None:
            return SUCCESS
        policy = self.mgr.policy(ref)
        if policy is None:
            return self._missing_group(ref)
        if policy.gang and len(self.mgr.members(ref)) < policy.min_member:
            return Status.unresolvable(WAITING_FOR_MEMBERS, plugin=self.NAME)
        return SUCCESS
