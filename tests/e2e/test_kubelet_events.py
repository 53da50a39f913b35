"""A pod's story in its Events on a real cluster (scheduler + simulated kubelets), read as users
read it: `kubectl describe pod` and `kubectl events` (kubectl 1.33) list the scheduler's
`Scheduled` and then the kubelet's `Pulling` / `Pulled` / `Created` / `Started`, and `Killing`
once the pod is deleted; the official client's view of the same Events carries the kubelet's
source and the container's fieldPath."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik3s.embed import Cluster
from minik3s.pytest_plugin import cluster_fixture
from minik3s.testing.wait import wait_for

pytestmark = pytest.mark.usefixtures("kubectl_bin")

minik3s_cluster = cluster_fixture(scope="module", name="minik3s_cluster", nodes=2)


def kubectl(bin_: Path, cluster: Cluster, *args: str) -> str:
    r = subprocess.run([str(bin_), "--kubeconfig", str(cluster.kubeconfig_path), *args],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def kubelet_events(http: httpx.Client, ns: str, pod: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = http.get(f"/api/v1/namespaces/{ns}/events", params={
        "fieldSelector": f"involvedObject.name={pod},source=kubelet"}).json()["items"]
    return items


def test_describe_and_events_tell_what_the_kubelet_did(http: httpx.Client, ns: str, kubectl_bin: Path,
                                                       minik3s_cluster: Cluster) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}
    http.post(f"/api/v1/namespaces/{ns}/pods", json=pod).raise_for_status()
    events = wait_for(lambda: len(e := kubelet_events(http, ns, "web")) >= 4 and e, timeout=30)
    node = http.get(f"/api/v1/namespaces/{ns}/pods/web").json()["spec"]["nodeName"]
    assert {e["reason"] for e in events} == {"Pulling", "Pulled", "Created", "Started"}
    for e in events:
        assert e["source"] == {"component": "kubelet", "host": node}
        assert e["involvedObject"]["fieldPath"] == "spec.containers{nginx}"
    described = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "describe", "pod", "web")
    tail = described[described.index("Events:"):]
    for line in ("default-scheduler  Successfully assigned", 'kubelet            Pulling image "nginx:1.27"',
                 'Successfully pulled image "nginx:1.27" in ', "Created container: nginx",
                 "Started container nginx"):
        assert line in tail, tail
    assert tail.index("Scheduled") < tail.index("Pulling") < tail.index("Started")

    http.delete(f"/api/v1/namespaces/{ns}/pods/web", params={"gracePeriodSeconds": "30"}).raise_for_status()
    wait_for(lambda: any(e["reason"] == "Killing" for e in kubelet_events(http, ns, "web")), timeout=30)
    listed = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "events", "--for", "pod/web")
    assert "Killing" in listed and "Stopping container nginx" in listed, listed
