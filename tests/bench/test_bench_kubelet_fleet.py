"""bench_kubelet_fleet at a tiny size: idle heartbeats are counted as store writes by resource."""

from __future__ import annotations

from bench.bench_kubelet_fleet import run_size
from kubelet_sim.controller import FleetOptions


async def test_idle_fleet_reports_cpu_and_lease_writes_and_pods_reach_running() -> None:
    # renewals every 0.2 s: 10 nodes renew ~50 times a second; node status every 0.5 s
    r = await run_size(10, idle_seconds=1.0, n_pods=5,
                       options=FleetOptions(renew_interval=0.2, status_report_frequency=0.5))
    assert r["nodes"] == 10
    assert r["idle_cpu_percent"] > 0
    writes = r["store_writes_per_second"]
    assert writes["coordination.k8s.io/leases"] > 10
    assert abs(writes["coordination.k8s.io/leases"] - r["lease_renewals_per_second"]) < 15
    assert writes.get("core/nodes", 0) > 0  # status reports every 0.5 s
    assert "core/pods" not in writes  # the idle window precedes the pods
    assert r["pods"] == 5 and r["pods_per_second"] > 0
