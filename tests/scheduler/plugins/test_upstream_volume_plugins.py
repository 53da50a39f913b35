"""Upstream v1.33 test tables of the volume plugins, ported case by case (names kept as ids):

volumezone/volume_zone_test.go (TestSingleZone, TestMultiZone, TestWithBinding,
TestIsSchedulableAfterPersistentVolumeClaimAdded, TestIsSchedulableAfterStorageClassAdded,
TestIsSchedulableAfterPersistentVolumeChange), volumerestrictions/volume_restrictions_test.go
(TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts,
TestAccessModeConflicts, Test_isSchedulableAfterPodDeleted,
Test_isSchedulableAfterPersistentVolumeClaimChange) and nodevolumelimits/csi_test.go
(TestCSILimits, TestCSILimitsQHint, TestCSILimitsAddedPVCQHint,
TestCSILimitsDeletedVolumeAttachmentQHint).

The plugin instances come from a real `Scheduler` (the `fw` fixture of conftest.py): built from the
registry through the profile configuration, over a real cache and snapshot, with fixed listers for
PVs, PVCs, StorageClasses, CSINodes and VolumeAttachments (upstream's fake listers). Upstream calls
PreFilter and then Filter by hand on one NodeInfo; the tests do the same on the framework's own
plugin instance with the node from the framework's snapshot (the pods upstream puts in that
NodeInfo are scheduled to that node in the cluster). Queueing hints are called as the queue calls
them.

Adaptations (not differences):
- upstream's fake listers name a missing object by its plural resource
  (`storageclasses.storage.k8s.io "Class_0" not found`, `persistentvolumeclaims "abc-xyz" not
  found`); a real client-go lister (and minik3s's) uses the singular (`storageclass.storage.k8s.io`,
  `persistentvolumeclaim`), which the expectations here use;
- upstream's `st.MakePod()` pods and csi_test's claims have an empty namespace; here both are in
  "default" (the same namespace, as upstream's are); pods upstream leaves nameless get distinct
  names (the cache keys pods by uid);
- statuses are compared as upstream's Status.Equal does (code and reasons). csi_test's comparer
  also compares Plugin(), "" on both sides there because upstream's runtime, not the plugin,
  names the plugin; the statuses here already carry it, so it is left out of the comparison.

VolumeZone's hint cases feeding an object of the wrong type ("error-wrong-new-object",
"error-wrong-old-object") are kept: upstream's hint then returns Queue (with an error), which is
what the queue sees; the hint here must answer Queue too.

Not ported: TestCSILimitsAfterCSINodeUpdatedQHint (added after v1.33 with the
MutableCSINodeAllocatableCount gate, alpha and off by default in v1.33; the plugin registers
CSINode Add only), and BenchmarkVolumeZone (a benchmark, no assertions).
"""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import Code, EventResource, QueueingHint
from scheduler.framework.types import PodInfo
from scheduler.plugins.node_volume_limits import NodeVolumeLimits
from scheduler.plugins.volume_restrictions import VolumeRestrictions
from scheduler.plugins.volume_zone import VolumeZone
from tests.scheduler.plugins.test_node_volume_limits import EBS, GCE, HOSTPATH, IN_TREE_EBS, NODE, SC_NAME
from tests.scheduler.plugins.test_node_volume_limits import listers as csi_listers
from tests.scheduler.plugins.test_upstream_simple_plugins import OK, SKIP, UNRES, Q, S, _st

# upstream's reason strings, written out (not imported from the plugins under test)
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

