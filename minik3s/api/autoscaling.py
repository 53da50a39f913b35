"""autoscaling/v2 wire types: HorizontalPodAutoscaler (layer L2), k8s.io/api/autoscaling/v2.

The spec names a target with a `/scale` subresource (`scaleTargetRef`), the replica bounds,
the metrics to track (this project measures `Resource` and `ContainerResource` cpu/memory; the
`Pods`, `Object` and `External` shapes are accepted on the wire as upstream defines them) and
the scaling `behavior`. Status is written by the HPA controller (minik3s/controllers/hpa.py).
"""

from __future__ import annotations

from minik3s.api.meta import K8sModel, LabelSelector, Quantity, TypedObject


class CrossVersionObjectReference(K8sModel):
    kind: str = ""
    name: str = ""
    apiVersion: str | None = None


class MetricTarget(K8sModel):
    type: str = ""
    value: Quantity | None = None
    averageValue: Quantity | None = None
    averageUtilization: int | None = None


class MetricIdentifier(K8sModel):
    name: str = ""
    selector: LabelSelector | None = None


class ResourceMetricSource(K8sModel):
    name: str = ""
    target: MetricTarget = MetricTarget()


class ContainerResourceMetricSource(K8sModel):
    name: str = ""
    target: MetricTarget = MetricTarget()
    container: str = ""


class PodsMetricSource(K8sModel):
    metric: MetricIdentifier = MetricIdentifier()
    target: MetricTarget = MetricTarget()


class ObjectMetricSource(K8sModel):
    describedObject: CrossVersionObjectReference = CrossVersionObjectReference()
    target: MetricTarget = MetricTarget()
    metric: MetricIdentifier = MetricIdentifier()


class ExternalMetricSource(K8sModel):
    metric: MetricIdentifier = MetricIdentifier()
    target: MetricTarget = MetricTarget()


class MetricSpec(K8sModel):
    type: str = ""
    object: ObjectMetricSource | None = None
    pods: PodsMetricSource | None = None
    resource: ResourceMetricSource | None = None
    containerResource: ContainerResourceMetricSource | None = None
    external: ExternalMetricSource | None = None


class HPAScalingPolicy(K8sModel):
    type: str = ""
    value: int = 0
    periodSeconds: int = 0


class HPAScalingRules(K8sModel):
    stabilizationWindowSeconds: int | None = None
    selectPolicy: str | None = None
    policies: list[HPAScalingPolicy] | None = None
    tolerance: Quantity | None = None


class HorizontalPodAutoscalerBehavior(K8sModel):
    scaleUp: HPAScalingRules | None = None
    scaleDown: HPAScalingRules | None = None


class HorizontalPodAutoscalerSpec(K8sModel):
    scaleTargetRef: CrossVersionObjectReference = CrossVersionObjectReference()
    minReplicas: int | None = None
    maxReplicas: int = 0
    metrics: list[MetricSpec] | None = None
    behavior: HorizontalPodAutoscalerBehavior | None = None


class MetricValueStatus(K8sModel):
    value: Quantity | None = None
    averageValue: Quantity | None = None
    averageUtilization: int | None = None


class ResourceMetricStatus(K8sModel):
    name: str = ""
    current: MetricValueStatus = MetricValueStatus()


class ContainerResourceMetricStatus(K8sModel):
    name: str = ""
    current: MetricValueStatus = MetricValueStatus()
    container: str = ""


class MetricStatus(K8sModel):
    type: str = ""
    resource: ResourceMetricStatus | None = None
    containerResource: ContainerResourceMetricStatus | None = None


class HorizontalPodAutoscalerCondition(K8sModel):
    type: str = ""
    status: str = ""
    lastTransitionTime: str | None = None
    reason: str | None = None
    message: str | None = None


class HorizontalPodAutoscalerStatus(K8sModel):
    observedGeneration: int | None = None
    lastScaleTime: str | None = None
    currentReplicas: int | None = None
    desiredReplicas: int = 0
    currentMetrics: list[MetricStatus] | None = None
    conditions: list[HorizontalPodAutoscalerCondition] | None = None


class HorizontalPodAutoscaler(TypedObject):
    spec: HorizontalPodAutoscalerSpec | None = None
    status: HorizontalPodAutoscalerStatus | None = None
