"""Custom resources: a CRD's openAPIV3Schema applied to objects (layer L4, apiserver).

Why: kube-apiextensions-apiserver validates custom resources against the structural schema,
applies `default:` values and prunes fields the schema does not know (unless
`x-kubernetes-preserve-unknown-fields`). This module does the same for the commonly used
subset: type, required, enum, properties, additionalProperties, items, minimum/maximum
(+exclusive), minLength/maxLength, minItems/maxItems, pattern, nullable, int-or-string,
embedded resources.

Messages follow upstream's (kube-openapi validate package), e.g.
`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`
and `spec.size: Unsupported value: "XL": supported values: "S", "M"`.

Data flow: handler -> CustomResourceStrategy (strategies/__init__) -> default_custom,
prune_custom, validate_custom.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from minik3s.api.helpers.go_regexp import GoRegexpError, compile_go
from minik3s.api.types import JsonDict
from minik3s.api.validation import invalid, not_supported, required, type_invalid

_TOP = {"apiVersion", "kind", "metadata"}
_PRESERVE = "x-kubernetes-preserve-unknown-fields"
_INT_OR_STRING = "x-kubernetes-int-or-string"
_EMBEDDED = "x-kubernetes-embedded-resource"


def _pattern(pat: str) -> Any:
    """A CRD schema `pattern` as Go's regexp runs it (linear time: minik3s.api.helpers.go_regexp),
    compiled once; None if it is not a valid regular expression (refused when the CRD is written)."""
    try:
        return compile_go(pat)
    except GoRegexpError:
        return None


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _type_ok(v: Any, t: str) -> bool:
    actual = _type_name(v)
    if t == "number":
        return actual in ("integer", "number")
    if t == "integer" and actual == "number":
        return float(v).is_integer()
    return actual == t


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def validate_custom(obj: JsonDict, schema: JsonDict | None) -> list[JsonDict]:
    """Validate a custom resource (apiVersion/kind/metadata are the handler's) against the
    CRD's openAPIV3Schema; [] when valid or there is no schema."""
    if not schema:
        return []
    errs: list[JsonDict] = []
    props = schema.get("properties") or {}
    for key in schema.get("required") or []:
        if key not in _TOP and key not in obj:
            errs.append(required(key, ""))
    for key, val in obj.items():
        if key in _TOP:
            continue
        sub = props.get(key)
        if sub is not None:
            _validate(val, sub, key, errs)
    return errs


def _validate(v: Any, s: JsonDict, path: str, errs: list[JsonDict]) -> None:
    if v is None:
        if s.get("nullable"):
            return
        t = s.get("type")
        if t:
            errs.append(type_invalid(path, "null", f'{path} in body must be of type {t}: "null"'))
        return
    if s.get(_INT_OR_STRING):
        if _type_name(v) not in ("integer", "string"):
            errs.append(type_invalid(path, _type_name(v), f'{path} in body must be of type integer,string: "{_type_name(v)}"'))
            return
    else:
        t = s.get("type")
        if t and not _type_ok(v, t):
            actual = _type_name(v)
            errs.append(type_invalid(path, actual, f'{path} in body must be of type {t}: "{actual}"'))
            return
    enum = s.get("enum")
    if isinstance(enum, list) and v not in enum:
        errs.append(not_supported(path, v, [e if isinstance(e, str) else json.dumps(e) for e in enum]))
    if isinstance(v, int | float) and not isinstance(v, bool):
        mn, mx = _num(s.get("minimum")), _num(s.get("maximum"))
        if mn is not None:
            if s.get("exclusiveMinimum") and v <= mn:
                errs.append(invalid(path, v, f"{path} in body should be greater than {mn}"))
            elif v < mn:
                errs.append(invalid(path, v, f"{path} in body should be greater than or equal to {mn}"))
        if mx is not None:
            if s.get("exclusiveMaximum") and v >= mx:
                errs.append(invalid(path, v, f"{path} in body should be less than {mx}"))
            elif v > mx:
                errs.append(invalid(path, v, f"{path} in body should be less than or equal to {mx}"))
        mo = _num(s.get("multipleOf"))
        if mo and not _multiple_of(v, mo):
            errs.append(invalid(path, v, f"{path} in body should be a multiple of {mo}"))
    elif isinstance(v, str):
        if _num(s.get("maxLength")) is not None and len(v) > s["maxLength"]:
            errs.append({"reason": "FieldValueTooLong", "field": path,
                         "message": f"Too long: may not be more than {s['maxLength']} bytes"})
        if _num(s.get("minLength")) is not None and len(v) < s["minLength"]:
            errs.append(invalid(path, v, f"{path} in body should be at least {s['minLength']} chars long"))
        pat = s.get("pattern")
        if isinstance(pat, str) and pat:
            rx = _pattern(pat)
            if rx is not None and not rx.search(v):
                errs.append(invalid(path, v, f'{path} in body should match \'{pat}\''))
    elif isinstance(v, list):
        if _num(s.get("maxItems")) is not None and len(v) > s["maxItems"]:
            errs.append({"reason": "FieldValueTooMany", "field": path,
                         "message": f"Too many: {len(v)}: must have at most {s['maxItems']} items"})
        if _num(s.get("minItems")) is not None and len(v) < s["minItems"]:
            errs.append(invalid(path, len(v), f"{path} in body should have at least {s['minItems']} items"))
        items = s.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(v):
                _validate(item, items, f"{path}[{i}]", errs)
    elif isinstance(v, dict):
        props_any = s.get("properties")
        props: JsonDict = props_any if isinstance(props_any, dict) else {}
        required_any = s.get("required")
        for key in required_any if isinstance(required_any, list) else []:
            if isinstance(key, str) and key not in v:
                errs.append(required(_join(path, key), ""))
        addl = s.get("additionalProperties")
        for key, val in v.items():
            sub = props.get(key)
            if isinstance(sub, dict):
                _validate(val, sub, _join(path, key), errs)
            elif isinstance(addl, dict):
                _validate(val, addl, _join(path, key), errs)
        if _num(s.get("maxProperties")) is not None and len(v) > s["maxProperties"]:
            errs.append({"reason": "FieldValueTooMany", "field": path,
                         "message": f"Too many: {len(v)}: must have at most {s['maxProperties']} items"})


def _num(v: Any) -> int | float | None:
    """A numeric schema keyword, or None when absent or of another type (a CRD stored before
    its keywords were type-checked must not fail its objects' requests)."""
    return v if isinstance(v, int | float) and not isinstance(v, bool) else None


def _multiple_of(v: int | float, mo: int | float) -> bool:
    try:
        q = v / mo
        return q == int(q)
    except (OverflowError, ZeroDivisionError, ValueError):
        return False


def default_custom(obj: JsonDict, schema: JsonDict | None) -> None:
    """Apply `default:` values of the schema in place (structural defaulting: a default is set
    when the field is absent, recursing into objects, arrays and maps)."""
    if not schema:
        return
    _default(obj, schema, top=True)


def _default(v: Any, s: JsonDict, *, top: bool = False) -> None:
    if isinstance(v, dict):
        props_any = s.get("properties")
        props: JsonDict = props_any if isinstance(props_any, dict) else {}
        for key, sub in props.items():
            if top and key in _TOP:
                continue
            if not isinstance(sub, dict):
                continue
            if key in v and v[key] is None and not sub.get("nullable"):
                # null for a non-nullable field is dropped, then defaulted
                del v[key]
            if key not in v and "default" in sub:
                v[key] = copy.deepcopy(sub["default"])
            if key in v:
                _default(v[key], sub)
        addl = s.get("additionalProperties")
        if isinstance(addl, dict):
            for key, val in v.items():
                if key not in props:
                    _default(val, addl)
    elif isinstance(v, list):
        items = s.get("items")
        if isinstance(items, dict):
            for item in v:
                _default(item, items)


def prune_custom(obj: JsonDict, schema: JsonDict | None) -> list[str]:
    """Drop fields the schema does not specify (unless preserved); returns the dropped paths
    (for fieldValidation warnings / strict errors)."""
    dropped: list[str] = []
    if not schema or schema.get(_PRESERVE):
        return dropped
    props = schema.get("properties") or {}
    for key in list(obj):
        if key in _TOP:
            continue
        sub = props.get(key)
        if sub is None:
            del obj[key]
            dropped.append(key)
        else:
            _prune(obj[key], sub, key, dropped)
    return dropped


def unknown_custom(obj: JsonDict, schema: JsonDict | None) -> list[str]:
    """The paths `prune_custom` would drop, without changing the object."""
    if not schema:
        return []
    return prune_custom(copy.deepcopy(obj), schema)


def _prune(v: Any, s: JsonDict, path: str, dropped: list[str]) -> None:
    if s.get(_EMBEDDED) and isinstance(v, dict):
        # embedded objects keep apiVersion/kind/metadata
        pass
    if isinstance(v, dict):
        if s.get(_PRESERVE) and not s.get("properties"):
            return
        props = s.get("properties") if isinstance(s.get("properties"), dict) else None
        addl = s.get("additionalProperties")
        if props is None and addl is None:
            if s.get(_PRESERVE) or s.get("type") != "object":
                return
        for key in list(v):
            sub = (props or {}).get(key)
            if sub is None and isinstance(addl, dict):
                sub = addl
            if sub is None:
                if addl is True or s.get(_PRESERVE) or (s.get(_EMBEDDED) and key in _TOP):
                    continue
                del v[key]
                dropped.append(_join(path, key))
            elif isinstance(sub, dict):
                _prune(v[key], sub, _join(path, key), dropped)
    elif isinstance(v, list):
        items = s.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(v):
                _prune(item, items, f"{path}[{i}]", dropped)
