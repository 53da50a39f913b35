"""Resource scoring strategies shared by NodeResourcesFit and NodeResourcesBalancedAllocation
(upstream noderesources/{resource_allocation,least_allocated,most_allocated,requested_to_capacity_ratio}.go).

For each configured resource r: alloc_r = node allocatable, req_r = node requested (non-zero variant
unless `use_requested`) + pod request. Resources with alloc 0 are skipped; an extended (scalar)
resource the pod does not request is skipped too, and so is "pods" (upstream scores cpu, memory,
ephemeral-storage and the node's scalar resources only). A plugin configured with no resources
fails its Score ("resources not found").

LeastAllocated:  score_r = (alloc − req) * 100 // alloc (0 if req > alloc); Σ score_r*w_r // Σ w_r.
  Example: 4 cpu / 8Gi node, 200m / 256Mi requested after the pod: cpu 95, mem 96 -> (95+96)//2 = 95.
MostAllocated:   score_r = min(req, alloc) * 100 // alloc; same weighting.
RequestedToCapacityRatio: score_r = f(req*100//alloc) with f the broken-linear shape (points scaled
  by 10 from 0..10 to 0..100); resources scoring 0 are left out; round(Σ s*w / Σ w).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from minik3s.api.helpers.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import MAX_NODE_SCORE, Status
from scheduler.framework.node_arrays import SAFE_LIMIT, IntArray, NodeArrays, RowMemo
from scheduler.framework.types import NodeInfo, PodInfo, Resource

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
BALANCED = "Balanced"
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100

_NATIVE = frozenset((CPU, MEMORY, EPHEMERAL_STORAGE, PODS))
_CPU_MEMORY = (CPU, MEMORY)
MAX_SCORE_MEMOS = 64


def is_scalar_resource(name: str) -> bool:
    return name not in _NATIVE


def _div(a: int, b: int) -> int:
    """Go integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return requested * MAX_NODE_SCORE // capacity


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """Piecewise-linear function through (utilization, score) points (upstream BuildBrokenLinearFunction)."""
    pts = list(shape)

    def f(p: int) -> int:
        for i, (u, s) in enumerate(pts):
            if p <= u:
                if i == 0:
                    return s
                pu, ps = pts[i - 1]
                return ps + _div((s - ps) * (p - pu), u - pu)
        return pts[-1][1]

    return f


ScorerFn = Callable[[list[int], list[int]], int]


def least_allocated_scorer(weights: Sequence[int]) -> ScorerFn:
    def score(requested: list[int], alloc: list[int]) -> int:
        total = wsum = 0
        for i, a in enumerate(alloc):
            if a == 0:
                continue
            total += least_requested_score(requested[i], a) * weights[i]
            wsum += weights[i]
        return total // wsum if wsum else 0

    return score


def most_allocated_scorer(weights: Sequence[int]) -> ScorerFn:
    def score(requested: list[int], alloc: list[int]) -> int:
        total = wsum = 0
        for i, a in enumerate(alloc):
            if a == 0:
                continue
            total += most_requested_score(requested[i], a) * weights[i]
            wsum += weights[i]
        return total // wsum if wsum else 0

    return score


