"""PersistentVolume / PersistentVolumeClaim matching (layer L2; upstream
component-helpers/storage/volume/pv_helpers.go and helpers.go, and the PV controller's
access-mode index, pkg/controller/volume/persistentvolume/index.go).

Used by the PV controller (`persistentvolume-binder`) to bind claims to volumes and by the
simulated local-path provisioner; written here, once, so the scheduler's VolumeBinding plugin
can use the same matching with a node (the scheduler path).

Matching (FindMatchingVolume): a volume pre-bound to the claim (claimRef naming it, with its uid
or none) wins when big enough; volumes pre-bound to other claims never match; otherwise the
smallest Available volume with capacity >= the request, the same volumeMode, the same class
("" matches only volumes without a class), labels matching the claim's selector and (scheduler
path) node affinity matching the node. The controller searches the access-mode groups that
contain every mode the claim asks for, fewest modes first (index.go findByClaim), so a claim for
RWO takes an RWO volume before an RWO+RWX one even when the latter is smaller.

Example: claim 5Gi RWO class "" and volumes a (10Gi RWO), b (6Gi RWO,RWX), c (8Gi RWO, class
fast): c has another class, the RWO group is searched first, so `a` is chosen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from minik3s.api.helpers.node_affinity import NodeSelector
from minik3s.api.quantity import QuantityError, parse_quantity
from minik3s.api.selectors import label_selector_from_dict
from minik3s.api.types import JsonDict

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
ANN_MIGRATED_TO = "pv.kubernetes.io/migrated-to"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")

# the order GetAccessModesAsString writes a set in (and hence the index's group keys)
_MODE_ORDER = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")


def _meta(obj: JsonDict) -> JsonDict:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def _spec(obj: JsonDict) -> JsonDict:
    s = obj.get("spec")
    return s if isinstance(s, dict) else {}


def annotations_of(obj: JsonDict) -> Mapping[str, str]:
    a = _meta(obj).get("annotations")
    return a if isinstance(a, dict) else {}


def claim_key(claim: JsonDict) -> str:
    m = _meta(claim)
    return f"{m.get('namespace')}/{m.get('name')}"


def claim_class(claim: JsonDict) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation wins over spec.storageClassName; ""
    when neither is set."""
    ann = annotations_of(claim)
    if ANN_BETA_STORAGE_CLASS in ann:
        return str(ann[ANN_BETA_STORAGE_CLASS])
    return str(_spec(claim).get("storageClassName") or "")


def claim_has_class(claim: JsonDict) -> bool:
    """PersistentVolumeClaimHasClass: a class was asked for (even "" counts)."""
    return ANN_BETA_STORAGE_CLASS in annotations_of(claim) or _spec(claim).get("storageClassName") is not None


def volume_class(volume: JsonDict) -> str:
    """GetPersistentVolumeClass: the beta annotation, else spec.storageClassName."""
    ann = annotations_of(volume)
    if ANN_BETA_STORAGE_CLASS in ann:
        return str(ann[ANN_BETA_STORAGE_CLASS])
    return str(_spec(volume).get("storageClassName") or "")


def storage_of(d: Mapping[str, Any] | None) -> Fraction:
    """The `storage` quantity of a resource list (0 when absent or malformed)."""
    v = (d or {}).get("storage")
    if v is None:
        return Fraction(0)
    try:
        return parse_quantity(v)
    except (QuantityError, TypeError, ValueError):
        return Fraction(0)


def requested_storage(claim: JsonDict) -> Fraction:
    return storage_of((_spec(claim).get("resources") or {}).get("requests"))


def volume_capacity(volume: JsonDict) -> Fraction:
    return storage_of(_spec(volume).get("capacity"))


def volume_mode_mismatch(claim: JsonDict, volume: JsonDict) -> bool:
    """CheckVolumeModeMismatches (an unset mode reads as Filesystem on both sides)."""
    return (_spec(claim).get("volumeMode") or "Filesystem") != (_spec(volume).get("volumeMode") or "Filesystem")


