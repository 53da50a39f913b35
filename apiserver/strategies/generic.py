"""Strategies for the simpler kinds and for custom resources (layer L4, apiserver).

ConfigMap/Secret (immutable data once `immutable: true`; a TLS Secret whose key pair does not
load draws a warning, `secret_warnings`), Lease, core and events.k8s.io Event,
CustomResourceDefinition, the custom-resource strategy (schema validation, defaulting,
pruning) and the fallback for kinds without a dedicated strategy.
"""

from __future__ import annotations

import base64
import re
from typing import Any, ClassVar

from minik3s.api import errors
from minik3s.api.helpers.go_regexp import GoRegexpError, compile_go
from minik3s.api.quantity import QuantityError, parse_quantity
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    forbidden,
    go_value,
    invalid,
    is_dns1035_label,
    is_dns1123_subdomain,
    not_supported,
    required,
    too_long,
    type_invalid,
    validate_label_name,
    validate_nonnegative,
)

from . import crd_lifecycle
from .base import Strategy, as_dict, as_list
from .custom import default_custom, prune_custom, validate_custom
from .pod_rest import BINDING
from .rest import FinishFunc, RegistryOps, Subresource
from .schema import json_schema_props_type_error
from .secret_warnings import warnings_for_secret


class GenericStrategy(Strategy):
    """Kinds without special rules: metadata validation only; status kept on update when the
    kind serves a status subresource."""

    def __init__(self, kind: str = "", group: str = "", *, has_status: bool = False,
                 tracks_generation: bool = False, return_deleted_object: bool = False,
                 allow_create_on_update: bool = False) -> None:
        self.kind = kind
        self.group = group
        self.has_status = has_status
        self.tracks_generation = tracks_generation
        self.return_deleted_object = return_deleted_object
        self.allow_create_on_update = allow_create_on_update


LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")


class LimitRangeStrategy(Strategy):
    """core/v1 LimitRange: SetDefaults_LimitRangeItem (a Container item's default limit from
    its max, its default request from the default limit, then from its min) and the item rules of
    ValidateLimitRange (a known type; default and defaultRequest only on a Container item;
    min <= defaultRequest <= default <= max, each compared where both are given)."""

    kind = "LimitRange"
    allow_create_on_update = True

    def _default(self, obj: JsonDict) -> None:
        for item in as_list(as_dict(obj.get("spec")).get("limits")):
            if not isinstance(item, dict) or item.get("type") != "Container":
                continue
            default = dict(item.get("default") or {})
            request = dict(item.get("defaultRequest") or {})
            for k, v in (item.get("max") or {}).items():
                default.setdefault(k, v)
            for k, v in default.items():
                request.setdefault(k, v)
            for k, v in (item.get("min") or {}).items():
                request.setdefault(k, v)
            if default:
                item["default"] = default
            if request:
                item["defaultRequest"] = request

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        for i, item in enumerate(as_list(as_dict(obj.get("spec")).get("limits"))):
            path = f"spec.limits[{i}]"
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind not in LIMIT_TYPES:
                errs.append(not_supported(f"{path}.type", kind, LIMIT_TYPES) if kind else required(f"{path}.type", ""))
                continue
            if kind != "Container":
                for key in ("default", "defaultRequest"):
                    if item.get(key):
                        errs.append(forbidden(f"{path}.{key}", f"may not be specified when `type` is '{kind}'"))
            errs.extend(_limit_item_order(item, path))
        return errs


# ValidateLimitRange's per-resource order checks, in its order: (the larger, the smaller, the
# field the error is on, the field whose value it shows, the message)
_LIMIT_ORDER = (
    ("min", "max", "min", "min", "min value {min} is greater than max value {max}"),
    ("min", "defaultRequest", "defaultRequest", "defaultRequest",
     "min value {min} is greater than default request value {defaultRequest}"),
    ("defaultRequest", "max", "defaultRequest", "defaultRequest",
     "default request value {defaultRequest} is greater than max value {max}"),
    ("defaultRequest", "default", "defaultRequest", "defaultRequest",
     "default request value {defaultRequest} is greater than default limit value {default}"),
    ("min", "default", "default", "min", "min value {min} is greater than default value {default}"),
    ("default", "max", "default", "default", "default value {default} is greater than max value {max}"),
)


