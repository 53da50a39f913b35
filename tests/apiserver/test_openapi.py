"""OpenAPI v3/v2 documents: index, per-GV documents, extensions, and real kubectl against them."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from apiserver.openapi import document_hash, openapi_v2, openapi_v3_group_version, openapi_v3_root
from minik3s.api.resources import ResourceInfo, ResourceRegistry

PODGROUP_SCHEMA = {
    "type": "object",
    "properties": {"spec": {"type": "object", "description": "PodGroup spec",
                            "properties": {"minMember": {"type": "integer", "description": "minimum members"}}}},
}


def _registry() -> ResourceRegistry:
    reg = ResourceRegistry()
    reg.add(ResourceInfo("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", True, ("pg",),
                         builtin=False, crd_schema=PODGROUP_SCHEMA, subresources=("status",)))
    return reg


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        out = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        for v in node.values():
            out += _refs(v)
        return out
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_root_lists_every_group_version_with_its_document_hash() -> None:
    reg = _registry()
    root = openapi_v3_root(reg)
    expected = {f"apis/{g}/{v}" if g else f"api/{v}" for g, vs in reg.groups().items() for v in vs}
    assert set(root["paths"]) == expected
    assert "apis/scheduling.x-k8s.io/v1alpha1" in root["paths"]
    url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
    m = re.fullmatch(r"/openapi/v3/apis/apps/v1\?hash=([0-9A-F]{128})", url)
    assert m is not None
    assert m.group(1) == document_hash(openapi_v3_group_version(reg, "apps", "v1"))


def test_documents_are_deterministic() -> None:
    assert openapi_v3_root(_registry()) == openapi_v3_root(_registry())
    assert json.dumps(openapi_v3_group_version(_registry(), "", "v1")) == \
        json.dumps(openapi_v3_group_version(_registry(), "", "v1"))


def _patch_ops(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [item["patch"] for item in doc["paths"].values() if "patch" in item]


@pytest.mark.parametrize(
    "info",
    [pytest.param(i, id=f"{i.resource}.{i.group or 'core'}") for i in _registry().all() if "patch" in i.verbs],
)
def test_every_patchable_kind_has_a_patch_operation_with_field_validation(info: ResourceInfo) -> None:
    """kubectl's query-param verifier: found ⇒ it sends fieldValidation=Strict and skips client validation."""
    doc = openapi_v3_group_version(_registry(), info.group, info.version)
    gvk = {"group": info.group, "version": info.version, "kind": info.kind}
    ops = [op for op in _patch_ops(doc) if op["x-kubernetes-group-version-kind"] == gvk]
    assert ops, f"no PATCH operation for {gvk}"
    for op in ops:
        params = {(p["name"], p["in"]) for p in op["parameters"]}
        assert ("fieldValidation", "query") in params
        assert "requestBody" not in op  # kubectl then uses its compiled-in types for SMP


@pytest.mark.parametrize(
    ("group", "version", "schema", "kind"),
    [
        pytest.param("", "v1", "io.k8s.api.core.v1.Pod", "Pod", id="pod"),
        pytest.param("", "v1", "io.k8s.api.core.v1.Node", "Node", id="node"),
        pytest.param("apps", "v1", "io.k8s.api.apps.v1.Deployment", "Deployment", id="deployment"),
        pytest.param("scheduling.k8s.io", "v1", "io.k8s.api.scheduling.v1.PriorityClass", "PriorityClass",
                     id="priorityclass"),
        pytest.param("policy", "v1", "io.k8s.api.policy.v1.PodDisruptionBudget", "PodDisruptionBudget", id="pdb"),
        pytest.param("coordination.k8s.io", "v1", "io.k8s.api.coordination.v1.Lease", "Lease", id="lease"),
        pytest.param("events.k8s.io", "v1", "io.k8s.api.events.v1.Event", "Event", id="events-v1-event"),
        pytest.param("scheduling.x-k8s.io", "v1alpha1", "io.x-k8s.scheduling.v1alpha1.PodGroup", "PodGroup",
                     id="custom-resource-podgroup"),
    ],
)
def test_kind_schemas_carry_their_group_version_kind(group: str, version: str, schema: str, kind: str) -> None:
    doc = openapi_v3_group_version(_registry(), group, version)
    s = doc["components"]["schemas"][schema]
    assert {"group": group, "version": version, "kind": kind} in s["x-kubernetes-group-version-kind"]
    assert {"apiVersion", "kind", "metadata"} <= set(s["properties"])