def access_modes_satisfied(claim: JsonDict, volume: JsonDict) -> bool:
    """CheckAccessModes: the volume offers every mode the claim asks for."""
    offered = set(_spec(volume).get("accessModes") or ())
    return all(m in offered for m in _spec(claim).get("accessModes") or ())


def is_volume_bound_to_claim(volume: JsonDict, claim: JsonDict) -> bool:
    """IsVolumeBoundToClaim: claimRef names the claim (namespace and name), and its uid, when
    set, is the claim's."""
    ref = _spec(volume).get("claimRef")
    if not isinstance(ref, dict):
        return False
    m = _meta(claim)
    if ref.get("name") != m.get("name") or ref.get("namespace") != m.get("namespace"):
        return False
    return not ref.get("uid") or ref.get("uid") == m.get("uid")


def volume_node_affinity_matches(volume: JsonDict, node_labels: Mapping[str, str], node_name: str = "") -> bool:
    """CheckNodeAffinity: a volume without required node affinity fits every node."""
    required = (_spec(volume).get("nodeAffinity") or {}).get("required")
    if not required:
        return True
    return NodeSelector(required).match_labels(node_labels, node_name)


def find_matching_volume(claim: JsonDict, volumes: Iterable[JsonDict], *, node: JsonDict | None = None,
                         excluded: Mapping[str, Any] | None = None, delay_binding: bool = False) -> JsonDict | None:
    """FindMatchingVolume over one list of volumes (see the module docstring). `delay_binding`
    (PV controller path, WaitForFirstConsumer class): only a pre-bound volume may match;
    `node` (scheduler path): the volume's node affinity must match the node, and the access
    modes are checked here. Raises ValueError on a malformed claim selector."""
    requested = requested_storage(claim)
    requested_class = claim_class(claim)
    sel_spec = _spec(claim).get("selector")
    selector = label_selector_from_dict(sel_spec) if isinstance(sel_spec, dict) else None
    node_labels: Mapping[str, str] = (_meta(node).get("labels") or {}) if node is not None else {}
    node_name = str(_meta(node).get("name") or "") if node is not None else ""
    best: JsonDict | None = None
    best_qty = Fraction(0)
    for volume in volumes:
        vm = _meta(volume)
        if excluded and vm.get("name") in excluded:
            continue
        bound_here = is_volume_bound_to_claim(volume, claim)
        if _spec(volume).get("claimRef") is not None and not bound_here:
            continue
        qty = volume_capacity(volume)
        if qty < requested:
            continue
        if volume_mode_mismatch(claim, volume):
            continue
        if vm.get("deletionTimestamp"):
            continue
        affinity_ok = node is None or volume_node_affinity_matches(volume, node_labels, node_name)
        if bound_here:
            return volume if affinity_ok else None
        if node is None and delay_binding:
            continue  # the scheduler binds unbound volumes of delayed claims
        if (volume.get("status") or {}).get("phase") != "Available":
            continue
        if selector is not None and not selector.matches(vm.get("labels") or {}):
            continue
        if volume_class(volume) != requested_class:
            continue
        if not affinity_ok:
            continue
        if node is not None and not access_modes_satisfied(claim, volume):
            continue
        if best is None or best_qty > qty:
            best, best_qty = volume, qty
    return best


def access_mode_groups(volumes: Iterable[JsonDict]) -> dict[tuple[str, ...], list[JsonDict]]:
    """The PV controller's access-mode index: volumes grouped by their set of modes."""
    out: dict[tuple[str, ...], list[JsonDict]] = {}
    for v in volumes:
        modes = set(_spec(v).get("accessModes") or ())
        key = tuple(m for m in _MODE_ORDER if m in modes) + tuple(sorted(modes - set(_MODE_ORDER)))
        out.setdefault(key, []).append(v)
    return out


