"""Node lifecycle controller (layer L4), after kube-controller-manager's
`pkg/controller/nodelifecycle` (monitorNodeHealth, TaintNodesByCondition, NoExecute tainting).

- Health: every `node_monitor_period` each node's liveness is checked. A node is alive while
  its Lease (`kube-node-lease/<node>`) renewTime or its Ready heartbeat keeps changing; the
  controller notes *when it observed* the last change on its own clock (upstream's
  probeTimestamp). After `node_monitor_grace_period` without one (the startup grace period
  for a node that never posted Ready), Ready/MemoryPressure/DiskPressure/PIDPressure become
  Unknown ("NodeStatusUnknown", "Kubelet stopped posting node status.") and the node's pods
  are marked not Ready.
- NoExecute taints: Ready=False -> `node.kubernetes.io/not-ready:NoExecute`, Ready=Unknown ->
  `node.kubernetes.io/unreachable:NoExecute`, Ready=True -> neither. (Upstream rate-limits
  this per zone; here every node is tainted at once.)
- Events (source `node-controller`, as upstream's recorder): `RegisteredNode` "Node n1 event:
  Registered Node n1 in Controller" for every node a monitor pass sees first (so for every node
  again after a restart, as upstream), `RemovingNode` when one is gone, and the NodeNotReady /
  NodeReady status changes.
- NoSchedule taints (TaintNodesByCondition): not-ready / unreachable from Ready, memory-,
  disk-, pid-pressure and network-unavailable from their conditions, `unschedulable` from
  `spec.unschedulable`.

Data flow: Node/Lease informers -> monitor pass (periodic) and node-name work queue ->
`nodes/status` writes for conditions, node updates for taints, `pods/status` for Ready=False.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass

from minik3s.api.errors import ConflictError, NotFoundError
from minik3s.api.resources import LEASES, NODES, PODS
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import meta, now_str, run_workers
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

NODE_LEASE_NAMESPACE = "kube-node-lease"
NODE_NAME_INDEX = "spec.nodeName"

TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_PID_PRESSURE = "node.kubernetes.io/pid-pressure"
TAINT_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"

# nodeConditionToTaintKeyStatusMap
CONDITION_TAINTS: dict[str, dict[str, str]] = {
    "Ready": {"False": TAINT_NOT_READY, "Unknown": TAINT_UNREACHABLE},
    "MemoryPressure": {"True": TAINT_MEMORY_PRESSURE},
    "DiskPressure": {"True": TAINT_DISK_PRESSURE},
    "NetworkUnavailable": {"True": TAINT_NETWORK_UNAVAILABLE},
    "PIDPressure": {"True": TAINT_PID_PRESSURE},
}
NO_SCHEDULE_KEYS = {k for m in CONDITION_TAINTS.values() for k in m.values()} | {TAINT_UNSCHEDULABLE}
NO_EXECUTE_KEYS = {TAINT_NOT_READY, TAINT_UNREACHABLE}
HEALTH_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


def node_name_index(pod: JsonDict) -> list[str]:
    n = (pod.get("spec") or {}).get("nodeName")
    return [n] if n else []


def node_condition(node: JsonDict, ctype: str) -> JsonDict | None:
    for c in (node.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == ctype:
            return c if isinstance(c, dict) else None
    return None


def desired_no_schedule_taints(node: JsonDict) -> list[JsonDict]:
    """doNoScheduleTaintingPass: the NoSchedule taints the conditions and spec imply."""
    out: list[JsonDict] = []
    for c in (node.get("status") or {}).get("conditions") or []:
        if not isinstance(c, dict):
            continue  # a null entry (Go decodes it as an empty NodeCondition)
        key = CONDITION_TAINTS.get(str(c.get("type")), {}).get(str(c.get("status")))
        if key:
            out.append({"key": key, "effect": "NoSchedule"})
    if (node.get("spec") or {}).get("unschedulable"):
        out.append({"key": TAINT_UNSCHEDULABLE, "effect": "NoSchedule"})
    return out


def desired_no_execute_taint(node: JsonDict) -> str | None:
    """doNoExecuteTaintingPass: not-ready for Ready=False, unreachable for Unknown."""
    ready = node_condition(node, "Ready")
    if ready is None:
        return None
    status = ready.get("status")
    if status == "False":
        return TAINT_NOT_READY
    if status == "Unknown":
        return TAINT_UNREACHABLE
    return None


def reconcile_taints(node: JsonDict, *, now: str) -> list[JsonDict] | None:
    """The node's full taint list after both passes, or None when nothing changes.
    Taints the controller does not manage are kept in place."""
    current = list((node.get("spec") or {}).get("taints") or [])
    want_ns = {t["key"] for t in desired_no_schedule_taints(node)}
    want_ne = desired_no_execute_taint(node)
    out: list[JsonDict] = []
    have_ns: set[str] = set()
    have_ne: set[str] = set()
    for t in current:
        key, effect = t.get("key"), t.get("effect")
        if effect == "NoSchedule" and key in NO_SCHEDULE_KEYS:
            if key not in want_ns or key in have_ns:
                continue
            have_ns.add(str(key))
        elif effect == "NoExecute" and key in NO_EXECUTE_KEYS:
            if key != want_ne or key in have_ne:
                continue
            have_ne.add(str(key))
        out.append(t)
    for key in sorted(want_ns - have_ns):
        out.append({"key": key, "effect": "NoSchedule"})
    if want_ne and want_ne not in have_ne:
        out.append({"key": want_ne, "effect": "NoExecute", "timeAdded": now})
    return None if out == current else out


def mark_unknown(node: JsonDict, *, now: str) -> bool:
    """Set the health conditions Unknown (tryUpdateNodeHealth); True when anything changed."""
    status = node.setdefault("status", {})
    conds = status.setdefault("conditions", [])
    changed = False
    for ctype in HEALTH_CONDITIONS:
        cur = next((c for c in conds if c.get("type") == ctype), None)
        if cur is None:
            conds.append({"type": ctype, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                          "message": "Kubelet never posted node status.",
                          "lastHeartbeatTime": meta(node).get("creationTimestamp"), "lastTransitionTime": now})
            changed = True
        elif cur.get("status") != "Unknown":
            cur.update({"status": "Unknown", "reason": "NodeStatusUnknown",
                        "message": "Kubelet stopped posting node status.", "lastTransitionTime": now})
            changed = True
    return changed


@dataclass(slots=True)
class NodeHealth:
    """What the controller last observed for a node, and when (on its own clock)."""

    probe: float
    heartbeat: str | None
    lease_renew: str | None


def node_ref(name: str, uid: str) -> JsonDict:
    """The ObjectReference RecordNodeEvent / RecordNodeStatusChange report about (no
    namespace, no resourceVersion), as an object for the EventRecorder."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": uid}}


