"""VolumeZone (upstream volumezone/volume_zone_test.go: TestSingleZone, TestMultiZone,
TestWithBinding and the queueing-hint tables), through the real framework runtime.

Missing objects carry the message a real informer lister gives (`storageclass.storage.k8s.io
"Class_0" not found`); upstream's table uses fake listers whose resource names are plural."""

from typing import Any

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.interface import Code, QueueingHint
from scheduler.framework.types import PodInfo
from scheduler.plugins.volume_zone import ERR_REASON_CONFLICT, VolumeZone

UNRES = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
CONFLICT = (UNRES, [ERR_REASON_CONFLICT])
OK = (Code.SUCCESS, [])
SKIP = "skip"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def pv(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": dict(labels)},
            "spec": {}}


def pvc(name: str, volume: str = "", sc: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if volume:
        spec["volumeName"] = volume
    if sc is not None:
        spec["storageClassName"] = sc
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}


def sc(name: str, mode: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                           "provisioner": "example.com/p"}
    if mode is not None:
        out["volumeBindingMode"] = mode
    return out


def pod_with_pvc(claim: str, name: str = "pod_1") -> dict[str, Any]:
    p = make_pod(name).obj()
    p["spec"]["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]
    return p


def lbl(**kw: str) -> dict[str, str]:
    keys = {"beta_zone": BETA_ZONE, "beta_region": BETA_REGION, "zone": ZONE, "region": REGION}
    return {keys.get(k, k): v for k, v in kw.items()}


SINGLE_PVS = [
    pv("Vol_1", **lbl(beta_zone="us-west1-a")),
    pv("Vol_2", **lbl(beta_region="us-west1", uselessLabel="none")),
    pv("Vol_3", **lbl(beta_region="us-west1")),
    pv("Vol_Stable_1", **lbl(zone="us-west1-a")),
    pv("Vol_Stable_2", **lbl(region="us-west1", uselessLabel="none")),
    pv("Vol_Stable_3", **lbl(zone="us-west1-a", region="us-west1-a")),
]
SINGLE_PVCS = [pvc("PVC_1", "Vol_1"), pvc("PVC_2", "Vol_2"), pvc("PVC_3", "Vol_3"), pvc("PVC_4", "Vol_not_exist"),
               pvc("PVC_Stable_1", "Vol_Stable_1"), pvc("PVC_Stable_2", "Vol_Stable_2"),
               pvc("PVC_Stable_3", "Vol_Stable_3"), pvc("PVC_NoName_Missing")]

MULTI_PVS = [
    pv("Vol_1", **lbl(beta_zone="us-west1-a")),
    pv("Vol_2", **lbl(beta_zone="us-west1-b", uselessLabel="none")),
    pv("Vol_3", **lbl(beta_zone="us-west1-c__us-west1-a")),
    pv("Vol_Stable_1", **lbl(zone="us-west1-a")),
    pv("Vol_Stable_2", **lbl(zone="us-west1-c__us-west1-a")),
    pv("Vol_Bad", **lbl(zone="us-west1-a__")),
]
MULTI_PVCS = [pvc("PVC_1", "Vol_1"), pvc("PVC_2", "Vol_2"), pvc("PVC_3", "Vol_3"), pvc("PVC_4", "Vol_not_exist"),
              pvc("PVC_Stable_1", "Vol_Stable_1"), pvc("PVC_Stable_2", "Vol_Stable_2"), pvc("PVC_Bad", "Vol_Bad")]

BINDING_SCS = [sc("Class_Immediate", None), sc("Class_Wait", "WaitForFirstConsumer"),
               sc("Class_Imm", "Immediate")]
BINDING_PVS = [pv("Vol_1", **lbl(beta_zone="us-west1-a"))]
BINDING_PVCS = [pvc("PVC_1", "Vol_1"), pvc("PVC_NoSC", sc="Class_0"), pvc("PVC_EmptySC"),
                pvc("PVC_WaitSC", sc="Class_Wait"), pvc("PVC_ImmediateSC", sc="Class_Immediate"),
                pvc("PVC_ImmSC", sc="Class_Imm")]
BINDING_NODE = lbl(beta_zone="us-west1-a", uselessLabel="none")


def run(fw: Any, pod: dict[str, Any], node_labels: dict[str, str], pvs: list[Any], pvcs: list[Any],
        scs: list[Any] = ()) -> Any:  # type: ignore[assignment]
    snap = fw.Snapshot([make_node("host1").labels(node_labels).obj()], informers={
        "persistentvolumes": pvs, "persistentvolumeclaims": pvcs, "storageclasses": list(scs)})
    statuses, _, st, state = fw.filter_nodes(VolumeZone, pod, snap)
    if "VolumeZone" in state.skip_filter_plugins:
        return SKIP
    if not st.is_success():
        return ("prefilter", st.code, list(st.reasons))
    return fw.codes(statuses)["host1"]


@pytest.mark.parametrize(
    ("pod", "node_labels", "want"),
    [
        pytest.param(make_pod("pod_1").obj(), lbl(beta_zone="us-west1-a"), SKIP, id="pod-without-volume"),
        pytest.param(pod_with_pvc("PVC_1"), {}, OK, id="node-without-labels"),
        pytest.param(pod_with_pvc("PVC_1"), lbl(beta_zone="us-west1-a", uselessLabel="none"), OK,
                     id="beta-zone-label-matched"),
        pytest.param(pod_with_pvc("PVC_2"), lbl(beta_region="us-west1", uselessLabel="none"), OK,
                     id="beta-region-label-matched"),
        pytest.param(pod_with_pvc("PVC_2"), lbl(beta_region="no_us-west1", uselessLabel="none"), CONFLICT,
                     id="beta-region-label-doesnt-match"),
        pytest.param(pod_with_pvc("PVC_1"), lbl(beta_zone="no_us-west1-a", uselessLabel="none"), CONFLICT,
                     id="beta-zone-label-doesnt-match"),
        pytest.param(pod_with_pvc("PVC_Stable_1"), lbl(zone="us-west1-a", uselessLabel="none"), OK,
                     id="zone-label-matched"),
        pytest.param(pod_with_pvc("PVC_Stable_2"), lbl(region="us-west1", uselessLabel="none"), OK,
                     id="region-label-matched"),
        pytest.param(pod_with_pvc("PVC_Stable_2"), lbl(region="no_us-west1", uselessLabel="none"), CONFLICT,
                     id="region-label-doesnt-match"),
        pytest.param(pod_with_pvc("PVC_Stable_1"), lbl(zone="no_us-west1-a", uselessLabel="none"), CONFLICT,
                     id="zone-label-doesnt-match"),
        pytest.param(pod_with_pvc("PVC_Stable_3"), lbl(zone="us-west1-a"), CONFLICT,
                     id="pv-with-zone-and-region-node-with-only-zone"),
        pytest.param(pod_with_pvc("PVC_Stable_1"), lbl(beta_zone="us-west1-a"), CONFLICT,
                     id="pv-with-zone-node-with-beta-zone"),
        pytest.param(pod_with_pvc("PVC_1"), lbl(zone="us-west1-a"), OK, id="pv-with-beta-label-node-with-ga-label-matched"),
        pytest.param(pod_with_pvc("PVC_1"), lbl(zone="us-west1-b"), CONFLICT,
                     id="pv-with-beta-label-node-with-ga-label-dont-match"),
        pytest.param(pod_with_pvc("PVC_4"), lbl(zone="us-west1-a"),
                     ("prefilter", UNRES, ['persistentvolume "Vol_not_exist" not found']), id="pv-missing"),
        pytest.param(pod_with_pvc("PVC_missing"), lbl(zone="us-west1-a"),
                     ("prefilter", UNRES, ['persistentvolumeclaim "PVC_missing" not found']), id="pvc-missing"),
        pytest.param(pod_with_pvc(""), lbl(zone="us-west1-a"),
                     ("prefilter", UNRES, ["PersistentVolumeClaim had no name"]), id="pvc-without-name"),
    ],
)
def test_single_zone(fw, pod, node_labels, want):
    assert run(fw, pod, node_labels, SINGLE_PVS, SINGLE_PVCS) == want


@pytest.mark.parametrize(
    ("pod", "node_labels", "want"),
    [
        pytest.param(pod_with_pvc("PVC_3"), {}, OK, id="node-without-labels"),
        pytest.param(pod_with_pvc("PVC_3"), lbl(beta_zone="us-west1-a", uselessLabel="none"), OK,
                     id="beta-zone-label-matched"),
        pytest.param(pod_with_pvc("PVC_1"), lbl(beta_zone="us-west1-b", uselessLabel="none"), CONFLICT,
                     id="beta-zone-label-doesnt-match"),
        pytest.param(pod_with_pvc("PVC_Stable_2"), lbl(zone="us-west1-a", uselessLabel="none"), OK,
                     id="zone-label-matched"),
        pytest.param(pod_with_pvc("PVC_Stable_1"), lbl(zone="us-west1-b", uselessLabel="none"), CONFLICT,
                     id="zone-label-doesnt-match"),
        pytest.param(pod_with_pvc("PVC_Bad"), lbl(zone="us-west1-b"), SKIP, id="label-with-empty-member-ignored"),
    ],
)
def test_multi_zone(fw, pod, node_labels, want):
    assert run(fw, pod, node_labels, MULTI_PVS, MULTI_PVCS) == want


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(pod_with_pvc("PVC_1"), OK, id="label-zone-failure-domain-matched"),
        pytest.param(pod_with_pvc("PVC_EmptySC"),
                     ("prefilter", UNRES, ["PersistentVolumeClaim had no pv name and storageClass name"]),
                     id="unbound-volume-empty-storage-class"),
        pytest.param(pod_with_pvc("PVC_NoSC"),
                     ("prefilter", UNRES, ['storageclass.storage.k8s.io "Class_0" not found']),
                     id="unbound-volume-no-storage-class"),
        pytest.param(pod_with_pvc("PVC_ImmediateSC"),
                     ("prefilter", UNRES, ['VolumeBindingMode not set for StorageClass "Class_Immediate"']),
                     id="unbound-volume-immediate-binding-mode"),
        pytest.param(pod_with_pvc("PVC_ImmSC"), ("prefilter", UNRES, ["PersistentVolume had no name"]),
                     id="unbound-volume-explicit-immediate-mode"),
        pytest.param(pod_with_pvc("PVC_WaitSC"), SKIP, id="unbound-volume-wait-binding-mode"),
    ],
)
def test_with_binding(fw, pod, want):
    assert run(fw, pod, BINDING_NODE, BINDING_PVS, BINDING_PVCS, BINDING_SCS) == want


