"""Indexed local object cache behind every informer (client-go's thread-safe store + indexers).

Keys are "namespace/name" (or "name" for cluster-scoped objects). Objects are the shared
read-only dicts delivered by the transport; never mutate them.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable

from minik3s.api.types import JsonDict

IndexFunc = Callable[[JsonDict], list[str]]


def object_key(obj: JsonDict) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    name = meta.get("name") or ""
    return f"{ns}/{name}" if ns else name


class Store:
    __slots__ = ("_items", "_indexers", "_indices", "version")

    def __init__(self) -> None:
        # bumped by every put and remove: a reader may keep what it derived from the contents
        # while the version is unchanged
        self.version = 0
        self._items: dict[str, JsonDict] = {}
        self._indexers: dict[str, IndexFunc] = {}
        self._indices: dict[str, dict[str, set[str]]] = {}

    def add_index(self, name: str, fn: IndexFunc) -> None:
        self._indexers[name] = fn
        idx: dict[str, set[str]] = {}
        for k, obj in self._items.items():
            for v in fn(obj):
                idx.setdefault(v, set()).add(k)
        self._indices[name] = idx

    def _unindex(self, key: str, obj: JsonDict) -> None:
        for name, fn in self._indexers.items():
            idx = self._indices[name]
            for v in fn(obj):
                s = idx.get(v)
                if s is not None:
                    s.discard(key)
                    if not s:
                        del idx[v]

    def _index(self, key: str, obj: JsonDict) -> None:
        for name, fn in self._indexers.items():
            idx = self._indices[name]
            for v in fn(obj):
                idx.setdefault(v, set()).add(key)

    def put(self, key: str, obj: JsonDict) -> JsonDict | None:
        old = self._items.get(key)
        if old is not None and self._indexers:
            self._unindex(key, old)
        self.version += 1
        self._items[key] = obj
        if self._indexers:
            self._index(key, obj)
        return old

    def remove(self, key: str) -> JsonDict | None:
        old = self._items.pop(key, None)
        if old is not None:
            self.version += 1
            if self._indexers:
                self._unindex(key, old)
        return old

    def get(self, key: str) -> JsonDict | None:
        return self._items.get(key)

    def list(self) -> list[JsonDict]:
        return list(self._items.values())

    def keys(self) -> Iterable[str]:
        return list(self._items.keys())

    def by_index(self, name: str, value: str) -> builtins.list[JsonDict]:
        keys = self._indices.get(name, {}).get(value)
        if not keys:
            return []
        return [self._items[k] for k in keys if k in self._items]

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        return key in self._items
