"""Upstream's disruption controller tables, ported: pkg/controller/disruption/disruption_test.go
(Kubernetes v1.33 line; the stored copy read was the policy/v1 + ktesting file).

How they are driven here: a `DisruptionController` on the real in-process API (`real_api`:
ApiCore + informers on a FakeClock). Pods, PDBs and the workloads are stored through the API
(names without upstream's spaces, which the API refuses; workloads get the template the API
requires, none of their controllers runs), `sync(key)` is called as upstream calls `dc.sync`,
and the PDB's status is read back from the API (upstream reads what its fake updater got).
Events are read from the recorder's queue (upstream reads its FakeRecorder's channel).

Not ported:
  * TestScaleResource, TestScaleFinderNoResource: a custom resource's scale subresource found
    through discovery; the finders here know the built-in workloads only (a pod controlled by
    anything else fails the sync, as upstream's scale finder does for a kind it cannot map).
  * TestInvalidSelectors: the API's validation refuses both selectors, so such a PDB cannot be
    stored (the controller's fail-safe path is covered by TestUnsupportedControllerPod).
  * TestMultipleControllers' second controller: a pod with two controller references is refused
    by the API's validation (and upstream's assertion for it is commented out).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from minik3s.api.resources import (
    DEPLOYMENTS,
    PODDISRUPTIONBUDGETS,
    PODS,
    REPLICASETS,
    REPLICATIONCONTROLLERS,
    STATEFULSETS,
)
from minik3s.controllers.disruption import DisruptionController, go_label_selector
from minik3s.utils.clock import rfc3339

NS = "default"
KEY = f"{NS}/foobar"
FOO_BAR = {"foo": "bar"}
HOLD = "test.minik3s.io/hold"


# ------------------------------------------------------------------------------------------------
# fixtures
# ------------------------------------------------------------------------------------------------


class Env:
    def __init__(self, c: Any) -> None:
        self.c = c
        self.ctl = DisruptionController(c, c, clock=c.clock)

    async def sync(self, key: str = KEY) -> None:
        await self.c.settle()
        await self.ctl.sync(key)
        await self.c.settle()

    def pdb(self) -> dict[str, Any]:
        got = self.c.obj(PODDISRUPTIONBUDGETS, "foobar", NS)
        assert got is not None
        return dict(got)

    def verify(self, allowed: int, healthy: int, desired: int, expected: int,
               disrupted: dict[str, str] | None = None) -> None:
        """VerifyPdbStatus: the counts, the disrupted pods (empty = none), observedGeneration at
        the generation, and DisruptionAllowed True exactly when disruptions are allowed."""
        pdb = self.pdb()
        st = pdb.get("status") or {}
        got = (st.get("disruptionsAllowed", 0), st.get("currentHealthy", 0), st.get("desiredHealthy", 0),
               st.get("expectedPods", 0), st.get("disruptedPods") or {}, st.get("observedGeneration", 0))
        assert got == (allowed, healthy, desired, expected, disrupted or {}, pdb["metadata"]["generation"])
        cond = next(x for x in st.get("conditions") or [] if x["type"] == "DisruptionAllowed")
        assert cond["status"] == ("True" if allowed > 0 else "False")

    def allowed(self) -> int:
        return int((self.pdb().get("status") or {}).get("disruptionsAllowed", 0))

    def events(self) -> list[tuple[str, str, str]]:
        """What the controller recorded since the last call (the recorder is not running)."""
        out = []
        q = self.ctl.recorder._queue
        while not q.empty():
            e = q.get_nowait()
            out.append((e.event_type, e.reason, e.message))
        return out


async def create_pdb(c: Any, *, min_available: int | str | None = None, max_unavailable: int | str | None = None,
                     selector: dict[str, Any] | None = None, status: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"matchLabels": dict(FOO_BAR)} if selector is None else selector}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    pdb = await c.create(PODDISRUPTIONBUDGETS, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                                "metadata": {"name": "foobar", "namespace": NS}, "spec": spec}, NS)
    if status is not None:
        pdb["status"] = status
        pdb = await c.update_status(PODDISRUPTIONBUDGETS, pdb)
    return dict(pdb)


def controller_ref(owner: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True}


async def create_pod(c: Any, name: str, *, labels: dict[str, str] | None = None, ready: bool = True,
                     owner: dict[str, Any] | None = None, owner_ref: dict[str, Any] | None = None,
                     deleting: bool = False) -> dict[str, Any]:
    """newPod: labels foo=bar, Ready (unless not `ready`), optionally controlled by `owner`."""
    m: dict[str, Any] = {"name": name, "namespace": NS, "labels": dict(FOO_BAR if labels is None else labels)}
    ref = owner_ref or (controller_ref(owner) if owner is not None else None)
    if ref is not None:
        m["ownerReferences"] = [ref]
    if deleting:
        m["finalizers"] = [HOLD]
    pod = await c.create(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": m,
                                "spec": {"containers": [{"name": "c", "image": "foo/bar"}]}}, NS)
    pod["status"] = {"conditions": [{"type": "Ready", "status": "True"}] if ready else []}
    pod = await c.update_status(PODS, pod)
    if deleting:
        await c.delete(PODS, name, NS)
    return dict(pod)


async def set_ready(c: Any, name: str, ready: bool) -> None:
    pod = c.obj(PODS, name, NS)
    pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}] if ready else []
    await c.update_status(PODS, pod)


def _template(labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"labels": dict(labels)}, "spec": {"containers": [{"name": "c", "image": "foo/bar"}]}}


async def create_rs(c: Any, size: int, *, name: str = "foobar", labels: dict[str, str] | None = None,
                    owner: dict[str, Any] | None = None) -> dict[str, Any]:
    labels = labels or dict(FOO_BAR)
    m: dict[str, Any] = {"name": name, "namespace": NS, "labels": dict(labels)}
    if owner is not None:
        m["ownerReferences"] = [owner]
    return dict(await c.create(REPLICASETS, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": m, "spec": {
        "replicas": size, "selector": {"matchLabels": dict(labels)}, "template": _template(labels)}}, NS))


async def create_rc(c: Any, size: int, *, name: str = "foobar", selector: dict[str, str] | None = None
                    ) -> dict[str, Any]:
    sel = selector or dict(FOO_BAR)
    return dict(await c.create(REPLICATIONCONTROLLERS, {
        "apiVersion": "v1", "kind": "ReplicationController",
        "metadata": {"name": name, "namespace": NS, "labels": dict(FOO_BAR)},
        "spec": {"replicas": size, "selector": dict(sel), "template": _template(sel)}}, NS))


async def create_ss(c: Any, size: int) -> dict[str, Any]:
    return dict(await c.create(STATEFULSETS, {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "foobar", "namespace": NS,
                                                                     "labels": dict(FOO_BAR)},
        "spec": {"replicas": size, "serviceName": "foobar", "selector": {"matchLabels": dict(FOO_BAR)},
                 "template": _template(FOO_BAR)}}, NS))


async def create_deployment(c: Any, size: int, *, labels: dict[str, str] | None = None) -> dict[str, Any]:
    labels = labels or dict(FOO_BAR)
    return dict(await c.create(DEPLOYMENTS, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "foobar", "namespace": NS,
                                                                    "labels": dict(FOO_BAR)},
        "spec": {"replicas": size, "selector": {"matchLabels": dict(labels)}, "template": _template(labels)}}, NS))


async def scale(c: Any, res: Any, name: str, replicas: int) -> None:
    obj = c.obj(res, name, NS)
    obj["spec"]["replicas"] = replicas
    await c.update(res, obj)


def reasons(events: list[tuple[str, str, str]]) -> list[str]:
    return [e[1] for e in events]


# ------------------------------------------------------------------------------------------------
# tables
# ------------------------------------------------------------------------------------------------


async def test_no_selector(real_api: Any) -> None:
    """An empty selector matches every pod of the namespace."""
    c = real_api
    await create_pdb(c, min_available=3, selector={})
    env = Env(c)
    await env.sync()
    env.verify(0, 0, 3, 0)
    await create_pod(c, "yo-yo-yo", labels={})
    await env.sync()
    env.verify(0, 1, 3, 1)


async def test_null_selector_selects_nothing(real_api: Any) -> None:
    """policy/v1: a null selector selects no pods (an empty one all, TestNoSelector)."""
    c = real_api
    pdb = await create_pdb(c, min_available=3)
    del pdb["spec"]["selector"]
    await c.update(PODDISRUPTIONBUDGETS, pdb)
    await create_pod(c, "yo-yo-yo")
    env = Env(c)
    await env.sync()
    env.verify(0, 0, 3, 0)


async def test_unavailable(real_api: Any) -> None:
    c = real_api
    await create_pdb(c, min_available=3)
    env = Env(c)
    await env.sync()
    for i in range(4):
        env.verify(0, i, 3, i)
        await create_pod(c, f"yo-yo-yo-{i}")
        await env.sync()
    env.verify(1, 4, 3, 4)
    await set_ready(c, "yo-yo-yo-0", False)  # one pod unavailable
    await env.sync()
    env.verify(0, 3, 3, 4)


async def test_integer_max_unavailable(real_api: Any) -> None:
    """An integer maxUnavailable allows no disruption for pods without a controller."""
    c = real_api
    await create_pdb(c, max_unavailable=1)
    env = Env(c)
    await env.sync()
    assert env.allowed() == 0  # no pods
    await create_pod(c, "naked")
    env.events()
    await env.sync()
    assert env.allowed() == 0
    events = env.events()
    assert "UnmanagedPods" in reasons(events)
    assert ("Warning", "UnmanagedPods",
            f"Pods selected by this PodDisruptionBudget (selector: {go_label_selector({'matchLabels': FOO_BAR})}) "
            "were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may "
            "result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the "
            "PDB to an integer value.") in events
    assert go_label_selector({"matchLabels": FOO_BAR}) == (
        "&LabelSelector{MatchLabels:map[string]string{foo: bar,},MatchExpressions:[]LabelSelectorRequirement{},}")


async def test_integer_max_unavailable_with_scaling(real_api: Any) -> None:
    c = real_api
    await create_pdb(c, max_unavailable=2)
    rs = await create_rs(c, 7)
    await create_pod(c, "pod", owner=rs)
    env = Env(c)
    await env.sync()
    env.verify(0, 1, 5, 7)
    await scale(c, REPLICASETS, "foobar", 5)
    await env.sync()
    env.verify(0, 1, 3, 5)


async def test_percentage_max_unavailable_with_scaling(real_api: Any) -> None:
    c = real_api
    await create_pdb(c, max_unavailable="30%")
    rs = await create_rs(c, 7)
    await create_pod(c, "pod", owner=rs)
    env = Env(c)
    await env.sync()
    env.verify(0, 1, 4, 7)
    await scale(c, REPLICASETS, "foobar", 3)
    await env.sync()
    env.verify(0, 1, 2, 3)


async def test_naked_pod(real_api: Any) -> None:
    """A percentage allows no disruption for a pod without a controller."""
    c = real_api
    await create_pdb(c, min_available="28%")
    env = Env(c)
    await env.sync()
    assert env.allowed() == 0
    await create_pod(c, "naked")
    env.events()
    await env.sync()
    assert env.allowed() == 0
    assert "UnmanagedPods" in reasons(env.events())


async def test_unsupported_controller_pod(real_api: Any) -> None:
    c = real_api
    await create_pdb(c, min_available="28%")
    env = Env(c)
    await env.sync()
    assert env.allowed() == 0
    await create_pod(c, "naked", owner_ref={"apiVersion": "apps.test.io/v1", "kind": "TestWorkload",
                                            "name": "fake-controller", "uid": "b7329742-8daa-493a-8881-6ca07139172b",
                                            "controller": True})
    env.events()
    await env.sync()
    assert env.allowed() == 0
    assert "CalculateExpectedPodCountFailed" in reasons(env.events())
    cond = next(x for x in env.pdb()["status"]["conditions"] if x["type"] == "DisruptionAllowed")
    assert (cond["status"], cond["reason"]) == ("False", "SyncFailed")


async def test_scale_finder_no_matching_gvk(real_api: Any) -> None:
    """A controller of a kind no finder maps fails the sync safe: DisruptionAllowed False /
    SyncFailed with the error, no disruptions allowed, the rest of the status unchanged."""
    c = real_api
    await create_pdb(c, max_unavailable=1)
    await create_pod(c, "pod", owner_ref={"apiVersion": "custom.k8s.io/v1", "kind": "customresource",
                                          "name": "foo", "uid": "11111111-2222-3333-4444-555555555555",
                                          "controller": True})
    env = Env(c)
    await env.sync()
    st = env.pdb()["status"]
    cond = next(x for x in st["conditions"] if x["type"] == "DisruptionAllowed")
    assert (cond["status"], cond["reason"]) == ("False", "SyncFailed")
    assert cond["message"] == 'no matches for kind "customresource" in version "custom.k8s.io/v1"'
    assert st.get("disruptionsAllowed", 0) == 0
    assert st.get("observedGeneration", 0) == 0  # failSafe leaves observedGeneration alone
    assert "CalculateExpectedPodCountFailed" in reasons(env.events())


@pytest.mark.parametrize("name", ["TestStatusForUnmanagedPod", "TestTotalUnmanagedPods"])
async def test_status_for_unmanaged_pod(real_api: Any, name: str) -> None:
    """Unmanaged pods are no sync error (no SyncFailed "found no controller ref"), one is
    reported as unmanaged."""
    c = real_api
    await create_pdb(c, min_available="28%")
    env = Env(c)
    await env.sync()
    assert env.allowed() == 0
    pod = await create_pod(c, "unmanaged")
    env.events()
    await env.sync()
    for cond in env.pdb()["status"].get("conditions") or []:
        assert not ("found no controller ref" in cond.get("message", "") and cond["reason"] == "SyncFailed")
    assert "UnmanagedPods" in reasons(env.events())
    assert env.ctl.expected_scale([pod])[1] == ["unmanaged"]


async def test_replica_set(real_api: Any) -> None:
    """A ReplicaSet's scale counts even without a Deployment."""
    c = real_api
    await create_pdb(c, min_available="20%")
    rs = await create_rs(c, 10)
    await create_pod(c, "pod", owner=rs)
    env = Env(c)
    await env.sync()
    env.verify(0, 1, 2, 10)


