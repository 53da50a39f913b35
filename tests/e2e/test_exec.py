"""`pods/exec` on a real cluster (scheduler + simulated kubelets): the official Python client's
own exec cases (kubernetes/e2e_test/test_client.py: test_pod_apis, test_exit_code,
test_pod_exec_close_channel), the real kubectl 1.33 (`kubectl exec`, WebSocket v5), and the
raw channel protocols and refusals over plain WebSockets (aiohttp)."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import os
import pty
import select
import socket
import struct
import subprocess
import time
import uuid
import zlib
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
import yaml

from minik3s.embed import Cluster
from minik3s.pytest_plugin import cluster_fixture
from minik3s.testing.wait import wait_for

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, config  # noqa: E402
from kubernetes.stream import stream  # noqa: E402
from kubernetes.stream.ws_client import ERROR_CHANNEL  # noqa: E402

pytestmark = pytest.mark.usefixtures("kubectl_bin")

minik3s_cluster = cluster_fixture(scope="module", name="minik3s_cluster", nodes=2)


def kubectl(bin_: Path, cluster: Cluster, *args: str, stdin: str | None = None,
            timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bin_), "--kubeconfig", str(cluster.kubeconfig_path), *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def core_api(minik3s_cluster: Cluster) -> Any:
    api_client = config.new_client_from_config(config_file=str(minik3s_cluster.kubeconfig_path))
    yield client.CoreV1Api(api_client)
    api_client.close()


def busybox(name: str, command: str = "while true;do date;sleep 5; done", **spec: Any) -> dict[str, Any]:
    """The Python client's manifest_with_command."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"image": "busybox", "name": "sleep", "args": ["/bin/sh", "-c", command]}],
                     **spec}}


def running(http: httpx.Client, ns: str, name: str) -> dict[str, Any]:
    def ready() -> dict[str, Any] | None:
        pod = http.get(f"/api/v1/namespaces/{ns}/pods/{name}").json()
        return pod if pod.get("status", {}).get("phase") == "Running" else None
    return wait_for(ready, timeout=30)


def make_running(http: httpx.Client, ns: str, body: dict[str, Any]) -> dict[str, Any]:
    http.post(f"/api/v1/namespaces/{ns}/pods", json=body).raise_for_status()
    return running(http, ns, body["metadata"]["name"])


# ---- the Python client's own e2e cases -----------------------------------------------------


def test_pod_apis(core_api: Any, http: httpx.Client, ns: str) -> None:
    name = "busybox-test-" + uuid.uuid4().hex[:8]
    make_running(http, ns, busybox(name))

    resp = stream(core_api.connect_get_namespaced_pod_exec, name, ns,
                  command=["/bin/sh", "-c", "for i in $(seq 1 3); do date; done"],
                  stderr=False, stdin=False, stdout=True, tty=False)
    assert isinstance(resp, str)
    assert len(resp.splitlines()) == 3

    resp = stream(core_api.connect_get_namespaced_pod_exec, name, ns,
                  command=["/bin/sh", "-c", 'echo -n "This is a test string" | gzip'],
                  stderr=False, stdin=False, stdout=True, tty=False, binary=True)
    assert isinstance(resp, bytes)
    assert gzip.decompress(resp).decode() == "This is a test string"

    resp = stream(core_api.connect_post_namespaced_pod_exec, name, ns, command=["uptime"],
                  stderr=False, stdin=False, stdout=True, tty=False)
    assert len(resp.splitlines()) == 1

    for binary in (False, True):
        def b(text: str) -> Any:
            return text.encode() if binary else text  # noqa: B023
        ws = stream(core_api.connect_post_namespaced_pod_exec, name, ns, command=["/bin/sh"],
                    stderr=True, stdin=True, stdout=True, tty=False, binary=binary, _preload_content=False)
        ws.write_stdin(b("echo test string 1\n"))
        assert ws.readline_stdout(timeout=5) == b("test string 1")
        assert not ws.peek_stderr()
        ws.write_stdin(b("echo test string 2 >&2\n"))
        assert ws.readline_stderr(timeout=5) == b("test string 2")
        assert not ws.peek_stdout()
        ws.write_stdin(b("exit\n"))
        ws.update(timeout=5)
        deadline = time.monotonic() + 10
        line = ws.read_channel(ERROR_CHANNEL)
        while not line and time.monotonic() < deadline:
            ws.update(timeout=1)
            line = ws.read_channel(ERROR_CHANNEL)
        assert json.loads(line)["status"] == "Success"
        ws.update(timeout=5)
        assert not ws.is_open()


