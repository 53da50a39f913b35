"""The EventRecorder's correlator, as client-go's record package behaves (events_cache.go with its
defaults), against the real in-process API on a fake clock: what a user reads afterwards in
`kubectl get events` / `kubectl describe` is one Event per repeated occurrence with its count,
an aggregate "(combined from similar events)" Event once one reason has many messages, and at
most 25 Events per source and object in a burst."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.api.resources import EVENTS
from minik3s.client.record import EventRecorder


@pytest.fixture
async def recorder(real_api: Any) -> EventRecorder:
    rec = EventRecorder(real_api, "test-controller", clock=real_api.clock)
    real_api.idle_checks.append(lambda: rec.pending() == 0)
    real_api.spawn(rec.run(), "recorder")
    return rec


def pod(name: str = "web", uid: str = "u-1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": uid, "resourceVersion": "7"}}


async def stored(real_api: Any) -> list[dict[str, Any]]:
    await real_api.settle()
    items = (await real_api.list(EVENTS, "default"))["items"]
    return sorted(items, key=lambda e: e["metadata"]["name"])


async def test_an_identical_event_is_counted_on_the_first_one(real_api, recorder):
    recorder.event(pod(), "Warning", "FailedMount", "volume x not found", field_path="spec.containers{c}",
                   host="node-1")
    await real_api.settle()
    first = (await stored(real_api))[0]
    for _ in range(2):
        real_api.clock.advance(30)
        recorder.event(pod(), "Warning", "FailedMount", "volume x not found", field_path="spec.containers{c}",
                       host="node-1")
        await real_api.settle()
    [ev] = await stored(real_api)
    assert ev["metadata"]["name"] == first["metadata"]["name"]
    assert ev["count"] == 3
    assert ev["firstTimestamp"] == first["firstTimestamp"] == "2026-01-01T00:00:00Z"
    assert ev["lastTimestamp"] == "2026-01-01T00:01:00Z"
    assert ev["source"] == {"component": "test-controller", "host": "node-1"}
    assert ev["involvedObject"]["fieldPath"] == "spec.containers{c}"
    # the repeats are strategic-merge patches of the stored Event, as client-go sends them
    patches = [c for c in real_api.calls if c[0] == "patch" and c[1] == "events"]
    assert len(patches) == 2


async def test_events_differing_in_object_fieldpath_type_or_host_stay_apart(real_api, recorder):
    recorder.event(pod(), "Normal", "Created", "Created container: c", field_path="spec.containers{c}")
    recorder.event(pod(), "Normal", "Created", "Created container: c", field_path="spec.containers{d}")
    recorder.event(pod(), "Warning", "Created", "Created container: c", field_path="spec.containers{c}")
    recorder.event(pod("other", "u-2"), "Normal", "Created", "Created container: c", field_path="spec.containers{c}")
    recorder.event(pod(), "Normal", "Created", "Created container: c", field_path="spec.containers{c}", host="n2")
    events = await stored(real_api)
    assert len(events) == 5
    assert {e["count"] for e in events} == {1}


async def test_a_deleted_event_is_created_again_with_its_count(real_api, recorder):
    recorder.event(pod(), "Normal", "Pulled", "already present")
    [ev] = await stored(real_api)
    await real_api.delete(EVENTS, ev["metadata"]["name"], "default")
    real_api.clock.advance(5)
    recorder.event(pod(), "Normal", "Pulled", "already present")
    [again] = await stored(real_api)
    assert again["metadata"]["name"] == ev["metadata"]["name"]
    assert again["count"] == 2
    assert again["firstTimestamp"] == ev["firstTimestamp"]
    # and the next repeat patches the recreated one
    recorder.event(pod(), "Normal", "Pulled", "already present")
    [third] = await stored(real_api)
    assert third["count"] == 3


async def test_the_tenth_distinct_message_of_a_reason_is_combined(real_api, recorder):
    for i in range(9):
        recorder.event(pod(), "Warning", "FailedSync", f"error {i}")
    events = await stored(real_api)
    assert len(events) == 9
    assert all(not e["message"].startswith("(combined") for e in events)
    real_api.clock.advance(1)
    recorder.event(pod(), "Warning", "FailedSync", "error 9")
    events = await stored(real_api)
    assert len(events) == 10
    combined = [e for e in events if e["message"].startswith("(combined")]
    assert [e["message"] for e in combined] == ["(combined from similar events): error 9"]
    assert combined[0]["count"] == 1
    assert combined[0]["source"] == {"component": "test-controller"}
    # every further new message within the window raises the aggregate's count and replaces its
    # message (a message still in the window's set counts on its own Event, as upstream)
    real_api.clock.advance(1)
    recorder.event(pod(), "Warning", "FailedSync", "error 10")
    recorder.event(pod(), "Warning", "FailedSync", "error 11")
    events = await stored(real_api)
    assert len(events) == 10
    [agg] = [e for e in events if e["message"].startswith("(combined")]
    assert (agg["count"], agg["message"]) == (3, "(combined from similar events): error 11")
    assert agg["firstTimestamp"] == combined[0]["firstTimestamp"]
    assert agg["lastTimestamp"] == "2026-01-01T00:00:02Z"
    # another reason about the same object is aggregated on its own
    recorder.event(pod(), "Normal", "Other", "fine")
    assert len(await stored(real_api)) == 11


async def test_aggregation_starts_over_after_ten_quiet_minutes(real_api, recorder):
    for i in range(10):
        recorder.event(pod(), "Warning", "FailedSync", f"error {i}")
    assert sum(e["message"].startswith("(combined") for e in await stored(real_api)) == 1
    real_api.clock.advance(601)
    recorder.event(pod(), "Warning", "FailedSync", "error new")
    events = await stored(real_api)
    assert len(events) == 11
    assert any(e["message"] == "error new" for e in events)


async def test_a_source_writes_at_most_25_events_about_an_object_then_one_per_five_minutes(real_api, recorder):
    for i in range(30):  # distinct reasons: no aggregation, no counting
        recorder.event(pod(), "Normal", f"Reason{i}", "m")
    events = await stored(real_api)
    assert len(events) == 25
    assert {e["reason"] for e in events} == {f"Reason{i}" for i in range(25)}
    recorder.event(pod("other", "u-2"), "Normal", "Reason0", "m")  # another object has its own budget
    assert len(await stored(real_api)) == 26
    real_api.clock.advance(299)
    recorder.event(pod(), "Normal", "Late", "m")
    assert len(await stored(real_api)) == 26
    real_api.clock.advance(2)  # a token every 300 s
    recorder.event(pod(), "Normal", "Late", "m")
    recorder.event(pod(), "Normal", "Later", "m")
    events = await stored(real_api)
    assert len(events) == 27
    assert "Late" in {e["reason"] for e in events}
