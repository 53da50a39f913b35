"""NodeInfo, PodInfo and Resource: the scheduler's hot internal state (upstream framework/types.go).

PodInfo parses a pod once (requests, affinity terms) when it enters the queue or the cache;
NodeInfo aggregates a node's pods incrementally (add_pod/remove_pod), so no cycle rebuilds
node state. Both are shared between the cache and snapshots; a snapshot holds `clone()`s of
NodeInfos changed since the previous snapshot (generation numbers), never the live ones.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from minik3s.api.helpers.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    node_allocatable,
    pod_requests_and_non_zero,
)
from minik3s.api.types import JsonDict

_generation = itertools.count(1)

_NATIVE_RESOURCES = frozenset((CPU, MEMORY, EPHEMERAL_STORAGE, PODS))


def is_scalar_resource_name(name: str) -> bool:
    """Upstream schedutil.IsScalarResourceName: an extended resource (a domain-qualified name
    outside kubernetes.io, not `requests.*`), a hugepages-* size, a kubernetes.io/-prefixed
    native resource or an attachable-volumes-* count. Any other name (say `storage`, or an
    unqualified `random-key`) is not counted by a Resource."""
    if name in _NATIVE_RESOURCES:
        return False
    if "/" in name:
        return "kubernetes.io/" in name or not name.startswith("requests.")
    return name.startswith(("hugepages-", "attachable-volumes-"))


def next_generation() -> int:
    return next(_generation)


@dataclass(slots=True)
class Resource:
    """Resources in scheduler units: cpu milli-cores, memory/ephemeral bytes, scalar counts."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_map(cls, m: dict[str, int]) -> Resource:
        """Upstream NewResource, from a resource list already in scheduler units
        (`resource_list_to_ints`); names that are not scalar resources are left out."""
        r = cls()
        for k, v in m.items():
            if k == CPU:
                r.milli_cpu = v
            elif k == MEMORY:
                r.memory = v
            elif k == EPHEMERAL_STORAGE:
                r.ephemeral_storage = v
            elif k == PODS:
                r.allowed_pod_number = v
            elif is_scalar_resource_name(k):
                r.scalar[k] = v
        return r

    def add_scalar(self, name: str, quantity: int) -> None:
        self.scalar[name] = self.scalar.get(name, 0) + quantity

    def set_max_resource(self, m: dict[str, int]) -> None:
        """Raise each resource of `m` (scheduler units) to at least its value there (upstream
        SetMaxResource: cpu, memory, ephemeral-storage and scalar resources; the pod count is
        left as it is)."""
        for k, v in m.items():
            if k == CPU:
                self.milli_cpu = max(self.milli_cpu, v)
            elif k == MEMORY:
                self.memory = max(self.memory, v)
            elif k == EPHEMERAL_STORAGE:
                self.ephemeral_storage = max(self.ephemeral_storage, v)
            elif is_scalar_resource_name(k):
                self.scalar[k] = max(self.scalar.get(k, 0), v)

    def add(self, other: Resource) -> None:
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        self.allowed_pod_number += other.allowed_pod_number
        for k, v in other.scalar.items():
            self.scalar[k] = self.scalar.get(k, 0) + v

    def sub(self, other: Resource) -> None:
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        self.ephemeral_storage -= other.ephemeral_storage
        self.allowed_pod_number -= other.allowed_pod_number
        for k, v in other.scalar.items():
            self.scalar[k] = self.scalar.get(k, 0) - v

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def clone(self) -> Resource:
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number,
                        dict(self.scalar))


@dataclass(slots=True)
class AffinityTerm:
    """A parsed PodAffinityTerm. `namespaces` is the resolved static set (the pod's own namespace
    when both namespaces and namespaceSelector are empty); `namespace_selector` a LabelSelector dict
    or None; `selector` a LabelSelector dict (None matches nothing, {} everything)."""

    namespaces: frozenset[str]
    selector: JsonDict | None
    topology_key: str
    namespace_selector: JsonDict | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


