"""NodeVolumeLimits (PreFilter, Filter): a node may attach at most CSINode's
`spec.drivers[].allocatable.count` volumes of each CSI driver (upstream plugins/nodevolumelimits
csi.go, the CSILimits plugin, v1.33).

What counts as a volume of a driver, keyed by "<driver>/<volume handle>" so one volume used by
several pods counts once:
- a claim (persistentVolumeClaim, or the `<pod>-<volume>` claim of a generic ephemeral volume,
  which must be owned by the pod) bound to a CSI PV: its driver and volumeHandle; bound to an
  in-tree PV of a migrated plugin (AWS EBS, GCE PD, Azure Disk, Cinder, Portworx) on a node
  that has a CSINode: the CSI driver that plugin migrated to and the translated handle;
- an unbound claim (or one whose PV is missing): its StorageClass's provisioner (translated
  when in-tree) with a handle made of a random prefix and the claim's key; no class or a
  missing class: not counted;
- an inline in-tree volume of a migrated plugin (CSINode present): translated as a PV is;
- VolumeAttachments to the node (upstream since v1.32) whose volume no pod on the node uses:
  volumes still attached after their pod went away.
Filter: the pod's new volumes (those no pod on the node already uses), per driver, plus the
node's attached ones must not exceed the driver's count -> else Unschedulable "node(s) exceed
max volume count". A node without a CSINode or without counts passes. A claim the pod names that
does not exist is UnschedulableAndUnresolvable ("looking up PVC ns/name: ... not found").

Example: CSINode count 2 for ebs.csi.aws.com; pods on the node use ebs volumes v1 and v2; a pod
asking for v3 is rejected, one asking for v1 fits (v1 is already attached).
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from minik3s.api.helpers.storage_volume import claim_class, ephemeral_claim_error
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
from scheduler.plugins.pod_volumes import (
    MIGRATABLE_INLINE_SOURCES,
    NotFound,
    StorageListers,
    names_claim,
    pod_volumes,
    volumes_of,
)

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
PRE_FILTER_STATE_KEY = "PreFilter" + names.NODE_VOLUME_LIMITS

# in-tree plugin -> (volume source field, the CSI driver it migrated to) (csi-translation-lib)
IN_TREE_PLUGINS: dict[str, tuple[str, str]] = {
    "kubernetes.io/aws-ebs": ("awsElasticBlockStore", "ebs.csi.aws.com"),
    "kubernetes.io/gce-pd": ("gcePersistentDisk", "pd.csi.storage.gke.io"),
    "kubernetes.io/azure-disk": ("azureDisk", "disk.csi.azure.com"),
    "kubernetes.io/azure-file": ("azureFile", "file.csi.azure.com"),
    "kubernetes.io/cinder": ("cinder", "cinder.csi.openstack.org"),
    "kubernetes.io/vsphere-volume": ("vsphereVolume", "csi.vsphere.vmware.com"),
    "kubernetes.io/portworx-volume": ("portworxVolume", "pxd.portworx.com"),
}
_PLUGIN_OF_SOURCE = {src: plugin for plugin, (src, _drv) in IN_TREE_PLUGINS.items()}
# plugins whose migration v1.33 counts (isCSIMigrationOn: these, with a CSINode for the node)
MIGRATION_ON = frozenset({"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                          "kubernetes.io/cinder", "kubernetes.io/portworx-volume"})
_UNSPECIFIED = "UNSPECIFIED"

# unique volume name -> driver
Volumes = dict[str, str]


class _LookupError(Exception):
    """A fault resolving the new pod's volumes; `status` is what Filter returns."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


def _migration_on(csi_node: JsonDict | None, plugin: str) -> bool:
    return csi_node is not None and plugin in MIGRATION_ON


