"""Indexed Jobs' completion-index lists, "0-2,4,6,7" (layer L2), as the Job controller writes
them (status.completedIndexes / failedIndexes) and the API validates them (successPolicy's
succeededIndexes): upstream's orderedIntervals String / parseIndexesFromString and
validation's validateIndexesFormat, with Go's strconv.Atoi for the numbers.
"""

from __future__ import annotations

import json
import re

_ATOI = re.compile(r"[+-]?[0-9]+\Z")


def go_atoi(text: object) -> int | None:
    """strconv.Atoi: an optionally signed run of ASCII digits, else None ("1_0", " 1", "" fail)."""
    return int(text) if isinstance(text, str) and _ATOI.match(text) else None


def parse_indexes(text: str, completions: int) -> set[int]:
    """parseIndexesFromString: the indexes below `completions` in "0-2,4,6-7" (corrupt intervals
    skipped, the list cut at the first interval past the range)."""
    out: set[int] = set()
    for part in text.split(",") if text else ():
        bounds = part.split("-")
        first = go_atoi(bounds[0])
        if first is None:
            continue
        if first >= completions:  # checked before the upper bound is parsed, as upstream
            break
        last = go_atoi(bounds[1]) if len(bounds) > 1 else first
        if last is None:
            continue
        out.update(range(first, min(last, completions - 1) + 1))
    return out


def format_indexes(indexes: set[int]) -> str:
    """orderedIntervals.String: sorted intervals, "a-b" for three or more, "a,b" for a pair."""
    parts: list[str] = []
    ordered = sorted(indexes)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        first, last = ordered[i], ordered[j]
        parts.append(str(first) if last == first else f"{first}{',' if last == first + 1 else '-'}{last}")
        i = j + 1
    return ",".join(parts)


def indexes_format_error(text: str, completions: int) -> tuple[int, str | None]:
    """validateIndexesFormat: (how many indexes "0-2,5" names, or the parse error): intervals
    of Atoi bounds below `completions`, each increasing and after the previous one."""
    if not text:
        return 0, None
    total, last = 0, None
    for part in text.split(","):
        first, end, err = _parse_interval(part, completions)
        if err is not None:
            return 0, err
        if last is not None and last >= first:
            return 0, f"non-increasing order, previous: {last}, current: {first}"
        total += end - first + 1
        last = end
    return total, None


def _parse_interval(part: str, completions: int) -> tuple[int, int, str | None]:
    """parseIndexInterval."""
    bounds = part.split("-")
    if len(bounds) > 2:
        return 0, 0, (f"the fragment {json.dumps(part)} violates the requirement that an index interval can have "
                      "at most two parts separated by '-'")
    values: list[int] = []
    for b in bounds:
        v = go_atoi(b)
        if v is None:
            return 0, 0, f"cannot convert string to integer for index: {json.dumps(b)}"
        if v >= completions:
            return 0, 0, f"too large index: {json.dumps(b)}"
        values.append(v)
    if len(values) == 2 and values[0] >= values[1]:
        return 0, 0, f"non-increasing order, previous: {values[0]}, current: {values[1]}"
    return values[0], values[-1], None
