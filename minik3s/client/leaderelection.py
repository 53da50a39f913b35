"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection package does it
(layer L3).

Why: kube-scheduler and kube-controller-manager hold `kube-system/kube-scheduler` and
`kube-system/kube-controller-manager` (holder `<hostname>_<uuid>`, 15 s lease, renewed every 2 s,
`leaseTransitions` counting holder changes, MicroTime stamps); users read them with
`kubectl get leases -n kube-system`, and a second scheduler with the same lease waits until the
first is gone.

`LeaseElector.try_acquire_or_renew` is client-go's `tryAcquireOrRenew` on a LeaseLock: create the
Lease when missing; leave a Lease to its holder while it is valid (judged, as client-go does, by
the local time the record was last seen to change, not by the holder's clock); otherwise write
ourselves as holder (the acquire time and transition count kept while we hold it, the count +1 on a
takeover). A write conflict is a lost round, retried after `retry_period`. `release` is client-go's
`ReleaseOnCancel` write (empty holder, duration 1 s) so a successor need not wait.

The embedded server's components use `force=True` for their first acquisition: the server owns
its data directory, so a Lease found at start was written by a previous run of this server (or by
a rival that would have to give way anyway); it is taken over at once instead of after 15 s. After
that the same rules apply: a component whose Lease another holder took keeps running but logs it
and retakes the Lease only once it has expired.

Data flow: `run()` -> acquire (every retry_period) -> `on_started` -> renew every retry_period
(renewal failing for renew_deadline = leadership lost -> `on_lost`) -> cancellation -> `release`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from minik3s.api import errors
from minik3s.api.resources import LEASES
from minik3s.api.types import JsonDict
from minik3s.client.interface import Client
from minik3s.utils.clock import Clock, parse_time, rfc3339_micro

logger = logging.getLogger(__name__)

LEADER_ELECTION_NAMESPACE = "kube-system"


@dataclass(slots=True, frozen=True)
class LeaderElectionConfig:
    """component-base's LeaderElectionConfiguration (the defaults of kube-scheduler and
    kube-controller-manager)."""

    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_name: str = ""
    resource_namespace: str = LEADER_ELECTION_NAMESPACE


def leader_identity() -> str:
    """`<hostname>_<uuid>`: the identity kube-scheduler and kube-controller-manager elect with."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaseElector:
    def __init__(self, client: Client, config: LeaderElectionConfig, *, identity: str | None = None,
                 clock: Clock | None = None, force: bool = False) -> None:
        if not config.resource_name:
            raise ValueError("leader election needs a lease name")
        self.client = client
        self.config = config
        self.identity = identity or leader_identity()
        self.clock = clock or Clock()
        self._force = force
        self._observed: JsonDict | None = None  # the Lease spec last seen
        self._observed_at = 0.0  # clock.monotonic() when that spec last changed
        self.leading = False

    # -- one round ---------------------------------------------------------------------------

    def _holder_valid(self, spec: JsonDict) -> bool:
        holder = spec.get("holderIdentity") or ""
        if not holder or holder == self.identity:
            return False
        duration = spec.get("leaseDurationSeconds") or 0
        return self._observed_at + float(duration) > self.clock.monotonic()

    async def try_acquire_or_renew(self) -> bool:
        now = rfc3339_micro(self.clock.now())
        cfg = self.config
        record: JsonDict = {"holderIdentity": self.identity, "leaseDurationSeconds": int(cfg.lease_duration),
                            "acquireTime": now, "renewTime": now, "leaseTransitions": 0}
        try:
            lease = await self.client.get(LEASES, cfg.resource_name, cfg.resource_namespace)
        except errors.NotFoundError:
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": cfg.resource_name, "namespace": cfg.resource_namespace}, "spec": record}
            try:
                await self.client.create(LEASES, body, cfg.resource_namespace, read_only=True)
            except (errors.AlreadyExistsError, errors.ConflictError):
                return False
            self._seen(record)
            return True
        spec = lease.get("spec") or {}
        if spec != self._observed:
            self._seen(spec)
        if self._force:
            self._force = False
        elif self._holder_valid(spec):
            return False
        if spec.get("holderIdentity") == self.identity:
            record["acquireTime"] = spec.get("acquireTime") or now
            record["leaseTransitions"] = spec.get("leaseTransitions") or 0
        else:
            record["leaseTransitions"] = (spec.get("leaseTransitions") or 0) + 1
        updated = {**lease, "spec": record}
        try:
            await self.client.update(LEASES, updated, read_only=True)
        except (errors.ConflictError, errors.NotFoundError):
            return False
        self._seen(record)
        return True

    def _seen(self, spec: JsonDict) -> None:
        self._observed = dict(spec)
        self._observed_at = self.clock.monotonic()

    async def release(self) -> None:
        """Give the Lease up (an empty holder, duration 1 s) if we hold it."""
        if not self.leading:
            return
        self.leading = False
        cfg = self.config
        try:
            lease = await self.client.get(LEASES, cfg.resource_name, cfg.resource_namespace)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return
            now = rfc3339_micro(self.clock.now())
            await self.client.update(LEASES, {**lease, "spec": {
                "holderIdentity": "", "leaseDurationSeconds": 1, "acquireTime": now, "renewTime": now,
                "leaseTransitions": spec.get("leaseTransitions") or 0}}, read_only=True)
        except errors.ApiError as e:
            logger.info("lease release failed lease=%s/%s error=%s", cfg.resource_namespace, cfg.resource_name, e)

    # -- the loop ----------------------------------------------------------------------------

    async def acquire(self) -> None:
        """Returns once this elector holds the Lease."""
        announced = False
        while True:
            if await self._round():
                self.leading = True
                logger.info("successfully acquired lease lease=%s/%s identity=%s",
                            self.config.resource_namespace, self.config.resource_name, self.identity)
                return
            if not announced:
                announced = True
                logger.info("attempting to acquire leader lease lease=%s/%s",
                            self.config.resource_namespace, self.config.resource_name)
            await self.clock.sleep(self.config.retry_period)

    async def _round(self) -> bool:
        try:
            return await self.try_acquire_or_renew()
        except errors.ApiError as e:
            logger.info("error retrieving resource lock lease=%s/%s error=%s",
                        self.config.resource_namespace, self.config.resource_name, e)
            return False

    async def renew(self) -> None:
        """Renews every retry_period; returns when renewal failed for renew_deadline (lost)."""
        last_ok = self.clock.monotonic()
        while True:
            await self.clock.sleep(self.config.retry_period)
            if await self._round():
                last_ok = self.clock.monotonic()
                continue
            if self.clock.monotonic() - last_ok >= self.config.renew_deadline:
                self.leading = False
                logger.error("leaderelection lost lease=%s/%s identity=%s",
                             self.config.resource_namespace, self.config.resource_name, self.identity)
                return

    async def hold(self, on_lost: Callable[[], None] | None = None) -> None:
        """Acquire, then keep the Lease until cancelled (released then). Each time leadership is
        lost `on_lost` runs and the elector tries to acquire again."""
        try:
            while True:
                await self.acquire()
                await self.renew()
                if on_lost is not None:
                    on_lost()
        finally:
            if self.leading:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self.release())


def lease_time(value: object) -> float | None:
    """A Lease MicroTime as POSIX seconds (None when unset or unparsable)."""
    dt = parse_time(value)
    return dt.timestamp() if dt is not None else None
