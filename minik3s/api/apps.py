"""apps/v1 wire types: Deployment, ReplicaSet (layer L2). See minik3s.api.meta for why models exist."""

from __future__ import annotations

from typing import Any, Literal

from minik3s.api.core import PodTemplateSpec
from minik3s.api.meta import IntOrString, K8sModel, LabelSelector, TypedObject


class RollingUpdateDeployment(K8sModel):
    maxUnavailable: IntOrString | None = None
    maxSurge: IntOrString | None = None


class DeploymentStrategy(K8sModel):
    type: Literal["Recreate", "RollingUpdate"] | None = None
    rollingUpdate: RollingUpdateDeployment | None = None


class DeploymentSpec(K8sModel):
    replicas: int | None = None
    selector: LabelSelector
    template: PodTemplateSpec
    strategy: DeploymentStrategy | None = None
    minReadySeconds: int | None = None
    revisionHistoryLimit: int | None = None
    paused: bool | None = None
    progressDeadlineSeconds: int | None = None


class AppsCondition(K8sModel):
    type: str
    status: str
    lastUpdateTime: str | None = None
    lastTransitionTime: str | None = None
    reason: str | None = None
    message: str | None = None


class DeploymentStatus(K8sModel):
    observedGeneration: int | None = None
    replicas: int | None = None
    updatedReplicas: int | None = None
    readyReplicas: int | None = None
    availableReplicas: int | None = None
    unavailableReplicas: int | None = None
    terminatingReplicas: int | None = None
    conditions: list[AppsCondition] | None = None
    collisionCount: int | None = None


class Deployment(TypedObject):
    spec: DeploymentSpec | None = None
    status: DeploymentStatus | None = None


class ReplicaSetSpec(K8sModel):
    replicas: int | None = None
    minReadySeconds: int | None = None
    selector: LabelSelector
    template: PodTemplateSpec | None = None


class ReplicaSetStatus(K8sModel):
    replicas: int = 0
    fullyLabeledReplicas: int | None = None
    readyReplicas: int | None = None
    availableReplicas: int | None = None
    terminatingReplicas: int | None = None
    observedGeneration: int | None = None
    conditions: list[AppsCondition] | None = None


class ReplicaSet(TypedObject):
    spec: ReplicaSetSpec | None = None
    status: ReplicaSetStatus | None = None


class Scale(TypedObject):
    spec: dict[str, Any] | None = None
    status: dict[str, Any] | None = None
