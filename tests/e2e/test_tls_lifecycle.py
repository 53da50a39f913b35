"""When TLS is on and what survives a restart: `--bind 0.0.0.0` always serves TLS and
authenticates (reached here through 127.0.0.1), `--no-tls` beyond loopback refuses to start,
a restart reuses the CA and admin credentials (a saved kubeconfig keeps working, also after a
new --tls-san), and the loopback default stays plain HTTP with private files."""

from __future__ import annotations

import os
import ssl
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import yaml
from cryptography import x509

from minik3s.pki import cert_sans
from minik3s.testing.pytest_plugin import API_ONLY
from minik3s.testing.server import ServerProcess

Factory = Callable[..., ServerProcess]


def _kubectl(kubectl_bin: Path, kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(kubeconfig.parent)}
    return subprocess.run([str(kubectl_bin), "--kubeconfig", str(kubeconfig), *args], capture_output=True, text=True,
                          env=env, timeout=60)


def test_bind_all_interfaces_serves_tls_and_rejects_unauthenticated(minik3s_server_factory: Factory,
                                                                     kubectl_bin: Path) -> None:
    srv = minik3s_server_factory(*API_ONLY, "--bind", "0.0.0.0")
    assert srv.url.startswith("https://127.0.0.1:")
    ctx = ssl.create_default_context(cafile=str(srv.ca_path))  # 127.0.0.1 is a name of the certificate
    r = httpx.get(srv.url + "/api/v1/namespaces", verify=ctx, timeout=10)
    assert r.status_code == 401 and r.json()["reason"] == "Unauthorized"
    with pytest.raises(httpx.TransportError):
        httpx.get(srv.url.replace("https://", "http://") + "/api/v1/namespaces", timeout=10)
    out = _kubectl(kubectl_bin, srv.kubeconfig, "get", "namespaces", "-o", "name")
    assert out.returncode == 0, out.stderr
    assert "namespace/default" in out.stdout.split()


def test_plain_http_beyond_loopback_refuses_to_start(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "minik3s", "server", "--bind", "0.0.0.0", "--no-tls", "--port", "0",
                        "--data-dir", str(tmp_path / "d"), "--nodes", "0"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "plain HTTP is served only on a loopback address, and 0.0.0.0 is not one" in r.stderr
    assert not (tmp_path / "d" / "state.db").exists()


def test_restart_keeps_the_ca_and_admin_credentials(minik3s_server_factory: Factory, kubectl_bin: Path,
                                                    tmp_path: Path) -> None:
    srv = minik3s_server_factory(*API_ONLY, tls=True)
    saved = tmp_path / "saved-kubeconfig.yaml"
    saved.write_text(srv.kubeconfig.read_text())
    ca_before = srv.ca_path.read_bytes()
    srv.stop()
    srv.args = [*API_ONLY, "--tls-san", "restarted.example"]
    srv.start()
    assert srv.ca_path.read_bytes() == ca_before
    serving = x509.load_pem_x509_certificate((srv.data_dir / "server/tls/serving-kube-apiserver.crt").read_bytes())
    assert "restarted.example" in cert_sans(serving)
    # the saved kubeconfig's CA and client certificate still work (the port is new)
    out = _kubectl(kubectl_bin, saved, "--server", srv.url, "get", "namespace", "default", "-o", "name")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "namespace/default"


def test_loopback_default_is_plain_http_with_private_files(minik3s_server_factory: Factory) -> None:
    srv = minik3s_server_factory(*API_ONLY)
    assert srv.url.startswith("http://127.0.0.1:")
    assert httpx.get(srv.url + "/api/v1/namespaces", timeout=10).status_code == 200
    doc = yaml.safe_load(srv.kubeconfig.read_text())
    assert doc["users"][0]["user"] == {} and "certificate-authority-data" not in doc["clusters"][0]["cluster"]
    # only what the listener's TLS side needs (a handshake on the plain port is answered):
    # the server CA and the serving pair, private as every key
    tls_dir = srv.data_dir / "server" / "tls"
    assert sorted(p.name for p in tls_dir.iterdir()) == [
        "server-ca.crt", "server-ca.key", "serving-kube-apiserver.crt", "serving-kube-apiserver.key"]
    assert {stat.S_IMODE(p.stat().st_mode) for p in tls_dir.iterdir()} == {0o600}
    assert stat.S_IMODE(tls_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(srv.data_dir.stat().st_mode) == 0o700
    for name in ("state.db", "state.db-wal", "state.db-shm", "kubeconfig.yaml"):
        assert stat.S_IMODE((srv.data_dir / name).stat().st_mode) == 0o600, name


@pytest.mark.parametrize(("content", "message"), [
    pytest.param(None, "token_auth_file: cannot read", id="missing-file"),
    pytest.param("tok,alice\n", "line 1: token file must have at least 3 columns (token,user,uid), found 2",
                 id="two-columns"),
])
def test_unusable_token_file_refuses_to_start(tmp_path: Path, content: str | None, message: str) -> None:
    tokens = tmp_path / "tokens.csv"
    if content is not None:
        tokens.write_text(content)
    r = subprocess.run([sys.executable, "-m", "minik3s", "server", "--tls", "--token-auth-file", str(tokens),
                        "--port", "0", "--data-dir", str(tmp_path / "d"), "--nodes", "0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "minik3s: invalid configuration:" in r.stderr and message in r.stderr
    assert "Traceback" not in r.stderr


def test_standalone_kubelet_sim_joins_a_tls_server_with_the_kubeconfig(minik3s_server_factory: Factory) -> None:
    srv = minik3s_server_factory(*API_ONLY, tls=True)
    ctx = ssl.create_default_context(cafile=str(srv.ca_path))
    ctx.load_cert_chain(*srv.admin_cert)
    proc = subprocess.Popen([sys.executable, "-m", "minik3s", "kubelet-sim", "--kubeconfig", str(srv.kubeconfig),
                             "--nodes", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        with httpx.Client(base_url=srv.url, verify=ctx, timeout=10) as admin:
            deadline = time.monotonic() + 30
            names: list[str] = []
            while time.monotonic() < deadline and not names:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                names = [n["metadata"]["name"] for n in admin.get("/api/v1/nodes").json()["items"]]
                time.sleep(0.1)  # polling a condition, bounded by the deadline
            assert names == ["node-1"]
    finally:
        proc.terminate()
        proc.wait(20)
