"""Pod strategy: defaults, validation (upstream messages and paths), update and status rules."""

import copy

import pytest

from apiserver.strategies import strategy_for
from apiserver.strategies.pod import POD_UPDATE_FORBIDDEN
from apiserver.strategies.podspec import qos_class
from minik3s.api.helpers.pods import default_pull_policy

S = strategy_for("", "Pod")
QUANTITY_MSG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def pod(name="p", **spec):
    spec.setdefault("containers", [{"name": "c", "image": "nginx"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def created(p):
    S.default(p)
    S.prepare_for_create(p)
    return p


def errors(p):
    S.default(p)
    return [f"{e['field']}: {e['message']}" for e in S.validate(p)]


def test_defaults_golden():
    p = created(pod(containers=[{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
                                 "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]))
    assert p["spec"] == {
        "containers": [{
            "name": "c", "image": "nginx",
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}},
            "imagePullPolicy": "Always",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
        "enableServiceLinks": True,
    }
    assert p["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}
    assert p["metadata"]["generation"] == 1


def test_defaults_keep_unknown_fields_and_user_values():
    p = pod(restartPolicy="Never", futureField={"x": 1})
    p["spec"]["containers"][0]["futureContainerField"] = 1
    created(p)
    assert p["spec"]["restartPolicy"] == "Never"
    assert p["spec"]["futureField"] == {"x": 1}
    assert p["spec"]["containers"][0]["futureContainerField"] == 1


def test_create_resets_user_status():
    p = pod()
    p["status"] = {"phase": "Running", "podIP": "1.2.3.4"}
    created(p)
    assert p["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


@pytest.mark.parametrize(
    "image, policy",
    [
        pytest.param("nginx", "Always", id="no-tag-pulls-always"),
        pytest.param("nginx:latest", "Always", id="latest-pulls-always"),
        pytest.param("nginx:1.27", "IfNotPresent", id="pinned-tag-if-not-present"),
        pytest.param("registry:5000/app", "Always", id="registry-port-is-not-a-tag"),
        pytest.param("nginx@sha256:abc", "IfNotPresent", id="digest-if-not-present"),
    ],
)
def test_image_pull_policy_default(image, policy):
    assert default_pull_policy(image) == policy


@pytest.mark.parametrize(
    "containers, qos",
    [
        pytest.param([{"name": "c"}], "BestEffort", id="no-resources-best-effort"),
        pytest.param([{"name": "c", "resources": {"requests": {"cpu": "1"}}}], "Burstable", id="requests-only-burstable"),
        pytest.param([{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                                                  "limits": {"cpu": "1", "memory": "1Gi"}}}], "Guaranteed",
                     id="equal-requests-limits-guaranteed"),
        pytest.param([{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"},
                                                  "limits": {"cpu": "1", "memory": "1Gi"}}}], "Burstable",
                     id="requests-below-limits-burstable"),
        pytest.param([{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
                      {"name": "b"}], "Burstable", id="one-container-without-limits-burstable"),
        pytest.param([{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "1"}}}], "BestEffort",
                     id="extended-resources-do-not-count"),
    ],
)
def test_qos_class(containers, qos):
    p = created(pod(containers=[dict(c, image="i") for c in containers]))
    assert p["status"]["qosClass"] == qos
    assert qos_class(p["spec"]) == qos


@pytest.mark.parametrize(
    "spec, expected",
    [
        pytest.param({"containers": []}, ["spec.containers: Required value"], id="no-containers"),
        pytest.param({"containers": [{"image": "nginx"}]}, ["spec.containers[0].name: Required value"],
                     id="container-without-name"),
        pytest.param({"containers": [{"name": "c"}]}, ["spec.containers[0].image: Required value"],
                     id="container-without-image"),
        pytest.param({"containers": [{"name": "c", "image": "i"}, {"name": "c", "image": "i"}]},
                     ['spec.containers[1].name: Duplicate value: "c"'], id="duplicate-container-names"),
        pytest.param({"restartPolicy": "Sometimes"},
                     ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
                     id="bad-restart-policy"),
        pytest.param({"dnsPolicy": "Weird"},
                     ['spec.dnsPolicy: Unsupported value: "Weird": supported values: "ClusterFirstWithHostNet", '
                      '"ClusterFirst", "Default", "None"'], id="bad-dns-policy"),
        pytest.param({"containers": [{"name": "c", "image": "i", "imagePullPolicy": "Sometimes"}]},
                     ['spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: '
                      '"Always", "IfNotPresent", "Never"'], id="bad-pull-policy"),
        pytest.param({"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 70000}]}]},
                     ["spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"],
                     id="port-out-of-range"),
        pytest.param({"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80, "protocol": "HTTP"}]}]},
                     ['spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'],
                     id="bad-protocol"),
        pytest.param({"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "abc"}}}]},
                     [f'spec.containers[0].resources.requests[cpu]: Invalid value: "abc": {QUANTITY_MSG}'],
                     id="unparsable-quantity"),
        pytest.param({"containers": [{"name": "c", "image": "i", "resources": {"requests": {"memory": "-1Gi"}}}]},
                     ['spec.containers[0].resources.requests[memory]: Invalid value: "-1Gi": must be greater than or equal to 0'],
                     id="negative-request"),
        pytest.param({"containers": [{"name": "c", "image": "i",
                                      "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]},
                     ['spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'],
                     id="request-above-limit"),
        pytest.param({"containers": [{"name": "c", "image": "i", "resources": {"requests": {"gpu": "1"}}}]},
                     ['spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type or '
                      'fully qualified',
                      'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers'],
                     id="unprefixed-non-standard-resource"),
        pytest.param({"containers": [{"name": "c", "image": "i", "resources": {"requests": {"example.com/gpu": "1"}}}]},
                     ["spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"],
                     id="extended-resource-needs-limit"),
        pytest.param({"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
                     ['spec.tolerations[0].operator: Invalid value: "v": value must be empty when `operator` is \'Exists\''],
                     id="exists-toleration-with-value"),
        pytest.param({"tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule",
                                       "tolerationSeconds": 5}]},
                     ['spec.tolerations[0].effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' when '
                      '`tolerationSeconds` is set'], id="toleration-seconds-without-noexecute"),
        pytest.param({"tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "Sometimes"}]},
                     ['spec.tolerations[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
                      '"PreferNoSchedule", "NoExecute"'], id="bad-toleration-effect"),
        pytest.param({"tolerations": [{"operator": "Equal"}]},
                     ['spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is '
                      'empty, which means "match all values and all keys"'], id="empty-key-needs-exists"),
        pytest.param({"tolerations": [{"key": "k", "operator": "In"}]},
                     ['spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"'],
                     id="bad-toleration-operator"),
        pytest.param({"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "zone",
                                                     "whenUnsatisfiable": "DoNotSchedule"}]},
                     ["spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"],
                     id="zero-max-skew"),
        pytest.param({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                                     "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}]},
                     ["spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if "
                      "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"], id="min-domains-needs-do-not-schedule"),
        pytest.param({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}]},
                     ['spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported '
                      'values: "DoNotSchedule", "ScheduleAnyway"'], id="bad-when-unsatisfiable"),
        pytest.param({"topologySpreadConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]},
                     ["spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty"],
                     id="missing-topology-key"),
        pytest.param({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule",
                                                     "nodeAffinityPolicy": "Sometimes"}]},
                     ['spec.topologySpreadConstraints[0].nodeAffinityPolicy: Unsupported value: "Sometimes": supported '
                      'values: "Honor", "Ignore"'], id="bad-node-affinity-policy"),
        pytest.param({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}},
                     ["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
                      "Required value: must have at least one node selector term"], id="empty-node-selector-terms"),
        pytest.param({"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": 101, "podAffinityTerm": {"topologyKey": "zone"}}]}}},
                     ["spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
                      "Invalid value: 101: must be in the range 1-100"], id="affinity-weight-out-of-range"),
        pytest.param({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]}}},
                     ["spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "
                      "Required value: can not be empty",
                      'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: '
                      'Invalid value: "": name part must be non-empty',
                      'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: '
                      'Invalid value: "": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and '
                      "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                      "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"],
                     id="pod-affinity-without-topology-key"),
        pytest.param({"preemptionPolicy": "Sometimes"},
                     ['spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: '
                      '"PreemptLowerPriority", "Never"'], id="bad-preemption-policy"),
        pytest.param({"nodeSelector": {"disk": "very fast"}},
                     ['spec.nodeSelector: Invalid value: "very fast": a valid label must be an empty string or consist '
                      "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                      "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                      "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"], id="bad-node-selector-value"),
        pytest.param({"nodeName": "n1", "schedulingGates": [{"name": "g"}]},
                     ["spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"],
                     id="node-name-with-scheduling-gates"),
    ],
)
def test_validation(spec, expected):
    assert errors(pod(**spec)) == expected


def test_valid_pod_has_no_errors():
    p = pod(containers=[{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}},
                         "ports": [{"containerPort": 80, "name": "http"}]}],
            tolerations=[{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}],
            topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                        "minDomains": 2, "labelSelector": {"matchLabels": {"a": "b"}}}],
            affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}})
    assert errors(p) == []


