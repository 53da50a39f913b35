"""Upstream's descriptions of the built-in types and their fields, for the OpenAPI documents
(layer L4, apiserver; pure, cached per process).

Why: `kubectl explain pods` prints each type's and field's description from `/openapi/v3`;
without them it shows `<empty>` and `<no description>`, and explain is how people learning
Kubernetes read what a field does. The text is the upstream OpenAPI's own, for Kubernetes
1.33, taken from `lightkube-models` 1.33 (generated from that spec, a runtime dependency):
each model class's docstring holds the type's description and a `**parameters**` list of
`* **field** ``Type`` - description` entries. Its modules are read as text, not imported (they
need lightkube's client runtime). Line breaks inside a description are not kept (the
generator rewrapped them), so paragraphs come out joined; kubectl rewraps the text anyway.

Data flow: `apiserver.openapi` -> `describe(component name)` -> (type description, field name
-> description), or None for a type upstream's 1.33 spec does not have (minik3s' own
scheduling.k8s.io/v1alpha1 Workload, for instance) or when lightkube-models is missing.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import re
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
# upstream schema package -> lightkube-models module, where the name is not io.k8s.api.<group>.<version>
_MODULES = {
    _META: "meta_v1",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1": "apiextensions_v1",
    "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1": "apiregistration_v1",
}
_CLASS = re.compile(r'^class (\w+)\([^)]*\):\n    r?"""(.*?)"""', re.S | re.M)
_FIELD = re.compile(r"^\* \*\*(\w+)\*\* ``.*?`` - ?(.*)$")


@dataclass(frozen=True, slots=True)
class TypeDoc:
    description: str
    fields: dict[str, str]


def _module_for(package: str) -> str | None:
    if package in _MODULES:
        return _MODULES[package]
    if package.startswith("io.k8s.api."):
        group, _, version = package.removeprefix("io.k8s.api.").rpartition(".")
        return f"{group.replace('.', '_')}_{version}" if group else None
    return None


def _json_name(name: str) -> str:
    """The JSON name of a generated Python field name (`continue_` is `continue`,
    `x_kubernetes_list_type` is `x-kubernetes-list-type`, `d_ref` is `$ref`)."""
    base = name.rstrip("_")
    if base.startswith("x_kubernetes_"):
        return base.replace("_", "-")
    if base in ("d_ref", "d_schema"):
        return "$" + base[2:]
    return base


def _joined(lines: list[str]) -> str:
    return " ".join(" ".join(line.split()) for line in lines if line.strip())


def parse_docstring(doc: str) -> TypeDoc:
    lines = [line.strip() for line in doc.splitlines()]
    try:
        cut = lines.index("**parameters**")
    except ValueError:
        cut = len(lines)
    fields: dict[str, str] = {}
    current: list[str] = []
    name = ""
    for line in lines[cut + 1:]:
        m = _FIELD.match(line)
        if m:
            if name:
                fields[_json_name(name)] = _joined(current)
            name, current = m.group(1), [m.group(2)]
        elif name:
            current.append(line)
    if name:
        fields[_json_name(name)] = _joined(current)
    return TypeDoc(_joined(lines[:cut]), fields)


@functools.cache
def _module_docs(module: str) -> dict[str, TypeDoc]:
    try:
        spec = importlib.util.find_spec("lightkube.models")
    except ImportError:
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / f"{module}.py"
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            return {m.group(1): parse_docstring(m.group(2)) for m in _CLASS.finditer(text)}
    if not locations:
        logger.warning("openapi: lightkube-models is not installed; kubectl explain shows no descriptions")
    return {}


def describe(component: str) -> TypeDoc | None:
    """Upstream's descriptions for a component schema name (`io.k8s.api.core.v1.PodSpec`)."""
    package, _, kind = component.rpartition(".")
    module = _module_for(package)
    if module is None:
        return None
    return _module_docs(module).get(kind)
