"""OpenAPI documents for kubectl (layer L4, apiserver; pure functions of the resource registry).

Why: `kubectl create -f`, `apply` and `replace` first read `/openapi/v3` and the group-version
document of the object's GV to decide whether the server validates fields itself (a PATCH
operation for the kind carrying a `fieldValidation` query parameter ⇒ kubectl sends
`fieldValidation=Strict` and skips client-side validation), and `kubectl explain` walks the
component schemas. Upstream builds these from Go types (kube-openapi); minik3s builds them from
the pydantic wire models in `minik3s.api.*` with its own walker, naming components upstream-style
(`io.k8s.api.core.v1.Pod`), tagging top-level kinds with `x-kubernetes-group-version-kind` and
adding the list/patch extensions (`x-kubernetes-patch-merge-key`, `x-kubernetes-list-type`, ...)
from a table of upstream struct tags. Custom resources use their CRD `openAPIV3Schema`.

Deliberate difference: PATCH operations carry no `requestBody`. If they listed
`application/strategic-merge-patch+json`, kubectl would compute strategic merge patches from these
schemas; without it kubectl uses its compiled-in Go types for built-in kinds (exactly upstream's
patch semantics) and JSON merge patch for custom resources, as observed against a stub.

Data flow: ResourceRegistry → `openapi_v3_root` / `openapi_v3_group_version` / `openapi_v2` →
plain dicts (deterministic; the caller serialises and caches them until the registry changes).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import re
import types
import typing
from typing import Any, Literal

from pydantic import BaseModel

from apiserver import openapi_descriptions
from minik3s.api.resources import ResourceInfo, ResourceRegistry
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

OPENAPI_VERSION = "3.0.0"
INFO = {"title": "Kubernetes", "version": "v1.33.0"}

META = "io.k8s.apimachinery.pkg.apis.meta.v1"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"

# python module of the wire models → upstream schema package
_MODULE_PACKAGES = {
    "minik3s.api.meta": META,
    "minik3s.api.core": "io.k8s.api.core.v1",
    "minik3s.api.apps": "io.k8s.api.apps.v1",
    "minik3s.api.batch": "io.k8s.api.batch.v1",
    "minik3s.api.policy": "io.k8s.api.policy.v1",
    "minik3s.api.scheduling": "io.k8s.api.scheduling.v1",
    "minik3s.api.coordination": "io.k8s.api.coordination.v1",
    "minik3s.api.node": "io.k8s.api.node.v1",
    "minik3s.api.autoscaling": "io.k8s.api.autoscaling.v2",
    "minik3s.api.apiextensions": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
    "minik3s.api.rbac": "io.k8s.api.rbac.v1",
    "minik3s.api.networking": "io.k8s.api.networking.v1",
    "minik3s.api.storage": "io.k8s.api.storage.v1",
    "minik3s.api.certificates": "io.k8s.api.certificates.v1",
    "minik3s.api.admissionregistration": "io.k8s.api.admissionregistration.v1",
    "minik3s.api.apiregistration": "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1",
}
# classes whose upstream name differs from the python one
_RENAMES = {
    ("minik3s.api.core", "EventsV1Event"): "io.k8s.api.events.v1.Event",
    ("minik3s.api.apps", "Scale"): "io.k8s.api.autoscaling.v1.Scale",
    ("minik3s.api.apps", "ScaleSpec"): "io.k8s.api.autoscaling.v1.ScaleSpec",
    ("minik3s.api.apps", "ScaleStatus"): "io.k8s.api.autoscaling.v1.ScaleStatus",
    ("minik3s.api.apps", "AppsCondition"): "io.k8s.api.apps.v1.DeploymentCondition",
    **{("minik3s.api.scheduling", n): f"io.k8s.api.scheduling.v1alpha1.{n}" for n in (
        "Workload", "WorkloadSpec", "WorkloadPodGroup", "PodGroupPolicy", "GangSchedulingPolicy",
        "BasicSchedulingPolicy", "TypedLocalObjectReference")},
}
# (group) → python module holding the kinds of that group
_GROUP_MODULES = {
    "": "minik3s.api.core",
    "apps": "minik3s.api.apps",
    "batch": "minik3s.api.batch",
    "policy": "minik3s.api.policy",
    "scheduling.k8s.io": "minik3s.api.scheduling",
    "coordination.k8s.io": "minik3s.api.coordination",
    "node.k8s.io": "minik3s.api.node",
    "autoscaling": "minik3s.api.autoscaling",
    "apiextensions.k8s.io": "minik3s.api.apiextensions",
    "events.k8s.io": "minik3s.api.core",
    "rbac.authorization.k8s.io": "minik3s.api.rbac",
    "networking.k8s.io": "minik3s.api.networking",
    "storage.k8s.io": "minik3s.api.storage",
    "certificates.k8s.io": "minik3s.api.certificates",
    "admissionregistration.k8s.io": "minik3s.api.admissionregistration",
    "apiregistration.k8s.io": "minik3s.api.apiregistration",
}
_KIND_OVERRIDES = {("events.k8s.io", "Event"): "EventsV1Event"}

# Upstream struct tags for lists and maps: (python class, json field) → schema extensions.
_MAP_NAME = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}
_MERGE_NAME = {"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge", **_MAP_NAME}
_MERGE_TYPE = {"x-kubernetes-patch-merge-key": "type", "x-kubernetes-patch-strategy": "merge",
               "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]}
_ATOMIC = {"x-kubernetes-list-type": "atomic"}
_SET = {"x-kubernetes-list-type": "set"}
EXTENSIONS: dict[tuple[str, str], JsonDict] = {
    ("ObjectMeta", "finalizers"): {"x-kubernetes-patch-strategy": "merge", **_SET},
    ("ObjectMeta", "ownerReferences"): {"x-kubernetes-patch-merge-key": "uid", "x-kubernetes-patch-strategy": "merge",
                                        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["uid"]},
    ("ObjectMeta", "managedFields"): _ATOMIC,
    ("LabelSelector", "matchExpressions"): _ATOMIC,
    ("LabelSelectorRequirement", "values"): _ATOMIC,
    ("PodSpec", "volumes"): {**_MERGE_NAME, "x-kubernetes-patch-strategy": "merge,retainKeys"},
    ("PodSpec", "initContainers"): _MERGE_NAME,
    ("PodSpec", "containers"): _MERGE_NAME,
    ("PodSpec", "ephemeralContainers"): _MERGE_NAME,
    ("PodSpec", "imagePullSecrets"): _MERGE_NAME,
    ("PodSpec", "tolerations"): _ATOMIC,
    ("Scheduling", "tolerations"): _ATOMIC,  # node.k8s.io/v1 RuntimeClass.scheduling
    ("PodSpec", "hostAliases"): {"x-kubernetes-patch-merge-key": "ip", "x-kubernetes-patch-strategy": "merge",
                                 "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["ip"]},
    ("PodSpec", "readinessGates"): _ATOMIC,
    ("PodSpec", "topologySpreadConstraints"): {
        "x-kubernetes-patch-merge-key": "topologyKey", "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["topologyKey", "whenUnsatisfiable"]},
    ("PodSpec", "schedulingGates"): _MERGE_NAME,
    ("PodSpec", "resourceClaims"): {**_MERGE_NAME, "x-kubernetes-patch-strategy": "merge,retainKeys"},
    ("Container", "ports"): {"x-kubernetes-patch-merge-key": "containerPort", "x-kubernetes-patch-strategy": "merge",
                             "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["containerPort", "protocol"]},
    ("Container", "env"): _MERGE_NAME,
    ("Container", "envFrom"): _ATOMIC,
    ("Container", "command"): _ATOMIC,
    ("Container", "args"): _ATOMIC,
    ("Container", "resizePolicy"): _ATOMIC,
    ("Container", "volumeMounts"): {"x-kubernetes-patch-merge-key": "mountPath", "x-kubernetes-patch-strategy": "merge",
                                    "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["mountPath"]},
    ("Container", "volumeDevices"): {"x-kubernetes-patch-merge-key": "devicePath",
                                     "x-kubernetes-patch-strategy": "merge", "x-kubernetes-list-type": "map",
                                     "x-kubernetes-list-map-keys": ["devicePath"]},
    ("NodeSelector", "nodeSelectorTerms"): _ATOMIC,
    ("NodeSelectorTerm", "matchExpressions"): _ATOMIC,
    ("NodeSelectorTerm", "matchFields"): _ATOMIC,
    ("PodStatus", "conditions"): _MERGE_TYPE,
    ("PodStatus", "podIPs"): {"x-kubernetes-patch-merge-key": "ip", "x-kubernetes-patch-strategy": "merge",
                              "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["ip"]},
    ("PodStatus", "hostIPs"): {"x-kubernetes-patch-merge-key": "ip", "x-kubernetes-patch-strategy": "merge",
                               **_ATOMIC},
    ("PodStatus", "containerStatuses"): _ATOMIC,
    ("PodStatus", "initContainerStatuses"): _ATOMIC,
    ("NodeSpec", "taints"): _ATOMIC,
    ("NodeSpec", "podCIDRs"): {"x-kubernetes-patch-strategy": "merge", **_SET},
    ("NodeStatus", "conditions"): _MERGE_TYPE,
    ("NodeStatus", "addresses"): _MERGE_TYPE,
    ("NodeStatus", "images"): _ATOMIC,
    ("NamespaceStatus", "conditions"): _MERGE_TYPE,
    ("ServiceSpec", "ports"): {"x-kubernetes-patch-merge-key": "port", "x-kubernetes-patch-strategy": "merge",
                               "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"]},
    ("ServiceSpec", "externalIPs"): _ATOMIC,
    ("ServiceSpec", "clusterIPs"): _ATOMIC,
    ("DeploymentStatus", "conditions"): _MERGE_TYPE,
    ("ReplicaSetStatus", "conditions"): _MERGE_TYPE,
    ("PodDisruptionBudgetStatus", "conditions"): _MERGE_TYPE,
}
_MAP_ATOMIC = {"x-kubernetes-map-type": "atomic"}
_STRUCT_EXTENSIONS: dict[str, JsonDict] = {
    "LabelSelector": _MAP_ATOMIC,
    "NodeSelector": _MAP_ATOMIC,
    "NodeSelectorTerm": _MAP_ATOMIC,
    "OwnerReference": _MAP_ATOMIC,
    "ObjectReference": _MAP_ATOMIC,
    "LocalObjectReference": _MAP_ATOMIC,
}

# kube-openapi writes the types with OpenAPIV3OneOfTypes as a oneOf without a `type` in v3 (so
# `kubectl explain` names them: `<IntOrString>`, `<map[string]Quantity>`), and as a string in v2
_QUANTITY_SCHEMA: JsonDict = {
    "description": "Quantity is a fixed-point representation of a number, written in its canonical string "
                   "form (e.g. \"100m\", \"1Gi\", \"2\").",
    "oneOf": [{"type": "string"}, {"type": "number"}],
}
_INT_OR_STRING_SCHEMA: JsonDict = {
    "description": "IntOrString is a type that can hold an int32 or a string.",
    "format": "int-or-string",
    "oneOf": [{"type": "integer"}, {"type": "string"}],
}

# ---------------------------------------------------------------------------------------------
# Schema walker (pydantic model classes → component schemas)
# ---------------------------------------------------------------------------------------------


def component_name(cls: type[BaseModel]) -> str:
    """`io.k8s.api.core.v1.Pod` for `minik3s.api.core.Pod`."""
    renamed = _RENAMES.get((cls.__module__, cls.__name__))
    if renamed:
        return renamed
    package = _MODULE_PACKAGES.get(cls.__module__, "io.minik3s." + cls.__module__.rsplit(".", 1)[-1])
    return f"{package}.{cls.__name__}"


def _ref(name: str) -> JsonDict:
    return {"$ref": f"#/components/schemas/{name}"}


class _SchemaBuilder:
    """Collects the component schemas reachable from a set of models (one per GV document)."""

    def __init__(self) -> None:
        self.components: dict[str, JsonDict] = {}

    def model(self, cls: type[BaseModel]) -> str:
        name = component_name(cls)
        if name in self.components:
            return name
        schema: JsonDict = {"type": "object"}
        self.components[name] = schema  # placeholder first: models are recursive (JSONSchemaProps)
        doc = (cls.__doc__ or "").strip()
        if doc and not doc.startswith(("Usage docs", "A base class")):
            schema["description"] = " ".join(doc.split())
        props: JsonDict = {}
        required: list[str] = []
        for field_name, field in cls.model_fields.items():
            json_name = field.alias or field_name
            prop = self.annotation(field.annotation)
            ext = EXTENSIONS.get((cls.__name__, json_name))
            if ext:
                prop = {**prop, **ext}
            if field.description:
                prop = {"description": field.description, **prop}
            props[json_name] = prop
            if field.is_required():
                required.append(json_name)
        if props:
            schema["properties"] = dict(sorted(props.items()))
        if required:
            schema["required"] = sorted(required)
        schema.update(_STRUCT_EXTENSIONS.get(cls.__name__, {}))
        return name

    def annotation(self, tp: Any) -> JsonDict:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin in (typing.Union, types.UnionType):
            non_null = [a for a in args if a is not type(None)]
            prims = {a for a in non_null if a in (str, int, float)}
            if len(non_null) > 1 and prims == set(non_null):
                if prims == {str, int, float}:
                    self.components.setdefault(QUANTITY, dict(_QUANTITY_SCHEMA))
                    return {"allOf": [_ref(QUANTITY)]}
                if prims == {str, int}:
                    self.components.setdefault(INT_OR_STRING, dict(_INT_OR_STRING_SCHEMA))
                    return {"allOf": [_ref(INT_OR_STRING)]}
                return {}
            if len(non_null) == 1:
                return self.annotation(non_null[0])
            return {"x-kubernetes-preserve-unknown-fields": True}
        if origin is Literal:
            values = list(args)
            if all(isinstance(v, str) for v in values):
                return {"type": "string", "enum": values}
            if all(isinstance(v, bool) for v in values):
                return {"type": "boolean"}
            return {"type": "integer", "enum": values}
        if origin in (list, tuple, set, frozenset):
            item = args[0] if args else Any
            return {"type": "array", "items": _element(self.annotation(item))}
        if origin is dict:
            value = args[1] if len(args) == 2 else Any
            if value is Any:
                return {"type": "object", "additionalProperties": {"x-kubernetes-preserve-unknown-fields": True}}
            return {"type": "object", "additionalProperties": _element(self.annotation(value))}
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return {"allOf": [_ref(self.model(tp))]}
        if tp is str:
            return {"type": "string"}
        if tp is bool:
            return {"type": "boolean"}
        if tp is int:
            return {"type": "integer", "format": "int64"}
        if tp is float:
            return {"type": "number", "format": "double"}
        if tp is dict:
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        return {"x-kubernetes-preserve-unknown-fields": True}


def _element(schema: JsonDict) -> JsonDict:
    """An array item or map value as kube-openapi writes it: a Quantity or IntOrString is a bare
    $ref (nothing beside it; `kubectl explain` then names it: `map[string]Quantity`); a struct
    keeps its allOf wrapper with upstream's empty default."""
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and len(schema) == 1:
        ref = str(all_of[0].get("$ref", ""))
        if ref.endswith((QUANTITY, INT_OR_STRING)):
            return dict(all_of[0])
        return {"allOf": all_of, "default": {}}
    return schema


