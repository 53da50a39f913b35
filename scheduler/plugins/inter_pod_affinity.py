"""InterPodAffinity (PreFilter, Filter, PreScore, Score): required pod (anti-)affinity as a filter,
preferred terms (the incoming pod's and, symmetrically, existing pods') as a score (upstream
plugins/interpodaffinity).

PreFilter counts, per topology pair (key, value):
  existing_anti[(k, v)]: existing pods whose required anti-affinity term matches the incoming pod;
  affinity[(k, v)]:      existing pods matching ALL the incoming pod's required affinity terms;
  anti[(k, v)]:          existing pods matching an incoming required anti-affinity term.
Filter: every affinity term's key must be on the node with affinity[(k, node[k])] > 0, unless no pod
anywhere matches and the pod matches its own terms (first pod of a self-affine group); no anti-term
pair of the node may be > 0; no existing_anti pair may equal one of the node's labels.

Score (PreScore builds topology_score[key][value]): +w for each incoming preferred affinity term an
existing pod matches, −w for anti; +hardPodAffinityWeight for each existing pod's required affinity
term the incoming pod matches; ±w for the existing pod's preferred (anti-)affinity terms. A node's raw
score sums topology_score[k][node[k]]; normalized min-max: raw −100, 0 -> 0, 100.

Namespace selectors need namespace labels: the plugin reads them from the shared informer
factory's namespaces store (`handle.informers.informer(NAMESPACES).store`); without a namespace
informer every namespace is treated as unlabelled.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from minik3s.api.errors import aggregate
from minik3s.api.resources import NAMESPACES
from minik3s.api.selectors import label_selector_from_dict
from scheduler.framework.cycle_state import CycleState
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
from scheduler.framework.node_arrays import BoolArray, IntArray, LabelCodes, NodeArrays
from scheduler.framework.types import AffinityTerm, NodeInfo, PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import SUCCESS, CompiledTerm, NamespaceLabels, as_pod_info, compiled_affinity

logger = logging.getLogger(__name__)

_COUNT_NONZERO = np.count_nonzero
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
PRE_FILTER_STATE_KEY = "PreFilter" + names.INTER_POD_AFFINITY
PRE_SCORE_STATE_KEY = "PreScore" + names.INTER_POD_AFFINITY

Pair = tuple[str, str]


class InterPodAffinityArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    hard_pod_affinity_weight: int = Field(default=1, alias="hardPodAffinityWeight")
    ignore_preferred_terms_of_existing_pods: bool = Field(
        default=False, alias="ignorePreferredTermsOfExistingPods"
    )

    @field_validator("hard_pod_affinity_weight")
    @classmethod
    def _w(cls, v: int) -> int:
        if not 0 <= v <= 100:
            raise ValueError(f"hardPodAffinityWeight: Invalid value: {v}: not in valid range [0, 100]")
        return v


class _NsLabelsMemo:
    """Per-cycle memo of namespace labels."""

    __slots__ = ("_fn", "_memo")

    def __init__(self, fn: NamespaceLabels | None) -> None:
        self._fn = fn
        self._memo: dict[str, Mapping[str, str] | None] = {}

    def __call__(self, ns: str) -> Mapping[str, str] | None:
        try:
            return self._memo[ns]
        except KeyError:
            v = self._memo[ns] = self._fn(ns) if self._fn is not None else None
            return v


def _update(m: dict[Pair, int], labels: Mapping[str, str], key: str, value: int) -> None:
    tv = labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    n = m.get(pair, 0) + value
    if n == 0:
        m.pop(pair, None)
    else:
        m[pair] = n


def _matches_all(terms: Sequence[CompiledTerm], pod: PodInfo, ns_labels: NamespaceLabels | None) -> bool:
    if not terms:
        return False
    for t in terms:
        if not t.matches(pod, ns_labels):
            return False
    return True


def _term_error(term: AffinityTerm) -> str | None:
    """Why the term's labelSelector (then namespaceSelector) does not parse, or None."""
    for d in (term.selector, term.namespace_selector):
        if d is None:
            continue
        try:
            label_selector_from_dict(d)
        except ValueError as e:
            return str(e)
    return None


