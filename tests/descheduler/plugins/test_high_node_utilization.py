"""HighNodeUtilization table (after upstream highnodeutilization_test.go): bin-packing."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.testing.builders import make_node

ARGS = {"thresholds": {"cpu": 20}}


@pytest.mark.parametrize(("pods", "args", "expected"), [
    pytest.param([("a", "n1", "2"), ("b", "n2", "2"), ("c", "n3", "400m")], ARGS, ["c"],
                 id="least-used-node-drained-onto-the-others"),
    pytest.param([("a", "n1", "2"), ("b", "n2", "2"), ("c", "n3", "2")], ARGS, [], id="no-underutilized-node"),
    pytest.param([("a", "n1", "400m"), ("b", "n2", "400m"), ("c", "n3", "400m")], ARGS, [],
                 id="all-underutilized-nothing-to-do"),
    pytest.param([("a", "n1", "2"), ("b", "n2", "400m"), ("c", "n3", "400m")], {**ARGS, "numberOfNodes": 2}, [],
                 id="not-more-than-numberOfNodes"),
    pytest.param([("a", "n1", "2"), ("b", "n2", "2"), ("c", "n3", None)],
                 {**ARGS, "evictionModes": ["OnlyThresholdingResources"]}, [],
                 id="only-thresholding-resources-skips-pods-without-cpu-requests"),
])
async def test_high_node_utilization(cluster: Any, pods: list[Any], args: dict[str, Any], expected: list[str]
                                     ) -> None:
    nodes = [make_node(n).capacity(cpu="4", memory="8Gi").obj() for n in ("n1", "n2", "n3")]
    await cluster.add(*nodes, *[cluster.pod(n, node, cpu=cpu).obj() for n, node, cpu in pods])
    assert await cluster.run(cluster.policy(("balance", "HighNodeUtilization", args))) == expected