def _limit_item_order(item: JsonDict, path: str) -> list[JsonDict]:
    """ValidateLimitRange's per-resource checks (resources sorted): min <= max,
    min <= defaultRequest <= max, defaultRequest <= default, min <= default <= max, a ratio of at
    least 1."""
    errs: list[JsonDict] = []
    parts: dict[str, JsonDict] = {key: as_dict(item.get(key))
                                  for key in ("min", "max", "default", "defaultRequest", "maxLimitRequestRatio")}
    for res in sorted({r for part in parts.values() for r in part}):
        texts = {key: str(part[res]) for key, part in parts.items() if res in part}
        try:
            values = {key: parse_quantity(part[res]) for key, part in parts.items() if res in part}
        except (QuantityError, TypeError):
            continue  # an unparsable quantity is the decoder's error
        for big, small, at, shown, message in _LIMIT_ORDER:
            if big in values and small in values and values[big] > values[small]:
                errs.append(invalid(f"{path}.{at}[{res}]", texts[shown], message.format(**texts)))
        ratio = values.get("maxLimitRequestRatio")
        if ratio is not None and ratio < 1:
            errs.append(invalid(f"{path}.maxLimitRequestRatio[{res}]", texts["maxLimitRequestRatio"],
                                f"ratio {texts['maxLimitRequestRatio']} is less than 1"))
    return errs


class BindingStrategy(Strategy):
    """POST /namespaces/{ns}/bindings: upstream's LegacyBindingREST, i.e. pods/binding with the
    pod named in the Binding's metadata."""

    kind = "Binding"
    create_via: ClassVar[Subresource | None] = BINDING


class ConfigMapStrategy(Strategy):
    kind = "ConfigMap"

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        keys: set[str] = set()
        for fld in ("data", "binaryData"):
            data = obj.get(fld)
            if data is None:
                continue
            if not isinstance(data, dict):
                errs.append(type_invalid(fld, data, "must be an object"))
                continue
            for k in data:
                errs.extend(_config_key_errors(k, f"{fld}[{k}]"))
                if k in keys:
                    errs.append(invalid(f"{fld}[{k}]", k, "duplicate of key present in data"))
                keys.add(k)
        size = _payload_bytes(obj.get("data"), b64=self.kind == "Secret") + _payload_bytes(obj.get("binaryData"),
                                                                                           b64=True)
        if size > MAX_DATA_BYTES:
            # upstream core.MaxSecretSize: a ConfigMap's error is on the whole object, a Secret's on data
            errs.append(too_long("data" if self.kind == "Secret" else "[]", MAX_DATA_BYTES))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        if old.get("immutable") is True:
            errs: list[JsonDict] = []
            if new.get("immutable") is not True:
                errs.append(forbidden("immutable", "field is immutable when `immutable` is set"))
            if new.get("data") != old.get("data"):
                errs.append(forbidden("data", "field is immutable when `immutable` is set"))
            if new.get("binaryData") != old.get("binaryData"):
                errs.append(forbidden("binaryData", "field is immutable when `immutable` is set"))
            return errs
        return []


