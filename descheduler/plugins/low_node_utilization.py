"""LowNodeUtilization (balance), after sigs descheduler's nodeutilization/lownodeutilization.go.

Nodes at or below `thresholds` on every resource are underutilized (unschedulable nodes never
are); nodes above `targetThresholds` on any resource are overutilized; the rest are left
alone. Missing standard resources (cpu, memory, pods) count as 100% (also with
`useDeviationThresholds`, where both maps are distances from the mean usage and a 0 means the
whole capacity). Nothing happens
when no node is underutilized, when at most `numberOfNodes` are, when all are, or when none is
overutilized. Otherwise pods leave the most-used overutilized nodes first, while the node is
still above target and the underutilized nodes' pooled headroom up to `targetThresholds`
stays positive. Example: thresholds cpu 30, target 50; nodes at 80%, 10%, 10% of 4 cpu ->
headroom 2*(2000-400) = 3200m; 500m pods leave the 80% node until it is at 50%.

`metricsUtilization.metricsServer: true` classifies nodes by their actual usage (the
metrics.k8s.io source the composition root injects, the simulated kubelets' NodeMetrics: the
pods' usage plus the node's own) instead of their requests, and an evicted pod frees what its
PodMetrics say; a node without a sample (or without a sample of a resource in the thresholds)
fails the cycle, a pod without one ends that node's evictions (upstream actualUsageClient). Without a metrics source, or with the
Prometheus source (not served), the plugin reports that as an error every cycle and evicts nothing.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from pydantic import Field, model_validator

from descheduler.framework.interface import SUCCESS, BalancePlugin, Handle, PluginArgs, Status
from descheduler.plugins.nodeutilization import (
    MAX_PCT,
    MIN_PCT,
    STANDARD,
    EvictableNamespaces,
    EvictionLimits,
    MissingPodMetrics,
    NodeUsage,
    collect_usage,
    evict_from_sources,
    is_above,
    is_below,
    resource_names,
    set_thresholds,
    validate_thresholds,
)
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

METRICS_UNAVAILABLE = ("metricsUtilization: actual-usage metrics are not available (no metrics.k8s.io source "
                       "was given to the descheduler and minik3s serves no Prometheus source); remove "
                       "metricsUtilization to balance on pod requests")


class MetricsUtilization(PluginArgs):
    metrics_server: bool | None = Field(None, alias="metricsServer")
    source: str | None = None
    prometheus: dict[str, Any] | None = None


class LowNodeUtilizationArgs(PluginArgs):
    use_deviation_thresholds: bool = Field(False, alias="useDeviationThresholds")
    thresholds: dict[str, float] = Field(default_factory=dict)
    target_thresholds: dict[str, float] = Field(default_factory=dict, alias="targetThresholds")
    number_of_nodes: int = Field(0, ge=0, alias="numberOfNodes")
    evictable_namespaces: EvictableNamespaces | None = Field(None, alias="evictableNamespaces")
    metrics_utilization: MetricsUtilization | None = Field(None, alias="metricsUtilization")
    eviction_limits: EvictionLimits | None = Field(None, alias="evictionLimits")

    @model_validator(mode="after")
    def _check(self) -> LowNodeUtilizationArgs:
        validate_thresholds(self.thresholds, "thresholds")
        validate_thresholds(self.target_thresholds, "targetThresholds")
        if set(self.thresholds) != set(self.target_thresholds):
            raise ValueError("thresholds and targetThresholds configured different resources")
        for r, v in self.thresholds.items():
            # upstream: with useDeviationThresholds the two maps are independent distances
            if v > self.target_thresholds[r] and not self.use_deviation_thresholds:
                raise ValueError(f"thresholds' {r} percentage is greater than targetThresholds'")
        return self


class LowNodeUtilization(BalancePlugin):
    NAME: ClassVar[str] = "LowNodeUtilization"
    Args = LowNodeUtilizationArgs

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        super().__init__(args, handle)
        assert isinstance(args, LowNodeUtilizationArgs)
        self.a = args
        self.low = dict(args.thresholds)
        self.high = dict(args.target_thresholds)
        fill = MIN_PCT if args.use_deviation_thresholds else MAX_PCT  # upstream setDefaultForLNUThresholds
        for r in STANDARD:
            if r not in self.low:
                self.low[r] = fill
                self.high[r] = fill
        self.resources = resource_names(self.low)

    def classify(self, nodes: list[JsonDict], actual_nodes: dict[str, dict[str, int]] | None = None
                 ) -> tuple[list[NodeUsage], list[NodeUsage], list[NodeUsage]]:
        """(all, underutilized, overutilized)."""
        usages = collect_usage(self.handle, nodes, resources=self.resources, actual_nodes=actual_nodes)
        set_thresholds(usages, self.low, high=self.high, deviation=self.a.use_deviation_thresholds)
        low = [u for u in usages
               if is_below(u, u.low) and not (u.node.get("spec") or {}).get("unschedulable")]
        low_ids = {id(u) for u in low}
        high = [u for u in usages if id(u) not in low_ids and is_above(u, u.high)]
        return usages, low, high

    async def balance(self, nodes: list[JsonDict], *, profile: str) -> Status:
        actual = actual_nodes = None
        if self.a.metrics_utilization is not None:
            if self.a.metrics_utilization.metrics_server:
                actual, actual_nodes = self.handle.actual_usage(), self.handle.actual_node_usage()
            if actual is None or actual_nodes is None:
                return Status(METRICS_UNAVAILABLE)
        try:
            usages, low, high = self.classify(nodes, actual_nodes)
        except MissingPodMetrics as e:
            return Status(str(e))
        for u in usages:
            logger.debug("node utilization node=%s usage=%s pods=%d", u.name,
                         {r: round(u.pct(r), 1) for r in u.usage}, len(u.pods))
        logger.debug("Criteria for a node under utilization underutilized=%d overutilized=%d nodes=%d "
                    "plugin=%s", len(low), len(high), len(usages), self.NAME)
        if not low:
            logger.debug("No node is underutilized, nothing to do here, you might tune your thresholds further")
            return SUCCESS
        if len(low) <= self.a.number_of_nodes:
            logger.debug("Number of nodes underutilized is less or equal than NumberOfNodes, nothing to do here "
                        "underutilized=%d numberOfNodes=%d", len(low), self.a.number_of_nodes)
            return SUCCESS
        if len(low) == len(usages):
            logger.debug("All nodes are underutilized, nothing to do here")
            return SUCCESS
        if not high:
            logger.debug("All nodes are under target utilization, nothing to do here")
            return SUCCESS
        high.sort(key=lambda u: u.sort_key(), reverse=True)
        excluded = self.a.evictable_namespaces.exclude if self.a.evictable_namespaces else []
        limit = self.a.eviction_limits.node if self.a.eviction_limits else None
        await evict_from_sources(self.handle, high, dests=low, use_high=True, keep_going=lambda u: is_above(u, u.high),
                                 profile=profile, strategy=self.NAME, excluded_namespaces=excluded,
                                 node_limit=limit, actual=actual)
        return SUCCESS
