"""Explainer bounds and serialisation."""

from __future__ import annotations

from scheduler.explain import AttemptRecord, Explainer
from scheduler.framework.interface import Status


def rec(name: str, nodes: int) -> AttemptRecord:
    r = AttemptRecord("default", name, f"uid-{name}", "default-scheduler", 1, 1, "2026-01-01T00:00:00Z")
    r.filter_plugins = ["A", "B"]
    r.node_statuses = {f"n{i}": Status.unschedulable("no", plugin="B") for i in range(nodes)}
    return r


def test_lru_by_pod_count():
    e = Explainer(capacity=2)
    for name in ("a", "b", "c"):
        e.record(rec(name, 1))
    assert e.explain("default", "a") is None and e.explain("default", "c") is not None


def test_bounded_by_total_node_entries():
    e = Explainer(capacity=100, max_node_entries=25)
    for name in ("a", "b", "c"):
        e.record(rec(name, 10))
    assert len(e) == 2 and e.get("default", "a") is None
    e.record(rec("b", 1))  # re-recording replaces the old size
    e.record(rec("d", 10))
    assert len(e) == 3


def test_to_dict_rebuilds_per_plugin_filter_verdicts():
    r = rec("p", 1)
    r.node_statuses["ok"] = None
    r.feasible = ["ok"]
    r.scores = {"S": {"raw": [7], "normalized": [70], "weight": 2}}
    r.totals = [140]
    r.selected_node = "ok"
    d = r.to_dict()
    assert d["nodes"]["n0"] == {"feasible": False, "filters": [
        {"plugin": "A", "code": "Success", "reasons": []},
        {"plugin": "B", "code": "Unschedulable", "reasons": ["no"]}]}
    assert d["nodes"]["ok"]["scores"]["S"] == {"raw": 7, "normalized": 70, "weight": 2, "weighted": 140}
    assert d["nodes"]["ok"]["totalScore"] == 140 and d["selectedNode"] == "ok"
    assert d["numEvaluatedNodes"] == 2 and d["numFeasibleNodes"] == 1
