"""Upstream sigs descheduler pkg/framework/plugins/removefailedpods/failedpods_test.go,
TestRemoveFailedPods ported case by case: one real descheduling cycle of RemoveFailedPods over
the in-process API (DefaultEvictor nodeFit per case), asserting the number of evictions. Pods are
upstream's buildTestPod: 1m cpu / 1 byte requested, ReplicaSet-owned, created now, the status
from newPodStatus (a container state makes the pod Failed).

Harness notes: a real cycle is skipped with fewer than two ready nodes, so one-node cases get an
extra empty *unschedulable* node `spare` (so that a nodeFit check still finds no other node, as
upstream's with the single node); upstream's status-only init container gets a matching init
container in the spec (the API names container statuses); terminating pods are made with a
finalizer and a delete."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.api.resources import PODS
from minik3s.api.types import JsonDict

ONE_HOUR = 3600


def node(name: str, cpu_m: int = 2000, mem: int = 3000, pods: int = 10, *, unschedulable: bool = False) -> JsonDict:
    rl = {"cpu": f"{cpu_m}m", "memory": str(mem), "pods": str(pods)}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}},
            "spec": {"unschedulable": True} if unschedulable else {},
            "status": {"capacity": dict(rl), "allocatable": dict(rl),
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def state(kind: str, reason: str) -> JsonDict:
    return {kind: {"reason": reason, **({"exitCode": 0} if kind == "terminated" else {})}}


def pod(name: str, node_name: str, *, reason: str = "", phase: str = "", init: JsonDict | None = None,
        container: JsonDict | None = None, terminating: bool = False) -> JsonDict:
    """upstream buildTestPod(newPodStatus(reason, phase, initContainerState, containerState))."""
    status: JsonDict = {}
    if reason:
        status["reason"] = reason
    if phase:
        status["phase"] = phase
    spec: JsonDict = {"nodeName": node_name,
                      "containers": [{"name": "c0", "image": "registry.k8s.io/pause:3.10",
                                      "resources": {"requests": {"cpu": "1m", "memory": "1"}}}]}
    if init is not None:
        spec["initContainers"] = [{"name": "init0", "image": "registry.k8s.io/pause:3.10"}]
        status["initContainerStatuses"] = [{"name": "init0", "image": "registry.k8s.io/pause:3.10", "imageID": "",
                                            "ready": False, "restartCount": 0, "state": init}]
        status["phase"] = "Failed"
    if container is not None:
        status["containerStatuses"] = [{"name": "c0", "image": "registry.k8s.io/pause:3.10", "imageID": "",
                                        "ready": False, "restartCount": 0, "state": container}]
        status["phase"] = "Failed"
    meta: JsonDict = {"name": name, "namespace": "default",
                      "ownerReferences": [{"apiVersion": "v1", "kind": "ReplicaSet", "name": "replicaset-1",
                                           "uid": "uid-replicaset-1"}]}
    if terminating:
        meta["finalizers"] = ["test.minik3s.io/keep"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def args(including_init: bool = False, reasons: list[str] | None = None, exclude_kinds: list[str] | None = None,
         min_age: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"includingInitContainers": including_init}
    if reasons is not None:
        out["reasons"] = reasons
    if exclude_kinds is not None:
        out["excludeOwnerKinds"] = exclude_kinds
    if min_age is not None:
        out["minPodLifetimeSeconds"] = min_age
    return out


N1 = [node("node1")]
TERM_NODE_AFFINITY = state("terminated", "NodeAffinity")
TERM_CONFIG_ERROR = state("terminated", "CreateContainerConfigError")
WAIT_CONFIG_ERROR = state("waiting", "CreateContainerConfigError")

CASES = [
    pytest.param({}, N1, [], 0, False, id="default empty args, 0 failures, 0 evictions"),
    pytest.param(args(), N1, [], 0, False, id="0 failures, 0 evictions"),
    pytest.param(args(), N1, [pod("p1", "node1", container=TERM_NODE_AFFINITY)], 1, False,
                 id="1 container terminated with reason NodeAffinity, 1 eviction"),
    pytest.param(args(True), N1, [pod("p1", "node1", init=TERM_NODE_AFFINITY)], 1, False,
                 id="1 init container terminated with reason NodeAffinity, 1 eviction"),
    pytest.param(args(True), N1, [pod("p1", "node1", init=WAIT_CONFIG_ERROR)], 1, False,
                 id="1 init container waiting with reason CreateContainerConfigError, 1 eviction"),
    pytest.param(args(True), [node("node1"), node("node2")],
                 [pod("p1", "node1", init=TERM_CONFIG_ERROR), pod("p2", "node2", init=TERM_CONFIG_ERROR)], 2, False,
                 id="2 init container waiting with reason CreateContainerConfigError, 2 nodes, 2 evictions"),
    pytest.param(args(False, ["CreateContainerConfigError"]), N1, [pod("p1", "node1", container=TERM_CONFIG_ERROR)],
                 1, False, id="include reason=CreateContainerConfigError, 1 container terminated with reason "
                              "CreateContainerConfigError, 1 eviction"),
    pytest.param(args(False, ["CreateContainerConfigError", "NodeAffinity"]), N1,
                 [pod("p1", "node1", container=TERM_CONFIG_ERROR)], 1, False,
                 id="include reason=CreateContainerConfigError+NodeAffinity, 1 container terminated with reason "
                    "CreateContainerConfigError, 1 eviction"),
    pytest.param(args(False, ["CreateContainerConfigError"]), N1, [pod("p1", "node1", container=TERM_NODE_AFFINITY)],
                 0, False, id="include reason=CreateContainerConfigError, 1 container terminated with reason "
                              "NodeAffinity, 0 eviction"),
    pytest.param(args(False, ["CreateContainerConfigError"]), N1, [pod("p1", "node1", init=WAIT_CONFIG_ERROR)], 0,
                 False, id="include init container=false, 1 init container waiting with reason "
                           "CreateContainerConfigError, 0 eviction"),
    pytest.param(args(False, None, None, ONE_HOUR), N1, [pod("p1", "node1", container=TERM_NODE_AFFINITY)], 0, False,
                 id="lifetime 1 hour, 1 container terminated with reason NodeAffinity, 0 eviction"),
    pytest.param(args(), [node("node1"), node("node2", 2000, 2000, 10, unschedulable=True)],
                 [pod("p1", "node1", container=TERM_NODE_AFFINITY)], 0, True,
                 id="nodeFit=true, 1 unschedulable node, 1 container terminated with reason NodeAffinity, 0 eviction"),
    pytest.param(args(False, ["CreateContainerConfigError"]), [node("node1", 1, 1, 10), node("node2", 0, 0, 10)],
                 [pod("p1", "node1", container=TERM_CONFIG_ERROR)], 0, True,
                 id="nodeFit=true, only available node does not have enough resources, 1 container terminated with "
                    "reason CreateContainerConfigError, 0 eviction"),
    pytest.param(args(True, None, ["ReplicaSet"]), N1, [pod("p1", "node1", init=TERM_NODE_AFFINITY)], 0, False,
                 id="excluded owner kind=ReplicaSet, 1 init container terminated with owner kind=ReplicaSet, "
                    "0 eviction"),
    pytest.param(args(True, None, ["DaemonSet"]), N1, [pod("p1", "node1", init=TERM_NODE_AFFINITY)], 1, False,
                 id="excluded owner kind=DaemonSet, 1 init container terminated with owner kind=ReplicaSet, "
                    "1 eviction"),
    pytest.param(args(True, None, ["DaemonSet"]), N1,
                 [pod("p1", "node1", init=TERM_NODE_AFFINITY, terminating=True)], 0, False,
                 id="excluded owner kind=DaemonSet, 1 init container terminated with owner kind=ReplicaSet, 1 pod in "
                    "termination; nothing should be moved"),
    pytest.param(args(), N1, [pod("p1", "node1", reason="Shutdown", phase="Failed")], 0, True,
                 id="1 container terminated with reason ShutDown, 0 evictions"),
    pytest.param(args(False, ["Shutdown"]), N1,
                 [pod("p1", "node1", reason="Shutdown", phase="Failed"),
                  pod("p2", "node1", reason="Shutdown", phase="Failed")], 2, False,
                 id="include reason=Shutdown, 2 containers terminated with reason ShutDown, 2 evictions"),
]


@pytest.mark.parametrize(("plugin_args", "nodes", "pods", "expected", "node_fit"), CASES)
async def test_remove_failed_pods(cluster: Any, plugin_args: dict[str, Any], nodes: list[JsonDict],
                                  pods: list[JsonDict], expected: int, node_fit: bool) -> None:
    if len(nodes) < 2:
        nodes = [*nodes, node("spare", unschedulable=True)]
    await cluster.add(*nodes, *pods)
    for p in pods:
        if p["metadata"].get("finalizers"):
            await cluster.client.delete(PODS, p["metadata"]["name"], "default")
    pol = cluster.policy(("deschedule", "RemoveFailedPods", plugin_args or None), evictor={"nodeFit": node_fit})
    evicted = await cluster.run(pol)
    assert len(evicted) == expected, evicted
