"""The in-process transport never lets objects alias across the call: the server does not
change what the caller handed in, and the caller cannot change the stored object through what
it got back (single objects out are the caller's; only `list(read_only=True)`, writes called
with `read_only=True` and watch events share the stored objects, by contract). On the real API
(`real_api`)."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from minik3s.api.resources import CONFIGMAPS, DEPLOYMENTS, PODS
from minik3s.api.types import JsonDict
from minik3s.client.local import LocalClient


def pod(name: str) -> JsonDict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": 0.5}}}]}}


def deployment(name: str) -> JsonDict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def scribble(obj: Any) -> None:
    """Change every container the caller holds, as a careless caller would."""
    if isinstance(obj, dict):
        for v in list(obj.values()):
            scribble(v)
        obj["scribbled"] = True
    elif isinstance(obj, list):
        for v in obj:
            scribble(v)
        obj.append("scribbled")


Write = Callable[[LocalClient], Awaitable[JsonDict]]


async def _cm(c: LocalClient) -> None:
    await c.create(CONFIGMAPS, {"metadata": {"name": "cm"}, "data": {"a": "1"}}, "default")


WRITES: list[Any] = [
    pytest.param(PODS, "p", None, lambda c, body: c.create(PODS, body, "default"), pod("p"), id="create"),
    pytest.param(CONFIGMAPS, "cm", _cm, lambda c, body: c.update(CONFIGMAPS, body),
                 {"metadata": {"name": "cm", "namespace": "default"}, "data": {"a": "2", "nested": "x"}},
                 id="update"),
    pytest.param(CONFIGMAPS, "cm", _cm, lambda c, body: c.patch(CONFIGMAPS, "cm", body, "default"),
                 {"data": {"b": "2"}, "metadata": {"labels": {"x": "y"}}}, id="merge-patch"),
    pytest.param(DEPLOYMENTS, "d", lambda c: c.create(DEPLOYMENTS, deployment("d"), "default"),
                 lambda c, body: c.patch(DEPLOYMENTS, "d", body, "default", patch_type="strategic"),
                 {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2",
                                                                 "env": [{"name": "A", "value": "1"}]}]}}}},
                 id="strategic-patch"),
    pytest.param(CONFIGMAPS, "applied", None,
                 lambda c, body: c.patch(CONFIGMAPS, "applied", body, "default", patch_type="apply",
                                         field_manager="tool"),
                 {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied", "labels": {"a": "b"}},
                  "data": {"k": "v"}}, id="apply"),
]


@pytest.mark.parametrize(("res", "name", "setup", "write", "body"), WRITES)
async def test_a_write_neither_changes_its_input_nor_shares_its_result(real_api, res, name, setup, write, body):
    c: LocalClient = real_api._client
    if setup is not None:
        await setup(c)
    sent = copy.deepcopy(body)
    out = await write(c, body)
    assert body == sent  # the server took a copy: no defaults, uid, managedFields written into it
    assert out is not real_api.core.get(res, "default", name)  # without read_only: a private copy
    stored = copy.deepcopy(real_api.core.get(res, "default", name))
    assert out == stored
    scribble(out)
    scribble(body)  # changing the input afterwards does not reach the stored object either
    assert real_api.core.get(res, "default", name) == stored


async def test_changing_a_created_objects_managed_fields_reaches_no_other_object(real_api):
    """Objects of one shape may share their creator's fieldsV1 inside the server; a result the
    caller owns is a copy of it, so changing it changes neither the stored objects nor the next
    create's record."""
    c: LocalClient = real_api._client
    first = await c.create(PODS, pod("one"), "default")
    want = copy.deepcopy(first["metadata"]["managedFields"])
    scribble(first)
    second = await c.create(PODS, pod("two"), "default")
    assert second["metadata"]["managedFields"][0]["fieldsV1"] == want[0]["fieldsV1"]
    assert real_api.core.get(PODS, "default", "one")["metadata"]["managedFields"][0]["fieldsV1"] == want[0][
        "fieldsV1"]


async def test_reads_and_deletes_hand_out_copies(real_api):
    c: LocalClient = real_api._client
    await c.create(PODS, pod("r"), "default")
    await c.create(CONFIGMAPS, {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}, "default")
    stored = copy.deepcopy(real_api.core.get(PODS, "default", "r"))
    scribble(await c.get(PODS, "r", "default"))
    scribble((await c.list(PODS, "default"))["items"])
    assert real_api.core.get(PODS, "default", "r") == stored
    # a delete held by a finalizer returns the object as it now is (deletionTimestamp set)
    out = await c.delete(CONFIGMAPS, "held", "default")
    kept = copy.deepcopy(real_api.core.get(CONFIGMAPS, "default", "held"))
    assert out == kept and kept["metadata"]["deletionTimestamp"]
    scribble(out)
    assert real_api.core.get(CONFIGMAPS, "default", "held") == kept


