"""List pagination in the request core: limit/continue pages, remainingItemCount, selectors
across pages, the all-namespaces prefix, and malformed continue tokens (400)."""

from __future__ import annotations

import base64
import json

import pytest

from apiserver.core import ApiCore
from minik3s.api.errors import BadRequestError
from minik3s.api.options import ListOptions
from minik3s.api.resources import ResourceInfo


def _info(core: ApiCore, resource: str) -> ResourceInfo:
    info = core.registry.get("", "v1", resource)
    assert info is not None
    return info


async def _seed(core: ApiCore) -> None:
    nss = _info(core, "namespaces")
    cms = _info(core, "configmaps")
    for ns in ("a", "b"):
        await core.create(nss, None, {"metadata": {"name": ns}})
    for ns in ("a", "b", "default"):
        for i in range(7):
            await core.create(cms, ns, {"metadata": {"name": f"cm{i}", "labels": {"odd": str(i % 2 == 1).lower()}}})


def _pages(core: ApiCore, info: ResourceInfo, namespace: str | None, **kw: object) -> list[tuple[list[str], int | None]]:
    out: list[tuple[list[str], int | None]] = []
    cont: str | None = None
    while True:
        lst = core.list(info, namespace, ListOptions(continue_=cont, **kw))  # type: ignore[arg-type]
        meta = lst["metadata"]
        out.append(([f'{o["metadata"]["namespace"]}/{o["metadata"]["name"]}' for o in lst["items"]],
                    meta.get("remainingItemCount")))
        cont = meta.get("continue")
        if not cont:
            return out


async def test_pages_of_one_namespace_carry_remaining_counts(core: ApiCore) -> None:
    await _seed(core)
    pages = _pages(core, _info(core, "configmaps"), "b", limit=3)
    assert pages == [(["b/cm0", "b/cm1", "b/cm2"], 4), (["b/cm3", "b/cm4", "b/cm5"], 1), (["b/cm6"], None)]


async def test_all_namespaces_pages_cross_namespace_boundaries_in_key_order(core: ApiCore) -> None:
    await _seed(core)
    pages = _pages(core, _info(core, "configmaps"), None, limit=5)
    flat = [n for items, _ in pages for n in items]
    assert flat == [f"{ns}/cm{i}" for ns in ("a", "b", "default") for i in range(7)]
    assert [r for _, r in pages] == [16, 11, 6, 1, None]


async def test_label_selector_applies_on_every_page_and_counts_only_matches(core: ApiCore) -> None:
    await _seed(core)
    pages = _pages(core, _info(core, "configmaps"), None, limit=4, label_selector="odd=true")
    assert pages == [(["a/cm1", "a/cm3", "a/cm5", "b/cm1"], 5), (["b/cm3", "b/cm5", "default/cm1", "default/cm3"], 1),
                     (["default/cm5"], None)]


async def test_a_page_resumes_after_its_key_even_when_that_object_was_deleted(core: ApiCore) -> None:
    await _seed(core)
    cms = _info(core, "configmaps")
    first = core.list(cms, "a", ListOptions(limit=2))
    await core.delete(cms, "a", "cm1")
    nxt = core.list(cms, "a", ListOptions(limit=2, continue_=first["metadata"]["continue"]))
    assert [o["metadata"]["name"] for o in nxt["items"]] == ["cm2", "cm3"]
    assert nxt["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


async def test_list_without_limit_returns_everything_without_continue(core: ApiCore) -> None:
    await _seed(core)
    lst = core.list(_info(core, "configmaps"), "default", ListOptions())
    assert [o["metadata"]["name"] for o in lst["items"]] == [f"cm{i}" for i in range(7)]
    assert "continue" not in lst["metadata"]


def _token(rv: object) -> str:
    return base64.urlsafe_b64encode(json.dumps({"rv": rv, "start": "core/configmaps/default/cm1"}).encode()).decode().rstrip("=")


@pytest.mark.parametrize("token", [pytest.param("not-base64!", id="garbage"),
                                   pytest.param("eyJmb28iOjF9", id="json-without-start-and-rv"),
                                   pytest.param(_token(0), id="rv-0"),
                                   pytest.param(_token(-5), id="rv-negative"),
                                   pytest.param(_token(2**63), id="rv-past-int64"),
                                   pytest.param(_token(10**30), id="rv-past-uint64")])
async def test_malformed_continue_token_is_a_400(core: ApiCore, token: str) -> None:
    with pytest.raises(BadRequestError, match="continue key is not valid"):
        core.list(_info(core, "configmaps"), "default", ListOptions(limit=1, continue_=token))
