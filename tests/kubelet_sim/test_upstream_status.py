"""The simulated kubelet's pod phase, conditions and container statuses against upstream v1.33's
own tables: pkg/kubelet/kubelet_pods_test.go (TestPodPhaseWith*, Test_generateAPIPodStatus,
TestConvertToAPIContainerStatuses, TestGenerateAPIPodStatus{HostNetwork,}PodIPs),
pkg/kubelet/kubelet_test.go (TestGenerateAPIPodStatusWith{SortedContainers,ReasonCache}),
pkg/kubelet/status/generate_test.go (TestGenerate*Condition) and
pkg/kubelet/container/helpers_test.go (TestShouldContainerBeRestarted).

The pure generators (kubelet_sim.stages.podstatus: get_phase and the condition generators) are
driven with the tables' pod specs and container statuses as JSON; where the simulator's own steps
(lifecycle / restarts / init_containers) produce the same situation, the step is driven too, so
the statuses the simulated kubelet writes are checked, not only the helpers. Case names are
upstream's (prefixed with the upstream test when names repeat across tables).
"""

from __future__ import annotations

import copy
import random
from datetime import UTC, datetime
from typing import Any

import pytest

from kubelet_sim.config import parse_fleet_documents
from kubelet_sim.ipam import node_host_ips
from kubelet_sim.node_agent import NodeAgent
from kubelet_sim.stages.init_containers import init_status
from kubelet_sim.stages.lifecycle import (
    StepContext,
    container_creating,
    containers_exited,
    running,
    terminated,
)
from kubelet_sim.stages.podstatus import (
    containers_ready_condition,
    get_phase,
    initialized_condition,
    pod_ready_condition,
    restarts_after_exit,
)
from kubelet_sim.stages.restarts import Action, BackoffPolicy, CrashLoop, plan, restart_status

NOW = datetime(2026, 1, 1, 0, 0, 10, tzinfo=UTC)
WALL = "2026-01-01T00:00:00Z"


def ctx(**kw: Any) -> StepContext:
    return StepContext(now=NOW, host_ip=kw.pop("host_ip", "172.18.0.2"), allocate_ip=lambda: "10.244.1.2", **kw)


# -- container status builders (kubelet_pods_test.go's helpers, as API JSON) --------------------

def waiting(name: str, reason: str = "") -> dict[str, Any]:
    return {"name": name, "state": {"waiting": {"reason": reason} if reason else {}}}


def waiting_last_terminated(name: str, code: int = 0) -> dict[str, Any]:
    """waitingStateWithLastTermination (exit 0) / waitingStateWithNonZeroTermination (exit -1)."""
    return {"name": name, "state": {"waiting": {}}, "lastState": {"terminated": {"exitCode": code}}}


def running_state(name: str) -> dict[str, Any]:
    return {"name": name, "state": {"running": {}}}


def started_state(name: str) -> dict[str, Any]:
    return {"name": name, "state": {"running": {}}, "started": True}


def stopped(name: str) -> dict[str, Any]:
    """stoppedState: terminated with Go's zero exit code."""
    return {"name": name, "state": {"terminated": {}}}


def succeeded(name: str) -> dict[str, Any]:
    return {"name": name, "state": {"terminated": {"exitCode": 0}}}


def failed(name: str) -> dict[str, Any]:
    return {"name": name, "state": {"terminated": {"exitCode": -1}}}


def spec(policy: str, *, inits: list[dict[str, Any]] | None = None,
         containers: tuple[str, ...] = ("containerA", "containerB")) -> dict[str, Any]:
    out: dict[str, Any] = {"nodeName": "machine", "restartPolicy": policy,
                           "containers": [{"name": n} for n in containers]}
    if inits is not None:
        out["initContainers"] = inits
    return out


def pod_of(s: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "default", "uid": "u1"}, "spec": s}


X = {"name": "containerX"}
X_SIDECAR = {"name": "containerX", "restartPolicy": "Always"}
Y_SIDECAR = {"name": "containerY", "restartPolicy": "Always"}

ALWAYS = spec("Always")
ALWAYS_INIT = spec("Always", inits=[X])
ALWAYS_SIDECAR = spec("Always", inits=[X_SIDECAR])
ALWAYS_HAS_RUN = spec("Always", inits=[X, Y_SIDECAR], containers=("containerA",))
NEVER = spec("Never")
NEVER_INIT = spec("Never", inits=[X])
NEVER_SIDECAR = spec("Never", inits=[X_SIDECAR])
ON_FAILURE = spec("OnFailure")


