"""K3s' packaged add-ons on `minik3s server`: the coredns and metrics-server Deployments in
kube-system, their pods running on simulated nodes, the kube-dns Service at the address every
pod's resolv.conf names, `kubectl cluster-info`'s lines, and `--disable` leaving them out (lightkube's
own e2e suite, run against K3s, looks for the metrics-server pod)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik3s.testing.server import ServerProcess
from minik3s.testing.wait import wait_for

pytestmark = pytest.mark.usefixtures("kubectl_bin")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    s = ServerProcess(tmp_path_factory.mktemp("addons"), nodes=2, addons=True)
    s.start()
    yield s
    s.stop()


def kube_system_pods(http: httpx.Client) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = http.get("/api/v1/namespaces/kube-system/pods").json()["items"]
    return items


def test_addon_pods_run_in_kube_system(srv: ServerProcess, kubectl_bin: Path) -> None:
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        def running() -> list[str] | None:
            pods = kube_system_pods(http)
            names = sorted(p["metadata"]["name"] for p in pods if p["status"].get("phase") == "Running")
            return names if len(names) == 2 else None
        names = wait_for(running, timeout=30)
        assert names[0].startswith("coredns-") and names[1].startswith("metrics-server-")
        pods = {p["metadata"]["labels"]["k8s-app"]: p for p in kube_system_pods(http)}
        assert pods["metrics-server"]["spec"]["priorityClassName"] == "system-node-critical"
        assert pods["kube-dns"]["spec"]["priority"] == 2000000000  # system-cluster-critical
        svc = http.get("/api/v1/namespaces/kube-system/services/kube-dns").json()
        assert svc["spec"]["clusterIP"] == "10.43.0.10"
        assert [(p["name"], p["port"], p["protocol"]) for p in svc["spec"]["ports"]] == [
            ("dns", 53, "UDP"), ("dns-tcp", 53, "TCP"), ("metrics", 9153, "TCP")]
    out = subprocess.run([str(kubectl_bin), "--kubeconfig", str(srv.kubeconfig), "cluster-info"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1] == f"CoreDNS is running at {srv.url}/api/v1/namespaces/kube-system/services/kube-dns:dns/proxy"
    assert lines[2] == (f"Metrics-server is running at {srv.url}/api/v1/namespaces/kube-system/services/"
                        "https:metrics-server:https/proxy")


def test_disable_leaves_an_addon_out(tmp_path: Path, kubectl_bin: Path) -> None:
    """Without metrics-server there is no metrics.k8s.io (no APIService, not in discovery, 404),
    `kubectl top` says the Metrics API is not available, and an HPA reports the metrics client's
    error, as on K3s started with `--disable metrics-server`; the kubelets' own endpoints answer."""
    s = ServerProcess(tmp_path, nodes=1, addons=True, args=["--disable", "metrics-server"])
    s.start()
    try:
        with httpx.Client(base_url=s.url, timeout=30) as http:
            names = [d["metadata"]["name"] for d in
                     http.get("/apis/apps/v1/namespaces/kube-system/deployments").json()["items"]]
            assert names == ["coredns"]
            assert "metrics.k8s.io" not in [g["name"] for g in http.get("/apis").json()["groups"]]
            aggregated = http.get("/apis", headers={
                "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}).json()
            assert aggregated["kind"] == "APIGroupDiscoveryList"
            assert "metrics.k8s.io" not in [g["metadata"]["name"] for g in aggregated["items"]]
            assert http.get("/apis/metrics.k8s.io/v1beta1/nodes").status_code == 404
            assert http.get("/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io").status_code == 404
            node = wait_for(lambda: next(iter(http.get("/api/v1/nodes").json()["items"]), None),
                            timeout=30)["metadata"]["name"]  # the simulated kubelet registers it
            assert http.get(f"/api/v1/nodes/{node}/proxy/stats/summary").status_code == 200

            top = subprocess.run([str(kubectl_bin), "--kubeconfig", str(s.kubeconfig), "top", "nodes"],
                                 capture_output=True, text=True, timeout=30)
            assert (top.returncode, top.stderr) == (1, "error: Metrics API not available\n")

            http.post("/apis/apps/v1/namespaces/default/deployments", json={
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx",
                                             "resources": {"requests": {"cpu": "100m"}}}]}}}}).raise_for_status()
            http.post("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", json={
                "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                         "minReplicas": 1, "maxReplicas": 3, "metrics": [{"type": "Resource", "resource": {
                             "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]}},
            ).raise_for_status()

            def active() -> dict[str, Any] | None:
                hpa = http.get("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web").json()
                conds = {c["type"]: c for c in (hpa.get("status") or {}).get("conditions") or []}
                return conds.get("ScalingActive")
            cond = wait_for(active, timeout=60)
            assert (cond["status"], cond["reason"]) == ("False", "FailedGetResourceMetric")
            assert cond["message"] == (
                "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get "
                "metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not "
                "find the requested resource (get pods.metrics.k8s.io)")
    finally:
        s.stop()


def test_test_servers_start_without_addons(tmp_path: Path) -> None:
    s = ServerProcess(tmp_path, nodes=0)
    s.start()
    try:
        with httpx.Client(base_url=s.url, timeout=30) as http:
            assert http.get("/apis/apps/v1/namespaces/kube-system/deployments").json()["items"] == []
            assert http.get("/api/v1/namespaces/kube-system/services/kube-dns").status_code == 404
    finally:
        s.stop()
