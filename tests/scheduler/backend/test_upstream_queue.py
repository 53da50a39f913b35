"""Upstream kube-scheduler v1.33 pkg/scheduler/backend/queue tests, translated
(scheduling_queue_test.go and backoff_queue_test.go; case names kept as ids).

The queue is built as the scheduler builds it: one real `Framework` over a real
KubeSchedulerConfiguration profile (PrioritySort + DefaultBinder + the plugins a case needs).
Upstream's tests hand the queue a QueueingHintMap (plugin name -> events + hint functions) and a
PreEnqueue plugin map; here each entry is a small plugin class registered in the profile, whose
EventsToRegister carry the same hint functions and whose PreEnqueue (when it has one) is the same
allow-list. Upstream's "" profile is our "default-scheduler".

Where upstream reaches into a sub-queue (activeQ.add, backoffQ.add, unschedulablePods.addOrUpdate,
backoffQ.popAllBackoffCompleted, moveToActiveQ, moveToBackoffQ, isPodWorthRequeuing) the
translation uses the queue's private counterparts (`put_active`, `put_backoff`,
`put_unschedulable` below, `_move_to_active`, `_move_to_backoff`, `_is_pod_worth_requeuing`,
`_backoff.pop_completed`). Upstream's fake clock starts at time.Now(), a fraction into a second;
`clock` does the same (1000.123456), `aligned_clock` starts on a whole second where upstream
truncates. Upstream keys the queue by namespace/name, ours by uid: pods upstream gives clashing
uids (TestPendingPodsMetric) get distinct ones here.

Not translated (Go plumbing or modes minik3s does not have): the SchedulerQueueingHints=false
variants (minik3s always uses queueing hints: Test_InFlightPods' two disabled cases,
TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithOutQueueingHint, the queuehint(false) runs of
TestPriorityQueue_Update and TestPop), TestUnschedulablePodsMap (a Go map wrapper; ours is a
dict), the two PreEnqueue plugin-duration metric cases of TestPendingPodsMetric (framework
metrics, not the queue's) and BenchmarkMoveAllToActiveOrBackoffQueue.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import pytest

from minik3s.api.types import JsonDict
from minik3s.testing.builders import make_node, make_pod
from minik3s.utils.clock import FakeClock
from scheduler.backend.queue import (
    BACKOFF_COMPLETE,
    BACKOFF_ORDERING_WINDOW,
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    EVENT_ASSIGNED_POD_ADD,
    EVENT_FORCE_ACTIVATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_UPDATE,
    POD_MAX_IN_UNSCHEDULABLE_DURATION,
    PriorityQueue,
    QueuedPodInfo,
)
from scheduler.config import build_registry, parse_config, profile_spec, validate_plugin_args
from scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PreEnqueuePlugin,
    QueueingHint,
    Status,
)
from scheduler.framework.runtime import Framework
from scheduler.framework.types import PodInfo
from scheduler.plugins.registry import in_tree_registry

R, A = EventResource, ActionType
NODE_ADD = ClusterEvent(R.NODE, A.ADD, "NodeAdd")
PV_ADD = ClusterEvent(R.PERSISTENT_VOLUME, A.ADD, "PersistentVolumeAdd")
PV_UPDATE = ClusterEvent(R.PERSISTENT_VOLUME, A.UPDATE, "PersistentVolumeUpdate")
PVC_ADD = ClusterEvent(R.PERSISTENT_VOLUME_CLAIM, A.ADD, "PersistentVolumeClaimAdd")
CSI_NODE_UPDATE = ClusterEvent(R.CSI_NODE, A.UPDATE, "CSINodeUpdate")
# what plugins register (upstream's framework.EventXYZ without the label)
REG_ASSIGNED_POD_ADD = ClusterEvent(R.ASSIGNED_POD, A.ADD)
REG_UNSCHEDULED_POD_UPDATE = ClusterEvent(R.UNSCHEDULED_POD, A.UPDATE)
REG_NODE_ADD = ClusterEvent(R.NODE, A.ADD)

Q, S = QueueingHint.QUEUE, QueueingHint.SKIP
ACTIVE, BACKOFF, UNSCHED = "activeQ", "backoffQ", "unschedulablePods"
LOW, MID, HIGH = 0, 100, 1000
MEDIUM = (LOW + HIGH) // 2


def queue_hint(pod: Any, old: Any, new: Any) -> QueueingHint:
    return Q


def skip_hint(pod: Any, old: Any, new: Any) -> QueueingHint:
    return S


Hint = Callable[[Any, Any, Any], QueueingHint] | None


# ---- the pods upstream's tests share ------------------------------------------------------
def hpp() -> JsonDict:
    return make_pod("hpp", "ns1").uid("hppns1").priority(HIGH).obj()


def hpp_nominated() -> JsonDict:
    return make_pod("hpp", "ns1").uid("hppns1").priority(HIGH).nominated("node1").obj()


def mpp() -> JsonDict:
    return make_pod("mpp", "ns2").uid("mppns2").annotations({"annot2": "val2"}).priority(MEDIUM) \
        .nominated("node1").obj()


def up() -> JsonDict:
    return make_pod("up", "ns1").uid("upns1").annotations({"annot2": "val2"}).priority(LOW).nominated("node1") \
        .condition("PodScheduled", "False", reason="Unschedulable").obj()


def clone(pod: JsonDict, name: str) -> JsonDict:
    """upstream clonePod: a copy named `name` with uid name+namespace."""
    out = {**pod, "metadata": {**pod["metadata"], "name": name}}
    out["metadata"]["uid"] = name + pod["metadata"]["namespace"]
    return out


def uid(pod: JsonDict) -> str:
    return str(pod["metadata"]["uid"])


def name(pod: JsonDict) -> str:
    return str(pod["metadata"]["name"])


# ---- the queue ---------------------------------------------------------------------------
class _Plugin(FilterPlugin, EnqueueExtensions):
    """A plugin of the test profile: admits every node; what matters is the events it registers
    (upstream's QueueingHintMap entries for its name)."""

    NAME = ""
    EVENTS: ClassVar[list[tuple[ClusterEvent, Hint]]] = []

    def filter(self, state: Any, pod: Any, node: Any) -> Status:
        return Status.success()

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(e, h) for e, h in self.EVENTS]


def plugin(plugin_name: str, *events: tuple[ClusterEvent, Hint],
           allow_labels: Sequence[str] | None = None) -> type[_Plugin]:
    """A test plugin registering `events`; with `allow_labels`, also upstream's test
    preEnqueuePlugin: a pod passes PreEnqueue only when it carries one of those label keys."""
    attrs: dict[str, Any] = {"NAME": plugin_name, "EVENTS": list(events)}
    if allow_labels is None:
        return type(plugin_name, (_Plugin,), attrs)
    allowed = list(allow_labels)

    def pre_enqueue(self: Any, pod: JsonDict) -> Status:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        if any(k in labels for k in allowed):
            return Status.success()
        return Status.unresolvable("pod name not in allowlists")

    attrs["pre_enqueue"] = pre_enqueue
    return type(plugin_name, (PreEnqueuePlugin, _Plugin), attrs)


def new_queue(clock: FakeClock, *plugins: type[_Plugin], in_tree: Sequence[str] = (), **kw: Any) -> PriorityQueue:
    """The queue over a real Framework for a profile of PrioritySort, `in_tree` plugins, the test
    `plugins` (in this order) and DefaultBinder."""
    names = ["PrioritySort", *in_tree, *(p.NAME for p in plugins), "DefaultBinder"]
    cfg = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {
                            "enabled": [{"name": n} for n in names], "disabled": [{"name": "*"}]}}}]})
    registry = build_registry(cfg, {**in_tree_registry(), **{p.NAME: p for p in plugins}})
    validate_plugin_args(cfg, registry)
    frameworks = {prof.scheduler_name: Framework(profile_spec(prof, registry), registry, clock=clock)
                  for prof in cfg.profiles}
    return PriorityQueue(frameworks, clock=clock, **kw)


def qpi(q: PriorityQueue, pod: JsonDict, *plugins: str, attempts: int = 0, timestamp: float | None = None,
        pending: Sequence[str] = ()) -> QueuedPodInfo:
    """upstream newQueuedPodInfo (stamped now) / a literal QueuedPodInfo."""
    return QueuedPodInfo(PodInfo(pod), timestamp=q._clock.monotonic() if timestamp is None else timestamp,
                         attempts=attempts, unschedulable_plugins=set(plugins), pending_plugins=set(pending))


def gated(info: QueuedPodInfo, gating_plugin: str) -> QueuedPodInfo:
    """upstream setQueuedPodInfoGated (the gating plugin is also an unschedulable plugin)."""
    info.gated = True
    info.gating_plugin = gating_plugin
    info.unschedulable_plugins = {gating_plugin}
    return info


def attempt(info: QueuedPodInfo) -> QueuedPodInfo:
    """upstream attemptQueuedPodInfo."""
    info.attempts += 1
    return info


def put_active(q: PriorityQueue, info: QueuedPodInfo) -> None:
    """upstream activeQ.add, straight into the heap."""
    q._active.add_or_update(info)
    q._wake()


def put_backoff(q: PriorityQueue, info: QueuedPodInfo) -> None:
    """upstream backoffQ.add."""
    q._to_backoff(info, EVENT_UNSCHEDULED_POD_ADD.label)
    q._wake()


def put_unschedulable(q: PriorityQueue, info: QueuedPodInfo) -> None:
    """upstream unschedulablePods.addOrUpdate."""
    q._to_unschedulable(info, EVENT_UNSCHEDULED_POD_ADD.label)


async def pop(q: PriorityQueue, want: JsonDict | None = None) -> QueuedPodInfo:
    got = await asyncio.wait_for(q.pop(), 5)
    assert got is not None
    if want is not None:
        assert got.uid == uid(want), f"popped {got.pod_info.name}, want {name(want)}"
    return got


async def try_pop(q: PriorityQueue) -> QueuedPodInfo | None:
    """upstream tryPop: a pod, or None after closing the queue when none comes."""
    try:
        return await asyncio.wait_for(q.pop(), 0.2)
    except TimeoutError:
        q.close()
        return None


def in_queue(q: PriorityQueue, pod: JsonDict) -> str | None:
    return q.where(uid(pod))


def names_in(q: PriorityQueue, where: str) -> list[str]:
    return sorted(p["pod"].split("/")[1] for p in q.pending_pods() if p["queue"] == where)