def model_for(info: ResourceInfo) -> type[BaseModel] | None:
    """The pydantic wire model of a built-in kind, if minik3s has one."""
    module_name = _GROUP_MODULES.get(info.group)
    if module_name is None:
        return None
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    cls = getattr(module, _KIND_OVERRIDES.get((info.group, info.kind), info.kind), None)
    if isinstance(cls, type) and issubclass(cls, BaseModel):
        return cls
    return None


def _gvk(group: str, version: str, kind: str) -> JsonDict:
    return {"group": group, "version": version, "kind": kind}


def _reverse_group(group: str) -> str:
    return ".".join(reversed(group.split(".")))


def _kind_schema_name(info: ResourceInfo, builder: _SchemaBuilder) -> str:
    """Build (or reuse) the schema of a resource's kind and tag it with its GVK."""
    cls = model_for(info) if info.builtin else None
    if cls is not None:
        name = builder.model(cls)
        schema = builder.components[name]
        gvks = schema.setdefault("x-kubernetes-group-version-kind", [])
        gvk = _gvk(info.group, info.version, info.kind)
        if gvk not in gvks:
            gvks.append(gvk)
        _ensure_type_fields(schema, builder)
        return name
    if info.builtin:
        package = _MODULE_PACKAGES.get(_GROUP_MODULES.get(info.group, ""), "")
        name = f"{package}.{info.kind}" if package else f"io.k8s.api.{info.group or 'core'}.{info.version}.{info.kind}"
    else:
        name = f"{_reverse_group(info.group)}.{info.version}.{info.kind}"
    schema = _custom_schema(info.crd_schema, builder)
    schema["x-kubernetes-group-version-kind"] = [_gvk(info.group, info.version, info.kind)]
    builder.components[name] = schema
    return name


