"""An in-memory API (just what the simulated kubelet uses) with informer-like stores, for unit tests.

Writes bump a global resourceVersion and call informer handlers synchronously, as the shared
informer does on the loop. Pod deletion follows kube-apiserver: graceful DELETE sets
deletionTimestamp/deletionGracePeriodSeconds (a later DELETE may only shorten it); grace 0
removes the object unless finalizers remain; a uid precondition that does not match conflicts.
"""

from __future__ import annotations

import copy
import itertools
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from minik3s.api.errors import already_exists, conflict, not_found
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.utils.clock import FakeClock, rfc3339


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out


class FakeStore:
    def __init__(self) -> None:
        self.items: dict[str, JsonDict] = {}

    def get(self, key: str) -> JsonDict | None:
        return self.items.get(key)

    def list(self) -> list[JsonDict]:
        return list(self.items.values())

    def keys(self) -> list[str]:
        return list(self.items)


class FakeInformer:
    def __init__(self) -> None:
        self.store = FakeStore()
        self.handlers: list[tuple[Callable[..., None] | None, ...]] = []
        self.has_synced = True

    def add_handler(self, *, on_add: Any = None, on_update: Any = None, on_delete: Any = None) -> None:
        self.handlers.append((on_add, on_update, on_delete))

    async def wait_for_sync(self) -> None:
        return None

    def emit(self, kind: str, key: str, old: JsonDict | None, new: JsonDict | None) -> None:
        if new is None:
            self.store.items.pop(key, None)
        else:
            self.store.items[key] = new
        for on_add, on_update, on_delete in self.handlers:
            if kind == "ADDED" and on_add:
                on_add(new)
            elif kind == "MODIFIED" and on_update:
                on_update(old, new)
            elif kind == "DELETED" and on_delete:
                on_delete(old)


def _obj_key(obj: JsonDict) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else meta["name"]


