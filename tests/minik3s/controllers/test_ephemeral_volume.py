"""ephemeral-volume controller on the real in-process API: the `<pod>-<volume>` claim of each
generic ephemeral volume is created from its template (labels, annotations, spec) with the pod
as controlling owner; a claim of that name the pod does not own is left alone and reported as
upstream reports it; pods being deleted get no claims; syncing again changes nothing; a deleted
claim comes back while its pod lives; and the garbage collector removes the claims with the pod."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.api.resources import EVENTS, PERSISTENTVOLUMECLAIMS, PODS
from minik3s.client.informer import SharedInformerFactory
from minik3s.controllers import ALL_CONTROLLER_NAMES, ControllerConfig, all_controllers
from minik3s.controllers.ephemeral import EphemeralVolumeController, EphemeralVolumeError
from minik3s.controllers.garbage_collector import GarbageCollector
from minik3s.controllers.storage_protection import StorageProtectionController

PVCS = PERSISTENTVOLUMECLAIMS


def template(size: str = "1Gi", *, labels: dict[str, str] | None = None,
             annotations: dict[str, str] | None = None, cls: str | None = "scratch") -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    md: dict[str, Any] = {}
    if labels:
        md["labels"] = labels
    if annotations:
        md["annotations"] = annotations
    out: dict[str, Any] = {"spec": spec}
    if md:
        out["metadata"] = md
    return {"volumeClaimTemplate": out}


def pod(name: str, volumes: list[dict[str, Any]], *, node: str | None = None,
        finalizers: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}], "volumes": volumes}
    if node:
        spec["nodeName"] = node
    md: dict[str, Any] = {"name": name}
    if finalizers:
        md["finalizers"] = finalizers
    return {"metadata": md, "spec": spec}


def claim(name: str, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, **meta},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


def owner_ref(p: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}


def start(harness, *runs: Any) -> EphemeralVolumeController:
    ctl = EphemeralVolumeController(harness.client, harness.informers)
    harness.start(ctl.run, *runs)
    return ctl


async def claim_of(harness, name: str, ns: str = "default") -> dict[str, Any]:
    return await harness.eventually(lambda: harness.client.get(PVCS, name, ns), what=f"claim {name}")


async def events(harness, name: str, ns: str = "default") -> list[tuple[str, str, str, str]]:
    items = (await harness.client.list(EVENTS, ns))["items"]
    return [(e["type"], e["reason"], e["message"], e["source"]["component"]) for e in items
            if e["involvedObject"].get("name") == name and e["involvedObject"].get("kind") == "Pod"]


async def test_claim_is_created_from_the_template_with_the_pod_as_owner(harness):
    start(harness)
    tmpl = template("2Gi", labels={"app": "web", "tier": "cache"}, annotations={"note": "scratch space"})
    made = await harness.client.create(PODS, pod("web", [{"name": "scratch", "ephemeral": tmpl}]), "default")
    c = await claim_of(harness, "web-scratch")
    assert c["metadata"]["labels"] == {"app": "web", "tier": "cache"}
    assert c["metadata"]["annotations"] == {"note": "scratch space"}
    assert c["metadata"]["ownerReferences"] == [owner_ref(made)]
    spec = c["spec"]
    assert spec["accessModes"] == ["ReadWriteOnce"]
    assert spec["resources"] == {"requests": {"storage": "2Gi"}}
    assert spec["storageClassName"] == "scratch"
    assert (await events(harness, "web")) == []


async def test_each_ephemeral_volume_gets_its_claim_and_other_volumes_none(harness):
    start(harness)
    vols = [{"name": "a", "ephemeral": template("1Gi", labels={"v": "a"})},
            {"name": "cache", "emptyDir": {}},
            {"name": "b", "ephemeral": template("3Gi", cls=None)},
            {"name": "data", "persistentVolumeClaim": {"claimName": "shared"}}]
    made = await harness.client.create(PODS, pod("multi", vols), "default")
    a = await claim_of(harness, "multi-a")
    b = await claim_of(harness, "multi-b")
    assert a["metadata"]["labels"] == {"v": "a"} and not b["metadata"].get("labels")
    assert b["spec"]["resources"] == {"requests": {"storage": "3Gi"}}
    assert a["metadata"]["ownerReferences"] == b["metadata"]["ownerReferences"] == [owner_ref(made)]
    names = {c["metadata"]["name"] for c in (await harness.client.list(PVCS, "default"))["items"]}
    assert names == {"multi-a", "multi-b"}  # no claim for the emptyDir, none made for the pvc volume


async def test_a_claim_the_pod_does_not_own_is_left_alone_and_reported(harness):
    foreign = await harness.client.create(PVCS, claim("db-data", labels={"mine": "yes"}), "default")
    ctl = start(harness)
    await harness.client.create(PODS, pod("db", [{"name": "data", "ephemeral": template()}]), "default")
    expected = ("Warning", "FailedBinding",
                "ephemeral volume data: PVC default/db-data was not created for pod default/db (pod is not owner)",
                "ephemeral_volume")

    async def reported() -> bool:
        return expected in await events(harness, "db")

    await harness.eventually(reported, what="FailedBinding event")
    # retried with backoff, as upstream; the repeats are not recorded again
    await harness.eventually(lambda: _true(ctl.queue.num_requeues("default/db") >= 3), what="retries")
    await harness.eventually(lambda: _true(ctl.recorder.pending() == 0), what="events written")
    assert await events(harness, "db") == [expected]
    cur = await harness.client.get(PVCS, "db-data", "default")
    assert cur["metadata"]["resourceVersion"] == foreign["metadata"]["resourceVersion"]
    assert not cur["metadata"].get("ownerReferences") and cur["metadata"]["labels"] == {"mine": "yes"}

    # once the foreign claim is gone the pod gets its own
    await harness.client.delete(PVCS, "db-data", "default")

    async def owned() -> dict[str, Any] | None:
        c = await harness.client.get(PVCS, "db-data", "default")
        return c if c["metadata"].get("ownerReferences") else None

    c = await harness.eventually(owned, what="the pod's own claim")
    assert c["metadata"]["uid"] != foreign["metadata"]["uid"]


async def _true(v: bool) -> bool:
    return v


async def test_a_pod_being_deleted_gets_no_claim(harness):
    await harness.client.create(PODS, pod("going", [{"name": "tmp", "ephemeral": template()}],
                                          finalizers=["test/hold"]), "default")
    await harness.client.delete(PODS, "going", "default")
    assert (await harness.client.get(PODS, "going", "default"))["metadata"]["deletionTimestamp"]
    ctl = start(harness)
    await harness.client.create(PODS, pod("staying", [{"name": "tmp", "ephemeral": template()}]), "default")
    await claim_of(harness, "staying-tmp")
    await ctl.sync("default/going")  # even a direct sync does nothing
    assert await harness.gone(PVCS, "going-tmp")
    await harness.mutate(PODS, "going", lambda p: p["metadata"].update(finalizers=[]))


async def test_syncing_again_or_updating_the_pod_changes_nothing(harness):
    ctl = start(harness)
    await harness.client.create(PODS, pod("idem", [{"name": "v", "ephemeral": template(labels={"a": "1"})}]),
                                "default")
    first = await claim_of(harness, "idem-v")

    async def cached() -> bool:
        return ctl._claims.store.get("default/idem-v") is not None

    await harness.eventually(cached, what="claim in the controller's cache")
    await harness.mutate(PODS, "idem", lambda p: p["metadata"].setdefault("labels", {}).update(touched="yes"))
    for _ in range(3):
        await ctl.sync("default/idem")
    cur = await harness.client.get(PVCS, "idem-v", "default")
    assert cur["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert len((await harness.client.list(PVCS, "default"))["items"]) == 1
    assert await events(harness, "idem") == []


async def test_a_deleted_claim_is_created_again_while_its_pod_lives(harness):
    start(harness)
    await harness.client.create(PODS, pod("keep", [{"name": "v", "ephemeral": template()}]), "default")
    first = await claim_of(harness, "keep-v")
    await harness.client.delete(PVCS, "keep-v", "default")

    async def recreated() -> dict[str, Any] | None:
        c = await harness.client.get(PVCS, "keep-v", "default")
        return c if c["metadata"]["uid"] != first["metadata"]["uid"] else None

    await harness.eventually(recreated, what="claim recreated")


async def test_already_exists_judges_the_live_claim_when_the_cache_lags(harness):
    # a controller whose informers never run: its claim cache stays empty, the pod is put in by hand
    lagging = EphemeralVolumeController(harness.client, SharedInformerFactory(harness.client))
    owned = await harness.client.create(PODS, pod("lag", [{"name": "v", "ephemeral": template()}]), "default")
    lagging._pods.store.put("default/lag", owned)
    await lagging.sync("default/lag")  # creates it
    await lagging.sync("default/lag")  # AlreadyExists: ours, fine
    assert (await harness.client.get(PVCS, "lag-v", "default"))["metadata"]["ownerReferences"] == [owner_ref(owned)]

    await harness.client.create(PVCS, claim("other-v"), "default")
    other = await harness.client.create(PODS, pod("other", [{"name": "v", "ephemeral": template()}]), "default")
    lagging._pods.store.put("default/other", other)
    with pytest.raises(EphemeralVolumeError, match=r"PVC default/other-v was not created for pod default/other"):
        await lagging.sync("default/other")
    assert lagging.recorder.pending() == 1


async def test_claims_are_garbage_collected_with_their_pod(harness):
    harness.rs.core.storage_protection = True  # what `minik3s server` sets while controllers run
    gc = GarbageCollector(harness.client, harness.informers)
    sp = StorageProtectionController(harness.client, harness.informers)
    start(harness, gc.run, sp.run)
    await harness.client.create(PODS, pod("gc", [{"name": "a", "ephemeral": template()},
                                                 {"name": "b", "ephemeral": template()}], node="node-1"), "default")
    a = await claim_of(harness, "gc-a")
    await claim_of(harness, "gc-b")
    assert a["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    await harness.client.delete(PODS, "gc", "default", grace_period_seconds=0)
    await harness.eventually(lambda: harness.gone(PVCS, "gc-a"), what="claim gc-a collected")
    await harness.eventually(lambda: harness.gone(PVCS, "gc-b"), what="claim gc-b collected")


def test_registered_as_ephemeral_volume(harness):
    assert "ephemeral-volume" in ALL_CONTROLLER_NAMES
    runs = all_controllers(harness.client, harness.informers, config=ControllerConfig(enabled={"ephemeral-volume"}))
    assert [name for name, _ in runs] == ["ephemeral-volume"]
