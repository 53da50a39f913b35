"""In-process harness for descheduler tests: the real API (ApiCore over SQLite + LocalClient,
a fake clock), the shared informer factory, and a `Cluster` helper that creates nodes and
pods through the API, builds a Descheduler from a policy dict and runs one cycle."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from apiserver.core import ApiCore
from apiserver.storage.sqlite_store import SqliteStore
from descheduler.descheduler import Descheduler, DeschedulerOptions
from descheduler.framework.interface import PlacementAdvisor
from descheduler.metrics import DeschedulerMetrics
from descheduler.plugins.registry import in_tree_registry
from descheduler.policy import parse_policy
from minik3s.api.resources import (
    NAMESPACES,
    NODES,
    PODDISRUPTIONBUDGETS,
    PODS,
    PRIORITYCLASSES,
    ResourceRegistry,
)
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.local import LocalClient
from minik3s.client.rest import default_user_agent
from minik3s.testing.builders import make_pod
from minik3s.utils.clock import FakeClock


def policy(*plugins: tuple[str, str, dict[str, Any] | None], evictor: dict[str, Any] | None = None,
           **top: Any) -> JsonDict:
    """A one-profile policy: (extension point, plugin, args) triples."""
    cfg = [{"name": n, "args": a} for _, n, a in plugins if a is not None]
    if evictor is not None:
        cfg.append({"name": "DefaultEvictor", "args": evictor})
    points: dict[str, Any] = {}
    for ep, n, _ in plugins:
        points.setdefault(ep, {"enabled": []})["enabled"].append(n)
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
            "profiles": [{"name": "test", "pluginConfig": cfg, "plugins": points}], **top}


class Cluster:
    def __init__(self, core: ApiCore, client: LocalClient, informers: SharedInformerFactory,
                 clock: FakeClock) -> None:
        self.core = core
        self.client = client
        self.informers = informers
        self.clock = clock
        self.registry = CollectorRegistry()
        self.metrics = DeschedulerMetrics(self.registry)
        self._classes: set[str] = set()

    async def add(self, *objs: JsonDict) -> None:
        for obj in objs:
            obj = copy.deepcopy(obj)
            status = obj.get("status")
            kind = obj.get("kind")
            prio = (obj.get("spec") or {}).pop("priority", None) if kind == "Pod" else None
            if prio is not None:  # through a PriorityClass, as the priority admission requires
                pc = f"prio-{prio}"
                if pc not in self._classes:
                    await self.client.create(PRIORITYCLASSES, {"apiVersion": "scheduling.k8s.io/v1",
                                                               "kind": "PriorityClass",
                                                               "metadata": {"name": pc}, "value": prio})
                    self._classes.add(pc)
                obj["spec"]["priorityClassName"] = pc
            res = {"Node": NODES, "Pod": PODS, "Namespace": NAMESPACES, "PriorityClass": PRIORITYCLASSES,
                   "PodDisruptionBudget": PODDISRUPTIONBUDGETS}[str(kind)]
            created = await self.client.create(res, obj)
            if status and kind in ("Node", "Pod", "PodDisruptionBudget"):
                created["status"] = status
                await self.client.update_status(res, created)

    async def synced(self) -> None:
        """Wait until the informers hold exactly what the API holds (same resourceVersions)."""
        for res in (NODES, PODS, PODDISRUPTIONBUDGETS):
            want = {(o["metadata"].get("namespace"), o["metadata"]["name"]): o["metadata"]["resourceVersion"]
                    for o in (await self.client.list(res))["items"]}
            inf = self.informers.informer(res)
            await inf.wait_for_sync()
            for _ in range(1000):
                have = {(o["metadata"].get("namespace"), o["metadata"]["name"]): o["metadata"]["resourceVersion"]
                        for o in inf.store.list()}
                if have == want:
                    break
                await asyncio.sleep(0.01)
            else:
                raise AssertionError(f"informer for {res.resource} did not catch up")

    async def descheduler(self, pol: JsonDict, *, dry_run: bool = False,
                          placement: PlacementAdvisor | None = None, usage: Any = None) -> Descheduler:
        reg = in_tree_registry()
        parsed_policy, profiles = parse_policy(pol, reg)
        d = Descheduler(parsed_policy, profiles, client=self.client, informers=self.informers, registry=reg,
                        metrics=self.metrics, placement=placement, clock=self.clock, usage=usage,
                        options=DeschedulerOptions(dry_run=dry_run, loop_avoidance=placement is not None))
        await self.synced()
        await d.wait_for_sync()
        return d

    async def run(self, pol: JsonDict, **kw: Any) -> list[str]:
        """One cycle; the evicted pods' names, sorted."""
        d = await self.descheduler(pol, **kw)
        return sorted(e.pod.split("/", 1)[1] for e in await d.run_once())

    policy = staticmethod(policy)

    @staticmethod
    def pod(name: str, node: str | None, *, cpu: str | None = None, priority: int | None = None,
            owner: str | None = "rs", namespace: str = "default", image: str = "nginx:1") -> Any:
        """A builder for a ReplicaSet-owned (by default) pod on `node`, requesting `cpu`."""
        b = make_pod(name, namespace).container(image, requests={"cpu": cpu} if cpu else None)
        if node:
            b = b.node(node)
        if owner:
            b = b.owner("ReplicaSet", owner)
        if priority is not None:
            b = b.priority(priority)
        return b

    def exposition(self) -> str:
        return generate_latest(self.registry).decode()


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    clock = FakeClock()
    store = SqliteStore(tmp_path / "state.db", fsync=False)  # thrown away after the test
    await store.start()
    core = ApiCore(store, ResourceRegistry(), clock=clock)
    core.load_crds()
    client = LocalClient(core, user_agent=default_user_agent("descheduler"))
    for ns in ("default", "kube-system", "other"):
        await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for name, value in (("system-node-critical", 2000001000), ("system-cluster-critical", 2000000000)):
        await client.create(PRIORITYCLASSES, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                              "metadata": {"name": name}, "value": value})
    informers = SharedInformerFactory(client)
    for res in (NODES, PODS, NAMESPACES, PRIORITYCLASSES, PODDISRUPTIONBUDGETS):
        informers.informer(res)
    task = asyncio.create_task(informers.run())
    try:
        yield Cluster(core, client, informers, clock)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await store.close()
