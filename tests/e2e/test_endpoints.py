"""Endpoints and EndpointSlices for Services with the whole cluster running (scheduler,
controllers, 6 simulated kubelets over 3 zones): what `kubectl get endpoints` and kube-proxy
style consumers see as Deployments scale and pods come and go."""

from __future__ import annotations

import subprocess

import pytest

from minik3s.testing.wait import wait_for

MERGE = {"Content-Type": "application/merge-patch+json"}


def deployment(name: str, replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                         {"name": "web", "image": "nginx:1.25",
                          "ports": [{"name": "http-alt", "containerPort": 8080}],
                          "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}}


def service(name: str, *, target_port: int | str = "http-alt") -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": [{"name": "web", "port": 80, "targetPort": target_port}]}}


def ready_addresses(http, ns: str, name: str) -> list[dict]:
    r = http.get(f"/api/v1/namespaces/{ns}/endpoints/{name}")
    if r.status_code != 200:
        return []
    return [a for s in r.json().get("subsets") or [] for a in s.get("addresses") or []]


def live_endpoints(http, ns: str, name: str) -> list[dict]:
    items = http.get(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
                     params={"labelSelector": f"kubernetes.io/service-name={name}"}).json()["items"]
    return [e for s in items for e in s.get("endpoints") or [] if e["conditions"]["ready"]]


def running_pods(http, ns: str, app: str) -> list[dict]:
    items = http.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": f"app={app}"}).json()["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp") and (p.get("status") or {}).get("podIP")]


def test_deployment_behind_a_service_gets_endpoints_and_slices(http, ns):
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("web", 3)).raise_for_status()
    svc = http.post(f"/api/v1/namespaces/{ns}/services", json=service("web")).json()

    addrs = wait_for(lambda: (a := ready_addresses(http, ns, "web")) and len(a) == 3 and a)
    pods = {p["metadata"]["name"]: p for p in running_pods(http, ns, "web")}
    for a in addrs:
        pod = pods[a["targetRef"]["name"]]
        assert a["ip"] == pod["status"]["podIP"]
        assert a["nodeName"] == pod["spec"]["nodeName"]
        assert a["targetRef"]["kind"] == "Pod" and a["targetRef"]["uid"] == pod["metadata"]["uid"]
    ep = http.get(f"/api/v1/namespaces/{ns}/endpoints/web").json()
    # the named targetPort resolves to the container's port
    assert ep["subsets"][0]["ports"] == [{"name": "web", "port": 8080, "protocol": "TCP"}]

    eps = wait_for(lambda: (e := live_endpoints(http, ns, "web")) and len(e) == 3 and e)
    zones = {n["metadata"]["name"]: n["metadata"]["labels"]["topology.kubernetes.io/zone"]
             for n in http.get("/api/v1/nodes").json()["items"]}
    for e in eps:
        assert e["zone"] == zones[e["nodeName"]]
        assert e["conditions"] == {"ready": True, "serving": True, "terminating": False}
    [sl] = http.get(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
                    params={"labelSelector": "kubernetes.io/service-name=web"}).json()["items"]
    assert sl["metadata"]["name"].startswith("web-")
    assert sl["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == "endpointslice-controller.k8s.io"
    assert sl["metadata"]["ownerReferences"][0]["uid"] == svc["metadata"]["uid"]
    assert sl["addressType"] == "IPv4"
    assert sl["ports"] == [{"name": "web", "port": 8080, "protocol": "TCP"}]

    # scale down to 1: one address remains
    http.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/web", json={"spec": {"replicas": 1}},
               headers=MERGE).raise_for_status()
    [left] = wait_for(lambda: (a := ready_addresses(http, ns, "web")) and len(a) == 1 and a)
    wait_for(lambda: len(live_endpoints(http, ns, "web")) == 1)

    # deleting the pod removes it; its replacement takes its place
    http.delete(f"/api/v1/namespaces/{ns}/pods/{left['targetRef']['name']}").raise_for_status()
    wait_for(lambda: all(a["targetRef"]["name"] != left["targetRef"]["name"]
                         for a in ready_addresses(http, ns, "web")))
    wait_for(lambda: len(ready_addresses(http, ns, "web")) == 1, timeout=90)

    # deleting the Service deletes its Endpoints and (via the garbage collector) its slices
    http.delete(f"/api/v1/namespaces/{ns}/services/web").raise_for_status()
    wait_for(lambda: http.get(f"/api/v1/namespaces/{ns}/endpoints/web").status_code == 404)
    wait_for(lambda: not http.get(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
                                  params={"labelSelector": "kubernetes.io/service-name=web"}).json()["items"])


@pytest.mark.parametrize(("target_port", "want"), [
    pytest.param("http-alt", 8080, id="named-target-port-resolves-to-container-port"),
    pytest.param(9000, 9000, id="numeric-target-port-is-used-as-is"),
])
def test_target_port_resolution(http, ns, target_port, want):
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("tp", 1)).raise_for_status()
    http.post(f"/api/v1/namespaces/{ns}/services", json=service("tp", target_port=target_port)).raise_for_status()
    wait_for(lambda: len(ready_addresses(http, ns, "tp")) == 1)
    ep = http.get(f"/api/v1/namespaces/{ns}/endpoints/tp").json()
    assert [p["port"] for p in ep["subsets"][0]["ports"]] == [want]


def test_service_without_selector_keeps_user_endpoints(http, ns):
    http.post(f"/api/v1/namespaces/{ns}/services", json={"apiVersion": "v1", "kind": "Service",
              "metadata": {"name": "ext"}, "spec": {"ports": [{"port": 80}]}}).raise_for_status()
    body = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ext"},
            "subsets": [{"addresses": [{"ip": "192.0.2.10"}], "ports": [{"port": 80}]}]}
    http.post(f"/api/v1/namespaces/{ns}/endpoints", json=body).raise_for_status()
    # a selector Service created afterwards proves the controller has been through the queue
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("probe", 1)).raise_for_status()
    http.post(f"/api/v1/namespaces/{ns}/services", json=service("probe")).raise_for_status()
    wait_for(lambda: len(ready_addresses(http, ns, "probe")) == 1)
    ep = http.get(f"/api/v1/namespaces/{ns}/endpoints/ext").json()
    assert ep["subsets"] == body["subsets"]


def test_kubectl_get_endpoints_shows_the_service(kubectl_bin, http, ns, minik3s_cluster, tmp_path):
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("kc", 2)).raise_for_status()
    http.post(f"/api/v1/namespaces/{ns}/services", json=service("kc")).raise_for_status()
    addrs = wait_for(lambda: (a := ready_addresses(http, ns, "kc")) and len(a) == 2 and a)
    out = subprocess.run([str(kubectl_bin), "--kubeconfig", str(minik3s_cluster.kubeconfig), "--cache-dir",
                          str(tmp_path / "cache"), "-n", ns, "get", "endpoints", "kc", "--no-headers"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    name, shown, _age = out.split()
    assert name == "kc"
    assert sorted(shown.split(",")) == sorted(f"{a['ip']}:8080" for a in addrs)
