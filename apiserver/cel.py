"""CEL expressions for admission (layer: apiserver's lowest, beside patch and crd): compiling and
evaluating the expressions of webhook `matchConditions`.

Why a library: CEL's grammar, macros (`has`, `all`, `exists`, `map`, `filter`), its null and
error semantics and its standard functions are a language; cel-python (`celpy`, a pure-Python
implementation of the CEL spec) provides them, and this module adds what Kubernetes adds on
top: the extended string and list functions its CEL environment has (`lowerAscii`, `split`,
`join`, `indexOf`, `isSorted`, `sum`, `min`, `max`, `find`, ...) and cel-go's wording for the
errors users see. Not provided: `authorizer`, `quantity()`, `url()`, `ip()`/`cidr()`, optional
types, and compile-time type checking (an expression is checked for syntax when stored; a
reference to an unknown field or a non-boolean result shows when it is evaluated, as an error).

Data flow: expression text -> `compile_expression` (parsed once per distinct text, kept) ->
`evaluate(compiled, variables)` with JSON values (object, oldObject, request, ...) -> a plain
Python value, or `CelEvalError`.

cel-python is imported, and its parser built (~0.6 s), on the first expression compiled, not
when the server starts: a cluster without matchConditions or policies never pays for it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from minik3s.api.helpers.go_regexp import GoRegexpError, compile_go

__all__ = ["CelCompileError", "CelEvalError", "Compiled", "check", "compile_expression", "evaluate",
           "Variables", "match_conditions", "run"]


class CelCompileError(Exception):
    """The expression does not parse; `message` in cel-go's form."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CelEvalError(Exception):
    """Evaluation failed (a missing key, no such overload, division by zero, ...)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# -- Kubernetes' extension functions (strings, lists, regex libraries) ---------------------------

@functools.cache
def _runtime() -> SimpleNamespace:
    """cel-python, its environment and the extension functions, built on first use."""
    import celpy
    from celpy import celtypes
    from celpy.adapter import json_to_cel
    from celpy.celparser import CELParseError
    from celpy.evaluation import CELEvalError

    def _s(v: Any) -> str:
        if not isinstance(v, str):
            raise TypeError("no such overload")
        return str(v)

    def _index_of(target: Any, sub: Any, start: Any = 0) -> celtypes.IntType:
        if isinstance(target, list):
            for i, item in enumerate(target):
                if item == sub:
                    return celtypes.IntType(i)
            return celtypes.IntType(-1)
        return celtypes.IntType(_s(target).find(_s(sub), int(start)))

    def _last_index_of(target: Any, sub: Any, *rest: Any) -> celtypes.IntType:
        if isinstance(target, list):
            for i in range(len(target) - 1, -1, -1):
                if target[i] == sub:
                    return celtypes.IntType(i)
            return celtypes.IntType(-1)
        s = _s(target)
        end = int(rest[0]) + len(_s(sub)) if rest else len(s)
        return celtypes.IntType(s.rfind(_s(sub), 0, end))

    def _split(s: Any, sep: Any, limit: Any = -1) -> celtypes.ListType:
        n = int(limit)
        if n == 0:
            return celtypes.ListType([])
        parts = _s(s).split(_s(sep), n - 1) if n > 0 else _s(s).split(_s(sep))
        return celtypes.ListType([celtypes.StringType(p) for p in parts])

    def _join(items: Any, sep: Any = "") -> celtypes.StringType:
        return celtypes.StringType(_s(sep).join(_s(i) for i in items))

    def _replace(s: Any, old: Any, new: Any, limit: Any = -1) -> celtypes.StringType:
        return celtypes.StringType(_s(s).replace(_s(old), _s(new), int(limit)))

    def _substring(s: Any, start: Any, end: Any = None) -> celtypes.StringType:
        text = _s(s)
        stop = len(text) if end is None else int(end)
        if not 0 <= int(start) <= stop <= len(text):
            raise IndexError(f"index out of range: {int(start) if int(start) > len(text) else stop}")
        return celtypes.StringType(text[int(start):stop])

    def _char_at(s: Any, i: Any) -> celtypes.StringType:
        text = _s(s)
        if not 0 <= int(i) <= len(text):
            raise IndexError(f"index out of range: {int(i)}")
        return celtypes.StringType(text[int(i):int(i) + 1])

    def _sum(items: Any) -> Any:
        total: Any = celtypes.IntType(0)
        for i, v in enumerate(items):
            total = v if i == 0 else total + v
        return total

    def _extreme(pick: Callable[..., Any]) -> Callable[..., Any]:
        def fn(*args: Any) -> Any:
            items = list(args[0]) if len(args) == 1 and isinstance(args[0], list) else list(args)
            if not items:
                raise ValueError("min/max of an empty list")
            return pick(items)
        return fn

    def _regex(pattern: Any) -> Any:
        """Kubernetes' CEL regex library compiles with Go's regexp: "Illegal regex: ..." else."""
        try:
            return compile_go(_s(pattern))
        except GoRegexpError as e:
            raise CELEvalError(f"Illegal regex: {e}") from None

    def _find(s: Any, pattern: Any) -> celtypes.StringType:
        m = _regex(pattern).search(_s(s))
        return celtypes.StringType(m.group(0) if m else "")

    def _find_all(s: Any, pattern: Any, limit: Any = -1) -> celtypes.ListType:
        found = [m.group(0) for m in _regex(pattern).finditer(_s(s))]
        if int(limit) >= 0:
            found = found[:int(limit)]
        return celtypes.ListType([celtypes.StringType(f) for f in found])

    _FUNCTIONS: dict[str, Callable[..., Any]] = {
        "lowerAscii": lambda s: celtypes.StringType(_s(s).lower()),
        "upperAscii": lambda s: celtypes.StringType(_s(s).upper()),
        "trim": lambda s: celtypes.StringType(_s(s).strip()),
        "split": _split,
        "join": _join,
        "replace": _replace,
        "indexOf": _index_of,
        "lastIndexOf": _last_index_of,
        "substring": _substring,
        "charAt": _char_at,
        "isSorted": lambda items: celtypes.BoolType(all(a <= b for a, b in zip(items, list(items)[1:], strict=False))),
        "sum": _sum,
        "min": _extreme(min),
        "max": _extreme(max),
        "find": _find,
        "findAll": _find_all,
    }

    return SimpleNamespace(env=celpy.Environment(), functions=_FUNCTIONS, json_to_cel=json_to_cel,
                           parse_error=CELParseError, eval_error=CELEvalError, celtypes=celtypes)


# -- compiling and evaluating ------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Compiled:
    source: str
    program: Any


@functools.lru_cache(maxsize=2048)
def compile_expression(source: str) -> Compiled:
    """The parsed expression (kept per distinct text). Raises CelCompileError."""
    rt = _runtime()
    try:
        ast = rt.env.compile(source)
    except rt.parse_error as e:
        line, col = getattr(e, "line", None) or 1, getattr(e, "column", None) or 1
        text = source.splitlines()[line - 1] if source.splitlines() else ""
        raise CelCompileError(f"ERROR: <input>:{line}:{col}: Syntax error: unexpected input\n | {text}\n | "
                              f"{'.' * (col - 1)}^") from None
    except Exception as e:  # the parser's own failures: reported, never a crash
        raise CelCompileError(f"ERROR: <input>:1:1: {e}") from None
    return Compiled(source, rt.env.program(ast, functions=rt.functions))


_NO_KEY = re.compile(r"no such member in mapping: '(.*)'")
_UNDECLARED = re.compile(r"undeclared reference to '([^']*)'")


def _message(err: Any) -> str:
    """cel-go's wording for the evaluation errors users meet most."""
    args = getattr(err, "args", ()) or (str(err),)
    text = str(args[0]) if args else str(err)
    if m := _NO_KEY.search(text):
        return f"no such key: {m.group(1)}"
    if m := _UNDECLARED.search(text):
        return f"undeclared reference to '{m.group(1)}'"
    if "divide by zero" in text or "division by zero" in text:
        return "division by zero"
    if "no matching overload" in text or "no such overload" in text:
        return "no such overload"
    return text.splitlines()[0] if text else type(err).__name__


