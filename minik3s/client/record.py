"""Fire-and-forget core/v1 Events, as client-go's tools/record EventRecorder writes them (layer
L3, minik3s.client): what controllers and the simulated kubelets report about the objects they act on.

Why here: every component that reports Events (the embedded controllers, the simulated kubelets)
sits above the client and beside the others; client-go keeps its recorder in the client library
for the same reason.

An Event is built as the legacy recorder builds it (record/event.go makeEvent): the involved
object's reference (with `fieldPath` for a container, e.g. `spec.containers{web}`), `source`
{component, host}, `reportingComponent` = the component, `reportingInstance` = the host,
first/last timestamps, `count` 1 and the name `<object name>.<hex nanoseconds>`. `event()` only
enqueues; `run()`, started by the owner, writes them in order; a full queue drops events, so the
caller's work never waits on them.

Before it is written every Event passes the recorder's `EventCorrelator`, as in client-go
(record/events_cache.go), so a repeat is what a user of a real cluster sees (`kubectl describe`'s
"(x4 over 2m)"), not a new object each time:

* **aggregation**: the 10th distinct message within 10 minutes for one (source, object, type,
  reason, reporting controller/instance) turns into one Event "(combined from similar events): <the
  newest message>", counted from then on;
* **counting**: an Event identical to an earlier one (same source, object incl. fieldPath, type,
  reason, message) is a strategic-merge PATCH of that Event's `count`, `lastTimestamp` and
  `message` (created again, with its count, when it is gone);
* **spam filter**: per (source, object) a token bucket of 25 that refills one Event every 5
  minutes; an Event without a token is not written (it is still counted, as upstream).

Each cache holds the newest 4,096 keys (an LRU, as upstream's).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from minik3s.api.errors import NotFoundError
from minik3s.api.resources import EVENTS
from minik3s.api.types import JsonDict
from minik3s.client.interface import Client
from minik3s.utils.clock import Clock, rfc3339

logger = logging.getLogger(__name__)

__all__ = ["LRU_CACHE_ENTRIES", "EventCorrelator", "EventRecorder"]

LRU_CACHE_ENTRIES = 4096
AGGREGATE_MAX_EVENTS = 10  # distinct messages per reason within the interval before aggregating
AGGREGATE_INTERVAL_SECONDS = 600.0
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
AGGREGATE_MESSAGE_PREFIX = "(combined from similar events): "

K = TypeVar("K")
V = TypeVar("V")


class _Lru(Generic[K, V]):
    """The newest `size` keys; a read counts as use (groupcache/lru)."""

    __slots__ = ("_data", "_size")

    def __init__(self, size: int) -> None:
        self._data: OrderedDict[K, V] = OrderedDict()
        self._size = size

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def add(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self._size:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


@dataclass(slots=True)
class _TokenBucket:
    """golang.org/x/time/rate's limiter as flowcontrol's token-bucket TryAccept uses it: starts
    full, refills `qps` tokens per second up to `burst`."""

    qps: float
    burst: int
    tokens: float
    last: float

    def try_accept(self, now: float) -> bool:
        self.tokens = min(float(self.burst), self.tokens + max(0.0, now - self.last) * self.qps)
        self.last = max(self.last, now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


@dataclass(slots=True)
class _AggregateRecord:
    messages: set[str] = field(default_factory=set)
    last_seen: float = float("-inf")


@dataclass(slots=True, frozen=True)
class _Observation:
    count: int
    first_timestamp: str
    name: str
    resource_version: str


def _source(ev: JsonDict) -> JsonDict:
    src = ev.get("source")
    return src if isinstance(src, dict) else {}


def _involved(ev: JsonDict) -> JsonDict:
    ref = ev.get("involvedObject")
    return ref if isinstance(ref, dict) else {}


def _object_parts(ev: JsonDict, *, field_path: bool) -> list[str]:
    src, ref = _source(ev), _involved(ev)
    return [str(src.get("component") or ""), str(src.get("host") or ""), str(ref.get("kind") or ""),
            str(ref.get("namespace") or ""), str(ref.get("name") or ""),
            str(ref.get("fieldPath") or "") if field_path else "",
            str(ref.get("uid") or ""), str(ref.get("apiVersion") or "")]


# keys are one joined string each (upstream joins the same parts): an entry keeps no part of the
# written Event alive
def event_key(ev: JsonDict) -> str:
    """getEventKey: source, the involved object (with its fieldPath), type, reason, message."""
    return "\x00".join([*_object_parts(ev, field_path=True), str(ev.get("type") or ""),
                        str(ev.get("reason") or ""), str(ev.get("message") or "")])


def spam_key(ev: JsonDict) -> str:
    """getSpamKey: source and the involved object (no fieldPath, type or reason)."""
    return "\x00".join(_object_parts(ev, field_path=False))


def aggregate_key(ev: JsonDict) -> str:
    """EventAggregatorByReasonFunc's aggregate key (its local key is the message)."""
    return "\x00".join([*_object_parts(ev, field_path=False), str(ev.get("type") or ""),
                        str(ev.get("reason") or ""), str(ev.get("reportingComponent") or ""),
                        str(ev.get("reportingInstance") or "")])


