"""Named pod status steps a stage's `next.status` refers to (layer L4, kubelet_sim.stages).

Why: the selector and timing of a stage are data (YAML); what a kubelet writes into `pod.status`
at each point of a pod's life is fixed by upstream and lives here, once, as pure functions
`step(pod, ctx) -> new status`. They mirror kubelet v1.33's generateAPIPodStatus/getPhase:

* ContainerCreating – phase Pending, hostIP/startTime set, every container waiting
  (reason ContainerCreating, or PodInitializing when the pod has init containers).
* Running – init containers terminated (Completed, exit 0), sidecars and containers running,
  podIP from the node's CIDR, conditions PodReadyToStartContainers/Initialized/Ready/
  ContainersReady/PodScheduled all True.
* ContainersExited – containers exit with `sim.minik3s.io/exit-code`, else their played command's
  code (minik3s.api.helpers.script), else 0. restartPolicy
  Always (and OnFailure with a non-zero code) restarts them (restartCount+1, lastState.terminated);
  Never (and OnFailure with 0) ends the pod: Succeeded when every container exited 0, else Failed.
* Terminated – the kubelet stopped the containers after SIGTERM: exit 0 (Completed) when they shut
  down within the grace period, 137 (Error) when killed at its end. A deleted pod is terminal
  whatever its restartPolicy (getPhase with podIsTerminal): Succeeded if all exited 0, else Failed.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from minik3s.api.helpers.pods import is_sidecar
from minik3s.api.helpers.script import pod_outcome
from minik3s.api.types import JsonDict
from minik3s.utils.clock import rfc3339

ANNOTATION_EXIT_CODE = "sim.minik3s.io/exit-code"

CONDITION_ORDER = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
EXIT_KILLED = 137


@dataclass(slots=True)
class StepContext:
    """What a step needs besides the pod: time, where it runs, and the outcome of the timer."""

    now: datetime
    host_ip: str
    allocate_ip: Callable[[], str] = field(default=lambda: "")
    killed: bool = False


StatusStep = Callable[[JsonDict, StepContext], JsonDict]


# -- images and ids ---------------------------------------------------------------------------

def normalize_image(image: str) -> str:
    """Docker-style reference normalisation as containerd reports it.
    "nginx" → "docker.io/library/nginx:latest"; "me/app:1" → "docker.io/me/app:1";
    "registry.k8s.io/pause:3.10" unchanged; digests keep their "@sha256:...".
    """
    image = image.strip()
    if not image:
        return image
    first, sep, rest = image.partition("/")
    if not sep or ("." not in first and ":" not in first and first != "localhost"):
        image = f"docker.io/{image}" if sep else f"docker.io/library/{image}"
    last = image.rsplit("/", 1)[-1]
    if "@" not in last and ":" not in last:
        image += ":latest"
    return image


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def image_id(image: str) -> str:
    """The repo-digest form kubelet reports as imageID: docker.io/library/nginx@sha256:<64 hex>."""
    ref = normalize_image(image)
    if "@" in ref:
        return ref
    repo = ref.rsplit(":", 1)[0] if ":" in ref.rsplit("/", 1)[-1] else ref
    return f"{repo}@sha256:{_digest(ref)}"


def container_id(pod_uid: str, name: str, restart_count: int) -> str:
    return "containerd://" + _digest(f"{pod_uid}/{name}/{restart_count}")


# -- conditions ------------------------------------------------------------------------------

def set_condition(conds: list[JsonDict], ctype: str, status: str, now: str, *,
                   reason: str | None = None, message: str | None = None) -> None:
    for c in conds:
        if c.get("type") == ctype:
            if c.get("status") != status:
                c["lastTransitionTime"] = now
            c["status"] = status
            c.setdefault("lastProbeTime", None)
            c.pop("reason", None)
            c.pop("message", None)
            break
    else:
        c = {"lastProbeTime": None, "lastTransitionTime": now, "status": status, "type": ctype}
        conds.append(c)
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message


def ordered_conditions(conds: list[JsonDict]) -> list[JsonDict]:
    rank = {t: i for i, t in enumerate(CONDITION_ORDER)}
    return sorted(conds, key=lambda c: rank.get(c.get("type", ""), len(rank)))


def _names(containers: list[JsonDict]) -> str:
    return "[" + " ".join(c.get("name", "") for c in containers) + "]"


def step_base(pod: JsonDict, ctx: StepContext) -> tuple[JsonDict, list[JsonDict], str]:
    status = copy.deepcopy(pod.get("status") or {})
    now = rfc3339(ctx.now)
    conds = list(status.get("conditions") or [])
    status["hostIP"] = ctx.host_ip
    status["hostIPs"] = [{"ip": ctx.host_ip}]
    status.setdefault("startTime", now)
    set_condition(conds, "PodScheduled", "True", now)
    return status, conds, now


def _old_statuses(status: JsonDict, key: str) -> dict[str, JsonDict]:
    return {s.get("name", ""): s for s in status.get(key) or []}


def _container_base(c: JsonDict, old: JsonDict | None) -> JsonDict:
    image = c.get("image", "")
    cs: JsonDict = {
        "name": c.get("name", ""),
        "image": normalize_image(image),
        "imageID": "",
        "ready": False,
        "restartCount": int((old or {}).get("restartCount", 0)),
        "started": False,
        "state": {},
    }
    if old and old.get("lastState"):
        cs["lastState"] = old["lastState"]
    else:
        cs["lastState"] = {}
    return cs


# -- probes (kubelet_sim.stages.probes: when the rest comes due) -------------------------------

def _delay(c: JsonDict, probe: str) -> float:
    """A probe's initialDelaySeconds (0 without the probe)."""
    spec = c.get(probe)
    delay = spec.get("initialDelaySeconds") if isinstance(spec, dict) else None
    return float(delay) if isinstance(delay, int | float) and not isinstance(delay, bool) and delay > 0 else 0.0


