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
    """Objects by key plus named indices. Each object's index values are kept with it (one list
    per indexer, in the order of `_names`), so an update computes the new object's values once
    and touches an index only where they changed; the old object is never indexed again (a bind
    changes one of a pod's six indices)."""

    __slots__ = ("_items", "_indexers", "_indices", "_names", "_values", "version")

    def __init__(self) -> None:
        # bumped by every put and remove: a reader may keep what it derived from the contents
        # while the version is unchanged
        self.version = 0
        self._items: dict[str, JsonDict] = {}
        self._indexers: dict[str, IndexFunc] = {}
        self._indices: dict[str, dict[str, set[str]]] = {}
        self._names: tuple[str, ...] = ()
        self._values: dict[str, tuple[list[str], ...]] = {}  # key -> each index's values

    def add_index(self, name: str, fn: IndexFunc) -> None:
        """Register (or replace) an index and build it over the current contents (only this
        index: the others' values are kept)."""
        if name not in self._indexers:
            self._names = (*self._names, name)
        self._indexers[name] = fn
        pos = self._names.index(name)
        idx: dict[str, set[str]] = {}
        for k, obj in self._items.items():
            vs = fn(obj)
            old = self._values.get(k, ())
            self._values[k] = (*old[:pos], vs, *old[pos + 1:])
            for v in vs:
                idx.setdefault(v, set()).add(k)
        self._indices[name] = idx

    def _drop(self, key: str, name: str, values: list[str]) -> None:
        idx = self._indices[name]
        for v in values:
            s = idx.get(v)
            if s is not None:
                s.discard(key)
                if not s:
                    del idx[v]

    def put(self, key: str, obj: JsonDict) -> JsonDict | None:
        old = self._items.get(key)
        self.version += 1
        self._items[key] = obj
        if self._names:
            new_values = tuple(fn(obj) for fn in self._indexers.values())
            old_values = self._values.get(key) if old is not None else None
            self._values[key] = new_values
            for i, name in enumerate(self._names):
                vs = new_values[i]
                if old_values is not None:
                    before = old_values[i]
                    if before == vs:
                        continue
                    self._drop(key, name, before)
                idx = self._indices[name]
                for v in vs:
                    idx.setdefault(v, set()).add(key)
        return old

    def remove(self, key: str) -> JsonDict | None:
        old = self._items.pop(key, None)
        if old is not None:
            self.version += 1
            values = self._values.pop(key, None)
            if values is not None:
                for name, vs in zip(self._names, values, strict=True):
                    self._drop(key, name, vs)
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
