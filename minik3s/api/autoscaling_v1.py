"""autoscaling/v1 <-> autoscaling/v2 HorizontalPodAutoscaler conversion (layer L2).

Why: kube-apiserver stores one HorizontalPodAutoscaler and serves it at autoscaling/v1 and
autoscaling/v2 (pkg/apis/autoscaling/v1/conversion.go). v1 only knows one cpu utilization
target (`spec.targetCPUUtilizationPercentage`) and one current value
(`status.currentCPUUtilizationPercentage`); everything else v2 carries travels in annotations,
in the v1 (v2beta1-like) metric shapes:

- `autoscaling.alpha.kubernetes.io/metrics`: every spec metric except a cpu Resource metric
  with a Utilization target (that one is targetCPUUtilizationPercentage);
- `autoscaling.alpha.kubernetes.io/current-metrics`: all status.currentMetrics (the cpu one
  too, so its raw value survives);
- `autoscaling.alpha.kubernetes.io/conditions`: status.conditions;
- `autoscaling.alpha.kubernetes.io/behavior`: spec.behavior (v2 shape).

Going back (v1 -> v2) the annotations are read and removed; the annotated metrics come first
and the cpu target last; a v1 object without any metric gets upstream's explicit default
(cpu Utilization 80 %).

Data flow: plain JSON dicts in, new dicts out (inputs are never changed). Malformed annotation
JSON raises `ConversionError`, which the apiserver answers as a 400.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from minik3s.api.types import JsonDict

V1 = "autoscaling/v1"
V2 = "autoscaling/v2"
METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
DEFAULT_CPU_UTILIZATION = 80


class ConversionError(ValueError):
    """A v1 object whose annotations cannot be decoded."""


def _d(v: Any) -> JsonDict:
    return v if isinstance(v, dict) else {}


def _set(out: JsonDict, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def _compact(obj: JsonDict) -> JsonDict:
    return {k: v for k, v in obj.items() if v is not None}


def _dumps(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"))


def _is_cpu_resource(m: JsonDict) -> bool:
    return m.get("type") == "Resource" and _d(m.get("resource")).get("name") == "cpu"


# ---- metric specs --------------------------------------------------------------------------

def _spec_v2_to_v1(m: JsonDict) -> JsonDict:
    t = m.get("type")
    out: JsonDict = {"type": t}
    if t == "Object" and isinstance(m.get("object"), dict):
        o = m["object"]
        tgt, mid = _d(o.get("target")), _d(o.get("metric"))
        out["object"] = _compact({
            "target": o.get("describedObject", {}), "metricName": mid.get("name", ""),
            "targetValue": tgt.get("value", "0"), "selector": mid.get("selector"),
            "averageValue": tgt.get("averageValue")})
    elif t == "Pods" and isinstance(m.get("pods"), dict):
        p = m["pods"]
        tgt, mid = _d(p.get("target")), _d(p.get("metric"))
        out["pods"] = _compact({"metricName": mid.get("name", ""),
                                "targetAverageValue": tgt.get("averageValue", "0"),
                                "selector": mid.get("selector")})
    elif t in ("Resource", "ContainerResource"):
        key = "resource" if t == "Resource" else "containerResource"
        r = _d(m.get(key))
        tgt = _d(r.get("target"))
        conv = _compact({"name": r.get("name", ""), "targetAverageUtilization": tgt.get("averageUtilization"),
                         "targetAverageValue": tgt.get("averageValue")})
        if t == "ContainerResource":
            conv["container"] = r.get("container", "")
        out[key] = conv
    elif t == "External" and isinstance(m.get("external"), dict):
        e = m["external"]
        tgt, mid = _d(e.get("target")), _d(e.get("metric"))
        out["external"] = _compact({"metricName": mid.get("name", ""), "metricSelector": mid.get("selector"),
                                    "targetValue": tgt.get("value"),
                                    "targetAverageValue": tgt.get("averageValue")})
    return out


def _spec_v1_to_v2(m: JsonDict) -> JsonDict:
    t = m.get("type")
    out: JsonDict = {"type": t}
    if t == "Object" and isinstance(m.get("object"), dict):
        o = m["object"]
        avg = o.get("averageValue")
        target: JsonDict = {"type": "Value" if avg is None else "AverageValue", "value": o.get("targetValue", "0")}
        _set(target, "averageValue", avg)
        out["object"] = {"describedObject": o.get("target", {}),
                         "metric": _compact({"name": o.get("metricName", ""), "selector": o.get("selector")}),
                         "target": target}
    elif t == "Pods" and isinstance(m.get("pods"), dict):
        p = m["pods"]
        out["pods"] = {"metric": _compact({"name": p.get("metricName", ""), "selector": p.get("selector")}),
                       "target": {"type": "AverageValue", "averageValue": p.get("targetAverageValue", "0")}}
    elif t in ("Resource", "ContainerResource"):
        key = "resource" if t == "Resource" else "containerResource"
        r = _d(m.get(key))
        util = r.get("targetAverageUtilization")
        target = {"type": "AverageValue" if util is None else "Utilization"}
        _set(target, "averageValue", r.get("targetAverageValue"))
        _set(target, "averageUtilization", util)
        conv: JsonDict = {"name": r.get("name", ""), "target": target}
        if t == "ContainerResource":
            conv["container"] = r.get("container", "")
        out[key] = conv
    elif t == "External" and isinstance(m.get("external"), dict):
        e = m["external"]
        value = e.get("targetValue")
        target = {"type": "AverageValue" if value is None else "Value"}
        _set(target, "value", value)
        _set(target, "averageValue", e.get("targetAverageValue"))
        out["external"] = {"metric": _compact({"name": e.get("metricName", ""), "selector": e.get("metricSelector")}),
                           "target": target}
    return out


# ---- metric statuses -----------------------------------------------------------------------

def _status_v2_to_v1(m: JsonDict) -> JsonDict:
    t = m.get("type")
    out: JsonDict = {"type": t}
    if t == "Object" and isinstance(m.get("object"), dict):
        o = m["object"]
        cur, mid = _d(o.get("current")), _d(o.get("metric"))
        out["object"] = _compact({
            "target": o.get("describedObject", {}), "metricName": mid.get("name", ""),
            "currentValue": cur.get("value", "0"), "selector": mid.get("selector"),
            "averageValue": cur.get("averageValue")})
    elif t == "Pods" and isinstance(m.get("pods"), dict):
        p = m["pods"]
        cur, mid = _d(p.get("current")), _d(p.get("metric"))
        out["pods"] = _compact({"metricName": mid.get("name", ""),
                                "currentAverageValue": cur.get("averageValue", "0"),
                                "selector": mid.get("selector")})
    elif t in ("Resource", "ContainerResource"):
        key = "resource" if t == "Resource" else "containerResource"
        r = _d(m.get(key))
        cur = _d(r.get("current"))
        conv = _compact({"name": r.get("name", ""), "currentAverageUtilization": cur.get("averageUtilization"),
                         "currentAverageValue": cur.get("averageValue", "0")})
        if t == "ContainerResource":
            conv["container"] = r.get("container", "")
        out[key] = conv
    elif t == "External" and isinstance(m.get("external"), dict):
        e = m["external"]
        cur, mid = _d(e.get("current")), _d(e.get("metric"))
        out["external"] = _compact({"metricName": mid.get("name", ""), "metricSelector": mid.get("selector"),
                                    "currentValue": cur.get("value", "0"),
                                    "currentAverageValue": cur.get("averageValue")})
    return out


def _status_v1_to_v2(m: JsonDict) -> JsonDict:
    t = m.get("type")
    out: JsonDict = {"type": t}
    if t == "Object" and isinstance(m.get("object"), dict):
        o = m["object"]
        current: JsonDict = {"value": o.get("currentValue", "0")}
        _set(current, "averageValue", o.get("averageValue"))
        out["object"] = {"metric": _compact({"name": o.get("metricName", ""), "selector": o.get("selector")}),
                         "current": current, "describedObject": o.get("target", {})}
    elif t == "Pods" and isinstance(m.get("pods"), dict):
        p = m["pods"]
        out["pods"] = {"metric": _compact({"name": p.get("metricName", ""), "selector": p.get("selector")}),
                       "current": {"averageValue": p.get("currentAverageValue", "0")}}
    elif t in ("Resource", "ContainerResource"):
        key = "resource" if t == "Resource" else "containerResource"
        r = _d(m.get(key))
        current = {"averageValue": r.get("currentAverageValue", "0")}
        _set(current, "averageUtilization", r.get("currentAverageUtilization"))
        conv: JsonDict = {"name": r.get("name", ""), "current": current}
        if t == "ContainerResource":
            conv["container"] = r.get("container", "")
        out[key] = conv
    elif t == "External" and isinstance(m.get("external"), dict):
        e = m["external"]
        current = {"value": e.get("currentValue", "0")}
        _set(current, "averageValue", e.get("currentAverageValue"))
        out["external"] = {"metric": _compact({"name": e.get("metricName", ""), "selector": e.get("metricSelector")}),
                           "current": current}
    return out


# ---- whole objects -------------------------------------------------------------------------

def hpa_v2_to_v1(obj: JsonDict) -> JsonDict:
    """A stored (v2) HorizontalPodAutoscaler as autoscaling/v1 returns it."""
    out: JsonDict = {k: copy.deepcopy(v) for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"] = V1
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    metrics = [m for m in spec.get("metrics") or [] if isinstance(m, dict)]
    v1spec: JsonDict = {k: copy.deepcopy(spec[k]) for k in ("scaleTargetRef", "minReplicas", "maxReplicas")
                        if k in spec}
    other: list[JsonDict] = []
    cpu_seen = False
    for m in metrics:
        if _is_cpu_resource(m) and not cpu_seen:
            cpu_seen = True
            util = _d(_d(m["resource"]).get("target")).get("averageUtilization")
            if util is not None:
                v1spec["targetCPUUtilizationPercentage"] = util
                continue
        elif _is_cpu_resource(m) and _d(_d(m["resource"]).get("target")).get("averageUtilization") is not None:
            continue  # upstream keeps only the first cpu utilization target
        other.append(_spec_v2_to_v1(m))
    if "spec" in obj:
        out["spec"] = v1spec
    v1status: JsonDict = {k: copy.deepcopy(status[k]) for k in (
        "observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas") if k in status}
    current = [m for m in status.get("currentMetrics") or [] if isinstance(m, dict)]
    for m in current:
        if _is_cpu_resource(m):
            util = _d(_d(m["resource"]).get("current")).get("averageUtilization")
            if util is not None:
                v1status["currentCPUUtilizationPercentage"] = util
    if "status" in obj:
        out["status"] = v1status
    extra: dict[str, str] = {}
    if other:
        extra[METRICS_ANNOTATION] = _dumps(other)
    if current:
        extra[CURRENT_METRICS_ANNOTATION] = _dumps([_status_v2_to_v1(m) for m in current])
    if isinstance(spec.get("behavior"), dict):
        extra[BEHAVIOR_ANNOTATION] = _dumps(spec["behavior"])
    conditions = status.get("conditions")
    if isinstance(conditions, list) and conditions:
        extra[CONDITIONS_ANNOTATION] = _dumps(conditions)
    if extra:
        meta = out.setdefault("metadata", {})
        meta["annotations"] = {**_d(meta.get("annotations")), **extra}
    return out


def _load(annotations: JsonDict, key: str, want: type) -> Any:
    raw = annotations.pop(key)
    try:
        v = json.loads(raw) if isinstance(raw, str) else None
    except ValueError as e:
        raise ConversionError(f"metadata.annotations[{key}]: {e}") from None
    if not isinstance(v, want):
        raise ConversionError(f"metadata.annotations[{key}]: expected a JSON {want.__name__}")
    return v


def hpa_v1_to_v2(obj: JsonDict) -> JsonDict:
    """An autoscaling/v1 HorizontalPodAutoscaler (a request body) as its stored v2 form."""
    out: JsonDict = {k: copy.deepcopy(v) for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"] = V2
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    meta = out.get("metadata")
    annotations: JsonDict = dict(_d(meta.get("annotations"))) if isinstance(meta, dict) else {}
    v2spec: JsonDict = {k: copy.deepcopy(spec[k]) for k in ("scaleTargetRef", "minReplicas", "maxReplicas")
                        if k in spec}
    metrics: list[JsonDict] = []
    if METRICS_ANNOTATION in annotations:
        metrics = [_spec_v1_to_v2(m) for m in _load(annotations, METRICS_ANNOTATION, list) if isinstance(m, dict)]
    cpu = spec.get("targetCPUUtilizationPercentage")
    if cpu is not None:
        metrics.append({"type": "Resource",
                        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}}})
    if not metrics:
        metrics = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    v2spec["metrics"] = metrics
    if BEHAVIOR_ANNOTATION in annotations:
        v2spec["behavior"] = _load(annotations, BEHAVIOR_ANNOTATION, dict)
    out["spec"] = v2spec
    v2status: JsonDict = {k: copy.deepcopy(status[k]) for k in (
        "observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas") if k in status}
    cur_cpu = status.get("currentCPUUtilizationPercentage")
    if cur_cpu is not None:
        v2status["currentMetrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "current": {"averageUtilization": cur_cpu}}}]
    if CURRENT_METRICS_ANNOTATION in annotations:
        # the annotation carries more than the cpu percentage: it wins (as upstream)
        v2status["currentMetrics"] = [_status_v1_to_v2(m) for m in
                                      _load(annotations, CURRENT_METRICS_ANNOTATION, list) if isinstance(m, dict)]
    if CONDITIONS_ANNOTATION in annotations:
        v2status["conditions"] = _load(annotations, CONDITIONS_ANNOTATION, list)
    if "status" in obj or v2status:
        out["status"] = v2status
    if isinstance(meta, dict):
        new_meta = out["metadata"]
        if annotations:
            new_meta["annotations"] = annotations
        else:
            new_meta.pop("annotations", None)
    return out
