"""ValidatingAdmissionPolicy enforced by the real request core (ApiCore over SQLite, fake clock),
as kube-apiserver v1.33's plugin: a binding's validationActions (Deny: upstream's 422 Status and
message; Warn: a Warning; reasons to codes), messages (message, messageExpression, the default),
params through paramRef (name, selector, parameterNotFoundAction), variables, matchConditions,
failurePolicy on an evaluation error, matchConstraints (rules with resourceNames, exclusions,
namespaceSelector, matchPolicy Equivalent) narrowed by the binding's matchResources, and the
expressions checked when the policy is written."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.core import ApiCore
from minik3s.api import errors
from minik3s.api.options import DeleteOptions, WriteOptions
from minik3s.api.resources import ResourceInfo

GROUP = "admissionregistration.k8s.io"
DEPLOYMENT_RULE = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                   "resources": ["deployments"]}


def _info(core: ApiCore, resource: str, group: str = "", version: str = "v1") -> ResourceInfo:
    info = core.registry.get(group, version, resource)
    assert info is not None
    return info


async def _policy(core: ApiCore, name: str, *, rules: list[dict[str, Any]] | None = None, **spec: Any) -> None:
    body = {"metadata": {"name": name}, "spec": {
        "matchConstraints": {"resourceRules": rules or [DEPLOYMENT_RULE], **spec.pop("constraints", {})}, **spec}}
    await core.create(_info(core, "validatingadmissionpolicies", GROUP), None, body)


async def _binding(core: ApiCore, name: str, policy: str, actions: list[str] | None = None, **spec: Any) -> None:
    body = {"metadata": {"name": name}, "spec": {"policyName": policy, "validationActions": actions or ["Deny"],
                                                   **spec}}
    await core.create(_info(core, "validatingadmissionpolicybindings", GROUP), None, body)


def _deployment(name: str, replicas: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    sel = {"app": name}
    return {"metadata": {"name": name, **({"labels": labels} if labels else {})}, "spec": {
        "replicas": replicas, "selector": {"matchLabels": sel}, "template": {
            "metadata": {"labels": sel}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


async def _deploy(core: ApiCore, name: str, replicas: int, ns: str = "default", opts: WriteOptions | None = None,
                  labels: dict[str, str] | None = None) -> dict[str, Any]:
    return await core.create(_info(core, "deployments", "apps"), ns, _deployment(name, replicas, labels), opts)


async def test_deny_answers_upstreams_status(core: ApiCore) -> None:
    await _policy(core, "max-replicas", validations=[{"expression": "object.spec.replicas <= 5"}])
    await _binding(core, "max-replicas-binding", "max-replicas")
    await _deploy(core, "ok", 5)
    with pytest.raises(errors.ApiError) as e:
        await _deploy(core, "big", 7)
    message = ("ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: "
               "failed expression: object.spec.replicas <= 5")
    assert e.value.code == 422 and e.value.reason == "Invalid"
    assert e.value.message == f'deployments.apps "big" is forbidden: {message}'
    assert e.value.details == {"name": "big", "group": "apps", "kind": "deployments", "causes": [{"message": message}]}
    assert core.store.get(_info(core, "deployments", "apps").key("default", "big")) is None
    # an update is held to it as well; a policy without its binding does nothing
    cur = copy.deepcopy(core.get(_info(core, "deployments", "apps"), "default", "ok"))
    cur["spec"]["replicas"] = 9
    with pytest.raises(errors.ApiError):
        await core.update(_info(core, "deployments", "apps"), "default", "ok", cur)
    await _policy(core, "unbound", validations=[{"expression": "false"}])
    await _deploy(core, "fine", 1)


async def test_messages_reasons_and_warnings(core: ApiCore, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="apiserver.webhooks.policy")
    await _policy(core, "named", validations=[
        {"expression": "object.spec.replicas < 10", "message": "too many replicas", "reason": "Forbidden"},
        {"expression": "object.metadata.name.size() < 8",
         "messageExpression": "'name ' + object.metadata.name + ' is too long'"}])
    await _binding(core, "named-deny", "named")
    with pytest.raises(errors.ApiError) as e:
        await _deploy(core, "big", 12)
    assert e.value.code == 403 and e.value.reason == "Forbidden"
    assert e.value.message.endswith("denied request: too many replicas")
    with pytest.raises(errors.ApiError) as e:
        await _deploy(core, "much-too-long", 1)
    assert e.value.code == 422 and e.value.message.endswith("denied request: name much-too-long is too long")
    # Warn: admitted, with a Warning per failed validation
    await _policy(core, "soft", validations=[{"expression": "has(object.metadata.labels)", "message": "label it"}])
    await _binding(core, "soft-warn", "soft", ["Warn", "Audit"])
    opts = WriteOptions()
    await _deploy(core, "bare", 1, opts=opts)
    assert opts.warnings == ["Validation failed for ValidatingAdmissionPolicy 'soft' with binding 'soft-warn': "
                             "label it"]
    # Audit: no audit log in minik3s, an INFO line instead
    assert any("policy audit: policy=soft binding=soft-warn message=label it" in r.getMessage()
               for r in caplog.records)


async def test_params_from_a_config_map(core: ApiCore) -> None:
    cms = _info(core, "configmaps")
    await core.create(cms, "default", {"metadata": {"name": "limits", "labels": {"kind": "limit"}},
                                       "data": {"max": "3"}})
    await _policy(core, "by-param", paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
                  variables=[{"name": "limit", "expression": "int(params.data.max)"}],
                  validations=[{"expression": "object.spec.replicas <= variables.limit",
                                "messageExpression": "'at most ' + string(variables.limit) + ' replicas'"}])
    await _binding(core, "by-name", "by-param", paramRef={"name": "limits", "parameterNotFoundAction": "Deny"})
    await _deploy(core, "small", 3)
    with pytest.raises(errors.ApiError) as e:
        await _deploy(core, "four", 4)
    assert e.value.message.endswith("with binding 'by-name' denied request: at most 3 replicas")
    # in another namespace the param (looked up in the request's namespace) is missing: Deny
    # leaves it to the failurePolicy (Fail: refused)
    await core.create(_info(core, "namespaces"), None, {"metadata": {"name": "team"}})
    with pytest.raises(errors.ApiError) as e:
        await _deploy(core, "elsewhere", 1, ns="team")
    assert e.value.message.endswith("denied request: failed to configure binding: no params found for policy "
                                    "binding with `Deny` parameterNotFoundAction")
    # under failurePolicy Ignore the same binding admits
    await core.delete(_info(core, "validatingadmissionpolicies", GROUP), None, "by-param", DeleteOptions())
    await _policy(core, "by-param", paramKind={"apiVersion": "v1", "kind": "ConfigMap"}, failurePolicy="Ignore",
                  validations=[{"expression": "object.spec.replicas <= int(params.data.max)"}])
    await _deploy(core, "elsewhere", 1, ns="team")
    # a paramRef must say what happens without params
    with pytest.raises(errors.InvalidError) as bad:
        await _binding(core, "vague", "by-param", paramRef={"name": "limits"})
    assert [c["field"] for c in bad.value.causes] == ["spec.paramRef.parameterNotFoundAction"]


async def test_param_selector_and_allow_when_missing(core: ApiCore) -> None:
    cms = _info(core, "configmaps")
    for name, top in (("a", "5"), ("b", "2")):
        await core.create(cms, "default", {"metadata": {"name": name, "labels": {"limit": "yes"}},
                                           "data": {"max": top}})
    await _policy(core, "every-param", paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
                  validations=[{"expression": "object.spec.replicas <= int(params.data.max)"}])
    await _binding(core, "selected", "every-param",
                   paramRef={"selector": {"matchLabels": {"limit": "yes"}}, "parameterNotFoundAction": "Allow"})
    await _deploy(core, "two", 2)
    with pytest.raises(errors.ApiError):
        await _deploy(core, "three", 3)  # passes a (5), fails b (2): every param must pass
    await core.create(_info(core, "namespaces"), None, {"metadata": {"name": "free"}})
    await _deploy(core, "free", 50, ns="free")  # no params there: Allow


async def test_match_conditions_and_failure_policy(core: ApiCore) -> None:
    await _policy(core, "labelled-only",
                  matchConditions=[{"name": "has-team", "expression": "has(object.metadata.labels) && "
                                                                      "'team' in object.metadata.labels"}],
                  validations=[{"expression": "object.metadata.labels.team == 'a'"}])
    await _binding(core, "labelled-only", "labelled-only")
    await _deploy(core, "untagged", 1)  # the condition is false: the policy does not apply
    await _deploy(core, "team-a", 1, labels={"team": "a"})
    with pytest.raises(errors.ApiError):
        await _deploy(core, "team-b", 1, labels={"team": "b"})
    # an evaluation error: refused under Fail (the error as the message), ignored under Ignore
    await _policy(core, "typo", validations=[{"expression": "object.spec.replicaz > 0"}])
    await _binding(core, "typo", "typo")
    with pytest.raises(errors.ApiError) as e:
        await _deploy(core, "x", 1, labels={"team": "a"})
    assert e.value.message.endswith("denied request: expression 'object.spec.replicaz > 0' resulted in error: "
                                    "no such key: replicaz")
    await core.delete(_info(core, "validatingadmissionpolicies", GROUP), None, "typo", DeleteOptions())
    await _policy(core, "typo", failurePolicy="Ignore", validations=[{"expression": "object.spec.replicaz > 0"}])
    await _deploy(core, "y", 1, labels={"team": "a"})


async def test_what_a_policy_matches(core: ApiCore) -> None:
    await core.create(_info(core, "namespaces"), None, {"metadata": {"name": "prod", "labels": {"env": "prod"}}})
    await core.create(_info(core, "namespaces"), None, {"metadata": {"name": "dev", "labels": {"env": "dev"}}})
    named = {**DEPLOYMENT_RULE, "resourceNames": ["guarded"]}
    await _policy(core, "no-deploys", rules=[named], validations=[{"expression": "false", "message": "no"}])
    await _binding(core, "prod-only", "no-deploys",
                   matchResources={"namespaceSelector": {"matchLabels": {"env": "prod"}}})
    await _deploy(core, "guarded", 1, ns="dev")  # the binding narrows to prod namespaces
    await _deploy(core, "other", 1, ns="prod")  # resourceNames: only "guarded"
    with pytest.raises(errors.ApiError) as e:
        await _deploy(core, "guarded", 1, ns="prod")
    assert e.value.message.endswith("denied request: no")
    # excludeResourceRules win over resourceRules
    await _policy(core, "cm-guard", rules=[{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"],
                                            "resources": ["configmaps"]}],
                  constraints={"excludeResourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                         "operations": ["*"], "resources": ["configmaps"],
                                                         "resourceNames": ["allowed"]}]},
                  validations=[{"expression": "false", "message": "no config maps"}])
    await _binding(core, "cm-guard", "cm-guard")
    await core.create(_info(core, "configmaps"), "default", {"metadata": {"name": "allowed"}})
    with pytest.raises(errors.ApiError) as e:
        await core.create(_info(core, "configmaps"), "default", {"metadata": {"name": "refused"}})
    assert e.value.message == ('configmaps "refused" is forbidden: ValidatingAdmissionPolicy \'cm-guard\' with '
                               "binding 'cm-guard' denied request: no config maps")
    # a DELETE: object is null, oldObject the stored config map
    await _policy(core, "keep", rules=[{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"],
                                        "resources": ["configmaps"]}],
                  validations=[{"expression": "object == null && oldObject.metadata.name != 'allowed'",
                                "message": "keep it"}])
    await _binding(core, "keep", "keep")
    with pytest.raises(errors.ApiError) as e:
        await core.delete(_info(core, "configmaps"), "default", "allowed", DeleteOptions())
    assert e.value.message.endswith("denied request: keep it")


async def test_matchpolicy_equivalent_sees_the_rules_version(core: ApiCore) -> None:
    await _policy(core, "hpa-v1", rules=[{"apiGroups": ["autoscaling"], "apiVersions": ["v1"], "operations": ["CREATE"],
                                          "resources": ["horizontalpodautoscalers"]}],
                  validations=[{"expression": "object.apiVersion == 'autoscaling/v1' && object.spec.maxReplicas <= 3",
                                "message": "v1 view, at most 3"}])
    await _binding(core, "hpa-v1", "hpa-v1")
    hpa = {"metadata": {"name": "h"}, "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                                                  "name": "d"}, "minReplicas": 1, "maxReplicas": 5}}
    with pytest.raises(errors.ApiError) as e:
        await core.create(_info(core, "horizontalpodautoscalers", "autoscaling", "v2"), "default", hpa)
    assert e.value.message.endswith("denied request: v1 view, at most 3")


@pytest.mark.parametrize(("spec", "field", "message"), [
    pytest.param({"validations": [{"expression": "object.spec.replicas <= ("}]}, "spec.validations[0].expression",
                 "compilation failed: ERROR: <input>:1:", id="validation-must-compile"),
    pytest.param({"validations": [{"expression": "true", "messageExpression": "'a' +"}]},
                 "spec.validations[0].messageExpression", "compilation failed", id="message-expression-must-compile"),
    pytest.param({"validations": [{"expression": "true", "reason": "Teapot"}]}, "spec.validations[0].reason",
                 'Unsupported value: "Teapot"', id="reason-is-one-of-four"),
    pytest.param({"validations": [{"expression": "true"}], "variables": [{"name": "v", "expression": ")"}]},
                 "spec.variables[0].expression", "compilation failed", id="variable-must-compile"),
])
async def test_expressions_are_checked_when_written(core: ApiCore, spec: dict[str, Any], field: str,
                                                    message: str) -> None:
    with pytest.raises(errors.InvalidError) as e:
        await _policy(core, "bad", **spec)
    assert any(c["field"] == field and message in c["message"] for c in e.value.causes), e.value.causes
