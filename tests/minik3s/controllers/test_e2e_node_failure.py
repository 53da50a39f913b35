"""End to end on a real `minik3s server` process with simulated kubelets: a failed node's
pods move to the other nodes after their toleration runs out.

Every component is the real one: the node lifecycle controller marks the node Unknown and
taints it, the taint manager evicts the pods once their 1 s toleration of the NoExecute
`unreachable` taint runs out, the ReplicaSet controller replaces them and the scheduler places
the replacements, which the NoSchedule `unreachable` taint keeps off the failed node.
"""

from __future__ import annotations

import httpx
import pytest

from minik3s.testing.wait import wait_for

pytestmark = pytest.mark.slow

DEPLOY = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
    "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                 "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                  "effect": "NoExecute", "tolerationSeconds": 1}],
                 "containers": [{"name": "c", "image": "nginx"}]}}},
}


def test_failed_node_pods_move_elsewhere(minik3s_server_factory):
    # a short grace period (the simulated kubelets then renew their Leases every grace / 5) checked
    # every second, so the failure is noticed in seconds rather than upstream's 50 s + 5 s
    srv = minik3s_server_factory("--node-monitor-grace-period", "5", "--node-monitor-period", "1s", nodes=3)
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        assert c.post("/apis/apps/v1/namespaces/default/deployments", json=DEPLOY).status_code == 201

        def available():
            st = c.get("/apis/apps/v1/namespaces/default/deployments/web").json().get("status") or {}
            return st.get("availableReplicas") == 4 and st.get("updatedReplicas") == 4

        wait_for(available, timeout=60)
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

        wait_for(unknown, timeout=60)

        def moved():
            live = [p for p in c.get("/api/v1/namespaces/default/pods").json()["items"]
                    if not p["metadata"].get("deletionTimestamp")]
            ready = [p for p in live if any(x["type"] == "Ready" and x["status"] == "True"
                                            for x in (p.get("status") or {}).get("conditions") or [])]
            return len(ready) == 4 and all(p["spec"].get("nodeName") != victim for p in ready)

        wait_for(moved, timeout=60)
        evicted = [p for p in c.get("/api/v1/namespaces/default/pods").json()["items"]
                   if p["spec"].get("nodeName") == victim]
        assert evicted
        for p in evicted:  # left Terminating on the frozen node, marked by the taint manager
            assert p["metadata"].get("deletionTimestamp")
            assert any(x["type"] == "DisruptionTarget" and x["reason"] == "DeletionByTaintManager"
                       for x in p["status"]["conditions"])
