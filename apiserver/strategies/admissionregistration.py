"""admissionregistration.k8s.io/v1 strategies (layer L4, apiserver):
pkg/apis/admissionregistration/validation and the v1 defaults.

Webhook configurations: each webhook has a unique, fully qualified name (at least three
DNS segments), exactly one of clientConfig.url / clientConfig.service, sideEffects None or
NoneOnDryRun, admissionReviewVersions including v1 or v1beta1; defaults failurePolicy Fail,
matchPolicy Equivalent, empty namespace/object selectors, timeoutSeconds 10, rule scope "*",
service port 443 and (mutating) reinvocationPolicy Never.
ValidatingAdmissionPolicy: matchConstraints.resourceRules and at least one validation or
audit annotation; each validation has an expression. Binding: policyName and at least one of
Deny/Warn/Audit. The webhooks are called by `apiserver.webhooks`; ValidatingAdmissionPolicies are stored only
(no CEL is evaluated). Rules follow upstream's validateRuleWithOperations (a `*` stands alone
among operations, groups, versions; `*/*`, `*`, `*/x` exclude overlapping resources), client
URLs ValidateWebhookURL (https, a host, no user info, query or fragment), service references
ValidateWebhookService (name, namespace, port 1-65535, a path starting with "/").
Data flow: core create/update -> default -> validate / validate_update -> storage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from apiserver import cel
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    duplicate,
    invalid,
    is_dns1123_subdomain,
    not_supported,
    required,
    too_many,
    validate_label_selector,
)

from .base import Strategy, as_dict, as_list
from .rest import RegistryOps

GROUP = "admissionregistration.k8s.io"
SIDE_EFFECTS = ("None", "NoneOnDryRun")
REVIEW_VERSIONS = ("v1", "v1beta1")
FAILURE_POLICIES = ("Fail", "Ignore")
MATCH_POLICIES = ("Equivalent", "Exact")
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
SCOPES = ("*", "Cluster", "Namespaced")
PARAMETER_NOT_FOUND_ACTIONS = ("Allow", "Deny")
VALIDATION_REASONS = ("Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge")
ACTIONS = ("Audit", "Deny", "Warn")
REINVOCATION_POLICIES = ("IfNeeded", "Never")


def _wildcard_alone(values: list[Any], path: str, what: str) -> list[JsonDict]:
    if len(values) > 1 and "*" in values:
        return [invalid(path, values, f"if '*' is present, must not specify other {what}")]
    return []


def _validate_resources(resources: list[Any], path: str) -> list[JsonDict]:
    """validateResources: `*/*` alone; `*` excludes other main resources; `*/x` excludes `y/x`;
    `r/*` excludes `r/x`."""
    errs: list[JsonDict] = []
    if not resources:
        return [required(path)]
    subs_of_all: set[str] = set()
    mains_all_subs: set[str] = set()
    has_all = "*/*" in resources
    has_main_all = "*" in resources
    for r in resources:
        res, _, sub = str(r).partition("/")
        if res == "*" and sub:
            subs_of_all.add(sub)
        if sub == "*":
            mains_all_subs.add(res)
    for i, r in enumerate(resources):
        r = str(r)
        if not r:
            errs.append(required(f"{path}[{i}]"))
            continue
        if has_all and r != "*/*":
            errs.append(invalid(f"{path}", resources, "if '*/*' is present, must not specify other resources"))
            return errs
        res, _, sub = r.partition("/")
        if has_main_all and res != "*" and not sub:
            errs.append(invalid(f"{path}", resources,
                                "if '*' is present, must not specify other resources without subresources"))
            return errs
        if sub and res != "*" and sub in subs_of_all:
            errs.append(invalid(f"{path}[{i}]", r, f"if '*/{sub}' is present, must not specify {r}"))
        if sub and sub != "*" and res in mains_all_subs:
            errs.append(invalid(f"{path}[{i}]", r, f"if '{res}/*' is present, must not specify {r}"))
    return errs


def _validate_url(url: str, path: str) -> list[JsonDict]:
    """ValidateWebhookURL with https required."""
    try:
        u = urlsplit(url)
    except ValueError as e:
        return [invalid(path, url, f"must be a valid URL: {e}")]
    errs: list[JsonDict] = []
    if u.scheme != "https":
        errs.append(invalid(path, url, "'https' is the only allowed URL scheme"))
    if not u.hostname:
        errs.append(invalid(path, url, "host must be specified"))
    if u.username is not None or u.password is not None:
        errs.append(invalid(path, url, "user information is not permitted in the URL"))
    if u.fragment or url.endswith("#"):
        errs.append(invalid(path, url, "fragments are not permitted in the URL"))
    if u.query or "?" in url:
        errs.append(invalid(path, url, "query parameters are not permitted in the URL"))
    return errs


def _validate_service(svc: JsonDict, path: str) -> list[JsonDict]:
    """ValidateWebhookService."""
    errs: list[JsonDict] = []
    for f in ("name", "namespace"):
        if not svc.get(f):
            errs.append(required(f"{path}.{f}", f"service {f} is required"))
    port = svc.get("port")
    if port is not None and (not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535):
        errs.append(invalid(f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    p = svc.get("path")
    if p is None or str(p) in ("", "/"):
        return errs
    p = str(p)
    if not p.startswith("/"):
        errs.append(invalid(f"{path}.path", p, "must start with a '/'"))
    check = p[1:]
    if check.endswith("/"):
        check = check[:-1]
    for j, seg in enumerate(check.split("/")):
        if not seg:
            errs.append(invalid(f"{path}.path", p, f"segment[{j}] may not be empty"))
            continue
        errs.extend(invalid(f"{path}.path", p, f"segment[{j}]: {m}") for m in is_dns1123_subdomain(seg))
    return errs


def _default_rules(rules: Any) -> None:
    for r in as_list(rules):
        if isinstance(r, dict) and not r.get("scope"):
            r["scope"] = "*"


def _default_webhook(w: JsonDict, *, mutating: bool) -> None:
    w.setdefault("failurePolicy", "Fail")
    w.setdefault("matchPolicy", "Equivalent")
    w.setdefault("namespaceSelector", {})
    w.setdefault("objectSelector", {})
    w.setdefault("timeoutSeconds", 10)
    if mutating:
        w.setdefault("reinvocationPolicy", "Never")
    _default_rules(w.get("rules"))
    svc = as_dict(w.get("clientConfig")).get("service")
    if isinstance(svc, dict):
        svc.setdefault("port", 443)


def _validate_rules(rules: Any, path: str) -> list[JsonDict]:
    errs: list[JsonDict] = []
    for i, r in enumerate(as_list(rules)):
        rp = f"{path}[{i}]"
        r = as_dict(r)
        for f in ("operations", "apiGroups", "apiVersions"):
            if not as_list(r.get(f)):
                errs.append(required(f"{rp}.{f}"))
        errs.extend(_wildcard_alone(as_list(r.get("operations")), f"{rp}.operations", "operations"))
        errs.extend(_wildcard_alone(as_list(r.get("apiGroups")), f"{rp}.apiGroups", "API groups"))
        errs.extend(_wildcard_alone(as_list(r.get("apiVersions")), f"{rp}.apiVersions", "API versions"))
        for j, v in enumerate(as_list(r.get("apiVersions"))):
            if not v:
                errs.append(required(f"{rp}.apiVersions[{j}]"))
        errs.extend(_validate_resources(as_list(r.get("resources")), f"{rp}.resources"))
        for j, op in enumerate(as_list(r.get("operations"))):
            if op not in OPERATIONS:
                errs.append(not_supported(f"{rp}.operations[{j}]", op, OPERATIONS))
        scope = r.get("scope")
        if scope is not None and scope not in SCOPES:
            errs.append(not_supported(f"{rp}.scope", scope, SCOPES))
    return errs


def _validate_webhook(w: Any, path: str, *, mutating: bool) -> list[JsonDict]:
    w = as_dict(w)
    errs: list[JsonDict] = []
    name = str(w.get("name") or "")
    if not name:
        errs.append(required(f"{path}.name"))
    else:
        msgs = is_dns1123_subdomain(name)
        errs.extend(invalid(f"{path}.name", name, m) for m in msgs)
        if not msgs and len(name.split(".")) < 3:
            errs.append(invalid(f"{path}.name", name, "should be a domain with at least three segments "
                                                      "separated by dots"))
    cc = as_dict(w.get("clientConfig"))
    if (cc.get("url") is None) == (cc.get("service") is None):
        errs.append(required(f"{path}.clientConfig", "exactly one of url or service is required"))
    elif cc.get("url") is not None:
        errs.extend(_validate_url(str(cc["url"]), f"{path}.clientConfig.url"))
    elif cc.get("service") is not None:
        errs.extend(_validate_service(as_dict(cc["service"]), f"{path}.clientConfig.service"))
    se = w.get("sideEffects")
    if not se:
        errs.append(required(f"{path}.sideEffects", "must specify one of " + ", ".join(SIDE_EFFECTS)))
    elif se not in SIDE_EFFECTS:
        errs.append(not_supported(f"{path}.sideEffects", se, SIDE_EFFECTS))
    versions = as_list(w.get("admissionReviewVersions"))
    vpath = f"{path}.admissionReviewVersions"
    if not versions:
        errs.append(required(vpath, "must specify one of " + ", ".join(REVIEW_VERSIONS)))
    else:
        seen: set[str] = set()
        for j, v in enumerate(versions):
            if v in seen:
                errs.append(invalid(f"{vpath}[{j}]", v, "duplicate version"))
            seen.add(str(v))
        if not any(v in REVIEW_VERSIONS for v in versions):
            errs.append(invalid(vpath, versions, "must include at least one of " + ", ".join(REVIEW_VERSIONS)))
    if mutating and w.get("reinvocationPolicy") not in REINVOCATION_POLICIES:
        errs.append(not_supported(f"{path}.reinvocationPolicy", w.get("reinvocationPolicy"), REINVOCATION_POLICIES))
    mc_names: set[str] = set()
    for j, mc in enumerate(as_list(w.get("matchConditions"))):
        mc = as_dict(mc)
        mpath = f"{path}.matchConditions[{j}]"
        mname = str(mc.get("name") or "")
        if not mname:
            errs.append(required(f"{mpath}.name"))
        elif mname in mc_names:
            errs.append(duplicate(f"{mpath}.name", mname))
        mc_names.add(mname)
        if not mc.get("expression"):
            errs.append(required(f"{mpath}.expression"))
        else:
            try:
                cel.compile_expression(str(mc["expression"]))
            except cel.CelCompileError as e:
                errs.append(invalid(f"{mpath}.expression", mc["expression"], f"compilation failed: {e.message}"))
    if len(as_list(w.get("matchConditions"))) > 64:
        errs.append(too_many(f"{path}.matchConditions", len(as_list(w.get("matchConditions"))), 64))
    if w.get("failurePolicy") not in FAILURE_POLICIES:
        errs.append(not_supported(f"{path}.failurePolicy", w.get("failurePolicy"), FAILURE_POLICIES))
    if w.get("matchPolicy") not in MATCH_POLICIES:
        errs.append(not_supported(f"{path}.matchPolicy", w.get("matchPolicy"), MATCH_POLICIES))
    t = w.get("timeoutSeconds")
    if not isinstance(t, int) or isinstance(t, bool) or not 1 <= t <= 30:
        errs.append(invalid(f"{path}.timeoutSeconds", t, "the timeout value must be between 1 and 30 seconds"))
    for sel in ("namespaceSelector", "objectSelector"):
        if w.get(sel) is not None:
            errs.extend(validate_label_selector(w[sel], f"{path}.{sel}"))
    errs.extend(_validate_rules(w.get("rules"), f"{path}.rules"))
    return errs


@dataclass(slots=True)
class WebhookConfigurationGeneration:
    """Committed writes of admission configurations so far (webhook configurations, policies and
    their bindings; per registry, `RegistryOps.hook_state`): the dispatcher (apiserver.webhooks)
    re-reads them only when it moved."""

    value: int = 0


class _CountsAdmissionWrites(Strategy):
    """A kind whose writes change what admission does: counted, so the dispatcher re-reads."""

    async def after_create(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> JsonDict:
        ops.hook_state(WebhookConfigurationGeneration).value += 1
        return obj

    async def after_update(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> None:
        ops.hook_state(WebhookConfigurationGeneration).value += 1

    async def after_delete(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> None:
        ops.hook_state(WebhookConfigurationGeneration).value += 1


class _WebhookConfigurationStrategy(_CountsAdmissionWrites):
    group = GROUP
    mutating = False

    def _default(self, obj: JsonDict) -> None:
        for w in as_list(obj.get("webhooks")):
            if isinstance(w, dict):
                _default_webhook(w, mutating=self.mutating)

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        names: set[str] = set()
        for i, w in enumerate(as_list(obj.get("webhooks"))):
            errs.extend(_validate_webhook(w, f"webhooks[{i}]", mutating=self.mutating))
            name = str(as_dict(w).get("name") or "")
            if name and name in names:
                errs.append(duplicate(f"webhooks[{i}].name", name))
            names.add(name)
        return errs


class ValidatingWebhookConfigurationStrategy(_WebhookConfigurationStrategy):
    kind = "ValidatingWebhookConfiguration"


class MutatingWebhookConfigurationStrategy(_WebhookConfigurationStrategy):
    kind = "MutatingWebhookConfiguration"
    mutating = True


def _check_expression(errs: list[JsonDict], path: str, expression: Any) -> None:
    """upstream's CEL compilation check of a stored expression."""
    if not expression:
        errs.append(required(path))
        return
    try:
        cel.compile_expression(str(expression))
    except cel.CelCompileError as e:
        errs.append(invalid(path, expression, f"compilation failed: {e.message}"))


