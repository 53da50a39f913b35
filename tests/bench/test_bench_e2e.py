"""bench_e2e at a tiny size: the whole embedded server with simulated kubelets drives bare pods and a
Deployment's pods to Running, and the reported latencies are per pod and ordered."""

from __future__ import annotations

import argparse

import pytest

from bench.bench_e2e import PodTimes, latency_summary, run_once


def test_latency_summary_is_per_pod_and_refuses_missing_pods() -> None:
    created = {"a": 0.0, "b": 1.0, "c": 2.0}
    out = latency_summary(created, {"a": 0.1, "b": 1.3, "c": 2.2})
    assert out == {"p50_ms": 200.0, "p90_ms": 300.0, "p99_ms": 300.0, "max_ms": 300.0}
    with pytest.raises(RuntimeError, match="1 of 3 pods never got there"):
        latency_summary(created, {"a": 0.1, "b": 1.3})


def test_pod_times_record_the_first_bound_and_running_sightings() -> None:
    t = PodTimes()
    pod = {"metadata": {"name": "p"}, "spec": {}, "status": {"phase": "Pending"}}
    t.on_add(pod)
    assert "p" in t.seen and "p" not in t.bound
    bound = {**pod, "spec": {"nodeName": "n"}}
    t.on_update(pod, bound)
    first = t.bound["p"]
    t.on_update(bound, {**bound, "status": {"phase": "Running"}})
    t.on_update(bound, {**bound, "status": {"phase": "Running"}})
    assert t.bound["p"] == first
    assert t.seen["p"] <= t.bound["p"] <= t.running["p"]


async def test_bare_pods_and_a_deployment_reach_running_on_simulated_nodes() -> None:
    r = await run_once(argparse.Namespace(nodes=4, pods=6, rate=0.0, replicas=5))
    assert r["nodes"] == 4
    for phase, n in (("bare_pods", 6), ("deployment", 5)):
        s = r[phase]
        assert s.get("pods", s.get("replicas")) == n
        for what in ("to_bound", "to_running"):
            lat = s[what]
            assert 0 <= lat["p50_ms"] <= lat["p90_ms"] <= lat["p99_ms"] <= lat["max_ms"]
        # Running comes after the bind, pod by pod, so its max is no smaller
        assert s["to_running"]["max_ms"] >= s["to_bound"]["p50_ms"]
    assert r["scheduler"]["schedule_attempts"]["scheduled"] == 11
