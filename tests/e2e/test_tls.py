"""A `minik3s server --tls` process reached as users reach it: kubectl and the official
`kubernetes` client with nothing but the written kubeconfig, httpx with and without
credentials. Every request is authenticated (client certificate, static token, service-account
token); anonymous requests reach only health and version; the data dir is private."""

from __future__ import annotations

import base64
import json
import os
import ssl
import stat
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from cryptography.hazmat.primitives import serialization

from minik3s.pki import issue
from minik3s.testing.pytest_plugin import API_ONLY
from minik3s.testing.server import ServerProcess

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, config, watch  # noqa: E402

SAN = "api.minik3s.test"
ALICE_TOKEN = "alice-" + uuid.uuid4().hex
# kube-apiserver's answer to an unauthenticated request, byte for byte
UNAUTHORIZED = (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized",'
                b'"reason":"Unauthorized","code":401}\n')


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("tls")
    tokens = tmp / "tokens.csv"
    tokens.write_text(f'{ALICE_TOKEN},alice,uid-alice,"dev,ops"\n')
    s = ServerProcess(tmp / "data", nodes=0, tls=True,
                      args=[*API_ONLY, "--tls-san", SAN, "--token-auth-file", str(tokens)])
    s.start()
    yield s
    s.stop()


def _ctx(srv: ServerProcess, *, admin: bool) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(srv.ca_path))
    if admin:
        ctx.load_cert_chain(*srv.admin_cert)
    return ctx


@pytest.fixture(scope="module")
def admin(srv: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=srv.url, verify=_ctx(srv, admin=True), timeout=30) as c:
        yield c


@pytest.fixture(scope="module")
def anon(srv: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=srv.url, verify=_ctx(srv, admin=False), timeout=30) as c:
        yield c


def _token(admin: httpx.Client, ns: str, sa: str) -> str:
    r = admin.post(f"/api/v1/namespaces/{ns}/serviceaccounts/{sa}/token", json={"kind": "TokenRequest"})
    assert r.status_code == 201, r.text
    return str(r.json()["status"]["token"])


def _ns(admin: httpx.Client) -> str:
    name = "tls-" + uuid.uuid4().hex[:8]
    admin.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    return name


def test_kubeconfig_carries_the_ca_and_the_admin_certificate(srv: ServerProcess) -> None:
    assert srv.url.startswith("https://127.0.0.1:")
    doc = yaml.safe_load(srv.kubeconfig.read_text())
    cluster, user = doc["clusters"][0]["cluster"], doc["users"][0]["user"]
    assert cluster["server"] == srv.url
    assert base64.b64decode(cluster["certificate-authority-data"]) == srv.ca_path.read_bytes()
    assert base64.b64decode(user["client-certificate-data"]) == srv.admin_cert[0].read_bytes()
    assert base64.b64decode(user["client-key-data"]) == srv.admin_cert[1].read_bytes()


def test_kubectl_works_with_only_the_written_kubeconfig(srv: ServerProcess, kubectl_bin: Path, tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "KUBECONFIG": str(srv.kubeconfig)}

    def k(*args: str, stdin: str | None = None) -> str:
        r = subprocess.run([str(kubectl_bin), *args], input=stdin, capture_output=True, text=True, env=env,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout

    ns = "kc-" + uuid.uuid4().hex[:8]
    k("create", "namespace", ns)
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": ns},
                "data": {"a": "1"}}
    assert "configmap/cfg created" in k("apply", "-f", "-", stdin=json.dumps(manifest))
    manifest["data"] = {"a": "2"}
    assert "configmap/cfg configured" in k("apply", "-f", "-", stdin=json.dumps(manifest))
    got = json.loads(k("-n", ns, "get", "configmap", "cfg", "-o", "json"))
    assert got["data"] == {"a": "2"}
    assert "cfg" in k("-n", ns, "get", "configmaps")


def test_official_client_crud_and_watch_with_only_the_kubeconfig(srv: ServerProcess) -> None:
    api = config.new_client_from_config(config_file=str(srv.kubeconfig))
    try:
        core = client.CoreV1Api(api)
        ns = "py-" + uuid.uuid4().hex[:8]
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
        core.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c1"),
                                                                 data={"k": "v"}))
        listed = core.list_namespaced_config_map(ns)
        assert [c.metadata.name for c in listed.items] == ["c1"]
        events = []
        for ev in watch.Watch().stream(core.list_namespaced_config_map, ns, timeout_seconds=5,
                                       resource_version="0"):
            events.append((ev["type"], ev["object"].metadata.name))
            break
        assert events == [("ADDED", "c1")]
    finally:
        api.close()


