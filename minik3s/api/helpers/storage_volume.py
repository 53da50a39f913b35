"""Storage rules the scheduler's VolumeBinding needs beyond volume matching (layer L2; upstream
component-helpers storage/volume GetBindVolumeToClaim and IsDelayBindingMode, storage/ephemeral,
v1helper.MatchTopologySelectorTerms).

Volume matching itself (FindMatchingVolume, classes, claimRef) lives in `persistent_volumes`,
shared with the PV controller; this module adds the scheduler-path forms (a node given by its
labels only, as upstream's CheckNodeAffinity builds it), binding a volume to a claim, the
WaitForFirstConsumer test, StorageClass allowedTopologies, and generic ephemeral volumes' claims.

Example: a pod "web-0" with volumes [pvc "data", ephemeral "scratch", projected token] uses the
claims ("data", not ephemeral), ("web-0-scratch", ephemeral); "web-0-scratch" must be controlled
by the pod (an ownerReference with controller true and the pod's uid).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from minik3s.api.helpers.persistent_volumes import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    claim_class,
    claim_reference,
    ephemeral_claim_name,
    find_matching_volume,
    is_volume_bound_to_claim,
    requested_storage,
    volume_class,
    volume_node_affinity_matches,
)
from minik3s.api.types import JsonDict

VOLUME_BINDING_WAIT = "WaitForFirstConsumer"

__all__ = [
    "ANN_BIND_COMPLETED", "ANN_SELECTED_NODE", "NOT_SUPPORTED_PROVISIONER", "VOLUME_BINDING_WAIT",
    "bind_volume_to_claim", "check_node_affinity", "claim_class", "ephemeral_claim_error",
    "ephemeral_claim_name", "find_matching_volume_on_node", "is_delay_binding_mode",
    "match_topology_selector_terms", "requested_storage", "volume_class",
]


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def check_node_affinity(pv: JsonDict, node_labels: Mapping[str, str]) -> bool:
    """Whether the volume's required node affinity admits a node with these labels. Upstream
    CheckNodeAffinity matches a node object carrying only the labels, so a matchFields term on
    metadata.name never matches; hence no node name here."""
    return volume_node_affinity_matches(pv, node_labels)


def find_matching_volume_on_node(claim: JsonDict, volumes: Iterable[JsonDict], node_labels: Mapping[str, str],
                                 excluded: Mapping[str, Any]) -> JsonDict | None:
    """FindMatchingVolume on the scheduler path (node set, delayBinding true) for a node with
    these labels (only labels, as `check_node_affinity`)."""
    return find_matching_volume(claim, volumes, node={"metadata": {"labels": dict(node_labels)}},
                                excluded=excluded, delay_binding=True)


def bind_volume_to_claim(pv: JsonDict, claim: JsonDict) -> tuple[JsonDict, bool]:
    """(a copy of `pv` bound to `claim`, whether anything changed) (upstream GetBindVolumeToClaim):
    claimRef set to the claim when it does not name it (name, namespace and uid), and the
    bound-by-controller annotation added when the volume was not already pre-bound to it."""
    set_bound_by_controller = not is_volume_bound_to_claim(pv, claim)
    out: JsonDict = dict(pv)
    meta = dict(_meta(pv))
    spec = dict(_spec(pv))
    out["metadata"], out["spec"] = meta, spec
    dirty = False
    ref = spec.get("claimRef") or {}
    cmeta = _meta(claim)
    if not ref or ref.get("name") != cmeta.get("name") or ref.get("namespace") != cmeta.get("namespace") \
            or (ref.get("uid") or "") != (cmeta.get("uid") or ""):
        spec["claimRef"] = claim_reference(claim)
        dirty = True
    ann = meta.get("annotations") or {}
    if set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in ann:
        meta["annotations"] = {**ann, ANN_BOUND_BY_CONTROLLER: "yes"}
        dirty = True
    return out, dirty


def is_delay_binding_mode(claim: JsonDict, get_class: Callable[[str], Mapping[str, Any] | None]) -> bool:
    """Whether the claim's class binds WaitForFirstConsumer (upstream IsDelayBindingMode: no
    class, or a class that does not exist, is Immediate). Raises ValueError for a class without
    volumeBindingMode (the API defaults it, so only hand-made objects lack it)."""
    name = claim_class(claim)
    if not name:
        return False
    sc = get_class(name)
    if sc is None:
        return False
    mode = sc.get("volumeBindingMode")
    if mode is None:
        raise ValueError(f'VolumeBindingMode not set for StorageClass "{name}"')
    return bool(mode == VOLUME_BINDING_WAIT)


def match_topology_selector_terms(terms: Iterable[Mapping[str, Any]] | None, labels: Mapping[str, str]) -> bool:
    """A StorageClass's allowedTopologies against node labels (upstream MatchTopologySelectorTerms):
    no terms admit every node; terms are ORed, a term's expressions ANDed, each expression needs
    the label present with one of its values."""
    terms = list(terms or ())
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchLabelExpressions") or ()
        if all(e.get("key") in labels and labels[e.get("key")] in (e.get("values") or ()) for e in exprs):
            return True
    return False


# ---- generic ephemeral volumes (upstream component-helpers storage/ephemeral) ----------------

def ephemeral_claim_error(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> str:
    """"" when `claim` was created for `pod` (same namespace, the pod its controller owner),
    else upstream VolumeIsForPod's error message."""
    pmeta, cmeta = _meta(pod), _meta(claim)
    if pmeta.get("namespace") == cmeta.get("namespace"):
        for ref in cmeta.get("ownerReferences") or ():
            if ref.get("controller") and ref.get("uid") == pmeta.get("uid"):
                return ""
    return (f"PVC {cmeta.get('namespace')}/{cmeta.get('name')} was not created for pod "
            f"{pmeta.get('namespace')}/{pmeta.get('name')} (pod is not owner)")
