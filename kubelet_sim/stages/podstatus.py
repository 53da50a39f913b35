"""The kubelet's pod phase and pod conditions, as pure functions (layer L4, kubelet_sim.stages).

Why: a kubelet does not write a pod's phase and conditions step by step; it derives them on every
sync from the pod's spec and its containers' statuses (kubelet v1.33 `getPhase` in
kubelet_pods.go, and `GeneratePodInitializedCondition` / `GeneratePodReadyCondition` /
`GenerateContainersReadyCondition` / `GeneratePodReadyToStartContainersCondition` in
pkg/kubelet/status/generate.go). The simulator's steps (kubelet_sim.stages.lifecycle, restarts,
init_containers, probes) decide what the containers do; the phase of a finished pod and the
kubelet-owned conditions then come from here, so `Failed` pods say `PodFailed`, sidecars count
in Ready/Initialized, readiness gates are reported as upstream does.

Inputs are JSON: `pod["spec"]` and a flat list of container statuses (init containers' and
regular containers' together, as the kubelet passes them). A condition is returned as
`{"type", "status", "reason"?, "message"?}`; `lifecycle.set_condition` merges it into the pod's
list, keeping `lastTransitionTime` while the status does not change.

Example: spec {containers: [a, b], restartPolicy: Never}, statuses [a terminated 0, b terminated 1]
-> get_phase "Failed"; Ready / ContainersReady False with reason "PodFailed"; Initialized True.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from minik3s.api.helpers.pods import is_sidecar
from minik3s.api.types import JsonDict

# pkg/kubelet/status/generate.go
UNKNOWN_CONTAINER_STATUSES = "UnknownContainerStatuses"
POD_COMPLETED = "PodCompleted"
POD_FAILED = "PodFailed"
CONTAINERS_NOT_READY = "ContainersNotReady"
CONTAINERS_NOT_INITIALIZED = "ContainersNotInitialized"
READINESS_GATES_NOT_READY = "ReadinessGatesNotReady"

PENDING, RUNNING, SUCCEEDED, FAILED = "Pending", "Running", "Succeeded", "Failed"
TERMINAL_PHASES = (SUCCEEDED, FAILED)

# the condition types the kubelet owns (kubetypes.PodConditionByKubelet), in the order it writes them
KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")


def _by_name(statuses: Iterable[JsonDict] | None) -> dict[str, JsonDict]:
    """podutil.GetContainerStatus over the list (the first status of a name wins)."""
    out: dict[str, JsonDict] = {}
    for cs in statuses or ():
        if isinstance(cs, dict):
            out.setdefault(str(cs.get("name") or ""), cs)
    return out


def _state(cs: JsonDict, key: str = "state") -> JsonDict:
    state = cs.get(key)
    return state if isinstance(state, dict) else {}


def _exit_code(term: JsonDict) -> int:
    code = term.get("exitCode")
    return code if isinstance(code, int) and not isinstance(code, bool) else 0


def _containers(spec: JsonDict, key: str) -> list[JsonDict]:
    return [c for c in spec.get(key) or () if isinstance(c, dict)]


def has_any_regular_container_started(spec: JsonDict, statuses: Iterable[JsonDict] | None) -> bool:
    """kubecontainer.HasAnyRegularContainerStarted: a regular container is running or terminated,
    so the pod has been initialized before (its sidecars may be restarting)."""
    names = {str(c.get("name") or "") for c in _containers(spec, "containers")}
    for cs in statuses or ():
        if isinstance(cs, dict) and cs.get("name") in names:
            state = _state(cs)
            if "running" in state or "terminated" in state:
                return True
    return False


def get_phase(pod: JsonDict, statuses: Iterable[JsonDict] | None, *, pod_is_terminal: bool = False,
              pod_has_initialized: bool = False) -> str:
    """kubelet v1.33 getPhase: the phase of a pod from its (init and regular) container statuses.

    `pod_is_terminal`: the kubelet stopped the pod for good (deleted, evicted, deadline); its
    containers will not be restarted whatever the restart policy. `pod_has_initialized`: a regular
    container has run in the current sandbox, so sidecars restarting do not make it Pending again.
    """
    spec = pod.get("spec") or {}
    policy = spec.get("restartPolicy") or "Always"
    info = _by_name(statuses)
    pending_sidecars = pending_init = failed_init = 0
    for c in _containers(spec, "initContainers"):
        if is_sidecar(c):
            continue
        cs = info.get(str(c.get("name") or ""))
        if cs is None:
            pending_init += 1
            continue
        state = _state(cs)
        if "running" in state:
            pending_init += 1
        elif "terminated" in state:
            if _exit_code(_state(state, "terminated")) != 0:
                failed_init += 1
        elif "waiting" in state:
            last = _state(cs, "lastState")
            if "terminated" not in last:
                pending_init += 1
            elif _exit_code(_state(last, "terminated")) != 0:
                failed_init += 1
        else:
            pending_init += 1

    unknown = running = waiting = stopped = succeeded = 0
    for c in _containers(spec, "initContainers"):
        if not is_sidecar(c):
            continue
        cs = info.get(str(c.get("name") or ""))
        if cs is None:
            unknown += 1
            continue
        state = _state(cs)
        if "running" in state:
            if cs.get("started") is not True:
                pending_sidecars += 1
            running += 1
        elif "terminated" in state:
            pass  # a stopped sidecar does not count for the phase
        elif "waiting" in state:
            if "terminated" not in _state(cs, "lastState"):
                pending_sidecars += 1
                waiting += 1
        else:
            pending_sidecars += 1
            unknown += 1

    for c in _containers(spec, "containers"):
        cs = info.get(str(c.get("name") or ""))
        if cs is None:
            unknown += 1
            continue
        state = _state(cs)
        if "running" in state:
            running += 1
        elif "terminated" in state:
            stopped += 1
            if _exit_code(_state(state, "terminated")) == 0:
                succeeded += 1
        elif "waiting" in state:
            if "terminated" in _state(cs, "lastState"):
                stopped += 1
            else:
                waiting += 1
        else:
            unknown += 1

    if failed_init > 0 and policy == "Never":
        return FAILED
    if pending_init > 0 or (pending_sidecars > 0 and not pod_has_initialized) or waiting > 0:
        return PENDING  # one or more containers have not been started
    if running > 0 and unknown == 0:
        return RUNNING  # all started, at least one running
    if running == 0 and stopped > 0 and unknown == 0:
        if pod_is_terminal:  # containers are not restarted whatever the restart policy
            return SUCCEEDED if stopped == succeeded else FAILED
        if policy == "Always":
            return RUNNING  # all in the process of restarting
        if stopped == succeeded:
            return SUCCEEDED
        if policy == "Never":
            return FAILED
        return RUNNING  # OnFailure: at least one failed and is restarting
    return PENDING


def restarts_after_exit(policy: str, exit_code: int) -> bool:
    """ShouldContainerBeRestarted for a container of a live pod that exited with `exit_code`:
    Always restarts it, OnFailure only after a failure, Never not."""
    return policy == "Always" or (policy == "OnFailure" and exit_code != 0)


def _condition(ctype: str, status: str, reason: str = "", message: str = "") -> JsonDict:
    cond: JsonDict = {"type": ctype, "status": status}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


def _names(names: Sequence[str]) -> str:
    """Go's fmt %s of a []string: [a b]."""
    return "[" + " ".join(names) + "]"


