"""Garbage collector: Background, Foreground and Orphan propagation against a real server."""

from __future__ import annotations

import pytest

from minik3s.api.resources import CONFIGMAPS, CRDS, DEPLOYMENTS, REPLICASETS, ResourceInfo
from minik3s.controllers.deployment import DeploymentController
from minik3s.controllers.garbage_collector import (
    GarbageCollector,
    crd_monitor_resource,
    deletable_builtin_resources,
)
from minik3s.controllers.replicaset import ReplicaSetController


def start_all(harness, *, with_workloads: bool = True):
    gc = GarbageCollector(harness.client, harness.informers)
    runs = [gc.run]
    if with_workloads:
        runs += [ReplicaSetController(harness.client, harness.informers).run,
                 DeploymentController(harness.client, harness.informers).run]
    harness.start(*runs, harness.kubelet)
    return gc


async def test_background_deletes_dependents_after_owner(harness):
    start_all(harness)
    await harness.client.create(DEPLOYMENTS, harness.deploy("web", 3))
    await harness.available("web", 3)
    await harness.client.delete(DEPLOYMENTS, "web", "default", propagation_policy="Background")
    assert await harness.gone(DEPLOYMENTS, "web")

    async def all_gone():
        rses = (await harness.client.list(REPLICASETS, "default"))["items"]
        return not rses and not await harness.pods()

    await harness.eventually(all_gone, what="ReplicaSet and pods collected")


async def test_foreground_keeps_owner_until_dependents_are_gone(harness):
    start_all(harness)
    await harness.client.create(DEPLOYMENTS, harness.deploy("web", 2))
    await harness.available("web", 2)
    out = await harness.client.delete(DEPLOYMENTS, "web", "default", propagation_policy="Foreground")
    assert "foregroundDeletion" in out["metadata"]["finalizers"]
    assert out["metadata"].get("deletionTimestamp")

    async def all_gone():
        return (await harness.gone(DEPLOYMENTS, "web") and not (await harness.client.list(REPLICASETS, "default"))["items"]
                and not await harness.pods())

    await harness.eventually(all_gone, what="foreground deletion finished")


async def test_orphan_strips_owner_references_and_keeps_dependents(harness):
    start_all(harness)
    await harness.client.create(DEPLOYMENTS, harness.deploy("web", 2))
    await harness.available("web", 2)
    await harness.client.delete(DEPLOYMENTS, "web", "default", propagation_policy="Orphan")
    await harness.eventually(lambda: harness.gone(DEPLOYMENTS, "web"), what="owner deleted after orphaning")
    rses = (await harness.client.list(REPLICASETS, "default"))["items"]
    assert len(rses) == 1
    assert not rses[0]["metadata"].get("ownerReferences")
    pods = await harness.pods()
    assert len(pods) == 2  # still owned by the surviving ReplicaSet
    assert all(p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet" for p in pods)


@pytest.mark.parametrize("second_owner_exists", [
    pytest.param(True, id="dependent-with-a-live-second-owner-survives-and-loses-the-dangling-ref"),
    pytest.param(False, id="dependent-whose-only-owner-is-gone-is-deleted"),
])
async def test_dangling_owner_references(harness, second_owner_exists):
    start_all(harness, with_workloads=False)
    owner = await harness.client.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, "default")
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}]
    if second_owner_exists:
        other = await harness.client.create(CONFIGMAPS, {"metadata": {"name": "other"}}, "default")
        refs.append({"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": other["metadata"]["uid"]})
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "dep", "ownerReferences": refs}}, "default")
    await harness.client.delete(CONFIGMAPS, "owner", "default")
    if second_owner_exists:
        async def stripped():
            dep = await harness.client.get(CONFIGMAPS, "dep", "default")
            return [r["name"] for r in dep["metadata"]["ownerReferences"]] == ["other"]

        await harness.eventually(stripped, what="dangling reference removed")
    else:
        await harness.eventually(lambda: harness.gone(CONFIGMAPS, "dep"), what="dependent collected")


