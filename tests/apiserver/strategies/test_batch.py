"""Job/CronJob defaulting, selector generation and validation (pkg/apis/batch, registry/batch)."""

from __future__ import annotations

import copy

import pytest

from apiserver.strategies import strategy_for

JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "namespace": "default", "uid": "u-1"},
       "spec": {"template": {"spec": {"restartPolicy": "Never",
                                      "containers": [{"name": "c", "image": "perl"}]}}}}


def prepared(job: dict) -> dict:
    s = strategy_for("batch", "Job")
    obj = copy.deepcopy(job)
    s.default(obj)
    s.prepare_for_create(obj)
    return obj


@pytest.mark.parametrize(("spec", "expect"), [
    pytest.param({}, {"parallelism": 1, "completions": 1}, id="both-unset-default-to-1"),
    pytest.param({"parallelism": 3}, {"parallelism": 3, "completions": None}, id="work-queue-job-keeps-nil-completions"),
    pytest.param({"completions": 5}, {"parallelism": 1, "completions": 5}, id="completions-only"),
])
def test_job_defaults(spec, expect):
    job = copy.deepcopy(JOB)
    job["spec"].update(spec)
    out = prepared(job)["spec"]
    assert out.get("parallelism") == expect["parallelism"]
    assert out.get("completions") == expect["completions"]
    assert (out["backoffLimit"], out["completionMode"], out["suspend"], out["podReplacementPolicy"]) == (
        6, "NonIndexed", False, "TerminatingOrFailed")