def started_after(c: JsonDict) -> float:
    """Seconds from a container's start until it counts as started (its startupProbe's delay)."""
    return _delay(c, "startupProbe")


def ready_after(c: JsonDict) -> float:
    """Seconds from a container's start until it counts as ready (after it started)."""
    return max(started_after(c), _delay(c, "readinessProbe"))


def initially_started(c: JsonDict) -> bool:
    return started_after(c) == 0


def initially_ready(c: JsonDict) -> bool:
    return ready_after(c) == 0


def _running(c: JsonDict, old: JsonDict | None, uid: str, now: str) -> JsonDict:
    if old and "running" in (old.get("state") or {}) and old.get("containerID"):
        cs = copy.deepcopy(old)
        cs.setdefault("ready", True)
        cs.setdefault("started", True)
        return cs
    cs = _container_base(c, old)
    cs["imageID"] = image_id(c.get("image", ""))
    cs["containerID"] = container_id(uid, cs["name"], cs["restartCount"])
    cs["ready"] = initially_ready(c)
    cs["started"] = initially_started(c)
    cs["state"] = {"running": {"startedAt": now}}
    return cs


def terminated_status(c: JsonDict, old: JsonDict | None, uid: str, now: str, *, exit_code: int,
                reason: str | None = None, started: str | None = None) -> JsonDict:
    cs = _container_base(c, old)
    cs["imageID"] = image_id(c.get("image", ""))
    cid = (old or {}).get("containerID") or container_id(uid, cs["name"], cs["restartCount"])
    cs["containerID"] = cid
    running = ((old or {}).get("state") or {}).get("running") or {}
    term: JsonDict = {
        "containerID": cid,
        "exitCode": exit_code,
        "finishedAt": now,
        "reason": reason or ("Completed" if exit_code == 0 else "Error"),
        "startedAt": started or running.get("startedAt") or now,
    }
    cs["state"] = {"terminated": term}
    return cs


# -- steps -----------------------------------------------------------------------------------

