"""Per-kind defaulting, validation, create/update rules and admission (layer L4, apiserver).

Row of the architecture table: "add an API kind or field" -> `minik3s/api/<group>.py` + the
resources table + `apiserver/strategies/<kind>.py`; tests in `tests/apiserver/strategies/`.

Data flow (create): handler decodes -> `strategy_for(group, kind).default(obj)` ->
`prepare_for_create(obj)` -> `await admit(...)` (mutating: priority, tolerations) ->
`validate(obj)` -> storage. Updates use `prepare_for_update(new, old)` and
`validate_update(new, old)`; the status subresource `prepare_for_status_update` and
`validate_status_update`. Validation returns causes; the handler raises
`minik3s.api.errors.invalid(kind, name, causes)` when there are any.

Unknown fields (fieldValidation): `unknown_fields(group, kind, obj)` lists dotted paths not in
the schema (`spec.containers[0].bar`); `decode_fields_for(info, obj)` drops them and writes
quantities canonically, in one walk (every write).

Registry hooks: every kind's behaviour inside the generic verbs (what DELETE returns, graceful
deletion, allocation, CRD life cycle, its own subresources) is a hook or attribute of its
Strategy (see `base.Strategy`); the hooks reach the registry only through `rest.RegistryOps`.
Adding a kind = its strategy (here, registered in `_builtin`) + a row of the resources table.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache

from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict

from .admission import DefaultPriorityClass, Lookup, ServiceAccountAdmission, admit
from .admissionregistration import (
    MutatingWebhookConfigurationStrategy,
    ValidatingAdmissionPolicyBindingStrategy,
    ValidatingAdmissionPolicyStrategy,
    ValidatingWebhookConfigurationStrategy,
)
from .apiregistration import APIServiceStrategy
from .apps import (
    DaemonSetStrategy,
    DeploymentStrategy,
    PodTemplateStrategy,
    ReplicaSetStrategy,
    ReplicationControllerStrategy,
    StatefulSetStrategy,
)
from .autoscaling import HorizontalPodAutoscalerStrategy
from .base import Strategy
from .batch import CronJobStrategy, JobStrategy
from .certificates import CertificateSigningRequestStrategy
from .custom import default_custom, prune_custom, unknown_custom, validate_custom
from .endpoints import EndpointSliceStrategy, EndpointsStrategy
from .flowcontrol import FlowSchemaStrategy, PriorityLevelConfigurationStrategy
from .generic import (
    BindingStrategy,
    ConfigMapStrategy,
    CustomResourceDefinitionStrategy,
    CustomResourceStrategy,
    EventStrategy,
    EventsV1Strategy,
    GenericStrategy,
    LeaseStrategy,
    LimitRangeStrategy,
    SecretStrategy,
)
from .namespace import NamespaceStrategy
from .networking import IngressClassStrategy, IngressStrategy, NetworkPolicyStrategy
from .node import NodeStrategy
from .pod import PodStrategy
from .policy import PodDisruptionBudgetStrategy
from .rbac import ClusterRoleBindingStrategy, ClusterRoleStrategy, RoleBindingStrategy, RoleStrategy
from .resource_quota import ResourceQuotaAdmission, ResourceQuotaStrategy
from .runtime_class import RuntimeClassStrategy
from .scheduling import PriorityClassStrategy
from .schema import SchemaIndex
from .service import ServiceStrategy
from .service_account import ServiceAccountStrategy
from .service_cidr import IPAddressStrategy, ServiceCIDRStrategy
from .storage import (
    CSIDriverStrategy,
    CSINodeStrategy,
    CSIStorageCapacityStrategy,
    PersistentVolumeClaimStrategy,
    PersistentVolumeStrategy,
    StorageClassStrategy,
    VolumeAttachmentStrategy,
)
from .workload import WorkloadStrategy

__all__ = [
    "DefaultPriorityClass",
    "Lookup",
    "Strategy",
    "decode_error",
    "strategy_for_resource",
    "type_error_for",
    "unknown_fields_for",
    "decode_fields_for",
    "CustomResourceStrategy",
    "ResourceQuotaAdmission",
    "ServiceAccountAdmission",
    "admit",
    "custom_strategy",
    "default_custom",
    "prune_custom",
    "strategy_for",
    "type_error",
    "unknown_fields",
    "validate_custom",
]


@cache
def _builtin() -> dict[tuple[str, str], Strategy]:
    """Stateless strategy singletons per (group, kind); built once, never mutated."""
    with_status: set[tuple[str, str]] = set()
    table: dict[tuple[str, str], Strategy] = {
        ("", "Pod"): PodStrategy(),
        ("", "Node"): NodeStrategy(),
        ("", "Namespace"): NamespaceStrategy(),
        ("", "Service"): ServiceStrategy(),
        ("", "ConfigMap"): ConfigMapStrategy(),
        ("", "Secret"): SecretStrategy(),
        ("", "Event"): EventStrategy(),
        ("events.k8s.io", "Event"): EventsV1Strategy(),
        ("apps", "Deployment"): DeploymentStrategy(),
        ("apps", "ReplicaSet"): ReplicaSetStrategy(),
        ("apps", "StatefulSet"): StatefulSetStrategy(),
        ("apps", "DaemonSet"): DaemonSetStrategy(),
        ("", "ReplicationController"): ReplicationControllerStrategy(),
        ("batch", "Job"): JobStrategy(),
        ("batch", "CronJob"): CronJobStrategy(),
        ("policy", "PodDisruptionBudget"): PodDisruptionBudgetStrategy(),
        ("scheduling.k8s.io", "PriorityClass"): PriorityClassStrategy(),
        ("node.k8s.io", "RuntimeClass"): RuntimeClassStrategy(),
        ("autoscaling", "HorizontalPodAutoscaler"): HorizontalPodAutoscalerStrategy(),
        ("scheduling.k8s.io", "Workload"): WorkloadStrategy(),
        ("coordination.k8s.io", "Lease"): LeaseStrategy(),
        ("apiextensions.k8s.io", "CustomResourceDefinition"): CustomResourceDefinitionStrategy(),
        ("", "PersistentVolumeClaim"): PersistentVolumeClaimStrategy(),
        ("", "PersistentVolume"): PersistentVolumeStrategy(),
        ("", "ResourceQuota"): ResourceQuotaStrategy(),
        ("", "Binding"): BindingStrategy(),
        # upstream storages with ReturnDeletedObject: true (pods, services, namespaces above)
        ("", "ServiceAccount"): ServiceAccountStrategy(),  # with serviceaccounts/token
        # upstream strategies with AllowCreateOnUpdate: true (leases, events above)
        ("", "Endpoints"): EndpointsStrategy(),
        ("discovery.k8s.io", "EndpointSlice"): EndpointSliceStrategy(),
        ("", "LimitRange"): LimitRangeStrategy(),
        ("", "PodTemplate"): PodTemplateStrategy(),
        ("rbac.authorization.k8s.io", "Role"): RoleStrategy(),
        ("rbac.authorization.k8s.io", "ClusterRole"): ClusterRoleStrategy(),
        ("rbac.authorization.k8s.io", "RoleBinding"): RoleBindingStrategy(),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"): ClusterRoleBindingStrategy(),
        ("networking.k8s.io", "Ingress"): IngressStrategy(),
        ("networking.k8s.io", "IngressClass"): IngressClassStrategy(),
        ("networking.k8s.io", "ServiceCIDR"): ServiceCIDRStrategy(),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"): FlowSchemaStrategy(),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): PriorityLevelConfigurationStrategy(),
        ("networking.k8s.io", "IPAddress"): IPAddressStrategy(),
        ("networking.k8s.io", "NetworkPolicy"): NetworkPolicyStrategy(),
        ("storage.k8s.io", "StorageClass"): StorageClassStrategy(),
        ("storage.k8s.io", "CSIDriver"): CSIDriverStrategy(),
        ("storage.k8s.io", "CSINode"): CSINodeStrategy(),
        ("storage.k8s.io", "CSIStorageCapacity"): CSIStorageCapacityStrategy(),
        ("storage.k8s.io", "VolumeAttachment"): VolumeAttachmentStrategy(),
        ("certificates.k8s.io", "CertificateSigningRequest"): CertificateSigningRequestStrategy(),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): ValidatingWebhookConfigurationStrategy(),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): MutatingWebhookConfigurationStrategy(),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): ValidatingAdmissionPolicyStrategy(),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"):
            ValidatingAdmissionPolicyBindingStrategy(),
        ("apiregistration.k8s.io", "APIService"): APIServiceStrategy(),
    }
    for group, kind in with_status:
        table[(group, kind)] = GenericStrategy(kind, group, has_status=True, tracks_generation=True)
    return table


def strategy_for(group: str, kind: str, *, resource: ResourceInfo | None = None) -> Strategy:
    """The strategy of a kind. For custom resources pass `resource` (its ResourceInfo, with
    `crd_schema` and `subresources`) to get schema defaulting/validation; without it an
    unknown kind gets the generic strategy."""
    s = _builtin().get((group, kind))
    if s is not None:
        return s
    if resource is not None and not resource.builtin:
        return custom_strategy(resource)
    return GenericStrategy(kind, group)


def custom_strategy(resource: ResourceInfo) -> CustomResourceStrategy:
    return CustomResourceStrategy(
        resource.kind, resource.group, schema=resource.crd_schema,
        has_status="status" in resource.subresources, namespaced=resource.namespaced,
    )


@cache
def _schema_index() -> SchemaIndex:
    return SchemaIndex()


def type_error(group: str, kind: str, obj: JsonDict) -> str | None:
    """Go's JSON decoding error for the first wrongly typed value of a built-in kind, or None."""
    return _schema_index().type_error(group, kind, obj)


