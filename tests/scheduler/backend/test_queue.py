"""PriorityQueue semantics (upstream scheduling_queue_test.go style) with a fake clock.

The queue is built as the scheduler builds it: one real `Framework` per profile of a real
KubeSchedulerConfiguration (scheduler.config: parse_config, build_registry, profile_spec),
with the real QueueSort (PrioritySort) and PreEnqueue (SchedulingGates) plugins and small test
plugins registered in the registry the way out-of-tree plugins are. The test plugins reject
nothing themselves (the tests mark popped pods as rejected by them); what they contribute is
their EventsToRegister and QueueingHints: Fit (Node Add when the node has >= 4 CPUs, or any
Node Add with its `nodeAddOnly` arg; AssignedPod Delete), Never (every Node event, hint Skip),
Flaky (Node Add, a hint that raises), Wild (the wildcard), Tol / ScaleDown / AnyUpdate (pod
update events, enabled only where a test asks)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, Field

from minik3s.api.types import JsonDict
from minik3s.testing.builders import make_node, make_pod
from minik3s.utils.clock import FakeClock
from scheduler.backend.heap import KeyedHeap
from scheduler.backend.queue import (
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_NODE_ADD,
    PriorityQueue,
    QueuedPodInfo,
    node_scheduling_property_changes,
    pod_scheduling_property_changes,
)
from scheduler.config import build_registry, parse_config, profile_spec, validate_plugin_args
from scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    QueueingHint,
    Status,
)
from scheduler.framework.runtime import Framework
from scheduler.framework.types import PodInfo
from scheduler.plugins.registry import in_tree_registry


def _never(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.SKIP


def _boom(pod: Any, old: Any, new: Any) -> QueueingHint:
    raise RuntimeError("hint failed")


def _only_big_nodes(pod: Any, old: Any, new: Any) -> QueueingHint:
    cpu = ((new or {}).get("status") or {}).get("allocatable", {}).get("cpu", "0")
    return QueueingHint.QUEUE if int(cpu) >= 4 else QueueingHint.SKIP


class _Registers(FilterPlugin, EnqueueExtensions):
    """A Filter that admits every node; the tests use only the events it registers."""

    NAME = ""
    EVENTS: ClassVar[list[ClusterEventWithHint]] = []

    def filter(self, state: Any, pod: Any, node: Any) -> Status:
        return Status.success()

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return list(self.EVENTS)


class Fit(_Registers):
    NAME = "Fit"

    class Args(BaseModel):
        model_config = ConfigDict(extra="forbid", populate_by_name=True)
        node_add_only: bool = Field(False, alias="nodeAddOnly")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if self.args.node_add_only:
            return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD), _only_big_nodes),
                ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE))]


class Never(_Registers):
    NAME = "Never"
    EVENTS = [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ALL), _never)]


class Flaky(_Registers):
    NAME = "Flaky"
    EVENTS = [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD), _boom)]


class Wild(_Registers):
    NAME = "Wild"
    EVENTS = [ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL))]


class Tol(_Registers):
    NAME = "Tol"
    EVENTS = [ClusterEventWithHint(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_TOLERATIONS))]


class ScaleDown(_Registers):
    NAME = "ScaleDown"
    EVENTS = [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCALE_DOWN))]


class AnyUpdate(_Registers):
    NAME = "AnyUpdate"
    EVENTS = [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE))]


TEST_PLUGINS = (Fit, Never, Flaky, Wild, Tol, ScaleDown, AnyUpdate)
BASE_PLUGINS = ("PrioritySort", "SchedulingGates", "Fit", "Never", "Flaky", "Wild", "DefaultBinder")


def profile(name: str, plugins: Sequence[str] = BASE_PLUGINS, *,
            plugin_config: list[JsonDict] | None = None) -> JsonDict:
    return {"schedulerName": name,
            "plugins": {"multiPoint": {"enabled": [{"name": n} for n in plugins], "disabled": [{"name": "*"}]}},
            "pluginConfig": plugin_config or []}


def new_queue(clock: FakeClock, *profiles: JsonDict) -> PriorityQueue:
    """The queue over one real Framework per profile, as Scheduler.__init__ wires them."""
    cfg = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                        "profiles": list(profiles or [profile("default-scheduler")])})
    registry = build_registry(cfg, {**in_tree_registry(), **{p.NAME: p for p in TEST_PLUGINS}})
    validate_plugin_args(cfg, registry)
    frameworks = {prof.scheduler_name: Framework(profile_spec(prof, registry), registry, clock=clock)
                  for prof in cfg.profiles}
    return PriorityQueue(frameworks, clock=clock)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def q(clock: FakeClock) -> PriorityQueue:
    return new_queue(clock)


@pytest.fixture
def queue_with(clock: FakeClock) -> Callable[..., PriorityQueue]:
    """The default profile with more test plugins enabled."""
    return lambda *extra: new_queue(clock, profile("default-scheduler", (*BASE_PLUGINS, *extra)))


async def fail(q: PriorityQueue, name: str, *plugins: str, pending: tuple[str, ...] = ()) -> QueuedPodInfo:
    """Pop `name` and return it as rejected by `plugins`."""
    qpi = await q.pop()
    assert qpi is not None and qpi.pod_info.name == name
    qpi.unschedulable_plugins = set(plugins)
    qpi.pending_plugins = set(pending)
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    return qpi


@pytest.mark.parametrize(("attempts", "want"), [
    pytest.param(0, 0.0, id="never-tried-no-backoff"),
    pytest.param(1, 1.0, id="first-failure-1s"),
    pytest.param(2, 2.0, id="doubles"),
    pytest.param(4, 8.0, id="8s"),
    pytest.param(5, 10.0, id="capped-at-max"),
    pytest.param(30, 10.0, id="stays-capped"),
])
def test_backoff_duration(q, attempts, want):
    qpi = QueuedPodInfo(PodInfo(make_pod("p").obj()), attempts=attempts)
    assert q.backoff_duration(qpi) == want


async def test_pop_order_priority_then_fifo(q, clock):
    q.add(make_pod("low").priority(1).obj())
    clock.advance(1)
    q.add(make_pod("high").priority(10).obj())
    clock.advance(1)
    q.add(make_pod("low2").priority(1).obj())
    got = [(await q.pop()).pod_info.name for _ in range(3)]
    assert got == ["high", "low", "low2"]


async def test_pop_blocks_until_a_pod_is_added(q):
    popper = asyncio.create_task(q.pop())
    await asyncio.sleep(0)
    assert not popper.done()
    q.add(make_pod("p").obj())
    assert (await asyncio.wait_for(popper, 5)).pod_info.name == "p"
    q.close()
    assert await q.pop() is None


async def test_gated_pod_is_never_popped_until_ungated(q):
    q.add(make_pod("g").scheduling_gates("x").obj())
    assert q.where("uid-default-g") == "unschedulablePods"
    assert q.get("uid-default-g").gating_plugin == "SchedulingGates"
    q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, make_node("n").obj())
    assert q.where("uid-default-g") == "unschedulablePods"
    q.update(make_pod("g").scheduling_gates("x").obj(), make_pod("g").obj())
    assert q.where("uid-default-g") == "activeQ"


@pytest.mark.parametrize(("plugins", "node_cpu", "want"), [
    pytest.param(("Fit",), "8", "backoffQ", id="hint-queue-moves-to-backoff"),
    pytest.param(("Fit",), "1", "unschedulablePods", id="hint-skip-keeps-pod"),
    pytest.param(("Never",), "8", "unschedulablePods", id="other-plugins-hint-skip"),
    pytest.param(("Never", "Fit"), "8", "backoffQ", id="any-rejector-queue-wins"),
    pytest.param(("Flaky",), "1", "backoffQ", id="failing-hint-counts-as-queue"),
    pytest.param(("Wild",), "1", "backoffQ", id="wildcard-registration"),
    pytest.param(("SchedulingGates",), "8", "unschedulablePods", id="unrelated-event"),
])
async def test_node_add_requeue_follows_queueing_hints(q, plugins, node_cpu, want):
    q.add(make_pod("p").obj())
    await fail(q, "p", *plugins)
    assert q.where("uid-default-p") == "unschedulablePods"
    q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, make_node("n").capacity(cpu=node_cpu).obj())
    assert q.where("uid-default-p") == want


async def test_one_event_moves_exactly_the_pods_whose_rejectors_registered_it(q):
    # many unschedulable pods, rejected by different plugins; the per-event plugin set decides
    # without a per-pod hint walk, and must agree with it pod by pod
    rejectors = {"fit": ("Fit",), "never": ("Never",), "both": ("Never", "Fit"), "gates": ("SchedulingGates",)}
    for i in range(40):
        q.add(make_pod(f"p{i}").obj())
    kinds = list(rejectors)
    for _ in range(40):
        qpi = await q.pop()
        assert qpi is not None
        qpi.unschedulable_plugins = set(rejectors[kinds[int(qpi.pod_info.name[1:]) % 4]])
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    bound = make_pod("b").node("n1").obj()
    q.assigned_pod_added(bound)  # registered by no plugin here
    assert q.pending_counts()["unschedulable"] == 40
    q.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, bound, None)  # Fit registers it
    for i in range(40):
        moved = kinds[i % 4] in ("fit", "both")
        assert q.where(f"uid-default-p{i}") == ("backoffQ" if moved else "unschedulablePods"), i


async def test_pending_plugin_queue_goes_straight_to_active(q):
    q.add(make_pod("p").obj())
    await fail(q, "p", pending=("Fit",))
    q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, make_node("n").capacity(cpu="8").obj())
    assert q.where("uid-default-p") == "activeQ"


async def test_backoff_expired_pod_goes_to_active_directly(q, clock):
    q.add(make_pod("p").obj())
    await fail(q, "p", "Fit")
    clock.advance(2)
    q.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, make_pod("x").node("n").obj(), None)
    assert q.where("uid-default-p") == "activeQ"


async def test_error_pods_go_to_backoff_and_flush_after_expiry(q, clock):
    q.add(make_pod("p").obj())
    qpi = await q.pop()
    qpi.consecutive_errors = 1
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    assert q.where("uid-default-p") == "backoffQ"
    clock.advance(0.5)
    q.flush_backoff_completed()
    assert q.where("uid-default-p") == "backoffQ"
    # the 1 s backoff begun at t=1000.0 ends in window 1001: done once the clock's window is 1002
    clock.advance(0.6)
    q.flush_backoff_completed()
    assert q.where("uid-default-p") == "backoffQ"
    clock.advance(0.9)
    q.flush_backoff_completed()
    assert q.where("uid-default-p") == "activeQ"


async def test_event_during_scheduling_cycle_is_not_lost(q):
    q.add(make_pod("p").obj())
    qpi = await q.pop()
    # while p is being scheduled a big node arrives
    q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, make_node("n").capacity(cpu="8").obj())
    qpi.unschedulable_plugins = {"Fit"}
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    assert q.where("uid-default-p") == "backoffQ"


async def test_event_before_pop_does_not_count(q):
    q.add(make_pod("other").obj())
    q.add(make_pod("p").obj())
    first = await q.pop()  # "other" in flight keeps the event log alive
    q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, make_node("n").capacity(cpu="8").obj())
    qpi = await q.pop()
    assert qpi.pod_info.name == "p"
    qpi.unschedulable_plugins = {"Fit"}
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    assert q.where("uid-default-p") == "unschedulablePods"
    q.done(first.uid)


async def test_unschedulable_leftover_flushed_after_5_minutes(q, clock):
    q.add(make_pod("p").obj())
    await fail(q, "p", "Never")
    clock.advance(299)
    q.flush_unschedulable_left_over()
    assert q.where("uid-default-p") == "unschedulablePods"
    clock.advance(2)
    q.flush_unschedulable_left_over()
    assert q.where("uid-default-p") == "activeQ"


async def test_run_loop_flushes_with_fake_clock(q, clock):
    q.add(make_pod("p").obj())
    qpi = await q.pop()
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)  # no rejector: backoff 1s
    task = asyncio.create_task(q.run())
    async with asyncio.timeout(5):  # the flush loop is asleep on the fake clock before time moves
        while clock.sleepers == 0:
            await asyncio.sleep(0)
    clock.advance(2.0)  # the backoff's window (1001) is before the clock's (1002)
    async with asyncio.timeout(5):
        while q.where("uid-default-p") != "activeQ":
            await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_update_of_unschedulable_pod_uses_pod_events(queue_with):
    q = queue_with("Tol")
    old = make_pod("p").obj()
    q.add(old)
    await fail(q, "p", "Tol")
    relabeled = make_pod("p").labels(a="b").obj()
    q.update(old, relabeled)
    assert q.where("uid-default-p") == "unschedulablePods"
    tolerated = make_pod("p").labels(a="b").toleration("k", "v", "NoSchedule").obj()
    q.update(relabeled, tolerated)
    assert q.where("uid-default-p") == "backoffQ"  # still inside its 1 s backoff
    assert q.get("uid-default-p").pod_info.pod is tolerated


async def test_delete_removes_from_every_structure_and_nominator(q):
    q.add(make_pod("a").nominated("n1").obj())
    assert [p.name for p in q.nominator.nominated_pods_for_node("n1")] == ["a"]
    q.delete(make_pod("a").obj())
    assert len(q) == 0 and q.nominator.nominated_pods_for_node("n1") == []


async def test_pending_pods_listing(q):
    q.add(make_pod("a").obj())
    q.add(make_pod("g").scheduling_gates("x").obj())
    got = {(p["pod"], p["queue"], p["gated"]) for p in q.pending_pods()}
    assert got == {("default/a", "activeQ", False), ("default/g", "unschedulablePods", True)}


@pytest.mark.parametrize(("old", "new", "labels"), [
    pytest.param(make_node("n").obj(), make_node("n").labels(a="b").obj(), ["UpdateNodeLabel"], id="label"),
    pytest.param(make_node("n").obj(), make_node("n").taints(("k", "v", "NoSchedule")).obj(), ["UpdateNodeTaint"],
                 id="taint"),
    pytest.param(make_node("n").capacity(cpu="1").obj(), make_node("n").capacity(cpu="2").obj(),
                 ["UpdateNodeAllocatable"], id="allocatable"),
    pytest.param(make_node("n").obj(), make_node("n").unschedulable().obj(), ["UpdateNodeTaint"],
                 id="cordon-counts-as-taint-change"),
    pytest.param(make_node("n").obj(), make_node("n").obj(), [], id="heartbeat-only"),
])
def test_node_update_classification(old, new, labels):
    assert [e.label for e in node_scheduling_property_changes(new, old)] == labels


def test_pod_update_classification():
    old = make_pod("p").req(cpu="2").scheduling_gates("x").obj()
    new = make_pod("p").req(cpu="1").labels(a="b").obj()
    assert [e.label for e in pod_scheduling_property_changes(new, old)] == [
        "UnscheduledPodUpdatePodLabel", "UnscheduledPodUpdatePodScaleDown",
        "UnscheduledPodUpdatePodSchedulingGatesEliminated"]
    assert [e.label for e in pod_scheduling_property_changes(old, old)] == ["UnscheduledPodOtherUpdate"]


async def test_status_only_update_does_not_wake_plugins_with_specific_pod_events(queue_with):
    q = queue_with("ScaleDown", "AnyUpdate")
    for name, plugin, want in (("a", "ScaleDown", "unschedulablePods"), ("b", "AnyUpdate", "backoffQ")):
        old = make_pod(name).obj()
        q.add(old)
        await fail(q, name, plugin)
        new = make_pod(name).condition("PodScheduled", "False", reason="Unschedulable").obj()
        q.update(old, new)
        assert q.where(f"uid-default-{name}") == want, plugin


def test_keyed_heap_update_and_delete():
    h: KeyedHeap[tuple[str, int]] = KeyedHeap(lambda x: x[0], lambda a, b: a[1] < b[1])
    for k, v in [("a", 5), ("b", 1), ("c", 3), ("d", 4)]:
        h.add_or_update((k, v))
    h.delete("b")
    h.add_or_update(("d", 0))
    assert [h.pop() for _ in range(len(h))] == [("d", 0), ("c", 3), ("a", 5)]


async def test_requeue_walk_asks_each_pods_own_profile_every_time(clock):
    """Two profiles that register different events for the same plugin: an event moves only the
    parked pods whose own profile's rejecting plugin registered it, on every repetition (the
    per-event, per-profile plugin sets and each pod's profile are remembered)."""
    q = new_queue(clock, profile("default-scheduler"),
                  profile("narrow", plugin_config=[{"name": "Fit", "args": {"nodeAddOnly": True}}]))
    for i in range(6):
        pod = make_pod(f"p{i}").obj()
        if i % 2:
            pod["spec"]["schedulerName"] = "narrow"
        q.add(pod)
    for _ in range(6):
        qpi = await q.pop()
        assert qpi is not None
        qpi.unschedulable_plugins = {"Fit"}
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    gone = make_pod("b").node("n1").obj()
    for _ in range(2):
        q.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, gone, None)
        for i in range(6):
            want = "unschedulablePods" if i % 2 else "backoffQ"
            assert q.where(f"uid-default-p{i}") == want, i
