"""Warnings a real `minik3s server` sends for the kinds other than pods, workloads and storage,
over HTTP and as kubectl 1.33 prints them (`Warning: <text>` on stderr).

- strategy warnings (v1.33's WarningsOnCreate / WarningsOnUpdate): a Service's non-canonical
  externalIPs, an Ingress's deprecated class annotation, a NetworkPolicy's ambiguous ipBlock CIDR;
- the per-resource deprecation of core/v1 Endpoints (KEP-4974): every routed request for
  endpoints carries `v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice`,
  first among the request's warnings: list, watch, get (a 404 too), create, update, patch, delete,
  deletecollection; EndpointSlices do not.

The server is the module's API-only process (`minik3s_api`).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik3s.testing.server import ServerProcess
from tests.e2e.warning_headers import warnings_of

EP_DEPRECATION = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


def kubectl(binary: Path, srv: ServerProcess, cache: Path, *args: str,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([str(binary), "--kubeconfig", str(srv.kubeconfig), "--cache-dir", str(cache), *args],
                       capture_output=True, text=True, timeout=60, input=stdin)
    assert r.returncode == 0, f"kubectl {' '.join(args)} -> rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def warning_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Warning: ")]


def endpoints(name: str, *ips: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name},
            "subsets": [{"addresses": [{"ip": ip} for ip in ips], "ports": [{"port": 80, "protocol": "TCP"}]}]}


# ---------------------------------------------------------------------------------------- strategy warnings


def test_service_with_a_non_canonical_external_ip_warns(http: httpx.Client, ns: str) -> None:
    svc = {"metadata": {"name": "ext"}, "spec": {"ports": [{"port": 80}],
                                                 "externalIPs": ["192.168.001.10", "2001:db8:0:0::10"]}}
    r = http.post(f"/api/v1/namespaces/{ns}/services", json=svc)
    assert r.status_code == 201, r.text
    assert warnings_of(r) == [
        'spec.externalIPs[0]: non-standard IP address "192.168.001.10" will be considered invalid in a future '
        'Kubernetes release: use "192.168.1.10"',
        'spec.externalIPs[1]: IPv6 address "2001:db8:0:0::10" should be in RFC 5952 canonical format ("2001:db8::10")']
    assert r.json()["spec"]["externalIPs"] == ["192.168.001.10", "2001:db8:0:0::10"]  # stored as written

    # an update that keeps them warns again; one that fixes them does not
    r = http.patch(f"/api/v1/namespaces/{ns}/services/ext", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
    assert r.status_code == 200 and len(warnings_of(r)) == 2
    r = http.patch(f"/api/v1/namespaces/{ns}/services/ext", json={"spec": {"externalIPs": ["192.168.1.10"]}},
                   headers=MERGE)
    assert r.status_code == 200 and "Warning" not in r.headers
    # reads of a Service carry nothing
    assert "Warning" not in http.get(f"/api/v1/namespaces/{ns}/services/ext").headers


def test_ingress_and_network_policy_warnings(http: httpx.Client, ns: str) -> None:
    ing = {"metadata": {"name": "legacy", "annotations": {"kubernetes.io/ingress.class": "nginx"}},
           "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}}
    r = http.post(f"/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses", json=ing)
    assert r.status_code == 201, r.text
    assert warnings_of(r) == [
        "annotation \"kubernetes.io/ingress.class\" is deprecated, please use 'spec.ingressClassName' instead"]
    r = http.patch(f"/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses/legacy",
                   json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
    assert r.status_code == 200 and "Warning" not in r.headers  # create only

    np = {"metadata": {"name": "np"}, "spec": {"podSelector": {}, "ingress": [{"from": [
        {"ipBlock": {"cidr": "10.0.0.1/8", "except": ["010.1.0.0/16"]}}]}]}}
    r = http.post(f"/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies", json=np)
    assert r.status_code == 201, r.text  # leading zeros stay valid in v1.33 (StrictIPCIDRValidation off)
    assert warnings_of(r) == [
        'spec.ingress[0].from[0].ipBlock.cidr: CIDR value "10.0.0.1/8" is ambiguous in this context (should be '
        '"10.0.0.0/8" or "10.0.0.1/32"?)',
        'spec.ingress[0].from[0].ipBlock.except[0]: non-standard CIDR value "010.1.0.0/16" will be considered invalid '
        'in a future Kubernetes release: use "10.1.0.0/16"']


# ---------------------------------------------------------------------------------------- Endpoints deprecation


def test_every_endpoints_request_carries_the_deprecation(http: httpx.Client, ns: str) -> None:
    base = f"/api/v1/namespaces/{ns}/endpoints"
    r = http.get(f"/api/v1/namespaces/{ns}/endpoints/nope")
    assert r.status_code == 404 and warnings_of(r) == [EP_DEPRECATION]

    r = http.post(base, json=endpoints("ep", "10.0.0.01"))
    assert r.status_code == 201, r.text
    # the deprecation first, then the object's own warnings
    assert warnings_of(r) == [EP_DEPRECATION, 'subsets[0].addresses[0].ip: non-standard IP address "10.0.0.01" will '
                                              'be considered invalid in a future Kubernetes release: use "10.0.0.1"']
    r = http.post(base, json=endpoints("ep", "10.0.0.1"))
    assert r.status_code == 409 and warnings_of(r) == [EP_DEPRECATION]

    # an update keeping the address warns about it again
    r = http.patch(f"{base}/ep", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
    assert r.status_code == 200 and len(warnings_of(r)) == 2 and warnings_of(r)[0] == EP_DEPRECATION

    for r in (http.get(base), http.get("/api/v1/endpoints"), http.get(f"{base}/ep"),
              http.get(base, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}),
              http.put(f"{base}/ep", json=endpoints("ep", "10.0.0.1")),
              http.patch(f"{base}/ep", json={"metadata": {"labels": {"a": "c"}}}, headers=MERGE),
              http.put(f"{base}/made-by-put", json=endpoints("made-by-put", "10.0.0.2")),
              http.delete(f"{base}/ep")):
        assert r.status_code in (200, 201), (r.request.method, r.request.url, r.text)
        assert warnings_of(r) == [EP_DEPRECATION], (r.request.method, r.request.url)

    with http.stream("GET", base, params={"watch": "1", "timeoutSeconds": "1"}) as w:
        assert w.status_code == 200 and warnings_of(w) == [EP_DEPRECATION]
        w.read()
    r = http.delete(base)
    assert r.status_code == 200 and warnings_of(r) == [EP_DEPRECATION]

    # EndpointSlices, the replacement, are not deprecated
    r = http.get(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices")
    assert r.status_code == 200 and "Warning" not in r.headers


def test_kubectl_get_endpoints_prints_the_deprecation(kubectl_bin: Path, minik3s_api: ServerProcess,
                                                      http: httpx.Client, ns: str, tmp_path: Path) -> None:
    assert http.post(f"/api/v1/namespaces/{ns}/endpoints", json=endpoints("web", "10.0.0.7")).status_code == 201
    r = kubectl(kubectl_bin, minik3s_api, tmp_path, "get", "endpoints", "-n", ns)
    assert warning_lines(r.stderr) == [f"Warning: {EP_DEPRECATION}"]
    assert r.stdout.splitlines()[0].split() == ["NAME", "ENDPOINTS", "AGE"]
    assert r.stdout.splitlines()[1].split()[:2] == ["web", "10.0.0.7:80"]

    # other kinds: no warning
    r = kubectl(kubectl_bin, minik3s_api, tmp_path, "get", "services,endpointslices", "-n", ns)
    assert warning_lines(r.stderr) == []


def test_kubectl_create_prints_strategy_warnings(kubectl_bin: Path, minik3s_api: ServerProcess, ns: str,
                                                 tmp_path: Path) -> None:
    manifest = f"""apiVersion: v1
kind: Service
metadata:
  name: lb
  namespace: {ns}
spec:
  type: ClusterIP
  ports: [{{port: 80}}]
  externalName: example.com
"""
    r = kubectl(kubectl_bin, minik3s_api, tmp_path, "create", "-f", "-", stdin=manifest)
    assert warning_lines(r.stderr) == ['Warning: spec.externalName is ignored when spec.type is not "ExternalName"']
    assert r.stdout.strip() == "service/lb created"