def test_no_credentials_is_401_except_health_and_version(anon: httpx.Client) -> None:
    for path in ("/api/v1/namespaces", "/api", "/apis", "/", "/openapi/v2", "/metrics",
                 "/api/v1/namespaces/default/pods"):
        r = anon.get(path)
        assert (r.status_code, r.content) == (401, UNAUTHORIZED), path
    assert anon.post("/api/v1/namespaces", json={"metadata": {"name": "x"}}).status_code == 401
    for path in ("/healthz", "/livez", "/readyz"):
        assert anon.get(path).text == "ok"
    assert anon.get("/version").json()["major"] == "1"


def test_a_made_up_method_is_authenticated_before_it_is_routed(anon: httpx.Client, admin: httpx.Client) -> None:
    """`FOO` reaches the handler chain like any method (Go parses any token): no credentials is
    401, the admin gets the route-selection 405."""
    r = anon.request("FOO", "/api/v1/namespaces/default/pods")
    assert (r.status_code, r.json()["reason"]) == (401, "Unauthorized")
    r = admin.request("FOO", "/api/v1/namespaces/default/pods")
    assert (r.status_code, r.json()["reason"], r.json()["details"]) == (405, "MethodNotAllowed", {})


def test_bad_and_unknown_tokens_are_401_not_anonymous(anon: httpx.Client) -> None:
    for value in ("Bearer nope", "Bearer a.b.c", f"Bearer {ALICE_TOKEN}x"):
        r = anon.get("/api/v1/namespaces", headers={"Authorization": value})
        assert (r.status_code, r.content) == (401, UNAUTHORIZED), value
    # a rejected token is rejected on public paths too (upstream fails the request, no fallback)
    assert anon.get("/healthz", headers={"Authorization": "Bearer nope"}).status_code == 401


def test_static_tokens_authenticate(srv: ServerProcess, anon: httpx.Client, admin: httpx.Client) -> None:
    admin_token = srv.data_dir.joinpath("server", "cred", "admin-token.csv").read_text().split(",")[0]
    r = anon.get("/api/v1/namespaces", headers={"Authorization": f"Bearer {admin_token}"})
    assert r.status_code == 200, r.text
    # alice is authenticated (RBAC then refuses her: she is bound to nothing) ...
    r = anon.get("/api/v1/namespaces", headers={"Authorization": f"Bearer {ALICE_TOKEN}"})
    assert r.status_code == 403, r.text
    assert r.json()["message"] == ('namespaces is forbidden: User "alice" cannot list resource "namespaces" '
                                   'in API group "" at the cluster scope')
    # ... and whoami (system:basic-user, granted to system:authenticated) names her
    who = anon.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", headers={"Authorization": f"Bearer {ALICE_TOKEN}"},
                    json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert who.status_code == 201, who.text
    assert who.json()["status"]["userInfo"] == {"username": "alice", "uid": "uid-alice",
                                                "groups": ["dev", "ops", "system:authenticated"]}
    review = admin.post("/apis/authentication.k8s.io/v1/tokenreviews",
                        json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                              "spec": {"token": ALICE_TOKEN}})
    assert review.status_code == 201
    assert review.json()["status"] == {
        "authenticated": True, "audiences": ["https://kubernetes.default.svc.cluster.local", "k3s"],
        "user": {"username": "alice", "uid": "uid-alice", "groups": ["dev", "ops", "system:authenticated"]}}


