"""RemoveFailedPods (deschedule), after sigs descheduler's removefailedpods: pods in phase
Failed are evicted, optionally only those with a listed `reasons` entry (pod status reason or a
container's waiting/terminated reason), a listed container `exitCodes` value, older than
`minPodLifetimeSeconds`, and not owned by an `excludeOwnerKinds` kind.
Args also `namespaces`, `labelSelector`, `includingInitContainers`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from pydantic import Field

from descheduler import podutil
from descheduler.framework.evict_loop import evict_until_limit
from descheduler.framework.interface import SUCCESS, DeschedulePlugin, EvictOptions, Status
from descheduler.plugins.common import SelectorArgs
from descheduler.plugins.pod_life_time import pod_states
from minik3s.api.types import JsonDict
from minik3s.utils.clock import parse_time


class RemoveFailedPodsArgs(SelectorArgs):
    exclude_owner_kinds: list[str] = Field(default_factory=list, alias="excludeOwnerKinds")
    min_pod_lifetime_seconds: int | None = Field(None, ge=0, alias="minPodLifetimeSeconds")
    reasons: list[str] = Field(default_factory=list)
    exit_codes: list[int] = Field(default_factory=list, alias="exitCodes")
    including_init_containers: bool = Field(False, alias="includingInitContainers")


def exit_codes(pod: JsonDict, *, init: bool) -> set[int]:
    st = pod.get("status") or {}
    lists = ["containerStatuses"] + (["initContainerStatuses"] if init else [])
    out = set()
    for lst in lists:
        for cs in st.get(lst) or []:
            t = (cs.get("state") or {}).get("terminated") or {}
            if "exitCode" in t:
                out.add(int(t["exitCode"]))
    return out


class RemoveFailedPods(DeschedulePlugin):
    NAME: ClassVar[str] = "RemoveFailedPods"
    Args = RemoveFailedPodsArgs

    def _matches(self, pod: JsonDict, a: RemoveFailedPodsArgs) -> bool:
        if (pod.get("status") or {}).get("phase") != "Failed":
            return False
        if any(o.get("kind") in a.exclude_owner_kinds for o in podutil.owner_refs(pod)):
            return False
        if a.min_pod_lifetime_seconds is not None:
            created = parse_time(podutil.meta(pod).get("creationTimestamp"))
            if created is None or (self.handle.now() - created).total_seconds() < a.min_pod_lifetime_seconds:
                return False
        if a.reasons and not pod_states(pod, init=a.including_init_containers, ephemeral=False) & set(a.reasons):
            return False
        return not (a.exit_codes and not exit_codes(pod, init=a.including_init_containers) & set(a.exit_codes))

    async def deschedule(self, nodes: list[JsonDict], *, profile: str) -> Status:
        a = self.args
        assert isinstance(a, RemoveFailedPodsArgs)
        selector = a.selector()

        def candidates(node: JsonDict) -> Iterator[JsonDict]:
            for pod in self.handle.pods_on_node(str(podutil.meta(node).get("name")), include_terminated=True):
                if not self._matches(pod, a) or not podutil.namespace_allowed(pod, a.namespaces):
                    continue
                if podutil.labels_match(selector, podutil.meta(pod).get("labels")) and self.handle.filter(pod):
                    yield pod

        await evict_until_limit(self.handle, map(candidates, nodes), EvictOptions(profile, self.NAME, relocates=False))
        return SUCCESS
