"""NodeVolumeLimits (upstream nodevolumelimits/csi_test.go: TestCSILimits and the queueing-hint
tables), through the real framework runtime.

The cluster is built as upstream's helpers build it: for each driver name, claims and PVs
"csi-<driver>-0..3" (CSI PVs, an AWS EBS in-tree PV for kubernetes.io/aws-ebs, a hostPath PV for
kubernetes.io/hostpath), claim "csi-4" unbound of class "csi-sc", "csi-5" unbound without a
class, "csi-6" bound to a missing PV; class "csi-sc" provisioned by the first driver; CSINode of
the node listing the drivers with the limit (or without it); `va` VolumeAttachments per driver
to PVs "csi-<driver>-0.." on the node. The ephemeral-volume rows' missing claim carries the real
lister's message (`persistentvolumeclaim "abc-xyz" not found`; upstream's fake lister says
"persistentvolumeclaims")."""

from typing import Any

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.interface import ActionType, Code, QueueingHint
from scheduler.framework.types import PodInfo
from scheduler.plugins.node_volume_limits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NodeVolumeLimits

NODE = "node-for-max-pd-test-1"
EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
IN_TREE_EBS = "kubernetes.io/aws-ebs"
HOSTPATH = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
EXCEEDED = (Code.UNSCHEDULABLE, [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED])
OK = (Code.SUCCESS, [])
SKIP = "skip"

_n = iter(range(10_000))


def pod(*volumes: dict[str, Any], name: str = "", ns: str = "default", uid: str = "") -> dict[str, Any]:
    p = make_pod(name or f"p{next(_n)}", ns).obj()
    if uid:
        p["metadata"]["uid"] = uid
    p["spec"]["volumes"] = [{"name": v.pop("name", f"v{i}"), **v} for i, v in enumerate(volumes)]
    return p


def pvc(claim: str) -> dict[str, Any]:
    return {"persistentVolumeClaim": {"claimName": claim}}


def ephemeral(name: str) -> dict[str, Any]:
    return {"name": name, "ephemeral": {}}


def ebs_inline(volume_id: str) -> dict[str, Any]:
    return {"awsElasticBlockStore": {"volumeID": volume_id}}


CONFIGMAP_AND_SECRET = ({"configMap": {"name": "cm"}}, {"secret": {"secretName": "s"}})


def claim(name: str, ns: str = "default", *, volume: str = "", sc: str | None = None,
          owner_uid: str = "", owner: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if volume:
        spec["volumeName"] = volume
    if sc is not None:
        spec["storageClassName"] = sc
    meta: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"uid-claim-{ns}-{name}"}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner, "uid": owner_uid,
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def listers(drivers: list[str], va_count: int, max_vols: int, limit_source: str,
            extra_claims: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """upstream's getFakeCSIPVLister / PVCLister / StorageClassLister / VolumeAttachmentLister and
    getNodeWithPodAndVolumeLimits' CSINode (also used by test_upstream_volume_plugins.py)."""
    pvs, pvcs, vas = [], [], []
    for d in drivers:
        for j in range(4):
            handle = f"csi-{d}-{j}"
            if d == IN_TREE_EBS:
                source: dict[str, Any] = {"awsElasticBlockStore": {"volumeID": handle}}
            elif d == HOSTPATH:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": d, "volumeHandle": handle}}
            pvs.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": handle}, "spec": source})
            pvcs.append(claim(handle, volume=handle))
        for j in range(va_count):
            vas.append({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                        "metadata": {"name": f"va-{d}-{j}"},
                        "spec": {"nodeName": NODE, "attacher": d, "source": {"persistentVolumeName": f"csi-{d}-{j}"}}})
    pvcs += [claim("csi-4", sc=SC_NAME), claim("csi-5"), claim("csi-6", sc=SC_NAME, volume="missing-in-action")]
    out = {"persistentvolumes": pvs, "persistentvolumeclaims": pvcs + extra_claims,
           "storageclasses": [{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                               "metadata": {"name": SC_NAME}, "provisioner": drivers[0]}],
           "volumeattachments": vas, "csinodes": []}
    if limit_source in ("csinode", "csinode-with-no-limit", "no-csi-driver"):  # upstream's limit sources
        out["csinodes"] = [{"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {
            "name": NODE, "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": IN_TREE_EBS}},
            "spec": {"drivers": [] if limit_source == "no-csi-driver" else [
                {"name": d, "nodeID": NODE, **({"allocatable": {"count": max_vols}} if limit_source == "csinode" else {})}
                for d in drivers]}}]
    return out