# TypeMeta's and the object's metadata field descriptions (upstream's generated API docs), which
# every kind publishes, CRDs included (apiextensions' OpenAPI builder sets them on every CRD schema)
_CONVENTIONS = "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
API_VERSION_DOC = ("APIVersion defines the versioned schema of this representation of an object. Servers should "
                   "convert recognized schemas to the latest internal value, and may reject unrecognized values. "
                   f"More info: {_CONVENTIONS}#resources")
KIND_DOC = ("Kind is a string value representing the REST resource this object represents. Servers may infer "
            "this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
            f"{_CONVENTIONS}#types-kinds")
METADATA_DOC = f"Standard object's metadata. More info: {_CONVENTIONS}#metadata"


def _ensure_type_fields(schema: JsonDict, builder: _SchemaBuilder) -> None:
    props = schema.setdefault("properties", {})
    props.setdefault("apiVersion", {"type": "string", "description": API_VERSION_DOC})
    props.setdefault("kind", {"type": "string", "description": KIND_DOC})
    if "metadata" not in props:
        meta_cls = importlib.import_module("minik3s.api.meta").ObjectMeta
        props["metadata"] = {"allOf": [_ref(builder.model(meta_cls))]}
    schema["properties"] = dict(sorted(props.items()))


def _custom_schema(crd_schema: JsonDict | None, builder: _SchemaBuilder) -> JsonDict:
    """A CRD's openAPIV3Schema with apiVersion/kind/metadata filled in, as upstream publishes it."""
    schema: JsonDict = json.loads(json.dumps(crd_schema)) if isinstance(crd_schema, dict) else {}
    if not schema:
        schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    schema.setdefault("type", "object")
    props = schema.setdefault("properties", {})
    meta_cls = importlib.import_module("minik3s.api.meta").ObjectMeta
    # whatever the CRD's schema says of them, upstream publishes TypeMeta's and ObjectMeta's
    props["metadata"] = {"allOf": [_ref(builder.model(meta_cls))], "description": METADATA_DOC}
    props["apiVersion"] = {"type": "string", "description": API_VERSION_DOC}
    props["kind"] = {"type": "string", "description": KIND_DOC}
    schema["properties"] = dict(sorted(props.items()))
    return schema


