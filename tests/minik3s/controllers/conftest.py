"""Fixtures for controller tests: a real in-process API server (storage, defaulting,
validation, graceful deletion, finalizers) with no components, and a harness that runs the
controllers under test plus a tiny stand-in kubelet."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from minik3s.api.errors import ApiError, NotFoundError
from minik3s.api.resources import DEPLOYMENTS, NODES, PODS
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
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
        """Poll an async predicate until it returns a truthy value (no fixed sleeps)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last: Any = None
        while True:
            self.check_alive()
            try:
                last = await fn()
            except ApiError as e:
                last = e
            if last and not isinstance(last, ApiError):
                return last
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}; last={last!r}")
            await asyncio.sleep(0.02)

    async def mutate(self, res: Any, name: str, fn: Callable[[JsonDict], None], namespace: str | None = "default"
                     ) -> JsonDict:
        """get -> fn(obj) -> update, retried on write conflicts (controllers write concurrently)."""
        for attempt in range(20):
            obj = await self.client.get(res, name, namespace)
            fn(obj)
            try:
                return await self.client.update(res, obj)
            except Exception:  # ConflictError (or the store's revision mismatch surfacing raw)
                if attempt == 19:
                    raise
                await asyncio.sleep(0.01)
        raise AssertionError("unreachable")

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
        and removes terminating pods (grace 0), so controllers see a live cluster."""
        inf = self.informers.informer(PODS)
        await inf.wait_for_sync()
        while True:
            for pod in inf.store.list():
                await self._kubelet_step(pod, node, ready)
            await asyncio.sleep(0.01)

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
        except (NotFoundError, ApiError):
            pass
        except Exception as e:  # the store's raw RevisionMismatchError (a write race) — retried next pass
            if type(e).__name__ != "RevisionMismatchError":
                raise


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    cfg = ServerConfig(data_dir=tmp_path / "srv", port=0, disable={"scheduler", "controllers", "kubelet", "descheduler"})
    rs = await start(cfg)
    h = Harness(rs)
    try:
        yield h
    finally:
        try:
            await h.close()
        finally:
            await stop(rs)
