"""Durations of the simulator's pod annotations (layer L4, kubelet_sim.stages): the stages'
`durationFrom.annotation` and the container lifetimes of kubelet_sim.stages.restarts read
them the same way."""

from __future__ import annotations

import re

ANNOTATION_RUN_SECONDS = "sim.minik3s.io/run-seconds"
# how long containers take to stop after SIGTERM (the deletion stage's delay, default 1 s)
ANNOTATION_SHUTDOWN_SECONDS = "sim.minik3s.io/shutdown-seconds"

_DURATION = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)?\Z")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_seconds(value: object) -> float | None:
    """An annotation's duration in seconds: "5" → 5.0, "2.5" → 2.5, "500ms" → 0.5, "1m" → 60.0.
    Returns None when the value is not a duration (the stage default applies)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value) if value >= 0 else None
    m = _DURATION.match(str(value).strip())
    if not m:
        return None
    return float(m.group(1)) * _UNIT[m.group(2)]
