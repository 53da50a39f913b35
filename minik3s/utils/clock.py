"""Injected time (layer L1): every component takes a `Clock` so tests can use `FakeClock`.

`now()` is wall time (UTC datetimes, for timestamps written into objects), `monotonic()` is for
durations and deadlines, `sleep()` waits. `FakeClock.advance(s)` moves both and wakes sleepers
whose deadline has passed, so timing tests run instantly and deterministically.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any


def rfc3339(dt: datetime) -> str:
    """Second-precision RFC 3339 in UTC, as Kubernetes metav1.Time serialises: 2026-11-30T01:02:03Z."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(dt: datetime) -> str:
    """metav1.MicroTime: 2026-11-30T01:02:03.123456Z (leases, events.k8s.io)."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_NS_PER_S = 1_000_000_000
_NS_PER_MIN = 60 * _NS_PER_S
_NS_PER_H = 60 * _NS_PER_MIN


def human_duration(d: timedelta) -> str:
    """Upstream `duration.HumanDuration`: ~2-3 significant figures.

    Table (d = elapsed time):  < -1s → "<invalid>"; < 0 → "0s"; < 2m → "Ns"; < 10m → "NmSs" (or
    "Nm" on whole minutes); < 3h → "Nm"; < 8h → "NhMm" (or "Nh"); < 48h → "Nh"; < 8d → "NdHh"
    (or "Nd"); < 2y → "Nd"; < 8y → "NyDd" (or "Ny"); else "Ny" (a year is 365 days).
    Worked example: 200 s → 3 whole minutes, 20 s left → "3m20s"; 50 h → 2 d 2 h → "2d2h".
    """
    ns = (d.days * 86_400 + d.seconds) * _NS_PER_S + d.microseconds * 1000
    seconds = int(ns / _NS_PER_S)  # Go int(d.Seconds()) truncates toward zero
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = ns // _NS_PER_MIN
    if minutes < 10:
        s = (ns // _NS_PER_S) % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = ns // _NS_PER_H
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def parse_time(value: Any) -> datetime | None:
    """metav1.Time / MicroTime (RFC 3339, `Z` or offset, optional fraction) → aware datetime."""
    if not isinstance(value, str) or not value:
        return None
    s = value.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    m = re.match(r"^(.*T\d\d:\d\d:\d\d)(\.\d+)?(.*)$", s)
    if m and m.group(2) and len(m.group(2)) > 7:  # Python takes at most 6 fraction digits
        s = m.group(1) + m.group(2)[:7] + m.group(3)
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt


class Clock:
    """The real clock. `monotonic` is `time.monotonic` itself (no Python frame per reading: the
    scheduler's per-extension-point timers read it ~18 times per pod)."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    monotonic = staticmethod(time.monotonic)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class FakeClock(Clock):
    """Manually advanced clock. `sleep` returns when `advance` passes its deadline."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 1000.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._mono + seconds, next(self._seq), fut))
        await fut

    def advance(self, seconds: float) -> None:
        self._mono += seconds
        self._now += timedelta(seconds=seconds)
        while self._sleepers and self._sleepers[0][0] <= self._mono:
            _, _, fut = heapq.heappop(self._sleepers)
            if not fut.done():
                fut.set_result(None)

    @property
    def sleepers(self) -> int:
        return sum(1 for _, _, f in self._sleepers if not f.done())
