"""The simulated kubelet's own view (`UsageSource.kubelet_stats`, behind nodes/{name}/proxy):
cumulative cpu counters that integrate the sampled rate and never go back, a restarted
container starting a new counter, the `pods` cgroup, failed nodes without a kubelet, and the
KubeletConfiguration it runs with."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kubelet_sim.kubelet_config import kubelet_configuration
from kubelet_sim.usage import CPU_USAGE, NODE_OVERHEAD_CPU_MILLI, UsageSource
from minik3s.api.resources import ENDPOINTS, PODS, SERVICES
from minik3s.testing.builders import make_pod
from minik3s.utils.clock import rfc3339

NODE = {"metadata": {"name": "n1"}, "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
        "status": {"capacity": {"pods": "32"}}}


async def start_pod(c: Any, name: str, *, cpu: str, started_seconds_ago: float) -> None:
    b = make_pod(name).node("n1").container(name="a", requests={"cpu": "100m"}).annotations({CPU_USAGE: cpu})
    await c.create(PODS, b.obj(), "default")
    cur = await c.get(PODS, name, "default")
    started = rfc3339(c.clock.now() - timedelta(seconds=started_seconds_ago))
    cur["status"] = {"phase": "Running", "startTime": started, "containerStatuses": [
        {"name": "a", "containerID": "containerd://one", "restartCount": 0, "ready": True,
         "state": {"running": {"startedAt": started}}}]}
    await c.update_status(PODS, cur)


def source(c: Any, live: list[str]) -> UsageSource:
    return UsageSource(pods=c.informer(PODS), services=c.informer(SERVICES), endpoints=c.informer(ENDPOINTS),
                       node_names=lambda: live, clock=c.clock,
                       kubelet_config=lambda name: kubelet_configuration(NODE, node_status_update_frequency=2.0))


async def test_cumulative_cpu_integrates_the_sampled_rate(cluster: Any) -> None:
    src = source(cluster, ["n1"])
    await start_pod(cluster, "p", cpu="20m", started_seconds_ago=30)
    await cluster.settle()
    first = src.kubelet_stats("n1")
    assert first is not None
    (pod,) = first.pods
    # first seen 30 s after it started at 20m: 0.6 core-seconds, for the container and the pod
    assert pod.containers[0].cpu_core_nanoseconds == 600_000_000
    assert pod.cpu_core_nanoseconds == 600_000_000
    assert first.pods_cpu_milli == 20 and first.node.cpu_milli == 20 + NODE_OVERHEAD_CPU_MILLI

    cur = await cluster.get(PODS, "p", "default")
    cur["metadata"]["annotations"][CPU_USAGE] = "120m"
    await cluster.update(PODS, cur)
    await cluster.settle()
    cluster.clock.advance(10)
    second = src.kubelet_stats("n1")
    assert second is not None
    # 10 s more at the rate seen before (20m): 0.8; the new rate counts from now on
    assert second.pods[0].cpu_milli == 120
    assert second.pods[0].containers[0].cpu_core_nanoseconds == 800_000_000
    cluster.clock.advance(10)
    third = src.kubelet_stats("n1")
    assert third is not None
    assert third.pods[0].containers[0].cpu_core_nanoseconds == 2_000_000_000
    node_totals = [s.node.cpu_core_nanoseconds or 0 for s in (first, second, third)]
    assert node_totals == sorted(node_totals) and node_totals[2] > node_totals[1]
    # the node's counter is shared with metrics.k8s.io's sampling, and keeps going up
    cluster.clock.advance(5)
    (n1,) = src.node_usage()
    assert (n1.cpu_core_nanoseconds or 0) > node_totals[2]


async def test_a_restarted_container_starts_a_new_counter_the_pod_keeps_its_own(cluster: Any) -> None:
    src = source(cluster, ["n1"])
    await start_pod(cluster, "p", cpu="100m", started_seconds_ago=10)
    await cluster.settle()
    before = src.kubelet_stats("n1")
    assert before is not None and before.pods[0].containers[0].cpu_core_nanoseconds == 1_000_000_000
    cluster.clock.advance(10)
    cur = await cluster.get(PODS, "p", "default")
    now = rfc3339(cluster.clock.now())
    cur["status"]["containerStatuses"] = [{"name": "a", "containerID": "containerd://two", "restartCount": 1,
                                           "ready": True, "state": {"running": {"startedAt": now}}}]
    await cluster.update_status(PODS, cur)
    await cluster.settle()
    after = src.kubelet_stats("n1")
    assert after is not None
    assert after.pods[0].containers[0].cpu_core_nanoseconds == 0  # the new run has just started
    assert after.pods[0].cpu_core_nanoseconds == 2_000_000_000  # the pod's cgroup kept counting


async def test_no_kubelet_for_failed_or_unknown_nodes_and_its_configuration(cluster: Any) -> None:
    live = ["n1"]
    src = source(cluster, live)
    stats = src.kubelet_stats("n1")
    assert stats is not None and stats.pods == ()
    assert stats.config["maxPods"] == 32 and stats.config["nodeStatusUpdateFrequency"] == "2s"
    assert stats.config["registerWithTaints"] == [{"key": "gpu", "effect": "NoSchedule"}]
    assert src.kubelet_stats("n9") is None
    live.clear()
    assert src.kubelet_stats("n1") is None
    plain = UsageSource(pods=cluster.informer(PODS), services=cluster.informer(SERVICES),
                        endpoints=cluster.informer(ENDPOINTS), node_names=lambda: ["n1"], clock=cluster.clock)
    assert plain.kubelet_stats("n1") is None  # no configuration given: no kubelet to answer
