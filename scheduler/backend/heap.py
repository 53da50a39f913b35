"""A keyed binary heap with an injected ordering (layer L4, upstream backend/heap).

The scheduling queue needs a heap it can update and delete from by key (a pod's uid) and
whose order comes from a plugin (`QueueSort.less`) or from backoff expiry. The structure is
always exactly the one Go's container/heap builds (upstream's backend/heap): add appends and
moves up, pop and delete swap with the last element, remove it and fix (down, else up) at
the hole, update fixes in place; every comparison is strict, so items that compare equal
pop in upstream's order. Example: with `less=lambda a, b: a < b`, adding 5, 1, 3 under keys
"a", "b", "c" makes `peek()` return 1; `delete("b")` then makes it 3.

Data flow: the heap is one list of `(sort_key, key, item)` entries; `get`/`in` go through a
key -> entry dict. With `sort_key`, each item's key is computed when it is added or updated
and two items whose keys are both not None are compared as tuples instead of through
`less`; the caller guarantees `sort_key(a) < sort_key(b)` exactly when `less(a, b)` (see
QueueSortPlugin.sort_key). An item whose key is None is compared through `less`.

Two ways to take the same steps:
- C: while every live item has a sort key and no two are equal (tracked in a count per
  key), add is `heapq.heappush` and pop is `heapq.heappop` on the entries. heappush's
  sift is Go's `up` (move up while strictly less than the parent). heappop sifts
  bottom-up (smaller child up to a leaf, then the moved item back up), which lands every
  element where Go's `down` puts it whenever no two compared keys are equal: along the
  smaller-child path the keys increase, so both stop below the same prefix of keys
  smaller than the moved item. Entries never tie on their sort key here, so the tuple
  comparison never reaches the key string or the item.
- Python: otherwise (a gang member without a key, an unhashable key, or equal keys, as a
  fake clock gives), or while positions are wanted: the same up/down written out, tracking
  each key's index.
The C functions do not track positions, so after them the key -> index map is dropped and
rebuilt (O(n), in a comprehension) when a delete or an update needs it; the next
max(16, n // 8) adds/pops then keep it current in Python, so a stream of updates between
pops costs what the Python heap costs rather than a rebuild each. `tests/scheduler/backend/
test_heap.py` checks the pop order and the array against a plain port of container/heap.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")

# (sort key or None, key, item)
_Entry = tuple[Any, str, T]


class KeyedHeap(Generic[T]):
    __slots__ = ("_heap", "_entries", "_pos", "_key_fn", "_less", "_sort_key", "_counts",
                 "_ties", "_unkeyed", "_keep_pos")

    def __init__(self, key_fn: Callable[[T], str], less: Callable[[T, T], bool], *,
                 sort_key: Callable[[T], tuple[Any, ...] | None] | None = None) -> None:
        self._heap: list[_Entry[T]] = []
        self._entries: dict[str, _Entry[T]] = {}
        # key -> index in _heap, or None after heapq moved entries without telling
        self._pos: dict[str, int] | None = {}
        self._key_fn = key_fn
        self._less = less
        self._sort_key = sort_key
        self._counts: dict[Hashable, int] = {}  # sort key -> live entries with it
        self._ties = 0  # live entries beyond the first with the same sort key
        self._unkeyed = 0  # live entries whose sort key is None
        self._keep_pos = 0  # adds/pops that still keep _pos current (after a rebuild)

    def __len__(self) -> int:
        return len(self._heap)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[T]:
        return iter([e[2] for e in self._heap])

    def get(self, key: str) -> T | None:
        e = self._entries.get(key)
        return None if e is None else e[2]

    def peek(self) -> T | None:
        return self._heap[0][2] if self._heap else None

    # -- bookkeeping -------------------------------------------------------------------

    def _count(self, sk: Any) -> None:
        if sk is None:
            self._unkeyed += 1
            return
        try:
            c = self._counts.get(sk, 0)
        except TypeError:  # an unhashable key: compared in Python only, like a missing one
            self._unkeyed += 1
            return
        self._counts[sk] = c + 1
        if c:
            self._ties += 1

    def _uncount(self, sk: Any) -> None:
        if sk is None:
            self._unkeyed -= 1
            return
        try:
            c = self._counts[sk]
        except TypeError:
            self._unkeyed -= 1
            return
        if c == 1:
            del self._counts[sk]
        else:
            self._counts[sk] = c - 1
            self._ties -= 1

    def _fast(self) -> bool:
        """heapq may take this step: keys total and distinct, positions not wanted."""
        if self._ties or self._unkeyed:
            return False
        if self._pos is not None:
            if self._keep_pos > 0:
                self._keep_pos -= 1
                return False
            self._pos = None
        return True

    def _positions(self) -> dict[str, int]:
        pos = self._pos
        if pos is None:
            pos = self._pos = {e[1]: i for i, e in enumerate(self._heap)}
        self._keep_pos = max(16, len(self._heap) // 8)
        return pos

    # -- operations --------------------------------------------------------------------

    def add_or_update(self, item: T) -> None:
        key = self._key_fn(item)
        sk = self._sort_key(item) if self._sort_key is not None else None
        entry: _Entry[T] = (sk, key, item)
        entries = self._entries
        old = entries.get(key)
        entries[key] = entry
        if old is not None:
            self._count(sk)
            self._uncount(old[0])
            pos = self._positions()
            i = pos[key]
            self._heap[i] = entry
            self._fix(i, pos)
            return
        self._count(sk)
        if self._pos is None and not self._ties and not self._unkeyed or self._fast():
            heapq.heappush(self._heap, entry)
            return
        pos = self._positions() if self._pos is None else self._pos
        self._heap.append(entry)
        pos[key] = len(self._heap) - 1
        self._up(len(self._heap) - 1, pos)

    def delete(self, key: str) -> T | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        pos = self._positions()
        self._remove_at(pos[key], pos)
        return entry[2]

    def pop(self) -> T | None:
        heap = self._heap
        if not heap:
            return None
        if self._pos is None and not self._ties and not self._unkeyed or self._fast():
            entry = heapq.heappop(heap)
            del self._entries[entry[1]]
            del self._counts[entry[0]]  # _uncount, inline: no ties on this path
            return entry[2]
        pos = self._positions() if self._pos is None else self._pos
        return self._remove_at(0, pos)

    # -- Go's container/heap, positions tracked --------------------------------------

    def _remove_at(self, i: int, pos: dict[str, int]) -> T:
        heap = self._heap
        last = len(heap) - 1
        entry = heap[i]
        if i != last:
            self._swap(i, last, pos)
        heap.pop()
        del pos[entry[1]]
        del self._entries[entry[1]]
        self._uncount(entry[0])
        if i != last:
            self._fix(i, pos)
        return entry[2]

    def _fix(self, i: int, pos: dict[str, int]) -> None:
        if not self._down(i, pos):
            self._up(i, pos)

    def _swap(self, i: int, j: int, pos: dict[str, int]) -> None:
        heap = self._heap
        a, b = heap[j], heap[i]
        heap[i], heap[j] = a, b
        pos[a[1]] = i
        pos[b[1]] = j

    def _lt(self, a: _Entry[T], b: _Entry[T]) -> bool:
        """Entry a orders before entry b: by their sort keys when both have one, else `less`."""
        ka, kb = a[0], b[0]
        if ka is not None and kb is not None:
            return bool(ka < kb)
        return self._less(a[2], b[2])

    def _up(self, i: int, pos: dict[str, int]) -> None:
        heap, lt = self._heap, self._lt
        while i > 0:
            parent = (i - 1) // 2
            if not lt(heap[i], heap[parent]):
                break
            self._swap(i, parent, pos)
            i = parent

    def _down(self, i0: int, pos: dict[str, int]) -> bool:
        heap, lt = self._heap, self._lt
        n = len(heap)
        i = i0
        while True:
            left = 2 * i + 1
            if left >= n:
                break
            j = left
            right = left + 1
            if right < n and lt(heap[right], heap[left]):
                j = right
            if not lt(heap[j], heap[i]):
                break
            self._swap(i, j, pos)
            i = j
        return i > i0
