"""Benchmark: scheduling throughput in kube-scheduler `scheduler_perf` shapes, through a real
in-process minik3s server (API server + SQLite storage + watch + the embedded scheduler).

    python -m bench.bench_scheduler [--shape S ...] [--scale 0.2] [--no-hostname] [--runs 3]
    python -m bench.bench_scheduler [--workload SchedulingBasic] [--nodes 500,5000] [--runs 3]
                                    [--percentage-of-nodes-to-score 0] [--profile out.prof]

Default (no --workload / --performance): issue 14's pre-filled-queue shapes (`PREFILLED`): nodes,
bound init pods and every measured pod are created with the scheduler off, then the scheduler
starts; throughput from each pod's PodScheduled time in 1-s samples, printed next to the real
kube-scheduler's figure for the shape and as a ratio, plus the longest watch gap, loop stall and
storage commit of the burst (see `run_prefilled`). The rest of this text describes the older
`--workload` / `--performance` mode, where measured pods are created while the scheduler runs.

Why: upstream's CI floors (SchedulingBasic 5000Nodes_10000Pods 680 pods/s, TopologySpreading
460) are the yardstick the scheduler is held to (upstream test/integration/scheduler_perf).

Shape, as scheduler_perf's templates: nodes are plain API objects (no kubelets) with capacity
4 CPU / 32Gi / 110 pods and a Ready condition; pods request 100m / 500Mi (limits equal). Init
pods are created and bound first (not measured); then the measured pods are created by 32
concurrent creators while the scheduler runs. A pod counts once the pod informer sees its
`spec.nodeName` set (the binding landed in storage and came back through the watch).

Figures per run:
- throughput: scheduler_perf's collector. Every 1 s count bound measured pods; the first
  non-zero sample is skipped (it mixes start-up); an interval with no new pods is folded into
  the next one. Reported as average / p50 / p90 / p95 / p99 of the per-interval samples, plus
  `overall` = measured pods / (last binding - first creation).
- latency: end to end per pod, from just before its create request to the informer seeing it
  bound (creation -> binding, queueing included). Reported p50 / p90 / p99 in ms.
With `--runs N` each figure is the median over the runs. `--performance` runs upstream's CI
variants at 5,000 nodes (SchedulingBasic 1000/10000, threshold 680; SchedulingPodAntiAffinity
1000/2000, threshold 60; TopologySpreading 5000/5000, threshold 460). `--gc-freeze` freezes the
heap after the init pods (Python's full collections otherwise pause the loop 100-250 ms).

Workloads (node counts selectable with --nodes; init/measured counts follow upstream):
- SchedulingBasic: default pods. 500 nodes: 500 init / 1000 measured; 5000: 1000 / 1000
  (upstream's "5000Nodes" short variant).
- SchedulingPodAntiAffinity: namespaces sched-0 (init) and sched-1 (measured); pods labelled
  color=green with required anti-affinity to color=green on kubernetes.io/hostname over both
  namespaces. 500 nodes: 100 / 400; 5000: 1000 / 1000. Nodes carry kubernetes.io/hostname (every
  real node does; upstream's template does not, `--no-hostname` reproduces that).
- TopologySpreading: nodes labelled topology.kubernetes.io/zone zone-0/1/2 (round robin, on every
  workload); init pods default (the pre-filled shape: color=blue without a constraint); measured pods color=blue spread on zone, maxSkew 5, DoNotSchedule.
  500 nodes: 1000 / 1000; 5000: 5000 / 2000 (upstream's "5000Nodes" variant).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import logging
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import emit, pct
from bench.watch_clients import WatchClients, arrival_lags
from minik3s import server
from minik3s.api.resources import NAMESPACES, NODES, PODS, SERVICEACCOUNTS
from minik3s.config import ServerConfig

logger = logging.getLogger(__name__)

ZONE_KEY = "topology.kubernetes.io/zone"
HOSTNAME_KEY = "kubernetes.io/hostname"
ZONES = ("zone-0", "zone-1", "zone-2")
CREATORS = 32
SAMPLE_INTERVAL = 1.0  # upstream throughputSampleInterval

# workload -> node count -> (init pods, measured pods)
COUNTS: dict[str, dict[int, tuple[int, int]]] = {
    "SchedulingBasic": {500: (500, 1000), 5000: (1000, 1000)},
    "SchedulingPodAntiAffinity": {500: (100, 400), 5000: (1000, 1000)},
    "TopologySpreading": {500: (1000, 1000), 5000: (5000, 2000)},
}
# `--prefilled` (the default): issue 14's shapes, name -> (workload, nodes, init, measured, anchor).
# Anchors: the real kube-scheduler v1.33.3 on a 2-core machine with an in-memory API, same shapes.
PREFILLED: dict[str, tuple[str, int, int, int, float]] = {
    "SchedulingBasic/5000Nodes": ("SchedulingBasic", 5000, 1000, 10000, 799.0),
    "TopologySpreading/5000Nodes": ("TopologySpreading", 5000, 1000, 3000, 288.0),
    "SchedulingPodAntiAffinity/5000Nodes": ("SchedulingPodAntiAffinity", 5000, 1000, 1000, 223.0),
    "SchedulingBasic/500Nodes": ("SchedulingBasic", 500, 500, 2000, 1600.0),
}
# `--performance`: upstream's CI variants at 5,000 nodes -> (init, measured, threshold pods/s)
PERFORMANCE: dict[str, tuple[int, int, int]] = {
    "SchedulingBasic": (1000, 10000, 680),         # 5000Nodes_10000Pods
    "SchedulingPodAntiAffinity": (1000, 2000, 60),  # 5000Nodes_2000Pods
    "TopologySpreading": (5000, 5000, 460),       # 5000Nodes_5000Pods
}


def _container() -> dict[str, Any]:
    res = {"cpu": "100m", "memory": "500Mi"}
    return {"name": "pause", "image": "registry.k8s.io/pause:3.10", "ports": [{"containerPort": 80}],
            "resources": {"requests": dict(res), "limits": dict(res)}}


def default_pod(name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [_container()]}}


def anti_affinity_pod(name: str, namespace: str) -> dict[str, Any]:
    pod = default_pod(name, namespace)
    pod["metadata"]["labels"] = {"color": "green"}
    pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"color": "green"}},
        "topologyKey": "kubernetes.io/hostname",
        "namespaces": ["sched-1", "sched-0"],
    }]}}
    return pod


def spreading_pod(name: str, namespace: str) -> dict[str, Any]:
    pod = default_pod(name, namespace)
    pod["metadata"]["labels"] = {"color": "blue"}
    pod["spec"]["topologySpreadConstraints"] = [{
        "maxSkew": 5, "topologyKey": ZONE_KEY, "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"color": "blue"}},
    }]
    return pod


def node_name(i: int) -> str:
    return f"scheduler-perf-{i:05d}"


def node_labels(i: int, *, hostname: bool = True) -> dict[str, str]:
    """Every real node carries its hostname label (upstream's node template has none; the
    `--no-hostname` flag reproduces that), and a zone label zone-0/1/2 round robin."""
    labels = {ZONE_KEY: ZONES[i % len(ZONES)]}
    if hostname:
        labels[HOSTNAME_KEY] = node_name(i)
    return labels


def blue_pod(name: str, namespace: str) -> dict[str, Any]:
    pod = default_pod(name, namespace)
    pod["metadata"]["labels"] = {"color": "blue"}
    return pod


def node_obj(i: int, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node_name(i), "labels": labels},
            "spec": {},
            "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
                       "conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"}}


@dataclass(slots=True)
class Workload:
    name: str
    nodes: int
    init_pods: int
    measured_pods: int
    node_labels: Callable[[int], dict[str, str]]
    init_ns: str
    measured_ns: str
    init_pod: Callable[[str, str], dict[str, Any]]
    measured_pod: Callable[[str, str], dict[str, Any]]
    namespaces: list[str] = field(default_factory=list)


def make_workload(name: str, nodes: int, *, hostname: bool = True) -> Workload:
    counts = COUNTS[name]
    init, measured = counts.get(nodes) or counts[min(counts, key=lambda k: abs(k - nodes))]
    wl = make_workload_counts(name, nodes, init, measured, hostname=hostname)
    if name == "TopologySpreading":
        wl.init_pod = default_pod  # upstream's CI template: default init pods
    return wl


def make_workload_counts(name: str, nodes: int, init: int, measured: int, *, hostname: bool = True) -> Workload:
    def labels(i: int) -> dict[str, str]:
        return node_labels(i, hostname=hostname)

    if name == "SchedulingBasic":
        return Workload(name, nodes, init, measured, labels, "default", "default", default_pod, default_pod)
    if name == "SchedulingPodAntiAffinity":
        return Workload(name, nodes, init, measured, labels, "sched-0", "sched-1",
                        anti_affinity_pod, anti_affinity_pod, ["sched-0", "sched-1"])
    if name == "TopologySpreading":
        return Workload(name, nodes, init, measured, labels, "default", "default", blue_pod, spreading_pod)
    raise ValueError(f"unknown workload {name!r}")


class BindWatcher:
    """Records when the pod informer first sees each pod of interest bound."""

    def __init__(self) -> None:
        self.bound_at: dict[str, float] = {}
        self.measured_prefix = ""
        self.measured_bound = 0
        self.wake = asyncio.Event()

    def on_add(self, obj: dict[str, Any]) -> None:
        self._see(obj)

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self._see(new)

    def _see(self, obj: dict[str, Any]) -> None:
        if not (obj.get("spec") or {}).get("nodeName"):
            return
        name = obj["metadata"]["name"]
        if name in self.bound_at:
            return
        self.bound_at[name] = time.monotonic()
        if self.measured_prefix and name.startswith(self.measured_prefix):
            self.measured_bound += 1
        self.wake.set()


async def _create_all(rs: Any, objs: list[dict[str, Any]], created_at: dict[str, float] | None,
                      *, resource: Any = PODS) -> None:
    it = iter(objs)

    async def creator() -> None:
        for obj in it:
            if created_at is not None:
                created_at[obj["metadata"]["name"]] = time.monotonic()
            await rs.client.create(resource, obj, obj["metadata"].get("namespace"))

    async with asyncio.TaskGroup() as tg:
        for i in range(CREATORS):
            tg.create_task(creator(), name=f"bench-creator-{i}")


async def _wait(cond: Callable[[], bool], watcher: BindWatcher, timeout: float, what: str,
                tasks: list[asyncio.Task[Any]]) -> None:
    async with asyncio.timeout(timeout):
        while not cond():
            for t in tasks:
                if t.done() and not t.cancelled() and t.exception() is not None:
                    raise RuntimeError(f"task {t.get_name()} failed") from t.exception()
            watcher.wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await watcher.wake.wait()
    logger.info("done: %s", what)


async def _sample(watcher: BindWatcher, samples: list[float], sched: Any) -> None:
    """scheduler_perf's throughputCollector over the measured pods."""
    last_count = watcher.measured_bound
    last_time = time.monotonic()
    started = False
    while True:
        await asyncio.sleep(SAMPLE_INTERVAL)
        now = time.monotonic()
        scheduled = watcher.measured_bound
        logger.info("sample: measured bound=%d scheduler bound total=%d activeQ=%d pending api writes=%d",
                    scheduled, sched.scheduled_count, sched.queue.active_len(), sched.writer.pending())
        if scheduled == 0:
            continue
        if not started:
            started = True
            last_count, last_time = scheduled, now
            continue
        new = scheduled - last_count
        if new == 0:
            continue  # folded into the next interval, as upstream's `skipped`
        dur = now - last_time
        skipped = max(0, round(dur / SAMPLE_INTERVAL) - 1)
        rate = new / dur
        samples.extend([rate] * (skipped + 1))
        last_count, last_time = scheduled, now


