"""apiregistration.k8s.io/v1 wire types: APIService (layer L2, upstream kube-aggregator).

Every built-in group-version is listed as a local APIService (no `spec.service`,
condition Available=True reason Local), as kube-apiserver's autoregistration does; APIServices
users create are stored, but minik3s does not proxy to aggregated API servers.
"""

from __future__ import annotations

from minik3s.api.meta import K8sModel, TypedObject


class APIServiceServiceReference(K8sModel):
    namespace: str | None = None
    name: str | None = None
    port: int | None = None


class APIServiceSpec(K8sModel):
    service: APIServiceServiceReference | None = None
    group: str | None = None
    version: str | None = None
    insecureSkipTLSVerify: bool | None = None
    caBundle: str | None = None
    groupPriorityMinimum: int = 0
    versionPriority: int = 0


class APIServiceCondition(K8sModel):
    type: str = ""
    status: str = ""
    lastTransitionTime: str | None = None
    reason: str | None = None
    message: str | None = None


class APIServiceStatus(K8sModel):
    conditions: list[APIServiceCondition] | None = None


class APIService(TypedObject):
    spec: APIServiceSpec | None = None
    status: APIServiceStatus | None = None


# kube-apiserver's priorities for its own group-versions (controlplane apiVersionPriorities):
# (groupPriorityMinimum, versionPriority); unknown ones get (1000, 15), alpha versions 9 → 1
_PRIORITIES: dict[str, tuple[int, int]] = {
    "": (18000, 1), "apiregistration.k8s.io": (18000, 15), "apps": (17800, 15), "events.k8s.io": (17750, 15),
    "authentication.k8s.io": (17700, 15), "authorization.k8s.io": (17600, 15), "autoscaling": (17500, 15),
    "batch": (17400, 15), "certificates.k8s.io": (17300, 15), "networking.k8s.io": (17200, 15),
    "policy": (17100, 15), "rbac.authorization.k8s.io": (17000, 15), "storage.k8s.io": (16800, 15),
    "apiextensions.k8s.io": (16700, 15), "admissionregistration.k8s.io": (16700, 15),
    "scheduling.k8s.io": (16600, 15), "coordination.k8s.io": (16500, 15), "node.k8s.io": (16300, 15),
    "discovery.k8s.io": (16200, 15),
}
AUTOMANAGED_LABEL = "kube-aggregator.kubernetes.io/automanaged"


def local_apiservice(group: str, version: str) -> dict[str, object]:
    """The APIService kube-apiserver registers for one of its own group-versions."""
    gp, vp = _PRIORITIES.get(group, (1000, 15))
    if "alpha" in version:
        vp = 1
    elif "beta" in version:
        vp = 9
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": f"{version}.{group}", "labels": {AUTOMANAGED_LABEL: "onstart"}},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": gp, "versionPriority": vp}}


def crd_apiservice(group: str, version: str) -> dict[str, object]:
    """The APIService kube-apiserver's CRD registration controller keeps for a group-version
    some CustomResourceDefinition serves: low group priority, one version priority for all (CRD
    versions sort by their names), managed continuously (removed with the last such CRD)."""
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": f"{version}.{group}", "labels": {AUTOMANAGED_LABEL: "true"}},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": 1000, "versionPriority": 100}}


def local_available_status(now: str) -> dict[str, object]:
    return {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": now,
                            "reason": "Local", "message": "Local APIServices are always available"}]}
