"""A JSON LIST over HTTP is written from the store's committed encodings: the body is byte for
byte orjson's encoding of the `<Kind>List` plus the newline (unpaged, paged with continue,
selectors, namespaced, empty), follows updates and deletes, and a converted view (autoscaling/v1
HPAs over stored v2 objects) still answers in its own version. On the real app and a real port."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from apiserver.app import create_app
from apiserver.core import ApiCore
from minik3s.api.options import DeleteOptions, ListOptions


@pytest.fixture
async def http(core: ApiCore) -> AsyncIterator[TestClient[Any, Any]]:
    async with TestClient(TestServer(create_app(core), host="127.0.0.1")) as client:
        yield client


def info(core: ApiCore, group: str, version: str, resource: str) -> Any:
    found = core.registry.get(group, version, resource)
    assert found is not None
    return found


async def seed(core: ApiCore) -> None:
    nss = info(core, "", "v1", "namespaces")
    pods = info(core, "", "v1", "pods")
    await core.create(nss, None, {"metadata": {"name": "a"}})
    await core.create(nss, None, {"metadata": {"name": "empty"}})
    for ns in ("a", "default"):
        for i in range(5):
            await core.create(pods, ns, {
                "metadata": {"name": f"p{i}", "labels": {"app": "x" if i % 2 else "y"},
                             "annotations": {"note": "é ü \u2028"}},
                "spec": {"nodeName": f"n{i % 2}", "containers": [{"name": "c", "image": "pause"}]}})


def expected(core: ApiCore, namespace: str | None, **opts: Any) -> bytes:
    return orjson.dumps(core.list(info(core, "", "v1", "pods"), namespace, ListOptions(**opts))) + b"\n"


@pytest.mark.parametrize(("path", "namespace", "opts", "names"), [
    pytest.param("/api/v1/pods", None, {}, ["p0", "p1", "p2", "p3", "p4"] * 2, id="all-namespaces"),
    pytest.param("/api/v1/namespaces/a/pods", "a", {}, ["p0", "p1", "p2", "p3", "p4"], id="namespaced"),
    pytest.param("/api/v1/namespaces/empty/pods", "empty", {}, [], id="empty"),
    pytest.param("/api/v1/pods?limit=3", None, {"limit": 3}, ["p0", "p1", "p2"], id="first-page"),
    pytest.param("/api/v1/pods?limit=1", None, {"limit": 1}, ["p0"], id="one-item-page"),
    pytest.param("/api/v1/pods?labelSelector=app%3Dx", None, {"label_selector": "app=x"}, ["p1", "p3"] * 2,
                 id="label-selector"),
    pytest.param("/api/v1/namespaces/a/pods?fieldSelector=spec.nodeName%3Dn0&limit=2", "a",
                 {"field_selector": "spec.nodeName=n0", "limit": 2}, ["p0", "p2"], id="field-selector-page"),
])
async def test_json_list_bytes_are_the_lists_encoding(core: ApiCore, http: TestClient[Any, Any], path: str,
                                                     namespace: str | None, opts: dict[str, Any],
                                                     names: list[str]) -> None:
    await seed(core)
    r = await http.get(path)
    assert r.status == 200
    assert r.headers["Content-Type"] == "application/json"
    body = await r.read()
    assert body == expected(core, namespace, **opts)
    lst = orjson.loads(body)
    assert lst["kind"] == "PodList" and lst["apiVersion"] == "v1"
    assert [o["metadata"]["name"] for o in lst["items"]] == names
    assert all(o["metadata"]["annotations"] == {"note": "é ü \u2028"} for o in lst["items"])


async def test_continue_pages_are_byte_identical_and_cover_the_list(core: ApiCore, http: TestClient[Any, Any]) -> None:
    await seed(core)
    seen: list[str] = []
    cont = ""
    while True:
        r = await http.get("/api/v1/pods", params={"limit": "4", **({"continue": cont} if cont else {})})
        body = await r.read()
        assert body == expected(core, None, limit=4, continue_=cont or None)
        lst = orjson.loads(body)
        seen += [f'{o["metadata"]["namespace"]}/{o["metadata"]["name"]}' for o in lst["items"]]
        cont = lst["metadata"].get("continue", "")
        if not cont:
            break
        assert lst["metadata"]["remainingItemCount"] == 10 - len(seen)
    assert seen == [f"{ns}/p{i}" for ns in ("a", "default") for i in range(5)]


async def test_the_list_follows_updates_and_deletes(core: ApiCore, http: TestClient[Any, Any]) -> None:
    await seed(core)
    pods = info(core, "", "v1", "pods")
    cur = core.get(pods, "a", "p1")
    await core.update(pods, "a", "p1", {**cur, "metadata": {**cur["metadata"], "labels": {"app": "z"}}})
    await core.delete(pods, "a", "p2", DeleteOptions(grace_period_seconds=0))
    body = await (await http.get("/api/v1/namespaces/a/pods")).read()
    assert body == expected(core, "a")
    items = orjson.loads(body)["items"]
    assert [o["metadata"]["name"] for o in items] == ["p0", "p1", "p3", "p4"]
    assert items[1]["metadata"]["labels"] == {"app": "z"}
    assert items[1]["metadata"]["resourceVersion"] == core.get(pods, "a", "p1")["metadata"]["resourceVersion"]


async def test_a_converted_view_lists_in_its_own_version(core: ApiCore, http: TestClient[Any, Any]) -> None:
    hpa = {"metadata": {"name": "h"}, "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
        "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 70}}
    await core.create(info(core, "autoscaling", "v1", "horizontalpodautoscalers"), "default", hpa)
    body = await (await http.get("/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers")).read()
    lst = orjson.loads(body)
    assert lst["apiVersion"] == "autoscaling/v1"
    assert lst["items"][0]["spec"]["targetCPUUtilizationPercentage"] == 70
    assert "metrics" not in lst["items"][0]["spec"]
    v2 = orjson.loads(await (await http.get("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers")).read())
    assert v2["items"][0]["spec"]["metrics"][0]["resource"]["name"] == "cpu"
