"""Name, label, annotation and selector rules with upstream's messages (apimachinery validation)."""

import pytest

from minik3s.api.errors import invalid as invalid_error
from minik3s.api.validation import (
    DNS1123_LABEL_MSG,
    DNS1123_SUBDOMAIN_MSG,
    LABEL_VALUE_MSG,
    QNAME_CHAR_MSG,
    go_value,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    not_supported,
    required,
    validate_annotations,
    validate_int_or_percent,
    validate_label_selector,
    validate_labels,
    validate_object_meta,
)


def rendered(errs):
    return [f"{e['field']}: {e['message']}" for e in errs]


@pytest.mark.parametrize(
    "value, ok",
    [
        pytest.param("web-1", True, id="label-with-dash"),
        pytest.param("a.b.c", True, id="dotted-subdomain"),
        pytest.param("Bad_Name", False, id="uppercase-and-underscore-rejected"),
        pytest.param("-lead", False, id="leading-dash-rejected"),
        pytest.param("x" * 253, True, id="253-chars-allowed"),
        pytest.param("x" * 254, False, id="254-chars-too-long"),
    ],
)
def test_dns1123_subdomain(value, ok):
    assert (is_dns1123_subdomain(value) == []) is ok


def test_subdomain_message_is_upstreams():
    assert is_dns1123_subdomain("Bad_Name") == [DNS1123_SUBDOMAIN_MSG]
    assert DNS1123_SUBDOMAIN_MSG.startswith("a lowercase RFC 1123 subdomain must consist of lower case")
    assert DNS1123_SUBDOMAIN_MSG.endswith(
        "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )


@pytest.mark.parametrize(
    "value, errors",
    [
        pytest.param("team-a", [], id="namespace-like-label-ok"),
        # a valid subdomain that is no label: IsDNS1123Label names the dots
        pytest.param("a.b", ["must not contain dots"], id="dot-not-allowed-in-label"),
        pytest.param("A.b", [DNS1123_LABEL_MSG], id="dot-and-upper-case-get-the-regex-message"),
        pytest.param("x" * 64, ["must be no more than 63 characters"], id="64-chars-too-long"),
    ],
)
def test_dns1123_label(value, errors):
    assert is_dns1123_label(value) == errors


@pytest.mark.parametrize(
    "value, errors",
    [
        pytest.param("app", [], id="plain-name"),
        pytest.param("example.com/My_Name.v1", [], id="prefixed-name"),
        pytest.param("kubernetes.io/hostname", [], id="well-known-key"),
        pytest.param("/x", ["prefix part must be non-empty"], id="empty-prefix"),
        # upstream's IsQualifiedName reports an empty name part twice: empty, and not matching the pattern
        pytest.param("x/", ["name part must be non-empty", "name part " + QNAME_CHAR_MSG], id="empty-name-part"),
        pytest.param("", ["name part must be non-empty", "name part " + QNAME_CHAR_MSG], id="empty"),
        pytest.param("Foo.com/x", ["prefix part " + DNS1123_SUBDOMAIN_MSG], id="uppercase-prefix"),
        pytest.param("x" * 64, ["name part must be no more than 63 characters"], id="long-name-part"),
    ],
)
def test_qualified_name(value, errors):
    assert is_qualified_name(value) == errors


def test_qualified_name_with_two_slashes_uses_whole_name_message():
    (msg,) = is_qualified_name("a/b/c")
    assert msg.startswith("a qualified name must consist of alphanumeric characters")
    assert msg.endswith("with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")


@pytest.mark.parametrize(
    "value, ok",
    [
        pytest.param("", True, id="empty-value-ok"),
        pytest.param("v1.2_x-y", True, id="all-allowed-chars"),
        pytest.param("-v", False, id="leading-dash"),
        pytest.param("a b", False, id="space"),
        pytest.param("x" * 64, False, id="too-long"),
    ],
)
def test_label_value(value, ok):
    assert (is_valid_label_value(value) == []) is ok


def test_bad_label_value_reports_at_labels_path():
    errs = validate_labels({"app": "bad value"}, "metadata.labels")
    assert rendered(errs) == [f'metadata.labels: Invalid value: "bad value": {LABEL_VALUE_MSG}']


def test_valid_entries_between_bad_ones_keep_every_error_in_order():
    # the valid entries take a shortcut; the bad ones around them are reported as before
    labels = {"ok": "v", "bad key": "v", "app": "web", "k": "bad value", "n": 5, "last": "x"}
    assert rendered(validate_labels(labels, "metadata.labels")) == [
        'metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
        "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        f'metadata.labels: Invalid value: "bad value": {LABEL_VALUE_MSG}',
        "metadata.labels: Invalid value: 5: must be a string",
    ]
    annotations = {"a": "x" * (128 * 1024), "bad key": "v", "b": 1, "c": "x" * (128 * 1024)}
    assert [e["message"].split(":")[0] for e in validate_annotations(annotations, "metadata.annotations")] == [
        "Invalid value", "Invalid value", "Too long"]
    meta = {"name": "Bad_Name", "labels": {"a": "b", "c": "bad value"}, "annotations": {"ok": "v"},
            "finalizers": ["bad key"], "ownerReferences": [{}]}
    assert [e["field"] for e in validate_object_meta(meta)] == [
        "metadata.name", "metadata.labels", "metadata.finalizers", "metadata.ownerReferences.apiVersion",
        "metadata.ownerReferences.kind", "metadata.ownerReferences.name", "metadata.ownerReferences.uid"]


def test_annotations_total_size_limit_is_256k():
    assert validate_annotations({"a": "x" * (256 * 1024 - 1)}, "metadata.annotations") == []
    errs = validate_annotations({"a": "x" * (256 * 1024)}, "metadata.annotations")
    assert rendered(errs) == ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    assert errs[0]["reason"] == "FieldValueTooLong"


def test_annotation_keys_checked_case_insensitively():
    assert validate_annotations({"Example.COM/Key": "v"}, "metadata.annotations") == []
    assert validate_annotations({"bad key": "v"}, "metadata.annotations") != []


def test_object_meta_name_format_per_kind():
    assert rendered(validate_object_meta({"name": "Bad_Name"})) == [
        f'metadata.name: Invalid value: "Bad_Name": {DNS1123_SUBDOMAIN_MSG}'
    ]
    assert validate_object_meta({"name": "a.b"}, name_format="label")[0]["message"] == \
        'Invalid value: "a.b": must not contain dots'
    assert validate_object_meta({"name": "a_b"}, name_format="label")[0]["message"].endswith(DNS1123_LABEL_MSG)
    assert validate_object_meta({"generateName": "web-"}) == []


def test_owner_references_need_fields_and_one_controller():
    refs = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "a", "uid": "1", "controller": True},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "b", "uid": "2", "controller": True},
        {"apiVersion": "", "kind": "ReplicaSet", "name": "c", "uid": "3"},
    ]
    fields = [e["field"] for e in validate_object_meta({"name": "x", "ownerReferences": refs})]
    assert fields == ["metadata.ownerReferences.apiVersion", "metadata.ownerReferences"]


