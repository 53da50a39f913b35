"""Loop avoidance: the descheduler asks the scheduler's framework (scheduler.whatif.WhatIf,
over a real Scheduler fed by the same informers) where the pod would land; an eviction that
would only bring the pod back to its node is skipped, others go ahead. The what-if run leaves
the scheduler's own cache and snapshot untouched."""

from __future__ import annotations

from typing import Any

from minik3s.api.resources import PODS
from minik3s.testing.builders import make_node
from scheduler.scheduler import Scheduler
from scheduler.whatif import WhatIf

PREFER = ("soft", "", "PreferNoSchedule")
POLICY = ("deschedule", "RemovePodsViolatingNodeTaints", {"includePreferNoSchedule": True})


async def setup(cluster: Any, n2_cpu: str) -> tuple[Scheduler, WhatIf]:
    n1 = make_node("n1").capacity(cpu="4", memory="8Gi").taints(PREFER).obj()
    n2 = make_node("n2").capacity(cpu=n2_cpu, memory="8Gi").obj()
    await cluster.add(n1, n2, cluster.pod("p", "n1", cpu="1").obj())
    sched = Scheduler(client=cluster.client, informers=cluster.informers)
    await cluster.synced()
    return sched, WhatIf(sched)


async def test_pod_that_fits_nowhere_else_is_not_evicted(cluster: Any) -> None:
    sched, whatif = await setup(cluster, n2_cpu="500m")  # n2 cannot take a 1-cpu pod
    pod = cluster.informers.informer(PODS).store.get("default/p")
    res = whatif.where_would_it_go(pod)
    assert res is not None and res.feasible == ("n1",)
    assert await cluster.run(cluster.policy(POLICY), placement=whatif) == []
    assert 'result="skipped: would be placed on the same node"' in cluster.exposition()
    # without loop avoidance the same cycle evicts it
    assert await cluster.run(cluster.policy(POLICY)) == ["p"]
    assert sched.cache.get_node_info("n1") is not None


async def test_pod_with_a_better_node_is_evicted_and_scheduler_state_is_untouched(cluster: Any) -> None:
    sched, whatif = await setup(cluster, n2_cpu="4")
    sched.cache.update_snapshot(sched.snapshot)
    gen = sched.snapshot.generation
    before = [(ni.name, len(ni.pods), ni.requested.milli_cpu) for ni in sched.cache.node_infos()]
    pod = cluster.informers.informer(PODS).store.get("default/p")
    res = whatif.where_would_it_go(pod)
    assert res is not None and set(res.feasible) == {"n1", "n2"} and res.best == ("n2",)
    assert [(ni.name, len(ni.pods), ni.requested.milli_cpu) for ni in sched.cache.node_infos()] == before
    assert sched.snapshot.generation == gen and len(sched.snapshot.get("n1").pods) == 1
    assert await cluster.run(cluster.policy(POLICY), placement=whatif) == ["p"]


async def test_lifecycle_strategies_may_come_back_to_the_same_node(cluster: Any) -> None:
    """PodLifeTime restarts old pods: landing on the same node is fine, only a pod that would fit
    nowhere at all is kept."""
    _, whatif = await setup(cluster, n2_cpu="500m")  # p (1 cpu) fits only back on n1
    cluster.clock.advance(600)
    lifetime = cluster.policy(("deschedule", "PodLifeTime", {"maxPodLifeTimeSeconds": 60}))
    assert await cluster.run(lifetime, placement=whatif) == ["p"]


async def test_lifecycle_strategy_keeps_a_pod_that_fits_nowhere(cluster: Any) -> None:
    n1 = make_node("n1").capacity(cpu="4", memory="8Gi").obj()
    n2 = make_node("n2").capacity(cpu="4", memory="8Gi").obj()
    pod = cluster.pod("p", "n1", cpu="1").node_selector({"disk": "ssd"}).obj()  # no node has disk=ssd
    await cluster.add(n1, n2, pod)
    sched = Scheduler(client=cluster.client, informers=cluster.informers)
    await cluster.synced()
    cluster.clock.advance(600)
    lifetime = cluster.policy(("deschedule", "PodLifeTime", {"maxPodLifeTimeSeconds": 60}))
    assert await cluster.run(lifetime, placement=WhatIf(sched)) == []
    assert await cluster.run(lifetime) == ["p"]


async def test_failed_pods_are_removed_whatever_the_placement(cluster: Any) -> None:
    n1 = make_node("n1").capacity(cpu="4", memory="8Gi").obj()
    n2 = make_node("n2").capacity(cpu="4", memory="8Gi").obj()
    pod = cluster.pod("p", "n1", cpu="1").node_selector({"disk": "ssd"}).phase("Failed").obj()
    await cluster.add(n1, n2, pod)
    sched = Scheduler(client=cluster.client, informers=cluster.informers)
    await cluster.synced()
    assert await cluster.run(cluster.policy(("deschedule", "RemoveFailedPods", {})), placement=WhatIf(sched)) == ["p"]
