"""Kubernetes `resource.Quantity` parsing (layer L2).

Grammar (k8s.io/apimachinery/pkg/api/resource): <sign><digits>[.<digits>]<suffix>, where the
suffix is a binary SI suffix (Ki Mi Gi Ti Pi Ei), a decimal SI suffix (n u m "" k M G T P E)
or a decimal exponent (e3, E-2). Examples: "100m" = 0.1, "1.5" = 1.5, "2Gi" = 2*2^30,
"1e3" = 1000, "500Mi" = 524288000. Rejected: "abc", "1.5.3", "", "1Gb", "--1".

Values are exact (`Fraction`); `milli_value` and `value` round up as upstream's
MilliValue()/Value() do (a request of "0.5m" cpu counts as 1 milli-core).
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
}
_RE = re.compile(r"^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?[0-9]+))?\Z")



class QuantityError(ValueError):
    pass


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a quantity string (or a JSON number) into an exact Fraction. Raises QuantityError."""
    if isinstance(value, bool):
        raise QuantityError("quantities must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError("quantity must be finite")
        return Fraction(str(value))
    if not isinstance(value, str):
        raise QuantityError("quantity must be a string or a number")
    return _parse_string(value)


@functools.lru_cache(maxsize=8192)
def _parse_string(value: str) -> Fraction:
    """Quantity strings repeat endlessly ("100m", "1Gi"): parsed once each (errors are not cached)."""
    m = _RE.match(value.strip()) if value == value.strip() else None
    if not m:
        raise QuantityError("quantities must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    sign, num, suffix, exp = m.groups()
    q = Fraction(num if not num.endswith(".") else num[:-1] or "0")
    if suffix:
        q *= _BINARY.get(suffix) or _DECIMAL[suffix]
    elif exp is not None:
        e = int(exp)
        if abs(e) > 100:
            raise QuantityError("quantity exponent out of range")
        q *= Fraction(10) ** e
    if sign == "-":
        q = -q
    return q


def is_valid_quantity(value: object) -> bool:
    try:
        parse_quantity(value)  # type: ignore[arg-type]
    except QuantityError:
        return False
    return True


def milli_value(value: str | int | float | Fraction) -> int:
    """ceil(value * 1000), as Quantity.MilliValue(). `"100m"` -> 100, `"1"` -> 1000."""
    q = value if isinstance(value, Fraction) else parse_quantity(value)
    return math.ceil(q * 1000)


def int_value(value: str | int | float | Fraction) -> int:
    """ceil(value), as Quantity.Value(). `"1Gi"` -> 1073741824, `"0.5"` -> 1."""
    q = value if isinstance(value, Fraction) else parse_quantity(value)
    return math.ceil(q)


def format_quantity(value: int, binary: bool = True) -> str:
    """A compact canonical-ish form for byte counts ("16Gi") and counts ("110")."""
    if value == 0:
        return "0"
    if binary:
        for suf in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            if value % _BINARY[suf] == 0:
                return f"{value // _BINARY[suf]}{suf}"
    return str(value)


def format_milli(milli: int) -> str:
    """Milli-units as a quantity: 1500 -> "1500m", 2000 -> "2"."""
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


_SI_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = {10: "Ki", 20: "Mi", 30: "Gi", 40: "Ti", 50: "Pi", 60: "Ei"}
_NANO = 10**9


def canonical_quantity(value: str | int | float) -> str:
    """See `_canonical`; values repeat endlessly ("100m", "1Gi"), so each is computed once."""
    if isinstance(value, bool):
        raise QuantityError("quantity must be a string or a number")
    return _canonical(value)


@functools.lru_cache(maxsize=8192)
def _canonical(value: str | int | float) -> str:
    """The string upstream's `Quantity.String()` serialises a parsed quantity as (its
    CanonicalizeBytes). Raises QuantityError for what does not parse.

    1. The value is rounded up (away from zero) to nano precision: "3.001n" -> "4n".
    2. The format is the input's: a binary suffix (Ki..Ei) is BinarySI, an exponent (e3) is
       DecimalExponent, anything else (no suffix, n u m k M G T P E, a JSON number) DecimalSI.
    3. BinarySI stays binary only for whole values of at least 1024 in magnitude; the suffix is
       the largest power of 1024 that divides the value: "0.5Gi" -> "512Mi", "1536Mi" stays,
       "1Ki" -> "1Ki", "0.5Ki" -> "512", "100.5Ki" -> "102912".
    4. Decimal forms use the largest exponent, a multiple of 3 (at most 18), that leaves an
       integer mantissa: 1.5 -> "1500m", 1000 -> "1k", 0.1 -> "100m", "1e3" -> "1e3"
       (DecimalExponent keeps the e-notation), "1.5e3" -> "1500", "12e6" -> "12e6", 0 -> "0".
    """
    return format_canonical(parse_quantity(value), quantity_format(value))


def canonical_or_text(value: object) -> str:
    """`canonical_quantity(value)`, or the value as text when it is not a quantity (for
    messages and table cells that show whatever was stored)."""
    try:
        return canonical_quantity(value)  # type: ignore[arg-type]
    except (QuantityError, TypeError):
        return value if isinstance(value, str) else str(value)


def quantity_format(value: str | int | float) -> str:
    """The format upstream's parser gives a quantity: "BinarySI" for a binary suffix (Ki..Ei),
    "DecimalExponent" for an exponent ("1e3"), else "DecimalSI"."""
    if isinstance(value, str):
        m = _RE.match(value)
        if m is not None:
            if m.group(3) in _BINARY:
                return "BinarySI"
            if m.group(4) is not None:
                return "DecimalExponent"
    return "DecimalSI"


def format_canonical(q: Fraction, fmt: str = "DecimalSI") -> str:
    """`q` as upstream's `Quantity.String()` writes a value of format `fmt` (see `_canonical`):
    sums keep their first operand's format, e.g. 500Mi + 500Mi -> "1000Mi"."""
    scaled = q * _NANO
    nanos = math.ceil(scaled) if scaled >= 0 else -math.ceil(-scaled)
    if nanos == 0:
        return "0"
    if fmt == "BinarySI":
        if abs(nanos) < 1024 * _NANO or nanos % _NANO:
            fmt = "DecimalSI"
        else:
            whole, exp = nanos // _NANO, 0
            while exp < 60 and whole % 1024 == 0:
                whole //= 1024
                exp += 10
            return f"{whole}{_BINARY_SUFFIX.get(exp, '')}"
    mantissa, exp = nanos, -9
    while exp < 18 and mantissa % 1000 == 0:
        mantissa //= 1000
        exp += 3
    if fmt == "DecimalExponent":
        return str(mantissa) if exp == 0 else f"{mantissa}e{exp}"
    return f"{mantissa}{_SI_SUFFIX[exp]}"
