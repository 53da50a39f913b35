"""Informers: list + watch into an indexed local cache, with handlers (client-go's reflector+informer).

Data flow: `Client.list` -> replace the store (diffing into add/update/delete handler calls) ->
`Client.watch(resourceVersion=<list RV>)` -> apply each event to the store -> handlers.
A closed watch resumes from the last seen resourceVersion; a 410 (the history moved past it)
or any other error relists after a backoff. Handlers are plain functions run on the loop in
event order: keep them fast (enqueue work). A (re)list applies its objects in slices of
`YIELD_EVERY`, letting the loop run between slices.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from minik3s.api.errors import ApiError, GoneError
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.client.interface import Client
from minik3s.client.store import IndexFunc, Store, object_key

logger = logging.getLogger(__name__)

AddFn = Callable[[JsonDict], None]
UpdateFn = Callable[[JsonDict, JsonDict], None]
DeleteFn = Callable[[JsonDict], None]

__all__ = ["Informer", "SharedInformerFactory", "object_key"]

# objects applied (handlers called) between two yields of the loop during a (re)list
YIELD_EVERY = 256


class Informer:
    def __init__(self, client: Client, res: ResourceInfo, namespace: str | None = None, *,
                 label_selector: str | None = None, field_selector: str | None = None,
                 page_size: int | None = None) -> None:
        self.client = client
        self.res = res
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.page_size = page_size
        self.store = Store()
        self.has_synced = False
        self._synced = asyncio.Event()
        self._handlers: list[tuple[AddFn | None, UpdateFn | None, DeleteFn | None]] = []
        self.last_resource_version = ""

    def add_handler(self, *, on_add: AddFn | None = None, on_update: UpdateFn | None = None,
                    on_delete: DeleteFn | None = None) -> None:
        self._handlers.append((on_add, on_update, on_delete))
        if on_add is not None and self.has_synced:
            for obj in self.store.list():
                self._call(on_add, obj)

    def add_index(self, name: str, fn: IndexFunc) -> None:
        self.store.add_index(name, fn)

    def by_index(self, name: str, value: str) -> list[JsonDict]:
        return self.store.by_index(name, value)

    async def wait_for_sync(self) -> None:
        await self._synced.wait()

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - a faulty handler must not kill the informer
            logger.exception("informer handler failed resource=%s", self.res.qualified)

    def _on_add(self, obj: JsonDict) -> None:
        for a, _, _ in self._handlers:
            if a is not None:
                self._call(a, obj)

    def _on_update(self, old: JsonDict, new: JsonDict) -> None:
        for _, u, _ in self._handlers:
            if u is not None:
                self._call(u, old, new)

    def _on_delete(self, obj: JsonDict) -> None:
        for _, _, d in self._handlers:
            if d is not None:
                self._call(d, obj)

    async def _list(self) -> str:
        items: list[JsonDict] = []
        cont: str | None = None
        rv = ""
        while True:
            # the store is read-only by contract: a transport that shares objects need not copy
            lst = await self.client.list(self.res, self.namespace, label_selector=self.label_selector,
                                         field_selector=self.field_selector, limit=self.page_size,
                                         continue_=cont, read_only=self.client.shares_items)
            items.extend(lst.get("items") or [])
            meta = lst.get("metadata") or {}
            rv = rv or meta.get("resourceVersion", "")
            cont = meta.get("continue")
            if not cont:
                break
        fresh = {object_key(o): o for o in items}
        n = 0
        for key in list(self.store.keys()):
            if key not in fresh:
                old = self.store.remove(key)
                if old is not None:
                    self._on_delete(old)
                n += 1
                if n % YIELD_EVERY == 0:
                    await asyncio.sleep(0)
        for key, obj in fresh.items():
            old = self.store.put(key, obj)
            if old is None:
                self._on_add(obj)
            elif old.get("metadata", {}).get("resourceVersion") != obj.get("metadata", {}).get("resourceVersion"):
                self._on_update(old, obj)
            n += 1
            if n % YIELD_EVERY == 0:
                # Hand the loop over between slices of a large list: the handlers of 50,000 pods
                # (the scheduler's cache, every controller's) otherwise held it for seconds, and
                # an embedded server answered no request (not even /readyz) until every
                # component had synced. As with client-go, whose indexer fills delta by delta,
                # others may see the store partly filled before `has_synced`.
                await asyncio.sleep(0)
        return rv

    def _apply(self, etype: str, obj: JsonDict) -> None:
        key = object_key(obj)
        if etype == "DELETED":
            old = self.store.remove(key)
            self._on_delete(old if old is not None else obj)
            return
        old = self.store.put(key, obj)
        if old is None:
            self._on_add(obj)
        else:
            self._on_update(old, obj)

    async def run(self) -> None:
        backoff = 0.2
        need_list = True
        rv = ""
        while True:
            try:
                if need_list:
                    rv = await self._list()
                    self.last_resource_version = rv
                    if not self.has_synced:
                        self.has_synced = True
                        self._synced.set()
                    need_list = False
                stream = self.client.watch(self.res, self.namespace, resource_version=rv,
                                           label_selector=self.label_selector, field_selector=self.field_selector,
                                           allow_bookmarks=True)
                try:
                    async for ev in stream:
                        new_rv = (ev.object.get("metadata") or {}).get("resourceVersion")
                        if new_rv:
                            rv = new_rv
                            self.last_resource_version = rv
                        if ev.type == "BOOKMARK":
                            continue
                        self._apply(ev.type, ev.object)
                        backoff = 0.2
                finally:
                    await stream.close()
                # stream ended normally (timeout / server closed): resume from rv
            except asyncio.CancelledError:
                raise
            except GoneError:
                logger.info("informer relisting after 410 resource=%s", self.res.qualified)
                need_list = True
            except ApiError as e:
                logger.warning("informer error resource=%s error=%s", self.res.qualified, e)
                need_list = True
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 10.0)
            except Exception:  # noqa: BLE001 - keep informers alive across transport faults
                logger.exception("informer failure resource=%s", self.res.qualified)
                need_list = True
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 10.0)


class SharedInformerFactory:
    """One informer per (resource, namespace, selectors), shared by every component."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._informers: dict[tuple[str, str, str, str | None, str | None, str | None], Informer] = {}
        self._tasks: dict[Informer, asyncio.Task[None]] = {}
        self._running = False
        self._new = asyncio.Event()

    def informer(self, res: ResourceInfo, namespace: str | None = None, *, label_selector: str | None = None,
                 field_selector: str | None = None) -> Informer:
        key = (res.group, res.version, res.resource, namespace, label_selector, field_selector)
        inf = self._informers.get(key)
        if inf is None:
            inf = Informer(self.client, res, namespace, label_selector=label_selector, field_selector=field_selector)
            self._informers[key] = inf
            if self._running:
                self._start(inf)
        return inf

    def _start(self, inf: Informer) -> None:
        if inf not in self._tasks:
            self._tasks[inf] = asyncio.create_task(inf.run(), name=f"informer-{inf.res.qualified}")

    async def run(self) -> None:
        self._running = True
        try:
            for inf in list(self._informers.values()):
                self._start(inf)
            await asyncio.Event().wait()
        finally:
            self._running = False
            for t in self._tasks.values():
                t.cancel()
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
            self._tasks.clear()

    async def wait_for_sync(self) -> None:
        for inf in list(self._informers.values()):
            await inf.wait_for_sync()