def test_exit_code(core_api: Any, http: httpx.Client, ns: str) -> None:
    name = "busybox-test-" + uuid.uuid4().hex[:8]
    make_running(http, ns, busybox(name))
    for command, value in ((["false"], 1), (["/bin/sh", "-c", "sleep 1; exit 3"], 3), (["true"], 0),
                           (["/bin/sh", "-c", "ls /"], 0)):
        ws = stream(core_api.connect_get_namespaced_pod_exec, name, ns, command=command,
                    stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
        assert ws.returncode is None
        ws.run_forever(timeout=10)
        assert ws.returncode == value, command
        assert ws.returncode == value  # idempotent


def test_pod_exec_close_channel(core_api: Any, http: httpx.Client, ns: str) -> None:
    """v5: closing stdin (CLOSE on channel 255) ends `cat`, which ends the command."""
    name = "busybox-test-" + uuid.uuid4().hex[:8]
    make_running(http, ns, busybox(name))
    ws = stream(core_api.connect_post_namespaced_pod_exec, name, ns, command=["/bin/sh", "-c", "cat"],
                stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False)
    assert ws.subprotocol == "v5.channel.k8s.io"
    try:
        ws.write_stdin("test-close\n")
        assert ws.readline_stdout(timeout=5) == "test-close"
        ws.close_channel(0)
        ws.run_forever(timeout=15)
        assert not ws.is_open()
        assert ws.returncode == 0
    finally:
        if ws.is_open():
            ws.close()


# ---- what the container sees ----------------------------------------------------------------


def test_exec_sees_env_mounts_token_and_hostname(core_api: Any, http: httpx.Client, ns: str) -> None:
    http.post(f"/api/v1/namespaces/{ns}/configmaps",
              json={"metadata": {"name": "cfg"}, "data": {"greeting": "hello", "mode": "fast"}}).raise_for_status()
    body = busybox("seer")
    body["spec"]["containers"][0].update(
        env=[{"name": "GREETING", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "greeting"}}},
             {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
             {"name": "MSG", "value": "$(GREETING) world"}],
        volumeMounts=[{"name": "cfg", "mountPath": "/etc/cfg"}])
    body["spec"]["volumes"] = [{"name": "cfg", "configMap": {"name": "cfg"}}]
    make_running(http, ns, body)

    def run(*command: str) -> str:
        out: str = stream(core_api.connect_get_namespaced_pod_exec, "seer", ns, command=list(command),
                          stderr=True, stdin=False, stdout=True, tty=False)
        return out

    assert run("printenv", "GREETING") == "hello\n"
    assert run("printenv", "POD_NAME") == "seer\n"
    assert run("sh", "-c", "echo $MSG") == "hello world\n"
    assert run("cat", "/etc/cfg/mode") == "fast"
    assert run("hostname") == "seer\n"
    assert run("cat", "/var/run/secrets/kubernetes.io/serviceaccount/namespace") == ns
    token = run("cat", "/var/run/secrets/kubernetes.io/serviceaccount/token")
    review = http.post("/apis/authentication.k8s.io/v1/tokenreviews",
                       json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                             "spec": {"token": token}}).json()
    assert review["status"]["authenticated"] is True
    assert review["status"]["user"]["username"] == f"system:serviceaccount:{ns}:default"
    # the projected token is the kubelet's, kept until it rotates: the next exec reads the same file
    assert run("cat", "/var/run/secrets/kubernetes.io/serviceaccount/token") == token
    # ConfigMap volumes are mounted read-only
    ws = stream(core_api.connect_get_namespaced_pod_exec, "seer", ns, command=["sh", "-c", "echo x > /etc/cfg/mode"],
                stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
    ws.run_forever(timeout=10)
    assert ws.returncode == 1
    assert ws.read_stderr() == "sh: can't create /etc/cfg/mode: Read-only file system\n"
    # the container's writable layer keeps what a command wrote, for the next exec
    assert run("sh", "-c", "echo kept > /tmp/note") == ""
    assert run("cat", "/tmp/note") == "kept\n"


# ---- kubectl 1.33 -----------------------------------------------------------------------------


def test_kubectl_exec(kubectl_bin: Path, minik3s_cluster: Cluster, http: httpx.Client, ns: str) -> None:
    make_running(http, ns, busybox("box"))
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "box", "--", "echo", "hi there")
    assert (r.returncode, r.stdout) == (0, "hi there\n"), r.stderr
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "box", "--", "sh", "-c", "echo oops >&2; exit 7")
    assert r.returncode == 7
    assert r.stderr == "oops\ncommand terminated with exit code 7\n"
    # stdin through -i, closed at EOF (v5 CLOSE)
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "-i", "box", "--", "cat", stdin="one\ntwo\n")
    assert (r.returncode, r.stdout) == (0, "one\ntwo\n"), r.stderr
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "box", "--", "nosuchprogram")
    assert r.returncode == 1
    assert 'exec: "nosuchprogram": executable file not found in $PATH: unknown' in r.stderr
    assert r.stderr.startswith("error: Internal error occurred: error executing command in container: ")
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "box", "-c", "nope", "--", "true")
    assert r.returncode == 1
    assert "container nope is not valid for pod box" in r.stderr


def test_kubectl_exec_completed_pod_and_missing_pod(kubectl_bin: Path, minik3s_cluster: Cluster,
                                                    http: httpx.Client, ns: str) -> None:
    http.post(f"/api/v1/namespaces/{ns}/pods", json=busybox("done", "echo bye", restartPolicy="Never")
              ).raise_for_status()
    wait_for(lambda: http.get(f"/api/v1/namespaces/{ns}/pods/done").json()["status"].get("phase") == "Succeeded",
             timeout=30)
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "done", "--", "true")
    assert r.returncode == 1
    assert r.stderr == "error: cannot exec into a container in a completed pod; current phase is Succeeded\n"
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "ghost", "--", "true")
    assert r.returncode == 1
    assert r.stderr == 'Error from server (NotFound): pods "ghost" not found\n'


# ---- the wire: channel protocols and refusals ----------------------------------------------


def exec_url(cluster: Cluster, ns: str, name: str, **query: Any) -> str:
    parts = []
    for k, v in query.items():
        for item in (v if isinstance(v, list) else [v]):
            parts.append(f"{k}={item}")
    return f"{cluster.url}/api/v1/namespaces/{ns}/pods/{name}/exec?" + "&".join(parts)


async def _session(url: str, protocols: tuple[str, ...], send: tuple[bytes | str, ...] = (),
                   until: Any = None) -> tuple[str | None, list[Any]]:
    """The frames the server sends until it closes (or until a frame equals `until`, when the
    client closes)."""
    frames: list[Any] = []
    async with aiohttp.ClientSession() as s, s.ws_connect(url, protocols=protocols) as ws:
        for item in send:
            if isinstance(item, str):
                await ws.send_str(item)
            else:
                await ws.send_bytes(item)
        async with asyncio.timeout(20):
            async for msg in ws:
                if msg.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
                    frames.append(msg.data)
                    if until is not None and msg.data == until:
                        break
        return ws.protocol, frames


def test_v4_binary_frames_and_status(minik3s_cluster: Cluster, http: httpx.Client, ns: str) -> None:
    make_running(http, ns, busybox("wire"))
    url = exec_url(minik3s_cluster, ns, "wire", command=["sh", "-c", "echo%20out;%20echo%20err%20>%262;%20exit%202"],
                   stdout="true", stderr="true")
    proto, frames = asyncio.run(_session(url, ("v4.channel.k8s.io",)))
    assert proto == "v4.channel.k8s.io"
    assert frames[0] == b"\x01"  # the empty message on stdout: the streams are open
    assert b"\x01out\n" in frames and b"\x02err\n" in frames
    status = frames[-1]
    assert status[0] == 3
    assert json.loads(status[1:]) == {
        "metadata": {}, "status": "Failure",
        "message": "command terminated with non-zero exit code: error executing command "
                   "[sh -c echo out; echo err >&2; exit 2], exit code 2",
        "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": "2"}]}}


def test_base64_protocol_and_pre_v4_error_text(minik3s_cluster: Cluster, http: httpx.Client, ns: str) -> None:
    make_running(http, ns, busybox("b64"))
    url = exec_url(minik3s_cluster, ns, "b64", command="cat", stdin="1", stdout="1")
    echo = "1" + base64.b64encode(b"ping\n").decode()
    proto, frames = asyncio.run(_session(url, ("base64.channel.k8s.io",),
                                         ("0" + base64.b64encode(b"ping\n").decode(),), until=echo))
    assert proto == "base64.channel.k8s.io"
    # stdin stays open until the client goes, so the client ends this one after the echo
    assert frames == ["1", echo]
    url = exec_url(minik3s_cluster, ns, "b64", command="false", stdout="1")
    _proto, frames = asyncio.run(_session(url, ("channel.k8s.io",)))
    assert frames[-1] == b"\x03command terminated with non-zero exit code: error executing command [false], exit code 1"
    url = exec_url(minik3s_cluster, ns, "b64", command="true", stdout="1")
    _proto, frames = asyncio.run(_session(url, ("channel.k8s.io",)))
    assert frames == [b"\x01"]  # success: nothing on the error channel before pre-v4 protocols


