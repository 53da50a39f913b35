"""Pod resource requests as kube-scheduler counts them (upstream component-helpers resource.PodRequests).

A pod's request for a resource is max(sum over regular containers, max over init containers)
plus `spec.overhead`. Sidecar (restartable) init containers add to everything after them.
Example: containers 100m + 200m cpu, one init container 500m -> max(300m, 500m) = 500m.

The non-zero variant (used by the LeastAllocated/Balanced scores and upstream's NonZeroRequested)
substitutes 100m cpu / 200Mi memory for a container that requests none.
"""

from __future__ import annotations

from collections.abc import Iterable

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


def pod_requests(pod: JsonDict, *, non_zero: bool = False) -> dict[str, int]:
    """Effective requests of a pod: {"cpu": milli, "memory": bytes, ...}."""
    spec = pod.get("spec") or {}
    reqs: dict[str, int] = {}
    for c in spec.get("containers") or ():
        r = _container_requests(c)
        if non_zero:
            r.setdefault(CPU, 0)
            r.setdefault(MEMORY, 0)
            if r[CPU] == 0:
                r[CPU] = DEFAULT_MILLI_CPU_REQUEST
            if r[MEMORY] == 0:
                r[MEMORY] = DEFAULT_MEMORY_REQUEST
        _add_into(reqs, r)
    init_max: dict[str, int] = {}
    sidecars: dict[str, int] = {}
    for c in spec.get("initContainers") or ():
        r = _container_requests(c)
        if non_zero:
            if r.get(CPU, 0) == 0:
                r[CPU] = DEFAULT_MILLI_CPU_REQUEST
            if r.get(MEMORY, 0) == 0:
                r[MEMORY] = DEFAULT_MEMORY_REQUEST
        if c.get("restartPolicy") == "Always":
            _add_into(sidecars, r)
            _add_into(reqs, r)
            continue
        total = dict(r)
        _add_into(total, sidecars)
        _max_into(init_max, total)
    _max_into(reqs, init_max)
    overhead = spec.get("overhead")
    if overhead:
        _add_into(reqs, resource_list_to_ints(overhead))
    return reqs


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
