"""The HPA controller on the real in-process API (ApiCore + LocalClient + FakeClock).

The replica-calculator table mirrors upstream's pkg/controller/podautoscaler/
replica_calculator_test.go (one container per pod instead of two: the ratios are the same);
pods are stored through the API and read back, so phases, conditions and start times are the
API's. The controller tests use kubelet_sim's real usage source (pod annotations)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kubelet_sim.usage import CPU_USAGE, UsageSource
from minik3s.api.resources import DEPLOYMENTS, ENDPOINTS, EVENTS, HPAS, PODS, SERVICES
from minik3s.controllers.hpa import (
    HorizontalPodAutoscalerController,
    MetricError,
    Sample,
    ScaleEvent,
    calc_average_value_replicas,
    calc_utilization_replicas,
    limit_legacy,
    limit_with_behavior,
)
from minik3s.testing.builders import make_pod
from minik3s.utils.clock import rfc3339

COOL = timedelta(minutes=10)  # started long before: outside the cpu initialization period


async def store_pods(c: Any, *, requests: list[int | None], ready: list[str] | None = None,
                     phases: list[str] | None = None, hot: set[int] = frozenset(), labels: dict[str, str] | None = None,
                     annotations: dict[str, str] | None = None, node: str = "n1") -> list[dict[str, Any]]:
    now = c.clock.now()
    for i, req in enumerate(requests):
        start = now - (timedelta(minutes=1) if i in hot else COOL)
        transition = now - timedelta(seconds=5) if i in hot else start
        b = make_pod(f"pod-{i}").labels(labels or {"app": "web"}).node(node)
        if req is not None:
            b = b.req(cpu=f"{req}m")
        if annotations:
            b = b.annotations(annotations)
        await c.create(PODS, b.obj(), "default")
        cur = await c.get(PODS, f"pod-{i}", "default")
        cur["status"] = {"phase": (phases or ["Running"] * len(requests))[i], "startTime": rfc3339(start),
                         "conditions": [{"type": "Ready", "status": (ready or ["True"] * len(requests))[i],
                                         "lastTransitionTime": rfc3339(transition)}]}
        await c.update_status(PODS, cur)
    return list((await c.list(PODS, "default"))["items"])


def samples(c: Any, levels: list[int]) -> dict[str, Sample]:
    return {f"pod-{i}": Sample(v, c.clock.now(), 15.0) for i, v in enumerate(levels)}


# (id, current, requests, levels, target %, readiness, phases, hot pods, expected replicas, expected utilization)
CASES = [
    ("ScaleUp", 3, [1000] * 3, [300, 500, 700], 30, None, None, set(), 5, 50),
    ("ScaleUpUnreadyLessScale", 3, [1000] * 3, [300, 500, 700], 30, ["False", "True", "True"], None, set(), 4, 60),
    ("ScaleUpUnreadyNoScale", 3, [1000] * 3, [400, 500, 700], 30, ["True", "False", "False"], None, set(), 3, 40),
    ("ScaleUpHotCpuLessScale", 3, [1000] * 3, [300, 500, 700], 30, None, None, {0}, 4, 60),
    ("ScaleDown", 5, [1000] * 5, [100, 300, 500, 250, 250], 50, None, None, set(), 3, 28),
    ("ScaleDownIgnoreHotCpuPods", 5, [1000] * 5, [100, 300, 500, 1000, 1000], 50, None, None, {3, 4}, 2, 30),
    ("ScaleDownIgnoresFailedPods", 5, [1000] * 7, [100, 300, 500, 250, 250], 50,
     ["True"] * 5 + ["False"] * 2, ["Running"] * 5 + ["Failed"] * 2, set(), 3, 28),
    ("Tolerance", 3, [900, 1000, 1100], [1010, 1030, 1020], 100, None, None, set(), 3, 102),
    ("SuperfluousMetrics", 4, [1000] * 4, [4000, 9500, 3000, 7000, 3200, 2000], 100, None, None, set(), 24, 587),
    ("MissingMetrics", 4, [1000] * 4, [400, 95], 100, None, None, set(), 3, 24),
    ("MissingMetricsNoChangeEq", 2, [1000] * 2, [1000], 100, None, None, set(), 2, 100),
    ("MissingMetricsNoChangeGt", 2, [1000] * 2, [1900], 100, None, None, set(), 2, 190),
    ("MissingMetricsNoChangeLt", 2, [1000] * 2, [600], 100, None, None, set(), 2, 60),
    ("MissingMetricsUnreadyChange", 3, [1000] * 3, [100, 450], 50, ["False", "True", "True"], None, set(), 3, 45),
    ("MissingMetricsUnreadyScaleUp", 3, [1000] * 3, [100, 2000], 50, ["False", "True", "True"], None, set(), 4, 200),
    ("MissingMetricsUnreadyScaleDown", 4, [1000] * 4, [100, 100, 100], 50, ["False", "True", "True", "True"], None,
     set(), 3, 10),
    ("MissingMetricsScaleDownTargetOver100", 4, [1000, 1000, 2000, 2000], [200, 100, 100], 300,
     ["False", "True", "True", "True"], None, set(), 2, 6),
    ("DuringRollingUpdateWithMaxSurge", 2, [1000] * 3, [100, 100], 50, None, None, set(), 2, 10),
]


@pytest.mark.parametrize(("current", "requests", "levels", "target", "ready", "phases", "hot", "want", "util"),
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
async def test_replica_calculator_upstream_cases(real_api: Any, current: int, requests: list[int],
                                                 levels: list[int], target: int, ready: list[str] | None,
                                                 phases: list[str] | None, hot: set[int], want: int,
                                                 util: int) -> None:
    pods = await store_pods(real_api, requests=requests, ready=ready, phases=phases, hot=hot)
    p = calc_utilization_replicas(current, target, pods, samples(real_api, levels), "cpu", None, real_api.clock.now())
    assert (p.replicas, p.utilization) == (want, util)


async def test_replica_calculator_errors(real_api: Any) -> None:
    pods = await store_pods(real_api, requests=[1000] * 3)
    with pytest.raises(MetricError, match="unable to get metrics for resource cpu: no metrics returned from "
                                          "resource metrics API"):
        calc_utilization_replicas(4, 100, pods, {}, "cpu", None, real_api.clock.now())

async def test_replica_calculator_empty_cpu_request(real_api: Any) -> None:
    pods = await store_pods(real_api, requests=[None])
    with pytest.raises(MetricError, match="missing request for cpu in container c0 of Pod pod-0"):
        calc_utilization_replicas(1, 100, pods, samples(real_api, [200]), "cpu", None, real_api.clock.now())


async def test_average_value_tolerance_and_scale_up(real_api: Any) -> None:
    pods = await store_pods(real_api, requests=[1000] * 3)
    now = real_api.clock.now()
    # 20000/21000/21000 against 20000 is inside the 0.1 tolerance (upstream TestReplicaCalcToleranceCM)
    assert calc_average_value_replicas(3, 20000, pods, samples(real_api, [20000, 21000, 21000]), "cpu",
                                       now).replicas == 3
    p = calc_average_value_replicas(3, 200, pods, samples(real_api, [400, 400, 400]), "cpu", now)
    assert (p.replicas, p.raw_average) == (6, 400)


def test_behavior_default_scale_up_is_max_of_4_pods_and_100_percent_per_15s() -> None:
    lim = limit_with_behavior(3, 10, 3, 20, {}, [], [], now=100.0)
    assert (lim.replicas, lim.reason) == (7, "ScaleUpLimit")  # max(3 + 4, 3 * 2)
    # 4 pods were added 5 s ago: the period starts from 3 again, nothing more is allowed yet
    lim = limit_with_behavior(7, 10, 3, 20, {}, [ScaleEvent(4, 95.0)], [], now=100.0)
    assert (lim.replicas, lim.reason) == (7, "ScaleUpLimit")
    lim = limit_with_behavior(7, 20, 3, 9, {}, [ScaleEvent(4, 80.0)], [], now=100.0)
    assert (lim.replicas, lim.reason) == (9, "TooManyReplicas")


@pytest.mark.parametrize(("rules", "want", "reason"), [
    ({"policies": [{"type": "Percent", "value": 50, "periodSeconds": 60}]}, 5, "ScaleDownLimit"),
    ({"policies": [{"type": "Pods", "value": 2, "periodSeconds": 60},
                   {"type": "Percent", "value": 50, "periodSeconds": 60}], "selectPolicy": "Min"}, 8, "ScaleDownLimit"),
    ({"policies": [{"type": "Pods", "value": 2, "periodSeconds": 60},
                   {"type": "Percent", "value": 50, "periodSeconds": 60}], "selectPolicy": "Max"}, 5, "ScaleDownLimit"),
    ({"selectPolicy": "Disabled"}, 10, "ScaleDownLimit"),
    ({"policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}, 2, "TooFewReplicas"),
])
def test_behavior_scale_down_policies(rules: dict[str, Any], want: int, reason: str) -> None:
    lim = limit_with_behavior(10, 1, 2, 20, {"scaleDown": rules}, [], [], now=100.0)
    assert (lim.replicas, lim.reason) == (want, reason)


def test_legacy_rules_without_behavior() -> None:
    assert (limit_legacy(1, 10, 1, 20).replicas, limit_legacy(1, 10, 1, 20).reason) == (4, "ScaleUpLimit")
    assert (limit_legacy(5, 30, 1, 8).replicas, limit_legacy(5, 30, 1, 8).reason) == (8, "TooManyReplicas")
    assert limit_legacy(5, 0, 2, 8).reason == "TooFewReplicas"


def deployment(replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def hpa(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 3, "maxReplicas": 9,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": 50}}}], **spec}}


async def controller(c: Any, nodes: list[str]) -> HorizontalPodAutoscalerController:
    src = UsageSource(pods=c.informer(PODS), services=c.informer(SERVICES), endpoints=c.informer(ENDPOINTS),
                      node_names=lambda: nodes, clock=c.clock)
    ctrl = HorizontalPodAutoscalerController(c, c, usage=src, clock=c.clock, sync_period=1.0)
    c.spawn(ctrl.recorder.run(), "hpa-events")
    return ctrl


def cond(obj: dict[str, Any], ctype: str) -> tuple[str, str]:
    c = next(x for x in obj["status"]["conditions"] if x["type"] == ctype)
    return c["status"], c["reason"]


async def test_controller_scales_the_deployment_through_scale_and_reports(real_api: Any) -> None:
    c = real_api
    ctrl = await controller(c, ["n1"])
    await c.create(DEPLOYMENTS, deployment(3), "default")
    await store_pods(c, requests=[200] * 3, annotations={CPU_USAGE: "320m"})
    await c.create(HPAS, hpa(), "default")
    await c.settle()
    await ctrl.sync("default/web")
    dep = await c.get(DEPLOYMENTS, "web", "default")
    assert dep["spec"]["replicas"] == 6  # 160 % of 50 % wants 10; no behavior: max(2 x 3, 4)
    await c.settle()
    got = await c.get(HPAS, "web", "default")
    assert got["status"]["desiredReplicas"] == 6
    assert got["status"]["currentMetrics"][0]["resource"]["current"] == {"averageUtilization": 160,
                                                                         "averageValue": "320m"}
    assert cond(got, "AbleToScale") == ("True", "SucceededRescale")
    assert cond(got, "ScalingActive") == ("True", "ValidMetricFound")
    assert cond(got, "ScalingLimited") == ("True", "ScaleUpLimit")
    events = [e for e in (await c.list(EVENTS, "default"))["items"] if e["involvedObject"].get("kind") ==
              "HorizontalPodAutoscaler"]
    assert any(e["reason"] == "SuccessfulRescale" and e["message"] == "New size: 6; reason: cpu resource "
               "utilization (percentage of request) above target" for e in events)


async def test_scale_down_waits_for_the_stabilization_window(real_api: Any) -> None:
    c = real_api
    ctrl = await controller(c, ["n1"])
    await c.create(DEPLOYMENTS, deployment(6), "default")
    await store_pods(c, requests=[200] * 6, annotations={CPU_USAGE: "100m"})
    await c.create(HPAS, hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 60}}), "default")
    await c.settle()
    await ctrl.sync("default/web")  # 50 %: inside the tolerance, recommendation 6
    pods = (await c.list(PODS, "default"))["items"]
    for p in pods:  # the load drops to 10 %
        p["metadata"]["annotations"][CPU_USAGE] = "20m"
        await c.update(PODS, p)
    await c.settle()
    c.clock.advance(30)
    await ctrl.sync("default/web")
    assert (await c.get(DEPLOYMENTS, "web", "default"))["spec"]["replicas"] == 6  # the 60 s window holds 6
    await c.settle()
    assert cond(await c.get(HPAS, "web", "default"), "AbleToScale") == ("True", "ScaleDownStabilized")
    c.clock.advance(31)
    await ctrl.sync("default/web")
    assert (await c.get(DEPLOYMENTS, "web", "default"))["spec"]["replicas"] == 3  # min


async def test_missing_metrics_set_scaling_active_false_and_warn(real_api: Any) -> None:
    c = real_api
    ctrl = await controller(c, [])  # no live simulated node: no samples at all
    await c.create(DEPLOYMENTS, deployment(3), "default")
    await store_pods(c, requests=[200] * 3)
    await c.create(HPAS, hpa(), "default")
    await c.settle()
    await ctrl.sync("default/web")
    await c.settle()
    got = await c.get(HPAS, "web", "default")
    assert cond(got, "ScalingActive") == ("False", "FailedGetResourceMetric")
    msg = next(x for x in got["status"]["conditions"] if x["type"] == "ScalingActive")["message"]
    assert msg == ("the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get "
                   "metrics for resource cpu: no metrics returned from resource metrics API")
    assert (await c.get(DEPLOYMENTS, "web", "default"))["spec"]["replicas"] == 3
    reasons = {e["reason"] for e in (await c.list(EVENTS, "default"))["items"]}
    assert {"FailedGetResourceMetric", "FailedComputeMetricsReplicas"} <= reasons


async def test_missing_target_reports_failed_get_scale(real_api: Any) -> None:
    c = real_api
    ctrl = await controller(c, ["n1"])
    await c.create(HPAS, hpa(), "default")
    await c.settle()
    await ctrl.sync("default/web")
    await c.settle()
    assert cond(await c.get(HPAS, "web", "default"), "AbleToScale") == ("False", "FailedGetScale")
