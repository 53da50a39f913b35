"""Upstream sigs descheduler
pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint_test.go,
TestTopologySpreadConstraint ported case by case: one real descheduling cycle of
RemovePodsViolatingTopologySpreadConstraint over the in-process API (namespace ns1, DefaultEvictor
`nodeFit` per case), asserting the number of evictions and, where upstream lists them, that those
pods were among the evicted. Pods are upstream's createTestPods: `pod-<n>` in order, 100m cpu,
ReplicaSet-owned unless `no_owners`. Upper-case node names (A1, B2, ...) are lower-cased as the API
requires.

Not ported: TestSortDomains, TestFilterNodesByZoneBelowIdealAvg, TestCheckIdenticalConstraints
(unit tests of Go helpers: sortDomains, filterNodesByZoneBelowIdealAvg, hasIdenticalConstraints,
with no observable meaning of their own here), and the three `ZoneAwareNodeFit=true` table cases
(an argument newer than v0.33; our args schema has no such field)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from minik3s.api.resources import PODS
from minik3s.api.types import JsonDict

Mod = Callable[[JsonDict], None]
FOO_BAR = {"foo": "bar"}


def node(name: str, cpu_m: int, mem: int, pods: int, **labels: str) -> JsonDict:
    rl = {"cpu": f"{cpu_m}m", "memory": str(mem), "pods": str(pods)}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name.lower(), "labels": dict(labels)},
            "spec": {}, "status": {"capacity": dict(rl), "allocatable": dict(rl),
                                   "conditions": [{"type": "Ready", "status": "True"}]}}


def zone_node(name: str, zone: str, cpu_m: int = 2000, mem: int = 3000, pods: int = 10) -> JsonDict:
    return node(name, cpu_m, mem, pods, zone=zone)


def tainted(n: JsonDict, *taints: tuple[str, str, str]) -> JsonDict:
    n["spec"]["taints"] = [{"key": k, **({"value": v} if v else {}), "effect": e} for k, v, e in taints]
    return n


def constraint(max_skew: int = 1, key: str = "zone", when: str = "DoNotSchedule",
               selector: dict[str, str] | None = None, **extra: Any) -> JsonDict:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": dict(selector or FOO_BAR)}, **extra}


def dflt(max_skew: int = 1, **extra: Any) -> list[JsonDict]:
    """upstream getDefaultTopologyConstraints: zone, DoNotSchedule, foo=bar."""
    return [constraint(max_skew, **extra)]


def node_c(max_skew: int = 1) -> list[JsonDict]:
    return [constraint(max_skew, key="node")]


def hash_c(max_skew: int = 1) -> list[JsonDict]:
    return [constraint(max_skew, matchLabelKeys=["pod-template-hash"])]


def tp(count: int, node_name: str, labels: dict[str, str] | None = None, constraints: list[JsonDict] | None = None,
       *, node_selector: dict[str, str] | None = None, affinity: JsonDict | None = None, no_owners: bool = False,
       tolerations: list[JsonDict] | None = None, deleting: bool = False) -> dict[str, Any]:
    return {"count": count, "node": node_name.lower(), "labels": labels, "constraints": constraints,
            "node_selector": node_selector, "affinity": affinity, "no_owners": no_owners,
            "tolerations": tolerations, "deleting": deleting}


def create_pods(groups: list[dict[str, Any]]) -> list[tuple[JsonDict, bool]]:
    out: list[tuple[JsonDict, bool]] = []
    n = 0
    for g in groups:
        for _ in range(g["count"]):
            spec: JsonDict = {"nodeName": g["node"], "containers": [
                {"name": "c0", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": "100m", "memory": "0"}}}]}
            if g["constraints"]:
                spec["topologySpreadConstraints"] = g["constraints"]
            if g["node_selector"]:
                spec["nodeSelector"] = g["node_selector"]
            if g["affinity"]:
                spec["affinity"] = g["affinity"]
            if g["tolerations"]:
                spec["tolerations"] = g["tolerations"]
            meta: JsonDict = {"name": f"pod-{n}", "namespace": "ns1", "labels": dict(g["labels"] or {})}
            if not g["no_owners"]:
                meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ReplicaSet", "name": "replicaset-1",
                                            "uid": "uid-replicaset-1"}]
            if g["deleting"]:
                meta["finalizers"] = ["test.minik3s.io/keep"]  # deleted below: stays, terminating
            out.append(({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}, g["deleting"]))
            n += 1
    return out


def required_in(key: str, values: list[str], op: str = "In") -> JsonDict:
    req: JsonDict = {"key": key, "operator": op}
    if values:
        req["values"] = values
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [req]}]}}}


def label_selector(key: str, values: list[str], op: str) -> JsonDict:
    return {"matchExpressions": [{"key": key, "operator": op, "values": values}]}


def lin_win(n: int = 6) -> list[JsonDict]:
    names = ["linNodeA", "linNodeB", "linNodeC", "winNodeA", "winNodeB", "winNodeC", "winNodeD"][:n]
    return [node(f"n{i}", 2000, 3000, 10, node=v, os="linux" if v.startswith("lin") else "windows")
            for i, v in enumerate(names, start=1)]


ZA = lambda: zone_node("n1", "zoneA")  # noqa: E731
ZB = lambda: zone_node("n2", "zoneB")  # noqa: E731
TOL_TEST = [{"key": "taint-test", "value": "test", "operator": "Equal", "effect": "NoSchedule"}]
WHOAMI = {"app": "whoami"}
WHOAMI_C = [constraint(1, key="topology.kubernetes.io/zone", when="ScheduleAnyway", selector=WHOAMI),
            constraint(1, key="kubernetes.io/hostname", when="DoNotSchedule", selector=WHOAMI)]
SERVICE = {"app.kubernetes.io/name": "service"}
ARM = {"kubernetes.io/arch": "arm64"}
BOTH = {"constraints": ["DoNotSchedule", "ScheduleAnyway"]}


def whoami_nodes() -> list[JsonDict]:
    return [node(f"n{i}", 2000, 3000, 10, **{"topology.kubernetes.io/zone": z, "kubernetes.io/hostname": f"n{i}"})
            for i, z in enumerate(["zoneA"] * 3 + ["zoneB"] * 3, start=1)]


def issue_839_nodes() -> list[JsonDict]:
    return [
        tainted(node("controlplane1", 2000, 3000, 10, zone="zoneA", **{"kubernetes.io/hostname": "cp-1"}),
                ("node-role.kubernetes.io/controlplane", "true", "NoSchedule"),
                ("node-role.kubernetes.io/etcd", "true", "NoSchedule")),
        tainted(node("infraservices1", 2000, 3000, 10, zone="zoneA", infra_service="true",
                     **{"kubernetes.io/hostname": "infra-1"}), ("infra_service", "", "NoSchedule")),
        node("app1", 2000, 3000, 10, zone="zoneA", app_service="true", **{"kubernetes.io/hostname": "app-1"}),
        node("app2", 2000, 3000, 10, zone="zoneB", app_service="true", **{"kubernetes.io/hostname": "app-2"}),
    ]


SERVICE_AFF = required_in("app_service", [], "Exists")
SERVICE_C = [constraint(1, key="kubernetes.io/hostname", selector=SERVICE)]

# (name, nodes, pod groups, expected count, expected pods, args, nodeFit)
CASES: list[tuple[str, Callable[[], list[JsonDict]], list[dict[str, Any]], int, list[str] | None,
                  dict[str, Any], bool]] = [
    ("2 domains, sizes [2,1], maxSkew=1, move 0 pods", lambda: [ZA(), ZB()],
     [tp(1, "n1", FOO_BAR, [constraint(1)]), tp(1, "n1", FOO_BAR), tp(1, "n2", FOO_BAR)], 0, None, {}, False),
    ("2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2]", lambda: [ZA(), ZB()],
     [tp(1, "n1", FOO_BAR, dflt()), tp(2, "n1", FOO_BAR), tp(1, "n2", FOO_BAR)], 1, None, {}, False),
    ("2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2] (both constraints)", lambda: [ZA(), ZB()],
     [tp(1, "n1", FOO_BAR, [constraint(1, when="ScheduleAnyway")]), tp(2, "n1", FOO_BAR), tp(1, "n2", FOO_BAR)],
     1, None, BOTH, False),
    ("2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2] (soft constraints)", lambda: [ZA(), ZB()],
     [tp(1, "n1", FOO_BAR, [constraint(1, when="ScheduleAnyway")]), tp(2, "n1", FOO_BAR), tp(1, "n2", FOO_BAR)],
     1, None, BOTH, False),
    ("2 domains, sizes [3,1], maxSkew=1, no pods eligible, move 0 pods", lambda: [ZA(), ZB()],
     [tp(1, "n1", FOO_BAR, dflt(), no_owners=True), tp(2, "n1", FOO_BAR, no_owners=True),
      tp(1, "n2", FOO_BAR, no_owners=True)], 0, None, {}, False),
    ("2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2], exclude kube-system namespace",
     lambda: [ZA(), ZB()], [tp(1, "n1", FOO_BAR, dflt()), tp(2, "n1", FOO_BAR), tp(1, "n2", FOO_BAR)],
     1, None, {"namespaces": {"exclude": ["kube-system"]}}, True),
    ("2 domains, sizes [5,2], maxSkew=1, move 1 pod to achieve [4,3]", lambda: [ZA(), ZB()],
     [tp(1, "n1", FOO_BAR, dflt()), tp(4, "n1", FOO_BAR), tp(2, "n2", FOO_BAR)], 1, None, {}, False),
    ("2 domains, sizes [4,0], maxSkew=1, move 2 pods to achieve [2,2]", lambda: [ZA(), ZB()],
     [tp(1, "n1", FOO_BAR, dflt()), tp(3, "n1", FOO_BAR)], 2, None, {}, False),
    ("2 domains, sizes [4,0], maxSkew=1, only move 1 pod since pods with nodeSelector and nodeAffinity aren't "
     "evicted", lambda: [ZA(), ZB()],
     [tp(1, "n1", FOO_BAR, dflt(), node_selector={"zone": "zoneA"}),
      tp(1, "n1", FOO_BAR, dflt(), node_selector={"zone": "zoneA"}),
      tp(1, "n1", FOO_BAR, dflt(), affinity=required_in("foo", ["bar"])), tp(1, "n1", FOO_BAR, dflt())],
     1, None, {}, True),
    ("6 domains, sizes [0,0,0,3,3,2], maxSkew=1, No pod is evicted since topology is balanced", lambda: lin_win(6),
     [tp(3, "n4", FOO_BAR, node_c(), node_selector={"os": "windows"}),
      tp(3, "n5", FOO_BAR, node_c(), node_selector={"os": "windows"}),
      tp(2, "n6", FOO_BAR, node_c(), node_selector={"os": "windows"})], 0, None, {}, False),
    ("7 domains, sizes [0,0,0,3,3,2], maxSkew=1, two pods are evicted and moved to new node added",
     lambda: lin_win(7),
     [tp(3, "n4", FOO_BAR, node_c(), node_selector={"os": "windows"}),
      tp(3, "n5", FOO_BAR, node_c(), node_selector={"os": "windows"}),
      tp(2, "n6", FOO_BAR, node_c(), node_selector={"os": "windows"})], 2, None, {}, False),
    ("6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 1 pod is evicted from node 4", lambda: lin_win(6),
     [tp(4, "n4", FOO_BAR, node_c(), node_selector={"os": "windows"}),
      tp(3, "n5", FOO_BAR, node_c(), node_selector={"os": "windows"}),
      tp(1, "n6", FOO_BAR, node_c(), node_selector={"os": "windows"})], 1, None, {}, False),
    ("6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 0 pod is evicted as pods of node:winNodeA can only be scheduled "
     "on this node and nodeFit is true ", lambda: lin_win(6),
     [tp(4, "n4", FOO_BAR, node_c(), node_selector={"node": "winNodeA"}),
      tp(3, "n5", FOO_BAR, node_c(), node_selector={"os": "windows"}),
      tp(1, "n6", FOO_BAR, node_c(), node_selector={"os": "windows"})], 0, None, {}, True),
    ("2 domains, sizes [4,0], maxSkew=1, move 2 pods since selector matches multiple nodes",
     lambda: [node("n1", 2000, 3000, 10, zone="zoneA", region="boston"),
              node("n2", 2000, 3000, 10, zone="zoneB", region="boston")],
     [tp(1, "n1", FOO_BAR, dflt(), node_selector={"region": "boston"})]
     + [tp(1, "n1", FOO_BAR, node_selector={"region": "boston"}) for _ in range(3)], 2, None, {}, False),
    ("3 domains, sizes [0, 1, 100], maxSkew=1, move 66 pods to get [34, 33, 34]",
     lambda: [ZA(), ZB(), zone_node("n3", "zoneC")],
     [tp(1, "n2", FOO_BAR, dflt()), tp(100, "n3", FOO_BAR)], 66, None, {}, False),
    ("4 domains, sizes [0, 1, 3, 5], should move 3 to get [2, 2, 3, 2]",
     lambda: [ZA(), ZB(), zone_node("n3", "zoneC"), zone_node("n4", "zoneD")],
     [tp(1, "n2", FOO_BAR, dflt()), tp(3, "n3", FOO_BAR), tp(5, "n4", FOO_BAR)], 3, None, {}, False),
    ("2 domains size [2 6], maxSkew=2, should move 1 to get [3 5]", lambda: [ZA(), ZB()],
     [tp(1, "n1", FOO_BAR, dflt(2)), tp(1, "n1", FOO_BAR), tp(6, "n2", FOO_BAR)], 1, None, {}, False),
    ("2 domains size [2 6], maxSkew=2, can't move any because of node taints",
     lambda: [tainted(ZA(), ("hardware", "gpu", "NoSchedule")), ZB()],
     [tp(1, "n1", FOO_BAR, [constraint(2)]), tp(1, "n1", FOO_BAR), tp(6, "n2", FOO_BAR)], 0, None, {}, True),
    ("2 domains size [2 6], maxSkew=2, can't move any because node1 does not have enough CPU",
     lambda: [zone_node("n1", "zoneA", cpu_m=200), ZB()],
     [tp(1, "n1", FOO_BAR, dflt(2)), tp(1, "n1", FOO_BAR), tp(6, "n2", FOO_BAR)], 0, None, {}, True),
    ("Multiple constraints (6 nodes/2 zones, 4 pods)", whoami_nodes,
     [tp(1, f"n{i}", WHOAMI, WHOAMI_C) for i in range(1, 5)], 1, None, BOTH, False),
    ("3 domains size [8 7 0], maxSkew=1, should move 5 to get [5 5 5]",
     lambda: [ZA(), ZB(), zone_node("n3", "zoneC")],
     [tp(8, "n1", FOO_BAR, dflt()), tp(7, "n2", FOO_BAR, dflt())], 5,
     ["pod-5", "pod-6", "pod-7", "pod-8", "pod-9"], {}, False),
    ("3 domains size [5 5 5], maxSkew=1, should move 0 to retain [5 5 5]",
     lambda: [ZA(), ZB(), zone_node("n3", "zoneC")],
     [tp(5, "n1", FOO_BAR, dflt()), tp(5, "n2", FOO_BAR, dflt()), tp(5, "n3", FOO_BAR, dflt())], 0, None, {}, False),
    ("2 domains, sizes [2,0], maxSkew=1, move 1 pod since pod tolerates the node with taint",
     lambda: [ZA(), tainted(ZB(), ("taint-test", "test", "NoSchedule"))],
     [tp(1, "n1", FOO_BAR, dflt(), tolerations=TOL_TEST), tp(1, "n1", FOO_BAR, node_selector={"zone": "zoneA"})],
     1, ["pod-0"], {}, False),
    ("2 domains, sizes [2,0], maxSkew=1, move 0 pods since pod does not tolerate the tainted node",
     lambda: [ZA(), tainted(ZB(), ("taint-test", "test", "NoSchedule"))],
     [tp(1, "n1", FOO_BAR, dflt()), tp(1, "n1", FOO_BAR, node_selector={"zone": "zoneA"})], 0, None, {}, False),
    ("2 domains, sizes [2,0], maxSkew=1, move 0 pods since pod does not tolerate the tainted node, and NodeFit is "
     "enabled", lambda: [ZA(), tainted(ZB(), ("taint-test", "test", "NoSchedule"))],
     [tp(1, "n1", FOO_BAR, dflt()), tp(1, "n1", FOO_BAR, node_selector={"zone": "zoneA"})], 0, None, {}, True),
    ("2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with PreferNoSchedule Taint",
     lambda: [ZA(), tainted(ZB(), ("taint-test", "test", "PreferNoSchedule"))],
     [tp(1, "n1", FOO_BAR, dflt()), tp(1, "n1", FOO_BAR, node_selector={"zone": "zoneA"})], 1, ["pod-0"], {},
     False),
    ("2 domains, sizes [2,0], maxSkew=1, move 0 pod for node with unmatched label filtering", lambda: [ZA(), ZB()],
     [tp(1, "n1", FOO_BAR, dflt()), tp(1, "n1", FOO_BAR)], 0, None,
     {"labelSelector": label_selector("foo", ["baz"], "In")}, False),
    ("2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with matched label filtering", lambda: [ZA(), ZB()],
     [tp(1, "n1", FOO_BAR, dflt()), tp(1, "n1", FOO_BAR)], 1, ["pod-1"],
     {"labelSelector": label_selector("foo", ["bar"], "In")}, False),
    ("2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with matched label filtering (NotIn op)",
     lambda: [ZA(), ZB()], [tp(1, "n1", FOO_BAR, dflt()), tp(1, "n1", FOO_BAR)], 1, ["pod-1"],
     {"labelSelector": label_selector("foo", ["baz"], "NotIn")}, False),
    ("2 domains, sizes [2,0], maxSkew=1, move 1 pods given matchLabelKeys on same replicaset", lambda: [ZA(), ZB()],
     [tp(1, "n1", {**FOO_BAR, "pod-template-hash": "foo"}, hash_c()),
      tp(1, "n1", {**FOO_BAR, "pod-template-hash": "foo"}, hash_c())], 1, ["pod-1"],
     {"labelSelector": label_selector("foo", ["baz"], "NotIn")}, False),
    ("2 domains, sizes [2,0], maxSkew=1, move 0 pods given matchLabelKeys on two different replicasets",
     lambda: [ZA(), ZB()],
     [tp(1, "n1", {**FOO_BAR, "pod-template-hash": "foo"}, hash_c()),
      tp(1, "n1", {**FOO_BAR, "pod-template-hash": "bar"}, hash_c())], 0, None,
     {"labelSelector": label_selector("foo", ["baz"], "NotIn")}, False),
    ("2 domains, sizes [4,2], maxSkew=1, 2 pods in termination; nothing should be moved", lambda: [ZA(), ZB()],
     [tp(2, "n1", FOO_BAR, dflt()), tp(2, "n1", FOO_BAR, dflt(), deleting=True), tp(2, "n2", FOO_BAR, dflt())],
     0, None, {"labelSelector": label_selector("foo", ["bar"], "In")}, False),
    ("3 domains, sizes [2,3,4], maxSkew=1, NodeFit is enabled, and not enough cpu on zoneA; nothing should be moved",
     lambda: [zone_node("n1", "zoneA", 250, 2000, 9), zone_node("n2", "zoneB", 1000, 2000, 9),
              zone_node("n3", "zoneC", 1000, 2000, 9)],
     [tp(2, "n1", FOO_BAR, dflt()), tp(3, "n2", FOO_BAR, dflt()), tp(4, "n3", FOO_BAR, dflt())], 0, None, {}, True),
    ("3 domains, sizes [2,3,4], maxSkew=1, args.NodeFit is false, and not enough cpu on zoneA; 1 should be moved to "
     "force scale-up",
     lambda: [zone_node("n1", "zoneA", 250, 2000, 9), zone_node("n2", "zoneB", 1000, 2000, 9),
              zone_node("n3", "zoneC", 1000, 2000, 9)],
     [tp(2, "n1", FOO_BAR, dflt()), tp(3, "n2", FOO_BAR, dflt()), tp(4, "n3", FOO_BAR, dflt())], 1, None,
     {"topologyBalanceNodeFit": False}, True),
    ("3 domains, sizes [[1,0], [1,1], [2,1]], maxSkew=1, NodeFit is enabled, and not enough cpu on ZoneA; nothing "
     "should be moved",
     lambda: [zone_node("A1", "zoneA", 150, 2000, 9), zone_node("B1", "zoneB", 1000, 2000, 9),
              zone_node("C1", "zoneC", 1000, 2000, 9), zone_node("A2", "zoneA", 50, 2000, 9),
              zone_node("B2", "zoneB", 1000, 2000, 9), zone_node("C2", "zoneC", 1000, 2000, 9)],
     [tp(1, "A1", FOO_BAR, dflt()), tp(1, "B1", FOO_BAR, dflt()), tp(1, "B2", FOO_BAR, dflt()),
      tp(2, "C1", FOO_BAR, dflt()), tp(1, "C2", FOO_BAR, dflt())], 0, None, {}, True),
    ("2 domains, sizes [[1,4], [2,1]], maxSkew=1, NodeFit is enabled; should move 1",
     lambda: [zone_node("A1", "zoneA", 1000, 2000, 9), zone_node("A2", "zoneA", 1000, 2000, 9),
              zone_node("B1", "zoneB", 1000, 2000, 9), zone_node("B2", "zoneB", 1000, 2000, 9)],
     [tp(1, "A1", FOO_BAR, dflt()), tp(4, "A2", FOO_BAR, dflt()), tp(2, "B1", FOO_BAR, dflt()),
      tp(1, "B2", FOO_BAR, dflt())], 1, ["pod-4"], {}, True),
    ("2 domains, sizes [3, 1], maxSkew=1, Tainted nodes; nothing should be moved", issue_839_nodes,
     [tp(2, "app1", SERVICE, SERVICE_C, affinity=SERVICE_AFF), tp(2, "app2", SERVICE, SERVICE_C, affinity=SERVICE_AFF)],
     0, None, {}, True),
    ("3 domains, sizes [2, 1, 0] with selectors, maxSkew=1, nodeTaintsPolicy=Ignore, should move 1 for [1, 1, 1]",
     lambda: [node("A1", 1000, 2000, 9, zone="zoneA", **ARM), node("B1", 1000, 2000, 9, zone="zoneB", **ARM),
              node("C1", 1000, 2000, 9, zone="zoneC", **ARM)],
     [tp(1, "A1", FOO_BAR, dflt(nodeAffinityPolicy="Ignore"), node_selector=dict(ARM)),
      tp(1, "A1", FOO_BAR, dflt(nodeAffinityPolicy="Ignore"), node_selector={"zone": "zoneA", **ARM}),
      tp(1, "B1", FOO_BAR, dflt(nodeAffinityPolicy="Ignore"), node_selector=dict(ARM))],
     1, ["pod-0"], {}, False),
    ("ZoneAwareNodeFit=false (default), 2 domains [4,1], target zone at CPU capacity, existing "
     "TopologyBalanceNodeFit still blocks eviction",
     lambda: [zone_node("A1", "zoneA"), zone_node("B1", "zoneB", cpu_m=50)],
     [tp(4, "A1", FOO_BAR, dflt()), tp(1, "B1", FOO_BAR)], 0, None, {}, True),
]


@pytest.mark.parametrize(("nodes", "groups", "expected", "expected_pods", "args", "node_fit"),
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
async def test_topology_spread_constraint(cluster: Any, nodes: Callable[[], list[JsonDict]],
                                          groups: list[dict[str, Any]], expected: int,
                                          expected_pods: list[str] | None, args: dict[str, Any],
                                          node_fit: bool) -> None:
    await cluster.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}})
    await cluster.add(*nodes())
    pods = create_pods(groups)
    await cluster.add(*[p for p, _ in pods])
    for p, deleting in pods:
        if deleting:
            await cluster.client.delete(PODS, p["metadata"]["name"], "ns1")
    pol = cluster.policy(("balance", "RemovePodsViolatingTopologySpreadConstraint", args or None),
                         evictor={"nodeFit": node_fit})
    evicted = await cluster.run(pol)
    assert len(evicted) == expected, evicted
    if expected_pods is not None:
        assert set(expected_pods) <= set(evicted), evicted


@pytest.mark.skip(reason="ZoneAwareNodeFit is newer than v0.33 (no such argument in our schema)")
@pytest.mark.parametrize("name", [
    "ZoneAwareNodeFit=true, 2 domains [4,1], target zone has capacity, should evict 1",
    "ZoneAwareNodeFit=true, 2 domains [4,1], all target zones at CPU capacity, should evict 0 (no churn)",
    "ZoneAwareNodeFit=true, 3 domains [6,2,2], one under-loaded zone at capacity, other has room, should evict 3",
])
def test_zone_aware_node_fit(name: str) -> None:
    """Not ported."""
