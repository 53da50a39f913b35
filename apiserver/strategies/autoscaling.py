"""HorizontalPodAutoscaler strategy (layer L4, apiserver): pkg/apis/autoscaling/validation,
pkg/apis/autoscaling/v2/defaults.go and pkg/registry/autoscaling/horizontalpodautoscaler.

Defaults: `minReplicas` 1; no `metrics` means one Resource cpu target at 80 % utilization;
a `behavior` that is present gets each missing rule filled with upstream's defaults (scale up:
no stabilization, selectPolicy Max, max(4 pods, 100 %) per 15 s; scale down: 300 s window,
selectPolicy Max, 100 % per 15 s). A missing `behavior` stays missing (the controller applies
the same defaults). Validation names every field path upstream names.
Data flow: core create/update -> default -> validate / validate_update -> storage; the HPA
controller writes `status` through the status subresource. autoscaling/v1 is served from the
stored v2 objects through `convert_to_storage` / `convert_from_storage`
(minik3s.api.autoscaling_v1); a v1 body's own fields are checked with v1 field paths first.
"""

from __future__ import annotations

from typing import Any

from minik3s.api import errors
from minik3s.api.autoscaling_v1 import ConversionError, hpa_v1_to_v2, hpa_v2_to_v1
from minik3s.api.quantity import QuantityError, parse_quantity
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    forbidden,
    invalid,
    not_supported,
    required,
    type_invalid,
    validate_label_selector,
    validate_nonnegative,
)

from .base import Strategy, as_dict

METRIC_SOURCE_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
TARGET_TYPES = ("AverageValue", "Utilization", "Value")
SELECT_POLICIES = ("Disabled", "Max", "Min")
POLICY_TYPES = ("Percent", "Pods")
MAX_STABILIZATION_WINDOW = 3600
MAX_PERIOD_SECONDS = 1800
DEFAULT_CPU_UTILIZATION = 80


