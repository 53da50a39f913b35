"""The seed's scenario end to end (examples/hpa/app.yaml) on a real `minik3s server` with six
simulated nodes over three zones, driven by the real kubectl 1.33: a Service in front, a
Deployment of 3 spread over zones, an HPA at 50 % cpu; 900m of load on the Service scales it to
9 pods, 3 per zone, `kubectl top` shows each pod's share, and removing the load brings it back
to 3. Also: the metrics.k8s.io shapes and bad HPAs rejected with field paths."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik3s.testing.wait import wait_for

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hpa" / "app.yaml"


class Kubectl:
    def __init__(self, binary: Path, kubeconfig: Path) -> None:
        self.binary, self.kubeconfig = binary, kubeconfig

    def __call__(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        r = subprocess.run([str(self.binary), "--kubeconfig", str(self.kubeconfig), *args], capture_output=True,
                           text=True, timeout=60, input=stdin)
        if check:
            assert r.returncode == 0, r.stderr
        return r


@pytest.fixture
def cluster(minik3s_server_factory: Any, kubectl_bin: Path) -> Any:
    # a 2 s sync: at 1 s the HPA's Warnings while its pods have no metrics yet (two per sync)
    # would use up the 25-Event budget client-go's spam filter gives it, and its
    # SuccessfulRescale Events would be dropped, as on a real cluster
    srv = minik3s_server_factory("--horizontal-pod-autoscaler-sync-period", "2s", nodes=6)
    http = httpx.Client(base_url=srv.url, timeout=30)
    wait_for(lambda: len(http.get("/api/v1/nodes").json()["items"]) == 6)
    yield http, Kubectl(kubectl_bin, srv.kubeconfig)
    http.close()


def running_web(http: httpx.Client) -> list[dict[str, Any]]:
    items = http.get("/api/v1/namespaces/default/pods", params={"labelSelector": "app=web"}).json()["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")
            and p.get("status", {}).get("phase") == "Running"]


def zones(http: httpx.Client) -> Counter[str]:
    node_zone = {n["metadata"]["name"]: n["metadata"]["labels"]["topology.kubernetes.io/zone"]
                 for n in http.get("/api/v1/nodes").json()["items"]}
    return Counter(node_zone[p["spec"]["nodeName"]] for p in running_web(http))


def hpa_status(http: httpx.Client) -> dict[str, Any]:
    r = http.get("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web")
    assert r.status_code == 200, r.text
    return dict(r.json().get("status") or {})


def current_utilization(http: httpx.Client) -> int | None:
    metrics = hpa_status(http).get("currentMetrics") or [{}]
    return (metrics[0].get("resource") or {}).get("current", {}).get("averageUtilization")


def test_service_load_scales_to_nine_three_per_zone_and_back(cluster: Any) -> None:
    http, kubectl = cluster
    kubectl("apply", "-f", str(EXAMPLE))
    wait_for(lambda: len(running_web(http)) == 3 and current_utilization(http) == 10, timeout=90)
    assert "cpu: 10%/50%" in kubectl("get", "hpa", "web").stdout  # 10 % of requests without load

    kubectl("annotate", "service", "web", "sim.minik3s.io/cpu-load=900m")
    wait_for(lambda: hpa_status(http).get("desiredReplicas") == 9 and len(running_web(http)) == 9
             and len(http.get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods",
                              params={"labelSelector": "app=web"}).json()["items"]) == 9, timeout=150)
    assert zones(http) == Counter({"zone-a": 3, "zone-b": 3, "zone-c": 3})
    # each pod: 20m of its own (10 % of 200m) + 900m / 9 of the Service's load
    out = kubectl("top", "pods", "-l", "app=web").stdout.splitlines()
    assert out[0].split() == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert [line.split()[1] for line in out[1:]] == ["120m"] * 9
    wait_for(lambda: current_utilization(http) == 60, timeout=30)  # the next sync sees all nine
    got = kubectl("get", "hpa", "web").stdout.splitlines()
    assert got[0].split()[:6] == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS"]
    assert got[1].split()[:7] == ["web", "Deployment/web", "cpu:", "60%/50%", "3", "9", "9"]
    events = kubectl("get", "events", "--field-selector", "reason=SuccessfulRescale").stdout
    assert "New size: 9; reason: cpu resource utilization (percentage of request) above target" in events

    kubectl("annotate", "service", "web", "sim.minik3s.io/cpu-load-")
    wait_for(lambda: len(running_web(http)) == 3 and hpa_status(http).get("desiredReplicas") == 3, timeout=120)
    assert "All metrics below target" in kubectl("get", "events", "--field-selector",
                                                 "reason=SuccessfulRescale").stdout


def test_kubectl_top_nodes_and_metrics_api_shapes(cluster: Any) -> None:
    http, kubectl = cluster
    groups = http.get("/apis").json()["groups"]
    assert {"name": "metrics.k8s.io", "versions": [{"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}],
            "preferredVersion": {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}} in groups
    out = kubectl("top", "nodes").stdout.splitlines()
    assert out[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    assert len(out) == 7 and all(line.split()[1] == "50m" for line in out[1:])  # system overhead only
    nm = http.get("/apis/metrics.k8s.io/v1beta1/nodes/node-1").json()
    assert (nm["kind"], nm["window"], nm["usage"]["cpu"]) == ("NodeMetrics", "15s", "50000000n")
    assert nm["timestamp"].endswith("Z") and nm["metadata"]["labels"]["topology.kubernetes.io/zone"] == "zone-a"
    sel = http.get("/apis/metrics.k8s.io/v1beta1/nodes", params={"labelSelector": "topology.kubernetes.io/zone=zone-b"})
    assert sorted(i["metadata"]["name"] for i in sel.json()["items"]) == ["node-2", "node-5"]
    bad = http.get("/apis/metrics.k8s.io/v1beta1/nodes", params={"labelSelector": "a in (b"})
    assert bad.status_code == 400 and bad.json()["kind"] == "Status"
    missing = http.get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope")
    assert missing.status_code == 404 and missing.json()["reason"] == "NotFound"
    assert http.post("/apis/metrics.k8s.io/v1beta1/nodes", json={}).status_code == 405


@pytest.mark.parametrize(("spec", "field", "message"), [
    ({"minReplicas": 5, "maxReplicas": 2}, "spec.maxReplicas", "must be greater than or equal to `minReplicas`"),
    ({"minReplicas": 0}, "spec.minReplicas", "must be greater than 0"),
    ({"scaleTargetRef": {"kind": "Deployment"}}, "spec.scaleTargetRef.name", "Required value"),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                             "averageUtilization": 0}}}]},
     "spec.metrics[0].resource.target.averageUtilization", "must be greater than 0"),
    ({"metrics": [{"type": "Bogus"}]}, "spec.metrics[0].type", "Unsupported value"),
    ({"behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 3000}]}}},
     "spec.behavior.scaleUp.policies[0].periodSeconds", "must be less than or equal to 1800"),
    ({"behavior": {"scaleDown": {"stabilizationWindowSeconds": 4000}}},
     "spec.behavior.scaleDown.stabilizationWindowSeconds", "must be less than or equal to 3600"),
])
def test_bad_hpas_are_rejected_with_a_field_path(minik3s_api: Any, spec: dict[str, Any], field: str,
                                                 message: str) -> None:
    body = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "bad"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 3, **spec}}
    r = httpx.post(f"{minik3s_api.url}/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", json=body)
    assert r.status_code == 422, r.text
    st = r.json()
    assert st["reason"] == "Invalid" and st["details"]["kind"] == "HorizontalPodAutoscaler"
    assert any(c["field"] == field and message in c["message"] for c in st["details"]["causes"]), st
