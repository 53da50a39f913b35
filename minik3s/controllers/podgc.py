"""Pod garbage collector (layer L4), after kube-controller-manager's `pkg/controller/podgc`.

Every `gc_check_period` (20 s upstream) one pass:
- gcTerminated: beyond `terminated_pod_gc_threshold` terminal (Succeeded/Failed) pods, delete
  the oldest (evicted ones first), force (grace 0).
- gcTerminating: pods being deleted on a node that is not Ready and carries the
  `node.kubernetes.io/out-of-service` taint are force-deleted.
- gcOrphaned: pods bound to a node that does not exist -- after the node has been missing for
  `quarantine` seconds (40 s upstream) and a direct GET confirms it -- get the
  `DisruptionTarget` condition (reason DeletionByPodGC) and phase Failed, then are force-deleted.
  This is what lets `kubectl delete pod` finish for a pod whose node is gone.
- gcUnscheduledTerminating: pods being deleted that were never scheduled are force-deleted.

Data flow: Pod and Node informers -> periodic pass on the injected clock -> pod status
patch + delete(grace 0) through the Client.
"""

from __future__ import annotations

import asyncio
import copy
import logging

from minik3s.api.errors import ApiError, ConflictError, NotFoundError
from minik3s.api.resources import NODES, PODS
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.controllers.common import is_deleting, is_pod_terminal, meta, now_str
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"


def terminated_to_delete(pods: list[JsonDict], threshold: int) -> list[JsonDict]:
    """gcTerminated's choice: the oldest terminal pods beyond the threshold, evicted first
    (byEvictionAndCreationTimestamp). Example: threshold 2, terminal pods created at t1<t2<t3
    -> [t1]."""
    if threshold <= 0:
        return []
    terminal = [p for p in pods if is_pod_terminal(p)]
    excess = len(terminal) - threshold
    if excess <= 0:
        return []

    def key(p: JsonDict) -> tuple[int, str, str]:
        evicted = (p.get("status") or {}).get("reason") == "Evicted" and (p.get("status") or {}).get("phase") == "Failed"
        m = meta(p)
        return (0 if evicted else 1, str(m.get("creationTimestamp") or ""), str(m.get("name") or ""))

    return sorted(terminal, key=key)[:excess]


def node_ready(node: JsonDict) -> bool:
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return bool(c.get("status") == "True")
    return False


def has_out_of_service_taint(node: JsonDict) -> bool:
    return any(t.get("key") == OUT_OF_SERVICE and t.get("effect") == "NoExecute"
               for t in (node.get("spec") or {}).get("taints") or [])


class PodGCController:
    NAME = "pod-garbage-collector"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None,
                 terminated_pod_gc_threshold: int = 12500, gc_check_period: float = 20.0,
                 quarantine: float = 40.0) -> None:
        self._client = client
        self._clock = clock or Clock()
        self.threshold = terminated_pod_gc_threshold
        self.period = gc_check_period
        self.quarantine = quarantine
        self._pods = informers.informer(PODS)
        self._nodes = informers.informer(NODES)
        self._missing_since: dict[str, float] = {}

    async def run(self, workers: int = 1) -> None:
        await self._pods.wait_for_sync()
        await self._nodes.wait_for_sync()
        logger.info("%s: caches synced", self.NAME)
        while True:
            try:
                await self.gc()
            except asyncio.CancelledError:
                raise
            except ApiError as e:
                logger.info("%s: pass failed err=%r", self.NAME, e)
            except Exception:  # a periodic loop must survive one bad pass
                logger.exception("%s: pass crashed", self.NAME)
            await self._clock.sleep(self.period)

    async def gc(self) -> None:
        pods = self._pods.store.list()
        for pod in terminated_to_delete(pods, self.threshold):
            await self._force_delete(pod, "terminated pod beyond threshold")
        for pod in pods:
            if not is_deleting(pod):
                continue
            node_name = (pod.get("spec") or {}).get("nodeName")
            if not node_name:
                await self._force_delete(pod, "unscheduled terminating pod")
                continue
            node = self._nodes.store.get(node_name)
            if node is not None and not node_ready(node) and has_out_of_service_taint(node):
                await self._mark_failed(pod, "PodGC: node is out-of-service")
                await self._force_delete(pod, "terminating pod on out-of-service node")
        await self._gc_orphaned(pods)

    async def _gc_orphaned(self, pods: list[JsonDict]) -> None:
        now = self._clock.monotonic()
        known = set(self._nodes.store.keys())
        missing_now: set[str] = set()
        for pod in pods:
            n = (pod.get("spec") or {}).get("nodeName")
            if n and n not in known:
                missing_now.add(n)
        for n in list(self._missing_since):
            if n not in missing_now:
                del self._missing_since[n]
        confirmed: set[str] = set()
        for n in missing_now:
            since = self._missing_since.setdefault(n, now)
            if now - since < self.quarantine - 0.001:  # timer granularity: do not miss a pass by a hair
                continue
            try:
                await self._client.get(NODES, n)
            except NotFoundError:
                confirmed.add(n)
        for pod in pods:
            if (pod.get("spec") or {}).get("nodeName") in confirmed:
                if not is_pod_terminal(pod):
                    await self._mark_failed(pod, "PodGC: node no longer exists")
                await self._force_delete(pod, "orphaned pod")

    async def _mark_failed(self, pod: JsonDict, message: str) -> None:
        """markFailedAndDeletePodWithCondition's status half: phase Failed + DisruptionTarget."""
        body = copy.deepcopy(pod)
        status = body.setdefault("status", {})
        if status.get("phase") not in ("Succeeded", "Failed"):
            status["phase"] = "Failed"
        conds = status.setdefault("conditions", [])
        conds[:] = [c for c in conds if c.get("type") != "DisruptionTarget"]
        conds.append({"type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
                      "message": message, "lastTransitionTime": now_str(self._clock)})
        try:
            await self._client.update_status(PODS, body, read_only=True)
        except (NotFoundError, ConflictError):
            pass

    async def _force_delete(self, pod: JsonDict, why: str) -> None:
        m = meta(pod)
        logger.info("%s: force-deleting pod=%s/%s (%s)", self.NAME, m.get("namespace"), m.get("name"), why)
        try:
            await self._client.delete(PODS, m["name"], m.get("namespace"), grace_period_seconds=0,
                                      preconditions={"uid": m.get("uid")})
        except (NotFoundError, ConflictError):
            pass
