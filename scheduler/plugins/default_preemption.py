"""DefaultPreemption (PreEnqueue, PostFilter): when no node fits, find a node where evicting
strictly lower-priority pods lets the pod fit, nominate that node and evict those victims in a
background task (upstream plugins/defaultpreemption + framework/preemption; layer L4).

Flow: PreEnqueue holds a pod whose preemption is still running ("waiting for the preemption for
this pod to be finished") -> eligibility (preemptionPolicy Never; a lower-priority pod on the
nominated node already terminating because of scheduler preemption) -> candidates among nodes whose filter status was
Unschedulable (not UnschedulableAndUnresolvable), dry-run from a random offset until enough are
found -> per node: remove every lower-priority pod, check fit, reprieve PDB-violating then other
victims, most important first (skipped, with the same answer, on a node with no lower-priority
pod and on a node whose NodeResourcesFit failure stays when all of them are gone; both decided
for every node at once over the snapshot's NodeArrays, `_vector_known`) -> pick a node (fewest PDB violations, lowest highest victim priority,
smallest shifted priority sum, fewest victims, latest start of the highest-priority victims, first)
-> return the node as the preemptor's nomination at once, and do the API calls in a tracked task
(upstream v1.33 async preemption, KEP-4832, `prepareCandidateAsync`): clear lower-priority
nominations on that node; for each victim but the last, in parallel: reject it if waiting at
Permit, else strategic-merge-patch a DisruptionTarget condition (reason PreemptionByScheduler)
into its status, delete it with its own grace period, and emit a `Preempted` event; release the
preemptor from PreEnqueue; then the last victim the same way (skipped when an earlier one
failed); finally activate the preemptor if it is still held, or if any call failed.

Gangs (beyond upstream, KEP-5710's direction): when a gang plugin of the profile reports through
`gang_demand(pod)` that more members than the preemptor must still be placed, the chosen node is
only the start of a simulation on a copy of the snapshot that places every needed sibling with
its own PreFilter/Filter (evicting pods of lower priority than that sibling where needed); unless
all of them fit nothing is evicted; if they do, the siblings are nominated and held at PreEnqueue
too, and one task preempts the victims of the whole plan.

While victims terminate they keep their resources in the scheduler cache (the cache drops a pod
only on its deletion), so the preemptor's retries fail Filter and are not eligible to preempt
again ("a terminating pod on the nominated node") until the victims are gone; the AssignedPod
Delete event then requeues it through NodeResourcesFit's hint, and it binds.

What it uses of the framework `Handle` (all declared there, implemented by the runtime): the
snapshot (and its `node_arrays()`), `run_pre_filter`, `run_filter_plugins_with_nominated_pods` and
the PreFilter extensions (`run_pre_filter_extension_add_pod` / `_remove_pod`) for the dry runs,
the nominator (`nominated_pods_for_node`, `nodes_with_nominated_pods`, `nominated_node_name`,
`add_nominated_pod`), `gang_demand`, `spawn`
(the scheduler owns the preemption task), `activate`, `record_event`, `client`, `informers`,
`clock`, `rng` and `scheduler_name`. Without a handle (a plugin built alone, e.g. to compute
candidate counts) only the pure helpers work.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import compress
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from minik3s.api.errors import NotFoundError, aggregate
from minik3s.api.helpers.pods import condition_status_patch
from minik3s.api.resources import PODDISRUPTIONBUDGETS, PODS
from minik3s.api.types import JsonDict
from minik3s.utils.clock import rfc3339
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    GangDemand,
    Handle,
    PostFilterPlugin,
    PostFilterResult,
    PreEnqueuePlugin,
    QueueingHint,
    Status,
)
from scheduler.framework.node_arrays import PRIO_LIMIT, BoolArray, IntArray, NodeArrays
from scheduler.framework.types import NodeInfo, PodInfo, Resource
from scheduler.plugins import names
from scheduler.plugins.helpers import compile_selector

logger = logging.getLogger(__name__)

MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_WAITING = "waiting for the preemption for this pod to be finished"
REASON_PREEMPTED = "Preempted"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
_MAX_INT32 = 2**31 - 1
# Filter plugins whose verdict on a node cannot turn from pass to fail when pods leave it
_POD_INDEPENDENT_OR_MONOTONE_FILTERS = frozenset(
    {names.NODE_UNSCHEDULABLE, names.NODE_NAME, names.TAINT_TOLERATION, names.NODE_AFFINITY, names.NODE_PORTS}
)
# built-in PreFilter extensions whose RemovePod only updates their cycle state and succeeds
_INFALLIBLE_EXTENSIONS = frozenset({names.INTER_POD_AFFINITY, names.POD_TOPOLOGY_SPREAD})
_REJECTIONS = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})
_FAR_FUTURE = "9999-12-31T23:59:59Z"
_ABSENT_STATUS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


class DefaultPreemptionArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    min_candidate_nodes_percentage: int = Field(default=10, alias="minCandidateNodesPercentage")
    min_candidate_nodes_absolute: int = Field(default=100, alias="minCandidateNodesAbsolute")

    @model_validator(mode="after")
    def _check(self) -> DefaultPreemptionArgs:
        p, a = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        if not 0 <= p <= 100:
            raise ValueError(f"minCandidateNodesPercentage: Invalid value: {p}: not in valid range [0, 100]")
        if a < 0:
            raise ValueError(f"minCandidateNodesAbsolute: Invalid value: {a}: not in valid range [0, inf)")
        if p == 0 and a == 0:
            raise ValueError(
                "minCandidateNodesPercentage, minCandidateNodesAbsolute: Invalid value: both "
                "minCandidateNodesPercentage and minCandidateNodesAbsolute cannot be zero"
            )
        return self


@dataclass(slots=True)
class Candidate:
    name: str
    victims: list[PodInfo]
    num_pdb_violations: int


@dataclass(slots=True)
class GangPlacement:
    """One member placed by the gang simulation: its node and the victims evicted for it there."""

    pod: PodInfo
    node: str
    victims: list[PodInfo]


def _start_time(pi: PodInfo) -> str:
    return ((pi.pod.get("status") or {}).get("startTime")) or _FAR_FUTURE


def _importance_key(pi: PodInfo) -> tuple[int, str]:
    """Sort key: most important first (higher priority, then earlier start; upstream MoreImportantPod)."""
    return (-pi.priority, _start_time(pi))


def terminating_by_preemption(pod: JsonDict) -> bool:
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == DISRUPTION_TARGET:
            return bool(c.get("status") == "True" and c.get("reason") == REASON_PREEMPTION_BY_SCHEDULER)
    return False


def filter_pods_with_pdb_violation(
    pods: Sequence[PodInfo], pdbs: Sequence[JsonDict]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split pods into (violating, non-violating): each matching PDB's disruptionsAllowed is spent
    in order; a pod already in status.disruptedPods is not counted (upstream filterPodsWithPDBViolation)."""
    allowed = [int((p.get("status") or {}).get("disruptionsAllowed") or 0) for p in pdbs]
    selectors = [compile_selector((p.get("spec") or {}).get("selector")) for p in pdbs]
    violating: list[PodInfo] = []
    ok: list[PodInfo] = []
    for pi in pods:
        violated = False
        if pi.labels:
            for i, pdb in enumerate(pdbs):
                meta = pdb.get("metadata") or {}
                if meta.get("namespace") != pi.namespace:
                    continue
                sel = selectors[i]
                if sel.empty or not sel.matches(pi.labels):
                    continue
                if pi.name in ((pdb.get("status") or {}).get("disruptedPods") or {}):
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else ok).append(pi)
    return violating, ok


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> Candidate | None:
    """Apply upstream's tie-breakers in order; the first remaining candidate wins."""
    if not candidates:
        return None

    def highest_priority(c: Candidate) -> int:
        return max((v.priority for v in c.victims), default=0)

    def earliest_start_of_highest(c: Candidate) -> str:
        top = highest_priority(c)
        return min((_start_time(v) for v in c.victims if v.priority == top), default=_FAR_FUTURE)

    score_funcs: list[Callable[[Candidate], int]] = [
        lambda c: -c.num_pdb_violations,
        lambda c: -highest_priority(c),
        lambda c: -sum(v.priority + _MAX_INT32 + 1 for v in c.victims),
        lambda c: -len(c.victims),
    ]
    remaining = list(candidates)
    for f in score_funcs:
        best = max(f(c) for c in remaining)
        remaining = [c for c in remaining if f(c) == best]
        if len(remaining) == 1:
            return remaining[0]
    latest = max(earliest_start_of_highest(c) for c in remaining)
    remaining = [c for c in remaining if earliest_start_of_highest(c) == latest]
    return remaining[0]


