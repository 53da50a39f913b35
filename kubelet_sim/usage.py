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

Cumulative cpu (the kubelet's `usageCoreNanoSeconds`, `*_cpu_usage_seconds_total`): each sample
also advances a counter per container run, per pod, per node and per node's `pods` cgroup, taking
the rate seen at the previous sample as the rate until this one (a new counter assumes its first
rate since the container's `startedAt`, the pod's `startTime` or the kubelet's start). Counters
never go back; a container restart starts a new one. Worked example: a container seen at 20m
30 s after it started reports 0.6 core-seconds; seen again 10 s later at 120m, 0.8 (20m for those
10 s); 10 s after that, 2.0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Any

from minik3s.api.helpers.resources import quantity_to_int
from minik3s.api.metrics import ContainerUsage, KubeletStats, NodeUsage, PodUsage
from minik3s.api.types import JsonDict
from minik3s.utils.clock import Clock, parse_time

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


@dataclass(slots=True)
class _Counter:
    """A cumulative cpu counter: its total at `at` (epoch seconds) and the rate seen then."""

    at: float
    rate_milli: int
    total_ns: int


def _advance(counters: dict[tuple[str, ...], _Counter], key: tuple[str, ...], now: float, rate_milli: int,
             started: float) -> int:
    """Advance `key`'s counter to `now` at the rate of its previous sample (a new one: at
    `rate_milli` since `started`); remember `rate_milli` for the next; return the total."""
    c = counters.get(key)
    if c is None:
        total = rate_milli * 1_000_000 * max(0.0, now - started)
    else:
        total = c.total_ns + c.rate_milli * 1_000_000 * max(0.0, now - c.at)
    out = int(total)
    counters[key] = _Counter(now, rate_milli, out)
    return out


def _epoch(value: Any, default: float) -> float:
    t = parse_time(value)
    return t.timestamp() if t is not None else default


def _container_run(pod: JsonDict, name: str) -> tuple[str, Any]:
    """(an id of the container's current run, when it started) from the pod's status."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        if cs.get("name") == name:
            running = (cs.get("state") or {}).get("running") or {}
            return str(cs.get("containerID") or cs.get("restartCount") or 0), running.get("startedAt")
    return "", None


class UsageSource:
    """Implements `minik3s.api.metrics.UsageProvider` and `KubeletProvider` over the fleet's
    informer stores."""

    def __init__(self, *, pods: Any, services: Any, endpoints: Any, node_names: Callable[[], list[str]],
                 clock: Clock, kubelet_config: Callable[[str], JsonDict] | None = None) -> None:
        """`node_names()`: the simulated nodes whose kubelet answers (not failed); pods and nodes
        elsewhere have no samples, as metrics-server has none for an unreachable kubelet.
        `kubelet_config(node)`: the KubeletConfiguration that node's kubelet runs with."""
        self._pods = pods
        self._services = services
        self._endpoints = endpoints
        self._node_names = node_names
        self._clock = clock
        self._kubelet_config = kubelet_config
        self._started = clock.now()  # the kubelets start with the fleet
        self._counters: dict[tuple[str, ...], _Counter] = {}

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

    def _pod_sample(self, pod: JsonDict, shares: dict[tuple[str, str], tuple[int, int]], now: datetime) -> PodUsage:
        """One running pod's usage, its cumulative counters advanced to `now`."""
        meta = pod.get("metadata") or {}
        ns, name, uid = meta.get("namespace") or "", meta.get("name") or "", str(meta.get("uid") or "")
        t = now.timestamp()
        pod_start = _epoch((pod.get("status") or {}).get("startTime"), t)
        containers = []
        for c in self._sample(pod, shares.get((ns, name), (0, 0))):
            run, started = _container_run(pod, c.name)
            total = _advance(self._counters, ("container", uid, c.name, run), t, c.cpu_milli,
                             _epoch(started, pod_start))
            containers.append(ContainerUsage(c.name, c.cpu_milli, c.memory_bytes, total))
        pod_total = _advance(self._counters, ("pod", uid), t, sum(c.cpu_milli for c in containers), pod_start)
        return PodUsage(ns, name, tuple(containers), now, WINDOW_SECONDS, uid=uid, cpu_core_nanoseconds=pod_total)

    def _forget_gone(self, running_uids: set[str]) -> None:
        """Drop the counters of pods that no longer run (a full pass saw every running pod)."""
        for key in [k for k in self._counters if k[0] in ("container", "pod") and k[1] not in running_uids]:
            del self._counters[key]

    def pod_usage(self, namespace: str | None = None) -> list[PodUsage]:
        now = self._clock.now()
        shares = self._load_shares()
        out: list[PodUsage] = []
        uids: set[str] = set()
        for pod in self._running():
            meta = pod.get("metadata") or {}
            uids.add(str(meta.get("uid") or ""))
            if namespace and (meta.get("namespace") or "") != namespace:
                continue
            out.append(self._pod_sample(pod, shares, now))
        self._forget_gone(uids)
        return out

    def _node_sample(self, node: str, pods: list[PodUsage], now: datetime) -> NodeUsage:
        cpu = sum(p.cpu_milli for p in pods) + NODE_OVERHEAD_CPU_MILLI
        mem = sum(p.memory_bytes for p in pods) + NODE_OVERHEAD_MEMORY
        total = _advance(self._counters, ("node", node), now.timestamp(), cpu, self._started.timestamp())
        return NodeUsage(node, cpu, mem, now, WINDOW_SECONDS, cpu_core_nanoseconds=total)

    def node_usage(self) -> list[NodeUsage]:
        now = self._clock.now()
        shares = self._load_shares()
        by_node: dict[str, list[PodUsage]] = {}
        uids: set[str] = set()
        for pod in self._running():
            uids.add(str((pod.get("metadata") or {}).get("uid") or ""))
            by_node.setdefault(str((pod.get("spec") or {}).get("nodeName")), []).append(
                self._pod_sample(pod, shares, now))
        self._forget_gone(uids)
        return [self._node_sample(node, by_node.get(node, []), now) for node in self._node_names()]

    def kubelet_stats(self, node: str) -> KubeletStats | None:
        """`node`'s kubelet view (`KubeletProvider`); None unless its simulated kubelet answers."""
        if self._kubelet_config is None or node not in self._node_names():
            return None
        now = self._clock.now()
        shares = self._load_shares()
        pods: list[PodUsage] = []
        uids: set[str] = set()
        for pod in self._running():
            uids.add(str((pod.get("metadata") or {}).get("uid") or ""))
            if (pod.get("spec") or {}).get("nodeName") == node:
                pods.append(self._pod_sample(pod, shares, now))
        self._forget_gone(uids)
        cpu = sum(p.cpu_milli for p in pods)
        pods_total = _advance(self._counters, ("pods", node), now.timestamp(), cpu, self._started.timestamp())
        return KubeletStats(node=self._node_sample(node, pods, now), pods=tuple(pods), pods_cpu_milli=cpu,
                            pods_memory_bytes=sum(p.memory_bytes for p in pods), pods_cpu_core_nanoseconds=pods_total,
                            started=self._started, config=self._kubelet_config(node))
