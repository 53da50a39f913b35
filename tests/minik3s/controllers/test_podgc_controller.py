"""Pod GC against a real server on a fake clock."""

from __future__ import annotations

from minik3s.api.errors import NotFoundError
from minik3s.api.resources import PODS
from minik3s.controllers.podgc import PodGCController
from minik3s.utils.clock import FakeClock


async def test_terminating_pod_on_missing_node_is_force_deleted_after_quarantine(harness):
    clock = FakeClock()
    gc = PodGCController(harness.client, harness.informers, clock=clock, gc_check_period=20, quarantine=40)
    harness.start(gc.run)
    await harness.client.create(PODS, {"metadata": {"name": "p"}, "spec": {
        "nodeName": "ghost", "containers": [{"name": "c", "image": "nginx"}]}}, "default")
    out = await harness.client.delete(PODS, "p", "default")
    assert out["metadata"]["deletionTimestamp"]  # graceful: no kubelet will ever confirm it

    async def exists():
        try:
            await harness.client.get(PODS, "p", "default")
        except NotFoundError:
            return False
        return True

    async def deleted():
        return not await exists()

    await harness.eventually(lambda: _sleepers(clock), what="gc loop waiting")
    clock.advance(20)
    await harness.eventually(lambda: _sleepers(clock), what="second pass")
    assert await exists(), "still quarantined"
    clock.advance(41)
    await harness.eventually(deleted, what="force-deleted orphan")


async def _sleepers(clock):
    return clock.sleepers > 0


async def test_terminated_pods_beyond_threshold_deleted_oldest_first(harness):
    clock = FakeClock()
    gc = PodGCController(harness.client, harness.informers, clock=clock, terminated_pod_gc_threshold=1)
    for name in ("a", "b", "c"):
        p = await harness.client.create(PODS, {"metadata": {"name": name}, "spec": {
            "nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}}, "default")
        p["status"] = {"phase": "Succeeded"}
        await harness.client.update_status(PODS, p)
    harness.start(gc.run)

    async def only_newest():
        names = [p["metadata"]["name"] for p in await harness.pods()]
        return names == ["c"]

    await harness.eventually(only_newest, what="two oldest terminated pods collected")
