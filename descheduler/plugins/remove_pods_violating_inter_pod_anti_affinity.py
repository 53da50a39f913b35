"""RemovePodsViolatingInterPodAntiAffinity (deschedule), after sigs descheduler's
removepodsviolatinginterpodantiaffinity: a pod whose *required* pod anti-affinity is broken by
another pod in the same topology domain (e.g. the other pod was relabelled after both were
placed) is evicted. Pods on each node go lowest priority first; an evicted pod no longer
counts against the rest. Args: `namespaces`, `labelSelector`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from descheduler import podutil
from descheduler.framework.evict_loop import evict_until_limit
from descheduler.framework.interface import SUCCESS, DeschedulePlugin, EvictOptions, Status
from descheduler.plugins.common import SelectorArgs
from minik3s.api.selectors import label_selector_from_dict
from minik3s.api.types import JsonDict


class RemovePodsViolatingInterPodAntiAffinityArgs(SelectorArgs):
    pass


def required_anti_affinity_terms(pod: JsonDict) -> list[JsonDict]:
    aff = ((pod.get("spec") or {}).get("affinity") or {}).get("podAntiAffinity") or {}
    return list(aff.get("requiredDuringSchedulingIgnoredDuringExecution") or [])


class RemovePodsViolatingInterPodAntiAffinity(DeschedulePlugin):
    NAME: ClassVar[str] = "RemovePodsViolatingInterPodAntiAffinity"
    Args = RemovePodsViolatingInterPodAntiAffinityArgs

    def _violates(self, pod: JsonDict, others: list[tuple[JsonDict, JsonDict]], *, node: JsonDict) -> bool:
        """`others`: (pod, its node) pairs still in place."""
        ns = podutil.meta(pod).get("namespace")
        for term in required_anti_affinity_terms(pod):
            tkey = term.get("topologyKey") or ""
            value = (podutil.meta(node).get("labels") or {}).get(tkey)
            if value is None:
                continue
            try:
                sel = label_selector_from_dict(term.get("labelSelector"))
                ns_sel = (label_selector_from_dict(term["namespaceSelector"])
                          if term.get("namespaceSelector") is not None else None)
            except ValueError:
                continue
            names = set(term.get("namespaces") or [])
            for other, onode in others:
                if other is pod or podutil.meta(other).get("uid") == podutil.meta(pod).get("uid"):
                    continue
                if (podutil.meta(onode).get("labels") or {}).get(tkey) != value:
                    continue
                ons = podutil.meta(other).get("namespace")
                if ns_sel is not None:
                    nsobj = self.handle.namespace(str(ons))
                    in_ns = (ons in names) or ns_sel.matches(podutil.meta(nsobj).get("labels") if nsobj else {})
                else:
                    in_ns = ons in names if names else ons == ns
                if in_ns and sel.matches(podutil.meta(other).get("labels") or {}):
                    return True
        return False

    async def deschedule(self, nodes: list[JsonDict], *, profile: str) -> Status:
        a = self.args
        assert isinstance(a, RemovePodsViolatingInterPodAntiAffinityArgs)
        selector = a.selector()
        placed: list[tuple[JsonDict, JsonDict]] = []
        for n in nodes:
            for p in self.handle.pods_on_node(str(podutil.meta(n).get("name"))):
                placed.append((p, n))

        def candidates(n: JsonDict) -> Iterator[JsonDict]:
            name = str(podutil.meta(n).get("name"))
            for pod in podutil.sort_by_priority_low_first(self.handle.pods_on_node(name)):
                if self.handle.node_limit_reached(name):
                    return
                if not required_anti_affinity_terms(pod) or not podutil.namespace_allowed(pod, a.namespaces):
                    continue
                if not podutil.labels_match(selector, podutil.meta(pod).get("labels")):
                    continue
                # `placed` is read when the loop asks for the next pod: earlier evictions count
                if self._violates(pod, placed, node=n) and self.handle.filter(pod):
                    yield pod

        def groups() -> Iterator[Iterator[JsonDict]]:
            for n in nodes:
                if self.handle.total_limit_reached():
                    return
                yield candidates(n)

        def evicted(pod: JsonDict) -> None:
            nonlocal placed
            placed = [(p, pn) for p, pn in placed if p is not pod]

        await evict_until_limit(self.handle, groups(), EvictOptions(profile, self.NAME), on_evicted=evicted)
        return SUCCESS
