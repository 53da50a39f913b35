"""TTL controller (layer L4), after kube-controller-manager's `pkg/controller/ttl`.

Every Node carries `node.alpha.kubernetes.io/ttl`: how long (seconds) its kubelet may cache
the Secrets and ConfigMaps its pods use, by cluster size. The size steps have hysteresis
(ttlBoundaries): 0 s up to 100 nodes, 15 s from 101 (back at 0 below 90), 30 s from 501
(below 450: 15), 60 s from 1,001 (below 900: 30), 300 s from 2,001 (below 1,800: 60).

Data flow: Node informer -> add/delete adjust the node count and the desired TTL; every add and
update enqueues the node -> `sync(name)` patches the annotation when it differs (a steady state
writes nothing).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from minik3s.api.errors import NotFoundError
from minik3s.api.resources import NODES
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import meta, run_workers

logger = logging.getLogger(__name__)

ANNOTATION_TTL = "node.alpha.kubernetes.io/ttl"  # v1.ObjectTTLAnnotationKey


@dataclass(frozen=True, slots=True)
class TTLBoundary:
    size_min: int
    size_max: int
    ttl_seconds: int


TTL_BOUNDARIES: tuple[TTLBoundary, ...] = (
    TTLBoundary(0, 100, 0),
    TTLBoundary(90, 500, 15),
    TTLBoundary(450, 1000, 30),
    TTLBoundary(900, 2000, 60),
    TTLBoundary(1800, 2**31 - 1, 300),
)


class TTLController:
    """ttl-controller: the node count drives one desired TTL for every node."""

    NAME = "ttl-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory) -> None:
        self._client = client
        self._nodes = informers.informer(NODES)
        self.queue = WorkQueue()
        self.node_count = 0
        self.boundary_step = 0
        self.desired_ttl_seconds = 0
        self._nodes.add_handler(on_add=self._add_node, on_update=lambda _o, n: self._enqueue(n),
                                on_delete=self._delete_node)

    def _enqueue(self, node: JsonDict) -> None:
        self.queue.add(str(meta(node).get("name")))

    def _add_node(self, node: JsonDict) -> None:
        """addNode: one more node; past the step's sizeMax the next step's TTL."""
        self.node_count += 1
        if self.node_count > TTL_BOUNDARIES[self.boundary_step].size_max:
            self.boundary_step += 1
            self.desired_ttl_seconds = TTL_BOUNDARIES[self.boundary_step].ttl_seconds
        self._enqueue(node)

    def _delete_node(self, _node: JsonDict) -> None:
        """deleteNode: one node fewer; below the step's sizeMin the previous step's TTL."""
        self.node_count -= 1
        if self.node_count < TTL_BOUNDARIES[self.boundary_step].size_min:
            self.boundary_step -= 1
            self.desired_ttl_seconds = TTL_BOUNDARIES[self.boundary_step].ttl_seconds

    async def run(self, workers: int = 5) -> None:
        await self._nodes.wait_for_sync()
        logger.info("%s: caches synced", self.NAME)
        await run_workers(self.queue, self.sync, workers=workers, name=self.NAME)

    async def sync(self, name: str) -> None:
        """updateNodeIfNeeded: patch the annotation unless it already holds the desired TTL."""
        node = self._nodes.store.get(name)
        if node is None:
            return
        desired = self.desired_ttl_seconds
        if _int_annotation(node, ANNOTATION_TTL) == desired:
            return
        try:
            await self._client.patch(NODES, name, {"metadata": {"annotations": {ANNOTATION_TTL: str(desired)}}},
                                     patch_type="strategic", read_only=True)
        except NotFoundError:
            return
        logger.debug("%s: node=%s ttl=%ds", self.NAME, name, desired)


def _int_annotation(node: JsonDict, key: str) -> int | None:
    raw = (meta(node).get("annotations") or {}).get(key)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None
