"""VolumeRestrictions (PreFilter, PreFilterExtensions, Filter): volumes that cannot be shared
(upstream plugins/volumerestrictions, v1.33).

Two rules:
- Disk conflicts (Filter, per node): the same GCE PD (unless every mount is read-only), the same
  AWS EBS volume ID (always), the same RBD image (a shared Ceph monitor, same pool and image,
  unless all read-only) or the same iSCSI IQN (unless all read-only) used by a pod already on the
  node -> Unschedulable "node(s) had no available disk".
- ReadWriteOncePod claims (PreFilter counts, Filter rejects): a claim of the pod whose access
  modes include ReadWriteOncePod and that some scheduled or assumed pod anywhere in the cluster
  already uses -> Unschedulable on every node (preemption may free it: AddPod/RemovePod adjust
  the count for the pods a dry run adds or removes). A claim the pod names that does not exist
  fails PreFilter UnschedulableAndUnresolvable with the lister's NotFound message.
PreFilter skips the plugin for a pod with no conflict-type volume and no claim in use.

Example: pod p uses RWOP claim "db"; pod q on node n2 uses "db" too -> p is rejected on n1 and n2
with the RWOP reason; evicting q in a preemption dry run (RemovePod) brings the count to 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
from scheduler.plugins.pod_volumes import NotFound, StorageListers, names_claim, pod_volumes, volumes_of

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
PRE_FILTER_STATE_KEY = "PreFilter" + names.VOLUME_RESTRICTIONS
READ_WRITE_ONCE_POD = "ReadWriteOncePod"


@dataclass(slots=True)
class _State:
    """The pod's ReadWriteOncePod claim names and how many references to them scheduled pods
    hold."""

    rwop_claims: frozenset[str]
    conflicting_refs: int

    def clone(self) -> _State:
        return _State(self.rwop_claims, self.conflicting_refs)

    def refs_of(self, pi: PodInfo) -> int:
        """References of `pi` to the claims, by claim name alone: upstream's
        conflictingPVCRefCountForPod compares names, not namespaces."""
        if not self.rwop_claims:
            return 0
        return sum(1 for name, eph in pod_volumes(pi).claims if not eph and name in self.rwop_claims)


def _is_volume_conflict(vol: dict[str, Any], other: dict[str, Any]) -> bool:
    """Whether `vol` conflicts with any volume of pod `other` (upstream isVolumeConflict)."""
    gce, ebs, iscsi, rbd = (vol.get("gcePersistentDisk"), vol.get("awsElasticBlockStore"),
                            vol.get("iscsi"), vol.get("rbd"))
    for ev in (other.get("spec") or {}).get("volumes") or ():
        if gce is not None:
            egce = ev.get("gcePersistentDisk")
            if egce is not None and gce.get("pdName") == egce.get("pdName") \
                    and not (gce.get("readOnly") and egce.get("readOnly")):
                return True
        if ebs is not None:
            eebs = ev.get("awsElasticBlockStore")
            if eebs is not None and ebs.get("volumeID") == eebs.get("volumeID"):
                return True
        if iscsi is not None:
            eiscsi = ev.get("iscsi")
            if eiscsi is not None and iscsi.get("iqn") == eiscsi.get("iqn") \
                    and not (iscsi.get("readOnly") and eiscsi.get("readOnly")):
                return True
        if rbd is not None:
            erbd = ev.get("rbd")
            if erbd is not None and set(rbd.get("monitors") or ()) & set(erbd.get("monitors") or ()) \
                    and (rbd.get("pool") or "rbd") == (erbd.get("pool") or "rbd") \
                    and rbd.get("image") == erbd.get("image") \
                    and not (rbd.get("readOnly") and erbd.get("readOnly")):
                return True
    return False


def _needs_check(vol: dict[str, Any]) -> bool:
    return any(vol.get(k) is not None for k in ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi"))


def satisfies_volume_conflicts(pod: dict[str, Any], pods: Sequence[PodInfo]) -> bool:
    """No conflict-type volume of `pod` conflicts with a volume of `pods` (upstream
    satisfyVolumeConflicts); pods without such volumes are passed over."""
    for vol in (pod.get("spec") or {}).get("volumes") or ():
        if not _needs_check(vol):
            continue
        for ev in pods:
            if pod_volumes(ev).any_volume and _is_volume_conflict(vol, ev.pod):
                return False
    return True


class VolumeRestrictions(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = names.VOLUME_RESTRICTIONS

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        self._listers = StorageListers(handle)
        self._listers.warm("pvc")

    # ---- PreFilter ------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        vols = pod_volumes(pod)
        if not vols.any_volume:
            return None, Status.skip()
        rwop: set[str] = set()
        for name, eph in vols.claims:
            if eph:
                continue
            try:
                pvc = self._listers.get("pvc", name, pod.namespace)
            except NotFound as e:
                return None, Status.unresolvable(str(e), plugin=self.NAME)
            if READ_WRITE_ONCE_POD in ((pvc.get("spec") or {}).get("accessModes") or ()):
                rwop.add(name)
        refs = self._claims_in_use(pod.namespace, rwop) if rwop else 0
        if not vols.conflict and refs == 0:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _State(frozenset(rwop), refs))
        return None, SUCCESS

    def _claims_in_use(self, namespace: str, claims: set[str]) -> int:
        """How many of `claims` some scheduled or assumed pod uses (upstream counts each claim
        the snapshot's StorageInfos report in use once: at most one pod may hold an RWOP claim)."""
        snap = self.handle.snapshot() if self.handle is not None else None
        if snap is None:
            return 0
        used: set[str] = set()
        for ni in snap.node_infos():
            for pi in ni.pods:
                if pi.namespace != namespace:
                    continue
                for name, eph in pod_volumes(pi).claims:
                    if not eph and name in claims:
                        used.add(name)
        return len(used)

    def has_pre_filter_extensions(self) -> bool:
        return True

    def add_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _State):
            return Status.as_error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState', plugin=self.NAME)
        s.conflicting_refs += s.refs_of(pod_to_add)
        return SUCCESS

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo,
                   node: NodeInfo) -> Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _State):
            return Status.as_error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState', plugin=self.NAME)
        s.conflicting_refs -= s.refs_of(pod_to_remove)
        return SUCCESS

    # ---- Filter ---------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if pod_volumes(pod).conflict and not satisfies_volume_conflicts(pod.pod, node.pods):
            return Status.unschedulable(ERR_REASON_DISK_CONFLICT, plugin=self.NAME)
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _State):
            return Status.as_error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState', plugin=self.NAME)
        if s.conflicting_refs > 0:
            return Status.unschedulable(ERR_REASON_RWOP_CONFLICT, plugin=self.NAME)
        return SUCCESS

    # ---- queueing -------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # queueing hints on (as v1.33's default): a node add is the only node event that matters
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), self._after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                                 self._after_pvc_added),
        ]

    @staticmethod
    def _after_pod_deleted(pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue when the deleted pod held a disk the pod conflicts with, or shares a claim name
        with it (the claim may be ReadWriteOncePod; upstream does not look the claim up)."""
        deleted = old.pod if isinstance(old, PodInfo) else old
        if not isinstance(deleted, dict):
            return QueueingHint.QUEUE
        me = as_pod_info(pod)
        if ((deleted.get("metadata") or {}).get("namespace") or "") != me.namespace:
            return QueueingHint.SKIP
        if pod_volumes(me).conflict and not satisfies_volume_conflicts(me.pod, [PodInfo(deleted)]):
            return QueueingHint.QUEUE
        mine = {name for name, eph in pod_volumes(me).claims if not eph}
        if any(not eph and name in mine for name, eph in volumes_of(deleted).claims):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def _after_pvc_added(pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue when the added claim is one the pod names (it was missing at PreFilter)."""
        uses = names_claim(as_pod_info(pod), new, ephemeral=False)
        return QueueingHint.SKIP if uses is False else QueueingHint.QUEUE