def test_refusals(minik3s_cluster: Cluster, http: httpx.Client, ns: str) -> None:
    make_running(http, ns, busybox("ref"))
    base = f"/api/v1/namespaces/{ns}/pods"
    # not a WebSocket upgrade (kubectl's SPDY fallback, a plain GET): a 400 Status
    r = http.post(f"{base}/ref/exec?command=true&stdout=1")
    assert r.status_code == 400 and r.json()["reason"] == "BadRequest"
    assert "WebSocket" in r.json()["message"]
    # no stream asked for: the kubelet's 400 text
    ws_headers = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                  "Sec-WebSocket-Key": base64.b64encode(b"0123456789abcdef").decode()}
    r = http.get(f"{base}/ref/exec?command=true", headers=ws_headers)
    assert (r.status_code, r.text) == (400, "you must specify at least 1 of stdin, stdout, stderr\n")
    # no such pod; no such container
    r = http.get(f"{base}/ghost/exec?command=true&stdout=1", headers=ws_headers)
    assert r.status_code == 404 and r.json()["message"] == 'pods "ghost" not found'
    r = http.get(f"{base}/ref/exec?command=true&stdout=1&container=x", headers=ws_headers)
    assert r.status_code == 400 and r.json()["message"] == "container x is not valid for pod ref"
    # a subprotocol the servers do not speak
    r = http.get(f"{base}/ref/exec?command=true&stdout=1",
                 headers={**ws_headers, "Sec-WebSocket-Protocol": "v9.channel.k8s.io"})
    assert r.status_code == 403
    # a SPDY upgrade offering no remotecommand protocol served: httpstream.Handshake's 403
    r = http.post(f"{base}/ref/exec?command=true&stdout=1", headers={
        "Connection": "Upgrade", "Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "v9.channel.k8s.io"})
    assert r.status_code == 403
    assert r.text == ("unable to upgrade: unable to negotiate protocol: client supports [v9.channel.k8s.io], server "
                      "accepts [v4.channel.k8s.io v3.channel.k8s.io v2.channel.k8s.io channel.k8s.io]\n")
    # a pod not yet on a node
    http.post(f"{base}", json={"metadata": {"name": "unbound"}, "spec": {
        "nodeSelector": {"nowhere": "x"}, "containers": [{"name": "c", "image": "busybox"}]}}).raise_for_status()
    r = http.get(f"{base}/unbound/exec?command=true&stdout=1", headers=ws_headers)
    assert r.status_code == 400 and r.json()["message"] == "pod unbound does not have a host assigned"


def test_exec_needs_create_on_pods_exec(kubectl_bin: Path, minik3s_cluster: Cluster, http: httpx.Client,
                                       ns: str) -> None:
    """AuthorizePodWebsocketUpgradeCreatePermission: `get pods/exec` is not enough."""
    make_running(http, ns, busybox("guarded"))
    http.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "viewer"}}).raise_for_status()
    http.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", json={
        "metadata": {"name": "get-exec"},
        "rules": [{"apiGroups": [""], "resources": ["pods", "pods/exec"], "verbs": ["get"]}]}).raise_for_status()
    http.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", json={
        "metadata": {"name": "get-exec"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                                      "name": "get-exec"},
        "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": ns}]}).raise_for_status()
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "--as", f"system:serviceaccount:{ns}:viewer",
                "exec", "guarded", "--", "true")
    assert r.returncode == 1
    assert 'cannot create resource "pods/exec"' in r.stderr, r.stderr


class PtyKubectl:
    """kubectl on a real terminal (a pty): what it draws, and keystrokes."""

    def __init__(self, kubectl_bin: Path, cluster: Cluster, *args: str) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen([str(kubectl_bin), "--kubeconfig", str(cluster.kubeconfig_path), *args],
                                     stdin=slave, stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        self.screen = bytearray()

    def read_until(self, marker: bytes, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while marker not in self.screen:
            left = deadline - time.monotonic()
            assert left > 0, f"{marker!r} not seen in {bytes(self.screen)!r}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                self.screen.extend(chunk)
        assert marker in self.screen, bytes(self.screen)

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def test_kubectl_exec_it_shell_on_a_terminal(kubectl_bin: Path, minik3s_cluster: Cluster, http: httpx.Client,
                                              ns: str) -> None:
    """`kubectl exec -it POD -- sh` on a real terminal: the prompt, the echo of what is typed
    (the simulated pty's line discipline), output with CRLF, `exit` ends kubectl with 0."""
    make_running(http, ns, busybox("tty"))
    term = PtyKubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "-it", "tty", "--", "sh")
    try:
        term.read_until(b"/ # ")
        term.type(b"echo hi\r")
        term.read_until(b"echo hi\r\nhi\r\n/ # ")
        term.type(b"exit\r")
        assert term.proc.wait(timeout=15) == 0
    finally:
        term.close()


CONNECT_POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-rm-NS}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CONNECT]
      resources: [pods/exec]
  validations:
  - expression: "object.command[0] != 'rm'"
    message: no rm in exec
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-rm-NS}
spec:
  policyName: no-rm-NS
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: NS}
"""


def test_connect_admission_sees_pod_exec_options(kubectl_bin: Path, minik3s_cluster: Cluster, http: httpx.Client,
                                                 ns: str) -> None:
    """A policy on CONNECT pods/exec (as policy engines block exec) refuses before anything runs."""
    make_running(http, ns, busybox("guarded"))
    r = kubectl(kubectl_bin, minik3s_cluster, "apply", "-f", "-", stdin=CONNECT_POLICY.replace("NS", ns))
    assert r.returncode == 0, r.stderr

    def refused() -> str | None:
        out = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "guarded", "--", "rm", "-rf", "/tmp")
        return out.stderr if out.returncode != 0 else None

    stderr = wait_for(refused, timeout=15)  # the policy takes effect once its informer has it
    # the policy's default reason Invalid (422) on admission.NewForbidden's Status, as kubectl
    # prints an Invalid error with a cause that names no field
    assert stderr == (f"The pods \"guarded\" is invalid: : ValidatingAdmissionPolicy 'no-rm-{ns}' with binding "
                      f"'no-rm-{ns}' denied request: no rm in exec\n")
    r = http.get(f"/api/v1/namespaces/{ns}/pods/guarded/exec", params={"command": "rm", "stdout": "1"})
    assert (r.status_code, r.json()["reason"]) == (422, "Invalid")
    assert r.json()["message"] == (f"pods \"guarded\" is forbidden: ValidatingAdmissionPolicy 'no-rm-{ns}' with "
                                   f"binding 'no-rm-{ns}' denied request: no rm in exec")
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "guarded", "--", "echo", "fine")
    assert (r.returncode, r.stdout) == (0, "fine\n"), r.stderr


def test_connect_admission_sees_pod_portforward_options(minik3s_cluster: Cluster, http: httpx.Client,
                                                        ns: str) -> None:
    """A policy on CONNECT pods/portforward sees a v1 PodPortForwardOptions with the query's ports
    (none for kubectl's SPDY tunnel, whose ports come with each stream)."""
    make_running(http, ns, busybox("pfguard"))
    policy = (CONNECT_POLICY.replace("no-rm-NS", "no-ssh-NS").replace("pods/exec", "pods/portforward")
              .replace("object.command[0] != 'rm'", "!has(object.ports) || !object.ports.exists(p, p == 22)")
              .replace("no rm in exec", "no ssh").replace("NS", ns))
    for doc in yaml.safe_load_all(policy):
        group = "/apis/admissionregistration.k8s.io/v1/"
        plural = "validatingadmissionpolicies" if doc["kind"] == "ValidatingAdmissionPolicy" else \
            "validatingadmissionpolicybindings"
        http.post(group + plural, json=doc).raise_for_status()
    ws_headers = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                  "Sec-WebSocket-Key": base64.b64encode(b"0123456789abcdef").decode(),
                  "Sec-WebSocket-Protocol": "portforward.k8s.io"}

    def refused() -> httpx.Response | None:
        r = http.get(f"/api/v1/namespaces/{ns}/pods/pfguard/portforward?ports=22", headers=ws_headers)
        return r if r.status_code == 422 else None

    r = wait_for(refused, timeout=15)
    assert r.json()["message"] == (f"pods \"pfguard\" is forbidden: ValidatingAdmissionPolicy 'no-ssh-{ns}' with "
                                   f"binding 'no-ssh-{ns}' denied request: no ssh")

    async def upgrades(query: str, protocol: str) -> str | None:
        url = f"{minik3s_cluster.url}/api/v1/namespaces/{ns}/pods/pfguard/portforward{query}"
        async with aiohttp.ClientSession() as s, s.ws_connect(url, protocols=(protocol,)) as ws:
            return ws.protocol

    assert asyncio.run(upgrades("?ports=80", "portforward.k8s.io")) == "portforward.k8s.io"
    assert asyncio.run(upgrades("", "SPDY/3.1+portforward.k8s.io")) == "SPDY/3.1+portforward.k8s.io"


