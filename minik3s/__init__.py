"""minik3s: a single-process, K3s-style Kubernetes control plane in Python.

Layer L5 package root. Imports nothing from its subpackages (no import-time side effects).
"""

__version__ = "0.1.0"