running_pod = lambda: pod(pvc("csi-ebs.csi.aws.com-3"))  # noqa: E731
pending_volume_pod = lambda: pod(pvc("csi-4"))  # noqa: E731
missing_pv_pod = lambda: pod(pvc("csi-6"))  # noqa: E731
no_sc_pvc_pod = lambda: pod(pvc("csi-5"))  # noqa: E731
gce_two_vol_pod = lambda: pod(pvc("csi-pd.csi.storage.gke.io-1"), pvc("csi-pd.csi.storage.gke.io-2"))  # noqa: E731
in_tree_one_vol_pod = lambda: pod(pvc("csi-kubernetes.io/aws-ebs-0"))  # noqa: E731
in_tree_two_vol_pod = lambda: pod(pvc("csi-kubernetes.io/aws-ebs-1"), pvc("csi-kubernetes.io/aws-ebs-2"))  # noqa: E731
csi_ebs_one_vol_pod = lambda: pod(pvc("csi-ebs.csi.aws.com-0"))  # noqa: E731
csi_ebs_two_vol_pod = lambda: pod(pvc("csi-ebs.csi.aws.com-1"), pvc("csi-ebs.csi.aws.com-2"))  # noqa: E731
in_tree_non_migratable_pod = lambda: pod(pvc("csi-kubernetes.io/hostpath-0"))  # noqa: E731
in_tree_inline_pod = lambda: pod(ebs_inline("aws-inline1"))  # noqa: E731
in_tree_inline_same_csi_id_pod = lambda: pod(ebs_inline("csi-ebs.csi.aws.com-1"))  # noqa: E731
ephemeral_pod = lambda: pod(ephemeral("xyz"), name="abc", ns="test", uid="12345")  # noqa: E731
ephemeral_two_pod = lambda: pod(ephemeral("x"), ephemeral("y"), name="abc", ns="test", uid="12345II")  # noqa: E731
EPHEMERAL_CLAIM = claim("abc-xyz", "test", sc=SC_NAME, owner="abc", owner_uid="12345")
CONFLICTING_CLAIM = claim("abc-xyz", "test", sc=SC_NAME)
EPHEMERAL_CLAIM_X = claim("abc-x", "test", sc=SC_NAME, owner="abc", owner_uid="12345II")
EPHEMERAL_CLAIM_Y = claim("abc-y", "test", sc=SC_NAME, owner="abc", owner_uid="12345II")
EPHEMERAL_MISSING = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                     ['looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'])

