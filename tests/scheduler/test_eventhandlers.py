"""Event routing: assigned pods -> cache (+ wake-ups), unassigned -> queue, nodes -> cache + wake-ups."""

from __future__ import annotations

from minik3s.api.resources import NODES, PODS
from minik3s.testing.builders import make_node, make_pod


async def test_assigned_pod_delete_frees_resources_and_wakes_rejected_pods(factory, fake_client, make_scheduler):
    s = make_scheduler()
    factory.informer(NODES).add(make_node("n1").capacity(cpu="2").obj())
    hog = make_pod("hog").req(cpu="2").node("n1").obj()
    factory.informer(PODS).add(hog)
    assert s.cache.get_node_info("n1").requested.milli_cpu == 2000
    factory.informer(PODS).add(make_pod("p").req(cpu="1").obj())
    await s.schedule_one()
    assert s.queue.where("uid-default-p") == "unschedulablePods"
    factory.informer(PODS).delete(hog)
    assert s.cache.get_node_info("n1").requested.milli_cpu == 0
    assert s.queue.where("uid-default-p") in ("backoffQ", "activeQ")


async def test_assigned_pod_update_refreshes_cache(factory, make_scheduler):
    s = make_scheduler()
    factory.informer(NODES).add(make_node("n1").capacity(cpu="4").obj())
    factory.informer(PODS).add(make_pod("a").req(cpu="1").node("n1").obj())
    factory.informer(PODS).update(make_pod("a").req(cpu="3").node("n1").obj())
    assert s.cache.get_node_info("n1").requested.milli_cpu == 3000
    assert s.queue.where("uid-default-a") is None


async def test_node_delete_and_update_reach_the_snapshot(factory, make_scheduler):
    s = make_scheduler()
    inf = factory.informer(NODES)
    inf.add(make_node("n1").capacity(cpu="4").obj())
    inf.add(make_node("n2").capacity(cpu="4").obj())
    inf.update(make_node("n2").capacity(cpu="8").obj())
    inf.delete(make_node("n1").obj())
    s.cache.update_snapshot(s.snapshot)
    assert [n.name for n in s.snapshot.node_infos()] == ["n2"]
    assert s.snapshot.get("n2").allocatable.milli_cpu == 8000


async def test_unassigned_pod_delete_leaves_queue_and_rejects_waiting(factory, make_scheduler):
    s = make_scheduler()
    pod = make_pod("p").obj()
    factory.informer(PODS).add(pod)
    assert s.queue.where("uid-default-p") == "activeQ"
    factory.informer(PODS).delete(pod)
    assert s.queue.where("uid-default-p") is None
