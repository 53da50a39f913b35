"""Images a node cannot use, through the real kubectl 1.33 against a real server with simulated
kubelets: `kubectl run` of a misspelt image shows `ErrImagePull`, a
manifest with an unparsable image `InvalidImageName`, `kubectl describe` the kubelet's lines,
and `kubectl set image` to a good image starts the container."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minik3s.testing.wait import wait_for
from tests.e2e.test_kubectl import Kubectl, table

pytestmark = pytest.mark.usefixtures("kubectl_bin")

BAD_NAME = """apiVersion: v1
kind: Pod
metadata: {name: upper}
spec:
  containers:
  - {name: c, image: "Nginx:1.27"}
"""


def test_kubectl_sees_image_pull_failures(kubectl_bin: Path, minik3s_server_factory, tmp_path: Path) -> None:
    srv = minik3s_server_factory(nodes=1)
    k = Kubectl(kubectl_bin, srv, tmp_path / "kc")

    def status_of(name: str) -> str:
        rows = table(k("get", "pod", name).stdout)
        return rows[1][2]

    assert k("run", "typo", "--image=nginxx").stdout.strip() == "pod/typo created"
    wait_for(lambda: status_of("typo") == "ErrImagePull", timeout=30)
    k("apply", "-f", "-", stdin=BAD_NAME)
    wait_for(lambda: status_of("upper") == "InvalidImageName", timeout=30)
    out = k("describe", "pod", "upper").stdout
    assert ('Failed to apply default image tag "Nginx:1.27": couldn\'t parse image name "Nginx:1.27": '
            "invalid reference format: repository name (library/Nginx) must be lowercase") in out
    assert "Error: InvalidImageName" in out
    # pods/log answers as the kubelet's validateContainerLogStatus
    r = k("logs", "upper", ok=False)
    assert r.stderr.strip() == ('Error from server (BadRequest): container "c" in pod "upper" is waiting to start: '
                                "InvalidImageName")
    # (the back-off, ImagePullBackOff 20-30 s later, is timed on a fake clock in
    # tests/kubelet_sim/test_image_pull.py)
    pod = json.loads(k("get", "pod", "typo", "-o", "json").stdout)
    assert pod["status"]["phase"] == "Pending"
    waiting = pod["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["message"].startswith('failed to pull and unpack image "docker.io/library/nginxx:latest"')
    r = k("logs", "typo", ok=False)
    assert r.stderr.strip() == ('Error from server (BadRequest): container "typo" in pod "typo" is waiting to start: '
                                "image can't be pulled")
    out = k("describe", "pod", "typo").stdout
    for line in ('Pulling image "nginxx"', 'Failed to pull image "nginxx": failed to pull and unpack image',
                 "Error: ErrImagePull"):
        assert line in out
    # the fix is tried at once
    k("set", "image", "pod/typo", "typo=nginx:1.27")
    k("wait", "--for=condition=Ready", "pod/typo", "--timeout=30s")
    assert status_of("typo") == "Running"
