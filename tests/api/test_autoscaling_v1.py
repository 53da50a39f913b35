"""autoscaling/v1 <-> v2 HorizontalPodAutoscaler conversion (upstream's conversion.go rules)."""

from __future__ import annotations

import json

import pytest

from minik3s.api.autoscaling_v1 import (
    BEHAVIOR_ANNOTATION,
    CONDITIONS_ANNOTATION,
    CURRENT_METRICS_ANNOTATION,
    METRICS_ANNOTATION,
    ConversionError,
    hpa_v1_to_v2,
    hpa_v2_to_v1,
)

REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


def _cpu(util: int) -> dict:
    return {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": util}}}


def test_v1_round_trips_identically_through_v2() -> None:
    v1 = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
          "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
          "spec": {"scaleTargetRef": REF, "minReplicas": 3, "maxReplicas": 9, "targetCPUUtilizationPercentage": 50}}
    v2 = hpa_v1_to_v2(v1)
    assert v2["apiVersion"] == "autoscaling/v2"
    assert v2["spec"]["metrics"] == [_cpu(50)]
    assert "annotations" not in v2["metadata"]
    assert hpa_v2_to_v1(v2) == v1


def test_v1_without_target_gets_the_explicit_80_percent_default() -> None:
    v2 = hpa_v1_to_v2({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "a"},
                       "spec": {"scaleTargetRef": REF, "maxReplicas": 4}})
    assert v2["spec"]["metrics"] == [_cpu(80)]
    assert hpa_v2_to_v1(v2)["spec"]["targetCPUUtilizationPercentage"] == 80


def test_v2_memory_metric_and_behavior_travel_in_annotations_and_back() -> None:
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 30, "selectPolicy": "Max",
                              "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}]}}
    memory = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue",
                                                                             "averageValue": "256Mi"}}}
    conditions = [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z",
                   "reason": "ReadyForNewScale", "message": "recommended size matches current size"}]
    current = [{"type": "Resource", "resource": {"name": "memory", "current": {"averageValue": "100Mi"}}},
               {"type": "Resource", "resource": {"name": "cpu", "current": {"averageValue": "120m",
                                                                            "averageUtilization": 60}}}]
    v2 = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
          "metadata": {"name": "web", "namespace": "default", "annotations": {"team": "a"}},
          "spec": {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 5, "metrics": [memory, _cpu(50)],
                   "behavior": behavior},
          "status": {"observedGeneration": 1, "currentReplicas": 2, "desiredReplicas": 2,
                     "currentMetrics": current, "conditions": conditions}}
    v1 = hpa_v2_to_v1(v2)
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"] == {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 5,
                          "targetCPUUtilizationPercentage": 50}
    assert v1["status"] == {"observedGeneration": 1, "currentReplicas": 2, "desiredReplicas": 2,
                            "currentCPUUtilizationPercentage": 60}
    ann = v1["metadata"]["annotations"]
    assert ann["team"] == "a"
    assert json.loads(ann[METRICS_ANNOTATION]) == [
        {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "256Mi"}}]
    assert json.loads(ann[CURRENT_METRICS_ANNOTATION])[1] == {
        "type": "Resource", "resource": {"name": "cpu", "currentAverageUtilization": 60, "currentAverageValue": "120m"}}
    assert json.loads(ann[BEHAVIOR_ANNOTATION]) == behavior
    assert json.loads(ann[CONDITIONS_ANNOTATION]) == conditions
    assert hpa_v1_to_v2(v1) == v2
    assert v2["metadata"]["annotations"] == {"team": "a"}  # the input was not changed


@pytest.mark.parametrize("metric", [
    {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
    {"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchLabels": {"q": "a"}}},
                                      "target": {"type": "Value", "value": "30"}}},
    {"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "s", "apiVersion": "v1"},
                                  "metric": {"name": "rps"}, "target": {"type": "Value", "value": "5"}}},
    {"type": "ContainerResource", "containerResource": {
        "name": "cpu", "container": "app", "target": {"type": "Utilization", "averageUtilization": 70}}},
])
def test_other_metric_kinds_round_trip(metric: dict) -> None:
    v2 = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "x"},
          "spec": {"scaleTargetRef": REF, "maxReplicas": 3, "metrics": [metric]}}
    v1 = hpa_v2_to_v1(v2)
    assert "targetCPUUtilizationPercentage" not in v1["spec"]
    assert METRICS_ANNOTATION in v1["metadata"]["annotations"]
    assert hpa_v1_to_v2(v1) == v2


def test_malformed_annotation_is_a_conversion_error() -> None:
    bad = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "x", "annotations": {METRICS_ANNOTATION: "{not json"}},
           "spec": {"scaleTargetRef": REF, "maxReplicas": 3}}
    with pytest.raises(ConversionError, match="autoscaling.alpha.kubernetes.io/metrics"):
        hpa_v1_to_v2(bad)
