"""Webhook configuration defaults and validation (apiserver.strategies.admissionregistration)
through the real request core: upstream's defaults, field paths and messages for bad input."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.core import ApiCore
from minik3s.api import errors

GROUP = "admissionregistration.k8s.io"
RULE = {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}


def _hook(**over: Any) -> dict[str, Any]:
    h: dict[str, Any] = {"name": "v.example.com", "clientConfig": {"url": "https://127.0.0.1:9443/v"},
                         "sideEffects": "None", "admissionReviewVersions": ["v1"], "rules": [dict(RULE)]}
    for k, v in over.items():
        if v is None:
            h.pop(k, None)
        else:
            h[k] = v
    return h


async def _create(core: ApiCore, resource: str, *hooks: dict[str, Any]) -> dict[str, Any]:
    info = core.registry.get(GROUP, "v1", resource)
    assert info is not None
    return await core.create(info, None, {"metadata": {"name": "cfg"}, "webhooks": list(hooks)})


async def test_defaults(core: ApiCore) -> None:
    svc = {"service": {"namespace": "default", "name": "hook"}}
    out = await _create(core, "mutatingwebhookconfigurations", _hook(clientConfig=svc))
    [w] = out["webhooks"]
    assert (w["failurePolicy"], w["matchPolicy"], w["timeoutSeconds"], w["reinvocationPolicy"]) == \
        ("Fail", "Equivalent", 10, "Never")
    assert w["namespaceSelector"] == {} and w["objectSelector"] == {}
    assert w["rules"][0]["scope"] == "*" and w["clientConfig"]["service"]["port"] == 443


@pytest.mark.parametrize(("hook", "field", "message"), [
    pytest.param(_hook(sideEffects=None), "webhooks[0].sideEffects",
                 "Required value: must specify one of None, NoneOnDryRun", id="side-effects-required"),
    pytest.param(_hook(sideEffects="Some"), "webhooks[0].sideEffects",
                 'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"', id="side-effects-v1-only"),
    pytest.param(_hook(admissionReviewVersions=None), "webhooks[0].admissionReviewVersions",
                 "Required value: must specify one of v1, v1beta1", id="review-versions-required"),
    pytest.param(_hook(admissionReviewVersions=["v2"]), "webhooks[0].admissionReviewVersions",
                 'Invalid value: []string{"v2"}: must include at least one of v1, v1beta1', id="review-versions-known"),
    pytest.param(_hook(timeoutSeconds=31), "webhooks[0].timeoutSeconds",
                 "Invalid value: 31: the timeout value must be between 1 and 30 seconds", id="timeout-range"),
    pytest.param(_hook(name="short.name"), "webhooks[0].name",
                 'Invalid value: "short.name": should be a domain with at least three segments separated by dots',
                 id="name-three-segments"),
    pytest.param(_hook(clientConfig={"url": "http://127.0.0.1/v"}), "webhooks[0].clientConfig.url",
                 "'https' is the only allowed URL scheme", id="url-https"),
    pytest.param(_hook(clientConfig={"url": "https://127.0.0.1/v?x=1"}), "webhooks[0].clientConfig.url",
                 "query parameters are not permitted in the URL", id="url-no-query"),
    pytest.param(_hook(clientConfig={"url": "https://u:p@127.0.0.1/v"}), "webhooks[0].clientConfig.url",
                 "user information is not permitted in the URL", id="url-no-user"),
    pytest.param(_hook(clientConfig={}), "webhooks[0].clientConfig",
                 "Required value: exactly one of url or service is required", id="client-config-required"),
    pytest.param(_hook(clientConfig={"service": {"namespace": "d", "name": "s", "port": 0}}),
                 "webhooks[0].clientConfig.service.port", "port is not valid", id="service-port-range"),
    pytest.param(_hook(clientConfig={"service": {"namespace": "d", "name": "s", "path": "v"}}),
                 "webhooks[0].clientConfig.service.path", "must start with a '/'", id="service-path-slash"),
    pytest.param(_hook(clientConfig={"service": {"namespace": "d", "name": "s", "path": "/Validate_Pods"}}),
                 "webhooks[0].clientConfig.service.path", "segment[0]: a lowercase RFC 1123 subdomain",
                 id="service-path-segments-are-subdomains"),
    pytest.param(_hook(failurePolicy="Maybe"), "webhooks[0].failurePolicy",
                 'Unsupported value: "Maybe": supported values: "Fail", "Ignore"', id="failure-policy"),
    pytest.param(_hook(rules=[{**RULE, "operations": ["*", "CREATE"]}]), "webhooks[0].rules[0].operations",
                 "if '*' is present, must not specify other operations", id="wildcard-operation-alone"),
    pytest.param(_hook(rules=[{**RULE, "resources": ["*/*", "pods"]}]), "webhooks[0].rules[0].resources",
                 "if '*/*' is present, must not specify other resources", id="star-star-alone"),
    pytest.param(_hook(rules=[{**RULE, "resources": ["*", "pods"]}]), "webhooks[0].rules[0].resources",
                 "if '*' is present, must not specify other resources without subresources", id="star-alone"),
    pytest.param(_hook(rules=[{**RULE, "resources": []}]), "webhooks[0].rules[0].resources",
                 "Required value", id="resources-required"),
    pytest.param(_hook(rules=[{**RULE, "scope": "Global"}]), "webhooks[0].rules[0].scope",
                 'Unsupported value: "Global"', id="scope"),
    pytest.param(_hook(matchConditions=[{"name": "a"}]), "webhooks[0].matchConditions[0].expression",
                 "Required value", id="match-condition-expression-required"),
    pytest.param(_hook(matchConditions=[{"name": "a", "expression": "object.metadata.name == ("}]),
                 "webhooks[0].matchConditions[0].expression",
                 'Invalid value: "object.metadata.name == (": compilation failed: ERROR: <input>:1:',
                 id="match-condition-expression-must-compile"),
])
async def test_validation(core: ApiCore, hook: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(errors.InvalidError) as e:
        await _create(core, "validatingwebhookconfigurations", hook)
    messages = [c["message"] for c in e.value.causes if c["field"] == field]
    assert any(message in m for m in messages), e.value.causes
    assert e.value.code == 422 and e.value.details["group"] == GROUP


async def test_mutating_reinvocation_policy(core: ApiCore) -> None:
    with pytest.raises(errors.InvalidError) as e:
        await _create(core, "mutatingwebhookconfigurations", _hook(reinvocationPolicy="Always"))
    assert [c["field"] for c in e.value.causes] == ["webhooks[0].reinvocationPolicy"]


async def test_duplicate_webhook_names(core: ApiCore) -> None:
    with pytest.raises(errors.InvalidError) as e:
        await _create(core, "validatingwebhookconfigurations", _hook(), _hook())
    assert [c["field"] for c in e.value.causes] == ["webhooks[1].name"]
