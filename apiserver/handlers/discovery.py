"""Legacy discovery documents, /version and health (kube-apiserver's shapes).

kubectl 1.33 accepts legacy discovery when the aggregated media type is not answered: /api
(APIVersions), /apis (APIGroupList), /api/v1 and /apis/<g>/<v> (APIResourceList with kinds,
verbs, short names, categories and subresources such as pods/eviction and deployments/scale).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from minik3s.api.resources import ResourceInfo, ResourceRegistry
from minik3s.api.types import JsonDict

VERSION_INFO: JsonDict = {
    "major": "1",
    "minor": "33",
    # version.Info (apimachinery/pkg/version/types.go) in v1.33: the emulation and
    # minimum-compatibility versions follow minor; a 1.33 binary emulates 1.33 and stays
    # compatible with 1.32
    "emulationMajor": "1",
    "emulationMinor": "33",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "32",
    "gitVersion": "v1.33.0+minik3s",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-11-30T00:00:00Z",
    "goVersion": "go1.24.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}



def version_body() -> bytes:
    """The /version body as responsewriters.WriteRawJSON writes it: json.MarshalIndent with a
    two-space indent, fields in struct order, and no trailing newline (served as
    `Content-Type: application/json`, no charset)."""
    return json.dumps(VERSION_INFO, indent=2, ensure_ascii=False).encode()


VERSION_BODY = version_body()


SUBRESOURCE_VERBS = {
    "status": ["get", "patch", "update"],
    "scale": ["get", "patch", "update"],
    "binding": ["create"],
    "eviction": ["create"],
    "finalize": ["update"],
    "log": ["get"],
    "exec": ["create", "get"],
    "attach": ["create", "get"],
    "portforward": ["create", "get"],
    "token": ["create"],
    "approval": ["get", "patch", "update"],
    "ephemeralcontainers": ["get", "patch", "update"],
    "proxy": ["create", "delete", "get", "patch", "update"],
}

GROUP_ORDER = ["", "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
               "authorization.k8s.io", "batch", "certificates.k8s.io", "networking.k8s.io", "policy",
               "rbac.authorization.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io",
               "apiextensions.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io",
               "discovery.k8s.io"]


def api_versions() -> JsonDict:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]}


def _group_sort_key(g: str) -> tuple[int, str]:
    return (GROUP_ORDER.index(g), g) if g in GROUP_ORDER else (len(GROUP_ORDER), g)


def api_group(registry: ResourceRegistry, group: str) -> JsonDict | None:
    versions = registry.groups().get(group)
    if not versions:
        return None
    vs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": vs, "preferredVersion": vs[0]}


def api_group_list(registry: ResourceRegistry) -> JsonDict:
    groups = []
    for g in sorted((g for g in registry.groups() if g), key=_group_sort_key):
        doc = api_group(registry, g)
        if doc:
            doc.pop("kind", None)
            doc.pop("apiVersion", None)
            groups.append(doc)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def _resource_entry(info: ResourceInfo) -> JsonDict:
    e: JsonDict = {"name": info.resource, "singularName": info.singular, "namespaced": info.namespaced,
                   "kind": info.kind, "verbs": list(info.verbs)}
    if info.short_names:
        e["shortNames"] = list(info.short_names)
    if info.categories:
        e["categories"] = list(info.categories)
    return e


def _sub_entry(info: ResourceInfo, sub: str) -> JsonDict:
    e: JsonDict = {"name": f"{info.resource}/{sub}", "singularName": "", "namespaced": info.namespaced,
                   "kind": info.kind, "verbs": SUBRESOURCE_VERBS.get(sub, ["get"])}
    if sub == "scale":
        e.update(group="autoscaling", version="v1", kind="Scale")
    elif sub == "eviction":
        e.update(group="policy", version="v1", kind="Eviction")
    elif sub == "binding":
        e.update(kind="Binding")
    elif sub == "log":
        e.update(kind="Pod")
    elif sub == "finalize":
        e.update(kind="Namespace")
    elif sub == "token":
        e.update(group="authentication.k8s.io", version="v1", kind="TokenRequest")
    elif sub == "proxy":  # nodes/proxy: NodeProxyOptions
        e.update(kind=f"{info.kind}ProxyOptions")
    elif sub in ("exec", "attach", "portforward"):
        e.update(kind={"exec": "PodExecOptions", "attach": "PodAttachOptions",
                       "portforward": "PodPortForwardOptions"}[sub])
    return e


def resource_list(registry: ResourceRegistry, group: str, version: str, *,
                  subresources: Callable[[ResourceInfo], Sequence[str]]) -> JsonDict | None:
    """`subresources(info)`: the names a resource serves (the resources table's and those its
    kind registers, e.g. pods/log), as the request core knows them."""
    infos = registry.for_group_version(group, version)
    if not infos:
        return None
    resources: list[JsonDict] = []
    for info in sorted(infos, key=lambda i: i.resource):
        resources.append(_resource_entry(info))
        for sub in subresources(info):
            resources.append(_sub_entry(info, sub))
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}