def parse_error(pod: PodInfo) -> str | None:
    """The pod's affinity-term parse errors as upstream framework.NewPodInfo aggregates them (the
    first bad term of each kind, prefixed with the kind; several kinds in brackets), or None.
    Only terms whose compiled selector came out as match-nothing can be at fault."""
    c = compiled_affinity(pod)
    suspect = False
    for ct in (*c.required_affinity, *c.required_anti_affinity, *c.preferred_affinity,
               *c.preferred_anti_affinity):
        if ct.selector.matches_nothing or (ct.ns_selector is not None and ct.ns_selector.matches_nothing):
            suspect = True
            break
    if not suspect:
        return None
    errs: list[str] = []
    kinds: tuple[tuple[str, Sequence[AffinityTerm]], ...] = (
        ("requiredAffinityTerms", pod.required_affinity_terms),
        ("requiredAntiAffinityTerms", pod.required_anti_affinity_terms),
        ("preferredAffinityTerms", [w.term for w in pod.preferred_affinity_terms]),
        ("preferredAntiAffinityTerms", [w.term for w in pod.preferred_anti_affinity_terms]),
    )
    for kind, terms in kinds:
        for t in terms:
            err = _term_error(t)
            if err is not None:
                errs.append(f"{kind}: {err}")
                break
    if not errs:
        return None
    return aggregate(errs)


MAX_MEMOS = 256


class _Volatile(Exception):
    """A contribution depends on namespace labels: not rememberable."""


class _PairCounts:
    """Per-node contributions to a topology-pair count map and their sum (see `_remembered`)."""

    __slots__ = ("snapshot", "seq", "per_node", "counts", "by_key")

    def __init__(self, snapshot: Any, seq: int) -> None:
        self.snapshot = snapshot
        self.seq = seq
        self.per_node: dict[str, dict[Pair, int]] = {}
        self.counts: dict[Pair, int] = {}
        # the same counts grouped by topology key: key -> {value: count > 0}
        self.by_key: dict[str, dict[str, int]] = {}

    def set_node(self, name: str, contribution: dict[Pair, int] | None) -> None:
        counts = self.counts
        by_key = self.by_key
        old = self.per_node.pop(name, None)
        if old:
            for pair, v in old.items():
                left = counts[pair] - v
                values = by_key[pair[0]]
                if left == 0:
                    del counts[pair]
                    del values[pair[1]]
                    if not values:
                        del by_key[pair[0]]
                else:
                    counts[pair] = values[pair[1]] = left
        if contribution:
            self.per_node[name] = contribution
            for pair, v in contribution.items():
                n = counts[pair] = counts.get(pair, 0) + v
                by_key.setdefault(pair[0], {})[pair[1]] = n


class _ScoringPods:
    """Per node, the existing pods whose affinity terms can score (see `_scoring_pods`)."""

    __slots__ = ("snapshot", "seq", "per_node")

    def __init__(self, snapshot: Any, seq: int) -> None:
        self.snapshot = snapshot
        self.seq = seq
        self.per_node: dict[str, tuple[NodeInfo, list[PodInfo]]] = {}


@dataclass(slots=True)
class _BlockedTable:
    """InterPodAffinity.filter_reject_rows' blocked-value table for one (role, topology key):
    the container it was last brought up to date from (identity: the cycle's), its values, the
    label codes' stamp it is indexed by, and per code whether the value is blocked."""

    source: Collection[str]
    values: set[str]
    stamp: tuple[dict[str, int], int]
    table: BoolArray


_Blocked = tuple[list[tuple[str, "Collection[str]"]], list[tuple[str, "Collection[str]"]]]