def unknown_fields(group: str, kind: str, obj: JsonDict, *, schema: JsonDict | None = None) -> list[str]:
    """Dotted paths of fields the schema does not define, sorted. Built-in kinds use the wire
    models; a custom resource uses `schema` (its openAPIV3Schema), [] without one."""
    if schema is not None:
        return sorted(unknown_custom(obj, schema))
    return _schema_index().unknown_fields(group, kind, obj)


def strategy_for_resource(info: ResourceInfo) -> Strategy:
    """The strategy serving a resource: a built-in kind's, or the schema-driven one of a
    custom resource (from its ResourceInfo)."""
    if info.builtin:
        return strategy_for(info.group, info.kind)
    return strategy_for(info.group, info.kind, resource=info)


def type_error_for(info: ResourceInfo, obj: object, *, only: Collection[str] | None = None) -> str | None:
    """Go's `json: cannot unmarshal ...` for the first wrongly typed value (built-in kinds), or None.

    `only` limits the walk to these top-level fields, for a patched object whose other fields
    are the stored object's own (decoded and checked when they were written): the patch's
    fields are walked whole, so every value the request brought is still checked, and the
    first error found is the one the full walk would report."""
    if not info.builtin or not isinstance(obj, dict):
        return None
    if only is not None:
        obj = {k: v for k, v in obj.items() if k in only}
    return type_error(info.group, info.kind, obj)


