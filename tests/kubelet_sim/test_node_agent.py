"""NodeAgent: registration, take-over, lease renewals (batched, jittered), node status, failure.

Against the real in-process API on a fake clock (conftest.py); lease renewals and status reports
are counted from the calls the agent made."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubelet_sim.config import parse_fleet
from kubelet_sim.node_agent import (
    ANNOTATION_CONTROLLER_MANAGED_ATTACH,
    ANNOTATION_FAILED,
    FleetOptions,
    NodeAgent,
    fail_node,
    recover_node,
)
from minik3s.api.resources import EVENTS, LEASES, NODES
from minik3s.client.record import EventRecorder
from minik3s.utils.clock import FakeClock


async def advance(cluster: Any, clock: FakeClock, seconds: float, step: float = 0.25) -> None:
    end = clock.monotonic() + seconds
    while clock.monotonic() < end - 1e-9:
        clock.advance(min(step, end - clock.monotonic()))
        await cluster.settle()


def node(cluster: Any, name: str) -> dict[str, Any]:
    obj = cluster.obj(NODES, name)
    assert obj is not None, f"node {name} does not exist"
    return obj


@pytest.fixture
async def agent(cluster: Any, clock: FakeClock) -> AsyncIterator[NodeAgent]:
    a = NodeAgent(parse_fleet(4), client=cluster, node_informer=cluster.informer(NODES), clock=clock,
                  rng=random.Random(1), options=FleetOptions())
    await a.register_all()
    cluster.spawn(a.run(), "test-heartbeats")
    await cluster.settle()
    yield a


def lease_renewals(cluster: Any, name: str) -> int:
    return sum(1 for c in cluster.calls if c[:3] == ("update", "leases", f"kube-node-lease/{name}"))


def status_writes(cluster: Any, name: str) -> int:
    return sum(1 for c in cluster.calls if c[:3] == ("patch", "nodes", name) and c[3] == "status")


async def test_registration_creates_ready_nodes_and_leases(agent: NodeAgent, cluster: Any) -> None:
    nodes = cluster.objects(NODES)
    assert sorted(nodes) == ["node-1", "node-2", "node-3", "node-4"]
    n1 = nodes["node-1"]
    assert [(c["type"], c["status"], c["reason"]) for c in n1["status"]["conditions"]] == [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID"),
        ("Ready", "True", "KubeletReady"),
    ]
    assert n1["status"]["addresses"] == [{"type": "InternalIP", "address": "172.18.0.2"},
                                         {"type": "Hostname", "address": "node-1"}]
    ips = {n["status"]["addresses"][0]["address"] for n in nodes.values()}
    assert len(ips) == 4
    info = n1["status"]["nodeInfo"]
    assert (info["kubeletVersion"], info["operatingSystem"], info["architecture"]) == ("v1.33.0", "linux", "amd64")
    assert n1["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 10250}}
    assert n1["spec"]["podCIDR"] == "10.244.1.0/24"
    lease = cluster.obj(LEASES, "node-1", "kube-node-lease")
    assert lease["spec"]["holderIdentity"] == "node-1"
    assert lease["spec"]["leaseDurationSeconds"] == 40
    assert lease["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": n1["metadata"]["uid"]}]


async def test_existing_node_is_taken_over(cluster: Any, clock: FakeClock) -> None:
    await cluster.create(NODES, {"metadata": {"name": "node-1", "labels": {"keep": "me"}},
                                 "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}})
    uid = node(cluster, "node-1")["metadata"]["uid"]
    a = NodeAgent(parse_fleet(1), client=cluster, clock=clock, rng=random.Random(1))
    await a.register_all()
    n1 = node(cluster, "node-1")
    assert n1["metadata"]["uid"] == uid
    assert n1["metadata"]["labels"] == {"keep": "me"}
    ready = next(c for c in n1["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True"
    assert cluster.obj(LEASES, "node-1", "kube-node-lease") is not None


async def test_leases_renewed_every_ten_seconds_spread_over_the_period(agent: NodeAgent, cluster: Any,
                                                                         clock: FakeClock) -> None:
    await advance(cluster, clock, 5)
    first_half = [lease_renewals(cluster, f"node-{i}") for i in range(1, 5)]
    assert 0 < sum(first_half) < 4, "first renewals are spread over one interval, not all at once"
    await advance(cluster, clock, 5.5)
    assert [lease_renewals(cluster, f"node-{i}") for i in range(1, 5)] == [1, 1, 1, 1]
    await advance(cluster, clock, 31)
    counts = [lease_renewals(cluster, f"node-{i}") for i in range(1, 5)]
    assert all(4 <= c <= 5 for c in counts), counts  # ~41.5 s at one renewal per 10-10.4 s
    renew = cluster.obj(LEASES, "node-1", "kube-node-lease")["spec"]["renewTime"]
    assert renew.startswith("2026-01-01T00:00:")


async def test_lease_renewed_by_update_as_the_kubelet_does(agent: NodeAgent, cluster: Any,
                                                             clock: FakeClock) -> None:
    """The kubelet's lease controller PUTs the Lease it last wrote with a new renewTime: a
    Lease someone else changed meanwhile (409) is read again and renewed (holder and duration
    set back); a deleted Lease is created again, owned by its Node."""
    await advance(cluster, clock, 10.5)
    before = cluster.obj(LEASES, "node-2", "kube-node-lease")
    assert lease_renewals(cluster, "node-2") == 1
    assert not any(c[:3] == ("patch", "leases", "kube-node-lease/node-2") for c in cluster.calls)
    # someone else takes the lease over between two renewals
    stolen = dict(before, spec={**before["spec"], "holderIdentity": "intruder", "leaseDurationSeconds": 5})
    await cluster.update(LEASES, stolen)
    mark = len(cluster.calls)
    await advance(cluster, clock, 10.5)
    after = cluster.obj(LEASES, "node-2", "kube-node-lease")
    assert after["spec"]["holderIdentity"] == "node-2" and after["spec"]["leaseDurationSeconds"] == 40
    assert after["spec"]["renewTime"] > before["spec"]["renewTime"]
    # the update that conflicted, then the update of the Lease read again
    assert [c[0] for c in cluster.calls[mark:] if c[1:3] == ("leases", "kube-node-lease/node-2")] == [
        "update", "update"]
    await cluster.delete(LEASES, "node-2", "kube-node-lease")
    await advance(cluster, clock, 10.5)
    again = cluster.obj(LEASES, "node-2", "kube-node-lease")
    assert again["metadata"]["uid"] != before["metadata"]["uid"]
    assert again["metadata"]["ownerReferences"][0]["name"] == "node-2"
    assert again["spec"]["holderIdentity"] == "node-2"


async def test_status_reported_every_five_minutes_when_unchanged(agent: NodeAgent, cluster: Any,
                                                                   clock: FakeClock) -> None:
    await advance(cluster, clock, 290, step=2)
    assert status_writes(cluster, "node-1") == 0
    await advance(cluster, clock, 25, step=2)
    assert status_writes(cluster, "node-1") == 1


async def test_pulled_images_reported_with_sizes(agent: NodeAgent, cluster: Any, clock: FakeClock) -> None:
    agent.note_images("node-2", ["docker.io/library/nginx:1.25"], size_hint=None)
    agent.note_images("node-2", ["docker.io/library/redis:7"], size_hint=250 * 1024 * 1024)
    await advance(cluster, clock, 10.5)
    images = node(cluster, "node-2")["status"]["images"]
    assert [(im["names"][1], im["sizeBytes"]) for im in images] == [
        ("docker.io/library/redis:7", 250 * 1024 * 1024),
        ("docker.io/library/nginx:1.25", 1024 * 1024),
    ]
    assert images[0]["names"][0].startswith("docker.io/library/redis@sha256:")


async def test_failed_node_stops_renewing_and_recovers(agent: NodeAgent, cluster: Any, clock: FakeClock) -> None:
    recovered: list[str] = []
    agent.on_recover = recovered.append
    await advance(cluster, clock, 10.5)
    await fail_node(cluster, "node-3")
    assert node(cluster, "node-3")["metadata"]["annotations"] == {ANNOTATION_CONTROLLER_MANAGED_ATTACH: "true",
                                                                  ANNOTATION_FAILED: "true"}
    before = lease_renewals(cluster, "node-3")
    await advance(cluster, clock, 60, step=1)
    assert lease_renewals(cluster, "node-3") == before
    assert lease_renewals(cluster, "node-1") >= before + 5
    # the node lifecycle controller would mark it Unknown meanwhile
    await cluster.patch(NODES, "node-3", {"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}},
                        subresource="status")
    await recover_node(cluster, "node-3")
    await cluster.settle()
    assert recovered == ["node-3"]
    assert lease_renewals(cluster, "node-3") == before + 1
    assert ANNOTATION_FAILED not in (node(cluster, "node-3")["metadata"].get("annotations") or {})
    ready = next(c for c in node(cluster, "node-3")["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True"
    assert ready["lastTransitionTime"] == ready["lastHeartbeatTime"]


async def test_registration_is_concurrent_and_bounded(cluster: Any, clock: FakeClock) -> None:
    in_flight = 0
    peak = 0
    create = cluster.create

    async def slow_create(res: Any, obj: Any, namespace: str | None = None, **kw: Any) -> Any:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0)
        try:
            return await create(res, obj, namespace, **kw)
        finally:
            in_flight -= 1

    cluster.create = slow_create
    a = NodeAgent(parse_fleet(200), client=cluster, clock=clock, rng=random.Random(1),
                  options=FleetOptions(registration_parallelism=16))
    await a.register_all()
    assert len(cluster.objects(NODES)) == 200
    assert len(cluster.objects(LEASES)) == 200
    assert 1 < peak <= 16


async def test_ready_is_restored_when_someone_else_marks_the_node_unknown(agent: NodeAgent, cluster: Any,
                                                                          clock: FakeClock) -> None:
    await cluster.patch(NODES, "node-4", {"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}},
                        subresource="status")
    await advance(cluster, clock, 10.5)
    ready = next(c for c in node(cluster, "node-4")["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")


# ---- the kubelet's Events about its Node

def node_events(cluster: Any, name: str) -> list[tuple[str, str]]:
    evs = [e for e in cluster.objects(EVENTS).values()
           if e["involvedObject"].get("kind") == "Node" and e["involvedObject"].get("name") == name]
    evs.sort(key=lambda e: e["metadata"]["name"])  # <node>.<hex nanoseconds + sequence>: write order
    return [(e["reason"], e["message"]) for e in evs]


STARTUP = [
    ("Starting", "Starting kubelet."),
    ("NodeHasSufficientMemory", "Node node-1 status is now: NodeHasSufficientMemory"),
    ("NodeHasNoDiskPressure", "Node node-1 status is now: NodeHasNoDiskPressure"),
    ("NodeHasSufficientPID", "Node node-1 status is now: NodeHasSufficientPID"),
    ("NodeAllocatableEnforced", "Updated Node Allocatable limit across pods"),
    ("NodeReady", "Node node-1 status is now: NodeReady"),
]


@pytest.fixture
async def with_events(cluster: Any, clock: FakeClock) -> AsyncIterator[tuple[NodeAgent, EventRecorder]]:
    recorder = EventRecorder(cluster, "kubelet", clock=clock)
    cluster.idle_checks.append(lambda: recorder.pending() == 0)
    cluster.spawn(recorder.run(), "test-kubelet-events")
    a = NodeAgent(parse_fleet(1), client=cluster, node_informer=cluster.informer(NODES), clock=clock,
                  rng=random.Random(1), options=FleetOptions(), recorder=recorder)
    yield a, recorder


async def test_starting_kubelet_records_node_events_once(with_events: tuple[NodeAgent, EventRecorder],
                                                         cluster: Any, clock: FakeClock) -> None:
    a, _ = with_events
    await a.register_all()
    cluster.spawn(a.run(), "test-heartbeats")
    await cluster.settle()
    assert node_events(cluster, "node-1") == STARTUP
    ev = next(e for e in cluster.objects(EVENTS).values() if e["reason"] == "Starting")
    assert ev["involvedObject"] == {"kind": "Node", "name": "node-1", "uid": "node-1"}
    assert ev["metadata"]["namespace"] == "default"
    assert ev["source"] == {"component": "kubelet", "host": "node-1"} and ev["type"] == "Normal"
    # heartbeats and status reports record nothing more
    await advance(cluster, clock, 320, step=5)
    assert node_events(cluster, "node-1") == STARTUP


async def test_take_over_of_a_healthy_node_reports_no_condition_transitions(
        with_events: tuple[NodeAgent, EventRecorder], cluster: Any) -> None:
    conds = [{"type": t, "status": s} for t, s in
             (("MemoryPressure", "False"), ("DiskPressure", "False"), ("PIDPressure", "Unknown"), ("Ready", "True"))]
    await cluster.create(NODES, {"metadata": {"name": "node-1"}, "status": {"conditions": conds}})
    a, _ = with_events
    await a.register_all()
    await cluster.settle()
    assert node_events(cluster, "node-1") == [
        ("Starting", "Starting kubelet."),
        ("NodeHasSufficientPID", "Node node-1 status is now: NodeHasSufficientPID"),
        ("NodeAllocatableEnforced", "Updated Node Allocatable limit across pods"),
    ]


async def test_cordon_and_uncordon_record_schedulable_events(with_events: tuple[NodeAgent, EventRecorder],
                                                             cluster: Any, clock: FakeClock) -> None:
    a, _ = with_events
    await a.register_all()
    cluster.spawn(a.run(), "test-heartbeats")
    await cluster.settle()
    for unschedulable in (True, True, False):
        await cluster.patch(NODES, "node-1", {"spec": {"unschedulable": unschedulable}})
        await cluster.settle()
    assert node_events(cluster, "node-1")[len(STARTUP):] == [
        ("NodeNotSchedulable", "Node node-1 status is now: NodeNotSchedulable"),
        ("NodeSchedulable", "Node node-1 status is now: NodeSchedulable"),
    ]


async def test_registered_node_lets_the_controller_manage_attach_detach(agent: NodeAgent, cluster: Any) -> None:
    """initialNode with --enable-controller-attach-detach (default true)."""
    for name in ("node-1", "node-4"):
        assert node(cluster, name)["metadata"]["annotations"] == {
            "volumes.kubernetes.io/controller-managed-attach-detach": "true"}


async def test_each_node_gets_its_csinode_once(agent: NodeAgent, cluster: Any, clock: FakeClock) -> None:
    """The kubelet's CSI node-info manager: a CSINode per node, owned by the Node, no drivers, the
    migrated in-tree plugins annotated; a kubelet that starts again finds them and creates none."""
    from minik3s.api.resources import CSINODES

    csinodes = cluster.objects(CSINODES)
    assert sorted(csinodes) == ["node-1", "node-2", "node-3", "node-4"]
    c1 = csinodes["node-1"]
    assert c1["spec"] == {"drivers": []}
    assert c1["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": node(cluster, "node-1")["metadata"]["uid"]}]
    assert c1["metadata"]["annotations"]["storage.alpha.kubernetes.io/migrated-plugins"] == (
        "kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder,"
        "kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume")
    before = sum(1 for c in cluster.calls if c[:2] == ("create", "csinodes"))
    again = NodeAgent(parse_fleet(4), client=cluster, clock=clock, rng=random.Random(2))
    await again.register_all()
    assert sum(1 for c in cluster.calls if c[:2] == ("create", "csinodes")) == before == 4