class SecretStrategy(ConfigMapStrategy):
    kind = "Secret"

    def _default(self, obj: JsonDict) -> None:
        if not obj.get("type"):
            obj["type"] = "Opaque"
        sd = obj.pop("stringData", None)
        if isinstance(sd, dict):
            data = obj.get("data")
            if not isinstance(data, dict):
                data = {}
                obj["data"] = data
            for k, v in sd.items():
                data[k] = base64.b64encode(str(v).encode()).decode()

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs = super()._validate_update(new, old)
        if new.get("type") != old.get("type"):
            errs.append(invalid("type", new.get("type"), "field is immutable"))
        return errs

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        """warningsForSecret: a kubernetes.io/tls Secret whose key pair does not load (Go's
        tls.X509KeyPair error text), on create and update."""
        return warnings_for_secret(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        return warnings_for_secret(new)


MAX_DATA_BYTES = 1024 * 1024


def _payload_bytes(data: Any, *, b64: bool) -> int:
    """The bytes a data map holds: UTF-8 length of string values, decoded length of base64 ones."""
    if not isinstance(data, dict):
        return 0
    total = 0
    for v in data.values():
        if not isinstance(v, str):
            continue
        if b64:
            body = v.rstrip("=")
            total += len(body) * 3 // 4
        else:
            total += len(v.encode("utf-8", "surrogatepass"))
    return total


_CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"


def _config_key_errors(k: str, field: str) -> list[JsonDict]:
    if len(k) > 253:
        return [invalid(field, k, "must be no more than 253 characters")]
    if not re.fullmatch(r"[-._a-zA-Z0-9]+", k):
        return [invalid(field, k, _CONFIG_KEY_MSG)]
    if k in (".", ".."):
        return [invalid(field, k, f"must not be '{k}'")]
    return []


class LeaseStrategy(Strategy):
    kind = "Lease"
    group = "coordination.k8s.io"
    allow_create_on_update = True

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = as_dict(obj.get("spec"))
        errs: list[JsonDict] = []
        lds = spec.get("leaseDurationSeconds")
        if lds is not None and (not isinstance(lds, int) or lds <= 0):
            errs.append(invalid("spec.leaseDurationSeconds", lds, "must be greater than 0"))
        errs.extend(validate_nonnegative(spec.get("leaseTransitions"), "spec.leaseTransitions"))
        return errs


class EventStrategy(Strategy):
    """core/v1 Event, the one stored Event resource: upstream's legacy event validation
    (pkg/apis/core/validation/events.go, legacyValidateEvent), which every Event passes
    whichever API wrote it. Field paths are upstream's internal names (`reportingController`
    for core/v1's `reportingComponent`, `message` for events.k8s.io's `note`).

    Without eventTime (old-style events) the involvedObject namespace must match the event's;
    with eventTime set, reportingController, reportingInstance, action and reason are required
    and bounded."""

    allow_create_on_update = True

    kind = "Event"

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        return legacy_event_errors(obj)

    def prepare_for_create(self, obj: JsonDict) -> None:
        super().prepare_for_create(obj)
        event_zero_values(obj)

    def _prepare_for_update(self, new: JsonDict, old: JsonDict) -> None:
        event_zero_values(new)


# core/v1 Event fields Go always serialises (no omitempty, or a struct): their zero values, so
# every client reads what kube-apiserver sends ("eventTime": null on an old-style event;
# "firstTimestamp": null, "lastTimestamp": null and "source": {} on an events.k8s.io one;
# kubectl's --sort-by=.lastTimestamp needs the key on every event)
_EVENT_ZERO_VALUES: tuple[tuple[str, object], ...] = (
    ("involvedObject", dict), ("source", dict), ("firstTimestamp", None), ("lastTimestamp", None),
    ("eventTime", None), ("reportingComponent", ""), ("reportingInstance", ""))


def event_zero_values(obj: JsonDict) -> None:
    """The absent always-serialised fields of a stored Event set to their zero values (after
    managedFields are recorded: a zero value belongs to no manager)."""
    for key, zero in _EVENT_ZERO_VALUES:
        if key not in obj:
            obj[key] = zero() if callable(zero) else zero


# upstream's length limits (pkg/apis/core/validation/events.go)
REPORTING_INSTANCE_LENGTH_LIMIT = 128
ACTION_LENGTH_LIMIT = 128
REASON_LENGTH_LIMIT = 128
NOTE_LENGTH_LIMIT = 1024


def _text(v: Any) -> str:
    return v if isinstance(v, str) else ""


def legacy_event_errors(obj: JsonDict) -> list[JsonDict]:
    """legacyValidateEvent on a stored (core/v1-shaped) Event."""
    errs: list[JsonDict] = []
    ns = _text((obj.get("metadata") or {}).get("namespace"))
    ions = _text(as_dict(obj.get("involvedObject")).get("namespace"))
    if not obj.get("eventTime"):
        if (not ions and ns not in ("", "default")) or (ions and ns != ions):
            errs.append(invalid("involvedObject.namespace", ions, "does not match event.namespace"))
    else:
        if not ions and ns not in ("default", "kube-system"):
            errs.append(invalid("involvedObject.namespace", ions, "does not match event.namespace"))
        controller = _text(obj.get("reportingComponent"))
        if not controller:
            errs.append(required("reportingController", ""))
        errs.extend(validate_label_name(controller, "reportingController"))
        for field, limit in (("reportingInstance", REPORTING_INSTANCE_LENGTH_LIMIT), ("action", ACTION_LENGTH_LIMIT),
                             ("reason", REASON_LENGTH_LIMIT)):
            value = _text(obj.get(field))
            if not value:
                errs.append(required(field, ""))
            if len(value) > limit:
                errs.append(invalid(field, "", f"can have at most {limit} characters"))
        if len(_text(obj.get("message"))) > NOTE_LENGTH_LIMIT:
            errs.append(invalid("message", "", f"can have at most {NOTE_LENGTH_LIMIT} characters"))
    errs.extend(invalid("namespace", ns, m) for m in is_dns1123_subdomain(ns))
    return errs


# events.k8s.io/v1 field -> the stored core/v1 field (upstream's generated conversion plus
# Convert_v1_Event_To_core_Event's renames); every other field has the same name in both
_V1_TO_CORE = {"regarding": "involvedObject", "note": "message", "deprecatedSource": "source",
               "deprecatedFirstTimestamp": "firstTimestamp", "deprecatedLastTimestamp": "lastTimestamp",
               "deprecatedCount": "count", "reportingController": "reportingComponent"}
_CORE_TO_V1 = {core: v1 for v1, core in _V1_TO_CORE.items()}
_OMIT_EMPTY_IN_V1 = frozenset(("reportingComponent", "reportingInstance"))


class EventsV1Strategy(Strategy):
    """events.k8s.io/v1 Event: a view of the stored core/v1 Events (one resource upstream, one
    internal type), converted field by field (`regarding` <-> `involvedObject`, `note` <->
    `message`, `deprecated*` <-> the legacy fields, `reportingController` <->
    `reportingComponent`). The stored kind's legacy validation applies to every write; a create
    through this version is also held to upstream's strict rules (ValidateEventCreate for
    events.k8s.io/v1): eventTime required, type Normal or Warning, the deprecated fields unset,
    a valid series."""

    kind = "Event"
    group = "events.k8s.io"
    allow_create_on_update = True

    def convert_to_storage(self, version: str, obj: JsonDict, *, creating: bool = False) -> JsonDict:
        if version != "v1":
            return super().convert_to_storage(version, obj, creating=creating)
        out: JsonDict = {_V1_TO_CORE.get(k, k): v for k, v in obj.items()}
        out["apiVersion"], out["kind"] = "v1", "Event"
        if creating:
            strict = strict_event_errors(out)
            if strict:  # one Invalid with both kinds of causes, the legacy ones first, as upstream lists them
                raise errors.invalid(self.kind, str(as_dict(obj.get("metadata")).get("name") or ""),
                                     [*legacy_event_errors(out), *strict], self.group)
        return out

    def convert_from_storage(self, version: str, obj: JsonDict) -> JsonDict:
        if version != "v1":
            return super().convert_from_storage(version, obj)
        # events.k8s.io/v1 omits an empty reportingController/reportingInstance (core/v1 does not)
        out: JsonDict = {_CORE_TO_V1.get(k, k): v for k, v in obj.items()
                         if v != "" or k not in _OMIT_EMPTY_IN_V1}
        out["apiVersion"], out["kind"] = "events.k8s.io/v1", "Event"
        return out


    def validate_served_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        """ValidateEventUpdate's strict part for events.k8s.io/v1: a changed series is
        validated, and what the event says is immutable (internal field names, upstream's
        order: `reason` is checked twice there, so it is reported twice)."""
        errs: list[JsonDict] = []
        if new.get("series") != old.get("series"):
            errs.extend(_series_errors(new))
        for field in _IMMUTABLE_EVENT_FIELDS:
            stored = _STORED_NAME.get(field, field)
            now = _event_value(field, new.get(stored))
            if now != _event_value(field, old.get(stored)):  # compared as Go compares the typed values
                errs.append(errors.cause(field, f"Invalid value: {now}: field is immutable"))
        return errs


# ValidateEventUpdate's immutable fields, in its order, by upstream's internal names
_IMMUTABLE_EVENT_FIELDS = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp",
                           "count", "reason", "type", "eventTime", "action", "related", "reportingController",
                           "reportingInstance")
