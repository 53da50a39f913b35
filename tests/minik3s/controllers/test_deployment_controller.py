"""Deployment + ReplicaSet controllers against a real in-process API server."""

from __future__ import annotations

from minik3s.api.helpers.pods import is_pod_ready
from minik3s.api.resources import DEPLOYMENTS, EVENTS, PODS, REPLICASETS
from minik3s.controllers.deployment import DeploymentController
from minik3s.controllers.deployment_util import POD_TEMPLATE_HASH, REVISION
from minik3s.controllers.replicaset import ReplicaSetController


def set_image(image: str):
    def fn(d: dict) -> None:
        d["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return fn


def start(harness, *extra):
    rs = ReplicaSetController(harness.client, harness.informers)
    dc = DeploymentController(harness.client, harness.informers)
    harness.start(rs.run, dc.run, *extra)
    return dc


async def test_nine_replicas_become_available_with_upstream_status(harness):
    start(harness, harness.kubelet)
    await harness.client.create(DEPLOYMENTS, harness.deploy("web", 9))
    d = await harness.available("web", 9)
    st = d["status"]
    assert st["readyReplicas"] == 9
    assert "unavailableReplicas" not in st
    conds = {c["type"]: c for c in st["conditions"]}
    assert (conds["Available"]["status"], conds["Available"]["reason"], conds["Available"]["message"]) == (
        "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
    assert conds["Progressing"]["reason"] == "NewReplicaSetAvailable"
    rses = (await harness.client.list(REPLICASETS, "default"))["items"]
    assert len(rses) == 1
    rs = rses[0]
    h = rs["metadata"]["labels"][POD_TEMPLATE_HASH]
    assert rs["metadata"]["name"] == f"web-{h}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", POD_TEMPLATE_HASH: h}
    assert rs["metadata"]["annotations"][REVISION] == "1"
    assert d["metadata"]["annotations"][REVISION] == "1"
    assert conds["Progressing"]["message"] == f'ReplicaSet "web-{h}" has successfully progressed.'

    async def scaling_event():
        events = (await harness.client.list(EVENTS, "default"))["items"]
        return [e for e in events if e["reason"] == "ScalingReplicaSet"
                and e["involvedObject"]["kind"] == "Deployment"
                and e["message"] == f"Scaled up replica set web-{h} from 0 to 9"]

    (ev,) = await harness.eventually(scaling_event, what="ScalingReplicaSet event")
    assert ev["type"] == "Normal" and ev["source"] == {"component": "deployment-controller"}


async def test_scale_subresource_three_to_nine(harness):
    start(harness, harness.kubelet)
    await harness.client.create(DEPLOYMENTS, harness.deploy("web", 3))
    await harness.available("web", 3)
    scale = await harness.client.get(DEPLOYMENTS, "web", "default", subresource="scale")
    scale["spec"]["replicas"] = 9
    await harness.client.update(DEPLOYMENTS, scale, subresource="scale")
    await harness.available("web", 9)
    rses = (await harness.client.list(REPLICASETS, "default"))["items"]
    assert [r["spec"]["replicas"] for r in rses] == [9]


async def test_rolling_update_keeps_minimum_ready_and_replaces_every_pod(harness):
    start(harness, harness.kubelet)
    await harness.client.create(DEPLOYMENTS, harness.deploy("web", 8))  # maxUnavailable 25% -> 2, maxSurge 2
    await harness.available("web", 8)
    pod_inf = harness.informers.informer(PODS)
    lowest = [8]
    highest = [8]

    sampling = [True]

    def sample(*_: object) -> None:  # on every pod event: the cache after each change, none missed
        if not sampling[0]:
            return
        live = [p for p in pod_inf.store.list() if not p["metadata"].get("deletionTimestamp")]
        lowest[0] = min(lowest[0], sum(1 for p in live if is_pod_ready(p)))
        highest[0] = max(highest[0], len(live))

    pod_inf.add_handler(on_add=sample, on_update=sample, on_delete=sample)
    try:
        await harness.mutate(DEPLOYMENTS, "web", set_image("nginx:2"))
        d = await harness.available("web", 8, image="nginx:2")
    finally:
        sampling[0] = False
    assert lowest[0] >= 8 - 2
    assert highest[0] <= 8 + 2
    assert d["metadata"]["annotations"][REVISION] == "2"
    rses = (await harness.client.list(REPLICASETS, "default"))["items"]
    by_rev = {r["metadata"]["annotations"][REVISION]: r["spec"]["replicas"] for r in rses}
    assert by_rev == {"1": 0, "2": 8}


async def test_recreate_scales_old_to_zero_before_new(harness):
    start(harness, harness.kubelet)
    await harness.client.create(DEPLOYMENTS, harness.deploy("web", 3, strategy={"type": "Recreate"}))
    await harness.available("web", 3)
    pod_inf = harness.informers.informer(PODS)
    mixed = [False]

    sampling = [True]

    def sample(*_: object) -> None:  # on every pod event
        if sampling[0]:
            images = {p["spec"]["containers"][0]["image"] for p in pod_inf.store.list()}
            mixed[0] = mixed[0] or len(images) > 1

    pod_inf.add_handler(on_add=sample, on_update=sample, on_delete=sample)
    try:
        await harness.mutate(DEPLOYMENTS, "web", set_image("nginx:2"))
        await harness.available("web", 3, image="nginx:2")
    finally:
        sampling[0] = False
    assert not mixed[0], "Recreate must never run old and new pods together"


async def test_revision_history_limit_cleans_old_replicasets(harness):
    start(harness, harness.kubelet)
    dep = harness.deploy("web", 1)
    dep["spec"]["revisionHistoryLimit"] = 1
    await harness.client.create(DEPLOYMENTS, dep)
    await harness.available("web", 1)
    for tag in ("2", "3", "4"):
        await harness.mutate(DEPLOYMENTS, "web", set_image(f"nginx:{tag}"))
        await harness.available("web", 1, image=f"nginx:{tag}")

    async def cleaned():
        rses = (await harness.client.list(REPLICASETS, "default"))["items"]
        return sorted(r["metadata"]["annotations"][REVISION] for r in rses) == ["3", "4"]

    await harness.eventually(cleaned, what="only the newest old ReplicaSet kept")


async def test_paused_deployment_does_not_roll_out(harness):
    start(harness, harness.kubelet)
    await harness.client.create(DEPLOYMENTS, harness.deploy("web", 2))
    await harness.available("web", 2)
    await harness.mutate(DEPLOYMENTS, "web", lambda d: d["spec"].update(paused=True))

    async def paused_cond():
        cur = await harness.client.get(DEPLOYMENTS, "web", "default")
        c = next(c for c in cur["status"]["conditions"] if c["type"] == "Progressing")
        return cur if (c["status"], c["reason"], c["message"]) == ("Unknown", "DeploymentPaused",
                                                                     "Deployment is paused") else None

    await harness.eventually(paused_cond, what="DeploymentPaused")
    await harness.mutate(DEPLOYMENTS, "web", set_image("nginx:2"))

    async def observed():
        cur = await harness.client.get(DEPLOYMENTS, "web", "default")
        return cur["status"].get("observedGeneration") == cur["metadata"]["generation"]

    await harness.eventually(observed, what="paused generation observed")
    rses = (await harness.client.list(REPLICASETS, "default"))["items"]
    assert len(rses) == 1


async def test_progress_deadline_exceeded_when_pods_never_become_ready(harness):
    start(harness)  # no kubelet: pods stay Pending
    dep = harness.deploy("web", 2)
    dep["spec"]["progressDeadlineSeconds"] = 1
    await harness.client.create(DEPLOYMENTS, dep)

    async def timed_out():
        d = await harness.client.get(DEPLOYMENTS, "web", "default")
        c = next((c for c in (d.get("status") or {}).get("conditions") or [] if c["type"] == "Progressing"), None)
        return c if c and c["reason"] == "ProgressDeadlineExceeded" else None

    cond = await harness.eventually(timed_out, timeout=10, what="ProgressDeadlineExceeded")
    assert cond["status"] == "False"
    assert cond["message"].endswith("has timed out progressing.")