@pytest.mark.parametrize(
    "selector, expected",
    [
        pytest.param({"matchLabels": {"a": "b"}}, [], id="match-labels-ok"),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "In"}]},
            ["s.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
            id="in-without-values",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            ["s.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
            id="exists-with-values",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "Foo"}]},
            ['s.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator'],
            id="bad-operator",
        ),
    ],
)
def test_label_selector(selector, expected):
    assert rendered(validate_label_selector(selector, "s")) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        pytest.param("25%", [], id="percent-ok"),
        pytest.param(3, [], id="int-ok"),
        pytest.param(-1, ["f: Invalid value: -1: must be greater than or equal to 0"], id="negative-int"),
        pytest.param("25", ["f: Invalid value: \"25\": a valid percent string must be a numeric string followed by "
                            "an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"],
                     id="percent-without-sign"),
        pytest.param("101%", ['f: Invalid value: "101%": must not be greater than 100%'], id="over-100-percent"),
    ],
)
def test_int_or_percent(value, expected):
    assert rendered(validate_int_or_percent(value, "f", max_100_percent=True)) == expected


def test_go_value_rendering():
    assert go_value("a") == '"a"'
    assert go_value(-1) == "-1"
    assert go_value(True) == "true"
    assert go_value(None) == "null"
    assert go_value({"b": "2", "a": "1"}) == 'map[string]string{"a":"1", "b":"2"}'


def test_causes_render_into_upstream_invalid_message():
    causes = [required("spec.containers"), not_supported("spec.restartPolicy", "Sometimes", ("Always", "OnFailure", "Never"))]
    err = invalid_error("Pod", "bad1", causes)
    assert err.code == 422
    assert err.message == (
        'Pod "bad1" is invalid: [spec.containers: Required value, spec.restartPolicy: Unsupported value: '
        '"Sometimes": supported values: "Always", "OnFailure", "Never"]'
    )


@pytest.mark.parametrize(
    "check, value",
    [
        pytest.param(is_dns1123_subdomain, "web-1\n", id="subdomain"),
        pytest.param(is_dns1123_label, "web-1\n", id="label"),
        pytest.param(is_qualified_name, "example.com/name\n", id="qualified-name"),
        pytest.param(is_valid_label_value, "blue\n", id="label-value"),
    ],
)
def test_a_trailing_newline_is_not_part_of_a_valid_name(check, value):
    # Go's `$` matches only at the end of the text; Python's also before a final newline
    assert check(value)
    assert not check(value[:-1])


def test_object_meta_rejects_a_name_ending_in_a_newline():
    errs = validate_object_meta({"name": "web-1\n"})
    assert [e["field"] for e in errs] == ["metadata.name"]
    assert errs[0]["message"] == f'Invalid value: "web-1\\n": {DNS1123_SUBDOMAIN_MSG}'
    assert validate_object_meta({"name": "web-1"}) == []
    assert validate_object_meta({"name": "a" * 253}) == []
    too_long = validate_object_meta({"name": "a" * 254})
    assert [e["field"] for e in too_long] == ["metadata.name"] and "253" in too_long[0]["message"]
