"""coordination.k8s.io/v1 wire types: Lease (layer L2)."""

from __future__ import annotations

from minik3s.api.meta import K8sModel, TypedObject


class LeaseSpec(K8sModel):
    holderIdentity: str | None = None
    leaseDurationSeconds: int | None = None
    acquireTime: str | None = None
    renewTime: str | None = None
    leaseTransitions: int | None = None
    strategy: str | None = None
    preferredHolder: str | None = None


class Lease(TypedObject):
    spec: LeaseSpec | None = None
