"""Where the API server is: kubeconfig resolution for out-of-process clients (layer L3).

kubectl's loading rules, for the one thing minik3s clients need (the server URL): an explicit
`--server` wins; otherwise the first kubeconfig file that exists among `--kubeconfig`, the
`KUBECONFIG` list (os.pathsep-separated, as client-go's `ClientConfigLoadingRules`) and the
default path, and in it the cluster of the current context (or the first cluster when no
context names one). Only files are read; no credentials are involved (minik3s serves plain
HTTP on loopback).

Data flow: CLI flags + environment -> `resolve_server_url` -> URL -> `HttpClient(url)`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
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


def kubeconfig_document(url: str, *, name: str = "minik3s", namespace: str = "default") -> dict[str, Any]:
    """A kubeconfig with one cluster/user/context for `url` (what `minik3s server` writes)."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": url}}],
        "users": [{"name": name, "user": {}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}],
        "current-context": name,
        "preferences": {},
    }
