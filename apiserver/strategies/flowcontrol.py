"""FlowSchema and PriorityLevelConfiguration strategies (layer L4, apiserver):
flowcontrol.apiserver.k8s.io/v1, pkg/apis/flowcontrol/{v1 defaults, validation} (1.33).

Defaults (v1): a FlowSchema's matchingPrecedence 0 or unset is 1000; a Limited level's
nominalConcurrencyShares unset is 30 and lendablePercent 0; queuing unset fields are 64 queues,
hand size 8, queue length limit 50; an Exempt level's shares and lendable percent are 0.
Validation: precedence in 1..10000 (1 only for `exempt`), a referenced level, ByUser/ByNamespace,
rules with subjects and at least one of resource/non-resource rules, each rule's lists non-empty
and `*` alone when present; a level's type is Exempt iff its name is `exempt`, its sections match
the type, percentages 0-100, queuing sane (hand size <= queues, the shuffle-sharding entropy bound
of 60 bits). The mandatory objects (`exempt`, `catch-all`) must keep their fixed specs (except
`spec.exempt` of the exempt level). Status conditions are written by the server's APF controller.
"""

from __future__ import annotations

import math
from typing import Any

from minik3s.api.apf_bootstrap import MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    duplicate,
    forbidden,
    invalid,
    is_dns1123_label,
    is_dns1123_subdomain,
    not_supported,
    required,
)

from .base import Strategy, as_dict, as_list

