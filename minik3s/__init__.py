"""minik3s: a single-process, K3s-style Kubernetes control plane in Python.

Package root of the minik3s layers (docs/architecture.md): `utils` (L1) < `api` (L2) < `client`
(L3) < `controllers` (L4, beside the top-level `apiserver`, `scheduler`, `descheduler`,
`kubelet_sim`) < `server`, `config`, `cli` (L5, the composition root); `testing` uses L1-L3.
Data flow: `minik3s server` (cli) -> `server.run(config)` -> the apiserver plus every component,
each talking to it through a `client` transport. Imports nothing from its subpackages (no
import-time side effects); the console script is `minik3s.cli:main`.
"""

__version__ = "0.1.0"