@pytest.mark.timeout(60)  # the bug this guards against spun the event loop: only a thread timeout ends it
async def test_an_object_owning_itself_is_deleted_and_the_collector_goes_on(harness):
    """A ConfigMap listed as its own owner (upstream's collector tolerates the self-reference):
    its delete leaves nothing for the collector to spin on; a dependent deleted later is still
    collected."""
    gc = start_all(harness, with_workloads=False)
    selfish = await harness.client.create(CONFIGMAPS, {"metadata": {"name": "self"}}, "default")
    uid = selfish["metadata"]["uid"]
    await harness.client.patch(CONFIGMAPS, "self", {"metadata": {"ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "self", "uid": uid}]}}, "default")
    await harness.client.delete(CONFIGMAPS, "self", "default")
    assert await harness.gone(CONFIGMAPS, "self")

    async def settled() -> bool:  # nothing left to re-check: no node kept for it, an idle queue
        return uid not in gc.graph and len(gc.attempt_to_delete) == 0

    await harness.eventually(settled, what="the deleted self-owner left the graph")
    owner = await harness.client.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, "default")
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "dep", "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}]}}, "default")
    await harness.client.delete(CONFIGMAPS, "owner", "default")
    await harness.eventually(lambda: harness.gone(CONFIGMAPS, "dep"), what="dependent collected")


# ---- custom resources: the collector follows CRDs and watches their kinds as any other kind

GADGETS = ResourceInfo("example.com", "v1", "gadgets", "Gadget", True, builtin=False)
CLUSTER_GADGETS = ResourceInfo("example.com", "v1", "clustergadgets", "ClusterGadget", False, builtin=False)


def gadget_crd(res: ResourceInfo, *, versions: tuple[str, ...] = ("v1",)) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{res.resource}.{res.group}"},
        "spec": {"group": res.group, "scope": "Namespaced" if res.namespaced else "Cluster",
                 "names": {"plural": res.resource, "singular": res.kind.lower(), "kind": res.kind},
                 "versions": [{"name": v, "served": True, "storage": v == versions[0],
                               "schema": {"openAPIV3Schema": {"type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True}}}
                              for v in versions]},
    }


async def with_gadget_kind(harness, gc, res: ResourceInfo = GADGETS) -> None:
    await harness.client.create(CRDS, gadget_crd(res))

    async def monitored():
        mon = gc.monitors.get((res.group, res.resource))
        return mon is not None and mon.informer.has_synced

    await harness.eventually(monitored, what=f"monitor for {res.qualified}")


def owned_by(obj: dict) -> list[dict]:
    m = obj["metadata"]
    return [{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": m["name"], "uid": m["uid"],
             "blockOwnerDeletion": True}]


async def gadget_with_dependent(harness) -> tuple[dict, dict]:
    owner = await harness.client.create(GADGETS, {"apiVersion": "example.com/v1", "kind": "Gadget",
                                                  "metadata": {"name": "g"}}, "default")
    dep = await harness.client.create(CONFIGMAPS, {"metadata": {"name": "dep", "ownerReferences": owned_by(owner)}},
                                      "default")
    return owner, dep


@pytest.mark.parametrize("policy", ["Background", None])
async def test_dependent_of_a_deleted_custom_resource_is_collected(harness, policy):
    gc = start_all(harness, with_workloads=False)
    await with_gadget_kind(harness, gc)
    await gadget_with_dependent(harness)
    await harness.client.delete(GADGETS, "g", "default", propagation_policy=policy)
    await harness.eventually(lambda: harness.gone(CONFIGMAPS, "dep"), what="dependent of the Gadget collected")


async def test_foreground_custom_resource_waits_for_its_dependents(harness):
    gc = start_all(harness, with_workloads=False)
    await with_gadget_kind(harness, gc)
    await gadget_with_dependent(harness)
    out = await harness.client.delete(GADGETS, "g", "default", propagation_policy="Foreground")
    assert "foregroundDeletion" in out["metadata"]["finalizers"]

    async def both_gone():
        return await harness.gone(CONFIGMAPS, "dep") and await harness.gone(GADGETS, "g")

    await harness.eventually(both_gone, what="foreground deletion of the Gadget finished")


async def test_orphaned_dependents_of_a_custom_resource_survive(harness):
    gc = start_all(harness, with_workloads=False)
    await with_gadget_kind(harness, gc)
    await gadget_with_dependent(harness)
    await harness.client.delete(GADGETS, "g", "default", propagation_policy="Orphan")
    await harness.eventually(lambda: harness.gone(GADGETS, "g"), what="Gadget deleted after orphaning")
    dep = await harness.client.get(CONFIGMAPS, "dep", "default")
    assert not dep["metadata"].get("ownerReferences")


async def test_custom_resource_owned_by_a_builtin_object_is_collected(harness):
    gc = start_all(harness, with_workloads=False)
    await with_gadget_kind(harness, gc, CLUSTER_GADGETS)
    owner = await harness.client.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, "default")
    await harness.client.create(CLUSTER_GADGETS, {"apiVersion": "example.com/v1", "kind": "ClusterGadget",
                                                  "metadata": {"name": "cg", "ownerReferences": owned_by(owner)}})
    await harness.client.delete(CONFIGMAPS, "owner", "default")
    await harness.eventually(lambda: harness.gone(CLUSTER_GADGETS, "cg", None), what="ClusterGadget collected")


async def test_dependent_of_a_kind_served_later_is_checked_once_the_kind_is_served(harness):
    gc = start_all(harness, with_workloads=False)
    ghost = [{"apiVersion": "example.com/v1", "kind": "Gadget", "name": "never", "uid": "0000-never"}]
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "dep", "ownerReferences": ghost}}, "default")
    live = await harness.client.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, "default")
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "control", "ownerReferences": owned_by(
        {**live, "apiVersion": "v1", "kind": "ConfigMap"})}}, "default")

    async def seen():  # the collector has looked at both dependents
        return {"dep", "control"} <= {n.name for n in gc.graph.values() if not n.virtual}

    await harness.eventually(seen, what="dependents in the graph")
    # an owner of a kind nobody serves counts as present: the dependent stays
    assert not await harness.gone(CONFIGMAPS, "dep")
    await with_gadget_kind(harness, gc)
    await harness.eventually(lambda: harness.gone(CONFIGMAPS, "dep"), what="dangling Gadget owner noticed")
    assert not await harness.gone(CONFIGMAPS, "control")


