"""Container restarts and the crash-loop back-off of a simulated kubelet (layer L4, kubelet_sim.stages).

Why: under `restartPolicy: Always` (and `OnFailure` after a non-zero exit) the kubelet starts a
container that ended on its own again, but not at once every time: from the second exit on it
waits, per container, a back-off that starts at 10 s and doubles up to 5 min (kubelet v1.33's
`flowcontrol.Backoff` with `MaxContainerBackOff`, no jitter), and meanwhile reports the container
`waiting` with reason `CrashLoopBackOff`. That is what `kubectl get pods` shows for a crashing
container (`Error`, `CrashLoopBackOff`, `RESTARTS 3 (12s ago)`), and what an operator's tests
meet on a real cluster.

A container *ends on its own* when the pod carries `sim.minik3s.io/run-seconds` (every container
runs that long, exiting with `sim.minik3s.io/exit-code`, else its played command's code, else 0)
or when its played command is finite (minik3s.api.helpers.script: `echo hi`, `sh -c "exit 1"`).

Timeline of one container that runs L seconds (initial back-off 10 s, maximum 300 s):

    t=0        running                                   restartCount 0
    t=L        terminated (Error, or Completed for 0)    restartCount 0
               restarted at once: not in back-off yet    restartCount 1, back-off now 10 s
    t=2L       terminated                                restartCount 1
               waiting CrashLoopBackOff, "back-off 10s restarting failed container=c pod=p_ns(uid)"
    t=2L+10    running, back-off now 20 s                restartCount 2
    t=3L+10    terminated -> CrashLoopBackOff 20 s -> running at 3L+30 (back-off 40 s) ...

The back-off is the kubelet's memory (`CrashLoop`, one per pod record), not the pod's: as on a
real node, a kubelet that restarts (here: the server) forgets it and restarts at once. A
container that ran more than twice the maximum (10 min) before exiting starts over at 10 s
(`hasExpired`). Each step is one status write; the next sync plans from the status it caused.

Data flow: StageController.sync -> `plan(pod, memory, now)` -> (`Action`s due now, next due time)
-> `restart_status(pod, ctx, actions)` -> PUT /status -> `CrashLoop.commit` (the back-off moves
only once the write succeeded).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from kubelet_sim.stages.lifecycle import (
    StepContext,
    annotation_exit_code,
    container_id,
    container_ready_conditions,
    finish_pod,
    initially_ready,
    initially_started,
    step_base,
    stop_sidecars,
    terminated_status,
)
from kubelet_sim.stages.podstatus import restarts_after_exit
from kubelet_sim.stages.timing import ANNOTATION_RUN_SECONDS, parse_seconds
from minik3s.api.helpers.pods import is_sidecar
from minik3s.api.helpers.process_exits import exit_code
from minik3s.api.helpers.script import container_script
from minik3s.api.types import JsonDict
from minik3s.utils.clock import parse_time
from minik3s.utils.duration import format_duration

REASON_CRASH_LOOP = "CrashLoopBackOff"
# kubelet: backOffPeriod (initial) and MaxContainerBackOff
INITIAL_BACKOFF_SECONDS = 10.0
MAX_BACKOFF_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class Lifetime:
    """How long one run of a container lasts and how it ends."""

    seconds: float
    exit_code: int


def container_lifetimes(pod: JsonDict) -> dict[str, Lifetime]:
    """The regular containers that end on their own, by name (see the module docstring)."""
    meta = pod.get("metadata") or {}
    run = parse_seconds((meta.get("annotations") or {}).get(ANNOTATION_RUN_SECONDS))
    code = annotation_exit_code(pod)
    out: dict[str, Lifetime] = {}
    uid = str(meta.get("uid") or "")
    runs = {str(cs.get("name") or ""): int(cs.get("restartCount") or 0)
            for cs in (pod.get("status") or {}).get("containerStatuses") or () if isinstance(cs, dict)}
    for c in (pod.get("spec") or {}).get("containers") or ():
        if not isinstance(c, dict):
            continue
        name = str(c.get("name") or "")
        ended = exit_code(uid, name, runs.get(name, 0)) if name in runs else None
        if ended is not None:  # its process ended outside the plan (an attached shell's `exit`)
            out[name] = Lifetime(0.0, ended)
            continue
        script = container_script(c)
        finite = script is not None and math.isfinite(script.seconds)
        played = script.exit_code if script is not None and finite else 0
        if run is not None:
            out[str(c.get("name") or "")] = Lifetime(run, played if code is None else code)
        elif script is not None and finite:
            out[str(c.get("name") or "")] = Lifetime(script.seconds, played if code is None else code)
    return out


def sidecar_lifetimes(pod: JsonDict) -> dict[str, Lifetime]:
    """The sidecars (init containers with restartPolicy Always) whose played command ends: the
    kubelet restarts them whatever the pod's policy, as long as the pod runs."""
    out: dict[str, Lifetime] = {}
    uid = str((pod.get("metadata") or {}).get("uid") or "")
    runs = {str(cs.get("name") or ""): int(cs.get("restartCount") or 0)
            for cs in (pod.get("status") or {}).get("initContainerStatuses") or () if isinstance(cs, dict)}
    for c in (pod.get("spec") or {}).get("initContainers") or ():
        if isinstance(c, dict) and is_sidecar(c):
            name = str(c.get("name") or "")
            ended = exit_code(uid, name, runs[name]) if name in runs else None
            if ended is not None:  # its process ended outside the plan (killed by a failed probe)
                out[name] = Lifetime(0.0, ended)
                continue
            script = container_script(c)
            if script is not None and math.isfinite(script.seconds):
                out[name] = Lifetime(script.seconds, script.exit_code)
    return out


