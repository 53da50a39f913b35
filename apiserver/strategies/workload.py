"""Workload strategy (layer L4, apiserver): scheduling.k8s.io/v1alpha1, the v1.35 alpha shape
of KEP-4671 (upstream pkg/apis/scheduling/validation, ValidateWorkload).

Rules: `spec.podGroups` is required with 1..8 entries; each name is a DNS label, unique in the
list; each policy sets exactly one of `basic` / `gang`; `gang.minCount` is greater than 0; an
optional `controllerRef` names a kind and an object. The spec is immutable (alpha: a gang's
shape does not change under running pods). Data flow: handler -> default -> validate -> store.
"""

from __future__ import annotations

from typing import Any

from minik3s.api.gang import WORKLOAD_MAX_POD_GROUPS
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    duplicate,
    invalid,
    is_dns1123_label,
    is_dns1123_subdomain,
    required,
    too_many,
    type_invalid,
)

from .base import Strategy, as_dict


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _validate_policy(policy: Any, field: str) -> list[JsonDict]:
    if not isinstance(policy, dict):
        return [required(field, "must specify exactly one of: `basic`, `gang`")]
    set_ = [k for k in ("basic", "gang") if policy.get(k) is not None]
    if len(set_) != 1:
        return [invalid(field, policy, "must specify exactly one of: `basic`, `gang`")]
    if set_[0] == "basic":
        return []
    gang = policy["gang"]
    if not isinstance(gang, dict):
        return [type_invalid(f"{field}.gang", gang, "must be an object")]
    mc = gang.get("minCount")
    if mc is None:
        return [required(f"{field}.gang.minCount", "")]
    if not _is_int(mc):
        return [type_invalid(f"{field}.gang.minCount", mc, "must be an integer")]
    if mc <= 0:
        return [invalid(f"{field}.gang.minCount", mc, "must be greater than zero")]
    if mc > 2**31 - 1:
        return [invalid(f"{field}.gang.minCount", mc, "must be a 32-bit integer")]
    return []


def _validate_controller_ref(ref: Any, field: str) -> list[JsonDict]:
    if not isinstance(ref, dict):
        return [type_invalid(field, ref, "must be an object")]
    errs: list[JsonDict] = []
    for key in ("kind", "name"):
        v = ref.get(key)
        if not v:
            errs.append(required(f"{field}.{key}", ""))
        elif not isinstance(v, str):
            errs.append(type_invalid(f"{field}.{key}", v, "must be a string"))
    group = ref.get("apiGroup")
    if group:
        if not isinstance(group, str):
            errs.append(type_invalid(f"{field}.apiGroup", group, "must be a string"))
        else:
            errs.extend(invalid(f"{field}.apiGroup", group, m) for m in is_dns1123_subdomain(group))
    return errs


class WorkloadStrategy(Strategy):
    kind = "Workload"
    group = "scheduling.k8s.io"
    tracks_generation = True

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec.podGroups", "")]
        errs: list[JsonDict] = []
        if spec.get("controllerRef") is not None:
            errs.extend(_validate_controller_ref(spec["controllerRef"], "spec.controllerRef"))
        groups = spec.get("podGroups")
        if groups is None or groups == []:
            errs.append(required("spec.podGroups", "must have at least one item"))
            return errs
        if not isinstance(groups, list):
            return [*errs, type_invalid("spec.podGroups", groups, "must be an array")]
        if len(groups) > WORKLOAD_MAX_POD_GROUPS:
            errs.append(too_many("spec.podGroups", len(groups), WORKLOAD_MAX_POD_GROUPS))
        seen: set[str] = set()
        for i, g in enumerate(groups):
            field = f"spec.podGroups[{i}]"
            if not isinstance(g, dict):
                errs.append(type_invalid(field, g, "must be an object"))
                continue
            name = g.get("name")
            if not name:
                errs.append(required(f"{field}.name", ""))
            elif not isinstance(name, str):
                errs.append(type_invalid(f"{field}.name", name, "must be a string"))
            else:
                errs.extend(invalid(f"{field}.name", name, m) for m in is_dns1123_label(name))
                if name in seen:
                    errs.append(duplicate(f"{field}.name", name))
                seen.add(name)
            errs.extend(_validate_policy(g.get("policy"), f"{field}.policy"))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        ns, os_ = as_dict(new.get("spec")), as_dict(old.get("spec"))
        errs: list[JsonDict] = []
        if ns.get("podGroups") != os_.get("podGroups"):
            errs.append(invalid("spec.podGroups", ns.get("podGroups"), "field is immutable"))
        if ns.get("controllerRef") != os_.get("controllerRef"):
            errs.append(invalid("spec.controllerRef", ns.get("controllerRef"), "field is immutable"))
        return errs
