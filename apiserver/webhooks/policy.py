"""ValidatingAdmissionPolicy: CEL validations enforced by the API server itself, as
kube-apiserver v1.33's ValidatingAdmissionPolicy admission plugin does (layer L4,
apiserver.webhooks; staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating).

Why here: a policy is dynamic admission like a webhook, evaluated in process instead of called;
it shares the webhooks' request attributes, rule matching and exemptions, and runs between the
mutating and the validating webhooks, as in upstream's plugin order.

For each ValidatingAdmissionPolicyBinding (policies by name, then their bindings by name):
1. the policy exists; the request matches the policy's `matchConstraints` and the binding's
   `matchResources` (namespaceSelector, objectSelector, excludeResourceRules, resourceRules with
   resourceNames, matchPolicy Equivalent: the object converted to the version a rule names);
2. params: with `paramKind`, the binding's `paramRef` (a name, or a selector; in the request's
   namespace unless `namespace` is given) yields the param objects, each evaluated on its own;
   none found: `parameterNotFoundAction` Allow skips the binding, Deny leaves it to the
   policy's failurePolicy (Fail refuses, Ignore admits);
3. `variables` in order, the policy's `matchConditions` (a false one skips the binding), then
   each validation: false -> a violation with `message`, else `messageExpression`, else
   "failed expression: <expression>"; an evaluation error -> a violation under failurePolicy
   Fail, nothing under Ignore;
4. `validationActions`: Deny -> the first violation refuses the request (its `reason`, default
   Invalid: 422; Forbidden 403; Unauthorized 401; RequestEntityTooLarge 413) with the message
   `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>' with binding '<b>' denied
   request: <message>`; Warn -> a Warning header `Validation failed for
   ValidatingAdmissionPolicy '<p>' with binding '<b>': <message>`; Audit -> nothing (minik3s
   keeps no audit log).

CEL variables: object, oldObject, request, params, namespaceObject, variables (apiserver.cel;
no authorizer).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from apiserver import cel
from apiserver.storage.interface import Store
from apiserver.webhooks.attributes import Attributes
from apiserver.webhooks.call import admission_request
from apiserver.webhooks.rules import (
    exempt,
    matched_resource,
    namespace_labels,
    object_selector_matches,
    rule_matches,
)
from apiserver.webhooks.source import parse_selector
from minik3s.api import errors
from minik3s.api.resources import ResourceInfo, ResourceRegistry
from minik3s.api.selectors import LabelSelector, label_selector_from_dict
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

__all__ = ["PolicyAdmission", "PolicySource"]

POLICY_PREFIX = "admissionregistration.k8s.io/validatingadmissionpolicies/"
BINDING_PREFIX = "admissionregistration.k8s.io/validatingadmissionpolicybindings/"

_REASON_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413, "Invalid": 422}


@dataclass(slots=True, frozen=True)
class _Match:
    """A MatchResources, its selectors parsed once (when the policy or binding was read)."""

    namespace_selector: LabelSelector
    object_selector: LabelSelector
    resource_rules: list[JsonDict]
    exclude_rules: list[JsonDict]
    match_policy: str

    @classmethod
    def parse(cls, mr: Any) -> _Match | None:
        if not isinstance(mr, dict):
            return None
        return cls(parse_selector(mr.get("namespaceSelector")), parse_selector(mr.get("objectSelector")),
                   [r for r in mr.get("resourceRules") or () if isinstance(r, dict)],
                   [r for r in mr.get("excludeResourceRules") or () if isinstance(r, dict)],
                   str(mr.get("matchPolicy") or "Equivalent"))


@dataclass(slots=True)
class _Pair:
    """One binding with its policy, as evaluated: names, match constraints, actions."""

    policy: JsonDict
    binding: JsonDict
    policy_name: str = ""
    binding_name: str = ""
    constraints: _Match | None = None
    narrowing: _Match | None = None  # the binding's matchResources, if any
    actions: tuple[str, ...] = ()
    fail: bool = True

    @classmethod
    def compile(cls, policy: JsonDict, binding: JsonDict) -> _Pair:
        pspec, bspec = policy.get("spec") or {}, binding.get("spec") or {}
        return cls(policy, binding, str((policy.get("metadata") or {}).get("name") or ""),
                   str((binding.get("metadata") or {}).get("name") or ""),
                   _Match.parse(pspec.get("matchConstraints")), _Match.parse(bspec.get("matchResources")),
                   tuple(str(a) for a in bspec.get("validationActions") or ()),
                   str(pspec.get("failurePolicy") or "Fail") == "Fail")


@dataclass(slots=True)
class _Cached:
    fingerprint: tuple[tuple[str, str], ...] = ()
    pairs: list[_Pair] = field(default_factory=list)


class PolicySource:
    """The (policy, binding) pairs in evaluation order, re-read only when an admission
    configuration was written (`generation()`) and a policy or binding changed."""

    __slots__ = ("_cache", "_generation", "_seen", "_store")

    def __init__(self, store: Store, generation: Callable[[], int] | None = None) -> None:
        self._store = store
        self._generation = generation
        self._seen = -1
        self._cache = _Cached()

    def pairs(self) -> list[_Pair]:
        if self._generation is not None:
            gen = self._generation()
            if gen == self._seen:
                return self._cache.pairs
            self._seen = gen
        count = self._store.count_after
        if not self._cache.fingerprint and not (count(POLICY_PREFIX) and count(BINDING_PREFIX)):
            return []
        policies, _ = self._store.list(POLICY_PREFIX)
        bindings, _ = self._store.list(BINDING_PREFIX)
        fp = tuple(((o.get("metadata") or {}).get("name", ""), (o.get("metadata") or {}).get("resourceVersion", ""))
                   for o in (*policies, *bindings))
        if fp != self._cache.fingerprint:
            by_name = {str((p.get("metadata") or {}).get("name") or ""): p for p in policies}
            pairs = [_Pair.compile(by_name[name], b) for b in bindings
                     if (name := str((b.get("spec") or {}).get("policyName") or "")) in by_name]
            pairs.sort(key=lambda p: (p.policy_name, p.binding_name))
            self._cache = _Cached(fp, pairs)
        return self._cache.pairs


@dataclass(slots=True, frozen=True)
class _Violation:
    message: str
    reason: str = "Invalid"


class _ConfigError(Exception):
    """A binding that cannot be evaluated (its params): decided by the policy's failurePolicy."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class PolicyAdmission:
    """Evaluates the policies' bindings for one request (`validate`), raising the first denial."""

    __slots__ = ("_convert", "_equivalents", "_namespace", "_registry", "_source", "_store")

    def __init__(self, store: Store, registry: ResourceRegistry, source: PolicySource, *,
                 equivalents: Callable[[ResourceInfo], list[ResourceInfo]],
                 convert: Callable[[ResourceInfo, Attributes, JsonDict | None], JsonDict | None],
                 namespace: Callable[[Attributes], JsonDict | None]) -> None:
        self._store = store
        self._registry = registry
        self._source = source
        self._equivalents = equivalents
        self._convert = convert
        self._namespace = namespace

    def active(self) -> bool:
        return bool(self._source.pairs())

    # ------------------------------------------------------------------ matching
    def _matches(self, m: _Match, attrs: Attributes, *, binding: bool = False) -> ResourceInfo | None:
        """The resource version `m` matches the request as, or None. A binding's matchResources
        without resourceRules does not constrain the resource."""
        scoped = bool(attrs.namespace) or attrs.is_namespace
        if scoped and not m.namespace_selector.empty:
            labels = namespace_labels(attrs, self._namespace(attrs))
            if labels is None or not m.namespace_selector.matches(labels):
                return None
        if not object_selector_matches(m.object_selector, attrs):
            return None
        info = attrs.info
        for rule in _named(m.exclude_rules, attrs):
            if rule_matches(rule, attrs, info.group, info.version, info.resource):
                return None
        if binding and not m.resource_rules:
            return info
        return matched_resource(_named(m.resource_rules, attrs), m.match_policy, attrs, self._equivalents(info))

    # ------------------------------------------------------------------ params
    def _params(self, policy_spec: JsonDict, binding_spec: JsonDict, attrs: Attributes) -> list[JsonDict | None]:
        """The param objects to evaluate with ([None] without paramKind; [] to skip the binding);
        raises _ConfigError (decided by failurePolicy) for a binding that cannot be resolved or
        finds no params under parameterNotFoundAction Deny."""
        kind = policy_spec.get("paramKind")
        if not isinstance(kind, dict):
            return [None]
        ref = binding_spec.get("paramRef")
        if not isinstance(ref, dict):
            raise _ConfigError("failed to configure binding: paramRef is required when paramKind is set")
        info = self._registry.by_kind(str(kind.get("apiVersion") or ""), str(kind.get("kind") or ""))
        if info is None:
            raise _ConfigError(f"failed to configure policy: failed to find resource referenced by paramKind: "
                               f"'{kind.get('apiVersion')}, Kind={kind.get('kind')}'")
        namespace = ""
        if info.namespaced:
            namespace = str(ref.get("namespace") or "") or (attrs.namespace if not attrs.is_namespace else "")
            if not namespace:
                raise _ConfigError("failed to configure binding: cannot use namespaced paramRef in policy binding "
                                   "that matches cluster-scoped resources")
        found: list[JsonDict] = []
        if ref.get("name"):
            obj = self._store.get(info.key(namespace or None, str(ref["name"])))
            if obj is not None:
                found.append(obj)
        elif isinstance(ref.get("selector"), dict):
            try:
                sel = label_selector_from_dict(ref["selector"])
            except ValueError as e:
                raise _ConfigError(f"failed to configure binding: {e}") from None
            items, _ = self._store.list(info.list_prefix(namespace or None))
            found = [o for o in items if sel.matches((o.get("metadata") or {}).get("labels") or {})]
        if found:
            return list(found)
        if ref.get("parameterNotFoundAction") == "Deny":  # then subject to the policy's failurePolicy
            raise _ConfigError("failed to configure binding: no params found for policy binding with `Deny` "
                               "parameterNotFoundAction")
        return []

    # ------------------------------------------------------------------ evaluation
    def validate(self, attrs: Attributes) -> None:
        if exempt(attrs.info):
            return
        pairs = self._source.pairs()
        if not pairs:
            return
        namespace_object = self._namespace(attrs) if attrs.namespace and not attrs.is_namespace else None
        # per resource version matched (nearly always one): the request's variables, converted
        # to CEL once for every binding, condition and validation that reads them
        scopes: dict[int, cel.Variables] = {}
        denied: list[tuple[_Pair, _Violation]] = []
        for pair in pairs:
            if pair.constraints is None:
                continue
            matched = self._matches(pair.constraints, attrs)
            if matched is None or (pair.narrowing is not None
                                   and self._matches(pair.narrowing, attrs, binding=True) is None):
                continue
            base = scopes.get(id(matched))
            if base is None:
                base = scopes[id(matched)] = cel.Variables({
                    "object": self._convert(matched, attrs, attrs.obj),
                    "oldObject": self._convert(matched, attrs, attrs.old),
                    "request": admission_request(attrs, matched), "namespaceObject": namespace_object})
            pspec = pair.policy.get("spec") or {}
            try:
                for params in self._params(pspec, pair.binding.get("spec") or {}, attrs):
                    for v in _evaluate(pspec, base.with_values(params=params), fail=pair.fail):
                        self._decide(pair, v, attrs, denied)
            except _ConfigError as e:
                if pair.fail:
                    self._decide(pair, _Violation(e.message), attrs, denied)
        if denied:
            pair, first = denied[0]
            message = (f"ValidatingAdmissionPolicy '{pair.policy_name}' with binding '{pair.binding_name}' "
                       f"denied request: {first.message}")
            name = attrs.name or str(((attrs.obj or attrs.old or {}).get("metadata") or {}).get("name") or "")
            # admission.NewForbidden with the validation's reason and its code, as upstream
            # rewrites the StatusError (the error class follows the reason: Invalid -> InvalidError)
            status = errors.forbidden(attrs.info.resource, attrs.info.group, name, message,
                                      causes=[{"message": message}]).to_status()
            raise errors.ApiError.from_status({**status, "reason": first.reason,
                                               "code": _REASON_CODES.get(first.reason, 422)})

    @staticmethod
    def _decide(pair: _Pair, v: _Violation, attrs: Attributes, denied: list[tuple[_Pair, _Violation]]) -> None:
        if "Deny" in pair.actions:
            denied.append((pair, v))
        if "Warn" in pair.actions:
            attrs.warnings.append(f"Validation failed for ValidatingAdmissionPolicy '{pair.policy_name}' with "
                                  f"binding '{pair.binding_name}': {v.message}")
        if "Audit" in pair.actions:
            logger.info("policy audit: policy=%s binding=%s message=%s", pair.policy_name, pair.binding_name,
                        v.message)


