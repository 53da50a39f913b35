"""The one evict-until-limit loop (descheduler.framework.evict_loop) as the strategies use it,
through the real evictor and the real API: a per-node limit ends that node's group and the walk
goes on with the next node; a total limit ends the strategy; strategies that pick pods across
nodes (PodLifeTime) skip only the pod whose node is full."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.testing.builders import make_node

TAINT = ("maintenance", "", "NoSchedule")


async def tainted_nodes(cluster: Any) -> None:
    nodes = [make_node(n).capacity(cpu="8", memory="8Gi").taints(TAINT).obj() for n in ("n1", "n2")]
    pods = [cluster.pod(f"{n}-{i}", n).phase("Running").condition("Ready").obj() for n in ("n1", "n2") for i in range(3)]
    await cluster.add(*nodes, make_node("n3").capacity(cpu="8", memory="8Gi").obj(), *pods)


@pytest.mark.parametrize(("limits", "expected"), [
    pytest.param({}, ["n1-0", "n1-1", "n1-2", "n2-0", "n2-1", "n2-2"], id="no-limit-every-pod"),
    pytest.param({"maxNoOfPodsToEvictPerNode": 2}, ["n1-0", "n1-1", "n2-0", "n2-1"],
                 id="node-limit-moves-on-to-the-next-node"),
    pytest.param({"maxNoOfPodsToEvictPerNode": 2, "maxNoOfPodsToEvictTotal": 3}, ["n1-0", "n1-1", "n2-0"],
                 id="total-limit-stops-the-strategy"),
    pytest.param({"maxNoOfPodsToEvictTotal": 0}, [], id="total-limit-zero-evicts-nothing"),
])
async def test_per_node_strategy_limits(cluster: Any, limits: dict[str, int], expected: list[str]) -> None:
    await tainted_nodes(cluster)
    pol = cluster.policy(("deschedule", "RemovePodsViolatingNodeTaints", None), **limits)
    assert await cluster.run(pol, dry_run=True) == expected


@pytest.mark.parametrize(("limits", "expected"), [
    pytest.param({"maxNoOfPodsToEvictPerNode": 1}, ["a", "d"], id="full-node-skips-only-its-pods"),
    pytest.param({"maxNoOfPodsToEvictTotal": 2}, ["a", "b"], id="total-limit-keeps-oldest-first"),
])
async def test_cross_node_strategy_limits(cluster: Any, limits: dict[str, int], expected: list[str]) -> None:
    nodes = [make_node(n).capacity(cpu="8", memory="8Gi").obj() for n in ("n1", "n2")]
    await cluster.add(*nodes)
    for name, node in (("a", "n1"), ("b", "n1"), ("c", "n1"), ("d", "n2")):  # oldest first
        await cluster.add(cluster.pod(name, node).phase("Running").obj())
        cluster.clock.advance(10)
    cluster.clock.advance(600)
    pol = cluster.policy(("deschedule", "PodLifeTime", {"maxPodLifeTimeSeconds": 300}), **limits)
    assert await cluster.run(pol, dry_run=True) == expected


async def test_failed_pods_total_limit(cluster: Any) -> None:
    await cluster.add(*(make_node(n).capacity(cpu="8", memory="8Gi").obj() for n in ("n1", "n2")),
                      *(cluster.pod(f"f{i}", "n1").phase("Failed").obj() for i in range(3)))
    pol = cluster.policy(("deschedule", "RemoveFailedPods", {}), maxNoOfPodsToEvictTotal=2)
    assert await cluster.run(pol, dry_run=True) == ["f0", "f1"]