def nominations(q: PriorityQueue) -> dict[str, list[str]]:
    return {n: [p.uid for p in q.nominator.nominated_pods_for_node(n)] for n in q.nominator.nodes()}


def in_flight_events(q: PriorityQueue) -> list[ClusterEvent]:
    return [e.event for e in q._in_flight_events]


@pytest.fixture
def clock() -> FakeClock:
    c = FakeClock()
    c.advance(0.123456)  # time.Now(): a fraction into a second
    return c


@pytest.fixture
def aligned_clock() -> FakeClock:
    return FakeClock()


# ---- TestPriorityQueue_Add / AddWithReversePriorityLessFunc --------------------------------
async def test_priority_queue_add(clock):
    q = new_queue(clock)
    q.add(mpp())
    q.add(up())
    q.add(hpp())
    assert nominations(q) == {"node1": ["mppns2", "upns1"]}
    for want in (hpp(), mpp(), up()):
        await pop(q, want)
    assert len(q.nominator.nominated_pods_for_node("node1")) == 2


async def test_priority_queue_add_with_reverse_priority_less_func(clock):
    q = new_queue(clock)
    q.add(mpp())
    q.add(hpp())
    await pop(q, hpp())
    await pop(q, mpp())


# ---- Test_InFlightPods (SchedulerQueueingHints enabled) ------------------------------------
POD1 = make_pod("targetpod").uid("pod1").obj()
POD2 = make_pod("targetpod2").uid("pod2").obj()
POD3 = make_pod("targetpod3").uid("pod3").obj()


def _foo1(*events: ClusterEvent, hint: Hint = queue_hint) -> list[type[_Plugin]]:
    return [plugin("fooPlugin1", *((e, hint) for e in events))]


def _enqueue(plugins: Sequence[str] = (), pending: Sequence[str] = ()) -> Callable[[PriorityQueue, JsonDict], None]:
    def run(q: PriorityQueue, pod: JsonDict) -> None:
        q.add_unschedulable_if_not_present(attempt(qpi(q, pod, *plugins, pending=pending)), q.scheduling_cycle)
    return run


IN_FLIGHT_CASES = [
    pytest.param(
        _foo1(PV_ADD), [POD1],
        [("event", PVC_ADD), ("pop", POD1), ("event", PV_ADD), ("event", PV_UPDATE)],
        {"in_flight": [POD1], "events": [PV_ADD]},
        id="Pod and interested events are registered in inFlightPods/inFlightEvents"),
    pytest.param(
        _foo1(PV_ADD, NODE_ADD, PVC_ADD), [POD1, POD2],
        [("event", PVC_ADD), ("pop", POD1), ("event", PV_ADD), ("pop", POD2), ("event", NODE_ADD),
         ("enqueue", POD1, _enqueue())],
        {"backoff": ["targetpod"], "in_flight": [POD2], "events": [NODE_ADD]},
        id="Pod, registered in inFlightPods, is enqueued back to activeQ"),
    pytest.param(
        _foo1(PV_ADD, NODE_ADD, PVC_ADD, CSI_NODE_UPDATE), [POD1, POD2],
        [("event", PVC_ADD), ("pop", POD1), ("event", PV_ADD), ("pop", POD2), ("event", NODE_ADD),
         ("enqueue", POD1, _enqueue()), ("event", CSI_NODE_UPDATE), ("enqueue", POD2, _enqueue())],
        {"backoff": ["targetpod", "targetpod2"], "in_flight": [], "events": []},
        id="All Pods registered in inFlightPods are enqueued back to activeQ"),
    pytest.param(
        _foo1(PV_ADD, NODE_ADD, REG_ASSIGNED_POD_ADD), [POD1, POD2, POD3],
        [("event", PVC_ADD), ("pop", POD1), ("event", PV_ADD), ("pop", POD2), ("event", NODE_ADD),
         ("pop", POD3), ("event", EVENT_ASSIGNED_POD_ADD), ("enqueue", POD2, _enqueue())],
        {"backoff": ["targetpod2"], "in_flight": [POD1, POD3], "events": [PV_ADD, NODE_ADD, EVENT_ASSIGNED_POD_ADD]},
        id="One intermediate Pod registered in inFlightPods is enqueued back to activeQ"),
    pytest.param(
        _foo1(REG_ASSIGNED_POD_ADD, hint=skip_hint), [POD1],
        [("event", EVENT_UNSCHEDULABLE_TIMEOUT), ("pop", POD1), ("event", EVENT_ASSIGNED_POD_ADD),
         ("enqueue", POD1, _enqueue(["fooPlugin1"]))],
        {"unsched": ["targetpod"], "in_flight": [], "events": []},
        id="events before popping Pod are ignored when Pod is enqueued back to queue"),
    pytest.param(
        _foo1(REG_ASSIGNED_POD_ADD), [POD1],
        [("pop", POD1), ("event", EVENT_ASSIGNED_POD_ADD), ("enqueue", POD1, _enqueue())],
        {"backoff": ["targetpod"], "in_flight": [], "events": []},
        id="pod is enqueued to backoff if no failed plugin"),
    pytest.param(
        _foo1(REG_ASSIGNED_POD_ADD), [POD1],
        [("pop", POD1), ("event", NODE_ADD), ("enqueue", POD1, _enqueue(["fooPlugin1"]))],
        {"unsched": ["targetpod"], "in_flight": [], "events": []},
        id="pod is enqueued to unschedulable pod pool if no events that can make the pod schedulable"),
    pytest.param(
        _foo1(REG_ASSIGNED_POD_ADD, hint=skip_hint), [POD1],
        [("pop", POD1), ("event", EVENT_ASSIGNED_POD_ADD), ("enqueue", POD1, _enqueue(["fooPlugin1"]))],
        {"unsched": ["targetpod"], "in_flight": [], "events": []},
        id="pod is enqueued to unschedulable pod pool because the failed plugin has a hint fn but it returns Skip"),
    pytest.param(
        [plugin("fooPlugin3", (REG_ASSIGNED_POD_ADD, skip_hint)), plugin("fooPlugin2", (REG_ASSIGNED_POD_ADD, queue_hint)),
         plugin("fooPlugin1", (REG_ASSIGNED_POD_ADD, queue_hint))], [POD1],
        [("pop", POD1), ("event", EVENT_ASSIGNED_POD_ADD),
         ("enqueue", POD1, _enqueue(["fooPlugin2", "fooPlugin3"], pending=["fooPlugin1"]))],
        {"active": ["targetpod"], "in_flight": [], "events": []},
        id="pod is enqueued to activeQ because the Pending plugins has a hint fn and it returns Queue"),
    pytest.param(
        [plugin("fooPlugin2", (REG_ASSIGNED_POD_ADD, skip_hint)), plugin("fooPlugin1", (REG_ASSIGNED_POD_ADD, queue_hint))],
        [POD1],
        [("pop", POD1), ("event", EVENT_ASSIGNED_POD_ADD), ("enqueue", POD1, _enqueue(["fooPlugin1", "fooPlugin2"]))],
        {"backoff": ["targetpod"], "in_flight": [], "events": []},
        id="pod is enqueued to backoffQ because the failed plugin has a hint fn and it returns Queue"),
]


@pytest.mark.parametrize(("plugins", "initial", "actions", "want"), IN_FLIGHT_CASES)
async def test_in_flight_pods(clock, plugins, initial, actions, want):
    q = new_queue(clock, *plugins)
    for p in initial:
        q.add(p)
        clock.advance(1)
    for action in actions:
        if action[0] == "event":
            q.move_all_to_active_or_backoff(action[1])
        elif action[0] == "pop":
            await pop(q, action[1])
        else:
            action[2](q, action[1])
    assert sorted(q.in_flight()) == sorted(uid(p) for p in want["in_flight"])
    assert in_flight_events(q) == want["events"]
    if "active" in want:
        assert names_in(q, ACTIVE) == want["active"]
    if "backoff" in want:
        assert names_in(q, BACKOFF) == want["backoff"]
    for n in want.get("unsched", ()):
        assert n in names_in(q, UNSCHED)


async def test_in_flight_pods_concurrent_event_while_other_pod_in_flight(clock):
    """Test_InFlightPods: pod is enqueued to activeQ because the failed plugin has a hint fn and it
    returns Queue for a concurrent event that was received while some other pod was in flight"""
    q = new_queue(clock, plugin("fooPlugin3", (REG_ASSIGNED_POD_ADD, skip_hint)),
                  plugin("fooPlugin2", (REG_ASSIGNED_POD_ADD, queue_hint)),
                  plugin("fooPlugin1", (REG_ASSIGNED_POD_ADD, queue_hint)))
    for p in (POD1, POD2):
        q.add(p)
        clock.advance(1)
    popped1 = await pop(q, POD1)
    q.move_all_to_active_or_backoff(NODE_ADD)
    popped2 = await pop(q, POD2)
    q.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_ADD)
    q.add_unschedulable_if_not_present(popped1, q.scheduling_cycle)
    popped2.unschedulable_plugins = {"fooPlugin2", "fooPlugin3"}
    popped2.pending_plugins = {"fooPlugin1"}
    q.add_unschedulable_if_not_present(popped2, q.scheduling_cycle)
    assert names_in(q, ACTIVE) == ["targetpod2"]
    assert q.in_flight() == [] and in_flight_events(q) == []


async def test_in_flight_pods_popped_pod_has_no_plugins(clock):
    """Test_InFlightPods: popped pod must have empty UnschedulablePlugins and PendingPlugins"""
    q = new_queue(clock, *_foo1(PV_ADD))
    q.add(POD1)
    popped = await pop(q, POD1)
    popped.pending_plugins = {"fooPlugin1"}
    popped.unschedulable_plugins = {"fooPlugin2"}
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle)
    q.move_all_to_active_or_backoff(PV_ADD)  # active again
    popped = await pop(q, POD1)
    assert not popped.unschedulable_plugins and not popped.pending_plugins
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle)  # failed: backoff
    assert in_queue(q, POD1) == BACKOFF
    assert q.in_flight() == [] and in_flight_events(q) == []


