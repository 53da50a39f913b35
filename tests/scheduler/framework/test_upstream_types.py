"""Upstream pkg/scheduler/framework/types_test.go (v1.33) tables, ported: Resource (NewResource,
Clone, AddScalar, SetMaxResource), NodeInfo (new, clone, AddPod, RemovePod) and the namespaces of a
parsed pod affinity term.

Mapping: upstream's `NewResource(list)` is `Resource.from_map(resource_list_to_ints(list))`;
`NewNodeInfo(pods...)` is a `NodeInfo()` with `add_pod(PodInfo(p))` for each pod; `Snapshot()` (the
NodeInfo clone) is `clone()`; `RemovePod(pod)` is `remove_pod(uid)` (None instead of an error when
the pod is not on the node); `HostPortInfo` is `used_ports` (keys (ip, protocol, port));
`PVCRefCounts` is the `pvc_ref_counts` property. TestFitError_Error is ported in
tests/scheduler/test_upstream_schedule_one.py. Upstream's NonZeroRequested holds cpu and memory only;
ours also carries the pod's ephemeral-storage and scalar requests (see
tests/scheduler/backend/test_upstream_cache.py), so the NodeInfo views compare cpu and memory there.
"""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.api.helpers.resources import resource_list_to_ints
from scheduler.framework.types import NodeInfo, PodInfo, Resource

NS = "node_info_cache_test"
NODE = "test-node"


def res_list(m: dict[str, Any]) -> dict[str, int]:
    return resource_list_to_ints(m)


def container(requests: dict[str, str] | None = None, ports: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "c", "image": "pause"}
    if requests is not None:
        c["resources"] = {"requests": dict(requests)}
    if ports:
        c["ports"] = ports
    return c


def pod(name: str, containers: list[dict[str, Any]], *, init: list[dict[str, Any]] | None = None,
        overhead: dict[str, str] | None = None, pvcs: tuple[str, ...] = (), node: str = NODE,
        uid: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeName": node, "containers": containers}
    if init:
        spec["initContainers"] = init
    if overhead:
        spec["overhead"] = dict(overhead)
    if pvcs:
        spec["volumes"] = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(pvcs)]
    return {"metadata": {"name": name, "namespace": NS, "uid": uid or name}, "spec": spec}


def port(p: int, ip: str = "127.0.0.1", proto: str = "TCP") -> dict[str, Any]:
    return {"hostIP": ip, "hostPort": p, "containerPort": p, "protocol": proto}


def view(ni: NodeInfo) -> dict[str, Any]:
    """What upstream's cmp.Diff of two NodeInfos compares, in our terms (generation aside)."""
    r, z, a = ni.requested, ni.non_zero_requested, ni.allocatable
    return {
        "node": ni.name if ni.node is not None else None,
        "requested": (r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pod_number,
                      {k: v for k, v in r.scalar.items()}),
        "non_zero": (z.milli_cpu, z.memory),
        "allocatable": (a.milli_cpu, a.memory, a.ephemeral_storage, a.allowed_pod_number, dict(a.scalar)),
        "pods": [p.pod for p in ni.pods],
        "used_ports": set(ni.used_ports),
        "image_states": {k: (v.size, v.num_nodes) for k, v in ni.image_states.items()},
        "pvc_ref_counts": ni.pvc_ref_counts,
    }


# ---------------------------------------------------------------------------------------- Resource

@pytest.mark.parametrize(("rl", "want"), [
    pytest.param({}, Resource(), id="empty resource"),
    pytest.param({"cpu": "4m", "memory": 2000, "pods": 80, "ephemeral-storage": 5000,
                  "scalar.test/scalar1": 1, "hugepages-test": 2},
                 Resource(4, 2000, 5000, 80, {"scalar.test/scalar1": 1, "hugepages-test": 2}),
                 id="complex resource"),
])
def test_new_resource(rl: dict[str, Any], want: Resource) -> None:
    assert Resource.from_map(res_list(rl)) == want


def test_new_resource_leaves_out_names_that_are_not_scalar_resources() -> None:
    """Upstream's Resource.Add counts only IsScalarResourceName names besides the four native
    ones (TestAssumePodScheduled's "random-invalid-extended-key" relies on it)."""
    r = Resource.from_map(res_list({"cpu": "1", "random-invalid-extended-key": 100, "storage": "1Gi",
                                    "requests.example.com/x": 1, "kubernetes.io/batch": 2,
                                    "attachable-volumes-aws-ebs": 3, "example.com/foo": 4}))
    assert r == Resource(1000, scalar={"kubernetes.io/batch": 2, "attachable-volumes-aws-ebs": 3,
                                       "example.com/foo": 4})