class ValidatingAdmissionPolicyStrategy(_CountsAdmissionWrites):
    kind = "ValidatingAdmissionPolicy"
    group = GROUP
    has_status = True
    tracks_generation = True

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec.setdefault("failurePolicy", "Fail")
        mc = spec.get("matchConstraints")
        if isinstance(mc, dict):
            mc.setdefault("matchPolicy", "Equivalent")
            mc.setdefault("namespaceSelector", {})
            mc.setdefault("objectSelector", {})
            _default_rules(mc.get("resourceRules"))
            _default_rules(mc.get("excludeResourceRules"))

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = as_dict(obj.get("spec"))
        errs: list[JsonDict] = []
        mc = spec.get("matchConstraints")
        if mc is None:
            errs.append(required("spec.matchConstraints"))
        else:
            rules = as_dict(mc).get("resourceRules")
            if not as_list(rules):
                errs.append(required("spec.matchConstraints.resourceRules"))
            errs.extend(_validate_rules(rules, "spec.matchConstraints.resourceRules"))
        validations = as_list(spec.get("validations"))
        if not validations and not as_list(spec.get("auditAnnotations")):
            errs.append(required("spec.validations", "validations or auditAnnotations must contain at least one item"))
        for i, v in enumerate(validations):
            v = as_dict(v)
            _check_expression(errs, f"spec.validations[{i}].expression", v.get("expression"))
            if v.get("messageExpression"):
                _check_expression(errs, f"spec.validations[{i}].messageExpression", v["messageExpression"])
            if v.get("reason") is not None and v["reason"] not in VALIDATION_REASONS:
                errs.append(not_supported(f"spec.validations[{i}].reason", v["reason"], VALIDATION_REASONS))
        for i, var in enumerate(as_list(spec.get("variables"))):
            var = as_dict(var)
            if not var.get("name"):
                errs.append(required(f"spec.variables[{i}].name"))
            _check_expression(errs, f"spec.variables[{i}].expression", var.get("expression"))
        for i, mc in enumerate(as_list(spec.get("matchConditions"))):
            mc = as_dict(mc)
            if not mc.get("name"):
                errs.append(required(f"spec.matchConditions[{i}].name"))
            _check_expression(errs, f"spec.matchConditions[{i}].expression", mc.get("expression"))
        fp = spec.get("failurePolicy")
        if fp not in FAILURE_POLICIES:
            errs.append(not_supported("spec.failurePolicy", fp, FAILURE_POLICIES))
        return errs


