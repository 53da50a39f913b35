"""K3s' local-storage on a real server process (every component, 2 simulated nodes): a Pod using
a claim of the default class ends up Running with its claim Bound to `pvc-<claim uid>`, a
local-path volume whose node affinity names the pod's node; `--disable local-storage` leaves no
class. The claim's node is chosen by the scheduler's VolumeBinding plugin (selected-node at
PreBind); deleting the pod and the claim deletes the volume (the class's Delete policy, carried
out by the provisioner). kubectl 1.33 shows the class as K3s' default."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx

from minik3s.testing.wait import wait_for

MERGE = {"Content-Type": "application/merge-patch+json"}


def test_a_pod_with_a_default_class_claim_gets_a_local_path_volume_on_its_node(minik3s_server_factory: Any,
                                                                               kubectl_bin: Path) -> None:
    srv = minik3s_server_factory(nodes=2)
    out = subprocess.run([str(kubectl_bin), "--kubeconfig", str(srv.kubeconfig), "get", "storageclass"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1].split()[:6] == ["local-path", "(default)", "rancher.io/local-path", "Delete",
                                                      "WaitForFirstConsumer", "false"]
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

        def claim_events() -> list[str]:
            return [e["reason"] for e in http.get("/api/v1/namespaces/default/events").json()["items"]
                    if e["involvedObject"].get("name") == "data"]

        # no consumer yet: the claim waits (WaitForFirstConsumer class), Pending, no volume
        wait_for(lambda: "WaitForFirstConsumer" in claim_events())
        pending = http.get("/api/v1/namespaces/default/persistentvolumeclaims/data").json()
        assert pending["status"]["phase"] == "Pending" and not pending["spec"].get("volumeName")
        r = http.post("/api/v1/namespaces/default/pods", json={
            "metadata": {"name": "user"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}],
                     "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}})
        assert r.status_code == 201, r.text

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
        assert {"ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"} <= set(claim_events())

        # the pod, then the claim, goes: the provisioner deletes the Released volume (Delete policy)
        http.delete("/api/v1/namespaces/default/pods/user", params={"gracePeriodSeconds": 0}).raise_for_status()
        http.delete("/api/v1/namespaces/default/persistentvolumeclaims/data").raise_for_status()
        wait_for(lambda: http.get(f"/api/v1/persistentvolumes/{name}").status_code == 404, timeout=60)
        assert http.get("/api/v1/namespaces/default/persistentvolumeclaims/data").status_code == 404


def test_disable_local_storage_leaves_no_storage_class(minik3s_server_factory: Any) -> None:
    srv = minik3s_server_factory("--disable", "local-storage")
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        assert http.get("/apis/storage.k8s.io/v1/storageclasses").json()["items"] == []
