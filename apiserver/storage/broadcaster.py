"""Fan committed events out to watchers by key prefix (layer L4, apiserver/storage only).

Why: the single writer must publish every committed event to hundreds of watchers without ever
waiting for one of them. Each watcher owns a bounded buffer; the writer only appends to it (or
marks the watcher overflowed) and wakes its reader.

Dispatch by prefix: a watcher for prefix `p` is filed under its *anchor*, `p` cut after its last
`/` (`core/pods/ns1/` -> itself, `core/pods/ns1/web-` -> `core/pods/ns1/`), and there under `p`
itself with the other watchers of the same prefix. For an event on key `core/pods/ns1/web-1` the
broadcaster looks up the anchors `""`, `core/`, `core/pods/`, `core/pods/ns1/` (every
`/`-terminated prefix of the key) and checks `startswith` once per distinct prefix found there,
so the cost per event is O(key depth + distinct prefixes), not O(all watchers). A published
batch is first sorted into its events per prefix; then each watcher of that prefix gets them.

Data flow: SqliteStore writer -> Broadcaster.publish(events) -> StoreWatcher buffer -> the
apiserver's watch handler iterating the watcher.

Direct delivery: a consumer whose watcher has nothing buffered may attach a `WatchSink`. While
one is attached, `publish` hands the batch's events for that watcher to `sink.deliver` in one
call (no buffer, no wake-up of the consumer), as a `SinkBatch` shared by every watcher of that
prefix, so what one sink encoded the others of its kind reuse. A sink that cannot take them
(its client's buffer is full, the connection is closing) returns False: it is detached and the
events go to the buffer as usual, in order, waking the consumer, which continues on its normal
path (bounded queue, overflow) until it is idle again.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from apiserver.storage.interface import StoreEvent, WatchOverflowError

logger = logging.getLogger(__name__)


def anchor_of(prefix: str) -> str:
    """The `/`-terminated part of a prefix: `core/pods/ns/we` -> `core/pods/ns/`."""
    return prefix[: prefix.rfind("/") + 1]


@dataclass(slots=True, eq=False)
class SinkBatch:
    """One published batch's events for the watchers of one prefix. `encoded` is for the sinks:
    what one of them made of the events (e.g. the bytes of a content type), keyed as the sinks
    agree, so the others of that kind reuse it instead of encoding again."""

    events: list[StoreEvent]
    encoded: dict[str, bytes] = field(default_factory=dict)


class WatchSink(Protocol):
    """Takes a watcher's events of one published batch at once, synchronously, without waiting."""

    def deliver(self, batch: SinkBatch) -> bool:
        """True when every event was taken; False leaves all of them to the watcher's buffer."""
        ...


