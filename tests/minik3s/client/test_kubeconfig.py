"""Kubeconfig resolution (minik3s.client.kubeconfig) and the CLI's use of it: `--server` wins,
then the first existing file of `--kubeconfig`, `KUBECONFIG` (a path list) and the default path,
and in it the current context's cluster; nothing found is a clear CLI error. The credentials
(`ClusterAccess`: CA, client certificate, token) come from the current context's user. Also the client's
small wire helpers: `Warning` header parsing and the default (deduplicating) warning log."""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

import pytest
import yaml

from minik3s.cli.common import server_url
from minik3s.client.interface import WarningLog
from minik3s.client.kubeconfig import (
    ClusterAccess,
    KubeconfigError,
    access_from_document,
    kubeconfig_document,
    resolve_access,
    resolve_server_url,
)
from minik3s.client.rest import warning_texts


def write(path: Path, url: str, **extra: object) -> str:
    doc = {**kubeconfig_document(url), **extra}
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def two_clusters(path: Path, current: str) -> str:
    doc = {"clusters": [{"name": "a", "cluster": {"server": "http://a:1"}},
                        {"name": "b", "cluster": {"server": "http://b:2"}}],
           "contexts": [{"name": "ca", "context": {"cluster": "a"}}, {"name": "cb", "context": {"cluster": "b"}}],
           "current-context": current}
    path.write_text(yaml.safe_dump(doc))
    return str(path)


@pytest.mark.parametrize(("case", "want"), [
    pytest.param("server-flag", "http://flag:1", id="server-flag-wins-over-every-file"),
    pytest.param("kubeconfig-flag", "http://flagfile:2", id="kubeconfig-flag-before-KUBECONFIG"),
    pytest.param("env-list", "http://second:4", id="first-existing-file-of-the-KUBECONFIG-list"),
    pytest.param("default", "http://default:5", id="default-path-last"),
    pytest.param("current-context", "http://b:2", id="cluster-of-the-current-context"),
    pytest.param("nothing", None, id="nothing-found-is-none"),
])
def test_resolve_server_url(tmp_path: Path, case: str, want: str | None) -> None:
    default = tmp_path / "default.yaml"
    env: dict[str, str] = {}
    server = kubeconfig = None
    if case == "server-flag":
        server = "http://flag:1"
        kubeconfig = write(tmp_path / "k.yaml", "http://flagfile:2")
    elif case == "kubeconfig-flag":
        kubeconfig = write(tmp_path / "k.yaml", "http://flagfile:2")
        env["KUBECONFIG"] = write(tmp_path / "env.yaml", "http://env:3")
    elif case == "env-list":
        env["KUBECONFIG"] = os.pathsep.join([str(tmp_path / "missing.yaml"),
                                             write(tmp_path / "second.yaml", "http://second:4")])
        write(default, "http://default:5")
    elif case == "default":
        write(default, "http://default:5")
    elif case == "current-context":
        kubeconfig = two_clusters(tmp_path / "two.yaml", "cb")
    assert resolve_server_url(server=server, kubeconfig=kubeconfig, environ=env, default=default) == want


def test_cli_without_a_server_exits_with_how_to_fix_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    with pytest.raises(SystemExit) as e:
        server_url(argparse.Namespace(server=None, kubeconfig=None))
    assert str(e.value) == ("minik3s: no API server given: pass --server URL or --kubeconfig FILE "
                            "(or run from the directory holding .minik3s/)")
    (tmp_path / ".minik3s").mkdir()
    write(tmp_path / ".minik3s" / "kubeconfig.yaml", "http://127.0.0.1:7")
    assert server_url(argparse.Namespace(server=None, kubeconfig=None)) == "http://127.0.0.1:7"


@pytest.mark.parametrize(("header", "want"), [
    pytest.param('299 - "unknown field \\"spec.x\\""', ['unknown field "spec.x"'], id="escaped-quotes"),
    pytest.param('299 - "a", 299 - "b, c"', ["a", "b, c"], id="comma-separated-values"),
    pytest.param("garbage", [], id="not-a-warning-value-is-ignored"),
])
def test_warning_header_texts(header: str, want: list[str]) -> None:
    assert warning_texts(header) == want


