"""Upstream sigs descheduler pkg/framework/plugins/defaultevictor/defaultevictor_test.go
(TestDefaultEvictorPreEvictionFilter, TestDefaultEvictorFilter), ported case by case.

Upstream builds the DefaultEvictor over a fake clientset and calls its Filter /
PreEvictionFilter on the case's first pod. Here the real Descheduler builds the profile (the
DefaultEvictor with the case's args, over the in-process API and the shared informers), one
cycle sets its ready nodes, and the profile handle's `filter` / `pre_eviction_filter` (the
framework's calls into every evictor plugin) are asked about the pod as the informer holds it.

Not ported: TestReinitialization (calling New a second time with the same args and handle must
not fail on already-registered indexers: Go plumbing with no observable meaning here)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from minik3s.api.resources import PODS
from minik3s.api.types import JsonDict
from minik3s.utils.clock import rfc3339

Mod = Callable[[JsonDict], None]
LOW_PRIORITY = 800
HIGH_PRIORITY = 900
EVICT = "descheduler.alpha.kubernetes.io/evict"


def node(name: str, cpu_m: int, mem: int, pods: int, *mods: Mod) -> JsonDict:
    rl = {"cpu": f"{cpu_m}m", "memory": str(mem), "pods": str(pods)}
    n: JsonDict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name.lower(), "labels": {}}, "spec": {},
                   "status": {"capacity": dict(rl), "allocatable": dict(rl),
                              "conditions": [{"type": "Ready", "status": "True"}]}}
    for m in mods:
        m(n)
    return n


def pod(name: str, cpu_m: int, mem: int, node_name: str, *mods: Mod) -> JsonDict:
    p: JsonDict = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": name.replace("_", "-").lower(), "namespace": "default"},
                   "spec": {"nodeName": node_name,
                            "containers": [{"name": "c0", "image": "registry.k8s.io/pause:3.10",
                                            "resources": {"requests": {"cpu": f"{cpu_m}m", "memory": str(mem)}}}]}}
    for m in mods:
        m(p)
    return p


def owners(*refs: tuple[str, str, str]) -> Mod:
    def set_owners(p: JsonDict) -> None:
        p["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": k, "name": n, "uid": u} for k, n, u in refs]
    return set_owners


normal = owners(("Pod", "owner-pod", "uid-unset"))  # upstream: kind Pod, no name, no uid
rs = owners(("ReplicaSet", "replicaset-1", "uid-replicaset-1"))
ss = owners(("StatefulSet", "statefulset-1", "uid-statefulset-1"))
ds = owners(("DaemonSet", "daemonset-1", "uid-daemonset-1"))
OWNER_UUID = "0f4c3a1e-9d7b-4a51-8a64-3a6e2f4b9c10"
normal_uuid = owners(("Pod", "owner-pod", OWNER_UUID))
two_owners_uuid = owners(("Pod", "owner-pod", OWNER_UUID), ("Pod", "owner-pod", "uid-unset"))


def annotations(extra: dict[str, str]) -> Mod:
    def set_ann(p: JsonDict) -> None:
        p["metadata"].setdefault("annotations", {}).update(extra)
    return set_ann


evict_annotation = annotations({EVICT: "true"})
mirror = annotations({
    "kubernetes.io/created-by": '{"kind":"SerializedReference","apiVersion":"v1","reference":{"kind":"Pod"}}',
    "kubernetes.io/config.source": "api", "kubernetes.io/config.mirror": "mirror"})


def local_storage(p: JsonDict) -> None:
    # upstream's fixture puts hostPath and emptyDir in one volume, which the API refuses (one
    # source per volume): two volumes carry the same local storage
    p["spec"]["volumes"] = [{"name": "sample", "hostPath": {"path": "somePath"}},
                            {"name": "sample-dir", "emptyDir": {"sizeLimit": "10"}}]


def priority(value: int) -> Mod:
    def set_priority(p: JsonDict) -> None:
        p["spec"]["priority"] = value
    return set_priority


def system_critical(p: JsonDict) -> None:
    """SystemCriticalPriority, through the system-cluster-critical class (2000000000)."""
    p["spec"]["priorityClassName"] = "system-cluster-critical"


def failed(p: JsonDict) -> None:
    p["status"] = {"phase": "Failed"}


def node_selector(**kv: str) -> Mod:
    def set_sel(p: JsonDict) -> None:
        p["spec"]["nodeSelector"] = dict(kv)
    return set_sel


def labels(**kv: str) -> Mod:
    def set_labels(o: JsonDict) -> None:
        o["metadata"]["labels"] = dict(kv)
    return set_labels


def tolerate_gpu(p: JsonDict) -> None:
    p["spec"]["tolerations"] = [{"key": "hardware", "value": "gpu", "effect": "NoSchedule"}]


def gpu_taint(n: JsonDict) -> None:
    n["spec"]["taints"] = [{"key": "hardware", "value": "gpu", "effect": "NoSchedule"}]


def started_minutes_ago(minutes: int) -> Callable[[Any], Mod]:
    """Upstream sets status.startTime to now - minutes (resolved against the cluster's clock)."""
    def bind(cluster: Any) -> Mod:
        def set_start(p: JsonDict) -> None:
            p["status"] = {"phase": "Running",
                           "startTime": rfc3339(cluster.clock.now() - timedelta(minutes=minutes))}
        return set_start
    return bind


def pdb(name: str, app: str) -> JsonDict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": app}}, "maxUnavailable": 1}}


east = labels(datacenter="east")


async def evictor_verdict(cluster: Any, pods: list[JsonDict], nodes: list[JsonDict], args: dict[str, Any], *,
                          pre_eviction: bool, extra: list[JsonDict] | None = None) -> bool:
    await cluster.add(*nodes, *pods, *(extra or []))
    d = await cluster.descheduler(cluster.policy(evictor=args))
    await d.run_once()  # sets the cycle's ready nodes (nodeFit looks at them)
    name = pods[0]["metadata"]["name"]
    target = next(p for p in cluster.informers.informer(PODS).store.list() if p["metadata"]["name"] == name)
    handle = d.profiles[0].handle
    return bool(handle.pre_eviction_filter(target) if pre_eviction else handle.filter(target))


N1 = "node1"

PRE_EVICTION_CASES = [
    pytest.param([pod("p1", 400, 0, N1, normal)],
                 [node("node2", 1000, 2000, 13, gpu_taint), node("node3", 1000, 2000, 13, gpu_taint)], True, False,
                 id="Pod with no tolerations running on normal node, all other nodes tainted"),
    pytest.param([pod("p1", 400, 0, N1, normal, tolerate_gpu)],
                 [node("node2", 1000, 2000, 13, gpu_taint), node("node3", 1000, 2000, 13, gpu_taint)], True, True,
                 id="Pod with correct tolerations running on normal node, all other nodes tainted"),
    pytest.param([pod("p1", 400, 0, N1, normal, node_selector(datacenter="fail"))],
                 [node("node2", 1000, 2000, 13, east), node("node3", 1000, 2000, 13, east)], True, False,
                 id="Pod with incorrect node selector"),
    pytest.param([pod("p1", 400, 0, N1, normal, node_selector(datacenter="east"))],
                 [node("node2", 1000, 2000, 13, east), node("node3", 1000, 2000, 13, east)], True, True,
                 id="Pod with correct node selector"),
    pytest.param([pod("p1", 12, 8, N1, normal, node_selector(datacenter="east"))],
                 [node("node2-TEST", 10, 16, 10, east), node("node3-TEST", 10, 16, 10, east)], True, False,
                 id="Pod with correct node selector, but only available node doesn't have enough CPU"),
    pytest.param([pod("p1", 12, 8, N1, normal, node_selector(datacenter="east")),
                  pod("node2-pod-10GB-mem", 20, 10, "node2", labels(test="true")),
                  pod("node3-pod-10GB-mem", 20, 10, "node3", labels(test="true"))],
                 [node("node2", 100, 16, 10, east), node("node3", 100, 20, 10, east)], True, True,
                 id="Pod with correct node selector, and one node has enough memory"),
    pytest.param([pod("p1", 12, 8, N1, normal, node_selector(datacenter="east")),
                  pod("node2-pod-10GB-mem", 10, 10, "node2", labels(test="true")),
                  pod("node3-pod-10GB-mem", 10, 10, "node3", labels(test="true"))],
                 [node("node2", 100, 16, 10, east), node("node3", 100, 16, 10, east)], True, False,
                 id="Pod with correct node selector, but both nodes don't have enough memory"),
    pytest.param([pod("p1", 400, 0, N1, normal, node_selector(datacenter="fail"))],
                 [node("node2", 1000, 2000, 13, east), node("node3", 1000, 2000, 13, east)], False, True,
                 id="Pod with incorrect node selector, but nodefit false, should still be evicted"),
]


@pytest.mark.parametrize(("pods", "nodes", "node_fit", "result"), PRE_EVICTION_CASES)
async def test_default_evictor_pre_eviction_filter(cluster: Any, pods: list[JsonDict], nodes: list[JsonDict],
                                                   node_fit: bool, result: bool) -> None:
    assert await evictor_verdict(cluster, pods, nodes, {"nodeFit": node_fit}, pre_eviction=True) is result


def _filter_case(pods: list[Any], args: dict[str, Any], result: bool, *, nodes: list[JsonDict] | None = None,
                 pdbs: list[JsonDict] | None = None, case_id: str) -> Any:
    return pytest.param(pods, nodes or [], args, pdbs or [], result, id=case_id)


FILTER_CASES = [
    _filter_case([pod("bare_pod_failed", 400, 0, N1, failed)], {"evictFailedBarePods": False}, False,
                 case_id="Failed pod eviction with no ownerRefs"),
    _filter_case([pod("bare_pod", 400, 0, N1)], {"evictFailedBarePods": True}, False,
                 case_id="Normal pod eviction with no ownerRefs and evictFailedBarePods enabled"),
    _filter_case([pod("bare_pod_failed_but_can_be_evicted", 400, 0, N1, failed)], {"evictFailedBarePods": True},
                 True, case_id="Failed pod eviction with no ownerRefs (evictFailedBarePods enabled)"),
    _filter_case([pod("p1", 400, 0, N1, normal)], {}, True, case_id="Normal pod eviction with normal ownerRefs"),
    _filter_case([pod("p2", 400, 0, N1, evict_annotation, normal)], {}, True,
                 case_id="Normal pod eviction with normal ownerRefs and descheduler.alpha.kubernetes.io/evict "
                         "annotation"),
    _filter_case([pod("p3", 400, 0, N1, normal)], {}, True, case_id="Normal pod eviction with replicaSet ownerRefs"),
    _filter_case([pod("p4", 400, 0, N1, evict_annotation, rs)], {}, True,
                 case_id="Normal pod eviction with replicaSet ownerRefs and descheduler.alpha.kubernetes.io/evict "
                         "annotation"),
    _filter_case([pod("p18", 400, 0, N1, normal)], {}, True, case_id="Normal pod eviction with statefulSet ownerRefs"),
    _filter_case([pod("p19", 400, 0, N1, evict_annotation, ss)], {}, True,
                 case_id="Normal pod eviction with statefulSet ownerRefs and descheduler.alpha.kubernetes.io/evict "
                         "annotation"),
    _filter_case([pod("p5", 400, 0, N1, normal, local_storage)], {}, False,
                 case_id="Pod not evicted because it is bound to a PV and evictLocalStoragePods = false"),
    _filter_case([pod("p6", 400, 0, N1, normal, local_storage)], {"evictLocalStoragePods": True}, True,
                 case_id="Pod is evicted because it is bound to a PV and evictLocalStoragePods = true"),
    _filter_case([pod("p7", 400, 0, N1, evict_annotation, normal, local_storage)], {}, True,
                 case_id="Pod is evicted because it is bound to a PV and evictLocalStoragePods = false, but it has "
                         "scheduler.alpha.kubernetes.io/evict annotation"),
    _filter_case([pod("p8", 400, 0, N1, ds)], {}, False,
                 case_id="Pod not evicted becasuse it is part of a daemonSet"),
    _filter_case([pod("p9", 400, 0, N1, evict_annotation, ds)], {}, True,
                 case_id="Pod is evicted becasuse it is part of a daemonSet, but it has "
                         "scheduler.alpha.kubernetes.io/evict annotation"),
    _filter_case([pod("p10", 400, 0, N1, normal, mirror)], {}, False,
                 case_id="Pod not evicted becasuse it is a mirror poddsa"),
    _filter_case([pod("p11", 400, 0, N1, normal, mirror, evict_annotation)], {}, True,
                 case_id="Pod is evicted becasuse it is a mirror pod, but it has scheduler.alpha.kubernetes.io/evict "
                         "annotation"),
    _filter_case([pod("p12", 400, 0, N1, normal, system_critical)], {}, False,
                 case_id="Pod not evicted becasuse it has system critical priority"),
    _filter_case([pod("p13", 400, 0, N1, normal, system_critical, evict_annotation)], {}, True,
                 case_id="Pod is evicted becasuse it has system critical priority, but it has "
                         "scheduler.alpha.kubernetes.io/evict annotation"),
    _filter_case([pod("p14", 400, 0, N1, normal, priority(HIGH_PRIORITY))],
                 {"priorityThreshold": {"value": LOW_PRIORITY}}, False,
                 case_id="Pod not evicted becasuse it has a priority higher than the configured priority threshold"),
    _filter_case([pod("p15", 400, 0, N1, normal, evict_annotation, priority(HIGH_PRIORITY))],
                 {"priorityThreshold": {"value": LOW_PRIORITY}}, True,
                 case_id="Pod is evicted becasuse it has a priority higher than the configured priority threshold, "
                         "but it has scheduler.alpha.kubernetes.io/evict annotation"),
    _filter_case([pod("p16", 400, 0, N1, normal, system_critical)], {"evictSystemCriticalPods": True}, True,
                 case_id="Pod is evicted becasuse it has system critical priority, but evictSystemCriticalPods = true"),
    _filter_case([pod("p16", 400, 0, N1, normal, evict_annotation, system_critical)],
                 {"evictSystemCriticalPods": True}, True,
                 case_id="Pod is evicted becasuse it has system critical priority, but evictSystemCriticalPods = true "
                         "and it has scheduler.alpha.kubernetes.io/evict annotation"),
    _filter_case([pod("p17", 400, 0, N1, normal, priority(HIGH_PRIORITY))],
                 {"evictSystemCriticalPods": True, "priorityThreshold": {"value": LOW_PRIORITY}}, True,
                 case_id="Pod is evicted becasuse it has a priority higher than the configured priority threshold, "
                         "but evictSystemCriticalPods = true"),
    _filter_case([pod("p17", 400, 0, N1, normal, evict_annotation, priority(HIGH_PRIORITY))],
                 {"evictSystemCriticalPods": True, "priorityThreshold": {"value": LOW_PRIORITY}}, True,
                 case_id="Pod is evicted becasuse it has a priority higher than the configured priority threshold, "
                         "but evictSystemCriticalPods = true and it has scheduler.alpha.kubernetes.io/evict annotation"),
    _filter_case([pod("p1", 400, 0, N1, normal)], {"nodeFit": True}, True,
                 nodes=[node("node2", 1000, 2000, 13, gpu_taint), node("node3", 1000, 2000, 13, gpu_taint)],
                 case_id="Pod with no tolerations running on normal node, all other nodes tainted, no "
                         "PreEvictionFilter, should ignore nodeFit"),
    _filter_case([pod("p1", 1, 1, N1, normal_uuid), pod("p2", 1, 1, N1, normal_uuid)], {"minReplicas": 2}, True,
                 case_id="minReplicas of 2, owner with 2 replicas, evicts"),
    _filter_case([pod("p1", 1, 1, N1, normal_uuid), pod("p2", 1, 1, N1, normal_uuid)], {"minReplicas": 3}, False,
                 case_id="minReplicas of 3, owner with 2 replicas, no eviction"),
    _filter_case([pod("p1", 1, 1, N1, two_owners_uuid), pod("p2", 1, 1, N1, normal)], {"minReplicas": 2}, True,
                 case_id="minReplicas of 2, multiple owners, no eviction"),
    _filter_case([lambda c: pod("p1", 1, 1, N1, normal, started_minutes_ago(10)(c))], {"minPodAge": "50m"}, False,
                 case_id="minPodAge of 50, pod created 10 minutes ago, no eviction"),
    _filter_case([lambda c: pod("p1", 1, 1, N1, normal, started_minutes_ago(60)(c))], {"minPodAge": "50m"}, True,
                 case_id="minPodAge of 50, pod created 60 minutes ago, evicts"),
    _filter_case([lambda c: pod("p1", 1, 1, N1, normal, started_minutes_ago(60)(c))], {}, True,
                 case_id="nil minPodAge, pod created 60 minutes ago, evicts"),
    _filter_case([pod("p1", 1, 1, N1, normal, labels(app="foo"))], {"ignorePodsWithoutPDB": True}, False,
                 case_id="ignorePodsWithoutPDB, pod with no PDBs, no eviction"),
    _filter_case([pod("p1", 1, 1, N1, normal, labels(app="foo"))], {"ignorePodsWithoutPDB": True}, True,
                 pdbs=[pdb("pdb1", "foo")], case_id="ignorePodsWithoutPDB, pod with PDBs, evicts"),
]


@pytest.mark.parametrize(("pods", "nodes", "args", "pdbs", "result"), FILTER_CASES)
async def test_default_evictor_filter(cluster: Any, pods: list[Any], nodes: list[JsonDict], args: dict[str, Any],
                                      pdbs: list[JsonDict], result: bool) -> None:
    built = [p(cluster) if callable(p) else p for p in pods]
    assert await evictor_verdict(cluster, built, nodes, args, pre_eviction=False, extra=pdbs) is result
