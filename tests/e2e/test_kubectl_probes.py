"""Exec probes through the real kubectl 1.33 against a real server with simulated kubelets: a
readiness probe that `kubectl exec ... touch` makes pass and `rm` makes fail, and a liveness probe
that fails once the container's own script removes its file, so the kubelet kills and restarts it
(`kubectl describe`'s Unhealthy and Killing lines, RESTARTS 1). The full timelines are on a fake
clock in tests/kubelet_sim/test_prober.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minik3s.testing.wait import wait_for
from tests.e2e.test_kubectl import Kubectl

pytestmark = pytest.mark.usefixtures("kubectl_bin")

PODS = """apiVersion: v1
kind: Pod
metadata: {name: gate}
spec:
  containers:
  - name: app
    image: busybox:1.36
    command: [sleep, "3600"]
    readinessProbe:
      exec: {command: [cat, /tmp/ready]}
      periodSeconds: 1
      failureThreshold: 1
---
apiVersion: v1
kind: Pod
metadata: {name: liveness-exec}
spec:
  containers:
  - name: liveness
    image: registry.k8s.io/busybox:1.27.2
    args: [/bin/sh, -c, "touch /tmp/healthy; sleep 2; rm -f /tmp/healthy; sleep 600"]
    livenessProbe:
      exec: {command: [cat, /tmp/healthy]}
      initialDelaySeconds: 1
      periodSeconds: 1
"""


def test_kubectl_sees_exec_probes_pass_fail_and_restart(kubectl_bin: Path, minik3s_server_factory,
                                                         tmp_path: Path) -> None:
    srv = minik3s_server_factory(nodes=1)
    k = Kubectl(kubectl_bin, srv, tmp_path / "kc")
    k("apply", "-f", "-", stdin=PODS)

    def pod(name: str) -> dict:
        return json.loads(k("get", "pod", name, "-o", "json").stdout)

    def ready(name: str) -> bool:
        statuses = pod(name).get("status", {}).get("containerStatuses") or [{}]
        return statuses[0].get("ready") is True

    # the script's own file, as the probe sees it, and exec sessions too
    wait_for(lambda: "running" in (pod("liveness-exec")["status"].get("containerStatuses") or [{}])[0].get("state", {}),
             timeout=30)
    assert k("exec", "liveness-exec", "--", "ls", "/tmp").stdout.split() == ["healthy"]
    # readiness: unready until the file exists, ready once an exec session creates it
    wait_for(lambda: "containerStatuses" in pod("gate")["status"], timeout=30)
    assert not ready("gate")
    k("exec", "gate", "--", "touch", "/tmp/ready")
    k("wait", "--for=condition=Ready", "pod/gate", "--timeout=30s")
    k("exec", "gate", "--", "rm", "/tmp/ready")
    wait_for(lambda: not ready("gate"), timeout=30)
    assert pod("gate")["status"]["containerStatuses"][0]["restartCount"] == 0
    # liveness: from 2 s on the file is gone; three failures later the container is killed
    wait_for(lambda: pod("liveness-exec")["status"]["containerStatuses"][0]["restartCount"] >= 1, timeout=30)
    last = pod("liveness-exec")["status"]["containerStatuses"][0]["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (137, "Error")
    out = k("describe", "pod", "liveness-exec").stdout
    assert "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory" in out
    assert "Container liveness failed liveness probe, will be restarted" in out
    out = k("describe", "pod", "gate").stdout
    assert "Readiness probe failed: cat: can't open '/tmp/ready': No such file or directory" in out
