"""Pod strategy: status reset, QoS, spec immutability (layer L4, apiserver).

Why: upstream pkg/registry/core/pod/strategy.go resets status on create (phase Pending, QoS
class computed from requests/limits), keeps the spec nearly immutable on update
(ValidatePodUpdate: only images, activeDeadlineSeconds, added tolerations,
terminationGracePeriodSeconds and removal of scheduling gates may change), and lets the
status subresource change only status.

Data flow: handlers -> PodStrategy -> podspec helpers (defaulting/validation).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar

from minik3s.api.options import DeleteOptions
from minik3s.api.types import JsonDict
from minik3s.api.validation import forbidden, invalid, is_dns1123_subdomain, required
from minik3s.utils.clock import rfc3339

from .base import Strategy, as_dict, as_list
from .pod_rest import POD_SUBRESOURCES
from .podspec import default_pod_spec, qos_class, validate_pod_spec
from .rest import Subresource

# upstream DefaultTerminationGracePeriodSeconds
POD_DEFAULT_GRACE = 30

POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
    "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
    "(allow it to be set to 1 if it was previously negative)"
)


class PodStrategy(Strategy):
    kind = "Pod"
    has_status = True
    tracks_generation = True
    return_deleted_object = True
    subresources: ClassVar[Mapping[str, Subresource]] = POD_SUBRESOURCES

    def graceful_delete_seconds(self, obj: JsonDict, options: DeleteOptions) -> int | None:
        """Upstream podStrategy.CheckGracefulDelete: the request's gracePeriodSeconds, else the
        pod's terminationGracePeriodSeconds, else 30; 0 for a pod that never ran on a node or
        has finished (nothing to stop)."""
        spec = as_dict(obj.get("spec"))
        phase = as_dict(obj.get("status")).get("phase")
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        if options.grace_period_seconds is not None:
            return max(0, options.grace_period_seconds)
        tg = spec.get("terminationGracePeriodSeconds")
        return int(tg) if tg is not None else POD_DEFAULT_GRACE

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if spec is None:
            return
        default_pod_spec(spec)

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            tgps = spec.get("terminationGracePeriodSeconds")
            if isinstance(tgps, int) and tgps < 0:
                spec["terminationGracePeriodSeconds"] = 1
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}
        if isinstance(spec, dict) and spec.get("schedulingGates"):
            # upstream applySchedulingGatedCondition (pkg/registry/core/pod/strategy.go). The
            # request core stamps creationTimestamp from its injected clock just before this
            # (the same instant, at the seconds both are written in); a caller of the strategy
            # alone, without one, gets the wall clock
            stamp = (obj.get("metadata") or {}).get("creationTimestamp")
            obj["status"]["conditions"] = [{
                "type": "PodScheduled", "status": "False", "lastProbeTime": None,
                "lastTransitionTime": stamp if isinstance(stamp, str) and stamp else rfc3339(datetime.now(UTC)),
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates"}]

    def prepare_for_update(self, new: JsonDict, old: JsonDict) -> None:
        super().prepare_for_update(new, old)
        # qosClass is computed once, at creation
        old_q = (old.get("status") or {}).get("qosClass")
        if old_q and isinstance(new.get("status"), dict):
            new["status"]["qosClass"] = old_q

    def _status_reset_meta(self) -> tuple[str, ...]:
        # the pods/status endpoint may change labels/annotations (kubelet mirror pods) but
        # never ownerReferences or deletionTimestamp
        return ("deletionTimestamp", "ownerReferences", "generation")

    def prepare_for_status_update(self, new: JsonDict, old: JsonDict) -> None:
        super().prepare_for_status_update(new, old)
        old_status = old.get("status") or {}
        status = new.get("status")
        if isinstance(status, dict):
            if old_status.get("qosClass"):
                status["qosClass"] = old_status["qosClass"]
            # KEP-5067: clearing observedGeneration keeps the previous value
            if not status.get("observedGeneration") and old_status.get("observedGeneration"):
                status["observedGeneration"] = old_status["observedGeneration"]

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if spec is None:
            # a missing spec decodes as the zero PodSpec, which defaulting fills
            spec = {}
            default_pod_spec(spec)
        return validate_pod_spec(spec, "spec")

    def validate(self, obj: JsonDict) -> list[JsonDict]:
        """ValidatePodCreate: the spec rules plus "no nodeName while gated"."""
        errs = super().validate(obj)
        spec = as_dict(obj.get("spec"))
        if spec.get("ephemeralContainers"):
            errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
        if spec.get("nodeName") and spec.get("schedulingGates"):
            errs.append(forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
        return errs

    def validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs = Strategy.validate(self, new)
        errs.extend(self._validate_update(new, old))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return validate_pod_update(as_dict(new.get("spec")), as_dict(old.get("spec")))

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs = super().validate_status_update(new, old)
        status = as_dict(new.get("status"))
        nnn = status.get("nominatedNodeName")
        if nnn:
            errs.extend(invalid("status.nominatedNodeName", nnn, m) for m in is_dns1123_subdomain(str(nnn)))
        for i, c in enumerate(as_list(status.get("conditions"))):
            if isinstance(c, dict) and not c.get("type"):
                errs.append(required(f"status.conditions[{i}].type", ""))
        return errs


def _tolerations_only_added(new: list[Any], old: list[Any]) -> bool:
    """validateOnlyAddedTolerations: every old toleration is still present; a NoExecute
    toleration's tolerationSeconds may only be lowered (or set where it was unset)."""
    for ot in old:
        found = False
        for nt in new:
            if not isinstance(nt, dict) or not isinstance(ot, dict):
                continue
            a = {k: v for k, v in nt.items() if k != "tolerationSeconds"}
            b = {k: v for k, v in ot.items() if k != "tolerationSeconds"}
            if a != b:
                continue
            ns, os_ = nt.get("tolerationSeconds"), ot.get("tolerationSeconds")
            if ns == os_ or (os_ is None and ns is not None) or (
                ns is not None and os_ is not None and ns <= os_ and nt.get("effect") == "NoExecute"
            ):
                found = True
                break
        if not found:
            return False
    return True


