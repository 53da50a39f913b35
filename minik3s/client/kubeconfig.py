"""Where the API server is and how to reach it: kubeconfig resolution for out-of-process
clients (layer L3).

kubectl's loading rules, for what minik3s clients need: the first kubeconfig file that exists
among `--kubeconfig`, the `KUBECONFIG` list (os.pathsep-separated, as client-go's
`ClientConfigLoadingRules`) and the default path; in it the cluster and user of the current
context (or the first cluster/user when no context names one); an explicit `--server` replaces
the cluster's URL and keeps the credentials. `ClusterAccess` carries what the HTTP transport
needs: the URL, the CA (`certificate-authority-data` or `certificate-authority`), the client
certificate and key (`client-certificate[-data]`, `client-key[-data]`), a bearer token (`token`
or `tokenFile`), `insecure-skip-tls-verify` and `tls-server-name`; relative file paths are
relative to the kubeconfig's directory, as client-go resolves them.

Data flow: CLI flags + environment -> `resolve_access` -> `ClusterAccess` ->
`HttpClient(access.server, access=access)`.
"""

from __future__ import annotations

import base64
import binascii
import os
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

KUBECONFIG_ENV = "KUBECONFIG"


def kubeconfig_candidates(kubeconfig: str | None, *, environ: Mapping[str, str],
                          default: Path | None) -> list[Path]:
    """The files to look at, in precedence order."""
    out: list[Path] = []
    if kubeconfig:
        out.append(Path(kubeconfig))
    if environ.get(KUBECONFIG_ENV):
        out.extend(Path(p) for p in environ[KUBECONFIG_ENV].split(os.pathsep) if p)
    if default is not None:
        out.append(default)
    return out


def server_from_document(doc: Mapping[str, Any]) -> str | None:
    """The `server` of the current context's cluster (any cluster when no context matches)."""
    ctx_name = doc.get("current-context")
    cluster_name = None
    for c in doc.get("contexts") or []:
        if c.get("name") == ctx_name:
            cluster_name = (c.get("context") or {}).get("cluster")
    for c in doc.get("clusters") or []:
        if cluster_name is None or c.get("name") == cluster_name:
            return str((c.get("cluster") or {}).get("server"))
    return None


class KubeconfigError(ValueError):
    """A kubeconfig whose credentials cannot be used (bad base64, a missing file)."""


@dataclass(frozen=True, slots=True)
class ClusterAccess:
    """How to reach one API server: URL, TLS material (PEM bytes) and a bearer token."""

    server: str
    ca_data: bytes | None = None
    client_cert_data: bytes | None = None
    client_key_data: bytes | None = None
    token: str | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None

    def ssl_context(self) -> ssl.SSLContext | None:
        """The client's TLS context for an https URL (None for http): trusts `ca_data` (else the
        system's CAs), presents the client certificate when there is one."""
        if not self.server.startswith("https://"):
            return None
        try:
            ctx = ssl.create_default_context(cadata=self.ca_data.decode("utf-8", "replace") if self.ca_data else None)
        except ssl.SSLError as e:
            raise KubeconfigError(f"certificate-authority: not a PEM certificate ({e.reason or e})") from None
        if self.insecure_skip_tls_verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.client_cert_data is not None and self.client_key_data is not None:
            # the ssl module loads key pairs from files only: a private temporary directory,
            # removed as soon as the pair is loaded
            with tempfile.TemporaryDirectory(prefix="minik3s-cred-") as tmp:
                cert, key = Path(tmp) / "client.crt", Path(tmp) / "client.key"
                for path, data in ((cert, self.client_cert_data), (key, self.client_key_data)):
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    with os.fdopen(fd, "wb") as f:
                        f.write(data)
                try:
                    ctx.load_cert_chain(cert, key)
                except ssl.SSLError as e:
                    raise KubeconfigError(f"client-certificate/client-key: not a usable PEM key pair "
                                          f"({e.reason or e})") from None
        return ctx


def _pick(doc: Mapping[str, Any], section: str, key: str, wanted: str | None) -> dict[str, Any]:
    for entry in doc.get(section) or []:
        if wanted is None or entry.get("name") == wanted:
            return dict(entry.get(key) or {})
    return {}


