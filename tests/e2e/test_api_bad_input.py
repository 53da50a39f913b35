"""Bad input gets a clear upstream-shaped error, and nothing is lost or wedged."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from minik3s.testing.server import ServerProcess


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess):
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


@pytest.fixture(scope="module")
def nsname(http) -> str:
    name = "bad-" + uuid.uuid4().hex[:6]
    http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    return name


def good_pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}}}]}}


def assert_status(r: httpx.Response, code: int, reason: str) -> dict:
    assert r.status_code == code, r.text
    st = r.json()
    assert st["kind"] == "Status" and st["apiVersion"] == "v1" and st["status"] == "Failure"
    assert st["code"] == code and st["reason"] == reason, st
    assert st["message"]
    return st


def test_malformed_json_and_yaml_are_400(http, nsname):
    r = http.post(f"/api/v1/namespaces/{nsname}/pods", content=b'{"metadata": {', headers={"Content-Type": "application/json"})
    assert_status(r, 400, "BadRequest")
    r = http.post(f"/api/v1/namespaces/{nsname}/pods", content=b"metadata: [unclosed",
                  headers={"Content-Type": "application/yaml"})
    assert_status(r, 400, "BadRequest")
    r = http.post(f"/api/v1/namespaces/{nsname}/pods", content=b'"just a string"')
    assert_status(r, 400, "BadRequest")


def test_yaml_body_is_accepted(http, nsname):
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: b\n"
    r = http.post(f"/api/v1/namespaces/{nsname}/configmaps", content=body, headers={"Content-Type": "application/yaml"})
    assert r.status_code == 201, r.text


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        pytest.param(lambda p: p["spec"]["containers"][0]["resources"]["requests"].update(cpu="abc"),
                     "spec.containers[0].resources.requests", id="unparseable-cpu-quantity"),
        pytest.param(lambda p: p["spec"]["containers"][0]["resources"]["requests"].update(cpu="1.5.3"),
                     "spec.containers[0].resources.requests", id="cpu-quantity-with-two-dots"),
        pytest.param(lambda p: p["spec"]["containers"][0]["resources"]["requests"].update(memory="-1Gi"),
                     "spec.containers[0].resources.requests", id="negative-memory-request"),
        pytest.param(lambda p: p["spec"].update(containers=[]), "spec.containers", id="no-containers"),
        pytest.param(lambda p: p["metadata"].update(name="Bad_Name"), "metadata.name", id="name-not-dns1123"),
        pytest.param(lambda p: p["spec"].update(restartPolicy="Sometimes"), "spec.restartPolicy",
                     id="restart-policy-enum"),
        pytest.param(lambda p: p["spec"].update(tolerations=[{"key": "k", "operator": "Maybe"}]),
                     "spec.tolerations[0].operator", id="toleration-operator-enum"),
        pytest.param(lambda p: p["metadata"].update(labels={"bad key!": "v"}), "metadata.labels",
                     id="label-key-invalid"),
    ],
)
def test_invalid_objects_get_422_with_field_paths(http, nsname, mutate, field):
    body = good_pod("inv-" + uuid.uuid4().hex[:6])
    mutate(body)
    r = http.post(f"/api/v1/namespaces/{nsname}/pods", json=body)
    st = assert_status(r, 422, "Invalid")
    assert st["message"].startswith('Pod "')
    fields = [c.get("field", "") for c in st["details"]["causes"]]
    assert any(f.startswith(field) for f in fields), fields


@pytest.mark.parametrize(("q", "stored"), [("100m", "100m"), ("1.5", "1500m"), ("2Gi", "2Gi"), ("1e3", "1e3"),
                                           ("500Mi", "500Mi"), ("0.5Gi", "512Mi")], ids=lambda q: f"quantity-{q}")
def test_valid_quantities_are_accepted(http, nsname, q, stored):
    body = good_pod("q-" + uuid.uuid4().hex[:6])
    body["spec"]["containers"][0]["resources"]["requests"] = {"cpu": q}
    r = http.post(f"/api/v1/namespaces/{nsname}/pods", json=body)
    assert r.status_code == 201, r.text
    # stored in resource.Quantity's canonical form, as upstream's decode + encode writes it
    assert r.json()["spec"]["containers"][0]["resources"]["requests"]["cpu"] == stored


def test_unknown_fields_strict_is_400_and_warn_is_a_header(http, nsname):
    body = good_pod("uf")
    body["spec"]["foo"] = 1
    r = http.post(f"/api/v1/namespaces/{nsname}/pods", params={"fieldValidation": "Strict"}, json=body)
    st = assert_status(r, 400, "BadRequest")
    assert 'unknown field "spec.foo"' in st["message"]
    r = http.post(f"/api/v1/namespaces/{nsname}/pods", json=body)
    assert r.status_code == 201
    assert 'unknown field \\"spec.foo\\"' in r.headers.get("Warning", "") or "spec.foo" in r.headers.get("Warning", "")
    assert "foo" not in r.json()["spec"]  # dropped, as upstream's decoding into the Pod type drops it


def test_oversize_body_is_413(http, nsname):
    big = {"metadata": {"name": "big"}, "data": {"x": "a" * (3 * 1024 * 1024 + 10)}}
    r = http.post(f"/api/v1/namespaces/{nsname}/configmaps", json=big)
    assert_status(r, 413, "RequestEntityTooLarge")
    assert http.get(f"/api/v1/namespaces/{nsname}/configmaps/big").status_code == 404


def test_unknown_resource_and_version_are_404_and_wrong_method_405(http, nsname):
    assert_status(http.get("/api/v1/namespaces/default/gizmos"), 404, "NotFound")
    assert_status(http.get("/apis/apps/v9/deployments"), 404, "NotFound")
    r = http.get("/apis/nope.example.com/v1")  # no API serves the group: Go's plain 404
    assert (r.status_code, r.text) == (404, "404 page not found\n")
    http.post(f"/api/v1/namespaces/{nsname}/configmaps", json={"metadata": {"name": "m"}}).raise_for_status()
    assert_status(http.post(f"/api/v1/namespaces/{nsname}/configmaps/m", json={}), 405, "MethodNotAllowed")
    assert_status(http.put(f"/api/v1/namespaces/{nsname}/configmaps", json={}), 405, "MethodNotAllowed")


CORPUS = [
    b"", b"null", b"[]", b"{}", b"[1,2,3]", b"\x00\xff\xfe", b'{"metadata": null}', b'{"metadata": "x"}',
    b'{"metadata": {"name": 5}}', b'{"metadata": {"name": "x", "labels": "nope"}}',
    b'{"metadata": {"name": "x"}, "spec": "nope"}', b'{"metadata": {"name": "x"}, "spec": {"containers": "no"}}',
    b'{"metadata": {"name": "x"}, "spec": {"containers": [null]}}',
    b'{"metadata": {"name": "x"}, "spec": {"containers": [{"name": 1}]}}',
    b'{"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": []}}}]}}',
    b'{"metadata": {"name": "x", "annotations": {"a": 1}}}', b'{"kind": "Node", "metadata": {"name": "x"}}',
    b'{"apiVersion": "v2", "metadata": {"name": "x"}}', b'{"metadata": {"name": "' + b"a" * 300 + b'"}}',
    b'{"metadata": {"name": "x", "ownerReferences": [{}]}}', b'{"metadata":{"name":"x"},"spec":{"priority":"high"}}',
    b'{"metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":"80"}]}]}}',
    b'\xef\xbb\xbf{"metadata": {"name": "bom"}}', b'{"metadata": {"name": "x"}}' * 3, b'1e999999',
    b'{"a":' * 5000 + b"1" + b"}" * 5000,
]


def test_broken_input_corpus_never_crashes_or_corrupts(http, nsname):
    precious = http.post("/api/v1/namespaces/default/configmaps",
                         json={"metadata": {"name": "precious-" + uuid.uuid4().hex[:6]}, "data": {"k": "v"}}).json()
    keep = good_pod("survivor")
    created = http.post(f"/api/v1/namespaces/{nsname}/pods", json=keep)
    assert created.status_code == 201
    before = created.json()
    paths = [f"/api/v1/namespaces/{nsname}/pods", f"/api/v1/namespaces/{nsname}/pods/survivor",
             f"/api/v1/namespaces/{nsname}/pods/survivor/status", f"/apis/apps/v1/namespaces/{nsname}/deployments",
             f"/api/v1/namespaces/{nsname}/pods/survivor/binding", f"/api/v1/namespaces/{nsname}/pods/survivor/eviction"]
    cts = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf",
           "application/merge-patch+json", "application/json-patch+json", "application/strategic-merge-patch+json",
           "application/apply-patch+yaml", None]
    for body in CORPUS:
        for path in paths:
            for method in ("POST", "PUT", "PATCH", "DELETE"):
                for ct in cts[:3] if method != "PATCH" else cts[3:]:
                    headers = {"Content-Type": ct} if ct else {}
                    params = {"fieldManager": "fuzz"} if ct == "application/apply-patch+yaml" else None
                    r = http.request(method, path, content=body, headers=headers, params=params)
                    assert r.status_code < 500 or r.json().get("kind") == "Status", (method, path, ct, body[:40])
                    assert r.status_code != 500 or "more than one PodDisruptionBudget" in r.text, \
                        (method, path, ct, body[:60], r.text[:300])
                    if r.status_code >= 400:
                        assert r.json()["kind"] == "Status"
    assert http.get("/readyz").status_code == 200
    after = http.get(f"/api/v1/namespaces/{nsname}/pods/survivor")
    if after.status_code == 200:
        # anything the corpus did through valid verbs must still be a valid pod
        assert after.json()["metadata"]["uid"] == before["metadata"]["uid"]
        assert after.json()["spec"]["containers"]
    # an object the corpus never addressed is byte-for-byte intact
    name = precious["metadata"]["name"]
    assert http.get(f"/api/v1/namespaces/default/configmaps/{name}").json() == precious
    # the server still accepts good writes and serves lists
    assert http.post(f"/api/v1/namespaces/{nsname}/pods", json=good_pod("after-fuzz")).status_code == 201
    assert http.get(f"/api/v1/namespaces/{nsname}/pods").status_code == 200


# ---------------------------------------------------------------- HTTP-level junk
def raw_exchange(url: str, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes, read the one response (the server closes after a parser error)."""
    import socket
    from urllib.parse import urlsplit

    u = urlsplit(url)
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall(data)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            out += chunk
            head, sep, body = out.partition(b"\r\n\r\n")
            if sep:
                headers = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:])
                if len(body) >= int(headers.get("Content-Length", "-1")):
                    break
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    return int(lines[0].split()[1]), dict(line.split(": ", 1) for line in lines[1:]), body