# (spec, statuses (init then regular, as the kubelet passes them), podIsTerminal, podHasInitialized, phase)
PHASE_CASES = [
    # TestPodPhaseWithRestartAlways
    pytest.param(ALWAYS, [], False, False, "Pending", id="RestartAlways/waiting"),
    pytest.param(ALWAYS, [running_state("containerA"), running_state("containerB")], False, False, "Running",
                 id="RestartAlways/all running"),
    pytest.param(ALWAYS, [stopped("containerA"), stopped("containerB")], False, False, "Running",
                 id="RestartAlways/all stopped with restart always"),
    pytest.param(ALWAYS, [succeeded("containerA"), succeeded("containerB")], True, False, "Succeeded",
                 id="RestartAlways/all succeeded with restart always, but the pod is terminal"),
    pytest.param(ALWAYS, [succeeded("containerA"), failed("containerB")], True, False, "Failed",
                 id="RestartAlways/all stopped with restart always, but the pod is terminal"),
    pytest.param(ALWAYS, [running_state("containerA"), stopped("containerB")], False, False, "Running",
                 id="RestartAlways/mixed state #1 with restart always"),
    pytest.param(ALWAYS, [running_state("containerA")], False, False, "Pending",
                 id="RestartAlways/mixed state #2 with restart always"),
    pytest.param(ALWAYS, [running_state("containerA"), waiting("containerB")], False, False, "Pending",
                 id="RestartAlways/mixed state #3 with restart always"),
    pytest.param(ALWAYS, [running_state("containerA"), waiting_last_terminated("containerB")], False, False,
                 "Running", id="RestartAlways/backoff crashloop container with restart always"),
    # TestPodPhaseWithRestartAlwaysInitContainers
    pytest.param(ALWAYS_INIT, [], False, False, "Pending", id="RestartAlwaysInitContainers/empty, waiting"),
    pytest.param(ALWAYS_INIT, [running_state("containerX")], False, False, "Pending",
                 id="RestartAlwaysInitContainers/init container running"),
    pytest.param(ALWAYS_INIT, [failed("containerX")], False, False, "Pending",
                 id="RestartAlwaysInitContainers/init container terminated non-zero"),
    pytest.param(ALWAYS_INIT, [waiting_last_terminated("containerX")], False, False, "Pending",
                 id="RestartAlwaysInitContainers/init container waiting, terminated zero"),
    pytest.param(ALWAYS_INIT, [waiting_last_terminated("containerX", -1)], False, False, "Pending",
                 id="RestartAlwaysInitContainers/init container waiting, terminated non-zero"),
    pytest.param(ALWAYS_INIT, [waiting("containerX")], False, False, "Pending",
                 id="RestartAlwaysInitContainers/init container waiting, not terminated"),
    pytest.param(ALWAYS_INIT, [succeeded("containerX"), running_state("containerA"), running_state("containerB")],
                 False, False, "Running", id="RestartAlwaysInitContainers/init container succeeded"),
    # TestPodPhaseWithRestartAlwaysRestartableInitContainers
    pytest.param(ALWAYS_SIDECAR, [], False, False, "Pending", id="RestartAlwaysRestartableInitContainers/empty, waiting"),
    pytest.param(ALWAYS_SIDECAR, [running_state("containerX")], False, False, "Pending",
                 id="restartable init container running"),
    pytest.param(ALWAYS_SIDECAR, [stopped("containerX")], False, False, "Pending",
                 id="restartable init container stopped"),
    pytest.param(ALWAYS_SIDECAR, [waiting_last_terminated("containerX")], False, False, "Pending",
                 id="restartable init container waiting, terminated zero"),
    pytest.param(ALWAYS_SIDECAR, [waiting_last_terminated("containerX", -1)], False, False, "Pending",
                 id="restartable init container waiting, terminated non-zero"),
    pytest.param(ALWAYS_SIDECAR, [waiting("containerX")], False, False, "Pending",
                 id="restartable init container waiting, not terminated"),
    pytest.param(ALWAYS_SIDECAR, [started_state("containerX"), running_state("containerA")], False, True, "Pending",
                 id="restartable init container started, 1/2 regular container running"),
    pytest.param(ALWAYS_SIDECAR, [started_state("containerX"), running_state("containerA"),
                                  running_state("containerB")], False, True, "Running",
                 id="restartable init container started, all regular containers running"),
    pytest.param(ALWAYS_SIDECAR, [running_state("containerX"), running_state("containerA"),
                                  running_state("containerB")], False, True, "Running",
                 id="restartable init container running, all regular containers running"),
    pytest.param(ALWAYS_SIDECAR, [stopped("containerX"), running_state("containerA"), running_state("containerB")],
                 False, True, "Running", id="restartable init container stopped, all regular containers running"),
    pytest.param(ALWAYS_SIDECAR, [waiting_last_terminated("containerX"), running_state("containerA"),
                                  running_state("containerB")], False, True, "Running",
                 id="backoff crashloop restartable init container, all regular containers running"),
    pytest.param(ALWAYS_SIDECAR, [failed("containerX"), succeeded("containerA"), succeeded("containerB")],
                 True, True, "Succeeded",
                 id="all regular containers succeeded and restartable init container failed with restart always, "
                    "but the pod is terminal"),
    pytest.param(ALWAYS_SIDECAR, [succeeded("containerX"), succeeded("containerA"), succeeded("containerB")],
                 True, True, "Succeeded",
                 id="all regular containers succeeded and restartable init container succeeded with restart always, "
                    "but the pod is terminal"),
    pytest.param(ALWAYS_SIDECAR, [running_state("containerX"), running_state("containerA"),
                                  running_state("containerB")], False, False, "Pending",
                 id="re-initializing the pod after the sandbox is recreated"),
    # TestPodPhaseWithRestartAlwaysAndPodHasRun
    pytest.param(ALWAYS_HAS_RUN, [running_state("containerX"), running_state("containerY"),
                                  running_state("containerA")], False, False, "Pending",
                 id="regular init containers, restartable init container and regular container are all running"),
    pytest.param(ALWAYS_HAS_RUN, [running_state("containerX"), running_state("containerY"), stopped("containerA")],
                 False, False, "Pending",
                 id="regular containers is stopped, restartable init container and regular int container "
                    "are both running"),
    pytest.param(ALWAYS_HAS_RUN, [succeeded("containerX"), running_state("containerY"), stopped("containerA")],
                 False, False, "Pending",
                 id="re-created sandbox: regular init container is succeeded, restartable init container is running, "
                    "old regular containers is stopped"),
    pytest.param(ALWAYS_HAS_RUN, [succeeded("containerX"), running_state("containerY"), stopped("containerA")],
                 False, True, "Running",
                 id="regular init container is succeeded, restartable init container is running, regular containers "
                    "is stopped"),
    pytest.param(ALWAYS_HAS_RUN, [succeeded("containerX"), running_state("containerY"), running_state("containerA")],
                 False, True, "Running",
                 id="regular init container is succeeded, restartable init container and regular containers are "
                    "both running"),
    # TestPodPhaseWithRestartNever
    pytest.param(NEVER, [], False, False, "Pending", id="RestartNever/waiting"),
    pytest.param(NEVER, [running_state("containerA"), running_state("containerB")], False, False, "Running",
                 id="all running with restart never"),
    pytest.param(NEVER, [succeeded("containerA"), succeeded("containerB")], False, False, "Succeeded",
                 id="all succeeded with restart never"),
    pytest.param(NEVER, [failed("containerA"), failed("containerB")], False, False, "Failed",
                 id="RestartNever/all failed with restart never"),
    pytest.param(NEVER, [running_state("containerA"), succeeded("containerB")], False, False, "Running",
                 id="mixed state #1 with restart never"),
    pytest.param(NEVER, [running_state("containerA")], False, False, "Pending", id="mixed state #2 with restart never"),
    pytest.param(NEVER, [running_state("containerA"), waiting("containerB")], False, False, "Pending",
                 id="mixed state #3 with restart never"),
    # TestPodPhaseWithRestartNeverInitContainers
    pytest.param(NEVER_INIT, [], False, False, "Pending", id="RestartNeverInitContainers/empty, waiting"),
    pytest.param(NEVER_INIT, [running_state("containerX")], False, False, "Pending",
                 id="RestartNeverInitContainers/init container running"),
    pytest.param(NEVER_INIT, [failed("containerX")], False, False, "Failed",
                 id="RestartNeverInitContainers/init container terminated non-zero"),
    pytest.param(NEVER_INIT, [waiting_last_terminated("containerX")], False, False, "Pending",
                 id="RestartNeverInitContainers/init container waiting, terminated zero"),
    pytest.param(NEVER_INIT, [waiting_last_terminated("containerX", -1)], False, False, "Failed",
                 id="RestartNeverInitContainers/init container waiting, terminated non-zero"),
    pytest.param(NEVER_INIT, [waiting("containerX")], False, False, "Pending",
                 id="RestartNeverInitContainers/init container waiting, not terminated"),
    pytest.param(NEVER_INIT, [succeeded("containerX"), running_state("containerA"), running_state("containerB")],
                 False, False, "Running", id="RestartNeverInitContainers/init container succeeded"),
    # TestPodPhaseWithRestartNeverRestartableInitContainers
    pytest.param(NEVER_SIDECAR, [], False, False, "Pending", id="RestartNeverRestartableInitContainers/empty, waiting"),
    pytest.param(NEVER_SIDECAR, [running_state("containerX")], False, False, "Pending",
                 id="RestartNeverRestartableInitContainers/restartable init container running"),
    pytest.param(NEVER_SIDECAR, [stopped("containerX")], False, False, "Pending",
                 id="RestartNeverRestartableInitContainers/restartable init container stopped"),
    pytest.param(NEVER_SIDECAR, [waiting_last_terminated("containerX")], False, False, "Pending",
                 id="RestartNeverRestartableInitContainers/restartable init container waiting, terminated zero"),
    pytest.param(NEVER_SIDECAR, [waiting_last_terminated("containerX", -1)], False, False, "Pending",
                 id="RestartNeverRestartableInitContainers/restartable init container waiting, terminated non-zero"),
    pytest.param(NEVER_SIDECAR, [waiting("containerX")], False, False, "Pending",
                 id="RestartNeverRestartableInitContainers/restartable init container waiting, not terminated"),
    pytest.param(NEVER_SIDECAR, [started_state("containerX"), running_state("containerA")], False, True, "Pending",
                 id="restartable init container started, one main container running"),
    pytest.param(NEVER_SIDECAR, [started_state("containerX"), succeeded("containerA"), succeeded("containerB")],
                 False, True, "Running", id="restartable init container started, main containers succeeded"),
    pytest.param(NEVER_SIDECAR, [running_state("containerX"), succeeded("containerA"), succeeded("containerB")],
                 False, True, "Running", id="restartable init container re-running, main containers succeeded"),
    pytest.param(NEVER_SIDECAR, [succeeded("containerX"), succeeded("containerA"), succeeded("containerB")],
                 False, True, "Succeeded", id="all containers succeeded"),
    pytest.param(NEVER_SIDECAR, [failed("containerX"), succeeded("containerA"), succeeded("containerB")],
                 False, True, "Succeeded",
                 id="restartable init container terminated non-zero, main containers succeeded"),
    pytest.param(NEVER_SIDECAR, [waiting_last_terminated("containerX"), succeeded("containerA"),
                                 succeeded("containerB")], False, True, "Succeeded",
                 id="backoff crashloop restartable init container, main containers succeeded"),
    pytest.param(NEVER_SIDECAR, [waiting_last_terminated("containerX", -1), succeeded("containerA"),
                                 succeeded("containerB")], False, True, "Succeeded",
                 id="backoff crashloop with non-zero restartable init container, main containers succeeded"),
    # TestPodPhaseWithRestartOnFailure
    pytest.param(ON_FAILURE, [], False, False, "Pending", id="RestartOnFailure/waiting"),
    pytest.param(ON_FAILURE, [running_state("containerA"), running_state("containerB")], False, False, "Running",
                 id="all running with restart onfailure"),
    pytest.param(ON_FAILURE, [succeeded("containerA"), succeeded("containerB")], False, False, "Succeeded",
                 id="all succeeded with restart onfailure"),
    pytest.param(ON_FAILURE, [failed("containerA"), failed("containerB")], False, False, "Running",
                 id="RestartOnFailure/all failed with restart never"),
    pytest.param(ON_FAILURE, [running_state("containerA"), succeeded("containerB")], False, False, "Running",
                 id="mixed state #1 with restart onfailure"),
    pytest.param(ON_FAILURE, [running_state("containerA")], False, False, "Pending",
                 id="mixed state #2 with restart onfailure"),
    pytest.param(ON_FAILURE, [running_state("containerA"), waiting("containerB")], False, False, "Pending",
                 id="mixed state #3 with restart onfailure"),
    pytest.param(ON_FAILURE, [running_state("containerA"), waiting_last_terminated("containerB")], False, False,
                 "Running", id="backoff crashloop container with restart onfailure"),
]


