"""Fleet definition for the simulated kubelets (layer L4, kubelet_sim).

Why: `minik3s server --nodes ...` and `minik3s kubelet-sim --nodes ...` accept either a node count
or a YAML file; this module turns either into the list of Node manifests the node agent registers.

Data flow: `parse_fleet("6" | 6 | "fleet.yaml")` → [Node dict, ...] (names unique, kubelet labels
added, capacity/allocatable defaulted) → `NodeAgent`.

The file is multi-document YAML. Each document is either
  * a plain `Node` manifest (apiVersion v1, kind Node): one node with exactly that metadata, labels,
    taints, capacity, allocatable and `status.images`; or
  * a `NodePool` (apiVersion sim.minik3s.io/v1alpha1, kind NodePool), flat fields:
        count: 100            namePrefix: gpu-           zones: [zone-a, zone-b]   region: region-1
        labels: {...}         annotations: {...}         taints: [{key, value, effect}]
        capacity: {cpu: "8", memory: 32Gi, pods: "110"}  allocatable: {...}  (defaults to capacity)
        images: [{names: [nginx:1.25], sizeBytes: 150Mi}]
    Pool nodes are named `<namePrefix><i>` for i = 1..count; zones are assigned round-robin.
    Worked example: count 4, zones [a, b] → p-1:a, p-2:b, p-3:a, p-4:b.

A number N yields `node-1..node-N` spread round-robin over zone-a/zone-b/zone-c in region-1.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from minik3s.api.quantity import QuantityError, int_value
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

SIM_API_VERSION = "sim.minik3s.io/v1alpha1"
DEFAULT_ZONES = ("zone-a", "zone-b", "zone-c")
DEFAULT_REGION = "region-1"
DEFAULT_NODE_COUNT = 6
DEFAULT_CAPACITY: dict[str, str] = {
    "cpu": "4",
    "memory": "16Gi",
    "pods": "110",
    "ephemeral-storage": "100Gi",
    "hugepages-1Gi": "0",
    "hugepages-2Mi": "0",
}

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_OS = "kubernetes.io/os"
LABEL_ARCH = "kubernetes.io/arch"
LABEL_BETA_OS = "beta.kubernetes.io/os"
LABEL_BETA_ARCH = "beta.kubernetes.io/arch"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"


class ImageSpec(BaseModel):
    """One entry of node.status.images; sizeBytes accepts an int or a quantity ("150Mi")."""

    model_config = ConfigDict(extra="forbid")
    names: list[str] = Field(min_length=1)
    sizeBytes: int = 0

    @field_validator("sizeBytes", mode="before")
    @classmethod
    def _size(cls, v: Any) -> int:
        try:
            return int_value(v)
        except (QuantityError, TypeError) as e:
            raise ValueError(f"invalid sizeBytes {v!r}: {e}") from e


class Taint(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class NodePool(BaseModel):
    """`kind: NodePool`: `count` identical nodes."""

    model_config = ConfigDict(extra="forbid")
    apiVersion: str = SIM_API_VERSION
    kind: Literal["NodePool"] = "NodePool"
    metadata: dict[str, Any] | None = None
    count: int = Field(ge=0)
    namePrefix: str = "node-"
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    taints: list[Taint] = Field(default_factory=list)
    capacity: dict[str, str] = Field(default_factory=dict)
    allocatable: dict[str, str] | None = None
    images: list[ImageSpec] = Field(default_factory=list)
    zones: list[str] | None = None
    region: str | None = None

    @field_validator("capacity", "allocatable", mode="before")
    @classmethod
    def _quantities(cls, v: Any) -> Any:
        if v is None:
            return v
        if not isinstance(v, dict):
            raise ValueError("must be a map of resource name to quantity")
        out: dict[str, str] = {}
        for k, q in v.items():
            try:
                int_value(q)
            except (QuantityError, TypeError) as e:
                raise ValueError(f"{k}: invalid quantity {q!r}") from e
            out[str(k)] = str(q)
        return out


def _with_defaults(node: JsonDict, *, zone: str | None = None, region: str | None = None) -> JsonDict:
    """Add what a kubelet adds to its Node: well-known labels, capacity defaults, allocatable."""
    meta = node.setdefault("metadata", {})
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("Node manifest needs metadata.name")
    labels = meta.setdefault("labels", {})
    labels.setdefault(LABEL_HOSTNAME, name)
    labels.setdefault(LABEL_OS, "linux")
    labels.setdefault(LABEL_ARCH, "amd64")
    labels.setdefault(LABEL_BETA_OS, labels[LABEL_OS])
    labels.setdefault(LABEL_BETA_ARCH, labels[LABEL_ARCH])
    if zone:
        labels.setdefault(LABEL_ZONE, zone)
    if region:
        labels.setdefault(LABEL_REGION, region)
    node["apiVersion"] = "v1"
    node["kind"] = "Node"
    node.setdefault("spec", {})
    status = node.setdefault("status", {})
    cap = status.get("capacity") or dict(DEFAULT_CAPACITY)
    status["capacity"] = {str(k): str(v) for k, v in cap.items()}
    alloc = status.get("allocatable") or dict(status["capacity"])
    status["allocatable"] = {str(k): str(v) for k, v in alloc.items()}
    if status.get("images"):
        status["images"] = [ImageSpec.model_validate(im).model_dump() for im in status["images"]]
    return node


def pool_nodes(pool: NodePool) -> list[JsonDict]:
    """Expand a pool into Node manifests (see the module docstring for naming and zones)."""
    out: list[JsonDict] = []
    region = pool.region or (DEFAULT_REGION if pool.zones else None)
    for i in range(1, pool.count + 1):
        zone = pool.zones[(i - 1) % len(pool.zones)] if pool.zones else None
        capacity = dict(DEFAULT_CAPACITY)
        capacity.update(pool.capacity)
        node: JsonDict = {
            "metadata": {
                "name": f"{pool.namePrefix}{i}",
                "labels": dict(pool.labels),
            },
            "spec": {},
            "status": {
                "capacity": capacity,
                "allocatable": dict(pool.allocatable) if pool.allocatable else dict(capacity),
            },
        }
        if pool.annotations:
            node["metadata"]["annotations"] = dict(pool.annotations)
        if pool.taints:
            node["spec"]["taints"] = [t.model_dump(exclude_none=True) for t in pool.taints]
        if pool.images:
            node["status"]["images"] = [im.model_dump() for im in pool.images]
        out.append(_with_defaults(node, zone=zone, region=region))
    return out


def count_fleet(count: int) -> list[JsonDict]:
    """`count` nodes node-1..node-N over the three default zones (4 CPU / 16Gi / 110 pods)."""
    if count < 0:
        raise ValueError(f"--nodes must be >= 0, got {count}")
    return pool_nodes(NodePool(count=count, zones=list(DEFAULT_ZONES), region=DEFAULT_REGION))


def default_fleet() -> list[JsonDict]:
    """The fleet the server starts when given no --nodes: 6 nodes over 3 zones."""
    return count_fleet(DEFAULT_NODE_COUNT)


def parse_fleet_documents(docs: list[Any]) -> list[JsonDict]:
    """Turn parsed YAML documents (Node manifests and NodePools) into Node manifests."""
    nodes: list[JsonDict] = []
    for n, doc in enumerate(docs, 1):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise ValueError(f"document {n}: expected a mapping, got {type(doc).__name__}")
        kind = doc.get("kind")
        if kind == "Node":
            if doc.get("apiVersion", "v1") != "v1":
                raise ValueError(f"document {n}: Node must have apiVersion v1")
            nodes.append(_with_defaults(copy.deepcopy(doc)))
        elif kind == "NodePool":
            try:
                pool = NodePool.model_validate(doc)
            except ValueError as e:
                raise ValueError(f"document {n}: invalid NodePool: {e}") from e
            nodes.extend(pool_nodes(pool))
        elif kind == "List" and isinstance(doc.get("items"), list):
            nodes.extend(parse_fleet_documents(doc["items"]))
        else:
            raise ValueError(f"document {n}: kind must be Node or NodePool, got {kind!r}")
    seen: set[str] = set()
    for node in nodes:
        name = node["metadata"]["name"]
        if name in seen:
            raise ValueError(f"duplicate node name {name!r} in fleet")
        seen.add(name)
    return nodes


def parse_fleet_yaml(text: str) -> list[JsonDict]:
    return parse_fleet_documents(list(yaml.safe_load_all(text)))


def parse_fleet(spec: str | int | None) -> list[JsonDict]:
    """`--nodes` value → Node manifests. None → the default fleet; an int or digits → that many
    nodes; anything else is a path to a fleet YAML file. Raises ValueError on bad input."""
    if spec is None:
        return default_fleet()
    if isinstance(spec, bool):
        raise ValueError("--nodes must be a count or a file path")
    if isinstance(spec, int):
        return count_fleet(spec)
    s = spec.strip()
    if s.lstrip("-").isdigit():
        return count_fleet(int(s))
    path = Path(s)
    try:
        text = path.read_text()
    except OSError as e:
        raise ValueError(f"--nodes {s!r}: neither a count nor a readable file ({e.strerror})") from e
    try:
        return parse_fleet_yaml(text)
    except yaml.YAMLError as e:
        raise ValueError(f"{s}: invalid YAML: {e}") from e
