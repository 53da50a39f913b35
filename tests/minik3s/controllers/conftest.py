"""Fixtures for controller tests: a real in-process API server (storage, defaulting,
validation, graceful deletion, finalizers) with no components, and a harness that runs the
controllers under test plus a tiny stand-in kubelet.

Failures surface: a crashed controller task fails the next wait (`check_alive`) and teardown;
only the races a real client must expect are absorbed (NotFound while an object does not exist
yet or is gone, Conflict on a stale read, which is retried); any other API error or exception
fails the test."""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from minik3s.api.errors import ConflictError, NotFoundError
from minik3s.api.resources import DEPLOYMENTS, NODES, PODS
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory, object_key
from minik3s.client.workqueue import WorkQueue
from minik3s.config import ServerConfig
from minik3s.server import start, stop
from minik3s.utils.clock import rfc3339


class Harness:
    def __init__(self, rs: Any) -> None:
        self.rs = rs
        self.client = rs.client
        self.informers: SharedInformerFactory = rs.informers
        self._tasks: list[asyncio.Task[Any]] = []

    def spawn(self, coro: Awaitable[Any], name: str) -> None:
        self._tasks.append(asyncio.ensure_future(coro))
        self._tasks[-1].set_name(name)

    def start(self, *runs: Callable[[], Awaitable[Any]]) -> None:
        """Start the informer factory and the given controller run callables."""
        self.spawn(self.informers.run(), "informers")
        for i, r in enumerate(runs):
            self.spawn(r(), f"run-{i}")

    async def close(self) -> None:
        for t in self._tasks:
            t.cancel()
        results = await asyncio.gather(*self._tasks, return_exceptions=True)
        for r in results:
            if isinstance(r, Exception):
                raise r

    def check_alive(self) -> None:
        for t in self._tasks:
            if t.done() and not t.cancelled() and t.exception() is not None:
                raise AssertionError(f"task {t.get_name()} crashed") from t.exception()

    async def eventually(self, fn: Callable[[], Awaitable[Any]], *, timeout: float = 20.0,
                         what: str = "condition") -> Any:
        """Poll an async predicate until it returns a truthy value (no fixed sleeps). NotFound
        counts as "not yet"; any other error fails at once."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last: Any = None
        while True:
            self.check_alive()
            try:
                last = await fn()
            except NotFoundError as e:
                last = e
            if last and not isinstance(last, NotFoundError):
                return last
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}; last={last!r}")
            await asyncio.sleep(0.02)

    async def gone(self, res: Any, name: str, namespace: str | None = "default") -> bool:
        """Whether the object no longer exists (a predicate for `eventually`)."""
        try:
            await self.client.get(res, name, namespace)
        except NotFoundError:
            return True
        return False

    async def mutate(self, res: Any, name: str, fn: Callable[[JsonDict], None], namespace: str | None = "default"
                     ) -> JsonDict:
        """get -> fn(obj) -> update, retried on write conflicts (controllers write concurrently)."""
        for _ in range(20):
            obj = await self.client.get(res, name, namespace)
            fn(obj)
            try:
                return await self.client.update(res, obj)
            except ConflictError:
                continue
        raise AssertionError(f"{res.resource}/{name}: 20 write conflicts in a row")

    @staticmethod
    def deploy(name: str, replicas: int, *, image: str = "nginx:1", strategy: dict | None = None) -> JsonDict:
        spec: JsonDict = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                          "template": {"metadata": {"labels": {"app": name}},
                                       "spec": {"containers": [{"name": "c", "image": image}]}}}
        if strategy:
            spec["strategy"] = strategy
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
                "spec": spec}

    async def available(self, name: str, n: int, *, image: str | None = None, timeout: float = 30) -> JsonDict:
        """Wait until Deployment `name` reports n updated+available replicas (and, if given,
        every live pod runs `image`)."""

        async def check() -> JsonDict | None:
            d = await self.client.get(DEPLOYMENTS, name, "default")
            st = d.get("status") or {}
            ok = (st.get("availableReplicas") == n and st.get("updatedReplicas") == n and st.get("replicas") == n
                  and st.get("observedGeneration") == d["metadata"]["generation"])
            if ok and image is not None:
                pods = [p for p in await self.pods(selector=f"app={name}")
                        if not p["metadata"].get("deletionTimestamp")]
                ok = len(pods) == n and all(p["spec"]["containers"][0]["image"] == image for p in pods)
            return d if ok else None

        return await self.eventually(check, timeout=timeout, what=f"{name} {n} available")

    async def pods(self, namespace: str = "default", selector: str | None = None) -> list[JsonDict]:
        return (await self.client.list(PODS, namespace, label_selector=selector))["items"]

    async def add_node(self, name: str, *, ready: str = "True") -> JsonDict:
        now = rfc3339(self.rs.core.clock.now())
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "spec": {}}
        created = await self.client.create(NODES, node)
        created["status"] = {"conditions": [{"type": "Ready", "status": ready, "reason": "KubeletReady",
                                              "message": "kubelet is posting ready status",
                                              "lastHeartbeatTime": now, "lastTransitionTime": now}],
                             "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                             "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
        return await self.client.update_status(NODES, created)

    async def kubelet(self, *, node: str | None = None, ready: bool = True) -> None:
        """A stand-in kubelet: binds new pods to `node` (if given), marks them Running+Ready,
        and removes terminating pods (grace 0), so controllers see a live cluster. Driven by
        the pod informer's events through a work queue (a stale read conflicts and is retried)."""
        inf = self.informers.informer(PODS)
        queue = WorkQueue()

        def enqueue(obj: JsonDict) -> None:
            queue.add(object_key(obj))

        inf.add_handler(on_add=enqueue, on_update=lambda _old, new: enqueue(new))
        await inf.wait_for_sync()
        for pod in inf.store.list():
            enqueue(pod)
        while True:
            key = await queue.get()
            try:
                pod = inf.store.get(key)
                if pod is not None:
                    await self._kubelet_step(pod, node, ready)
                queue.forget(key)
            except ConflictError:  # acted on a stale cached copy: the newer event re-queues it
                queue.add_rate_limited(key)
            finally:
                queue.done(key)

    async def _kubelet_step(self, pod: JsonDict, node: str | None, ready: bool) -> None:
        m = pod["metadata"]
        try:
            if m.get("deletionTimestamp"):
                if not m.get("finalizers"):
                    await self.client.delete(PODS, m["name"], m["namespace"], grace_period_seconds=0)
                return
            if node and not pod["spec"].get("nodeName"):
                await self.client.bind(m["namespace"], m["name"], node)
                return
            st = pod.get("status") or {}
            if ready and st.get("phase") != "Running" and not m.get("annotations", {}).get("test/hold"):
                body = copy.deepcopy(pod)
                now = rfc3339(self.rs.core.clock.now())
                body["status"] = {"phase": "Running", "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": now},
                    {"type": "ContainersReady", "status": "True", "lastTransitionTime": now}]}
                await self.client.update_status(PODS, body)
        except NotFoundError:  # deleted meanwhile: nothing left to do
            pass


@contextlib.asynccontextmanager
async def _harness(tmp_path: Path, disable: set[str]) -> AsyncIterator[Harness]:
    cfg = ServerConfig(data_dir=tmp_path / "srv", port=0, disable=disable)
    rs = await start(cfg)
    h = Harness(rs)
    try:
        yield h
    finally:
        try:
            await h.close()
        finally:
            await stop(rs)


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    # no components at all: not even K3s' local-storage (its default `local-path` class), so a
    # claim gets a class only where a test creates one
    async with _harness(tmp_path, {"scheduler", "controllers", "kubelet", "descheduler", "local-storage"}) as h:
        yield h


@pytest.fixture
async def storage_harness(tmp_path: Path) -> AsyncIterator[Harness]:
    """The harness on a server that keeps K3s' local-storage: its default `local-path` class
    exists (the provisioner is started by the test, like any controller under test)."""
    async with _harness(tmp_path, {"scheduler", "controllers", "kubelet", "descheduler"}) as h:
        yield h
