"""The ServiceAccount admission plugin in a real `minik3s server` process, over HTTP: on by
default (a pod posted into a namespace created a moment before waits for its `default`
account and gets the kube-api-access-* token volume), off with
--disable-admission-plugins=ServiceAccount or without the controllers, and an unknown plugin
name refused at start."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from minik3s.testing.server import ServerProcess

TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


def pod(name: str, **spec: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def wait_for(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_pod_in_a_new_namespace_gets_its_default_account_and_token_volume(
        minik3s_server_factory: Callable[..., ServerProcess]) -> None:
    srv = minik3s_server_factory(nodes=1)
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        r = c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                               "metadata": {"name": "fresh"}})
        assert r.status_code == 201, r.text
        r = c.post("/api/v1/namespaces/fresh/pods", json=pod("web"))  # no wait for the controller first
        assert r.status_code == 201, r.text
        spec = r.json()["spec"]
        assert spec["serviceAccountName"] == "default"
        [vol] = spec["volumes"]
        assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", vol["name"])
        assert vol["projected"]["sources"][1] == {"configMap": {"name": "kube-root-ca.crt",
                                                                "items": [{"key": "ca.crt", "path": "ca.crt"}]}}
        assert spec["containers"][0]["volumeMounts"] == [{"name": vol["name"], "readOnly": True,
                                                          "mountPath": TOKEN_PATH}]

        def running() -> bool:
            return bool(c.get("/api/v1/namespaces/fresh/pods/web").json().get("status", {}).get("phase")
                        == "Running")

        wait_for(running, "the pod to run with its token volume")

        r = c.post("/api/v1/namespaces/fresh/pods", json=pod("robot", serviceAccountName="robot"))
        assert r.status_code == 403
        status = r.json()
        assert status["reason"] == "Forbidden"
        assert status["message"] == ('pods "robot" is forbidden: error looking up service account fresh/robot: '
                                     'serviceaccount "robot" not found')
        assert c.get("/api/v1/namespaces/fresh/pods/robot").status_code == 404


def test_the_plugin_is_off_when_disabled_or_without_controllers(
        minik3s_server_factory: Callable[..., ServerProcess]) -> None:
    for args in (["--disable-admission-plugins", "ServiceAccount"], ["--disable", "controllers"]):
        srv = minik3s_server_factory(*args)
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            r = c.post("/api/v1/namespaces/default/pods", json=pod("web"))
            assert r.status_code == 201, (args, r.text)
            spec = r.json()["spec"]
            assert "serviceAccountName" not in spec and "volumes" not in spec, args
        srv.stop()


def test_an_unknown_admission_plugin_is_refused_at_start(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "minik3s", "server", "--port", "0", "--data-dir", str(tmp_path),
                           "--disable-admission-plugins", "ServiceAccount,Bogus"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "admission plugin 'Bogus' cannot be disabled" in proc.stdout + proc.stderr