ROWS = [
    # (id, new pod, existing pods, max vols, drivers, limit source, extra claims, va count, want)
    ("should-count-volumeattachments-towards-volume-limit-when-no-pods-exist",
     csi_ebs_one_vol_pod, [], 2, [EBS], "csinode", [], 2, EXCEEDED),
    ("should-schedule-pod-when-volumeattachments-count-does-not-exceed-limit",
     csi_ebs_one_vol_pod, [], 2, [EBS], "csinode", [], 1, OK),
    ("fits-when-node-volume-limit->=-new-pods-csi-volume",
     csi_ebs_one_vol_pod, [running_pod, csi_ebs_two_vol_pod], 4, [EBS], "csinode", [], 0, OK),
    ("doesnt-when-node-volume-limit-<=-pods-csi-volume",
     csi_ebs_one_vol_pod, [running_pod, csi_ebs_two_vol_pod], 2, [EBS], "csinode", [], 0, EXCEEDED),
    ("should-when-driver-does-not-support-volume-limits",
     csi_ebs_one_vol_pod, [running_pod, csi_ebs_two_vol_pod], 2, [EBS], "csinode-with-no-limit", [], 0, OK),
    ("count-pending-pvcs-towards-volume-limit-<=-pods-csi-volume",
     csi_ebs_one_vol_pod, [pending_volume_pod, csi_ebs_two_vol_pod], 2, [EBS], "csinode", [], 0, EXCEEDED),
    ("count-multiple-pending-pvcs-towards-volume-limit->=-pods-csi-volume",
     csi_ebs_one_vol_pod, [pending_volume_pod, pending_volume_pod, csi_ebs_two_vol_pod], 4, [EBS], "csinode",
     [], 0, OK),
    ("should-count-pvcs-with-invalid-pv-name-but-valid-sc",
     csi_ebs_one_vol_pod, [missing_pv_pod, csi_ebs_two_vol_pod], 2, [EBS], "csinode", [], 0, EXCEEDED),
    ("dont-count-pvcs-with-missing-sc-towards-volume-limit",
     csi_ebs_one_vol_pod, [running_pod, no_sc_pvc_pod], 2, [EBS], "csinode", [], 0, OK),
    ("count-pvcs-with-the-same-type-towards-volume-limit",
     csi_ebs_one_vol_pod, [gce_two_vol_pod, csi_ebs_two_vol_pod], 2, [EBS, GCE], "csinode", [], 0, EXCEEDED),
    ("dont-count-pvcs-with-different-type-towards-volume-limit",
     gce_two_vol_pod, [csi_ebs_two_vol_pod, running_pod], 2, [EBS, GCE], "csinode", [], 0, OK),
    ("should-count-in-tree-volumes-if-migration-is-enabled",
     in_tree_one_vol_pod, [in_tree_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode", [], 0, EXCEEDED),
    ("nil-csi-node",
     in_tree_inline_pod, [in_tree_two_vol_pod], 0, [IN_TREE_EBS, EBS], "", [], 0, OK),
    ("should-count-unbound-in-tree-volumes-if-migration-is-enabled",
     pending_volume_pod, [in_tree_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode", [], 0, EXCEEDED),
    ("should-not-limit-pod-if-volume-used-does-not-report-limits",
     in_tree_one_vol_pod, [in_tree_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode-with-no-limit", [], 0, OK),
    ("should-not-count-non-migratable-in-tree-volumes",
     in_tree_non_migratable_pod, [csi_ebs_two_vol_pod], 2, [HOSTPATH, EBS], "csinode", [], 0, OK),
    ("should-count-in-tree-inline-volumes-if-migration-is-enabled",
     in_tree_inline_pod, [in_tree_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode", [], 0, EXCEEDED),
    ("should-count-in-tree-and-csi-volumes-if-migration-is-enabled-when-scheduling-in-tree-volumes",
     in_tree_one_vol_pod, [csi_ebs_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode", [], 0, EXCEEDED),
    ("should-count-in-tree-inline-and-csi-volumes-if-migration-is-enabled-when-scheduling-in-tree-volumes",
     in_tree_inline_pod, [csi_ebs_two_vol_pod, in_tree_one_vol_pod], 3, [IN_TREE_EBS, EBS], "csinode", [], 0,
     EXCEEDED),
    ("should-not-count-in-tree-inline-and-csi-volumes-with-the-same-csi-volume-id",
     in_tree_inline_same_csi_id_pod, [csi_ebs_two_vol_pod, in_tree_one_vol_pod], 3, [IN_TREE_EBS, EBS],
     "csinode", [], 0, OK),
    ("should-count-in-tree-and-csi-volumes-if-migration-is-enabled-when-scheduling-csi-volumes",
     csi_ebs_one_vol_pod, [in_tree_two_vol_pod], 2, [IN_TREE_EBS, EBS], "csinode", [], 0, EXCEEDED),
    ("ephemeral-volume-missing",
     ephemeral_pod, [], 0, [EBS], "csinode-with-no-limit", [], 0, EPHEMERAL_MISSING),
    ("ephemeral-volume-not-owned",
     ephemeral_pod, [], 0, [EBS], "csinode-with-no-limit", [CONFLICTING_CLAIM], 0,
     (Code.ERROR, ['running "NodeVolumeLimits" filter plugin: '
                   "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"])),
    ("ephemeral-volume-unbound",
     ephemeral_pod, [], 0, [EBS], "csinode-with-no-limit", [EPHEMERAL_CLAIM], 0, OK),
    ("ephemeral-doesnt-when-node-volume-limit-<=-pods-csi-volume",
     ephemeral_pod, [running_pod, csi_ebs_two_vol_pod], 2, [EBS], "csinode", [EPHEMERAL_CLAIM], 0, EXCEEDED),
    ("ephemeral-doesnt-when-node-volume-limit-<=-pods-ephemeral-csi-volume",
     csi_ebs_one_vol_pod, [running_pod, ephemeral_two_pod], 2, [EBS], "csinode",
     [EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y], 0, EXCEEDED),
    ("persistent-doesnt-when-node-volume-limit-<=-pods-ephemeral-csi-volume-+-persistent-volume",
     csi_ebs_one_vol_pod, [running_pod, ephemeral_pod, csi_ebs_two_vol_pod], 3, [EBS], "csinode",
     [EPHEMERAL_CLAIM], 0, EXCEEDED),
    ("persistent-okay-when-node-volume-limit->-pods-ephemeral-csi-volume-+-persistent-volume",
     csi_ebs_one_vol_pod, [running_pod, ephemeral_pod, csi_ebs_two_vol_pod], 5, [EBS], "csinode",
     [EPHEMERAL_CLAIM], 0, OK),
    ("skip-filter-when-the-pod-only-uses-secrets-and-configmaps",
     lambda: pod(*CONFIGMAP_AND_SECRET), [], 2, [EBS], "csinode", [], 0, SKIP),
    ("dont-skip-filter-when-the-pod-has-pvcs",
     lambda: pod(*CONFIGMAP_AND_SECRET, pvc("csi-ebs.csi.aws.com-0")), [], 2, [EBS], "csinode", [], 0, OK),
    ("dont-skip-filter-when-the-pod-has-ephemeral-volumes",
     lambda: pod(*CONFIGMAP_AND_SECRET, ephemeral("xyz"), name="abc", ns="test", uid="12345"), [], 0, [EBS],
     "csinode-with-no-limit", [], 0, EPHEMERAL_MISSING),
    ("dont-skip-filter-when-the-pod-has-inline-migratable-volumes",
     lambda: pod(*CONFIGMAP_AND_SECRET, ebs_inline("aws-inline1")), [in_tree_two_vol_pod], 2,
     [IN_TREE_EBS, EBS], "csinode", [], 0, EXCEEDED),
]


@pytest.mark.parametrize(("new_pod", "existing", "max_vols", "drivers", "limit_source", "extra", "va", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in ROWS])
def test_csi_limits(fw, new_pod, existing, max_vols, drivers, limit_source, extra, va, want):
    pods = []
    for make in existing:
        p = make()
        p["spec"]["nodeName"] = NODE
        pods.append(p)
    snap = fw.Snapshot([make_node(NODE).obj()], pods,
                       informers=listers(drivers, va, max_vols, limit_source, extra))
    statuses, _, st, state = fw.filter_nodes(NodeVolumeLimits, new_pod(), snap)
    assert st.is_success()
    got = SKIP if "NodeVolumeLimits" in state.skip_filter_plugins else fw.codes(statuses)[NODE]
    assert got == want


def test_limit_is_per_node(fw):
    full = pod(pvc("csi-ebs.csi.aws.com-1"), pvc("csi-ebs.csi.aws.com-2"))
    full["spec"]["nodeName"] = NODE
    objs = listers([EBS], 0, 2, "csinode", [])
    snap = fw.Snapshot([make_node(NODE).obj(), make_node("other").obj()], [full], informers=objs)
    statuses, *_ = fw.filter_nodes(NodeVolumeLimits, csi_ebs_one_vol_pod(), snap)
    assert fw.codes(statuses) == {NODE: EXCEEDED, "other": OK}
    # a volume already attached to the node does not count again
    statuses, *_ = fw.filter_nodes(NodeVolumeLimits, pod(pvc("csi-ebs.csi.aws.com-1")), snap)
    assert fw.codes(statuses) == {NODE: OK, "other": OK}


def test_events_to_register():
    got = {(r.event.resource, r.event.action) for r in NodeVolumeLimits().events_to_register()}
    assert got == {("CSINode", ActionType.ADD), ("Pod", ActionType.DELETE),
                   ("PersistentVolumeClaim", ActionType.ADD), ("VolumeAttachment", ActionType.DELETE)}


def _hint(pl: NodeVolumeLimits, resource: str, pod_: dict[str, Any], old: Any, new: Any) -> QueueingHint:
    (reg,) = [r for r in pl.events_to_register() if r.event.resource == resource]
    return reg.hint_fn(PodInfo(pod_), old, new)  # type: ignore[no-any-return]


def _scheduled(p: dict[str, Any], node: str = "fake-node") -> dict[str, Any]:
    p["spec"]["nodeName"] = node
    return p


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(_scheduled(pod(pvc("placeholder"))), QueueingHint.QUEUE, id="deleted-pod-has-a-pvc"),
        pytest.param(_scheduled(pod({"awsElasticBlockStore": {}})), QueueingHint.QUEUE,
                     id="deleted-pod-has-an-inline-migratable-volume"),
        pytest.param(_scheduled(make_pod("d").obj()), QueueingHint.SKIP, id="deleted-pod-has-no-volume"),
        pytest.param(pod(pvc("csi-ebs.csi.aws.com-0")), QueueingHint.SKIP, id="deleted-pod-not-scheduled"),
    ],
)
def test_hint_after_pod_deleted(deleted, want):
    assert _hint(NodeVolumeLimits(), "Pod", pod(pvc("csi-ebs.csi.aws.com-2")), deleted, None) == want


@pytest.mark.parametrize(
    ("pod_", "added", "want"),
    [
        pytest.param(pod(ns="ns1"), claim("x", "ns2"), QueueingHint.SKIP, id="other-namespace"),
        pytest.param(pod(pvc("pvc1"), ns="ns1"), claim("pvc1", "ns1"), QueueingHint.QUEUE, id="same-claim"),
        pytest.param(pod(ephemeral("ephemeral"), name="pod1", ns="ns1"), claim("pod1-ephemeral", "ns1"),
                     QueueingHint.QUEUE, id="ephemeral-volume-claim"),
        pytest.param(pod(pvc("pvc1"), ns="ns1"), claim("pvc2", "ns1"), QueueingHint.SKIP, id="other-claim"),
        pytest.param(pod(ns="ns1"), claim("pvc2", "ns1"), QueueingHint.SKIP, id="pod-without-claims"),
    ],
)
def test_hint_after_pvc_added(pod_, added, want):
    assert _hint(NodeVolumeLimits(), "PersistentVolumeClaim", pod_, None, added) == want


def _va(attacher: str, *, pv: str = "", inline_driver: str = "") -> dict[str, Any]:
    source: dict[str, Any] = {"persistentVolumeName": pv} if pv else {
        "inlineVolumeSpec": {"csi": {"driver": inline_driver}}}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "volumeattachment1"},
            "spec": {"nodeName": "fake-node", "attacher": attacher, "source": source}}


@pytest.mark.parametrize(
    ("pod_", "deleted", "want"),
    [
        pytest.param(pod(pvc("pvc1"), ns="ns1"), _va("test.storage.gke.io", pv="pv1"), QueueingHint.QUEUE,
                     id="pod-has-the-pvc-of-the-detached-pv"),
        pytest.param(pod(ebs_inline("test"), ns="ns1"), _va(EBS, inline_driver=EBS), QueueingHint.QUEUE,
                     id="inline-ebs-and-ebs-attachment-match"),
        pytest.param(pod({"gcePersistentDisk": {"pdName": "test"}}, ns="ns1"), _va(EBS, inline_driver=EBS),
                     QueueingHint.SKIP, id="inline-gce-and-ebs-attachment-no-match"),
        pytest.param(pod(ebs_inline("test"), pvc("pvc1"), ns="ns1"), _va(EBS, inline_driver=EBS), QueueingHint.QUEUE,
                     id="inline-ebs-and-pvc-ebs-attachment"),
        pytest.param(pod(ebs_inline("test"), pvc("pvc1"), ns="ns1"), _va("test.storage.gke.io", pv="pv1"),
                     QueueingHint.QUEUE, id="inline-ebs-and-pvc-pv-attachment"),
        pytest.param(pod(ns="ns1"), _va("test.storage.gke.io", pv="pv1"), QueueingHint.SKIP, id="pod-without-pvc"),
    ],
)
def test_hint_after_volume_attachment_deleted(fw, pod_, deleted, want):
    r = fw.Run(NodeVolumeLimits, fw.Snapshot([make_node("fake-node").obj()], informers={
        "persistentvolumeclaims": [claim("pvc1", "ns1", volume="pv1")]}))
    assert _hint(r.plugin("NodeVolumeLimits"), "VolumeAttachment", pod_, deleted, None) == want
