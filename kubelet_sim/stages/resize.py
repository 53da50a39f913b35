"""In-place pod resize on the simulated kubelet (KEP-1287 as kubelet v1.33 plays it) (layer L4).

Why: after `kubectl patch pod web --subresource resize ...` the API holds the desired resources;
the kubelet decides whether they fit, records the allocation and actuates it, and users read the
outcome in the pod's status:

* `containerStatuses[].allocatedResources`: the requests the kubelet admitted (its checkpoint);
  `containerStatuses[].resources`: what the runtime runs with (cpu, memory, ephemeral-storage
  and storage of the allocation, as convertContainerStatusResources reports them).
* Condition `PodResizePending` (reason `Infeasible`: the pod's desired requests exceed the node's
  allocatable, memory checked first, "Node didn't have enough capacity: memory, requested: N,
  capacity: M"; reason `Deferred`: they fit the node but not beside the other pods, "Node didn't
  have enough resource: cpu, requested: N, used: U, capacity: M", retried when pods leave the
  node and every sync period).
* Condition `PodResizeInProgress` (status True, no reason) from the allocation until the runtime
  runs with it; then it is removed and `resources` shows the new values. A container whose
  changed resource has `resizePolicy` RestartContainer is restarted (restartCount + 1, the old
  run in lastState); NotRequired ones are resized in place.

`step(pod, node_allocatable, others_requests, ctx)` returns the status to write, or None when
nothing is to change. Pure: the stage controller supplies the node and a callable for the other
pods' requests (summed only when a resize is to be admitted, not on every sync).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping

from kubelet_sim.stages.lifecycle import (
    StepContext,
    allocated_status,
    container_id,
    ordered_conditions,
    step_base,
)
from minik3s.api.helpers.pods import is_sidecar
from minik3s.api.helpers.resources import CPU, MEMORY, pod_requests, quantity_to_int
from minik3s.api.types import JsonDict
from minik3s.utils.clock import rfc3339

PENDING = "PodResizePending"
IN_PROGRESS = "PodResizeInProgress"
RESIZE_CONDITIONS = (PENDING, IN_PROGRESS)


def _resizable(pod: JsonDict) -> list[tuple[str, JsonDict]]:
    """(status list key, container) of the containers a resize applies to: regular containers and
    sidecars."""
    spec = pod.get("spec") or {}
    out = [("initContainerStatuses", c) for c in spec.get("initContainers") or () if is_sidecar(c)]
    out += [("containerStatuses", c) for c in spec.get("containers") or ()]
    return out


def _status_of(status: JsonDict, key: str, name: str) -> JsonDict | None:
    for cs in status.get(key) or ():
        if isinstance(cs, dict) and cs.get("name") == name:
            return cs
    return None


def _same(a: Mapping[str, object] | None, b: Mapping[str, object] | None) -> bool:
    """Equal resource lists by value (100m == 0.1)."""
    a, b = a or {}, b or {}
    return a.keys() == b.keys() and all(quantity_to_int(k, a[k]) == quantity_to_int(k, b[k]) for k in a)


def _desired_pod(pod: JsonDict) -> JsonDict:
    """The pod as the scheduler would count its spec alone (no status resources)."""
    return {"spec": pod.get("spec") or {}}


def _message_capacity(pod_req: Mapping[str, int], alloc: Mapping[str, int]) -> str | None:
    cpu_cap, mem_cap = alloc.get(CPU, 0), alloc.get(MEMORY, 0)
    cpu, mem = pod_req.get(CPU, 0), pod_req.get(MEMORY, 0)
    if mem > mem_cap:
        return f"Node didn't have enough capacity: memory, requested: {mem}, capacity: {mem_cap}"
    if cpu > cpu_cap:
        return f"Node didn't have enough capacity: cpu, requested: {cpu}, capacity: {cpu_cap}"
    return None


def _message_free(pod_req: Mapping[str, int], used: Mapping[str, int], alloc: Mapping[str, int]) -> str | None:
    """The admit handler's InsufficientResource message, cpu first as the fit check orders them."""
    for name in (CPU, MEMORY):
        want = pod_req.get(name, 0)
        if want and want + used.get(name, 0) > alloc.get(name, 0):
            return (f"Node didn't have enough resource: {name}, requested: {want}, used: {used.get(name, 0)}, "
                    f"capacity: {alloc.get(name, 0)}")
    return None


def pending(pod: JsonDict) -> JsonDict | None:
    """The pod's PodResizePending condition, if any."""
    for c in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == PENDING:
            return c
    return None


