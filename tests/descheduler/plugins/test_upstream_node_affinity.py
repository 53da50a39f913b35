"""Upstream sigs descheduler pkg/framework/plugins/removepodsviolatingnodeaffinity/node_affinity_test.go,
TestRemovePodsViolatingNodeAffinity ported case by case: one real descheduling cycle of
RemovePodsViolatingNodeAffinity over the in-process API (DefaultEvictor nodeFit and eviction
limits per case), asserting the number of evictions. Each case's pods are upstream's
addPodsToNode: `podwithnodeaffinity` (the affinity under test) plus two plain pods, all owned.

Harness notes: node names are lower-cased (nodeWithLabels -> nodewithlabels) as the API requires;
upstream calls Deschedule with the case's nodes, while a real cycle is skipped with fewer than two
ready nodes, so one-node cases get an extra empty node `spare` without the desired label (it
cannot change their verdicts: their pods already sit on a matching node). Terminating pods are
made with a finalizer and a delete, as the API does not accept a deletionTimestamp on create."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.api.resources import PODS
from minik3s.api.types import JsonDict

WITH = "nodewithlabels"
WITHOUT = "nodewithoutlabels"
UNSCHED = "unschedulablenodewithlabels"
KEY, VALUE = "kubernetes.io/desiredNode", "yes"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
INVALID = "requiredDuringSchedulingRequiredDuringExecution"


def node(name: str, *, desired: bool = False, unschedulable: bool = False) -> JsonDict:
    rl = {"cpu": "2000m", "memory": "3000", "pods": "10"}
    n: JsonDict = {"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": name, "labels": {KEY: VALUE} if desired else {}},
                   "spec": {"unschedulable": True} if unschedulable else {},
                   "status": {"capacity": dict(rl), "allocatable": dict(rl),
                              "conditions": [{"type": "Ready", "status": "True"}]}}
    return n


def pods_on(node_name: str, affinity_type: str, *, terminating: bool = False) -> list[JsonDict]:
    def pod(name: str) -> JsonDict:
        p: JsonDict = {"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name, "namespace": "default",
                                    "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "owner-pod",
                                                         "uid": "uid-owner-pod"}]},
                       "spec": {"nodeName": node_name,
                                "containers": [{"name": "c0", "image": "registry.k8s.io/pause:3.10",
                                                "resources": {"requests": {"cpu": "100m", "memory": "0"}}}]}}
        if terminating:
            p["metadata"]["finalizers"] = ["test.minik3s.io/keep"]
        return p

    with_affinity = pod("podwithnodeaffinity")
    expr = {"matchExpressions": [{"key": KEY, "operator": "In", "values": [VALUE]}]}
    if affinity_type == REQUIRED:
        with_affinity["spec"]["affinity"] = {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [expr]}}}
    elif affinity_type == PREFERRED:
        with_affinity["spec"]["affinity"] = {"nodeAffinity": {PREFERRED: [{"weight": 10, "preference": expr}]}}
    else:  # upstream: an empty NodeAffinity for the invalid type
        with_affinity["spec"]["affinity"] = {"nodeAffinity": {}}
    return [with_affinity, pod("pod1"), pod("pod2")]


def case(description: str, affinity_type: str, expected: int, nodes: list[JsonDict], *, on: str = WITHOUT,
         terminating: bool = False, **kw: Any) -> Any:
    return pytest.param(affinity_type, pods_on(on, affinity_type, terminating=terminating), nodes, expected, kw,
                        id=description)


def both() -> list[JsonDict]:
    return [node(WITHOUT), node(WITH, desired=True)]


SUFFIX = "Pod is scheduled on node without matching labels, another schedulable node available"
CASES = [
    case("Invalid Affinity type, should not evict any pods", INVALID, 0, both()),
    case("Pod is correctly scheduled on node, no eviction expected [required affinity]", REQUIRED, 0,
         [node(WITH, desired=True)], on=WITH),
    case("Pod is correctly scheduled on node, no eviction expected [preferred affinity]", PREFERRED, 0,
         [node(WITH, desired=True)], on=WITH),
    case(f"{SUFFIX}, should be evicted", REQUIRED, 1, both()),
    case("Pod is scheduled on node without matching labels, another schedulable node available with better fit, "
         "should be evicted", PREFERRED, 1, both()),
    case(f"{SUFFIX}, maxPodsToEvictPerNode set to 1, should be evicted [required affinity]", REQUIRED, 1, both(),
         max_per_node=1),
    case(f"{SUFFIX}, maxPodsToEvictPerNode set to 1, should be evicted [preferred affinity]", PREFERRED, 1, both(),
         max_per_node=1),
    case(f"{SUFFIX}, maxPodsToEvictPerNode set to 0, should be not evicted [required affinity]", REQUIRED, 0, both(),
         max_per_node=0),
    case(f"{SUFFIX}, maxPodsToEvictPerNode set to 0, should be not evicted [preferred affinity]", PREFERRED, 0,
         both(), max_per_node=0),
    case(f"{SUFFIX}, maxPodsToEvictPerNode set to 1, no pod evicted since pod terminating [required affinity]",
         REQUIRED, 0, both(), terminating=True, max_per_node=1),
    case(f"{SUFFIX}, maxPodsToEvictPerNode set to 1, no pod evicted since pod terminating [preferred affinity]",
         PREFERRED, 0, both(), terminating=True, max_per_node=1),
    case(f"{SUFFIX}, maxNoOfPodsToEvictPerNamespace set to 1, should be evicted [required affinity]", REQUIRED, 1,
         both(), max_per_namespace=1),
    case(f"{SUFFIX}, maxNoOfPodsToEvictTotal set to 0, should not be evicted [required affinity]", REQUIRED, 0,
         both(), max_per_namespace=1, max_total=0),
    case(f"{SUFFIX}, maxNoOfPodsToEvictPerNamespace set to 1, should be evicted [preferred affinity]", PREFERRED, 1,
         both(), max_per_namespace=1),
    case(f"{SUFFIX}, maxNoOfPodsToEvictPerNamespace set to 0, should not be evicted [required affinity]", REQUIRED,
         0, both(), max_per_namespace=0),
    case(f"{SUFFIX}, maxNoOfPodsToEvictPerNamespace set to 0, should not be evicted [preferred affinity]", PREFERRED,
         0, both(), max_per_namespace=0),
    case(f"{SUFFIX}, maxNoOfPodsToEvictPerNamespace set to 1, no pod evicted since pod terminting [required "
         "affinity]", REQUIRED, 0, both(), terminating=True, max_per_namespace=1),
    case(f"{SUFFIX}, maxNoOfPodsToEvictPerNamespace set to 1, no pod evicted since pod terminting [preferred "
         "affinity]", PREFERRED, 0, both(), terminating=True, max_per_namespace=1),
    case("Pod is scheduled on node without matching labels, but no node where pod fits is available, should not "
         "evict [required affinity]", REQUIRED, 0, [node(WITHOUT), node(UNSCHED, desired=True, unschedulable=True)],
         nodefit=True),
    case("Pod is scheduled on node without matching labels, but no node where pod fits is available, should not "
         "evict [preferred affinity]", PREFERRED, 0, [node(WITHOUT), node(UNSCHED, desired=True, unschedulable=True)],
         nodefit=True),
    case("Pod is scheduled on node without matching labels, and unschedulable node where pod could fit is "
         "available, should not evict [required affinity]", REQUIRED, 0,
         [node(WITH, desired=True), node(UNSCHED, desired=True, unschedulable=True)], max_per_node=1, nodefit=True),
    case("Pod is scheduled on node without matching labels, and unschedulable node where pod could fit is "
         "available, should not evict [preferred affinity]", PREFERRED, 0,
         [node(WITH, desired=True), node(UNSCHED, desired=True, unschedulable=True)], max_per_node=1, nodefit=True),
]


@pytest.mark.parametrize(("affinity_type", "pods", "nodes", "expected", "kw"), CASES)
async def test_remove_pods_violating_node_affinity(cluster: Any, affinity_type: str, pods: list[JsonDict],
                                                   nodes: list[JsonDict], expected: int, kw: dict[str, Any]) -> None:
    if len(nodes) < 2:
        nodes = [*nodes, node("spare")]
    await cluster.add(*nodes, *pods)
    for p in pods:
        if p["metadata"].get("finalizers"):
            await cluster.client.delete(PODS, p["metadata"]["name"], "default")
    limits = {k: kw[v] for k, v in (("maxNoOfPodsToEvictPerNode", "max_per_node"),
                                    ("maxNoOfPodsToEvictPerNamespace", "max_per_namespace"),
                                    ("maxNoOfPodsToEvictTotal", "max_total")) if v in kw}
    pol = cluster.policy(("deschedule", "RemovePodsViolatingNodeAffinity", {"nodeAffinityType": [affinity_type]}),
                         evictor={"nodeFit": kw.get("nodefit", False)}, **limits)
    evicted = await cluster.run(pol)
    assert len(evicted) == expected, evicted
