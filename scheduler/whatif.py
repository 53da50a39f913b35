"""What-if placement for the descheduler's loop avoidance (layer L4, scheduler side).

The descheduler asks "if this pod were evicted now, where would the scheduler put it?"
through a protocol it defines itself (`descheduler.framework.interface.PlacementAdvisor`);
the composition root hands it a `WhatIf` built on the running `Scheduler`. No import
crosses between the two packages: the answer is this module's own `WhatIfResult`, which has
the attributes the protocol names.

Data flow of one question (synchronous, so neither the scheduler's cycle nor the informers'
event handlers can interleave): the cache's live NodeInfos in a *fresh* Snapshot, read-only,
except the pod's own node, which is a clone with the pod removed (as if evicted) -> the
profile's PreFilter -> Filter on every node (not the scheduler's round-robin sample, which
would make the answer depend on its start index) -> PreScore -> Score -> feasible nodes + the
best-scoring ones. Nothing is assumed, reserved,
bound or queued, and the scheduler's own snapshot, frameworks and cache are left as they were:
the adapter keeps its own Framework per profile (same plugins and args) pointed at the fresh
snapshot, so plugin memos keyed on a snapshot (PodTopologySpread, InterPodAffinity) never mix
the two. Cost: about one scheduling attempt per question (see docs/descheduler.md).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from minik3s.api.types import JsonDict
from scheduler.backend.queue import scheduler_name
from scheduler.backend.snapshot import Snapshot
from scheduler.config import profile_spec
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.runtime import Framework
from scheduler.framework.types import PodInfo
from scheduler.scheduler import Scheduler


@dataclass(frozen=True, slots=True)
class WhatIfResult:
    """`feasible`: nodes passing every filter (the pod's own node included when it still fits
    there, its own usage taken away); `best`: the feasible nodes sharing the highest score
    (the scheduler picks one of them at random); `message`: why nothing fits, if so."""

    feasible: tuple[str, ...]
    best: tuple[str, ...]
    message: str = ""


class WhatIf:
    """A read-only placement simulator over a running scheduler's cache."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._sched = scheduler
        cfg = scheduler.config
        self._frameworks: dict[str, Framework] = {}
        for prof in cfg.profiles:
            spec = profile_spec(prof, scheduler.registry, global_percentage=cfg.percentage_of_nodes_to_score)
            self._frameworks[prof.scheduler_name] = Framework(
                spec, scheduler.registry, client=scheduler.client, informers=scheduler.informers,
                snapshot=Snapshot(), waiting_pods={}, clock=scheduler.clock, rng=random.Random(0))

    def where_would_it_go(self, pod: JsonDict) -> WhatIfResult | None:
        """None when the scheduler does not run the pod's profile (another scheduler owns it)."""
        fw = self._frameworks.get(scheduler_name(pod))
        if fw is None:
            return None
        meta = pod.get("metadata") or {}
        uid = meta.get("uid") or ""
        own = (pod.get("spec") or {}).get("nodeName") or ""
        snap = Snapshot()
        for live in self._sched.cache.node_infos():
            ni = live
            if live.name == own:
                # the only copy: the pod's own node as if the pod were gone
                ni = live.clone()
                ni.remove_pod(uid)
            snap.node_info_map[ni.name] = ni
            snap.node_info_list.append(ni)
        snap.rebuild_affinity_lists()
        fw.set_snapshot(snap)
        spec = dict(pod.get("spec") or {})
        spec.pop("nodeName", None)
        pi = PodInfo({**pod, "spec": spec})
        state = CycleState()
        nodes = snap.node_info_list
        pre_res, st, _ = fw.run_pre_filter(state, pi, nodes)
        if not st.is_success():
            return WhatIfResult((), (), st.message())
        if pre_res is not None and pre_res.node_names is not None:
            nodes = [ni for ni in nodes if ni.name in pre_res.node_names]
        # every node, not the scheduler's sample (numFeasibleNodesToFind): the sample depends on
        # where its round-robin start index happens to be, the answer must not
        plugins = fw.active_filter_plugins(state)
        feasible = [ni for ni in nodes if fw.run_filter(state, pi, ni, plugins) is None]
        if not feasible:
            return WhatIfResult((), (), f"0/{len(snap.node_info_list)} nodes are available")
        names = tuple(ni.name for ni in feasible)
        if len(feasible) == 1 or not fw.has_score_plugins():
            return WhatIfResult(names, names)
        if not fw.run_pre_score(state, pi, feasible).is_success():
            return WhatIfResult(names, names)
        totals, st = fw.run_score(state, pi, feasible)
        if not st.is_success():
            return WhatIfResult(names, names)
        top = max(totals)
        return WhatIfResult(names, tuple(n for n, t in zip(names, totals, strict=True) if t == top))