def _parse_terms(pod: JsonDict, raw: list[JsonDict] | None) -> list[AffinityTerm]:
    out: list[AffinityTerm] = []
    ns = (pod.get("metadata") or {}).get("namespace") or "default"
    labels = (pod.get("metadata") or {}).get("labels") or {}
    for t in raw or ():
        namespaces = frozenset(t.get("namespaces") or ())
        nsel = t.get("namespaceSelector")
        if not namespaces and nsel is None:
            namespaces = frozenset((ns,))
        selector = t.get("labelSelector")
        mlk = tuple(t.get("matchLabelKeys") or ())
        mmlk = tuple(t.get("mismatchLabelKeys") or ())
        if selector is not None and (mlk or mmlk):
            # matchLabelKeys / mismatchLabelKeys merge into the selector (KEP-3633)
            exprs = list(selector.get("matchExpressions") or [])
            for k in mlk:
                if k in labels:
                    exprs.append({"key": k, "operator": "In", "values": [labels[k]]})
            for k in mmlk:
                if k in labels:
                    exprs.append({"key": k, "operator": "NotIn", "values": [labels[k]]})
            selector = {**selector, "matchExpressions": exprs}
        out.append(AffinityTerm(namespaces, selector, t.get("topologyKey") or "", nsel, mlk, mmlk))
    return out


def _parse_weighted(pod: JsonDict, raw: list[JsonDict] | None) -> list[WeightedAffinityTerm]:
    out: list[WeightedAffinityTerm] = []
    for w in raw or ():
        terms = _parse_terms(pod, [w.get("podAffinityTerm") or {}])
        out.append(WeightedAffinityTerm(terms[0], int(w.get("weight") or 0)))
    return out