def test_default_warning_handler_logs_each_text_once(caplog: pytest.LogCaptureFixture) -> None:
    log = WarningLog(logging.getLogger("minik3s.client.test"), limit=2)
    with caplog.at_level(logging.WARNING, logger="minik3s.client.test"):
        for text in ("a", "a", "b", "a", "c", "c"):
            log(text)
    # remembered up to the limit; a text beyond it is logged every time rather than dropped
    assert [r.getMessage() for r in caplog.records] == [
        "server warning: a", "server warning: b", "server warning: c", "server warning: c"]


# ---- credentials (ClusterAccess) ----------------------------------------------------------------



def test_access_reads_inline_data_of_the_current_contexts_cluster_and_user(tmp_path: Path) -> None:
    doc = kubeconfig_document("https://127.0.0.1:6443", ca_data=b"CA", client_cert_data=b"CERT",
                              client_key_data=b"KEY", token="tok")
    path = tmp_path / "kc.yaml"
    path.write_text(yaml.safe_dump(doc))
    access = resolve_access(server=None, kubeconfig=str(path), environ={})
    assert access == ClusterAccess("https://127.0.0.1:6443", ca_data=b"CA", client_cert_data=b"CERT",
                                   client_key_data=b"KEY", token="tok")


def test_access_reads_files_relative_to_the_kubeconfig_and_server_flag_keeps_credentials(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_bytes(b"CA")
    (tmp_path / "tok").write_text("file-token\n")
    doc = {"current-context": "c", "contexts": [{"name": "c", "context": {"cluster": "x", "user": "u"}}],
           "clusters": [{"name": "other", "cluster": {"server": "https://other:1"}},
                        {"name": "x", "cluster": {"server": "https://x:1", "certificate-authority": "ca.crt",
                                                  "insecure-skip-tls-verify": True, "tls-server-name": "api"}}],
           "users": [{"name": "u", "user": {"tokenFile": "tok"}}]}
    path = tmp_path / "kc.yaml"
    path.write_text(yaml.safe_dump(doc))
    access = resolve_access(server="https://override:2", kubeconfig=str(path), environ={})
    assert access == ClusterAccess("https://override:2", ca_data=b"CA", token="file-token",
                                   insecure_skip_tls_verify=True, tls_server_name="api")
    assert resolve_access(server=None, kubeconfig=str(path), environ={}, token="flag") == ClusterAccess(
        "https://x:1", ca_data=b"CA", token="flag", insecure_skip_tls_verify=True, tls_server_name="api")


@pytest.mark.parametrize(("user", "message"), [
    pytest.param({"client-certificate-data": "%%%"}, "client-certificate-data is not valid base64", id="bad-base64"),
    pytest.param({"client-key": "missing.key"}, "client-key: cannot read missing.key", id="missing-file"),
    pytest.param({"tokenFile": "missing"}, "tokenFile: cannot read missing", id="missing-token-file"),
])
def test_unusable_credentials_are_a_clear_error(tmp_path: Path, user: dict[str, str], message: str) -> None:
    doc = {"clusters": [{"name": "x", "cluster": {"server": "https://x:1"}}], "users": [{"name": "u", "user": user}]}
    with pytest.raises(KubeconfigError, match=message):
        access_from_document(doc, base=tmp_path)


def test_plain_http_access_has_no_ssl_context_and_https_trusts_the_given_ca() -> None:
    assert ClusterAccess("http://127.0.0.1:1").ssl_context() is None
    with pytest.raises(KubeconfigError, match="certificate-authority: not a PEM certificate"):
        ClusterAccess("https://127.0.0.1:1", ca_data=b"not a pem").ssl_context()
    with pytest.raises(KubeconfigError, match="client-certificate/client-key: not a usable PEM key pair"):
        ClusterAccess("https://127.0.0.1:1", client_cert_data=b"x", client_key_data=b"y").ssl_context()
