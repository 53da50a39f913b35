"""PodTopologySpread (PreFilter, Filter, PreScore, Score): spread matching pods evenly across
topology domains (upstream plugins/podtopologyspread).

Filter (DoNotSchedule constraints): for the node's domain v of constraint i,
    count_i[v] + (1 if the pod matches the selector) − min_i <= maxSkew_i
where count_i counts matching pods (same namespace, not terminating) on eligible nodes (all
constraint keys present; nodeAffinityPolicy Honor: node matches the pod's nodeSelector/required
affinity; nodeTaintsPolicy Honor: no untolerated NoSchedule/NoExecute taint), and min_i is the
smallest domain count, or 0 when fewer than minDomains domains exist.
Example: zones a=2, b=0 pods, maxSkew 1, pod matches: zone a -> 2+1−0 = 3 > 1 rejected; b -> 1 ok.

Score (ScheduleAnyway constraints, or the system defaults hostname/3 + zone/5 when the pod has no
constraints and a Service/RC/ReplicaSet/StatefulSet selects it):
    raw = round(Σ_i count_i(node's domain) * ln(size_i + 2) + (maxSkew_i − 1))
    normalized = 100 * (max + min − raw) // max  (ignored nodes 0; all 100 when max is 0).

The per-node counts behind count_i (PreFilter, PreScore) and the hostname counts Score reads are
remembered across cycles per (selector, namespace, key) and refreshed through the snapshot's
change journal for the nodes that changed (`_memo`); the arithmetic above is unchanged.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from minik3s.api.helpers.node_affinity import RequiredNodeAffinity
from minik3s.api.helpers.taints import find_untolerated_taint, is_no_schedule_or_no_execute
from minik3s.api.resources import builtin_resources
from minik3s.api.selectors import LabelSelector, selector_from_set
from minik3s.api.types import JsonDict
from scheduler.framework.cycle_state import FEASIBLE_ROWS_KEY, CycleState
from scheduler.framework.interface import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    NodeScore,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    Status,
)
from scheduler.framework.node_arrays import IntArray, LabelCodes, NodeArrays, RowMemo
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import SUCCESS, as_pod_info, cached_on, compile_selector

logger = logging.getLogger(__name__)

_COUNT_NONZERO = np.count_nonzero
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
PRE_FILTER_STATE_KEY = "PreFilter" + names.POD_TOPOLOGY_SPREAD
PRE_SCORE_STATE_KEY = "PreScore" + names.POD_TOPOLOGY_SPREAD
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"

SYSTEM_DEFAULT_CONSTRAINTS: tuple[JsonDict, ...] = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)

# at most this many (namespace, labels, controller) default selectors remembered at once
_SELECTOR_MEMO_SIZE = 4096


def _controller_ref(pod: JsonDict) -> JsonDict | None:
    """The pod's controller reference: its first ownerReference with `controller` set
    (metav1.GetControllerOf), which the default selector reads (kind, apiVersion, name)."""
    for o in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if o.get("controller"):
            return o  # type: ignore[no-any-return]
    return None


class PodTopologySpreadArgs(BaseModel):
    """`defaultConstraints` apply to pods without their own constraints when `defaultingType` is
    List; with System (the default) the built-in hostname/zone ScheduleAnyway pair is used."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    default_constraints: list[dict[str, Any]] = Field(default_factory=list, alias="defaultConstraints")
    defaulting_type: Literal["System", "List"] = Field(default="System", alias="defaultingType")

    @model_validator(mode="after")
    def _check(self) -> PodTopologySpreadArgs:
        if self.defaulting_type == "System" and self.default_constraints:
            raise ValueError(
                'defaultConstraints: Invalid value: when .defaultingType is "System", '
                ".defaultConstraints must be empty"
            )
        seen: set[tuple[str, str]] = set()
        for i, c in enumerate(self.default_constraints):
            if int(c.get("maxSkew") or 0) <= 0:
                raise ValueError(
                    f"defaultConstraints[{i}].maxSkew: Invalid value: {c.get('maxSkew')}: "
                    "not in valid range [1, inf)"
                )
            if not c.get("topologyKey"):
                raise ValueError(f"defaultConstraints[{i}].topologyKey: Required value: can not be empty")
            when = c.get("whenUnsatisfiable")
            if when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                raise ValueError(
                    f'defaultConstraints[{i}].whenUnsatisfiable: Unsupported value: "{when}": '
                    'supported values: "DoNotSchedule", "ScheduleAnyway"'
                )
            if (c["topologyKey"], when) in seen:
                raise ValueError(
                    f'defaultConstraints[{i}]: Duplicate value: {{"{c["topologyKey"]}", "{when}"}}'
                )
            seen.add((c["topologyKey"], when))
            if c.get("labelSelector") is not None:
                raise ValueError(
                    f"defaultConstraints[{i}].labelSelector: Forbidden: constraint must not "
                    "define a selector, as they deduced for each pod"
                )
        return self


