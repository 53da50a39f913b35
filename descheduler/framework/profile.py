"""One profile at run time (upstream pkg/framework/profile): its plugin instances per extension
point and the `Handle` they share. The handle reads the informer caches (pods indexed by
spec.nodeName, namespaces, priority classes, PDBs) and evicts through the shared `PodEvictor`,
running the profile's preEvictionFilter plugins first (upstream's Evictor().Evict)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from descheduler.evictions import PodEvictor
from descheduler.framework.interface import (
    BalancePlugin,
    DeschedulePlugin,
    EvictOptions,
    EvictorPlugin,
    EvictResult,
    Plugin,
    Status,
)
from descheduler.metrics import DeschedulerMetrics
from descheduler.podutil import key, node_name
from descheduler.policy import ParsedProfile
from minik3s.api.metrics import UsageProvider
from minik3s.api.selectors import label_selector_from_dict
from minik3s.api.types import JsonDict
from minik3s.client.informer import Informer

logger = logging.getLogger(__name__)

NODE_INDEX = "descheduler:spec.nodeName"


def _node_index(pod: JsonDict) -> list[str]:
    n = node_name(pod)
    return [n] if n else []


class Listers:
    """Read-only views of the informer caches the plugins need."""

    def __init__(self, *, pods: Informer, namespaces: Informer, priority_classes: Informer, pdbs: Informer,
                 clock: Any, usage: UsageProvider | None = None) -> None:
        self._usage = usage
        self._pods = pods
        self._pods.add_index(NODE_INDEX, _node_index)
        self._namespaces = namespaces
        self._pcs = priority_classes
        self._pdbs = pdbs
        self.clock = clock
        self.ready_nodes: list[JsonDict] = []

    def pods_on_node(self, node: str, *, include_terminated: bool = False) -> list[JsonDict]:
        pods = self._pods.by_index(NODE_INDEX, node)
        if not include_terminated:
            pods = [p for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        return sorted(pods, key=key)

    def all_pods(self) -> list[JsonDict]:
        return self._pods.store.list()

    def actual_usage(self) -> dict[tuple[str, str], dict[str, int]] | None:
        if self._usage is None:
            return None
        return {(u.namespace, u.name): {"cpu": u.cpu_milli, "memory": u.memory_bytes}
                for u in self._usage.pod_usage()}

    def actual_node_usage(self) -> dict[str, dict[str, int]] | None:
        if self._usage is None:
            return None
        return {u.name: {"cpu": u.cpu_milli, "memory": u.memory_bytes} for u in self._usage.node_usage()}

    def namespace(self, name: str) -> JsonDict | None:
        return self._namespaces.store.get(name)

    def priority_class(self, name: str) -> JsonDict | None:
        return self._pcs.store.get(name)

    def pod_has_pdb(self, pod: JsonDict) -> bool:
        m = pod.get("metadata") or {}
        for pdb in self._pdbs.store.list():
            if (pdb.get("metadata") or {}).get("namespace") != m.get("namespace"):
                continue
            try:
                sel = label_selector_from_dict((pdb.get("spec") or {}).get("selector"))
            except ValueError:
                continue
            if not sel.matches_nothing and sel.matches(m.get("labels") or {}):
                return True
        return False


class ProfileHandle:
    def __init__(self, profile: str, listers: Listers, *, evictor: PodEvictor) -> None:
        self.profile = profile
        self._l = listers
        self._evictor = evictor
        self.filters: list[EvictorPlugin] = []
        self.pre_eviction_filters: list[EvictorPlugin] = []

    @property
    def evictor(self) -> PodEvictor:
        return self._evictor

    def pods_on_node(self, node_name: str, *, include_terminated: bool = False) -> list[JsonDict]:
        return self._l.pods_on_node(node_name, include_terminated=include_terminated)

    def all_pods(self) -> list[JsonDict]:
        return self._l.all_pods()

    def actual_usage(self) -> dict[tuple[str, str], dict[str, int]] | None:
        return self._l.actual_usage()

    def actual_node_usage(self) -> dict[str, dict[str, int]] | None:
        return self._l.actual_node_usage()

    def ready_nodes(self) -> list[JsonDict]:
        return self._l.ready_nodes

    def namespace(self, name: str) -> JsonDict | None:
        return self._l.namespace(name)

    def priority_class(self, name: str) -> JsonDict | None:
        return self._l.priority_class(name)

    def pod_has_pdb(self, pod: JsonDict) -> bool:
        return self._l.pod_has_pdb(pod)

    def now(self) -> Any:
        return self._l.clock.now()

    def filter(self, pod: JsonDict) -> bool:
        return all(f.filter(pod) for f in self.filters)

    def pre_eviction_filter(self, pod: JsonDict) -> bool:
        return all(f.pre_eviction_filter(pod) for f in self.pre_eviction_filters)

    async def evict(self, pod: JsonDict, opts: EvictOptions) -> EvictResult:
        if not self.pre_eviction_filter(pod):
            return EvictResult.SKIPPED
        return await self._evictor.evict(pod, opts)

    def node_limit_reached(self, node_name: str) -> bool:
        return self._evictor.node_limit_reached(node_name)

    def total_limit_reached(self) -> bool:
        return self._evictor.total_limit_reached()


class ProfileRunner:
    def __init__(self, parsed: ParsedProfile, registry: Mapping[str, type[Plugin]], *, listers: Listers,
                 evictor: PodEvictor, metrics: DeschedulerMetrics) -> None:
        self.name = parsed.name
        self.handle = ProfileHandle(parsed.name, listers, evictor=evictor)
        self._metrics = metrics
        instances: dict[str, Plugin] = {}
        for names in parsed.enabled.values():
            for n in names:
                if n not in instances:
                    instances[n] = registry[n](parsed.args.get(n), self.handle)
        self.deschedule: list[DeschedulePlugin] = [
            p for n in parsed.enabled["deschedule"] if isinstance(p := instances[n], DeschedulePlugin)]
        self.balance: list[BalancePlugin] = [
            p for n in parsed.enabled["balance"] if isinstance(p := instances[n], BalancePlugin)]
        self.handle.filters = [p for n in parsed.enabled["filter"] if isinstance(p := instances[n], EvictorPlugin)]
        self.handle.pre_eviction_filters = [
            p for n in parsed.enabled["preEvictionFilter"] if isinstance(p := instances[n], EvictorPlugin)]

    async def run_deschedule(self, nodes: list[JsonDict]) -> None:
        for p in self.deschedule:
            await self._run(p, p.deschedule, nodes)

    async def run_balance(self, nodes: list[JsonDict]) -> None:
        for p in self.balance:
            await self._run(p, p.balance, nodes)

    async def _run(self, p: Plugin, fn: Any, nodes: list[JsonDict]) -> None:
        if self.handle.total_limit_reached():
            return
        evictor = self.handle.evictor
        before = len(evictor.cycle)
        start = time.perf_counter()
        try:
            st = await fn(nodes, profile=self.name)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the runtime turns a plugin's stray exception into its error Status
            logger.exception("plugin raised profile=%s plugin=%s", self.name, p.name())
            st = Status(f"plugin {p.name()} raised {type(e).__name__}: {e}")
        self._metrics.strategy_duration.labels(p.name(), self.name).observe(time.perf_counter() - start)
        if st is None or not isinstance(st, Status):
            st = Status(f"plugin {p.name()} returned {st!r}, not a Status")
        if st.error:
            logger.error("plugin failed profile=%s plugin=%s err=%s", self.name, p.name(), st.error)
        n = len(evictor.cycle) - before
        (logger.info if n else logger.debug)("plugin done profile=%s plugin=%s evicted=%d", self.name, p.name(), n)
