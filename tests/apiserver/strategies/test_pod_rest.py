"""pods/binding on the real request core: what the bind writes (spec.nodeName, the Binding's
annotations, the PodScheduled condition) and that the stored pod it replaces is left as it was
(the binding copies only what it changes; watchers and informers hold the old object)."""

from __future__ import annotations

import copy

import pytest

from apiserver.core import ApiCore
from minik3s.api import errors
from minik3s.api.options import WriteOptions


def _pods(core: ApiCore):
    info = core.registry.get("", "v1", "pods")
    assert info is not None
    return info


POD = {"metadata": {"name": "p", "annotations": {"keep": "1"}},
       "spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}]}}


async def test_bind_writes_node_condition_and_annotations_and_leaves_the_old_object(core: ApiCore) -> None:
    pods = _pods(core)
    await core.create(pods, "default", copy.deepcopy(POD), WriteOptions(field_manager="kubectl"))
    await core.patch(pods, "default", "p", "strategic", {"status": {"conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes",
         "lastTransitionTime": "2025-12-31T00:00:00Z"}]}}, subresource="status")
    before = core.get(pods, "default", "p")
    frozen = copy.deepcopy(before)
    core.clock.advance(5)  # type: ignore[attr-defined]
    await core.bind("default", "p", {"metadata": {"name": "p", "uid": before["metadata"]["uid"],
                                                  "annotations": {"added": "2"}},
                                     "target": {"kind": "Node", "name": "n1"}})
    after = core.get(pods, "default", "p")
    assert before == frozen  # the replaced object is unchanged, nested parts included
    assert int(after["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
    assert after["spec"]["nodeName"] == "n1"
    assert after["metadata"]["annotations"] == {"keep": "1", "added": "2"}
    assert after["status"]["conditions"] == [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:05Z"}]
    # everything else is the pod as it was
    assert after["spec"]["containers"] == before["spec"]["containers"]
    assert {k: v for k, v in after["spec"].items() if k != "nodeName"} == before["spec"]
    assert [m["manager"] for m in after["metadata"]["managedFields"]] == ["kubectl"]
    assert after["metadata"]["managedFields"] == before["metadata"]["managedFields"]


@pytest.mark.parametrize(("body_meta", "message"), [
    ({"uid": "not-the-uid"}, "Precondition failed: UID in precondition: not-the-uid"),
    ({}, 'pod p is already assigned to node "n1"'),
])
async def test_refused_bind_leaves_the_pod(core: ApiCore, body_meta: dict[str, str], message: str) -> None:
    pods = _pods(core)
    await core.create(pods, "default", copy.deepcopy(POD))
    if not body_meta:
        await core.bind("default", "p", {"metadata": {"name": "p"}, "target": {"name": "n1"}})
    before = core.get(pods, "default", "p")
    frozen = copy.deepcopy(before)
    with pytest.raises(errors.ConflictError, match=message):
        await core.bind("default", "p", {"metadata": {"name": "p", **body_meta}, "target": {"name": "n2"}},
                        WriteOptions())
    assert core.get(pods, "default", "p") is before or core.get(pods, "default", "p") == frozen
    assert before == frozen


async def test_gated_pod_condition_time_follows_the_injected_clock(core: ApiCore) -> None:
    """applySchedulingGatedCondition's lastTransitionTime is the create's time from the core's
    clock (a fake one here, a year from the wall clock), as its creationTimestamp is."""
    pods = _pods(core)
    core.clock.advance(3 * 86400 + 0.5)  # type: ignore[attr-defined]
    body = copy.deepcopy(POD)
    body["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    out = await core.create(pods, "default", body, WriteOptions(field_manager="kubectl"))
    (cond,) = out["status"]["conditions"]
    assert cond == {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                    "lastTransitionTime": "2026-01-04T00:00:00Z", "reason": "SchedulingGated",
                    "message": "Scheduling is blocked due to non-empty scheduling gates"}
    assert out["metadata"]["creationTimestamp"] == "2026-01-04T00:00:00Z"
