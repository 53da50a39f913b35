"""Rule matching (apiserver.webhooks.rules) on the served resource table: operations, groups,
versions, resources with subresources and wildcards, scopes (a namespace is cluster-scoped and
its requests carry its own name as namespace), selectors against old and new objects, and
matchPolicy Equivalent across the versions the server serves."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.webhooks.attributes import Attributes
from apiserver.webhooks.rules import (
    exempt,
    matched_resource,
    namespace_labels,
    object_selector_matches,
    rule_matches,
)
from minik3s.api.resources import ResourceInfo, ResourceRegistry
from minik3s.api.selectors import label_selector_from_dict

REG = ResourceRegistry()


def _info(resource: str, group: str = "", version: str = "v1") -> ResourceInfo:
    info = REG.get(group, version, resource)
    assert info is not None
    return info


def _attrs(resource: str, op: str = "CREATE", *, group: str = "", version: str = "v1", namespace: str = "default",
           sub: str = "", obj: dict[str, Any] | None = None, old: dict[str, Any] | None = None) -> Attributes:
    return Attributes(_info(resource, group, version), op, "x", namespace, obj, old, {}, subresource=sub)


def _rule(resources: list[str], ops: list[str] | None = None, groups: list[str] | None = None,
          versions: list[str] | None = None, scope: str = "*") -> dict[str, Any]:
    return {"operations": ops or ["*"], "apiGroups": groups if groups is not None else [""],
            "apiVersions": versions or ["v1"], "resources": resources, "scope": scope}


@pytest.mark.parametrize(("rule", "attrs", "want"), [
    pytest.param(_rule(["pods"]), _attrs("pods"), True, id="exact-resource"),
    pytest.param(_rule(["pods"], ops=["UPDATE"]), _attrs("pods"), False, id="other-operation"),
    pytest.param(_rule(["pods"], ops=["CREATE", "DELETE"]), _attrs("pods", "DELETE"), True, id="listed-operation"),
    pytest.param(_rule(["pods"], groups=["apps"]), _attrs("pods"), False, id="other-group"),
    pytest.param(_rule(["deployments"], groups=["*"]), _attrs("deployments", group="apps"), True, id="any-group"),
    pytest.param(_rule(["pods"], versions=["v2"]), _attrs("pods"), False, id="other-version"),
    pytest.param(_rule(["pods"]), _attrs("pods", "UPDATE", sub="status"), False, id="main-rule-skips-subresource"),
    pytest.param(_rule(["pods/status"]), _attrs("pods", "UPDATE", sub="status"), True, id="subresource-rule"),
    pytest.param(_rule(["pods/status"]), _attrs("pods", "UPDATE"), False, id="subresource-rule-skips-main"),
    pytest.param(_rule(["*"]), _attrs("configmaps"), True, id="star-matches-main"),
    pytest.param(_rule(["*"]), _attrs("pods", "UPDATE", sub="status"), False, id="star-skips-subresources"),
    pytest.param(_rule(["*/*"]), _attrs("pods", "UPDATE", sub="status"), True, id="star-star-matches-subresources"),
    pytest.param(_rule(["*/status"]), _attrs("deployments", "UPDATE", group="apps", sub="status"), False,
                 id="star-status-but-group-differs"),
    pytest.param(_rule(["*/status"], groups=["apps"]), _attrs("deployments", "UPDATE", group="apps", sub="status"),
                 True, id="star-status"),
    pytest.param(_rule(["pods/*"]), _attrs("pods", "CREATE", sub="eviction"), True, id="resource-star"),
    pytest.param(_rule(["*"], scope="Namespaced"), _attrs("configmaps"), True, id="namespaced-scope"),
    pytest.param(_rule(["*"], scope="Namespaced"), _attrs("nodes", namespace=""), False,
                 id="namespaced-scope-skips-cluster"),
    pytest.param(_rule(["*"], scope="Namespaced"), _attrs("namespaces", namespace="n1"), False,
                 id="namespace-object-is-not-namespaced"),
    pytest.param(_rule(["*"], scope="Cluster"), _attrs("namespaces", namespace="n1"), True,
                 id="namespace-object-is-cluster-scoped"),
    pytest.param(_rule(["*"], scope="Cluster"), _attrs("configmaps"), False, id="cluster-scope-skips-namespaced"),
])
def test_rule_matches(rule: dict[str, Any], attrs: Attributes, want: bool) -> None:
    info = attrs.info
    assert rule_matches(rule, attrs, info.group, info.version, info.resource) is want


def _equivalents(info: ResourceInfo) -> list[ResourceInfo]:
    return [r for r in REG.all() if r.group == info.group and r.resource == info.resource and r.version != info.version]


@pytest.mark.parametrize(("policy", "want_version"), [
    pytest.param("Equivalent", "v1", id="equivalent-matches-other-served-version"),
    pytest.param("Exact", None, id="exact-does-not"),
])
def test_match_policy(policy: str, want_version: str | None) -> None:
    attrs = _attrs("horizontalpodautoscalers", group="autoscaling", version="v2")
    rules = [_rule(["horizontalpodautoscalers"], groups=["autoscaling"], versions=["v1"])]
    got = matched_resource(rules, policy, attrs, _equivalents(attrs.info))
    assert (got.version if got else None) == want_version


def test_own_version_preferred_over_equivalent() -> None:
    attrs = _attrs("horizontalpodautoscalers", group="autoscaling", version="v2")
    rules = [_rule(["horizontalpodautoscalers"], groups=["autoscaling"], versions=["*"])]
    got = matched_resource(rules, "Equivalent", attrs, _equivalents(attrs.info))
    assert got is attrs.info


@pytest.mark.parametrize(("obj", "old", "want"), [
    pytest.param({"metadata": {"labels": {"a": "1"}}}, None, True, id="new-object-matches"),
    pytest.param({"metadata": {}}, {"metadata": {"labels": {"a": "1"}}}, True, id="old-object-matches"),
    pytest.param({"metadata": {"labels": {"a": "2"}}}, None, False, id="neither-matches"),
    pytest.param(None, None, False, id="no-object"),
])
def test_object_selector(obj: dict[str, Any] | None, old: dict[str, Any] | None, want: bool) -> None:
    sel = label_selector_from_dict({"matchLabels": {"a": "1"}})
    assert object_selector_matches(sel, _attrs("pods", obj=obj, old=old)) is want
    assert object_selector_matches(label_selector_from_dict({}), _attrs("pods", obj=obj, old=old))


def test_namespace_labels_for_namespace_requests_come_from_the_object() -> None:
    ns_obj = {"metadata": {"name": "n1", "labels": {"new": "1"}}}
    stored = {"metadata": {"name": "n1", "labels": {"old": "1"}}}
    assert namespace_labels(_attrs("namespaces", "CREATE", namespace="n1", obj=ns_obj), None) == {"new": "1"}
    assert namespace_labels(_attrs("namespaces", "DELETE", namespace="n1", old=stored), stored) == {"old": "1"}
    assert namespace_labels(_attrs("pods"), None) is None


def test_admission_configuration_resources_are_exempt() -> None:
    group = "admissionregistration.k8s.io"
    assert exempt(_info("validatingwebhookconfigurations", group))
    assert exempt(_info("mutatingwebhookconfigurations", group))
    assert not exempt(_info("pods"))
