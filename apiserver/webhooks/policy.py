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
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from apiserver import cel
from apiserver.storage.interface import Store
from apiserver.webhooks.attributes import Attributes
from apiserver.webhooks.call import review_request
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
from minik3s.api.selectors import label_selector_from_dict
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

__all__ = ["PolicyAdmission", "PolicySource"]

POLICY_PREFIX = "admissionregistration.k8s.io/validatingadmissionpolicies/"
BINDING_PREFIX = "admissionregistration.k8s.io/validatingadmissionpolicybindings/"

_REASON_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413, "Invalid": 422}


@dataclass(slots=True)
class _Pair:
    policy: JsonDict
    binding: JsonDict

    @property
    def policy_name(self) -> str:
        return str((self.policy.get("metadata") or {}).get("name") or "")

    @property
    def binding_name(self) -> str:
        return str((self.binding.get("metadata") or {}).get("name") or "")


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
            pairs = [_Pair(by_name[str((b.get("spec") or {}).get("policyName") or "")], b) for b in bindings
                     if str((b.get("spec") or {}).get("policyName") or "") in by_name]
            pairs.sort(key=lambda p: (p.policy_name, p.binding_name))
            self._cache = _Cached(fp, pairs)
        return self._cache.pairs


class _Denied(Exception):
    def __init__(self, message: str, reason: str = "Invalid") -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or "Invalid"


class PolicyAdmission:
    """Evaluates the policies' bindings for one request (`validate`), raising the first denial."""

    __slots__ = ("_convert", "_equivalents", "_registry", "_source", "_store")

    def __init__(self, store: Store, registry: ResourceRegistry, source: PolicySource, *,
                 equivalents: Callable[[ResourceInfo], list[ResourceInfo]],
                 convert: Callable[[ResourceInfo, Attributes, JsonDict | None], JsonDict | None]) -> None:
        self._store = store
        self._registry = registry
        self._source = source
        self._equivalents = equivalents
        self._convert = convert

    def active(self) -> bool:
        return bool(self._source.pairs())

    # ------------------------------------------------------------------ matching
    def _namespace(self, attrs: Attributes) -> JsonDict | None:
        return self._store.get(f"core/namespaces//{attrs.namespace}") if attrs.namespace else None

    def _matches(self, mr: Any, attrs: Attributes, *, binding: bool = False) -> ResourceInfo | None:
        """The resource version `mr` (a MatchResources) matches the request as, or None. A
        binding's matchResources without resourceRules does not constrain the resource."""
        if not isinstance(mr, dict):
            return None
        scoped = bool(attrs.namespace) or attrs.is_namespace
        ns_sel = parse_selector(mr.get("namespaceSelector"))
        if scoped and not ns_sel.empty:
            labels = namespace_labels(attrs, self._namespace(attrs))
            if labels is None or not ns_sel.matches(labels):
                return None
        if not object_selector_matches(parse_selector(mr.get("objectSelector")), attrs):
            return None
        info = attrs.info
        for rule in _named(mr.get("excludeResourceRules"), attrs):
            if rule_matches(rule, attrs, info.group, info.version, info.resource):
                return None
        if binding and not mr.get("resourceRules"):
            return info
        return matched_resource(_named(mr.get("resourceRules"), attrs), str(mr.get("matchPolicy") or "Equivalent"),
                                attrs, self._equivalents(info))

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
        request: JsonDict | None = None
        namespace_object: JsonDict | None = None
        if attrs.namespace and not attrs.is_namespace:
            namespace_object = self._namespace(attrs)
        denied: list[tuple[_Pair, _Denied]] = []
        for pair in pairs:
            pspec = pair.policy.get("spec") or {}
            bspec = pair.binding.get("spec") or {}
            matched = self._matches(pspec.get("matchConstraints"), attrs)
            if matched is None:
                continue
            if isinstance(bspec.get("matchResources"), dict) and self._matches(bspec["matchResources"], attrs,
                                                                                         binding=True) is None:
                continue
            actions = [str(a) for a in bspec.get("validationActions") or ()]
            fail = str(pspec.get("failurePolicy") or "Fail") == "Fail"
            if request is None:
                request = review_request(attrs, matched, uid=uuid.UUID(int=0), version="v1", obj=None,
                                         old=None)["request"]
                del request["object"], request["oldObject"]
            variables = {"object": self._convert(matched, attrs, attrs.obj),
                         "oldObject": self._convert(matched, attrs, attrs.old),
                         "request": request, "namespaceObject": namespace_object}
            try:
                for params in self._params(pspec, bspec, attrs):
                    for message, reason in _evaluate(pspec, {**variables, "params": params}, fail=fail):
                        self._decide(pair, actions, _Denied(message, reason), attrs, denied)
            except _Denied as d:
                self._decide(pair, actions, d, attrs, denied)
            except _ConfigError as e:
                if fail:
                    self._decide(pair, actions, _Denied(e.message), attrs, denied)
        if denied:
            first_pair, first = denied[0]
            message = (f"ValidatingAdmissionPolicy '{first_pair.policy_name}' with binding "
                       f"'{first_pair.binding_name}' denied request: {first.message}")
            what = attrs.info.qualified
            name = attrs.name or str(((attrs.obj or attrs.old or {}).get("metadata") or {}).get("name") or "")
            shown = f"{what} {_go_quote(name)} is forbidden: {message}" if name else f"{what} is forbidden: {message}"
            details: JsonDict = {"name": name, **({"group": attrs.info.group} if attrs.info.group else {}),
                                 "kind": attrs.info.resource, "causes": [{"message": message}]}
            if not name:
                del details["name"]
            raise errors.ApiError(shown, details=details, code=_REASON_CODES.get(first.reason, 422), reason=first.reason)

    @staticmethod
    def _decide(pair: _Pair, actions: Sequence[str], d: _Denied, attrs: Attributes,
                denied: list[tuple[_Pair, _Denied]]) -> None:
        if "Deny" in actions:
            denied.append((pair, d))
        if "Warn" in actions:
            attrs.warnings.append(f"Validation failed for ValidatingAdmissionPolicy '{pair.policy_name}' with "
                                  f"binding '{pair.binding_name}': {d.message}")
        if "Audit" in actions:
            logger.info("policy audit: policy=%s binding=%s message=%s", pair.policy_name, pair.binding_name, d.message)


