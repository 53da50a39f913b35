"""Init containers that play their commands, one after another (layer L4, kubelet_sim.stages).

Why: on a real node a pod's init containers run in order, each to completion, before any other
container starts; `kubectl get pods` shows `Init:0/2`, `Init:1/2`, then `PodInitializing`, and a
failing one shows `Init:Error` / `Init:CrashLoopBackOff` (or fails the pod under
`restartPolicy: Never`). The simulator plays that for pods with an init container whose
command it can play (minik3s.api.helpers.script: `sleep 5`, `echo ready`, `sh -c "exit 1"`);
pods whose init containers all run unknown programs keep completing them at once when the pod
starts (`Running` step), as before.

Sequence, per regular init container in spec order (sidecars, `restartPolicy: Always`, are
started when reached and count as done): not started -> running now; running a played command
-> terminated with its exit code when it ends (an unknown program: at once, code 0; an endless
loop: never); exit 0 -> the next one; a non-zero exit -> under restartPolicy Never the pod is
Failed, else the container restarts with the kubelet's crash-loop back-off
(kubelet_sim.stages.restarts: at once the first time, then 10 s, 20 s, ...). When every init
container is done the `pod-ready` stage starts the containers.

Example: init `sh -c "echo migrating; sleep 3"` then app -> t=0 Init:0/1 (init running),
t=3 init Completed, app Running.
"""

from __future__ import annotations

import copy
import math
from datetime import datetime

from kubelet_sim.stages.lifecycle import (
    StepContext,
    container_id,
    finish_pod,
    image_id,
    regenerate_conditions,
    step_base,
    terminated_status,
)
from kubelet_sim.stages.restarts import (
    REASON_CRASH_LOOP,
    Action,
    BackoffPolicy,
    CrashLoop,
    backoff_step,
    crash_loop_message,
    ended,
    mono_time,
)
from minik3s.api.helpers.pods import is_sidecar
from minik3s.api.helpers.script import container_script
from minik3s.api.types import JsonDict


def plays_init(pod: JsonDict) -> bool:
    """Whether the pod's init phase is played (some regular init container has a played
    command) and is not over yet (some regular init container has not completed)."""
    inits = [c for c in (pod.get("spec") or {}).get("initContainers") or () if isinstance(c, dict)]
    regular = [c for c in inits if not is_sidecar(c)]
    if not regular or all(container_script(c) is None for c in regular):
        return False
    statuses = {cs.get("name"): cs for cs in (pod.get("status") or {}).get("initContainerStatuses") or ()}
    return not all(_completed(statuses.get(c.get("name"))) for c in regular)


def _completed(cs: JsonDict | None) -> bool:
    term = ((cs or {}).get("state") or {}).get("terminated") or {}
    return bool(term) and int(term.get("exitCode") or 0) == 0


def plan(pod: JsonDict, memory: CrashLoop, now: float, wall: datetime,
         policy: BackoffPolicy) -> tuple[dict[str, Action], float, bool]:
    """(the actions due now, the next due time (monotonic, math.inf for none), whether the pod
    fails) for the first init container that is not done."""
    spec = pod.get("spec") or {}
    never = (spec.get("restartPolicy") or "Always") == "Never"
    statuses = {cs.get("name"): cs for cs in (pod.get("status") or {}).get("initContainerStatuses") or ()}
    actions: dict[str, Action] = {}
    for c in spec.get("initContainers") or ():
        name = str(c.get("name") or "")
        cs = statuses.get(name) or {}
        state = cs.get("state") or {}
        cid = str(cs.get("containerID") or "")
        if is_sidecar(c):
            if "running" in state:
                continue
            actions[name] = Action("restart")  # start it (a sidecar's start counts as done)
            continue
        if _completed(cs):
            continue
        if "running" in state:
            script = container_script(c)
            seconds, code = (script.seconds, script.exit_code) if script is not None else (0.0, 0)
            if math.isinf(seconds):
                return actions, math.inf, False
            end = mono_time(memory.started, cid, state["running"].get("startedAt"), now, wall) + seconds
            if end <= now + 1e-9:
                actions[name] = Action("exit", exit_code=code)
                return actions, math.inf, False
            return actions, end, False
        if ended(cs) is None:  # not started yet
            actions[name] = Action("restart")
            return actions, math.inf, False
        if never:
            return actions, math.inf, True
        action, due = backoff_step(name, cs, memory, now, wall, policy)
        if action is not None:
            actions[name] = action
        return actions, due, False
    return actions, math.inf, False


def init_status(pod: JsonDict, ctx: StepContext, actions: dict[str, Action], *, fail: bool) -> JsonDict:
    """The Pending pod's status after `actions` on its init containers (or, with `fail`, the
    Failed pod of a restartPolicy Never whose init container failed)."""
    spec = pod.get("spec") or {}
    uid = (pod.get("metadata") or {}).get("uid", "")
    status, conds, now = step_base(pod, ctx)
    old = {cs.get("name"): cs for cs in status.get("initContainerStatuses") or ()}
    out = []
    for c in spec.get("initContainers") or ():
        name = c.get("name", "")
        cs = copy.deepcopy(old.get(name) or {"name": name, "image": c.get("image", ""), "ready": False,
                                               "restartCount": 0, "started": False, "state": {}, "lastState": {}})
        action = actions.get(name)
        if action is not None and action.kind == "exit":
            cs = terminated_status(c, cs, uid, now, exit_code=action.exit_code)
            cs["ready"] = action.exit_code == 0
        elif action is not None and action.kind == "wait":
            cs["lastState"] = {"terminated": copy.deepcopy(cs["state"]["terminated"])}
            cs["state"] = {"waiting": {"reason": REASON_CRASH_LOOP,
                                       "message": crash_loop_message(pod, name, action.period)}}
            cs["ready"] = cs["started"] = False
        elif action is not None:  # (re)start
            state = cs.get("state") or {}
            last = state.get("terminated") or (cs.get("lastState") or {}).get("terminated")
            if last:
                cs["restartCount"] = int(cs.get("restartCount") or 0) + 1
                cs["lastState"] = {"terminated": copy.deepcopy(last)}
            cs["imageID"] = image_id(c.get("image", ""))
            cs["containerID"] = container_id(uid, name, int(cs.get("restartCount") or 0))
            cs["state"] = {"running": {"startedAt": now}}
            cs["started"] = True
            cs["ready"] = is_sidecar(c)
        out.append(cs)
    status["initContainerStatuses"] = out
    if fail:
        # getPhase: an init container failed under restartPolicy Never, the pod is Failed; the
        # kubelet stops the sidecars it had started, the other containers never ran
        status["initContainerStatuses"] = [
            terminated_status(c, cs, uid, now, exit_code=0)
            if is_sidecar(c) and "running" in (cs.get("state") or {}) else cs
            for c, cs in zip(spec.get("initContainers") or (), out, strict=True)]
        return finish_pod(pod, status, conds, now, regular=status.get("containerStatuses") or [])
    status["conditions"] = regenerate_conditions(pod, status, conds, now, sandbox_ready=True)
    return status
