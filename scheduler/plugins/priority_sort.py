"""PrioritySort (QueueSort): higher `spec.priority` first, then the earlier queue timestamp
(upstream plugins/queuesort/priority_sort.go). QueuedPodInfo is the queue's type: we read
`.pod_info.priority` (or `.pod`) and `.timestamp`."""

from __future__ import annotations

from typing import Any

from scheduler.framework.interface import QueueSortPlugin
from scheduler.plugins import names


def _priority(q: Any) -> int:
    pi = getattr(q, "pod_info", None)
    if pi is not None:
        return int(pi.priority)
    pod = getattr(q, "pod", None) or {}
    return int((pod.get("spec") or {}).get("priority") or 0)


class PrioritySort(QueueSortPlugin):
    NAME = names.PRIORITY_SORT

    def less(self, a: Any, b: Any) -> bool:
        p1, p2 = _priority(a), _priority(b)
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    def sort_key(self, item: Any) -> tuple[Any, ...]:
        """(-priority, timestamp): ordered as `less`."""
        return -_priority(item), item.timestamp
