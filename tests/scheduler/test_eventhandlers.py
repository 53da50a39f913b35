"""Event routing on the real API: assigned pods -> cache (+ wake-ups), unassigned -> queue,
nodes -> cache + wake-ups. Objects are created, patched and deleted through the in-process API;
the scheduler sees them through its real informers."""

from __future__ import annotations

import pytest

from minik3s.api.errors import InvalidError
from minik3s.api.resources import NODES, PODS
from minik3s.testing.builders import make_node, make_pod


async def test_assigned_pod_delete_frees_resources_and_wakes_rejected_pods(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_node("n1").capacity(cpu="2").obj(), make_pod("hog").req(cpu="2").node("n1").obj())
    assert s.cache.get_node_info("n1").requested.milli_cpu == 2000
    await env.add(make_pod("p").req(cpu="1").obj())
    await s.schedule_one()
    assert s.queue.where(env.uid("p")) == "unschedulablePods"
    await real_api.delete(PODS, "hog", "default", grace_period_seconds=0)
    await real_api.settle()
    assert real_api.obj(PODS, "hog", "default") is None
    assert s.cache.get_node_info("n1").requested.milli_cpu == 0
    assert s.queue.where(env.uid("p")) in ("backoffQ", "activeQ")


async def test_assigned_pod_update_refreshes_cache(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_node("n1").capacity(cpu="4").obj(), make_pod("a").req(cpu="1").node("n1").obj())
    # the API refuses to change a running pod's requests (no resize subresource here)
    with pytest.raises(InvalidError):
        await real_api.patch(PODS, "a", {"spec": {"containers": [
            {"name": "c0", "resources": {"requests": {"cpu": "3"}}}]}}, "default", patch_type="strategic")
    updated = await env.patch_pod("a", {"metadata": {"labels": {"app": "web"}}})
    cached = s.cache.get_node_info("n1").pods
    assert [p.name for p in cached] == ["a"]
    assert cached[0].pod["metadata"]["labels"] == {"app": "web"}
    assert cached[0].pod["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]
    assert s.cache.get_node_info("n1").requested.milli_cpu == 1000
    assert s.queue.where(env.uid("a")) is None


async def test_node_delete_and_update_reach_the_snapshot(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_node("n1").capacity(cpu="4").obj(), make_node("n2").capacity(cpu="4").obj())
    n2 = real_api.obj(NODES, "n2")
    n2["status"] = make_node("n2").capacity(cpu="8").obj()["status"]
    await real_api.update_status(NODES, n2)
    await real_api.delete(NODES, "n1")
    await real_api.settle()
    s.cache.update_snapshot(s.snapshot)
    assert [n.name for n in s.snapshot.node_infos()] == ["n2"]
    assert s.snapshot.get("n2").allocatable.milli_cpu == 8000


async def test_unassigned_pod_delete_leaves_queue_and_rejects_waiting(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_pod("p").obj())
    uid = env.uid("p")
    assert s.queue.where(uid) == "activeQ"
    await real_api.delete(PODS, "p", "default")
    await real_api.settle()
    assert real_api.obj(PODS, "p", "default") is None  # unbound: deleted at once, whatever the grace
    assert s.queue.where(uid) is None
