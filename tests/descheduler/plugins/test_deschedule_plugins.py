"""Tables for the deschedule-point strategies: RemovePodsViolatingInterPodAntiAffinity,
RemovePodsViolatingNodeAffinity, RemovePodsViolatingNodeTaints, PodLifeTime,
RemovePodsHavingTooManyRestarts, RemoveFailedPods (after upstream's *_test.go tables)."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.testing.builders import make_node


def nodes(*names: str, **labels: str) -> list[Any]:
    return [make_node(n).labels(**{"kubernetes.io/hostname": n, **labels}).capacity(cpu="8", memory="8Gi").obj()
            for n in names]


async def test_anti_affinity_violation_after_relabel_is_evicted(cluster: Any) -> None:
    a = cluster.pod("a", "n1").labels(app="a").pod_anti_affinity(
        "kubernetes.io/hostname", {"app": "b"}).obj()
    b = cluster.pod("b", "n1").labels(app="b").obj()  # co-located: violates a's required anti-affinity
    c = cluster.pod("c", "n2").labels(app="b").obj()  # other node: fine
    await cluster.add(*nodes("n1", "n2"), a, b, c)
    pol = cluster.policy(("deschedule", "RemovePodsViolatingInterPodAntiAffinity", None))
    assert await cluster.run(pol) == ["a"]


async def test_anti_affinity_respected_nothing_evicted(cluster: Any) -> None:
    a = cluster.pod("a", "n1").labels(app="a").pod_anti_affinity("kubernetes.io/hostname", {"app": "b"}).obj()
    await cluster.add(*nodes("n1", "n2"), a, cluster.pod("b", "n2").labels(app="b").obj())
    assert await cluster.run(cluster.policy(("deschedule", "RemovePodsViolatingInterPodAntiAffinity", None))) == []


@pytest.mark.parametrize(("node_labels", "expected"), [
    pytest.param({"n1": "no", "n2": "yes"}, ["p"], id="node-no-longer-matches-other-node-does"),
    pytest.param({"n1": "no", "n2": "no"}, [], id="no-other-node-matches-stays"),
    pytest.param({"n1": "yes", "n2": "yes"}, [], id="still-matches-stays"),
])
async def test_node_affinity_required(cluster: Any, node_labels: dict[str, str], expected: list[str]) -> None:
    ns = [make_node(n).labels(disk=v).capacity(cpu="8", memory="8Gi").obj() for n, v in node_labels.items()]
    pod = cluster.pod("p", "n1").node_affinity_in("disk", ["yes"]).obj()
    await cluster.add(*ns, pod)
    pol = cluster.policy(("deschedule", "RemovePodsViolatingNodeAffinity",
                          {"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]}))
    assert await cluster.run(pol) == expected


@pytest.mark.parametrize(("node_labels", "expected"), [
    pytest.param({"n1": "hdd", "n2": "ssd"}, ["p"], id="a-node-matching-a-preferred-term-exists"),
    pytest.param({"n1": "ssd", "n2": "ssd"}, [], id="current-node-already-preferred"),
])
async def test_node_affinity_preferred(cluster: Any, node_labels: dict[str, str], expected: list[str]) -> None:
    ns = [make_node(n).labels(disk=v).capacity(cpu="8", memory="8Gi").obj() for n, v in node_labels.items()]
    pod = cluster.pod("p", "n1").preferred_node_affinity(
        10, [{"key": "disk", "operator": "In", "values": ["ssd"]}]).obj()
    await cluster.add(*ns, pod)
    pol = cluster.policy(("deschedule", "RemovePodsViolatingNodeAffinity",
                          {"nodeAffinityType": ["preferredDuringSchedulingIgnoredDuringExecution"]}))
    assert await cluster.run(pol) == expected


@pytest.mark.parametrize(("taint", "args", "tolerate", "expected"), [
    pytest.param(("k", "v", "NoSchedule"), None, False, ["p"], id="untolerated-noschedule-evicted"),
    pytest.param(("k", "v", "NoSchedule"), None, True, [], id="tolerated-stays"),
    pytest.param(("k", "v", "PreferNoSchedule"), None, False, [], id="prefer-no-schedule-ignored-by-default"),
    pytest.param(("k", "v", "PreferNoSchedule"), {"includePreferNoSchedule": True}, False, ["p"],
                 id="prefer-no-schedule-when-included"),
    pytest.param(("k", "v", "NoSchedule"), {"excludedTaints": ["k=v"]}, False, [], id="excluded-key-value"),
    pytest.param(("k", "v", "NoSchedule"), {"includedTaints": ["other"]}, False, [], id="not-in-included"),
])
async def test_node_taints(cluster: Any, taint: tuple[str, str, str], args: Any, tolerate: bool,
                           expected: list[str]) -> None:
    n1 = make_node("n1").capacity(cpu="8", memory="8Gi").taints(taint).obj()
    b = cluster.pod("p", "n1")
    if tolerate:
        b = b.toleration(taint[0], taint[1], effect=taint[2])
    await cluster.add(n1, *nodes("n2"), b.obj())
    assert await cluster.run(cluster.policy(("deschedule", "RemovePodsViolatingNodeTaints", args))) == expected


async def test_pod_life_time_oldest_first_and_states(cluster: Any) -> None:
    await cluster.add(*nodes("n1", "n2"), cluster.pod("old", "n1").obj())
    cluster.clock.advance(600)
    await cluster.add(cluster.pod("young", "n1").obj())
    cluster.clock.advance(100)
    pol = cluster.policy(("deschedule", "PodLifeTime", {"maxPodLifeTimeSeconds": 300, "states": ["Running"]}))
    assert await cluster.run(pol) == []  # both pods are Pending
    pol = cluster.policy(("deschedule", "PodLifeTime", {"maxPodLifeTimeSeconds": 300}))
    assert await cluster.run(pol) == ["old"]


async def test_too_many_restarts(cluster: Any) -> None:
    crash = cluster.pod("crash", "n1").phase("Running").obj()
    crash["status"]["containerStatuses"] = [{"name": "c0", "restartCount": 7, "ready": False, "image": "nginx:1",
                                             "imageID": "", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]
    calm = cluster.pod("calm", "n1").phase("Running").obj()
    calm["status"]["containerStatuses"] = [{"name": "c0", "restartCount": 1, "ready": True, "image": "nginx:1",
                                            "imageID": "", "state": {"running": {}}}]
    await cluster.add(*nodes("n1", "n2"), crash, calm)
    pol = cluster.policy(("deschedule", "RemovePodsHavingTooManyRestarts",
                          {"podRestartThreshold": 8, "states": ["CrashLoopBackOff"]}))
    assert await cluster.run(pol) == []  # 7 restarts < 8
    pol = cluster.policy(("deschedule", "RemovePodsHavingTooManyRestarts",
                          {"podRestartThreshold": 5, "states": ["CrashLoopBackOff"]}))
    assert await cluster.run(pol) == ["crash"]
    # the evicted pod is terminating now (it was Running): DefaultEvictor does not evict it twice
    assert await cluster.run(pol) == []


@pytest.mark.parametrize(("args", "expected"), [
    pytest.param({}, ["failed-oom", "failed-other"], id="all-failed-pods"),
    pytest.param({"reasons": ["OOMKilled"]}, ["failed-oom"], id="by-container-reason"),
    pytest.param({"exitCodes": [137]}, ["failed-oom"], id="by-exit-code"),
    pytest.param({"excludeOwnerKinds": ["ReplicaSet"]}, [], id="excluded-owner-kind"),
])
async def test_remove_failed_pods(cluster: Any, args: dict[str, Any], expected: list[str]) -> None:
    oom = cluster.pod("failed-oom", "n1").phase("Failed").obj()
    oom["status"]["containerStatuses"] = [{"name": "c0", "restartCount": 0, "ready": False, "image": "nginx:1",
                                           "imageID": "", "state": {"terminated": {"reason": "OOMKilled",
                                                                                   "exitCode": 137}}}]
    other = cluster.pod("failed-other", "n1").phase("Failed").obj()
    ok = cluster.pod("running", "n1").phase("Running").obj()
    await cluster.add(*nodes("n1", "n2"), oom, other, ok)
    assert await cluster.run(cluster.policy(("deschedule", "RemoveFailedPods", args))) == expected
