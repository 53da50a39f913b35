"""Unknown-field detection from the wire models (layer L4, apiserver).

Why: `fieldValidation=Strict` must reject, and `Warn` (the default) must warn about, fields the
schema does not define: upstream reports them as `unknown field "spec.containers[0].bar"`.
The pydantic models in minik3s.api are the schema; they are compiled once (lazily, per model
class) into a small tree of field names -> child node, and the request's dict is walked
against that tree without constructing a model.

Example: for a Pod `{"spec": {"foo": 1, "containers": [{"name": "c", "bar": 2}]}}` ->
`["spec.containers[0].bar", "spec.foo"]` (sorted, as upstream sorts them).
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from minik3s.api import apiextensions, apps, coordination, core, policy, scheduling
from minik3s.api.types import JsonDict


@dataclass(slots=True)
class Node:
    """`kind`: "model" (known fields in `fields`), "list"/"map" (element in `elem`), "any"."""

    kind: str
    fields: dict[str, Node] = field(default_factory=dict)
    elem: Node | None = None


_ANY = Node("any")


def _node_for(tp: Any, cache: dict[type, Node]) -> Node:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        nodes = [_node_for(a, cache) for a in typing.get_args(tp) if a is not type(None)]
        for n in nodes:
            if n.kind != "any":
                return n
        return _ANY
    if origin is typing.Literal:
        return _ANY
    if origin in (list, tuple):
        args = typing.get_args(tp)
        return Node("list", elem=_node_for(args[0], cache) if args else _ANY)
    if origin is dict:
        args = typing.get_args(tp)
        return Node("map", elem=_node_for(args[1], cache) if len(args) == 2 else _ANY)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return model_node(tp, cache)
    return _ANY


def model_node(model: type[BaseModel], cache: dict[type, Node] | None = None) -> Node:
    cache = {} if cache is None else cache
    hit = cache.get(model)
    if hit is not None:
        return hit
    node = Node("model")
    cache[model] = node  # before recursing: models may be recursive
    for name, info in model.model_fields.items():
        node.fields[info.alias or name] = _node_for(info.annotation, cache)
    return node


def walk_unknown(obj: Any, node: Node, path: str, out: list[str]) -> None:
    if node.kind == "model":
        if not isinstance(obj, dict):
            return
        for k, v in obj.items():
            child = node.fields.get(k)
            p = f"{path}.{k}" if path else k
            if child is None:
                out.append(p)
            elif child.kind != "any":
                walk_unknown(v, child, p, out)
    elif node.kind == "list" and node.elem is not None and node.elem.kind != "any":
        if isinstance(obj, list):
            for i, item in enumerate(obj):
                walk_unknown(item, node.elem, f"{path}[{i}]", out)
    elif node.kind == "map" and node.elem is not None and node.elem.kind != "any":
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk_unknown(v, node.elem, f"{path}[{k}]", out)


def kind_models() -> dict[tuple[str, str], type[BaseModel]]:
    """(group, kind) -> wire model for the kinds with a schema."""
    return {
        ("", "Pod"): core.Pod,
        ("", "Node"): core.Node,
        ("", "Namespace"): core.Namespace,
        ("", "ConfigMap"): core.ConfigMap,
        ("", "Secret"): core.Secret,
        ("", "Service"): core.Service,
        ("", "ServiceAccount"): core.ServiceAccount,
        ("", "Event"): core.Event,
        ("", "Binding"): core.Binding,
        ("events.k8s.io", "Event"): core.EventsV1Event,
        ("apps", "Deployment"): apps.Deployment,
        ("apps", "ReplicaSet"): apps.ReplicaSet,
        ("policy", "PodDisruptionBudget"): policy.PodDisruptionBudget,
        ("policy", "Eviction"): policy.Eviction,
        ("scheduling.k8s.io", "PriorityClass"): scheduling.PriorityClass,
        ("coordination.k8s.io", "Lease"): coordination.Lease,
        ("apiextensions.k8s.io", "CustomResourceDefinition"): apiextensions.CustomResourceDefinition,
    }


class SchemaIndex:
    """Compiled schema trees per kind (built lazily; one instance per app)."""

    def __init__(self) -> None:
        self._models = kind_models()
        self._cache: dict[type, Node] = {}
        self._nodes: dict[tuple[str, str], Node] = {}

    def node(self, group: str, kind: str) -> Node | None:
        key = (group, kind)
        n = self._nodes.get(key)
        if n is None:
            model = self._models.get(key)
            if model is None:
                return None
            n = model_node(model, self._cache)
            self._nodes[key] = n
        return n

    def unknown_fields(self, group: str, kind: str, obj: JsonDict) -> list[str]:
        n = self.node(group, kind)
        if n is None:
            return []
        out: list[str] = []
        walk_unknown(obj, n, "", out)
        out.sort()
        return out
