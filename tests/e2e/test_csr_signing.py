"""The CertificateSigningRequest flow a cluster admin follows to give a person access, against
a `minik3s server --tls` with its controllers: the person makes a key and a PKCS#10 request
(CN = user, O = groups), the admin approves it (`kubectl certificate approve`), the csrsigning
controller issues the certificate from the client CA, and that certificate authenticates to the
server as the user, whom RBAC then governs."""

from __future__ import annotations

import base64
import ssl
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from minik3s.testing.server import ServerProcess
from minik3s.testing.wait import wait_for

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    s = ServerProcess(tmp_path_factory.mktemp("csr") / "data", nodes=0, tls=True,
                      args=["--disable", "scheduler", "--disable", "kubelet"])
    s.start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def admin(srv: ServerProcess) -> Iterator[httpx.Client]:
    ctx = ssl.create_default_context(cafile=str(srv.ca_path))
    ctx.load_cert_chain(*srv.admin_cert)
    with httpx.Client(base_url=srv.url, verify=ctx, timeout=30) as c:
        yield c


def _request(user: str, groups: list[str]) -> tuple[ec.EllipticCurvePrivateKey, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([*(x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups),
                         x509.NameAttribute(NameOID.COMMON_NAME, user)])
    csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return key, csr.public_bytes(serialization.Encoding.PEM)


def _submit(admin: httpx.Client, name: str, pem: bytes, usages: list[str], **spec: object) -> None:
    r = admin.post(CSRS, json={"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                               "metadata": {"name": name},
                               "spec": {"request": base64.b64encode(pem).decode(), "usages": usages,
                                        "signerName": "kubernetes.io/kube-apiserver-client", **spec}})
    assert r.status_code == 201, r.text


def _approve(admin: httpx.Client, name: str) -> None:
    csr = admin.get(f"{CSRS}/{name}").json()
    csr.setdefault("status", {})["conditions"] = [{"type": "Approved", "status": "True", "reason": "Test",
                                                  "message": "approved by the test"}]
    r = admin.put(f"{CSRS}/{name}/approval", json=csr)
    assert r.status_code == 200, r.text


def test_an_approved_request_gets_a_certificate_that_authenticates_its_user(
        srv: ServerProcess, admin: httpx.Client, tmp_path: Path) -> None:
    user = f"alice-{uuid.uuid4().hex[:6]}"
    key, pem = _request(user, ["devs", "qa"])
    _submit(admin, user, pem, ["digital signature", "key encipherment", "client auth"], expirationSeconds=3600)
    # not approved: nothing issued
    assert "certificate" not in (admin.get(f"{CSRS}/{user}").json().get("status") or {})
    _approve(admin, user)
    issued = wait_for(lambda: (admin.get(f"{CSRS}/{user}").json().get("status") or {}).get("certificate"),
                      timeout=30)
    cert = x509.load_pem_x509_certificate(base64.b64decode(issued))
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == user
    assert sorted(a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)) == ["devs", "qa"]
    assert list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.CLIENT_AUTH]
    lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert 3600 <= lifetime.total_seconds() <= 3600 + 5 * 60 + 5  # backdated 5 minutes
    client_ca = x509.load_pem_x509_certificate((srv.data_dir / "server" / "tls" / "client-ca.crt").read_bytes())
    assert cert.issuer == client_ca.subject

    # the certificate is the user's credential: RBAC decides what it may do
    (tmp_path / "user.crt").write_bytes(base64.b64decode(issued))
    (tmp_path / "user.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                          serialization.NoEncryption()))
    ctx = ssl.create_default_context(cafile=str(srv.ca_path))
    ctx.load_cert_chain(str(tmp_path / "user.crt"), str(tmp_path / "user.key"))
    with httpx.Client(base_url=srv.url, verify=ctx, timeout=30) as me:
        who = me.post("/apis/authentication.k8s.io/v1/selfsubjectreviews",
                      json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}).json()
        info = who["status"]["userInfo"]
        assert info["username"] == user and {"devs", "qa", "system:authenticated"} <= set(info["groups"])
        r = me.get("/api/v1/namespaces/default/pods")
        assert r.status_code == 403
        assert r.json()["message"] == (f'pods is forbidden: User "{user}" cannot list resource "pods" in API group '
                                       '"" in the namespace "default"')
        admin.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", json={
            "metadata": {"name": f"{user}-view"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"}],
        }).raise_for_status()
        assert wait_for(lambda: me.get("/api/v1/namespaces/default/pods").status_code == 200, timeout=10)


def test_a_request_without_client_auth_fails_validation_and_gets_nothing(admin: httpx.Client) -> None:
    name = f"srv-{uuid.uuid4().hex[:6]}"
    _, pem = _request(name, [])
    _submit(admin, name, pem, ["digital signature", "server auth"])
    _approve(admin, name)

    def failed() -> dict | None:
        st = admin.get(f"{CSRS}/{name}").json().get("status") or {}
        return next((c for c in st.get("conditions") or () if c["type"] == "Failed"), None)

    cond = wait_for(failed, timeout=30)
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "SignerValidationFailure", "invalid usage for client certificate: server auth")
    assert "certificate" not in admin.get(f"{CSRS}/{name}").json()["status"]


def test_other_signers_and_unapproved_or_denied_requests_are_left_alone(admin: httpx.Client) -> None:
    name = f"other-{uuid.uuid4().hex[:6]}"
    _, pem = _request(name, [])
    r = admin.post(CSRS, json={"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                               "metadata": {"name": name},
                               "spec": {"request": base64.b64encode(pem).decode(), "usages": ["client auth"],
                                        "signerName": "example.com/custom"}})
    assert r.status_code == 201, r.text
    _approve(admin, name)
    denied = f"denied-{uuid.uuid4().hex[:6]}"
    _, pem = _request(denied, [])
    _submit(admin, denied, pem, ["client auth"])
    csr = admin.get(f"{CSRS}/{denied}").json()
    csr.setdefault("status", {})["conditions"] = [{"type": "Denied", "status": "True", "reason": "No"}]
    assert admin.put(f"{CSRS}/{denied}/approval", json=csr).status_code == 200
    # a request the controller does handle, submitted after them, is issued: they were seen and skipped
    marker = f"marker-{uuid.uuid4().hex[:6]}"
    _, pem = _request(marker, [])
    _submit(admin, marker, pem, ["client auth"])
    _approve(admin, marker)
    wait_for(lambda: (admin.get(f"{CSRS}/{marker}").json().get("status") or {}).get("certificate"), timeout=30)
    for skipped in (name, denied):
        assert "certificate" not in (admin.get(f"{CSRS}/{skipped}").json().get("status") or {})