def _material(entry: Mapping[str, Any], field: str, base: Path) -> bytes | None:
    """`<field>-data` (base64 PEM) or `<field>` (a file, relative to the kubeconfig)."""
    data = entry.get(f"{field}-data")
    if data:
        try:
            return base64.b64decode(str(data), validate=True)
        except (binascii.Error, ValueError):
            raise KubeconfigError(f"{field}-data is not valid base64") from None
    path = entry.get(field)
    if path:
        p = Path(str(path))
        try:
            return (p if p.is_absolute() else base / p).read_bytes()
        except OSError as e:
            raise KubeconfigError(f"{field}: cannot read {p}: {e.strerror}") from None
    return None


def access_from_document(doc: Mapping[str, Any], *, base: Path = Path("."), server: str | None = None
                         ) -> ClusterAccess | None:
    """The current context's cluster and user as a `ClusterAccess` (None without a server)."""
    ctx_name = doc.get("current-context")
    ctx = _pick(doc, "contexts", "context", ctx_name) if ctx_name else {}
    cluster = _pick(doc, "clusters", "cluster", ctx.get("cluster"))
    user = _pick(doc, "users", "user", ctx.get("user"))
    url = server or cluster.get("server")
    if not url:
        return None
    token = user.get("token")
    if not token and user.get("tokenFile"):
        p = Path(str(user["tokenFile"]))
        try:
            token = (p if p.is_absolute() else base / p).read_text().strip()
        except OSError as e:
            raise KubeconfigError(f"tokenFile: cannot read {p}: {e.strerror}") from None
    return ClusterAccess(server=str(url), ca_data=_material(cluster, "certificate-authority", base),
                         client_cert_data=_material(user, "client-certificate", base),
                         client_key_data=_material(user, "client-key", base),
                         token=str(token) if token else None,
                         insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify")),
                         tls_server_name=cluster.get("tls-server-name") or None)


def resolve_access(*, server: str | None, kubeconfig: str | None, environ: Mapping[str, str] | None = None,
                   default: Path | None = None, token: str | None = None) -> ClusterAccess | None:
    """The API server and credentials (see the module docstring), or None when nothing names a
    server. `server`/`token` (the --server/--token flags) override the kubeconfig's."""
    env = os.environ if environ is None else environ
    access: ClusterAccess | None = None
    for p in kubeconfig_candidates(kubeconfig, environ=env, default=default):
        if p.is_file():
            doc = yaml.safe_load(p.read_text()) or {}
            access = access_from_document(doc, base=p.parent, server=server)
            if access is not None:
                break
    if access is None and server:
        access = ClusterAccess(server=server)
    if access is not None and token:
        access = ClusterAccess(access.server, access.ca_data, access.client_cert_data, access.client_key_data,
                               token, access.insecure_skip_tls_verify, access.tls_server_name)
    return access


def resolve_server_url(*, server: str | None, kubeconfig: str | None, environ: Mapping[str, str] | None = None,
                       default: Path | None = None) -> str | None:
    """The API server URL, or None when nothing names one (the caller says how to fix that)."""
    if server:
        return server
    env = os.environ if environ is None else environ
    for p in kubeconfig_candidates(kubeconfig, environ=env, default=default):
        if p.is_file():
            doc = yaml.safe_load(p.read_text()) or {}
            url = server_from_document(doc)
            if url is not None:
                return url
    return None


def kubeconfig_document(url: str, *, name: str = "minik3s", namespace: str = "default",
                        ca_data: bytes | None = None, client_cert_data: bytes | None = None,
                        client_key_data: bytes | None = None, token: str | None = None) -> dict[str, Any]:
    """A kubeconfig with one cluster/user/context for `url` (what `minik3s server` writes):
    PEM bytes go in base64 as `certificate-authority-data`, `client-certificate-data`,
    `client-key-data`, as K3s's k3s.yaml carries them."""
    cluster: dict[str, Any] = {"server": url}
    if ca_data is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_data).decode()
    user: dict[str, Any] = {}
    if client_cert_data is not None:
        user["client-certificate-data"] = base64.b64encode(client_cert_data).decode()
    if client_key_data is not None:
        user["client-key-data"] = base64.b64encode(client_key_data).decode()
    if token is not None:
        user["token"] = token
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}],
        "current-context": name,
        "preferences": {},
    }
