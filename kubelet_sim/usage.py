"""Simulated resource usage of running pods and of simulated nodes (layer L4, kubelet_sim).

Why: metrics-server reads usage from each kubelet's resource-metrics endpoint; here the kubelet
fleet answers from its informer caches, computing a sample on demand so a changed annotation or
a new endpoint shows within one informer event (no polling loop).

A running pod on one of our nodes uses, per container:
  base  = the pod annotation `sim.minik3s.io/cpu-usage` / `sim.minik3s.io/memory-usage`
          (a quantity for the whole pod, split over its containers by their requests) or, when
          absent, DEFAULT_USAGE_FRACTION (10 %) of the container's requests;
  load  = for each Service whose Endpoints list the pod as a ready address, that Service's
          annotation `sim.minik3s.io/cpu-load` / `sim.minik3s.io/memory-load` (total demand)
          divided by the number of ready addresses, split over containers by requests.
Worked example: 3 ready pods requesting 200m behind a Service with cpu-load 900m each use
20m (10 % of 200m) + 300m = 320m; at 9 pods, 20m + 100m = 120m.
A node uses the sum over its running pods plus NODE_OVERHEAD (system daemons).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any

from minik3s.api.helpers.resources import quantity_to_int
from minik3s.api.metrics import ContainerUsage, NodeUsage, PodUsage
from minik3s.api.types import JsonDict
from minik3s.utils.clock import Clock

CPU_USAGE = "sim.minik3s.io/cpu-usage"
MEMORY_USAGE = "sim.minik3s.io/memory-usage"
CPU_LOAD = "sim.minik3s.io/cpu-load"
MEMORY_LOAD = "sim.minik3s.io/memory-load"
DEFAULT_USAGE_FRACTION = Fraction(1, 10)
NODE_OVERHEAD_CPU_MILLI = 50
NODE_OVERHEAD_MEMORY = 128 * 1024 * 1024
WINDOW_SECONDS = 15.0  # the window metrics-server reports (its default --metric-resolution, 15 s)


def _container_requests(c: JsonDict) -> tuple[int, int]:
    req = ((c.get("resources") or {}).get("requests")) or {}
    return quantity_to_int("cpu", req.get("cpu", 0)), quantity_to_int("memory", req.get("memory", 0))


def _split(total: int, weights: list[int]) -> list[int]:
    """`total` over len(weights) parts in proportion to weights (equal when all are 0)."""
    n = len(weights)
    if n == 0:
        return []
    w = weights if sum(weights) > 0 else [1] * n
    s = sum(w)
    parts = [total * x // s for x in w]
    parts[0] += total - sum(parts)
    return parts


class UsageSource:
    """Implements `minik3s.api.metrics.UsageProvider` over the fleet's informer stores."""

    def __init__(self, *, pods: Any, services: Any, endpoints: Any, node_names: Callable[[], list[str]],
                 clock: Clock) -> None:
        """`node_names()`: the simulated nodes whose kubelet answers (not failed); pods and nodes
        elsewhere have no samples, as metrics-server has none for an unreachable kubelet."""
        self._pods = pods
        self._services = services
        self._endpoints = endpoints
        self._node_names = node_names
        self._clock = clock

    def _running(self) -> Iterable[JsonDict]:
        live = set(self._node_names())
        for pod in self._pods.store.list():
            if (pod.get("status") or {}).get("phase") != "Running":
                continue
            if (pod.get("spec") or {}).get("nodeName") not in live:
                continue
            if (pod.get("metadata") or {}).get("deletionTimestamp"):
                continue
            yield pod

    def _load_shares(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(namespace, pod) -> (cpu milli, memory bytes) of Service load on it."""
        out: dict[tuple[str, str], tuple[int, int]] = {}
        for svc in self._services.store.list():
            meta = svc.get("metadata") or {}
            ann = meta.get("annotations") or {}
            if CPU_LOAD not in ann and MEMORY_LOAD not in ann:
                continue
            ns, name = meta.get("namespace") or "", meta.get("name") or ""
            ep = self._endpoints.store.get(f"{ns}/{name}")
            targets: list[str] = []
            for subset in (ep or {}).get("subsets") or ():
                for addr in subset.get("addresses") or ():
                    ref = addr.get("targetRef") or {}
                    if ref.get("kind") == "Pod" and ref.get("name") and ref["name"] not in targets:
                        targets.append(ref["name"])
            if not targets:
                continue
            cpu = quantity_to_int("cpu", ann.get(CPU_LOAD, 0)) // len(targets)
            mem = quantity_to_int("memory", ann.get(MEMORY_LOAD, 0)) // len(targets)
            for t in targets:
                c0, m0 = out.get((ns, t), (0, 0))
                out[(ns, t)] = (c0 + cpu, m0 + mem)
        return out

    def _sample(self, pod: JsonDict, load: tuple[int, int]) -> tuple[ContainerUsage, ...]:
        meta = pod.get("metadata") or {}
        ann = meta.get("annotations") or {}
        containers = (pod.get("spec") or {}).get("containers") or []
        reqs = [_container_requests(c) for c in containers]
        cpu_w = [r[0] for r in reqs]
        mem_w = [r[1] for r in reqs]
        if CPU_USAGE in ann:
            cpu_base = _split(quantity_to_int("cpu", ann[CPU_USAGE]), cpu_w)
        else:
            cpu_base = [int(r * DEFAULT_USAGE_FRACTION) for r in cpu_w]
        if MEMORY_USAGE in ann:
            mem_base = _split(quantity_to_int("memory", ann[MEMORY_USAGE]), mem_w)
        else:
            mem_base = [int(r * DEFAULT_USAGE_FRACTION) for r in mem_w]
        cpu_load = _split(load[0], cpu_w)
        mem_load = _split(load[1], mem_w)
        return tuple(ContainerUsage(str(c.get("name") or ""), cpu_base[i] + cpu_load[i], mem_base[i] + mem_load[i])
                     for i, c in enumerate(containers))

    def pod_usage(self, namespace: str | None = None) -> list[PodUsage]:
        now = self._clock.now()
        shares = self._load_shares()
        out: list[PodUsage] = []
        for pod in self._running():
            meta = pod.get("metadata") or {}
            ns, name = meta.get("namespace") or "", meta.get("name") or ""
            if namespace and ns != namespace:
                continue
            out.append(PodUsage(ns, name, self._sample(pod, shares.get((ns, name), (0, 0))), now, WINDOW_SECONDS))
        return out

    def node_usage(self) -> list[NodeUsage]:
        now = self._clock.now()
        shares = self._load_shares()
        totals: dict[str, list[int]] = {}
        for pod in self._running():
            meta = pod.get("metadata") or {}
            node = str((pod.get("spec") or {}).get("nodeName"))
            cs = self._sample(pod, shares.get((meta.get("namespace") or "", meta.get("name") or ""), (0, 0)))
            acc = totals.setdefault(node, [0, 0])
            acc[0] += sum(c.cpu_milli for c in cs)
            acc[1] += sum(c.memory_bytes for c in cs)
        out: list[NodeUsage] = []
        for node in self._node_names():
            cpu, mem = totals.get(node, [0, 0])
            out.append(NodeUsage(node, cpu + NODE_OVERHEAD_CPU_MILLI, mem + NODE_OVERHEAD_MEMORY, now, WINDOW_SECONDS))
        return out
