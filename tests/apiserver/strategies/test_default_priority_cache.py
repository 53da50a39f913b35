"""Priority admission's cached globalDefault PriorityClass, on the real in-process API.

The request core answers "which class is the global default" from a cache that is re-read only
after a PriorityClass changed (a store watcher, as RBAC's policy). Each story writes classes
between two pod creates and checks the second pod's priority at once, and that pod creates
without a class change do not re-list.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from minik3s.api.errors import ForbiddenError
from minik3s.api.resources import PODS, PRIORITYCLASSES
from minik3s.api.types import JsonDict


def pod(name: str, **spec: Any) -> JsonDict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}], **spec}}


def pclass(name: str, value: int, *, default: bool, policy: str = "PreemptLowerPriority") -> JsonDict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": default, "preemptionPolicy": policy}


def priority(p: JsonDict) -> tuple[int, str | None, str]:
    spec = p["spec"]
    return spec["priority"], spec.get("priorityClassName"), spec["preemptionPolicy"]


async def test_class_created_changed_deleted_between_two_pod_creates(real_api):
    c = real_api._client
    assert priority(await c.create(PODS, pod("p0"), "default")) == (0, None, "PreemptLowerPriority")

    await c.create(PRIORITYCLASSES, pclass("fallback", 1000, default=True, policy="Never"))
    assert priority(await c.create(PODS, pod("p1"), "default")) == (1000, "fallback", "Never")

    # globalDefault switched off: the next pod has no class again
    await c.patch(PRIORITYCLASSES, "fallback", {"globalDefault": False})
    assert priority(await c.create(PODS, pod("p2"), "default")) == (0, None, "PreemptLowerPriority")

    await c.patch(PRIORITYCLASSES, "fallback", {"globalDefault": True})
    assert priority(await c.create(PODS, pod("p3"), "default")) == (1000, "fallback", "Never")

    await c.delete(PRIORITYCLASSES, "fallback")
    assert priority(await c.create(PODS, pod("p4"), "default")) == (0, None, "PreemptLowerPriority")


async def test_pod_creates_without_a_class_change_do_not_relist(real_api):
    c = real_api._client
    cache = real_api.core.default_priority
    await c.create(PRIORITYCLASSES, pclass("d", 7, default=True))
    await c.create(PODS, pod("first"), "default")
    rebuilds = cache.rebuilds
    for i in range(5):
        assert priority(await c.create(PODS, pod(f"p{i}"), "default")) == (7, "d", "PreemptLowerPriority")
    assert cache.rebuilds == rebuilds
    # a class that is not the default still invalidates (the cache cannot know without looking)
    await c.create(PRIORITYCLASSES, pclass("other", 1, default=False))
    await c.create(PODS, pod("after-other"), "default")
    assert cache.rebuilds == rebuilds + 1


async def test_store_write_outside_the_request_core_is_seen(real_api):
    """The watcher is on the store, so a class written by any path (here straight into the
    store, as a restore or another writer would) reaches the next pod create."""
    c = real_api._client
    await c.create(PODS, pod("before"), "default")
    obj = pclass("raw", 42, default=True)
    await real_api.core.store.create(PRIORITYCLASSES.key(None, "raw"), orjson.loads(orjson.dumps(obj)))
    assert priority(await c.create(PODS, pod("after"), "default")) == (42, "raw", "PreemptLowerPriority")


async def test_lowest_of_two_defaults_and_second_default_refused(real_api):
    c = real_api._client
    await c.create(PRIORITYCLASSES, pclass("first", 50, default=True))
    assert priority(await c.create(PODS, pod("a"), "default"))[:2] == (50, "first")
    with pytest.raises(ForbiddenError) as e:
        await c.create(PRIORITYCLASSES, pclass("second", 10, default=True))
    assert e.value.message == ('priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass first is '
                               "already marked as default. Only one default can exist")
    # two defaults reached the store anyway (a race upstream allows): the lowest value wins
    await real_api.core.store.create(PRIORITYCLASSES.key(None, "second"),
                                     pclass("second", 10, default=True))
    assert priority(await c.create(PODS, pod("b"), "default"))[:2] == (10, "second")


async def test_named_class_is_not_served_from_the_default_cache(real_api):
    c = real_api._client
    await c.create(PRIORITYCLASSES, pclass("d", 5, default=True))
    await c.create(PODS, pod("warm"), "default")
    await c.create(PRIORITYCLASSES, pclass("high", 900, default=False))
    assert priority(await c.create(PODS, pod("named", priorityClassName="high"), "default"))[:2] == (900, "high")
    with pytest.raises(ForbiddenError, match="no PriorityClass with name gone was found"):
        await c.create(PODS, pod("missing", priorityClassName="gone"), "default")
