"""The `Client` protocol every component is written against (layer L3).

Resources are addressed by `ResourceInfo` descriptors from `minik3s.api.resources`
(PODS, NODES, DEPLOYMENTS, ...). Objects are plain JSON dicts. Errors are raised as the
`minik3s.api.errors.ApiError` hierarchy (NotFoundError, ConflictError, ...), identical for
both transports. Objects returned by watches and informers are shared: copy before changing.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict

PatchType = Literal["merge", "strategic", "json", "apply"]

PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}


class WarningLog:
    """The default handler of server warnings (`Warning: 299 - "..."` headers, or the warnings
    of an in-process write): logged at WARNING as client-go's default `WarningLogger`, each text
    once per client, as kubectl's deduplicating warning writer (a controller rewriting one object
    would otherwise log the same warning on every write). Remembers at most `limit` texts; later
    new texts are still logged."""

    def __init__(self, logger: logging.Logger, *, limit: int = 256) -> None:
        self._logger = logger
        self._seen: set[str] = set()
        self._limit = limit

    def __call__(self, text: str) -> None:
        if text in self._seen:
            return
        if len(self._seen) < self._limit:
            self._seen.add(text)
        self._logger.warning("server warning: %s", text)


@dataclass(slots=True, frozen=True)
class WatchEvent:
    type: str  # ADDED | MODIFIED | DELETED | BOOKMARK
    object: JsonDict


class WatchStream(Protocol):
    """Async iterator of WatchEvents. An ERROR event is raised as ApiError (410 -> GoneError).
    Ends (StopAsyncIteration) when the server closes the stream or `close()` is called."""

    def __aiter__(self) -> AsyncIterator[WatchEvent]: ...

    async def __anext__(self) -> WatchEvent: ...

    async def close(self) -> None: ...


class Client(Protocol):
    """What every component is written against; both transports have the same semantics.

    Identity: a client carries its component's user agent (`kube-scheduler/...`); writes without
    an explicit `field_manager` are recorded under that binary name, as kube-apiserver does.
    Sharing: single objects returned by get/create/update/patch/delete are the caller's own.
    Items of `list(..., read_only=True)`, the results of create/update/update_status/patch
    called with `read_only=True` and watch event objects may be shared with the server and with
    other components when `shares_items` is True (in-process): never change them. A caller that
    drops a write's result or only reads it passes `read_only=True` (no copy in process; a
    no-op over HTTP, where every response is freshly decoded). A caller that built the object of
    a create for that call alone and never touches it again passes `handover=True`: the
    in-process transport then gives it to the request core instead of a deep copy (the core
    fills in its metadata and defaults); over HTTP it is serialised either way.
    """

    @property
    def shares_items(self) -> bool:
        """True when read-only list items and watch objects are the server's stored objects
        (in-process transport); False when every object is freshly decoded (HTTP)."""

    async def get(self, res: ResourceInfo, name: str, namespace: str | None = None,
                  *, subresource: str | None = None) -> JsonDict: ...

    async def list(self, res: ResourceInfo, namespace: str | None = None, *,
                   label_selector: str | None = None, field_selector: str | None = None,
                   limit: int | None = None, continue_: str | None = None,
                   resource_version: str | None = None, read_only: bool = False) -> JsonDict:
        """Returns the List object: {"kind": ..List, "metadata": {"resourceVersion", "continue"?}, "items": [...]}.
        `read_only=True`: the caller will not change the items, so a transport that `shares_items`
        hands out the stored objects without copying them (informers do this)."""

    async def create(self, res: ResourceInfo, obj: JsonDict, namespace: str | None = None, *,
                     field_manager: str | None = None, dry_run: bool = False,
                     read_only: bool = False, handover: bool = False) -> JsonDict:
        """Namespace defaults to obj.metadata.namespace (then "default" for namespaced kinds)."""

    async def update(self, res: ResourceInfo, obj: JsonDict, *, subresource: str | None = None,
                     field_manager: str | None = None, read_only: bool = False) -> JsonDict:
        """PUT; name/namespace from obj.metadata; a set metadata.resourceVersion is a precondition."""

    async def update_status(self, res: ResourceInfo, obj: JsonDict, *, read_only: bool = False) -> JsonDict:
        """PUT .../status."""

    async def patch(self, res: ResourceInfo, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: PatchType = "merge", subresource: str | None = None,
                    field_manager: str | None = None, force: bool | None = None,
                    read_only: bool = False) -> JsonDict: ...

    async def delete(self, res: ResourceInfo, name: str, namespace: str | None = None, *,
                     grace_period_seconds: int | None = None,
                     preconditions: JsonDict | None = None,
                     propagation_policy: str | None = None) -> JsonDict:
        """Returns the object (still present, with deletionTimestamp, when graceful) or a Status."""

    async def delete_collection(self, res: ResourceInfo, namespace: str | None = None, *,
                                label_selector: str | None = None,
                                field_selector: str | None = None) -> JsonDict: ...

    def watch(self, res: ResourceInfo, namespace: str | None = None, *,
              resource_version: str | None = None, label_selector: str | None = None,
              field_selector: str | None = None, timeout_seconds: int | None = None,
              allow_bookmarks: bool = False) -> WatchStream: ...

    async def bind(self, namespace: str, name: str, node_name: str, *, uid: str | None = None) -> None:
        """POST pods/{name}/binding. Raises ConflictError if already bound."""

    async def evict(self, namespace: str, name: str, *, delete_options: JsonDict | None = None) -> None:
        """POST pods/{name}/eviction. Raises TooManyRequestsError when a PDB blocks it."""

    async def close(self) -> None: ...