@dataclass(slots=True)
class Constraint:
    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE

    def matches_node_inclusion(
        self,
        pod: PodInfo,
        labels: Mapping[str, str],
        name: str,
        node: NodeInfo,
        required: RequiredNodeAffinity,
    ) -> bool:
        if self.node_affinity_policy == HONOR and not required.match_labels(labels, name):
            return False
        if (
            self.node_taints_policy == HONOR
            and node.taints
            and find_untolerated_taint(node.taints, pod.spec.get("tolerations"), is_no_schedule_or_no_execute)
            is not None
        ):
            return False
        return True


def build_constraints(
    raw: Sequence[JsonDict], pod_labels: Mapping[str, str], action: str
) -> list[Constraint]:
    """Constraints with `whenUnsatisfiable == action`, selectors compiled and ANDed with the pod's values
    for matchLabelKeys (upstream filterTopologySpreadConstraints)."""
    out: list[Constraint] = []
    for c in raw:
        if (c.get("whenUnsatisfiable") or DO_NOT_SCHEDULE) != action:
            continue
        sel = compile_selector(c.get("labelSelector"))
        keys = [k for k in c.get("matchLabelKeys") or () if k in pod_labels]
        if keys:
            # upstream mergeLabelSetWithSelector: the pod's values of those keys ANDed with the
            # selector's requirements (a nil selector has none: the keys alone select)
            if sel.matches_nothing:
                sel = LabelSelector()
            for key in keys:
                try:
                    sel = sel.add(key, "In", [pod_labels[key]])
                except ValueError:
                    pass
        min_domains = c.get("minDomains")
        out.append(
            Constraint(
                int(c.get("maxSkew") or 1),
                c.get("topologyKey") or "",
                sel,
                int(min_domains) if min_domains is not None else 1,
                c.get("nodeAffinityPolicy") or HONOR,
                c.get("nodeTaintsPolicy") or IGNORE,
            )
        )
    return out


def _labels_have_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    for c in constraints:
        if c.topology_key not in labels:
            return False
    return True


