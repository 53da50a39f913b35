"""RemovePodsHavingTooManyRestarts (deschedule), after sigs descheduler's
removepodshavingtoomanyrestarts: pods whose containers restarted `podRestartThreshold` times
or more in total (init containers too with `includingInitContainers`) are evicted; `states`
(Running, CrashLoopBackOff) narrows to pods in that phase or container waiting reason.
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
from descheduler.plugins.pod_life_time import pod_states
from minik3s.api.types import JsonDict


class RemovePodsHavingTooManyRestartsArgs(SelectorArgs):
    pod_restart_threshold: int = Field(..., gt=0, alias="podRestartThreshold")
    including_init_containers: bool = Field(False, alias="includingInitContainers")
    states: list[Literal["Running", "CrashLoopBackOff"]] = Field(default_factory=list)


def restarts(pod: JsonDict, *, init: bool) -> int:
    st = pod.get("status") or {}
    lists = ["containerStatuses"] + (["initContainerStatuses"] if init else [])
    return sum(int(cs.get("restartCount") or 0) for lst in lists for cs in st.get(lst) or [])


class RemovePodsHavingTooManyRestarts(DeschedulePlugin):
    NAME: ClassVar[str] = "RemovePodsHavingTooManyRestarts"
    Args = RemovePodsHavingTooManyRestartsArgs

    async def deschedule(self, nodes: list[JsonDict], *, profile: str) -> Status:
        a = self.args
        assert isinstance(a, RemovePodsHavingTooManyRestartsArgs)
        selector = a.selector()

        def candidates(node: JsonDict) -> Iterator[JsonDict]:
            for pod in self.handle.pods_on_node(str(podutil.meta(node).get("name"))):
                if restarts(pod, init=a.including_init_containers) < a.pod_restart_threshold:
                    continue
                if not podutil.namespace_allowed(pod, a.namespaces) or not podutil.labels_match(
                        selector, podutil.meta(pod).get("labels")):
                    continue
                if a.states and not pod_states(pod, init=a.including_init_containers, ephemeral=False) & set(a.states):
                    continue
                if self.handle.filter(pod):
                    yield pod

        await evict_until_limit(self.handle, map(candidates, nodes), EvictOptions(profile, self.NAME, relocates=False))
        return SUCCESS
