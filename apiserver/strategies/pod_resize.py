"""pods/resize: in-place pod resize (KEP-1287, beta and on by default in Kubernetes 1.33) (layer L4).

Why: `kubectl patch pod web --subresource resize -p '{"spec":{"containers":[{"name":"c",
"resources":{...}}]}}'` changes a running pod's cpu/memory; the plain pod update refuses any
resource change. Upstream: podResizeStrategy (pkg/registry/core/pod/strategy.go) and
ValidatePodResize (pkg/apis/core/validation) at 1.33.

What the subresource keeps of a request (`dropNonResizeUpdates`): only `resources` and
`resizePolicy` of each container and each init container, copied by index onto the stored pod;
every other spec change, all status and the metadata (but the resourceVersion) are silently the
stored pod's. A resize that changes the spec bumps `metadata.generation`. Then ValidatePodResize:
the ordinary pod checks; pods with pod-level resources, static (mirror) pods and Windows pods
cannot be resized; the QoS class may not change; a pod whose first running container reports no
`status.containerStatuses[].resources` runs on a node without resize support; requests and limits
may not be removed; in 1.33 a memory limit may be neither lowered nor added unless the container's
memory resizePolicy is RestartContainer; only cpu and memory may change (resizePolicy is
immutable), and of init containers only sidecars' (restartable ones').

The kubelet (kubelet_sim) then decides: PodResizePending (Infeasible / Deferred) or
PodResizeInProgress until the new values are actuated in `containerStatuses[].resources`.
ResourceQuota and LimitRanger admit the UPDATE of this subresource (`update_admission`).

Data flow: PUT/PATCH .../pods/NAME/resize -> core._write_update(subresource="resize") ->
`PodResizeREST.prepare_update` (restrict + validate) -> admission -> storage.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from minik3s.api.helpers.pods import is_sidecar
from minik3s.api.quantity import QuantityError, parse_quantity
from minik3s.api.types import JsonDict
from minik3s.api.validation import forbidden, invalid

from .base import as_dict, as_list
from .podspec import default_container, qos_class
from .rest import UpdateRules, UpdateSubresource

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
RESIZABLE = ("cpu", "memory")
SpecErrors = Callable[[JsonDict, JsonDict], list[JsonDict]]


def _copy_resize_fields(new_cs: list[Any], old_cs: list[Any]) -> list[Any] | None:
    """The old containers with `resources`/`resizePolicy` taken from the new ones by index; None
    when the lists differ in length or names (validation then refuses the whole spec)."""
    if len(new_cs) != len(old_cs):
        return None
    out: list[Any] = []
    for n, o in zip(new_cs, old_cs, strict=True):
        if not isinstance(n, dict) or not isinstance(o, dict) or n.get("name") != o.get("name"):
            return None
        c = copy.deepcopy(o)
        for key in ("resources", "resizePolicy"):
            if key in n:
                c[key] = copy.deepcopy(n[key])
            else:
                c.pop(key, None)
        out.append(c)
    return out


def drop_non_resize_updates(new: JsonDict, old: JsonDict) -> None:
    """podResizeStrategy.PrepareForUpdate: `new` becomes the stored pod with only the containers'
    resources and resize policies (and the request's resourceVersion) taken from the request."""
    old_spec = as_dict(old.get("spec"))
    new_spec = new.get("spec")
    spec = copy.deepcopy(old_spec)
    if isinstance(new_spec, dict):
        for key in ("containers", "initContainers"):
            news = new_spec.get(key)
            for c in as_list(news):
                default_container(c)  # the request body is decoded with the pod's defaults
            merged = _copy_resize_fields(as_list(news), as_list(old_spec.get(key)))
            if merged is None:
                spec = copy.deepcopy(new_spec)  # passed through for validation to refuse
                break
            if merged or key in spec:
                spec[key] = merged
    rv = as_dict(new.get("metadata")).get("resourceVersion")
    out = copy.deepcopy(old)
    out["spec"] = spec
    if rv is not None:
        out.setdefault("metadata", {})["resourceVersion"] = rv
    meta = out.setdefault("metadata", {})
    if spec != old_spec:
        gen = as_dict(old.get("metadata")).get("generation")
        meta["generation"] = (gen if isinstance(gen, int) else 1) + 1
    new.clear()
    new.update(out)


def _quantity(v: Any) -> Fraction | None:
    try:
        return parse_quantity(v)
    except (QuantityError, TypeError):
        return None


def _memory_policy(c: JsonDict) -> str:
    for p in as_list(c.get("resizePolicy")):
        if isinstance(p, dict) and p.get("resourceName") == "memory":
            return str(p.get("restartPolicy") or "")
    return ""


def validate_container_resize(new: JsonDict, old: JsonDict, path: str) -> list[JsonDict]:
    """validateContainerResize: no request or limit removed; the 1.33 memory-limit rule."""
    errs: list[JsonDict] = []
    nres, ores = as_dict(new.get("resources")), as_dict(old.get("resources"))
    nreq, oreq = as_dict(nres.get("requests")), as_dict(ores.get("requests"))
    nlim, olim = as_dict(nres.get("limits")), as_dict(ores.get("limits"))
    if any(k not in nreq for k in oreq):
        errs.append(forbidden(f"{path}.requests", "resource requests cannot be removed"))
    if any(k not in nlim for k in olim):
        errs.append(forbidden(f"{path}.limits", "resource limits cannot be removed"))
    if _memory_policy(new) in ("", "NotRequired"):
        if "memory" in nlim and "memory" in olim:
            a, b = _quantity(nlim["memory"]), _quantity(olim["memory"])
            if a is not None and b is not None and a < b:
                errs.append(forbidden(f"{path}.limits[memory]",
                                      "memory limits cannot be decreased unless resizePolicy is RestartContainer"))
        elif "memory" in nlim:
            errs.append(forbidden(f"{path}.limits[memory]",
                                  "memory limits cannot be added unless resizePolicy is RestartContainer"))
    return errs


def _with_old_cpu_memory(new: JsonDict, old: JsonDict) -> JsonDict:
    """dropCPUMemoryResourcesFromContainer: `new` with cpu/memory requests and limits put back as
    in `old` (so what still differs is a change resize does not allow)."""
    c = copy.deepcopy(new)
    res = c.get("resources")
    if not isinstance(res, dict):
        return c
    ores = as_dict(old.get("resources"))
    for key in ("requests", "limits"):
        rl = res.get(key)
        orl = as_dict(ores.get(key))
        if not isinstance(rl, dict):
            continue
        for name in RESIZABLE:
            if name in orl:
                rl[name] = orl[name]
            else:
                rl.pop(name, None)
        if not rl and key not in ores:
            res.pop(key)
    return c


def _first_running_has_resources(pod: JsonDict) -> bool:
    """isPodResizeRequestSupported: the first running container reports its resources (a kubelet
    without resize support never does); a pod with no running container may be resized."""
    for cs in as_list(as_dict(pod.get("status")).get("containerStatuses")):
        if isinstance(cs, dict) and "running" in as_dict(cs.get("state")):
            return cs.get("resources") is not None
    return True


def validate_pod_resize(new: JsonDict, old: JsonDict) -> list[JsonDict]:
    """ValidatePodResize's resize rules (after the ordinary pod checks the caller made)."""
    old_spec, new_spec = as_dict(old.get("spec")), as_dict(new.get("spec"))
    pod_res = [as_dict(s.get("resources")) for s in (old_spec, new_spec)]
    if any(r.get("requests") or r.get("limits") for r in pod_res):
        return [forbidden("", "pods with pod-level resources cannot be resized")]
    if MIRROR_POD_ANNOTATION in as_dict(as_dict(old.get("metadata")).get("annotations")):
        return [forbidden("", "static pods cannot be resized")]
    if as_dict(old_spec.get("os")).get("name") == "windows":
        return [forbidden("", "windows pods cannot be resized")]
    errs: list[JsonDict] = []
    old_qos = as_dict(old.get("status")).get("qosClass") or qos_class(old_spec)
    if old_qos != qos_class(new_spec):
        errs.append(invalid("spec", as_dict(new.get("status")).get("qosClass") or old_qos,
                            "Pod QOS Class may not change as a result of resizing"))
    if not _first_running_has_resources(old):
        errs.append(forbidden("spec", "Pod running on node without support for resize"))
    news_c, olds_c = as_list(new_spec.get("containers")), as_list(old_spec.get("containers"))
    news_i, olds_i = as_list(new_spec.get("initContainers")), as_list(old_spec.get("initContainers"))
    if len(news_c) != len(olds_c) or len(news_i) != len(olds_i):
        return [*errs, forbidden("spec", "only cpu and memory resources are mutable")]
    for i, (n, o) in enumerate(zip(news_i, olds_i, strict=True)):
        if isinstance(n, dict) and isinstance(o, dict) and is_sidecar(o):
            errs.extend(validate_container_resize(n, o, f"spec.initContainers[{i}].resources"))
    for i, (n, o) in enumerate(zip(news_c, olds_c, strict=True)):
        if isinstance(n, dict) and isinstance(o, dict):
            errs.extend(validate_container_resize(n, o, f"spec.containers[{i}].resources"))
    munged = copy.deepcopy(new_spec)
    containers: list[Any] = []
    for n, o in zip(news_c, olds_c, strict=True):
        c = _with_old_cpu_memory(as_dict(n), as_dict(o))
        if c != o:
            errs.append(forbidden("spec", "only cpu and memory resources are mutable"))
        containers.append(c)
    if "containers" in munged:
        munged["containers"] = containers
    inits: list[Any] = []
    for n, o in zip(news_i, olds_i, strict=True):
        o = as_dict(o)
        if is_sidecar(o):
            c = _with_old_cpu_memory(as_dict(n), o)
            if c != o:
                errs.append(forbidden("spec", "only cpu and memory resources for sidecar containers are mutable"))
        else:
            c = as_dict(n)
            if c.get("resources") != o.get("resources"):
                errs.append(forbidden("spec", "resources for non-sidecar init containers are immutable"))
                c = {**c, "resources": o.get("resources")}
        inits.append(c)
    if "initContainers" in munged:
        munged["initContainers"] = inits
    if not errs and munged != old_spec:
        errs.append(forbidden("spec", "only cpu and memory resources are mutable"))
    return errs


class PodResizeREST(UpdateSubresource):
    """pods/resize: GET the pod; PUT/PATCH change only the containers' resources (see the module
    text). `spec_errors(new, old)` is the pod kind's ordinary validation of the resized pod."""

    update_admission = True

    def __init__(self, spec_errors: SpecErrors) -> None:
        super().__init__("resize")
        self._spec_errors = spec_errors

    def prepare_update(self, rules: UpdateRules, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        drop_non_resize_updates(new, old)
        errs = self._spec_errors(new, old)
        errs.extend(validate_pod_resize(new, old))
        return errs