def test_zone_mismatch_is_per_node(fw):
    snap = fw.Snapshot([make_node("a").labels(lbl(zone="us-west1-a")).obj(),
                        make_node("b").labels(lbl(zone="us-west1-b")).obj(), make_node("plain").obj()],
                       informers={"persistentvolumes": SINGLE_PVS, "persistentvolumeclaims": SINGLE_PVCS})
    statuses, *_ = fw.filter_nodes(VolumeZone, pod_with_pvc("PVC_Stable_1"), snap)
    assert fw.codes(statuses) == {"a": OK, "b": CONFLICT, "plain": OK}


def _hint(resource: str, pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
    (reg,) = [r for r in VolumeZone().events_to_register() if r.event.resource == resource]
    return reg.hint_fn(PodInfo(pod), old, new)  # type: ignore[no-any-return]


def _claim(name: str, ns: str = "default", volume: str = "") -> dict[str, Any]:
    c = pvc(name, volume)
    c["metadata"]["namespace"] = ns
    return c


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(make_pod("pod_1").obj(), None, _claim("PVC_1", volume="Vol_1"), QueueingHint.SKIP,
                     id="pvc-was-added-but-pod-refers-no-pvc"),
        pytest.param(pod_with_pvc("PVC_2"), None, _claim("PVC_1", volume="Vol_1"), QueueingHint.SKIP,
                     id="pvc-was-added-and-pod-was-bound-to-different-pvc"),
        pytest.param(pod_with_pvc("PVC_1"), None, _claim("PVC_1", "ns1", "Vol_1"), QueueingHint.SKIP,
                     id="pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns"),
        pytest.param(pod_with_pvc("PVC_1"), None, _claim("PVC_1", volume="Vol_1"), QueueingHint.QUEUE,
                     id="pvc-was-added-and-pod-was-bound-to-the-pvc"),
        pytest.param(pod_with_pvc("PVC_1"), _claim("PVC_1"), _claim("PVC_1", volume="Vol_1"), QueueingHint.QUEUE,
                     id="pvc-was-updated-and-pod-was-bound-to-the-pvc"),
        pytest.param(make_pod("pod_1").obj(), _claim("PVC_1"), _claim("PVC_1", volume="Vol_1"), QueueingHint.SKIP,
                     id="pvc-was-updated-but-pod-refers-no-pvc"),
        pytest.param(pod_with_pvc("PVC_1"), None, "not-a-pvc", QueueingHint.QUEUE, id="error-wrong-new-object"),
    ],
)
def test_hint_after_pvc_change(pod, old, new, want):
    assert _hint("PersistentVolumeClaim", pod, old, new) == want


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param("not-a-storageclass", QueueingHint.QUEUE, id="error-wrong-new-object"),
        pytest.param(sc("SC_1", None), QueueingHint.SKIP, id="sc-doesnt-have-volume-binding-mode"),
        pytest.param(sc("SC_1", "WaitForFirstConsumer"), QueueingHint.QUEUE, id="new-sc-is-wait-for-first-consumer-mode"),
    ],
)
def test_hint_after_storage_class_added(new, want):
    assert _hint("StorageClass", pod_with_pvc("PVC_1"), None, new) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, "not-a-pv", QueueingHint.QUEUE, id="error-wrong-new-object"),
        pytest.param("not-a-pv", pv("Vol_1"), QueueingHint.QUEUE, id="error-wrong-old-object"),
        pytest.param(None, pv("Vol_1", **lbl(beta_zone="us-west1-b")), QueueingHint.QUEUE, id="new-pv-was-added"),
        pytest.param(pv("Vol_1", **lbl(beta_zone="us-west1-a")), pv("Vol_1", **lbl(beta_zone="us-west1-b")),
                     QueueingHint.QUEUE, id="pv-was-updated-and-changed-topology"),
        pytest.param(pv("Vol_1", **lbl(beta_zone="us-west1-a")),
                     pv("Vol_1", **lbl(beta_zone="us-west1-a", zone="zone")), QueueingHint.QUEUE,
                     id="pv-was-updated-and-added-topology-label"),
        pytest.param(pv("Vol_1", **lbl(beta_zone="us-west1-a", zone="zone")),
                     pv("Vol_1", **lbl(beta_zone="us-west1-a", zone="zone")), QueueingHint.SKIP,
                     id="pv-was-updated-but-no-topology-is-changed"),
    ],
)
def test_hint_after_pv_change(old, new, want):
    assert _hint("PersistentVolume", pod_with_pvc("PVC_1"), old, new) == want


def test_events_to_register():
    got = {(r.event.resource, r.event.action) for r in VolumeZone().events_to_register()}
    from scheduler.framework.interface import ActionType as A
    assert got == {("StorageClass", A.ADD), ("Node", A.ADD | A.UPDATE_NODE_LABEL),
                   ("PersistentVolumeClaim", A.ADD | A.UPDATE), ("PersistentVolume", A.ADD | A.UPDATE)}
