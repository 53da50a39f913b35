"""Node selector and node affinity matching (layer L2; upstream component-helpers
scheduling/corev1/nodeaffinity).

Used by the scheduler (NodeAffinity, PodTopologySpread's nodeAffinityPolicy), the descheduler
(RemovePodsViolatingNodeAffinity) and the DaemonSet-style controllers. Everything is compiled once
per pod and then matched per node without allocation.

Semantics: `spec.nodeSelector` (a plain map) AND `requiredDuringSchedulingIgnoredDuringExecution`
(terms ORed, the expressions and fields inside one term ANDed). Operators In, NotIn, Exists,
DoesNotExist, Gt, Lt on labels; matchFields only `metadata.name` with In/NotIn and one value.
A term with neither expressions nor fields matches nothing; a term that fails to parse never
matches. Preferred terms add their weight when they match (weight 0 terms are dropped).
Example: preferred [{weight 2, zone In [a]}, {weight 5, disk Exists}] on a node labelled
zone=a,disk=ssd scores 7; on zone=b it scores 5.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from minik3s.api.selectors import (
    OP_DOES_NOT_EXIST,
    OP_EXISTS,
    OP_GT,
    OP_IN,
    OP_LT,
    OP_NOT_IN,
    LabelSelector,
    _make_requirement,
    selector_from_set,
)
from minik3s.api.types import JsonDict

OBJECT_NAME_FIELD = "metadata.name"

_NODE_OPS = {
    "In": OP_IN,
    "NotIn": OP_NOT_IN,
    "Exists": OP_EXISTS,
    "DoesNotExist": OP_DOES_NOT_EXIST,
    "Gt": OP_GT,
    "Lt": OP_LT,
}


class _Term:
    """One compiled NodeSelectorTerm: label requirements and metadata.name In/NotIn sets."""

    __slots__ = ("labels", "name_in", "name_not_in", "empty")

    def __init__(self, term: Mapping[str, Any]) -> None:
        exprs = term.get("matchExpressions") or ()
        fields = term.get("matchFields") or ()
        self.empty = not exprs and not fields
        reqs = []
        for e in exprs:
            op = _NODE_OPS.get(e.get("operator") or "")
            if op is None:
                raise ValueError(f'"{e.get("operator")}" is not a valid node selector operator')
            reqs.append(_make_requirement(e.get("key") or "", op, list(e.get("values") or ())))
        self.labels: LabelSelector | None = LabelSelector(reqs) if reqs else None
        self.name_in: list[str] = []
        self.name_not_in: list[str] = []
        for f in fields:
            if f.get("key") != OBJECT_NAME_FIELD:
                raise ValueError(f'"{f.get("key")}" is not a valid node field selector key')
            op = f.get("operator")
            vals = list(f.get("values") or ())
            if op not in ("In", "NotIn"):
                raise ValueError(f'"{op}" is not a valid node field selector operator')
            if len(vals) != 1:
                raise ValueError(
                    f'unexpected number of value ({len(vals)}) for node field selector operator "{op}"'
                )
            (self.name_in if op == "In" else self.name_not_in).append(vals[0])

    def match(self, labels: Mapping[str, str], name: str) -> bool:
        if self.empty:
            return False
        if self.labels is not None and not self.labels.matches(labels):
            return False
        for n in self.name_in:
            if n != name:
                return False
        for n in self.name_not_in:
            if n == name:
                return False
        return True


class NodeSelector:
    """A compiled v1.NodeSelector (terms ORed). Terms that fail to parse are kept in `errors` and
    never match (upstream LazyErrorNodeSelector)."""

    __slots__ = ("_terms", "errors")

    def __init__(self, node_selector: Mapping[str, Any] | None) -> None:
        self._terms: list[_Term] = []
        self.errors: list[str] = []
        for t in (node_selector or {}).get("nodeSelectorTerms") or ():
            try:
                self._terms.append(_Term(t))
            except ValueError as e:
                self.errors.append(str(e))

    def match_labels(self, labels: Mapping[str, str], name: str) -> bool:
        for t in self._terms:
            if t.match(labels, name):
                return True
        return False

    def match(self, node: JsonDict) -> bool:
        meta = node.get("metadata") or {}
        return self.match_labels(meta.get("labels") or {}, meta.get("name") or "")


class RequiredNodeAffinity:
    """`spec.nodeSelector` AND required node affinity of a pod (upstream GetRequiredNodeAffinity).

    Example: nodeSelector {disk: ssd} + required [zone In [a]] matches only nodes with both labels.
    """

    __slots__ = ("_selector", "_node_selector")

    def __init__(self, pod: JsonDict) -> None:
        spec = pod.get("spec") or {}
        ns = spec.get("nodeSelector")
        self._selector: LabelSelector | None = selector_from_set(ns) if ns else None
        req = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        self._node_selector: NodeSelector | None = NodeSelector(req) if req is not None else None

    @property
    def is_empty(self) -> bool:
        return self._selector is None and self._node_selector is None

    def match_labels(self, labels: Mapping[str, str], name: str) -> bool:
        if self._selector is not None and not self._selector.matches(labels):
            return False
        if self._node_selector is not None and not self._node_selector.match_labels(labels, name):
            return False
        return True

    def match(self, node: JsonDict) -> bool:
        meta = node.get("metadata") or {}
        return self.match_labels(meta.get("labels") or {}, meta.get("name") or "")


class PreferredSchedulingTerms:
    """Compiled preferred terms; `score` sums the weights of matching terms. Raises ValueError on a
    term that does not parse (upstream NewPreferredSchedulingTerms aggregates the errors)."""

    __slots__ = ("_terms",)

    def __init__(self, terms: Sequence[Mapping[str, Any]] | None) -> None:
        self._terms: list[tuple[_Term, int]] = []
        errs: list[str] = []
        for t in terms or ():
            w = int(t.get("weight") or 0)
            if w == 0:
                continue
            try:
                self._terms.append((_Term(t.get("preference") or {}), w))
            except ValueError as e:
                errs.append(str(e))
        if errs:
            raise ValueError(", ".join(errs))

    def __bool__(self) -> bool:
        return bool(self._terms)

    def score_labels(self, labels: Mapping[str, str], name: str) -> int:
        total = 0
        for term, w in self._terms:
            if term.match(labels, name):
                total += w
        return total

    def score(self, node: JsonDict) -> int:
        meta = node.get("metadata") or {}
        return self.score_labels(meta.get("labels") or {}, meta.get("name") or "")


def pod_preferred_terms(pod: JsonDict) -> list[JsonDict] | None:
    """The pod's preferredDuringSchedulingIgnoredDuringExecution list, or None when absent."""
    na = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    return na.get("preferredDuringSchedulingIgnoredDuringExecution")


def preferred_score(pod: JsonDict, node: JsonDict) -> int:
    """Sum of weights of the pod's preferred node-affinity terms matching `node` (invalid terms: 0)."""
    try:
        return PreferredSchedulingTerms(pod_preferred_terms(pod)).score(node)
    except ValueError:
        return 0


def pod_matches_node_selector_and_affinity(pod: JsonDict, node: JsonDict) -> bool:
    """Convenience for one-off checks (descheduler, controllers)."""
    return RequiredNodeAffinity(pod).match(node)
