"""Node registration, leases and node status for every simulated node (layer L4, kubelet_sim).

Why: to the control plane a node is alive only while its kubelet keeps its `Lease` in
`kube-node-lease` fresh (renewed every 10 s, duration 40 s) and reports `Ready`; this agent does
that for the whole fleet with ONE task, as KWOK does, instead of one task per node.

Data flow:
  register_all(): create each Node (status included; written again through /status when the server
    drops status on create) — or take over an existing Node of that name — and its Lease, with
    bounded concurrency (5,000 nodes register well inside 30 s).
  run(): a heap of per-node due times. Each node is renewed every renew_interval × (1 + 0.04·u)
    seconds (u uniform in [0, 1), injected rng; kubelet/component-helpers use 4 % jitter), first
    renewals spread uniformly over one interval. Worked example, 1,000 nodes, 10 s interval:
    ~100 renewals/s, each wake-up renews the nodes due then in one concurrent batch (bounded by
    lease_parallelism). A node's status is written at a renewal when it changed (new image,
    recovery) or when status_report_frequency (5 min) has passed since the last report.
  Node informer: the annotation `sim.minik3s.io/failed: "true"` freezes a node (no lease, no
    status, the stage controller skips its pods); removing it recovers the node at once.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import heapq
import itertools
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubelet_sim.events import NORMAL, node_ref, node_schedulable_event, node_startup_events
from kubelet_sim.ipam import IpPool, node_host_ips, node_internal_ip, node_pod_cidr
from kubelet_sim.keyqueue import sleep_or_wake
from kubelet_sim.stages.lifecycle import image_id
from minik3s.api.errors import AlreadyExistsError, ApiError, ConflictError, NotFoundError
from minik3s.api.helpers.images import normalize_image
from minik3s.api.helpers.resources import node_allocatable
from minik3s.api.quantity import QuantityError, int_value
from minik3s.api.resources import CSINODES, LEASES, NAMESPACES, NODES
from minik3s.api.types import JsonDict
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.utils.clock import Clock, rfc3339, rfc3339_micro

logger = logging.getLogger(__name__)

ANNOTATION_FAILED = "sim.minik3s.io/failed"
ANNOTATION_CONTROLLER_MANAGED_ATTACH = "volumes.kubernetes.io/controller-managed-attach-detach"
NODE_LEASE_NAMESPACE = "kube-node-lease"
KUBELET_VERSION = "v1.33.0"
CONTAINER_RUNTIME_VERSION = "containerd://1.7.24"
OS_IMAGE = "Ubuntu 24.04.1 LTS"
KERNEL_VERSION = "6.8.0-49-generic"
KUBELET_PORT = 10250
MAX_NODE_IMAGES = 50  # kubelet --node-status-max-images default
DEFAULT_IMAGE_SIZE = 1024 * 1024

# (type, reason, message) of the healthy conditions, in kubelet's order.
_HEALTHY_CONDITIONS: tuple[tuple[str, str, str, str], ...] = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


@dataclass(slots=True)
class FleetOptions:
    """Timings (kubelet defaults) and concurrency limits of the simulated fleet."""

    lease_duration_seconds: int = 40
    renew_interval: float = 10.0
    renew_jitter: float = 0.04
    status_report_frequency: float = 300.0
    registration_parallelism: int = 64
    lease_parallelism: int = 64
    workers: int = 8
    # the crash-loop back-off of container restarts (kubelet_sim.stages.restarts): 10 s doubling
    # to 5 min (kubelet's crashLoopBackOff.maxContainerRestartPeriod default)
    initial_restart_period: float = 10.0
    max_container_restart_period: float = 300.0


@dataclass(slots=True)
class NodeState:
    """Hot per-node state of the agent."""

    name: str
    index: int
    manifest: JsonDict
    internal_ip: str
    pod_cidr: str
    ipam: IpPool
    declared_images: dict[str, int] = field(default_factory=dict)  # normalised name -> size
    images: dict[str, JsonDict] = field(default_factory=dict)  # normalised tag -> {names, sizeBytes}
    uid: str = ""
    registered: bool = False
    failed: bool = False
    gone: bool = False
    dirty: bool = False
    last_report: float = float("-inf")
    server_conditions: dict[str, str] = field(default_factory=dict)  # type -> status seen on server
    transitions: dict[str, str] = field(default_factory=dict)  # type -> our lastTransitionTime
    renewals: int = 0
    lease: JsonDict | None = None  # the Lease as last written (read-only: the store's object)
    host_ips: tuple[str, ...] = ()  # the node IPs pods report as hostIPs (internal_ip first)
    unschedulable: bool = False  # spec.unschedulable as the kubelet last saw it (lastNodeUnschedulable)


def _node_owner(st: NodeState) -> list[JsonDict]:
    """The Lease's ownerReferences: its Node (the kubelet's setNodeOwnerFunc)."""
    return [{"apiVersion": "v1", "kind": "Node", "name": st.name, "uid": st.uid}]


# kubelet v1.33's CSI migration: the in-tree volume plugins served by their CSI drivers (all on
# by default; Portworx's gate too), as the CSINode annotation lists them (sorted, comma-joined)
MIGRATED_PLUGINS = ("kubernetes.io/aws-ebs", "kubernetes.io/azure-disk", "kubernetes.io/azure-file",
                    "kubernetes.io/cinder", "kubernetes.io/gce-pd", "kubernetes.io/portworx-volume",
                    "kubernetes.io/vsphere-volume")
ANNOTATION_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"


def csinode_object(name: str, node_uid: str) -> JsonDict:
    """The CSINode a kubelet creates for its node."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": name, "annotations": {ANNOTATION_MIGRATED_PLUGINS: ",".join(MIGRATED_PLUGINS)},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": node_uid}]},
            "spec": {"drivers": []}}


