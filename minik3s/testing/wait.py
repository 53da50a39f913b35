"""Wait on a condition with a deadline (tests never sleep a fixed time to synchronise)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(fn: Callable[[], T], timeout: float = 60.0, interval: float = 0.1) -> T:
    """Call `fn` until it returns something truthy and return that; AssertionError (with the last
    value) after `timeout` seconds. Polls at 10 ms at first, doubling up to `interval`: most
    conditions hold within moments, and a fixed 0.2 s poll made every wait cost 0.1 s on average."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    pause = min(0.01, interval)
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(pause)
        pause = min(pause * 2, interval)
    raise AssertionError(f"condition not met within {timeout}s (last={last!r})")
