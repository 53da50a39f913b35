"""End-to-end scheduling loop against the in-memory fake client/informers (upstream
schedule_one_test.go style): placement, FailedScheduling message/condition/event, requeue on
cluster events, gates, binding failures, search size, tie-breaking, explain."""

from __future__ import annotations

import random
from typing import Any

import pytest

from minik3s.api.resources import NODES, PODS
from minik3s.testing.builders import make_node, make_pod
from scheduler.backend.snapshot import Snapshot
from scheduler.framework.interface import Status
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.scheduler import (
    Diagnosis,
    FitError,
    num_feasible_nodes_to_find,
    truncate_message,
)


def add_nodes(factory: Any, *nodes: dict[str, Any]) -> None:
    inf = factory.informer(NODES)
    for n in nodes:
        inf.add(n)


def add_pod(factory: Any, pod: dict[str, Any]) -> None:
    factory.informer(PODS).add(pod)


async def cycle(s: Any) -> None:
    await s.schedule_one()
    await s.wait_for_bindings()
    await s.writer.flush()


async def test_pod_is_bound_to_least_loaded_node_and_scheduled_event_emitted(factory, fake_client, make_scheduler):
    s = make_scheduler()
    add_nodes(factory, *(make_node(f"n{i}").capacity(cpu="4", memory="8Gi").obj() for i in range(3)))
    add_pod(factory, make_pod("busy").req(cpu="1").node("n0").obj())
    add_pod(factory, make_pod("busy2").req(cpu="1").node("n1").obj())
    add_pod(factory, make_pod("web").req(cpu="1").obj())
    await cycle(s)
    assert fake_client.binds == [("default", "web", "n2")]
    ev = fake_client.events[-1]
    assert (ev["type"], ev["reason"], ev["message"]) == ("Normal", "Scheduled", "Successfully assigned default/web to n2")
    assert ev["source"] == {"component": "default-scheduler"}
    assert ev["reportingComponent"] == "default-scheduler"
    assert ev["involvedObject"]["name"] == "web" and ev["involvedObject"]["kind"] == "Pod"
    # the bound pod reached the cache through the informer
    assert s.cache.get_node_info("n2").pods[0].name == "web"
    assert not s.cache.is_assumed("uid-default-web")
    ex = s.explain("default", "web")
    assert ex["selectedNode"] == "n2" and ex["result"] == "Bound"
    assert ex["nodes"]["n2"]["scores"]["LeastPods"] == {"raw": 100, "normalized": 100, "weight": 1, "weighted": 100}
    assert ex["nodes"]["n0"]["totalScore"] == 90


