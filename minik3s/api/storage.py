"""storage.k8s.io/v1 wire types: StorageClass, CSIDriver, CSINode, CSIStorageCapacity,
VolumeAttachment (layer L2, upstream k8s.io/api/storage/v1).

Stored and validated. The only provisioner that runs is the simulated local-path one of K3s
(minik3s.controllers.local_path, component `local-storage`), serving the `local-path` class
`local_path_storage_class()` describes; no attacher runs.
"""

from __future__ import annotations

from minik3s.api.meta import K8sModel, LabelSelector, Quantity, TypedObject
from minik3s.api.types import JsonDict

LOCAL_PATH_PROVISIONER = "rancher.io/local-path"
LOCAL_PATH_STORAGE_CLASS = "local-path"


def local_path_storage_class() -> JsonDict:
    """The StorageClass K3s' local-storage manifest creates: the default class, provisioned by
    rancher.io/local-path, WaitForFirstConsumer, reclaim Delete."""
    return {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": LOCAL_PATH_STORAGE_CLASS,
                     "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": LOCAL_PATH_PROVISIONER, "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
    }


class TopologySelectorLabelRequirement(K8sModel):
    key: str = ""
    values: list[str] | None = None


class TopologySelectorTerm(K8sModel):
    matchLabelExpressions: list[TopologySelectorLabelRequirement] | None = None


class StorageClass(TypedObject):
    provisioner: str = ""
    parameters: dict[str, str] | None = None
    reclaimPolicy: str | None = None
    mountOptions: list[str] | None = None
    allowVolumeExpansion: bool | None = None
    volumeBindingMode: str | None = None
    allowedTopologies: list[TopologySelectorTerm] | None = None


class TokenRequest(K8sModel):
    audience: str = ""
    expirationSeconds: int | None = None


class CSIDriverSpec(K8sModel):
    attachRequired: bool | None = None
    podInfoOnMount: bool | None = None
    volumeLifecycleModes: list[str] | None = None
    storageCapacity: bool | None = None
    fsGroupPolicy: str | None = None
    tokenRequests: list[TokenRequest] | None = None
    requiresRepublish: bool | None = None
    seLinuxMount: bool | None = None
    nodeAllocatableUpdatePeriodSeconds: int | None = None


class CSIDriver(TypedObject):
    spec: CSIDriverSpec | None = None


class VolumeNodeResources(K8sModel):
    count: int | None = None


class CSINodeDriver(K8sModel):
    name: str = ""
    nodeID: str = ""
    topologyKeys: list[str] | None = None
    allocatable: VolumeNodeResources | None = None


class CSINodeSpec(K8sModel):
    drivers: list[CSINodeDriver] | None = None


class CSINode(TypedObject):
    spec: CSINodeSpec | None = None


class CSIStorageCapacity(TypedObject):
    nodeTopology: LabelSelector | None = None
    storageClassName: str = ""
    capacity: Quantity | None = None
    maximumVolumeSize: Quantity | None = None


class VolumeAttachmentSource(K8sModel):
    persistentVolumeName: str | None = None
    inlineVolumeSpec: dict[str, object] | None = None


class VolumeAttachmentSpec(K8sModel):
    attacher: str = ""
    source: VolumeAttachmentSource | None = None
    nodeName: str = ""


class VolumeError(K8sModel):
    time: str | None = None
    message: str | None = None
    errorCode: int | None = None


class VolumeAttachmentStatus(K8sModel):
    attached: bool = False
    attachmentMetadata: dict[str, str] | None = None
    attachError: VolumeError | None = None
    detachError: VolumeError | None = None


class VolumeAttachment(TypedObject):
    spec: VolumeAttachmentSpec | None = None
    status: VolumeAttachmentStatus | None = None

