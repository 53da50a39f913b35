"""API Priority and Fairness on the real in-process API: the bootstrap configuration the server
keeps (created, mandatory specs restored, deleted suggested objects re-created, operator-owned
ones left alone), FlowSchemas' Dangling condition, the classification of requests by user and
request (upstream's bootstrap semantics), and FlowSchema / PriorityLevelConfiguration validation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.apf import Classifier
from apiserver.rbac import Attributes
from minik3s.api import errors
from minik3s.api.apf_bootstrap import SUGGESTED_FLOW_SCHEMAS
from minik3s.api.resources import FLOWSCHEMAS, PRIORITYLEVELS
from minik3s.api.user import UserInfo
from minik3s.controllers.apf import CONSUMER, PRODUCER, ApfConfig


async def until(cond: Any, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not cond():
        assert loop.time() < deadline, "condition not met"
        await asyncio.sleep(0.005)


@pytest.fixture
async def apf(real_api: Any, clock: Any) -> Any:
    cfg = ApfConfig(real_api, real_api.factory, clock=clock)
    await cfg.ensure()
    real_api.spawn(cfg.run_consumer(), "apf-consumer")
    return cfg


def _names(real_api: Any, info: Any) -> set[str]:
    return {o["metadata"]["name"] for o in real_api.objects(info).values()}


async def test_the_bootstrap_configuration(real_api: Any, apf: Any) -> None:
    assert _names(real_api, PRIORITYLEVELS) == {"exempt", "catch-all", "system", "node-high", "leader-election",
                                                "workload-high", "workload-low", "global-default"}
    assert len(_names(real_api, FLOWSCHEMAS)) == 13
    fs = real_api.obj(FLOWSCHEMAS, "system-leader-election")
    assert fs["metadata"]["annotations"] == {"apf.kubernetes.io/autoupdate-spec": "true"}
    assert fs["metadata"]["generation"] == 1
    assert [m["manager"] for m in fs["metadata"]["managedFields"]] == [PRODUCER]
    assert fs["spec"] == {**SUGGESTED_FLOW_SCHEMAS["system-leader-election"]}
    await until(lambda: (real_api.obj(FLOWSCHEMAS, "catch-all").get("status") or {}).get("conditions"))
    [cond] = real_api.obj(FLOWSCHEMAS, "catch-all")["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Dangling", "False", "Found")
    assert cond["message"] == ('This FlowSchema references the PriorityLevelConfiguration object named "catch-all" '
                               'and it exists')
    managers = {m["manager"] for m in real_api.obj(FLOWSCHEMAS, "catch-all")["metadata"]["managedFields"]}
    assert managers == {PRODUCER, CONSUMER}


async def test_the_ensurer_restores_and_respects_operators(real_api: Any, apf: Any) -> None:
    # a deleted suggested object comes back; a mandatory spec cannot even be changed
    await real_api.delete(FLOWSCHEMAS, "global-default")
    with pytest.raises(errors.InvalidError) as e:
        await real_api.patch(PRIORITYLEVELS, "catch-all", {"spec": {"limited": {"nominalConcurrencyShares": 50}}})
    assert "spec of 'catch-all' must equal the fixed value" in e.value.message
    # an operator's edit of a suggested object with autoupdate off stays
    await real_api.patch(PRIORITYLEVELS, "workload-low", {
        "metadata": {"annotations": {"apf.kubernetes.io/autoupdate-spec": "false"}},
        "spec": {"limited": {"nominalConcurrencyShares": 7}}})
    # ... and one without the annotation, past generation 1, too (the annotation becomes "false")
    await real_api.patch(PRIORITYLEVELS, "system", {
        "metadata": {"annotations": None}, "spec": {"limited": {"nominalConcurrencyShares": 8}}})
    # one still marked for auto-update is put back
    await real_api.patch(PRIORITYLEVELS, "node-high", {"spec": {"limited": {"nominalConcurrencyShares": 9}}})
    await apf.ensure()
    assert real_api.obj(FLOWSCHEMAS, "global-default") is not None
    assert real_api.obj(PRIORITYLEVELS, "workload-low")["spec"]["limited"]["nominalConcurrencyShares"] == 7
    system = real_api.obj(PRIORITYLEVELS, "system")
    assert system["spec"]["limited"]["nominalConcurrencyShares"] == 8
    assert system["metadata"]["annotations"] == {"apf.kubernetes.io/autoupdate-spec": "false"}
    assert real_api.obj(PRIORITYLEVELS, "node-high")["spec"]["limited"]["nominalConcurrencyShares"] == 40
    # an obsolete object the ensurer owns goes; the operator's own stays
    for name, auto in (("old-bootstrap", "true"), ("mine", None)):
        body = {"metadata": {"name": name}, "spec": {"type": "Limited", "limited": {
            "limitResponse": {"type": "Reject"}}}}
        if auto:
            body["metadata"]["annotations"] = {"apf.kubernetes.io/autoupdate-spec": auto}
        await real_api.create(PRIORITYLEVELS, body)
    await apf.ensure()
    assert real_api.obj(PRIORITYLEVELS, "old-bootstrap") is None
    assert real_api.obj(PRIORITYLEVELS, "mine") is not None


async def test_a_schema_without_its_level_is_dangling_and_skipped(real_api: Any, apf: Any) -> None:
    await real_api.create(FLOWSCHEMAS, {"metadata": {"name": "mine"}, "spec": {
        "matchingPrecedence": 50, "priorityLevelConfiguration": {"name": "missing"},
        "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}}],
                   "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}})
    await until(lambda: (real_api.obj(FLOWSCHEMAS, "mine").get("status") or {}).get("conditions"))
    [cond] = real_api.obj(FLOWSCHEMAS, "mine")["status"]["conditions"]
    assert (cond["status"], cond["reason"]) == ("True", "NotFound")
    assert cond["message"].endswith('named "missing" but there is no such object')
    classifier = Classifier(real_api.core.store, real_api.core.registry)
    user = UserInfo("jane", groups=("system:authenticated",))
    fs_uid, _ = classifier.classify(Attributes(user=user, verb="get", resource_request=False, path="/version"))
    assert fs_uid == real_api.obj(FLOWSCHEMAS, "global-default")["metadata"]["uid"]
    classifier.close()


@pytest.mark.parametrize("user, attrs, schema", [
    (UserInfo("system:admin", groups=("system:masters", "system:authenticated")),
     dict(verb="list", resource_request=True, resource="pods", namespace="default"), "exempt"),
    (UserInfo("system:anonymous", groups=("system:unauthenticated",)),
     dict(verb="get", resource_request=False, path="/healthz"), "probes"),
    (UserInfo("system:anonymous", groups=("system:unauthenticated",)),
     dict(verb="get", resource_request=False, path="/version"), "global-default"),
    (UserInfo("system:kube-scheduler", groups=("system:authenticated",)),
     dict(verb="update", resource_request=True, api_group="coordination.k8s.io", resource="leases",
          namespace="kube-system"), "system-leader-election"),
    (UserInfo("system:kube-scheduler", groups=("system:authenticated",)),
     dict(verb="create", resource_request=True, resource="pods", subresource="binding", namespace="default"),
     "kube-scheduler"),
    (UserInfo("system:node:n1", groups=("system:nodes", "system:authenticated")),
     dict(verb="patch", resource_request=True, resource="nodes", subresource="status", name="n1"),
     "system-node-high"),
    (UserInfo("system:node:n1", groups=("system:nodes", "system:authenticated")),
     dict(verb="update", resource_request=True, resource="pods", subresource="status", namespace="default"),
     "system-nodes"),
    (UserInfo("system:serviceaccount:kube-system:coredns",
              groups=("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated")),
     dict(verb="watch", resource_request=True, resource="services"), "kube-system-service-accounts"),
    (UserInfo("system:serviceaccount:default:app",
              groups=("system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated")),
     dict(verb="get", resource_request=True, resource="configmaps", namespace="default"), "service-accounts"),
    (UserInfo("jane", groups=("devs", "system:authenticated")),
     dict(verb="delete", resource_request=True, api_group="apps", resource="deployments", namespace="default"),
     "global-default"),
])
async def test_classification(real_api: Any, apf: Any, user: UserInfo, attrs: dict, schema: str) -> None:
    classifier = Classifier(real_api.core.store, real_api.core.registry)
    try:
        got = classifier.classify(Attributes(user=user, **attrs))
        fs = real_api.obj(FLOWSCHEMAS, schema)
        level = real_api.obj(PRIORITYLEVELS, fs["spec"]["priorityLevelConfiguration"]["name"])
        assert got == (fs["metadata"]["uid"], level["metadata"]["uid"])
    finally:
        classifier.close()


@pytest.mark.parametrize("kind, body, message", [
    ("fs", {"matchingPrecedence": 1, "priorityLevelConfiguration": {"name": "x"}},
     "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"),
    ("fs", {"matchingPrecedence": 10001, "priorityLevelConfiguration": {"name": "x"}},
     "spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"),
    ("fs", {"priorityLevelConfiguration": {"name": "x"}, "distinguisherMethod": {"type": "ByColour"}},
     'spec.distinguisherMethod.type: Unsupported value: "ByColour": supported values: "ByNamespace", "ByUser"'),
    ("fs", {"priorityLevelConfiguration": {"name": "x"}, "rules": [{"subjects": [
        {"kind": "User", "user": {"name": "a"}}]}]},
     "spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty"),
    ("fs", {"priorityLevelConfiguration": {"name": "x"}, "rules": [{"subjects": [
        {"kind": "User", "user": {"name": "a"}}], "nonResourceRules": [{"verbs": ["*", "get"],
                                                                       "nonResourceURLs": ["/x"]}]}]},
     "spec.rules[0].nonResourceRules[0].verbs: Invalid value: []string{\"*\", \"get\"}: if '*' is present, must "
     "not specify other verbs"),
    ("pl", {"type": "Exempt"}, "spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is "
                               "'exempt'"),
    ("pl", {"type": "Limited", "limited": {"lendablePercent": 101, "limitResponse": {"type": "Reject"}}},
     "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive"),
    ("pl", {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {
        "queues": 4, "handSize": 7}}}},
     "spec.limited.limitResponse.queuing.handSize: Invalid value: 7: should not be greater than queues (4)"),
])
async def test_validation(core: Any, kind: str, body: dict, message: str) -> None:
    info = core.registry.get("flowcontrol.apiserver.k8s.io", "v1",
                             "flowschemas" if kind == "fs" else "prioritylevelconfigurations")
    with pytest.raises(errors.InvalidError) as e:
        await core.create(info, None, {"metadata": {"name": "x"}, "spec": body})
    assert message in e.value.message


async def test_defaults(core: Any) -> None:
    fs_info = core.registry.get("flowcontrol.apiserver.k8s.io", "v1", "flowschemas")
    pl_info = core.registry.get("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations")
    fs = await core.create(fs_info, None, {"metadata": {"name": "a"}, "spec": {"priorityLevelConfiguration": {
        "name": "x"}}})
    assert fs["spec"]["matchingPrecedence"] == 1000
    pl = await core.create(pl_info, None, {"metadata": {"name": "b"}, "spec": {"type": "Limited", "limited": {
        "limitResponse": {"type": "Queue"}}}})
    assert pl["spec"]["limited"] == {"nominalConcurrencyShares": 30, "lendablePercent": 0, "limitResponse": {
        "type": "Queue", "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}}}


async def test_a_new_schema_takes_effect_for_a_request_classified_before(real_api: Any, apf: Any) -> None:
    classifier = Classifier(real_api.core.store, real_api.core.registry)
    user = UserInfo("jane", groups=("devs", "system:authenticated"))
    attrs = Attributes(user=user, verb="list", resource_request=True, resource="pods", namespace="default")
    try:
        assert classifier.classify(attrs)[0] == real_api.obj(FLOWSCHEMAS, "global-default")["metadata"]["uid"]
        await real_api.create(FLOWSCHEMAS, {"metadata": {"name": "devs"}, "spec": {
            "matchingPrecedence": 500, "priorityLevelConfiguration": {"name": "workload-low"},
            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "devs"}}],
                       "resourceRules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"],
                                          "namespaces": ["*"]}]}]}})
        fs_uid, pl_uid = classifier.classify(attrs)  # the remembered answer is not reused
        assert fs_uid == real_api.obj(FLOWSCHEMAS, "devs")["metadata"]["uid"]
        assert pl_uid == real_api.obj(PRIORITYLEVELS, "workload-low")["metadata"]["uid"]
    finally:
        classifier.close()


async def test_status_conditions_must_have_unique_types(core: Any) -> None:
    info = core.registry.get("flowcontrol.apiserver.k8s.io", "v1", "flowschemas")
    await core.create(info, None, {"metadata": {"name": "a"}, "spec": {"priorityLevelConfiguration": {"name": "x"}}})
    cond = {"type": "Dangling", "status": "True", "reason": "NotFound", "message": "m",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(info, None, "a", "merge", {"status": {"conditions": [cond, cond]}}, subresource="status")
    assert 'status.conditions[1].type: Duplicate value: "Dangling"' in e.value.message
    got = await core.patch(info, None, "a", "merge", {"status": {"conditions": [cond]}}, subresource="status")
    assert got["metadata"]["generation"] == 1  # a status write leaves the generation