def _terminal_readiness(ctype: str, phase: str) -> JsonDict:
    """generateContainersReadyConditionForTerminalPhase / generatePodReadyConditionForTerminalPhase."""
    return _condition(ctype, "False", POD_FAILED if phase == FAILED else POD_COMPLETED if phase == SUCCEEDED else "")


def containers_ready_condition(pod: JsonDict, statuses: Sequence[JsonDict] | None, phase: str) -> JsonDict:
    """GenerateContainersReadyCondition: True when every sidecar (restartable init container) and
    every regular container has a status and is ready."""
    if statuses is None:
        return _condition("ContainersReady", "False", UNKNOWN_CONTAINER_STATUSES)
    spec = pod.get("spec") or {}
    info = _by_name(statuses)
    unknown: list[str] = []
    unready: list[str] = []
    wanted = [c for c in _containers(spec, "initContainers") if is_sidecar(c)] + _containers(spec, "containers")
    for c in wanted:
        name = str(c.get("name") or "")
        cs = info.get(name)
        if cs is None:
            unknown.append(name)
        elif not cs.get("ready"):
            unready.append(name)
    if (phase == SUCCEEDED and not unknown) or phase == FAILED:
        return _terminal_readiness("ContainersReady", phase)
    messages = []
    if unknown:
        messages.append(f"containers with unknown status: {_names(unknown)}")
    if unready:
        messages.append(f"containers with unready status: {_names(unready)}")
    if messages:
        return _condition("ContainersReady", "False", CONTAINERS_NOT_READY, ", ".join(messages))
    return _condition("ContainersReady", "True")


