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
from collections.abc import Iterable, Mapping
from typing import Any

# operator codes of compiled requirements
OP_IN = 0  # also "=" / "=="
OP_NOT_IN = 1  # also "!="
OP_EXISTS = 2
OP_DOES_NOT_EXIST = 3
OP_GT = 4
OP_LT = 5

_OP_NAMES = {OP_IN: "in", OP_NOT_IN: "notin", OP_EXISTS: "", OP_DOES_NOT_EXIST: "!", OP_GT: ">", OP_LT: "<"}

_NAME_RE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)\Z")
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def validate_label_key(key: str) -> str | None:
    """None when `key` is a valid qualified name (optional DNS-subdomain prefix + '/' + name)."""
    prefix, sep, name = key.rpartition("/")
    if sep:
        if not prefix:
            return f'key: Invalid value: "{key}": prefix part must be non-empty'
        if len(prefix) > 253 or not _DNS1123_SUBDOMAIN_RE.match(prefix):
            return (
                f'key: Invalid value: "{key}": prefix part a lowercase RFC 1123 subdomain must consist '
                "of lower case alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character"
            )
    if not name:
        return f'key: Invalid value: "{key}": name part must be non-empty'
    if len(name) > 63:
        return f'key: Invalid value: "{key}": name part must be no more than 63 characters'
    if not _NAME_RE.match(name):
        return f'key: Invalid value: "{key}": {_NAME_MSG}'
    return None


def validate_label_value(value: str, index: int = 0, key: str | None = None) -> str | None:
    """None for a valid label value; else upstream's field error, at `values[index][key]` as
    labels.NewRequirement reports it (`values[index]` without a key)."""
    if value == "":
        return None
    path = f"values[{index}]" if key is None else f"values[{index}][{key}]"
    if len(value) > 63:
        return f'{path}: Invalid value: "{value}": must be no more than 63 characters'
    if not _NAME_RE.match(value):
        return f'{path}: Invalid value: "{value}": {_VALUE_MSG}'
    return None


Requirement = tuple[str, int, Any]
"""(key, op, operand): operand is a frozenset[str] for In/NotIn, an int for Gt/Lt, None otherwise."""


def _go_values(values: list[str]) -> str:
    """A []string as field.Invalid prints it (Go's %#v; an empty list arrives as a nil slice)."""
    if not values:
        return "[]string(nil)"
    return "[]string{" + ", ".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "}"


def _aggregate(errs: list[str]) -> str:
    """utilerrors.Aggregate's message: the one error, or every distinct one bracketed."""
    distinct = list(dict.fromkeys(errs))
    return distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"


def _make_requirement(key: str, op: int, values: list[str]) -> Requirement:
    """Validate like upstream labels.NewRequirement (every error, aggregated); raise ValueError
    with its message."""
    errs: list[str] = []
    err = validate_label_key(key)
    if err:
        errs.append(err)
    number: int | None = None
    if op in (OP_IN, OP_NOT_IN):
        if not values:
            errs.append("values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty")
    elif op in (OP_EXISTS, OP_DOES_NOT_EXIST):
        if values:
            errs.append(f"values: Invalid value: {_go_values(values)}: values set must be empty for exists and "
                        "does not exist")
    else:
        if len(values) != 1:
            errs.append(f"values: Invalid value: {_go_values(values)}: for 'Gt', 'Lt' operators, exactly one "
                        "value is required")
        for i, v in enumerate(values):
            parsed = go_parse_int64(v)
            if parsed is None:
                errs.append(f'values[{i}]: Invalid value: "{v}": for \'Gt\', \'Lt\' operators, the value must be '
                            "an integer")
            elif number is None:
                number = parsed
    for i, v in enumerate(values):
        err = validate_label_value(v, i, key)
        if err:
            errs.append(err)
    if errs:
        raise ValueError(_aggregate(errs))
    if op in (OP_EXISTS, OP_DOES_NOT_EXIST):
        return (key, op, None)
    if op in (OP_GT, OP_LT):
        return (key, op, number)
    return (key, op, frozenset(values))


_GO_INT = re.compile(r"[+-]?[0-9]+\Z")


