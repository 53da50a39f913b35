"""SchedulingGates (PreEnqueue): a pod with `spec.schedulingGates` stays out of the active queue
(upstream plugins/schedulinggates). Message: `waiting for scheduling gates: [gate-a gate-b]`."""

from __future__ import annotations

from typing import Any

from minik3s.api.types import JsonDict
from scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    PreEnqueuePlugin,
    QueueingHint,
    Status,
)
from scheduler.plugins import names
from scheduler.plugins.helpers import SUCCESS, as_pod_info


def _uid(pod: Any) -> str:
    return as_pod_info(pod).uid


class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    NAME = names.SCHEDULING_GATES

    def pre_enqueue(self, pod: JsonDict) -> Status:
        gates = (pod.get("spec") or {}).get("schedulingGates") or []
        if not gates:
            return SUCCESS
        gate_names = " ".join(g.get("name") or "" for g in gates)
        return Status.unresolvable(f"waiting for scheduling gates: [{gate_names}]", plugin=self.NAME)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                self._is_schedulable_after_gates_eliminated,
            )
        ]

    @staticmethod
    def _is_schedulable_after_gates_eliminated(pod: Any, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.QUEUE if _uid(new) == _uid(pod) else QueueingHint.SKIP