# ---------------------------------------------------------------------------------------------
# Paths
# ---------------------------------------------------------------------------------------------

_PARAM_DOCS = {
    "dryRun": "When present, indicates that modifications should not be persisted. Valid values are: - All: "
              "all dry run stages will be processed",
    "fieldManager": "fieldManager is a name associated with the actor or entity that is making these changes.",
    "fieldValidation": "fieldValidation instructs the server on how to handle objects in the request "
                       "(POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: Ignore, "
                       "Warn (the default), Strict.",
    "force": "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields "
             "owned by other people.",
    "pretty": "If 'true', then the output is pretty printed.",
    "name": "name of the resource",
    "namespace": "object name and auth scope, such as for teams and projects",
    "labelSelector": "A selector to restrict the list of returned objects by their labels.",
    "fieldSelector": "A selector to restrict the list of returned objects by their fields.",
    "limit": "limit is a maximum number of responses to return for a list call.",
    "continue": "The continue option should be set when retrieving more results from the server.",
    "resourceVersion": "resourceVersion sets a constraint on what resource versions a request may be served from.",
    "watch": "Watch for changes to the described resources and return them as a stream of add, update, and "
             "remove notifications.",
    "gracePeriodSeconds": "The duration in seconds before the object should be deleted.",
    "propagationPolicy": "Whether and how garbage collection will be performed.",
}


