"""StatefulSet, DaemonSet, ReplicationController and CronJob controllers on a real server
(every component, 6 simulated nodes), driven over HTTP and with the real kubectl 1.33."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik3s.testing.server import ServerProcess
from minik3s.testing.wait import wait_for


@pytest.fixture(scope="module")
def http(minik3s_cluster: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=minik3s_cluster.url, timeout=30) as c:
        wait_for(lambda: len(c.get("/api/v1/nodes").json()["items"]) == 6)
        yield c


@pytest.fixture
def ns(http: httpx.Client) -> str:
    name = "wl-" + uuid.uuid4().hex[:8]
    http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    return name


def template(app: str, image: str = "nginx:1") -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": image}]}}


def running_ready(p: dict[str, Any]) -> bool:
    st = p.get("status") or {}
    return st.get("phase") == "Running" and not p["metadata"].get("deletionTimestamp") and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or [])


def pods(http: httpx.Client, ns: str, selector: str) -> list[dict[str, Any]]:
    return http.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": selector}).json()["items"]


def test_statefulset_ordered_start_reverse_scale_down_and_partition(http, ns):
    body = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
            "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                     "template": template("db"),
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                         "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
    r = http.post(f"/apis/apps/v1/namespaces/{ns}/statefulsets", json=body)
    assert r.status_code == 201, r.text
    seen: list[str] = []

    def ready(n: int) -> Any:
        for p in sorted(pods(http, ns, "app=db"), key=lambda p: p["metadata"]["creationTimestamp"]):
            if p["metadata"]["name"] not in seen:
                seen.append(p["metadata"]["name"])
        st = http.get(f"/apis/apps/v1/namespaces/{ns}/statefulsets/db").json().get("status") or {}
        return st if st.get("readyReplicas") == n and st.get("replicas") == n else None

    st = wait_for(lambda: ready(3), timeout=60)
    assert seen == ["db-0", "db-1", "db-2"]
    assert st["currentRevision"] == st["updateRevision"]
    claims = http.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims").json()["items"]
    assert sorted(c["metadata"]["name"] for c in claims) == ["data-db-0", "data-db-1", "data-db-2"]

    # partition 2: only db-2 moves to the new template
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}
    r = http.patch(f"/apis/apps/v1/namespaces/{ns}/statefulsets/db", json=patch,
                   headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert r.status_code == 200, r.text

    def partitioned() -> Any:
        images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"]
                  for p in pods(http, ns, "app=db") if running_ready(p)}
        return images == {"db-0": "nginx:1", "db-1": "nginx:1", "db-2": "nginx:2"}

    wait_for(partitioned, timeout=60)
    st = http.get(f"/apis/apps/v1/namespaces/{ns}/statefulsets/db").json()["status"]
    assert st["updatedReplicas"] == 1 and st["currentRevision"] != st["updateRevision"]

    # scale down: db-2 goes before db-1
    r = http.patch(f"/apis/apps/v1/namespaces/{ns}/statefulsets/db/scale", json={"spec": {"replicas": 1}},
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    snapshots: list[set[str]] = []

    def down() -> bool:
        names = {p["metadata"]["name"] for p in pods(http, ns, "app=db")}
        snapshots.append(names)
        return names == {"db-0"}

    wait_for(down, timeout=60, interval=0.05)
    assert {"db-0", "db-2"} not in snapshots  # db-1 never went first


def _ds_pods_by_node(http: httpx.Client, ns: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for p in pods(http, ns, "app=agent"):
        if not p["metadata"].get("deletionTimestamp"):
            req = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            out.setdefault(req["nodeSelectorTerms"][0]["matchFields"][0]["values"][0], []).append(p)
    return out


def test_daemonset_per_node_taints_new_node_and_kubectl_drain(http, ns, kubectl_bin: Path,
                                                              minik3s_cluster: ServerProcess, tmp_path: Path):
    nodes = sorted(n["metadata"]["name"] for n in http.get("/api/v1/nodes").json()["items"])
    tainted = nodes[-1]
    r = http.patch(f"/api/v1/nodes/{tainted}", json={"spec": {"taints": [
        {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}},
        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    body = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template("agent")}}
    r = http.post(f"/apis/apps/v1/namespaces/{ns}/daemonsets", json=body)
    assert r.status_code == 201, r.text

    def status(**want: int) -> Any:
        st = http.get(f"/apis/apps/v1/namespaces/{ns}/daemonsets/agent").json().get("status") or {}
        return st if all(st.get(k) == v for k, v in want.items()) else None

    wait_for(lambda: status(desiredNumberScheduled=5, numberReady=5, numberAvailable=5), timeout=60)
    by_node = _ds_pods_by_node(http, ns)
    assert sorted(by_node) == nodes[:-1] and all(len(v) == 1 for v in by_node.values())
    assert all(running_ready(p) and p["spec"]["nodeName"] == n for n, ps in by_node.items() for p in ps)

    # a node that joins gets its daemon pod (pinned by matchFields; no kubelet runs it here)
    extra = "joined-" + uuid.uuid4().hex[:6]
    r = http.post("/api/v1/nodes", json={"metadata": {"name": extra, "labels": {"kubernetes.io/hostname": extra}}})
    assert r.status_code == 201, r.text
    try:
        wait_for(lambda: status(desiredNumberScheduled=6) and extra in _ds_pods_by_node(http, ns), timeout=60)
    finally:
        http.delete(f"/api/v1/nodes/{extra}")

    # kubectl drain refuses daemon pods without --ignore-daemonsets, then leaves them in place
    cache = tmp_path / "kcache"
    base = [str(kubectl_bin), "--kubeconfig", str(minik3s_cluster.kubeconfig), "--cache-dir", str(cache)]
    node = nodes[0]
    ds_pod = by_node[node][0]["metadata"]["name"]
    try:
        r = subprocess.run([*base, "drain", node, "--timeout=60s"], capture_output=True, text=True, timeout=90)
        assert r.returncode != 0
        assert f"cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): {ns}/{ds_pod}" in r.stderr
        r = subprocess.run([*base, "drain", node, "--ignore-daemonsets", "--force", "--timeout=60s"],
                           capture_output=True, text=True, timeout=90)
        assert r.returncode == 0, r.stderr
        assert r.stdout.rstrip().endswith(f"node/{node} drained")
        assert f"{ns}/{ds_pod}" in next(line for line in r.stderr.splitlines()
                                        if line.startswith("Warning: ignoring DaemonSet-managed Pods: "))
        # the cordoned node keeps its daemon pod: daemon pods tolerate unschedulable
        p = http.get(f"/api/v1/namespaces/{ns}/pods/{ds_pod}").json()
        assert running_ready(p)
        assert status(desiredNumberScheduled=5, numberReady=5)
    finally:
        subprocess.run([*base, "uncordon", node], capture_output=True, text=True, timeout=60)


def test_replicationcontroller_keeps_replicas(http, ns):
    body = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
            "spec": {"replicas": 2, "template": template("rc")}}
    r = http.post(f"/api/v1/namespaces/{ns}/replicationcontrollers", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["selector"] == {"app": "rc"}
    wait_for(lambda: (http.get(f"/api/v1/namespaces/{ns}/replicationcontrollers/rc").json().get("status") or {})
             .get("readyReplicas") == 2, timeout=60)
    victim = next(p for p in pods(http, ns, "app=rc") if running_ready(p))["metadata"]["name"]
    http.delete(f"/api/v1/namespaces/{ns}/pods/{victim}")
    wait_for(lambda: len(live := [p for p in pods(http, ns, "app=rc") if running_ready(p)]) == 2
             and victim not in {p["metadata"]["name"] for p in live}, timeout=60)


def test_cronjob_starts_a_due_job(http, ns):
    body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick"},
            "spec": {"schedule": "* * * * *", "startingDeadlineSeconds": 300, "jobTemplate": {"spec": {
                "template": {"spec": {"restartPolicy": "Never",
                                      "containers": [{"name": "c", "image": "busybox"}]}}}}}}
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/cronjobs", json=body)
    assert r.status_code == 201, r.text
    cj = r.json()
    # as if the last run was a few minutes ago: the latest minute is due at once (within the deadline)
    last = (datetime.now(UTC) - timedelta(minutes=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    cj["status"] = {"lastScheduleTime": last}
    r = http.put(f"/apis/batch/v1/namespaces/{ns}/cronjobs/tick/status", json=cj)
    assert r.status_code == 200, r.text
    jobs = wait_for(lambda: http.get(f"/apis/batch/v1/namespaces/{ns}/jobs").json()["items"], timeout=30)
    job = jobs[0]
    scheduled = job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
    t = datetime.fromisoformat(scheduled.replace("Z", "+00:00"))
    assert t.second == 0 and job["metadata"]["name"] == f"tick-{int(t.timestamp()) // 60}"
    st = wait_for(lambda: http.get(f"/apis/batch/v1/namespaces/{ns}/cronjobs/tick").json()["status"]
                  .get("lastScheduleTime") != last and
                  http.get(f"/apis/batch/v1/namespaces/{ns}/cronjobs/tick").json()["status"], timeout=30)
    assert st["lastScheduleTime"] == scheduled
    assert job["metadata"]["name"] in {a["name"] for a in st.get("active", [])} or st.get("lastSuccessfulTime")
