"""The fleet parser: counts, Node manifests and NodePools become the Node manifests to register."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubelet_sim.config import parse_fleet, parse_fleet_yaml


def _summary(nodes: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(n["metadata"]["name"], n["metadata"]["labels"].get("topology.kubernetes.io/zone")) for n in nodes]


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param(0, [], id="zero-nodes-means-none"),
        pytest.param("0", [], id="zero-as-string-means-none"),
        pytest.param(4, [("node-1", "zone-a"), ("node-2", "zone-b"), ("node-3", "zone-c"), ("node-4", "zone-a")],
                     id="count-spreads-round-robin-over-three-zones"),
        pytest.param(None, [(f"node-{i}", z) for i, z in zip(range(1, 7), ["zone-a", "zone-b", "zone-c"] * 2,
                                                              strict=True)],
                     id="default-fleet-is-six-nodes-over-three-zones"),
    ],
)
def test_count_fleets(spec: Any, want: list[tuple[str, str]]) -> None:
    assert _summary(parse_fleet(spec)) == want


def test_count_node_is_a_complete_kubelet_node() -> None:
    node = parse_fleet(1)[0]
    assert node["metadata"]["labels"] == {
        "kubernetes.io/hostname": "node-1",
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/zone": "zone-a",
        "topology.kubernetes.io/region": "region-1",
    }
    cap = node["status"]["capacity"]
    assert (cap["cpu"], cap["memory"], cap["pods"]) == ("4", "16Gi", "110")
    assert node["status"]["allocatable"] == cap


def test_node_manifests_are_kept_exactly() -> None:
    nodes = parse_fleet_yaml("""
apiVersion: v1
kind: Node
metadata:
  name: gpu-big
  labels: {accelerator: a100, kubernetes.io/arch: arm64}
spec:
  taints: [{key: gpu, value: "true", effect: NoSchedule}]
status:
  capacity: {cpu: "64", memory: 512Gi, pods: "250", nvidia.com/gpu: "8"}
  allocatable: {cpu: "63", memory: 500Gi, pods: "250", nvidia.com/gpu: "8"}
  images: [{names: ["docker.io/library/pytorch:2"], sizeBytes: 5000000000}]
---
apiVersion: v1
kind: Node
metadata: {name: plain}
""")
    big, plain = nodes
    assert big["metadata"]["labels"]["accelerator"] == "a100"
    assert big["metadata"]["labels"]["kubernetes.io/arch"] == "arm64"
    assert big["metadata"]["labels"]["beta.kubernetes.io/arch"] == "arm64"
    assert "topology.kubernetes.io/zone" not in big["metadata"]["labels"]
    assert big["spec"]["taints"] == [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
    assert big["status"]["allocatable"]["cpu"] == "63"
    assert big["status"]["images"][0]["sizeBytes"] == 5000000000
    assert plain["status"]["capacity"]["cpu"] == "4"


def test_node_pools_expand_with_zones_and_images() -> None:
    nodes = parse_fleet_yaml("""
apiVersion: sim.minik3s.io/v1alpha1
kind: NodePool
count: 3
namePrefix: gpu-
zones: [us-east-1a, us-east-1b]
region: us-east-1
labels: {pool: gpu}
taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
capacity: {cpu: "16", nvidia.com/gpu: "4"}
images: [{names: [nginx:1.25], sizeBytes: 150Mi}]
---
kind: NodePool
count: 2
namePrefix: cpu-
""")
    assert _summary(nodes) == [("gpu-1", "us-east-1a"), ("gpu-2", "us-east-1b"), ("gpu-3", "us-east-1a"),
                               ("cpu-1", None), ("cpu-2", None)]
    gpu = nodes[0]
    assert gpu["metadata"]["labels"]["pool"] == "gpu"
    assert gpu["metadata"]["labels"]["topology.kubernetes.io/region"] == "us-east-1"
    assert gpu["status"]["capacity"]["cpu"] == "16"
    assert gpu["status"]["capacity"]["memory"] == "16Gi"  # defaults fill what the pool leaves out
    assert gpu["status"]["allocatable"] == gpu["status"]["capacity"]
    assert gpu["status"]["images"] == [{"names": ["nginx:1.25"], "sizeBytes": 150 * 1024 * 1024}]
    assert gpu["spec"]["taints"] == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("kind: Deployment\nmetadata: {name: x}\n", "kind must be Node or NodePool", id="unknown-kind"),
        pytest.param("kind: NodePool\ncount: -1\n", "invalid NodePool", id="negative-pool-count"),
        pytest.param("kind: NodePool\ncount: 1\ncapcity: {}\n", "invalid NodePool", id="typo-in-pool-field"),
        pytest.param("kind: NodePool\ncount: 1\ncapacity: {cpu: lots}\n", "invalid quantity", id="bad-quantity"),
        pytest.param("kind: Node\nmetadata: {name: a-1}\n---\nkind: NodePool\ncount: 1\nnamePrefix: a-\n",
                     "duplicate node name", id="duplicate-names"),
        pytest.param("kind: Node\nmetadata: {}\n", "metadata.name", id="node-without-name"),
    ],
)
def test_invalid_fleets_are_rejected(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_fleet_yaml(text)


def test_fleet_from_file_and_errors(tmp_path: Path) -> None:
    f = tmp_path / "fleet.yaml"
    f.write_text("kind: NodePool\ncount: 2\nnamePrefix: w-\n")
    assert [n["metadata"]["name"] for n in parse_fleet(str(f))] == ["w-1", "w-2"]
    with pytest.raises(ValueError, match="neither a count nor a readable file"):
        parse_fleet(str(tmp_path / "missing.yaml"))
    with pytest.raises(ValueError, match=">= 0"):
        parse_fleet(-3)


def test_example_fleet_file_parses() -> None:
    example = Path(__file__).parents[2] / "examples" / "fleet.yaml"
    nodes = parse_fleet(str(example))
    assert len(nodes) >= 3
    assert len({n["metadata"]["name"] for n in nodes}) == len(nodes)
