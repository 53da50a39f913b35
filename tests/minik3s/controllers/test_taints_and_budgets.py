"""Pure tables: node taints from conditions, NoExecute eviction delays, PDB arithmetic, pod GC
selection, namespace conditions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from minik3s.controllers.common import min_toleration_seconds, toleration_tolerates
from minik3s.controllers.disruption import (
    SyncFailed,
    build_disrupted,
    count_healthy,
    desired_and_expected,
    pdb_status,
)
from minik3s.controllers.namespace import crd_resource
from minik3s.controllers.node_lifecycle import mark_unknown, reconcile_taints
from minik3s.controllers.podgc import terminated_to_delete
from minik3s.controllers.taint_eviction import eviction_delay

UNREACH = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"


def node(ready="True", *, unschedulable=False, taints=None, **conds):
    cs = [{"type": "Ready", "status": ready}] + [{"type": k, "status": v} for k, v in conds.items()]
    return {"metadata": {"name": "n1"}, "spec": {"unschedulable": unschedulable, "taints": taints or []},
            "status": {"conditions": cs}}


def keys(taints):
    return sorted(f"{t['key']}:{t['effect']}" for t in taints)


@pytest.mark.parametrize(("n", "want"), [
    pytest.param(node("True"), None, id="healthy-node-untouched"),
    pytest.param(node("Unknown"), [f"{UNREACH}:NoExecute", f"{UNREACH}:NoSchedule"], id="unknown-is-unreachable"),
    pytest.param(node("False"), [f"{NOT_READY}:NoExecute", f"{NOT_READY}:NoSchedule"], id="false-is-not-ready"),
    pytest.param(node("True", unschedulable=True), ["node.kubernetes.io/unschedulable:NoSchedule"], id="cordoned"),
    pytest.param(node("True", MemoryPressure="True", DiskPressure="True", PIDPressure="False",
                      NetworkUnavailable="True"),
                 ["node.kubernetes.io/disk-pressure:NoSchedule", "node.kubernetes.io/memory-pressure:NoSchedule",
                  "node.kubernetes.io/network-unavailable:NoSchedule"], id="pressure-conditions"),
    pytest.param(node("True", taints=[{"key": UNREACH, "effect": "NoExecute"}, {"key": "custom", "effect": "NoSchedule"}]),
                 ["custom:NoSchedule"], id="recovered-node-loses-managed-taints-keeps-custom"),
    pytest.param(node("False", taints=[{"key": UNREACH, "effect": "NoExecute", "timeAdded": "x"},
                                        {"key": UNREACH, "effect": "NoSchedule"}]),
                 [f"{NOT_READY}:NoExecute", f"{NOT_READY}:NoSchedule"], id="unknown-to-false-swaps-taints"),
])
def test_reconcile_taints(n, want):
    got = reconcile_taints(n, now="t")
    assert (got if got is None else keys(got)) == want


def test_noexecute_taint_carries_time_added():
    (ne,) = [t for t in reconcile_taints(node("Unknown"), now="2026-01-01T00:00:00Z") if t["effect"] == "NoExecute"]
    assert ne["timeAdded"] == "2026-01-01T00:00:00Z"


def test_mark_unknown_sets_upstream_reason_and_message():
    n = node("True", MemoryPressure="False")
    assert mark_unknown(n, now="t1")
    by = {c["type"]: c for c in n["status"]["conditions"]}
    assert (by["Ready"]["status"], by["Ready"]["reason"], by["Ready"]["message"]) == (
        "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
    assert by["DiskPressure"]["reason"] == "NodeStatusNeverUpdated"
    assert not mark_unknown(n, now="t2")


def tol(key=None, op="Exists", effect="NoExecute", seconds=None, value=None):
    t = {"operator": op}
    if key:
        t["key"] = key
    if effect:
        t["effect"] = effect
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    if value is not None:
        t["value"] = value
    return t


TAINT = {"key": UNREACH, "effect": "NoExecute"}


@pytest.mark.parametrize(("taints", "tols", "want"), [
    pytest.param([], [], None, id="no-taints-no-eviction"),
    pytest.param([TAINT], [], 0.0, id="untolerated-taint-evicts-now"),
    pytest.param([TAINT], [tol(UNREACH, seconds=300)], 300.0, id="default-toleration-300s"),
    pytest.param([TAINT], [tol(UNREACH)], None, id="toleration-without-seconds-forever"),
    pytest.param([TAINT], [tol(UNREACH, seconds=-1)], 0.0, id="negative-seconds-evicts-now"),
    pytest.param([TAINT, {"key": NOT_READY, "effect": "NoExecute"}],
                 [tol(UNREACH, seconds=300), tol(NOT_READY, seconds=30)], 30.0, id="minimum-of-used-tolerations"),
    pytest.param([TAINT, {"key": "other", "effect": "NoExecute"}], [tol(UNREACH, seconds=300)], 0.0,
                 id="one-untolerated-taint-evicts-now"),
    pytest.param([TAINT], [tol(None, "Exists", "")], None, id="wildcard-toleration"),
])
def test_eviction_delay(taints, tols, want):
    assert eviction_delay(taints, tols) == want


@pytest.mark.parametrize(("t", "want"), [
    pytest.param(tol("k", "Equal", "NoExecute", value="v"), True, id="equal-match"),
    pytest.param(tol("k", "Equal", "NoExecute", value="w"), False, id="equal-value-mismatch"),
    pytest.param(tol("k", "Exists", "NoSchedule"), False, id="effect-mismatch"),
    pytest.param(tol("k", "Exists", ""), True, id="empty-effect-matches-all"),
    pytest.param(tol(None, "Equal", ""), False, id="empty-key-needs-exists"),
])
def test_toleration_tolerates(t, want):
    assert toleration_tolerates(t, {"key": "k", "value": "v", "effect": "NoExecute"}) is want


def test_min_toleration_seconds_examples():
    assert min_toleration_seconds([]) == 0
    assert min_toleration_seconds([{"tolerationSeconds": 300}, {}]) == 300
    assert min_toleration_seconds([{}]) == -1


def pdb(**spec):
    return {"metadata": {"name": "p", "generation": 2}, "spec": spec, "status": {}}


PODS3 = [{"metadata": {"name": f"p{i}"}} for i in range(3)]


@pytest.mark.parametrize(("spec", "scale", "want"), [
    pytest.param({"minAvailable": 2}, None, (3, 2), id="min-available-int-uses-pod-count"),
    pytest.param({"minAvailable": "50%"}, 5, (5, 3), id="min-available-percent-rounds-up"),
    pytest.param({"maxUnavailable": 1}, 5, (5, 4), id="max-unavailable-int"),
    pytest.param({"maxUnavailable": "50%"}, 5, (5, 2), id="max-unavailable-percent-rounds-up"),
    pytest.param({"maxUnavailable": 9}, 5, (5, 0), id="desired-never-negative"),
])
def test_desired_and_expected(spec, scale, want):
    assert desired_and_expected(pdb(**spec), PODS3, scale) == want


def test_desired_and_expected_needs_scale_for_percentages():
    with pytest.raises(SyncFailed):
        desired_and_expected(pdb(minAvailable="50%"), PODS3, None)


NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def rpod(name, *, ready=True, deleting=False):
    p = {"metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}
    if deleting:
        p["metadata"]["deletionTimestamp"] = "2026-01-01T12:00:00Z"
    return p


def test_healthy_excludes_unready_terminating_and_recently_disrupted():
    pods = [rpod("a"), rpod("b", ready=False), rpod("c", deleting=True), rpod("d"), rpod("e")]
    budget = pdb(minAvailable=1)
    budget["status"]["disruptedPods"] = {"d": "2026-01-01T11:59:00Z", "e": "2026-01-01T11:00:00Z",
                                         "c": "2026-01-01T11:59:30Z"}
    disrupted, recheck = build_disrupted(budget, pods, NOW)
    assert disrupted == {"d": "2026-01-01T11:59:00Z"}  # e expired, c is terminating
    assert recheck == datetime(2026, 1, 1, 12, 1, 0, tzinfo=UTC)
    assert count_healthy(pods, disrupted, NOW) == 2  # a and e


@pytest.mark.parametrize(("expected", "desired", "healthy", "allowed", "reason"), [
    pytest.param(3, 2, 3, 1, "SufficientPods", id="one-spare"),
    pytest.param(3, 2, 2, 0, "InsufficientPods", id="at-minimum"),
    pytest.param(3, 2, 1, 0, "InsufficientPods", id="below-minimum-never-negative"),
    pytest.param(0, 0, 0, 0, "InsufficientPods", id="no-expected-pods"),
])
def test_pdb_status(expected, desired, healthy, allowed, reason):
    st = pdb_status(pdb(minAvailable=desired), expected=expected, desired=desired, healthy=healthy, disrupted={},
                    now="t")
    assert st["disruptionsAllowed"] == allowed
    assert (st["currentHealthy"], st["desiredHealthy"], st["expectedPods"], st["observedGeneration"]) == (
        healthy, desired, expected, 2)
    assert st["conditions"][0]["reason"] == reason


def tpod(name, created, phase="Succeeded", reason=None):
    st = {"phase": phase}
    if reason:
        st["reason"] = reason
    return {"metadata": {"name": name, "creationTimestamp": created}, "status": st}


def test_terminated_to_delete_evicted_then_oldest():
    pods = [tpod("new", "2026-01-03T00:00:00Z"), tpod("old", "2026-01-01T00:00:00Z"),
            tpod("evicted", "2026-01-04T00:00:00Z", "Failed", "Evicted"), tpod("live", "2025-01-01T00:00:00Z", "Running")]
    assert [p["metadata"]["name"] for p in terminated_to_delete(pods, 1)] == ["evicted", "old"]
    assert terminated_to_delete(pods, 3) == []
    assert terminated_to_delete(pods, 0) == []


def test_crd_resource_only_for_namespaced_crds():
    crd = {"spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1alpha1", "served": True}, {"name": "v1", "served": True, "storage": True}]}}
    res = crd_resource(crd)
    assert (res.group, res.version, res.resource, res.kind, res.namespaced) == ("example.com", "v1", "widgets",
                                                                                "Widget", True)
    crd["spec"]["scope"] = "Cluster"
    assert crd_resource(crd) is None