def decode_error(info: ResourceInfo, obj: object) -> str | None:
    """What kube-apiserver's decoder says about a body with a wrongly typed value (built-in kinds):
    `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal ...`."""
    err = type_error_for(info, obj)
    if err is None or not isinstance(obj, dict):
        return None
    return f"{decoded_as(info, obj)}: {err}"


def decoded_as(info: ResourceInfo, obj: JsonDict) -> str:
    """The head of the create/update handlers' transformDecodeError: the body's own kind and
    version, then the kind the resource stores: `ConfigMap in version "v1" cannot be handled
    as a ConfigMap`."""
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) and obj.get("kind") else info.kind
    api_version = obj.get("apiVersion") if isinstance(obj.get("apiVersion"), str) else ""
    version = api_version.rsplit("/", 1)[-1] if api_version else info.version
    return f'{kind} in version "{version}" cannot be handled as a {info.kind}'


def decode_fields_for(info: ResourceInfo, obj: JsonDict) -> list[str]:
    """What decoding a request's object does before any strategy sees it, in one walk: drop
    the fields the resource's schema does not specify (the wire model of a built-in kind, the
    structural schema of a custom resource: apiextensions pruning, where
    `x-kubernetes-preserve-unknown-fields` keeps a subtree and `apiVersion`/`kind`/`metadata`
    are kept) and write a built-in kind's quantities canonically (`cpu: 1.5` -> `"1500m"`,
    `0.5Gi` -> `"512Mi"`, as decoding into resource.Quantity and encoding again writes them).
    Returns the dropped paths, sorted (fieldValidation's warnings or errors)."""
    if not info.builtin:
        if not info.crd_schema:
            return []
        return sorted(prune_custom(obj, info.crd_schema))
    return _schema_index().decode(info.group, info.kind, obj)


def unknown_fields_for(info: ResourceInfo, obj: JsonDict) -> list[str]:
    """unknown_fields for a resource: the wire model of a built-in kind, the CRD schema of a
    custom resource ([] without one)."""
    if not info.builtin:
        if not info.crd_schema:
            return []
        return unknown_fields(info.group, info.kind, obj, schema=info.crd_schema)
    return unknown_fields(info.group, info.kind, obj)
