"""NodePorts (PreFilter, Filter): a pod's hostPorts must be free on the node (upstream
plugins/nodeports). A (hostIP, protocol, port) conflicts with the same triple, with the same
(protocol, port) bound on 0.0.0.0, and 0.0.0.0 conflicts with that (protocol, port) on any IP.
Example: used {("10.0.0.1","TCP",80)}; wanting ("0.0.0.0","TCP",80) conflicts, ("10.0.0.2","TCP",80)
does not, ("10.0.0.1","UDP",80) does not."""

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
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    Status,
)
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import SUCCESS, as_pod_info

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
PRE_FILTER_STATE_KEY = "PreFilter" + names.NODE_PORTS
ALL_IPS = "0.0.0.0"

Port = tuple[str, str, int]


def ports_conflict(wanted: Sequence[Port], used: dict[Port, int]) -> bool:
    if not used:
        return False
    for ip, proto, port in wanted:
        if port <= 0:
            continue
        if ip == ALL_IPS:
            for _uip, uproto, uport in used:
                if uport == port and uproto == proto:
                    return True
        elif (ALL_IPS, proto, port) in used or (ip, proto, port) in used:
            return True
    return False


class NodePorts(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = names.NODE_PORTS

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        if not pod.host_ports:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, pod.host_ports)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        wanted = state.get(PRE_FILTER_STATE_KEY)
        if wanted is None:  # PreFilter did not run (disabled): upstream's ErrNotFound
            return Status.as_error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found', plugin=self.NAME)
        if ports_conflict(wanted, node.used_ports):
            return Status.unschedulable(ERR_REASON, plugin=self.NAME)
        return SUCCESS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), self._after_pod_deleted
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        ]

    @staticmethod
    def _after_pod_deleted(pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue only when the deleted pod was bound (or nominated) and released a port the pod
        conflicts with (upstream isSchedulableAfterPodDeleted, `Fits` on the released ports)."""
        deleted = PodInfo(old) if isinstance(old, dict) else old
        if deleted is None:
            return QueueingHint.SKIP
        nominated = ((deleted.pod.get("status") or {}).get("nominatedNodeName")) or ""
        if not deleted.node_name and not nominated:
            return QueueingHint.SKIP
        if not deleted.host_ports:
            return QueueingHint.SKIP
        released = dict.fromkeys(deleted.host_ports, 1)
        if ports_conflict(as_pod_info(pod).host_ports, released):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
