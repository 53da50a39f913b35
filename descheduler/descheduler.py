"""The descheduling loop (layer L4), after sigs descheduler's pkg/descheduler/descheduler.go.

Data flow: informers (nodes, pods, namespaces, priority classes) -> every
`--descheduling-interval` one cycle: ready nodes matching the policy's nodeSelector (fewer than
two: the cycle is skipped, as upstream aborts) -> reset the eviction counters -> every
profile's deschedule plugins -> every profile's balance plugins -> evictions through
`pods/eviction` (`descheduler.evictions`) -> a summary log line and metrics.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

from descheduler.evictions import Eviction, EvictionLimits, PodEvictor
from descheduler.framework.interface import PlacementAdvisor, Plugin
from descheduler.framework.profile import Listers, ProfileRunner
from descheduler.metrics import DeschedulerMetrics
from descheduler.podutil import is_node_ready, meta
from descheduler.policy import DeschedulerPolicy, ParsedProfile
from minik3s.api.metrics import UsageProvider
from minik3s.api.resources import NAMESPACES, NODES, PODDISRUPTIONBUDGETS, PODS, PRIORITYCLASSES
from minik3s.api.selectors import parse_label_selector
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class DeschedulerOptions:
    interval: float = 300.0  # --descheduling-interval (5m)
    dry_run: bool = False  # --descheduler-dry-run
    loop_avoidance: bool = True  # minik3s: skip evictions whose pod would land on the same node


class Descheduler:
    def __init__(self, policy: DeschedulerPolicy, profiles: list[ParsedProfile], *, client: Client,
                 informers: SharedInformerFactory, registry: Mapping[str, type[Plugin]],
                 metrics: DeschedulerMetrics, options: DeschedulerOptions | None = None,
                 placement: PlacementAdvisor | None = None, clock: Clock | None = None,
                 usage: UsageProvider | None = None) -> None:
        self.policy = policy
        self.options = options or DeschedulerOptions()
        self.clock = clock or Clock()
        self.metrics = metrics
        self._nodes = informers.informer(NODES)
        self._pods = informers.informer(PODS)
        listers = Listers(pods=self._pods, namespaces=informers.informer(NAMESPACES),
                          priority_classes=informers.informer(PRIORITYCLASSES),
                          pdbs=informers.informer(PODDISRUPTIONBUDGETS), clock=self.clock, usage=usage)
        self._listers = listers
        self._informers = [self._nodes, self._pods, informers.informer(NAMESPACES),
                           informers.informer(PRIORITYCLASSES), informers.informer(PODDISRUPTIONBUDGETS)]
        self.evictor = PodEvictor(
            client, metrics,
            limits=EvictionLimits(per_node=policy.max_no_of_pods_to_evict_per_node,
                                  per_namespace=policy.max_no_of_pods_to_evict_per_namespace,
                                  total=policy.max_no_of_pods_to_evict_total),
            dry_run=self.options.dry_run, grace_period_seconds=policy.grace_period_seconds,
            placement=placement if self.options.loop_avoidance else None, clock=self.clock,
            failure_events=bool(policy.eviction_failure_event_notification))
        self.profiles = [ProfileRunner(p, registry, listers=listers, evictor=self.evictor, metrics=metrics)
                         for p in profiles]
        self._node_selector = parse_label_selector(policy.node_selector) if policy.node_selector else None
        self.cycles = 0
        self.last_evictions: list[Eviction] = []

    def ready_nodes(self) -> list[JsonDict]:
        out = []
        for n in sorted(self._nodes.store.list(), key=lambda n: str(meta(n).get("name"))):
            if not is_node_ready(n):
                continue
            if self._node_selector is not None and not self._node_selector.matches(meta(n).get("labels") or {}):
                continue
            out.append(n)
        return out

    async def run_once(self) -> list[Eviction]:
        """One descheduling cycle; returns its evictions (would-be evictions in dry-run mode)."""
        start = time.perf_counter()
        self.evictor.reset()
        nodes = self.ready_nodes()
        self._listers.ready_nodes = nodes
        self.cycles += 1
        if len(nodes) <= 1:
            logger.info("The cluster size is 0 or 1 meaning eviction causes service disruption or degradation. "
                        "So aborting.. ready_nodes=%d", len(nodes))
            self.last_evictions = []
            return []
        for prof in self.profiles:
            await prof.run_deschedule(nodes)
        for prof in self.profiles:
            await prof.run_balance(nodes)
        ev = list(self.evictor.cycle)
        self.last_evictions = ev
        self.metrics.loop_duration.labels("dry-run" if self.options.dry_run else "non-dry-run").observe(
            time.perf_counter() - start)
        by_plugin: dict[str, int] = {}
        by_node: dict[str, int] = {}
        by_ns: dict[str, int] = {}
        for e in ev:
            by_plugin[e.strategy] = by_plugin.get(e.strategy, 0) + 1
            by_node[e.node] = by_node.get(e.node, 0) + 1
            ns = e.pod.split("/", 1)[0]
            by_ns[ns] = by_ns.get(ns, 0) + 1
        logger.info("Number of evicted pods cycle=%d total=%d dryRun=%s byPlugin=%s byNode=%s byNamespace=%s",
                    self.cycles, len(ev), self.options.dry_run, by_plugin, by_node, by_ns)
        return ev

    async def wait_for_sync(self) -> None:
        for inf in self._informers:
            await inf.wait_for_sync()

    async def run(self) -> None:
        await self.wait_for_sync()
        logger.info("descheduler started profiles=%s interval=%ss dryRun=%s loopAvoidance=%s",
                    ",".join(p.name for p in self.profiles), self.options.interval, self.options.dry_run,
                    self.options.loop_avoidance)
        while True:
            try:
                await self.run_once()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("descheduling cycle failed cycle=%d", self.cycles)
            await self.clock.sleep(self.options.interval)
