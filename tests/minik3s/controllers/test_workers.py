"""A controller's workers (`run_workers`) let the event loop run between keys: a sync that never
suspends and re-queues its own key (a cache read, the in-process API answering at once) keeps
its worker busy, but other tasks — the API, the other controllers — still run."""

from __future__ import annotations

import asyncio

import pytest

from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import run_workers


@pytest.mark.timeout(30)  # without the hand-back this test's own loop never runs again
async def test_a_sync_that_never_suspends_does_not_hold_the_loop() -> None:
    queue = WorkQueue()
    syncs = 0

    async def spin(key: str) -> None:
        nonlocal syncs
        syncs += 1
        queue.add(key)  # again at once: it never stops being due

    queue.add("busy")
    workers = asyncio.create_task(run_workers(queue, spin, workers=1, name="spinner"))
    try:
        ticks = 0
        while ticks < 100:  # another task gets the loop 100 times while the worker keeps syncing
            await asyncio.sleep(0)
            ticks += 1
        assert syncs >= 50
    finally:
        workers.cancel()
        with pytest.raises(asyncio.CancelledError):
            await workers