def _named(rules: list[JsonDict], attrs: Attributes) -> list[JsonDict]:
    """NamedRuleWithOperations: a rule with resourceNames applies only to those names."""
    return [r for r in rules if not r.get("resourceNames") or attrs.name in r["resourceNames"]]


def _evaluate(spec: JsonDict, scope: cel.Variables, *, fail: bool) -> list[_Violation]:
    """The policy's violations for one param (`scope`: the request's variables and `params`);
    [] when it admits. Evaluation errors count as violations only under failurePolicy Fail."""
    computed: dict[str, Any] = {}
    scope.set("variables", computed)
    for v in spec.get("variables") or ():
        if not isinstance(v, dict):
            continue
        try:
            computed[str(v.get("name"))] = cel.run(str(v.get("expression") or ""), scope)
        except (cel.CelEvalError, cel.CelCompileError):
            continue  # used later: "no such key" where referenced (upstream: the variable's own error)
        scope.set("variables", dict(computed))  # the next ones see it
    conditions = [str(mc.get("expression") or "") for mc in spec.get("matchConditions") or () if isinstance(mc, dict)]
    matched, failures = cel.match_conditions(conditions, scope)
    if not matched:
        return []
    if failures:
        return [_Violation(errors.aggregate(failures))] if fail else []
    out: list[_Violation] = []
    for v in spec.get("validations") or ():
        if not isinstance(v, dict):
            continue
        expression = str(v.get("expression") or "")
        verdict = cel.check(expression, scope)
        if verdict is True:
            continue
        reason = str(v.get("reason") or "Invalid")
        if isinstance(verdict, str):  # an evaluation error
            if fail:
                out.append(_Violation(verdict, reason))
            continue
        out.append(_Violation(_message(v, expression, scope), reason))
    return out


def _message(v: JsonDict, expression: str, scope: cel.Variables) -> str:
    """A failed validation's message: messageExpression's string when it gives one (non-empty,
    one line), else `message`, else upstream's default."""
    if v.get("messageExpression"):
        try:
            text = cel.run(str(v["messageExpression"]), scope)
        except (cel.CelEvalError, cel.CelCompileError):
            text = None
        if isinstance(text, str) and text.strip() and "\n" not in text:
            return text
    if v.get("message"):
        return str(v["message"])
    return f"failed expression: {expression.strip()}"
