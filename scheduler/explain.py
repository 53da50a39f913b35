"""Explain: why the scheduler placed (or failed to place) a pod, per node and per plugin (layer L4).

Upstream kube-scheduler does not expose per-node reasons (users ask for it, e.g.
kubernetes-sigs/cluster-capacity#137); kube-scheduler-simulator records them as annotations.
We keep, for the latest attempt of each pod, what the cycle already computed:

- the PreFilter outcome and the plugins whose Filter / Score were skipped;
- per evaluated node the Filter verdicts: Filter stops at the first failure, so the verdicts
  are "Success" for the active filter plugins before the rejecting one, then its status;
- per score plugin the raw, normalized and weighted scores of each feasible node, the totals;
- the chosen node, or the FailedScheduling message and the PostFilter outcome.

Sections computed when asked, not per attempt, add live state: `gang` (registered by the
scheduler with `gang_section`) shows the pod's gang as the gang plugins see it now: members
seen / assumed (waiting at Permit) / bound, the minimum, and why it waits. A pod whose gang
holds it at PreEnqueue has no attempt yet; it is explained by its sections alone.

Hot-path cost is one dict entry per evaluated node (the failing Status, or None) plus the score
lists; the per-plugin breakdown is rebuilt only when `to_dict()` is called. Memory is bounded by
an LRU of `capacity` pods (default 10,000).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler.framework.interface import Code, Status

CODE_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


def status_dict(st: Status) -> dict[str, Any]:
    return {"plugin": st.plugin, "code": CODE_NAMES.get(st.code, str(st.code)), "reasons": list(st.reasons)}


@dataclass(slots=True)
class AttemptRecord:
    namespace: str
    name: str
    uid: str
    profile: str
    attempt: int
    cycle: int
    timestamp: str
    num_all_nodes: int = 0
    pre_filter_status: Status | None = None
    skipped_filter_plugins: list[str] = field(default_factory=list)
    skipped_score_plugins: list[str] = field(default_factory=list)
    filter_plugins: list[str] = field(default_factory=list)
    # rejected nodes (and, from older callers, feasible ones as None); `feasible` lists the rest
    node_statuses: dict[str, Status | None] = field(default_factory=dict)
    feasible: list[str] = field(default_factory=list)
    # the feasible NodeInfos instead of `feasible` (names read when explained: cheaper per cycle)
    feasible_nodes: list[Any] | None = None
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    totals: Any = field(default_factory=list)  # list[int], or an int64 array from a vector cycle
    selected_node: str = ""
    result: str = ""
    message: str = ""
    post_filter_status: Status | None = None
    nominated_node: str = ""

    def feasible_names(self) -> list[str]:
        if self.feasible_nodes is not None:
            return [n.name for n in self.feasible_nodes]
        return self.feasible

    def to_dict(self) -> dict[str, Any]:
        nodes: dict[str, Any] = {}
        statuses = self.node_statuses
        feasible = self.feasible_names()
        if any(n not in statuses for n in feasible):
            # feasible nodes are kept apart from the rejected ones (cheaper per cycle); they
            # follow the rejected ones, as in the walk's diagnosis
            statuses = dict(statuses)
            for n in feasible:
                statuses.setdefault(n, None)
        for node, st in statuses.items():
            verdicts: list[dict[str, Any]] = []
            for pl in self.filter_plugins:
                if st is not None and st.plugin == pl:
                    verdicts.append(status_dict(st))
                    break
                verdicts.append({"plugin": pl, "code": "Success", "reasons": []})
            else:
                if st is not None:  # rejected outside the listed filters (e.g. an error)
                    verdicts.append(status_dict(st))
            nodes[node] = {"feasible": st is None, "filters": verdicts}
        # a vector cycle records int64 arrays: plain ints for the explanation
        scores = {pl: {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in rec.items()}
                  for pl, rec in self.scores.items()}
        totals = self.totals.tolist() if hasattr(self.totals, "tolist") else self.totals
        for i, node in enumerate(feasible):
            entry = nodes.setdefault(node, {"feasible": True, "filters": []})
            per_plugin: dict[str, Any] = {}
            for pl, rec in scores.items():
                raw = rec.get("raw")
                norm = rec["normalized"][i]
                per_plugin[pl] = {
                    "raw": raw[i] if raw is not None else norm,
                    "normalized": norm,
                    "weight": rec["weight"],
                    "weighted": norm * rec["weight"],
                }
            entry["scores"] = per_plugin
            if i < len(totals):
                entry["totalScore"] = totals[i]
        out: dict[str, Any] = {
            "pod": {"namespace": self.namespace, "name": self.name, "uid": self.uid},
            "schedulerName": self.profile,
            "attempt": self.attempt,
            "schedulingCycle": self.cycle,
            "timestamp": self.timestamp,
            "numAllNodes": self.num_all_nodes,
            "numEvaluatedNodes": len(statuses),
            "numFeasibleNodes": len(feasible),
            "skippedFilterPlugins": self.skipped_filter_plugins,
            "skippedScorePlugins": self.skipped_score_plugins,
            "result": self.result,
            "nodes": nodes,
        }
        if self.pre_filter_status is not None:
            out["preFilter"] = status_dict(self.pre_filter_status)
        if self.selected_node:
            out["selectedNode"] = self.selected_node
        if self.message:
            out["message"] = self.message
        if self.post_filter_status is not None:
            pf = status_dict(self.post_filter_status)
            if self.nominated_node:
                pf["nominatedNodeName"] = self.nominated_node
            out["postFilter"] = pf
        return out


class Explainer:
    """LRU of the latest AttemptRecord per pod (keyed by namespace/name)."""

    def __init__(self, capacity: int = 10_000, *, max_node_entries: int = 1_000_000) -> None:
        """`capacity` pods at most, and at most `max_node_entries` per-node entries in total (a
        failed pod in a 5,000-node cluster holds 5,000), evicting least recently recorded first."""
        self.capacity = capacity
        self.max_node_entries = max_node_entries
        self._records: OrderedDict[str, AttemptRecord] = OrderedDict()
        self._sections: list[tuple[str, Section]] = []
        self._sizes: dict[str, int] = {}
        self._entries = 0

    def record(self, rec: AttemptRecord) -> None:
        if self.capacity <= 0:
            return
        key = f"{rec.namespace}/{rec.name}"
        self._entries -= self._sizes.pop(key, 0)
        size = len(rec.node_statuses) + len(rec.feasible_nodes if rec.feasible_nodes is not None
                                             else rec.feasible) + 1
        self._records[key] = rec
        self._records.move_to_end(key)
        self._sizes[key] = size
        self._entries += size
        while len(self._records) > self.capacity or (self._entries > self.max_node_entries
                                                     and len(self._records) > 1):
            old, _ = self._records.popitem(last=False)
            self._entries -= self._sizes.pop(old, 0)

    def get(self, namespace: str, name: str) -> AttemptRecord | None:
        return self._records.get(f"{namespace}/{name}")

    def add_section(self, name: str, fn: Section) -> None:
        """Add `fn(namespace, name) -> dict | None` as section `name` of every explanation."""
        self._sections.append((name, fn))

    def explain(self, namespace: str, name: str) -> dict[str, Any] | None:
        rec = self.get(namespace, name)
        out = rec.to_dict() if rec is not None else None
        for section, fn in self._sections:
            value = fn(namespace, name)
            if value is None:
                continue
            if out is None:
                out = {"pod": {"namespace": namespace, "name": name}, "result": "NotAttempted", "nodes": {}}
            out[section] = value
        return out

    def forget(self, namespace: str, name: str) -> None:
        key = f"{namespace}/{name}"
        self._records.pop(key, None)
        self._entries -= self._sizes.pop(key, 0)

    def __len__(self) -> int:
        return len(self._records)


Section = Callable[[str, str], "dict[str, Any] | None"]


def gang_section(frameworks: Mapping[str, Any], pods: Any) -> Section:
    """The `gang` section: the first gang plugin (any profile) that knows the pod's gang.
    `pods` is the pod informer's store (`get("ns/name")`)."""

    def section(namespace: str, name: str) -> dict[str, Any] | None:
        pod = pods.get(f"{namespace}/{name}")
        if pod is None:
            return None
        for fw in frameworks.values():
            for pl in fw.plugins.values():
                fn = getattr(pl, "explain_gang", None)
                if fn is None:
                    continue
                value = fn(pod)
                if value is not None:
                    return dict(value)
        return None

    return section
