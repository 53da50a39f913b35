"""PodDisruptionBudget strategy (layer L4, apiserver): pkg/apis/policy/validation and
pkg/registry/policy/poddisruptionbudget/strategy.go (status reset to zeros on create,
generation tracked, minAvailable xor maxUnavailable)."""

from __future__ import annotations

from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    invalid,
    not_supported,
    type_invalid,
    validate_int_or_percent,
    validate_label_selector,
    validate_nonnegative,
)

from .base import Strategy, as_dict

UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")


class PodDisruptionBudgetStrategy(Strategy):
    kind = "PodDisruptionBudget"
    group = "policy"
    has_status = True
    tracks_generation = True

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if spec is None:
            return []
        if not isinstance(spec, dict):
            return [type_invalid("spec", spec, "must be an object")]
        errs: list[JsonDict] = []
        mina, maxu = spec.get("minAvailable"), spec.get("maxUnavailable")
        if mina is not None and maxu is not None:
            errs.append(invalid("spec", _SpecRepr(spec), "minAvailable and maxUnavailable cannot be both set"))
        errs.extend(validate_int_or_percent(mina, "spec.minAvailable", max_100_percent=True))
        errs.extend(validate_int_or_percent(maxu, "spec.maxUnavailable", max_100_percent=True))
        errs.extend(validate_label_selector(spec.get("selector"), "spec.selector"))
        pol = spec.get("unhealthyPodEvictionPolicy")
        if pol is not None and pol not in UNHEALTHY_POD_EVICTION_POLICIES:
            errs.append(not_supported("spec.unhealthyPodEvictionPolicy", pol, UNHEALTHY_POD_EVICTION_POLICIES))
        return errs

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs = super().validate_status_update(new, old)
        status = as_dict(new.get("status"))
        for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
            errs.extend(validate_nonnegative(status.get(key), f"status.{key}"))
        return errs


class _SpecRepr:
    """The spec as upstream's %#v renders policy.PodDisruptionBudgetSpec (pointers as addresses)."""

    def __init__(self, spec: JsonDict) -> None:
        self.spec = spec

    def __str__(self) -> str:
        def ptr(key: str, typ: str) -> str:
            return f"({typ})(0xc000000000)" if self.spec.get(key) is not None else f"({typ})(nil)"

        return ("policy.PodDisruptionBudgetSpec{MinAvailable:" + ptr("minAvailable", "*intstr.IntOrString")
                + ", Selector:" + ptr("selector", "*v1.LabelSelector")
                + ", MaxUnavailable:" + ptr("maxUnavailable", "*intstr.IntOrString")
                + ", UnhealthyPodEvictionPolicy:"
                + ptr("unhealthyPodEvictionPolicy", "*policy.UnhealthyPodEvictionPolicyType") + "}")
