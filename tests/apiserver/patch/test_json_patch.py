"""RFC 6902 JSON patch: the RFC's own Appendix A examples plus kube-apiserver's error classes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.patch import PatchError
from apiserver.patch.json_patch import apply_json_patch


@pytest.mark.parametrize(
    ("doc", "ops", "expected"),
    [
        pytest.param(
            {"foo": "bar"},
            [{"op": "add", "path": "/baz", "value": "qux"}],
            {"baz": "qux", "foo": "bar"},
            id="a1-add-object-member",
        ),
        pytest.param(
            {"foo": ["bar", "baz"]},
            [{"op": "add", "path": "/foo/1", "value": "qux"}],
            {"foo": ["bar", "qux", "baz"]},
            id="a2-add-array-element",
        ),
        pytest.param(
            {"baz": "qux", "foo": "bar"},
            [{"op": "remove", "path": "/baz"}],
            {"foo": "bar"},
            id="a3-remove-object-member",
        ),
        pytest.param(
            {"foo": ["bar", "qux", "baz"]},
            [{"op": "remove", "path": "/foo/1"}],
            {"foo": ["bar", "baz"]},
            id="a4-remove-array-element",
        ),
        pytest.param(
            {"baz": "qux", "foo": "bar"},
            [{"op": "replace", "path": "/baz", "value": "boo"}],
            {"baz": "boo", "foo": "bar"},
            id="a5-replace-value",
        ),
        pytest.param(
            {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
            [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
            {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
            id="a6-move-value",
        ),
        pytest.param(
            {"foo": ["all", "grass", "cows", "eat"]},
            [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
            {"foo": ["all", "cows", "eat", "grass"]},
            id="a7-move-array-element",
        ),
        pytest.param(
            {"baz": "qux", "foo": ["a", 2, "c"]},
            [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
            {"baz": "qux", "foo": ["a", 2, "c"]},
            id="a8-test-succeeds",
        ),
        pytest.param(
            {"foo": "bar"},
            [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
            {"foo": "bar", "child": {"grandchild": {}}},
            id="a10-add-nested-member-object",
        ),
        pytest.param(
            {"foo": "bar"},
            [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}],
            {"foo": "bar", "baz": "qux"},
            id="a11-unrecognized-members-ignored",
        ),
        pytest.param(
            {"/": 9, "~1": 10},
            [{"op": "test", "path": "/~01", "value": 10}],
            {"/": 9, "~1": 10},
            id="a14-tilde-escape-ordering",
        ),
        pytest.param(
            {"foo": ["bar"]},
            [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
            {"foo": ["bar", ["abc", "def"]]},
            id="a16-append-array-value-with-dash",
        ),
        pytest.param(
            {"a/b": {"c": 1}},
            [{"op": "copy", "from": "/a~1b", "path": "/d"}],
            {"a/b": {"c": 1}, "d": {"c": 1}},
            id="copy-with-slash-escape",
        ),
        pytest.param(
            {"metadata": {"labels": {"a": "1"}}},
            [
                {"op": "replace", "path": "/metadata/labels/a", "value": "2"},
                {"op": "add", "path": "/metadata/labels/b", "value": "3"},
            ],
            {"metadata": {"labels": {"a": "2", "b": "3"}}},
            id="kubectl-style-label-edit",
        ),
        pytest.param(
            {"spec": {"taints": [{"key": "a"}, {"key": "b"}]}},
            [{"op": "remove", "path": "/spec/taints/0"}],
            {"spec": {"taints": [{"key": "b"}]}},
            id="remove-first-taint-by-index",
        ),
    ],
)
def test_rfc6902_examples_apply(doc: dict[str, Any], ops: list[Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(doc)
    assert apply_json_patch(doc, ops) == expected
    assert doc == before  # never mutated


@pytest.mark.parametrize(
    ("doc", "ops", "code", "message"),
    [
        pytest.param(
            {"baz": "qux"},
            [{"op": "test", "path": "/baz", "value": "bar"}],
            422,
            "testing value /baz failed: test failed",
            id="a9-test-failure-is-422",
        ),
        pytest.param(
            {"foo": "bar"},
            [{"op": "add", "path": "/baz/bat", "value": "qux"}],
            422,
            'add operation does not apply: doc is missing path: "/baz/bat": missing value',
            id="a12-add-to-nonexistent-target-is-422",
        ),
        pytest.param(
            {"/": 9, "~1": 10},
            [{"op": "test", "path": "/~01", "value": "10"}],
            422,
            "testing value /~01 failed: test failed",
            id="a15-string-is-not-number",
        ),
        pytest.param(
            {"a": 1},
            [{"op": "remove", "path": "/b"}],
            422,
            "error in remove for path: '/b': Unable to remove nonexistent key: b: missing value",
            id="remove-missing-key-is-422",
        ),
        pytest.param(
            {"a": 1},
            [{"op": "replace", "path": "/b", "value": 2}],
            422,
            "replace operation does not apply: doc is missing key: /b: missing value",
            id="replace-missing-key-is-422",
        ),
        pytest.param(
            {"a": [1]},
            [{"op": "add", "path": "/a/5", "value": 2}],
            422,
            "Unable to access invalid index: 5: invalid index referenced",
            id="index-out-of-range-is-422",
        ),
        pytest.param(
            {"a": 1},
            [{"op": "frobnicate", "path": "/a"}],
            422,
            "Unexpected kind: frobnicate",
            id="unknown-op-is-422",
        ),
        pytest.param(
            {"a": 1},
            {"op": "add", "path": "/a", "value": 1},
            400,
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
            id="patch-not-a-list-is-400",
        ),
        pytest.param(
            {"a": 1},
            ["add"],
            400,
            "json: cannot unmarshal string into Go value of type jsonpatch.Operation",
            id="operation-not-an-object-is-400",
        ),
        pytest.param(
            {"a": 1},
            [{"op": "test", "path": "/a", "value": 1}] * 10001,
            413,
            "The allowed maximum operations in a JSON patch is 10000, got 10001",
            id="more-than-10000-operations-is-413",
        ),
        pytest.param(
            {"a": True},
            [{"op": "test", "path": "/a", "value": 1}],
            422,
            "testing value /a failed: test failed",
            id="bool-is-not-number",
        ),
    ],
)
def test_unappliable_patches_fail_like_kube_apiserver(
    doc: dict[str, Any], ops: Any, code: int, message: str
) -> None:
    with pytest.raises(PatchError) as info:
        apply_json_patch(doc, ops)
    assert (info.value.code, info.value.message) == (code, message)


def test_422_renders_as_generic_invalid_status_with_cause() -> None:
    with pytest.raises(PatchError) as info:
        apply_json_patch({"spec": {"replicas": 1}}, [{"op": "test", "path": "/spec/replicas", "value": 2}])
    status = info.value.to_api_error().to_status()
    assert status["code"] == 422
    assert status["reason"] == "Invalid"
    assert status["message"] == "the server rejected our request due to an error in our request"
    assert status["details"]["causes"] == [
        {"reason": "UnexpectedServerResponse", "message": "testing value /spec/replicas failed: test failed"}
    ]


def test_400_renders_as_bad_request() -> None:
    with pytest.raises(PatchError) as info:
        apply_json_patch({}, "nope")
    assert info.value.to_api_error().to_status()["reason"] == "BadRequest"


def test_failed_patch_leaves_document_untouched() -> None:
    doc = {"a": [1, 2]}
    with pytest.raises(PatchError):
        apply_json_patch(doc, [{"op": "remove", "path": "/a/0"}, {"op": "test", "path": "/a/0", "value": 9}])
    assert doc == {"a": [1, 2]}
