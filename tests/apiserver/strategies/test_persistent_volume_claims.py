"""core/v1 PersistentVolumeClaim on the real in-process API: defaults (volumeMode Filesystem,
phase Pending), ValidatePersistentVolumeClaim's spec rules with upstream's field paths, and the
update rules (spec immutable but for volumeName once and a bound claim's storage request)."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.api.errors import ForbiddenError, InvalidError
from minik3s.api.resources import PERSISTENTVOLUMECLAIMS as PVCS
from minik3s.api.resources import STORAGECLASSES
from minik3s.api.types import JsonDict


def claim(name: str = "data", **spec: Any) -> JsonDict:
    body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": body}


def storage_class(name: str, *, expansion: bool | None = None) -> JsonDict:
    sc: JsonDict = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                    "provisioner": "example.com/disk"}
    if expansion is not None:
        sc["allowVolumeExpansion"] = expansion
    return sc


async def bound(real_api: Any, name: str, **spec: Any) -> JsonDict:
    made = await real_api._client.create(PVCS, claim(name, volumeName=f"pv-{name}", **spec))
    made["status"] = {"phase": "Bound", "capacity": {"storage": "1Gi"}}
    return dict(await real_api._client.update_status(PVCS, made))


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
    await real_api._client.create(STORAGECLASSES, storage_class("grows", expansion=True))
    made = await real_api._client.create(PVCS, claim(storageClassName="grows"))
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


NOT_RESIZABLE = ("is forbidden: only dynamically provisioned pvc can be resized and the storageclass that "
                 "provisions the pvc must support resize")


@pytest.mark.parametrize(("cls", "sc"), [
    ("", None),  # no class
    ("gone", None),  # a class that does not exist
    ("fixed", storage_class("fixed")),  # allowVolumeExpansion unset
    ("fixed", storage_class("fixed", expansion=False)),
])
async def test_persistent_volume_claim_resize_needs_a_class_that_allows_expansion(
        real_api: Any, cls: str, sc: JsonDict | None) -> None:
    if sc is not None:
        await real_api._client.create(STORAGECLASSES, sc)
    made = await bound(real_api, "data", storageClassName=cls)
    made["spec"]["resources"]["requests"]["storage"] = "2Gi"
    with pytest.raises(ForbiddenError) as e:
        await real_api._client.update(PVCS, made)
    assert e.value.message == f'persistentvolumeclaims "data" {NOT_RESIZABLE}'
    assert e.value.details == {"name": "data", "kind": "persistentvolumeclaims"}
    stored = real_api.obj(PVCS, "data", "default")
    assert stored is not None and stored["spec"]["resources"]["requests"]["storage"] == "1Gi"


async def test_persistent_volume_claim_resize_admits_growth_in_an_expandable_class(real_api: Any) -> None:
    await real_api._client.create(STORAGECLASSES, storage_class("grows", expansion=True))
    made = await bound(real_api, "data", storageClassName="grows")
    made["metadata"]["labels"] = {"size": "same"}  # no growth: not the plugin's business
    made = await real_api._client.update(PVCS, made)
    made["spec"]["resources"]["requests"]["storage"] = "3Gi"
    assert (await real_api._client.update(PVCS, made))["spec"]["resources"]["requests"]["storage"] == "3Gi"
    # a patch is an update to the plugin too; the class the claim names is what counts
    await real_api._client.patch(STORAGECLASSES, "grows", {"allowVolumeExpansion": False})
    with pytest.raises(ForbiddenError, match=NOT_RESIZABLE):
        await real_api._client.patch(PVCS, "data", {"spec": {"resources": {"requests": {"storage": "4Gi"}}}},
                                     "default")


async def test_persistent_volume_claim_resize_can_be_disabled(real_api: Any) -> None:
    real_api.core.claim_resize = False  # kube-apiserver --disable-admission-plugins PersistentVolumeClaimResize
    made = await bound(real_api, "data")
    made["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert (await real_api._client.update(PVCS, made))["spec"]["resources"]["requests"]["storage"] == "2Gi"


@pytest.mark.parametrize("disabled", [False, True])
async def test_disable_admission_plugins_reaches_the_claim_resize_plugin(tmp_path: Any, disabled: bool) -> None:
    """`minik3s server --disable-admission-plugins PersistentVolumeClaimResize`, through its config."""
    from minik3s.config import ServerConfig
    from minik3s.server import start, stop

    cfg = ServerConfig(data_dir=tmp_path / "srv", port=0, disable={"scheduler", "controllers", "kubelet", "descheduler"},
                       disable_admission_plugins={"PersistentVolumeClaimResize"} if disabled else set())
    rs = await start(cfg)
    try:
        made = await rs.client.create(PVCS, claim("data", volumeName="pv-data"), "default")
        made["status"] = {"phase": "Bound", "capacity": {"storage": "1Gi"}}
        made = await rs.client.update_status(PVCS, made)
        made["spec"]["resources"]["requests"]["storage"] = "2Gi"  # no class: not resizable
        if disabled:
            assert (await rs.client.update(PVCS, made))["spec"]["resources"]["requests"]["storage"] == "2Gi"
        else:
            with pytest.raises(ForbiddenError, match=NOT_RESIZABLE):
                await rs.client.update(PVCS, made)
    finally:
        await stop(rs)
