"""VolumeBinding (upstream volumebinding/volume_binding_test.go TestVolumeBinding and
binder_test.go's FindPodVolumes / AssumePodVolumes / BindPodVolumes cases).

PreFilter and Filter run through the real framework runtime (`fw`, listers over fixed objects);
Reserve / Unreserve on the same run; PreBind and the whole binding cycle run in a real
`Scheduler` on the real in-process API, where the test plays the PV controller and the
provisioner (writing the PV and the binding when the selected-node annotation appears)."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from minik3s.api.resources import NODES, PERSISTENTVOLUMECLAIMS, PODS
from minik3s.testing.builders import make_node, make_pod
from scheduler.config import ConfigError, parse_config
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import ActionType, Code, EventResource, QueueingHint, Status
from scheduler.framework.types import PodInfo
from scheduler.plugins.registry import in_tree_registry
from scheduler.plugins.volume_binding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    ERR_UNBOUND_IMMEDIATE,
    PERSISTENTVOLUMES,
    STATE_KEY,
    STORAGECLASSES,
    VolumeBinding,
)
from scheduler.scheduler import Scheduler

WFFC = "WaitForFirstConsumer"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
HOSTNAME = "kubernetes.io/hostname"
OK = (Code.SUCCESS, [])
UNRES = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


# ---------------------------------------------------------------------------------------------- objects
def sc(name: str, mode: str = WFFC, provisioner: str = NO_PROVISIONER, topologies: list[Any] | None = None
       ) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                           "provisioner": provisioner, "volumeBindingMode": mode, "reclaimPolicy": "Delete"}
    if topologies is not None:
        out["allowedTopologies"] = topologies
    return out


def pvc(name: str, cls: str | None = "wait", size: str = "1Gi", *, volume: str = "", bound: bool = False,
        ann: dict[str, str] | None = None, phase: str = "Pending", modes: tuple[str, ...] = ("ReadWriteOnce",),
        deleting: bool = False, owner_uid: str = "", selector: dict[str, Any] | None = None,
        mode: str | None = None) -> dict[str, Any]:
    annotations = dict(ann or {})
    if bound:
        annotations["pv.kubernetes.io/bind-completed"] = "yes"
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": "10",
                            "annotations": annotations}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner_uid,
                                    "controller": True}]
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    if volume:
        spec["volumeName"] = volume
    if selector is not None:
        spec["selector"] = selector
    if mode is not None:
        spec["volumeMode"] = mode
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
            "status": {"phase": phase}}


def pv(name: str, cls: str = "wait", size: str = "1Gi", *, node: str | None = None, claim: str = "",
       phase: str = "Available", modes: tuple[str, ...] = ("ReadWriteOnce",), labels: dict[str, str] | None = None,
       mode: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"storageClassName": cls, "capacity": {"storage": size}, "accessModes": list(modes),
                            "hostPath": {"path": f"/data/{name}"}}
    if node is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}]}}
    if claim:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": claim,
                            "uid": f"uid-{claim}", "apiVersion": "v1"}
    if mode is not None:
        spec["volumeMode"] = mode
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "resourceVersion": "5", "labels": labels or {}},
            "spec": spec, "status": {"phase": phase}}


def pod(name: str = "p", *claims: str, ephemeral: tuple[str, ...] = (), uid: str = "") -> dict[str, Any]:
    b = make_pod(name)
    if uid:
        b = b.uid(uid)
    out = b.obj()
    vols: list[dict[str, Any]] = [{"name": "kube-api-access-x", "projected": {"sources": []}}]
    vols += [{"name": f"v-{c}", "persistentVolumeClaim": {"claimName": c}} for c in claims]
    vols += [{"name": e, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}} for e in ephemeral]
    out["spec"]["volumes"] = vols
    return out


NODES_AB = [make_node("node-a").labels({HOSTNAME: "node-a", "zone": "z1"}).obj(),
            make_node("node-b").labels({HOSTNAME: "node-b", "zone": "z2"}).obj()]

CLASSES = [sc("wait"), sc("immediate", mode="Immediate"), sc("provision", provisioner="rancher.io/local-path"),
           sc("zone1", provisioner="rancher.io/local-path",
              topologies=[{"matchLabelExpressions": [{"key": "zone", "values": ["z1"]}]}]),
           sc("csi", provisioner="csi.example.com")]


def cluster(fw: Any, claims: list[dict[str, Any]], volumes: list[dict[str, Any]] = (), *,
            extra: dict[str, list[dict[str, Any]]] | None = None) -> Any:
    informers = {"persistentvolumeclaims": claims, "persistentvolumes": list(volumes), "storageclasses": CLASSES,
                 **(extra or {})}
    return fw.Snapshot(NODES_AB, informers=informers)


# ---------------------------------------------------------------------------------------------- PreFilter
@pytest.mark.parametrize(("the_pod", "claims", "want"), [
    pytest.param(make_pod("p").obj(), [], "skip", id="pod-without-volumes-skips"),
    pytest.param(pod("p"), [], "skip", id="projected-token-only-skips"),
    pytest.param(pod("p", "pvc-a"), [], (UNRES, ['persistentvolumeclaim "pvc-a" not found']),
                 id="claim-not-found"),
    pytest.param(pod("p", ephemeral=("scratch",)), [],
                 (UNRES, ['waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"']),
                 id="ephemeral-claim-not-created-yet"),
    pytest.param(pod("p", ephemeral=("scratch",), uid="pod-uid"), [pvc("p-scratch", owner_uid="someone-else")],
                 (UNRES, ["PVC default/p-scratch was not created for pod default/p (pod is not owner)"]),
                 id="ephemeral-claim-of-another-pod"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", deleting=True)],
                 (UNRES, ['persistentvolumeclaim "pvc-a" is being deleted']), id="claim-being-deleted"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", volume="gone", phase="Lost")],
                 (UNRES, ['persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "gone"']),
                 id="claim-lost"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", cls="immediate")], (UNRES, [ERR_UNBOUND_IMMEDIATE]),
                 id="unbound-immediate-claim"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", cls=None)], (UNRES, [ERR_UNBOUND_IMMEDIATE]),
                 id="unbound-claim-without-class-is-immediate"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", cls="no-such-class")], (UNRES, [ERR_UNBOUND_IMMEDIATE]),
                 id="unbound-claim-of-missing-class-is-immediate"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", volume="pv-a")], (UNRES, [ERR_UNBOUND_IMMEDIATE]),
                 id="prebound-claim-waits-for-pv-controller"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", volume="pv-a", bound=True)], OK, id="bound-claim"),
    pytest.param(pod("p", "pvc-a", ephemeral=("scratch",), uid="pod-uid"),
                 [pvc("pvc-a", volume="pv-a", bound=True), pvc("p-scratch", owner_uid="pod-uid")], OK,
                 id="bound-and-owned-ephemeral-wffc-claims"),
])
def test_pre_filter(fw, the_pod, claims, want):
    _, result, st, state = fw.filter_nodes(VolumeBinding, the_pod, cluster(fw, claims, [pv("pv-a", claim="pvc-a")]))
    if want == "skip":  # PreFilter's Skip: Filter is skipped, nothing is kept for the cycle
        assert st.is_success() and "VolumeBinding" in state.skip_filter_plugins and state.get(STATE_KEY) is None
    else:
        assert (st.code, st.reasons) == want
    assert result is None  # v1.32+ never narrows by the bound volumes' hostname affinity


# ---------------------------------------------------------------------------------------------- Filter
@pytest.mark.parametrize(("the_pod", "claims", "volumes", "want"), [
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", volume="pv-a", bound=True)], [pv("pv-a", claim="pvc-a")],
                 {"node-a": OK, "node-b": OK}, id="bound-volume-without-affinity-fits-every-node"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", volume="pv-a", bound=True)],
                 [pv("pv-a", claim="pvc-a", node="node-a")],
                 {"node-a": OK, "node-b": (UNRES, [ERR_REASON_NODE_CONFLICT])},
                 id="bound-volume-node-affinity-conflict"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", volume="pv-a", bound=True)], [],
                 {"node-a": (UNRES, [ERR_REASON_PV_NOT_EXIST]), "node-b": (UNRES, [ERR_REASON_PV_NOT_EXIST])},
                 id="bound-to-non-existent-volume"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a")], [pv("pv-a", node="node-b")],
                 {"node-a": (UNRES, [ERR_REASON_BIND_CONFLICT]), "node-b": OK},
                 id="wffc-claim-finds-local-volume-on-its-node-only"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a")], [],
                 {"node-a": (UNRES, [ERR_REASON_BIND_CONFLICT]), "node-b": (UNRES, [ERR_REASON_BIND_CONFLICT])},
                 id="wffc-claim-no-volume-no-provisioner"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", cls="provision")], [],
                 {"node-a": OK, "node-b": OK}, id="wffc-claim-can-be-provisioned-anywhere"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", cls="zone1")], [],
                 {"node-a": OK, "node-b": (UNRES, [ERR_REASON_BIND_CONFLICT])},
                 id="provisioning-limited-by-allowed-topologies"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", cls="provision",
                                         ann={"volume.kubernetes.io/selected-node": "node-a"})], [],
                 {"node-a": OK, "node-b": (UNRES, [ERR_REASON_BIND_CONFLICT])},
                 id="claim-being-provisioned-for-another-node"),
    pytest.param(pod("p", "pvc-a", "pvc-b"), [pvc("pvc-a"), pvc("pvc-b")], [pv("pv-a", node="node-a")],
                 {"node-a": (UNRES, [ERR_REASON_BIND_CONFLICT]), "node-b": (UNRES, [ERR_REASON_BIND_CONFLICT])},
                 id="one-volume-cannot-serve-two-claims-of-the-pod"),
    pytest.param(pod("p", "pvc-a", "pvc-b"), [pvc("pvc-a"), pvc("pvc-b")],
                 [pv("pv-a", node="node-a"), pv("pv-b", node="node-a")],
                 {"node-a": OK, "node-b": (UNRES, [ERR_REASON_BIND_CONFLICT])}, id="two-claims-two-volumes"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", size="5Gi")], [pv("pv-a", size="4Gi")],
                 {"node-a": (UNRES, [ERR_REASON_BIND_CONFLICT]), "node-b": (UNRES, [ERR_REASON_BIND_CONFLICT])},
                 id="volume-too-small"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", modes=("ReadWriteMany",))], [pv("pv-a")],
                 {"node-a": (UNRES, [ERR_REASON_BIND_CONFLICT]), "node-b": (UNRES, [ERR_REASON_BIND_CONFLICT])},
                 id="access-modes-not-offered"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", mode="Block")], [pv("pv-a")],
                 {"node-a": (UNRES, [ERR_REASON_BIND_CONFLICT]), "node-b": (UNRES, [ERR_REASON_BIND_CONFLICT])},
                 id="volume-mode-mismatch"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a", selector={"matchLabels": {"tier": "gold"}})],
                 [pv("pv-a", labels={"tier": "silver"}), pv("pv-b", node="node-b", labels={"tier": "gold"})],
                 {"node-a": (UNRES, [ERR_REASON_BIND_CONFLICT]), "node-b": OK}, id="claim-selector"),
    pytest.param(pod("p", "pvc-a"), [pvc("pvc-a")], [pv("pv-a", phase="Released"), pv("pv-b", cls="other")],
                 {"node-a": (UNRES, [ERR_REASON_BIND_CONFLICT]), "node-b": (UNRES, [ERR_REASON_BIND_CONFLICT])},
                 id="released-or-other-class-volumes-do-not-match"),
    pytest.param(pod("p", "pvc-a", "pvc-b"), [pvc("pvc-a", volume="pv-a", bound=True), pvc("pvc-b")],
                 [pv("pv-a", claim="pvc-a", node="node-a"), pv("pv-b", node="node-a")],
                 {"node-a": OK,
                  "node-b": (UNRES, [ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT])},
                 id="bound-and-unbound-conflicts-both-reported"),
])
def test_filter(fw, the_pod, claims, volumes, want):
    statuses, _, st, _ = fw.filter_nodes(VolumeBinding, the_pod, cluster(fw, claims, volumes))
    assert st.is_success(), st
    assert fw.codes(statuses) == want


def test_filter_picks_the_smallest_fitting_volume_smallest_claim_first(fw):
    claims = [pvc("big", size="8Gi"), pvc("small", size="2Gi")]
    volumes = [pv("pv-10", size="10Gi"), pv("pv-3", size="3Gi"), pv("pv-9", size="9Gi"), pv("pv-1", size="1Gi")]
    run = fw.Run(VolumeBinding, cluster(fw, claims, volumes))
    statuses, _, _, state = run.filter(pod("p", "big", "small"))
    assert fw.codes(statuses) == {"node-a": OK, "node-b": OK}
    chosen = state.get(STATE_KEY).by_node["node-a"]
    assert [(b.pvc["metadata"]["name"], b.pv["metadata"]["name"]) for b in chosen.static_bindings] == [
        ("small", "pv-3"), ("big", "pv-9")]
    assert chosen.dynamic_provisions == []


def test_filter_provisions_what_no_volume_matches(fw):
    run = fw.Run(VolumeBinding, cluster(fw, [pvc("a", cls="provision")], [pv("pv-x", cls="provision", size="1Mi")]))
    _, _, _, state = run.filter(pod("p", "a"))
    chosen = state.get(STATE_KEY).by_node["node-b"]
    assert chosen.static_bindings == [] and [c["metadata"]["name"] for c in chosen.dynamic_provisions] == ["a"]


def _driver(capacity: bool) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "csi.example.com"},
            "spec": {"storageCapacity": capacity}}


def _capacity(name: str, zone: str, size: str, *, maximum: str | None = None) -> dict[str, Any]:
    out = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
           "metadata": {"name": name, "namespace": "kube-system", "resourceVersion": "1"},
           "storageClassName": "csi", "capacity": size, "nodeTopology": {"matchLabels": {"zone": zone}}}
    if maximum is not None:
        out["maximumVolumeSize"] = maximum
    return out


@pytest.mark.parametrize(("drivers", "capacities", "want"), [
    pytest.param([], [], {"node-a": OK, "node-b": OK}, id="no-csidriver-no-capacity-check"),
    pytest.param([_driver(False)], [], {"node-a": OK, "node-b": OK}, id="driver-without-storage-capacity"),
    pytest.param([_driver(True)], [_capacity("c1", "z1", "10Gi"), _capacity("c2", "z2", "1Gi")],
                 {"node-a": OK, "node-b": (UNRES, [ERR_REASON_NOT_ENOUGH_SPACE])}, id="capacity-per-zone"),
    pytest.param([_driver(True)], [_capacity("c1", "z1", "10Gi", maximum="2Gi")],
                 {"node-a": (UNRES, [ERR_REASON_NOT_ENOUGH_SPACE]), "node-b": (UNRES, [ERR_REASON_NOT_ENOUGH_SPACE])},
                 id="maximum-volume-size-wins-over-capacity"),
])
def test_filter_storage_capacity(fw, drivers, capacities, want):
    c = cluster(fw, [pvc("a", cls="csi", size="5Gi")], [],
                extra={"csidrivers": drivers, "csistoragecapacities": capacities})
    statuses, _, _, _ = fw.filter_nodes(VolumeBinding, pod("p", "a"), c)
    assert fw.codes(statuses) == want


# ---------------------------------------------------------------------------------------------- Reserve
def test_reserve_assumes_the_volume_so_the_next_pod_cannot_take_it_and_unreserve_reverts(fw):
    c = cluster(fw, [pvc("a"), pvc("b")], [pv("pv-1", node="node-a")])
    run = fw.Run(VolumeBinding, c)
    plugin = run.plugin("VolumeBinding")
    statuses, _, _, state = run.filter(pod("p1", "a"))
    assert fw.codes(statuses)["node-a"] == OK
    p1 = PodInfo(pod("p1", "a")).on_node("node-a")
    assert run.framework.run_reserve(state, p1, "node-a").is_success()
    assumed = plugin.pv_cache.get("pv-1")
    assert assumed["spec"]["claimRef"]["name"] == "a"
    assert assumed["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    # the lister's object is untouched
    assert "claimRef" not in plugin.pv_cache.get_api("pv-1")["spec"]
    statuses2, _, _, _ = run.filter(pod("p2", "b"))
    assert fw.codes(statuses2)["node-a"] == (UNRES, [ERR_REASON_BIND_CONFLICT])
    run.framework.run_unreserve(state, p1, "node-a")
    assert not plugin.pv_cache.is_assumed("pv-1")
    statuses3, _, _, _ = run.filter(pod("p2", "b"))
    assert fw.codes(statuses3)["node-a"] == OK


def test_reserve_assumes_the_selected_node_on_a_claim_to_provision(fw):
    run = fw.Run(VolumeBinding, cluster(fw, [pvc("a", cls="provision")]))
    plugin = run.plugin("VolumeBinding")
    _, _, _, state = run.filter(pod("p", "a"))
    assert run.framework.run_reserve(state, PodInfo(pod("p", "a")).on_node("node-b"), "node-b").is_success()
    assert plugin.pvc_cache.get("default/a")["metadata"]["annotations"] == {
        "volume.kubernetes.io/selected-node": "node-b"}
    # another pod sharing the claim now sees it provisioned for node-b
    statuses, _, _, _ = run.filter(pod("q", "a"))
    assert fw.codes(statuses) == {"node-a": (UNRES, [ERR_REASON_BIND_CONFLICT]), "node-b": OK}
    run.framework.run_unreserve(state, PodInfo(pod("p", "a")), "node-b")
    assert not plugin.pvc_cache.is_assumed("default/a")


def test_reserve_and_pre_bind_of_a_bound_pod_do_nothing(fw):
    run = fw.Run(VolumeBinding, cluster(fw, [pvc("a", volume="pv-a", bound=True)], [pv("pv-a", claim="a")]))
    _, _, _, state = run.filter(pod("p", "a"))
    assert run.framework.run_reserve(state, PodInfo(pod("p", "a")), "node-a").is_success()
    assert state.get(STATE_KEY).all_bound
    assert run.client.calls == []


# ---------------------------------------------------------------------------------------------- hints, args
def _hint(resource: EventResource, action: ActionType) -> Any:
    for ev in VolumeBinding().events_to_register():
        if ev.event.resource == resource and ev.event.action & action:
            return ev.hint_fn
    raise AssertionError(f"VolumeBinding does not register {resource} {action}")


Q, S = QueueingHint.QUEUE, QueueingHint.SKIP


@pytest.mark.parametrize(("resource", "action", "old", "new", "want"), [
    pytest.param(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD, None, pvc("pvc-a"), Q, id="claim-added"),
    pytest.param(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.UPDATE, pvc("pvc-b"), pvc("pvc-b"), S,
                 id="claim-of-another-pod"),
    pytest.param(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD, None,
                 {**pvc("pvc-a"), "metadata": {"name": "pvc-a", "namespace": "other"}}, S, id="claim-other-namespace"),
    pytest.param(EventResource.STORAGE_CLASS, ActionType.ADD, None, sc("x"), Q, id="class-added"),
    pytest.param(EventResource.STORAGE_CLASS, ActionType.UPDATE, sc("x"), {**sc("x"), "parameters": {"a": "b"}}, S,
                 id="class-update-without-topology-change"),
    pytest.param(EventResource.STORAGE_CLASS, ActionType.UPDATE, sc("x"),
                 sc("x", topologies=[{"matchLabelExpressions": [{"key": "zone", "values": ["z1"]}]}]), Q,
                 id="class-allowed-topologies-changed"),
    pytest.param(EventResource.CSI_STORAGE_CAPACITY, ActionType.UPDATE, _capacity("c", "z1", "1Gi"),
                 _capacity("c", "z1", "2Gi"), Q, id="capacity-grew"),
    pytest.param(EventResource.CSI_STORAGE_CAPACITY, ActionType.UPDATE, _capacity("c", "z1", "2Gi"),
                 _capacity("c", "z1", "1Gi"), S, id="capacity-shrank"),
    pytest.param(EventResource.CSI_NODE, ActionType.UPDATE, {"metadata": {"name": "n"}},
                 {"metadata": {"name": "n", "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": "x"}}},
                 Q, id="csinode-migrated-plugins-changed"),
])
def test_queueing_hints(resource, action, old, new, want):
    assert _hint(resource, action)(PodInfo(pod("p", "pvc-a")), old, new) == want


def test_events_to_register_follow_upstream():
    got = {(ev.event.resource, ev.event.action) for ev in VolumeBinding().events_to_register()}
    add_update = ActionType.ADD | ActionType.UPDATE
    assert got == {(EventResource.STORAGE_CLASS, add_update), (EventResource.PERSISTENT_VOLUME_CLAIM, add_update),
                   (EventResource.PERSISTENT_VOLUME, add_update),
                   (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                   (EventResource.CSI_NODE, add_update), (EventResource.CSI_DRIVER, ActionType.UPDATE),
                   (EventResource.CSI_STORAGE_CAPACITY, add_update)}


@pytest.mark.parametrize(("args", "error"), [
    pytest.param({"bindTimeoutSeconds": -1}, "invalid BindTimeoutSeconds, should not be a negative value",
                 id="negative-timeout"),
    pytest.param({"shape": [{"utilization": 0, "score": 0}]}, "unsupported when StorageCapacityScoring",
                 id="shape-without-the-gate"),
    pytest.param({"bindTimeout": 3}, "bindTimeout", id="unknown-field"),
])
def test_args_validation(args, error):
    cfg = parse_config({"profiles": [{"pluginConfig": [{"name": "VolumeBinding", "args": args}]}]})
    with pytest.raises(ConfigError, match=error):
        Scheduler(cfg, client=None, informers=_NoInformers(), registry=in_tree_registry())


def test_args_default_and_custom_timeout():
    assert VolumeBinding.Args.model_validate({}).bind_timeout_seconds == 600
    assert VolumeBinding.Args.model_validate({"bindTimeoutSeconds": 30}).bind_timeout_seconds == 30


class _NoInformers:
    class _Inf:
        class store:  # noqa: N801 - an informer's store attribute
            @staticmethod
            def get(_key: str) -> None:
                return None

            @staticmethod
            def list() -> list[Any]:
                return []

        def add_handler(self, **_: Any) -> None:
            return None

        async def wait_for_sync(self) -> None:
            return None

    def informer(self, *_: Any, **__: Any) -> Any:
        return self._Inf()


def test_default_profile_runs_volume_binding():
    s = Scheduler(None, client=None, informers=_NoInformers(), registry=in_tree_registry())
    fwk = s.frameworks["default-scheduler"]
    for point in (fwk.pre_filter_plugins, fwk.filter_plugins, fwk.reserve_plugins, fwk.pre_bind_plugins):
        assert "VolumeBinding" in [p.name() for p in point]
    assert "VolumeBinding" not in [p.name() for p in fwk.score_plugins]


# ---------------------------------------------------------------------------------------------- end to end
PROFILE = {"profiles": [{
    "schedulerName": "default-scheduler",
    "plugins": {"multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "NodeResourcesFit"},
                                           {"name": "VolumeBinding"}, {"name": "DefaultBinder"}],
                               "disabled": [{"name": "*"}]}},
}]}


def _scheduler(api: Any, *, timeout: int | None = None) -> Scheduler:
    cfg = copy.deepcopy(PROFILE)
    if timeout is not None:
        cfg["profiles"][0]["pluginConfig"] = [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": timeout}}]
    return Scheduler(parse_config(cfg), client=api, informers=api, clock=api.clock, rng=random.Random(1),
                     registry=in_tree_registry())


async def _create(api: Any, res: Any, obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"].pop("uid", None)
    obj["metadata"].pop("resourceVersion", None)
    status = obj.pop("status", None)
    ns = obj["metadata"].get("namespace")
    out = dict(await api.create(res, obj, ns))
    if status and res is not PODS:
        out = dict(await api.update_status(res, {**out, "status": status}))
    return out


async def _setup(api: Any, env: Any, objs: list[tuple[Any, dict[str, Any]]], pods: list[dict[str, Any]]) -> None:
    for res, o in objs:
        await _create(api, res, o)
    await env.add(*[make_node(n).labels({HOSTNAME: n}).capacity(cpu="4", memory="8Gi").obj()
                    for n in ("node-a", "node-b")], *pods)


async def _until(api: Any, cond: Any) -> None:
    for _ in range(200):
        await api.settle()
        if cond():
            return
    raise AssertionError("condition never held")


def _claim(api: Any, name: str) -> dict[str, Any]:
    got = api.obj(PERSISTENTVOLUMECLAIMS, name, "default")
    assert got is not None
    return got


async def _bind_claim(api: Any, claim_name: str, volume_name: str) -> None:
    """What the PV controller does once a volume is chosen for a claim: claim.spec.volumeName,
    bind-completed, status Bound (and the volume's phase Bound)."""
    claim = _claim(api, claim_name)
    claim["spec"]["volumeName"] = volume_name
    claim["metadata"].setdefault("annotations", {})["pv.kubernetes.io/bind-completed"] = "yes"
    claim = dict(await api.update(PERSISTENTVOLUMECLAIMS, claim))
    claim["status"] = {"phase": "Bound", "accessModes": claim["spec"]["accessModes"],
                       "capacity": {"storage": claim["spec"]["resources"]["requests"]["storage"]}}
    await api.update_status(PERSISTENTVOLUMECLAIMS, claim)
    volume = api.obj(PERSISTENTVOLUMES, volume_name)
    volume["status"] = {"phase": "Bound"}
    await api.update_status(PERSISTENTVOLUMES, volume)


async def test_wffc_claim_is_provisioned_on_the_chosen_node_and_the_pod_bound(real_api, env):
    s = _scheduler(real_api)
    await _setup(real_api, env, [(STORAGECLASSES, sc("local-path", provisioner="rancher.io/local-path")),
                                 (PERSISTENTVOLUMECLAIMS, pvc("data", cls="local-path"))], [pod("web", "data")])
    await s.schedule_one()
    # PreBind asks for provisioning on the chosen node ...
    await _until(real_api, lambda: "volume.kubernetes.io/selected-node" in
                 (_claim(real_api, "data")["metadata"].get("annotations") or {}))
    node = _claim(real_api, "data")["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
    assert env.node_name("web") is None and s._binding_tasks  # ... and waits for the binding
    # the provisioner's part: a local volume on that node, bound to the claim
    claim = _claim(real_api, "data")
    volume = pv("pvc-data", cls="local-path", node=node)
    volume["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": "data",
                                  "uid": claim["metadata"]["uid"], "apiVersion": "v1"}
    volume["metadata"]["annotations"] = {"pv.kubernetes.io/provisioned-by": "rancher.io/local-path"}
    await _create(real_api, PERSISTENTVOLUMES, volume)
    await _bind_claim(real_api, "data", "pvc-data")
    await s.wait_for_bindings()
    await real_api.settle()
    assert env.node_name("web") == node
    assert env.binds() == [("default", "web", node)]
    assert not s.frameworks["default-scheduler"].plugins["VolumeBinding"].pvc_cache.is_assumed("default/data")


async def test_wffc_claim_takes_the_local_volume_and_the_pod_its_node(real_api, env):
    s = _scheduler(real_api)
    await _setup(real_api, env, [(STORAGECLASSES, sc("local")), (PERSISTENTVOLUMES, pv("disk-b", cls="local",
                                                                                       node="node-b")),
                                 (PERSISTENTVOLUMECLAIMS, pvc("data", cls="local"))], [pod("db", "data")])
    await s.schedule_one()
    await _until(real_api, lambda: (real_api.obj(PERSISTENTVOLUMES, "disk-b")["spec"].get("claimRef") or {})
                 .get("name") == "data")
    volume = real_api.obj(PERSISTENTVOLUMES, "disk-b")
    assert volume["spec"]["claimRef"]["uid"] == _claim(real_api, "data")["metadata"]["uid"]
    assert volume["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    await _bind_claim(real_api, "data", "disk-b")  # the PV controller completes the binding
    await s.wait_for_bindings()
    await real_api.settle()
    assert env.node_name("db") == "node-b"


async def test_binding_times_out_on_the_schedulers_clock(real_api, env):
    s = _scheduler(real_api, timeout=30)
    await _setup(real_api, env, [(STORAGECLASSES, sc("local-path", provisioner="rancher.io/local-path")),
                                 (PERSISTENTVOLUMECLAIMS, pvc("data", cls="local-path"))], [pod("web", "data")])
    await s.schedule_one()
    await _until(real_api, lambda: "volume.kubernetes.io/selected-node" in
                 (_claim(real_api, "data")["metadata"].get("annotations") or {}))
    for _ in range(31):  # nobody provisions: every second of the clock re-checks, then the deadline
        real_api.clock.advance(1)
        await real_api.settle()
    await s.wait_for_bindings()
    await s.writer.flush()
    await real_api.settle()
    cond = env.scheduled_condition("web")
    assert cond["reason"] == "SchedulerError"
    assert cond["message"] == 'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded'
    assert env.node_name("web") is None
    assert not s.frameworks["default-scheduler"].plugins["VolumeBinding"].pvc_cache.is_assumed("default/data")


@pytest.mark.parametrize(("annotations", "why"), [
    pytest.param({"example.com/keep": "x"}, 'provisioning failed for PVC "data"', id="selected-node-removed"),
    # no annotation left: the API drops the empty map, as Go's omitempty (upstream: Annotations == nil)
    pytest.param(None, 'selectedNode annotation reset for PVC "data"', id="annotations-gone"),
])
async def test_provisioner_giving_up_fails_the_binding_at_once(real_api, env, annotations, why):
    s = _scheduler(real_api)
    await _setup(real_api, env, [(STORAGECLASSES, sc("local-path", provisioner="rancher.io/local-path")),
                                 (PERSISTENTVOLUMECLAIMS, pvc("data", cls="local-path", ann=annotations))],
                 [pod("web", "data")])
    await s.schedule_one()
    await _until(real_api, lambda: "volume.kubernetes.io/selected-node" in
                 (_claim(real_api, "data")["metadata"].get("annotations") or {}))
    claim = _claim(real_api, "data")
    del claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]  # the provisioner's retry signal
    await real_api.update(PERSISTENTVOLUMECLAIMS, claim)
    await s.wait_for_bindings()  # no clock advance: the claim's update woke the binder
    await s.writer.flush()
    await real_api.settle()
    assert env.scheduled_condition("web")["message"] == f'running PreBind plugin "VolumeBinding": binding volumes: {why}'


async def test_pod_waiting_for_an_immediate_claim_is_requeued_when_the_claim_binds(real_api, env):
    s = _scheduler(real_api)
    await _setup(real_api, env, [(STORAGECLASSES, sc("fast", mode="Immediate", provisioner="x.example.com")),
                                 (PERSISTENTVOLUMES, pv("vol", cls="fast")),
                                 (PERSISTENTVOLUMECLAIMS, pvc("data", cls="fast"))], [pod("web", "data")])
    await s.schedule_one()
    await s.writer.flush()
    await real_api.settle()
    uid = env.uid("web")
    assert s.queue.where(uid) == "unschedulablePods"
    assert env.scheduled_condition("web")["message"] == (
        "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.")
    # another claim's change is not this pod's business
    await _create(real_api, PERSISTENTVOLUMECLAIMS, pvc("other", cls="fast"))
    await real_api.settle()
    assert s.queue.where(uid) == "unschedulablePods"
    # the PV controller binds the claim: the claim update requeues the pod, which then schedules
    volume = real_api.obj(PERSISTENTVOLUMES, "vol")
    volume["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": "data",
                                  "uid": _claim(real_api, "data")["metadata"]["uid"], "apiVersion": "v1"}
    await real_api.update(PERSISTENTVOLUMES, volume)
    await _bind_claim(real_api, "data", "vol")
    await real_api.settle()
    assert s.queue.where(uid) in ("backoffQ", "activeQ")
    s.clock.advance(10)
    s.queue.flush_backoff_completed()
    await s.schedule_one()
    await s.wait_for_bindings()
    await real_api.settle()
    assert env.node_name("web") in ("node-a", "node-b")


async def test_pods_without_claims_never_touch_the_plugin_state(real_api, env):
    s = _scheduler(real_api)
    await env.add(make_node("node-a").capacity(cpu="4").obj(), make_pod("plain").obj())
    state = CycleState()
    fwk = s.frameworks["default-scheduler"]
    _, st, _ = fwk.run_pre_filter(state, PodInfo(env.pod("plain")), s.snapshot.node_info_list)
    assert st.is_success() and "VolumeBinding" in state.skip_filter_plugins
    assert state.get(STATE_KEY) is None
    assert await fwk.run_pre_bind(state, PodInfo(env.pod("plain")), "node-a") == Status.success()
    assert real_api.obj(NODES, "node-a") is not None


async def test_preemption_does_not_try_nodes_volume_binding_rejected(real_api, env):
    cfg = copy.deepcopy(PROFILE)
    cfg["profiles"][0]["plugins"]["multiPoint"]["enabled"].append({"name": "DefaultPreemption"})
    s = Scheduler(parse_config(cfg), client=real_api, informers=real_api, clock=real_api.clock,
                  rng=random.Random(1), registry=in_tree_registry())
    await _setup(real_api, env, [(STORAGECLASSES, sc("local")), (PERSISTENTVOLUMECLAIMS, pvc("data", cls="local"))],
                 [make_pod("low").priority(1).node("node-a").obj(), pod("web", "data")])
    await s.schedule_one()
    await s.writer.flush()
    await real_api.settle()
    assert env.scheduled_condition("web")["message"] == (
        f"0/2 nodes are available: 2 {ERR_REASON_BIND_CONFLICT}. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    assert real_api.obj(PODS, "low", "default") is not None
    # explain shows the plugin's verdict per node
    ex = s.explain("default", "web")
    assert ex["nodes"]["node-a"]["filters"][-1] == {"plugin": "VolumeBinding", "code": "UnschedulableAndUnresolvable",
                                                    "reasons": [ERR_REASON_BIND_CONFLICT]}
    # what-if answers the same without writing anything
    assert s.what_if(env.pod("web"))["message"].startswith(f"0/2 nodes are available: 2 {ERR_REASON_BIND_CONFLICT}.")
