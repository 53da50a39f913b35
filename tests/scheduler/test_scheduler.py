"""End-to-end scheduling loop on the real in-process API (upstream schedule_one_test.go style):
placement, FailedScheduling message/condition/event, requeue on cluster events, gates, binding
failures, search size, tie-breaking, explain. Nodes and pods are created through the API; the
assertions read what the API holds (spec.nodeName, the PodScheduled condition, Events) and the
recorded bind and status-patch calls."""

from __future__ import annotations

import asyncio
import random
import socket
from typing import Any

import numpy as np
import pytest

from minik3s.api.errors import conflict
from minik3s.api.resources import EVENTS, NODES, PODS
from minik3s.testing.builders import make_node, make_pod
from minik3s.utils.clock import Clock, rfc3339, rfc3339_micro
from scheduler.backend.queue import EVENT_NODE_ADD
from scheduler.backend.snapshot import Snapshot
from scheduler.event_series import FINISH_SECONDS
from scheduler.framework.interface import Status
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.scheduler import (
    Diagnosis,
    FitError,
    num_feasible_nodes_to_find,
    truncate_message,
)


async def cycle(s: Any, api: Any) -> None:
    await s.schedule_one()
    await s.wait_for_bindings()
    await s.writer.flush()
    await api.settle()


def cond(env: Any, name: str) -> tuple[str, str, str]:
    c = env.scheduled_condition(name)
    return c["status"], c.get("reason", ""), c.get("message", "")