def test_selector_and_template_labels_are_generated_from_the_uid():
    out = prepared(JOB)
    assert out["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}}
    assert out["spec"]["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": "u-1", "controller-uid": "u-1",
        "batch.kubernetes.io/job-name": "pi", "job-name": "pi"}
    assert out["status"] == {} and out["metadata"]["generation"] == 1
    assert strategy_for("batch", "Job").validate(out) == []


@pytest.mark.parametrize(("mutate", "field", "message"), [
    # validateJobSpec: an unset (defaulted Always) or Always restartPolicy is "Required", another an
    # unsupported value
    pytest.param(lambda j: j["spec"]["template"]["spec"].pop("restartPolicy"), "spec.template.spec.restartPolicy",
                 'Required value: valid values: "OnFailure", "Never"', id="restart-unset-required"),
    pytest.param(lambda j: j["spec"]["template"]["spec"].update(restartPolicy="Always"),
                 "spec.template.spec.restartPolicy", 'Required value: valid values: "OnFailure", "Never"',
                 id="restart-always-required"),
    pytest.param(lambda j: j["spec"]["template"]["spec"].update(restartPolicy="Sometimes"),
                 "spec.template.spec.restartPolicy", 'Unsupported value: "Sometimes": supported values: '
                 '"OnFailure", "Never"', id="restart-unknown-unsupported"),
    pytest.param(lambda j: j["spec"].update(podFailurePolicy={"rules": []}) or
                 j["spec"]["template"]["spec"].update(restartPolicy="OnFailure"),
                 "spec.template.spec.restartPolicy",
                 'Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified',
                 id="pod-failure-policy-needs-never"),
    pytest.param(lambda j: j["spec"].update(backoffLimit=-1), "spec.backoffLimit", None, id="negative-backoff"),
    pytest.param(lambda j: j["spec"].update(selector={"matchLabels": {"a": "b"}}), "spec.selector",
                 None, id="manual-selector-without-manualSelector"),
    pytest.param(lambda j: j["spec"].update(manualSelector=True, selector={"matchLabels": {"a": "b"}}),
                 "spec.template.metadata.labels", "Invalid value: map[string]string(nil): "
                 "`selector` does not match template `labels`", id="manual-selector-must-match-the-template"),
    pytest.param(lambda j: j["spec"]["template"].setdefault("metadata", {}).update(labels={"bad key!": "x"}),
                 "spec.template.metadata.labels", None, id="template-labels-validated"),
    pytest.param(lambda j: j["spec"].update(completionMode="Indexed", completions=None, parallelism=2),
                 "spec.completions", "Required value: when completion mode is Indexed", id="indexed-needs-completions"),
    pytest.param(lambda j: j["spec"].update(backoffLimitPerIndex=1), "spec.backoffLimitPerIndex",
                 "Invalid value: 1: requires indexed completion mode", id="per-index-limit-needs-indexed"),
    pytest.param(lambda j: j["spec"].update(completionMode="Indexed", completions=4, maxFailedIndexes=1),
                 "spec.backoffLimitPerIndex", "Required value: when maxFailedIndexes is specified",
                 id="max-failed-indexes-needs-a-per-index-limit"),
    pytest.param(lambda j: j["spec"].update(podReplacementPolicy="Sometimes"), "spec.podReplacementPolicy",
                 'Unsupported value: "Sometimes": supported values: "Failed", "TerminatingOrFailed"',
                 id="pod-replacement-policy"),
    pytest.param(lambda j: j["metadata"].update(name="x" * 62) or j["spec"].update(completionMode="Indexed",
                                                                                  completions=10),
                 "metadata.name", f"Invalid value: \"{'x' * 62}\": will not able to create pod with invalid DNS "
                 f"label: {'x' * 62}-9", id="indexed-pod-hostname-too-long"),
])
def test_job_validation(mutate, field, message):
    job = copy.deepcopy(JOB)
    mutate(job)
    causes = strategy_for("batch", "Job").validate(prepared(job))
    assert any(c["field"] == field and (message is None or c["message"] == message) for c in causes), causes


def _with_policy(*rules):
    def mutate(j):
        j["spec"]["podFailurePolicy"] = {"rules": list(rules)}
    return mutate


@pytest.mark.parametrize(("mutate", "field", "message"), [
    pytest.param(_with_policy({"onExitCodes": {"operator": "In", "values": [1]}}), "spec.podFailurePolicy.rules[0].action",
                 'Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]', id="action-required"),
    pytest.param(_with_policy({"action": "Retry", "onExitCodes": {"operator": "In", "values": [1]}}),
                 "spec.podFailurePolicy.rules[0].action",
                 'Unsupported value: "Retry": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
                 id="action-unknown"),
    pytest.param(_with_policy({"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}}),
                 "spec.podFailurePolicy.rules[0].action",
                 'Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set', id="fail-index-needs-limit"),
    pytest.param(_with_policy({"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0, 3]}}),
                 "spec.podFailurePolicy.rules[0].onExitCodes.values[0]",
                 "Invalid value: 0: must not be 0 for the In operator", id="in-zero"),
    pytest.param(_with_policy({"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [5, 3]}}),
                 "spec.podFailurePolicy.rules[0].onExitCodes.values",
                 "Invalid value: []int32{5, 3}: must be ordered", id="values-ordered"),
    pytest.param(_with_policy({"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [3, 3]}}),
                 "spec.podFailurePolicy.rules[0].onExitCodes.values[1]", "Duplicate value: 3", id="values-unique"),
    pytest.param(_with_policy({"action": "FailJob", "onExitCodes": {"operator": "In", "values": []}}),
                 "spec.podFailurePolicy.rules[0].onExitCodes.values",
                 "Invalid value: []int32{}: at least one value is required", id="values-required"),
    pytest.param(_with_policy({"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1],
                                                                    "containerName": "nope"}}),
                 "spec.podFailurePolicy.rules[0].onExitCodes.containerName",
                 'Invalid value: "nope": must be one of the container or initContainer names in the pod template',
                 id="container-name"),
    pytest.param(_with_policy({"action": "Ignore"}), "spec.podFailurePolicy.rules[0]",
                 "Invalid value: specifying one of OnExitCodes and OnPodConditions is required", id="neither"),
    pytest.param(_with_policy({"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]},
                               "onPodConditions": [{"type": "DisruptionTarget"}]}),
                 "spec.podFailurePolicy.rules[0]",
                 "Invalid value: specifying both OnExitCodes and OnPodConditions is not supported", id="both"),
    pytest.param(_with_policy({"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "Maybe"}]}),
                 "spec.podFailurePolicy.rules[0].onPodConditions[0].status",
                 'Unsupported value: "Maybe": supported values: "False", "True", "Unknown"', id="condition-status"),
])
def test_pod_failure_policy_validation(mutate, field, message):
    job = copy.deepcopy(JOB)
    mutate(job)
    causes = strategy_for("batch", "Job").validate(prepared(job))
    assert any(c["field"] == field and c["message"] == message for c in causes), causes


def test_pod_failure_policy_defaults_and_a_valid_one_passes():
    job = copy.deepcopy(JOB)
    _with_policy({"action": "FailJob", "onExitCodes": {"containerName": "c", "operator": "In", "values": [42]}},
                 {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]})(job)
    out = prepared(job)
    assert out["spec"]["podFailurePolicy"]["rules"][1]["onPodConditions"] == [{"type": "DisruptionTarget",
                                                                               "status": "True"}]
    assert out["spec"]["podReplacementPolicy"] == "Failed"
    assert strategy_for("batch", "Job").validate(out) == []


def _indexed(**spec):
    def mutate(j):
        j["spec"].update(completionMode="Indexed", completions=4, parallelism=4, **spec)
    return mutate


@pytest.mark.parametrize(("mutate", "field", "message"), [
    pytest.param(lambda j: j["spec"].update(successPolicy={"rules": [{"succeededCount": 1}]}),
                 "spec.successPolicy", None, id="needs-indexed"),
    pytest.param(_indexed(successPolicy={"rules": []}), "spec.successPolicy.rules",
                 "Required value: at least one rules must be specified when the successPolicy is specified",
                 id="rules-required"),
    pytest.param(_indexed(successPolicy={"rules": [{}]}), "spec.successPolicy.rules[0]",
                 "Required value: at least one of succeededCount or succeededIndexes must be specified", id="empty-rule"),
    pytest.param(_indexed(successPolicy={"rules": [{"succeededIndexes": "0-5"}]}),
                 "spec.successPolicy.rules[0].succeededIndexes",
                 'Invalid value: "0-5": error parsing succeededIndexes: too large index: "5"', id="index-too-large"),
    pytest.param(_indexed(successPolicy={"rules": [{"succeededIndexes": "2,1"}]}),
                 "spec.successPolicy.rules[0].succeededIndexes",
                 'Invalid value: "2,1": error parsing succeededIndexes: non-increasing order, previous: 2, current: 1',
                 id="indexes-ordered"),
    pytest.param(_indexed(successPolicy={"rules": [{"succeededIndexes": "a"}]}),
                 "spec.successPolicy.rules[0].succeededIndexes",
                 'Invalid value: "a": error parsing succeededIndexes: cannot convert string to integer for index: "a"',
                 id="indexes-numbers"),
    pytest.param(_indexed(successPolicy={"rules": [{"succeededCount": 5}]}),
                 "spec.successPolicy.rules[0].succeededCount",
                 "Invalid value: 5: must be less than or equal to 4 (the number of specified completions)",
                 id="count-within-completions"),
    pytest.param(_indexed(successPolicy={"rules": [{"succeededIndexes": "0,1", "succeededCount": 3}]}),
                 "spec.successPolicy.rules[0].succeededCount",
                 "Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified "
                 "succeededIndexes field)", id="count-within-the-named-indexes"),
])
def test_success_policy_validation(mutate, field, message):
    job = copy.deepcopy(JOB)
    mutate(job)
    causes = strategy_for("batch", "Job").validate(prepared(job))
    assert any(c["field"] == field and (message is None or c["message"] == message) for c in causes), causes


def test_job_updates_keep_what_upstream_keeps():
    s = strategy_for("batch", "Job")
    old = prepared(JOB)
    old["status"] = {"startTime": "2026-01-01T00:00:00Z"}

    def update(mutate):
        new = copy.deepcopy(old)
        mutate(new)
        return [(c["field"], c["message"].rsplit(": ", 1)[-1]) for c in s.validate_update(new, old)]

    assert update(lambda j: j["spec"]["template"]["spec"]["containers"][0].update(image="perl:2")) == [
        ("spec.template", "field is immutable")]
    assert update(lambda j: j["spec"].update(completions=3)) == [("spec.completions", "field is immutable")]
    assert update(lambda j: j["spec"].update(parallelism=5, backoffLimit=2)) == []
    # a suspended Job that never started may move its pods: node selector, tolerations, labels
    fresh = copy.deepcopy(old)
    fresh["status"] = {}
    fresh["spec"]["suspend"] = True
    moved = copy.deepcopy(fresh)
    moved["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "b"}
    moved["spec"]["template"]["metadata"]["labels"]["team"] = "x"
    assert s.validate_update(moved, fresh) == []
    moved["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:2"
    assert [c["field"] for c in s.validate_update(moved, fresh)] == ["spec.template"]
    # elastic Indexed Jobs: completions in tandem with parallelism
    idx = prepared({**JOB, "spec": {**JOB["spec"], "completionMode": "Indexed", "completions": 4, "parallelism": 4}})
    grown = copy.deepcopy(idx)
    grown["spec"].update(completions=6, parallelism=6)
    assert s.validate_update(grown, idx) == []
    grown["spec"]["parallelism"] = 5
    assert [c["message"] for c in s.validate_update(grown, idx)] == [
        "Invalid value: 6: can only be modified in tandem with spec.parallelism"]


def test_cronjob_defaults():
    cj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c", "namespace": "default"},
          "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": copy.deepcopy(JOB["spec"])}}}
    s = strategy_for("batch", "CronJob")
    s.default(cj)
    assert (cj["spec"]["concurrencyPolicy"], cj["spec"]["suspend"], cj["spec"]["successfulJobsHistoryLimit"],
            cj["spec"]["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    assert s.validate(cj) == []