async def crd_gone(harness, gc, res: ResourceInfo = GADGETS) -> None:
    await harness.client.delete(CRDS, f"{res.resource}.{res.group}")

    async def forgotten():
        return await harness.gone(CRDS, f"{res.resource}.{res.group}", None) and (
            (res.group, res.resource) not in gc.monitors)

    await harness.eventually(forgotten, what=f"CRD of {res.qualified} gone and its monitor stopped")


async def test_after_its_crd_is_deleted_the_kind_no_longer_resolves(harness):
    gc = start_all(harness, with_workloads=False)
    await with_gadget_kind(harness, gc)
    await gadget_with_dependent(harness)
    await crd_gone(harness, gc)
    # the CRD's cleanup deleted the Gadget first, and its dependent followed it
    await harness.eventually(lambda: harness.gone(CONFIGMAPS, "dep"), what="dependent of the cleaned-up Gadget")
    # now Gadget is an unknown kind (upstream: a REST-mapping error, retried): its dependents stay
    ghost = [{"apiVersion": "example.com/v1", "kind": "Gadget", "name": "old", "uid": "0000-old"}]
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "late", "ownerReferences": ghost}}, "default")
    live = await harness.client.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, "default")
    dangling = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "0000-not-the-owner"}]
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "control", "ownerReferences": dangling}},
                                "default")
    await harness.eventually(lambda: harness.gone(CONFIGMAPS, "control"), what="control dependent collected")
    assert live and not await harness.gone(CONFIGMAPS, "late")
    # the CRD comes back: the kind resolves again and the dangling reference is noticed
    await with_gadget_kind(harness, gc)
    await harness.eventually(lambda: harness.gone(CONFIGMAPS, "late"), what="dangling Gadget owner noticed")


