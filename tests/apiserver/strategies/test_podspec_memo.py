"""validate_pod_spec's memo on the spec's JSON: the same causes as the walk, fresh each call,
and the values the memo's key could blur (NaN written as null, a tuple for a list, True for 1,
another field path) never answered from another spec's entry."""

import copy

from apiserver.strategies import strategy_for
from apiserver.strategies.podspec import _validate_pod_spec, validate_pod_spec

S = strategy_for("", "Pod")


def spec(**kw):
    s = {"containers": [{"name": "c", "image": "nginx",
                         "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}], **kw}
    S.default({"spec": s})
    return s


def test_clean_spec_repeats_clean_and_is_not_changed():
    s = spec()
    before = copy.deepcopy(s)
    assert validate_pod_spec(s, "spec") == []
    assert validate_pod_spec(copy.deepcopy(s), "spec") == []
    assert s == before


def test_invalid_spec_same_causes_every_time_and_fresh_dicts():
    s = spec(restartPolicy="Sometimes", dnsPolicy="Nope")
    walked = _validate_pod_spec(copy.deepcopy(s), "spec")
    assert [c["field"] for c in walked] == ["spec.restartPolicy", "spec.dnsPolicy"]
    first = validate_pod_spec(s, "spec")
    first[0]["message"] = "changed by the caller"
    first.append({"field": "x"})
    assert validate_pod_spec(copy.deepcopy(s), "spec") == walked


def test_field_path_is_part_of_the_key():
    s = spec(restartPolicy="Sometimes")
    assert [c["field"] for c in validate_pod_spec(s, "spec")] == ["spec.restartPolicy"]
    assert [c["field"] for c in validate_pod_spec(s, "spec.template.spec")] == ["spec.template.spec.restartPolicy"]


def test_nan_is_not_answered_by_a_null_entry():
    # orjson writes NaN as null: a spec with a NaN must not hit the entry of the same spec with null
    clean = spec(terminationGracePeriodSeconds=None)
    assert validate_pod_spec(clean, "spec") == []
    bad = spec(terminationGracePeriodSeconds=float("nan"))
    assert [c["field"] for c in validate_pod_spec(bad, "spec")] == ["spec.terminationGracePeriodSeconds"]


def test_tuple_where_a_list_belongs_is_not_answered_by_the_list_entry():
    s = spec()
    assert validate_pod_spec(s, "spec") == []
    t = {**s, "containers": tuple(s["containers"])}
    assert validate_pod_spec(t, "spec") == _validate_pod_spec(t, "spec") != []


def test_bool_for_int_is_not_answered_by_the_int_entry():
    # True == 1 in Python: the JSON bytes tell them apart
    assert validate_pod_spec(spec(priority=1), "spec") == []
    assert [c["field"] for c in validate_pod_spec(spec(priority=True), "spec")] == ["spec.priority"]


def test_changed_spec_is_walked_again():
    s = spec()
    assert validate_pod_spec(s, "spec") == []
    s2 = copy.deepcopy(s)
    s2["containers"][0]["name"] = "Bad_Name"
    assert [c["field"] for c in validate_pod_spec(s2, "spec")] == ["spec.containers[0].name"]
