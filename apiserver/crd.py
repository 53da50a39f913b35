"""CustomResourceDefinition -> served resources (layer L4).

Creating a CRD adds one `ResourceInfo` per served version to the registry (so routing,
discovery, the OpenAPI documents and watches pick it up at once); deleting it removes them.
"""

from __future__ import annotations

from minik3s.api.resources import ResourceInfo, ResourceRegistry
from minik3s.api.types import JsonDict


def crd_resource_infos(crd: JsonDict) -> list[ResourceInfo]:
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group") or ""
    plural = names.get("plural") or ""
    kind = names.get("kind") or ""
    if not (group and plural and kind):
        return []
    namespaced = spec.get("scope", "Namespaced") == "Namespaced"
    out = []
    for v in spec.get("versions") or []:
        if not v.get("served", True):
            continue
        subs = v.get("subresources") or {}
        sub_names: list[str] = []
        if "status" in subs:
            sub_names.append("status")
        scale_paths: tuple[str, str, str] | None = None
        if "scale" in subs:
            sub_names.append("scale")
            sc = subs.get("scale") or {}

            def path(key: str, default: str = "", sc: JsonDict = sc) -> str:
                return str(sc.get(key) or default).removeprefix(".")

            # (upstream requires both replicas paths; a CRD without them reads the usual ones)
            scale_paths = (path("specReplicasPath", "spec.replicas"), path("statusReplicasPath", "status.replicas"),
                           path("labelSelectorPath"))
        schema = (v.get("schema") or {}).get("openAPIV3Schema")
        selectable = tuple((f.get("jsonPath") or "").lstrip(".") for f in v.get("selectableFields") or []
                           if f.get("jsonPath"))
        out.append(ResourceInfo(
            group, v.get("name") or "v1", plural, kind, namespaced,
            short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()),
            subresources=tuple(sub_names),
            singular=names.get("singular") or kind.lower(),
            builtin=False,
            crd_schema=schema,
            printer_columns=tuple(v.get("additionalPrinterColumns") or ()),
            selectable_fields=selectable,
            scale_paths=scale_paths,
        ))
    return out


def register_crd(registry: ResourceRegistry, crd: JsonDict) -> None:
    spec = crd.get("spec") or {}
    group = spec.get("group") or ""
    plural = (spec.get("names") or {}).get("plural") or ""
    new = crd_resource_infos(crd)
    new_keys = {(i.group, i.version, i.resource) for i in new}
    for info in registry.all():
        if info.group == group and info.resource == plural and not info.builtin \
                and (info.group, info.version, info.resource) not in new_keys:
            registry.remove(info.group, info.version, info.resource)
    for info in new:
        registry.add(info)


def unregister_crd(registry: ResourceRegistry, crd: JsonDict) -> list[ResourceInfo]:
    spec = crd.get("spec") or {}
    group = spec.get("group") or ""
    plural = (spec.get("names") or {}).get("plural") or ""
    removed = []
    for info in registry.all():
        if info.group == group and info.resource == plural and not info.builtin:
            registry.remove(info.group, info.version, info.resource)
            removed.append(info)
    return removed