async def test_a_crd_recreated_with_another_kind_resolves_only_the_new_kind(harness):
    gc = start_all(harness, with_workloads=False)
    await with_gadget_kind(harness, gc)
    await crd_gone(harness, gc)
    gizmos = ResourceInfo("example.com", "v1", "gadgets", "Gizmo", True, builtin=False)
    await with_gadget_kind(harness, gc, gizmos)
    old = [{"apiVersion": "example.com/v1", "kind": "Gadget", "name": "x", "uid": "0000-gadget"}]
    new = [{"apiVersion": "example.com/v1", "kind": "Gizmo", "name": "x", "uid": "0000-gizmo"}]
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "of-gadget", "ownerReferences": old}}, "default")
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "of-gizmo", "ownerReferences": new}}, "default")
    await harness.eventually(lambda: harness.gone(CONFIGMAPS, "of-gizmo"), what="dangling Gizmo owner noticed")
    assert not await harness.gone(CONFIGMAPS, "of-gadget")  # Gadget is no kind any more


async def test_a_monitor_restarted_on_a_new_version_keeps_the_dependents(harness):
    gc = start_all(harness, with_workloads=False)
    await with_gadget_kind(harness, gc)
    await gadget_with_dependent(harness)
    async def dep_seen():
        return "dep" in {n.name for n in gc.graph.values() if not n.virtual}

    await harness.eventually(dep_seen, what="dependent in the graph")
    crd = await harness.client.get(CRDS, "gadgets.example.com")
    crd["spec"]["versions"] = gadget_crd(GADGETS, versions=("v1", "v2"))["spec"]["versions"]
    await harness.client.update(CRDS, crd)

    async def on_v2():
        mon = gc.monitors.get(("example.com", "gadgets"))
        return mon is not None and mon.res.version == "v2" and mon.informer.has_synced

    await harness.eventually(on_v2, what="monitor restarted on v2")
    async def owner_seen():
        return any(n.name == "g" and not n.virtual for n in gc.graph.values())

    await harness.eventually(owner_seen, what="the Gadget seen again through v2")
    assert not await harness.gone(CONFIGMAPS, "dep")  # its owner never went away


@pytest.mark.parametrize(("versions", "preferred"), [
    pytest.param(("v1",), "v1", id="single"),
    pytest.param(("v1beta1", "v1", "v2alpha1"), "v1", id="ga-before-alpha-of-a-higher-major"),
    pytest.param(("v1alpha1", "v1beta2", "v1beta1"), "v1beta2", id="highest-beta"),
    pytest.param(("foo", "v1alpha1"), "v1alpha1", id="kube-versions-before-other-names"),
    pytest.param(("zeta", "alpha"), "alpha", id="other-names-alphabetical"),
])
def test_monitor_watches_the_preferred_served_version(versions, preferred):
    crd = gadget_crd(GADGETS, versions=versions)
    assert crd_monitor_resource(crd) is None  # not established yet
    crd["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
    res = crd_monitor_resource(crd)
    assert res is not None and (res.group, res.version, res.resource, res.kind, res.namespaced) == (
        "example.com", preferred, "gadgets", "Gadget", True)


def test_builtin_watch_set_is_every_deletable_resource_but_events():
    watched = {r.qualified for r in deletable_builtin_resources()}
    assert {"pods", "configmaps", "roles.rbac.authorization.k8s.io", "ingresses.networking.k8s.io",
            "horizontalpodautoscalers.autoscaling", "customresourcedefinitions.apiextensions.k8s.io"} <= watched
    assert not watched & {"events", "events.events.k8s.io", "bindings", "tokenreviews.authentication.k8s.io"}
