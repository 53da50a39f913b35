"""ReplicaSet pure parts: deletion ranking (upstream ActivePodsWithRanks), slow start, status."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from minik3s.controllers.replicaset import (
    calculate_status,
    pod_from_template,
    pods_to_delete,
    rank_pods_for_deletion,
    slow_start_batches,
)

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def pod(name, *, node="n1", phase="Running", ready=True, ready_since="2026-01-01T10:00:00Z",
        created="2026-01-01T09:00:00Z", restarts=0, cost=None, uid=None):
    p = {"metadata": {"name": name, "uid": uid or name, "creationTimestamp": created, "labels": {"app": "web"}},
         "spec": {"nodeName": node} if node else {},
         "status": {"phase": phase, "containerStatuses": [{"restartCount": restarts}]}}
    if ready:
        p["status"]["conditions"] = [{"type": "Ready", "status": "True", "lastTransitionTime": ready_since}]
    if cost is not None:
        p["metadata"]["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": str(cost)}
    return p


@pytest.mark.parametrize(("first", "second"), [
    pytest.param(pod("unassigned", node=None, phase="Pending", ready=False), pod("assigned"),
                 id="unassigned-before-assigned"),
    pytest.param(pod("pending", phase="Pending", ready=False), pod("running"), id="pending-before-running"),
    pytest.param(pod("unknown", phase="Unknown", ready=False), pod("running"), id="unknown-before-running"),
    pytest.param(pod("notready", ready=False), pod("ready"), id="not-ready-before-ready"),
    pytest.param(pod("cheap", cost=-10), pod("dear", cost=10), id="lower-deletion-cost-first"),
    pytest.param(pod("young-ready", ready_since="2026-01-01T11:59:00Z"), pod("old-ready", ready_since="2026-01-01T00:00:00Z"),
                 id="ready-for-less-time-first-log-buckets"),
    pytest.param(pod("restarty", restarts=5), pod("stable"), id="more-restarts-first"),
    pytest.param(pod("newer", created="2026-01-01T11:59:00Z"), pod("older", created="2026-01-01T00:00:00Z"),
                 id="newer-first"),
])
def test_deletion_order_pairs(first, second):
    assert [p["metadata"]["name"] for p in rank_pods_for_deletion([second, first], [], now=NOW)] == [
        first["metadata"]["name"], second["metadata"]["name"]]


def test_doubled_up_pods_go_first():
    a, b = pod("alone", node="n1"), pod("crowded", node="n2")
    related = [a, b, pod("sibling", node="n2")]
    assert [p["metadata"]["name"] for p in rank_pods_for_deletion([a, b], related, now=NOW)] == ["crowded", "alone"]


def test_same_log_bucket_breaks_ties_by_uid():
    a = pod("a", ready_since="2026-01-01T11:00:00Z", uid="b-uid")
    b = pod("b", ready_since="2026-01-01T11:00:01Z", uid="a-uid")
    assert [p["metadata"]["name"] for p in rank_pods_for_deletion([a, b], [], now=NOW)] == ["b", "a"]


def test_pods_to_delete_takes_all_when_diff_covers_them():
    ps = [pod("a"), pod("b")]
    assert pods_to_delete(ps, [], 5, now=NOW) == ps


@pytest.mark.parametrize(("count", "want"), [
    pytest.param(0, [], id="nothing"),
    pytest.param(1, [1], id="one"),
    pytest.param(10, [1, 2, 4, 3], id="ten"),
    pytest.param(500, [1, 2, 4, 8, 16, 32, 64, 128, 245], id="burst"),
])
def test_slow_start_batches(count, want):
    assert slow_start_batches(count) == want


def test_pod_from_template_sets_generate_name_and_controller_ref():
    rs = {"metadata": {"name": "web-abc", "namespace": "ns", "uid": "u1"},
          "spec": {"template": {"metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
                                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    p = pod_from_template(rs)
    assert p["metadata"]["generateName"] == "web-abc-"
    assert p["metadata"]["labels"] == {"app": "web"} and p["metadata"]["annotations"] == {"a": "b"}
    assert p["metadata"]["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc",
                                                 "uid": "u1", "controller": True, "blockOwnerDeletion": True}]
    assert p["spec"] == rs["spec"]["template"]["spec"] and p["spec"] is not rs["spec"]["template"]["spec"]


def test_calculate_status_counts_availability_with_min_ready_seconds():
    rs = {"metadata": {"generation": 4}, "spec": {"replicas": 3, "minReadySeconds": 60,
                                                  "template": {"metadata": {"labels": {"app": "web"}}}}}
    pods = [pod("a", ready_since="2026-01-01T11:00:00Z"), pod("b", ready_since="2026-01-01T11:59:30Z"),
            pod("c", ready=False)]
    pods[2]["metadata"]["labels"] = {}
    st = calculate_status(rs, pods, now=NOW)
    assert st == {"replicas": 3, "fullyLabeledReplicas": 2, "readyReplicas": 2, "availableReplicas": 1,
                  "observedGeneration": 4}


def test_calculate_status_omits_zero_counts_but_keeps_replicas():
    rs = {"metadata": {"generation": 1}, "spec": {"replicas": 0}}
    assert calculate_status(rs, [], now=NOW) == {"replicas": 0, "observedGeneration": 1}


def test_available_only_strictly_after_min_ready_seconds():
    """IsPodAvailable: lastTransitionTime + minReadySeconds must lie *before* now; a pod Ready for
    exactly minReadySeconds is not available yet."""
    rs = {"metadata": {"generation": 1}, "spec": {"replicas": 2, "minReadySeconds": 60,
                                                  "template": {"metadata": {"labels": {"app": "web"}}}}}
    pods = [pod("exact", ready_since="2026-01-01T11:59:00Z"), pod("over", ready_since="2026-01-01T11:58:59Z")]
    st = calculate_status(rs, pods, now=NOW)
    assert st["readyReplicas"] == 2 and st["availableReplicas"] == 1


def test_fully_labeled_needs_every_template_label_with_its_value():
    rs = {"metadata": {"generation": 1}, "spec": {"replicas": 3, "template": {"metadata": {
        "labels": {"app": "web", "tier": "front"}}}}}
    pods = [pod("all"), pod("missing"), pod("other-value")]
    pods[0]["metadata"]["labels"] = {"app": "web", "tier": "front", "extra": "x"}
    pods[2]["metadata"]["labels"] = {"app": "web", "tier": "back"}
    assert calculate_status(rs, pods, now=NOW)["fullyLabeledReplicas"] == 1


def test_pod_facts_read_each_object_once_and_follow_replacement():
    from minik3s.controllers.replicaset import PodFacts

    facts = PodFacts()
    a = pod("a")
    _, active, ready, since, labels = facts.read(a)
    assert (ready, since) == (True, datetime(2026, 1, 1, 10, 0, tzinfo=UTC)) and active and labels == {"app": "web"}
    a["status"]["conditions"][0]["status"] = "False"  # (never done to informer objects) proves the cache is used
    a["status"]["phase"] = "Failed"
    assert facts.read(a)[2] is True and facts.read(a)[1]
    a2 = pod("a", ready=False, phase="Succeeded")  # the informer's replacement object is read afresh
    assert facts.read_all([a2])[0][1:4] == (False, False, None)
    facts.forget(a)
    facts.forget(a2)
    assert len(facts) == 0
