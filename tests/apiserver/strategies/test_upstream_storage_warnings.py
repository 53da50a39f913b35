"""Upstream's storage warning tables (kubernetes/kubernetes v1.33), ported case by case onto
`apiserver.strategies.storage`:

- pkg/api/persistentvolumeclaim/util_test.go TestWarnings (GetWarningsForPersistentVolumeClaim);
- pkg/api/persistentvolume/util_test.go TestWarnings (GetWarningsForPersistentVolume);
- pkg/api/storage/util_test.go TestStorageClassWarnings and TestCSIStorageCapacityWarnings;

compared as sets, as upstream does. Objects are the JSON dicts the API stores; an empty in-tree
volume source (`{}` in a PersistentVolume's spec) stands for upstream's zero-valued struct. The
strategies' create/update hooks are checked to report the same (for an update: the new object's
warnings, whatever changed).
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.strategies import strategy_for
from apiserver.strategies.storage import (
    get_warnings_for_csi_storage_capacity,
    get_warnings_for_persistent_volume,
    get_warnings_for_persistent_volume_claim,
    get_warnings_for_storage_class,
)
from minik3s.api.types import JsonDict

PVC_CASES: list[tuple[str, JsonDict | None, list[str]]] = [
    ("null", None, []),
    ("200Mi requests no warning",
     {"spec": {"resources": {"requests": {"storage": "200Mi"}, "limits": {"storage": "200Mi"}}}}, []),
    ("200m warning", {"spec": {"resources": {"requests": {"storage": "200m"}, "limits": {"storage": "100m"}}}},
     ['spec.resources.requests[storage]: fractional byte value "200m" is invalid, must be an integer',
      'spec.resources.limits[storage]: fractional byte value "100m" is invalid, must be an integer']),
    ("integer no warning", {"spec": {"resources": {"requests": {"storage": "200"}}}}, []),
    ("storageclass annotations warning",
     {"metadata": {"name": "foo", "annotations": {"volume.beta.kubernetes.io/storage-class": ""}}},
     ['metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" '
      "attribute instead"]),
]


@pytest.mark.parametrize(("name", "pvc", "expected"), PVC_CASES, ids=[c[0] for c in PVC_CASES])
def test_pvc_warnings(name: str, pvc: JsonDict | None, expected: list[str]) -> None:
    assert set(get_warnings_for_persistent_volume_claim(pvc)) == set(expected)
    if pvc is not None:
        s = strategy_for("", "PersistentVolumeClaim")
        assert set(s.warnings_on_create(pvc)) == set(expected)
        assert set(s.warnings_on_update(pvc, {})) == set(expected)


def _pv_source(source: str, value: Any = None) -> JsonDict:
    return {"spec": {source: value if value is not None else {}}}


PV_CASES: list[tuple[str, JsonDict | None, list[str]]] = [
    ("null", None, []),
    ("no warning", {"metadata": {"name": "foo"}, "status": {"phase": "Bound"}}, []),
    ("warning",
     {"metadata": {"name": "foo", "annotations": {"volume.beta.kubernetes.io/storage-class": "",
                                                  "volume.beta.kubernetes.io/mount-options": ""}},
      "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
          {"key": "beta.kubernetes.io/os", "operator": "Equal", "values": ["windows"]}]}]}}},
      "status": {"phase": "Bound"}},
     ['metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" '
      "attribute instead",
      'metadata.annotations[volume.beta.kubernetes.io/mount-options]: deprecated since v1.31; use "mountOptions" '
      "attribute instead",
      "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key: beta.kubernetes.io/os is deprecated "
      'since v1.14; use "kubernetes.io/os" instead']),
    ("PersistentVolumeReclaimRecycle deprecation warning", {"spec": {"persistentVolumeReclaimPolicy": "Recycle"}},
     ["spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended "
      "approach is to use dynamic provisioning."]),
    ("PV CephFS deprecation warning", _pv_source("cephfs"),
     ["spec.cephfs: deprecated in v1.28, non-functional in v1.31+"]),
    ("PV PhotonPersistentDisk deprecation warning", _pv_source("photonPersistentDisk"),
     ["spec.photonPersistentDisk: deprecated in v1.11, non-functional in v1.16+"]),
    ("PV RBD deprecation warning", _pv_source("rbd"), ["spec.rbd: deprecated in v1.28, non-functional in v1.31+"]),
    ("PV ScaleIO deprecation warning", _pv_source("scaleIO"),
     ["spec.scaleIO: deprecated in v1.16, non-functional in v1.22+"]),
    ("PV StorageOS deprecation warning", _pv_source("storageos"),
     ["spec.storageOS: deprecated in v1.22, non-functional in v1.25+"]),
    ("PV GlusterFS deprecation warning", _pv_source("glusterfs"),
     ["spec.glusterfs: deprecated in v1.25, non-functional in v1.26+"]),
]


@pytest.mark.parametrize(("name", "pv", "expected"), PV_CASES, ids=[c[0] for c in PV_CASES])
def test_pv_warnings(name: str, pv: JsonDict | None, expected: list[str]) -> None:
    assert set(get_warnings_for_persistent_volume(pv)) == set(expected)
    if pv is not None:
        s = strategy_for("", "PersistentVolume")
        assert set(s.warnings_on_create(pv)) == set(expected)
        assert set(s.warnings_on_update(pv, {})) == set(expected)


SC_CASES: list[tuple[str, JsonDict | None, list[str]]] = [
    ("null", None, []),
    ("no warning", {"metadata": {"name": "foo"}}, []),
    ("warning", {"metadata": {"name": "foo"}, "allowedTopologies": [{"matchLabelExpressions": [
        {"key": "beta.kubernetes.io/arch", "values": ["amd64"]}, {"key": "beta.kubernetes.io/os", "values": ["linux"]}]}]},
     ['allowedTopologies[0].matchLabelExpressions[0].key: deprecated since v1.14; use "kubernetes.io/arch" instead',
      'allowedTopologies[0].matchLabelExpressions[1].key: deprecated since v1.14; use "kubernetes.io/os" instead']),
]


@pytest.mark.parametrize(("name", "sc", "expected"), SC_CASES, ids=[c[0] for c in SC_CASES])
def test_storage_class_warnings(name: str, sc: JsonDict | None, expected: list[str]) -> None:
    """TestStorageClassWarnings."""
    assert set(get_warnings_for_storage_class(sc)) == set(expected)
    if sc is not None:
        s = strategy_for("storage.k8s.io", "StorageClass")
        assert set(s.warnings_on_create(sc)) == set(expected)
        assert set(s.warnings_on_update(sc, {})) == set(expected)


CSC_CASES: list[tuple[str, JsonDict | None, list[str]]] = [
    ("null", None, []),
    ("no warning", {"metadata": {"name": "foo"}}, []),
    ("MatchLabels warning", {"metadata": {"name": "foo"}, "nodeTopology": {"matchLabels": {
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux"}}},
     ['nodeTopology.matchLabels.beta.kubernetes.io/arch: deprecated since v1.14; use "kubernetes.io/arch" instead',
      'nodeTopology.matchLabels.beta.kubernetes.io/os: deprecated since v1.14; use "kubernetes.io/os" instead']),
    ("MatchExpressions warning", {"metadata": {"name": "foo"}, "nodeTopology": {"matchExpressions": [
        {"key": "beta.kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        {"key": "beta.kubernetes.io/os", "operator": "In", "values": ["linux"]}]}},
     ['nodeTopology.matchExpressions[0].key: beta.kubernetes.io/arch is deprecated since v1.14; use '
      '"kubernetes.io/arch" instead',
      'nodeTopology.matchExpressions[1].key: beta.kubernetes.io/os is deprecated since v1.14; use "kubernetes.io/os" '
      "instead"]),
]


@pytest.mark.parametrize(("name", "csc", "expected"), CSC_CASES, ids=[c[0] for c in CSC_CASES])
def test_csi_storage_capacity_warnings(name: str, csc: JsonDict | None, expected: list[str]) -> None:
    """TestCSIStorageCapacityWarnings."""
    assert set(get_warnings_for_csi_storage_capacity(csc)) == set(expected)
    if csc is not None:
        s = strategy_for("storage.k8s.io", "CSIStorageCapacity")
        assert set(s.warnings_on_create(csc)) == set(expected)