_STORED_NAME = {"reportingController": "reportingComponent"}
# (JSON name, Go field name) of the structs ValidateImmutableField prints with %#v
_OBJECT_REFERENCE = (("kind", "Kind"), ("namespace", "Namespace"), ("name", "Name"), ("uid", "UID"),
                     ("apiVersion", "APIVersion"), ("resourceVersion", "ResourceVersion"), ("fieldPath", "FieldPath"))
_EVENT_SOURCE = (("component", "Component"), ("host", "Host"))


def _go_time(v: Any) -> str:
    """metav1.Time / MicroTime as Go's time.Time String() prints it (UTC):
    "2026-01-02T03:04:05.123456Z" -> "2026-01-02 03:04:05.123456 +0000 UTC"; unset -> the zero time."""
    text = _text(v)
    if not text:
        return "0001-01-01 00:00:00 +0000 UTC"
    day, _, rest = text.rstrip("Z").partition("T")
    clock, _, frac = rest.partition(".")
    frac = frac.rstrip("0")
    return f"{day} {clock}{'.' + frac if frac else ''} +0000 UTC"


def _go_struct(name: str, fields: tuple[tuple[str, str], ...], v: Any) -> str:
    """Go's %#v of a struct of strings: core.EventSource{Component:"kubelet", Host:""}."""
    d = as_dict(v)
    inner = ", ".join(f"{go}:{go_value(_text(d.get(key)))}" for key, go in fields)
    return f"core.{name}{{{inner}}}"