class PodInfo:
    """A pod parsed once: requests, non-zero requests, affinity terms, priority.

    `pod` is the shared API object (never mutate it). Create a new PodInfo when the pod changes.
    """

    __slots__ = (
        "pod", "uid", "name", "namespace", "key", "labels", "node_name", "priority", "requests",
        "non_zero_requests", "required_affinity_terms", "required_anti_affinity_terms",
        "preferred_affinity_terms", "preferred_anti_affinity_terms", "host_ports", "_extra",
    )

    def __init__(self, pod: JsonDict) -> None:
        self.pod = pod
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        self.uid: str = meta.get("uid") or ""
        self.name: str = meta.get("name") or ""
        self.namespace: str = meta.get("namespace") or ""
        self.key = f"{self.namespace}/{self.name}"
        self.labels: dict[str, str] = meta.get("labels") or {}
        self.node_name: str = spec.get("nodeName") or ""
        self.priority: int = int(spec.get("priority") or 0)
        plain, non_zero = pod_requests_and_non_zero(pod)
        self.requests = Resource.from_map(plain)
        self.non_zero_requests = Resource.from_map(non_zero)
        affinity = spec.get("affinity")
        pa = affinity.get("podAffinity") if affinity else None
        paa = affinity.get("podAntiAffinity") if affinity else None
        # most pods have no inter-pod terms: four empty lists without the parse
        self.required_affinity_terms = _parse_terms(pod, pa.get("requiredDuringSchedulingIgnoredDuringExecution")) \
            if pa else []
        self.required_anti_affinity_terms = _parse_terms(
            pod, paa.get("requiredDuringSchedulingIgnoredDuringExecution")) if paa else []
        self.preferred_affinity_terms = _parse_weighted(
            pod, pa.get("preferredDuringSchedulingIgnoredDuringExecution")) if pa else []
        self.preferred_anti_affinity_terms = _parse_weighted(
            pod, paa.get("preferredDuringSchedulingIgnoredDuringExecution")) if paa else []
        ports: list[tuple[str, str, int]] = []
        for c in spec.get("containers") or ():
            for p in c.get("ports") or ():
                hp = p.get("hostPort")
                if hp:
                    ports.append((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", int(hp)))
        for c in spec.get("initContainers") or ():
            if c.get("restartPolicy") == "Always":
                for p in c.get("ports") or ():
                    hp = p.get("hostPort")
                    if hp:
                        ports.append((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", int(hp)))
        self.host_ports = ports
        self._extra: dict[str, Any] | None = None

    def on_node(self, host: str) -> PodInfo:
        """A copy whose pod carries spec.nodeName = host (shallow copies of the pod and its spec;
        the shared pod is not mutated); every parsed field is shared with this one."""
        pod = dict(self.pod)
        spec = dict(pod.get("spec") or {})
        spec["nodeName"] = host
        pod["spec"] = spec
        out = self.sharing(pod)
        out.node_name = host
        return out

    def sharing(self, pod: JsonDict) -> PodInfo:
        """A PodInfo of `pod` that shares every parsed field (and the plugins' memo) with this
        one, for a caller that knows `pod` parses alike (PodInfos are never changed in place).
        Attribute by attribute, not a loop over the slots: the assume and confirm paths call it
        once per pod."""
        out = PodInfo.__new__(PodInfo)
        out.pod = pod
        out.uid = self.uid
        out.name = self.name
        out.namespace = self.namespace
        out.key = self.key
        out.labels = self.labels
        out.node_name = self.node_name
        out.priority = self.priority
        out.requests = self.requests
        out.non_zero_requests = self.non_zero_requests
        out.required_affinity_terms = self.required_affinity_terms
        out.required_anti_affinity_terms = self.required_anti_affinity_terms
        out.preferred_affinity_terms = self.preferred_affinity_terms
        out.preferred_anti_affinity_terms = self.preferred_anti_affinity_terms
        out.host_ports = self.host_ports
        out._extra = self._extra
        return out

    @property
    def spec(self) -> JsonDict:
        return self.pod.get("spec") or {}

    def has_affinity(self) -> bool:
        return bool(self.required_affinity_terms or self.required_anti_affinity_terms
                    or self.preferred_affinity_terms or self.preferred_anti_affinity_terms)

    def has_required_anti_affinity(self) -> bool:
        return bool(self.required_anti_affinity_terms)

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


def _swap_remove(lst: list[PodInfo], uid: str) -> None:
    for i, p in enumerate(lst):
        if p.uid == uid:
            last = lst.pop()
            if last is not p:
                lst[i] = last
            return


def pvc_keys(pod: JsonDict) -> list[str]:
    """"namespace/claim" of each persistentVolumeClaim volume of `pod` (upstream keys of
    PVCRefCounts and the snapshot's used-PVC set; generic ephemeral volumes not included)."""
    vols = (pod.get("spec") or {}).get("volumes")
    if not vols:
        return []
    ns = (pod.get("metadata") or {}).get("namespace") or ""
    out: list[str] = []
    for v in vols:
        claim = v.get("persistentVolumeClaim") if isinstance(v, dict) else None
        if claim is not None:
            out.append(f"{ns}/{claim.get('claimName') or ''}")
    return out


@dataclass(slots=True)
class ImageStateSummary:
    size: int
    num_nodes: int


class NodeInfo:
    """Aggregated state of one node (upstream framework.NodeInfo).

    `requested` sums the pods' requests; `non_zero_requested` the non-zero variant;
    `used_ports` holds (hostIP, protocol, port) triples; `image_states` maps image name
    (as listed in node.status.images) -> ImageStateSummary (num_nodes across the cluster,
    filled by the cache). `generation` changes on every mutation (snapshots copy only changed nodes).
    """

    __slots__ = (
        "node", "name", "labels", "taints", "pods", "pods_with_affinity",
        "pods_with_required_anti_affinity", "used_ports", "requested", "non_zero_requested",
        "allocatable", "image_states", "generation", "unschedulable",
    )

    def __init__(self, node: JsonDict | None = None) -> None:
        self.node: JsonDict | None = None
        self.name = ""
        self.labels: dict[str, str] = {}
        self.taints: list[JsonDict] = []
        self.unschedulable = False
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports: dict[tuple[str, str, int], int] = {}
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.image_states: dict[str, ImageStateSummary] = {}
        self.generation = next_generation()
        if node is not None:
            self.set_node(node)

    def set_node(self, node: JsonDict) -> None:
        self.node = node
        meta = node.get("metadata") or {}
        spec = node.get("spec") or {}
        self.name = meta.get("name") or ""
        self.labels = meta.get("labels") or {}
        self.taints = spec.get("taints") or []
        self.unschedulable = bool(spec.get("unschedulable"))
        self.allocatable = Resource.from_map(node_allocatable(node))
        self.generation = next_generation()

    def add_pod(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.has_affinity():
            self.pods_with_affinity.append(pi)
        if pi.has_required_anti_affinity():
            self.pods_with_required_anti_affinity.append(pi)
        self.requested.add(pi.requests)
        self.non_zero_requested.add(pi.non_zero_requests)
        for p in pi.host_ports:
            self.used_ports[p] = self.used_ports.get(p, 0) + 1
        self.generation = next_generation()

    def remove_pod(self, pod_uid: str) -> PodInfo | None:
        """Take the pod out, as upstream's RemovePod does: the last pod of the list moves into
        its place (so the order of the remaining pods is upstream's too). None, changing
        nothing, when the pod is not on the node."""
        pods = self.pods
        for i, pi in enumerate(pods):
            if pi.uid == pod_uid:
                last = pods.pop()
                if last is not pi:
                    pods[i] = last
                break
        else:
            return None
        if pi.has_affinity():
            _swap_remove(self.pods_with_affinity, pod_uid)
            if pi.has_required_anti_affinity():
                _swap_remove(self.pods_with_required_anti_affinity, pod_uid)
        self.requested.sub(pi.requests)
        self.non_zero_requested.sub(pi.non_zero_requests)
        for p in pi.host_ports:
            n = self.used_ports.get(p, 0) - 1
            if n <= 0:
                self.used_ports.pop(p, None)
            else:
                self.used_ports[p] = n
        self.generation = next_generation()
        return pi

    def replace_pod(self, old: PodInfo, new: PodInfo) -> bool:
        """Put `new` in for `old`, leaving the generation as it is, for a caller that knows the
        two count alike for every plugin (same requests, ports, affinity terms, labels: the
        bound pod confirming its assumption). The lists end as upstream's remove-then-add leaves
        them: the last pod moves into `old`'s place and `new` goes last. False, changing nothing,
        when `old` is not here."""
        pods = self.pods
        for i in range(len(pods) - 1, -1, -1):  # the newest pods are last: the assumed one is near the end
            if pods[i] is old:
                pods[i] = pods[-1]
                pods[-1] = new
                break
        else:
            return False
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            for i, p in enumerate(lst):
                if p is old:
                    lst[i] = lst[-1]
                    lst[-1] = new
                    break
        return True

    @property
    def pvc_ref_counts(self) -> dict[str, int]:
        """"namespace/claim" -> how many of the node's pods use the claim (upstream
        NodeInfo.PVCRefCounts: spec.volumes[].persistentVolumeClaim only), counted on demand
        from the pods rather than kept up to date on every add and remove."""
        out: dict[str, int] = {}
        for pi in self.pods:
            for key in pvc_keys(pi.pod):
                out[key] = out.get(key, 0) + 1
        return out

    def clone(self) -> NodeInfo:
        c = NodeInfo.__new__(NodeInfo)
        self.clone_into(c)
        return c

    def clone_into(self, c: NodeInfo) -> None:
        """Make `c` a copy of this NodeInfo, as `clone` would (every slot; the pod lists, ports
        and requested sums are `c`'s own; the rest is shared, being replaced, never mutated)."""
        c.node = self.node
        c.name = self.name
        c.labels = self.labels
        c.taints = self.taints
        c.unschedulable = self.unschedulable
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = dict(self.used_ports)
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        c.allocatable = self.allocatable
        c.image_states = self.image_states
        c.generation = self.generation

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"
