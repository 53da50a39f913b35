"""In-memory fake client + informers and small test plugins for the scheduler runtime tests.

FakeInformer mirrors minik3s.client.informer.Informer's surface (store, add_handler,
wait_for_sync); tests feed it with `add/update/delete`. FakeClient records status patches,
events and binds; a bind updates the pod in the pod informer (like the apiserver would).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from minik3s.api.errors import conflict
from minik3s.api.resources import EVENTS, PODS, ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.client.store import Store, object_key
from scheduler.framework.interface import (
    BindPlugin,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    QueueSortPlugin,
    ScorePlugin,
    Status,
)


class FakeInformer:
    def __init__(self, res: ResourceInfo) -> None:
        self.res = res
        self.store = Store()
        self.has_synced = True
        self._handlers: list[tuple[Any, Any, Any]] = []

    def add_handler(self, *, on_add: Any = None, on_update: Any = None, on_delete: Any = None) -> None:
        self._handlers.append((on_add, on_update, on_delete))

    async def wait_for_sync(self) -> None:
        return None

    def add(self, obj: JsonDict) -> None:
        self.store.put(object_key(obj), obj)
        for a, _, _ in self._handlers:
            if a:
                a(obj)

    def update(self, obj: JsonDict) -> None:
        old = self.store.put(object_key(obj), obj)
        if old is None:
            for a, _, _ in self._handlers:
                if a:
                    a(obj)
            return
        for _, u, _ in self._handlers:
            if u:
                u(old, obj)

    def delete(self, obj: JsonDict) -> None:
        old = self.store.remove(object_key(obj))
        for _, _, d in self._handlers:
            if d:
                d(old if old is not None else obj)


class FakeFactory:
    def __init__(self) -> None:
        self._informers: dict[str, FakeInformer] = {}

    def informer(self, res: ResourceInfo, namespace: str | None = None, **_: Any) -> FakeInformer:
        inf = self._informers.get(res.resource)
        if inf is None:
            inf = self._informers[res.resource] = FakeInformer(res)
        return inf

    async def run(self) -> None:
        return None

    async def wait_for_sync(self) -> None:
        return None


class FakeClient:
    def __init__(self, factory: FakeFactory) -> None:
        self.factory = factory
        self.patches: list[tuple[str, str, JsonDict]] = []
        self.events: list[JsonDict] = []
        self.binds: list[tuple[str, str, str]] = []
        self.fail_bind: set[str] = set()

    async def patch(self, res: ResourceInfo, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: str = "merge", subresource: str | None = None, **_: Any) -> JsonDict:
        assert res is PODS and subresource == "status" and patch_type == "strategic"
        self.patches.append((namespace or "", name, patch))
        inf = self.factory.informer(PODS)
        pod = inf.store.get(f"{namespace}/{name}")
        if pod is None:
            return {}
        new = copy.deepcopy(pod)
        st = new.setdefault("status", {})
        for k, v in patch["status"].items():
            if k == "conditions":
                conds = [c for c in st.get("conditions") or [] if c["type"] not in {x["type"] for x in v}]
                st["conditions"] = conds + v
            elif v is None:
                st.pop(k, None)
            else:
                st[k] = v
        inf.update(new)
        return new

    async def create(self, res: ResourceInfo, obj: JsonDict, namespace: str | None = None, **_: Any) -> JsonDict:
        assert res is EVENTS
        self.events.append(obj)
        return obj

    async def bind(self, namespace: str, name: str, node_name: str, *, uid: str | None = None) -> None:
        key = f"{namespace}/{name}"
        if key in self.fail_bind:
            raise conflict("pods", "", name, "pod is being deleted")
        inf = self.factory.informer(PODS)
        pod = inf.store.get(key)
        assert pod is not None, key
        if (pod.get("spec") or {}).get("nodeName"):
            raise conflict("pods", "", name)
        self.binds.append((namespace, name, node_name))
        new = copy.deepcopy(pod)
        new["spec"]["nodeName"] = node_name
        inf.update(new)


# ---- test plugins -----------------------------------------------------------------------------


class FifoSort(QueueSortPlugin):
    NAME = "FifoSort"

    def less(self, a: Any, b: Any) -> bool:
        pa, pb = a.pod_info.priority, b.pod_info.priority
        if pa != pb:
            return pa > pb
        return bool(a.timestamp < b.timestamp)


class Gate(PreEnqueuePlugin, EnqueueExtensions):
    """Gates pods with spec.schedulingGates (a tiny SchedulingGates)."""

    NAME = "Gate"

    def pre_enqueue(self, pod: JsonDict) -> Status:
        gates = (pod.get("spec") or {}).get("schedulingGates") or []
        if gates:
            return Status.unresolvable(f"waiting for scheduling gates: {[g['name'] for g in gates]}")
        return Status.success()

    def events_to_register(self) -> list[ClusterEventWithHint]:
        from scheduler.framework.interface import ActionType, ClusterEvent, EventResource
        return [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED))]


class CpuFit(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    """Rejects nodes whose allocatable cpu minus requested is below the pod's request."""

    NAME = "CpuFit"

    def pre_filter(self, state: Any, pod: Any, nodes: Sequence[Any]) -> tuple[PreFilterResult | None, Status]:
        state.write("PreFilterCpuFit", pod.requests.milli_cpu)
        return None, Status.success()

    def filter(self, state: Any, pod: Any, node: Any) -> Status:
        want = state.read("PreFilterCpuFit")
        if want and node.allocatable.milli_cpu - node.requested.milli_cpu < want:
            return Status.unschedulable("Insufficient cpu")
        return Status.success()

    def events_to_register(self) -> list[ClusterEventWithHint]:
        from scheduler.framework.interface import ActionType, ClusterEvent, EventResource
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)),
                ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE))]


