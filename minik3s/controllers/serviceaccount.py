"""ServiceAccounts controller (layer L4): every active namespace gets a `default` ServiceAccount,
as kube-controller-manager's serviceaccount-controller ensures; recreated if deleted.

Data flow: namespace + serviceaccount informers -> work queue of namespace names -> create the
missing `default` ServiceAccount through the client.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from minik3s.api.errors import AlreadyExistsError, ForbiddenError, NotFoundError
from minik3s.api.resources import NAMESPACES, SERVICEACCOUNTS
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import run_workers

logger = logging.getLogger(__name__)

DEFAULT_SA = "default"
SYSTEM_NAMESPACE = "kube-system"


async def ensure_controller_accounts(client: Client, names: Iterable[str]) -> None:
    """What kube-controller-manager's SAControllerClientBuilder does as each controller starts:
    get or create the controller's ServiceAccount in kube-system (`kubectl get sa -n kube-system`
    lists `deployment-controller`, `job-controller`, ...). Once, at start; a deleted one comes back
    with the next start, as upstream's."""
    have = {(sa.get("metadata") or {}).get("name") for sa in (await client.list(SERVICEACCOUNTS, SYSTEM_NAMESPACE))["items"]}
    for name in names:
        if name in have:
            continue
        try:
            await client.create(SERVICEACCOUNTS, {"apiVersion": "v1", "kind": "ServiceAccount",
                                                  "metadata": {"name": name, "namespace": SYSTEM_NAMESPACE}},
                                SYSTEM_NAMESPACE)
        except AlreadyExistsError:
            pass
        except (NotFoundError, ForbiddenError) as e:  # no kube-system (yet), or it is terminating
            logger.warning("cannot create a controller's ServiceAccount name=%s error=%s", name, e)
            return


class ServiceAccountsController:
    NAME = "serviceaccount-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory) -> None:
        self._client = client
        self._namespaces = informers.informer(NAMESPACES)
        self._accounts = informers.informer(SERVICEACCOUNTS)
        self.queue = WorkQueue()
        self._namespaces.add_handler(on_add=self._ns_changed, on_update=lambda _o, n: self._ns_changed(n))
        self._accounts.add_handler(on_delete=self._sa_deleted)

    def _ns_changed(self, ns: JsonDict) -> None:
        self.queue.add((ns.get("metadata") or {}).get("name") or "")

    def _sa_deleted(self, sa: JsonDict) -> None:
        meta = sa.get("metadata") or {}
        if meta.get("name") == DEFAULT_SA:
            self.queue.add(meta.get("namespace") or "")

    async def sync(self, namespace: str) -> None:
        ns = self._namespaces.store.get(namespace)
        if ns is None or (ns.get("metadata") or {}).get("deletionTimestamp"):
            return
        if self._accounts.store.get(f"{namespace}/{DEFAULT_SA}") is not None:
            return
        try:
            await self._client.create(SERVICEACCOUNTS, {"apiVersion": "v1", "kind": "ServiceAccount",
                                                        "metadata": {"name": DEFAULT_SA}}, namespace, read_only=True)
        except (AlreadyExistsError, NotFoundError, ForbiddenError):
            pass  # already there, or the namespace is gone / terminating

    async def run(self, workers: int = 2) -> None:
        await self._namespaces.wait_for_sync()
        await self._accounts.wait_for_sync()
        logger.info("%s: caches synced", self.NAME)
        await run_workers(self.queue, self.sync, workers=workers, name=self.NAME)
