"""HighNodeUtilization (balance), after sigs descheduler's nodeutilization/highnodeutilization.go:
bin-packing. Nodes at or below `thresholds` on every resource (missing standard resources:
100%) are drained, least used first, onto the other schedulable nodes while their pooled
headroom (100% of allocatable minus requests) stays positive. Nothing happens when no node is
underutilized, at most `numberOfNodes` are, all are, or no other node can take pods. Pair it
with the scheduler's `MostAllocated` scoring, or evicted pods spread out again.
`evictionModes: [OnlyThresholdingResources]` evicts only pods requesting a thresholded resource.
"""

from __future__ import annotations

import logging
from typing import ClassVar, Literal

from pydantic import Field, field_validator

from descheduler.framework.interface import SUCCESS, BalancePlugin, Handle, PluginArgs, Status
from descheduler.plugins.nodeutilization import (
    MAX_PCT,
    STANDARD,
    EvictableNamespaces,
    collect_usage,
    evict_from_sources,
    is_below,
    resource_names,
    set_thresholds,
    validate_thresholds,
)
from minik3s.api.helpers.resources import PODS, pod_requests
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)


class HighNodeUtilizationArgs(PluginArgs):
    thresholds: dict[str, float] = Field(default_factory=dict)
    number_of_nodes: int = Field(0, ge=0, alias="numberOfNodes")
    evictable_namespaces: EvictableNamespaces | None = Field(None, alias="evictableNamespaces")
    eviction_modes: list[Literal["OnlyThresholdingResources"]] = Field(default_factory=list, alias="evictionModes")

    @field_validator("thresholds")
    @classmethod
    def _t(cls, v: dict[str, float]) -> dict[str, float]:
        return validate_thresholds(v, "thresholds")


class HighNodeUtilization(BalancePlugin):
    NAME: ClassVar[str] = "HighNodeUtilization"
    Args = HighNodeUtilizationArgs

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        super().__init__(args, handle)
        assert isinstance(args, HighNodeUtilizationArgs)
        self.a = args
        self.low = dict(args.thresholds)
        for r in STANDARD:
            self.low.setdefault(r, MAX_PCT)
        self.high = {r: MAX_PCT for r in self.low}
        self.resources = resource_names(self.low)

    def _requests_thresholded(self, pod: JsonDict) -> bool:
        req = pod_requests(pod)
        return any(req.get(r, 0) > 0 for r in self.a.thresholds if r != PODS)

    async def balance(self, nodes: list[JsonDict], *, profile: str) -> Status:
        usages = collect_usage(self.handle, nodes, resources=self.resources)
        set_thresholds(usages, self.low, high=self.high, deviation=False)
        sources = [u for u in usages if is_below(u, u.low)]
        dests = [u for u in usages if not is_below(u, u.low) and not (u.node.get("spec") or {}).get("unschedulable")]
        logger.debug("Criteria for a node below target utilization underutilized=%d appropriately=%d plugin=%s",
                    len(sources), len(dests), self.NAME)
        if not sources:
            logger.debug("No node is underutilized, nothing to do here, you might tune your thresholds further")
            return SUCCESS
        if len(sources) <= self.a.number_of_nodes:
            logger.debug("Number of nodes underutilized is less or equal than NumberOfNodes, nothing to do here")
            return SUCCESS
        if len(sources) == len(usages):
            logger.debug("All nodes are underutilized, nothing to do here")
            return SUCCESS
        if not dests:
            logger.debug("No node is available to schedule the pods, nothing to do here")
            return SUCCESS
        sources.sort(key=lambda u: u.sort_key())
        excluded = self.a.evictable_namespaces.exclude if self.a.evictable_namespaces else []
        only = "OnlyThresholdingResources" in self.a.eviction_modes
        await evict_from_sources(self.handle, sources, dests=dests, use_high=False, keep_going=lambda u: True,
                                 profile=profile, strategy=self.NAME, excluded_namespaces=excluded,
                                 node_limit=None, pod_filter=self._requests_thresholded if only else None)
        return SUCCESS
