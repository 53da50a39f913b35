"""DefaultEvictor table (after upstream defaultevictor_test.go): which pods a strategy may
evict. Driven through a real cycle of RemovePodsViolatingNodeTaints on a tainted node, so
every pod below is a candidate and only the evictor decides."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.testing.builders import make_node

TAINT = ("maintenance", "", "NoSchedule")


def mk(cluster: Any, kind: str) -> Any:
    b = cluster.pod(kind, "n1")
    if kind == "bare":
        b = cluster.pod(kind, "n1", owner=None)
    elif kind == "daemonset":
        b = cluster.pod(kind, "n1", owner=None).owner("DaemonSet", "ds")
    elif kind == "mirror":
        b = b.annotations({"kubernetes.io/config.mirror": "x", "kubernetes.io/config.source": "file"})
    elif kind == "critical":
        b = cluster.pod(kind, "n1")
    elif kind == "high-priority":
        b = cluster.pod(kind, "n1", priority=1000)
    elif kind == "labelled":
        b = b.labels(tier="batch")
    obj = b.obj()
    if kind == "critical":
        obj["spec"]["priorityClassName"] = "system-cluster-critical"
    if kind == "local-storage":
        obj["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    if kind == "annotated-bare":
        obj = cluster.pod(kind, "n1", owner=None).annotations(
            {"descheduler.alpha.kubernetes.io/evict": "true"}).obj()
    return obj


KINDS = ["plain", "bare", "daemonset", "mirror", "critical", "local-storage", "high-priority", "labelled",
         "annotated-bare"]


@pytest.mark.parametrize(("evictor_args", "expected"), [
    pytest.param(None, ["annotated-bare", "high-priority", "labelled", "plain"], id="defaults-protect-the-usual"),
    pytest.param({"evictLocalStoragePods": True, "evictDaemonSetPods": True},
                 ["annotated-bare", "daemonset", "high-priority", "labelled", "local-storage", "plain"],
                 id="local-storage-and-daemonset-allowed"),
    pytest.param({"evictSystemCriticalPods": True},
                 ["annotated-bare", "critical", "high-priority", "labelled", "plain"], id="system-critical-allowed"),
    pytest.param({"priorityThreshold": {"value": 1000}}, ["annotated-bare", "labelled", "plain"],
                 id="priority-threshold-value"),
    pytest.param({"priorityThreshold": {"name": "prio-1000"}}, ["annotated-bare", "labelled", "plain"],
                 id="priority-threshold-class-name"),
    pytest.param({"labelSelector": {"matchLabels": {"tier": "batch"}}}, ["annotated-bare", "labelled"],
                 id="label-selector"),
    pytest.param({"podProtections": {"defaultDisabled": ["PodsWithLocalStorage"]}},
                 ["annotated-bare", "high-priority", "labelled", "local-storage", "plain"],
                 id="pod-protections-default-disabled"),
    pytest.param({"ignorePodsWithoutPDB": True}, ["annotated-bare"], id="ignore-pods-without-pdb"),
])
async def test_default_evictor(cluster: Any, evictor_args: Any, expected: list[str]) -> None:
    n1 = make_node("n1").capacity(cpu="8", memory="8Gi").taints(TAINT).obj()
    n2 = make_node("n2").capacity(cpu="8", memory="8Gi").obj()
    await cluster.add(n1, n2, *[mk(cluster, k) for k in KINDS])
    pol = cluster.policy(("deschedule", "RemovePodsViolatingNodeTaints", None), evictor=evictor_args)
    assert await cluster.run(pol) == expected


async def test_min_pod_age_and_node_fit(cluster: Any) -> None:
    n1 = make_node("n1").capacity(cpu="8", memory="8Gi").taints(TAINT).obj()
    small = make_node("n2").capacity(cpu="1", memory="8Gi").obj()
    await cluster.add(n1, small, cluster.pod("big", "n1", cpu="2").obj(), cluster.pod("tiny", "n1", cpu="100m").obj())
    pol = cluster.policy(("deschedule", "RemovePodsViolatingNodeTaints", None), evictor={"minPodAge": "10m"})
    assert await cluster.run(pol) == []  # created just now
    cluster.clock.advance(601)
    pol = cluster.policy(("deschedule", "RemovePodsViolatingNodeTaints", None), evictor={"nodeFit": True})
    assert await cluster.run(pol) == ["tiny"]  # "big" fits on no other node


async def test_node_fit_honours_the_pods_required_anti_affinity(cluster: Any) -> None:
    n1 = make_node("n1").labels({"kubernetes.io/hostname": "n1"}).capacity(cpu="8", memory="8Gi").taints(TAINT).obj()
    n2 = make_node("n2").labels({"kubernetes.io/hostname": "n2"}).capacity(cpu="8", memory="8Gi").obj()
    db = cluster.pod("db", "n2").labels(app="db").obj()
    web = cluster.pod("web", "n1").pod_anti_affinity("kubernetes.io/hostname", {"app": "db"}).obj()
    other = cluster.pod("other", "n1").obj()
    await cluster.add(n1, n2, db, web, other)
    pol = cluster.policy(("deschedule", "RemovePodsViolatingNodeTaints", None), evictor={"nodeFit": True})
    assert await cluster.run(pol) == ["other"]  # `web` could only go to n2, next to an app=db pod
