"""RemovePodsViolatingNodeTaints (deschedule), after sigs descheduler's
removepodsviolatingnodetaints: pods that do not tolerate a NoSchedule taint of their node
(PreferNoSchedule too with `includePreferNoSchedule`) are evicted. `excludedTaints` /
`includedTaints` entries are `key` (any value) or `key=value`; at most one list may be set.
Args also `namespaces`, `labelSelector`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from pydantic import Field, model_validator

from descheduler import podutil
from descheduler.framework.evict_loop import evict_until_limit
from descheduler.framework.interface import SUCCESS, DeschedulePlugin, EvictOptions, Status
from descheduler.plugins.common import SelectorArgs
from minik3s.api.helpers.taints import (
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    find_untolerated_taint,
    pod_tolerations,
)
from minik3s.api.types import JsonDict


class RemovePodsViolatingNodeTaintsArgs(SelectorArgs):
    include_prefer_no_schedule: bool = Field(False, alias="includePreferNoSchedule")
    excluded_taints: list[str] = Field(default_factory=list, alias="excludedTaints")
    included_taints: list[str] = Field(default_factory=list, alias="includedTaints")

    @model_validator(mode="after")
    def _one(self) -> RemovePodsViolatingNodeTaintsArgs:
        if self.excluded_taints and self.included_taints:
            raise ValueError("either includedTaints or excludedTaints can be set, but not both")
        return self


def _taint_in(taint: JsonDict, entries: list[str]) -> bool:
    for e in entries:
        k, sep, v = e.partition("=")
        if taint.get("key") == k and (not sep or (taint.get("value") or "") == v):
            return True
    return False


class RemovePodsViolatingNodeTaints(DeschedulePlugin):
    NAME: ClassVar[str] = "RemovePodsViolatingNodeTaints"
    Args = RemovePodsViolatingNodeTaintsArgs

    def _considered(self, taint: JsonDict) -> bool:
        a = self.args
        assert isinstance(a, RemovePodsViolatingNodeTaintsArgs)
        effect = taint.get("effect")
        if not (effect == NO_SCHEDULE or (a.include_prefer_no_schedule and effect == PREFER_NO_SCHEDULE)):
            return False
        if a.excluded_taints and _taint_in(taint, a.excluded_taints):
            return False
        return not (a.included_taints and not _taint_in(taint, a.included_taints))

    async def deschedule(self, nodes: list[JsonDict], *, profile: str) -> Status:
        a = self.args
        assert isinstance(a, RemovePodsViolatingNodeTaintsArgs)
        selector = a.selector()

        def candidates(node: JsonDict) -> Iterator[JsonDict]:
            taints = (node.get("spec") or {}).get("taints") or []
            for pod in self.handle.pods_on_node(str(podutil.meta(node).get("name"))):
                if not podutil.namespace_allowed(pod, a.namespaces) or not podutil.labels_match(
                        selector, podutil.meta(pod).get("labels")):
                    continue
                if find_untolerated_taint(taints, pod_tolerations(pod), self._considered) is None:
                    continue
                if self.handle.filter(pod):
                    yield pod

        await evict_until_limit(self.handle, map(candidates, nodes), EvictOptions(profile, self.NAME))
        return SUCCESS