def _query(name: str, type_: str = "string") -> JsonDict:
    schema: JsonDict = {"type": type_, "uniqueItems": True}
    return {"name": name, "in": "query", "description": _PARAM_DOCS.get(name, name), "schema": schema}


def _path_param(name: str) -> JsonDict:
    return {"name": name, "in": "path", "required": True, "description": _PARAM_DOCS[name],
            "schema": {"type": "string", "uniqueItems": True}}


def _group_title(group: str) -> str:
    """Upstream operation-id infix: "" → Core, apps → Apps, scheduling.k8s.io → Scheduling,
    scheduling.x-k8s.io → SchedulingXK8sIo."""
    if not group:
        return "Core"
    g = group[: -len(".k8s.io")] if group.endswith(".k8s.io") else group
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[.\-]", g) if p)


def _tag(group: str, version: str) -> str:
    if not group:
        return f"core_{version}"
    g = group[: -len(".k8s.io")] if group.endswith(".k8s.io") else group
    parts = [p for p in re.split(r"[.\-]", g) if p]
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:]) + f"_{version}"


def _response(schema_name: str | None, code: str = "200") -> JsonDict:
    resp: JsonDict = {"description": "OK" if code == "200" else "Created" if code == "201" else "Accepted"}
    if schema_name:
        resp["content"] = {"application/json": {"schema": _ref(schema_name)},
                           "application/yaml": {"schema": _ref(schema_name)},
                           "application/vnd.kubernetes.protobuf": {"schema": _ref(schema_name)}}
    return resp


def _op(action: str, op_id: str, description: str, tag: str, gvk: JsonDict, *,
        schema_name: str | None, parameters: list[JsonDict], body: bool = False,
        codes: tuple[str, ...] = ("200",)) -> JsonDict:
    op: JsonDict = {
        "description": description,
        "operationId": op_id,
        "tags": [tag],
        "responses": {code: _response(schema_name, code) for code in codes},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
    }
    if parameters:
        op["parameters"] = parameters
    if body and schema_name:
        op["requestBody"] = {"required": True, "content": {"*/*": {"schema": _ref(schema_name)}}}
    return op


_WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation")