def _hint(plugin: Any, resource: EventResource, pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
    """The queueing hint the plugin registered for `resource`, called as the queue calls it."""
    for ev in plugin.events_to_register():
        if ev.event.resource == resource:
            return QueueingHint.QUEUE if ev.hint_fn is None else ev.hint_fn(PodInfo(pod), old, new)
    raise AssertionError(f"{plugin.name()} registers no {resource} event")


def _runtime_agrees(run: Any, plugin: str, pod: dict[str, Any], want_pre_filter: tuple[Code, list[str]],
                    want_filter: tuple[Code, list[str]]) -> None:
    """The scheduler's own PreFilter -> Filter sequence (and its batched Filter path) decides as the
    hand-driven calls did (Error statuses aside: the runtime wraps their message)."""
    statuses, _, st, state = run.filter(pod)
    if want_pre_filter == SKIP:
        assert plugin in state.skip_filter_plugins
        assert all(_st(s) == OK for s in statuses.values())
    elif want_pre_filter != OK:
        assert _st(st) == want_pre_filter
    elif want_filter[0] != Code.ERROR:
        assert all(_st(s) == want_filter for s in statuses.values())


def _pod(name: str, *volumes: dict[str, Any], ns: str = "default", node: str = "",
         uid: str = "") -> dict[str, Any]:
    b = make_pod(name, ns)
    if node:
        b = b.node(node)
    p = b.obj()
    if uid:
        p["metadata"]["uid"] = uid
    if volumes:
        p["spec"]["volumes"] = [dict(v) for v in volumes]
    return p


def _pvc_vol(claim: str) -> dict[str, Any]:
    """st.PodWrapper.PVC: a volume named after the claim."""
    return {"name": claim, "persistentVolumeClaim": {"claimName": claim}}


def _claim(name: str, ns: str = "default", *, volume: str = "", sc: str | None = None,
           modes: tuple[str, ...] = (), owner: tuple[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if volume:
        spec["volumeName"] = volume
    if sc is not None:
        spec["storageClassName"] = sc
    if modes:
        spec["accessModes"] = list(modes)
    meta: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"uid-claim-{ns}-{name}"}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner[0], "uid": owner[1],
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def _pv(name: str, labels: dict[str, str] | None = None, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": dict(labels or {})}, "spec": dict(spec or {})}


def _sc(name: str, *, mode: str | None = None, provisioner: str = "") -> dict[str, Any]:
    sc: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name}}
    if provisioner:
        sc["provisioner"] = provisioner
    if mode is not None:
        sc["volumeBindingMode"] = mode
    return sc


# ======================================================================================= VolumeZone

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
ZONE_CONFLICT = (UNRES, [ERR_REASON_CONFLICT])


def _zpod(claim: str) -> dict[str, Any]:
    """createPodWithVolume("pod_1", claim)."""
    return _pod("pod_1", _pvc_vol(claim))


SINGLE_ZONE_PVS = [
    _pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    _pv("Vol_2", {BETA_REGION: "us-west1", "uselessLabel": "none"}),
    _pv("Vol_3", {BETA_REGION: "us-west1"}),
    _pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    _pv("Vol_Stable_2", {REGION: "us-west1", "uselessLabel": "none"}),
    _pv("Vol_Stable_3", {ZONE: "us-west1-a", REGION: "us-west1-a"}),
]
SINGLE_ZONE_PVCS = [
    _claim("PVC_1", volume="Vol_1"), _claim("PVC_2", volume="Vol_2"), _claim("PVC_3", volume="Vol_3"),
    _claim("PVC_4", volume="Vol_not_exist"), _claim("PVC_Stable_1", volume="Vol_Stable_1"),
    _claim("PVC_Stable_2", volume="Vol_Stable_2"), _claim("PVC_Stable_3", volume="Vol_Stable_3"),
]

# name, pod, node labels, wantPreFilterStatus, wantFilterStatus
SINGLE_ZONE_CASES = [
    ("pod without volume", _pod("pod_1"), {BETA_ZONE: "us-west1-a"}, SKIP, OK),
    ("node without labels", _zpod("PVC_1"), {}, OK, OK),
    ("beta zone label matched", _zpod("PVC_1"), {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, OK, OK),
    ("beta region label matched", _zpod("PVC_2"), {BETA_REGION: "us-west1", "uselessLabel": "none"}, OK, OK),
    ("beta region label doesn't match", _zpod("PVC_2"), {BETA_REGION: "no_us-west1", "uselessLabel": "none"},
     OK, ZONE_CONFLICT),
    ("beta zone label doesn't match", _zpod("PVC_1"), {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"},
     OK, ZONE_CONFLICT),
    ("zone label matched", _zpod("PVC_Stable_1"), {ZONE: "us-west1-a", "uselessLabel": "none"}, OK, OK),
    ("region label matched", _zpod("PVC_Stable_2"), {REGION: "us-west1", "uselessLabel": "none"}, OK, OK),
    ("region label doesn't match", _zpod("PVC_Stable_2"), {REGION: "no_us-west1", "uselessLabel": "none"},
     OK, ZONE_CONFLICT),
    ("zone label doesn't match", _zpod("PVC_Stable_1"), {ZONE: "no_us-west1-a", "uselessLabel": "none"},
     OK, ZONE_CONFLICT),
    ("pv with zone and region, node with only zone", _zpod("PVC_Stable_3"), {ZONE: "us-west1-a"},
     OK, ZONE_CONFLICT),
    ("pv with zone,node with beta zone", _zpod("PVC_Stable_1"), {BETA_ZONE: "us-west1-a"}, OK, ZONE_CONFLICT),
    ("pv with beta label,node with ga label, matched", _zpod("PVC_1"), {ZONE: "us-west1-a"}, OK, OK),
    ("pv with beta label,node with ga label, don't match", _zpod("PVC_1"), {ZONE: "us-west1-b"},
     OK, ZONE_CONFLICT),
]

MULTI_ZONE_PVS = [
    _pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    _pv("Vol_2", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    _pv("Vol_3", {BETA_ZONE: "us-west1-c__us-west1-a"}),
    _pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    _pv("Vol_Stable_2", {ZONE: "us-west1-c__us-west1-a"}),
]
MULTI_ZONE_PVCS = [
    _claim("PVC_1", volume="Vol_1"), _claim("PVC_2", volume="Vol_2"), _claim("PVC_3", volume="Vol_3"),
    _claim("PVC_4", volume="Vol_not_exist"), _claim("PVC_Stable_1", volume="Vol_Stable_1"),
    _claim("PVC_Stable_2", volume="Vol_Stable_2"),
]

MULTI_ZONE_CASES = [
    ("node without labels", _zpod("PVC_3"), {}, OK, OK),
    ("beta zone label matched", _zpod("PVC_3"), {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, OK, OK),
    ("beta zone label doesn't match", _zpod("PVC_1"), {BETA_ZONE: "us-west1-b", "uselessLabel": "none"},
     OK, ZONE_CONFLICT),
    ("zone label matched", _zpod("PVC_Stable_2"), {ZONE: "us-west1-a", "uselessLabel": "none"}, OK, OK),
    ("zone label doesn't match", _zpod("PVC_Stable_1"), {ZONE: "us-west1-b", "uselessLabel": "none"},
     OK, ZONE_CONFLICT),
]

MODE_WAIT = "WaitForFirstConsumer"
BINDING_SCS = [_sc("Class_Immediate"), _sc("Class_Wait", mode=MODE_WAIT)]
BINDING_PVS = [_pv("Vol_1", {BETA_ZONE: "us-west1-a"})]
BINDING_PVCS = [
    _claim("PVC_1", volume="Vol_1"), _claim("PVC_NoSC", sc="Class_0"), _claim("PVC_EmptySC"),
    _claim("PVC_WaitSC", sc="Class_Wait"), _claim("PVC_ImmediateSC", sc="Class_Immediate"),
]
BINDING_NODE_LABELS = {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}
NO_PV_NO_SC = (UNRES, ["PersistentVolumeClaim had no pv name and storageClass name"])
CLASS_0_MISSING = (UNRES, ['storageclass.storage.k8s.io "Class_0" not found'])
IMMEDIATE_NO_MODE = (UNRES, ['VolumeBindingMode not set for StorageClass "Class_Immediate"'])

WITH_BINDING_CASES = [
    ("label zone failure domain matched", _zpod("PVC_1"), BINDING_NODE_LABELS, OK, OK),
    ("unbound volume empty storage class", _zpod("PVC_EmptySC"), BINDING_NODE_LABELS, NO_PV_NO_SC, NO_PV_NO_SC),
    ("unbound volume no storage class", _zpod("PVC_NoSC"), BINDING_NODE_LABELS, CLASS_0_MISSING, CLASS_0_MISSING),
    ("unbound volume immediate binding mode", _zpod("PVC_ImmediateSC"), BINDING_NODE_LABELS,
     IMMEDIATE_NO_MODE, IMMEDIATE_NO_MODE),
    ("unbound volume wait binding mode", _zpod("PVC_WaitSC"), BINDING_NODE_LABELS, SKIP, OK),
]

VOLUME_ZONE_ROWS = (
    [pytest.param(*c[1:], SINGLE_ZONE_PVS, SINGLE_ZONE_PVCS, [], id=f"TestSingleZone/{c[0]}")
     for c in SINGLE_ZONE_CASES]
    + [pytest.param(*c[1:], MULTI_ZONE_PVS, MULTI_ZONE_PVCS, [], id=f"TestMultiZone/{c[0]}")
       for c in MULTI_ZONE_CASES]
    + [pytest.param(*c[1:], BINDING_PVS, BINDING_PVCS, BINDING_SCS, id=f"TestWithBinding/{c[0]}")
       for c in WITH_BINDING_CASES]
)


@pytest.mark.parametrize(("pod", "labels", "want_pre_filter", "want_filter", "pvs", "pvcs", "scs"),
                         VOLUME_ZONE_ROWS)
def test_volume_zone(fw, pod, labels, want_pre_filter, want_filter, pvs, pvcs, scs):
    node = make_node("host1").labels(labels).obj()
    run = fw.Run(VolumeZone, fw.Snapshot([node], informers={
        "persistentvolumes": pvs, "persistentvolumeclaims": pvcs, "storageclasses": scs}))
    pl = run.plugin("VolumeZone")
    (ni,) = run.scheduler.snapshot.node_info_list
    pi, state = PodInfo(pod), CycleState()
    _, st = pl.pre_filter(state, pi, [ni])
    assert _st(st) == want_pre_filter
    # upstream runs Filter whatever PreFilter returned (Filter recomputes without PreFilter's state)
    assert _st(pl.filter(state, pi, ni)) == want_filter
    _runtime_agrees(run, "VolumeZone", pod, want_pre_filter, want_filter)


def _vz_plugin(fw: Any) -> Any:
    return fw.Run(VolumeZone, fw.Snapshot([])).plugin("VolumeZone")


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(_zpod("PVC_1"), None, "not-a-pvc", Q, id="error-wrong-new-object"),
        pytest.param(_pod("pod_1"), None, _claim("PVC_1", volume="Vol_1"), S,
                     id="pvc-was-added-but-pod-refers-no-pvc"),
        pytest.param(_zpod("PVC_2"), None, _claim("PVC_1", volume="Vol_1"), S,
                     id="pvc-was-added-and-pod-was-bound-to-different-pvc"),
        pytest.param(_zpod("PVC_1"), None, _claim("PVC_1", "ns1", volume="Vol_1"), S,
                     id="pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns"),
        pytest.param(_zpod("PVC_1"), None, _claim("PVC_1", volume="Vol_1"), Q,
                     id="pvc-was-added-and-pod-was-bound-to-the-pvc"),
        pytest.param(_zpod("PVC_1"), _claim("PVC_1"), _claim("PVC_1", volume="Vol_1"), Q,
                     id="pvc-was-updated-and-pod-was-bound-to-the-pvc"),
        pytest.param(_pod("pod_1"), _claim("PVC_1"), _claim("PVC_1", volume="Vol_1"), S,
                     id="pvc-was-updated-but-pod-refers-no-pvc"),
    ],
)
def test_volume_zone_is_schedulable_after_pvc_added(fw, pod, old, new, want):
    """TestIsSchedulableAfterPersistentVolumeClaimAdded."""
    assert _hint(_vz_plugin(fw), EventResource.PERSISTENT_VOLUME_CLAIM, pod, old, new) == want


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param("not-a-storageclass", Q, id="error-wrong-new-object"),
        pytest.param(_sc("SC_1"), S, id="sc-doesn't-have-volume-binding-mode"),
        pytest.param(_sc("SC_1", mode=MODE_WAIT), Q, id="new-sc-is-wait-for-first-consumer-mode"),
    ],
)
def test_volume_zone_is_schedulable_after_storage_class_added(fw, new, want):
    """TestIsSchedulableAfterStorageClassAdded."""
    assert _hint(_vz_plugin(fw), EventResource.STORAGE_CLASS, _zpod("PVC_1"), None, new) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, "not-a-pv", Q, id="error-wrong-new-object"),
        pytest.param("not-a-pv", _pv("Vol_1"), Q, id="error-wrong-old-object"),
        pytest.param(None, _pv("Vol_1", {BETA_ZONE: "us-west1-b"}), Q, id="new-pv-was-added"),
        pytest.param(_pv("Vol_1", {BETA_ZONE: "us-west1-a"}), _pv("Vol_1", {BETA_ZONE: "us-west1-b"}), Q,
                     id="pv-was-updated-and-changed-topology"),
        pytest.param(_pv("Vol_1", {BETA_ZONE: "us-west1-a"}), _pv("Vol_1", {BETA_ZONE: "us-west1-a", ZONE: "zone"}),
                     Q, id="pv-was-updated-and-added-topology-label"),
        pytest.param(_pv("Vol_1", {BETA_ZONE: "us-west1-a", ZONE: "zone"}),
                     _pv("Vol_1", {BETA_ZONE: "us-west1-a", ZONE: "zone"}), S,
                     id="pv-was-updated-but-no-topology-is-changed"),
    ],
)
def test_volume_zone_is_schedulable_after_pv_change(fw, old, new, want):
    """TestIsSchedulableAfterPersistentVolumeChange."""
    assert _hint(_vz_plugin(fw), EventResource.PERSISTENT_VOLUME, _zpod("PVC_1"), old, new) == want


