"""RemovePodsViolatingTopologySpreadConstraint table (after upstream topologyspreadconstraint_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.testing.builders import make_node


def zone_nodes(*zones: str) -> list[Any]:
    return [make_node(f"n-{z}").labels(zone=z).capacity(cpu="8", memory="8Gi").obj() for z in zones]


def spread_pod(cluster: Any, name: str, node: str, *, skew: int = 1, when: str = "DoNotSchedule") -> Any:
    return (cluster.pod(name, node).labels(app="web")
            .spread_constraint(skew, "zone", when, {"app": "web"}).obj())


@pytest.mark.parametrize(("zones", "placement", "when", "args", "expected_count"), [
    pytest.param(("a", "b"), {"n-a": 4, "n-b": 0}, "DoNotSchedule", None, 2, id="four-in-one-of-two-zones-moves-two"),
    pytest.param(("a", "b", "c"), {"n-a": 6, "n-b": 0, "n-c": 0}, "DoNotSchedule", None, 4,
                 id="six-in-one-of-three-zones-moves-four"),
    pytest.param(("a", "b"), {"n-a": 2, "n-b": 1}, "DoNotSchedule", None, 0, id="skew-within-maxSkew-balanced"),
    pytest.param(("a", "b"), {"n-a": 4, "n-b": 0}, "ScheduleAnyway", None, 0,
                 id="soft-constraints-ignored-by-default"),
    pytest.param(("a", "b"), {"n-a": 4, "n-b": 0}, "ScheduleAnyway",
                 {"constraints": ["DoNotSchedule", "ScheduleAnyway"]}, 2, id="soft-constraints-when-asked"),
])
async def test_topology_spread(cluster: Any, zones: tuple[str, ...], placement: dict[str, int], when: str,
                               args: Any, expected_count: int) -> None:
    pods = [spread_pod(cluster, f"{node}-{i}", node, when=when) for node, n in placement.items() for i in range(n)]
    await cluster.add(*zone_nodes(*zones), *pods)
    evicted = await cluster.run(cluster.policy(("balance", "RemovePodsViolatingTopologySpreadConstraint", args)))
    assert len(evicted) == expected_count
    assert all(e.startswith("n-a-") for e in evicted)


async def test_seed_alias_name_works_and_reports_itself(cluster: Any) -> None:
    pods = [spread_pod(cluster, f"n-a-{i}", "n-a") for i in range(4)]
    await cluster.add(*zone_nodes("a", "b"), *pods)
    d = await cluster.descheduler(cluster.policy(("balance", "RemovePodsViolatingTopologySpread", None)))
    evs = await d.run_once()
    assert [e.strategy for e in evs] == ["RemovePodsViolatingTopologySpread"] * 2


async def test_lowest_priority_unpinned_pods_move_first(cluster: Any) -> None:
    pods = [spread_pod(cluster, "n-a-hi", "n-a"), spread_pod(cluster, "n-a-pinned", "n-a"),
            spread_pod(cluster, "n-a-low", "n-a"), spread_pod(cluster, "n-a-mid", "n-a")]
    pods[0]["spec"]["priority"] = 100
    pods[1]["spec"]["nodeSelector"] = {"zone": "a"}
    pods[3]["spec"]["priority"] = 10
    await cluster.add(*zone_nodes("a", "b"), *pods)
    evicted = await cluster.run(cluster.policy(("balance", "RemovePodsViolatingTopologySpreadConstraint", None)))
    assert evicted == ["n-a-low", "n-a-mid"]
