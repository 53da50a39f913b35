"""Controllers with the real scheduler and simulated kubelets: Deployments, ReplicaSets, PDBs,
node failure, garbage collection. One module-scoped cluster (6 nodes over 3 zones)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections import Counter

import httpx

from minik3s.testing.wait import wait_for

MERGE = {"Content-Type": "application/merge-patch+json"}


def deployment(name: str, replicas: int, *, spread: bool = False, image: str = "nginx:1.25",
               tolerations: list | None = None, strategy: dict | None = None) -> dict:
    spec: dict = {"containers": [{"name": "web", "image": image,
                                  "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}
    if spread:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": name}}}]
    if tolerations:
        spec["tolerations"] = tolerations
    d = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
         "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                  "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}
    if strategy:
        d["spec"]["strategy"] = strategy
    return d


def pods(http, ns: str, selector: str) -> list[dict]:
    items = http.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": selector}).json()["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def ready(p: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in p.get("status", {}).get("conditions") or [])


def zones(http) -> dict[str, str]:
    return {n["metadata"]["name"]: n["metadata"]["labels"]["topology.kubernetes.io/zone"]
            for n in http.get("/api/v1/nodes").json()["items"]}


def deploy_available(http, ns: str, name: str, replicas: int) -> bool:
    d = http.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}").json()
    st = d.get("status") or {}
    return (st.get("availableReplicas") == replicas and st.get("updatedReplicas") == replicas
            and st.get("replicas") == replicas and st.get("observedGeneration") == d["metadata"]["generation"])


def test_deployment_spread_9_replicas_lands_3_3_3(http, ns):
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("web", 9, spread=True)).raise_for_status()
    wait_for(lambda: deploy_available(http, ns, "web", 9))
    z = zones(http)
    per_zone = Counter(z[p["spec"]["nodeName"]] for p in pods(http, ns, "app=web"))
    events = [(e["reason"], e["message"]) for e in http.get(f"/api/v1/namespaces/{ns}/events").json()["items"]]
    assert sorted(per_zone.values()) == [3, 3, 3], events
    d = http.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json()
    conds = {c["type"]: c for c in d["status"]["conditions"]}
    assert conds["Available"]["status"] == "True" and conds["Available"]["reason"] == "MinimumReplicasAvailable"
    assert conds["Progressing"]["reason"] == "NewReplicaSetAvailable"
    rs = http.get(f"/apis/apps/v1/namespaces/{ns}/replicasets").json()["items"]
    assert len(rs) == 1 and rs[0]["metadata"]["labels"]["pod-template-hash"]
    assert rs[0]["metadata"]["ownerReferences"][0]["kind"] == "Deployment"


def test_scale_3_to_9_through_scale_subresource_and_pod_replacement(http, ns):
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("sc", 3, spread=True)).raise_for_status()
    wait_for(lambda: deploy_available(http, ns, "sc", 3))
    r = http.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/sc/scale", content=b'{"spec":{"replicas":9}}',
                   headers=MERGE)
    assert r.status_code == 200, r.text
    wait_for(lambda: deploy_available(http, ns, "sc", 9))
    z = zones(http)
    assert sorted(Counter(z[p["spec"]["nodeName"]] for p in pods(http, ns, "app=sc")).values()) == [3, 3, 3]
    victim = pods(http, ns, "app=sc")[0]["metadata"]["name"]
    http.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{victim}", json={"gracePeriodSeconds": 0})
    wait_for(lambda: victim not in {p["metadata"]["name"] for p in pods(http, ns, "app=sc")}
             and len([p for p in pods(http, ns, "app=sc") if ready(p)]) == 9)


def test_rolling_update_never_drops_below_min_available(http, ns):
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments",
              json=deployment("ru", 4, strategy=strategy)).raise_for_status()
    wait_for(lambda: deploy_available(http, ns, "ru", 4))
    listed = http.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": "app=ru"}).json()
    live = {p["metadata"]["name"]: p for p in listed["items"] if not p["metadata"].get("deletionTimestamp")}
    old_pods = set(live)
    patch = b'{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}}}}'
    r = http.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/ru", content=patch,
                   headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert r.status_code == 200, r.text
    # Every pod change from the list on, through a watch: each committed state of the rollout is
    # seen (a poll could miss a short dip in ready pods).
    min_ready = sum(1 for p in live.values() if ready(p))
    params = {"watch": "true", "resourceVersion": listed["metadata"]["resourceVersion"],
              "labelSelector": "app=ru", "timeoutSeconds": "90"}
    with http.stream("GET", f"/api/v1/namespaces/{ns}/pods", params=params, timeout=httpx.Timeout(100)) as w:
        assert w.status_code == 200
        for line in w.iter_lines():
            if not line.strip():
                continue
            ev = json.loads(line)
            obj = ev["object"]
            if ev["type"] == "DELETED" or obj["metadata"].get("deletionTimestamp"):
                live.pop(obj["metadata"]["name"], None)
            else:
                live[obj["metadata"]["name"]] = obj
            n_ready = sum(1 for p in live.values() if ready(p))
            min_ready = min(min_ready, n_ready)
            if n_ready == 4 and not old_pods & live.keys():
                break  # every old pod replaced by a ready new one: the pods' part of the rollout is over
        else:
            raise AssertionError("rollout did not finish")
    wait_for(lambda: deploy_available(http, ns, "ru", 4))
    assert min_ready >= 3  # replicas - maxUnavailable
    images = {p["spec"]["containers"][0]["image"] for p in pods(http, ns, "app=ru")}
    assert images == {"nginx:1.26"}
    rs = http.get(f"/apis/apps/v1/namespaces/{ns}/replicasets").json()["items"]
    assert sorted(r["spec"]["replicas"] for r in rs) == [0, 4]


def test_pdb_min_available_blocks_the_breaking_eviction(http, ns):
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("pdb", 3)).raise_for_status()
    wait_for(lambda: deploy_available(http, ns, "pdb", 3))
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web-pdb"},
           "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "pdb"}}}}
    http.post(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", json=pdb).raise_for_status()
    wait_for(lambda: (http.get(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/web-pdb").json()
                      .get("status", {}).get("disruptionsAllowed")) == 1)
    names = [p["metadata"]["name"] for p in pods(http, ns, "app=pdb")]

    def evict(name: str) -> httpx.Response:
        return http.post(f"/api/v1/namespaces/{ns}/pods/{name}/eviction",
                         json={"apiVersion": "policy/v1", "kind": "Eviction",
                               "metadata": {"name": name, "namespace": ns}})

    r = evict(names[0])
    assert r.status_code == 201, r.text
    r = evict(names[1])
    assert r.status_code == 429, r.text
    st = r.json()
    assert st["reason"] == "TooManyRequests"
    assert st["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert st["details"]["causes"][0]["reason"] == "DisruptionBudget"
    assert "Retry-After" not in r.headers
    # once the replacement is Ready the budget allows one more
    wait_for(lambda: (http.get(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/web-pdb").json()
                      .get("status", {}).get("disruptionsAllowed")) == 1)
    assert evict(names[1]).status_code == 201


def test_foreground_and_orphan_deletion(http, ns):
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("fg", 2)).raise_for_status()
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("or", 2)).raise_for_status()
    wait_for(lambda: deploy_available(http, ns, "fg", 2) and deploy_available(http, ns, "or", 2))
    r = http.request("DELETE", f"/apis/apps/v1/namespaces/{ns}/deployments/fg",
                     json={"propagationPolicy": "Foreground"})
    assert r.status_code == 200
    body = r.json()
    assert "foregroundDeletion" in body["metadata"]["finalizers"] and body["metadata"]["deletionTimestamp"]
    wait_for(lambda: http.get(f"/apis/apps/v1/namespaces/{ns}/deployments/fg").status_code == 404)
    assert not pods(http, ns, "app=fg")
    assert not [r for r in http.get(f"/apis/apps/v1/namespaces/{ns}/replicasets").json()["items"]
                if r["metadata"]["name"].startswith("fg-")]
    r = http.request("DELETE", f"/apis/apps/v1/namespaces/{ns}/deployments/or", json={"propagationPolicy": "Orphan"})
    assert r.status_code == 200
    wait_for(lambda: http.get(f"/apis/apps/v1/namespaces/{ns}/deployments/or").status_code == 404)
    rs = wait_for(lambda: [r for r in http.get(f"/apis/apps/v1/namespaces/{ns}/replicasets").json()["items"]
                           if r["metadata"]["name"].startswith("or-") and not r["metadata"].get("ownerReferences")])
    assert len(rs) == 1 and len(pods(http, ns, "app=or")) == 2


def test_failed_node_moves_pods_after_their_toleration(minik3s_cluster, http, ns):
    tol = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
            "tolerationSeconds": 2},
           {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
            "tolerationSeconds": 2}]
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("nf", 6, tolerations=tol)
              ).raise_for_status()
    wait_for(lambda: deploy_available(http, ns, "nf", 6))
    victim_node = pods(http, ns, "app=nf")[0]["spec"]["nodeName"]
    out = subprocess.run([sys.executable, "-m", "minik3s", "node", "fail", victim_node, "--server",
                          minik3s_cluster.url], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    try:
        node = wait_for(lambda: (n := http.get(f"/api/v1/nodes/{victim_node}").json())
                        and any(t["key"] == "node.kubernetes.io/unreachable" for t in n["spec"].get("taints") or [])
                        and n, timeout=60)
        ready_cond = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
        assert ready_cond["status"] == "Unknown"
        # the taint manager evicts the pods after 2 s; the ReplicaSet recreates them elsewhere
        wait_for(lambda: deploy_available(http, ns, "nf", 6)
                 and all(p["spec"].get("nodeName") not in (None, victim_node) for p in pods(http, ns, "app=nf")),
                 timeout=90)
    finally:
        subprocess.run([sys.executable, "-m", "minik3s", "node", "recover", victim_node, "--server",
                        minik3s_cluster.url], capture_output=True, text=True, timeout=30)
    wait_for(lambda: not any(t["key"].startswith("node.kubernetes.io/unreachable")
                             for t in http.get(f"/api/v1/nodes/{victim_node}").json()["spec"].get("taints") or []),
             timeout=60)


def test_namespace_deletion_removes_content_then_namespace(http):
    name = "del-" + uuid.uuid4().hex[:6]
    http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    http.post(f"/apis/apps/v1/namespaces/{name}/deployments", json=deployment("gone", 2)).raise_for_status()
    http.post(f"/api/v1/namespaces/{name}/configmaps", json={"metadata": {"name": "cm"}}).raise_for_status()
    wait_for(lambda: deploy_available(http, name, "gone", 2))
    r = http.delete(f"/api/v1/namespaces/{name}")
    assert r.status_code == 200
    assert r.json()["status"]["phase"] == "Terminating"
    r = http.post(f"/api/v1/namespaces/{name}/configmaps", json={"metadata": {"name": "late"}})
    assert r.status_code == 403 and "is being terminated" in r.json()["message"]
    wait_for(lambda: http.get(f"/api/v1/namespaces/{name}").status_code == 404, timeout=60)
    assert http.get(f"/api/v1/namespaces/{name}/pods").json()["items"] == []
    assert http.get(f"/api/v1/namespaces/{name}/configmaps").json()["items"] == []


def test_every_namespace_gets_a_default_service_account(http):
    name = "sa-" + uuid.uuid4().hex[:6]
    http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    wait_for(lambda: http.get(f"/api/v1/namespaces/{name}/serviceaccounts/default").status_code == 200)
    http.delete(f"/api/v1/namespaces/{name}/serviceaccounts/default")
    wait_for(lambda: http.get(f"/api/v1/namespaces/{name}/serviceaccounts/default").status_code == 200)
    assert http.get("/api/v1/namespaces/kube-system/serviceaccounts/default").status_code == 200


def test_the_controllers_have_their_service_accounts_in_kube_system(http):
    # kube-controller-manager with --use-service-account-credentials, as K3s runs it: one per
    # controller it starts, the subjects of the system:controller:* ClusterRoleBindings
    def names():
        return {sa["metadata"]["name"] for sa in http.get("/api/v1/namespaces/kube-system/serviceaccounts").json()["items"]}

    wait_for(lambda: "job-controller" in names())
    have = names()
    for name in ("deployment-controller", "replicaset-controller", "generic-garbage-collector", "namespace-controller",
                 "node-controller", "token-cleaner", "root-ca-cert-publisher", "horizontal-pod-autoscaler"):
        assert name in have
    # the cloud's controllers run elsewhere (an external cloud provider), selinux-warning is off by default
    assert not have & {"service-controller", "route-controller", "selinux-warning-controller"}
    bindings = http.get("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings").json()["items"]
    bound = {s["name"] for b in bindings if b["metadata"]["name"].startswith("system:controller:")
             for s in b.get("subjects") or () if s.get("kind") == "ServiceAccount"}
    assert bound - have == {"service-controller", "route-controller", "selinux-warning-controller"}
