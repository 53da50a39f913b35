"""What a pod's volumes are, parsed once, and the storage listers the volume plugins read
(layer L4, scheduler plugins; shared by VolumeRestrictions, VolumeZone and NodeVolumeLimits).

`pod_volumes(pi)` walks `spec.volumes` once per PodInfo and caches the answer on it (PodInfos are
never changed in place), so the three volume plugins' PreFilters cost a dict lookup for a pod
whose only volume is the projected service-account token, and their Filters can pass over such
pods on a node without looking at them. Example: volumes [projected token] -> every flag False,
no claims; [pvc "data", ephemeral "scratch"] on pod "web-0" -> claims ("data", False),
("web-0-scratch", True), `has_claims` True.

`StorageListers` reads PersistentVolumes, claims, StorageClasses, CSINodes and VolumeAttachments
from the handle's shared informer factory (upstream: the plugins' listers from
SharedInformerFactory), and turns a missing object into `NotFound` carrying the message a
client-go lister gives (`persistentvolumeclaim "data" not found`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from minik3s.api.helpers.storage_volume import ephemeral_claim_name
from minik3s.api.resources import (
    CSINODES,
    PERSISTENTVOLUMECLAIMS,
    PERSISTENTVOLUMES,
    STORAGECLASSES,
    VOLUMEATTACHMENTS,
    ResourceInfo,
)
from minik3s.api.types import JsonDict
from scheduler.framework.interface import Handle
from scheduler.framework.types import PodInfo
from scheduler.plugins.helpers import cached_on

logger = logging.getLogger(__name__)

# volume sources VolumeRestrictions checks for disk conflicts (upstream needsRestrictionsCheck)
CONFLICT_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
# inline in-tree sources csi-translation-lib can migrate to CSI (IsInlineMigratable)
MIGRATABLE_INLINE_SOURCES = ("awsElasticBlockStore", "gcePersistentDisk", "azureDisk", "azureFile",
                             "cinder", "vsphereVolume", "portworxVolume")


@dataclass(slots=True, frozen=True)
class PodVolumes:
    """A pod's volumes as the volume plugins need them. `claims`: (claim name, is a generic
    ephemeral volume) per claim-backed volume, in volume order; `conflict`: some volume is of a
    type VolumeRestrictions checks; `inline_migratable`: some inline in-tree volume is of a
    migratable type; `any_volume`: some volume is of a type a volume plugin may look at (not only
    projected / configMap / secret / emptyDir / downwardAPI ones)."""

    claims: tuple[tuple[str, bool], ...]
    conflict: bool
    inline_migratable: bool
    any_volume: bool

    @property
    def has_claims(self) -> bool:
        return bool(self.claims)

    @property
    def csi_relevant(self) -> bool:
        """A volume NodeVolumeLimits may count (a claim, an ephemeral volume, a migratable inline one)."""
        return bool(self.claims) or self.inline_migratable


_NO_VOLUMES = PodVolumes((), False, False, False)


def _parse(pod: JsonDict) -> PodVolumes:
    vols = (pod.get("spec") or {}).get("volumes")
    if not vols:
        return _NO_VOLUMES
    claims: list[tuple[str, bool]] = []
    conflict = migratable = other = False
    for v in vols:
        pvc = v.get("persistentVolumeClaim")
        if pvc is not None:
            claims.append((str(pvc.get("claimName") or ""), False))
            continue
        if v.get("ephemeral") is not None:
            claims.append((ephemeral_claim_name(pod, v), True))
            continue
        if "projected" in v or "configMap" in v or "secret" in v or "emptyDir" in v or "downwardAPI" in v:
            continue
        other = True
        for src in CONFLICT_SOURCES:
            if v.get(src) is not None:
                conflict = True
        for src in MIGRATABLE_INLINE_SOURCES:
            if v.get(src) is not None:
                migratable = True
    if not claims and not other:
        # only volumes no volume plugin looks at (every pod's service-account token is one):
        # shared, so the plugins' PreFilters Skip on one attribute read
        return _NO_VOLUMES
    return PodVolumes(tuple(claims), conflict, migratable, True)


def pod_volumes(pi: PodInfo) -> PodVolumes:
    """The pod's volumes, parsed once and cached on the PodInfo."""
    ex = pi._extra
    if ex is not None:
        got = ex.get("volumes")
        if got is not None:
            return got  # type: ignore[no-any-return]
    return cached_on(pi, "volumes", lambda: _parse(pi.pod))  # type: ignore[no-any-return]


def volumes_of(pod: JsonDict) -> PodVolumes:
    """`pod_volumes` for a bare pod dict (queueing hints get the deleted pod as a dict)."""
    return _parse(pod)


def names_claim(pod: PodInfo, claim: Any, *, ephemeral: bool) -> bool | None:
    """Whether an added or updated claim is one `pod` uses (its own namespace, a claim it names;
    generic ephemeral volumes' claims too when `ephemeral`): the volume plugins' PVC queueing
    hints. None when the claim is not an object (the hint then queues, as upstream on errors)."""
    if not isinstance(claim, dict):
        return None
    meta = claim.get("metadata") or {}
    if (meta.get("namespace") or "") != pod.namespace:
        return False
    name = meta.get("name")
    return any(n == name and (ephemeral or not eph) for n, eph in pod_volumes(pod).claims)


class NotFound(LookupError):
    """A lister miss; str() is client-go's NotFound message."""


# (the resource, the singular group-qualified name client-go's listers use in NotFound)
_KINDS: dict[str, tuple[ResourceInfo, str]] = {
    "pv": (PERSISTENTVOLUMES, "persistentvolume"),
    "pvc": (PERSISTENTVOLUMECLAIMS, "persistentvolumeclaim"),
    "sc": (STORAGECLASSES, "storageclass.storage.k8s.io"),
    "csinode": (CSINODES, "csinode.storage.k8s.io"),
    "va": (VOLUMEATTACHMENTS, "volumeattachment.storage.k8s.io"),
}


class StorageListers:
    """Read access to the storage objects through the handle's informers. The informers are asked
    for on first use of a kind (so a plugin that never sees a volume never starts one); without an
    informer factory every lookup misses."""

    def __init__(self, handle: Handle | None) -> None:
        self._informers = handle.informers if handle is not None else None
        self._stores: dict[str, Any] = {}

    def _store(self, kind: str) -> Any:
        st = self._stores.get(kind)
        if st is None and self._informers is not None:
            try:
                st = self._informers.informer(_KINDS[kind][0]).store
            except Exception:  # noqa: BLE001 - no informer for the kind: every lookup misses
                logger.debug("no %s informer for the volume plugins", kind)
                st = None
            if st is not None:
                self._stores[kind] = st
        return st

    def warm(self, *kinds: str) -> None:
        """Ask for the informers of `kinds` now (at plugin construction, as upstream's New takes
        its listers), so they are listed and watched before the first pod needs them."""
        for k in kinds:
            self._store(k)

    def get(self, kind: str, name: str, namespace: str | None = None) -> JsonDict:
        st = self._store(kind)
        obj = st.get(f"{namespace}/{name}" if namespace else name) if st is not None else None
        if obj is None:
            raise NotFound(f'{_KINDS[kind][1]} "{name}" not found')
        return obj  # type: ignore[no-any-return]

    def find(self, kind: str, name: str, namespace: str | None = None) -> JsonDict | None:
        st = self._store(kind)
        if st is None:
            return None
        return st.get(f"{namespace}/{name}" if namespace else name)  # type: ignore[no-any-return]

    def list(self, kind: str) -> Sequence[JsonDict]:
        st = self._store(kind)
        return st.list() if st is not None else ()
