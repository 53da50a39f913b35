"""Garbage collector: Background, Foreground and Orphan propagation against a real server."""

from __future__ import annotations

import pytest

from minik3s.api.errors import NotFoundError
from minik3s.api.resources import CONFIGMAPS, DEPLOYMENTS, REPLICASETS
from minik3s.controllers.deployment import DeploymentController
from minik3s.controllers.garbage_collector import GarbageCollector
from minik3s.controllers.replicaset import ReplicaSetController


def start_all(harness, *, with_workloads: bool = True):
    gc = GarbageCollector(harness.client, harness.informers)
    runs = [gc.run]
    if with_workloads:
        runs += [ReplicaSetController(harness.client, harness.informers).run,
                 DeploymentController(harness.client, harness.informers).run]
    harness.start(*runs, harness.kubelet)
    return gc


async def gone(harness, res, name, ns="default"):
    try:
        await harness.client.get(res, name, ns)
    except NotFoundError:
        return True
    return False


async def test_background_deletes_dependents_after_owner(harness):
    start_all(harness)
    await harness.client.create(DEPLOYMENTS, harness.deploy("web", 3))
    await harness.available("web", 3)
    await harness.client.delete(DEPLOYMENTS, "web", "default", propagation_policy="Background")
    assert await gone(harness, DEPLOYMENTS, "web")

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
        return (await gone(harness, DEPLOYMENTS, "web") and not (await harness.client.list(REPLICASETS, "default"))["items"]
                and not await harness.pods())

    await harness.eventually(all_gone, what="foreground deletion finished")


async def test_orphan_strips_owner_references_and_keeps_dependents(harness):
    start_all(harness)
    await harness.client.create(DEPLOYMENTS, harness.deploy("web", 2))
    await harness.available("web", 2)
    await harness.client.delete(DEPLOYMENTS, "web", "default", propagation_policy="Orphan")
    await harness.eventually(lambda: gone(harness, DEPLOYMENTS, "web"), what="owner deleted after orphaning")
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
        await harness.eventually(lambda: gone(harness, CONFIGMAPS, "dep"), what="dependent collected")
