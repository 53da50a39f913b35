"""Admission webhooks on a real server (plain HTTP on loopback: every request is the admin's),
called over HTTPS at a webhook server this module starts on 127.0.0.1 with a throwaway CA:
kubectl, the official client and plain HTTP see upstream's denial, mutation, failure-policy,
selector, DELETE, dry-run and caBundle behaviour, and the AdmissionReview the webhook gets."""

from __future__ import annotations

import base64
import importlib.util
import json
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik3s.embed import Cluster
from minik3s.pytest_plugin import cluster_fixture
from minik3s.testing.wait import wait_for
from minik3s.testing.webhook_server import WebhookServer, allow, json_patch, make_ca_and_cert

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

# a small cluster of its own: the webhooks configured here must not reach other modules' tests
minik3s_cluster = cluster_fixture(scope="module", name="minik3s_cluster", nodes=1)

VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
MWC = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "webhooks" / "webhook.py"


@pytest.fixture
def hook() -> Iterator[WebhookServer]:
    with WebhookServer() as s:
        yield s


@pytest.fixture
def wns(http: httpx.Client) -> Iterator[str]:
    """A namespace labelled for this test's webhooks; their configurations are removed after."""
    name = f"wh-{uuid.uuid4().hex[:8]}"
    http.post("/api/v1/namespaces", json={"metadata": {"name": name, "labels": {"webhook-test": name}}}
              ).raise_for_status()
    yield name
    for path in (VWC, MWC):
        for cfg in http.get(path).json()["items"]:
            if cfg["metadata"].get("labels", {}).get("webhook-test") == name:
                http.delete(f"{path}/{cfg['metadata']['name']}").raise_for_status()


def configure(http: httpx.Client, kind: str, ns: str, server: WebhookServer, path: str, *,
              ops: list[str] | None = None, **extra: Any) -> str:
    name = f"{path.strip('/')}.{ns}.example.com"
    body = {"metadata": {"name": f"{path.strip('/')}-{ns}", "labels": {"webhook-test": ns}}, "webhooks": [{
        "name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": server.url(path), "caBundle": server.ca_bundle},
        "namespaceSelector": {"matchLabels": {"webhook-test": ns}},
        "rules": [{"operations": ops or ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
        **extra}]}
    r = http.post(VWC if kind == "validating" else MWC, json=body)
    assert r.status_code == 201, r.text
    return name


def pod(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **({"labels": labels} if labels else {})},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def kubectl(binary: Path, cluster: Cluster, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), "--kubeconfig", str(cluster.kubeconfig_path), *args], capture_output=True,
                          text=True, timeout=60, input=stdin)


