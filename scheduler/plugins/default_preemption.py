"""DefaultPreemption (PostFilter): when no node fits, find a node where evicting strictly
lower-priority pods lets the pod fit, delete those victims and nominate that node (upstream
plugins/defaultpreemption + framework/preemption).

Flow: eligibility (preemptionPolicy Never; a lower-priority pod on the nominated node already
terminating because of scheduler preemption) -> candidates among nodes whose filter status was
Unschedulable (not UnschedulableAndUnresolvable), dry-run from a random offset until enough are
found -> per node: remove every lower-priority pod, check fit, reprieve PDB-violating then other
victims, most important first -> pick a node (fewest PDB violations, lowest highest victim priority,
smallest shifted priority sum, fewest victims, latest start of the highest-priority victims, first)
-> for each victim: reject it if waiting at Permit, else patch a DisruptionTarget condition
(reason PreemptionByScheduler) and delete it; clear lower-priority nominations on that node.

What the framework handle must offer (besides Handle): `run_filter_plugins_with_nominated_pods(state,
pod_info, node_info) -> Status`, `run_pre_filter_extension_remove_pod(state, pod_info, victim_info,
node_info) -> Status`, `run_pre_filter_extension_add_pod(...) -> Status`; optional:
`nominated_pods_for_node(node_name) -> list[PodInfo]`, `rng` (random.Random), `scheduler_name`.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from minik3s.api.errors import NotFoundError
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
    PostFilterPlugin,
    PostFilterResult,
    QueueingHint,
    Status,
)
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import compile_selector

logger = logging.getLogger(__name__)

MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
_MAX_INT32 = 2**31 - 1
_FAR_FUTURE = "9999-12-31T23:59:59Z"


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
    num_all_nodes: int, statuses: dict[str, Status], absent: int, absent_reason: str
) -> str:
    """`0/N nodes are available: <count> <reason>, ....` with reasons sorted as strings (upstream FitError)."""
    counts: dict[str, int] = {}
    for st in statuses.values():
        for r in st.reasons:
            counts[r] = counts.get(r, 0) + 1
    if absent > 0:
        counts[absent_reason] = counts.get(absent_reason, 0) + absent
    msg = f"0/{num_all_nodes} nodes are available:"
    if counts:
        msg += " " + ", ".join(sorted(f"{v} {k}" for k, v in counts.items())) + "."
    return msg


class DefaultPreemption(PostFilterPlugin, EnqueueExtensions):
    NAME = names.DEFAULT_PREEMPTION
    Args = DefaultPreemptionArgs

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        if isinstance(args, dict):
            args = DefaultPreemptionArgs.model_validate(args)
        super().__init__(args or DefaultPreemptionArgs(), handle)
        self._h: Any = handle  # the preemption handle described in the module docstring
        rng = getattr(handle, "rng", None) if handle is not None else None
        self._rng: random.Random = rng if isinstance(rng, random.Random) else random.Random(0)
        self._pdb_store: Any = None
        informers = getattr(handle, "informers", None) if handle is not None else None
        if informers is not None:
            try:
                self._pdb_store = informers.informer(PODDISRUPTIONBUDGETS).store
            except Exception:  # noqa: BLE001 - without PDBs every victim counts as non-violating
                logger.debug("no PodDisruptionBudget informer; preemption ignores PDBs")

    # --- eligibility ------------------------------------------------------------------------

    def pod_eligible_to_preempt_others(
        self, pod: PodInfo, nominated_status: Status | None
    ) -> tuple[bool, str]:
        if pod.spec.get("preemptionPolicy") == "Never":
            return False, MSG_NEVER
        nom = (pod.pod.get("status") or {}).get("nominatedNodeName") or ""
        if nom:
            if nominated_status is not None and nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            ni = self._snapshot_get(nom)
            if ni is not None:
                for p in ni.pods:
                    if p.priority < pod.priority and terminating_by_preemption(p.pod):
                        return False, MSG_TERMINATING
        return True, ""

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
        self, state: CycleState, pod: PodInfo, node: NodeInfo, pdbs: Sequence[JsonDict]
    ) -> tuple[list[PodInfo], int, Status]:
        """`node` and `state` are private copies; both are mutated during the dry run."""
        h = self._h
        potential = [p for p in node.pods if p.priority < pod.priority]
        if not potential:
            return [], 0, Status.unresolvable(MSG_NO_VICTIMS, plugin=self.NAME)
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

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: PodInfo,
        potential: Sequence[NodeInfo],
        pdbs: Sequence[JsonDict],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status]]:
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        n = len(potential)
        for i in range(n):
            ni = potential[(offset + i) % n].clone()
            victims, num_viol, st = self.select_victims_on_node(state.clone(), pod, ni, pdbs)
            if st.is_success() and victims:
                (non_violating if num_viol == 0 else violating).append(Candidate(ni.name, victims, num_viol))
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if st.is_success():
                st = Status.as_error(
                    f'expected at least one victim pod on node "{ni.name}"', plugin=self.NAME
                )
            statuses[ni.name] = st
        return non_violating + violating, statuses

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
        ok, msg = self.pod_eligible_to_preempt_others(pod, node_status.get(nom) if nom else None)
        if not ok:
            return None, Status.unschedulable(msg, plugin=self.NAME)
        snap = self._h.snapshot()
        all_nodes: list[NodeInfo] = list(snap.node_infos())
        if not all_nodes:
            return None, Status.as_error("no nodes available", plugin=self.NAME)
        potential = [
            ni
            for ni in all_nodes
            if (st := node_status.get(ni.name)) is not None and st.code == Code.UNSCHEDULABLE
        ]
        statuses: dict[str, Status] = {}
        candidates: list[Candidate] = []
        if not potential:
            logger.debug("preemption will not help pod=%s", pod.key)
            if nom:
                await self._clear_nominated_node_name([pod])
        else:
            offset = self._rng.randrange(len(potential))
            candidates, statuses = self.dry_run_preemption(
                state, pod, potential, self._pdbs(), offset, self.calculate_num_candidates(len(potential))
            )
        if not candidates:
            errs = [s for s in statuses.values() if s.code == Code.ERROR]
            if errs:
                return None, Status.as_error(errs[0].message(), plugin=self.NAME)
            msg = fit_error_message(len(all_nodes), statuses, len(all_nodes) - len(statuses), MSG_NOT_HELPFUL)
            return PostFilterResult(""), Status.unschedulable(msg, plugin=self.NAME)
        best = pick_one_node_for_preemption(candidates)
        if best is None or not best.name:
            return None, Status.unschedulable("no candidate node for preemption", plugin=self.NAME)
        st = await self.prepare_candidate(best, pod)
        if not st.is_success():
            return None, st
        return PostFilterResult(best.name), Status()

    # --- carrying it out --------------------------------------------------------------------

    async def prepare_candidate(self, c: Candidate, pod: PodInfo) -> Status:
        errors: list[BaseException] = []

        async def one(v: PodInfo) -> None:
            try:
                await self.preempt_pod(c, pod, v)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - any API failure fails this attempt
                errors.append(e)

        async with asyncio.TaskGroup() as tg:
            for v in c.victims:
                tg.create_task(one(v), name=f"preempt-{v.key}")
        if errors:
            return Status.as_error(errors[0], plugin=self.NAME)
        lower = []
        nominated_fn = getattr(self.handle, "nominated_pods_for_node", None)
        if callable(nominated_fn):
            lower = [p for p in nominated_fn(c.name) if p.priority < pod.priority and p.uid != pod.uid]
        if lower:
            await self._clear_nominated_node_name(lower)
        return Status()

    async def preempt_pod(self, c: Candidate, preemptor: PodInfo, victim: PodInfo) -> None:
        h = self._h
        waiting = h.get_waiting_pod(victim.uid) if hasattr(h, "get_waiting_pod") else None
        if waiting is not None:
            waiting.reject(self.NAME, "preempted")
            logger.info(
                "preemptor rejected a waiting pod preemptor=%s victim=%s node=%s",
                preemptor.key,
                victim.key,
                c.name,
            )
            return
        scheduler_name = preemptor.spec.get("schedulerName") or getattr(
            h, "scheduler_name", "default-scheduler"
        )
        cond = {
            "type": DISRUPTION_TARGET,
            "status": "True",
            "reason": REASON_PREEMPTION_BY_SCHEDULER,
            "message": f"{scheduler_name}: preempting to accommodate a higher priority pod",
            # upstream UpdatePodCondition stamps the transition time (kept when the status is unchanged)
            "lastTransitionTime": rfc3339(h.clock.now()),
        }
        conditions = [dict(x) for x in (victim.pod.get("status") or {}).get("conditions") or ()]
        updated = False
        for i, existing in enumerate(conditions):
            if existing.get("type") == DISRUPTION_TARGET:
                if any(existing.get(k) != cond[k] for k in ("status", "reason", "message")):
                    if existing.get("status") == cond["status"] and existing.get("lastTransitionTime"):
                        cond["lastTransitionTime"] = existing["lastTransitionTime"]
                    conditions[i] = cond
                    updated = True
                break
        else:
            conditions.append(cond)
            updated = True
        try:
            if updated:
                await h.client.patch(
                    PODS,
                    victim.name,
                    {"status": {"conditions": conditions}},
                    victim.namespace,
                    patch_type="merge",
                    subresource="status",
                )
            await h.client.delete(PODS, victim.name, victim.namespace)
        except NotFoundError:
            logger.debug("victim already deleted victim=%s", victim.key)
            return
        logger.info("preempted victim=%s preemptor=%s node=%s", victim.key, preemptor.key, c.name)

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
