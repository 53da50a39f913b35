"""The small store interface the apiserver's handlers use (so another backend can replace SQLite).

Contract (kine/etcd semantics without etcd):
- One global revision counter. Every successful create/update/delete gets the next revision,
  which is written into the stored object's `metadata.resourceVersion` (as a decimal string).
- Reads (`get`, `list`) are served from memory and are synchronous: they reflect every write
  whose future has resolved.
- A write's awaitable resolves only after its transaction is COMMITTED to SQLite (durable:
  `synchronous=FULL` in WAL mode). Concurrent writes are group-committed by one writer task.
- Writes are checked against the in-memory state at commit time by the single writer, so
  `expected_rv` is a true compare-and-swap.
- Watch from revision N yields every event with revision > N in order, then live events.
  N below `compacted_revision` -> `TooOldError`. A watcher whose bounded queue overflows is
  closed (its iterator raises `WatchOverflowError`); writers never wait for watchers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

import orjson

from minik3s.api.types import JsonDict

EventType = Literal["ADDED", "MODIFIED", "DELETED"]


@dataclass(slots=True, frozen=True)
class StoreEvent:
    """A committed change. `object` is the stored object at `revision` (for DELETED: the last
    state with `metadata.resourceVersion` set to the delete's revision). `prev` is the object
    before the change (None for ADDED). Objects are shared: never mutate them."""

    type: EventType
    key: str
    object: JsonDict
    revision: int
    prev: JsonDict | None = None


class StorageError(Exception):
    pass


class KeyExistsError(StorageError):
    """create() on a key that exists."""


class KeyNotFoundError(StorageError):
    """update()/delete() on a key that does not exist."""


class RevisionMismatchError(StorageError):
    """expected_rv did not match the stored object's revision."""

    def __init__(self, key: str, expected: int, actual: int) -> None:
        super().__init__(f"{key}: expected revision {expected}, found {actual}")
        self.expected = expected
        self.actual = actual


class UnencodableObjectError(StorageError):
    """The object cannot be serialised (nested deeper than the encoder allows, or a non-JSON value)."""


# etcd's default --max-request-bytes: the largest object a write may store
MAX_OBJECT_BYTES = 1536 * 1024

# Nesting. orjson, the server's JSON encoder, writes values at most ENCODE_LEVELS levels of
# objects/arrays deep and refuses deeper ones. A stored object is served inside at most
# SERVE_WRAP_LEVELS more (a watch event of a Table row that holds the object), so the store keeps
# only objects it can also serve. A request body, and what a patch builds, may be at most
# MAX_OBJECT_LEVELS deep: room on top for its managedFields (a fieldsV1 tree mirrors the object a
# level deeper, under metadata.managedFields[i]) and for serving. kube-apiserver's decoder allows
# 10,000 levels; no real object comes near either bound.
ENCODE_LEVELS = 254
SERVE_WRAP_LEVELS = 4
MAX_OBJECT_LEVELS = 240
# the 400 for an object the store cannot encode (what a patch built past the bounds above)
UNENCODABLE_MESSAGE = f"the resulting object cannot be encoded: it exceeds max depth of {MAX_OBJECT_LEVELS}"


def check_object_levels(value: object) -> None:
    """Raise orjson.JSONEncodeError (as encoding does) when `value` is nested deeper than
    MAX_OBJECT_LEVELS or cannot be encoded at all: one C-speed encode inside the levels left up
    to the encoder's bound (a typical pod: microseconds)."""
    orjson.dumps(wrapped(value, ENCODE_LEVELS - MAX_OBJECT_LEVELS))


def wrapped(value: object, levels: int) -> object:
    """`value` inside `levels` one-element arrays: encoding the result fails exactly when
    `value` is deeper than ENCODE_LEVELS - `levels`, and its bytes are the value's inside
    `levels` brackets each side."""
    for _ in range(levels):
        value = [value]
    return value


class ObjectTooLargeError(StorageError):
    """The serialised object exceeds the store's limit (etcd: "request is too large")."""

    def __init__(self, key: str, size: int, limit: int) -> None:
        super().__init__(f"{key}: object is {size} bytes, limit is {limit}")
        self.size = size
        self.limit = limit


class TooOldError(StorageError):
    """Requested revision is older than the retained history (-> 410 Expired)."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


class WatchOverflowError(StorageError):
    """The watcher fell too far behind; its stream is closed (the client relists)."""


class Watcher(Protocol):
    """An ordered stream of StoreEvents for keys under one prefix."""

    def __aiter__(self) -> AsyncIterator[StoreEvent]: ...

    async def __anext__(self) -> StoreEvent: ...

    def close(self) -> None:
        """Stop the watch; a pending `__anext__` ends with StopAsyncIteration."""

    def ready(self) -> bool:
        """True when the next `__anext__` returns or ends without waiting."""

    async def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for an event (not consuming it); returns `ready()`."""


class Store(Protocol):
    @property
    def revision(self) -> int:
        """The newest committed revision."""

    @property
    def running(self) -> bool:
        """Whether the store accepts writes (the API's `etcd` health check)."""

    @property
    def compacted_revision(self) -> int:
        """Watches from a revision below this get TooOldError."""

    async def start(self) -> None:
        """Open the database, rebuild the in-memory state and history, start the writer."""

    async def close(self) -> None:
        """Finish queued writes, stop the writer and compactor, close watchers and SQLite."""

    def get(self, key: str) -> JsonDict | None:
        """The current object (shared; never mutate) or None."""

    def encoded(self, key: str) -> bytes | None:
        """The current object's JSON encoding exactly as committed (what `get` returns, as
        orjson encodes it), or None."""

    def list(self, prefix: str) -> tuple[list[JsonDict], int]:
        """Current objects whose key starts with `prefix`, sorted by key; and the revision."""

    def iter_after(self, prefix: str, start_after: str = "") -> Iterator[tuple[str, JsonDict]]:
        """(key, object) under `prefix` with key > `start_after`, sorted by key, lazily; the
        start is found in O(log n). Callers do not await while iterating."""

    def count_after(self, prefix: str, start_after: str = "") -> int:
        """How many keys under `prefix` are > `start_after`, in O(log n)."""

    async def create(self, key: str, obj: JsonDict) -> JsonDict:
        """Store a new object; sets metadata.resourceVersion. Raises KeyExistsError."""

    async def update(self, key: str, obj: JsonDict, *, expected_rv: int | None = None) -> JsonDict:
        """Replace the object; sets metadata.resourceVersion. Raises KeyNotFoundError,
        RevisionMismatchError (when expected_rv is given and differs)."""

    async def delete(self, key: str, *, expected_rv: int | None = None) -> JsonDict:
        """Remove the object; returns its last state with the delete's resourceVersion."""

    def watch(self, prefix: str, from_revision: int, *, queue_size: int = 1000) -> Watcher:
        """Events with revision > from_revision for keys under prefix. Raises TooOldError."""
