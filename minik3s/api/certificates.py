"""certificates.k8s.io/v1 wire types: CertificateSigningRequest (layer L2, upstream
k8s.io/api/certificates/v1).

Stored, validated and approvable (the `approval` subresource sets Approved/Denied
conditions); minik3s runs no signer, so `status.certificate` stays empty unless a client
signs and writes it through `status`.
"""

from __future__ import annotations

from minik3s.api.meta import K8sModel, TypedObject


class CertificateSigningRequestSpec(K8sModel):
    request: str = ""
    signerName: str = ""
    expirationSeconds: int | None = None
    usages: list[str] | None = None
    username: str | None = None
    uid: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None


class CertificateSigningRequestCondition(K8sModel):
    type: str = ""
    status: str = ""
    reason: str | None = None
    message: str | None = None
    lastUpdateTime: str | None = None
    lastTransitionTime: str | None = None


class CertificateSigningRequestStatus(K8sModel):
    conditions: list[CertificateSigningRequestCondition] | None = None
    certificate: str | None = None


class CertificateSigningRequest(TypedObject):
    spec: CertificateSigningRequestSpec | None = None
    status: CertificateSigningRequestStatus | None = None