# ---- attach -------------------------------------------------------------------------------------


def test_attach_reaches_the_containers_shell_and_keeps_its_state(core_api: Any, http: httpx.Client,
                                                                  ns: str) -> None:
    """A container with `stdin: true` running `sh`: each attach talks to the same shell."""
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "interactive"},
            "spec": {"containers": [{"name": "c", "image": "busybox", "args": ["sh"], "stdin": True}]}}
    make_running(http, ns, body)
    for line, expected in (("x=kept; echo first $x\n", "first kept"), ("echo second $x\n", "second kept")):
        ws = stream(core_api.connect_get_namespaced_pod_attach, "interactive", ns, stdin=True, stdout=True,
                    stderr=True, tty=False, _preload_content=False)
        ws.write_stdin(line)
        assert ws.readline_stdout(timeout=5) == expected
        ws.close()


def test_attach_to_a_process_that_reads_nothing_holds_until_the_client_leaves(minik3s_cluster: Cluster,
                                                                              http: httpx.Client, ns: str) -> None:
    make_running(http, ns, busybox("quiet"))
    url = exec_url(minik3s_cluster, ns, "quiet", stdout="1").replace("/exec?", "/attach?")

    async def attach() -> list[Any]:
        frames: list[Any] = []
        async with aiohttp.ClientSession() as s, s.ws_connect(url, protocols=("v5.channel.k8s.io",)) as ws:
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(1):
                    async for msg in ws:
                        frames.append(msg.data)
        return frames

    assert asyncio.run(attach()) == [b"\x01"]  # the streams are open; nothing else, still attached


@pytest.mark.parametrize("restart", ["Always", "Never"])
def test_kubectl_run_it_rm_shell_on_a_terminal(kubectl_bin: Path, minik3s_cluster: Cluster, ns: str,
                                               restart: str) -> None:
    """`kubectl run -it --rm dbg --image=busybox -- sh`: the shell answers, `exit` ends the
    session and kubectl deletes the pod. The kubelet learns of the exit: under `--restart=Never`
    the pod ends with the shell's code, which kubectl returns."""
    term = PtyKubectl(kubectl_bin, minik3s_cluster, "-n", ns, "run", "-it", "--rm", "dbg", "--image=busybox",
                      f"--restart={restart}", "--", "sh")
    try:
        term.read_until(b"If you don't see a command prompt, try pressing enter.")
        term.type(b"\r")
        term.read_until(b"/ # ")
        term.type(b"echo hello from attach\r")
        term.read_until(b"hello from attach\r\n/ # ")
        term.type(b"exit 3\r")
        if restart == "Always":
            term.read_until(b"Session ended, resume using 'kubectl attach dbg -c dbg -i -t' command when the pod is "
                            b"running")
            assert term.proc.wait(timeout=30) == 0
            term.read_until(b'pod "dbg" deleted')
        else:
            term.read_until(f"pod {ns}/dbg terminated (Error)".encode())
            assert term.proc.wait(timeout=30) == 3
    finally:
        term.close()


def test_an_exec_ends_with_137_when_its_container_stops(core_api: Any, http: httpx.Client, ns: str) -> None:
    """The pod is deleted under a running command: the runtime kills it, as SIGKILL's 137."""
    make_running(http, ns, busybox("doomed"))
    ws = stream(core_api.connect_get_namespaced_pod_exec, "doomed", ns, command=["sh", "-c", "sleep 3600"],
                stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
    ws.update(timeout=1)
    assert ws.is_open()
    http.request("DELETE", f"/api/v1/namespaces/{ns}/pods/doomed", json={"gracePeriodSeconds": 1}).raise_for_status()
    ws.run_forever(timeout=30)
    assert not ws.is_open()
    assert ws.returncode == 137


def test_exec_on_a_failed_node_is_the_proxys_dial_error(http: httpx.Client, ns: str) -> None:
    pod = make_running(http, ns, busybox("stranded"))
    node = pod["spec"]["nodeName"]
    ip = next(a["address"] for a in http.get(f"/api/v1/nodes/{node}").json()["status"]["addresses"]
              if a["type"] == "InternalIP")
    patch = {"metadata": {"annotations": {"sim.minik3s.io/failed": "true"}}}
    http.patch(f"/api/v1/nodes/{node}", json=patch,
               headers={"Content-Type": "application/merge-patch+json"}).raise_for_status()
    try:
        def refused() -> dict[str, Any] | None:
            r = http.get(f"/api/v1/namespaces/{ns}/pods/stranded/exec", params={"command": "true", "stdout": "1"})
            return r.json() if r.status_code == 500 else None
        status = wait_for(refused, timeout=15)
        assert status["message"] == f"error dialing backend: dial tcp {ip}:10250: connect: connection refused"
        assert "reason" not in status
    finally:
        patch["metadata"]["annotations"]["sim.minik3s.io/failed"] = None  # type: ignore[index]
        http.patch(f"/api/v1/nodes/{node}", json=patch,
                   headers={"Content-Type": "application/merge-patch+json"}).raise_for_status()


def test_the_exec_example_shows_what_its_comments_say(kubectl_bin: Path, minik3s_cluster: Cluster,
                                                      http: httpx.Client, ns: str) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "exec" / "app.yaml"
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "apply", "-f", str(example))
    assert r.returncode == 0, r.stderr
    pod = running(http, ns, "web")
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "web", "--", "printenv", "LOG_LEVEL", "DB_PASSWORD",
                "POD_IP")
    assert r.stdout == f"debug\ns3cr3t\n{pod['status']['podIP']}\n", r.stderr
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "web", "--", "cat", "/etc/app/app.properties")
    assert r.stdout == "mode=fast\nreplicas=3\n"
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "web", "--", "touch", "/etc/app/x")
    assert (r.returncode, r.stderr) == (1, "touch: /etc/app/x: Read-only file system\n"
                                           "command terminated with exit code 1\n")
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "cp", str(example), "web:/tmp/app.yaml")
    assert r.returncode == 0, r.stderr
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "web", "--", "wc", "-l", "/tmp/app.yaml")
    assert r.stdout == f"{len(example.read_text().splitlines())} /tmp/app.yaml\n"