def find_best_match_for_claim(claim: JsonDict, volumes: Iterable[JsonDict], *,
                              delay_binding: bool = False) -> JsonDict | None:
    """The PV controller's findBestMatchForClaim: `find_matching_volume` over each access-mode
    group holding every mode the claim asks for, groups with fewer modes first; the first
    group with a match wins."""
    wanted = set(_spec(claim).get("accessModes") or ())
    groups = [(k, vs) for k, vs in access_mode_groups(volumes).items() if wanted <= set(k)]
    groups.sort(key=lambda kv: len(kv[0]))  # stable: equal sizes keep their first-seen order
    for _, vs in groups:
        match = find_matching_volume(claim, vs, delay_binding=delay_binding)
        if match is not None:
            return match
    return None


def is_default_class(sc: JsonDict) -> bool:
    """The class is annotated is-default-class "true" (GA or beta annotation)."""
    ann = annotations_of(sc)
    return any(ann.get(a) == "true" for a in DEFAULT_CLASS_ANNOTATIONS)


def default_storage_class(classes: Sequence[JsonDict]) -> JsonDict | None:
    """GetDefaultClass: among the classes annotated is-default-class "true", the newest (by
    creationTimestamp, ties by name ascending); None when there is none. The DefaultStorageClass
    admission plugin, the PV controller and the class table all ask this."""
    defaults = [c for c in classes if is_default_class(c)]
    if not defaults:
        return None
    by_name = sorted(defaults, key=lambda c: str(_meta(c).get("name") or ""))
    return sorted(by_name, key=lambda c: str(_meta(c).get("creationTimestamp") or ""), reverse=True)[0]


def claim_reference(claim: JsonDict) -> JsonDict:
    """reference.GetReference of a claim, as a volume's claimRef records it."""
    m = _meta(claim)
    ref: JsonDict = {"kind": "PersistentVolumeClaim", "namespace": m.get("namespace"), "name": m.get("name"),
                     "uid": m.get("uid"), "apiVersion": "v1", "resourceVersion": m.get("resourceVersion")}
    return {k: v for k, v in ref.items() if v}


def ephemeral_claim_name(pod: Mapping[str, Any], volume: Mapping[str, Any]) -> str:
    """The claim of a generic ephemeral volume is named `<pod>-<volume>`."""
    pmeta = pod.get("metadata")
    return f"{(pmeta.get('name') if isinstance(pmeta, dict) else '') or ''}-{volume.get('name') or ''}"


def claims_of_pod(pod: JsonDict) -> list[str]:
    """The claim names a pod references: its persistentVolumeClaim volumes and the claims of its
    generic ephemeral volumes (`<pod>-<volume>`), as upstream's pod-to-PVC index."""
    out: list[str] = []
    for v in _spec(pod).get("volumes") or ():
        if not isinstance(v, dict):
            continue
        name = (v.get("persistentVolumeClaim") or {}).get("claimName")
        if name:
            out.append(str(name))
        elif isinstance(v.get("ephemeral"), dict):
            out.append(ephemeral_claim_name(pod, v))
    return out


__all__ = [
    "ANN_BETA_STORAGE_CLASS", "ANN_BETA_STORAGE_PROVISIONER", "ANN_BIND_COMPLETED", "ANN_BOUND_BY_CONTROLLER",
    "ANN_DYNAMICALLY_PROVISIONED", "ANN_MIGRATED_TO", "ANN_SELECTED_NODE", "ANN_STORAGE_PROVISIONER",
    "DEFAULT_CLASS_ANNOTATIONS", "NOT_SUPPORTED_PROVISIONER", "access_mode_groups", "access_modes_satisfied",
    "annotations_of", "claim_class", "claim_has_class", "claim_key", "claim_reference", "claims_of_pod",
    "default_storage_class", "ephemeral_claim_name", "find_best_match_for_claim", "find_matching_volume", "is_volume_bound_to_claim",
    "requested_storage", "storage_of", "volume_capacity", "volume_class", "volume_mode_mismatch",
    "volume_node_affinity_matches",
]