async def test_multiple_controllers(real_api: Any) -> None:
    c = real_api
    await create_pdb(c, min_available="1%")
    for i in range(2):
        await create_pod(c, f"pod-{i}")
    env = Env(c)
    await env.sync()
    assert env.allowed() == 0  # no controllers yet
    rc = await create_rc(c, 1, name="rc-1")
    for i in range(2):
        pod = c.obj(PODS, f"pod-{i}", NS)
        pod["metadata"]["ownerReferences"] = [controller_ref(rc)]
        await c.update(PODS, pod)
    await env.sync()
    assert env.allowed() == 1  # one RC and 200% > 1% healthy


@pytest.mark.parametrize("kind", ["ReplicationController", "StatefulSet"])
async def test_replication_controller_and_stateful_set(real_api: Any, kind: str) -> None:
    """TestReplicationController / TestStatefulSetController: 34% of 3 rounds up to 2; the
    budget matches foo=bar, the controller's pods {foo=bar, baz=quux}; a rogue foo=bar pod has
    no controller (counted healthy, left out of the scale)."""
    c = real_api
    labels = {"foo": "bar", "baz": "quux"}
    await create_pdb(c, min_available="34%")
    owner = await (create_rc(c, 3, selector=labels) if kind == "ReplicationController" else create_ss(c, 3))
    env = Env(c)
    await env.sync()
    env.verify(0, 0, 0, 0)  # no pods: the PDB does not know the controller yet
    for i in range(3):
        await create_pod(c, f"foobar-{i}", labels=labels, owner=owner)
        await env.sync()
        if i < 2:
            env.verify(0, i + 1, 2, 3)
        else:
            env.verify(1, 3, 2, 3)
    if kind == "ReplicationController":
        await create_pod(c, "rogue")
        await env.sync()
        assert env.allowed() == 2


