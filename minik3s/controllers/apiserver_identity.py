"""kube-apiserver's identity Lease in `kube-system` and its garbage collector (the APIServerIdentity
post-start hooks `start-kube-apiserver-identity-lease-controller` and
`start-kube-apiserver-identity-lease-garbage-collector`).

Why: `kubectl get leases -n kube-system` on a real control plane lists `apiserver-<id>` beside the
kube-scheduler and kube-controller-manager leases; tools count live API servers by the label
`apiserver.kubernetes.io/identity=kube-apiserver`.

The id is upstream's: "apiserver-" + lowercase unpadded base32 of the first 16 bytes of SHA-256
over the length-prefixed (uint16, big endian) hostname and "kube-apiserver", so the same host keeps
the same Lease across restarts. The Lease is created with holder `<id>_<uuid>`, 3,600 s duration
and the two labels; every 10 s only `renewTime` and `leaseDurationSeconds` are rewritten (as the
component-helpers lease controller does, so the holder of an earlier run stays). Every hour,
identity Leases whose renewTime + duration has passed are deleted.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import socket
import struct
import uuid
from datetime import timedelta

from minik3s.api import errors
from minik3s.api.resources import LEASES
from minik3s.api.types import JsonDict
from minik3s.client.interface import Client
from minik3s.utils.clock import Clock, parse_time, rfc3339_micro

logger = logging.getLogger(__name__)

NAMESPACE = "kube-system"
IDENTITY_LABEL = "apiserver.kubernetes.io/identity"
IDENTITY_VALUE = "kube-apiserver"
HOSTNAME_LABEL = "kubernetes.io/hostname"
LEASE_DURATION_SECONDS = 3600
RENEW_INTERVAL = 10.0
GC_PERIOD = 3600.0


def apiserver_id(hostname: str) -> str:
    """Example: "kind-control-plane" -> "apiserver-c7uylvfxlbqccnk6myfkwetzze"."""
    data = b""
    for part in (hostname.encode(), IDENTITY_VALUE.encode()):
        data += struct.pack(">H", len(part)) + part
    digest = hashlib.sha256(data).digest()[:16]
    return "apiserver-" + base64.b32encode(digest).decode().rstrip("=").lower()


class ApiserverIdentity:
    def __init__(self, client: Client, *, clock: Clock | None = None, hostname: str | None = None) -> None:
        self.client = client
        self.clock = clock or Clock()
        self.hostname = hostname or socket.gethostname()
        self.name = apiserver_id(self.hostname)
        self._since_gc = 0.0

    async def renew(self) -> None:
        now = rfc3339_micro(self.clock.now())
        try:
            lease = await self.client.get(LEASES, self.name, NAMESPACE)
        except errors.NotFoundError:
            body: JsonDict = {
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": NAMESPACE,
                             "labels": {IDENTITY_LABEL: IDENTITY_VALUE, HOSTNAME_LABEL: self.hostname}},
                "spec": {"holderIdentity": f"{self.name}_{uuid.uuid4()}",
                         "leaseDurationSeconds": LEASE_DURATION_SECONDS, "renewTime": now}}
            try:
                await self.client.create(LEASES, body, NAMESPACE, read_only=True)
            except errors.AlreadyExistsError:
                pass
            return
        spec = {**(lease.get("spec") or {}), "leaseDurationSeconds": LEASE_DURATION_SECONDS, "renewTime": now}
        meta = lease.get("metadata") or {}
        labels = meta.get("labels") or {}
        want = {**labels, IDENTITY_LABEL: IDENTITY_VALUE, HOSTNAME_LABEL: self.hostname}
        out = {**lease, "spec": spec}
        if want != labels:
            out["metadata"] = {**meta, "labels": want}
        try:
            await self.client.update(LEASES, out, read_only=True)
        except (errors.ConflictError, errors.NotFoundError):
            pass  # the next round writes it again

    async def collect_expired(self) -> list[str]:
        """Delete identity Leases (any server's) whose renewTime + leaseDurationSeconds passed."""
        now = self.clock.now()
        leases = await self.client.list(LEASES, NAMESPACE, label_selector=f"{IDENTITY_LABEL}={IDENTITY_VALUE}",
                                        read_only=True)
        gone: list[str] = []
        for lease in leases.get("items") or []:
            spec = lease.get("spec") or {}
            renewed = parse_time(spec.get("renewTime"))
            duration = spec.get("leaseDurationSeconds")
            if renewed is not None and isinstance(duration, int) and renewed + timedelta(seconds=duration) >= now:
                continue
            name = (lease.get("metadata") or {}).get("name") or ""
            try:
                await self.client.delete(LEASES, name, NAMESPACE)
                gone.append(name)
            except errors.NotFoundError:
                pass
        return gone

    async def run(self) -> None:
        while True:
            try:
                await self.renew()
                if self._since_gc >= GC_PERIOD:
                    self._since_gc = 0.0
                    for name in await self.collect_expired():
                        logger.info("deleted expired apiserver identity lease lease=%s/%s", NAMESPACE, name)
            except errors.ApiError as e:
                logger.warning("apiserver identity lease not renewed lease=%s/%s error=%s", NAMESPACE, self.name, e)
            await self.clock.sleep(RENEW_INTERVAL)
            self._since_gc += RENEW_INTERVAL
