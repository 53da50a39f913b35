"""Deployment and ReplicaSet strategies: defaults, validation, selector immutability, generation."""

import copy

import pytest

from apiserver.strategies import strategy_for

D = strategy_for("apps", "Deployment")
RS = strategy_for("apps", "ReplicaSet")


def deployment(**spec):
    base = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
    }
    base.update(spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1", "namespace": "default"},
            "spec": base}


def errs(strategy, obj):
    strategy.default(obj)
    return [f"{e['field']}: {e['message']}" for e in strategy.validate(obj)]


def test_deployment_defaults_golden():
    d = deployment()
    D.default(d)
    D.prepare_for_create(d)
    spec = d["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["progressDeadlineSeconds"] == 600
    tspec = spec["template"]["spec"]
    assert tspec["restartPolicy"] == "Always"
    assert tspec["containers"][0]["imagePullPolicy"] == "Always"
    assert d["status"] == {}
    assert d["metadata"]["generation"] == 1


def test_recreate_strategy_gets_no_rolling_update_defaults():
    d = deployment(strategy={"type": "Recreate"})
    D.default(d)
    assert d["spec"]["strategy"] == {"type": "Recreate"}


@pytest.mark.parametrize(
    "spec, expected",
    [
        pytest.param({"replicas": -1}, ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
                     id="negative-replicas"),
        pytest.param({"selector": {"matchLabels": {"app": "other"}}},
                     ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
                      "`selector` does not match template `labels`"], id="selector-does-not-match-template"),
        pytest.param({"selector": None}, ["spec.selector: Required value"], id="missing-selector"),
        pytest.param({"selector": {}},
                     ["spec.selector: Invalid value: &LabelSelector{MatchLabels:map[string]string{},"
                      "MatchExpressions:[]LabelSelectorRequirement{},}: empty selector is invalid for deployment"],
                     id="empty-selector"),
        pytest.param({"strategy": {"type": "Blue"}},
                     ['spec.strategy.type: Unsupported value: "Blue": supported values: "Recreate", "RollingUpdate"'],
                     id="bad-strategy-type"),
        pytest.param({"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}},
                     ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"],
                     id="recreate-with-rolling-update"),
        pytest.param({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}},
                     ["spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"],
                     id="both-surge-and-unavailable-zero"),
        pytest.param({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "110%"}}},
                     ['spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "110%": must not be greater than 100%'],
                     id="max-unavailable-over-100-percent"),
        pytest.param({"minReadySeconds": 700},
                     ["spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"],
                     id="progress-deadline-not-above-min-ready"),
        pytest.param({"revisionHistoryLimit": -2},
                     ["spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0"],
                     id="negative-revision-history"),
    ],
)
def test_deployment_validation(spec, expected):
    assert errs(D, deployment(**spec)) == expected


def test_template_restart_policy_must_be_always():
    d = deployment()
    d["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert errs(D, d) == ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']


def test_template_pod_spec_errors_carry_template_path():
    d = deployment()
    d["spec"]["template"]["spec"]["containers"] = []
    assert errs(D, d) == ["spec.template.spec.containers: Required value"]


@pytest.mark.parametrize("strategy", [D, RS], ids=["deployment", "replicaset"])
def test_templates_carry_no_ephemeral_containers(strategy):
    """ValidatePodTemplateSpec, shared with PodTemplates: ephemeral containers exist only in pods."""
    d = deployment()
    d["kind"] = strategy.kind
    d["spec"]["template"]["spec"]["ephemeralContainers"] = [{"name": "dbg", "image": "busybox"}]
    assert errs(strategy, d) == ["spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not "
                                 "allowed in pod template"]


def stored(obj, strategy):
    strategy.default(obj)
    strategy.prepare_for_create(obj)
    obj["metadata"].update(uid="u", creationTimestamp="t", resourceVersion="1")
    return obj


def test_selector_is_immutable():
    old = stored(deployment(), D)
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
    new["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    D.prepare_for_update(new, old)
    assert [e["field"] + ": " + e["message"].split(": ")[-1] for e in D.validate_update(new, old)] == [
        "spec.selector: field is immutable"
    ]


def test_generation_bumps_on_spec_change_not_on_metadata_or_status():
    old = stored(deployment(), D)
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"x": "y"}
    new["status"] = {"replicas": 5}
    D.prepare_for_update(new, old)
    assert new["metadata"]["generation"] == 1
    assert new["status"] == {}
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 3
    D.prepare_for_update(new, old)
    assert new["metadata"]["generation"] == 2


def test_status_update_keeps_spec_and_labels():
    old = stored(deployment(), D)
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 9
    new["metadata"]["labels"] = {"sneaky": "x"}
    new["status"] = {"replicas": 1, "readyReplicas": 1, "observedGeneration": 1}
    D.prepare_for_status_update(new, old)
    assert new["spec"] == old["spec"]
    assert "labels" not in new["metadata"]
    assert new["status"] == {"replicas": 1, "readyReplicas": 1, "observedGeneration": 1}
    assert D.validate_status_update(new, old) == []
    new["status"]["readyReplicas"] = -1
    assert [e["field"] for e in D.validate_status_update(new, old)] == ["status.readyReplicas"]


def test_replicaset_defaults_and_status_reset():
    rs = deployment()
    rs["kind"] = "ReplicaSet"
    rs["status"] = {"replicas": 7}
    RS.default(rs)
    RS.prepare_for_create(rs)
    assert rs["spec"]["replicas"] == 1
    assert "strategy" not in rs["spec"]
    assert rs["status"] == {"replicas": 0}
    assert RS.validate(rs) == []


def test_deployment_annotation_change_bumps_generation():
    old = stored(deployment(), D)
    new = copy.deepcopy(old)
    new["metadata"]["annotations"] = {"note": "x"}
    D.prepare_for_update(new, old)
    assert new["metadata"]["generation"] == 2


def test_missing_template_reports_like_the_zero_template():
    d = deployment()
    del d["spec"]["template"]
    assert errs(D, d) == [
        "spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template `labels`",
        "spec.template.spec.containers: Required value",
    ]


@pytest.mark.parametrize(("kind", "given", "expected"), [
    pytest.param("StatefulSet", None, {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}, id="sts-default"),
    pytest.param("StatefulSet", {"type": "RollingUpdate", "rollingUpdate": {"partition": None}},
                 {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}, id="sts-null-partition"),
    pytest.param("StatefulSet", {"type": "RollingUpdate", "rollingUpdate": {"partition": 3}},
                 {"type": "RollingUpdate", "rollingUpdate": {"partition": 3}}, id="sts-kept"),
    pytest.param("StatefulSet", {"type": "OnDelete"}, {"type": "OnDelete"}, id="sts-on-delete"),
    pytest.param("DaemonSet", None,
                 {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}, id="ds-default"),
    pytest.param("DaemonSet", {"rollingUpdate": {"maxSurge": "25%"}},
                 {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}, id="ds-partial"),
    pytest.param("DaemonSet", {"type": "OnDelete"}, {"type": "OnDelete"}, id="ds-on-delete"),
])
def test_update_strategy_defaults(kind, given, expected):
    spec = {"selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}
    if given is not None:
        spec["updateStrategy"] = copy.deepcopy(given)
    obj = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "x", "namespace": "default"}, "spec": spec}
    strategy_for("apps", kind).default(obj)
    assert obj["spec"]["updateStrategy"] == expected