class ValidatingAdmissionPolicyBindingStrategy(_CountsAdmissionWrites):
    kind = "ValidatingAdmissionPolicyBinding"
    group = GROUP
    tracks_generation = True

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = as_dict(obj.get("spec"))
        errs: list[JsonDict] = []
        if not spec.get("policyName"):
            errs.append(required("spec.policyName"))
        actions = as_list(spec.get("validationActions"))
        if not actions:
            errs.append(required("spec.validationActions", "at least one validation action is required"))
        seen: set[str] = set()
        for i, a in enumerate(actions):
            if a not in ACTIONS:
                errs.append(not_supported(f"spec.validationActions[{i}]", a, ACTIONS))
            elif a in seen:
                errs.append(duplicate(f"spec.validationActions[{i}]", a))
            seen.add(str(a))
        ref = spec.get("paramRef")
        if isinstance(ref, dict):
            action = ref.get("parameterNotFoundAction")
            if action is None:
                errs.append(required("spec.paramRef.parameterNotFoundAction"))
            elif action not in PARAMETER_NOT_FOUND_ACTIONS:
                errs.append(not_supported("spec.paramRef.parameterNotFoundAction", action,
                                          PARAMETER_NOT_FOUND_ACTIONS))
        if "Deny" in seen and "Warn" in seen:
            errs.append(invalid("spec.validationActions", actions, "must not contain both Deny and Warn "
                                                                   "(repeating the same validation failure "
                                                                   "information in the API response and headers "
                                                                   "serves no purpose)"))
        return errs