# ---- port-forward ---------------------------------------------------------------------------------


def test_portforward_reaches_the_nginx_images_server(core_api: Any, http: httpx.Client, ns: str) -> None:
    """The Python client's own test_portforward_http (nginx's page through a forwarded socket),
    plus a file an exec wrote served by that server, a 404, and a port nothing listens on."""
    import urllib.request

    from kubernetes.stream import portforward

    make_running(http, ns, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                            "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}})
    stream(core_api.connect_get_namespaced_pod_exec, "web", ns,
           command=["sh", "-c", "echo hello > /usr/share/nginx/html/hi.txt"],
           stderr=True, stdin=False, stdout=True, tty=False)

    def get(path: str) -> tuple[int, str, str]:
        pf = portforward(core_api.connect_get_namespaced_pod_portforward, "web", ns, ports="80")
        sock = pf.socket(80)
        sock.setblocking(True)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n".encode())
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
        head, _, body = raw.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        ctype = next(ln.split(": ", 1)[1] for ln in lines if ln.startswith("Content-Type: "))
        return int(lines[0].split()[1]), ctype, body.decode()

    code, ctype, body = get("/")
    assert (code, ctype) == (200, "text/html") and "<h1>Welcome to nginx!</h1>" in body
    assert get("/hi.txt") == (200, "text/plain", "hello\n")
    assert get("/nope")[0] == 404

    # the client's urllib path, as the upstream test runs it
    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        pf = portforward(core_api.connect_get_namespaced_pod_portforward, "web", ns, ports=str(address[1]))
        return pf.socket(address[1])

    original = socket.create_connection
    socket.create_connection = create_connection
    try:
        with urllib.request.urlopen(f"http://web.{ns}.kubernetes/") as resp:
            assert resp.status == 200 and "<h1>Welcome to nginx!</h1>" in resp.read().decode()
    finally:
        socket.create_connection = original

    pf = portforward(core_api.connect_get_namespaced_pod_portforward, "web", ns, ports="8080")
    sock = pf.socket(8080)
    sock.setblocking(True)
    assert sock.recv(1024) == b""
    error = pf.error(8080)
    assert error is not None and error.startswith("error forwarding port 8080 to pod ")
    assert "dial tcp4 127.0.0.1:8080: connect: connection refused" in error


def test_portforward_refusals(http: httpx.Client, ns: str) -> None:
    make_running(http, ns, busybox("pfr"))
    r = http.post(f"/api/v1/namespaces/{ns}/pods/pfr/portforward?ports=80")
    assert r.status_code == 400 and "WebSocket" in r.json()["message"]
    ws_headers = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                  "Sec-WebSocket-Key": base64.b64encode(b"0123456789abcdef").decode()}
    r = http.get(f"/api/v1/namespaces/{ns}/pods/pfr/portforward", headers=ws_headers)
    assert (r.status_code, r.text) == (400, 'query parameter "port" is required\n')
    r = http.get(f"/api/v1/namespaces/{ns}/pods/pfr/portforward?ports=http", headers=ws_headers)
    assert r.status_code == 400 and r.text.startswith('unable to parse "http" as a port')


def test_attach_to_a_played_loop_prints_its_lines_as_they_fall_due(minik3s_cluster: Cluster, http: httpx.Client,
                                                                   ns: str) -> None:
    make_running(http, ns, busybox("ticker", "while true; do echo tick; sleep 1; done"))
    url = exec_url(minik3s_cluster, ns, "ticker", stdout="1").replace("/exec?", "/attach?")

    async def attach() -> list[Any]:
        frames: list[Any] = []
        async with aiohttp.ClientSession() as s, s.ws_connect(url, protocols=("v4.channel.k8s.io",)) as ws:
            async with asyncio.timeout(10):
                async for msg in ws:
                    frames.append(msg.data)
                    if frames.count(b"\x01tick\n") == 2:
                        break
        return frames

    frames = asyncio.run(attach())
    assert frames[0] == b"\x01" and frames.count(b"\x01tick\n") == 2


# ---- port-forward: kubectl's SPDY tunnelled in WebSocket --------------------------------------------


def _forwarding(proc: subprocess.Popen[str]) -> int:
    """The local port `kubectl port-forward ... :REMOTE` chose, from its first line."""
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("Forwarding from 127.0.0.1:"), line + (proc.stderr.read() if proc.stderr else "")
    return int(line.split(":")[1].split()[0])