def fit_error_message(
    num_all_nodes: int,
    statuses: dict[str, Status],
    absent: int,
    absent_reason: str,
    *,
    shared: Sequence[tuple[int, Status]] = (),
) -> str:
    """`0/N nodes are available: <count> <reason>, ....` with reasons sorted as strings (upstream
    FitError). `shared`: (number of nodes, status) for nodes not in `statuses` that all have that
    status (the dry run's known nodes, counted without a per-node entry)."""
    counts: dict[str, int] = {}
    for times, st in shared:
        for r in st.reasons:
            counts[r] = counts.get(r, 0) + times
    # statuses are often shared (one object per reason set): count each object once, times its nodes
    per_status = Counter(map(id, statuses.values()))
    seen: set[int] = set()
    for st in statuses.values():
        if id(st) in seen:
            continue
        seen.add(id(st))
        times = per_status[id(st)]
        for r in st.reasons:
            counts[r] = counts.get(r, 0) + times
    if absent > 0:
        counts[absent_reason] = counts.get(absent_reason, 0) + absent
    msg = f"0/{num_all_nodes} nodes are available:"
    if counts:
        msg += " " + ", ".join(sorted(f"{v} {k}" for k, v in counts.items())) + "."
    return msg


def _potential_nodes(
    all_nodes: list[NodeInfo], node_status: dict[str, Status]
) -> tuple[list[NodeInfo], IntArray, frozenset[str]]:
    """The nodes whose filter status is Unschedulable (preemption may help there; upstream
    nodesWherePreemptionMightHelp), their indexes in `all_nodes`, and the names of those whose
    failing plugin was NodeResourcesFit. The statuses are mostly shared (one object per reason
    set), so each distinct one is judged once and every node goes by its status's identity."""
    node_names = [ni.name for ni in all_nodes]
    sts = list(map(node_status.get, node_names))
    ids = list(map(id, sts))
    distinct = dict(zip(ids, sts, strict=True))
    maybe = {i for i, st in distinct.items() if st is not None and st.code == Code.UNSCHEDULABLE}
    fit = {i for i in maybe if distinct[i].plugin == names.NODE_RESOURCES_FIT}  # type: ignore[union-attr]
    if len(maybe) == len(distinct):
        potential, rows, pot_names = list(all_nodes), np.arange(len(all_nodes), dtype=np.int64), node_names
    else:
        mask = np.fromiter(map(maybe.__contains__, ids), dtype=np.bool_, count=len(ids))
        rows = np.flatnonzero(mask).astype(np.int64)
        idx = rows.tolist()
        potential = [all_nodes[i] for i in idx]
        pot_names = [node_names[i] for i in idx]
    if fit == maybe:
        return potential, rows, frozenset(pot_names)
    pot_ids = [ids[i] for i in rows.tolist()]
    return potential, rows, frozenset(compress(pot_names, map(fit.__contains__, pot_ids)))