async def test_two_controllers(real_api: Any) -> None:
    c = real_api
    rc_labels = {"foo": "bar", "baz": "quux"}
    d_labels = {"foo": "bar", "baz": "quuux"}
    size, minimum_one, minimum_two = 11, 4, 7
    await create_pdb(c, min_available="28%")
    rc = await create_rc(c, size, selector=rc_labels)
    env = Env(c)
    await env.sync()
    env.verify(0, 0, 0, 0)
    pods: list[str] = []
    unavailable = size - minimum_one - 1
    for i in range(1, size + 1):
        name = f"quux-{i}"
        pods.append(name)
        await create_pod(c, name, labels=rc_labels, owner=rc, ready=i > unavailable)
        await env.sync()
        if i <= unavailable:
            env.verify(0, 0, minimum_one, size)
        elif i - unavailable <= minimum_one:
            env.verify(0, i - unavailable, minimum_one, size)
        else:
            env.verify(1, i - unavailable, minimum_one, size)

    await create_deployment(c, size, labels=d_labels)
    await env.sync()
    env.verify(1, minimum_one + 1, minimum_one, size)
    rs = await create_rs(c, size, labels=d_labels)
    await env.sync()
    env.verify(1, minimum_one + 1, minimum_one, size)

    # by the end of this loop the number of ready pods is minimumTwo + 2
    unavailable = 2 * size - (minimum_two + 2) - unavailable
    for i in range(1, size + 1):
        name = f"quuux-{i}"
        pods.append(name)
        await create_pod(c, name, labels=d_labels, owner=rs, ready=i > unavailable)
        await env.sync()
        if i <= unavailable:
            env.verify(0, minimum_one + 1, minimum_two, 2 * size)
        elif i - unavailable <= minimum_two - (minimum_one + 1):
            env.verify(0, (minimum_one + 1) + (i - unavailable), minimum_two, 2 * size)
        else:
            env.verify(i - unavailable - (minimum_two - (minimum_one + 1)), (minimum_one + 1) + (i - unavailable),
                       minimum_two, 2 * size)

    # one pod down still permits a disruption, two do not; back up, permitted again
    env.verify(2, 2 + minimum_two, minimum_two, 2 * size)
    await set_ready(c, pods[size - 1], False)
    await env.sync()
    env.verify(1, 1 + minimum_two, minimum_two, 2 * size)
    await set_ready(c, pods[size - 2], False)
    await env.sync()
    env.verify(0, minimum_two, minimum_two, 2 * size)
    await set_ready(c, pods[size - 1], True)
    await env.sync()
    env.verify(1, 1 + minimum_two, minimum_two, 2 * size)


