"""PodLifeTime (deschedule), after sigs descheduler's podlifetime: pods older than
`maxPodLifeTimeSeconds` (whole seconds since creation) are evicted, oldest first; as upstream
(ListAllPodsOnANode) Succeeded and Failed pods are looked at too. `states` narrows them to pods
whose phase, status reason or a container's *waiting* reason is listed
(`includingInitContainers` / `includingEphemeralContainers` widen the containers looked at).
Args also `namespaces`, `labelSelector`.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from descheduler import podutil
from descheduler.framework.evict_loop import each_alone, evict_until_limit
from descheduler.framework.interface import SUCCESS, DeschedulePlugin, EvictOptions, Status
from descheduler.plugins.common import SelectorArgs
from minik3s.api.types import JsonDict
from minik3s.utils.clock import parse_time


class PodLifeTimeArgs(SelectorArgs):
    max_pod_life_time_seconds: int = Field(..., ge=0, alias="maxPodLifeTimeSeconds")
    states: list[str] = Field(default_factory=list)
    including_init_containers: bool = Field(False, alias="includingInitContainers")
    including_ephemeral_containers: bool = Field(False, alias="includingEphemeralContainers")


def pod_states(pod: JsonDict, *, init: bool, ephemeral: bool, terminated: bool = True) -> set[str]:
    """The pod's phase, status reason and its containers' waiting (and, with `terminated`,
    terminated) reasons."""
    st = pod.get("status") or {}
    kinds = ("waiting", "terminated") if terminated else ("waiting",)
    out = {str(st.get("phase") or "")}
    if st.get("reason"):
        out.add(str(st["reason"]))
    lists = ["containerStatuses"] + (["initContainerStatuses"] if init else []) + (
        ["ephemeralContainerStatuses"] if ephemeral else [])
    for lst in lists:
        for cs in st.get(lst) or []:
            for kind in kinds:
                r = ((cs.get("state") or {}).get(kind) or {}).get("reason")
                if r:
                    out.add(str(r))
    return out


class PodLifeTime(DeschedulePlugin):
    NAME: ClassVar[str] = "PodLifeTime"
    Args = PodLifeTimeArgs

    async def deschedule(self, nodes: list[JsonDict], *, profile: str) -> Status:
        a = self.args
        assert isinstance(a, PodLifeTimeArgs)
        selector = a.selector()
        now = self.handle.now()
        candidates: list[tuple[float, JsonDict]] = []
        for node in nodes:
            for pod in self.handle.pods_on_node(str(podutil.meta(node).get("name")), include_terminated=True):
                created = parse_time(podutil.meta(pod).get("creationTimestamp"))
                if created is None or int((now - created).total_seconds()) <= a.max_pod_life_time_seconds:
                    continue
                if not podutil.namespace_allowed(pod, a.namespaces) or not podutil.labels_match(
                        selector, podutil.meta(pod).get("labels")):
                    continue
                if a.states and not pod_states(pod, init=a.including_init_containers,
                                               ephemeral=a.including_ephemeral_containers,
                                               terminated=False) & set(a.states):
                    continue
                if self.handle.filter(pod):
                    candidates.append((created.timestamp(), pod))
        candidates.sort(key=lambda c: c[0])
        await evict_until_limit(self.handle, each_alone(pod for _, pod in candidates),
                                EvictOptions(profile, self.NAME, relocates=False))
        return SUCCESS
