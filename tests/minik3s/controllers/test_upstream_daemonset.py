"""Upstream's DaemonSet controller tables, ported: the table-shaped parts of
pkg/controller/daemon/daemon_controller_test.go, update_test.go and
util/daemonset_util_test.go (Kubernetes v1.33 line: surge updates, failed-pod backoff,
Succeeded pods deleted, orphans adopted).

How they are driven here: `DaemonSetController.sync` runs once per upstream
`expectSyncDaemonSets` against the real in-process API (`real_api`, fake clock), and the
creates, deletes and events of that pass are counted as upstream's fake pod control counts
them:
  * a create counts when it reaches the API or fails with an injected error (FakePodControl.Err
    records the template first), not when upstream's CreateLimit refuses it;
  * deleting a pod the controller did not create fails ("pod does not exist"), as upstream's
    fake refuses pods it did not create (so the manage error skips the rolling update, as
    there); pods the controller created are unscheduled and go at once, as in the fake;
  * events are the controller's own (FailedDaemonPod, SucceededDaemonPod, ...), not the pod
    control's SuccessfulCreate / SuccessfulDelete.
Pods the tests add are bound to their node; creation order and readiness times come from the
fake clock. Upstream's handler tests call the informer handlers directly and read the queue.

Not ported (reason): TestDeleteFinalStateUnknown, TestExpectationsOnRecreate,
TestDaemonSetPodCreateExpectationsError (Go cache tombstones and the expectations cache, which
this controller replaces by counting its own writes within a sync);
TestPodIsNotDeletedByDaemonsetWithEmptyLabelSelector (the API rejects an empty selector);
TestDontDoAnythingIfBeingDeletedRace (needs a cache that disagrees with the API);
TestTaintPressureNodeDaemonLaunchesPod's system-critical priority (the taints are ported, the
priority field needs the Priority admission plugin's class).
"""

from __future__ import annotations

import asyncio
import copy
import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from minik3s.api.errors import ApiError, ConflictError, ForbiddenError, InternalError
from minik3s.api.resources import CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS, ResourceInfo
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.daemonset import (
    DaemonSetController,
    create_pod_template,
    group_by_node,
    is_pod_updated,
    node_should_run,
    replace_node_name_affinity,
    should_ignore_node_update,
    target_node,
    template_generation,
    updated_desired_node_counts,
)
from minik3s.controllers.history import CONTROLLER_REVISION_HASH, claim_objects, revision_data, revision_hash
from minik3s.utils.clock import rfc3339

NS = "default"
SIMPLE_DS_LABEL = {"name": "simple-daemon", "type": "production"}
SIMPLE_DS_LABEL2 = {"name": "simple-daemon", "type": "test"}
SIMPLE_NODE_LABEL = {"color": "blue", "speed": "fast"}
SIMPLE_NODE_LABEL2 = {"color": "red", "speed": "fast"}
NO_SCHEDULE_TOLERATIONS = [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]
NO_SCHEDULE_TAINTS = [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]
NO_EXECUTE_TAINTS = [{"key": "dedicated", "value": "user1", "effect": "NoExecute"}]
ON_DELETE = {"type": "OnDelete"}
ROLLING = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}
STRATEGIES = [pytest.param(ON_DELETE, id="OnDelete"), pytest.param(ROLLING, id="RollingUpdate")]
POD_CONTROL_REASONS = {"SuccessfulCreate", "FailedCreate", "SuccessfulDelete", "FailedDelete"}