# =============================================================================== VolumeRestrictions

DISK = (Code.UNSCHEDULABLE, [ERR_REASON_DISK_CONFLICT])
RWOP = (Code.UNSCHEDULABLE, [ERR_REASON_RWOP_CONFLICT])
VR_NODE = "node-1"

GCE_1 = {"name": "gce", "gcePersistentDisk": {"pdName": "foo"}}
GCE_2 = {"name": "gce", "gcePersistentDisk": {"pdName": "bar"}}
AWS_1 = {"name": "aws", "awsElasticBlockStore": {"volumeID": "foo"}}
AWS_2 = {"name": "aws", "awsElasticBlockStore": {"volumeID": "bar"}}
RBD_1 = {"name": "rbd", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD_2 = {"name": "rbd", "rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI_1 = {"name": "iscsi", "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                                      "fsType": "ext4", "lun": 0}}
ISCSI_2 = {"name": "iscsi", "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01",
                                      "fsType": "ext4", "lun": 0}}
NO_RESTRICTION = {"name": "volume with no restriction"}


def _disk_cases(test: str, vol: dict[str, Any], vol2: dict[str, Any]) -> list[Any]:
    # pod volumes, node's pod volumes (None: empty NodeInfo), preFilterWantStatus, wantStatus
    return [
        pytest.param(None, None, SKIP, OK, id=f"{test}/nothing"),
        pytest.param(None, vol, SKIP, OK, id=f"{test}/one state"),
        pytest.param(vol, vol, OK, DISK, id=f"{test}/same state"),
        pytest.param(vol2, vol, OK, OK, id=f"{test}/different state"),
    ]


