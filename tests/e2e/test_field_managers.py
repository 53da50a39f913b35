"""Components write with their upstream identities: on a cluster with every component, the
objects they create or update name `kube-controller-manager`, `kube-scheduler` and `kubelet`
in `managedFields`, as on a real cluster, and a user's writes name the user's client."""

from __future__ import annotations

import httpx

from minik3s.testing.wait import wait_for


def managers(obj: dict) -> set[tuple[str, str, str | None]]:
    return {(e["manager"], e["operation"], e.get("subresource")) for e in obj["metadata"].get("managedFields") or []}


def deployment(name: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def test_controller_and_kubelet_writes_carry_their_field_managers(http: httpx.Client, ns: str) -> None:
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("web")).raise_for_status()

    def running_pod() -> dict | None:
        items = http.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": "app=web"}).json()["items"]
        return next((p for p in items if (p.get("status") or {}).get("phase") == "Running"), None)

    pod = wait_for(running_pod, timeout=30)
    assert managers(pod) == {("kube-controller-manager", "Update", None), ("kubelet", "Update", "status")}

    def deployment_status_written() -> dict | None:
        d = http.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json()
        return d if ("kube-controller-manager", "Update", "status") in managers(d) else None

    d = wait_for(deployment_status_written, timeout=30)
    assert ("python-httpx", "Update", None) in managers(d)  # the user's create, named after its user agent
    node = http.get(f"/api/v1/nodes/{pod['spec']['nodeName']}").json()
    assert ("kubelet", "Update", None) in managers(node)  # registered by its kubelet


def test_the_scheduler_records_an_unschedulable_pod_as_kube_scheduler(http: httpx.Client, ns: str) -> None:
    pod = {"metadata": {"name": "nowhere"},
           "spec": {"nodeSelector": {"no-such": "label"}, "containers": [{"name": "c", "image": "x"}]}}
    http.post(f"/api/v1/namespaces/{ns}/pods", json=pod).raise_for_status()

    def marked() -> dict | None:
        p = http.get(f"/api/v1/namespaces/{ns}/pods/nowhere").json()
        return p if ("kube-scheduler", "Update", "status") in managers(p) else None

    p = wait_for(marked, timeout=30)
    cond = next(c for c in p["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
