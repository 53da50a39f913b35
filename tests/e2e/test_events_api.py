"""core/v1 and events.k8s.io/v1 Events are one resource, as upstream stores both as one internal
type: what one API writes the other lists, watches, updates and deletes, converted field by field
(`regarding` <-> `involvedObject`, `note` <-> `message`, `reportingController` <->
`reportingComponent`, `deprecated*` <-> the legacy fields). A create through events.k8s.io/v1 is
held to upstream's strict rules as well as the legacy ones; a core/v1 create only to the legacy
ones. Against the full in-process cluster (the scheduler's Events are core/v1 writes)."""

from __future__ import annotations

import json
import time

import httpx

CORE = "/api/v1/namespaces/{ns}/events"
V1 = "/apis/events.k8s.io/v1/namespaces/{ns}/events"
NOW = "2026-01-02T03:04:05.123456Z"


def v1_event(ns: str, name: str, **extra: object) -> dict[str, object]:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name, "namespace": ns},
            "eventTime": NOW, "type": "Normal", "reason": "Tested", "action": "Testing",
            "reportingController": "example.com/tester", "reportingInstance": "tester-1",
            "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": ns, "name": "p1"},
            "note": "a note", **extra}


def core_event(ns: str, name: str, regarding: str = "p2") -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": ns},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": ns, "name": regarding},
            "reason": "Legacy", "message": "old style", "type": "Normal", "source": {"component": "kubelet"},
            "firstTimestamp": "2026-01-02T03:04:05Z", "lastTimestamp": "2026-01-02T03:04:05Z", "count": 2}


