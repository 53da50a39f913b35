"""minik3s.api.helpers.go_regexp: Go's RE2 semantics and error texts for user-supplied patterns."""

from __future__ import annotations

import time

import pytest

from minik3s.api.helpers.go_regexp import GoRegexpError, compile_go


@pytest.mark.parametrize(("pattern", "message"), [
    ("(", "error parsing regexp: missing closing ): `(`"),
    ("a)", "error parsing regexp: unexpected ): `a)`"),
    ("(?=a)b", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
    ("a**", "error parsing regexp: invalid nested repetition operator: `**`"),
    ("[z-a]", "error parsing regexp: invalid character class range: `z-a`"),
    ("x{2000}", "error parsing regexp: invalid repeat count: `{2000}`"),
    ("a\\", "error parsing regexp: trailing backslash at end of expression: ``"),
])
def test_patterns_go_refuses_carry_gos_message(pattern: str, message: str) -> None:
    with pytest.raises(GoRegexpError) as e:
        compile_go(pattern)
    assert str(e.value) == message


def test_matching_time_is_linear_in_the_input() -> None:
    rx = compile_go("^(a+)+$")
    started = time.perf_counter()
    assert rx.search("a" * 100_000 + "b") is None
    assert time.perf_counter() - started < 1.0  # Python's re: exponential (minutes at 30 characters)
    assert compile_go("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").search("my-name") is not None
