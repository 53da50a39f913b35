"""TTL controller (pkg/controller/ttl) against a real in-process API server: the
`node.alpha.kubernetes.io/ttl` annotation by cluster size, with its hysteresis."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.api.resources import NODES
from minik3s.controllers.ttl import ANNOTATION_TTL, TTLController


async def _ttl(harness: Any, name: str) -> str | None:
    n = await harness.client.get(NODES, name)
    return (n["metadata"].get("annotations") or {}).get(ANNOTATION_TTL)


async def test_small_cluster_nodes_get_ttl_zero_and_steady_state_writes_nothing(harness: Any) -> None:
    await harness.add_node("n1")
    c = TTLController(harness.client, harness.informers)
    harness.start(c.run)
    await harness.eventually(lambda: _ttl(harness, "n1"), what="ttl annotation")
    assert await _ttl(harness, "n1") == "0"
    await harness.add_node("n2")

    async def both() -> bool:
        return await _ttl(harness, "n2") == "0"

    await harness.eventually(both, what="ttl on the new node")
    before = (await harness.client.get(NODES, "n1"))["metadata"]["resourceVersion"]
    await c.sync("n1")
    assert (await harness.client.get(NODES, "n1"))["metadata"]["resourceVersion"] == before


def _steps(c: TTLController, adds: int, deletes: int = 0) -> int:
    for i in range(adds):
        c._add_node({"metadata": {"name": f"n{i}"}})
    for _ in range(deletes):
        c._delete_node({})
    return c.desired_ttl_seconds


@pytest.mark.parametrize(("adds", "deletes", "want"), [
    pytest.param(100, 0, 0, id="100-nodes"),
    pytest.param(101, 0, 15, id="101-nodes"),
    pytest.param(101, 11, 15, id="down-to-90-keeps-15"),
    pytest.param(101, 12, 0, id="below-90-back-to-0"),
    pytest.param(501, 0, 30, id="501-nodes"),
    pytest.param(1001, 0, 60, id="1001-nodes"),
    pytest.param(2001, 0, 300, id="2001-nodes"),
    pytest.param(2001, 202, 60, id="below-1800-back-to-60"),
])
def test_ttl_boundaries(harness: Any, adds: int, deletes: int, want: int) -> None:
    """ttlBoundaries: sizeMax to step up, sizeMin to step down."""
    c = TTLController(harness.client, harness.informers)
    assert _steps(c, adds, deletes) == want