def go_parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): optional sign and decimal digits only, within int64."""
    if not _GO_INT.match(text):
        return None
    n = int(text)
    return n if -(1 << 63) <= n < (1 << 63) else None


class LabelSelector:
    """A compiled label selector. `nothing=True` is the selector that matches no object (a nil
    metav1.LabelSelector); an empty requirement list matches everything."""

    __slots__ = ("_reqs", "_nothing", "_eq")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        reqs = sorted(requirements, key=lambda r: r[0])
        self._reqs: tuple[Requirement, ...] = tuple(reqs)
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
                try:
                    n = int(val)
                except ValueError:
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
        return LabelSelector((*self._reqs, _make_requirement(key, op, list(values or ()))))

    def __str__(self) -> str:
        parts: list[str] = []
        for key, op, operand in self._reqs:
            if op == OP_EXISTS:
                parts.append(key)
            elif op == OP_DOES_NOT_EXIST:
                parts.append("!" + key)
            elif op in (OP_GT, OP_LT):
                parts.append(f"{key}{_OP_NAMES[op]}{operand}")
            elif len(operand) == 1:
                parts.append(f"{key}{'=' if op == OP_IN else '!='}{next(iter(operand))}")
            else:
                parts.append(f"{key} {_OP_NAMES[op]} ({','.join(sorted(operand))})")
        return ",".join(parts)

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


def label_selector_from_dict(d: Mapping[str, Any] | None) -> LabelSelector:
    """metav1.LabelSelector -> LabelSelector (upstream metav1.LabelSelectorAsSelector).

    None matches nothing, {} matches everything. matchLabels become `key=value` requirements,
    matchExpressions keep their operator. Raises ValueError on an unknown operator or bad values.
    """
    if d is None:
        return LabelSelector.nothing()
    reqs: list[Requirement] = []
    for k, v in (d.get("matchLabels") or {}).items():
        reqs.append(_make_requirement(k, OP_IN, [v if v is not None else ""]))
    for expr in d.get("matchExpressions") or ():
        operator = expr.get("operator")
        op = _METAV1_OPS.get(operator or "")
        if op is None or op in (OP_GT, OP_LT):
            raise ValueError(f'"{operator}" is not a valid label selector operator')
        reqs.append(_make_requirement(expr.get("key") or "", op, list(expr.get("values") or ())))
    if not reqs:
        return LabelSelector.everything()
    return LabelSelector(reqs)


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
_BINARY_OPS = "in, notin, =, ==, !=, gt, lt"


def _lex(s: str) -> list[tuple[int, str]]:
    toks: list[tuple[int, str]] = []
    i, n = 0, len(s)
    while i < n:
        ch = s[i]
        if ch.isspace():
            i += 1
            continue
        if ch in _SPECIAL_CHARS:
            two = s[i : i + 2]
            if two in ("!=", "=="):
                toks.append((_SPECIAL[two], two))
                i += 2
            else:
                toks.append((_SPECIAL[ch], ch))
                i += 1
            continue
        j = i
        while j < n and not s[j].isspace() and s[j] not in _SPECIAL_CHARS:
            j += 1
        word = s[i:j]
        toks.append((_T_IN if word == "in" else _T_NOTIN if word == "notin" else _T_ID, word))
        i = j
    toks.append((_T_EOS, ""))
    return toks


class _Parser:
    __slots__ = ("toks", "pos", "_last_set")

    def __init__(self, s: str) -> None:
        self.toks = _lex(s)
        self.pos = 0
        self._last_set = False

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

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.peek(values=True)
            if tok in (_T_ID, _T_NOT):
                try:
                    reqs.append(self.requirement())
                except ValueError as e:
                    raise ValueError(f"unable to parse requirement: {e}") from None
                tok, lit = self.take(values=True)
                if tok == _T_EOS:
                    return reqs
                if tok == _T_COMMA:
                    t2, l2 = self.peek(values=True)
                    if t2 not in (_T_ID, _T_NOT):
                        raise ValueError(f"found '{l2}', expected: identifier after ','")
                    continue
                raise ValueError(f"found '{lit}', expected: ',' or 'end of string'")
            if tok == _T_EOS:
                return reqs
            raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        tok, lit = self.take(values=True)
        negated = tok == _T_NOT
        if negated:
            tok, lit = self.take(values=True)
        if tok != _T_ID:
            raise ValueError(f"found '{lit}', expected: identifier")
        key = lit
        err = validate_label_key(key)
        if err:
            raise ValueError(err)
        nxt = self.peek(values=True)[0]
        if nxt in (_T_EOS, _T_COMMA):
            return _make_requirement(key, OP_DOES_NOT_EXIST if negated else OP_EXISTS, [])
        if negated:
            # upstream: "!key" followed by an operator is a DoesNotExist requirement with values -> error
            self.operator()
            raise ValueError(
                "values: Invalid value: []: values set must be empty for exists and does not exist"
            )
        op = self.operator()
        if self._last_set:
            return _make_requirement(key, op, self.values())
        return _make_requirement(key, op, [self.exact_value()])

    def operator(self) -> int:
        tok, lit = self.take()
        if tok in (_T_EQ, _T_DEQ):
            return self._mark(OP_IN, False)
        if tok == _T_NEQ:
            return self._mark(OP_NOT_IN, False)
        if tok == _T_IN:
            return self._mark(OP_IN, True)
        if tok == _T_NOTIN:
            return self._mark(OP_NOT_IN, True)
        if tok == _T_GT:
            return self._mark(OP_GT, False)
        if tok == _T_LT:
            return self._mark(OP_LT, False)
        raise ValueError(f"found '{lit}', expected: {_BINARY_OPS}")

    def _mark(self, op: int, is_set: bool) -> int:
        self._last_set = is_set
        return op

    def values(self) -> list[str]:
        tok, lit = self.take()
        if tok != _T_LPAR:
            raise ValueError(f"found '{lit}' expected: '('")
        tok, lit = self.peek(values=True)
        out: list[str] = []
        if tok == _T_RPAR:
            self.take()
            return [""]
        if tok not in (_T_ID, _T_COMMA):
            raise ValueError(f"found '{lit}', expected: ',', ')' or identifier")
        while True:
            tok, lit = self.take(values=True)
            if tok == _T_ID:
                out.append(lit)
                tok2, lit2 = self.peek(values=True)
                if tok2 == _T_COMMA:
                    self.take()
                    t3 = self.peek(values=True)[0]
                    if t3 == _T_RPAR:
                        out.append("")  # trailing comma: "a,)" means values {a, ""}
                    continue
                if tok2 == _T_RPAR:
                    self.take()
                    return out
                raise ValueError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _T_COMMA:
                out.append("")  # leading or doubled comma: empty value
                if self.peek(values=True)[0] == _T_RPAR:
                    out.append("")
                continue
            if tok == _T_RPAR:
                return out
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
    p = _Parser(s)
    reqs = p.parse()
    return LabelSelector(reqs) if reqs else LabelSelector.everything()


# ---------------------------------------------------------------------------------------------
# Field selectors (upstream fields.ParseSelector).

_FIELD_OPS = ("!=", "==", "=")


def _split_unescaped(s: str, sep: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    escaped = False
    for ch in s:
        if escaped:
            cur.append("\\" + ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == sep:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if escaped:
        cur.append("\\")
    out.append("".join(cur))
    return out


def _unescape_field_value(v: str) -> str:
    if "\\" not in v:
        return v
    out: list[str] = []
    i = 0
    while i < len(v):
        ch = v[i]
        if ch == "\\":
            if i + 1 >= len(v):
                raise ValueError(f"invalid trailing escape sequence: {v}")
            nxt = v[i + 1]
            if nxt not in ("\\", ",", "="):
                raise ValueError(f"invalid escape sequence: {v}")
            out.append(nxt)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def parse_field_selector(s: str) -> list[tuple[str, str, str]]:
    """`metadata.name=a,spec.nodeName!=,status.phase==Running` ->
    [("metadata.name", "=", "a"), ("spec.nodeName", "!=", ""), ("status.phase", "=", "Running")].
    "" is the empty list (everything). Raises ValueError for a term without an operator."""
    out: list[tuple[str, str, str]] = []
    if not s.strip():
        return out
    for term in _split_unescaped(s, ","):
        if term == "":
            continue
        found = False
        for i in range(len(term)):
            if term[i] == "\\":
                continue
            if i > 0 and term[i - 1] == "\\":
                continue
            for op in _FIELD_OPS:
                if term.startswith(op, i):
                    field_name = term[:i]
                    value = _unescape_field_value(term[i + len(op) :])
                    out.append((field_name, "!=" if op == "!=" else "=", value))
                    found = True
                    break
            if found:
                break
        if not found:
            raise ValueError(f"invalid selector: '{s}'; can't understand '{term}'")
    return out


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
