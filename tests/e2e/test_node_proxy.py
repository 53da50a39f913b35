"""`nodes/{name}/proxy` on a real `minik3s server` with three simulated kubelets, driven over
plain HTTP (what `kubectl proxy` relays), by `kubectl get --raw` and through `kubectl proxy`:
the kubelet's healthz, Summary API, resource metrics, pod list, configz and log directory agree
with metrics.k8s.io / `kubectl top node` and the bound pods; discovery lists nodes/proxy; RBAC
checks `nodes/proxy`; unknown nodes and paths 404; a dead kubelet is a 503."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik3s.testing.server import ServerProcess
from minik3s.testing.wait import wait_for

PROXY = "/api/v1/nodes/node-1/proxy"
Kubectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    s = ServerProcess(tmp_path_factory.mktemp("node-proxy"), nodes=3)
    s.start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def http(srv: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        wait_for(lambda: len(c.get("/api/v1/nodes").json()["items"]) == 3)
        yield c


@pytest.fixture
def kubectl(kubectl_bin: Path, srv: ServerProcess, tmp_path: Path) -> Kubectl:
    def run(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [str(kubectl_bin), "--kubeconfig", str(srv.kubeconfig), "--cache-dir", str(tmp_path / "kc"), *args]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert (r.returncode == 0) == ok, f"kubectl {' '.join(args)} -> {r.returncode}\n{r.stdout}\n{r.stderr}"
        return r

    return run


@pytest.fixture(scope="module")
def web(http: httpx.Client) -> dict[str, Any]:
    """A running pod on node-1 using 250m and 64Mi (memory limit 256Mi), printing `hello`."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "web", "annotations": {"sim.minik3s.io/cpu-usage": "250m",
                                                       "sim.minik3s.io/memory-usage": "64Mi"}},
           "spec": {"nodeName": "node-1", "containers": [{
               "name": "app", "image": "nginx:1.27", "command": ["sh", "-c", "echo hello; sleep 3600"],
               "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}}]}}
    r = http.post("/api/v1/namespaces/default/pods", json=pod)
    assert r.status_code == 201, r.text

    def running() -> dict[str, Any] | None:
        p: dict[str, Any] = http.get("/api/v1/namespaces/default/pods/web").json()
        return p if p.get("status", {}).get("phase") == "Running" else None

    found = wait_for(running)
    assert found is not None
    return found


def test_discovery_lists_nodes_proxy_as_upstream(http: httpx.Client) -> None:
    resources = http.get("/api/v1").json()["resources"]
    names = [r["name"] for r in resources]
    i = names.index("nodes")
    assert names[i:i + 3] == ["nodes", "nodes/proxy", "nodes/status"]
    assert resources[i + 1] == {"name": "nodes/proxy", "singularName": "", "namespaced": False,
                                "kind": "NodeProxyOptions", "verbs": ["create", "delete", "get", "patch", "update"]}


def test_healthz_with_kubectl_get_raw(kubectl: Kubectl, http: httpx.Client) -> None:
    assert kubectl("get", "--raw", f"{PROXY}/healthz").stdout == "ok"
    r = http.get(f"{PROXY}/healthz", params={"verbose": ""})
    assert r.text == "[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n"


def test_summary_agrees_with_top_node_and_metrics_api(kubectl: Kubectl, http: httpx.Client,
                                                      web: dict[str, Any]) -> None:
    raw = kubectl("get", "--raw", f"{PROXY}/stats/summary").stdout
    assert raw.startswith('{\n "node": {\n  "nodeName": "node-1",\n  "systemContainers": [\n')  # go-restful's indent
    summary = json.loads(raw)
    node = summary["node"]
    assert list(node) == ["nodeName", "systemContainers", "startTime", "cpu", "memory"]  # no network/fs/rlimit
    metrics = http.get("/apis/metrics.k8s.io/v1beta1/nodes/node-1").json()["usage"]
    assert metrics["cpu"] == f"{node['cpu']['usageNanoCores']}n"
    assert metrics["memory"] == f"{node['memory']['workingSetBytes'] // 1024}Ki"
    capacity = 16 * 1024 ** 3  # the fleet's default node memory
    assert node["memory"]["availableBytes"] == capacity - node["memory"]["workingSetBytes"]
    top = kubectl("top", "node", "node-1", "--no-headers").stdout.split()
    assert top[0] == "node-1"
    assert top[1] == f"{node['cpu']['usageNanoCores'] // 1_000_000}m"
    assert top[3] == f"{node['memory']['workingSetBytes'] // (1024 * 1024)}Mi"
    (pod,) = summary["pods"]
    assert pod["podRef"] == {"name": "web", "namespace": "default", "uid": web["metadata"]["uid"]}
    assert pod["startTime"] == web["status"]["startTime"]
    assert list(pod) == ["podRef", "startTime", "containers", "cpu", "memory"]
    (app,) = pod["containers"]
    assert app["name"] == "app"
    assert app["startTime"] == web["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]
    assert app["cpu"]["usageNanoCores"] == 250_000_000 and app["cpu"]["usageCoreNanoSeconds"] > 0
    assert app["memory"]["workingSetBytes"] == 64 * 1024 * 1024
    assert app["memory"]["availableBytes"] == 192 * 1024 * 1024  # the 256Mi limit minus the working set
    assert "pageFaults" not in app["memory"] and "rootfs" not in app
    pods_cgroup = node["systemContainers"][0]
    assert pods_cgroup["name"] == "pods" and pods_cgroup["cpu"]["usageNanoCores"] == 250_000_000
    podmetrics = http.get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web").json()
    assert podmetrics["containers"] == [{"name": "app", "usage": {"cpu": "250000000n", "memory": "65536Ki"}}]


def _sample(text: str, metric: str) -> tuple[float, int]:
    m = re.search(rf"^{re.escape(metric)} (\S+) (\d+)$", text, re.M)
    assert m is not None, f"{metric} missing from:\n{text}"
    return float(m.group(1)), int(m.group(2))


def test_resource_metrics_are_prometheus_text_and_counters_grow(http: httpx.Client, web: dict[str, Any]) -> None:
    r = http.get(f"{PROXY}/metrics/resource")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = r.text
    families = re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M)
    assert families == [("container_cpu_usage_seconds_total", "counter"),
                        ("container_memory_working_set_bytes", "gauge"),
                        ("container_start_time_seconds", "gauge"),
                        ("node_cpu_usage_seconds_total", "counter"), ("node_memory_working_set_bytes", "gauge"),
                        ("pod_cpu_usage_seconds_total", "counter"), ("pod_memory_working_set_bytes", "gauge"),
                        ("resource_scrape_error", "gauge")]
    assert ("# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in "
            "core-seconds\n") in text
    assert text.endswith("resource_scrape_error 0\n")
    labels = '{container="app",namespace="default",pod="web"}'
    assert _sample(text, f"container_memory_working_set_bytes{labels}")[0] == 64 * 1024 * 1024
    assert f"container_memory_working_set_bytes{labels} 6.7108864e+07 " in text  # Go's %g
    first, _ = _sample(text, 'pod_cpu_usage_seconds_total{namespace="default",pod="web"}')
    node_first, ts_first = _sample(text, "node_cpu_usage_seconds_total")
    time.sleep(1.1)
    later = http.get(f"{PROXY}/metrics/resource").text
    assert _sample(later, 'pod_cpu_usage_seconds_total{namespace="default",pod="web"}')[0] > first
    node_later, ts_later = _sample(later, "node_cpu_usage_seconds_total")
    assert node_later > node_first and ts_later > ts_first
    summary = http.get(f"{PROXY}/stats/summary").json()
    assert _sample(later, "node_memory_working_set_bytes")[0] == summary["node"]["memory"]["workingSetBytes"]


def test_pods_lists_the_pods_bound_to_the_node(http: httpx.Client, web: dict[str, Any]) -> None:
    r = http.get(f"{PROXY}/pods")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    doc = r.json()
    assert [doc["kind"], doc["apiVersion"], doc["metadata"]] == ["PodList", "v1", {}]
    bound = http.get("/api/v1/pods", params={"fieldSelector": "spec.nodeName=node-1"}).json()["items"]
    assert sorted(p["metadata"]["uid"] for p in doc["items"]) == sorted(p["metadata"]["uid"] for p in bound)
    item = next(p for p in doc["items"] if p["metadata"]["name"] == "web")
    assert "kind" not in item and "apiVersion" not in item
    assert item["metadata"]["annotations"]["kubernetes.io/config.source"] == "api"
    assert "kubernetes.io/config.seen" in item["metadata"]["annotations"]
    assert item["spec"]["nodeName"] == "node-1" and item["status"]["phase"] == "Running"
    assert http.get("/api/v1/nodes/node-2/proxy/pods").json()["items"] == []


def test_configz_is_the_kubelet_configuration(http: httpx.Client) -> None:
    r = http.get(f"{PROXY}/configz")
    assert r.headers["content-type"] == "application/json"
    cfg = r.json()["kubeletconfig"]
    assert list(cfg)[:3] == ["enableServer", "podLogsDir", "syncFrequency"]
    node = http.get("/api/v1/nodes/node-1").json()
    assert cfg["maxPods"] == int(node["status"]["capacity"]["pods"])
    assert cfg["port"] == node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] == 10250
    assert cfg["nodeLeaseDurationSeconds"] == 40 and cfg["enableSystemLogHandler"] is True
    assert cfg["evictionHard"] == {"imagefs.available": "15%", "memory.available": "100Mi",
                                   "nodefs.available": "10%", "nodefs.inodesFree": "5%"}
    assert "kind" not in cfg


def test_logs_lists_var_log_and_serves_the_container_log(http: httpx.Client, web: dict[str, Any]) -> None:
    r = http.get(f"{PROXY}/logs/")
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert r.text == ('<!DOCTYPE html>\n<meta name="viewport" content="width=device-width">\n<pre>\n'
                      '<a href="containers/">containers/</a>\n<a href="pods/">pods/</a>\n</pre>\n')
    pod_dir = f"default_web_{web['metadata']['uid']}/"
    assert f'<a href="{pod_dir}">' in http.get(f"{PROXY}/logs/pods/").text
    redirect = http.get(f"{PROXY}/logs/pods")
    assert (redirect.status_code, redirect.headers["location"]) == (301, "pods/")
    log = http.get(f"{PROXY}/logs/pods/{pod_dir}app/0.log")
    assert log.status_code == 200
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z stdout F hello\n", log.text), log.text
    links = http.get(f"{PROXY}/logs/containers/").text
    cid = web["status"]["containerStatuses"][0]["containerID"].split("://", 1)[1]
    assert f'<a href="web_default_app-{cid}.log">' in links
    assert http.get(f"{PROXY}/logs/pods/nope").status_code == 404


def test_unknown_paths_answer_the_kubelets_404(kubectl: Kubectl, http: httpx.Client) -> None:
    for path in ("/spec/", "/nope", "/"):
        r = http.get(PROXY + path)
        assert (r.status_code, r.text, r.headers["content-type"]) == (404, "404 page not found\n",
                                                                     "text/plain; charset=utf-8")
    out = kubectl("get", "--raw", f"{PROXY}/spec/", ok=False)
    assert out.stderr.strip() == "Error from server (NotFound): the server could not find the requested resource"
    r = http.get(PROXY, follow_redirects=False)  # the API server sends an empty path to `proxy/`
    assert (r.status_code, r.headers["location"]) == (301, f"{PROXY}/")


def test_unknown_node_is_not_found(kubectl: Kubectl, http: httpx.Client) -> None:
    r = http.get("/api/v1/nodes/node-9/proxy/healthz")
    assert r.status_code == 404
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": 'nodes "node-9" not found', "reason": "NotFound",
                        "details": {"name": "node-9", "kind": "nodes"}, "code": 404}
    r2 = kubectl("get", "--raw", "/api/v1/nodes/node-9/proxy/healthz", ok=False)
    assert r2.stderr.strip() == 'Error from server (NotFound): nodes "node-9" not found'


def test_rbac_checks_nodes_proxy(http: httpx.Client) -> None:
    as_ivy = {"Impersonate-User": "ivy"}
    r = http.get(f"{PROXY}/stats/summary", headers=as_ivy)
    assert r.status_code == 403
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": 'nodes "node-1" is forbidden: User "ivy" cannot get resource "nodes/proxy" '
                                   'in API group "" at the cluster scope',
                        "reason": "Forbidden", "details": {"name": "node-1", "kind": "nodes"}, "code": 403}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "node-reader"},
            "rules": [{"apiGroups": [""], "resources": ["nodes/proxy"], "verbs": ["get"]}]}
    assert http.post("/apis/rbac.authorization.k8s.io/v1/clusterroles", json=role).status_code == 201
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "ivy-node-reader"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "node-reader"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "ivy"}]}
    assert http.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", json=binding).status_code == 201
    wait_for(lambda: http.get(f"{PROXY}/healthz", headers=as_ivy).status_code == 200)
    assert http.get(f"{PROXY}/stats/summary", headers=as_ivy).json()["node"]["nodeName"] == "node-1"
    post = http.post(f"{PROXY}/stats/summary", headers=as_ivy)  # POST is the `create` verb
    assert post.status_code == 403
    assert 'cannot create resource "nodes/proxy"' in post.json()["message"]
    # reading the Node itself is another permission
    assert http.get("/api/v1/nodes/node-1", headers=as_ivy).status_code == 403


