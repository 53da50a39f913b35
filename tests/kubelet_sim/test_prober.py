"""Exec probes of the simulated kubelet (kubelet_sim.prober) on the real in-process API and
a fake clock: the docs' liveness tutorial, readiness flipped by files an exec session wrote,
startup probes, thresholds, timeouts, restartPolicy Never, and what counts as unknown."""

from __future__ import annotations

from typing import Any

from minik3s.api.helpers.container_files import Layered, container_files, writable_layer
from minik3s.api.resources import PODS
from tests.kubelet_sim.conftest import Kubelets

TUTORIAL = {"name": "liveness", "image": "registry.k8s.io/busybox:1.27.2",
            "args": ["/bin/sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"],
            "livenessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "initialDelaySeconds": 5,
                              "periodSeconds": 5}}
MISSING = "cat: can't open '/tmp/ready': No such file or directory\n"


def sleeper(name: str = "app", **probes: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox:1.36", "command": ["sleep", "3600"], **probes}


def cat(path: str, **fields: Any) -> dict[str, Any]:
    return {"exec": {"command": ["cat", path]}, "periodSeconds": 1, **fields}


async def _pod(k: Kubelets, name: str) -> dict[str, Any]:
    pod: dict[str, Any] = await k.cluster.get(PODS, name, "default")
    return pod


def _cs(pod: dict[str, Any], name: str = "app") -> dict[str, Any]:
    return next(c for c in pod["status"]["containerStatuses"] if c["name"] == name)


def _cond(pod: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in pod["status"]["conditions"] if c["type"] == kind)


async def _events(k: Kubelets, pod: str, reason: str) -> list[tuple[str, int]]:
    return [(e["message"], e.get("count", 1)) for e in await k.events(pod) if e["reason"] == reason]


async def test_the_liveness_tutorial_kills_and_restarts_the_container(kubelets: Kubelets) -> None:
    await kubelets.pod("liveness-exec", [TUTORIAL])
    await kubelets.advance(29.5)  # probes at 5 .. 25 s pass: the file is there
    assert await _events(kubelets, "liveness-exec", "Unhealthy") == []
    await kubelets.advance(10)  # removed at 30 s: the probes at 30 and 35 s fail
    failed = "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory\n"
    assert await _events(kubelets, "liveness-exec", "Unhealthy") == [(failed, 2)]
    assert _cs(await _pod(kubelets, "liveness-exec"), "liveness")["restartCount"] == 0
    await kubelets.advance(1)  # the third failure at 40 s: killed, the container stops at 41 s
    assert await _events(kubelets, "liveness-exec", "Killing") == [
        ("Container liveness failed liveness probe, will be restarted", 1)]
    assert _cs(await _pod(kubelets, "liveness-exec"), "liveness")["restartCount"] == 0
    await kubelets.advance(1)
    cs = _cs(await _pod(kubelets, "liveness-exec"), "liveness")
    assert cs["restartCount"] == 1 and "running" in cs["state"]
    last = cs["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (137, "Error")
    assert (last["startedAt"], last["finishedAt"]) == ("2026-01-01T00:00:00Z", "2026-01-01T00:00:41Z")
    # the new run starts its script over: /tmp/healthy is back, and goes again 30 s later
    await kubelets.advance(29)  # probes at 46 .. 66 s pass
    assert await _events(kubelets, "liveness-exec", "Unhealthy") == [(failed, 3)]
    await kubelets.advance(11)  # gone again at 71 s: failures at 71, 76 and 81 s
    assert await _events(kubelets, "liveness-exec", "Unhealthy") == [(failed, 6)]
    assert await _events(kubelets, "liveness-exec", "Killing") == [
        ("Container liveness failed liveness probe, will be restarted", 2)]


async def test_readiness_follows_files_an_exec_session_writes(kubelets: Kubelets) -> None:
    made = await kubelets.pod("ready", [sleeper(readinessProbe=cat("/tmp/ready"))])
    await kubelets.advance(2.5)  # probes at 0, 1 and 2 s fail
    pod = await _pod(kubelets, "ready")
    assert _cs(pod)["ready"] is False and _cs(pod)["started"] is True
    assert _cond(pod, "Ready")["status"] == "False"
    assert _cond(pod, "ContainersReady")["message"] == "containers with unready status: [app]"
    assert await _events(kubelets, "ready", "Unhealthy") == [(f"Readiness probe failed: {MISSING}", 3)]
    # `kubectl exec ready -- touch /tmp/ready`: the run's writable layer
    layer = writable_layer(made["metadata"]["uid"], "app", 0)
    layer["/tmp/ready"] = b""
    await kubelets.advance(1)
    pod = await _pod(kubelets, "ready")
    assert _cs(pod)["ready"] is True and _cond(pod, "Ready")["status"] == "True"
    # `kubectl exec ready -- rm /tmp/ready`: unready after failureThreshold (3) failures, never restarted
    Layered(layer, {}).pop("/tmp/ready")
    await kubelets.advance(2)
    assert _cs(await _pod(kubelets, "ready"))["ready"] is True
    await kubelets.advance(1)
    pod = await _pod(kubelets, "ready")
    assert _cs(pod)["ready"] is False and _cs(pod)["restartCount"] == 0
    assert await _events(kubelets, "ready", "Killing") == []


async def test_success_threshold_needs_consecutive_passes(kubelets: Kubelets) -> None:
    made = await kubelets.pod("slow", [sleeper(readinessProbe=cat("/tmp/ready", successThreshold=3))])
    writable_layer(made["metadata"]["uid"], "app", 0)["/tmp/ready"] = b""  # after the probe at 0 s
    await kubelets.advance(2.5)  # passes at 1 and 2 s
    assert _cs(await _pod(kubelets, "slow"))["ready"] is False
    await kubelets.advance(1)  # the third at 3 s
    assert _cs(await _pod(kubelets, "slow"))["ready"] is True


async def test_a_failing_startup_probe_kills_before_liveness_runs(kubelets: Kubelets) -> None:
    await kubelets.pod("boot", [sleeper(startupProbe=cat("/tmp/booted", failureThreshold=2),
                                        livenessProbe=cat("/tmp/never"))])
    await kubelets.advance(0.5)
    pod = await _pod(kubelets, "boot")
    assert (_cs(pod)["started"], _cs(pod)["ready"]) == (False, False)
    await kubelets.advance(1)  # failures at 0 and 1 s: killed; the liveness probe never ran
    assert await _events(kubelets, "boot", "Unhealthy") == [
        ("Startup probe failed: cat: can't open '/tmp/booted': No such file or directory\n", 2)]
    assert await _events(kubelets, "boot", "Killing") == [
        ("Container app failed startup probe, will be restarted", 1)]
    await kubelets.advance(1)
    assert _cs(await _pod(kubelets, "boot"))["restartCount"] == 1


async def test_a_passing_startup_probe_starts_the_container_then_liveness_runs(kubelets: Kubelets) -> None:
    await kubelets.pod("boot", [{"name": "app", "image": "busybox:1.36",
                                 "command": ["sh", "-c", "sleep 2; touch /tmp/booted; sleep 3600"],
                                 "startupProbe": cat("/tmp/booted"), "livenessProbe": cat("/tmp/booted")}])
    await kubelets.advance(1.5)
    assert _cs(await _pod(kubelets, "boot"))["started"] is False
    await kubelets.advance(1)
    pod = await _pod(kubelets, "boot")
    assert (_cs(pod)["started"], _cs(pod)["ready"]) == (True, True)  # no readiness probe: ready once started
    await kubelets.advance(10)
    assert await _events(kubelets, "boot", "Killing") == []
    assert [m for m, _ in await _events(kubelets, "boot", "Unhealthy")] == [
        "Startup probe failed: cat: can't open '/tmp/booted': No such file or directory\n"]


async def test_restart_policy_never_ends_the_pod(kubelets: Kubelets) -> None:
    pod = {"metadata": {"name": "never", "namespace": "default"},
           "spec": {"nodeName": "node-1", "restartPolicy": "Never",
                    "containers": [sleeper(livenessProbe=cat("/tmp/ok", failureThreshold=1))]}}
    await kubelets.cluster.create(PODS, pod)
    await kubelets.advance(2)
    assert await _events(kubelets, "never", "Killing") == [("Container app failed liveness probe", 1)]
    got = await _pod(kubelets, "never")
    assert got["status"]["phase"] == "Failed"
    assert _cs(got)["state"]["terminated"]["exitCode"] == 137 and _cs(got)["restartCount"] == 0


async def test_a_command_over_its_timeout_fails(kubelets: Kubelets) -> None:
    await kubelets.pod("slowprobe", [sleeper(readinessProbe={
        "exec": {"command": ["sh", "-c", "sleep 5"]}, "timeoutSeconds": 2, "periodSeconds": 10})])
    await kubelets.advance(0.5)
    assert await _events(kubelets, "slowprobe", "Unhealthy") == [
        ('Readiness probe failed: command timed out: "sh -c sleep 5" timed out after 2s', 1)]


async def test_what_the_simulation_cannot_know_passes(kubelets: Kubelets) -> None:
    volumes = [{"name": "cfg", "configMap": {"name": "settings"}}, {"name": "scratch", "emptyDir": {}}]
    containers = [
        # a program the simulated image does not have
        sleeper("db", readinessProbe={"exec": {"command": ["pg_isready", "-U", "postgres"]}, "periodSeconds": 1}),
        # a file from a ConfigMap the kubelet here does not read
        sleeper("cfg", readinessProbe=cat("/etc/app/ready"),
                volumeMounts=[{"name": "cfg", "mountPath": "/etc/app"}]),
        # an emptyDir's content is known: empty, so this one fails
        sleeper("scratch", readinessProbe=cat("/scratch/ready"),
                volumeMounts=[{"name": "scratch", "mountPath": "/scratch"}]),
    ]
    await kubelets.cluster.create(PODS, {"metadata": {"name": "mixed", "namespace": "default"},
                                         "spec": {"nodeName": "node-1", "containers": containers,
                                                  "volumes": volumes}})
    await kubelets.advance(3)
    pod = await _pod(kubelets, "mixed")
    assert {c: _cs(pod, c)["ready"] for c in ("db", "cfg", "scratch")} == {"db": True, "cfg": True, "scratch": False}
    assert [m for m, _ in await _events(kubelets, "mixed", "Unhealthy")] == [
        "Readiness probe failed: cat: can't open '/scratch/ready': No such file or directory\n"]


async def test_probes_stop_when_the_pod_is_deleted(kubelets: Kubelets) -> None:
    await kubelets.pod("bye", [sleeper(livenessProbe=cat("/tmp/ok", periodSeconds=1))], shutdown_seconds="20")
    await kubelets.advance(1.5)
    await kubelets.cluster.delete(PODS, "bye", "default")
    await kubelets.advance(5)
    assert await _events(kubelets, "bye", "Killing") == [("Stopping container app", 1)]


def test_a_runs_files_layer_the_writable_layer_over_the_script_over_the_image() -> None:
    from datetime import UTC, datetime, timedelta

    container = {"name": "c", "image": "busybox", "command": ["sh", "-c", "touch /tmp/a; sleep 5; rm -f /tmp/a"]}
    pod = {"metadata": {"uid": "uid-1"}}
    start = datetime(2026, 1, 1, tzinfo=UTC)
    run0 = {"restartCount": 0, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}
    image = {"/etc/motd": b"hi\n"}

    def at(status: dict[str, Any], seconds: float) -> set[str]:
        return set(container_files(pod, container, status, image, start + timedelta(seconds=seconds)))

    assert at(run0, 1) == {"/etc/motd", "/tmp/a"}
    assert at(run0, 5) == {"/etc/motd"}
    assert at({"restartCount": 0, "state": {"waiting": {}}}, 1) == {"/etc/motd"}  # no start known
    files = container_files(pod, container, run0, image, start + timedelta(seconds=1))
    files["/tmp/b"] = b"x"
    del files["/etc/motd"]  # a whiteout in the run's layer; the image keeps its file
    assert at(run0, 1) == {"/tmp/a", "/tmp/b"}
    assert at({**run0, "restartCount": 1}, 1) == {"/etc/motd", "/tmp/a"}  # a new run
    assert image == {"/etc/motd": b"hi\n"}


def nginx(name: str = "web", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "nginx:1.27", "ports": [{"name": "http", "containerPort": 80}], **fields}


def http(path: str, port: Any = 80, **fields: Any) -> dict[str, Any]:
    return {"httpGet": {"path": path, "port": port}, "periodSeconds": 1, **fields}


async def test_nginx_answers_http_probes_from_its_document_root(kubelets: Kubelets) -> None:
    made = await kubelets.pod("web", [nginx(readinessProbe=http("/", "http")),
                                      nginx("health", readinessProbe=http("/healthz"))])
    await kubelets.advance(2.5)
    pod = await _pod(kubelets, "web")
    assert (_cs(pod, "web")["ready"], _cs(pod, "health")["ready"]) == (True, False)
    assert await _events(kubelets, "web", "Unhealthy") == [("Readiness probe failed: HTTP probe failed with statuscode: 404", 3)]
    # `kubectl exec web -c health -- sh -c 'echo ok > /usr/share/nginx/html/healthz'`
    writable_layer(made["metadata"]["uid"], "health", 0)["/usr/share/nginx/html/healthz"] = b"ok\n"
    await kubelets.advance(1)
    assert _cs(await _pod(kubelets, "web"), "health")["ready"] is True


async def test_nothing_listening_refuses_the_probe(kubelets: Kubelets) -> None:
    await kubelets.pod("web", [nginx(livenessProbe={"tcpSocket": {"port": 8080}, "periodSeconds": 1},
                                     readinessProbe=http("/healthz", 8080))])
    await kubelets.advance(2.5)
    pod = await _pod(kubelets, "web")
    ip = pod["status"]["podIP"]
    refused = f"dial tcp {ip}:8080: connect: connection refused"
    assert sorted(await _events(kubelets, "web", "Unhealthy")) == [
        (f"Liveness probe failed: {refused}", 3), (f'Readiness probe failed: Get "http://{ip}:8080/healthz": {refused}', 3)]
    assert await _events(kubelets, "web", "Killing") == [("Container web failed liveness probe, will be restarted", 1)]
    await kubelets.advance(1)
    assert _cs(await _pod(kubelets, "web"), "web")["restartCount"] == 1


async def test_https_to_a_plain_http_server_fails(kubelets: Kubelets) -> None:
    await kubelets.pod("web", [nginx(readinessProbe=http("/", 80, failureThreshold=1) | {
        "httpGet": {"path": "/", "port": 80, "scheme": "HTTPS"}})])
    await kubelets.advance(0.5)
    ip = (await _pod(kubelets, "web"))["status"]["podIP"]
    assert await _events(kubelets, "web", "Unhealthy") == [
        (f'Readiness probe failed: Get "https://{ip}:80/": http: server gave HTTP response to HTTPS client', 1)]


async def test_network_probes_the_simulation_cannot_decide_pass(kubelets: Kubelets) -> None:
    volumes = [{"name": "site", "configMap": {"name": "site"}}, {"name": "conf", "configMap": {"name": "conf"}}]
    containers = [
        # the document comes from a ConfigMap the kubelet here does not read
        nginx("site", readinessProbe=http("/healthz"), volumeMounts=[{"name": "site", "mountPath": "/usr/share/nginx/html"}]),
        # its own configuration may listen elsewhere: the probe is not run (passes once its delay is over)
        nginx("conf", readinessProbe=http("/healthz", 8080), volumeMounts=[{"name": "conf", "mountPath": "/etc/nginx/conf.d"}]),
        # another container of the pod, whose program is not known, may listen on 9113
        nginx("metrics", readinessProbe={"tcpSocket": {"port": 9113}, "periodSeconds": 1}),
        {"name": "exporter", "image": "nginx/nginx-prometheus-exporter:1.3"},
        # a port name the container does not declare
        nginx("named", readinessProbe=http("/", "admin")),
        # a command of its own: not nginx's default server
        nginx("custom", command=["nginx", "-c", "/tmp/other.conf"], readinessProbe=http("/healthz")),
    ]
    await kubelets.cluster.create(PODS, {"metadata": {"name": "mixed", "namespace": "default"},
                                         "spec": {"nodeName": "node-1", "containers": containers, "volumes": volumes}})
    await kubelets.advance(3)
    pod = await _pod(kubelets, "mixed")
    assert all(cs["ready"] for cs in pod["status"]["containerStatuses"]), pod["status"]["containerStatuses"]
    assert await _events(kubelets, "mixed", "Unhealthy") == []


async def test_a_late_sync_runs_only_the_latest_tick(kubelets: Kubelets) -> None:
    await kubelets.pod("late", [sleeper(readinessProbe=cat("/tmp/ready"))])
    assert await _events(kubelets, "late", "Unhealthy") == [(f"Readiness probe failed: {MISSING}", 1)]
    await kubelets.advance(10, step=10)  # ten periods pass before the kubelet looks again
    assert await _events(kubelets, "late", "Unhealthy") == [(f"Readiness probe failed: {MISSING}", 2)]
    await kubelets.advance(2)
    assert await _events(kubelets, "late", "Unhealthy") == [(f"Readiness probe failed: {MISSING}", 4)]


async def test_a_sidecar_failing_its_liveness_probe_is_restarted(kubelets: Kubelets) -> None:
    sidecar = sleeper("proxy", restartPolicy="Always", livenessProbe=cat("/tmp/alive", failureThreshold=1))
    await kubelets.pod("side", [sleeper()], init=[sidecar])
    await kubelets.advance(0.5)  # the probe at 0 s fails: killed, ends at 1 s
    assert await _events(kubelets, "side", "Killing") == [("Container proxy failed liveness probe, will be restarted", 1)]
    await kubelets.advance(1)
    pod = await _pod(kubelets, "side")
    proxy = next(c for c in pod["status"]["initContainerStatuses"] if c["name"] == "proxy")
    assert proxy["restartCount"] == 1 and proxy["lastState"]["terminated"]["exitCode"] == 137
    assert _cs(pod)["restartCount"] == 0  # the regular container runs on


async def test_a_probe_grace_period_cuts_a_slow_shutdown(kubelets: Kubelets) -> None:
    # killed at 0 s; the container would take 20 s to stop, the probe's grace period gives it 3
    probe = cat("/tmp/ok", failureThreshold=1, terminationGracePeriodSeconds=3)
    await kubelets.pod("slowstop", [sleeper(livenessProbe=probe)], shutdown_seconds="20")
    await kubelets.advance(2.5)
    assert _cs(await _pod(kubelets, "slowstop"))["restartCount"] == 0
    await kubelets.advance(1)
    cs = _cs(await _pod(kubelets, "slowstop"))
    assert cs["restartCount"] == 1 and cs["lastState"]["terminated"]["finishedAt"] == "2026-01-01T00:00:03Z"
