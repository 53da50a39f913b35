"""The scheduler's Events as client-go's events.k8s.io recorder writes them (tools/events).

An event is *isomorphic* to an earlier one when type, action, reason, reporting controller and
instance, the regarded object (uid and resourceVersion included) and the related object are the
same; the note is not compared. The first of its kind is created; the second turns it into a
series (`series: {count: 2, lastObservedTime}`, written as a strategic-merge patch, or a create
when the event is gone); later ones only count in memory. Every `FINISH_SECONDS` the series not
observed for that long get their final count written and are forgotten, as are single events
older than that; every `REFRESH_SECONDS` every open series is written again (its TTL renewed).

Data flow: `Scheduler._record_event` -> `EventSeries.observe` -> (`create` | `patch` | nothing)
-> `ApiWriter`; `EventSeries.finish` / `refresh` from the scheduler's timer -> `ApiWriter`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from minik3s.api.types import JsonDict
from minik3s.utils.clock import rfc3339_micro

# client-go tools/events: finishTime and refreshTime
FINISH_SECONDS = 6 * 60
REFRESH_SECONDS = 30 * 60

_REF_FIELDS = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")


def _ref_key(ref: object) -> tuple[str, ...]:
    if not isinstance(ref, dict):
        return ()
    return tuple(str(ref.get(f) or "") for f in _REF_FIELDS)


def event_key(event: JsonDict) -> tuple[object, ...]:
    """getKey: what makes two events isomorphic (the stored core/v1 field names)."""
    return (event.get("type") or "", event.get("action") or "", event.get("reason") or "",
            event.get("reportingComponent") or "", event.get("reportingInstance") or "",
            _ref_key(event.get("involvedObject")), _ref_key(event.get("related")))


@dataclass(slots=True)
class _Entry:
    event: JsonDict  # a private copy of what was created (for a re-create; never handed over)
    event_time: datetime
    count: int = 1  # > 1: a series
    last_observed: datetime | None = None


@dataclass(slots=True)
class Write:
    """One API write for the writer: a create of `event`, or a series patch of the named event
    (`event` is then the body to create if the patch finds it gone)."""

    event: JsonDict
    patch: JsonDict | None = None


@dataclass(slots=True)
class EventSeries:
    _cache: dict[tuple[object, ...], _Entry] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self._cache)

    def observe(self, event: JsonDict, now: datetime) -> Write | None:
        """What to write for a new occurrence of `event` (a create, the series' first patch, or
        nothing while the series only counts)."""
        key = event_key(event)
        entry = self._cache.get(key)
        if entry is None:
            self._cache[key] = _Entry({**event, "metadata": dict(event["metadata"])}, now)
            return Write(event)
        entry.count += 1
        entry.last_observed = now
        if entry.count > 2:
            return None
        return self._series_write(entry)

    def finish(self, now: datetime) -> list[Write]:
        """finishSeries: the final count of each series quiet for FINISH_SECONDS (then forgotten);
        single events older than that are forgotten."""
        out: list[Write] = []
        for key, entry in list(self._cache.items()):
            if entry.count > 1:
                assert entry.last_observed is not None
                if (now - entry.last_observed).total_seconds() > FINISH_SECONDS:
                    out.append(self._series_write(entry))
                    del self._cache[key]
            elif (now - entry.event_time).total_seconds() > FINISH_SECONDS:
                del self._cache[key]
        return out

    def refresh(self) -> list[Write]:
        """refreshExistingEventSeries: every open series written again."""
        return [self._series_write(e) for e in self._cache.values() if e.count > 1]

    @staticmethod
    def _series_write(entry: _Entry) -> Write:
        assert entry.last_observed is not None
        series = {"count": entry.count, "lastObservedTime": rfc3339_micro(entry.last_observed)}
        body = {**entry.event, "metadata": dict(entry.event["metadata"]), "series": series}
        return Write(body, {"series": dict(series)})
