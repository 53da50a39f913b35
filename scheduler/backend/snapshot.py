"""Snapshot: the read-only view of the cluster one scheduling cycle works on (layer L4).

Upstream: pkg/scheduler/backend/cache/snapshot.go. The cache refreshes it before each cycle
with `Cache.update_snapshot`, which copies only NodeInfos whose generation changed since the
snapshot's `generation` and updates them *in place*, so the node list order (and the list
objects plugins hold during the cycle) stays stable. Plugins reach it via `handle.snapshot()`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from minik3s.api.types import JsonDict
from scheduler.framework.node_arrays import NodeArrays
from scheduler.framework.types import ImageStateSummary, NodeInfo, PodInfo, pvc_keys

JOURNAL_LENGTH = 4096


class Snapshot:
    __slots__ = ("node_info_map", "node_info_list", "have_pods_with_affinity_list",
                 "have_pods_with_required_anti_affinity_list", "generation", "order_version",
                 "tracked", "change_seq", "structure_seq", "_journal", "_affinity_stale", "_arrays",
                 "_pvc_memo")

    def __init__(self) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self.node_info_list: list[NodeInfo] = []
        self.have_pods_with_affinity_list: list[NodeInfo] = []
        self.have_pods_with_required_anti_affinity_list: list[NodeInfo] = []
        self.generation = 0
        # the cache's node-order version the list was last built at (a differing one rebuilds it)
        self.order_version = -1
        # (change_seq, len of the list, used PVC set) of the last `used_pvc_set`
        self._pvc_memo: tuple[int, int, frozenset[str]] | None = None
        self._affinity_stale = False
        # change journal (for plugins that keep per-node aggregates across cycles, e.g.
        # PodTopologySpread's domain counts): only a snapshot the cache refreshes is `tracked`;
        # a hand-built one never answers `nodes_changed_since`
        self.tracked = False
        self.change_seq = 0
        self.structure_seq = 0
        self._journal: deque[tuple[int, list[str]]] = deque(maxlen=JOURNAL_LENGTH)
        self._arrays: NodeArrays | None = None

    def record_changes(self, names: list[str], *, structural: bool) -> None:
        """Called by the cache after a refresh: `names` NodeInfos were updated in place;
        `structural` when nodes were added or removed (the node list changed)."""
        self.tracked = True
        if not names and not structural:
            return
        self.change_seq += 1
        if structural:
            self.structure_seq = self.change_seq
        self._journal.append((self.change_seq, names))

    def mark_structural_change(self) -> None:
        """The node list was changed outside the cache (what-if runs on a subset): aggregates
        keyed on an earlier `change_seq` must be rebuilt."""
        self.change_seq += 1
        self.structure_seq = self.change_seq

    def nodes_changed_since(self, seq: int) -> set[str] | None:
        """Names of nodes updated after refresh `seq`, or None when that is unknown (untracked
        snapshot, nodes added/removed since, or the journal no longer reaches back that far).
        Example: refreshes 5: [n1], 6: [n2, n1] -> since 4: {n1, n2}; since 6: set()."""
        if not self.tracked or self.structure_seq > seq or seq > self.change_seq:
            return None
        if seq == self.change_seq:
            return set()
        journal = self._journal
        if not journal or journal[0][0] > seq + 1:
            return None
        out: set[str] = set()
        for s, names in reversed(journal):
            if s <= seq:
                break
            out.update(names)
        return out

    @property
    def used_pvc_set(self) -> frozenset[str]:
        """"namespace/claim" of every claim some pod of the snapshot's nodes uses (upstream
        Snapshot.usedPVCSet), gathered on demand (few cycles ask) and remembered until the next
        refresh."""
        memo = self._pvc_memo
        key = (self.change_seq, len(self.node_info_list))
        if memo is not None and memo[:2] == key and self.tracked:
            return memo[2]
        out: set[str] = set()
        for ni in self.node_info_list:
            for pi in ni.pods:
                out.update(pvc_keys(pi.pod))
        used = frozenset(out)
        self._pvc_memo = (*key, used)
        return used

    def is_pvc_used_by_pods(self, key: str) -> bool:
        return key in self.used_pvc_set

    @classmethod
    def from_objects(cls, nodes: Iterable[JsonDict], pods: Iterable[JsonDict] = ()) -> Snapshot:
        """A standalone snapshot (tests, what-if simulations): assigned pods land on their nodes,
        each node's image states count the given nodes holding the image (upstream NewSnapshot)."""
        s = cls()
        node_list = list(nodes)
        existence = create_image_existence_map(node_list)
        for n in node_list:
            ni = NodeInfo(n)
            ni.image_states = get_node_image_states(n, existence)
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
        """Mark the affinity node lists stale; they are rebuilt on first use (most cycles never
        ask for them, and a rebuild walks every node)."""
        self._affinity_stale = True

    def _refresh_affinity_lists(self) -> None:
        self._affinity_stale = False
        self.have_pods_with_affinity_list = [n for n in self.node_info_list if n.pods_with_affinity]
        self.have_pods_with_required_anti_affinity_list = [
            n for n in self.node_info_list if n.pods_with_required_anti_affinity]

    def node_arrays(self) -> NodeArrays:
        """The node list's numbers as NumPy columns (row i = node_info_list[i]), brought up to date
        with the change journal first; see scheduler/framework/node_arrays.py."""
        arrays = self._arrays
        if arrays is None:
            arrays = self._arrays = NodeArrays()
        arrays.sync(self)
        return arrays

    def node_infos(self) -> list[NodeInfo]:
        return self.node_info_list

    def get(self, name: str) -> NodeInfo | None:
        return self.node_info_map.get(name)

    def num_nodes(self) -> int:
        return len(self.node_info_list)

    def have_pods_with_affinity(self) -> list[NodeInfo]:
        if self._affinity_stale:
            self._refresh_affinity_lists()
        return self.have_pods_with_affinity_list

    def known_without_affinity_pods(self, *, required_anti: bool) -> bool:
        """True when the affinity lists are up to date and no node holds a pod with (anti-)affinity
        terms (`required_anti`: with required anti-affinity terms), without rebuilding stale lists:
        False means "unknown or some", and the caller takes its general path."""
        if self._affinity_stale:
            return False
        return not (self.have_pods_with_required_anti_affinity_list if required_anti
                    else self.have_pods_with_affinity_list)

    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        if self._affinity_stale:
            self._refresh_affinity_lists()
        return self.have_pods_with_required_anti_affinity_list