def test_kubectl_port_forward_reaches_nginx_and_reports_a_refused_port(kubectl_bin: Path, minik3s_cluster: Cluster,
                                                                      core_api: Any, http: httpx.Client,
                                                                      ns: str) -> None:
    """`kubectl port-forward` (1.33: SPDY/3.1 in WebSocket, subprotocol SPDY/3.1+portforward.k8s.io):
    connections through the local port reach the nginx image's server, one SPDY stream pair each;
    a port nothing listens on gets containerd's refusal on the error stream, which kubectl prints
    before it gives up with `lost connection to pod` (exit 1)."""
    make_running(http, ns, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                            "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}})
    stream(core_api.connect_get_namespaced_pod_exec, "web", ns,
           command=["sh", "-c", "echo forwarded > /usr/share/nginx/html/pf.txt"],
           stderr=True, stdin=False, stdout=True, tty=False)
    base = [str(kubectl_bin), "--kubeconfig", str(minik3s_cluster.kubeconfig_path), "-n", ns, "port-forward"]
    proc = subprocess.Popen([*base, "pod/web", ":80"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = _forwarding(proc)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20) as web:
            first = web.get("/")
            assert first.status_code == 200 and "<h1>Welcome to nginx!</h1>" in first.text
            assert first.headers["server"].startswith("nginx/")
            second = web.get("/pf.txt")  # the same kept-alive connection: one stream pair
            assert (second.status_code, second.text) == (200, "forwarded\n")
            assert web.get("/missing").status_code == 404
        with httpx.Client(timeout=20) as other:  # a second local connection: a second pair
            assert other.get(f"http://127.0.0.1:{port}/pf.txt").text == "forwarded\n"
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    proc = subprocess.Popen([*base, "web", ":81"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = _forwarding(proc)
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: web\r\n\r\n")
            assert sock.recv(1024) == b""  # the data stream ends with nothing on it
        _out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 1
    assert "an error occurred forwarding" in err and "error forwarding port 81 to pod " in err
    assert "dial tcp4 127.0.0.1:81: connect: connection refused" in err
    assert err.rstrip().endswith("error: lost connection to pod")


class _SpdyClient:
    """A SPDY/3 client's side of the tunnel, written from the wire format (not the server's
    encoder): its own deflate stream primed with the dictionary, and the server's frames read
    with the server's decoder."""

    def __init__(self, ws: Any) -> None:
        from apiserver.handlers import spdy

        self.spdy, self.ws = spdy, ws
        self.deflate = zlib.compressobj(9, zlib.DEFLATED, 15, 8, zlib.Z_DEFAULT_STRATEGY, spdy.DICTIONARY)
        self.decoder = spdy.Decoder()
        self.pending: list[Any] = []

    def block(self, headers: dict[str, str]) -> bytes:
        raw = struct.pack(">I", len(headers))
        for k, v in headers.items():
            raw += struct.pack(">I", len(k)) + k.encode() + struct.pack(">I", len(v)) + v.encode()
        return self.deflate.compress(raw) + self.deflate.flush(zlib.Z_SYNC_FLUSH)

    async def syn_stream(self, sid: int, headers: dict[str, str], fin: bool = False) -> None:
        body = struct.pack(">IIH", sid, 0, 0) + self.block(headers)
        frame = struct.pack(">HHI", 0x8003, 1, (int(fin) << 24) | len(body)) + body
        for k in range(0, len(frame), 5):  # Go's framer writes field by field: split messages
            await self.ws.send_bytes(frame[k:k + 5])

    async def data(self, sid: int, payload: bytes, fin: bool = False) -> None:
        await self.ws.send_bytes(struct.pack(">II", sid, (int(fin) << 24) | len(payload)) + payload)

    async def ping(self, ping_id: int) -> None:
        await self.ws.send_bytes(struct.pack(">HHII", 0x8003, 6, 4, ping_id))

    async def control(self, kind: int, first: int, second: int) -> None:  # RST_STREAM, GOAWAY
        await self.ws.send_bytes(struct.pack(">HHIII", 0x8003, kind, 8, first, second))

    async def frame(self) -> Any:
        while not self.pending:
            msg = await self.ws.receive(timeout=20)
            assert msg.type == aiohttp.WSMsgType.BINARY, msg
            self.pending.extend(self.decoder.feed(msg.data))
        return self.pending.pop(0)

    async def until_fin(self, sids: set[int]) -> dict[int, bytes]:
        got: dict[int, bytes] = {sid: b"" for sid in sids}
        while sids:
            f = await self.frame()
            assert f.kind == self.spdy.DATA and f.stream_id in got, f
            got[f.stream_id] += f.data
            if f.fin:
                sids.discard(f.stream_id)
        return got


def test_spdy_tunnel_streams_pairs_pings_and_rejections(minik3s_cluster: Cluster, http: httpx.Client, ns: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The kubelet's SPDY server on the wire: streams without a port or with a bad type are reset
    (CANCEL), an even or reused stream id is a PROTOCOL_ERROR, client PINGs come back, a pair
    without `requestid` is found by its consecutive ids, each complete pair forwards one
    connection, a lone stream times out with the kubelet's text, a duplicate stream type for a
    pending request gets the kubelet's text on the error stream, a client reset stops a forward,
    nothing is taken after the client's GOAWAY, and a header name that is not lowercase ends the
    connection."""
    from apiserver.handlers import exec_stream, spdy

    monkeypatch.setattr(exec_stream, "STREAM_CREATION_TIMEOUT", 0.3)
    make_running(http, ns, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                            "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}})
    url = f"{minik3s_cluster.url}/api/v1/namespaces/{ns}/pods/web/portforward"

    async def session() -> None:
        async with aiohttp.ClientSession() as s, s.ws_connect(url, protocols=("SPDY/3.1+portforward.k8s.io",)) as ws:
            assert ws.protocol == "SPDY/3.1+portforward.k8s.io"
            c = _SpdyClient(ws)
            await c.syn_stream(1, {"streamtype": "error"})
            f = await c.frame()
            assert (f.kind, f.stream_id, f.status) == (spdy.RST_STREAM, 1, spdy.CANCEL)
            await c.syn_stream(3, {"streamtype": "nope", "port": "80"})
            assert (await c.frame()).status == spdy.CANCEL
            await c.syn_stream(4, {"streamtype": "data", "port": "80"})
            f = await c.frame()
            assert (f.kind, f.stream_id, f.status) == (spdy.RST_STREAM, 4, spdy.PROTOCOL_ERROR)
            await c.ping(7)
            f = await c.frame()
            assert (f.kind, f.ping_id) == (spdy.PING, 7)

            # no requestid: the error stream's id names the pair, the data stream's id minus 2
            await c.syn_stream(5, {"streamtype": "error", "port": "80"})
            await c.syn_stream(7, {"streamtype": "data", "port": "80"})
            for sid in (5, 7):
                f = await c.frame()
                assert (f.kind, f.stream_id, f.headers) == (spdy.SYN_REPLY, sid, {})
            await c.data(5, b"", fin=True)
            await c.data(7, b"GET / HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n", fin=True)
            got = await c.until_fin({5, 7})
            assert got[5] == b"" and got[7].startswith(b"HTTP/1.1 200 OK\r\n") and b"Welcome to nginx!" in got[7]

            # with requestid, data first; port 81 has no listener: the refusal on the error stream
            await c.syn_stream(9, {"streamtype": "data", "port": "81", "requestid": "r1"})
            await c.syn_stream(11, {"streamtype": "error", "port": "81", "requestid": "r1"})
            assert [(await c.frame()).kind for _ in range(2)] == [spdy.SYN_REPLY, spdy.SYN_REPLY]
            got = await c.until_fin({9, 11})
            assert got[9] == b"" and got[11].startswith(b"error forwarding port 81 to pod ")

            # a lone error stream: the kubelet's timeout text on it (the stream stays open)
            await c.syn_stream(13, {"streamtype": "error", "port": "80", "requestid": "lonely"})
            assert (await c.frame()).kind == spdy.SYN_REPLY
            f = await c.frame()
            assert f.stream_id == 13 and f.data.endswith(b", request=lonely) timed out waiting for streams")

            # a second stream of the same type for a pending request: the kubelet's text on its error stream
            await c.syn_stream(15, {"streamtype": "error", "port": "80", "requestid": "dup"})
            await c.syn_stream(17, {"streamtype": "error", "port": "80", "requestid": "dup"})
            assert [(await c.frame()).stream_id for _ in range(2)] == [15, 17]
            f = await c.frame()
            assert (f.stream_id, f.data) == (15, b"error processing stream for request dup: error stream "
                                                 b"already assigned")

            # the client resets a forwarded data stream: nothing more is written on it, and the
            # forward ends (its error stream is closed)
            await c.syn_stream(19, {"streamtype": "error", "port": "80", "requestid": "r3"})
            await c.syn_stream(21, {"streamtype": "data", "port": "80", "requestid": "r3"})
            assert [(await c.frame()).stream_id for _ in range(2)] == [19, 21]
            await c.control(spdy.RST_STREAM, 21, spdy.CANCEL)
            await c.data(21, b"GET / HTTP/1.1\r\nHost: web\r\n\r\n")
            f = await c.frame()
            assert (f.kind, f.stream_id, f.fin, f.data) == (spdy.DATA, 19, True, b"")

            # after the client's GOAWAY no new stream is taken (no reply), the connection still answers
            await c.control(spdy.GOAWAY, 21, 0)
            await c.syn_stream(23, {"streamtype": "error", "port": "80", "requestid": "late"})
            await c.ping(9)
            f = await c.frame()
            assert (f.kind, f.ping_id) == (spdy.PING, 9)

            await c.syn_stream(25, {"Port": "80", "streamtype": "data"})  # the framer's read error
            msg = await ws.receive(timeout=20)
            assert msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)

    asyncio.run(session())


def test_spdy_framing_round_trip_and_bad_input() -> None:
    """The decoder takes the stream in any pieces; what the encoder writes decodes to the same
    frames; bad versions, unknown types and inflating garbage are errors, not crashes."""
    from apiserver.handlers import spdy

    assert len(spdy.DICTIONARY) == 1423 and zlib.adler32(spdy.DICTIONARY) == 0xE3C6A7C2  # SPDY/3's dictionary id
    enc, dec = spdy.Encoder(), spdy.Decoder()
    wire = (enc.syn_reply(1, {"Port": "80", "streamtype": "data"}) + enc.data(1, b"x" * 70000, fin=True)
            + enc.syn_reply(3) + enc.rst_stream(3, spdy.CANCEL) + enc.ping(2) + enc.goaway(3))
    frames = [f for k in range(0, len(wire), 7) for f in dec.feed(wire[k:k + 7])]
    assert [(f.kind, f.stream_id, f.fin) for f in frames] == [
        (spdy.SYN_REPLY, 1, False), (spdy.DATA, 1, True), (spdy.SYN_REPLY, 3, False), (spdy.RST_STREAM, 3, False),
        (spdy.PING, 0, False), (spdy.GOAWAY, 3, False)]
    assert frames[0].headers == {"port": ["80"], "streamtype": ["data"]} and frames[1].data == b"x" * 70000
    assert (frames[3].status, frames[4].ping_id) == (spdy.CANCEL, 2)
    for bad in (struct.pack(">HHI", 0x8002, 6, 4) + b"\0\0\0\1",  # SPDY/2
                struct.pack(">HHI", 0x8003, 99, 0),  # unknown type
                struct.pack(">HHI", 0x8003, 2, 8) + b"\0\0\0\1garb",  # a header block that does not inflate
                struct.pack(">HHI", 0x8003, 6, 3) + b"\0\0\1"):  # a short PING
        with pytest.raises(spdy.SpdyError):
            spdy.Decoder().feed(bad)
    # a header block that inflates beyond the bound
    bomb = zlib.compressobj(9, zlib.DEFLATED, 15, 8, zlib.Z_DEFAULT_STRATEGY, spdy.DICTIONARY)
    block = bomb.compress(struct.pack(">II", 1, 4 << 20) + b"a" * (4 << 20)) + bomb.flush(zlib.Z_SYNC_FLUSH)
    body = struct.pack(">I", 1) + block
    with pytest.raises(spdy.SpdyError, match="too large"):
        spdy.Decoder().feed(struct.pack(">HHI", 0x8003, 2, len(body)) + body)


def test_server_shutdown_ends_open_exec_and_port_forward_sessions(tmp_path: Path) -> None:
    """SIGTERM with an interactive exec and a kubectl-style SPDY port-forward open: both sessions
    are ended by the server (the client sees the socket close; the SPDY connection gets a GOAWAY
    naming the last stream it took first, as spdystream's Close sends) and the process exits 0
    promptly, not after a request timeout."""
    from apiserver.handlers import spdy
    from minik3s.testing.server import ServerProcess

    srv = ServerProcess(tmp_path, nodes=1)
    srv.start()
    try:
        with httpx.Client(base_url=srv.url, timeout=30) as http:
            make_running(http, "default", busybox("held"))
        base = f"{srv.url}/api/v1/namespaces/default/pods/held"

        async def hold_both() -> tuple[Any, Any, float, list[int]]:
            async with aiohttp.ClientSession() as s:
                ex = await s.ws_connect(f"{base}/exec?command=sh&stdin=1&stdout=1&stderr=1",
                                        protocols=("v4.channel.k8s.io",))
                pf = await s.ws_connect(f"{base}/portforward", protocols=("SPDY/3.1+portforward.k8s.io",))
                client = _SpdyClient(pf)
                await client.syn_stream(1, {"streamtype": "error", "port": "80", "requestid": "0"})
                assert (await client.frame()).kind == spdy.SYN_REPLY
                loop = asyncio.get_running_loop()
                started = loop.time()
                stopping = loop.run_in_executor(None, srv.stop)
                ends = []
                goaways = []
                for ws in (ex, pf):
                    while True:  # read until the server closes (the exec's opening frame first)
                        msg = await ws.receive(timeout=15)
                        if msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                            ends.append(msg.type)
                            break
                        if ws is pf and msg.type == aiohttp.WSMsgType.BINARY:
                            goaways += [f.stream_id for f in client.decoder.feed(msg.data) if f.kind == spdy.GOAWAY]
                rc = await stopping
                return ends, rc, loop.time() - started, goaways

        ends, rc, took, goaways = asyncio.run(hold_both())
        assert len(ends) == 2 and rc == 0
        assert goaways == [1]
        assert took < 10, took
    finally:
        srv.kill()


def test_kubectl_port_forward_over_a_plain_spdy_upgrade(kubectl_bin: Path, minik3s_cluster: Cluster,
                                                        http: httpx.Client, ns: str) -> None:
    """Clients that upgrade the connection itself to SPDY/3.1 (kubectl before 1.31, client-go's
    SPDY dialer, `KUBECTL_PORT_FORWARD_WEBSOCKETS=false`): POST, `101 Switching Protocols`, then
    the same stream pairs on the raw connection. A protocol version not served is a 403."""
    make_running(http, ns, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                            "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}})
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "exec", "web", "--", "dd", "if=/dev/zero",
                "of=/usr/share/nginx/html/big.bin", "bs=1024", "count=4096")
    assert r.returncode == 0, r.stderr
    argv = [str(kubectl_bin), "--kubeconfig", str(minik3s_cluster.kubeconfig_path), "-n", ns, "port-forward",
            "-v=6", "pod/web", ":80"]
    env = {**os.environ, "KUBECTL_PORT_FORWARD_WEBSOCKETS": "false"}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        port = _forwarding(proc)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20) as web:
            first = web.get("/")
            assert first.status_code == 200 and "<h1>Welcome to nginx!</h1>" in first.text
            assert web.get("/missing").status_code == 404
            big = web.get("/big.bin")  # 4 MiB: written faster than the client reads (the writer drains)
            assert big.status_code == 200 and big.content == bytes(4 << 20)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert 'verb="POST"' in err and 'status="101 Switching Protocols"' in err, err[-2000:]

    r = http.post(f"/api/v1/namespaces/{ns}/pods/web/portforward",
                  headers={"Connection": "Upgrade", "Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "v9.example"})
    assert (r.status_code, r.text) == (403, "unable to upgrade: unable to negotiate protocol: client supports "
                                            "[v9.example], server accepts [portforward.k8s.io]\n")
    assert r.headers["X-Accepted-Stream-Protocol-Versions"] == "portforward.k8s.io"

    async def upgrade_without_a_version() -> bytes:  # Handshake accepts a client offering none
        host, port = minik3s_cluster.url.split("//", 1)[1].split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"POST /api/v1/namespaces/{ns}/pods/web/portforward HTTP/1.1\r\nHost: {host}:{port}\r\n"
                     "Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\nContent-Length: 0\r\n\r\n".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        writer.close()
        return head

    head = asyncio.run(upgrade_without_a_version()).decode().lower()
    assert head.startswith("http/1.1 101 ") and "upgrade: spdy/3.1" in head
    assert "x-stream-protocol-version" not in head


def test_kubectl_exec_and_cp_over_a_plain_spdy_upgrade(kubectl_bin: Path, minik3s_cluster: Cluster,
                                                       http: httpx.Client, ns: str, tmp_path: Path) -> None:
    """client-go's SPDY executor (Go programs; kubectl with KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false):
    POST, `101 Switching Protocols` with v4.channel.k8s.io, the client's streams, then output,
    stdin, the exit code from the v4 Status, a program the image lacks, `kubectl cp` both ways
    and an attach."""
    make_running(http, ns, busybox("spdy"))
    env = {**os.environ, "KUBECTL_REMOTE_COMMAND_WEBSOCKETS": "false"}

    def k(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(kubectl_bin), "--kubeconfig", str(minik3s_cluster.kubeconfig_path), "-n", ns,
                               *args], input=stdin, capture_output=True, text=True, timeout=30, env=env)

    r = k("-v=6", "exec", "spdy", "--", "sh", "-c", "echo out; echo err >&2")
    assert (r.returncode, r.stdout) == (0, "out\n") and "err\n" in r.stderr
    assert '"POST" url=' in r.stderr and 'status="101 Switching Protocols"' in r.stderr  # not a WebSocket GET
    r = k("exec", "spdy", "--", "sh", "-c", "exit 3")
    assert r.returncode == 3 and "command terminated with exit code 3" in r.stderr
    r = k("exec", "-i", "spdy", "--", "sh", "-c", "cat; echo done", stdin="line 1\nline 2\n")
    assert (r.returncode, r.stdout) == (0, "line 1\nline 2\ndone\n")
    r = k("exec", "spdy", "--", "nosuchprog")
    assert r.returncode == 1 and 'exec: "nosuchprog": executable file not found in $PATH' in r.stderr
    blob = tmp_path / "blob"
    blob.write_bytes(bytes(range(256)) * 1000)
    assert k("cp", str(blob), "spdy:/tmp/blob").returncode == 0
    assert k("cp", "spdy:/tmp/blob", str(tmp_path / "back")).returncode == 0
    assert (tmp_path / "back").read_bytes() == blob.read_bytes()
    r = k("run", "att", "--image=busybox", "-i", "--restart=Never", "--", "sh", stdin="echo attached; exit 4\n")
    assert r.returncode == 4 and "attached" in r.stdout


class _RawSpdyClient(_SpdyClient):
    """The SPDY client over an upgraded TCP connection instead of WebSocket messages."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        super().__init__(self)
        self.reader, self.writer = reader, writer

    async def send_bytes(self, data: bytes) -> None:  # what _SpdyClient calls on its "ws"
        self.writer.write(data)
        await self.writer.drain()

    async def frame(self) -> Any:
        while not self.pending:
            data = await asyncio.wait_for(self.reader.read(65536), 20)
            if not data:
                return None  # the server closed the connection
            self.pending.extend(self.decoder.feed(data))
        return self.pending.pop(0)


def test_spdy_exec_on_the_wire(minik3s_cluster: Cluster, http: httpx.Client, ns: str,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """remotecommand over a plain SPDY upgrade, raw: v2 negotiated, every client stream answered
    with SYN_REPLY, stdout on its stream, a failure's text (no Status before v4) on the error
    stream, FINs then GOAWAY; a client that creates no streams is dropped once the stream
    creation timeout passes."""
    from apiserver.handlers import exec_stream, spdy

    monkeypatch.setattr(exec_stream, "STREAM_CREATION_TIMEOUT", 0.3)
    make_running(http, ns, busybox("raw"))
    host, port = minik3s_cluster.url.split("//", 1)[1].split(":")

    async def upgrade(query: str, version: str) -> tuple[bytes, _RawSpdyClient]:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"POST /api/v1/namespaces/{ns}/pods/raw/exec?{query} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                     f"Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: {version}\r\n"
                     "Content-Length: 0\r\n\r\n".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        return head, _RawSpdyClient(reader, writer)

    async def run() -> None:
        head, c = await upgrade("command=sh&command=-c&command=echo%20hi%3B%20exit%202&stdout=true",
                                "v2.channel.k8s.io")
        assert head.lower().startswith(b"http/1.1 101 ") and b"x-stream-protocol-version: v2.channel.k8s.io" in \
            head.lower()
        await c.syn_stream(1, {"streamtype": "error"})
        await c.syn_stream(3, {"streamtype": "stdout"})
        replies, data = set(), {1: b"", 3: b""}
        fins: set[int] = set()
        while fins != {1, 3}:
            f = await c.frame()
            assert f is not None
            if f.kind == spdy.SYN_REPLY:
                replies.add(f.stream_id)
            elif f.kind == spdy.DATA:
                data[f.stream_id] += f.data
                if f.fin:
                    fins.add(f.stream_id)
        assert replies == {1, 3}
        assert data == {3: b"hi\n", 1: b"command terminated with non-zero exit code: error executing command "
                                       b"[sh -c echo hi; exit 2], exit code 2"}
        f = await c.frame()
        assert f is not None and f.kind == spdy.GOAWAY
        c.writer.close()
        # no streams: the upgrade is answered, then the connection dropped after the timeout
        head, c = await upgrade("command=true&stdout=true", "v4.channel.k8s.io")
        assert head.lower().startswith(b"http/1.1 101 ")
        frames = []
        while (f := await c.frame()) is not None:
            frames.append(f.kind)
        assert frames == [spdy.GOAWAY]
        c.writer.close()

    asyncio.run(run())