class LoopWatch:
    """Event-loop health during the measured phase: the longest stall of a 10 ms ticker and the
    cyclic GC's pauses (via gc.callbacks), so throughput dips can be told apart."""

    def __init__(self) -> None:
        self.max_stall = 0.0
        self.gc_pauses: list[float] = []
        # every collection's time by generation (young ones too: they run per 50,000 allocations)
        self.gc_seconds = [0.0, 0.0, 0.0]
        self.gc_counts = [0, 0, 0]
        self._gc_start = 0.0

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
            return
        took = time.perf_counter() - self._gc_start
        gen = int(info.get("generation", 0))
        self.gc_seconds[gen] += took
        self.gc_counts[gen] += 1
        if gen == 2:
            self.gc_pauses.append(took)

    async def run(self) -> None:
        gc.callbacks.append(self._gc)
        try:
            while True:
                t = time.monotonic()
                await asyncio.sleep(0.01)
                self.max_stall = max(self.max_stall, time.monotonic() - t - 0.01)
        finally:
            gc.callbacks.remove(self._gc)


async def run_once(wl: Workload, *, percentage: int | None, profile: str | None,
                   gc_freeze: bool = False) -> dict[str, Any]:
    from scheduler.config import parse_config
    from scheduler.scheduler import Scheduler

    with tempfile.TemporaryDirectory(prefix="bench-sched-") as d:
        cfg = ServerConfig(port=0, data_dir=Path(d),
                           disable={"kubelet", "controllers", "scheduler", "descheduler"})
        rs = await server.start(cfg)
        tasks: list[asyncio.Task[Any]] = []
        try:
            for ns in wl.namespaces:
                await rs.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": ns}})
            t0 = time.monotonic()
            nodes = [node_obj(i, wl.node_labels(i)) for i in range(wl.nodes)]
            node_it = iter(nodes)

            async def node_creator() -> None:
                for n in node_it:
                    await rs.client.create(NODES, n)

            async with asyncio.TaskGroup() as tg:
                for i in range(CREATORS):
                    tg.create_task(node_creator(), name=f"bench-node-creator-{i}")
            nodes_s = time.monotonic() - t0
            sched_cfg = parse_config({"percentageOfNodesToScore": percentage}) if percentage is not None else None
            sched = Scheduler(sched_cfg, client=rs.client, informers=rs.informers)
            watcher = BindWatcher()
            rs.informers.informer(PODS).add_handler(on_add=watcher.on_add, on_update=watcher.on_update)
            tasks.append(asyncio.create_task(rs.informers.run(), name="bench-informers"))
            tasks.append(asyncio.create_task(sched.run(), name="bench-scheduler"))
            await rs.informers.wait_for_sync()
            # init pods: scheduled, not measured
            t1 = time.monotonic()
            init = [wl.init_pod(f"init-{i:06d}", wl.init_ns) for i in range(wl.init_pods)]
            await _create_all(rs, init, None)
            await _wait(lambda: sum(1 for k in watcher.bound_at if k.startswith("init-")) >= wl.init_pods,
                        watcher, 600, "init pods bound", tasks)
            init_s = time.monotonic() - t1
            if gc_freeze:  # what a server could do once synced: move the live heap out of GC's way
                gc.collect()
                gc.freeze()
            # measured pods
            watcher.measured_prefix = "measured-"
            samples: list[float] = []
            created_at: dict[str, float] = {}
            measured = [wl.measured_pod(f"measured-{i:06d}", wl.measured_ns) for i in range(wl.measured_pods)]
            sampler = asyncio.create_task(_sample(watcher, samples, sched), name="bench-sampler")
            loop_watch = LoopWatch()
            watch_task = asyncio.create_task(loop_watch.run(), name="bench-loop-watch")
            prof = cProfile.Profile() if profile else None
            if prof is not None:
                prof.enable()
            t2 = time.monotonic()
            await _create_all(rs, measured, created_at)
            created_s = time.monotonic() - t2
            await _wait(lambda: watcher.measured_bound >= wl.measured_pods, watcher, 900,
                        "measured pods bound", tasks)
            if prof is not None:
                prof.disable()
                prof.dump_stats(profile or "")
            for t in (sampler, watch_task):
                t.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await t
            last = max(watcher.bound_at[n] for n in created_at)
            lat = [(watcher.bound_at[n] - t) * 1000 for n, t in created_at.items()]
            overall = wl.measured_pods / (last - t2)
            if not samples:  # shorter than two sample intervals: one sample over the whole run
                samples = [overall]
            return {
                "setup_nodes_seconds": round(nodes_s, 2),
                "init_pods_seconds": round(init_s, 2),
                "create_measured_seconds": round(created_s, 2),
                "throughput_average": round(statistics.fmean(samples), 1),
                "throughput_p50": round(pct(samples, 50), 1),
                "throughput_p90": round(pct(samples, 90), 1),
                "throughput_p95": round(pct(samples, 95), 1),
                "throughput_p99": round(pct(samples, 99), 1),
                "throughput_samples": len(samples),
                "throughput_overall": round(overall, 1),
                "latency_p50_ms": round(pct(lat, 50), 1),
                "latency_p90_ms": round(pct(lat, 90), 1),
                "latency_p99_ms": round(pct(lat, 99), 1),
                "loop_max_stall_ms": round(loop_watch.max_stall * 1000, 1),
                "gc_full_collections": len(loop_watch.gc_pauses),
                "gc_full_pause_total_ms": round(sum(loop_watch.gc_pauses) * 1000, 1),
                "gc_full_pause_max_ms": round(max(loop_watch.gc_pauses, default=0.0) * 1000, 1),
            }
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await server.stop(rs)
            if gc_freeze:
                gc.unfreeze()


