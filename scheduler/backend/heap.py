"""A keyed binary heap with an injected ordering (layer L4, upstream backend/heap).

The scheduling queue needs a heap it can update and delete from by key (a pod's uid) and
whose order comes from a plugin (`QueueSort.less`) or from backoff expiry, so `heapq` with
`__lt__` does not fit. Positions are tracked in a dict, giving O(log n) add/update/delete
and O(1) lookup. Example: with `less=lambda a, b: a < b`, adding 5, 1, 3 under keys
"a", "b", "c" makes `peek()` return 1; `delete("b")` then makes it 3.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class KeyedHeap(Generic[T]):
    __slots__ = ("_items", "_keys", "_pos", "_key_fn", "_less")

    def __init__(self, key_fn: Callable[[T], str], less: Callable[[T, T], bool]) -> None:
        self._items: list[T] = []
        self._keys: list[str] = []
        self._pos: dict[str, int] = {}
        self._key_fn = key_fn
        self._less = less

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._pos

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._items))

    def get(self, key: str) -> T | None:
        i = self._pos.get(key)
        return None if i is None else self._items[i]

    def peek(self) -> T | None:
        return self._items[0] if self._items else None

    def add_or_update(self, item: T) -> None:
        key = self._key_fn(item)
        i = self._pos.get(key)
        if i is not None:
            self._items[i] = item
            self._fix(i)
            return
        self._items.append(item)
        self._keys.append(key)
        self._pos[key] = len(self._items) - 1
        self._up(len(self._items) - 1)

    def delete(self, key: str) -> T | None:
        i = self._pos.get(key)
        if i is None:
            return None
        return self._remove_at(i)

    def pop(self) -> T | None:
        if not self._items:
            return None
        return self._remove_at(0)

    def _remove_at(self, i: int) -> T:
        last = len(self._items) - 1
        item = self._items[i]
        if i != last:
            self._swap(i, last)
        self._items.pop()
        del self._pos[self._keys.pop()]
        if i != last:
            self._fix(i)
        return item

    def _fix(self, i: int) -> None:
        if not self._down(i):
            self._up(i)

    def _swap(self, i: int, j: int) -> None:
        items, keys = self._items, self._keys
        items[i], items[j] = items[j], items[i]
        keys[i], keys[j] = keys[j], keys[i]
        self._pos[keys[i]] = i
        self._pos[keys[j]] = j

    def _up(self, i: int) -> None:
        items, less = self._items, self._less
        while i > 0:
            parent = (i - 1) // 2
            if not less(items[i], items[parent]):
                break
            self._swap(i, parent)
            i = parent

    def _down(self, i0: int) -> bool:
        items, less = self._items, self._less
        n = len(items)
        i = i0
        while True:
            left = 2 * i + 1
            if left >= n:
                break
            j = left
            right = left + 1
            if right < n and less(items[right], items[left]):
                j = right
            if not less(items[j], items[i]):
                break
            self._swap(i, j)
            i = j
        return i > i0