def test_an_events_v1_create_is_the_core_event(http: httpx.Client, ns: str) -> None:
    r = http.post(V1.format(ns=ns), json=v1_event(ns, "e1"))
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["apiVersion"] == "events.k8s.io/v1" and made["note"] == "a note"
    core = http.get(f"{CORE.format(ns=ns)}/e1").json()
    assert core["apiVersion"] == "v1"
    assert core["message"] == "a note" and core["reportingComponent"] == "example.com/tester"
    assert core["involvedObject"] == {"apiVersion": "v1", "kind": "Pod", "namespace": ns, "name": "p1"}
    assert "note" not in core and "regarding" not in core
    assert core["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]
    assert core["metadata"]["uid"] == made["metadata"]["uid"]
    # ownership is recorded in the version the client wrote (upstream's field manager)
    [entry] = made["metadata"]["managedFields"]
    assert entry["apiVersion"] == "events.k8s.io/v1" and entry["operation"] == "Update"
    assert {"f:note", "f:regarding", "f:reportingController"} <= set(entry["fieldsV1"])
    assert core["metadata"]["managedFields"] == made["metadata"]["managedFields"]
    # the same object through either API
    again = http.get(f"{V1.format(ns=ns)}/e1").json()
    assert again == made
    # a PUT through events.k8s.io/v1 updates the stored object: 200, not a create
    again["series"] = {"count": 2, "lastObservedTime": NOW}
    r = http.put(f"{V1.format(ns=ns)}/e1", json=again)
    assert r.status_code == 200, r.text
    assert http.get(f"{CORE.format(ns=ns)}/e1").json()["series"] == {"count": 2, "lastObservedTime": NOW}
    [entry] = r.json()["metadata"]["managedFields"]  # the same manager, the same version: one entry
    assert entry["apiVersion"] == "events.k8s.io/v1" and "f:series" in entry["fieldsV1"]
    # a merge patch through core/v1 by another manager is recorded in core/v1's terms
    r = http.patch(f"{CORE.format(ns=ns)}/e1", params={"fieldManager": "legacy-tool"},
                   headers={"Content-Type": "application/merge-patch+json"}, json={"message": "edited"})
    assert r.status_code == 200, r.text
    legacy = [e for e in r.json()["metadata"]["managedFields"] if e["manager"] == "legacy-tool"]
    assert [(e["apiVersion"], list(e["fieldsV1"])) for e in legacy] == [("v1", ["f:message"])]
    assert http.get(f"{V1.format(ns=ns)}/e1").json()["note"] == "edited"
    # and a DELETE through it removes the core Event
    assert http.delete(f"{V1.format(ns=ns)}/e1").status_code == 200
    assert http.get(f"{CORE.format(ns=ns)}/e1").status_code == 404


def test_a_core_event_is_listed_through_events_v1_by_its_v1_field_labels(http: httpx.Client, ns: str) -> None:
    assert http.post(CORE.format(ns=ns), json=core_event(ns, "legacy")).status_code == 201
    assert http.post(CORE.format(ns=ns), json=core_event(ns, "other", regarding="p3")).status_code == 201
    r = http.get(V1.format(ns=ns), params={"fieldSelector": "regarding.name=p2"})
    assert r.status_code == 200, r.text
    items = r.json()["items"]
    assert [i["metadata"]["name"] for i in items] == ["legacy"]
    ev = items[0]
    assert ev["deprecatedSource"] == {"component": "kubelet"} and ev["deprecatedCount"] == 2
    assert ev["deprecatedFirstTimestamp"] == "2026-01-02T03:04:05Z" and ev["note"] == "old style"
    assert r.json()["kind"] == "EventList" and r.json()["apiVersion"] == "events.k8s.io/v1"
    # the core names are not events.k8s.io's field labels
    r = http.get(V1.format(ns=ns), params={"fieldSelector": "involvedObject.name=p2"})
    assert r.status_code == 400 and "field label not supported: involvedObject.name" in r.text
    names = {i["metadata"]["name"] for i in http.get(V1.format(ns=ns)).json()["items"]}
    assert {"legacy", "other"} <= names


def test_an_events_v1_watch_sees_core_writes(http: httpx.Client, ns: str) -> None:
    rv = http.get(V1.format(ns=ns)).json()["metadata"]["resourceVersion"]
    seen: list[dict[str, object]] = []
    with http.stream("GET", V1.format(ns=ns), params={"watch": "1", "resourceVersion": rv,
                                                      "fieldSelector": "regarding.name=watched"}) as w:
        assert http.post(CORE.format(ns=ns), json=core_event(ns, "skipped", regarding="p9")).status_code == 201
        assert http.post(CORE.format(ns=ns), json=core_event(ns, "w1", regarding="watched")).status_code == 201
        for line in w.iter_lines():
            if line:
                seen.append(json.loads(line))
                break
    assert seen[0]["type"] == "ADDED"
    obj = seen[0]["object"]
    assert isinstance(obj, dict)
    assert obj["apiVersion"] == "events.k8s.io/v1" and obj["metadata"]["name"] == "w1"
    assert obj["regarding"]["name"] == "watched" and obj["note"] == "old style"


def test_an_events_v1_create_is_held_to_the_strict_rules(http: httpx.Client, ns: str) -> None:
    legacy_fields = {"deprecatedCount": 1, "deprecatedSource": {"component": "kubelet"}}
    body = v1_event(ns, "strict", type="Info", **legacy_fields)
    del body["eventTime"]
    r = http.post(V1.format(ns=ns), json=body)
    assert r.status_code == 422, r.text
    st = r.json()
    assert st["details"]["kind"] == "Event" and st["details"]["group"] == "events.k8s.io"
    assert [(c["field"], c["message"]) for c in st["details"]["causes"]] == [
        ("eventTime", "Required value"),
        ("type", 'Invalid value: "": has invalid value: Info'),
        ("count", 'Invalid value: "": needs to be unset'),
        ("source", 'Invalid value: "": needs to be unset'),
    ]
    assert http.get(f"{CORE.format(ns=ns)}/strict").status_code == 404
    # the same content through core/v1 passes: only the legacy rules hold there
    assert http.post(CORE.format(ns=ns), json=core_event(ns, "strict")).status_code == 201


def test_a_core_field_name_sent_to_events_v1_is_an_unknown_field(http: httpx.Client, ns: str) -> None:
    r = http.post(V1.format(ns=ns), json=v1_event(ns, "unknown", message="not a v1 field"))
    assert r.status_code == 201, r.text
    assert r.headers.get("warning") == '299 - "unknown field \\"message\\""'
    assert http.get(f"{CORE.format(ns=ns)}/unknown").json()["message"] == "a note"
    r = http.post(V1.format(ns=ns), params={"fieldValidation": "Strict"},
                  json=v1_event(ns, "unknown2", message="not a v1 field"))
    assert r.status_code == 400 and 'unknown field \\"message\\"' in r.text


def test_the_schedulers_events_are_seen_through_events_v1(http: httpx.Client, ns: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    assert http.post(f"/api/v1/namespaces/{ns}/pods", json=pod).status_code == 201
    deadline = time.monotonic() + 30
    items: list[dict[str, object]] = []
    while time.monotonic() < deadline and not items:
        items = http.get(V1.format(ns=ns), params={"fieldSelector": "regarding.name=web,reason=Scheduled"}
                         ).json()["items"]
        if not items:
            time.sleep(0.1)
    assert items, "no Scheduled event through events.k8s.io/v1"
    ev = items[0]
    assert ev["reportingController"] == "default-scheduler" and ev["action"] == "Binding"
    assert str(ev["note"]).startswith(f"Successfully assigned {ns}/web to ")


def test_an_update_through_events_v1_keeps_what_the_event_says(http: httpx.Client, ns: str) -> None:
    """ValidateEventUpdate for events.k8s.io/v1: the note, reason, regarding... are immutable,
    a changed series must be valid; the same edit through core/v1 passes the legacy rules."""
    assert http.post(V1.format(ns=ns), json=v1_event(ns, "fixed")).status_code == 201
    cur = http.get(f"{V1.format(ns=ns)}/fixed").json()
    r = http.put(f"{V1.format(ns=ns)}/fixed", json=dict(cur, note="rewritten", reason="Other",
                                                         series={"count": 1, "lastObservedTime": NOW}))
    assert r.status_code == 422, r.text
    assert [(c["field"], c["message"]) for c in r.json()["details"]["causes"]] == [
        ("series.count", 'Invalid value: "": should be at least 2'),
        ("reason", 'Invalid value: "Other": field is immutable'),
        ("message", 'Invalid value: "rewritten": field is immutable'),
        ("reason", 'Invalid value: "Other": field is immutable'),
    ]
    assert r.json()["details"]["group"] == "events.k8s.io"
    core = http.get(f"{CORE.format(ns=ns)}/fixed").json()
    r = http.put(f"{CORE.format(ns=ns)}/fixed", json=dict(core, message="rewritten", reason="Other"))
    assert r.status_code == 200, r.text
    assert http.get(f"{V1.format(ns=ns)}/fixed").json()["note"] == "rewritten"


def test_each_version_serves_the_zero_values_go_would(http: httpx.Client, ns: str) -> None:
    """core/v1 always serialises eventTime, firstTimestamp, lastTimestamp, source and the
    reporting fields (null, {} or ""); events.k8s.io/v1 omits an empty reportingController and
    reportingInstance but always has its deprecated times and source."""
    assert http.post(V1.format(ns=ns), json=v1_event(ns, "new")).status_code == 201
    assert http.post(CORE.format(ns=ns), json=core_event(ns, "old")).status_code == 201
    new = http.get(f"{CORE.format(ns=ns)}/new").json()
    assert (new["firstTimestamp"], new["lastTimestamp"], new["source"]) == (None, None, {})
    assert "count" not in new
    old = http.get(f"{CORE.format(ns=ns)}/old").json()
    assert old["eventTime"] is None and old["reportingComponent"] == "" and old["reportingInstance"] == ""
    old_v1 = http.get(f"{V1.format(ns=ns)}/old").json()
    assert "reportingController" not in old_v1 and "reportingInstance" not in old_v1
    assert old_v1["eventTime"] is None and old_v1["deprecatedSource"] == {"component": "kubelet"}
    new_v1 = http.get(f"{V1.format(ns=ns)}/new").json()
    assert new_v1["deprecatedFirstTimestamp"] is None and new_v1["deprecatedSource"] == {}
    assert new_v1["reportingController"] == "example.com/tester"
