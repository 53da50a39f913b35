"""The API groups real clients expect, on a real API-only server over HTTP, and with the real
kubectl 1.33: rbac.authorization.k8s.io, networking.k8s.io, storage.k8s.io,
certificates.k8s.io, admissionregistration.k8s.io, apiregistration.k8s.io (create, get, list,
watch, delete, a validation error with its field path, the `kubectl get` table), the bootstrap
ClusterRoles and local APIServices, TokenRequest (`kubectl create token`), and the wire
defects of issue 12: Status field order and trailing newline, DELETE answers, /openapi/v2 with
the protobuf Accept, pods/exec|attach|portforward answering upstream's Status before a node is reached.
"""

from __future__ import annotations

import base64
import json
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik3s.testing.server import ServerProcess


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


@pytest.fixture
def ns(http: httpx.Client) -> str:
    name = f"groups-{uuid.uuid4().hex[:8]}"
    http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    return name


def kubectl(binary: Path, srv: ServerProcess, cache: Path, *args: str, ok: bool = True,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([str(binary), "--kubeconfig", str(srv.kubeconfig), "--cache-dir", str(cache), *args],
                       capture_output=True, text=True, timeout=60, input=stdin)
    if ok:
        assert r.returncode == 0, f"kubectl {' '.join(args)} -> {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def _path(group: str, resource: str, namespace: str | None = None, name: str | None = None) -> str:
    base = f"/apis/{group}/v1" + (f"/namespaces/{namespace}" if namespace else "") + f"/{resource}"
    return base + (f"/{name}" if name else "")


# one valid object per kind, and one invalid with the field upstream names
CASES: list[tuple[str, str, bool, dict[str, Any], dict[str, Any], str]] = [
    ("rbac.authorization.k8s.io", "roles", True,
     {"kind": "Role", "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
     {"kind": "Role", "rules": [{"apiGroups": [""], "resources": ["pods"]}]}, "rules[0].verbs"),
    ("rbac.authorization.k8s.io", "clusterroles", False,
     {"kind": "ClusterRole", "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]},
     {"kind": "ClusterRole", "rules": [{"nonResourceURLs": ["/x"], "resources": ["pods"], "verbs": ["get"]}]},
     "rules[0].nonResourceURLs"),
    ("rbac.authorization.k8s.io", "rolebindings", True,
     {"kind": "RoleBinding", "roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "User", "name": "u"}]},
     {"kind": "RoleBinding", "roleRef": {"kind": "Deployment", "name": "r"}}, "roleRef.kind"),
    ("rbac.authorization.k8s.io", "clusterrolebindings", False,
     {"kind": "ClusterRoleBinding", "roleRef": {"kind": "ClusterRole", "name": "view"},
      "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}]},
     {"kind": "ClusterRoleBinding", "roleRef": {"kind": "ClusterRole", "name": "view"},
      "subjects": [{"kind": "ServiceAccount", "name": "default"}]}, "subjects[0].namespace"),
    ("networking.k8s.io", "ingresses", True,
     {"kind": "Ingress", "spec": {"rules": [{"host": "a.example.com", "http": {"paths": [
         {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}},
     {"kind": "Ingress", "spec": {"rules": [{"http": {"paths": [
         {"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}},
     "spec.rules[0].http.paths[0].pathType"),
    ("networking.k8s.io", "ingressclasses", False,
     {"kind": "IngressClass", "spec": {"controller": "example.com/ingress"}},
     {"kind": "IngressClass", "spec": {"controller": "nginx"}}, "spec.controller"),
    ("networking.k8s.io", "networkpolicies", True,
     {"kind": "NetworkPolicy", "spec": {"podSelector": {"matchLabels": {"app": "db"}}}},
     {"kind": "NetworkPolicy", "spec": {"podSelector": {}, "policyTypes": ["Sideways"]}}, "spec.policyTypes[0]"),
    ("storage.k8s.io", "storageclasses", False,
     {"kind": "StorageClass", "provisioner": "example.com/fast"},
     {"kind": "StorageClass", "provisioner": "example.com/fast", "reclaimPolicy": "Recycle"}, "reclaimPolicy"),
    ("storage.k8s.io", "csidrivers", False,
     {"kind": "CSIDriver", "spec": {}},
     {"kind": "CSIDriver", "spec": {"fsGroupPolicy": "Sometimes"}}, "spec.fsGroupPolicy"),
    ("storage.k8s.io", "csinodes", False,
     {"kind": "CSINode", "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1"}]}},
     {"kind": "CSINode", "spec": {"drivers": [{"name": "csi.example.com"}]}}, "spec.drivers[0].nodeID"),
    ("storage.k8s.io", "csistoragecapacities", True,
     {"kind": "CSIStorageCapacity", "storageClassName": "fast", "capacity": "10Gi"},
     {"kind": "CSIStorageCapacity", "capacity": "10Gi"}, "storageClassName"),
    ("storage.k8s.io", "volumeattachments", False,
     {"kind": "VolumeAttachment", "spec": {"attacher": "csi.example.com", "nodeName": "n1",
                                           "source": {"persistentVolumeName": "pv1"}}},
     {"kind": "VolumeAttachment", "spec": {"attacher": "csi.example.com", "source": {"persistentVolumeName": "p"}}},
     "spec.nodeName"),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations", False,
     {"kind": "ValidatingWebhookConfiguration", "webhooks": [{
         "name": "check.example.com", "clientConfig": {"url": "https://hook.example.com/check"},
         "sideEffects": "None", "admissionReviewVersions": ["v1"]}]},
     {"kind": "ValidatingWebhookConfiguration", "webhooks": [{
         "name": "check.example.com", "clientConfig": {"url": "https://hook.example.com/check"},
         "admissionReviewVersions": ["v1"]}]}, "webhooks[0].sideEffects"),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", False,
     {"kind": "MutatingWebhookConfiguration", "webhooks": [{
         "name": "mutate.example.com", "clientConfig": {"service": {"namespace": "default", "name": "hook"}},
         "sideEffects": "None", "admissionReviewVersions": ["v1"]}]},
     {"kind": "MutatingWebhookConfiguration", "webhooks": [{
         "name": "mutate.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"]}]},
     "webhooks[0].clientConfig"),
    ("admissionregistration.k8s.io", "validatingadmissionpolicies", False,
     {"kind": "ValidatingAdmissionPolicy", "spec": {
         "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                 "operations": ["CREATE"], "resources": ["deployments"]}]},
         "validations": [{"expression": "object.spec.replicas <= 5"}]}},
     {"kind": "ValidatingAdmissionPolicy", "spec": {"validations": [{"expression": "true"}]}},
     "spec.matchConstraints"),
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings", False,
     {"kind": "ValidatingAdmissionPolicyBinding", "spec": {"policyName": "p", "validationActions": ["Deny"]}},
     {"kind": "ValidatingAdmissionPolicyBinding", "spec": {"policyName": "p"}}, "spec.validationActions"),
]


@pytest.mark.parametrize(("group", "resource", "namespaced", "good", "bad", "field"), CASES,
                         ids=[c[1] for c in CASES])
def test_group_kind_crud_watch_and_validation(http: httpx.Client, ns: str, group: str, resource: str,
                                              namespaced: bool, good: dict[str, Any], bad: dict[str, Any],
                                              field: str) -> None:
    namespace = ns if namespaced else None
    name = f"x{uuid.uuid4().hex[:8]}"
    # discovery lists the resource
    disc = http.get(f"/apis/{group}/v1").json()
    assert resource in {r["name"] for r in disc["resources"]}
    # watch from now, then create/get/list/delete
    rv = http.get(_path(group, resource, namespace)).json()["metadata"]["resourceVersion"]
    events: list[dict[str, Any]] = []
    done = threading.Event()

    def watch() -> None:
        with http.stream("GET", _path(group, resource, namespace),
                         params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "10"}) as r:
            for line in r.iter_lines():
                if line:
                    events.append(json.loads(line))
                    if len(events) == 2:
                        break
        done.set()

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    body = {"apiVersion": f"{group}/v1", **good, "metadata": {"name": name}}
    r = http.post(_path(group, resource, namespace), json=body)
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["kind"] == good["kind"] and created["metadata"]["name"] == name
    assert http.get(_path(group, resource, namespace, name)).json()["metadata"]["uid"] == created["metadata"]["uid"]
    assert name in {o["metadata"]["name"] for o in http.get(_path(group, resource, namespace)).json()["items"]}
    r = http.delete(_path(group, resource, namespace, name))
    assert r.status_code == 200, r.text
    assert http.get(_path(group, resource, namespace, name)).status_code == 404
    assert done.wait(15)
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]
    assert all(e["object"]["metadata"]["name"] == name for e in events)
    # the invalid object: 422 with the field path upstream reports
    r = http.post(_path(group, resource, namespace), json={"apiVersion": f"{group}/v1", **bad,
                                                           "metadata": {"name": name + "b"}})
    assert r.status_code == 422, r.text
    status = r.json()
    assert status["reason"] == "Invalid"
    assert field in [c["field"] for c in status["details"]["causes"]], status


@pytest.mark.parametrize(("group", "resource", "returns_object"), [
    ("storage.k8s.io", "storageclasses", True),
    ("storage.k8s.io", "csidrivers", True),
    ("rbac.authorization.k8s.io", "clusterroles", False),
])
def test_delete_answer_follows_upstream_storage(http: httpx.Client, group: str, resource: str,
                                                returns_object: bool) -> None:
    name = f"d{uuid.uuid4().hex[:8]}"
    body = {"storageclasses": {"kind": "StorageClass", "provisioner": "example.com/p"},
            "csidrivers": {"kind": "CSIDriver", "spec": {}},
            "clusterroles": {"kind": "ClusterRole", "rules": []}}[resource]
    http.post(_path(group, resource), json={"apiVersion": f"{group}/v1", **body,
                                            "metadata": {"name": name}}).raise_for_status()
    out = http.delete(_path(group, resource, name=name)).json()
    if returns_object:
        assert out["kind"] == body["kind"] and out["metadata"]["name"] == name
    else:
        assert out["kind"] == "Status" and out["status"] == "Success"


def test_rolebinding_roleref_is_immutable(http: httpx.Client, ns: str) -> None:
    base = _path("rbac.authorization.k8s.io", "rolebindings", ns)
    rb = http.post(base, json={"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                               "metadata": {"name": "rb"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
                               "subjects": [{"kind": "Group", "name": "devs"}]}).json()
    # defaults: roleRef.apiGroup and the User/Group subject's apiGroup
    assert rb["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert rb["subjects"][0]["apiGroup"] == "rbac.authorization.k8s.io"
    rb["roleRef"]["name"] = "edit"
    r = http.put(f"{base}/rb", json=rb)
    assert r.status_code == 422
    assert r.json()["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "roleRef",
        "message": 'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", '
                   'Name:"edit"}: cannot change roleRef'}]


def test_bootstrap_cluster_roles_and_bindings(http: httpx.Client) -> None:
    roles = {o["metadata"]["name"]: o for o in http.get(_path("rbac.authorization.k8s.io", "clusterroles")).json()["items"]}
    for name in ("cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user",
                 "system:public-info-viewer", "system:node"):
        assert name in roles
    assert roles["cluster-admin"]["rules"][0] == {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
    assert roles["view"]["aggregationRule"]["clusterRoleSelectors"] == [
        {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}]
    crb = http.get(_path("rbac.authorization.k8s.io", "clusterrolebindings", name="cluster-admin")).json()
    assert crb["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}]
    # kube-apiserver's controller roles, each bound to its controller's ServiceAccount, and the
    # Roles of kube-system / kube-public
    assert sum(1 for n in roles if n.startswith("system:controller:")) == 35
    crb = http.get(_path("rbac.authorization.k8s.io", "clusterrolebindings",
                         name="system:controller:job-controller")).json()
    assert crb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                              "name": "system:controller:job-controller"}
    assert crb["subjects"] == [{"kind": "ServiceAccount", "name": "job-controller", "namespace": "kube-system"}]
    ns_roles = http.get("/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles").json()["items"]
    assert [r["metadata"]["name"] for r in ns_roles] == [
        "extension-apiserver-authentication-reader", "system::leader-locking-kube-controller-manager",
        "system::leader-locking-kube-scheduler", "system:controller:bootstrap-signer",
        "system:controller:cloud-provider", "system:controller:token-cleaner"]
    rb = http.get("/apis/rbac.authorization.k8s.io/v1/namespaces/kube-public/rolebindings").json()["items"]
    assert [(b["metadata"]["name"], b["subjects"][0]["name"]) for b in rb] == [
        ("system:controller:bootstrap-signer", "bootstrap-signer")]


def test_local_apiservices(http: httpx.Client) -> None:
    items = {o["metadata"]["name"]: o for o in http.get(_path("apiregistration.k8s.io", "apiservices")).json()["items"]}
    for name in ("v1.", "v1.apps", "v1.rbac.authorization.k8s.io", "v1.storage.k8s.io", "v1.networking.k8s.io"):
        assert name in items
        assert "service" not in items[name]["spec"]
        cond = items[name]["status"]["conditions"][0]
        assert (cond["type"], cond["status"], cond["reason"]) == ("Available", "True", "Local")
    r = http.post(_path("apiregistration.k8s.io", "apiservices"), json={
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1.wrong"},
        "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
                 "versionPriority": 100}})
    assert r.status_code == 422
    assert [c["field"] for c in r.json()["details"]["causes"]] == ["metadata.name"]


def test_apiservices_of_metrics_and_of_custom_resources(http: httpx.Client) -> None:
    """v1beta1.metrics.k8s.io is registered (served Local here, metrics-server's priorities), the
    bootstrap CRDs' group-versions are, and a CRD's served versions get automanaged APIServices
    that follow its `served` flags and go with it; one a user made is never touched."""
    base = _path("apiregistration.k8s.io", "apiservices")

    def names() -> dict[str, Any]:
        return {o["metadata"]["name"]: o for o in http.get(base).json()["items"]}

    items = names()
    metrics = items["v1beta1.metrics.k8s.io"]
    assert (metrics["spec"]["groupPriorityMinimum"], metrics["spec"]["versionPriority"]) == (100, 100)
    assert metrics["status"]["conditions"][0]["reason"] == "Local"
    assert "v1beta1.scheduling.volcano.sh" in items and "v1alpha1.scheduling.x-k8s.io" in items
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    crd: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema},
                              {"name": "v1beta1", "served": True, "storage": False, "schema": schema}]}}
    # a user's own APIService for a version the CRD will not serve: left alone throughout
    mine = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": f"v2.{group}"},
            "spec": {"group": group, "version": "v2", "groupPriorityMinimum": 10, "versionPriority": 10}}
    assert http.post(base, json=mine).status_code == 201
    r = http.post(_path("apiextensions.k8s.io", "customresourcedefinitions"), json=crd)
    assert r.status_code == 201, r.text
    items = names()
    for version in ("v1", "v1beta1"):
        svc = items[f"{version}.{group}"]
        assert svc["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "true"}
        assert svc["spec"] == {"group": group, "version": version, "groupPriorityMinimum": 1000,
                               "versionPriority": 100}
        cond = svc["status"]["conditions"][0]
        assert (cond["type"], cond["status"], cond["reason"]) == ("Available", "True", "Local")
    crd_path = _path("apiextensions.k8s.io", "customresourcedefinitions", name=f"widgets.{group}")
    live = http.get(crd_path).json()
    live["spec"]["versions"][1]["served"] = False
    assert http.put(crd_path, json=live).status_code == 200
    items = names()
    assert f"v1.{group}" in items and f"v1beta1.{group}" not in items and f"v2.{group}" in items
    assert http.delete(crd_path).status_code == 200
    items = names()
    assert f"v1.{group}" not in items and f"v2.{group}" in items


def test_csr_approval_subresource(http: httpx.Client) -> None:
    pem = ("-----BEGIN CERTIFICATE REQUEST-----\n" + base64.b64encode(b"\x30\x03\x02\x01\x00").decode()
           + "\n-----END CERTIFICATE REQUEST-----\n")
    base = _path("certificates.k8s.io", "certificatesigningrequests")
    r = http.post(base, json={"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                              "metadata": {"name": "c1"},
                              "spec": {"request": base64.b64encode(pem.encode()).decode(),
                                       "signerName": "example.com/signer", "usages": ["client auth"]}})
    assert r.status_code == 201, r.text
    csr = r.json()
    # the requester's identity (plain loopback: the admin), whatever the body says
    assert (csr["spec"]["username"], csr["spec"]["groups"]) == ("system:admin", ["system:masters", "system:authenticated"])
    r = http.post(base, headers={"Impersonate-User": "carol", "Impersonate-Group": "team"},
                  json={"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                        "metadata": {"name": "c2"},
                        "spec": {"request": base64.b64encode(pem.encode()).decode(), "username": "mallory",
                                 "signerName": "example.com/signer", "usages": ["client auth"]}})
    # carol may not create CSRs (403) -- impersonating the admin's group lets the write through
    assert r.status_code == 403, r.text
    r = http.post(base, headers={"Impersonate-User": "carol", "Impersonate-Group": "system:masters"},
                  json={"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                        "metadata": {"name": "c2"},
                        "spec": {"request": base64.b64encode(pem.encode()).decode(), "username": "mallory",
                                 "signerName": "example.com/signer", "usages": ["client auth"]}})
    assert r.status_code == 201, r.text
    assert (r.json()["spec"]["username"], r.json()["spec"]["groups"]) == ("carol", ["system:masters",
                                                                              "system:authenticated"])
    csr["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "Test"}]}
    csr["spec"]["signerName"] = "example.com/other"  # ignored by /approval
    r = http.put(f"{base}/c1/approval", json=csr)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["status"]["conditions"][0]["type"] == "Approved"
    assert out["spec"]["signerName"] == "example.com/signer"
    out["status"]["conditions"].append({"type": "Denied", "status": "True"})
    r = http.put(f"{base}/c1/approval", json=out)
    assert r.status_code == 422
    assert "mutually exclusive" in r.text
    bad = http.post(base, json={"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                                "metadata": {"name": "c2"},
                                "spec": {"request": base64.b64encode(b"nope").decode(),
                                         "signerName": "example.com/signer", "usages": ["client auth"]}})
    assert bad.status_code == 422
    assert [c["field"] for c in bad.json()["details"]["causes"]] == ["spec.request"]


def test_token_request_over_http(http: httpx.Client, ns: str) -> None:
    http.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "bot"}}).raise_for_status()
    r = http.post(f"/api/v1/namespaces/{ns}/serviceaccounts/bot/token",
                  json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                        "spec": {"audiences": ["vault"], "expirationSeconds": 900}})
    assert r.status_code == 201, r.text
    tr = r.json()
    assert tr["kind"] == "TokenRequest" and tr["spec"]["audiences"] == ["vault"]
    claims = _claims(tr["status"]["token"])
    assert claims["sub"] == f"system:serviceaccount:{ns}:bot"
    assert claims["aud"] == ["vault"] and claims["exp"] - claims["iat"] == 900
    r = http.post(f"/api/v1/namespaces/{ns}/serviceaccounts/bot/token",
                  json={"kind": "TokenRequest", "spec": {"expirationSeconds": 60}})
    assert r.status_code == 422
    assert r.json()["details"]["causes"][0]["field"] == "spec.expirationSeconds"
    assert http.post(f"/api/v1/namespaces/{ns}/serviceaccounts/nobody/token",
                     json={"kind": "TokenRequest"}).status_code == 404


def _claims(token: str) -> dict[str, Any]:
    head, body, sig = token.split(".")
    assert json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))["alg"] == "RS256"
    assert sig
    return dict(json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))))