async def test_pdb_not_exist(real_api: Any) -> None:
    c = real_api
    await create_pdb(c, min_available="67%")
    env = Env(c)
    await env.sync("notExist")  # no error


async def test_update_disrupted_pods(real_api: Any) -> None:
    c = real_api
    now = c.clock.now()
    t = {"p1": rfc3339(now),  # removed: the pod's deletion started
         "p2": rfc3339(now - timedelta(minutes=3)),  # removed: expired
         "p3": rfc3339(now - timedelta(minutes=1)),  # kept: pod untouched
         "notthere": rfc3339(now)}  # removed: the pod is gone
    await create_pdb(c, min_available=1, status={"disruptedPods": t, "disruptionsAllowed": 0, "currentHealthy": 0,
                                                 "desiredHealthy": 0, "expectedPods": 0})
    await create_pod(c, "p1", deleting=True)
    await create_pod(c, "p2")
    await create_pod(c, "p3")
    env = Env(c)
    await env.sync()
    env.verify(0, 1, 1, 3, {"p3": t["p3"]})


FINDER_CASES = [
    ("replicaset controller with apps group", "find_replica_set", "apps/v1", "ReplicaSet", "rs", 10),
    ("replicaset controller with invalid group", "find_replica_set", "invalid/v1", "ReplicaSet", "rs", None),
    ("replicationcontroller with empty group", "find_replication_controller", "/v1", "ReplicationController", "rc", 12),
    ("replicationcontroller with invalid group", "find_replication_controller", "apps/v1", "ReplicationController",
     "rc", None),
    ("statefulset controller with extensions group", "find_stateful_set", "apps/v1", "StatefulSet", "ss", 14),
    ("statefulset controller with invalid kind", "find_stateful_set", "apps/v1", "ReplicaSet", "ss", None),
]


