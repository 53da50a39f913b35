"""Creates with `generateName` over HTTP, on the real app and core: a generated name that is
taken is generated again (kube-apiserver's RetryGenerateName, 8 attempts in all); when every
attempt is taken the answer is upstream's NewGenerateNameConflict (409 AlreadyExists, "the server
was not able to generate a unique name", retryAfterSeconds 1 and a Retry-After header); a chosen
name that is taken is a plain AlreadyExists; a dry run checks the name without writing."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from apiserver.app import create_app
from apiserver.core import ApiCore

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


class FirstLetter(random.Random):
    """Every generated name is the prefix and the alphabet's first letter five times; counts the
    letters drawn."""

    draws = 0

    def choice(self, seq: Sequence[Any]) -> Any:
        self.draws += 1
        return seq[0]


@pytest.fixture
async def http(core: ApiCore) -> AsyncIterator[TestClient[Any, Any]]:
    async with TestClient(TestServer(create_app(core), host="127.0.0.1")) as client:
        yield client


def cm(**meta: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


async def names(http: TestClient[Any, Any]) -> list[str]:
    r = await http.get(CONFIGMAPS)
    return sorted(i["metadata"]["name"] for i in (await r.json())["items"])


async def test_a_taken_generated_name_is_generated_again(core: ApiCore, http: TestClient[Any, Any]) -> None:
    core.rng.seed(11)
    r = await http.post(CONFIGMAPS, json=cm(generateName="web-"))
    assert r.status == 201
    first = (await r.json())["metadata"]["name"]
    core.rng.seed(11)  # the next name drawn is the same one: taken
    r = await http.post(CONFIGMAPS, json=cm(generateName="web-"))
    assert r.status == 201, await r.text()
    second = (await r.json())["metadata"]["name"]
    assert second != first and second.startswith("web-") and len(second) == len("web-") + 5
    assert await names(http) == sorted([first, second])


async def test_every_attempt_taken_is_the_servers_name_conflict(core: ApiCore, http: TestClient[Any, Any]) -> None:
    core.rng = FirstLetter()
    assert (await http.post(CONFIGMAPS, json=cm(generateName="web-"))).status == 201
    core.rng.draws = 0
    r = await http.post(CONFIGMAPS, json=cm(generateName="web-"))
    assert r.status == 409
    assert r.headers["Retry-After"] == "1"
    assert await r.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps "web-bbbbb" already exists, the server was not able to generate a unique name '
                   "for the object",
        "reason": "AlreadyExists",
        "details": {"name": "web-bbbbb", "kind": "configmaps", "retryAfterSeconds": 1},
        "code": 409,
    }
    assert core.rng.draws == 8 * 5  # eight names tried, five letters each
    assert await names(http) == ["web-bbbbb"]


async def test_a_chosen_name_that_is_taken_is_not_regenerated(core: ApiCore, http: TestClient[Any, Any]) -> None:
    assert (await http.post(CONFIGMAPS, json=cm(name="web"))).status == 201
    r = await http.post(CONFIGMAPS, json=cm(name="web"))
    assert r.status == 409
    assert "Retry-After" not in r.headers
    body = await r.json()
    assert body["message"] == 'configmaps "web" already exists'
    assert body["details"] == {"name": "web", "kind": "configmaps"}
    # with a generateName beside the chosen name: the name is kept, the wording is the server's
    r = await http.post(CONFIGMAPS, json=cm(name="web", generateName="web-"))
    assert r.status == 409
    body = await r.json()
    assert body["message"] == ('configmaps "web" already exists, the server was not able to generate a unique '
                               "name for the object")
    assert body["details"] == {"name": "web", "kind": "configmaps", "retryAfterSeconds": 1}
    assert await names(http) == ["web"]


async def test_a_dry_run_create_checks_the_name_and_writes_nothing(core: ApiCore, http: TestClient[Any, Any]) -> None:
    assert (await http.post(CONFIGMAPS, json=cm(name="web"))).status == 201
    r = await http.post(CONFIGMAPS, params={"dryRun": "All"}, json=cm(name="web"))
    assert r.status == 409
    assert (await r.json())["message"] == 'configmaps "web" already exists'
    r = await http.post(CONFIGMAPS, params={"dryRun": "All"}, json=cm(name="other"))
    assert r.status == 201
    assert (await r.json())["metadata"]["name"] == "other"
    core.rng.seed(5)
    r = await http.post(CONFIGMAPS, json=cm(generateName="web-"))
    taken = (await r.json())["metadata"]["name"]
    core.rng.seed(5)
    r = await http.post(CONFIGMAPS, params={"dryRun": "All"}, json=cm(generateName="web-"))
    assert r.status == 201
    assert (await r.json())["metadata"]["name"] not in (taken, "web")
    assert await names(http) == sorted(["web", taken])
