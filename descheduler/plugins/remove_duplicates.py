"""RemoveDuplicates (balance), after sigs descheduler's removeduplicates: pods of one owner
running the same images are duplicates. Key: the sorted (namespace, owner kind, owner name,
image) combinations of a pod. Per owner key, the target nodes are the ready nodes a pod of it
could run on (NoSchedule/NoExecute taints tolerated, node selector and affinity matching); with
fewer than two, nothing happens. upperAvg = ceil(pods of the key / target nodes); every node
holding more than upperAvg of them loses the extras. Example: 4 replicas all on n1, 3 target
nodes -> upperAvg 2 -> 2 evicted from n1. `excludeOwnerKinds` skips owners of those kinds;
`namespaces` include/exclude.
"""

from __future__ import annotations

import math
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
from minik3s.api.helpers.resources import container_images
from minik3s.api.types import JsonDict


class RemoveDuplicatesArgs(PluginArgs):
    namespaces: Namespaces | None = None
    exclude_owner_kinds: list[str] = Field(default_factory=list, alias="excludeOwnerKinds")


def duplicate_key(pod: JsonDict) -> tuple[str, ...]:
    ns = str(podutil.meta(pod).get("namespace"))
    images = sorted(set(container_images(pod)))
    return tuple(sorted(f"{ns}/{o.get('kind')}/{o.get('name')}/{img}"
                        for o in podutil.owner_refs(pod) for img in images))


class RemoveDuplicates(BalancePlugin):
    NAME: ClassVar[str] = "RemoveDuplicates"
    Args = RemoveDuplicatesArgs

    async def balance(self, nodes: list[JsonDict], *, profile: str) -> Status:
        a = self.args
        assert isinstance(a, RemoveDuplicatesArgs)
        by_key: dict[tuple[str, ...], dict[str, list[JsonDict]]] = {}
        sample: dict[tuple[str, ...], JsonDict] = {}
        for node in nodes:
            name = str(podutil.meta(node).get("name"))
            for pod in self.handle.pods_on_node(name):
                owners = podutil.owner_refs(pod)
                if not owners or any(o.get("kind") in a.exclude_owner_kinds for o in owners):
                    continue
                if not podutil.namespace_allowed(pod, a.namespaces) or not self.handle.filter(pod):
                    continue
                k = duplicate_key(pod)
                by_key.setdefault(k, {}).setdefault(name, []).append(pod)
                sample.setdefault(k, pod)
        for k, per_node in by_key.items():
            pod0 = sample[k]
            targets = [n for n in nodes if podutil.pod_tolerates_node_taints(pod0, n)
                       and pod_matches_node_selector_and_affinity(pod0, n)]
            if len(targets) < 2:
                continue
            total = sum(len(v) for v in per_node.values())
            upper = math.ceil(total / len(targets))
            groups = (pods[upper:] for pods in per_node.values())
            if await evict_until_limit(self.handle, groups, EvictOptions(profile, self.NAME)):
                return SUCCESS
        return SUCCESS
