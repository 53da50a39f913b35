"""Shared plugin helpers (upstream framework/plugins/helper): score normalisation, the shared
success Status, compiled pod-affinity terms cached on PodInfo, and object accessors.

SUCCESS is one module-level (immutable) Status returned by hot Filter/Score paths to avoid an
allocation per node; `Status` is frozen, so sharing it is safe (the runtime names a copy).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from minik3s.api.selectors import LabelSelector, label_selector_from_dict
from minik3s.api.types import JsonDict
from scheduler.framework.interface import MAX_NODE_SCORE, NodeScore, Status
from scheduler.framework.node_arrays import IntArray
from scheduler.framework.types import AffinityTerm, PodInfo

SUCCESS = Status()

NamespaceLabels = Callable[[str], Mapping[str, str] | None]


def default_normalize_score(
    scores: list[NodeScore], *, reverse: bool, max_priority: int = MAX_NODE_SCORE
) -> None:
    """Scale scores to [0, max_priority] by the maximum (upstream helper.DefaultNormalizeScore).

    Example: raw 2, 11, 4 -> 18, 100, 36; reversed raw 0, 1, 2 -> 100, 50, 0; all zero -> unchanged
    (reverse: all max_priority)."""
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        v = max_priority * s.score // max_count
        s.score = max_priority - v if reverse else v


def default_normalize_raw(scores: list[int], *, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> list[int]:
    """`default_normalize_score` over plain ints, returning a new list (the batch form plugins
    use from `normalize_raw_scores`). Example: raw 2, 11, 4 -> 18, 100, 36; reversed 0, 0 -> 100, 100."""
    max_count = max(scores, default=0)
    if max_count <= 0:
        if reverse:
            return [max_priority] * len(scores)
        # unchanged, as the NodeScore form (a negative raw is the runtime's range error to report)
        return list(scores)
    if reverse:
        return [max_priority - max_priority * s // max_count for s in scores]
    return [max_priority * s // max_count for s in scores]


def default_normalize_array(scores: IntArray, *, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> IntArray:
    """`default_normalize_raw` over an int64 array (same integer division)."""
    max_count = int(np.maximum.reduce(scores)) if len(scores) else 0
    if max_count <= 0:
        if reverse:
            out: IntArray = np.empty(len(scores), dtype=np.int64)
            out.fill(max_priority)
            return out
        return scores.copy()
    scaled: IntArray = max_priority * scores // max_count
    return max_priority - scaled if reverse else scaled


def compile_selector(d: JsonDict | None) -> LabelSelector:
    """metav1.LabelSelector dict -> LabelSelector; an invalid selector matches nothing."""
    try:
        return label_selector_from_dict(d)
    except ValueError:
        return LabelSelector.nothing()


class CompiledTerm:
    """A PodAffinityTerm ready to match: namespaces, compiled namespaceSelector (None when absent),
    compiled labelSelector, topology key, and the weight for preferred terms."""

    __slots__ = ("namespaces", "ns_selector", "selector", "topology_key", "weight")

    def __init__(self, term: AffinityTerm, weight: int = 0) -> None:
        self.namespaces = term.namespaces
        self.ns_selector: LabelSelector | None = (
            compile_selector(term.namespace_selector) if term.namespace_selector is not None else None
        )
        self.selector = compile_selector(term.selector)
        self.topology_key = term.topology_key
        self.weight = weight

    def matches(self, pod: PodInfo, ns_labels: NamespaceLabels | None) -> bool:
        """Whether `pod` is selected: namespace in the set or selected by namespaceSelector, and labels
        match (upstream framework.AffinityTerm.Matches)."""
        if pod.namespace in self.namespaces:
            return self.selector.matches(pod.labels)
        nsel = self.ns_selector
        if nsel is None or nsel.matches_nothing:
            return False
        if nsel.empty:
            return self.selector.matches(pod.labels)
        labels = ns_labels(pod.namespace) if ns_labels is not None else None
        if nsel.matches(labels or {}):
            return self.selector.matches(pod.labels)
        return False


class CompiledAffinity:
    __slots__ = (
        "required_affinity",
        "required_anti_affinity",
        "preferred_affinity",
        "preferred_anti_affinity",
    )

    def __init__(self, pi: PodInfo) -> None:
        self.required_affinity = [CompiledTerm(t) for t in pi.required_affinity_terms]
        self.required_anti_affinity = [CompiledTerm(t) for t in pi.required_anti_affinity_terms]
        self.preferred_affinity = [CompiledTerm(w.term, w.weight) for w in pi.preferred_affinity_terms]
        self.preferred_anti_affinity = [
            CompiledTerm(w.term, w.weight) for w in pi.preferred_anti_affinity_terms
        ]


def _extra(pi: PodInfo) -> dict[str, Any]:
    ex = pi._extra
    if ex is None:
        ex = pi._extra = {}
    return ex


def compiled_affinity(pi: PodInfo) -> CompiledAffinity:
    """Compiled affinity terms of a PodInfo, built once and cached on it (PodInfos are immutable:
    a changed pod gets a new PodInfo)."""
    ex = _extra(pi)
    c = ex.get("affinity")
    if c is None:
        c = ex["affinity"] = CompiledAffinity(pi)
    return c


def cached_on(pi: PodInfo, key: str, build: Callable[[], Any]) -> Any:
    """Generic per-PodInfo memo (e.g. parsed tolerations, required node affinity)."""
    ex = _extra(pi)
    v = ex.get(key)
    if v is None:
        v = ex[key] = build()
    return v


def pod_labels(pod: JsonDict) -> dict[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


def is_terminating(pod: JsonDict) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def as_pod_info(x: Any) -> PodInfo:
    """The PodInfo behind what a queueing hint receives: a PodInfo, a queued entry with `.pod_info`
    or `.pod`, or the pod dict itself."""
    if isinstance(x, PodInfo):
        return x
    pi = getattr(x, "pod_info", None)
    if isinstance(pi, PodInfo):
        return pi
    pod = getattr(x, "pod", None)
    if isinstance(pod, dict):
        return PodInfo(pod)
    return PodInfo(x if isinstance(x, dict) else {})
