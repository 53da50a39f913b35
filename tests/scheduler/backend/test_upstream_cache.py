"""Upstream pkg/scheduler/backend/cache/cache_test.go and snapshot_test.go (v1.33) tables, ported
to `scheduler.backend.cache.Cache` and `scheduler.backend.snapshot`.

Mapping: `AssumePod(pod)` is `assume_pod(PodInfo(pod))` (ValueError where upstream returns an
error); `finishBinding(pod, now)` is `finish_binding(pi, now)` and `cleanupAssumedPods(now)`
`cleanup_assumed_pods(now)` on a `Cache(ttl=...)` (times in seconds); `AddPod`/`UpdatePod`/
`RemovePod`/`AddNode`/`UpdateNode`/`RemoveNode` are the snake_case methods, which return nothing:
where upstream asserts an error for a call that changes nothing (a second AddPod, an UpdatePod or
RemovePod of an unknown pod, a second RemoveNode), the port asserts that nothing changed; `GetPod`
is `get_pod(uid)` (None for upstream's "not found"); `cache.nodes` is `get_node_info` (a removed
node with pods left is a NodeInfo without `node`); the head-first node list is `reversed(_recent)`;
`nodeTree.list()` is `node_tree_list()`; `Dump()` is `dump()`; `NewSnapshot(pods, nodes)` is
`Snapshot.from_objects(nodes, pods)`; `usedPVCSet` is `used_pvc_set`.

Skipped: "Assume and forget in cache, and in snapshot" (TestSchedulerCache_UpdateSnapshot) and
TestSnapshot_AssumeForget (Snapshot.AssumePod/ForgetPod came after v1.33); the nodeTree internals
(numNodes) are checked through `node_count()` and `node_tree_list()`.

NonZeroRequested: upstream's holds cpu and memory only; ours carries the pods' ephemeral-storage
and scalar requests too (the NodeResources scorers read them there), so the views below compare its
cpu and memory and `test_non_zero_requested_is_cpu_and_memory_only` records the difference.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from minik3s.testing.builders import make_node
from scheduler.backend.cache import Cache
from scheduler.backend.snapshot import (
    Snapshot,
    create_image_existence_map,
    create_used_pvc_set,
    get_node_image_states,
)
from scheduler.framework.types import NodeInfo, PodInfo

NS = "node_info_cache_test"
DEFAULT_CPU = 100
DEFAULT_MEM = 200 * 1024 * 1024
MB = 1024 * 1024
TTL = 10.0
NOW = 1000.0


def make_base_pod(node: str, name: str, cpu: str, mem: str, extended: str = "",
                  ports: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Upstream makeBasePod: namespace node_info_cache_test, uid = name, one container "container"
    requesting cpu/memory (and an extended resource "name:quantity") when cpu is given."""
    req: dict[str, str] = {}
    if cpu:
        req["cpu"] = cpu
        req["memory"] = mem
        if extended:
            k, v = extended.split(":")
            req[k] = v
    c: dict[str, Any] = {"name": "container", "image": "pause", "resources": {"requests": req, "limits": req}}
    if ports:
        c["ports"] = ports
    return {"metadata": {"name": name, "namespace": NS, "uid": name},
            "spec": {"nodeName": node, "containers": [c]}}


def hp(port: int, ip: str = "127.0.0.1", proto: str = "TCP") -> dict[str, Any]:
    return {"hostIP": ip, "hostPort": port, "protocol": proto}


def uid(pod: dict[str, Any]) -> str:
    return str(pod["metadata"]["uid"])


def view(ni: NodeInfo | None, *, generation: bool = False) -> dict[str, Any] | None:
    """What upstream's cmp.Diff of NodeInfos compares, in our terms (generation only on request,
    as deepEqualWithoutGeneration)."""
    if ni is None:
        return None
    r, z, a = ni.requested, ni.non_zero_requested, ni.allocatable
    out = {
        "node": ni.node,
        "requested": (r.milli_cpu, r.memory, r.ephemeral_storage, dict(r.scalar)),
        "non_zero": (z.milli_cpu, z.memory),
        "allocatable": (a.milli_cpu, a.memory, a.ephemeral_storage, a.allowed_pod_number, dict(a.scalar)),
        "pods": [p.pod for p in ni.pods],
        "pods_with_affinity": [p.uid for p in ni.pods_with_affinity],
        "pods_with_required_anti_affinity": [p.uid for p in ni.pods_with_required_anti_affinity],
        "used_ports": set(ni.used_ports),
        "image_states": {k: (v.size, v.num_nodes) for k, v in ni.image_states.items()},
        "pvc_ref_counts": ni.pvc_ref_counts,
    }
    if generation:
        out["generation"] = ni.generation
    return out


def want_node(requested: tuple[int, ...], non_zero: tuple[int, int], pods: list[dict[str, Any]],
              ports: set[tuple[str, str, int]], scalar: dict[str, int] | None = None) -> dict[str, Any]:
    """Upstream newNodeInfo(requested, nonzero, pods, usedPorts, imageStates={}) (no node object)."""
    cpu, mem, *rest = requested
    return {
        "node": None,
        "requested": (cpu, mem, rest[0] if rest else 0, dict(scalar or {})),
        "non_zero": non_zero,
        "allocatable": (0, 0, 0, 0, {}),
        "pods": pods,
        "pods_with_affinity": [],
        "pods_with_required_anti_affinity": [],
        "used_ports": ports,
        "image_states": {},
        "pvc_ref_counts": {},
    }


def is_forgotten(c: Cache, pod: dict[str, Any]) -> bool:
    return not c.is_assumed(uid(pod)) and c.get_pod(uid(pod)) is None


def assume_and_finish(c: Cache, pod: dict[str, Any], now: float) -> PodInfo:
    pi = PodInfo(pod)
    c.assume_pod(pi)
    c.finish_binding(pi, now)
    return pi


# ------------------------------------------------------------------------------ TestAssumePodScheduled

