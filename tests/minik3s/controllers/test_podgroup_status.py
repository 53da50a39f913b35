"""The gang status controller on a real in-process server: each API's phases, counters,
conditions and events as its project documents them. Pods are bound and run by hand (bind,
status writes), so every transition is driven by a user-visible API change."""

from __future__ import annotations

import copy
from typing import Any

from minik3s.api.gang import VOLCANO_PODGROUPS, XK8S_PODGROUPS
from minik3s.api.resources import EVENTS, PODS, WORKLOADS
from minik3s.api.types import JsonDict
from minik3s.controllers.podgroup_status import PodGroupStatusController


def member(name: str, *, label: str = "", annotation: str = "", workload: str = "",
           owner: str = "") -> JsonDict:
    meta: dict[str, Any] = {"name": name}
    if label:
        meta["labels"] = {"scheduling.x-k8s.io/pod-group": label}
    if annotation:
        meta["annotations"] = {"scheduling.k8s.io/group-name": annotation}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": owner, "uid": "u-1",
                                    "controller": True}]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "trainer"}]}
    if workload:
        spec["workloadRef"] = {"name": workload, "podGroup": "workers"}
    return {"metadata": meta, "spec": spec}


async def set_phase(h: Any, name: str, phase: str) -> None:
    pod = await h.client.get(PODS, name, "default")
    body = copy.deepcopy(pod)
    body["status"] = {**(pod.get("status") or {}), "phase": phase}
    await h.client.update_status(PODS, body)


async def mark_unschedulable(h: Any, name: str) -> None:
    pod = await h.client.get(PODS, name, "default")
    body = copy.deepcopy(pod)
    body["status"] = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                          "reason": "Unschedulable", "message": "0/3 nodes"}]}
    await h.client.update_status(PODS, body)


async def events(h: Any, kind: str) -> list[tuple[str, str, str]]:
    items = (await h.client.list(EVENTS, "default"))["items"]
    return [(e["type"], e["reason"], e["message"]) for e in items if e["involvedObject"].get("kind") == kind]


def status_is(h: Any, res: Any, name: str, **want: Any) -> Any:
    async def check() -> JsonDict | None:
        st = (await h.client.get(res, name, "default")).get("status") or {}
        return st if all(st.get(k) == v for k, v in want.items()) else None
    return check


async def test_xk8s_pod_group_phases_pending_scheduling_running_finished(harness):
    h = harness
    h.start(PodGroupStatusController(h.client, h.informers).run)
    await h.client.create(XK8S_PODGROUPS, {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                                           "metadata": {"name": "pg"}, "spec": {"minMember": 2}}, "default")
    await h.eventually(status_is(h, XK8S_PODGROUPS, "pg", phase="Pending"), what="Pending")
    await h.client.create(PODS, member("a", label="pg", owner="train"), "default")
    await h.client.create(PODS, member("b", label="pg", owner="train"), "default")
    st = await h.eventually(status_is(h, XK8S_PODGROUPS, "pg", phase="Scheduling"), what="Scheduling")
    assert st["occupiedBy"] == "default/train" and st["scheduleStartTime"]
    for n, node in (("a", "n1"), ("b", "n2")):
        await h.client.bind("default", n, node)
    await set_phase(h, "a", "Running")
    await h.eventually(status_is(h, XK8S_PODGROUPS, "pg", phase="Scheduling", running=1), what="one running")
    await set_phase(h, "b", "Running")
    await h.eventually(status_is(h, XK8S_PODGROUPS, "pg", phase="Running", running=2), what="Running")
    await set_phase(h, "a", "Succeeded")
    await set_phase(h, "b", "Succeeded")
    await h.eventually(status_is(h, XK8S_PODGROUPS, "pg", phase="Finished", succeeded=2, running=0),
                       what="Finished")
    assert ("Normal", "Scheduled", "2/2 pods are scheduled, minMember 2") in await events(h, "PodGroup")


async def test_xk8s_pod_group_fails_when_a_member_fails(harness):
    h = harness
    h.start(PodGroupStatusController(h.client, h.informers).run)
    await h.client.create(XK8S_PODGROUPS, {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                                           "metadata": {"name": "pg"}, "spec": {"minMember": 2}}, "default")
    for n in ("a", "b"):
        await h.client.create(PODS, member(n, label="pg"), "default")
    await h.eventually(status_is(h, XK8S_PODGROUPS, "pg", phase="Scheduling"), what="Scheduling")
    for n in ("a", "b"):
        await h.client.bind("default", n, "n1")
    await set_phase(h, "a", "Running")
    await set_phase(h, "b", "Failed")
    await h.eventually(status_is(h, XK8S_PODGROUPS, "pg", phase="Failed", failed=1, running=1), what="Failed")


