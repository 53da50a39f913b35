"""A client-go style work queue: deduplicating, a key is never processed by two workers at
once, delayed and rate-limited re-adds (per-key exponential backoff 5 ms doubling to 1000 s).

Usage: `key = await q.get(); try: ... finally: q.done(key)`; on failure `q.add_rate_limited(key)`,
on success `q.forget(key)`.
"""

from __future__ import annotations

import asyncio
from collections import deque


class ShutDownError(Exception):
    pass


class WorkQueue:
    def __init__(self, *, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self._queue: deque[str] = deque()
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._failures: dict[str, int] = {}
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._shutdown = False
        self.base_delay = base_delay
        self.max_delay = max_delay

    def add(self, key: str) -> None:
        if self._shutdown or key in self._dirty:
            return
        self._dirty.add(key)
        if key in self._processing:
            return
        self._queue.append(key)
        self._wake()

    def _wake(self) -> None:
        while self._waiters:
            w = self._waiters.popleft()
            if not w.done():
                w.set_result(None)
                return

    def add_after(self, key: str, delay: float) -> None:
        if self._shutdown:
            return
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        when = loop.time() + delay
        t = self._timers.get(key)
        if t is not None:
            if t.when() <= when:
                return
            t.cancel()
        self._timers[key] = loop.call_at(when, self._fire, key)

    def _fire(self, key: str) -> None:
        self._timers.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: str) -> None:
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        self.add_after(key, min(self.base_delay * (2 ** n), self.max_delay))

    def forget(self, key: str) -> None:
        self._failures.pop(key, None)

    def num_requeues(self, key: str) -> int:
        return self._failures.get(key, 0)

    async def get(self) -> str:
        while not self._queue:
            if self._shutdown:
                raise ShutDownError()
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self._wake()
                raise
        key = self._queue.popleft()
        self._processing.add(key)
        self._dirty.discard(key)
        return key

    def done(self, key: str) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._wake()

    def shutdown(self) -> None:
        self._shutdown = True
        for t in self._timers.values():
            t.cancel()
        self._timers.clear()
        while self._waiters:
            w = self._waiters.popleft()
            if not w.done():
                w.set_result(None)

    def __len__(self) -> int:
        return len(self._queue)
