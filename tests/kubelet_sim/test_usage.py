"""kubelet_sim's simulated usage (the metrics.k8s.io source) on the real in-process API:
default fraction of requests, pod annotations, a Service's load split over its ready
endpoints, node sums with the system overhead, failed nodes and non-running pods without samples."""

from __future__ import annotations

from typing import Any

from kubelet_sim.usage import CPU_LOAD, CPU_USAGE, MEMORY_USAGE, NODE_OVERHEAD_CPU_MILLI, UsageSource
from minik3s.api.resources import ENDPOINTS, PODS, SERVICES
from minik3s.testing.builders import make_pod


async def running(c: Any, name: str, node: str, *, cpu: str = "200m", annotations: dict[str, str] | None = None,
                  phase: str = "Running") -> None:
    b = make_pod(name).labels(app="web").node(node)
    for cname in ("a", "b"):
        b = b.container(name=cname, requests={"cpu": cpu, "memory": "100Mi"})
    if annotations:
        b = b.annotations(annotations)
    await c.create(PODS, b.obj(), "default")
    cur = await c.get(PODS, name, "default")
    cur["status"] = {"phase": phase}
    await c.update_status(PODS, cur)


def source(c: Any, live: list[str]) -> UsageSource:
    return UsageSource(pods=c.informer(PODS), services=c.informer(SERVICES), endpoints=c.informer(ENDPOINTS),
                       node_names=lambda: live, clock=c.clock)


async def test_defaults_annotations_service_load_and_nodes(cluster: Any) -> None:
    src = source(cluster, ["n1", "n2"])
    await running(cluster, "p1", "n1")
    await running(cluster, "p2", "n1", annotations={CPU_USAGE: "100m", MEMORY_USAGE: "50Mi"})
    await running(cluster, "p3", "n2")
    await running(cluster, "pending", "n2", phase="Pending")
    await running(cluster, "elsewhere", "n9")
    await cluster.create(SERVICES, {"apiVersion": "v1", "kind": "Service",
                                    "metadata": {"name": "web", "annotations": {CPU_LOAD: "600m"}},
                                    "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}, "default")
    await cluster.create(ENDPOINTS, {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web"},
                                     "subsets": [{"addresses": [
                                         {"ip": "10.42.0.1", "targetRef": {"kind": "Pod", "name": "p1"}},
                                         {"ip": "10.42.0.2", "targetRef": {"kind": "Pod", "name": "p2"}}],
                                         "notReadyAddresses": [
                                         {"ip": "10.42.0.3", "targetRef": {"kind": "Pod", "name": "p3"}}],
                                         "ports": [{"port": 80}]}]}, "default")
    await cluster.settle()
    pods = {u.name: u for u in src.pod_usage("default")}
    assert set(pods) == {"p1", "p2", "p3"}  # not Pending, not on a node we do not simulate
    # p1: 10 % of 2 x 200m = 40m, + 600m / 2 ready endpoints; split over the containers by request
    assert [(c.name, c.cpu_milli) for c in pods["p1"].containers] == [("a", 170), ("b", 170)]
    assert pods["p2"].cpu_milli == 100 + 300 and pods["p2"].memory_bytes == 50 * 1024 * 1024
    assert pods["p3"].cpu_milli == 40  # not ready: no share of the load
    nodes = {u.name: u for u in src.node_usage()}
    assert nodes["n1"].cpu_milli == 340 + 400 + NODE_OVERHEAD_CPU_MILLI
    assert nodes["n2"].cpu_milli == 40 + NODE_OVERHEAD_CPU_MILLI
    assert src.pod_usage("other") == []


async def test_a_failed_node_reports_nothing(cluster: Any) -> None:
    live = ["n1"]
    src = source(cluster, live)
    await running(cluster, "p1", "n1")
    await cluster.settle()
    assert [u.name for u in src.pod_usage()] == ["p1"]
    live.clear()
    assert src.pod_usage() == [] and src.node_usage() == []
