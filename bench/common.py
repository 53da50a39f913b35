"""Shared benchmark helpers: percentiles, machine facts, result printing."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
from pathlib import Path


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * (len(s) - 1)))))
    return s[k]


def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"python": sys.version.split()[0], "cpus": os.cpu_count(), "cpu": cpu, "platform": platform.platform()}


def median_of(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def emit(name: str, result: dict) -> None:
    out = {"benchmark": name, "machine": machine(), **result}
    print(json.dumps(out, indent=2))
    d = Path(__file__).parent / "results"
    d.mkdir(exist_ok=True)
    (d / f"{name}.json").write_text(json.dumps(out, indent=2))