@pytest.mark.parametrize(("group", "version"), [pytest.param(g, v, id=f"{g or 'core'}-{v}")
                                                for g, vs in _registry().groups().items() for v in vs])
def test_every_reference_resolves_inside_its_document(group: str, version: str) -> None:
    doc = openapi_v3_group_version(_registry(), group, version)
    names = set(doc["components"]["schemas"])
    missing = {r for r in _refs(doc) if r.removeprefix("#/components/schemas/") not in names}
    assert not missing


@pytest.mark.parametrize(
    ("schema", "field", "expected"),
    [
        pytest.param("io.k8s.api.core.v1.PodSpec", "containers",
                     {"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge",
                      "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
                     id="containers-merge-by-name"),
        pytest.param("io.k8s.api.core.v1.PodSpec", "topologySpreadConstraints",
                     {"x-kubernetes-patch-merge-key": "topologyKey",
                      "x-kubernetes-list-map-keys": ["topologyKey", "whenUnsatisfiable"]},
                     id="topology-spread-merge-by-topology-key"),
        pytest.param("io.k8s.api.core.v1.PodSpec", "tolerations", {"x-kubernetes-list-type": "atomic"},
                     id="tolerations-atomic"),
        pytest.param("io.k8s.api.core.v1.Container", "ports",
                     {"x-kubernetes-patch-merge-key": "containerPort",
                      "x-kubernetes-list-map-keys": ["containerPort", "protocol"]},
                     id="container-ports-merge-by-container-port"),
        pytest.param("io.k8s.api.core.v1.Container", "env", {"x-kubernetes-patch-merge-key": "name"},
                     id="env-merge-by-name"),
        pytest.param("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers",
                     {"x-kubernetes-patch-strategy": "merge", "x-kubernetes-list-type": "set"},
                     id="finalizers-set"),
        pytest.param("io.k8s.api.core.v1.NodeSpec", "taints", {"x-kubernetes-list-type": "atomic"},
                     id="taints-atomic"),
    ],
)
def test_list_extensions_match_upstream_struct_tags(schema: str, field: str, expected: dict[str, Any]) -> None:
    doc = openapi_v3_group_version(_registry(), "", "v1")
    prop = doc["components"]["schemas"][schema]["properties"][field]
    assert {k: prop.get(k) for k in expected} == expected


def test_custom_resource_schema_comes_from_the_crd() -> None:
    doc = openapi_v3_group_version(_registry(), "scheduling.x-k8s.io", "v1alpha1")
    s = doc["components"]["schemas"]["io.x-k8s.scheduling.v1alpha1.PodGroup"]
    assert s["properties"]["spec"] == PODGROUP_SCHEMA["properties"]["spec"]
    assert s["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
    assert "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups/{name}/status" in doc["paths"]
    # TypeMeta's and ObjectMeta's descriptions, as apiextensions' builder sets them on every CRD
    assert s["properties"]["metadata"]["description"].startswith("Standard object's metadata. More info: https://")
    assert s["properties"]["apiVersion"] == {"type": "string", "description": (
        "APIVersion defines the versioned schema of this representation of an object. Servers should convert "
        "recognized schemas to the latest internal value, and may reject unrecognized values. More info: "
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources")}
    assert s["properties"]["kind"]["description"].startswith("Kind is a string value representing the REST resource")


def test_swagger_v2_uses_definitions_refs() -> None:
    doc = openapi_v2(_registry())
    assert doc["swagger"] == "2.0"
    pod = doc["definitions"]["io.k8s.api.core.v1.Pod"]
    assert {"group": "", "version": "v1", "kind": "Pod"} in pod["x-kubernetes-group-version-kind"]
    assert pod["properties"]["spec"]["$ref"] == "#/definitions/io.k8s.api.core.v1.PodSpec"
    assert set(pod["properties"]["spec"]) == {"$ref", "description"}  # swagger 2.0: the description beside $ref
    refs = _refs(doc)
    assert refs and all(r.startswith("#/definitions/") and r[len("#/definitions/"):] in doc["definitions"]
                        for r in refs)
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert {"name": "fieldValidation", "in": "query"}.items() <= next(
        p for p in patch["parameters"] if p["name"] == "fieldValidation").items()


# ---- real kubectl against a stub serving these documents -------------------------------------

KUBECTL = Path(__file__).resolve().parents[2] / ".cache" / "kubectl" / "kubectl"
needs_kubectl = pytest.mark.usefixtures("kubectl_bin")  # fails, not skips, without kubectl


def _resource_list(reg: ResourceRegistry, group: str, version: str) -> dict[str, Any]:
    return {
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/{version}" if group else version,
        "resources": [{"name": i.resource, "singularName": i.singular, "namespaced": i.namespaced, "kind": i.kind,
                       "verbs": list(i.verbs), "shortNames": list(i.short_names)}
                      for i in reg.for_group_version(group, version)],
    }


def _stub_app(reg: ResourceRegistry, seen: list[tuple[str, str]]) -> web.Application:
    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        seen.append((request.method, request.path_qs))
        parts = [p for p in request.path.split("/") if p]
        if request.path == "/api":
            return web.json_response({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})
        if request.path == "/apis":
            return web.json_response({"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs],
                 "preferredVersion": {"groupVersion": f"{g}/{vs[0]}", "version": vs[0]}}
                for g, vs in reg.groups().items() if g]})
        if parts == ["api", "v1"]:
            return web.json_response(_resource_list(reg, "", "v1"))
        if len(parts) == 3 and parts[0] == "apis":
            return web.json_response(_resource_list(reg, parts[1], parts[2]))
        if parts == ["openapi", "v3"]:
            return web.json_response(openapi_v3_root(reg))
        if parts[:2] == ["openapi", "v3"]:
            rest = parts[2:]
            group, version = ("", rest[1]) if rest[0] == "api" else (rest[1], rest[2])
            return web.json_response(openapi_v3_group_version(reg, group, version))
        if request.method == "POST":
            obj = json.loads(body)
            obj.setdefault("metadata", {})["uid"] = "u1"
            return web.json_response(obj, status=201)
        return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                                  "reason": "NotFound", "message": "not found"}, status=404)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