def validate_pod_update(new: JsonDict, old: JsonDict) -> list[JsonDict]:
    errs: list[JsonDict] = []
    if len(as_list(new.get("containers"))) != len(as_list(old.get("containers"))):
        return [forbidden("spec.containers", "pod updates may not add or remove containers")]
    if len(as_list(new.get("initContainers"))) != len(as_list(old.get("initContainers"))):
        return [forbidden("spec.initContainers", "pod updates may not add or remove containers")]
    munged = copy.deepcopy(new)
    for key in ("containers", "initContainers"):
        for nc, oc in zip(as_list(munged.get(key)), as_list(old.get(key)), strict=False):
            if isinstance(nc, dict) and isinstance(oc, dict):
                if "image" in oc:
                    nc["image"] = oc["image"]
                else:
                    nc.pop("image", None)
    ads_new, ads_old = munged.get("activeDeadlineSeconds"), old.get("activeDeadlineSeconds")
    if ads_new != ads_old:
        if ads_new is None:
            errs.append(invalid("spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil value"))
        elif ads_old is not None and isinstance(ads_new, int) and ads_new > ads_old:
            errs.append(invalid("spec.activeDeadlineSeconds", ads_new,
                                "must be less than or equal to previous value"))
    _set_or_pop(munged, old, "activeDeadlineSeconds")
    if munged.get("tolerations") != old.get("tolerations"):
        if not _tolerations_only_added(as_list(munged.get("tolerations")), as_list(old.get("tolerations"))):
            errs.append(forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds"))
        _set_or_pop(munged, old, "tolerations")
    _set_or_pop(munged, old, "terminationGracePeriodSeconds")
    old_gates = [g.get("name") for g in as_list(old.get("schedulingGates")) if isinstance(g, dict)]
    new_gates = [g.get("name") for g in as_list(munged.get("schedulingGates")) if isinstance(g, dict)]
    if new_gates != old_gates:
        added = [g for g in new_gates if g not in old_gates]
        if added:
            errs.append(forbidden("spec.schedulingGates", f"only deletion is allowed, but found new scheduling gate '{added[0]}'"))
        _set_or_pop(munged, old, "schedulingGates")
    if munged.get("workloadRef") != old.get("workloadRef"):
        # KEP-4671: the gang a pod belongs to never changes
        errs.append(invalid("spec.workloadRef", munged.get("workloadRef"), "field is immutable"))
        _set_or_pop(munged, old, "workloadRef")
    if old_gates:
        # a gated pod may gain scheduling constraints (KEP-3838)
        for key in ("nodeSelector", "affinity"):
            _set_or_pop(munged, old, key)
    if munged != old:
        errs.append(forbidden("spec", POD_UPDATE_FORBIDDEN))
    return errs


def _set_or_pop(dst: JsonDict, src: JsonDict, key: str) -> None:
    if key in src:
        dst[key] = src[key]
    else:
        dst.pop(key, None)