def _assume_pods() -> list[dict[str, Any]]:
    n = "node"
    return [
        make_base_pod(n, "test-resource-request-and-port-0", "100m", "500", "", [hp(80)]),
        make_base_pod(n, "test-resource-request-and-port-1", "100m", "500", "", [hp(80)]),
        make_base_pod(n, "test-resource-request-and-port-2", "200m", "1Ki", "", [hp(8080)]),
        make_base_pod(n, "test-nonzero-request", "", "", "", [hp(80)]),
        make_base_pod(n, "test-extended-resource-1", "100m", "500", "example.com/foo:3", [hp(80)]),
        make_base_pod(n, "test-extended-resource-2", "200m", "1Ki", "example.com/foo:5", [hp(8080)]),
        make_base_pod(n, "test-extended-key", "100m", "500", "random-invalid-extended-key:100", [{}]),
    ]


P80 = ("127.0.0.1", "TCP", 80)
P8080 = ("127.0.0.1", "TCP", 8080)

ASSUME_CASES = [
    ("assumed one pod with resource request and used ports", [0], ((100, 500), (100, 500), {P80}, None)),
    ("node requested resource are equal to the sum of the assumed pods requested resource, node contains "
     "host ports defined by pods", [1, 2], ((300, 1524), (300, 1524), {P80, P8080}, None)),
    ("assumed pod without resource request", [3], ((0, 0), (DEFAULT_CPU, DEFAULT_MEM), {P80}, None)),
    ("assumed one pod with extended resource", [4], ((100, 500), (100, 500), {P80}, {"example.com/foo": 3})),
    ("assumed two pods with extended resources", [4, 5],
     ((300, 1524), (300, 1524), {P80, P8080}, {"example.com/foo": 8})),
    ("assumed pod with random invalid extended resource key", [6], ((100, 500), (100, 500), set(), None)),
]


@pytest.mark.parametrize(("idx", "want"), [pytest.param(i, w, id=n) for n, i, w in ASSUME_CASES])
def test_assume_pod_scheduled(idx: list[int], want: tuple[Any, ...]) -> None:
    all_pods = _assume_pods()
    pods = [all_pods[i] for i in idx]
    c = Cache(ttl=1.0)
    for p in pods:
        c.assume_pod(PodInfo(p))
        with pytest.raises(ValueError):  # pod already in cache so can't be assumed
            c.assume_pod(PodInfo(p))
    requested, non_zero, ports, scalar = want
    assert view(c.get_node_info("node")) == want_node(requested, non_zero, pods, ports, scalar)
    for p in pods:
        c.forget_pod(PodInfo(p))
        assert is_forgotten(c, p)


# ------------------------------------------------------------------------------ TestExpirePod

def _expire_pods() -> list[dict[str, Any]]:
    n = "node"
    return [
        make_base_pod(n, "test-1", "100m", "500", "", [hp(80)]),
        make_base_pod(n, "test-2", "200m", "1Ki", "", [hp(8080)]),
        make_base_pod(n, "test-3", "200m", "1Ki", "", [hp(8080)]),
    ]


# (pod index, finish binding at) per pod (None: binding not finished); cleanup time; ttl; expected
EXPIRE_CASES = [
    ("assumed pod would expire", [(0, NOW)], NOW + 2 * TTL, TTL, None),
    ("first one would expire, second and third would not",
     [(0, NOW), (1, NOW + 3 * TTL / 2), (2, None)], NOW + 2 * TTL, TTL,
     # Order gets altered when removing pods.
     ((400, 2048), (400, 2048), [2, 1], {P8080})),
    ("assumed pod would never expire", [(0, NOW)], NOW + 3 * TTL, 0.0, ((100, 500), (100, 500), [0], {P80})),
]


@pytest.mark.parametrize(("pods", "cleanup", "ttl", "want"), [pytest.param(*c[1:], id=c[0]) for c in EXPIRE_CASES])
def test_expire_pod(pods: list[tuple[int, float | None]], cleanup: float, ttl: float, want: Any) -> None:
    test_pods = _expire_pods()
    c = Cache(ttl=ttl)
    for i, at in pods:
        pi = PodInfo(test_pods[i])
        c.assume_pod(pi)
        if at is not None:
            c.finish_binding(pi, at)
    # pods that got bound and have assumedTime + ttl < cleanupTime get expired and removed
    c.cleanup_assumed_pods(cleanup)
    got = view(c.get_node_info("node"))
    if want is None:
        assert got is None
    else:
        requested, non_zero, order, ports = want
        assert got == want_node(requested, non_zero, [test_pods[i] for i in order], ports)


# ------------------------------------------------------------------------------ TestAddPodWillConfirm

@pytest.mark.parametrize("then", ["expire the unconfirmed pod", "forget the unconfirmed pod"])
def test_add_pod_will_confirm(then: str) -> None:
    """Two pods assumed at the same time; the first is Add()ed and confirmed. v1.33 expires the
    other one (cleanupAssumedPods after 2 ttl), later versions forget it: either way the node holds
    the confirmed one."""
    p0 = make_base_pod("node", "test-1", "100m", "500", "", [hp(80)])
    p1 = make_base_pod("node", "test-2", "200m", "1Ki", "", [hp(8080)])
    c = Cache(ttl=TTL)
    for p in (p0, p1):
        assume_and_finish(c, p, NOW)
    c.add_pod(p0)
    assert not c.is_assumed(uid(p0)) and c.is_assumed(uid(p1))
    before = view(c.get_node_info("node"))
    c.add_pod(p0)  # upstream: an error ("already in added state"), the cache unchanged
    assert view(c.get_node_info("node")) == before
    if then.startswith("expire"):
        c.cleanup_assumed_pods(NOW + 2 * TTL)
    else:
        for p in (p0, p1):
            if c.is_assumed(uid(p)):
                c.forget_pod(PodInfo(p))
    assert view(c.get_node_info("node")) == want_node((100, 500), (100, 500), [p0], {P80})
    assert c.get_pod(uid(p0)) is not None and is_forgotten(c, p1)


# ------------------------------------------------------------------------------ TestDump

def test_dump() -> None:
    p0 = make_base_pod("node", "test-1", "100m", "500", "", [hp(80)])
    p1 = make_base_pod("node", "test-2", "200m", "1Ki", "", [hp(80)])
    c = Cache(ttl=TTL)
    for p in (p0, p1):
        assume_and_finish(c, p, NOW)
    c.add_pod(p0)
    d = c.dump()
    assert d.nodes.keys() == {"node"}
    for name, ni in d.nodes.items():
        assert view(ni, generation=True) == view(c.get_node_info(name), generation=True)
        assert ni is not c.get_node_info(name)
    assert d.assumed_pods == {uid(p1)}


