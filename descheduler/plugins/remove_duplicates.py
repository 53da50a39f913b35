"""RemoveDuplicates (balance), after sigs descheduler's removeduplicates: pods of one owner
running the same images are duplicates.

As upstream, per node: a pod's key list is the sorted `namespace/ownerKind/ownerName/image`
strings over its owners and containers; the first pod of a node with a given key list is the
original, every later one on that node a duplicate, filed under each of its owner keys
(namespace, owner kind, owner name, its sorted images). Only pods the evictor admits (filter
and preEvictionFilter, e.g. `nodeFit`) and the plugin's `namespaces` allow are looked at;
owners of an `excludeOwnerKinds` kind skip the pod. Every looked-at pod counts once per owner
key. Per owner key: the target nodes are the union, over the distinct (tolerations,
nodeSelector, required node affinity) variants among its duplicates, of the nodes a variant
may land on (NoSchedule/NoExecute taints tolerated, selector and affinity matching) when more
than one; with fewer than two targets nothing happens. upperAvg = ceil(pods of the key / target
nodes); a node holding more than upperAvg of them (its duplicates plus the original) loses its
duplicates from index upperAvg - 1 on. Example: 4 replicas all on n1, 3 target nodes ->
upperAvg 2 -> duplicates [b, c, d] lose [c, d]. A pod with two owners is filed under both keys
and so may be evicted twice, as upstream.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import ClassVar

from pydantic import Field

from descheduler import podutil
from descheduler.framework.evict_loop import evict_until_limit
from descheduler.framework.interface import (
    SUCCESS,
    BalancePlugin,
    EvictOptions,
    PluginArgs,
    Status,
)
from descheduler.plugins.common import Namespaces
from minik3s.api.helpers.node_affinity import pod_matches_node_selector_and_affinity
from minik3s.api.types import JsonDict

OwnerKey = tuple[str, str, str, str]  # namespace, owner kind, owner name, images hash


class RemoveDuplicatesArgs(PluginArgs):
    namespaces: Namespaces | None = None
    exclude_owner_kinds: list[str] = Field(default_factory=list, alias="excludeOwnerKinds")


def _images(pod: JsonDict) -> list[str]:
    return sorted(str(c.get("image") or "") for c in (pod.get("spec") or {}).get("containers") or [])


def duplicate_key(pod: JsonDict) -> list[str]:
    """Upstream's podContainerKeys: sorted namespace/kind/name/image over owners x containers."""
    ns = str(podutil.meta(pod).get("namespace"))
    return sorted(f"{ns}/{o.get('kind')}/{o.get('name')}/{img}"
                  for o in podutil.owner_refs(pod) for img in _images(pod))


def _owner_keys(pod: JsonDict) -> list[OwnerKey]:
    ns = str(podutil.meta(pod).get("namespace"))
    images = "#".join(_images(pod))
    return [(ns, str(o.get("kind")), str(o.get("name")), images) for o in podutil.owner_refs(pod)]


def _placement_terms(pod: JsonDict) -> str:
    """What decides where a pod may land: tolerations (as a set), nodeSelector, required node
    affinity (upstream getTargetNodes' notion of identical pods)."""
    spec = pod.get("spec") or {}
    tolerations = sorted(json.dumps(t, sort_keys=True) for t in spec.get("tolerations") or [])
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    return json.dumps([tolerations, spec.get("nodeSelector") or {}, required], sort_keys=True)


def target_nodes(per_node: dict[str, list[JsonDict]], nodes: list[JsonDict]) -> list[str]:
    distinct: dict[str, JsonDict] = {}
    for pods in per_node.values():
        for pod in pods:
            distinct.setdefault(_placement_terms(pod), pod)
    targets: dict[str, None] = {}
    for pod in distinct.values():
        matching = [str(podutil.meta(n).get("name")) for n in nodes
                    if podutil.pod_tolerates_node_taints(pod, n) and pod_matches_node_selector_and_affinity(pod, n)]
        if len(matching) > 1:
            targets.update(dict.fromkeys(matching))
    return list(targets)


class RemoveDuplicates(BalancePlugin):
    NAME: ClassVar[str] = "RemoveDuplicates"
    Args = RemoveDuplicatesArgs

    def _looked_at(self, pod: JsonDict) -> bool:
        a = self.args
        assert isinstance(a, RemoveDuplicatesArgs)
        return (podutil.namespace_allowed(pod, a.namespaces) and self.handle.filter(pod)
                and self.handle.pre_eviction_filter(pod))

    async def balance(self, nodes: list[JsonDict], *, profile: str) -> Status:
        a = self.args
        assert isinstance(a, RemoveDuplicatesArgs)
        duplicates: dict[OwnerKey, dict[str, list[JsonDict]]] = {}
        occurrence: Counter[OwnerKey] = Counter()
        for node in nodes:
            name = str(podutil.meta(node).get("name"))
            originals: set[tuple[str, ...]] = set()
            for pod in self.handle.pods_on_node(name):
                owners = podutil.owner_refs(pod)
                if not owners or any(o.get("kind") in a.exclude_owner_kinds for o in owners):
                    continue
                if not self._looked_at(pod):
                    continue
                keys = _owner_keys(pod)
                occurrence.update(keys)
                key_list = tuple(duplicate_key(pod))
                if key_list not in originals:
                    originals.add(key_list)
                    continue
                for k in keys:
                    duplicates.setdefault(k, {}).setdefault(name, []).append(pod)
        opts = EvictOptions(profile, self.NAME)
        for k, per_node in duplicates.items():
            targets = target_nodes(per_node, nodes)
            if len(targets) < 2:
                continue
            upper = math.ceil(occurrence[k] / len(targets))
            groups = (pods[upper - 1:] for pods in per_node.values() if len(pods) + 1 > upper)
            if await evict_until_limit(self.handle, groups, opts):
                return SUCCESS
        return SUCCESS
