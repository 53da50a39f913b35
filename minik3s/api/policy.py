"""policy/v1 wire types: PodDisruptionBudget, Eviction (layer L2)."""

from __future__ import annotations

from typing import Literal

from minik3s.api.meta import Condition, DeleteOptions, IntOrString, K8sModel, LabelSelector, TypedObject


class PodDisruptionBudgetSpec(K8sModel):
    minAvailable: IntOrString | None = None
    selector: LabelSelector | None = None
    maxUnavailable: IntOrString | None = None
    unhealthyPodEvictionPolicy: Literal["IfHealthyBudget", "AlwaysAllow"] | None = None


class PodDisruptionBudgetStatus(K8sModel):
    observedGeneration: int | None = None
    disruptedPods: dict[str, str] | None = None
    disruptionsAllowed: int = 0
    currentHealthy: int = 0
    desiredHealthy: int = 0
    expectedPods: int = 0
    conditions: list[Condition] | None = None


class PodDisruptionBudget(TypedObject):
    spec: PodDisruptionBudgetSpec | None = None
    status: PodDisruptionBudgetStatus | None = None


class Eviction(TypedObject):
    deleteOptions: DeleteOptions | None = None
