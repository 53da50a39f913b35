"""Required and preferred node affinity (upstream component-helpers nodeaffinity_test.go)."""

import pytest

from minik3s.api.helpers.node_affinity import (
    NodeSelector,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    preferred_score,
)
from minik3s.testing.builders import make_node, make_pod


def _terms(*terms):
    return {"nodeSelectorTerms": list(terms)}


def _expr(key, op, *values):
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


NODE = make_node("n1").labels(zone="a", disk="ssd", gen="5").obj()


@pytest.mark.parametrize(
    ("selector", "want"),
    [
        pytest.param(_terms({"matchExpressions": [_expr("zone", "In", "a", "b")]}), True, id="in"),
        pytest.param(_terms({"matchExpressions": [_expr("zone", "NotIn", "a")]}), False, id="not-in"),
        pytest.param(_terms({"matchExpressions": [_expr("gpu", "DoesNotExist")]}), True, id="does-not-exist"),
        pytest.param(_terms({"matchExpressions": [_expr("disk", "Exists")]}), True, id="exists"),
        pytest.param(_terms({"matchExpressions": [_expr("gen", "Gt", "4")]}), True, id="gt"),
        pytest.param(_terms({"matchExpressions": [_expr("gen", "Lt", "4")]}), False, id="lt"),
        pytest.param(
            _terms(
                {"matchExpressions": [_expr("zone", "In", "b")]},
                {"matchExpressions": [_expr("disk", "In", "ssd")]},
            ),
            True,
            id="terms-are-ored",
        ),
        pytest.param(
            _terms({"matchExpressions": [_expr("zone", "In", "a"), _expr("disk", "In", "hdd")]}),
            False,
            id="expressions-are-anded",
        ),
        pytest.param(_terms({}), False, id="empty-term-matches-nothing"),
        pytest.param(
            _terms({"matchFields": [_expr("metadata.name", "In", "n1")]}), True, id="match-fields-name"
        ),
        pytest.param(
            _terms({"matchFields": [_expr("metadata.name", "NotIn", "n1")]}), False, id="match-fields-not-in"
        ),
        pytest.param(
            _terms(
                {"matchExpressions": [_expr("zone", "Bogus", "a")]},
                {"matchExpressions": [_expr("zone", "In", "a")]},
            ),
            True,
            id="invalid-term-skipped",
        ),
        pytest.param(
            _terms({"matchFields": [_expr("metadata.uid", "In", "x")]}), False, id="unsupported-field"
        ),
    ],
)
def test_node_selector(selector, want):
    assert NodeSelector(selector).match(NODE) is want


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod("p").obj(), True, id="no-constraints"),
        pytest.param(make_pod("p").node_selector(zone="a").obj(), True, id="node-selector-matches"),
        pytest.param(make_pod("p").node_selector(zone="b").obj(), False, id="node-selector-mismatch"),
        pytest.param(
            make_pod("p").node_selector(zone="a").node_affinity_in("disk", ["hdd"]).obj(),
            False,
            id="selector-and-affinity-both-required",
        ),
    ],
)
def test_required_node_affinity(pod, want):
    assert RequiredNodeAffinity(pod).match(NODE) is want


def test_preferred_score_sums_matching_weights():
    pod = (
        make_pod("p")
        .preferred_node_affinity(2, [_expr("zone", "In", "a")])
        .preferred_node_affinity(5, [_expr("disk", "Exists")])
        .preferred_node_affinity(7, [_expr("zone", "In", "b")])
        .preferred_node_affinity(0, [_expr("zone", "In", "a")])
        .obj()
    )
    assert preferred_score(pod, NODE) == 7


def test_preferred_terms_invalid_raise():
    with pytest.raises(ValueError):
        PreferredSchedulingTerms(
            [{"weight": 1, "preference": {"matchExpressions": [_expr("a", "Foo", "x")]}}]
        )
