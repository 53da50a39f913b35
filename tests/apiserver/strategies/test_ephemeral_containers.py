"""pods/ephemeralcontainers (what `kubectl debug` writes) on the real request core: only
spec.ephemeralContainers changes, new ones are defaulted and validated as upstream's
ValidatePodEphemeralContainersUpdate, existing ones may not change or go, and neither a pod
create nor a plain pod update may set them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.core import ApiCore
from minik3s.api import errors
from minik3s.api.options import WriteOptions

SUB = "ephemeralcontainers"
POD = {"metadata": {"name": "p"},
       "spec": {"containers": [{"name": "web", "image": "nginx"}],
                "initContainers": [{"name": "setup", "image": "busybox"}]}}
DEBUG = {"name": "debugger", "image": "busybox", "command": ["sleep", "3600"], "targetContainerName": "web"}


def _pods(core: ApiCore) -> Any:
    info = core.registry.get("", "v1", "pods")
    assert info is not None
    return info


async def _pod(core: ApiCore) -> Any:
    pods = _pods(core)
    await core.create(pods, "default", copy.deepcopy(POD), WriteOptions(field_manager="kubectl"))
    return pods


def _causes(e: pytest.ExceptionInfo[errors.InvalidError]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in e.value.details["causes"]]


async def test_a_patch_adds_a_defaulted_debug_container_and_nothing_else(core: ApiCore) -> None:
    pods = await _pod(core)
    before = core.get(pods, "default", "p")
    got = await core.patch(pods, "default", "p", "strategic", {
        "metadata": {"labels": {"sneaked": "in"}},
        "spec": {"ephemeralContainers": [DEBUG], "containers": [{"name": "web", "image": "nginx:2"}]}},
        subresource=SUB)
    [eph] = got["spec"]["ephemeralContainers"]
    assert eph == {**DEBUG, "imagePullPolicy": "Always", "resources": {}, "terminationMessagePath": "/dev/termination-log",
                   "terminationMessagePolicy": "File"}
    # the rest of the body is the stored pod's
    assert got["spec"]["containers"] == before["spec"]["containers"]
    assert "labels" not in got["metadata"]
    assert int(got["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
    # a second one joins the first (a bare strategic merge patch puts a new item before the
    # server-only ones, as upstream's mergeSortedSlice; `kubectl debug` sends $setElementOrder)
    got = await core.patch(pods, "default", "p", "strategic", {"spec": {"ephemeralContainers": [
        {"name": "debugger-2", "image": "busybox"}]}}, subresource=SUB)
    assert [c["name"] for c in got["spec"]["ephemeralContainers"]] == ["debugger-2", "debugger"]
    served = core.subresource(pods, SUB).get(core, pods, "default", "p")  # GET pods/p/ephemeralcontainers
    assert isinstance(served, dict) and served["spec"]["ephemeralContainers"] == got["spec"]["ephemeralContainers"]


async def test_existing_ephemeral_containers_may_not_change_or_go(core: ApiCore) -> None:
    pods = await _pod(core)
    await core.patch(pods, "default", "p", "strategic", {"spec": {"ephemeralContainers": [DEBUG]}},
                     subresource=SUB)
    pod = core.get(pods, "default", "p")
    changed = copy.deepcopy(pod)
    changed["spec"]["ephemeralContainers"][0]["image"] = "alpine"
    with pytest.raises(errors.InvalidError) as e:
        await core.update(pods, "default", "p", changed, subresource=SUB)
    assert _causes(e)[0][0] == "spec.ephemeralContainers[debugger]"
    assert 'existing ephemeral containers "debugger" may not be changed' in _causes(e)[0][1]
    gone = copy.deepcopy(pod)
    gone["spec"]["ephemeralContainers"] = []
    with pytest.raises(errors.InvalidError) as e:
        await core.update(pods, "default", "p", gone, subresource=SUB)
    assert 'existing ephemeral containers "debugger" may not be removed' in _causes(e)[0][1]
    assert core.get(pods, "default", "p")["spec"]["ephemeralContainers"] == pod["spec"]["ephemeralContainers"]


@pytest.mark.parametrize(("container", "field", "message"), [
    pytest.param({"name": "web", "image": "busybox"}, "spec.ephemeralContainers[0].name",
                 'Duplicate value: "web"', id="a container's name"),
    pytest.param({"name": "setup", "image": "busybox"}, "spec.ephemeralContainers[0].name",
                 'Duplicate value: "setup"', id="an init container's name"),
    pytest.param({"name": "d", "image": "busybox", "ports": [{"containerPort": 80}]},
                 "spec.ephemeralContainers[0].ports", "Forbidden: cannot be set for an Ephemeral Container",
                 id="ports"),
    pytest.param({"name": "d", "image": "busybox", "readinessProbe": {"exec": {"command": ["true"]}}},
                 "spec.ephemeralContainers[0].readinessProbe",
                 "Forbidden: cannot be set for an Ephemeral Container", id="probe"),
    pytest.param({"name": "d", "image": "busybox", "resources": {"requests": {"cpu": "1"}}},
                 "spec.ephemeralContainers[0].resources", "Forbidden: cannot be set for an Ephemeral Container",
                 id="resources"),
    pytest.param({"name": "d", "image": "busybox", "targetContainerName": "nope"},
                 "spec.ephemeralContainers[0].targetContainerName", 'Not found: "nope"', id="unknown target"),
    pytest.param({"name": "d"}, "spec.ephemeralContainers[0].image", "Required value", id="no image"),
])
async def test_invalid_debug_containers_are_refused(core: ApiCore, container: dict[str, Any], field: str,
                                                    message: str) -> None:
    pods = await _pod(core)
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(pods, "default", "p", "strategic", {"spec": {"ephemeralContainers": [container]}},
                         subresource=SUB)
    assert (field, message) in _causes(e)
    assert "ephemeralContainers" not in core.get(pods, "default", "p")["spec"]


async def test_create_and_plain_update_may_not_set_them(core: ApiCore) -> None:
    pods = _pods(core)
    with pytest.raises(errors.InvalidError) as e:
        await core.create(pods, "default", {**copy.deepcopy(POD), "spec": {**POD["spec"],
                                                                            "ephemeralContainers": [DEBUG]}},
                          WriteOptions())
    assert ("spec.ephemeralContainers", "Forbidden: cannot be set on create") in _causes(e)
    await _pod(core)
    with pytest.raises(errors.InvalidError):
        await core.patch(pods, "default", "p", "strategic", {"spec": {"ephemeralContainers": [DEBUG]}})
