"""StageController behaviour beyond single-pod golden files: many pods, IPs, failed nodes, retries.

Runs against the real in-process API on a fake clock (conftest.py); `settle()` waits until no API
call is in flight, the informers hold what the API holds and the stage queue is empty, so "X did
not happen" assertions are made after the system has finished reacting, not after a guess."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from kubelet_sim.config import parse_fleet
from kubelet_sim.controller import StageController
from kubelet_sim.node_agent import NodeAgent, fail_node, recover_node
from kubelet_sim.stages.model import load_default_stages
from minik3s.api.errors import InternalError
from minik3s.api.resources import NODES, PODS
from minik3s.utils.clock import FakeClock


async def advance(cluster: Any, clock: FakeClock, seconds: float, step: float = 0.1) -> None:
    end = clock.monotonic() + seconds
    while clock.monotonic() < end - 1e-9:
        clock.advance(min(step, end - clock.monotonic()))
        await cluster.settle()


@dataclass
class Sim:
    cluster: Any
    clock: FakeClock
    agent: NodeAgent
    ctl: StageController

    async def pod(self, name: str, node: str = "node-1", **annotations: str) -> None:
        meta: dict[str, Any] = {"name": name, "namespace": "default"}
        if annotations:
            meta["annotations"] = {f"sim.minik3s.io/{k.replace('_', '-')}": v for k, v in annotations.items()}
        await self.cluster.create(PODS, {"metadata": meta, "spec": {
            "nodeName": node, "containers": [{"name": "c", "image": "nginx:1.25"}]}})
        await self.cluster.settle()

    def status(self, name: str) -> dict[str, Any]:
        pod = self.cluster.obj(PODS, name, "default")
        assert pod is not None, f"pod {name} does not exist"
        return pod.get("status") or {}

    def exists(self, name: str) -> bool:
        return self.cluster.obj(PODS, name, "default") is not None

    async def settle(self) -> None:
        await self.cluster.settle()

    async def advance(self, seconds: float, step: float = 0.1) -> None:
        await advance(self.cluster, self.clock, seconds, step)


@pytest.fixture
async def sim(cluster: Any, clock: FakeClock) -> AsyncIterator[Sim]:
    agent = NodeAgent(parse_fleet(2), client=cluster, node_informer=cluster.informer(NODES), clock=clock,
                      rng=random.Random(0))
    await agent.register_all()
    ctl = StageController(load_default_stages(), client=cluster, pod_informer=cluster.informer(PODS),
                          nodes=agent, clock=clock, rng=random.Random(0), workers=4)
    agent.on_recover = ctl.requeue_node
    cluster.idle_checks.append(lambda: len(ctl.queue) == 0)
    cluster.spawn(ctl.run(), "test-stages")
    cluster.spawn(agent.run(), "test-hb")
    await cluster.settle()
    yield Sim(cluster, clock, agent, ctl)


async def test_many_pods_get_unique_ips_and_freed_ips_are_reused(sim: Sim) -> None:
    for i in range(5):
        await sim.pod(f"p{i}")
    await sim.pod("other", node="node-2")
    assert [sim.status(f"p{i}")["podIP"] for i in range(5)] == [f"10.244.1.{i}" for i in range(2, 7)]
    assert sim.status("other")["podIP"] == "10.244.2.2"
    assert sim.status("other")["hostIP"] == "172.18.0.3"
    await sim.cluster.delete(PODS, "p1", "default", grace_period_seconds=0)
    await sim.settle()
    await sim.pod("new")
    assert sim.status("new")["podIP"] == "10.244.1.3"


async def test_pods_on_unknown_nodes_are_left_alone(sim: Sim) -> None:
    await sim.pod("elsewhere", node="real-node")
    assert sim.status("elsewhere") == {"phase": "Pending", "qosClass": "BestEffort"}


async def test_failed_node_freezes_its_pods_until_recovery(sim: Sim) -> None:
    await fail_node(sim.cluster, "node-1")
    await sim.settle()
    await sim.pod("frozen")
    await sim.pod("alive", node="node-2")
    await sim.advance(3)
    assert sim.status("frozen") == {"phase": "Pending", "qosClass": "BestEffort"}
    assert sim.status("alive")["phase"] == "Running"
    await recover_node(sim.cluster, "node-1")
    await sim.settle()
    assert sim.status("frozen")["phase"] == "Running"


async def test_deletion_is_not_confirmed_on_a_failed_node(sim: Sim) -> None:
    await sim.pod("stuck")
    await fail_node(sim.cluster, "node-1")
    await sim.settle()
    await sim.cluster.delete(PODS, "stuck", "default", grace_period_seconds=2)
    await sim.advance(10, step=0.5)
    assert sim.exists("stuck")
    assert sim.status("stuck")["phase"] == "Running"
    await recover_node(sim.cluster, "node-1")
    await sim.settle()
    assert sim.exists("stuck"), "after recovery the kubelet still takes min(shutdown, grace) to stop it"
    await sim.advance(1.1)
    assert not sim.exists("stuck")


async def test_running_pod_reports_its_image_to_the_node(sim: Sim) -> None:
    await sim.cluster.create(PODS, {"metadata": {"name": "big", "namespace": "default",
                                                 "annotations": {"sim.minik3s.io/image-size": "250Mi"}},
                                    "spec": {"nodeName": "node-2", "containers": [{"name": "c", "image": "redis:7"}]}})
    await sim.advance(11, step=0.5)
    node = sim.cluster.obj(NODES, "node-2")
    assert node is not None
    images = node["status"]["images"]
    assert [(im["names"][1], im["sizeBytes"]) for im in images] == [("docker.io/library/redis:7", 250 * 1024 * 1024)]


async def test_transient_api_error_is_retried(sim: Sim) -> None:
    sim.cluster.fail_next["update_status"] = [InternalError("etcd hiccup")]
    await sim.pod("retry")
    assert sim.status("retry") == {"phase": "Pending", "qosClass": "BestEffort"}
    await sim.advance(1.2)
    assert sim.status("retry")["phase"] == "Running"


async def test_finalizer_keeps_pod_and_kubelet_deletes_only_once(sim: Sim) -> None:
    await sim.cluster.create(PODS, {"metadata": {"name": "fin", "namespace": "default", "finalizers": ["x/y"]},
                                    "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}})
    await sim.settle()
    await sim.cluster.delete(PODS, "fin", "default", grace_period_seconds=30)
    await sim.advance(5)
    kubelet_deletes = [c for c in sim.cluster.calls if c[0] == "delete" and c[4]]
    assert len(kubelet_deletes) == 1
    assert sim.exists("fin")
    assert sim.status("fin")["phase"] == "Succeeded"
    await sim.cluster.patch(PODS, "fin", {"metadata": {"finalizers": None}}, "default")
    assert not sim.exists("fin")


async def test_recreated_pod_with_same_name_starts_fresh(sim: Sim) -> None:
    await sim.pod("same", run_seconds="100")
    uid1 = sim.cluster.obj(PODS, "same", "default")["metadata"]["uid"]
    await sim.cluster.delete(PODS, "same", "default", grace_period_seconds=0)
    await sim.settle()
    await sim.pod("same")
    pod = sim.cluster.obj(PODS, "same", "default")
    assert pod["metadata"]["uid"] != uid1
    assert pod["status"]["phase"] == "Running"
    assert pod["status"]["podIP"] == "10.244.1.2"


async def test_running_pods_from_a_previous_run_keep_their_ips(cluster: Any, clock: FakeClock) -> None:
    # The API resets status on create (as kube-apiserver does), so the earlier run's kubelet
    # reported it through the status subresource.
    old = await cluster.create(PODS, {"metadata": {"name": "old", "namespace": "default"},
                                      "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}})
    old["status"] = {"phase": "Running", "podIP": "10.244.1.2",
                     "containerStatuses": [{"name": "c", "state": {"running": {}}}]}
    await cluster.update_status(PODS, old)
    agent = NodeAgent(parse_fleet(1), client=cluster, clock=clock, rng=random.Random(0))
    ctl = StageController(load_default_stages(), client=cluster, pod_informer=cluster.informer(PODS),
                          nodes=agent, clock=clock, rng=random.Random(0))
    await cluster.settle()
    for key in cluster.informer(PODS).store.keys():
        ctl.queue.add(key)
    cluster.spawn(ctl.run(), "test-adopt")
    cluster.idle_checks.append(lambda: len(ctl.queue) == 0)
    await cluster.settle()
    await cluster.create(PODS, {"metadata": {"name": "new", "namespace": "default"},
                                "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}})
    await cluster.settle()
    assert cluster.obj(PODS, "old", "default")["status"]["podIP"] == "10.244.1.2"
    assert cluster.obj(PODS, "new", "default")["status"]["podIP"] == "10.244.1.3"


async def test_host_network_pod_uses_the_node_ip(sim: Sim) -> None:
    await sim.cluster.create(PODS, {"metadata": {"name": "hn", "namespace": "default"},
                                    "spec": {"nodeName": "node-2", "hostNetwork": True,
                                             "containers": [{"name": "c", "image": "nginx"}]}})
    await sim.settle()
    assert sim.status("hn")["podIP"] == "172.18.0.3"
    await sim.pod("after")
    assert sim.status("after")["podIP"] == "10.244.1.2"


async def test_readiness_gate_keeps_pod_unready(sim: Sim) -> None:
    await sim.cluster.create(PODS, {"metadata": {"name": "gated", "namespace": "default"},
                                    "spec": {"nodeName": "node-1", "readinessGates": [{"conditionType": "example.com/lb"}],
                                             "containers": [{"name": "c", "image": "nginx"}]}})
    await sim.settle()
    conds = {c["type"]: c for c in sim.status("gated")["conditions"]}
    assert sim.status("gated")["phase"] == "Running"
    assert conds["ContainersReady"]["status"] == "True"
    assert (conds["Ready"]["status"], conds["Ready"]["reason"]) == ("False", "ReadinessGatesNotReady")