@pytest.mark.parametrize(("r", "want"), [
    pytest.param(Resource(), Resource(), id="case_0"),
    pytest.param(Resource(4, 2000, 5000, 80, {"scalar.test/scalar1": 1, "hugepages-test": 2}),
                 Resource(4, 2000, 5000, 80, {"scalar.test/scalar1": 1, "hugepages-test": 2}), id="case_1"),
])
def test_resource_clone(r: Resource, want: Resource) -> None:
    c = r.clone()
    r.milli_cpu += 1000  # the clone is a copy of the origin
    r.scalar["hugepages-test"] = 99
    assert c == want


@pytest.mark.parametrize(("r", "name", "q", "want"), [
    pytest.param(Resource(), "scalar1", 100, Resource(scalar={"scalar1": 100}), id="scalar1"),
    pytest.param(Resource(4, 2000, 5000, 80, {"hugepages-test": 2}), "scalar2", 200,
                 Resource(4, 2000, 5000, 80, {"hugepages-test": 2, "scalar2": 200}), id="scalar2"),
])
def test_resource_add_scalar(r: Resource, name: str, q: int, want: Resource) -> None:
    r.add_scalar(name, q)
    assert r == want


@pytest.mark.parametrize(("r", "rl", "want"), [
    pytest.param(Resource(), {"cpu": "4m", "memory": 2000, "ephemeral-storage": 5000},
                 Resource(4, 2000, 5000), id="case_0"),
    pytest.param(Resource(4, 4000, 5000, scalar={"scalar.test/scalar1": 1, "hugepages-test": 2}),
                 {"cpu": "4m", "memory": 2000, "ephemeral-storage": 7000, "scalar.test/scalar1": 4,
                  "hugepages-test": 5},
                 Resource(4, 4000, 7000, scalar={"scalar.test/scalar1": 4, "hugepages-test": 5}), id="case_1"),
])
def test_set_max_resource(r: Resource, rl: dict[str, Any], want: Resource) -> None:
    r.set_max_resource(res_list(rl))
    assert r == want


# ---------------------------------------------------------------------------------------- NodeInfo

def _two_pods() -> list[dict[str, Any]]:
    return [
        pod("test-1", [container({"cpu": "100m", "memory": "500"}, [port(80)])]),
        pod("test-2", [container({"cpu": "200m", "memory": "1Ki"}, [port(8080)])]),
    ]


def _new_node_info(pods: list[dict[str, Any]]) -> NodeInfo:
    ni = NodeInfo()
    for p in pods:
        ni.add_pod(PodInfo(p))
    return ni


def test_new_node_info() -> None:
    pods = _two_pods()
    before = NodeInfo().generation
    ni = _new_node_info(pods)
    assert ni.generation > before
    assert view(ni) == {
        "node": None,
        "requested": (300, 1524, 0, 0, {}),
        "non_zero": (300, 1524),
        "allocatable": (0, 0, 0, 0, {}),
        "pods": pods,
        "used_ports": {("127.0.0.1", "TCP", 80), ("127.0.0.1", "TCP", 8080)},
        "image_states": {},
        "pvc_ref_counts": {},
    }


def test_node_info_clone() -> None:
    """case_0: the copy keeps what the original held when copied; later changes to the original
    (generation, a port taken out) do not reach it."""
    pods = _two_pods()
    ni = _new_node_info(pods)
    ni.generation = 2
    want = view(ni)
    c = ni.clone()
    ni.generation += 10
    del ni.used_ports[("127.0.0.1", "TCP", 80)]
    assert c.generation == 2
    assert view(c) == want
    assert c.used_ports == {("127.0.0.1", "TCP", 80): 1, ("127.0.0.1", "TCP", 8080): 1}


def _fake_node_info(pods: list[dict[str, Any]] = ()) -> NodeInfo:  # type: ignore[assignment]
    ni = _new_node_info(list(pods))
    ni.set_node({"metadata": {"name": NODE}})
    return ni


def test_node_info_add_pod() -> None:
    pods = [
        pod("test-1", [container({"cpu": "100m", "memory": "500"}, [port(80)])], overhead={"cpu": "500m"},
            pvcs=("pvc-1",)),
        pod("test-2", [container({"cpu": "200m"}, [port(8080)])], overhead={"cpu": "500m", "memory": "500"},
            pvcs=("pvc-1",)),
        pod("test-3", [container({"cpu": "200m"}, [port(8080)])],
            init=[container({"cpu": "500m", "memory": "200Mi"})], overhead={"cpu": "500m", "memory": "500"},
            pvcs=("pvc-2",)),
    ]
    ni = _fake_node_info()
    gen = ni.generation
    for p in pods:
        ni.add_pod(PodInfo(p))
        assert ni.generation > gen, "Generation is not incremented"
        gen = ni.generation
    assert view(ni) == {
        "node": NODE,
        "requested": (2300, 209716700, 0, 0, {}),  # 1500 + 200Mi of the init container
        "non_zero": (2300, 419431900),  # 200Mi (init) + 200Mi (default memory) + 1500
        "allocatable": (0, 0, 0, 0, {}),
        "pods": pods,
        "used_ports": {("127.0.0.1", "TCP", 80), ("127.0.0.1", "TCP", 8080)},
        "image_states": {},
        "pvc_ref_counts": {f"{NS}/pvc-1": 2, f"{NS}/pvc-2": 1},
    }
    # upstream's cached per-pod resources (PodInfo.cachedResource)
    got = [(p.requests.milli_cpu, p.requests.memory, p.non_zero_requests.milli_cpu, p.non_zero_requests.memory)
           for p in ni.pods]
    assert got == [(600, 500, 600, 500), (700, 500, 700, 209715200 + 500),
                   (1000, 209715200 + 500, 1000, 209715200 + 500)]


