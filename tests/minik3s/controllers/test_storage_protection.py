"""StorageObjectInUseProtection on the real in-process API: new claims and volumes get the
pvc-/pv-protection finalizers; a deleted claim stays Terminating while a scheduled pod uses it
and goes once the pod is gone; a deleted volume stays while Bound."""

from __future__ import annotations

from minik3s.api.resources import PERSISTENTVOLUMECLAIMS as PVCS
from minik3s.api.resources import PODS
from minik3s.controllers.storage_protection import PERSISTENTVOLUMES as PVS
from minik3s.controllers.storage_protection import StorageProtectionController


def claim(name: str) -> dict:
    return {"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                 "resources": {"requests": {"storage": "1Gi"}}}}


def pod(name: str, claim_name: str, node: str | None = "node-1") -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "nginx"}],
                  "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name}, "spec": spec}


async def start(harness) -> StorageProtectionController:
    harness.rs.core.storage_protection = True  # what `minik3s server` sets while controllers run
    ctl = StorageProtectionController(harness.client, harness.informers)
    harness.start(ctl.run)
    return ctl


async def test_a_claim_in_use_stays_until_its_pod_is_gone(harness):
    ctl = await start(harness)
    made = await harness.client.create(PVCS, claim("data"), "default")
    assert made["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    await harness.client.create(PODS, pod("user", "data"), "default")
    await harness.client.create(PODS, pod("pending", "data", node=None), "default")  # unscheduled: no hold
    await harness.client.delete(PVCS, "data", "default")
    cur = await harness.client.get(PVCS, "data", "default")
    assert cur["metadata"]["deletionTimestamp"] and cur["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    # once the controller's cache has the deletion, a sync keeps the finalizer: a pod uses it
    async def seen() -> bool:
        cached = ctl._claims.store.get("default/data")
        return bool(cached and cached["metadata"].get("deletionTimestamp"))

    await harness.eventually(seen, what="the deletion in the cache")
    await ctl.sync_claim("default/data")
    assert (await harness.client.get(PVCS, "data", "default"))["metadata"]["finalizers"]
    await harness.client.delete(PODS, "user", "default", grace_period_seconds=0)
    await harness.eventually(lambda: harness.gone(PVCS, "data"), what="claim removed")


async def test_an_unused_claim_goes_at_once_and_a_bound_volume_waits(harness):
    await start(harness)
    await harness.client.create(PVCS, claim("free"), "default")
    await harness.client.delete(PVCS, "free", "default")
    await harness.eventually(lambda: harness.gone(PVCS, "free"), what="unused claim removed")
    pv = await harness.client.create(PVS, {"metadata": {"name": "pv-1"}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/x"}}})
    assert pv["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    pv["status"] = {"phase": "Bound"}
    await harness.client.update_status(PVS, pv)
    await harness.client.delete(PVS, "pv-1")
    assert (await harness.client.get(PVS, "pv-1"))["metadata"]["finalizers"]
    cur = await harness.client.get(PVS, "pv-1")
    cur["status"] = {"phase": "Released"}
    await harness.client.update_status(PVS, cur)
    await harness.eventually(lambda: harness.gone(PVS, "pv-1", None), what="released volume removed")


async def test_without_the_plugin_nothing_is_added(harness):
    made = await harness.client.create(PVCS, claim("plain"), "default")
    assert "finalizers" not in made["metadata"]


async def test_a_claim_without_a_class_gets_the_newest_default_class(harness):
    from minik3s.api.resources import builtin_resources

    classes = next(r for r in builtin_resources() if r.resource == "storageclasses")
    default = {"storageclass.kubernetes.io/is-default-class": "true"}
    await harness.client.create(PVCS, claim("before"), "default")  # no default class yet
    await harness.client.create(classes, {"metadata": {"name": "slow"}, "provisioner": "example.com/x"})
    await harness.client.create(classes, {"metadata": {"name": "b-fast", "annotations": default},
                                          "provisioner": "example.com/x"})
    await harness.client.create(classes, {"metadata": {"name": "a-fast", "annotations": default},
                                          "provisioner": "example.com/x"})
    assert "storageClassName" not in (await harness.client.get(PVCS, "before", "default"))["spec"]
    made = await harness.client.create(PVCS, claim("after"), "default")
    assert made["spec"]["storageClassName"] == "a-fast"  # same second: the first name
    explicit = claim("none")
    explicit["spec"]["storageClassName"] = ""  # "" asks for no class
    assert (await harness.client.create(PVCS, explicit, "default"))["spec"]["storageClassName"] == ""
