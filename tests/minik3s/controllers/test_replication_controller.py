"""ReplicationController (core/v1) against a real in-process API server."""

from __future__ import annotations

import pytest

from minik3s.api.errors import InvalidError
from minik3s.api.resources import PODS, REPLICATIONCONTROLLERS
from minik3s.controllers.replication import ReplicationManager


def rc_obj(name: str, replicas: int, *, selector: dict | None = None) -> dict:
    spec: dict = {"replicas": replicas, "template": {"metadata": {"labels": {"app": name, "tier": "web"}},
                                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    if selector is not None:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


async def test_defaults_selector_and_labels_from_template(harness):
    rc = await harness.client.create(REPLICATIONCONTROLLERS, rc_obj("web", 2))
    assert rc["spec"]["selector"] == {"app": "web", "tier": "web"}
    assert rc["metadata"]["labels"] == {"app": "web", "tier": "web"}
    assert rc["status"] == {"replicas": 0}


async def test_selector_must_match_template(harness):
    with pytest.raises(InvalidError) as ei:
        await harness.client.create(REPLICATIONCONTROLLERS, rc_obj("web", 1, selector={"app": "other"}))
    assert [c["field"] for c in ei.value.causes] == ["spec.template.metadata.labels"]


async def test_keeps_replicas_with_equality_selector_adopts_and_scales(harness):
    orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "orphan", "labels": {"app": "web"}},
              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    await harness.client.create(PODS, orphan, "default")
    ctl = ReplicationManager(harness.client, harness.informers)
    harness.start(ctl.run, harness.kubelet)
    rc = await harness.client.create(REPLICATIONCONTROLLERS, rc_obj("web", 3, selector={"app": "web"}))

    async def ready(n):
        cur = await harness.client.get(REPLICATIONCONTROLLERS, "web", "default")
        st = cur.get("status") or {}
        return cur if st.get("readyReplicas") == n and st.get("replicas") == n else None

    await harness.eventually(lambda: ready(3), what="3 ready")
    pods = [p for p in await harness.pods() if not p["metadata"].get("deletionTimestamp")]
    assert len(pods) == 3 and "orphan" in {p["metadata"]["name"] for p in pods}
    for p in pods:
        assert p["metadata"]["ownerReferences"] == [{
            "apiVersion": "v1", "kind": "ReplicationController", "name": "web", "uid": rc["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}]
    await harness.mutate(REPLICATIONCONTROLLERS, "web", lambda r: r["spec"].update(replicas=1))
    await harness.eventually(lambda: ready(1), what="scaled to 1")
