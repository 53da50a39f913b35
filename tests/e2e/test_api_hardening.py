"""Hardening (issue 17): out-of-range integers, malformed DeleteOptions, size limits, YAML
alias bombs, watch parameters and contended writes, all answered as kube-apiserver answers them,
over HTTP against a real server; nothing bad is stored and /readyz stays up."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest

from minik3s.testing.server import ServerProcess
from tests.e2e.warning_headers import warnings_of


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess):
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


@pytest.fixture(scope="module")
def ns(http) -> str:
    name = "hard-" + uuid.uuid4().hex[:6]
    http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    return name


def status_of(r: httpx.Response, code: int, reason: str) -> dict:
    assert r.status_code == code, r.text
    st = r.json()
    assert st["kind"] == "Status" and st["status"] == "Failure" and st["code"] == code and st["reason"] == reason, st
    return st


def deployment(name: str, replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def job(name: str, **spec: int) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {**spec, "template": {"spec": {"restartPolicy": "Never",
                                                   "containers": [{"name": "c", "image": "busybox"}]}}}}


# ---------------------------------------------------------------- int32 / int64 ranges
def test_int32_overflow_is_refused_at_decoding(http, ns):
    r = http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("big", 2**31))
    st = status_of(r, 400, "BadRequest")
    assert st["message"] == ('Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal '
                             'number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32')
    assert http.get(f"/apis/apps/v1/namespaces/{ns}/deployments/big").status_code == 404
    # the largest int32 decodes (validation, not decoding, has the last word on it)
    r = http.post(f"/apis/apps/v1/namespaces/{ns}/deployments?dryRun=All", json=deployment("edge", 2**31 - 1))
    assert r.status_code == 201, r.text


def test_job_parallelism_and_int64_fields_are_range_checked(http, ns):
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=job("par", parallelism=2**31))
    st = status_of(r, 400, "BadRequest")
    assert "number 2147483648 into Go struct field JobSpec.spec.parallelism of type int32" in st["message"]
    # activeDeadlineSeconds is an int64: 2^40 is fine, 2^63 is not
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/jobs?dryRun=All", json=job("ads", activeDeadlineSeconds=2**40))
    assert r.status_code == 201, r.text
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=job("ads", activeDeadlineSeconds=2**63))
    st = status_of(r, 400, "BadRequest")
    assert "JobSpec.spec.activeDeadlineSeconds of type int64" in st["message"]
    assert http.get(f"/apis/batch/v1/namespaces/{ns}/jobs").json()["items"] == []


def test_patch_and_scale_cannot_overflow_replicas(http, ns):
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("web", 0)).raise_for_status()
    base = f"/apis/apps/v1/namespaces/{ns}/deployments/web"
    r = http.patch(base, json={"spec": {"replicas": 2**31}}, headers={"Content-Type": "application/merge-patch+json"})
    st = status_of(r, 422, "Invalid")
    assert "of type int32" in st["message"]
    r = http.put(base + "/scale", json={"apiVersion": "autoscaling/v1", "kind": "Scale",
                                        "metadata": {"name": "web", "namespace": ns}, "spec": {"replicas": 2**40}})
    st = status_of(r, 400, "BadRequest")
    assert st["message"] == ('Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal number '
                             '1099511627776 into Go struct field ScaleSpec.spec.replicas of type int32')
    r = http.patch(base + "/scale", json={"spec": {"replicas": 2**40}},
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 400 and "ScaleSpec.spec.replicas of type int32" in r.json()["message"]
    assert http.get(base).json()["spec"]["replicas"] == 0


# ---------------------------------------------------------------- DeleteOptions
@pytest.mark.parametrize(("body", "message"), [
    ({"preconditions": "x"},
     "json: cannot unmarshal string into Go struct field DeleteOptions.preconditions of type v1.Preconditions"),
    ({"gracePeriodSeconds": "soon"},
     "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64"),
    ({"preconditions": {"uid": 5}},
     "json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type types.UID"),
    ({"dryRun": "All"}, "json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string"),
])
def test_malformed_delete_options_are_400(http, ns, body, message):
    name = "keep-" + uuid.uuid4().hex[:6]
    http.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": name}}).raise_for_status()
    r = http.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps/{name}", json=body)
    st = status_of(r, 400, "BadRequest")
    assert st["message"] == message
    assert http.get(f"/api/v1/namespaces/{ns}/configmaps/{name}").status_code == 200
    assert http.get("/readyz").status_code == 200


# ---------------------------------------------------------------- size limits
def test_yaml_alias_bomb_is_refused_without_expanding(http, ns):
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: bomb}", "data:",
             "  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    r = http.post(f"/api/v1/namespaces/{ns}/configmaps", content="\n".join(lines).encode(),
                  headers={"Content-Type": "application/yaml"})
    st = status_of(r, 400, "BadRequest")
    assert st["message"] == "error converting YAML to JSON: yaml: document contains excessive aliasing"
    assert http.get(f"/api/v1/namespaces/{ns}/configmaps/bomb").status_code == 404
    # a few honest aliases are fine
    ok = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aliases\n  labels: &l {app: web}\n" \
         b"  annotations: *l\ndata: {a: b}\n"
    r = http.post(f"/api/v1/namespaces/{ns}/configmaps", content=ok, headers={"Content-Type": "application/yaml"})
    assert r.status_code == 201, r.text
    assert r.json()["metadata"]["annotations"] == {"app": "web"}


def test_configmap_and_secret_data_over_1mib_are_invalid(http, ns):
    r = http.post(f"/api/v1/namespaces/{ns}/configmaps",
                  json={"metadata": {"name": "huge"}, "data": {"a": "x" * (600 * 1024), "b": "y" * (600 * 1024)}})
    st = status_of(r, 422, "Invalid")
    assert st["message"] == 'ConfigMap "huge" is invalid: []: Too long: may not be more than 1048576 bytes'
    assert st["details"]["causes"][0]["reason"] == "FieldValueTooLong"
    r = http.post(f"/api/v1/namespaces/{ns}/secrets",
                  json={"metadata": {"name": "huge"}, "stringData": {"a": "x" * (1024 * 1024 + 1)}})
    st = status_of(r, 422, "Invalid")
    assert st["message"] == 'Secret "huge" is invalid: data: Too long: may not be more than 1048576 bytes'
    # exactly 1 MiB is allowed
    r = http.post(f"/api/v1/namespaces/{ns}/configmaps?dryRun=All",
                  json={"metadata": {"name": "edge"}, "data": {"a": "x" * (1024 * 1024)}})
    assert r.status_code == 201, r.text
    assert http.get(f"/api/v1/namespaces/{ns}/configmaps/huge").status_code == 404


def test_stored_object_over_1_5mib_is_413(http, ns):
    # no single field has a limit of its own here (env values), the object as a whole is too large
    env = [{"name": f"V{i}", "value": "z" * 100_000} for i in range(17)]
    pod = {"metadata": {"name": "fat"}, "spec": {"containers": [{"name": "c", "image": "i", "env": env}]}}
    r = http.post(f"/api/v1/namespaces/{ns}/pods", json=pod)
    st = status_of(r, 413, "RequestEntityTooLarge")
    assert st["message"] == "etcdserver: request is too large"
    assert http.get(f"/api/v1/namespaces/{ns}/pods/fat").status_code == 404


def test_json_patch_copies_cannot_amplify(http, ns):
    http.post(f"/api/v1/namespaces/{ns}/configmaps",
              json={"metadata": {"name": "amp"}, "data": {"k0": "v" * 1000}}).raise_for_status()
    ops = [{"op": "copy", "from": f"/data/k{i}", "path": f"/data/k{i + 1}"} for i in range(4000)]
    r = http.patch(f"/api/v1/namespaces/{ns}/configmaps/amp", json=ops,
                   headers={"Content-Type": "application/json-patch+json"})
    st = status_of(r, 413, "RequestEntityTooLarge")
    assert "Unable to copy" in st["message"]
    assert len(http.get(f"/api/v1/namespaces/{ns}/configmaps/amp").json()["data"]) == 1
    too_many = [{"op": "test", "path": "/data/k0", "value": "v" * 1000}] * 10001
    r = http.patch(f"/api/v1/namespaces/{ns}/configmaps/amp", json=too_many,
                   headers={"Content-Type": "application/json-patch+json"})
    status_of(r, 413, "RequestEntityTooLarge")


# ---------------------------------------------------------------- deep nesting
@pytest.mark.parametrize("depth", [300, 1000, 5000])
@pytest.mark.parametrize("ct", ["application/json", "application/yaml", "application/merge-patch+json",
                                "application/strategic-merge-patch+json"])
def test_deep_nesting_is_400_never_500(http, ns, depth, ct):
    http.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "nest"}})
    deep = b'{"a":' * depth + b"1" + b"}" * depth
    body = b'{"metadata": {"name": "nest"}, "bogus": ' + deep + b"}"
    if ct.endswith("patch+json"):
        r = http.patch(f"/api/v1/namespaces/{ns}/configmaps/nest", content=body, headers={"Content-Type": ct})
    else:
        r = http.post(f"/api/v1/namespaces/{ns}/configmaps", content=body, headers={"Content-Type": ct})
    assert r.status_code == 400, r.text[:300]
    msg = r.json()["message"]
    assert r.json()["kind"] == "Status" and ("depth" in msg or "flow level" in msg), msg
    assert http.get("/readyz").status_code == 200


def test_json_patch_building_too_deep_a_value_is_400(http, ns):
    http.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "deepjp"}})
    value: dict = {}
    for _ in range(200):
        value = {"a": value}
    ops = [{"op": "add", "path": "/metadata/annotations", "value": {}},
           {"op": "add", "path": "/x", "value": value}, {"op": "copy", "from": "/x", "path": "/x/a/a/a/a/a/a/a/a/a/a" + "/a" * 80}]
    r = http.patch(f"/api/v1/namespaces/{ns}/configmaps/deepjp", json=ops,
                   headers={"Content-Type": "application/json-patch+json"})
    # `x` is no ConfigMap field: the patched object is decoded as upstream decodes it, so the deep
    # value is dropped (with a warning) before anything tries to encode it; nothing deep is stored
    assert r.status_code == 200, r.text[:300]
    assert 'unknown field \\"x\\"' in r.headers.get("Warning", "")
    assert "x" not in http.get(f"/api/v1/namespaces/{ns}/configmaps/deepjp").json()
    # a deep value where the schema takes any JSON (a CRD field preserving unknown fields) is a 400
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "deeps.hard.example.com"},
           "spec": {"group": "hard.example.com", "scope": "Namespaced",
                    "names": {"plural": "deeps", "singular": "deep", "kind": "Deep"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    assert http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd).status_code == 201
    path = f"/apis/hard.example.com/v1/namespaces/{ns}/deeps"
    for _ in range(100):  # the CRD's resource is served once it is established
        if http.post(path, json={"apiVersion": "hard.example.com/v1", "kind": "Deep",
                                 "metadata": {"name": "d"}}).status_code == 201:
            break
        asyncio.run(asyncio.sleep(0.05))
    r = http.patch(f"{path}/d", json=ops[1:], headers={"Content-Type": "application/json-patch+json"})
    assert 400 <= r.status_code < 500, r.text[:300]
    assert r.json()["kind"] == "Status"
    assert "x" not in http.get(f"{path}/d").json()


# ---------------------------------------------------------------- list/watch parameters
@pytest.mark.parametrize(("params", "code", "message"), [
    ({"watch": "1", "resourceVersion": "abc"}, 400, 'Invalid value for resourceVersion: "abc"'),
    ({"watch": "1", "resourceVersion": "-1"}, 400, 'Invalid value for resourceVersion: "-1"'),
    # Go's ParseUint: ASCII digits only, within uint64
    ({"watch": "1", "resourceVersion": "+1"}, 400, 'Invalid value for resourceVersion: "+1"'),
    ({"resourceVersion": "1_0"}, 400, 'Invalid value for resourceVersion: "1_0"'),
    ({"resourceVersion": " 1"}, 400, 'Invalid value for resourceVersion: " 1"'),
    ({"resourceVersion": "\uff11"}, 400, 'Invalid value for resourceVersion: "\uff11"'),
    ({"resourceVersion": "18446744073709551616"}, 400, 'Invalid value for resourceVersion: "18446744073709551616"'),
    ({"resourceVersion": "abc", "resourceVersionMatch": "Exact"}, 400, 'Invalid value for resourceVersion: "abc"'),
    ({"watch": "1", "timeoutSeconds": "soon"}, 400, 'invalid value for timeoutSeconds: "soon"'),
    ({"watch": "1", "resourceVersionMatch": "Exact", "resourceVersion": "1"}, 422,
     'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden '
     'for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported '
     'values: "NotOlderThan"]'),
    ({"resourceVersionMatch": "Bogus", "resourceVersion": "1"}, 422,
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Bogus": supported values: '
     '"Exact", "NotOlderThan", ""'),
    ({"resourceVersionMatch": "NotOlderThan"}, 422,
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden '
     'unless resourceVersion is provided'),
    ({"sendInitialEvents": "true"}, 422,
     'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'),
    ({"watch": "1", "labelSelector": "a in (b"}, 400, None),
    ({"watch": "1", "fieldSelector": "spec.bogus=x"}, 400, "field label not supported: spec.bogus"),
])
def test_bad_list_and_watch_parameters_are_refused_before_the_stream(minik3s_api, ns, params, code, message):
    # a plain client: the answer must be a complete, non-chunked Status, not a 200 stream
    with httpx.Client(base_url=minik3s_api.url, timeout=10) as c:
        r = c.get(f"/api/v1/namespaces/{ns}/configmaps", params=params)
    assert r.status_code == code, r.text
    assert r.headers.get("Transfer-Encoding") != "chunked"
    st = r.json()
    assert st["kind"] == "Status" and st["code"] == code
    if message:
        assert st["message"] == message


def test_empty_set_selector_is_served_as_upstream(http, ns):
    # upstream parses `a in ()` as a in (""): a valid selector matching objects without a value
    http.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "lbl", "labels": {"a": ""}}})
    r = http.get(f"/api/v1/namespaces/{ns}/configmaps", params={"labelSelector": "a in ()"})
    assert r.status_code == 200
    assert [i["metadata"]["name"] for i in r.json()["items"]] == ["lbl"]


def test_tampered_continue_token_is_400_without_echo(http, ns):
    import base64
    tok = base64.urlsafe_b64encode(b'{"rv": "9999999999abc", "start": "x"}').decode()
    r = http.get(f"/api/v1/namespaces/{ns}/configmaps", params={"limit": "1", "continue": tok})
    st = status_of(r, 400, "BadRequest")
    assert "9999999999abc" not in st["message"]
    r = http.get(f"/api/v1/namespaces/{ns}/configmaps", params={"limit": "1", "continue": "%%%garbage"})
    status_of(r, 400, "BadRequest")


def test_bad_accept_is_406_and_unknown_method_405(http, ns):
    r = http.get(f"/api/v1/namespaces/{ns}/configmaps", headers={"Accept": "application/bogus"})
    status_of(r, 406, "NotAcceptable")
    for method in ("TRACE", "PROPFIND"):
        r = http.request(method, f"/api/v1/namespaces/{ns}/configmaps")
        assert r.status_code in (400, 405), (method, r.status_code)
        if r.status_code == 405:
            assert r.json()["reason"] == "MethodNotAllowed"
    r = http.request("TRACE", f"/api/v1/namespaces/{ns}/configmaps")
    status_of(r, 405, "MethodNotAllowed")
    # kubectl's own Accept and a browser's both still work
    r = http.get(f"/api/v1/namespaces/{ns}/configmaps",
                 headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
    assert r.status_code == 200
    r = http.get(f"/api/v1/namespaces/{ns}/configmaps", headers={"Accept": "text/html,*/*;q=0.8"})
    assert r.status_code == 200


# ---------------------------------------------------------------- contended writes
async def _concurrently(url: str, n: int, send) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as c:
        return await asyncio.gather(*(send(c, i) for i in range(n)))


def test_concurrent_unconditional_patches_and_puts_all_succeed(minik3s_api, http, ns):
    http.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "hot"}, "data": {}}).raise_for_status()
    path = f"/api/v1/namespaces/{ns}/configmaps/hot"
    kinds = ["application/merge-patch+json", "application/strategic-merge-patch+json"]

    async def patch(c: httpx.AsyncClient, i: int) -> httpx.Response:
        return await c.patch(path, json={"data": {f"k{i}": str(i)}}, headers={"Content-Type": kinds[i % 2]})

    rs = asyncio.run(_concurrently(minik3s_api.url, 50, patch))
    assert [r.status_code for r in rs] == [200] * 50, [r.text for r in rs if r.status_code != 200][:2]
    assert len(http.get(path).json()["data"]) == 50  # every patch applied to the latest object

    async def json_patch(c: httpx.AsyncClient, i: int) -> httpx.Response:
        return await c.patch(path, json=[{"op": "add", "path": f"/data/j{i}", "value": "x"}],
                             headers={"Content-Type": "application/json-patch+json"})

    rs = asyncio.run(_concurrently(minik3s_api.url, 50, json_patch))
    assert [r.status_code for r in rs] == [200] * 50
    assert len(http.get(path).json()["data"]) == 100

    async def put(c: httpx.AsyncClient, i: int) -> httpx.Response:
        return await c.put(path, json={"metadata": {"name": "hot"}, "data": {"writer": str(i)}})

    rs = asyncio.run(_concurrently(minik3s_api.url, 50, put))
    assert [r.status_code for r in rs] == [200] * 50, [r.text for r in rs if r.status_code != 200][:2]
    final = http.get(path).json()
    assert list(final["data"]) == ["writer"]
    # a PUT with a stale resourceVersion is still a conflict
    stale = {"metadata": {"name": "hot", "resourceVersion": "1"}, "data": {}}
    status_of(http.put(path, json=stale), 409, "Conflict")


def test_concurrent_deletes_one_success_rest_404(minik3s_api, http, ns):
    http.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "doomed"}}).raise_for_status()
    path = f"/api/v1/namespaces/{ns}/configmaps/doomed"

    async def delete(c: httpx.AsyncClient, i: int) -> httpx.Response:
        return await c.delete(path)

    rs = asyncio.run(_concurrently(minik3s_api.url, 30, delete))
    codes = sorted(r.status_code for r in rs)
    assert codes == [200] + [404] * 29, codes
    for r in rs:
        if r.status_code == 404:
            assert r.json()["reason"] == "NotFound" and r.json()["details"]["name"] == "doomed"
    # collection deletes racing each other: no errors, each object deleted once
    for i in range(20):
        http.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": f"batch{i}",
                                                                        "labels": {"race": "yes"}}})

    async def delete_all(c: httpx.AsyncClient, i: int) -> httpx.Response:
        return await c.delete(f"/api/v1/namespaces/{ns}/configmaps", params={"labelSelector": "race=yes"})

    rs = asyncio.run(_concurrently(minik3s_api.url, 10, delete_all))
    assert [r.status_code for r in rs] == [200] * 10
    names = [i["metadata"]["name"] for r in rs for i in r.json()["items"]]
    assert sorted(names) == sorted(f"batch{i}" for i in range(20))


# ---------------------------------------------------------------- browser protection
@pytest.mark.parametrize("ct", ["text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded",
                                "text/plain;charset=UTF-8"])
def test_simple_cors_bodies_are_refused(http, ns, ct):
    body = b'{"metadata": {"name": "from-a-web-page"}}'
    r = http.post(f"/api/v1/namespaces/{ns}/configmaps", content=body, headers={"Content-Type": ct})
    st = status_of(r, 415, "UnsupportedMediaType")
    assert "preflight" in st["message"]
    assert http.get(f"/api/v1/namespaces/{ns}/configmaps/from-a-web-page").status_code == 404


def test_foreign_host_and_origin_are_refused(http, ns, minik3s_api):
    r = http.get(f"/api/v1/namespaces/{ns}/configmaps", headers={"Host": "evil.example.com"})
    st = status_of(r, 403, "Forbidden")
    assert "evil.example.com" in st["message"] and "DNS rebinding" in st["message"]
    r = http.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "cross"}},
                  headers={"Origin": "https://evil.example.com"})
    status_of(r, 403, "Forbidden")
    assert http.get(f"/api/v1/namespaces/{ns}/configmaps/cross").status_code == 404
    # loopback names, with or without a port, and a local page's Origin are fine
    port = httpx.URL(minik3s_api.url).port
    for host in ("localhost", f"localhost:{port}", f"127.0.0.1:{port}", "LOCALHOST."):
        assert http.get("/version", headers={"Host": host}).status_code == 200, host
    assert http.get("/version", headers={"Origin": f"http://localhost:{port}"}).status_code == 200


# ---------------------------------------------------------------- decoding: unknown, duplicate, quantities
DUP_DEPLOYMENT = b"""{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "%s"},
 "spec": {"unknown1": "v", "paused": true, "paused": false,
          "selector": {"matchLabels": {"app": "d"}},
          "template": {"metadata": {"labels": {"app": "d"}},
                       "spec": {"containers": [{"name": "c", "image": "nginx", "unknownNested": 1,
                                                "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}}}"""


def test_unknown_and_duplicate_fields_warned_and_dropped(http, ns):
    r = http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", content=DUP_DEPLOYMENT % b"dup",
                  headers={"Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    assert warnings_of(r) == ['duplicate field "paused"', 'duplicate field "imagePullPolicy"',
                              'unknown field "spec.template.spec.containers[0].unknownNested"',
                              'unknown field "spec.unknown1"']
    got = http.get(f"/apis/apps/v1/namespaces/{ns}/deployments/dup").json()
    assert "unknown1" not in got["spec"] and got["spec"]["paused"] is False
    c = got["spec"]["template"]["spec"]["containers"][0]
    assert "unknownNested" not in c and c["imagePullPolicy"] == "Never"  # the last one wins


def test_unknown_and_duplicate_fields_refused_under_strict(http, ns):
    r = http.post(f"/apis/apps/v1/namespaces/{ns}/deployments?fieldValidation=Strict",
                  content=DUP_DEPLOYMENT % b"strict", headers={"Content-Type": "application/json"})
    st = status_of(r, 400, "BadRequest")
    assert st["message"] == ('Deployment in version "v1" cannot be handled as a Deployment: '
                             'strict decoding error: duplicate field "paused", duplicate field "imagePullPolicy", '
                             'unknown field "spec.template.spec.containers[0].unknownNested", '
                             'unknown field "spec.unknown1"')
    assert http.get(f"/apis/apps/v1/namespaces/{ns}/deployments/strict").status_code == 404


def test_yaml_duplicate_keys_named_by_line(http, ns):
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ydup\ndata:\n  a: x\n  a: y\nbogus: 1\n"
    r = http.post(f"/api/v1/namespaces/{ns}/configmaps?fieldValidation=Strict", content=body,
                  headers={"Content-Type": "application/yaml"})
    st = status_of(r, 400, "BadRequest")
    assert st["message"] == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: '
                             'strict decoding error: line 7: key "a" already set in map, unknown field "bogus"')
    r = http.post(f"/api/v1/namespaces/{ns}/configmaps", content=body, headers={"Content-Type": "application/yaml"})
    assert r.status_code == 201
    assert warnings_of(r) == ['line 7: key "a" already set in map', 'unknown field "bogus"']
    assert r.json()["data"] == {"a": "y"} and "bogus" not in r.json()


def test_ignore_drops_unknown_fields_without_a_word(http, ns):
    r = http.post(f"/api/v1/namespaces/{ns}/configmaps?fieldValidation=Ignore",
                  content=b'{"metadata": {"name": "ign"}, "bogusTop": 1, "data": {"k": "1"}, "data": {"k": "2"}}',
                  headers={"Content-Type": "application/json"})
    assert r.status_code == 201 and "Warning" not in r.headers
    assert "bogusTop" not in http.get(f"/api/v1/namespaces/{ns}/configmaps/ign").json()


def test_quantities_stored_canonically_over_http(http, ns):
    pod = {"metadata": {"name": "qty"}, "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {
        "requests": {"cpu": 1.5, "memory": "0.5Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}}}]}}
    r = http.post(f"/api/v1/namespaces/{ns}/pods", json=pod)
    assert r.status_code == 201, r.text
    res = http.get(f"/api/v1/namespaces/{ns}/pods/qty").json()["spec"]["containers"][0]["resources"]
    assert res == {"requests": {"cpu": "1500m", "memory": "512Mi"}, "limits": {"cpu": "2", "memory": "1Gi"}}


def test_a_list_at_a_resource_version_not_reached_waits_then_is_504(http, ns):
    """As upstream's watch cache: a list at a future resourceVersion (NotOlderThan, or no match)
    waits up to 3 s for the store to reach it; one reached meanwhile is served, one never
    reached is 504 "Too large resource version" with retry-after 1."""
    import threading
    import time

    path = f"/api/v1/namespaces/{ns}/configmaps"
    current = int(http.get(path).json()["metadata"]["resourceVersion"])
    started = time.monotonic()
    r = http.get(path, params={"resourceVersion": str(current + 10**6)})
    assert time.monotonic() - started >= 2.9
    assert r.status_code == 504
    assert r.headers["Retry-After"] == "1"
    st = r.json()
    assert st["reason"] == "Timeout"
    assert st["message"].startswith(f"Timeout: Too large resource version: {current + 10**6}, current: ")
    assert st["details"] == {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                             "retryAfterSeconds": 1}
    current = int(http.get(path).json()["metadata"]["resourceVersion"])
    writer = threading.Timer(0.3, lambda: http.post(path, json={"metadata": {"name": "arrives"}}))
    writer.start()
    try:
        r = http.get(path, params={"resourceVersion": str(current + 1), "resourceVersionMatch": "NotOlderThan"})
    finally:
        writer.join()
    assert r.status_code == 200
    assert "arrives" in [i["metadata"]["name"] for i in r.json()["items"]]


@pytest.mark.parametrize(("value", "watches"), [
    pytest.param("true", True, id="true"), pytest.param("1", True, id="one"),
    pytest.param("bogus", True, id="any-other-word"), pytest.param("", True, id="empty"),
    pytest.param("false", False, id="false"), pytest.param("FALSE", False, id="false-any-case"),
    pytest.param("0", False, id="zero"),
])
def test_boolean_query_parameters_read_as_upstream(http, ns, value, watches):
    """Convert_Slice_string_To_bool: only "0" and "false" (any case) are false; any other value
    of a present parameter, the empty one included, is true."""
    created = http.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "bool-probe"}})
    assert created.status_code in (201, 409)
    with http.stream("GET", f"/api/v1/namespaces/{ns}/configmaps",
                     params={"watch": value, "timeoutSeconds": "1"}) as r:
        assert r.status_code == 200
        body = b"".join(r.iter_bytes())
    first = json.loads(body.splitlines()[0]) if body.strip() else {}
    if watches:
        assert "type" in first and first["type"] == "ADDED"  # an event stream, not a list
    else:
        assert first.get("kind") == "ConfigMapList"


def test_a_watch_with_initial_events_at_a_resource_version_not_reached_is_504(http, ns):
    """sendInitialEvents at a resourceVersion the store has not reached waits as a list does,
    then is 504 before any event; a plain watch from that resourceVersion starts at once and
    skips the events up to it, as upstream's watch cache serves it."""
    import time

    path = f"/api/v1/namespaces/{ns}/configmaps"
    future = int(http.get(path).json()["metadata"]["resourceVersion"]) + 10**6
    started = time.monotonic()
    r = http.get(path, params={"watch": "1", "sendInitialEvents": "true", "allowWatchBookmarks": "true",
                               "resourceVersionMatch": "NotOlderThan", "resourceVersion": str(future)})
    assert time.monotonic() - started >= 2.9
    assert r.status_code == 504
    assert r.json()["message"].startswith(f"Timeout: Too large resource version: {future}, current: ")
    started = time.monotonic()
    with http.stream("GET", path, params={"watch": "1", "resourceVersion": str(future), "timeoutSeconds": "1"}) as w:
        assert w.status_code == 200
        assert b"".join(w.iter_bytes()) == b""
    assert time.monotonic() - started < 2.9