@pytest.mark.parametrize(("finder", "api_version", "kind", "target", "expected"),
                         [pytest.param(*case[1:], id=case[0]) for case in FINDER_CASES])
async def test_basic_finder_functions(real_api: Any, finder: str, api_version: str, kind: str, target: str,
                                      expected: int | None) -> None:
    c = real_api
    objs = {"rs": await create_rs(c, 10), "rc": await create_rc(c, 12), "ss": await create_ss(c, 14)}
    env = Env(c)
    await c.settle()
    obj = objs[target]
    ref = {"apiVersion": api_version, "kind": kind, "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"]}
    got = getattr(env.ctl, finder)(ref, NS)
    if expected is None:
        assert got is None
    else:
        assert got == (obj["metadata"]["uid"], expected)


DEPLOYMENT_FINDER_CASES = [
    ("happy path", "apps/v1", "ReplicaSet", "extensions/v1", "Deployment", 10),
    ("invalid rs apiVersion", "invalid/v1", "ReplicaSet", "apps/v1", "Deployment", None),
    ("invalid rs kind", "apps/v1", "InvalidKind", "apps/v1", "Deployment", None),
    ("invalid deployment apiVersion", "extensions/v1", "ReplicaSet", "deployment/v1", "Deployment", None),
    ("invalid deployment kind", "apps/v1", "ReplicaSet", "extensions/v1", "InvalidKind", None),
]


