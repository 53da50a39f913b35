"""NodeUnschedulable (Filter): `spec.unschedulable` nodes reject pods that do not tolerate
`node.kubernetes.io/unschedulable:NoSchedule` (upstream plugins/nodeunschedulable)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minik3s.api.helpers.taints import NO_SCHEDULE, TAINT_NODE_UNSCHEDULABLE, tolerations_tolerate_taint
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    QueueingHint,
    Status,
)
from scheduler.framework.node_arrays import BoolArray, IntArray, NodeArrays
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import SUCCESS, as_pod_info

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT = {"key": TAINT_NODE_UNSCHEDULABLE, "effect": NO_SCHEDULE}


class NodeUnschedulable(FilterPlugin, EnqueueExtensions):
    NAME = names.NODE_UNSCHEDULABLE

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if not node.unschedulable:
            return SUCCESS
        if tolerations_tolerate_taint(pod.spec.get("tolerations") or (), _UNSCHEDULABLE_TAINT):
            return SUCCESS
        return Status.unresolvable(ERR_REASON_UNSCHEDULABLE, plugin=self.NAME)

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        out: list[Status | None] = [None] * len(nodes)
        for i, n in enumerate(nodes):
            if n.unschedulable:
                st = self.filter(state, pod, n)
                out[i] = st if st.code else None
        return out

    def filter_accept_mask(self, state: CycleState, pod: PodInfo, arrays: NodeArrays,
                           rows: IntArray) -> BoolArray | None:
        mask: BoolArray = arrays.schedulable[rows]
        return mask

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self._after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATIONS),
                self._after_pod_toleration_change,
            ),
        ]

    @staticmethod
    def _after_node_change(pod: Any, old: Any, new: Any) -> QueueingHint:
        new_unsched = bool(((new or {}).get("spec") or {}).get("unschedulable"))
        if new_unsched:
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE if ((old.get("spec") or {}).get("unschedulable")) else QueueingHint.SKIP

    @staticmethod
    def _after_pod_toleration_change(pod: Any, old: Any, new: Any) -> QueueingHint:
        p = as_pod_info(pod).pod
        if ((new or {}).get("metadata") or {}).get("uid") != (p.get("metadata") or {}).get("uid"):
            return QueueingHint.SKIP
        tols = ((new or {}).get("spec") or {}).get("tolerations") or ()
        return (
            QueueingHint.QUEUE
            if tolerations_tolerate_taint(tols, _UNSCHEDULABLE_TAINT)
            else QueueingHint.SKIP
        )
