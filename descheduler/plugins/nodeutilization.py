"""What LowNodeUtilization and HighNodeUtilization share (upstream nodeutilization.go).

Usage is the sum of pod *requests* (not real usage) as a percentage of allocatable, per
resource: cpu, memory, pods (pod count / allocatable pods) and any listed extended resource.
Worked example: a 4-cpu node running pods requesting 1500m + 500m -> cpu 50%.

`evict_from_sources` walks the source nodes in the given order, each node's evictable pods
lowest priority first (BestEffort before Burstable before Guaranteed), and evicts while
`keep_going(node usage)` holds and the destination nodes' pooled headroom stays positive for
every resource; each eviction moves the pod's requests out of both.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, field_validator

from descheduler import podutil
from descheduler.framework.evict_loop import evict_until_limit
from descheduler.framework.interface import EvictOptions, Handle, PluginArgs
from minik3s.api.helpers.resources import CPU, MEMORY, PODS, node_allocatable, pod_requests
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

STANDARD = (CPU, MEMORY, PODS)
MAX_PCT = 100.0
MIN_PCT = 0.0


class EvictableNamespaces(PluginArgs):
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)

    @field_validator("include")
    @classmethod
    def _no_include(cls, v: list[str]) -> list[str]:
        if v:
            raise ValueError("only Exclude namespaces can be set, inclusion is not supported")
        return v


class EvictionLimits(PluginArgs):
    node: int | None = Field(None, ge=0)


def validate_thresholds(t: dict[str, float], what: str) -> dict[str, float]:
    if not t:
        raise ValueError(f"no resource threshold is configured ({what})")
    for r, v in t.items():
        if not 0 <= v <= 100:
            raise ValueError(f"{r} threshold not in [0, 100] range")
    return t


@dataclass(slots=True)
class NodeUsage:
    node: JsonDict
    name: str
    allocatable: dict[str, int]
    usage: dict[str, int]
    pods: list[JsonDict]
    low: dict[str, float] = field(default_factory=dict)   # percent thresholds
    high: dict[str, float] = field(default_factory=dict)

    def pct(self, r: str) -> float:
        cap = self.allocatable.get(r, 0)
        return 100.0 * self.usage.get(r, 0) / cap if cap else 0.0

    def sort_key(self) -> int:
        """Upstream sortNodesByUsage: the raw usages added up (memory bytes + cpu millicores +
        pods + extended units), so memory dominates."""
        return sum(self.usage.values())


def resource_names(thresholds: dict[str, float]) -> list[str]:
    return list(STANDARD) + [r for r in thresholds if r not in STANDARD]


def collect_usage(handle: Handle, nodes: list[JsonDict], *, resources: list[str],
                  actual_nodes: dict[str, dict[str, int]] | None = None) -> list[NodeUsage]:
    """Per node: the pods' requests, or with `actual_nodes` (metricsUtilization) the node's
    measured usage (upstream actualUsageClient: the node's NodeMetrics, its pods counted as
    pods). A node without a sample, or without one of `resources` in it (NodeMetrics carry cpu
    and memory), raises MissingPodMetrics, as upstream fails the plugin's cycle."""
    out = []
    for n in nodes:
        name = str(podutil.meta(n).get("name"))
        pods = handle.pods_on_node(name)
        alloc = node_allocatable(n)
        if actual_nodes is None:
            usage = podutil.node_usage(n, pods, resources=resources)
        else:
            measured = actual_nodes.get(name)
            if measured is None:
                raise MissingPodMetrics(f'unable to find node "{name}" in the collected metrics')
            lacking = [r for r in resources if r != PODS and r not in measured]
            if lacking:
                raise MissingPodMetrics(f'unable to find "{lacking[0]}" resource for collected "{name}" node metric')
            usage = {r: len(pods) if r == PODS else measured[r] for r in resources}
        out.append(NodeUsage(n, name, alloc, usage, pods))
    return out


class MissingPodMetrics(Exception):
    pass


def pod_actual_usage(pod: JsonDict, actual: dict[tuple[str, str], dict[str, int]]) -> dict[str, int]:
    m = podutil.meta(pod)
    u = actual.get((str(m.get("namespace") or ""), str(m.get("name") or "")))
    if u is None:
        raise MissingPodMetrics(f'unable to get podmetrics for "{m.get("namespace")}/{m.get("name")}"')
    return u