class DefaultPreemption(PreEnqueuePlugin, PostFilterPlugin, EnqueueExtensions):
    NAME = names.DEFAULT_PREEMPTION
    Args = DefaultPreemptionArgs

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        if isinstance(args, dict):
            args = DefaultPreemptionArgs.model_validate(args)
        super().__init__(args or DefaultPreemptionArgs(), handle)
        rng = handle.rng if handle is not None else None
        self._rng: random.Random = rng if isinstance(rng, random.Random) else random.Random(0)
        # the dry run's exact shortcuts (see dry_run_preemption); False runs every simulation
        self.shortcuts = True
        self._pdb_store: Any = None
        # preemptors whose victim handling is still running (upstream Evaluator.preempting)
        self._preempting: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        informers = handle.informers if handle is not None else None
        if informers is not None:
            try:
                self._pdb_store = informers.informer(PODDISRUPTIONBUDGETS).store
            except Exception:  # noqa: BLE001 - without PDBs every victim counts as non-violating
                logger.debug("no PodDisruptionBudget informer; preemption ignores PDBs")

    @property
    def _h(self) -> Handle:
        """The framework handle; everything past the pure helpers needs one."""
        if self.handle is None:
            raise RuntimeError("DefaultPreemption needs a framework handle")
        return self.handle

    # --- PreEnqueue: hold a preemptor while its preemption runs ------------------------------

    def pre_enqueue(self, pod: JsonDict) -> Status:
        uid = (pod.get("metadata") or {}).get("uid") or ""
        if uid in self._preempting:
            return Status.unresolvable(MSG_WAITING, plugin=self.NAME)
        return Status()

    # --- eligibility ------------------------------------------------------------------------

    def pod_eligible_to_preempt_others(
        self, pod: PodInfo, nominated_status: Status | None
    ) -> tuple[bool, str]:
        if pod.spec.get("preemptionPolicy") == "Never":
            return False, MSG_NEVER
        if pod.uid in self._preempting:  # a gang sibling whose gang's preemption is running
            return False, MSG_TERMINATING
        nom = (pod.pod.get("status") or {}).get("nominatedNodeName") or self._nominated_in_memory(pod.uid)
        if nom:
            if nominated_status is not None and nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            ni = self._snapshot_get(nom)
            if ni is not None:
                for p in ni.pods:
                    if p.priority < pod.priority and terminating_by_preemption(p.pod):
                        return False, MSG_TERMINATING
        return True, ""

    def _nominated_in_memory(self, uid: str) -> str:
        """A nomination the scheduler holds before the API shows it (a gang sibling's)."""
        return self.handle.nominated_node_name(uid) if self.handle is not None else ""

    def _snapshot_get(self, name: str) -> NodeInfo | None:
        snap = self.handle.snapshot() if self.handle is not None else None
        if snap is None:
            return None
        try:
            return snap.get(name)  # type: ignore[no-any-return]
        except KeyError:
            return None

    def _pdbs(self) -> list[JsonDict]:
        if self._pdb_store is None:
            return []
        return list(self._pdb_store.list())

    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = int(num_nodes * self.args.min_candidate_nodes_percentage // 100)
        n = max(n, int(self.args.min_candidate_nodes_absolute))
        return min(n, num_nodes)

    # --- victims on one node ----------------------------------------------------------------

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: PodInfo,
        node: NodeInfo,
        pdbs: Sequence[JsonDict],
        *,
        protected: frozenset[str] = frozenset(),
    ) -> tuple[list[PodInfo], int, Status]:
        """`node` and `state` are private copies; both are mutated during the dry run. Pods
        whose uid is in `protected` (a gang's members placed by the simulation) are no victims."""
        potential = [p for p in node.pods if p.priority < pod.priority and p.uid not in protected]
        if not potential:
            return [], 0, Status.unresolvable(MSG_NO_VICTIMS, plugin=self.NAME)
        h = self._h
        for p in potential:
            node.remove_pod(p.uid)
            st = h.run_pre_filter_extension_remove_pod(state, pod, p, node)
            if not st.is_success():
                return [], 0, st
        st = h.run_filter_plugins_with_nominated_pods(state, pod, node)
        if not st.is_success():
            return [], 0, st
        potential.sort(key=_importance_key)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []
        num_violating = 0

        def reprieve(p: PodInfo) -> tuple[bool, Status | None]:
            node.add_pod(p)
            st = h.run_pre_filter_extension_add_pod(state, pod, p, node)
            if not st.is_success():
                return False, st
            fits = h.run_filter_plugins_with_nominated_pods(state, pod, node).is_success()
            if not fits:
                node.remove_pod(p.uid)
                st = h.run_pre_filter_extension_remove_pod(state, pod, p, node)
                if not st.is_success():
                    return False, st
                victims.append(p)
            return fits, None

        for p in violating:
            fits, err = reprieve(p)
            if err is not None:
                return [], 0, err
            if not fits:
                num_violating += 1
        for p in non_violating:
            _, err = reprieve(p)
            if err is not None:
                return [], 0, err
        if violating and non_violating:
            victims.sort(key=_importance_key)
        return victims, num_violating, Status()

    # --- exact shortcuts of the per-node simulation -----------------------------------------

    def _fit_shortcut_plugin(self, state: CycleState) -> FilterPlugin | None:
        """The profile's NodeResourcesFit when, for this cycle, "remove every lower-priority pod,
        then Filter" must end in NodeResourcesFit's own verdict on a node whose failure was
        NodeResourcesFit's: every Filter plugin before it ignores the node's pods or only gains
        from removing them (NodePorts), and every PreFilter extension that the removals call
        is a built-in one that always succeeds. None when that cannot be shown (another
        profile order, an out-of-tree plugin, no handle)."""
        h = self.handle
        if h is None:
            return None
        fit: FilterPlugin | None = None
        for pl in h.active_filter_plugins(state):
            if pl.name() == names.NODE_RESOURCES_FIT:
                fit = pl
                break
            if pl.name() not in _POD_INDEPENDENT_OR_MONOTONE_FILTERS:
                return None
        if fit is None:
            return None
        for pre_pl in h.pre_filter_plugins:
            if pre_pl.name() in state.skip_filter_plugins or not pre_pl.has_pre_filter_extensions():
                continue
            if pre_pl.name() not in _INFALLIBLE_EXTENSIONS:
                return None
        return fit

    def _fit_without_lower(
        self,
        fit: FilterPlugin,
        state: CycleState,
        pod: PodInfo,
        node: NodeInfo,
        lower: Sequence[PodInfo],
        memo: dict[tuple[Any, ...], Status | None],
    ) -> Status | None:
        """NodeResourcesFit's Filter on the node as it would be with every pod in `lower` gone:
        a read-only view holding what that Filter reads (the remaining pods; their requests
        summed, integers, so equal to the simulation's subtraction), the node's other fields
        unchanged; nothing is cloned and no other plugin runs. Returns the status the full
        simulation ends with when the pod still does not fit, None when it would fit (then only
        the full simulation can tell). That Filter is a function of the pod's requests (fixed in
        one dry run), the allocatable, the requested sums and the pod count, so `memo` keeps its
        answer per distinct (allocatable, requested, count) over the nodes of one dry run."""
        if len(lower) == len(node.pods):
            remaining: list[PodInfo] = []
        else:
            gone = {p.uid for p in lower}
            remaining = [p for p in node.pods if p.uid not in gone]
        # the node's requested is the sum of its pods' requests: sum the (usually few) that stay
        requested = Resource()
        for p in remaining:
            requested.add(p.requests)
        alloc = node.allocatable
        key = (
            alloc.milli_cpu, alloc.memory, alloc.ephemeral_storage, alloc.allowed_pod_number,
            tuple(alloc.scalar.items()), requested.milli_cpu, requested.memory,
            requested.ephemeral_storage, tuple(requested.scalar.items()), len(remaining),
        )
        if key in memo:
            return memo[key]
        view = NodeInfo.__new__(NodeInfo)
        view.node = node.node
        view.name = node.name
        view.labels = node.labels
        view.taints = node.taints
        view.unschedulable = node.unschedulable
        view.pods = remaining
        view.pods_with_affinity = node.pods_with_affinity
        view.pods_with_required_anti_affinity = node.pods_with_required_anti_affinity
        view.used_ports = node.used_ports
        view.non_zero_requested = node.non_zero_requested
        view.requested = requested
        view.allocatable = alloc
        view.image_states = node.image_states
        view.generation = node.generation
        try:
            st = fit.filter(state, pod, view)
        except Exception:  # noqa: BLE001 - the full simulation reports it as the runtime does
            return None  # not memoized: every such node takes the full simulation
        known = None if st is None or not st.code or st.code not in _REJECTIONS else st.with_plugin(fit.name())
        memo[key] = known
        return known

    def _nodes_with_nominated_peers(self, pod: PodInfo) -> set[str]:
        """Every node `_nominated_peers` holds for (asked only of the nodes with nominations)."""
        h = self._h
        return {n for n in h.nodes_with_nominated_pods() if self._nominated_peers(pod, n)}

    def _vector_known(
        self,
        fit: FilterPlugin | None,
        state: CycleState,
        pod: PodInfo,
        potential: Sequence[NodeInfo],
        arrays: NodeArrays,
        rows: IntArray,
        fit_failed: frozenset[str],
        peers: set[str],
        memo: dict[tuple[Any, ...], Status | None],
    ) -> tuple[BoolArray, list[tuple[IntArray, Status]]]:
        """The two shortcuts of `dry_run_preemption` decided over the node arrays at once, for
        the nodes where no pod is protected: (which potential nodes are known, [(their
        indexes in `potential`, the shared status they get)]). A node whose lowest pod priority
        is not below the preemptor's has no victim ("No preemption victims found for incoming
        pod"); a node in `fit_failed`, without equal-or-higher-priority nominations, whose every
        pod is of lower priority becomes empty in the simulation, so NodeResourcesFit's verdict
        there depends on its allocatable only: one `_fit_without_lower` per distinct allocatable
        answers every such node (those where the pod would fit stay unknown: they are simulated)."""
        p = pod.priority
        n = len(potential)
        no_victims = arrays.min_prio[rows] >= p  # an empty node's min_prio is above every priority
        groups: list[tuple[IntArray, Status]] = []
        idx = np.flatnonzero(no_victims)
        if len(idx):
            groups.append((idx, Status.unresolvable(MSG_NO_VICTIMS, plugin=self.NAME)))
        known = no_victims.copy()
        if fit is None or not fit_failed:
            return known, groups
        emptied = ~no_victims & (arrays.max_prio[rows] < p)
        if len(fit_failed) < n:
            emptied &= np.fromiter((ni.name in fit_failed for ni in potential), dtype=np.bool_, count=n)
        for name in peers:
            r = arrays.index.get(name)
            if r is not None:
                emptied &= rows != r
        idx = np.flatnonzero(emptied)
        if not len(idx):
            return known, groups
        sel = rows[idx]
        cols = [arrays.alloc_cpu[sel], arrays.alloc_mem[sel], arrays.alloc_eph[sel], arrays.alloc_pods[sel]]
        cols += [col[sel] for col in arrays.scalar_alloc.values()]
        key = np.stack(cols, axis=1)
        if bool((key == key[0]).all()):
            first: list[int] = [0]
            members: list[IntArray] = [idx]
        else:
            _, first_arr, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
            inverse = inverse.reshape(-1)
            first = first_arr.tolist()
            members = [idx[inverse == g] for g in range(len(first))]
        for f, group in zip(first, members, strict=True):
            rep = potential[int(idx[f])]
            st = self._fit_without_lower(fit, state, pod, rep, rep.pods, memo)
            if st is None:
                continue
            known[group] = True
            groups.append((group, st))
        return known, groups

    def _nominated_peers(self, pod: PodInfo, node_name: str) -> bool:
        """Whether pods of equal or higher priority are nominated to the node (then the dry
        run's Filter runs twice, with and without them, and no shortcut applies)."""
        return any(
            np.priority >= pod.priority and np.uid != pod.uid
            for np in self._h.nominated_pods_for_node(node_name)
        )

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: PodInfo,
        potential: Sequence[NodeInfo],
        pdbs: Sequence[JsonDict],
        offset: int,
        num_candidates: int,
        *,
        protected: frozenset[str] = frozenset(),
        fit_failed: frozenset[str] = frozenset(),
        rows: IntArray | None = None,
    ) -> tuple[list[Candidate], dict[str, Status]]:
        """Simulate preemption on each potential node from `offset` (upstream DryRunPreemption):
        non-violating then PDB-violating candidates, each list capped at `num_candidates`, the
        walk stopping once a non-violating one is found and the two reach `num_candidates`.
        Two exact shortcuts skip the clone-and-filter simulation where its answer is known: a
        node without a pod of lower priority than `pod` gets "No preemption victims found for
        incoming pod" (SelectVictimsOnNode's first answer); a node in `fit_failed` (its Filter
        failure was NodeResourcesFit's) without higher-priority nominations, where the pod still
        does not fit once every lower-priority pod is gone, gets NodeResourcesFit's status on
        that reduced node (what the simulation's Filter run returns). `shortcuts = False` on the
        instance turns both off (tests compare the two paths).

        `rows` (the snapshot rows of `potential`, row k = potential[k]'s index in the snapshot's
        node list) lets both shortcuts be decided for every node at once over the snapshot's
        node arrays (`_vector_known`) when no pod is protected; the walk then visits only the
        other nodes, in the same order, and the known nodes' statuses are reported for the
        part of the walk that ran (all of it unless enough candidates were found), as if each
        had been visited in turn."""
        cands, statuses, known = self._dry_run(
            state, pod, potential, pdbs, offset, num_candidates, protected=protected, fit_failed=fit_failed, rows=rows
        )
        for idx, st in known:
            statuses.update(dict.fromkeys([potential[k].name for k in idx.tolist()], st))
        return cands, statuses

    def _dry_run(
        self,
        state: CycleState,
        pod: PodInfo,
        potential: Sequence[NodeInfo],
        pdbs: Sequence[JsonDict],
        offset: int,
        num_candidates: int,
        *,
        protected: frozenset[str],
        fit_failed: frozenset[str],
        rows: IntArray | None,
    ) -> tuple[list[Candidate], dict[str, Status], list[tuple[IntArray, Status]]]:
        """`dry_run_preemption` with the array-known nodes apart: (candidates, the statuses of
        the nodes walked, [(indexes in `potential` of known nodes the walk passed, their shared
        status)])."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        n = len(potential)
        fit = self._fit_shortcut_plugin(state) if self.shortcuts and fit_failed else None
        memo: dict[tuple[Any, ...], Status | None] = {}
        peers = self._nodes_with_nominated_peers(pod) if self.shortcuts and self.handle is not None else set()
        groups: list[tuple[IntArray, Status]] = []
        todo: Sequence[int] = range(offset, offset + n)
        if self.shortcuts and rows is not None and not protected and n and abs(pod.priority) < PRIO_LIMIT:
            arrays = self._h.snapshot().node_arrays()
            if arrays.safe and len(rows) == n:
                known, groups = self._vector_known(fit, state, pod, potential, arrays, rows, fit_failed, peers, memo)
                walk = (np.arange(n, dtype=np.int64) + offset) % n
                todo = walk[~known[walk]].tolist()
        stop = n  # how many steps of the walk ran
        for i in todo:
            k = i % n
            src = potential[k]
            if self.shortcuts:
                lower = [p for p in src.pods if p.priority < pod.priority and p.uid not in protected]
                if not lower:
                    statuses[src.name] = Status.unresolvable(MSG_NO_VICTIMS, plugin=self.NAME)
                    continue
                if fit is not None and src.name in fit_failed and src.name not in peers:
                    known_st = self._fit_without_lower(fit, state, pod, src, lower, memo)
                    if known_st is not None:
                        statuses[src.name] = known_st
                        continue
            ni = src.clone()
            victims, num_viol, st = self.select_victims_on_node(
                state.clone(), pod, ni, pdbs, protected=protected
            )
            if st.is_success() and victims:
                # each list holds at most num_candidates (upstream candidateList): later ones are dropped
                found = non_violating if num_viol == 0 else violating
                if len(found) < num_candidates:
                    found.append(Candidate(ni.name, victims, num_viol))
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    stop = (k - offset) % n + 1
                    break
                continue
            if st.is_success():
                st = Status.as_error(
                    f'expected at least one victim pod on node "{ni.name}"', plugin=self.NAME
                )
            statuses[ni.name] = st
        if stop < n:
            groups = [(idx[(idx - offset) % n < stop], st) for idx, st in groups]
        return non_violating + violating, statuses, groups

    # --- PostFilter -------------------------------------------------------------------------

    async def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status: dict[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        result, status = await self.preempt(state, pod, filtered_node_status)
        msg = status.message()
        if msg:
            return result, Status(status.code, [f"preemption: {msg}"], self.NAME, status.error)
        return result, status

    async def preempt(
        self, state: CycleState, pod: PodInfo, node_status: dict[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        nom = (pod.pod.get("status") or {}).get("nominatedNodeName") or ""
        # a node without a status is UnschedulableAndUnresolvable (upstream NodeToStatus.Get)
        nom_status = node_status.get(nom, _ABSENT_STATUS) if nom else None
        ok, msg = self.pod_eligible_to_preempt_others(pod, nom_status)
        if not ok:
            return None, Status.unschedulable(msg, plugin=self.NAME)
        snap = self._h.snapshot()
        all_nodes: list[NodeInfo] = list(snap.node_infos())
        if not all_nodes:
            return None, Status.as_error("no nodes available", plugin=self.NAME)
        potential, potential_rows, fit_failed = _potential_nodes(all_nodes, node_status)
        statuses: dict[str, Status] = {}
        known: list[tuple[IntArray, Status]] = []
        candidates: list[Candidate] = []
        if not potential:
            logger.debug("preemption will not help pod=%s", pod.key)
            if nom:
                await self._clear_nominated_node_name([pod])
        else:
            offset = self._rng.randrange(len(potential))
            candidates, statuses, known = self._dry_run(
                state,
                pod,
                potential,
                self._pdbs(),
                offset,
                self.calculate_num_candidates(len(potential)),
                protected=frozenset(),
                fit_failed=fit_failed,
                # all_nodes is the snapshot's node list: its indexes are the node arrays' rows
                rows=potential_rows,
            )
        if not candidates:
            # the distinct statuses, first seen first (most nodes share one of a few)
            distinct = dict(zip(map(id, statuses.values()), statuses.values(), strict=True))
            # the nodes' errors as upstream's utilerrors aggregate: distinct messages, bracketed if several
            errs = [s.message() for s in distinct.values() if s.code == Code.ERROR]
            if errs:
                return None, Status.as_error(aggregate(errs), plugin=self.NAME)
            # the known nodes are counted per shared status, without a per-node entry
            shared = [(len(idx), st) for idx, st in known]
            absent = len(all_nodes) - len(statuses) - sum(t for t, _ in shared)
            msg = fit_error_message(len(all_nodes), statuses, absent, MSG_NOT_HELPFUL, shared=shared)
            return PostFilterResult(""), Status.unschedulable(msg, plugin=self.NAME)
        best = pick_one_node_for_preemption(candidates)
        if best is None or not best.name:
            return None, Status.unschedulable("no candidate node for preemption", plugin=self.NAME)
        demand = self._gang_demand(pod)
        if demand is not None and demand.need > 1:
            plan, why = await self.plan_gang_preemption(pod, best, demand, all_nodes)
            if plan is None:
                logger.info("gang preemption refused pod=%s group=%s: %s", pod.key, demand.group, why)
                return None, Status.unschedulable(why, plugin=self.NAME)
            self.prepare_gang_async(plan, pod)
            return PostFilterResult(best.name), Status()
        self.prepare_candidate_async(best, pod)
        return PostFilterResult(best.name), Status()

    # --- gang-aware preemption ----------------------------------------------------------------

    def _gang_demand(self, pod: PodInfo) -> GangDemand | None:
        """Ask the profile's gang plugins through the handle (`GangDemandPlugin`s at PostFilter)."""
        return self.handle.gang_demand(pod) if self.handle is not None else None

    async def plan_gang_preemption(
        self, pod: PodInfo, best: Candidate, demand: GangDemand, all_nodes: Sequence[NodeInfo]
    ) -> tuple[list[GangPlacement] | None, str]:
        """Simulate the whole gang on a copy of the snapshot: the preemptor on `best` with its
        victims removed, then each pending sibling, with its own PreFilter and Filter plugins,
        on a node where it fits as is, else where evicting pods of lower priority than that
        sibling makes it fit (the same dry run and tie-breakers as for a single pod; members
        already placed are never victims). Returns the placements when `demand.need` members
        fit, else (None, why) and nothing may be evicted."""
        work: dict[str, NodeInfo] = {}
        order = [ni.name for ni in all_nodes]
        base = {ni.name: ni for ni in all_nodes}

        def node(name: str) -> NodeInfo:
            ni = work.get(name)
            if ni is None:
                ni = work[name] = base[name].clone()
            return ni

        removed: list[tuple[str, PodInfo]] = []
        added: list[tuple[str, PodInfo]] = []

        def apply(m: PodInfo, name: str, victims: Sequence[PodInfo]) -> None:
            ni = node(name)
            for v in victims:
                ni.remove_pod(v.uid)
                removed.append((name, v))
            ni.add_pod(m)
            added.append((name, m))

        apply(pod, best.name, best.victims)
        plan = [GangPlacement(pod, best.name, list(best.victims))]
        protected = {pod.uid}
        pdbs = self._pdbs()
        for sib in demand.siblings:
            if len(plan) >= demand.need:
                break
            placed = await self._place_sibling(sib, order, node, removed, added, pdbs, frozenset(protected))
            if placed is None:
                continue
            name, victims = placed
            apply(sib, name, victims)
            plan.append(GangPlacement(sib, name, victims))
            protected.add(sib.uid)
        if len(plan) < demand.need:
            return None, (
                f"podGroup {demand.group} cannot be placed even after preemption: {len(plan)} of the "
                f"{demand.need} members it still needs would fit; no pod is preempted for a gang "
                "that cannot complete"
            )
        return plan, ""

    async def _place_sibling(
        self,
        sib: PodInfo,
        order: Sequence[str],
        node: Callable[[str], NodeInfo],
        removed: Sequence[tuple[str, PodInfo]],
        added: Sequence[tuple[str, PodInfo]],
        pdbs: Sequence[JsonDict],
        protected: frozenset[str],
    ) -> tuple[str, list[PodInfo]] | None:
        """Where `sib` goes in the simulation (a node and the victims there), or None."""
        h = self._h
        state = CycleState()
        nodes = [node(n) for n in order]
        result, st, _ = h.run_pre_filter(state, sib, nodes)
        if not st.is_success():
            return None
        allowed = result.node_names if result is not None else None
        # the simulation's evictions and placements, as the PreFilter state must see them
        for name, v in removed:
            if not h.run_pre_filter_extension_remove_pod(state, sib, v, node(name)).is_success():
                return None
        for name, m in added:
            if not h.run_pre_filter_extension_add_pod(state, sib, m, node(name)).is_success():
                return None
        potential: list[NodeInfo] = []
        fit_failed: set[str] = set()
        for ni in nodes:
            if allowed is not None and ni.name not in allowed:
                continue
            st = h.run_filter_plugins_with_nominated_pods(state, sib, ni)
            if st.is_success():
                return ni.name, []
            if st.code == Code.UNSCHEDULABLE:
                potential.append(ni)
                if st.plugin == names.NODE_RESOURCES_FIT:
                    fit_failed.add(ni.name)
        if not potential or sib.spec.get("preemptionPolicy") == "Never":
            return None
        cands, _ = self.dry_run_preemption(
            state, sib, potential, pdbs, 0, len(potential), protected=protected, fit_failed=frozenset(fit_failed)
        )
        best = pick_one_node_for_preemption(cands)
        if best is None:
            return None
        return best.name, list(best.victims)

    def prepare_gang_async(self, plan: Sequence[GangPlacement], pod: PodInfo) -> None:
        """Nominate every sibling to its node, then preempt all the gang's victims in one task
        (the preemptor held at PreEnqueue until the task lets it go, as for a single pod)."""
        self._preempting.update(p.pod.uid for p in plan)
        # nominate the siblings in memory at once, so the gang's own next members neither
        # plan a second preemption nor take each other's places before the API patches land
        for p in plan[1:]:
            self._h.add_nominated_pod(p.pod, p.node)
        coro = self._run_gang_preemption(list(plan), pod)
        self._spawn(coro, f"preemption:{pod.key}")

    async def _run_gang_preemption(self, plan: list[GangPlacement], pod: PodInfo) -> None:
        failed = False
        try:
            for p in plan[1:]:
                try:
                    await self._h.client.patch(
                        PODS,
                        p.pod.name,
                        {"status": {"nominatedNodeName": p.node}},
                        p.pod.namespace,
                        patch_type="merge",
                        subresource="status",
                    )
                except NotFoundError:
                    failed = True
            victims: dict[str, PodInfo] = {}
            for p in plan:
                for v in p.victims:
                    victims.setdefault(v.uid, v)
            merged = Candidate(plan[0].node, list(victims.values()), 0)
            by_node = {v.uid: p.node for p in plan for v in p.victims}
            release = [p.pod.uid for p in plan]
            failed = not await self._preempt_victims(merged, pod, node_of=by_node, release=release) or failed
        except asyncio.CancelledError:
            raise
        except Exception:  # a crash here must not stop the scheduler
            logger.exception("gang preemption task crashed preemptor=%s", pod.key)
            failed = True
        finally:
            self._preempting.difference_update(p.pod.uid for p in plan)
        self._h.activate([p.pod.pod for p in plan], gated_by=None if failed else self.NAME)

    # --- carrying it out (asynchronously, upstream prepareCandidateAsync) --------------------

    def is_pod_running_preemption(self, uid: str) -> bool:
        """Whether the preemption started for pod `uid` is still making its API calls."""
        return uid in self._preempting

    def prepare_candidate_async(self, c: Candidate, pod: PodInfo) -> None:
        """Start the victim handling for `c` in its own task and return at once. The preemptor
        is marked preempting first, so PreEnqueue holds it until the task lets it go."""
        self._preempting.add(pod.uid)
        self._spawn(self._run_preemption(c, pod), f"preemption:{pod.key}")

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        if self.handle is not None:
            self.handle.spawn(coro, name)
            return
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait_for_preemptions(self) -> None:
        """Await the preemption tasks this plugin started itself (tests; shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _run_preemption(self, c: Candidate, pod: PodInfo) -> None:
        """The preemption task: `_preempt_victims`, then the preemptor is released from
        PreEnqueue (if not already) and activated when it is still held there, or when any
        call failed (upstream activates on failure so the pod cannot stay parked)."""
        failed = False
        try:
            failed = not await self._preempt_victims(c, pod)
        except asyncio.CancelledError:
            raise
        except Exception:  # a crash here must not stop the scheduler
            logger.exception("preemption task crashed preemptor=%s", pod.key)
            failed = True
        finally:
            self._preempting.discard(pod.uid)
        self._activate(pod, only_gated=not failed)

    async def _preempt_victims(
        self,
        c: Candidate,
        pod: PodInfo,
        *,
        node_of: dict[str, str] | None = None,
        release: Sequence[str] = (),
    ) -> bool:
        """Clear lower-priority nominations on the node, preempt every victim but the last in
        parallel, release the preemptor, then preempt the last victim (skipped when an earlier
        one failed). The preemptor is released before the last deletion so that deletion's
        event can requeue it (upstream's ordering). Returns whether every call succeeded."""
        ok = True
        logger.info("preemption started preemptor=%s node=%s victims=%d", pod.key, c.name, len(c.victims))
        lower: list[PodInfo] = []
        nodes = sorted({c.name, *(node_of or {}).values()})
        for n in nodes:
            lower += [p for p in self._h.nominated_pods_for_node(n) if p.priority < pod.priority and p.uid != pod.uid]
        if lower:
            try:
                await self._clear_nominated_node_name(lower)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # not critical (upstream carries on)
                logger.info("could not clear nominatedNodeName node=%s err=%s", c.name, e)
                ok = False
        if not c.victims:
            return ok
        head, last = c.victims[:-1], c.victims[-1]

        def at(v: PodInfo) -> Candidate:  # the victim's own node (a gang's victims span nodes)
            n = (node_of or {}).get(v.uid)
            return c if n is None or n == c.name else Candidate(n, [], 0)

        head_ok = True
        if head:
            results = await asyncio.gather(
                *(self.preempt_pod(at(v), pod, v) for v in head), return_exceptions=True
            )
            for r in results:
                if isinstance(r, asyncio.CancelledError):
                    raise r
                if isinstance(r, BaseException):
                    logger.info("preemption of a victim failed preemptor=%s err=%s", pod.key, r)
                    head_ok = False
        self._preempting.discard(pod.uid)
        self._preempting.difference_update(release)
        if head_ok:
            try:
                await self.preempt_pod(at(last), pod, last)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the preemptor is activated by the caller
                logger.info("preemption of the last victim failed preemptor=%s err=%s", pod.key, e)
                head_ok = False
        logger.info("preemption finished preemptor=%s node=%s ok=%s", pod.key, c.name, ok and head_ok)
        return ok and head_ok

    def _activate(self, pod: PodInfo, *, only_gated: bool) -> None:
        if self.handle is not None:
            self.handle.activate([pod.pod], gated_by=self.NAME if only_gated else None)

    async def preempt_pod(self, c: Candidate, preemptor: PodInfo, victim: PodInfo) -> None:
        """One victim: a Permit-waiting pod is rejected; any other gets the DisruptionTarget
        condition (a strategic-merge status patch keyed by condition type, so concurrent status
        writes survive), is deleted with its own grace period, and gets a `Preempted` event."""
        h = self._h
        waiting = h.get_waiting_pod(victim.uid)
        if waiting is not None:
            waiting.reject(self.NAME, "preempted")
            logger.info(
                "preemptor rejected a waiting pod preemptor=%s victim=%s node=%s",
                preemptor.key,
                victim.key,
                c.name,
            )
        else:
            scheduler_name = preemptor.spec.get("schedulerName") or h.scheduler_name
            cond: JsonDict = {
                "type": DISRUPTION_TARGET,
                "status": "True",
                "reason": REASON_PREEMPTION_BY_SCHEDULER,
                "message": f"{scheduler_name}: preempting to accommodate a higher priority pod",
            }
            existing = next(
                (
                    x
                    for x in (victim.pod.get("status") or {}).get("conditions") or ()
                    if x.get("type") == DISRUPTION_TARGET
                ),
                None,
            )
            updated = existing is None or any(
                existing.get(k) != cond[k] for k in ("status", "reason", "message")
            )
            try:
                if updated:
                    if existing is not None and existing.get("status") == cond["status"]:
                        cond["lastTransitionTime"] = existing.get("lastTransitionTime") or self._now()
                    else:
                        cond["lastTransitionTime"] = self._now()
                    await h.client.patch(
                        PODS,
                        victim.name,
                        {"status": condition_status_patch(victim.pod, cond)},
                        victim.namespace,
                        patch_type="strategic",
                        subresource="status",
                    )
                await h.client.delete(PODS, victim.name, victim.namespace)
            except NotFoundError:
                logger.debug("victim already deleted victim=%s", victim.key)
                return
            logger.info("preempted victim=%s preemptor=%s node=%s", victim.key, preemptor.key, c.name)
        h.record_event(
            victim.pod,
            "Normal",
            REASON_PREEMPTED,
            "Preempting",
            f"Preempted by pod {preemptor.uid} on node {c.name}",
            related=preemptor.pod,
        )

    def _now(self) -> str:
        now = self.handle.clock.now() if self.handle is not None else datetime.now(UTC)
        return rfc3339(now)

    async def _clear_nominated_node_name(self, pods: Sequence[PodInfo]) -> None:
        for p in pods:
            if not (p.pod.get("status") or {}).get("nominatedNodeName"):
                continue
            try:
                await self._h.client.patch(
                    PODS,
                    p.name,
                    {"status": {"nominatedNodeName": None}},
                    p.namespace,
                    patch_type="merge",
                    subresource="status",
                )
            except NotFoundError:
                continue

    # --- events -----------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Registered so the queue knows preemption cares about deletions; the decision belongs to the
        # plugins that rejected the pod (upstream returns QueueSkip).
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                lambda pod, old, new: QueueingHint.SKIP,
            )
        ]