# ------------------------------------------------------------------------------ TestAddPodAlwaysUpdatesPodInfoInNodeInfo

def test_add_pod_always_updates_pod_info_in_node_info() -> None:
    p1 = make_base_pod("node1", "test-1", "100m", "500", "", [{"hostPort": 80}])
    p2 = copy.deepcopy(p1)
    p2.setdefault("status", {})["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    c = Cache(ttl=TTL)
    assume_and_finish(c, p1, NOW)
    c.add_pod(p2)
    assert view(c.get_node_info("node1")) == want_node((100, 500), (100, 500), [p2], {("0.0.0.0", "TCP", 80)})
    assert c.get_pod(uid(p1)).pod is p2  # type: ignore[union-attr]


# ------------------------------------------------------------------------------ TestAddPodWillReplaceAssumed

def test_add_pod_will_replace_assumed() -> None:
    assumed = make_base_pod("assumed-node-1", "test-1", "100m", "500", "", [{"hostPort": 80}])
    added = make_base_pod("actual-node", "test-1", "100m", "500", "", [{"hostPort": 80}])
    updated = make_base_pod("actual-node", "test-1", "200m", "500", "", [{"hostPort": 90}])
    c = Cache(ttl=TTL)
    assume_and_finish(c, copy.deepcopy(assumed), NOW)
    c.add_pod(copy.deepcopy(added))
    c.update_pod(copy.deepcopy(added), copy.deepcopy(updated))
    assert c.get_node_info("assumed-node") is None
    assert c.get_node_info("assumed-node-1") is None  # the assumption left no trace
    assert view(c.get_node_info("actual-node")) == want_node((200, 500), (200, 500), [updated],
                                                             {("0.0.0.0", "TCP", 90)})


# ------------------------------------------------------------------------------ TestAddPodAfterExpiration

def test_add_pod_after_expiration() -> None:
    base = make_base_pod("node", "test", "100m", "500", "", [hp(80)])
    c = Cache(ttl=TTL)
    assume_and_finish(c, base, NOW)
    c.cleanup_assumed_pods(NOW + 2 * TTL)
    assert is_forgotten(c, base)  # it should be expired and removed
    c.add_pod(base)
    assert view(c.get_node_info("node")) == want_node((100, 500), (100, 500), [base], {P80})


# ------------------------------------------------------------------------------ TestUpdatePod

def _update_pods() -> list[dict[str, Any]]:
    return [make_base_pod("node", "test", "100m", "500", "", [hp(80)]),
            make_base_pod("node", "test", "200m", "1Ki", "", [hp(8080)])]


def _update_wants(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [want_node((200, 1024), (200, 1024), [pods[1]], {P8080}),
            want_node((100, 500), (100, 500), [pods[0]], {P80})]


def test_update_pod() -> None:
    """A pod added, then updated twice."""
    pods = _update_pods()
    sequence = [pods[0], pods[1], pods[0]]
    c = Cache(ttl=TTL)
    c.add_pod(pods[0])
    for j in range(1, len(sequence)):
        c.update_pod(sequence[j - 1], sequence[j])
        assert view(c.get_node_info("node")) == _update_wants(pods)[j - 1], f"update {j}"


# ------------------------------------------------------------------------------ TestUpdatePodAndGet

@pytest.mark.parametrize(("to_update", "assume"), [
    pytest.param(0, True, id="do not update pod when pod information has not changed"),
    pytest.param(1, False, id="update  pod when pod information changed"),
])
def test_update_pod_and_get(to_update: int, assume: bool) -> None:
    pods = _update_pods()
    pod, new = pods[0], pods[to_update]
    c = Cache(ttl=1.0)
    assert c.get_pod(uid(new)) is None  # an unknown pod
    c.update_pod(pod, new)  # upstream: an error, the pod has not been added yet
    assert c.get_pod(uid(new)) is None and c.get_node_info("node") is None
    if assume:
        c.assume_pod(PodInfo(pod))
    else:
        c.add_pod(pod)
        c.update_pod(pod, new)
    got = c.get_pod(uid(pod))
    assert got is not None and got.pod == new


# ------------------------------------------------------------------------------ TestExpireAddUpdatePod

def test_expire_add_update_pod() -> None:
    """A pod assumed, expired and added, then updated twice."""
    pods = _update_pods()
    sequence = [pods[0], pods[1], pods[0]]
    c = Cache(ttl=TTL)
    assume_and_finish(c, pods[0], NOW)
    c.cleanup_assumed_pods(NOW + 2 * TTL)
    assert is_forgotten(c, pods[0])
    c.add_pod(pods[0])
    for j in range(1, len(sequence)):
        c.update_pod(sequence[j - 1], sequence[j])
        assert view(c.get_node_info("node")) == _update_wants(pods)[j - 1], f"update {j}"


# ------------------------------------------------------------------------------ TestEphemeralStorageResource

def _pod_with_ephemeral_storage(node: str, storage: str) -> dict[str, Any]:
    return {"metadata": {"name": "pod-with-ephemeral-storage", "namespace": "default-namespace",
                         "uid": "pod-with-ephemeral-storage"},
            "spec": {"nodeName": node, "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"ephemeral-storage": storage}}}]}}


def test_ephemeral_storage_resource() -> None:
    pod = _pod_with_ephemeral_storage("node", "500")
    c = Cache(ttl=1.0)
    c.add_pod(pod)
    assert view(c.get_node_info("node")) == want_node((0, 0, 500), (DEFAULT_CPU, DEFAULT_MEM), [pod], set())
    c.remove_pod(pod)
    assert c.get_pod(uid(pod)) is None  # pod was deleted


# Upstream's NonZeroRequested holds only cpu and memory; ours also carries the pods'
# ephemeral-storage and scalar requests, which equal Requested's (only cpu and memory get the
# non-zero defaults), so the scorers that read them see the same numbers: not asserted.


# ------------------------------------------------------------------------------ TestRemovePod

@pytest.mark.parametrize("assume", [pytest.param(False, id="bound"), pytest.param(True, id="assumed")])
def test_remove_pod(assume: bool) -> None:
    pod = make_base_pod("node-1", "test", "100m", "500", "", [hp(80)])
    nodes = [{"metadata": {"name": "node-1"}}, {"metadata": {"name": "node-2"}}]
    c = Cache(ttl=1.0)
    # Add/Assume pod succeeds even before adding the nodes.
    if assume:
        c.assume_pod(PodInfo(pod))
    else:
        c.add_pod(pod)
    assert view(c.get_node_info("node-1")) == want_node((100, 500), (100, 500), [pod], {P80})
    for n in nodes:
        c.add_node(n)
    c.remove_pod(pod)
    assert c.get_pod(uid(pod)) is None  # pod was deleted
    c.remove_pod(pod)  # upstream: an error, the pod is gone already; nothing changes
    assert c.get_pod(uid(pod)) is None and c.pod_count() == 0
    # Node that owned the Pod should be at the head of the list.
    assert next(reversed(c._recent)) == "node-1"
    assert c.get_node_info("node-1").pods == []  # type: ignore[union-attr]


# ------------------------------------------------------------------------------ TestForgetPod

def test_forget_pod() -> None:
    pod = make_base_pod("node", "test", "100m", "500", "", [hp(80)])
    c = Cache(ttl=1.0)
    c.assume_pod(PodInfo(pod))
    assert c.is_assumed(uid(pod))
    got = c.get_pod(uid(pod))
    assert got is not None and (got.namespace, got.name) == (NS, "test")
    c.forget_pod(PodInfo(pod))
    assert is_forgotten(c, pod)
    c.forget_pod(PodInfo(pod))  # forgetting a pod already forgotten is no error
    assert is_forgotten(c, pod)


# ------------------------------------------------------------------------------ TestNodeOperators

def _op_node(name: str, resources: dict[str, str], images: dict[str, int]) -> dict[str, Any]:
    rl = {"pods": "32", **resources}
    return {"metadata": {"name": name},
            "spec": {"taints": [{"key": "test-key", "value": "test-value", "effect": "PreferNoSchedule"}]},
            "status": {"capacity": dict(rl), "allocatable": dict(rl),
                       "images": [{"names": [n], "sizeBytes": s} for n, s in images.items()]}}


RL1 = {"cpu": "1000m", "memory": "100m", "example.com/foo": "1"}
RL2 = {"cpu": "500m", "memory": "50m", "example.com/foo": "2"}
IMG1 = {"gcr.io/80:latest": 80 * MB, "gcr.io/80:v1": 80 * MB, "gcr.io/300:latest": 300 * MB, "gcr.io/300:v1": 300 * MB}
IMG2 = {"gcr.io/600:latest": 600 * MB, "gcr.io/80:latest": 80 * MB, "gcr.io/900:latest": 900 * MB}


def _op_pod(name: str, port: bool) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "50m"}}}
    if port:
        c["ports"] = [{"name": "http", "hostPort": 80, "containerPort": 80}]
    return {"metadata": {"name": name, "uid": name}, "spec": {"nodeName": "test-node-1", "containers": [c]}}


NODE_OP_CASES = [
    pytest.param([("test-node-1", RL1, IMG1), ("test-node-2", RL2, IMG2), ("test-node-3", RL1, IMG1),
                  ("test-node-4", RL2, IMG2)], [("pod1", True)], id="operate the node with one pod"),
    pytest.param([("test-node-1", RL1, IMG1), ("test-node-2", RL2, IMG2), ("test-node-3", RL1, IMG1)],
                 [("pod1", False), ("pod2", False)], id="operate the node with two pods"),
]


def _build_node_info(node: dict[str, Any], pods: list[dict[str, Any]], nodes: list[dict[str, Any]]) -> NodeInfo:
    """Upstream buildNodeInfo: the node, its pods, and the image states of its images across `nodes`."""
    ni = NodeInfo(node)
    for p in pods:
        ni.add_pod(PodInfo(p))
    ni.image_states = get_node_image_states(node, create_image_existence_map(nodes))
    return ni


def _same_image_summaries(nodes: dict[str, NodeInfo], *images: str) -> bool:
    """Upstream checkImageStateSummary: every node holding the image reports the same summary."""
    for image in images:
        seen = {(s.size, s.num_nodes) for n in nodes.values() if (s := n.image_states.get(image)) is not None}
        if len(seen) > 1:
            return False
    return True


@pytest.mark.parametrize(("node_specs", "pod_specs"), NODE_OP_CASES)
def test_node_operators(node_specs: list[tuple[str, dict[str, str], dict[str, int]]],
                        pod_specs: list[tuple[str, bool]]) -> None:
    nodes = [_op_node(*s) for s in node_specs]
    pods = [_op_pod(*s) for s in pod_specs]
    node = nodes[0]
    name = node["metadata"]["name"]
    expected = _build_node_info(node, pods, nodes)

    c = Cache(ttl=1.0)
    for n in nodes:
        c.add_node(n)
    for p in pods:
        c.add_pod(p)
    live = {n: c.get_node_info(n) for n in reversed(c._recent)}

    # Step 1: the node was added into the cache successfully.
    got = c.get_node_info(name)
    assert got is not None
    assert c.node_count() == len(nodes) and len(c.node_tree_list()) == len(nodes)
    assert view(got) == view(expected)
    assert _same_image_summaries(live, "gcr.io/80:latest", "gcr.io/300:latest")  # type: ignore[arg-type]
    assert got.image_states["gcr.io/80:latest"].num_nodes == len(nodes)

    # Step 2: dump cached nodes successfully.
    snap = Snapshot()
    c.update_snapshot(snap)
    new_node = snap.get(name)
    assert new_node is not None and len(snap.node_info_map) == len(nodes)
    assert view(new_node) == view(expected) and new_node.generation == got.generation
    assert _same_image_summaries(snap.node_info_map, "gcr.io/80:latest", "gcr.io/300:latest")

    # Step 3: update node attribute successfully.
    gen = got.generation
    node["status"]["allocatable"]["memory"] = "50m"
    c.update_node(None, node)
    got = c.get_node_info(name)
    assert got is not None and got.generation > gen, "Generation is not incremented"
    a = got.allocatable
    assert a.memory == 1  # 50m, rounded up as Quantity.Value()
    assert view(got) == {**view(expected), "allocatable": (a.milli_cpu, 1, 0, 32, {"example.com/foo": 1})}  # type: ignore[dict-item]
    assert _same_image_summaries(live, "gcr.io/80:latest", "gcr.io/300:latest")  # type: ignore[arg-type]
    assert c.node_count() == len(nodes) and len(c.node_tree_list()) == len(nodes)

    # Step 4: the node can be removed even if it still has pods.
    c.remove_node(node)
    ghost = c.get_node_info(name)
    assert ghost is not None, "the node should still have a ghost entry"
    assert ghost.node is None, "the node object should be nil"
    c.remove_node(node)  # upstream: an error, the node is removed already; nothing changes
    assert c.get_node_info(name) is ghost and ghost.node is None
    assert c.node_count() == len(nodes) - 1 and len(c.node_tree_list()) == len(nodes) - 1
    assert name not in c.node_tree_list()
    assert _same_image_summaries(live, "gcr.io/80:latest", "gcr.io/300:latest")  # type: ignore[arg-type]
    for p in pods:  # pods are still in the pods cache
        assert c.get_pod(uid(p)) is not None

    # Step 5: removing pods for the removed node still succeeds.
    for p in pods:
        c.remove_pod(p)
        assert c.get_pod(uid(p)) is None
    assert c.get_node_info(name) is None


# ------------------------------------------------------------------------------ TestSchedulerCache_UpdateSnapshot

def _snap_nodes() -> list[dict[str, Any]]:
    return [{"metadata": {"name": f"test-node{i}"},
             "status": {"allocatable": {"cpu": "1000m", "memory": "100m"}}} for i in range(10)]


def _snap_pod(name: str, puid: str, node: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "test-ns", "uid": puid},
            "spec": {"nodeName": node, "containers": [], **spec}}


