"""The generic stage controller: drives pods on simulated nodes through the stages (layer L4).

Why: one controller for the whole fleet keeps 1,000 nodes cheap — one shared pod informer (not a
watch per node), one keyed queue, one timer heap, a few workers — while each pod key is handled
in order, never by two workers at once.

`KubeletFleet` (bottom of this module) is the entry point the composition root starts: it wires
the `NodeAgent` (register, leases, node status) and this controller to the shared informers:

    fleet = KubeletFleet(parse_fleet(args.nodes), client=client, informers=factory)
    tg.create_task(fleet.run(), name="kubelet-fleet")      # registers, then runs until cancelled

Data flow: pod informer event → (pod bound to one of our nodes?) → queue key → sync(key):
  1. the pod vanished → free its IP, forget it;
  2. its node is failed → do nothing (a failed node's pods do not progress; a recovery re-queues);
  3. pick the first matching stage (kubelet_sim/stages/defaults/*.yaml). The stage's delay runs
     from the moment it first matched: due = since + delay(annotation or default) + jitter;
     a stage with `notAfter: GracePeriodEnd` is cut at the end of the deletion grace period, which
     is recomputed on every update: deadline = min(deadline, now + deletionGracePeriodSeconds)
     when a later DELETE shortened it. Worked example: shutdown-seconds 100, deleted with grace 3
     at t=0 → due = min(0+100, 0+3) = 3 → containers killed (exit 137) at t=3;
  4. not due yet → timer (add_after); due → apply `next`: status step (PUT /status with the cached
     resourceVersion: a stale cache conflicts and the newer event re-queues the key), finalizer
     changes, or DELETE gracePeriodSeconds=0 with a uid precondition (once per pod uid).
  Before 3, a running pod's probes (kubelet_sim.stages.probes): containers whose startup or
  readiness delay is over are marked started/ready (one status write), the rest get a timer
  beside the stage's (the queue keeps the earliest per pod).
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Protocol

from kubelet_sim.config import parse_fleet
from kubelet_sim.events import (
    ContainerEvent,
    backoff_events,
    containers_created,
    killing_events,
    pulling_events,
    started_events,
)
from kubelet_sim.image_pull import REASONS as IMAGE_REASONS
from kubelet_sim.image_pull import PullMemory, image_problem, with_blocked
from kubelet_sim.keyqueue import KeyQueue
from kubelet_sim.kubelet_config import kubelet_configuration
from kubelet_sim.node_agent import (
    MAX_NODE_IMAGES,
    FleetOptions,
    NodeAgent,
    fail_node,
    image_size_hint,
    recover_node,
)
from kubelet_sim.prober import Prober, ProbeResult, evaluate, has_run_probes
from kubelet_sim.stages import init_containers, probes, resize
from kubelet_sim.stages.lifecycle import (
    STATUS_STEPS,
    StepContext,
    ephemeral_pending,
    pod_images,
    regenerate_conditions,
    set_pod_ips,
    start_unblocked,
    step_base,
)
from kubelet_sim.stages.model import Stage, load_default_stages, select_stage
from kubelet_sim.stages.restarts import BackoffPolicy, CrashLoop, plan, restart_status
from kubelet_sim.usage import UsageSource
from minik3s.api.addons import CLUSTER_DNS_IP
from minik3s.api.errors import ApiError, ConflictError, NotFoundError
from minik3s.api.helpers import process_exits
from minik3s.api.helpers.resources import pod_requests
from minik3s.api.resources import ENDPOINTS, NODES, PODS, SERVICES
from minik3s.api.types import JsonDict
from minik3s.client.interface import Client
from minik3s.client.kubeconfig import ClusterAccess
from minik3s.client.record import LRU_CACHE_ENTRIES, EventRecorder
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

__all__ = ["FleetOptions", "KubeletFleet", "StageController", "fail_node", "recover_node", "run_standalone"]

TERMINAL_PHASES = ("Succeeded", "Failed")
RETRY_SECONDS = 1.0
RESIZE_RETRY_SECONDS = 60.0  # a deferred resize is retried each sync period (kubelet syncFrequency)


class NodeDirectory(Protocol):
    """What the controller needs to know about the simulated nodes (NodeAgent provides it)."""

    def has_node(self, name: str | None) -> bool: ...
    def is_failed(self, name: str) -> bool: ...
    def allocatable(self, name: str) -> dict[str, int]: ...
    def host_ip(self, name: str) -> str: ...
    def host_ips(self, name: str) -> tuple[str, ...]: ...
    def allocate_ip(self, name: str) -> str: ...
    def reserve_ip(self, name: str, ip: str) -> bool: ...
    def release_ip(self, name: str, ip: str) -> None: ...
    def note_images(self, name: str, images: list[str], *, size_hint: int | None) -> None: ...
    def has_image(self, name: str, image: str) -> bool: ...
    def image_size(self, name: str, image: str, *, size_hint: int | None) -> int: ...


@dataclass(slots=True)
class PodRecord:
    """What the simulated kubelet remembers about one pod (by key; reset when the uid changes)."""

    uid: str
    node: str
    stage: str | None = None
    since: float = 0.0
    jitter: float = 0.0
    grace_deadline: float | None = None
    grace_seen: int | None = None
    ip: str | None = None
    delete_sent: bool = False
    # container Events: fieldPaths whose images are being pulled, and since when (monotonic)
    pulling: set[str] | None = None
    pull_started: float = 0.0
    # the containers' restarts and crash-loop back-off (kubelet_sim.stages.restarts)
    crash: CrashLoop | None = None
    # images that cannot be used and the image pull back-off (kubelet_sim.image_pull)
    images: PullMemory | None = None
    # the probes' workers and kills (kubelet_sim.prober)
    probes: Prober | None = None


def _key(pod: JsonDict) -> str:
    meta = pod.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


def _node_of(pod: JsonDict) -> str | None:
    return (pod.get("spec") or {}).get("nodeName")


class StageController:
    def __init__(self, stages: list[Stage], *, client: Client, pod_informer: Any, nodes: NodeDirectory,
                 clock: Clock | None = None, rng: random.Random | None = None, workers: int = 8,
                 recorder: EventRecorder | None = None, backoff: BackoffPolicy | None = None) -> None:
        self._stages = stages
        self._backoff = backoff or BackoffPolicy()
        self._recorder = recorder  # the kubelet's container Events (kubelet_sim.events); None: none
        self._client = client
        self._informer = pod_informer
        self._nodes = nodes
        self._clock = clock or Clock()
        self._rng = rng or random.Random()
        self._workers = max(1, workers)
        self.queue = KeyQueue(self._clock)
        self.records: dict[str, PodRecord] = {}
        self._by_node: dict[str, set[str]] = {}
        pod_informer.add_handler(on_add=self._on_pod, on_update=lambda _old, new: self._on_pod(new),
                                 on_delete=self._on_pod_delete)
        self._unsubscribe = process_exits.subscribe(self._on_process_exit)

    def _on_process_exit(self, namespace: str, name: str) -> None:
        """The runtime saw a container process end (minik3s.api.helpers.process_exits)."""
        key = f"{namespace}/{name}"
        if key in self.records:
            self.queue.add(key)

    # -- informer handlers (sync, fast) -----------------------------------------------------

    def _on_pod(self, pod: JsonDict) -> None:
        node = _node_of(pod)
        if not self._nodes.has_node(node):
            return
        key = _key(pod)
        self._by_node.setdefault(node or "", set()).add(key)
        self.queue.add(key)
        if (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
            self._requeue_deferred(node)

    def _on_pod_delete(self, pod: Any) -> None:
        obj = pod if isinstance(pod, dict) else getattr(pod, "obj", None)  # tolerate tombstones
        if isinstance(obj, dict) and self._nodes.has_node(_node_of(obj)):
            self.queue.add(_key(obj))
            self._requeue_deferred(_node_of(obj))

    def _others_requests(self, node: str, key: str) -> dict[str, int]:
        """What the node's other active (not terminal) pods request: the "used" a resize is
        admitted against (the kubelet's canAdmitPod with every other allocated pod)."""
        used: dict[str, int] = {}
        for other in self._by_node.get(node, ()):
            if other == key:
                continue
            p = self._informer.store.get(other)
            if p is None or (p.get("status") or {}).get("phase") in TERMINAL_PHASES:
                continue
            for name, v in pod_requests(p).items():
                used[name] = used.get(name, 0) + v
        return used

    def _requeue_deferred(self, node: str | None) -> None:
        """A pod left the node or ended: deferred resizes there may fit now."""
        for other in list(self._by_node.get(node or "", ())):
            p = self._informer.store.get(other)
            if p is not None and (resize.pending(p) or {}).get("reason") == "Deferred":
                self.queue.add(other)

    def requeue_node(self, node: str) -> None:
        """Re-examine every pod of `node` (after it recovered from a simulated failure)."""
        for key in list(self._by_node.get(node, ())):
            self.queue.add(key)

    # -- run -----------------------------------------------------------------------------

    async def run(self) -> None:
        wait = getattr(self._informer, "wait_for_sync", None)
        if wait is not None:
            await wait()
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.queue.run_timers(), name="kubelet-sim-stage-timers")
                for i in range(self._workers):
                    tg.create_task(self._worker(), name=f"kubelet-sim-stage-worker-{i}")
        finally:
            self._unsubscribe()

    async def _worker(self) -> None:
        while True:
            key = await self.queue.get()
            try:
                await self.sync(key)
            except (ApiError, OSError) as e:
                logger.warning("stage sync failed, retrying pod=%s error=%s", key, e)
                self.queue.add_after(key, RETRY_SECONDS)
            except Exception:
                logger.exception("stage sync crashed, retrying pod=%s", key)
                self.queue.add_after(key, RETRY_SECONDS)
            finally:
                self.queue.done(key)

    # -- sync ----------------------------------------------------------------------------

    def _forget(self, key: str) -> None:
        rec = self.records.pop(key, None)
        if rec is None:
            return
        if rec.ip:
            self._nodes.release_ip(rec.node, rec.ip)
        keys = self._by_node.get(rec.node)
        if keys is not None:
            keys.discard(key)

    async def sync(self, key: str) -> None:
        pod = self._informer.store.get(key)
        rec = self.records.get(key)
        if pod is None:
            self._forget(key)
            return
        meta = pod.get("metadata") or {}
        uid = meta.get("uid", "")
        if rec is not None and rec.uid != uid:
            self._forget(key)
            rec = None
        node = _node_of(pod)
        if node is None or not self._nodes.has_node(node):
            return
        if self._nodes.is_failed(node):
            return
        status = pod.get("status") or {}
        if rec is None:
            rec = PodRecord(uid=uid, node=node)
            self.records[key] = rec
            self._by_node.setdefault(node, set()).add(key)
            ip = status.get("podIP")
            if ip and not (pod.get("spec") or {}).get("hostNetwork") and self._nodes.reserve_ip(node, ip):
                rec.ip = ip
        if status.get("phase") in TERMINAL_PHASES and rec.ip:
            self._nodes.release_ip(node, rec.ip)  # the sandbox is gone; the IP may be reused
            rec.ip = None
        now = self._clock.monotonic()
        if meta.get("deletionTimestamp"):
            grace = int(meta.get("deletionGracePeriodSeconds") or 0)
            if rec.grace_deadline is None or rec.grace_seen is None:
                rec.grace_deadline, rec.grace_seen = now + grace, grace
                if status.get("phase") not in TERMINAL_PHASES:
                    self._record(pod, node, killing_events(pod))
            elif grace < rec.grace_seen:
                rec.grace_deadline = min(rec.grace_deadline, now + grace)
                rec.grace_seen = grace
        if ephemeral_pending(pod):  # kubectl debug: the new ephemeral containers start at once
            self._try_images(key, pod, rec)  # unless their image cannot be used
            try:
                await self._write_status("EphemeralStarted", pod, rec, killed=False)
            except ConflictError:
                logger.debug("stale pod in cache, waiting for the newer event pod=%s", key)
            return
        if status.get("phase") == "Running" and not meta.get("deletionTimestamp"):
            # an in-place resize (kubelet_sim.stages.resize): admitted, deferred or infeasible,
            # then actuated; each written status re-queues the pod for the next step
            resized = resize.step(pod, self._nodes.allocatable(node), lambda: self._others_requests(node, key),
                                  self._context(rec, killed=False))
            if resized is not None:
                try:
                    await self._put_status(pod, rec, resized)
                except ConflictError:
                    logger.debug("stale pod in cache, waiting for the newer event pod=%s", key)
                return
            if (resize.pending(pod) or {}).get("reason") == "Deferred":
                self.queue.add_after(key, RESIZE_RETRY_SECONDS)
            # probes (kubelet_sim.stages.probes): beside the stages, on their own timer
            changes, wait = probes.due(pod, self._clock.now())
            if changes:
                try:
                    await self._put_status(pod, rec, probes.probes_passed(pod, self._context(rec, killed=False),
                                                                          changes))
                except ConflictError:
                    logger.debug("stale pod in cache, waiting for the newer event pod=%s", key)
                return  # the written status re-queues the pod
            if wait is not None:
                self.queue.add_after(key, max(wait, 0.0))
            if has_run_probes(pod) and await self._probe(key, pod, rec):
                return
        if await self._image_gate(key, pod, rec):
            return
        stage = select_stage(self._stages, pod)
        if stage is None:
            rec.stage = None
            return
        if stage.spec.next.restartContainers or stage.spec.next.initContainers:
            rec.stage = stage.name
            await self._timed_containers(key, pod, rec, now, init=stage.spec.next.initContainers)
            return
        delay = stage.spec.delay
        if rec.stage != stage.name:
            rec.stage = stage.name
            rec.since = now
            rec.jitter = self._rng.uniform(0, delay.jitterDurationMilliseconds / 1000.0) \
                if delay.jitterDurationMilliseconds else 0.0
        want = rec.since + delay.base_seconds(pod) + rec.jitter
        due, killed = want, False
        if delay.notAfter == "GracePeriodEnd" and rec.grace_deadline is not None and rec.grace_deadline < want:
            due, killed = rec.grace_deadline, True
        if due > now:
            self.queue.add_after(key, due - now)
            return
        await self._apply(stage, pod, rec, killed=killed)

    async def _probe(self, key: str, pod: JsonDict, rec: PodRecord) -> bool:
        """Run the pod's probes that are due (kubelet_sim.prober): their Events, the
        containers' started/ready, the kills' ends, the next tick. True when a status was
        written (which re-queues the pod)."""
        memory = rec.probes
        if memory is None:
            memory = rec.probes = Prober()
        wall = self._clock.now()

        def run(p: JsonDict, c: JsonDict, cs: JsonDict, probe: JsonDict) -> Awaitable[ProbeResult]:
            return evaluate(p, c, cs, probe, now=wall, cluster_dns=CLUSTER_DNS_IP)

        outcome = await memory.sync(pod, self._clock.monotonic(), wall, run)
        self._record(pod, rec.node, outcome.events)
        meta = pod.get("metadata") or {}
        for kill in outcome.ended:  # the runtime reports the killed process's end
            process_exits.record(rec.uid, str(meta.get("namespace") or ""), str(meta.get("name") or ""),
                                 kill.container, kill.run, kill.exit_code)
        if outcome.wait is not None:
            self.queue.add_after(key, outcome.wait)
        if not outcome.changes:
            return False
        try:
            return await self._put_status(pod, rec, probes.probes_passed(pod, self._context(rec, killed=False),
                                                                         outcome.changes))
        except ConflictError:
            logger.debug("stale pod in cache, waiting for the newer event pod=%s", key)
            return True

    def _try_images(self, key: str, pod: JsonDict, rec: PodRecord) -> PullMemory:
        """On a sync that is due, try the images of the containers about to start
        (kubelet_sim.image_pull): their Events, the back-off, the next sync."""
        memory = rec.images
        if memory is None:
            memory = rec.images = PullMemory()
        now = self._clock.monotonic()
        if memory.due(pod, now):
            node = rec.node
            _blocked, events, wait = memory.attempt(pod, lambda image: self._nodes.has_image(node, image), now,
                                                    self._rng)
            self._record(pod, node, events)
            if wait is not None:
                self.queue.add_after(key, wait)
        return memory

    async def _image_gate(self, key: str, pod: JsonDict, rec: PodRecord) -> bool:
        """The images of the containers about to start (kubelet_sim.image_pull): on a sync that
        is due, try them (Events, back-off) and remember the blocked ones for the steps; write
        their waiting states where the status does not show them. True when this sync is over
        (a status was written, which re-queues the pod, or an init container is blocked)."""
        meta = pod.get("metadata") or {}
        status = pod.get("status") or {}
        if meta.get("deletionTimestamp") or status.get("phase") not in ("Pending", "Running") \
                or "containerStatuses" not in status:
            return False
        memory = self._try_images(key, pod, rec)
        if not memory.blocked and not any(
                ((cs.get("state") or {}).get("waiting") or {}).get("reason") in IMAGE_REASONS
                for lst in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses")
                for cs in status.get(lst) or ()):
            return False
        ctx = self._context(rec, killed=False)
        # the sandbox is up (its IP too) before any image is pulled
        new_status, conds, now_text = step_base(pod, ctx)
        set_pod_ips(pod, new_status, ctx)
        with_blocked(new_status, memory.blocked)
        if status.get("phase") == "Running":  # a changed image: those containers start now
            start_unblocked(pod, new_status, ctx, IMAGE_REASONS)
        new_status["conditions"] = regenerate_conditions(pod, new_status, conds, now_text, sandbox_ready=True)
        try:
            if await self._put_status(pod, rec, new_status):
                return True
        except ConflictError:
            logger.debug("stale pod in cache, waiting for the newer event pod=%s", key)
            return True
        # nothing to write: an init container still blocked holds the pod; the regular
        # containers' blocks are carried into the `Running` step by the context
        init_blocked = {c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or ()} & set(memory.blocked)
        return bool(init_blocked)

    async def _apply(self, stage: Stage, pod: JsonDict, rec: PodRecord, *, killed: bool) -> None:
        nxt = stage.spec.next
        meta = pod["metadata"]
        name, ns = meta.get("name", ""), meta.get("namespace")
        try:
            if nxt.status is not None:
                await self._write_status(nxt.status, pod, rec, killed=killed)
            if nxt.finalizers is not None:
                current = list(meta.get("finalizers") or [])
                wanted = [f for f in current if f not in nxt.finalizers.remove]
                wanted += [f for f in nxt.finalizers.add if f not in wanted]
                if wanted != current:
                    await self._client.patch(PODS, name, {"metadata": {
                        "finalizers": wanted or None, "resourceVersion": meta.get("resourceVersion")}}, ns, read_only=True)
            if nxt.delete and not rec.delete_sent:
                logger.debug("confirming pod deletion pod=%s/%s", ns, name)
                await self._client.delete(PODS, name, ns, grace_period_seconds=0,
                                          preconditions={"uid": rec.uid})
                rec.delete_sent = True
            rec.stage = None  # applied: the stage's clock restarts should it match again
        except ConflictError:
            logger.debug("stale pod in cache, waiting for the newer event pod=%s/%s stage=%s", ns, name, stage.name)
        except NotFoundError:
            rec.delete_sent = True

    async def _timed_containers(self, key: str, pod: JsonDict, rec: PodRecord, now: float, *, init: bool) -> None:
        """The kubelet's per-container timelines: the restarts of containers that end
        (kubelet_sim.stages.restarts) or, with `init`, the played init phase
        (kubelet_sim.stages.init_containers). Write what is due now (the written status
        re-queues the pod and the next sync plans from it), else wake when the next is due."""
        memory = rec.crash if rec.crash is not None else CrashLoop()
        rec.crash = memory
        wall = self._clock.now()
        fail = False
        if init:
            actions, due, fail = init_containers.plan(pod, memory, now, wall, self._backoff)
        else:
            actions, due = plan(pod, memory, now, wall, self._backoff)
        if actions or fail:
            ctx = self._context(rec, killed=False)
            new_status = (init_containers.init_status(pod, ctx, actions, fail=fail) if init
                          else restart_status(pod, ctx, actions))
            try:
                written = await self._put_status(pod, rec, new_status)
            except ConflictError:
                logger.debug("stale pod in cache, waiting for the newer event pod=%s", key)
                return
            if written:
                memory.commit(actions, new_status, now)
                return
        if math.isfinite(due):
            self.queue.add_after(key, max(due - now, 0.0))

    def _context(self, rec: PodRecord, *, killed: bool) -> StepContext:
        node = rec.node

        def allocate() -> str:
            if rec.ip is None:
                rec.ip = self._nodes.allocate_ip(node)
            return rec.ip

        return StepContext(now=self._clock.now(), host_ip=self._nodes.host_ip(node), allocate_ip=allocate,
                           killed=killed, host_ips=self._nodes.host_ips(node),
                           blocked=rec.images.blocked if rec.images is not None else {})

    async def _write_status(self, step_name: str, pod: JsonDict, rec: PodRecord, *, killed: bool) -> None:
        await self._put_status(pod, rec, STATUS_STEPS[step_name](pod, self._context(rec, killed=killed)))

    async def _put_status(self, pod: JsonDict, rec: PodRecord, new_status: JsonDict) -> bool:
        """PUT /status with `new_status` (nothing when it is the status already) and the
        kubelet's Events for it; whether it was written."""
        node = rec.node
        if new_status == pod.get("status"):
            return False
        # a shallow body: both transports take their own copy of what they are given (the
        # in-process client copies it in, HTTP serialises it), and the cached pod is never edited
        obj = {k: v for k, v in pod.items() if k != "status"}
        obj["status"] = new_status
        await self._client.update_status(PODS, obj, read_only=True)
        if self._recorder is not None:
            self._container_events(pod, new_status, rec)
        if new_status.get("phase") == "Running":
            self._nodes.note_images(node, pod_images(pod, new_status), size_hint=image_size_hint(pod))
        return True

    def _container_events(self, pod: JsonDict, new_status: JsonDict, rec: PodRecord) -> None:
        """The kubelet's Events for a status just written: `Pulling` when the sandbox is being
        created, `Pulled` / `Created` / `Started` for each container it shows started."""
        node = rec.node

        def present(image: str) -> bool:
            return self._nodes.has_image(node, image)

        now = self._clock.monotonic()
        if not containers_created(new_status):  # the sandbox is being created: the pulls begin
            if rec.pulling is None:
                pulling, rec.pulling = pulling_events(pod, present, lambda c: image_problem(c, present) is not None)
                rec.pull_started = now
                self._record(pod, node, pulling)
            return
        pulled = rec.pulling
        before: list[ContainerEvent] = []
        if pulled is None:  # a start without a sandbox step before it (a restart): pulls per policy now
            before, pulled = pulling_events(pod, present)
            rec.pull_started = now
        hint = image_size_hint(pod)
        started = started_events(pod, pod.get("status") or {}, new_status, pulled=pulled,
                                 pull_seconds=now - rec.pull_started,
                                 image_size=lambda image: self._nodes.image_size(node, image, size_hint=hint))
        if started:
            rec.pulling = None  # the next start (a restart) pulls per policy again
            paths = {ev.field_path for ev in started}
            self._record(pod, node, [ev for ev in before if ev.field_path in paths] + started)
        self._record(pod, node, backoff_events(pod, pod.get("status") or {}, new_status))

    def _record(self, pod: JsonDict, node: str, events: list[ContainerEvent]) -> None:
        if self._recorder is None:
            return
        for ev in events:
            self._recorder.event(pod, ev.event_type, ev.reason, ev.message, field_path=ev.field_path, host=node)


