"""A keyed work queue with timers on the injected clock (layer L4, kubelet_sim).

Why not the client's WorkQueue: the stage controller's delays must run on the injected `Clock` so
golden tests can drive them with `FakeClock.advance()`, and thousands of pending stage timers must
cost one heap, not one task each. Semantics follow client-go's delaying queue: a key is queued at
most once, is never handed to two workers at once (an `add` during processing marks it dirty and
it is re-queued by `done`), and `add_after` keeps only the earliest pending timer per key.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque

from minik3s.utils.clock import Clock


async def sleep_or_wake(clock: Clock, seconds: float | None, wake: asyncio.Event) -> None:
    """Sleep on `clock` until `seconds` pass (forever if None) or `wake` is set; clears `wake`."""
    if wake.is_set():
        wake.clear()
        return
    waiter = asyncio.ensure_future(wake.wait())
    sleeper = asyncio.ensure_future(clock.sleep(seconds)) if seconds is not None else None
    try:
        pending = {waiter} if sleeper is None else {waiter, sleeper}
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if sleeper is not None:
            sleeper.cancel()
    wake.clear()


class KeyQueue:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._queue: deque[str] = deque()
        self._queued: set[str] = set()
        self._processing: set[str] = set()
        self._dirty: set[str] = set()
        self._timers: list[tuple[float, int, str]] = []
        self._timer_due: dict[str, float] = {}
        self._seq = itertools.count()
        self._ready = asyncio.Event()
        self._timer_changed = asyncio.Event()

    def add(self, key: str) -> None:
        if key in self._processing:
            self._dirty.add(key)
            return
        if key in self._queued:
            return
        self._queued.add(key)
        self._queue.append(key)
        self._ready.set()

    def add_after(self, key: str, delay: float) -> None:
        if delay <= 0:
            self.add(key)
            return
        due = self._clock.monotonic() + delay
        current = self._timer_due.get(key)
        if current is not None and current <= due:
            return
        self._timer_due[key] = due
        heapq.heappush(self._timers, (due, next(self._seq), key))
        if self._timers[0][2] == key:
            self._timer_changed.set()

    async def get(self) -> str:
        while not self._queue:
            self._ready.clear()
            await self._ready.wait()
        key = self._queue.popleft()
        self._queued.discard(key)
        self._processing.add(key)
        if not self._queue:
            self._ready.clear()
        return key

    def done(self, key: str) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._dirty.discard(key)
            self.add(key)

    def _fire_due(self) -> float | None:
        """Queue every key whose timer has passed; return seconds until the next timer."""
        now = self._clock.monotonic()
        while self._timers:
            due, _, key = self._timers[0]
            if due > now:
                return due - now
            heapq.heappop(self._timers)
            if self._timer_due.get(key) == due:
                del self._timer_due[key]
                self.add(key)
        return None

    async def run_timers(self) -> None:
        """Fire timers until cancelled."""
        while True:
            wait = self._fire_due()
            await sleep_or_wake(self._clock, wait, self._timer_changed)

    def pending_timer(self, key: str) -> float | None:
        """Seconds until `key`'s timer fires, or None (for tests and debugging)."""
        due = self._timer_due.get(key)
        return None if due is None else due - self._clock.monotonic()

    def __len__(self) -> int:
        return len(self._queue)
