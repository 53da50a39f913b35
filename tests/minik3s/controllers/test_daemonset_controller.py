"""DaemonSet controller against a real in-process API server.

A tiny binder stands in for the scheduler: it binds each daemon pod to the node its
required `matchFields metadata.name` term names and marks it Running and Ready."""

from __future__ import annotations

import copy

import pytest

from minik3s.api.errors import ConflictError, InvalidError, NotFoundError
from minik3s.api.resources import CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS
from minik3s.client.informer import object_key
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.daemonset import DaemonSetController, target_node
from minik3s.utils.clock import rfc3339


def ds_obj(name: str, *, image: str = "agent:1", tolerations: list | None = None,
           node_selector: dict | None = None, update: dict | None = None) -> dict:
    pod_spec: dict = {"containers": [{"name": "c", "image": image}]}
    if tolerations:
        pod_spec["tolerations"] = tolerations
    if node_selector:
        pod_spec["nodeSelector"] = node_selector
    spec: dict = {"selector": {"matchLabels": {"app": name}},
                  "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec}}
    if update:
        spec["updateStrategy"] = update
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


async def binder(h):
    inf = h.informers.informer(PODS)
    queue = WorkQueue()
    inf.add_handler(on_add=lambda o: queue.add(object_key(o)), on_update=lambda _o, n: queue.add(object_key(n)))
    await inf.wait_for_sync()
    while True:
        key = await queue.get()
        try:
            pod = inf.store.get(key)
            if pod is None:
                continue
            m = pod["metadata"]
            if m.get("deletionTimestamp"):
                await h.client.delete(PODS, m["name"], m["namespace"], grace_period_seconds=0)
            elif not pod["spec"].get("nodeName"):
                await h.client.bind(m["namespace"], m["name"], target_node(pod))
            elif (pod.get("status") or {}).get("phase") != "Running":
                body = copy.deepcopy(pod)
                now = rfc3339(h.rs.core.clock.now())
                body["status"] = {"phase": "Running", "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": now}]}
                await h.client.update_status(PODS, body)
        except NotFoundError:
            pass
        except ConflictError:
            queue.add_rate_limited(key)
        finally:
            queue.done(key)


async def status_has(h, name, **want):
    cur = await h.client.get(DAEMONSETS, name, "default")
    st = cur.get("status") or {}
    return cur if all(st.get(k) == v for k, v in want.items()) and st.get("observedGeneration") == \
        cur["metadata"]["generation"] else None


async def pods_by_node(h, app):
    out: dict[str, list] = {}
    for p in await h.pods(selector=f"app={app}"):
        if not p["metadata"].get("deletionTimestamp"):
            out.setdefault(p["spec"].get("nodeName") or target_node(p), []).append(p)
    return out


async def test_defaults_and_validation(harness):
    ds = await harness.client.create(DAEMONSETS, ds_obj("agent"))
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                            "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert ds["spec"]["revisionHistoryLimit"] == 10
    bad = ds_obj("bad", update={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}})
    with pytest.raises(InvalidError) as ei:
        await harness.client.create(DAEMONSETS, bad)
    assert [c["field"] for c in ei.value.causes] == ["spec.updateStrategy.rollingUpdate.maxUnavailable"]