class Variables:
    """An expression's JSON variables, each turned into CEL values once, when an expression
    first needs it: one request's `object`, `request`, ... serve every condition and validation
    evaluated for it (the conversion walks the whole object: it costs as much as evaluating)."""

    __slots__ = ("_converted", "_values")

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = dict(values)
        self._converted: dict[str, Any] = {}

    def with_values(self, **values: Any) -> Variables:
        """These variables plus (or replacing) `values`; conversions already made are shared."""
        self.activation()  # converted here, once, for every child that shares them
        out = Variables(self._values)
        out._values.update(values)
        out._converted = {k: v for k, v in self._converted.items() if k not in values}
        return out

    def set(self, name: str, value: Any) -> None:
        self._values[name] = value
        self._converted.pop(name, None)

    def activation(self) -> dict[str, Any]:
        converted = self._converted
        if len(converted) != len(self._values):
            to_cel = _runtime().json_to_cel
            for k, v in self._values.items():
                if k not in converted:
                    converted[k] = to_cel(v)
        return dict(converted)


def evaluate(compiled: Compiled, variables: dict[str, Any] | Variables) -> Any:
    """Evaluate with JSON `variables` (or a `Variables` that converts each once); returns the
    result as plain Python (bool, int, float, str, list, dict, None). Raises CelEvalError."""
    rt = _runtime()
    activation = (variables.activation() if isinstance(variables, Variables)
                  else {k: rt.json_to_cel(v) for k, v in variables.items()})
    try:
        out = compiled.program.evaluate(activation)
    except Exception as e:  # cel-python's CELEvalError, or a library function's failure
        raise CelEvalError(_message(e)) from None
    if isinstance(out, rt.eval_error):
        raise CelEvalError(_message(out))
    return _plain(out, rt.celtypes)


def _plain(v: Any, ct: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, ct.BoolType):
        return bool(v)
    if isinstance(v, (ct.IntType, ct.UintType)):
        return int(v)
    if isinstance(v, ct.DoubleType):
        return float(v)
    if isinstance(v, (ct.StringType, str)):
        return str(v)
    if isinstance(v, dict):
        return {_plain(k, ct): _plain(x, ct) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x, ct) for x in v]
    return v


# -- what admission asks of an expression ------------------------------------------------------

def run(source: str, variables: dict[str, Any] | Variables) -> Any:
    """`evaluate(compile_expression(source), variables)`. Raises CelCompileError / CelEvalError."""
    return evaluate(compile_expression(source), variables)


def check(source: str, variables: dict[str, Any] | Variables) -> bool | str:
    """A boolean expression's verdict, or upstream's text for why there is none (CEL's filter:
    `expression '<e>' resulted in error: <why>`, also for a result that is not a bool)."""
    try:
        result = run(source, variables)
    except (CelCompileError, CelEvalError) as e:
        return f"expression '{source}' resulted in error: {e.message}"
    if isinstance(result, bool):
        return result
    return f"expression '{source}' resulted in error: no such overload: the result is not a bool"


def match_conditions(expressions: list[str], variables: dict[str, Any] | Variables) -> tuple[bool, list[str]]:
    """upstream's matchconditions matcher over `expressions` in order: (False, []) as soon as one
    is false (even when an earlier one failed), else (True, the failures' texts)."""
    failures: list[str] = []
    for source in expressions:
        verdict = check(source, variables)
        if verdict is False:
            return False, []
        if isinstance(verdict, str):
            failures.append(verdict)
    return True, failures