@pytest.mark.parametrize(("pod_spec", "statuses", "terminal", "initialized", "phase"), PHASE_CASES)
def test_get_phase(pod_spec: dict[str, Any], statuses: list[dict[str, Any]], terminal: bool, initialized: bool,
                   phase: str) -> None:
    got = get_phase(pod_of(pod_spec), copy.deepcopy(statuses), pod_is_terminal=terminal,
                    pod_has_initialized=initialized)
    assert got == phase


def _with_ids(statuses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The statuses as the simulator writes them (an image and a containerID per container)."""
    out = []
    for cs in copy.deepcopy(statuses):
        cs.setdefault("image", "docker.io/library/busybox:latest")
        cs.setdefault("containerID", f"containerd://{cs['name']}")
        cs.setdefault("ready", "running" in cs["state"])
        cs.setdefault("restartCount", 0)
        cs.setdefault("lastState", cs.get("lastState") or {})
        out.append(cs)
    return out


# The phase the simulator's restart step writes for a Running pod whose regular containers are in
# these states (no init containers; every container known and started): it finishes the pod only
# when upstream's getPhase says Succeeded/Failed, and keeps it Running otherwise.
SETTLE_CASES = [p for p in PHASE_CASES
                if p.values[0] in (ALWAYS, NEVER, ON_FAILURE) and len(p.values[1]) == 2  # type: ignore[arg-type]
                and not p.values[2] and all("waiting" not in cs["state"] or cs.get("lastState")
                                            for cs in p.values[1])]  # type: ignore[union-attr]


@pytest.mark.parametrize(("pod_spec", "statuses", "terminal", "initialized", "phase"), SETTLE_CASES)
def test_restart_step_settles_on_upstream_phase(pod_spec: dict[str, Any], statuses: list[dict[str, Any]],
                                                 terminal: bool, initialized: bool, phase: str) -> None:
    pod = pod_of(pod_spec)
    pod["status"] = {"phase": "Running", "containerStatuses": _with_ids(statuses), "conditions": []}
    status = restart_status(pod, ctx(), {})
    assert status["phase"] == phase


# -- pkg/kubelet/status/generate_test.go -----------------------------------------------------

def ready(name: str) -> dict[str, Any]:
    return {"name": name, "ready": True}


def not_ready(name: str) -> dict[str, Any]:
    return {"name": name, "ready": False}


def cond(ctype: str, status: str, reason: str = "", message: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": ctype, "status": status}
    if reason:
        out["reason"] = reason
    if message:
        out["message"] = message
    return out


TWO = {"containers": [{"name": "1234"}, {"name": "5678"}]}
ONE = {"containers": [{"name": "1234"}]}
SIDECAR_ONE = {"initContainers": [{"name": "restartable-init-1", "restartPolicy": "Always"}],
               "containers": [{"name": "regular-1"}]}
SIDECAR_TWO = {"initContainers": [{"name": "restartable-init-1", "restartPolicy": "Always"},
                                  {"name": "restartable-init-2", "restartPolicy": "Always"}],
               "containers": [{"name": "regular-1"}]}

CONTAINERS_READY_CASES = [
    pytest.param({}, None, "Running", cond("ContainersReady", "False", "UnknownContainerStatuses"), id="0"),
    pytest.param({}, [], "Running", cond("ContainersReady", "True"), id="1"),
    pytest.param(ONE, [], "Running",
                 cond("ContainersReady", "False", "ContainersNotReady", "containers with unknown status: [1234]"),
                 id="2"),
    pytest.param(TWO, [ready("1234"), ready("5678")], "Running", cond("ContainersReady", "True"), id="3"),
    pytest.param(TWO, [ready("1234")], "Running",
                 cond("ContainersReady", "False", "ContainersNotReady", "containers with unknown status: [5678]"),
                 id="4"),
    pytest.param(TWO, [ready("1234"), not_ready("5678")], "Running",
                 cond("ContainersReady", "False", "ContainersNotReady", "containers with unready status: [5678]"),
                 id="5"),
    pytest.param(ONE, [not_ready("1234")], "Succeeded", cond("ContainersReady", "False", "PodCompleted"), id="6"),
    pytest.param(SIDECAR_ONE, [ready("regular-1")], "Running",
                 cond("ContainersReady", "False", "ContainersNotReady",
                      "containers with unknown status: [restartable-init-1]"), id="7"),
    pytest.param(SIDECAR_TWO, [ready("restartable-init-1"), ready("restartable-init-2"), ready("regular-1")],
                 "Running", cond("ContainersReady", "True"), id="8"),
    pytest.param(SIDECAR_TWO, [ready("restartable-init-1"), ready("regular-1")], "Running",
                 cond("ContainersReady", "False", "ContainersNotReady",
                      "containers with unknown status: [restartable-init-2]"), id="9"),
    pytest.param(SIDECAR_TWO, [ready("restartable-init-1"), not_ready("restartable-init-2"), ready("regular-1")],
                 "Running", cond("ContainersReady", "False", "ContainersNotReady",
                                 "containers with unready status: [restartable-init-2]"), id="10"),
]


@pytest.mark.parametrize(("pod_spec", "statuses", "phase", "want"), CONTAINERS_READY_CASES)
def test_generate_containers_ready_condition(pod_spec: dict[str, Any], statuses: list[dict[str, Any]] | None,
                                             phase: str, want: dict[str, Any]) -> None:
    assert containers_ready_condition(pod_of(pod_spec), statuses, phase) == want


def gates(*names: str) -> list[dict[str, str]]:
    return [{"conditionType": n} for n in names]


POD_READY_CASES = [
    pytest.param({}, None, None, "Running", cond("Ready", "False", "UnknownContainerStatuses"), id="0"),
    pytest.param({}, None, [], "Running", cond("Ready", "True"), id="1"),
    pytest.param(ONE, None, [], "Running",
                 cond("Ready", "False", "ContainersNotReady", "containers with unknown status: [1234]"), id="2"),
    pytest.param(TWO, None, [ready("1234"), ready("5678")], "Running", cond("Ready", "True"), id="3"),
    pytest.param(TWO, None, [ready("1234")], "Running",
                 cond("Ready", "False", "ContainersNotReady", "containers with unknown status: [5678]"), id="4"),
    pytest.param(TWO, None, [ready("1234"), not_ready("5678")], "Running",
                 cond("Ready", "False", "ContainersNotReady", "containers with unready status: [5678]"), id="5"),
    pytest.param(ONE, None, [not_ready("1234")], "Succeeded", cond("Ready", "False", "PodCompleted"), id="6"),
    pytest.param({"readinessGates": gates("gate1")}, None, [], "Running",
                 cond("Ready", "False", "ReadinessGatesNotReady",
                      'corresponding condition of pod readiness gate "gate1" does not exist.'), id="7"),
    pytest.param({"readinessGates": gates("gate1")}, [cond("gate1", "False")], [], "Running",
                 cond("Ready", "False", "ReadinessGatesNotReady",
                      'the status of pod readiness gate "gate1" is not "True", but False'), id="8"),
    pytest.param({"readinessGates": gates("gate1")}, [cond("gate1", "True")], [], "Running", cond("Ready", "True"),
                 id="9"),
    pytest.param({"readinessGates": gates("gate1", "gate2")}, [cond("gate1", "True")], [], "Running",
                 cond("Ready", "False", "ReadinessGatesNotReady",
                      'corresponding condition of pod readiness gate "gate2" does not exist.'), id="10"),
    pytest.param({"readinessGates": gates("gate1", "gate2")}, [cond("gate1", "True"), cond("gate2", "False")], [],
                 "Running", cond("Ready", "False", "ReadinessGatesNotReady",
                                 'the status of pod readiness gate "gate2" is not "True", but False'), id="11"),
    pytest.param({"readinessGates": gates("gate1", "gate2")}, [cond("gate1", "True"), cond("gate2", "True")], [],
                 "Running", cond("Ready", "True"), id="12"),
    pytest.param({**ONE, "readinessGates": gates("gate1")}, [cond("gate1", "True")], [not_ready("1234")], "Running",
                 cond("Ready", "False", "ContainersNotReady", "containers with unready status: [1234]"), id="13"),
]


@pytest.mark.parametrize(("pod_spec", "conditions", "statuses", "phase", "want"), POD_READY_CASES)
def test_generate_pod_ready_condition(pod_spec: dict[str, Any], conditions: list[dict[str, Any]] | None,
                                      statuses: list[dict[str, Any]] | None, phase: str, want: dict[str, Any]) -> None:
    assert pod_ready_condition(pod_of(pod_spec), conditions, statuses, phase) == want


NO_INIT: dict[str, Any] = {}
ONE_INIT = {"initContainers": [{"name": "1234"}], "containers": [{"name": "regular"}]}
TWO_INIT = {"initContainers": [{"name": "1234"}, {"name": "5678"}], "containers": [{"name": "regular"}]}
ONE_SIDECAR_INIT = {"initContainers": [{"name": "1234", "restartPolicy": "Always"}],
                    "containers": [{"name": "regular"}]}

INITIALIZED_CASES = [
    pytest.param(TWO_INIT, None, "Running", ("False", "UnknownContainerStatuses"), id="0"),
    pytest.param(NO_INIT, [], "Running", ("True", ""), id="1"),
    pytest.param(ONE_INIT, [], "Running", ("False", "ContainersNotInitialized"), id="2"),
    pytest.param(TWO_INIT, [ready("1234"), ready("5678")], "Running", ("True", ""), id="3"),
    pytest.param(TWO_INIT, [ready("1234")], "Running", ("False", "ContainersNotInitialized"), id="4"),
    pytest.param(TWO_INIT, [ready("1234"), not_ready("5678")], "Running", ("False", "ContainersNotInitialized"),
                 id="5"),
    pytest.param(ONE_INIT, [ready("1234")], "Succeeded", ("True", "PodCompleted"), id="6"),
    pytest.param(ONE_SIDECAR_INIT, [{"name": "1234", "started": False}], "Pending",
                 ("False", "ContainersNotInitialized"), id="7"),
    pytest.param(ONE_SIDECAR_INIT, [{"name": "1234", "started": True}], "Running", ("True", ""), id="8"),
    pytest.param(ONE_SIDECAR_INIT, [{"name": "1234", "started": False}, running_state("regular")], "Running",
                 ("True", ""), id="9"),
    pytest.param(ONE_INIT, [waiting("1234"), stopped("regular")], "Running", ("True", ""), id="10"),
]


@pytest.mark.parametrize(("pod_spec", "statuses", "phase", "want"), INITIALIZED_CASES)
def test_generate_pod_initialized_condition(pod_spec: dict[str, Any], statuses: list[dict[str, Any]] | None,
                                            phase: str, want: tuple[str, str]) -> None:
    got = initialized_condition(pod_of(pod_spec), statuses, phase)
    assert (got["type"], got["status"], got.get("reason", "")) == ("Initialized", *want)


def _condition(status: dict[str, Any], ctype: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [c for c in status["conditions"] if c["type"] == ctype]
    assert len(found) == 1
    return found[0]


# TestGeneratePodReadyToStartContainersCondition: the simulator has no CRI sandbox; the sandbox
# exists (ready, with an IP) from the moment the containers start until the pod is terminal.
def test_ready_to_start_containers_empty_pod_status() -> None:
    """"Empty pod status": no sandbox yet (ContainerCreating) -> False."""
    status = container_creating(pod_of(spec("Always")), ctx())
    assert _condition(status, "PodReadyToStartContainers")["status"] == "False"


def test_ready_to_start_containers_pod_sandbox_status_ready_and_ip_configured() -> None:
    pod = pod_of(spec("Always"))
    pod["status"] = container_creating(pod, ctx())
    status = running(pod, ctx())
    assert _condition(status, "PodReadyToStartContainers")["status"] == "True"
    assert status["podIP"] == "10.244.1.2"


def test_ready_to_start_containers_pod_sandbox_status_not_ready() -> None:
    """The sandbox of a terminated pod is stopped -> False."""
    pod = pod_of(spec("Always"))
    pod["status"] = container_creating(pod, ctx())
    pod["status"] = running(pod, ctx())
    status = terminated(pod, ctx())
    assert _condition(status, "PodReadyToStartContainers")["status"] == "False"


# -- the conditions the simulator's steps write (generateAPIPodStatus) ----------------------------

def _kubelet_view(status: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in c.items() if k in ("type", "status", "reason", "message")}
            for c in status["conditions"]]


def test_generate_api_pod_status_pod_disruption_condition_is_copied_over_and_the_phase_is_set_to_failed_when_deleted(
) -> None:
    """Test_generateAPIPodStatus: a deleted pod whose containers are stopped (killed at the end of
    the grace period) is Failed; the DisruptionTarget condition comes first, Ready/ContainersReady
    are False with reason PodFailed, Initialized True without a reason."""
    pod = pod_of(spec("Always"))
    pod["status"] = container_creating(pod, ctx())
    pod["status"] = running(pod, ctx())
    pod["status"]["conditions"].append({"type": "DisruptionTarget", "status": "True",
                                        "lastTransitionTime": WALL, "reason": "EvictionByEvictionAPI"})
    pod["metadata"]["deletionTimestamp"] = WALL
    status = terminated(pod, ctx(killed=True))
    assert status["phase"] == "Failed"
    assert _kubelet_view(status) == [
        cond("DisruptionTarget", "True", "EvictionByEvictionAPI"),
        cond("PodReadyToStartContainers", "False"),
        cond("Initialized", "True"),
        cond("Ready", "False", "PodFailed"),
        cond("ContainersReady", "False", "PodFailed"),
        cond("PodScheduled", "True"),
    ]


def test_generate_api_pod_status_terminal_phase_succeeded_conditions() -> None:
    """Test_generateAPIPodStatus "terminal phase from previous status must remain terminal,
    restartNever": a Succeeded pod says PodCompleted on Initialized (True), Ready and
    ContainersReady (False)."""
    pod = pod_of(spec("Never"))
    pod["status"] = {"phase": "Running", "conditions": [],
                     "containerStatuses": _with_ids([succeeded("containerA"), succeeded("containerB")])}
    status = restart_status(pod, ctx(), {})
    assert status["phase"] == "Succeeded"
    assert _kubelet_view(status) == [
        cond("PodReadyToStartContainers", "False"),
        cond("Initialized", "True", "PodCompleted"),
        cond("Ready", "False", "PodCompleted"),
        cond("ContainersReady", "False", "PodCompleted"),
        cond("PodScheduled", "True"),
    ]


def test_failed_pod_conditions_say_pod_failed() -> None:
    """A restartPolicy Never pod whose container failed: Ready/ContainersReady reason PodFailed
    (generateContainersReadyConditionForTerminalPhase), Initialized True (a regular container ran)."""
    pod = pod_of(spec("Never", containers=("containerA",)))
    pod["status"] = {"phase": "Running", "conditions": [],
                     "containerStatuses": _with_ids([running_state("containerA")])}
    status = restart_status(pod, ctx(), {"containerA": Action("exit", exit_code=3)})
    assert status["phase"] == "Failed"
    assert _kubelet_view(status)[1:4] == [cond("Initialized", "True"), cond("Ready", "False", "PodFailed"),
                                          cond("ContainersReady", "False", "PodFailed")]


def test_init_container_failure_under_never_fails_the_pod_with_pod_failed_readiness() -> None:
    """getPhase "init container terminated non-zero" (restart never) as the init step writes it: the
    pod is Failed, its sandbox gone, Initialized False naming the failed init container."""
    pod = pod_of({"restartPolicy": "Never", "initContainers": [{"name": "check", "image": "busybox",
                                                                  "command": ["sh", "-c", "exit 2"]}],
                  "containers": [{"name": "app", "image": "nginx"}]})
    pod["status"] = container_creating(pod, ctx())
    pod["status"] = init_status(pod, ctx(), {"check": Action("restart")}, fail=False)
    pod["status"] = init_status(pod, ctx(), {"check": Action("exit", exit_code=2)}, fail=False)
    status = init_status(pod, ctx(), {}, fail=True)
    assert status["phase"] == "Failed"
    assert _kubelet_view(status) == [
        cond("PodReadyToStartContainers", "False"),
        cond("Initialized", "False", "ContainersNotInitialized", "containers with incomplete status: [check]"),
        cond("Ready", "False", "PodFailed"),
        cond("ContainersReady", "False", "PodFailed"),
        cond("PodScheduled", "True"),
    ]


def test_sidecars_count_in_readiness_and_initialization_while_creating() -> None:
    """GenerateContainersReadyCondition / GeneratePodInitializedCondition with a sidecar that has not
    started yet: it is unready and incomplete, listed before the regular containers."""
    pod = pod_of({"initContainers": [{"name": "migrate", "image": "busybox"},
                                     {"name": "proxy", "image": "envoy", "restartPolicy": "Always"}],
                  "containers": [{"name": "app", "image": "nginx"}]})
    status = container_creating(pod, ctx())
    view = _kubelet_view(status)
    assert view[1] == cond("Initialized", "False", "ContainersNotInitialized",
                           "containers with incomplete status: [migrate proxy]")
    assert view[2] == cond("Ready", "False", "ContainersNotReady", "containers with unready status: [proxy app]")
    assert view[3] == cond("ContainersReady", "False", "ContainersNotReady",
                           "containers with unready status: [proxy app]")


def test_played_init_phase_lists_sidecars_not_started_yet_as_incomplete() -> None:
    """While the first (played) init container runs, the sidecar after it is not started: upstream's
    Initialized message names both (isInitContainerInitialized wants a started sidecar)."""
    pod = pod_of({"initContainers": [{"name": "migrate", "image": "busybox", "command": ["sleep", "3"]},
                                     {"name": "proxy", "image": "envoy", "restartPolicy": "Always"}],
                  "containers": [{"name": "app", "image": "nginx"}]})
    pod["status"] = container_creating(pod, ctx())
    status = init_status(pod, ctx(), {"migrate": Action("restart")}, fail=False)
    assert _kubelet_view(status)[:2] == [
        cond("PodReadyToStartContainers", "True"),
        cond("Initialized", "False", "ContainersNotInitialized", "containers with incomplete status: [migrate proxy]"),
    ]


@pytest.mark.parametrize(("gate_conditions", "want"), [
    pytest.param([], cond("Ready", "False", "ReadinessGatesNotReady",
                          'corresponding condition of pod readiness gate "gate1" does not exist., '
                          'corresponding condition of pod readiness gate "gate2" does not exist.'),
                 id="both gates missing: every message, joined"),
    pytest.param([cond("gate1", "True"), cond("gate2", "False")],
                 cond("Ready", "False", "ReadinessGatesNotReady",
                      'the status of pod readiness gate "gate2" is not "True", but False'),
                 id="gate2 False"),
    pytest.param([cond("gate1", "True"), cond("gate2", "True")], cond("Ready", "True"), id="gates True"),
])
def test_running_step_reports_readiness_gates_as_upstream(gate_conditions: list[dict[str, Any]],
                                                          want: dict[str, Any]) -> None:
    """GeneratePodReadyCondition through the Running step; the gates' own conditions (set by
    controllers) are kept, before the kubelet's."""
    pod = pod_of({"containers": [{"name": "web", "image": "nginx"}], "readinessGates": gates("gate1", "gate2")})
    pod["status"] = container_creating(pod, ctx())
    pod["status"]["conditions"] = [dict(c, lastTransitionTime=WALL) for c in gate_conditions] + \
        pod["status"]["conditions"]
    status = running(pod, ctx())
    view = _kubelet_view(status)
    assert view[:len(gate_conditions)] == gate_conditions
    assert _kubelet_view({"conditions": [_condition(status, "Ready")]}) == [want]
    assert _condition(status, "ContainersReady")["status"] == "True"