VERBS = ("*", "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
SUBJECT_KINDS = ("Group", "ServiceAccount", "User")
DISTINGUISHERS = ("ByNamespace", "ByUser")
MAX_PRECEDENCE = 10000


def _star_alone(values: list[Any], path: str, what: str) -> list[JsonDict]:
    if "*" in values and len(values) > 1:
        return [invalid(path, values, f"if '*' is present, must not specify other {what}")]
    return []


def _list_errors(values: list[Any], path: str, empty: str, what: str) -> list[JsonDict]:
    """A rule's list: not empty (`empty` says why), and `*` only alone."""
    return [*([required(path, empty)] if not values else []), *_star_alone(values, path, what)]


def _subject_errors(s: Any, path: str) -> list[JsonDict]:
    s = as_dict(s)
    kind = s.get("kind")
    errs: list[JsonDict] = []
    fields = {"User": "user", "Group": "group", "ServiceAccount": "serviceAccount"}
    if kind not in SUBJECT_KINDS:
        return [not_supported(f"{path}.kind", kind, SUBJECT_KINDS)]
    want = fields[str(kind)]
    for k, field_name in fields.items():
        if field_name != want and s.get(field_name) is not None:
            errs.append(forbidden(f"{path}.{field_name}", f"{field_name} is forbidden when subject kind is not '{k}'"))
    body = s.get(want)
    if not isinstance(body, dict):
        errs.append(required(f"{path}.{want}", f"{want} is required when subject kind is '{kind}'"))
        return errs
    if kind == "ServiceAccount":
        if not body.get("name"):
            errs.append(required(f"{path}.{want}.name", "must specify name for service account"))
        if not body.get("namespace"):
            errs.append(required(f"{path}.{want}.namespace", "must specify namespace for service account"))
    elif not body.get("name"):
        errs.append(required(f"{path}.{want}.name", ""))
    return errs


def _resource_rule_errors(r: Any, path: str) -> list[JsonDict]:
    r = as_dict(r)
    errs: list[JsonDict] = []
    verbs = as_list(r.get("verbs"))
    errs.extend(_list_errors(verbs, f"{path}.verbs", "verbs must contain at least one value", "verbs"))
    bad = [v for v in verbs if v not in VERBS]
    if bad:
        errs.append(not_supported(f"{path}.verbs", bad, VERBS))
    errs.extend(_list_errors(as_list(r.get("apiGroups")), f"{path}.apiGroups",
                             "resource rules must supply at least one api group", "api groups"))
    errs.extend(_list_errors(as_list(r.get("resources")), f"{path}.resources",
                             "resource rules must supply at least one resource", "resources"))
    namespaces = as_list(r.get("namespaces"))
    if not namespaces and not r.get("clusterScope"):
        errs.append(required(f"{path}.namespaces",
                             "resource rules that are not cluster scoped must supply at least one namespace"))
    errs.extend(_star_alone(namespaces, f"{path}.namespaces", "namespaces"))
    for i, ns in enumerate(namespaces):
        if ns != "*" and is_dns1123_label(str(ns)):
            errs.append(invalid(f"{path}.namespaces[{i}]", ns, "each member of this list must be '*' or a "
                                                              "DNS-1123 label; " + "; ".join(is_dns1123_label(str(ns)))))
    return errs


def _non_resource_rule_errors(r: Any, path: str) -> list[JsonDict]:
    r = as_dict(r)
    return [*_list_errors(as_list(r.get("verbs")), f"{path}.verbs", "verbs must contain at least one value", "verbs"),
            *_list_errors(as_list(r.get("nonResourceURLs")), f"{path}.nonResourceURLs",
                          "nonResourceURLs must contain at least one value", "non-resource URLs")]


def _flow_schema_spec_errors(name: str, spec: JsonDict) -> list[JsonDict]:
    errs: list[JsonDict] = []
    mp = spec.get("matchingPrecedence")
    if isinstance(mp, int):
        if mp <= 0:
            errs.append(invalid("spec.matchingPrecedence", mp, "must be a positive value"))
        elif mp > MAX_PRECEDENCE:
            errs.append(invalid("spec.matchingPrecedence", mp, f"must not be greater than {MAX_PRECEDENCE}"))
        elif mp == 1 and name != "exempt":
            errs.append(invalid("spec.matchingPrecedence", mp,
                                "only the schema named 'exempt' may have matchingPrecedence 1"))
    dm = spec.get("distinguisherMethod")
    if isinstance(dm, dict) and dm.get("type") not in DISTINGUISHERS:
        errs.append(not_supported("spec.distinguisherMethod.type", dm.get("type"), DISTINGUISHERS))
    plc = as_dict(spec.get("priorityLevelConfiguration")).get("name")
    if not plc:
        errs.append(required("spec.priorityLevelConfiguration.name", "must reference a priority level"))
    else:
        errs.extend(invalid("spec.priorityLevelConfiguration.name", plc, m) for m in is_dns1123_subdomain(str(plc)))
    for i, rule in enumerate(as_list(spec.get("rules"))):
        path = f"spec.rules[{i}]"
        rule = as_dict(rule)
        subjects = as_list(rule.get("subjects"))
        if not subjects:
            errs.append(required(f"{path}.subjects", "subjects must contain at least one value"))
        for j, s in enumerate(subjects):
            errs.extend(_subject_errors(s, f"{path}.subjects[{j}]"))
        rr, nr = as_list(rule.get("resourceRules")), as_list(rule.get("nonResourceRules"))
        if not rr and not nr:
            errs.append(required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"))
        for j, r in enumerate(rr):
            errs.extend(_resource_rule_errors(r, f"{path}.resourceRules[{j}]"))
        for j, r in enumerate(nr):
            errs.extend(_non_resource_rule_errors(r, f"{path}.nonResourceRules[{j}]"))
    fixed = MANDATORY_FLOW_SCHEMAS.get(name)
    if fixed is not None and _defaulted_fs(fixed) != spec:
        errs.append(invalid("spec", spec, f"spec of '{name}' must equal the fixed value"))
    return errs


def _conditions_errors(status: JsonDict) -> list[JsonDict]:
    errs: list[JsonDict] = []
    seen: set[Any] = set()
    for i, c in enumerate(as_list(status.get("conditions"))):
        t = as_dict(c).get("type")
        if not t:
            errs.append(required(f"status.conditions[{i}].type", "must not be empty"))
        elif t in seen:
            errs.append(duplicate(f"status.conditions[{i}].type", t))
        seen.add(t)
    return errs


def _defaulted_fs(spec: JsonDict) -> JsonDict:
    out = dict(spec)
    if not out.get("matchingPrecedence"):
        out["matchingPrecedence"] = 1000
    return out


class _ConfigurationStrategy(Strategy):
    """What both APF kinds share: a status whose condition types are unique and non-empty, and
    a generation that follows the spec."""

    has_status = True
    tracks_generation = True

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return [*super().validate_status_update(new, old), *_conditions_errors(as_dict(new.get("status")))]


class FlowSchemaStrategy(_ConfigurationStrategy):
    kind = "FlowSchema"

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict) and not spec.get("matchingPrecedence"):
            spec["matchingPrecedence"] = 1000

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        name = str(as_dict(obj.get("metadata")).get("name") or "")
        return _flow_schema_spec_errors(name, as_dict(obj.get("spec")))


def _default_limited(limited: JsonDict) -> None:
    if limited.get("nominalConcurrencyShares") is None:
        limited["nominalConcurrencyShares"] = 30
    if limited.get("lendablePercent") is None:
        limited["lendablePercent"] = 0
    lr = limited.get("limitResponse")
    if isinstance(lr, dict) and lr.get("type") == "Queue":
        q = lr.setdefault("queuing", {})
        if isinstance(q, dict):
            for k, v in (("queues", 64), ("handSize", 8), ("queueLengthLimit", 50)):
                if not q.get(k):
                    q[k] = v


def _percent(path: str, v: Any) -> list[JsonDict]:
    if isinstance(v, int) and not 0 <= v <= 100:
        return [invalid(path, v, "must be between 0 and 100, inclusive")]
    return []


def _entropy_bits(queues: int, hand: int) -> float:
    """log2 of the number of hands: C(queues, hand) ~ sum of log2 over the factors."""
    return sum(math.log2(queues - i) - math.log2(i + 1) for i in range(hand))


def _queuing_errors(q: Any, path: str) -> list[JsonDict]:
    q = as_dict(q)
    errs: list[JsonDict] = []
    queues, hand, length = q.get("queues"), q.get("handSize"), q.get("queueLengthLimit")
    if isinstance(length, int) and length <= 0:
        errs.append(invalid(f"{path}.queueLengthLimit", length, "must be positive"))
    if isinstance(queues, int) and queues <= 0:
        errs.append(invalid(f"{path}.queues", queues, "must be positive"))
    elif isinstance(queues, int) and queues > 10_000_000:
        errs.append(invalid(f"{path}.queues", queues, "must not be greater than 10000000"))
    if isinstance(hand, int) and hand <= 0:
        errs.append(invalid(f"{path}.handSize", hand, "must be positive"))
    elif isinstance(hand, int) and isinstance(queues, int) and queues > 0:
        if hand > queues:
            errs.append(invalid(f"{path}.handSize", hand, f"should not be greater than queues ({queues})"))
        elif _entropy_bits(queues, hand) > 60:
            errs.append(invalid(f"{path}.handSize", hand, f"required entropy bits of deckSize {queues} and handSize "
                                                          f"{hand} should not be greater than 60"))
    return errs


def _priority_level_spec_errors(name: str, spec: JsonDict) -> list[JsonDict]:
    errs: list[JsonDict] = []
    ptype = spec.get("type")
    if ptype not in ("Exempt", "Limited"):
        return [not_supported("spec.type", ptype, ("Exempt", "Limited"))]
    if (ptype == "Exempt") != (name == "exempt"):
        errs.append(invalid("spec.type", ptype, "type must be 'Exempt' if and only if name is 'exempt'"))
    if ptype == "Exempt":
        if spec.get("limited") is not None:
            errs.append(forbidden("spec.limited", "must be nil if the type is not Limited"))
        ex = as_dict(spec.get("exempt"))
        ncs = ex.get("nominalConcurrencyShares")
        if isinstance(ncs, int) and ncs < 0:
            errs.append(invalid("spec.exempt.nominalConcurrencyShares", ncs, "must be a non-negative integer"))
        errs.extend(_percent("spec.exempt.lendablePercent", ex.get("lendablePercent")))
    else:
        if spec.get("exempt") is not None:
            errs.append(forbidden("spec.exempt", "must be nil if the type is Limited"))
        lim = spec.get("limited")
        if not isinstance(lim, dict):
            errs.append(required("spec.limited", "must not be empty when type is Limited"))
        else:
            ncs = lim.get("nominalConcurrencyShares")
            if isinstance(ncs, int) and ncs < 0:
                errs.append(invalid("spec.limited.nominalConcurrencyShares", ncs, "must be a non-negative integer"))
            errs.extend(_percent("spec.limited.lendablePercent", lim.get("lendablePercent")))
            blp = lim.get("borrowingLimitPercent")
            if isinstance(blp, int) and blp < 0:
                errs.append(invalid("spec.limited.borrowingLimitPercent", blp,
                                    "if specified, must be a non-negative integer"))
            lr = as_dict(lim.get("limitResponse"))
            lrt = lr.get("type")
            if lrt not in ("Queue", "Reject"):
                errs.append(not_supported("spec.limited.limitResponse.type", lrt, ("Queue", "Reject")))
            elif lrt == "Reject" and lr.get("queuing") is not None:
                errs.append(forbidden("spec.limited.limitResponse.queuing",
                                      "must be nil if limited.limitResponse.type is not Limited"))
            elif lrt == "Queue":
                if lr.get("queuing") is None:
                    errs.append(required("spec.limited.limitResponse.queuing",
                                         "must not be empty if limited.limitResponse.type is Limited"))
                else:
                    errs.extend(_queuing_errors(lr["queuing"], "spec.limited.limitResponse.queuing"))
    fixed = MANDATORY_PRIORITY_LEVELS.get(name)
    if fixed is not None:
        if name == "exempt":
            if {k: v for k, v in spec.items() if k != "exempt"} != {k: v for k, v in fixed.items() if k != "exempt"}:
                errs.append(invalid("spec", spec, "spec of 'exempt' except the 'spec.exempt' field must equal the "
                                                  "fixed value"))
        elif spec != fixed:
            errs.append(invalid("spec", spec, f"spec of '{name}' must equal the fixed value"))
    return errs


class PriorityLevelConfigurationStrategy(_ConfigurationStrategy):
    kind = "PriorityLevelConfiguration"

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if spec.get("type") == "Limited" and isinstance(spec.get("limited"), dict):
            _default_limited(spec["limited"])
        elif spec.get("type") == "Exempt":
            ex = spec.setdefault("exempt", {})
            if isinstance(ex, dict):
                ex.setdefault("nominalConcurrencyShares", 0)
                ex.setdefault("lendablePercent", 0)

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        name = str(as_dict(obj.get("metadata")).get("name") or "")
        return _priority_level_spec_errors(name, as_dict(obj.get("spec")))
