"""NodeName (Filter): a pod with `spec.nodeName` fits only that node (upstream plugins/nodename)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(FilterPlugin, EnqueueExtensions):
    NAME = names.NODE_NAME

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if not pod.node_name or pod.node_name == node.name:
            return SUCCESS
        return Status.unresolvable(ERR_REASON, plugin=self.NAME)

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        want = pod.node_name
        if not want:
            return [None] * len(nodes)
        return [None if n.name == want else Status.unresolvable(ERR_REASON, plugin=self.NAME) for n in nodes]

    def filter_accept_mask(self, state: CycleState, pod: PodInfo, arrays: NodeArrays,
                           rows: IntArray) -> BoolArray | None:
        if pod.node_name:
            return None
        return arrays.all_true(len(rows))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD), self._after_node_add)]

    @staticmethod
    def _after_node_add(pod: Any, old: Any, new: Any) -> QueueingHint:
        want = (as_pod_info(pod).pod.get("spec") or {}).get("nodeName") or ""
        name = ((new or {}).get("metadata") or {}).get("name") or ""
        return QueueingHint.QUEUE if not want or want == name else QueueingHint.SKIP