def test_through_kubectl_proxy(kubectl_bin: Path, srv: ServerProcess, web: dict[str, Any]) -> None:
    proc = subprocess.Popen([str(kubectl_bin), "--kubeconfig", str(srv.kubeconfig), "proxy", "--port=0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"Starting to serve on (\S+)", line)
        assert m is not None, line
        with httpx.Client(base_url=f"http://{m.group(1)}", timeout=30) as c:
            assert c.get(f"{PROXY}/healthz").text == "ok"
            summary = c.get(f"{PROXY}/stats/summary").json()
            assert [p["podRef"]["name"] for p in summary["pods"]] == ["web"]
            assert c.get(f"{PROXY}/spec/").status_code == 404
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_dead_kubelet_cannot_be_reached(kubectl: Kubectl, http: httpx.Client) -> None:
    node3 = http.get("/api/v1/nodes/node-3").json()
    ip = next(a["address"] for a in node3["status"]["addresses"] if a["type"] == "InternalIP")
    patch = {"metadata": {"annotations": {"sim.minik3s.io/failed": "true"}}}
    headers = {"Content-Type": "application/merge-patch+json"}
    assert http.patch("/api/v1/nodes/node-3", content=json.dumps(patch), headers=headers).status_code == 200
    wait_for(lambda: http.get("/api/v1/nodes/node-3/proxy/healthz").status_code == 503)
    r = http.get("/api/v1/nodes/node-3/proxy/healthz")
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": f"error trying to reach service: dial tcp {ip}:10250: connect: connection refused",
                        "reason": "ServiceUnavailable", "code": 503}
    out = kubectl("get", "--raw", "/api/v1/nodes/node-3/proxy/healthz", ok=False)
    assert out.stderr.strip() == (f"Error from server (ServiceUnavailable): error trying to reach service: "
                                  f"dial tcp {ip}:10250: connect: connection refused")
    recover: dict[str, Any] = {"metadata": {"annotations": {"sim.minik3s.io/failed": None}}}
    assert http.patch("/api/v1/nodes/node-3", content=json.dumps(recover), headers=headers).status_code == 200
    wait_for(lambda: http.get("/api/v1/nodes/node-3/proxy/healthz").text == "ok")
    # a port the kubelet does not listen on, and a Node no simulated kubelet runs
    r = http.get("/api/v1/nodes/node-1:8080/proxy/")
    assert r.status_code == 503 and r.json()["message"].endswith(":8080: connect: connection refused")
    ghost = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ghost"},
             "status": {"addresses": [{"type": "InternalIP", "address": "10.9.9.9"}]}}
    assert http.post("/api/v1/nodes", json=ghost).status_code == 201
    assert http.get("/api/v1/nodes/ghost/proxy/healthz").json()["message"] == (
        "error trying to reach service: dial tcp 10.9.9.9:10250: connect: connection refused")
