"""The CRD life cycle hooks through the real request core: served on create, deleted through
the customresourcecleanup finalizer, purged when it leaves storage by any path."""

from __future__ import annotations

import pytest

from apiserver.core import ApiCore
from apiserver.strategies.crd_lifecycle import CLEANUP_FINALIZER
from minik3s.api import errors
from minik3s.api.options import DeleteOptions, ListOptions
from minik3s.api.resources import ResourceInfo

GROUP = "example.com"
CRD_NAME = f"gadgets.{GROUP}"


def _crds(core: ApiCore) -> ResourceInfo:
    info = core.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    assert info is not None
    return info


def _crd() -> dict:
    return {"metadata": {"name": CRD_NAME},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object",
                                                                  "x-kubernetes-preserve-unknown-fields": True}}}]}}


def _gadgets(core: ApiCore) -> ResourceInfo | None:
    return core.registry.get(GROUP, "v1", "gadgets")


async def test_stripping_every_finalizer_removes_the_crd_and_purges_held_objects(core: ApiCore) -> None:
    changes: list[int] = []
    core.crd_listeners.append(lambda: changes.append(1))
    await core.create(_crds(core), None, _crd())
    gadgets = _gadgets(core)
    assert gadgets is not None and changes
    await core.create(gadgets, "default", {"metadata": {"name": "held", "finalizers": ["example.com/keep"]}})
    await core.create(gadgets, "default", {"metadata": {"name": "free"}})

    marked, finished = await core.delete(_crds(core), None, CRD_NAME)
    assert not finished and CLEANUP_FINALIZER in marked["metadata"]["finalizers"]
    cur = core.get(_crds(core), None, CRD_NAME)
    assert {c["type"]: c["reason"] for c in cur["status"]["conditions"]}["Terminating"] == \
        "InstanceDeletionInProgress"
    assert [o["metadata"]["name"] for o in core.list(gadgets, "default", ListOptions())["items"]] == ["held"]
    with pytest.raises(errors.MethodNotAllowedError, match="terminating"):
        await core.create(gadgets, "default", {"metadata": {"name": "late"}})

    # someone strips the finalizers by hand (upstream leaves the data orphaned; here it is purged)
    await core.patch(_crds(core), None, CRD_NAME, "merge", {"metadata": {"finalizers": None}})
    with pytest.raises(errors.NotFoundError):
        core.get(_crds(core), None, CRD_NAME)
    assert _gadgets(core) is None
    assert core.store.count_after("example.com/gadgets/") == 0

    await core.create(_crds(core), None, _crd())
    again = _gadgets(core)
    assert again is not None
    assert core.list(again, None, ListOptions())["items"] == []


async def test_a_crd_without_objects_or_finalizers_is_gone_when_delete_returns(core: ApiCore) -> None:
    await core.create(_crds(core), None, _crd())
    marked, _ = await core.delete(_crds(core), None, CRD_NAME)
    assert marked["kind"] == "CustomResourceDefinition" and marked["metadata"]["deletionTimestamp"]
    with pytest.raises(errors.NotFoundError):
        core.get(_crds(core), None, CRD_NAME)
    assert _gadgets(core) is None


async def test_dry_run_delete_changes_nothing(core: ApiCore) -> None:
    await core.create(_crds(core), None, _crd())
    gadgets = _gadgets(core)
    assert gadgets is not None
    await core.create(gadgets, "default", {"metadata": {"name": "g"}})
    await core.delete(_crds(core), None, CRD_NAME, DeleteOptions(dry_run=True))
    cur = core.get(_crds(core), None, CRD_NAME)
    assert "deletionTimestamp" not in cur["metadata"]
    assert core.get(gadgets, "default", "g")["metadata"]["name"] == "g"
