"""kube-scheduler's decisions end to end: a real server, simulated nodes, the embedded scheduler."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import httpx
import pytest
import yaml

from minik3s.testing.builders import PodBuilder, make_pod
from minik3s.testing.wait import wait_for

NO_CONTROLLERS = ("--disable", "controllers")


def manifest(b: PodBuilder) -> dict:
    obj = b.obj()
    obj["metadata"].pop("uid", None)
    obj["metadata"].pop("creationTimestamp", None)
    obj.pop("status", None)
    return obj


def fleet(tmp_path: Path, docs: list[dict]) -> str:
    p = tmp_path / "fleet.yaml"
    p.write_text(yaml.safe_dump_all(docs))
    return str(p)


def node(name: str, *, cpu: str = "4", memory: str = "16Gi", zone: str | None = None, taints=None) -> dict:
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    n = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
         "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
                    "allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}
    if taints:
        n["spec"] = {"taints": taints}
    return n


class Cluster:
    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)

    def create(self, obj: dict, ns: str = "default") -> dict:
        r = self.http.post(f"/api/v1/namespaces/{ns}/pods", json=obj)
        assert r.status_code == 201, r.text
        return r.json()

    def pod(self, name: str, ns: str = "default") -> dict:
        return self.http.get(f"/api/v1/namespaces/{ns}/pods/{name}").json()

    def node_of(self, name: str) -> str | None:
        return self.pod(name)["spec"].get("nodeName")

    def wait_bound(self, name: str, timeout: float = 30) -> str:
        return wait_for(lambda: self.node_of(name), timeout)

    def scheduled_condition(self, name: str) -> dict | None:
        for c in self.pod(name).get("status", {}).get("conditions") or []:
            if c["type"] == "PodScheduled":
                return c
        return None

    def wait_unschedulable(self, name: str, timeout: float = 30) -> dict:
        return wait_for(lambda: (c := self.scheduled_condition(name)) and c.get("reason") == "Unschedulable" and c,
                        timeout)

    def nodes_zone(self) -> dict[str, str]:
        return {n["metadata"]["name"]: n["metadata"]["labels"].get("topology.kubernetes.io/zone", "")
                for n in self.http.get("/api/v1/nodes").json()["items"]}

    def wait_nodes(self, n: int) -> None:
        wait_for(lambda: len(self.http.get("/api/v1/nodes").json()["items"]) >= n)


@pytest.fixture
def cluster_factory(minik3s_server_factory, tmp_path):
    made: list[Cluster] = []

    def make(nodes: list[dict] | int, *args: str) -> Cluster:
        spec = fleet(tmp_path, nodes) if isinstance(nodes, list) else nodes
        srv = minik3s_server_factory(*args, nodes=spec)
        c = Cluster(srv.url)
        c.wait_nodes(len(nodes) if isinstance(nodes, list) else nodes)
        made.append(c)
        return c

    yield make
    for c in made:
        c.http.close()


def test_least_allocated_and_balanced_pick_node1_and_taint_filters_node3(cluster_factory):
    c = cluster_factory([node("node-1", cpu="10"), node("node-2", cpu="10"),
                         node("node-3", cpu="10", taints=[{"key": "dedicated", "value": "gpu",
                                                           "effect": "NoSchedule"}])], *NO_CONTROLLERS)
    # node-1 at 60 % cpu / 50 % memory, node-2 at 90 % / 10 %
    c.create(manifest(make_pod("fill-1").req(cpu="6", memory="8Gi").node("node-1")))
    c.create(manifest(make_pod("fill-2").req(cpu="9", memory="1638Mi").node("node-2")))
    c.create(manifest(make_pod("web").req(cpu="500m")))
    assert c.wait_bound("web") == "node-1"
    doc = c.http.get("/debug/minik3s/explain/namespaces/default/pods/web").json()
    assert doc["selectedNode"] == "node-1"
    assert doc["nodes"]["node-3"]["feasible"] is False
    assert doc["nodes"]["node-1"]["totalScore"] > doc["nodes"]["node-2"]["totalScore"]
    ev = c.http.get("/api/v1/namespaces/default/events", params={"fieldSelector": "involvedObject.name=web"}).json()
    assert any(e["reason"] == "Scheduled" and e["message"] == "Successfully assigned default/web to node-1"
               for e in ev["items"])


def test_pod_affinity_and_anti_affinity(cluster_factory):
    c = cluster_factory(3, *NO_CONTROLLERS)
    c.create(manifest(make_pod("redis").labels(app="redis").node("node-2")))
    c.create(manifest(make_pod("cache-client").pod_affinity("kubernetes.io/hostname", {"app": "redis"})))
    assert c.wait_bound("cache-client") == "node-2"
    for i in range(3):
        c.create(manifest(make_pod(f"one-{i}").labels(app="one").pod_anti_affinity("kubernetes.io/hostname",
                                                                                   {"app": "one"})))
    nodes = [c.wait_bound(f"one-{i}") for i in range(3)]
    assert sorted(nodes) == ["node-1", "node-2", "node-3"]
    c.create(manifest(make_pod("one-3").labels(app="one").pod_anti_affinity("kubernetes.io/hostname",
                                                                           {"app": "one"})))
    cond = c.wait_unschedulable("one-3")
    assert cond["message"].startswith("0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.")


def test_topology_spread_5_pods_land_2_2_1(cluster_factory):
    c = cluster_factory(6, *NO_CONTROLLERS)
    zones = c.nodes_zone()
    for i in range(5):
        c.create(manifest(make_pod(f"s-{i}").labels(app="s").req(cpu="100m")
                          .spread_constraint(1, "topology.kubernetes.io/zone", selector={"app": "s"})))
        c.wait_bound(f"s-{i}")
    per_zone = Counter(zones[c.node_of(f"s-{i}")] for i in range(5))
    assert sorted(per_zone.values()) == [1, 2, 2]


def test_min_domains_with_two_zones(cluster_factory):
    """minDomains 3 but only 2 zones: the global minimum counts as 0, so once each zone holds
    maxSkew pods the next one is Pending (KEP-3022); with ScheduleAnyway it schedules."""
    c = cluster_factory([node("a1", zone="zone-a"), node("b1", zone="zone-b")], *NO_CONTROLLERS)

    def spread(name: str, app: str, when: str) -> dict:
        b = make_pod(name).labels(app=app)
        b.spread_constraint(1, "topology.kubernetes.io/zone", when, selector={"app": app},
                            min_domains=3 if when == "DoNotSchedule" else None)
        return manifest(b)

    for i in range(2):
        c.create(spread(f"md-{i}", "md", "DoNotSchedule"))
        c.wait_bound(f"md-{i}")
    assert {c.node_of("md-0"), c.node_of("md-1")} == {"a1", "b1"}
    c.create(spread("md-2", "md", "DoNotSchedule"))
    cond = c.wait_unschedulable("md-2")
    assert cond["message"].startswith(
        "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints.")
    for i in range(3):
        c.create(spread(f"any-{i}", "any", "ScheduleAnyway"))
    for i in range(3):
        assert c.wait_bound(f"any-{i}") in ("a1", "b1")


def test_scheduling_gates_hold_until_removed(cluster_factory):
    c = cluster_factory(2, *NO_CONTROLLERS)
    c.create(manifest(make_pod("gated").scheduling_gates("example.com/wait")))
    cond = wait_for(lambda: c.scheduled_condition("gated"))
    assert cond["reason"] == "SchedulingGated"
    c.create(manifest(make_pod("free")))
    c.wait_bound("free")
    assert c.node_of("gated") is None
    r = c.http.patch("/api/v1/namespaces/default/pods/gated", content=b'{"spec":{"schedulingGates":null}}',
                     headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    c.wait_bound("gated")


def test_failed_scheduling_message_mixed_reasons(cluster_factory):
    nodes = [node(f"n{i}", cpu="1") for i in range(1, 6)]
    nodes.append(node("gpu", cpu="64", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]))
    c = cluster_factory(nodes, *NO_CONTROLLERS)
    c.create(manifest(make_pod("hungry").req(cpu="2")))
    cond = c.wait_unschedulable("hungry")
    assert cond["message"] == (
        "0/6 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 5 Insufficient cpu. "
        "preemption: 0/6 nodes are available: 1 Preemption is not helpful for scheduling, "
        "5 No preemption victims found for incoming pod.")
    ev = c.http.get("/api/v1/namespaces/default/events",
                    params={"fieldSelector": "involvedObject.name=hungry,reason=FailedScheduling"}).json()
    assert ev["items"] and ev["items"][0]["message"] == cond["message"]
    assert ev["items"][0]["type"] == "Warning"


def test_terminating_pod_keeps_its_resources_until_gone(cluster_factory):
    c = cluster_factory([node("solo", cpu="1")], *NO_CONTROLLERS)
    a = manifest(make_pod("a").req(cpu="1").annotations({"sim.minik3s.io/shutdown-seconds": "100"}))
    c.create(a)
    assert c.wait_bound("a") == "solo"
    wait_for(lambda: c.pod("a")["status"].get("phase") == "Running")
    r = c.http.request("DELETE", "/api/v1/namespaces/default/pods/a", json={"gracePeriodSeconds": 4})
    assert r.status_code == 200 and r.json()["metadata"]["deletionTimestamp"]
    c.create(manifest(make_pod("b").req(cpu="1")))
    cond = c.wait_unschedulable("b")
    assert "1 Insufficient cpu" in cond["message"]
    assert c.http.get("/api/v1/namespaces/default/pods/a").status_code == 200  # still Terminating
    # once the kubelet confirms the deletion, the freed cpu lets b schedule
    assert c.wait_bound("b", timeout=30) == "solo"
    assert c.http.get("/api/v1/namespaces/default/pods/a").status_code == 404