@pytest.mark.parametrize(
    ("vol", "existing_vol", "want_pre_filter", "want_filter"),
    _disk_cases("TestGCEDiskConflicts", GCE_1, GCE_2)
    + [pytest.param(NO_RESTRICTION, None, SKIP, OK,
                    id="TestGCEDiskConflicts/pod with a volume that doesn't have restrictions")]
    + _disk_cases("TestAWSDiskConflicts", AWS_1, AWS_2)
    + _disk_cases("TestRBDDiskConflicts", RBD_1, RBD_2)
    + _disk_cases("TestISCSIDiskConflicts", ISCSI_1, ISCSI_2),
)
def test_disk_conflicts(fw, vol, existing_vol, want_pre_filter, want_filter):
    pod = _pod("p", *([vol] if vol else []))
    existing = [_pod("e", existing_vol, node=VR_NODE)] if existing_vol else []
    run = fw.Run(VolumeRestrictions, fw.Snapshot([make_node(VR_NODE).obj()], existing))
    pl = run.plugin("VolumeRestrictions")
    (ni,) = run.scheduler.snapshot.node_info_list
    pi, state = PodInfo(pod), CycleState()
    _, st = pl.pre_filter(state, pi, [ni])
    assert _st(st) == want_pre_filter
    if st.is_success():  # "If PreFilter fails, then Filter will not run."
        assert _st(pl.filter(state, pi, ni)) == want_filter
    _runtime_agrees(run, "VolumeRestrictions", pod, want_pre_filter, want_filter)


RWOP_PVC_1 = _claim("claim-with-rwop-1", modes=("ReadWriteOncePod",))
RWOP_PVC_2 = _claim("claim-with-rwop-2", modes=("ReadWriteOncePod",))
RWX_PVC = _claim("claim-with-rwx", modes=("ReadWriteMany",))


def _rwop_pod(name: str, *claims: str) -> dict[str, Any]:
    return _pod(name, *(_pvc_vol(c) for c in claims), node=VR_NODE)


POD_WITH_ONE_PVC = _rwop_pod("pod-with-one-pvc", "claim-with-rwop-1")
POD_WITH_TWO_PVCS = _rwop_pod("pod-with-two-pvcs", "claim-with-rwop-1", "claim-with-rwop-2")
POD_WITH_ONE_CONFLICT = _rwop_pod("pod-with-one-conflict", "claim-with-rwop-1")
POD_WITH_TWO_CONFLICTS = _rwop_pod("pod-with-two-conflicts", "claim-with-rwop-1", "claim-with-rwop-2")
POD_WITH_RWX = _rwop_pod("pod-with-rwx", "claim-with-rwx")


