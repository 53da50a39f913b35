"""storage.k8s.io/v1 strategies (layer L4, apiserver): pkg/apis/storage/validation and the v1
defaults.

StorageClass: `provisioner` is a required qualified name; reclaimPolicy (default Delete) is
Delete or Retain, volumeBindingMode (default Immediate) Immediate or WaitForFirstConsumer;
parameters, provisioner, reclaimPolicy and volumeBindingMode cannot change.
CSIDriver: the name is a CSI driver name (DNS subdomain, at most 63 characters); the spec
defaults as upstream (attachRequired true, podInfoOnMount/storageCapacity/requiresRepublish/
seLinuxMount false, fsGroupPolicy ReadWriteOnceWithFSType, volumeLifecycleModes [Persistent]);
attachRequired, fsGroupPolicy and volumeLifecycleModes are immutable.
CSINode: each driver has a valid unique name and a nodeID, topology keys are qualified names.
CSIStorageCapacity: storageClassName required (DNS subdomain), capacity a non-negative quantity.
VolumeAttachment: attacher and nodeName required, exactly one source; the spec is immutable,
the status subresource carries attach results.
Warnings (create and update alike, of the new object): a StorageClass's deprecated node labels in
allowedTopologies, a CSIStorageCapacity's in nodeTopology (pkg/api/storage); a PersistentVolume's
deprecated annotations, Recycle policy, node labels and volume plugins
(pkg/api/persistentvolume); a claim's beta storage-class annotation and fractional storage
(pkg/api/persistentvolumeclaim).
Data flow: core create/update -> default -> validate / validate_update -> storage.
"""

from __future__ import annotations

import posixpath
from datetime import UTC, datetime
from typing import Any

from minik3s.api.quantity import QuantityError, parse_quantity
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    duplicate,
    forbidden,
    invalid,
    is_dns1123_subdomain,
    is_qualified_name,
    not_supported,
    required,
    validate_label_selector,
)
from minik3s.utils.clock import rfc3339

from .base import Strategy, as_dict, as_list
from .pod_warnings import (
    node_label_deprecated_message,
    warnings_for_node_selector,
    warnings_for_node_selector_term,
    warnings_for_pvc_spec,
)
from .volume_validation import default_persistent_volume_source, validate_persistent_volume_source