# -- TestGenerateAPIPodStatusWithSortedContainers / WithReasonCache (kubelet_test.go) -------------

@pytest.mark.parametrize("step", ["ContainerCreating", "Running"])
def test_generate_api_pod_status_with_sorted_containers(step: str) -> None:
    """Container statuses come out in spec order whatever order the previous statuses had."""
    names = [f"{i}container" for i in range(10)]
    pod = pod_of({"containers": [{"name": n, "image": "busybox"} for n in names]})
    shuffled: list[dict[str, Any]] = []
    for i, n in enumerate(names):
        cs = {"name": n, "image": "busybox", "ready": False, "restartCount": 0, "state": {"waiting": {}}}
        shuffled = [*shuffled, cs] if i % 2 == 0 else [cs, *shuffled]
    pod["status"] = {"phase": "Pending", "containerStatuses": shuffled, "conditions": []}
    status = container_creating(pod, ctx()) if step == "ContainerCreating" else running(pod, ctx())
    assert [cs["name"] for cs in status["containerStatuses"]] == names


@pytest.mark.parametrize("as_init", [False, True], ids=["containers", "init containers"])
def test_generate_api_pod_status_with_reason_cache_no_historical_record(as_init: bool) -> None:
    """Case 0: a container with no runtime record is waiting ContainerCreating (PodInitializing
    when the pod has init containers, for the init containers too); its lastState comes from the
    old API status."""
    containers = [{"name": "without-old-record", "image": "busybox"}, {"name": "with-old-record", "image": "busybox"}]
    old = [{"name": "with-old-record", "lastState": {"terminated": {"exitCode": 0}}, "restartCount": 0}]
    s: dict[str, Any] = {"restartPolicy": "OnFailure", "containers": containers}
    key = "containerStatuses"
    if as_init:
        s = {"restartPolicy": "OnFailure", "initContainers": containers, "containers": [{"name": "main"}]}
        key = "initContainerStatuses"
    pod = pod_of(s)
    pod["status"] = {key: old}
    status = container_creating(pod, ctx())
    reason = "PodInitializing" if as_init else "ContainerCreating"
    got = {cs["name"]: (cs["state"], cs["lastState"]) for cs in status[key]}
    assert got == {"without-old-record": ({"waiting": {"reason": reason}}, {}),
                   "with-old-record": ({"waiting": {"reason": reason}}, {"terminated": {"exitCode": 0}})}


def test_convert_to_api_container_statuses_currently_running_keeps_previous_restart_count() -> None:
    """TestConvertToAPIContainerStatuses "currently running with lower restartCount; should keeping
    previous restartCount": a restart continues from the API's restartCount (5 -> 6) and the
    previous run becomes lastState."""
    pod = pod_of(spec("Always"))
    pod["status"] = {"phase": "Running", "conditions": [],
                     "containerStatuses": [dict(cs, restartCount=5)
                                           for cs in _with_ids([failed("containerA"), failed("containerB")])]}
    status = restart_status(pod, ctx(), {"containerA": Action("restart"), "containerB": Action("restart")})
    for cs in status["containerStatuses"]:
        assert cs["restartCount"] == 6
        assert "running" in cs["state"]
        assert cs["lastState"] == {"terminated": {"exitCode": -1}}


# -- TestGenerateAPIPodStatusHostNetworkPodIPs / PodIPs ---------------------------------------

HOST_NETWORK_CASES = [
    pytest.param([{"type": "InternalIP", "address": "10.0.0.1"}], ["10.0.0.1"], id="Simple"),
    pytest.param([{"type": "ExternalIP", "address": "192.168.0.1"}, {"type": "InternalIP", "address": "10.0.0.1"}],
                 ["10.0.0.1"], id="InternalIP is preferred over ExternalIP"),
    pytest.param([{"type": "InternalIP", "address": "10.0.0.1"}], ["10.0.0.1"],
                 id="Single-stack addresses in dual-stack cluster"),
    pytest.param([{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "InternalIP", "address": "10.0.0.2"},
                  {"type": "ExternalIP", "address": "192.168.0.1"}], ["10.0.0.1"],
                 id="Multiple single-stack addresses in dual-stack cluster"),
    pytest.param([{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "InternalIP", "address": "fd01::1234"}],
                 ["10.0.0.1", "fd01::1234"], id="Dual-stack addresses in dual-stack cluster"),
]


@pytest.mark.parametrize(("addresses", "pod_ips"), HOST_NETWORK_CASES)
def test_generate_api_pod_status_host_network_pod_ips(cluster: Any, addresses: list[dict[str, str]],
                                                      pod_ips: list[str]) -> None:
    """A hostNetwork pod's podIPs are the node's IPs (GetNodeHostIPs), and hostIP is podIPs[0]."""
    assert node_host_ips(addresses) == pod_ips
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "machine"}, "status": {"addresses": addresses}}
    agent = NodeAgent(parse_fleet_documents([node]), client=cluster, rng=random.Random(0))
    assert agent.host_ips("machine") == tuple(pod_ips)
    step_ctx = ctx(host_ip=agent.host_ip("machine"), host_ips=agent.host_ips("machine"))
    pod = pod_of({"hostNetwork": True, "containers": [{"name": "c", "image": "busybox"}]})
    pod["status"] = container_creating(pod, step_ctx)
    status = running(pod, step_ctx)
    assert status["podIPs"] == [{"ip": ip} for ip in pod_ips]
    assert status["podIP"] == status["hostIP"] == pod_ips[0]
    assert status["hostIPs"] == [{"ip": ip} for ip in pod_ips]


def test_generate_api_pod_status_pod_ips_simple() -> None:
    """TestGenerateAPIPodStatusPodIPs "Simple": one pod IP, podIP == podIPs[0]."""
    pod = pod_of({"containers": [{"name": "c", "image": "busybox"}]})
    pod["status"] = container_creating(pod, ctx())
    status = running(pod, ctx())
    assert status["podIPs"] == [{"ip": "10.244.1.2"}] and status["podIP"] == "10.244.1.2"


# -- TestShouldContainerBeRestarted (pkg/kubelet/container/helpers_test.go) -----------------------

# container -> expected restart under [Never, OnFailure, Always]
RESTART_EXPECTED = {"alive": (False, False, False), "succeed": (False, False, True), "failed": (False, True, True)}
POLICIES = ("Never", "OnFailure", "Always")


@pytest.mark.parametrize("policy_index", range(3), ids=POLICIES)
@pytest.mark.parametrize("name", sorted(RESTART_EXPECTED))
def test_should_container_be_restarted(name: str, policy_index: int) -> None:
    """The kubelet's restart decision for containers of a live pod: helpers (restarts_after_exit)
    and the restart planner (plan) agree with upstream. `alive` runs (a long played sleep)."""
    policy = POLICIES[policy_index]
    want = RESTART_EXPECTED[name][policy_index]
    commands = {"alive": ["sleep", "3600"], "succeed": ["true"], "failed": ["sh", "-c", "exit 1"]}
    pod = pod_of({"restartPolicy": policy, "containers": [{"name": name, "image": "busybox",
                                                           "command": commands[name]}]})
    if name != "alive":
        assert restarts_after_exit(policy, 0 if name == "succeed" else 1) is want
        state = {"terminated": {"exitCode": 0 if name == "succeed" else 1, "finishedAt": WALL, "startedAt": WALL,
                                "containerID": "containerd://x"}}
    else:
        state = {"running": {"startedAt": "2026-01-01T00:00:09Z"}}
    pod["status"] = {"phase": "Running", "containerStatuses": [
        {"name": name, "image": "busybox", "containerID": "containerd://x", "ready": False, "restartCount": 0,
         "state": state, "lastState": {}}]}
    actions, _ = plan(pod, CrashLoop(), 100.0, NOW, BackoffPolicy())
    assert (actions.get(name) is not None and actions[name].kind == "restart") is want