def test_bad_metadata_name():
    p = pod(name="Bad_Name")
    (msg,) = errors(p)
    assert msg.startswith('metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of')


def stored(**spec):
    p = created(pod(**spec))
    p["metadata"].update(uid="u1", creationTimestamp="2026-01-01T00:00:00Z", resourceVersion="5")
    return p


def update(old, mutate):
    new = copy.deepcopy(old)
    mutate(new)
    S.default(new)
    S.prepare_for_update(new, old)
    return new, [f"{e['field']}: {e['message']}" for e in S.validate_update(new, old)]


@pytest.mark.parametrize(
    "mutate, ok",
    [
        pytest.param(lambda p: p["spec"]["containers"][0].update(image="nginx:2"), True, id="image-change-allowed"),
        pytest.param(lambda p: p["spec"].update(activeDeadlineSeconds=30), True, id="set-active-deadline-allowed"),
        pytest.param(lambda p: p["spec"].update(tolerations=[{"key": "a", "operator": "Exists"}]), True,
                     id="adding-toleration-allowed"),
        pytest.param(lambda p: p["metadata"].update(labels={"x": "y"}), True, id="label-change-allowed"),
        pytest.param(lambda p: p["spec"].update(restartPolicy="Never"), False, id="restart-policy-change-forbidden"),
        pytest.param(lambda p: p["spec"].update(nodeName="n1"), False, id="node-name-via-update-forbidden"),
        pytest.param(lambda p: p["spec"]["containers"][0].update(resources={"requests": {"cpu": "1"}}), False,
                     id="resources-change-forbidden"),
    ],
)
def test_spec_update_rules(mutate, ok):
    _, errs = update(stored(), mutate)
    if ok:
        assert errs == []
    else:
        assert errs == [f"spec: Forbidden: {POD_UPDATE_FORBIDDEN}"]


