"""The server's bootstrap against the real in-process API (ApiCore on SQLite): the objects a
fresh kube-apiserver and its bootstrap controllers make, and their repair on a later start."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.core import ApiCore
from apiserver.storage.sqlite_store import SqliteStore
from minik3s.api.errors import NotFoundError
from minik3s.api.resources import APISERVICES, ResourceRegistry
from minik3s.client.local import LocalClient
from minik3s.client.rest import default_user_agent
from minik3s.server import _bootstrap
from minik3s.utils.clock import FakeClock


@pytest.fixture
async def api() -> AsyncIterator[tuple[LocalClient, ApiCore]]:
    store = SqliteStore(":memory:", compact_interval=0)
    await store.start()
    core = ApiCore(store, ResourceRegistry(), clock=FakeClock())
    try:
        yield LocalClient(core, user_agent=default_user_agent("kube-apiserver")), core
    finally:
        await store.close()


async def test_a_later_start_restores_the_crd_and_metrics_apiservices(api: Any) -> None:
    client, core = api
    await _bootstrap(client, core, 6443)
    names = {o["metadata"]["name"] for o in (await client.list(APISERVICES))["items"]}
    assert {"v1beta1.metrics.k8s.io", "v1beta1.scheduling.volcano.sh", "v1alpha1.scheduling.x-k8s.io",
            "v1.apps"} <= names
    # a data dir from before the CRD registration (or a stop between the two writes): missing
    await client.delete(APISERVICES, "v1beta1.scheduling.volcano.sh")
    await client.delete(APISERVICES, "v1beta1.metrics.k8s.io")
    with pytest.raises(NotFoundError):
        await client.get(APISERVICES, "v1beta1.scheduling.volcano.sh")
    await _bootstrap(client, core, 6443)
    restored = await client.get(APISERVICES, "v1beta1.scheduling.volcano.sh")
    assert restored["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "true"}
    assert restored["status"]["conditions"][0]["reason"] == "Local"
    metrics = await client.get(APISERVICES, "v1beta1.metrics.k8s.io")
    assert (metrics["spec"]["groupPriorityMinimum"], metrics["spec"]["versionPriority"]) == (100, 100)
