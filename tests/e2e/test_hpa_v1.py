"""autoscaling/v1 HorizontalPodAutoscalers on a real server: the same stored objects served at v1
and v2 through conversion (create at one version, read at the other, watch at v1, patch at v1),
discovery (v2 preferred), v1 validation with v1 field paths, and the real kubectl 1.33."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import httpx

V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
V2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


def _v1(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
            "spec": {"scaleTargetRef": REF, "maxReplicas": 9, **spec}}


def test_discovery_lists_v1_and_prefers_v2(minik3s_api: Any) -> None:
    with httpx.Client(base_url=minik3s_api.url) as http:
        group = http.get("/apis/autoscaling").json()
        assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
        assert group["preferredVersion"]["version"] == "v2"
        res = {r["name"] for r in http.get("/apis/autoscaling/v1").json()["resources"]}
        assert {"horizontalpodautoscalers", "horizontalpodautoscalers/status"} <= res


def test_create_at_v1_read_at_v2_and_back(minik3s_api: Any) -> None:
    with httpx.Client(base_url=minik3s_api.url) as http:
        r = http.post(V1, json=_v1("v1-made", minReplicas=3, targetCPUUtilizationPercentage=50))
        assert r.status_code == 201, r.text
        made = r.json()
        assert made["apiVersion"] == "autoscaling/v1"
        assert made["spec"] == {"scaleTargetRef": REF, "minReplicas": 3, "maxReplicas": 9,
                                "targetCPUUtilizationPercentage": 50}
        v2 = http.get(f"{V2}/v1-made").json()
        assert v2["apiVersion"] == "autoscaling/v2"
        assert v2["spec"]["metrics"] == [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]
        assert v2["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]
        assert "annotations" not in v2["metadata"]

        memory = {"type": "Resource", "resource": {"name": "memory", "target": {
            "type": "AverageValue", "averageValue": "256Mi"}}}
        body = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "v2-made"},
                "spec": {"scaleTargetRef": REF, "maxReplicas": 4, "metrics": [memory],
                         "behavior": {"scaleDown": {"stabilizationWindowSeconds": 30}}}}
        created = http.post(V2, json=body).json()
        got = http.get(f"{V1}/v2-made").json()
        assert "targetCPUUtilizationPercentage" not in got["spec"]
        ann = got["metadata"]["annotations"]
        assert json.loads(ann["autoscaling.alpha.kubernetes.io/metrics"]) == [
            {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "256Mi"}}]
        assert json.loads(ann["autoscaling.alpha.kubernetes.io/behavior"]) == created["spec"]["behavior"]
        # writing the v1 form back (as kubectl edit would) changes nothing in storage
        put = http.put(f"{V1}/v2-made", json=got)
        assert put.status_code == 200, put.text
        assert put.json()["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
        assert http.get(f"{V2}/v2-made").json() == created

        lst = http.get(V1).json()
        assert lst["kind"] == "HorizontalPodAutoscalerList" and lst["apiVersion"] == "autoscaling/v1"
        assert {i["apiVersion"] for i in lst["items"]} == {"autoscaling/v1"}
        # a merge patch at v1 applies to the v1 form
        p = http.patch(f"{V1}/v1-made", json={"spec": {"targetCPUUtilizationPercentage": 70}},
                       headers={"Content-Type": "application/merge-patch+json"})
        assert p.status_code == 200, p.text
        assert p.json()["spec"]["targetCPUUtilizationPercentage"] == 70
        target = http.get(f"{V2}/v1-made").json()["spec"]["metrics"][0]["resource"]["target"]
        assert target["averageUtilization"] == 70
        d = http.delete(f"{V1}/v1-made")
        assert d.status_code == 200, d.text
        assert http.get(f"{V2}/v1-made").status_code == 404
        http.delete(f"{V2}/v2-made")


def test_watch_at_v1_sees_v1_objects(minik3s_api: Any) -> None:
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as http:
        rv = http.get(V1).json()["metadata"]["resourceVersion"]
        events: list[dict[str, Any]] = []

        def watch() -> None:
            with http.stream("GET", V1, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "10"}) as s:
                for line in s.iter_lines():
                    if line:
                        events.append(json.loads(line))
                    if len(events) == 2:
                        return

        t = threading.Thread(target=watch)
        t.start()
        body = _v1("watched")
        body["apiVersion"] = "autoscaling/v2"
        body["spec"] = {"scaleTargetRef": REF, "maxReplicas": 5, "metrics": [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 40}}}]}
        assert http.post(V2, json=body).status_code == 201
        assert http.delete(f"{V2}/watched").status_code == 200
        t.join(timeout=20)
        assert [e["type"] for e in events] == ["ADDED", "DELETED"]
        for e in events:
            assert e["object"]["apiVersion"] == "autoscaling/v1"
            assert e["object"]["spec"]["targetCPUUtilizationPercentage"] == 40


def test_v1_validation_names_v1_fields(minik3s_api: Any) -> None:
    with httpx.Client(base_url=minik3s_api.url) as http:
        r = http.post(V1, json=_v1("bad", targetCPUUtilizationPercentage=0))
        assert r.status_code == 422, r.text
        st = r.json()
        assert st["reason"] == "Invalid" and st["details"]["kind"] == "HorizontalPodAutoscaler"
        assert [c["field"] for c in st["details"]["causes"]] == ["spec.targetCPUUtilizationPercentage"]
        assert "must be greater than 0" in st["message"]
        # fields both versions share keep their paths
        r = http.post(V1, json=_v1("bad", minReplicas=5, maxReplicas=2))
        assert r.status_code == 422
        assert [c["field"] for c in r.json()["details"]["causes"]] == ["spec.maxReplicas"]
        r = http.post(V1, json=_v1("bad", targetCPUUtilizationPercentage="high"))
        assert r.status_code == 400 and "spec.targetCPUUtilizationPercentage" in r.json()["message"]
        bad_ann = _v1("bad")
        bad_ann["metadata"]["annotations"] = {"autoscaling.alpha.kubernetes.io/metrics": "[{"}
        r = http.post(V1, json=bad_ann)
        assert r.status_code == 400 and "autoscaling.alpha.kubernetes.io/metrics" in r.json()["message"]
        assert http.get(f"{V2}/bad").status_code == 404


def test_kubectl_autoscale_and_get_at_v1(minik3s_api: Any, kubectl_bin: Path) -> None:
    def kubectl(*args: str) -> str:
        r = subprocess.run([str(kubectl_bin), "--kubeconfig", str(minik3s_api.kubeconfig), *args],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout

    kubectl("create", "deployment", "kwebv1", "--image=nginx")
    # kubectl 1.33 posts an autoscaling/v2 HPA as protobuf (falling back to v1 only on an error)
    kubectl("autoscale", "deployment", "kwebv1", "--cpu-percent=50", "--min=3", "--max=9")
    with httpx.Client(base_url=minik3s_api.url) as http:
        v2 = http.get(f"{V2}/kwebv1").json()
        assert v2["spec"]["metrics"] == [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]
        assert (v2["spec"]["minReplicas"], v2["spec"]["maxReplicas"]) == (3, 9)
    with httpx.Client(base_url=minik3s_api.url) as http:
        v1 = http.get(f"{V1}/kwebv1").json()
        assert v1["spec"]["targetCPUUtilizationPercentage"] == 50 and v1["spec"]["minReplicas"] == 3
    # (kubectl expands the short name `hpa.v1.autoscaling` without its version: the full name pins v1)
    out = kubectl("get", "horizontalpodautoscalers.v1.autoscaling", "kwebv1").splitlines()
    assert out[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert out[1].split()[:5] == ["kwebv1", "Deployment/kwebv1", "cpu:", "<unknown>/50%", "3"]
    got = json.loads(kubectl("get", "horizontalpodautoscalers.v1.autoscaling", "kwebv1", "-o", "json"))
    assert got["apiVersion"] == "autoscaling/v1" and got["spec"]["targetCPUUtilizationPercentage"] == 50
    # kubectl patch sends a strategic merge patch, applied to the v1 form
    kubectl("patch", "horizontalpodautoscalers.v1.autoscaling", "kwebv1", "-p",
            '{"spec":{"targetCPUUtilizationPercentage":65}}')
    with httpx.Client(base_url=minik3s_api.url) as http:
        target = http.get(f"{V2}/kwebv1").json()["spec"]["metrics"][0]["resource"]["target"]
        assert target == {"type": "Utilization", "averageUtilization": 65}
    kubectl("patch", "hpa", "kwebv1", "-p", '{"spec":{"maxReplicas":8}}')  # the same, at v2
    assert json.loads(kubectl("get", "horizontalpodautoscalers.v1.autoscaling", "kwebv1", "-o", "json"))[
        "spec"]["maxReplicas"] == 8
    kubectl("delete", "horizontalpodautoscalers.v1.autoscaling", "kwebv1")
    kubectl("delete", "deployment", "kwebv1")


def test_status_written_at_v2_reads_at_v1_and_round_trips(minik3s_api: Any) -> None:
    with httpx.Client(base_url=minik3s_api.url) as http:
        assert http.post(V1, json=_v1("st", targetCPUUtilizationPercentage=50)).status_code == 201
        cur = http.get(f"{V2}/st").json()
        cur["status"] = {"currentReplicas": 3, "desiredReplicas": 4, "currentMetrics": [{"type": "Resource", "resource": {
            "name": "cpu", "current": {"averageValue": "150m", "averageUtilization": 75}}}],
            "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z",
                            "reason": "SucceededRescale", "message": "the HPA controller was able to update"}]}
        r = http.put(f"{V2}/st/status", json=cur)
        assert r.status_code == 200, r.text
        stored = r.json()
        v1 = http.get(f"{V1}/st").json()
        assert v1["status"] == {"currentReplicas": 3, "desiredReplicas": 4, "currentCPUUtilizationPercentage": 75}
        ann = v1["metadata"]["annotations"]
        assert json.loads(ann["autoscaling.alpha.kubernetes.io/conditions"]) == stored["status"]["conditions"]
        assert json.loads(ann["autoscaling.alpha.kubernetes.io/current-metrics"]) == [{"type": "Resource", "resource": {
            "name": "cpu", "currentAverageUtilization": 75, "currentAverageValue": "150m"}}]
        # a v1 status write carries the annotations back into the v2 status
        v1["status"]["desiredReplicas"] = 5
        r = http.put(f"{V1}/st/status", json=v1)
        assert r.status_code == 200, r.text
        assert r.json()["status"]["desiredReplicas"] == 5
        after = http.get(f"{V2}/st").json()
        assert after["status"]["conditions"] == stored["status"]["conditions"]
        assert after["status"]["currentMetrics"] == stored["status"]["currentMetrics"]
        assert "annotations" not in after["metadata"]
        http.delete(f"{V2}/st")