class Taints(FilterPlugin, EnqueueExtensions):
    """NoSchedule taints without tolerations support: any NoSchedule taint rejects."""

    NAME = "Taints"

    def filter(self, state: Any, pod: Any, node: Any) -> Status:
        for t in node.taints:
            if t.get("effect") == "NoSchedule":
                tols = (pod.spec.get("tolerations") or [])
                if not any(tol.get("key") == t["key"] for tol in tols):
                    return Status.unresolvable(
                        f"node(s) had untolerated taint {{{t['key']}: {t.get('value', '')}}}")
        return Status.success()

    def events_to_register(self) -> list[ClusterEventWithHint]:
        from scheduler.framework.interface import ActionType, ClusterEvent, EventResource
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT))]


class LeastPods(ScorePlugin):
    """Score = 100 - 10 x pods on the node (floors at 0)."""

    NAME = "LeastPods"

    def score(self, state: Any, pod: Any, node: Any) -> tuple[int, Status]:
        return max(0, 100 - 10 * len(node.pods)), Status.success()


class NameScore(ScorePlugin):
    """Raw score = the trailing number of the node name; normalized to 0..100 by max."""

    NAME = "NameScore"

    def score(self, state: Any, pod: Any, node: Any) -> tuple[int, Status]:
        digits = "".join(c for c in node.name if c.isdigit())
        return int(digits or 0), Status.success()

    def normalize_score(self, state: Any, pod: Any, scores: list[Any]) -> Status:
        top = max((s.score for s in scores), default=0) or 1
        for s in scores:
            s.score = s.score * 100 // top
        return Status.success()


class ClientBinder(BindPlugin):
    NAME = "ClientBinder"

    async def bind(self, state: Any, pod: Any, node_name: str) -> Status:
        assert self.handle is not None
        try:
            await self.handle.client.bind(pod.namespace, pod.name, node_name, uid=pod.uid)
        except Exception as e:
            return Status.as_error(e)
        return Status.success()


def plugin_registry() -> dict[str, type]:
    return {p.NAME: p for p in (FifoSort, Gate, CpuFit, Taints, LeastPods, NameScore, ClientBinder)}


TEST_PROFILE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"enabled": [
            {"name": "FifoSort"}, {"name": "Gate"}, {"name": "CpuFit"}, {"name": "Taints"},
            {"name": "LeastPods", "weight": 1}, {"name": "ClientBinder"}],
            "disabled": [{"name": "*"}]}},
    }],
}


@pytest.fixture
def factory() -> FakeFactory:
    return FakeFactory()


@pytest.fixture
def fake_client(factory: FakeFactory) -> FakeClient:
    return FakeClient(factory)


@pytest.fixture
def make_scheduler(factory: FakeFactory, fake_client: FakeClient) -> Callable[..., Any]:
    from minik3s.utils.clock import FakeClock
    from scheduler.config import parse_config
    from scheduler.scheduler import Scheduler

    def make(cfg: JsonDict | None = None, *, registry: dict[str, type] | None = None, seed: int = 1,
             clock: Any = None) -> Any:
        import random
        config = parse_config(copy.deepcopy(cfg or TEST_PROFILE))
        return Scheduler(config, client=fake_client, informers=factory, clock=clock or FakeClock(),
                         rng=random.Random(seed), registry=registry or plugin_registry())

    return make


@pytest.fixture
def base_config() -> JsonDict:
    """A fresh copy of the test profile configuration."""
    return copy.deepcopy(TEST_PROFILE)


@pytest.fixture
def base_registry() -> dict[str, type]:
    return plugin_registry()