async def test_read_only_list_shares_the_stored_objects(real_api):
    """The documented exception (`shares_items`): read-only lists avoid the copy."""
    c: LocalClient = real_api._client
    await c.create(PODS, pod("s"), "default")
    items = (await c.list(PODS, "default", read_only=True))["items"]
    assert c.shares_items
    assert items[0] is real_api.core.get(PODS, "default", "s")


async def _pod(c: LocalClient) -> None:
    await c.create(PODS, pod("st"), "default")


READ_ONLY_WRITES: list[Any] = [
    pytest.param(PODS, "p", None, lambda c, body: c.create(PODS, body, "default", read_only=True), pod("p"),
                 id="create"),
    pytest.param(CONFIGMAPS, "cm", _cm, lambda c, body: c.update(CONFIGMAPS, body, read_only=True),
                 {"metadata": {"name": "cm", "namespace": "default"}, "data": {"a": "2"}}, id="update"),
    pytest.param(PODS, "st", _pod, lambda c, body: c.update_status(PODS, body, read_only=True),
                 {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "st", "namespace": "default"},
                  "spec": pod("st")["spec"], "status": {"phase": "Running"}}, id="update-status"),
    pytest.param(CONFIGMAPS, "cm", _cm, lambda c, body: c.patch(CONFIGMAPS, "cm", body, "default", read_only=True),
                 {"data": {"b": "2"}}, id="merge-patch"),
    pytest.param(PODS, "st", _pod, lambda c, body: c.patch(PODS, "st", body, "default", patch_type="strategic",
                                                           subresource="status", read_only=True),
                 {"status": {"conditions": [{"type": "PodScheduled", "status": "False"}]}}, id="status-patch"),
    pytest.param(CONFIGMAPS, "applied", None,
                 lambda c, body: c.patch(CONFIGMAPS, "applied", body, "default", patch_type="apply",
                                         field_manager="tool", read_only=True),
                 {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"k": "v"}},
                 id="apply"),
]


@pytest.mark.parametrize(("res", "name", "setup", "write", "body"), READ_ONLY_WRITES)
async def test_a_read_only_write_returns_the_stored_object(real_api, res, name, setup, write, body):
    """For callers that drop or only read a write's result: no copy out, the stored object itself
    (its input is still copied in); what it returns is what a fresh GET returns."""
    c: LocalClient = real_api._client
    if setup is not None:
        await setup(c)
    sent = copy.deepcopy(body)
    out = await write(c, body)
    assert body == sent
    assert out is real_api.core.get(res, "default", name)
    assert out == await c.get(res, name, "default")
    assert out["metadata"]["managedFields"]  # the write was recorded as any other


async def test_a_read_only_dry_run_create_stores_nothing(real_api):
    c: LocalClient = real_api._client
    out = await c.create(PODS, pod("dry"), "default", dry_run=True, read_only=True)
    assert out["metadata"]["name"] == "dry" and out["metadata"]["uid"]
    assert real_api.core.store.get(PODS.key("default", "dry")) is None


async def test_a_handed_over_create_stores_what_a_copied_create_stores(real_api):
    """`handover=True` (the scheduler's and descheduler's Events): the caller built the object for
    this create and drops it, so the core takes it without a copy; what is stored, returned and
    read back is what the same create without handover stores."""
    c: LocalClient = real_api._client
    given, kept = pod("given"), pod("kept")
    out_given = await c.create(PODS, given, "default", read_only=True, handover=True)
    out_kept = await c.create(PODS, kept, "default", read_only=True)
    assert out_given is given  # the core filled in the object it was handed, and stored it
    assert kept == pod("kept")  # without handover the caller's object is untouched

    def comparable(o: JsonDict) -> JsonDict:
        o = copy.deepcopy(o)
        for k in ("name", "uid", "resourceVersion", "creationTimestamp"):
            o["metadata"].pop(k)
        for mf in o["metadata"]["managedFields"]:
            mf.pop("time")
        return o

    assert comparable(out_given) == comparable(out_kept)
    assert out_given == await c.get(PODS, "given", "default")
