"""The profile runtime: every profile's deschedule plugins run before any balance plugin, and a
plugin that raises is reported by name without stopping the others."""

from __future__ import annotations

from typing import Any, ClassVar

from descheduler.descheduler import Descheduler, DeschedulerOptions
from descheduler.framework.interface import SUCCESS, BalancePlugin, DeschedulePlugin, Status
from descheduler.plugins.registry import in_tree_registry
from descheduler.policy import parse_policy
from minik3s.testing.builders import make_node

ORDER: list[str] = []


class Broken(DeschedulePlugin):
    NAME: ClassVar[str] = "Broken"

    async def deschedule(self, nodes: list[Any], *, profile: str) -> Status:
        raise RuntimeError("boom")


class RecordDeschedule(DeschedulePlugin):
    NAME: ClassVar[str] = "RecordDeschedule"

    async def deschedule(self, nodes: list[Any], *, profile: str) -> Status:
        ORDER.append(f"{profile}:deschedule")
        return SUCCESS


class RecordBalance(BalancePlugin):
    NAME: ClassVar[str] = "RecordBalance"

    async def balance(self, nodes: list[Any], *, profile: str) -> Status:
        ORDER.append(f"{profile}:balance")
        return SUCCESS


async def test_order_and_a_raising_plugin(cluster: Any, caplog: Any) -> None:
    n1 = make_node("n1").capacity(cpu="8", memory="8Gi").taints(("maint", "", "NoSchedule")).obj()
    await cluster.add(n1, make_node("n2").capacity(cpu="8", memory="8Gi").obj(), cluster.pod("p", "n1").obj())
    reg = {**in_tree_registry(), "Broken": Broken, "RecordDeschedule": RecordDeschedule,
           "RecordBalance": RecordBalance}
    prof = {"plugins": {"deschedule": {"enabled": ["Broken", "RecordDeschedule", "RemovePodsViolatingNodeTaints"]},
                        "balance": {"enabled": ["RecordBalance"]}}}
    doc = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
           "profiles": [{"name": "a", **prof}, {"name": "b", **prof}]}
    policy, profiles = parse_policy(doc, reg)
    d = Descheduler(policy, profiles, client=cluster.client, informers=cluster.informers, registry=reg,
                    metrics=cluster.metrics, clock=cluster.clock, options=DeschedulerOptions(dry_run=True))
    await cluster.synced()
    ORDER.clear()
    evs = await d.run_once()
    assert ORDER == ["a:deschedule", "b:deschedule", "a:balance", "b:balance"]
    assert [(e.profile, e.strategy, e.pod) for e in evs] == [
        ("a", "RemovePodsViolatingNodeTaints", "default/p"), ("b", "RemovePodsViolatingNodeTaints", "default/p")]
    assert "plugin failed profile=a plugin=Broken err=plugin Broken raised RuntimeError: boom" in caplog.text
    assert 'descheduler_strategy_duration_seconds_count{profile="b",strategy="Broken"} 1.0' in cluster.exposition()
