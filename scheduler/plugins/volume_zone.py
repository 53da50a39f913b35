"""VolumeZone (PreFilter, Filter): a pod's bound PersistentVolumes must be in the node's zone and
region (upstream plugins/volumezone, v1.33).

PreFilter resolves each claim of the pod (persistentVolumeClaim volumes only, as upstream):
- a bound claim's PV contributes its topology labels `topology.kubernetes.io/zone|region` and
  `failure-domain.beta.kubernetes.io/zone|region`; a value may name several zones joined by
  `__` ("us-west1-a__us-west1-b"), a value with an empty member is ignored;
- an unbound claim of a WaitForFirstConsumer class is skipped (VolumeBinding decides);
- an unbound claim without a class, of a class without volumeBindingMode, or of an Immediate
  class, and a claim, class or PV that does not exist: UnschedulableAndUnresolvable with
  upstream's message (the listers' NotFound text for missing objects).
No topology collected -> Skip.

Filter: a node carrying none of the four labels passes (single-zone clusters); otherwise every
collected (label, values) needs the node's value of that label (or, for a beta label, of its GA
twin) among the values -> else UnschedulableAndUnresolvable "node(s) had no available volume zone".

Example: PV labels {topology.kubernetes.io/zone: "a__b"}; node zone "b" passes, zone "c" fails,
a node without zone or region labels passes; PV beta zone "a" and node GA zone "a" passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minik3s.api.helpers.storage_volume import VOLUME_BINDING_WAIT, claim_class
from minik3s.api.types import JsonDict
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    Handle,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    Status,
)
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import SUCCESS, as_pod_info
from scheduler.plugins.pod_volumes import NotFound, StorageListers, names_claim, pod_volumes

ERR_REASON_CONFLICT = "node(s) had no available volume zone"
PRE_FILTER_STATE_KEY = "PreFilter" + names.VOLUME_ZONE

LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)
_GA = {LABEL_BETA_ZONE: LABEL_ZONE, LABEL_BETA_REGION: LABEL_REGION}

# (PV name, label key, allowed values)
PVTopology = tuple[str, str, frozenset[str]]


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """A zone label value as a set (upstream LabelZonesToSet): members split on "__" and
    trimmed; None when a member is empty (upstream's error, the label is then ignored)."""
    out = set()
    for z in value.split("__"):
        z = z.strip()
        if not z:
            return None
        out.add(z)
    return frozenset(out)


def pv_topologies(pv: JsonDict) -> list[PVTopology]:
    """The PV's topology constraints, in upstream's label order."""
    labels = (pv.get("metadata") or {}).get("labels") or {}
    name = (pv.get("metadata") or {}).get("name") or ""
    out: list[PVTopology] = []
    for key in TOPOLOGY_LABELS:
        v = labels.get(key)
        if v is None:
            continue
        values = label_zones_to_set(v)
        if values is not None:
            out.append((name, key, values))
    return out


class VolumeZone(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = names.VOLUME_ZONE

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        self._listers = StorageListers(handle)
        self._listers.warm("pvc", "pv", "sc")

    def _topologies(self, pod: PodInfo) -> tuple[list[PVTopology], Status]:
        out: list[PVTopology] = []
        for name, eph in pod_volumes(pod).claims:
            if eph:
                continue
            if not name:
                return [], Status.unresolvable("PersistentVolumeClaim had no name", plugin=self.NAME)
            try:
                pvc = self._listers.get("pvc", name, pod.namespace)
                pv_name = (pvc.get("spec") or {}).get("volumeName") or ""
                if not pv_name:
                    sc_name = claim_class(pvc)
                    if not sc_name:
                        return [], Status.unresolvable(
                            "PersistentVolumeClaim had no pv name and storageClass name", plugin=self.NAME)
                    mode = self._listers.get("sc", sc_name).get("volumeBindingMode")
                    if mode is None:
                        return [], Status.unresolvable(
                            f'VolumeBindingMode not set for StorageClass "{sc_name}"', plugin=self.NAME)
                    if mode == VOLUME_BINDING_WAIT:
                        continue  # unbound: VolumeBinding picks the volume
                    return [], Status.unresolvable("PersistentVolume had no name", plugin=self.NAME)
                pv = self._listers.get("pv", pv_name)
            except NotFound as e:
                return [], Status.unresolvable(str(e), plugin=self.NAME)
            out.extend(pv_topologies(pv))
        return out, SUCCESS

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        if not pod_volumes(pod).has_claims:
            return None, Status.skip()
        topologies, st = self._topologies(pod)
        if not st.is_success():
            return None, st
        if not topologies:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, topologies)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        topologies: list[PVTopology] | None = state.get(PRE_FILTER_STATE_KEY)
        if topologies is None:  # PreFilter did not run (upstream recomputes)
            if not pod_volumes(pod).has_claims:
                return SUCCESS
            topologies, st = self._topologies(pod)
            if not st.is_success():
                return st
        labels = node.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return SUCCESS  # a node without zone labels: single-zone cluster
        for _pv, key, values in topologies:
            v = labels.get(key)
            if v is None:
                v = labels.get(_GA.get(key, key))
            if v is None or v not in values:
                return Status.unresolvable(ERR_REASON_CONFLICT, plugin=self.NAME)
        return SUCCESS

    # ---- queueing -------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # queueing hints on (v1.33's default): node Add and label updates only
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD), self._after_sc_added),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM,
                                              ActionType.ADD | ActionType.UPDATE), self._after_pvc_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
                                 self._after_pv_change),
        ]

    @staticmethod
    def _after_pvc_change(pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue when the added or updated claim is one the pod names."""
        uses = names_claim(as_pod_info(pod), new, ephemeral=False)
        return QueueingHint.SKIP if uses is False else QueueingHint.QUEUE

    @staticmethod
    def _after_sc_added(pod: Any, old: Any, new: Any) -> QueueingHint:
        """Only a new WaitForFirstConsumer class can make an unbound claim acceptable."""
        if not isinstance(new, dict):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE if new.get("volumeBindingMode") == VOLUME_BINDING_WAIT else QueueingHint.SKIP

    @staticmethod
    def _after_pv_change(pod: Any, old: Any, new: Any) -> QueueingHint:
        """A new PV may be the one a claim waits for; an updated one matters when its topology
        labels changed."""
        if not isinstance(new, dict) or (old is not None and not isinstance(old, dict)):
            return QueueingHint.QUEUE
        if old is None:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE if pv_topologies(old) != pv_topologies(new) else QueueingHint.SKIP