class _SnapWorld:
    def __init__(self) -> None:
        self.nodes = _snap_nodes()
        self.updated_nodes = []
        for n in self.nodes:
            u = copy.deepcopy(n)
            u["status"]["allocatable"] = {"cpu": "2000m", "memory": "500m"}
            self.updated_nodes.append(u)
        self.pods = [_snap_pod(f"test-pod{i}", f"test-puid{i}", f"test-node{i % 10}") for i in range(20)]
        self.updated_pods = []
        for p in self.pods:
            u = copy.deepcopy(p)
            u["spec"]["priority"] = 1000
            self.updated_pods.append(u)
        affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}, "topologyKey": ""}]}}
        self.with_affinity = [_snap_pod(f"p-affinity-{i}", f"puid-affinity-{i}", f"test-node{i}", affinity=affinity)
                              for i in range(2)]
        self.with_pvc = [_snap_pod(f"p-pvc-{i}", f"puid-pvc-{i}", f"test-node{i % 2}", volumes=[
            {"name": f"test-pvc{i % 4}", "persistentVolumeClaim": {"claimName": f"test-pvc{i % 4}"}}])
            for i in range(8)]
        self.cache = Cache(ttl=1.0)
        self.snapshot = Snapshot()

    def run(self, op: str, i: int = 0) -> None:
        c = self.cache
        if op == "addNode":
            c.add_node(self.nodes[i])
        elif op == "removeNode":
            c.remove_node(self.nodes[i])
        elif op == "updateNode":
            c.update_node(self.nodes[i], self.updated_nodes[i])
        elif op == "addPod":
            c.add_pod(self.pods[i])
        elif op == "updatePod":
            c.update_pod(self.pods[i], self.updated_pods[i])
        elif op == "removePod":
            c.remove_pod(self.pods[i])
        elif op == "addPodWithAffinity":
            c.add_pod(self.with_affinity[i])
        elif op == "removePodWithAffinity":
            c.remove_pod(self.with_affinity[i])
        elif op == "addPodWithPVC":
            c.add_pod(self.with_pvc[i])
        elif op == "removePodWithPVC":
            c.remove_pod(self.with_pvc[i])
        elif op == "updateSnapshot":
            c.update_snapshot(self.snapshot)
            compare_cache_with_snapshot(c, self.snapshot)
        else:
            raise AssertionError(op)