def count_matching(pods: Sequence[PodInfo], selector: LabelSelector, namespace: str) -> int:
    n = 0
    for p in pods:
        if p.namespace != namespace or (p.pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if selector.matches(p.labels):
            n += 1
    return n


MAX_DOMAIN_MEMOS = 256


def _inclusion_is_pod_independent(c: Constraint, required: RequiredNodeAffinity) -> bool:
    """Whether `matches_node_inclusion` is true for every node, whatever the pod (so domain
    counts can be shared between pods): affinity policy Ignore or no required node affinity,
    and taints policy Ignore."""
    return (c.node_affinity_policy != HONOR or required.is_empty) and c.node_taints_policy != HONOR


class _DomainCounts:
    """Per-node contributions to one constraint's domain counts, for `_memo_counts`. A node
    contributes when it has every topology key of the pod's constraints (`keys`)."""

    __slots__ = ("snapshot", "seq", "per_node", "counts", "domain_nodes")

    def __init__(self, snapshot: Any, seq: int) -> None:
        self.snapshot = snapshot
        self.seq = seq
        self.per_node: dict[str, tuple[str, int]] = {}
        self.counts: dict[str, int] = {}
        self.domain_nodes: dict[str, int] = {}

    def add(self, n: NodeInfo, c: Constraint, ns: str, keys: tuple[str, ...]) -> None:
        labels = n.labels
        for k in keys:
            if k not in labels:
                return
        # with no required keys (PreScore of system-defaulted constraints) a node without the
        # topology key belongs to the domain "" (upstream reads the missing label as "")
        v = labels.get(c.topology_key, "")
        cnt = count_matching(n.pods, c.selector, ns) if n.pods else 0
        self.per_node[n.name] = (v, cnt)
        self.counts[v] = self.counts.get(v, 0) + cnt
        self.domain_nodes[v] = self.domain_nodes.get(v, 0) + 1

    def remove(self, name: str) -> None:
        old = self.per_node.pop(name, None)
        if old is None:
            return
        v, cnt = old
        left = self.domain_nodes[v] - 1
        if left == 0:
            del self.domain_nodes[v]
            del self.counts[v]
        else:
            self.domain_nodes[v] = left
            self.counts[v] -= cnt


@dataclass(slots=True)
class _PreFilterState:
    constraints: list[Constraint]
    counts: list[dict[str, int]]
    mins: list[int] = field(default_factory=list)
    required: RequiredNodeAffinity | None = None

    def recompute_mins(self) -> None:
        self.mins = [min(c.values()) if c else 0 for c in self.counts]

    def min_match(self, i: int) -> int:
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return self.mins[i]

    def clone(self) -> _PreFilterState:
        return _PreFilterState(
            self.constraints, [dict(c) for c in self.counts], list(self.mins), self.required
        )


@dataclass(slots=True)
class _PreScoreState:
    constraints: list[Constraint]
    ignored: set[str]
    # per constraint: candidate domain -> matching pods ({} for hostname constraints)
    counts: list[dict[str, int]]
    weights: list[float]
    # per hostname constraint: node name -> (label value, matching pods) kept for the snapshot
    # `host_nodes` (only its own NodeInfos may read them); None: count the node's pods
    host_counts: list[dict[str, tuple[str, int]] | None] = field(default_factory=list)
    host_nodes: Mapping[str, NodeInfo] | None = None
    # positions of ignored nodes among the nodes last scored (score_nodes / score_rows), for the
    # normalizers that get scores without node names; None: none ignored
    scored_ignored: list[int] | None = None


class PodTopologySpread(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    NAME = names.POD_TOPOLOGY_SPREAD
    Args = PodTopologySpreadArgs

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        if isinstance(args, dict):
            args = PodTopologySpreadArgs.model_validate(args)
        super().__init__(args or PodTopologySpreadArgs(), handle)
        self.system_defaulted = self.args.defaulting_type == "System"
        self._default_constraints: tuple[JsonDict, ...] = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else tuple(self.args.default_constraints)
        )
        # the whenUnsatisfiable values among them: no default constraint of an action, no
        # selector scan for it
        self._default_actions = frozenset(c.get("whenUnsatisfiable") or DO_NOT_SCHEDULE
                                          for c in self._default_constraints)
        self._stores: dict[str, Any] = self._workload_stores() if self._default_constraints else {}
        # default selectors by what they are computed from (namespace, labels, controller
        # reference), valid while the stores they read are at `_selectors_versions`: the pods of
        # one ReplicaSet (or of any one template) compute theirs once
        self._selectors: dict[tuple[Any, ...], LabelSelector] = {}
        self._selectors_versions: tuple[int, ...] = ()
        self._domain_memo: dict[tuple[Any, ...], _DomainCounts] = {}
        # score_rows' per-row readings, kept across cycles (RowMemo recomputes the rows of nodes
        # that changed): a node's matching pods per (selector, namespace, hostname key), and a
        # node's value of a topology key as a code (-1: no such label)
        self._host_rows = RowMemo(size=8)
        self._labels = LabelCodes()
        # filter_reject_rows: per constraint index, the cycle's counts, the codes' stamp and the
        # count table built from them (see _count_table)
        self._count_tables: dict[int, tuple[dict[str, int], tuple[dict[str, int], int], IntArray]] = {}

    def _workload_stores(self) -> dict[str, Any]:
        """Informer stores of Services, ReplicationControllers, ReplicaSets and StatefulSets for the
        default selector (upstream DefaultSelector); absent when the handle has no informers."""
        informers = self.handle.informers if self.handle is not None else None
        if informers is None:
            return {}
        idx = {r.qualified: r for r in builtin_resources()}
        stores: dict[str, Any] = {}
        for kind, qualified in (
            ("Service", "services"),
            ("ReplicationController", "replicationcontrollers"),
            ("ReplicaSet", "replicasets.apps"),
            ("StatefulSet", "statefulsets.apps"),
        ):
            try:
                stores[kind] = informers.informer(idx[qualified]).store
            except Exception:  # noqa: BLE001 - a missing informer only weakens default spreading
                logger.debug("no %s informer for default topology spreading", kind)
        return stores

    # --- constraints ------------------------------------------------------------------------

    def default_selector(self, pod: PodInfo) -> LabelSelector:
        """Selector merged from the Services selecting the pod and its controller (RC/RS/StatefulSet),
        remembered on the PodInfo while none of the stores it reads changed (PreFilter and
        PreScore of one cycle, the retries of an unschedulable pod)."""
        versions = tuple(s.version for s in self._stores.values())
        got = cached_on(pod, "pts-default-selector", lambda: [None, None])
        if got[0] != versions:
            got[0], got[1] = versions, self._shared_default_selector(pod, versions)
        sel: LabelSelector = got[1]
        return sel

    def _shared_default_selector(self, pod: PodInfo, versions: tuple[int, ...]) -> LabelSelector:
        """`_default_selector` through the memo of pods alike: same namespace, labels and
        controller reference (kind, apiVersion, name) read the same Services and controller."""
        if versions != self._selectors_versions or len(self._selectors) >= _SELECTOR_MEMO_SIZE:
            self._selectors.clear()
            self._selectors_versions = versions
        ref = _controller_ref(pod.pod)
        owner = (ref.get("kind"), ref.get("apiVersion"), ref.get("name")) if ref is not None else None
        labels = pod.labels
        try:
            key = (pod.namespace, frozenset(labels.items()) if labels else None, owner)
        except TypeError:  # an unhashable label value (not a valid pod): no memo
            return self._default_selector(pod)
        sel = self._selectors.get(key)
        if sel is None:
            sel = self._selectors[key] = self._default_selector(pod)
        return sel

    def _default_selector(self, pod: PodInfo) -> LabelSelector:
        label_set: dict[str, str] = {}
        svc_store = self._stores.get("Service")
        if svc_store is not None:
            for svc in svc_store.list():
                meta = svc.get("metadata") or {}
                if meta.get("namespace") != pod.namespace:
                    continue
                sel = (svc.get("spec") or {}).get("selector")
                if sel and selector_from_set(sel).matches(pod.labels):
                    label_set.update(sel)
        selector = selector_from_set(label_set)
        owner = _controller_ref(pod.pod)
        if owner is None:
            return selector
        kind, group = owner.get("kind"), (owner.get("apiVersion") or "").rpartition("/")[0]
        store = None
        if kind == "ReplicationController" and group == "":
            store = self._stores.get(kind)
        elif kind in ("ReplicaSet", "StatefulSet") and group == "apps":
            store = self._stores.get(kind)
        if store is None:
            return selector
        obj = store.get(f"{pod.namespace}/{owner.get('name')}")
        if obj is None:
            return selector
        spec_sel = (obj.get("spec") or {}).get("selector")
        if kind == "ReplicationController":
            label_set.update(spec_sel or {})
            return selector_from_set(label_set)
        other = compile_selector(spec_sel)
        if other.matches_nothing:
            return selector
        for key, op, operand in other.requirements:
            selector = LabelSelector((*selector.requirements, (key, op, operand)))
        return selector

    def _constraints(self, pod: PodInfo, action: str) -> list[Constraint]:
        raw = pod.spec.get("topologySpreadConstraints")
        if raw:
            return cached_on(pod, f"pts-{action}", lambda: build_constraints(raw, pod.labels, action))  # type: ignore[no-any-return]
        if action not in self._default_actions:
            return []
        sel = self.default_selector(pod)
        if sel.empty:  # no Service or controller selects the pod: upstream skips the defaults
            return []
        cons = build_constraints(self._default_constraints, pod.labels, action)
        for c in cons:
            c.selector = sel
        return cons

    # --- PreFilter / Filter -----------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, Status.skip()
        required = RequiredNodeAffinity(pod.pod)
        ns = pod.namespace
        snap = self.handle.snapshot() if self.handle is not None else None
        if (
            snap is not None
            and getattr(snap, "tracked", False)
            and nodes is snap.node_info_list
            and all(_inclusion_is_pod_independent(c, required) for c in constraints)
        ):
            keys = tuple(c.topology_key for c in constraints)
            counts = [self._memo_counts(snap, c, ns, keys) for c in constraints]
            s = _PreFilterState(constraints, counts, required=required)
            s.recompute_mins()
            state.write(PRE_FILTER_STATE_KEY, s)
            return None, SUCCESS
        counts = [{} for _ in constraints]
        for n in nodes:
            labels = n.labels
            if not _labels_have_keys(labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.matches_node_inclusion(pod, labels, n.name, n, required):
                    continue
                v = labels[c.topology_key]
                counts[i][v] = counts[i].get(v, 0) + (count_matching(n.pods, c.selector, ns) if n.pods else 0)
        s = _PreFilterState(constraints, counts, required=required)
        s.recompute_mins()
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, SUCCESS

    def _memo_counts(self, snap: Any, c: Constraint, ns: str, keys: tuple[str, ...]) -> dict[str, int]:
        """Matching pods per domain of `c` over the snapshot (see `_memo`). A fresh dict is
        returned: preemption's AddPod/RemovePod mutate the cycle's copy."""
        return dict(self._memo(snap, c, ns, keys).counts)

    def _memo(self, snap: Any, c: Constraint, ns: str, keys: tuple[str, ...]) -> _DomainCounts:
        """Per-node and per-domain matching pod counts of `c` over the snapshot, kept across
        cycles and refreshed only for the nodes the snapshot journal says changed (upstream
        recounts every node each cycle; the result is the same). At most MAX_DOMAIN_MEMOS
        (selector, namespace, key, required keys) entries, least recently used evicted."""
        key = (c.selector, ns, c.topology_key, keys)
        memo = self._domain_memo.get(key)
        changed = snap.nodes_changed_since(memo.seq) if memo is not None and memo.snapshot is snap else None
        if memo is not None:
            # least recently used first: re-insert on every use, evict from the front
            self._domain_memo[key] = self._domain_memo.pop(key)
        if memo is None or changed is None:
            self._domain_memo.pop(key, None)
            while len(self._domain_memo) >= MAX_DOMAIN_MEMOS:
                del self._domain_memo[next(iter(self._domain_memo))]
            memo = _DomainCounts(snap, snap.change_seq)
            for n in snap.node_info_list:
                memo.add(n, c, ns, keys)
            self._domain_memo[key] = memo
        elif changed:
            smap = snap.node_info_map
            for name in changed:
                memo.remove(name)
                n = smap.get(name)
                if n is not None:
                    memo.add(n, c, ns, keys)
            memo.seq = snap.change_seq
        return memo

    def has_pre_filter_extensions(self) -> bool:
        return True

    def _update(self, state: CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo, delta: int) -> Status:
        s: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None or other.namespace != pod.namespace:
            return SUCCESS
        labels = node.labels
        if not _labels_have_keys(labels, s.constraints):
            return SUCCESS
        required = s.required or RequiredNodeAffinity(pod.pod)
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(other.labels):
                continue
            if not c.matches_node_inclusion(pod, labels, node.name, node, required):
                continue
            v = labels[c.topology_key]
            s.counts[i][v] = s.counts[i].get(v, 0) + delta
        s.recompute_mins()
        return SUCCESS

    def add_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status:
        return self._update(state, pod_to_schedule, pod_to_add, node, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        return self._update(state, pod_to_schedule, pod_to_remove, node, -1)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        s: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.as_error(
                f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found', plugin=self.NAME
            )
        labels = node.labels
        for i, c in enumerate(s.constraints):
            v = labels.get(c.topology_key)
            if v is None:
                return Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH, plugin=self.NAME)
            self_match = 1 if c.selector.matches(pod.labels) else 0
            skew = s.counts[i].get(v, 0) + self_match - s.min_match(i)
            if skew > c.max_skew:
                return Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH, plugin=self.NAME)
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        s: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return super().filter_nodes(state, pod, nodes)
        # per constraint: (topology key, max skew, counts, self_match - min_match), hoisted
        checks = [
            (c.topology_key, c.max_skew, s.counts[i], (1 if c.selector.matches(pod.labels) else 0) - s.min_match(i))
            for i, c in enumerate(s.constraints)
        ]
        out: list[Status | None] = []
        append = out.append
        for node in nodes:
            labels = node.labels
            st: Status | None = None
            for key, max_skew, counts, offset in checks:
                v = labels.get(key)
                if v is None:
                    st = Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH, plugin=self.NAME)
                    break
                if counts.get(v, 0) + offset > max_skew:
                    st = Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH, plugin=self.NAME)
                    break
            append(st)
        return out

    def filter_reject_rows(self, state: CycleState, pod: PodInfo, arrays: NodeArrays,
                           rows: IntArray) -> tuple[IntArray, list[Status]] | None:
        """`filter_nodes` over snapshot rows: constraint by constraint, in order, a row still
        undecided is rejected as unresolvable when its node lacks the topology key, else as
        unschedulable when its domain's count plus the pod's own match minus the minimum
        exceeds maxSkew. The domains' counts are read through the rows' remembered label codes
        (LabelCodes) and a count table per constraint built once per cycle."""
        s: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return None
        m = len(rows)
        if not m or not s.constraints:
            return rows[:0], []
        verdict = np.zeros(m, dtype=np.int8)  # 0: passes, 1: missing label, 2: skew too large
        undecided = np.ones(m, dtype=np.bool_)
        for i, c in enumerate(s.constraints):
            codes = self._labels.rows(arrays, rows, c.topology_key)  # first: codes for the rows' values
            offset = (1 if c.selector.matches(pod.labels) else 0) - s.min_match(i)
            counts = self._count_table(i, c.topology_key, s.counts[i])
            missing = undecided & (codes < 0)
            over = undecided & (codes >= 0) & (counts[codes] + offset > c.max_skew)
            verdict[missing] = 1
            verdict[over] = 2
            undecided &= ~(missing | over)
            if not _COUNT_NONZERO(undecided):
                break
        bad = verdict > 0
        picked = rows[bad]
        if not len(picked):
            return picked, []
        unresolvable = Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH, plugin=self.NAME)
        unschedulable = Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH, plugin=self.NAME)
        return picked, [unresolvable if v == 1 else unschedulable for v in verdict[bad].tolist()]

    def _count_table(self, i: int, key: str, counts: dict[str, int]) -> IntArray:
        """Constraint `i`'s matching-pod count per code of `key` (LabelCodes.table), built once
        per cycle (the filter walk asks chunk by chunk: the cycle's `counts` mapping is the
        same object) and again when rows have shown values that had no code then."""
        got = self._count_tables.get(i)
        if got is not None and got[0] is counts and self._labels.is_current(key, got[1]):
            return got[2]
        stamp = self._labels.stamp(key)
        table = self._labels.table(key, counts.keys(), counts.values())
        self._count_tables[i] = (counts, stamp, table)
        return table

    # --- PreScore / Score -------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        snap = self.handle.snapshot() if self.handle is not None else None
        all_nodes: Sequence[NodeInfo] = snap.node_infos() if snap is not None else nodes
        if not nodes or not all_nodes:
            return SUCCESS
        constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return Status.skip()
        require_all = bool(pod.spec.get("topologySpreadConstraints")) or not self.system_defaulted
        ignored: set[str] = set()
        candidates: Sequence[NodeInfo] = nodes
        if require_all:
            ignored = {n.name for n in nodes if not _labels_have_keys(n.labels, constraints)}
            if ignored:
                candidates = [n for n in nodes if n.name not in ignored]
        # per constraint (upstream TopologyValueToPodCounts, indexed by constraint since v1.33):
        # the candidates' domains (a missing label reads as "") -> matching pods; hostname
        # constraints count a node's own pods in Score and keep an empty map here
        counts: list[dict[str, int]] = [{} for _ in constraints]
        feasible = state.get(FEASIBLE_ROWS_KEY) if candidates is nodes else None
        if feasible is not None and feasible[2] is not nodes:
            feasible = None
        for i, c in enumerate(constraints):
            if c.topology_key != LABEL_HOSTNAME:
                counts[i] = dict.fromkeys(self._domain_values(c.topology_key, candidates, feasible), 0)
        weights = []
        for i, c in enumerate(constraints):
            size = len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME else len(counts[i])
            weights.append(math.log(size + 2))
        required = RequiredNodeAffinity(pod.pod)
        ns = pod.namespace
        soft = [i for i, c in enumerate(constraints) if c.topology_key != LABEL_HOSTNAME and counts[i]]
        if soft and snap is not None and getattr(snap, "tracked", False) and all(
            _inclusion_is_pod_independent(c, required) for c in constraints
        ):
            # the same sums from per-domain counts kept across cycles (see _memo_counts): a node
            # counts when it has every key (require_all) and its domain is a candidate domain
            keys = tuple(c.topology_key for c in constraints) if require_all else ()
            for i in soft:
                domain_counts = self._memo(snap, constraints[i], ns, keys).counts
                got = counts[i]
                for v in got:
                    got[v] = domain_counts.get(v, 0)
        elif soft:
            for n in all_nodes:
                labels = n.labels
                if require_all and not _labels_have_keys(labels, constraints):
                    continue
                for i in soft:
                    c = constraints[i]
                    v = labels.get(c.topology_key, "")
                    got = counts[i]
                    if v not in got:
                        continue
                    if not c.matches_node_inclusion(pod, labels, n.name, n, required):
                        continue
                    if n.pods:
                        got[v] += count_matching(n.pods, c.selector, ns)
        host_counts: list[dict[str, tuple[str, int]] | None] = [None] * len(constraints)
        if snap is not None and getattr(snap, "tracked", False):
            # Score counts a node's own matching pods for hostname constraints (no inclusion
            # policy): read them from the remembered per-node counts of this snapshot
            for i, c in enumerate(constraints):
                if c.topology_key == LABEL_HOSTNAME:
                    host_counts[i] = self._memo(snap, c, ns, ()).per_node
        state.write(
            PRE_SCORE_STATE_KEY,
            _PreScoreState(
                constraints, ignored, counts, weights, host_counts,
                snap.node_info_map if snap is not None and any(h is not None for h in host_counts) else None,
            ),
        )
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        s: _PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None or node.name in s.ignored:
            return 0, SUCCESS
        return self._raw_score(s, pod, node), SUCCESS

    def score_nodes(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status] | None:
        s: _PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return [0] * len(nodes), SUCCESS
        # `_raw_score` with the per-constraint reads hoisted out of the node loop (same sums in
        # the same order, so the same floats)
        ignored, host_nodes, ns = s.ignored, s.host_nodes, pod.namespace
        parts = [
            (c.topology_key, s.weights[i], c.max_skew - 1, c.topology_key == LABEL_HOSTNAME,
             s.host_counts[i] if i < len(s.host_counts) else None, c.selector, s.counts[i])
            for i, c in enumerate(s.constraints)
        ]
        out: list[int] = []
        append = out.append
        floor = math.floor
        s.scored_ignored = [i for i, n in enumerate(nodes) if n.name in ignored] if ignored else None
        for n in nodes:
            name = n.name
            if name in ignored:
                append(0)
                continue
            labels = n.labels
            remembered = host_nodes is not None and host_nodes.get(name) is n
            total = 0.0
            for key, weight, skew_term, is_host, hc, selector, domains in parts:
                v = labels.get(key)
                if v is None:
                    continue
                if is_host:
                    entry = hc.get(name) if remembered and hc is not None else None
                    cnt = entry[1] if entry is not None else count_matching(n.pods, selector, ns)
                else:
                    cnt = domains.get(v, 0)
                total += cnt * weight + skew_term
            append(int(floor(total + 0.5)))
        return out, SUCCESS

    def score_rows(self, state: CycleState, pod: PodInfo, arrays: NodeArrays, rows: IntArray,
                   nodes: Sequence[NodeInfo]) -> IntArray | None:
        """`score_nodes` as vectors: per constraint, each node's count (its domain's count, or its
        own matching pods for hostname) read once, then `cnt * weight + (maxSkew - 1)` summed
        constraint by constraint in float64 (the same IEEE operations in the same order, so the
        same totals) and rounded half up."""
        s: _PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        m = len(nodes)
        if s is None:
            return np.zeros(m, dtype=np.int64)
        ignored, ns = s.ignored, pod.namespace
        total = np.zeros(m, dtype=np.float64)
        for i, c in enumerate(s.constraints):
            key = c.topology_key
            # each node's count, -1 where the node lacks the key
            if key == LABEL_HOSTNAME:
                got = self._host_counts(arrays, rows, c, ns)
            else:
                codes = self._labels.rows(arrays, rows, key)
                domains = s.counts[i]
                by_code = self._labels.table(key, domains.keys(), domains.values())
                got = np.where(codes >= 0, by_code[codes], -1)
            arr = got.astype(np.float64)
            present = arr >= 0
            term = arr * s.weights[i] + float(c.max_skew - 1)
            total += np.where(present, term, 0.0)
        out = np.floor(total + 0.5).astype(np.int64)
        if ignored:
            idx = [j for j, n in enumerate(nodes) if n.name in ignored]
            out[idx] = 0
            s.scored_ignored = idx
        else:
            s.scored_ignored = None
        return out

    def _domain_values(self, key: str, candidates: Sequence[NodeInfo],
                       feasible: tuple[NodeArrays, IntArray, Sequence[NodeInfo]] | None) -> set[str]:
        """The `key` values of the candidate nodes ("" for a node without the label), from the
        remembered per-row codes when the candidates are the feasible snapshot rows."""
        if feasible is None:
            return {n.labels.get(key, "") for n in candidates}
        arrays, rows, _ = feasible
        codes = self._labels.rows(arrays, rows, key)
        names = self._labels.names(key)
        return {names[c] if c >= 0 else "" for c in np.unique(codes).tolist()}

    def _host_counts(self, arrays: NodeArrays, rows: IntArray, c: Constraint, ns: str) -> IntArray:
        """Per row: the node's pods matching `c` in `ns`, -1 when it lacks the hostname key (a
        function of the node alone: remembered until its row is rewritten)."""
        key, selector = c.topology_key, c.selector

        def count(n: NodeInfo) -> int:
            return -1 if key not in n.labels else count_matching(n.pods, selector, ns)

        def compute(r: IntArray) -> IntArray:
            return np.fromiter((count(n) for n in arrays.nodes_at(r)), dtype=np.int64, count=len(r))

        return self._host_rows.values(arrays, (selector, ns, key), rows, compute,
                                      lambda row: count(arrays.node(row)))

    def normalize_score_array(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray | None:
        """`normalize_score` over the scores of the nodes last scored: ignored nodes 0, else
        MaxNodeScore * (max + min - score) / max (MaxNodeScore for all when max is 0)."""
        s: _PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return scores
        valid = np.ones(len(scores), dtype=np.bool_)
        if s.scored_ignored:
            valid[s.scored_ignored] = False
        if not valid.any():
            return np.zeros(len(scores), dtype=np.int64)
        picked = scores[valid]
        lo = int(picked.min())
        hi = max(0, int(picked.max()))
        if hi == 0:
            out = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
        else:
            out = MAX_NODE_SCORE * (hi + lo - scores) // hi
        out[~valid] = 0
        return out

    def normalize_raw_scores(self, state: CycleState, pod: PodInfo, scores: list[int]) -> list[int] | None:
        """`normalize_score` without NodeScore objects (the nodes last scored, in order)."""
        out = self.normalize_score_array(state, pod, np.asarray(scores, dtype=np.int64))
        return None if out is None else [int(v) for v in out.tolist()]

    @staticmethod
    def _raw_score(s: _PreScoreState, pod: PodInfo, node: NodeInfo) -> int:
        labels = node.labels
        total = 0.0
        remembered = s.host_nodes is not None and s.host_nodes.get(node.name) is node
        for i, c in enumerate(s.constraints):
            v = labels.get(c.topology_key)
            if v is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                hc = s.host_counts[i] if remembered and i < len(s.host_counts) else None
                entry = hc.get(node.name) if hc is not None else None
                cnt = entry[1] if entry is not None else count_matching(node.pods, c.selector, pod.namespace)
            else:
                cnt = s.counts[i].get(v, 0)
            total += cnt * s.weights[i] + (c.max_skew - 1)
        return int(math.floor(total + 0.5))

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        s: _PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return SUCCESS
        lo: int | None = None
        hi = 0
        for sc in scores:
            if sc.name in s.ignored:
                continue
            if lo is None or sc.score < lo:
                lo = sc.score
            if sc.score > hi:
                hi = sc.score
        lo = lo or 0
        for sc in scores:
            if sc.name in s.ignored:
                sc.score = 0
            elif hi == 0:
                sc.score = MAX_NODE_SCORE
            else:
                sc.score = MAX_NODE_SCORE * (hi + lo - sc.score) // hi
        return SUCCESS

    # --- events -----------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
                ),
                self._after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD
                    | ActionType.DELETE
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_TAINT,
                )
            ),
        ]

    def _after_pod_change(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        me = as_pod_info(pod)
        changed = new if isinstance(new, dict) else old
        if not isinstance(changed, dict):
            return QueueingHint.QUEUE
        other = PodInfo(changed)
        if other.namespace != me.namespace:
            return QueueingHint.SKIP
        raw = me.spec.get("topologySpreadConstraints") or ()
        cons = build_constraints(raw, me.labels, DO_NOT_SCHEDULE)
        for c in cons:
            if c.selector.matches(other.labels):
                return QueueingHint.QUEUE
            if isinstance(old, dict) and c.selector.matches(PodInfo(old).labels):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP
