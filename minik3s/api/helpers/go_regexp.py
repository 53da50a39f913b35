"""Regular expressions as Go's `regexp` package runs them (layer L2): RE2 syntax, matching in
time linear in the input, and Go's error texts.

Why: Kubernetes evaluates user-supplied patterns (a CRD schema's `pattern`, CEL's `matches`,
`find` and `findAll` in validation rules and admission policies) with Go's RE2-based engine.
Python's `re` backtracks: `^(a+)+$` against 30 `a`s and a `b` takes minutes and, run on the event
loop, freezes every client of the server. google-re2 (already required by cel-python) is the
same engine family as Go's; patterns Go refuses (`(?=...)`, backreferences) are refused here
too, with Go's message: `error parsing regexp: missing closing ): `(``.

    compile_go("^[a-z]+$").search("abc")      -> a match
    compile_go("(")                            -> raises GoRegexpError("error parsing regexp: ...")
"""

from __future__ import annotations

import functools
from typing import Any

import re2

__all__ = ["GoRegexpError", "compile_go"]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every refused pattern to stderr

# RE2's error codes (re2/regexp.cc) -> Go's regexp/syntax ErrorCode texts
_GO_CODES = {
    "missing )": "missing closing )",
    "missing ]": "missing closing ]",
    "unexpected )": "unexpected )",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "bad repetition operator": "invalid nested repetition operator",
    "missing argument to repetition operator": "missing argument to repetition operator",
    "bad repetition size": "invalid repeat count",
    "invalid repetition size": "invalid repeat count",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "invalid named capture group": "invalid named capture",
    "duplicate capture group name": "duplicate capture group name",
    "trailing \\": "trailing backslash at end of expression",
    "invalid UTF-8": "invalid UTF-8",
    "pattern too large - compile failed": "expression too large",
}


class GoRegexpError(ValueError):
    """A pattern Go's regexp.Compile refuses; `str()` is Go's error text."""


@functools.lru_cache(maxsize=1024)
def compile_go(pattern: str) -> Any:
    """The compiled pattern (a `re2` pattern: `search`, `finditer`, `fullmatch`), memoised;
    raises GoRegexpError with Go's text for a pattern Go refuses."""
    try:
        return re2.compile(pattern, options=_OPTIONS)
    except re2.error as e:
        raise GoRegexpError(_go_message(e, pattern)) from None


def _go_message(err: Exception, pattern: str) -> str:
    raw = err.args[0] if err.args else b""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    code, sep, arg = text.partition(": ")
    if not sep:
        code, arg = text, pattern
    if code == "trailing \\":
        arg = ""  # Go's ErrTrailingBackslash names no fragment
    return f"error parsing regexp: {_GO_CODES.get(code, code)}: `{arg}`"
