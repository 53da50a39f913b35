"""End to end on a real `minik3s server` process with simulated kubelets: a failed node's
pods move to the other nodes after their toleration runs out.

The scheduler is replaced by a tiny binder in the test (bind each pending pod to an untainted
node), so this exercises the controllers + kubelet_sim + API server, not scheduling.
"""

from __future__ import annotations

import time

import httpx
import pytest

pytestmark = pytest.mark.slow

DEPLOY = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
    "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                 "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                  "effect": "NoExecute", "tolerationSeconds": 1}],
                 "containers": [{"name": "c", "image": "nginx"}]}}},
}


def bind_pending(c: httpx.Client) -> None:
    nodes = c.get("/api/v1/nodes").json()["items"]
    usable = [n["metadata"]["name"] for n in nodes if not n["spec"].get("taints")
              and n["metadata"].get("annotations", {}).get("sim.minik3s.io/failed") != "true"]
    if not usable:
        return
    pods = c.get("/api/v1/namespaces/default/pods", params={"fieldSelector": "spec.nodeName="}).json()["items"]
    for i, p in enumerate(pods):
        if p["metadata"].get("deletionTimestamp"):
            continue
        c.post(f"/api/v1/namespaces/default/pods/{p['metadata']['name']}/binding", json={
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": p["metadata"]["name"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": usable[i % len(usable)]}})


def wait(pred, c: httpx.Client, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        bind_pending(c)
        last = pred()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}; last={last!r}")


def test_failed_node_pods_move_elsewhere(minik3s_server_factory):
    # the grace period must exceed the simulated kubelets' lease renewal interval (10 s, as upstream)
    srv = minik3s_server_factory("--disable", "scheduler", "--node-monitor-grace-period", "15", nodes=3)
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        assert c.post("/apis/apps/v1/namespaces/default/deployments", json=DEPLOY).status_code == 201

        def available():
            st = c.get("/apis/apps/v1/namespaces/default/deployments/web").json().get("status") or {}
            return st.get("availableReplicas") == 4 and st.get("updatedReplicas") == 4

        wait(available, c, 60, "4 available")
        pods = c.get("/api/v1/namespaces/default/pods").json()["items"]
        victim = pods[0]["spec"]["nodeName"]
        r = c.patch(f"/api/v1/nodes/{victim}", json={"metadata": {"annotations": {"sim.minik3s.io/failed": "true"}}},
                    headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 200

        def unknown():
            n = c.get(f"/api/v1/nodes/{victim}").json()
            ready = next(x for x in n["status"]["conditions"] if x["type"] == "Ready")
            taints = {t["key"] for t in n["spec"].get("taints") or []}
            return ready["status"] == "Unknown" and "node.kubernetes.io/unreachable" in taints

        wait(unknown, c, 60, "node unreachable")

        def moved():
            live = [p for p in c.get("/api/v1/namespaces/default/pods").json()["items"]
                    if not p["metadata"].get("deletionTimestamp")]
            ready = [p for p in live if any(x["type"] == "Ready" and x["status"] == "True"
                                            for x in (p.get("status") or {}).get("conditions") or [])]
            return len(ready) == 4 and all(p["spec"].get("nodeName") != victim for p in ready)

        wait(moved, c, 60, "pods moved off the failed node")
        evicted = [p for p in c.get("/api/v1/namespaces/default/pods").json()["items"]
                   if p["spec"].get("nodeName") == victim]
        assert evicted
        for p in evicted:  # left Terminating on the frozen node, marked by the taint manager
            assert p["metadata"].get("deletionTimestamp")
            assert any(x["type"] == "DisruptionTarget" and x["reason"] == "DeletionByTaintManager"
                       for x in p["status"]["conditions"])
