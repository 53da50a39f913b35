"""ServiceCIDRs and their IPAddresses (KEP-1880, GA in Kubernetes 1.33) (layer L4).

Three upstream pieces:

* kube-apiserver's default ServiceCIDR controller (`ensure_default_service_cidr`, run at server
  start): the `kubernetes` ServiceCIDR holds the service CIDR (K3s' 10.43.0.0/16); while it has no
  Ready condition it gets Ready=True, "Kubernetes default Service CIDR is ready" (field manager
  kubernetes-service-cidr-controller). It is never rewritten to other ranges.
* kube-apiserver's IP repair (`repair_ip_addresses`, at start): every cluster IP of a Service has
  its IPAddress (created when missing, e.g. in a data directory from before the allocator kept
  them), and allocator-managed IPAddresses whose Service is gone are deleted.
* kube-controller-manager's `service-cidr-controller` (`ServiceCIDRController`): each ServiceCIDR
  gets the finalizer `networking.k8s.io/service-cidr-finalizer` and Ready=True ("Kubernetes
  Service CIDR is ready", no reason). A ServiceCIDR being deleted stays while some allocated
  IPAddress lies only in its ranges: Ready=False, reason Terminating, "There are still IPAddresses
  referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"; once none does,
  the finalizer is removed 10 s after the deletion began (deletionGracePeriod). New IPs are never
  allocated from a ServiceCIDR being deleted or not ready (apiserver.strategies.service_alloc).

Data flow: ServiceCIDR + IPAddress informers -> queue of ServiceCIDR names -> sync -> finalizer
patch / status apply.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

from minik3s.api.errors import AlreadyExistsError, ConflictError, NotFoundError
from minik3s.api.helpers.ip_addresses import (
    ALLOCATOR,
    IP_FAMILY_LABEL,
    MANAGED_BY_LABEL,
    cluster_ips,
    ip_address_object,
)
from minik3s.api.resources import IPADDRESSES, SERVICECIDRS, SERVICES
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import meta, run_workers
from minik3s.utils.clock import Clock, parse_time, rfc3339

logger = logging.getLogger(__name__)

DEFAULT_NAME = "kubernetes"
FINALIZER = "networking.k8s.io/service-cidr-finalizer"
DELETION_GRACE = 10.0
READY_MESSAGE = "Kubernetes Service CIDR is ready"
DEFAULT_READY_MESSAGE = "Kubernetes default Service CIDR is ready"
TERMINATING_MESSAGE = ("There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new "
                       "ServiceCIDR")


def _ready(sc: JsonDict) -> JsonDict | None:
    for c in (sc.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c
    return None


def _status_apply(name: str, status: str, reason: str, message: str, now: str) -> JsonDict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR", "metadata": {"name": name},
            "status": {"conditions": [{"type": "Ready", "status": status, "reason": reason, "message": message,
                                       "lastTransitionTime": now}]}}


async def ensure_default_service_cidr(client: Client, cidrs: list[str], *, clock: Clock | None = None) -> None:
    """The default ServiceCIDR controller's first sync."""
    now = rfc3339((clock or Clock()).now())
    try:
        sc = await client.get(SERVICECIDRS, DEFAULT_NAME)
    except NotFoundError:
        try:
            sc = await client.create(SERVICECIDRS, {"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
                                                    "metadata": {"name": DEFAULT_NAME}, "spec": {"cidrs": cidrs}})
        except AlreadyExistsError:
            sc = await client.get(SERVICECIDRS, DEFAULT_NAME)
    if (sc.get("metadata") or {}).get("deletionTimestamp") or _ready(sc) is not None:
        return
    await client.patch(SERVICECIDRS, DEFAULT_NAME, _status_apply(DEFAULT_NAME, "True", "", DEFAULT_READY_MESSAGE, now),
                       patch_type="apply", subresource="status", field_manager="kubernetes-service-cidr-controller",
                       force=True, read_only=True)


async def repair_ip_addresses(client: Client) -> tuple[int, int]:
    """One pass of the IPAddress repair: (created, deleted)."""
    services = (await client.list(SERVICES, read_only=True)).get("items") or []
    ips = {str(meta(o).get("name")): o for o in (await client.list(IPADDRESSES, read_only=True)).get("items") or []}
    created = deleted = 0
    holders: set[tuple[str, str]] = set()
    for svc in services:
        m = meta(svc)
        ns, name = str(m.get("namespace") or ""), str(m.get("name") or "")
        holders.add((ns, name))
        for ip in cluster_ips(svc):
            if ip in ips:
                continue
            body = ip_address_object(ip, ns, name)
            try:
                await client.create(IPADDRESSES, body, read_only=True)
                created += 1
                logger.info("Cluster IP [%s]: %s is not allocated; repairing",
                            body["metadata"]["labels"][IP_FAMILY_LABEL], ip)
            except AlreadyExistsError:
                pass
    for ip, obj in ips.items():
        if (meta(obj).get("labels") or {}).get(MANAGED_BY_LABEL) != ALLOCATOR:
            continue
        ref = (obj.get("spec") or {}).get("parentRef") or {}
        if ref.get("resource") == "services" and (str(ref.get("namespace") or ""), str(ref.get("name") or "")) \
                not in holders:
            try:
                await client.delete(IPADDRESSES, ip)
                deleted += 1
                logger.info("IPAddress: %s for Service %s/%s appears to have leaked: cleaning up",
                            ip, ref.get("namespace"), ref.get("name"))
            except NotFoundError:
                pass
    return created, deleted


