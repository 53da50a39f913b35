"""meta.k8s.io/v1 wire types shared by every kind (layer L2).

Why: the pydantic models describe the served schema for three consumers: (a) the unknown-field
walk behind `fieldValidation=Strict|Warn` (apiserver/strategies/schema.py), (b) OpenAPI
generation (`model_json_schema`), (c) tests and tools that want typed access. They are not on
the request hot path: objects travel as plain dicts and are validated by hand-written checks.

Field names are the wire (camelCase) names themselves, so the schema is the JSON; fields that
are not Python identifiers use an alias.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

Quantity = str | int | float
IntOrString = int | str


class K8sModel(BaseModel):
    """Base: accept the wire names, keep unknown fields (they round-trip in stored objects)."""

    model_config = ConfigDict(
        populate_by_name=True, extra="allow", protected_namespaces=(), defer_build=True
    )


class OwnerReference(K8sModel):
    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    blockOwnerDeletion: bool | None = None


class ManagedFieldsEntry(K8sModel):
    manager: str | None = None
    operation: str | None = None
    apiVersion: str | None = None
    time: str | None = None
    fieldsType: str | None = None
    fieldsV1: dict[str, Any] | None = None
    subresource: str | None = None


class ObjectMeta(K8sModel):
    name: str | None = None
    generateName: str | None = None
    namespace: str | None = None
    selfLink: str | None = None
    uid: str | None = None
    resourceVersion: str | None = None
    generation: int | None = None
    creationTimestamp: str | None = None
    deletionTimestamp: str | None = None
    deletionGracePeriodSeconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    ownerReferences: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managedFields: list[ManagedFieldsEntry] | None = None


class ListMeta(K8sModel):
    selfLink: str | None = None
    resourceVersion: str | None = None
    # `continue` is a Python keyword
    continue_: str | None = Field(default=None, alias="continue")
    remainingItemCount: int | None = None


class LabelSelectorRequirement(K8sModel):
    key: str
    operator: str
    values: list[str] | None = None


class LabelSelector(K8sModel):
    matchLabels: dict[str, str] | None = None
    matchExpressions: list[LabelSelectorRequirement] | None = None


class Condition(K8sModel):
    type: str
    status: str
    observedGeneration: int | None = None
    lastTransitionTime: str | None = None
    reason: str | None = None
    message: str | None = None


class Preconditions(K8sModel):
    uid: str | None = None
    resourceVersion: str | None = None


class DeleteOptions(K8sModel):
    """meta/v1 DeleteOptions, as a body field (policy/v1 Eviction.deleteOptions)."""

    kind: str | None = None
    apiVersion: str | None = None
    gracePeriodSeconds: int | None = None
    preconditions: Preconditions | None = None
    orphanDependents: bool | None = None
    propagationPolicy: str | None = None
    dryRun: list[str] | None = None
    ignoreStoreReadErrorWithClusterBreakingPotential: bool | None = None


class TypedObject(K8sModel):
    """Every top-level object: apiVersion, kind, metadata."""

    apiVersion: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
