"""Go duration strings (layer L1, stdlib only): metav1.Duration / time.ParseDuration, as
DeschedulerPolicy fields (`minPodAge`) and `--descheduling-interval` spell them."""

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
