"""Descheduler plugin contracts (layer L4), after sigs descheduler's pkg/framework/types.

Extension points (upstream names):
- `deschedule(nodes)`: a strategy looking at pods one node at a time (RemoveFailedPods, ...);
- `balance(nodes)`: a strategy looking across nodes (LowNodeUtilization, RemoveDuplicates, ...);
- `filter(pod)` / `pre_eviction_filter(pod)`: evictor plugins (DefaultEvictor) deciding whether
  a pod may be evicted at all; `filter` runs while a strategy picks candidates,
  `pre_eviction_filter` right before the eviction (upstream puts `nodeFit` there).

A strategy sees the cluster through the `Handle` (informer-backed listers, the evictor) and
evicts only through `handle.evict(pod, opts)`, which enforces the policy's limits and returns
an `EvictResult` (a limit result tells the strategy to stop that node / namespace / cycle).

Loop avoidance asks a `PlacementAdvisor` (implemented by the scheduler, injected by the
composition root) where a pod would go if it were evicted now.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict

from minik3s.api.types import JsonDict


class PluginArgs(BaseModel):
    """Base of every plugin's args model: upstream's JSON names, unknown fields rejected."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")


@dataclass(slots=True, frozen=True)
class Status:
    """A plugin's result: `error` empty means success (upstream frameworktypes.Status.Err)."""

    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


SUCCESS = Status()


class EvictResult(enum.Enum):
    EVICTED = "evicted"  # or would have been, in dry-run mode
    SKIPPED = "skipped"  # this pod only: PDB (429), gone, loop avoidance, pre-eviction filter
    NODE_LIMIT = "node-limit"  # maxNoOfPodsToEvictPerNode reached for the pod's node
    NAMESPACE_LIMIT = "namespace-limit"
    TOTAL_LIMIT = "total-limit"  # maxNoOfPodsToEvictTotal: stop the cycle


@dataclass(slots=True, frozen=True)
class EvictOptions:
    """Who asks: the profile and plugin (for the event, the metrics and the log) and why.
    `relocates`: the strategy evicts to move the pod elsewhere (placement strategies); False for
    lifecycle strategies (PodLifeTime, RemoveFailedPods, RemovePodsHavingTooManyRestarts), where
    coming back to the same node is fine and loop avoidance only keeps pods that fit nowhere."""

    profile: str
    strategy: str
    reason: str = ""
    relocates: bool = True


class PlacementResult(Protocol):
    """`feasible`: nodes the pod would pass the scheduler's filters on (its own usage removed
    from its current node); `best`: the feasible nodes with the top score."""

    @property
    def feasible(self) -> Sequence[str]: ...

    @property
    def best(self) -> Sequence[str]: ...


class PlacementAdvisor(Protocol):
    def where_would_it_go(self, pod: JsonDict) -> PlacementResult | None:
        """Simulate scheduling `pod` as if it were evicted now, without side effects; None when
        the advisor cannot tell (the pod belongs to a scheduler profile it does not run)."""
        ...


class Handle(Protocol):
    """What plugins see (upstream frameworktypes.Handle)."""

    def pods_on_node(self, node_name: str, *, include_terminated: bool = False) -> list[JsonDict]:
        """Pods whose spec.nodeName is `node_name` (informer cache, read-only); Succeeded and
        Failed pods only with `include_terminated` (upstream ListAllPodsOnANode)."""
        ...

    def all_pods(self) -> list[JsonDict]: ...

    def actual_usage(self) -> dict[tuple[str, str], dict[str, int]] | None:
        """(namespace, pod) -> actual usage {"cpu": milli, "memory": bytes} from the injected
        metrics source (metrics.k8s.io's), or None when there is none."""
        ...

    def actual_node_usage(self) -> dict[str, dict[str, int]] | None:
        """node name -> actual usage {"cpu": milli, "memory": bytes} from the injected metrics
        source (metrics.k8s.io's NodeMetrics), or None when there is none."""
        ...

    def ready_nodes(self) -> list[JsonDict]:
        """Ready nodes matching the policy's nodeSelector (the nodes of this cycle)."""
        ...

    def namespace(self, name: str) -> JsonDict | None: ...

    def priority_class(self, name: str) -> JsonDict | None: ...

    def pod_has_pdb(self, pod: JsonDict) -> bool:
        """Some PodDisruptionBudget in the pod's namespace selects it."""
        ...

    def now(self) -> Any:
        """The injected clock's current UTC datetime."""
        ...

    def filter(self, pod: JsonDict) -> bool:
        """Every enabled `filter` plugin admits the pod (upstream Evictor().Filter)."""
        ...

    def pre_eviction_filter(self, pod: JsonDict) -> bool: ...

    def evict(self, pod: JsonDict, opts: EvictOptions) -> Any:
        """Awaitable[EvictResult]: evict through `pods/eviction` within the policy's limits."""
        ...

    def node_limit_reached(self, node_name: str) -> bool: ...

    def total_limit_reached(self) -> bool: ...


class Plugin:
    """Base of every descheduler plugin: upstream's `NAME`, an optional `Args` model."""

    NAME: ClassVar[str] = ""
    Args: ClassVar[type[PluginArgs] | None] = None

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        self.args = args
        self.handle = handle

    def name(self) -> str:
        return self.NAME


class DeschedulePlugin(Plugin):
    async def deschedule(self, nodes: list[JsonDict], *, profile: str) -> Status:
        raise NotImplementedError


class BalancePlugin(Plugin):
    async def balance(self, nodes: list[JsonDict], *, profile: str) -> Status:
        raise NotImplementedError


class EvictorPlugin(Plugin):
    def filter(self, pod: JsonDict) -> bool:
        raise NotImplementedError

    def pre_eviction_filter(self, pod: JsonDict) -> bool:
        raise NotImplementedError


EXTENSION_POINTS = ("presort", "sort", "deschedule", "balance", "filter", "preEvictionFilter")
