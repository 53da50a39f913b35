"""admissionregistration.k8s.io/v1 strategies (layer L4, apiserver):
pkg/apis/admissionregistration/validation and the v1 defaults.

Webhook configurations: each webhook has a unique, fully qualified name (at least three
DNS segments), exactly one of clientConfig.url / clientConfig.service, sideEffects None or
NoneOnDryRun, admissionReviewVersions including v1 or v1beta1; defaults failurePolicy Fail,
matchPolicy Equivalent, empty namespace/object selectors, timeoutSeconds 10, rule scope "*",
service port 443 and (mutating) reinvocationPolicy Never.
ValidatingAdmissionPolicy: matchConstraints.resourceRules and at least one validation or
audit annotation; each validation has an expression. Binding: policyName and at least one of
Deny/Warn/Audit. Stored only: no webhook is called and no CEL is evaluated.
Data flow: core create/update -> default -> validate / validate_update -> storage.
"""

from __future__ import annotations

from typing import Any

from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    duplicate,
    invalid,
    is_dns1123_subdomain,
    not_supported,
    required,
    validate_label_selector,
)

from .base import Strategy, as_dict, as_list

GROUP = "admissionregistration.k8s.io"
SIDE_EFFECTS = ("None", "NoneOnDryRun")
REVIEW_VERSIONS = ("v1", "v1beta1")
FAILURE_POLICIES = ("Fail", "Ignore")
MATCH_POLICIES = ("Equivalent", "Exact")
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
SCOPES = ("*", "Cluster", "Namespaced")
ACTIONS = ("Audit", "Deny", "Warn")


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
        for f in ("operations", "apiGroups", "apiVersions", "resources"):
            if not as_list(r.get(f)):
                errs.append(required(f"{rp}.{f}"))
        for j, op in enumerate(as_list(r.get("operations"))):
            if op not in OPERATIONS:
                errs.append(not_supported(f"{rp}.operations[{j}]", op, OPERATIONS))
        scope = r.get("scope")
        if scope is not None and scope not in SCOPES:
            errs.append(not_supported(f"{rp}.scope", scope, SCOPES))
    return errs


def _validate_webhook(w: Any, path: str) -> list[JsonDict]:
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
    elif cc.get("url") is not None and not str(cc["url"]).startswith("https://"):
        errs.append(invalid(f"{path}.clientConfig.url", cc["url"], "'https' is the only allowed URL scheme"))
    elif cc.get("service") is not None:
        svc = as_dict(cc["service"])
        for f in ("namespace", "name"):
            if not svc.get(f):
                errs.append(required(f"{path}.clientConfig.service.{f}"))
    se = w.get("sideEffects")
    if not se:
        errs.append(required(f"{path}.sideEffects", "must specify one of " + ", ".join(SIDE_EFFECTS)))
    elif se not in SIDE_EFFECTS:
        errs.append(not_supported(f"{path}.sideEffects", se, SIDE_EFFECTS))
    versions = as_list(w.get("admissionReviewVersions"))
    if not any(v in REVIEW_VERSIONS for v in versions):
        errs.append(required(f"{path}.admissionReviewVersions", "must specify one of " + ", ".join(REVIEW_VERSIONS)))
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


class _WebhookConfigurationStrategy(Strategy):
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
            errs.extend(_validate_webhook(w, f"webhooks[{i}]"))
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


class ValidatingAdmissionPolicyStrategy(Strategy):
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
            if not as_dict(v).get("expression"):
                errs.append(required(f"spec.validations[{i}].expression"))
        fp = spec.get("failurePolicy")
        if fp not in FAILURE_POLICIES:
            errs.append(not_supported("spec.failurePolicy", fp, FAILURE_POLICIES))
        return errs


class ValidatingAdmissionPolicyBindingStrategy(Strategy):
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
        if "Deny" in seen and "Warn" in seen:
            errs.append(invalid("spec.validationActions", actions, "must not contain both Deny and Warn "
                                                                   "(repeating the same validation failure "
                                                                   "information in the API response and headers "
                                                                   "serves no purpose)"))
        return errs
