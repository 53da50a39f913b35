"""The kubelet's restart rules and crash-loop back-off (kubelet_sim.stages.restarts), as pure
functions: which pods restart their containers, how long each run lasts, and the back-off's
periods (kubelet v1.33: 10 s doubling to 300 s, no jitter, started over after a run longer than
twice the maximum). The statuses these produce over time are in golden/ (script-always-*,
run-seconds-always-restarts, run-seconds-onfailure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubelet_sim.stages.restarts import (
    BackoffPolicy,
    CrashLoop,
    Lifetime,
    container_lifetimes,
    crash_loop_message,
    plan,
    restarts_containers,
)

# an image whose entrypoint the simulation does not know: without a command it runs on
RUNS_ON = "registry.k8s.io/pause:3.10"


def pod(policy: str | None, *commands: list[str] | None, image: str = RUNS_ON, **annotations: str) -> dict[str, Any]:
    containers = [{"name": f"c{i}", "image": image, **({"command": cmd} if cmd is not None else {})}
                  for i, cmd in enumerate(commands)]
    spec: dict[str, Any] = {"containers": containers}
    if policy is not None:
        spec["restartPolicy"] = policy
    meta: dict[str, Any] = {"name": "p", "namespace": "ns", "uid": "u-1"}
    if annotations:
        meta["annotations"] = {f"sim.minik3s.io/{k.replace('_', '-')}": v for k, v in annotations.items()}
    return {"metadata": meta, "spec": spec}


ECHO = ["echo", "hi"]
FAIL = ["sh", "-c", "sleep 2; exit 3"]


@pytest.mark.parametrize(("p", "restarts"), [
    pytest.param(pod(None, ECHO), True, id="default-Always-command-that-ends"),
    pytest.param(pod("Always", None), False, id="Always-no-command-runs-on"),
    # busybox's CMD is `sh`, which finds an empty stdin and exits 0: restarted (CrashLoopBackOff)
    pytest.param(pod("Always", None, image="busybox"), True, id="Always-busybox-default-shell-exits"),
    pytest.param(pod("OnFailure", None, image="busybox"), False, id="OnFailure-busybox-default-shell-succeeds"),
    pytest.param(pod("Always", ["sh", "-c", "while true; do sleep 1; done"]), False, id="Always-endless-loop"),
    pytest.param(pod("Always", None, run_seconds="5"), True, id="Always-run-seconds"),
    pytest.param(pod("Never", FAIL), False, id="Never-the-pod-ends-instead"),
    pytest.param(pod("OnFailure", ECHO), False, id="OnFailure-all-succeed-the-pod-ends"),
    pytest.param(pod("OnFailure", FAIL), True, id="OnFailure-a-failure-restarts"),
    pytest.param(pod("OnFailure", ECHO, None), True, id="OnFailure-success-beside-a-container-that-runs-on"),
    pytest.param(pod("OnFailure", None, run_seconds="1", exit_code="0"), False, id="OnFailure-run-seconds-exit-0"),
])
def test_which_pods_restart_their_containers(p: dict[str, Any], restarts: bool) -> None:
    assert restarts_containers(p) is restarts


def test_lifetimes_come_from_run_seconds_else_the_played_command() -> None:
    assert container_lifetimes(pod("Always", FAIL, None, ECHO)) == {"c0": Lifetime(2.0, 3), "c2": Lifetime(0.0, 0)}
    # run-seconds applies to every container; exit-code overrides the command's code
    assert container_lifetimes(pod("Always", FAIL, None, run_seconds="4")) == {"c0": Lifetime(4.0, 3),
                                                                              "c1": Lifetime(4.0, 0)}
    assert container_lifetimes(pod("Always", FAIL, run_seconds="1", exit_code="7")) == {"c0": Lifetime(1.0, 7)}


def test_the_back_off_doubles_to_five_minutes_and_starts_over_after_a_long_run() -> None:
    policy = BackoffPolicy()
    entry, periods = None, []
    for t in range(8):
        entry = policy.next(entry, float(t), float(t))
        periods.append(entry.period)
    assert periods == [10, 20, 40, 80, 160, 300, 300, 300]
    assert entry is not None
    # hasExpired: a run that finished more than 2 x 300 s after the entry last moved
    assert policy.next(entry, entry.updated + 600.0, entry.updated + 600.0).period == 300
    assert policy.next(entry, entry.updated + 600.5, entry.updated + 600.5).period == 10
    assert not policy.in_backoff(entry, entry.updated + 600.5, entry.updated + 600.5)
    # IsInBackOffSince: within the period after the exit
    assert policy.in_backoff(entry, 100.0, 399.9) and not policy.in_backoff(entry, 100.0, 400.0)
    assert not policy.in_backoff(None, 0.0, 0.0)
    shorter = BackoffPolicy(initial=1.0, maximum=4.0)
    entry = None
    seq = []
    for t in range(4):
        entry = shorter.next(entry, float(t), float(t))
        seq.append(entry.period)
    assert seq == [1, 2, 4, 4]


def test_the_message_prints_the_period_as_go_does() -> None:
    p = pod("Always", ECHO)
    assert crash_loop_message(p, "c0", 80) == "back-off 1m20s restarting failed container=c0 pod=p_ns(u-1)"
    assert crash_loop_message(p, "c0", 300) == "back-off 5m0s restarting failed container=c0 pod=p_ns(u-1)"


def test_the_plan_follows_the_status_and_a_forgetful_kubelet_restarts_at_once() -> None:
    wall = datetime(2026, 1, 1, 0, 1, 0, tzinfo=UTC)
    p = pod("Always", FAIL)
    p["status"] = {"containerStatuses": [{
        "name": "c0", "containerID": "containerd://b", "restartCount": 1,
        "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "..."}},
        "lastState": {"terminated": {"containerID": "containerd://b", "exitCode": 3,
                                     "startedAt": "2026-01-01T00:00:50Z", "finishedAt": "2026-01-01T00:00:52Z"}}}]}
    memory = CrashLoop()
    # no back-off entry (e.g. after a server restart): restart now, leaving a 10 s entry
    actions, _ = plan(p, memory, 1000.0, wall, BackoffPolicy())
    assert actions["c0"].kind == "restart" and actions["c0"].backoff is not None
    assert actions["c0"].backoff.period == 10
    # with the entry the kubelet would hold: wait until finishedAt + period (8 s from now)
    memory.backoffs["c0"] = actions["c0"].backoff
    memory.backoffs["c0"].period = 20
    actions, due = plan(p, memory, 1000.0, wall, BackoffPolicy())
    assert actions == {} and due == pytest.approx(1012.0)
    # a running instance exits when its run is over, counted from its startedAt
    p["status"]["containerStatuses"][0]["state"] = {"running": {"startedAt": "2026-01-01T00:00:59Z"}}
    p["status"]["containerStatuses"][0]["containerID"] = "containerd://c"
    actions, due = plan(p, memory, 1000.0, wall, BackoffPolicy())
    assert actions == {} and due == pytest.approx(1001.0)
    actions, _ = plan(p, memory, 1001.0, wall + timedelta(seconds=1), BackoffPolicy())
    assert actions["c0"].kind == "exit" and actions["c0"].exit_code == 3


def test_a_recorded_process_exit_ends_that_run_only() -> None:
    """An attached shell's `exit` (minik3s.api.helpers.process_exits) ends the run it belongs to:
    the container's current restartCount; the next run runs on as planned."""
    from minik3s.api.helpers import process_exits

    p = pod("Always", ["sh"], None)
    p["spec"]["containers"][0]["stdin"] = True  # a shell that waits for what an attach types
    p["metadata"]["uid"] = "u-exit-test"
    p["status"] = {"containerStatuses": [{"name": "c0", "restartCount": 2}, {"name": "c1", "restartCount": 0}]}
    woken: list[tuple[str, str]] = []
    unsubscribe = process_exits.subscribe(lambda ns, name: woken.append((ns, name)))
    try:
        assert container_lifetimes(p) == {}
        process_exits.record("u-exit-test", "ns", "p", "c0", 2, 5)
        assert woken == [("ns", "p")]
        assert container_lifetimes(p) == {"c0": Lifetime(0.0, 5)}
        assert restarts_containers(p) is True
        p["status"]["containerStatuses"][0]["restartCount"] = 3  # restarted: a new run
        assert container_lifetimes(p) == {}
    finally:
        unsubscribe()
