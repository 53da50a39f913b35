"""In-place pod resize on the simulated kubelet, through the real pods/resize subresource on the
real in-process API with a fake clock: admitted (PodResizeInProgress, allocatedResources) then
actuated (status resources, RestartContainer restarts), Infeasible beyond the node, Deferred beside
the other pods and retried when one leaves; what the scheduler and quota then count."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubelet_sim.config import parse_fleet
from kubelet_sim.controller import StageController
from kubelet_sim.node_agent import NodeAgent
from kubelet_sim.stages.model import load_default_stages
from minik3s.api.helpers.resources import pod_requests
from minik3s.api.resources import NODES, PODS
from minik3s.utils.clock import FakeClock


@pytest.fixture
async def sim(cluster: Any, clock: FakeClock) -> AsyncIterator[Any]:
    agent = NodeAgent(parse_fleet(1), client=cluster, node_informer=cluster.informer(NODES), clock=clock,
                      rng=random.Random(0))
    await agent.register_all()
    ctl = StageController(load_default_stages(), client=cluster, pod_informer=cluster.informer(PODS),
                          nodes=agent, clock=clock, rng=random.Random(0), workers=2)
    cluster.idle_checks.append(lambda: len(ctl.queue) == 0)
    cluster.spawn(ctl.run(), "test-stages")
    cluster.spawn(agent.run(), "test-hb")
    await cluster.settle()
    yield cluster


async def start(cluster: Any, clock: FakeClock, name: str, requests: dict, limits: dict | None = None,
                policy: list | None = None) -> dict:
    c: dict[str, Any] = {"name": "c", "image": "nginx", "resources": {"requests": requests}}
    if limits:
        c["resources"]["limits"] = limits
    if policy:
        c["resizePolicy"] = policy
    await cluster.create(PODS, {"metadata": {"name": name, "namespace": "default"},
                                "spec": {"nodeName": "node-1", "containers": [c]}})
    for _ in range(20):
        clock.advance(0.5)
        await cluster.settle()
    pod = cluster.obj(PODS, name, "default")
    assert pod["status"]["phase"] == "Running"
    return pod


async def resize(cluster: Any, name: str, resources: dict) -> None:
    await cluster.patch(PODS, name, {"spec": {"containers": [{"name": "c", "resources": resources}]}}, "default",
                        patch_type="strategic", subresource="resize")
    await cluster.settle()


def cond(pod: dict, ctype: str) -> dict | None:
    return next((c for c in pod["status"].get("conditions") or () if c["type"] == ctype), None)


async def test_a_running_container_reports_its_allocation(sim: Any, clock: FakeClock) -> None:
    pod = await start(sim, clock, "web", {"cpu": "500m", "memory": "128Mi"}, {"memory": "256Mi"})
    [cs] = pod["status"]["containerStatuses"]
    assert cs["allocatedResources"] == {"cpu": "500m", "memory": "128Mi"}
    assert cs["resources"] == {"requests": {"cpu": "500m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}}


async def test_an_admitted_resize_is_actuated_in_place(sim: Any, clock: FakeClock) -> None:
    await start(sim, clock, "web", {"cpu": "500m", "memory": "128Mi"}, {"cpu": "1", "memory": "256Mi"})
    # watch what the kubelet writes between the resize and the settled state
    writes: list[dict] = []
    orig = sim._client.update

    async def spy(res: Any, obj: dict, **kw: Any) -> dict:
        if res is PODS and kw.get("subresource") == "status":
            writes.append(obj)
        return await orig(res, obj, **kw)

    sim._client.update = spy
    try:
        await resize(sim, "web", {"requests": {"cpu": "800m"}, "limits": {"cpu": "1500m"}})
    finally:
        sim._client.update = orig
    pod = sim.obj(PODS, "web", "default")
    [cs] = pod["status"]["containerStatuses"]
    assert cs["allocatedResources"] == {"cpu": "800m", "memory": "128Mi"}
    assert cs["resources"] == {"requests": {"cpu": "800m", "memory": "128Mi"},
                               "limits": {"cpu": "1500m", "memory": "256Mi"}}
    assert cs["restartCount"] == 0  # NotRequired (the default): resized in place
    assert cond(pod, "PodResizeInProgress") is None and cond(pod, "PodResizePending") is None
    # on the way: allocated first, with PodResizeInProgress, the old values still running
    first = next(w for w in writes if cond(w, "PodResizeInProgress"))
    assert first["status"]["containerStatuses"][0]["allocatedResources"]["cpu"] == "800m"
    assert first["status"]["containerStatuses"][0]["resources"]["requests"]["cpu"] == "500m"
    assert cond(first, "PodResizeInProgress")["status"] == "True"
    assert pod_requests(pod)["cpu"] == 800


async def test_restart_container_policy_restarts_on_a_memory_resize(sim: Any, clock: FakeClock) -> None:
    before = await start(sim, clock, "web", {"cpu": "500m", "memory": "128Mi"}, {"memory": "256Mi"},
                         policy=[{"resourceName": "memory", "restartPolicy": "RestartContainer"}])
    await resize(sim, "web", {"requests": {"memory": "200Mi"}, "limits": {"memory": "512Mi"}})
    [cs] = sim.obj(PODS, "web", "default")["status"]["containerStatuses"]
    assert cs["restartCount"] == 1
    assert cs["lastState"]["terminated"]["containerID"] == before["status"]["containerStatuses"][0]["containerID"]
    assert cs["containerID"] != before["status"]["containerStatuses"][0]["containerID"]
    assert cs["resources"]["limits"]["memory"] == "512Mi"
    # a cpu change of the same container is NotRequired: no restart
    await resize(sim, "web", {"requests": {"cpu": "600m"}})
    assert sim.obj(PODS, "web", "default")["status"]["containerStatuses"][0]["restartCount"] == 1


async def test_beyond_the_node_is_infeasible_and_counts_what_runs(sim: Any, clock: FakeClock) -> None:
    await start(sim, clock, "web", {"cpu": "500m", "memory": "128Mi"})
    await resize(sim, "web", {"requests": {"cpu": "5", "memory": "32Gi"}})
    pod = sim.obj(PODS, "web", "default")
    pending = cond(pod, "PodResizePending")
    assert pending is not None and pending["reason"] == "Infeasible"
    assert pending["message"] == ("Node didn't have enough capacity: memory, requested: 34359738368, "
                                  "capacity: 17179869184")
    assert pod["status"]["containerStatuses"][0]["allocatedResources"] == {"cpu": "500m", "memory": "128Mi"}
    # the scheduler and quota count what runs, not the infeasible wish
    assert pod_requests(pod) == {"cpu": 500, "memory": 128 * 2**20}
    # conditions order: the resize conditions before the kubelet's own
    types = [c["type"] for c in pod["status"]["conditions"]]
    assert types.index("PodResizePending") < types.index("PodReadyToStartContainers")
    # a feasible resize replaces it
    await resize(sim, "web", {"requests": {"cpu": "1", "memory": "256Mi"}})
    pod = sim.obj(PODS, "web", "default")
    assert cond(pod, "PodResizePending") is None
    assert pod["status"]["containerStatuses"][0]["resources"]["requests"] == {"cpu": "1", "memory": "256Mi"}


async def test_deferred_until_another_pod_leaves(sim: Any, clock: FakeClock) -> None:
    await start(sim, clock, "big", {"cpu": "3"})
    await start(sim, clock, "web", {"cpu": "500m"})
    await resize(sim, "web", {"requests": {"cpu": "2"}})
    pod = sim.obj(PODS, "web", "default")
    pending = cond(pod, "PodResizePending")
    assert pending is not None and pending["reason"] == "Deferred"
    assert pending["message"] == "Node didn't have enough resource: cpu, requested: 2000, used: 3000, capacity: 4000"
    # the desired value counts for the scheduler meanwhile (max of desired and actual)
    assert pod_requests(pod)["cpu"] == 2000
    await sim.delete(PODS, "big", "default", grace_period_seconds=0)
    for _ in range(10):
        clock.advance(0.5)
        await sim.settle()
    pod = sim.obj(PODS, "web", "default")
    assert cond(pod, "PodResizePending") is None
    assert pod["status"]["containerStatuses"][0]["resources"]["requests"]["cpu"] == "2"