@pytest.mark.parametrize(("data", "message"), [
    pytest.param(b"GARBAGE\r\n\r\n", "Invalid method encountered", id="not-http"),
    pytest.param(b"GET /api/v1 HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n", "Bad status line", id="bad-http-version"),
    pytest.param(b"GET /api/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n", "Invalid header token",
                 id="header-without-colon"),
    pytest.param(b"GET /api/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"a" * 70000 + b"\r\n\r\n",
                 "Got more than 65536 bytes when reading", id="header-line-over-the-limit"),
    pytest.param(b"POST /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n",
                 "Invalid character in Content-Length", id="bad-content-length"),
    pytest.param(b"POST /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n",
                 "Invalid character in chunk size", id="bad-chunk-size"),
])
def test_malformed_requests_get_a_status_body(minik3s_api, http, data, message):
    code, headers, body = raw_exchange(minik3s_api.url, data)
    assert code == 400
    assert headers["Content-Type"] == "application/json"
    st = json.loads(body)
    assert st["kind"] == "Status" and st["reason"] == "BadRequest" and st["code"] == 400
    assert st["message"].startswith(f"the request could not be parsed: {message}"), st
    assert http.get("/readyz").text == "ok"


@pytest.mark.parametrize("method", ["TRACE", "OPTIONS", "CONNECT", "PROPFIND"])
def test_methods_the_api_does_not_serve_are_405(minik3s_api, method):
    target = "127.0.0.1:1" if method == "CONNECT" else "/api/v1/namespaces/default"
    code, headers, body = raw_exchange(minik3s_api.url, f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    if method == "CONNECT":  # an authority-form target names no API path
        assert code == 404 and json.loads(body)["reason"] == "NotFound"
        return
    assert code == 405
    st = json.loads(body)
    assert st["reason"] == "MethodNotAllowed"
    assert st["message"] == "the server does not allow this method on the requested resource"


# -- found by fuzzing the API (each was a 500 "internal error" or a dropped connection) -----------

def _deployment(http, nsname: str, name: str) -> str:
    body = {"metadata": {"name": name}, "spec": {"selector": {"matchLabels": {"a": name}}, "template": {
        "metadata": {"labels": {"a": name}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    http.post(f"/apis/apps/v1/namespaces/{nsname}/deployments", json=body).raise_for_status()
    return f"/apis/apps/v1/namespaces/{nsname}/deployments/{name}"


def test_a_scale_without_its_type_meta_decodes_as_a_scale(http, nsname):
    path = _deployment(http, nsname, "scale-bare")
    r = http.put(path + "/scale", json={"metadata": {"name": "scale-bare", "namespace": nsname}, "spec": {"replicas": 3}})
    assert r.status_code == 200, r.text
    assert (r.json()["kind"], r.json()["apiVersion"], r.json()["spec"]) == ("Scale", "autoscaling/v1", {"replicas": 3})
    assert http.get(path).json()["spec"]["replicas"] == 3


def test_a_scale_whose_metadata_is_not_an_object_is_400(http, nsname):
    path = _deployment(http, nsname, "scale-meta")
    for patch in ({"metadata": []}, {"metadata": "x"}):
        r = http.patch(path + "/scale", json=patch, headers={"Content-Type": "application/merge-patch+json"},
                       params={"fieldManager": "m"})
        kind = "array" if isinstance(patch["metadata"], list) else "string"
        st = assert_status(r, 400, "BadRequest")
        assert st["message"] == ('Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal '
                                 f"{kind} into Go struct field Scale.metadata of type v1.ObjectMeta")
    assert http.get(path).status_code == 200


def test_an_apply_that_sets_managed_fields_is_400(http, nsname):
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mf\n  managedFields: [{manager: x}]\n"
    for _ in range(2):  # on create, then on an existing object
        r = http.patch(f"/api/v1/namespaces/{nsname}/configmaps/mf", content=body.encode(),
                       params={"fieldManager": "t"}, headers={"Content-Type": "application/apply-patch+yaml"})
        st = assert_status(r, 400, "BadRequest")
        assert st["message"] == "metadata.managedFields must be nil"
        http.post(f"/api/v1/namespaces/{nsname}/configmaps", json={"metadata": {"name": "mf"}})


def test_yaml_timestamps_stay_strings_and_keys_become_text(http, nsname):
    # go-yaml v2 (sigs.k8s.io/yaml) decodes a timestamp-looking scalar into a string, and turns
    # number and boolean mapping keys into their text
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dated}\ndata: {day: 2024-01-01, at: !!timestamp 2001-12-14}\n"
    r = http.patch(f"/api/v1/namespaces/{nsname}/configmaps/dated", content=body, params={"fieldManager": "t"},
                   headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status_code == 201, r.text
    assert r.json()["data"] == {"day": "2024-01-01", "at": "2001-12-14"}
    body = b"metadata: {name: keyed, labels: {a: b}}\ndata: {1: one}\n"
    r = http.post(f"/api/v1/namespaces/{nsname}/configmaps", content=body, headers={"Content-Type": "application/yaml"})
    assert r.status_code == 201, r.text
    assert r.json()["data"] == {"1": "one"}
    r = http.post(f"/api/v1/namespaces/{nsname}/configmaps", content=b"metadata: {name: nullkey}\ndata: {~: x}\n",
                  headers={"Content-Type": "application/yaml"})
    assert assert_status(r, 400, "BadRequest")["message"].startswith("error converting YAML to JSON")
    r = http.patch(f"/apis/apps/v1/namespaces/{nsname}/deployments/{_deployment(http, nsname, 'smp').rsplit('/', 1)[1]}",
                   content=b"metadata: {annotations: {when: 2024-01-01}}\n",
                   headers={"Content-Type": "application/strategic-merge-patch+json"})
    # a YAML body under a JSON patch type: refused as unparsable JSON (was a 500 on the date)
    assert assert_status(r, 400, "BadRequest")["message"].startswith("the body of the request was in an unknown format")


def test_a_warning_naming_a_field_with_a_line_break_keeps_the_response_whole(http, nsname):
    r = http.post(f"/api/v1/namespaces/{nsname}/configmaps", params={"fieldValidation": "Warn"},
                  content=b'{"metadata": {"name": "nl"}, "bad\\nfield\\u0000\\u0001x": 1}',
                  headers={"Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    assert r.headers["Warning"] == '299 - "unknown field \\"bad field  x\\""'


def _crd(plural: str, pattern: str) -> dict:
    """A CRD whose spec.x must match `pattern`."""
    return _crd_with(plural, {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "x": {"type": "string", "pattern": pattern}}}}})


def _crd_with(plural: str, schema: dict) -> dict:
    """A namespaced CRD in fuzz.example.com/v1 with `schema` as its openAPIV3Schema."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.fuzz.example.com"},
            "spec": {"group": "fuzz.example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "singular": plural[:-1], "kind": plural[:-1].capitalize()},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


def test_a_crd_pattern_go_cannot_compile_is_refused(http):
    r = http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=_crd("brokens", "("))
    st = assert_status(r, 422, "Invalid")
    assert st["details"]["causes"] == [{
        "reason": "FieldValueInvalid",
        "message": 'Invalid value: "(": must be a valid regular expression, but isn\'t: error parsing regexp: '
                   "missing closing ): `(`",
        "field": "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[x].pattern"}]


def test_a_backtracking_pattern_does_not_freeze_the_server(http, nsname):
    import time

    from minik3s.testing.wait import wait_for

    r = http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=_crd("evils", "^(a+)+$"))
    assert r.status_code == 201, r.text
    path = f"/apis/fuzz.example.com/v1/namespaces/{nsname}/evils"
    wait_for(lambda: http.get(path).status_code == 200, timeout=30)
    started = time.monotonic()
    r = http.post(path, json={"apiVersion": "fuzz.example.com/v1", "kind": "Evil", "metadata": {"name": "e"},
                              "spec": {"x": "a" * 40 + "b"}})
    assert time.monotonic() - started < 2.0  # Python's backtracking `re`: hours at 40 characters
    st = assert_status(r, 422, "Invalid")
    assert st["details"]["causes"][0]["field"] == "spec.x"
    assert http.post(path, json={"apiVersion": "fuzz.example.com/v1", "kind": "Evil", "metadata": {"name": "ok"},
                                 "spec": {"x": "a" * 40}}).status_code == 201


def test_a_json_patch_pointer_that_is_not_a_string_is_422(http, nsname):
    path = _deployment(http, nsname, "jp-types")
    for target in (path, path + "/scale"):
        r = http.patch(target, json=[{"op": "replace", "path": 5, "value": 1}],
                       headers={"Content-Type": "application/json-patch+json"})
        st = assert_status(r, 422, "Invalid")
        assert st["details"]["causes"][0]["message"] == "replace operation failed to decode path: missing value"
        r = http.patch(target, json=[{"op": "copy", "from": ["x"], "path": "/metadata/labels"}],
                       headers={"Content-Type": "application/json-patch+json"})
        assert assert_status(r, 422, "Invalid")["details"]["causes"][0]["message"] == \
            "copy operation failed to decode from: missing value"


def test_an_eviction_with_wrongly_typed_delete_options_is_400(http, nsname):
    http.post(f"/api/v1/namespaces/{nsname}/pods", json=good_pod("evictee")).raise_for_status()
    for opts, kind, field in (({"gracePeriodSeconds": "x"}, "string", "DeleteOptions.deleteOptions.gracePeriodSeconds"),
                              ({"preconditions": 5}, "number", "DeleteOptions.deleteOptions.preconditions")):
        r = http.post(f"/api/v1/namespaces/{nsname}/pods/evictee/eviction",
                      json={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "evictee"},
                            "deleteOptions": opts})
        st = assert_status(r, 400, "BadRequest")
        assert st["message"].startswith('Eviction in version "v1" cannot be handled as a Eviction: json: cannot '
                                        f"unmarshal {kind} into Go struct field {field}")
    assert http.get(f"/api/v1/namespaces/{nsname}/pods/evictee").status_code == 200


def test_pod_log_integer_parameters_parse_as_int64(http, nsname):
    http.post(f"/api/v1/namespaces/{nsname}/pods", json=good_pod("logger")).raise_for_status()
    r = http.get(f"/api/v1/namespaces/{nsname}/pods/logger/log", params={"sinceSeconds": str(2**62)})
    # a huge look-back is valid: every line (this server runs no kubelet: none), never the
    # OverflowError's 500
    assert (r.status_code, r.text) == (200, ""), r.text
    for bad, why in ((str(2**63), "value out of range"), ("1_000", "invalid syntax")):
        r = http.get(f"/api/v1/namespaces/{nsname}/pods/logger/log", params={"sinceSeconds": bad})
        assert assert_status(r, 400, "BadRequest")["message"] == f'strconv.ParseInt: parsing "{bad}": {why}'


def test_an_eviction_with_dry_run_in_the_query_deletes_nothing(http, nsname):
    pod = good_pod("dry-evictee")
    pod["metadata"]["labels"] = {"app": "dry"}
    http.post(f"/api/v1/namespaces/{nsname}/pods", json=pod).raise_for_status()
    r = http.post(f"/api/v1/namespaces/{nsname}/pods/dry-evictee/eviction", params={"dryRun": "All"},
                  json={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "dry-evictee"}})
    assert r.status_code == 201, r.text
    got = http.get(f"/api/v1/namespaces/{nsname}/pods/dry-evictee")
    assert got.status_code == 200 and "deletionTimestamp" not in got.json()["metadata"]
    assert not any(c.get("type") == "DisruptionTarget" for c in got.json().get("status", {}).get("conditions") or [])


def test_a_table_watch_with_a_bad_include_object_is_a_400_before_the_stream(http, nsname):
    r = http.get(f"/api/v1/namespaces/{nsname}/pods", params={"watch": "1", "timeoutSeconds": "1",
                                                              "includeObject": "Garbage"},
                 headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    st = assert_status(r, 400, "BadRequest")
    assert st["message"] == 'unrecognized includeObject value: "Garbage"'


def test_a_crd_schema_with_wrongly_typed_keywords_is_refused_as_its_go_type_decodes_it(http, nsname):
    for extra, kind, field, go_type in (
            # spec.properties[spec].properties[n].maximum: the path drops the map keys
            ({"n": {"type": "integer", "maximum": "x"}}, "string", "properties.properties.maximum", "float64"),
            ({"o": {"type": "object", "properties": {"a": "x"}}}, "string", "properties.properties.properties",
             "v1.JSONSchemaProps"),
            ({"s": {"type": "string", "pattern": 1}}, "number", "properties.properties.pattern", "string")):
        crd = _crd("oddities", "^a+$")
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"].update(extra)
        r = http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
        st = assert_status(r, 400, "BadRequest")
        assert st["message"] == ('CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: '
                                 f"json: cannot unmarshal {kind} into Go struct field "
                                 f"JSONSchemaProps.spec.versions.schema.openAPIV3Schema.{field} of type {go_type}")
    r = http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=_crd("oddities", "^a+$"))
    assert r.status_code == 201, r.text


def _nested(levels: int) -> dict:
    """A JSON object `levels` objects deep: {"a": {"a": ... {}}}."""
    value: dict = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def _free_form_crd(plural: str) -> dict:
    return _crd_with(plural, {"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}})


def test_an_object_at_the_depth_bound_is_stored_listed_and_watched_and_one_deeper_is_400(http, nsname):
    from minik3s.testing.wait import wait_for

    assert http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                     json=_free_form_crd("deeps")).status_code == 201
    path = f"/apis/fuzz.example.com/v1/namespaces/{nsname}/deeps"
    wait_for(lambda: http.get(path).status_code == 200, timeout=30)
    rv = http.get(path).json()["metadata"]["resourceVersion"]
    # the whole body 240 levels deep: the object, its spec and 238 more
    body = {"apiVersion": "fuzz.example.com/v1", "kind": "Deep", "metadata": {"name": "at-bound"},
            "spec": _nested(239)}
    r = http.post(path, json=body, params={"fieldManager": "depth-test"})
    assert r.status_code == 201, r.text
    assert http.get(f"{path}/at-bound").json()["spec"] == body["spec"]
    assert [i["metadata"]["name"] for i in http.get(path).json()["items"]] == ["at-bound"]
    # a watch of Table rows with their objects wraps the object four levels deeper still
    with http.stream("GET", path, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "1",
                                          "includeObject": "Object"},
                     headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}) as w:
        assert w.status_code == 200
        events = [json.loads(line) for line in w.iter_lines() if line.strip()]
    assert [e["object"]["rows"][0]["object"]["metadata"]["name"] for e in events] == ["at-bound"]
    with http.stream("GET", path, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "1"}) as w:
        assert [json.loads(line)["object"]["spec"] == body["spec"] for line in w.iter_lines() if line.strip()] == [True]
    # server-side apply of the same object records fieldsV1 one level deeper than the object
    r = http.patch(f"{path}/at-bound", params={"fieldManager": "applier", "force": "true"},
                   content=json.dumps({**body, "spec": _nested(239)}),
                   headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status_code == 200, r.text
    deeper = {**body, "metadata": {"name": "past-bound"}, "spec": _nested(240)}
    st = assert_status(http.post(path, json=deeper), 400, "BadRequest")
    assert st["message"] == "the body of the request was in an unknown format: exceeded max depth of 240"
    assert http.get(f"{path}/past-bound").status_code == 404


def test_a_json_patch_that_builds_an_object_too_deep_is_400_and_changes_nothing(http, nsname):
    from minik3s.testing.wait import wait_for

    assert http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                     json=_free_form_crd("copies")).status_code == 201
    path = f"/apis/fuzz.example.com/v1/namespaces/{nsname}/copies"
    wait_for(lambda: http.get(path).status_code == 200, timeout=30)
    r = http.post(path, json={"apiVersion": "fuzz.example.com/v1", "kind": "Copie", "metadata": {"name": "c"},
                              "spec": {"x": _nested(150)}})
    assert r.status_code == 201, r.text
    before = http.get(f"{path}/c").json()
    pointer = "/spec/x" + "/a" * 148  # the innermost object, 150 levels below /spec/x
    r = http.patch(f"{path}/c", json=[{"op": "copy", "from": "/spec/x", "path": pointer + "/copy"}],
                   headers={"Content-Type": "application/json-patch+json"})
    st = assert_status(r, 400, "BadRequest")
    assert st["message"] == "the resulting object cannot be encoded: it exceeds max depth of 240"
    assert http.get(f"{path}/c").json() == before


def _raw_request(http, request: bytes) -> tuple[bytes, bytes]:
    """Send `request` as bytes on a new connection; (status line, body) of the answer."""
    import socket

    url = http.base_url
    with socket.create_connection((url.host, url.port), timeout=10) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0], body


def test_header_bytes_that_are_not_utf8_are_quoted_as_replacement_characters(http, nsname):
    status, body = _raw_request(http, (
        f"GET /api/v1/namespaces/{nsname}/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Impersonate-User: ").encode() + b"\xff\xfe\r\nConnection: close\r\n\r\n")
    assert status == b"HTTP/1.1 403 Forbidden"
    st = json.loads(body)
    assert st["reason"] == "Forbidden"
    assert st["message"].startswith('pods is forbidden: User "\ufffd\ufffd" cannot list resource "pods"')
    status, body = _raw_request(http, (
        f"POST /api/v1/namespaces/{nsname}/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/").encode() + b"\xff\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
    assert status == b"HTTP/1.1 415 Unsupported Media Type"
    assert json.loads(body)["reason"] == "UnsupportedMediaType"


def test_namespaces_offer_no_delete_collection(http, nsname):
    """Upstream's namespace storage has no deletecollection: a collection DELETE is 405 and
    deletes nothing, whatever its selector; discovery does not list the verb."""
    r = http.delete("/api/v1/namespaces", params={"labelSelector": f"kubernetes.io/metadata.name={nsname}"})
    st = assert_status(r, 405, "MethodNotAllowed")
    assert st["message"] == "the server does not allow this method on the requested resource"
    assert http.get(f"/api/v1/namespaces/{nsname}").json()["status"]["phase"] == "Active"
    verbs = next(r["verbs"] for r in http.get("/api/v1").json()["resources"] if r["name"] == "namespaces")
    assert "deletecollection" not in verbs and "delete" in verbs


def test_yaml_numbers_reach_int_fields_as_go_yaml_writes_them(http, nsname):
    """sigs.k8s.io/yaml turns YAML into JSON through Go's float64: `1.0` and `1e3` are written
    1 and 1000, so an int32 field takes them; JSON's `1.0` is still refused for it."""
    body = (b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: yaml-numbers\nspec:\n"
            b"  replicas: 1.0\n  revisionHistoryLimit: 1e1\n"
            b"  selector:\n    matchLabels: {app: y}\n  template:\n    metadata:\n      labels: {app: y}\n"
            b"    spec:\n      containers:\n      - name: c\n        image: nginx\n")
    r = http.post(f"/apis/apps/v1/namespaces/{nsname}/deployments", content=body,
                  headers={"Content-Type": "application/yaml"})
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["replicas"] == 1 and r.json()["spec"]["revisionHistoryLimit"] == 10
    doc = json.loads(json.dumps(r.json()))
    doc["metadata"] = {"name": "json-float"}
    raw = json.dumps({**doc, "status": {}}).replace('"replicas": 1,', '"replicas": 1.0,', 1)
    r = http.post(f"/apis/apps/v1/namespaces/{nsname}/deployments", content=raw.encode(),
                  headers={"Content-Type": "application/json"})
    st = assert_status(r, 400, "BadRequest")
    assert "cannot unmarshal number 1.0 into Go struct field DeploymentSpec.spec.replicas of type int32" in st["message"]
