"""core/v1 PersistentVolumeClaim on the real in-process API: defaults (volumeMode Filesystem,
phase Pending), ValidatePersistentVolumeClaim's spec rules with upstream's field paths, and the
update rules (spec immutable but for volumeName once and a bound claim's storage request)."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.api.errors import InvalidError
from minik3s.api.resources import PERSISTENTVOLUMECLAIMS as PVCS
from minik3s.api.types import JsonDict


def claim(name: str = "data", **spec: Any) -> JsonDict:
    body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": body}


async def test_a_new_claim_is_pending_with_the_default_volume_mode(real_api: Any) -> None:
    body = claim()
    body["status"] = {"phase": "Bound"}  # a client's status is not taken on create
    made = await real_api._client.create(PVCS, body)
    assert made["spec"]["volumeMode"] == "Filesystem"
    assert made["status"] == {"phase": "Pending"}


@pytest.mark.parametrize(("spec", "messages"), [
    ({"accessModes": []}, ["spec.accessModes: Required value: at least 1 access mode is required"]),
    ({"accessModes": ["ReadWriteSometimes"]}, ['spec.accessModes: Unsupported value: "ReadWriteSometimes": supported '
                                               'values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", '
                                               '"ReadWriteOncePod"']),
    ({"accessModes": ["ReadWriteOncePod", "ReadOnlyMany"]},
     ["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"]),
    ({"resources": {}}, ["spec.resources[storage]: Required value"]),
    ({"resources": {"requests": {"storage": "0"}}},
     ['spec.resources[storage]: Invalid value: "0": must be greater than zero']),
    ({"volumeMode": "Raw"}, ['spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"']),
])
async def test_invalid_claims_are_refused(real_api: Any, spec: JsonDict, messages: list[str]) -> None:
    with pytest.raises(InvalidError) as e:
        await real_api._client.create(PVCS, claim(**spec))
    assert [f"{c['field']}: {c['message']}" for c in e.value.causes] == messages


async def test_the_spec_is_immutable_but_for_volume_name_once_and_a_bound_resize(real_api: Any) -> None:
    made = await real_api._client.create(PVCS, claim())
    made["metadata"]["labels"] = {"tier": "db"}  # metadata may change
    made = await real_api._client.update(PVCS, made)
    made["spec"]["accessModes"] = ["ReadWriteMany"]
    with pytest.raises(InvalidError, match="spec: Forbidden: spec is immutable after creation except "
                                           "resources.requests and volumeAttributesClassName for bound claims"):
        await real_api._client.update(PVCS, made)
    made["spec"]["accessModes"] = ["ReadWriteOnce"]
    made["spec"]["resources"]["requests"]["storage"] = "2Gi"  # an unbound claim's resize
    with pytest.raises(InvalidError, match="spec is immutable"):
        await real_api._client.update(PVCS, made)
    made["spec"]["resources"]["requests"]["storage"] = "1Gi"
    made["spec"]["volumeName"] = "pv-1"  # the binder sets the volume once
    made = await real_api._client.update(PVCS, made)
    made["spec"]["volumeName"] = "pv-2"
    with pytest.raises(InvalidError, match="spec is immutable"):
        await real_api._client.update(PVCS, made)
    made["spec"]["volumeName"] = "pv-1"
    made["status"] = {"phase": "Bound", "capacity": {"storage": "1Gi"}}
    made = await real_api._client.update_status(PVCS, made)
    made["spec"]["resources"]["requests"]["storage"] = "2Gi"  # a bound claim grows
    made = await real_api._client.update(PVCS, made)
    assert made["spec"]["resources"]["requests"]["storage"] == "2Gi"
    made["spec"]["resources"]["requests"]["storage"] = "512Mi"  # below what the volume has
    with pytest.raises(InvalidError, match=r"spec.resources.requests.storage: Forbidden: field can not be less "
                                           r"than status.capacity"):
        await real_api._client.update(PVCS, made)