def test_removing_toleration_forbidden():
    old = stored(tolerations=[{"key": "a", "operator": "Exists"}])
    _, errs = update(old, lambda p: p["spec"].update(tolerations=[]))
    assert "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds" in errs


def test_scheduling_gates_may_only_be_removed():
    old = stored(schedulingGates=[{"name": "a"}, {"name": "b"}])
    _, errs = update(old, lambda p: p["spec"].update(schedulingGates=[{"name": "a"}]))
    assert errs == []
    _, errs = update(old, lambda p: p["spec"].update(schedulingGates=[{"name": "a"}, {"name": "b"}, {"name": "c"}]))
    assert errs == ["spec.schedulingGates[2].name: Forbidden: only deletion is allowed, but found new scheduling gate 'c'"]


def test_update_keeps_status_uid_and_bumps_generation_only_on_spec_change():
    old = stored()
    old["status"] = {"phase": "Running", "qosClass": "BestEffort"}
    new, _ = update(old, lambda p: (p.update(status={"phase": "Failed"}), p["metadata"].update(uid="evil")))
    assert new["status"] == {"phase": "Running", "qosClass": "BestEffort"}
    assert new["metadata"]["uid"] == "u1"
    assert new["metadata"]["generation"] == 1
    new, _ = update(old, lambda p: p["spec"]["containers"][0].update(image="nginx:2"))
    assert new["metadata"]["generation"] == 2


def test_status_update_keeps_spec_and_owner_refs_takes_status():
    old = stored()
    old["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "o", "uid": "1"}]
    new = copy.deepcopy(old)
    new["spec"]["nodeName"] = "sneaky"
    new["metadata"]["ownerReferences"] = []
    new["status"] = {"phase": "Running", "podIP": "10.0.0.1", "qosClass": "Guaranteed"}
    S.prepare_for_status_update(new, old)
    assert new["spec"] == old["spec"]
    assert new["metadata"]["ownerReferences"] == old["metadata"]["ownerReferences"]
    assert new["status"] == {"phase": "Running", "podIP": "10.0.0.1", "qosClass": "BestEffort"}
    assert S.validate_status_update(new, old) == []


def test_status_update_clearing_observed_generation_keeps_old_value():
    old = stored()
    old["status"] = {"phase": "Running", "observedGeneration": 3, "qosClass": "BestEffort"}
    new = copy.deepcopy(old)
    new["status"] = {"phase": "Running"}
    S.prepare_for_status_update(new, old)
    assert new["status"]["observedGeneration"] == 3


def test_created_pod_is_accepted_by_the_wire_model():
    from minik3s.api.core import Pod

    p = created(pod(tolerations=[{"key": "k", "operator": "Exists"}]))
    model = Pod.model_validate(p)
    assert model.spec is not None and model.spec.containers[0].imagePullPolicy == "Always"


def test_pod_without_spec_only_misses_containers():
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad1"}}
    S.default(p)
    assert [f"{e['field']}: {e['message']}" for e in S.validate(p)] == ["spec.containers: Required value"]


@pytest.mark.parametrize(
    "raw, canonical",
    [
        pytest.param("1000m", "1", id="millis-to-whole"),
        pytest.param("1.5", "1500m", id="fraction-to-millis"),
        pytest.param("0.1", "100m", id="tenth"),
        pytest.param("2000", "2k", id="thousands-to-k"),
        pytest.param("1500", "1500", id="non-round-stays"),
        pytest.param("0.5Gi", "512Mi", id="binary-rescaled"),
        pytest.param("1536Mi", "1536Mi", id="binary-not-divisible"),
        pytest.param("1e3", "1e3", id="exponent-form-kept"),
        pytest.param("-1Gi", "-1Gi", id="negative-binary"),
        pytest.param(2, "2", id="json-number"),
    ],
)
def test_canonical_quantity(raw, canonical):
    from apiserver.strategies.podspec import canonical_quantity

    assert canonical_quantity(raw) == canonical


def test_request_above_limit_message_uses_canonical_quantities():
    p = pod(containers=[{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1500m"}, "limits": {"cpu": "1000m"}}}])
    assert errors(p) == ['spec.containers[0].resources.requests: Invalid value: "1500m": must be less than or equal to '
                         "cpu limit of 1"]
