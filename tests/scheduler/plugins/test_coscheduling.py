"""Coscheduling and GangScheduling, method by method, in upstream's table style
(scheduler-plugins coscheduling_test.go, gangscheduling_test.go).

Every row runs against the real in-process API (ApiCore + LocalClient, the gang CRDs installed
by the server's bootstrap), the shared informers, and the default profile's real framework
runtime built by a real Scheduler on a fake clock: plugins are driven exactly as the scheduler
drives them (run_pre_enqueue, run_pre_filter, run_reserve, run_permit, wait_on_permit,
run_post_filter, run_unreserve, queue_sort_less, queueing hints).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from apiserver.core import ApiCore
from apiserver.storage.sqlite_store import SqliteStore
from minik3s.api.errors import InvalidError
from minik3s.api.gang import VOLCANO_PODGROUPS, VOLCANO_QUEUES, XK8S_PODGROUPS
from minik3s.api.resources import NODES, PODS, PRIORITYCLASSES, WORKLOADS, ResourceInfo, ResourceRegistry
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.local import LocalClient
from minik3s.client.rest import default_user_agent
from minik3s.server import _bootstrap
from minik3s.testing.builders import make_node, make_pod
from minik3s.utils.clock import FakeClock
from scheduler.backend.queue import QueuedPodInfo
from scheduler.config import parse_config
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import ActionType, ClusterEvent, Code, EventResource, QueueingHint, Status
from scheduler.framework.runtime import Framework
from scheduler.framework.types import PodInfo
from scheduler.scheduler import Scheduler


@dataclass
class Env:
    client: LocalClient
    informers: SharedInformerFactory
    sched: Scheduler
    clock: FakeClock

    @property
    def fw(self) -> Framework:
        return self.sched.frameworks["default-scheduler"]

    async def eventually(self, fn: Callable[[], Any], what: str) -> None:
        for _ in range(2000):
            if fn():
                return
            await asyncio.sleep(0)
        raise AssertionError(f"timed out waiting for {what}")

    async def create(self, res: ResourceInfo, obj: JsonDict) -> JsonDict:
        out = await self.client.create(res, obj, "default" if res.namespaced else None)
        key = f"{out['metadata'].get('namespace', 'default')}/{out['metadata']['name']}" if res.namespaced \
            else out["metadata"]["name"]
        inf = self.informers.informer(res)
        await self.eventually(lambda: inf.store.get(key) is not None, f"{res.resource} {key} in the informer")
        return out

    async def pods(self, *pods: JsonDict) -> list[JsonDict]:
        return [await self.create(PODS, p) for p in pods]

    async def nodes(self, n: int, *, gpus: int = 1) -> None:
        for i in range(n):
            await self.create(NODES, make_node(f"gpu-{i + 1}").capacity(
                {"cpu": "8", "memory": "16Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}).obj())
        await self.eventually(lambda: self.sched.cache.get_node_info(f"gpu-{n}") is not None, "nodes in the cache")

    def snapshot_nodes(self) -> list[Any]:
        self.sched.cache.update_snapshot(self.sched.snapshot)
        return list(self.sched.snapshot.node_info_list)


@pytest.fixture
async def env() -> AsyncIterator[Env]:
    store = SqliteStore(":memory:", compact_interval=0)
    await store.start()
    clock = FakeClock()  # the API server and the scheduler share it (creationTimestamps, Permit timers)
    core = ApiCore(store, ResourceRegistry(), clock=clock)
    client = LocalClient(core, user_agent=default_user_agent("kube-scheduler"))
    await _bootstrap(client, core, 6443)
    informers = SharedInformerFactory(client)
    sched = Scheduler(parse_config({}), client=client, informers=informers, clock=clock)
    task = asyncio.create_task(informers.run())
    await informers.wait_for_sync()
    try:
        yield Env(client, informers, sched, clock)
    finally:
        for fw in sched.frameworks.values():
            fw.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await store.close()


# ---------------------------------------------------------------------------------------------- objects
def xk8s_group(name: str, min_member: int, **spec: Any) -> JsonDict:
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"minMember": min_member, **spec}}


def volcano_group(name: str, min_member: int, **spec: Any) -> JsonDict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"minMember": min_member, **spec}}


def workload(name: str, min_count: int | None) -> JsonDict:
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": name},
            "spec": {"podGroups": [{"name": "workers", "policy": policy}]}}


def member(api: str, group: str, name: str, *, gpus: int = 1, task: str = "") -> JsonDict:
    b = make_pod(name).req({"nvidia.com/gpu": str(gpus)})
    if api == "x-k8s":
        b = b.labels({"scheduling.x-k8s.io/pod-group": group})
    elif api == "volcano":
        ann = {"scheduling.k8s.io/group-name": group}
        if task:
            ann["volcano.sh/task-spec"] = task
        b = b.annotations(ann)
    pod = b.obj()
    pod["metadata"].pop("uid", None)
    for c in pod["spec"]["containers"]:  # extended resources: limits must equal requests
        c["resources"]["limits"] = dict(c["resources"]["requests"])
    if api == "workload":
        pod["spec"]["workloadRef"] = {"name": group, "podGroup": "workers"}
    return pod


GROUPS: dict[str, tuple[ResourceInfo, Callable[..., JsonDict]]] = {
    "x-k8s": (XK8S_PODGROUPS, xk8s_group),
    "volcano": (VOLCANO_PODGROUPS, volcano_group),
    "workload": (WORKLOADS, lambda name, n, **_: workload(name, n)),
}


async def gang(env: Env, api: str, name: str, min_member: int, members: int, **spec: Any) -> list[JsonDict]:
    res, build = GROUPS[api]
    await env.create(res, build(name, min_member, **spec))
    return await env.pods(*(member(api, name, f"{name}-{i}") for i in range(members)))


def verdict(st: Status) -> tuple[str, str, str]:
    return Code(st.code).name, st.plugin if st.code else "", st.message()


# ---------------------------------------------------------------------------------------------- PreEnqueue
@pytest.mark.parametrize(("setup", "pod", "want"), [
    pytest.param(None, make_pod("plain").obj(), ("SUCCESS", "", ""), id="pod-outside-any-gang-passes"),
    pytest.param(None, member("x-k8s", "missing", "p"),
                 ("UNSCHEDULABLE_AND_UNRESOLVABLE", "Coscheduling", "podGroup default/missing not found"),
                 id="x-k8s-pod-group-missing-held"),
    pytest.param(("volcano", volcano_group("pg", 2, queue="nope")), member("volcano", "pg", "p"),
                 ("UNSCHEDULABLE_AND_UNRESOLVABLE", "Coscheduling",
                  "queue 'nope' of podGroup default/pg does not exist"), id="volcano-queue-missing-held"),
    pytest.param(("volcano", volcano_group("pg", 2)), member("volcano", "pg", "p"), ("SUCCESS", "", ""),
                 id="volcano-default-queue-exists-passes"),
    pytest.param(None, member("workload", "wl", "p"),
                 ("UNSCHEDULABLE_AND_UNRESOLVABLE", "GangScheduling", "waiting for Workload default/wl to be created"),
                 id="workload-missing-held"),
    pytest.param(("workload", workload("wl", 2)), member("workload", "wl", "p"),
                 ("UNSCHEDULABLE_AND_UNRESOLVABLE", "GangScheduling",
                  "waiting for minCount pods from a gang to appear in scheduling queue"),
                 id="workload-fewer-than-min-count-held"),
    pytest.param(("workload", workload("wl", None)), member("workload", "wl", "p"), ("SUCCESS", "", ""),
                 id="workload-basic-policy-is-no-gang"),
])
async def test_pre_enqueue(env, setup, pod, want):
    if setup is not None:
        api, obj = setup
        await env.create(GROUPS[api][0], obj)
    created = await env.create(PODS, pod)
    assert verdict(env.fw.run_pre_enqueue(created)) == want


async def test_pre_enqueue_passes_workload_pods_once_min_count_exist(env):
    pods = await gang(env, "workload", "wl", 2, 2)
    assert verdict(env.fw.run_pre_enqueue(pods[0])) == ("SUCCESS", "", "")
    wl = await env.client.get(WORKLOADS, "wl", "default")
    wl["spec"]["podGroups"][0]["name"] = "renamed"  # immutable: the API refuses it
    with pytest.raises(InvalidError, match="field is immutable"):
        await env.client.update(WORKLOADS, wl)


# ---------------------------------------------------------------------------------------------- PreFilter
@pytest.mark.parametrize(("api", "min_member", "members", "spec", "nodes", "want"), [
    pytest.param("x-k8s", 3, 2, {}, 3,
                 ("UNSCHEDULABLE_AND_UNRESOLVABLE", "Coscheduling",
                  "pre-filter pod g-0 cannot find enough sibling pods, current pods number: 2, minMember of group: 3"),
                 id="fewer-siblings-than-min-member"),
    pytest.param("x-k8s", 2, 2, {}, 3, ("SUCCESS", "", ""), id="enough-siblings"),
    pytest.param("x-k8s", 4, 4, {"minResources": {"nvidia.com/gpu": 4}}, 3,
                 ("UNSCHEDULABLE_AND_UNRESOLVABLE", "Coscheduling",
                  "podGroup default/g minResources do not fit the cluster, resource gap: nvidia.com/gpu: 1"),
                 id="min-resources-exceed-free-gpus"),
    pytest.param("volcano", 4, 4, {"minResources": {"nvidia.com/gpu": 4}}, 4, ("SUCCESS", "", ""),
                 id="min-resources-fit"),
    pytest.param("volcano", 2, 2, {"minResources": {"pods": 1}}, 1, ("SUCCESS", "", ""),
                 id="min-member-pod-slots-fit"),
    pytest.param("volcano", 3, 3, {"minTaskMember": {"ps": 1, "worker": 3}}, 3,
                 ("UNSCHEDULABLE_AND_UNRESOLVABLE", "Coscheduling",
                  "pre-filter pod g-0 cannot find enough pods of task ps, current pods number: 0, "
                  "minTaskMember of task: 1"), id="volcano-min-task-member-missing-task"),
    pytest.param("workload", 3, 3, {}, 3, ("SUCCESS", "", ""), id="workload-gang-complete"),
])
async def test_pre_filter(env, api, min_member, members, spec, nodes, want):
    await env.nodes(nodes)
    pods = await gang(env, api, "g", min_member, members, **spec)
    _, st, _ = env.fw.run_pre_filter(CycleState(), PodInfo(pods[0]), env.snapshot_nodes())
    assert verdict(st) == want


async def test_pre_filter_counts_the_groups_own_pods_as_free(env):
    """Bound members of the same group do not count against its minResources (upstream
    CheckClusterResource removes them from each node first)."""
    await env.nodes(2)
    await env.create(XK8S_PODGROUPS, xk8s_group("g", 2, minResources={"nvidia.com/gpu": 2}))
    bound = member("x-k8s", "g", "g-0")
    bound["spec"]["nodeName"] = "gpu-1"
    await env.pods(bound, member("x-k8s", "g", "g-1"))
    await env.eventually(lambda: env.sched.cache.get_node_info("gpu-1").pods, "bound member in the cache")
    pod = env.informers.informer(PODS).store.get("default/g-1")
    _, st, _ = env.fw.run_pre_filter(CycleState(), PodInfo(pod), env.snapshot_nodes())
    assert verdict(st) == ("SUCCESS", "", "")


# ---------------------------------------------------------------------------------------------- Reserve + Permit
@pytest.mark.parametrize(("api", "spec", "want_timeout"), [
    pytest.param("x-k8s", {"scheduleTimeoutSeconds": 7}, 7.0, id="x-k8s-schedule-timeout-seconds"),
    pytest.param("x-k8s", {}, 60.0, id="x-k8s-default-permit-waiting-time"),
    pytest.param("volcano", {}, 60.0, id="volcano-default-permit-waiting-time"),
    pytest.param("workload", {}, 60.0, id="workload-default-permit-waiting-time"),
])
async def test_permit_waits_until_min_member_are_assumed_then_allows_all(env, api, spec, want_timeout):
    pods = await gang(env, api, "g", 3, 3, **spec)
    pis = [PodInfo({**p, "spec": {**p["spec"], "nodeName": f"gpu-{i}"}}) for i, p in enumerate(pods)]
    plugin = "GangScheduling" if api == "workload" else "Coscheduling"
    pl = env.fw.plugins[plugin]
    for pi in pis[:2]:
        assert env.fw.run_reserve(CycleState(), pi, pi.node_name).is_success()
        st, timeout = pl.permit(CycleState(), pi, pi.node_name)
        assert (st.code, timeout) == (Code.WAIT, want_timeout)
        assert env.fw.run_permit(CycleState(), pi, pi.node_name).code == Code.WAIT
    assert sorted(wp.pod_info.name for wp in env.fw.iterate_waiting_pods()) == ["g-0", "g-1"]
    waits = [asyncio.create_task(env.fw.wait_on_permit(pi)) for pi in pis[:2]]
    await asyncio.sleep(0)
    assert not any(t.done() for t in waits)
    # the third member reaches the quorum: Permit succeeds and allows the two waiting at once
    assert env.fw.run_reserve(CycleState(), pis[2], "gpu-2").is_success()
    assert env.fw.run_permit(CycleState(), pis[2], "gpu-2").is_success()
    assert [verdict(s) for s in await asyncio.gather(*waits)] == [("SUCCESS", "", "")] * 2
    assert env.fw.iterate_waiting_pods() == []


async def test_permit_timeout_rejects_every_waiting_member_and_releases_reservations(env):
    pods = await gang(env, "x-k8s", "g", 3, 3, scheduleTimeoutSeconds=10)
    pis = [PodInfo({**p, "spec": {**p["spec"], "nodeName": "gpu-1"}}) for p in pods[:2]]
    for pi in pis:
        env.fw.run_reserve(CycleState(), pi, "gpu-1")
        assert env.fw.run_permit(CycleState(), pi, "gpu-1").code == Code.WAIT
    waits = [asyncio.create_task(env.fw.wait_on_permit(pi)) for pi in pis]
    await env.eventually(lambda: env.clock.sleepers == 2, "two permit timers")
    env.clock.advance(9.9)
    await asyncio.sleep(0)
    assert not any(t.done() for t in waits)
    env.clock.advance(0.2)
    first = await asyncio.wait_for(waits[0], 1)
    assert verdict(first) == ("UNSCHEDULABLE", "Coscheduling",
                              "rejected due to timeout after waiting 10s at plugin Coscheduling")
    # the scheduler unreserves the rejected pod: Unreserve rejects every other waiting member
    env.fw.run_unreserve(CycleState(), pis[0], "gpu-1")
    second = await asyncio.wait_for(waits[1], 1)
    assert second.code == Code.UNSCHEDULABLE
    env.fw.run_unreserve(CycleState(), pis[1], "gpu-1")
    assert env.fw.plugins["Coscheduling"].explain_gang(pods[0])["assigned"] == 0


# ---------------------------------------------------------------------------------------------- PostFilter
@pytest.mark.parametrize(("min_member", "assumed", "want_rejected", "want_msg"), [
    pytest.param(4, 3, True, "PodGroup default/g gets rejected due to Pod g-3 is unschedulable even after PostFilter",
                 id="group-cannot-reach-min-member-rejects-waiting-members"),
    pytest.param(3, 3, False, "", id="min-member-already-assumed-only-this-pod-fails"),
    pytest.param(20, 19, False, "", id="at-most-10-percent-missing-only-this-pod-fails"),
])
async def test_post_filter(env, min_member, assumed, want_rejected, want_msg):
    pods = await gang(env, "volcano", "g", min_member, min_member)
    waits = []
    for p in pods[:assumed]:
        pi = PodInfo({**p, "spec": {**p["spec"], "nodeName": "gpu-1"}})
        env.fw.run_reserve(CycleState(), pi, "gpu-1")
        if env.fw.run_permit(CycleState(), pi, "gpu-1").code == Code.WAIT:
            waits.append(asyncio.create_task(env.fw.wait_on_permit(pi)))
    failing = PodInfo(pods[assumed] if assumed < len(pods) else pods[-1])
    pl = env.fw.plugins["Coscheduling"]
    _, st = await pl.post_filter(CycleState(), failing, {"gpu-1": Status.unschedulable("Insufficient nvidia.com/gpu")})
    assert (Code(st.code).name, st.message()) == ("UNSCHEDULABLE", want_msg)
    await asyncio.sleep(0)
    done = [t for t in waits if t.done()]
    if want_rejected:
        assert len(done) == len(waits) == assumed
        assert {t.result().message() for t in done} == {"optimistic rejection in PostFilter"}
    else:  # nobody was rejected (a complete gang was allowed by its last member's Permit)
        assert all(t.result().is_success() for t in done)
        for t in waits:
            t.cancel()


async def test_post_filter_backs_the_group_off_when_configured(env):
    sched = Scheduler(parse_config({"profiles": [{"pluginConfig": [
        {"name": "Coscheduling", "args": {"podGroupBackoffSeconds": 30}}]}]}),
        client=env.client, informers=env.informers, clock=env.clock)
    fw = sched.frameworks["default-scheduler"]
    pods = await gang(env, "x-k8s", "g", 2, 2)
    await fw.plugins["Coscheduling"].post_filter(CycleState(), PodInfo(pods[1]), {})
    _, st, _ = fw.run_pre_filter(CycleState(), PodInfo(pods[0]), [])
    assert verdict(st) == ("UNSCHEDULABLE_AND_UNRESOLVABLE", "Coscheduling", "podGroup default/g failed recently")
    env.clock.advance(31)
    _, st, _ = fw.run_pre_filter(CycleState(), PodInfo(pods[0]), [])
    assert st.is_success()
    fw.close()


def test_plugin_args_are_validated():
    from scheduler.config import ConfigError

    with pytest.raises(ConfigError, match=r"pluginConfig\[0\]\.args\.permitWaitingTimeSeconds"):
        Scheduler(parse_config({"profiles": [{"pluginConfig": [
            {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": -1}}]}]}),
            client=None, informers=None)


# ---------------------------------------------------------------------------------------------- QueueSort
def queued(pod: JsonDict, ts: float) -> QueuedPodInfo:
    return QueuedPodInfo(PodInfo(pod), timestamp=ts)


async def test_queue_sort_keeps_gangs_together_and_orders_older_gangs_first(env):
    await env.create(XK8S_PODGROUPS, xk8s_group("old", 2))
    env.clock.advance(5)
    await env.create(WORKLOADS, workload("young", 2))
    old = [await env.create(PODS, member("x-k8s", "old", f"old-{i}")) for i in range(2)]
    young = [await env.create(PODS, member("workload", "young", f"young-{i}")) for i in range(2)]
    plain = await env.create(PODS, make_pod("plain").obj())
    await env.create(PRIORITYCLASSES, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                       "metadata": {"name": "urgent"}, "value": 100})
    up = member("workload", "young", "young-urgent")
    up["spec"]["priorityClassName"] = "urgent"
    up["spec"].pop("priority", None)
    urgent = await env.create(PODS, up)
    now = env.clock.monotonic()
    # queue timestamps interleave the gangs; the order must not
    q = [queued(young[0], now + 1), queued(old[1], now + 2), queued(plain, now + 3), queued(young[1], now + 4),
         queued(old[0], now + 5), queued(urgent, now + 6)]
    from functools import cmp_to_key

    ordered = sorted(q, key=cmp_to_key(lambda a, b: -1 if env.fw.queue_sort_less(a, b)
                                       else (1 if env.fw.queue_sort_less(b, a) else 0)))
    assert [x.pod_info.name for x in ordered] == ["young-urgent", "old-0", "old-1", "young-0", "young-1", "plain"]


@pytest.mark.parametrize(("pa", "ta", "pb", "tb", "want"), [
    pytest.param(0, 1.0, 0, 2.0, True, id="earlier-timestamp-first-as-prioritysort"),
    pytest.param(0, 2.0, 0, 1.0, False, id="later-timestamp-second-as-prioritysort"),
    pytest.param(5, 2.0, 0, 1.0, True, id="higher-priority-first-as-prioritysort"),
])
def test_queue_sort_matches_priority_sort_outside_gangs(pa, ta, pb, tb, want):
    from scheduler.plugins.coscheduling import Coscheduling
    from scheduler.plugins.priority_sort import PrioritySort

    a, b = make_pod("a").priority(pa).obj(), make_pod("b").priority(pb).obj()
    assert Coscheduling(None, None).less(queued(a, ta), queued(b, tb)) is want
    assert PrioritySort(None, None).less(queued(a, ta), queued(b, tb)) is want


# ---------------------------------------------------------------------------------------------- hints
async def test_queueing_hints_requeue_a_gang_on_its_own_events_only(env):
    await env.create(XK8S_PODGROUPS, xk8s_group("g", 2))
    await env.create(XK8S_PODGROUPS, xk8s_group("other", 2))
    pod = await env.create(PODS, member("x-k8s", "g", "g-0"))
    regs = env.fw.events_to_register()["Coscheduling"]

    def hint(resource: EventResource, action: ActionType, new: Any) -> QueueingHint:
        ev = ClusterEvent(resource, action)
        out = [r.hint_fn(PodInfo(pod), None, new) for r in regs if r.event.matches(ev)]
        assert out, f"no registration for {resource} {action}"
        return max(out)

    assert hint(EventResource.UNSCHEDULED_POD, ActionType.ADD, member("x-k8s", "g", "g-1")) == QueueingHint.QUEUE
    assert hint(EventResource.UNSCHEDULED_POD, ActionType.ADD, member("x-k8s", "other", "o-1")) == QueueingHint.SKIP
    assert hint(EventResource.UNSCHEDULED_POD, ActionType.ADD, make_pod("plain").obj()) == QueueingHint.SKIP
    same = env.informers.informer(XK8S_PODGROUPS).store.get("default/g")
    other = env.informers.informer(XK8S_PODGROUPS).store.get("default/other")
    assert hint(EventResource.POD_GROUP, ActionType.UPDATE, same) == QueueingHint.QUEUE
    assert hint(EventResource.POD_GROUP, ActionType.ADD, other) == QueueingHint.SKIP
    # a Volcano PodGroup of the same name is another gang
    assert hint(EventResource.POD_GROUP, ActionType.ADD, {**volcano_group("g", 2),
                                                          "metadata": {"name": "g", "namespace": "default"}}
                ) == QueueingHint.SKIP
    assert hint(EventResource.NODE, ActionType.ADD, make_node("n").obj()) == QueueingHint.QUEUE
    assert hint(EventResource.ASSIGNED_POD, ActionType.DELETE, make_pod("gone").obj()) == QueueingHint.QUEUE


async def test_volcano_queue_creation_requeues_its_groups(env):
    await env.create(VOLCANO_PODGROUPS, volcano_group("pg", 1, queue="gpu"))
    pod = await env.create(PODS, member("volcano", "pg", "p"))
    assert env.fw.run_pre_enqueue(pod).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    regs = env.fw.events_to_register()["Coscheduling"]
    queue = await env.create(VOLCANO_QUEUES, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                                              "metadata": {"name": "gpu"}})
    ev = ClusterEvent(EventResource.POD_GROUP, ActionType.ADD)
    assert max(r.hint_fn(PodInfo(pod), None, queue) for r in regs if r.event.matches(ev)) == QueueingHint.QUEUE
    assert env.fw.run_pre_enqueue(pod).is_success()


# ---------------------------------------------------------------------------------------------- replicas, explain
async def test_each_workload_replica_key_is_its_own_gang(env):
    await env.create(WORKLOADS, workload("wl", 2))

    def replica(name: str, key: str) -> JsonDict:
        pod = member("workload", "wl", name)
        pod["spec"]["workloadRef"]["podGroupReplicaKey"] = key
        return pod

    a0, b0 = await env.pods(replica("a-0", "a"), replica("b-0", "b"))
    assert env.fw.run_pre_enqueue(a0).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    (a1,) = await env.pods(replica("a-1", "a"))
    assert env.fw.run_pre_enqueue(a0).is_success() and env.fw.run_pre_enqueue(a1).is_success()
    # replica b still has one member of two
    assert verdict(env.fw.run_pre_enqueue(b0)) == (
        "UNSCHEDULABLE_AND_UNRESOLVABLE", "GangScheduling",
        "waiting for minCount pods from a gang to appear in scheduling queue")


async def test_explain_shows_the_gang_of_a_pod_held_before_any_attempt(env):
    await env.create(WORKLOADS, workload("wl", 3))
    (p,) = await env.pods(member("workload", "wl", "wl-0"))
    out = env.sched.explain("default", "wl-0")
    assert out is not None and out["result"] == "NotAttempted"
    gang = out["gang"]
    assert {k: gang[k] for k in ("api", "group", "plugin", "minMember", "members", "assumed", "bound", "state")} == {
        "api": "workload", "group": "default/wl/workers", "plugin": "GangScheduling", "minMember": 3,
        "members": 1, "assumed": 0, "bound": 0, "state": "WaitingForMembers"}
    assert gang["waiting"] == "1/3 member pods exist; waiting for 2 more to be created"
    assert env.sched.explain("default", "nobody") is None


async def test_first_waiting_member_activates_its_siblings_in_unschedulable(env):
    pods = await gang(env, "x-k8s", "g", 2, 2)
    queue = env.sched.queue
    first = await queue.pop()
    second = await queue.pop()
    assert (first.pod_info.name, second.pod_info.name) == ("g-0", "g-1")  # the gang leaves together
    second.unschedulable_plugins = {"NodeResourcesFit"}
    queue.add_unschedulable_if_not_present(second, queue.scheduling_cycle)
    assert queue.where(second.uid) == "unschedulablePods"
    pi = PodInfo({**pods[0], "spec": {**pods[0]["spec"], "nodeName": "gpu-1"}})
    env.fw.run_reserve(CycleState(), pi, "gpu-1")
    assert env.fw.run_permit(CycleState(), pi, "gpu-1").code == Code.WAIT
    assert queue.where(second.uid) == "activeQ"


async def test_a_sibling_losing_its_scheduling_gates_requeues_the_gang(env):
    await env.create(XK8S_PODGROUPS, xk8s_group("g", 2))
    pod = await env.create(PODS, member("x-k8s", "g", "g-0"))
    regs = env.fw.events_to_register()["Coscheduling"]
    ev = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    ungated = member("x-k8s", "g", "g-1")
    assert max(r.hint_fn(PodInfo(pod), None, ungated) for r in regs if r.event.matches(ev)) == QueueingHint.QUEUE


# ---------------------------------------------------------------------------------------------- the loop
async def cycles(env: Env, n: int) -> None:
    for _ in range(n):
        await env.sched.schedule_one()


async def test_scheduler_loop_gang_that_cannot_complete_holds_nothing(env):
    """Four Workload members on three one-GPU nodes through the real scheduling loop: three are
    assumed and wait at Permit, the fourth fits nowhere, PostFilter rejects the three, and no
    reservation or binding is left."""
    await env.nodes(3)
    pods = await gang(env, "workload", "wl", 4, 4)
    await cycles(env, 3)
    assert len(env.fw.iterate_waiting_pods()) == 3
    assert sum(env.sched.cache.is_assumed(p["metadata"]["uid"]) for p in pods) == 3
    await cycles(env, 1)  # the fourth: Insufficient nvidia.com/gpu -> PostFilter
    await env.sched.wait_for_bindings()
    assert env.fw.iterate_waiting_pods() == []
    assert not any(env.sched.cache.is_assumed(p["metadata"]["uid"]) for p in pods)
    for p in pods:
        assert (await env.client.get(PODS, p["metadata"]["name"], "default"))["spec"].get("nodeName") is None
    assert all(env.sched.queue.where(p["metadata"]["uid"]) in ("backoffQ", "unschedulablePods") for p in pods)


async def test_scheduler_loop_permit_timeout_releases_assumed_members_on_the_fake_clock(env):
    await env.nodes(3)
    await env.create(XK8S_PODGROUPS, xk8s_group("g", 3, scheduleTimeoutSeconds=30))
    gated = member("x-k8s", "g", "g-2")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/hold"}]
    pods = await env.pods(member("x-k8s", "g", "g-0"), member("x-k8s", "g", "g-1"), gated)
    await cycles(env, 2)
    uids = [p["metadata"]["uid"] for p in pods[:2]]
    assert all(env.sched.cache.is_assumed(u) for u in uids)
    await env.eventually(lambda: env.clock.sleepers >= 2, "permit timers")
    env.clock.advance(29)
    await asyncio.sleep(0)
    assert len(env.fw.iterate_waiting_pods()) == 2
    env.clock.advance(2)
    await env.sched.wait_for_bindings()
    assert env.fw.iterate_waiting_pods() == []
    assert not any(env.sched.cache.is_assumed(u) for u in uids)
    ex = env.sched.explain("default", "g-0")
    assert ex is not None and "rejected due to timeout after waiting 30s at plugin Coscheduling" in ex["message"]
    for p in pods:
        assert (await env.client.get(PODS, p["metadata"]["name"], "default"))["spec"].get("nodeName") is None


# ---------------------------------------------------------------------------------------------- gang-aware preemption
async def classes(env: Env) -> None:
    for name, value in (("low", 10), ("mid", 500), ("high", 1000), ("critical", 5000)):
        await env.create(PRIORITYCLASSES, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                           "metadata": {"name": name}, "value": value})


def filler(name: str, node: str, pc: str) -> JsonDict:
    pod = make_pod(name).req({"nvidia.com/gpu": "1"}).node(node).obj()
    pod["metadata"].pop("uid", None)
    pod["spec"]["priorityClassName"] = pc
    for c in pod["spec"]["containers"]:
        c["resources"]["limits"] = dict(c["resources"]["requests"])
    return pod


@pytest.mark.parametrize(
    ("api", "nodes", "min_member", "members", "node_pcs", "selector", "want_evicted", "want_msg"),
    [
        # a gang of 4 on 5 full nodes: the four nodes of the lowest victims, nothing on gpu-5
        ("x-k8s", 5, 4, 4, ["low", "low", "low", "low", "mid"], None, ["f-1", "f-2", "f-3", "f-4"], ""),
        ("volcano", 5, 4, 4, ["low", "low", "low", "low", "mid"], None, ["f-1", "f-2", "f-3", "f-4"], ""),
        ("workload", 5, 4, 4, ["low", "low", "low", "low", "mid"], None, ["f-1", "f-2", "f-3", "f-4"], ""),
        # minMember 2 of 4 members: exactly two nodes' worth of victims
        ("x-k8s", 5, 2, 4, ["low", "mid", "low", "mid", "mid"], None, ["f-1", "f-3"], ""),
        # one node holds a pod above the gang: 3 of 4 members could fit, nothing is evicted
        ("x-k8s", 4, 4, 4, ["low", "low", "low", "critical"], None, [],
         "podGroup default/g cannot be placed even after preemption: 3 of the 4 members it still needs would fit"),
        ("workload", 4, 4, 4, ["low", "low", "low", "critical"], None, [],
         "cannot be placed even after preemption: 3 of the 4 members it still needs would fit"),
        # each member's own filters count: the sibling may only run on gpu-3, held by a pod above
        # the gang, so evicting gpu-1 and gpu-2 would not complete the gang
        ("x-k8s", 3, 2, 2, ["low", "low", "critical"], "gpu-3", [],
         "cannot be placed even after preemption: 1 of the 2 members it still needs would fit"),
    ],
)
async def test_gang_preemption_evicts_only_when_the_whole_gang_fits(
        env, api, nodes, min_member, members, node_pcs, selector, want_evicted, want_msg):
    await classes(env)
    await env.nodes(nodes)
    fillers = await env.pods(*(filler(f"f-{i + 1}", f"gpu-{i + 1}", pc) for i, pc in enumerate(node_pcs)))
    await env.eventually(lambda: all(env.sched.cache.get_node_info(f"gpu-{i + 1}") is not None
                                     and env.sched.cache.get_node_info(f"gpu-{i + 1}").pods
                                     for i in range(nodes)), "fillers in the cache")
    res, build = GROUPS[api]
    await env.create(res, build("g", min_member))
    gang_pods = []
    for i in range(members):
        p = member(api, "g", f"g-{i}")
        p["spec"]["priorityClassName"] = "high"
        if selector and i == 1:
            p["spec"]["nodeSelector"] = {"kubernetes.io/hostname": selector}
        gang_pods.append(p)
    created = await env.pods(*gang_pods)
    await cycles(env, 1)  # the first member: no node fits -> PostFilter -> (gang) preemption
    await env.sched.wait_for_bindings()
    evicted = []
    for f in fillers:
        if (await env.client.get(PODS, f["metadata"]["name"], "default"))["metadata"].get("deletionTimestamp"):
            evicted.append(f["metadata"]["name"])
    assert evicted == want_evicted
    got = {p["metadata"]["name"]: await env.client.get(PODS, p["metadata"]["name"], "default") for p in created}
    # the scheduler's nominations (the preemptor's reaches the API with its failure status)
    nominated = {n: (p.get("status") or {}).get("nominatedNodeName")
                 or env.sched.queue.nominator.nominated_node(p["metadata"]["uid"]) for n, p in got.items()}
    if want_evicted:
        # the placed members are nominated to the evicted nodes, one each; the rest to none
        evicted_nodes = sorted(f"gpu-{n.split('-')[1]}" for n in want_evicted)
        assert sorted(v for v in nominated.values() if v) == evicted_nodes
        for name in want_evicted:
            victim = await env.client.get(PODS, name, "default")
            cond = next(c for c in victim["status"]["conditions"] if c["type"] == "DisruptionTarget")
            assert cond["reason"] == "PreemptionByScheduler"
        # while the victims terminate no member may preempt again (held or not eligible)
        await cycles(env, 1)
        await env.sched.wait_for_bindings()
        still = [f["metadata"]["name"] for f in fillers if f["metadata"]["name"] not in want_evicted]
        for name in still:
            assert not (await env.client.get(PODS, name, "default"))["metadata"].get("deletionTimestamp")
    else:
        assert not any(nominated.values())
        ex = env.sched.explain("default", created[0]["metadata"]["name"])
        assert ex is not None and want_msg in ex["message"], ex