# ---- kubectl ----------------------------------------------------------------------------------


def test_kubectl_tables_token_and_rbac_commands(kubectl_bin: Path, minik3s_api: ServerProcess, ns: str,
                                                tmp_path: Path) -> None:
    def k(*args: str, ok: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return kubectl(kubectl_bin, minik3s_api, tmp_path / "c", *args, ok=ok, stdin=stdin)

    k("-n", ns, "create", "serviceaccount", "robot")
    token = k("-n", ns, "create", "token", "robot", "--audience", "api", "--duration", "20m").stdout.strip()
    claims = _claims(token)
    assert claims["aud"] == ["api"] and claims["exp"] - claims["iat"] == 1200
    assert claims["kubernetes.io"]["serviceaccount"]["name"] == "robot"

    k("-n", ns, "create", "rolebinding", "rb", "--clusterrole", "view", "--user", "bob",
      "--serviceaccount", f"{ns}:robot")
    lines = k("-n", ns, "get", "rolebinding", "rb", "-o", "wide").stdout.splitlines()
    assert lines[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert lines[1].split()[:2] == ["rb", "ClusterRole/view"]
    assert lines[1].split()[-2:] == ["bob", f"{ns}/robot"]
    k("-n", ns, "create", "role", "reader", "--verb", "get,list", "--resource", "pods")
    assert k("-n", ns, "get", "role", "reader").stdout.split()[:4] == ["NAME", "CREATED", "AT", "reader"]
    r = k("-n", ns, "create", "rolebinding", "bad", "--role", "reader", "--serviceaccount", "nocolon", ok=False)
    assert r.returncode != 0

    k("-n", ns, "create", "ingress", "web", "--rule", "foo.example.com/api*=svc:8080")
    assert k("-n", ns, "get", "ingress").stdout.splitlines()[1].split()[:4] == ["web", "<none>", "foo.example.com", "80"]
    k("apply", "-f", "-", stdin="apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: gold\n"
                               "  annotations:\n    storageclass.kubernetes.io/is-default-class: \"true\"\n"
                               "provisioner: example.com/gold\nallowVolumeExpansion: true\n")
    row = [ln for ln in k("get", "sc").stdout.splitlines() if ln.startswith("gold")][0].split()
    assert row[:6] == ["gold", "(default)", "example.com/gold", "Delete", "Immediate", "true"]
    r = k("apply", "-f", "-", ok=False,
          stdin="apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: gold2\nprovisioner: ''\n")
    assert 'The StorageClass "gold2" is invalid: provisioner: Required value' in r.stderr
    lines = k("get", "apiservices").stdout.splitlines()
    assert lines[0].split() == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    assert any(ln.split()[:3] == ["v1.apps", "Local", "True"] for ln in lines)
    names = k("get", "clusterroles", "-o", "name").stdout.split()
    assert "clusterrole.rbac.authorization.k8s.io/cluster-admin" in names


def test_kubectl_exec_gets_a_clear_error(kubectl_bin: Path, minik3s_api: ServerProcess, ns: str,
                                         tmp_path: Path, http: httpx.Client) -> None:
    def pod(name: str, spec: dict[str, Any]) -> None:
        http.post(f"/api/v1/namespaces/{ns}/pods", json={"metadata": {"name": name}, "spec": spec}).raise_for_status()

    pod("p", {"nodeName": "somewhere", "containers": [{"name": "c", "image": "busybox"}]})
    pod("two", {"nodeName": "somewhere", "initContainers": [{"name": "init", "image": "busybox"}],
                "containers": [{"name": "a", "image": "busybox"}, {"name": "b", "image": "busybox"}]})
    pod("unsched", {"schedulerName": "nobody", "containers": [{"name": "c", "image": "busybox"}]})
    # exec reaches the node (GetConnectionInfo): this one does not exist
    r = kubectl(kubectl_bin, minik3s_api, tmp_path / "c", "-n", ns, "exec", "p", "--", "ls", ok=False)
    assert r.returncode != 0
    assert r.stderr == 'Error from server (NotFound): nodes "somewhere" not found\n'
    for sub in ("exec", "attach", "portforward"):
        for method in ("GET", "POST"):
            resp = http.request(method, f"/api/v1/namespaces/{ns}/pods/p/{sub}",
                                params={"command": "ls", "stdout": "1", "ports": "80"})
            assert (resp.status_code, resp.json()["message"]) == (404, 'nodes "somewhere" not found')
        assert http.post(f"/api/v1/namespaces/{ns}/pods/missing/{sub}").status_code == 404
        # upstream's own checks come first (streamLocation / portForwardLocation)
        resp = http.post(f"/api/v1/namespaces/{ns}/pods/unsched/{sub}")
        assert (resp.status_code, resp.json()["message"]) == (400, "pod unsched does not have a host assigned")
    for sub in ("exec", "attach"):
        resp = http.post(f"/api/v1/namespaces/{ns}/pods/two/{sub}", params={"command": "ls"})
        assert (resp.status_code, resp.json()["message"]) == (
            400, "a container name must be specified for pod two, choose one of: [a b] or one of the init "
                 "containers: [init]")
        resp = http.post(f"/api/v1/namespaces/{ns}/pods/two/{sub}", params={"container": "nope"})
        assert (resp.status_code, resp.json()["message"]) == (400, "container nope is not valid for pod two")
        resp = http.post(f"/api/v1/namespaces/{ns}/pods/two/{sub}", params={"container": "init"})
        assert (resp.status_code, resp.json()["message"]) == (404, 'nodes "somewhere" not found')
    r = kubectl(kubectl_bin, minik3s_api, tmp_path / "c", "-n", ns, "exec", "two", "-c", "nope", "--", "ls", ok=False)
    assert "container nope is not valid for pod two" in r.stderr
    subs = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}
    assert subs["pods/exec"]["kind"] == "PodExecOptions" and subs["pods/exec"]["verbs"] == ["create", "get"]
    assert subs["serviceaccounts/token"]["kind"] == "TokenRequest"


# ---- wire defects ------------------------------------------------------------------------------


def test_status_bodies_in_go_field_order_with_trailing_newline(http: httpx.Client) -> None:
    r = http.get("/api/v1/namespaces/default/pods/does-not-exist")
    assert r.status_code == 404
    assert r.content.endswith(b"}\n")
    assert list(json.loads(r.content)) == ["kind", "apiVersion", "metadata", "status", "message", "reason",
                                           "details", "code"]
    # success bodies too: every JSON response ends with the encoder's newline (not /version,
    # which WriteRawJSON writes with json.MarshalIndent and no newline)
    for path in ("/api/v1/namespaces/default", "/api/v1/namespaces", "/apis"):
        assert http.get(path).content.endswith(b"\n"), path
    assert http.get("/version").content.endswith(b"}")


def test_openapi_v2_protobuf_accept_is_negotiated(http: httpx.Client) -> None:
    pb = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
    r = http.get("/openapi/v2", headers={"Accept": pb})
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert r.content[:5] == b"\x0a\x032.0"  # Document.swagger (field 1) = "2.0"
    assert b"x-kubernetes-group-version-kind" in r.content and b"io.k8s.api.rbac.v1.RoleBinding" in r.content
    ok = http.get("/openapi/v2", headers={"Accept": "application/json"})
    assert ok.status_code == 200 and ok.json()["swagger"] == "2.0"
    assert http.get("/openapi/v2", headers={"Accept": f"{pb};q=0.5, application/json"}).json()["swagger"] == "2.0"
    assert http.get("/openapi/v2", headers={"Accept": "text/html"}).status_code == 406
    v3 = http.get("/openapi/v3/apis/rbac.authorization.k8s.io/v1").json()
    assert "io.k8s.api.rbac.v1.RoleBinding" in v3["components"]["schemas"]


def test_kubectl_apply_of_an_unknown_kind_says_no_matches(kubectl_bin: Path, minik3s_api: ServerProcess,
                                                          tmp_path: Path) -> None:
    """kubectl validates a kind missing from /openapi/v3 against the protobuf /openapi/v2."""
    r = kubectl(kubectl_bin, minik3s_api, tmp_path / "c", "apply", "-f", "-", ok=False,
                stdin="apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n")
    assert r.returncode != 0
    assert 'no matches for kind "Widget" in version "example.com/v1"' in r.stderr, r.stderr


POD_TEMPLATE = """apiVersion: v1
kind: PodTemplate
metadata:
  name: tmpl
template:
  metadata:
    labels: {app: web, tier: front}
  spec:
    containers:
    - {name: web, image: nginx:1.27}
    - {name: side, image: busybox}
"""


def test_pod_templates_are_served_validated_and_printed(kubectl_bin: Path, minik3s_api: ServerProcess, ns: str,
                                                        tmp_path: Path, http: httpx.Client) -> None:
    def k(*args: str, ok: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return kubectl(kubectl_bin, minik3s_api, tmp_path / "c", *args, ok=ok, stdin=stdin)

    assert "podtemplates" in {r["name"] for r in http.get("/api/v1").json()["resources"]}
    k("-n", ns, "apply", "-f", "-", stdin=POD_TEMPLATE)
    lines = k("-n", ns, "get", "podtemplates").stdout.splitlines()
    assert lines[0].split() == ["NAME", "CONTAINERS", "IMAGES", "POD", "LABELS"]
    assert lines[1].split() == ["tmpl", "web,side", "nginx:1.27,busybox", "app=web,tier=front"]
    got = http.get(f"/api/v1/namespaces/{ns}/podtemplates/tmpl").json()
    assert got["metadata"]["generation"] == 1
    spec = got["template"]["spec"]  # defaulted as a pod's spec
    assert (spec["restartPolicy"], spec["dnsPolicy"], spec["containers"][0]["imagePullPolicy"]) == \
        ("Always", "ClusterFirst", "IfNotPresent")
    k("-n", ns, "apply", "-f", "-", stdin=POD_TEMPLATE.replace("nginx:1.27", "nginx:1.28"))
    assert http.get(f"/api/v1/namespaces/{ns}/podtemplates/tmpl").json()["metadata"]["generation"] == 2
    k("-n", ns, "label", "podtemplate", "tmpl", "x=y")  # metadata only: the generation stays
    assert http.get(f"/api/v1/namespaces/{ns}/podtemplates/tmpl").json()["metadata"]["generation"] == 2
    r = http.post(f"/api/v1/namespaces/{ns}/podtemplates", json={
        "kind": "PodTemplate", "apiVersion": "v1", "metadata": {"name": "bad"},
        "template": {"spec": {"containers": [{"name": "c"}], "ephemeralContainers": [
            {"name": "dbg", "image": "busybox"}]}}})
    assert r.status_code == 422
    fields = {(c["field"], c["reason"]) for c in r.json()["details"]["causes"]}
    assert ("template.spec.containers[0].image", "FieldValueRequired") in fields
    assert ("template.spec.ephemeralContainers", "FieldValueForbidden") in fields
    k("-n", ns, "delete", "podtemplate", "tmpl")
    assert http.get(f"/api/v1/namespaces/{ns}/podtemplates/tmpl").status_code == 404


def test_componentstatuses_answer_like_kube_apiserver(kubectl_bin: Path, minik3s_api: ServerProcess,
                                                       tmp_path: Path, http: httpx.Client) -> None:
    def k(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        return kubectl(kubectl_bin, minik3s_api, tmp_path / "c", *args, ok=ok)

    # this server runs the API alone: the scheduler and the controllers do not answer their probes
    r = k("get", "cs")
    assert "Warning: v1 ComponentStatus is deprecated in v1.19+" in r.stderr
    rows = [ln.rstrip().split(None, 2) for ln in r.stdout.splitlines()]
    assert rows[0] == ["NAME", "STATUS", "MESSAGE   ERROR"]
    assert {row[0]: row[1:] for row in rows[1:]} == {
        "scheduler": ["Unhealthy", 'Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: '
                                   "connection refused"],
        "controller-manager": ["Unhealthy", 'Get "https://127.0.0.1:10257/healthz": dial tcp 127.0.0.1:10257: '
                                            "connect: connection refused"],
        "etcd-0": ["Healthy", "ok"]}
    one = http.get("/api/v1/componentstatuses/etcd-0")
    assert one.headers["Warning"] == '299 - "v1 ComponentStatus is deprecated in v1.19+"'
    assert one.json() == {"kind": "ComponentStatus", "apiVersion": "v1",
                          "metadata": {"name": "etcd-0", "creationTimestamp": None},
                          "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}
    listed = http.get("/api/v1/componentstatuses").json()
    assert (listed["kind"], listed["metadata"], len(listed["items"])) == ("ComponentStatusList", {}, 3)
    assert http.get("/api/v1/componentstatuses/nope").json()["message"] == \
        "Internal error occurred: Component not found: nope"
    assert http.delete("/api/v1/componentstatuses/etcd-0").status_code == 405
    assert http.post("/api/v1/componentstatuses", json={"metadata": {"name": "x"}}).status_code == 405
    cs = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}["componentstatuses"]
    assert (cs["verbs"], cs["shortNames"], cs["namespaced"]) == (["get", "list"], ["cs"], False)