async def test_in_flight_pods_pop_made_twice_for_the_same_pod(clock):
    """Test_InFlightPods: Pop is made twice for the same Pod, but the cleanup still happen correctly"""
    q = new_queue(clock, *_foo1(PV_ADD, NODE_ADD, PVC_ADD, CSI_NODE_UPDATE))
    for p in (POD1, POD2):
        q.add(p)
        clock.advance(1)
    q.move_all_to_active_or_backoff(PVC_ADD)
    await pop(q, POD1)
    q.move_all_to_active_or_backoff(PV_ADD)
    await pop(q, POD2)
    # a bug puts pod1 into activeQ while it is being scheduled
    put_active(q, QueuedPodInfo(PodInfo(POD1)))
    q.add(POD3)
    await pop(q, POD3)  # pod1 comes first, is discarded as in flight, then pod3
    assert q.active_len() == 0
    q.move_all_to_active_or_backoff(NODE_ADD)
    _enqueue()(q, POD1)
    q.move_all_to_active_or_backoff(CSI_NODE_UPDATE)
    _enqueue()(q, POD2)
    _enqueue()(q, POD3)
    assert names_in(q, BACKOFF) == ["targetpod", "targetpod2", "targetpod3"]
    assert q.in_flight() == []


# ---- TestPop -----------------------------------------------------------------------------
async def test_pop(clock):
    """TestPop (with-hints)"""
    pod = make_pod("targetpod").uid("pod1").obj()
    q = new_queue(clock, *_foo1(PV_ADD))
    q.add(pod)
    popped = await pop(q, pod)
    popped.pending_plugins = {"fooPlugin1"}  # queueImmediately: no backoff
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle)
    q.move_all_to_active_or_backoff(PV_ADD)
    popped = await pop(q, pod)
    assert not popped.pending_plugins


# ---- TestPriorityQueue_AddUnschedulableIfNotPresent (+ _Backoff) ----------------------------
async def test_priority_queue_add_unschedulable_if_not_present(clock):
    q = new_queue(clock)
    q.add(up())
    await pop(q, up())
    q.add(hpp_nominated())
    q.add_unschedulable_if_not_present(qpi(q, up(), "plugin"), q.scheduling_cycle)
    await pop(q, hpp_nominated())
    assert len(q.nominator.nodes()) == 1
    # no event happened during scheduling: unschedulablePods
    assert in_queue(q, up()) == UNSCHED


async def test_priority_queue_add_unschedulable_if_not_present_backoff(clock):
    q = new_queue(clock)
    pods = [make_pod(f"pod{i}", f"ns{i}").uid(f"upns{i}").priority(i).obj() for i in range(10)]
    for p in pods:
        q.add(p)
    for i in range(9, 0, -1):
        await pop(q, pods[i])
    # a move request while they are being scheduled
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    old_cycle = q.scheduling_cycle
    await pop(q, pods[0])
    for p in pods[1:]:
        failed = make_pod(name(p), p["metadata"]["namespace"]).uid(uid(p)).priority(p["spec"]["priority"]) \
            .condition("PodScheduled", "False", reason="Unschedulable").obj()
        q.add_unschedulable_if_not_present(attempt(qpi(q, failed, "plugin")), old_cycle)
    for p in pods[1:]:
        assert in_queue(q, p) == BACKOFF, name(p)


# ---- TestPriorityQueue_Pop (SchedulerPopFromBackoffQ) ----------------------------------------
@pytest.mark.parametrize(("pop_from_backoff", "want"), [
    pytest.param(True, ["mpp", "hpp"], id="Pop pods from both activeQ and backoffQ when PopFromBackoffQ is enabled"),
    pytest.param(False, ["mpp"], id="Pop pod only from activeQ when PopFromBackoffQ is disabled"),
])
async def test_priority_queue_pop(clock, pop_from_backoff, want):
    hpp2 = make_pod("hpp2", "ns1").uid("hpp2ns1").priority(HIGH).obj()
    q = new_queue(clock, pop_from_backoff=pop_from_backoff)
    q.add(mpp())
    put_backoff(q, qpi(q, hpp(), "plugin"))  # rejected by a plugin
    put_backoff(q, qpi(q, hpp2))  # failed with an error: never popped early
    put_unschedulable(q, qpi(q, up(), "plugin"))
    got: list[str] = []
    for _ in range(len(want) + 1):
        p = await try_pop(q)
        if p is None:
            break
        got.append(p.pod_info.name)
    assert got == want


# ---- TestPriorityQueue_Update / UpdateWhenInflight -----------------------------------------
def _update_plugins() -> list[type[_Plugin]]:
    return [plugin("queuePlugin", (REG_UNSCHEDULED_POD_UPDATE, queue_hint)),
            plugin("skipPlugin", (REG_UNSCHEDULED_POD_UPDATE, skip_hint))]


def _annotated(pod: JsonDict, value: str) -> JsonDict:
    out = {**pod, "metadata": {**pod["metadata"], "annotations": {**pod["metadata"].get("annotations", {})}}}
    out["metadata"]["annotations"]["foo"] = value
    return out


async def _upd_not_in_queue(q, c):
    return mpp(), _annotated(mpp(), "test")


async def _upd_nominate(q, c):
    return hpp(), hpp_nominated()


async def _upd_in_active(q, c):
    q.add(hpp())
    return hpp(), hpp()


async def _upd_in_backoff(q, c):
    put_backoff(q, qpi(q, mpp()))
    return mpp(), mpp()


async def _upd_unsched_backing_off(q, c):
    put_unschedulable(q, attempt(qpi(q, mpp(), "queuePlugin")))
    return mpp(), _annotated(mpp(), "test")


async def _upd_unsched_not_backing_off(q, c):
    put_unschedulable(q, attempt(qpi(q, mpp(), "queuePlugin")))
    c.advance(q.pod_max_backoff)
    return mpp(), _annotated(mpp(), "test1")


async def _upd_unsched_skip(q, c):
    put_unschedulable(q, qpi(q, mpp(), "skipPlugin"))
    return mpp(), _annotated(mpp(), "test1")


async def _upd_in_flight(q, c):
    q.add(mpp())
    await pop(q, mpp())
    return mpp(), _annotated(mpp(), "bar")


@pytest.mark.parametrize(("prepare", "want_q", "want_nominated"), [
    pytest.param(_upd_not_in_queue, ACTIVE, False, id="Update pod that didn't exist in the queue"),
    pytest.param(_upd_nominate, ACTIVE, True, id="Update highPriorityPodInfo and add a nominatedNodeName to it"),
    pytest.param(_upd_in_active, ACTIVE, False,
                 id="When updating a pod that is already in activeQ, the pod should remain in activeQ after Update()"),
    pytest.param(_upd_in_backoff, BACKOFF, False,
                 id="When updating a pod that is in backoff queue and is still backing off, it will be updated in backoff queue"),
    pytest.param(_upd_unsched_backing_off, BACKOFF, False,
                 id="when updating a pod which is in unschedulable queue and is backing off, it will be moved to backoff queue"),
    pytest.param(_upd_unsched_not_backing_off, ACTIVE, False,
                 id="when updating a pod which is in unschedulable queue and is not backing off, it will be moved to active queue"),
    pytest.param(_upd_unsched_skip, UNSCHED, False,
                 id="when updating a pod which is in unschedulable pods but the plugin returns skip, it will remain in unschedulablePods"),
    pytest.param(_upd_in_flight, None, False,
                 id="when updating a pod which is in flightPods, the pod will not be added to any queue"),
])
async def test_priority_queue_update(clock, prepare, want_q, want_nominated):
    q = new_queue(clock, *_update_plugins())
    old, new = await prepare(q, clock)
    q.update(old, new)
    if want_q is None:
        assert in_queue(q, new) == "inFlight"
        return
    assert in_queue(q, new) == want_q
    assert q.get(uid(new)).pod is new
    if want_nominated:
        assert len(q.nominator.nodes()) == 1


async def test_priority_queue_update_when_inflight(clock):
    q = new_queue(clock, plugin("fakePlugin", (REG_UNSCHEDULED_POD_UPDATE, queue_hint)))
    pod = make_pod("test-pod", "test-ns").uid("test-uid").obj()
    q.add(pod)
    await pop(q, pod)
    updated = make_pod("test-pod", "test-ns").uid("test-uid").toleration("foo", "", "NoSchedule").obj()
    q.update(pod, updated)
    # rejected by fakePlugin, but the update it got while in flight may help
    q.add_unschedulable_if_not_present(attempt(qpi(q, updated, "fakePlugin")), q.scheduling_cycle)
    assert in_queue(q, updated) == BACKOFF
    assert q.get(uid(updated)).pod is updated


# ---- TestPriorityQueue_Delete / Activate ---------------------------------------------------
async def test_priority_queue_delete(clock):
    q = new_queue(clock)
    q.update(hpp(), hpp_nominated())
    q.add(up())
    q.delete(hpp_nominated())
    assert in_queue(q, up()) == ACTIVE
    assert in_queue(q, hpp_nominated()) is None
    assert len(q.nominator.nodes()) == 1
    q.delete(up())
    assert len(q.nominator.nodes()) == 0


@pytest.mark.parametrize(("setup", "want_active", "want_event"), [
    pytest.param("active", 1, False, id="pod already in activeQ"),
    pytest.param("none", 0, False, id="pod not in unschedulablePods/backoffQ"),
    pytest.param("in-flight", 0, True, id="[QHint] pod not in unschedulablePods/backoffQ but in-flight"),
    pytest.param("other-in-flight", 0, False, id="[QHint] pod not in unschedulablePods/backoffQ and not in-flight"),
    pytest.param("unschedulable", 1, False, id="pod in unschedulablePods"),
    pytest.param("backoff", 1, False, id="pod in backoffQ"),
])
async def test_priority_queue_activate(clock, setup, want_active, want_event):
    q = new_queue(clock)
    target = hpp_nominated()
    popped = None
    if setup in ("in-flight", "other-in-flight"):
        flying = target if setup == "in-flight" else mpp()
        q.add(flying)
        popped = await pop(q, flying)
    elif setup == "active":
        q.add(target)
    elif setup == "unschedulable":
        put_unschedulable(q, QueuedPodInfo(PodInfo(target)))
    elif setup == "backoff":
        put_backoff(q, QueuedPodInfo(PodInfo(target)))
    q.activate([target])
    assert q.active_len() == want_active
    if want_active:
        assert in_queue(q, target) == ACTIVE
    events = q._in_flight_events
    if want_event:
        assert [(e.event, e.old, e.new) for e in events] == [(EVENT_FORCE_ACTIVATE, None, target)]
        # what the recorded activation is for: the pod comes back and is requeued at once
        assert popped is not None
        popped.unschedulable_plugins = {"plugin"}
        q.add_unschedulable_if_not_present(popped, q.scheduling_cycle)
        assert in_queue(q, target) == BACKOFF
    else:
        assert events == []