async def test_pod_is_bound_to_least_loaded_node_and_scheduled_event_emitted(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(*(make_node(f"n{i}").capacity(cpu="4", memory="8Gi").obj() for i in range(3)),
                  make_pod("busy").req(cpu="1").node("n0").obj(), make_pod("busy2").req(cpu="1").node("n1").obj(),
                  make_pod("web").req(cpu="1").obj())
    await cycle(s, real_api)
    assert env.binds() == [("default", "web", "n2")]
    assert env.node_name("web") == "n2"
    assert cond(env, "web")[0] == "True"
    [ev] = env.events("web")
    assert (ev["type"], ev["reason"], ev["message"]) == ("Normal", "Scheduled", "Successfully assigned default/web to n2")
    # events.k8s.io/v1 as client-go's recorder writes it: no deprecated source, timestamps or count
    # (stored as core/v1, whose zero values are served: null times, an empty source)
    assert ev["source"] == {} and ev["firstTimestamp"] is None and ev["lastTimestamp"] is None
    assert "count" not in ev and ev["eventTime"]
    assert ev["reportingComponent"] == "default-scheduler"
    assert ev["reportingInstance"] == f"default-scheduler-{socket.gethostname()}"
    assert ev["action"] == "Binding"
    assert ev["involvedObject"]["name"] == "web" and ev["involvedObject"]["kind"] == "Pod"
    assert ev["involvedObject"]["uid"] == env.uid("web")
    # the bound pod reached the cache through the informer
    assert s.cache.get_node_info("n2").pods[0].name == "web"
    assert not s.cache.is_assumed(env.uid("web"))
    ex = s.explain("default", "web")
    assert ex["selectedNode"] == "n2" and ex["result"] == "Bound"
    assert ex["nodes"]["n2"]["scores"]["LeastPods"] == {"raw": 100, "normalized": 100, "weight": 1, "weighted": 100}
    assert ex["nodes"]["n0"]["totalScore"] == 90


async def test_failed_scheduling_message_condition_and_event(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_node("gpu").capacity(cpu="8").taints(("dedicated", "gpu", "NoSchedule")).obj(),
                  *(make_node(f"n{i}").capacity(cpu="1").obj() for i in range(5)), make_pod("big").req(cpu="2").obj())
    await cycle(s, real_api)
    msg = "0/6 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 5 Insufficient cpu."
    assert cond(env, "big") == ("False", "Unschedulable", msg)
    assert env.node_name("big") is None and env.binds() == []
    [ev] = env.events("big")
    assert (ev["type"], ev["reason"], ev["message"], ev["action"]) == ("Warning", "FailedScheduling", msg, "Scheduling")
    uid = env.uid("big")
    q = s.queue.get(uid)
    assert s.queue.where(uid) == "unschedulablePods"
    assert q.unschedulable_plugins == {"CpuFit", "Taints"}
    ex = s.explain("default", "big")
    assert ex["message"] == msg and ex["result"] == "Unschedulable"
    first_attempt = rfc3339(s.clock.now())
    assert ex["timestamp"] == first_attempt  # the attempt's time, from the injected clock
    assert ex["nodes"]["gpu"]["filters"] == [
        {"plugin": "CpuFit", "code": "Success", "reasons": []},
        {"plugin": "Taints", "code": "UnschedulableAndUnresolvable",
         "reasons": ["node(s) had untolerated taint {dedicated: gpu}"]}]
    # a second identical failure does not patch the status again
    n = env.status_patches("big")
    assert n == 1
    s.queue.move_all_to_active_or_backoff(EVENT_NODE_ADD)
    s.clock.advance(20)
    s.queue.flush_backoff_completed()
    await cycle(s, real_api)
    assert s.explain("default", "big")["result"] == "Unschedulable"
    # the retry 20 s later carries its own time, not the second the first one was stamped in
    assert s.explain("default", "big")["timestamp"] == rfc3339(s.clock.now()) != first_attempt
    assert env.status_patches("big") == n
    assert cond(env, "big") == ("False", "Unschedulable", msg)


async def test_node_add_requeues_and_schedules_the_unschedulable_pod(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_node("small").capacity(cpu="1").obj(), make_pod("big").req(cpu="2").obj())
    await cycle(s, real_api)
    uid = env.uid("big")
    assert s.queue.where(uid) == "unschedulablePods"
    # a label-only node update is not an event CpuFit registered: the pod stays
    await real_api.patch(NODES, "small", {"metadata": {"labels": {"x": "y"}}}, patch_type="strategic")
    await real_api.settle()
    assert s.queue.where(uid) == "unschedulablePods"
    await env.add(make_node("large").capacity(cpu="4").obj())
    assert s.queue.where(uid) in ("backoffQ", "activeQ")
    s.clock.advance(2)  # a 1 s backoff ends once the clock is in the window after its expiry's
    s.queue.flush_backoff_completed()
    assert s.queue.where(uid) == "activeQ"
    await cycle(s, real_api)
    assert env.binds() == [("default", "big", "large")]
    assert env.node_name("big") == "large"


async def test_gated_pod_waits_until_gates_removed(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_node("n1").capacity(cpu="1").obj(), make_pod("g").scheduling_gates("example.com/wait").obj())
    uid = env.uid("g")
    assert s.queue.where(uid) == "unschedulablePods"
    assert s.queue.get(uid).gated and s.queue.get(uid).gating_plugin == "Gate"
    assert s.queue.active_len() == 0
    await env.patch_pod("g", {"spec": {"schedulingGates": None}})
    assert s.queue.where(uid) == "activeQ"
    await cycle(s, real_api)
    assert env.binds() == [("default", "g", "n1")]
    assert env.node_name("g") == "n1"


async def test_bind_failure_forgets_assumed_pod_and_requeues_with_backoff(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_node("n1").capacity(cpu="2").obj(), make_pod("p").req(cpu="1").obj())
    real_api.fail_next["bind"] = [conflict("pods", "", "p", "pod is being deleted")]
    await cycle(s, real_api)
    assert env.binds() == [] and env.node_name("p") is None
    assert s.cache.get_node_info("n1").pods == []
    assert s.queue.where(env.uid("p")) == "backoffQ"
    status, reason, message = cond(env, "p")
    assert (status, reason) == ("False", "SchedulerError")
    assert "ClientBinder" in message
    s.clock.advance(10)
    s.queue.flush_backoff_completed()
    await cycle(s, real_api)
    assert env.binds() == [("default", "p", "n1")]
    assert env.node_name("p") == "n1"


async def test_terminating_and_already_assumed_pods_are_skipped(real_api, env, make_scheduler):
    s = make_scheduler()
    pod = make_pod("t").obj()
    pod["metadata"]["finalizers"] = ["example.com/hold"]  # keeps the deleted pod, terminating
    await env.add(make_node("n1").capacity(cpu="2").obj(), pod)
    uid = env.uid("t")
    assert s.queue.where(uid) == "activeQ"
    # the pod starts terminating while queued: leaves the queue
    await real_api.delete(PODS, "t", "default")
    await real_api.settle()
    assert env.pod("t")["metadata"].get("deletionTimestamp")
    assert s.queue.where(uid) is None
    assert len(s.queue) == 0


async def test_no_nodes_reports_scheduler_message_and_backs_off(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_pod("p").obj())
    await cycle(s, real_api)
    assert cond(env, "p") == ("False", "Unschedulable", "no nodes available to schedule pods")
    assert s.queue.where(env.uid("p")) == "backoffQ"


@pytest.mark.parametrize(("pct", "nodes", "want"), [
    pytest.param(0, 50, 50, id="small-cluster-checks-every-node"),
    pytest.param(0, 100, 100, id="100-nodes-all"),
    pytest.param(0, 500, 230, id="500-nodes-adaptive-46pct"),
    pytest.param(0, 1000, 420, id="1000-nodes-adaptive-42pct"),
    pytest.param(0, 5000, 500, id="5000-nodes-adaptive-10pct"),
    pytest.param(0, 15000, 750, id="15000-nodes-floor-5pct"),
    pytest.param(1, 1000, 100, id="explicit-1pct-but-at-least-100"),
    pytest.param(100, 5000, 5000, id="explicit-100pct-all"),
    pytest.param(30, 1000, 300, id="explicit-30pct"),
])
def test_num_feasible_nodes_to_find(pct, nodes, want):
    assert num_feasible_nodes_to_find(pct, nodes) == want


def _status(*reasons: str) -> Status:
    return Status.unschedulable(*reasons, plugin="X")


@pytest.mark.parametrize(("diag", "num", "want"), [
    pytest.param(Diagnosis(node_to_status={"a": _status("Insufficient cpu"), "b": _status("Insufficient cpu"),
                                           "c": _status("Insufficient memory", "Insufficient cpu")}),
                 3, "0/3 nodes are available: 1 Insufficient memory, 3 Insufficient cpu.",
                 id="histogram-sorted-as-strings"),
    pytest.param(Diagnosis(node_to_status={**{f"n{i}": _status("Too many pods") for i in range(10)},
                                           "x": _status("node(s) were unschedulable"),
                                           "y": _status("node(s) were unschedulable")}),
                 12, "0/12 nodes are available: 10 Too many pods, 2 node(s) were unschedulable.",
                 id="10-sorts-before-2"),
    pytest.param(Diagnosis(pre_filter_msg="node(s) didn't satisfy plugin NodeAffinity",
                           absent_status=Status.unresolvable("node(s) didn't satisfy plugin NodeAffinity")),
                 4, "0/4 nodes are available: node(s) didn't satisfy plugin NodeAffinity.",
                 id="prefilter-rejection-no-histogram"),
    pytest.param(Diagnosis(node_to_status={"a": _status("Insufficient cpu")},
                           absent_status=Status.unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]")),
                 3, "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].",
                 id="absent-nodes-after-prefilter-result"),
    pytest.param(Diagnosis(node_to_status={f"n{i}": _status("Insufficient cpu") for i in range(6)},
                           post_filter_msg="preemption: 0/6 nodes are available: 6 No preemption victims found "
                                           "for incoming pod."),
                 6, "0/6 nodes are available: 6 Insufficient cpu. preemption: 0/6 nodes are available: "
                    "6 No preemption victims found for incoming pod.",
                 id="postfilter-message-appended"),
])
def test_fit_error_message(diag, num, want):
    assert str(FitError(PodInfo(make_pod("p").obj()), num, diag)) == want


def test_truncate_message_keeps_note_limit():
    assert truncate_message("x" * 10) == "x" * 10
    long = truncate_message("y" * 2000)
    assert len(long) == 1024 and long.endswith(" ...")


async def test_round_robin_start_index_and_search_size(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(*(make_node(f"n{i:04d}").capacity(cpu="4").obj() for i in range(500)),
                  make_pod("p1").req(cpu="1").obj())
    await cycle(s, real_api)
    ex = s.explain("default", "p1")
    assert ex["numEvaluatedNodes"] == 230 and ex["numFeasibleNodes"] == 230
    assert s.next_start_node_index == 230
    await env.add(make_pod("p2").req(cpu="1").obj())
    await cycle(s, real_api)
    assert s.next_start_node_index == 460
    ex2 = s.explain("default", "p2")
    assert "n0230" in ex2["nodes"] and "n0000" not in ex2["nodes"]


async def test_select_host_breaks_ties_uniformly(make_scheduler):
    s = make_scheduler()
    s.rng = random.Random(7)
    nodes = [NodeInfo(make_node(f"n{i}").obj()) for i in range(4)]
    totals = [5, 9, 9, 9]
    picks = {s.select_host(nodes, totals) for _ in range(200)}
    assert picks == {"n1", "n2", "n3"}
    assert s.select_host(nodes, [1, 2, 3, 100]) == "n3"


async def test_select_host_draws_once_and_uniformly_among_the_top_ties(make_scheduler):
    """Upstream selectHost keeps each node tied at the top score with probability 1/k; nodes
    tied below the top never win, and a decision costs one draw (both the list and the
    int64-array forms)."""
    s = make_scheduler()
    nodes = [NodeInfo(make_node(f"n{i}").obj()) for i in range(8)]
    totals = [7, 7, 3, 9, 7, 9, 9, 1]  # 7 ties before the top appears; 9 at n3, n5, n6
    for form in ("list", "array"):
        s.rng = random.Random(11)
        twin = random.Random(11)
        counts = dict.fromkeys(("n3", "n5", "n6"), 0)
        for _ in range(3000):
            got = (s.select_host(nodes, totals) if form == "list"
                   else s.select_host_array(nodes, np.asarray(totals, dtype=np.int64)))
            counts[got] += 1  # KeyError for a node that is not tied at the top
            twin.randrange(3)
        assert s.rng.random() == twin.random()  # one draw per decision
        assert all(850 < c < 1150 for c in counts.values()), counts
    s.rng = random.Random(1)
    before = s.rng.getstate()
    assert s.select_host(nodes, [1, 5, 2]) == "n1"
    assert s.select_host_array(nodes, np.asarray([4, 8, 8, 2], dtype=np.int64)[:1]) == "n0"
    assert s.rng.getstate() == before  # no tie at the top: no draw


async def test_nominated_pods_are_accounted_in_filter(real_api, env, make_scheduler):
    s = make_scheduler()
    # a higher-priority pod nominated to n1 (e.g. after preemption) reserves 2 cpu there
    hi = make_pod("hi").req(cpu="2").priority(100).nominated("n1").scheduling_gates("hold").obj()
    await env.add(make_node("n1").capacity(cpu="2").obj(), hi)
    assert env.pod("hi")["status"]["nominatedNodeName"] == "n1" and env.pod("hi")["spec"]["priority"] == 100
    assert s.queue.nominator.nominated_pods_for_node("n1")[0].name == "hi"
    await env.add(make_pod("lo").req(cpu="1").obj())
    await cycle(s, real_api)
    assert env.binds() == []
    assert cond(env, "lo") == ("False", "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu.")


async def test_run_loop_schedules_until_cancelled(real_api, env, make_scheduler):
    s = make_scheduler(clock=Clock())
    await env.add(*(make_node(f"n{i}").capacity(cpu="8").obj() for i in range(5)),
                  *(make_pod(f"p{i}").req(cpu="100m").obj() for i in range(20)))
    task = real_api.spawn(s.run(), "test-scheduler")

    def done() -> bool:
        return (len(env.binds()) == 20 and len(env.events(reason="Scheduled")) == 20
                and all(env.node_name(f"p{i}") for i in range(20)))

    async with asyncio.timeout(10):
        while not done():
            await asyncio.sleep(0.01)
    await real_api.stop(task)
    assert task.cancelled()
    assert sorted(b[1] for b in env.binds()) == sorted(f"p{i}" for i in range(20))
    # LeastPods spreads them: 4 per node
    assert sorted(len(s.cache.get_node_info(f"n{i}").pods) for i in range(5)) == [4] * 5
    assert sorted(env.node_name(f"p{i}") for i in range(20)) == sorted(f"n{i}" for i in range(5) for _ in range(4))


def test_snapshot_from_objects():
    snap = Snapshot.from_objects([make_node("a").obj()], [make_pod("p").node("a").obj()])
    assert snap.get("a").pods[0].name == "p"


# ---- PostFilter, Permit, Reserve and profiles through the loop --------------------------------

from scheduler.framework.interface import (  # noqa: E402
    PermitPlugin,
    PostFilterPlugin,
    PostFilterResult,
    ReservePlugin,
)


class Nominate(PostFilterPlugin):
    NAME = "Nominate"

    async def post_filter(self, state, pod, filtered):
        if pod.name == "nominate-me":
            return PostFilterResult("n0"), Status.success()
        return None, Status.unschedulable("preemption: 0/2 nodes are available: 2 No preemption victims found "
                                          "for incoming pod.")


class PreemptionFails(PostFilterPlugin):
    """Fails as DefaultPreemption does when no node can be freed: a result naming no node."""

    NAME = "PreemptionFails"

    async def post_filter(self, state, pod, filtered):
        return PostFilterResult(""), Status.unschedulable("preemption: 0/1 nodes are available: "
                                                          "1 No preemption victims found for incoming pod.")


class HoldPermit(PermitPlugin):
    NAME = "HoldPermit"

    def permit(self, state, pod, node_name):
        return Status.wait(), 60.0


class NoReserve(ReservePlugin):
    NAME = "NoReserve"

    def reserve(self, state, pod, node_name):
        return Status.unschedulable("volume binding failed") if pod.name == "r" else Status.success()

    def unreserve(self, state, pod, node_name):
        pass


def _cfg(base_config, *names: str, profiles: list[str] | None = None):
    for n in names:
        base_config["profiles"][0]["plugins"]["multiPoint"]["enabled"].append({"name": n})
    for p in profiles or []:
        prof = {**base_config["profiles"][0], "schedulerName": p}
        base_config["profiles"].append(prof)
    return base_config


@pytest.fixture
def extra_registry(base_registry):
    return {**base_registry, "Nominate": Nominate, "HoldPermit": HoldPermit, "NoReserve": NoReserve,
            "PreemptionFails": PreemptionFails}


async def test_postfilter_message_is_appended_and_nomination_recorded(real_api, env, make_scheduler, base_config,
                                                                      extra_registry):
    s = make_scheduler(_cfg(base_config, "Nominate"), registry=extra_registry)
    await env.add(*(make_node(f"n{i}").capacity(cpu="1").obj() for i in range(2)), make_pod("p").req(cpu="2").obj())
    await cycle(s, real_api)
    assert cond(env, "p")[2] == ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                                 "2 No preemption victims found for incoming pod.")
    assert "nominatedNodeName" not in env.pod("p")["status"]
    await env.add(make_pod("nominate-me").req(cpu="2").obj())
    await cycle(s, real_api)
    assert env.pod("nominate-me")["status"]["nominatedNodeName"] == "n0"
    assert [p.name for p in s.queue.nominator.nominated_pods_for_node("n0")] == ["nominate-me"]
    assert s.explain("default", "nominate-me")["postFilter"]["nominatedNodeName"] == "n0"


async def test_failed_preemption_clears_a_stale_nomination(real_api, env, make_scheduler, base_config,
                                                            extra_registry):
    # upstream: a PostFilter result with no node overrides (clears) the nomination (ModeOverride)
    s = make_scheduler(_cfg(base_config, "PreemptionFails"), registry=extra_registry)
    await env.add(make_node("n0").capacity(cpu="1").obj(), make_pod("p").req(cpu="2").priority(10).nominated("n0").obj())
    assert env.pod("p")["status"]["nominatedNodeName"] == "n0"
    assert [p.name for p in s.queue.nominator.nominated_pods_for_node("n0")] == ["p"]
    await cycle(s, real_api)
    assert "nominatedNodeName" not in env.pod("p")["status"]
    assert cond(env, "p")[1] == "Unschedulable"
    assert s.queue.nominator.nominated_pods_for_node("n0") == []


async def test_permit_wait_holds_binding_until_allowed(real_api, env, make_scheduler, base_config, extra_registry):
    s = make_scheduler(_cfg(base_config, "HoldPermit"), registry=extra_registry)
    await env.add(make_node("n0").capacity(cpu="2").obj(), make_pod("p").req(cpu="1").obj())
    await s.schedule_one()
    wp = s.frameworks["default-scheduler"].get_waiting_pod(env.uid("p"))
    assert wp is not None and env.binds() == []
    # the assumed pod already holds its resources for the next cycle
    assert s.cache.get_node_info("n0").requested.milli_cpu == 1000
    await real_api.settle()
    assert env.node_name("p") is None
    wp.allow("HoldPermit")
    async with asyncio.timeout(5):
        await s.wait_for_bindings()
    await real_api.settle()
    assert env.binds() == [("default", "p", "n0")]
    assert env.node_name("p") == "n0"


async def test_reserve_rejection_reports_one_node_fit_error(real_api, env, make_scheduler, base_config,
                                                             extra_registry):
    s = make_scheduler(_cfg(base_config, "NoReserve"), registry=extra_registry)
    await env.add(make_node("n0").capacity(cpu="2").obj(), make_pod("r").req(cpu="1").obj())
    await cycle(s, real_api)
    assert cond(env, "r") == ("False", "Unschedulable", "0/1 nodes are available: 1 volume binding failed.")
    assert s.cache.get_node_info("n0").pods == []
    assert s.queue.get(env.uid("r")).unschedulable_plugins == {"NoReserve"}


async def test_pods_go_to_their_profile_and_foreign_pods_are_ignored(real_api, env, make_scheduler, base_config,
                                                                     extra_registry):
    s = make_scheduler(_cfg(base_config, profiles=["second"]), registry=extra_registry)
    assert set(s.frameworks) == {"default-scheduler", "second"}
    await env.add(make_node("n0").capacity(cpu="2").obj(), make_pod("mine").scheduler_name("second").obj(),
                  make_pod("foreign").scheduler_name("someone-else").obj())
    assert s.queue.where(env.uid("foreign")) is None
    await cycle(s, real_api)
    assert env.binds() == [("default", "mine", "n0")]
    assert env.node_name("foreign") is None and env.events("foreign") == []
    assert s.explain("default", "mine")["schedulerName"] == "second"
    # upstream records each profile's events under its schedulerName
    [ev] = env.events("mine", "Scheduled")
    assert ev["reportingComponent"] == "second" and ev["reportingInstance"].startswith("second-")


async def test_what_if_reports_placement_without_side_effects(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_node("n0").capacity(cpu="1").obj(), make_node("n1").capacity(cpu="4").obj(),
                  make_pod("r").req(cpu="2").node("n1").obj())
    running = env.pod("r")
    calls = len(real_api.calls)
    assert s.what_if(running, exclude_nodes=frozenset({"n1"})) == {
        "node": None, "message": "0/1 nodes are available: 1 Insufficient cpu."}
    assert s.what_if(make_pod("x").req(cpu="1").obj())["node"] in ("n0", "n1")
    await real_api.settle()
    assert len(real_api.calls) == calls and env.binds() == []
    assert s.cache.pod_count() == 1 and s.next_start_node_index == 0


async def test_scheduled_event_times_follow_the_injected_clock(real_api, env, make_scheduler, clock):
    """eventTime in microseconds of the fake clock's time at the bind, within one second and
    across seconds (the seconds text is cached)."""
    s = make_scheduler()
    await env.add(make_node("n1").capacity(cpu="8").obj())
    clock.advance(59.25)  # 2026-01-01T00:00:59.250000
    want = []
    for i, step in enumerate((0.0, 0.5, 0.3, 1.0)):  # .25, .75, :01:00.05, :01:01.05
        clock.advance(step)
        await env.add(make_pod(f"p{i}").req(cpu="1").obj())
        await cycle(s, real_api)
        want.append(clock.now())
    for i, at in enumerate(want):
        [ev] = env.events(f"p{i}", "Scheduled")
        assert ev["eventTime"] == at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert [e["eventTime"] for e in (env.events(f"p{i}", "Scheduled")[0] for i in range(4))] == [
        "2026-01-01T00:00:59.250000Z", "2026-01-01T00:00:59.750000Z", "2026-01-01T00:01:00.050000Z",
        "2026-01-01T00:01:01.050000Z"]


async def test_events_are_written_in_batches_every_one_in_order(real_api, env, make_scheduler):
    """Events queued while the writer runs reach the store together (one transaction for many),
    each its own create with its own content, in the order emitted; one the API refuses is
    logged and the others are written."""
    s = make_scheduler()
    pods = [make_pod(f"p{i}").node("n1").uid(f"uid-{i}").obj() for i in range(40)]
    for p in pods[:20]:
        s._record_event(p, "Normal", "Scheduled", "Binding", f"Successfully assigned default/{p['metadata']['name']}")
    s.writer.emit_event({**s.writer._events[0], "metadata": {"name": "Not_A_Valid_Name", "namespace": "default"}})
    for p in pods[20:]:
        s._record_event(p, "Normal", "Scheduled", "Binding", f"Successfully assigned default/{p['metadata']['name']}")
    stats = real_api.core.store.stats
    before = stats.batches
    real_api.spawn(s.writer.run(), "writer")
    await real_api.settle()
    evs = env.events(reason="Scheduled")
    assert [e["involvedObject"]["name"] for e in evs] == [f"p{i}" for i in range(40)]
    assert [e["message"] for e in evs] == [f"Successfully assigned default/p{i}" for i in range(40)]
    assert all(e["involvedObject"]["uid"] == f"uid-{i}" and "series" not in e for i, e in enumerate(evs))
    assert len({e["metadata"]["name"] for e in evs}) == 40
    assert s.writer.pending() == 0
    assert stats.batches - before <= 4  # 40 creates, not 40 transactions


async def retry(s: Any, api: Any) -> None:
    """Wake the unschedulable pods and run one more attempt 20 s later."""
    s.queue.move_all_to_active_or_backoff(EVENT_NODE_ADD)
    s.clock.advance(20)
    s.queue.flush_backoff_completed()
    await cycle(s, api)


async def test_repeated_failures_become_one_event_series_as_client_go_writes_them(real_api, env, make_scheduler):
    """client-go's events.k8s.io broadcaster: an event isomorphic to an earlier one (same type,
    action, reason, reporter and regarded object, resourceVersion included; the note is not
    compared) turns it into a series: count 2 patched at once, later counts kept in memory and
    written when the series has been quiet for six minutes."""
    s = make_scheduler()
    await env.add(make_node("n0").capacity(cpu="1").obj(), make_pod("big").req(cpu="2").obj())
    await cycle(s, real_api)
    # the failure patched PodScheduled=False: the next event regards a newer resourceVersion
    await retry(s, real_api)
    first, second = env.events("big", "FailedScheduling")
    assert first["involvedObject"]["resourceVersion"] != second["involvedObject"]["resourceVersion"]
    assert "series" not in first and "series" not in second
    await retry(s, real_api)  # isomorphic to the second: a series of 2, written now
    [_, again] = env.events("big", "FailedScheduling")
    assert again["metadata"]["name"] == second["metadata"]["name"]
    assert again["series"] == {"count": 2, "lastObservedTime": rfc3339_micro(s.clock.now())}
    assert again["message"] == second["message"] and "count" not in again
    seen = s.clock.now()
    for _ in range(3):  # counted, not written
        await retry(s, real_api)
    assert env.events("big", "FailedScheduling")[1]["series"]["count"] == 2
    # the six-minute tick after the series has been quiet for longer than six minutes writes the
    # final count and forgets the series (at the first tick it was quiet for exactly six, and
    # only the first event, a single one older than six minutes, is forgotten)
    timer = real_api.spawn(s._event_series_timer(), "series-timer")
    last = s.clock.now()
    await real_api.settle()
    s.clock.advance(FINISH_SECONDS)
    await real_api.settle()
    await s.writer.flush()
    assert len(s.event_series) == 1 and s.writer.pending() == 0
    s.clock.advance(FINISH_SECONDS)
    await real_api.settle()
    await s.writer.flush()
    await real_api.settle()
    assert env.events("big", "FailedScheduling")[1]["series"] == {"count": 5, "lastObservedTime": rfc3339_micro(last)}
    assert last > seen and len(s.event_series) == 0
    timer.cancel()


async def test_a_series_whose_event_is_gone_is_created_again(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_node("n0").capacity(cpu="1").obj(), make_pod("big").req(cpu="2").obj())
    await cycle(s, real_api)
    await retry(s, real_api)
    [_, second] = env.events("big", "FailedScheduling")
    await real_api.delete(EVENTS, second["metadata"]["name"], "default")
    await real_api.settle()
    await retry(s, real_api)
    [_, again] = env.events("big", "FailedScheduling")
    assert again["metadata"]["name"] == second["metadata"]["name"] and again["series"]["count"] == 2
    assert again["reportingInstance"] == second["reportingInstance"] and again["eventTime"] == second["eventTime"]


async def test_a_resizing_pod_counts_its_status_and_its_scale_down_requeues(real_api, env, make_scheduler):
    """In-place resize (1.33): a bound pod counts, per container, the larger of its desired,
    allocated and actual requests; when the kubelet's status lowers them (the resize actuated) the
    pods that did not fit are re-queued (NodeResourcesFit's UpdatePodScaleDown)."""
    from scheduler.plugins.registry import in_tree_registry

    s = make_scheduler({"profiles": [{"schedulerName": "default-scheduler"}]},  # the default plugins
                       registry=in_tree_registry())
    await env.add(make_node("n").capacity(cpu="4").obj())
    await env.add(make_pod("resized").req(cpu="1").node("n").obj())
    running = real_api.obj(PODS, "resized", "default")
    cs = {"name": running["spec"]["containers"][0]["name"], "image": "x", "imageID": "", "ready": True,
          "restartCount": 0, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
          "allocatedResources": {"cpu": "3"}, "resources": {"requests": {"cpu": "3"}}}
    running["status"] = {**running.get("status", {}), "phase": "Running", "containerStatuses": [cs]}
    await real_api.update(PODS, running, subresource="status")  # the spec says 1, the runtime still runs 3
    await real_api.settle()
    await env.add(make_pod("waiting").req(cpu="2").obj())
    await cycle(s, real_api)
    uid = env.uid("waiting")
    assert s.queue.where(uid) == "unschedulablePods"
    assert "Insufficient cpu" in cond(env, "waiting")[2]
    # the kubelet actuated the smaller size: 1 cpu runs now
    running = real_api.obj(PODS, "resized", "default")
    running["status"]["containerStatuses"][0].update(allocatedResources={"cpu": "1"},
                                                      resources={"requests": {"cpu": "1"}})
    await real_api.update(PODS, running, subresource="status")
    await real_api.settle()
    assert s.queue.where(uid) in ("backoffQ", "activeQ")
    s.clock.advance(2)
    s.queue.flush_backoff_completed()
    await cycle(s, real_api)
    assert env.node_name("waiting") == "n"
