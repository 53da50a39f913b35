"""EventSeries alone (client-go tools/events' isomorphic-event cache): the key, the series
writes, finish and refresh. The scheduler-level behaviour is in test_scheduler.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scheduler.event_series import FINISH_SECONDS, EventSeries


def event(name: str = "p.1", *, note: str = "0/1 nodes are available", rv: str = "7", **extra: object) -> dict:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": "default"},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": "p",
                               "uid": "u1", "resourceVersion": rv},
            "reason": "FailedScheduling", "message": note, "type": "Warning", "eventTime": "t", "action": "Scheduling",
            "reportingComponent": "default-scheduler", "reportingInstance": "default-scheduler-h", **extra}


T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_note_is_not_compared_but_the_regarded_version_is() -> None:
    es = EventSeries()
    first = es.observe(event(), T0)
    assert first is not None and first.patch is None  # created
    w = es.observe(event("p.2", note="another message"), T0 + timedelta(seconds=5))
    assert w is not None and w.patch == {"series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:05.000000Z"}}
    assert w.event["metadata"]["name"] == "p.1" and w.event["message"] == "0/1 nodes are available"
    assert es.observe(event("p.3"), T0 + timedelta(seconds=9)) is None  # counted only
    other = es.observe(event("p.4", rv="8"), T0 + timedelta(seconds=10))
    assert other is not None and other.patch is None  # another version of the pod: another event
    assert es.observe(event("p.5", reason="Scheduled"), T0) is not None  # another reason


def test_refresh_rewrites_open_series_and_finish_closes_quiet_ones() -> None:
    es = EventSeries()
    es.observe(event(), T0)
    for i in range(3):
        es.observe(event(f"p.{i + 2}"), T0 + timedelta(seconds=i + 1))
    es.observe(event("q.1", rv="9"), T0 + timedelta(seconds=30))  # a single event
    [w] = es.refresh()
    assert w.patch == {"series": {"count": 4, "lastObservedTime": "2026-01-01T00:00:03.000000Z"}}
    assert es.finish(T0 + timedelta(seconds=3 + FINISH_SECONDS)) == [] and len(es) == 2  # not yet quiet long enough
    [done] = es.finish(T0 + timedelta(seconds=31 + FINISH_SECONDS))
    assert done.patch is not None and done.patch["series"]["count"] == 4
    assert len(es) == 0  # the series closed, the single event older than six minutes forgotten
