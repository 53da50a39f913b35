"""Gang scheduling end to end, for each of the three APIs (Volcano PodGroup, scheduler-plugins
PodGroup, Workload), on a real server with three simulated one-GPU nodes.

Every scenario watches the gang's pods for the whole test over a real watch stream, so "no
partial gang ever held a node" is checked on every event, not sampled. Permit waits are
shortened to 5 s through the scheduler configuration (pluginConfig args).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from minik3s.testing.server import ServerProcess
from minik3s.testing.wait import wait_for

ROOT = Path(__file__).resolve().parents[2]
APIS = ["volcano", "x-k8s", "workload"]
PERMIT_TIMEOUT = 5
SCHED_CONFIG = f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - {{name: Coscheduling, args: {{permitWaitingTimeSeconds: {PERMIT_TIMEOUT}}}}}
  - {{name: GangScheduling, args: {{permitWaitingTimeSeconds: {PERMIT_TIMEOUT}}}}}
"""


# ---------------------------------------------------------------------------------------------- helpers
def group_objects(api: str, name: str, min_member: int, *, min_resources: dict[str, Any] | None = None
                  ) -> list[tuple[str, dict[str, Any]]]:
    """(collection path under /apis, body) of the gang object(s) for `api`."""
    if api == "volcano":
        spec: dict[str, Any] = {"minMember": min_member, "queue": "gpu-queue"}
        if min_resources:
            spec["minResources"] = min_resources
        return [("scheduling.volcano.sh/v1beta1/podgroups",
                 {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
                  "spec": spec})]
    if api == "x-k8s":
        spec = {"minMember": min_member}
        if min_resources:
            spec["minResources"] = min_resources
        return [("scheduling.x-k8s.io/v1alpha1/podgroups",
                 {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": name},
                  "spec": spec})]
    return [("scheduling.k8s.io/v1alpha1/workloads",
             {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": name},
              "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": min_member}}}]}})]


