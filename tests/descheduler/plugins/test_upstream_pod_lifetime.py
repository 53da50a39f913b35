"""Upstream sigs descheduler pkg/framework/plugins/podlifetime/pod_lifetime_test.go, TestPodLifeTime
ported case by case: one real descheduling cycle of PodLifeTime over the in-process API
(DefaultEvictor ignorePvcPods and eviction limits per case), asserting the number of evictions.

Upstream's applyPodsFunc mutates the shared p9 / p16 objects, so later cases see the statuses
earlier cases gave them (e.g. "init container ... should not be evicted" runs with p9's
container status ErrImagePull left by the case before). The table below is built the same way:
the mutations are applied in order to shared pods and each case snapshots them.

Harness notes: creation times are set through the fake clock (the API stamps creationTimestamp):
"older" pods (upstream: 2009) are created first, the clock then moves on to make the 605 s /
595 s / new pods; a real cycle is skipped with fewer than two ready nodes, so an empty node
`spare` is added; terminating pods are made with a finalizer and a delete."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from minik3s.api.resources import PODS
from minik3s.api.types import JsonDict

MAX_LIFE = 600
OLD, AGE_605, AGE_595, NEW = "old", "605", "595", "new"
IMAGE = "registry.k8s.io/pause:3.10"


def node(name: str) -> JsonDict:
    rl = {"cpu": "2000m", "memory": "3000", "pods": "10"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}}, "spec": {},
            "status": {"capacity": dict(rl), "allocatable": dict(rl),
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, age: str, *, owned: bool = True, ns: str = "dev", cpu: str = "100m", phase: str = "",
        labels: dict[str, str] | None = None, pvc: bool = False, terminating: bool = False,
        waiting: str = "") -> JsonDict:
    meta: JsonDict = {"name": name, "namespace": ns, "annotations": {"test.minik3s.io/age": age}}
    if owned:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ReplicaSet", "name": "replicaset-1",
                                    "uid": "uid-replicaset-1"}]
    if labels:
        meta["labels"] = labels
    if terminating:
        meta["finalizers"] = ["test.minik3s.io/keep"]
    spec: JsonDict = {"nodeName": "n1", "containers": [{"name": "c0", "image": IMAGE,
                                                        "resources": {"requests": {"cpu": cpu, "memory": "0"}}}]}
    if pvc:
        spec["volumes"] = [{"name": "pvc", "persistentVolumeClaim": {"claimName": "foo"}}]
    status: JsonDict = {}
    if phase:
        status["phase"] = phase
    if waiting:
        status["containerStatuses"] = [waiting_status("c0", waiting)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def waiting_status(name: str, reason: str) -> JsonDict:
    return {"name": name, "image": IMAGE, "imageID": "", "ready": False, "restartCount": 0,
            "state": {"waiting": {"reason": reason}}}


P1, P2 = pod("p1", NEW), pod("p2", OLD)
P3, P4 = pod("p3", NEW), pod("p4", NEW)
P5, P6 = pod("p5", NEW), pod("p6", AGE_605)
P7, P8 = pod("p7", NEW, owned=False), pod("p8", AGE_595, owned=False)
P9, P10 = pod("p9", OLD, phase="Pending"), pod("p10", OLD, phase="Running")
P11 = pod("p11", OLD, pvc=True)
P12, P13 = pod("p12", OLD, labels={"foo": "bar"}), pod("p13", OLD, labels={"foo": "bar1"})
P14, P15 = pod("p14", OLD, terminating=True), pod("p15", OLD, terminating=True)
P16 = pod("p16", OLD, phase="Unknown")


def container_waiting(reason: str) -> Callable[[list[JsonDict]], None]:
    def apply(pods: list[JsonDict]) -> None:
        pods[0]["status"]["containerStatuses"] = [waiting_status("c0", reason)]
    return apply


def init_waiting(reason: str) -> Callable[[list[JsonDict]], None]:
    def apply(pods: list[JsonDict]) -> None:
        pods[0]["spec"]["initContainers"] = [{"name": "init0", "image": IMAGE}]
        pods[0]["status"]["initContainerStatuses"] = [waiting_status("init0", reason)]
    return apply


def ephemeral_waiting(reason: str) -> Callable[[list[JsonDict]], None]:
    def apply(pods: list[JsonDict]) -> None:
        pods[0]["status"]["ephemeralContainerStatuses"] = [waiting_status("debugger", reason)]
    return apply


def status_reason(reason: str) -> Callable[[list[JsonDict]], None]:
    def apply(pods: list[JsonDict]) -> None:
        pods[0]["status"]["reason"] = reason
    return apply


def status_phase(value: str) -> Callable[[list[JsonDict]], None]:
    def apply(pods: list[JsonDict]) -> None:
        pods[0]["status"]["phase"] = value
    return apply


def args(states: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"maxPodLifeTimeSeconds": MAX_LIFE}
    if states is not None:
        out["states"] = states
    out.update(extra)
    return out


# (description, args, pods, expected, extra: ignorePvcPods / limits / apply)
RAW: list[tuple[str, dict[str, Any], list[JsonDict], int, dict[str, Any]]] = [
    ("Two pods in the `dev` Namespace, 1 is new and 1 very is old. 1 should be evicted.", args(), [P1, P2], 1, {}),
    ("Two pods in the `dev` Namespace, 2 are new and 0 are old. 0 should be evicted.", args(), [P3, P4], 0, {}),
    ("Two pods in the `dev` Namespace, 1 created 605 seconds ago. 1 should be evicted.", args(), [P5, P6], 1, {}),
    ("Two pods in the `dev` Namespace, 1 created 595 seconds ago. 0 should be evicted.", args(), [P7, P8], 0, {}),
    ("Two pods, one with ContainerCreating state. 1 should be evicted.", args(["ContainerCreating"]),
     [P9, pod("container-creating-stuck", OLD, ns="default", cpu="0", waiting="ContainerCreating")], 1, {}),
    ("Two pods, one with PodInitializing state. 1 should be evicted.", args(["PodInitializing"]),
     [P9, pod("pod-initializing-stuck", OLD, ns="default", cpu="0", waiting="PodInitializing")], 1, {}),
    ("Two old pods with different states. 1 should be evicted.", args(["Pending"]), [P9, P10], 1, {}),
    ("does not evict pvc pods with ignorePvcPods set to true", args(), [P11], 0, {"ignorePvcPods": True}),
    ("evicts pvc pods with ignorePvcPods set to false (or unset)", args(), [P11], 1, {}),
    ("No pod to evicted since all pod terminating", args(labelSelector={"matchLabels": {"foo": "bar"}}), [P12, P13],
     1, {}),
    ("No pod should be evicted since pod terminating", args(labelSelector={"matchLabels": {"foo": "bar"}}),
     [P14, P15], 0, {}),
    ("2 Oldest pods should be evicted when maxPodsToEvictPerNode and maxPodsToEvictPerNamespace are not set",
     args(), [P1, P2, P9], 2, {}),
    ("1 Oldest pod should be evicted when maxPodsToEvictPerNamespace is set to 1", args(), [P1, P2, P9], 1,
     {"maxNoOfPodsToEvictPerNamespace": 1}),
    ("1 Oldest pod should be evicted when maxPodsToEvictTotal is set to 1", args(), [P1, P2, P9], 1,
     {"maxNoOfPodsToEvictPerNamespace": 2, "maxNoOfPodsToEvictTotal": 1}),
    ("1 Oldest pod should be evicted when maxPodsToEvictPerNode is set to 1", args(), [P1, P2, P9], 1,
     {"maxNoOfPodsToEvictPerNode": 1}),
    ("1 pod with container status ImagePullBackOff should be evicted", args(["ImagePullBackOff"]), [P9], 1,
     {"apply": container_waiting("ImagePullBackOff")}),
    ("1 pod with container status CrashLoopBackOff should be evicted", args(["CrashLoopBackOff"]), [P9], 1,
     {"apply": container_waiting("CrashLoopBackOff")}),
    ("1 pod with container status CreateContainerConfigError should be evicted", args(["CreateContainerConfigError"]),
     [P9], 1, {"apply": container_waiting("CreateContainerConfigError")}),
    ("1 pod with container status ErrImagePull should be evicted", args(["ErrImagePull"]), [P9], 1,
     {"apply": container_waiting("ErrImagePull")}),
    ("1 pod with init container status CreateContainerError should not be evicted without includingInitContainers",
     args(["CreateContainerError"]), [P9], 0, {"apply": init_waiting("CreateContainerError")}),
    ("1 pod with init container status CreateContainerError should be evicted with includingInitContainers",
     args(["CreateContainerError"], includingInitContainers=True), [P9], 1,
     {"apply": init_waiting("CreateContainerError")}),
    # upstream sets the *init* container statuses in this case too
    ("1 pod with ephemeral container status CreateContainerError should not be evicted without "
     "includingEphemeralContainers", args(["CreateContainerError"]), [P9], 0,
     {"apply": init_waiting("CreateContainerError")}),
    ("1 pod with ephemeral container status CreateContainerError should be evicted with includingEphemeralContainers",
     args(["CreateContainerError"], includingEphemeralContainers=True), [P9], 1,
     {"apply": ephemeral_waiting("CreateContainerError")}),
    ("1 pod with container status CreateContainerError should be evicted", args(["CreateContainerError"]), [P9], 1,
     {"apply": container_waiting("CreateContainerError")}),
    ("1 pod with container status InvalidImageName should be evicted", args(["InvalidImageName"]), [P9], 1,
     {"apply": container_waiting("InvalidImageName")}),
    ("1 pod with pod status reason NodeLost should be evicted", args(["NodeLost"]), [P9], 1,
     {"apply": status_reason("NodeLost")}),
    ("1 pod with pod status reason NodeAffinity should be evicted", args(["NodeAffinity"]), [P9], 1,
     {"apply": status_reason("NodeAffinity")}),
    ("1 pod with pod status reason Shutdown should be evicted", args(["Shutdown"]), [P9], 1,
     {"apply": status_reason("Shutdown")}),
    ("1 pod with pod status reason UnexpectedAdmissionError should be evicted", args(["UnexpectedAdmissionError"]),
     [P9], 1, {"apply": status_reason("UnexpectedAdmissionError")}),
    ("1 pod with pod status phase v1.PodSucceeded should be evicted", args(["Succeeded"]), [P16], 1,
     {"apply": status_phase("Succeeded")}),
    ("1 pod with pod status phase v1.PodUnknown should be evicted (Failed)", args(["Failed"]), [P16], 1,
     {"apply": status_phase("Failed")}),
    ("1 pod with pod status phase v1.PodUnknown should be evicted", args(["Unknown"]), [P16], 1,
     {"apply": status_phase("Unknown")}),
    ("1 pod without ImagePullBackOff States should be ignored", args(["ContainerCreating"]), [P9], 0,
     {"apply": container_waiting("ImagePullBackOff")}),
]


def _snapshot() -> list[Any]:
    out = []
    for description, plugin_args, pods, expected, extra in RAW:
        apply = extra.get("apply")
        if apply is not None:
            apply(pods)  # mutates the shared pods, as upstream's applyPodsFunc
        limits = {k: v for k, v in extra.items() if k.startswith("maxNoOf")}
        out.append(pytest.param(plugin_args, copy.deepcopy(pods), expected, bool(extra.get("ignorePvcPods")),
                                limits, id=description))
    return out


CASES = _snapshot()
ORDER = (OLD, AGE_605, AGE_595, NEW)
STEP = {OLD: 1_000_000, AGE_605: 10, AGE_595: 595}  # clock moves after each age group


@pytest.mark.parametrize(("plugin_args", "pods", "expected", "ignore_pvc", "limits"), CASES)
async def test_pod_life_time(cluster: Any, plugin_args: dict[str, Any], pods: list[JsonDict], expected: int,
                             ignore_pvc: bool, limits: dict[str, int]) -> None:
    await cluster.add(node("n1"), node("spare"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dev"}})
    for age in ORDER:
        group = [p for p in pods if p["metadata"]["annotations"]["test.minik3s.io/age"] == age]
        await cluster.add(*group)
        cluster.clock.advance(STEP.get(age, 0))
    for p in pods:
        if p["metadata"].get("finalizers"):
            await cluster.client.delete(PODS, p["metadata"]["name"], p["metadata"]["namespace"])
    pol = cluster.policy(("deschedule", "PodLifeTime", plugin_args), evictor={"ignorePvcPods": ignore_pvc}, **limits)
    evicted = await cluster.run(pol)
    assert len(evicted) == expected, evicted
