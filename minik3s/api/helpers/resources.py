"""Pod resource requests as kube-scheduler counts them (upstream component-helpers resource.PodRequests).

A pod's request for a resource is max(sum over regular containers, max over init containers)
plus `spec.overhead`. Sidecar (restartable) init containers add to everything after them.
Example: containers 100m + 200m cpu, one init container 500m -> max(300m, 500m) = 500m.

The non-zero variant (used by the LeastAllocated/Balanced scores and upstream's NonZeroRequested)
substitutes 100m cpu / 200Mi memory for a container that requests none.
"""

from __future__ import annotations

from collections.abc import Iterable

from minik3s.api.helpers.pods import is_sidecar
from minik3s.api.quantity import QuantityError, int_value, milli_value
from minik3s.api.types import JsonDict

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


def quantity_to_int(resource: str, q: object) -> int:
    """cpu in milli-cores; every other resource in units (bytes, counts)."""
    try:
        if resource == CPU:
            return milli_value(q)  # type: ignore[arg-type]
        return int_value(q)  # type: ignore[arg-type]
    except (QuantityError, TypeError):
        return 0


def resource_list_to_ints(rl: JsonDict | None) -> dict[str, int]:
    if not rl:
        return {}
    return {k: quantity_to_int(k, v) for k, v in rl.items()}


def _container_requests(c: JsonDict) -> dict[str, int]:
    res = c.get("resources") or {}
    req = res.get("requests")
    if req is None:
        # upstream defaulting: limits become requests when requests are unset
        req = res.get("limits")
    elif res.get("limits"):
        req = {**res["limits"], **req}
    return resource_list_to_ints(req)


def _add_into(acc: dict[str, int], add: dict[str, int]) -> None:
    for k, v in add.items():
        acc[k] = acc.get(k, 0) + v


def _max_into(acc: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        if v > acc.get(k, 0):
            acc[k] = v


def _non_zero(r: dict[str, int]) -> dict[str, int]:
    """A container's requests with the scheduler's defaults for a missing cpu / memory request (an
    explicit zero stays zero: upstream's NonMissingContainerRequests)."""
    out = dict(r)
    out.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
    out.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
    return out


def _combine(regular: list[dict[str, int]], init: list[tuple[dict[str, int], bool]],
             overhead: dict[str, int]) -> dict[str, int]:
    """max(sum of regular + sidecars, max over init containers of itself + the sidecars before it)
    plus overhead; `init` holds (requests, is_sidecar) in spec order."""
    reqs: dict[str, int] = {}
    for r in regular:
        _add_into(reqs, r)
    if init:
        init_max: dict[str, int] = {}
        sidecars: dict[str, int] = {}
        for r, sidecar in init:
            if sidecar:
                _add_into(sidecars, r)
                _add_into(reqs, r)
                continue
            total = dict(r)
            _add_into(total, sidecars)
            _max_into(init_max, total)
        _max_into(reqs, init_max)
    if overhead:
        _add_into(reqs, overhead)
    return reqs


def _larger(a: object, b: object, resource: str) -> object:
    """Of two quantities of one resource, the larger (a on a tie or when b does not parse)."""
    return b if quantity_to_int(resource, b) > quantity_to_int(resource, a) else a


def _max_list(*lists: object) -> JsonDict:
    out: JsonDict = {}
    for rl in lists:
        if isinstance(rl, dict):
            for k, v in rl.items():
                out[k] = _larger(out[k], v, k) if k in out else v
    return out


def _effective(c: JsonDict, cs: JsonDict, infeasible: bool) -> JsonDict:
    """A container with the resources the scheduler and quota count while it may be resizing
    (component-helpers PodRequests with UseStatusResources): per resource the largest of the
    desired (spec, with limits defaulting requests), allocated and actual requests, and of the
    desired and actual limits; a resize the kubelet found Infeasible counts only what runs."""
    res = c.get("resources") or {}
    status_res = cs.get("resources") or {}
    alloc = cs.get("allocatedResources")
    spec_req = res.get("requests")
    if res.get("limits"):
        spec_req = {**res["limits"], **(spec_req or {})}
    if not infeasible and status_res.get("requests") == spec_req and status_res.get("limits") == res.get("limits") \
            and (alloc is None or alloc == spec_req):
        return c  # nothing resizing: the spec is what counts (the common case, no parsing)
    if infeasible:
        req = _max_list(status_res.get("requests"), alloc)
        lim = _max_list(status_res.get("limits"))
    else:
        req = _max_list(spec_req, status_res.get("requests"), alloc)
        lim = _max_list(res.get("limits"), status_res.get("limits"))
    out_res: JsonDict = {}
    if req:
        out_res["requests"] = req
    if lim:
        out_res["limits"] = lim
    return {**c, "resources": out_res}


def effective_containers(pod: JsonDict) -> tuple[list[JsonDict], list[JsonDict]]:
    """The pod's containers and init containers, each sidecar and regular container with its
    resources as `_effective` counts them where the kubelet reports `containerStatuses[].resources`
    (non-sidecar init containers always count their spec). Pods without such statuses (pending,
    or from a kubelet without in-place resize) are returned as they are."""
    spec = pod.get("spec") or {}
    containers = spec.get("containers") or []
    inits = spec.get("initContainers") or []
    status = pod.get("status")
    if not status:
        return containers, inits
    by_name: dict[str, JsonDict] = {}
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(key) or ():
            if isinstance(cs, dict) and cs.get("resources") is not None:
                by_name[(("i:" if key == "initContainerStatuses" else "c:") + str(cs.get("name")))] = cs
    if not by_name:
        return containers, inits
    infeasible = any(isinstance(cond, dict) and cond.get("type") == "PodResizePending"
                     and cond.get("reason") == "Infeasible" for cond in status.get("conditions") or ())
    out_c = [_effective(c, by_name[k], infeasible) if isinstance(c, dict) and (k := f"c:{c.get('name')}") in by_name
             else c for c in containers]
    out_i = [_effective(c, by_name[k], infeasible)
             if isinstance(c, dict) and is_sidecar(c) and (k := f"i:{c.get('name')}") in by_name else c
             for c in inits]
    return out_c, out_i


def resizing(pod: JsonDict) -> bool:
    """Whether some container counts other resources than its spec (`effective_containers`).
    Called on every status update of a bound pod (the scheduler cache): regular containers are
    compared without building the effective lists."""
    status = pod.get("status")
    if not status:
        return False
    if status.get("initContainerStatuses"):
        spec = pod.get("spec") or {}
        containers, inits = effective_containers(pod)
        return any(a is not b for a, b in zip(containers, spec.get("containers") or (), strict=False)) or \
            any(a is not b for a, b in zip(inits, spec.get("initContainers") or (), strict=False))
    statuses = status.get("containerStatuses")
    if not statuses:
        return False
    by_name = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or () if isinstance(c, dict)}
    for cs in statuses:
        if not isinstance(cs, dict) or cs.get("resources") is None:
            continue
        c = by_name.get(cs.get("name"))
        if c is None:
            continue
        res = c.get("resources") or {}
        req, lim = res.get("requests"), res.get("limits")
        if lim:
            req = {**lim, **(req or {})}
        actual = cs["resources"]
        if actual.get("requests") != req or actual.get("limits") != lim:
            return True
        alloc = cs.get("allocatedResources")
        if alloc is not None and alloc != req:
            return True
    return False


