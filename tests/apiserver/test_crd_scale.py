"""A custom resource's scale subresource reads and writes the paths its CRD names
(subresources.scale specReplicasPath / statusReplicasPath / labelSelectorPath), as
apiextensions-apiserver's ScaleREST: the Scale shows the values there (status replicas 0 and
selector "" when absent), a scale write sets the value at specReplicasPath, and a GET of a
resource without a value there is upstream's 500."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.core import ApiCore
from minik3s.api import errors
from minik3s.api.options import WriteOptions

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "pools.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "pools", "singular": "pool", "kind": "Pool"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                           "subresources": {"status": {}, "scale": {
                               "specReplicasPath": ".spec.size", "statusReplicasPath": ".status.running",
                               "labelSelectorPath": ".status.pick"}}}]},
}


async def _pool(core: ApiCore, spec: dict[str, Any], status: dict[str, Any] | None = None) -> Any:
    crds = core.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    assert crds is not None
    await core.create(crds, None, copy.deepcopy(CRD))
    info = core.registry.get("example.com", "v1", "pools")
    assert info is not None
    await core.create(info, "default", {"apiVersion": "example.com/v1", "kind": "Pool",
                                        "metadata": {"name": "p"}, "spec": spec})
    if status is not None:
        cur = core.get(info, "default", "p")
        await core.update(info, "default", "p", {**cur, "status": status}, WriteOptions(), subresource="status")
    return info


async def test_the_scale_reads_and_writes_the_crds_paths(core: ApiCore) -> None:
    info = await _pool(core, {"size": 3, "replicas": 99}, {"running": 2, "pick": "app=pool"})
    scale = core.get_scale(info, "default", "p")
    assert scale["spec"] == {"replicas": 3}
    assert scale["status"] == {"replicas": 2, "selector": "app=pool"}
    out = await core.patch(info, "default", "p", "merge", {"spec": {"replicas": 5}}, WriteOptions(field_manager="k"),
                           subresource="scale")
    assert out["spec"]["replicas"] == 5
    obj = core.get(info, "default", "p")
    assert obj["spec"] == {"size": 5, "replicas": 99}  # only the named path changed


async def test_absent_values(core: ApiCore) -> None:
    info = await _pool(core, {"other": 1})
    with pytest.raises(errors.InternalError) as e:
        core.get_scale(info, "default", "p")
    assert e.value.message == 'Internal error occurred: the spec replicas field ".spec.size" does not exist'
    await core.update_scale(info, "default", "p", {"apiVersion": "autoscaling/v1", "kind": "Scale",
                                                   "metadata": {"name": "p"}, "spec": {"replicas": 2}},
                            WriteOptions(field_manager="k"))
    scale = core.get_scale(info, "default", "p")
    assert scale["spec"] == {"replicas": 2} and scale["status"] == {"replicas": 0, "selector": ""}