class StoreWatcher:
    """An ordered stream of StoreEvents: first the replayed history, then live events.

    Live events go to a buffer bounded by `queue_size`; when it is full the watcher is marked
    overflowed, stops receiving events and, once the consumer has drained what is buffered,
    `__anext__` raises WatchOverflowError. `close()` ends the stream at once (StopAsyncIteration).
    """

    __slots__ = (
        "prefix",
        "min_revision",
        "queue_size",
        "_replay",
        "_replay_pos",
        "_buf",
        "_waiter",
        "_closed",
        "_overflowed",
        "_broadcaster",
        "sink",
    )

    def __init__(
        self,
        prefix: str,
        min_revision: int,
        *,
        replay: list[StoreEvent],
        queue_size: int,
        broadcaster: Broadcaster | None,
    ) -> None:
        self.prefix = prefix
        # Live events with revision <= min_revision are skipped (watch from a future revision).
        self.min_revision = min_revision
        self.queue_size = queue_size
        self._replay = replay
        self._replay_pos = 0
        self._buf: deque[StoreEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self._overflowed = False
        self._broadcaster = broadcaster
        self.sink: WatchSink | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def overflowed(self) -> bool:
        return self._overflowed

    def push(self, ev: StoreEvent) -> bool:
        """Called by the broadcaster; never blocks. Returns False when the watcher must be dropped."""
        if self._closed or self._overflowed:
            return False
        if ev.revision <= self.min_revision:
            return True
        if len(self._buf) >= self.queue_size:
            self._overflowed = True
            logger.info("watch overflowed prefix=%s queue_size=%d", self.prefix, self.queue_size)
            self._wake()
            return False
        self._buf.append(ev)
        self._wake()
        return True

    def attach(self, sink: WatchSink) -> bool:
        """Deliver live events straight to `sink` from now on; refused (False) while anything is
        buffered or left to replay, so the order of events never changes."""
        if self.ready():
            return False
        self.sink = sink
        return True

    def detach(self) -> None:
        self.sink = None

    def deliver(self, batch: SinkBatch) -> bool:
        """Called by the broadcaster with this watcher's events of one batch while a sink is
        attached. Returns False when the watcher must be dropped (it overflowed)."""
        sink = self.sink
        if sink is not None:
            try:
                if sink.deliver(batch):
                    return True
            except Exception:  # a bug in the consumer's sink: its own path gets the events
                logger.exception("watch sink failed prefix=%s; its events go to the watcher's queue", self.prefix)
        self.sink = None
        for ev in batch.events:
            if not self.push(ev):
                return False
        return True

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def close(self) -> None:
        """Stop the watch; a pending `__anext__` ends with StopAsyncIteration."""
        if self._closed:
            return
        self._closed = True
        self.sink = None
        self._buf.clear()
        self._replay = []
        b = self._broadcaster
        self._broadcaster = None
        if b is not None:
            b.unsubscribe(self)
        self._wake()

    def ready(self) -> bool:
        """True when `__anext__` would return (or end) without waiting."""
        return (bool(self._buf) or self._replay_pos < len(self._replay) or self._overflowed
                or self._closed)

    async def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for an event without consuming it; returns `ready()`.
        Uses one timer and the watcher's own waiter: no task per event."""
        if self.ready():
            return True
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiter = waiter
        def expire() -> None:
            if not waiter.done():
                waiter.set_result(None)

        timer = loop.call_later(timeout, expire)
        try:
            await waiter
        finally:
            timer.cancel()
            if self._waiter is waiter:
                self._waiter = None
        return self.ready()

    def __aiter__(self) -> StoreWatcher:
        return self

    async def __anext__(self) -> StoreEvent:
        while True:
            if self._closed:
                raise StopAsyncIteration
            replay = self._replay
            if self._replay_pos < len(replay):
                ev = replay[self._replay_pos]
                self._replay_pos += 1
                if self._replay_pos == len(replay):
                    self._replay = []
                    self._replay_pos = 0
                return ev
            if self._buf:
                return self._buf.popleft()
            if self._overflowed:
                self.close()
                raise WatchOverflowError(
                    f"watch on {self.prefix!r} fell behind by more than {self.queue_size} events"
                )
            waiter = asyncio.get_running_loop().create_future()
            self._waiter = waiter
            try:
                await waiter
            finally:
                self._waiter = None


class Broadcaster:
    """Watchers filed by anchor, then by exact prefix; `publish` hands each event to the
    watchers whose prefix matches."""

    __slots__ = ("_by_anchor", "_count")

    def __init__(self) -> None:
        # anchor -> prefix -> watchers (insertion-ordered set)
        self._by_anchor: dict[str, dict[str, dict[StoreWatcher, None]]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def subscribe(self, w: StoreWatcher) -> None:
        group = self._by_anchor.setdefault(anchor_of(w.prefix), {}).setdefault(w.prefix, {})
        if w not in group:
            group[w] = None
            self._count += 1

    def unsubscribe(self, w: StoreWatcher) -> None:
        anchor = anchor_of(w.prefix)
        bucket = self._by_anchor.get(anchor)
        if bucket is None:
            return
        group = bucket.get(w.prefix)
        if group is not None and group.pop(w, 0) is None:
            self._count -= 1
            if not group:
                del bucket[w.prefix]
                if not bucket:
                    del self._by_anchor[anchor]

    def publish(self, events: Iterable[StoreEvent]) -> None:
        by_anchor = self._by_anchor
        if not by_anchor:
            return
        # prefix -> (its watchers, the batch's events under it, in order): one startswith per
        # event per distinct prefix, not per watcher
        matched: dict[str, tuple[dict[StoreWatcher, None], list[StoreEvent]]] = {}
        for ev in events:
            key = ev.key
            end = 0
            while True:
                bucket = by_anchor.get(key[:end])
                if bucket:
                    for prefix, group in bucket.items():
                        if len(prefix) == end or key.startswith(prefix):
                            got = matched.get(prefix)
                            if got is None:
                                matched[prefix] = (group, [ev])
                            else:
                                got[1].append(ev)
                nxt = key.find("/", end)
                if nxt < 0:
                    break
                end = nxt + 1
        dropped: list[StoreWatcher] = []
        failed: list[StoreWatcher] = []
        for group, evs in matched.values():
            shared = SinkBatch(evs)
            first = evs[0].revision
            for w in group:
                try:
                    if not self._hand(w, evs, first, shared):
                        dropped.append(w)
                except Exception:  # one watcher's failure never costs the others their events
                    logger.exception("watch delivery failed prefix=%s; the watch is closed", w.prefix)
                    failed.append(w)
        for w in dropped:
            self.unsubscribe(w)
        for w in failed:
            w.close()  # unsubscribes it; its consumer's stream ends

    @staticmethod
    def _hand(w: StoreWatcher, evs: list[StoreEvent], first: int, shared: SinkBatch) -> bool:
        """One watcher's events of a published batch; False when it must be dropped."""
        if w.sink is not None and not w.closed:
            if w.min_revision < first:
                batch = shared
            else:  # watching from a revision inside this batch
                own = [ev for ev in evs if ev.revision > w.min_revision]
                if not own:
                    return True
                batch = SinkBatch(own)
            return w.deliver(batch)
        for ev in evs:
            if not w.push(ev):
                return False
        return True

    def close_all(self) -> None:
        watchers = [w for bucket in self._by_anchor.values() for group in bucket.values() for w in group]
        for w in watchers:
            w.close()
        self._by_anchor.clear()
        self._count = 0