@pytest.mark.parametrize(
    ("pod", "existing", "pvcs", "want_pre_filter", "want_filter"),
    [
        pytest.param(_pod("p"), [], [], SKIP, OK, id="nothing"),
        pytest.param(POD_WITH_ONE_PVC, [], [],
                     (UNRES, ['persistentvolumeclaim "claim-with-rwop-1" not found']), OK, id="failed to get PVC"),
        pytest.param(POD_WITH_ONE_PVC, [POD_WITH_RWX], [RWOP_PVC_1, RWX_PVC], SKIP, OK,
                     id="no access mode conflict"),
        pytest.param(POD_WITH_ONE_CONFLICT, [POD_WITH_ONE_PVC, POD_WITH_RWX], [RWOP_PVC_1, RWX_PVC], OK, RWOP,
                     id="access mode conflict, unschedulable"),
        pytest.param(POD_WITH_TWO_CONFLICTS, [POD_WITH_TWO_PVCS, POD_WITH_RWX], [RWOP_PVC_1, RWOP_PVC_2, RWX_PVC],
                     OK, RWOP, id="two conflicts, unschedulable"),
    ],
)
def test_access_mode_conflicts(fw, pod, existing, pvcs, want_pre_filter, want_filter):
    """TestAccessModeConflicts."""
    run = fw.Run(VolumeRestrictions, fw.Snapshot([make_node(VR_NODE).obj()], existing,
                                                 informers={"persistentvolumeclaims": pvcs}))
    pl = run.plugin("VolumeRestrictions")
    (ni,) = run.scheduler.snapshot.node_info_list
    pi, state = PodInfo(pod), CycleState()
    _, st = pl.pre_filter(state, pi, [ni])
    assert _st(st) == want_pre_filter
    if st.is_success():
        assert _st(pl.filter(state, pi, ni)) == want_filter
    _runtime_agrees(run, "VolumeRestrictions", pod, want_pre_filter, want_filter)


def _vr_plugin(fw: Any) -> Any:
    return fw.Run(VolumeRestrictions, fw.Snapshot([])).plugin("VolumeRestrictions")


def _hint_case(kind: str, vol: dict[str, Any], vol2: dict[str, Any]) -> list[Any]:
    return [
        pytest.param(_pod("p", vol), _pod("d", vol), Q, id=f"queue-new-object-{kind}-conflict"),
        pytest.param(_pod("p", vol), _pod("d", vol2), S, id=f"skip-new-object-{kind}-no-conflict"),
    ]


@pytest.mark.parametrize(
    ("pod", "deleted", "want"),
    _hint_case("gcedisk", GCE_1, GCE_2) + _hint_case("awsdisk", AWS_1, AWS_2)
    + _hint_case("rbddisk", RBD_1, RBD_2) + _hint_case("iscsidisk", ISCSI_1, ISCSI_2)
    + [
        pytest.param(_pod("pod1", _pvc_vol("claim-rwop")), _pod("pod2", _pvc_vol("claim-rwop")), Q,
                     id="queue-has-same-claim"),
        pytest.param(_pod("pod1", _pvc_vol("claim-1-rwop")), _pod("pod2", _pvc_vol("claim-2-rwop")), S,
                     id="skip-no-same-claim"),
    ],
)
def test_volume_restrictions_is_schedulable_after_pod_deleted(fw, pod, deleted, want):
    """Test_isSchedulableAfterPodDeleted."""
    assert _hint(_vr_plugin(fw), EventResource.POD, pod, deleted, None) == want


RWX_1 = _claim("claim-with-rwx-1", modes=("ReadWriteMany",))
RWX_2 = _claim("claim-with-rwx-2", modes=("ReadWriteMany",))
POD_ONE_RWX = _pod("pod-with-one-pvc", _pvc_vol("claim-with-rwx-1"), node="node-1")
POD_TWO_RWX = _pod("pod-with-two-pvcs", _pvc_vol("claim-with-rwx-1"), _pvc_vol("claim-with-rwx-2"), node="node-1")
POD_OTHER_NS = _pod("pod-with-one-pvc", _pvc_vol("claim-with-rwx-1"), ns="kube-system", node="claim-with-rwx-2")


@pytest.mark.parametrize(
    ("pod", "new", "want"),
    [
        pytest.param(POD_TWO_RWX, RWX_1, Q, id="queue-new-object-pvc-belong-pod"),
        pytest.param(POD_ONE_RWX, RWX_2, S, id="skip-new-object-unused"),
        pytest.param(POD_ONE_RWX, RWX_2, S, id="skip-nil-old-object"),
        pytest.param(POD_ONE_RWX, RWX_2, S, id="skip-new-object-not-belong-pod"),
        pytest.param(POD_OTHER_NS, RWX_1, S, id="skip-new-object-namespace-not-equal-pod"),
    ],
)
def test_volume_restrictions_is_schedulable_after_pvc_change(fw, pod, new, want):
    """Test_isSchedulableAfterPersistentVolumeClaimChange."""
    assert _hint(_vr_plugin(fw), EventResource.PERSISTENT_VOLUME_CLAIM, pod, None, new) == want


# ================================================================================= NodeVolumeLimits

# the node, drivers and class of csi_test.go, as the CSI listers (test_node_volume_limits.py) build them
CSI_NODE = NODE
EXCEEDED = (Code.UNSCHEDULABLE, [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED])
EPHEMERAL_MISSING = (UNRES, ['looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'])
NOT_OWNER = (Code.ERROR, ["PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"])


def _eph(name: str) -> dict[str, Any]:
    return {"name": name, "ephemeral": {}}


def _ebs_inline(volume_id: str) -> dict[str, Any]:
    return {"name": "inline", "awsElasticBlockStore": {"volumeID": volume_id}}


CONFIGMAP = {"name": "cm", "configMap": {}}
SECRET = {"name": "secret", "secret": {}}

