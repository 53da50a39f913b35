"""Which webhooks a request reaches (layer L4, apiserver.webhooks): upstream's rules.Matcher,
namespace and object matchers (admission/plugin/webhook/predicates) and matchPolicy.

Data flow: `dispatch` asks `matched_resource(hook, attrs, equivalents)` for each webhook; the
answer is None (not called) or the resource version the webhook is called with (the request's
own, or with matchPolicy Equivalent another served version of the same resource, to which the
object is converted).

Worked example: rule {operations: [UPDATE], apiGroups: [""], apiVersions: ["v1"],
resources: ["pods/status"], scope: Namespaced} matches a PUT of pods/p/status in namespace a,
not a PUT of pods/p ("pods" is not "pods/status"), and not any request on a cluster-scoped
resource. `*` matches every resource but no subresource; `*/*` matches both; `*/status` every
status subresource.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from apiserver.webhooks.attributes import Attributes
from minik3s.api.resources import ResourceInfo
from minik3s.api.selectors import LabelSelector
from minik3s.api.types import JsonDict

# upstream never sends requests on the admission configuration resources to webhooks, so a
# broken webhook cannot lock its own configuration (IsExemptAdmissionConfigurationResource)
EXEMPT_GROUP = "admissionregistration.k8s.io"
EXEMPT_RESOURCES = frozenset({
    "validatingwebhookconfigurations", "mutatingwebhookconfigurations", "validatingadmissionpolicies",
    "validatingadmissionpolicybindings", "mutatingadmissionpolicies", "mutatingadmissionpolicybindings",
})


def exempt(info: ResourceInfo) -> bool:
    return info.group == EXEMPT_GROUP and info.resource in EXEMPT_RESOURCES


def _split(resource: str) -> tuple[str, str]:
    main, _, sub = resource.partition("/")
    return main, sub


def rule_matches(rule: Mapping[str, Any], attrs: Attributes, group: str, version: str, resource: str) -> bool:
    """One RuleWithOperations against the request, as resource group/version/resource."""
    ops = rule.get("operations") or ()
    if "*" not in ops and attrs.operation not in ops:
        return False
    groups = rule.get("apiGroups") or ()
    if "*" not in groups and group not in groups:
        return False
    versions = rule.get("apiVersions") or ()
    if "*" not in versions and version not in versions:
        return False
    scope = rule.get("scope") or "*"
    if scope == "Namespaced" and (attrs.is_namespace or not attrs.namespace):
        return False
    if scope == "Cluster" and not (attrs.is_namespace or not attrs.namespace):
        return False
    for r in rule.get("resources") or ():
        main, sub = _split(str(r))
        if (main == "*" or main == resource) and (sub == "*" or sub == attrs.subresource):
            return True
    return False


def matched_resource(rules: Sequence[Mapping[str, Any]], match_policy: str, attrs: Attributes,
                     equivalents: Sequence[ResourceInfo]) -> ResourceInfo | None:
    """The resource version to call the webhook with, or None. Exact: only the request's own
    group/version/resource; Equivalent: else the first other served version of it that a rule
    names (upstream also maps across groups, e.g. extensions -> apps, which minik3s does not
    serve)."""
    info = attrs.info
    if any(rule_matches(r, attrs, info.group, info.version, info.resource) for r in rules):
        return info
    if match_policy != "Equivalent":
        return None
    for eq in equivalents:
        if eq.version == info.version and eq.group == info.group:
            continue
        if any(rule_matches(r, attrs, eq.group, eq.version, eq.resource) for r in rules):
            return eq
    return None


def _labels(obj: JsonDict | None) -> Mapping[str, str]:
    if not obj:
        return {}
    return ((obj.get("metadata") or {}).get("labels")) or {}


def object_selector_matches(selector: LabelSelector, attrs: Attributes) -> bool:
    """The new or the old object's labels match (a missing object never matches)."""
    if selector.empty:
        return True
    return any(o is not None and selector.matches(_labels(o)) for o in (attrs.obj, attrs.old))


def namespace_labels(attrs: Attributes, namespace: JsonDict | None) -> Mapping[str, str] | None:
    """The labels a namespaceSelector is matched against: the namespace object being created
    or updated itself, else the stored namespace (None when it does not exist)."""
    if attrs.is_namespace and not attrs.subresource and attrs.operation in ("CREATE", "UPDATE"):
        return _labels(attrs.obj)
    if namespace is None:
        return None
    return _labels(namespace)
