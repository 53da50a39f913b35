"""NodeResourcesFit (PreFilter, Filter, PreScore, Score): the pod's requests must fit the node's free
allocatable; the score follows the configured strategy (upstream noderesources/fit.go).

Filter: `len(pods)+1 <= allocatable.pods` ("Too many pods"); then, unless the pod requests nothing,
each requested resource r needs `request_r <= allocatable_r − requested_r` ("Insufficient r"), every
failing resource is reported. Extended resources a node lacks have allocatable 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from minik3s.api.helpers.resources import CPU, EPHEMERAL_STORAGE, MEMORY, node_allocatable, pod_requests
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    Status,
)
from scheduler.framework.node_arrays import SAFE_LIMIT, BoolArray, IntArray, NodeArrays, RowMemo
from scheduler.framework.types import NodeInfo, PodInfo, Resource
from scheduler.plugins import names
from scheduler.plugins.helpers import SUCCESS, as_pod_info
from scheduler.plugins.node_resources.strategies import (
    MAX_CUSTOM_PRIORITY_SCORE,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    AllocationScoring,
    ResourceAllocationScorer,
    is_scalar_resource,
    least_allocated_scorer,
    most_allocated_scorer,
    requested_to_capacity_ratio_scorer,
)

PRE_FILTER_STATE_KEY = "PreFilter" + names.NODE_RESOURCES_FIT
PRE_SCORE_STATE_KEY = "PreScore" + names.NODE_RESOURCES_FIT


class ResourceSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    weight: int = 1

    @field_validator("weight")
    @classmethod
    def _w(cls, v: int) -> int:
        if not 1 <= v <= 100:
            raise ValueError(f"resource weight of {v} not in valid range [1, 100]")
        return v


class UtilizationShapePoint(BaseModel):
    model_config = ConfigDict(extra="forbid")
    utilization: int
    score: int

    @model_validator(mode="after")
    def _range(self) -> UtilizationShapePoint:
        if not 0 <= self.utilization <= 100:
            raise ValueError(
                f"utilization values must not be less than 0 or greater than 100, got {self.utilization}"
            )
        if not 0 <= self.score <= 10:
            raise ValueError(f"score values must not be less than 0 or greater than 10, got {self.score}")
        return self


class RequestedToCapacityRatioParam(BaseModel):
    model_config = ConfigDict(extra="forbid")
    shape: list[UtilizationShapePoint]

    @field_validator("shape")
    @classmethod
    def _increasing(cls, v: list[UtilizationShapePoint]) -> list[UtilizationShapePoint]:
        if not v:
            raise ValueError("at least one point must be specified")
        for a, b in zip(v, v[1:], strict=False):
            if b.utilization <= a.utilization:
                raise ValueError("utilization values must be sorted in increasing order")
        return v


def _default_resources() -> list[ResourceSpec]:
    return [ResourceSpec(name=CPU, weight=1), ResourceSpec(name=MEMORY, weight=1)]


class ScoringStrategy(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    type: Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"] = "LeastAllocated"
    resources: list[ResourceSpec] = Field(default_factory=_default_resources)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = Field(
        default=None, alias="requestedToCapacityRatio"
    )

    @model_validator(mode="after")
    def _check(self) -> ScoringStrategy:
        if self.type == REQUESTED_TO_CAPACITY_RATIO and self.requested_to_capacity_ratio is None:
            raise ValueError("requestedToCapacityRatio: Required value")
        # an empty `resources` is valid (upstream ValidateNodeResourcesFitArgs): such a plugin's
        # Score then fails with "resources not found" (strategies.AllocationScoring)
        return self


class NodeResourcesFitArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    ignored_resources: list[str] = Field(default_factory=list, alias="ignoredResources")
    ignored_resource_groups: list[str] = Field(default_factory=list, alias="ignoredResourceGroups")
    scoring_strategy: ScoringStrategy = Field(default_factory=ScoringStrategy, alias="scoringStrategy")

    @field_validator("ignored_resource_groups")
    @classmethod
    def _groups(cls, v: list[str]) -> list[str]:
        for g in v:
            if "/" in g:
                raise ValueError(
                    f"ignoredResourceGroups: Invalid value: \"{g}\": resource group name can't contain '/'"
                )
        return v


def insufficient_resources(
    req: Resource,
    node: NodeInfo,
    ignored: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
) -> list[str]:
    """Reasons the pod (requests `req`) does not fit `node`, in upstream order; [] when it fits."""
    reasons: list[str] = []
    alloc = node.allocatable
    if len(node.pods) + 1 > alloc.allowed_pod_number:
        reasons.append("Too many pods")
    if req.milli_cpu == 0 and req.memory == 0 and req.ephemeral_storage == 0 and not req.scalar:
        return reasons
    used = node.requested
    if req.milli_cpu > 0 and req.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        reasons.append("Insufficient cpu")
    if req.memory > 0 and req.memory > alloc.memory - used.memory:
        reasons.append("Insufficient memory")
    if req.ephemeral_storage > 0 and req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage:
        reasons.append("Insufficient ephemeral-storage")
    for name, q in req.scalar.items():
        if q == 0:
            continue
        if "/" in name and "kubernetes.io/" not in name.split("/", 1)[0] + "/":
            if name in ignored or (ignored_groups and name.split("/", 1)[0] in ignored_groups):
                continue
        if q > alloc.scalar.get(name, 0) - used.scalar.get(name, 0):
            reasons.append(f"Insufficient {name}")
    return reasons


def build_scorer(strategy: ScoringStrategy) -> ResourceAllocationScorer:
    resources = tuple(r.name for r in strategy.resources)
    weights = [r.weight for r in strategy.resources]
    if strategy.type == MOST_ALLOCATED:
        fn = most_allocated_scorer(weights)
    elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        assert strategy.requested_to_capacity_ratio is not None
        fn = requested_to_capacity_ratio_scorer(
            weights, [(p.utilization, p.score) for p in strategy.requested_to_capacity_ratio.shape]
        )
    else:
        fn = least_allocated_scorer(weights)
    kind = strategy.type
    shape: tuple[tuple[int, int], ...] = ()
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO and strategy.requested_to_capacity_ratio is not None:
        scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        shape = tuple((p.utilization, p.score * scale) for p in strategy.requested_to_capacity_ratio.shape)
    return ResourceAllocationScorer(resources, fn, use_requested=False, kind=kind, weights=tuple(weights),
                                    shape=shape)


def _missing_pre_filter_state() -> Status:
    """Filter without PreFilter's state (upstream getPreFilterState's error)."""
    return Status.as_error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',
                           names.NODE_RESOURCES_FIT)


def _allocatable_increased(req: Resource, before: Resource, after: Resource) -> bool:
    """Whether a node update raised the allowed pod count or the allocatable of a resource the pod
    requests (upstream haveAnyRequestedResourcesIncreased)."""
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    if req.milli_cpu == 0 and req.memory == 0 and req.ephemeral_storage == 0 and not req.scalar:
        return False
    if ((req.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
            or (req.memory > 0 and after.memory > before.memory)
            or (req.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage)):
        return True
    return any(q and after.scalar.get(name, 0) > before.scalar.get(name, 0) for name, q in req.scalar.items())


def _requests_decreased(req: Resource, before: dict[str, int], after: dict[str, int]) -> bool:
    """Whether a pod update lowered its request of some resource the pending pod requests
    (upstream isSchedulableAfterPodScaleDown's comparison)."""
    wanted = [(CPU, req.milli_cpu), (MEMORY, req.memory), (EPHEMERAL_STORAGE, req.ephemeral_storage),
              *((name, q) for name, q in req.scalar.items() if is_scalar_resource(name))]
    return any(q and before.get(name, 0) > after.get(name, 0) for name, q in wanted)


def _room_for(node: NodeInfo, cpu: int, mem: int, eph: int) -> bool:
    """Filter's fast accept: room for one more pod and the native requests fit the free
    allocatable (what the vector accept computes per row; anything else takes the exact path)."""
    alloc = node.allocatable
    used = node.requested
    return (len(node.pods) < alloc.allowed_pod_number
            and cpu <= alloc.milli_cpu - used.milli_cpu
            and mem <= alloc.memory - used.memory
            and eph <= alloc.ephemeral_storage - used.ephemeral_storage)


class NodeResourcesFit(AllocationScoring, PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin,
                       EnqueueExtensions):
    NAME = names.NODE_RESOURCES_FIT
    pre_score_key = PRE_SCORE_STATE_KEY
    Args = NodeResourcesFitArgs

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        if isinstance(args, dict):
            args = NodeResourcesFitArgs.model_validate(args)
        super().__init__(args or NodeResourcesFitArgs(), handle)
        self._ignored = frozenset(self.args.ignored_resources)
        self._ignored_groups = frozenset(self.args.ignored_resource_groups)
        self._scorer = build_scorer(self.args.scoring_strategy)
        self._accept_memo = RowMemo()

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        state.write(PRE_FILTER_STATE_KEY, pod.requests)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        req: Resource | None = state.get(PRE_FILTER_STATE_KEY)
        if req is None:  # PreFilter did not run for this cycle
            return _missing_pre_filter_state()
        # fast accept (the common case): room for one more pod and every native request fits;
        # anything else (scalars, overcommitted nodes) takes the exact path below
        if not req.scalar and _room_for(node, req.milli_cpu, req.memory, req.ephemeral_storage):
            return SUCCESS
        reasons = insufficient_resources(req, node, self._ignored, self._ignored_groups)
        if not reasons:
            return SUCCESS
        return Status.unschedulable(*reasons, plugin=self.NAME)

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        req: Resource | None = state.get(PRE_FILTER_STATE_KEY)
        if req is None:
            return [_missing_pre_filter_state()] * len(nodes)
        if req.scalar:
            return super().filter_nodes(state, pod, nodes)
        cpu, mem, eph = req.milli_cpu, req.memory, req.ephemeral_storage
        out: list[Status | None] = []
        append = out.append
        for node in nodes:
            if _room_for(node, cpu, mem, eph):
                append(None)
                continue
            reasons = insufficient_resources(req, node, self._ignored, self._ignored_groups)
            append(Status.unschedulable(*reasons, plugin=self.NAME) if reasons else None)
        return out

    def filter_accept_mask(self, state: CycleState, pod: PodInfo, arrays: NodeArrays,
                           rows: IntArray) -> BoolArray | None:
        """Room for one more pod and every request fits the free allocatable (the fast accept
        above, over the window); extended resources too, except ignored ones."""
        req: Resource | None = state.get(PRE_FILTER_STATE_KEY)
        if req is None:
            return None
        if max(abs(req.milli_cpu), abs(req.memory), abs(req.ephemeral_storage)) >= SAFE_LIMIT:
            return None
        scalar: list[tuple[str, int]] = []
        for name, q in req.scalar.items():
            if q == 0 or abs(q) >= SAFE_LIMIT:
                if q:
                    return None
                continue
            if "/" in name and "kubernetes.io/" not in name.split("/", 1)[0] + "/":
                if name in self._ignored or (self._ignored_groups and name.split("/", 1)[0] in self._ignored_groups):
                    continue
            scalar.append((name, q))
        cpu, mem, eph = req.milli_cpu, req.memory, req.ephemeral_storage

        def compute(rs: IntArray) -> BoolArray:
            mask: BoolArray = arrays.npods[rs] < arrays.alloc_pods[rs]
            mask &= cpu <= arrays.alloc_cpu[rs] - arrays.req_cpu[rs]
            mask &= mem <= arrays.alloc_mem[rs] - arrays.req_mem[rs]
            mask &= eph <= arrays.alloc_eph[rs] - arrays.req_eph[rs]
            for name, q in scalar:
                alloc, used = arrays.scalar_columns(name)
                mask &= q <= alloc[rs] - used[rs]
            return mask

        def compute_one(r: int) -> bool:  # the same test on the row's node (its numbers are the row's)
            node = arrays.node(r)
            alloc, used = node.allocatable, node.requested
            return _room_for(node, cpu, mem, eph) and (not scalar or all(
                q <= alloc.scalar.get(name, 0) - used.scalar.get(name, 0) for name, q in scalar))

        # a row's answer depends only on its node and these requests: remembered across cycles
        # (RowMemo recomputes the rows whose node changed)
        return self._accept_memo.values(arrays, (cpu, mem, eph, *scalar), rows, compute, compute_one)

    def filter_reject_rows(self, state: CycleState, pod: PodInfo, arrays: NodeArrays,
                           rows: IntArray) -> tuple[IntArray, list[Status]] | None:
        """`insufficient_resources` over the window: each reason is one boolean column (in
        upstream's order: pods, cpu, memory, ephemeral-storage, then the pod's extended
        resources in request order); a row's reasons form a bit code, and each distinct code
        becomes one shared Status, so a rejection of 5,000 nodes builds a handful of them.
        None outside the int64-safe range (the scalar path then reports it)."""
        req: Resource | None = state.get(PRE_FILTER_STATE_KEY)
        if req is None:
            return None
        if max(abs(req.milli_cpu), abs(req.memory), abs(req.ephemeral_storage)) >= SAFE_LIMIT:
            return None
        labels = ["Too many pods"]
        cols: list[BoolArray] = [arrays.npods[rows] + 1 > arrays.alloc_pods[rows]]
        if req.milli_cpu != 0 or req.memory != 0 or req.ephemeral_storage != 0 or req.scalar:
            if req.milli_cpu > 0:
                labels.append("Insufficient cpu")
                cols.append(req.milli_cpu > arrays.alloc_cpu[rows] - arrays.req_cpu[rows])
            if req.memory > 0:
                labels.append("Insufficient memory")
                cols.append(req.memory > arrays.alloc_mem[rows] - arrays.req_mem[rows])
            if req.ephemeral_storage > 0:
                labels.append("Insufficient ephemeral-storage")
                cols.append(req.ephemeral_storage > arrays.alloc_eph[rows] - arrays.req_eph[rows])
            for name, q in req.scalar.items():
                if q == 0:
                    continue
                if abs(q) >= SAFE_LIMIT:
                    return None
                if "/" in name and "kubernetes.io/" not in name.split("/", 1)[0] + "/":
                    if name in self._ignored or (self._ignored_groups and name.split("/", 1)[0] in self._ignored_groups):
                        continue
                alloc, used = arrays.scalar_columns(name)
                labels.append(f"Insufficient {name}")
                cols.append(q > alloc[rows] - used[rows])
        if len(cols) > 62:
            return None  # more reasons than bits in an int64 code
        code = np.zeros(len(rows), dtype=np.int64)
        for bit, col in enumerate(cols):
            code |= col.astype(np.int64) << bit
        bad = np.flatnonzero(code)
        if not len(bad):
            return rows[bad], []
        distinct, inverse = np.unique(code[bad], return_inverse=True)
        table = [Status.unschedulable(*(labels[b] for b in range(len(labels)) if c >> b & 1), plugin=self.NAME)
                 for c in distinct.tolist()]
        return rows[bad], [table[i] for i in inverse.tolist()]

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        state.write(PRE_SCORE_STATE_KEY, self._scorer.pod_requests(pod))
        return SUCCESS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
                self._after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                self._after_node_change,
            ),
        ]

    @staticmethod
    def _after_pod_change(pod: Any, old: Any, new: Any) -> QueueingHint:
        """Pod deleted or scaled down (upstream isSchedulableAfterPodEvent): a scheduled pod's
        deletion may free room; a scale-down helps when it is the pending pod's own, or a
        scheduled pod's that lowered a resource the pending pod requests."""
        if (old is not None and not isinstance(old, dict)) or (new is not None and not isinstance(new, dict)):
            return QueueingHint.QUEUE  # upstream: an error, and the queue requeues on an error
        if new is None:
            if old is None:
                return QueueingHint.QUEUE
            if not (old.get("spec") or {}).get("nodeName"):
                return QueueingHint.SKIP  # an unscheduled pod's deletion frees nothing
            return QueueingHint.QUEUE
        target = as_pod_info(pod)
        if (new.get("metadata") or {}).get("uid") == target.uid:
            return QueueingHint.QUEUE  # the pending pod itself got smaller
        if not (new.get("spec") or {}).get("nodeName"):
            return QueueingHint.SKIP  # an unscheduled pod's requests hold nothing
        before = pod_requests(old) if old is not None else {}
        if _requests_decreased(target.requests, before, pod_requests(new)):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _after_node_change(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """Node added or its allocatable changed (upstream isSchedulableAfterNodeChange): Queue
        when the pod fits the node and, for an update, the allowed pod count or the allocatable
        of a resource the pod requests went up."""
        if not isinstance(new, dict) or (old is not None and not isinstance(old, dict)):
            return QueueingHint.QUEUE  # upstream: an error, and the queue requeues on an error
        req = as_pod_info(pod).requests
        if insufficient_resources(req, NodeInfo(new), self._ignored, self._ignored_groups):
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        before = Resource.from_map(node_allocatable(old))
        after = Resource.from_map(node_allocatable(new))
        return QueueingHint.QUEUE if _allocatable_increased(req, before, after) else QueueingHint.SKIP


__all__ = ["NodeResourcesFit", "NodeResourcesFitArgs", "insufficient_resources", "EPHEMERAL_STORAGE"]
