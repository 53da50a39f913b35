"""Golden tests of the default pod stages: input pod + elapsed (fake) time → expected status.

Each tests/kubelet_sim/golden/*.yaml holds `pod` (created at t=0, bound to node-1 of a one-node
fleet), and `checkpoints`: at time `at` run `do` (delete / removeFinalizers / annotate), then
compare the pod as the real in-process API holds it (`status`, or `gone: true`) and the DELETE
calls the kubelet made so far with `expect`. Time is the fake clock shared by the API and the
kubelet; after each step the cluster settles (no call in flight, informers caught up, queue idle).
Regenerate after an intended behaviour change: UPDATE_GOLDEN=1 pytest tests/kubelet_sim.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_sim.config import parse_fleet
from kubelet_sim.controller import StageController
from kubelet_sim.node_agent import NodeAgent
from kubelet_sim.stages.model import load_default_stages
from minik3s.api.resources import PODS
from minik3s.utils.clock import FakeClock

GOLDEN = Path(__file__).parent / "golden"
STEP = 0.05


async def advance_to(cluster: Any, clock: FakeClock, target: float, start_mono: float) -> None:
    while clock.monotonic() - start_mono < target - 1e-9:
        clock.advance(min(STEP, target - (clock.monotonic() - start_mono)))
        await cluster.settle()


async def run_golden(cluster: Any, clock: FakeClock, case: dict[str, Any]) -> list[dict[str, Any]]:
    agent = NodeAgent(parse_fleet(1), client=cluster, clock=clock, rng=random.Random(0))
    ctl = StageController(load_default_stages(), client=cluster, pod_informer=cluster.informer(PODS),
                          nodes=agent, clock=clock, rng=random.Random(0), workers=2)
    cluster.idle_checks.append(lambda: len(ctl.queue) == 0)
    task = cluster.spawn(ctl.run(), "golden-controller")
    start = clock.monotonic()
    observed: list[dict[str, Any]] = []
    try:
        await cluster.settle()
        pod = await cluster.create(PODS, case["pod"])
        name, ns = pod["metadata"]["name"], pod["metadata"]["namespace"]
        await cluster.settle()
        for cp in case["checkpoints"]:
            await advance_to(cluster, clock, float(cp["at"]), start)
            for action in cp.get("do") or []:
                if "delete" in action:
                    await cluster.delete(PODS, name, ns, grace_period_seconds=action["delete"].get("gracePeriodSeconds"))
                if action.get("removeFinalizers"):
                    await cluster.patch(PODS, name, {"metadata": {"finalizers": None}}, ns)
                await cluster.settle()
            cur = cluster.obj(PODS, name, ns)
            seen: dict[str, Any] = {"at": cp["at"]}
            if cp.get("do"):
                seen["do"] = cp["do"]
            seen["expect"] = {"gone": True} if cur is None else {"status": cur.get("status")}
            # DELETEs the kubelet issued (the test's own deletes carry no preconditions)
            seen["expect"]["kubeletDeletes"] = [{"gracePeriodSeconds": c[3], "preconditions": c[4]}
                                                for c in cluster.calls if c[0] == "delete" and c[4]]
            observed.append(seen)
    finally:
        await cluster.stop(task)
    return observed


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


CASES = sorted(GOLDEN.glob("*.yaml"))


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem) for p in CASES])
async def test_golden(path: Path, cluster: Any, clock: FakeClock) -> None:
    case = yaml.safe_load(path.read_text())
    observed = await run_golden(cluster, clock, case)
    if os.environ.get("UPDATE_GOLDEN"):
        case["checkpoints"] = observed
        path.write_text(yaml.dump(case, Dumper=_NoAliases, sort_keys=False, width=120))
        pytest.skip("golden file regenerated")
    for want, got in zip(case["checkpoints"], observed, strict=True):
        assert got["expect"] == want["expect"], f"checkpoint at t={want['at']}"