@dataclass(slots=True)
class Correlated:
    """What to write: `event`, as a PATCH of `patch` onto the existing Event when `patch` is set."""

    event: JsonDict
    patch: JsonDict | None


class EventCorrelator:
    """client-go's EventCorrelator with its defaults: aggregate, count, then spam-filter. One per
    recorder (client-go: one per broadcaster). Times come from `clock` (the fake clock in tests)."""

    def __init__(self, clock: Clock, *, cache_size: int = LRU_CACHE_ENTRIES) -> None:
        self._clock = clock
        self._aggregates: _Lru[str, _AggregateRecord] = _Lru(cache_size)
        self._observed: _Lru[str, _Observation] = _Lru(cache_size)
        self._spam: _Lru[str, _TokenBucket] = _Lru(cache_size)

    def correlate(self, event: JsonDict) -> Correlated | None:
        """The event to write (maybe the aggregate, maybe counted), or None when the spam filter
        drops it."""
        mono = self._clock.monotonic()
        aggregated, key = self._aggregate(event, mono)
        observed, patch = self._observe(aggregated, key)
        bucket_key = spam_key(observed)
        bucket = self._spam.get(bucket_key)
        if bucket is None:
            bucket = _TokenBucket(SPAM_QPS, SPAM_BURST, float(SPAM_BURST), mono)
        accepted = bucket.try_accept(mono)
        self._spam.add(bucket_key, bucket)
        if not accepted:
            return None
        return Correlated(observed, patch)

    def update_state(self, stored: JsonDict) -> None:
        """Remember the server's copy (its name, resourceVersion, count) under its own key."""
        self._observed.add(event_key(stored), _observation(stored))

    def _aggregate(self, event: JsonDict, mono: float) -> tuple[JsonDict, str]:
        agg_key = aggregate_key(event)
        record = self._aggregates.get(agg_key)
        if record is None or mono - record.last_seen > AGGREGATE_INTERVAL_SECONDS:
            record = _AggregateRecord()
        message = str(event.get("message") or "")
        record.messages.add(message)
        record.last_seen = mono
        self._aggregates.add(agg_key, record)
        if len(record.messages) < AGGREGATE_MAX_EVENTS:
            return event, event_key(event)
        record.messages.pop()  # the set stays below the limit (upstream pops any one)
        now = self._clock.now()
        ts = rfc3339(now)
        ref = _involved(event)
        meta = event.get("metadata") or {}
        combined: JsonDict = {
            "kind": "Event",
            "apiVersion": "v1",
            "metadata": {"name": f"{ref.get('name')}.{int(now.timestamp() * 1e9):x}",
                         "namespace": meta.get("namespace")},
            "involvedObject": ref,
            "reason": event.get("reason"),
            "message": AGGREGATE_MESSAGE_PREFIX + message,
            "source": _source(event),
            "firstTimestamp": ts,
            "lastTimestamp": ts,
            "count": 1,
            "type": event.get("type"),
        }
        return combined, agg_key

    def _observe(self, event: JsonDict, key: str) -> tuple[JsonDict, JsonDict | None]:
        last = self._observed.get(key)
        patch: JsonDict | None = None
        if last is not None and last.count > 0:
            meta = {**(event.get("metadata") or {}), "name": last.name}
            if last.resource_version:
                meta["resourceVersion"] = last.resource_version
            event = {**event, "metadata": meta, "firstTimestamp": last.first_timestamp, "count": last.count + 1}
            # CreateTwoWayMergePatch of the event against itself with count, lastTimestamp and
            # message cleared: exactly these three fields
            patch = {"count": event["count"], "lastTimestamp": event.get("lastTimestamp"),
                     "message": event.get("message")}
        self._observed.add(key, _observation(event))
        return event, patch


