"""kubelet_sim tests run on the real in-process API (`real_api` in tests/conftest.py: ApiCore on
SQLite through LocalClient, one FakeClock for the API and the simulator); `cluster` is that fixture
under the name these tests use."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from kubelet_sim.config import parse_fleet
from kubelet_sim.controller import StageController
from kubelet_sim.node_agent import NodeAgent
from kubelet_sim.stages.model import load_default_stages
from minik3s.api.resources import EVENTS, NODES, PODS
from minik3s.client.record import EventRecorder
from minik3s.utils.clock import FakeClock


@pytest.fixture
def cluster(real_api: Any) -> Any:
    return real_api


@dataclass
class Kubelets:
    cluster: Any
    clock: FakeClock

    async def pod(self, name: str, containers: list[dict[str, Any]], *, node: str = "node-1",
                  init: list[dict[str, Any]] | None = None, **annotations: str) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "namespace": "default"}
        if annotations:
            meta["annotations"] = {f"sim.minik3s.io/{k.replace('_', '-')}": v for k, v in annotations.items()}
        spec: dict[str, Any] = {"nodeName": node, "containers": containers}
        if init:
            spec["initContainers"] = init
        made: dict[str, Any] = await self.cluster.create(PODS, {"metadata": meta, "spec": spec})
        await self.cluster.settle()
        return made

    async def advance(self, seconds: float, step: float = 0.1) -> None:
        end = self.clock.monotonic() + seconds
        while self.clock.monotonic() < end - 1e-9:
            self.clock.advance(min(step, end - self.clock.monotonic()))
            await self.cluster.settle()

    async def events(self, pod: str) -> list[dict[str, Any]]:
        items = (await self.cluster.list(EVENTS, "default"))["items"]
        mine = [e for e in items if e["involvedObject"].get("name") == pod and e["source"]["component"] == "kubelet"]
        return sorted(mine, key=lambda e: e["metadata"]["name"])  # <pod>.<hex ns>: the order of recording

    async def lines(self, pod: str) -> list[tuple[str, str, str]]:
        return [(e["involvedObject"].get("fieldPath", ""), e["reason"], e["message"]) for e in await self.events(pod)]


@pytest.fixture
async def kubelets(cluster: Any, clock: FakeClock) -> AsyncIterator[Kubelets]:
    fleet = parse_fleet(2)
    # node-2 already holds redis:7 (a node manifest's status.images: declared, present)
    fleet[1].setdefault("status", {})["images"] = [{"names": ["docker.io/library/redis:7"], "sizeBytes": 123}]
    agent = NodeAgent(fleet, client=cluster, node_informer=cluster.informer(NODES), clock=clock,
                      rng=random.Random(0))
    await agent.register_all()
    recorder = EventRecorder(cluster, "kubelet", clock=clock)
    ctl = StageController(load_default_stages(), client=cluster, pod_informer=cluster.informer(PODS),
                          nodes=agent, clock=clock, rng=random.Random(0), workers=4, recorder=recorder)
    cluster.idle_checks.append(lambda: len(ctl.queue) == 0 and recorder.pending() == 0)
    cluster.spawn(ctl.run(), "test-stages")
    cluster.spawn(recorder.run(), "test-kubelet-events")
    await cluster.settle()
    yield Kubelets(cluster, clock)
