"""Upstream sigs descheduler pkg/framework/plugins/removeduplicates/removeduplicates_test.go,
ported case by case (TestFindDuplicatePods, TestRemoveDuplicatesUniformly): one real
descheduling cycle of RemoveDuplicates over the in-process API, asserting the number of
evictions. Pods and nodes are built as upstream's test.BuildTestPod / test.BuildTestNode do
(cpu millicores and memory bytes requested; cpu, memory, pods allocatable); names that upstream
writes in capitals are lower-cased, as the API requires."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from minik3s.api.types import JsonDict

Mod = Callable[[JsonDict], None]


def node(name: str, cpu_m: int, mem: int, pods: int, *mods: Mod) -> JsonDict:
    rl = {"cpu": f"{cpu_m}m", "memory": str(mem), "pods": str(pods)}
    n: JsonDict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}}, "spec": {},
                   "status": {"capacity": dict(rl), "allocatable": dict(rl),
                              "conditions": [{"type": "Ready", "status": "True"}]}}
    for m in mods:
        m(n)
    return n


def pod(name: str, cpu_m: int, mem: int, node_name: str, *mods: Mod) -> JsonDict:
    p: JsonDict = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": name.lower(), "namespace": "default"},
                   "spec": {"nodeName": node_name,
                            "containers": [{"name": "c0", "image": "registry.k8s.io/pause:3.10",
                                            "resources": {"requests": {"cpu": f"{cpu_m}m",
                                                                       "memory": str(mem)}}}]}}
    for m in mods:
        m(p)
    return p


def owners(*refs: tuple[str, str]) -> Mod:
    def set_owners(p: JsonDict) -> None:
        p["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": k, "name": n, "uid": f"uid-{k}-{n}"}
                                            for k, n in refs]
    return set_owners


rs = owners(("ReplicaSet", "replicaset-1"))
rs2 = owners(("ReplicaSet", "replicaset-2"))
two_rs = owners(("ReplicaSet", "replicaset-1"), ("ReplicaSet", "replicaset-2"))
ds = owners(("DaemonSet", "daemonset-1"))
normal = owners(("Pod", "owner-pod"))


def ns(name: str) -> Mod:
    def set_ns(p: JsonDict) -> None:
        p["metadata"]["namespace"] = name
    return set_ns


def on_n1(name: str, *mods: Mod) -> JsonDict:
    return pod(name, 100, 0, "n1", *mods)


def with_image(name: str, image: str) -> JsonDict:
    p = on_n1(name, rs)
    p["spec"]["containers"].append({"name": image, "image": image})
    return p


def image(img: str) -> Mod:
    def set_image(p: JsonDict) -> None:
        p["spec"]["containers"][0]["image"] = img
    return set_image


def extra_container(p: JsonDict) -> None:
    p["spec"]["containers"].append({"name": "foo", "image": "foo"})


def node_selector(**kv: str) -> Mod:
    def set_sel(p: JsonDict) -> None:
        p["spec"].setdefault("nodeSelector", {}).update(kv)
    return set_sel


def local_storage(p: JsonDict) -> None:
    normal(p)
    # upstream's fixture has hostPath and emptyDir in one volume, which the API refuses
    p["spec"]["volumes"] = [{"name": "sample", "hostPath": {"path": "somePath"}},
                            {"name": "sample-dir", "emptyDir": {"sizeLimit": "10"}}]


def mirror(p: JsonDict) -> None:
    p["metadata"]["annotations"] = {
        "kubernetes.io/created-by": '{"kind":"SerializedReference","apiVersion":"v1","reference":{"kind":"Pod"}}',
        "kubernetes.io/config.source": "api", "kubernetes.io/config.mirror": "mirror"}


def critical(p: JsonDict) -> None:
    """Upstream: kube-system, priority SystemCriticalPriority (here via system-cluster-critical)."""
    p["metadata"]["namespace"] = "kube-system"
    p["spec"]["priorityClassName"] = "system-cluster-critical"


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> Mod:
    def set_taint(n: JsonDict) -> None:
        t = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        n["spec"].setdefault("taints", []).append(t)
    return set_taint


def node_labels(**kv: str) -> Mod:
    def set_labels(n: JsonDict) -> None:
        n["metadata"]["labels"].update(kv)
    return set_labels


def unschedulable(n: JsonDict) -> None:
    n["spec"] = {"unschedulable": True}


async def add_all(cluster: Any, nodes: list[JsonDict], pods: list[JsonDict]) -> None:
    known = {"default", "kube-system", "other"}
    for p in pods:
        name = p["metadata"]["namespace"]
        if name not in known:
            await cluster.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
            known.add(name)
    await cluster.add(*[copy.deepcopy(o) for o in nodes + pods])


# ---- TestFindDuplicatePods ----------------------------------------------------------------------

NODE1 = node("n1", 2000, 3000, 10)
NODE2 = node("n2", 2000, 3000, 10)
NODE3 = node("n3", 2000, 3000, 10, taint("hardware", "gpu"))
NODE4 = node("n4", 2000, 3000, 10, node_labels(datacenter="east"))
NODE5 = node("n5", 2000, 3000, 10, unschedulable)
NODE6 = node("n6", 200, 200, 10)

P1, P2, P3 = (on_n1(n, ns("dev"), rs) for n in ("p1", "p2", "p3"))
P4 = on_n1("p4", ds)
P5 = on_n1("p5", local_storage)
P6 = on_n1("p6", mirror)
P7 = on_n1("p7", critical)
P8, P9, P10 = (on_n1(n, ns("test"), rs) for n in ("p8", "p9", "p10"))
P11 = on_n1("p11", ns("different-images"), image("foo"), rs)
P12 = on_n1("p12", ns("different-images"), image("bar"), rs)
P13 = on_n1("p13", ns("different-images"), rs, extra_container)
P15 = on_n1("p15", ns("node-fit"), rs, node_selector(datacenter="west"))
P16 = on_n1("NOT1", ns("node-fit"), rs, node_selector(datacenter="west"))
P17 = on_n1("NOT2", ns("node-fit"), rs, node_selector(datacenter="west"))
P19 = pod("CPU-eater", 150, 150, "n6", ns("test"))
P20 = pod("CPU-saver", 100, 150, "n6", ns("test"))


@pytest.mark.parametrize(("pods", "nodes", "expected", "exclude_owner_kinds", "nodefit"), [
    pytest.param([P1, P2, P3], [NODE1, NODE2], 1, None, False,
                 id="Three pods in the `dev` Namespace, bound to same ReplicaSet. 1 should be evicted."),
    pytest.param([P1, P2, P3], [NODE1, NODE2], 0, ["ReplicaSet"], False,
                 id="Three pods in the `dev` Namespace, bound to same ReplicaSet, but ReplicaSet kind is excluded. "
                    "0 should be evicted."),
    pytest.param([P8, P9, P10], [NODE1, NODE2], 1, None, False,
                 id="Three Pods in the `test` Namespace, bound to same ReplicaSet. 1 should be evicted."),
    pytest.param([P1, P2, P3, P8, P9, P10], [NODE1, NODE2], 2, None, False,
                 id="Three Pods in the `dev` Namespace, three Pods in the `test` Namespace. Bound to ReplicaSet "
                    "with same name. 4 should be evicted."),
    pytest.param([P4, P5, P6, P7], [NODE1, NODE2], 0, None, False,
                 id="Pods are: part of DaemonSet, with local storage, mirror pod annotation, critical pod "
                    "annotation - none should be evicted."),
    pytest.param([P1, P2, P3, P4, P5, P6, P7, P8, P9, P10], [NODE1, NODE2], 2, None, False,
                 id="Test all Pods: 4 should be evicted."),
    pytest.param([P11, P12], [NODE1, NODE2], 0, None, False,
                 id="Pods with the same owner but different images should not be evicted"),
    pytest.param([P13], [NODE1, NODE2], 0, None, False,
                 id="Pods with multiple containers should not match themselves"),
    pytest.param([P11, P13], [NODE1, NODE2], 0, None, False,
                 id="Pods with matching ownerrefs and at not all matching image should not trigger an eviction"),
    pytest.param([P1, P2, P3], [NODE1, NODE3], 0, None, True,
                 id="Three pods in the `dev` Namespace, bound to same ReplicaSet. Only node available has a taint, "
                    "and nodeFit set to true. 0 should be evicted."),
    pytest.param([P15, P16, P17], [NODE1, NODE4], 0, None, True,
                 id="Three pods in the `node-fit` Namespace, bound to same ReplicaSet, all with a nodeSelector. "
                    "Only node available has an incorrect node label, and nodeFit set to true. 0 should be evicted."),
    pytest.param([P1, P2, P3], [NODE1, NODE5], 0, None, True,
                 id="Three pods in the `node-fit` Namespace, bound to same ReplicaSet. Only node available is not "
                    "schedulable, and nodeFit set to true. 0 should be evicted."),
    pytest.param([P1, P2, P3, P19], [NODE1, NODE6], 0, None, True,
                 id="Three pods in the `node-fit` Namespace, bound to same ReplicaSet. Only node available does not "
                    "have enough CPU, and nodeFit set to true. 0 should be evicted."),
    pytest.param([P1, P2, P3, P20], [NODE1, NODE6], 1, None, True,
                 id="Three pods in the `node-fit` Namespace, bound to same ReplicaSet. Only node available has "
                    "enough CPU, and nodeFit set to true. 1 should be evicted."),
])
async def test_find_duplicate_pods(cluster: Any, pods: list[JsonDict], nodes: list[JsonDict], expected: int,
                                   exclude_owner_kinds: list[str] | None, nodefit: bool) -> None:
    await add_all(cluster, nodes, pods)
    args = {"excludeOwnerKinds": exclude_owner_kinds} if exclude_owner_kinds else None
    pol = cluster.policy(("balance", "RemoveDuplicates", args), evictor={"nodeFit": nodefit})
    evicted = await cluster.run(pol)
    assert len(evicted) == expected, evicted


# ---- TestRemoveDuplicatesUniformly --------------------------------------------------------------

def tolerates(key: str, value: str) -> Mod:
    def set_tol(p: JsonDict) -> None:
        rs(p)
        p["spec"]["tolerations"] = [{"key": key, "value": value, "operator": "Equal", "effect": "NoSchedule"}]
    return set_tol


def not_master_affinity(k: str) -> Mod:
    def set_aff(p: JsonDict) -> None:
        rs(p)
        p["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "node-role.kubernetes.io/control-plane", "operator": "DoesNotExist"},
                {"key": k, "operator": "DoesNotExist"}]}]}}}
    return set_aff


def worker_selector(v: str) -> Mod:
    def set_sel(p: JsonDict) -> None:
        rs(p)
        p["spec"].setdefault("nodeSelector", {})["node-role.kubernetes.io/worker"] = v
    return set_sel


master_taint = taint("node-role.kubernetes.io/control-plane")
master_label = node_labels(**{"node-role.kubernetes.io/control-plane": ""})
worker_label = node_labels(**{"node-role.kubernetes.io/worker": "k2"})  # upstream sets k1 then overwrites with k2


def nine(nodes: tuple[str, str, str], mod_a: Mod, mod_b: Mod) -> list[JsonDict]:
    """(5, 3, 1) pods over three nodes, alternating two pod variants as upstream does."""
    placement = [nodes[0]] * 5 + [nodes[1]] * 3 + [nodes[2]]
    return [pod(f"p{i + 1}", 100, 0, n, mod_a if i % 2 == 0 else mod_b) for i, n in enumerate(placement)]


def n3(*names: str, mod: Mod | None = None) -> list[JsonDict]:
    return [node(n, 2000, 3000, 10, *([mod] if mod else [])) for n in names]


WORKERS = ("worker1", "worker2", "worker3")
MASTERS = ("master1", "master2", "master3")
UNIFORM_531 = [pod(f"p{i}", 100, 0, n, rs) for i, n in enumerate(["n1"] * 5 + ["n2"] * 3 + ["n3"], start=1)]


@pytest.mark.parametrize(("pods", "nodes", "expected"), [
    pytest.param(UNIFORM_531, n3("n1", "n2", "n3"), 2, id="Evict pods uniformly"),
    pytest.param(UNIFORM_531, n3("n1", "n2"), 1, id="Evict pods uniformly with one node left out"),
    pytest.param([pod(f"p{i}", 100, 0, n, two_rs) for i, n in enumerate(["n1"] * 5 + ["n2"] * 3 + ["n3"], start=11)],
                 n3("n1", "n2", "n3"), 4, id="Evict pods uniformly with two replica sets"),
    pytest.param([pod(f"p{i}", 100, 0, n, rs) for i, n in enumerate(["n1"] * 5 + ["n2"] * 3 + ["n3"], start=11)]
                 + [pod(f"p{i}", 100, 0, n, rs2) for i, n in enumerate(["n1"] + ["n2"] * 3 + ["n3"] * 5, start=21)],
                 n3("n1", "n2", "n3"), 4, id="Evict pods uniformly with two owner references"),
    pytest.param([pod("p1", 100, 0, "n1", rs), pod("p2", 100, 0, "n1", rs)], n3("n1", "n2", "n3"), 1,
                 id="Evict pods with number of pods less than nodes"),
    pytest.param([with_image("p1", "foo"), with_image("p2", "bar"), with_image("p3", "baz"), with_image("p4", "foo")],
                 n3("n1", "n2", "n3"), 1,
                 id="Evict pods with number of pods less than nodes, but ignore different pods with the same ownerref"),
    pytest.param([pod("p1", 100, 0, "n1", rs)], n3("n1", "n2", "n3"), 0,
                 id="Evict pods with a single pod with three nodes"),
    pytest.param(nine(WORKERS, tolerates("k1", "v1"), tolerates("k2", "v2")),
                 n3(*WORKERS) + n3(*MASTERS, mod=master_taint), 2,
                 id="Evict pods uniformly respecting taints"),
    pytest.param(nine(WORKERS, not_master_affinity("k1"), not_master_affinity("k2")),
                 n3(*WORKERS) + n3(*MASTERS, mod=master_label), 2,
                 id="Evict pods uniformly respecting RequiredDuringSchedulingIgnoredDuringExecution node affinity"),
    pytest.param(nine(WORKERS, worker_selector("k1"), worker_selector("k2")),
                 n3(*WORKERS, mod=worker_label) + n3(*MASTERS), 2,
                 id="Evict pods uniformly respecting node selector"),
    pytest.param(nine(WORKERS, worker_selector("k1"), worker_selector("k2")),
                 n3(*WORKERS) + n3(*MASTERS), 0,
                 id="Evict pods uniformly respecting node selector with zero target nodes"),
])
async def test_remove_duplicates_uniformly(cluster: Any, pods: list[JsonDict], nodes: list[JsonDict],
                                           expected: int) -> None:
    await add_all(cluster, nodes, pods)
    evicted = await cluster.run(cluster.policy(("balance", "RemoveDuplicates", None)))
    assert len(evicted) == expected, evicted
