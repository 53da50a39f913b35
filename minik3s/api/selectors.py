"""Label and field selectors (layer L2; upstream apimachinery pkg/labels, pkg/fields, metav1 helpers).

Why here: the apiserver filters lists/watches with them, informers index with them, the scheduler,
descheduler and controllers match pods against workload selectors. One implementation, parsed once
and matched many times.

Data flow: a selector string (`?labelSelector=`) or a metav1.LabelSelector dict is compiled into a
`LabelSelector` holding precompiled requirements; `matches(labels)` walks that tuple with no
allocation. Grammar of the string form (upstream labels.Parse):

    selector    := requirement ( "," requirement )*          (empty string: everything)
    requirement := key ( "=" | "==" | "!=" ) value
                 | key ( "in" | "notin" ) "(" value ( "," value )* ")"
                 | key ( ">" | "<" ) integer
                 | key | "!" key

Example: `parse_label_selector("tier in (web,api),env!=prod,!legacy").matches({"tier": "web"})` is
True; `{"tier": "web", "legacy": "1"}` is not matched. Field selectors (`a=b,c!=d`) are only parsed
here; what fields mean is the resource table's business.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from minik3s.api.errors import aggregate
from minik3s.api.validation import is_qualified_name, is_valid_label_value

# operator codes of compiled requirements
OP_IN = 0  # also "=" / "=="
OP_NOT_IN = 1  # also "!="
OP_EXISTS = 2
OP_DOES_NOT_EXIST = 3
OP_GT = 4
OP_LT = 5

_OP_NAMES = {OP_IN: "in", OP_NOT_IN: "notin", OP_EXISTS: "", OP_DOES_NOT_EXIST: "!", OP_GT: ">", OP_LT: "<"}

_GO_SHORT = {"\a": "a", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t", "\v": "v"}


def go_quote(text: str) -> str:
    """Go's strconv.Quote (the `%q` field.Invalid prints a string value with): `"` and `\\`
    escaped, control and other non-printable characters as \\n, \\x00, \\u00a0, ..."""
    out = ['"']
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == " " or ch.isprintable():
            out.append(ch)
        elif ch in _GO_SHORT:
            out.append("\\" + _GO_SHORT[ch])
        else:
            n = ord(ch)
            out.append(f"\\x{n:02x}" if n < 0x80 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}")
    out.append('"')
    return "".join(out)


def validate_label_key(key: str, path: str = "key") -> str | None:
    """None when `key` is a valid qualified name (optional DNS-subdomain prefix + '/' + name);
    else upstream's field error at `path` (NewRequirement reports `key`; Parse, which validates
    the key with a nil path, `<nil>`), every problem joined by "; "."""
    errs = is_qualified_name(key)
    if errs:
        return f"{path}: Invalid value: {go_quote(key)}: {'; '.join(errs)}"
    return None


def validate_label_value(value: str, index: int = 0, key: str | None = None) -> str | None:
    """None for a valid label value; else upstream's field error, at `values[index][key]` as
    labels.NewRequirement reports it (`values[index]` without a key)."""
    if value == "":
        return None
    errs = is_valid_label_value(value)
    if not errs:
        return None
    path = f"values[{index}]" if key is None else f"values[{index}][{key}]"
    return f"{path}: Invalid value: {go_quote(value)}: {'; '.join(errs)}"


Requirement = tuple[str, int, Any]
"""(key, op, operand): operand is a frozenset[str] for In/NotIn, an int for Gt/Lt, None otherwise."""


def _go_values(values: Sequence[str] | None) -> str:
    """A []string as field.Invalid prints it (Go's %#v): None is a nil slice, [] an empty one."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def _make_requirement(key: str, op: int, values: Sequence[str] | None, *,
                      nil_if_empty: bool = True) -> Requirement:
    """Validate like upstream labels.NewRequirement (every error, aggregated); raise ValueError
    with its message. An empty `values` prints as a nil slice (`[]string(nil)`, what metav1's
    conversion passes) unless `nil_if_empty=False` (the caller passed Go's `[]string{}`)."""
    vals = list(values or ())
    shown: Sequence[str] | None = None if (values is None or (nil_if_empty and not vals)) else vals
    errs: list[str] = []
    err = validate_label_key(key)
    if err:
        errs.append(err)
    number: int | None = None
    if op in (OP_IN, OP_NOT_IN):
        if not vals:
            errs.append(f"values: Invalid value: {_go_values(shown)}: for 'in', 'notin' operators, values set "
                        "can't be empty")
    elif op in (OP_EXISTS, OP_DOES_NOT_EXIST):
        if vals:
            errs.append(f"values: Invalid value: {_go_values(shown)}: values set must be empty for exists and "
                        "does not exist")
    else:
        if len(vals) != 1:
            errs.append(f"values: Invalid value: {_go_values(shown)}: for 'Gt', 'Lt' operators, exactly one "
                        "value is required")
        for i, v in enumerate(vals):
            parsed = go_parse_int64(v)
            if parsed is None:
                errs.append(f"values[{i}]: Invalid value: {go_quote(v)}: for 'Gt', 'Lt' operators, the value "
                            "must be an integer")
            elif number is None:
                number = parsed
    for i, v in enumerate(vals):
        err = validate_label_value(v, i, key)
        if err:
            errs.append(err)
    if errs:
        raise ValueError(aggregate(errs))
    if op in (OP_EXISTS, OP_DOES_NOT_EXIST):
        return (key, op, None)
    if op in (OP_GT, OP_LT):
        return (key, op, number)
    return (key, op, frozenset(vals))


_GO_INT = re.compile(r"[+-]?[0-9]+\Z")


def go_parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): optional sign and decimal digits only, within int64."""
    if not _GO_INT.match(text):
        return None
    n = int(text)
    return n if -(1 << 63) <= n < (1 << 63) else None


def _render(key: str, spelling: str, values: Sequence[str]) -> str:
    """Requirement.String(): `!k`, `k`, `k=v` / `k==v` / `k!=v` / `k>n`, `k in (a,b)` (several
    values sorted on output, one value as given)."""
    if spelling == "!":
        return "!" + key
    if spelling == "":
        return key
    text = values[0] if len(values) == 1 else ",".join(sorted(values))
    if spelling in ("in", "notin"):
        return f"{key} {spelling} ({text})"
    return f"{key}{spelling}{text}"


def _default_text(req: Requirement) -> str:
    """The string of a requirement built without its spelling: one-valued In prints `k=v`,
    one-valued NotIn `k!=v` (the Equals/NotEquals a set or matchLabels compiles to)."""
    key, op, operand = req
    if op == OP_EXISTS:
        return key
    if op == OP_DOES_NOT_EXIST:
        return "!" + key
    if op in (OP_GT, OP_LT):
        return f"{key}{_OP_NAMES[op]}{operand}"
    vals = sorted(operand)
    if len(vals) == 1:
        return _render(key, "=" if op == OP_IN else "!=", vals)
    return _render(key, _OP_NAMES[op], vals)


class LabelSelector:
    """A compiled label selector. `nothing=True` is the selector that matches no object (a nil
    metav1.LabelSelector); an empty requirement list matches everything. `texts` (one per
    requirement) is how each prints in `str()`, as upstream's Requirement.String() spells it."""

    __slots__ = ("_reqs", "_nothing", "_eq", "_texts")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False,
                 texts: Iterable[str] | None = None) -> None:
        reqs = list(requirements)
        shown = list(texts) if texts is not None else [_default_text(r) for r in reqs]
        # sorted by key (stably, as upstream's sort of a parsed selector)
        pairs = sorted(zip(reqs, shown, strict=True), key=lambda p: p[0][0])
        self._reqs: tuple[Requirement, ...] = tuple(p[0] for p in pairs)
        self._texts: tuple[str, ...] = tuple(p[1] for p in pairs)
        self._nothing = nothing
        # fast path: only single-value equality requirements (the matchLabels case)
        eq: dict[str, str] | None = {}
        for k, op, vals in self._reqs:
            if op == OP_IN and len(vals) == 1 and eq is not None and k not in eq:
                eq[k] = next(iter(vals))
            else:
                eq = None
        self._eq = eq

    @classmethod
    def everything(cls) -> LabelSelector:
        return cls()

    @classmethod
    def nothing(cls) -> LabelSelector:
        return cls(nothing=True)

    @property
    def empty(self) -> bool:
        """True when the selector has no requirements (matches everything)."""
        return not self._nothing and not self._reqs

    @property
    def matches_nothing(self) -> bool:
        return self._nothing

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        return self._reqs

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self._nothing:
            return False
        eq = self._eq
        if labels is None:
            labels = {}
        if eq is not None:
            # every (key, value) pair present: a set comparison of the item views, in C
            return eq.items() <= labels.items()
        for key, op, operand in self._reqs:
            val = labels.get(key)
            if op == OP_IN:
                if val is None or val not in operand:
                    return False
            elif op == OP_NOT_IN:
                if val is not None and val in operand:
                    return False
            elif op == OP_EXISTS:
                if val is None:
                    return False
            elif op == OP_DOES_NOT_EXIST:
                if val is not None:
                    return False
            else:
                if val is None:
                    return False
                n = go_parse_int64(val)  # strconv.ParseInt: no spaces, underscores, other digits
                if n is None:
                    return False
                if op == OP_GT and not n > operand:
                    return False
                if op == OP_LT and not n < operand:
                    return False
        return True

    def add(self, key: str, operator: str, values: list[str] | None = None) -> LabelSelector:
        """A new selector ANDing one more requirement (operator as in metav1: In, NotIn, Exists,
        DoesNotExist, Gt, Lt). Adding to the nothing-selector keeps it matching nothing."""
        if self._nothing:
            return self
        op = _METAV1_OPS.get(operator)
        if op is None:
            raise ValueError(f'"{operator}" is not a valid label selector operator')
        req = _make_requirement(key, op, values, nil_if_empty=False)
        text = _render(key, _SPELLINGS[op], list(values or ()))
        return LabelSelector((*self._reqs, req), texts=(*self._texts, text))

    def __str__(self) -> str:
        return ",".join(self._texts)

    def __repr__(self) -> str:
        return "LabelSelector(<nothing>)" if self._nothing else f"LabelSelector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, LabelSelector) and self._nothing == other._nothing and self._reqs == other._reqs
        )

    def __hash__(self) -> int:
        return hash((self._nothing, self._reqs))


_METAV1_OPS = {
    "In": OP_IN,
    "NotIn": OP_NOT_IN,
    "Exists": OP_EXISTS,
    "DoesNotExist": OP_DOES_NOT_EXIST,
    "Gt": OP_GT,
    "Lt": OP_LT,
}
# how a requirement of each metav1 operator prints (selection.In, NotIn, Exists, ...)
_SPELLINGS = {OP_IN: "in", OP_NOT_IN: "notin", OP_EXISTS: "", OP_DOES_NOT_EXIST: "!", OP_GT: ">", OP_LT: "<"}


def label_selector_from_dict(d: Mapping[str, Any] | None) -> LabelSelector:
    """metav1.LabelSelector -> LabelSelector (upstream metav1.LabelSelectorAsSelector).

    None matches nothing, {} matches everything. matchLabels become `key=value` requirements,
    matchExpressions keep their operator. Raises ValueError on an unknown operator or bad values.
    """
    if d is None:
        return LabelSelector.nothing()
    reqs: list[Requirement] = []
    texts: list[str] = []
    for k, v in (d.get("matchLabels") or {}).items():
        val = v if v is not None else ""
        reqs.append(_make_requirement(k, OP_IN, [val]))
        texts.append(_render(k, "=", [val]))
    for expr in d.get("matchExpressions") or ():
        operator = expr.get("operator")
        op = _METAV1_OPS.get(operator or "")
        if op is None or op in (OP_GT, OP_LT):
            raise ValueError(f'"{operator}" is not a valid label selector operator')
        key = expr.get("key") or ""
        values = list(expr.get("values") or ())
        reqs.append(_make_requirement(key, op, values))
        texts.append(_render(key, _SPELLINGS[op], values))
    if not reqs:
        return LabelSelector.everything()
    return LabelSelector(reqs, texts=texts)


def selector_from_set(labels: Mapping[str, str] | None) -> LabelSelector:
    """Equality selector from a plain map (upstream labels.SelectorFromSet); empty map = everything.
    Values are not validated (as SelectorFromValidatedSet)."""
    if not labels:
        return LabelSelector.everything()
    return LabelSelector((k, OP_IN, frozenset((v,))) for k, v in labels.items())


# ---------------------------------------------------------------------------------------------
# String grammar (upstream labels.Parse): lexer then recursive-descent parser.

_T_ID, _T_IN, _T_NOTIN, _T_NOT, _T_NEQ, _T_EQ, _T_DEQ, _T_GT, _T_LT, _T_LPAR, _T_RPAR, _T_COMMA, _T_EOS = (
    range(13)
)
_SPECIAL = {
    "!=": _T_NEQ,
    "==": _T_DEQ,
    "!": _T_NOT,
    "=": _T_EQ,
    ">": _T_GT,
    "<": _T_LT,
    "(": _T_LPAR,
    ")": _T_RPAR,
    ",": _T_COMMA,
}
_SPECIAL_CHARS = frozenset("!=><(),")
_WHITESPACE = frozenset(" \t\r\n")  # the lexer's blanks: no other space character separates tokens
_BINARY_OPS = "in, notin, =, ==, !=, gt, lt"
_OP_SPELLING = {_T_EQ: "=", _T_DEQ: "==", _T_NEQ: "!=", _T_IN: "in", _T_NOTIN: "notin", _T_GT: ">", _T_LT: "<"}


def _lex(s: str) -> list[tuple[int, str]]:
    """Upstream's Lexer over the whole string. A NUL character reads as the end of the input
    (Go's lexer returns byte 0 there): at a token's start it ends the scan, inside a token it
    ends that token and is skipped."""
    toks: list[tuple[int, str]] = []
    i, n = 0, len(s)
    while True:
        while i < n and s[i] in _WHITESPACE:
            i += 1
        if i >= n or s[i] == "\0":
            break
        ch = s[i]
        if ch in _SPECIAL_CHARS:
            two = s[i : i + 2]
            if two in ("!=", "=="):
                toks.append((_SPECIAL[two], two))
                i += 2
            else:
                toks.append((_SPECIAL[ch], ch))
                i += 1
            if i < n and s[i] == "\0":
                i += 1  # read as the end of this operator, and skipped
            continue
        j = i
        while j < n and s[j] not in _WHITESPACE and s[j] not in _SPECIAL_CHARS and s[j] != "\0":
            j += 1
        word = s[i:j]
        toks.append((_T_IN if word == "in" else _T_NOTIN if word == "notin" else _T_ID, word))
        i = j + 1 if j < n and s[j] == "\0" else j
    toks.append((_T_EOS, ""))
    return toks


class _Parser:
    __slots__ = ("toks", "pos")

    def __init__(self, s: str) -> None:
        self.toks = _lex(s)
        self.pos = 0

    def peek(self, values: bool = False) -> tuple[int, str]:
        t = self.toks[self.pos]
        if values and t[0] in (_T_IN, _T_NOTIN):
            return (_T_ID, t[1])
        return t

    def take(self, values: bool = False) -> tuple[int, str]:
        t = self.peek(values)
        if t[0] != _T_EOS:
            self.pos += 1
        return t

    def parse(self) -> tuple[list[Requirement], list[str]]:
        reqs: list[Requirement] = []
        texts: list[str] = []
        while True:
            tok, lit = self.peek(values=True)
            if tok in (_T_ID, _T_NOT):
                try:
                    req, text = self.requirement()
                except ValueError as e:
                    raise ValueError(f"unable to parse requirement: {e}") from None
                reqs.append(req)
                texts.append(text)
                tok, lit = self.take(values=True)
                if tok == _T_EOS:
                    return reqs, texts
                if tok == _T_COMMA:
                    t2, l2 = self.peek(values=True)
                    if t2 not in (_T_ID, _T_NOT):
                        raise ValueError(f"found '{l2}', expected: identifier after ','")
                    continue
                raise ValueError(f"found '{lit}', expected: ',' or 'end of string'")
            if tok == _T_EOS:
                return reqs, texts
            raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> tuple[Requirement, str]:
        tok, lit = self.take(values=True)
        negated = tok == _T_NOT
        if negated:
            tok, lit = self.take(values=True)
        if tok != _T_ID:
            raise ValueError(f"found '{lit}', expected: identifier")
        key = lit
        err = validate_label_key(key, "<nil>")  # Parse validates the key at a nil field path
        if err:
            raise ValueError(err)
        if negated:
            # `!key` is complete whatever follows: a following operator is the caller's error
            return _make_requirement(key, OP_DOES_NOT_EXIST, [], nil_if_empty=False), "!" + key
        if self.peek(values=True)[0] in (_T_EOS, _T_COMMA):
            return _make_requirement(key, OP_EXISTS, [], nil_if_empty=False), key
        tok, lit = self.take()
        spelling = _OP_SPELLING.get(tok)
        if spelling is None:
            raise ValueError(f"found '{lit}', expected: {_BINARY_OPS}")
        op = {"in": OP_IN, "=": OP_IN, "==": OP_IN, "notin": OP_NOT_IN, "!=": OP_NOT_IN, ">": OP_GT,
              "<": OP_LT}[spelling]
        values = self.values() if tok in (_T_IN, _T_NOTIN) else [self.exact_value()]
        return _make_requirement(key, op, values, nil_if_empty=False), _render(key, spelling, values)

    def values(self) -> list[str]:
        """`( v, v, ... )` as a sorted set (upstream collects a sets.String): empty entries
        (`(a,)`, `(,a)`, `(a,,b)`, `()`) are the empty value."""
        tok, lit = self.take(values=True)
        if tok != _T_LPAR:
            raise ValueError(f"found '{lit}' expected: '('")
        tok, lit = self.peek(values=True)
        if tok == _T_RPAR:
            self.take()
            return [""]
        if tok not in (_T_ID, _T_COMMA):
            raise ValueError(f"found '{lit}', expected: ',', ')' or identifier")
        out: set[str] = set()
        while True:
            tok, lit = self.take(values=True)
            if tok == _T_ID:
                out.add(lit)
                tok2, lit2 = self.peek(values=True)
                if tok2 == _T_COMMA:
                    continue
                if tok2 == _T_RPAR:
                    self.take()
                    return sorted(out)
                raise ValueError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _T_COMMA:
                if not out:
                    out.add("")  # leading comma: "(,a)"
                tok2 = self.peek(values=True)[0]
                if tok2 == _T_RPAR:
                    out.add("")  # trailing comma: "(a,)"
                    self.take()
                    return sorted(out)
                if tok2 == _T_COMMA:
                    self.take()
                    out.add("")  # doubled comma: "(a,,b)"
                continue
            raise ValueError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> str:
        tok, lit = self.peek(values=True)
        if tok in (_T_EOS, _T_COMMA):
            return ""
        tok, lit = self.take(values=True)
        if tok == _T_ID:
            return lit
        raise ValueError(f"found '{lit}', expected: identifier")