def container_creating(pod: JsonDict, ctx: StepContext) -> JsonDict:
    spec = pod.get("spec") or {}
    inits = spec.get("initContainers") or []
    containers = spec.get("containers") or []
    status, conds, now = step_base(pod, ctx)
    status["phase"] = "Pending"
    waiting_reason = "PodInitializing" if inits else "ContainerCreating"
    old_init = _old_statuses(status, "initContainerStatuses")
    old = _old_statuses(status, "containerStatuses")
    if inits:
        iss = []
        for c in inits:
            cs = _container_base(c, old_init.get(c.get("name", "")))
            cs["state"] = {"waiting": {"reason": waiting_reason}}
            iss.append(cs)
        status["initContainerStatuses"] = iss
    css = []
    for c in containers:
        cs = _container_base(c, old.get(c.get("name", "")))
        cs["state"] = {"waiting": {"reason": waiting_reason}}
        css.append(cs)
    status["containerStatuses"] = css
    set_condition(conds, "PodReadyToStartContainers", "False", now)
    if inits:
        set_condition(conds, "Initialized", "False", now, reason="ContainersNotInitialized",
                       message=f"containers with incomplete status: {_names(inits)}")
    else:
        set_condition(conds, "Initialized", "True", now)
    msg = f"containers with unready status: {_names(containers)}"
    set_condition(conds, "Ready", "False", now, reason="ContainersNotReady", message=msg)
    set_condition(conds, "ContainersReady", "False", now, reason="ContainersNotReady", message=msg)
    status["conditions"] = ordered_conditions(conds)
    return status


def _readiness_gates_ok(pod: JsonDict, conds: list[JsonDict]) -> list[str]:
    """Names of readiness-gate conditions that are not True (pod.spec.readinessGates)."""
    by_type = {c.get("type"): c.get("status") for c in conds}
    gates = (pod.get("spec") or {}).get("readinessGates") or []
    return [g.get("conditionType", "") for g in gates if by_type.get(g.get("conditionType")) != "True"]


def container_ready_conditions(pod: JsonDict, conds: list[JsonDict], status: JsonDict,
                               now: str) -> list[JsonDict]:
    """ContainersReady and Ready of a running pod from its containers' `ready` (status manager's
    GenerateContainersReadyCondition / GeneratePodReadyCondition): the sidecars (restartable
    init containers) first, then the containers, in spec order; False with "containers with
    unready status: [a b]" while one is not ready; Ready also waits for the readiness gates. The
    conditions, in kubelet's order."""
    spec = pod.get("spec") or {}
    ready = {cs.get("name", ""): bool(cs.get("ready")) for key in ("initContainerStatuses", "containerStatuses")
             for cs in status.get(key) or ()}
    names = [c.get("name", "") for c in spec.get("initContainers") or () if is_sidecar(c)]
    names += [c.get("name", "") for c in spec.get("containers") or ()]
    unready = [n for n in names if n in ready and not ready[n]]
    if unready:
        msg = "containers with unready status: [" + " ".join(unready) + "]"
        set_condition(conds, "ContainersReady", "False", now, reason="ContainersNotReady", message=msg)
        set_condition(conds, "Ready", "False", now, reason="ContainersNotReady", message=msg)
        return ordered_conditions(conds)
    set_condition(conds, "ContainersReady", "True", now)
    not_ready = _readiness_gates_ok(pod, conds)
    if not_ready:
        set_condition(conds, "Ready", "False", now, reason="ReadinessGatesNotReady",
                       message=f"corresponding condition of pod readiness gate \"{not_ready[0]}\" does not exist.")
    else:
        set_condition(conds, "Ready", "True", now)
    return ordered_conditions(conds)


def running(pod: JsonDict, ctx: StepContext) -> JsonDict:
    spec = pod.get("spec") or {}
    uid = (pod.get("metadata") or {}).get("uid", "")
    inits = spec.get("initContainers") or []
    containers = spec.get("containers") or []
    status, conds, now = step_base(pod, ctx)
    status["phase"] = "Running"
    ip = ctx.host_ip if spec.get("hostNetwork") else (status.get("podIP") or ctx.allocate_ip())
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    old_init = _old_statuses(status, "initContainerStatuses")
    old = _old_statuses(status, "containerStatuses")
    if inits:
        iss = []
        for c in inits:
            o = old_init.get(c.get("name", ""))
            if is_sidecar(c):
                iss.append(_running(c, o, uid, now))
            elif o and "terminated" in (o.get("state") or {}):
                iss.append(copy.deepcopy(o))
            else:
                cs = terminated_status(c, o, uid, now, exit_code=0, started=now)
                cs["ready"] = True
                iss.append(cs)
        status["initContainerStatuses"] = iss
    status["containerStatuses"] = [_running(c, old.get(c.get("name", "")), uid, now) for c in containers]
    set_condition(conds, "PodReadyToStartContainers", "True", now)
    set_condition(conds, "Initialized", "True", now)
    status["conditions"] = container_ready_conditions(pod, conds, status, now)
    return status