def compare_cache_with_snapshot(c: Cache, snap: Snapshot) -> None:
    """Upstream compareCacheWithNodeInfoSnapshot."""
    assert len(snap.node_info_map) == c.node_count()
    for name in c._nodes:
        ni = c.get_node_info(name)
        want = ni if ni is not None and ni.node is not None else None
        assert view(snap.node_info_map.get(name), generation=True) == view(want, generation=True), name
    assert len(snap.node_info_list) == c.node_count()
    tree = c.node_tree_list()
    expected_list = [snap.node_info_map[n] for n in tree]
    assert all(a is b for a, b in zip(snap.node_info_list, expected_list, strict=True))
    expected_aff = [n for n in expected_list if n.pods_with_affinity]
    assert all(a is b for a, b in zip(snap.have_pods_with_affinity(), expected_aff, strict=True))
    for n in expected_list:
        for key in n.pvc_ref_counts:
            assert snap.is_pvc_used_by_pods(key)


def _ops(*spec: str | tuple[str, int]) -> list[tuple[str, int]]:
    return [(s, 0) if isinstance(s, str) else s for s in spec]


U = "updateSnapshot"
UPDATE_SNAPSHOT_CASES = [
    ("Empty cache", [], [], 0, set()),
    ("Single node", [("addNode", 1)], [1], 0, set()),
    ("Add node, remove it, add it again", [("addNode", 1), U, ("removeNode", 1), ("addNode", 1)], [1], 0, set()),
    ("Add node and remove it in the same cycle, add it again",
     [("addNode", 1), U, ("addNode", 2), ("removeNode", 1)], [2], 0, set()),
    ("Add a few nodes, and snapshot in the middle",
     [("addNode", 0), U, ("addNode", 1), U, ("addNode", 2), U, ("addNode", 3)], [3, 2, 1, 0], 0, set()),
    ("Add a few nodes, and snapshot in the end",
     [("addNode", 0), ("addNode", 2), ("addNode", 5), ("addNode", 6)], [6, 5, 2, 0], 0, set()),
    ("Update some nodes", [("addNode", 0), ("addNode", 1), ("addNode", 5), U, ("updateNode", 1)], [1, 5, 0], 0, set()),
    ("Add a few nodes, and remove all of them",
     [("addNode", 0), ("addNode", 2), ("addNode", 5), ("addNode", 6), U,
      ("removeNode", 0), ("removeNode", 2), ("removeNode", 5), ("removeNode", 6)], [], 0, set()),
    ("Add a few nodes, and remove some of them",
     [("addNode", 0), ("addNode", 2), ("addNode", 5), ("addNode", 6), U, ("removeNode", 0), ("removeNode", 6)],
     [5, 2], 0, set()),
    ("Add a few nodes, remove all of them, and add more",
     [("addNode", 2), ("addNode", 5), ("addNode", 6), U, ("removeNode", 2), ("removeNode", 5), ("removeNode", 6), U,
      ("addNode", 7), ("addNode", 9)], [9, 7], 0, set()),
    ("Update nodes in particular order",
     [("addNode", 8), ("updateNode", 2), ("updateNode", 8), U, ("addNode", 1)], [1, 8, 2], 0, set()),
    ("Add some nodes and some pods",
     [("addNode", 0), ("addNode", 2), ("addNode", 8), U, ("addPod", 8), ("addPod", 2)], [2, 8, 0], 0, set()),
    ("Updating a pod moves its node to the head",
     [("addNode", 0), ("addPod", 0), ("addNode", 2), ("addNode", 4), ("updatePod", 0)], [0, 4, 2], 0, set()),
    ("Add pod before its node", [("addNode", 0), ("addPod", 1), ("updatePod", 1), ("addNode", 1)], [1, 0], 0, set()),
    ("Remove node before its pods",
     [("addNode", 0), ("addNode", 1), ("addPod", 1), ("addPod", 11), U, ("removeNode", 1), U,
      ("updatePod", 1), ("updatePod", 11), ("removePod", 1), ("removePod", 11)], [0], 0, set()),
    ("Add Pods with affinity", [("addNode", 0), ("addPodWithAffinity", 0), U, ("addNode", 1)], [1, 0], 1, set()),
    ("Add Pods with PVC", [("addNode", 0), ("addPodWithPVC", 0), U, ("addNode", 1)], [1, 0], 0, {"test-ns/test-pvc0"}),
    ("Add multiple nodes with pods with affinity",
     [("addNode", 0), ("addPodWithAffinity", 0), U, ("addNode", 1), ("addPodWithAffinity", 1), U], [1, 0], 2, set()),
    ("Add multiple nodes with pods with PVC",
     [("addNode", 0), ("addPodWithPVC", 0), U, ("addNode", 1), ("addPodWithPVC", 1), U], [1, 0], 0,
     {"test-ns/test-pvc0", "test-ns/test-pvc1"}),
    ("Add then Remove pods with affinity",
     [("addNode", 0), ("addNode", 1), ("addPodWithAffinity", 0), U, ("removePodWithAffinity", 0), U], [0, 1], 0, set()),
    ("Add then Remove pod with PVC",
     [("addNode", 0), ("addPodWithPVC", 0), U, ("removePodWithPVC", 0), ("addPodWithPVC", 2), U], [0], 0,
     {"test-ns/test-pvc2"}),
    ("Add then Remove pod with PVC and add same pod again",
     [("addNode", 0), ("addPodWithPVC", 0), U, ("removePodWithPVC", 0), ("addPodWithPVC", 0), U], [0], 0,
     {"test-ns/test-pvc0"}),
    ("Add and Remove multiple pods with PVC with same ref count length different content",
     [("addNode", 0), ("addNode", 1), ("addPodWithPVC", 0), ("addPodWithPVC", 1), U,
      ("removePodWithPVC", 0), ("removePodWithPVC", 1), ("addPodWithPVC", 2), ("addPodWithPVC", 3), U], [1, 0], 0,
     {"test-ns/test-pvc2", "test-ns/test-pvc3"}),
    ("Add and Remove multiple pods with PVC",
     [("addNode", 0), ("addNode", 1), ("addPodWithPVC", 0), ("addPodWithPVC", 1), ("addPodWithPVC", 2), U,
      ("removePodWithPVC", 0), ("removePodWithPVC", 1), U, ("addPodWithPVC", 0), U,
      ("addPodWithPVC", 3), ("addPodWithPVC", 4), ("addPodWithPVC", 5), U,
      ("removePodWithPVC", 0), ("removePodWithPVC", 3), ("removePodWithPVC", 4), U], [0, 1], 0,
     {"test-ns/test-pvc1", "test-ns/test-pvc2"}),
]


