"""pods/eviction: the Eviction API with PodDisruptionBudget checks (layer L4, apiserver/strategies).

Follows kube-apiserver's pkg/registry/core/pod/storage/eviction.go:
1. a pod that is Succeeded, Failed or Pending, or already being deleted, is deleted directly;
2. more than one PDB selecting the pod -> 500;
3. no PDB -> allowed;
4. an unready pod under a PDB that is already healthy enough (currentHealthy >= desiredHealthy > 0)
   is deleted without using up a disruption (unhealthyPodEvictionPolicy IfHealthyBudget; AlwaysAllow
   deletes any unready pod);
5. a PDB whose status has not observed its generation -> 429 "still being processed";
6. disruptionsAllowed == 0 -> 429 "needs N healthy pods and has M currently";
7. otherwise the PDB's disruptionsAllowed is decremented and the pod recorded in disruptedPods
   (a compare-and-swap on the PDB), the pod gets the DisruptionTarget condition (reason
   EvictionByEvictionAPI) and is deleted gracefully with the eviction's deleteOptions -> 201.

Data flow: handler -> pods' `EvictionREST` -> `evict(ops, ...)` -> reads and writes through the
`RegistryOps` protocol (the request core provides it), so this module never imports the core.
"""

from __future__ import annotations

import copy

from minik3s.api import errors
from minik3s.api.errors import BadRequestError
from minik3s.api.helpers.pods import is_pod_ready
from minik3s.api.options import DeleteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.selectors import label_selector_from_dict
from minik3s.api.types import JsonDict

from .rest import RegistryOps, meta_of
from .schema import eviction_type_error

VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."

SUCCESS: JsonDict = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _too_many(pdb_name: str, message: str, retry_after: int | None = None) -> errors.TooManyRequestsError:
    details: JsonDict = {"causes": [{"reason": "DisruptionBudget", "message": message}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return errors.TooManyRequestsError(VIOLATION, details=details)


async def evict(core: RegistryOps, pods: ResourceInfo, namespace: str, name: str, eviction: object, *,
                dry_run: bool = False) -> JsonDict:
    if not isinstance(eviction, dict):
        raise BadRequestError("the object provided is not a JSON object")
    bad = eviction_type_error(eviction)
    if bad:  # decoded into the Go type before anything else (a wrongly typed deleteOptions field)
        raise BadRequestError(f'Eviction in version "v1" cannot be handled as a Eviction: {bad}')
    emeta = meta_of(eviction)
    if emeta.get("name") and emeta["name"] != name:
        raise BadRequestError("name in URL does not match name in Eviction object")
    pdbs_info = core.registry.get("policy", "v1", "poddisruptionbudgets")
    if pdbs_info is None:
        raise errors.InternalError("the poddisruptionbudgets resource is not registered")
    pod = core.get(pods, namespace, name)
    opts = DeleteOptions.from_dict(eviction.get("deleteOptions"))
    opts.dry_run = opts.dry_run or dry_run
    pmeta = pod.get("metadata") or {}
    if opts.preconditions is None:
        opts.preconditions = {"uid": pmeta.get("uid")}
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed", "Pending") or pmeta.get("deletionTimestamp"):
        await core.delete(pods, namespace, name, opts)
        return dict(SUCCESS)
    labels = pmeta.get("labels") or {}
    matching = []
    for pdb in core.stored(pdbs_info, namespace):
        sel = (pdb.get("spec") or {}).get("selector")
        if not sel:
            continue
        try:
            if label_selector_from_dict(sel).matches(labels):
                matching.append(pdb)
        except ValueError:
            continue
    if len(matching) > 1:
        raise errors.InternalError("This pod has more than one PodDisruptionBudget, which the eviction "
                                   "subresource does not support.")
    if matching:
        pdb = matching[0]
        pdb_name = pdb["metadata"]["name"]
        st = pdb.get("status") or {}
        policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
        ready = is_pod_ready(pod)
        current = int(st.get("currentHealthy") or 0)
        desired = int(st.get("desiredHealthy") or 0)
        unready_ok = not ready and (policy == "AlwaysAllow" or current >= desired > 0)
        if not unready_ok:
            if int(st.get("observedGeneration") or 0) < int(pdb["metadata"].get("generation") or 1):
                raise _too_many(pdb_name, f"The disruption budget {pdb_name} is still being processed by the "
                                "server.", retry_after=10)
            if int(st.get("disruptionsAllowed") or 0) <= 0:
                raise _too_many(pdb_name, f"The disruption budget {pdb_name} needs {desired} healthy pods and has "
                                f"{current} currently")
            now = core.now()

            def take(p: JsonDict) -> None:
                s = p.setdefault("status", {})
                allowed = int(s.get("disruptionsAllowed") or 0)
                if allowed <= 0:
                    raise _too_many(pdb_name, f"The disruption budget {pdb_name} needs "
                                    f"{s.get('desiredHealthy', 0)} healthy pods and has "
                                    f"{s.get('currentHealthy', 0)} currently")
                s["disruptionsAllowed"] = allowed - 1
                dp = s.get("disruptedPods") or {}
                dp[name] = now
                s["disruptedPods"] = dp

            if opts.dry_run:  # checkAndDecrement with dryRun: the budget is checked, not spent
                take(copy.deepcopy(core.get(pdbs_info, namespace, pdb_name)))
            else:
                await core.guaranteed_update(pdbs_info, namespace, pdb_name, take, subresource="status")
    if not opts.dry_run:
        await _mark_disruption_target(core, pods, namespace, name)
    await core.delete(pods, namespace, name, opts)
    return dict(SUCCESS)


async def _mark_disruption_target(core: RegistryOps, pods: ResourceInfo, namespace: str, name: str) -> None:
    now = core.now()

    def mark(p: JsonDict) -> None:
        conds = p.setdefault("status", {}).setdefault("conditions", [])
        for c in conds:
            if c.get("type") == "DisruptionTarget":
                if c.get("status") == "True" and c.get("reason") == "EvictionByEvictionAPI":
                    return
                conds.remove(c)
                break
        conds.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                      "lastTransitionTime": now, "reason": "EvictionByEvictionAPI",
                      "message": "Eviction API: evicting"})

    try:
        await core.guaranteed_update(pods, namespace, name, mark, subresource="status")
    except errors.NotFoundError:
        pass