def _observation(event: JsonDict) -> _Observation:
    meta = event.get("metadata") or {}
    count = event.get("count")
    return _Observation(count if isinstance(count, int) else 0, str(event.get("firstTimestamp") or ""),
                        str(meta.get("name") or ""), str(meta.get("resourceVersion") or ""))


@dataclass(slots=True)
class _PendingEvent:
    obj_ref: JsonDict
    namespace: str
    event_type: str
    reason: str
    message: str
    host: str


class EventRecorder:
    """client-go's record.EventRecorder for one component (e.g. "deployment-controller",
    "kubelet") with its broadcaster's EventCorrelator."""

    def __init__(self, client: Client, component: str, *, clock: Clock | None = None, max_pending: int = 1000,
                 cache_size: int = LRU_CACHE_ENTRIES) -> None:
        self._client = client
        self._component = component
        self._clock = clock or Clock()
        self._queue: asyncio.Queue[_PendingEvent] = asyncio.Queue(maxsize=max_pending)
        self._seq = 0
        self.correlator = EventCorrelator(self._clock, cache_size=cache_size)

    def event(self, obj: JsonDict, event_type: str, reason: str, message: str, *,
              field_path: str = "", host: str = "") -> None:
        """Queue an Event about `obj`; `field_path` names a part of it (a container), `host`
        the node the reporting instance runs on (the kubelet's node name)."""
        m = obj.get("metadata") or {}
        ref = {
            "kind": obj.get("kind"),
            "namespace": m.get("namespace"),
            "name": m.get("name"),
            "uid": m.get("uid"),
            "apiVersion": obj.get("apiVersion"),
            "resourceVersion": m.get("resourceVersion"),
            "fieldPath": field_path,
        }
        ref = {k: v for k, v in ref.items() if v}
        with contextlib.suppress(asyncio.QueueFull):
            self._queue.put_nowait(_PendingEvent(ref, m.get("namespace") or "default", event_type, reason,
                                                 message, host))

    def _build(self, ev: _PendingEvent) -> JsonDict:
        now = self._clock.now()
        self._seq += 1
        stamp = int(now.timestamp() * 1e9) + self._seq
        ts = rfc3339(now)
        source = {"component": self._component}
        if ev.host:
            source["host"] = ev.host
        return {
            "kind": "Event",
            "apiVersion": "v1",
            "metadata": {"name": f"{ev.obj_ref.get('name')}.{stamp:x}", "namespace": ev.namespace},
            "involvedObject": ev.obj_ref,
            "reason": ev.reason,
            "message": ev.message,
            "source": source,
            "firstTimestamp": ts,
            "lastTimestamp": ts,
            "count": 1,
            "type": ev.event_type,
            "reportingComponent": self._component,
            "reportingInstance": ev.host,
        }

    async def _write(self, correlated: Correlated, namespace: str) -> JsonDict:
        event = correlated.event
        if correlated.patch is not None:
            try:
                return await self._client.patch(EVENTS, str(event["metadata"]["name"]), correlated.patch, namespace,
                                                patch_type="strategic", read_only=True)
            except NotFoundError:  # expired or deleted: written again, with its count
                pass
        meta = {k: v for k, v in (event.get("metadata") or {}).items() if k != "resourceVersion"}
        return await self._client.create(EVENTS, {**event, "metadata": meta}, namespace, read_only=True,
                                         handover=True)

    async def run(self) -> None:
        while True:
            ev = await self._queue.get()
            try:
                correlated = self.correlator.correlate(self._build(ev))
                if correlated is None:
                    logger.debug("event throttled reason=%s object=%s", ev.reason, ev.obj_ref.get("name"))
                    continue
                stored = await self._write(correlated, ev.namespace)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # events are best effort: no failure may stop the recorder
                logger.debug("event dropped reason=%s err=%r", ev.reason, e)
                continue
            self.correlator.update_state(stored)

    def pending(self) -> int:
        return self._queue.qsize()