@pytest.mark.parametrize(("ops", "expected", "with_affinity", "used_pvcs"),
                         [pytest.param(*c[1:], id=c[0]) for c in UPDATE_SNAPSHOT_CASES])
def test_scheduler_cache_update_snapshot(ops: list[Any], expected: list[int], with_affinity: int,
                                         used_pvcs: set[str]) -> None:
    w = _SnapWorld()
    for op in _ops(*ops):
        w.run(*op)
    c, snap = w.cache, w.snapshot
    assert len(c._nodes) == len(expected), "unexpected number of nodes"
    # the cache's nodes, most recently changed first (upstream's linked list from its head)
    head_first = list(reversed(c._recent))
    assert len(head_first) == len(c._nodes), "not all the nodes were visited following the list"
    for name, i in zip(head_first, expected, strict=True):
        ni = c.get_node_info(name)
        if ni is not None and ni.node is not None:
            assert name == f"test-node{i}"
    assert len(snap.have_pods_with_affinity()) == with_affinity
    assert set(snap.used_pvc_set) == used_pvcs
    # always update the snapshot at the end of the operations and compare it
    c.update_snapshot(snap)
    compare_cache_with_snapshot(c, snap)


# ------------------------------------------------------------------------------ TestSchedulerCache_updateNodeInfoSnapshotList

def _zoned_nodes() -> list[dict[str, Any]]:
    """node-0, node-1 in region-0/zone-0; node-2 .. node-7 in region-1/zone-1."""
    out = []
    i = 0
    for zone, nb in enumerate((2, 6)):
        for _ in range(nb):
            out.append({"metadata": {"name": f"node-{i}", "labels": {
                "topology.kubernetes.io/region": f"region-{zone}", "topology.kubernetes.io/zone": f"zone-{zone}"}}})
            i += 1
    return out


