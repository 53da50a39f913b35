"""VolumeRestrictions (upstream volumerestrictions/volume_restrictions_test.go: TestGCEDiskConflicts,
TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts),
through the real framework runtime, plus the PreFilterExtensions and queueing hints."""

from typing import Any

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import Code, QueueingHint, is_success
from scheduler.framework.types import PodInfo
from scheduler.plugins.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
    VolumeRestrictions,
)

UNRES = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
DISK = (Code.UNSCHEDULABLE, [ERR_REASON_DISK_CONFLICT])
RWOP = (Code.UNSCHEDULABLE, [ERR_REASON_RWOP_CONFLICT])
SKIP = "skip"
OK = (Code.SUCCESS, [])


def with_volumes(pod: dict[str, Any], *volumes: dict[str, Any]) -> dict[str, Any]:
    pod["spec"]["volumes"] = [{"name": f"v{i}", **v} for i, v in enumerate(volumes)]
    return pod


def pvc_vol(claim: str) -> dict[str, Any]:
    return {"persistentVolumeClaim": {"claimName": claim}}


def claim(name: str, *modes: str, ns: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
            "spec": {"accessModes": list(modes)}}


def run(pod: dict[str, Any], existing: list[dict[str, Any]], pvcs: list[dict[str, Any]] = ()  # type: ignore[assignment]
        , *, fw: Any) -> Any:
    snap = fw.Snapshot([make_node("node-1").obj()], existing, informers={"persistentvolumeclaims": list(pvcs)})
    statuses, _, st, state = fw.filter_nodes(VolumeRestrictions, pod, snap)
    if "VolumeRestrictions" in state.skip_filter_plugins:
        return SKIP
    if not st.is_success():
        return ("prefilter", st.code, list(st.reasons))
    return fw.codes(statuses)["node-1"]


GCE_FOO = {"gcePersistentDisk": {"pdName": "foo"}}
GCE_BAR = {"gcePersistentDisk": {"pdName": "bar"}}
AWS_FOO = {"awsElasticBlockStore": {"volumeID": "foo"}}
AWS_BAR = {"awsElasticBlockStore": {"volumeID": "bar"}}
RBD_1 = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD_2 = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI_1 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                     "fsType": "ext4", "lun": 0}}
ISCSI_2 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01",
                     "fsType": "ext4", "lun": 0}}


def _disk_rows(kind: str, state: dict[str, Any], state2: dict[str, Any]) -> list[Any]:
    return [
        pytest.param(None, None, SKIP, id=f"{kind}-nothing"),
        pytest.param(None, state, SKIP, id=f"{kind}-one-state"),
        pytest.param(state, state, DISK, id=f"{kind}-same-state"),
        pytest.param(state2, state, OK, id=f"{kind}-different-state"),
    ]


