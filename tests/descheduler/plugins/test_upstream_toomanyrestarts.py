"""Upstream sigs descheduler
pkg/framework/plugins/removepodshavingtoomanyrestarts/toomanyrestarts_test.go,
TestRemovePodsHavingTooManyRestarts ported case by case: one real descheduling cycle of
RemovePodsHavingTooManyRestarts over the in-process API (DefaultEvictor nodeFit and eviction
limits per case), asserting the number of evictions. Pods are upstream's initPods: pod-0..pod-9
on node1, pod-i with 5*i init-container restarts and two containers of 10*i restarts each
(pod-6 DaemonSet, pod-7 local storage, pod-8 mirror: not evictable), plus the bare
CPU-consumer-1/2 pods (150m) on node4/node5.

Harness notes: a real cycle is skipped with fewer than two ready nodes, so one-node cases get an
extra empty node `spare` (nodeFit is off in all of them); the API names container statuses, so
the pods carry containers c0, c1 and init container init0 matching upstream's status-only
entries; upper-case pod names are lower-cased."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from minik3s.api.types import JsonDict

IMAGE = "registry.k8s.io/pause:3.10"


def node(name: str, cpu_m: int = 2000, *, taint: bool = False, unschedulable: bool = False) -> JsonDict:
    rl = {"cpu": f"{cpu_m}m", "memory": "3000", "pods": "10"}
    spec: JsonDict = {}
    if taint:
        spec["taints"] = [{"key": "hardware", "value": "gpu", "effect": "NoSchedule"}]
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}}, "spec": spec,
            "status": {"capacity": dict(rl), "allocatable": dict(rl),
                       "conditions": [{"type": "Ready", "status": "True"}]}}


NODE1, NODE2, NODE3 = node("node1"), node("node2", taint=True), node("node3", unschedulable=True)
NODE4, NODE5 = node("node4", 200), node("node5")


def cs(name: str, restarts: int) -> JsonDict:
    return {"name": name, "image": IMAGE, "imageID": "", "ready": False, "restartCount": restarts, "state": {}}


def init_pods() -> list[JsonDict]:
    pods = []
    for i in range(10):
        p: JsonDict = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i}", "namespace": "default",
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "owner-pod",
                                              "uid": "uid-owner-pod"}]},
            "spec": {"nodeName": "node1",
                     "initContainers": [{"name": "init0", "image": IMAGE}],
                     "containers": [{"name": "c0", "image": IMAGE,
                                     "resources": {"requests": {"cpu": "100m", "memory": "0"}}},
                                    {"name": "c1", "image": IMAGE}]},
            "status": {"initContainerStatuses": [cs("init0", 5 * i)],
                       "containerStatuses": [cs("c0", 10 * i), cs("c1", 10 * i)]}}
        pods.append(p)
    pods[6]["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "DaemonSet", "name": "daemonset-1",
                                               "uid": "uid-daemonset-1"}]
    # upstream's fixture has hostPath and emptyDir in one volume, which the API refuses
    pods[7]["spec"]["volumes"] = [{"name": "sample", "hostPath": {"path": "somePath"}},
                                  {"name": "sample-dir", "emptyDir": {"sizeLimit": "10"}}]
    pods[8]["metadata"]["annotations"] = {
        "kubernetes.io/created-by": '{"kind":"SerializedReference","apiVersion":"v1","reference":{"kind":"Pod"}}',
        "kubernetes.io/config.source": "api", "kubernetes.io/config.mirror": "mirror"}
    return pods


def consumer(name: str, node_name: str) -> JsonDict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name.lower(), "namespace": "default"},
            "spec": {"nodeName": node_name,
                     "containers": [{"name": "c0", "image": IMAGE,
                                     "resources": {"requests": {"cpu": "150m", "memory": "100"}}}]}}


def crash_loop_first_container(pods: list[JsonDict]) -> None:
    for p in pods:
        statuses = (p.get("status") or {}).get("containerStatuses")
        if statuses:
            statuses[0]["state"] = {"waiting": {"reason": "CrashLoopBackOff"}}


def phase(value: str) -> Callable[[list[JsonDict]], None]:
    def apply(pods: list[JsonDict]) -> None:
        for p in pods:
            p.setdefault("status", {})["phase"] = value
    return apply


def init_crash_loop(pods: list[JsonDict]) -> None:
    for p in pods:
        if "initContainers" not in p["spec"]:
            p["spec"]["initContainers"] = [{"name": "init0", "image": IMAGE}]
        p.setdefault("status", {})["initContainerStatuses"] = [
            {**cs("init0", 0), "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]


def args(threshold: int, including_init: bool = False, states: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"podRestartThreshold": threshold, "includingInitContainers": including_init}
    if states is not None:
        out["states"] = states
    return out


def case(description: str, plugin_args: dict[str, Any], nodes: list[JsonDict], expected: int, *,
         max_per_node: int | None = None, max_per_namespace: int | None = None, node_fit: bool = False,
         apply: Callable[[list[JsonDict]], None] | None = None) -> Any:
    return pytest.param(plugin_args, nodes, expected, max_per_node, max_per_namespace, node_fit, apply,
                        id=description)


MPN = "maxPodsToEvictPerNode=3"
CASES = [
    case("All pods have total restarts under threshold, no pod evictions", args(10000, True), [NODE1], 0),
    case("Some pods have total restarts bigger than threshold", args(1, True), [NODE1], 6),
    case("Nine pods have total restarts equals threshold(includingInitContainers=true), 6 pod evictions",
         args(25, True), [NODE1], 6),
    case("Nine pods have total restarts equals threshold(includingInitContainers=false), 5 pod evictions",
         args(25, False), [NODE1], 5),
    case("All pods have total restarts equals threshold(includingInitContainers=true), 6 pod evictions",
         args(20, True), [NODE1], 6),
    case("Nine pods have total restarts equals threshold(includingInitContainers=false), 6 pod evictions",
         args(20, False), [NODE1], 6),
    case("Five pods have total restarts bigger than threshold(includingInitContainers=true), but only 1 pod "
         "eviction", args(5 * 25 + 1, True), [NODE1], 1),
    case("Five pods have total restarts bigger than threshold(includingInitContainers=false), but only 1 pod "
         "eviction", args(5 * 20 + 1, False), [NODE1], 1),
    case(f"All pods have total restarts equals threshold({MPN}), 3 pod evictions", args(1, True), [NODE1], 3,
         max_per_node=3),
    case("All pods have total restarts equals threshold(maxNoOfPodsToEvictPerNamespace=3), 3 pod evictions",
         args(1, True), [NODE1], 3, max_per_namespace=3),
    case(f"All pods have total restarts equals threshold({MPN}) but the only other node is tainted, 0 pod evictions",
         args(1, True), [NODE1, NODE2], 0, max_per_node=3, node_fit=True),
    case(f"All pods have total restarts equals threshold({MPN}) but the only other node is not schedulable, 0 pod "
         "evictions", args(1, True), [NODE1, NODE3], 0, max_per_node=3, node_fit=True),
    case(f"All pods have total restarts equals threshold({MPN}) but the only other node does not have enough CPU, "
         "0 pod evictions", args(1, True), [NODE1, NODE4], 0, max_per_node=3, node_fit=True),
    case(f"All pods have total restarts equals threshold({MPN}) but the only other node has enough CPU, 3 pod "
         "evictions", args(1, True), [NODE1, NODE5], 3, max_per_node=3, node_fit=True),
    case("pods are in CrashLoopBackOff with states=CrashLoopBackOff, 3 pod evictions",
         args(1, False, ["CrashLoopBackOff"]), [NODE1, NODE5], 3, max_per_node=3, node_fit=True,
         apply=crash_loop_first_container),
    case("pods without CrashLoopBackOff with states=CrashLoopBackOff, 0 pod evictions",
         args(1, False, ["CrashLoopBackOff"]), [NODE1, NODE5], 0, max_per_node=3, node_fit=True),
    case("pods running with state=Running, 3 pod evictions", args(1, False, ["Running"]), [NODE1], 3,
         max_per_node=3, apply=phase("Running")),
    case("pods pending with state=Running, 0 pod evictions", args(1, False, ["Running"]), [NODE1], 0,
         max_per_node=3, apply=phase("Pending")),
    case("pods pending with initContainer with states=CrashLoopBackOff threshold(includingInitContainers=true), 3 "
         "pod evictions", args(1, True, ["CrashLoopBackOff"]), [NODE1], 3, max_per_node=3, apply=init_crash_loop),
    case("pods pending with initContainer with states=CrashLoopBackOff threshold(includingInitContainers=false), 0 "
         "pod evictions", args(1, False, ["CrashLoopBackOff"]), [NODE1], 0, max_per_node=3, apply=init_crash_loop),
]


@pytest.mark.parametrize(("plugin_args", "nodes", "expected", "max_per_node", "max_per_namespace", "node_fit",
                          "apply"), CASES)
async def test_remove_pods_having_too_many_restarts(
        cluster: Any, plugin_args: dict[str, Any], nodes: list[JsonDict], expected: int, max_per_node: int | None,
        max_per_namespace: int | None, node_fit: bool, apply: Callable[[list[JsonDict]], None] | None) -> None:
    pods = [*init_pods(), consumer("CPU-consumer-1", "node4"), consumer("CPU-consumer-2", "node5")]
    if apply is not None:
        apply(pods)
    nodes = [copy.deepcopy(n) for n in nodes]
    if len(nodes) < 2:
        nodes.append(node("spare"))
    await cluster.add(*nodes, *pods)
    limits: dict[str, Any] = {}
    if max_per_node is not None:
        limits["maxNoOfPodsToEvictPerNode"] = max_per_node
    if max_per_namespace is not None:
        limits["maxNoOfPodsToEvictPerNamespace"] = max_per_namespace
    pol = cluster.policy(("deschedule", "RemovePodsHavingTooManyRestarts", plugin_args),
                         evictor={"nodeFit": node_fit}, **limits)
    evicted = await cluster.run(pol)
    assert len(evicted) == expected, evicted