class _PreFilterState:
    __slots__ = (
        "pod",
        "affinity",
        "anti_affinity",
        "existing_anti",
        "affinity_counts",
        "anti_counts",
        "ns_labels",
        "blocked",
        "existing_by_key",
        "anti_by_key",
    )

    def __init__(self, pod: PodInfo, ns_labels: _NsLabelsMemo) -> None:
        c = compiled_affinity(pod)
        self.pod = pod
        self.affinity = c.required_affinity
        self.anti_affinity = c.required_anti_affinity
        self.ns_labels = ns_labels
        self.existing_anti: dict[Pair, int] = {}
        self.affinity_counts: dict[Pair, int] = {}
        self.anti_counts: dict[Pair, int] = {}
        # batch Filter's per-key blocked values, built on first use; dropped when counts change
        self.blocked: _Blocked | None = None
        # the counts grouped by key, when PreFilter got them from the cross-cycle memo
        self.existing_by_key: dict[str, dict[str, int]] | None = None
        self.anti_by_key: dict[str, dict[str, int]] | None = None

    def clone(self) -> _PreFilterState:
        c = _PreFilterState.__new__(_PreFilterState)
        c.pod, c.affinity, c.anti_affinity, c.ns_labels = (
            self.pod,
            self.affinity,
            self.anti_affinity,
            self.ns_labels,
        )
        c.existing_anti = dict(self.existing_anti)
        c.affinity_counts = dict(self.affinity_counts)
        c.anti_counts = dict(self.anti_counts)
        c.blocked = None
        c.existing_by_key = c.anti_by_key = None
        return c

    def blocked_values(self) -> _Blocked:
        """(incoming anti-affinity keys, existing pods' anti-affinity keys), each with the
        topology values whose count is > 0 (a container answering `in`)."""
        if self.blocked is not None:
            return self.blocked
        ex_by_key, anti_by_key = self.existing_by_key, self.anti_by_key
        if ex_by_key is not None and (anti_by_key is not None or not self.anti_counts):
            keys = {t.topology_key for t in self.anti_affinity}
            self.blocked = (
                [(k, anti_by_key[k]) for k in keys if k in anti_by_key] if anti_by_key else [],
                list(ex_by_key.items()),
            )
            return self.blocked
        anti: dict[str, set[str]] = {}
        if self.anti_counts:
            for t in self.anti_affinity:
                anti.setdefault(t.topology_key, set())
            for (k, v), c in self.anti_counts.items():
                if c > 0 and k in anti:
                    anti[k].add(v)
        existing: dict[str, set[str]] = {}
        for (k, v), c in self.existing_anti.items():
            if c > 0:
                existing.setdefault(k, set()).add(v)
        self.blocked = ([(k, vs) for k, vs in anti.items() if vs], list(existing.items()))
        return self.blocked

    def update_with_pod(self, other: PodInfo, labels: Mapping[str, str], mult: int) -> None:
        self.blocked = None
        self.existing_by_key = self.anti_by_key = None
        for t in compiled_affinity(other).required_anti_affinity:
            if t.matches(self.pod, self.ns_labels):
                _update(self.existing_anti, labels, t.topology_key, mult)
        if _matches_all(self.affinity, other, self.ns_labels):
            for t in self.affinity:
                _update(self.affinity_counts, labels, t.topology_key, mult)
        for t in self.anti_affinity:
            if t.matches(other, self.ns_labels):
                _update(self.anti_counts, labels, t.topology_key, mult)


class InterPodAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    NAME = names.INTER_POD_AFFINITY
    Args = InterPodAffinityArgs

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        if isinstance(args, dict):
            args = InterPodAffinityArgs.model_validate(args)
        super().__init__(args or InterPodAffinityArgs(), handle)
        self._ns_lookup: NamespaceLabels | None = self._resolve_namespace_labels()
        self._memo: dict[tuple[Any, ...], _PairCounts] = {}
        self._score_memo: _ScoringPods | None = None
        self._labels = LabelCodes()  # filter_reject_rows: each row's topology values, as codes
        # filter_reject_rows: per (incoming|existing, topology key) the blocked-code table, kept
        # across cycles with the values it was built from (see _blocked_table)
        self._tables: dict[tuple[str, str], _BlockedTable] = {}

    def _resolve_namespace_labels(self) -> NamespaceLabels | None:
        h = self.handle
        if h is None:
            return None
        informers = h.informers
        if informers is None:
            return None
        try:
            store = informers.informer(NAMESPACES).store
        except Exception:  # noqa: BLE001 - no namespace informer: behave as unlabelled namespaces
            logger.debug("no namespace informer; namespaceSelector sees no labels")
            return None

        def lookup(ns: str) -> Mapping[str, str] | None:
            obj = store.get(ns)
            return ((obj or {}).get("metadata") or {}).get("labels")

        return lookup

    def _snapshot_nodes(self, method: str, fallback: Sequence[NodeInfo], attr: str) -> Sequence[NodeInfo]:
        """Nodes holding pods with (required anti-)affinity: the snapshot's precomputed list when it
        offers one (upstream HavePodsWith*AffinityList), else a scan of `fallback`."""
        snap = self.handle.snapshot() if self.handle is not None else None
        fn = getattr(snap, method, None) if snap is not None else None
        if callable(fn):
            got = fn()
            if isinstance(got, (list, tuple)):
                return got
        return [n for n in fallback if getattr(n, attr)]

    # --- PreFilter / Filter ---------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        err = parse_error(pod)
        if err is not None:
            return None, Status.unresolvable(f"parsing pod: {err}", plugin=self.NAME)
        snap = self.handle.snapshot() if self.handle is not None else None
        tracked = snap is not None and getattr(snap, "tracked", False) and nodes is snap.node_info_list
        if tracked and snap is not None and snap.known_without_affinity_pods(required_anti=True):
            c = compiled_affinity(pod)
            if not c.required_affinity and not c.required_anti_affinity:
                return None, Status.skip()  # no existing anti-affinity pod, no term of its own
        s = _PreFilterState(pod, _NsLabelsMemo(self._ns_lookup))
        ns_labels = s.ns_labels
        if tracked:
            self._pre_filter_remembered(snap, s)
            if not s.existing_anti and not s.affinity and not s.anti_affinity:
                return None, Status.skip()
            state.write(PRE_FILTER_STATE_KEY, s)
            return None, SUCCESS
        for n in self._snapshot_nodes(
            "have_pods_with_required_anti_affinity", nodes, "pods_with_required_anti_affinity"
        ):
            labels = n.labels
            for existing in n.pods_with_required_anti_affinity:
                for t in compiled_affinity(existing).required_anti_affinity:
                    if t.matches(pod, ns_labels):
                        _update(s.existing_anti, labels, t.topology_key, 1)
        if s.affinity or s.anti_affinity:
            aff, anti = s.affinity, s.anti_affinity
            for n in nodes:
                labels = n.labels
                for existing in n.pods:
                    if aff and _matches_all(aff, existing, ns_labels):
                        for t in aff:
                            _update(s.affinity_counts, labels, t.topology_key, 1)
                    for t in anti:
                        if t.matches(existing, ns_labels):
                            _update(s.anti_counts, labels, t.topology_key, 1)
        if not s.existing_anti and not s.affinity and not s.anti_affinity:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, SUCCESS

    def _pre_filter_remembered(self, snap: Any, s: _PreFilterState) -> None:
        """PreFilter's three counts from per-node contributions kept across cycles and refreshed
        only for nodes the snapshot journal reports changed (upstream recounts every node each
        cycle; the counts are the same). Counts that depend on namespace labels (namespaceSelector
        terms) are recounted every time, since a namespace relabel changes no node."""
        pod = s.pod
        ns_labels = s.ns_labels
        ex_key = ("existing-anti", pod.namespace, frozenset(pod.labels.items()))

        def existing_anti(n: NodeInfo) -> dict[Pair, int] | None:
            out: dict[Pair, int] = {}
            labels = n.labels
            for existing in n.pods_with_required_anti_affinity:
                for t in compiled_affinity(existing).required_anti_affinity:
                    if t.ns_selector is not None:
                        raise _Volatile
                    if t.matches(pod, ns_labels):
                        _update(out, labels, t.topology_key, 1)
            return out or None

        s.existing_anti, s.existing_by_key = self._remembered(
            snap, ex_key, existing_anti, lambda: snap.have_pods_with_required_anti_affinity(),
            lambda: self._count_existing_anti(snap, s))
        if not (s.affinity or s.anti_affinity):
            return
        aff, anti = s.affinity, s.anti_affinity
        if any(t.ns_selector is not None for t in (*aff, *anti)):
            self._count_incoming(snap.node_info_list, s)
            return

        def incoming(n: NodeInfo, which: int) -> dict[Pair, int] | None:
            out: dict[Pair, int] = {}
            labels = n.labels
            for existing in n.pods:
                if which == 0:
                    if _matches_all(aff, existing, ns_labels):
                        for t in aff:
                            _update(out, labels, t.topology_key, 1)
                else:
                    for t in anti:
                        if t.matches(existing, ns_labels):
                            _update(out, labels, t.topology_key, 1)
            return out or None

        def terms_key(terms: Sequence[CompiledTerm]) -> tuple[Any, ...]:
            return tuple((t.namespaces, t.selector, t.topology_key) for t in terms)

        if aff:
            s.affinity_counts, _ = self._remembered(
                snap, ("affinity", terms_key(aff)), lambda n: incoming(n, 0), lambda: snap.node_info_list,
                lambda: {})
        if anti:
            s.anti_counts, s.anti_by_key = self._remembered(
                snap, ("anti-affinity", terms_key(anti)), lambda n: incoming(n, 1), lambda: snap.node_info_list,
                lambda: {})

    def _remembered(self, snap: Any, key: tuple[Any, ...], contribution: Any, domain: Any,
                    fallback: Any) -> tuple[dict[Pair, int], dict[str, dict[str, int]] | None]:
        """Counts for `key` summed from `contribution(node)` over `domain()`, updated for the nodes
        changed since the last call, and the same grouped by topology key; fresh dicts each time
        (preemption mutates the cycle's copy). `fallback()` (and no grouping) when a contribution
        turns out to depend on namespace labels."""
        memo = self._memo.get(key)
        changed = snap.nodes_changed_since(memo.seq) if memo is not None and memo.snapshot is snap else None
        try:
            if memo is None or changed is None:
                if len(self._memo) >= MAX_MEMOS:
                    self._memo.clear()
                memo = _PairCounts(snap, snap.change_seq)
                for n in domain():
                    memo.set_node(n.name, contribution(n))
                self._memo[key] = memo
            elif changed:
                smap = snap.node_info_map
                for name in changed:
                    n = smap.get(name)
                    memo.set_node(name, contribution(n) if n is not None else None)
                memo.seq = snap.change_seq
        except _Volatile:
            self._memo.pop(key, None)
            return fallback(), None
        return dict(memo.counts), {k: dict(v) for k, v in memo.by_key.items()}

    def _count_existing_anti(self, snap: Any, s: _PreFilterState) -> dict[Pair, int]:
        out: dict[Pair, int] = {}
        for n in snap.have_pods_with_required_anti_affinity():
            labels = n.labels
            for existing in n.pods_with_required_anti_affinity:
                for t in compiled_affinity(existing).required_anti_affinity:
                    if t.matches(s.pod, s.ns_labels):
                        _update(out, labels, t.topology_key, 1)
        return out

    @staticmethod
    def _count_incoming(nodes: Sequence[NodeInfo], s: _PreFilterState) -> None:
        aff, anti, ns_labels = s.affinity, s.anti_affinity, s.ns_labels
        for n in nodes:
            labels = n.labels
            for existing in n.pods:
                if aff and _matches_all(aff, existing, ns_labels):
                    for t in aff:
                        _update(s.affinity_counts, labels, t.topology_key, 1)
                for t in anti:
                    if t.matches(existing, ns_labels):
                        _update(s.anti_counts, labels, t.topology_key, 1)

    def has_pre_filter_extensions(self) -> bool:
        return True

    def add_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is not None:
            s.update_with_pod(pod_to_add, node.labels, 1)
        return SUCCESS

    def remove_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is not None:
            s.update_with_pod(pod_to_remove, node.labels, -1)
        return SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        s: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.as_error(
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found', plugin=self.NAME
            )
        labels = node.labels
        # required affinity of the incoming pod
        if s.affinity:
            pods_exist = True
            for t in s.affinity:
                v = labels.get(t.topology_key)
                if v is None:
                    return Status.unresolvable(ERR_REASON_AFFINITY, plugin=self.NAME)
                if s.affinity_counts.get((t.topology_key, v), 0) <= 0:
                    pods_exist = False
            if not pods_exist and not (not s.affinity_counts and _matches_all(s.affinity, pod, s.ns_labels)):
                return Status.unresolvable(ERR_REASON_AFFINITY, plugin=self.NAME)
        # required anti-affinity of the incoming pod
        if s.anti_counts:
            for t in s.anti_affinity:
                v = labels.get(t.topology_key)
                if v is not None and s.anti_counts.get((t.topology_key, v), 0) > 0:
                    return Status.unschedulable(ERR_REASON_ANTI_AFFINITY, plugin=self.NAME)
        # existing pods' required anti-affinity
        # (upstream walks the node's labels and looks each pair up: O(labels) per node, where a walk
        # of the map would grow with every bound pod holding a hostname-keyed term)
        ex = s.existing_anti
        if ex:
            if len(ex) <= len(labels):
                for (k, v), c in ex.items():
                    if c > 0 and labels.get(k) == v:
                        return Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY, plugin=self.NAME)
            else:
                for k, v in labels.items():
                    if ex.get((k, v), 0) > 0:
                        return Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY, plugin=self.NAME)
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """Batch Filter: the blocked topology values of the incoming pod's anti-affinity terms and
        of existing pods' anti-affinity are gathered per key once, then each node costs one lookup
        per key (same verdicts and reasons as `filter`, node by node)."""
        s: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None or s.affinity:
            return super().filter_nodes(state, pod, nodes)
        anti_keys, existing_keys = s.blocked_values()
        out: list[Status | None] = []
        append = out.append
        name = self.NAME
        for n in nodes:
            labels = n.labels
            st: Status | None = None
            for k, vs in anti_keys:
                lv = labels.get(k)
                if lv is not None and lv in vs:
                    st = Status.unschedulable(ERR_REASON_ANTI_AFFINITY, plugin=name)
                    break
            if st is None:
                for k, vs in existing_keys:
                    lv = labels.get(k)
                    if lv is not None and lv in vs:
                        st = Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY, plugin=name)
                        break
            append(st)
        return out

    def filter_reject_rows(self, state: CycleState, pod: PodInfo, arrays: NodeArrays,
                           rows: IntArray) -> tuple[IntArray, list[Status]] | None:
        """`filter_nodes` over snapshot rows, for a pod without required affinity terms: a row is
        rejected for the incoming pod's anti-affinity when its node's value of a term's key is a
        blocked value, else for existing pods' anti-affinity the same way (the same order and
        reasons as `filter`). Each key's node values are remembered codes (LabelCodes); the
        blocked values are looked up once per key, so a cycle costs O(blocked values + rows)
        in C loops instead of a Python lookup per node."""
        s: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None or s.affinity:
            return None
        anti_keys, existing_keys = s.blocked_values()
        m = len(rows)
        if not m or not (anti_keys or existing_keys):
            return rows[:0], []
        anti = self._blocked_rows("incoming", arrays, rows, anti_keys)
        existing = self._blocked_rows("existing", arrays, rows, existing_keys)
        if anti is None and existing is None:
            return rows[:0], []
        st_anti = Status.unschedulable(ERR_REASON_ANTI_AFFINITY, plugin=self.NAME)
        st_existing = Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY, plugin=self.NAME)
        if existing is None:
            assert anti is not None
            picked = rows[anti]
            return picked, [st_anti] * len(picked)
        if anti is None:
            picked = rows[existing]
            return picked, [st_existing] * len(picked)
        bad = anti | existing
        return rows[bad], [st_anti if a else st_existing for a in anti[bad].tolist()]

    def _blocked_rows(self, role: str, arrays: NodeArrays, rows: IntArray,
                      keys: Sequence[tuple[str, Collection[str]]]) -> BoolArray | None:
        """True where the row's node holds a blocked value of one of `keys`; None when none does."""
        out: BoolArray | None = None
        for key, values in keys:
            if not values:
                continue
            codes = self._labels.rows(arrays, rows, key)  # first: it gives codes to the rows' values
            hit: BoolArray = self._blocked_table(role, key, values)[codes]  # code -1 (no label): the last slot
            if _COUNT_NONZERO(hit):
                out = hit if out is None else out | hit
        return out

    def _blocked_table(self, role: str, key: str, values: Collection[str]) -> BoolArray:
        """Per code of `key`, whether its value is in `values`, plus a last False slot for -1.
        Kept across cycles per (role, key) and brought up to date with the values added and
        removed since (a bound pod changes one or two), so a cycle costs O(changed values) plus
        C-level set differences instead of a code lookup per blocked value; built afresh when
        rows have shown values that had no code when it was built. Within a cycle the same
        `values` object comes back chunk after chunk: the table is returned as it is."""
        rec = self._tables.get((role, key))
        if rec is not None and self._labels.is_current(key, rec.stamp):
            if rec.source is values:
                return rec.table
            now = set(values)
            known = self._labels.codes(key)
            for v in rec.values - now:
                c = known.get(v)
                if c is not None:
                    rec.table[c] = False
            added = now - rec.values
            if added:
                got = self._labels.codes_of(key, added, len(added))
                rec.table[got[got >= 0]] = True
            rec.source, rec.values = values, now
            return rec.table
        now = set(values)
        rec = self._tables[(role, key)] = _BlockedTable(
            values, now, self._labels.stamp(key), self._labels.table(key, now).astype(np.bool_))
        return rec.table

    # --- PreScore / Score -----------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        if not nodes:
            return Status.skip()  # no nodes to score
        c = compiled_affinity(pod)
        has_constraints = bool(c.preferred_affinity or c.preferred_anti_affinity)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status.skip()
        # ideally caught by PreFilter; upstream parses the pod again here
        err = parse_error(pod)
        if err is not None:
            return Status.as_error(f"failed to parse pod: {err}", plugin=self.NAME)
        all_nodes: Sequence[NodeInfo]
        if has_constraints:
            snap = self.handle.snapshot() if self.handle is not None else None
            all_nodes = snap.node_infos() if snap is not None else nodes
        ns_labels = _NsLabelsMemo(self._ns_lookup)
        hard_weight = self.args.hard_pod_affinity_weight
        ignore_existing = self.args.ignore_preferred_terms_of_existing_pods
        scoring: Sequence[tuple[NodeInfo, Sequence[PodInfo]]] | None = None
        if not has_constraints:
            snap = self.handle.snapshot() if self.handle is not None else None
            if snap is not None and getattr(snap, "tracked", False):
                if snap.known_without_affinity_pods(required_anti=False):
                    return Status.skip()  # no existing pod with a term that could score
                # only existing pods with terms that can score matter (a pod with nothing but
                # required anti-affinity adds nothing): kept per node across cycles
                scoring = self._scoring_pods(snap)
                if not scoring:
                    return Status.skip()
                all_nodes = ()
            else:
                all_nodes = self._snapshot_nodes("have_pods_with_affinity", nodes, "pods_with_affinity")
        topo: dict[str, dict[str, int]] = {}
        touched = False

        def process(
            terms: Sequence[CompiledTerm],
            target: PodInfo,
            labels: Mapping[str, str],
            mult: int,
            weight: int | None = None,
        ) -> bool:
            hit = False
            for t in terms:
                if t.matches(target, ns_labels):
                    tv = labels.get(t.topology_key)
                    if tv is not None:
                        m = topo.setdefault(t.topology_key, {})
                        m[tv] = m.get(tv, 0) + (t.weight if weight is None else weight) * mult
                        hit = True
            return hit

        walk: Any = scoring if scoring is not None else (
            (n, n.pods if has_constraints else n.pods_with_affinity) for n in all_nodes)
        for n, pods in walk:
            labels = n.labels
            if not labels:
                continue
            for existing in pods:
                ec = compiled_affinity(existing)
                if has_constraints:
                    touched |= process(c.preferred_affinity, existing, labels, 1)
                    touched |= process(c.preferred_anti_affinity, existing, labels, -1)
                if hard_weight > 0 and ec.required_affinity:
                    touched |= process(ec.required_affinity, pod, labels, 1, hard_weight)
                if not ignore_existing:
                    touched |= process(ec.preferred_affinity, pod, labels, 1)
                    touched |= process(ec.preferred_anti_affinity, pod, labels, -1)
        if not touched:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, topo)
        return SUCCESS

    def _scoring_pods(self, snap: Any) -> list[tuple[NodeInfo, Sequence[PodInfo]]]:
        """(node, its existing pods whose terms can add to another pod's score: required affinity
        while hardPodAffinityWeight > 0, preferred (anti-)affinity unless ignored), for nodes with
        any; refreshed only for nodes the snapshot journal reports changed."""
        memo = self._score_memo
        changed = snap.nodes_changed_since(memo.seq) if memo is not None and memo.snapshot is snap else None
        hard = self.args.hard_pod_affinity_weight > 0
        use_preferred = not self.args.ignore_preferred_terms_of_existing_pods

        def relevant(n: NodeInfo) -> list[PodInfo]:
            out = []
            for p in n.pods_with_affinity:
                c = compiled_affinity(p)
                if (hard and c.required_affinity) or (
                        use_preferred and (c.preferred_affinity or c.preferred_anti_affinity)):
                    out.append(p)
            return out

        if memo is None or changed is None:
            memo = self._score_memo = _ScoringPods(snap, snap.change_seq)
            for n in snap.have_pods_with_affinity():
                pods = relevant(n)
                if pods:
                    memo.per_node[n.name] = (n, pods)
        elif changed:
            smap = snap.node_info_map
            for name in changed:
                n = smap.get(name)
                pods = relevant(n) if n is not None else []
                if pods:
                    memo.per_node[name] = (n, pods)
                else:
                    memo.per_node.pop(name, None)
            memo.seq = snap.change_seq
        return list(memo.per_node.values())

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        topo: dict[str, dict[str, int]] | None = state.get(PRE_SCORE_STATE_KEY)
        if not topo:
            return 0, SUCCESS
        labels = node.labels
        total = 0
        for key, values in topo.items():
            v = labels.get(key)
            if v is not None:
                total += values.get(v, 0)
        return total, SUCCESS

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        if not state.get(PRE_SCORE_STATE_KEY) or not scores:
            return SUCCESS
        lo = min(s.score for s in scores)
        hi = max(s.score for s in scores)
        diff = hi - lo
        for s in scores:
            s.score = int(MAX_NODE_SCORE * ((s.score - lo) / diff)) if diff > 0 else 0
        return SUCCESS

    # --- events ---------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.ASSIGNED_POD,
                    ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
                ),
                self._after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self._after_node_change,
            ),
        ]

    def _after_pod_change(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue when an assigned pod starts matching the pod's required affinity, or stops matching
        (or leaves) one of its anti-affinity terms, or an existing pod whose anti-affinity rejected
        the pod goes away."""
        me = as_pod_info(pod)
        c = compiled_affinity(me)
        lookup = _NsLabelsMemo(self._ns_lookup)
        old_pi = PodInfo(old) if isinstance(old, dict) else None
        new_pi = PodInfo(new) if isinstance(new, dict) else None
        if (new_pi is not None and not new_pi.node_name) or (old_pi is not None and not old_pi.node_name):
            return QueueingHint.SKIP
        if old_pi is not None and new_pi is not None:
            if not _matches_all(c.required_affinity, old_pi, lookup) and _matches_all(
                c.required_affinity, new_pi, lookup
            ):
                return QueueingHint.QUEUE
            if any(t.matches(old_pi, lookup) for t in c.required_anti_affinity) and not any(
                t.matches(new_pi, lookup) for t in c.required_anti_affinity
            ):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if new_pi is not None:
            return (
                QueueingHint.QUEUE if _matches_all(c.required_affinity, new_pi, lookup) else QueueingHint.SKIP
            )
        if old_pi is None:
            return QueueingHint.QUEUE
        if any(t.matches(old_pi, lookup) for t in c.required_anti_affinity):
            return QueueingHint.QUEUE
        if any(t.matches(me, lookup) for t in compiled_affinity(old_pi).required_anti_affinity):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def _after_node_change(pod: Any, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.QUEUE