def podscheduled_samples(pods: list[dict[str, Any]], prefix: str) -> tuple[list[float], int]:
    """scheduler_perf-style 1-s samples from each measured pod's PodScheduled lastTransitionTime
    (second resolution, as on the wire): pods bound per wall-clock second, the first and the last
    second dropped (partial). Returns (samples, bound measured pods)."""
    per_second: dict[str, int] = {}
    bound = 0
    for pod in pods:
        if not pod["metadata"]["name"].startswith(prefix):
            continue
        for c in (pod.get("status") or {}).get("conditions") or ():
            if c.get("type") == "PodScheduled" and c.get("status") == "True" and c.get("lastTransitionTime"):
                per_second[c["lastTransitionTime"]] = per_second.get(c["lastTransitionTime"], 0) + 1
                bound += 1
                break
    if not per_second:
        return [], 0
    from minik3s.utils.clock import parse_time

    secs = sorted((int(t.timestamp()), v) for k, v in per_second.items() if (t := parse_time(k)) is not None)
    first, last = secs[0][0], secs[-1][0]
    counts = dict(secs)
    samples = [float(counts.get(t, 0)) for t in range(first + 1, last)]
    return samples, bound


async def run_prefilled(wl: Workload, *, percentage: int | None, profile: str | None,
                        gc_freeze: bool = False, metrics: bool = True, watchers: int = 0,
                        service_accounts: bool = True) -> dict[str, Any]:
    """Issue 14's measurement: nodes, init pods (created bound, round robin over the nodes) and
    all measured pods are created with the scheduler off; then the scheduler starts and drains the
    pre-filled queue. Creation stays out of the timed window; throughput is counted from each
    pod's PodScheduled time; a watcher on the measured namespace records the longest gap between
    two watch events during the burst (watch delivery must not starve behind scheduling).

    `watchers`: that many HTTP watch streams on the measured namespace's pods, opened before the
    burst by a child process (bench.watch_clients); 20 of them record when each event arrived,
    so the result also holds their lag (arrival - the write's submission to the store) and
    their longest silence during the burst, as issue 14 asks with 1,000 watchers.

    `service_accounts`: pods are admitted as `minik3s server` admits them, by the ServiceAccount
    plugin (each namespace's `default` account created as its controller would; every pod gets
    the kube-api-access-* token volume); False as upstream's scheduler_perf API server runs,
    with the plugin off."""
    from apiserver.strategies import ServiceAccountAdmission
    from scheduler.config import parse_config
    from scheduler.metrics import SchedulerMetrics
    from scheduler.scheduler import Scheduler

    with tempfile.TemporaryDirectory(prefix="bench-sched-") as d:
        cfg = ServerConfig(port=0, data_dir=Path(d),
                           disable={"kubelet", "controllers", "scheduler", "descheduler"})
        rs = await server.start(cfg)
        if service_accounts:
            rs.core.service_accounts = ServiceAccountAdmission(rs.core.rng)
        tasks: list[asyncio.Task[Any]] = []
        clients: WatchClients | None = None
        try:
            for ns in wl.namespaces:
                await rs.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": ns}})
            if service_accounts:  # what the ServiceAccount controller creates in every namespace
                for ns in sorted({"default", *wl.namespaces}):
                    await rs.client.create(SERVICEACCOUNTS, {"apiVersion": "v1", "kind": "ServiceAccount",
                                                             "metadata": {"name": "default", "namespace": ns}})
            t0 = time.monotonic()
            await _create_all(rs, [node_obj(i, wl.node_labels(i)) for i in range(wl.nodes)], None,
                              resource=NODES)
            nodes_s = time.monotonic() - t0
            init = []
            for i in range(wl.init_pods):
                pod = wl.init_pod(f"init-{i:06d}", wl.init_ns)
                pod["spec"]["nodeName"] = node_name(i % wl.nodes)
                init.append(pod)
            t1 = time.monotonic()
            await _create_all(rs, init, None)
            init_s = time.monotonic() - t1
            measured = [wl.measured_pod(f"measured-{i:06d}", wl.measured_ns) for i in range(wl.measured_pods)]
            t2 = time.monotonic()
            await _create_all(rs, measured, None)
            created_s = time.monotonic() - t2
            sched_cfg = parse_config({"percentageOfNodesToScore": percentage}) if percentage is not None else None
            # with the Prometheus scheduler metrics, as `minik3s server` runs it
            sched = Scheduler(sched_cfg, client=rs.client, informers=rs.informers,
                              metrics=SchedulerMetrics(rs.metrics) if metrics else None)
            watcher = BindWatcher()
            watcher.measured_prefix = "measured-"
            rs.informers.informer(PODS).add_handler(on_add=watcher.on_add, on_update=watcher.on_update)
            tasks.append(asyncio.create_task(rs.informers.run(), name="bench-informers"))
            await rs.informers.wait_for_sync()
            await _wait(lambda: sum(1 for k in watcher.bound_at if k.startswith("init-")) >= wl.init_pods,
                        watcher, 600, "init pods synced", tasks)
            watcher.measured_bound = 0  # none is bound yet: the scheduler has not run
            if gc_freeze:
                gc.collect()
                gc.freeze()
            commits = CommitTimes(rs.store)
            gap = WatchGap()
            gap.track_submissions(rs.store, wl.measured_ns)
            tasks.append(asyncio.create_task(gap.run(rs, wl.measured_ns), name="bench-watch-gap"))
            if watchers:
                listed0 = await rs.client.list(PODS, wl.measured_ns, limit=1)
                clients = WatchClients(rs.url, f"/api/v1/namespaces/{wl.measured_ns}/pods",
                                       listed0["metadata"]["resourceVersion"], watchers=watchers,
                                       measured=min(20, watchers), out=Path(d) / "watch-clients.json")
                await clients.ready()
            loop_watch = LoopWatch()
            watch_task = asyncio.create_task(loop_watch.run(), name="bench-loop-watch")
            prof = cProfile.Profile() if profile else None
            if prof is not None:
                prof.enable()
            logger.info("burst: scheduler starting (pid %d)", os.getpid())
            cpu_loop0, cpu_all0 = time.thread_time(), time.process_time()  # the loop runs on this thread
            t3 = time.monotonic()
            tasks.append(asyncio.create_task(sched.run(), name="bench-scheduler"))
            await _wait(lambda: watcher.measured_bound >= wl.measured_pods, watcher, 1800,
                        "measured pods bound", tasks)
            cpu_loop, cpu_all = time.thread_time() - cpu_loop0, time.process_time() - cpu_all0
            if prof is not None:
                prof.disable()
                prof.dump_stats(profile or "")
            watch_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch_task
            gap.stop = True
            if gap.long_gaps:
                logger.warning("watch gaps > 0.5 s (events before, seconds): %s", gap.long_gaps[:20])
            last = max(watcher.bound_at[p["metadata"]["name"]] for p in measured)
            overall = wl.measured_pods / (last - t3)
            many: dict[str, Any] = {}
            if clients is not None:
                await asyncio.sleep(1.0)  # the last events' delivery
                many = {"watchers": watchers,
                        **_watch_clients_result(clients.stop(), gap.submitted, t3, last)}
                clients = None
            listed = await rs.client.list(PODS, wl.measured_ns)
            samples, bound = podscheduled_samples(listed.get("items") or [], "measured-")
            if bound != wl.measured_pods:
                raise RuntimeError(f"{bound} of {wl.measured_pods} measured pods carry PodScheduled=True")
            if not samples:
                samples = [overall]
            return {
                "setup_nodes_seconds": round(nodes_s, 2),
                "create_init_seconds": round(init_s, 2),
                "create_measured_seconds": round(created_s, 2),
                "throughput_average": round(statistics.fmean(samples), 1),
                "throughput_p50": round(pct(samples, 50), 1),
                "throughput_p90": round(pct(samples, 90), 1),
                "throughput_p99": round(pct(samples, 99), 1),
                "throughput_samples": len(samples),
                "throughput_overall": round(overall, 1),
                # CPU per measured pod from the scheduler's start to the last bind seen: the event
                # loop's thread (scheduler, API core, informers, watch) and the whole process
                # (+ SQLite's threads); less sensitive to a shared machine's load than pods/s
                "cpu_loop_us_per_pod": round(cpu_loop / wl.measured_pods * 1e6, 1),
                "cpu_process_us_per_pod": round(cpu_all / wl.measured_pods * 1e6, 1),
                "watch_max_gap_ms": round(gap.max_gap * 1000, 1),
                "watch_lag_p50_ms": round(pct(gap.lags, 50) * 1000, 1) if gap.lags else 0.0,
                "watch_lag_p99_ms": round(pct(gap.lags, 99) * 1000, 1) if gap.lags else 0.0,
                "watch_lag_max_ms": round(max(gap.lags, default=0.0) * 1000, 1),
                "watch_events": gap.events,
                "watch_gaps_over_500ms": len(gap.long_gaps),
                "store_commit_max_ms": round(commits.max * 1000, 1),
                "store_commits_over_500ms": commits.slow,
                "store_commit_max_ops": commits.max_ops,
                "store_txn_max_ms": round(getattr(rs.store.stats, "commit_max_seconds", 0.0) * 1000, 1),
                "store_checkpoints": getattr(rs.store.stats, "checkpoints", 0),
                "loop_max_stall_ms": round(loop_watch.max_stall * 1000, 1),
                "gc_full_collections": len(loop_watch.gc_pauses),
                "gc_full_pause_max_ms": round(max(loop_watch.gc_pauses, default=0.0) * 1000, 1),
                "gc_collections_by_generation": list(loop_watch.gc_counts),
                "gc_us_per_pod": round(sum(loop_watch.gc_seconds) / wl.measured_pods * 1e6, 1),
                **many,
            }
        finally:
            if clients is not None:
                clients.kill()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await server.stop(rs)
            if gc_freeze:
                gc.unfreeze()


