"""CronJob schedules (layer L1 helper, shared by the apiserver's validation and the CronJob
controller).

Upstream parses `spec.schedule` with robfig/cron's ParseStandard: exactly five fields or a
`@yearly/@annually/@monthly/@weekly/@daily/@midnight/@hourly` descriptor, evaluated in
`spec.timeZone` (an IANA name, loaded here with zoneinfo) or in kube-controller-manager's
local zone (UTC here). Parsing and iteration use croniter.

Data flow: schedule string + zone -> `Schedule` -> previous/next fire times as aware datetimes.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

if TYPE_CHECKING:
    from croniter import croniter

DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_TZ_PART = re.compile(r"^[A-Za-z._-]{1,14}\Z")


def _croniter() -> type[croniter]:
    """croniter, imported on first use: the apiserver imports this module at start, and only a
    CronJob needs the parser."""
    from croniter import croniter

    return croniter


def schedule_error(schedule: str) -> str | None:
    """The parse error upstream would report, or None when the schedule is valid."""
    s = schedule.strip()
    if not s:
        return "empty spec string"
    if s.startswith("@"):
        if s in DESCRIPTORS:
            return None
        if s.startswith("@every"):
            return None if _every_seconds(s) is not None else f"failed to parse duration {s}"
        return f"unrecognized descriptor: {s}"
    fields = s.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    cron = _croniter()
    if not cron.is_valid(s):
        try:
            cron(s)
        except (ValueError, KeyError) as e:
            return str(e)
        return f"invalid schedule: {s}"
    return None


def _every_seconds(s: str) -> float | None:
    m = re.fullmatch(r"@every\s+((?:\d+(?:\.\d+)?(?:h|m|s|ms))+)", s.strip())
    if not m:
        return None
    total = 0.0
    for num, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", m.group(1)):
        total += float(num) * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[unit]
    return total if total >= 1 else None


def time_zone_error(tz: str) -> str | None:
    """validateTimeZone: naming rules, no `Local`, and the zone must exist."""
    if tz == "":
        return "timeZone must be nil or non-empty string"
    if tz.lower() == "local":
        return "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
    for part in tz.split("/"):
        if part in (".", "..") or not _TZ_PART.match(part):
            return f"unknown time zone {tz}"
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        return f"unknown time zone {tz}"
    return None


def load_zone(tz: str | None) -> tzinfo:
    return ZoneInfo(tz) if tz else UTC


class Schedule:
    """A parsed schedule in a zone; `next_after(t)` is the first fire time strictly after t."""

    def __init__(self, schedule: str, zone: tzinfo) -> None:
        err = schedule_error(schedule)
        if err is not None:
            raise ValueError(err)
        self._zone = zone
        s = schedule.strip()
        self._every = _every_seconds(s) if s.startswith("@every") else None
        self._expr = {"@annually": "@yearly", "@midnight": "@daily"}.get(s, s)

    def next_after(self, t: datetime) -> datetime:
        local = t.astimezone(self._zone)
        if self._every is not None:
            # robfig's ConstantDelaySchedule: t + delay, rounded down to the second
            return (local + timedelta(seconds=int(self._every))).replace(microsecond=0)
        nxt: datetime = _croniter()(self._expr, local).get_next(datetime)
        return nxt

    def most_recent(self, earliest: datetime, now: datetime, *, cap: int = 100) -> tuple[datetime | None, int]:
        """The latest fire time in (earliest, now] and how many fell in that window (counting
        stops past `cap`, as upstream only needs to know there were too many)."""
        t = self.next_after(earliest)
        if t > now:
            return None, 0
        last, count = t, 1
        while True:
            t = self.next_after(last)
            if t > now:
                return last, count
            last, count = t, count + 1
            if count > cap:
                break
        # too many missed: jump straight to the latest one at or before now
        if self._every is not None:
            step = int(self._every)
            n = int((now - last).total_seconds()) // step
            return last + timedelta(seconds=n * step), count
        prev: datetime = _croniter()(self._expr, now.astimezone(self._zone) + timedelta(seconds=1)).get_prev(datetime)
        return prev, count
