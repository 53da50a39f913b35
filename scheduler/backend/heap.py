"""A keyed binary heap with an injected ordering (layer L4, upstream backend/heap).

The scheduling queue needs a heap it can update and delete from by key (a pod's uid) and
whose order comes from a plugin (`QueueSort.less`) or from backoff expiry, so `heapq` with
`__lt__` does not fit. Positions are tracked in a dict, giving O(log n) add/update/delete
and O(1) lookup. The algorithm is Go's container/heap (up / down with the same comparisons),
so items that compare equal pop in upstream's order. Example: with `less=lambda a, b: a < b`,
adding 5, 1, 3 under keys "a", "b", "c" makes `peek()` return 1; `delete("b")` then makes it 3.

With `sort_key`, each item's key is computed when it is added or updated and two items whose
keys are both not None are compared as tuples (in C) instead of through `less`; the caller
guarantees `sort_key(a) < sort_key(b)` exactly when `less(a, b)` (see
QueueSortPlugin.sort_key), so the heap takes the same steps either way. An item whose key is
None is compared through `less`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class KeyedHeap(Generic[T]):
    __slots__ = ("_items", "_keys", "_sort", "_pos", "_key_fn", "_less", "_sort_key")

    def __init__(self, key_fn: Callable[[T], str], less: Callable[[T, T], bool], *,
                 sort_key: Callable[[T], tuple[Any, ...] | None] | None = None) -> None:
        self._items: list[T] = []
        self._keys: list[str] = []
        self._sort: list[tuple[Any, ...] | None] = []
        self._pos: dict[str, int] = {}
        self._key_fn = key_fn
        self._less = less
        self._sort_key = sort_key

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
        sk = self._sort_key(item) if self._sort_key is not None else None
        i = self._pos.get(key)
        if i is not None:
            self._items[i] = item
            self._sort[i] = sk
            self._fix(i)
            return
        self._items.append(item)
        self._keys.append(key)
        self._sort.append(sk)
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
        self._sort.pop()
        del self._pos[self._keys.pop()]
        if i != last:
            self._fix(i)
        return item

    def _fix(self, i: int) -> None:
        if not self._down(i):
            self._up(i)

    def _swap(self, i: int, j: int) -> None:
        items, keys, sort = self._items, self._keys, self._sort
        items[i], items[j] = items[j], items[i]
        keys[i], keys[j] = keys[j], keys[i]
        sort[i], sort[j] = sort[j], sort[i]
        self._pos[keys[i]] = i
        self._pos[keys[j]] = j

    def _lt(self, i: int, j: int) -> bool:
        """Item i orders before item j: by their sort keys when both have one, else `less`."""
        a, b = self._sort[i], self._sort[j]
        if a is not None and b is not None:
            return a < b
        return self._less(self._items[i], self._items[j])

    def _up(self, i: int) -> None:
        sort, lt = self._sort, self._lt
        while i > 0:
            parent = (i - 1) // 2
            a, b = sort[i], sort[parent]
            if not (a < b if a is not None and b is not None else lt(i, parent)):
                break
            self._swap(i, parent)
            i = parent

    def _down(self, i0: int) -> bool:
        sort, lt = self._sort, self._lt
        n = len(sort)
        i = i0
        while True:
            left = 2 * i + 1
            if left >= n:
                break
            j = left
            right = left + 1
            if right < n:
                a, b = sort[right], sort[left]
                if a < b if a is not None and b is not None else lt(right, left):
                    j = right
            a, b = sort[j], sort[i]
            if not (a < b if a is not None and b is not None else lt(j, i)):
                break
            self._swap(i, j)
            i = j
        return i > i0
