"""The scale subresource tracks who owns spec.replicas, as kube-apiserver v1.33's ScaleHandler:
upstream's integration table (test/integration/apiserver/apply/scale_test.go, TestScaleAllResources
and TestScaleUpdateOnlyStatus) replayed through the real request core for every scalable
built-in kind: a merge patch of the Scale takes the field, a later apply of the parent conflicts,
an apply of the Scale itself conflicts or (forced) takes it, a PUT takes it, an apply of the same
value shares it, and a Scale write that changes only status leaves it alone. The entries a scale
write makes say `subresource: scale`, in the parent's version. Admission policies see the Scale
(UPDATE of deployments/scale), not the Deployment."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.core import ApiCore
from minik3s.api import errors
from minik3s.api.options import WriteOptions
from minik3s.api.resources import ResourceInfo


def _info(core: ApiCore, group: str, resource: str) -> ResourceInfo:
    info = core.registry.get(group, "v1", resource)
    assert info is not None
    return info


def _valid(kind: str, api_version: str) -> dict[str, Any]:
    if kind == "ReplicationController":
        selector: dict[str, Any] = {"app": "nginx"}
    else:
        selector = {"matchLabels": {"app": "nginx"}}
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "test"}, "spec": {
        "replicas": 1, "selector": selector,
        "template": {"metadata": {"labels": {"app": "nginx"}},
                     "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}}}


def _opts(manager: str, force: bool = False) -> WriteOptions:
    return WriteOptions(field_manager=manager, force=force)


def _owners(obj: dict[str, Any]) -> list[str]:
    """The managers whose entry holds spec.replicas (assertReplicasOwnership)."""
    return sorted(e["manager"] for e in obj["metadata"].get("managedFields") or []
                  if "f:replicas" in ((e.get("fieldsV1") or {}).get("f:spec") or {}))


SCALE = {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {"name": "test", "namespace": "default"}}


@pytest.mark.parametrize(("group", "resource", "kind"), [
    ("apps", "deployments", "Deployment"),
    ("apps", "statefulsets", "StatefulSet"),
    ("apps", "replicasets", "ReplicaSet"),
    ("", "replicationcontrollers", "ReplicationController"),
])
async def test_scale_all_resources(core: ApiCore, group: str, resource: str, kind: str) -> None:
    info = _info(core, group, resource)
    valid = _valid(kind, info.api_version)

    def live() -> dict[str, Any]:
        return core.get(info, "default", "test")

    await core.patch(info, "default", "test", "apply", copy.deepcopy(valid), _opts("apply_test"))
    assert live()["spec"]["replicas"] == 1 and _owners(live()) == ["apply_test"]

    # a merge patch of the Scale takes spec.replicas
    await core.patch(info, "default", "test", "merge", {"spec": {"replicas": 5}}, _opts("scale_test"),
                     subresource="scale")
    assert live()["spec"]["replicas"] == 5 and _owners(live()) == ["scale_test"]
    entry = next(e for e in live()["metadata"]["managedFields"] if e["manager"] == "scale_test")
    assert entry["subresource"] == "scale" and entry["operation"] == "Update"
    assert entry["apiVersion"] == info.api_version and entry["fieldsV1"] == {"f:spec": {"f:replicas": {}}}

    # re-applying the original conflicts; forced, the applier owns it again
    with pytest.raises(errors.ConflictError):
        await core.patch(info, "default", "test", "apply", copy.deepcopy(valid), _opts("apply_test"))
    await core.patch(info, "default", "test", "apply", copy.deepcopy(valid), _opts("apply_test", force=True))
    assert live()["spec"]["replicas"] == 1 and _owners(live()) == ["apply_test"]

    # an apply of the Scale with other replicas conflicts with the applier of the parent
    with pytest.raises(errors.ConflictError) as e:
        await core.patch(info, "default", "test", "apply", {**SCALE, "spec": {"replicas": 17}}, _opts("apply_scale"),
                         subresource="scale")
    assert "apply_test" in e.value.message
    await core.patch(info, "default", "test", "apply", {**SCALE, "spec": {"replicas": 17}},
                     _opts("apply_scale", force=True), subresource="scale")
    assert live()["spec"]["replicas"] == 17 and _owners(live()) == ["apply_scale"]

    # a PUT of the Scale takes it
    await core.update_scale(info, "default", "test", {**SCALE, "spec": {"replicas": 7}}, _opts("replace_test"))
    assert live()["spec"]["replicas"] == 7 and _owners(live()) == ["replace_test"]

    # an apply of the same value shares it
    await core.patch(info, "default", "test", "apply", {**SCALE, "spec": {"replicas": 7}}, _opts("co_owning_test"),
                     subresource="scale")
    assert live()["spec"]["replicas"] == 7 and _owners(live()) == ["co_owning_test", "replace_test"]

    # scaling again leaves one owner
    await core.patch(info, "default", "test", "merge", {"spec": {"replicas": 5}}, _opts("scale_test"),
                     subresource="scale")
    assert live()["spec"]["replicas"] == 5 and _owners(live()) == ["scale_test"]


async def test_scale_update_only_status(core: ApiCore) -> None:
    info = _info(core, "apps", "deployments")
    await core.patch(info, "default", "test", "apply", _valid("Deployment", "apps/v1"), _opts("apply_test"))
    out = await core.patch(info, "default", "test", "merge", {"status": {"replicas": 42}}, _opts("scale_test"),
                           subresource="scale")
    assert out["kind"] == "Scale" and out["spec"]["replicas"] == 1
    obj = core.get(info, "default", "test")
    assert obj["spec"]["replicas"] == 1 and _owners(obj) == ["apply_test"]


async def test_a_scale_write_bumps_the_generation_and_checks_the_scale(core: ApiCore) -> None:
    info = _info(core, "apps", "deployments")
    await core.patch(info, "default", "test", "apply", _valid("Deployment", "apps/v1"), _opts("apply_test"))
    before = core.get(info, "default", "test")
    await core.patch(info, "default", "test", "merge", {"spec": {"replicas": 3}}, _opts("kubectl"),
                     subresource="scale")
    after = core.get(info, "default", "test")
    assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(info, "default", "test", "merge", {"spec": {"replicas": -1}}, _opts("kubectl"),
                         subresource="scale")
    assert e.value.message == ('Scale.autoscaling "test" is invalid: spec.replicas: Invalid value: -1: '
                               "must be greater than or equal to 0")
    with pytest.raises(errors.ConflictError):  # a stale resourceVersion in the Scale
        await core.update_scale(info, "default", "test", {**SCALE, "metadata": {
            **SCALE["metadata"], "resourceVersion": before["metadata"]["resourceVersion"]}, "spec": {"replicas": 2}},
            _opts("kubectl"))
    with pytest.raises(errors.BadRequestError):  # an apply needs a field manager
        await core.patch(info, "default", "test", "apply", {**SCALE, "spec": {"replicas": 2}}, WriteOptions(),
                         subresource="scale")
    assert core.get(info, "default", "test")["spec"]["replicas"] == 3
    # a Scale without spec.replicas asks for 0 (an omitempty int32 in upstream's ScaleSpec)
    await core.update_scale(info, "default", "test", {**SCALE, "spec": {}}, _opts("kubectl"))
    assert core.get(info, "default", "test")["spec"]["replicas"] == 0


async def test_policies_see_the_scale_not_the_deployment(core: ApiCore) -> None:
    group = "admissionregistration.k8s.io"
    for resources, name, expression in ((["deployments/scale"], "scale-cap", "object.spec.replicas <= 5"),
                                        (["deployments"], "deploy-cap", "object.spec.replicas <= 1")):
        await core.create(_info(core, group, "validatingadmissionpolicies"), None, {
            "metadata": {"name": name}, "spec": {
                "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                        "operations": ["UPDATE"], "resources": resources}]},
                "validations": [{"expression": expression},
                                {"expression": "object.kind == 'Scale' && oldObject.kind == 'Scale'"}]}})
        await core.create(_info(core, group, "validatingadmissionpolicybindings"), None, {
            "metadata": {"name": f"{name}-binding"}, "spec": {"policyName": name, "validationActions": ["Deny"]}})
    info = _info(core, "apps", "deployments")
    await core.patch(info, "default", "test", "apply", _valid("Deployment", "apps/v1"), _opts("apply_test"))
    # 4 replicas through the Scale: the Scale policy allows it, the Deployment one is not asked
    await core.patch(info, "default", "test", "merge", {"spec": {"replicas": 4}}, _opts("kubectl"),
                     subresource="scale")
    assert core.get(info, "default", "test")["spec"]["replicas"] == 4
    with pytest.raises(errors.ApiError) as e:
        await core.patch(info, "default", "test", "merge", {"spec": {"replicas": 9}}, _opts("kubectl"),
                         subresource="scale")
    assert "ValidatingAdmissionPolicy 'scale-cap'" in e.value.message
    assert e.value.message.startswith('deployments.apps "test" is forbidden:')
    assert core.get(info, "default", "test")["spec"]["replicas"] == 4
