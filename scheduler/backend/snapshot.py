"""Snapshot: the read-only view of the cluster one scheduling cycle works on (layer L4).

Upstream: pkg/scheduler/backend/cache/snapshot.go. The cache refreshes it before each cycle
with `Cache.update_snapshot`, which copies only NodeInfos whose generation changed since the
snapshot's `generation` and updates them *in place*, so the node list order (and the list
objects plugins hold during the cycle) stays stable. Plugins reach it via `handle.snapshot()`.
"""

from __future__ import annotations

from collections.abc import Iterable

from minik3s.api.types import JsonDict
from scheduler.framework.types import NodeInfo, PodInfo


class Snapshot:
    __slots__ = ("node_info_map", "node_info_list", "have_pods_with_affinity_list",
                 "have_pods_with_required_anti_affinity_list", "generation", "used_pvc_set")

    def __init__(self) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self.node_info_list: list[NodeInfo] = []
        self.have_pods_with_affinity_list: list[NodeInfo] = []
        self.have_pods_with_required_anti_affinity_list: list[NodeInfo] = []
        self.generation = 0
        self.used_pvc_set: set[str] = set()

    @classmethod
    def from_objects(cls, nodes: Iterable[JsonDict], pods: Iterable[JsonDict] = ()) -> Snapshot:
        """A standalone snapshot (tests, what-if simulations): assigned pods land on their nodes."""
        s = cls()
        for n in nodes:
            ni = NodeInfo(n)
            s.node_info_map[ni.name] = ni
            s.node_info_list.append(ni)
        for p in pods:
            pi = PodInfo(p)
            ni2 = s.node_info_map.get(pi.node_name)
            if ni2 is not None:
                ni2.add_pod(pi)
        s.rebuild_affinity_lists()
        return s

    def rebuild_affinity_lists(self) -> None:
        self.have_pods_with_affinity_list = [n for n in self.node_info_list if n.pods_with_affinity]
        self.have_pods_with_required_anti_affinity_list = [
            n for n in self.node_info_list if n.pods_with_required_anti_affinity]

    def node_infos(self) -> list[NodeInfo]:
        return self.node_info_list

    def get(self, name: str) -> NodeInfo | None:
        return self.node_info_map.get(name)

    def num_nodes(self) -> int:
        return len(self.node_info_list)

    def have_pods_with_affinity(self) -> list[NodeInfo]:
        return self.have_pods_with_affinity_list

    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        return self.have_pods_with_required_anti_affinity_list
