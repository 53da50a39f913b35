"""The kubelet's ephemeral-container steps (kubelet_sim/stages/lifecycle.py) on a pod as the API
stores it after `kubectl debug`: pending detection, start (running, never ready, no `started`,
earlier ones kept) and the stop at the pod's termination (terminated, the phase decided by the
regular containers alone)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kubelet_sim.stages.lifecycle import StepContext, ephemeral_pending, ephemeral_started, terminated

NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)


def ctx(killed: bool = False) -> StepContext:
    return StepContext(now=NOW, host_ip="10.0.0.1", allocate_ip=lambda: "10.244.0.9", killed=killed)


def running_pod(*ephemeral: str, statuses: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "default", "uid": "u1"},
            "spec": {"containers": [{"name": "web", "image": "nginx"}],
                     "ephemeralContainers": [{"name": n, "image": "busybox"} for n in ephemeral]},
            "status": {"phase": "Running", "podIP": "10.244.0.9",
                       "containerStatuses": [{"name": "web", "image": "docker.io/library/nginx:latest",
                                              "ready": True, "restartCount": 0, "started": True,
                                              "containerID": "containerd://w",
                                              "state": {"running": {"startedAt": "2026-12-02T11:00:00Z"}}}],
                       **({"ephemeralContainerStatuses": statuses} if statuses is not None else {})}}


def test_a_new_ephemeral_container_starts_and_the_earlier_one_is_kept() -> None:
    pod = running_pod("dbg")
    assert ephemeral_pending(pod)
    status = ephemeral_started(pod, ctx())
    [st] = status["ephemeralContainerStatuses"]
    assert st["name"] == "dbg" and st["ready"] is False and "started" not in st
    assert st["state"] == {"running": {"startedAt": "2026-12-02T12:00:00Z"}} and st["containerID"]
    again = running_pod("dbg", "dbg2", statuses=status["ephemeralContainerStatuses"])
    assert ephemeral_pending(again)
    both = ephemeral_started(again, ctx())["ephemeralContainerStatuses"]
    assert [s["name"] for s in both] == ["dbg", "dbg2"] and both[0] == st
    assert not ephemeral_pending(running_pod("dbg", "dbg2", statuses=both))
    deleting = running_pod("dbg3")
    deleting["metadata"]["deletionTimestamp"] = "2026-12-02T12:00:00Z"
    assert not ephemeral_pending(deleting)  # a terminating pod starts nothing


def test_ephemeral_containers_stop_with_the_pod_without_deciding_its_phase() -> None:
    started = ephemeral_started(running_pod("dbg"), ctx())["ephemeralContainerStatuses"]
    pod = running_pod("dbg", statuses=started)
    pod["metadata"]["deletionTimestamp"] = "2026-12-02T12:00:00Z"
    status = terminated(pod, ctx(killed=True))
    [st] = status["ephemeralContainerStatuses"]
    assert st["state"]["terminated"]["exitCode"] == 137 and st["state"]["terminated"]["reason"] == "Error"
    assert "started" not in st
    assert status["phase"] == "Failed"  # the regular container was killed too
    status = terminated(pod, ctx(killed=False))
    assert status["phase"] == "Succeeded"
    assert status["ephemeralContainerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
