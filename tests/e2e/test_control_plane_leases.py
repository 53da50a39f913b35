"""The control plane's Leases in kube-system, as `kubectl get leases -n kube-system` shows them on
a real cluster: kube-scheduler and kube-controller-manager (leader election, renewed every 2 s,
released on shutdown) and kube-apiserver's identity Lease; a standalone scheduler elects on the
same Lease and waits while another scheduler holds it."""

from __future__ import annotations

import subprocess
import sys

import httpx

from minik3s.testing.wait import wait_for

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"


def _lease(http: httpx.Client, name: str) -> dict:
    r = http.get(f"{LEASES}/{name}")
    return r.json() if r.status_code == 200 else {}


def test_embedded_components_hold_their_leases_and_release_them_on_shutdown(minik3s_server_factory):
    srv = minik3s_server_factory(nodes=1)
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        def names():
            return {i["metadata"]["name"] for i in http.get(LEASES).json()["items"]}

        wait_for(lambda: {"kube-scheduler", "kube-controller-manager"} <= names(), timeout=30)
        identity = [n for n in names() if n.startswith("apiserver-")]
        assert len(identity) == 1 and len(identity[0]) == len("apiserver-") + 26
        ident = _lease(http, identity[0])
        assert ident["metadata"]["labels"]["apiserver.kubernetes.io/identity"] == "kube-apiserver"
        sched = _lease(http, "kube-scheduler")["spec"]
        assert sched["leaseDurationSeconds"] == 15 and sched["leaseTransitions"] == 0
        host, _, uid = sched["holderIdentity"].rpartition("_")
        assert host and len(uid) == 36
        first = sched["renewTime"]
        wait_for(lambda: _lease(http, "kube-scheduler")["spec"]["renewTime"] != first, timeout=10)
        managers = {m["manager"] for m in _lease(http, "kube-controller-manager")["metadata"]["managedFields"]}
        assert managers == {"kube-controller-manager"}
    assert srv.stop() == 0
    srv.start()
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        # the graceful stop released it (empty holder, 1 s), so the restarted server took it over
        spec = wait_for(lambda: (s := _lease(http, "kube-scheduler").get("spec")) and
                        s["holderIdentity"] not in ("", sched["holderIdentity"]) and s, timeout=30)
        assert spec["leaseDurationSeconds"] == 15 and spec["leaseTransitions"] == 1


def test_standalone_scheduler_waits_while_another_holds_the_lease(minik3s_server_factory, tmp_path):
    srv = minik3s_server_factory("--disable", "scheduler", "--disable", "controllers", nodes=1)
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        # another scheduler's live Lease (renewed just now, 15 s)
        from datetime import UTC, datetime

        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        r = http.post(LEASES, json={"metadata": {"name": "kube-scheduler"}, "spec": {
            "holderIdentity": "elsewhere_1", "leaseDurationSeconds": 15, "acquireTime": now, "renewTime": now}})
        assert r.status_code == 201
        log = open(tmp_path / "scheduler.log", "w")
        proc = subprocess.Popen([sys.executable, "-m", "minik3s", "scheduler", "--server", srv.url],
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for(lambda: len(http.get("/api/v1/nodes").json()["items"]) == 1, timeout=30)
            assert http.post("/api/v1/namespaces/default/pods", json={
                "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}).status_code == 201
            # the other holder stops renewing: 15 s after the standalone scheduler first saw the
            # record it takes over (one transition) and schedules
            node = wait_for(lambda: http.get("/api/v1/namespaces/default/pods/p").json()["spec"].get("nodeName"),
                            timeout=40)
            assert node == "node-1"
            spec = _lease(http, "kube-scheduler")["spec"]
            assert spec["holderIdentity"] != "elsewhere_1" and spec["leaseTransitions"] == 1
        finally:
            proc.terminate()
            proc.wait(10)
            log.close()
        assert _lease(http, "kube-scheduler")["spec"]["holderIdentity"] == ""  # released on SIGTERM


def test_standalone_scheduler_without_leader_election_writes_no_lease(minik3s_server_factory, tmp_path):
    srv = minik3s_server_factory("--disable", "scheduler", "--disable", "controllers", nodes=1)
    log = open(tmp_path / "scheduler.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "minik3s", "scheduler", "--server", srv.url,
                             "--leader-elect=false"], stdout=log, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(base_url=srv.url, timeout=30) as http:
            wait_for(lambda: len(http.get("/api/v1/nodes").json()["items"]) == 1, timeout=30)
            assert http.post("/api/v1/namespaces/default/pods", json={
                "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}).status_code == 201
            wait_for(lambda: http.get("/api/v1/namespaces/default/pods/p").json()["spec"].get("nodeName"),
                     timeout=30)
            assert http.get(f"{LEASES}/kube-scheduler").status_code == 404
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()
