"""Resource-usage samples shared by the usage source and the metrics API (layer L2).

Why here: kubelet_sim produces the samples, the apiserver's metrics.k8s.io handler serves them
and the HPA controller / descheduler consume them, and none of those may import another. The
composition root hands the kubelet fleet's `UsageSource` to the others as a `UsageProvider`.

Units are those the scheduler counts in: cpu in milli-cores, memory in bytes; cumulative cpu
(what a kubelet's Summary API and resource metrics report besides the rate) in core-nanoseconds.

The kubelet's own endpoints (`nodes/{name}/proxy`: healthz, stats/summary, metrics/resource,
pods, configz) need one node's view with those cumulative figures and the configuration the
kubelet runs with: a provider that also implements `KubeletProvider` gives it; the apiserver
checks for it at run time, so a plain `UsageProvider` (tests' fakes) still serves metrics.k8s.io.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from minik3s.api.types import JsonDict


@dataclass(frozen=True, slots=True)
class ContainerUsage:
    name: str
    cpu_milli: int
    memory_bytes: int
    # cpu time used since the container started (core-nanoseconds); None: not tracked
    cpu_core_nanoseconds: int | None = None


@dataclass(frozen=True, slots=True)
class PodUsage:
    namespace: str
    name: str
    containers: tuple[ContainerUsage, ...]
    timestamp: datetime
    window_seconds: float
    uid: str = ""
    # cpu time of the pod's cgroup since it started (restarted containers included); None: not tracked
    cpu_core_nanoseconds: int | None = None

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
    # cpu time used on the node since its kubelet started (core-nanoseconds); None: not tracked
    cpu_core_nanoseconds: int | None = None


class UsageProvider(Protocol):
    """Current usage of running pods and of nodes (metrics-server's view of the kubelets)."""

    def pod_usage(self, namespace: str | None = None) -> list[PodUsage]: ...

    def node_usage(self) -> list[NodeUsage]: ...


class MetricsUnavailableError(Exception):
    """The resource metrics API cannot be read (no metrics-server); the message is what
    upstream's resource metrics client reports."""


class NoMetricsAPI:
    """The usage provider of a cluster without metrics-server (`--disable metrics-server`):
    every read fails as the HPA controller's metrics client fails against a server that does
    not serve metrics.k8s.io."""

    @staticmethod
    def _missing(resource: str) -> MetricsUnavailableError:
        return MetricsUnavailableError("unable to fetch metrics from resource metrics API: the server could not "
                                       f"find the requested resource (get {resource}.metrics.k8s.io)")

    def pod_usage(self, namespace: str | None = None) -> list[PodUsage]:
        raise self._missing("pods")

    def node_usage(self) -> list[NodeUsage]:
        raise self._missing("nodes")


@dataclass(frozen=True, slots=True)
class KubeletStats:
    """One simulated kubelet's view of its node, sampled at `node.timestamp`: what its Summary API
    (k8s.io/kubelet stats/v1alpha1) and resource metrics are made of.

    - `node`: the whole node (pods plus system daemons), `pods`: its running pods, each with
      `uid` and cumulative cpu set;
    - `pods_cpu_milli` / `pods_memory_bytes` / `pods_cpu_core_nanoseconds`: the `pods` system
      container (the kubepods cgroup: every pod on the node);
    - `started`: when the kubelet started collecting (the node's `startTime`);
    - `config`: the KubeletConfiguration it runs with, as kubelet.config.k8s.io/v1beta1 JSON in
      its Go field order (what `/configz` shows under `kubeletconfig`)."""

    node: NodeUsage
    pods: tuple[PodUsage, ...]
    pods_cpu_milli: int
    pods_memory_bytes: int
    pods_cpu_core_nanoseconds: int
    started: datetime
    config: JsonDict


@runtime_checkable
class KubeletProvider(Protocol):
    """The simulated kubelets' own endpoints (kube-apiserver's `nodes/{name}/proxy`)."""

    def kubelet_stats(self, node: str) -> KubeletStats | None:
        """`node`'s kubelet view; None when no simulated kubelet answers for it (the node is not
        simulated, or it is failed: its kubelet is down)."""
        ...
