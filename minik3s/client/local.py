"""In-process transport for the `Client` protocol (layer L3).

Calls the API server's request core directly: the same defaulting, admission, validation,
resourceVersion checks and errors as over HTTP, without HTTP or JSON. The core is handed in
by the composition root (`minik3s.server`); this module never imports `apiserver` — the core
only has to provide the methods of `LocalCore` (structural typing).

Each component holds its own `LocalClient` with its identity (the user agent the HTTP transport
would send), so field managers, `fieldValidation` defaults and warnings are HTTP's.

Objects going in are deep-copied (the core takes ownership of what it is given), except a
create's object passed with `handover=True` (built for that call, never used again); single
objects coming out are copies the caller owns, except from writes called with `read_only=True`
(the caller drops or only reads the result), which return the stored object itself; watch
events and informer lists share the stored objects too, all read-only by contract.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol, cast

import orjson

from minik3s.api import errors
from minik3s.api.options import DeleteOptions, ListOptions, WatchOptions, WriteOptions
from minik3s.api.resources import ResourceInfo, ResourceRegistry
from minik3s.api.types import JsonDict
from minik3s.api.user import UserInfo
from minik3s.client.interface import PatchType, WarningLog, WatchEvent

logger = logging.getLogger(__name__)


def _copy(obj: Any) -> Any:
    try:
        return orjson.loads(orjson.dumps(obj))
    except TypeError:
        return copy.deepcopy(obj)


def _owned(obj: JsonDict) -> JsonDict:
    """A private copy of a single object for the caller."""
    return cast(JsonDict, _copy(obj))


class LocalCore(Protocol):
    registry: ResourceRegistry

    def get(self, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict: ...
    def list(self, info: ResourceInfo, namespace: str | None, opts: ListOptions) -> JsonDict: ...
    async def create(self, info: ResourceInfo, namespace: str | None, obj: Any,
                     opts: WriteOptions | None = None) -> JsonDict: ...
    async def update(self, info: ResourceInfo, namespace: str | None, name: str, obj: Any,
                     opts: WriteOptions | None = None, *, subresource: str | None = None) -> JsonDict: ...
    async def patch(self, info: ResourceInfo, namespace: str | None, name: str, patch_type: str, body: Any,
                    opts: WriteOptions | None = None, *, subresource: str | None = None) -> JsonDict: ...
    async def delete(self, info: ResourceInfo, namespace: str | None, name: str,
                     options: DeleteOptions | None = None) -> tuple[JsonDict, bool]: ...
    async def delete_collection(self, info: ResourceInfo, namespace: str | None, list_opts: ListOptions,
                                options: DeleteOptions | None = None) -> JsonDict: ...
    def watch(self, info: ResourceInfo, namespace: str | None, opts: WatchOptions
              ) -> AsyncIterator[tuple[str, JsonDict]]: ...
    async def bind(self, namespace: str, name: str, binding: Any, opts: WriteOptions | None = None) -> JsonDict: ...
    async def evict(self, namespace: str, name: str, eviction: Any) -> JsonDict: ...
    def get_scale(self, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict: ...
    async def update_scale(self, info: ResourceInfo, namespace: str | None, name: str, scale: Any,
                           opts: WriteOptions | None = None) -> JsonDict: ...


def _ns(res: ResourceInfo, obj: JsonDict | None, namespace: str | None) -> str | None:
    if not res.namespaced:
        return None
    if namespace:
        return namespace
    if obj is not None:
        return (obj.get("metadata") or {}).get("namespace") or "default"
    return None


def _resolve(core: LocalCore, res: ResourceInfo) -> ResourceInfo:
    """Use the server's live descriptor (CRDs carry schemas the client's copy may lack)."""
    return core.registry.get(res.group, res.version, res.resource) or res


def manager_from_user_agent(user_agent: str) -> str:
    """The field manager kube-apiserver records for a write without `fieldManager`: the user
    agent up to its first `/`, at most 128 characters (upstream `prefixFromUserAgent`)."""
    return (user_agent.split("/", 1)[0] or "unknown")[:128]


class LocalClient:
    """`Client` calling the request core in process, with HTTP's request semantics.

    Each component gets its own instance with its identity: `user_agent` as the HTTP transport
    would send it (`default_user_agent("kube-scheduler")`), from which writes without an explicit
    `field_manager` take their manager as the apiserver derives it (create, update, update_status
    and non-apply patches; an apply patch needs an explicit manager, as over HTTP). Writes are
    validated with HTTP's default `fieldValidation=Warn`; warnings go to `on_warning` (logged at
    WARNING once per text by default, `WarningLog`, as the HTTP transport does).
    """

    shares_items = True  # list/write(read_only=True) and watch events hand out the stored objects

    def __init__(self, core: LocalCore, *, user_agent: str, on_warning: Callable[[str], None] | None = None,
                 user: UserInfo | None = None) -> None:
        self.core = core
        self.user_agent = user_agent
        # the identity admission sees for this component's writes (None: trusted, unnamed)
        self.user = user
        self.default_manager = manager_from_user_agent(user_agent)
        self._on_warning = on_warning or WarningLog(logger)

    def _wopts(self, field_manager: str | None = None, dry_run: bool = False, force: bool | None = None, *,
               default_manager: bool = True) -> WriteOptions:
        manager = field_manager if field_manager is not None else (self.default_manager if default_manager
                                                                   else None)
        return WriteOptions(dry_run=dry_run, field_manager=manager, field_validation="Warn", force=bool(force),
                            user=self.user)

    def _warn(self, opts: WriteOptions) -> None:
        for text in opts.warnings:
            self._on_warning(text)

    async def get(self, res: ResourceInfo, name: str, namespace: str | None = None, *,
                  subresource: str | None = None) -> JsonDict:
        info = _resolve(self.core, res)
        if subresource == "scale":
            return self.core.get_scale(info, _ns(info, None, namespace), name)
        return _owned(self.core.get(info, _ns(info, None, namespace), name))

    async def list(self, res: ResourceInfo, namespace: str | None = None, *, label_selector: str | None = None,
                   field_selector: str | None = None, limit: int | None = None, continue_: str | None = None,
                   resource_version: str | None = None, read_only: bool = False) -> JsonDict:
        info = _resolve(self.core, res)
        lst = self.core.list(info, namespace if info.namespaced else None, ListOptions(
            label_selector=label_selector, field_selector=field_selector, limit=limit, continue_=continue_,
            resource_version=resource_version))
        if not read_only:
            lst = {**lst, "items": _copy(lst["items"])}
        return lst

    async def create(self, res: ResourceInfo, obj: JsonDict, namespace: str | None = None, *,
                     field_manager: str | None = None, dry_run: bool = False, read_only: bool = False,
                     handover: bool = False) -> JsonDict:
        info = _resolve(self.core, res)
        opts = self._wopts(field_manager, dry_run)
        # handover: the caller built `obj` for this create and drops it, so the core may own it
        out = await self.core.create(info, _ns(info, obj, namespace), obj if handover else _copy(obj), opts)
        self._warn(opts)
        return out if read_only else _owned(out)

    async def update(self, res: ResourceInfo, obj: JsonDict, *, subresource: str | None = None,
                     field_manager: str | None = None, read_only: bool = False) -> JsonDict:
        info = _resolve(self.core, res)
        name = (obj.get("metadata") or {}).get("name") or ""
        ns = _ns(info, obj, None)
        if subresource == "scale":  # as over HTTP: the manager named after the user agent unless given
            # the Scale is built per request (never stored): the caller owns it either way
            return await self.core.update_scale(info, ns, name, _copy(obj), self._wopts(field_manager))
        opts = self._wopts(field_manager)
        out = await self.core.update(info, ns, name, _copy(obj), opts, subresource=subresource)
        self._warn(opts)
        return out if read_only else _owned(out)

    async def update_status(self, res: ResourceInfo, obj: JsonDict, *, read_only: bool = False) -> JsonDict:
        return await self.update(res, obj, subresource="status", read_only=read_only)

    async def patch(self, res: ResourceInfo, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: PatchType = "merge", subresource: str | None = None,
                    field_manager: str | None = None, force: bool | None = None,
                    read_only: bool = False) -> JsonDict:
        info = _resolve(self.core, res)
        opts = self._wopts(field_manager, force=force, default_manager=patch_type != "apply")
        out = await self.core.patch(info, _ns(info, None, namespace), name, patch_type, _copy(patch), opts,
                                    subresource=subresource)
        self._warn(opts)
        return out if read_only else _owned(out)

    async def delete(self, res: ResourceInfo, name: str, namespace: str | None = None, *,
                     grace_period_seconds: int | None = None, preconditions: JsonDict | None = None,
                     propagation_policy: str | None = None) -> JsonDict:
        info = _resolve(self.core, res)
        obj, _ = await self.core.delete(info, _ns(info, None, namespace), name, DeleteOptions(
            grace_period_seconds=grace_period_seconds, preconditions=preconditions,
            propagation_policy=propagation_policy, user=self.user))
        return _owned(obj)

    async def delete_collection(self, res: ResourceInfo, namespace: str | None = None, *,
                                label_selector: str | None = None, field_selector: str | None = None) -> JsonDict:
        info = _resolve(self.core, res)
        return _owned(await self.core.delete_collection(info, namespace if info.namespaced else None, ListOptions(
            label_selector=label_selector, field_selector=field_selector)))

    def watch(self, res: ResourceInfo, namespace: str | None = None, *, resource_version: str | None = None,
              label_selector: str | None = None, field_selector: str | None = None,
              timeout_seconds: int | None = None, allow_bookmarks: bool = False) -> _LocalWatch:
        info = _resolve(self.core, res)
        gen = self.core.watch(info, namespace if info.namespaced else None, WatchOptions(
            label_selector=label_selector, field_selector=field_selector, resource_version=resource_version,
            allow_bookmarks=allow_bookmarks, timeout_seconds=timeout_seconds))
        return _LocalWatch(gen, info)

    async def bind(self, namespace: str, name: str, node_name: str, *, uid: str | None = None) -> None:
        meta: JsonDict = {"name": name, "namespace": namespace}
        if uid:
            meta["uid"] = uid
        await self.core.bind(namespace, name, {"metadata": meta, "target": {"kind": "Node", "name": node_name}},
                             self._wopts(default_manager=False))

    async def evict(self, namespace: str, name: str, *, delete_options: JsonDict | None = None) -> None:
        body: JsonDict = {"metadata": {"name": name, "namespace": namespace}}
        if delete_options:
            body["deleteOptions"] = _copy(delete_options)
        await self.core.evict(namespace, name, body)

    async def close(self) -> None:
        return None


class _LocalWatch:
    def __init__(self, gen: AsyncIterator[tuple[str, JsonDict]], info: ResourceInfo) -> None:
        self._gen = gen
        self._info = info

    def __aiter__(self) -> _LocalWatch:
        return self

    async def __anext__(self) -> WatchEvent:
        etype, obj = await self._gen.__anext__()
        if etype == "ERROR":
            raise errors.ApiError.from_status(obj)
        if etype == "BOOKMARK":
            obj = {"kind": self._info.kind, "apiVersion": self._info.api_version, **obj}
        return WatchEvent(etype, obj)

    async def close(self) -> None:
        await self._gen.aclose()  # type: ignore[attr-defined]