def _restarts(policy: str, exit_code: int) -> bool:
    """Whether the kubelet starts a container again after it exited with `exit_code`."""
    return restarts_after_exit(policy, exit_code)


def containers_end(pod: JsonDict) -> bool:
    """Whether some container of the pod ends on its own (the `pod-containers-end` stage: each
    exits at its own time; then it restarts, or, when none will, the pod completes)."""
    return bool(container_lifetimes(pod)) or bool(sidecar_lifetimes(pod))


def restarts_containers(pod: JsonDict) -> bool:
    """Whether this pod's containers go through restarts (the stage selector `matchRestarts`),
    rather than the pod ending when they do or running on: some
    container ends on its own and the restart policy restarts it, or (OnFailure) the pod cannot
    end Succeeded because another container never ends or fails."""
    spec = pod.get("spec") or {}
    policy = spec.get("restartPolicy") or "Always"
    if policy == "Never":
        return False
    lives = container_lifetimes(pod)
    if not lives:
        return False
    if policy == "Always":
        return True
    containers = [c for c in spec.get("containers") or () if isinstance(c, dict)]
    ends_succeeded = len(lives) == len(containers) and all(lt.exit_code == 0 for lt in lives.values())
    return not ends_succeeded


@dataclass(slots=True)
class Backoff:
    """One container's entry of the kubelet's back-off: the current period and when it moved."""

    period: float
    updated: float


@dataclass(frozen=True, slots=True)
class BackoffPolicy:
    """flowcontrol.Backoff as the kubelet configures it (no jitter)."""

    initial: float = INITIAL_BACKOFF_SECONDS
    maximum: float = MAX_BACKOFF_SECONDS

    def _expired(self, entry: Backoff, event: float) -> bool:
        return event - entry.updated > 2 * self.maximum

    def in_backoff(self, entry: Backoff | None, finished: float, now: float) -> bool:
        """IsInBackOffSince(key, finishedAt)."""
        return entry is not None and not self._expired(entry, finished) and now - finished < entry.period

    def next(self, entry: Backoff | None, finished: float, now: float) -> Backoff:
        """Next(key, finishedAt): a new entry at the initial period, else the period doubled."""
        if entry is None or self._expired(entry, finished):
            return Backoff(self.initial, now)
        return Backoff(min(entry.period * 2, self.maximum), now)


