"""Upstream's ReplicaSet controller tables, ported: the table-shaped parts of
pkg/controller/replicaset/replica_set_test.go (TestSyncReplicaSetDormancy, TestRelatedPodsLookup,
TestSlowStartBatch, TestGetPodsToDelete) and pkg/controller/controller_utils_test.go's ActivePods
ranking (TestSortingActivePods, TestSortingActivePodsWithRanks) (Kubernetes v1.33 line; the stored
copies read were the apps/v1 + ktesting files).

How they are driven here:
  * the ranking tables call the module's comparator (`_pod_less`, upstream's
    ActivePodsWithRanks.Less with explicit ranks), `rank_pods_for_deletion` (ActivePods: no
    `now`, no related pods) and `pods_to_delete` (getPodsToDelete) with upstream's pod shapes.
  * TestSlowStartBatch runs a real `ReplicaSetController.sync` against the in-process API: the
    "call limit" is a ResourceQuota on pods (the API's quota admission refuses the creates past
    it), the calls are the recorded pod creates, the successes the pods stored.
  * TestSyncReplicaSetDormancy and TestRelatedPodsLookup run the controller on the real API
    (`real_api`, FakeClock); dormancy is an outstanding creation expectation (upstream's fake pod
    control never lets the informer see its pods; here the informer does, so the window is made
    by expecting a creation, as the first sync would before its pod is observed).

Not ported: the inequality case that turns the PodDeletionCost gate off (the gate cannot be
turned off here); the rest of replica_set_test.go drives Go plumbing (fake pod control, watch
reactors, expectations internals) without a table.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from minik3s.api.errors import InternalError
from minik3s.api.resources import PODS, REPLICASETS, ResourceInfo, builtin_resources
from minik3s.controllers.replicaset import (
    POD_DELETION_COST,
    ReplicaSetController,
    _pod_less,
    pods_to_delete,
    rank_pods_for_deletion,
)
from minik3s.utils.clock import rfc3339

NS = "default"
NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
RESOURCEQUOTAS: ResourceInfo = next(r for r in builtin_resources() if r.qualified == "resourcequotas")


def names(pods: list[dict[str, Any]]) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


# ------------------------------------------------------------------------------------------------
# controller_utils_test.go: TestSortingActivePods
# ------------------------------------------------------------------------------------------------


def _p(name: str, node: str, phase: str, *, ready: bool | None = None, ready_since: datetime | None = None,
       restarts: list[int] | None = None, created: datetime | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if ready is not None:
        cond: dict[str, Any] = {"type": "Ready", "status": "True" if ready else "False"}
        if ready_since is not None:
            cond["lastTransitionTime"] = rfc3339(ready_since)
        status["conditions"] = [cond]
    if restarts is not None:
        status["containerStatuses"] = [{"restartCount": r} for r in restarts]
    m: dict[str, Any] = {"name": name}
    if created is not None:
        m["creationTimestamp"] = rfc3339(created)
    return {"metadata": m, "spec": {"nodeName": node} if node else {}, "status": status}


def test_sorting_active_pods() -> None:
    """Sorts by active pod (ActivePods: no ranks, no logarithmic buckets), from 20 shuffles."""
    then = NOW - timedelta(days=31)
    pods = [
        _p("unscheduled", "", "Pending"),
        _p("scheduledButPending", "bar", "Pending"),
        _p("unknownPhase", "foo", "Unknown"),
        _p("runningButNotReady", "foo", "Running"),
        _p("runningNoLastTransitionTime", "foo", "Running", ready=True, restarts=[3, 0]),
        _p("runningWithLastTransitionTime", "foo", "Running", ready=True, ready_since=NOW, restarts=[3, 0]),
        _p("runningLongerTime", "foo", "Running", ready=True, ready_since=then, restarts=[3, 0]),
        _p("lowerContainerRestartCount", "foo", "Running", ready=True, ready_since=then, restarts=[2, 1],
           created=NOW),
        _p("oldest", "foo", "Running", ready=True, ready_since=then, restarts=[2, 1], created=then),
    ]
    want = names(pods)
    rng = random.Random(0)
    for _ in range(20):
        shuffled = pods[:]
        rng.shuffle(shuffled)
        assert names(rank_pods_for_deletion(shuffled, [])) == want


# ------------------------------------------------------------------------------------------------
# controller_utils_test.go: TestSortingActivePodsWithRanks
# ------------------------------------------------------------------------------------------------

ZERO = None


def _rp(name: str, node: str, phase: str, ready: bool, restarts: int, ready_since: datetime | None,
        created: datetime | None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if ready:
        cond: dict[str, Any] = {"type": "Ready", "status": "True"}
        if ready_since is not None:
            cond["lastTransitionTime"] = rfc3339(ready_since)
        status["conditions"] = [cond]
        status["containerStatuses"] = [{"restartCount": restarts}]
    m: dict[str, Any] = {"name": name}
    if created is not None:
        m["creationTimestamp"] = rfc3339(created)
    if annotations:
        m["annotations"] = annotations
    return {"metadata": m, "spec": {"nodeName": node} if node else {}, "status": status}


THEN_1M = NOW.replace(month=12, year=NOW.year - 1) if NOW.month == 1 else NOW.replace(month=NOW.month - 1)
THEN_2H = NOW - timedelta(hours=2)
THEN_5H = NOW - timedelta(hours=5)
THEN_8H = NOW - timedelta(hours=8)

RANK_PODS = {
    "unscheduled": _rp("unscheduled", "", "Pending", False, 0, ZERO, ZERO),
    "pending": _rp("pending", "node", "Pending", False, 0, ZERO, ZERO),
    "unknown-phase": _rp("unknown-phase", "node", "Unknown", False, 0, ZERO, ZERO),
    "not-ready": _rp("not-ready", "node", "Running", False, 0, ZERO, ZERO),
    "ready-no-last-transition-time": _rp("ready-no-last-transition-time", "node", "Running", True, 0, ZERO, ZERO),
    "ready-now": _rp("ready-now", "node", "Running", True, 0, NOW, NOW),
    "ready-then": _rp("ready-then", "node", "Running", True, 0, THEN_1M, THEN_1M),
    "ready-high-restarts": _rp("ready-high-restarts", "node", "Running", True, 9001, NOW, NOW),
    "ready-now-created-then": _rp("ready-now-created-then", "node", "Running", True, 0, NOW, THEN_1M),
    "low-deletion-cost": _rp("low-deletion-cost", "node", "Running", True, 0, NOW, THEN_1M,
                             {POD_DELETION_COST: "10"}),
    "high-deletion-cost": _rp("high-deletion-cost", "node", "Running", True, 0, NOW, THEN_1M,
                              {POD_DELETION_COST: "100"}),
    "unscheduled-5-hours": _rp("unscheduled-5-hours", "", "Pending", False, 0, THEN_5H, THEN_5H),
    "unscheduled-10-hours": _rp("unscheduled-10-hours", "", "Pending", False, 0, THEN_8H, THEN_8H),
    "ready-2-hours": _rp("ready-2-hours", "", "Running", True, 0, THEN_2H, THEN_1M),
    "ready-5-hours": _rp("ready-5-hours", "", "Running", True, 0, THEN_5H, THEN_1M),
    "ready-10-hours": _rp("ready-10-hours", "", "Running", True, 0, THEN_8H, THEN_1M),
}

EQUALITY = [
    ("unscheduled", None), ("pending", None), ("unknown-phase", None), ("not-ready", None),
    ("ready-now-created-then", None), ("ready-now", None), ("ready-then", None), ("ready-high-restarts", None),
    ("ready-now-created-then", None), ("unscheduled-5-hours", "unscheduled-10-hours"),
    ("ready-5-hours", "ready-10-hours"),
]


@pytest.mark.parametrize(("p1", "p2"), [pytest.param(a, b, id=f"Equality tests {i}") for i, (a, b) in enumerate(EQUALITY)])
def test_sorting_active_pods_with_ranks_equality(p1: str, p2: str | None) -> None:
    a, b = RANK_PODS[p1], RANK_PODS[p2 or p1]
    assert not _pod_less(a, 1, b, 1, NOW)
    assert not _pod_less(b, 1, a, 1, NOW)


INEQUALITY = [
    (("unscheduled", 1), ("pending", 2)),
    (("unscheduled", 2), ("pending", 1)),
    (("pending", 1), ("unknown-phase", 2)),
    (("unknown-phase", 1), ("not-ready", 2)),
    (("not-ready", 1), ("ready-no-last-transition-time", 1)),
    (("ready-no-last-transition-time", 1), ("ready-now", 1)),
    (("ready-now", 2), ("ready-no-last-transition-time", 1)),
    (("ready-now", 1), ("ready-then", 1)),
    (("ready-now", 2), ("ready-then", 1)),
    (("ready-high-restarts", 1), ("ready-now", 1)),
    (("ready-now", 2), ("ready-high-restarts", 1)),
    (("ready-now", 1), ("ready-now-created-then", 1)),
    (("ready-now-created-then", 2), ("ready-now", 1)),
    (("low-deletion-cost", 2), ("high-deletion-cost", 1)),
    None,  # 14: high-deletion-cost(2) < low-deletion-cost(1) with the PodDeletionCost gate off
    (("ready-2-hours", 1), ("ready-5-hours", 1)),
]


@pytest.mark.parametrize(("lesser", "greater"), [
    pytest.param(*(case or (("", 0), ("", 0))), id=f"Inequality tests {i}",
                 marks=[pytest.mark.skip(reason="the PodDeletionCost gate cannot be turned off")] if case is None else [])
    for i, case in enumerate(INEQUALITY)])
def test_sorting_active_pods_with_ranks_inequality(lesser: tuple[str, int], greater: tuple[str, int]) -> None:
    a, ra = RANK_PODS[lesser[0]], lesser[1]
    b, rb = RANK_PODS[greater[0]], greater[1]
    assert _pod_less(a, ra, b, rb, NOW)
    assert not _pod_less(b, rb, a, ra, NOW)


def test_restarts_of_sidecars_break_a_tie_of_regular_restarts() -> None:
    """compareMaxContainerRestarts (v1.33's ActivePodsWithRanks.Less, step 7): equal regular
    restarts, then the restartPolicy=Always init containers' restarts decide."""
    def pod(name: str, sidecar_restarts: int) -> dict[str, Any]:
        p = _rp(name, "node", "Running", True, 1, NOW, NOW)
        p["spec"]["initContainers"] = [{"name": "side", "restartPolicy": "Always"}, {"name": "init"}]
        p["status"]["initContainerStatuses"] = [{"name": "side", "restartCount": sidecar_restarts},
                                                {"name": "init", "restartCount": 50}]
        return p
    assert _pod_less(pod("more", 3), 1, pod("fewer", 1), 1, NOW)
    assert not _pod_less(pod("fewer", 1), 1, pod("more", 3), 1, NOW)


# ------------------------------------------------------------------------------------------------
# replica_set_test.go: TestGetPodsToDelete
# ------------------------------------------------------------------------------------------------


def _dp(name: str, node: str, phase: str, ready: bool | None) -> dict[str, Any]:
    """newPod(name, rs, phase, nil, true) with the node and Ready condition upstream sets."""
    status: dict[str, Any] = {"phase": phase}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    spec = {"nodeName": node} if node else {}
    return {"metadata": {"name": name, "uid": name, "namespace": NS, "labels": {"name": "foo"}}, "spec": spec,
            "status": status}


UNSCHEDULED_PENDING = _dp("unscheduled-pending-pod", "", "Pending", None)
SCHEDULED_PENDING = _dp("scheduled-pending-pod", "fake-node", "Pending", None)
RUNNING_NOT_READY = _dp("scheduled-running-not-ready-pod", "fake-node", "Running", False)
READY_NODE_1 = _dp("scheduled-running-ready-pod-on-node-1", "fake-node-1", "Running", True)
READY_NODE_2 = _dp("scheduled-running-ready-pod-on-node-2", "fake-node-2", "Running", True)
_VARIOUS = [READY_NODE_1, READY_NODE_1, READY_NODE_2, RUNNING_NOT_READY, SCHEDULED_PENDING, UNSCHEDULED_PENDING]


@pytest.mark.parametrize(("pods", "related", "diff", "expected"), [
    pytest.param([], None, 0, [], id="len(pods) = 0 (i.e., diff = 0 too)"),
    pytest.param([RUNNING_NOT_READY, READY_NODE_1], None, 2, [RUNNING_NOT_READY, READY_NODE_1], id="diff = len(pods)"),
    pytest.param([READY_NODE_1, RUNNING_NOT_READY], None, 1, [RUNNING_NOT_READY], id="diff < len(pods)"),
    pytest.param(_VARIOUS, None, 6, _VARIOUS, id="various pod phases and conditions, diff = len(pods)"),
    pytest.param(_VARIOUS, [], 6, _VARIOUS,
                 id="various pod phases and conditions, diff = len(pods), relatedPods empty"),
    pytest.param([SCHEDULED_PENDING, UNSCHEDULED_PENDING], None, 1, [UNSCHEDULED_PENDING],
                 id="scheduled vs unscheduled, diff < len(pods)"),
    pytest.param([READY_NODE_1, RUNNING_NOT_READY, RUNNING_NOT_READY], None, 2, [RUNNING_NOT_READY, RUNNING_NOT_READY],
                 id="ready vs not-ready, diff < len(pods)"),
    pytest.param([READY_NODE_1, READY_NODE_2], [READY_NODE_1, READY_NODE_2, READY_NODE_2], 1, [READY_NODE_2],
                 id="ready and colocated with another ready pod vs not colocated, diff < len(pods)"),
    pytest.param([SCHEDULED_PENDING, RUNNING_NOT_READY], None, 1, [SCHEDULED_PENDING],
                 id="pending vs running, diff < len(pods)"),
    pytest.param([READY_NODE_1, READY_NODE_2, RUNNING_NOT_READY, SCHEDULED_PENDING, UNSCHEDULED_PENDING], None, 3,
                 [UNSCHEDULED_PENDING, SCHEDULED_PENDING, RUNNING_NOT_READY],
                 id="various pod phases and conditions, diff < len(pods)"),
])
def test_get_pods_to_delete(pods: list[dict[str, Any]], related: list[dict[str, Any]] | None, diff: int,
                            expected: list[dict[str, Any]]) -> None:
    got = pods_to_delete(pods, pods if related is None else related, diff, now=NOW)
    assert names(got) == names(expected)


# ------------------------------------------------------------------------------------------------
# controller-level cases on the real API
# ------------------------------------------------------------------------------------------------


def rs_obj(name: str, replicas: int, labels: dict[str, str], *, owner_uid: str | None = None,
           finalizers: list[str] | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "namespace": NS}
    if owner_uid is not None:
        m["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": f"d-{owner_uid}",
                                 "uid": owner_uid, "controller": True}]
    if finalizers:
        m["finalizers"] = finalizers
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": m,
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "c", "image": "foo/bar"}]}}}}