def _resource_paths(info: ResourceInfo, kind_schema: str, list_schema: str | None,
                    builder: _SchemaBuilder) -> dict[str, JsonDict]:
    g, v, kind = info.group, info.version, info.kind
    base = f"/apis/{g}/{v}" if g else f"/api/{v}"
    tag = _tag(g, v)
    title = _group_title(g) + v[:1].upper() + v[1:]
    scope = "Namespaced" if info.namespaced else ""
    coll = f"{base}/namespaces/{{namespace}}/{info.resource}" if info.namespaced else f"{base}/{info.resource}"
    item = f"{coll}/{{name}}"
    gvk = _gvk(g, v, kind)
    verbs = set(info.verbs)
    ns_params = [_path_param("namespace")] if info.namespaced else []
    paths: dict[str, JsonDict] = {}

    collection: JsonDict = {}
    if "list" in verbs:
        collection["get"] = _op("list", f"list{title}{scope}{kind}", f"list or watch objects of kind {kind}", tag, gvk,
                                schema_name=list_schema,
                                parameters=[_query(p) for p in ("continue", "fieldSelector", "labelSelector",
                                                                "limit", "resourceVersion", "watch")])
    if "create" in verbs:
        collection["post"] = _op("post", f"create{title}{scope}{kind}", f"create a {kind}", tag, gvk,
                                 schema_name=kind_schema, parameters=[_query(p) for p in _WRITE_PARAMS],
                                 body=True, codes=("200", "201", "202"))
    if "deletecollection" in verbs:
        collection["delete"] = _op("deletecollection", f"delete{title}Collection{scope}{kind}",
                                   f"delete collection of {kind}", tag, gvk, schema_name=None,
                                   parameters=[_query(p) for p in ("dryRun", "gracePeriodSeconds",
                                                                   "labelSelector", "fieldSelector",
                                                                   "propagationPolicy")])
    if collection:
        collection["parameters"] = [*ns_params, _query("pretty")]
        paths[coll] = collection

    item_ops: JsonDict = {}
    if "get" in verbs:
        item_ops["get"] = _op("get", f"read{title}{scope}{kind}", f"read the specified {kind}", tag, gvk,
                              schema_name=kind_schema, parameters=[])
    if "update" in verbs:
        item_ops["put"] = _op("put", f"replace{title}{scope}{kind}", f"replace the specified {kind}", tag, gvk,
                              schema_name=kind_schema, parameters=[_query(p) for p in _WRITE_PARAMS], body=True,
                              codes=("200", "201"))
    if "patch" in verbs:
        # no requestBody on purpose (see module docstring)
        item_ops["patch"] = _op("patch", f"patch{title}{scope}{kind}", f"partially update the specified {kind}",
                                tag, gvk, schema_name=kind_schema,
                                parameters=[_query(p) for p in (*_WRITE_PARAMS, "force")], codes=("200", "201"))
    if "delete" in verbs:
        item_ops["delete"] = _op("delete", f"delete{title}{scope}{kind}", f"delete a {kind}", tag, gvk,
                                 schema_name=kind_schema,
                                 parameters=[_query(p) for p in ("dryRun", "gracePeriodSeconds", "propagationPolicy")],
                                 codes=("200", "202"))
    if item_ops:
        item_ops["parameters"] = [_path_param("name"), *ns_params, _query("pretty")]
        paths[item] = item_ops

    if info.namespaced and "list" in verbs:
        paths[f"{base}/{info.resource}"] = {
            "get": _op("list", f"list{title}{kind}ForAllNamespaces", f"list or watch objects of kind {kind}",
                       tag, gvk, schema_name=list_schema,
                       parameters=[_query(p) for p in ("continue", "fieldSelector", "labelSelector", "limit",
                                                       "resourceVersion", "watch")]),
            "parameters": [_query("pretty")],
        }

    for sub in info.subresources:
        sub_title = sub[:1].upper() + sub[1:]
        sub_path = f"{item}/{sub}"
        params = {"parameters": [_path_param("name"), *ns_params, _query("pretty")]}
        if sub == "status":
            paths[sub_path] = {
                "get": _op("get", f"read{title}{scope}{kind}Status", f"read status of the specified {kind}", tag,
                           gvk, schema_name=kind_schema, parameters=[]),
                "put": _op("put", f"replace{title}{scope}{kind}Status", f"replace status of the specified {kind}",
                           tag, gvk, schema_name=kind_schema, parameters=[_query(p) for p in _WRITE_PARAMS],
                           body=True, codes=("200", "201")),
                "patch": _op("patch", f"patch{title}{scope}{kind}Status",
                             f"partially update status of the specified {kind}", tag, gvk, schema_name=kind_schema,
                             parameters=[_query(p) for p in (*_WRITE_PARAMS, "force")], codes=("200", "201")),
                **params,
            }
        elif sub == "scale":
            scale_gvk = _gvk("autoscaling", "v1", "Scale")
            scale_schema = _scale_schema(builder)
            paths[sub_path] = {
                "get": _op("get", f"read{title}{scope}{kind}Scale", f"read scale of the specified {kind}", tag,
                           scale_gvk, schema_name=scale_schema, parameters=[]),
                "put": _op("put", f"replace{title}{scope}{kind}Scale", f"replace scale of the specified {kind}",
                           tag, scale_gvk, schema_name=scale_schema, parameters=[_query(p) for p in _WRITE_PARAMS],
                           body=True, codes=("200", "201")),
                "patch": _op("patch", f"patch{title}{scope}{kind}Scale",
                             f"partially update scale of the specified {kind}", tag, scale_gvk,
                             schema_name=scale_schema, parameters=[_query(p) for p in (*_WRITE_PARAMS, "force")],
                             codes=("200", "201")),
                **params,
            }
        elif sub in ("binding", "eviction"):
            sub_gvk = _gvk("", "v1", "Binding") if sub == "binding" else _gvk("policy", "v1", "Eviction")
            paths[sub_path] = {
                "post": _op("post", f"create{title}{scope}{kind}{sub_title}", f"create {sub} of a {kind}", tag,
                            sub_gvk, schema_name=None, parameters=[_query(p) for p in _WRITE_PARAMS],
                            codes=("200", "201", "202")),
                **params,
            }
    return paths


