"""Upstream's HPA tables, ported: pkg/controller/podautoscaler/replica_calculator_test.go and the
table-shaped parts of horizontal_test.go (Kubernetes v1.33 line; the stored copies read were
the v1.30+ files with `makePodMetricLevels`, `TestCalculatePodRequests` with sidecars and the
two-direction scale limits).

How they are driven here:
  * the replica calculator (`calc_utilization_replicas`, `calc_average_value_replicas`,
    `group_pods`, `pod_requests`) gets pods stored through the real in-process API and read back,
    and samples built from `PodUsage` rows by the controller's own `samples_for` (upstream's
    fake metrics client: two containers per pod, timestamp zero, one-minute window). The
    testing periods are upstream's: cpu initialization 2 min, initial readiness delay 10 s.
  * the normalization tables call the module's functions (`limit_legacy`,
    `limit_with_behavior`, `scale_up_limit`, `scale_down_limit`, `stabilize_recommendation*`,
    `store_scale_event`, `replicas_change_in_period`) with a monotonic `now`.
  * horizontal_test.go's controller cases run `HorizontalPodAutoscalerController.sync` against
    the real API (a ReplicationController target through its `/scale`, pods in the store, a
    stub metrics.k8s.io source reporting each pod's level split over two containers).

Not ported (no observable counterpart here): Object / External / per-pod Object and External
metrics (minik3s serves no custom.metrics.k8s.io nor external.metrics.k8s.io: the controller
reports such metrics invalid), CheddarCheese metric types and minReplicas 0 (the API's
validation rejects them, upstream's fake client bypasses it), a failing metrics API, a scale
without or with an unparsable selector (every built-in scale target reports one), the monitor
labels, TestMultipleHPAs (1000-HPA throughput).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest

from minik3s.api.errors import InternalError
from minik3s.api.metrics import ContainerUsage, NodeUsage, PodUsage
from minik3s.api.resources import DEPLOYMENTS, EVENTS, HPAS, PODS, REPLICASETS, REPLICATIONCONTROLLERS
from minik3s.controllers.hpa import (
    ZERO_TIME,
    HorizontalPodAutoscalerController,
    HPAState,
    MetricError,
    Recommendation,
    Sample,
    ScaleEvent,
    calc_average_value_replicas,
    calc_utilization_replicas,
    group_pods,
    limit_legacy,
    limit_with_behavior,
    pod_requests,
    replicas_change_in_period,
    samples_for,
    scale_down_limit,
    scale_up_limit,
    stabilize_recommendation,
    stabilize_recommendation_with_behaviors,
    store_scale_event,
)
from minik3s.testing.builders import make_pod
from minik3s.utils.clock import rfc3339

NS = "default"
ZERO = "0001-01-01T00:00:00Z"  # Go's zero metav1.Time: a start time the test case did not set
TOLERANCE = 0.1  # defaultTestingTolerance
CPU_INIT = 120.0  # defaultTestingCPUInitializationPeriod
READY_DELAY = 10.0  # defaultTestingDelayOfInitialReadinessStatus
CALC = {"tolerance": TOLERANCE, "cpu_initialization_period": CPU_INIT, "initial_readiness_delay": READY_DELAY}


def start_time(c: Any, kind: str | None) -> str:
    """hotCPUCreationTime = now, coolCPUCreationTime = now - 3 min, unset = zero."""
    if kind == "hot":
        return rfc3339(c.clock.now())
    if kind == "cool":
        return rfc3339(c.clock.now() - timedelta(minutes=3))
    return ZERO


async def store_pod(c: Any, name: str, *, labels: dict[str, str], containers: list[tuple[str, str | None]],
                    status: dict[str, Any], deleting: bool = False, init: list[dict[str, Any]] | None = None
                    ) -> None:
    """Create a pod through the API, give it `status`, and (with a finalizer holding it) delete it
    when `deleting`, so it carries a deletionTimestamp."""
    b = make_pod(name).labels(labels)
    for cname, cpu in containers:
        b = b.container(name=cname, requests={"cpu": cpu} if cpu is not None else None)
    obj = b.obj()
    if init:
        obj["spec"]["initContainers"] = init
    if deleting:
        obj["metadata"]["finalizers"] = ["test.minik3s.io/hold"]
    await c.create(PODS, obj, NS)
    cur = await c.get(PODS, name, NS)
    cur["status"] = status
    await c.update_status(PODS, cur)
    if deleting:
        await c.delete(PODS, name, NS)


async def listed_pods(c: Any) -> list[dict[str, Any]]:
    return list((await c.list(PODS, NS))["items"])


def pod_levels(*levels: int) -> list[list[int]]:
    """makePodMetricLevels: every container of the pod reports the level."""
    return [[v, v] for v in levels]


def pod_usage(levels: list[list[int]], *, names: list[str] | None = None, timestamp: datetime = ZERO_TIME,
              window: float = 60.0) -> list[PodUsage]:
    out = []
    for i, lv in enumerate(levels):
        name = names[i] if names and i < len(names) else f"test-pod-{i}"
        containers = tuple(ContainerUsage(f"container{j + 1}", v, 0) for j, v in enumerate(lv))
        out.append(PodUsage(NS, name, containers, timestamp, window))
    return out


# ------------------------------------------------------------------ replica_calculator_test.go: resource metrics


@dataclass
class ResourceCase:
    current: int
    requests: list[str]
    levels: list[list[int]]
    target: int
    replicas: int = 0
    utilization: int = 0
    value: int = 0
    readiness: list[str] | None = None
    start: list[str] | None = None
    phases: list[str] | None = None
    deleting: list[bool] | None = None
    container: str | None = None
    pod_names: list[str] | None = None
    error: str | None = None


T, F = "True", "False"
R, P, FAILED = "Running", "Pending", "Failed"
ONE = "1.0"
N = 2  # numContainersPerPod

RESOURCE_CASES: dict[str, ResourceCase] = {
    "TestReplicaCalcDisjointResourcesMetrics": ResourceCase(
        1, [ONE], pod_levels(100), 100, pod_names=["an-older-pod-name"], error="no metrics returned matched known pods"),
    "TestReplicaCalcScaleUp": ResourceCase(3, [ONE] * 3, pod_levels(300, 500, 700), 30, 5, 50, N * 500),
    "TestReplicaCalcContainerScaleUp": ResourceCase(
        3, [ONE] * 3, [[1000, 300], [1000, 500], [1000, 700]], 30, 5, 50, 500, container="container2"),
    "TestReplicaCalcScaleUpUnreadyLessScale": ResourceCase(
        3, [ONE] * 3, pod_levels(300, 500, 700), 30, 4, 60, N * 600, readiness=[F, T, T]),
    "TestReplicaCalcScaleUpContainerHotCpuLessScale": ResourceCase(
        3, [ONE] * 3, [[0, 300], [0, 500], [0, 700]], 30, 4, 60, 600, start=["hot", "cool", "cool"],
        container="container2"),
    "TestReplicaCalcScaleUpHotCpuLessScale": ResourceCase(
        3, [ONE] * 3, pod_levels(300, 500, 700), 30, 4, 60, N * 600, start=["hot", "cool", "cool"]),
    "TestReplicaCalcScaleUpUnreadyNoScale": ResourceCase(
        3, [ONE] * 3, pod_levels(400, 500, 700), 30, 3, 40, N * 400, readiness=[T, F, F]),
    "TestReplicaCalcScaleHotCpuNoScale": ResourceCase(
        3, [ONE] * 3, pod_levels(400, 500, 700), 30, 3, 40, N * 400, readiness=[T, F, F],
        start=["cool", "hot", "hot"]),
    "TestReplicaCalcScaleUpIgnoresFailedPods": ResourceCase(
        2, [ONE] * 4, pod_levels(500, 700), 30, 4, 60, N * 600, readiness=[T, T, F, F], phases=[R, R, FAILED, FAILED]),
    "TestReplicaCalcMissingContainerMetricScaleUpIgnoresFailedPods": ResourceCase(
        2, [ONE] * 4, [[1000, 500], [9000, 700], [1000], [9000]], 30, 4, 60, 600, readiness=[T, T, F, F],
        phases=[R, R, FAILED, FAILED], container="container2"),
    "TestReplicaCalcScaleUpContainerIgnoresFailedPods": ResourceCase(
        2, [ONE] * 4, [[1000, 500], [9000, 700]], 30, 4, 60, 600, readiness=[T, T, F, F],
        phases=[R, R, FAILED, FAILED], container="container2"),
    "TestReplicaCalcScaleUpIgnoresDeletionPods": ResourceCase(
        2, [ONE] * 4, pod_levels(500, 700), 30, 4, 60, N * 600, readiness=[T, T, F, F], phases=[R] * 4,
        deleting=[False, False, True, True]),
    "TestReplicaCalcScaleUpContainerIgnoresDeletionPods": ResourceCase(
        2, [ONE] * 4, pod_levels(500, 700), 30, 4, 60, 600, readiness=[T, T, F, F], phases=[R] * 4,
        deleting=[False, False, True, True], container="container1"),
    "TestReplicaCalcScaleDown": ResourceCase(5, [ONE] * 5, pod_levels(100, 300, 500, 250, 250), 50, 3, 28, N * 280),
    "TestReplicaCalcContainerScaleDown": ResourceCase(
        5, [ONE] * 5, [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], 50, 3, 28, 280,
        container="container2"),
    "TestReplicaCalcScaleDownExcludeUnreadyPods": ResourceCase(
        5, [ONE] * 5, pod_levels(100, 300, 500, 250, 250), 50, 2, 30, N * 300, readiness=[T, T, T, F, F]),
    "TestReplicaCalcScaleDownContainerExcludeUnreadyPods": ResourceCase(
        5, [ONE] * 5, [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], 50, 2, 30, 300,
        readiness=[T, T, T, F, F], container="container2"),
    "TestReplicaCalcScaleDownExcludeUnscheduledPods": ResourceCase(
        5, [ONE] * 5, pod_levels(100), 50, 1, 10, N * 100, readiness=[T, F, F, F, F], phases=[R, P, P, P, P]),
    "TestReplicaCalcScaleDownContainerExcludeUnscheduledPods": ResourceCase(
        5, [ONE] * 5, [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], 50, 1, 10, 100,
        readiness=[T, F, F, F, F], phases=[R, P, P, P, P], container="container2"),
    "TestReplicaCalcScaleDownIgnoreHotCpuPods": ResourceCase(
        5, [ONE] * 5, pod_levels(100, 300, 500, 250, 250), 50, 2, 30, N * 300,
        start=["cool", "cool", "cool", "hot", "hot"]),
    "TestReplicaCalcScaleDownContainerIgnoreHotCpuPods": ResourceCase(
        5, [ONE] * 5, [[1000, 100], [1000, 300], [1000, 500], [1000, 1000], [1000, 1000]], 50, 2, 30, 300,
        start=["cool", "cool", "cool", "hot", "hot"], container="container2"),
    "TestReplicaCalcScaleDownIgnoresFailedPods": ResourceCase(
        5, [ONE] * 7, pod_levels(100, 300, 500, 250, 250), 50, 3, 28, N * 280, readiness=[T] * 5 + [F, F],
        phases=[R] * 5 + [FAILED, FAILED]),
    "TestReplicaCalcScaleDownContainerIgnoresFailedPods": ResourceCase(
        5, [ONE] * 7, [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], 50, 3, 28, 280,
        readiness=[T] * 5 + [F, F], phases=[R] * 5 + [FAILED, FAILED], container="container2"),
    "TestReplicaCalcScaleDownIgnoresDeletionPods": ResourceCase(
        5, [ONE] * 7, pod_levels(100, 300, 500, 250, 250), 50, 3, 28, N * 280, readiness=[T] * 5 + [F, F],
        phases=[R] * 7, deleting=[False] * 5 + [True, True]),
    "TestReplicaCalcScaleDownIgnoresDeletionPods_StillRunning": ResourceCase(
        5, [ONE] * 7, [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]], 50, 3, 28, 280,
        readiness=[T] * 5 + [F, F], phases=[R] * 7, deleting=[False] * 5 + [True, True], container="container2"),
    "TestReplicaCalcTolerance": ResourceCase(
        3, ["0.9", "1.0", "1.1"], pod_levels(1010, 1030, 1020), 100, 3, 102, N * 1020),
    "TestReplicaCalcSuperfluousMetrics": ResourceCase(
        4, [ONE] * 4, pod_levels(4000, 9500, 3000, 7000, 3200, 2000), 100, 24, 587, N * 5875),
    "TestReplicaCalcMissingMetrics": ResourceCase(4, [ONE] * 4, pod_levels(400, 95), 100, 3, 24, 495),
    "TestReplicaCalcEmptyMetrics": ResourceCase(
        4, [ONE] * 3, pod_levels(), 100,
        error="unable to get metrics for resource cpu: no metrics returned from resource metrics API"),
    "TestReplicaCalcEmptyCPURequest": ResourceCase(1, [], pod_levels(200), 100, error="missing request for"),
    "TestReplicaCalcMissingMetricsNoChangeEq": ResourceCase(2, [ONE] * 2, pod_levels(1000), 100, 2, 100, N * 1000),
    "TestReplicaCalcMissingMetricsNoChangeGt": ResourceCase(2, [ONE] * 2, pod_levels(1900), 100, 2, 190, N * 1900),
    "TestReplicaCalcMissingMetricsNoChangeLt": ResourceCase(2, [ONE] * 2, pod_levels(600), 100, 2, 60, N * 600),
    "TestReplicaCalcMissingMetricsUnreadyChange": ResourceCase(
        3, [ONE] * 3, pod_levels(100, 450), 50, 3, 45, N * 450, readiness=[F, T, T]),
    "TestReplicaCalcMissingMetricsHotCpuNoChange": ResourceCase(
        3, [ONE] * 3, pod_levels(100, 450), 50, 3, 45, N * 450, start=["hot", "cool", "cool"]),
    "TestReplicaCalcMissingMetricsUnreadyScaleUp": ResourceCase(
        3, [ONE] * 3, pod_levels(100, 2000), 50, 4, 200, N * 2000, readiness=[F, T, T]),
    "TestReplicaCalcMissingMetricsHotCpuScaleUp": ResourceCase(
        3, [ONE] * 3, pod_levels(100, 2000), 50, 4, 200, N * 2000, readiness=[F, T, T],
        start=["hot", "cool", "cool"]),
    "TestReplicaCalcMissingMetricsUnreadyScaleDown": ResourceCase(
        4, [ONE] * 4, pod_levels(100, 100, 100), 50, 3, 10, N * 100, readiness=[F, T, T, T]),
    "TestReplicaCalcMissingMetricsScaleDownTargetOver100": ResourceCase(
        4, ["1.0", "1.0", "2.0", "2.0"], pod_levels(200, 100, 100), 300, 2, 6, N * 100, readiness=[F, T, T, T]),
    "TestReplicaCalcDuringRollingUpdateWithMaxSurge": ResourceCase(
        2, [ONE] * 3, pod_levels(100, 100), 50, 2, 10, N * 100, phases=[R, R, R]),
}


def _computed_tolerance_cases() -> dict[str, ResourceCase]:
    """TestReplicaCalcComputedToleranceAlgImplementation: a target just past the tolerance scales
    down, one just inside it does not."""
    start_pods = 10
    used = start_pods * 150
    requested = 2 * used
    requested_to_used = float(requested // used)
    per_pod = requested // start_pods
    reqs = [f"{per_pod + d}m" for d in (100, -100, 10, -10, 2, -2, 1, -1, 0, 0)]
    levels = pod_levels(*[used // 10] * 10)
    target = abs(1 / (requested_to_used * (1 - TOLERANCE))) + 0.01
    final_target = int(target * 100)
    used_ratio = used / (requested * target)
    final_pods = math.ceil(used_ratio * start_pods)
    util = used * 100 // requested
    inside = int((abs(1 / (requested_to_used * (1 - TOLERANCE))) + 0.004) * 100)
    return {
        "TestReplicaCalcComputedToleranceAlgImplementation/scale": ResourceCase(
            start_pods, reqs, levels, final_target, final_pods, util, N * used // 10),
        "TestReplicaCalcComputedToleranceAlgImplementation/within-tolerance": ResourceCase(
            start_pods, reqs, levels, inside, start_pods, util, N * used // 10),
    }


RESOURCE_CASES.update(_computed_tolerance_cases())


async def store_calc_pods(c: Any, tc: ResourceCase) -> list[dict[str, Any]]:
    """prepareTestClientSet: max(currentReplicas, len(podPhase)) pods, two containers each
    requesting requests[i] (none past the list), Ready condition without a transition time."""
    count = max(tc.current, len(tc.phases or ()))
    for i in range(count):
        req = tc.requests[i] if i < len(tc.requests) else None
        status = {"phase": tc.phases[i] if tc.phases else R,
                  "startTime": start_time(c, tc.start[i] if tc.start else None),
                  "conditions": [{"type": "Ready",
                                  "status": tc.readiness[i] if tc.readiness and i < len(tc.readiness) else T}]}
        await store_pod(c, f"test-pod-{i}", labels={"name": "test-pod"},
                        containers=[("container1", req), ("container2", req)], status=status,
                        deleting=bool(tc.deleting and tc.deleting[i]))
    return await listed_pods(c)


@pytest.mark.parametrize("name", list(RESOURCE_CASES))
async def test_replica_calc_resource(real_api: Any, name: str) -> None:
    tc = RESOURCE_CASES[name]
    pods = await store_calc_pods(real_api, tc)
    samples = samples_for(pod_usage(tc.levels, names=tc.pod_names), "cpu", tc.container)
    now = real_api.clock.now()
    if tc.error is not None:
        with pytest.raises(MetricError) as err:
            calc_utilization_replicas(tc.current, tc.target, pods, samples, "cpu", tc.container, now, **CALC)
        assert tc.error in str(err.value)
        return
    p = calc_utilization_replicas(tc.current, tc.target, pods, samples, "cpu", tc.container, now, **CALC)
    assert (p.replicas, p.utilization, p.raw_average) == (tc.replicas, tc.utilization, tc.value)


# ------------------------------------------------------------------ replica_calculator_test.go: pods metrics


@dataclass
class PodsMetricCase:
    current: int
    levels: list[int]
    target: int
    replicas: int
    usage: int
    readiness: list[str] | None = None
    start: list[str] | None = None
    phases: list[str] | None = None


PODS_METRIC_CASES: dict[str, PodsMetricCase] = {
    "TestReplicaCalcScaleUpCM": PodsMetricCase(3, [20000, 10000, 30000], 15000, 4, 20000),
    "TestReplicaCalcScaleUpCMUnreadyHotCpuNoLessScale": PodsMetricCase(
        3, [50000, 10000, 30000], 15000, 6, 30000, readiness=[T, T, F], start=["cool", "cool", "hot"]),
    "TestReplicaCalcScaleUpCMUnreadyHotCpuScaleWouldScaleDown": PodsMetricCase(
        3, [50000, 15000, 30000], 15000, 7, 31666, readiness=[F, T, F], start=["hot", "cool", "hot"]),
    "TestReplicaCalcScaleUpCMExternal": PodsMetricCase(1, [8600], 4400, 2, 8600),
    "TestReplicaCalcScaleUpCMExternalNoLabels": PodsMetricCase(1, [8600], 4400, 2, 8600),
    "TestReplicaCalcScaleDownCM": PodsMetricCase(5, [12000] * 5, 20000, 3, 12000),
    "TestReplicaCalcToleranceCM": PodsMetricCase(3, [20000, 21000, 21000], 20000, 3, 20666),
    "TestPlainMetricReplicaCalcMissingMetricsNoChangeEq": PodsMetricCase(5, [20000, 19000, 21000], 20000, 5, 20000),
    "TestReplicaCalcDuringRollingUpdateWithMaxSurgeCM": PodsMetricCase(
        2, [10000, 10000], 17000, 2, 10000, phases=[R, R, R]),
}


@pytest.mark.parametrize("name", list(PODS_METRIC_CASES))
async def test_replica_calc_pods_metric(real_api: Any, name: str) -> None:
    """GetMetricReplicas -> calcPlainMetricReplicas: the pods metric "qps" (no cpu readiness rules)."""
    tc = PODS_METRIC_CASES[name]
    count = max(tc.current, len(tc.phases or ()))
    for i in range(count):
        status = {"phase": tc.phases[i] if tc.phases else R,
                  "startTime": start_time(real_api, tc.start[i] if tc.start else None),
                  "conditions": [{"type": "Ready",
                                  "status": tc.readiness[i] if tc.readiness and i < len(tc.readiness) else T}]}
        await store_pod(real_api, f"test-pod-{i}", labels={"name": "test-pod"},
                        containers=[("container1", None), ("container2", None)], status=status)
    pods = await listed_pods(real_api)
    samples = {f"test-pod-{i}": Sample(v, ZERO_TIME, 60.0) for i, v in enumerate(tc.levels)}
    p = calc_average_value_replicas(tc.current, tc.target, pods, samples, "qps", real_api.clock.now(), **CALC)
    assert (p.replicas, p.raw_average) == (tc.replicas, tc.usage)


OBJECT_EXTERNAL_CASES = [
    "TestReplicaCalcScaleUpCMObject", "TestReplicaCalcScaleUpCMPerPodObject",
    "TestReplicaCalcScaleUpCMObjectIgnoresUnreadyPods", "TestReplicaCalcScaleUpCMExternalIgnoresUnreadyPods",
    "TestReplicaCalcScaleUpPerPodCMExternal", "TestReplicaCalcScaleDownPerPodCMObject",
    "TestReplicaCalcScaleDownCMObject", "TestReplicaCalcScaleDownCMExternal", "TestReplicaCalcScaleDownPerPodCMExternal",
    "TestReplicaCalcToleranceCMObject", "TestReplicaCalcTolerancePerPodCMObject", "TestReplicaCalcToleranceCMExternal",
    "TestReplicaCalcTolerancePerPodCMExternal",
]


@pytest.mark.parametrize("name", OBJECT_EXTERNAL_CASES)
def test_replica_calc_object_and_external_metrics(name: str) -> None:
    pytest.skip("minik3s serves no custom.metrics.k8s.io / external.metrics.k8s.io: Object and External "
                "metric sources are reported invalid, there is no calculation to compare")


def test_tolerance_bounds_are_inclusive_as_is_within() -> None:
    """Not a table case: v1.33's Tolerances.isWithin is `1 - t <= ratio <= 1 + t` in floating
    point; a 33/30 ratio equals 1.0 + 0.1 there, while |1 - ratio| is 0.10000000000000009."""
    pods = [{"metadata": {"name": "a"}, "status": {"phase": R}}]
    p = calc_average_value_replicas(3, 30, pods, {"a": Sample(33, ZERO_TIME, 60.0)}, "qps", ZERO_TIME, **CALC)
    assert p.replicas == 3


# ------------------------------------------------------------------ TestGroupPods


@dataclass
class GroupPod:
    name: str
    phase: str
    start: float | None = None  # seconds before now; None: no start time
    ready: tuple[str, float | None] | None = None  # (status, transition seconds before now; None: zero time)
    deleted: bool = False


@dataclass
class GroupCase:
    pods: list[GroupPod]
    metrics: dict[str, tuple[float | None, float]]  # name -> (timestamp seconds before now; None: zero, window)
    resource: str
    ready: int
    unready: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)
    ignored: set[str] = field(default_factory=set)


S = "Succeeded"
GROUP_CASES: dict[str, GroupCase] = {
    "void": GroupCase([], {}, "cpu", 0),
    "count in a ready pod - memory": GroupCase(
        [GroupPod("bentham", S)], {"bentham": (0.0, 60.0)}, "memory", 1),
    "unready a pod without ready condition - CPU": GroupCase(
        [GroupPod("lucretius", S, start=0.0)], {"lucretius": (None, 0.0)}, "cpu", 0, unready={"lucretius"}),
    "count in a ready pod with fresh metrics during initialization period - CPU": GroupCase(
        [GroupPod("bentham", S, start=60.0, ready=(T, 30.0))], {"bentham": (0.0, 30.0)}, "cpu", 1),
    "unready a ready pod without fresh metrics during initialization period - CPU": GroupCase(
        [GroupPod("bentham", S, start=60.0, ready=(T, 30.0))], {"bentham": (0.0, 60.0)}, "cpu", 0,
        unready={"bentham"}),
    "unready an unready pod during initialization period - CPU": GroupCase(
        [GroupPod("lucretius", S, start=600.0, ready=(F, 594.0))], {"lucretius": (None, 0.0)}, "cpu", 0,
        unready={"lucretius"}),
    "count in a ready pod without fresh metrics after initialization period - CPU": GroupCase(
        [GroupPod("bentham", S, start=180.0, ready=(T, 180.0))], {"bentham": (120.0, 60.0)}, "cpu", 1),
    "count in an unready pod that was ready after initialization period - CPU": GroupCase(
        [GroupPod("lucretius", S, start=600.0, ready=(F, 540.0))], {"lucretius": (None, 0.0)}, "cpu", 1),
    "unready pod that has never been ready after initialization period - CPU": GroupCase(
        [GroupPod("lucretius", S, start=600.0, ready=(F, 590.0))], {"lucretius": (None, 0.0)}, "cpu", 1),
    "a missing pod": GroupCase([GroupPod("epicurus", S, start=180.0)], {}, "cpu", 0, missing={"epicurus"}),
    "several pods": GroupCase(
        [GroupPod("lucretius", S, start=0.0), GroupPod("niccolo", S, start=180.0, ready=(T, 180.0)),
         GroupPod("epicurus", S, start=180.0)],
        {"lucretius": (None, 0.0), "niccolo": (None, 0.0)}, "cpu", 1, unready={"lucretius"}, missing={"epicurus"}),
    "pending pods are unreadied": GroupCase([GroupPod("unscheduled", P)], {}, "cpu", 0, unready={"unscheduled"}),
    "ignore pods with deletion timestamps": GroupCase(
        [GroupPod("deleted", P, deleted=True)], {"deleted": (None, 0.0)}, "cpu", 0, ignored={"deleted"}),
    "ignore pods in a failed state": GroupCase(
        [GroupPod("failed", FAILED)], {"failed": (None, 0.0)}, "cpu", 0, ignored={"failed"}),
}


@pytest.mark.parametrize("name", list(GROUP_CASES))
async def test_group_pods(real_api: Any, name: str) -> None:
    tc = GROUP_CASES[name]
    now = real_api.clock.now()

    def ago(s: float | None) -> datetime:
        return ZERO_TIME if s is None else now - timedelta(seconds=s)

    for gp in tc.pods:
        status: dict[str, Any] = {"phase": gp.phase}
        if gp.start is not None:
            status["startTime"] = rfc3339(ago(gp.start))
        if gp.ready is not None:
            cond: dict[str, Any] = {"type": "Ready", "status": gp.ready[0]}
            if gp.ready[1] is not None:
                cond["lastTransitionTime"] = rfc3339(ago(gp.ready[1]))
            status["conditions"] = [cond]
        await store_pod(real_api, gp.name, labels={"name": "test-pod"}, containers=[("c", None)], status=status,
                        deleting=gp.deleted)
    samples = {n: Sample(1, ago(ts), w) for n, (ts, w) in tc.metrics.items()}
    got = group_pods(await listed_pods(real_api), samples, tc.resource, now,
                     cpu_initialization_period=CPU_INIT, initial_readiness_delay=READY_DELAY)
    assert got == (tc.ready, tc.unready, tc.missing, tc.ignored)


# ------------------------------------------------------------------ TestCalculatePodRequests


def _c(name: str, cpu: str | None, **extra: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "busybox", **extra}
    if cpu is not None:
        c["resources"] = {"requests": {"cpu": cpu}}
    return c


POD_REQUEST_CASES: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]], str, dict[str, int] | str]] = {
    "void": ([], [], "", {}),
    "pod with regular containers": ([_c("container1", "100m"), _c("container2", "50m")], [], "", {"test-pod": 150}),
    "calculate requests with special container": (
        [_c("container1", "100m"), _c("container2", "50m")], [], "container1", {"test-pod": 100}),
    "container missing requests": (
        [_c("container1", None)], [], "", "missing request for cpu in container container1 of Pod test-pod"),
    "pod with restartable init containers": (
        [_c("container1", "100m")],
        [_c("init-container1", "20m"), _c("restartable-container1", "50m", restartPolicy="Always")], "",
        {"test-pod": 150}),
}


@pytest.mark.parametrize("name", list(POD_REQUEST_CASES))
async def test_calculate_pod_requests(real_api: Any, name: str) -> None:
    containers, init, container, want = POD_REQUEST_CASES[name]
    if containers:
        obj = make_pod("test-pod").obj()
        obj["spec"]["containers"] = containers
        if init:
            obj["spec"]["initContainers"] = init
        await real_api.create(PODS, obj, NS)
    pods = await listed_pods(real_api)
    if isinstance(want, str):
        with pytest.raises(MetricError) as err:
            pod_requests(pods, "cpu", container or None)
        assert str(err.value) == want
    else:
        assert pod_requests(pods, "cpu", container or None) == want


# ------------------------------------------------------------------ horizontal_test.go: normalization tables

NOW = 10_000.0  # a monotonic "now" for the pure functions


@pytest.mark.parametrize(("current", "desired", "min_r", "max_r", "want", "reason"), [
    pytest.param(5, 7, 3, 8, 7, "DesiredWithinRange", id="prenormalized desired replicas within range"),
    pytest.param(3, 1, 2, 8, 2, "TooFewReplicas", id="prenormalized desired replicas < minReplicas"),
    pytest.param(1, 0, 0, 10, 0, "DesiredWithinRange", id="prenormalized desired zeroed replicas within range"),
    pytest.param(20, 1000, 1, 10, 10, "TooManyReplicas",
                 id="maxReplicas is the limit because maxReplicas < scaleUpLimit"),
    # calculateScaleUpLimit(3) with the production factor (upstream's test init() sets it to 8)
    pytest.param(3, 1000, 1, 2000, int(max(2.0 * 3, 4.0)), "ScaleUpLimit",
                 id="scaleUpLimit is the limit because scaleUpLimit < maxReplicas"),
])
def test_convert_desired_replicas_with_rules(current: int, desired: int, min_r: int, max_r: int, want: int,
                                              reason: str) -> None:
    lim = limit_legacy(current, desired, min_r, max_r)
    assert (lim.replicas, lim.reason) == (want, reason)


MIN_RULES = {"stabilizationWindowSeconds": 300, "selectPolicy": "Min",
             "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60},
                          {"type": "Percent", "value": 50, "periodSeconds": 60}]}


def test_calculate_scale_up_limit_with_scaling_rules() -> None:
    assert scale_up_limit(1, [], [], MIN_RULES, NOW) == 2


def test_calculate_scale_down_limit_with_behaviors() -> None:
    assert scale_down_limit(5, [], [], MIN_RULES, NOW) == 3


def rules(pods: int, pods_period: int, percent: int, percent_period: int, window: int) -> dict[str, Any]:
    """generateScalingRules (no policy at all stays unset, as Go's nil slice)."""
    r: dict[str, Any] = {"stabilizationWindowSeconds": window, "selectPolicy": "Max"}
    policies = []
    if pods:
        policies.append({"type": "Pods", "value": pods, "periodSeconds": pods_period})
    if percent:
        policies.append({"type": "Percent", "value": percent, "periodSeconds": percent_period})
    if policies:
        r["policies"] = policies
    return r


def uniform_events(raw: list[int], period: int, now: float = NOW) -> list[ScaleEvent]:
    """generateEventsUniformDistribution: each event in the middle of its share of the period
    (whole seconds, as Go's Duration conversion truncates)."""
    seg = period / len(raw)
    return [ScaleEvent(v, now - int(period - seg * (i + 1) + seg / 2)) for i, v in enumerate(raw)]


@dataclass
class RulesCase:
    current: int
    desired: int
    min_r: int
    max_r: int
    want: int
    reason: str
    up: dict[str, Any] | None = None
    down: dict[str, Any] | None = None
    up_events: list[ScaleEvent] = field(default_factory=list)
    down_events: list[ScaleEvent] = field(default_factory=list)


U159 = [1, 5, 9]
RULES_CASES: dict[str, RulesCase] = {
    "prenormalized desired replicas within range": RulesCase(5, 7, 3, 8, 7, "DesiredWithinRange"),
    "prenormalized desired replicas < minReplicas": RulesCase(3, 1, 2, 8, 2, "TooFewReplicas"),
    "prenormalized desired replicas within range when minReplicas is 0": RulesCase(1, 0, 0, 10, 0,
                                                                                   "DesiredWithinRange"),
    "maxReplicas is the limit because maxReplicas < scaleUpLimit": RulesCase(20, 1000, 1, 10, 10, "TooManyReplicas"),
    "desired replica count is more than the maximum replica count": RulesCase(100, 1000, 100, 150, 150,
                                                                              "TooManyReplicas"),
    "scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies": RulesCase(
        3, 1000, 1, 2000, 4, "ScaleUpLimit", up=rules(0, 0, 1, 60, 0)),
    # upstream marks this one testThis and returns before running it; it holds all the same
    "scaleDownLimit is the limit because scaleDownLimit > minReplicas with user defined policies": RulesCase(
        1000, 3, 3, 2000, 980, "ScaleDownLimit", down=rules(20, 60, 0, 0, 0)),
    "scaleUp with default behavior": RulesCase(10, 50, 1, 1000, 20, "ScaleUpLimit"),
    "scaleUp with pods policy larger than percent policy": RulesCase(
        10, 500, 1, 1000, 110, "ScaleUpLimit", up=rules(100, 60, 100, 60, 0)),
    "scaleUp with percent policy larger than pods policy": RulesCase(
        10, 500, 1, 1000, 20, "ScaleUpLimit", up=rules(2, 60, 100, 60, 0)),
    "scaleUp with spec MaxReplicas limitation with large pod policy": RulesCase(
        10, 50, 1, 1000, 50, "DesiredWithinRange", up=rules(100, 60, 0, 0, 0)),
    "scaleUp with spec MaxReplicas limitation with large percent policy": RulesCase(
        10, 50, 1, 1000, 50, "DesiredWithinRange", up=rules(10000, 60, 0, 0, 0)),
    "scaleUp with pod policy limitation": RulesCase(10, 50, 1, 1000, 40, "ScaleUpLimit", up=rules(30, 60, 0, 0, 0)),
    "scaleUp with percent policy limitation": RulesCase(
        10, 50, 1, 1000, 30, "ScaleUpLimit", up=rules(0, 0, 200, 60, 0)),
    "scaleDown with percent policy larger than pod policy": RulesCase(
        100, 2, 1, 1000, 80, "ScaleDownLimit", down=rules(20, 60, 1, 60, 300)),
    "scaleDown with pod policy larger than percent policy": RulesCase(
        100, 2, 1, 1000, 98, "ScaleDownLimit", down=rules(2, 60, 1, 60, 300)),
    "scaleDown with spec MinReplicas=nil limitation with large pod policy": RulesCase(
        10, 0, 1, 1000, 1, "TooFewReplicas", down=rules(100, 60, 0, 0, 300)),
    "scaleDown with spec MinReplicas limitation with large pod policy": RulesCase(
        10, 0, 1, 1000, 1, "TooFewReplicas", down=rules(100, 60, 0, 0, 300)),
    "scaleDown with spec MinReplicas limitation with large percent policy": RulesCase(
        10, 2, 5, 1000, 5, "TooFewReplicas", down=rules(0, 0, 100, 60, 300)),
    "scaleDown with pod policy limitation": RulesCase(
        10, 2, 1, 1000, 5, "ScaleDownLimit", down=rules(5, 60, 0, 0, 300)),
    "scaleDown with percent policy limitation": RulesCase(
        10, 5, 1, 1000, 5, "DesiredWithinRange", down=rules(0, 0, 50, 60, 300)),
    "scaleUp with spec MaxReplicas limitation with large pod policy and events": RulesCase(
        100, 500, 1, 200, 200, "TooManyReplicas", up=rules(300, 60, 0, 0, 0), up_events=uniform_events(U159, 120)),
    "scaleUp with spec MaxReplicas limitation with large percent policy and events": RulesCase(
        100, 500, 1, 200, 200, "TooManyReplicas", up=rules(0, 0, 10000, 60, 0), up_events=uniform_events(U159, 120)),
    "scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up events": RulesCase(
        100, 500, 1, 1000, 100, "ScaleUpLimit", up=rules(5, 120, 0, 0, 0), up_events=uniform_events(U159, 120)),
    "scaleUp with pod policy and previous scale up events": RulesCase(
        100, 500, 1, 1000, 235, "ScaleUpLimit", up=rules(150, 120, 0, 0, 0), up_events=uniform_events(U159, 120)),
    "scaleUp with percent policy and previous scale up events": RulesCase(
        100, 500, 1, 1000, 255, "ScaleUpLimit", up=rules(0, 0, 200, 120, 0), up_events=uniform_events(U159, 120)),
    "scaleUp with percent policy and previous scale up and down events": RulesCase(
        6, 24, 1, 1000, 16, "ScaleUpLimit", up=rules(0, 0, 300, 300, 0), up_events=uniform_events([4], 120),
        down_events=uniform_events([2], 120)),
    "scaleDown with default policy and previous events": RulesCase(
        10, 5, 1, 1000, 5, "DesiredWithinRange", down_events=uniform_events(U159, 120)),
    "scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events": RulesCase(
        100, 0, 1, 1000, 1, "TooFewReplicas", down=rules(115, 120, 0, 0, 300), down_events=uniform_events(U159, 120)),
    "scaleDown with spec MinReplicas limitation with large pod policy and previous events": RulesCase(
        100, 0, 5, 1000, 5, "TooFewReplicas", down=rules(130, 120, 0, 0, 300), down_events=uniform_events(U159, 120)),
    "scaleDown with spec MinReplicas limitation with large percent policy and previous events": RulesCase(
        100, 2, 5, 1000, 5, "TooFewReplicas", down=rules(0, 0, 100, 120, 300), down_events=uniform_events(U159, 120)),
    "scaleDown with pod policy limitation and previous events": RulesCase(
        100, 2, 1, 1000, 100, "ScaleDownLimit", down=rules(5, 120, 0, 0, 300), down_events=uniform_events(U159, 120)),
    "scaleDown with percent policy limitation and previous events": RulesCase(
        100, 0, 1, 1000, 56, "ScaleDownLimit", down=rules(0, 0, 50, 120, 300),
        down_events=uniform_events([2, 4, 6], 120)),
    "scaleDown with percent policy and previous scale up and down events": RulesCase(
        10, 1, 1, 1000, 6, "ScaleDownLimit", down=rules(0, 0, 50, 180, 0), up_events=uniform_events([2], 120),
        down_events=uniform_events([4], 120)),
    "scaleDown with previous events preventing further scale down": RulesCase(
        100, 0, 1, 1000, 100, "ScaleDownLimit", down=rules(0, 0, 10, 120, 300),
        down_events=uniform_events([10, 10, 10], 120)),
    "scaleDown with with previous events still allowing more scale down": RulesCase(
        10, 5, 1, 1000, 5, "DesiredWithinRange", down=rules(0, 0, 1000, 120, 300),
        down_events=uniform_events([10, 10, 10], 120)),
    "check 'outdated' flag for events for one behavior for up": RulesCase(
        100, 200, 1, 1000, 200, "DesiredWithinRange", up=rules(1000, 60, 0, 0, 0),
        up_events=uniform_events([8, 12, 9, 11], 120)),
    "check that events were not marked 'outdated' for two different policies in the behavior for up": RulesCase(
        100, 200, 1, 1000, 200, "DesiredWithinRange", up=rules(1000, 120, 100, 60, 0),
        up_events=uniform_events([8, 12, 9, 11], 120)),
    "check that events were marked 'outdated' for two different policies in the behavior for up": RulesCase(
        100, 200, 1, 1000, 200, "DesiredWithinRange", up=rules(1000, 30, 100, 60, 0),
        up_events=uniform_events([8, 12, 9, 11], 120)),
    "check 'outdated' flag for events for one behavior for down": RulesCase(
        100, 5, 1, 1000, 5, "DesiredWithinRange", down=rules(1000, 60, 0, 0, 300),
        down_events=uniform_events([8, 12, 9, 11], 120)),
    "check that events were not marked 'outdated' for two different policies in the behavior for down": RulesCase(
        100, 5, 1, 1000, 5, "DesiredWithinRange", down=rules(1000, 120, 100, 60, 300),
        down_events=uniform_events([8, 12, 9, 11], 120)),
    "check that events were marked 'outdated' for two different policies in the behavior for down": RulesCase(
        100, 5, 1, 1000, 5, "DesiredWithinRange", down=rules(1000, 30, 100, 60, 300),
        down_events=uniform_events([8, 12, 9, 11], 120)),
}


@pytest.mark.parametrize("name", list(RULES_CASES))
def test_scaling_with_rules(name: str) -> None:
    """TestScalingWithRules: convertDesiredReplicasWithBehaviorRate (missing rules get upstream's
    GenerateHPAScale{Up,Down}Rules defaults)."""
    tc = RULES_CASES[name]
    behavior: dict[str, Any] = {}
    if tc.up is not None:
        behavior["scaleUp"] = tc.up
    if tc.down is not None:
        behavior["scaleDown"] = tc.down
    lim = limit_with_behavior(tc.current, tc.desired, tc.min_r, tc.max_r, behavior, tc.up_events, tc.down_events,
                              NOW)
    assert (lim.replicas, lim.reason) == (tc.want, tc.reason)


def _ev(change: int, ago: float, outdated: bool = False) -> ScaleEvent:
    return ScaleEvent(change, NOW - ago, outdated)


STORE_CASES: dict[str, tuple[dict[str, Any] | None, list[ScaleEvent], list[tuple[int, bool]], int]] = {
    # name: (scaling rules, previous events, stored events (change, outdated), change in the last 60 s)
    "empty entries with default behavior": (None, [], [], 0),
    "empty entries with two-policy-behavior": (rules(10, 60, 100, 60, 0), [], [(5, False)], 0),
    "one outdated entry to be kept untouched without behavior": (None, [_ev(7, 61)], [(7, False)], 0),
    "one outdated entry to be replaced with behavior": (rules(10, 60, 100, 60, 0), [_ev(7, 61)], [(5, False)], 0),
    "one actual entry to be not touched with behavior": (
        rules(10, 60, 100, 60, 0), [_ev(7, 58)], [(7, False), (5, False)], 7),
    "two entries, one of them to be replaced": (
        rules(10, 60, 0, 0, 0), [_ev(7, 61), _ev(6, 59)], [(5, False), (6, False)], 6),
    "replace one entry, use policies with different periods": (
        rules(10, 60, 100, 30, 0), [_ev(8, 29), _ev(6, 59), _ev(7, 61), _ev(9, 61)],
        [(8, False), (6, False), (7, True), (5, False)], 14),
    "two entries, both actual": (
        rules(10, 120, 100, 30, 0), [_ev(7, 58), _ev(6, 59)], [(7, False), (6, False), (5, False)], 13),
}


@pytest.mark.parametrize("name", list(STORE_CASES))
@pytest.mark.parametrize("direction", ["up", "down"])
def test_store_scale_events(name: str, direction: str) -> None:
    scaling, prev, want, change = STORE_CASES[name]
    events = [ScaleEvent(e.change, e.at, e.outdated) for e in prev]
    assert replicas_change_in_period(60, events, NOW) == change
    behavior = None if scaling is None else {"scaleUp" if direction == "up" else "scaleDown": scaling}
    if direction == "up":
        store_scale_event(events, [], behavior, 10, 15, NOW)
    else:
        store_scale_event([], events, behavior, 10, 5, NOW)
    assert [(e.change, e.outdated) for e in events] == want


def _recs(*pairs: tuple[int, float]) -> list[Recommendation]:
    return [Recommendation(r, NOW - ago) for r, ago in pairs]


@pytest.mark.parametrize(("recs", "proposed", "want", "log_length"), [
    pytest.param([], 5, 5, 1, id="empty log"),
    pytest.param([(4, 120), (5, 60)], 3, 5, 3, id="stabilize"),
    pytest.param([(1, 120), (2, 60)], 3, 3, 3, id="no stabilize"),
    pytest.param([(10, 600), (9, 540)], 3, 3, 2, id="no stabilize - old recommendations"),
    pytest.param([(10, 600), (4, 60), (5, 120), (9, 540)], 3, 5, 4, id="stabilize - old recommendations"),
])
def test_normalize_desired_replicas(recs: list[tuple[int, float]], proposed: int, want: int, log_length: int) -> None:
    """TestNormalizeDesiredReplicas: stabilizeRecommendation with a 5 min downscale window."""
    log = _recs(*recs)
    assert stabilize_recommendation(log, proposed, 300.0, NOW) == want
    assert len(log) == log_length


@pytest.mark.parametrize(("recs", "current", "proposed", "want", "stored", "up_window", "down_window"), [
    pytest.param([], 100, 5, 5, [5], 0, 0, id="empty recommendations for scaling down"),
    pytest.param([(4, 120), (5, 60)], 100, 3, 5, [4, 5, 3], 0, 180, id="simple scale down stabilization"),
    pytest.param([(4, 120), (5, 60)], 1, 7, 4, [4, 5, 7], 300, 0, id="simple scale up stabilization"),
    pytest.param([(1, 120), (2, 60)], 100, 3, 3, [1, 2, 3], 300, 0, id="no scale down stabilization"),
    pytest.param([(4, 120), (5, 60)], 1, 3, 3, [4, 5, 3], 0, 300, id="no scale up stabilization"),
    pytest.param([(10, 600), (9, 540)], 100, 3, 3, [10, 3], 0, 0,
                 id="no scale down stabilization, reuse recommendation element"),
    pytest.param([(10, 600), (9, 540)], 1, 100, 100, [10, 100], 0, 0,
                 id="no scale up stabilization, reuse recommendation element"),
    pytest.param([(10, 600), (4, 60), (5, 120), (9, 540)], 100, 3, 5, [10, 4, 5, 3], 0, 180,
                 id="scale down stabilization, reuse one of obsolete recommendation element"),
    pytest.param([(10, 6000), (6, 60), (5, 120), (9, 180)], 1, 100, 5, [100, 6, 5, 9], 300, 0,
                 id="scale up stabilization, reuse one of obsolete recommendation element"),
    pytest.param([(2, 6000), (3, 180)], 2, 1, 2, None, 300, 300,
                 id="scale up and down stabilization, do not scale up when prenormalized rec goes down"),
    pytest.param([(2, 6000), (1, 180)], 2, 3, 2, None, 300, 300,
                 id="scale up and down stabilization, do not scale down when prenormalized rec goes up"),
])
def test_normalize_desired_replicas_with_behavior(recs: list[tuple[int, float]], current: int, proposed: int,
                                                   want: int, stored: list[int] | None, up_window: int,
                                                   down_window: int) -> None:
    """TestNormalizeDesiredReplicasWithBehavior: stabilizeRecommendationWithBehaviors."""
    log = _recs(*recs)
    got, _, _ = stabilize_recommendation_with_behaviors(log, current, proposed, up_window, down_window, NOW)
    assert got == want
    if stored is not None:
        assert [r.replicas for r in log] == stored


# ------------------------------------------------------------------ horizontal_test.go: the controller


class StubMetrics:
    """The metrics.k8s.io source of upstream's controller tests: every reported level is split
    over container1 and container2 (level/2 each), stamped now with a one-minute window."""

    def __init__(self) -> None:
        self.pods: list[PodUsage] = []

    def pod_usage(self, namespace: str | None = None) -> list[PodUsage]:
        return [p for p in self.pods if namespace is None or p.namespace == namespace]

    def node_usage(self) -> list[NodeUsage]:
        return []


Cond = tuple[str, str, str]
STATUS_OK: list[Cond] = [("AbleToScale", T, "SucceededRescale"), ("ScalingActive", T, "ValidMetricFound"),
                         ("ScalingLimited", F, "DesiredWithinRange")]


def ok_with(*overrides: Cond) -> list[Cond]:
    """statusOkWithOverrides."""
    out = list(STATUS_OK)
    for o in overrides:
        out = [o if c[0] == o[0] else c for c in out]
    return out


@dataclass
class ControllerCase:
    min_r: int
    max_r: int
    spec: int
    desired: int
    levels: list[int]
    requests: list[str] | None = None  # None: statusReplicas pods requesting 1.0
    status: int | None = None  # statusReplicas (default: spec)
    cpu_target: int | None = None
    container: tuple[str, int] | None = None  # ContainerResource cpu (container, utilization)
    readiness: list[str] | None = None
    start: list[str] | None = None
    phases: list[str] | None = None
    deleting: list[bool] | None = None
    recommendations: list[tuple[int, float]] | None = None  # None: the controller's own first one
    up: dict[str, Any] | None = None
    down: dict[str, Any] | None = None
    conditions: list[Cond] = field(default_factory=lambda: list(STATUS_OK))
    cpu_current: int | None = None
    kind: str = "ReplicationController"


CONTROLLER_CASES: dict[str, ControllerCase] = {
    "TestScaleUp": ControllerCase(2, 6, 3, 5, [300, 500, 700], [ONE] * 3, cpu_target=30, cpu_current=50),
    "TestScaleUpContainer": ControllerCase(2, 6, 3, 5, [300, 500, 700], [ONE] * 3, container=("container1", 30)),
    "TestScaleUpUnreadyLessScale": ControllerCase(2, 6, 3, 4, [300, 500, 700], [ONE] * 3, cpu_target=30,
                                                  readiness=[F, T, T], cpu_current=60),
    "TestScaleUpHotCpuLessScale": ControllerCase(2, 6, 3, 4, [300, 500, 700], [ONE] * 3, cpu_target=30,
                                                 start=["hot", "cool", "cool"], cpu_current=60),
    "TestScaleUpUnreadyNoScale": ControllerCase(
        2, 6, 3, 3, [400, 500, 700], [ONE] * 3, cpu_target=30, readiness=[T, F, F], cpu_current=40,
        conditions=ok_with(("AbleToScale", T, "ReadyForNewScale"))),
    "TestScaleUpHotCpuNoScale": ControllerCase(
        2, 6, 3, 3, [400, 500, 700], [ONE] * 3, cpu_target=30, readiness=[T, F, F], start=["cool", "hot", "hot"],
        cpu_current=40, conditions=ok_with(("AbleToScale", T, "ReadyForNewScale"))),
    "TestScaleUpIgnoresFailedPods": ControllerCase(
        2, 6, 2, 4, [500, 700], [ONE] * 4, cpu_target=30, readiness=[T, T, F, F], phases=[R, R, FAILED, FAILED],
        cpu_current=60),
    "TestScaleUpIgnoresDeletionPods": ControllerCase(
        2, 6, 2, 4, [500, 700], [ONE] * 4, cpu_target=30, readiness=[T, T, F, F], phases=[R] * 4,
        deleting=[False, False, True, True], cpu_current=60),
    "TestScaleUpDeployment": ControllerCase(2, 6, 3, 5, [300, 500, 700], [ONE] * 3, cpu_target=30, cpu_current=50,
                                            kind="Deployment"),
    "TestScaleUpReplicaSet": ControllerCase(2, 6, 3, 5, [300, 500, 700], [ONE] * 3, cpu_target=30, cpu_current=50,
                                            kind="ReplicaSet"),
    "TestScaleDown": ControllerCase(2, 6, 5, 3, [100, 300, 500, 250, 250], [ONE] * 5, cpu_target=50,
                                    recommendations=[], cpu_current=28),
    "TestScaleDownContainerResource": ControllerCase(2, 6, 5, 3, [100, 300, 500, 250, 250], [ONE] * 5,
                                                     container=("container2", 50), recommendations=[]),
    "TestScaleDownWithScalingRules": ControllerCase(2, 6, 5, 3, [100, 300, 500, 250, 250], [ONE] * 5,
                                                    cpu_target=50, up=rules(0, 0, 100, 15, 30), recommendations=[],
                                                    cpu_current=28),
    "TestScaleDownStabilizeInitialSize": ControllerCase(
        2, 6, 5, 5, [100, 300, 500, 250, 250], [ONE] * 5, cpu_target=50, cpu_current=28,
        conditions=ok_with(("AbleToScale", T, "ScaleDownStabilized"))),
    "TestScaleDownIncludeUnreadyPods": ControllerCase(
        2, 6, 5, 2, [100, 300, 500, 250, 250], [ONE] * 5, cpu_target=50, readiness=[T, T, T, F, F],
        recommendations=[], cpu_current=30),
    "TestScaleDownIgnoreHotCpuPods": ControllerCase(
        2, 6, 5, 2, [100, 300, 500, 250, 250], [ONE] * 5, cpu_target=50, start=["cool", "cool", "cool", "hot", "hot"],
        recommendations=[], cpu_current=30),
    "TestScaleDownIgnoresFailedPods": ControllerCase(
        2, 6, 5, 3, [100, 300, 500, 250, 250], [ONE] * 7, cpu_target=50, readiness=[T] * 5 + [F, F],
        phases=[R] * 5 + [FAILED, FAILED], recommendations=[], cpu_current=28),
    "TestScaleDownIgnoresDeletionPods": ControllerCase(
        2, 6, 5, 3, [100, 300, 500, 250, 250], [ONE] * 7, cpu_target=50, readiness=[T] * 5 + [F, F],
        phases=[R] * 7, deleting=[False] * 5 + [True, True], recommendations=[], cpu_current=28),
    "TestTolerance": ControllerCase(1, 5, 3, 3, [1010, 1030, 1020], ["0.9", "1.0", "1.1"], cpu_target=100,
                                    conditions=ok_with(("AbleToScale", T, "ReadyForNewScale"))),
    "TestMinReplicas": ControllerCase(2, 5, 3, 2, [10, 95, 10], ["0.9", "1.0", "1.1"], cpu_target=90,
                                      recommendations=[], conditions=ok_with(("ScalingLimited", T, "TooFewReplicas"))),
    "TestMinReplicasDesiredZero": ControllerCase(
        2, 5, 3, 2, [0, 0, 0], ["0.9", "1.0", "1.1"], cpu_target=90, recommendations=[],
        conditions=ok_with(("ScalingLimited", T, "TooFewReplicas"))),
    "TestZeroReplicas": ControllerCase(3, 5, 0, 0, [], [], cpu_target=90,
                                       conditions=[("AbleToScale", T, "SucceededGetScale"),
                                                   ("ScalingActive", F, "ScalingDisabled")]),
    "TestTooFewReplicas": ControllerCase(3, 5, 2, 3, [], [], cpu_target=90,
                                         conditions=[("AbleToScale", T, "SucceededRescale")]),
    "TestTooManyReplicas": ControllerCase(3, 5, 10, 5, [], [], cpu_target=90,
                                          conditions=[("AbleToScale", T, "SucceededRescale")]),
    "TestMaxReplicas": ControllerCase(2, 5, 3, 5, [8000, 9500, 1000], ["0.9", "1.0", "1.1"], cpu_target=90,
                                      conditions=ok_with(("ScalingLimited", T, "TooManyReplicas"))),
    "TestSuperfluousMetrics": ControllerCase(2, 6, 4, 6, [4000, 9500, 3000, 7000, 3200, 2000], [ONE] * 4,
                                             cpu_target=100,
                                             conditions=ok_with(("ScalingLimited", T, "TooManyReplicas"))),
    "TestMissingMetrics": ControllerCase(2, 6, 4, 3, [400, 95], [ONE] * 4, cpu_target=100, recommendations=[]),
    "TestEmptyMetrics": ControllerCase(2, 6, 4, 4, [], [ONE] * 4, cpu_target=100,
                                       conditions=[("AbleToScale", T, "SucceededGetScale"),
                                                   ("ScalingActive", F, "FailedGetResourceMetric")]),
    "TestEmptyCPURequest": ControllerCase(1, 5, 1, 1, [200], [], cpu_target=100,
                                          conditions=[("AbleToScale", T, "SucceededGetScale"),
                                                      ("ScalingActive", F, "FailedGetResourceMetric")]),
    "TestEventCreated": ControllerCase(1, 5, 1, 2, [200], ["0.2"], cpu_target=50),
    "TestEventNotCreated": ControllerCase(1, 5, 2, 2, [200, 200], ["0.4", "0.4"], cpu_target=50,
                                          conditions=ok_with(("AbleToScale", T, "ReadyForNewScale"))),
    "TestMissingReports": ControllerCase(1, 5, 4, 2, [200], ["0.2"], cpu_target=50, recommendations=[]),
    "TestUpscaleCap": ControllerCase(1, 100, 3, 24, [100, 200, 300], ["0.1"] * 3, cpu_target=10,
                                     up=rules(0, 0, 700, 60, 0),
                                     conditions=ok_with(("ScalingLimited", T, "ScaleUpLimit"))),
    "TestUpscaleCapGreaterThanMaxReplicas": ControllerCase(
        1, 20, 3, 20, [100, 200, 300], ["0.1"] * 3, cpu_target=10, up=rules(0, 0, 700, 60, 0),
        conditions=ok_with(("ScalingLimited", T, "TooManyReplicas"))),
    "TestMoreReplicasThanSpecNoScale": ControllerCase(
        1, 8, 4, 4, [500] * 5, ["1"] * 5, status=5, cpu_target=50,
        conditions=ok_with(("AbleToScale", T, "ReadyForNewScale"))),
    "TestStabilizeDownscale": ControllerCase(
        1, 5, 4, 4, [50, 50, 50], ["0.1"] * 3, cpu_target=100, recommendations=[(10, 600), (4, 60)],
        conditions=ok_with(("AbleToScale", T, "ScaleDownStabilized"))),
    "TestScaleUpRCImmediately": ControllerCase(2, 6, 1, 2, [0, 0, 0, 0], [ONE] * 4,
                                               conditions=[("AbleToScale", T, "SucceededRescale")]),
    "TestScaleDownRCImmediately": ControllerCase(2, 5, 6, 5, [8000, 9500, 1000], ["0.9", "1.0", "1.1"],
                                                 cpu_target=50, conditions=[("AbleToScale", T, "SucceededRescale")]),
}


def target_object(kind: str, name: str, replicas: int, selector: dict[str, str]) -> tuple[Any, dict[str, Any]]:
    template = {"metadata": {"labels": dict(selector)}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    if kind == "ReplicationController":
        return REPLICATIONCONTROLLERS, {"apiVersion": "v1", "kind": kind, "metadata": {"name": name},
                                        "spec": {"replicas": replicas, "selector": dict(selector),
                                                 "template": template}}
    res = DEPLOYMENTS if kind == "Deployment" else REPLICASETS
    return res, {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name},
                 "spec": {"replicas": replicas, "selector": {"matchLabels": dict(selector)}, "template": template}}


def hpa_object(name: str, kind: str, target: str, tc: ControllerCase) -> dict[str, Any]:
    metrics: list[dict[str, Any]] = []
    if tc.cpu_target is not None:
        metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": tc.cpu_target}}})
    if tc.container is not None:
        metrics.append({"type": "ContainerResource", "containerResource": {
            "name": "cpu", "container": tc.container[0],
            "target": {"type": "Utilization", "averageUtilization": tc.container[1]}}})
    spec: dict[str, Any] = {"scaleTargetRef": {"apiVersion": "v1" if kind == "ReplicationController" else "apps/v1",
                                               "kind": kind, "name": target},
                            "minReplicas": tc.min_r, "maxReplicas": tc.max_r}
    if metrics:
        spec["metrics"] = metrics  # none: the API defaults cpu at 80 %
    if tc.up is not None or tc.down is not None:
        spec["behavior"] = {k: v for k, v in (("scaleUp", tc.up), ("scaleDown", tc.down)) if v is not None}
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
            "spec": spec}