class _ConfigError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _named(rules: Any, attrs: Attributes) -> list[JsonDict]:
    """NamedRuleWithOperations: a rule with resourceNames applies only to those names."""
    out: list[JsonDict] = []
    for r in rules or ():
        if not isinstance(r, dict):
            continue
        names = r.get("resourceNames") or ()
        if names and attrs.name not in names:
            continue
        out.append(r)
    return out


def _go_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _expr_error(expression: str, e: cel.CelEvalError | cel.CelCompileError) -> str:
    return f"expression '{expression}' resulted in error: {e.message}"


def _evaluate(spec: JsonDict, variables: JsonDict, *, fail: bool) -> list[tuple[str, str]]:
    """The policy's violations for one param: (message, reason) each; [] when it admits."""
    computed: dict[str, Any] = {}
    scope = {**variables, "variables": computed}
    for v in spec.get("variables") or ():
        if not isinstance(v, dict):
            continue
        try:
            computed[str(v.get("name"))] = cel.evaluate(cel.compile_expression(str(v.get("expression") or "")), scope)
        except (cel.CelEvalError, cel.CelCompileError):
            continue  # used later: "no such key" where referenced (upstream: the variable's own error)
    errors_seen: list[str] = []
    for mc in spec.get("matchConditions") or ():
        if not isinstance(mc, dict):
            continue
        expression = str(mc.get("expression") or "")
        try:
            result = cel.evaluate(cel.compile_expression(expression), scope)
        except (cel.CelEvalError, cel.CelCompileError) as e:
            errors_seen.append(_expr_error(expression, e))
            continue
        if result is False:
            return []
    if errors_seen:
        return [(errors_seen[0] if len(errors_seen) == 1 else "[" + ", ".join(errors_seen) + "]", "Invalid")] \
            if fail else []
    out: list[tuple[str, str]] = []
    for v in spec.get("validations") or ():
        if not isinstance(v, dict):
            continue
        expression = str(v.get("expression") or "")
        reason = str(v.get("reason") or "Invalid")
        try:
            result = cel.evaluate(cel.compile_expression(expression), scope)
        except (cel.CelEvalError, cel.CelCompileError) as e:
            if fail:
                out.append((_expr_error(expression, e), reason))
            continue
        if result is True:
            continue
        if result is not False:
            if fail:
                out.append((f"expression '{expression}' resulted in error: no such overload: the result is not a bool",
                            reason))
            continue
        out.append((_message(v, expression, scope), reason))
    return out


def _message(v: JsonDict, expression: str, scope: JsonDict) -> str:
    """A failed validation's message: messageExpression's string when it gives one (non-empty,
    one line), else `message`, else upstream's default."""
    if v.get("messageExpression"):
        try:
            text = cel.evaluate(cel.compile_expression(str(v["messageExpression"])), scope)
        except (cel.CelEvalError, cel.CelCompileError):
            text = None
        if isinstance(text, str) and text.strip() and "\n" not in text:
            return text
    if v.get("message"):
        return str(v["message"])
    return f"failed expression: {expression.strip()}"