async def test_volcano_pod_group_conditions_and_phases(harness):
    h = harness
    h.start(PodGroupStatusController(h.client, h.informers).run)
    await h.client.create(VOLCANO_PODGROUPS, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                                              "metadata": {"name": "train"}, "spec": {"minMember": 2}}, "default")
    st = await h.eventually(status_is(h, VOLCANO_PODGROUPS, "train", phase="Pending"), what="Pending")
    cond = {c["type"]: c for c in st["conditions"]}["Unschedulable"]
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "NotEnoughTasks", "0/2 pods of the gang exist, minMember 2")
    await h.client.create(PODS, member("w0", annotation="train"), "default")
    await h.client.create(PODS, member("w1", annotation="train"), "default")
    # enough members and no minResources: the enqueue step admits the group
    await h.eventually(status_is(h, VOLCANO_PODGROUPS, "train", phase="Inqueue"), what="Inqueue")
    await mark_unschedulable(h, "w1")
    st = await h.eventually(status_is(h, VOLCANO_PODGROUPS, "train", phase="Inqueue"), what="still Inqueue")

    async def not_enough_resources() -> Any:
        s = (await h.client.get(VOLCANO_PODGROUPS, "train", "default")).get("status") or {}
        c = {x["type"]: x for x in s.get("conditions") or []}.get("Unschedulable") or {}
        return c if c.get("reason") == "NotEnoughResources" else None

    cond = await h.eventually(not_enough_resources, what="NotEnoughResources")
    assert cond["message"] == "0/2 pods are scheduled, minMember 2; 2 Pending: 1 Unschedulable"
    assert ("Warning", "Unschedulable", cond["message"]) in await events(h, "PodGroup")
    await h.client.bind("default", "w0", "n1")
    await h.client.bind("default", "w1", "n2")
    st = await h.eventually(status_is(h, VOLCANO_PODGROUPS, "train", phase="Running"), what="Running")
    conds = {c["type"]: c for c in st["conditions"]}
    assert (conds["Scheduled"]["status"], conds["Scheduled"]["reason"]) == (
        "True", "tasks in gang are ready to be scheduled")
    assert conds["Unschedulable"]["status"] == "False"
    await set_phase(h, "w0", "Running")
    await h.eventually(status_is(h, VOLCANO_PODGROUPS, "train", phase="Running", running=1), what="running count")
    await set_phase(h, "w0", "Succeeded")
    await set_phase(h, "w1", "Succeeded")
    await h.eventually(status_is(h, VOLCANO_PODGROUPS, "train", phase="Completed", succeeded=2), what="Completed")


async def test_volcano_group_whose_min_resources_exceed_the_cluster_stays_pending(harness):
    h = harness
    await h.add_node("n1")  # 4 cpu: x 1.2 overcommit = 4.8 cpu
    h.start(PodGroupStatusController(h.client, h.informers).run)
    await h.client.create(VOLCANO_PODGROUPS, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                                              "metadata": {"name": "big"},
                                              "spec": {"minMember": 1, "minResources": {"cpu": "5"}}}, "default")
    await h.client.create(PODS, member("w0", annotation="big"), "default")
    await h.eventually(status_is(h, VOLCANO_PODGROUPS, "big", phase="Pending"), what="Pending")
    await h.client.create(VOLCANO_PODGROUPS, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                                              "metadata": {"name": "fits"},
                                              "spec": {"minMember": 1, "minResources": {"cpu": "4500m"}}},
                          "default")
    await h.client.create(PODS, member("w1", annotation="fits"), "default")
    await h.eventually(status_is(h, VOLCANO_PODGROUPS, "fits", phase="Inqueue"), what="Inqueue within overcommit")
    assert ((await h.client.get(VOLCANO_PODGROUPS, "big", "default"))["status"]["phase"]) == "Pending"


async def test_workload_gang_events(harness):
    h = harness
    h.start(PodGroupStatusController(h.client, h.informers).run)
    await h.client.create(WORKLOADS, {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                                      "metadata": {"name": "train"},
                                      "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 2}}}]}},
                          "default")
    await h.client.create(PODS, member("w0", workload="train"), "default")

    async def has(ev: tuple[str, str, str]) -> bool:
        return ev in await events(h, "Workload")

    await h.eventually(lambda: has(("Warning", "Unschedulable",
                                    "podGroup workers: 1/2 pods of the gang exist, minCount 2")), what="waiting")
    await h.client.create(PODS, member("w1", workload="train"), "default")
    await h.client.bind("default", "w0", "n1")
    await h.client.bind("default", "w1", "n1")
    await h.eventually(lambda: has(("Normal", "Scheduled", "podGroup workers: 2/2 pods are scheduled, minCount 2")),
                       what="scheduled")
    # one event per state, not one per sync
    evs = await events(h, "Workload")
    assert len(evs) == len(set(evs))