def _boot_id(name: str, salt: str) -> str:
    h = hashlib.sha256(f"{salt}/{name}".encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


class NodeAgent:
    def __init__(self, nodes: list[JsonDict], *, client: Client, node_informer: Any | None = None,
                 clock: Clock | None = None, rng: random.Random | None = None,
                 options: FleetOptions | None = None, recorder: EventRecorder | None = None) -> None:
        self._client = client
        self._recorder = recorder  # the kubelets' Events about their Nodes; None: none
        self._clock = clock or Clock()
        self._rng = rng or random.Random()
        self.options = options or FleetOptions()
        self.nodes: dict[str, NodeState] = {}
        for i, manifest in enumerate(nodes, 1):
            self._add_state(i, manifest)
        self._heap: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        self._wake = asyncio.Event()
        self.on_recover: Callable[[str], None] | None = None
        if node_informer is not None:
            node_informer.add_handler(on_add=self._on_node, on_update=lambda _old, new: self._on_node(new),
                                      on_delete=self._on_node_delete)

    def _add_state(self, index: int, manifest: JsonDict) -> None:
        name = manifest["metadata"]["name"]
        spec = manifest.get("spec") or {}
        status = manifest.get("status") or {}
        host_ips = node_host_ips(status.get("addresses") or []) or [node_internal_ip(index)]
        internal = host_ips[0]
        cidr = spec.get("podCIDR") or node_pod_cidr(index)
        st = NodeState(name=name, index=index, manifest=manifest, internal_ip=internal, pod_cidr=cidr,
                       ipam=IpPool(cidr), host_ips=tuple(host_ips))
        for im in status.get("images") or []:
            size = int(im.get("sizeBytes") or 0)
            for n in im.get("names") or []:
                st.declared_images[normalize_image(n)] = size
            if im.get("names"):
                st.images[normalize_image(im["names"][-1])] = {"names": list(im["names"]), "sizeBytes": size}
        annotations = (manifest.get("metadata") or {}).get("annotations") or {}
        st.failed = annotations.get(ANNOTATION_FAILED) == "true"
        self.nodes[name] = st

    # -- what the stage controller asks -----------------------------------------------------

    def has_node(self, name: str | None) -> bool:
        return name is not None and name in self.nodes

    def allocatable(self, name: str) -> dict[str, int]:
        """The node's status.allocatable (cpu in millicores), as its kubelet admits pods against."""
        st = self.nodes.get(name)
        return node_allocatable(st.manifest) if st is not None else {}

    def is_failed(self, name: str) -> bool:
        st = self.nodes.get(name)
        return st is None or st.failed or st.gone

    def host_ip(self, name: str) -> str:
        return self.nodes[name].internal_ip

    def host_ips(self, name: str) -> tuple[str, ...]:
        """The node's IPs as a kubelet reports them in a pod's hostIPs (and a hostNetwork pod's
        podIPs): the primary, then one of the other IP family when the node is dual-stack."""
        st = self.nodes[name]
        return st.host_ips or (st.internal_ip,)

    def allocate_ip(self, name: str) -> str:
        return self.nodes[name].ipam.allocate()

    def reserve_ip(self, name: str, ip: str) -> bool:
        st = self.nodes.get(name)
        return st is not None and st.ipam.reserve(ip)

    def release_ip(self, name: str, ip: str) -> None:
        st = self.nodes.get(name)
        if st is not None:
            st.ipam.release(ip)

    def has_image(self, name: str, image: str) -> bool:
        """Whether node `name` holds `image` (normalised): declared in its manifest or pulled."""
        st = self.nodes.get(name)
        return st is not None and (image in st.images or image in st.declared_images)

    def image_size(self, name: str, image: str, *, size_hint: int | None) -> int:
        """The size node `name` reports for `image` once pulled (note_images' rule)."""
        st = self.nodes.get(name)
        size = st.declared_images.get(image) if st is not None else None
        if size is None:
            size = size_hint if size_hint is not None else DEFAULT_IMAGE_SIZE
        return size

    def note_images(self, name: str, images: list[str], *, size_hint: int | None) -> None:
        """Images pulled for a pod now show in node.status.images (sent with the next status)."""
        st = self.nodes.get(name)
        if st is None:
            return
        for ref in images:
            if ref in st.images:
                continue
            st.images[ref] = {"names": [image_id(ref), ref], "sizeBytes": self.image_size(name, ref, size_hint=size_hint)}
            st.dirty = True

    # -- node objects ------------------------------------------------------------------------

    def _conditions(self, st: NodeState) -> list[JsonDict]:
        now = rfc3339(self._clock.now())
        out = []
        for ctype, status, reason, message in _HEALTHY_CONDITIONS:
            seen = st.server_conditions.get(ctype)
            if ctype not in st.transitions or (seen is not None and seen != status):
                st.transitions[ctype] = now
            out.append({"type": ctype, "status": status, "lastHeartbeatTime": now,
                        "lastTransitionTime": st.transitions[ctype], "reason": reason, "message": message})
        return out

    def _images(self, st: NodeState) -> list[JsonDict]:
        ims = sorted(st.images.values(), key=lambda im: -int(im["sizeBytes"]))
        return [copy.deepcopy(im) for im in ims[:MAX_NODE_IMAGES]]

    def node_status(self, st: NodeState) -> JsonDict:
        """The full status a kubelet reports for this node."""
        base = copy.deepcopy(st.manifest.get("status") or {})
        labels = (st.manifest.get("metadata") or {}).get("labels") or {}
        base["conditions"] = self._conditions(st)
        base.setdefault("addresses", [{"type": "InternalIP", "address": st.internal_ip},
                                      {"type": "Hostname", "address": st.name}])
        base["daemonEndpoints"] = {"kubeletEndpoint": {"Port": KUBELET_PORT}}
        info = {
            "machineID": _boot_id(st.name, "machine").replace("-", ""),
            "systemUUID": _boot_id(st.name, "system"),
            "bootID": _boot_id(st.name, "boot"),
            "kernelVersion": KERNEL_VERSION,
            "osImage": OS_IMAGE,
            "containerRuntimeVersion": CONTAINER_RUNTIME_VERSION,
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": "",
            "operatingSystem": labels.get("kubernetes.io/os", "linux"),
            "architecture": labels.get("kubernetes.io/arch", "amd64"),
        }
        info.update(base.get("nodeInfo") or {})
        base["nodeInfo"] = info
        base["images"] = self._images(st)
        return base

    def _node_object(self, st: NodeState) -> JsonDict:
        obj = copy.deepcopy(st.manifest)
        # initialNode: the kubelet (--enable-controller-attach-detach, default true) lets the
        # attach/detach controller manage the node's volumes
        md = obj.setdefault("metadata", {})
        md["annotations"] = {ANNOTATION_CONTROLLER_MANAGED_ATTACH: "true", **(md.get("annotations") or {})}
        obj.setdefault("spec", {})
        obj["spec"].setdefault("podCIDR", st.pod_cidr)
        obj["spec"].setdefault("podCIDRs", [st.pod_cidr])
        obj["status"] = self.node_status(st)
        return obj

    def _lease(self, st: NodeState) -> JsonDict:
        lease: JsonDict = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": st.name, "namespace": NODE_LEASE_NAMESPACE},
            "spec": {"holderIdentity": st.name,
                     "leaseDurationSeconds": self.options.lease_duration_seconds,
                     "renewTime": rfc3339_micro(self._clock.now())},
        }
        if st.uid:
            lease["metadata"]["ownerReferences"] = _node_owner(st)
        return lease

    # -- registration ------------------------------------------------------------------------

    async def _ensure_lease_namespace(self) -> None:
        try:
            await self._client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                   "metadata": {"name": NODE_LEASE_NAMESPACE}}, read_only=True)
        except (AlreadyExistsError, ConflictError):
            pass

    async def register_all(self) -> None:
        """Create (or take over) every Node and its Lease; returns when all are registered."""
        if not self.nodes:
            return
        await self._ensure_lease_namespace()
        sem = asyncio.Semaphore(self.options.registration_parallelism)
        start = self._clock.monotonic()

        async def one(st: NodeState) -> None:
            async with sem:
                await self._register(st)

        async with asyncio.TaskGroup() as tg:
            for st in self.nodes.values():
                tg.create_task(one(st), name=f"kubelet-sim-register-{st.name}")
        await self._ensure_csinodes(sem)
        now = self._clock.monotonic()
        period = self.options.renew_interval
        for st in self.nodes.values():
            self._schedule(st.name, now + self._rng.uniform(0, period))
        logger.info("registered simulated nodes count=%d seconds=%.2f", len(self.nodes), now - start)

    async def _ensure_csinodes(self, sem: asyncio.Semaphore) -> None:
        """Each registered node's CSINode, as the kubelet's CSI node-info manager creates it at
        start (InitializeCSINodeWithAnnotation): named after the node, owned by it, no drivers
        (no CSI driver registers on a simulated node), and the in-tree plugins whose CSI
        migration is on. One LIST, then a create per node that has none (a restart creates
        nothing)."""
        try:
            have = {(o.get("metadata") or {}).get("name") for o in (await self._client.list(CSINODES))["items"]}
        except ApiError as err:
            logger.warning("listing CSINodes failed: %s", err)
            return

        async def one(st: NodeState) -> None:
            async with sem:
                try:
                    await self._client.create(CSINODES, csinode_object(st.name, st.uid), read_only=True)
                except AlreadyExistsError:
                    pass
                except ApiError as err:
                    logger.warning("creating the CSINode of node=%s failed: %s", st.name, err)

        async with asyncio.TaskGroup() as tg:
            for st in self.nodes.values():
                if st.registered and st.uid and st.name not in have:
                    tg.create_task(one(st), name=f"kubelet-sim-csinode-{st.name}")

    async def _register(self, st: NodeState) -> None:
        body = self._node_object(st)
        reported: dict[str, str] = {}  # the conditions a Node taken over already had
        try:
            node = await self._client.create(NODES, body)
            if not (node.get("status") or {}).get("conditions"):
                node = dict(node)
                node["status"] = body["status"]
                node = await self._client.update_status(NODES, node)
        except AlreadyExistsError:
            node = await self._take_over(st, body)
            reported = dict(st.server_conditions)
        st.uid = (node.get("metadata") or {}).get("uid", "")
        st.failed = ((node.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_FAILED) == "true"
        st.registered = True
        st.last_report = self._clock.monotonic()
        if not st.failed:
            self._startup_events(st, reported, bool((node.get("spec") or {}).get("unschedulable")))
            await self._write_lease(st, create=True)

    def _event(self, st: NodeState, reason: str, message: str) -> None:
        if self._recorder is not None:
            self._recorder.event(node_ref(st.name), NORMAL, reason, message, host=st.name)

    def _startup_events(self, st: NodeState, reported: dict[str, str], unschedulable: bool) -> None:
        """A starting kubelet's Node Events (once per registration, never per heartbeat); a Node
        registered cordoned also gets NodeNotSchedulable (lastNodeUnschedulable starts false)."""
        for reason, message in node_startup_events(st.name, reported):
            self._event(st, reason, message)
        self._note_unschedulable(st, unschedulable)

    def _note_unschedulable(self, st: NodeState, unschedulable: bool) -> None:
        if unschedulable != st.unschedulable:
            st.unschedulable = unschedulable
            self._event(st, *node_schedulable_event(st.name, unschedulable))

    async def _take_over(self, st: NodeState, body: JsonDict) -> JsonDict:
        """A Node of that name exists (a previous run, or made by hand): report our status on it,
        keeping its metadata and spec, and the transition times of conditions that do not change."""
        healthy = {ctype: status for ctype, status, _, _ in _HEALTHY_CONDITIONS}
        for _ in range(5):
            existing = await self._client.get(NODES, st.name)
            for c in (existing.get("status") or {}).get("conditions") or []:
                ctype = c.get("type", "")
                st.server_conditions[ctype] = c.get("status", "")
                if c.get("status") == healthy.get(ctype) and c.get("lastTransitionTime"):
                    st.transitions[ctype] = c["lastTransitionTime"]
            obj = copy.deepcopy(existing)
            obj["status"] = self.node_status(st)
            try:
                return await self._client.update_status(NODES, obj)
            except ConflictError:
                continue
        return await self._client.get(NODES, st.name)

    def _renewed(self, st: NodeState, base: JsonDict) -> JsonDict:
        """upstream lease controller's newLease: `base` with this node as holder, the configured
        duration, renewTime now, and the Node as owner when the Lease has no owner yet."""
        lease = dict(base)
        spec = dict(base.get("spec") or {})
        spec["holderIdentity"] = st.name
        spec["leaseDurationSeconds"] = self.options.lease_duration_seconds
        spec["renewTime"] = rfc3339_micro(self._clock.now())
        lease["spec"] = spec
        meta = base.get("metadata") or {}
        if st.uid and not meta.get("ownerReferences"):
            lease["metadata"] = {**meta, "ownerReferences": _node_owner(st)}
        return lease

    async def _write_lease(self, st: NodeState, *, create: bool = False) -> None:
        """Renew as the kubelet's lease controller does: an Update (PUT) of the Lease last
        written, with a new renewTime; a conflict (someone else wrote it) reads it again and
        retries once; a Lease that is gone is created again."""
        if not create and st.lease is not None:
            base: JsonDict | None = st.lease
            for _ in range(2):
                assert base is not None
                try:
                    st.lease = await self._client.update(LEASES, self._renewed(st, base), read_only=True)
                    st.renewals += 1
                    return
                except ConflictError:
                    try:
                        base = await self._client.get(LEASES, st.name, NODE_LEASE_NAMESPACE)
                    except NotFoundError:
                        break
                except NotFoundError:
                    break
            else:
                raise ConflictError(f"lease {NODE_LEASE_NAMESPACE}/{st.name} kept changing")
        try:
            st.lease = await self._client.create(LEASES, self._lease(st), NODE_LEASE_NAMESPACE, read_only=True)
        except AlreadyExistsError:
            existing = await self._client.get(LEASES, st.name, NODE_LEASE_NAMESPACE)
            st.lease = await self._client.update(LEASES, self._renewed(st, existing), read_only=True)
        st.renewals += 1

    # -- heartbeats --------------------------------------------------------------------------

    def _schedule(self, name: str, due: float) -> None:
        heapq.heappush(self._heap, (due, next(self._seq), name))

    def _next_period(self) -> float:
        return self.options.renew_interval * (1 + self.options.renew_jitter * self._rng.random())

    async def _heartbeat(self, st: NodeState) -> None:
        if st.failed or st.gone or not st.registered:
            return
        try:
            await self._write_lease(st)
            now = self._clock.monotonic()
            if st.dirty or now - st.last_report >= self.options.status_report_frequency:
                st.dirty = False
                await self._client.patch(NODES, st.name, {"status": self.node_status(st)},
                                         subresource="status", read_only=True)
                st.last_report = now
        except NotFoundError:
            logger.info("simulated node is gone, stopping its heartbeats node=%s", st.name)
            st.gone = True
        except (ApiError, OSError) as e:
            logger.warning("node heartbeat failed node=%s error=%s", st.name, e)

    async def run(self) -> None:
        """Renew leases and report status until cancelled (one task for the whole fleet)."""
        sem = asyncio.Semaphore(self.options.lease_parallelism)

        async def guarded(st: NodeState) -> None:
            async with sem:
                await self._heartbeat(st)

        while True:
            now = self._clock.monotonic()
            batch: list[NodeState] = []
            seen: set[str] = set()
            while self._heap and self._heap[0][0] <= now:
                _, _, name = heapq.heappop(self._heap)
                st = self.nodes.get(name)
                if st is None or name in seen:
                    continue
                seen.add(name)
                batch.append(st)
                self._schedule(name, now + self._next_period())
            if batch:
                async with asyncio.TaskGroup() as tg:
                    for st in batch:
                        tg.create_task(guarded(st), name=f"kubelet-sim-heartbeat-{st.name}")
                continue
            wait = self._heap[0][0] - now if self._heap else None
            await sleep_or_wake(self._clock, wait, self._wake)

    # -- node informer -----------------------------------------------------------------------

    def _on_node(self, node: JsonDict) -> None:
        meta = node.get("metadata") or {}
        st = self.nodes.get(meta.get("name", ""))
        if st is None:
            return
        if st.uid and meta.get("uid") and meta["uid"] != st.uid:
            # Deleted and re-created by someone else: a kubelet does not re-register after a delete.
            return
        for c in (node.get("status") or {}).get("conditions") or []:
            st.server_conditions[c.get("type", "")] = c.get("status", "")
        failed = (meta.get("annotations") or {}).get(ANNOTATION_FAILED) == "true"
        if st.registered and not failed:
            self._note_unschedulable(st, bool((node.get("spec") or {}).get("unschedulable")))
        if failed == st.failed:
            if not failed and st.server_conditions.get("Ready", "True") != "True":
                st.dirty = True  # someone (node lifecycle controller) disagrees: report at the next tick
            return
        st.failed = failed
        if failed:
            logger.info("simulated node failed node=%s", st.name)
            return
        logger.info("simulated node recovered node=%s", st.name)
        st.dirty = True
        self._schedule(st.name, self._clock.monotonic())
        self._wake.set()
        if self.on_recover is not None:
            self.on_recover(st.name)

    def _on_node_delete(self, node: JsonDict) -> None:
        meta = node.get("metadata") or {}
        st = self.nodes.get(meta.get("name", ""))
        if st is not None and (not st.uid or meta.get("uid") == st.uid):
            st.gone = True


def image_size_hint(pod: JsonDict) -> int | None:
    """The pod annotation sim.minik3s.io/image-size as bytes ("250Mi" → 262144000), if valid."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get("sim.minik3s.io/image-size")
    if raw is None:
        return None
    try:
        return int_value(raw)
    except (QuantityError, TypeError):
        return None


async def fail_node(client: Client, name: str) -> JsonDict:
    """Mark a simulated node failed: it stops renewing its Lease and progressing its pods."""
    return await client.patch(NODES, name, {"metadata": {"annotations": {ANNOTATION_FAILED: "true"}}})


async def recover_node(client: Client, name: str) -> JsonDict:
    """Remove the failure annotation: the node renews its Lease and reports Ready again."""
    return await client.patch(NODES, name, {"metadata": {"annotations": {ANNOTATION_FAILED: None}}})