def requested_to_capacity_ratio_scorer(weights: Sequence[int], shape: Sequence[tuple[int, int]]) -> ScorerFn:
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    fn = broken_linear([(u, s * scale) for u, s in shape])

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return fn(MAX_UTILIZATION)
        return fn(requested * MAX_UTILIZATION // capacity)

    def score(requested: list[int], alloc: list[int]) -> int:
        total = wsum = 0
        for i, a in enumerate(alloc):
            if a == 0:
                continue
            s = resource_score(requested[i], a)
            if s > 0:
                total += s * weights[i]
                wsum += weights[i]
        if wsum == 0:
            return 0
        return int(math.floor(total / wsum + 0.5))

    return score


def balanced_scorer(requested: list[int], alloc: list[int]) -> int:
    """Score = trunc((1 − std) * 100) of the fractions min(1, req/alloc) (upstream balancedResourceScorer).
    Example: f_cpu 0.6625, f_mem 0.5 -> std 0.08125 -> 91."""
    fractions: list[float] = []
    for i, a in enumerate(alloc):
        if a == 0:
            continue
        f = requested[i] / a
        fractions.append(1.0 if f > 1 else f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


@dataclass(slots=True)
class ResourceAllocationScorer:
    """Collects (requested, allocatable) per configured resource for one node and applies `scorer`."""

    resources: tuple[str, ...]
    scorer: ScorerFn
    use_requested: bool = False
    # which formula `scorer` is (LEAST_ALLOCATED, MOST_ALLOCATED, BALANCED,
    # REQUESTED_TO_CAPACITY_RATIO or "" for others) and
    # its per-resource weights: lets `score_many` run the cpu+memory case without per-node calls
    kind: str = ""
    weights: tuple[int, ...] = ()
    # RequestedToCapacityRatio's shape, scores already scaled to 0..100 (for `score_rows`)
    shape: tuple[tuple[int, int], ...] = ()
    # score_many's memo: pod request (cpu, memory) -> node name -> (NodeInfo generation, score).
    # A node's score depends only on its requested/allocatable (which bump its generation when
    # they change) and the pod's request, so between cycles only the changed nodes recompute.
    _memo: dict[tuple[int, int], dict[str, tuple[int, int]]] = field(default_factory=dict)

    def pod_requests(self, pod: PodInfo) -> list[int]:
        """The pod's request per resource: real when `use_requested`, else cpu/memory non-zero defaults."""
        src: Resource = pod.requests if self.use_requested else pod.non_zero_requests
        out: list[int] = []
        for r in self.resources:
            if r in (CPU, MEMORY):
                out.append(src.get(r))
            else:
                out.append(pod.requests.get(r))
        return out

    def score(self, node: NodeInfo, pod_requests: list[int]) -> int:
        node_req = node.requested if self.use_requested else node.non_zero_requested
        alloc_res = node.allocatable
        if self.resources == _CPU_MEMORY:  # the default profile: no per-resource dispatch
            a_cpu, a_mem = alloc_res.milli_cpu, alloc_res.memory
            return self.scorer(
                [
                    node_req.milli_cpu + pod_requests[0] if a_cpu else 0,
                    node_req.memory + pod_requests[1] if a_mem else 0,
                ],
                [a_cpu, a_mem],
            )
        n = len(self.resources)
        requested = [0] * n
        alloc = [0] * n
        for i, r in enumerate(self.resources):
            pr = pod_requests[i]
            if r == CPU:
                a, q = alloc_res.milli_cpu, node_req.milli_cpu + pr
            elif r == MEMORY:
                a, q = alloc_res.memory, node_req.memory + pr
            elif r == EPHEMERAL_STORAGE:
                a, q = alloc_res.ephemeral_storage, node_req.ephemeral_storage + pr
            else:
                if pr == 0 and is_scalar_resource(r):
                    continue
                # "pods" (and any other name that is neither cpu, memory, ephemeral-storage
                # nor a resource in the node's scalar allocatable) is left out, as upstream's
                # calculateResourceAllocatableRequest does
                if r == PODS or r not in alloc_res.scalar:
                    continue
                a, q = alloc_res.scalar[r], node_req.scalar.get(r, 0) + pr
            if a == 0:
                continue
            alloc[i] = a
            requested[i] = q
        return self.scorer(requested, alloc)

    def score_many(self, nodes: Sequence[NodeInfo], pod_requests: list[int]) -> list[int]:
        """`[self.score(n, pod_requests) for n in nodes]`, with the default cpu+memory profile
        (LeastAllocated / MostAllocated / Balanced) computed inline: same integer and float
        operations in the same order, so the values are identical; nodes whose generation did
        not change since the last call with the same pod request reuse their score."""
        kind = self.kind
        if self.resources != _CPU_MEMORY or kind not in (LEAST_ALLOCATED, MOST_ALLOCATED, BALANCED):
            return [self.score(n, pod_requests) for n in nodes]
        p_cpu, p_mem = pod_requests[0], pod_requests[1]
        memo = self._memo.get((p_cpu, p_mem))
        if memo is None:
            if len(self._memo) >= MAX_SCORE_MEMOS:
                self._memo.clear()
            memo = self._memo[(p_cpu, p_mem)] = {}
        out: list[int] = []
        append = out.append
        get = memo.get
        missing: list[int] = []
        for i, n in enumerate(nodes):
            hit = get(n.name)
            if hit is not None and hit[0] == n.generation:
                append(hit[1])
            else:
                append(0)
                missing.append(i)
        if missing:
            todo = [nodes[i] for i in missing]
            for i, n, v in zip(missing, todo, self._score_cpu_memory(todo, p_cpu, p_mem), strict=True):
                out[i] = v
                memo[n.name] = (n.generation, v)
        return out

    def _score_cpu_memory(self, nodes: Sequence[NodeInfo], p_cpu: int, p_mem: int) -> list[int]:
        pod_requests = [p_cpu, p_mem]
        kind = self.kind
        use_requested = self.use_requested
        out: list[int] = []
        append = out.append
        if kind == BALANCED:
            for n in nodes:
                alloc = n.allocatable
                a_cpu, a_mem = alloc.milli_cpu, alloc.memory
                if not a_cpu or not a_mem:
                    append(self.score(n, pod_requests))  # fewer than two fractions: generic path
                    continue
                req = n.requested if use_requested else n.non_zero_requested
                f1 = (req.milli_cpu + p_cpu) / a_cpu
                f2 = (req.memory + p_mem) / a_mem
                if f1 > 1:
                    f1 = 1.0
                if f2 > 1:
                    f2 = 1.0
                append(int((1 - abs((f1 - f2) / 2)) * MAX_NODE_SCORE))
            return out
        w_cpu, w_mem = self.weights
        wsum = w_cpu + w_mem
        least = kind == LEAST_ALLOCATED
        for n in nodes:
            alloc = n.allocatable
            a_cpu, a_mem = alloc.milli_cpu, alloc.memory
            if not a_cpu or not a_mem or not wsum:
                append(self.score(n, pod_requests))
                continue
            req = n.requested if use_requested else n.non_zero_requested
            q_cpu = req.milli_cpu + p_cpu
            q_mem = req.memory + p_mem
            if least:
                s_cpu = (a_cpu - q_cpu) * MAX_NODE_SCORE // a_cpu if q_cpu <= a_cpu else 0
                s_mem = (a_mem - q_mem) * MAX_NODE_SCORE // a_mem if q_mem <= a_mem else 0
            else:
                s_cpu = (q_cpu if q_cpu < a_cpu else a_cpu) * MAX_NODE_SCORE // a_cpu
                s_mem = (q_mem if q_mem < a_mem else a_mem) * MAX_NODE_SCORE // a_mem
            append((s_cpu * w_cpu + s_mem * w_mem) // wsum)
        return out


def _trunc_div(a: IntArray, b: int) -> IntArray:
    """Go's int64 division (truncates toward zero) of an array by a positive constant."""
    return np.where(a >= 0, a // b, -((-a) // b))


def _broken_linear_array(shape: Sequence[tuple[int, int]], p: IntArray) -> IntArray:
    """`broken_linear(shape)` applied to every element of `p`."""
    out = np.full(len(p), shape[-1][1], dtype=np.int64)
    done = np.zeros(len(p), dtype=np.bool_)
    for i, (u, s) in enumerate(shape):
        m = ~done & (p <= u)
        if i == 0:
            out[m] = s
        else:
            pu, ps = shape[i - 1]
            out[m] = ps + _trunc_div((s - ps) * (p[m] - pu), u - pu)
        done |= m
    return out


def vector_columns(arrays: NodeArrays, rows: IntArray, resource: str, pod_request: int,
                   use_requested: bool) -> tuple[IntArray, IntArray] | None:
    """(allocatable, requested after the pod) of `resource` for `rows`, as `score` collects
    them; None when the resource is left out for every node (an extended resource the pod
    does not request). A row whose allocatable is 0 is left out by the scorers."""
    if resource == CPU:
        return arrays.alloc_cpu[rows], (arrays.req_cpu if use_requested else arrays.nz_cpu)[rows] + pod_request
    if resource == MEMORY:
        return arrays.alloc_mem[rows], (arrays.req_mem if use_requested else arrays.nz_mem)[rows] + pod_request
    if resource == EPHEMERAL_STORAGE:
        return arrays.alloc_eph[rows], (arrays.req_eph if use_requested else arrays.nz_eph)[rows] + pod_request
    if resource == PODS or pod_request == 0:  # "pods" is never scored (see `score`)
        return None
    alloc, req = arrays.scalar_columns(resource)
    return alloc[rows], req[rows] + pod_request


def has_vector_form(scorer: ResourceAllocationScorer) -> bool:
    """Whether `score_rows` has a vector formula for `scorer` (it returns None exactly when not)."""
    kind = scorer.kind
    if kind == BALANCED:
        return scorer.resources == _CPU_MEMORY
    if len(scorer.weights) != len(scorer.resources) or kind not in (LEAST_ALLOCATED, MOST_ALLOCATED,
                                                                     REQUESTED_TO_CAPACITY_RATIO):
        return False
    return kind != REQUESTED_TO_CAPACITY_RATIO or bool(scorer.shape)


def score_rows(scorer: ResourceAllocationScorer, arrays: NodeArrays, rows: IntArray,
               pod_requests: list[int]) -> IntArray | None:
    """`[scorer.score(node, pod_requests) for node in rows]` as int64 vector operations, with the
    scalar formulas' integer divisions and float operations in the same order (so the same
    values). None for a formula without a vector form (Balanced over more than cpu and memory)."""
    if not has_vector_form(scorer):
        return None
    kind = scorer.kind
    m = len(rows)
    if kind == BALANCED:
        a_cpu, q_cpu = arrays.alloc_cpu[rows], (arrays.req_cpu if scorer.use_requested else arrays.nz_cpu)[rows]
        a_mem, q_mem = arrays.alloc_mem[rows], (arrays.req_mem if scorer.use_requested else arrays.nz_mem)[rows]
        both = (a_cpu != 0) & (a_mem != 0)
        if both.all():  # the usual cluster: no row lacks cpu or memory, no masks
            f1 = np.minimum((q_cpu + pod_requests[0]) / a_cpu, 1.0)
            f2 = np.minimum((q_mem + pod_requests[1]) / a_mem, 1.0)
            every: IntArray = ((1 - np.abs((f1 - f2) / 2)) * MAX_NODE_SCORE).astype(np.int64)
            return every
        out = np.full(m, MAX_NODE_SCORE, dtype=np.int64)  # fewer than two fractions: std 0
        if both.any():
            f1 = (q_cpu[both] + pod_requests[0]) / a_cpu[both]
            f2 = (q_mem[both] + pod_requests[1]) / a_mem[both]
            f1 = np.minimum(f1, 1.0)
            f2 = np.minimum(f2, 1.0)
            out[both] = ((1 - np.abs((f1 - f2) / 2)) * MAX_NODE_SCORE).astype(np.int64)
        return out
    weights = scorer.weights
    if kind != REQUESTED_TO_CAPACITY_RATIO:
        fast = _fraction_scores_all_present(kind, scorer, arrays, rows, pod_requests)
        if fast is not None:
            return fast
    total = np.zeros(m, dtype=np.int64)
    wsum = np.zeros(m, dtype=np.int64)
    for i, r in enumerate(scorer.resources):
        cols = vector_columns(arrays, rows, r, pod_requests[i], scorer.use_requested)
        if cols is None:
            continue
        a, q = cols
        present = a != 0
        safe_a = np.where(present, a, 1)
        if kind == LEAST_ALLOCATED:
            s = np.where(q <= a, (a - q) * MAX_NODE_SCORE // safe_a, 0)
        elif kind == MOST_ALLOCATED:
            s = np.minimum(q, a) * MAX_NODE_SCORE // safe_a
        else:
            util = np.where(q > a, MAX_UTILIZATION, q * MAX_UTILIZATION // safe_a)
            s = _broken_linear_array(scorer.shape, util)
            present &= s > 0
        total += np.where(present, s * weights[i], 0)
        wsum += np.where(present, weights[i], 0)
    has = wsum != 0
    out = np.zeros(m, dtype=np.int64)
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        out[has] = np.floor(total[has] / wsum[has] + 0.5).astype(np.int64)
    else:
        out[has] = total[has] // wsum[has]
    return out


def _fraction_scores_all_present(kind: str, scorer: ResourceAllocationScorer, arrays: NodeArrays, rows: IntArray,
                                 pod_requests: list[int]) -> IntArray | None:
    """`score_rows` for LeastAllocated / MostAllocated when every row has a non-zero allocatable
    of every scored resource (the usual cluster): the same integer formulas without the masks,
    the weight sum one integer. None when some row lacks a resource (the masked code decides)."""
    total: IntArray | None = None
    wsum = 0
    for i, r in enumerate(scorer.resources):
        cols = vector_columns(arrays, rows, r, pod_requests[i], scorer.use_requested)
        if cols is None:
            continue
        a, q = cols
        if not a.all():
            return None
        if kind == LEAST_ALLOCATED:
            s = np.where(q <= a, (a - q) * MAX_NODE_SCORE // a, 0)
        else:
            s = np.minimum(q, a) * MAX_NODE_SCORE // a
        w = scorer.weights[i]
        if w != 1:
            s *= w
        if total is None:
            total = s
        else:
            total += s
        wsum += w
    if total is None or wsum == 0:
        return np.zeros(len(rows), dtype=np.int64)
    out: IntArray = total // wsum
    return out


# Score of a plugin configured with no resources (upstream resourceAllocationScorer.score)
_NO_RESOURCES = Status.as_error("resources not found")


class AllocationScoring:
    """Score, score_nodes and score_rows of a plugin that scores with one
    `ResourceAllocationScorer` from the pod requests its PreScore wrote under `pre_score_key`
    (NodeResourcesFit's scoring strategy, NodeResourcesBalancedAllocation). Listed before the
    framework's plugin bases, so these implement their Score methods."""

    _scorer: ResourceAllocationScorer
    _row_memo: RowMemo
    pre_score_key: str

    def _requests(self, state: CycleState, pod: PodInfo) -> list[int]:
        reqs: list[int] | None = state.get(self.pre_score_key)
        return reqs if reqs is not None else self._scorer.pod_requests(pod)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        if not self._scorer.resources:
            return 0, _NO_RESOURCES
        return self._scorer.score(node, self._requests(state, pod)), Status()

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[list[int], Status]:
        if not self._scorer.resources:
            return [0] * len(nodes), _NO_RESOURCES
        return self._scorer.score_many(nodes, self._requests(state, pod)), Status()

    def score_rows(self, state: CycleState, pod: PodInfo, arrays: NodeArrays, rows: IntArray,
                   nodes: Sequence[NodeInfo]) -> IntArray | None:
        """The vector scores of `rows`, remembered per pod request vector across cycles (a row's
        score is a function of its node's numbers and the requests: RowMemo recomputes only the
        rows whose node changed, one by one with the scalar formula when they are few)."""
        reqs = self._requests(state, pod)
        if any(abs(v) >= SAFE_LIMIT for v in reqs):
            return None  # int64 could overflow: the scalar path scores with Python integers
        scorer = self._scorer
        if not scorer.resources or not has_vector_form(scorer):  # checked once here, not per memo miss
            return None
        try:
            memo = self._row_memo
        except AttributeError:
            memo = self._row_memo = RowMemo()

        def compute(rs: IntArray) -> IntArray:
            out = score_rows(scorer, arrays, rs, reqs)
            assert out is not None  # has_vector_form
            return out

        def compute_one(r: int) -> int:
            return scorer.score(arrays.node(r), reqs)

        return memo.values(arrays, tuple(reqs), rows, compute, compute_one)