def test_service_account_token_authenticates_until_the_account_is_deleted(anon: httpx.Client,
                                                                           admin: httpx.Client) -> None:
    ns = _ns(admin)
    sa = admin.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "bot"}}).json()
    token = _token(admin, ns, "bot")
    auth = {"Authorization": f"Bearer {token}"}
    # authenticated, bound to nothing: RBAC refuses (403, not 401)
    r = anon.get(f"/api/v1/namespaces/{ns}/pods", headers=auth)
    assert r.status_code == 403, r.text
    assert r.json()["message"] == (f'pods is forbidden: User "system:serviceaccount:{ns}:bot" cannot list '
                                   f'resource "pods" in API group "" in the namespace "{ns}"')
    # a Role that allows get pods: the token can get but not delete (upstream's message)
    admin.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", json={
        "metadata": {"name": "pod-reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}).raise_for_status()
    admin.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", json={
        "metadata": {"name": "bot-reads"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                                       "name": "pod-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "bot", "namespace": ns}]}).raise_for_status()
    admin.post(f"/api/v1/namespaces/{ns}/pods", json={
        "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}).raise_for_status()
    assert anon.get(f"/api/v1/namespaces/{ns}/pods/p", headers=auth).status_code == 200
    r = anon.delete(f"/api/v1/namespaces/{ns}/pods/p", headers=auth)
    assert r.status_code == 403, r.text
    assert r.json()["message"] == (f'pods "p" is forbidden: User "system:serviceaccount:{ns}:bot" cannot delete '
                                   f'resource "pods" in API group "" in the namespace "{ns}"')
    assert admin.get(f"/api/v1/namespaces/{ns}/pods/p").status_code == 200
    review = admin.post("/apis/authentication.k8s.io/v1/tokenreviews", json={"spec": {"token": token}}).json()
    assert review["status"]["authenticated"] is True
    user = review["status"]["user"]
    assert (user["username"], user["uid"]) == (f"system:serviceaccount:{ns}:bot", sa["metadata"]["uid"])
    assert user["groups"] == ["system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"]
    admin.delete(f"/api/v1/namespaces/{ns}/serviceaccounts/bot").raise_for_status()
    r = anon.get(f"/api/v1/namespaces/{ns}/serviceaccounts", headers=auth)
    assert (r.status_code, r.content) == (401, UNAUTHORIZED)
    review = admin.post("/apis/authentication.k8s.io/v1/tokenreviews", json={"spec": {"token": token}}).json()
    assert review["status"] == {"user": {}, "authenticated": False,
                                "error": '[invalid bearer token, serviceaccounts "bot" not found]'}


@pytest.mark.parametrize(("body", "message"), [
    pytest.param({"spec": {}}, "token is required for TokenReview in authentication", id="no-token"),
    pytest.param({"spec": {"token": 5}}, "spec.token must be a string", id="token-not-a-string"),
    pytest.param({"spec": {"token": "x", "audiences": "api"}}, "spec.audiences must be a list of strings",
                 id="audiences-not-a-list"),
])
def test_token_review_bad_input_is_400(admin: httpx.Client, body: dict[str, Any], message: str) -> None:
    r = admin.post("/apis/authentication.k8s.io/v1/tokenreviews", json=body)
    assert r.status_code == 400 and r.json()["message"] == message


def test_a_client_certificate_from_another_ca_fails_the_handshake(srv: ServerProcess, tmp_path: Path) -> None:
    from minik3s.pki import _make_ca  # a CA of another cluster
    from minik3s.utils.clock import Clock

    now = Clock().now()
    cert, key = issue(_make_ca("other-ca", now), cn="system:admin", orgs=("system:masters",), now=now, client=True)
    (tmp_path / "c.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "c.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))
    ctx = _ctx(srv, admin=False)
    ctx.load_cert_chain(tmp_path / "c.crt", tmp_path / "c.key")
    with httpx.Client(base_url=srv.url, verify=ctx, timeout=10) as c:
        with pytest.raises(httpx.TransportError):  # refused in the handshake, never an HTTP answer
            c.get("/api/v1/namespaces")


def test_plain_http_to_the_tls_port_gets_nothing(srv: ServerProcess) -> None:
    with pytest.raises(httpx.TransportError):
        httpx.get(srv.url.replace("https://", "http://") + "/api/v1/namespaces", timeout=10)


def test_browser_guard_accepts_the_certificates_names_only(admin: httpx.Client) -> None:
    assert admin.get("/api", headers={"Host": SAN}).status_code == 200
    assert admin.get("/api", headers={"Host": "localhost"}).status_code == 200
    r = admin.get("/api", headers={"Host": "evil.example"})
    assert r.status_code == 403 and "evil.example" in r.json()["message"]
    assert admin.get("/api", headers={"Origin": "https://evil.example"}).status_code == 403
    assert admin.get("/api", headers={"Origin": f"https://{SAN}"}).status_code == 200


def test_data_dir_and_every_secret_file_are_private(srv: ServerProcess) -> None:
    def mode(p: Path) -> int:
        return stat.S_IMODE(p.stat().st_mode)

    d = srv.data_dir
    assert mode(d) == 0o700
    for name in ("state.db", "state.db-wal", "state.db-shm", "kubeconfig.yaml"):
        assert mode(d / name) == 0o600, name
    for sub in ("server", "server/tls", "server/cred"):
        assert mode(d / sub) == 0o700, sub
    files = list((d / "server" / "tls").iterdir()) + list((d / "server" / "cred").iterdir())
    assert len(files) == 10
    for f in files:
        assert mode(f) == 0o600, f


def test_minik3s_cli_reaches_the_tls_server_with_the_kubeconfig(srv: ServerProcess, tmp_path: Path) -> None:
    import sys

    r = subprocess.run([sys.executable, "-m", "minik3s", "get", "namespaces", "--kubeconfig", str(srv.kubeconfig)],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "kube-system" in r.stdout
    broken = tmp_path / "no-creds.yaml"
    doc = yaml.safe_load(srv.kubeconfig.read_text())
    doc["users"][0]["user"] = {}
    broken.write_text(yaml.safe_dump(doc))
    r = subprocess.run([sys.executable, "-m", "minik3s", "get", "namespaces", "--kubeconfig", str(broken)],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode != 0 and "Unauthorized" in r.stderr