# ---- TestPriorityQueue_moveToActiveQ / moveToBackoffQ --------------------------------------
PRE_ENQUEUE = "preEnqueuePlugin"


@pytest.mark.parametrize(("allow", "pod_name", "event", "pop_from_backoff", "want_unsched", "want_success"), [
    pytest.param(None, "p", EVENT_UNSCHEDULED_POD_ADD.label, True, 0, True,
                 id="no plugins registered popFromBackoffQEnabled(true)"),
    pytest.param(None, "p", EVENT_UNSCHEDULED_POD_ADD.label, False, 0, True,
                 id="no plugins registered popFromBackoffQEnabled(false)"),
    pytest.param([], "p", EVENT_UNSCHEDULED_POD_ADD.label, True, 1, False,
                 id="preEnqueue plugin registered, pod name not in allowlists popFromBackoffQEnabled(true)"),
    pytest.param([], "p", EVENT_UNSCHEDULED_POD_ADD.label, False, 1, False,
                 id="preEnqueue plugin registered, pod name not in allowlists popFromBackoffQEnabled(false)"),
    # of two plugins with one name, upstream's map keeps the last: allowlist ["foo"]
    pytest.param(["foo"], "bar", EVENT_UNSCHEDULED_POD_ADD.label, True, 1, False,
                 id="preEnqueue plugin registered, pod failed one preEnqueue plugin popFromBackoffQEnabled(true)"),
    pytest.param(["foo"], "bar", EVENT_UNSCHEDULED_POD_ADD.label, False, 1, False,
                 id="preEnqueue plugin registered, pod failed one preEnqueue plugin popFromBackoffQEnabled(false)"),
    pytest.param(["foo"], "bar", BACKOFF_COMPLETE, False, 1, False,
                 id="preEnqueue plugin registered, preEnqueue plugin would reject the pod, but isn't run "
                    "popFromBackoffQEnabled(false)"),
    pytest.param(["foo"], "bar", BACKOFF_COMPLETE, True, 0, True,
                 id="preEnqueue plugin registered, pod would fail one preEnqueue plugin, but is after backoff "
                    "popFromBackoffQEnabled(true)"),
    pytest.param(["bar"], "bar", EVENT_UNSCHEDULED_POD_ADD.label, True, 0, True,
                 id="preEnqueue plugin registered, pod passed all preEnqueue plugins popFromBackoffQEnabled(true)"),
    pytest.param(["bar"], "bar", EVENT_UNSCHEDULED_POD_ADD.label, False, 0, True,
                 id="preEnqueue plugin registered, pod passed all preEnqueue plugins popFromBackoffQEnabled(false)"),
])
async def test_priority_queue_move_to_active_q(clock, allow, pod_name, event, pop_from_backoff, want_unsched,
                                               want_success):
    plugins = [] if allow is None else [plugin(PRE_ENQUEUE, allow_labels=allow)]
    q = new_queue(clock, *plugins, pop_from_backoff=pop_from_backoff, pod_initial_backoff=30, pod_max_backoff=60)
    pod = make_pod(pod_name).labels({pod_name: ""}).obj()
    assert q._move_to_active(q._new_qpi(pod), event) is want_success
    assert len(q._unschedulable) == want_unsched
    # an update leaves the pod where it is
    q.update(pod, _annotated(pod, ""))
    assert len(q._unschedulable) == want_unsched


@pytest.mark.parametrize(("allow", "pod_name", "pop_from_backoff", "want_success"), [
    pytest.param(None, "p", True, True, id="no plugins registered popFromBackoffQEnabled(true)"),
    pytest.param(None, "p", False, True, id="no plugins registered popFromBackoffQEnabled(false)"),
    pytest.param([], "p", False, True,
                 id="preEnqueue plugin registered, pod name would not be in allowlists popFromBackoffQEnabled(false)"),
    pytest.param([], "p", True, False,
                 id="preEnqueue plugin registered, pod name not in allowlists popFromBackoffQEnabled(true)"),
    pytest.param(["foo"], "bar", False, True,
                 id="preEnqueue plugin registered, preEnqueue plugin would reject the pod, but isn't run "
                    "popFromBackoffQEnabled(false)"),
    pytest.param(["foo"], "bar", True, False,
                 id="preEnqueue plugin registered, pod failed one preEnqueue plugin popFromBackoffQEnabled(true)"),
    pytest.param(["bar"], "bar", True, True,
                 id="preEnqueue plugin registered, pod passed all preEnqueue plugins popFromBackoffQEnabled(true)"),
    pytest.param(["bar"], "bar", False, True,
                 id="preEnqueue plugin registered, pod passed all preEnqueue plugins popFromBackoffQEnabled(false)"),
])
async def test_priority_queue_move_to_backoff_q(clock, allow, pod_name, pop_from_backoff, want_success):
    plugins = [] if allow is None else [plugin(PRE_ENQUEUE, allow_labels=allow)]
    q = new_queue(clock, *plugins, pop_from_backoff=pop_from_backoff, pod_initial_backoff=30, pod_max_backoff=60)
    pod = make_pod(pod_name).labels({pod_name: ""}).obj()
    assert q._move_to_backoff(q._new_qpi(pod), EVENT_UNSCHEDULED_POD_ADD.label) is want_success
    assert in_queue(q, pod) == (BACKOFF if want_success else UNSCHED)


# ---- TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint -----------------------
HINT_POD = make_pod("pod1", "ns1").uid("1").labels(foo="bar").obj()


def _not_called(pod: Any, old: Any, new: Any) -> QueueingHint:
    raise AssertionError("QueueingHintFn should not be called as pod is gated")


@pytest.mark.parametrize(("info", "hint", "duration", "want"), [
    pytest.param(lambda q: qpi(q, HINT_POD, pending=["foo"]), queue_hint, 0.0, ACTIVE,
                 id="Queue queues pod to activeQ"),
    pytest.param(lambda q: qpi(q, HINT_POD, "foo", attempts=1), queue_hint, 0.0, BACKOFF,
                 id="Queue queues pod to backoffQ if Pod is backing off"),
    pytest.param(lambda q: qpi(q, HINT_POD, "foo"), queue_hint, DEFAULT_POD_INITIAL_BACKOFF, ACTIVE,
                 id="Queue queues pod to activeQ if Pod is not backing off"),
    pytest.param(lambda q: qpi(q, HINT_POD, "foo"), skip_hint, 0.0, UNSCHED,
                 id="Skip queues pod to unschedulablePods"),
    pytest.param(lambda q: gated(qpi(q, HINT_POD), "SchedulingGates"), _not_called, 0.0, UNSCHED,
                 id="QueueHintFunction is not called when Pod is gated by the plugin that isn't interested in the event"),
    pytest.param(lambda q: gated(qpi(q, HINT_POD), "foo"), queue_hint, 0.0, ACTIVE,
                 id="QueueHintFunction is called when Pod is gated by the plugin that is interested in the event"),
    pytest.param(lambda q: gated(qpi(q, HINT_POD, attempts=1), "foo"), queue_hint, 0.0, BACKOFF,
                 id="Pod that experienced a scheduling failure before should be queued to backoffQ after un-gated"),
])
async def test_move_all_to_active_or_backoff_queue_with_queueing_hint(clock, info, hint, duration, want):
    foo = plugin("foo", (REG_NODE_ADD, hint), allow_labels=["foo"])
    q = new_queue(clock, foo, in_tree=["SchedulingGates"])
    q.add(HINT_POD)
    await pop(q, HINT_POD)
    q.add_unschedulable_if_not_present(info(q), q.scheduling_cycle)
    clock.advance(duration)
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert in_queue(q, HINT_POD) == want


# ---- TestPriorityQueue_MoveAllToActiveOrBackoffQueue -----------------------------------------
async def test_priority_queue_move_all_to_active_or_backoff_queue(clock):
    q = new_queue(clock, plugin("fooPlugin", (REG_NODE_ADD, queue_hint)), plugin("barPlugin"))
    unsched, high, med = up(), hpp(), mpp()
    hpp1, hpp2 = clone(high, "hpp1"), clone(high, "hpp2")

    def in_flight() -> list[str]:
        return sorted(q.in_flight())

    q.add(unsched)
    await pop(q, unsched)
    assert in_flight() == [uid(unsched)]
    q.add(high)
    await pop(q, high)
    assert in_flight() == sorted([uid(unsched), uid(high)])
    q.add_unschedulable_if_not_present(attempt(qpi(q, unsched, "fooPlugin")), q.scheduling_cycle)
    q.add_unschedulable_if_not_present(attempt(qpi(q, high, "fooPlugin")), q.scheduling_cycle)
    assert in_flight() == []
    q.add(hpp1)
    await pop(q, hpp1)
    q.add_unschedulable_if_not_present(attempt(qpi(q, hpp1)), q.scheduling_cycle)  # no plugin: backoffQ
    q.add(hpp2)
    await pop(q, hpp2)
    q.add_unschedulable_if_not_present(attempt(qpi(q, hpp2, "barPlugin")), q.scheduling_cycle)
    assert in_flight() == []
    # NodeAdd moves the pods fooPlugin rejected to backoffQ (they are backing off)
    q.move_all_to_active_or_backoff(NODE_ADD)
    q.add(med)
    assert q.active_len() == 1
    await pop(q, med)
    assert in_flight() == [uid(med)]
    assert len(q._backoff) == 3  # hpp2 is not moved
    # the backoffQ's pods are popped out (and dropped): not in flight
    clock.advance(q.pod_max_backoff)
    q._backoff.pop_completed(q.is_backing_off)
    assert in_flight() == [uid(med)]

    for p in (unsched, high, hpp1):
        q.add(p)
        await pop(q, p)
    assert in_flight() == sorted(uid(p) for p in (med, unsched, high, hpp1))
    hpp1_info = attempt(qpi(q, hpp1))
    q.add_unschedulable_if_not_present(attempt(qpi(q, unsched, "fooPlugin")), q.scheduling_cycle)
    assert in_flight() == sorted(uid(p) for p in (med, high, hpp1))
    q.add_unschedulable_if_not_present(attempt(qpi(q, high, "fooPlugin")), q.scheduling_cycle)
    assert in_flight() == sorted(uid(p) for p in (med, hpp1))
    q.add_unschedulable_if_not_present(hpp1_info, q.scheduling_cycle)
    assert in_flight() == [uid(med)]
    q.add(med)
    for p in (unsched, high, hpp2):
        assert in_queue(q, p) == UNSCHED, name(p)
    assert in_queue(q, hpp1) == BACKOFF
    # past every backoff: the flush moves hpp1, NodeAdd the pods fooPlugin rejected
    clock.advance(q.pod_max_backoff)
    q.flush_backoff_completed()
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.active_len() == 4
    assert len(q._backoff) == 0
    assert in_flight() == [uid(med)]
    assert len(q._unschedulable) == 1  # hpp2, whatever its backoff


