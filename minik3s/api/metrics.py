"""Resource-usage samples shared by the usage source and the metrics API (layer L2).

Why here: kubelet_sim produces the samples, the apiserver's metrics.k8s.io handler serves them
and the HPA controller / descheduler consume them, and none of those may import another. The
composition root hands the kubelet fleet's `UsageSource` to the others as a `UsageProvider`.

Units are those the scheduler counts in: cpu in milli-cores, memory in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ContainerUsage:
    name: str
    cpu_milli: int
    memory_bytes: int


@dataclass(frozen=True, slots=True)
class PodUsage:
    namespace: str
    name: str
    containers: tuple[ContainerUsage, ...]
    timestamp: datetime
    window_seconds: float

    @property
    def cpu_milli(self) -> int:
        return sum(c.cpu_milli for c in self.containers)

    @property
    def memory_bytes(self) -> int:
        return sum(c.memory_bytes for c in self.containers)


@dataclass(frozen=True, slots=True)
class NodeUsage:
    name: str
    cpu_milli: int
    memory_bytes: int
    timestamp: datetime
    window_seconds: float


class UsageProvider(Protocol):
    """Current usage of running pods and of nodes (metrics-server's view of the kubelets)."""

    def pod_usage(self, namespace: str | None = None) -> list[PodUsage]: ...

    def node_usage(self) -> list[NodeUsage]: ...
