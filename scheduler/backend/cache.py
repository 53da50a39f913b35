"""The scheduler cache: live NodeInfos kept up to date from events (layer L4).

Upstream: pkg/scheduler/backend/cache/cache.go. Event handlers feed node add/update/remove
and assigned-pod add/update/remove; the scheduling cycle adds *assumed* pods (the pod with
its chosen nodeName, before the bind reaches the API) so the next cycle already sees their
resources. `finish_binding` marks the bind as done, `forget_pod` rolls an assumption back;
when the informer later delivers the bound pod, `add_pod` confirms the assumption.
Assumed pods never expire as the scheduler builds the cache (upstream's
durationToExpireAssumedPod = 0); a cache built with a `ttl` forgets an assumed pod whose binding
finished more than `ttl` seconds before `cleanup_assumed_pods` (upstream's expiry, kept for its
tables).

The snapshot lists the nodes as upstream's node tree does: round-robin over zones (region and
zone labels) in the order the zones appeared, each zone's nodes in the order they were added.

Every mutation bumps the NodeInfo's generation and moves the node to the end of an
ordered "recently changed" index, so `update_snapshot` walks back only over nodes changed
since the snapshot's generation (upstream's doubly-linked list trick): with 5,000 nodes and
one pod bound since the last cycle, one NodeInfo is copied.

Pods of a terminating pod (deletionTimestamp set) keep their resources until removed.
A pod whose node is not (yet) known is kept on a placeholder NodeInfo without a node object,
which the snapshot skips until the node arrives (upstream behaves the same way).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from minik3s.api.helpers.resources import resizing
from minik3s.api.types import JsonDict
from scheduler.backend.snapshot import Snapshot
from scheduler.framework.types import ImageStateSummary, NodeInfo, PodInfo, next_generation

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _PodState:
    pod_info: PodInfo
    assumed: bool = False
    binding_finished: bool = False
    deadline: float | None = None


@dataclass(slots=True)
class Dump:
    """A copy of the cache for debugging (upstream Cache.Dump): every NodeInfo (placeholders of
    removed nodes included) cloned, and the uids of the assumed pods."""

    nodes: dict[str, NodeInfo]
    assumed_pods: set[str]


_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def zone_key(node: JsonDict) -> str:
    """Upstream utilnode.GetZoneKey: "region:\x00:zone" from the topology labels (the beta
    failure-domain ones when those are absent), "" when the node has neither."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    zone = labels.get(_ZONE)
    if zone is None:
        zone = labels.get(_BETA_ZONE, "")
    region = labels.get(_REGION)
    if region is None:
        region = labels.get(_BETA_REGION, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


@dataclass(slots=True)
class _ImageState:
    summary: ImageStateSummary
    nodes: set[str]


class Cache:
    def __init__(self, ttl: float = 0.0) -> None:
        self._ttl = ttl
        self._nodes: dict[str, NodeInfo] = {}
        # node name -> None, ordered by last change (most recent last)
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._pods: dict[str, _PodState] = {}
        self._assumed: set[str] = set()
        self._images: dict[str, _ImageState] = {}
        # version of the snapshot list's node order (nodes added, removed, moved to another
        # zone); a snapshot built at another version rebuilds its list
        self._order_version = 0
        # upstream's node tree: zone key -> node names in the order they were added (zones in
        # the order they appeared), and each known node's zone key
        self._zones: dict[str, list[str]] = {}
        self._node_zone: dict[str, str] = {}
        self._removed_since: set[str] = set()
        # confirmations that kept their node's generation: (node, assumed, stored) PodInfos the
        # next update_snapshot swaps into the snapshot's copy of the node as well
        self._swapped: list[tuple[str, PodInfo, PodInfo]] = []

    # ---- nodes ------------------------------------------------------------------------
    def add_node(self, node: JsonDict) -> NodeInfo:
        name = (node.get("metadata") or {}).get("name") or ""
        ni = self._nodes.get(name)
        if ni is None:
            ni = NodeInfo()
            self._nodes[name] = ni
            self._order_version += 1
        elif ni.node is not None:
            self._remove_node_images(name, ni)
        else:
            self._order_version += 1  # placeholder becomes a real node
        ni.set_node(node)
        self._add_node_images(name, ni, node)
        self._tree_add(name, zone_key(node))
        self._touch(name)
        return ni

    def update_node(self, old: JsonDict | None, new: JsonDict) -> NodeInfo:
        return self.add_node(new)

    def remove_node(self, node: JsonDict) -> None:
        name = (node.get("metadata") or {}).get("name") or ""
        ni = self._nodes.get(name)
        if ni is None:
            return
        self._remove_node_images(name, ni)
        self._tree_remove(name)
        if ni.pods:
            # keep a placeholder so pods still on it can be removed later (upstream keeps the NodeInfo)
            ni.node = None
            ni.generation = next_generation()
        else:
            del self._nodes[name]
        self._recent.pop(name, None)
        self._removed_since.add(name)
        self._order_version += 1
        if name in self._nodes:
            self._touch(name)

    def node_count(self) -> int:
        return len(self._node_zone)

    def _tree_add(self, name: str, zone: str) -> None:
        old = self._node_zone.get(name)
        if old == zone:
            return
        if old is not None:
            self._tree_remove(name)
        self._node_zone[name] = zone
        self._zones.setdefault(zone, []).append(name)
        self._order_version += 1

    def _tree_remove(self, name: str) -> None:
        zone = self._node_zone.pop(name, None)
        if zone is None:
            return
        names = self._zones[zone]
        names.remove(name)
        if not names:
            del self._zones[zone]
        self._order_version += 1

    def node_tree_list(self) -> list[str]:
        """The known nodes' names in upstream's node-tree order: the first node of every zone
        (zones in the order they appeared), then the second of every zone, and so on.
        Example: zone a [n1, n3], zone b [n2, n4, n5] -> n1, n2, n3, n4, n5."""
        zones = list(self._zones.values())
        if len(zones) == 1:
            return list(zones[0])
        out: list[str] = []
        depth = max((len(z) for z in zones), default=0)
        for i in range(depth):
            for z in zones:
                if i < len(z):
                    out.append(z[i])
        return out

    def get_node_info(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name)

    def node_infos(self) -> list[NodeInfo]:
        """The live NodeInfos of known nodes, in insertion order: read-only (what-if copies them)."""
        return [ni for ni in self._nodes.values() if ni.node is not None]

    def _touch(self, name: str) -> None:
        self._recent[name] = None
        self._recent.move_to_end(name)

    def _add_node_images(self, name: str, ni: NodeInfo, node: JsonDict) -> None:
        summaries: dict[str, ImageStateSummary] = {}
        for img in (node.get("status") or {}).get("images") or ():
            if not isinstance(img, dict):
                continue  # a null entry (the API decodes it as an empty ContainerImage): nothing to add
            size = int(img.get("sizeBytes") or 0)
            for image_name in img.get("names") or ():
                st = self._images.get(image_name)
                if st is None:
                    st = _ImageState(ImageStateSummary(size, 0), set())
                    self._images[image_name] = st
                if name not in st.nodes:
                    st.nodes.add(name)
                    st.summary.num_nodes = len(st.nodes)
                summaries[image_name] = st.summary
        ni.image_states = summaries

    def _remove_node_images(self, name: str, ni: NodeInfo) -> None:
        for image_name in list(ni.image_states):
            st = self._images.get(image_name)
            if st is None:
                continue
            st.nodes.discard(name)
            st.summary.num_nodes = len(st.nodes)
            if not st.nodes:
                del self._images[image_name]
        ni.image_states = {}

    def image_num_nodes(self, image_name: str) -> int:
        st = self._images.get(image_name)
        return st.summary.num_nodes if st else 0

    # ---- pods -------------------------------------------------------------------------
    def _node_for(self, name: str) -> NodeInfo:
        ni = self._nodes.get(name)
        if ni is None:
            ni = NodeInfo()
            ni.name = name
            self._nodes[name] = ni
        return ni

    def _add_to_node(self, pi: PodInfo) -> None:
        self._node_for(pi.node_name).add_pod(pi)
        self._touch(pi.node_name)

    def _remove_from_node(self, pi: PodInfo) -> None:
        ni = self._nodes.get(pi.node_name)
        if ni is None:
            return
        ni.remove_pod(pi.uid)
        if ni.node is None and not ni.pods:
            del self._nodes[pi.node_name]
            self._recent.pop(pi.node_name, None)
            return
        self._touch(pi.node_name)

    def assume_pod(self, pi: PodInfo) -> None:
        """`pi` already carries the chosen node (pi.node_name)."""
        if pi.uid in self._pods:
            raise ValueError(f"pod {pi.key}({pi.uid}) is in the cache, so can't be assumed")
        self._pods[pi.uid] = _PodState(pi, assumed=True)
        self._assumed.add(pi.uid)
        self._add_to_node(pi)

    def finish_binding(self, pi: PodInfo, now: float | None = None) -> None:
        """The bind of the assumed `pi` is done (or failed and was forgotten); with a `ttl` its
        assumption expires `ttl` seconds after `now` (time.monotonic() when not given) unless
        the bound pod confirms it first."""
        st = self._pods.get(pi.uid)
        if st is not None and st.assumed:
            st.binding_finished = True
            if self._ttl:
                st.deadline = (time.monotonic() if now is None else now) + self._ttl

    def cleanup_assumed_pods(self, now: float | None = None) -> None:
        """Forget the assumed pods whose binding finished and whose deadline is before `now`
        (upstream cleanupAssumedPods); nothing expires in a cache without a `ttl`."""
        if not self._ttl:
            return
        if now is None:
            now = time.monotonic()
        for uid in list(self._assumed):
            st = self._pods[uid]
            if st.binding_finished and st.deadline is not None and now > st.deadline:
                logger.info("assumed pod expired pod=%s node=%s", st.pod_info.key, st.pod_info.node_name)
                self._remove_from_node(st.pod_info)
                del self._pods[uid]
                self._assumed.discard(uid)

    def forget_pod(self, pi: PodInfo) -> None:
        st = self._pods.get(pi.uid)
        if st is None:
            return
        if st.pod_info.node_name != pi.node_name:
            raise ValueError(f"pod {pi.key} was assumed on {st.pod_info.node_name} but assigned to {pi.node_name}")
        if st.assumed:
            self._remove_from_node(st.pod_info)
            del self._pods[pi.uid]
            self._assumed.discard(pi.uid)

    def is_assumed(self, uid: str) -> bool:
        return uid in self._assumed

    def add_pod(self, pod: JsonDict) -> None:
        """An assigned pod observed from the API (confirms an assumption if there was one)."""
        st = self._pods.get((pod.get("metadata") or {}).get("uid") or "")
        if st is not None and st.assumed:
            prev = st.pod_info
            pi = reparsed(prev, pod)
            if prev.node_name != pi.node_name:
                logger.info("pod was added to a different node than assumed pod=%s assumed=%s actual=%s",
                            pi.key, prev.node_name, pi.node_name)
            # a shared parse means an equal spec (nodeName included): `reparsed` compared it
            ni = self._nodes.get(pi.node_name)
            if (ni is not None and pi.requests is prev.requests and confirms_alike(prev.pod, pod)
                    and ni.replace_pod(prev, pi)):
                self._swapped.append((pi.node_name, prev, pi))
            else:
                self._remove_from_node(prev)
                self._add_to_node(pi)
            self._assumed.discard(pi.uid)
            self._pods[pi.uid] = _PodState(pi)
            return
        if st is not None:
            self._update(st, reparsed(st.pod_info, pod))
            return
        pi = PodInfo(pod)
        self._pods[pi.uid] = _PodState(pi)
        self._add_to_node(pi)

    def update_pod(self, old: JsonDict | None, new: JsonDict) -> None:
        st = self._pods.get((new.get("metadata") or {}).get("uid") or "")
        if st is None:
            # upstream: "pod is not added to scheduler cache, so cannot be updated"; the
            # informer always delivers a pod's add (which adds it here) before its updates
            logger.info("pod to update is not in the cache pod=%s/%s",
                        (new.get("metadata") or {}).get("namespace"), (new.get("metadata") or {}).get("name"))
            return
        if st.assumed:
            # the informer saw the bound pod as an update (it arrived unassigned first)
            self.add_pod(new)
            return
        self._update(st, reparsed(st.pod_info, new))

    def _update(self, st: _PodState, pi: PodInfo) -> None:
        self._remove_from_node(st.pod_info)
        st.pod_info = pi
        self._add_to_node(pi)

    def remove_pod(self, pod: JsonDict) -> None:
        uid = (pod.get("metadata") or {}).get("uid") or ""
        st = self._pods.pop(uid, None)
        if st is None:
            return
        self._assumed.discard(uid)
        self._remove_from_node(st.pod_info)

    def pod_count(self) -> int:
        return len(self._pods)

    def dump(self) -> Dump:
        return Dump({name: ni.clone() for name, ni in self._nodes.items()}, set(self._assumed))

    def get_pod(self, uid: str) -> PodInfo | None:
        st = self._pods.get(uid)
        return st.pod_info if st else None

    # ---- snapshot ---------------------------------------------------------------------
    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Copy NodeInfos changed since `snapshot.generation` into it, in place."""
        gen = snapshot.generation
        new_gen = gen
        affinity_changed = False
        rebuild_list = False
        smap = snapshot.node_info_map
        changed: list[str] = []
        for name in reversed(self._recent):
            ni = self._nodes.get(name)
            if ni is None:
                continue
            if ni.generation <= gen:
                break
            if ni.generation > new_gen:
                new_gen = ni.generation
            if ni.node is None:
                if smap.pop(name, None) is not None:
                    rebuild_list = True
                continue
            existing = smap.get(name)
            if existing is None:
                smap[name] = ni.clone()
                rebuild_list = True
                affinity_changed = True
                continue
            if (bool(existing.pods_with_affinity) != bool(ni.pods_with_affinity)
                    or bool(existing.pods_with_required_anti_affinity)
                    != bool(ni.pods_with_required_anti_affinity)):
                affinity_changed = True
            ni.clone_into(existing)  # in place: the snapshot's list and map keep the object
            changed.append(name)
        if self._swapped:
            # a node copied above already holds the stored PodInfo: replace_pod finds nothing
            for name, assumed, stored in self._swapped:
                copy = smap.get(name)
                if copy is not None:
                    copy.replace_pod(assumed, stored)
            self._swapped.clear()
        if self._removed_since:
            for name in self._removed_since:
                ni = self._nodes.get(name)
                if (ni is None or ni.node is None) and smap.pop(name, None) is not None:
                    rebuild_list = True
            self._removed_since.clear()
        rebuild_list = (rebuild_list or len(smap) != len(snapshot.node_info_list)
                        or snapshot.order_version != self._order_version)
        if rebuild_list:
            # the node tree's order (zones round-robin; stable across cycles)
            snapshot.node_info_list = [smap[n] for n in self.node_tree_list() if n in smap]
            snapshot.order_version = self._order_version
            affinity_changed = True
        if affinity_changed:
            snapshot.rebuild_affinity_lists()
        snapshot.generation = new_gen
        snapshot.record_changes(changed, structural=rebuild_list)


_BINDING_META = frozenset(("resourceVersion", "managedFields"))


def confirms_alike(assumed: JsonDict, bound: JsonDict) -> bool:
    """Whether `bound` (the pod as the API stored its binding) differs from `assumed` (the
    cycle's copy with spec.nodeName set) only where the binding writes and no plugin reads:
    metadata.resourceVersion, metadata.managedFields and the PodScheduled condition. The
    caller has checked the spec and labels (`reparsed` shared the parse). Then the node's
    aggregate is unchanged and its NodeInfo keeps its generation: the next cycle neither copies
    nor re-scores the node, and update_snapshot swaps the stored PodInfo into the snapshot's copy
    in place (upstream's updatePod removes and re-adds the pod: nothing a plugin reads changes
    but the pod object itself)."""
    if assumed.keys() != bound.keys():
        return False
    for k, v in bound.items():
        if k == "spec":
            continue
        w = assumed[k]
        if v is w:
            continue
        if k == "metadata":
            if not (isinstance(v, dict) and isinstance(w, dict)) or v.keys() - _BINDING_META != w.keys() - _BINDING_META:
                return False
            if any(mv != w[mk] for mk, mv in v.items() if mk not in _BINDING_META):
                return False
        elif k == "status":
            if not (isinstance(v, dict) and isinstance(w, dict)) or v.keys() - {"conditions"} != w.keys() - {"conditions"}:
                return False
            if any(sv != w[sk] for sk, sv in v.items() if sk != "conditions"):
                return False
            if _conditions_but_scheduled(v) != _conditions_but_scheduled(w):
                return False
        elif v != w:
            return False
    return True


def _conditions_but_scheduled(status: JsonDict) -> list[Any]:
    conds = status.get("conditions")
    if not isinstance(conds, list):
        return [conds] if conds is not None else []
    return [c for c in conds if not (isinstance(c, dict) and c.get("type") == "PodScheduled")]


def reparsed(prev: PodInfo, pod: JsonDict) -> PodInfo:
    """The PodInfo of `pod`, a newer version of `prev`'s pod (the bound pod confirming its
    assumption, a status update). Everything PodInfo parses comes from the spec, the labels, the
    name and namespace: when those are equal, the parsed fields (requests, affinity terms, host
    ports, priority) are `prev`'s, shared (PodInfos are immutable) instead of parsed again; the
    per-PodInfo memo of plugins starts empty, as on a new PodInfo. Otherwise a full parse."""
    meta = pod.get("metadata") or {}
    prev_pod = prev.pod
    prev_meta = prev_pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    if (pod.get("spec") != prev_pod.get("spec") or labels != prev.labels
            or meta.get("name") != prev_meta.get("name") or meta.get("namespace") != prev_meta.get("namespace")
            or resizing(pod) or resizing(prev_pod)):
        # (a resizing container counts its status resources too: requests follow the status)
        return PodInfo(pod)
    out = prev.sharing(pod)
    out.labels = labels
    out._extra = None
    return out