class CommitTimes:
    """The storage writer's durable COMMITs (SQLite, synchronous=FULL) timed: a watch only hears
    of a write after it, so a slow fsync shows up as a watch gap."""

    def __init__(self, store: Any) -> None:
        self.max = 0.0
        self.max_ops = 0
        self.slow = 0
        inner = store._write

        async def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.monotonic()
            try:
                return await inner(*args, **kwargs)
            finally:
                d = time.monotonic() - t
                if d > self.max:
                    self.max = d
                    self.max_ops = len(args[1]) if len(args) > 1 else 0
                self.slow += d > 0.5

        store._write = timed


class WatchGap:
    """A plain watch on the measured namespace (as `kubectl get pods -w`): the longest time between
    two consecutive events while the scheduler binds (from its first event to `stop`)."""

    def __init__(self) -> None:
        self.max_gap = 0.0
        self.events = 0
        self.stop = False
        self.long_gaps: list[tuple[int, float]] = []  # (events seen before, gap seconds) for gaps > 0.5 s
        self.lags: list[float] = []  # per event: watch receive - the write's submission to the store
        self.submitted: dict[str, float] = {}  # resourceVersion -> when its write was submitted

    def track_submissions(self, store: Any, namespace: str) -> None:
        """Record when each write to the namespace's pods reaches the store (its future's result
        carries the resourceVersion), so each watch event's lag is known."""
        inner = store._submit
        prefix = f"core/pods/{namespace}/"
        submitted = self.submitted

        def submit(kind: int, key: str, obj: Any, expected_rv: Any) -> Any:
            fut = inner(kind, key, obj, expected_rv)
            if key.startswith(prefix):
                t = time.monotonic()

                def done(f: Any) -> None:
                    if not f.cancelled() and f.exception() is None:
                        submitted[f.result()["metadata"]["resourceVersion"]] = t

                fut.add_done_callback(done)
            return fut

        store._submit = submit

    async def run(self, rs: Any, namespace: str) -> None:
        listed = await rs.client.list(PODS, namespace, limit=1)
        rv = listed["metadata"]["resourceVersion"]
        last: float | None = None
        async for ev in rs.client.watch(PODS, namespace, resource_version=rv):
            now = time.monotonic()
            if self.stop:
                return
            sent = self.submitted.get((ev.object.get("metadata") or {}).get("resourceVersion", ""))
            if sent is not None:
                self.lags.append(now - sent)
            if last is not None:
                self.max_gap = max(self.max_gap, now - last)
                if now - last > 0.5:
                    self.long_gaps.append((self.events, round(now - last, 3)))
            last = now
            self.events += 1


