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
  code (minik3s.api.helpers.script), else 0. restartPolicy Always (OnFailure: each container
  that exited non-zero) restarts them (restartCount+1, lastState.terminated); when none restarts
  (Never, or OnFailure with every code 0) the pod ends: Succeeded when every container exited 0,
  else Failed.
* Terminated – the kubelet stopped the containers after SIGTERM: exit 0 (Completed) when they shut
  down within the grace period, 137 (Error) when killed at its end. A deleted pod is terminal
  whatever its restartPolicy (getPhase with podIsTerminal): Succeeded if all exited 0, else Failed.
"""

from __future__ import annotations

import copy
import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from kubelet_sim.stages.podstatus import (
    KUBELET_CONDITIONS,
    TERMINAL_PHASES,
    all_container_statuses,
    containers_ready_condition,
    get_phase,
    kubelet_conditions,
    pod_ready_condition,
    restarts_after_exit,
)
from minik3s.api.helpers.image_servers import known_server
from minik3s.api.helpers.images import image_repository, normalize_image
from minik3s.api.helpers.pods import is_sidecar
from minik3s.api.helpers.script import container_script
from minik3s.api.types import JsonDict
from minik3s.utils.clock import rfc3339

ANNOTATION_EXIT_CODE = "sim.minik3s.io/exit-code"

# the resize conditions, then the rest the kubelet owns (mergePodStatus appends generateAPIPodStatus's
# conditions in its order after the ones it does not own)
CONDITION_ORDER = ("PodResizePending", "PodResizeInProgress", *KUBELET_CONDITIONS)
EXIT_KILLED = 137


@dataclass(slots=True)
class StepContext:
    """What a step needs besides the pod: time, where it runs, and the outcome of the timer."""

    now: datetime
    host_ip: str
    allocate_ip: Callable[[], str] = field(default=lambda: "")
    killed: bool = False
    host_ips: tuple[str, ...] = ()  # the node's IPs, host_ip first (a second one: dual-stack)
    # containers whose image cannot be used (kubelet_sim.image_pull): name -> their `waiting`
    # state; the `Running` step leaves them waiting
    blocked: Mapping[str, JsonDict] = field(default_factory=dict)

    def node_ips(self) -> tuple[str, ...]:
        return self.host_ips or (self.host_ip,)


StatusStep = Callable[[JsonDict, StepContext], JsonDict]


# -- images and ids ---------------------------------------------------------------------------

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
    """generateAPIPodStatus's order: the conditions the kubelet does not own (readiness gates'
    conditions, DisruptionTarget, ...) first, as they were, then its own in CONDITION_ORDER."""
    rank = {t: i for i, t in enumerate(CONDITION_ORDER)}
    return sorted(conds, key=lambda c: rank.get(c.get("type", ""), -1))


def apply_conditions(conds: list[JsonDict], generated: list[JsonDict], now: str) -> list[JsonDict]:
    """Merge generated conditions (podstatus) into `conds`, each keeping its lastTransitionTime
    while its status does not change; the list in the kubelet's order."""
    for g in generated:
        set_condition(conds, g["type"], g["status"], now, reason=g.get("reason"), message=g.get("message"))
    return ordered_conditions(conds)


def regenerate_conditions(pod: JsonDict, status: JsonDict, conds: list[JsonDict], now: str, *,
                          sandbox_ready: bool) -> list[JsonDict]:
    """Every kubelet-owned condition from `status` (phase and container statuses), as a kubelet's
    generateAPIPodStatus sets them on each sync (kubelet_sim.stages.podstatus)."""
    return apply_conditions(conds, kubelet_conditions(pod, {**status, "conditions": conds},
                                                      sandbox_ready=sandbox_ready), now)


def step_base(pod: JsonDict, ctx: StepContext) -> tuple[JsonDict, list[JsonDict], str]:
    status = copy.deepcopy(pod.get("status") or {})
    now = rfc3339(ctx.now)
    conds = list(status.get("conditions") or [])
    ips = ctx.node_ips()
    status["hostIP"] = ips[0]
    status["hostIPs"] = [{"ip": ip} for ip in ips]
    status.setdefault("startTime", now)
    set_condition(conds, "PodScheduled", "True", now)
    return status, conds, now