@dataclass(slots=True)
class CrashLoop:
    """What the kubelet remembers about one pod's containers: the back-off entries (by name)
    and when each container instance started and finished (by containerID, monotonic)."""

    backoffs: dict[str, Backoff] = field(default_factory=dict)
    started: dict[str, float] = field(default_factory=dict)
    finished: dict[str, float] = field(default_factory=dict)

    def commit(self, actions: dict[str, Action], new_status: JsonDict, now: float) -> None:
        """Record what a successfully written `restart_status` or init_containers'
        `init_status` did (container names are unique across both status lists)."""
        by_name = {cs.get("name", ""): cs for key in ("initContainerStatuses", "containerStatuses")
                   for cs in new_status.get(key) or ()}
        for name, action in actions.items():
            cs = by_name.get(name) or {}
            cid = str(cs.get("containerID") or "")
            if action.kind == "exit":
                self.finished[cid] = now
            elif action.kind == "restart":
                if action.backoff is not None:
                    self.backoffs[name] = action.backoff
                self.started[cid] = now
        live = {str(cs.get("containerID") or "") for cs in by_name.values()}
        live |= {str(((cs.get("lastState") or {}).get("terminated") or {}).get("containerID") or "")
                 for cs in by_name.values()}
        for memo in (self.started, self.finished):
            for cid in [k for k in memo if k not in live]:
                del memo[cid]


@dataclass(frozen=True, slots=True)
class Action:
    """What happens to one container now: it `exit`s (its run ended), `wait`s in
    CrashLoopBackOff (`period`: the back-off it waits), or is `restart`ed (`backoff`: the
    entry the restart leaves behind)."""

    kind: Literal["exit", "wait", "restart"]
    exit_code: int = 0
    period: float = 0.0
    backoff: Backoff | None = None


def mono_time(memo: dict[str, float], cid: str, stamp: object, now: float, wall: datetime) -> float:
    """When an instance started or finished on the monotonic clock: remembered, else derived
    from its status timestamp (a kubelet that did not write it, e.g. before a server restart)."""
    if cid in memo:
        return memo[cid]
    when = parse_time(stamp)
    return now - max((wall - when).total_seconds(), 0.0) if when is not None else now


def backoff_step(name: str, cs: JsonDict, memory: CrashLoop, now: float, wall: datetime,
                 policy: BackoffPolicy) -> tuple[Action | None, float]:
    """For a container that ended (terminated, or waiting in CrashLoopBackOff) and is to be
    started again: (the action due now, or None, and when the next is due (math.inf: now))."""
    state = cs.get("state") or {}
    done = state.get("terminated") or (cs.get("lastState") or {}).get("terminated") or {}
    cid = str(cs.get("containerID") or "")
    finished = mono_time(memory.finished, str(done.get("containerID") or cid), done.get("finishedAt"), now, wall)
    entry = memory.backoffs.get(name)
    if policy.in_backoff(entry, finished, now):
        assert entry is not None
        action = Action("wait", period=entry.period) if "terminated" in state else None
        return action, finished + entry.period
    return Action("restart", backoff=policy.next(entry, finished, now)), math.inf


def ended(cs: JsonDict) -> JsonDict | None:
    """The run a container ended with: its terminated state, or, while it waits in
    CrashLoopBackOff, its last state; None otherwise."""
    state = cs.get("state") or {}
    if "terminated" in state:
        return dict(state["terminated"])
    if (state.get("waiting") or {}).get("reason") == REASON_CRASH_LOOP:
        return dict((cs.get("lastState") or {}).get("terminated") or {})
    return None


def plan(pod: JsonDict, memory: CrashLoop, now: float, wall: datetime,
         policy: BackoffPolicy) -> tuple[dict[str, Action], float]:
    """The actions due now for the pod's containers that end on their own, and when the next
    one falls due (monotonic; math.inf when none will)."""
    restart_policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    sidecars = sidecar_lifetimes(pod)
    lives = {**container_lifetimes(pod), **sidecars}
    status = pod.get("status") or {}
    statuses = {cs.get("name", ""): cs for key in ("initContainerStatuses", "containerStatuses")
                for cs in status.get(key) or ()}
    actions: dict[str, Action] = {}
    due = math.inf
    for name, life in lives.items():
        cs = statuses.get(name)
        if cs is None:
            continue
        state = cs.get("state") or {}
        cid = str(cs.get("containerID") or "")
        if "running" in state:
            end = mono_time(memory.started, cid, state["running"].get("startedAt"), now, wall) + life.seconds
            if end <= now:
                actions[name] = Action("exit", exit_code=life.exit_code)
            else:
                due = min(due, end)
            continue
        done = ended(cs)
        policy_of = "Always" if name in sidecars else restart_policy
        if done is None or not _restarts(policy_of, int(done.get("exitCode") or 0)):
            continue
        action, next_due = backoff_step(name, cs, memory, now, wall, policy)
        if action is not None:
            actions[name] = action
        due = min(due, next_due)
    return actions, due


