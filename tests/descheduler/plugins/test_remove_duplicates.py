"""RemoveDuplicates table (after upstream removeduplicates_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.testing.builders import make_node


def three_nodes() -> list[Any]:
    return [make_node(n).capacity(cpu="8", memory="8Gi").obj() for n in ("n1", "n2", "n3")]


@pytest.mark.parametrize(("pods", "args", "expected"), [
    pytest.param([("a", "n1", "rs1", "nginx:1"), ("b", "n1", "rs1", "nginx:1"), ("c", "n1", "rs1", "nginx:1")],
                 None, ["b", "c"], id="three-replicas-on-one-of-three-nodes-two-evicted"),
    pytest.param([("a", "n1", "rs1", "nginx:1"), ("b", "n1", "rs1", "nginx:2")],
                 None, [], id="same-owner-different-images-are-not-duplicates"),
    pytest.param([("a", "n1", "rs1", "nginx:1"), ("b", "n1", "rs2", "nginx:1")],
                 None, [], id="different-owners-are-not-duplicates"),
    pytest.param([("a", "n1", "rs1", "nginx:1"), ("b", "n1", "rs1", "nginx:1")],
                 {"excludeOwnerKinds": ["ReplicaSet"]}, [], id="excluded-owner-kind-skipped"),
    pytest.param([(f"p{i}", "n1", "rs1", "nginx:1") for i in range(4)] + [("q", "n2", "rs1", "nginx:1")],
                 None, ["p2", "p3"], id="upper-average-ceil-5-over-3-is-2"),
    pytest.param([("a", "n1", None, "nginx:1"), ("b", "n1", None, "nginx:1")],
                 None, [], id="bare-pods-have-no-owner-key"),
])
async def test_remove_duplicates(cluster: Any, pods: list[Any], args: Any, expected: list[str]) -> None:
    await cluster.add(*three_nodes(), *[cluster.pod(n, node, owner=o, image=img).obj() for n, node, o, img in pods])
    assert await cluster.run(cluster.policy(("balance", "RemoveDuplicates", args))) == expected


async def test_untolerated_taints_shrink_the_target_nodes(cluster: Any) -> None:
    nodes = three_nodes()
    for n in nodes[1:]:
        n["spec"]["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    await cluster.add(*nodes, *[cluster.pod(f"p{i}", "n1").obj() for i in range(3)])
    assert await cluster.run(cluster.policy(("balance", "RemoveDuplicates", None))) == []