def create_image_existence_map(nodes: Iterable[JsonDict]) -> dict[str, set[str]]:
    """Image name -> names of the nodes whose status lists it (upstream createImageExistenceMap)."""
    out: dict[str, set[str]] = {}
    for node in nodes:
        name = (node.get("metadata") or {}).get("name") or ""
        for img in (node.get("status") or {}).get("images") or ():
            for image_name in img.get("names") or ():
                out.setdefault(image_name, set()).add(name)
    return out


def get_node_image_states(node: JsonDict, existence: dict[str, set[str]]) -> dict[str, ImageStateSummary]:
    """The node's images -> (size, how many nodes hold it per `existence`) (upstream
    getNodeImageStates)."""
    out: dict[str, ImageStateSummary] = {}
    for img in (node.get("status") or {}).get("images") or ():
        size = int(img.get("sizeBytes") or 0)
        for image_name in img.get("names") or ():
            out[image_name] = ImageStateSummary(size, len(existence.get(image_name, ())))
    return out


def create_used_pvc_set(pods: Iterable[JsonDict]) -> set[str]:
    """"namespace/claim" of the claims the assigned pods among `pods` use (upstream
    createUsedPVCSet; pods without a node are left out)."""
    out: set[str] = set()
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName"):
            out.update(pvc_keys(pod))
    return out