# -- the fleet: what the composition root starts ---------------------------------------------


class KubeletFleet:
    def __init__(self, nodes: list[JsonDict], *, client: Client, informers: Any,
                 clock: Clock | None = None, rng: random.Random | None = None,
                 options: FleetOptions | None = None, stages: list[Stage] | None = None) -> None:
        self._clock = clock or Clock()
        self._rng = rng or random.Random()
        self.options = options or FleetOptions()
        self._has_nodes = bool(nodes)
        node_informer = informers.informer(NODES) if nodes else None
        # the kubelets' Events (source.host: the node); one queue for the fleet, as deep as one
        # kubelet's broadcaster queue (1,000) per node up to 100 nodes, and one correlator whose
        # caches (keyed by source.host among the rest, so nodes never share an entry) hold a
        # kubelet's 4,096 keys per node up to 16 nodes
        fleet = max(1, len(nodes))
        self.recorder = EventRecorder(client, "kubelet", clock=self._clock, max_pending=1000 * min(fleet, 100),
                                      cache_size=LRU_CACHE_ENTRIES * min(fleet, 16))
        self.agent = NodeAgent(nodes, client=client, node_informer=node_informer, clock=self._clock,
                               rng=self._rng, options=self.options, recorder=self.recorder)
        self.controller: StageController | None = None
        self.usage: UsageSource | None = None
        if nodes:
            # simulated usage (metrics.k8s.io's source): read from the same informer caches
            self.usage = UsageSource(pods=informers.informer(PODS), services=informers.informer(SERVICES),
                                     endpoints=informers.informer(ENDPOINTS), clock=self._clock,
                                     node_names=lambda: [n for n in self.agent.nodes if not self.agent.is_failed(n)],
                                     kubelet_config=self._kubelet_config)
            self.controller = StageController(
                stages if stages is not None else load_default_stages(), client=client,
                pod_informer=informers.informer(PODS), nodes=self.agent, clock=self._clock,
                rng=self._rng, workers=self.options.workers, recorder=self.recorder,
                backoff=BackoffPolicy(self.options.initial_restart_period, self.options.max_container_restart_period))
            self.agent.on_recover = self.controller.requeue_node

    def _kubelet_config(self, name: str) -> JsonDict:
        """The KubeletConfiguration node `name`'s kubelet runs with (its /configz)."""
        o = self.options
        return kubelet_configuration(self.agent.nodes[name].manifest, node_status_update_frequency=o.renew_interval,
                                     node_status_report_frequency=o.status_report_frequency,
                                     node_lease_duration_seconds=o.lease_duration_seconds,
                                     node_status_max_images=MAX_NODE_IMAGES)

    async def run(self) -> None:
        """Register every node, then keep leases, node status and pods moving until cancelled."""
        if not self._has_nodes or self.controller is None:
            logger.info("no simulated nodes configured")
            await asyncio.Event().wait()
            return
        await self.agent.register_all()
        await self.run_registered()

    async def run_registered(self) -> None:
        """Heartbeats and the stage controller, for nodes already registered (benchmarks)."""
        if self.controller is None:
            return
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.agent.run(), name="kubelet-sim-heartbeats")
            tg.create_task(self.controller.run(), name="kubelet-sim-stages")
            tg.create_task(self.recorder.run(), name="kubelet-sim-events")


async def run_standalone(server: str | ClusterAccess, nodes_spec: str) -> None:
    """`minik3s kubelet-sim --server URL --nodes SPEC`: the fleet as its own process over HTTP
    (`server`: a URL, or a kubeconfig's URL and credentials)."""
    from minik3s.client.informer import SharedInformerFactory
    from minik3s.client.rest import HttpClient, default_user_agent

    access = server if isinstance(server, ClusterAccess) else ClusterAccess(server)
    client = HttpClient.for_access(access, user_agent=default_user_agent("kubelet"))  # field manager "kubelet"
    try:
        factory = SharedInformerFactory(client)
        fleet = KubeletFleet(parse_fleet(nodes_spec), client=client, informers=factory)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(factory.run(), name="kubelet-sim-informers")
            tg.create_task(fleet.run(), name="kubelet-fleet")
    finally:
        await client.close()
