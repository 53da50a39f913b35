"""Upstream's own selector tables, translated (kubernetes v1.33, staging/src/k8s.io/apimachinery):

* pkg/labels/selector_test.go and labels_test.go  -> parse_label_selector, LabelSelector, selector_from_set
* pkg/fields/selector_test.go                     -> parse_field_selector, unescape_field_value
* pkg/apis/meta/v1/helpers_test.go                -> label_selector_from_dict, label_selector_string
* plus the API-visible side: `?labelSelector=` / `?fieldSelector=` on a LIST through the request core.

Go-internal checks (the lexer's token kinds, the parser's lookahead, Requirement struct equality)
are observed through what Parse returns or the error message it gives; upstream's test only asks
for "an error" in many bad-input tables, the messages here are the ones upstream's code builds.
Skipped: RequiresExactMatch (labels and fields: no minik3s equivalent), safeSort's copy semantics,
the zero-value Requirement, fields' andTerm/hasTerm internals, Transform/ParseAndTransformSelector,
LabelSelectorAsMap, ParseToLabelSelector, ConvertSelectorToLabelsMap, Set.Has/Get/Conflicts/Merge
(map helpers minik3s does not have).
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from apiserver.core import ApiCore
from apiserver.storage.sqlite_store import SqliteStore
from minik3s.api.errors import BadRequestError
from minik3s.api.options import ListOptions
from minik3s.api.resources import ResourceRegistry
from minik3s.api.selectors import (
    OP_DOES_NOT_EXIST,
    OP_EXISTS,
    OP_GT,
    OP_IN,
    OP_LT,
    OP_NOT_IN,
    LabelSelector,
    _make_requirement,
    label_selector_from_dict,
    label_selector_string,
    parse_field_selector,
    parse_label_selector,
    selector_from_set,
    unescape_field_value,
)
from minik3s.utils.clock import FakeClock

QNAME = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
BINARY_OPS = "in, notin, =, ==, !=, gt, lt"
REQ = "unable to parse requirement: "

# selection.Operator spellings -> compiled operator codes (Equals/DoubleEquals compile to In,
# NotEquals to NotIn: with their one value they select the same objects)
SEL_OPS = {"in": OP_IN, "=": OP_IN, "==": OP_IN, "notin": OP_NOT_IN, "!=": OP_NOT_IN, "exists": OP_EXISTS,
           "!": OP_DOES_NOT_EXIST, "gt": OP_GT, "lt": OP_LT}


def new_requirement(key: str, op: str, values: Sequence[str] | None) -> tuple[str, int, Any]:
    """labels.NewRequirement(key, op, sets.List(vals)): the list is never nil (`[]string{}`)."""
    return _make_requirement(key, SEL_OPS[op], list(values or ()), nil_if_empty=False)


def parse_error(s: str) -> str:
    with pytest.raises(ValueError) as e:
        parse_label_selector(s)
    return str(e.value)


# =============================================================================================
# pkg/labels/selector_test.go
# =============================================================================================

GOOD = ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"]


@pytest.mark.parametrize("s", GOOD, ids=[repr(s) for s in GOOD])
def test_selector_parse_good_strings_restring(s: str) -> None:
    # TestSelectorParse: parses and prints back without the blanks
    assert str(parse_label_selector(s)) == s.replace(" ", "")


@pytest.mark.parametrize(("s", "message"), [
    ("x=a||y=b", REQ + f'values[0][x]: Invalid value: "a||y": {LABEL_VALUE}'),
    ("x==a==b", "found '==', expected: ',' or 'end of string'"),
    ("!x=a", "found '=', expected: ',' or 'end of string'"),
    ("x<a", REQ + "values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer"),
], ids=["x=a||y=b", "x==a==b", "!x=a", "x<a"])
def test_selector_parse_bad_strings(s: str, message: str) -> None:
    # TestSelectorParse: an error (the message is the one upstream's parser builds)
    assert parse_error(s) == message


def test_deterministic_parse() -> None:
    assert str(parse_label_selector("x=a,a=x")) == str(parse_label_selector("a=x,x=a")) == "a=x,x=a"


def test_everything() -> None:
    assert LabelSelector.everything().matches({"x": "y"})
    assert LabelSelector.everything().empty


LABELSET = {"foo": "bar", "baz": "blah"}
SELECTOR_MATCHES = [
    ("", {"x": "y"}, True),
    ("x=y", {"x": "y"}, True),
    ("x=y,z=w", {"x": "y", "z": "w"}, True),
    ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
    ("notin=in", {"notin": "in"}, True),  # in and notin as key and value of an exact match
    ("x", {"x": "z"}, True),
    ("!x", {"y": "z"}, True),
    ("x>1", {"x": "2"}, True),
    ("x<1", {"x": "0"}, True),
    ("x=z", {}, False),
    ("x=y", {"x": "z"}, False),
    ("x=y,z=w", {"x": "w", "z": "w"}, False),
    ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
    ("x", {"y": "z"}, False),
    ("!x", {"x": "z"}, False),
    ("x>1", {"x": "0"}, False),
    ("x<1", {"x": "2"}, False),
    ("foo=bar", LABELSET, True),
    ("baz=blah", LABELSET, True),
    ("foo=bar,baz=blah", LABELSET, True),
    ("foo=blah", LABELSET, False),
    ("baz=bar", LABELSET, False),
    ("foo=bar,foobar=bar,baz=blah", LABELSET, False),
]


@pytest.mark.parametrize(("s", "labels", "want"), SELECTOR_MATCHES,
                         ids=[f"{i}:{s!r}" for i, (s, _, _) in enumerate(SELECTOR_MATCHES)])
def test_selector_matches(s: str, labels: dict[str, str], want: bool) -> None:
    assert parse_label_selector(s).matches(labels) is want


@pytest.mark.parametrize("selector", [{}, {"foo": "bar"}, {"baz": "blah"}, {"foo": "bar", "baz": "blah"}],
                         ids=["empty", "foo", "baz", "both"])
def test_set_matches(selector: dict[str, str]) -> None:
    assert selector_from_set(selector).matches(LABELSET)


def test_nil_map_is_valid() -> None:
    assert selector_from_set(None).empty


def test_set_is_empty() -> None:
    assert selector_from_set({}).empty
    assert LabelSelector().empty  # NewSelector()


# TestLexer: one token alone, seen through what Parse makes of it
LEXER = [
    ("", None, ""),  # EndOfStringToken: everything
    (",", "found ',', expected: !, identifier, or 'end of string'", None),
    ("notin", None, "notin"),  # a keyword read as an identifier where a key is expected
    ("in", None, "in"),
    ("=", "found '=', expected: !, identifier, or 'end of string'", None),
    ("==", "found '==', expected: !, identifier, or 'end of string'", None),
    (">", "found '>', expected: !, identifier, or 'end of string'", None),
    ("<", "found '<', expected: !, identifier, or 'end of string'", None),
    ("!", REQ + "found '', expected: identifier", None),  # DoesNotExistToken, then the end
    ("!=", "found '!=', expected: !, identifier, or 'end of string'", None),  # the longest token
    ("(", "found '(', expected: !, identifier, or 'end of string'", None),
    (")", "found ')', expected: !, identifier, or 'end of string'", None),
    ("~", REQ + f'<nil>: Invalid value: "~": name part {QNAME}', None),  # an identifier
    ("||", REQ + f'<nil>: Invalid value: "||": name part {QNAME}', None),
]


@pytest.mark.parametrize(("s", "error", "printed"), LEXER, ids=[repr(c[0]) for c in LEXER])
def test_lexer(s: str, error: str | None, printed: str | None) -> None:
    if error is not None:
        assert parse_error(s) == error
    else:
        assert str(parse_label_selector(s)) == printed


# TestLexerSequence / TestParserLookahead: the token sequences, seen through the parse
SEQUENCES = [
    ("key in ( value )", "key in (value)"),
    ("key notin ( value )", "key notin (value)"),
    ("key in ( value1, value2 )", "key in (value1,value2)"),
    ("key", "key"),
    ("!key", "!key"),
    ("()", "error:found '(', expected: !, identifier, or 'end of string'"),
    ("", ""),
    ("x in (),y", "x in (),y"),
    ("== != (), = notin", "error:found '==', expected: !, identifier, or 'end of string'"),
    ("key>2", "key>2"),
    ("key<1", "key<1"),
]


@pytest.mark.parametrize(("s", "want"), SEQUENCES, ids=[repr(c[0]) for c in SEQUENCES])
def test_lexer_sequence_and_parser_lookahead(s: str, want: str) -> None:
    if want.startswith("error:"):
        assert parse_error(s) == want.removeprefix("error:")
    else:
        assert str(parse_label_selector(s)) == want


# TestParseOperator: the token after a key
PARSE_OPERATOR = [
    ("in", "x in (a)", "x in (a)"),
    ("=", "x = a", "x=a"),
    ("==", "x == a", "x==a"),
    (">", "x > 1", "x>1"),
    ("<", "x < 1", "x<1"),
    ("notin", "x notin (a)", "x notin (a)"),
    ("!=", "x != a", "x!=a"),
    ("!", "x ! a", "error:" + REQ + f"found '!', expected: {BINARY_OPS}"),
    ("exists", "x exists a", "error:" + REQ + f"found 'exists', expected: {BINARY_OPS}"),
    ("(", "x ( a", "error:" + REQ + f"found '(', expected: {BINARY_OPS}"),
]


@pytest.mark.parametrize(("token", "s", "want"), PARSE_OPERATOR, ids=[c[0] for c in PARSE_OPERATOR])
def test_parse_operator(token: str, s: str, want: str) -> None:
    test_lexer_sequence_and_parser_lookahead(s, want)


# TestRequirementConstructor (key, operator, values, error or None)
LONG = "a" * 254
REQUIREMENT_CONSTRUCTOR = [
    ("x1", "in", None, "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"),
    ("x2", "notin", [], "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"),
    ("x3", "in", ["foo"], None),
    ("x4", "notin", ["foo"], None),
    ("x6", "exists", None, None),
    ("x7", "!", None, None),
    ("x8", "exists", ["foo"],
     'values: Invalid value: []string{"foo"}: values set must be empty for exists and does not exist'),
    ("x9", "in", ["bar"], None),
    ("x10", "in", ["bar"], None),
    ("x11", "gt", ["1"], None),
    ("x12", "lt", ["6"], None),
    ("x13", "gt", None, "values: Invalid value: []string{}: for 'Gt', 'Lt' operators, exactly one value is required"),
    ("x14", "gt", ["bar"], "values[0]: Invalid value: \"bar\": for 'Gt', 'Lt' operators, the value must be an integer"),
    ("x15", "lt", ["bar"], "values[0]: Invalid value: \"bar\": for 'Gt', 'Lt' operators, the value must be an integer"),
    (LONG, "exists", None, f'key: Invalid value: "{LONG}": name part must be no more than 63 characters'),
    ("x16", "=", [LONG], f'values[0][x16]: Invalid value: "{LONG}": must be no more than 63 characters'),
    ("x17", "=", ["a b"], f'values[0][x17]: Invalid value: "a b": {LABEL_VALUE}'),
    # the older table's keys
    ("1foo", "in", ["bar"], None),
    ("1234", "in", ["bar"], None),
]


@pytest.mark.parametrize(("key", "op", "values", "error"), REQUIREMENT_CONSTRUCTOR,
                         ids=[c[0] if c[0] != LONG else "key-254-chars" for c in REQUIREMENT_CONSTRUCTOR])
def test_requirement_constructor(key: str, op: str, values: list[str] | None, error: str | None) -> None:
    if error is None:
        new_requirement(key, op, values)
    else:
        with pytest.raises(ValueError) as e:
            new_requirement(key, op, values)
        assert str(e.value) == error


@pytest.mark.parametrize(("reqs", "want"), [
    ([("x", "in", ["abc", "def"]), ("y", "notin", ["jkl"]), ("z", "exists", None)],
     "x in (abc,def),y notin (jkl),z"),
    ([("x", "notin", ["abc", "def"]), ("y", "!=", ["jkl"]), ("z", "!", None)], "x notin (abc,def),y!=jkl,!z"),
    ([("x", "notin", ["abc"]), ("y", "in", ["jkl", "mno"]), ("z", "notin", [""])],
     "x notin (abc),y in (jkl,mno),z notin ()"),
    ([("x", "=", ["abc"]), ("y", "==", ["jkl"]), ("z", "!=", ["a"]), ("z", "exists", None)], "x=abc,y==jkl,z!=a,z"),
    ([("x", "gt", ["2"]), ("y", "lt", ["8"]), ("z", "exists", None)], "x>2,y<8,z"),
], ids=["in-notin-exists", "notin-notequals-doesnotexist", "one-valued-sets", "equals-spellings", "gt-lt"])
def test_to_string(reqs: list[tuple[str, str, list[str] | None]], want: str) -> None:
    # TestToString: the selector printed from its requirements; the same text parses back to it
    assert str(parse_label_selector(want)) == want
    metav1 = {"in": "In", "notin": "NotIn", "exists": "Exists", "!": "DoesNotExist", "gt": "Gt", "lt": "Lt"}
    if all(op in metav1 for _, op, _ in reqs):  # the ones LabelSelector.add can spell
        sel = LabelSelector()
        for key, op, values in reqs:
            sel = sel.add(key, metav1[op], values)
        assert str(sel) == want


@pytest.mark.parametrize(("labels", "reqs", "want"), [
    ({"x": "foo", "y": "baz"}, [("x", "in", ["foo"]), ("y", "notin", ["alpha"])], True),
    ({"x": "foo", "y": "baz"}, [("x", "in", ["foo"]), ("y", "in", ["alpha"])], False),
    ({"y": ""}, [("x", "notin", [""]), ("y", "exists", None)], True),
    ({"y": ""}, [("x", "!", None), ("y", "exists", None)], True),
    ({"y": ""}, [("x", "notin", [""]), ("y", "!", None)], False),
    ({"y": "baz"}, [("x", "in", [""])], False),
    ({"z": "2"}, [("z", "gt", ["1"])], True),
    ({"z": "v2"}, [("z", "gt", ["1"])], False),
    # strconv.ParseInt reads the label value: no underscores, blanks or non-ASCII digits, int64 only
    ({"z": "1_0"}, [("z", "gt", ["1"])], False),
    ({"z": "+5"}, [("z", "gt", ["1"])], True),
    ({"z": "99999999999999999999"}, [("z", "gt", ["1"])], False),
], ids=["in-and-notin", "in-and-in", "notin-empty-and-exists", "doesnotexist-and-exists",
        "notin-empty-and-doesnotexist", "in-empty", "gt", "gt-not-a-number",
        "extra:gt-underscore-not-a-number", "extra:gt-plus-sign", "extra:gt-beyond-int64"])
def test_requirement_selector_matching(labels: dict[str, str], reqs: list[tuple[str, str, list[str] | None]],
                                       want: bool) -> None:
    sel = LabelSelector(new_requirement(k, op, v) for k, op, v in reqs)
    assert sel.matches(labels) is want


def _r(key: str, op: int, *values: str) -> tuple[str, int, Any]:
    if op in (OP_EXISTS, OP_DOES_NOT_EXIST):
        return (key, op, None)
    if op in (OP_GT, OP_LT):
        return (key, op, int(values[0]))
    return (key, op, frozenset(values))


SET_SELECTOR_PARSER: list[tuple[str, list[tuple[str, int, Any]] | None, str | None]] = [
    ("", [], None),
    ("\rx", [_r("x", OP_EXISTS)], None),
    ("this-is-a-dns.domain.com/key-with-dash", [_r("this-is-a-dns.domain.com/key-with-dash", OP_EXISTS)], None),
    ("this-is-another-dns.domain.com/key-with-dash in (so,what)",
     [_r("this-is-another-dns.domain.com/key-with-dash", OP_IN, "so", "what")], None),
    ("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
     [_r("0.1.2.domain/99", OP_NOT_IN, "10.10.100.1", "tick.tack.clock")], None),
    ("foo  in\t (abc)", [_r("foo", OP_IN, "abc")], None),
    ("x notin\n (abc)", [_r("x", OP_NOT_IN, "abc")], None),
    ("x  notin\t\t\t(abc,def)", [_r("x", OP_NOT_IN, "abc", "def")], None),
    ("x in (abc,def)", [_r("x", OP_IN, "abc", "def")], None),
    ("x in (abc,)", [_r("x", OP_IN, "abc", "")], None),
    ("x in ()", [_r("x", OP_IN, "")], None),
    ("x notin (abc,,def),bar,z in (),w",
     [_r("bar", OP_EXISTS), _r("w", OP_EXISTS), _r("x", OP_NOT_IN, "abc", "", "def"), _r("z", OP_IN, "")], None),
    ("x,y in (a)", [_r("x", OP_EXISTS), _r("y", OP_IN, "a")], None),
    ("x=a", [_r("x", OP_IN, "a")], None),
    ("x>1", [_r("x", OP_GT, "1")], None),
    ("x<7", [_r("x", OP_LT, "7")], None),
    ("x=a,y!=b", [_r("x", OP_IN, "a"), _r("y", OP_NOT_IN, "b")], None),
    ("x=a,y!=b,z in (h,i,j)", [_r("x", OP_IN, "a"), _r("y", OP_NOT_IN, "b"), _r("z", OP_IN, "h", "i", "j")], None),
    ("x=a||y=b", None, REQ + f'values[0][x]: Invalid value: "a||y": {LABEL_VALUE}'),
    ("x,,y", None, "found ',', expected: identifier after ','"),
    (",x,y", None, "found ',', expected: !, identifier, or 'end of string'"),
    ("x nott in (y)", None, REQ + f"found 'nott', expected: {BINARY_OPS}"),
    ("x notin ( )", [_r("x", OP_NOT_IN, "")], None),
    ("x notin (, a)", [_r("x", OP_NOT_IN, "", "a")], None),
    ("a in (xyz),", None, "found '', expected: identifier after ','"),
    ("a in (xyz)b notin ()", None, "found 'b', expected: ',' or 'end of string'"),
    ("a ", [_r("a", OP_EXISTS)], None),
    ("a in (x,y,notin, z,in)", [_r("a", OP_IN, "in", "notin", "x", "y", "z")], None),  # 'in' as a value
    ("a in (xyz abc)", None, REQ + "found 'abc', expected: ',' or ')'"),  # no comma
    ("a notin(", None, REQ + "found '', expected: ',', ')' or identifier"),  # badly formed
    ("a (", None, REQ + f"found '(', expected: {BINARY_OPS}"),  # cpar
    ("(", None, "found '(', expected: !, identifier, or 'end of string'"),  # opar
]


@pytest.mark.parametrize(("s", "want", "error"), SET_SELECTOR_PARSER, ids=[repr(c[0]) for c in SET_SELECTOR_PARSER])
def test_set_selector_parser(s: str, want: list[tuple[str, int, Any]] | None, error: str | None) -> None:
    if error is not None:
        assert parse_error(s) == error
    else:
        assert list(parse_label_selector(s).requirements) == want


def test_add() -> None:
    # TestAdd: keyInOperator, then keyEqualsOperator (Equals is the one-valued In here)
    sel = LabelSelector().add("key", "In", ["value"])
    assert sel.requirements == (("key", OP_IN, frozenset({"value"})),)
    sel = sel.add("key2", "In", ["value2"])
    assert sel.requirements == (("key", OP_IN, frozenset({"value"})), ("key2", OP_IN, frozenset({"value2"})))


@pytest.mark.parametrize(("values", "want"), [
    ([], None),
    (["bar", "foo"], "x in (bar,foo)"),
    (["foo", "bar"], "x in (bar,foo)"),
    (["foo", "bar", "foo", "bar"], "x in (bar,bar,foo,foo)"),
], ids=["nil strings", "ordered strings", "unordered strings", "duplicated strings"])
def test_safe_sort_seen_through_string(values: list[str], want: str | None) -> None:
    # TestSafeSort: values print sorted, the selector's input is left as it was
    d = {"matchExpressions": [{"key": "x", "operator": "In", "values": list(values)}]}
    if want is None:
        with pytest.raises(ValueError):
            label_selector_from_dict(d)
    else:
        assert str(label_selector_from_dict(d)) == want
    assert d["matchExpressions"][0]["values"] == values


@pytest.mark.parametrize(("labels", "want"), [({}, ""), ({"app": "foo"}, "app=foo"),
                                              ({"app": "foo", "a": "b"}, "a=b,app=foo")],
                         ids=["empty", "app=foo", "a=b,app=foo"])
def test_set_selector_string(labels: dict[str, str], want: str) -> None:
    # TestSetSelectorString (and labels_test.go TestSetString: a Set prints as its selector)
    assert str(selector_from_set(labels)) == want


@pytest.mark.parametrize(("labels", "want"), [({"x": "y"}, "x=y"), ({"foo": "bar"}, "foo=bar"),
                                              ({"foo": "bar", "baz": "qup"}, "baz=qup,foo=bar")],
                         ids=["x=y", "foo=bar", "baz=qup,foo=bar"])
def test_labels_set_string(labels: dict[str, str], want: str) -> None:
    assert str(selector_from_set(labels)) == want


def test_validated_selector_from_set() -> None:
    # ValidatedSelectorFromSet validates as NewRequirement(k, Equals, v): a matchLabels entry
    sel = label_selector_from_dict({"matchLabels": {"key": "val"}})
    assert sel.requirements == (("key", OP_IN, frozenset({"val"})),) and str(sel) == "key=val"
    value = "axahm2EJ8Phiephe2eixohbee9eGeiyees1thuozi1xoh0GiuH3diewi8iem7Nui"
    with pytest.raises(ValueError) as e:
        label_selector_from_dict({"matchLabels": {"Key": value}})
    assert str(e.value) == f'values[0][Key]: Invalid value: "{value}": must be no more than 63 characters'


# label keys that break more than one rule: every problem joined by "; " (validation.IsQualifiedName)
@pytest.mark.parametrize(("s", "message"), [
    ("a/b/c", REQ + f'<nil>: Invalid value: "a/b/c": a qualified name {QNAME} with an optional DNS subdomain '
     "prefix and '/' (e.g. 'example.com/MyName')"),
    ("/a", REQ + '<nil>: Invalid value: "/a": prefix part must be non-empty'),
    ("a/", REQ + f'<nil>: Invalid value: "a/": name part must be non-empty; name part {QNAME}'),
    ("Foo.Com/a", REQ + f'<nil>: Invalid value: "Foo.Com/a": prefix part {SUBDOMAIN}'),
    ("a_b.c/-x", REQ + f'<nil>: Invalid value: "a_b.c/-x": prefix part {SUBDOMAIN}; name part {QNAME}'),
    ("x=" + "b" * 64 + "_", REQ + f'values[0][x]: Invalid value: "{"b" * 64}_": must be no more than 63 '
     f"characters; {LABEL_VALUE}"),
], ids=["extra:two-slashes", "extra:empty-prefix", "extra:empty-name", "extra:bad-prefix",
        "extra:bad-prefix-and-name", "extra:value-too-long-and-bad"])
def test_key_and_value_messages_join_every_problem(s: str, message: str) -> None:
    assert parse_error(s) == message


# the lexer's blanks are space, tab, CR and LF only; Go reads a NUL byte as the end of the input
@pytest.mark.parametrize(("s", "want"), [
    ("\x0bx", "error:" + REQ + f'<nil>: Invalid value: "\\vx": name part {QNAME}'),
    ("\u00a0x", "error:" + REQ + f'<nil>: Invalid value: "\\u00a0x": name part {QNAME}'),
    ("x=a\x00,garbage", "garbage,x=a"),  # inside a token: ends it, lexing goes on
    ("x=a \x00 garbage", "x=a"),  # at a token's start: the end of the input
], ids=["extra:vertical-tab-is-not-a-blank", "extra:nbsp-is-not-a-blank", "extra:nul-ends-a-token",
        "extra:nul-ends-the-input"])
def test_lexer_blanks_and_nul(s: str, want: str) -> None:
    test_lexer_sequence_and_parser_lookahead(s, want)


# =============================================================================================
# pkg/fields/selector_test.go
# =============================================================================================

FieldTerms = list[tuple[str, str, str]]

SPLIT_TERMS: list[tuple[str, FieldTerms | str]] = [
    # simple selectors
    ("a", "invalid selector: 'a'; can't understand 'a'"),
    ("a=avalue", [("a", "=", "avalue")]),
    ("a=avalue,b=bvalue", [("a", "=", "avalue"), ("b", "=", "bvalue")]),
    ("a=avalue,b==bvalue,c!=cvalue", [("a", "=", "avalue"), ("b", "=", "bvalue"), ("c", "!=", "cvalue")]),
    # empty terms
    ("", []),
    ("a=a,", [("a", "=", "a")]),
    (",a=a", [("a", "=", "a")]),
    # escaped values
    ("k=\\,,k2=v2", [("k", "=", ","), ("k2", "=", "v2")]),  # escaped comma in value
    ("k=\\\\,k2=v2", [("k", "=", "\\"), ("k2", "=", "v2")]),  # escaped backslash, unescaped comma
    ("k=\\\\\\,,k2=v2", [("k", "=", "\\,"), ("k2", "=", "v2")]),  # escaped backslash and comma
    ("k=\\a\\b\\", "invalid field selector: invalid escape sequence: \\a"),  # non-escape sequences
    ("k=\\", "invalid field selector: invalid escape sequence: \\"),  # orphan backslash
    # multi-byte
    ("함=수,목=록", [("함", "=", "수"), ("목", "=", "록")]),
]


@pytest.mark.parametrize(("s", "want"), SPLIT_TERMS, ids=[repr(c[0]) for c in SPLIT_TERMS])
def test_split_terms(s: str, want: FieldTerms | str) -> None:
    if isinstance(want, str):
        with pytest.raises(ValueError) as e:
            parse_field_selector(s)
        assert str(e.value) == want
    else:
        assert parse_field_selector(s) == want


SPLIT_TERM: list[tuple[str, FieldTerms | str]] = [
    ("a=value", [("a", "=", "value")]),
    ("b==value", [("b", "=", "value")]),
    ("c!=value", [("c", "!=", "value")]),
    ("", []),
    ("a", "invalid selector: 'a'; can't understand 'a'"),
    ("k=\\,", [("k", "=", ",")]),
    ("k=\\=", [("k", "=", "=")]),
    ("k=\\\\\\a\\b\\=\\,\\", "invalid field selector: invalid escape sequence: \\a"),
    ("함=수", [("함", "=", "수")]),
    # no escaping in the field name: the first operator splits, the rest is the value
    ("a\\=b=c", "invalid field selector: unescaped character in value: 61"),
    ("a!=b=c", "invalid field selector: unescaped character in value: 61"),
]


@pytest.mark.parametrize(("term", "want"), SPLIT_TERM, ids=[repr(c[0]) for c in SPLIT_TERM])
def test_split_term(term: str, want: FieldTerms | str) -> None:
    test_split_terms(term, want)


@pytest.mark.parametrize(("unescaped", "escaped"), [
    ("", ""), ("a", "a"), ("=", "\\="), (",", "\\,"), ("\\", "\\\\"), ("\\=\\,\\", "\\\\\\=\\\\\\,\\\\"),
], ids=["empty", "a", "=", ",", "backslash", "all-three"])
def test_escape_value_round_trip(unescaped: str, escaped: str) -> None:
    assert unescape_field_value(escaped) == unescaped
    assert parse_field_selector("k=" + escaped) == [("k", "=", unescaped)]


@pytest.mark.parametrize(("value", "message"), [
    ("\\", "invalid field selector: invalid escape sequence: \\"),  # orphan slash
    ("\\\\\\", "invalid field selector: invalid escape sequence: \\"),  # orphan slash
    ("\\a", "invalid field selector: invalid escape sequence: \\a"),  # unrecognized escape sequence
    ("a,b", "invalid field selector: unescaped character in value: 44"),
    ("a=b", "invalid field selector: unescaped character in value: 61"),
], ids=["orphan", "escaped-then-orphan", "unrecognized", "extra:unescaped-comma", "extra:unescaped-equals"])
def test_unescape_value_errors(value: str, message: str) -> None:
    with pytest.raises(ValueError) as e:
        unescape_field_value(value)
    assert str(e.value) == message


@pytest.mark.parametrize(("s", "want"), [
    ("x=a,y=b,z=c", [("x", "=", "a"), ("y", "=", "b"), ("z", "=", "c")]),
    ("", []),
    ("x!=a,y=b", [("x", "!=", "a"), ("y", "=", "b")]),
    ("x=a||y\\=b", [("x", "=", "a||y=b")]),
    ("x=a\\=\\=b", [("x", "=", "a==b")]),
    # bad strings
    ("x=a||y=b", "invalid field selector: unescaped character in value: 61"),
    ("x==a==b", "invalid field selector: unescaped character in value: 61"),
    ("x=a,b", "invalid selector: 'x=a,b'; can't understand 'b'"),
    ("x in (a)", "invalid selector: 'x in (a)'; can't understand 'x in (a)'"),
    ("x in (a,b,c)", "invalid selector: 'x in (a,b,c)'; can't understand 'b'"),  # terms checked sorted
    ("x", "invalid selector: 'x'; can't understand 'x'"),
    (" ", "invalid selector: ' '; can't understand ' '"),
], ids=lambda v: repr(v) if isinstance(v, str) else None)
def test_field_selector_parse(s: str, want: FieldTerms | str) -> None:
    test_split_terms(s, want)


def test_field_deterministic_parse() -> None:
    assert sorted(parse_field_selector("x=a,a=x")) == sorted(parse_field_selector("a=x,x=a"))


def _field_matches(s: str, fields: dict[str, str]) -> bool:
    """What the request core does with the terms (hasTerm: equal, notHasTerm: different; a field
    not set reads as "")."""
    return all((fields.get(f, "") == v) == (op == "=") for f, op, v in parse_field_selector(s))


FIELDSET = {"foo": "bar", "baz": "blah", "complex": "=value\\,\\"}


@pytest.mark.parametrize(("s", "fields", "want"), [
    ("", {"x": "y"}, True),
    ("x=y", {"x": "y"}, True),
    ("x=y,z=w", {"x": "y", "z": "w"}, True),
    ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
    ("notin=in", {"notin": "in"}, True),
    ("x=y", {"x": "z"}, False),
    ("x=y,z=w", {"x": "w", "z": "w"}, False),
    ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
    ("foo=bar", FIELDSET, True),
    ("baz=blah", FIELDSET, True),
    ("foo=bar,baz=blah", FIELDSET, True),
    ("foo=bar,baz=blah,complex=\\=value\\\\\\,\\\\", FIELDSET, True),
    ("foo=blah", FIELDSET, False),
    ("baz=bar", FIELDSET, False),
    ("foo=bar,foobar=bar,baz=blah", FIELDSET, False),
    # TestOneTermEqualSelector
    ("x=y", {"x": "y"}, True),
    ("x=y", {"x": "z"}, False),
], ids=lambda v: repr(v) if isinstance(v, str) else None)
def test_field_selector_matches(s: str, fields: dict[str, str], want: bool) -> None:
    assert _field_matches(s, fields) is want


# =============================================================================================
# pkg/apis/meta/v1/helpers_test.go
# =============================================================================================

MATCH_EXPRESSIONS = [{"key": "baz", "operator": "In", "values": ["qux", "norf"]}]


@pytest.mark.parametrize(("sel", "want", "error"), [
    (None, "", None),
    ({}, "", None),
    ({"matchLabels": {"foo": "bar"}}, "foo=bar", None),
    ({"matchExpressions": MATCH_EXPRESSIONS}, "baz in (norf,qux)", None),
    ({"matchLabels": {"foo": "bar"}, "matchExpressions": MATCH_EXPRESSIONS}, "baz in (norf,qux),foo=bar", None),
    ({"matchExpressions": [{"key": "baz", "operator": "Exists", "values": ["qux", "norf"]}]}, None,
     'values: Invalid value: []string{"qux", "norf"}: values set must be empty for exists and does not exist'),
], ids=["nil", "empty", "matchLabels", "matchExpressions", "both", "exists-with-values"])
def test_label_selector_as_selector(sel: dict[str, Any] | None, want: str | None, error: str | None) -> None:
    before = repr(sel)
    if error is not None:
        with pytest.raises(ValueError) as e:
            label_selector_from_dict(sel)
        assert str(e.value) == error
    else:
        out = label_selector_from_dict(sel)
        assert str(out) == want
        assert out.matches_nothing is (sel is None)
        assert out.empty is (sel == {})
        # the string form parses back to the same selector, and the metav1 printer agrees
        if sel:
            assert parse_label_selector(want).requirements == out.requirements
            assert label_selector_string(sel) == want
    assert repr(sel) == before  # the input is not modified


# =============================================================================================
# The API-visible side: ?labelSelector= / ?fieldSelector= on a LIST (same core as a WATCH)
# =============================================================================================


@pytest.fixture
async def core() -> AsyncIterator[ApiCore]:
    clock = FakeClock()
    store = SqliteStore(":memory:", compact_interval=0, clock=clock)
    await store.start()
    c = ApiCore(store, ResourceRegistry(), clock=clock, rng=random.Random(7))
    namespaces = c.registry.get("", "v1", "namespaces")
    assert namespaces is not None
    await c.create(namespaces, None, {"metadata": {"name": "default"}})
    cms = c.registry.get("", "v1", "configmaps")
    assert cms is not None
    for name, labels in [("a1", {"app": "a", "n": "1"}), ("a2", {"app": "a", "tier": "db", "n": "10"}),
                         ("b1", {"app": "b", "n": "x"}), ("c1", {"app": "", "n": "0"}), ("e1", {})]:
        await c.create(cms, "default", {"metadata": {"name": name, "labels": labels}})
    yield c
    await store.close()


def _names(core: ApiCore, **kw: str) -> list[str]:
    info = core.registry.get("", "v1", "configmaps")
    assert info is not None
    lst = core.list(info, "default", ListOptions(**kw))  # type: ignore[arg-type]
    return [o["metadata"]["name"] for o in lst["items"]]


@pytest.mark.parametrize(("params", "want"), [
    ({"label_selector": "app=a"}, ["a1", "a2"]),
    ({"label_selector": "app==a,tier=db"}, ["a2"]),
    ({"label_selector": "app!=a"}, ["b1", "c1", "e1"]),
    ({"label_selector": "app in (a,b)"}, ["a1", "a2", "b1"]),
    ({"label_selector": "app in (b,)"}, ["b1", "c1"]),
    ({"label_selector": "app notin (a)"}, ["b1", "c1", "e1"]),
    ({"label_selector": "tier"}, ["a2"]),
    ({"label_selector": "!tier"}, ["a1", "b1", "c1", "e1"]),
    ({"label_selector": "n>1"}, ["a2"]),
    ({"label_selector": "n<1"}, ["c1"]),
    ({"label_selector": "app="}, ["c1"]),
    ({"label_selector": " app = a , n = 1 "}, ["a1"]),
    ({"field_selector": "metadata.name=a1"}, ["a1"]),
    ({"field_selector": "metadata.name==a1"}, ["a1"]),
    ({"field_selector": "metadata.name!=a1"}, ["a2", "b1", "c1", "e1"]),
    ({"field_selector": "metadata.name=e\\=q"}, []),  # a valid selector no name matches
    ({"field_selector": "metadata.name!=a1,metadata.name!=a2,"}, ["b1", "c1", "e1"]),
    ({"field_selector": "metadata.namespace=default", "label_selector": "app=b"}, ["b1"]),
], ids=lambda v: None if isinstance(v, list) else repr(v))
async def test_list_with_selectors(core: ApiCore, params: dict[str, str], want: list[str]) -> None:
    assert _names(core, **params) == want


@pytest.mark.parametrize(("params", "message"), [
    ({"field_selector": "spec.bogus=x"}, "field label not supported: spec.bogus"),
    pytest.param({"label_selector": "a b"}, REQ + f"found 'b', expected: {BINARY_OPS}", id="label:'a b'"),
    pytest.param({"label_selector": "-a=b"}, REQ + f'<nil>: Invalid value: "-a": name part {QNAME}', id="label:'-a=b'"),
    pytest.param({"label_selector": "a,"}, "found '', expected: identifier after ','", id="label:'a,'"),
    pytest.param({"label_selector": "a in (b"}, REQ + "found '', expected: ',' or ')'", id="label:'a in (b'"),
    pytest.param({"field_selector": "foo"}, "invalid selector: 'foo'; can't understand 'foo'", id="field:'foo'"),
    pytest.param({"field_selector": "metadata.name=a\\b"}, "invalid field selector: invalid escape sequence: \\b", id="field:bad-escape"),
    pytest.param({"field_selector": "metadata.name=a=b"}, "invalid field selector: unescaped character in value: 61", id="field:unescaped-equals"),
], ids=lambda v: repr(v) if isinstance(v, dict) else None)
async def test_bad_selectors_are_400_with_upstream_message(core: ApiCore, params: dict[str, str],
                                                           message: str) -> None:
    info = core.registry.get("", "v1", "configmaps")
    assert info is not None
    with pytest.raises(BadRequestError) as e:
        core.list(info, "default", ListOptions(**params))  # type: ignore[arg-type]
    assert e.value.message == message
    # a WATCH compiles the same selectors before its stream starts
    with pytest.raises(BadRequestError) as e2:
        core.compile_selectors(info, params.get("label_selector"), params.get("field_selector"))
    assert e2.value.message == message