def test_validating_webhook_denies_a_pod_for_every_client(http: httpx.Client, wns: str, hook: WebhookServer,
                                                          kubectl_bin: Path, minik3s_cluster: Cluster) -> None:
    hook.answer = lambda _p, req: {"allowed": False, "warnings": ["pin your image tags"], "status": {
        "code": 403, "reason": "Forbidden", "message": f"pod {req['name']} uses a latest image"}}
    name = configure(http, "validating", wns, hook, "/deny")
    denied = f'admission webhook "{name}" denied the request: pod web uses a latest image'
    r = http.post(f"/api/v1/namespaces/{wns}/pods", json=pod("web"))
    assert r.status_code == 403
    # a denial still carries the webhook's warnings, as kube-apiserver records them first
    assert r.headers["Warning"] == '299 - "pin your image tags"'
    st = r.json()
    assert (st["kind"], st["status"], st["reason"], st["code"], st["message"]) == \
        ("Status", "Failure", "Forbidden", 403, denied)
    k = kubectl(kubectl_bin, minik3s_cluster, "run", "web", "-n", wns, "--image", "nginx")
    assert k.returncode == 1
    assert f"Error from server (Forbidden): {denied}" in k.stderr
    assert "Warning: pin your image tags" in k.stderr
    api = config.new_client_from_config(config_file=str(minik3s_cluster.kubeconfig_path))
    try:
        with pytest.raises(ApiException) as e:
            client.CoreV1Api(api).create_namespaced_pod(wns, client.V1Pod(
                metadata=client.V1ObjectMeta(name="web"),
                spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")])))
    finally:
        api.close()
    assert e.value.status == 403
    assert json.loads(e.value.body)["message"] == denied
    assert http.get(f"/api/v1/namespaces/{wns}/pods/web").status_code == 404
    # the review a webhook receives: upstream's fields, the admin's identity, kubectl's options
    kreq = next(r for r in hook.requests("/deny") if r["options"].get("fieldManager") == "kubectl-run")
    assert kreq["kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert kreq["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert (kreq["operation"], kreq["name"], kreq["namespace"], kreq["dryRun"]) == ("CREATE", "web", wns, False)
    assert kreq["userInfo"]["username"] == "system:admin" and "system:masters" in kreq["userInfo"]["groups"]
    assert kreq["object"]["metadata"]["name"] == "web" and kreq["oldObject"] is None
    assert kreq["options"]["kind"] == "CreateOptions" and kreq["options"]["apiVersion"] == "meta.k8s.io/v1"
    # kube-apiserver's webhook client names itself
    assert hook.user_agents and set(hook.user_agents) == {"kube-apiserver-admission"}


def test_mutating_webhook_adds_a_label_and_warns(http: httpx.Client, wns: str, hook: WebhookServer,
                                                 kubectl_bin: Path, minik3s_cluster: Cluster) -> None:
    hook.answer = lambda _p, _r: {**json_patch([{"op": "add", "path": "/metadata/labels/injected", "value": "yes"}]),
                                  "warnings": ["label injected by webhook"]}
    configure(http, "mutating", wns, hook, "/mutate")
    k = kubectl(kubectl_bin, minik3s_cluster, "apply", "-n", wns, "-f", "-",
                stdin=httpx.Response(200, json=pod("web", {"app": "web"})).text)
    assert k.returncode == 0, k.stderr
    assert "Warning: label injected by webhook" in k.stderr
    stored = http.get(f"/api/v1/namespaces/{wns}/pods/web").json()
    assert stored["metadata"]["labels"] == {"app": "web", "injected": "yes"}
    # as upstream, the webhook's change belongs to no field manager
    owned = [e["fieldsV1"] for e in stored["metadata"]["managedFields"] if e["manager"] == "kubectl-client-side-apply"
             or e["manager"] == "kubectl"]
    assert owned and all("f:injected" not in str(f) for f in owned)


def test_failure_policy_with_the_webhook_down_and_timing_out(http: httpx.Client, wns: str,
                                                             hook: WebhookServer) -> None:
    down = WebhookServer().start()
    down.stop()
    name = configure(http, "validating", wns, down, "/down", failurePolicy="Ignore")
    assert http.post(f"/api/v1/namespaces/{wns}/pods", json=pod("a")).status_code == 201
    http.patch(f"{VWC}/down-{wns}", json=[{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Fail"}],
               headers={"Content-Type": "application/json-patch+json"}).raise_for_status()
    r = http.post(f"/api/v1/namespaces/{wns}/pods", json=pod("b"))
    assert r.status_code == 500
    assert r.json()["reason"] == "InternalError"
    assert r.json()["message"] == (
        f'Internal error occurred: failed calling webhook "{name}": failed to call webhook: Post '
        f'"https://127.0.0.1:{down.port}/down?timeout=10s": dial tcp 127.0.0.1:{down.port}: connect: connection refused')
    http.delete(f"{VWC}/down-{wns}").raise_for_status()
    hook.hold = True
    configure(http, "validating", wns, hook, "/slow", timeoutSeconds=1)
    t0 = time.monotonic()
    r = http.post(f"/api/v1/namespaces/{wns}/pods", json=pod("c"))
    assert time.monotonic() - t0 < 5
    assert r.status_code == 500 and r.json()["message"].endswith("?timeout=1s\": context deadline exceeded")
    # a webhook call in flight does not hold up other requests
    http.patch(f"{VWC}/slow-{wns}", json=[{"op": "replace", "path": "/webhooks/0/timeoutSeconds", "value": 20}],
               headers={"Content-Type": "application/json-patch+json"}).raise_for_status()
    pending: list[httpx.Response] = []
    t = threading.Thread(target=lambda: pending.append(http.post(f"/api/v1/namespaces/{wns}/pods", json=pod("d"))))
    t.start()
    wait_for(lambda: any(r["name"] == "d" for r in hook.requests("/slow")), timeout=10)
    t0 = time.monotonic()
    assert http.get(f"/api/v1/namespaces/{wns}/pods").status_code == 200
    assert http.post(f"/api/v1/namespaces/{wns}/configmaps", json={"metadata": {"name": "cm"}}).status_code == 201
    assert time.monotonic() - t0 < 2 and t.is_alive()
    hook.release()
    t.join(20)
    assert pending[0].status_code == 201


def test_selectors_exclude(http: httpx.Client, wns: str, hook: WebhookServer) -> None:
    hook.answer = lambda _p, _r: {"allowed": False, "status": {"message": "no"}}
    configure(http, "validating", wns, hook, "/sel", objectSelector={"matchLabels": {"checked": "true"}})
    assert http.post(f"/api/v1/namespaces/{wns}/pods", json=pod("plain")).status_code == 201
    assert http.post(f"/api/v1/namespaces/{wns}/pods", json=pod("checked", {"checked": "true"})).status_code == 400
    other = f"other-{uuid.uuid4().hex[:6]}"
    http.post("/api/v1/namespaces", json={"metadata": {"name": other}}).raise_for_status()
    assert http.post(f"/api/v1/namespaces/{other}/pods", json=pod("checked", {"checked": "true"})).status_code == 201
    assert [r["name"] for r in hook.requests()] == ["checked"]


def test_delete_webhook(http: httpx.Client, wns: str, hook: WebhookServer, kubectl_bin: Path,
                        minik3s_cluster: Cluster) -> None:
    hook.answer = lambda _p, req: allow(_p, req) if req["oldObject"]["metadata"].get("labels", {}).get(
        "protected") != "true" else {"allowed": False, "status": {"message": "protected pod"}}
    name = configure(http, "validating", wns, hook, "/del", ops=["DELETE"])
    http.post(f"/api/v1/namespaces/{wns}/pods", json=pod("keep", {"protected": "true"})).raise_for_status()
    http.post(f"/api/v1/namespaces/{wns}/pods", json=pod("go")).raise_for_status()
    k = kubectl(kubectl_bin, minik3s_cluster, "delete", "pod", "keep", "-n", wns, "--wait=false")
    assert k.returncode == 1
    # no reason in the webhook's status: kubectl prints no "(Reason)", as against kube-apiserver
    assert f'Error from server: admission webhook "{name}" denied the request: protected pod' in k.stderr
    assert http.delete(f"/api/v1/namespaces/{wns}/pods/go").status_code == 200
    reqs = hook.requests()
    assert [(r["operation"], r["name"], r["object"]) for r in reqs][:2] == [("DELETE", "keep", None),
                                                                            ("DELETE", "go", None)]
    assert reqs[0]["options"]["kind"] == "DeleteOptions"
    assert http.get(f"/api/v1/namespaces/{wns}/pods/keep").status_code == 200


def test_server_dry_run_calls_side_effect_free_webhooks(http: httpx.Client, wns: str, hook: WebhookServer,
                                                        kubectl_bin: Path, minik3s_cluster: Cluster) -> None:
    hook.answer = lambda _p, _r: json_patch([{"op": "add", "path": "/metadata/labels", "value": {"seen": "dry"}}])
    configure(http, "mutating", wns, hook, "/dry", sideEffects="NoneOnDryRun")
    k = kubectl(kubectl_bin, minik3s_cluster, "run", "dry", "-n", wns, "--image", "nginx", "--dry-run=server",
                "-o", "jsonpath={.metadata.labels.seen}")
    assert k.returncode == 0, k.stderr
    assert k.stdout == "dry"
    [req] = hook.requests()
    assert req["dryRun"] is True and req["options"]["dryRun"] == ["All"]
    assert http.get(f"/api/v1/namespaces/{wns}/pods/dry").status_code == 404
    # a configuration with side effects cannot be created in v1 at all
    r = http.post(VWC, json={"metadata": {"name": "side"}, "webhooks": [{
        "name": "side.example.com", "sideEffects": "Some", "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": hook.url("/x")}}]})
    assert r.status_code == 422
    assert r.json()["details"]["causes"][0]["field"] == "webhooks[0].sideEffects"


def test_bad_ca_bundle_fails_closed(http: httpx.Client, wns: str, hook: WebhookServer) -> None:
    other_ca = base64.b64encode(make_ca_and_cert()[0]).decode()
    configure(http, "validating", wns, hook, "/ca", clientConfig={"url": hook.url("/ca"), "caBundle": other_ca})
    r = http.post(f"/api/v1/namespaces/{wns}/pods", json=pod("p"))
    assert r.status_code == 500
    assert r.json()["message"].endswith("x509: certificate signed by unknown authority")
    assert hook.requests() == []
    wait_for(lambda: http.get(f"/api/v1/namespaces/{wns}/pods").json()["items"] == [], timeout=5)


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("webhook_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_example_as_its_docstring_says(http: httpx.Client, kubectl_bin: Path, minik3s_cluster: Cluster) -> None:
    example = _example()
    ns = f"demo-{uuid.uuid4().hex[:6]}"
    with WebhookServer(example.answer) as server:
        k = kubectl(kubectl_bin, minik3s_cluster, "apply", "-f", "-", stdin=example.manifest(server))
        assert k.returncode == 0, k.stderr
        try:
            assert kubectl(kubectl_bin, minik3s_cluster, "create", "namespace", ns).returncode == 0
            assert kubectl(kubectl_bin, minik3s_cluster, "label", "namespace", ns,
                           "webhook-example=enabled").returncode == 0
            k = kubectl(kubectl_bin, minik3s_cluster, "run", "web", "-n", ns, "--image", "nginx")
            assert k.returncode == 1
            assert ('Error from server (Forbidden): admission webhook "pinned-images.webhook.example.com" denied '
                    'the request: container "web" uses image "nginx" without a pinned tag') in k.stderr
            k = kubectl(kubectl_bin, minik3s_cluster, "run", "web", "-n", ns, "--image", "nginx:1.27")
            assert k.returncode == 0, k.stderr
            labels = http.get(f"/api/v1/namespaces/{ns}/pods/web").json()["metadata"]["labels"]
            assert labels == {"run": "web", "example.com/admitted-by": "webhook"}
        finally:
            http.delete(f"{MWC}/example-label")
            http.delete(f"{VWC}/example-pinned-images")
