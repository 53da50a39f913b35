"""The scheduler also runs on its own against any API server: `minik3s scheduler --server URL`."""

from __future__ import annotations

import subprocess
import sys

import httpx

from minik3s.testing.wait import wait_for


def test_standalone_scheduler_binds_pods_over_http(minik3s_server_factory, tmp_path):
    srv = minik3s_server_factory("--disable", "scheduler", "--disable", "controllers", nodes=3)
    log = open(tmp_path / "scheduler.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "minik3s", "scheduler", "--server", srv.url],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(base_url=srv.url, timeout=30) as http:
            wait_for(lambda: len(http.get("/api/v1/nodes").json()["items"]) == 3, timeout=30)
            r = http.post("/api/v1/namespaces/default/pods", json={
                "metadata": {"name": "standalone"},
                "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]}})
            assert r.status_code == 201
            node = wait_for(lambda: http.get("/api/v1/namespaces/default/pods/standalone").json()["spec"]
                            .get("nodeName"), timeout=30)
            assert node in {"node-1", "node-2", "node-3"}
            # the Event is written after the bind, asynchronously (as upstream's event broadcaster)
            items = wait_for(lambda: http.get("/api/v1/namespaces/default/events", params={
                "fieldSelector": "involvedObject.name=standalone,reason=Scheduled"}).json()["items"], timeout=30)
            assert [e["message"] for e in items] == [f"Successfully assigned default/standalone to {node}"]
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def test_invalid_scheduler_config_fails_at_start_naming_the_field(tmp_path):
    cfg = tmp_path / "sched.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n"
                   "      enabled:\n      - name: NodeResourcesFit\n        weight: -3\n")
    out = subprocess.run([sys.executable, "-m", "minik3s", "server", "--port", "0", "--data-dir",
                          str(tmp_path / "d"), "--nodes", "0", "--scheduler-config", str(cfg)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "profiles[0].plugins.score.enabled[0].weight" in out.stderr, out.stderr[-2000:]
