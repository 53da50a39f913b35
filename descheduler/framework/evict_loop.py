"""The evict-until-limit loop every descheduler strategy runs (layer L4, descheduler framework).

Why: upstream's strategies all end the same way: walk the chosen pods, evict each through the
evictor, and on `EvictionNodeLimitError` go on with the next node, on `EvictionTotalLimitError`
stop the whole strategy; a pod the evictor skips (PDB, namespace limit, gone) is passed over.
Written once here, so a strategy states only *what* to evict and in which order.

Data flow: strategy -> `evict_until_limit(handle, groups, opts)` -> `handle.evict(pod, opts)`
(limits, loop avoidance, `pods/eviction`) -> `EvictResult` decides what the loop does next.

A group is one node's candidates (a node limit ends the group), or one pod for strategies that
pick across nodes (`each_alone`: a node limit then skips just that pod). Groups are consumed
lazily, so a strategy can pass generators whose filters see the effect of earlier evictions
(e.g. RemovePodsViolatingInterPodAntiAffinity no longer counting an evicted pod).
Example: groups `[[a, b], [c]]`, node limit 1 on the first node -> `a` evicted, `b` returns
NODE_LIMIT, the loop goes on with `c`; a TOTAL_LIMIT on any pod ends it and returns True.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from descheduler.framework.interface import EvictOptions, EvictResult, Handle
from minik3s.api.types import JsonDict


async def evict_until_limit(
    handle: Handle,
    groups: Iterable[Iterable[JsonDict]],
    opts: EvictOptions,
    *,
    on_evicted: Callable[[JsonDict], None] | None = None,
) -> bool:
    """Evict the pods of `groups` in order; True when the total limit stopped the walk.
    `on_evicted(pod)` runs after each eviction (or dry-run eviction) before the next pod."""
    for group in groups:
        for pod in group:
            res = await handle.evict(pod, opts)
            if res is EvictResult.EVICTED:
                if on_evicted is not None:
                    on_evicted(pod)
            elif res is EvictResult.TOTAL_LIMIT:
                return True
            elif res is EvictResult.NODE_LIMIT:
                break
    return False


def each_alone(pods: Iterable[JsonDict]) -> Iterator[list[JsonDict]]:
    """Every pod its own group: a node limit skips that pod only (strategies that pick pods
    across nodes, e.g. PodLifeTime's oldest-first order)."""
    for pod in pods:
        yield [pod]
