"""`metadata.managedFields: [{}]` through the request core: the documented way to clear field
ownership (kubernetes.io "Server-Side Apply", Clearing managedFields)."""

from __future__ import annotations

from apiserver.core import ApiCore
from minik3s.api.options import WriteOptions


async def test_merge_patch_with_an_empty_entry_clears_managed_fields(core: ApiCore) -> None:
    info = core.registry.get("", "v1", "configmaps")
    assert info is not None
    await core.create(info, "default", {"metadata": {"name": "cm", "labels": {"a": "1"}}, "data": {"k": "v"}},
                      WriteOptions(field_manager="creator"))
    assert core.get(info, "default", "cm")["metadata"]["managedFields"]
    await core.patch(info, "default", "cm", "merge", {"metadata": {"managedFields": [{}]}},
                     WriteOptions(field_manager="kubectl"))
    assert "managedFields" not in core.get(info, "default", "cm")["metadata"]
    # with other changes in the same request, its manager owns just those afterwards
    await core.patch(info, "default", "cm", "merge", {"metadata": {"managedFields": [{}], "labels": {"b": "2"}}},
                     WriteOptions(field_manager="kubectl"))
    entries = core.get(info, "default", "cm")["metadata"]["managedFields"]
    assert [(e["manager"], e["fieldsV1"]) for e in entries] == [
        ("kubectl", {"f:metadata": {"f:labels": {"f:b": {}}}})]
    # an empty list is no reset: the live entries stay
    await core.patch(info, "default", "cm", "merge", {"metadata": {"managedFields": []}},
                     WriteOptions(field_manager="other"))
    assert core.get(info, "default", "cm")["metadata"]["managedFields"] == entries