# Pod factories: upstream's pods are shared objects; each use here gets a fresh pod with its own name.
_seq = iter(range(100_000))


def _p(*volumes: dict[str, Any]) -> Any:
    return lambda: _pod(f"p{next(_seq)}", *volumes)


running_pod = _p(_pvc_vol("csi-ebs.csi.aws.com-3"))
pending_volume_pod = _p(_pvc_vol("csi-4"))
unbound_pvc_pod2 = _p(_pvc_vol("csi-4"))
missing_pv_pod = _p(_pvc_vol("csi-6"))
no_sc_pvc_pod = _p(_pvc_vol("csi-5"))
gce_two_vol_pod = _p(_pvc_vol("csi-pd.csi.storage.gke.io-1"), _pvc_vol("csi-pd.csi.storage.gke.io-2"))
in_tree_one_vol_pod = _p(_pvc_vol("csi-kubernetes.io/aws-ebs-0"))
in_tree_two_vol_pod = _p(_pvc_vol("csi-kubernetes.io/aws-ebs-1"), _pvc_vol("csi-kubernetes.io/aws-ebs-2"))
csi_ebs_one_vol_pod = _p(_pvc_vol("csi-ebs.csi.aws.com-0"))
csi_ebs_two_vol_pod = _p(_pvc_vol("csi-ebs.csi.aws.com-1"), _pvc_vol("csi-ebs.csi.aws.com-2"))
in_tree_non_migratable_one_vol_pod = _p(_pvc_vol("csi-kubernetes.io/hostpath-0"))
in_tree_inline_vol_pod = _p(_ebs_inline("aws-inline1"))
in_tree_inline_vol_pod_with_same_csi_volume_id = _p(_ebs_inline("csi-ebs.csi.aws.com-1"))
only_configmap_and_secret_vol_pod = _p(CONFIGMAP, SECRET)
pvc_pod_with_configmap_and_secret = _p(CONFIGMAP, SECRET, _pvc_vol("csi-ebs.csi.aws.com-0"))
inline_migratable_pod_with_configmap_and_secret = _p(CONFIGMAP, SECRET, _ebs_inline("aws-inline1"))


def ephemeral_volume_pod() -> dict[str, Any]:
    return _pod("abc", _eph("xyz"), ns="test", uid="12345")


def ephemeral_two_volume_pod() -> dict[str, Any]:
    return _pod("abc", _eph("x"), _eph("y"), ns="test", uid="12345II")


def ephemeral_pod_with_configmap_and_secret() -> dict[str, Any]:
    # upstream: name and namespace only (no uid)
    p = _pod("abc", CONFIGMAP, SECRET, _eph("xyz"), ns="test")
    p["metadata"].pop("uid", None)
    return p


EPHEMERAL_CLAIM = _claim("abc-xyz", "test", sc=SC_NAME, owner=("abc", "12345"))
CONFLICTING_CLAIM = _claim("abc-xyz", "test", sc=SC_NAME)
EPHEMERAL_CLAIM_X = _claim("abc-x", "test", sc=SC_NAME, owner=("abc", "12345II"))
EPHEMERAL_CLAIM_Y = _claim("abc-y", "test", sc=SC_NAME, owner=("abc", "12345II"))