NODE_LIST_CASES = [
    ("Empty cache", [], []),
    ("Single node", [0], ["node-0"]),
    ("Two nodes", [0, U, 1], ["node-0", "node-1"]),
    ("bug 91601, two nodes, update the snapshot and add two nodes in different zones",
     [2, 3, U, 4, 0], ["node-2", "node-0", "node-3", "node-4"]),
    ("bug 91601, 6 nodes, one in a different zone",
     [2, 3, 4, 5, U, 6, 0], ["node-2", "node-0", "node-3", "node-4", "node-5", "node-6"]),
    ("bug 91601, 7 nodes, two in a different zone",
     [2, U, 3, 4, U, 5, 6, 0, 1], ["node-2", "node-0", "node-3", "node-1", "node-4", "node-5", "node-6"]),
    ("bug 91601, 7 nodes, two in a different zone, different zone order",
     [2, 1, U, 3, 4, U, 5, 6, 0], ["node-2", "node-1", "node-3", "node-0", "node-4", "node-5", "node-6"]),
]


@pytest.mark.parametrize(("ops", "expected"), [pytest.param(*c[1:], id=c[0]) for c in NODE_LIST_CASES])
def test_scheduler_cache_update_node_info_snapshot_list(ops: list[Any], expected: list[str]) -> None:
    nodes = _zoned_nodes()
    c = Cache(ttl=1.0)
    snap = Snapshot()
    for op in ops:
        if op == U:
            c.update_snapshot(snap)
            compare_cache_with_snapshot(c, snap)
        else:
            c.add_node(nodes[op])
    c.update_snapshot(snap)
    compare_cache_with_snapshot(c, snap)
    assert [n.name for n in snap.node_info_list] == expected
    assert c.node_tree_list() == expected


def test_node_changing_zone_moves_in_the_snapshot_list() -> None:
    """Upstream's nodeTree.updateNode: a node whose zone key changes leaves its zone and joins the
    new one at the end; the next snapshot lists the nodes in the new order."""
    nodes = _zoned_nodes()
    c = Cache()
    snap = Snapshot()
    for i in (0, 2, 3):
        c.add_node(nodes[i])
    c.update_snapshot(snap)
    assert [n.name for n in snap.node_info_list] == ["node-0", "node-2", "node-3"]
    moved = copy.deepcopy(nodes[2])
    moved["metadata"]["labels"] = {"topology.kubernetes.io/region": "region-0", "topology.kubernetes.io/zone": "zone-0"}
    c.update_node(nodes[2], moved)
    c.update_snapshot(snap)
    assert [n.name for n in snap.node_info_list] == ["node-0", "node-3", "node-2"]
    compare_cache_with_snapshot(c, snap)
    # beta labels count when the GA ones are absent
    beta = make_node("node-9").labels({"failure-domain.beta.kubernetes.io/zone": "zone-1",
                                       "failure-domain.beta.kubernetes.io/region": "region-1"}).obj()
    c.add_node(beta)
    c.update_snapshot(snap)
    assert [n.name for n in snap.node_info_list] == ["node-0", "node-3", "node-2", "node-9"]


# ------------------------------------------------------------------------------ snapshot_test.go

@pytest.mark.parametrize(("images", "existence", "want"), [
    pytest.param([(["gcr.io/10:v1"], 10 * MB), (["gcr.io/200:v1"], 200 * MB)],
                 {"gcr.io/10:v1": {"node-0", "node-1"}, "gcr.io/200:v1": {"node-0"}},
                 {"gcr.io/10:v1": (10 * MB, 2), "gcr.io/200:v1": (200 * MB, 1)}, id="case_0"),
    pytest.param(None, {"gcr.io/10:v1": {"node-1"}, "gcr.io/200:v1": set()}, {}, id="case_1"),
])
def test_get_node_image_states(images: Any, existence: dict[str, set[str]], want: dict[str, Any]) -> None:
    node = make_node("node-0").images(*images).obj() if images else {"metadata": {"name": "node-0"}, "status": {}}
    got = get_node_image_states(node, existence)
    assert {k: (v.size, v.num_nodes) for k, v in got.items()} == want


@pytest.mark.parametrize(("nodes", "want"), [
    pytest.param([make_node("node-0").images((["gcr.io/10:v1"], 10 * MB)).obj(),
                  make_node("node-1").images((["gcr.io/10:v1"], 10 * MB), (["gcr.io/200:v1"], 200 * MB)).obj()],
                 {"gcr.io/10:v1": {"node-0", "node-1"}, "gcr.io/200:v1": {"node-1"}}, id="case_0"),
    pytest.param([{"metadata": {"name": "node-0"}, "status": {}},
                  make_node("node-1").images((["gcr.io/10:v1"], 10 * MB), (["gcr.io/200:v1"], 200 * MB)).obj()],
                 {"gcr.io/10:v1": {"node-1"}, "gcr.io/200:v1": {"node-1"}}, id="case_1"),
])
def test_create_image_existence_map(nodes: list[dict[str, Any]], want: dict[str, set[str]]) -> None:
    assert create_image_existence_map(nodes) == want


def _pod(name: str, ns: str, node: str = "", pvc: str = "", **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [], **extra}
    if node:
        spec["nodeName"] = node
    if pvc:
        spec["volumes"] = [{"name": pvc, "persistentVolumeClaim": {"claimName": pvc}}]
    return {"metadata": {"name": name, "namespace": ns, "uid": f"{ns}-{name}"}, "spec": spec}


@pytest.mark.parametrize(("pods", "want"), [
    pytest.param([], set(), id="empty pods list"),
    pytest.param([_pod("foo", "foo"), _pod("bar", "bar")], set(), id="pods not scheduled"),
    pytest.param([_pod("foo", "foo", "node-1"), _pod("bar", "bar", "node-2")], set(),
                 id="scheduled pods that do not use any PVC"),
    pytest.param([_pod("foo", "foo", "node-1", "pvc1"), _pod("bar", "bar", "node-2", "pvc2")],
                 {"foo/pvc1", "bar/pvc2"}, id="scheduled pods that use PVC"),
])
def test_create_used_pvc_set(pods: list[dict[str, Any]], want: set[str]) -> None:
    assert create_used_pvc_set(pods) == want


def _req_term(kind: str, key: str, value: str) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {key: value}}, "topologyKey": key}]}}