def crash_loop_message(pod: JsonDict, container: str, period: float) -> str:
    """kuberuntime's doBackOff error: "back-off 10s restarting failed container=c pod=p_ns(uid)"."""
    return f"back-off {format_duration(period)} restarting failed container={container} pod={_pod_ref(pod)}"


def backoff_event_message(pod: JsonDict, container: str) -> str:
    """The kubelet's `BackOff` Event: "Back-off restarting failed container c in pod p_ns(uid)"."""
    return f"Back-off restarting failed container {container} in pod {_pod_ref(pod)}"


def _pod_ref(pod: JsonDict) -> str:
    """format.Pod: name_namespace(uid)."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"


def _apply(pod: JsonDict, containers: Iterable[JsonDict], statuses: Iterable[JsonDict],
           actions: dict[str, Action], uid: str, now: str) -> list[JsonDict]:
    """One status list after `actions` (see restart_status)."""
    old_by_name = {cs.get("name", ""): cs for cs in statuses}
    out: list[JsonDict] = []
    for c in containers:
        name = c.get("name", "")
        old = old_by_name.get(name)
        action = actions.get(name)
        if old is None or action is None:
            if old is not None:
                out.append(old)
            continue
        if action.kind == "exit":
            cs = terminated_status(c, old, uid, now, exit_code=action.exit_code)
        elif action.kind == "wait":
            cs = copy.deepcopy(old)
            cs["lastState"] = {"terminated": copy.deepcopy(old["state"]["terminated"])}
            cs["state"] = {"waiting": {"reason": REASON_CRASH_LOOP,
                                       "message": crash_loop_message(pod, name, action.period)}}
        else:
            state = old.get("state") or {}
            last = state.get("terminated") or (old.get("lastState") or {}).get("terminated")
            cs = copy.deepcopy(old)
            cs["restartCount"] = int(old.get("restartCount") or 0) + 1
            cs["containerID"] = container_id(uid, name, cs["restartCount"])
            cs["lastState"] = {"terminated": copy.deepcopy(last)} if last else {}
            cs["state"] = {"running": {"startedAt": now}}
            cs["ready"] = initially_ready(c)
            cs["started"] = initially_started(c)
        if action.kind != "restart":
            cs["ready"] = False
            cs["started"] = False
        out.append(cs)
    return out


def restart_status(pod: JsonDict, ctx: StepContext, actions: dict[str, Action]) -> JsonDict:
    """The pod's status after `actions`: exited containers terminated (not ready), waiting ones
    in CrashLoopBackOff with their last run as `lastState`, restarted ones running again
    (restartCount + 1, a new containerID); readiness conditions follow the containers."""
    spec = pod.get("spec") or {}
    uid = (pod.get("metadata") or {}).get("uid", "")
    status, conds, now = step_base(pod, ctx)
    if any(name in actions for name in sidecar_lifetimes(pod)):
        status["initContainerStatuses"] = _apply(pod, spec.get("initContainers") or (),
                                                 status.get("initContainerStatuses") or (), actions, uid, now)
    css = _apply(pod, spec.get("containers") or (), status.get("containerStatuses") or (), actions, uid, now)
    status["containerStatuses"] = css
    policy = spec.get("restartPolicy") or "Always"
    terminated = [((cs.get("state") or {}).get("terminated") or {}) for cs in css]
    if css and all(terminated) and not any(_restarts(policy, int(t.get("exitCode") or 0)) for t in terminated):
        # every container ended and none restarts: the pod is done (getPhase), sidecars stop
        stop_sidecars(spec, status, uid, now, exit_code=0)
        return finish_pod(pod, status, conds, now, regular=css)
    status["conditions"] = container_ready_conditions(pod, conds, status, now)
    return status


__all__ = ["Action", "Backoff", "BackoffPolicy", "CrashLoop", "Lifetime", "backoff_event_message",
           "container_lifetimes", "containers_end", "crash_loop_message", "plan", "restart_status",
           "restarts_containers"]