def _event_value(field: str, v: Any) -> str:
    """A field's value as upstream's field.Invalid renders it (%q strings, %v numbers, Stringer
    times, %#v structs): both the compared value and the message text."""
    if field in ("involvedObject", "related"):
        return "null" if field == "related" and v is None else _go_struct("ObjectReference", _OBJECT_REFERENCE, v)
    if field == "source":
        return _go_struct("EventSource", _EVENT_SOURCE, v)
    if field in ("firstTimestamp", "lastTimestamp", "eventTime"):
        return _go_time(v)
    if field == "count":
        return str(v if isinstance(v, int) and not isinstance(v, bool) else 0)
    return go_value(_text(v))


def _series_errors(obj: JsonDict) -> list[JsonDict]:
    """validateV1EventSeries."""
    errs: list[JsonDict] = []
    series = obj.get("series")
    if isinstance(series, dict):
        count = series.get("count")
        if not isinstance(count, int) or count < 2:
            errs.append(invalid("series.count", "", "should be at least 2"))
        if not series.get("lastObservedTime"):
            errs.append(required("series.lastObservedTime", ""))
    return errs


def strict_event_errors(obj: JsonDict) -> list[JsonDict]:
    """What ValidateEventCreate adds for a create through events.k8s.io/v1 (on the stored,
    core/v1-shaped object; field paths are upstream's internal names)."""
    errs = _series_errors(obj)
    if not obj.get("eventTime"):
        errs.append(required("eventTime", ""))
    etype = _text(obj.get("type"))
    if etype not in ("Normal", "Warning"):
        errs.append(invalid("type", "", f"has invalid value: {etype}"))
    for field in ("firstTimestamp", "lastTimestamp"):
        if obj.get(field):
            errs.append(invalid(field, "", "needs to be unset"))
    if obj.get("count"):
        errs.append(invalid("count", "", "needs to be unset"))
    source = as_dict(obj.get("source"))
    if source.get("component") or source.get("host"):
        errs.append(invalid("source", "", "needs to be unset"))
    return errs