class FakeCluster:
    """Client protocol subset + SharedInformerFactory subset over dicts."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.rv = itertools.count(1)
        self.objects: dict[str, dict[str, JsonDict]] = {}
        self.informers: dict[str, FakeInformer] = {}
        self.calls: list[tuple[Any, ...]] = []
        self.history: dict[str, list[JsonDict]] = {}
        self.fail_next: dict[str, list[Exception]] = {}  # verb -> errors to raise on its next calls

    # factory
    def informer(self, res: ResourceInfo, namespace: str | None = None, **_: Any) -> FakeInformer:
        inf = self.informers.get(res.resource)
        if inf is None:
            inf = self.informers[res.resource] = FakeInformer()
            for k, v in self.objects.get(res.resource, {}).items():
                inf.store.items[k] = v
        return inf

    def _store(self, res: ResourceInfo) -> dict[str, JsonDict]:
        return self.objects.setdefault(res.resource, {})

    def _commit(self, res: ResourceInfo, kind: str, key: str, old: JsonDict | None, new: JsonDict | None) -> None:
        if new is not None:
            new["metadata"]["resourceVersion"] = str(next(self.rv))
            self._store(res)[key] = new
        else:
            self._store(res).pop(key, None)
        self.history.setdefault(f"{res.resource}:{key}", []).append(copy.deepcopy(new or {"deleted": old}))
        inf = self.informers.get(res.resource)
        if inf is not None:
            inf.emit(kind, key, old, new)

    def _key(self, res: ResourceInfo, name: str, namespace: str | None) -> str:
        return f"{namespace}/{name}" if res.namespaced else name

    def _get(self, res: ResourceInfo, name: str, namespace: str | None) -> JsonDict:
        obj = self._store(res).get(self._key(res, name, namespace))
        if obj is None:
            raise not_found(res.resource, res.group, name)
        return obj

    def _maybe_fail(self, verb: str) -> None:
        errors = self.fail_next.get(verb)
        if errors:
            raise errors.pop(0)

    # client
    async def get(self, res: ResourceInfo, name: str, namespace: str | None = None, **_: Any) -> JsonDict:
        return copy.deepcopy(self._get(res, name, namespace))

    async def create(self, res: ResourceInfo, obj: JsonDict, namespace: str | None = None, **_: Any) -> JsonDict:
        self._maybe_fail("create")
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        if res.namespaced:
            meta["namespace"] = namespace or meta.get("namespace") or "default"
        key = _obj_key(obj)
        if key in self._store(res):
            raise already_exists(res.resource, res.group, meta["name"])
        meta.setdefault("uid", str(uuid.UUID(int=next(self.rv))))
        meta.setdefault("creationTimestamp", rfc3339(self.clock.now()))
        if res.resource == "pods":
            obj.setdefault("status", {}).setdefault("phase", "Pending")
        self.calls.append(("create", res.resource, key))
        self._commit(res, "ADDED", key, None, obj)
        return copy.deepcopy(obj)

    async def update_status(self, res: ResourceInfo, obj: JsonDict) -> JsonDict:
        self._maybe_fail("update_status")
        meta = obj["metadata"]
        cur = self._get(res, meta["name"], meta.get("namespace"))
        if meta.get("resourceVersion") and meta["resourceVersion"] != cur["metadata"]["resourceVersion"]:
            raise conflict(res.resource, res.group, meta["name"])
        new = copy.deepcopy(cur)
        new["status"] = copy.deepcopy(obj.get("status"))
        key = _obj_key(new)
        self.calls.append(("update_status", res.resource, key))
        self._commit(res, "MODIFIED", key, cur, new)
        return copy.deepcopy(new)

    async def patch(self, res: ResourceInfo, name: str, patch: Any, namespace: str | None = None, *,
                    subresource: str | None = None, **_: Any) -> JsonDict:
        self._maybe_fail("patch")
        cur = self._get(res, name, namespace)
        want_rv = (patch.get("metadata") or {}).get("resourceVersion")
        if want_rv and want_rv != cur["metadata"]["resourceVersion"]:
            raise conflict(res.resource, res.group, name)
        new = _merge(cur, patch)
        key = _obj_key(new)
        self.calls.append(("patch", res.resource, key, subresource))
        if (res.resource == "pods" and new["metadata"].get("deletionTimestamp")
                and not new["metadata"].get("finalizers") and new["metadata"].get("deletionGracePeriodSeconds") == 0):
            self._commit(res, "DELETED", key, cur, None)
            return new
        self._commit(res, "MODIFIED", key, cur, new)
        return copy.deepcopy(new)

    async def delete(self, res: ResourceInfo, name: str, namespace: str | None = None, *,
                     grace_period_seconds: int | None = None, preconditions: JsonDict | None = None,
                     **_: Any) -> JsonDict:
        self._maybe_fail("delete")
        cur = self._get(res, name, namespace)
        key = _obj_key(cur)
        self.calls.append(("delete", res.resource, key, grace_period_seconds, preconditions))
        if preconditions and preconditions.get("uid") and preconditions["uid"] != cur["metadata"]["uid"]:
            raise conflict(res.resource, res.group, name, "Precondition failed: UID in precondition")
        grace = grace_period_seconds
        if res.resource == "pods":
            if grace is None:
                grace = int((cur.get("spec") or {}).get("terminationGracePeriodSeconds", 30))
            if not (cur.get("spec") or {}).get("nodeName"):
                grace = 0
            old_grace = cur["metadata"].get("deletionGracePeriodSeconds")
            if old_grace is not None and grace >= old_grace:
                return copy.deepcopy(cur)
        else:
            grace = 0
        if grace == 0 and not cur["metadata"].get("finalizers"):
            self._commit(res, "DELETED", key, cur, None)
            return {"kind": "Status", "status": "Success"}
        new = copy.deepcopy(cur)
        new["metadata"]["deletionTimestamp"] = rfc3339(self.clock.now() + timedelta(seconds=grace))
        new["metadata"]["deletionGracePeriodSeconds"] = grace
        self._commit(res, "MODIFIED", key, cur, new)
        return copy.deepcopy(new)

    async def close(self) -> None:
        return None


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def cluster(clock: FakeClock) -> FakeCluster:
    return FakeCluster(clock)
