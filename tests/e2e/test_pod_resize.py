"""In-place pod resize with the real kubectl 1.33 against a real server with a simulated kubelet:
`kubectl patch --subresource resize`, what `get -o yaml` and `describe` then show, kubectl's error
lines for refused resizes, and a resize beyond the node."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minik3s.testing.wait import wait_for
from tests.e2e.test_kubectl import Kubectl

pytestmark = pytest.mark.usefixtures("kubectl_bin")

POD = """apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: c
    image: nginx
    resizePolicy:
    - {resourceName: memory, restartPolicy: RestartContainer}
    resources:
      requests: {cpu: 500m, memory: 128Mi}
      limits: {cpu: "1", memory: 256Mi}
"""


def test_kubectl_resizes_a_running_pod(kubectl_bin: Path, minik3s_server_factory, tmp_path: Path) -> None:
    srv = minik3s_server_factory(nodes=1)
    k = Kubectl(kubectl_bin, srv, tmp_path / "kc")

    def pod() -> dict:
        return json.loads(k("get", "pod", "web", "-o", "json").stdout)

    k("apply", "-f", "-", stdin=POD)
    k("wait", "--for=condition=Ready", "pod/web", "--timeout=30s")
    out = k("patch", "pod", "web", "--subresource", "resize", "-p",
            '{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"800m"},"limits":{"cpu":"1500m"}}}]}}')
    assert out.stdout.strip() == "pod/web patched"
    cs = wait_for(lambda: (s := pod()["status"]["containerStatuses"][0])["resources"]["limits"]["cpu"] == "1500m"
                  and s, timeout=30)
    assert cs["allocatedResources"] == {"cpu": "800m", "memory": "128Mi"}
    assert cs["restartCount"] == 0
    assert pod()["metadata"]["generation"] == 2
    # memory with RestartContainer: the container restarts with the new limit
    k("patch", "pod", "web", "--subresource", "resize", "-p",
      '{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"200Mi"},"limits":{"memory":"512Mi"}}}]}}')
    wait_for(lambda: pod()["status"]["containerStatuses"][0]["restartCount"] == 1, timeout=30)
    # refused: the plain update, a QoS change, removing a limit
    r = k("patch", "pod", "web", "-p", '{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}',
          ok=False)
    assert r.stderr.startswith('The Pod "web" is invalid: spec: Forbidden: pod updates may not change fields other than')
    r = k("patch", "pod", "web", "--subresource", "resize", "--type=json", "-p",
          '[{"op":"remove","path":"/spec/containers/0/resources/limits/cpu"}]', ok=False)
    assert 'spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed' in r.stderr
    # beyond the node (4 cpu): Infeasible, shown by describe; the pod keeps running its allocation
    k("patch", "pod", "web", "--subresource", "resize", "-p",
      '{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"8"},"limits":{"cpu":"8"}}}]}}')
    pending = wait_for(lambda: next((c for c in pod()["status"]["conditions"] if c["type"] == "PodResizePending"),
                                    None), timeout=30)
    assert pending["reason"] == "Infeasible"
    assert pending["message"] == "Node didn't have enough capacity: cpu, requested: 8000, capacity: 4000"
    assert "PodResizePending" in k("describe", "pod", "web").stdout
    assert pod()["status"]["containerStatuses"][0]["allocatedResources"]["cpu"] == "800m"
    # GET of the subresource is the pod
    assert json.loads(k("get", "pod", "web", "--subresource", "resize", "-o", "json").stdout)["kind"] == "Pod"
    k.close()
