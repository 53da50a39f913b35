"""RFC 7386 JSON merge patch: every example of the RFC's Appendix A."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.patch.merge_patch import apply_merge_patch, merge_patch_value


@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [
        pytest.param({"a": "b"}, {"a": "c"}, {"a": "c"}, id="replace-member"),
        pytest.param({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}, id="add-member"),
        pytest.param({"a": "b"}, {"a": None}, {}, id="null-deletes-member"),
        pytest.param({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}, id="null-deletes-only-that-member"),
        pytest.param({"a": ["b"]}, {"a": "c"}, {"a": "c"}, id="scalar-replaces-list"),
        pytest.param({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}, id="list-replaces-scalar"),
        pytest.param(
            {"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}, id="nested-merge-and-delete"
        ),
        pytest.param({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}, id="lists-are-replaced-not-merged"),
        pytest.param(["a", "b"], ["c", "d"], ["c", "d"], id="list-document-replaced"),
        pytest.param({"a": "b"}, ["c"], ["c"], id="list-patch-replaces-object"),
        pytest.param({"a": "foo"}, None, None, id="null-patch-replaces-document"),
        pytest.param({"a": "foo"}, "bar", "bar", id="string-patch-replaces-document"),
        pytest.param({"e": None}, {"a": 1}, {"e": None, "a": 1}, id="existing-null-kept"),
        pytest.param([1, 2], {"a": "b", "c": None}, {"a": "b"}, id="object-patch-on-list-starts-empty"),
        pytest.param({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}, id="null-in-new-subtree-dropped"),
    ],
)
def test_rfc7386_appendix_a(target: Any, patch: Any, expected: Any) -> None:
    before = copy.deepcopy(target)
    assert merge_patch_value(target, patch) == expected
    assert target == before


@pytest.mark.parametrize(
    ("doc", "patch", "expected"),
    [
        pytest.param(
            {"metadata": {"labels": {"app": "x"}}},
            {"metadata": {"labels": {"zone": "a"}}},
            {"metadata": {"labels": {"app": "x", "zone": "a"}}},
            id="kubectl-label-adds",
        ),
        pytest.param(
            {"metadata": {"labels": {"app": "x", "zone": "a"}}},
            {"metadata": {"labels": {"zone": None}}},
            {"metadata": {"labels": {"app": "x"}}},
            id="kubectl-label-removes",
        ),
        pytest.param(
            {"spec": {"minMember": 2, "queue": "q"}},
            {"spec": {"minMember": 4}},
            {"spec": {"minMember": 4, "queue": "q"}},
            id="crd-apply-merge-patch",
        ),
    ],
)
def test_apply_merge_patch_on_objects(doc: dict[str, Any], patch: Any, expected: Any) -> None:
    before = copy.deepcopy(doc)
    result = apply_merge_patch(doc, patch)
    assert result == expected
    assert doc == before
    # the result shares nothing mutable with the input
    result.setdefault("metadata", {})["x"] = 1
    assert doc == before
