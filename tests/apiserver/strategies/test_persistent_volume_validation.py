"""PersistentVolume validation and defaulting (ValidatePersistentVolume / ...Update and the v1
source defaults, kubernetes v1.33 pkg/apis/core/validation), through the real `ApiCore`
(tests/apiserver/conftest.py): what `kubectl create -f pv.yaml` is refused for, and what a
valid PV is stored as."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.core import ApiCore
from minik3s.api.errors import InvalidError


def _pv(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                            "hostPath": {"path": "/data"}}
    base.update(spec)
    return {"metadata": {"name": "pv1"}, "spec": {k: v for k, v in base.items() if v is not None}}


@pytest.mark.parametrize(("spec", "causes"), [
    pytest.param({"accessModes": None}, [("FieldValueRequired", "spec.accessModes")], id="no-access-modes"),
    pytest.param({"accessModes": ["ReadWriteOncePod", "ReadOnlyMany"]},
                 [("FieldValueForbidden", "spec.accessModes")], id="rwop-with-others"),
    pytest.param({"accessModes": ["Sometimes"]}, [("FieldValueNotSupported", "spec.accessModes")],
                 id="unknown-access-mode"),
    pytest.param({"capacity": None}, [("FieldValueRequired", "spec.capacity"),
                                      ("FieldValueNotSupported", "spec.capacity")], id="no-capacity"),
    pytest.param({"capacity": {"storage": "1Gi", "cpu": "1"}}, [("FieldValueNotSupported", "spec.capacity")],
                 id="capacity-beyond-storage"),
    pytest.param({"capacity": {"storage": "0"}}, [("FieldValueInvalid", "spec.capacity[storage]")],
                 id="zero-capacity"),
    pytest.param({"persistentVolumeReclaimPolicy": "Keep"},
                 [("FieldValueNotSupported", "spec.persistentVolumeReclaimPolicy")], id="unknown-reclaim-policy"),
    pytest.param({"hostPath": None}, [("FieldValueRequired", "spec")], id="no-source"),
    pytest.param({"nfs": {"server": "nfs.example.com", "path": "/exports"}},
                 [("FieldValueForbidden", "spec.nfs")], id="two-sources"),
    pytest.param({"nfs": None, "hostPath": {"path": "/"}, "persistentVolumeReclaimPolicy": "Recycle"},
                 [("FieldValueForbidden", "spec.persistentVolumeReclaimPolicy")], id="recycle-hostpath-root"),
    pytest.param({"hostPath": None, "local": {"path": "/mnt/disk"}},
                 [("FieldValueRequired", "spec.nodeAffinity")], id="local-without-node-affinity"),
    pytest.param({"hostPath": None, "nfs": {"path": "relative"}},
                 [("FieldValueRequired", "spec.nfs.server"), ("FieldValueInvalid", "spec.nfs.path")],
                 id="nfs-source-validated"),
    pytest.param({"storageClassName": "Fast_Disks"}, [("FieldValueInvalid", "spec.storageClassName")],
                 id="bad-class-name"),
    pytest.param({"volumeMode": "Raw"}, [("FieldValueNotSupported", "spec.volumeMode")], id="bad-volume-mode"),
])
async def test_an_invalid_persistent_volume_is_refused(core: ApiCore, spec: dict[str, Any],
                                                       causes: list[tuple[str, str]]) -> None:
    pvs = core.registry.get("", "v1", "persistentvolumes")
    assert pvs is not None
    with pytest.raises(InvalidError) as e:
        await core.create(pvs, None, _pv(**spec))
    assert [(c["reason"], c["field"]) for c in e.value.details["causes"]] == causes


async def test_a_valid_persistent_volume_is_defaulted_and_its_source_is_immutable(core: ApiCore) -> None:
    pvs = core.registry.get("", "v1", "persistentvolumes")
    assert pvs is not None
    out = await core.create(pvs, None, _pv(hostPath=None, iscsi={
        "targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:storage", "lun": 0}))
    assert out["spec"]["iscsi"]["iscsiInterface"] == "default"
    assert (out["spec"]["persistentVolumeReclaimPolicy"], out["spec"]["volumeMode"]) == ("Retain", "Filesystem")
    changed = dict(out, spec={**out["spec"], "iscsi": {**out["spec"]["iscsi"], "lun": 1}})
    with pytest.raises(InvalidError) as e:
        await core.update(pvs, None, "pv1", changed)
    assert [(c["reason"], c["field"]) for c in e.value.details["causes"]] == [
        ("FieldValueForbidden", "spec.persistentvolumesource")]
    grown = dict(out, spec={**out["spec"], "capacity": {"storage": "2Gi"}})
    assert (await core.update(pvs, None, "pv1", grown))["spec"]["capacity"] == {"storage": "2Gi"}
