"""minik3s.pki: what a first start generates under the data dir (K3s's names), that later
starts reuse it, that a new --tls-san reissues only the serving certificate, and that every
file is private. Plus the configuration rule: plain HTTP only on loopback."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from pydantic import ValidationError

from minik3s.config import ServerConfig
from minik3s.pki import Pki, cert_sans, ensure_pki, is_ip_or_dns_name, is_loopback, wanted_sans


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def _cert(p: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(p.read_bytes())


def _all_files(pki: Pki) -> list[Path]:
    return [pki.server_ca_cert, pki.server_ca_key, pki.client_ca_cert, pki.client_ca_key, pki.serving_cert,
            pki.serving_key, pki.admin_cert, pki.admin_key, pki.service_key, pki.admin_token_file]


def test_first_start_generates_k3s_layout_private_files(tmp_path: Path) -> None:
    data = tmp_path / "data"
    pki = ensure_pki(data, sans=wanted_sans("127.0.0.1", ["api.example.com", "10.0.0.7"], hostname="box"))
    assert pki.dir == data / "server" / "tls"
    assert sorted(p.name for p in pki.dir.iterdir()) == [
        "client-admin.crt", "client-admin.key", "client-ca.crt", "client-ca.key", "server-ca.crt", "server-ca.key",
        "service.key", "serving-kube-apiserver.crt", "serving-kube-apiserver.key"]
    for f in _all_files(pki):
        assert _mode(f) == 0o600, f
    for d in (data, data / "server", pki.dir, pki.admin_token_file.parent):
        assert _mode(d) == 0o700, d

    serving = _cert(pki.serving_cert)
    assert cert_sans(serving) == {"127.0.0.1", "localhost", "::1", "box", "kubernetes", "kubernetes.default",
                                  "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
                                  "api.example.com", "10.0.0.7"}
    serving.verify_directly_issued_by(_cert(pki.server_ca_cert))
    usage = serving.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.SERVER_AUTH]

    admin = _cert(pki.admin_cert)
    admin.verify_directly_issued_by(_cert(pki.client_ca_cert))
    assert [a.value for a in admin.subject.get_attributes_for_oid(NameOID.COMMON_NAME)] == ["system:admin"]
    assert [a.value for a in admin.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["system:masters"]
    token, user, uid, groups = pki.admin_token_file.read_text().strip().split(",")
    assert len(token) == 64 and (user, uid, groups) == ("system:admin", "system:admin", "system:masters")
    assert pki.admin_token() == token


def test_restart_reuses_everything_and_a_new_san_reissues_only_the_serving_cert(tmp_path: Path) -> None:
    sans = wanted_sans("127.0.0.1", hostname="box")
    first = ensure_pki(tmp_path, sans=sans)
    before = {f: f.read_bytes() for f in _all_files(first)}
    again = ensure_pki(tmp_path, sans=sans)
    assert {f: f.read_bytes() for f in _all_files(again)} == before

    ensure_pki(tmp_path, sans=wanted_sans("127.0.0.1", ["new.example"], hostname="box"))
    changed = {f.name for f in _all_files(first) if f.read_bytes() != before[f]}
    assert changed == {"serving-kube-apiserver.crt", "serving-kube-apiserver.key"}
    assert "new.example" in cert_sans(_cert(first.serving_cert))
    _cert(first.serving_cert).verify_directly_issued_by(_cert(first.server_ca_cert))


def test_loose_modes_from_an_older_run_are_made_private(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path, sans=["localhost"])
    pki.server_ca_key.chmod(0o644)
    tmp_path.chmod(0o755)
    ensure_pki(tmp_path, sans=["localhost"])
    assert _mode(pki.server_ca_key) == 0o600 and _mode(tmp_path) == 0o700


def test_wildcard_bind_is_not_a_san_and_names_are_deduplicated() -> None:
    assert wanted_sans("0.0.0.0", ["LOCALHOST", "box"], hostname="box")[:4] == ["localhost", "127.0.0.1", "::1", "box"]
    assert wanted_sans("::", hostname="h").count("::1") == 1
    assert wanted_sans("192.168.1.5", hostname="h")[0] == "192.168.1.5"
    assert "my_host" not in wanted_sans("127.0.0.1", hostname="my_host")  # not a DNS name: left out


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("localhost", True), ("[::1]", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("example.com", False),
])
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_tls_is_on_beyond_loopback_and_plain_http_there_is_refused() -> None:
    assert ServerConfig(bind="127.0.0.1").tls_enabled is False
    assert ServerConfig(bind="127.0.0.1", tls=True).tls_enabled is True
    assert ServerConfig(bind="0.0.0.0").tls_enabled is True
    with pytest.raises(ValidationError, match="plain HTTP is served only on a loopback address, and 0.0.0.0 is not"):
        ServerConfig(bind="0.0.0.0", tls=False)
    with pytest.raises(ValidationError, match="bearer tokens are authenticated only with TLS on"):
        ServerConfig(bind="127.0.0.1", token_auth_file=Path("t.csv"))


def test_listener_trusts_only_the_client_ca(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path, sans=["localhost"])
    trusted = pki.server_context().get_ca_certs()
    client_ca = _cert(pki.client_ca_cert).subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    assert [dict(rdn[0] for rdn in c["subject"])["commonName"] for c in trusted] == [client_ca]


@pytest.mark.parametrize(("name", "ok"), [
    ("api.example.com", True), ("*.example.com", True), ("10.0.0.1", True), ("fd00::1", True), ("Host-1", True),
    ("", False), ("bad_name", False), ("-x.example", False), ("a..b", False), ("ünicode.example", False),
    ("http://x", False),
])
def test_san_must_be_an_address_or_dns_name(name: str, ok: bool) -> None:
    assert is_ip_or_dns_name(name) is ok
    if not ok:
        with pytest.raises(ValidationError, match="is neither an IP address nor a DNS name"):
            ServerConfig(tls=True, tls_san=[name])
