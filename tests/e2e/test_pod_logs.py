"""`pods/log` on a real cluster (scheduler + simulated kubelets), through the real kubectl 1.33
and plain HTTP: the simulated output (a line when a container run starts, one when it exits,
docs/kubelet-sim.md; a played command's own output), `kubectl logs -f` lasting until the
container exits, `--tail`,
`--timestamps`, `-c`, `--previous`, `limitBytes`, `sinceTime`, and upstream's errors for bad
options (422 on PodLogOptions, 400 for the container choice)."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from minik3s.embed import Cluster
from minik3s.pytest_plugin import cluster_fixture
from minik3s.testing.wait import wait_for

pytestmark = pytest.mark.usefixtures("kubectl_bin")

# a smaller cluster than the other e2e modules: logs need running pods, not many nodes
minik3s_cluster = cluster_fixture(scope="module", name="minik3s_cluster", nodes=2)


def kubectl(bin_: Path, cluster: Cluster, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bin_), "--kubeconfig", str(cluster.kubeconfig_path), *args],
                          capture_output=True, text=True, timeout=timeout)


def pod(name: str, *, containers: tuple[str, ...] = ("c",), restart: str = "Always",
        annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": annotations or {}},
            "spec": {"restartPolicy": restart,
                     "containers": [{"name": c, "image": "example.com/app:1.36"} for c in containers]}}


def make_pod(http: httpx.Client, ns: str, body: dict[str, Any]) -> None:
    http.post(f"/api/v1/namespaces/{ns}/pods", json=body).raise_for_status()


def get_pod(http: httpx.Client, ns: str, name: str) -> dict[str, Any]:
    r = http.get(f"/api/v1/namespaces/{ns}/pods/{name}")
    r.raise_for_status()
    out: dict[str, Any] = r.json()
    return out


def running(http: httpx.Client, ns: str, name: str) -> dict[str, Any]:
    return wait_for(lambda: (p := get_pod(http, ns, name))["status"].get("phase") == "Running" and p, timeout=30)


def log_url(ns: str, name: str) -> str:
    return f"/api/v1/namespaces/{ns}/pods/{name}/log"


def test_kubectl_logs_timestamps_and_tail(kubectl_bin: Path, minik3s_cluster: Cluster, http: httpx.Client,
                                          ns: str) -> None:
    make_pod(http, ns, pod("web"))
    p = running(http, ns, "web")
    node = p["spec"]["nodeName"]
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "logs", "web")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"minik3s: simulated container of pod {ns}/web on node {node}\n"

    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "logs", "web", "--timestamps")
    started = p["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]  # e.g. ...:05Z
    m = re.fullmatch(r"(\S+) minik3s: simulated container of pod \S+ on node \S+\n", r.stdout)
    assert m, r.stdout
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z", m[1])
    assert m[1][:19] == started[:19]

    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "logs", "web", "--tail=0")
    assert r.returncode == 0 and r.stdout == ""
    assert http.get(log_url(ns, "web"), params={"limitBytes": "9"}).text == "minik3s: "
    assert http.get(log_url(ns, "web"), params={"sinceTime": "2999-01-01T00:00:00Z"}).text == ""
    assert http.get(log_url(ns, "web"), params={"sinceSeconds": "3600"}).text.startswith("minik3s: ")


def test_kubectl_logs_follow_returns_when_the_container_exits(kubectl_bin: Path, minik3s_cluster: Cluster,
                                                             http: httpx.Client, ns: str) -> None:
    make_pod(http, ns, pod("short", restart="Never", annotations={"sim.minik3s.io/run-seconds": "2",
                                                                  "sim.minik3s.io/exit-code": "3"}))
    running(http, ns, "short")
    t0 = time.monotonic()
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "logs", "-f", "short", timeout=30)
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"minik3s: simulated container of pod {ns}/short on node ")
    assert lines[1:] == ["minik3s: container c exited with code 3 (Error)"]
    assert get_pod(http, ns, "short")["status"]["phase"] == "Failed"
    assert took < 20
    # after the exit, the whole log (no follow) is the same two lines
    assert kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "logs", "short").stdout == r.stdout


def test_a_played_command_logs_its_output_as_it_runs_and_follow_ends_at_its_exit(
        kubectl_bin: Path, minik3s_cluster: Cluster, http: httpx.Client, ns: str) -> None:
    body = pod("script", restart="Never")
    body["spec"]["containers"][0]["command"] = ["sh", "-c", "echo first; sleep 5; echo second; exit 4"]
    make_pod(http, ns, body)
    running(http, ns, "script")
    # while it sleeps, only what it printed so far
    r = http.get(log_url(ns, "script"))
    assert r.status_code == 200 and r.text == "first\n"
    t0 = time.monotonic()
    r2 = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "logs", "-f", "script", timeout=30)
    assert r2.returncode == 0, r2.stderr
    assert r2.stdout == "first\nsecond\n"
    assert time.monotonic() - t0 < 20
    done = get_pod(http, ns, "script")["status"]
    assert done["phase"] == "Failed" and done["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 4
    stamped = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "logs", "--timestamps", "script").stdout.splitlines()
    assert [ln.split(" ", 1)[1] for ln in stamped] == ["first", "second"]
    assert all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z ", ln) for ln in stamped)


def test_an_endless_loop_prints_as_time_passes_and_follow_streams_it(
        kubectl_bin: Path, minik3s_cluster: Cluster, http: httpx.Client, ns: str) -> None:
    # the manifest of countless tutorials (and lightkube's own e2e test)
    body = pod("ticker", annotations={"sim.minik3s.io/shutdown-seconds": "0"})
    body["spec"]["containers"][0]["command"] = ["sh", "-c", "while true; do echo 'this is a test'; sleep 1; done"]
    make_pod(http, ns, body)
    running(http, ns, "ticker")
    arrived: list[float] = []
    with http.stream("GET", log_url(ns, "ticker"), params={"follow": "true"}, timeout=30) as resp:
        assert resp.status_code == 200
        for line in resp.iter_lines():
            assert line == "this is a test"
            arrived.append(time.monotonic())
            if len(arrived) == 4:
                break
    # the first line(s) at once, then one per second as the loop prints them
    assert arrived[-1] - arrived[0] >= 1.5, arrived
    out = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "logs", "ticker").stdout.splitlines()
    assert len(out) >= 4 and set(out) == {"this is a test"}
    stamped = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "logs", "--timestamps", "--tail=2",
                      "ticker").stdout.splitlines()
    first, second = (float(ln[17:29].rstrip("Z")) for ln in stamped)  # seconds within the minute
    assert round((second - first) % 60, 3) == 1.0
    http.delete(f"/api/v1/namespaces/{ns}/pods/ticker").raise_for_status()


def test_follow_of_an_endless_loop_ends_when_the_pod_is_deleted(http: httpx.Client, ns: str) -> None:
    # the stream waits on the loop's next line and the pod's watch at once: a deletion ends it
    body = pod("looper", annotations={"sim.minik3s.io/shutdown-seconds": "0"})
    body["spec"]["containers"][0]["command"] = ["sh", "-c", "while true; do echo beat; sleep 30; done"]
    make_pod(http, ns, body)
    running(http, ns, "looper")
    with http.stream("GET", log_url(ns, "looper"), params={"follow": "true"}, timeout=30) as resp:
        lines = resp.iter_lines()
        assert next(lines) == "beat"
        deleter = threading.Timer(0.3, lambda: http.delete(f"/api/v1/namespaces/{ns}/pods/looper").raise_for_status())
        deleter.start()
        t0 = time.monotonic()
        rest = list(lines)  # ends with the stream, long before the loop's next beat at 30 s
        deleter.join()
    assert time.monotonic() - t0 < 20
    assert "beat" not in rest


def test_follow_of_a_forever_pod_ends_when_the_pod_is_deleted(http: httpx.Client, ns: str) -> None:
    make_pod(http, ns, pod("forever", annotations={"sim.minik3s.io/shutdown-seconds": "0"}))
    running(http, ns, "forever")
    got: list[str] = []
    with http.stream("GET", log_url(ns, "forever"), params={"follow": "true"}, timeout=30) as resp:
        assert resp.status_code == 200
        lines = resp.iter_lines()
        got.append(next(lines))
        ended = threading.Event()

        def delete() -> None:
            # the stream must still be open: nothing has ended it yet
            assert not ended.is_set()
            http.delete(f"/api/v1/namespaces/{ns}/pods/forever").raise_for_status()

        deleter = threading.Timer(0.5, delete)
        deleter.start()
        got.extend(lines)
        ended.set()
        deleter.join()
    assert got[0].startswith(f"minik3s: simulated container of pod {ns}/forever")
    # graceful deletion: the kubelet stops the container (exit line), or the pod is gone first
    assert all(g.startswith("minik3s: container c exited with code ") for g in got[1:]), got


def test_container_choice_and_previous(kubectl_bin: Path, minik3s_cluster: Cluster, http: httpx.Client,
                                       ns: str) -> None:
    make_pod(http, ns, pod("two", containers=("a", "b")))
    running(http, ns, "two")
    r = http.get(log_url(ns, "two"))
    assert r.status_code == 400
    assert r.json()["message"] == "a container name must be specified for pod two, choose one of: [a b]"
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "logs", "two", "-c", "b")
    assert r.returncode == 0 and r.stdout.endswith(" (container b)\n"), r
    with_init = pod("init", containers=("a", "b"))
    with_init["spec"]["initContainers"] = [{"name": "setup", "image": "example.com/app:1.36"}]
    make_pod(http, ns, with_init)
    r = http.get(log_url(ns, "init"))
    assert r.status_code == 400
    assert r.json()["message"] == "a container name must be specified for pod init, choose one of: [setup a b]"
    r = http.get(log_url(ns, "two"), params={"container": "nope"})
    assert r.status_code == 400 and r.json()["message"] == "container nope is not valid for pod two"

    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "logs", "two", "-c", "a", "--previous")
    assert r.returncode != 0
    assert 'Error from server (BadRequest): previous terminated container "a" in pod "two" not found' in r.stderr

    make_pod(http, ns, pod("again", annotations={"sim.minik3s.io/run-seconds": "1"}))
    wait_for(lambda: (get_pod(http, ns, "again")["status"].get("containerStatuses") or [{}])[0]
             .get("restartCount", 0) >= 1, timeout=30)
    r = kubectl(kubectl_bin, minik3s_cluster, "-n", ns, "logs", "again", "--previous")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "minik3s: container c exited with code 0 (Completed)"


@pytest.mark.parametrize(("params", "code", "message"), [
    ({"tailLines": "-1"}, 422,
     'PodLogOptions "p" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0'),
    ({"limitBytes": "0"}, 422, 'PodLogOptions "p" is invalid: limitBytes: Invalid value: 0: must be greater than 0'),
    ({"sinceSeconds": "0"}, 422,
     'PodLogOptions "p" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0'),
    ({"sinceSeconds": "5", "sinceTime": "2026-01-01T00:00:00Z"}, 422,
     "at most one of `sinceTime` or `sinceSeconds` may be specified"),
    ({"tailLines": "abc"}, 400, 'strconv.ParseInt: parsing "abc": invalid syntax'),
    ({"follow": "maybe"}, 400, 'strconv.ParseBool: parsing "maybe": invalid syntax'),
    ({"sinceTime": "yesterday"}, 400, 'parsing time "yesterday"'),
])
def test_bad_log_options(http: httpx.Client, ns: str, params: dict[str, str], code: int, message: str) -> None:
    make_pod(http, ns, pod("p"))
    r = http.get(log_url(ns, "p"), params=params)
    assert r.status_code == code, r.text
    body = r.json()
    assert body["kind"] == "Status" and message in body["message"]
    if code == 422:
        assert body["reason"] == "Invalid" and body["details"]["kind"] == "PodLogOptions"
    assert http.get(log_url(ns, "missing")).status_code == 404


def test_follow_streams_end_on_server_shutdown(minik3s_server_factory: Any) -> None:
    srv = minik3s_server_factory(nodes=1)
    with httpx.Client(base_url=srv.url, timeout=30) as c:
        make_pod(c, "default", pod("forever"))
        running(c, "default", "forever")
    connected, ended = threading.Event(), threading.Event()
    got: list[str] = []

    def follow() -> None:
        with httpx.Client(base_url=srv.url, timeout=None) as c, \
                c.stream("GET", log_url("default", "forever"), params={"follow": "true"}) as r:
            assert r.status_code == 200
            for line in r.iter_lines():
                got.append(line)
                connected.set()
        ended.set()

    t = threading.Thread(target=follow, daemon=True)
    t.start()
    assert connected.wait(10), "the log stream did not start"
    assert not ended.is_set()  # a running container's log stays open
    assert srv.stop(timeout=15, sig=signal.SIGTERM) == 0
    assert ended.wait(5), "the follow stream was not closed on shutdown"
    assert got[0].startswith("minik3s: simulated container of pod default/forever")
    assert "Traceback" not in srv.tail_log(400)