async def test_failed_scheduling_message_condition_and_event(factory, fake_client, make_scheduler):
    s = make_scheduler()
    add_nodes(factory, make_node("gpu").capacity(cpu="8").taints(("dedicated", "gpu", "NoSchedule")).obj(),
              *(make_node(f"n{i}").capacity(cpu="1").obj() for i in range(5)))
    add_pod(factory, make_pod("big").req(cpu="2").obj())
    await cycle(s)
    msg = "0/6 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 5 Insufficient cpu."
    ns, name, patch = fake_client.patches[-1]
    assert (ns, name) == ("default", "big")
    cond = patch["status"]["conditions"][0]
    assert {k: cond[k] for k in ("type", "status", "reason", "message")} == {
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": msg}
    ev = fake_client.events[-1]
    assert (ev["type"], ev["reason"], ev["message"], ev["action"]) == ("Warning", "FailedScheduling", msg, "Scheduling")
    q = s.queue.get("uid-default-big")
    assert s.queue.where("uid-default-big") == "unschedulablePods"
    assert q.unschedulable_plugins == {"CpuFit", "Taints"}
    ex = s.explain("default", "big")
    assert ex["message"] == msg and ex["result"] == "Unschedulable"
    assert ex["nodes"]["gpu"]["filters"] == [
        {"plugin": "CpuFit", "code": "Success", "reasons": []},
        {"plugin": "Taints", "code": "UnschedulableAndUnresolvable",
         "reasons": ["node(s) had untolerated taint {dedicated: gpu}"]}]
    # a second identical failure does not patch the status again
    n = len(fake_client.patches)
    s.queue.move_all_to_active_or_backoff(__import__("scheduler.backend.queue", fromlist=["x"]).EVENT_NODE_ADD)
    s.clock.advance(20)
    s.queue.flush_backoff_completed()
    await cycle(s)
    assert len(fake_client.patches) == n


async def test_node_add_requeues_and_schedules_the_unschedulable_pod(factory, fake_client, make_scheduler):
    s = make_scheduler()
    add_nodes(factory, make_node("small").capacity(cpu="1").obj())
    add_pod(factory, make_pod("big").req(cpu="2").obj())
    await cycle(s)
    assert s.queue.where("uid-default-big") == "unschedulablePods"
    # a label-only node update is not an event CpuFit registered: the pod stays
    upd = make_node("small").capacity(cpu="1").labels(x="y").obj()
    factory.informer(NODES).update(upd)
    assert s.queue.where("uid-default-big") == "unschedulablePods"
    add_nodes(factory, make_node("large").capacity(cpu="4").obj())
    assert s.queue.where("uid-default-big") in ("backoffQ", "activeQ")
    s.clock.advance(1)
    s.queue.flush_backoff_completed()
    assert s.queue.where("uid-default-big") == "activeQ"
    await cycle(s)
    assert fake_client.binds == [("default", "big", "large")]


async def test_gated_pod_waits_until_gates_removed(factory, fake_client, make_scheduler):
    s = make_scheduler()
    add_nodes(factory, make_node("n1").capacity(cpu="1").obj())
    add_pod(factory, make_pod("g").scheduling_gates("example.com/wait").obj())
    assert s.queue.where("uid-default-g") == "unschedulablePods"
    assert s.queue.get("uid-default-g").gated and s.queue.get("uid-default-g").gating_plugin == "Gate"
    assert s.queue.active_len() == 0
    factory.informer(PODS).update(make_pod("g").obj())
    assert s.queue.where("uid-default-g") == "activeQ"
    await cycle(s)
    assert fake_client.binds == [("default", "g", "n1")]


async def test_bind_failure_forgets_assumed_pod_and_requeues_with_backoff(factory, fake_client, make_scheduler):
    s = make_scheduler()
    add_nodes(factory, make_node("n1").capacity(cpu="2").obj())
    add_pod(factory, make_pod("p").req(cpu="1").obj())
    fake_client.fail_bind.add("default/p")
    await cycle(s)
    assert fake_client.binds == []
    assert s.cache.get_node_info("n1").pods == []
    assert s.queue.where("uid-default-p") == "backoffQ"
    cond = fake_client.patches[-1][2]["status"]["conditions"][0]
    assert cond["reason"] == "SchedulerError"
    assert "ClientBinder" in cond["message"]
    fake_client.fail_bind.clear()
    s.clock.advance(10)
    s.queue.flush_backoff_completed()
    await cycle(s)
    assert fake_client.binds == [("default", "p", "n1")]


async def test_terminating_and_already_assumed_pods_are_skipped(factory, fake_client, make_scheduler):
    s = make_scheduler()
    add_nodes(factory, make_node("n1").capacity(cpu="2").obj())
    pod = make_pod("t").obj()
    add_pod(factory, pod)
    # the pod starts terminating while queued: leaves the queue
    factory.informer(PODS).update(make_pod("t").terminating().obj())
    assert s.queue.where("uid-default-t") is None
    assert len(s.queue) == 0


async def test_no_nodes_reports_scheduler_message_and_backs_off(factory, fake_client, make_scheduler):
    s = make_scheduler()
    add_pod(factory, make_pod("p").obj())
    await cycle(s)
    cond = fake_client.patches[-1][2]["status"]["conditions"][0]
    assert (cond["reason"], cond["message"]) == ("Unschedulable", "no nodes available to schedule pods")
    assert s.queue.where("uid-default-p") == "backoffQ"


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


async def test_round_robin_start_index_and_search_size(factory, fake_client, make_scheduler):
    s = make_scheduler()
    nodes = [make_node(f"n{i:04d}").capacity(cpu="4").obj() for i in range(500)]
    add_nodes(factory, *nodes)
    add_pod(factory, make_pod("p1").req(cpu="1").obj())
    await cycle(s)
    ex = s.explain("default", "p1")
    assert ex["numEvaluatedNodes"] == 230 and ex["numFeasibleNodes"] == 230
    assert s.next_start_node_index == 230
    add_pod(factory, make_pod("p2").req(cpu="1").obj())
    await cycle(s)
    assert s.next_start_node_index == 460
    ex2 = s.explain("default", "p2")
    assert "n0230" in ex2["nodes"] and "n0000" not in ex2["nodes"]


def test_select_host_breaks_ties_uniformly(make_scheduler):
    s = make_scheduler()
    s.rng = random.Random(7)
    nodes = [NodeInfo(make_node(f"n{i}").obj()) for i in range(4)]
    totals = [5, 9, 9, 9]
    picks = {s.select_host(nodes, totals) for _ in range(200)}
    assert picks == {"n1", "n2", "n3"}
    assert s.select_host(nodes, [1, 2, 3, 100]) == "n3"


async def test_nominated_pods_are_accounted_in_filter(factory, fake_client, make_scheduler):
    s = make_scheduler()
    add_nodes(factory, make_node("n1").capacity(cpu="2").obj())
    # a higher-priority pod nominated to n1 (e.g. after preemption) reserves 2 cpu there
    hi = make_pod("hi").req(cpu="2").priority(100).nominated("n1").scheduling_gates("hold").obj()
    add_pod(factory, hi)
    assert s.queue.nominator.nominated_pods_for_node("n1")[0].name == "hi"
    add_pod(factory, make_pod("lo").req(cpu="1").obj())
    await cycle(s)
    assert fake_client.binds == []
    msg = fake_client.patches[-1][2]["status"]["conditions"][0]["message"]
    assert msg == "0/1 nodes are available: 1 Insufficient cpu."


async def test_run_loop_schedules_until_cancelled(factory, fake_client, make_scheduler):
    import asyncio

    from minik3s.utils.clock import Clock
    s = make_scheduler(clock=Clock())
    add_nodes(factory, *(make_node(f"n{i}").capacity(cpu="8").obj() for i in range(5)))
    for i in range(20):
        add_pod(factory, make_pod(f"p{i}").req(cpu="100m").obj())
    task = asyncio.create_task(s.run(), name="test-scheduler")
    async with asyncio.timeout(10):
        while len(fake_client.binds) < 20 or len([e for e in fake_client.events if e["reason"] == "Scheduled"]) < 20:
            await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(b[1] for b in fake_client.binds) == sorted(f"p{i}" for i in range(20))
    # LeastPods spreads them: 4 per node
    assert sorted(len(s.cache.get_node_info(f"n{i}").pods) for i in range(5)) == [4] * 5


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


async def test_postfilter_message_is_appended_and_nomination_recorded(factory, fake_client, make_scheduler,
                                                                      base_config, extra_registry):
    s = make_scheduler(_cfg(base_config, "Nominate"), registry=extra_registry)
    add_nodes(factory, *(make_node(f"n{i}").capacity(cpu="1").obj() for i in range(2)))
    add_pod(factory, make_pod("p").req(cpu="2").obj())
    await cycle(s)
    msg = fake_client.patches[-1][2]["status"]["conditions"][0]["message"]
    assert msg == ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                   "2 No preemption victims found for incoming pod.")
    assert "nominatedNodeName" not in fake_client.patches[-1][2]["status"]
    add_pod(factory, make_pod("nominate-me").req(cpu="2").obj())
    await cycle(s)
    status = fake_client.patches[-1][2]["status"]
    assert status["nominatedNodeName"] == "n0"
    assert [p.name for p in s.queue.nominator.nominated_pods_for_node("n0")] == ["nominate-me"]
    assert s.explain("default", "nominate-me")["postFilter"]["nominatedNodeName"] == "n0"