def finish_pod(pod: JsonDict, status: JsonDict, conds: list[JsonDict], now: str, *,
            regular: list[JsonDict]) -> JsonDict:
    """Make a terminal status: phase from exit codes, readiness False with reason PodCompleted."""
    all_ok = all(((cs.get("state") or {}).get("terminated") or {}).get("exitCode") == 0 for cs in regular)
    status["phase"] = "Succeeded" if all_ok else "Failed"
    set_condition(conds, "PodReadyToStartContainers", "False", now)
    set_condition(conds, "Initialized", "True", now, reason="PodCompleted")
    set_condition(conds, "Ready", "False", now, reason="PodCompleted")
    set_condition(conds, "ContainersReady", "False", now, reason="PodCompleted")
    status["conditions"] = ordered_conditions(conds)
    return status


def annotation_exit_code(pod: JsonDict) -> int | None:
    """`sim.minik3s.io/exit-code` as an int (1 when it is not a number), None when unset."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_EXIT_CODE)
    if raw is None:
        return None
    try:
        return int(str(raw).strip())
    except ValueError:
        return 1


def _exit_codes(pod: JsonDict) -> Callable[[JsonDict], int]:
    """Each container's exit code: `sim.minik3s.io/exit-code` when set, else its played
    command's (minik3s.api.helpers.script), else 0."""
    code = annotation_exit_code(pod)
    if code is not None:
        return lambda _c: code
    outcome = pod_outcome(pod)
    codes = outcome[1] if outcome is not None else {}
    return lambda c: codes.get(str(c.get("name") or ""), 0)


def containers_exited(pod: JsonDict, ctx: StepContext) -> JsonDict:
    spec = pod.get("spec") or {}
    uid = (pod.get("metadata") or {}).get("uid", "")
    policy = spec.get("restartPolicy") or "Always"
    code_of = _exit_codes(pod)
    status, conds, now = step_base(pod, ctx)
    old = _old_statuses(status, "containerStatuses")
    containers = spec.get("containers") or []
    restart = policy == "Always" or (policy == "OnFailure" and any(code_of(c) != 0 for c in containers))
    if restart:
        css = []
        for c in containers:
            o = old.get(c.get("name", ""))
            done = terminated_status(c, o, uid, now, exit_code=code_of(c))
            cs = copy.deepcopy(done)
            cs["lastState"] = {"terminated": done["state"]["terminated"]}
            cs["restartCount"] = done["restartCount"] + 1
            cs["containerID"] = container_id(uid, cs["name"], cs["restartCount"])
            cs["state"] = {"running": {"startedAt": now}}
            cs["ready"] = True
            cs["started"] = True
            css.append(cs)
        status["containerStatuses"] = css
        status["conditions"] = ordered_conditions(conds)
        return status
    status["containerStatuses"] = [terminated_status(c, old.get(c.get("name", "")), uid, now, exit_code=code_of(c))
                                   for c in containers]
    stop_sidecars(spec, status, uid, now, exit_code=0)
    return finish_pod(pod, status, conds, now, regular=status["containerStatuses"])


def stop_sidecars(spec: JsonDict, status: JsonDict, uid: str, now: str, *, exit_code: int) -> None:
    inits = spec.get("initContainers") or []
    if not inits:
        return
    old_init = _old_statuses(status, "initContainerStatuses")
    iss = []
    for c in inits:
        o = old_init.get(c.get("name", ""))
        state = (o or {}).get("state") or {}
        if o is not None and "terminated" in state:
            iss.append(copy.deepcopy(o))
        elif "running" in state:
            iss.append(terminated_status(c, o, uid, now, exit_code=exit_code))
        else:
            cs = terminated_status(c, o, uid, now, exit_code=EXIT_KILLED, reason="ContainerStatusUnknown")
            cs["state"]["terminated"]["message"] = "The container could not be located when the pod was terminated"
            iss.append(cs)
    status["initContainerStatuses"] = iss