def test_should_container_be_restarted_not_for_a_deleted_pod() -> None:
    """"test deleted pod": a pod being deleted is stopped (the pod-terminate stage matches before
    any restart), whatever its policy and its containers' states."""
    from kubelet_sim.stages.model import load_default_stages, select_stage

    stages = load_default_stages()
    for policy in POLICIES:
        pod = pod_of({"restartPolicy": policy, "containers": [{"name": "failed", "image": "busybox",
                                                               "command": ["sh", "-c", "exit 1"]}]})
        pod["metadata"]["deletionTimestamp"] = WALL
        pod["status"] = {"phase": "Running", "containerStatuses": [
            {"name": "failed", "state": {"terminated": {"exitCode": 1}}, "restartCount": 0}]}
        stage = select_stage(stages, pod)
        assert stage is not None and stage.name == "pod-terminate"


@pytest.mark.parametrize(("policy", "codes", "restarted", "phase"), [
    pytest.param("OnFailure", {"ok": 0, "bad": 1}, {"bad"}, "Running", id="OnFailure restarts only the failed one"),
    pytest.param("OnFailure", {"ok": 0, "bad": 0}, set(), "Succeeded", id="OnFailure all succeeded"),
    pytest.param("Always", {"ok": 0, "bad": 1}, {"ok", "bad"}, "Running", id="Always restarts both"),
    pytest.param("Never", {"ok": 0, "bad": 1}, set(), "Failed", id="Never restarts none"),
])
def test_containers_exited_step_restarts_what_the_kubelet_restarts(policy: str, codes: dict[str, int],
                                                                    restarted: set[str], phase: str) -> None:
    """The ContainersExited step (custom stages): each container exits with its played command's
    code and is restarted only when ShouldContainerBeRestarted says so; the phase follows getPhase."""
    pod = pod_of({"restartPolicy": policy, "containers": [
        {"name": n, "image": "busybox", "command": ["sh", "-c", f"exit {code}"]} for n, code in codes.items()]})
    pod["status"] = container_creating(pod, ctx())
    pod["status"] = running(pod, ctx())
    status = containers_exited(pod, ctx())
    got = {cs["name"] for cs in status["containerStatuses"] if "running" in cs["state"]}
    assert got == restarted
    assert status.get("phase") == phase
    assert get_phase(pod, status["containerStatuses"]) == phase
