"""persistentvolume-binder on the real in-process API: which volume a claim gets (smallest fit,
access-mode groups, class, selector, pre-binding both ways), what binding writes on both sides,
the Events a user reads in `kubectl describe pvc`, delayed binding and handing claims to an
external provisioner, and what happens to volumes whose claim goes (Retain, Delete) and to
claims whose volume goes (Lost)."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.api.resources import EVENTS, PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, STORAGECLASSES
from minik3s.controllers.persistentvolume import PersistentVolumeController

PVCS, PVS = PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES


def volume(name: str, size: str, *, modes: tuple[str, ...] = ("ReadWriteOnce",), cls: str | None = None,
           labels: dict[str, str] | None = None, claim_ref: dict[str, Any] | None = None,
           policy: str | None = None, path: str = "/data/x") -> dict[str, Any]:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": list(modes), "hostPath": {"path": path}}
    if cls is not None:
        spec["storageClassName"] = cls
    if claim_ref is not None:
        spec["claimRef"] = claim_ref
    if policy is not None:
        spec["persistentVolumeReclaimPolicy"] = policy
    md: dict[str, Any] = {"name": name}
    if labels:
        md["labels"] = labels
    return {"metadata": md, "spec": spec}


def claim(name: str, size: str = "1Gi", *, modes: tuple[str, ...] = ("ReadWriteOnce",), cls: str | None = "",
          selector: dict[str, Any] | None = None, volume_name: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    if selector is not None:
        spec["selector"] = selector
    if volume_name is not None:
        spec["volumeName"] = volume_name
    return {"metadata": {"name": name}, "spec": spec}


async def start(harness, **kw: Any) -> PersistentVolumeController:
    ctl = PersistentVolumeController(harness.client, harness.informers, **kw)
    harness.start(ctl.run)
    return ctl


async def bound(harness, name: str, ns: str = "default") -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        c = await harness.client.get(PVCS, name, ns)
        return c if (c.get("status") or {}).get("phase") == "Bound" else None

    return await harness.eventually(check, what=f"claim {name} Bound")


async def events(harness, name: str, ns: str = "default") -> list[tuple[str, str, str]]:
    items = (await harness.client.list(EVENTS, ns))["items"]
    return [(e["type"], e["reason"], e["message"]) for e in items if e["involvedObject"].get("name") == name]


async def has_event(harness, name: str, event: tuple[str, str, str], ns: str = "default") -> None:
    async def check() -> bool:
        return event in await events(harness, name, ns)

    await harness.eventually(check, what=f"event {event} on {name}")


async def phase_of(harness, name: str, phase: str) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        v = await harness.client.get(PVS, name)
        return v if (v.get("status") or {}).get("phase") == phase else None

    return await harness.eventually(check, what=f"volume {name} {phase}")


async def test_a_claim_gets_the_smallest_fitting_volume_of_the_narrowest_access_modes(harness):
    await start(harness)
    for v in (volume("big", "5Gi"), volume("fit", "2Gi"), volume("other-class", "1Gi", cls="fast"),
              volume("rwx", "1Gi", modes=("ReadWriteOnce", "ReadWriteMany")), volume("tiny", "500Mi")):
        await harness.client.create(PVS, v)
    made = await harness.client.create(PVCS, claim("data"), "default")
    c = await bound(harness, "data")
    assert c["spec"]["volumeName"] == "fit"
    assert c["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes",
                                            "pv.kubernetes.io/bound-by-controller": "yes"}
    assert c["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"}}
    v = await phase_of(harness, "fit", "Bound")
    ref = v["spec"]["claimRef"]
    assert (ref["kind"], ref["namespace"], ref["name"], ref["uid"], ref["apiVersion"]) == (
        "PersistentVolumeClaim", "default", "data", made["metadata"]["uid"], "v1")
    assert v["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert v["status"]["lastPhaseTransitionTime"]
    # a claim asking for RWX can only take the RWO+RWX volume
    await harness.client.create(PVCS, claim("shared", modes=("ReadWriteMany",)), "default")
    assert (await bound(harness, "shared"))["spec"]["volumeName"] == "rwx"
    # the others stay Available
    for name in ("big", "other-class", "tiny"):
        await phase_of(harness, name, "Available")


async def test_class_and_selector_narrow_the_choice(harness):
    await start(harness)
    await harness.client.create(PVS, volume("plain", "1Gi"))
    await harness.client.create(PVS, volume("gold", "8Gi", labels={"tier": "gold"}))
    await harness.client.create(PVS, volume("fast", "1Gi", cls="fast"))
    await harness.client.create(PVCS, claim("picky", selector={"matchLabels": {"tier": "gold"}}), "default")
    await harness.client.create(PVCS, claim("quick", cls="fast"), "default")
    assert (await bound(harness, "picky"))["spec"]["volumeName"] == "gold"
    assert (await bound(harness, "quick"))["spec"]["volumeName"] == "fast"


async def test_a_volume_pre_bound_to_the_claim_wins_and_one_pre_bound_elsewhere_is_never_taken(harness):
    await start(harness)
    await harness.client.create(PVS, volume("reserved", "10Gi", claim_ref={"namespace": "default", "name": "mine"}))
    await harness.client.create(PVS, volume("cheap", "1Gi"))
    await harness.client.create(PVS, volume("theirs", "1Gi", claim_ref={"namespace": "default", "name": "theirs"}))
    await harness.client.create(PVCS, claim("mine"), "default")
    c = await bound(harness, "mine")
    assert c["spec"]["volumeName"] == "reserved"
    v = await phase_of(harness, "reserved", "Bound")
    assert v["spec"]["claimRef"]["uid"] == c["metadata"]["uid"]
    assert "annotations" not in v["metadata"]  # bound by its creator, not by the controller
    await harness.client.create(PVCS, claim("someone"), "default")
    assert (await bound(harness, "someone"))["spec"]["volumeName"] == "cheap"
    theirs = await phase_of(harness, "theirs", "Available")  # still reserved, for its own claim
    assert theirs["spec"]["claimRef"] == {"namespace": "default", "name": "theirs"}


async def test_a_claim_naming_its_volume_gets_it_or_a_mismatch_event(harness):
    await start(harness)
    await harness.client.create(PVS, volume("chosen", "5Gi"))
    await harness.client.create(PVS, volume("small", "100Mi"))
    await harness.client.create(PVCS, claim("wants", volume_name="chosen"), "default")
    c = await bound(harness, "wants")
    # the user bound the claim: only bind-completed; the volume was bound by the controller
    assert c["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes"}
    v = await phase_of(harness, "chosen", "Bound")
    assert v["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    await harness.client.create(PVCS, claim("greedy", volume_name="small"), "default")
    await has_event(harness, "greedy", ("Warning", "VolumeMismatch",
                                        'Cannot bind to requested volume "small": requested PV is too small'))
    assert (await harness.client.get(PVCS, "greedy", "default"))["status"]["phase"] == "Pending"


async def test_without_a_volume_or_a_class_the_claim_waits_with_failed_binding(harness):
    await start(harness)
    await harness.client.create(PVCS, claim("lonely"), "default")
    await has_event(harness, "lonely", ("Normal", "FailedBinding",
                                        "no persistent volumes available for this claim and no storage class is set"))
    # a volume that fits arrives: the claim binds (the volume's sync wakes nothing, the
    # claim's next sync finds it; add one here instead of waiting for the 15 s resync)
    await harness.client.create(PVS, volume("late", "1Gi"))
    c = await harness.mutate(PVCS, "lonely", lambda o: o["metadata"].setdefault("labels", {}).update(poke="1"))
    assert c["status"]["phase"] in ("Pending", "Bound")
    assert (await bound(harness, "lonely"))["spec"]["volumeName"] == "late"


async def test_every_resync_of_a_waiting_claim_counts_on_one_event(harness):
    # kubectl describe pvc on a real cluster: "FailedBinding ... (x4 over 45s)", one Event
    await start(harness, sync_period=0.05)
    await harness.client.create(PVCS, claim("waiting"), "default")

    async def counted() -> dict[str, Any] | None:
        mine = [e for e in (await harness.client.list(EVENTS, "default"))["items"]
                if e["involvedObject"].get("name") == "waiting" and e["reason"] == "FailedBinding"]
        assert len(mine) <= 1, mine
        return mine[0] if mine and mine[0]["count"] >= 3 else None

    ev = await harness.eventually(counted, what="FailedBinding counted three times")
    assert ev["source"] == {"component": "persistentvolume-controller"}
    assert ev["firstTimestamp"] <= ev["lastTimestamp"]


async def test_a_delayed_claim_waits_for_its_node_then_goes_to_its_external_provisioner(harness):
    await start(harness)
    await harness.client.create(STORAGECLASSES, {"metadata": {"name": "wait"}, "provisioner": "example.com/disk",
                                                 "volumeBindingMode": "WaitForFirstConsumer"})
    await harness.client.create(PVS, volume("free", "1Gi", cls="wait"))  # only the scheduler may pick it
    await harness.client.create(PVCS, claim("later", cls="wait"), "default")
    await has_event(harness, "later", ("Normal", "WaitForFirstConsumer",
                                       "waiting for first consumer to be created before binding"))
    c = await harness.client.get(PVCS, "later", "default")
    assert c["status"]["phase"] == "Pending" and "volumeName" not in c["spec"]
    assert "annotations" not in c["metadata"]
    await harness.mutate(PVCS, "later", lambda o: o["metadata"].setdefault("annotations", {}).update(
        {"volume.kubernetes.io/selected-node": "node-1"}))
    await has_event(harness, "later", (
        "Normal", "ExternalProvisioning",
        "Waiting for a volume to be created either by the external provisioner 'example.com/disk' or manually "
        "by the system administrator. If volume creation is delayed, please verify that the provisioner is "
        "running and correctly registered."))
    anns = (await harness.client.get(PVCS, "later", "default"))["metadata"]["annotations"]
    assert anns == {"volume.kubernetes.io/selected-node": "node-1",
                    "volume.kubernetes.io/storage-provisioner": "example.com/disk",
                    "volume.beta.kubernetes.io/storage-provisioner": "example.com/disk"}


async def test_unscheduled_pods_are_named_while_a_delayed_claim_waits(harness):
    from minik3s.api.resources import PODS

    await start(harness)
    await harness.client.create(STORAGECLASSES, {"metadata": {"name": "wait"}, "provisioner": "example.com/disk",
                                                 "volumeBindingMode": "WaitForFirstConsumer"})
    await harness.client.create(PODS, {"metadata": {"name": "user"}, "spec": {
        "containers": [{"name": "c", "image": "nginx"}],
        "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "later"}}]}}, "default")
    await harness.client.create(PVCS, claim("later", cls="wait"), "default")
    await has_event(harness, "later", ("Normal", "WaitForPodScheduled", "waiting for pod user to be scheduled"))


@pytest.mark.parametrize(("provisioner", "message"), [
    pytest.param("kubernetes.io/no-provisioner", "no volume plugin matched name: kubernetes.io/no-provisioner",
                 id="no-provisioner-class-with-immediate-binding"),
])
async def test_an_immediate_class_without_a_provisioner_fails_to_provision(harness, provisioner, message):
    await start(harness)
    await harness.client.create(STORAGECLASSES, {"metadata": {"name": "manual"}, "provisioner": provisioner})
    await harness.client.create(PVCS, claim("stuck", cls="manual"), "default")
    await has_event(harness, "stuck", ("Warning", "ProvisioningFailed", message))
    await harness.client.create(PVCS, claim("ghost", cls="missing"), "default")
    await has_event(harness, "ghost", ("Warning", "ProvisioningFailed",
                                       'storageclass.storage.k8s.io "missing" not found'))


async def test_a_claim_without_any_class_gets_the_default_class_later(harness):
    await start(harness, sync_period=0.1)
    await harness.client.create(PVCS, claim("classless", cls=None), "default")
    await harness.client.create(STORAGECLASSES, {
        "metadata": {"name": "std", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "example.com/disk"})

    async def assigned() -> bool:
        c = await harness.client.get(PVCS, "classless", "default")
        return c["spec"].get("storageClassName") == "std"

    await harness.eventually(assigned, what="retroactive default class")
    await has_event(harness, "classless", ("Normal", "ExternalProvisioning",
                                           "Waiting for a volume to be created either by the external provisioner "
                                           "'example.com/disk' or manually by the system administrator. If volume "
                                           "creation is delayed, please verify that the provisioner is running and "
                                           "correctly registered."))


async def test_released_volumes_follow_their_reclaim_policy(harness):
    await start(harness)
    await harness.client.create(PVS, volume("kept", "1Gi", cls="a"))  # Retain by default
    await harness.client.create(PVS, volume("scratch", "1Gi", cls="b", policy="Delete", path="/tmp/scratch"))
    await harness.client.create(PVS, volume("data", "1Gi", cls="c", policy="Delete", path="/data/d"))
    assert (await harness.client.get(PVS, "kept"))["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    for name, cls in (("c-kept", "a"), ("c-scratch", "b"), ("c-data", "c")):
        await harness.client.create(PVCS, claim(name, cls=cls), "default")
        await bound(harness, name)
        await harness.client.delete(PVCS, name, "default")
    v = await phase_of(harness, "kept", "Released")
    assert v["spec"]["claimRef"]["name"] == "c-kept"  # retained with its old claim's reference
    await harness.eventually(lambda: harness.gone(PVS, "scratch", None), what="/tmp hostPath volume deleted")
    failed = await phase_of(harness, "data", "Failed")
    assert failed["status"]["message"] == "host_path deleter only supports /tmp/.+ but received provided /data/d"
    await has_event(harness, "data", ("Warning", "VolumeFailedDelete",
                                      "host_path deleter only supports /tmp/.+ but received provided /data/d"))


async def test_a_claim_whose_volume_is_deleted_is_lost(harness):
    await start(harness)
    await harness.client.create(PVS, volume("fragile", "1Gi"))
    await harness.client.create(PVCS, claim("orphan"), "default")
    await bound(harness, "orphan")
    await harness.client.delete(PVS, "fragile")

    async def lost() -> dict[str, Any] | None:
        c = await harness.client.get(PVCS, "orphan", "default")
        return c if c["status"].get("phase") == "Lost" else None

    c = await harness.eventually(lost, what="claim Lost")
    assert c["status"] == {"phase": "Lost"}
    await has_event(harness, "orphan", ("Warning", "ClaimLost",
                                        "Bound claim has lost its PersistentVolume. Data on the volume is lost!"))


async def test_a_new_volume_is_pending_since_its_creation(harness):
    made = await harness.client.create(PVS, volume("fresh", "1Gi"))
    assert made["status"] == {"phase": "Pending", "lastPhaseTransitionTime": made["metadata"]["creationTimestamp"]}
    assert made["spec"]["volumeMode"] == "Filesystem"
    await start(harness)
    v = await phase_of(harness, "fresh", "Available")
    assert v["status"]["lastPhaseTransitionTime"]