def step(pod: JsonDict, node_allocatable: Mapping[str, int], others_requests: Callable[[], Mapping[str, int]],
         ctx: StepContext) -> JsonDict | None:
    """The next status of a running pod as far as resizing goes (None: nothing to write)."""
    status = pod.get("status") or {}
    containers = _resizable(pod)
    wanted: list[tuple[str, JsonDict, JsonDict, JsonDict | None, JsonDict]] = []
    accept_needed = actuate_needed = False
    for key, c in containers:
        cs = _status_of(status, key, c.get("name", ""))
        if cs is None or "running" not in (cs.get("state") or {}):
            continue
        alloc_req, res = allocated_status(c)
        wanted.append((key, c, cs, alloc_req, res))
        if not _same(cs.get("allocatedResources"), alloc_req):
            accept_needed = True
        elif cs.get("resources") is None or not (_same((cs.get("resources") or {}).get("requests"), res.get("requests"))
                                                   and _same((cs.get("resources") or {}).get("limits"),
                                                             res.get("limits"))):
            actuate_needed = True
    conds_now = {c.get("type"): c for c in status.get("conditions") or () if isinstance(c, dict)}
    if not accept_needed and not actuate_needed:
        if any(t in conds_now for t in RESIZE_CONDITIONS):
            new, conds, _ = step_base(pod, ctx)
            new["conditions"] = [c for c in conds if c.get("type") not in RESIZE_CONDITIONS]
            return new
        return None
    new, conds, now = step_base(pod, ctx)
    if accept_needed:
        desired = pod_requests(_desired_pod(pod))
        why = _message_capacity(desired, node_allocatable)
        reason = "Infeasible"
        if why is None:
            why = _message_free(desired, others_requests(), node_allocatable)
            reason = "Deferred"
        if why is not None:
            old = conds_now.get(PENDING)
            if old is not None and old.get("reason") == reason and old.get("message") == why \
                    and (reason == "Infeasible" or old.get("lastProbeTime") == now):
                return None  # an infeasible resize is not retried; a deferred one is, each sync
            conds = [c for c in conds if c.get("type") != PENDING]
            conds.append(_resize_condition(PENDING, old, now, reason, why))
            new["conditions"] = ordered_conditions(conds)
            return new
        # admitted: the allocation is checkpointed, the runtime is to apply it
        for key, c, _cs, alloc_req, _res in wanted:
            target = _status_of(new, key, c.get("name", ""))
            if target is None:
                continue
            if alloc_req is None:
                target.pop("allocatedResources", None)
            else:
                target["allocatedResources"] = copy.deepcopy(alloc_req)
        conds = [c for c in conds if c.get("type") not in RESIZE_CONDITIONS]
        conds.append(_resize_condition(IN_PROGRESS, conds_now.get(IN_PROGRESS), now, "", ""))
        new["conditions"] = ordered_conditions(conds)
        return new
    # actuation: the runtime runs with the allocation; restart what must restart
    for key, c, cs, _alloc, res in wanted:
        target = _status_of(new, key, c.get("name", ""))
        if target is None:
            continue
        if cs.get("resources") is not None and _needs_restart(c, cs["resources"], res):
            _restart(target, c, pod, ctx)
        target["resources"] = copy.deepcopy(res)
    new["conditions"] = ordered_conditions([c for c in conds if c.get("type") != IN_PROGRESS])
    return new


def _resize_condition(ctype: str, old: JsonDict | None, now: str, reason: str, message: str) -> JsonDict:
    """The status manager's updatedPodResizeCondition: probed now, transitioned when the reason
    changed."""
    cond: JsonDict = {"lastProbeTime": now,
                      "lastTransitionTime": old.get("lastTransitionTime", now)
                      if old is not None and (old.get("reason") or "") == reason else now,
                      "status": "True", "type": ctype}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


def _needs_restart(c: JsonDict, actual: JsonDict, wanted: JsonDict) -> bool:
    policies = {p.get("resourceName"): p.get("restartPolicy") for p in c.get("resizePolicy") or ()
                if isinstance(p, dict)}
    for name in (CPU, MEMORY):
        if policies.get(name) != "RestartContainer":
            continue
        for part in ("requests", "limits"):
            a = (actual.get(part) or {}).get(name)
            b = (wanted.get(part) or {}).get(name)
            if (a is None) != (b is None) or (a is not None and quantity_to_int(name, a) != quantity_to_int(name, b)):
                return True
    return False


def _restart(cs: JsonDict, c: JsonDict, pod: JsonDict, ctx: StepContext) -> None:
    """The kubelet stops the container (it shuts down within its grace period) and starts it
    again with the new resources."""
    now = rfc3339(ctx.now)
    uid = (pod.get("metadata") or {}).get("uid", "")
    running = (cs.get("state") or {}).get("running") or {}
    old_id = cs.get("containerID") or ""
    cs["lastState"] = {"terminated": {"containerID": old_id, "exitCode": 0, "finishedAt": now,
                                      "reason": "Completed", "startedAt": running.get("startedAt") or now}}
    cs["restartCount"] = int(cs.get("restartCount") or 0) + 1
    cs["containerID"] = container_id(uid, c.get("name", ""), cs["restartCount"])
    cs["state"] = {"running": {"startedAt": now}}