def parse_label_selector(s: str) -> LabelSelector:
    """Parse the string form (`a=b,c!=d,e in (x,y),f notin (z),g,!h,n>3`); "" selects everything.
    Raises ValueError with upstream's message, e.g. `unable to parse requirement: ...`."""
    reqs, texts = _Parser(s).parse()
    return LabelSelector(reqs, texts=texts) if reqs else LabelSelector.everything()


# ---------------------------------------------------------------------------------------------
# Field selectors (upstream fields.ParseSelector).

_FIELD_OPS = ("!=", "==", "=")


def _split_terms(s: str) -> list[str]:
    """splitTerms: split at commas not escaped by a backslash; escapes stay in the terms."""
    out: list[str] = []
    start = 0
    escaped = False
    for i, ch in enumerate(s):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            out.append(s[start:i])
            start = i + 1
    out.append(s[start:])
    return out


def _split_term(term: str) -> tuple[str, str, str] | None:
    """splitTerm: the first operator occurrence splits the term (no escaping in the field name)."""
    for i in range(len(term)):
        for op in _FIELD_OPS:
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def unescape_field_value(v: str) -> str:
    """fields.UnescapeValue: `\\\\`, `\\,` and `\\=` are the literal characters; any other escape,
    an orphan trailing backslash or an unescaped `,` / `=` is an error (upstream's message)."""
    if "\\" not in v and "," not in v and "=" not in v:
        return v
    out: list[str] = []
    escaped = False
    for ch in v:
        if escaped:
            if ch not in ("\\", ",", "="):
                raise ValueError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in (",", "="):
            # Go prints the offending rune with %v: its code point
            raise ValueError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise ValueError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_field_selector(s: str) -> list[tuple[str, str, str]]:
    """`metadata.name=a,spec.nodeName!=,status.phase==Running` ->
    [("metadata.name", "=", "a"), ("spec.nodeName", "!=", ""), ("status.phase", "=", "Running")].
    "" is the empty list (everything); empty terms are skipped. Raises ValueError with upstream's
    message for a term without an operator or a badly escaped value; upstream checks the terms in
    sorted order, so with several bad terms the first in that order is the one reported."""
    if s == "":
        return []
    terms = [t for t in _split_terms(s) if t != ""]
    parsed: dict[str, tuple[str, str, str]] = {}
    for term in sorted(terms):
        split = _split_term(term)
        if split is None:
            raise ValueError(f"invalid selector: '{s}'; can't understand '{term}'")
        field_name, op, raw = split
        parsed[term] = (field_name, "!=" if op == "!=" else "=", unescape_field_value(raw))
    return [parsed[t] for t in terms]


def _as_str(v: Any) -> str:
    return v if isinstance(v, str) else ("" if v is None else str(v))


def label_selector_string(selector: Any) -> str | None:
    """`LabelSelectorAsSelector(sel).String()`; None when the selector is invalid.

    Requirements sorted by key; matchLabels print `k=v`, expressions `k in (a,b)`, `k notin (a,b)`,
    `k`, `!k` with sorted values. A nil or empty selector prints "".
    """
    if not isinstance(selector, dict):
        return ""
    reqs: list[tuple[str, str]] = []
    for k, v in (selector.get("matchLabels") or {}).items():
        reqs.append((k, f"{k}={v}"))
    for expr in selector.get("matchExpressions") or []:
        if not isinstance(expr, dict):
            return None
        key = _as_str(expr.get("key"))
        op = expr.get("operator")
        values = sorted(set(_as_str(x) for x in (expr.get("values") or [])))
        if op == "In":
            reqs.append((key, f"{key} in ({','.join(values)})"))
        elif op == "NotIn":
            reqs.append((key, f"{key} notin ({','.join(values)})"))
        elif op == "Exists":
            reqs.append((key, key))
        elif op == "DoesNotExist":
            reqs.append((key, f"!{key}"))
        else:
            return None
    reqs.sort(key=lambda r: r[0])
    return ",".join(r[1] for r in reqs)
