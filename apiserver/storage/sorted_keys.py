"""An incrementally maintained sorted set of storage keys (layer L4, apiserver/storage only).

Why: `Store.list(prefix)` must return objects sorted by key (etcd order: namespace, then name)
without scanning every key of every resource. A plain sorted Python list would cost an O(n)
memmove per insert (100k pods -> ~25 us per create); this keeps the keys in a list of sorted
chunks (the idea behind `sortedcontainers.SortedList`), so insert/remove touch one chunk and a
prefix range is found by two bisections.

Data flow: the store's writer calls `add`/`discard` when a key appears/disappears (updates do not
change the key set); `list(prefix)` walks `iter_prefix(prefix)`.

Worked example (chunk size 1000): 100k keys live in ~50-100 chunks; `add("core/pods/ns1/p7")`
bisects the 100-entry `maxes` list, then inserts into one <=2000-entry chunk; a chunk that grows
past 2000 splits in two halves. `iter_prefix("core/pods/ns1/")` bisects to the first key >= the
prefix and yields keys while they start with it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator

_LOAD = 1000


class SortedKeys:
    """A sorted set of strings with O(log n + chunk) insert/remove and prefix iteration."""

    __slots__ = ("_chunks", "_maxes", "_len")

    def __init__(self) -> None:
        self._chunks: list[list[str]] = []
        self._maxes: list[str] = []
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def __contains__(self, key: str) -> bool:
        maxes = self._maxes
        i = bisect_left(maxes, key)
        if i == len(maxes):
            return False
        chunk = self._chunks[i]
        j = bisect_left(chunk, key)
        return j < len(chunk) and chunk[j] == key

    def add(self, key: str) -> None:
        """Insert `key` (no-op if present)."""
        maxes = self._maxes
        if not maxes:
            self._chunks.append([key])
            maxes.append(key)
            self._len = 1
            return
        i = bisect_left(maxes, key)
        if i == len(maxes):
            i -= 1
            chunk = self._chunks[i]
            chunk.append(key)
            maxes[i] = key
        else:
            chunk = self._chunks[i]
            j = bisect_left(chunk, key)
            if j < len(chunk) and chunk[j] == key:
                return
            chunk.insert(j, key)
        self._len += 1
        if len(chunk) > 2 * _LOAD:
            tail = chunk[_LOAD:]
            del chunk[_LOAD:]
            maxes[i] = chunk[-1]
            self._chunks.insert(i + 1, tail)
            maxes.insert(i + 1, tail[-1])

    def discard(self, key: str) -> None:
        """Remove `key` if present."""
        maxes = self._maxes
        i = bisect_left(maxes, key)
        if i == len(maxes):
            return
        chunk = self._chunks[i]
        j = bisect_left(chunk, key)
        if j == len(chunk) or chunk[j] != key:
            return
        del chunk[j]
        self._len -= 1
        if not chunk:
            del self._chunks[i]
            del maxes[i]
            return
        maxes[i] = chunk[-1]
        # Merge a shrunken chunk into its right neighbour so chunks stay reasonably full.
        if len(chunk) < _LOAD // 4 and i + 1 < len(self._chunks):
            chunk.extend(self._chunks[i + 1])
            maxes[i] = chunk[-1]
            del self._chunks[i + 1]
            del maxes[i + 1]

    def iter_prefix(self, prefix: str) -> Iterator[str]:
        """Keys starting with `prefix`, in sorted order. Do not mutate the set while iterating."""
        maxes = self._maxes
        i = bisect_left(maxes, prefix)
        chunks = self._chunks
        n = len(chunks)
        if i == n:
            return
        j = bisect_left(chunks[i], prefix)
        while i < n:
            chunk = chunks[i]
            for k in range(j, len(chunk)):
                key = chunk[k]
                if not key.startswith(prefix):
                    return
                yield key
            i += 1
            j = 0

    def __iter__(self) -> Iterator[str]:
        for chunk in self._chunks:
            yield from chunk

    @classmethod
    def from_keys(cls, keys: list[str]) -> SortedKeys:
        """Bulk-build from unsorted, distinct keys (startup): one sort, then chunking."""
        sk = cls()
        ordered = sorted(keys)
        for i in range(0, len(ordered), _LOAD):
            chunk = ordered[i : i + _LOAD]
            sk._chunks.append(chunk)
            sk._maxes.append(chunk[-1])
        sk._len = len(ordered)
        return sk
