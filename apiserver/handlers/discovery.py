"""Discovery documents, /version and health (kube-apiserver's shapes).

Legacy discovery: /api (APIVersions), /apis (APIGroupList), /api/v1 and /apis/<g>/<v>
(APIResourceList with kinds, verbs, short names, categories and subresources such as
pods/eviction and deployments/scale, in the installer's sorted path order). Aggregated discovery
(apidiscovery.k8s.io/v2, what kubectl 1.33 asks `/api` and `/apis` for first): the same
resource lists regrouped as APIGroupDiscoveryList, so a client needs two requests instead of one
per group-version; served when content negotiation picks it (`wants_aggregated`).
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
        for sub in sorted(subresources(info)):  # go-restful's installer sorts the paths
            resources.append(_sub_entry(info, sub))
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


# ---- aggregated discovery (apidiscovery.k8s.io/v2) ----------------------------------------------

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated(accept: str) -> bool:
    """Whether content negotiation on `/api` or `/apis` picks the aggregated discovery document:
    the first Accept clause (highest q first, then header order, as apimachinery's negotiation
    walks them) that is served decides; v2 JSON is the aggregated form served (kubectl 1.33 asks
    for it first), plain JSON and wildcards the legacy one."""
    clauses: list[tuple[float, int, str, dict[str, str]]] = []
    for i, clause in enumerate(accept.split(",")):
        fields = [f.strip() for f in clause.split(";")]
        params: dict[str, str] = {}
        for f in fields[1:]:
            key, sep, value = f.partition("=")
            if sep:
                params[key.strip().lower()] = value.strip().strip('"')
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 1.0
        if q > 0:
            clauses.append((-q, i, fields[0].lower(), params))
    for _, _, media, params in sorted(clauses):
        if media == "application/json" and params.get("g") == "apidiscovery.k8s.io":
            if params.get("v") == "v2" and params.get("as") == "APIGroupDiscoveryList":
                return True
            continue  # another version of the aggregated form (v2beta1, gone in 1.33): not served
        if media in ("application/json", "application/*", "*/*") and not params:
            return False
    return False


def _aggregated_resources(legacy: Sequence[JsonDict]) -> list[JsonDict]:
    """An APIResourceList's entries as APIResourceDiscovery: the subresources (`pods/log`) under
    their resource, the scope spelled out, responseKind with the legacy entry's group/version
    (empty for the resource's own)."""
    out: list[JsonDict] = []
    by_name: dict[str, JsonDict] = {}
    for r in legacy:
        name = str(r["name"])
        kind = {"group": r.get("group", ""), "version": r.get("version", ""), "kind": r["kind"]}
        if "/" not in name:
            entry: JsonDict = {"resource": name, "responseKind": kind,
                               "scope": "Namespaced" if r["namespaced"] else "Cluster",
                               "singularResource": r.get("singularName", ""), "verbs": list(r["verbs"])}
            if r.get("shortNames"):
                entry["shortNames"] = list(r["shortNames"])
            if r.get("categories"):
                entry["categories"] = list(r["categories"])
            by_name[name] = entry
            out.append(entry)
            continue
        parent, _, sub = name.partition("/")
        owner = by_name.get(parent)
        if owner is not None:
            owner.setdefault("subresources", []).append(
                {"subresource": sub, "responseKind": kind, "verbs": list(r["verbs"])})
    return out


def discovery_group(name: str, versions: Sequence[tuple[str, JsonDict]]) -> JsonDict:
    """One APIGroupDiscovery: `versions` in preference order, each with its APIResourceList."""
    meta: JsonDict = {"name": name, "creationTimestamp": None} if name else {"creationTimestamp": None}
    return {"metadata": meta, "versions": [
        {"version": v, "resources": _aggregated_resources(doc["resources"]), "freshness": "Current"}
        for v, doc in versions]}


def aggregated_list(items: list[JsonDict]) -> JsonDict:
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {},
            "items": items}


def aggregated_groups(registry: ResourceRegistry,
                      subresources: Callable[[ResourceInfo], Sequence[str]]) -> list[JsonDict]:
    """The named groups of `/apis`, in the legacy APIGroupList's order."""
    groups = registry.groups()
    out: list[JsonDict] = []
    for g in sorted((g for g in groups if g), key=_group_sort_key):
        versions = [(v, doc) for v in groups[g]
                    if (doc := resource_list(registry, g, v, subresources=subresources)) is not None]
        if versions:
            out.append(discovery_group(g, versions))
    return out