async def controller(c: Any, metrics: StubMetrics) -> HorizontalPodAutoscalerController:
    ctrl = HorizontalPodAutoscalerController(c, c, usage=metrics, clock=c.clock, sync_period=1.0,
                                             tolerance=TOLERANCE, cpu_initialization_period=CPU_INIT,
                                             initial_readiness_delay=READY_DELAY)
    c.spawn(ctrl.recorder.run(), "hpa-events")
    return ctrl


async def setup_case(c: Any, tc: ControllerCase, *, create_target: bool = True,
                     extra_labels: dict[str, str] | None = None) -> tuple[HorizontalPodAutoscalerController, Any]:
    """prepareTestClient: the target at spec replicas, the pods (two containers requesting half of
    the pod's request each; Ready's transition at the start time), the metrics, the HPA with
    status current = desired = spec."""
    metrics = StubMetrics()
    ctrl = await controller(c, metrics)
    res, target = target_object(tc.kind, "test-rc", tc.spec, {"name": "test-pod"})
    if create_target:
        await c.create(res, target, NS)
        cur = await c.get(res, "test-rc", NS)
        cur["status"] = {"replicas": tc.spec if tc.status is None else tc.status}
        await c.update_status(res, cur)
    count = len(tc.requests) if tc.requests is not None else (tc.spec if tc.status is None else tc.status)
    for i in range(count):
        req_milli = int(float(tc.requests[i]) * 1000) if tc.requests is not None else 1000
        st = start_time(c, tc.start[i] if tc.start else None)
        status = {"phase": tc.phases[i] if tc.phases else R, "startTime": st,
                  "conditions": [{"type": "Ready", "status": tc.readiness[i] if tc.readiness else T,
                                  "lastTransitionTime": st}]}
        half = f"{req_milli // 2}m"
        await store_pod(c, f"test-pod-{i}", labels={"name": "test-pod", **(extra_labels or {})},
                        containers=[("container1", half), ("container2", half)], status=status,
                        deleting=bool(tc.deleting and tc.deleting[i]))
    now = c.clock.now()
    metrics.pods = [PodUsage(NS, f"test-pod-{i}", (ContainerUsage("container1", lv // 2, 512 * 1024),
                                                  ContainerUsage("container2", lv // 2, 512 * 1024)), now, 60.0)
                    for i, lv in enumerate(tc.levels)]
    await c.create(HPAS, hpa_object("test-hpa", tc.kind, "test-rc", tc), NS)
    cur = await c.get(HPAS, "test-hpa", NS)
    cur["status"] = {"currentReplicas": tc.spec, "desiredReplicas": tc.spec}
    await c.update_status(HPAS, cur)
    if tc.recommendations is not None:
        mono = c.clock.monotonic()
        ctrl.state[f"{NS}/test-hpa"] = HPAState(recommendations=[Recommendation(r, mono - ago)
                                                                 for r, ago in tc.recommendations])
    await c.settle()
    return ctrl, res


def conditions_of(hpa: dict[str, Any]) -> list[Cond]:
    return [(x["type"], x["status"], x["reason"]) for x in (hpa.get("status") or {}).get("conditions") or ()]


async def check(c: Any, tc: ControllerCase, res: Any) -> dict[str, Any]:
    """verifyResults: the scale changes exactly when a change is expected, the status says the
    expected desired count, conditions and (when checked) the cpu utilization."""
    await c.settle()
    target = await c.get(res, "test-rc", NS)
    assert target["spec"]["replicas"] == tc.desired
    scaled = [x for x in c.calls if x[0] == "update" and x[3] == "scale"]
    assert bool(scaled) == (tc.spec != tc.desired)
    got = await c.get(HPAS, "test-hpa", NS)
    assert got["status"]["desiredReplicas"] == tc.desired
    assert conditions_of(got) == tc.conditions
    if tc.cpu_current is not None:
        cpu = next(m["resource"]["current"] for m in got["status"]["currentMetrics"] if m["type"] == "Resource")
        assert cpu["averageUtilization"] == tc.cpu_current
    return got


@pytest.mark.parametrize("name", list(CONTROLLER_CASES))
async def test_controller(real_api: Any, name: str) -> None:
    tc = CONTROLLER_CASES[name]
    ctrl, res = await setup_case(real_api, tc)
    await ctrl.sync(f"{NS}/test-hpa")
    await check(real_api, tc, res)


async def hpa_events(c: Any) -> list[tuple[str, str]]:
    await c.settle()
    return [(e["reason"], e["message"]) for e in (await c.list(EVENTS, NS))["items"]
            if e["involvedObject"].get("kind") == "HorizontalPodAutoscaler"]


async def test_event_created_message(real_api: Any) -> None:
    """TestEventCreated's event check: SuccessfulRescale and its message."""
    tc = CONTROLLER_CASES["TestEventCreated"]
    ctrl, _ = await setup_case(real_api, tc)
    await ctrl.sync(f"{NS}/test-hpa")
    assert await hpa_events(real_api) == [
        ("SuccessfulRescale", "New size: 2; reason: cpu resource utilization (percentage of request) above target")]


async def test_event_not_created(real_api: Any) -> None:
    tc = CONTROLLER_CASES["TestEventNotCreated"]
    ctrl, _ = await setup_case(real_api, tc)
    await ctrl.sync(f"{NS}/test-hpa")
    assert await hpa_events(real_api) == []


async def test_condition_failed_get_scale(real_api: Any) -> None:
    """TestConditionFailedGetScale: the target cannot be read."""
    tc = ControllerCase(1, 100, 3, 3, [100, 200, 300], ["0.1"] * 3, cpu_target=10,
                        conditions=[("AbleToScale", F, "FailedGetScale")])
    ctrl, _ = await setup_case(real_api, tc, create_target=False)
    await ctrl.sync(f"{NS}/test-hpa")
    await real_api.settle()
    got = await real_api.get(HPAS, "test-hpa", NS)
    assert conditions_of(got) == tc.conditions
    assert got["status"]["desiredReplicas"] == 3


async def test_condition_failed_update_scale(real_api: Any) -> None:
    """TestConditionFailedUpdateScale: writing the scale fails; the status keeps the old desired count."""
    tc = ControllerCase(1, 5, 3, 3, [150, 150, 150], ["0.1"] * 3, cpu_target=100,
                        conditions=ok_with(("AbleToScale", F, "FailedUpdateScale")))
    ctrl, res = await setup_case(real_api, tc)
    real_api.fail_next["update"] = [InternalError("something went wrong")]
    await ctrl.sync(f"{NS}/test-hpa")
    await real_api.settle()
    assert (await real_api.get(res, "test-rc", NS))["spec"]["replicas"] == 3
    got = await real_api.get(HPAS, "test-hpa", NS)
    assert got["status"]["desiredReplicas"] == 3
    assert conditions_of(got) == tc.conditions


@pytest.mark.parametrize(("name", "other_selector", "pod_labels", "desired", "conditions"), [
    pytest.param("TestConditionNoAmbiguousSelectorWhenNoSelectorOverlapBetweenHPAs", {"cheddar": "cheese"}, None, 5,
                 STATUS_OK, id="TestConditionNoAmbiguousSelectorWhenNoSelectorOverlapBetweenHPAs"),
    pytest.param("TestConditionAmbiguousSelectorWhenFullSelectorOverlapBetweenHPAs", {"name": "test-pod"}, None, 3,
                 [("AbleToScale", T, "SucceededGetScale"), ("ScalingActive", F, "AmbiguousSelector")],
                 id="TestConditionAmbiguousSelectorWhenFullSelectorOverlapBetweenHPAs"),
    pytest.param("TestConditionAmbiguousSelectorWhenPartialSelectorOverlapBetweenHPAs", {"cheddar": "cheese"},
                 {"cheddar": "cheese"}, 3,
                 [("AbleToScale", T, "SucceededGetScale"), ("ScalingActive", F, "AmbiguousSelector")],
                 id="TestConditionAmbiguousSelectorWhenPartialSelectorOverlapBetweenHPAs"),
])
async def test_condition_ambiguous_selector(real_api: Any, name: str, other_selector: dict[str, str],
                                            pod_labels: dict[str, str] | None, desired: int,
                                            conditions: list[Cond]) -> None:
    """A second HPA (test-hpa-2), synced first, whose target selects by `other_selector`."""
    c = real_api
    tc = ControllerCase(2, 6, 3, desired, [300, 500, 700], [ONE] * 3, cpu_target=30, conditions=conditions)
    ctrl, res = await setup_case(c, tc, extra_labels=pod_labels)
    res2, other = target_object("ReplicationController", "test-rc-2", 3, other_selector)
    await c.create(res2, other, NS)
    await c.create(HPAS, hpa_object("test-hpa-2", "ReplicationController", "test-rc-2", tc), NS)
    await c.settle()
    await ctrl.sync(f"{NS}/test-hpa-2")
    c.calls.clear()
    await ctrl.sync(f"{NS}/test-hpa")
    await check(c, tc, res)


async def test_avoid_unnecessary_updates(real_api: Any) -> None:
    """TestAvoidUnnecessaryUpdates: a reconcile that changes nothing writes no status (here: the
    second of two identical syncs)."""
    c = real_api
    tc = ControllerCase(2, 6, 2, 2, [400, 500, 700], [ONE] * 3, cpu_target=30, start=["cool", "hot", "hot"],
                        recommendations=[])
    ctrl, _ = await setup_case(c, tc)
    await ctrl.sync(f"{NS}/test-hpa")
    await c.settle()
    c.calls.clear()
    await ctrl.sync(f"{NS}/test-hpa")
    await c.settle()
    assert [x for x in c.calls if x[0] == "update_status" and x[1] == "horizontalpodautoscalers"] == []
