"""The Events about a Node a v1.33 cluster shows in `kubectl describe node` (and, for the node
controller's, `kubectl events --for node/<name>`): the kubelet's start-up lines, its NodeNotSchedulable / NodeSchedulable on
cordon / uncordon, and the node controller's RegisteredNode."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx

from minik3s.testing.wait import wait_for


def _reasons(http: httpx.Client, node: str) -> list[str]:
    items = http.get("/api/v1/namespaces/default/events",
                     params={"fieldSelector": f"involvedObject.kind=Node,involvedObject.name={node}"}).json()["items"]
    return [e["reason"] for e in items]


def test_node_events_in_describe_and_kubectl_events(minik3s_server_factory: Any, kubectl_bin: Path) -> None:
    srv = minik3s_server_factory(nodes=1)

    def kubectl(*args: str) -> str:
        r = subprocess.run([str(kubectl_bin), "--kubeconfig", str(srv.kubeconfig), *args],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout

    with httpx.Client(base_url=srv.url, timeout=30) as http:
        startup = ["Starting", "NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID",
                   "NodeAllocatableEnforced", "NodeReady", "RegisteredNode"]
        wait_for(lambda: set(startup) <= set(_reasons(http, "node-1")), timeout=30)
        kubectl("cordon", "node-1")
        wait_for(lambda: "NodeNotSchedulable" in _reasons(http, "node-1"))
        kubectl("uncordon", "node-1")
        wait_for(lambda: "NodeSchedulable" in _reasons(http, "node-1"))
        assert sorted(_reasons(http, "node-1")) == sorted([*startup, "NodeNotSchedulable", "NodeSchedulable"])
        # the kubelet's attach/detach annotation and the TTL controller's (0 s up to 100 nodes)
        annotations = wait_for(lambda: (a := http.get("/api/v1/nodes/node-1").json()["metadata"]["annotations"])
                               .get("node.alpha.kubernetes.io/ttl") and a)
        assert annotations["node.alpha.kubernetes.io/ttl"] == "0"
        assert annotations["volumes.kubernetes.io/controller-managed-attach-detach"] == "true"

    described = kubectl("describe", "node", "node-1")
    events = described[described.index("Events:"):]
    assert "Starting kubelet." in events
    assert "Node node-1 status is now: NodeHasSufficientMemory" in events
    assert "Updated Node Allocatable limit across pods" in events
    assert "Node node-1 event: Registered Node node-1 in Controller" in events
    assert "Node node-1 status is now: NodeNotSchedulable" in events
    by_reason = {ln.split()[1]: ln for ln in events.splitlines()[3:] if ln.strip()}
    assert by_reason["RegisteredNode"].split()[3] == "node-controller"
    assert by_reason["Starting"].split()[3] == "kubelet"

    # `kubectl events --for` also selects involvedObject.apiVersion=v1: the node controller's
    # Events carry it, the kubelet's nodeRef (kind, name, uid = name) does not, so on a v1.33
    # cluster only the former are listed there
    listed = kubectl("events", "--for", "node/node-1")
    assert "Node/node-1   Node node-1 event: Registered Node node-1 in Controller" in listed
    assert "Starting kubelet." not in listed