@pytest.mark.parametrize(("rs_api_version", "rs_kind", "dep_api_version", "dep_kind", "expected"),
                         [pytest.param(*case[1:], id=case[0]) for case in DEPLOYMENT_FINDER_CASES])
async def test_deployment_finder_function(real_api: Any, rs_api_version: str, rs_kind: str, dep_api_version: str,
                                          dep_kind: str, expected: int | None) -> None:
    c = real_api
    dep = await create_deployment(c, 10)
    rs = await create_rs(c, 5, owner={"apiVersion": dep_api_version, "kind": dep_kind, "name": "foobar",
                                      "uid": dep["metadata"]["uid"], "controller": True})
    env = Env(c)
    await c.settle()
    ref = {"apiVersion": rs_api_version, "kind": rs_kind, "name": "foobar", "uid": rs["metadata"]["uid"]}
    got = env.ctl.find_deployment(ref, NS)
    if expected is None:
        assert got is None
    else:
        assert got == (dep["metadata"]["uid"], expected)


async def test_update_pdb_status_retries(real_api: Any) -> None:
    """A status write that races an eviction conflicts and is retried; the stale count is never
    written. Allowed starts at 2; (A) a pod is deleted, the sync computes 1; (B) while it writes,
    the other two pods are evicted (allowed 0); (C) the PDB must still say 0."""
    c = real_api
    await create_pdb(c, min_available=1)
    names = ["moe", "larry", "curly"]
    for n in names:
        await create_pod(c, n)
    env = Env(c)
    await env.sync()
    assert env.allowed() == 2

    real_update_status = c.update_status
    evicted = []

    async def racing_update_status(res: Any, obj: Any, **kw: Any) -> Any:
        if res is PODDISRUPTIONBUDGETS and not evicted:
            evicted.append(True)
            for n in names[1:]:  # (B) through the API's eviction subresource
                await c._client.evict(NS, n)
        return await real_update_status(res, obj, **kw)

    c.update_status = racing_update_status
    try:
        await c.delete(PODS, names[0], NS, grace_period_seconds=0)  # (A)
        await c.settle()
        await env.ctl.sync(KEY)
    finally:
        del c.update_status
    assert evicted
    assert env.allowed() == 0  # (C)