# test, newPod, existingPods, maxVols, driverNames, limitSource, extraClaims, vaCount,
# wantPreFilterStatus, wantStatus
CSI_LIMITS_CASES = [
    ("should count VolumeAttachments towards volume limit when no pods exist",
     csi_ebs_one_vol_pod, [], 2, [EBS], "csinode", [], 2, OK, EXCEEDED),
    ("should schedule pod when VolumeAttachments count does not exceed limit",
     csi_ebs_one_vol_pod, [], 2, [EBS], "csinode", [], 1, OK, OK),
    ("fits when node volume limit >= new pods CSI volume",
     csi_ebs_one_vol_pod, [running_pod, csi_ebs_two_vol_pod], 4, [EBS], "csinode", [], 0, OK, OK),
    ("doesn't when node volume limit <= pods CSI volume",
     csi_ebs_one_vol_pod, [running_pod, csi_ebs_two_vol_pod], 2, [EBS], "csinode", [], 0, OK, EXCEEDED),
    ("should when driver does not support volume limits",
     csi_ebs_one_vol_pod, [running_pod, csi_ebs_two_vol_pod], 2, [EBS], "csinode-with-no-limit", [], 0, OK, OK),
    ("count pending PVCs towards volume limit <= pods CSI volume",
     csi_ebs_one_vol_pod, [pending_volume_pod, csi_ebs_two_vol_pod], 2, [EBS], "csinode", [], 0, OK, EXCEEDED),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume",
     csi_ebs_one_vol_pod, [pending_volume_pod, unbound_pvc_pod2, csi_ebs_two_vol_pod], 4, [EBS], "csinode",
     [], 0, OK, OK),
    ("should count PVCs with invalid PV name but valid SC",
     csi_ebs_one_vol_pod, [missing_pv_pod, csi_ebs_two_vol_pod], 2, [EBS], "csinode", [], 0, OK, EXCEEDED),
    ("don't count pvcs with missing SC towards volume limit",
     csi_ebs_one_vol_pod, [running_pod, no_sc_pvc_pod], 2, [EBS], "csinode", [], 0, OK, OK),
    ("count pvcs with the same type towards volume limit",
     csi_ebs_one_vol_pod, [gce_two_vol_pod, csi_ebs_two_vol_pod], 2, [EBS, GCE], "csinode", [], 0, OK, EXCEEDED),
    ("don't count pvcs with different type towards volume limit",
     gce_two_vol_pod, [csi_ebs_two_vol_pod, running_pod], 2, [EBS, GCE], "csinode", [], 0, OK, OK),
    # Tests for in-tree volume migration
    ("should count in-tree volumes if migration is enabled",
     in_tree_one_vol_pod, [in_tree_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode", [], 0, OK, EXCEEDED),
    ("nil csi node",
     in_tree_inline_vol_pod, [in_tree_two_vol_pod], 0, [IN_TREE_EBS, EBS], "", [], 0, OK, OK),
    ("should count unbound in-tree volumes if migration is enabled",
     pending_volume_pod, [in_tree_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode", [], 0, OK, EXCEEDED),
    ("should not limit pod if volume used does not report limits",
     in_tree_one_vol_pod, [in_tree_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode-with-no-limit", [], 0, OK, OK),
    ("should not count non-migratable in-tree volumes",
     in_tree_non_migratable_one_vol_pod, [csi_ebs_two_vol_pod], 2, [HOSTPATH, EBS], "csinode", [], 0, OK, OK),
    ("should count in-tree inline volumes if migration is enabled",
     in_tree_inline_vol_pod, [in_tree_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode", [], 0, OK, EXCEEDED),
    # mixed volumes
    ("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     in_tree_one_vol_pod, [csi_ebs_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode", [], 0, OK, EXCEEDED),
    ("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     in_tree_inline_vol_pod, [csi_ebs_two_vol_pod, in_tree_one_vol_pod], 3, [IN_TREE_EBS, EBS], "csinode", [], 0,
     OK, EXCEEDED),
    ("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     in_tree_inline_vol_pod_with_same_csi_volume_id, [csi_ebs_two_vol_pod, in_tree_one_vol_pod], 3,
     [IN_TREE_EBS, EBS], "csinode", [], 0, OK, OK),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
     csi_ebs_one_vol_pod, [in_tree_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode", [], 0, OK, EXCEEDED),
    # ephemeral volumes
    ("ephemeral volume missing",
     ephemeral_volume_pod, [], 0, [EBS], "csinode-with-no-limit", [], 0, OK, EPHEMERAL_MISSING),
    ("ephemeral volume not owned",
     ephemeral_volume_pod, [], 0, [EBS], "csinode-with-no-limit", [CONFLICTING_CLAIM], 0, OK, NOT_OWNER),
    ("ephemeral volume unbound",
     ephemeral_volume_pod, [], 0, [EBS], "csinode-with-no-limit", [EPHEMERAL_CLAIM], 0, OK, OK),
    ("ephemeral doesn't when node volume limit <= pods CSI volume",
     ephemeral_volume_pod, [running_pod, csi_ebs_two_vol_pod], 2, [EBS], "csinode", [EPHEMERAL_CLAIM], 0,
     OK, EXCEEDED),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
     csi_ebs_one_vol_pod, [running_pod, ephemeral_two_volume_pod], 2, [EBS], "csinode",
     [EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y], 0, OK, EXCEEDED),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, "
     "ephemeral disabled",
     csi_ebs_one_vol_pod, [running_pod, ephemeral_volume_pod, csi_ebs_two_vol_pod], 3, [EBS], "csinode",
     [EPHEMERAL_CLAIM], 0, OK, EXCEEDED),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
     csi_ebs_one_vol_pod, [running_pod, ephemeral_volume_pod, csi_ebs_two_vol_pod], 3, [EBS], "csinode",
     [EPHEMERAL_CLAIM], 0, OK, EXCEEDED),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
     csi_ebs_one_vol_pod, [running_pod, ephemeral_volume_pod, csi_ebs_two_vol_pod], 5, [EBS], "csinode",
     [EPHEMERAL_CLAIM], 0, OK, OK),
    ("skip Filter when the pod only uses secrets and configmaps",
     only_configmap_and_secret_vol_pod, [], 2, [EBS], "csinode", [], 0, SKIP, OK),
    ("don't skip Filter when the pod has pvcs",
     pvc_pod_with_configmap_and_secret, [], 2, [EBS], "csinode", [], 0, OK, OK),
    ("don't skip Filter when the pod has ephemeral volumes",
     ephemeral_pod_with_configmap_and_secret, [], 0, [EBS], "csinode-with-no-limit", [], 0, OK, EPHEMERAL_MISSING),
    ("don't skip Filter when the pod has inline migratable volumes",
     inline_migratable_pod_with_configmap_and_secret, [in_tree_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode",
     [], 0, OK, EXCEEDED),
]


@pytest.mark.parametrize(
    ("new_pod", "existing", "max_vols", "drivers", "limit_source", "extra", "va_count", "want_pre_filter",
     "want_filter"),
    [pytest.param(*c[1:], id=c[0]) for c in CSI_LIMITS_CASES],
)
def test_csi_limits(fw, new_pod, existing, max_vols, drivers, limit_source, extra, va_count, want_pre_filter,
                    want_filter):
    """TestCSILimits."""
    pods = []
    for make in existing:
        p = make()
        p["spec"]["nodeName"] = CSI_NODE
        pods.append(p)
    run = fw.Run(NodeVolumeLimits, fw.Snapshot([make_node(CSI_NODE).obj()], pods,
                                               informers=csi_listers(drivers, va_count, max_vols, limit_source,
                                                                      extra)))
    pl = run.plugin("NodeVolumeLimits")
    (ni,) = run.scheduler.snapshot.node_info_list
    pod = new_pod()
    pi, state = PodInfo(pod), CycleState()
    _, st = pl.pre_filter(state, pi, [ni])
    assert _st(st) == want_pre_filter
    if not st.is_skip():
        assert _st(pl.filter(state, pi, ni)) == want_filter
    _runtime_agrees(run, "NodeVolumeLimits", pod, want_pre_filter, want_filter)


def _nvl_plugin(fw: Any, pvcs: list[dict[str, Any]] = ()) -> Any:  # type: ignore[assignment]
    return fw.Run(NodeVolumeLimits, fw.Snapshot([], informers={"persistentvolumeclaims": list(pvcs)})).plugin(
        "NodeVolumeLimits")


@pytest.mark.parametrize(
    ("deleted", "scheduled", "want"),
    [
        pytest.param(_pod("d", _pvc_vol("placeholder")), True, Q, id="return a Queue when a deleted pod has a PVC"),
        pytest.param(_pod("d", {"name": "v", "awsElasticBlockStore": {}}), True, Q,
                     id="return a Queue when a deleted pod has a inline migratable volume"),
        pytest.param(_pod("d"), True, S, id="return a QueueSkip when a deleted pod doesn't have any volume"),
        pytest.param(_pod("d", _pvc_vol("csi-ebs.csi.aws.com-0")), False, S,
                     id="return a QueueSkip when a deleted pod is not scheduled."),
    ],
)
def test_csi_limits_qhint(fw, deleted, scheduled, want):
    """TestCSILimitsQHint (isSchedulableAfterPodDeleted)."""
    deleted["spec"]["nodeName"] = CSI_NODE if scheduled else ""
    pod = _pod("p", _pvc_vol("csi-ebs.csi.aws.com-2"))
    assert _hint(_nvl_plugin(fw), EventResource.POD, pod, deleted, None) == want


@pytest.mark.parametrize(
    ("pod", "added", "want"),
    [
        pytest.param(_pod("p", ns="ns1"), _claim("", "ns2"), S,
                     id="a pod isn't in the same namespace as an added PVC"),
        pytest.param(_pod("p", {"name": "v", "persistentVolumeClaim": {"claimName": "pvc1"}}, ns="ns1"),
                     _claim("pvc1", "ns1"), Q, id="a pod is in the same namespace as an added PVC"),
        pytest.param(_pod("pod1", _eph("ephemeral"), ns="ns1"), _claim("pod1-ephemeral", "ns1"), Q,
                     id="a pod has an ephemeral volume related to an added PVC"),
        pytest.param(_pod("p", {"name": "v", "persistentVolumeClaim": {"claimName": "pvc1"}}, ns="ns1"),
                     _claim("pvc2", "ns1"), S, id="a pod doesn't have the same PVC as an added PVC"),
        pytest.param(_pod("p", ns="ns1"), _claim("pvc2", "ns1"), S, id="a pod doesn't have any PVC attached"),
    ],
)
def test_csi_limits_added_pvc_qhint(fw, pod, added, want):
    """TestCSILimitsAddedPVCQHint (isSchedulableAfterPVCAdded)."""
    assert _hint(_nvl_plugin(fw), EventResource.PERSISTENT_VOLUME_CLAIM, pod, None, added) == want


def _va(attacher: str, *, pv: str = "", inline_driver: str = "") -> dict[str, Any]:
    source: dict[str, Any] = ({"persistentVolumeName": pv} if pv
                              else {"inlineVolumeSpec": {"csi": {"driver": inline_driver}}})
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "volumeattachment1"},
            "spec": {"nodeName": "fake-node", "attacher": attacher, "source": source}}


PVC1_VOL = {"name": "pvc", "persistentVolumeClaim": {"claimName": "pvc1"}}
EBS_TEST = {"name": "ebs", "awsElasticBlockStore": {"volumeID": "test"}}
GCE_TEST = {"name": "gce", "gcePersistentDisk": {"pdName": "test"}}
PVC1_NS1 = _claim("pvc1", "ns1", volume="pv1")


@pytest.mark.parametrize(
    ("pod", "existing_pvc", "deleted", "want"),
    [
        pytest.param(_pod("p", PVC1_VOL, ns="ns1"), PVC1_NS1, _va("test.storage.gke.io", pv="pv1"), Q,
                     id="a pod has PVC when VolumeAttachment is deleting"),
        pytest.param(_pod("p", EBS_TEST, ns="ns1"), None, _va(EBS, inline_driver=EBS), Q,
                     id="a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment "
                        "(AWSEBSDriver) is deleting (match)"),
        pytest.param(_pod("p", GCE_TEST, ns="ns1"), None, _va(EBS, inline_driver=EBS), S,
                     id="a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment "
                        "(AWSEBSDriver) is deleting (no match)"),
        pytest.param(_pod("p", EBS_TEST, PVC1_VOL, ns="ns1"), PVC1_NS1, _va(EBS, inline_driver=EBS), Q,
                     id="a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment "
                        "(AWSEBSDriver) is deleting"),
        pytest.param(_pod("p", EBS_TEST, PVC1_VOL, ns="ns1"), PVC1_NS1, _va("test.storage.gke.io", pv="pv1"), Q,
                     id="a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment "
                        "(AWSEBSDriver)  is deleting"),
        pytest.param(_pod("p", ns="ns1"), None, _va("test.storage.gke.io", pv="pv1"), S,
                     id="a pod has no PVC when VolumeAttachment is deleting"),
    ],
)
def test_csi_limits_deleted_volume_attachment_qhint(fw, pod, existing_pvc, deleted, want):
    """TestCSILimitsDeletedVolumeAttachmentQHint (isSchedulableAfterVolumeAttachmentDeleted)."""
    pl = _nvl_plugin(fw, [existing_pvc] if existing_pvc else [])
    assert _hint(pl, EventResource.VOLUME_ATTACHMENT, pod, deleted, None) == want