def _old_statuses(status: JsonDict, key: str) -> dict[str, JsonDict]:
    return {s.get("name", ""): s for s in status.get(key) or []}


def _container_base(c: JsonDict, old: JsonDict | None) -> JsonDict:
    """A container's status before the runtime reports it: the spec's image as written (the
    runtime's normalised reference once a container was created: `_running`, `terminated_status`)."""
    image = c.get("image", "")
    cs: JsonDict = {
        "name": c.get("name", ""),
        "image": image if not (old or {}).get("containerID") else normalize_image(image),
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


# -- resources (kubelet_sim.stages.resize: in-place resize) ------------------------------------

REPORTED = ("cpu", "memory", "ephemeral-storage", "storage")  # what status `resources` reports


def _requests(c: JsonDict) -> JsonDict:
    """The container's requests as admitted (limits default missing requests)."""
    res = c.get("resources") or {}
    req = dict(res.get("limits") or {})
    req.update(res.get("requests") or {})
    return req


def allocated_status(c: JsonDict) -> tuple[JsonDict | None, JsonDict]:
    """(allocatedResources, resources) of a container running with its spec's resources:
    allocatedResources is every request (None when there is none), resources the cpu, memory
    and storage requests and limits (empty lists left out; `{}` for a container without any)."""
    req = _requests(c)
    lim = (c.get("resources") or {}).get("limits") or {}
    res: JsonDict = {}
    if lim:
        res["limits"] = {k: v for k, v in lim.items() if k in REPORTED}
    if req:
        res["requests"] = {k: v for k, v in req.items() if k in REPORTED}
    return (req or None), res


def _set_allocation(cs: JsonDict, c: JsonDict, old: JsonDict | None) -> None:
    """A started or exited container's allocatedResources/resources: kept from its previous run
    (a resize the kubelet has not admitted does not reach a restarted container), else the spec's."""
    if old and old.get("resources") is not None:
        if old.get("allocatedResources") is not None:
            cs["allocatedResources"] = copy.deepcopy(old["allocatedResources"])
        cs["resources"] = copy.deepcopy(old["resources"])
        return
    alloc, res = allocated_status(c)
    if alloc is not None:
        cs["allocatedResources"] = alloc
    cs["resources"] = res


# -- probes (kubelet_sim.stages.probes: when the rest comes due) -------------------------------

def probe_runs(c: JsonDict, probe: JsonDict) -> bool:
    """Whether the kubelet here runs the probe's handler and acts on its result
    (kubelet_sim.prober) rather than passing it once its delay is over: an `exec` probe, and an
    httpGet or tcpSocket probe of a container whose image's server is simulated
    (minik3s.api.helpers.image_servers.known_server: nginx on its own entrypoint)."""
    if isinstance(probe.get("exec"), dict):
        return True
    if isinstance(probe.get("httpGet"), dict) or isinstance(probe.get("tcpSocket"), dict):
        return known_server(c, image_repository(str(c.get("image") or "")))
    return False


def _delay(c: JsonDict, probe: str) -> float:
    """A probe's initialDelaySeconds (0 without the probe; math.inf for a probe the prober runs,
    whose result decides: kubelet_sim.prober)."""
    spec = c.get(probe)
    if isinstance(spec, dict) and probe_runs(c, spec):
        return math.inf
    delay = spec.get("initialDelaySeconds") if isinstance(spec, dict) else None
    return float(delay) if isinstance(delay, int | float) and not isinstance(delay, bool) and delay > 0 else 0.0


def started_after(c: JsonDict) -> float:
    """Seconds from a container's start until it counts as started (its startupProbe's delay)."""
    return _delay(c, "startupProbe")


def ready_after(c: JsonDict) -> float:
    """Seconds from a container's start until it counts as ready (after it started)."""
    return max(started_after(c), readiness_delay(c))


def readiness_delay(c: JsonDict) -> float:
    """Seconds from a container's start until its readiness probe may first pass."""
    return _delay(c, "readinessProbe")


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
    cs["image"] = normalize_image(c.get("image", ""))
    cs["imageID"] = image_id(c.get("image", ""))
    cs["containerID"] = container_id(uid, cs["name"], cs["restartCount"])
    cs["ready"] = initially_ready(c)
    cs["started"] = initially_started(c)
    cs["state"] = {"running": {"startedAt": now}}
    _set_allocation(cs, c, old)
    return cs


def terminated_status(c: JsonDict, old: JsonDict | None, uid: str, now: str, *, exit_code: int,
                reason: str | None = None, started: str | None = None) -> JsonDict:
    cs = _container_base(c, old)
    cs["image"] = normalize_image(c.get("image", ""))
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
    _set_allocation(cs, c, old)
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
    status["conditions"] = regenerate_conditions(pod, status, conds, now, sandbox_ready=False)
    return status


def container_ready_conditions(pod: JsonDict, conds: list[JsonDict], status: JsonDict,
                               now: str) -> list[JsonDict]:
    """ContainersReady and Ready from the containers' `ready` and the pod's phase (status
    manager's GenerateContainersReadyCondition / GeneratePodReadyCondition, via podstatus): the
    sidecars (restartable init containers) first, then the containers, in spec order; False with
    "containers with unready status: [a b]" while one is not ready; Ready also waits for the
    readiness gates. The conditions, in kubelet's order."""
    phase = str(status.get("phase") or "Pending")
    statuses = all_container_statuses(status)
    others = [c for c in conds if c.get("type") not in CONDITION_ORDER]
    return apply_conditions(conds, [pod_ready_condition(pod, others, statuses, phase),
                                    containers_ready_condition(pod, statuses, phase)], now)


def set_pod_ips(pod: JsonDict, status: JsonDict, ctx: StepContext) -> None:
    """The sandbox's IPs in `status` (in place): the node's for a host-network pod
    (generateAPIPodStatus), else the pod's own, allocated once."""
    if (pod.get("spec") or {}).get("hostNetwork"):
        ips = list(ctx.node_ips())
    else:
        ips = [status.get("podIP") or ctx.allocate_ip()]
    if ips[0]:
        status["podIP"] = ips[0]
        status["podIPs"] = [{"ip": ip} for ip in ips]


def start_unblocked(pod: JsonDict, status: JsonDict, ctx: StepContext, reasons: frozenset[str]) -> None:
    """Start, in `status` (in place), the regular and ephemeral containers of a running pod that
    were waiting for an image (a waiting reason in `reasons`) and are no longer blocked (the
    image was changed): the kubelet's next sync starts them."""
    uid = (pod.get("metadata") or {}).get("uid", "")
    now = rfc3339(ctx.now)
    spec = pod.get("spec") or {}
    for key, status_key in (("containers", "containerStatuses"), ("ephemeralContainers", "ephemeralContainerStatuses")):
        specs = {c.get("name", ""): c for c in spec.get(key) or () if isinstance(c, dict)}
        out = []
        for cs in status.get(status_key) or ():
            name = cs.get("name", "")
            waiting = (cs.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in reasons and name not in ctx.blocked and name in specs:
                cs = _running(specs[name], cs, uid, now)
                if key == "ephemeralContainers":  # never ready, no `started` (ephemeral_started)
                    cs["ready"] = False
                    cs.pop("started", None)
            out.append(cs)
        if status_key in status:
            status[status_key] = out


def running(pod: JsonDict, ctx: StepContext) -> JsonDict:
    spec = pod.get("spec") or {}
    uid = (pod.get("metadata") or {}).get("uid", "")
    inits = spec.get("initContainers") or []
    containers = spec.get("containers") or []
    status, conds, now = step_base(pod, ctx)
    status["phase"] = "Running"
    set_pod_ips(pod, status, ctx)
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
    css = []
    for c in containers:
        o = old.get(c.get("name", ""))
        waiting = ctx.blocked.get(c.get("name", ""))
        if waiting is None or (o and "running" in (o.get("state") or {})):
            css.append(_running(c, o, uid, now))
            continue
        cs = _container_base(c, o)
        cs["state"] = {"waiting": dict(waiting)}
        css.append(cs)
    status["containerStatuses"] = css
    if containers and all(c.get("name", "") in ctx.blocked and "running" not in cs["state"]
                          for c, cs in zip(containers, css, strict=True)):
        status["phase"] = "Pending"  # getPhase: no container runs yet
    status["conditions"] = regenerate_conditions(pod, status, conds, now, sandbox_ready=True)
    return status


def finish_pod(pod: JsonDict, status: JsonDict, conds: list[JsonDict], now: str, *,
            regular: list[JsonDict]) -> JsonDict:
    """Make a terminal status once the pod's containers are stopped for good: the phase from
    getPhase of a terminal pod (Succeeded when every regular container exited 0, else Failed;
    Failed too when an init container failed under restartPolicy Never), the sandbox gone, and
    the conditions generateAPIPodStatus gives a terminal pod (Ready/ContainersReady False with
    reason PodCompleted or PodFailed, Initialized True with PodCompleted for a Succeeded one)."""
    phase = get_phase(pod, all_container_statuses(status), pod_is_terminal=True, pod_has_initialized=True)
    if phase not in TERMINAL_PHASES:  # a container never reported: judge by the exit codes
        ok = all(((cs.get("state") or {}).get("terminated") or {}).get("exitCode") == 0 for cs in regular)
        phase = "Succeeded" if ok else "Failed"
    status["phase"] = phase
    status["conditions"] = regenerate_conditions(pod, status, conds, now, sandbox_ready=False)
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
    command's (minik3s.api.helpers.script, whatever the restart policy), else 0."""
    code = annotation_exit_code(pod)
    if code is not None:
        return lambda _c: code

    def played(c: JsonDict) -> int:
        script = container_script(c)
        return script.exit_code if script is not None and math.isfinite(script.seconds) else 0

    return played


def containers_exited(pod: JsonDict, ctx: StepContext) -> JsonDict:
    spec = pod.get("spec") or {}
    uid = (pod.get("metadata") or {}).get("uid", "")
    policy = spec.get("restartPolicy") or "Always"
    code_of = _exit_codes(pod)
    status, conds, now = step_base(pod, ctx)
    old = _old_statuses(status, "containerStatuses")
    css = []
    restarted = False
    for c in spec.get("containers") or []:
        code = code_of(c)
        done = terminated_status(c, old.get(c.get("name", "")), uid, now, exit_code=code)
        if not restarts_after_exit(policy, code):  # ShouldContainerBeRestarted
            css.append(done)
            continue
        restarted = True
        cs = copy.deepcopy(done)
        cs["lastState"] = {"terminated": done["state"]["terminated"]}
        cs["restartCount"] = done["restartCount"] + 1
        cs["containerID"] = container_id(uid, cs["name"], cs["restartCount"])
        cs["state"] = {"running": {"startedAt": now}}
        cs["ready"] = True
        cs["started"] = True
        css.append(cs)
    status["containerStatuses"] = css
    if restarted:
        status["conditions"] = container_ready_conditions(pod, conds, status, now)
        return status
    stop_sidecars(spec, status, uid, now, exit_code=0)
    return finish_pod(pod, status, conds, now, regular=css)


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
        waiting = ctx.blocked.get(c.get("name", ""))
        if cs is None and waiting is not None:  # its image cannot be used (kubelet_sim.image_pull)
            cs = _container_base(c, None)
            cs["state"] = {"waiting": dict(waiting)}
            cs.pop("started", None)
        elif cs is None:
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


def pod_images(pod: JsonDict, status: JsonDict | None = None) -> list[str]:
    """Every image the pod's (init) containers use, normalised, in spec order, without repeats;
    with `status`, only those of containers it shows created (a containerID: the image was
    pulled; one waiting on its image is not on the node)."""
    spec = pod.get("spec") or {}
    created = None if status is None else {
        cs.get("name") for key in ("initContainerStatuses", "containerStatuses")
        for cs in status.get(key) or () if cs.get("containerID")}
    seen: dict[str, None] = {}
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        if c.get("image") and (created is None or c.get("name") in created):
            seen.setdefault(normalize_image(c["image"]), None)
    return list(seen)
