"""RemovePodsViolatingNodeAffinity (deschedule), after sigs descheduler's
removepodsviolatingnodeaffinity. `nodeAffinityType` (required, non-empty), per type, node by node:
- `requiredDuringSchedulingIgnoredDuringExecution`: a pod with a required node affinity term
  whose node no longer matches its nodeSelector / required affinity, and that fits some node of
  the cycle;
- `preferredDuringSchedulingIgnoredDuringExecution`: a pod with preferred terms that fits some
  node of the cycle, and some node of the cycle weighs more on its preferred terms than its
  current node;
any other value is logged and ignored (upstream validation accepts it). "Fits" is upstream's
NodeFit: selector and required affinity, NoSchedule/NoExecute taints, unschedulable, and the
requests against the other nodes' free resources (a pod's own node is not checked for requests).
Args also `namespaces`, `labelSelector`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import ClassVar

from pydantic import Field, field_validator

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

logger = logging.getLogger(__name__)

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


class RemovePodsViolatingNodeAffinityArgs(SelectorArgs):
    node_affinity_type: list[str] = Field(default_factory=list, alias="nodeAffinityType")

    @field_validator("node_affinity_type")
    @classmethod
    def _set(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("nodeAffinityType needs to be set")
        return v


def _has_required_affinity(pod: JsonDict) -> bool:
    na = (((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity")) or {}
    return na.get(REQUIRED) is not None


class RemovePodsViolatingNodeAffinity(DeschedulePlugin):
    NAME: ClassVar[str] = "RemovePodsViolatingNodeAffinity"
    Args = RemovePodsViolatingNodeAffinityArgs

    def _fits(self, pod: JsonDict, node: JsonDict) -> bool:
        """Upstream NodeFit; the requests are not checked on the pod's own node."""
        name = str(podutil.meta(node).get("name"))
        if name != podutil.node_name(pod):
            return not podutil.pod_fits_node(pod, node, pods_on_node=self.handle.pods_on_node(name))
        return (pod_matches_node_selector_and_affinity(pod, node) and podutil.pod_tolerates_node_taints(pod, node)
                and not podutil.is_node_unschedulable(node))

    def _should_evict(self, pod: JsonDict, node: JsonDict, *, nodes: list[JsonDict], kind: str) -> bool:
        if kind == REQUIRED:
            return (_has_required_affinity(pod) and not pod_matches_node_selector_and_affinity(pod, node)
                    and any(self._fits(pod, n) for n in nodes))
        if not pod_preferred_terms(pod) or not any(self._fits(pod, n) for n in nodes):
            return False
        return max((preferred_score(pod, n) for n in nodes), default=0) > preferred_score(pod, node)

    async def deschedule(self, nodes: list[JsonDict], *, profile: str) -> Status:
        a = self.args
        assert isinstance(a, RemovePodsViolatingNodeAffinityArgs)
        selector = a.selector()

        def candidates(node: JsonDict, kind: str) -> Iterator[JsonDict]:
            for pod in self.handle.pods_on_node(str(podutil.meta(node).get("name"))):
                if not podutil.namespace_allowed(pod, a.namespaces) or not podutil.labels_match(
                        selector, podutil.meta(pod).get("labels")):
                    continue
                if self.handle.filter(pod) and self._should_evict(pod, node, nodes=nodes, kind=kind):
                    yield pod

        kinds = []
        for kind in a.node_affinity_type:
            if kind in (REQUIRED, PREFERRED):
                kinds.append(kind)
            else:
                logger.error("Invalid nodeAffinityType nodeAffinity=%s", kind)
        groups = (candidates(node, kind) for kind in kinds for node in nodes)
        await evict_until_limit(self.handle, groups, EvictOptions(profile, self.NAME))
        return SUCCESS
