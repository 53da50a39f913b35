"""Disruption controller + the API server's eviction subresource, on a real server."""

from __future__ import annotations

import pytest

from minik3s.api.errors import TooManyRequestsError
from minik3s.api.resources import DEPLOYMENTS, PODDISRUPTIONBUDGETS
from minik3s.controllers.deployment import DeploymentController
from minik3s.controllers.disruption import DisruptionController
from minik3s.controllers.replicaset import ReplicaSetController


def pdb(spec: dict) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web-pdb"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}


async def start(harness, replicas: int, budget: dict) -> None:
    runs = [ReplicaSetController(harness.client, harness.informers).run,
            DeploymentController(harness.client, harness.informers).run,
            DisruptionController(harness.client, harness.informers).run, harness.kubelet]
    harness.start(*runs)
    await harness.client.create(DEPLOYMENTS, harness.deploy("web", replicas))
    await harness.available("web", replicas)
    await harness.client.create(PODDISRUPTIONBUDGETS, pdb(budget), "default")


async def status_is(harness, **want):
    async def check():
        cur = await harness.client.get(PODDISRUPTIONBUDGETS, "web-pdb", "default")
        st = cur.get("status") or {}
        return cur if all(st.get(k) == v for k, v in want.items()) and \
            st.get("observedGeneration") == cur["metadata"]["generation"] else None

    return await harness.eventually(check, what=f"pdb status {want}")


@pytest.mark.parametrize(("budget", "want"), [
    pytest.param({"minAvailable": 2}, dict(expectedPods=3, desiredHealthy=2, currentHealthy=3, disruptionsAllowed=1),
                 id="min-available-int-counts-matching-pods"),
    pytest.param({"minAvailable": "50%"}, dict(expectedPods=3, desiredHealthy=2, currentHealthy=3, disruptionsAllowed=1),
                 id="min-available-percent-rounds-up-of-deployment-scale"),
    pytest.param({"maxUnavailable": "50%"}, dict(expectedPods=3, desiredHealthy=1, currentHealthy=3, disruptionsAllowed=2),
                 id="max-unavailable-percent-rounds-up"),
    pytest.param({"maxUnavailable": 0}, dict(expectedPods=3, desiredHealthy=3, currentHealthy=3, disruptionsAllowed=0),
                 id="max-unavailable-zero-blocks-everything"),
])
async def test_pdb_status_arithmetic(harness, budget, want):
    await start(harness, 3, budget)
    cur = await status_is(harness, **want)
    cond = next(c for c in cur["status"]["conditions"] if c["type"] == "DisruptionAllowed")
    allowed = want["disruptionsAllowed"] > 0
    assert (cond["status"], cond["reason"]) == (("True", "SufficientPods") if allowed else ("False", "InsufficientPods"))


async def test_eviction_that_would_break_min_available_gets_429(harness):
    await start(harness, 3, {"minAvailable": 2})
    await status_is(harness, disruptionsAllowed=1)
    pods = await harness.pods(selector="app=web")
    await harness.client.evict("default", pods[0]["metadata"]["name"])
    with pytest.raises(TooManyRequestsError) as e:
        await harness.client.evict("default", pods[1]["metadata"]["name"])
    assert e.value.code == 429
    assert "Cannot evict pod as it would violate the pod's disruption budget." in e.value.message
    # the evicted pod is replaced, the budget recovers
    await status_is(harness, disruptionsAllowed=1, currentHealthy=3)
    await harness.client.evict("default", pods[1]["metadata"]["name"])
