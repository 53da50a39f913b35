"""Wire details a kubectl 1.33 session sees from kube-apiserver, on a real API-only server:
the /version body (version.Info with the emulation fields, WriteRawJSON's indent), the system
PriorityClasses REST.Delete refuses, Services' selectable fields (spec.clusterIP, spec.type),
the headers of every response (Audit-Id, Cache-Control, no Server) and /metrics as client_golang
writes it (no `_created` series, Go numbers, HELP stability prefixes).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import httpx
import pytest

from minik3s.testing.server import ServerProcess

PCS = "/apis/scheduling.k8s.io/v1/priorityclasses"
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


@pytest.fixture
def ns(http: httpx.Client) -> str:
    name = f"surface-{uuid.uuid4().hex[:8]}"
    http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    return name


# ---------------------------------------------------------------------------------- /version

def test_version_is_write_raw_json_of_version_info(http: httpx.Client) -> None:
    r = http.get("/version")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert list(r.json())[:8] == ["major", "minor", "emulationMajor", "emulationMinor", "minCompatibilityMajor",
                                  "minCompatibilityMinor", "gitVersion", "gitCommit"]
    assert r.text.startswith('{\n  "major": "1",\n  "minor": "33",\n  "emulationMajor": "1",\n'
                             '  "emulationMinor": "33",\n  "minCompatibilityMajor": "1",\n'
                             '  "minCompatibilityMinor": "32",\n  "gitVersion": "v1.33.')
    assert r.text.endswith('"\n}')  # json.MarshalIndent: no trailing newline


# ---------------------------------------------------------------------------------- PriorityClass

@pytest.mark.parametrize("name", ["system-node-critical", "system-cluster-critical"])
def test_delete_system_priority_class_is_forbidden(http: httpx.Client, name: str) -> None:
    """TestDeleteSystemPriorityClass (pkg/registry/scheduling/priorityclass/storage)."""
    for params in ({}, {"dryRun": "All"}):
        r = http.delete(f"{PCS}/{name}", params=params)
        assert r.status_code == 403, r.text
        body = r.json()
        assert body["reason"] == "Forbidden"
        assert body["message"] == (f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: '
                                   "this is a system priority class and cannot be deleted")
        assert body["details"] == {"name": name, "group": "scheduling.k8s.io", "kind": "priorityclasses"}
    assert http.get(f"{PCS}/{name}").status_code == 200


def test_user_priority_class_still_deletes(http: httpx.Client) -> None:
    name = f"user-{uuid.uuid4().hex[:8]}"
    http.post(PCS, json={"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                         "metadata": {"name": name}, "value": 10}).raise_for_status()
    assert http.delete(f"{PCS}/{name}").status_code == 200
    assert http.get(f"{PCS}/{name}").status_code == 404


# ---------------------------------------------------------------------------------- Services

def _svc(name: str, typ: str, cluster_ip: str | None = None) -> dict[str, object]:
    spec: dict[str, object] = {"type": typ, "ports": [{"port": 80}], "selector": {"app": name}}
    if cluster_ip is not None:
        spec["clusterIP"] = cluster_ip
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize(("selector", "want"), [
    ("spec.type=NodePort", ["np"]),
    ("spec.type!=NodePort", ["cip", "headless"]),
    ("spec.clusterIP=None", ["headless"]),
    ("spec.clusterIP!=None", ["cip", "np"]),
    ("spec.type=ClusterIP,spec.clusterIP!=None", ["cip"]),
])
def test_service_field_selectors(http: httpx.Client, ns: str, selector: str, want: list[str]) -> None:
    base = f"/api/v1/namespaces/{ns}/services"
    for body in (_svc("cip", "ClusterIP"), _svc("np", "NodePort"), _svc("headless", "ClusterIP", "None")):
        http.post(base, json=body).raise_for_status()
    r = http.get(base, params={"fieldSelector": selector})
    assert r.status_code == 200, r.text
    assert sorted(i["metadata"]["name"] for i in r.json()["items"]) == want


def test_service_unknown_field_label_still_refused(http: httpx.Client, ns: str) -> None:
    r = http.get(f"/api/v1/namespaces/{ns}/services", params={"fieldSelector": "spec.ports=80"})
    assert r.status_code == 400
    assert "field label not supported: spec.ports" in r.json()["message"]


# ---------------------------------------------------------------------------------- headers

@pytest.mark.parametrize("path", ["/version", "/api/v1/namespaces/default", "/api/v1/namespaces/nope-404",
                                  "/healthz", "/apis", "/metrics", "/no-such-path"])
def test_every_response_has_audit_id_and_cache_control_and_no_server(http: httpx.Client, path: str) -> None:
    r = http.get(path)
    assert UUID_RE.match(r.headers["audit-id"]), r.headers
    assert r.headers["cache-control"] == "no-cache, private"
    assert "server" not in r.headers


def test_audit_id_is_new_per_request_and_echoes_the_callers(http: httpx.Client) -> None:
    a, b = http.get("/version"), http.get("/version")
    assert a.headers["audit-id"] != b.headers["audit-id"]
    r = http.get("/api/v1/namespaces", headers={"Audit-ID": "my-audit-id"})
    assert r.headers["audit-id"] == "my-audit-id"


def test_watch_stream_has_the_headers(http: httpx.Client, ns: str) -> None:
    with http.stream("GET", f"/api/v1/namespaces/{ns}/configmaps",
                     params={"watch": "1", "timeoutSeconds": "1"}) as r:
        assert r.status_code == 200
        assert UUID_RE.match(r.headers["audit-id"])
        assert r.headers["cache-control"] == "no-cache, private"
        assert "server" not in r.headers
        r.read()


@pytest.mark.parametrize(("method", "path", "code"), [
    ("GET", "/api/v1/namespaces/default/configmaps/missing", 404),
    ("POST", "/api/v1/namespaces/default/configmaps", 400),
    ("PUT", "/version", 405),
    ("DELETE", f"{PCS}/system-node-critical", 403),
])
def test_status_error_bodies_end_with_a_newline(http: httpx.Client, method: str, path: str, code: int) -> None:
    r = http.request(method, path, content=b"{" if method == "POST" else None,
                     headers={"Content-Type": "application/json"})
    assert r.status_code == code
    assert r.json()["kind"] == "Status"
    assert r.content.endswith(b"}\n")


# ---------------------------------------------------------------------------------- /metrics

def test_metrics_are_written_as_client_golang_writes_them(http: httpx.Client) -> None:
    http.get("/api/v1/namespaces").raise_for_status()
    text = http.get("/metrics").text
    assert "_created" not in text
    assert ("# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, "
            "dry run value, group, version, resource, scope, component, and HTTP response code.\n") in text
    assert "# HELP apiserver_request_duration_seconds [STABLE] " in text
    # labels sorted by name (code first), integral values without ".0", le bounds as Go writes them
    line = next(x for x in text.splitlines() if x.startswith('apiserver_request_total{code="200",component='
                                                              '"apiserver",dry_run="",group="",resource="namespaces",'
                                                              'scope="cluster",subresource="",verb="LIST",'
                                                              'version="v1"} '))
    assert re.fullmatch(r".* [1-9][0-9]*", line), line
    assert re.search(r'apiserver_request_duration_seconds_bucket\{[^}]*,le="1"\} [0-9]+\n', text)
    assert re.search(r'apiserver_request_duration_seconds_bucket\{[^}]*,le="0.005"\} [0-9]+\n', text)
    assert not re.search(r" [0-9]+\.0\n", text)
    # families in name order, a histogram's _sum before its _count
    names = [x.split()[2] for x in text.splitlines() if x.startswith("# TYPE ")]
    assert names == sorted(names)
    sums = text.index("apiserver_request_duration_seconds_sum{")
    assert sums < text.index("apiserver_request_duration_seconds_count{")
