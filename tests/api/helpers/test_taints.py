"""Toleration matching (upstream core/v1 toleration_test.go, helpers_test.go)."""

import pytest

from minik3s.api.helpers.taints import find_untolerated_taint, is_no_schedule_or_no_execute, tolerates

TAINT = {"key": "foo", "value": "bar", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("toleration", "want"),
    [
        pytest.param(
            {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
            True,
            id="exact-match",
        ),
        pytest.param(
            {"key": "foo", "value": "bar", "effect": "NoSchedule"}, True, id="empty-operator-is-equal"
        ),
        pytest.param(
            {"key": "foo", "operator": "Equal", "value": "baz", "effect": "NoSchedule"},
            False,
            id="value-differs",
        ),
        pytest.param(
            {"key": "foo", "operator": "Exists", "effect": "NoSchedule"}, True, id="exists-ignores-value"
        ),
        pytest.param({"operator": "Exists"}, True, id="empty-key-exists-tolerates-everything"),
        pytest.param({"key": "foo", "operator": "Exists"}, True, id="empty-effect-matches-all-effects"),
        pytest.param({"key": "foo", "operator": "Exists", "effect": "NoExecute"}, False, id="effect-differs"),
        pytest.param({"key": "other", "operator": "Exists"}, False, id="key-differs"),
        pytest.param({"key": "foo", "operator": "Bogus", "value": "bar"}, False, id="unknown-operator"),
    ],
)
def test_tolerates(toleration, want):
    assert tolerates(toleration, TAINT) is want


def test_find_untolerated_taint_respects_filter():
    taints = [{"key": "a", "effect": "PreferNoSchedule"}, {"key": "b", "value": "1", "effect": "NoExecute"}]
    assert find_untolerated_taint(taints, [], is_no_schedule_or_no_execute) == taints[1]
    assert (
        find_untolerated_taint(taints, [{"key": "b", "operator": "Exists"}], is_no_schedule_or_no_execute)
        is None
    )
    assert find_untolerated_taint(taints, []) == taints[0]
    assert find_untolerated_taint(None, []) is None