def _networks(sc: JsonDict) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    out = []
    for c in (sc.get("spec") or {}).get("cidrs") or ():
        try:
            out.append(ipaddress.ip_network(str(c), strict=False))
        except ValueError:
            continue
    return out


def _contains(net: ipaddress.IPv4Network | ipaddress.IPv6Network, ip: ipaddress.IPv4Address | ipaddress.IPv6Address
              ) -> bool:
    """PrefixContainsIP: inside the prefix, not its network address nor (IPv4) its broadcast."""
    if ip.version != net.version or ip not in net or ip == net.network_address:
        return False
    return not (net.version == 4 and ip == net.broadcast_address)


class ServiceCIDRController:
    NAME = "service-cidr-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._cidrs = informers.informer(SERVICECIDRS)
        self._ips = informers.informer(IPADDRESSES)
        self.queue = WorkQueue()
        self._cidrs.add_handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n),
                                on_delete=self._enqueue)
        self._ips.add_handler(on_add=self._ip_changed, on_delete=self._ip_changed)

    def _enqueue(self, sc: Any) -> None:
        obj = sc if isinstance(sc, dict) else getattr(sc, "obj", None)
        if isinstance(obj, dict):
            self.queue.add(str(meta(obj).get("name")))

    def _ip_changed(self, obj: Any) -> None:
        """An allocated address came or went: the ServiceCIDRs holding it (one being deleted may
        now go)."""
        obj = obj if isinstance(obj, dict) else getattr(obj, "obj", None)
        if not isinstance(obj, dict) or (meta(obj).get("labels") or {}).get(MANAGED_BY_LABEL) != ALLOCATOR:
            return
        try:
            ip = ipaddress.ip_address(str(meta(obj).get("name")))
        except ValueError:
            return
        for sc in self._cidrs.store.list():
            if any(_contains(n, ip) for n in _networks(sc)):
                self._enqueue(sc)

    async def run(self, workers: int = 2) -> None:
        await self._cidrs.wait_for_sync()
        await self._ips.wait_for_sync()
        logger.info("%s: caches synced", self.NAME)
        await run_workers(self.queue, self.sync, workers=workers, name=self.NAME)

    def _can_delete(self, sc: JsonDict) -> bool:
        """canDeleteCIDR: no allocated IPAddress lies only in this ServiceCIDR's ranges."""
        nets = _networks(sc)
        others = [n for o in self._cidrs.store.list() if o is not sc and meta(o).get("name") != meta(sc).get("name")
                  and not meta(o).get("deletionTimestamp") for n in _networks(o)]
        for obj in self._ips.store.list():
            if (meta(obj).get("labels") or {}).get(MANAGED_BY_LABEL) != ALLOCATOR:
                continue
            try:
                ip = ipaddress.ip_address(str(meta(obj).get("name")))
            except ValueError:
                continue
            if any(_contains(n, ip) for n in nets) and not any(_contains(n, ip) for n in others):
                return False
        return True

    async def _apply_ready(self, name: str, status: str, reason: str, message: str, sc: JsonDict) -> None:
        cur = _ready(sc)
        if cur is not None and (cur.get("status"), cur.get("reason") or "", cur.get("message")) == \
                (status, reason, message):
            return
        now = rfc3339(self._clock.now())
        if cur is not None and cur.get("status") == status and cur.get("lastTransitionTime"):
            now = str(cur["lastTransitionTime"])
        await self._client.patch(SERVICECIDRS, name, _status_apply(name, status, reason, message, now),
                                 patch_type="apply", subresource="status", field_manager=self.NAME, force=True,
                                 read_only=True)

    async def sync(self, name: str) -> None:
        sc = self._cidrs.store.get(name)
        if sc is None:
            return
        try:
            if meta(sc).get("deletionTimestamp"):
                await self._sync_deleting(name, sc)
                return
            if FINALIZER not in (meta(sc).get("finalizers") or []):
                await self._client.patch(SERVICECIDRS, name, {"metadata": {"finalizers": [FINALIZER]}},
                                         patch_type="strategic", read_only=True)
            await self._apply_ready(name, "True", "", READY_MESSAGE, sc)
        except (NotFoundError, ConflictError):
            return  # gone, or a newer version is on its way (the informer re-queues it)

    async def _sync_deleting(self, name: str, sc: JsonDict) -> None:
        if FINALIZER not in (meta(sc).get("finalizers") or []):
            return
        if not self._can_delete(sc):
            await self._apply_ready(name, "False", "Terminating", TERMINATING_MESSAGE, sc)
            return
        started = parse_time(meta(sc).get("deletionTimestamp"))
        wait = DELETION_GRACE - (self._clock.now() - started).total_seconds() if started is not None else 0.0
        if wait > 0:
            self.queue.add_after(name, wait)
            return
        await self._client.patch(SERVICECIDRS, name, {"metadata": {"$deleteFromPrimitiveList/finalizers": [FINALIZER]}},
                                 patch_type="strategic", read_only=True)
