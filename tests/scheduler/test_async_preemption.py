"""Asynchronous preemption (upstream v1.33 prepareCandidateAsync) with the real scheduler against
the real in-process API (storage, admission, graceful deletion), no kubelet: the test deletes
terminating victims itself, as a kubelet would at the end of their grace period."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from minik3s.api.errors import NotFoundError
from minik3s.api.resources import EVENTS, NODES, PODS, PRIORITYCLASSES
from minik3s.api.types import JsonDict
from minik3s.config import ServerConfig
from minik3s.server import start, stop
from minik3s.testing.builders import make_node, make_pod
from scheduler.scheduler import Scheduler

PREEMPTION = "DefaultPreemption"


class Cluster:
    def __init__(self, rs: Any, sched: Scheduler) -> None:
        self.rs = rs
        self.client = rs.client
        self.sched = sched
        self.tasks: list[asyncio.Task[Any]] = []

    async def eventually(self, fn: Callable[[], Awaitable[Any]], what: str, timeout: float = 20.0) -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last: Any = None
        while loop.time() < deadline:
            for t in self.tasks:
                if t.done() and not t.cancelled() and t.exception() is not None:
                    raise AssertionError(f"{t.get_name()} crashed") from t.exception()
            last = await fn()
            if last:
                return last
            await asyncio.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what}; last={last!r}")

    async def node(self, name: str, cpu: str, *, taint: str = "") -> None:
        b = make_node(name).capacity(cpu=cpu, memory="8Gi")
        if taint:
            b.taints((taint, "", "NoSchedule"))
        n = b.obj()
        status = n.pop("status")
        n["metadata"].pop("uid")
        created = await self.client.create(NODES, n)
        created["status"] = status
        await self.client.update_status(NODES, created)

    async def pod(
        self, name: str, cpu: str, pc: str, *, policy: str | None = None, grace: int = 30
    ) -> JsonDict:
        p = make_pod(name).req(cpu=cpu).obj()
        for k in ("uid", "creationTimestamp"):
            p["metadata"].pop(k)
        p.pop("status")
        p["spec"]["priorityClassName"] = pc
        p["spec"]["terminationGracePeriodSeconds"] = grace
        if policy is not None:
            p["spec"]["preemptionPolicy"] = policy
        return await self.client.create(PODS, p, "default")

    async def get(self, name: str) -> JsonDict | None:
        try:
            return await self.client.get(PODS, name, "default")
        except NotFoundError:
            return None

    async def events(self, name: str) -> list[JsonDict]:
        items = (await self.client.list(EVENTS, "default"))["items"]
        return [e for e in items if e["involvedObject"]["name"] == name]


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    cfg = ServerConfig(
        data_dir=tmp_path / "srv", port=0, disable={"scheduler", "controllers", "kubelet", "descheduler"}
    )
    rs = await start(cfg)
    sched = Scheduler(client=rs.client, informers=rs.informers)
    c = Cluster(rs, sched)
    for name, value, policy in (
        ("low", 10, "PreemptLowerPriority"),
        ("high", 1000, "PreemptLowerPriority"),
        ("high-never", 1000, "Never"),
    ):
        await rs.client.create(
            PRIORITYCLASSES,
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
                "preemptionPolicy": policy,
            },
        )
    c.tasks = [
        asyncio.create_task(rs.informers.run(), name="informers"),
        asyncio.create_task(sched.run(), name="scheduler"),
    ]
    try:
        yield c
    finally:
        for t in c.tasks:
            t.cancel()
        await asyncio.gather(*c.tasks, return_exceptions=True)
        await stop(rs)


def _bound(c: Cluster, name: str) -> Callable[[], Awaitable[str | None]]:
    async def check() -> str | None:
        p = await c.get(name)
        return (p or {}).get("spec", {}).get("nodeName")

    return check


async def test_victims_terminate_then_preemptor_binds_to_nominated_node(cluster: Cluster) -> None:
    c = cluster
    await c.node("n1", "4")
    for name in ("low-a", "low-b"):
        await c.pod(name, "2", "low")
        await c.eventually(_bound(c, name), f"{name} bound")
    high = await c.pod("high", "3", "high")

    async def victims_terminating() -> list[JsonDict] | None:
        pods = [await c.get(n) for n in ("low-a", "low-b")]
        ok = all(p is not None and p["metadata"].get("deletionTimestamp") for p in pods)
        return pods if ok else None  # type: ignore[return-value]

    victims = await c.eventually(victims_terminating, "both victims terminating")
    for v in victims:
        assert v["metadata"]["deletionGracePeriodSeconds"] == 30  # their own grace period
        cond = next(x for x in v["status"]["conditions"] if x["type"] == "DisruptionTarget")
        assert cond.pop("lastTransitionTime").endswith("Z")
        assert cond == {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": "default-scheduler: preempting to accommodate a higher priority pod",
        }

    async def preempted_events() -> list[JsonDict] | None:
        evs = [e for n in ("low-a", "low-b") for e in await c.events(n) if e["reason"] == "Preempted"]
        return evs if len(evs) == 2 else None

    for ev in await c.eventually(preempted_events, "Preempted events"):
        assert ev["type"] == "Normal"
        assert ev["message"] == f"Preempted by pod {high['metadata']['uid']} on node n1"
        assert ev["related"]["name"] == "high"

    async def nominated() -> bool:
        p = await c.get("high")
        return bool(p and p.get("status", {}).get("nominatedNodeName") == "n1")

    await c.eventually(nominated, "preemptor nominated to n1")
    # a new node (big enough, so NodeResourcesFit's hint requeues the preemptor, but tainted)
    # wakes the preemptor while the victims still hold n1: it must neither bind nor preempt again
    await c.node("n2", "4", taint="dedicated")

    async def waiting_message() -> JsonDict | None:
        for e in await c.events("high"):
            if e["reason"] == "FailedScheduling" and "terminating pod on the nominated node" in e["message"]:
                return e
        return None

    ev = await c.eventually(waiting_message, "FailedScheduling while victims terminate")
    assert ev["message"].endswith("preemption: not eligible due to a terminating pod on the nominated node.")
    assert (await c.get("high"))["spec"].get("nodeName") is None  # type: ignore[index]
    # the kubelet finishes the victims: the preemptor binds to its nominated node
    for name in ("low-a", "low-b"):
        await c.client.delete(PODS, name, "default", grace_period_seconds=0)
    assert await c.eventually(_bound(c, "high"), "preemptor bound") == "n1"


async def test_preemption_policy_never_stays_pending(cluster: Cluster) -> None:
    c = cluster
    await c.node("n1", "2")
    await c.pod("low-a", "2", "low")
    await c.eventually(_bound(c, "low-a"), "low-a bound")
    await c.pod("polite", "1", "high-never")

    async def failed() -> JsonDict | None:
        return next((e for e in await c.events("polite") if e["reason"] == "FailedScheduling"), None)

    ev = await c.eventually(failed, "FailedScheduling")
    assert ev["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
    )
    low = await c.get("low-a")
    assert low is not None and not low["metadata"].get("deletionTimestamp")


async def test_pre_enqueue_holds_a_preemptor_until_its_preemption_finishes(cluster: Cluster) -> None:
    """Through the real framework runtime and queue: while DefaultPreemption's task runs, the
    preemptor is gated with upstream's message; the finished task activates it."""
    c = cluster
    fw = c.sched.frameworks["default-scheduler"]
    pl = fw.plugins[PREEMPTION]
    pod = make_pod("held").req(cpu="1").obj()
    pl._preempting.add(pod["metadata"]["uid"])  # as prepare_candidate_async does
    st = fw.run_pre_enqueue(pod)
    assert (st.code.name, st.reasons, st.plugin) == (
        "UNSCHEDULABLE_AND_UNRESOLVABLE",
        ["waiting for the preemption for this pod to be finished"],
        PREEMPTION,
    )
    c.sched.queue.add(pod)
    assert [
        (p["queue"], p["gatingPlugin"]) for p in c.sched.queue.pending_pods() if p["pod"] == "default/held"
    ] == [("unschedulablePods", PREEMPTION)]
    pl._preempting.discard(pod["metadata"]["uid"])
    fw.activate([pod], gated_by=PREEMPTION)
    assert c.sched.queue.where(pod["metadata"]["uid"]) == "activeQ"  # activate is synchronous
    # a pod held by another plugin is left alone by DefaultPreemption's activation
    gated = make_pod("gated").req(cpu="1").scheduling_gates("example.com/wait").obj()
    c.sched.queue.add(gated)
    fw.activate([gated], gated_by=PREEMPTION)
    assert c.sched.queue.where(gated["metadata"]["uid"]) == "unschedulablePods"