def _watch_clients_result(got: dict[str, Any], submitted: dict[str, float], start: float,
                          end: float) -> dict[str, Any]:
    """Lag and longest silence of the measured HTTP watchers over the writes submitted between
    `start` and `end` (the burst)."""
    wanted = {rv: t for rv, t in submitted.items() if start <= t <= end}
    lags, missing, longest = arrival_lags(got["seen"], wanted)
    return {
        "watchers_events": len(wanted),
        "watchers_lag_p50_ms": round(pct(lags, 50) * 1000, 1) if lags else 0.0,
        "watchers_lag_p99_ms": round(pct(lags, 99) * 1000, 1) if lags else 0.0,
        "watchers_lag_max_ms": round(max(lags, default=0.0) * 1000, 1),
        "watchers_max_gap_ms": round(longest * 1000, 1),
        "watchers_missing_events": missing,
        "watchers_bytes": got["bytes"],
    }


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the runs; list-valued figures (GC collections by generation)
    element by element."""
    def med(values: list[Any]) -> Any:
        if isinstance(values[0], list):
            return [med(list(col)) for col in zip(*values, strict=True)]
        return round(statistics.median(values), 1)

    return {k: med([r[k] for r in runs]) for k in runs[0]}


def _main_prefilled(args: argparse.Namespace) -> None:
    results: list[dict[str, Any]] = []
    loads: list[str] = []
    for shape in args.shape or list(PREFILLED):
        name, nodes, init, measured, anchor = PREFILLED[shape]
        k = args.scale
        if args.measured_pods is not None:
            measured, k_measured = args.measured_pods, 1.0
        else:
            k_measured = k
        wl = make_workload_counts(name, max(1, int(nodes * k)), int(init * k), max(1, int(measured * k_measured)),
                                  hostname=not args.no_hostname)
        runs = []
        for i in range(args.runs):
            prof = args.profile if (args.profile and i == args.runs - 1) else None
            r = asyncio.run(run_prefilled(wl, percentage=args.percentage_of_nodes_to_score, profile=prof,
                                          gc_freeze=args.gc_freeze, watchers=args.watchers,
                                          service_accounts=not args.no_service_account_admission))
            r["load_average_1m"] = round(os.getloadavg()[0], 2)
            logger.warning("%s run %d: %s", shape, i + 1, r)
            runs.append(r)
        med = _median(runs)
        tp = [r["throughput_average"] for r in runs]
        results.append({
            "workload": shape, "nodes": wl.nodes, "init_pods": wl.init_pods, "measured_pods": wl.measured_pods,
            "node_hostname_label": not args.no_hostname, "service_account_admission": not args.no_service_account_admission,
            "scale": k,
            "anchor_kube_scheduler": anchor,
            "ratio": round(med["throughput_average"] / anchor, 2),
            "spread": [min(tp), max(tp)],
            "runs": len(runs), "median": med, "all_runs": runs,
        })
        loads.append(f"{os.getloadavg()[0]:.2f}")
    print(f"{'shape':40} {'pods/s (median avg)':>20} {'anchor':>8} {'ratio':>6} {'watch gap ms':>13}")
    for r in results:
        print(f"{r['workload']:40} {r['median']['throughput_average']:>20} {r['anchor_kube_scheduler']:>8} "
              f"{r['ratio']:>6} {r['median']['watch_max_gap_ms']:>13}")
    emit("scheduler_prefilled" + ("" if args.scale == 1.0 else f"_x{args.scale}"), {
        "measurement": "pre-filled queue: nodes, bound init pods and measured pods created with the "
                       "scheduler off, then the scheduler started; throughput from PodScheduled times, "
                       "1 s samples (first/last partial second dropped)",
        "gc_freeze": args.gc_freeze, "results": results,
    })


def node_counts(nodes: str | None, *, performance: bool) -> list[int]:
    """The node counts to run: `--nodes` as given, else 500 and 5,000; upstream's CI variants
    (`--performance`) are defined at 5,000 only (SchedulingPodAntiAffinity's 1,000 init pods
    cannot all be placed on 500 hostname-labelled nodes)."""
    text = nodes or ("5000" if performance else "500,5000")
    return [int(x) for x in text.split(",") if x]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", action="append", choices=sorted(COUNTS),
                   help="repeatable; default: all three")
    p.add_argument("--nodes", default=None,
                   help="comma-separated node counts (default 500,5000; with --performance 5000, the size "
                        "upstream's CI variants are defined for)")
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--percentage-of-nodes-to-score", type=int, default=None,
                   help="global percentageOfNodesToScore; default: unset (adaptive, 50 - N/125)")
    p.add_argument("--performance", action="store_true",
                   help="upstream's CI variants (5,000 nodes, longer measured phase, with thresholds)")
    p.add_argument("--init-pods", type=int, default=None, help="override the upstream init count")
    p.add_argument("--measured-pods", type=int, default=None,
                   help="override the measured count (pre-filled shapes: not scaled by --scale; e.g. a longer burst to profile)")
    p.add_argument("--profile", default=None, help="cProfile the measured phase of the last run into this file")
    p.add_argument("--gc-freeze", action="store_true",
                   help="gc.collect() + gc.freeze() after the init pods (not done by the server itself)")
    p.add_argument("--shape", action="append", choices=sorted(PREFILLED),
                   help="pre-filled shape (repeatable; default: all four); used unless --workload/--performance")
    p.add_argument("--scale", type=float, default=1.0,
                   help="multiply the pre-filled shapes' node and pod counts (e.g. 0.2 for a quick look)")
    p.add_argument("--watchers", type=int, default=0,
                   help="pre-filled shapes: HTTP watch streams on the measured pods during the burst "
                        "(a child process; 20 of them measure lag and silence)")
    p.add_argument("--no-service-account-admission", action="store_true",
                   help="pre-filled shapes: pods admitted without the ServiceAccount plugin (no token volume), "
                        "as upstream's scheduler_perf API server runs")
    p.add_argument("--no-hostname", action="store_true",
                   help="nodes without kubernetes.io/hostname (upstream's node template)")
    p.add_argument("--log-level", default="WARNING")
    args = p.parse_args()
    logging.basicConfig(level=args.log_level)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    if not (args.workload or args.performance):
        _main_prefilled(args)
        return
    results: list[dict[str, Any]] = []
    for name in args.workload or sorted(COUNTS):
        for n in node_counts(args.nodes, performance=args.performance):
            wl = make_workload(name, n, hostname=not args.no_hostname)
            threshold = None
            if args.performance:
                wl.init_pods, wl.measured_pods, threshold = PERFORMANCE[name]
            if args.init_pods is not None:
                wl.init_pods = args.init_pods
            if args.measured_pods is not None:
                wl.measured_pods = args.measured_pods
            runs = []
            for i in range(args.runs):
                prof = args.profile if (args.profile and i == args.runs - 1) else None
                r = asyncio.run(run_once(wl, percentage=args.percentage_of_nodes_to_score, profile=prof,
                                         gc_freeze=args.gc_freeze))
                logger.warning("%s/%dNodes run %d: %s", name, n, i + 1, r)
                runs.append(r)
            results.append({
                "workload": f"{name}/{n}Nodes", "nodes": n, "init_pods": wl.init_pods,
                "measured_pods": wl.measured_pods,
                "percentage_of_nodes_to_score": args.percentage_of_nodes_to_score or "adaptive",
                "upstream_threshold": threshold,
                "runs": len(runs), "median": _median(runs), "all_runs": runs,
            })
    pct_opt = args.percentage_of_nodes_to_score
    name = "scheduler" if pct_opt is None else f"scheduler_pct{pct_opt}"
    if args.performance:
        name += "_performance"
    emit(name + ("_gcfreeze" if args.gc_freeze else ""), {
        "gc_freeze": args.gc_freeze,
        "latency": "end to end: create request start -> pod informer sees spec.nodeName",
        "throughput": "scheduler_perf throughputCollector: 1 s samples of bound measured pods",
        "results": results,
    })


if __name__ == "__main__":
    main()
