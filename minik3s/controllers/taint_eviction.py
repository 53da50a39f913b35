"""Taint eviction controller (layer L4), after kube-controller-manager's
`pkg/controller/tainteviction` (the former NoExecute taint manager).

For every pod bound to a node with NoExecute taints: a taint the pod does not tolerate evicts
it at once; otherwise it is evicted when the shortest `tolerationSeconds` among the
tolerations it uses runs out (counted from when the controller first scheduled the eviction);
tolerations without `tolerationSeconds` keep it forever. The taint going away (or the pod
gaining tolerations) cancels the eviction. Eviction = a `DisruptionTarget` condition (reason
`DeletionByTaintManager`) written to the pod status, then a graceful delete.

Data flow: Node and Pod informers -> `_process_pod` (in the handlers) -> a deadline table ->
a tick loop on the injected clock -> `pods/status` update + pod delete through the Client.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass

from minik3s.api.errors import ConflictError, NotFoundError
from minik3s.api.resources import NODES, PODS
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory, object_key
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.controllers.common import (
    is_deleting,
    matching_tolerations,
    meta,
    min_toleration_seconds,
    now_str,
)
from minik3s.controllers.node_lifecycle import NODE_NAME_INDEX, node_name_index
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)


def no_execute_taints(node: JsonDict | None) -> list[JsonDict]:
    return [t for t in ((node or {}).get("spec") or {}).get("taints") or []
            if isinstance(t, dict) and t.get("effect") == "NoExecute"]


def eviction_delay(taints: list[JsonDict], tolerations: list[JsonDict]) -> float | None:
    """Seconds until eviction: 0 = now, None = never (no taints, or tolerated forever).

    Example: taint unreachable:NoExecute, toleration for it with tolerationSeconds 300 -> 300."""
    if not taints:
        return None
    ok, used = matching_tolerations(taints, tolerations)
    if not ok:
        return 0.0
    t = min_toleration_seconds(used)
    return None if t < 0 else t


@dataclass(slots=True)
class ScheduledEviction:
    created: float
    fire_at: float
    namespace: str
    name: str
    uid: str


class TaintEvictionController:
    NAME = "taint-eviction-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None,
                 tick: float = 0.5) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._tick = tick
        self._nodes = informers.informer(NODES)
        self._pods = informers.informer(PODS)
        self._pods.add_index(NODE_NAME_INDEX, node_name_index)
        self.scheduled: dict[str, ScheduledEviction] = {}
        self.recorder = EventRecorder(client, self.NAME, clock=self._clock)
        self._nodes.add_handler(on_add=self._node_changed, on_update=self._node_updated,
                                on_delete=self._node_changed)
        self._pods.add_handler(on_add=self._process_pod, on_update=lambda _o, n: self._process_pod(n),
                               on_delete=self._pod_deleted)

    # ---- handlers

    def _node_updated(self, old: JsonDict, cur: JsonDict) -> None:
        if no_execute_taints(old) != no_execute_taints(cur):
            self._node_changed(cur)

    def _node_changed(self, node: JsonDict) -> None:
        for pod in self._pods.by_index(NODE_NAME_INDEX, str(meta(node).get("name"))):
            self._process_pod(pod)

    def _pod_deleted(self, pod: JsonDict) -> None:
        self._cancel(object_key(pod), pod, event=False)

    def _cancel(self, key: str, pod: JsonDict, *, event: bool = True) -> None:
        if self.scheduled.pop(key, None) is not None and event:
            self.recorder.event(pod, "Normal", "TaintManagerEviction", f"Cancelling deletion of Pod {key}")

    def _process_pod(self, pod: JsonDict) -> None:
        """processPodOnNode."""
        key = object_key(pod)
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name or is_deleting(pod):
            self._cancel(key, pod, event=False)
            return
        taints = no_execute_taints(self._nodes.store.get(node_name))
        delay = eviction_delay(taints, list((pod.get("spec") or {}).get("tolerations") or []))
        if delay is None:
            self._cancel(key, pod)
            return
        now = self._clock.monotonic()
        existing = self.scheduled.get(key)
        if existing is not None and existing.uid == meta(pod).get("uid"):
            existing.fire_at = existing.created + delay
            return
        m = meta(pod)
        self.scheduled[key] = ScheduledEviction(now, now + delay, m.get("namespace") or "", m.get("name") or "",
                                                str(m.get("uid") or ""))
        if delay > 0:
            logger.debug("%s: pod=%s eviction in %.0fs", self.NAME, key, delay)

    # ---- run

    async def run(self, workers: int = 1) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            await self._nodes.wait_for_sync()
            await self._pods.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            while True:
                await self.evict_due()
                await self._clock.sleep(self._tick)

    async def evict_due(self) -> None:
        now = self._clock.monotonic()
        due = [(k, s) for k, s in self.scheduled.items() if s.fire_at <= now]
        for key, s in due:
            if self.scheduled.get(key) is not s:
                continue
            del self.scheduled[key]
            try:
                await self._evict(s)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # ApiError or a transport fault: retry this pod shortly
                logger.info("%s: eviction of pod=%s failed err=%r; retrying", self.NAME, key, e)
                s.fire_at = now + 1.0
                self.scheduled.setdefault(key, s)

    async def _evict(self, s: ScheduledEviction) -> None:
        """addConditionAndDeletePod."""
        try:
            pod = await self._client.get(PODS, s.name, s.namespace)
        except NotFoundError:
            return
        if meta(pod).get("uid") != s.uid or is_deleting(pod):
            return
        key = f"{s.namespace}/{s.name}"
        self.recorder.event(pod, "Normal", "TaintManagerEviction", f"Marking for deletion Pod {key}")
        body = copy.deepcopy(pod)
        conds = body.setdefault("status", {}).setdefault("conditions", [])
        conds[:] = [c for c in conds if c.get("type") != "DisruptionTarget"]
        conds.append({"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
                      "message": "Taint manager: deleting due to NoExecute taint",
                      "lastTransitionTime": now_str(self._clock)})
        try:
            await self._client.update_status(PODS, body, read_only=True)
        except ConflictError:
            pass
        except NotFoundError:
            return
        logger.info("%s: evicting pod=%s", self.NAME, key)
        try:
            await self._client.delete(PODS, s.name, s.namespace, preconditions={"uid": s.uid})
        except (NotFoundError, ConflictError):
            pass