def surge(value: Any) -> dict:
    return {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": value}}


def unavailable(value: Any) -> dict:
    return {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": value}}


def new_daemonset(name: str = "foo", strategy: dict | None = None) -> dict:
    """newDaemonSet: selector and template labels simpleDaemonSetLabel, one container
    foo/bar, OnDelete, revisionHistoryLimit 2."""
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": NS},
            "spec": {"revisionHistoryLimit": 2, "updateStrategy": copy.deepcopy(strategy or ON_DELETE),
                     "selector": {"matchLabels": dict(SIMPLE_DS_LABEL)},
                     "template": {"metadata": {"labels": dict(SIMPLE_DS_LABEL)}, "spec": {
                         "containers": [{"name": "foo", "image": "foo/bar", "imagePullPolicy": "IfNotPresent",
                                         "terminationMessagePath": "/dev/termination-log"}],
                         "dnsPolicy": "Default"}}}}


def resource_pod_spec(node_name: str, memory: str, cpu: str) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "foo/bar", "resources": {
        "requests": {"memory": memory, "cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return spec


# =============================================================================================
# the harness


class Faults:
    """The Client the controller gets: the test's RealCluster with upstream's fake pod control
    bookkeeping (see the module docstring)."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self.created: set[str] = set()
        self.creates = 0          # len(FakePodControl.Templates)
        self.create_calls = 0     # FakePodControl.CreateCallCount
        self.deletes: list[str] = []
        self.create_limit = 0
        self.create_err: ApiError | None = None
        self.status_writes: list[dict] = []
        self.calls: dict[tuple[str, str], int] = {}
        self.fail_status = 0
        self.fail_get = 0
        self.status_err: ApiError = InternalError("fake update error")

    def reset(self) -> None:
        self.creates = self.create_calls = 0
        self.deletes = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    def _count(self, verb: str, res: ResourceInfo) -> int:
        key = (verb, res.resource)
        self.calls[key] = self.calls.get(key, 0) + 1
        return self.calls[key]

    async def get(self, res: ResourceInfo, name: str, namespace: str | None = None, **kw: Any) -> Any:
        self._count("get", res)
        if res is DAEMONSETS and self.fail_get > 0:
            self.fail_get -= 1
            raise InternalError("fake get error")
        return await self.api.get(res, name, namespace, **kw)

    async def create(self, res: ResourceInfo, obj: dict, namespace: str | None = None, **kw: Any) -> Any:
        if res is not PODS:
            return await self.api.create(res, obj, namespace, **kw)
        self.create_calls += 1
        if self.create_limit and self.create_calls > self.create_limit:
            raise InternalError(f"not creating pod, limit {self.create_limit} already reached")
        self.creates += 1
        if self.create_err is not None:
            raise self.create_err
        await asyncio.sleep(0)
        pod = await self.api.create(res, obj, namespace, **kw)
        self.created.add(pod["metadata"]["name"])
        return pod

    async def delete(self, res: ResourceInfo, name: str, namespace: str | None = None, **kw: Any) -> Any:
        if res is PODS:
            self.deletes.append(name)
            if name not in self.created:
                raise InternalError(f"pod {name!r} does not exist")
        return await self.api.delete(res, name, namespace, **kw)

    async def update_status(self, res: ResourceInfo, obj: dict, **kw: Any) -> Any:
        if res is DAEMONSETS:
            self._count("update_status", res)
            if self.fail_status > 0:
                self.fail_status -= 1
                raise self.status_err
            self.status_writes.append(copy.deepcopy(obj["status"]))
        return await self.api.update_status(res, obj, **kw)


class DsEnv:
    def __init__(self, api: Any) -> None:
        self.api = api
        self.client = Faults(api)
        for res in (DAEMONSETS, PODS, NODES, CONTROLLERREVISIONS):
            api.informer(res)
        self.ctl = DaemonSetController(self.client, api.factory, clock=api.clock)
        self.events: list[tuple[str, str, str]] = []
        self.ctl.recorder.event = lambda _o, t, r, m, **_kw: self.events.append((t, r, m))  # type: ignore[method-assign]
        self.name = "foo"
        self.base = api.clock.monotonic()

    # ---- time

    async def at(self, seconds: float) -> None:
        """Move the fake clock to `seconds` after the test started."""
        delta = self.base + seconds - self.api.clock.monotonic()
        assert delta >= 0, "the fake clock only moves forward"
        self.api.clock.advance(delta)
        await self.api.settle()

    # ---- objects

    async def add_node(self, name: str, labels: dict | None = None, *, taints: list | None = None,
                       conditions: list | None = None, unschedulable: bool = False,
                       allocatable: dict | None = None) -> dict:
        node: dict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {}}
        if labels:
            node["metadata"]["labels"] = dict(labels)
        if taints:
            node["spec"]["taints"] = copy.deepcopy(taints)
        if unschedulable:
            node["spec"]["unschedulable"] = True
        created = await self.api.create(NODES, node)
        created["status"] = {"conditions": conditions or [{"type": "Ready", "status": "True"}],
                             "allocatable": allocatable or {"pods": "100"}}
        out = await self.api.update_status(NODES, created)
        await self.api.settle()
        return out

    async def add_nodes(self, start: int, n: int, labels: dict | None = None) -> None:
        for i in range(start, start + n):
            await self.add_node(f"node-{i}", labels)

    async def create_ds(self, ds: dict) -> dict:
        self.name = ds["metadata"]["name"]
        out = await self.api.create(DAEMONSETS, copy.deepcopy(ds))
        await self.api.settle()
        return out

    def ds(self, name: str | None = None) -> dict:
        d = self.api.obj(DAEMONSETS, name or self.name, NS)
        assert d is not None
        return d

    def hash(self) -> str:
        ds = self.ds()
        return revision_hash(revision_data(ds), (ds.get("status") or {}).get("collisionCount") or 0)

    async def update_ds(self, fn: Callable[[dict], None]) -> None:
        for _ in range(10):
            d = self.ds()
            fn(d)
            try:
                await self.api.update(DAEMONSETS, d)
                break
            except ConflictError:
                continue
        await self.api.settle()

    async def add_pod(self, prefix: str, node: str, labels: dict | None, *, owned: bool = True,
                      ds_name: str | None = None, spec: dict | None = None, phase: str | None = None,
                      ready: bool | None = None, hash_label: bool = True, affinity_node: str | None = None,
                      deleting: bool = False, ready_since: Any = None) -> dict:
        """newPod: the DaemonSet's template spec on `node` with the current hash label and a
        controller reference (or an orphan without them)."""
        ds = self.ds(ds_name) if owned else None
        lbl = dict(labels or {})
        pspec = copy.deepcopy(spec if spec is not None else
                              (ds or self.ds())["spec"]["template"]["spec"])
        if ds is not None and hash_label:
            lbl[CONTROLLER_REVISION_HASH] = revision_hash(revision_data(ds), 0)
        if node:
            pspec["nodeName"] = node
        if affinity_node:
            pspec["affinity"] = replace_node_name_affinity(pspec.get("affinity"), affinity_node)
        pod: dict = {"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"generateName": prefix, "namespace": NS, "labels": lbl}, "spec": pspec}
        if deleting:
            pod["metadata"]["finalizers"] = ["test/keep"]
        if ds is not None:
            pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                                   "name": ds["metadata"]["name"], "uid": ds["metadata"]["uid"],
                                                   "controller": True, "blockOwnerDeletion": True}]
        created = await self.api.create(PODS, pod)
        if phase or ready is not None:
            st = created.setdefault("status", {})
            if phase:
                st["phase"] = phase
            if ready is not None:
                st["conditions"] = [{"type": "Ready", "status": "True" if ready else "False",
                                     "lastTransitionTime": rfc3339(ready_since or self.api.clock.now())}]
            created = await self.api.update_status(PODS, created)
        if deleting:
            await self.api.delete(PODS, created["metadata"]["name"], NS)
        await self.api.settle()
        return created

    async def add_pods(self, node: str, labels: dict, n: int, **kw: Any) -> None:
        for _ in range(n):
            await self.add_pod(f"{node}-", node, labels, **kw)

    def pods(self) -> list[dict]:
        return [p for k, p in self.api.objects(PODS).items() if k.startswith(f"{NS}/")]

    async def set_ready(self, pod: dict, ready: bool = True) -> None:
        cur = self.api.obj(PODS, pod["metadata"]["name"], NS)
        assert cur is not None
        conds = [c for c in cur["status"].get("conditions") or [] if c.get("type") != "Ready"]
        conds.append({"type": "Ready", "status": "True" if ready else "False",
                      "lastTransitionTime": rfc3339(self.api.clock.now())})
        cur["status"]["conditions"] = conds
        await self.api.update_status(PODS, cur)

    async def mark_pods_ready(self) -> None:
        for p in self.pods():
            if not p["metadata"].get("deletionTimestamp"):
                await self.set_ready(p)
        await self.api.settle()

    async def set_pod_readiness(self, ready: bool, count: int, fn: Callable[[dict], bool]) -> None:
        """setPodReadiness: flip `count` live pods accepted by `fn` to `ready` (now)."""
        for p in sorted(self.pods(), key=lambda p: p["metadata"]["name"]):
            if count <= 0:
                break
            if p["metadata"].get("deletionTimestamp"):
                continue
            is_ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                           for c in p["status"].get("conditions") or [])
            if is_ready == ready or not fn(p):
                continue
            await self.set_ready(p, ready)
            count -= 1
        assert count <= 0, f"could not mark {count} pods ready={ready}"
        await self.api.settle()

    # ---- syncing

    async def sync(self, name: str | None = None) -> ApiError | None:
        err: ApiError | None = None
        try:
            await self.ctl.sync(f"{NS}/{name or self.name}")
        except ApiError as e:
            err = e
        await self.api.settle()
        return err

    def own_events(self) -> list[tuple[str, str, str]]:
        return [e for e in self.events if e[1] not in POD_CONTROL_REASONS]

    def clear(self) -> None:
        """clearExpectations / resetCounters."""
        self.client.reset()
        self.events.clear()

    async def expect(self, creates: int, deletes: int, events: int, *, name: str | None = None) -> ApiError | None:
        """expectSyncDaemonSets: one sync with exactly these creates, deletes and events."""
        self.clear()
        err = await self.sync(name)
        assert (self.client.creates, len(self.client.deletes), len(self.own_events())) == (creates, deletes, events), \
            f"creates/deletes/events: {self.own_events()} err={err!r}"
        for p in self.pods():
            if p["metadata"]["name"] in self.client.created:
                refs = [r for r in p["metadata"].get("ownerReferences") or [] if r.get("controller")]
                assert [(r["apiVersion"], r["kind"]) for r in refs] == [("apps/v1", "DaemonSet")]
        return err


@pytest.fixture
async def denv(real_api):
    return DsEnv(real_api)


# =============================================================================================
# daemon_controller_test.go: one sync, counted


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_simple_daemonset_launches_pods(denv, strategy):
    await denv.add_nodes(0, 5)
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.expect(5, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_simple_daemonset_schedule_daemonset_pods_launches_pods(denv, strategy):
    await denv.add_nodes(0, 5)
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.expect(5, 0, 0)
    nodes = {f"node-{i}" for i in range(5)}
    pods = denv.pods()
    assert len(pods) == 5
    for pod in pods:
        assert not pod["spec"].get("nodeName")
        terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"]
        assert len(terms) == 1 and len(terms[0]["matchFields"]) == 1
        f = terms[0]["matchFields"][0]
        assert (f["key"], f["operator"], len(f["values"])) == ("metadata.name", "In", 1)
        nodes.discard(f["values"][0])
    assert not nodes


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_simple_daemonset_pod_create_errors(denv, strategy):
    denv.client.create_limit = 10
    for i in range(100):
        await denv.add_node(f"node-{i}")
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.expect(10, 0, 0)
    expected_limit, batch = 0, 0
    while expected_limit <= 10:
        expected_limit += 1 << batch
        batch += 1
    assert denv.client.create_calls <= expected_limit
    st = denv.client.status_writes[-1]
    assert (st["desiredNumberScheduled"], st["currentNumberScheduled"], st["updatedNumberScheduled"]) == (100, 10, 10)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_simple_daemonset_updates_status_after_launching_pods(denv, strategy):
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.add_nodes(0, 5)
    await denv.expect(5, 0, 0)
    assert denv.client.status_writes[-1]["currentNumberScheduled"] == 5


@pytest.mark.parametrize("sync_err,status_err,expected", [(True, False, "sync"), (False, True, "status"),
                                                          (True, True, "sync")],
                         ids=["sync error", "status error", "sync and status error"])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_simple_daemonset_updates_status_error(denv, strategy, sync_err, status_err, expected):
    errors = {"sync": InternalError("sync error"), "status": InternalError("status error")}
    if sync_err:
        denv.client.create_err = errors["sync"]
    if status_err:
        denv.client.fail_status, denv.client.status_err = 10, errors["status"]
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.add_nodes(0, 1)
    err = await denv.expect(1, 0, 0)
    assert err is not None
    assert err.message == errors[expected].message


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_no_nodes_does_nothing(denv, strategy):
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.expect(0, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_one_node_daemon_launches_pod(denv, strategy):
    await denv.add_node("only-node")
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.expect(1, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_not_ready_node_daemon_does_launch_pod(denv, strategy):
    await denv.add_node("not-ready", conditions=[{"type": "Ready", "status": "False"}])
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.expect(1, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_insufficient_capacity_node_daemon_does_not_unschedule_running_pod(denv, strategy):
    spec = resource_pod_spec("too-much-mem", "75M", "75m")
    ds = new_daemonset("foo", strategy)
    ds["spec"]["template"]["spec"] = spec
    await denv.add_node("too-much-mem", allocatable={"memory": "100M", "cpu": "200m", "pods": "100"})
    await denv.add_pod("p-", "too-much-mem", None, owned=False, spec=spec)
    await denv.create_ds(ds)
    await denv.expect(1, 0, 0)


async def test_insufficient_capacity_node_sufficient_capacity_with_node_label_daemon_launch_pod(denv):
    ds = new_daemonset("foo")
    ds["spec"]["template"]["spec"] = resource_pod_spec("", "50M", "75m")
    ds["spec"]["template"]["spec"]["nodeSelector"] = SIMPLE_NODE_LABEL
    await denv.add_node("not-enough-resource", allocatable={"memory": "10M", "cpu": "20m", "pods": "100"})
    await denv.add_node("enough-resource", SIMPLE_NODE_LABEL,
                        allocatable={"memory": "100M", "cpu": "200m", "pods": "100"})
    await denv.create_ds(ds)
    await denv.expect(1, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_network_unavailable_node_daemon_launches_pod(denv, strategy):
    await denv.add_node("network-unavailable", conditions=[{"type": "NetworkUnavailable", "status": "True"}])
    await denv.create_ds(new_daemonset("simple", strategy))
    await denv.expect(1, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_dont_do_anything_if_being_deleted(denv, strategy):
    ds = new_daemonset("foo", strategy)
    ds["spec"]["template"]["spec"] = resource_pod_spec("not-too-much-mem", "75M", "75m")
    ds["metadata"]["finalizers"] = ["test/keep"]
    await denv.add_node("not-too-much-mem", allocatable={"memory": "200M", "cpu": "200m", "pods": "100"})
    await denv.create_ds(ds)
    await denv.api.delete(DAEMONSETS, "foo", NS)
    await denv.api.settle()
    assert denv.ds()["metadata"].get("deletionTimestamp")
    await denv.expect(0, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_port_conflict_with_same_daemon_pod_does_not_delete_pod(denv, strategy):
    spec = {"nodeName": "port-conflict", "containers": [{"name": "c", "image": "foo/bar",
                                                         "ports": [{"hostPort": 666, "containerPort": 666}]}]}
    await denv.add_node("port-conflict")
    ds = new_daemonset("foo", strategy)
    ds["spec"]["template"]["spec"] = spec
    await denv.create_ds(ds)
    await denv.add_pod("foo-", "port-conflict", SIMPLE_DS_LABEL)
    await denv.expect(0, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_no_port_conflict_node_daemon_launches_pod(denv, strategy):
    spec1 = {"nodeName": "no-port-conflict", "containers": [{"name": "c", "image": "foo/bar",
                                                             "ports": [{"hostPort": 6661, "containerPort": 6661}]}]}
    spec2 = {"nodeName": "no-port-conflict", "containers": [{"name": "c", "image": "foo/bar",
                                                             "ports": [{"hostPort": 6662, "containerPort": 6662}]}]}
    ds = new_daemonset("foo", strategy)
    ds["spec"]["template"]["spec"] = spec2
    await denv.add_node("no-port-conflict")
    await denv.add_pod("p-", "no-port-conflict", None, owned=False, spec=spec1)
    await denv.create_ds(ds)
    await denv.expect(1, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_deals_with_existing_pods(denv, strategy):
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.add_nodes(0, 5)
    await denv.add_pods("node-1", SIMPLE_DS_LABEL, 1)
    await denv.add_pods("node-2", SIMPLE_DS_LABEL, 2)
    await denv.add_pods("node-3", SIMPLE_DS_LABEL, 5)
    await denv.add_pods("node-4", SIMPLE_DS_LABEL2, 2)
    await denv.expect(2, 5, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_selector_daemon_launches_pods(denv, strategy):
    ds = new_daemonset("foo", strategy)
    ds["spec"]["template"]["spec"]["nodeSelector"] = SIMPLE_NODE_LABEL
    await denv.add_nodes(0, 4)
    await denv.add_nodes(4, 3, SIMPLE_NODE_LABEL)
    await denv.create_ds(ds)
    await denv.expect(3, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_selector_daemon_deletes_unselected_pods(denv, strategy):
    ds = new_daemonset("foo", strategy)
    ds["spec"]["template"]["spec"]["nodeSelector"] = SIMPLE_NODE_LABEL
    await denv.create_ds(ds)
    await denv.add_nodes(0, 5)
    await denv.add_nodes(5, 5, SIMPLE_NODE_LABEL)
    await denv.add_pods("node-0", SIMPLE_DS_LABEL2, 2)
    await denv.add_pods("node-1", SIMPLE_DS_LABEL, 3)
    await denv.add_pods("node-1", SIMPLE_DS_LABEL2, 1)
    await denv.add_pods("node-4", SIMPLE_DS_LABEL, 1)
    await denv.expect(5, 4, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_selector_daemon_deals_with_existing_pods(denv, strategy):
    ds = new_daemonset("foo", strategy)
    ds["spec"]["template"]["spec"]["nodeSelector"] = SIMPLE_NODE_LABEL
    await denv.create_ds(ds)
    await denv.add_nodes(0, 5)
    await denv.add_nodes(5, 5, SIMPLE_NODE_LABEL)
    await denv.add_pods("node-0", SIMPLE_DS_LABEL, 1)
    await denv.add_pods("node-1", SIMPLE_DS_LABEL, 3)
    await denv.add_pods("node-1", SIMPLE_DS_LABEL2, 2)
    await denv.add_pods("node-2", SIMPLE_DS_LABEL, 4)
    await denv.add_pods("node-6", SIMPLE_DS_LABEL, 13)
    await denv.add_pods("node-7", SIMPLE_DS_LABEL2, 4)
    await denv.add_pods("node-9", SIMPLE_DS_LABEL, 1)
    await denv.add_pods("node-9", SIMPLE_DS_LABEL2, 1)
    await denv.expect(3, 20, 0)


def _with(strategy: dict, **spec: Any) -> dict:
    ds = new_daemonset("foo", strategy)
    ds["spec"]["template"]["spec"].update(spec)
    return ds


NAME_AND_SELECTOR = [
    ("TestBadSelectorDaemonDoesNothing", {"nodeSelector": SIMPLE_NODE_LABEL2}, 0),
    ("TestNameDaemonSetLaunchesPods", {"nodeName": "node-0"}, 1),
    ("TestBadNameDaemonSetDoesNothing", {"nodeName": "node-10"}, 0),
    ("TestNameAndSelectorDaemonSetLaunchesPods", {"nodeSelector": SIMPLE_NODE_LABEL, "nodeName": "node-6"}, 1),
    ("TestInconsistentNameSelectorDaemonSetDoesNothing", {"nodeSelector": SIMPLE_NODE_LABEL, "nodeName": "node-0"},
     0),
    ("TestNodeAffinityDaemonLaunchesPods", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "color", "operator": "In", "values": ["blue"]}]}]}}}}, 3),
]


@pytest.mark.parametrize("name,spec,creates", NAME_AND_SELECTOR, ids=[c[0] for c in NAME_AND_SELECTOR])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_name_and_selector(denv, strategy, name, spec, creates):
    if name in ("TestNameDaemonSetLaunchesPods", "TestBadNameDaemonSetDoesNothing"):
        await denv.add_nodes(0, 5)
    else:
        await denv.add_nodes(0, 4)
        await denv.add_nodes(4, 3, SIMPLE_NODE_LABEL)
    await denv.create_ds(_with(strategy, **copy.deepcopy(spec)))
    await denv.expect(creates, 0, 0)


async def test_selector_daemonset_launches_pods(denv):
    await denv.add_nodes(0, 4)
    await denv.add_nodes(4, 3, SIMPLE_NODE_LABEL)
    await denv.create_ds(_with(ON_DELETE, nodeSelector=SIMPLE_NODE_LABEL))
    await denv.expect(3, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_number_ready_status(denv, strategy):
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.add_nodes(0, 2, SIMPLE_NODE_LABEL)
    await denv.add_pods("node-0", SIMPLE_DS_LABEL, 1)
    await denv.add_pods("node-1", SIMPLE_DS_LABEL, 1)
    await denv.expect(0, 0, 0)
    assert denv.client.status_writes[-1]["numberReady"] == 0
    await denv.mark_pods_ready()
    await denv.expect(0, 0, 0)
    assert denv.client.status_writes[-1]["numberReady"] == 2


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_observed_generation(denv, strategy):
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.add_nodes(0, 1, SIMPLE_NODE_LABEL)
    await denv.add_pods("node-0", SIMPLE_DS_LABEL, 1)
    await denv.expect(0, 0, 0)
    assert denv.client.status_writes[-1]["observedGeneration"] == denv.ds()["metadata"]["generation"]


KILL_FAILED = [
    (0, 1, 0, 0, 0, "normal (do nothing)"),
    (0, 0, 1, 0, 0, "no pods (create 1)"),
    (1, 0, 0, 1, 1, "1 failed pod (kill 1), 0 normal pod (create 0; will create in the next sync)"),
    (1, 3, 0, 3, 1, "1 failed pod (kill 1), 3 normal pods (kill 2)"),
]


@pytest.mark.parametrize("failed,normal,creates,deletes,events,test", KILL_FAILED, ids=[c[5] for c in KILL_FAILED])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_daemon_kill_failed_pods(denv, strategy, failed, normal, creates, deletes, events, test):
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.add_nodes(0, 1)
    for _ in range(failed):
        await denv.add_pod("node-0-", "node-0", SIMPLE_DS_LABEL, phase="Failed")
    await denv.add_pods("node-0", SIMPLE_DS_LABEL, normal)
    await denv.expect(creates, deletes, events)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_daemon_kill_failed_pods_backoff(denv, strategy):
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.add_nodes(0, 1)
    await denv.add_pod("node-0-", "node-0", SIMPLE_DS_LABEL, phase="Failed")
    # upstream's lister keeps the DaemonSet's observedGeneration (part of the backoff key) fixed;
    # here the generation is observed before the first sync so the key does not move
    ds = denv.ds()
    ds["status"]["observedGeneration"] = ds["metadata"]["generation"]
    await denv.api.update_status(DAEMONSETS, ds)
    await denv.api.settle()
    # the first sync deletes the pod (its deletion fails in upstream's fake too: it stays)
    await denv.expect(0, 1, 1)
    # an immediate second sync is held back by the backoff (1 s)
    await denv.expect(0, 0, 0)
    await denv.at(0.999)
    await denv.expect(0, 0, 0)
    await denv.at(1.001)
    # after the backoff the failed pod is deleted again
    await denv.expect(0, 1, 1)


TAINT_CASES = [
    ("TestNoScheduleTaintedDoesntEvicitRunningIntolerantPod", NO_SCHEDULE_TAINTS, None, True, 0, 0),
    ("TestNoExecuteTaintedDoesEvicitRunningIntolerantPod", NO_EXECUTE_TAINTS, None, True, 0, 1),
    ("TestTaintedNodeDaemonDoesNotLaunchIntolerantPod", NO_SCHEDULE_TAINTS, None, False, 0, 0),
    ("TestTaintedNodeDaemonLaunchesToleratePod", NO_SCHEDULE_TAINTS, NO_SCHEDULE_TOLERATIONS, False, 1, 0),
    ("TestNodeDaemonLaunchesToleratePod", None, NO_SCHEDULE_TOLERATIONS, False, 1, 0),
]


@pytest.mark.parametrize("name,taints,tolerations,existing,creates,deletes", TAINT_CASES,
                         ids=[c[0] for c in TAINT_CASES])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_taints(denv, strategy, name, taints, tolerations, existing, creates, deletes):
    ds = new_daemonset("intolerant", strategy)
    if tolerations:
        ds["spec"]["template"]["spec"]["tolerations"] = copy.deepcopy(tolerations)
    await denv.add_node("tainted" if taints else "node-0", taints=taints)
    await denv.create_ds(ds)
    if existing:
        await denv.add_pod("keep-running-me", "tainted", SIMPLE_DS_LABEL)
    await denv.expect(creates, deletes, 0)


NODE_TAINT_CONDITIONS = [
    ("TestNotReadyNodeDaemonLaunchesPod", [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}],
     [{"type": "Ready", "status": "False"}]),
    ("TestUnreachableNodeDaemonLaunchesPod", [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}],
     [{"type": "Ready", "status": "Unknown"}]),
    ("TestTaintPressureNodeDaemonLaunchesPod", [{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"},
                                                {"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"},
                                                {"key": "node.kubernetes.io/pid-pressure", "effect": "NoSchedule"}],
     [{"type": "DiskPressure", "status": "True"}, {"type": "MemoryPressure", "status": "True"},
      {"type": "PIDPressure", "status": "True"}]),
]


@pytest.mark.parametrize("name,taints,conditions", NODE_TAINT_CONDITIONS, ids=[c[0] for c in NODE_TAINT_CONDITIONS])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_node_condition_taints(denv, strategy, name, taints, conditions):
    await denv.add_node("tainted", taints=taints, conditions=conditions)
    await denv.create_ds(new_daemonset("simple", strategy))
    await denv.expect(1, 0, 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_daemonset_respects_termination(denv, strategy):
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.add_nodes(0, 1, SIMPLE_NODE_LABEL)
    await denv.add_pod("node-0-", "node-0", SIMPLE_DS_LABEL, deleting=True)
    await denv.expect(0, 0, 0)


def _ds_for(spec: dict, strategy: dict) -> dict:
    return {"metadata": {"name": "ds", "namespace": NS}, "spec": {
        "selector": {"matchLabels": SIMPLE_DS_LABEL}, "updateStrategy": strategy,
        "template": {"metadata": {"labels": SIMPLE_DS_LABEL}, "spec": spec}}}


SHOULD_RUN = [
    ("ShouldRunDaemonPod", resource_pod_spec("", "50M", "0.5"), False, True, True),
    ("InsufficientResourceError", resource_pod_spec("", "200M", "0.5"), False, True, True),
    ("ErrPodNotMatchHostName", resource_pod_spec("other-node", "50M", "0.5"), False, False, False),
    ("ErrPodNotFitsHostPorts", {"containers": [{"name": "c", "ports": [{"hostPort": 666}]}]}, False, True, True),
    ("InsufficientResourceError", resource_pod_spec("", "100M", "0.5"), False, True, True),
    ("ShouldRunDaemonPod", resource_pod_spec("", "50M", "0.5"), False, True, True),
    ("ErrNodeSelectorNotMatch", {"nodeSelector": SIMPLE_DS_LABEL2}, False, False, False),
    ("ShouldRunDaemonPod", {"nodeSelector": SIMPLE_DS_LABEL}, False, True, True),
    ("ErrPodAffinityNotMatch", {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "type", "operator": "In", "values": ["test"]}]}]}}}},
     False, False, False),
    ("ShouldRunDaemonPod", {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "type", "operator": "In", "values": ["production"]}]}]}}}},
     False, True, True),
    ("ShouldRunDaemonPodOnUnschedulableNode", resource_pod_spec("", "50M", "0.5"), True, True, True),
]


@pytest.mark.parametrize("name,spec,unschedulable,should_run,should_continue", SHOULD_RUN,
                         ids=[f"{i}-{c[0]}" for i, c in enumerate(SHOULD_RUN)])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_node_should_run_daemon_pod(strategy, name, spec, unschedulable, should_run, should_continue):
    node: dict = {"metadata": {"name": "test-node", "labels": dict(SIMPLE_DS_LABEL)},
                  "spec": {"unschedulable": True} if unschedulable else {},
                  "status": {"conditions": [{"type": "Ready", "status": "True"}],
                             "allocatable": {"memory": "100M", "cpu": "1", "pods": "100"}}}
    if unschedulable:  # the node lifecycle controller's taint for spec.unschedulable
        node["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    assert node_should_run(_ds_for(copy.deepcopy(spec), strategy), node) == (should_run, should_continue)


UPDATE_NODE = [
    ("Nothing changed, should not enqueue", None, None, {"nodeSelector": SIMPLE_NODE_LABEL}, False, 0),
    ("Node labels changed", None, SIMPLE_NODE_LABEL, {"nodeSelector": SIMPLE_NODE_LABEL}, True, 0),
    ("Node taints changed", "taints", None, {}, True, 0),
    ("Node Allocatable changed", None, None, resource_pod_spec("", "200M", "200m"), False, 1),
]


@pytest.mark.parametrize("test,old_taints,new_labels,spec,enqueue,creates", UPDATE_NODE, ids=[c[0] for c in UPDATE_NODE])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_update_node(denv, strategy, test, old_taints, new_labels, spec, enqueue, creates):
    old = await denv.add_node("node1", taints=NO_SCHEDULE_TAINTS if old_taints else None)
    ds = new_daemonset("ds", strategy)
    ds["spec"]["template"]["spec"].update(copy.deepcopy(spec))
    await denv.create_ds(ds)
    await denv.expect(creates, 0, 0)
    new = copy.deepcopy(old)
    new["spec"].pop("taints", None)
    if new_labels:
        new["metadata"]["labels"] = {**(new["metadata"].get("labels") or {}), **new_labels}
    if test == "Node Allocatable changed":
        new["status"]["allocatable"] = {"memory": "200M", "cpu": "200m", "pods": "100"}
    denv.ctl.queue = WorkQueue()
    denv.ctl._node_updated(old, new)
    assert (len(denv.ctl.queue) == 1) is enqueue


SHOULD_IGNORE = [("Nothing changed", None, None, True), ("Node labels changed", None, SIMPLE_NODE_LABEL, False),
                 ("Node taints changed", NO_SCHEDULE_TAINTS, None, False)]


@pytest.mark.parametrize("name,old_taints,new_labels,ignore", SHOULD_IGNORE, ids=[c[0] for c in SHOULD_IGNORE])
def test_should_ignore_node_update(name, old_taints, new_labels, ignore):
    old: dict = {"metadata": {"name": "node1"}, "spec": {"taints": old_taints} if old_taints else {}}
    new: dict = {"metadata": {"name": "node1", "labels": new_labels} if new_labels else {"name": "node1"}, "spec": {}}
    assert should_ignore_node_update(old, new) is ignore


def _non_daemon_pod(name: str, node: str, *, controller: bool) -> dict:
    m: dict = {"name": name, "namespace": NS}
    if controller:
        m["ownerReferences"] = [{"controller": True}]
    return {"metadata": m, "spec": resource_pod_spec(node, "50M", "50m")}


DELETE_NO_DAEMON = [("Deleted non-daemon pods to release resources", False, "node1"),
                    ("Deleted non-daemon pods (with controller) to release resources", True, "node1"),
                    ("Deleted no scheduled pods", False, "")]


@pytest.mark.parametrize("test,controller,node", DELETE_NO_DAEMON, ids=[c[0] for c in DELETE_NO_DAEMON])
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_delete_no_daemon_pod(denv, strategy, test, controller, node):
    await denv.add_node("node1", allocatable={"memory": "200M", "cpu": "200m", "pods": "100"})
    ds = new_daemonset("ds", strategy)
    ds["spec"]["template"]["spec"] = resource_pod_spec("", "50M", "50m")
    await denv.create_ds(ds)
    for i in range(4):
        body = _non_daemon_pod(f"pod-{i}", "node1", controller=False)
        await denv.api.create(PODS, {"apiVersion": "v1", "kind": "Pod", **body})
    await denv.api.settle()
    await denv.expect(1, 0, 0)
    denv.ctl.queue = WorkQueue()
    denv.ctl._pod_deleted(_non_daemon_pod("pod_0", node, controller=controller))
    assert len(denv.ctl.queue) == 0


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_delete_unscheduled_pod_for_not_existing_node(denv, strategy):
    await denv.create_ds(new_daemonset("foo", strategy))
    await denv.add_nodes(0, 1)
    await denv.add_pods("node-0", SIMPLE_DS_LABEL, 1)
    await denv.add_pods("node-1", SIMPLE_DS_LABEL, 1)
    await denv.add_pod("pod1-node-3-", "", SIMPLE_DS_LABEL, affinity_node="node-2")
    await denv.expect(0, 1, 0)


GET_NODES = ["exclude deleted terminal pods", "include deleted terminal pods"]


@pytest.mark.parametrize("case", GET_NODES)
async def test_get_nodes_to_daemon_pods(denv, case):
    include = case == "include deleted terminal pods"
    await denv.create_ds(new_daemonset("foo"))
    await denv.create_ds(new_daemonset("foo2"))
    denv.name = "foo"
    await denv.add_nodes(0, 2)
    wanted = [await denv.add_pod("matching-owned-0-", "node-0", SIMPLE_DS_LABEL),
              await denv.add_pod("matching-orphan-0-", "node-0", SIMPLE_DS_LABEL, owned=False),
              await denv.add_pod("matching-owned-1-", "node-1", SIMPLE_DS_LABEL),
              await denv.add_pod("matching-orphan-1-", "node-1", SIMPLE_DS_LABEL, owned=False),
              await denv.add_pod("matching-owned-succeeded-pod-0-", "node-0", SIMPLE_DS_LABEL, phase="Succeeded")]
    failed_deleted = await denv.add_pod("matching-owned-failed-deleted-pod-1-", "node-1", SIMPLE_DS_LABEL,
                                        phase="Failed", deleting=True)
    ignored = [await denv.add_pod("non-matching-owned-0-", "node-0", SIMPLE_DS_LABEL2),
               await denv.add_pod("non-matching-orphan-1-", "node-1", SIMPLE_DS_LABEL2, owned=False),
               await denv.add_pod("matching-owned-by-other-0-", "node-0", SIMPLE_DS_LABEL, ds_name="foo2")]
    if include:
        wanted.append(failed_deleted)
    else:
        wanted.append(await denv.add_pod("matching-owned-failed-pod-1-", "node-1", SIMPLE_DS_LABEL, phase="Failed"))
        ignored.append(failed_deleted)
        ignored.append(await denv.add_pod("matching-owned-succeeded-deleted-pod-0-", "node-0", SIMPLE_DS_LABEL,
                                          phase="Succeeded", deleting=True))
    ds = denv.ds()
    uid = ds["metadata"]["uid"]
    from minik3s.api.selectors import label_selector_from_dict
    sel = label_selector_from_dict(ds["spec"]["selector"])
    candidates = [p for p in denv.pods() if not any(r.get("controller") for r in p["metadata"].get("ownerReferences")
                                                     or []) or any(r.get("uid") == uid and r.get("controller")
                                                                   for r in p["metadata"]["ownerReferences"])]
    claimed = await claim_objects(denv.api, PODS, ds, DAEMONSETS, candidates,
                                  match=lambda p: sel.matches(p["metadata"].get("labels") or {}), kind="DaemonSet")
    got: dict[str, str] = {}
    for node, pods in group_by_node(claimed, include_deleted_terminal=include).items():
        for p in pods:
            assert p["spec"]["nodeName"] == node
            got[p["metadata"]["name"]] = node
    assert set(got) == {p["metadata"]["name"] for p in wanted}
    assert not set(got) & {p["metadata"]["name"] for p in ignored}


async def test_add_node(denv):
    ds = new_daemonset("ds")
    ds["spec"]["template"]["spec"]["nodeSelector"] = SIMPLE_NODE_LABEL
    await denv.create_ds(ds)
    denv.ctl.queue = WorkQueue()
    denv.ctl._node_added({"metadata": {"name": "node1"}, "spec": {}})
    assert len(denv.ctl.queue) == 0
    denv.ctl._node_added({"metadata": {"name": "node2", "labels": SIMPLE_NODE_LABEL}, "spec": {}})
    assert len(denv.ctl.queue) == 1 and await denv.ctl.queue.get() == f"{NS}/ds"


def _pod_of(prefix: str, labels: dict | None, owner: dict | None, rv: str = "1") -> dict:
    m: dict = {"name": f"{prefix}x", "namespace": NS, "labels": dict(labels or {}), "resourceVersion": rv}
    if owner is not None:
        m["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": owner["metadata"]["name"],
                                 "uid": owner["metadata"]["uid"], "controller": True}]
    return {"metadata": m, "spec": {"nodeName": "node-0"}}


async def _queued(q: WorkQueue) -> list[str]:
    return sorted([await q.get() for _ in range(len(q))])


async def _two_sets(denv: DsEnv, strategy: dict, *, third: bool = False) -> tuple[dict, dict]:
    await denv.create_ds(new_daemonset("foo1", strategy))
    await denv.create_ds(new_daemonset("foo2", strategy))
    if third:
        ds3 = new_daemonset("foo3", strategy)
        ds3["spec"]["selector"]["matchLabels"] = dict(SIMPLE_DS_LABEL2)
        ds3["spec"]["template"]["metadata"]["labels"] = dict(SIMPLE_DS_LABEL2)
        await denv.create_ds(ds3)
    denv.ctl.queue = WorkQueue()
    return denv.ds("foo1"), denv.ds("foo2")


def _bump(pod: dict) -> dict:
    out = copy.deepcopy(pod)
    out["metadata"]["resourceVersion"] = str(int(pod["metadata"]["resourceVersion"]) + 1)
    return out


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_add_pod(denv, strategy):
    ds1, ds2 = await _two_sets(denv, strategy)
    denv.ctl._pod_added(_pod_of("pod1-", SIMPLE_DS_LABEL, ds1))
    assert await _queued(denv.ctl.queue) == [f"{NS}/foo1"]
    denv.ctl._pod_added(_pod_of("pod2-", SIMPLE_DS_LABEL, ds2))
    assert await _queued(denv.ctl.queue) == [f"{NS}/foo2"]


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_add_pod_orphan(denv, strategy):
    await _two_sets(denv, strategy, third=True)
    denv.ctl._pod_added(_pod_of("pod1-", SIMPLE_DS_LABEL, None))
    assert await _queued(denv.ctl.queue) == [f"{NS}/foo1", f"{NS}/foo2"]


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_update_pod(denv, strategy):
    ds1, ds2 = await _two_sets(denv, strategy)
    prev = _pod_of("pod1-", SIMPLE_DS_LABEL, ds1)
    denv.ctl._pod_updated(prev, _bump(prev))
    assert await _queued(denv.ctl.queue) == [f"{NS}/foo1"]
    prev = _pod_of("pod2-", SIMPLE_DS_LABEL, ds2)
    denv.ctl._pod_updated(prev, _bump(prev))
    assert await _queued(denv.ctl.queue) == [f"{NS}/foo2"]


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_update_pod_orphan_same_labels(denv, strategy):
    await _two_sets(denv, strategy)
    prev = _pod_of("pod1-", SIMPLE_DS_LABEL, None)
    denv.ctl._pod_updated(prev, _bump(prev))
    assert len(denv.ctl.queue) == 0


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_update_pod_orphan_with_new_labels(denv, strategy):
    await _two_sets(denv, strategy)
    pod = _pod_of("pod1-", SIMPLE_DS_LABEL, None)
    prev = copy.deepcopy(pod)
    prev["metadata"]["labels"] = {"foo2": "bar2"}
    denv.ctl._pod_updated(prev, _bump(pod))
    assert await _queued(denv.ctl.queue) == [f"{NS}/foo1", f"{NS}/foo2"]


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_update_pod_change_controller_ref(denv, strategy):
    ds1, ds2 = await _two_sets(denv, strategy)
    pod = _pod_of("pod1-", SIMPLE_DS_LABEL, ds1)
    prev = _pod_of("pod1-", SIMPLE_DS_LABEL, ds2)
    denv.ctl._pod_updated(prev, _bump(pod))
    assert len(denv.ctl.queue) == 2


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_update_pod_controller_ref_removed(denv, strategy):
    ds1, _ds2 = await _two_sets(denv, strategy)
    prev = _pod_of("pod1-", SIMPLE_DS_LABEL, ds1)
    pod = _bump(prev)
    del pod["metadata"]["ownerReferences"]
    denv.ctl._pod_updated(prev, pod)
    assert len(denv.ctl.queue) == 2


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_delete_pod(denv, strategy):
    ds1, ds2 = await _two_sets(denv, strategy)
    denv.ctl._pod_deleted(_pod_of("pod1-", SIMPLE_DS_LABEL, ds1))
    assert await _queued(denv.ctl.queue) == [f"{NS}/foo1"]
    denv.ctl._pod_deleted(_pod_of("pod2-", SIMPLE_DS_LABEL, ds2))
    assert await _queued(denv.ctl.queue) == [f"{NS}/foo2"]


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_delete_pod_orphan(denv, strategy):
    await _two_sets(denv, strategy, third=True)
    denv.ctl._pod_deleted(_pod_of("pod1-", SIMPLE_DS_LABEL, None))
    assert len(denv.ctl.queue) == 0


# ---- surge


async def test_surge_deals_with_existing_pods(denv):
    await denv.create_ds(new_daemonset("foo", surge(1)))
    await denv.add_nodes(0, 5)
    await denv.add_pods("node-1", SIMPLE_DS_LABEL, 1)
    await denv.add_pods("node-2", SIMPLE_DS_LABEL, 2)
    await denv.add_pods("node-3", SIMPLE_DS_LABEL, 5)
    await denv.add_pods("node-4", SIMPLE_DS_LABEL2, 2)
    await denv.expect(2, 5, 0)


async def _surge_node1(denv: DsEnv, *, new_ready: Any, old_ready: bool, min_ready: int = 0, now: float = 0,
                       new_ready_at: float | None = None) -> tuple[dict, dict, dict]:
    ds = new_daemonset("foo", surge(1))
    ds["spec"]["minReadySeconds"] = min_ready
    await denv.create_ds(ds)
    await denv.add_nodes(0, 5)
    old = await denv.add_pod("node-1-old-", "node-1", SIMPLE_DS_LABEL, hash_label=False, ready=old_ready)
    await denv.at(10)
    excess = await denv.add_pod("node-1-delete-", "node-1", SIMPLE_DS_LABEL, hash_label=False, ready=True)
    await denv.at(50)
    since = None if new_ready_at is None else denv.api.clock.now() - timedelta(seconds=50 - new_ready_at)
    new = await denv.add_pod("node-1-", "node-1", SIMPLE_DS_LABEL, ready=new_ready, ready_since=since)
    await denv.add_pods("node-2", SIMPLE_DS_LABEL, 1)
    if now:
        await denv.at(now)
    return old, excess, new


async def test_surge_preserves_ready_old_pods(denv):
    _old, excess, _new = await _surge_node1(denv, new_ready=None, old_ready=True)
    await denv.expect(3, 1, 0)
    assert denv.client.deletes == [excess["metadata"]["name"]]


async def test_surge_creates_new_pod_when_at_max_surge_and_old_pod_deleted(denv):
    await denv.create_ds(new_daemonset("foo", surge(1)))
    await denv.add_nodes(0, 5)
    for i in range(1, 5):  # old ready pods everywhere else; node-4's is being deleted
        await denv.add_pod(f"node-{i}-preserve-", f"node-{i}", SIMPLE_DS_LABEL, hash_label=False, ready=True,
                           deleting=i == 4)
    await denv.at(50)
    await denv.add_pod("node-0-old-ready-", "node-0", SIMPLE_DS_LABEL, hash_label=False, ready=True)
    await denv.at(100)
    await denv.add_pod("node-0-", "node-0", SIMPLE_DS_LABEL, ready=False)
    await denv.expect(1, 0, 0)


async def test_surge_deletes_unready_old_pods(denv):
    old, excess, _new = await _surge_node1(denv, new_ready=None, old_ready=False)
    await denv.expect(3, 2, 0)
    assert sorted(denv.client.deletes) == sorted([excess["metadata"]["name"], old["metadata"]["name"]])


async def test_surge_preserves_old_ready_with_unsatisfied_min_ready(denv):
    # the new pod went ready at 50 and the clock reads 60: not available for 15 s yet
    _old, excess, _new = await _surge_node1(denv, new_ready=True, old_ready=True, min_ready=15, now=60,
                                            new_ready_at=50)
    await denv.expect(3, 1, 0)
    assert denv.client.deletes == [excess["metadata"]["name"]]


async def test_surge_deletes_old_ready_with_unsatisfied_min_ready(denv):
    # the clock reads 70: the new pod has been ready for 20 s, longer than minReadySeconds 15
    old, excess, _new = await _surge_node1(denv, new_ready=True, old_ready=True, min_ready=15, now=70,
                                           new_ready_at=50)
    await denv.expect(3, 2, 0)
    assert sorted(denv.client.deletes) == sorted([excess["metadata"]["name"], old["metadata"]["name"]])


STORE_STATUS = [
    ("succeed immediately", 0, 0, 1, 0, None),
    ("succeed after one update failure", 1, 0, 2, 1, None),
    ("fail after two update failures", 2, 0, 2, 1, "fake update error"),
    ("fail after one update failure and one get failure", 1, 1, 1, 1, "fake get error"),
]


@pytest.mark.parametrize("name,update_errors,get_errors,updates,gets,err", STORE_STATUS, ids=[c[0] for c in STORE_STATUS])
async def test_store_daemonset_status(denv, name, update_errors, get_errors, updates, gets, err):
    await denv.create_ds(new_daemonset("foo"))
    await denv.add_nodes(0, 2)
    denv.client.fail_status, denv.client.fail_get = update_errors, get_errors
    got = await denv.sync()
    assert denv.client.calls.get(("update_status", "daemonsets"), 0) == updates
    assert denv.client.calls.get(("get", "daemonsets"), 0) == gets
    assert (got.message if got is not None else None) == err


# =============================================================================================
# update_test.go


def _image(image: str) -> Callable[[dict], None]:
    def fn(d: dict) -> None:
        d["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return fn


def _image_and_strategy(image: str, strategy: dict) -> Callable[[dict], None]:
    def fn(d: dict) -> None:
        _image(image)(d)
        d["spec"]["updateStrategy"] = copy.deepcopy(strategy)
    return fn


async def _launch(denv: DsEnv, nodes: int, ds: dict | None = None) -> None:
    await denv.add_nodes(0, nodes)
    await denv.create_ds(ds or new_daemonset("foo"))
    await denv.expect(nodes, 0, 0)


async def test_daemonset_updates_pods(denv):
    await _launch(denv, 5)
    await denv.mark_pods_ready()
    await denv.update_ds(_image_and_strategy("foo2/bar2", unavailable(2)))
    await denv.expect(0, 2, 0)
    await denv.expect(2, 0, 0)
    await denv.mark_pods_ready()
    await denv.expect(0, 2, 0)
    await denv.expect(2, 0, 0)
    await denv.mark_pods_ready()
    await denv.expect(0, 1, 0)
    await denv.expect(1, 0, 0)
    await denv.mark_pods_ready()
    await denv.expect(0, 0, 0)


async def test_daemonset_updates_pods_with_max_surge(denv):
    await _launch(denv, 5)
    await denv.mark_pods_ready()
    await denv.update_ds(_image_and_strategy("foo2/bar2", surge(2)))
    await denv.expect(2, 0, 0)
    await denv.expect(0, 0, 0)
    await denv.mark_pods_ready()
    await denv.expect(2, 2, 0)
    await denv.expect(0, 0, 0)
    await denv.mark_pods_ready()
    await denv.expect(5 % 2, 2, 0)
    await denv.expect(0, 0, 0)
    await denv.mark_pods_ready()
    await denv.expect(0, 5 % 2, 0)
    await denv.expect(0, 0, 0)


async def test_daemonset_updates_pods_not_match_taints_with_max_surge(denv):
    ds = new_daemonset("foo", surge(1))
    ds["spec"]["template"]["spec"]["tolerations"] = [{"key": "node-role.kubernetes.io/control-plane",
                                                     "operator": "Exists"}]
    await denv.create_ds(ds)
    await denv.add_node("node-0", taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}])
    await denv.add_nodes(1, 4)
    await denv.expect(5, 0, 0)
    await denv.mark_pods_ready()
    await denv.update_ds(lambda d: d["spec"]["template"]["spec"].pop("tolerations"))
    await denv.expect(1, 1, 0)
    await denv.expect(0, 0, 0)
    for _ in range(3):
        await denv.mark_pods_ready()
        await denv.expect(1, 1, 0)
        await denv.expect(0, 0, 0)
    await denv.mark_pods_ready()
    await denv.expect(0, 1, 0)
    await denv.expect(0, 0, 0)


async def test_daemonset_updates_when_new_pod_is_not_ready(denv):
    await _launch(denv, 5)
    await denv.mark_pods_ready()
    await denv.update_ds(_image_and_strategy("foo2/bar2", unavailable(3)))
    await denv.expect(0, 3, 0)
    await denv.expect(3, 0, 0)
    await denv.expect(0, 0, 0)


async def test_daemonset_updates_some_old_pods_not_ready(denv):
    await _launch(denv, 5)
    await denv.mark_pods_ready()
    await denv.update_ds(_image_and_strategy("foo2/bar2", unavailable(2)))
    await denv.expect(0, 2, 0)
    await denv.expect(2, 0, 0)
    await denv.expect(0, 0, 0)
    await denv.update_ds(_image("foo2/bar3"))
    await denv.expect(0, 2, 0)
    await denv.expect(2, 0, 0)
    await denv.expect(0, 0, 0)
    ready = [p for p in denv.pods() if any(c.get("type") == "Ready" and c.get("status") == "True"
                                            for c in p["status"].get("conditions") or [])]
    assert len(ready) == 5 - 2


def _ready_names(denv: DsEnv) -> set[str]:
    return {p["metadata"]["name"] for p in denv.pods()
            if any(c.get("type") == "Ready" and c.get("status") == "True" for c in p["status"].get("conditions") or [])}


async def test_daemonset_updates_save_old_healthy_pods(denv):
    await _launch(denv, 20)
    await denv.mark_pods_ready()
    await denv.update_ds(_image_and_strategy("foo2/bar2", unavailable(10)))
    await denv.expect(0, 10, 0)
    await denv.expect(10, 0, 0)
    await denv.expect(0, 0, 0)
    old_ready = _ready_names(denv)
    rng = random.Random(0)
    for i in range(10):
        # upstream draws rand.Intn(10); 0 is left out: the API rejects maxUnavailable 0 without maxSurge
        await denv.update_ds(_image_and_strategy(f"foo2/bar3-{i}", unavailable(rng.randrange(1, 10))))
        # only the 10 unavailable pods may be replaced
        await denv.expect(0, 10, 0)
        await denv.expect(10, 0, 0)
        await denv.expect(0, 0, 0)
        assert old_ready <= _ready_names(denv), f"pods changed in iteration {i}"
    await denv.update_ds(_image_and_strategy("foo2/bar4", unavailable(11)))
    await denv.expect(0, 11, 0)
    await denv.expect(11, 0, 0)
    await denv.expect(0, 0, 0)
    assert len(_ready_names(denv)) == 9


async def test_daemonset_updates_all_old_not_ready_pods_and_new_not_ready_pods(denv):
    await _launch(denv, 100)
    await denv.mark_pods_ready()
    first = denv.pods()[0]["metadata"]["labels"]
    # an old pod carries the old hash and (minik3s labels pods with a template generation, which
    # upstream's test DaemonSet lacks) the old generation
    hash1, gen1 = first[CONTROLLER_REVISION_HASH], first["pod-template-generation"]
    await denv.update_ds(_image_and_strategy("foo2/bar2", unavailable(10)))
    for _ in range(10):
        await denv.expect(0, 10, 0)
        await denv.expect(10, 0, 0)
        await denv.mark_pods_ready()
    await denv.expect(0, 0, 0)
    # 10 available old pods, 2 unavailable old pods, 88 unavailable new pods
    old_unavailable: set[str] = set()
    for i, pod in enumerate(sorted(denv.pods(), key=lambda p: p["metadata"]["name"])):
        if i >= 10:
            await denv.set_ready(pod, False)
        if i < 12:
            cur = denv.api.obj(PODS, pod["metadata"]["name"], NS)
            cur["metadata"]["labels"].update({CONTROLLER_REVISION_HASH: hash1, "pod-template-generation": gen1})
            await denv.api.update(PODS, cur)
            if i >= 10:
                old_unavailable.add(pod["metadata"]["name"])
    await denv.api.settle()
    await denv.expect(0, 2, 0)
    await denv.expect(2, 0, 0)
    await denv.expect(0, 0, 0)
    assert not old_unavailable & {p["metadata"]["name"] for p in denv.pods()}


async def test_daemonset_updates_all_old_pods_not_ready(denv):
    await _launch(denv, 5)
    await denv.update_ds(_image_and_strategy("foo2/bar2", unavailable(3)))
    await denv.expect(0, 5, 0)
    await denv.expect(5, 0, 0)
    await denv.expect(0, 0, 0)


async def test_daemonset_updates_all_old_pods_not_ready_max_surge(denv):
    await _launch(denv, 5)
    await denv.update_ds(_image_and_strategy("foo2/bar2", surge(3)))
    await denv.at(100)
    await denv.expect(5, 0, 0)  # every old pod is unavailable: surge on all nodes
    await denv.at(200)
    await denv.expect(0, 5, 0)  # the old pods go while the new ones are not ready yet
    await denv.set_pod_readiness(True, 5, lambda _p: True)

    def update(d: dict) -> None:
        d["spec"]["minReadySeconds"] = 15
        _image("foo3/bar3")(d)

    await denv.update_ds(update)
    await denv.at(300)
    await denv.expect(3, 0, 0)
    h = denv.hash()
    current = {}
    for p in denv.pods():
        if p["metadata"]["labels"].get(CONTROLLER_REVISION_HASH) == h:
            current.setdefault(target_node(p), []).append(p["metadata"]["name"])
    await denv.set_pod_readiness(True, 2, lambda p: p["metadata"]["labels"].get(CONTROLLER_REVISION_HASH) == h)
    await denv.set_pod_readiness(False, 1, lambda p: p["metadata"]["labels"].get(CONTROLLER_REVISION_HASH) != h
                                 and not current.get(target_node(p)))
    await denv.at(310)
    await denv.expect(1, 0, 0)  # the new pods wait for minReadySeconds; the unready old one is replaced
    await denv.at(320)
    await denv.expect(1, 3, 0)  # the new pods are available: the old ones go
    await denv.set_pod_readiness(True, 3, lambda p: p["metadata"]["labels"].get(CONTROLLER_REVISION_HASH) == h)
    await denv.at(340)
    await denv.expect(0, 2, 0)
    await denv.at(350)
    await denv.expect(0, 0, 0)


async def test_daemonset_updates_no_template_changed(denv):
    await _launch(denv, 5)
    await denv.update_ds(lambda d: d["spec"].update(updateStrategy=unavailable(3)))
    await denv.expect(0, 0, 0)


def _node(i: int) -> dict:
    return {"metadata": {"name": f"node-{i}"}, "spec": {}}


def _ready_pod(name: str, node: str, *, deleting: bool = False) -> dict:
    m: dict = {"name": name, "labels": dict(SIMPLE_DS_LABEL)}
    if deleting:
        m["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": m, "spec": {"nodeName": node},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


UNAVAILABLE_NUMBERS = [
    ("No nodes", 0, unavailable(0), {}, 0, 0, 0, 0),
    ("Two nodes with ready pods", 2, unavailable(1), {"node-0": ["pod-0"], "node-1": ["pod-1"]}, 0, 1, 2, 0),
    ("Two nodes, one node without pods", 2, unavailable(0), {"node-0": ["pod-0"]}, 0, 1, 2, 1),
    ("Two nodes, one node without pods, surge", 2, surge(0), {"node-0": ["pod-0"]}, 0, 1, 2, 1),
    ("Two nodes with pods, MaxUnavailable in percents", 2, unavailable("50%"),
     {"node-0": ["pod-0"], "node-1": ["pod-1"]}, 0, 1, 2, 0),
    ("Two nodes with pods, MaxUnavailable in percents, surge", 2, surge("50%"),
     {"node-0": ["pod-0"], "node-1": ["pod-1"]}, 1, 0, 2, 0),
    ("Two nodes with pods, MaxUnavailable is 100%, surge", 2, surge("100%"),
     {"node-0": ["pod-0"], "node-1": ["pod-1"]}, 2, 0, 2, 0),
    ("Two nodes with pods, MaxUnavailable in percents, pod terminating", 3, unavailable("50%"),
     {"node-0": ["pod-0"], "node-1": ["pod-1*"]}, 0, 2, 3, 1),
]


@pytest.mark.parametrize("name,nodes,strategy,node_to_pods,max_surge,max_unavailable,desired,empty",
                         UNAVAILABLE_NUMBERS, ids=[c[0] for c in UNAVAILABLE_NUMBERS])
def test_get_unavailable_numbers(name, nodes, strategy, node_to_pods, max_surge, max_unavailable, desired, empty):
    ds = new_daemonset("x", strategy)
    mapping = {n: [_ready_pod(p.rstrip("*"), n, deleting=p.endswith("*")) for p in pods]
               for n, pods in node_to_pods.items()}
    assert updated_desired_node_counts(ds, [_node(i) for i in range(nodes)], mapping) == (
        max_surge, max_unavailable, desired)
    assert sum(1 for pods in mapping.values() if not pods) == empty


CONTROLLED_HISTORIES = [
    ("controller revision in the same namespace", NS, ["ds1-x1", "ds1-x2"]),
    ("Skip adopting the controller revision in namespace other than the one in which DS lives", "default-other", []),
]


@pytest.mark.parametrize("name,orphan_ns,expected", CONTROLLED_HISTORIES, ids=[c[0] for c in CONTROLLED_HISTORIES])
async def test_controlled_histories(denv, name, orphan_ns, expected):
    """controlledHistories claims the DaemonSet's revisions and adopts matching orphans of its
    own namespace only (read back after a sync, which claims them first)."""
    from minik3s.api.resources import NAMESPACES
    if orphan_ns != NS:
        await denv.api.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": orphan_ns}})
    ds = await denv.create_ds(new_daemonset("ds1"))
    uid = ds["metadata"]["uid"]
    current = revision_data(denv.ds())
    if orphan_ns == NS:
        await denv.api.create(CONTROLLERREVISIONS, {
            "apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": "ds1-x1", "namespace": NS, "labels": dict(SIMPLE_DS_LABEL),
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds1",
                                              "uid": uid, "controller": True}]},
            "data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 1})
    await denv.api.create(CONTROLLERREVISIONS, {
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": "ds1-x2" if orphan_ns == NS else "ds1-x3", "namespace": orphan_ns,
                     "labels": dict(SIMPLE_DS_LABEL)},
        "data": current, "revision": 2})
    await denv.api.settle()
    denv.name = "ds1"
    assert await denv.sync() is None
    claimed = {r["metadata"]["name"] for r in denv.api.objects(CONTROLLERREVISIONS).values()
               if any(ref.get("uid") == uid and ref.get("controller") for ref in r["metadata"].get("ownerReferences")
                      or [])}
    if expected:
        assert claimed == set(expected)  # the adopted orphan holds the current template: no new revision
    else:
        orphan = denv.api.obj(CONTROLLERREVISIONS, "ds1-x3", orphan_ns)
        assert orphan is not None and not orphan["metadata"].get("ownerReferences")
        assert "ds1-x3" not in claimed


# =============================================================================================
# util/daemonset_util_test.go


def _labelled(labels: dict | None) -> dict:
    return {"metadata": {"name": "pod1", "namespace": NS, **({"labels": labels} if labels is not None else {})},
            "spec": {"nodeName": "node1", "containers": [{"image": "foo/bar"}]}}


HASH = "55555"
LABELS = {"pod-template-generation": "12345", CONTROLLER_REVISION_HASH: HASH}
LABELS_NO_HASH = {"pod-template-generation": "12345"}
IS_POD_UPDATED = [
    ("templateGeneration and hash both match", 12345, LABELS, HASH, True),
    ("templateGeneration matches, hash doesn't", 12345, LABELS, HASH + "123", True),
    ("templateGeneration matches, no hash label, has hash", 12345, LABELS_NO_HASH, HASH, True),
    ("templateGeneration matches, no hash label, no hash", 12345, LABELS_NO_HASH, "", True),
    ("templateGeneration matches, has hash label, no hash", 12345, LABELS, "", True),
    ("templateGeneration doesn't match, hash does", 12345 + 1, LABELS, HASH, True),
    ("templateGeneration and hash don't match", 12345 + 1, LABELS, HASH + "123", False),
    ("empty labels, no hash", 12345, {}, "", False),
    ("empty labels", 12345, {}, HASH, False),
    ("no labels", 12345, None, HASH, False),
]


@pytest.mark.parametrize("test,generation,labels,hash_,updated", IS_POD_UPDATED, ids=[c[0] for c in IS_POD_UPDATED])
def test_is_pod_updated(test, generation, labels, hash_, updated):
    assert is_pod_updated(_labelled(labels), hash_, generation) is updated


@pytest.mark.parametrize("generation,hash_,unique", [(1, "", False), (2, "3242341807", True)])
def test_create_pod_template(generation, hash_, unique):
    labels = create_pod_template({}, generation, hash_)["metadata"]["labels"]
    assert labels["pod-template-generation"] == str(generation)
    if unique:
        assert labels[CONTROLLER_REVISION_HASH] == hash_
    else:
        assert CONTROLLER_REVISION_HASH not in labels


def _req(*terms: dict) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def _fields(key: str, op: str, *values: str) -> dict:
    return {"matchFields": [{"key": key, "operator": op, "values": list(values)}]}


def _exprs(key: str, op: str, *values: str) -> dict:
    return {"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]}


HOST_1 = _req(_fields("metadata.name", "In", "host_1"))
PREFERRED = [{"preference": _exprs("kubernetes.io/hostname", "In", "host_1")}]
REPLACE_AFFINITY = [
    (None, HOST_1),
    (_req(_exprs("kubernetes.io/hostname", "In", "host_1")), HOST_1),
    ({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": PREFERRED}},
     {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": PREFERRED,
                       **HOST_1["nodeAffinity"]}}),
    (_req(_fields("metadata.name", "In", "host_1", "host_2")), HOST_1),
    (None, HOST_1),
    (_req(_exprs("hostname", "In", "host_1"), _fields("metadata.name", "In", "host_2")), HOST_1),
    (_req(_fields("metadata.name", "NotIn", "host_2")), HOST_1),
    (_req(_fields("metadata.foo", "In", "bar")), HOST_1),
]


@pytest.mark.parametrize("affinity,expected", REPLACE_AFFINITY, ids=[f"case {i}" for i in range(len(REPLACE_AFFINITY))])
def test_replace_daemonset_pod_node_name_node_affinity(affinity, expected):
    assert replace_node_name_affinity(copy.deepcopy(affinity), "host_1") == expected


GET_TARGET_NODE = [
    ({"nodeName": "node-1"}, "node-1"),
    ({"affinity": _req(_fields("metadata.name", "In", "node-1"))}, "node-1"),
    ({"affinity": _req(_fields("metadata.name", "In", "node-1", "node-2"))}, ""),
    ({}, ""),
]


@pytest.mark.parametrize("spec,node", GET_TARGET_NODE, ids=["pod1", "pod2", "pod3 (error)", "pod4 (error)"])
def test_get_target_node_name(spec, node):
    assert target_node({"metadata": {"name": "p"}, "spec": spec}) == node


@pytest.mark.parametrize("annotations,expected,error", [
    ({"deprecated.daemonset.template.generation": "foo"}, None, True),
    ({}, None, False),
    ({"deprecated.daemonset.template.generation": "1"}, 1, False),
], ids=["invalid annotation", "no annotation", "valid annotation"])
def test_get_template_generation(annotations, expected, error):
    ds = {"metadata": {"name": "foo", "annotations": annotations}}
    if error:
        with pytest.raises(ValueError):
            template_generation(ds)
    else:
        assert template_generation(ds) == expected


async def test_api_writes_the_template_generation_annotation(denv):
    await denv.create_ds(new_daemonset("foo"))
    assert denv.ds()["metadata"].get("annotations", {}).get("deprecated.daemonset.template.generation") == "1"



@pytest.mark.parametrize(("causes", "failed_create_events"), [
    pytest.param([{"reason": "NamespaceTerminating", "message": "namespace default is being terminated",
                   "field": "metadata.namespace"}], 0, id="namespace-terminating-is-quiet"),
    pytest.param([], 1, id="other-forbidden-is-reported"),
])
async def test_create_refused_by_a_terminating_namespace_records_no_failed_create(denv, causes, failed_create_events):
    """syncNodes: a pod create refused with the NamespaceTerminating cause (the Status cause's
    `reason`, apierrors.HasStatusCause) is expected while the namespace goes and records no
    FailedCreate event; any other refusal does."""
    await denv.add_node("node-0")
    denv.client.create_err = ForbiddenError("unable to create new content in namespace default because it is "
                                            "being terminated", details={"causes": causes})
    await denv.create_ds(new_daemonset("foo"))
    denv.clear()
    await denv.sync()
    assert [r for _t, r, _m in denv.events if r == "FailedCreate"] == ["FailedCreate"] * failed_create_events
