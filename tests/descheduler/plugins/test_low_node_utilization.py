"""LowNodeUtilization table (after upstream lownodeutilization_test.go): nodes, pods, args ->
evicted pods, through the real API and the real descheduler loop."""

from __future__ import annotations

from typing import Any

import pytest

from kubelet_sim.usage import CPU_USAGE, UsageSource
from minik3s.api.resources import ENDPOINTS, PODS, SERVICES
from minik3s.testing.builders import make_node

ARGS = {"thresholds": {"cpu": 30, "pods": 30}, "targetThresholds": {"cpu": 50, "pods": 50}}
THREE = [("n1", "4"), ("n2", "4"), ("n3", "4")]

# (nodes, pods as (name, node, cpu, priority), args, expected evictions)
CASES = [
    pytest.param(THREE, [(f"p{i}", "n1", "400m", None) for i in range(8)] + [("q1", "n2", "400m", None)],
                 ARGS, ["p0", "p1", "p2"],
                 id="overutilized-node-drains-to-target-while-underutilized-nodes-have-room"),
    pytest.param(THREE, [(f"p{i}", "n1", "400m", None) for i in range(4)] + [("q1", "n2", "400m", None)],
                 ARGS, [], id="no-node-above-target-nothing-to-do"),
    pytest.param(THREE[:2], [(f"p{i}", "n1", "400m", None) for i in range(8)]
                 + [(f"q{i}", "n2", "400m", None) for i in range(4)],
                 ARGS, [], id="no-underutilized-node-nothing-to-do"),
    pytest.param(THREE, [(f"p{i}", "n1", "400m", None) for i in range(8)],
                 {**ARGS, "numberOfNodes": 2}, [], id="underutilized-nodes-not-more-than-numberOfNodes"),
    pytest.param(THREE, [("hi", "n1", "400m", 100), ("be", "n1", None, 10)]
                 + [(f"p{i}", "n1", "400m", 10) for i in range(6)],
                 ARGS, ["be", "p0", "p1"], id="lowest-priority-and-besteffort-first"),
    pytest.param(THREE, [(f"p{i}", "n1", "400m", None) for i in range(8)],
                 {**ARGS, "evictionLimits": {"node": 1}}, ["p0"], id="evictionLimits-node-caps-the-plugin"),
    pytest.param(THREE, [(f"p{i}", "n1", "500m", None) for i in range(4)] + [("q", "n2", "500m", None)],
                 {"useDeviationThresholds": True, "thresholds": {"cpu": 10}, "targetThresholds": {"cpu": 10}},
                 ["p0", "p1"], id="deviation-thresholds-relative-to-the-mean"),
]


def build(cluster: Any, node_specs: list[tuple[str, str]], pods: list[tuple[str, str, str | None, int | None]]
          ) -> list[Any]:
    objs = [make_node(n).capacity(cpu=cpu, memory="8Gi", pods="10").obj() for n, cpu in node_specs]
    objs += [cluster.pod(n, node, cpu=cpu, priority=prio).obj() for n, node, cpu, prio in pods]
    return objs


@pytest.mark.parametrize(("node_specs", "pods", "args", "expected"), CASES)
async def test_low_node_utilization(cluster: Any, node_specs: Any, pods: Any, args: dict[str, Any],
                                    expected: list[str]) -> None:
    await cluster.add(*build(cluster, node_specs, pods))
    assert await cluster.run(cluster.policy(("balance", "LowNodeUtilization", args))) == expected


async def test_unschedulable_node_is_never_a_destination(cluster: Any) -> None:
    objs = build(cluster, THREE, [(f"p{i}", "n1", "400m", None) for i in range(8)])
    objs[1]["spec"]["unschedulable"] = True
    objs[2]["spec"]["unschedulable"] = True
    await cluster.add(*objs)
    assert await cluster.run(cluster.policy(("balance", "LowNodeUtilization", ARGS))) == []


async def test_metrics_utilization_is_reported_unavailable(cluster: Any, caplog: Any) -> None:
    await cluster.add(*build(cluster, THREE, [(f"p{i}", "n1", "400m", None) for i in range(8)]))
    pol = cluster.policy(("balance", "LowNodeUtilization", {**ARGS, "metricsUtilization": {"metricsServer": True}}))
    assert await cluster.run(pol) == []
    assert "metricsUtilization: actual-usage metrics are not available" in caplog.text


def usage_source(cluster: Any) -> Any:
    """kubelet_sim's real usage source over the descheduler's informers (nodes n1..n3 simulated)."""
    return UsageSource(pods=cluster.informers.informer(PODS), services=cluster.informers.informer(SERVICES),
                       endpoints=cluster.informers.informer(ENDPOINTS), node_names=lambda: ["n1", "n2", "n3"],
                       clock=cluster.clock)


def running_pods(cluster: Any, n: int, *, cpu: str, used: str) -> list[Any]:
    return [cluster.pod(f"p{i}", "n1", cpu=cpu).annotations({CPU_USAGE: used}).phase("Running").obj()
            for i in range(n)]


@pytest.mark.parametrize(("cpu", "used", "expected"), [
    # the node's NodeMetrics: 8 x 400m plus the simulated node's own 50m = 81% of 4 cpu; four
    # evictions bring it to 1,650m (41%), three would leave 2,050m (51%, above the 50% target)
    pytest.param("100m", "400m", ["p0", "p1", "p2", "p3"], id="low-requests-high-usage-is-overutilized"),
    pytest.param("400m", "50m", [], id="high-requests-low-usage-stays"),
])
async def test_metrics_utilization_balances_on_actual_usage(cluster: Any, cpu: str, used: str,
                                                            expected: list[str]) -> None:
    objs = [make_node(n).capacity(cpu=c, memory="8Gi", pods="10").obj() for n, c in THREE]
    await cluster.add(*objs, *running_pods(cluster, 8, cpu=cpu, used=used))
    args = {"thresholds": {"cpu": 30}, "targetThresholds": {"cpu": 50}, "metricsUtilization": {"metricsServer": True}}
    d = await cluster.descheduler(cluster.policy(("balance", "LowNodeUtilization", args)), usage=usage_source(cluster))
    assert sorted(e.pod.split("/", 1)[1] for e in await d.run_once()) == expected


async def test_pods_not_tolerating_every_taint_of_some_underutilized_node_stay(cluster: Any) -> None:
    objs = build(cluster, THREE, [(f"p{i}", "n1", "400m", None) for i in range(8)])
    for n in objs[1:3]:
        n["spec"]["taints"] = [{"key": "soft", "effect": "PreferNoSchedule"}]
    await cluster.add(*objs)
    assert await cluster.run(cluster.policy(("balance", "LowNodeUtilization", ARGS))) == []


async def test_most_used_overutilized_node_is_drained_first(cluster: Any) -> None:
    # n1 (2100m, 52.5%) and n2 (3500m, 87.5%) are above target; the headroom of n3 (50% of 3 cpu
    # = 1500m) runs out on the busier n2: three of its pods move, none of n1's (n1 first would
    # have given a0, b0, b1)
    objs = build(cluster, [("n1", "4"), ("n2", "4"), ("n3", "3")],
                 [(f"a{i}", "n1", "700m", None) for i in range(3)] + [(f"b{i}", "n2", "500m", None)
                                                                      for i in range(7)])
    await cluster.add(*objs)
    evicted = await cluster.run(cluster.policy(("balance", "LowNodeUtilization", {
        "thresholds": {"cpu": 30}, "targetThresholds": {"cpu": 50}})))
    assert evicted == ["b0", "b1", "b2"]
