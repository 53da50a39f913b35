"""Simulated kubelets against a real `minik3s server` process over HTTP (2 nodes, no scheduler).

Each story creates a pod with spec.nodeName set to a simulated node and watches what the
"kubelet" does with it: start, graceful deletion (shutdown vs grace period), finalizers,
run-seconds exits, and node failure / recovery through the Lease.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubelet_sim.controller import run_standalone
from kubelet_sim.node_agent import fail_node, recover_node
from minik3s.api.errors import NotFoundError
from minik3s.api.resources import LEASES, NODES, PODS
from minik3s.client.rest import HttpClient
from minik3s.testing.server import ServerProcess

pytestmark = pytest.mark.timeout(90)

# a 10 s grace period makes the simulated kubelets renew their Leases every 2 s (grace / 5) rather
# than upstream's 10 s, so the renewal tests wait seconds, not tens of them
DISABLE = ["--disable", "scheduler", "--disable", "controllers", "--disable", "descheduler",
           "--node-monitor-grace-period", "10"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = ServerProcess(Path(tmp_path_factory.mktemp("kubelet-sim")), nodes=2, args=DISABLE)
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
async def client(server: ServerProcess) -> AsyncIterator[HttpClient]:
    c = HttpClient(server.url)
    # the fleet registers right after the server is ready
    await wait_for(lambda: c.get(LEASES, "node-2", "kube-node-lease"), lambda _: True, timeout=30)
    yield c
    await c.close()


async def wait_for(fetch: Any, ok: Any, *, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = await fetch()
            if ok(last):
                return last
        except NotFoundError as e:
            last = e
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s; last={last!r}")
        await asyncio.sleep(0.05)


def pod(name: str, *, node: str = "node-1", annotations: dict[str, str] | None = None,
        finalizers: list[str] | None = None, restart_policy: str = "Always") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "annotations": annotations or {}}
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node, "restartPolicy": restart_policy,
                     "containers": [{"name": "app", "image": "nginx:1.25"}]}}


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


async def get_pod(c: HttpClient, name: str) -> dict[str, Any]:
    return await c.get(PODS, name, "default")


async def gone(c: HttpClient, name: str) -> bool:
    try:
        await c.get(PODS, name, "default")
        return False
    except NotFoundError:
        return True


async def test_pod_on_simulated_node_reaches_running(client: HttpClient) -> None:
    name = unique("web")
    await client.create(PODS, pod(name))
    p = await wait_for(lambda: get_pod(client, name), lambda p: p["status"].get("phase") == "Running")
    st = p["status"]
    assert st["podIP"].startswith("10.244.1.") and st["podIPs"] == [{"ip": st["podIP"]}]
    assert st["hostIP"] == "172.18.0.2"
    assert {c["type"]: c["status"] for c in st["conditions"]} == {
        "PodReadyToStartContainers": "True", "Initialized": "True", "Ready": "True",
        "ContainersReady": "True", "PodScheduled": "True"}
    cs = st["containerStatuses"][0]
    assert (cs["ready"], cs["started"], cs["restartCount"]) == (True, True, 0)
    assert "startedAt" in cs["state"]["running"] and cs["containerID"].startswith("containerd://")
    assert st["startTime"]


async def test_grace_period_ends_before_shutdown_kills_containers(client: HttpClient) -> None:
    name = unique("slow")
    await client.create(PODS, pod(name, annotations={"sim.minik3s.io/shutdown-seconds": "100"}))
    await wait_for(lambda: get_pod(client, name), lambda p: p["status"].get("phase") == "Running")
    current = await get_pod(client, name)
    events: list[str] = []
    seen: list[dict[str, Any]] = []
    last: list[dict[str, Any]] = []

    async def watch() -> None:
        stream = client.watch(PODS, "default", field_selector=f"metadata.name={name}",
                              resource_version=current["metadata"]["resourceVersion"])
        try:
            async for ev in stream:
                events.append(ev.type)
                seen.append(ev.object)
                last[:] = [ev.object]
                if ev.type == "DELETED":
                    return
        finally:
            await stream.close()

    watcher = asyncio.create_task(watch(), name="watch-slow-pod")
    start = time.monotonic()
    deleted = await client.delete(PODS, name, "default", grace_period_seconds=3)
    assert deleted["metadata"]["deletionTimestamp"] and deleted["status"]["phase"] == "Running"
    await asyncio.wait_for(watcher, timeout=6)
    elapsed = time.monotonic() - start
    # Terminating but Running for the whole grace period (shutdown would take 100 s), then killed:
    # every event before the kubelet's final status write still shows the pod Running.
    assert 2.5 <= elapsed <= 4.5, elapsed
    assert events[-1] == "DELETED"
    phases = [p["status"]["phase"] for p in seen]
    n_running = phases.index("Failed")
    assert n_running >= 1 and phases == ["Running"] * n_running + ["Failed"] * (len(phases) - n_running), phases
    # the DELETED event carries the final status the kubelet wrote: killed at the grace period's end
    final = last[0]
    term = final["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (137, "Error")
    assert final["status"]["phase"] == "Failed"


async def test_killed_pod_records_exit_137_in_its_final_status(client: HttpClient) -> None:
    name = unique("killed")
    await client.create(PODS, pod(name, finalizers=["example.com/hold"],
                                  annotations={"sim.minik3s.io/shutdown-seconds": "100"}))
    await wait_for(lambda: get_pod(client, name), lambda p: p["status"].get("phase") == "Running")
    await client.delete(PODS, name, "default", grace_period_seconds=1)
    # the kubelet writes the final status, then confirms with DELETE grace 0 (two writes: wait for both)
    p = await wait_for(lambda: get_pod(client, name), lambda p: p["status"].get("phase") == "Failed"
                       and p["metadata"].get("deletionGracePeriodSeconds") == 0, timeout=5)
    term = p["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (137, "Error")
    await client.patch(PODS, name, {"metadata": {"finalizers": None}}, "default")
    await wait_for(lambda: gone(client, name), lambda g: g, timeout=5)


async def test_grace_zero_removes_at_once(client: HttpClient) -> None:
    name = unique("now")
    await client.create(PODS, pod(name))
    await wait_for(lambda: get_pod(client, name), lambda p: p["status"].get("phase") == "Running")
    await client.delete(PODS, name, "default", grace_period_seconds=0)
    assert await gone(client, name)


async def test_finalizer_keeps_terminating_pod_until_removed(client: HttpClient) -> None:
    name = unique("fin")
    await client.create(PODS, pod(name, finalizers=["example.com/hold"],
                                  annotations={"sim.minik3s.io/shutdown-seconds": "0.2"}))
    await wait_for(lambda: get_pod(client, name), lambda p: p["status"].get("phase") == "Running")
    await client.delete(PODS, name, "default", grace_period_seconds=30)
    # The kubelet's last act is its DELETE with grace 0 (deletionGracePeriodSeconds 0): after it,
    # only the finalizer holds the pod.
    p = await wait_for(lambda: get_pod(client, name), lambda p: p["status"].get("phase") == "Succeeded"
                       and p["metadata"].get("deletionGracePeriodSeconds") == 0)
    assert p["metadata"]["deletionTimestamp"]
    assert not await gone(client, name)
    await client.patch(PODS, name, {"metadata": {"finalizers": None}}, "default")
    await wait_for(lambda: gone(client, name), lambda g: g, timeout=5)


@pytest.mark.parametrize(
    ("restart_policy", "exit_code", "phase"),
    [
        pytest.param("Never", "0", "Succeeded", id="never-exit-0-succeeds"),
        pytest.param("Never", "3", "Failed", id="never-exit-3-fails"),
        pytest.param("OnFailure", "0", "Succeeded", id="onfailure-exit-0-succeeds"),
    ],
)
async def test_run_seconds_pods_finish_with_exit_code(client: HttpClient, restart_policy: str, exit_code: str,
                                                      phase: str) -> None:
    name = unique("job")
    await client.create(PODS, pod(name, restart_policy=restart_policy, node="node-2", annotations={
        "sim.minik3s.io/run-seconds": "0.5", "sim.minik3s.io/exit-code": exit_code}))
    p = await wait_for(lambda: get_pod(client, name), lambda p: p["status"].get("phase") == phase)
    term = p["status"]["containerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == int(exit_code)


async def test_run_seconds_with_restart_always_restarts_then_backs_off(client: HttpClient) -> None:
    """The first exit restarts the container at once; the second leaves it waiting in
    CrashLoopBackOff for the kubelet's 10 s back-off (the pod Running, not Ready)."""
    name = unique("crash")
    created = await client.create(PODS, pod(name, annotations={"sim.minik3s.io/run-seconds": "0.5",
                                                               "sim.minik3s.io/exit-code": "1"}))
    p = await wait_for(lambda: get_pod(client, name),
                       lambda p: ((p["status"].get("containerStatuses") or [{}])[0].get("state") or {})
                       .get("waiting", {}).get("reason") == "CrashLoopBackOff")
    cs = p["status"]["containerStatuses"][0]
    assert p["status"]["phase"] == "Running"
    assert cs["restartCount"] == 1 and not cs["ready"]
    uid = created["metadata"]["uid"]
    assert cs["state"]["waiting"] == {
        "reason": "CrashLoopBackOff",
        "message": f"back-off 10s restarting failed container=app pod={name}_default({uid})"}
    assert cs["lastState"]["terminated"]["exitCode"] == 1
    assert cs["lastState"]["terminated"]["reason"] == "Error"
    ready = next(c for c in p["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "ContainersNotReady")


async def test_failed_node_stops_renewing_its_lease_and_recovers(client: HttpClient) -> None:
    await fail_node(client, "node-2")
    # One renewal of the healthy node proves the fleet's heartbeat loop has run since the failure
    # (it may have renewed node-2 before it saw the annotation); from then on node-2 is frozen,
    # which the next renewal of node-1 shows.
    other = (await client.get(LEASES, "node-1", "kube-node-lease"))["spec"]["renewTime"]
    first = await wait_for(lambda: client.get(LEASES, "node-1", "kube-node-lease"),
                           lambda lease: lease["spec"]["renewTime"] != other, timeout=15)
    frozen = (await client.get(LEASES, "node-2", "kube-node-lease"))["spec"]["renewTime"]
    await wait_for(lambda: client.get(LEASES, "node-1", "kube-node-lease"),
                   lambda lease: lease["spec"]["renewTime"] != first["spec"]["renewTime"], timeout=15)
    assert (await client.get(LEASES, "node-2", "kube-node-lease"))["spec"]["renewTime"] == frozen
    name = unique("frozen")
    await client.create(PODS, pod(name, node="node-2"))
    # A pod created after it on the healthy node starting proves the kubelet has handled both.
    witness = unique("witness")
    await client.create(PODS, pod(witness, node="node-1"))
    await wait_for(lambda: get_pod(client, witness), lambda p: p["status"].get("phase") == "Running")
    assert (await get_pod(client, name))["status"].get("phase") == "Pending"
    await recover_node(client, "node-2")
    await wait_for(lambda: client.get(LEASES, "node-2", "kube-node-lease"),
                   lambda lease: lease["spec"]["renewTime"] != frozen, timeout=5)
    await wait_for(lambda: get_pod(client, name), lambda p: p["status"].get("phase") == "Running", timeout=5)
    node = await client.get(NODES, "node-2")
    assert {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"] == "True"


async def test_standalone_fleet_over_http(server: ServerProcess, client: HttpClient, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("kind: NodePool\ncount: 2\nnamePrefix: ext-\n")
    task = asyncio.create_task(run_standalone(server.url, str(fleet)), name="standalone-fleet")
    try:
        await wait_for(lambda: client.get(LEASES, "ext-2", "kube-node-lease"), lambda _: True, timeout=10)
        name = unique("ext")
        await client.create(PODS, pod(name, node="ext-1"))
        p = await wait_for(lambda: get_pod(client, name), lambda p: p["status"].get("phase") == "Running")
        assert p["status"]["hostIP"] == "172.18.0.2"  # node 1 of that fleet
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
