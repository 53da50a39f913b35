"""The descheduler end to end: a real `minik3s server` with simulated nodes, the embedded
scheduler and controllers, and the seed's policy (examples/descheduler/policy.yaml) run every
second. Deployments are moved by evicting their pods through `pods/eviction`; the
ReplicaSet replaces them and the scheduler places the replacements."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from minik3s.testing.wait import wait_for

SEED_POLICY = Path(__file__).resolve().parents[2] / "examples" / "descheduler" / "policy.yaml"
ZONE = "topology.kubernetes.io/zone"


def node(name: str, *, zone: str | None = None, cpu: str = "4") -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels[ZONE] = zone
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                       "allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def fleet(tmp_path: Path, nodes: list[dict[str, Any]]) -> str:
    p = tmp_path / "fleet.yaml"
    p.write_text(yaml.safe_dump_all(nodes))
    return str(p)


def deployment(name: str, replicas: int, *, cpu: str = "100m", labels: dict[str, str] | None = None,
               **spec: Any) -> dict[str, Any]:
    pod_labels = {"app": name, **(labels or {})}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": pod_labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1",
                                                           "resources": {"requests": {"cpu": cpu,
                                                                                      "memory": "100Mi"}}}],
                                           **spec}}}}


class Api:
    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)

    def apply_deployment(self, ns: str, obj: dict[str, Any]) -> None:
        r = self.http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=obj)
        assert r.status_code == 201, r.text

    def namespace(self, name: str) -> str:
        r = self.http.post("/api/v1/namespaces", json={"metadata": {"name": name}})
        assert r.status_code == 201, r.text
        return name

    def pods(self, ns: str, selector: str) -> list[dict[str, Any]]:
        items = self.http.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": selector}).json()["items"]
        return [p for p in items if not p["metadata"].get("deletionTimestamp")]

    def running(self, ns: str, selector: str, n: int) -> list[dict[str, Any]] | None:
        pods = self.pods(ns, selector)
        ok = len(pods) == n and all(p.get("status", {}).get("phase") == "Running" and p["spec"].get("nodeName")
                                    for p in pods)
        return pods if ok else None

    def set_unschedulable(self, name: str, value: bool) -> None:
        r = self.http.patch(f"/api/v1/nodes/{name}", json={"spec": {"unschedulable": value}},
                            headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 200, r.text

    def label(self, kind_path: str, labels: dict[str, str]) -> None:
        r = self.http.patch(kind_path, json={"metadata": {"labels": labels}},
                            headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 200, r.text

    def metrics(self) -> str:
        r = self.http.get("/metrics")
        assert r.status_code == 200
        return r.text

    def evicted(self, result: str = "success", strategy: str = "") -> float:
        total = 0.0
        for line in self.metrics().splitlines():
            if line.startswith("descheduler_pods_evicted_total{") and f'result="{result}"' in line \
                    and f'strategy="{strategy}' in line:
                total += float(line.rsplit(" ", 1)[1])
        return total


@pytest.fixture
def start(minik3s_server_factory: Any, tmp_path: Path) -> Any:
    made: list[Api] = []

    def make(nodes: list[dict[str, Any]], *args: str, policy: Path = SEED_POLICY) -> tuple[Api, Any]:
        srv = minik3s_server_factory("--descheduler-policy", str(policy), "--descheduling-interval", "1s", *args,
                                     nodes=fleet(tmp_path, nodes))
        api = Api(srv.url)
        made.append(api)
        wait_for(lambda: len(api.http.get("/api/v1/nodes").json()["items"]) == len(nodes))
        return api, srv

    yield make
    for api in made:
        api.http.close()


def cpu_pct(api: Api, ns: str) -> dict[str, float]:
    """Requested cpu per node as a percentage of its 4 cpus (the LowNodeUtilization view)."""
    used: Counter[str] = Counter()
    for p in api.pods(ns, "app"):
        if p["spec"].get("nodeName"):
            used[p["spec"]["nodeName"]] += 500
    return {n: 100.0 * used[n] / 4000 for n in used}


def test_low_node_utilization_moves_pods_onto_new_empty_nodes(start: Any) -> None:
    nodes = [node(f"node-{i}") for i in range(1, 7)]
    api, srv = start(nodes)
    for i in (4, 5, 6):
        api.set_unschedulable(f"node-{i}", True)
    ns = api.namespace("lnu")
    api.apply_deployment(ns, deployment("load", 15, cpu="500m"))
    pods = wait_for(lambda: api.running(ns, "app=load", 15), timeout=90)
    assert {p["spec"]["nodeName"] for p in pods} == {"node-1", "node-2", "node-3"}
    assert max(cpu_pct(api, ns).values()) > 50  # 5 pods x 500m on a 4-cpu node = 62.5%
    for i in (4, 5, 6):
        api.set_unschedulable(f"node-{i}", False)

    def balanced() -> dict[str, float] | None:
        if not api.running(ns, "app=load", 15):
            return None
        pct = cpu_pct(api, ns)
        new = sum(1 for n in pct if n in ("node-4", "node-5", "node-6"))
        return pct if max(pct.values()) <= 50 and new >= 1 else None

    pct = wait_for(balanced, timeout=120)
    assert all(v <= 50 for v in pct.values()), pct
    assert api.evicted(strategy="LowNodeUtilization") >= 3
    assert "descheduler_loop_duration_seconds_count" in api.metrics()
    log = srv.log_path.read_text()
    assert "Traceback" not in log


def test_new_zone_gets_an_even_spread(start: Any) -> None:
    api, _ = start([node("node-1", zone="a"), node("node-2", zone="b"), node("node-3")])
    ns = api.namespace("spread")
    api.apply_deployment(ns, deployment("web", 6, topologySpreadConstraints=[{
        "maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}}}]))
    pods = wait_for(lambda: api.running(ns, "app=web", 6), timeout=90)
    assert Counter(p["spec"]["nodeName"] for p in pods) == {"node-1": 3, "node-2": 3}
    api.label("/api/v1/nodes/node-3", {ZONE: "c"})  # a new zone appears: skew 3 > maxSkew 1

    def even() -> Counter[str] | None:
        pods = api.running(ns, "app=web", 6)
        if not pods:
            return None
        c = Counter(p["spec"]["nodeName"] for p in pods)
        return c if c == {"node-1": 2, "node-2": 2, "node-3": 2} else None

    wait_for(even, timeout=120)
    assert api.evicted(strategy="RemovePodsViolatingTopologySpread") == 2


def anti_affinity_setup(api: Api, ns: str, *, pin_a: bool = False) -> None:
    """`a` must not share a node with role=db pods; `b` (pinned to node-1) is not one, yet."""
    spec: dict[str, Any] = {"affinity": {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"role": "db"}}}]},
        "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100, "preference": {"matchExpressions": [{"key": "kubernetes.io/hostname",
                                                                 "operator": "In", "values": ["node-1"]}]}}]}}}
    if pin_a:
        spec["nodeSelector"] = {"kubernetes.io/hostname": "node-1"}
    api.apply_deployment(ns, deployment("b", 1, nodeSelector={"kubernetes.io/hostname": "node-1"}))
    api.apply_deployment(ns, deployment("a", 1, **spec))
    wait_for(lambda: api.running(ns, "app=a", 1) and api.running(ns, "app=b", 1), timeout=90)
    assert api.pods(ns, "app=a")[0]["spec"]["nodeName"] == "node-1"


def break_anti_affinity(api: Api, ns: str) -> None:
    b = api.pods(ns, "app=b")[0]["metadata"]["name"]
    api.label(f"/api/v1/namespaces/{ns}/pods/{b}", {"role": "db"})


def test_relabel_breaking_anti_affinity_is_corrected_pdb_and_loop_avoidance_hold(start: Any) -> None:
    api, _ = start([node("node-1"), node("node-2")])
    free, guarded, pinned = api.namespace("free"), api.namespace("guarded"), api.namespace("pinned")
    anti_affinity_setup(api, free)
    anti_affinity_setup(api, guarded)
    anti_affinity_setup(api, pinned, pin_a=True)
    r = api.http.post(f"/apis/policy/v1/namespaces/{guarded}/poddisruptionbudgets", json={
        "metadata": {"name": "a"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "a"}}}})
    assert r.status_code == 201, r.text
    wait_for(lambda: api.http.get(f"/apis/policy/v1/namespaces/{guarded}/poddisruptionbudgets/a").json()
             .get("status", {}).get("observedGeneration"))
    guarded_a = api.pods(guarded, "app=a")[0]["metadata"]["uid"]
    pinned_a = api.pods(pinned, "app=a")[0]["metadata"]["uid"]
    for ns in (free, guarded, pinned):
        break_anti_affinity(api, ns)
    # the free `a` is evicted and its replacement avoids node-1
    moved = wait_for(lambda: (p := api.running(free, "app=a", 1)) and p[0]["spec"]["nodeName"] == "node-2" and p,
                     timeout=90)
    assert moved
    # the PDB answers 429: logged, counted as an error, the pod stays
    wait_for(lambda: api.evicted(result="error", strategy="RemovePodsViolatingInterPodAntiAffinity") >= 1)
    # the pinned `a` could only come back to node-1 (where it cannot go): never evicted
    wait_for(lambda: api.evicted(result="skipped: would be placed on the same node") >= 2)
    assert [p["metadata"]["uid"] for p in api.pods(guarded, "app=a")] == [guarded_a]
    assert [p["metadata"]["uid"] for p in api.pods(pinned, "app=a")] == [pinned_a]
    events = api.http.get(f"/api/v1/namespaces/{free}/events",
                          params={"fieldSelector": "reason=RemovePodsViolatingInterPodAntiAffinity"}).json()["items"]
    assert events and events[0]["message"] == "pod eviction from node-1 node by sigs.k8s.io/descheduler"
    assert events[0]["action"] == "Descheduled"


def test_dry_run_evicts_nothing_but_reports(start: Any) -> None:
    api, _ = start([node("node-1"), node("node-2")], "--descheduler-dry-run")
    ns = api.namespace("dry")
    anti_affinity_setup(api, ns)
    uid = api.pods(ns, "app=a")[0]["metadata"]["uid"]
    break_anti_affinity(api, ns)
    wait_for(lambda: api.evicted(strategy="RemovePodsViolatingInterPodAntiAffinity") >= 2)  # two cycles' worth
    assert [p["metadata"]["uid"] for p in api.pods(ns, "app=a")] == [uid]


def test_invalid_policy_fails_at_start_naming_the_field(tmp_path: Path) -> None:
    import subprocess
    import sys

    bad = tmp_path / "policy.yaml"
    bad.write_text("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n"
                   "  pluginConfig:\n  - name: LowNodeUtilization\n    args:\n      thresholds: {cpu: 70}\n"
                   "      targetThresholds: {cpu: 50}\n  plugins:\n    balance:\n      enabled: [LowNodeUtilization]\n")
    out = subprocess.run([sys.executable, "-m", "minik3s", "server", "--port", "0", "--data-dir",
                          str(tmp_path / "d"), "--nodes", "0", "--descheduler-policy", str(bad)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "profiles[0].pluginConfig[0].args" in out.stderr, out.stderr[-2000:]
    assert "thresholds' cpu percentage is greater than targetThresholds'" in out.stderr


TAINTS_POLICY = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [{
    "name": "taints", "pluginConfig": [{"name": "RemovePodsViolatingNodeTaints",
                                        "args": {"includePreferNoSchedule": True}}],
    "plugins": {"deschedule": {"enabled": ["RemovePodsViolatingNodeTaints"]}}}]}


@pytest.mark.parametrize("loop_avoidance", [True, False], ids=["loop-avoidance-on", "loop-avoidance-off"])
def test_loop_avoidance_keeps_a_pod_that_would_land_on_its_own_node(start: Any, tmp_path: Path,
                                                                    loop_avoidance: bool) -> None:
    policy = tmp_path / "taints.yaml"
    policy.write_text(yaml.safe_dump(TAINTS_POLICY))
    args = () if loop_avoidance else ("--no-descheduler-loop-avoidance",)
    api, _ = start([node("node-1"), node("node-2")], *args, policy=policy)
    ns = api.namespace("loops")
    # `pinned` can only ever run on node-1; a PreferNoSchedule taint there makes it a candidate,
    # but the scheduler would put it straight back (the taint only lowers node-1's score)
    api.apply_deployment(ns, deployment("pinned", 1, nodeSelector={"kubernetes.io/hostname": "node-1"}))
    pinned_uid = wait_for(lambda: api.running(ns, "app=pinned", 1), timeout=60)[0]["metadata"]["uid"]
    r = api.http.patch("/api/v1/nodes/node-1", json={"spec": {"taints": [{"key": "soft", "effect": "PreferNoSchedule"}]}},
                       headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    strategy = "RemovePodsViolatingNodeTaints"
    if loop_avoidance:
        # several cycles find it, and skip it every time
        wait_for(lambda: api.evicted(result="skipped: would be placed on the same node", strategy=strategy) >= 3)
        assert [p["metadata"]["uid"] for p in api.pods(ns, "app=pinned")] == [pinned_uid]
        assert api.evicted(strategy=strategy) == 0
    else:
        wait_for(lambda: (p := api.running(ns, "app=pinned", 1)) and p[0]["metadata"]["uid"] != pinned_uid,
                 timeout=60)
        assert api.evicted(result="skipped: would be placed on the same node") == 0
