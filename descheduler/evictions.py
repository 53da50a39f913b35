"""The pod evictor (layer L4), after sigs descheduler's pkg/descheduler/evictions.

Data flow of `evict(pod, opts)`:
1. limits, checked before each eviction in upstream's order: total
   (`maxNoOfPodsToEvictTotal`), the pod's node (`maxNoOfPodsToEvictPerNode`), its namespace
   (`maxNoOfPodsToEvictPerNamespace`); counters reset at the start of every cycle;
2. loop avoidance (minik3s, on by default): ask the injected `PlacementAdvisor` where the pod
   would go; when no node but its own passes the scheduler's filters, or its own node is the
   only top-scoring one, the eviction would only bring it back: skip it. Lifecycle strategies
   (`EvictOptions.relocates` False) are only stopped when the pod would fit no node at all;
3. dry run: count and log "Evicted pod in dry run mode", touch nothing;
4. POST `pods/{name}/eviction` (policy/v1 Eviction; the policy's `gracePeriodSeconds` only for
   a pod without its own terminationGracePeriodSeconds, as upstream). A 429
   (PodDisruptionBudget) or 404 is logged and the pod skipped;
5. success: an Event on the pod (upstream: reason = the strategy name, action `Descheduled`,
   note "pod eviction from <node> node by sigs.k8s.io/descheduler") and the counters; a failed
   eviction (limits included) gets a Warning event (reason EvictionFailed, "... failed: <why>")
   with `evictionFailureEventNotification`.
Every outcome is counted in `descheduler_pods_evicted_total{result,...}`.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from dataclasses import KW_ONLY, dataclass, field

from descheduler.framework.interface import EvictOptions, EvictResult, PlacementAdvisor
from descheduler.metrics import DeschedulerMetrics
from descheduler.podutil import key, meta, node_name
from minik3s.api.errors import ApiError, NotFoundError, TooManyRequestsError
from minik3s.api.resources import EVENTS
from minik3s.api.types import JsonDict
from minik3s.client.interface import Client
from minik3s.utils.clock import Clock, rfc3339, rfc3339_micro

logger = logging.getLogger(__name__)

COMPONENT = "sigs.k8s.io/descheduler"
RESULT_LOOP_AVOIDED = "skipped: would be placed on the same node"


@dataclass(slots=True, frozen=True)
class Eviction:
    """One eviction of a cycle (dry-run ones included), for logs, tests and the summary."""

    profile: str
    strategy: str
    pod: str
    node: str


@dataclass(slots=True)
class EvictionLimits:
    per_node: int | None = None
    per_namespace: int | None = None
    total: int | None = None


@dataclass(slots=True)
class PodEvictor:
    client: Client
    metrics: DeschedulerMetrics
    _: KW_ONLY
    limits: EvictionLimits = field(default_factory=EvictionLimits)
    dry_run: bool = False
    grace_period_seconds: int | None = None
    placement: PlacementAdvisor | None = None
    failure_events: bool = False  # evictionFailureEventNotification
    clock: Clock = field(default_factory=Clock)
    rng: random.Random = field(default_factory=random.Random)  # event name suffixes
    node_count: Counter[str] = field(default_factory=Counter)
    namespace_count: Counter[str] = field(default_factory=Counter)
    total: int = 0
    cycle: list[Eviction] = field(default_factory=list)
    _event_seq: int = 0

    def reset(self) -> None:
        self.node_count.clear()
        self.namespace_count.clear()
        self.total = 0
        self.cycle = []

    def node_limit_reached(self, node: str) -> bool:
        return self.limits.per_node is not None and self.node_count[node] >= self.limits.per_node

    def total_limit_reached(self) -> bool:
        return self.limits.total is not None and self.total >= self.limits.total

    def _limit(self, pod: JsonDict) -> tuple[EvictResult, str, str] | None:
        """(result, metric result text, event detail) of the first limit the pod would exceed."""
        node = node_name(pod)
        ns = str(meta(pod).get("namespace") or "")
        lim = self.limits
        if lim.total is not None and self.total + 1 > lim.total:
            return (EvictResult.TOTAL_LIMIT, "maximum number of evicted pods per a descheduling cycle reached",
                    f"total eviction limit exceeded ({lim.total})")
        if node and lim.per_node is not None and self.node_count[node] + 1 > lim.per_node:
            return (EvictResult.NODE_LIMIT, "maximum number of evicted pods per node reached",
                    f"node eviction limit exceeded ({lim.per_node})")
        if lim.per_namespace is not None and self.namespace_count[ns] + 1 > lim.per_namespace:
            return (EvictResult.NAMESPACE_LIMIT, "maximum number of evicted pods per namespace reached",
                    f"namespace eviction limit exceeded ({lim.per_namespace})")
        return None

    def would_return(self, pod: JsonDict, *, relocates: bool) -> bool:
        """Loop avoidance: True when evicting `pod` would only put it back on its node (or, for a
        lifecycle strategy, when its replacement would fit no node at all)."""
        if self.placement is None:
            return False
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return False  # a terminated pod holds nothing and cannot come back: never kept
        res = self.placement.where_would_it_go(pod)
        if res is None:
            return False
        if not relocates:
            return not res.feasible
        own = node_name(pod)
        others = [n for n in res.feasible if n != own]
        if not others:
            return True
        return list(res.best) == [own]

    async def evict(self, pod: JsonDict, opts: EvictOptions) -> EvictResult:
        # a point where the loop runs other tasks: dry-run cycles with loop avoidance never
        # await the API otherwise, and a what-if costs about one scheduling attempt
        await asyncio.sleep(0)
        node = node_name(pod)
        ns = str(meta(pod).get("namespace") or "")
        labels = {"strategy": opts.strategy, "namespace": ns, "node": node, "profile": opts.profile}
        lim = self._limit(pod)
        if lim is not None:
            result, text, detail = lim
            self.metrics.evicted(text, **labels)
            logger.debug("eviction limit pod=%s node=%s strategy=%s limit=%s", key(pod), node, opts.strategy, text)
            if self.failure_events:
                await self._event(pod, "EvictionFailed", f"pod eviction from {node} node by {COMPONENT} failed: "
                                  f"{detail}", warning=True)
            return result
        if self.would_return(pod, relocates=opts.relocates):
            self.metrics.evicted(RESULT_LOOP_AVOIDED, **labels)
            logger.info("eviction skipped, the pod would be scheduled on the same node again pod=%s node=%s "
                        "strategy=%s profile=%s", key(pod), node, opts.strategy, opts.profile)
            return EvictResult.SKIPPED
        if not self.dry_run:
            body: JsonDict | None = None
            # upstream: the pod's own terminationGracePeriodSeconds wins; the policy's value only
            # fills in for a pod without one
            own_grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
            if self.grace_period_seconds is not None and own_grace is None:
                body = {"gracePeriodSeconds": self.grace_period_seconds}
            try:
                await self.client.evict(ns, str(meta(pod).get("name")), delete_options=body)
            except ApiError as e:
                self.metrics.evicted("error", **labels)
                if isinstance(e, TooManyRequestsError):
                    logger.info("error when evicting pod (ignoring) pod=%s strategy=%s err=%s", key(pod),
                                opts.strategy, e)
                elif isinstance(e, NotFoundError):
                    logger.info("pod not found when evicting pod=%s strategy=%s", key(pod), opts.strategy)
                else:
                    logger.warning("error evicting pod pod=%s strategy=%s err=%s", key(pod), opts.strategy, e)
                if self.failure_events:
                    why = (f"error when evicting pod (ignoring) {meta(pod).get('name')!r}: {e}"
                           if isinstance(e, TooManyRequestsError) else str(e))
                    await self._event(pod, "EvictionFailed",
                                      f"pod eviction from {node} node by {COMPONENT} failed: {why}", warning=True)
                return EvictResult.SKIPPED
        self.total += 1
        if node:
            self.node_count[node] += 1
        self.namespace_count[ns] += 1
        self.cycle.append(Eviction(opts.profile, opts.strategy, key(pod), node))
        self.metrics.evicted("success", **labels)
        if self.dry_run:
            logger.info("Evicted pod in dry run mode pod=%s reason=%s strategy=%s node=%s profile=%s",
                        key(pod), opts.reason, opts.strategy, node, opts.profile)
        else:
            logger.info("Evicted pod pod=%s reason=%s strategy=%s node=%s profile=%s", key(pod), opts.reason,
                        opts.strategy, node, opts.profile)
            await self._event(pod, opts.reason or opts.strategy or "NotSet",
                              f"pod eviction from {node} node by {COMPONENT}")
        return EvictResult.EVICTED

    async def _event(self, pod: JsonDict, reason: str, note: str, *, warning: bool = False) -> None:
        m = meta(pod)
        now = self.clock.now()
        self._event_seq += 1
        stamp = int(now.timestamp() * 1e9) + self._event_seq
        suffix = self.rng.getrandbits(32)
        ns = str(m.get("namespace") or "default")
        ev: JsonDict = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{m.get('name')}.{stamp:x}{suffix:08x}", "namespace": ns},
            "involvedObject": {"kind": "Pod", "apiVersion": "v1", "namespace": ns, "name": m.get("name"),
                               "uid": m.get("uid")},
            "reason": reason, "action": "Descheduled", "message": note, "type": "Warning" if warning else "Normal",
            "source": {"component": COMPONENT}, "reportingComponent": COMPONENT, "reportingInstance": COMPONENT,
            "firstTimestamp": rfc3339(now), "lastTimestamp": rfc3339(now), "eventTime": rfc3339_micro(now),
            "count": 1,
        }
        try:
            await self.client.create(EVENTS, ev, ns, read_only=True, handover=True)
        except ApiError as e:  # events are best effort
            logger.debug("event dropped pod=%s err=%s", key(pod), e)