def set_thresholds(usages: list[NodeUsage], low: dict[str, float], *, high: dict[str, float],
                   deviation: bool) -> None:
    """Absolute thresholds, or with `deviation` mean -/+ the given percentages (clamped to 0..100);
    a deviation of 0 (also what a missing standard resource gets) means the whole capacity, so that
    resource constrains neither side. Example (deviation): node cpu usage 20%, 40%, 60% -> mean 40;
    thresholds cpu 10 -> below 30%."""
    if not deviation:
        for u in usages:
            u.low, u.high = dict(low), dict(high)
        return
    n = len(usages) or 1
    mean = {r: sum(u.pct(r) for u in usages) / n for r in low}
    lo = {r: MAX_PCT if low[r] == MIN_PCT else max(MIN_PCT, mean[r] - low[r]) for r in low}
    hi = {r: MAX_PCT if low[r] == MIN_PCT else min(MAX_PCT, mean[r] + high[r]) for r in high}
    for u in usages:
        u.low, u.high = dict(lo), dict(hi)


def is_below(u: NodeUsage, thresholds: dict[str, float]) -> bool:
    """Every resource at or below its threshold (upstream isNodeBelowThreshold)."""
    return all(u.pct(r) <= t for r, t in thresholds.items())


def is_above(u: NodeUsage, thresholds: dict[str, float]) -> bool:
    """Any resource above its threshold (upstream isNodeAboveTargetUtilization)."""
    return any(u.pct(r) > t for r, t in thresholds.items())


def headroom(dests: list[NodeUsage], *, use_high: bool) -> dict[str, int]:
    """Σ over destination nodes of (threshold% × allocatable − usage), per resource.
    Example: two 4-cpu nodes at 1 cpu, target 50% -> (2000-1000)*2 = 2000m of cpu headroom."""
    total: dict[str, int] = {}
    for d in dests:
        for r in d.usage:
            pct = d.high.get(r, MAX_PCT) if use_high else MAX_PCT
            total[r] = total.get(r, 0) + int(d.allocatable.get(r, 0) * pct / 100.0) - d.usage.get(r, 0)
    return total


async def evict_from_sources(
    handle: Handle, sources: list[NodeUsage], *, dests: list[NodeUsage], use_high: bool, keep_going: Callable[[NodeUsage], bool], profile: str, strategy: str,
    excluded_namespaces: list[str], node_limit: int | None, pod_filter: Callable[[JsonDict], bool] | None = None,
    actual: dict[tuple[str, str], dict[str, int]] | None = None,
) -> None:
    """`actual`: measured usage per pod (metricsUtilization); an evicted pod then frees what it uses."""
    available = headroom(dests, use_high=use_high)
    dest_nodes = [d.node for d in dests]
    opts = EvictOptions(profile, strategy)
    for src in sources:
        if not all(v > 0 for v in available.values()):
            break
        pods = [p for p in src.pods
                if podutil.meta(p).get("namespace") not in excluded_namespaces
                and handle.filter(p)
                and (pod_filter is None or pod_filter(p))
                and any(podutil.pod_tolerates_all_taints(p, n) for n in dest_nodes)]
        logger.debug("evicting pods from node node=%s evictable=%d usage=%s", src.name, len(pods), src.usage)
        drain = _Drain(src, available, keep_going=keep_going, node_limit=node_limit, actual=actual)
        if await evict_until_limit(handle, [drain.take(podutil.sort_by_priority_low_first(pods))], opts,
                                   on_evicted=drain.evicted):
            return


@dataclass(slots=True)
class _Drain:
    """One source node being drained: which pods still go (`take`: while the node is over its
    target, the destinations have room and the plugin's per-node limit allows) and what an
    eviction frees (`evicted`: the pod's requests, or its measured usage, leave the source
    and the destinations' headroom)."""

    src: NodeUsage
    available: dict[str, int]
    keep_going: Callable[[NodeUsage], bool]
    node_limit: int | None
    actual: dict[tuple[str, str], dict[str, int]] | None
    evicted_here: int = 0

    def take(self, pods: list[JsonDict]) -> Iterator[JsonDict]:
        for pod in pods:
            if not self.keep_going(self.src) or not all(v > 0 for v in self.available.values()):
                return
            if self.node_limit is not None and self.evicted_here >= self.node_limit:
                return
            if self.actual is not None and self._key(pod) not in self.actual:
                # upstream reads the pod's PodMetrics before evicting it and stops this node's
                # evictions when it cannot
                logger.info("unable to get podmetrics pod=%s/%s", *self._key(pod))
                return
            yield pod

    @staticmethod
    def _key(pod: JsonDict) -> tuple[str, str]:
        m = podutil.meta(pod)
        return str(m.get("namespace") or ""), str(m.get("name") or "")

    def evicted(self, pod: JsonDict) -> None:
        self.evicted_here += 1
        req = pod_requests(pod) if self.actual is None else self.actual.get(self._key(pod), {})
        for r in self.src.usage:
            amount = 1 if r == PODS else req.get(r, 0)
            self.src.usage[r] -= amount
            if r in self.available:
                self.available[r] -= amount


def thresholds_args_repr(t: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(t.items()))