# ---- TestPriorityQueue_AssignedPodAdded_ / AssignedPodUpdated --------------------------------
AFFINITY_POD = make_pod("afp", "ns1").uid("afp").annotations({"annot2": "val2"}) \
    .pod_affinity("region", {"matchExpressions": [{"key": "service", "operator": "Exists"}]}).obj()
SPREAD_POD = make_pod("tsp", "ns1").uid("tsp").spread_constraint(1, "node", "DoNotSchedule").obj()
PLAIN_POD = make_pod("afp", "ns1").uid("afp").annotations({"annot2": "val2"}).obj()
MATCHING = make_pod("lbp", "ns1").labels(service="securityscan").node("node1").obj()
UNRELATED = make_pod("lbp", "unrelated").labels(unrelated="unrelated").node("node1").obj()


@pytest.mark.parametrize(("pod", "rejector", "assigned", "want"), [
    pytest.param(AFFINITY_POD, "InterPodAffinity", MATCHING, True,
                 id="Pod rejected by pod affinity is requeued with matching Pod's update"),
    pytest.param(AFFINITY_POD, "InterPodAffinity", UNRELATED, False,
                 id="Pod rejected by pod affinity isn't requeued with unrelated Pod's update"),
    pytest.param(SPREAD_POD, "PodTopologySpread", MATCHING, True,
                 id="Pod rejected by pod topology spread is requeued with Pod's update in the same namespace"),
    pytest.param(AFFINITY_POD, "PodTopologySpread", UNRELATED, False,
                 id="Pod rejected by pod topology spread isn't requeued with unrelated Pod's update"),
    pytest.param(PLAIN_POD, "fakePlugin", UNRELATED, False,
                 id="Pod rejected by other plugins isn't requeued with any Pod's update"),
])
async def test_priority_queue_assigned_pod_added(clock, pod, rejector, assigned, want):
    # stand-ins named like the in-tree plugins, whose hint is a plain Queue (upstream's hint map)
    q = new_queue(clock, *(plugin(n, (REG_ASSIGNED_POD_ADD, queue_hint))
                           for n in ("fakePlugin", "InterPodAffinity", "PodTopologySpread")))
    q.add(pod)
    await pop(q, pod)
    q.add_unschedulable_if_not_present(qpi(q, pod, rejector), q.scheduling_cycle)
    clock.advance(DEFAULT_POD_INITIAL_BACKOFF + 1)
    q.assigned_pod_added(assigned)
    assert (in_queue(q, pod) == ACTIVE) is want


POD_LABEL_UPDATE = ClusterEvent(R.POD, A.UPDATE_POD_LABEL)
SCALE_DOWN_POD = make_pod("rp", "ns1").uid("afp").annotations({"annot2": "val2"}).req(cpu="1").obj()


@pytest.mark.parametrize(("pod", "rejector", "event", "assigned", "want"), [
    pytest.param(AFFINITY_POD, "InterPodAffinity", POD_LABEL_UPDATE, MATCHING, True,
                 id="Pod rejected by pod affinity is requeued with matching Pod's update"),
    pytest.param(AFFINITY_POD, "InterPodAffinity", POD_LABEL_UPDATE, UNRELATED, False,
                 id="Pod rejected by pod affinity isn't requeued with unrelated Pod's update"),
    pytest.param(SPREAD_POD, "PodTopologySpread", POD_LABEL_UPDATE, MATCHING, True,
                 id="Pod rejected by pod topology spread is requeued with Pod's update in the same namespace"),
    pytest.param(AFFINITY_POD, "PodTopologySpread", POD_LABEL_UPDATE, UNRELATED, False,
                 id="Pod rejected by pod topology spread isn't requeued with unrelated Pod's update"),
    pytest.param(SCALE_DOWN_POD, "NodeResourcesFit", ClusterEvent(R.ASSIGNED_POD, A.UPDATE_POD_SCALE_DOWN),
                 make_pod("lbp", "ns2").node("node1").obj(), True,
                 id="Pod rejected by resource fit is requeued with assigned Pod's scale down"),
    pytest.param(PLAIN_POD, "fakePlugin", POD_LABEL_UPDATE, UNRELATED, False,
                 id="Pod rejected by other plugins isn't requeued with any Pod's update"),
])
async def test_priority_queue_assigned_pod_updated(clock, pod, rejector, event, assigned, want):
    plugins = [plugin(n, (POD_LABEL_UPDATE, queue_hint)) for n in ("fakePlugin", "InterPodAffinity", "PodTopologySpread")]
    plugins.append(plugin("NodeResourcesFit", (ClusterEvent(R.POD, A.UPDATE_POD_SCALE_DOWN), queue_hint)))
    q = new_queue(clock, *plugins)
    q.add(pod)
    await pop(q, pod)
    q.add_unschedulable_if_not_present(qpi(q, pod, rejector), q.scheduling_cycle)
    clock.advance(DEFAULT_POD_INITIAL_BACKOFF + 1)
    q.assigned_pod_updated(None, assigned, event)
    assert (in_queue(q, pod) == ACTIVE) is want


# ---- nominator: NominatedPodsForNode / NominatedPodDeleted / UpdateNominatedPodForNode --------
async def test_priority_queue_nominated_pods_for_node(clock):
    q = new_queue(clock)
    q.add(mpp())
    q.add(up())
    q.add(hpp())
    await pop(q, hpp())
    got = q.nominator.nominated_pods_for_node("node1")
    assert [p.uid for p in got] == ["mppns2", "upns1"]
    got.clear()  # the caller's copy
    assert [p.uid for p in q.nominator.nominated_pods_for_node("node1")] == ["mppns2", "upns1"]
    assert q.nominator.nominated_pods_for_node("node2") == []


@pytest.mark.parametrize(("pod", "deleted", "want"), [
    pytest.param(mpp(), False, 1, id="alive pod gets added into PodNominator"),
    pytest.param(hpp_nominated(), True, 0, id="deleted pod shouldn't be added into PodNominator"),
    pytest.param(hpp(), False, 0, id="pod without .status.nominatedPodName specified shouldn't be added into PodNominator"),
])
def test_priority_queue_nominated_pod_deleted(clock, pod, deleted, want):
    store = {} if deleted else {(pod["metadata"]["namespace"], name(pod)): pod}
    q = new_queue(clock, pod_lister=lambda ns, n: store.get((ns, n)))
    q.nominator.add(PodInfo(pod))
    nnn = pod["status"].get("nominatedNodeName", "")
    assert len(q.nominator.nominated_pods_for_node(nnn)) == want


async def test_priority_queue_update_nominated_pod_for_node(clock):
    sp = make_pod("sp", "ns1").uid("spns1").node("foo").obj()
    store = {(p["metadata"]["namespace"], name(p)): p for p in (mpp(), up(), hpp(), sp)}
    q = new_queue(clock, pod_lister=lambda ns, n: store.get((ns, n)))
    q.add(mpp())
    q.nominator.add(PodInfo(up()), "node5")  # another node than the pod names
    q.nominator.add(PodInfo(hpp()), "node2")  # a node the pod object does not name
    want = {"node1": ["mppns2"], "node2": ["hppns1"], "node5": ["upns1"]}
    assert nominations(q) == want
    await pop(q, mpp())
    assert nominations(q) == want  # popping does not change nominations
    q.nominator.add(PodInfo(hpp()), "node4")
    want = {"node1": ["mppns2"], "node4": ["hppns1"], "node5": ["upns1"]}
    assert nominations(q) == want
    # a pod the informer no longer has is not nominated
    q.nominator.add(PodInfo(make_pod("ne", "ns1").uid("nens1").obj()), "node1")
    assert nominations(q) == want
    # nor one already bound
    q.nominator.add(PodInfo(sp), "node1")
    assert nominations(q) == want
    q.nominator.delete(uid(hpp()))
    assert nominations(q) == {"node1": ["mppns2"], "node5": ["upns1"]}


def test_priority_queue_new_with_options(clock):
    q = new_queue(clock, pod_initial_backoff=2, pod_max_backoff=20)
    assert q.pod_initial_backoff == 2 and q.pod_max_backoff == 20


# ---- TestPriorityQueue_PendingPods ------------------------------------------------------------
async def test_priority_queue_pending_pods(clock):
    q = new_queue(clock)
    q.add(up())
    await pop(q, up())
    q.add(hpp())
    await pop(q, hpp())
    q.add(mpp())
    q.add_unschedulable_if_not_present(attempt(qpi(q, up(), "plugin")), q.scheduling_cycle)
    q.add_unschedulable_if_not_present(attempt(qpi(q, hpp(), "plugin")), q.scheduling_cycle)

    def summary() -> tuple[int, int, int]:
        c = q.pending_counts()
        return c["active"], c["backoff"], c["unschedulable"] + c["gated"]

    want = {"ns2/mpp", "ns1/up", "ns1/hpp"}
    assert {p["pod"] for p in q.pending_pods()} == want
    assert summary() == (1, 0, 2)
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert {p["pod"] for p in q.pending_pods()} == want
    assert summary() == (1, 2, 0)


# ---- TestSchedulingQueue_Close ---------------------------------------------------------------
async def test_scheduling_queue_close(clock):
    q = new_queue(clock)
    popper = asyncio.create_task(q.pop())
    await asyncio.sleep(0)
    q.close()
    assert await asyncio.wait_for(popper, 5) is None


