"""NodeAffinity (PreFilter, Filter, PreScore, Score): `spec.nodeSelector` + required node affinity
filter nodes; preferred terms score them (upstream plugins/nodeaffinity).

PreFilter narrows the candidate nodes when every required term pins `metadata.name In [...]`
(union over terms, intersection inside one term). Score = Σ weights of matching preferred terms
(+ the profile's `addedAffinity` preferred terms), normalized by the max (raw 2, 11, 4 -> 18, 100, 36).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from minik3s.api.errors import aggregate
from minik3s.api.helpers.node_affinity import (
    OBJECT_NAME_FIELD,
    NodeSelector,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
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
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    Status,
)
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import (
    SUCCESS,
    as_pod_info,
    cached_on,
    default_normalize_raw,
    default_normalize_score,
)

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
PRE_FILTER_STATE_KEY = "PreFilter" + names.NODE_AFFINITY
PRE_SCORE_STATE_KEY = "PreScore" + names.NODE_AFFINITY


class NodeAffinityArgs(BaseModel):
    """NodeAffinityArgs: `addedAffinity` (a v1.NodeAffinity) applies to every pod of the profile."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    added_affinity: dict[str, Any] | None = Field(default=None, alias="addedAffinity")

    @field_validator("added_affinity")
    @classmethod
    def _valid(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is None:
            return v
        req = v.get("requiredDuringSchedulingIgnoredDuringExecution")
        if req is not None:
            ns = NodeSelector(req)
            if ns.errors:
                raise ValueError(
                    "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: " + ns.errors[0]
                )
        PreferredSchedulingTerms(v.get("preferredDuringSchedulingIgnoredDuringExecution"))
        return v


_MISSING = object()
_LABEL_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPS = ("In", "NotIn")


def _requirement_error(kind: str, req: dict[str, Any]) -> str | None:
    """What parsing one requirement of a preferred term reports, relative to the requirement
    (`key: Invalid value: ...`, `operator: Unsupported value: "Foo"`), None when it parses."""
    op = req.get("operator") or ""
    if kind == "matchFields":
        if op not in _FIELD_OPS:
            return f'operator: Unsupported value: "{op}": supported values: "In", "NotIn"'
    elif op not in _LABEL_OPS:
        return f'operator: Unsupported value: "{op}"'
    try:
        PreferredSchedulingTerms([{"weight": 1, "preference": {kind: [req]}}])
    except ValueError as e:
        return str(e)
    return None


def _preferred_error(terms: Sequence[dict[str, Any]], fallback: str) -> str:
    """The error upstream NewPreferredSchedulingTerms returns for `terms`: each requirement's
    message under its path (`[0].matchExpressions[0].key: Invalid value: "invalid key": ...`)."""
    errs: list[str] = []
    for i, t in enumerate(terms):
        if not int(t.get("weight") or 0):
            continue
        pref = t.get("preference") or {}
        for kind in ("matchExpressions", "matchFields"):
            for j, req in enumerate(pref.get(kind) or ()):
                msg = _requirement_error(kind, req)
                if msg is not None:
                    errs.append(f"[{i}].{kind}[{j}].{msg}")
    return aggregate(errs) if errs else fallback


def _pod_preferred(pod: PodInfo) -> PreferredSchedulingTerms | None:
    """The pod's preferred node affinity terms (None when the field is absent); raises ValueError
    with upstream's message when a term does not parse."""
    na = (pod.spec.get("affinity") or {}).get("nodeAffinity") or {}
    raw = na.get("preferredDuringSchedulingIgnoredDuringExecution")
    if raw is None:
        return None
    try:
        return PreferredSchedulingTerms(raw)
    except ValueError as e:
        raise ValueError(_preferred_error(raw, str(e))) from None


def _required(pod: PodInfo) -> RequiredNodeAffinity:
    return cached_on(pod, "required_node_affinity", lambda: RequiredNodeAffinity(pod.pod))  # type: ignore[no-any-return]


def _required_terms(pod: PodInfo) -> list[dict[str, Any]] | None:
    na = (pod.spec.get("affinity") or {}).get("nodeAffinity") or {}
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is None:
        return None
    return list(req.get("nodeSelectorTerms") or [])


class NodeAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    NAME = names.NODE_AFFINITY
    Args = NodeAffinityArgs

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        if isinstance(args, dict):
            args = NodeAffinityArgs.model_validate(args)
        super().__init__(args or NodeAffinityArgs(), handle)
        added = self.args.added_affinity or {}
        req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        self._added_node_selector: NodeSelector | None = NodeSelector(req) if req is not None else None
        pref = added.get("preferredDuringSchedulingIgnoredDuringExecution")
        self._added_pref: PreferredSchedulingTerms | None = PreferredSchedulingTerms(pref) if pref else None

    # --- PreFilter / Filter ---------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        terms = _required_terms(pod)
        if terms is None and self._added_node_selector is None and pod.spec.get("nodeSelector") is None:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _required(pod))
        if not terms:
            return None, SUCCESS
        node_names: set[str] | None = None
        for t in terms:
            term_names: set[str] | None = None
            for r in t.get("matchFields") or ():
                if r.get("key") == OBJECT_NAME_FIELD and r.get("operator") == "In":
                    s = set(r.get("values") or ())
                    term_names = s if term_names is None else term_names & s
            if term_names is None:
                return None, SUCCESS  # a term without a name pin: every node may match
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, Status.unresolvable(ERR_REASON_CONFLICT, plugin=self.NAME)
        if node_names:
            return PreFilterResult(node_names), SUCCESS
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if self._added_node_selector is not None and not self._added_node_selector.match_labels(
            node.labels, node.name
        ):
            return Status.unresolvable(ERR_REASON_ENFORCED, plugin=self.NAME)
        req = state.get(PRE_FILTER_STATE_KEY)
        if req is None:
            req = _required(pod)
        if not req.match_labels(node.labels, node.name):
            return Status.unresolvable(ERR_REASON_POD, plugin=self.NAME)
        return SUCCESS

    # --- PreScore / Score -----------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        if not nodes:
            return SUCCESS
        try:
            pref = _pod_preferred(pod)
        except ValueError as e:
            return Status.as_error(str(e), plugin=self.NAME)
        if pref is None and self._added_pref is None:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, pref)
        return SUCCESS

    def _preferred_from_state(self, state: CycleState, pod: PodInfo) -> PreferredSchedulingTerms | None:
        """PreScore's parse of the pod's preferred terms, or (PreScore disabled) the parse now;
        raises ValueError on terms that do not parse."""
        pref = state.get(PRE_SCORE_STATE_KEY, _MISSING)
        if pref is _MISSING:
            return _pod_preferred(pod)
        return pref  # type: ignore[no-any-return]

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        count = 0
        if self._added_pref is not None:
            count += self._added_pref.score_labels(node.labels, node.name)
        try:
            pref = self._preferred_from_state(state, pod)
        except ValueError as e:
            return 0, Status.as_error(str(e), plugin=self.NAME)
        if pref is not None:
            count += pref.score_labels(node.labels, node.name)
        return count, SUCCESS

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[list[int], Status]:
        added = self._added_pref
        try:
            pref = self._preferred_from_state(state, pod)
        except ValueError as e:
            return [0] * len(nodes), Status.as_error(str(e), plugin=self.NAME)
        out: list[int] = []
        append = out.append
        for node in nodes:
            count = 0
            if added is not None:
                count += added.score_labels(node.labels, node.name)
            if pref is not None:
                count += pref.score_labels(node.labels, node.name)
            append(count)
        return out, SUCCESS

    def normalize_raw_scores(self, state: CycleState, pod: PodInfo, scores: list[int]) -> list[int]:
        return default_normalize_raw(scores, reverse=False)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        default_normalize_score(scores, reverse=False)
        return SUCCESS

    # --- events ---------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self._after_node_change,
            )
        ]

    def _after_node_change(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        p = as_pod_info(pod).pod
        meta = (new or {}).get("metadata") or {}
        labels, name = meta.get("labels") or {}, meta.get("name") or ""
        if self._added_node_selector is not None and not self._added_node_selector.match_labels(labels, name):
            return QueueingHint.SKIP
        req = RequiredNodeAffinity(p)
        if not req.match_labels(labels, name):
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        ometa = old.get("metadata") or {}
        was = req.match_labels(ometa.get("labels") or {}, ometa.get("name") or "")
        return QueueingHint.SKIP if was else QueueingHint.QUEUE