async def _kubectl(server: str, tmp: Path, *args: str, stdin: bytes | None = None) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        str(KUBECTL), "--server", server, "--cache-dir", str(tmp / "cache"), *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    async with asyncio.timeout(60):
        out, _ = await proc.communicate(stdin)
    return proc.returncode or 0, out.decode()


@pytest.fixture
async def stub(tmp_path: Path) -> Any:
    seen: list[tuple[str, str]] = []
    runner = web.AppRunner(_stub_app(_registry(), seen))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    yield f"http://{host}:{port}", seen
    await runner.cleanup()


@needs_kubectl
async def test_kubectl_explain_walks_the_component_schemas(stub: Any, tmp_path: Path) -> None:
    server, _ = stub
    rc, out = await _kubectl(server, tmp_path, "explain", "pod.spec.topologySpreadConstraints")
    assert rc == 0, out
    assert "FIELD: topologySpreadConstraints <[]TopologySpreadConstraint>" in out
    for field in ("maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector"):
        assert field in out
    rc, out = await _kubectl(server, tmp_path, "explain", "podgroups.spec")
    assert rc == 0, out
    assert "minMember" in out and "minimum members" in out


@needs_kubectl
@pytest.mark.parametrize(
    ("manifest", "path"),
    [
        pytest.param("apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec: {containers: [{name: c, image: i}]}\n",
                     "/api/v1/namespaces/default/pods", id="pod"),
        pytest.param("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n"
                     "spec: {minMember: 2}\n", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
                     id="custom-resource"),
    ],
)
async def test_kubectl_create_file_defers_validation_to_the_server(stub: Any, tmp_path: Path, manifest: str,
                                                                   path: str) -> None:
    server, seen = stub
    rc, out = await _kubectl(server, tmp_path, "create", "-f", "-", stdin=manifest.encode())
    assert rc == 0, out
    posts = [p for m, p in seen if m == "POST"]
    assert posts == [f"{path}?fieldManager=kubectl-create&fieldValidation=Strict"]
    assert not any(p.startswith("/openapi/v2") for _, p in seen)