class NodeLifecycleController:
    NAME = "node-lifecycle-controller"
    EVENT_SOURCE = "node-controller"  # the event source component upstream's recorder uses

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None,
                 node_monitor_period: float = 5.0, node_monitor_grace_period: float = 50.0,
                 node_startup_grace_period: float = 60.0) -> None:
        self._client = client
        self._clock = clock or Clock()
        self.monitor_period = node_monitor_period
        self.grace_period = node_monitor_grace_period
        self.startup_grace_period = node_startup_grace_period
        self._nodes = informers.informer(NODES)
        self._leases = informers.informer(LEASES, NODE_LEASE_NAMESPACE)
        self._pods = informers.informer(PODS)
        self._pods.add_index(NODE_NAME_INDEX, node_name_index)
        self.health: dict[str, NodeHealth] = {}
        self.queue = WorkQueue()
        self.recorder = EventRecorder(client, self.EVENT_SOURCE, clock=self._clock)
        self._known: dict[str, str] = {}  # knownNodeSet: name -> uid of the nodes seen by a pass
        self._nodes.add_handler(on_add=self._node_changed, on_update=lambda _o, n: self._node_changed(n),
                                on_delete=self._node_deleted)

    def _node_changed(self, node: JsonDict) -> None:
        self.queue.add(str(meta(node).get("name")))

    def _node_deleted(self, node: JsonDict) -> None:
        self.health.pop(str(meta(node).get("name")), None)

    async def run(self, workers: int = 2) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            for inf in (self._nodes, self._leases, self._pods):
                await inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(run_workers(self.queue, self.sync_taints, workers=workers, name=self.NAME),
                           name=f"{self.NAME}-taints")
            tg.create_task(self._monitor_loop(), name=f"{self.NAME}-monitor")

    async def _monitor_loop(self) -> None:
        while True:
            try:
                await self.monitor_node_health()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("%s: monitor pass failed", self.NAME)
            await self._clock.sleep(self.monitor_period)

    # ---- health

    def _observe(self, node: JsonDict) -> tuple[NodeHealth, float]:
        name = str(meta(node).get("name"))
        ready = node_condition(node, "Ready")
        heartbeat = ready.get("lastHeartbeatTime") if ready else None
        lease = self._leases.store.get(f"{NODE_LEASE_NAMESPACE}/{name}")
        renew = (lease.get("spec") or {}).get("renewTime") if lease else None
        now = self._clock.monotonic()
        h = self.health.get(name)
        if h is None:
            h = NodeHealth(now, heartbeat, renew)
            self.health[name] = h
        elif heartbeat != h.heartbeat or renew != h.lease_renew:
            h.probe, h.heartbeat, h.lease_renew = now, heartbeat, renew
        grace = self.grace_period if ready is not None else self.startup_grace_period
        return h, grace

    async def monitor_node_health(self) -> None:
        """One monitorNodeHealth pass over every node."""
        nodes = self._nodes.store.list()
        self._record_added_and_deleted(nodes)
        for node in nodes:
            h, grace = self._observe(node)
            if self._clock.monotonic() - h.probe <= grace:
                continue
            ready = node_condition(node, "Ready")
            if ready is not None and ready.get("status") == "Unknown":
                continue
            await self._mark_unknown(str(meta(node).get("name")))

    def _record_added_and_deleted(self, nodes: list[JsonDict]) -> None:
        """classifyNodes' added / deleted nodes: `RegisteredNode` / `RemovingNode` Events."""
        seen: dict[str, str] = {}
        for node in nodes:
            name, uid = str(meta(node).get("name")), str(meta(node).get("uid") or "")
            seen[name] = uid
            if name not in self._known:
                self._node_event(name, uid, "RegisteredNode", f"Registered Node {name} in Controller")
        for name, uid in self._known.items():
            if name not in seen:
                self._node_event(name, uid, "RemovingNode", f"Removing Node {name} from Controller")
        self._known = seen

    def _node_event(self, name: str, uid: str, reason: str, event: str) -> None:
        """RecordNodeEvent: "Node <name> event: <event>"."""
        self.recorder.event(node_ref(name, uid), "Normal", reason, f"Node {name} event: {event}")

    async def _mark_unknown(self, name: str) -> None:
        for _ in range(3):
            try:
                node = await self._client.get(NODES, name)
            except NotFoundError:
                return
            body = copy.deepcopy(node)
            was_ready = (node_condition(node, "Ready") or {}).get("status") == "True"
            if not mark_unknown(body, now=now_str(self._clock)):
                return
            try:
                await self._client.update_status(NODES, body, read_only=True)
            except ConflictError:
                continue
            logger.info("%s: node=%s stopped posting status; Ready=Unknown", self.NAME, name)
            self.recorder.event(node_ref(name, str(meta(node).get("uid") or "")), "Normal", "NodeNotReady",
                                f"Node {name} status is now: NodeNotReady")
            if was_ready:
                await self._mark_pods_not_ready(name)
            return

    async def _mark_pods_not_ready(self, node_name: str) -> None:
        """MarkPodsNotReady: each pod on the node gets Ready=False."""
        now = now_str(self._clock)
        for pod in self._pods.by_index(NODE_NAME_INDEX, node_name):
            conds = (pod.get("status") or {}).get("conditions") or []
            if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds):
                continue
            body = copy.deepcopy(pod)
            for c in body["status"]["conditions"]:
                if c.get("type") in ("Ready", "ContainersReady") and c.get("status") == "True":
                    c["status"] = "False"
                    c["lastTransitionTime"] = now
            try:
                await self._client.update_status(PODS, body, read_only=True)
            except (NotFoundError, ConflictError):
                continue
            self.recorder.event(pod, "Warning", "NodeNotReady", "Node is not ready")

    # ---- taints

    async def sync_taints(self, name: str) -> None:
        node = self._nodes.store.get(name)
        if node is None:
            return
        taints = reconcile_taints(node, now=now_str(self._clock))
        if taints is None:
            return
        body = copy.deepcopy(node)
        body.setdefault("spec", {})["taints"] = taints
        try:
            await self._client.update(NODES, body, read_only=True)
        except NotFoundError:
            return
        logger.info("%s: node=%s taints=%s", self.NAME, name,
                    [f"{t.get('key')}:{t.get('effect')}" for t in taints])
        if node_condition(node, "Ready") and (node_condition(node, "Ready") or {}).get("status") == "True":
            had = {t.get("key") for t in (node.get("spec") or {}).get("taints") or [] if isinstance(t, dict)}
            if had & NO_EXECUTE_KEYS:
                self.recorder.event(node_ref(name, str(meta(node).get("uid") or "")), "Normal", "NodeReady",
                                    f"Node {name} status is now: NodeReady")
