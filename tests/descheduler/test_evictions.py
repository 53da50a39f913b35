"""PodEvictor through the real Eviction API: limits per cycle, PDB 429, dry run, the event on
the pod, and the metrics exposition."""

from __future__ import annotations

from typing import Any

from minik3s.api.resources import EVENTS, PODS
from minik3s.testing.builders import make_node

TAINT = ("maintenance", "", "NoSchedule")


async def tainted(cluster: Any, n: int, *, namespaces: tuple[str, ...] = ("default",)) -> None:
    n1 = make_node("n1").capacity(cpu="8", memory="8Gi").taints(TAINT).obj()
    n2 = make_node("n2").capacity(cpu="8", memory="8Gi").obj()
    pods = [cluster.pod(f"p{i}", "n1", namespace=ns).labels(app="x").phase("Running").condition("Ready").obj()
            for ns in namespaces for i in range(n)]
    await cluster.add(n1, n2, *pods)


async def test_limits_total_node_namespace(cluster: Any) -> None:
    await tainted(cluster, 3, namespaces=("default", "other"))
    taints = ("deschedule", "RemovePodsViolatingNodeTaints", None)
    assert len(await cluster.run(cluster.policy(taints, maxNoOfPodsToEvictTotal=2), dry_run=True)) == 2
    assert len(await cluster.run(cluster.policy(taints, maxNoOfPodsToEvictPerNode=4), dry_run=True)) == 4
    assert len(await cluster.run(cluster.policy(taints, maxNoOfPodsToEvictPerNamespace=1), dry_run=True)) == 2
    out = cluster.exposition()
    assert 'result="maximum number of evicted pods per namespace reached"' in out


async def test_dry_run_evicts_nothing_but_reports(cluster: Any, caplog: Any) -> None:
    caplog.set_level("INFO", logger="descheduler")
    await tainted(cluster, 2)
    evicted = await cluster.run(cluster.policy(("deschedule", "RemovePodsViolatingNodeTaints", None)), dry_run=True)
    assert evicted == ["p0", "p1"]
    pods = (await cluster.client.list(PODS, "default"))["items"]
    assert all(not p["metadata"].get("deletionTimestamp") for p in pods)
    assert "Evicted pod in dry run mode" in caplog.text
    assert ('descheduler_pods_evicted_total{namespace="default",node="n1",profile="test",result="success",'
            'strategy="RemovePodsViolatingNodeTaints"} 2.0') in cluster.exposition()


async def test_eviction_event_and_pdb_blocks(cluster: Any) -> None:
    await tainted(cluster, 2)
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "x", "namespace": "default"},
           "spec": {"selector": {"matchLabels": {"app": "x"}}, "maxUnavailable": 0},
           "status": {"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 2, "desiredHealthy": 2,
                      "expectedPods": 2}}
    await cluster.add(pdb)
    pol = cluster.policy(("deschedule", "RemovePodsViolatingNodeTaints", None))
    assert await cluster.run(pol) == []  # 429 from the Eviction API: logged, skipped
    assert 'result="error"' in cluster.exposition()
    assert not [e for e in (await cluster.client.list(EVENTS, "default"))["items"]
                if e["reason"] == "EvictionFailed"]
    notify = cluster.policy(("deschedule", "RemovePodsViolatingNodeTaints", None),
                            evictionFailureEventNotification=True)
    assert await cluster.run(notify) == []
    failed = [e for e in (await cluster.client.list(EVENTS, "default"))["items"] if e["reason"] == "EvictionFailed"]
    assert len(failed) == 2 and failed[0]["type"] == "Warning"
    assert failed[0]["message"].startswith("pod eviction from n1 node by sigs.k8s.io/descheduler failed: ")
    await cluster.client.delete(cluster.core.registry.get("policy", "v1", "poddisruptionbudgets"), "x", "default")
    assert await cluster.run(pol) == ["p0", "p1"]
    pods = {p["metadata"]["name"]: p for p in (await cluster.client.list(PODS, "default"))["items"]}
    assert all(p["metadata"].get("deletionTimestamp") for p in pods.values())
    events = [e for e in (await cluster.client.list(EVENTS, "default"))["items"]
              if e["involvedObject"]["name"] == "p0" and e["type"] == "Normal"]
    assert [(e["reason"], e["action"], e["message"]) for e in events] == [
        ("RemovePodsViolatingNodeTaints", "Descheduled", "pod eviction from n1 node by sigs.k8s.io/descheduler")]


async def test_fewer_than_two_ready_nodes_skips_the_cycle(cluster: Any) -> None:
    n1 = make_node("n1").capacity(cpu="8", memory="8Gi").taints(TAINT).obj()
    n2 = make_node("n2").capacity(cpu="8", memory="8Gi").obj()
    n2["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    await cluster.add(n1, n2, cluster.pod("p", "n1").obj())
    assert await cluster.run(cluster.policy(("deschedule", "RemovePodsViolatingNodeTaints", None))) == []