def test_documents_carry_upstreams_descriptions() -> None:
    """Types and fields carry the Kubernetes 1.33 OpenAPI's descriptions (from lightkube-models):
    on plain fields, beside `allOf` refs in v3 and beside `$ref` in v2, on names the generator
    renamed (`continue`); types upstream's spec does not have
    (minik3s' own v1alpha1 Workload) keep what they had."""
    reg = _registry()
    core = openapi_v3_group_version(reg, "", "v1")["components"]["schemas"]
    pod = core["io.k8s.api.core.v1.Pod"]
    assert pod["description"].startswith("Pod is a collection of containers that can run on a host.")
    assert pod["properties"]["spec"]["description"].startswith("Specification of the desired behavior of the pod.")
    assert pod["properties"]["spec"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}]
    assert pod["properties"]["apiVersion"]["description"].startswith(
        "APIVersion defines the versioned schema of this representation of an object. Servers should convert")
    containers = core["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["description"].startswith("List of containers belonging to the pod.")
    assert core["io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"]["properties"]["continue"]["description"].startswith(
        "continue may be set if the user set a limit")
    ext = openapi_v3_group_version(reg, "apiextensions.k8s.io", "v1")["components"]["schemas"]
    names = ext["io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames"]
    assert names["properties"]["plural"]["description"].startswith("plural is the plural name of the resource to serve.")
    v2 = openapi_v2(reg)["definitions"]["io.k8s.api.core.v1.Pod"]["properties"]["spec"]
    assert v2["$ref"] == "#/definitions/io.k8s.api.core.v1.PodSpec"
    assert v2["description"].startswith("Specification of the desired behavior of the pod.")
    # the OpenAPIV3OneOfTypes types: a oneOf without a type in v3 (bare $ref as map values), a string in v2
    quantity = core["io.k8s.apimachinery.pkg.api.resource.Quantity"]
    assert "type" not in quantity and quantity["oneOf"] == [{"type": "string"}, {"type": "number"}]
    limits = core["io.k8s.api.core.v1.ResourceRequirements"]["properties"]["limits"]
    assert limits["additionalProperties"] == {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}
    v2defs = openapi_v2(reg)["definitions"]
    assert v2defs["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"] == "string"
    assert "oneOf" not in v2defs["io.k8s.apimachinery.pkg.api.resource.Quantity"]
    assert v2defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    workload = openapi_v3_group_version(reg, "scheduling.k8s.io", "v1alpha1")["components"]["schemas"]
    assert "io.k8s.api.scheduling.v1alpha1.Workload" in workload


def test_docstring_parser_joins_wrapped_lines_and_maps_generated_names() -> None:
    from apiserver.openapi_descriptions import describe, parse_docstring

    doc = parse_docstring("""Thing is a thing. It spans
      two lines.

      **parameters**

      * **continue_** ``Optional[str]`` - continue may be set
        when more remain.
      * **d_ref** ``Optional[str]`` -
      * **x_kubernetes_map_type** ``Optional[str]`` - x-kubernetes-map-type annotates
        an object.
    """)
    assert doc.description == "Thing is a thing. It spans two lines."
    assert doc.fields == {"continue": "continue may be set when more remain.", "$ref": "",
                          "x-kubernetes-map-type": "x-kubernetes-map-type annotates an object."}
    assert describe("io.k8s.api.core.v1.NoSuchType") is None
    assert describe("com.example.v1.Widget") is None
