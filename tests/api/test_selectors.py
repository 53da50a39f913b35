"""Label/field selector parsing and matching (upstream labels/selector_test.go, fields/selector_test.go)."""

import pytest

from minik3s.api.selectors import (
    LabelSelector,
    label_selector_from_dict,
    parse_field_selector,
    parse_label_selector,
    selector_from_set,
)


@pytest.mark.parametrize(
    ("selector", "labels", "want"),
    [
        pytest.param("", {"x": "y"}, True, id="empty-selector-matches-everything"),
        pytest.param("x=y", {"x": "y"}, True, id="equality-matches"),
        pytest.param("x==y", {"x": "y"}, True, id="double-equals-matches"),
        pytest.param("x=y", {"x": "z"}, False, id="equality-wrong-value"),
        pytest.param("x=y", {}, False, id="equality-missing-key"),
        pytest.param("x!=y", {}, True, id="not-equals-missing-key-matches"),
        pytest.param("x!=y", {"x": "y"}, False, id="not-equals-same-value"),
        pytest.param("x in (a,b)", {"x": "b"}, True, id="in-set"),
        pytest.param("x in (a,b)", {"x": "c"}, False, id="not-in-set"),
        pytest.param("x notin (a,b)", {"x": "c"}, True, id="notin-other-value"),
        pytest.param("x notin (a,b)", {}, True, id="notin-missing-key"),
        pytest.param("x", {"x": ""}, True, id="exists-with-empty-value"),
        pytest.param("!x", {"x": "1"}, False, id="does-not-exist-present"),
        pytest.param("!x", {"y": "1"}, True, id="does-not-exist-absent"),
        pytest.param("x>1", {"x": "2"}, True, id="gt-matches"),
        pytest.param("x<1", {"x": "2"}, False, id="lt-fails"),
        pytest.param("x>1", {"x": "abc"}, False, id="gt-non-integer-label"),
        pytest.param(
            "a=b,c!=d,e in (x,y),f notin (z),g,!h", {"a": "b", "e": "x", "g": "1"}, True, id="combined"
        ),
        pytest.param("a=b, c=d", {"a": "b", "c": "e"}, False, id="whitespace-and-anded"),
        pytest.param("x=", {"x": ""}, True, id="empty-value-matches-empty-label"),
        pytest.param("in=notin", {"in": "notin"}, True, id="keywords-as-key-and-value"),
    ],
)
def test_parse_and_match(selector, labels, want):
    assert parse_label_selector(selector).matches(labels) is want


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param(
            "a b",
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
            id="missing-operator",
        ),
        pytest.param("a=b=c", "found '=', expected: ',' or 'end of string'", id="double-operator"),
        pytest.param("a,", "found '', expected: identifier after ','", id="trailing-comma"),
        pytest.param("x in a", "unable to parse requirement: found 'a' expected: '('", id="in-without-paren"),
        pytest.param(
            "x>a",
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' "
            "operators, the value must be an integer",
            id="gt-non-integer",
        ),
        # Parse validates the key at a nil field path (upstream prints `<nil>`)
        pytest.param("-a=b", 'unable to parse requirement: <nil>: Invalid value: "-a"', id="invalid-key"),
    ],
)
def test_parse_errors(selector, message):
    with pytest.raises(ValueError) as e:
        parse_label_selector(selector)
    assert str(e.value).startswith(message)


@pytest.mark.parametrize(
    ("sel", "labels", "want"),
    [
        pytest.param(None, {"a": "b"}, False, id="nil-selector-matches-nothing"),
        pytest.param({}, {"a": "b"}, True, id="empty-selector-matches-everything"),
        pytest.param({"matchLabels": {"a": "b"}}, {"a": "b", "c": "d"}, True, id="match-labels"),
        pytest.param(
            {
                "matchLabels": {"a": "b"},
                "matchExpressions": [{"key": "c", "operator": "In", "values": ["x"]}],
            },
            {"a": "b", "c": "d"},
            False,
            id="match-labels-and-expressions-anded",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "c", "operator": "DoesNotExist"}]},
            {"a": "b"},
            True,
            id="does-not-exist",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["x"]}]},
            {"c": "x"},
            False,
            id="not-in",
        ),
    ],
)
def test_label_selector_from_dict(sel, labels, want):
    assert label_selector_from_dict(sel).matches(labels) is want


def test_label_selector_from_dict_rejects_bad_operator():
    with pytest.raises(ValueError, match='"Foo" is not a valid label selector operator'):
        label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "Foo", "values": ["x"]}]})


def test_empty_flags():
    assert LabelSelector.everything().empty
    assert not LabelSelector.nothing().empty
    assert not parse_label_selector("a=b").empty
    assert selector_from_set({}).empty


def test_add_requirement():
    sel = label_selector_from_dict({"matchLabels": {"a": "b"}}).add("c", "In", ["d"])
    assert sel.matches({"a": "b", "c": "d"})
    assert not sel.matches({"a": "b"})


@pytest.mark.parametrize(
    ("s", "want"),
    [
        pytest.param("", [], id="empty"),
        pytest.param("metadata.name=a", [("metadata.name", "=", "a")], id="equals"),
        pytest.param(
            "status.phase==Running,spec.nodeName!=",
            [("status.phase", "=", "Running"), ("spec.nodeName", "!=", "")],
            id="double-equals-and-empty",
        ),
        pytest.param("a=b\\,c", [("a", "=", "b,c")], id="escaped-comma"),
    ],
)
def test_parse_field_selector(s, want):
    assert parse_field_selector(s) == want


def test_parse_field_selector_error():
    with pytest.raises(ValueError, match="invalid selector: 'foo'; can't understand 'foo'"):
        parse_field_selector("foo")


@pytest.mark.parametrize(("selector", "want"), [
    pytest.param({"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2", id="match-labels-sorted-by-key"),
    pytest.param({"matchLabels": {"app": "web"},
                  "matchExpressions": [{"key": "tier", "operator": "In", "values": ["z", "a"]},
                                       {"key": "env", "operator": "NotIn", "values": ["dev"]},
                                       {"key": "gpu", "operator": "Exists"},
                                       {"key": "spot", "operator": "DoesNotExist"}]},
                 "app=web,env notin (dev),gpu,!spot,tier in (a,z)", id="expressions-render-as-upstream"),
    pytest.param({"matchExpressions": [{"key": "k", "operator": "In", "values": ["only"]}]}, "k in (only)",
                 id="single-value-in-stays-set-based"),
    pytest.param({}, "", id="empty-selects-everything"),
    pytest.param({"matchExpressions": [{"key": "k", "operator": "Near"}]}, None, id="bad-operator-is-none"),
])
def test_label_selector_string(selector, want):
    from minik3s.api.selectors import label_selector_string

    assert label_selector_string(selector) == want