def default_scale_up() -> JsonDict:
    return {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
            "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                         {"type": "Percent", "value": 100, "periodSeconds": 15}]}


def default_scale_down() -> JsonDict:
    return {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _fill_rules(rules: Any, defaults: JsonDict) -> Any:
    if rules is None:
        return defaults
    if not isinstance(rules, dict):
        return rules
    for k in ("stabilizationWindowSeconds", "selectPolicy", "policies"):
        if rules.get(k) is None:
            rules[k] = defaults[k]
    return rules


def _is_path_segment(v: str) -> list[str]:
    """apimachinery's IsValidPathSegmentName."""
    if v in (".", ".."):
        return [f"may not be '{v}'"]
    for bad in ("/", "%"):
        if bad in v:
            return [f"may not contain '{bad}'"]
    return []


def _positive_quantity(v: Any) -> bool | None:
    try:
        return parse_quantity(v) > 0
    except (QuantityError, TypeError, ValueError):
        return None


class HorizontalPodAutoscalerStrategy(Strategy):
    kind = "HorizontalPodAutoscaler"
    group = "autoscaling"
    has_status = True
    tracks_generation = True

    def convert_to_storage(self, version: str, obj: JsonDict, *, creating: bool = False) -> JsonDict:
        if version != "v1":
            return super().convert_to_storage(version, obj, creating=creating)
        name = str(as_dict(obj.get("metadata")).get("name") or "")
        spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
        for path, v in (("spec.targetCPUUtilizationPercentage", spec.get("targetCPUUtilizationPercentage")),
                        ("status.currentCPUUtilizationPercentage", status.get("currentCPUUtilizationPercentage"))):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise errors.BadRequestError(
                    f'HorizontalPodAutoscaler in version "v1" cannot be handled as a HorizontalPodAutoscaler: '
                    f"json: cannot unmarshal {type(v).__name__} into Go struct field {path} of type int32")
        target = spec.get("targetCPUUtilizationPercentage")
        if isinstance(target, int) and target < 1:
            raise errors.invalid(self.kind, name, [invalid("spec.targetCPUUtilizationPercentage", target,
                                                           "must be greater than 0")], self.group)
        try:
            return hpa_v1_to_v2(obj)
        except ConversionError as e:
            raise errors.BadRequestError(f"unable to convert autoscaling/v1 HorizontalPodAutoscaler: {e}") from None

    def convert_from_storage(self, version: str, obj: JsonDict) -> JsonDict:
        if version != "v1":
            return super().convert_from_storage(version, obj)
        return hpa_v2_to_v1(obj)

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if spec.get("minReplicas") is None:
            spec["minReplicas"] = 1
        if not spec.get("metrics"):
            spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
                "type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
        behavior = spec.get("behavior")
        if isinstance(behavior, dict):
            behavior["scaleUp"] = _fill_rules(behavior.get("scaleUp"), default_scale_up())
            behavior["scaleDown"] = _fill_rules(behavior.get("scaleDown"), default_scale_down())

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if spec is None:
            spec = {}
        if not isinstance(spec, dict):
            return [type_invalid("spec", spec, "must be an object")]
        errs: list[JsonDict] = []
        mn, mx = spec.get("minReplicas"), spec.get("maxReplicas", 0)
        if isinstance(mn, int) and mn < 1:
            errs.append(invalid("spec.minReplicas", mn, "must be greater than 0"))
        if not isinstance(mx, int) or mx < 1:
            errs.append(invalid("spec.maxReplicas", mx, "must be greater than 0"))
        if isinstance(mn, int) and isinstance(mx, int) and mx < mn:
            errs.append(invalid("spec.maxReplicas", mx, "must be greater than or equal to `minReplicas`"))
        errs.extend(validate_reference(as_dict(spec.get("scaleTargetRef")), "spec.scaleTargetRef"))
        metrics = spec.get("metrics") or []
        if not isinstance(metrics, list):
            errs.append(type_invalid("spec.metrics", metrics, "must be a list"))
        else:
            for i, m in enumerate(metrics):
                errs.extend(_validate_metric(as_dict(m), f"spec.metrics[{i}]"))
        behavior = spec.get("behavior")
        if isinstance(behavior, dict):
            for rule in ("scaleUp", "scaleDown"):
                if isinstance(behavior.get(rule), dict):
                    errs.extend(_validate_rules(behavior[rule], f"spec.behavior.{rule}"))
        return errs

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs = super().validate_status_update(new, old)
        status = as_dict(new.get("status"))
        errs.extend(validate_nonnegative(status.get("currentReplicas"), "status.currentReplicas"))
        errs.extend(validate_nonnegative(status.get("desiredReplicas"), "status.desiredReplicas"))
        return errs


def validate_reference(ref: JsonDict, path: str) -> list[JsonDict]:
    errs: list[JsonDict] = []
    for key in ("kind", "name"):
        v = ref.get(key)
        if not v:
            errs.append(required(f"{path}.{key}"))
        elif isinstance(v, str):
            errs.extend(invalid(f"{path}.{key}", v, msg) for msg in _is_path_segment(v))
    return errs


def _validate_metric(m: JsonDict, path: str) -> list[JsonDict]:
    errs: list[JsonDict] = []
    typ = m.get("type") or ""
    if not typ:
        errs.append(required(f"{path}.type", "must specify a metric source type"))
    if typ not in METRIC_SOURCE_TYPES:
        errs.append(not_supported(f"{path}.type", typ, METRIC_SOURCE_TYPES))
    present = [k for k in ("object", "pods", "resource", "containerResource", "external") if m.get(k) is not None]
    expected = typ[:1].lower() + typ[1:] if typ else ""
    if expected not in present:
        errs.append(required(f"{path}.{expected}", "must populate information for the given metric source"))
    for other in present:
        if other != expected and len(present) != 1:
            errs.append(forbidden(f"{path}.{other}", "must populate the given metric source only"))
    if len(present) == 1:
        src = as_dict(m.get(present[0]))
        sub = f"{path}.{present[0]}"
        if present[0] in ("resource", "containerResource"):
            if not src.get("name"):
                errs.append(required(f"{sub}.name", "must specify a resource name"))
            if present[0] == "containerResource" and not src.get("container"):
                errs.append(required(f"{sub}.container", "must specify a container"))
            target = as_dict(src.get("target"))
            errs.extend(_validate_target(target, f"{sub}.target"))
            if target.get("averageUtilization") is None and target.get("averageValue") is None:
                errs.append(required(f"{sub}.target.averageUtilization",
                                     "must set either a target raw value or a target utilization"))
            if target.get("averageUtilization") is not None and target.get("averageValue") is not None:
                errs.append(forbidden(f"{sub}.target.averageValue",
                                      "may not set both a target raw value and a target utilization"))
        else:
            ident = as_dict(src.get("metric"))
            if present[0] != "object" or "metric" in src:
                if not ident.get("name"):
                    errs.append(required(f"{sub}.metric.name", "must specify a metric name"))
                if ident.get("selector") is not None:
                    errs.extend(validate_label_selector(ident["selector"], f"{sub}.metric.selector"))
            if present[0] == "object":
                errs.extend(validate_reference(as_dict(src.get("describedObject")), f"{sub}.describedObject"))
            errs.extend(_validate_target(as_dict(src.get("target")), f"{sub}.target"))
    return errs


def _validate_target(t: JsonDict, path: str) -> list[JsonDict]:
    errs: list[JsonDict] = []
    typ = t.get("type") or ""
    if not typ:
        errs.append(required(f"{path}.type", "must specify a metric target type"))
    elif typ not in TARGET_TYPES:
        errs.append(not_supported(f"{path}.type", typ, TARGET_TYPES))
    for key in ("value", "averageValue"):
        v = t.get(key)
        if v is not None and _positive_quantity(v) is not True:
            errs.append(invalid(f"{path}.{key}", v, "must be positive"))
    u = t.get("averageUtilization")
    if u is not None and (not isinstance(u, int) or u < 1):
        errs.append(invalid(f"{path}.averageUtilization", u, "must be greater than 0"))
    return errs


def _validate_rules(r: JsonDict, path: str) -> list[JsonDict]:
    errs: list[JsonDict] = []
    w = r.get("stabilizationWindowSeconds")
    if isinstance(w, int):
        if w < 0:
            errs.append(invalid(f"{path}.stabilizationWindowSeconds", w, "must be greater than or equal to zero"))
        elif w > MAX_STABILIZATION_WINDOW:
            errs.append(invalid(f"{path}.stabilizationWindowSeconds", w,
                                f"must be less than or equal to {MAX_STABILIZATION_WINDOW}"))
    sp = r.get("selectPolicy")
    if sp is not None and sp not in SELECT_POLICIES:
        errs.append(not_supported(f"{path}.selectPolicy", sp, SELECT_POLICIES))
    policies = r.get("policies")
    if not policies:
        errs.append(required(f"{path}.policies", "must specify at least one Policy"))
        return errs
    for i, p in enumerate(policies if isinstance(policies, list) else []):
        p = as_dict(p)
        pp = f"{path}.policies[{i}]"
        if p.get("type") not in POLICY_TYPES:
            errs.append(not_supported(f"{pp}.type", p.get("type") or "", POLICY_TYPES))
        v = p.get("value")
        if not isinstance(v, int) or v <= 0:
            errs.append(invalid(f"{pp}.value", v, "must be greater than zero"))
        ps = p.get("periodSeconds")
        if not isinstance(ps, int) or ps <= 0:
            errs.append(invalid(f"{pp}.periodSeconds", ps, "must be greater than zero"))
        elif ps > MAX_PERIOD_SECONDS:
            errs.append(invalid(f"{pp}.periodSeconds", ps, f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return errs