def _translated_handle(src_field: str, src: JsonDict, pv_labels: dict[str, str] | None) -> str:
    """The CSI volumeHandle csi-translation-lib gives an in-tree source ("" when it has none).
    AWS "aws://zone/vol-1" -> "vol-1"; GCE PD -> projects/UNSPECIFIED/zones/<zone>/disks/<pd>
    (zone from the PV's zone label, UNSPECIFIED inline; a multi-zone label -> the regional form)."""
    if src_field == "awsElasticBlockStore":
        vid = str(src.get("volumeID") or "")
        return vid.removeprefix("aws://").strip("/").rsplit("/", 1)[-1] if vid.startswith("aws://") else vid
    if src_field == "gcePersistentDisk":
        pd = str(src.get("pdName") or "")
        labels = pv_labels or {}
        zone = labels.get("topology.kubernetes.io/zone") or labels.get("failure-domain.beta.kubernetes.io/zone") or ""
        zones = [z for z in zone.split("__") if z]
        if len(zones) > 1:
            return f"projects/{_UNSPECIFIED}/regions/{zones[0].rsplit('-', 1)[0]}/disks/{pd}"
        return f"projects/{_UNSPECIFIED}/zones/{zones[0] if zones else _UNSPECIFIED}/disks/{pd}"
    if src_field == "azureDisk":
        return str(src.get("diskURI") or "")
    return str(src.get("volumeID") or "")  # cinder, portworx


def _in_tree_source(spec: JsonDict) -> tuple[str, str, JsonDict] | None:
    """(plugin, source field, source) of the first migratable in-tree source in `spec`."""
    for src_field in MIGRATABLE_INLINE_SOURCES:
        src = spec.get(src_field)
        if src is not None:
            return _PLUGIN_OF_SOURCE[src_field], src_field, src
    return None


@dataclass(slots=True)
class _State:
    """Per-cycle memo of what PreFilter and Filter resolved from the listers: the new pod's
    volumes and each existing pod's, per "has a CSINode" (migration needs one), and the
    VolumeAttachments grouped by node."""

    new: dict[bool, Volumes | Status] = field(default_factory=dict)
    existing: dict[tuple[str, bool], Volumes | Status] = field(default_factory=dict)
    attachments: dict[str, Volumes] | None = None

    def clone(self) -> _State:
        return self  # a memo of lister reads, valid for the whole cycle whatever pods are simulated