async def test_pod_fitting_nowhere_gets_upstreams_message_and_stays_parked(cluster: Cluster) -> None:
    """The Unschedulable benchmark's pod at small scale: 24 nodes of 4 CPU, 20 of them holding a
    lower-priority pod, one tainted; a 9-CPU high-priority pod fits nowhere, even after
    preemption. FailedScheduling and the PodScheduled condition carry upstream's message (the
    Filter histogram, then the dry run's: Insufficient cpu where victims exist, no victims on the
    empty nodes, not helpful on the tainted one); no pod is evicted, and binding more pods does
    not retry it (NodeResourcesFit's hint: an assigned pod's arrival cannot free CPU)."""
    c = cluster
    for i in range(23):
        await c.node(f"n{i:02d}", "4")
    await c.node("tainted", "4", taint="dedicated")
    for i in range(20):
        await c.pod(f"low-{i:02d}", "100m", "low")
    for i in range(20):
        await c.eventually(_bound(c, f"low-{i:02d}"), f"low-{i:02d} bound")
    await c.pod("big", "9", "high")

    async def failed() -> JsonDict | None:
        return next((e for e in await c.events("big") if e["reason"] == "FailedScheduling"), None)

    ev = await c.eventually(failed, "FailedScheduling")
    msg = ("0/24 nodes are available: 1 node(s) had untolerated taint {dedicated: }, 23 Insufficient cpu. "
           "preemption: 0/24 nodes are available: 1 Preemption is not helpful for scheduling, "
           "20 Insufficient cpu, 3 No preemption victims found for incoming pod.")
    assert ev["message"] == msg
    big = await c.get("big")
    assert big is not None
    (cond,) = [x for x in big["status"]["conditions"] if x["type"] == "PodScheduled"]
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", msg)
    assert "nominatedNodeName" not in big["status"]

    def parked() -> list[tuple[str, int, list[str]]]:
        return [(q["queue"], q["attempts"], q["unschedulablePlugins"])
                for q in c.sched.pending_pods() if q["pod"] == "default/big"]

    await c.eventually(_async(parked), "big parked")
    assert parked() == [("unschedulablePods", 1, ["NodeResourcesFit", "TaintToleration"])]
    # more binds: the parked pod is not retried, nothing is preempted
    for i in range(20, 23):
        await c.pod(f"low-{i:02d}", "100m", "low")
    for i in range(20, 23):
        await c.eventually(_bound(c, f"low-{i:02d}"), f"low-{i:02d} bound")
    assert parked() == [("unschedulablePods", 1, ["NodeResourcesFit", "TaintToleration"])]
    for i in range(23):
        low = await c.get(f"low-{i:02d}")
        assert low is not None and not low["metadata"].get("deletionTimestamp")


def _async(fn: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
    async def call() -> Any:
        return fn()

    return call
