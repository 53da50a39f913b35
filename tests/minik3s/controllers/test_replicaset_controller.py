"""ReplicaSet controller against a real in-process API server."""

from __future__ import annotations

from minik3s.api.resources import EVENTS, PODS, REPLICASETS
from minik3s.controllers.replicaset import ReplicaSetController


def rs_obj(name: str, replicas: int, *, app: str = "web") -> dict:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}},
                     "template": {"metadata": {"labels": {"app": app}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


async def test_creates_owned_pods_and_reports_status(harness):
    ctl = ReplicaSetController(harness.client, harness.informers)
    harness.start(ctl.run, harness.kubelet)
    rs = await harness.client.create(REPLICASETS, rs_obj("web", 3))

    async def ready():
        cur = await harness.client.get(REPLICASETS, "web", "default")
        st = cur.get("status") or {}
        return cur if st.get("readyReplicas") == 3 and st.get("availableReplicas") == 3 else None

    cur = await harness.eventually(ready, what="3 ready replicas")
    assert cur["status"]["replicas"] == 3
    assert cur["status"]["fullyLabeledReplicas"] == 3
    assert cur["status"]["observedGeneration"] == cur["metadata"]["generation"]
    pods = await harness.pods()
    assert len(pods) == 3
    for p in pods:
        assert p["metadata"]["name"].startswith("web-") and len(p["metadata"]["name"]) == len("web-") + 5
        assert p["metadata"]["ownerReferences"] == [{
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": rs["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}]

    async def create_events():
        evs = (await harness.client.list(EVENTS, "default"))["items"]
        return {e["message"] for e in evs if e["reason"] == "SuccessfulCreate"
                and e["involvedObject"]["name"] == "web" and e["involvedObject"]["kind"] == "ReplicaSet"}

    async def all_three():
        msgs = await create_events()
        return msgs if len(msgs) == 3 else None

    msgs = await harness.eventually(all_three, what="SuccessfulCreate events")
    assert msgs == {f"Created pod: {p['metadata']['name']}" for p in pods}


async def test_replaces_deleted_pod_and_scales_down(harness):
    ctl = ReplicaSetController(harness.client, harness.informers)
    harness.start(ctl.run, harness.kubelet)
    await harness.client.create(REPLICASETS, rs_obj("web", 3))

    async def n_pods(n):
        pods = [p for p in await harness.pods() if not p["metadata"].get("deletionTimestamp")]
        return pods if len(pods) == n else None

    pods = await harness.eventually(lambda: n_pods(3), what="3 pods")
    victim = pods[0]["metadata"]["name"]
    await harness.client.delete(PODS, victim, "default")

    async def replaced():
        names = {p["metadata"]["name"] for p in await harness.pods()}
        return len(names) == 3 and victim not in names

    await harness.eventually(replaced, what="deleted pod replaced")
    await harness.mutate(REPLICASETS, "web", lambda rs: rs["spec"].update(replicas=1))
    await harness.eventually(lambda: n_pods(1), what="scaled down to 1")
    # no over-creation: never more than 3 pods were alive at once afterwards either
    assert len(await harness.pods()) <= 3


async def test_adopts_orphans_and_releases_mismatched_pods(harness):
    ctl = ReplicaSetController(harness.client, harness.informers)
    orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "orphan", "labels": {"app": "web"}},
              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    await harness.client.create(PODS, orphan, "default")
    harness.start(ctl.run, harness.kubelet)
    rs = await harness.client.create(REPLICASETS, rs_obj("web", 2))

    async def adopted():
        p = await harness.client.get(PODS, "orphan", "default")
        refs = p["metadata"].get("ownerReferences") or []
        return p if refs and refs[0]["uid"] == rs["metadata"]["uid"] else None

    await harness.eventually(adopted, what="orphan adopted")

    async def two():
        pods = await harness.pods()
        return len(pods) == 2

    await harness.eventually(two, what="only one extra pod created")
    await harness.client.patch(PODS, "orphan", {"metadata": {"labels": {"app": "other"}}}, "default")

    async def released():
        p = await harness.client.get(PODS, "orphan", "default")
        return not p["metadata"].get("ownerReferences")

    await harness.eventually(released, what="pod released")

    async def replacement():
        pods = await harness.pods(selector="app=web")
        return len(pods) == 2

    await harness.eventually(replacement, what="replacement for released pod")


async def test_pods_of_another_controller_are_neither_counted_nor_adopted(harness):
    """The pod-by-controller index: a sibling ReplicaSet's pods carry the same labels, but only
    pods this ReplicaSet controls, and orphans it adopts, are its replicas."""
    ctl = ReplicaSetController(harness.client, harness.informers)
    harness.start(ctl.run, harness.kubelet)
    a = await harness.client.create(REPLICASETS, rs_obj("a", 2))

    async def settled(name: str, n: int):
        cur = await harness.client.get(REPLICASETS, name, "default")
        return cur if (cur.get("status") or {}).get("readyReplicas") == n else None

    await harness.eventually(lambda: settled("a", 2), what="a: 2 ready")
    b = await harness.client.create(REPLICASETS, rs_obj("b", 1))  # same selector as a
    await harness.eventually(lambda: settled("b", 1), what="b: 1 ready")
    pods = await harness.pods(selector="app=web")
    owners = sorted(p["metadata"]["ownerReferences"][0]["uid"] for p in pods)
    assert owners == sorted([a["metadata"]["uid"]] * 2 + [b["metadata"]["uid"]])
    for name, n in (("a", 2), ("b", 1)):
        st = (await harness.client.get(REPLICASETS, name, "default"))["status"]
        assert st["replicas"] == n and st["availableReplicas"] == n
