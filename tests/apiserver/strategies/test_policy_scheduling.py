"""PodDisruptionBudget and PriorityClass strategies."""

import copy

import pytest

from apiserver.strategies import strategy_for

PDB = strategy_for("policy", "PodDisruptionBudget")
PC = strategy_for("scheduling.k8s.io", "PriorityClass")


def rendered(errs):
    return [f"{e['field']}: {e['message']}" for e in errs]


def pdb(**spec):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}


def test_pdb_status_reset_on_create():
    b = pdb(minAvailable=1)
    b["status"] = {"disruptionsAllowed": 5}
    PDB.default(b)
    PDB.prepare_for_create(b)
    assert b["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    assert b["metadata"]["generation"] == 1


@pytest.mark.parametrize(
    "spec, expected",
    [
        pytest.param({"minAvailable": 1}, [], id="min-available-int"),
        pytest.param({"maxUnavailable": "50%"}, [], id="max-unavailable-percent"),
        pytest.param({"minAvailable": 1, "maxUnavailable": 1},
                     ["spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:(*intstr.IntOrString)"
                      "(0xc000000000), Selector:(*v1.LabelSelector)(0xc000000000), MaxUnavailable:"
                      "(*intstr.IntOrString)(0xc000000000), UnhealthyPodEvictionPolicy:"
                      "(*policy.UnhealthyPodEvictionPolicyType)(nil)}: minAvailable and maxUnavailable cannot be both set"],
                     id="both-min-and-max"),
        pytest.param({"minAvailable": -1}, ["spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"],
                     id="negative-min-available"),
        pytest.param({"maxUnavailable": "120%"},
                     ['spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%'], id="over-100-percent"),
        pytest.param({"unhealthyPodEvictionPolicy": "Never"},
                     ['spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", '
                      '"IfHealthyBudget"'], id="bad-unhealthy-policy"),
    ],
)
def test_pdb_validation(spec, expected):
    b = pdb(**spec)
    PDB.default(b)
    assert rendered(PDB.validate(b)) == expected


def pc(name="high", value=1000, **kw):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value, **kw}


def test_priority_class_defaults_preemption_policy():
    p = pc()
    PC.default(p)
    PC.prepare_for_create(p)
    assert p["preemptionPolicy"] == "PreemptLowerPriority"
    assert "generation" not in p["metadata"]


@pytest.mark.parametrize(
    "obj, expected",
    [
        pytest.param(pc(), [], id="user-class-ok"),
        pytest.param(pc(value=1_000_000_001),
                     ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"],
                     id="user-value-too-high"),
        pytest.param(pc(name="system-foo", value=5),
                     ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system "
                      "use only. error: system-foo is not a known system priority class"], id="reserved-system-prefix"),
        pytest.param(pc(name="system-node-critical", value=2000001000), [], id="builtin-system-class-ok"),
        pytest.param(pc(preemptionPolicy="Sometimes"),
                     ['preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"'],
                     id="bad-preemption-policy"),
    ],
)
def test_priority_class_validation(obj, expected):
    PC.default(obj)
    assert rendered(PC.validate(obj)) == expected


def test_priority_class_value_and_policy_immutable():
    old = pc()
    PC.default(old)
    new = copy.deepcopy(old)
    new["value"] = 5
    new["preemptionPolicy"] = "Never"
    PC.prepare_for_update(new, old)
    assert rendered(PC.validate_update(new, old)) == [
        "value: Forbidden: may not be changed in an update.",
        'preemptionPolicy: Invalid value: "Never": field is immutable',
    ]
    new = copy.deepcopy(old)
    new["description"] = "changed"
    assert PC.validate_update(new, old) == []
