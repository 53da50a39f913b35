"""An out-of-tree Score plugin for minik3s's scheduler: prefer nodes carrying a label.

Score = 100 on nodes whose label `args.label` has one of `args.values` (any value when the
list is empty), 0 elsewhere. With weight 5 in the profile, a labelled node gains 500 points,
enough to beat the default plugins' spread (max 1300 in total).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import PreScorePlugin, ScorePlugin, Status
from scheduler.framework.types import NodeInfo, PodInfo


class PreferLabeledNodes(PreScorePlugin, ScorePlugin):
    NAME = "PreferLabeledNodes"

    class Args(BaseModel):
        label: str = "example.com/preferred"
        values: list[str] = Field(default_factory=list)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        state.write(f"PreScore{self.NAME}", (self.args.label, frozenset(self.args.values)))
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        label, values = state.read(f"PreScore{self.NAME}")
        value = node.labels.get(label)
        if value is None or (values and value not in values):
            return 0, Status.success()
        return 100, Status.success()
