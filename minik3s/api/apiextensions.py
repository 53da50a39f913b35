"""apiextensions.k8s.io/v1 wire types: CustomResourceDefinition (layer L2).

`JSONSchemaProps` is kept as a free-form dict: the openAPIV3Schema of a CRD is interpreted by
apiserver/strategies/custom.py (validation, defaulting, pruning)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from minik3s.api.meta import K8sModel, TypedObject


class CustomResourceDefinitionNames(K8sModel):
    plural: str
    singular: str | None = None
    shortNames: list[str] | None = None
    kind: str
    listKind: str | None = None
    categories: list[str] | None = None


class CustomResourceValidation(K8sModel):
    openAPIV3Schema: dict[str, Any] | None = None


class CustomResourceColumnDefinition(K8sModel):
    name: str
    type: str
    format: str | None = None
    description: str | None = None
    priority: int | None = None
    jsonPath: str


class CustomResourceSubresources(K8sModel):
    status: dict[str, Any] | None = None
    scale: dict[str, Any] | None = None


class SelectableField(K8sModel):
    jsonPath: str


class CustomResourceDefinitionVersion(K8sModel):
    name: str
    served: bool
    storage: bool
    deprecated: bool | None = None
    deprecationWarning: str | None = None
    schema_: CustomResourceValidation | None = Field(default=None, alias="schema")
    subresources: CustomResourceSubresources | None = None
    additionalPrinterColumns: list[CustomResourceColumnDefinition] | None = None
    selectableFields: list[SelectableField] | None = None




class CustomResourceConversion(K8sModel):
    strategy: Literal["None", "Webhook"]
    webhook: dict[str, Any] | None = None


class CustomResourceDefinitionSpec(K8sModel):
    group: str
    names: CustomResourceDefinitionNames
    scope: Literal["Namespaced", "Cluster"]
    versions: list[CustomResourceDefinitionVersion]
    conversion: CustomResourceConversion | None = None
    preserveUnknownFields: bool | None = None


class CustomResourceDefinitionStatus(K8sModel):
    conditions: list[dict[str, Any]] | None = None
    acceptedNames: CustomResourceDefinitionNames | None = None
    storedVersions: list[str] | None = None


class CustomResourceDefinition(TypedObject):
    spec: CustomResourceDefinitionSpec | None = None
    status: CustomResourceDefinitionStatus | None = None
