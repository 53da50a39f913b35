"""ResourceRegistry's served group-versions follow adds and removes (what the request path
parser asks on every request)."""

from __future__ import annotations

import dataclasses

from minik3s.api.resources import CONFIGMAPS, ResourceRegistry


def test_served_group_versions_follow_adds_and_removes() -> None:
    reg = ResourceRegistry()
    assert reg.serves_group_version("", "v1") and reg.serves_group_version("apps", "v1")
    assert not reg.serves_group_version("example.com", "v1")
    widgets = dataclasses.replace(CONFIGMAPS, group="example.com", version="v1", resource="widgets", kind="Widget")
    gadgets = dataclasses.replace(widgets, resource="gadgets", kind="Gadget")
    reg.add(widgets)
    reg.add(widgets)  # re-adding (a CRD update) does not count twice
    reg.add(gadgets)
    assert reg.serves_group_version("example.com", "v1")
    reg.remove("example.com", "v1", "widgets")
    assert reg.serves_group_version("example.com", "v1")  # gadgets still served
    reg.remove("example.com", "v1", "gadgets")
    reg.remove("example.com", "v1", "gadgets")  # removing twice is harmless
    assert not reg.serves_group_version("example.com", "v1")
    assert [i.resource for i in reg.for_group_version("example.com", "v1")] == []