def _storage_version(spec: JsonDict) -> str | None:
    for v in as_list(spec.get("versions")):
        if isinstance(v, dict) and v.get("storage"):
            return str(v.get("name"))
    return None


class CustomResourceDefinitionStrategy(Strategy):
    """CRD rules plus its life cycle hooks (`apiserver.strategies.crd_lifecycle`): served on
    create, re-served on update, deleted through the customresourcecleanup finalizer."""

    kind = "CustomResourceDefinition"
    group = "apiextensions.k8s.io"
    has_status = True
    tracks_generation = True

    async def after_create(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> JsonDict:
        return await crd_lifecycle.established(ops, obj)

    async def after_update(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> None:
        await crd_lifecycle.updated(ops, obj)

    def delete_finalizers(self, obj: JsonDict) -> tuple[str, ...]:
        return (crd_lifecycle.CLEANUP_FINALIZER,)

    def prepare_for_delete(self, obj: JsonDict, now: str) -> bool:
        return crd_lifecycle.mark_terminating(obj, now)

    async def deletion_started(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> None:
        await crd_lifecycle.cleanup(ops, obj)

    async def after_delete(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> None:
        await crd_lifecycle.removed(ops, obj)

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        names = spec.get("names")
        if isinstance(names, dict) and names.get("kind"):
            if not names.get("singular"):
                names["singular"] = str(names["kind"]).lower()
            if not names.get("listKind"):
                names["listKind"] = f"{names['kind']}List"
        conv = spec.get("conversion")
        if not isinstance(conv, dict):
            spec["conversion"] = {"strategy": "None"}
        elif not conv.get("strategy"):
            conv["strategy"] = "None"

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        spec = as_dict(obj.get("spec"))
        sv = _storage_version(spec)
        obj["status"] = {
            "conditions": [],
            "acceptedNames": {"plural": "", "kind": ""},
            "storedVersions": [sv] if sv else [],
        }

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec", "")]
        for v in as_list(spec.get("versions")):
            # decoded into the typed JSONSchemaProps first: a wrongly typed keyword is a 400
            schema = as_dict(as_dict(v).get("schema")).get("openAPIV3Schema") if isinstance(v, dict) else None
            bad = json_schema_props_type_error(schema, "spec.versions.schema.openAPIV3Schema") \
                if isinstance(schema, dict) else None
            if bad:
                raise errors.BadRequestError(f'CustomResourceDefinition in version "v1" cannot be handled as a '
                                             f"CustomResourceDefinition: {bad}")
        errs: list[JsonDict] = []
        group = spec.get("group") or ""
        names = as_dict(spec.get("names"))
        plural = names.get("plural") or ""
        name = (obj.get("metadata") or {}).get("name") or ""
        if name != f"{plural}.{group}":
            errs.append(invalid("metadata.name", name, "must be spec.names.plural+\".\"+spec.group"))
        if not group:
            errs.append(required("spec.group", ""))
        elif "." not in group:
            errs.append(invalid("spec.group", group, "should be a domain with at least one dot"))
        else:
            errs.extend(invalid("spec.group", group, m) for m in is_dns1123_subdomain(group))
        if not plural:
            errs.append(required("spec.names.plural", ""))
        else:
            errs.extend(invalid("spec.names.plural", plural, m) for m in _dns1035(plural))
        if not names.get("kind"):
            errs.append(required("spec.names.kind", "must not be empty"))
        scope = spec.get("scope")
        if scope not in ("Cluster", "Namespaced"):
            errs.append(not_supported("spec.scope", scope, ("Cluster", "Namespaced")) if scope
                        else required("spec.scope", ""))
        versions = as_list(spec.get("versions"))
        if not versions:
            errs.append(invalid("spec.versions", versions, "must have exactly one version marked as storage version"))
        else:
            storage = [v for v in versions if isinstance(v, dict) and v.get("storage")]
            if len(storage) != 1:
                errs.append(invalid("spec.versions", _VersionsRepr(versions),
                                    "must have exactly one version marked as storage version"))
            seen: set[str] = set()
            for i, v in enumerate(versions):
                if not isinstance(v, dict):
                    continue
                vn = v.get("name") or ""
                if vn in seen:
                    errs.append({"reason": "FieldValueDuplicate", "field": f"spec.versions[{i}].name",
                                 "message": f'Duplicate value: "{vn}"'})
                seen.add(vn)
                if not vn:
                    errs.append(required(f"spec.versions[{i}].name", ""))
                errs.extend(_pattern_errors(as_dict(v.get("schema")).get("openAPIV3Schema"),
                                            f"spec.versions[{i}].schema.openAPIV3Schema"))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        ns, os_ = as_dict(new.get("spec")), as_dict(old.get("spec"))
        if ns.get("scope") != os_.get("scope"):
            errs.append(invalid("spec.scope", ns.get("scope"), "field is immutable"))
        if ns.get("group") != os_.get("group"):
            errs.append(invalid("spec.group", ns.get("group"), "field is immutable"))
        return errs


def _pattern_errors(schema: Any, path: str) -> list[JsonDict]:
    """ValidateCustomResourceDefinitionOpenAPISchema's pattern check, everywhere in a version's
    schema: a `pattern` Go's regexp does not compile is `Invalid value: "(": must be a valid
    regular expression, but isn't: error parsing regexp: missing closing ): `(``."""
    if not isinstance(schema, dict):
        return []
    errs: list[JsonDict] = []
    pat = schema.get("pattern")
    if isinstance(pat, str) and pat:
        try:
            compile_go(pat)
        except GoRegexpError as e:
            errs.append(invalid(f"{path}.pattern", pat, f"must be a valid regular expression, but isn't: {e}"))
    for key in ("properties", "patternProperties", "definitions", "dependencies"):
        for name, sub in as_dict(schema.get(key)).items():
            errs.extend(_pattern_errors(sub, f"{path}.{key}[{name}]"))
    items = schema.get("items")
    if isinstance(items, list):
        for i, sub in enumerate(items):
            errs.extend(_pattern_errors(sub, f"{path}.items[{i}]"))
    else:
        errs.extend(_pattern_errors(items, f"{path}.items"))
    errs.extend(_pattern_errors(schema.get("additionalProperties"), f"{path}.additionalProperties"))
    errs.extend(_pattern_errors(schema.get("not"), f"{path}.not"))
    for key in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(as_list(schema.get(key))):
            errs.extend(_pattern_errors(sub, f"{path}.{key}[{i}]"))
    return errs


def _dns1035(v: str) -> list[str]:
    return is_dns1035_label(v)


class _VersionsRepr:
    def __init__(self, versions: list[Any]) -> None:
        self.versions = versions

    def __str__(self) -> str:
        return "[]apiextensions.CustomResourceDefinitionVersion{...}"


class CustomResourceStrategy(Strategy):
    """One CRD version's custom resources: schema defaulting, pruning, validation; generation
    always tracked (any non-metadata change bumps it, or spec when a status subresource exists)."""

    tracks_generation = True

    def __init__(self, kind: str, group: str, *, schema: JsonDict | None = None,
                 has_status: bool = False, namespaced: bool = True) -> None:
        self.kind = kind
        self.group = group
        self.schema = schema
        self.has_status = has_status
        self.namespaced = namespaced

    def _default(self, obj: JsonDict) -> None:
        default_custom(obj, self.schema)

    def begin_create(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> FinishFunc | None:
        crd_lifecycle.terminating_crd_refuses_create(ops, info)
        return None

    async def after_delete(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> None:
        await crd_lifecycle.custom_object_deleted(ops, info)

    def prune(self, obj: JsonDict) -> list[str]:
        return prune_custom(obj, self.schema)

    def _spec_changed(self, new: JsonDict, old: JsonDict) -> bool:
        skip = ("apiVersion", "kind", "metadata") + (("status",) if self.has_status else ())
        keys = (set(new) | set(old)) - set(skip)
        return any(new.get(k) != old.get(k) for k in keys)

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        return validate_custom(obj, self.schema)