async def owned_pod(c: Any, name: str, rs: dict[str, Any], *, running: bool = True) -> dict[str, Any]:
    m = rs["metadata"]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": NS, "labels": dict(rs["spec"]["selector"]["matchLabels"]),
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": m["name"],
                                             "uid": m["uid"], "controller": True}]},
           "spec": {"containers": [{"name": "c", "image": "foo/bar"}]}}
    created = await c.create(PODS, pod, NS)
    if running:
        created["status"] = {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": rfc3339(c.clock.now())}]}
        created = await c.update_status(PODS, created)
    return dict(created)


def pod_creates(c: Any) -> list[tuple[Any, ...]]:
    return [x for x in c.calls if x[0] == "create" and x[1] == "pods"]


@pytest.mark.parametrize(("count", "call_limit", "successes", "calls"), [
    pytest.param(10, 0, 0, 1, id="callLimit = 0 (all fail)"),
    pytest.param(10, 10, 10, 10, id="callLimit = count (all succeed)"),
    pytest.param(10, 5, 5, 7, id="callLimit < count (some succeed)"),
])
async def test_slow_start_batch(real_api: Any, count: int, call_limit: int, successes: int, calls: int) -> None:
    """Batches 1, 2, 4, ... stop after the first batch with a failure: 5 allowed of 10 -> batches
    1 + 2 + 4 = 7 calls, 5 pods."""
    c = real_api
    quota = await c.create(RESOURCEQUOTAS, {"apiVersion": "v1", "kind": "ResourceQuota",
                                            "metadata": {"name": "pods", "namespace": NS},
                                            "spec": {"hard": {"pods": str(call_limit)}}}, NS)
    quota["status"] = {"hard": {"pods": str(call_limit)}, "used": {"pods": "0"}}
    await c.update_status(RESOURCEQUOTAS, quota)
    await c.create(REPLICASETS, rs_obj("foobar", count, {"foo": "bar"}), NS)
    ctl = ReplicaSetController(c, c, clock=c.clock)
    c.spawn(ctl.recorder.run(), "rs-events")
    await c.settle()
    c.calls.clear()
    await ctl.sync(f"{NS}/foobar")
    assert len(pod_creates(c)) == calls
    await c.settle()
    assert len(c.objects(PODS)) == successes


async def test_sync_replica_set_dormancy(real_api: Any) -> None:
    c = real_api
    rs = await c.create(REPLICASETS, rs_obj("foobar", 2, {"foo": "bar"}), NS)
    await owned_pod(c, "pod0", rs)
    ctl = ReplicaSetController(c, c, clock=c.clock)
    c.spawn(ctl.recorder.run(), "rs-events")
    key = f"{NS}/foobar"
    await c.settle()

    # creates a replica and sets expectations
    c.calls.clear()
    await ctl.sync(key)
    assert len(pod_creates(c)) == 1
    await c.settle()
    created = next(p for p in c.objects(PODS).values() if p["metadata"]["name"] != "pod0")
    await c.delete(PODS, created["metadata"]["name"], NS, grace_period_seconds=0)
    await c.settle()

    # an outstanding creation expectation prevents replicas but not a status update
    ctl.expectations.expect_creations(key, 1)
    c.calls.clear()
    await ctl.sync(key)
    assert pod_creates(c) == []

    # lowering expectations leads to a sync that creates a replica; the create fails
    ctl.expectations.creation_observed(key)
    c.fail_next["create"] = [InternalError("fake Error")]
    c.calls.clear()
    await ctl.sync(key)
    assert c.fail_next["create"] == []  # the one create was attempted (and refused)

    # no lowering of expectations needed: the failed create was not expected to be observed
    c.calls.clear()
    await ctl.sync(key)
    assert len(pod_creates(c)) == 1


RELATED_CASES = [
    ("expect to get a pod even if its owning ReplicaSet is pending deletion",
     ["foo3", "bar1"], "foo3", {"pod": "foo3"}, ["pod"]),
    ("expect to get only the ReplicaSet's own pods if there is no related ReplicaSet",
     ["foo1", "bar1"], "foo1", {"pod1": "foo1", "pod2": "foo1", "pod4": "bar1"}, ["pod1", "pod2"]),
    ("expect to get own pods as well as any related ReplicaSet's but not an unrelated ReplicaSet's",
     ["foo1", "foo2", "bar1"], "foo1", {"pod1": "foo1", "pod2": "foo1", "pod3": "foo2", "pod4": "bar1"},
     ["pod1", "pod2", "pod3"]),
]
# name -> (selector value, controller uid, pending deletion)
_RELATED_RS = {"foo1": ("bar", "123", False), "foo2": ("baz", "123", False), "bar1": ("quux", "456", False),
               "foo3": ("xyzzy", "789", True)}


@pytest.mark.parametrize(("rses", "target", "pods", "expected"), [pytest.param(*c[1:], id=c[0]) for c in RELATED_CASES])
async def test_related_pods_lookup(real_api: Any, rses: list[str], target: str, pods: dict[str, str],
                                   expected: list[str]) -> None:
    """getIndirectlyRelatedPods: the pods of the ReplicaSet and of every ReplicaSet with the same
    controller."""
    c = real_api
    stored: dict[str, dict[str, Any]] = {}
    for name in rses:
        value, owner, deleting = _RELATED_RS[name]
        stored[name] = await c.create(REPLICASETS, rs_obj(name, 1, {"foo": value}, owner_uid=owner,
                                                          finalizers=["test.minik3s.io/hold"] if deleting else None), NS)
        if deleting:
            await c.delete(REPLICASETS, name, NS)
            stored[name] = c.obj(REPLICASETS, name, NS)
    for pod, owner_rs in pods.items():
        await owned_pod(c, pod, stored[owner_rs])
    ctl = ReplicaSetController(c, c, clock=c.clock)
    await c.settle()
    got = sorted(p["metadata"]["name"] for p in ctl._related_pods(stored[target]))
    assert got == sorted(expected)
