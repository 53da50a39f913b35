"""The plain-HTTP loopback listener answers a TLS handshake on the same port (K3s serves only
HTTPS): tools that read the API server's certificate get K3s' CA name (kopf's webhook server
guesses the cluster's flavour from it), `curl -k https://...` works, plain HTTP is unchanged,
and a TLS client that stops mid-handshake is cut off after the header timeout."""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Iterator

import httpx
import pytest
from cryptography import x509

from minik3s.testing.server import ServerProcess

HEADER_TIMEOUT = 2.0


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    s = ServerProcess(tmp_path_factory.mktemp("ltls"), nodes=0,
                      args=["--disable", "scheduler", "--disable", "kubelet", "--read-header-timeout",
                            str(HEADER_TIMEOUT)])
    s.start()
    yield s
    s.stop()


def _addr(srv: ServerProcess) -> tuple[str, int]:
    host, port = srv.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def test_the_certificate_is_k3s_named_and_https_answers(srv: ServerProcess) -> None:
    assert srv.url.startswith("http://127.0.0.1:")
    pem = ssl.get_server_certificate(_addr(srv))
    cert = x509.load_pem_x509_certificate(pem.encode())
    issuer = cert.issuer.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value
    assert str(issuer).startswith("k3s-server-ca@")
    ca = srv.data_dir / "server" / "tls" / "server-ca.crt"
    https = srv.url.replace("http://", "https://")
    r = httpx.get(f"{https}/version", verify=ssl.create_default_context(cafile=str(ca)), timeout=10)
    assert r.status_code == 200 and r.json()["minor"] == "33"
    # the same port still speaks plain HTTP, on the same connection pool as before
    with httpx.Client(base_url=srv.url, timeout=10) as http:
        assert [http.get("/version").status_code for _ in range(3)] == [200, 200, 200]


def test_a_stalled_tls_handshake_is_closed_after_the_header_timeout(srv: ServerProcess) -> None:
    with socket.create_connection(_addr(srv), timeout=10) as s:
        s.sendall(b"\x16\x03\x01")  # the start of a ClientHello record, then nothing
        start = time.monotonic()
        assert s.recv(1024) == b""  # closed by the server
        assert time.monotonic() - start < HEADER_TIMEOUT + 3


def test_a_silent_connection_is_closed_after_the_header_timeout(srv: ServerProcess) -> None:
    with socket.create_connection(_addr(srv), timeout=10) as s:
        start = time.monotonic()
        assert s.recv(1024) == b""
        assert HEADER_TIMEOUT - 0.5 < time.monotonic() - start < HEADER_TIMEOUT + 3