def _remove_pods() -> list[dict[str, Any]]:
    ps = [
        pod("test-1", [container({"cpu": "100m", "memory": "500"}, [port(80)])], pvcs=("pvc-1",)),
        pod("test-2", [container({"cpu": "200m", "memory": "1Ki"}, [port(8080)])]),
    ]
    for p in ps:  # add pod Overhead
        p["spec"]["overhead"] = {"cpu": "500m", "memory": "500"}
    return ps


@pytest.mark.parametrize(("victim", "err_expected", "want"), [
    pytest.param("non-exist", True, {
        "node": NODE, "requested": (1300, 2524, 0, 0, {}), "non_zero": (1300, 2524),
        "allocatable": (0, 0, 0, 0, {}), "pods": [0, 1],
        "used_ports": {("127.0.0.1", "TCP", 80), ("127.0.0.1", "TCP", 8080)},
        "image_states": {}, "pvc_ref_counts": {f"{NS}/pvc-1": 1},
    }, id="case_0"),
    pytest.param("test-1", False, {
        "node": NODE, "requested": (700, 1524, 0, 0, {}), "non_zero": (700, 1524),
        "allocatable": (0, 0, 0, 0, {}), "pods": [1],
        "used_ports": {("127.0.0.1", "TCP", 8080)},
        "image_states": {}, "pvc_ref_counts": {},
    }, id="case_1"),
])
def test_node_info_remove_pod(victim: str, err_expected: bool, want: dict[str, Any]) -> None:
    pods = _remove_pods()
    ni = _fake_node_info(pods)
    gen = ni.generation
    got = ni.remove_pod(victim)
    if err_expected:
        assert got is None  # upstream: "no corresponding pod non-exist in pods of node test-node"
        assert ni.generation == gen
    else:
        assert got is not None and got.uid == victim
        assert ni.generation > gen, "Generation is not incremented"
    assert view(ni) == {**want, "pods": [pods[i] for i in want["pods"]]}


def test_node_info_remove_pod_moves_the_last_pod_into_the_gap() -> None:
    """Upstream's removeFromSlice swaps the last pod into the removed one's place (cache_test's
    TestExpirePod: "Order gets altered when removing pods"); the affinity lists likewise."""
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "zone"}]}}
    pods = [pod(f"p{i}", [container({"cpu": "100m"})]) for i in range(4)]
    for p in pods:
        p["spec"]["affinity"] = anti
    ni = _fake_node_info(pods)
    ni.remove_pod("p0")
    assert [p.name for p in ni.pods] == ["p3", "p1", "p2"]
    assert [p.name for p in ni.pods_with_affinity] == ["p3", "p1", "p2"]
    assert [p.name for p in ni.pods_with_required_anti_affinity] == ["p3", "p1", "p2"]
    ni.remove_pod("p2")
    assert [p.name for p in ni.pods] == ["p3", "p1"]
    assert [p.name for p in ni.pods_with_affinity] == ["p3", "p1"]


# ---------------------------------------------------------------------- getNamespacesFromPodAffinityTerm

@pytest.mark.parametrize(("term", "want"), [
    pytest.param({}, frozenset({"default"}), id="podAffinityTerm_namespace_empty"),
    pytest.param({"namespaces": ["kube-public", "kube-system"]}, frozenset({"kube-public", "kube-system"}),
                 id="podAffinityTerm_namespace_not_empty"),
    pytest.param({"namespaceSelector": {}}, frozenset(), id="podAffinityTerm_namespace_selector_not_nil"),
])
def test_get_namespaces_from_pod_affinity_term(term: dict[str, Any], want: frozenset[str]) -> None:
    p = {"metadata": {"name": "topologies_pod", "namespace": "default", "uid": "u"},
         "spec": {"containers": [container()], "affinity": {"podAffinity": {
             "requiredDuringSchedulingIgnoredDuringExecution": [{**term, "topologyKey": "zone"}]}}}}
    [t] = PodInfo(p).required_affinity_terms
    assert t.namespaces == want
