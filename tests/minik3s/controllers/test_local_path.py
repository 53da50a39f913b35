"""K3s' local-storage on the real in-process API: the server creates the default `local-path`
StorageClass, class-less claims get it, and once the scheduler (here: the test) selects a node
the simulated rancher.io/local-path provisioner creates `pvc-<uid>` on that node, which the PV
controller binds; a deleted claim's volume goes with it (reclaim Delete) or stays (Retain)."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.api.resources import EVENTS, PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, STORAGECLASSES
from minik3s.controllers.local_path import LocalPathProvisioner
from minik3s.controllers.persistentvolume import PersistentVolumeController

PVCS, PVS = PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES
SELECTED = "volume.kubernetes.io/selected-node"


@pytest.fixture
def storage(storage_harness: Any) -> Any:
    return storage_harness


def claim(name: str, size: str = "1Gi", *, modes: tuple[str, ...] = ("ReadWriteOnce",), cls: str | None = None
          ) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    return {"metadata": {"name": name}, "spec": spec}


async def bound(h: Any, name: str) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        c = await h.client.get(PVCS, name, "default")
        return c if (c.get("status") or {}).get("phase") == "Bound" else None

    return await h.eventually(check, what=f"claim {name} Bound")


async def phase_of(h: Any, name: str, phase: str) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        v = await h.client.get(PVS, name)
        return v if (v.get("status") or {}).get("phase") == phase else None

    return await h.eventually(check, what=f"volume {name} {phase}")


async def events(h: Any, name: str) -> list[tuple[str, str, str]]:
    items = (await h.client.list(EVENTS, "default"))["items"]
    return [(e["type"], e["reason"], e["message"]) for e in items if e["involvedObject"].get("name") == name]


async def has_event(h: Any, name: str, event: tuple[str, str, str]) -> None:
    async def check() -> bool:
        return event in await events(h, name)

    await h.eventually(check, what=f"event {event} on {name}")


async def run(h: Any) -> LocalPathProvisioner:
    pv = PersistentVolumeController(h.client, h.informers)
    lpp = LocalPathProvisioner(h.client, h.informers, identity="rancher.io/local-path_local-path-provisioner_test")
    h.start(pv.run, lpp.run)
    await h.add_node("node-a")
    return lpp


async def select_node(h: Any, name: str, node: str) -> None:
    await h.mutate(PVCS, name, lambda o: o["metadata"].setdefault("annotations", {}).update({SELECTED: node}))


async def test_the_server_creates_the_default_local_path_class(storage):
    cls = await storage.client.get(STORAGECLASSES, "local-path")
    assert (cls["provisioner"], cls["reclaimPolicy"], cls["volumeBindingMode"]) == (
        "rancher.io/local-path", "Delete", "WaitForFirstConsumer")
    assert cls["metadata"]["annotations"] == {"storageclass.kubernetes.io/is-default-class": "true"}
    made = await storage.client.create(PVCS, claim("data", cls=None), "default")
    assert made["spec"]["storageClassName"] == "local-path"


async def test_disabling_local_storage_leaves_no_class(harness):
    # the controllers' harness runs with --disable local-storage
    assert (await harness.client.list(STORAGECLASSES))["items"] == []


async def test_a_claim_waits_for_its_node_then_gets_a_local_path_volume_there(storage):
    await run(storage)
    made = await storage.client.create(PVCS, claim("data", "2Gi", cls=None), "default")
    uid = made["metadata"]["uid"]
    await has_event(storage, "data", ("Normal", "WaitForFirstConsumer",
                                      "waiting for first consumer to be created before binding"))
    assert (await storage.client.list(PVS))["items"] == []
    await select_node(storage, "data", "node-a")
    c = await bound(storage, "data")
    name = f"pvc-{uid}"
    assert c["spec"]["volumeName"] == name
    assert c["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"}}
    assert c["metadata"]["annotations"] == {
        SELECTED: "node-a", "pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
        "volume.kubernetes.io/storage-provisioner": "rancher.io/local-path",
        "volume.beta.kubernetes.io/storage-provisioner": "rancher.io/local-path"}
    v = await phase_of(storage, name, "Bound")
    assert v["metadata"]["annotations"] == {"local.path.provisioner/selected-node": "node-a",
                                            "pv.kubernetes.io/provisioned-by": "rancher.io/local-path"}
    ref = v["spec"].pop("claimRef")
    assert (ref["kind"], ref["namespace"], ref["name"], ref["uid"], ref["apiVersion"]) == (
        "PersistentVolumeClaim", "default", "data", uid, "v1")
    assert ref["resourceVersion"]
    assert v["spec"] == {
        "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"},
        "hostPath": {"path": f"/var/lib/rancher/k3s/storage/{name}_default_data", "type": "DirectoryOrCreate"},
        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-a"]}]}]}},
        "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "local-path", "volumeMode": "Filesystem"}
    seen = await events(storage, "data")
    source = "rancher.io/local-path_local-path-provisioner_test"
    assert seen[:1] == [("Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")]
    assert ("Normal", "Provisioning", 'External provisioner is provisioning volume for claim "default/data"') in seen
    assert ("Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {name}") in seen
    items = (await storage.client.list(EVENTS, "default"))["items"]
    assert {e["source"]["component"] for e in items if e["reason"].startswith("Provisioning")} == {source}

    # the claim goes: its volume is Released, then deleted by the provisioner (reclaim Delete)
    await storage.client.delete(PVCS, "data", "default")
    await storage.eventually(lambda: storage.gone(PVS, name, None), what="provisioned volume deleted")


async def test_a_retain_class_keeps_the_volume_after_its_claim(storage):
    await run(storage)
    await storage.client.create(STORAGECLASSES, {
        "metadata": {"name": "keep"}, "provisioner": "rancher.io/local-path", "reclaimPolicy": "Retain",
        "volumeBindingMode": "WaitForFirstConsumer"})
    made = await storage.client.create(PVCS, claim("kept", cls="keep"), "default")
    await select_node(storage, "kept", "node-a")
    await bound(storage, "kept")
    await storage.client.delete(PVCS, "kept", "default")
    v = await phase_of(storage, f"pvc-{made['metadata']['uid']}", "Released")
    assert v["spec"]["persistentVolumeReclaimPolicy"] == "Retain"


async def test_local_path_refuses_what_a_node_path_cannot_serve(storage):
    await run(storage)
    await storage.client.create(PVCS, claim("shared", modes=("ReadWriteMany",), cls=None), "default")
    await select_node(storage, "shared", "node-a")
    await has_event(storage, "shared", (
        "Warning", "ProvisioningFailed", 'failed to provision volume with StorageClass "local-path": '
        "NodePath only supports ReadWriteOnce and ReadWriteOncePod (1.22+) access modes"))
    await storage.client.create(PVCS, claim("nowhere", cls=None), "default")
    await select_node(storage, "nowhere", "node-x")
    await has_event(storage, "nowhere", (
        "Warning", "ProvisioningFailed", 'failed to provision volume with StorageClass "local-path": '
        'failed to get target node: nodes "node-x" not found'))
    assert (await storage.client.list(PVS))["items"] == []
