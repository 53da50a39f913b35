"""RemovePodsViolatingNodeAffinity (deschedule), after sigs descheduler's
removepodsviolatingnodeaffinity. `nodeAffinityType` (required):
- `requiredDuringSchedulingIgnoredDuringExecution`: the pod's node no longer matches its required
  node affinity (or nodeSelector) and another ready node would take it;
- `preferredDuringSchedulingIgnoredDuringExecution`: another node that would take the pod
  scores higher on the pod's preferred terms than its current node.
Args also `namespaces`, `labelSelector`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar, Literal

from pydantic import Field

from descheduler import podutil
from descheduler.framework.evict_loop import evict_until_limit
from descheduler.framework.interface import SUCCESS, DeschedulePlugin, EvictOptions, Status
from descheduler.plugins.common import SelectorArgs
from minik3s.api.helpers.node_affinity import (
    pod_matches_node_selector_and_affinity,
    pod_preferred_terms,
    preferred_score,
)
from minik3s.api.types import JsonDict

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


class RemovePodsViolatingNodeAffinityArgs(SelectorArgs):
    node_affinity_type: list[Literal["requiredDuringSchedulingIgnoredDuringExecution",
                                     "preferredDuringSchedulingIgnoredDuringExecution"]] = Field(
        ..., min_length=1, alias="nodeAffinityType")


def _has_required(pod: JsonDict) -> bool:
    spec = pod.get("spec") or {}
    na = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    return bool(spec.get("nodeSelector")) or REQUIRED in na


class RemovePodsViolatingNodeAffinity(DeschedulePlugin):
    NAME: ClassVar[str] = "RemovePodsViolatingNodeAffinity"
    Args = RemovePodsViolatingNodeAffinityArgs

    def _should_evict(self, pod: JsonDict, node: JsonDict, *, nodes: list[JsonDict], kind: str) -> bool:
        others = [n for n in nodes if podutil.meta(n).get("name") != podutil.meta(node).get("name")
                  and not podutil.pod_fits_node(
                      pod, n, pods_on_node=self.handle.pods_on_node(str(podutil.meta(n).get("name"))))]
        if kind == REQUIRED:
            return _has_required(pod) and not pod_matches_node_selector_and_affinity(pod, node) and bool(others)
        if not pod_preferred_terms(pod):
            return False
        here = preferred_score(pod, node)
        return any(preferred_score(pod, n) > here for n in others)

    async def deschedule(self, nodes: list[JsonDict], *, profile: str) -> Status:
        a = self.args
        assert isinstance(a, RemovePodsViolatingNodeAffinityArgs)
        selector = a.selector()

        def candidates(node: JsonDict, kind: str) -> Iterator[JsonDict]:
            for pod in self.handle.pods_on_node(str(podutil.meta(node).get("name"))):
                if not podutil.namespace_allowed(pod, a.namespaces) or not podutil.labels_match(
                        selector, podutil.meta(pod).get("labels")):
                    continue
                if self._should_evict(pod, node, nodes=nodes, kind=kind) and self.handle.filter(pod):
                    yield pod

        groups = (candidates(node, kind) for kind in a.node_affinity_type for node in nodes)
        await evict_until_limit(self.handle, groups, EvictOptions(profile, self.NAME))
        return SUCCESS
