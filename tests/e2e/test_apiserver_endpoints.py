"""The `kubernetes` Service's Endpoints and EndpointSlice in `default`, as kube-apiserver's
endpoint reconciler keeps them (pkg/controlplane/reconcilers, EndpointsAdapter): the server's
advertised address and secure port, left alone by the endpoints / EndpointSlice controllers."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from minik3s.testing.wait import wait_for


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def _objects(http: httpx.Client) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    ep = http.get("/api/v1/namespaces/default/endpoints/kubernetes")
    sl = http.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes")
    svc = http.get("/api/v1/namespaces/default/services/kubernetes")
    assert ep.status_code == 200 and sl.status_code == 200 and svc.status_code == 200
    return ep.json(), sl.json(), svc.json()


def _assert_points_at(http: httpx.Client, port: int) -> tuple[dict[str, Any], dict[str, Any]]:
    ep, sl, svc = _objects(http)
    assert ep["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    assert ep["subsets"] == [{"addresses": [{"ip": "127.0.0.1"}],
                              "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]
    assert "ownerReferences" not in ep["metadata"]
    assert sl["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
    assert sl["addressType"] == "IPv4"
    assert sl["endpoints"] == [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}]
    assert sl["ports"] == [{"name": "https", "port": port, "protocol": "TCP"}]
    assert "ownerReferences" not in sl["metadata"]
    assert svc["spec"]["ports"][0]["targetPort"] == port
    # the only slice of the Service: the EndpointSlice controller adds none (no selector)
    listed = http.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
                      params={"labelSelector": "kubernetes.io/service-name=kubernetes"}).json()["items"]
    assert [s["metadata"]["name"] for s in listed] == ["kubernetes"]
    return ep, sl


def test_kubernetes_endpoints_follow_the_listening_port(minik3s_server_factory: Any) -> None:
    srv = minik3s_server_factory()
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        ep, sl = _assert_points_at(http, _port(srv.url))
        # the controllers run and settle (a probe Service gets its Endpoints) without touching them
        http.post("/api/v1/namespaces/default/services", json={
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "probe"},
            "spec": {"selector": {"app": "probe"}, "ports": [{"port": 80}]}}).raise_for_status()
        wait_for(lambda: http.get("/api/v1/namespaces/default/endpoints/probe").status_code == 200)
        again, sl_again = _assert_points_at(http, _port(srv.url))
        assert again["metadata"]["resourceVersion"] == ep["metadata"]["resourceVersion"]
        assert sl_again["metadata"]["resourceVersion"] == sl["metadata"]["resourceVersion"]
    # a restart on another (ephemeral) port rewrites both objects and the Service's targetPort
    old_port = _port(srv.url)
    srv.stop()
    srv.start()
    assert _port(srv.url) != old_port
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        _assert_points_at(http, _port(srv.url))


def test_kubectl_describe_service_shows_the_apiserver_endpoint(minik3s_server_factory: Any,
                                                                kubectl_bin: Path) -> None:
    srv = minik3s_server_factory()
    r = subprocess.run([str(kubectl_bin), "--kubeconfig", str(srv.kubeconfig), "describe", "svc", "kubernetes"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in r.stdout.splitlines()) if v}
    assert lines["Endpoints"] == f"127.0.0.1:{_port(srv.url)}"
    assert lines["TargetPort"] == f"{_port(srv.url)}/TCP"
