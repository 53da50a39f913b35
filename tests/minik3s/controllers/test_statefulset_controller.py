"""StatefulSet controller against a real in-process API server (stand-in kubelet)."""

from __future__ import annotations

import pytest

from minik3s.api.errors import InvalidError
from minik3s.api.resources import CONTROLLERREVISIONS, PERSISTENTVOLUMECLAIMS, PODS, STATEFULSETS
from minik3s.controllers.statefulset import StatefulSetController


def sts_obj(name: str, replicas: int, *, policy: str | None = None, image: str = "nginx:1",
            claims: bool = False, update: dict | None = None) -> dict:
    spec: dict = {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
                  "template": {"metadata": {"labels": {"app": name}},
                               "spec": {"containers": [{"name": "c", "image": image}]}}}
    if policy:
        spec["podManagementPolicy"] = policy
    if update:
        spec["updateStrategy"] = update
    if claims:
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
        spec["persistentVolumeClaimRetentionPolicy"] = {"whenScaled": "Delete"}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


async def test_defaults_match_upstream(harness):
    created = await harness.client.create(STATEFULSETS, sts_obj("db", 1, claims=True))
    spec = created["spec"]
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenScaled": "Delete", "whenDeleted": "Retain"}
    assert spec["volumeClaimTemplates"][0]["spec"]["volumeMode"] == "Filesystem"


async def test_bad_input_is_rejected_with_field_paths(harness):
    bad = sts_obj("db", 1, policy="Random")
    with pytest.raises(InvalidError) as ei:
        await harness.client.create(STATEFULSETS, bad)
    assert "spec.podManagementPolicy" in {c["field"] for c in ei.value.causes}
    await harness.client.create(STATEFULSETS, sts_obj("db", 1))
    with pytest.raises(InvalidError) as ei:
        await harness.mutate(STATEFULSETS, "db", lambda s: s["spec"].update(serviceName="other"))
    assert "updates to statefulset spec for fields other than" in ei.value.message


async def test_ordered_start_identity_claims_and_reverse_scale_down(harness):
    ctl = StatefulSetController(harness.client, harness.informers)
    harness.start(ctl.run, harness.kubelet)
    await harness.client.create(STATEFULSETS, sts_obj("db", 3, claims=True))
    created_order: list[str] = []

    async def ready(n):
        pods = await harness.pods(selector="app=db")
        for p in sorted(pods, key=lambda p: p["metadata"]["creationTimestamp"]):
            if p["metadata"]["name"] not in created_order:
                created_order.append(p["metadata"]["name"])
        cur = await harness.client.get(STATEFULSETS, "db", "default")
        st = cur.get("status") or {}
        return cur if st.get("readyReplicas") == n and st.get("replicas") == n else None

    cur = await harness.eventually(lambda: ready(3), what="3 ready")
    assert created_order == ["db-0", "db-1", "db-2"]
    st = cur["status"]
    assert st["currentRevision"] == st["updateRevision"] and st["currentReplicas"] == 3
    assert st["updatedReplicas"] == 3 and st["availableReplicas"] == 3
    assert st["observedGeneration"] == cur["metadata"]["generation"]
    pod = await harness.client.get(PODS, "db-1", "default")
    labels = pod["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert labels["apps.kubernetes.io/pod-index"] == "1"
    assert labels["controller-revision-hash"] == st["updateRevision"]
    assert pod["spec"]["hostname"] == "db-1" and pod["spec"]["subdomain"] == "db"
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}} in pod["spec"]["volumes"]
    pvc = await harness.client.get(PERSISTENTVOLUMECLAIMS, "data-db-1", "default")
    assert pvc["metadata"]["labels"] == {"app": "db"}
    revs = (await harness.client.list(CONTROLLERREVISIONS, "default"))["items"]
    assert [r["metadata"]["name"] for r in revs] == [st["updateRevision"]] and revs[0]["revision"] == 1

    # scale down: the highest ordinal goes first; db-2's claim is owned by its pod (whenScaled Delete)
    await harness.mutate(STATEFULSETS, "db", lambda s: s["spec"].update(replicas=1))
    seen_while_two: list[set[str]] = []

    async def down_to_one():
        names = {p["metadata"]["name"] for p in await harness.pods(selector="app=db")}
        if len(names) == 2:
            seen_while_two.append(names)
        return names == {"db-0"}

    await harness.eventually(down_to_one, what="scaled to db-0")
    assert all(s == {"db-0", "db-1"} for s in seen_while_two)
    pvc2 = await harness.client.get(PERSISTENTVOLUMECLAIMS, "data-db-2", "default")
    assert [r["kind"] for r in pvc2["metadata"].get("ownerReferences") or []] == ["Pod"]
    pvc0 = await harness.client.get(PERSISTENTVOLUMECLAIMS, "data-db-0", "default")
    assert not pvc0["metadata"].get("ownerReferences")