POD_WITH_ANNOTATIONS = {**_pod("foo", "ns", "node-1"), "metadata": {"name": "foo", "namespace": "ns", "uid": "a",
                                                                    "annotations": {"custom": "annotation"}}}
POD_WITH_PORT = _pod("foo", "foo", "node-0", containers=[{"name": "c", "ports": [{"hostPort": 8080}]}])
POD_WITH_ANTI = _pod("baz", "ns", "node-0", affinity=_req_term("podAntiAffinity", "another", "label"))
PODS_WITH_AFF = [_pod("bar", "ns", "node-2", affinity=_req_term("podAffinity", "baz", "qux")),
                 _pod("bar", "ns", "node-0", affinity=_req_term("podAffinity", "key", "value"))]
PODS_WITH_AFF[1]["metadata"]["uid"] = "ns-bar-2"
PODS_WITH_PVCS = [_pod("foo", "foo", "node-0", "pvc0"), _pod("bar", "bar", "node-1", "pvc1"),
                  _pod("baz", "baz", "node-2", "pvc2")]


def _n(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}}


# pods, nodes, the pods per node (with (namespaces, selector, topologyKey) of their required
# affinity / anti-affinity terms), number of nodes, nodes with affinity pods, with anti-affinity pods,
# used PVCs
NEW_SNAPSHOT_CASES = [
    pytest.param([], [], [], 0, 0, 0, set(), id="no pods no nodes"),
    pytest.param([POD_WITH_PORT], [_n("node-0")], [[POD_WITH_PORT]], 1, 0, 0, set(), id="single pod single node"),
    pytest.param(PODS_WITH_PVCS, [_n("node-0"), _n("node-1"), _n("node-2")],
                 [[PODS_WITH_PVCS[0]], [PODS_WITH_PVCS[1]], [PODS_WITH_PVCS[2]]], 3, 0, 0,
                 {"foo/pvc0", "bar/pvc1", "baz/pvc2"}, id="multiple nodes, pods with PVCs"),
    pytest.param([POD_WITH_ANNOTATIONS, PODS_WITH_AFF[0]], [_n("node-0"), _n("node-1"), _n("node-2", baz="qux")],
                 [[], [POD_WITH_ANNOTATIONS], [PODS_WITH_AFF[0]]], 3, 1, 0, set(),
                 id="multiple nodes, pod with affinity"),
    pytest.param([PODS_WITH_AFF[1], POD_WITH_ANTI], [_n("node-0", key="value"), _n("node-1", another="label")],
                 [[PODS_WITH_AFF[1], POD_WITH_ANTI], []], 2, 1, 1, set(),
                 id="multiple nodes, pod with affinity, pod with anti-affinity"),
]


@pytest.mark.parametrize(("pods", "nodes", "want_pods", "num", "with_aff", "with_anti", "used_pvcs"),
                         NEW_SNAPSHOT_CASES)
def test_new_snapshot(pods: list[dict[str, Any]], nodes: list[dict[str, Any]], want_pods: list[list[dict[str, Any]]],
                      num: int, with_aff: int, with_anti: int, used_pvcs: set[str]) -> None:
    snap = Snapshot.from_objects(nodes, pods)
    assert snap.num_nodes() == num
    for node, want in zip(nodes, want_pods, strict=True):
        info = snap.get(node["metadata"]["name"])
        assert info is not None, "node infos should not be nil"
        assert [p.pod for p in info.pods] == want
        for p in info.pods:  # the parsed terms: the pod's namespace, its selector, its topology key
            for t in p.required_affinity_terms + p.required_anti_affinity_terms:
                [(k, v)] = t.selector["matchLabels"].items()  # type: ignore[index]
                assert (t.namespaces, t.topology_key, t.namespace_selector) == (frozenset({"ns"}), k, None)
    assert len(snap.have_pods_with_affinity()) == with_aff
    assert len(snap.have_pods_with_required_anti_affinity()) == with_anti
    for key in used_pvcs:
        assert snap.is_pvc_used_by_pods(key)
    assert set(snap.used_pvc_set) == used_pvcs


def test_new_snapshot_image_states_count_the_given_nodes() -> None:
    """NewSnapshot fills every node's ImageStates from the given nodes (getNodeImageStates)."""
    nodes = [make_node("node-0").images((["gcr.io/10:v1"], 10 * MB)).obj(),
             make_node("node-1").images((["gcr.io/10:v1"], 10 * MB), (["gcr.io/200:v1"], 200 * MB)).obj()]
    snap = Snapshot.from_objects(nodes)
    got = {n.name: {k: (v.size, v.num_nodes) for k, v in n.image_states.items()} for n in snap.node_infos()}
    assert got == {"node-0": {"gcr.io/10:v1": (10 * MB, 2)},
                   "node-1": {"gcr.io/10:v1": (10 * MB, 2), "gcr.io/200:v1": (200 * MB, 1)}}


@pytest.mark.parametrize("bound_differs", [pytest.param(False, id="binding-only changes"),
                                           pytest.param(True, id="annotated meanwhile")])
def test_confirmation_leaves_the_pods_in_upstreams_order(bound_differs: bool) -> None:
    """Upstream's AddPod of an assumed pod is updatePod: RemovePod (the last pod moves into the
    gap) then AddPod (appended). The cache's shortcut for a bound pod that differs only by what the
    binding writes (`replace_pod`, the generation kept) leaves the same order, in the cache and in
    the snapshot's copy."""
    pods = [make_base_pod("node", f"p{i}", "100m", "500") for i in range(3)]
    c = Cache()
    c.add_node({"metadata": {"name": "node"}})
    for p in pods:
        c.assume_pod(PodInfo(p))
    snap = Snapshot()
    c.update_snapshot(snap)
    bound = copy.deepcopy(pods[0])
    bound["metadata"]["resourceVersion"] = "7"
    if bound_differs:
        bound["metadata"]["annotations"] = {"note": "x"}
    gen = c.get_node_info("node").generation  # type: ignore[union-attr]
    c.add_pod(bound)
    assert (c.get_node_info("node").generation == gen) is not bound_differs  # type: ignore[union-attr]
    c.update_snapshot(snap)
    for ni in (c.get_node_info("node"), snap.get("node")):
        assert ni is not None
        assert [p.name for p in ni.pods] == ["p2", "p1", "p0"]
        assert ni.pods[-1].pod is bound
