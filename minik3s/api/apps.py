"""apps/v1 wire types: Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision, and the
autoscaling/v1 Scale of the scale subresource (layer L2). See minik3s.api.meta for why models exist."""

from __future__ import annotations

from typing import Any, Literal

from minik3s.api.core import PersistentVolumeClaim, PodTemplateSpec
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


class ReplicaSetCondition(K8sModel):
    type: str
    status: str
    lastTransitionTime: str | None = None
    reason: str | None = None
    message: str | None = None


class ReplicaSetStatus(K8sModel):
    replicas: int = 0
    fullyLabeledReplicas: int | None = None
    readyReplicas: int | None = None
    availableReplicas: int | None = None
    terminatingReplicas: int | None = None
    observedGeneration: int | None = None
    conditions: list[ReplicaSetCondition] | None = None


class ReplicaSet(TypedObject):
    spec: ReplicaSetSpec | None = None
    status: ReplicaSetStatus | None = None


class StatefulSetOrdinals(K8sModel):
    start: int | None = None


class StatefulSetPersistentVolumeClaimRetentionPolicy(K8sModel):
    whenDeleted: str | None = None
    whenScaled: str | None = None


class RollingUpdateStatefulSetStrategy(K8sModel):
    partition: int | None = None
    maxUnavailable: IntOrString | None = None


class StatefulSetUpdateStrategy(K8sModel):
    type: str | None = None
    rollingUpdate: RollingUpdateStatefulSetStrategy | None = None


class StatefulSetSpec(K8sModel):
    replicas: int | None = None
    selector: LabelSelector
    template: PodTemplateSpec
    volumeClaimTemplates: list[PersistentVolumeClaim] | None = None
    serviceName: str | None = None
    podManagementPolicy: str | None = None
    updateStrategy: StatefulSetUpdateStrategy | None = None
    revisionHistoryLimit: int | None = None
    minReadySeconds: int | None = None
    persistentVolumeClaimRetentionPolicy: StatefulSetPersistentVolumeClaimRetentionPolicy | None = None
    ordinals: StatefulSetOrdinals | None = None


class StatefulSetCondition(K8sModel):
    type: str
    status: str
    lastTransitionTime: str | None = None
    reason: str | None = None
    message: str | None = None


class StatefulSetStatus(K8sModel):
    observedGeneration: int | None = None
    replicas: int
    readyReplicas: int | None = None
    currentReplicas: int | None = None
    updatedReplicas: int | None = None
    currentRevision: str | None = None
    updateRevision: str | None = None
    collisionCount: int | None = None
    conditions: list[StatefulSetCondition] | None = None
    availableReplicas: int | None = None


class StatefulSet(TypedObject):
    spec: StatefulSetSpec | None = None
    status: StatefulSetStatus | None = None


class RollingUpdateDaemonSet(K8sModel):
    maxUnavailable: IntOrString | None = None
    maxSurge: IntOrString | None = None


class DaemonSetUpdateStrategy(K8sModel):
    type: str | None = None
    rollingUpdate: RollingUpdateDaemonSet | None = None


class DaemonSetSpec(K8sModel):
    selector: LabelSelector
    template: PodTemplateSpec
    updateStrategy: DaemonSetUpdateStrategy | None = None
    minReadySeconds: int | None = None
    revisionHistoryLimit: int | None = None


class DaemonSetCondition(K8sModel):
    type: str
    status: str
    lastTransitionTime: str | None = None
    reason: str | None = None
    message: str | None = None


class DaemonSetStatus(K8sModel):
    currentNumberScheduled: int
    numberMisscheduled: int
    desiredNumberScheduled: int
    numberReady: int
    observedGeneration: int | None = None
    updatedNumberScheduled: int | None = None
    numberAvailable: int | None = None
    numberUnavailable: int | None = None
    collisionCount: int | None = None
    conditions: list[DaemonSetCondition] | None = None


class DaemonSet(TypedObject):
    spec: DaemonSetSpec | None = None
    status: DaemonSetStatus | None = None


class ControllerRevision(TypedObject):
    """`data` is a runtime.RawExtension: any JSON value, kept as written."""

    data: Any = None
    revision: int


class ScaleSpec(K8sModel):
    """autoscaling/v1 ScaleSpec."""

    replicas: int | None = None


class ScaleStatus(K8sModel):
    """autoscaling/v1 ScaleStatus."""

    replicas: int
    selector: str | None = None


class Scale(TypedObject):
    """autoscaling/v1 Scale (the scale subresource's body)."""

    spec: ScaleSpec | None = None
    status: ScaleStatus | None = None
