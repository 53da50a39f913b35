"""NodeResourcesBalancedAllocation (PreScore, Score): prefer nodes whose cpu and memory would be
used in equal fractions after placing the pod (upstream noderesources/balanced_allocation.go).

Uses real requests (no non-zero defaults). Score = trunc((1 − std) * 100) with std = |f_cpu − f_mem|/2
for two resources. PreScore skips BestEffort pods (every configured request 0)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import SUCCESS
from scheduler.plugins.node_resources.fit import ResourceSpec, _default_resources
from scheduler.plugins.node_resources.strategies import (
    BALANCED,
    AllocationScoring,
    ResourceAllocationScorer,
    balanced_scorer,
)

PRE_SCORE_STATE_KEY = "PreScore" + names.NODE_RESOURCES_BALANCED_ALLOCATION


class NodeResourcesBalancedAllocationArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    resources: list[ResourceSpec] = Field(default_factory=_default_resources)


class NodeResourcesBalancedAllocation(AllocationScoring, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    NAME = names.NODE_RESOURCES_BALANCED_ALLOCATION
    pre_score_key = PRE_SCORE_STATE_KEY
    Args = NodeResourcesBalancedAllocationArgs

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        if isinstance(args, dict):
            args = NodeResourcesBalancedAllocationArgs.model_validate(args)
        super().__init__(args or NodeResourcesBalancedAllocationArgs(), handle)
        self._scorer = ResourceAllocationScorer(
            tuple(r.name for r in self.args.resources), balanced_scorer, use_requested=True, kind=BALANCED
        )

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        reqs = self._scorer.pod_requests(pod)
        if not any(reqs):
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, reqs)
        return SUCCESS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)
            ),
        ]