class NodeVolumeLimits(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = names.NODE_VOLUME_LIMITS

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        self._listers = StorageListers(handle)
        self._listers.warm("pvc", "pv", "sc", "csinode", "va")
        # upstream's rand.String(32): unbound claims' placeholder handles never match a real one
        # (a private generator: the scheduler's random source decides tie-breaks)
        gen = random.Random(0x6C696D)
        self._random_prefix = "".join(gen.choice(string.ascii_lowercase + string.digits) for _ in range(32))

    # ---- PreFilter ------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        if not pod_volumes(pod).csi_relevant:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _State())
        return None, SUCCESS

    # ---- Filter ---------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        if not pod_volumes(pod).any_volume:
            return SUCCESS
        memo = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(memo, _State):
            memo = _State()
        csi_node = self._listers.find("csinode", node.name)
        has_csi = csi_node is not None
        new = memo.new.get(has_csi)
        if new is None:
            try:
                new = self._attachable(pod.pod, csi_node, new_pod=True)
            except _LookupError as e:
                new = e.status
            memo.new[has_csi] = new
        if isinstance(new, Status):
            return new
        if not new:
            return SUCCESS
        limits = _volume_limits(csi_node)
        if not limits:
            return SUCCESS
        attached: Volumes = {}
        for pi in node.pods:
            if not pod_volumes(pi).csi_relevant:
                continue
            key = (pi.uid, has_csi)
            got = memo.existing.get(key)
            if got is None:
                try:
                    got = self._attachable(pi.pod, csi_node, new_pod=False)
                except _LookupError as e:
                    got = Status.as_error(e.status.message(), plugin=self.NAME)
                memo.existing[key] = got
            if isinstance(got, Status):
                return got
            attached.update(got)
        new_volumes = dict(new)
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new_volumes.pop(unique, None)  # a volume already attached counts once
            attached_count[driver] = attached_count.get(driver, 0) + 1
        for unique, driver in self._node_attachments(memo, node.name).items():
            if unique not in attached:
                attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, plugin=self.NAME)
        return SUCCESS

    def _attachable(self, pod: JsonDict, csi_node: JsonDict | None, *, new_pod: bool) -> Volumes:
        """The pod's CSI volumes (upstream filterAttachableVolumes). For the new pod a missing
        claim is an UnschedulableAndUnresolvable fault; an existing pod's is not counted."""
        out: Volumes = {}
        meta = pod.get("metadata") or {}
        ns = meta.get("namespace") or ""
        for vol in (pod.get("spec") or {}).get("volumes") or ():
            pvc_src = vol.get("persistentVolumeClaim")
            ephemeral = vol.get("ephemeral") is not None
            if pvc_src is not None:
                claim_name = str(pvc_src.get("claimName") or "")
            elif ephemeral:
                claim_name = f"{meta.get('name') or ''}-{vol.get('name') or ''}"
            else:
                self._inline(vol, csi_node, out)
                continue
            if not claim_name:
                raise _LookupError(Status.as_error("PersistentVolumeClaim had no name", plugin=self.NAME))
            try:
                pvc = self._listers.get("pvc", claim_name, ns)
            except NotFound as e:
                if new_pod:
                    raise _LookupError(Status.unresolvable(f"looking up PVC {ns}/{claim_name}: {e}",
                                                           plugin=self.NAME)) from None
                continue
            if ephemeral:
                err = ephemeral_claim_error(pod, pvc)
                if err:
                    raise _LookupError(Status.as_error(err, plugin=self.NAME))
            driver, handle = self._claim_driver_info(csi_node, pvc)
            if driver and handle:
                out[f"{driver}/{handle}"] = driver
        return out

    def _inline(self, vol: JsonDict, csi_node: JsonDict | None, out: Volumes) -> None:
        found = _in_tree_source(vol)
        if found is None:
            return
        plugin, src_field, src = found
        if not _migration_on(csi_node, plugin):
            return
        driver = IN_TREE_PLUGINS[plugin][1]
        handle = _translated_handle(src_field, src, None)
        if handle:
            out[f"{driver}/{handle}"] = driver

    def _claim_driver_info(self, csi_node: JsonDict | None, pvc: JsonDict) -> tuple[str, str]:
        """(driver, volume handle) of a claim (upstream getCSIDriverInfo)."""
        pv_name = (pvc.get("spec") or {}).get("volumeName") or ""
        pv = self._listers.find("pv", pv_name) if pv_name else None
        if pv is None:
            return self._driver_info_from_class(csi_node, pvc)
        spec = pv.get("spec") or {}
        csi = spec.get("csi")
        if csi is not None:
            return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")
        found = _in_tree_source(spec)
        if found is None:
            return "", ""
        plugin, src_field, src = found
        if not _migration_on(csi_node, plugin):
            return "", ""
        labels = (pv.get("metadata") or {}).get("labels") or {}
        return IN_TREE_PLUGINS[plugin][1], _translated_handle(src_field, src, labels)

    def _driver_info_from_class(self, csi_node: JsonDict | None, pvc: JsonDict) -> tuple[str, str]:
        """An unbound claim counts as a new volume of its class's provisioner (upstream
        getCSIDriverInfoFromSC); no class, or a missing one: an Immediate claim, not counted."""
        sc_name = claim_class(pvc)
        if not sc_name:
            return "", ""
        sc = self._listers.find("sc", sc_name)
        if sc is None:
            return "", ""
        meta = pvc.get("metadata") or {}
        handle = f"{self._random_prefix}-{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        provisioner = str(sc.get("provisioner") or "")
        if provisioner in IN_TREE_PLUGINS:
            if not _migration_on(csi_node, provisioner):
                return "", ""
            return IN_TREE_PLUGINS[provisioner][1], handle
        return provisioner, handle

    def _node_attachments(self, memo: _State, node_name: str) -> Volumes:
        """The node's VolumeAttachments as unique volume names -> driver (built once a cycle)."""
        by_node = memo.attachments
        if by_node is None:
            by_node = memo.attachments = {}
            for va in self._listers.list("va"):
                spec = va.get("spec") or {}
                attacher = spec.get("attacher") or ""
                node = spec.get("nodeName") or ""
                if not attacher or not node:
                    continue
                source = spec.get("source") or {}
                handle = ""
                pv_name = source.get("persistentVolumeName")
                if pv_name:
                    pv = self._listers.find("pv", pv_name)
                    csi = ((pv or {}).get("spec") or {}).get("csi")
                    handle = str((csi or {}).get("volumeHandle") or "")
                else:
                    csi = ((source.get("inlineVolumeSpec") or {}).get("csi")) or {}
                    handle = str(csi.get("volumeHandle") or "")
                if handle:
                    by_node.setdefault(node, {})[f"{attacher}/{handle}"] = attacher
        return by_node.get(node_name) or {}

    # ---- queueing -------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # any new CSINode may bring room (no hint, as upstream)
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), self._after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                                 self._after_pvc_added),
            ClusterEventWithHint(ClusterEvent(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE),
                                 self._after_volume_attachment_deleted),
        ]

    @staticmethod
    def _after_pod_deleted(pod: Any, old: Any, new: Any) -> QueueingHint:
        """A deleted scheduled pod with a claim, an ephemeral or a migratable inline volume may
        have freed an attachment."""
        deleted = old.pod if isinstance(old, PodInfo) else old
        if not isinstance(deleted, dict):
            return QueueingHint.QUEUE
        vols = volumes_of(deleted)
        if not vols.any_volume or not (deleted.get("spec") or {}).get("nodeName"):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE if vols.csi_relevant else QueueingHint.SKIP

    @staticmethod
    def _after_pvc_added(pod: Any, old: Any, new: Any) -> QueueingHint:
        """The added claim is one the pod names (plain or ephemeral)."""
        uses = names_claim(as_pod_info(pod), new, ephemeral=True)
        return QueueingHint.SKIP if uses is False else QueueingHint.QUEUE

    def _after_volume_attachment_deleted(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """The detached volume is one of the pod's claims' PVs, or of the CSI driver one of its
        migratable inline volumes would use."""
        if not isinstance(old, dict):
            return QueueingHint.QUEUE
        me = as_pod_info(pod)
        source = (old.get("spec") or {}).get("source") or {}
        pv_name = source.get("persistentVolumeName")
        inline_csi = (source.get("inlineVolumeSpec") or {}).get("csi") or {}
        inline_driver = inline_csi.get("driver") or ""
        for vol in me.spec.get("volumes") or ():
            pvc_src = vol.get("persistentVolumeClaim")
            if pvc_src is not None:
                pvc = self._listers.find("pvc", str(pvc_src.get("claimName") or ""), me.namespace)
                if pvc is not None and pv_name and (pvc.get("spec") or {}).get("volumeName") == pv_name:
                    return QueueingHint.QUEUE
                continue
            found = _in_tree_source(vol)
            if found is not None and inline_driver and IN_TREE_PLUGINS[found[0]][1] == inline_driver:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP


def _volume_limits(csi_node: JsonDict | None) -> dict[str, int]:
    """driver -> CSINode allocatable count (drivers without a count have no limit)."""
    out: dict[str, int] = {}
    if csi_node is None:
        return out
    for d in (csi_node.get("spec") or {}).get("drivers") or ():
        count = (d.get("allocatable") or {}).get("count")
        if count is not None:
            out[str(d.get("name") or "")] = int(count)
    return out
