"""When a simulated container counts as started and ready, from its probes (layer L4,
kubelet_sim.stages).

Why: a real kubelet reports a container `started` once its startupProbe succeeded and `ready`
once its readinessProbe did; neither probe runs before its `initialDelaySeconds`. Rollouts
(maxSurge, minReadySeconds), Services' endpoints and `kubectl rollout status` all wait on that.
Simulated containers run no probe handlers, so every probe succeeds the first time it may run:
the kubelet triggers a readiness probe as soon as a container starts, so a probe without an
initial delay makes the container ready at once, as before.

    started at S = start + startupProbe.initialDelaySeconds     (no startupProbe: S = start)
    ready   at R = max(S, start + readinessProbe.initialDelaySeconds)

A probe whose handler is `exec` is not passed here: its command runs in the container at each
period and its worker decides (kubelet_sim.prober), so such a container starts not ready.

Example: readinessProbe {initialDelaySeconds: 5} -> running at t=0 with ready false (the pod's
Ready and ContainersReady False, "containers with unready status: [web]"), ready at t=5. A
restart starts over from the new run. httpGet, tcpSocket and grpc probes never fail here.

Data flow: the `Running` step and restarts take lifecycle's `initially_started` /
`initially_ready`; the stage controller asks `due` on each sync of a running pod, writes `probes_passed` for what is
due and sets a timer for the rest.
"""

from __future__ import annotations

import copy
import math
from datetime import datetime

from kubelet_sim.stages.lifecycle import (
    StepContext,
    container_ready_conditions,
    readiness_delay,
    started_after,
    step_base,
)
from minik3s.api.helpers.pods import is_sidecar
from minik3s.api.types import JsonDict
from minik3s.utils.clock import parse_time


def probed_containers(pod: JsonDict) -> list[tuple[str, JsonDict]]:
    """(status list, container) for the regular containers and the sidecars (restartable init
    containers), the ones a kubelet probes."""
    spec = pod.get("spec") or {}
    out = [("containerStatuses", c) for c in spec.get("containers") or () if isinstance(c, dict)]
    out += [("initContainerStatuses", c) for c in spec.get("initContainers") or ()
            if isinstance(c, dict) and is_sidecar(c)]
    return out


def due(pod: JsonDict, now: datetime) -> tuple[dict[str, tuple[bool, bool]], float | None]:
    """For a running pod: the containers whose (started, ready) are due to change now, and the
    seconds until the next such change (None: nothing left to wait for)."""
    status = pod.get("status") or {}
    changes: dict[str, tuple[bool, bool]] = {}
    wait: float | None = None
    for key, c in probed_containers(pod):
        cs = next((s for s in status.get(key) or () if isinstance(s, dict) and s.get("name") == c.get("name")), None)
        running = ((cs or {}).get("state") or {}).get("running")
        if cs is None or not isinstance(running, dict) or (cs.get("started") and cs.get("ready")):
            continue
        start = parse_time(running.get("startedAt"))
        if start is None:
            continue
        elapsed = (now - start).total_seconds()
        started = bool(cs.get("started")) or elapsed >= started_after(c)
        ready = bool(cs.get("ready")) or (started and elapsed >= readiness_delay(c))
        if (started, ready) != (bool(cs.get("started")), bool(cs.get("ready"))):
            changes[c.get("name", "")] = (started, ready)
        if not ready:
            left = (started_after(c) if not started else readiness_delay(c)) - elapsed
            if math.isfinite(left):  # an exec probe's outcome comes from its worker
                wait = left if wait is None else min(wait, left)
    return changes, wait


def probes_passed(pod: JsonDict, ctx: StepContext, changes: dict[str, tuple[bool, bool]]) -> JsonDict:
    """The status with `changes` applied and the readiness conditions following them."""
    status, conds, now = step_base(pod, ctx)
    for key in ("initContainerStatuses", "containerStatuses"):
        if key not in status:
            continue
        out = []
        for cs in status[key]:
            change = changes.get(cs.get("name", ""))
            if change is not None:
                cs = copy.deepcopy(cs)
                cs["started"], cs["ready"] = change
            out.append(cs)
        status[key] = out
    status["conditions"] = container_ready_conditions(pod, conds, status, now)
    return status