def gang_pod(api: str, group: str, name: str, *, gpus: int = 1, gated: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"gang": group}}
    spec: dict[str, Any] = {"containers": [{"name": "worker", "image": "trainer",
                                            "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}
    if api == "volcano":
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    elif api == "x-k8s":
        meta["labels"]["scheduling.x-k8s.io/pod-group"] = group
    else:
        spec["workloadRef"] = {"name": group, "podGroup": "workers"}
    if gated:
        spec["schedulingGates"] = [{"name": "example.com/hold"}]
    return {"metadata": meta, "spec": spec}


def plain_pod(name: str, gpus: int = 1) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [
        {"name": "c", "image": "app", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}


class PodWatch:
    """Every pod event of a namespace, from a real watch stream, with the time it arrived."""

    def __init__(self, url: str, ns: str) -> None:
        self.events: list[tuple[float, str, dict[str, Any]]] = []
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(url, ns), daemon=True)
        self._thread.start()
        assert self._ready.wait(10), "watch did not start"

    def _run(self, url: str, ns: str) -> None:
        with httpx.Client(base_url=url, timeout=httpx.Timeout(5, read=None)) as c, \
                c.stream("GET", f"/api/v1/namespaces/{ns}/pods", params={"watch": "1"}) as r:
            self._ready.set()
            for line in r.iter_lines():
                if self._stop.is_set():
                    return
                if line:
                    ev = json.loads(line)
                    self.events.append((time.monotonic(), ev["type"], ev["object"]))

    def bound_at(self, name: str) -> float | None:
        """When the watch first saw `name` with a nodeName."""
        for t, _type, obj in self.events:
            if obj["metadata"]["name"] == name and obj["spec"].get("nodeName"):
                return t
        return None

    def ever_bound(self, names: list[str]) -> list[str]:
        return [n for n in names if self.bound_at(n) is not None]

    def stop(self) -> None:
        self._stop.set()


@pytest.fixture
def cluster(minik3s_server_factory, tmp_path: Path) -> Iterator[httpx.Client]:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(SCHED_CONFIG)
    srv: ServerProcess = minik3s_server_factory("--scheduler-config", str(cfg), "--disable", "descheduler",
                                                nodes=str(ROOT / "examples" / "gang" / "fleet.yaml"))
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        wait_for(lambda: len(c.get("/api/v1/nodes").json()["items"]) == 3)
        c.post("/apis/scheduling.volcano.sh/v1beta1/queues",
               json={"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                     "metadata": {"name": "gpu-queue"}, "spec": {"weight": 1}}).raise_for_status()
        yield c


def create_gang(c: httpx.Client, api: str, group: str, n: int, min_member: int, **kw: Any) -> list[str]:
    for path, body in group_objects(api, group, min_member, min_resources=kw.pop("min_resources", None)):
        c.post(f"/apis/{path.split('/')[0]}/{path.split('/')[1]}/namespaces/default/{path.split('/')[2]}",
               json=body).raise_for_status()
    gated = kw.pop("gated", ())
    names = [f"{group}-{i}" for i in range(n)]
    for i, name in enumerate(names):
        c.post("/api/v1/namespaces/default/pods",
               json=gang_pod(api, group, name, gated=i in gated, **kw)).raise_for_status()
    return names


def pod(c: httpx.Client, name: str) -> dict[str, Any]:
    body: dict[str, Any] = c.get(f"/api/v1/namespaces/default/pods/{name}").json()
    return body


def node_of(c: httpx.Client, name: str) -> str:
    return str(pod(c, name)["spec"].get("nodeName") or "")


def unschedulable(c: httpx.Client, name: str) -> bool:
    conds = (pod(c, name).get("status") or {}).get("conditions") or []
    return any(x["type"] == "PodScheduled" and x["status"] == "False" for x in conds)


def explain(c: httpx.Client, name: str) -> dict[str, Any]:
    r = c.get(f"/debug/minik3s/explain/namespaces/default/pods/{name}")
    return dict(r.json()) if r.status_code == 200 else {}


def events_for(c: httpx.Client, name: str, reason: str) -> list[str]:
    items = c.get("/api/v1/namespaces/default/events",
                  params={"fieldSelector": f"involvedObject.name={name},reason={reason}"}).json()["items"]
    return [e["message"] for e in items]


GPU_NODE_4 = yaml.safe_load((ROOT / "examples" / "gang" / "gpu-node-4.yaml").read_text())


# ---------------------------------------------------------------------------------------------- scenarios
@pytest.mark.parametrize("api", APIS)
def test_gang_of_four_on_three_gpu_nodes_binds_nothing_until_a_fourth_node_joins(cluster, api):
    c = cluster
    watch = PodWatch(str(c.base_url), "default")
    try:
        # the seed: minMember 4 with minResources nvidia.com/gpu: 4 (the Workload API has no minResources)
        res = {"nvidia.com/gpu": 4} if api != "workload" else None
        names = create_gang(c, api, "train", 4, 4, min_resources=res)
        wait_for(lambda: all(unschedulable(c, n) for n in names), timeout=30)
        wait_for(lambda: all(events_for(c, n, "FailedScheduling") for n in names), timeout=30)
        assert watch.ever_bound(names) == [], "a partial gang held GPUs"
        assert all(node_of(c, n) == "" for n in names)
        added = time.monotonic()
        c.post("/api/v1/nodes", json=GPU_NODE_4).raise_for_status()
        wait_for(lambda: all(node_of(c, n) for n in names), timeout=60)
        nodes = sorted(node_of(c, n) for n in names)
        assert nodes == ["gpu-1", "gpu-2", "gpu-3", "gpu-4"]
        wait_for(lambda: all(watch.bound_at(n) for n in names), timeout=10)
        times = [t for t in (watch.bound_at(n) for n in names) if t is not None]
        assert min(times) >= added, "a member was bound before the fourth node existed"
    finally:
        watch.stop()


@pytest.mark.parametrize("api", APIS)
def test_timed_out_gang_releases_every_reservation(cluster, api):
    """Two of three members are assumed and wait at Permit (the third is gated); after the 5 s
    timeout both are rejected and their GPUs go to a plain pod that was waiting for one. Once
    the GPUs are free and the third member is ungated, the gang binds whole."""
    c = cluster
    watch = PodWatch(str(c.base_url), "default")
    try:
        names = create_gang(c, api, "job", 3, 3, gated={2})
        # `minik3s explain` shows the gang: two members assumed, waiting at Permit
        wait_for(lambda: explain(c, names[0]).get("gang", {}).get("assumed") == 2, timeout=30)
        c.post("/api/v1/namespaces/default/pods", json=plain_pod("app-1")).raise_for_status()
        wait_for(lambda: node_of(c, "app-1"), timeout=30)
        # two GPUs are held by the assumed gang members: a second plain pod does not fit yet
        c.post("/api/v1/namespaces/default/pods", json=plain_pod("app-2")).raise_for_status()
        wait_for(lambda: events_for(c, "app-2", "FailedScheduling"), timeout=30)
        assert "Insufficient nvidia.com/gpu" in events_for(c, "app-2", "FailedScheduling")[0]
        plugin = "GangScheduling" if api == "workload" else "Coscheduling"
        timed_out = f"rejected due to timeout after waiting {PERMIT_TIMEOUT}s at plugin {plugin}"

        def rejected() -> list[str]:
            msgs = events_for(c, names[0], "FailedScheduling") + events_for(c, names[1], "FailedScheduling")
            return [m for m in msgs if timed_out in m or "rejection in Unreserve" in m]

        wait_for(rejected, timeout=30)
        # released: the waiting plain pod gets a GPU
        wait_for(lambda: node_of(c, "app-2"), timeout=30)
        assert watch.ever_bound(names) == []
        # free the GPUs and ungate the last member: the whole gang binds together
        for app in ("app-1", "app-2"):
            c.delete(f"/api/v1/namespaces/default/pods/{app}", params={"gracePeriodSeconds": "0"})
        wait_for(lambda: c.get("/api/v1/namespaces/default/pods/app-1").status_code == 404
                 and c.get("/api/v1/namespaces/default/pods/app-2").status_code == 404, timeout=30)
        ungated = time.monotonic()
        c.patch(f"/api/v1/namespaces/default/pods/{names[2]}", json={"spec": {"schedulingGates": None}},
                headers={"Content-Type": "application/merge-patch+json"}).raise_for_status()
        wait_for(lambda: all(node_of(c, n) for n in names), timeout=60)
        assert len({node_of(c, n) for n in names}) == 3
        wait_for(lambda: all(watch.bound_at(n) for n in names), timeout=10)
        assert min(t for t in (watch.bound_at(n) for n in names) if t is not None) >= ungated
    finally:
        watch.stop()


@pytest.mark.parametrize("api", APIS)
def test_two_competing_gangs_one_completes_the_other_holds_nothing(cluster, api):
    """Gangs of two and two on three GPUs: together they exceed the cluster; one binds whole,
    the other never binds a single member (no deadlock, no partial hold)."""
    c = cluster
    watch = PodWatch(str(c.base_url), "default")
    try:
        a = create_gang(c, api, "a", 2, 2)
        b = create_gang(c, api, "b", 2, 2)
        wait_for(lambda: all(node_of(c, n) for n in a) or all(node_of(c, n) for n in b), timeout=60)
        winner, loser = (a, b) if all(node_of(c, n) for n in a) else (b, a)
        wait_for(lambda: all(unschedulable(c, n) for n in loser), timeout=30)
        assert [node_of(c, n) for n in loser] == ["", ""]
        assert watch.ever_bound(loser) == []
        assert len({node_of(c, n) for n in winner}) == 2
    finally:
        watch.stop()


@pytest.mark.parametrize("api", APIS)
def test_incomplete_gang_does_not_block_unrelated_pods(cluster, api):
    c = cluster
    watch = PodWatch(str(c.base_url), "default")
    try:
        names = create_gang(c, api, "partial", 2, 4)  # two of four members exist
        for i in range(3):
            c.post("/api/v1/namespaces/default/pods", json=plain_pod(f"other-{i}")).raise_for_status()
        wait_for(lambda: all(node_of(c, f"other-{i}") for i in range(3)), timeout=30)
        assert watch.ever_bound(names) == []
    finally:
        watch.stop()


def test_volcano_scheduler_name_gets_the_gang_profile(minik3s_server_factory):
    """Volcano's pods say `schedulerName: volcano`; without a scheduler configuration minik3s
    serves that profile too, with the same gang plugins."""
    srv = minik3s_server_factory("--disable", "descheduler", nodes=str(ROOT / "examples" / "gang" / "fleet.yaml"))
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        wait_for(lambda: len(c.get("/api/v1/nodes").json()["items"]) == 3)
        c.post("/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups", json={
            "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "vc"},
            "spec": {"minMember": 3}}).raise_for_status()  # queue defaults to the bootstrapped `default`
        for i in range(3):
            body = gang_pod("volcano", "vc", f"vc-{i}")
            body["spec"]["schedulerName"] = "volcano"
            c.post("/api/v1/namespaces/default/pods", json=body).raise_for_status()
        wait_for(lambda: all(node_of(c, f"vc-{i}") for i in range(3)), timeout=60)
        pg = c.get("/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/vc").json()
        assert pg["spec"]["queue"] == "default"
        wait_for(lambda: (c.get("/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/vc").json()
                          .get("status") or {}).get("phase") == "Running", timeout=30)


# ---------------------------------------------------------------------------------------------- API
@pytest.fixture(scope="module")
def api_http(minik3s_api: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


def _causes(r: httpx.Response) -> list[tuple[str, str]]:
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["kind"] == "Status" and body["reason"] == "Invalid"
    return [(x["field"], x["message"]) for x in body["details"]["causes"]]


@pytest.mark.parametrize(("path", "body", "field", "fragment"), [
    pytest.param("scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
                 {"kind": "PodGroup", "apiVersion": "scheduling.x-k8s.io/v1alpha1", "metadata": {"name": "bad"},
                  "spec": {"minMember": 0}},
                 "spec.minMember", "should be greater than or equal to 1", id="x-k8s-min-member-zero"),
    pytest.param("scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
                 {"kind": "PodGroup", "apiVersion": "scheduling.x-k8s.io/v1alpha1", "metadata": {"name": "bad"},
                  "spec": {"minMember": 2, "minResources": {"nvidia.com/gpu": "lots"}}},
                 "spec.minResources.nvidia.com/gpu", "should match", id="x-k8s-min-resources-not-a-quantity"),
    pytest.param("scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
                 {"kind": "PodGroup", "apiVersion": "scheduling.volcano.sh/v1beta1", "metadata": {"name": "bad"},
                  "spec": {"minMember": "four"}},
                 "spec.minMember", "must be of type integer", id="volcano-min-member-not-an-integer"),
    pytest.param("scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
                 {"kind": "PodGroup", "apiVersion": "scheduling.volcano.sh/v1beta1", "metadata": {"name": "bad"},
                  "spec": {"minMember": 1, "networkTopology": {"mode": "strict"}}},
                 "spec.networkTopology.mode", "Unsupported value", id="volcano-network-topology-mode"),
    pytest.param("scheduling.k8s.io/v1alpha1/namespaces/default/workloads",
                 {"kind": "Workload", "apiVersion": "scheduling.k8s.io/v1alpha1", "metadata": {"name": "bad"},
                  "spec": {"podGroups": [{"name": "w", "policy": {"gang": {"minCount": 0}}}]}},
                 "spec.podGroups[0].policy.gang.minCount", "must be greater than zero", id="workload-min-count-zero"),
    pytest.param("scheduling.k8s.io/v1alpha1/namespaces/default/workloads",
                 {"kind": "Workload", "apiVersion": "scheduling.k8s.io/v1alpha1", "metadata": {"name": "bad"},
                  "spec": {"podGroups": [{"name": "w", "policy": {"basic": {}, "gang": {"minCount": 2}}}]}},
                 "spec.podGroups[0].policy", "exactly one of", id="workload-two-policies"),
    pytest.param("scheduling.k8s.io/v1alpha1/namespaces/default/workloads",
                 {"kind": "Workload", "apiVersion": "scheduling.k8s.io/v1alpha1", "metadata": {"name": "bad"},
                  "spec": {"podGroups": [{"name": "w", "policy": {"basic": {}}},
                                         {"name": "w", "policy": {"basic": {}}}]}},
                 "spec.podGroups[1].name", "Duplicate value", id="workload-duplicate-pod-group"),
    pytest.param("scheduling.k8s.io/v1alpha1/namespaces/default/workloads",
                 {"kind": "Workload", "apiVersion": "scheduling.k8s.io/v1alpha1", "metadata": {"name": "bad"},
                  "spec": {"podGroups": [{"name": f"g{i}", "policy": {"basic": {}}} for i in range(9)]}},
                 "spec.podGroups", "must have at most 8 items", id="workload-too-many-pod-groups"),
    pytest.param("v1/namespaces/default/pods",
                 {"metadata": {"name": "bad"}, "spec": {"containers": [{"name": "c", "image": "x"}],
                                                        "workloadRef": {"name": "train", "podGroup": "Workers_1"}}},
                 "spec.workloadRef.podGroup", "RFC 1123", id="pod-workload-ref-bad-pod-group"),
    pytest.param("v1/namespaces/default/pods",
                 {"metadata": {"name": "bad"}, "spec": {"containers": [{"name": "c", "image": "x"}],
                                                        "workloadRef": {"podGroup": "w"}}},
                 "spec.workloadRef.name", "Required value", id="pod-workload-ref-without-name"),
])
def test_bad_gang_objects_are_rejected_with_field_paths(api_http, path, body, field, fragment):
    prefix = "/api/" if path.startswith("v1/") else "/apis/"
    causes = _causes(api_http.post(prefix + path, json=body))
    assert any(f == field and fragment in m for f, m in causes), causes


def test_workload_spec_and_pod_workload_ref_are_immutable(api_http):
    c = api_http
    wl = {"kind": "Workload", "apiVersion": "scheduling.k8s.io/v1alpha1", "metadata": {"name": "imm"},
          "spec": {"podGroups": [{"name": "w", "policy": {"gang": {"minCount": 2}}}]}}
    created = c.post("/apis/scheduling.k8s.io/v1alpha1/namespaces/default/workloads", json=wl)
    assert created.status_code == 201, created.text
    obj = created.json()
    obj["spec"]["podGroups"][0]["policy"]["gang"]["minCount"] = 3
    causes = _causes(c.put("/apis/scheduling.k8s.io/v1alpha1/namespaces/default/workloads/imm", json=obj))
    assert ("spec.podGroups", "field is immutable") in [(f, m.rsplit(": ", 1)[-1]) for f, m in causes]
    p = c.post("/api/v1/namespaces/default/pods", json={
        "metadata": {"name": "member"}, "spec": {"containers": [{"name": "c", "image": "x"}],
                                                 "workloadRef": {"name": "imm", "podGroup": "w"}}})
    assert p.status_code == 201, p.text
    po = p.json()
    po["spec"]["workloadRef"]["podGroup"] = "other"
    causes = _causes(c.put("/api/v1/namespaces/default/pods/member", json=po))
    assert [f for f, _ in causes] == ["spec.workloadRef"]
    assert causes[0][1].endswith("field is immutable")


def test_gang_apis_are_discoverable_with_tables(api_http):
    c = api_http
    groups = {g["name"]: g for g in c.get("/apis").json()["groups"]}
    assert groups["scheduling.k8s.io"]["preferredVersion"]["version"] == "v1"
    assert {v["version"] for v in groups["scheduling.k8s.io"]["versions"]} == {"v1", "v1alpha1"}
    assert groups["scheduling.volcano.sh"]["preferredVersion"]["version"] == "v1beta1"
    assert groups["scheduling.x-k8s.io"]["preferredVersion"]["version"] == "v1alpha1"
    res = {r["name"]: r for r in c.get("/apis/scheduling.x-k8s.io/v1alpha1").json()["resources"]}
    assert "podgroups/status" in res and res["podgroups"]["shortNames"] == ["pg", "pgs"]
    vres = {r["name"]: r for r in c.get("/apis/scheduling.volcano.sh/v1beta1").json()["resources"]}
    assert vres["queues"]["namespaced"] is False and "podgroups/status" not in vres  # as Volcano's CRD
    c.post("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups", json={
        "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "tbl"},
        "spec": {"minMember": 3}}).raise_for_status()
    table = c.get("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
                  headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert [col["name"] for col in table["columnDefinitions"]] == [
        "Name", "Phase", "MinMember", "Running", "Succeeded", "Failed", "Age"]
    assert table["rows"][0]["cells"][:3] == ["tbl", None, 3]


# ---------------------------------------------------------------------------------------------- kubectl
KUBECTL = ROOT / ".cache" / "kubectl" / "kubectl"


@pytest.mark.usefixtures("kubectl_bin")  # fails, not skips, without kubectl
def test_kubectl_applies_the_examples_and_prints_upstream_columns(minik3s_api: ServerProcess, tmp_path: Path):
    import subprocess

    def kubectl(*args: str) -> str:
        out = subprocess.run([str(KUBECTL), "--kubeconfig", str(minik3s_api.kubeconfig), "--cache-dir",
                              str(tmp_path / "cache"), *args], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return out.stdout

    ns = "kubectl-gang"
    kubectl("create", "namespace", ns)
    for f in ("volcano-podgroup.yaml", "coscheduling-podgroup.yaml", "workload.yaml"):
        if f == "workload.yaml":  # the pods' names repeat across the examples: one namespace each
            kubectl("create", "namespace", f"{ns}-wl")
        kubectl("apply", "-n", f"{ns}-wl" if f == "workload.yaml" else ns, "-f", str(ROOT / "examples" / "gang" / f))
    header = kubectl("get", "podgroups.scheduling.volcano.sh", "-n", ns, "-o", "wide").splitlines()[0].split()
    assert header == ["NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE", "QUEUE"]
    header = kubectl("get", "podgroups.scheduling.x-k8s.io", "-n", ns).splitlines()[0].split()
    assert header == ["NAME", "PHASE", "MINMEMBER", "RUNNING", "SUCCEEDED", "FAILED", "AGE"]
    rows = kubectl("get", "workloads", "-n", f"{ns}-wl").splitlines()
    assert rows[0].split() == ["NAME", "AGE"] and rows[1].split()[0] == "train"
    assert "gpu-queue" in kubectl("get", "queues")
