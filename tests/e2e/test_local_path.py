"""K3s' local-storage on a real server process (every component, 2 simulated nodes): a Pod using
a claim of the default class ends up Running with its claim Bound to `pvc-<claim uid>`, a
local-path volume whose node affinity names the pod's node; `--disable local-storage` leaves no
class. The claim's node is chosen by the scheduler's VolumeBinding plugin (selected-node); while
that plugin is not registered, the test plays the scheduler's part and annotates the claim with
the node the pod was bound to."""

from __future__ import annotations

from typing import Any

import httpx

from minik3s.testing.wait import wait_for

MERGE = {"Content-Type": "application/merge-patch+json"}


def _volume_binding_registered() -> bool:
    try:
        from scheduler.plugins.registry import in_tree_registry
    except ImportError:  # pragma: no cover
        return False
    return "VolumeBinding" in in_tree_registry()


def test_a_pod_with_a_default_class_claim_gets_a_local_path_volume_on_its_node(minik3s_server_factory: Any) -> None:
    srv = minik3s_server_factory(nodes=2)
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        wait_for(lambda: len(http.get("/api/v1/nodes").json()["items"]) == 2)
        cls = http.get("/apis/storage.k8s.io/v1/storageclasses/local-path").json()
        assert cls["metadata"]["annotations"] == {"storageclass.kubernetes.io/is-default-class": "true"}
        r = http.post("/api/v1/namespaces/default/persistentvolumeclaims", json={
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
        assert r.status_code == 201, r.text
        made = r.json()
        assert made["spec"]["storageClassName"] == "local-path"
        r = http.post("/api/v1/namespaces/default/pods", json={
            "metadata": {"name": "user"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}],
                     "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}})
        assert r.status_code == 201, r.text

        if not _volume_binding_registered():
            # the scheduler ignores the claim: note where the pod went and select that node
            node = wait_for(lambda: http.get("/api/v1/namespaces/default/pods/user").json()["spec"].get("nodeName"))
            http.patch("/api/v1/namespaces/default/persistentvolumeclaims/data", headers=MERGE, json={
                "metadata": {"annotations": {"volume.kubernetes.io/selected-node": node}}}).raise_for_status()

        def claim_bound() -> dict[str, Any] | None:
            c = http.get("/api/v1/namespaces/default/persistentvolumeclaims/data").json()
            return c if (c.get("status") or {}).get("phase") == "Bound" else None

        claim = wait_for(claim_bound, timeout=60)
        pod = wait_for(lambda: (lambda p: p if (p.get("status") or {}).get("phase") == "Running" else None)(
            http.get("/api/v1/namespaces/default/pods/user").json()), timeout=60)
        node = pod["spec"]["nodeName"]
        name = f"pvc-{made['metadata']['uid']}"
        assert claim["spec"]["volumeName"] == name
        assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node
        pv = http.get(f"/api/v1/persistentvolumes/{name}").json()
        assert pv["status"]["phase"] == "Bound"
        assert pv["spec"]["hostPath"] == {"path": f"/var/lib/rancher/k3s/storage/{name}_default_data",
                                          "type": "DirectoryOrCreate"}
        terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
        node_obj = http.get(f"/api/v1/nodes/{node}").json()
        hostname = node_obj["metadata"]["labels"].get("kubernetes.io/hostname", node)
        assert terms == [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                "values": [hostname]}]}]
        reasons = [e["reason"] for e in http.get("/api/v1/namespaces/default/events").json()["items"]
                   if e["involvedObject"].get("name") == "data"]
        assert {"ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"} <= set(reasons)


def test_disable_local_storage_leaves_no_storage_class(minik3s_server_factory: Any) -> None:
    srv = minik3s_server_factory("--disable", "local-storage")
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        assert http.get("/apis/storage.k8s.io/v1/storageclasses").json()["items"] == []
