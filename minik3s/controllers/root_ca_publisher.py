"""Root CA certificate publisher (layer L4): every namespace gets the ConfigMap
`kube-root-ca.crt` holding the cluster CA bundle under `ca.crt`, as kube-controller-manager's
root-ca-certificate-publisher-controller publishes it (pods use it to verify
`kubernetes.default.svc`; `kubectl get configmaps` lists it in every namespace of a real cluster).

Data flow: namespace informer (added; updated while Active) and configmap informer (this
ConfigMap updated or deleted) -> work queue of namespace names -> `sync`: create the ConfigMap
when the cache has none, else restore its `ca.crt` data and its description annotation when
either differs (other data keys are dropped, other annotations and binaryData kept), through
the client.

Upstream semantics kept: a create refused because the namespace is gone or terminating is not
retried; a write conflict (stale cached copy) is retried rate-limited, like any other error.
"""

from __future__ import annotations

import logging

from minik3s.api.errors import ForbiddenError, NotFoundError
from minik3s.api.resources import CONFIGMAPS, NAMESPACES
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import meta, run_workers

logger = logging.getLogger(__name__)

ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
               "such as the internal service IP or kubernetes.default.svc. "
               "No other usage is guaranteed across distributions of Kubernetes clusters.")


class RootCACertPublisher:
    NAME = "root-ca-cert-publisher"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, root_ca: str) -> None:
        self._client = client
        self._root_ca = root_ca
        self._namespaces = informers.informer(NAMESPACES)
        self._configmaps = informers.informer(CONFIGMAPS)
        self.queue = WorkQueue()
        self._namespaces.add_handler(on_add=self._namespace_added, on_update=self._namespace_updated)
        self._configmaps.add_handler(on_update=lambda _old, new: self._configmap_changed(new),
                                     on_delete=self._configmap_changed)

    def _namespace_added(self, ns: JsonDict) -> None:
        self.queue.add(meta(ns).get("name") or "")

    def _namespace_updated(self, _old: JsonDict, ns: JsonDict) -> None:
        if (ns.get("status") or {}).get("phase") == "Active":
            self.queue.add(meta(ns).get("name") or "")

    def _configmap_changed(self, cm: JsonDict) -> None:
        m = meta(cm)
        if m.get("name") == ROOT_CA_CONFIGMAP and m.get("namespace"):
            self.queue.add(m["namespace"])

    def _data(self) -> dict[str, str]:
        return {"ca.crt": self._root_ca}

    async def sync(self, namespace: str) -> None:
        cm = self._configmaps.store.get(f"{namespace}/{ROOT_CA_CONFIGMAP}")
        if cm is None:
            try:
                await self._client.create(CONFIGMAPS, {
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": ROOT_CA_CONFIGMAP, "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                    "data": self._data()}, namespace, read_only=True)
            except NotFoundError:
                pass  # the namespace is gone
            except ForbiddenError as e:
                if not _namespace_terminating(e):
                    raise
            return
        cm_meta = meta(cm)
        annotations = cm_meta.get("annotations") or {}
        if cm.get("data") == self._data() and annotations.get(DESCRIPTION_ANNOTATION):
            return
        # new top level and metadata (the cache's copy stays as the informer delivered it): the
        # whole data replaced, binaryData and the other annotations kept, as upstream
        body = {**cm, "data": self._data(),
                "metadata": {**cm_meta, "annotations": {**annotations, DESCRIPTION_ANNOTATION: DESCRIPTION}}}
        await self._client.update(CONFIGMAPS, body, read_only=True)

    async def run(self, workers: int = 1) -> None:
        await self._namespaces.wait_for_sync()
        await self._configmaps.wait_for_sync()
        logger.info("%s: caches synced", self.NAME)
        await run_workers(self.queue, self.sync, workers=workers, name=self.NAME)


def _namespace_terminating(e: ForbiddenError) -> bool:
    """The create was refused because the namespace is terminating: the Status carries the
    NamespaceTerminating cause (upstream's HasStatusCause check)."""
    return e.has_cause("NamespaceTerminating")
