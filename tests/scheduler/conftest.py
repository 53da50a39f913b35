"""The scheduler runtime tests' environment: the real in-process API, and small test plugins.

`sched_env` is a real `Scheduler` on the shared `real_api` (tests/conftest.py: ApiCore +
SqliteStore + LocalClient + FakeClock, recording the calls): tests create nodes and pods through
the API (`await env.add(...)`, which waits until the scheduler's informers hold them) and assert
on what the API holds (the pod's spec.nodeName and PodScheduled condition, stored Events) and on
the recorded calls (`env.binds()`, `env.status_patches(name)`). The plugins below (FifoSort,
CpuFit, ...) are small plugins the tests configure, run by the real framework runtime.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from minik3s.api.resources import EVENTS, NODES, PODS, PRIORITYCLASSES
from minik3s.api.types import JsonDict
from minik3s.utils.clock import Clock
from scheduler.config import parse_config
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
from scheduler.scheduler import Scheduler

DEFAULT_IMAGE = "registry.k8s.io/pause:3.10"


class SchedEnv:
    """Objects in and facts out of the real API, for a scheduler under test."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self._classes: set[int] = set()

    async def _priority_class(self, value: int) -> str:
        name = f"test-priority-{value}"
        if value not in self._classes:
            self._classes.add(value)
            await self.api.create(PRIORITYCLASSES, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                                    "metadata": {"name": name}, "value": value})
        return name

    async def create(self, obj: JsonDict) -> JsonDict:
        """Create a builder's node or pod as a user would post it; returns what the API stored.

        For pods: a container is added when the builder made none (the API requires one), a
        `priority(n)` becomes a PriorityClass of that value (the Priority admission computes
        spec.priority from it, and refuses a bare integer), and a builder's status (e.g.
        nominatedNodeName, reset by the API on create) is written through pods/status after.
        """
        obj = copy.deepcopy(obj)
        if obj["kind"] == "Node":
            return dict(await self.api.create(NODES, obj))
        spec = obj["spec"]
        if not spec.get("containers"):
            spec["containers"] = [{"name": "c0", "image": DEFAULT_IMAGE}]
        if "priority" in spec:
            spec["priorityClassName"] = await self._priority_class(int(spec.pop("priority")))
        obj["metadata"].pop("uid", None)
        obj["metadata"].pop("creationTimestamp", None)
        status = {k: v for k, v in (obj.pop("status", None) or {}).items() if k != "phase"}
        out = dict(await self.api.create(PODS, obj))
        if status:
            out = dict(await self.api.patch(PODS, out["metadata"]["name"], {"status": status},
                                            out["metadata"]["namespace"], patch_type="strategic",
                                            subresource="status"))
        return out

    async def add(self, *objs: JsonDict) -> list[JsonDict]:
        """Create the objects in order and wait until every informer holds what the API holds."""
        out = [await self.create(o) for o in objs]
        await self.api.settle()
        return out

    async def patch_pod(self, name: str, patch: JsonDict, *, subresource: str | None = None) -> JsonDict:
        out = dict(await self.api.patch(PODS, name, patch, "default", patch_type="strategic",
                                        subresource=subresource))
        await self.api.settle()
        return out

    def pod(self, name: str, namespace: str = "default") -> JsonDict:
        pod = self.api.obj(PODS, name, namespace)
        assert pod is not None, f"pod {namespace}/{name} is not in the API"
        return dict(pod)

    def uid(self, name: str, namespace: str = "default") -> str:
        return str(self.pod(name, namespace)["metadata"]["uid"])

    def node_name(self, name: str) -> str | None:
        return self.pod(name).get("spec", {}).get("nodeName")

    def scheduled_condition(self, name: str) -> JsonDict:
        """The pod's PodScheduled condition as the API holds it."""
        conds = [c for c in self.pod(name).get("status", {}).get("conditions") or [] if c["type"] == "PodScheduled"]
        assert len(conds) == 1, conds
        return dict(conds[0])

    def binds(self) -> list[tuple[str, str, str]]:
        """(namespace, name, node) of every bind call that reached the API, in order."""
        out = []
        for c in self.api.calls:
            if c[0] == "bind":
                ns, name = c[2].split("/", 1)
                out.append((ns, name, c[3]))
        return out

    def status_patches(self, name: str, namespace: str = "default") -> int:
        return sum(1 for c in self.api.calls if c == ("patch", "pods", f"{namespace}/{name}", "status"))

    def events(self, name: str | None = None, reason: str | None = None) -> list[JsonDict]:
        """Events stored in the API, about pod `name` and with `reason` if given, oldest first."""
        evs = [e for e in self.api.objects(EVENTS).values()
               if (name is None or e["involvedObject"]["name"] == name)
               and (reason is None or e["reason"] == reason)]
        return sorted(evs, key=lambda e: int(e["metadata"]["resourceVersion"]))


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
def env(real_api: Any) -> SchedEnv:
    return SchedEnv(real_api)


@pytest.fixture
def make_scheduler(real_api: Any) -> Callable[..., Scheduler]:
    """Build a real Scheduler on the real API; it shares the API's fake clock unless given one."""

    def make(cfg: JsonDict | None = None, *, registry: dict[str, type] | None = None, seed: int = 1,
             clock: Clock | None = None) -> Scheduler:
        config = parse_config(copy.deepcopy(cfg or TEST_PROFILE))
        return Scheduler(config, client=real_api, informers=real_api, clock=clock or real_api.clock,
                         rng=random.Random(seed), registry=registry or plugin_registry())

    return make


@pytest.fixture
def base_config() -> JsonDict:
    """A fresh copy of the test profile configuration."""
    return copy.deepcopy(TEST_PROFILE)


@pytest.fixture
def base_registry() -> dict[str, type]:
    return plugin_registry()
