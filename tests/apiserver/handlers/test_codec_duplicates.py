"""Duplicate-key detection of JSON bodies (`codec.duplicate_fields`): the fast count must never
miss a duplicate, whatever quotes and colons the strings hold or how they are escaped."""

from __future__ import annotations

import orjson
import pytest

from apiserver.handlers import codec


@pytest.mark.parametrize(("raw", "expected"), [
    pytest.param(b'{"a": 1, "b": {"c": 2}}', [], id="plain"),
    pytest.param(b'{"a": "x\\":y", "b": 1}', [], id="quote-colon-in-a-string"),
    pytest.param(b'{"a": "x\\u0022:y", "b": 1}', [], id="escaped-quote-colon-in-a-string"),
    pytest.param(b'{"a" :1, "a": 2}', [("a", 'duplicate field "a"')], id="top-level"),
    pytest.param(b'{"s": {"p": true, "p": false}}', [("p", 'duplicate field "p"')], id="nested"),
    pytest.param(b'{"a": "x\\":y", "a": 1}', [("a", 'duplicate field "a"')], id="dup-with-quote-colon"),
    # an escaped quote-colon the re-encoding spells differently, plus a duplicate: still found
    pytest.param(b'{"a": "x\\u0022:y", "k": 1, "k": 2}', [("k", 'duplicate field "k"')], id="dup-with-escape"),
    pytest.param(b'{"a": "x\\u0022\\u003ay", "k": 1, "k": 2}', [("k", 'duplicate field "k"')],
                 id="dup-with-escaped-colon"),
])
def test_duplicates_found_exactly(raw: bytes, expected: list[tuple[str, str]]) -> None:
    found = codec.duplicate_fields(raw, "application/json", orjson.loads(raw))
    assert [(p, m) for p, m in found] == expected