def terminated(pod: JsonDict, ctx: StepContext) -> JsonDict:
    spec = pod.get("spec") or {}
    uid = (pod.get("metadata") or {}).get("uid", "")
    status, conds, now = step_base(pod, ctx)
    old = _old_statuses(status, "containerStatuses")
    code = EXIT_KILLED if ctx.killed else 0
    css: list[JsonDict] = []
    for c in spec.get("containers") or []:
        o = old.get(c.get("name", ""))
        state = (o or {}).get("state") or {}
        last = ((o or {}).get("lastState") or {}).get("terminated")
        if o is not None and "terminated" in state:
            css.append(copy.deepcopy(o))
        elif "running" in state:
            css.append(terminated_status(c, o, uid, now, exit_code=code))
        elif o is not None and "waiting" in state and last:
            # waiting to restart (CrashLoopBackOff): its newest container is the run that
            # ended, which the kubelet now reports as the container's final state
            cs = copy.deepcopy(o)
            cs["state"] = {"terminated": copy.deepcopy(last)}
            cs["ready"] = cs["started"] = False
            css.append(cs)
        else:
            cs = terminated_status(c, o, uid, now, exit_code=EXIT_KILLED, reason="ContainerStatusUnknown")
            cs["state"]["terminated"]["message"] = "The container could not be located when the pod was terminated"
            css.append(cs)
    status["containerStatuses"] = css
    stop_sidecars(spec, status, uid, now, exit_code=code)
    # ephemeral containers (kubectl debug) stop with the pod; they do not decide its phase
    eph = status.get("ephemeralContainerStatuses")
    if eph:
        by_name = {c.get("name", ""): c for c in spec.get("ephemeralContainers") or ()}
        stopped = []
        for o in eph:
            if "running" in (o.get("state") or {}):
                o = terminated_status(by_name.get(o.get("name", ""), {"name": o.get("name", "")}), o, uid, now,
                                exit_code=code)
                o.pop("started", None)  # no probes run for an ephemeral container: no `started`
            stopped.append(o)
        status["ephemeralContainerStatuses"] = stopped
    return finish_pod(pod, status, conds, now, regular=css)


def ephemeral_pending(pod: JsonDict) -> bool:
    """A running pod gained an ephemeral container (kubectl debug) the status does not show yet."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    if status.get("phase") != "Running" or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    known = {cs.get("name") for cs in status.get("ephemeralContainerStatuses") or ()}
    return any(c.get("name") not in known for c in spec.get("ephemeralContainers") or ())


def ephemeral_started(pod: JsonDict, ctx: StepContext) -> JsonDict:
    """Start the pod's new ephemeral containers: running, never ready (no probes run for them),
    the earlier ones as they are."""
    status = copy.deepcopy(pod.get("status") or {})
    uid = (pod.get("metadata") or {}).get("uid", "")
    now = rfc3339(ctx.now)
    old = _old_statuses(status, "ephemeralContainerStatuses")
    out = []
    for c in (pod.get("spec") or {}).get("ephemeralContainers") or ():
        cs = old.get(c.get("name", ""))
        if cs is None:
            cs = _running(c, None, uid, now)
            cs["ready"] = False
            cs.pop("started", None)
        out.append(cs)
    status["ephemeralContainerStatuses"] = out
    return status


STATUS_STEPS: dict[str, StatusStep] = {
    "EphemeralStarted": ephemeral_started,
    "ContainerCreating": container_creating,
    "Running": running,
    "ContainersExited": containers_exited,
    "Terminated": terminated,
}


def pod_images(pod: JsonDict) -> list[str]:
    """Every image the pod's (init) containers use, normalised, in spec order, without repeats."""
    spec = pod.get("spec") or {}
    seen: dict[str, None] = {}
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        if c.get("image"):
            seen.setdefault(normalize_image(c["image"]), None)
    return list(seen)