async def test_one_pod_per_eligible_node_taints_and_new_node(harness):
    for n in ("n1", "n2"):
        await harness.add_node(n)
    await harness.add_node("tainted")
    await harness.mutate(NODES, "tainted", lambda n: n["spec"].update(
        taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]), namespace=None)
    await harness.add_node("cordoned")
    await harness.mutate(NODES, "cordoned", lambda n: n["spec"].update(
        unschedulable=True, taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
        namespace=None)
    ctl = DaemonSetController(harness.client, harness.informers)
    harness.start(ctl.run, lambda: binder(harness))
    await harness.client.create(DAEMONSETS, ds_obj("agent"))
    cur = await harness.eventually(lambda: status_has(harness, "agent", desiredNumberScheduled=3, numberReady=3,
                                                      numberAvailable=3, updatedNumberScheduled=3),
                                   what="3 daemon pods")
    assert cur["status"]["currentNumberScheduled"] == 3 and cur["status"]["numberMisscheduled"] == 0
    by_node = await pods_by_node(harness, "agent")
    # the cordoned node still runs one: daemon pods tolerate unschedulable; the tainted one does not
    assert sorted(by_node) == ["cordoned", "n1", "n2"] and all(len(v) == 1 for v in by_node.values())
    pod = by_node["n1"][0]
    assert pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    keys = {(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]}
    assert {("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
            ("node.kubernetes.io/disk-pressure", "NoSchedule"), ("node.kubernetes.io/memory-pressure", "NoSchedule"),
            ("node.kubernetes.io/pid-pressure", "NoSchedule"),
            ("node.kubernetes.io/unschedulable", "NoSchedule")} == keys
    rev = (await harness.client.list(CONTROLLERREVISIONS, "default"))["items"]
    assert len(rev) == 1 and pod["metadata"]["labels"]["controller-revision-hash"] == \
        rev[0]["metadata"]["labels"]["controller-revision-hash"]
    assert pod["metadata"]["labels"]["pod-template-generation"] == "1"

    # a new node gets its pod; tolerating the taint brings the tainted node in
    await harness.add_node("n3")
    await harness.eventually(lambda: status_has(harness, "agent", desiredNumberScheduled=4, numberReady=4),
                             what="pod on the new node")
    await harness.mutate(DAEMONSETS, "agent", lambda d: d["spec"]["template"]["spec"].update(
        tolerations=[{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]))
    await harness.eventually(lambda: status_has(harness, "agent", desiredNumberScheduled=5, numberReady=5,
                                                updatedNumberScheduled=5), what="5 updated pods")
    assert sorted(await pods_by_node(harness, "agent")) == ["cordoned", "n1", "n2", "n3", "tainted"]


async def test_node_selector_and_misscheduled_cleanup(harness):
    await harness.add_node("a")
    await harness.add_node("b")
    await harness.mutate(NODES, "a", lambda n: n["metadata"]["labels"].update(role="edge"), namespace=None)
    ctl = DaemonSetController(harness.client, harness.informers)
    harness.start(ctl.run, lambda: binder(harness))
    await harness.client.create(DAEMONSETS, ds_obj("edge", node_selector={"role": "edge"}))
    await harness.eventually(lambda: status_has(harness, "edge", desiredNumberScheduled=1, numberReady=1),
                             what="one pod")
    assert sorted(await pods_by_node(harness, "edge")) == ["a"]
    await harness.mutate(NODES, "a", lambda n: n["metadata"]["labels"].pop("role"), namespace=None)

    async def gone():
        return not await pods_by_node(harness, "edge")

    await harness.eventually(gone, what="pod removed from the node that lost its label")
    await harness.eventually(lambda: status_has(harness, "edge", desiredNumberScheduled=0,
                                                numberMisscheduled=0), what="status 0")


async def test_rolling_update_max_unavailable_one(harness):
    for n in ("n1", "n2", "n3"):
        await harness.add_node(n)
    ctl = DaemonSetController(harness.client, harness.informers)
    harness.start(ctl.run, lambda: binder(harness))
    await harness.client.create(DAEMONSETS, ds_obj("agent"))
    await harness.eventually(lambda: status_has(harness, "agent", numberReady=3), what="3 ready")
    await harness.mutate(DAEMONSETS, "agent",
                         lambda d: d["spec"]["template"]["spec"]["containers"][0].update(image="agent:2"))
    worst: list[int] = []

    async def done():
        by_node = await pods_by_node(harness, "agent")
        ready = sum(1 for ps in by_node.values() for p in ps if (p.get("status") or {}).get("phase") == "Running")
        worst.append(ready)
        imgs = {p["spec"]["containers"][0]["image"] for ps in by_node.values() for p in ps}
        st = await status_has(harness, "agent", updatedNumberScheduled=3, numberAvailable=3)
        return st if st and imgs == {"agent:2"} and len(by_node) == 3 else None

    await harness.eventually(done, what="rolled out")
    assert min(worst) >= 2  # never more than maxUnavailable=1 node without a running pod


async def test_rolling_update_with_surge_keeps_old_pod_until_new_is_ready(harness):
    await harness.add_node("n1")
    ctl = DaemonSetController(harness.client, harness.informers)
    harness.start(ctl.run, lambda: binder(harness))
    await harness.client.create(DAEMONSETS, ds_obj("agent", update={
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}))
    await harness.eventually(lambda: status_has(harness, "agent", numberReady=1), what="1 ready")
    await harness.mutate(DAEMONSETS, "agent",
                         lambda d: d["spec"]["template"]["spec"]["containers"][0].update(image="agent:2"))
    seen_empty = []

    async def done():
        ps = (await pods_by_node(harness, "agent")).get("n1", [])
        running = [p for p in ps if (p.get("status") or {}).get("phase") == "Running"]
        if not running:
            seen_empty.append(True)
        return len(ps) == 1 and ps[0]["spec"]["containers"][0]["image"] == "agent:2" and running

    await harness.eventually(done, what="surged update")
    assert not seen_empty
