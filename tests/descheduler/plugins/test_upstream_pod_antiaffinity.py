"""Upstream sigs descheduler
pkg/framework/plugins/removepodsviolatinginterpodantiaffinity/pod_antiaffinity_test.go,
TestPodAntiAffinity ported case by case: one real descheduling cycle of
RemovePodsViolatingInterPodAntiAffinity over the in-process API (DefaultEvictor nodeFit and
eviction limits per case), asserting the number of evictions. Anti-affinity terms are upstream's
test.SetPodAntiAffinity (required, `key In [value]`, topologyKey `region`).

Harness notes: a real cycle is skipped with fewer than two ready nodes, so one-node cases get an
extra empty node `spare` without a `region` label (outside every term's topology, nodeFit off in
all of them); terminating pods are made with a finalizer and a delete. Upstream lists the
"Evicts pod that conflicts with critical pod" case twice; both are kept (ids suffixed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from minik3s.api.resources import PODS
from minik3s.api.types import JsonDict

Mod = Callable[[JsonDict], None]


def node(name: str, *mods: Mod, cpu_m: int = 2000, mem: int = 3000, pods: int = 10) -> JsonDict:
    rl = {"cpu": f"{cpu_m}m", "memory": str(mem), "pods": str(pods)}
    n: JsonDict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}}, "spec": {},
                   "status": {"capacity": dict(rl), "allocatable": dict(rl),
                              "conditions": [{"type": "Ready", "status": "True"}]}}
    for m in mods:
        m(n)
    return n


def main_region(n: JsonDict) -> None:
    n["metadata"]["labels"] = {"region": "main-region"}


def node1() -> JsonDict:
    return node("n1", main_region)


def pod(name: str, node_name: str, *mods: Mod) -> JsonDict:
    p: JsonDict = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                   "spec": {"nodeName": node_name,
                            "containers": [{"name": "c0", "image": "registry.k8s.io/pause:3.10",
                                            "resources": {"requests": {"cpu": "100m", "memory": "0"}}}]}}
    for m in mods:
        m(p)
    return p


def owned(p: JsonDict) -> None:
    p["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "owner-pod",
                                         "uid": "uid-owner-pod"}]


def anti(key: str, value: str) -> Mod:
    def set_anti(p: JsonDict) -> None:
        p["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]},
             "topologyKey": "region"}]}}
    return set_anti


def labels(**kv: str) -> Mod:
    def set_labels(p: JsonDict) -> None:
        p["metadata"]["labels"] = dict(kv)
    return set_labels


def priority(v: int) -> Mod:
    def set_priority(p: JsonDict) -> None:
        p["spec"]["priority"] = v
    return set_priority


def critical(p: JsonDict) -> None:
    p["spec"]["priorityClassName"] = "system-cluster-critical"  # SystemCriticalPriority


def terminating(p: JsonDict) -> None:
    p["metadata"]["finalizers"] = ["test.minik3s.io/keep"]


def west(p: JsonDict) -> None:
    p["spec"]["nodeSelector"] = {"datacenter": "west"}


foo_bar = labels(foo="bar")


def p1() -> JsonDict:
    return pod("p1", "n1", owned, anti("foo", "bar"))


def p2() -> JsonDict:
    return pod("p2", "n1", owned, foo_bar)


def p3() -> JsonDict:
    return pod("p3", "n1", owned, anti("foo", "bar"))


def p4() -> JsonDict:
    return pod("p4", "n1", owned, anti("foo", "bar"))


P7 = pod("p7", "n1", owned, labels(foo1="bar1"), anti("foo", "bar"), priority(0))
P8 = pod("p8", "n1", west)
P9 = pod("p9", "n1", owned, anti("foo", "bar"), terminating)
P10 = pod("p10", "n1", owned, anti("foo", "bar"), terminating)
P11 = pod("p11", "n5", owned, foo_bar)
NON_EVICTABLE = pod("non-evict", "n1", critical, foo_bar)


def case(description: str, pods: list[JsonDict], nodes: list[JsonDict], expected: int, **kw: Any) -> Any:
    return pytest.param(pods, nodes, expected, kw, id=description)


CASES = [
    case("Maximum pods to evict - 0", [p1(), p2(), p3(), p4()], [node1()], 3),
    case("Maximum pods to evict - 3", [p1(), p2(), p3(), p4()], [node1()], 3, max_per_node=3),
    case("Maximum pods to evict (maxPodsToEvictPerNamespace=3) - 3", [p1(), p2(), p3(), p4()], [node1()], 3,
         max_per_namespace=3),
    case("Maximum pods to evict (maxNoOfPodsToEvictTotal)", [p1(), p2(), p3(), p4()], [node1()], 1,
         max_per_namespace=3, max_total=1),
    case("Evict only 1 pod after sorting",
         [pod("p5", "n1", owned, foo_bar, anti("foo1", "bar1"), priority(100)),
          pod("p6", "n1", owned, foo_bar, anti("foo1", "bar1"), priority(50)), P7], [node1()], 1),
    case("Evicts pod that conflicts with critical pod (but does not evict critical pod)", [p1(), NON_EVICTABLE],
         [node1()], 1, max_per_node=1),
    case("Evicts pod that conflicts with critical pod (but does not evict critical pod) (2)", [p1(), NON_EVICTABLE],
         [node1()], 1, max_per_node=1),
    case("Won't evict pods because node selectors don't match available nodes", [P8, NON_EVICTABLE],
         [node1(), node("n2", lambda n: n["metadata"].update(labels={"datacenter": "east"}))], 0,
         max_per_node=1, nodeFit=True),
    case("Won't evict pods because only other node is not schedulable", [P8, NON_EVICTABLE],
         [node1(), node("n3", lambda n: n.update(spec={"unschedulable": True}))], 0, max_per_node=1, nodeFit=True),
    case("No pod to evicted since all pod terminating", [P9, P10], [node1()], 0),
    case("Won't evict pods because only other node doesn't have enough resources", [p1(), p2(), p3(), p4()],
         [node1(), node("n4", cpu_m=2, mem=2, pods=1)], 0, max_per_node=3, nodeFit=True),
    case("Evict pod violating anti-affinity among different node (all pods have anti-affinity)", [p1(), P11],
         [node1(), node("n5", main_region, cpu_m=200)], 1),
]


@pytest.mark.parametrize(("pods", "nodes", "expected", "kw"), CASES)
async def test_pod_anti_affinity(cluster: Any, pods: list[JsonDict], nodes: list[JsonDict], expected: int,
                                 kw: dict[str, Any]) -> None:
    if len(nodes) < 2:
        nodes = [*nodes, node("spare")]
    await cluster.add(*nodes, *pods)
    for p in pods:
        if p["metadata"].get("finalizers"):
            await cluster.client.delete(PODS, p["metadata"]["name"], "default")
    limits = {k: kw[v] for k, v in (("maxNoOfPodsToEvictPerNode", "max_per_node"),
                                    ("maxNoOfPodsToEvictPerNamespace", "max_per_namespace"),
                                    ("maxNoOfPodsToEvictTotal", "max_total")) if v in kw}
    pol = cluster.policy(("deschedule", "RemovePodsViolatingInterPodAntiAffinity", None),
                         evictor={"nodeFit": kw.get("nodeFit", False)}, **limits)
    evicted = await cluster.run(pol)
    assert len(evicted) == expected, evicted