def _scale_schema(builder: _SchemaBuilder) -> str | None:
    try:
        cls = importlib.import_module("minik3s.api.apps").Scale
    except (ImportError, AttributeError):
        return None
    name = builder.model(cls)
    schema = builder.components[name]
    schema["x-kubernetes-group-version-kind"] = [_gvk("autoscaling", "v1", "Scale")]
    _ensure_type_fields(schema, builder)
    return name


def _list_schema(info: ResourceInfo, kind_schema: str, builder: _SchemaBuilder) -> str:
    list_meta = importlib.import_module("minik3s.api.meta").ListMeta
    name = kind_schema.rsplit(".", 1)[0] + "." + info.list_kind
    builder.components[name] = {
        "description": f"{info.list_kind} is a list of {info.kind} objects.",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "items": {"type": "array", "items": {"allOf": [_ref(kind_schema)], "default": {}}},
            "kind": {"type": "string"},
            "metadata": {"allOf": [_ref(builder.model(list_meta))], "default": {}},
        },
        "x-kubernetes-group-version-kind": [_gvk(info.group, info.version, info.list_kind)],
    }
    return name


def _common_meta_schemas(builder: _SchemaBuilder, group: str, version: str) -> None:
    builder.components[f"{META}.Status"] = {
        "description": "Status is a return value for calls that don't return other objects.",
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "code": {"type": "integer", "format": "int32"},
            "details": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "kind": {"type": "string"},
            "message": {"type": "string"},
            "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "reason": {"type": "string"},
            "status": {"type": "string"},
        },
        "x-kubernetes-group-version-kind": [_gvk("", "v1", "Status")],
    }
    builder.components[f"{META}.DeleteOptions"] = {
        "description": "DeleteOptions may be provided when deleting an API object.",
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "dryRun": {"type": "array", "items": {"type": "string", "default": ""},
                       "x-kubernetes-list-type": "atomic"},
            "gracePeriodSeconds": {"type": "integer", "format": "int64"},
            "kind": {"type": "string"},
            "orphanDependents": {"type": "boolean"},
            "preconditions": {"type": "object", "properties": {"resourceVersion": {"type": "string"},
                                                               "uid": {"type": "string"}}},
            "propagationPolicy": {"type": "string"},
        },
        "x-kubernetes-group-version-kind": [_gvk(group, version, "DeleteOptions")],
    }


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def gv_path(group: str, version: str) -> str:
    """The key of a group-version in the /openapi/v3 index: `api/v1`, `apis/apps/v1`."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _resources_of(registry: ResourceRegistry, group: str, version: str) -> list[ResourceInfo]:
    return sorted(registry.for_group_version(group, version), key=lambda i: i.resource)


def openapi_v3_group_version(registry: ResourceRegistry, group: str, version: str) -> JsonDict:
    """The OpenAPI 3.0 document of one group-version (`/openapi/v3/apis/<g>/<v>`)."""
    builder = _SchemaBuilder()
    paths: dict[str, JsonDict] = {}
    for info in _resources_of(registry, group, version):
        try:
            kind_schema = _kind_schema_name(info, builder)
        except Exception:  # one odd model must not hide a whole group-version from kubectl
            logger.exception("openapi: schema generation failed resource=%s", info.qualified)
            kind_schema = f"{_reverse_group(info.group or 'core')}.{info.version}.{info.kind}"
            builder.components[kind_schema] = {
                "type": "object", "x-kubernetes-preserve-unknown-fields": True,
                "x-kubernetes-group-version-kind": [_gvk(info.group, info.version, info.kind)]}
        list_schema = _list_schema(info, kind_schema, builder) if "list" in info.verbs else None
        paths.update(_resource_paths(info, kind_schema, list_schema, builder))
    _common_meta_schemas(builder, group, version)
    _describe(builder.components)
    return {
        "openapi": OPENAPI_VERSION,
        "info": dict(INFO),
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": dict(sorted(builder.components.items()))},
    }


def _describe(components: dict[str, JsonDict]) -> None:
    """Upstream's descriptions on the built-in types and their fields (what `kubectl explain`
    prints); upstream's text replaces the short ones written here."""
    for name, schema in components.items():
        doc = openapi_descriptions.describe(name)
        if doc is None:
            continue
        if doc.description:
            schema.pop("description", None)
            components[name] = schema = {"description": doc.description, **schema}
        props = schema.get("properties")
        if not isinstance(props, dict):
            continue
        for field, prop in props.items():
            text = doc.fields.get(field)
            if text and isinstance(prop, dict):
                props[field] = {"description": text, **{k: v for k, v in prop.items() if k != "description"}}