STALE_CASES = [
    # name, condition status (None: no condition), deleting, time passed, wanted conditions
    ("stale pod disruption", "True", False, 121, [("DisruptionTarget", "False")]),
    ("pod disruption in progress", "True", False, 119, [("DisruptionTarget", "True")]),
    ("pod disruption actuated", "True", True, 121, [("DisruptionTarget", "True")]),
    ("no pod disruption", None, True, 121, []),
    ("pod disruption cleared", "False", True, 121, [("DisruptionTarget", "False")]),
]


@pytest.mark.parametrize(("status", "deleting", "passed", "want"), [pytest.param(*s[1:], id=s[0]) for s in STALE_CASES])
async def test_stale_pod_disruption(real_api: Any, status: str | None, deleting: bool, passed: int,
                                    want: list[tuple[str, str]]) -> None:
    """A DisruptionTarget=True condition whose pod is not terminating 2 minutes later is set back
    to False by the running controller (the condition was set `passed` seconds ago)."""
    c = real_api
    m: dict[str, Any] = {"name": "foo", "namespace": NS}
    if deleting:
        m["finalizers"] = [HOLD]
    pod = await c.create(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": m,
                                "spec": {"containers": [{"name": "c", "image": "foo/bar"}]}}, NS)
    if status is not None:
        pod["status"] = {"conditions": [{"type": "DisruptionTarget", "status": status,
                                         "lastTransitionTime": rfc3339(c.clock.now() - timedelta(seconds=passed))}]}
        await c.update_status(PODS, pod)
    if deleting:
        await c.delete(PODS, "foo", NS)
    env = Env(c)
    c.spawn(env.ctl.run(), "disruption")

    def conditions() -> list[tuple[str, str]]:
        got = c.obj(PODS, "foo", NS)
        return [(x["type"], x["status"]) for x in (got.get("status") or {}).get("conditions") or []]

    for _ in range(50):
        await c.settle()
        if conditions() == want:
            break
    assert conditions() == want


async def test_keep_existing_pdb_condition_during_sync(real_api: Any) -> None:
    c = real_api
    await create_pdb(c, min_available=3, selector={}, status={"conditions": [{
        "type": "ExistingTestCondition", "status": "True", "message": "This is a test condition", "reason": "Test",
        "lastTransitionTime": rfc3339(c.clock.now())}]})
    env = Env(c)
    await env.sync()
    env.verify(0, 0, 3, 0)
    conds = env.pdb()["status"]["conditions"]
    assert len(conds) == 2
    assert any(x["type"] == "ExistingTestCondition" for x in conds)


async def test_no_pods_event(real_api: Any) -> None:
    """trySync: a PDB matching no pods records Normal NoPods "No matching pods found"."""
    c = real_api
    await create_pdb(c, min_available=1)
    env = Env(c)
    await env.sync()
    assert ("Normal", "NoPods", "No matching pods found") in env.events()
