"""CPU per pod of the scheduling cycle alone, without the API: PreFilter through Permit.

A real `Scheduler` with the default profile over a cache of `nodes` nodes shaped as issue 14's
(4 CPU / 32Gi / 110 pods, labelled `kubernetes.io/hostname` and `topology.kubernetes.io/zone`),
`init` pods of 100m / 500Mi assumed first, then `pods` more scheduled one after the other:
snapshot update, `schedule_pod` (PreFilter, Filter, PreScore, Score, selectHost), assume,
Reserve and Permit, as `Scheduler._scheduling_cycle` runs them. The pods' PodInfos are built
before timing (the queue builds them when the informer delivers the pod). Prints one JSON line:
CPU microseconds per pod (`time.process_time`), median of `--runs`, and a digest of the
decisions (same seed, same decisions: compare it across checkouts).

    python bench/bench_cycle.py --nodes 500 --init 500 --pods 2000 --runs 5
    python bench/bench_cycle.py --profile out.prof      # cProfile of one run
    python bench/bench_cycle.py --nodes 1000 --owned    # pods of a ReplicaSet (system-default spreading)
    python bench/bench_cycle.py --nodes 5000 --init 1000 --pods 1000 --anti   # hostname anti-affinity

With `--owned` the measured pods belong to a ReplicaSet (the informers hold it), so
PodTopologySpread scores them with the system-default constraints, as every Deployment's pod.

The scheduler's informers are inert stand-ins: the cycle reads only the scheduler's cache. The
server's GC policy (minik3s.utils.gc_policy) is applied before timing, as `minik3s server` runs.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import random
import statistics
import time
from typing import Any

from minik3s.testing.builders import make_node, make_pod
from minik3s.utils.gc_policy import apply_server_gc_policy
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.types import PodInfo
from scheduler.scheduler import Scheduler, _assumed_pod_info

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


class _InertInformer:
    """Stands in for an informer the benchmark never feeds."""

    def __init__(self) -> None:
        from minik3s.client.store import Store
        self.store = Store()
        self.has_synced = True

    def add_handler(self, **_: Any) -> None:
        return None

    async def wait_for_sync(self) -> None:
        return None


class _InertInformers:
    """One inert informer per resource; `objects` are put into their resource's store first."""

    def __init__(self, objects: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self._objects = objects or {}
        self._informers: dict[str, _InertInformer] = {}

    def informer(self, res: Any = None, *_: Any, **__: Any) -> _InertInformer:
        name = getattr(res, "resource", "")
        inf = self._informers.get(name)
        if inf is None:
            inf = self._informers[name] = _InertInformer()
            for obj in self._objects.get(name, []):
                inf.store.put(f"{obj['metadata']['namespace']}/{obj['metadata']['name']}", obj)
        return inf


RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
      "metadata": {"name": "web", "namespace": "default", "uid": "rs-uid"},
      "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
               "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}}}


def _pod(name: str, owned: bool, anti: bool = False) -> dict[str, Any]:
    b = make_pod(name).req(cpu="100m", memory="500Mi").uid(name)
    if owned:
        b = b.labels(app="web").owner("ReplicaSet", "web", uid="rs-uid")
    if anti:  # issue 14's anti-affinity shape: color=green, required anti-affinity to it per hostname
        b = b.labels(color="green").pod_anti_affinity(HOSTNAME, {"matchLabels": {"color": "green"}})
    return b.obj()


def build(nodes: int, init: int, seed: int, owned: bool = False, anti: bool = False) -> Scheduler:
    informers = _InertInformers({"replicasets": [RS]} if owned else None)
    s = Scheduler(None, client=None, informers=informers, rng=random.Random(seed), explain_capacity=0)
    for i in range(nodes):
        name = f"node-{i}"
        s.cache.add_node(make_node(name).labels({ZONE: f"zone-{i % 3}", HOSTNAME: name})
                         .capacity(cpu="4", memory="32Gi", pods="110").obj())
    for i in range(init):
        pi = PodInfo(_pod(f"init-{i}", owned, anti))
        s.cache.assume_pod(_assumed_pod_info(pi, f"node-{i % nodes}"))
    return s


def run_once(nodes: int, init: int, pods: int, seed: int, profile: str | None = None,
             owned: bool = False, anti: bool = False) -> tuple[float, str]:
    s = build(nodes, init, seed, owned, anti)
    fw = next(iter(s.frameworks.values()))
    infos = [PodInfo(_pod(f"p-{i}", owned, anti)) for i in range(pods)]
    apply_server_gc_policy()  # as `minik3s server` runs: what exists frozen, collections rarer
    digest = hashlib.sha256()
    prof = cProfile.Profile() if profile else None
    t0 = time.process_time()
    if prof:
        prof.enable()
    for pi in infos:
        state = CycleState()
        s.cache.update_snapshot(s.snapshot)
        host = s.schedule_pod(fw, state, pi).suggested_host
        assumed = _assumed_pod_info(pi, host)
        s.cache.assume_pod(assumed)
        fw.run_reserve(state, assumed, host)
        fw.run_permit(state, assumed, host)
        digest.update(host.encode())
    if prof:
        prof.disable()
    cpu = time.process_time() - t0
    if prof and profile:
        prof.dump_stats(profile)
    return cpu * 1e6 / pods, digest.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--init", type=int, default=500)
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", default=None, help="write a cProfile of one run here")
    ap.add_argument("--owned", action="store_true", help="pods of a ReplicaSet (system-default spreading)")
    ap.add_argument("--anti", action="store_true",
                    help="every pod color=green with required anti-affinity to color=green on the hostname")
    a = ap.parse_args()
    if a.profile:
        us, dig = run_once(a.nodes, a.init, a.pods, a.seed, a.profile, a.owned, a.anti)
        print(json.dumps({"profiled_us_per_pod": round(us, 1), "decisions": dig}))
        return
    runs = [run_once(a.nodes, a.init, a.pods, a.seed, owned=a.owned, anti=a.anti) for _ in range(a.runs)]
    us = [r[0] for r in runs]
    print(json.dumps({"nodes": a.nodes, "init": a.init, "pods": a.pods, "owned": a.owned, "anti": a.anti, "runs_us_per_pod": [round(u, 1) for u in us],
                      "median_us_per_pod": round(statistics.median(us), 1), "decisions": runs[0][1]}))


if __name__ == "__main__":
    main()
