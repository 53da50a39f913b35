"""Descheduler metrics (layer L4), upstream's names (sigs descheduler pkg/descheduler/metrics):

- `descheduler_pods_evicted_total{result,strategy,namespace,node,profile}`: eviction attempts by
  outcome (`success`, `error`, `maximum number of pods per node reached`, ...); the deprecated
  `descheduler_pods_evicted` (same labels and values) is exposed too, as upstream still does;
- `descheduler_loop_duration_seconds{type}`: one descheduling cycle (`dry-run` / `non-dry-run`);
- `descheduler_strategy_duration_seconds{strategy,profile}`: one plugin's run in a cycle.

The `CollectorRegistry` belongs to the composition root (no global default registry); the
apiserver serves its exposition on `/metrics` through an injected callable.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import Metric, UnknownMetricFamily
from prometheus_client.registry import Collector

LABELS = ("result", "strategy", "namespace", "node", "profile")


class _LegacyPodsEvicted(Collector):
    """`descheduler_pods_evicted` without the `_total` suffix, mirroring the counter."""

    def __init__(self, counter: Counter) -> None:
        self._counter = counter

    def collect(self) -> Iterator[Metric]:
        fam = UnknownMetricFamily("descheduler_pods_evicted",
                                  "Number of evicted pods (deprecated: use descheduler_pods_evicted_total)",
                                  labels=list(LABELS))
        for metric in self._counter.collect():
            for s in metric.samples:
                if s.name.endswith("_total"):
                    fam.add_metric([s.labels[k] for k in LABELS], s.value)
        yield fam


class DeschedulerMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.pods_evicted = Counter(
            "pods_evicted", "Number of evicted pods, by the result, by the strategy, by the namespace, "
            "by the node name, by the profile", labelnames=LABELS, namespace="descheduler", registry=registry)
        self.loop_duration = Histogram(
            "loop_duration_seconds", "Time taken to complete a full descheduling cycle",
            labelnames=("type",), namespace="descheduler", registry=registry,
            buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120))
        self.strategy_duration = Histogram(
            "strategy_duration_seconds", "Time taken to complete each strategy of the descheduling operation",
            labelnames=("strategy", "profile"), namespace="descheduler", registry=registry,
            buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10))
        registry.register(_LegacyPodsEvicted(self.pods_evicted))

    def evicted(self, result: str, *, strategy: str, namespace: str, node: str, profile: str) -> None:
        self.pods_evicted.labels(result, strategy, namespace, node, profile).inc()