# ---- ordering: RecentlyTriedPodsGoBack, ...DoesNotBlockNewerPod, HighPriorityBackoff, ... -----
async def test_recently_tried_pods_go_back(clock):
    q = new_queue(clock)
    pods = [make_pod(f"test-pod-{i}", "ns1").uid(f"tp00{i}").priority(HIGH).node("node1").nominated("node1").obj()
            for i in range(5)]
    for p in pods:
        q.add(p)
    clock.advance(1e-6)
    p1 = await pop(q)
    p1.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(p1, q.scheduling_cycle)
    clock.advance(q.pod_max_backoff)
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    for i in range(5):
        p = await pop(q)
        assert (i == 4) == (p is p1), f"a pod tried before is not the last pod popped: i={i} {p.pod_info.name}"


async def test_pod_failed_scheduling_multiple_times_does_not_block_newer_pod(clock):
    q = new_queue(clock)
    unsched = make_pod("test-pod-unscheduled", "ns1").uid("tp001").priority(HIGH).nominated("node1") \
        .condition("PodScheduled", "False", reason="Unschedulable", message="fake scheduling failure").obj()
    q.add(unsched)
    await pop(q, unsched)
    q.add_unschedulable_if_not_present(qpi(q, unsched, "plugin"), q.scheduling_cycle)
    clock.advance(DEFAULT_POD_INITIAL_BACKOFF + 1)
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    await pop(q, unsched)
    # a newer pod arrives while the unschedulable one is being scheduled
    newer = make_pod("test-newer-pod", "ns1").uid("tp002").priority(HIGH).nominated("node1").obj()
    q.add(newer)
    q.add_unschedulable_if_not_present(qpi(q, unsched, "plugin"), q.scheduling_cycle)
    clock.advance(DEFAULT_POD_INITIAL_BACKOFF + 1)
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    await pop(q, newer)


async def test_high_priority_backoff():
    q = new_queue(FakeClock())
    mid = make_pod("test-midpod", "ns1").uid("tp-mid").priority(MID).nominated("node1").obj()
    high = make_pod("test-highpod", "ns1").uid("tp-high").priority(HIGH).nominated("node1").obj()
    q.add(mid)
    q.add(high)
    p = await pop(q, high)
    q.add_unschedulable_if_not_present(p, q.scheduling_cycle)
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    await pop(q, mid)


async def test_high_priority_flush_unschedulable_pods_leftover(clock):
    q = new_queue(clock, plugin("fakePlugin", (REG_NODE_ADD, queue_hint)))
    mid = make_pod("test-midpod", "ns1").uid("tp-mid").priority(MID).nominated("node1") \
        .condition("PodScheduled", "False", reason="Unschedulable", message="fake scheduling failure").obj()
    high = make_pod("test-highpod", "ns1").uid("tp-high").priority(HIGH).nominated("node1") \
        .condition("PodScheduled", "False", reason="Unschedulable", message="fake scheduling failure").obj()
    q.add(high)
    await pop(q, high)
    q.add(mid)
    await pop(q, mid)
    q.add_unschedulable_if_not_present(qpi(q, high, "fakePlugin"), q.scheduling_cycle)
    q.add_unschedulable_if_not_present(qpi(q, mid, "fakePlugin"), q.scheduling_cycle)
    clock.advance(POD_MAX_IN_UNSCHEDULABLE_DURATION + 1)
    q.flush_unschedulable_left_over()
    await pop(q, high)
    await pop(q, mid)


