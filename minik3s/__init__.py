"""minik3s: a single-process, K3s-style Kubernetes control plane in Python.

Package root of the minik3s layers (docs/architecture.md): `utils` (L1) < `api` (L2) < `client`
(L3) < `controllers` (L4, beside the top-level `apiserver`, `scheduler`, `descheduler`,
`kubelet_sim`) < `server`, `config`, `cli`, `embed`, `pytest_plugin` (L5, the composition root);
`testing` uses L1-L3.
Data flow: `minik3s server` (cli) -> `server.run(config)` -> the apiserver plus every component,
each talking to it through a `client` transport. The one public name here is the embedding API,
`minik3s.Cluster` (`embed.py`), imported lazily on first use: importing `minik3s` or any
subpackage runs nothing else. The console script is `minik3s.cli:main`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Cluster", "ClusterError", "__version__"]

if TYPE_CHECKING:
    from minik3s.embed import Cluster, ClusterError


def __getattr__(name: str) -> Any:
    if name in ("Cluster", "ClusterError"):
        from minik3s import embed

        return getattr(embed, name)
    raise AttributeError(f"module 'minik3s' has no attribute {name!r}")
