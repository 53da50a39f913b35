"""Shared validation primitives: field errors and name/label rules (layer L2).

Why: every kind's validation (apiserver/strategies) reports errors as upstream's
`field.Error` does (k8s.io/apimachinery/pkg/util/validation/field) and checks names, label
keys/values and annotations with the rules of apimachinery's `validation` package. Keeping
the rules and the message texts here, once, makes every kind speak the same words.

Data flow: strategy.validate(obj) -> these helpers -> a list of causes
(`{"reason", "message", "field"}`) -> `minik3s.api.errors.invalid(...)` renders the 422.

A cause's `message` is upstream's ErrorBody (the text after `<field>: `). Example:
`required("spec.containers")` -> `{"reason": "FieldValueRequired", "message": "Required value",
"field": "spec.containers"}`, rendered by kubectl as `spec.containers: Required value`.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from minik3s.api.errors import cause
from minik3s.api.types import JsonDict

# ---------------------------------------------------------------------------------------------
# field.Error constructors (message = upstream ErrorBody)
# ---------------------------------------------------------------------------------------------


def go_value(v: Any) -> str:
    """Render a bad value as upstream's field.Error does: strings %q, numbers/bools %v,
    nil as `null`, maps as Go's %#v of map[string]string (keys sorted)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, dict):
        if all(isinstance(x, str) for x in v.values()):
            inner = ", ".join(f"{json.dumps(k)}:{json.dumps(v[k])}" for k in sorted(v))
            return "map[string]string{" + inner + "}"
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    if isinstance(v, list):
        if all(isinstance(x, str) for x in v):
            return "[]string{" + ", ".join(json.dumps(x) for x in v) + "}"
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def required(field: str, detail: str = "") -> JsonDict:
    return cause(field, f"Required value: {detail}" if detail else "Required value", "FieldValueRequired")


def invalid(field: str, value: Any, detail: str = "") -> JsonDict:
    msg = f"Invalid value: {go_value(value)}"
    return cause(field, f"{msg}: {detail}" if detail else msg, "FieldValueInvalid")


def invalid_omit_value(field: str, detail: str) -> JsonDict:
    """field.Invalid with field.OmitValueType{}: the message names no value."""
    return cause(field, f"Invalid value: {detail}", "FieldValueInvalid")


def not_supported(field: str, value: Any, valid: list[str] | tuple[str, ...]) -> JsonDict:
    msg = f"Unsupported value: {go_value(value)}"
    if valid:
        msg += ": supported values: " + ", ".join(json.dumps(x) for x in valid)
    return cause(field, msg, "FieldValueNotSupported")


def duplicate(field: str, value: Any) -> JsonDict:
    return cause(field, f"Duplicate value: {go_value(value)}", "FieldValueDuplicate")


def forbidden(field: str, detail: str = "") -> JsonDict:
    return cause(field, f"Forbidden: {detail}" if detail else "Forbidden", "FieldValueForbidden")


def too_long(field: str, max_bytes: int) -> JsonDict:
    unit = "byte" if max_bytes == 1 else "bytes"
    return cause(field, f"Too long: may not be more than {max_bytes} {unit}", "FieldValueTooLong")


def too_many(field: str, actual: int, maximum: int) -> JsonDict:
    return cause(field, f"Too many: {actual}: must have at most {maximum} items", "FieldValueTooMany")


def type_invalid(field: str, value: Any, detail: str) -> JsonDict:
    return cause(field, f"Invalid value: {go_value(value)}: {detail}", "FieldValueTypeInvalid")


# ---------------------------------------------------------------------------------------------
# apimachinery/pkg/util/validation: names, labels, qualified names
# ---------------------------------------------------------------------------------------------

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_VALUE_MAX = 63
QUALIFIED_NAME_MAX = 63
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"

_DNS1123_LABEL_RE = re.compile("^" + _DNS1123_LABEL_FMT + r"\Z")
_DNS1123_SUBDOMAIN_RE = re.compile("^" + _DNS1123_SUBDOMAIN_FMT + r"\Z")
_QNAME_RE = re.compile("^" + _QNAME_FMT + r"\Z")
_LABEL_VALUE_RE = re.compile("^" + _LABEL_VALUE_FMT + r"\Z")
_DNS1035_LABEL_RE = re.compile("^" + _DNS1035_LABEL_FMT + r"\Z")
_PERCENT_RE = re.compile(r"^[0-9]+%\Z")

DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '" + _DNS1123_LABEL_FMT + "')"
)
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '" + _DNS1123_SUBDOMAIN_FMT + "')"
)
DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '" + _DNS1035_LABEL_FMT + "')"
)
QNAME_CHAR_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '" + _QNAME_FMT + "')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '" + _LABEL_VALUE_FMT + "')"
)
PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or "
    "'93%', regex used for validation is '[0-9]+%')"
)


def max_len_msg(n: int) -> str:
    return f"must be no more than {n} characters"


def is_dns1123_label(value: str) -> list[str]:
    return list(_is_dns1123_label_cached(value))


@functools.lru_cache(maxsize=8192)
def _is_dns1123_label_cached(value: str) -> tuple[str, ...]:
    """Messages for a bad RFC 1123 label ([] when valid). Upstream: IsDNS1123Label."""
    errs: list[str] = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_msg(DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL_RE.match(value):
        # a valid subdomain that is not a label: the length was checked, so it is the dots
        errs.append("must not contain dots" if _DNS1123_SUBDOMAIN_RE.match(value) else DNS1123_LABEL_MSG)
    return tuple(errs)


def is_dns1123_subdomain(value: str) -> list[str]:
    return list(_is_dns1123_subdomain_cached(value))


@functools.lru_cache(maxsize=8192)
def _is_dns1123_subdomain_cached(value: str) -> tuple[str, ...]:
    errs: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_msg(DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(DNS1123_SUBDOMAIN_MSG)
    return tuple(errs)


def is_dns1035_label(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_msg(DNS1123_LABEL_MAX))
    if not _DNS1035_LABEL_RE.match(value):
        errs.append(DNS1035_LABEL_MSG)
    return errs


def is_qualified_name(value: str) -> list[str]:
    return list(_is_qualified_name_cached(value))


@functools.lru_cache(maxsize=8192)
def _is_qualified_name_cached(value: str) -> tuple[str, ...]:
    """`[prefix/]name` where prefix is a DNS subdomain and name a 63-char qualified name part.

    Example: "example.com/MyName" is valid; "a/b/c" is not; "Foo_" is not (must end alnum)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return (
            "a qualified name " + QNAME_CHAR_MSG
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        )
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        errs.append("name part " + max_len_msg(QUALIFIED_NAME_MAX))
    if not _QNAME_RE.match(name):  # an empty name part fails the pattern too, as upstream reports it
        errs.append("name part " + QNAME_CHAR_MSG)
    return tuple(errs)


def is_valid_label_value(value: str) -> list[str]:
    return list(_is_valid_label_value_cached(value))


@functools.lru_cache(maxsize=8192)
def _is_valid_label_value_cached(value: str) -> tuple[str, ...]:
    errs: list[str] = []
    if len(value) > LABEL_VALUE_MAX:
        errs.append(max_len_msg(LABEL_VALUE_MAX))
    if not _LABEL_VALUE_RE.match(value):
        errs.append(LABEL_VALUE_MSG)
    return tuple(errs)


def is_valid_percent(value: str) -> bool:
    return bool(_PERCENT_RE.match(value))


# ---------------------------------------------------------------------------------------------
# list-returning validators (path-aware), as upstream's Validate* helpers
# ---------------------------------------------------------------------------------------------


def validate_label_name(name: Any, field: str) -> list[JsonDict]:
    if not isinstance(name, str):
        return [type_invalid(field, name, "must be a string")]
    return [invalid(field, name, m) for m in is_qualified_name(name)]


def validate_labels(labels: Any, field: str) -> list[JsonDict]:
    """ValidateLabels: keys are qualified names, values label values (both at `field`)."""
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [type_invalid(field, labels, "must be an object")]
    errs: list[JsonDict] = []
    for k, v in labels.items():
        if type(k) is str and type(v) is str and not _is_qualified_name_cached(k) \
                and not _is_valid_label_value_cached(v):
            continue  # the common case, decided by the two memoised checks alone
        errs.extend(validate_label_name(k, field))
        if not isinstance(v, str):
            errs.append(type_invalid(field, v, "must be a string"))
            continue
        for m in is_valid_label_value(v):
            errs.append(invalid(field, v, m))
    return errs


def validate_annotations(annotations: Any, field: str) -> list[JsonDict]:
    """Keys are qualified names (checked lower-cased, as upstream); total size <= 256 KiB."""
    if annotations is None:
        return []
    if not isinstance(annotations, dict):
        return [type_invalid(field, annotations, "must be an object")]
    errs: list[JsonDict] = []
    total = 0
    for k, v in annotations.items():
        if type(v) is str and type(k) is str and not _is_qualified_name_cached(k.lower()):
            total += len(k) + (len(v) if v.isascii() else len(v.encode()))
            continue  # the common case, decided by the memoised check alone
        if not isinstance(v, str):
            errs.append(type_invalid(field, v, "must be a string"))
            continue
        for m in is_qualified_name(k.lower()):
            errs.append(invalid(field, k, m))
        total += len(k) + (len(v) if v.isascii() else len(v.encode()))
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(field, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def validate_nonnegative(value: Any, field: str) -> list[JsonDict]:
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, int):
        return [type_invalid(field, value, "must be an integer")]
    if value < 0:
        return [invalid(field, value, "must be greater than or equal to 0")]
    return []


def validate_positive(value: Any, field: str) -> list[JsonDict]:
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, int):
        return [type_invalid(field, value, "must be an integer")]
    if value <= 0:
        return [invalid(field, value, "must be greater than zero")]
    return []


def validate_int_or_percent(value: Any, field: str, *, max_100_percent: bool = False) -> list[JsonDict]:
    """ValidatePositiveIntOrPercent (+ IsNotMoreThan100Percent). Example: "25%" ok, "25" invalid."""
    if value is None:
        return []
    if isinstance(value, bool):
        return [type_invalid(field, value, "must be an integer or a string")]
    if isinstance(value, int):
        if value < 0:
            return [invalid(field, value, "must be greater than or equal to 0")]
        return []
    if isinstance(value, str):
        if not is_valid_percent(value):
            return [invalid(field, value, PERCENT_MSG)]
        if max_100_percent and int(value[:-1]) > 100:
            return [invalid(field, value, "must not be greater than 100%")]
        return []
    return [type_invalid(field, value, "must be an integer or a string")]


def int_or_percent_is_zero(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return value == 0
    if isinstance(value, str) and is_valid_percent(value):
        return int(value[:-1]) == 0
    return False


def is_path_segment_name(value: str) -> list[str]:
    """apimachinery's ValidatePathSegmentName (RBAC object names such as `system:node`)."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


NAME_FORMATS = {"subdomain": is_dns1123_subdomain, "label": is_dns1123_label, "dns1035": is_dns1035_label,
                "path": is_path_segment_name}


def _plain_subdomain(name: Any) -> bool:
    """A valid RFC 1123 subdomain, decided by the pattern alone: object names are mostly unique
    (generated suffixes, Event names), so a memo would miss and evict for each of them."""
    return type(name) is str and len(name) <= DNS1123_SUBDOMAIN_MAX and _DNS1123_SUBDOMAIN_RE.match(name) is not None


def validate_name(name: Any, field: str, *, fmt: str = "subdomain") -> list[JsonDict]:
    if fmt == "subdomain" and _plain_subdomain(name):
        return []  # the common case
    if not isinstance(name, str):
        return [type_invalid(field, name, "must be a string")]
    return [invalid(field, name, m) for m in NAME_FORMATS[fmt](name)]


def validate_finalizers(finalizers: Any, field: str) -> list[JsonDict]:
    """Finalizers are qualified names; an unprefixed name must be a standard one
    (`kubernetes`, `orphan`, `foregroundDeletion`), else upstream's warning-free error."""
    if finalizers is None:
        return []
    if not isinstance(finalizers, list):
        return [type_invalid(field, finalizers, "must be an array")]
    errs: list[JsonDict] = []
    for i, f in enumerate(finalizers):
        if not isinstance(f, str):
            errs.append(type_invalid(f"{field}[{i}]", f, "must be a string"))
            continue
        errs.extend(validate_label_name(f, field))
    return errs


def validate_owner_references(refs: Any, field: str) -> list[JsonDict]:
    if refs is None:
        return []
    if not isinstance(refs, list):
        return [type_invalid(field, refs, "must be an array")]
    errs: list[JsonDict] = []
    controllers = 0
    for ref in refs:
        if not isinstance(ref, dict):
            errs.append(type_invalid(field, ref, "must be an object"))
            continue
        api_version = ref.get("apiVersion") or ""
        kind = ref.get("kind") or ""
        if not api_version:
            errs.append(invalid(f"{field}.apiVersion", api_version, "version must not be empty"))
        if not kind:
            errs.append(invalid(f"{field}.kind", kind, "must not be empty"))
        if not ref.get("name"):
            errs.append(invalid(f"{field}.name", ref.get("name") or "", "must not be empty"))
        if not ref.get("uid"):
            errs.append(invalid(f"{field}.uid", ref.get("uid") or "", "must not be empty"))
        if ref.get("controller") is True:
            controllers += 1
    if controllers > 1:
        errs.append(invalid(field, refs, "Only one reference can have Controller set to true."))
    return errs


def validate_object_meta(meta: Any, *, name_format: str = "subdomain", field: str = "metadata") -> list[JsonDict]:
    """The per-field parts of ValidateObjectMeta that look at one object: name format
    (when a name is present), generateName prefix, labels, annotations, finalizers,
    ownerReferences. Required-name and namespace rules are the handler's job."""
    if meta is None:
        return []
    if not isinstance(meta, dict):
        return [type_invalid(field, meta, "must be an object")]
    errs: list[JsonDict] = []
    name = meta.get("name")
    if name and not (name_format == "subdomain" and _plain_subdomain(name)):
        errs.extend(validate_name(name, f"{field}.name", fmt=name_format))
    gen = meta.get("generateName")
    if gen and not name and isinstance(gen, str):
        # upstream's name-generator validation checks the prefix with the trailing '-' tolerated
        probe = gen[:-1] if gen.endswith("-") else gen
        if probe:
            errs.extend(invalid(f"{field}.generateName", gen, m) for m in NAME_FORMATS[name_format](probe))
    # each check answers [] for a missing field: skipped without building its path
    if (labels := meta.get("labels")) is not None:
        errs.extend(validate_labels(labels, f"{field}.labels"))
    if (annotations := meta.get("annotations")) is not None:
        errs.extend(validate_annotations(annotations, f"{field}.annotations"))
    if (finalizers := meta.get("finalizers")) is not None:
        errs.extend(validate_finalizers(finalizers, f"{field}.finalizers"))
    if (refs := meta.get("ownerReferences")) is not None:
        errs.extend(validate_owner_references(refs, f"{field}.ownerReferences"))
    return errs


def validate_label_selector(sel: Any, field: str) -> list[JsonDict]:
    """metav1.LabelSelector (ValidateLabelSelector)."""
    if sel is None:
        return []
    if not isinstance(sel, dict):
        return [type_invalid(field, sel, "must be an object")]
    errs: list[JsonDict] = []
    for i, req in enumerate(sel.get("matchExpressions") or []):
        p = f"{field}.matchExpressions[{i}]"
        if not isinstance(req, dict):
            errs.append(type_invalid(p, req, "must be an object"))
            continue
        op = req.get("operator")
        values = req.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                errs.append(required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(forbidden(f"{p}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            errs.append(invalid(f"{p}.operator", op, "not a valid selector operator"))
        errs.extend(validate_label_name(req.get("key", ""), f"{p}.key"))
    errs.extend(validate_labels(sel.get("matchLabels"), f"{field}.matchLabels"))
    return errs


def selector_matches(sel: JsonDict | None, labels: JsonDict | None) -> bool:
    """metav1.LabelSelector semantics: None matches nothing, {} everything (for template checks)."""
    if sel is None:
        return False
    labels = labels or {}
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for req in sel.get("matchExpressions") or []:
        key, op, values = req.get("key"), req.get("operator"), req.get("values") or []
        has = key in labels
        if op == "In" and not (has and labels[key] in values):
            return False
        if op == "NotIn" and has and labels[key] in values:
            return False
        if op == "Exists" and not has:
            return False
        if op == "DoesNotExist" and has:
            return False
    return True


def selector_is_empty(sel: JsonDict | None) -> bool:
    return sel is not None and not sel.get("matchLabels") and not sel.get("matchExpressions")