def _unsched_condition(pod: JsonDict) -> JsonDict:
    out = {**pod, "status": {**pod["status"]}}
    out["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                    "message": "fake scheduling failure"}]
    return out


def add_unschedulable_pod(q: PriorityQueue, info: QueuedPodInfo) -> None:
    """upstream addPodUnschedulablePods: a pod that was tried (not when gated)."""
    if not info.gated:
        info.pod_info = PodInfo(_unsched_condition(info.pod))
        attempt(info)
    put_unschedulable(q, info)


def flush_unscheduled_q(q: PriorityQueue, clock: FakeClock) -> None:
    clock.advance(q.pod_max_in_unschedulable_duration)
    q.flush_unschedulable_left_over()


def pop_all_active(q: PriorityQueue) -> list[str]:
    """upstream activeQ.pop until empty: names in order (no in-flight bookkeeping needed)."""
    out = []
    while (info := q._active.pop()) is not None:
        out.append(info.pod_info.name)
    return out


@pytest.mark.parametrize("max_duration", [
    pytest.param(None, id="New priority queue by the default value of podMaxInUnschedulablePodsDuration"),
    pytest.param(30.0, id="New priority queue by user-defined value of podMaxInUnschedulablePodsDuration"),
])
def test_priority_queue_init_pod_max_in_unschedulable_pods_duration(clock, max_duration):
    kw = {} if max_duration is None else {"pod_max_in_unschedulable_duration": max_duration}
    q = new_queue(clock, **kw)
    now = clock.monotonic()
    pod1 = make_pod("test-pod-1", "ns1").uid("tp-1").nominated("node1").obj()
    pod2 = make_pod("test-pod-2", "ns2").uid("tp-2").nominated("node2").obj()
    add_unschedulable_pod(q, qpi(q, pod1, timestamp=now - 1))
    add_unschedulable_pod(q, qpi(q, pod2, timestamp=now - 2))
    flush_unscheduled_q(q, clock)
    assert q.active_len() == 2
    assert pop_all_active(q) == ["test-pod-2", "test-pod-1"]


# ---- TestPodTimestamp ----------------------------------------------------------------------
@pytest.mark.parametrize("ops", [
    pytest.param(["active:2", "active:1"], id="add two pod to activeQ and sort them by the timestamp"),
    pytest.param(["unsched:2", "unsched:1", "clock", "move"],
                 id="add two pod to unschedulablePods then move them to activeQ and sort them by the timestamp"),
    pytest.param(["active:2", "backoff:1", "flush", "move"], id="add one pod to BackoffQ and move it to activeQ"),
])
def test_pod_timestamp(clock, ops):
    q = new_queue(clock)
    now = clock.monotonic()
    pods = {"1": make_pod("test-pod-1", "ns1").uid("tp-1").nominated("node1").obj(),
            "2": make_pod("test-pod-2", "ns2").uid("tp-2").nominated("node2").obj()}
    stamps = {"1": now, "2": now + 1}
    for op in ops:
        kind, _, which = op.partition(":")
        if kind == "active":
            put_active(q, qpi(q, pods[which], timestamp=stamps[which]))
        elif kind == "unsched":
            add_unschedulable_pod(q, qpi(q, pods[which], timestamp=stamps[which]))
        elif kind == "backoff":
            put_backoff(q, qpi(q, pods[which], timestamp=stamps[which]))
        elif kind == "clock":
            clock.advance(3)
        elif kind == "flush":
            clock.advance(3)
            q.flush_backoff_completed()
        else:
            q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert q.active_len() == 2
    assert pop_all_active(q) == ["test-pod-1", "test-pod-2"]


# ---- TestPendingPodsMetric (scheduler_pending_pods) -----------------------------------------
def _pending_metric_pods(q: PriorityQueue, now: float) -> tuple[list[QueuedPodInfo], list[QueuedPodInfo]]:
    """50 queueable pods, 10 gated by preEnqueuePlugin (pInfos), 20 queueable stamped 2 s later
    (pInfosWithDelay); distinct uids (upstream's clash, its queue keys by name)."""
    def make(n: int, prefix: str, label: str, ts: float) -> list[QueuedPodInfo]:
        return [qpi(q, make_pod(f"{prefix}-{i}", f"ns{i}").labels({label: ""}).uid(f"tp-{prefix}-{i}").obj(),
                    timestamp=ts) for i in range(1, n + 1)]
    infos = make(50, "x", "queueable", now)
    infos += [gated(i, PRE_ENQUEUE) for i in make(10, "y", "failme", now)]
    return infos, make(20, "z", "queueable", now + 2)


def _queueable(q: PriorityQueue, c: FakeClock, info: QueuedPodInfo) -> None:
    q.update(info.pod, make_pod(info.pod_info.name, info.pod_info.namespace).uid(info.uid)
             .labels(queueable="").obj())


PENDING_OPS: dict[str, Callable[[PriorityQueue, FakeClock, QueuedPodInfo], None]] = {
    "active": lambda q, c, i: q.add(i.pod),
    "backoff": lambda q, c, i: put_backoff(q, i),
    "unsched": lambda q, c, i: add_unschedulable_pod(q, i),
    "delete": lambda q, c, i: q.delete(i.pod),
    "queueable": _queueable,
}


@pytest.mark.parametrize(("ops", "want"), [
    pytest.param([("active", 0, 30), ("unsched", 30, 60)], (30, 0, 10, 20),
                 id="add pods to activeQ and unschedulablePods"),
    pytest.param([("active", 0, 15), ("backoff", 15, 40), ("unsched", 40, 60)], (15, 25, 10, 10),
                 id="add pods to all kinds of queues"),
    pytest.param([("unsched", 0, 60), "clock", "move"], (50, 0, 10, 0),
                 id="add pods to unschedulablePods and then move all to activeQ"),
    pytest.param([("unsched", 20, 60), "clock", ("unsched-delayed", 0, 20), "move"], (30, 20, 10, 0),
                 id="make some pods subject to backoff, add pods to unschedulablePods, and then move all to activeQ"),
    pytest.param([("unsched", 0, 40), ("active", 40, 50), "move", "flush"], (50, 0, 0, 0),
                 id="make some pods subject to backoff, add pods to unschedulablePods/activeQ, move all to activeQ, "
                    "and finally flush backoffQ"),
    pytest.param([("active", 0, 30), ("unsched", 30, 60), ("delete", 0, 2), ("delete", 30, 33), ("delete", 50, 54)],
                 (28, 0, 6, 17), id="add pods to activeQ/unschedulablePods and then delete some Pods"),
    pytest.param([("active", 0, 30), ("unsched", 30, 60), ("queueable", 50, 55)], (35, 0, 5, 20),
                 id="add pods to activeQ/unschedulablePods and then update some Pods as queueable"),
])
def test_pending_pods_metric(clock, ops, want):
    pre = plugin(PRE_ENQUEUE, (REG_UNSCHEDULED_POD_UPDATE, queue_hint), allow_labels=["queueable"])
    q = new_queue(clock, pre)
    infos, delayed = _pending_metric_pods(q, clock.monotonic())
    for op in ops:
        if op == "clock":
            clock.advance(3)
        elif op == "move":
            q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
        elif op == "flush":
            clock.advance(3)
            q.flush_backoff_completed()
        else:
            kind, lo, hi = op
            source = delayed if kind == "unsched-delayed" else infos
            for info in source[lo:hi]:
                PENDING_OPS[kind.removesuffix("-delayed")](q, clock, info)
    c = q.pending_counts()
    assert (c["active"], c["backoff"], c["gated"], c["unschedulable"]) == want


# ---- TestPerPodSchedulingMetrics -----------------------------------------------------------
async def _created_scheduled_after_two(q, c, pod, update=False):
    start = c.monotonic()
    q.add(pod)
    info = await pop(q, pod)
    info.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(info, 1)
    c.advance(start + POD_MAX_IN_UNSCHEDULABLE_DURATION + 1e-9 - c.monotonic())
    q.flush_unschedulable_left_over()
    if update:
        new = {**pod, "metadata": {**pod["metadata"], "generation": 1}}
        q.update(pod, new)


async def _gated_then_lifted(q, c, pod):
    q.add(pod)
    assert in_queue(q, pod) == UNSCHED
    c.advance(60)
    q.update(pod, make_pod("test-pod", "test-ns").uid("test-uid").labels(foo="").obj())


@pytest.mark.parametrize(("scenario", "gate", "want_attempts", "want_initial_offset"), [
    pytest.param(lambda q, c, p: q.add(p), False, 1, 0.0, id="pod is created and scheduled after 1 attempt"),
    pytest.param(_created_scheduled_after_two, False, 2, 0.0, id="pod is created and scheduled after 2 attempts"),
    pytest.param(lambda q, c, p: _created_scheduled_after_two(q, c, p, update=True), False, 2, 0.0,
                 id="pod is created and scheduled after 2 attempts but before the second pop, call update"),
    pytest.param(_gated_then_lifted, True, 1, 60.0, id="A gated pod is created and scheduled after lifting gate"),
])
async def test_per_pod_scheduling_metrics(clock, scenario, gate, want_attempts, want_initial_offset):
    start = clock.monotonic()
    pod = make_pod("test-pod", "test-ns").uid("test-uid").obj()
    q = new_queue(clock, *([plugin(PRE_ENQUEUE, allow_labels=["foo"])] if gate else []))
    result = scenario(q, clock, pod)
    if asyncio.iscoroutine(result):
        await result
    info = await pop(q, pod)
    assert info.attempts == want_attempts
    assert info.initial_attempt_timestamp == pytest.approx(start + want_initial_offset)


# ---- TestIncomingPodsMetrics (scheduler_queue_incoming_pods_total) ---------------------------
@pytest.mark.parametrize(("ops", "want"), [
    pytest.param(["add"], {("active", "UnschedulablePodAdd"): 3}, id="add pods to activeQ"),
    pytest.param(["unschedulable"], {("active", "UnschedulablePodAdd"): 3,
                                     ("unschedulable", "ScheduleAttemptFailure"): 3},
                 id="add pods to unschedulablePods"),
    pytest.param(["unschedulable", "move"], {("active", "UnschedulablePodAdd"): 3,
                                             ("unschedulable", "ScheduleAttemptFailure"): 3,
                                             ("backoff", "UnschedulableTimeout"): 3},
                 id="add pods to unschedulablePods and then move all to backoffQ"),
    pytest.param(["unschedulable", "clock", "move"], {("active", "UnschedulablePodAdd"): 3,
                                                      ("unschedulable", "ScheduleAttemptFailure"): 3,
                                                      ("active", "UnschedulableTimeout"): 3},
                 id="add pods to unschedulablePods and then move all to activeQ"),
    pytest.param(["backoff", "clock", "flush"], {("active", "UnschedulablePodAdd"): 3,
                                                 ("active", "BackoffComplete"): 3,
                                                 ("backoff", "ScheduleAttemptFailure"): 3},
                 id="make some pods subject to backoff and add them to backoffQ, then flush backoffQ"),
])
async def test_incoming_pods_metrics(clock, ops, want):
    q = new_queue(clock)
    counts: Counter[tuple[str, str]] = Counter()
    q.on_incoming = lambda queue, event: counts.update([(queue, event)])
    pods = [make_pod(f"test-pod-{i}", f"ns{i}").uid(f"tp-{i}").obj() for i in range(1, 4)]
    for op in ops:
        for pod in pods:
            if op == "add":
                q.add(pod)
            elif op in ("unschedulable", "backoff"):
                q.add(pod)
                info = await pop(q, pod)
                if op == "unschedulable":
                    info.unschedulable_plugins = {"unschedulable_plugin"}
                q.add_unschedulable_if_not_present(info, 1)
            elif op == "move":
                q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
            elif op == "clock":
                clock.advance(3)
            else:
                clock.advance(3)
                q.flush_backoff_completed()
    assert dict(counts) == want


# ---- TestBackOffFlow ---------------------------------------------------------------------------
@pytest.mark.parametrize("pop_from_backoff", [pytest.param(True, id="popFromBackoffQEnabled(true)"),
                                              pytest.param(False, id="popFromBackoffQEnabled(false)")])
async def test_back_off_flow(clock, pop_from_backoff):
    q = new_queue(clock, pop_from_backoff=pop_from_backoff)
    pod = make_pod("test-pod", "test-ns").uid("test-uid").obj()
    q.add(pod)
    for i, want in enumerate((1, 2, 4, 8, 10, 10, 10)):
        timestamp = clock.monotonic()
        info = await pop(q, pod)
        assert info.attempts == i + 1
        q.add_unschedulable_if_not_present(info, i)
        q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)  # an event happens
        assert in_queue(q, pod) == BACKOFF, f"step {i}"
        backoff = q.backoff_expiry(info) - timestamp
        if pop_from_backoff:
            # the actual backoff: rounded up to the ordering window
            backoff = (backoff // BACKOFF_ORDERING_WINDOW) * BACKOFF_ORDERING_WINDOW + BACKOFF_ORDERING_WINDOW
        assert backoff == pytest.approx(want), f"step {i}"
        # the routine that keeps flushing backoffQ: still there after an early flush
        clock.advance(BACKOFF_ORDERING_WINDOW)
        q.flush_backoff_completed()
        assert in_queue(q, pod) == BACKOFF, f"step {i}"
        # and out after the backoff
        clock.advance(backoff)
        q.flush_backoff_completed()
        assert in_queue(q, pod) == ACTIVE, f"step {i}"


# ---- TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks ------------------------------------------
def _explode(pod: JsonDict) -> bool:
    raise AssertionError("preCheck shouldn't be called")


@pytest.mark.parametrize(("precheck", "event", "want"), [
    pytest.param(None, EVENT_UNSCHEDULABLE_TIMEOUT, {"p0", "p1", "p2", "p3", "p4"}, id="nil PreEnqueueCheck"),
    pytest.param(lambda p: p["spec"]["priority"] >= 2, EVENT_UNSCHEDULABLE_TIMEOUT, {"p2", "p3", "p4"},
                 id="move Pods with priority greater than 2"),
    pytest.param(lambda p: p["spec"]["priority"] % 2 == 0 and p["spec"]["priority"] >= 2, EVENT_UNSCHEDULABLE_TIMEOUT,
                 {"p2", "p4"}, id="move Pods with even priority and greater than 2"),
    pytest.param(lambda p: p["spec"]["priority"] % 2 == 0 and p["spec"]["priority"] < 0, EVENT_UNSCHEDULABLE_TIMEOUT,
                 set(), id="move Pods with even and negative priority"),
    pytest.param(_explode, PV_ADD, set(), id="preCheck isn't called if the event is not interested by any plugins"),
])
async def test_move_all_to_active_or_backoff_queue_pre_enqueue_checks(aligned_clock, precheck, event, want):
    q = new_queue(aligned_clock)
    for i in range(5):
        pod = make_pod(f"p{i}").priority(i).obj()
        q.add(pod)
        await pop(q, pod)
        q.add_unschedulable_if_not_present(attempt(qpi(q, pod, "plugin")), q.scheduling_cycle)
    q.move_all_to_active_or_backoff(event, None, None, precheck)
    aligned_clock.advance(2 * q.pod_max_backoff)
    got = {i.pod_info.name for i in q._backoff.pop_completed(q.is_backing_off)}
    assert got == want


# ---- Test_isPodWorthRequeuing ---------------------------------------------------------------
class _Counted:
    def __init__(self) -> None:
        self.count = 0

    def hint(self, result: QueueingHint | None) -> Callable[[Any, Any, Any], QueueingHint]:
        def fn(pod: Any, old: Any, new: Any) -> QueueingHint:
            self.count += 1
            if result is None:
                raise RuntimeError("unexpected error")
            return result
        return fn


WORTH_POD = make_pod("pod1", "ns1").uid("1").obj()
NODE_UPDATE_LABEL = ClusterEvent(R.NODE, A.UPDATE_NODE_LABEL)


@pytest.mark.parametrize(("unsched", "pending", "regs", "event", "new", "want", "want_count"), [
    pytest.param(["fooPlugin1"], [], {"fooPlugin1": [(REG_ASSIGNED_POD_ADD, Q)]}, NODE_ADD,
                 make_node("n").obj(), "skip", 0,
                 id="return Queue when no queueing hint function is registered for the event"),
    pytest.param(["fooPlugin1"], [], {"fooPlugin1": [(REG_NODE_ADD, None)]}, NODE_ADD, make_node("n").obj(),
                 "backoff", 1, id="Treat the event as Queue when QueueHintFn returns error"),
    pytest.param(["fooPlugin1"], [], {}, EVENT_UNSCHEDULABLE_TIMEOUT, None, "backoff", 0,
                 id="return Queue when the event is wildcard"),
    pytest.param(["fooPlugin1"], [], {}, EVENT_FORCE_ACTIVATE, WORTH_POD, "backoff", 0,
                 id="return Queue when the event is wildcard and the wildcard targets the pod to be requeued right now"),
    pytest.param(["fooPlugin1"], [], {}, EVENT_FORCE_ACTIVATE, make_pod("pod-different", "ns2").uid("2").obj(),
                 "skip", 0, id="return Skip when the event is wildcard, but the wildcard targets a different pod"),
    pytest.param(["fooPlugin1", "fooPlugin3"], ["fooPlugin2"],
                 {"fooPlugin1": [(REG_NODE_ADD, Q)], "fooPlugin2": [(REG_NODE_ADD, Q)],
                  "fooPlugin3": [(REG_NODE_ADD, Q)], "fooPlugin4": [(REG_NODE_ADD, None)]},
                 NODE_ADD, make_node("n").obj(), "immediate", 2,
                 id="interprets Queue from the Pending plugin as queueImmediately"),
    pytest.param(["fooPlugin1", "fooPlugin2"], [],
                 {"fooPlugin1": [(REG_NODE_ADD, S)], "fooPlugin2": [(REG_NODE_ADD, Q)]},
                 NODE_ADD, make_node("n").obj(), "backoff", 2,
                 id="interprets Queue from the Unschedulable plugin as queueAfterBackoff"),
    pytest.param(["fooPlugin1", "fooPlugin2"], [],
                 {"fooPlugin1": [(REG_NODE_ADD, S)], "fooPlugin2": [(REG_NODE_ADD, S)],
                  "fooPlugin3": [(REG_NODE_ADD, Q)]},
                 NODE_ADD, make_node("n").obj(), "skip", 2,
                 id="Queueing hint function that isn't from the plugin in UnschedulablePlugins/PendingPlugins is ignored"),
    pytest.param(["fooPlugin1", "fooPlugin2"], [],
                 {"fooPlugin1": [(NODE_UPDATE_LABEL, Q), (ClusterEvent(R.NODE, A.UPDATE), Q), (REG_NODE_ADD, Q)],
                  "fooPlugin2": [(NODE_UPDATE_LABEL, Q)]},
                 NODE_UPDATE_LABEL, make_node("n").obj(), "backoff", 1,
                 id="If event is specific Node update event, queueing hint function for NodeUpdate/UpdateNodeLabel "
                    "is also executed"),
    pytest.param(["fooPlugin1"], [], {"fooPlugin1": [(ClusterEvent(R.WILDCARD, A.ADD), Q)]},
                 NODE_ADD, make_node("n").obj(), "backoff", 1,
                 id="If event with '*' Resource, queueing hint function for specified Resource is also executed"),
    pytest.param(["fooPlugin1"], [], {"fooPlugin1": [(ClusterEvent(R.WILDCARD, A.ALL), Q)]},
                 ClusterEvent(R.NODE, A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT), make_node("n").obj(), "backoff", 1,
                 id="If event is a wildcard one, queueing hint function for all kinds of events is executed"),
])
def test_is_pod_worth_requeuing(clock, unsched, pending, regs, event, new, want, want_count):
    counter = _Counted()
    plugins = [plugin(n, *((e, counter.hint(h)) for e, h in lst)) for n, lst in regs.items()]
    q = new_queue(clock, *plugins)
    info = QueuedPodInfo(PodInfo(WORTH_POD), unschedulable_plugins=set(unsched), pending_plugins=set(pending))
    assert q._is_pod_worth_requeuing(info, event, None, new) == want
    assert counter.count == want_count


# ---- Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate / TestPriorityQueue_GetPod ------
async def test_queued_pod_info_gated_set_upon_creation_and_unset_upon_update(clock):
    q = new_queue(clock, in_tree=["SchedulingGates"])
    gated_pod = make_pod("p").scheduling_gates("hello world").obj()
    q.add(gated_pod)
    assert q.get(uid(gated_pod)).gated
    q.update(gated_pod, make_pod("p").obj())
    info = await pop(q, gated_pod)
    assert not info.gated


@pytest.mark.parametrize(("pod_name", "want"), [
    pytest.param("pod1", "pod1", id="pod is found in activeQ"),
    pytest.param("pod2", "pod2", id="pod is found in backoffQ"),
    pytest.param("pod3", "pod3", id="pod is found in unschedulablePods"),
    pytest.param("pod4", None, id="pod is not found"),
])
def test_priority_queue_get_pod(clock, pod_name, want):
    q = new_queue(clock)
    put_active(q, QueuedPodInfo(PodInfo(make_pod("pod1").obj())))
    put_backoff(q, QueuedPodInfo(PodInfo(make_pod("pod2").obj())))
    put_unschedulable(q, QueuedPodInfo(PodInfo(make_pod("pod3").obj())))
    got = q.get(uid(make_pod(pod_name).obj()))
    assert (got.pod_info.name if got is not None else None) == want


# ---- backoff_queue_test.go -------------------------------------------------------------------
NS = 1e-9


@pytest.mark.parametrize(("initial", "maximum", "attempts", "want"), [
    pytest.param(1 * NS, 32 * NS, 0, 0.0, id="no backoff"),
    pytest.param(1 * NS, 32 * NS, 16, 32 * NS, id="normal"),
    pytest.param(1 * NS, (2**31 - 1) * NS, 32, (2**31 - 1) * NS, id="overflow_32bit"),
    pytest.param(1 * NS, (2**63 - 1) * NS, 64, (2**63 - 1) * NS, id="overflow_64bit"),
])
def test_backoff_queue_calculate_backoff_duration(clock, initial, maximum, attempts, want):
    q = new_queue(clock, pod_initial_backoff=initial, pod_max_backoff=maximum)
    info = QueuedPodInfo(PodInfo(make_pod("p").obj()), attempts=attempts)
    assert q.backoff_duration(info) == want


def _backoff_pods(q: PriorityQueue, now: float) -> dict[str, QueuedPodInfo]:
    def one(n: str, ts: float, plugins: bool) -> QueuedPodInfo:
        return qpi(q, make_pod(n).obj(), *(["plugin"] if plugins else []), attempts=1, timestamp=ts)
    return {"pod0": one("pod0", now - 2, True), "pod1": one("pod1", now + 1, True),
            "pod2": one("pod2", now - 2, False), "pod3": one("pod3", now + 1, False)}


@pytest.mark.parametrize("pop_from_backoff", [pytest.param(True, id="popFromBackoffQEnabled(true)"),
                                              pytest.param(False, id="popFromBackoffQEnabled(false)")])
@pytest.mark.parametrize(("in_backoff", "want"), [
    pytest.param([], [], id="Both queues empty, no pods moved to activeQ"),
    pytest.param(["pod0", "pod1"], ["pod0"], id="Pods only in backoffQ, some pods moved to activeQ"),
    pytest.param(["pod2", "pod3"], ["pod2"], id="Pods only in errorBackoffQ, some pods moved to activeQ"),
    pytest.param(["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"], id="Pods in both queues, some pods moved to activeQ"),
    pytest.param(["pod0", "pod2"], ["pod0", "pod2"], id="Pods in both queues, all pods moved to activeQ"),
    pytest.param(["pod1", "pod3"], [], id="Pods in both queues, no pods moved to activeQ"),
])
def test_backoff_queue_pop_all_backoff_completed(clock, in_backoff, want, pop_from_backoff):
    q = new_queue(clock, pop_from_backoff=pop_from_backoff)
    pods = _backoff_pods(q, clock.monotonic())
    for n in in_backoff:
        q._backoff.add(pods[n])
    got = [i.pod_info.name for i in q._backoff.pop_completed(q.is_backing_off)]
    assert got == want
    assert len(q._backoff) == len(in_backoff) - len(want)


ORDERING_CASES = [
    ("Pods with the same window are ordered by priority if PopFromBackoffQ is enabled", True,
     ["pod5", "pod4", "pod2", "pod3"]),
    ("Pods priority doesn't matter if PopFromBackoffQ is disabled", False, ["pod5", "pod3", "pod4", "pod2"]),
]


@pytest.mark.parametrize("case", [pytest.param(i, id=c[0]) for i, c in enumerate(ORDERING_CASES)])
def test_backoff_queue_ordering(aligned_clock, case):
    """Upstream runs both cases over the same QueuedPodInfos, one after the other: the second
    (window-less) run compares the backoff expirations the first one cached, windows, so pod2
    ties with pod3 and pod4 and the three leave in heap order."""
    now = aligned_clock.monotonic()
    infos = [QueuedPodInfo(PodInfo(make_pod(n).priority(prio).obj()), timestamp=ts, attempts=1,
                           unschedulable_plugins={"plugin"})
             for n, prio, ts in (("pod0", 1, now), ("pod1", 1, now - 1), ("pod2", 2, now - 2 + 0.001),
                                 ("pod3", 1, now - 2), ("pod4", 2, now - 2), ("pod5", 1, now - 3))]
    got = []
    for _, pop_from_backoff, _ in ORDERING_CASES:
        q = new_queue(aligned_clock, pop_from_backoff=pop_from_backoff)
        for info in infos:
            q._backoff.add(info)
        got.append([i.pod_info.name for i in q._backoff.pop_completed(q.is_backing_off)])
    assert got[case] == ORDERING_CASES[case][2]


def test_default_backoff_bounds():
    assert (DEFAULT_POD_INITIAL_BACKOFF, DEFAULT_POD_MAX_BACKOFF) == (1.0, 10.0)


def test_unschedulable_pod_update_event_label():
    # upstream framework.EventUnscheduledPodUpdate.Label(), as the incoming-pods metric shows it
    assert EVENT_UNSCHEDULED_POD_UPDATE.label == "UnschedulablePodUpdate"


# ---- derived from upstream code the tables above do not reach -------------------------------
def test_wildcard_resource_registration_needs_a_matching_action(clock):
    counter = _Counted()
    q = new_queue(clock, plugin("fooPlugin1", (ClusterEvent(R.WILDCARD, A.ADD), counter.hint(Q))))
    info = QueuedPodInfo(PodInfo(WORTH_POD), unschedulable_plugins={"fooPlugin1"})
    assert q._is_pod_worth_requeuing(info, NODE_UPDATE_LABEL, None, make_node("n").obj()) == "skip"
    assert counter.count == 0


async def test_update_removing_the_nominated_node_name_drops_the_nomination(clock):
    """upstream nominator.UpdateNominatedPod: an in-memory nomination survives an update only when
    neither the old nor the new pod object names a node."""
    q = new_queue(clock)
    q.add(mpp())
    assert nominations(q) == {"node1": ["mppns2"]}
    plain = make_pod("mpp", "ns2").uid("mppns2").priority(MEDIUM).obj()
    q.update(mpp(), plain)
    assert nominations(q) == {}
    q.nominator.add(q.get("mppns2").pod_info, "node3")  # preemption's in-memory nomination
    q.update(plain, _annotated(plain, "x"))
    assert nominations(q) == {"node3": ["mppns2"]}
