"""RBAC end to end on a real server process over plain loopback HTTP: the requester is the
loopback admin (system:masters), who may impersonate anyone, so `kubectl --as` and the
official client's Impersonate-* headers exercise the authorizer exactly as an authenticated
user would: can-i, 403s with upstream's messages, rules reviews, whoami, aggregation."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik3s.testing.server import ServerProcess

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

SA_USER = "system:serviceaccount:{ns}:sa"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # controllers on (the clusterrole-aggregation controller), no scheduler or kubelets
    s = ServerProcess(tmp_path_factory.mktemp("rbac"), nodes=0, args=["--disable", "scheduler", "--disable", "kubelet"])
    s.start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def http(srv: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        yield c


@pytest.fixture
def kubectl(kubectl_bin: Path, srv: ServerProcess, tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str, ok: bool | None = True) -> subprocess.CompletedProcess[str]:
        argv = [str(kubectl_bin), "--kubeconfig", str(srv.kubeconfig), "--cache-dir", str(tmp_path / "kc"), *args]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        if ok is True:
            assert r.returncode == 0, f"kubectl {' '.join(args)} -> {r.returncode}\n{r.stdout}\n{r.stderr}"
        elif ok is False:
            assert r.returncode != 0, f"kubectl {' '.join(args)} unexpectedly succeeded\n{r.stdout}"
        return r

    return run


@pytest.fixture
def ns(http: httpx.Client) -> str:
    name = "rbac-" + uuid.uuid4().hex[:8]
    r = http.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert r.status_code == 201, r.text
    return name


def _grant_pod_reader(http: httpx.Client, ns: str, subject: dict[str, Any]) -> None:
    r = http.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", json={
        "metadata": {"name": "pod-reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]})
    assert r.status_code == 201, r.text
    r = http.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", json={
        "metadata": {"name": "read-pods"}, "subjects": [subject],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"}})
    assert r.status_code == 201, r.text


def test_can_i_as_a_service_account_answers_from_rbac(kubectl, ns: str) -> None:
    sa = SA_USER.format(ns=ns)
    r = kubectl("auth", "can-i", "--as", sa, "delete", "pods", "-n", ns, ok=False)
    assert r.stdout.strip() == "no"
    assert kubectl("auth", "can-i", "--as", sa, "get", "pods", "-n", ns, ok=False).stdout.strip() == "no"
    kubectl("create", "role", "pod-reader", "--verb=get,list", "--resource=pods", "-n", ns)
    kubectl("create", "rolebinding", "read-pods", "--role=pod-reader", f"--serviceaccount={ns}:sa", "-n", ns)
    assert kubectl("auth", "can-i", "--as", sa, "get", "pods", "-n", ns).stdout.strip() == "yes"
    assert kubectl("auth", "can-i", "--as", sa, "delete", "pods", "-n", ns, ok=False).stdout.strip() == "no"
    assert kubectl("auth", "can-i", "--as", sa, "get", "pods", "-n", "default", ok=False).stdout.strip() == "no"
    # kubectl itself gets the 403 for what the role does not allow
    r = kubectl("delete", "pod", "x", "-n", ns, "--as", sa, ok=False)
    assert (f'Error from server (Forbidden): pods "x" is forbidden: User "{sa}" cannot delete resource "pods" '
            f'in API group "" in the namespace "{ns}"') in r.stderr
    assert "No resources found" in kubectl("get", "pods", "-n", ns, "--as", sa).stderr


def test_bootstrap_component_roles_can_be_bound(kubectl, ns: str) -> None:
    """Operators bind their service accounts to upstream's bootstrap roles by name:
    system:auth-delegator (delegated authentication), a provisioner's, a CSR approver's."""
    sa = SA_USER.format(ns=ns)
    assert kubectl("auth", "can-i", "--as", sa, "create", "tokenreviews", ok=False).stdout.strip() == "no"
    kubectl("create", "clusterrolebinding", f"{ns}-delegator", "--clusterrole=system:auth-delegator",
            f"--serviceaccount={ns}:sa")
    assert kubectl("auth", "can-i", "--as", sa, "create", "tokenreviews").stdout.strip() == "yes"
    assert kubectl("auth", "can-i", "--as", sa, "create", "subjectaccessreviews").stdout.strip() == "yes"
    assert kubectl("auth", "can-i", "--as", sa, "create", "localsubjectaccessreviews", "-n", ns,
                   ok=False).stdout.strip() == "no"
    names = kubectl("get", "clusterroles", "-o", "name").stdout.split()
    for role in ("system:persistent-volume-provisioner", "system:node-proxier", "system:kube-dns",
                 "system:certificates.k8s.io:kube-apiserver-client-approver", "system:service-account-issuer-discovery"):
        assert f"clusterrole.rbac.authorization.k8s.io/{role}" in names
    # kube-proxy's identity gets its role, as on every cluster
    assert kubectl("auth", "can-i", "--as", "system:kube-proxy", "watch", "endpointslices.discovery.k8s.io",
                   "-A").stdout.strip() == "yes"


def test_can_i_for_the_embedded_components(kubectl) -> None:
    sched = "system:kube-scheduler"
    assert kubectl("auth", "can-i", "--as", sched, "create", "pods", "--subresource=binding").stdout.strip() == "yes"
    assert kubectl("auth", "can-i", "--as", sched, "delete", "nodes", ok=False).stdout.strip() == "no"
    kcm = "system:kube-controller-manager"
    assert kubectl("auth", "can-i", "--as", kcm, "watch", "deployments.apps", "-A").stdout.strip() == "yes"
    assert kubectl("auth", "can-i", "--as", "system:admin", "--as-group", "system:masters",
                   "delete", "nodes").stdout.strip() == "yes"


def _api_as(srv: ServerProcess, user: str) -> Any:
    api = config.new_client_from_config(config_file=str(srv.kubeconfig))
    api.set_default_header("Impersonate-User", user)
    return api


def test_kubernetes_client_with_impersonation(srv: ServerProcess, http: httpx.Client, ns: str) -> None:
    _grant_pod_reader(http, ns, {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "dana"})
    api = _api_as(srv, "dana")
    try:
        core = client.CoreV1Api(api)
        assert core.list_namespaced_pod(ns).items == []
        with pytest.raises(ApiException) as e:
            core.delete_namespaced_pod("web", ns)
        assert e.value.status == 403
        assert json.loads(e.value.body) == {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'pods "web" is forbidden: User "dana" cannot delete resource "pods" in API group "" in the '
                       f'namespace "{ns}"',
            "reason": "Forbidden", "details": {"name": "web", "kind": "pods"}, "code": 403}
        with pytest.raises(ApiException) as e:
            client.AppsV1Api(api).list_deployment_for_all_namespaces()
        assert json.loads(e.value.body)["message"] == (
            'deployments.apps is forbidden: User "dana" cannot list resource "deployments" in API group "apps" at the '
            "cluster scope")
        assert json.loads(e.value.body)["details"] == {"group": "apps", "kind": "deployments"}
    finally:
        api.close()


def test_forbidden_bytes_for_subresources_and_paths(http: httpx.Client, ns: str) -> None:
    h = {"Impersonate-User": "erin"}
    r = http.get(f"/api/v1/namespaces/{ns}/pods/p/log", headers=h)
    assert r.status_code == 403
    assert r.json()["message"] == (f'pods "p" is forbidden: User "erin" cannot get resource "pods/log" in API group "" '
                                   f'in the namespace "{ns}"')
    r = http.get("/foo", headers=h)
    assert r.status_code == 403
    assert r.content == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
                         b'"forbidden: User \\"erin\\" cannot get path \\"/foo\\"","reason":"Forbidden","details":{},'
                         b'"code":403}\n')
    # discovery and health are granted to every authenticated user by the bootstrap policy
    assert http.get("/apis", headers=h).status_code == 200
    assert http.get("/healthz", headers=h).status_code == 200
    r = http.get("/metrics", headers=h)
    assert r.status_code == 403 and r.json()["message"] == 'forbidden: User "erin" cannot get path "/metrics"'
    assert http.get("/metrics", headers={**h, "Impersonate-Group": "system:monitoring"}).status_code == 200
    # watch=true is the watch verb
    r = http.get(f"/api/v1/namespaces/{ns}/configmaps?watch=true", headers=h)
    assert r.status_code == 403 and 'cannot watch resource "configmaps"' in r.json()["message"]


def test_impersonation_needs_a_user_and_adds_groups(http: httpx.Client) -> None:
    r = http.get("/api/v1/pods", headers={"Impersonate-Group": "devs"})
    assert r.status_code == 400
    assert "without impersonating a user" in r.json()["message"]
    r = http.post("/apis/authentication.k8s.io/v1/selfsubjectreviews",
                  json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                  headers={"Impersonate-User": "system:serviceaccount:team:builder", "Impersonate-Uid": "u-1",
                           "Impersonate-Extra-Scopes": "view"})
    assert r.status_code == 201, r.text
    assert r.json()["status"]["userInfo"] == {
        "username": "system:serviceaccount:team:builder", "uid": "u-1",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"],
        "extra": {"scopes": ["view"]}}


def test_rules_review_lists_what_rbac_grants(kubectl, http: httpx.Client, ns: str) -> None:
    _grant_pod_reader(http, ns, {"kind": "ServiceAccount", "name": "sa", "namespace": ns})
    out = kubectl("auth", "can-i", "--list", "-n", ns, "--as", SA_USER.format(ns=ns)).stdout
    rows = {tuple(line.split()) for line in out.splitlines()[1:]}
    assert ("pods", "[]", "[]", "[get", "list", "watch]") in rows
    assert ("selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]") in rows
    assert ("[/healthz]", "[]", "[get]") in rows
    r = http.post("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", json={
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {}})
    assert r.status_code == 400 and r.json()["message"] == "no namespace on request"


def test_access_reviews_and_their_validation(http: httpx.Client, ns: str) -> None:
    _grant_pod_reader(http, ns, {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "frank"})
    sar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
           "spec": {"user": "frank", "resourceAttributes": {"namespace": ns, "verb": "list", "resource": "pods"}}}
    r = http.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", json=sar)
    assert r.status_code == 201, r.text
    assert r.json()["status"] == {"allowed": True, "reason": f'RBAC: allowed by RoleBinding "read-pods/{ns}" of Role '
                                                             f'"pod-reader" to User "frank"'}
    sar["spec"]["resourceAttributes"]["verb"] = "delete"
    assert http.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", json=sar).json()["status"] == {
        "allowed": False}
    lsar = {**sar, "kind": "LocalSubjectAccessReview"}
    lsar["spec"] = {"user": "frank", "resourceAttributes": {"namespace": "other", "verb": "get", "resource": "pods"}}
    r = http.post(f"/apis/authorization.k8s.io/v1/namespaces/{ns}/localsubjectaccessreviews", json=lsar)
    assert r.status_code == 422
    assert r.json()["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec.resourceAttributes.namespace",
                                              "message": 'Invalid value: "other": must match metadata.namespace'}]
    r = http.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                  json={"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {}})
    assert r.status_code == 422
    assert r.json()["message"] == (
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": '
        "exactly one of nonResourceAttributes or resourceAttributes must be specified")
    r = http.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", json={
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/x", "verb": "get"}}})
    assert r.status_code == 422
    assert [c["field"] for c in r.json()["details"]["causes"]] == ["spec.user"]


def test_whoami(kubectl) -> None:
    out = kubectl("auth", "whoami", "-o", "json").stdout
    assert json.loads(out)["status"]["userInfo"] == {"username": "system:admin",
                                                     "groups": ["system:masters", "system:authenticated"]}
    out = kubectl("auth", "whoami", "--as", "gina", "--as-group", "devs", "-o", "json").stdout
    assert json.loads(out)["status"]["userInfo"] == {"username": "gina", "groups": ["devs", "system:authenticated"]}


def test_admin_role_shows_aggregated_rules(kubectl, http: httpx.Client) -> None:
    deadline = time.monotonic() + 30
    while True:
        out = json.loads(kubectl("get", "clusterrole", "admin", "-o", "json").stdout)
        if out.get("rules"):
            break
        assert time.monotonic() < deadline, "admin never aggregated"
        time.sleep(0.1)
    rules = out["rules"]
    assert {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings", "roles"],
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]} in rules
    assert any("pods" in r.get("resources", []) and "get" in r["verbs"] for r in rules)  # from view via edit


def test_escalation_is_refused_over_http(kubectl, http: httpx.Client, ns: str) -> None:
    r = http.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", json={
        "metadata": {"name": "role-writer"},
        "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["create"]},
                  {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})
    assert r.status_code == 201, r.text
    kubectl("create", "rolebinding", "role-writer", "--role=role-writer", "--user=hank", "-n", ns)
    kubectl("create", "role", "reader", "--verb=get", "--resource=pods", "-n", ns, "--as", "hank")
    r = kubectl("create", "role", "deleter", "--verb=get,delete", "--resource=pods", "-n", ns, "--as", "hank", ok=False)
    assert ('roles.rbac.authorization.k8s.io "deleter" is forbidden: user "hank" (groups=["system:authenticated"]) '
            "is attempting to grant RBAC permissions not currently held:\n"
            '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}') in r.stderr