def document_hash(doc: JsonDict) -> str:
    """Upper-case hex SHA-512 of the canonical JSON, like kube-openapi's `hash=` query value."""
    data = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha512(data).hexdigest().upper()


def openapi_v3_root(registry: ResourceRegistry) -> JsonDict:
    """`/openapi/v3`: every served group-version with a content-addressed `serverRelativeURL`."""
    paths: dict[str, JsonDict] = {}
    for group, versions in sorted(registry.groups().items()):
        for version in versions:
            if not registry.for_group_version(group, version):
                continue
            key = gv_path(group, version)
            digest = document_hash(openapi_v3_group_version(registry, group, version))
            paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": dict(sorted(paths.items()))}


def _to_v2(node: Any) -> Any:
    """Rewrite a v3 schema fragment for swagger 2.0 (`#/definitions/` refs, no allOf wrappers)."""
    if isinstance(node, list):
        return [_to_v2(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _to_v2(v) for k, v in node.items()}
    ref = out.get("$ref")
    if isinstance(ref, str):
        out["$ref"] = ref.replace("#/components/schemas/", "#/definitions/")
    all_of = out.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict) and "$ref" in all_of[0]:
        # swagger 2.0 puts a field's description (and default) beside its $ref
        return {"$ref": all_of[0]["$ref"], **{k: v for k, v in out.items() if k != "allOf"}}
    return out


def openapi_v2(registry: ResourceRegistry) -> JsonDict:
    """`/openapi/v2` (swagger 2.0, JSON): all definitions and paths of every group-version.

    kubectl asks for v2 only as protobuf (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`);
    answer that Accept with 404 (tolerated by kubectl) and serve this JSON to JSON clients only.
    """
    definitions: dict[str, JsonDict] = {}
    paths: dict[str, JsonDict] = {}
    for group, versions in sorted(registry.groups().items()):
        for version in versions:
            if not registry.for_group_version(group, version):
                continue
            doc = openapi_v3_group_version(registry, group, version)
            for name, schema in doc["components"]["schemas"].items():
                if name in (QUANTITY, INT_OR_STRING):  # v2 has no oneOf: a string
                    schema = {**{k: v for k, v in schema.items() if k != "oneOf"}, "type": "string"}
                definitions.setdefault(name, _to_v2(schema))
            for path, item in doc["paths"].items():
                v2_item: JsonDict = {}
                for method, op in item.items():
                    if method == "parameters":
                        v2_item["parameters"] = [_v2_param(p) for p in op]
                        continue
                    v2_op = {k: v for k, v in op.items() if k not in ("requestBody", "responses", "parameters")}
                    v2_op["consumes"] = ["*/*"]
                    v2_op["produces"] = ["application/json", "application/yaml",
                                         "application/vnd.kubernetes.protobuf"]
                    v2_op["schemes"] = ["https"]
                    params = [_v2_param(p) for p in op.get("parameters", [])]
                    body = op.get("requestBody")
                    if body:
                        schema = body["content"]["*/*"]["schema"]
                        params.insert(0, {"name": "body", "in": "body", "required": True, "schema": _to_v2(schema)})
                    if params:
                        v2_op["parameters"] = params
                    v2_op["responses"] = {}
                    for code, resp in op["responses"].items():
                        r: JsonDict = {"description": resp["description"]}
                        content = resp.get("content")
                        if content:
                            r["schema"] = _to_v2(content["application/json"]["schema"])
                        v2_op["responses"][code] = r
                    v2_item[method] = v2_op
                paths[path] = v2_item
    return {
        "swagger": "2.0",
        "info": dict(INFO),
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
    }


def _v2_param(p: JsonDict) -> JsonDict:
    out = {k: v for k, v in p.items() if k != "schema"}
    out.update(p.get("schema") or {})
    return out
