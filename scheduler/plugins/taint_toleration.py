"""TaintToleration (Filter, PreScore, Score): NoSchedule/NoExecute taints must be tolerated; each
untolerated PreferNoSchedule taint lowers the score (upstream plugins/tainttoleration).

Score: raw = number of PreferNoSchedule taints not tolerated by the pod's tolerations whose effect is
empty or PreferNoSchedule; normalized reversed by the maximum (raw 0, 1, 2 -> 100, 50, 0)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minik3s.api.helpers.taints import (
    PREFER_NO_SCHEDULE,
    find_untolerated_taint,
    is_no_schedule_or_no_execute,
    taint_message,
    tolerations_tolerate_taint,
)
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    NodeScore,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    Status,
)
from scheduler.framework.node_arrays import BoolArray, IntArray, NodeArrays
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import (
    SUCCESS,
    as_pod_info,
    default_normalize_array,
    default_normalize_raw,
    default_normalize_score,
)

PRE_SCORE_STATE_KEY = "PreScore" + names.TAINT_TOLERATION


class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    NAME = names.TAINT_TOLERATION

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if not node.taints:
            return SUCCESS
        taint = find_untolerated_taint(node.taints, pod.spec.get("tolerations"), is_no_schedule_or_no_execute)
        if taint is None:
            return SUCCESS
        return Status.unresolvable(taint_message(taint), plugin=self.NAME)

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        out: list[Status | None] = [None] * len(nodes)
        for i, n in enumerate(nodes):
            if n.taints:
                st = self.filter(state, pod, n)
                out[i] = st if st.code else None
        return out

    def filter_accept_mask(self, state: CycleState, pod: PodInfo, arrays: NodeArrays,
                           rows: IntArray) -> BoolArray | None:
        mask: BoolArray = arrays.untainted[rows]
        return mask

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        tols = [
            t
            for t in pod.spec.get("tolerations") or ()
            if (t.get("effect") or "") in ("", PREFER_NO_SCHEDULE)
        ]
        state.write(PRE_SCORE_STATE_KEY, tols)
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        if not node.taints:
            return 0, SUCCESS
        tols = state.get(PRE_SCORE_STATE_KEY)
        if tols is None:
            tols = [
                t
                for t in pod.spec.get("tolerations") or ()
                if (t.get("effect") or "") in ("", PREFER_NO_SCHEDULE)
            ]
        count = 0
        for taint in node.taints:
            if taint.get("effect") == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tols, taint):
                count += 1
        return count, SUCCESS

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[list[int], Status]:
        tols = state.get(PRE_SCORE_STATE_KEY)
        if tols is None:
            tols = [
                t
                for t in pod.spec.get("tolerations") or ()
                if (t.get("effect") or "") in ("", PREFER_NO_SCHEDULE)
            ]
        out = [0] * len(nodes)
        for i, node in enumerate(nodes):
            taints = node.taints
            if not taints:
                continue  # the common case: an untainted node scores raw 0
            count = 0
            for taint in taints:
                if taint.get("effect") == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tols, taint):
                    count += 1
            out[i] = count
        return out, SUCCESS

    def score_rows(self, state: CycleState, pod: PodInfo, arrays: NodeArrays, rows: IntArray,
                   nodes: Sequence[NodeInfo]) -> IntArray | None:
        """Untainted rows score raw 0 without a look; tainted ones count as `score_nodes` does."""
        out = np.zeros(len(rows), dtype=np.int64)
        tainted = arrays.tainted[rows].nonzero()[0]
        if len(tainted):
            idx = tainted.tolist()
            counts, _ = self.score_nodes(state, pod, [nodes[i] for i in idx])
            out[tainted] = counts
        return out

    def normalize_score_array(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray | None:
        return default_normalize_array(scores, reverse=True)

    def normalize_raw_scores(self, state: CycleState, pod: PodInfo, scores: list[int]) -> list[int]:
        return default_normalize_raw(scores, reverse=True)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        default_normalize_score(scores, reverse=True)
        return SUCCESS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self._after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATIONS),
                self._after_toleration_change,
            ),
        ]

    @staticmethod
    def _after_node_change(pod: Any, old: Any, new: Any) -> QueueingHint:
        p = as_pod_info(pod).pod
        tols = (p.get("spec") or {}).get("tolerations")
        new_taints = ((new or {}).get("spec") or {}).get("taints")
        if find_untolerated_taint(new_taints, tols, is_no_schedule_or_no_execute) is not None:
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        old_taints = (old.get("spec") or {}).get("taints")
        was_blocked = find_untolerated_taint(old_taints, tols, is_no_schedule_or_no_execute) is not None
        return QueueingHint.QUEUE if was_blocked else QueueingHint.SKIP

    @staticmethod
    def _after_toleration_change(pod: Any, old: Any, new: Any) -> QueueingHint:
        p = as_pod_info(pod).pod
        same = ((new or {}).get("metadata") or {}).get("uid") == (p.get("metadata") or {}).get("uid")
        return QueueingHint.QUEUE if same else QueueingHint.SKIP
