"""validate_pod_spec's memo on the spec's JSON: the same causes as the walk, fresh each call,
and the values the memo's key could blur (NaN written as null, a tuple for a list, True for 1,
another field path) never answered from another spec's entry."""

import copy

from apiserver.strategies import strategy_for
from apiserver.strategies.podspec import SpecValidationMemo, _validate_pod_spec, validate_pod_spec

S = strategy_for("", "Pod")


def remembered(s, field="spec"):
    """Validate `s` twice: a spec enters the memo on its second sighting."""
    first, second = validate_pod_spec(copy.deepcopy(s), field), validate_pod_spec(copy.deepcopy(s), field)
    assert first == second
    return second


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
    assert [c["field"] for c in remembered(s)] == ["spec.restartPolicy"]
    assert [c["field"] for c in validate_pod_spec(s, "spec.template.spec")] == ["spec.template.spec.restartPolicy"]


def test_nan_is_not_answered_by_a_null_entry():
    # orjson writes NaN as null: a spec with a NaN must not hit the entry of the same spec with null
    clean = spec(terminationGracePeriodSeconds=None)
    assert remembered(clean) == []
    bad = spec(terminationGracePeriodSeconds=float("nan"))
    assert [c["field"] for c in validate_pod_spec(bad, "spec")] == ["spec.terminationGracePeriodSeconds"]


def test_tuple_where_a_list_belongs_is_not_answered_by_the_list_entry():
    s = spec()
    assert remembered(s) == []
    t = {**s, "containers": tuple(s["containers"])}
    assert validate_pod_spec(t, "spec") == _validate_pod_spec(t, "spec") != []


def test_bool_for_int_is_not_answered_by_the_int_entry():
    # True == 1 in Python: the JSON bytes tell them apart
    assert remembered(spec(priority=1)) == []
    assert [c["field"] for c in validate_pod_spec(spec(priority=True), "spec")] == ["spec.priority"]


def test_changed_spec_is_walked_again():
    s = spec()
    assert remembered(s) == []
    s2 = copy.deepcopy(s)
    s2["containers"][0]["name"] = "Bad_Name"
    assert [c["field"] for c in validate_pod_spec(s2, "spec")] == ["spec.containers[0].name"]


def test_entry_on_second_sighting_and_bounded():
    memo = SpecValidationMemo(size=4)
    s = spec(restartPolicy="Sometimes")
    want = _validate_pod_spec(copy.deepcopy(s), "spec")
    assert memo.causes(copy.deepcopy(s), "spec") == want
    assert len(memo._lru) == 0
    assert memo.causes(copy.deepcopy(s), "spec") == want
    assert len(memo._lru) == 1
    assert memo.causes(copy.deepcopy(s), "spec") == want
    for i in range(10):
        for _ in range(2):
            assert memo.causes(spec(hostname=f"h{i}"), "spec") == []
    assert len(memo._lru) == 4 and len(memo._lru._seen) <= 4
    assert memo.causes(copy.deepcopy(s), "spec") == want  # evicted: walked again


def token_spec(name, **kw):
    """A spec as the ServiceAccount plugin leaves it: a kube-api-access-<5> volume mounted."""
    s = spec(**kw)
    token = {"expirationSeconds": 3607, "path": "token"}  # the plugin's (an unset lifetime is 0 when validated)
    s["volumes"] = [{"name": name, "projected": {"sources": [{"serviceAccountToken": token}], "defaultMode": 420}}]
    s["containers"][0]["volumeMounts"] = [{"name": name, "readOnly": True,
                                           "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]
    return s


def test_pods_alike_but_for_their_token_volume_name_share_one_entry(monkeypatch):
    import apiserver.strategies.podspec as podspec

    walks = []
    real = podspec._validate_pod_spec
    monkeypatch.setattr(podspec, "_validate_pod_spec", lambda s, f: walks.append(1) or real(s, f))
    memo = SpecValidationMemo()
    for name in ("kube-api-access-bcdfg", "kube-api-access-hjklm", "kube-api-access-npqrs", "kube-api-access-tvwxz"):
        assert memo.causes(token_spec(name), "spec") == []
    assert len(memo._lru) == 1 and len(walks) == 2  # the first sighting and the entry: two walks for four pods


def test_a_token_named_spec_that_is_invalid_is_walked_with_its_own_name():
    # the entry answers only "valid": a cause would quote the placeholder, not this pod's name
    memo = SpecValidationMemo()
    for name in ("kube-api-access-bcdfg", "kube-api-access-hjklm", "kube-api-access-npqrs"):
        s = token_spec(name)
        s["containers"][0]["volumeMounts"][0]["name"] = name + "x"  # a mount of no volume
        causes = memo.causes(s, "spec")
        assert causes == _validate_pod_spec(copy.deepcopy(s), "spec") != []
        assert any(name + "x" in str(c.get("message", "")) for c in causes), causes


def test_a_token_named_spec_with_a_tuple_is_not_answered_by_the_entry():
    memo = SpecValidationMemo()
    for name in ("kube-api-access-bcdfg", "kube-api-access-hjklm"):
        assert memo.causes(token_spec(name), "spec") == []
    t = token_spec("kube-api-access-npqrs")
    t["containers"] = tuple(t["containers"])
    assert memo.causes(t, "spec") == _validate_pod_spec(t, "spec") != []


def test_a_spec_holding_the_placeholder_itself_keeps_its_own_key():
    memo = SpecValidationMemo()
    s = token_spec("kube-api-access-bcdfg")
    s["volumes"].append({"name": "kube-api-access-00000", "emptyDir": {}})
    for _ in range(2):
        assert memo.causes(copy.deepcopy(s), "spec") == []
    # a spec where the generated name would collide with the placeholder volume is walked as it is
    clash = token_spec("kube-api-access-hjklm")
    clash["volumes"].append({"name": "kube-api-access-00000", "emptyDir": {}})
    clash["volumes"].append({"name": "kube-api-access-hjklm", "emptyDir": {}})  # a duplicate name
    assert [c["field"] for c in memo.causes(clash, "spec")] == ["spec.volumes[2].name"]
