"""Upstream sigs descheduler pkg/framework/plugins/nodeutilization/highnodeutilization_test.go,
ported case by case (TestHighNodeUtilization, TestHighNodeUtilizationWithTaints): one real
descheduling cycle of HighNodeUtilization over the in-process API, DefaultEvictor `nodeFit: true`
for the first table (none for the taints table), asserting the number of evictions and, where
upstream restricts them, that only the listed pods went. Builders as upstream's test.BuildTestPod /
test.BuildTestNode; names with `_` are written with `-` as the API requires."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from minik3s.api.types import JsonDict
from tests.descheduler.plugins.nodeutilization_builders import (
    EXT,
    HIGH_PRIORITY,
    LOW_PRIORITY,
    best_effort,
    critical,
    ds,
    ext_request,
    labels,
    local_storage_mirror,
    node,
    node_ext,
    node_selector,
    normal,
    pod,
    priority,
    rs,
    unschedulable,
)


async def add_all(cluster: Any, nodes: list[JsonDict], pods: list[JsonDict]) -> None:
    known = {"default", "kube-system", "other"}
    for p in pods:
        name = p["metadata"]["namespace"]
        if name not in known:
            await cluster.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
            known.add(name)
    await cluster.add(*[copy.deepcopy(o) for o in nodes + pods])



N1, N2, N3 = "n1", "n2", "n3"
CPU_PODS = {"cpu": 20, "pods": 20}


def rs_pods(names: list[str], cpu: int, node_name: str, mem: int = 0) -> list[JsonDict]:
    return [pod(n, cpu, mem, node_name, rs) for n in names]


HNU_CASES: list[dict[str, Any]] = [
    dict(name="no node below threshold usage", thresholds={"cpu": 20, "pods": 20},
         nodes=[node(N1, 4000, 3000, 10), node(N2, 4000, 3000, 10), node(N3, 4000, 3000, 10)],
         pods=rs_pods(["p1", "p2", "p3"], 400, N1) + rs_pods(["p4", "p5", "p6"], 400, N2)
         + rs_pods(["p7", "p8", "p9"], 400, N3), expected=0),
    dict(name="no evictable pods", thresholds={"cpu": 40, "pods": 40},
         nodes=[node(N1, 4000, 3000, 9), node(N2, 4000, 3000, 10), node(N3, 4000, 3000, 10)],
         pods=[pod("p1", 400, 0, N1, local_storage_mirror), pod("p2", 400, 0, N1, normal, critical),
               pod("p3", 400, 0, N2, ds), pod("p4", 400, 0, N2, ds)]
         + rs_pods(["p5", "p6", "p7", "p8"], 400, N3), expected=0),
    dict(name="no node to schedule evicted pods", thresholds={"cpu": 20, "pods": 20},
         nodes=[node(N1, 4000, 3000, 10), node(N2, 4000, 3000, 10), node(N3, 4000, 3000, 10, unschedulable)],
         pods=rs_pods(["p1"], 400, N1) + rs_pods(["p2"], 400, N2) + rs_pods(["p3", "p4", "p5"], 400, N3),
         expected=0),
    dict(name="without priorities", thresholds={"cpu": 30, "pods": 30},
         nodes=[node(N1, 4000, 3000, 10), node(N2, 4000, 3000, 10), node(N3, 4000, 3000, 10, unschedulable)],
         pods=rs_pods(["p1"], 400, N1) + [pod("p2", 400, 0, N1, normal, critical)]
         + rs_pods(["p3", "p4", "p5", "p6"], 400, N2) + rs_pods(["p7"], 400, N3),
         expected=2, evicted_pods=["p1", "p7"]),
    dict(name="without priorities stop when resource capacity is depleted", thresholds={"cpu": 30, "pods": 30},
         nodes=[node(N1, 2000, 3000, 10), node(N2, 2000, 3000, 10), node(N3, 2000, 3000, 10, unschedulable)],
         pods=rs_pods(["p1"], 400, N1) + rs_pods(["p2", "p3", "p4", "p5"], 400, N2) + rs_pods(["p6"], 400, N3),
         expected=1),
    dict(name="with priorities", thresholds={"cpu": 30},
         nodes=[node(N1, 4000, 3000, 10), node(N2, 2000, 3000, 10), node(N3, 2000, 3000, 10, unschedulable)],
         pods=[pod("p1", 400, 0, N1, rs, priority(LOW_PRIORITY)), pod("p2", 400, 0, N1, rs, priority(HIGH_PRIORITY))]
         + rs_pods(["p5", "p6", "p7", "p8"], 400, N2) + [pod("p9", 400, 0, N3, ds)],
         expected=1, evicted_pods=["p1"]),
    dict(name="without priorities evicting best-effort pods only", thresholds={"cpu": 30},
         nodes=[node(N1, 3000, 3000, 10), node(N2, 3000, 3000, 5), node(N3, 3000, 3000, 10, unschedulable)],
         pods=[pod("p1", 400, 0, N1, rs, best_effort), pod("p2", 400, 0, N1, rs)]
         + rs_pods(["p3", "p4", "p5", "p6"], 400, N2), expected=1, evicted_pods=["p1"]),
    dict(name="with extended resource", thresholds={"cpu": 20, EXT: 40},
         nodes=[node(N1, 4000, 3000, 10, node_ext(8)), node(N2, 4000, 3000, 10, node_ext(8)),
                node(N3, 4000, 3000, 10, unschedulable)],
         pods=[pod("p1", 100, 0, N1, rs, ext_request(1)), pod("p2", 100, 0, N1, rs, ext_request(1))]
         + [pod(n, 500, 0, N2, rs, ext_request(1)) for n in ("p3", "p4", "p5", "p6")],
         expected=2, evicted_pods=["p1", "p2"]),
    dict(name="with extended resource in some of nodes", thresholds={"cpu": 40, EXT: 40},
         nodes=[node(N1, 4000, 3000, 10, node_ext(8)), node(N2, 4000, 3000, 10),
                node(N3, 4000, 3000, 10, unschedulable)],
         pods=[pod("p1", 100, 0, N1, rs, ext_request(1)), pod("p2", 100, 0, N1, rs, ext_request(1))]
         + rs_pods(["p3", "p4", "p5", "p6"], 500, N2), expected=0),
    dict(name="Other node match pod node selector", thresholds={"cpu": 30, "pods": 30},
         nodes=[node(N1, 4000, 3000, 9, labels(datacenter="west")), node(N2, 4000, 3000, 10)],
         pods=rs_pods(["p1", "p2", "p3"], 400, N1) + [pod("p4", 400, 0, N1, ds),
                                                      pod("p5", 400, 0, N2, rs, node_selector(datacenter="west"))],
         expected=1),
    dict(name="Other node does not match pod node selector", thresholds={"cpu": 30, "pods": 30},
         nodes=[node(N1, 4000, 3000, 9), node(N2, 4000, 3000, 10)],
         pods=rs_pods(["p1", "p2", "p3"], 400, N1) + [pod("p4", 400, 0, N1, ds),
                                                      pod("p5", 400, 0, N2, rs, node_selector(datacenter="west"))],
         expected=0),
    dict(name="Other node does not have enough Memory", thresholds={"cpu": 30, "pods": 30},
         nodes=[node(N1, 4000, 200, 9), node(N2, 4000, 3000, 10)],
         pods=rs_pods(["p1", "p2", "p3"], 400, N1, mem=50) + [pod("p4", 400, 50, N1, ds), pod("p5", 400, 100, N2, rs)],
         expected=0),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in HNU_CASES])
async def test_high_node_utilization(cluster: Any, case: dict[str, Any]) -> None:
    await add_all(cluster, case["nodes"], case["pods"])
    pol = cluster.policy(("balance", "HighNodeUtilization", {"thresholds": case["thresholds"]}),
                         evictor={"nodeFit": True})
    evicted = await cluster.run(pol)
    assert len(evicted) == case["expected"], evicted
    if case.get("evicted_pods"):
        assert set(evicted) <= set(case["evicted_pods"]), evicted


# ---- TestHighNodeUtilizationWithTaints ----------------------------------------------------------

def _taint_case(kind: str) -> tuple[list[JsonDict], list[JsonDict]]:
    n1, n2, n3 = node("n1", 1000, 3000, 10), node("n2", 1000, 3000, 10), node("n3", 1000, 3000, 10)
    n3t = copy.deepcopy(n3)
    n3t["spec"]["taints"] = [{"key": "key", "value": "value", "effect": "NoSchedule"}]
    if kind == "no-taints":
        return [n1, n2, n3], [pod(f"pod_{i}_n1", 200, 0, "n1", rs) for i in (1, 2, 3)] + [
            pod("pod_4_n2", 200, 0, "n2", rs)]
    if kind == "none-tolerates":
        return [n1, n3t], [pod("pod_1_n1", 200, 0, "n1", rs), pod("pod_2_n3", 200, 0, "n3", rs)]

    def tolerating(p: JsonDict) -> None:
        p["spec"]["tolerations"] = [{"key": "key", "value": "value"}]

    return [n1, n3t], [pod("pod_1_n1", 100, 0, "n1", rs), pod("tolerate_pod", 200, 0, "n1", rs, tolerating),
                       pod("pod_9_n3", 500, 0, "n3", rs)]


@pytest.mark.parametrize(("kind", "expected"), [
    pytest.param("no-taints", 1, id="No taints"),
    pytest.param("none-tolerates", 0, id="No pod tolerates node taint"),
    pytest.param("one-tolerates", 1, id="Pod which tolerates node taint"),
])
async def test_high_node_utilization_with_taints(cluster: Any, kind: str, expected: int) -> None:
    nodes, pods = _taint_case(kind)
    await add_all(cluster, nodes, pods)
    # upstream passes the expected count as maxPodsToEvictPerNode; DefaultEvictor without nodeFit
    pol = cluster.policy(("balance", "HighNodeUtilization", {"thresholds": {"cpu": 40}}),
                         maxNoOfPodsToEvictPerNode=expected)
    evicted = await cluster.run(pol)
    assert len(evicted) == expected, evicted
    if kind == "one-tolerates":
        assert evicted == ["tolerate-pod"]