async def test_parallel_creates_all_at_once(harness):
    ctl = StatefulSetController(harness.client, harness.informers)
    # no kubelet: pods never become ready, yet Parallel creates them all
    harness.start(ctl.run)
    await harness.client.create(STATEFULSETS, sts_obj("web", 3, policy="Parallel"))

    async def three():
        names = {p["metadata"]["name"] for p in await harness.pods(selector="app=web")}
        return names == {"web-0", "web-1", "web-2"}

    await harness.eventually(three, what="3 pods without readiness")


async def test_ordered_ready_waits_for_readiness(harness):
    ctl = StatefulSetController(harness.client, harness.informers)
    harness.start(ctl.run)
    await harness.client.create(STATEFULSETS, sts_obj("web", 3))
    await harness.eventually(lambda: harness.client.get(PODS, "web-0", "default"), what="web-0")
    # the controller has nothing more to do until web-0 is ready: the set stays at one pod
    sts = await harness.eventually(
        lambda: _status_has(harness, "web", replicas=1), what="status replicas 1")
    assert sts["status"]["readyReplicas"] == 0
    assert [p["metadata"]["name"] for p in await harness.pods(selector="app=web")] == ["web-0"]


async def _status_has(harness, name, **want):
    cur = await harness.client.get(STATEFULSETS, name, "default")
    st = cur.get("status") or {}
    return cur if all(st.get(k) == v for k, v in want.items()) else None


async def test_rolling_update_respects_partition_then_completes(harness):
    ctl = StatefulSetController(harness.client, harness.informers)
    harness.start(ctl.run, harness.kubelet)
    await harness.client.create(STATEFULSETS, sts_obj("db", 3, update={
        "type": "RollingUpdate", "rollingUpdate": {"partition": 2}}))
    first = await harness.eventually(lambda: _status_has(harness, "db", readyReplicas=3), what="3 ready")
    old_rev = first["status"]["currentRevision"]

    def set_image(s, image="nginx:2"):
        s["spec"]["template"]["spec"]["containers"][0]["image"] = image

    await harness.mutate(STATEFULSETS, "db", set_image)

    async def images():
        pods = {p["metadata"]["name"]: p for p in await harness.pods(selector="app=db")}
        return {n: p["spec"]["containers"][0]["image"] for n, p in pods.items()
                if not p["metadata"].get("deletionTimestamp")}

    async def only_db2_updated():
        cur = await _status_has(harness, "db", updatedReplicas=1, readyReplicas=3)
        return cur if cur and await images() == {"db-0": "nginx:1", "db-1": "nginx:1", "db-2": "nginx:2"} else None

    cur = await harness.eventually(only_db2_updated, what="db-2 updated only")
    assert cur["status"]["currentRevision"] == old_rev != cur["status"]["updateRevision"]
    assert cur["status"]["currentReplicas"] == 2

    await harness.mutate(STATEFULSETS, "db", lambda s: s["spec"]["updateStrategy"]["rollingUpdate"].update(
        partition=0))

    async def all_updated():
        cur = await _status_has(harness, "db", updatedReplicas=3, readyReplicas=3, currentReplicas=3)
        return cur if cur and set((await images()).values()) == {"nginx:2"} else None

    cur = await harness.eventually(all_updated, what="rollout complete")
    assert cur["status"]["currentRevision"] == cur["status"]["updateRevision"]
    revs = (await harness.client.list(CONTROLLERREVISIONS, "default"))["items"]
    assert sorted(r["revision"] for r in revs) == [1, 2]


async def test_on_delete_recreates_deleted_pod_at_update_revision(harness):
    ctl = StatefulSetController(harness.client, harness.informers)
    harness.start(ctl.run, harness.kubelet)
    await harness.client.create(STATEFULSETS, sts_obj("db", 2, update={"type": "OnDelete"}))
    await harness.eventually(lambda: _status_has(harness, "db", readyReplicas=2), what="2 ready")
    await harness.mutate(STATEFULSETS, "db", lambda s: s["spec"]["template"]["spec"]["containers"][0].update(
        image="nginx:2"))
    await harness.eventually(lambda: _status_has(harness, "db", observedGeneration=2), what="observed")
    pods = await harness.pods(selector="app=db")
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {"nginx:1"}
    old_uid = (await harness.client.get(PODS, "db-1", "default"))["metadata"]["uid"]
    await harness.client.delete(PODS, "db-1", "default")

    async def recreated():
        p = await harness.client.get(PODS, "db-1", "default")
        return p if p["metadata"]["uid"] != old_uid else None

    p = await harness.eventually(recreated, what="db-1 recreated")
    assert p["spec"]["containers"][0]["image"] == "nginx:2"
    assert (await harness.client.get(PODS, "db-0", "default"))["spec"]["containers"][0]["image"] == "nginx:1"