def pod_ready_condition(pod: JsonDict, conditions: Iterable[JsonDict] | None, statuses: Sequence[JsonDict] | None,
                        phase: str) -> JsonDict:
    """GeneratePodReadyCondition: ContainersReady, and every readiness gate's condition True."""
    ready = containers_ready_condition(pod, statuses, phase)
    if ready["status"] != "True":
        return {**ready, "type": "Ready"}
    by_type = {c.get("type"): c for c in conditions or () if isinstance(c, dict)}
    messages = []
    for gate in (pod.get("spec") or {}).get("readinessGates") or ():
        ctype = str((gate or {}).get("conditionType") or "")
        cond = by_type.get(ctype)
        if cond is None:
            messages.append(f"corresponding condition of pod readiness gate \"{ctype}\" does not exist.")
        elif cond.get("status") != "True":
            messages.append(f"the status of pod readiness gate \"{ctype}\" is not \"True\", but {cond.get('status')}")
    if messages:
        return _condition("Ready", "False", READINESS_GATES_NOT_READY, ", ".join(messages))
    return _condition("Ready", "True")


def _init_container_initialized(c: JsonDict, cs: JsonDict) -> bool:
    """isInitContainerInitialized: a sidecar once started, a regular init container once ready
    (it exited 0)."""
    if is_sidecar(c):
        return cs.get("started") is True
    return bool(cs.get("ready"))


def initialized_condition(pod: JsonDict, statuses: Sequence[JsonDict] | None, phase: str) -> JsonDict:
    """GeneratePodInitializedCondition: True once every init container completed (a sidecar:
    started), or once a regular container has started."""
    spec = pod.get("spec") or {}
    inits = _containers(spec, "initContainers")
    if statuses is None and inits:
        return _condition("Initialized", "False", UNKNOWN_CONTAINER_STATUSES)
    info = _by_name(statuses)
    unknown: list[str] = []
    incomplete: list[str] = []
    for c in inits:
        name = str(c.get("name") or "")
        cs = info.get(name)
        if cs is None:
            unknown.append(name)
        elif not _init_container_initialized(c, cs):
            incomplete.append(name)
    if phase == SUCCEEDED and not unknown:
        return _condition("Initialized", "True", POD_COMPLETED)
    if has_any_regular_container_started(spec, statuses):
        return _condition("Initialized", "True")
    messages = []
    if unknown:
        messages.append(f"containers with unknown status: {_names(unknown)}")
    if incomplete:
        messages.append(f"containers with incomplete status: {_names(incomplete)}")
    if messages:
        return _condition("Initialized", "False", CONTAINERS_NOT_INITIALIZED, ", ".join(messages))
    return _condition("Initialized", "True")


def ready_to_start_containers_condition(sandbox_ready: bool) -> JsonDict:
    """GeneratePodReadyToStartContainersCondition: True while the pod's sandbox exists with its
    network configured (no new sandbox is needed)."""
    return _condition("PodReadyToStartContainers", "True" if sandbox_ready else "False")


def all_container_statuses(status: JsonDict) -> list[JsonDict]:
    """The init containers' statuses, then the regular containers' (generateAPIPodStatus's
    allContainerStatuses)."""
    return [cs for key in ("initContainerStatuses", "containerStatuses")
            for cs in status.get(key) or () if isinstance(cs, dict)]


def kubelet_conditions(pod: JsonDict, status: JsonDict, *, sandbox_ready: bool) -> list[JsonDict]:
    """The kubelet-owned conditions generateAPIPodStatus sets, in its order, for `status` (its
    phase and container statuses); the readiness gates are read from `status["conditions"]`."""
    phase = str(status.get("phase") or PENDING)
    statuses = all_container_statuses(status)
    others = [c for c in status.get("conditions") or () if isinstance(c, dict)
              and c.get("type") not in KUBELET_CONDITIONS]
    return [
        ready_to_start_containers_condition(sandbox_ready),
        initialized_condition(pod, statuses, phase),
        pod_ready_condition(pod, others, statuses, phase),
        containers_ready_condition(pod, statuses, phase),
        _condition("PodScheduled", "True"),
    ]


__all__ = ["KUBELET_CONDITIONS", "TERMINAL_PHASES", "all_container_statuses", "containers_ready_condition",
           "get_phase", "has_any_regular_container_started", "initialized_condition", "kubelet_conditions",
           "pod_ready_condition", "ready_to_start_containers_condition", "restarts_after_exit"]