def _parsed_containers(pod: JsonDict) -> tuple[list[dict[str, int]], list[tuple[dict[str, int], bool]]]:
    containers, inits = effective_containers(pod)
    regular = [_container_requests(c) for c in containers]
    init = [(_container_requests(c), is_sidecar(c)) for c in inits]
    return regular, init


def pod_requests(pod: JsonDict, *, non_zero: bool = False) -> dict[str, int]:
    """Effective requests of a pod: {"cpu": milli, "memory": bytes, ...}; a container the kubelet
    is resizing counts the larger of its desired, allocated and actual requests."""
    spec = pod.get("spec") or {}
    regular, init = _parsed_containers(pod)
    if non_zero:
        regular = [_non_zero(r) for r in regular]
        init = [(_non_zero(r), sidecar) for r, sidecar in init]
    return _combine(regular, init, resource_list_to_ints(spec.get("overhead")))


def _container_limits(c: JsonDict) -> dict[str, int]:
    return resource_list_to_ints((c.get("resources") or {}).get("limits"))


def pod_limits(pod: JsonDict) -> dict[str, int]:
    """Effective limits of a pod, as PodLimits: the containers' and sidecars' sum, at least each
    init container's with the sidecars before it, plus the overhead (units as `pod_requests`)."""
    spec = pod.get("spec") or {}
    containers, inits = effective_containers(pod)
    regular = [_container_limits(c) for c in containers]
    init = [(_container_limits(c), is_sidecar(c)) for c in inits]
    return _combine(regular, init, resource_list_to_ints(spec.get("overhead")))


def pod_requests_and_non_zero(pod: JsonDict) -> tuple[dict[str, int], dict[str, int]]:
    """`pod_requests(pod)` and `pod_requests(pod, non_zero=True)` from one parse of the containers
    (the scheduler's PodInfo needs both for every pod it sees)."""
    spec = pod.get("spec") or {}
    regular, init = _parsed_containers(pod)
    overhead = resource_list_to_ints(spec.get("overhead"))
    plain = _combine(regular, init, overhead)
    nz = _combine([_non_zero(r) for r in regular], [(_non_zero(r), sidecar) for r, sidecar in init], overhead)
    return plain, nz


def node_allocatable(node: JsonDict) -> dict[str, int]:
    status = node.get("status") or {}
    alloc = status.get("allocatable")
    if alloc is None:
        alloc = status.get("capacity")
    return resource_list_to_ints(alloc)


def container_images(pod: JsonDict) -> Iterable[str]:
    spec = pod.get("spec") or {}
    for c in spec.get("containers") or ():
        img = c.get("image")
        if img:
            yield img
