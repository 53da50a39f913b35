"""Pod overhead (spec.overhead, set by RuntimeClass admission) in NodeResourcesFit's Filter and in
the resource scores, through the real framework runtime with the in-tree registry and a cache
snapshot. Upstream: a pod's request is max(sum of containers, max of init containers) + overhead,
for the pod being scheduled and for the pods already on the node."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.api.types import JsonDict
from minik3s.testing.builders import make_node, make_pod
from scheduler.backend.cache import Cache
from scheduler.backend.snapshot import Snapshot
from scheduler.config import parse_config, profile_spec
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.runtime import Framework
from scheduler.framework.types import PodInfo
from scheduler.plugins.registry import in_tree_registry

FIT = "NodeResourcesFit"
BALANCED = "NodeResourcesBalancedAllocation"


def framework(nodes: list[JsonDict], pods: list[JsonDict]) -> tuple[Framework, Snapshot]:
    cfg = parse_config(
        {
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {
                        "multiPoint": {
                            "enabled": [{"name": FIT, "weight": 1}, {"name": BALANCED, "weight": 1}],
                            "disabled": [{"name": "*"}],
                        }
                    },
                }
            ]
        }
    )
    registry = in_tree_registry()
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        cache.add_pod(p)
    snap = Snapshot()
    cache.update_snapshot(snap)
    spec = profile_spec(cfg.profiles[0], registry, global_percentage=cfg.percentage_of_nodes_to_score)
    return Framework(spec, registry, snapshot=snap), snap


def filter_one(nodes: list[JsonDict], pods: list[JsonDict], pod: JsonDict) -> list[str]:
    """The rejection reasons of the (single) node for `pod`; [] when it fits."""
    fw, snap = framework(nodes, pods)
    state = CycleState()
    pi = PodInfo(pod)
    _, st, _ = fw.run_pre_filter(state, pi, snap.node_info_list)
    assert st.is_success(), st.reasons
    out = fw.run_filter(state, pi, snap.node_info_list[0])
    return [] if out is None else list(out.reasons)


NODE = make_node("n1").capacity(cpu="4", memory="8Gi").obj()


@pytest.mark.parametrize(
    "existing, pod, reasons",
    [
        pytest.param([], make_pod("p").req(cpu="3500m").obj(), [], id="fits-without-overhead"),
        pytest.param(
            [],
            make_pod("p").req(cpu="3500m").overhead(cpu="1").obj(),
            ["Insufficient cpu"],
            id="overhead-makes-it-not-fit",
        ),
        pytest.param(
            [],
            make_pod("p").req(memory="7Gi").overhead(memory="2Gi").obj(),
            ["Insufficient memory"],
            id="memory-overhead-counts",
        ),
        pytest.param(
            [],
            make_pod("p").req(cpu="1").init_req(cpu="3").overhead(cpu="500m").obj(),
            [],
            id="init-max-plus-overhead-fits",
        ),
        pytest.param(
            [],
            make_pod("p").req(cpu="1").init_req(cpu="3").overhead(cpu="1500m").obj(),
            ["Insufficient cpu"],
            id="overhead-added-to-init-max-not-to-containers-sum",
        ),
        pytest.param(
            [make_pod("old").req(cpu="2").overhead(cpu="1").node("n1").obj()],
            make_pod("p").req(cpu="1500m").obj(),
            ["Insufficient cpu"],
            id="overhead-of-pods-on-the-node-is-requested",
        ),
        pytest.param(
            [make_pod("old").req(cpu="2").node("n1").obj()],
            make_pod("p").req(cpu="1500m").obj(),
            [],
            id="same-node-without-overhead-fits",
        ),
    ],
)
def test_fit_filter_counts_overhead(existing: list[JsonDict], pod: JsonDict, reasons: list[str]) -> None:
    assert filter_one([NODE], existing, pod) == reasons


def scores(pod: JsonDict) -> dict[str, Any]:
    fw, snap = framework([NODE], [])
    state = CycleState()
    pi = PodInfo(pod)
    nodes = snap.node_info_list
    _, st, _ = fw.run_pre_filter(state, pi, nodes)
    assert st.is_success()
    assert fw.run_pre_score(state, pi, nodes).is_success()
    record: dict[str, Any] = {}
    _, st = fw.run_score(state, pi, nodes, record=record)
    assert st.is_success(), st.reasons
    return {name: rec["raw"][0] for name, rec in record.items()}


@pytest.mark.parametrize(
    "pod, want",
    [
        # LeastAllocated: cpu (4000-1000)*100/4000 = 75, memory (8-1)*100/8 = 87 -> (75+87)/2 = 81;
        # Balanced: fractions 0.25 and 0.125, std 0.0625 -> (1-0.0625)*100 = 93
        pytest.param(
            make_pod("p").req(cpu="1", memory="1Gi").obj(), {FIT: 81, BALANCED: 93}, id="no-overhead"
        ),
        # with 1 cpu + 1Gi overhead: cpu 2000m -> 50, memory 2Gi -> 75 -> 62;
        # fractions 0.5 and 0.25, std 0.125 -> 87
        pytest.param(
            make_pod("p").req(cpu="1", memory="1Gi").overhead(cpu="1", memory="1Gi").obj(),
            {FIT: 62, BALANCED: 87},
            id="overhead-counted-by-both-scores",
        ),
    ],
)
def test_scores_count_overhead(pod: JsonDict, want: dict[str, int]) -> None:
    assert scores(pod) == want
