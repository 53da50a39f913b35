"""Event time-to-live (layer L4): kube-apiserver stores Events with a one-hour lease
(`--event-ttl=1h`), so they vanish on their own. We emulate the lease with a sweep that
deletes core/v1 and events.k8s.io/v1 Events whose last activity is older than the TTL.

Data flow: periodic timer -> scan the two event prefixes in the store's memory ->
store.delete (a normal DELETED watch event) for each expired Event.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from apiserver.storage.interface import StorageError, Store
from minik3s.api.types import JsonDict
from minik3s.utils.clock import Clock, parse_time

logger = logging.getLogger(__name__)

EVENT_PREFIXES = ("core/events/", "events.k8s.io/events/")


def _last_seen(ev: JsonDict) -> str | None:
    series = ev.get("series") or {}
    return (ev.get("lastTimestamp") or series.get("lastObservedTime") or ev.get("eventTime")
            or (ev.get("metadata") or {}).get("creationTimestamp"))


async def sweep_expired_events(store: Store, *, ttl: float, clock: Clock) -> int:
    cutoff = clock.now() - timedelta(seconds=ttl)
    removed = 0
    for prefix in EVENT_PREFIXES:
        items, _ = store.list(prefix)
        for ev in items:
            seen = parse_time(_last_seen(ev))
            if seen is None or seen >= cutoff:
                continue
            meta = ev.get("metadata") or {}
            key = f"{prefix}{meta.get('namespace', '')}/{meta.get('name', '')}"
            try:
                await store.delete(key, expected_rv=int(meta["resourceVersion"]))
                removed += 1
            except StorageError as e:  # deleted or updated meanwhile: the next sweep decides
                logger.debug("event sweep skipped key=%s error=%s", key, e)
    return removed


async def run_event_ttl(store: Store, *, ttl: float = 3600.0, interval: float = 60.0,
                        clock: Clock | None = None) -> None:
    clock = clock or Clock()
    while True:
        await clock.sleep(interval)
        n = await sweep_expired_events(store, ttl=ttl, clock=clock)
        if n:
            logger.info("expired events removed count=%d", n)
