"""Node lifecycle + taint eviction against a real server, on a fake clock."""

from __future__ import annotations

from minik3s.api.resources import LEASES, NODES, PODS
from minik3s.controllers.node_lifecycle import NodeLifecycleController
from minik3s.controllers.taint_eviction import TaintEvictionController
from minik3s.utils.clock import FakeClock, rfc3339_micro


def pod(name: str, node: str, tolerations: list[dict] | None = None) -> dict:
    spec: dict = {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def unreachable(seconds: int | None) -> dict:
    t = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return t


async def setup(harness, clock):
    await harness.add_node("n1")
    await harness.client.create(LEASES, {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "n1", "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": "n1", "leaseDurationSeconds": 40, "renewTime": rfc3339_micro(clock.now())}})
    nl = NodeLifecycleController(harness.client, harness.informers, clock=clock,
                                 node_monitor_period=5, node_monitor_grace_period=50)
    te = TaintEvictionController(harness.client, harness.informers, clock=clock)
    return nl, te


async def node_taints(harness) -> set[str]:
    n = await harness.client.get(NODES, "n1")
    return {f"{t['key']}:{t['effect']}" for t in (n["spec"].get("taints") or [])}


async def test_unreachable_node_is_tainted_and_pods_evicted_by_toleration(harness):
    clock = FakeClock()
    nl, te = await setup(harness, clock)
    await harness.client.create(PODS, pod("now", "n1", [unreachable(0)]))
    await harness.client.create(PODS, pod("later", "n1", [unreachable(30)]))
    await harness.client.create(PODS, pod("never", "n1", [unreachable(None)]))
    harness.start(nl.run, te.run)
    await harness.eventually(lambda: _truthy(nl.health.get("n1")), what="first health probe")
    clock.advance(51)

    async def unknown():
        n = await harness.client.get(NODES, "n1")
        c = next(c for c in n["status"]["conditions"] if c["type"] == "Ready")
        return c if c["status"] == "Unknown" else None

    ready = await harness.eventually(unknown, what="Ready=Unknown")
    assert (ready["reason"], ready["message"]) == ("NodeStatusUnknown", "Kubelet stopped posting node status.")

    async def tainted():
        t = await node_taints(harness)
        return t == {"node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unreachable:NoSchedule"}

    await harness.eventually(tainted, what="unreachable taints")
    clock.advance(1)

    async def deleting(name):
        p = await harness.client.get(PODS, name, "default")
        return p if p["metadata"].get("deletionTimestamp") else None

    evicted = await harness.eventually(lambda: deleting("now"), what="pod without time evicted")
    cond = next(c for c in evicted["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (cond["status"], cond["reason"]) == ("True", "DeletionByTaintManager")
    assert not (await harness.client.get(PODS, "later", "default"))["metadata"].get("deletionTimestamp")
    clock.advance(30)
    await harness.eventually(lambda: deleting("later"), what="pod evicted after tolerationSeconds")
    clock.advance(3600)
    await harness.eventually(lambda: te_idle(te, clock), what="tick")
    assert not (await harness.client.get(PODS, "never", "default"))["metadata"].get("deletionTimestamp")

    # the kubelet comes back (heartbeat + Ready=True): taints go
    async def recover():
        n = await harness.client.get(NODES, "n1")
        for c in n["status"]["conditions"]:
            c["status"] = "True" if c["type"] == "Ready" else "False"
            c["reason"] = "KubeletReady" if c["type"] == "Ready" else "KubeletHasNoPressure"
            c["lastHeartbeatTime"] = "2030-01-01T00:00:00Z"
        await harness.client.update_status(NODES, n)
        return True

    await harness.eventually(recover, what="node status update")
    await harness.eventually(lambda: _empty(node_taints(harness)), what="taints removed")


async def te_idle(te, clock):
    clock.advance(1)
    return not [s for s in te.scheduled.values() if s.fire_at <= clock.monotonic() - 1]


async def _truthy(v):
    return v


async def _empty(coro):
    return not await coro


async def test_cordon_and_pressure_conditions_map_to_noschedule_taints(harness):
    clock = FakeClock()
    nl, _ = await setup(harness, clock)
    harness.start(nl.run)
    await harness.mutate(NODES, "n1", lambda n: n["spec"].update(unschedulable=True), namespace=None)

    async def cordoned():
        return await node_taints(harness) == {"node.kubernetes.io/unschedulable:NoSchedule"}

    await harness.eventually(cordoned, what="unschedulable taint")
    n = await harness.client.get(NODES, "n1")
    n["status"]["conditions"].append({"type": "MemoryPressure", "status": "True"})
    await harness.client.update_status(NODES, n)

    async def pressure():
        return await node_taints(harness) == {"node.kubernetes.io/unschedulable:NoSchedule",
                                              "node.kubernetes.io/memory-pressure:NoSchedule"}

    await harness.eventually(pressure, what="memory-pressure taint")
    await harness.mutate(NODES, "n1", lambda n: n["spec"].update(unschedulable=False), namespace=None)

    async def uncordoned():
        return await node_taints(harness) == {"node.kubernetes.io/memory-pressure:NoSchedule"}

    await harness.eventually(uncordoned, what="uncordoned")


async def _node_events(harness, reason: str) -> list[dict]:
    from minik3s.api.resources import EVENTS
    items = (await harness.client.list(EVENTS, "default"))["items"]
    return [e for e in items if e["reason"] == reason and e["involvedObject"].get("kind") == "Node"]


async def test_registered_and_removing_node_events(harness):
    """monitorNodeHealth's classifyNodes: RecordNodeEvent "RegisteredNode" for a node seen for
    the first time, "RemovingNode" once it is gone; source node-controller, once each."""
    clock = FakeClock()
    nl, _ = await setup(harness, clock)
    node = await harness.client.get(NODES, "n1")
    harness.start(nl.run)

    [ev] = await harness.eventually(lambda: _node_events(harness, "RegisteredNode"), what="RegisteredNode")
    assert ev["message"] == "Node n1 event: Registered Node n1 in Controller"
    assert ev["type"] == "Normal" and ev["source"] == {"component": "node-controller"}
    assert ev["involvedObject"] == {"apiVersion": "v1", "kind": "Node", "name": "n1",
                                    "uid": node["metadata"]["uid"]}
    # further passes record nothing new
    await nl.monitor_node_health()
    await nl.monitor_node_health()
    await harness.client.delete(NODES, "n1")

    async def gone():
        return nl._nodes.store.get("n1") is None

    await harness.eventually(gone, what="informer saw the delete")
    await nl.monitor_node_health()
    [rm] = await harness.eventually(lambda: _node_events(harness, "RemovingNode"), what="RemovingNode")
    assert rm["message"] == "Node n1 event: Removing Node n1 from Controller"
    assert rm["involvedObject"]["uid"] == node["metadata"]["uid"]
    assert len(await _node_events(harness, "RegisteredNode")) == 1
    [reg] = await _node_events(harness, "RegisteredNode")
    assert reg["count"] == 1


def test_a_null_condition_entry_does_not_stop_the_monitor() -> None:
    # a status patch may store `conditions: [null, ...]` (Go decodes the null as an empty
    # NodeCondition); one such node must not stop the monitor pass for every node
    from minik3s.controllers.node_lifecycle import desired_no_schedule_taints, node_condition

    node = {"metadata": {"name": "n"}, "spec": {}, "status": {"conditions": [
        None, {"type": "Ready", "status": "False"}, {"type": "MemoryPressure", "status": "True"}]}}
    assert node_condition(node, "Ready") == {"type": "Ready", "status": "False"}
    assert node_condition(node, "PIDPressure") is None
    assert desired_no_schedule_taints(node) == [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
                                                {"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"}]
