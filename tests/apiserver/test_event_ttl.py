"""Events expire after the TTL (kube-apiserver's --event-ttl, 1h by default)."""

from __future__ import annotations

from datetime import timedelta

from apiserver.event_ttl import sweep_expired_events
from apiserver.storage.sqlite_store import SqliteStore
from minik3s.utils.clock import FakeClock, rfc3339


async def test_expired_events_are_deleted_and_fresh_ones_kept() -> None:
    clock = FakeClock()
    store = SqliteStore(":memory:", compact_interval=0)
    await store.start()
    try:
        old = rfc3339(clock.now() - timedelta(hours=2))
        new = rfc3339(clock.now() - timedelta(minutes=5))
        await store.create("core/events/default/old", {"metadata": {"name": "old", "namespace": "default",
                                                                     "creationTimestamp": old}, "lastTimestamp": old})
        await store.create("core/events/default/fresh", {"metadata": {"name": "fresh", "namespace": "default",
                                                                       "creationTimestamp": old}, "lastTimestamp": new})
        await store.create("events.k8s.io/events/ns/v1old", {"metadata": {"name": "v1old", "namespace": "ns",
                                                                          "creationTimestamp": old}, "eventTime": old})
        await store.create("core/configmaps/default/old", {"metadata": {"name": "old", "namespace": "default",
                                                                         "creationTimestamp": old}})
        removed = await sweep_expired_events(store, ttl=3600, clock=clock)
        assert removed == 2
        assert store.get("core/events/default/old") is None
        assert store.get("events.k8s.io/events/ns/v1old") is None
        assert store.get("core/events/default/fresh") is not None
        assert store.get("core/configmaps/default/old") is not None
    finally:
        await store.close()