GROUP = "storage.k8s.io"
RECLAIM_POLICIES = ("Delete", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
LIFECYCLE_MODES = ("Ephemeral", "Persistent")
CSI_NAME_MAX = 63


BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
MOUNT_OPTIONS_ANNOTATION = "volume.beta.kubernetes.io/mount-options"
_STORAGE_CLASS_ANNOTATION_MSG = 'deprecated since v1.8; use "storageClassName" attribute instead'
# pkg/api/persistentvolume deprecatedAnnotations, in order
_PV_DEPRECATED_ANNOTATIONS = (
    (BETA_STORAGE_CLASS_ANNOTATION, _STORAGE_CLASS_ANNOTATION_MSG),
    (MOUNT_OPTIONS_ANNOTATION, 'deprecated since v1.31; use "mountOptions" attribute instead'),
)
# deprecated in-tree volume plugins a PersistentVolume may name, in upstream's order
_PV_DEPRECATED_PLUGINS = (
    ("cephfs", "cephfs", "deprecated in v1.28, non-functional in v1.31+"),
    ("photonPersistentDisk", "photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"),
    ("scaleIO", "scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    ("storageos", "storageOS", "deprecated in v1.22, non-functional in v1.25+"),
    ("glusterfs", "glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
    ("rbd", "rbd", "deprecated in v1.28, non-functional in v1.31+"),
)


def get_warnings_for_storage_class(sc: JsonDict | None) -> list[str]:
    """GetWarningsForStorageClass (pkg/api/storage): deprecated node labels as
    allowedTopologies' matchLabelExpressions keys."""
    warnings: list[str] = []
    for i, topo in enumerate(as_list(as_dict(sc).get("allowedTopologies"))):
        for j, expr in enumerate(as_list(as_dict(topo).get("matchLabelExpressions"))):
            msg = node_label_deprecated_message(as_dict(expr).get("key"))
            if msg is not None:
                warnings.append(f"allowedTopologies[{i}].matchLabelExpressions[{j}].key: {msg}")
    return warnings


def get_warnings_for_csi_storage_capacity(csc: JsonDict | None) -> list[str]:
    """GetWarningsForCSIStorageCapacity: deprecated node labels in nodeTopology."""
    return warnings_for_node_selector(as_dict(csc).get("nodeTopology"), "nodeTopology")


def get_warnings_for_persistent_volume(pv: JsonDict | None) -> list[str]:
    """GetWarningsForPersistentVolume (pkg/api/persistentvolume): deprecated annotations, the
    Recycle reclaim policy, deprecated node labels in nodeAffinity, deprecated plugins."""
    if pv is None:
        return []
    annotations = as_dict(as_dict(pv.get("metadata")).get("annotations"))
    spec = as_dict(pv.get("spec"))
    warnings = [f"metadata.annotations[{key}]: {msg}" for key, msg in _PV_DEPRECATED_ANNOTATIONS
                if key in annotations]
    if spec.get("persistentVolumeReclaimPolicy") == "Recycle":
        warnings.append("spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the "
                        "recommended approach is to use dynamic provisioning.")
    required_terms = as_dict(as_dict(spec.get("nodeAffinity")).get("required"))
    for i, term in enumerate(as_list(required_terms.get("nodeSelectorTerms"))):
        warnings.extend(warnings_for_node_selector_term(term, False, f"spec.nodeAffinity.required.nodeSelectorTerms[{i}]"))
    for key, segment, msg in _PV_DEPRECATED_PLUGINS:
        if spec.get(key) is not None:
            warnings.append(f"spec.{segment}: {msg}")
    return warnings


def get_warnings_for_persistent_volume_claim(pvc: JsonDict | None) -> list[str]:
    """GetWarningsForPersistentVolumeClaim (pkg/api/persistentvolumeclaim): the deprecated
    beta storage-class annotation, fractional storage requests and limits."""
    if pvc is None:
        return []
    warnings: list[str] = []
    if BETA_STORAGE_CLASS_ANNOTATION in as_dict(as_dict(pvc.get("metadata")).get("annotations")):
        warnings.append(f"metadata.annotations[{BETA_STORAGE_CLASS_ANNOTATION}]: {_STORAGE_CLASS_ANNOTATION_MSG}")
    warnings.extend(warnings_for_pvc_spec("spec", pvc.get("spec")))
    return warnings


def csi_driver_name_errors(name: Any, path: str) -> list[JsonDict]:
    if not name:
        return [required(path)]
    n = str(name)
    if len(n) > CSI_NAME_MAX:
        return [invalid(path, n, f"must be no more than {CSI_NAME_MAX} characters")]
    return [invalid(path, n, m) for m in is_dns1123_subdomain(n.lower())]


class StorageClassStrategy(Strategy):
    kind = "StorageClass"
    group = GROUP
    return_deleted_object = True

    def _default(self, obj: JsonDict) -> None:
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        prov = obj.get("provisioner") or ""
        if not prov:
            errs.append(required("provisioner"))
        else:
            errs.extend(invalid("provisioner", prov, m) for m in is_qualified_name(str(prov).lower()))
        rp = obj.get("reclaimPolicy")
        if rp not in RECLAIM_POLICIES:
            errs.append(not_supported("reclaimPolicy", rp, RECLAIM_POLICIES))
        mode = obj.get("volumeBindingMode")
        if mode not in BINDING_MODES:
            errs.append(not_supported("volumeBindingMode", mode, BINDING_MODES))
        params = obj.get("parameters")
        if isinstance(params, dict):
            for k in params:
                if not k:
                    errs.append(invalid("parameters", params, "parameter key must be non-empty"))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        if (new.get("parameters") or {}) != (old.get("parameters") or {}):
            errs.append(forbidden("parameters", "updates to parameters are forbidden."))
        if new.get("provisioner") != old.get("provisioner"):
            errs.append(forbidden("provisioner", "updates to provisioner are forbidden."))
        if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
            errs.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
        if new.get("volumeBindingMode") != old.get("volumeBindingMode"):
            errs.append(invalid("volumeBindingMode", new.get("volumeBindingMode"), "field is immutable"))
        return errs

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        return get_warnings_for_storage_class(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        return get_warnings_for_storage_class(new)


class CSIDriverStrategy(Strategy):
    kind = "CSIDriver"
    group = GROUP
    tracks_generation = True
    return_deleted_object = True

    def _default(self, obj: JsonDict) -> None:
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        spec.setdefault("attachRequired", True)
        spec.setdefault("podInfoOnMount", False)
        spec.setdefault("storageCapacity", False)
        spec.setdefault("fsGroupPolicy", "ReadWriteOnceWithFSType")
        spec.setdefault("requiresRepublish", False)
        spec.setdefault("seLinuxMount", False)
        if not spec.get("volumeLifecycleModes"):
            spec["volumeLifecycleModes"] = ["Persistent"]

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        errs = csi_driver_name_errors((obj.get("metadata") or {}).get("name"), "name")
        errs = [e for e in errs if not e["message"].startswith("Required")]  # metadata.name reports that
        spec = as_dict(obj.get("spec"))
        pol = spec.get("fsGroupPolicy")
        if pol is not None and pol not in FS_GROUP_POLICIES:
            errs.append(not_supported("spec.fsGroupPolicy", pol, FS_GROUP_POLICIES))
        for i, m in enumerate(as_list(spec.get("volumeLifecycleModes"))):
            if m not in LIFECYCLE_MODES:
                errs.append(not_supported(f"spec.volumeLifecycleModes[{i}]", m, LIFECYCLE_MODES))
        seen: set[str] = set()
        for i, t in enumerate(as_list(spec.get("tokenRequests"))):
            aud = str(as_dict(t).get("audience") or "")
            if aud in seen:
                errs.append(duplicate(f"spec.tokenRequests[{i}].audience", aud))
            seen.add(aud)
            exp = as_dict(t).get("expirationSeconds")
            if exp is not None and (not isinstance(exp, int) or exp < 600):
                errs.append(invalid(f"spec.tokenRequests[{i}].expirationSeconds", exp,
                                    "may not specify a duration less than 10 minutes"))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        ns, os_ = as_dict(new.get("spec")), as_dict(old.get("spec"))
        errs: list[JsonDict] = []
        for f in ("attachRequired", "fsGroupPolicy", "volumeLifecycleModes"):
            if ns.get(f) != os_.get(f):
                errs.append(invalid(f"spec.{f}", ns.get(f), "field is immutable"))
        return errs


class CSINodeStrategy(Strategy):
    kind = "CSINode"
    group = GROUP
    return_deleted_object = True

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        names: set[str] = set()
        for i, d in enumerate(as_list(as_dict(obj.get("spec")).get("drivers"))):
            dp = f"spec.drivers[{i}]"
            d = as_dict(d)
            name = d.get("name")
            errs.extend(csi_driver_name_errors(name, f"{dp}.name"))
            if name in names:
                errs.append(duplicate(f"{dp}.name", name))
            names.add(str(name))
            node_id = d.get("nodeID") or ""
            if not node_id:
                errs.append(required(f"{dp}.nodeID"))
            elif len(str(node_id)) > 192:
                errs.append(invalid(f"{dp}.nodeID", node_id, "must be 192 characters or less"))
            for j, key in enumerate(as_list(d.get("topologyKeys"))):
                errs.extend(invalid(f"{dp}.topologyKeys[{j}]", key, m) for m in is_qualified_name(str(key)))
            count = as_dict(d.get("allocatable")).get("count")
            if count is not None and (not isinstance(count, int) or count < 0):
                errs.append(invalid(f"{dp}.allocatable.count", count,
                                    "must be greater than or equal to 0"))
        return errs


def _quantity_errors(v: Any, path: str) -> list[JsonDict]:
    if v is None:
        return []
    try:
        q = parse_quantity(v)
    except QuantityError:
        return [invalid(path, v, "must be a valid quantity")]
    if q < 0:
        return [invalid(path, v, "must be greater than or equal to 0")]
    return []


class CSIStorageCapacityStrategy(Strategy):
    kind = "CSIStorageCapacity"
    group = GROUP

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        sc = obj.get("storageClassName") or ""
        if not sc:
            errs.append(required("storageClassName"))
        else:
            errs.extend(invalid("storageClassName", sc, m) for m in is_dns1123_subdomain(str(sc)))
        if obj.get("nodeTopology") is not None:
            errs.extend(validate_label_selector(obj["nodeTopology"], "nodeTopology"))
        errs.extend(_quantity_errors(obj.get("capacity"), "capacity"))
        errs.extend(_quantity_errors(obj.get("maximumVolumeSize"), "maximumVolumeSize"))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        for f in ("storageClassName", "nodeTopology"):
            if new.get(f) != old.get(f):
                errs.append(invalid(f, new.get(f), "field is immutable"))
        return errs

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        return get_warnings_for_csi_storage_capacity(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        return get_warnings_for_csi_storage_capacity(new)


class VolumeAttachmentStrategy(Strategy):
    kind = "VolumeAttachment"
    group = GROUP
    has_status = True
    return_deleted_object = True

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = as_dict(obj.get("spec"))
        errs = csi_driver_name_errors(spec.get("attacher"), "spec.attacher")
        if not spec.get("nodeName"):
            errs.append(required("spec.nodeName"))
        src = as_dict(spec.get("source"))
        n = sum(1 for k in ("persistentVolumeName", "inlineVolumeSpec") if src.get(k) is not None)
        if n == 0:
            errs.append(required("spec.source", "must specify exactly one of inlineVolumeSpec and "
                                                "persistentVolumeName"))
        elif n == 2:
            errs.append(forbidden("spec.source", "must specify exactly one of inlineVolumeSpec and "
                                                 "persistentVolumeName"))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        if new.get("spec") != old.get("spec"):
            return [invalid("spec", new.get("spec"), "field is immutable")]
        return []


# ------------------------------------------------------------------------------------------------
# core/v1 PersistentVolumeClaim (pkg/registry/core/persistentvolumeclaim, ValidatePersistentVolumeClaim)
# ------------------------------------------------------------------------------------------------

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
_CLAIM_IMMUTABLE = ("spec is immutable after creation except resources.requests and volumeAttributesClassName "
                    "for bound claims")


def _storage_of(spec: JsonDict) -> Any:
    return as_dict(as_dict(spec.get("resources")).get("requests")).get("storage")


def validate_claim_spec(spec: JsonDict, path: str = "spec") -> list[JsonDict]:
    """ValidatePersistentVolumeClaimSpec: access modes (at least one, known, ReadWriteOncePod
    alone), a positive storage request, the volume mode, the class name, the selector."""
    errs: list[JsonDict] = []
    modes = as_list(spec.get("accessModes"))
    if not modes:
        errs.append(required(f"{path}.accessModes", "at least 1 access mode is required"))
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(not_supported(f"{path}.accessModes", mode, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(forbidden(f"{path}.accessModes", "may not use ReadWriteOncePod with other access modes"))
    if spec.get("selector") is not None:
        errs.extend(validate_label_selector(spec.get("selector"), f"{path}.selector"))
    storage = _storage_of(spec)
    if storage is None:
        errs.append(required(f"{path}.resources[storage]", ""))
    else:
        try:
            if parse_quantity(storage) <= 0:
                errs.append(invalid(f"{path}.resources[storage]", str(storage), "must be greater than zero"))
        except (QuantityError, TypeError):
            pass  # the decoder reported it
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(not_supported(f"{path}.volumeMode", mode, VOLUME_MODES))
    cls = spec.get("storageClassName")
    if isinstance(cls, str) and cls:
        errs.extend(invalid(f"{path}.storageClassName", cls, m) for m in is_dns1123_subdomain(cls))
    return errs


class PersistentVolumeStrategy(Strategy):
    """core/v1 PersistentVolume (pkg/registry/core/persistentvolume/strategy.go and the v1
    defaults): reclaim policy Retain and volumeMode Filesystem by default; a new volume is
    Pending since its creation (`status.lastPhaseTransitionTime`, GA in 1.31); a status write
    that changes the phase without changing that time gets the time of the write (the wall
    clock: strategies have no clock, so components that run on another clock write it
    themselves, as the PV controller does)."""

    kind = "PersistentVolume"
    has_status = True
    return_deleted_object = True

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            if spec.get("persistentVolumeReclaimPolicy") is None:
                spec["persistentVolumeReclaimPolicy"] = "Retain"
            if spec.get("volumeMode") is None:
                spec["volumeMode"] = "Filesystem"
            default_persistent_volume_source(spec)

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        name = as_dict(obj.get("metadata")).get("name")
        return validate_persistent_volume_spec(as_dict(obj.get("spec")), name if isinstance(name, str) else "")

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        """ValidatePersistentVolumeUpdate: the source and volumeMode are immutable (upstream's
        message then carries a go-cmp diff of the two sources, which is not reproduced)."""
        errs: list[JsonDict] = []
        new_spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
        new_src, old_src = _pv_source(new_spec), _pv_source(old_spec)
        new_csi, old_csi = new_src.get("csi"), old_src.get("csi")
        if isinstance(new_csi, dict) and isinstance(old_csi, dict) and old_csi.get("controllerExpandSecretRef") is None:
            new_src["csi"] = {k: v for k, v in new_csi.items() if k != "controllerExpandSecretRef"}
        if new_src != old_src:
            errs.append(forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation"))
        if new_spec.get("volumeMode") != old_spec.get("volumeMode"):
            errs.append(invalid("volumeMode", new_spec.get("volumeMode"), "field is immutable"))
        return errs

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        # the request core stamps creationTimestamp just before this, from its clock
        stamp = as_dict(obj.get("metadata")).get("creationTimestamp")
        obj["status"] = {"phase": "Pending",
                         "lastPhaseTransitionTime": stamp if isinstance(stamp, str) and stamp else _now()}

    def prepare_for_status_update(self, new: JsonDict, old: JsonDict) -> None:
        super().prepare_for_status_update(new, old)
        new_status, old_status = new.get("status"), as_dict(old.get("status"))
        if not isinstance(new_status, dict):
            return
        changed = new_status.get("phase") != old_status.get("phase")
        stamp = new_status.get("lastPhaseTransitionTime")
        if not changed and stamp is None and "lastPhaseTransitionTime" in old_status:
            new_status["lastPhaseTransitionTime"] = old_status["lastPhaseTransitionTime"]
        elif changed and (stamp is None or stamp == old_status.get("lastPhaseTransitionTime")):
            new_status["lastPhaseTransitionTime"] = _now()

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        return get_warnings_for_persistent_volume(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        return get_warnings_for_persistent_volume(new)


def _now() -> str:
    return rfc3339(datetime.now(UTC))


_PV_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_PV_RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
_PV_VOLUME_MODES = ("Block", "Filesystem")
# PersistentVolumeSpec's fields outside its inlined PersistentVolumeSource
_PV_SPEC_FIELDS = frozenset({"capacity", "accessModes", "claimRef", "persistentVolumeReclaimPolicy",
                             "storageClassName", "mountOptions", "volumeMode", "nodeAffinity",
                             "volumeAttributesClassName"})


def _pv_source(spec: JsonDict) -> JsonDict:
    return {k: v for k, v in spec.items() if k not in _PV_SPEC_FIELDS}


def validate_persistent_volume_spec(spec: JsonDict, pv_name: str) -> list[JsonDict]:
    """ValidatePersistentVolumeSpec for a PersistentVolume (not an inline spec; the
    VolumeAttributesClass gate off, as v1.33 ships it): access modes, a positive `storage`
    capacity and nothing else, the reclaim policy, exactly one valid source, the class name
    and the volume mode."""
    errs: list[JsonDict] = []
    modes = as_list(spec.get("accessModes"))
    if not modes:
        errs.append(required("spec.accessModes"))
    rwop = other = False
    for mode in modes:
        if mode not in _PV_ACCESS_MODES:
            errs.append(not_supported("spec.accessModes", mode, _PV_ACCESS_MODES))
        elif mode == "ReadWriteOncePod":
            rwop = True
        else:
            other = True
    if rwop and other:
        errs.append(forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
    capacity = as_dict(spec.get("capacity"))
    if not capacity:
        errs.append(required("spec.capacity"))
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(not_supported("spec.capacity", capacity, ("storage",)))
    for resource, qty in capacity.items():
        path = f"spec.capacity[{resource}]"
        try:
            value = parse_quantity(qty)
        except (QuantityError, TypeError):
            errs.append(invalid(path, qty, "must be a valid quantity"))
            continue
        if value <= 0:
            errs.append(invalid(path, qty, "must be greater than zero"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy and policy not in _PV_RECLAIM_POLICIES:
        errs.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, _PV_RECLAIM_POLICIES))
    affinity = spec.get("nodeAffinity")
    specified = isinstance(affinity, dict) and affinity.get("required") is not None
    errs.extend(validate_persistent_volume_source(spec, "spec", pv_name=pv_name, node_affinity_specified=specified))
    host_path = spec.get("hostPath")
    if (isinstance(host_path, dict) and posixpath.normpath(str(host_path.get("path") or "")) == "/"
            and policy == "Recycle"):
        errs.append(forbidden("spec.persistentVolumeReclaimPolicy", "may not be 'recycle' for a hostPath mount of '/'"))
    cls = spec.get("storageClassName")
    if isinstance(cls, str) and cls:
        errs.extend(invalid("spec.storageClassName", cls, m) for m in is_dns1123_subdomain(cls))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _PV_VOLUME_MODES:
        errs.append(not_supported("spec.volumeMode", mode, _PV_VOLUME_MODES))
    return errs


class PersistentVolumeClaimStrategy(Strategy):
    """core/v1 PersistentVolumeClaim: volumeMode defaults to Filesystem and a new claim reads as
    phase Pending (upstream's defaulting applied when the stored claim is read); the spec is
    validated, and after creation only `volumeName` (once, while empty), a bound claim's storage
    request (not below status.capacity when shrinking) and `volumeAttributesClassName` change."""

    kind = "PersistentVolumeClaim"
    has_status = True
    return_deleted_object = True

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict) and spec.get("volumeMode") is None:
            spec["volumeMode"] = "Filesystem"

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj["status"] = {"phase": "Pending"}

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        return validate_claim_spec(as_dict(obj.get("spec")))

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        new_spec, old_spec = dict(as_dict(new.get("spec"))), dict(as_dict(old.get("spec")))
        errs: list[JsonDict] = []
        if not old_spec.get("volumeName"):  # volumeName may be set once
            old_spec.pop("volumeName", None)
            if "volumeName" in new_spec:
                old_spec["volumeName"] = new_spec["volumeName"]
        old_class, new_class = old_spec.get("storageClassName"), new_spec.get("storageClassName")
        if old_class is None and new_class:
            beta = as_dict(as_dict(old.get("metadata")).get("annotations")).get(
                "volume.beta.kubernetes.io/storage-class")
            if beta in (None, new_class):  # the class set from nil / from the beta annotation
                old_spec["storageClassName"] = new_class
        bound = as_dict(new.get("status")).get("phase") == "Bound"
        for spec in (new_spec, old_spec):
            spec.pop("volumeAttributesClassName", None)
            if bound:
                res = dict(as_dict(spec.get("resources")))
                res["requests"] = {k: v for k, v in as_dict(res.get("requests")).items() if k != "storage"}
                spec["resources"] = res
        if new_spec != old_spec:
            errs.append(forbidden("spec", _CLAIM_IMMUTABLE))
        new_size, old_size = _storage_of(as_dict(new.get("spec"))), _storage_of(as_dict(old.get("spec")))
        capacity = as_dict(as_dict(old.get("status")).get("capacity")).get("storage")
        try:
            if new_size is not None and old_size is not None and parse_quantity(new_size) < parse_quantity(old_size):
                if capacity is None or parse_quantity(new_size) <= parse_quantity(capacity):
                    errs.append(forbidden("spec.resources.requests.storage", "field can not be less than "
                                                                              "status.capacity"))
        except (QuantityError, TypeError):
            pass
        return errs

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        return get_warnings_for_persistent_volume_claim(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        return get_warnings_for_persistent_volume_claim(new)
