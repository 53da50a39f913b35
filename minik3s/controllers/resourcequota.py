"""ResourceQuota controller (layer L4), after kube-controller-manager's
pkg/controller/resourcequota: it keeps every quota's `status.hard` equal to its `spec.hard` and
`status.used` equal to what the namespace's objects are charged (minik3s.api.helpers.quota),
so that the ResourceQuota admission plugin can hold new objects to the quota.

- A quota is synced when created, when its spec changes, and every `resync_period` (upstream's
  --resource-quota-sync-period, 5 min).
- Replenishment: when an object a quota accounts is deleted, or changes in a way that lowers
  what it is charged (a pod turning Succeeded/Failed or outliving its deletion grace period, a
  Service changing type, a claim's allocated storage changing), the quotas of its namespace that
  account its resource are synced again. Creations are charged by admission, not here (as
  upstream: no add handler).
- A sync writes `status` only when hard or used changed by value; every hard name some resource
  accounts gets a used value (0 when nothing is charged), a name nothing accounts (a
  `count/` of a resource that does not exist) gets none.

The objects are read from informers started on demand for the resources the quotas name
(pods, services, claims, the legacy counted kinds, any `count/<resource>.<group>` of a built-in
or established custom resource), each indexed by namespace.

Data flow: ResourceQuota informer + on-demand informers -> work queue of quota keys ->
`sync(key)` -> update_status through the Client.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from minik3s.api.errors import NotFoundError
from minik3s.api.helpers import quota as q
from minik3s.api.resources import CRDS, ResourceInfo, builtin_resources
from minik3s.api.types import JsonDict
from minik3s.client.informer import Informer, SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import meta, run_workers
from minik3s.controllers.garbage_collector import crd_monitor_resource
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

NAMESPACE_INDEX = "namespace"
RESYNC_PERIOD = 300.0
_QUOTAS = next(r for r in builtin_resources() if (r.group, r.resource) == ("", "resourcequotas"))


def _namespace_index(obj: JsonDict) -> list[str]:
    ns = meta(obj).get("namespace")
    return [ns] if ns else []


def resources_for(name: str) -> list[tuple[str, str]]:
    """The (group, resource) pairs whose objects a quota name charges."""
    if name.startswith(q.COUNT):
        rest = name[len(q.COUNT):]
        resource, _, group = rest.partition(".")
        return [(group, resource)]
    out = [gr for gr in (("", "pods"), ("", "services"), ("", "persistentvolumeclaims"))
           if q.tracked_by(gr[0], gr[1], name)]
    out += [gr for gr, legacy in q.LEGACY_COUNT_NAMES.items() if legacy == name and gr not in out]
    return out


def _quota_names(quota: JsonDict) -> list[str]:
    return [str(k) for k in (quota.get("spec") or {}).get("hard") or {}]


def _same_amounts(a: Any, b: Any) -> bool:
    """quota.Equals: the same names with equal values (formats may differ)."""
    if not isinstance(a, dict) or not isinstance(b, dict) or set(a) != set(b):
        return False
    pa, pb = q.parse_resource_list(a), q.parse_resource_list(b)
    return len(pa) == len(a) and len(pb) == len(b) and all(pa[k][0] == pb[k][0] for k in pa)


def _service_type(svc: JsonDict) -> str:
    t = (svc.get("spec") or {}).get("type")
    return t if t in ("NodePort", "LoadBalancer") else ""


class ResourceQuotaController:
    NAME = "resourcequota-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None,
                 resync_period: float = RESYNC_PERIOD) -> None:
        self._client = client
        self._informers = informers
        self._clock = clock or Clock()
        self._resync_period = resync_period
        self._quotas = informers.informer(_QUOTAS)
        self._quotas.add_index(NAMESPACE_INDEX, _namespace_index)
        self._crds = informers.informer(CRDS)
        self._monitors: dict[tuple[str, str], Informer] = {}
        self.queue = WorkQueue()
        self._quotas.add_handler(on_add=self._enqueue, on_update=self._quota_updated, on_delete=self._enqueue)

    def _enqueue(self, quota: JsonDict) -> None:
        m = meta(quota)
        self.queue.add(f"{m.get('namespace')}/{m.get('name')}")

    def _quota_updated(self, old: JsonDict, new: JsonDict) -> None:
        if old.get("spec") != new.get("spec"):
            self._enqueue(new)

    # ------------------------------------------------------------------ replenishment
    def _resource_info(self, group: str, resource: str) -> ResourceInfo | None:
        for r in builtin_resources():
            if (r.group, r.resource) == (group, resource) and r.namespaced and "list" in r.verbs:
                return r
        for crd in self._crds.store.list():
            info = crd_monitor_resource(crd)
            if info is not None and (info.group, info.resource) == (group, resource) and info.namespaced:
                return info
        return None

    async def _monitor(self, group: str, resource: str) -> Informer | None:
        """The synced informer of a resource a quota names (started the first time)."""
        inf = self._monitors.get((group, resource))
        if inf is None:
            if (group, resource) in q.IGNORED:
                return None
            info = self._resource_info(group, resource)
            if info is None:
                return None
            inf = self._informers.informer(info)
            inf.add_index(NAMESPACE_INDEX, _namespace_index)
            gr = (group, resource)
            inf.add_handler(on_update=lambda old, new: self._object_updated(gr, old, new),
                            on_delete=lambda obj: self._replenish(gr, obj))
            self._monitors[gr] = inf
        await inf.wait_for_sync()
        return inf

    def _object_updated(self, gr: tuple[str, str], old: JsonDict, new: JsonDict) -> None:
        """install.DefaultUpdateFilter: only changes that lower what an object is charged."""
        if gr == ("", "pods"):
            now = self._clock.now()
            if q.pod_counts(old, now) and not q.pod_counts(new, now):
                self._replenish(gr, new)
        elif gr == ("", "services"):
            if _service_type(old) != _service_type(new):
                self._replenish(gr, new)
        elif gr == ("", "persistentvolumeclaims"):
            def allocated(pvc: JsonDict) -> Any:
                return ((pvc.get("status") or {}).get("allocatedResources") or {}).get("storage")
            if allocated(old) != allocated(new):
                self._replenish(gr, new)

    def _replenish(self, gr: tuple[str, str], obj: JsonDict) -> None:
        ns = meta(obj).get("namespace")
        if not ns:
            return
        for quota in self._quotas.by_index(NAMESPACE_INDEX, str(ns)):
            hard = ((quota.get("status") or {}).get("hard") or {})
            if q.matching_names(gr[0], gr[1], hard):
                self._enqueue(quota)

    # ------------------------------------------------------------------ sync
    async def usage(self, quota: JsonDict) -> dict[str, str]:
        """The quota's used values, computed from the namespace's objects, for every hard name
        some resource accounts."""
        names = _quota_names(quota)
        ns = str(meta(quota).get("namespace") or "")
        now = self._clock.now()
        out: dict[str, str] = {}
        groups: dict[tuple[str, str], list[str]] = {}
        for name in names:
            for gr in resources_for(name):
                groups.setdefault(gr, []).append(name)
        for (group, resource), tracked in sorted(groups.items()):
            inf = await self._monitor(group, resource)
            if inf is None:
                continue
            total: q.Usage = {n: q.ZERO for n in tracked}
            for obj in inf.by_index(NAMESPACE_INDEX, ns):
                total = q.add(total, q.charged(group, resource, obj, quota, tracked, now))
            out.update({n: q.text(total[n]) for n in tracked})
        return out

    async def sync(self, key: str) -> None:
        quota = self._quotas.store.get(key)
        if quota is None:
            return
        spec_hard = dict((quota.get("spec") or {}).get("hard") or {})
        status = quota.get("status") or {}
        used = dict(status.get("used") or {})
        used.update(await self.usage(quota))
        used = {k: v for k, v in used.items() if k in spec_hard}
        dirty = (not _same_amounts(spec_hard, status.get("hard")) or "hard" not in status or "used" not in status
                 or not _same_amounts(used, status.get("used")))
        if not dirty:
            return
        new = {**quota, "status": {"hard": spec_hard, "used": used}}
        try:
            # a Conflict (admission charged the quota meanwhile) is retried by run_workers once
            # the informer holds that write
            await self._client.update_status(_QUOTAS, new)
        except NotFoundError:
            return

    def enqueue_all(self, keys: Iterable[str] | None = None) -> None:
        for k in keys if keys is not None else list(self._quotas.store.keys()):
            self.queue.add(k)

    async def _resync(self) -> None:
        while True:
            await self._clock.sleep(self._resync_period)
            self.enqueue_all()

    async def run(self, workers: int = 5) -> None:
        await self._quotas.wait_for_sync()
        await self._crds.wait_for_sync()
        logger.info("%s: caches synced", self.NAME)
        resync = asyncio.create_task(self._resync(), name=f"{self.NAME}-resync")
        try:
            await run_workers(self.queue, self.sync, workers=workers, name=self.NAME)
        finally:
            resync.cancel()
