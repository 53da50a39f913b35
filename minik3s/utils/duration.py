"""Go duration strings (layer L1, stdlib only): metav1.Duration / time.ParseDuration, as
DeschedulerPolicy fields (`minPodAge`) and `--descheduling-interval` spell them, and
time.Duration's String(), as upstream messages print durations (the kubelet's image pulls)."""

from __future__ import annotations

import re

_PART = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """Seconds in a Go duration: "1h30m" -> 5400.0, "90s" -> 90.0, "0" -> 0.0. An empty string,
    spaces or a number without a unit raise ValueError as in Go; so does a sign (Go accepts one,
    but no duration minik3s reads may be negative)."""
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    for m in _PART.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT[m.group(2)]
        pos = m.end()
    if not text or pos != len(text):
        raise ValueError(f"time: invalid duration {text!r}")
    return total


def _decimal(value: int, unit: int) -> str:
    """`value / unit` in decimal, the fraction's trailing zeros dropped (unit: a power of ten)."""
    whole, frac = divmod(value, unit)
    if not frac:
        return str(whole)
    digits = str(frac).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


def format_duration(seconds: float) -> str:
    """Go's time.Duration String() of `seconds`, at nanosecond resolution: 0 -> "0s",
    0.0015 -> "1.5ms", 46.9444707 -> "46.9444707s", 90 -> "1m30s", 3605 -> "1h0m5s"."""
    ns = round(seconds * 1e9)
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns == 0:
        return "0s"
    if ns < 1_000:
        return f"{sign}{ns}ns"
    if ns < 1_000_000:
        return f"{sign}{_decimal(ns, 1_000)}µs"
    if ns < 1_000_000_000:
        return f"{sign}{_decimal(ns, 1_000_000)}ms"
    secs, frac = divmod(ns, 1_000_000_000)
    out = f"{_decimal((secs % 60) * 1_000_000_000 + frac, 1_000_000_000)}s"
    minutes = secs // 60
    if minutes:
        out = f"{minutes % 60}m{out}"
        if minutes >= 60:
            out = f"{minutes // 60}h{out}"
    return sign + out