@pytest.mark.parametrize(
    ("vol", "existing_vol", "want"),
    _disk_rows("gce", GCE_FOO, GCE_BAR) + _disk_rows("aws", AWS_FOO, AWS_BAR)
    + _disk_rows("rbd", RBD_1, RBD_2) + _disk_rows("iscsi", ISCSI_1, ISCSI_2)
    + [
        pytest.param({"emptyDir": {}}, None, SKIP, id="pod-with-a-volume-without-restrictions"),
        pytest.param({"gcePersistentDisk": {"pdName": "foo", "readOnly": True}},
                     {"gcePersistentDisk": {"pdName": "foo", "readOnly": True}}, OK, id="gce-both-read-only"),
        pytest.param({"awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}},
                     {"awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}}, DISK,
                     id="aws-read-only-still-conflicts"),
        pytest.param({"rbd": {**RBD_1["rbd"], "monitors": ["b", "z"]}}, RBD_1, DISK, id="rbd-one-shared-monitor"),
    ],
)
def test_disk_conflicts(fw, vol, existing_vol, want):
    pod = with_volumes(make_pod("p").obj(), vol) if vol else make_pod("p").obj()
    existing = [with_volumes(make_pod("e").node("node-1").obj(), existing_vol)] if existing_vol else []
    assert run(pod, existing, fw=fw) == want


RWOP_1 = claim("claim-with-rwop-1", "ReadWriteOncePod")
RWOP_2 = claim("claim-with-rwop-2", "ReadWriteOncePod")
RWX = claim("claim-with-rwx", "ReadWriteMany")


def _pod(name: str, *claims: str, node: str = "") -> dict[str, Any]:
    b = make_pod(name)
    if node:
        b = b.node(node)
    return with_volumes(b.obj(), *(pvc_vol(c) for c in claims))


@pytest.mark.parametrize(
    ("pod", "existing", "pvcs", "want"),
    [
        pytest.param(make_pod("p").obj(), [], [], SKIP, id="nothing"),
        pytest.param(_pod("pod-with-one-pvc", "claim-with-rwop-1"), [], [],
                     ("prefilter", UNRES, ['persistentvolumeclaim "claim-with-rwop-1" not found']),
                     id="failed-to-get-pvc"),
        pytest.param(_pod("pod-with-one-pvc", "claim-with-rwop-1"),
                     [_pod("pod-with-rwx", "claim-with-rwx", node="node-1")], [RWOP_1, RWX], SKIP,
                     id="no-access-mode-conflict"),
        pytest.param(_pod("pod-with-one-conflict", "claim-with-rwop-1"),
                     [_pod("pod-with-one-pvc", "claim-with-rwop-1", node="node-1"),
                      _pod("pod-with-rwx", "claim-with-rwx", node="node-1")], [RWOP_1, RWX], RWOP,
                     id="access-mode-conflict-unschedulable"),
        pytest.param(_pod("pod-with-two-conflicts", "claim-with-rwop-1", "claim-with-rwop-2"),
                     [_pod("pod-with-two-pvcs", "claim-with-rwop-1", "claim-with-rwop-2", node="node-1"),
                      _pod("pod-with-rwx", "claim-with-rwx", node="node-1")], [RWOP_1, RWOP_2, RWX], RWOP,
                     id="two-conflicts-unschedulable"),
    ],
)
def test_access_mode_conflicts(fw, pod, existing, pvcs, want):
    assert run(pod, existing, pvcs, fw=fw) == want


def test_rwop_claim_used_on_another_node_rejects_every_node(fw):
    snap = fw.Snapshot([make_node("n1").obj(), make_node("n2").obj()],
                       [_pod("holder", "claim-with-rwop-1", node="n2")],
                       informers={"persistentvolumeclaims": [RWOP_1]})
    statuses, *_ = fw.filter_nodes(VolumeRestrictions, _pod("p", "claim-with-rwop-1"), snap)
    assert fw.codes(statuses) == {"n1": RWOP, "n2": RWOP}


def test_rwop_claim_of_another_namespace_does_not_conflict(fw):
    other = with_volumes(make_pod("holder", "other").node("node-1").obj(), pvc_vol("claim-with-rwop-1"))
    assert run(_pod("p", "claim-with-rwop-1"), [other], [RWOP_1], fw=fw) == SKIP


def _rwop_holder_cycle(fw: Any) -> tuple[dict[str, Any], Any, PodInfo, Any, CycleState]:
    """A holder of claim-with-rwop-1 on node-1 and pod p wanting it, after p's PreFilter."""
    holder = _pod("holder", "claim-with-rwop-1", node="node-1")
    r = fw.Run(VolumeRestrictions, fw.Snapshot([make_node("node-1").obj()], [holder],
                                               informers={"persistentvolumeclaims": [RWOP_1]}))
    pod = PodInfo(_pod("p", "claim-with-rwop-1"))
    ni = r.scheduler.snapshot.get("node-1")
    state = CycleState()
    _, st, _ = r.framework.run_pre_filter(state, pod, [ni])
    assert st.is_success()
    return holder, r, pod, ni, state


def test_remove_pod_and_add_pod_adjust_the_rwop_count(fw):
    """Preemption's dry run: evicting the holder (RemovePod) lets the pod fit, adding it back
    (AddPod) rejects it again; the cycle state clones independently."""
    holder, r, pod, ni, state = _rwop_holder_cycle(fw)
    assert r.framework.run_filter(state, pod, ni).reasons == [ERR_REASON_RWOP_CONFLICT]
    sim = state.clone()
    assert r.framework.run_pre_filter_extension_remove_pod(sim, pod, PodInfo(holder), ni).is_success()
    assert is_success(r.framework.run_filter(sim, pod, ni))
    assert r.framework.run_filter(state, pod, ni).reasons == [ERR_REASON_RWOP_CONFLICT]
    assert r.framework.run_pre_filter_extension_add_pod(sim, pod, PodInfo(holder), ni).is_success()
    assert r.framework.run_filter(sim, pod, ni).reasons == [ERR_REASON_RWOP_CONFLICT]


def _hint(event_resource: str, pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
    pl = VolumeRestrictions()
    (reg,) = [r for r in pl.events_to_register() if r.event.resource == event_resource]
    return reg.hint_fn(PodInfo(pod), old, new)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("pod", "deleted", "want"),
    [
        pytest.param(with_volumes(make_pod("p").obj(), GCE_FOO),
                     with_volumes(make_pod("e").node("n1").obj(), GCE_FOO), QueueingHint.QUEUE,
                     id="deleted-pod-held-the-conflicting-disk"),
        pytest.param(with_volumes(make_pod("p").obj(), GCE_FOO),
                     with_volumes(make_pod("e").node("n1").obj(), GCE_BAR), QueueingHint.SKIP,
                     id="deleted-pod-held-another-disk"),
        pytest.param(_pod("p", "c1"), _pod("e", "c1", node="n1"), QueueingHint.QUEUE,
                     id="deleted-pod-used-the-same-claim"),
        pytest.param(_pod("p", "c1"), with_volumes(make_pod("e", "ns2").node("n1").obj(), pvc_vol("c1")),
                     QueueingHint.SKIP, id="deleted-pod-in-another-namespace"),
        pytest.param(_pod("p", "c1"), _pod("e", "c2", node="n1"), QueueingHint.SKIP,
                     id="deleted-pod-irrelevant"),
    ],
)
def test_hint_after_pod_deleted(pod, deleted, want):
    assert _hint("Pod", pod, deleted, None) == want


@pytest.mark.parametrize(
    ("pod", "added", "want"),
    [
        pytest.param(_pod("p", "c1"), claim("c1"), QueueingHint.QUEUE, id="claim-the-pod-names"),
        pytest.param(_pod("p", "c1"), claim("c2"), QueueingHint.SKIP, id="other-claim"),
        pytest.param(_pod("p", "c1"), claim("c1", ns="ns2"), QueueingHint.SKIP, id="other-namespace"),
    ],
)
def test_hint_after_pvc_added(pod, added, want):
    assert _hint("PersistentVolumeClaim", pod, None, added) == want


def test_add_pod_counts_a_same_named_claim_of_any_namespace(fw):
    """Upstream's AddPod/RemovePod (conflictingPVCRefCountForPod) compare claim names only: a
    pod of another namespace added in a dry run with a claim of the same name counts, although
    PreFilter's own count (IsPVCUsedByPods, by namespaced name) would not count it."""
    other = with_volumes(make_pod("elsewhere", "other").node("node-1").obj(), pvc_vol("claim-with-rwop-1"))
    holder, r, pod, ni, state = _rwop_holder_cycle(fw)
    assert r.framework.run_pre_filter_extension_remove_pod(state, pod, PodInfo(holder), ni).is_success()
    assert is_success(r.framework.run_filter(state, pod, ni))
    assert r.framework.run_pre_filter_extension_add_pod(state, pod, PodInfo(other), ni).is_success()
    assert r.framework.run_filter(state, pod, ni).reasons == [ERR_REASON_RWOP_CONFLICT]