async def test_failed_preemption_clears_a_stale_nomination(factory, fake_client, make_scheduler, base_config,
                                                            extra_registry):
    # upstream: a PostFilter result with no node overrides (clears) the nomination (ModeOverride)
    s = make_scheduler(_cfg(base_config, "PreemptionFails"), registry=extra_registry)
    add_nodes(factory, make_node("n0").capacity(cpu="1").obj())
    add_pod(factory, make_pod("p").req(cpu="2").priority(10).nominated("n0").obj())
    assert [p.name for p in s.queue.nominator.nominated_pods_for_node("n0")] == ["p"]
    await cycle(s)
    status = fake_client.patches[-1][2]["status"]
    assert "nominatedNodeName" in status and status["nominatedNodeName"] is None
    assert s.queue.nominator.nominated_pods_for_node("n0") == []


async def test_permit_wait_holds_binding_until_allowed(factory, fake_client, make_scheduler, base_config,
                                                        extra_registry):
    import asyncio
    s = make_scheduler(_cfg(base_config, "HoldPermit"), registry=extra_registry)
    add_nodes(factory, make_node("n0").capacity(cpu="2").obj())
    add_pod(factory, make_pod("p").req(cpu="1").obj())
    await s.schedule_one()
    wp = s.frameworks["default-scheduler"].get_waiting_pod("uid-default-p")
    assert wp is not None and fake_client.binds == []
    # the assumed pod already holds its resources for the next cycle
    assert s.cache.get_node_info("n0").requested.milli_cpu == 1000
    wp.allow("HoldPermit")
    async with asyncio.timeout(5):
        await s.wait_for_bindings()
    assert fake_client.binds == [("default", "p", "n0")]


async def test_reserve_rejection_reports_one_node_fit_error(factory, fake_client, make_scheduler, base_config,
                                                             extra_registry):
    s = make_scheduler(_cfg(base_config, "NoReserve"), registry=extra_registry)
    add_nodes(factory, make_node("n0").capacity(cpu="2").obj())
    add_pod(factory, make_pod("r").req(cpu="1").obj())
    await cycle(s)
    assert fake_client.patches[-1][2]["status"]["conditions"][0]["message"] == \
        "0/1 nodes are available: 1 volume binding failed."
    assert s.cache.get_node_info("n0").pods == []
    assert s.queue.get("uid-default-r").unschedulable_plugins == {"NoReserve"}


async def test_pods_go_to_their_profile_and_foreign_pods_are_ignored(factory, fake_client, make_scheduler,
                                                                     base_config, extra_registry):
    s = make_scheduler(_cfg(base_config, profiles=["second"]), registry=extra_registry)
    assert set(s.frameworks) == {"default-scheduler", "second"}
    add_nodes(factory, make_node("n0").capacity(cpu="2").obj())
    add_pod(factory, make_pod("mine").scheduler_name("second").obj())
    add_pod(factory, make_pod("foreign").scheduler_name("someone-else").obj())
    assert s.queue.where("uid-default-foreign") is None
    await cycle(s)
    assert fake_client.binds == [("default", "mine", "n0")]
    assert s.explain("default", "mine")["schedulerName"] == "second"


async def test_what_if_reports_placement_without_side_effects(factory, fake_client, make_scheduler):
    s = make_scheduler()
    add_nodes(factory, make_node("n0").capacity(cpu="1").obj(), make_node("n1").capacity(cpu="4").obj())
    running = make_pod("r").req(cpu="2").node("n1").obj()
    add_pod(factory, running)
    assert s.what_if(running, exclude_nodes=frozenset({"n1"})) == {
        "node": None, "message": "0/1 nodes are available: 1 Insufficient cpu."}
    assert s.what_if(make_pod("x").req(cpu="1").obj())["node"] in ("n0", "n1")
    assert fake_client.binds == [] and s.cache.pod_count() == 1 and s.next_start_node_index == 0
