"""DaemonSet controller (layer L4), after kube-controller-manager's `pkg/controller/daemon`.

One pod per eligible node: a node is eligible when the template's nodeName (if any) names it,
its nodeSelector and required node affinity match it and every NoSchedule/NoExecute taint is
tolerated by the template's tolerations plus the ones upstream adds to every daemon pod
(not-ready and unreachable NoExecute; disk-, memory-, pid-pressure and unschedulable
NoSchedule; network-unavailable NoSchedule for hostNetwork pods). A pod already on a node
whose new taint is only NoSchedule keeps running (shouldContinueRunning). Pods are pinned by
replacing the required node affinity with `matchFields metadata.name In [<node>]`, so the
scheduler places them.

One sync is upstream's syncDaemonSet: claim the ControllerRevisions and the pods (adopt
matching orphans, release owned objects that stopped matching), find or create the revision of
the current template, then `manage`: create a pod on each eligible node without one (in
slow-start batches, at most 250 per sync), delete pods on nodes that must not run one, delete
Failed pods (with a per-node backoff and a FailedDaemonPod event) and Succeeded ones, keep only
the oldest pod of a node (or, when surging, the oldest old and oldest new one), and delete
unscheduled pods aimed at nodes that no longer exist. RollingUpdate then replaces old-revision
pods within `maxUnavailable` (or creates up to `maxSurge` new pods first and deletes an old pod
once its replacement is available); OnDelete replaces only pods the user deleted.

Pods carry `controller-revision-hash` and `pod-template-generation` (the
`deprecated.daemonset.template.generation` annotation, or metadata.generation when the API
server did not write one); a pod is up to date when either matches. Status is counted on each
node's oldest pod: desiredNumberScheduled, currentNumberScheduled, numberMisscheduled,
numberReady, updatedNumberScheduled, numberAvailable, numberUnavailable, observedGeneration.

Data flow: DaemonSet, Pod, Node and ControllerRevision informers -> handlers enqueue
`ns/name` -> `sync(key)` -> pod creates/deletes, ControllerRevisions and `daemonsets/status`
through the Client. Within a sync, `manage` and the rolling update see the pods the sync
itself created and deleted.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from minik3s.api.errors import ApiError, NotFoundError
from minik3s.api.helpers.node_affinity import pod_matches_node_selector_and_affinity
from minik3s.api.helpers.pods import is_pod_ready
from minik3s.api.helpers.taints import find_untolerated_taint
from minik3s.api.resources import CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS
from minik3s.api.selectors import LabelSelector, label_selector_from_dict
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory, object_key
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import (
    controller_ref,
    creation_time,
    get_int,
    is_deleting,
    is_pod_available,
    is_pod_terminal,
    meta,
    run_workers,
    scaled_value,
)
from minik3s.controllers.history import (
    CONTROLLER_REVISION_HASH,
    claim_objects,
    cleanup_history,
    ensure_revision,
    owned_revisions,
)
from minik3s.controllers.replicaset import (
    NAMESPACE_INDEX,
    namespace_index,
    pod_from_template,
    slow_start_batches,
)
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

POD_TEMPLATE_GENERATION = "pod-template-generation"
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
BURST_REPLICAS = 250
STATUS_UPDATE_RETRIES = 1
FAILED_POD_BACKOFF_INITIAL = 1.0
FAILED_POD_BACKOFF_MAX = 15 * 60.0


def _tol(key: str, effect: str) -> JsonDict:
    return {"key": key, "operator": "Exists", "effect": effect}


DEFAULT_TOLERATIONS = (
    _tol("node.kubernetes.io/not-ready", "NoExecute"),
    _tol("node.kubernetes.io/unreachable", "NoExecute"),
    _tol("node.kubernetes.io/disk-pressure", "NoSchedule"),
    _tol("node.kubernetes.io/memory-pressure", "NoSchedule"),
    _tol("node.kubernetes.io/pid-pressure", "NoSchedule"),
    _tol("node.kubernetes.io/unschedulable", "NoSchedule"),
)
HOST_NETWORK_TOLERATION = _tol("node.kubernetes.io/network-unavailable", "NoSchedule")


# --------------------------------------------------------------------------- pod template helpers


def _toleration_key(t: JsonDict) -> tuple[str, str, str, str]:
    return (str(t.get("key") or ""), str(t.get("operator") or ""), str(t.get("value") or ""),
            str(t.get("effect") or ""))


def add_or_update_toleration(tolerations: Sequence[JsonDict], toleration: JsonDict) -> list[JsonDict]:
    """v1helper.AddOrUpdateTolerationInPodSpec: a toleration with the same key, operator, value
    and effect is replaced in place (tolerationSeconds and all), else it is appended."""
    out: list[JsonDict] = []
    updated = False
    for t in tolerations:
        if _toleration_key(t) == _toleration_key(toleration):
            out.append(dict(toleration))
            updated = True
        else:
            out.append(dict(t))
    if not updated:
        out.append(dict(toleration))
    return out


def daemon_tolerations(pod_spec: JsonDict) -> list[JsonDict]:
    """AddOrUpdateDaemonPodTolerations: the template's tolerations with upstream's defaults
    added or updated (network-unavailable too for hostNetwork pods)."""
    tols = [dict(t) for t in pod_spec.get("tolerations") or []]
    extra = list(DEFAULT_TOLERATIONS)
    if pod_spec.get("hostNetwork"):
        extra.append(HOST_NETWORK_TOLERATION)
    for d in extra:
        tols = add_or_update_toleration(tols, d)
    return tols


def replace_node_name_affinity(affinity: JsonDict | None, node_name: str) -> JsonDict:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes one term
    `metadata.name In [node]`; preferred terms and the other affinities are kept."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    out = copy.deepcopy(affinity) if affinity else {}
    na = out.get("nodeAffinity")
    if not isinstance(na, dict):
        na = out["nodeAffinity"] = {}
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(req, dict):
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
    else:
        req["nodeSelectorTerms"] = [term]
    return out


def pin_to_node(pod_spec: JsonDict, node_name: str) -> None:
    pod_spec["affinity"] = replace_node_name_affinity(pod_spec.get("affinity"), node_name)


def target_node(pod: JsonDict) -> str:
    """util.GetTargetNodeName: spec.nodeName, else the one node named by the required
    `metadata.name In` term; "" when neither (upstream's error)."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    req = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in req.get("nodeSelectorTerms") or []:
        for f in term.get("matchFields") or []:
            if f.get("key") == "metadata.name" and f.get("operator") == "In" and len(f.get("values") or []) == 1:
                return str(f["values"][0])
    return ""


def template_generation(ds: JsonDict) -> int | None:
    """util.GetTemplateGeneration: the `deprecated.daemonset.template.generation` annotation,
    None without it; ValueError when it is not an integer."""
    raw = (meta(ds).get("annotations") or {}).get(TEMPLATE_GENERATION_ANNOTATION)
    if raw is None:
        return None
    return int(str(raw))


def effective_template_generation(ds: JsonDict) -> int | None:
    """The template generation this controller labels pods with: the annotation when the API
    server wrote one (an unparsable one counts as none), else metadata.generation."""
    try:
        gen = template_generation(ds)
    except ValueError:
        return None
    if gen is None and meta(ds).get("generation") is not None:
        return get_int(meta(ds), "generation")
    return gen


def is_pod_updated(pod: JsonDict, revision_hash: str, generation: int | None) -> bool:
    """util.IsPodUpdated: the pod's template generation or its revision hash is the current one."""
    labels = meta(pod).get("labels") or {}
    template_matches = generation is not None and labels.get(POD_TEMPLATE_GENERATION) == str(generation)
    hash_matches = bool(revision_hash) and labels.get(CONTROLLER_REVISION_HASH) == revision_hash
    return hash_matches or template_matches


def create_pod_template(template: JsonDict, generation: int | None, revision_hash: str) -> JsonDict:
    """util.CreatePodTemplate: the template with the daemon tolerations, the generation label
    (when known) and the hash label (when given)."""
    out = copy.deepcopy(template)
    spec = out.setdefault("spec", {})
    spec["tolerations"] = daemon_tolerations(spec)
    m = out.setdefault("metadata", {})
    labels = m.get("labels")
    if not isinstance(labels, dict):
        labels = m["labels"] = {}
    if generation is not None:
        labels[POD_TEMPLATE_GENERATION] = str(generation)
    if revision_hash:
        labels[CONTROLLER_REVISION_HASH] = revision_hash
    return out


def new_daemon_pod(ds: JsonDict, node_name: str, revision_hash: str) -> JsonDict:
    """The pod syncNodes creates for `node_name`: CreatePodTemplate then
    controller.GetPodFromTemplate, pinned to the node."""
    template = create_pod_template(((ds.get("spec") or {}).get("template") or {}),
                                   effective_template_generation(ds), revision_hash)
    pod = pod_from_template(ds, api_version="apps/v1", kind="DaemonSet", template=template)
    pin_to_node(pod["spec"], node_name)
    return pod


def node_should_run(ds: JsonDict, node: JsonDict) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod: (shouldRun, shouldContinueRunning)."""
    tspec = copy.deepcopy(((ds.get("spec") or {}).get("template") or {}).get("spec") or {})
    name = meta(node).get("name")
    if tspec.get("nodeName") and tspec["nodeName"] != name:
        return False, False
    tspec["nodeName"] = name
    probe = {"spec": tspec}
    if not pod_matches_node_selector_and_affinity(probe, node):
        return False, False
    tols = daemon_tolerations(tspec)
    taints = (node.get("spec") or {}).get("taints") or []
    if find_untolerated_taint(taints, tols, lambda t: t.get("effect") in ("NoSchedule", "NoExecute")) is None:
        return True, True
    no_execute = find_untolerated_taint(taints, tols, lambda t: t.get("effect") == "NoExecute")
    return False, no_execute is None


def should_ignore_node_update(old: JsonDict, cur: JsonDict) -> bool:
    """shouldIgnoreNodeUpdate: the node's labels and taints are unchanged (the only node
    properties NodeShouldRunDaemonPod reads that can change)."""
    return bool((meta(old).get("labels") or {}) == (meta(cur).get("labels") or {})
                and ((old.get("spec") or {}).get("taints") or []) == ((cur.get("spec") or {}).get("taints") or []))


def _strategy(ds: JsonDict) -> JsonDict:
    s = (ds.get("spec") or {}).get("updateStrategy")
    return s if isinstance(s, dict) else {}


def surge_count(ds: JsonDict, number_to_schedule: int) -> int:
    """util.SurgeCount: maxSurge scaled (rounding up); 0 unless RollingUpdate with maxSurge."""
    s = _strategy(ds)
    ru = s.get("rollingUpdate")
    if s.get("type", "RollingUpdate") != "RollingUpdate" or not isinstance(ru, dict) or ru.get("maxSurge") is None:
        return 0
    return scaled_value(ru.get("maxSurge"), number_to_schedule, round_up=True)


def unavailable_count(ds: JsonDict, number_to_schedule: int) -> int:
    """util.UnavailableCount: maxUnavailable scaled (rounding up); 0 unless RollingUpdate."""
    s = _strategy(ds)
    ru = s.get("rollingUpdate")
    if s.get("type", "RollingUpdate") != "RollingUpdate" or not isinstance(ru, dict):
        return 0
    if ru.get("maxUnavailable") is None:
        raise ValueError("nil value for IntOrString")
    return scaled_value(ru.get("maxUnavailable"), number_to_schedule, round_up=True)


def allows_surge(ds: JsonDict) -> bool:
    try:
        return surge_count(ds, 1) != 0
    except ValueError:
        return False


def updated_desired_node_counts(ds: JsonDict, nodes: Sequence[JsonDict],
                                node_to_pods: dict[str, list[JsonDict]]) -> tuple[int, int, int]:
    """updatedDesiredNodeCounts: (maxSurge, maxUnavailable, desiredNumberScheduled); every node
    that should run a pod gets an entry in `node_to_pods` (empty when it has none). Neither
    surge nor unavailability allowed with something to schedule means maxUnavailable 1."""
    desired = 0
    for node in nodes:
        if not node_should_run(ds, node)[0]:
            continue
        desired += 1
        node_to_pods.setdefault(str(meta(node).get("name")), [])
    max_unavailable = unavailable_count(ds, desired)
    max_surge = surge_count(ds, desired)
    if desired > 0 and max_unavailable == 0 and max_surge == 0:
        max_unavailable = 1
    return max_surge, max_unavailable, desired


def pod_age_key(pod: JsonDict) -> tuple[int, datetime, str]:
    """podByCreationTimestampAndPhase: scheduled pods first, then by creation time and name."""
    t = creation_time(pod) or datetime.min.replace(tzinfo=None)
    if t.tzinfo is not None:
        t = t.replace(tzinfo=None)
    return (0 if (pod.get("spec") or {}).get("nodeName") else 1, t, str(meta(pod).get("name") or ""))


def find_updated_pods_on_node(ds: JsonDict, pods: Sequence[JsonDict], revision_hash: str
                              ) -> tuple[JsonDict | None, JsonDict | None, bool]:
    """findUpdatedPodsOnNode: (new pod, old pod, ok) over the node's non-deleted pods; not ok
    when there are two of either kind (the manage loop prunes them first)."""
    new: JsonDict | None = None
    old: JsonDict | None = None
    gen = effective_template_generation(ds)
    for pod in pods:
        if is_deleting(pod):
            continue
        if is_pod_updated(pod, revision_hash, gen):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


def group_by_node(pods: Sequence[JsonDict], *, include_deleted_terminal: bool = False) -> dict[str, list[JsonDict]]:
    """getNodesToDaemonPods over claimed pods: terminal pods being deleted are left out (unless
    asked for) and so are pods without a target node."""
    out: dict[str, list[JsonDict]] = {}
    for p in pods:
        if not include_deleted_terminal and is_pod_terminal(p) and is_deleting(p):
            continue
        node = target_node(p)
        if node:
            out.setdefault(node, []).append(p)
    return out


@dataclass(slots=True)
class _Backoff:
    """flowcontrol.Backoff for one key: 1 s doubling to 15 min; forgotten after 30 min idle."""

    delay: float
    last: float


class DaemonSetController:
    NAME = "daemonset-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None,
                 burst_replicas: int = BURST_REPLICAS) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._burst = burst_replicas
        self._ds_inf = informers.informer(DAEMONSETS)
        self._pod_inf = informers.informer(PODS)
        self._node_inf = informers.informer(NODES)
        self._rev_inf = informers.informer(CONTROLLERREVISIONS)
        for inf in (self._ds_inf, self._pod_inf, self._rev_inf):
            inf.add_index(NAMESPACE_INDEX, namespace_index)
        self.queue = WorkQueue()
        self.recorder = EventRecorder(client, self.NAME, clock=self._clock)
        self._failed_backoff: dict[str, _Backoff] = {}
        self._ds_inf.add_handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n),
                                 on_delete=self._enqueue)
        self._pod_inf.add_handler(on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted)
        self._node_inf.add_handler(on_add=self._node_added, on_update=self._node_updated,
                                   on_delete=self._node_deleted)

    # ---- handlers

    def _enqueue(self, ds: JsonDict) -> None:
        self.queue.add(object_key(ds))

    def _resolve(self, namespace: str, ref: JsonDict | None) -> JsonDict | None:
        if not ref or ref.get("kind") != "DaemonSet":
            return None
        ds = self._ds_inf.store.get(f"{namespace}/{ref.get('name')}")
        return ds if ds is not None and meta(ds).get("uid") == ref.get("uid") else None

    def _sets_for_orphan(self, pod: JsonDict) -> list[JsonDict]:
        """getDaemonSetsForPod: the namespace's DaemonSets whose selector matches the pod."""
        labels = meta(pod).get("labels") or {}
        if not labels:
            return []
        out = []
        for ds in self._ds_inf.by_index(NAMESPACE_INDEX, str(meta(pod).get("namespace") or "")):
            sel = _selector(ds)
            if sel is not None and not sel.empty and sel.matches(labels):
                out.append(ds)
        return out

    def _pod_added(self, pod: JsonDict) -> None:
        if is_deleting(pod):
            self._pod_deleted(pod)
            return
        ns = str(meta(pod).get("namespace") or "")
        ref = controller_ref(pod)
        if ref is not None:
            ds = self._resolve(ns, ref)
            if ds is not None:
                self._enqueue(ds)
            return
        for ds in self._sets_for_orphan(pod):
            self._enqueue(ds)

    def _pod_updated(self, old: JsonDict, cur: JsonDict) -> None:
        if meta(old).get("resourceVersion") == meta(cur).get("resourceVersion"):
            return
        if is_deleting(cur):
            self._pod_deleted(cur)
            return
        ns = str(meta(cur).get("namespace") or "")
        old_ref, cur_ref = controller_ref(old), controller_ref(cur)
        if old_ref is not None and old_ref != cur_ref:
            ds = self._resolve(ns, old_ref)
            if ds is not None:
                self._enqueue(ds)
        if cur_ref is not None:
            ds = self._resolve(ns, cur_ref)
            if ds is None:
                return
            self._enqueue(ds)
            min_ready = get_int(ds.get("spec"), "minReadySeconds")
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(cur):
                self.queue.add_after(object_key(ds), float(min_ready) + 1.0)
            return
        if meta(old).get("labels") != meta(cur).get("labels") or old_ref != cur_ref:
            for ds in self._sets_for_orphan(cur):
                self._enqueue(ds)

    def _pod_deleted(self, pod: JsonDict) -> None:
        ds = self._resolve(str(meta(pod).get("namespace") or ""), controller_ref(pod))
        if ds is not None:
            self._enqueue(ds)

    def _node_added(self, node: JsonDict) -> None:
        for ds in self._ds_inf.store.list():
            if node_should_run(ds, node)[0]:
                self._enqueue(ds)

    def _node_updated(self, old: JsonDict, cur: JsonDict) -> None:
        """updateNode: only label or taint changes matter, and only to the DaemonSets whose
        shouldRun / shouldContinueRunning answer for the node changes."""
        if should_ignore_node_update(old, cur):
            return
        for ds in self._ds_inf.store.list():
            if node_should_run(ds, old) != node_should_run(ds, cur):
                self._enqueue(ds)

    def _node_deleted(self, _node: JsonDict) -> None:
        # upstream has no handler; a sync removes unscheduled pods aimed at a vanished node
        for ds in self._ds_inf.store.list():
            self._enqueue(ds)

    async def run(self, workers: int = 2) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            for inf in (self._ds_inf, self._pod_inf, self._node_inf, self._rev_inf):
                await inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(run_workers(self.queue, self.sync, workers=workers, name=self.NAME),
                           name=f"{self.NAME}-workers")

    # ---- sync

    async def sync(self, key: str) -> None:
        """One syncDaemonSet pass; raises (so the key is retried) when a write failed."""
        ds = self._ds_inf.store.get(key)
        if ds is None or is_deleting(ds):
            return
        selector = _selector(ds)
        if selector is None:
            return
        if selector.empty:
            self.recorder.event(ds, "Warning", "SelectingAll",
                                "This daemon set is selecting all pods. A non-empty selector is required.")
            return
        ns = str(meta(ds).get("namespace") or "")
        uid = meta(ds).get("uid")
        nodes = sorted(self._node_inf.store.list(), key=lambda n: str(meta(n).get("name")))
        revisions = await claim_objects(
            self._client, CONTROLLERREVISIONS, ds, DAEMONSETS,
            [r for r in self._rev_inf.by_index(NAMESPACE_INDEX, ns)
             if controller_ref(r) is None or (controller_ref(r) or {}).get("uid") == uid],
            match=lambda r: selector.matches(meta(r).get("labels") or {}), kind="DaemonSet")
        revisions = owned_revisions(revisions, ds)
        labels = dict((((ds.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {})
        cur, collisions = await ensure_revision(self._client, ds, revisions, kind="DaemonSet", labels=labels)
        cur_hash = str((meta(cur).get("labels") or {}).get(CONTROLLER_REVISION_HASH) or "")
        old = [r for r in revisions if meta(r).get("name") != meta(cur).get("name")]
        pods = await claim_objects(
            self._client, PODS, ds, DAEMONSETS,
            [p for p in self._pod_inf.by_index(NAMESPACE_INDEX, ns)
             if controller_ref(p) is None or (controller_ref(p) or {}).get("uid") == uid],
            match=lambda p: selector.matches(meta(p).get("labels") or {}), kind="DaemonSet")
        view = _PodView(pods)
        errors: list[BaseException] = []
        await self._manage(ds, nodes, view, cur_hash, errors)
        if not errors and _strategy(ds).get("type", "RollingUpdate") == "RollingUpdate":
            try:
                await self._rolling_update(ds, nodes, view, cur_hash, errors)
            except ValueError as e:  # an unparsable maxSurge/maxUnavailable or a vanished node
                errors.append(ApiError(f"couldn't get unavailable numbers: {e}"))
        if not errors:
            live = {str((meta(p).get("labels") or {}).get(CONTROLLER_REVISION_HASH) or "") for p in view.pods}
            await cleanup_history(self._client, old, keep=get_int(ds.get("spec"), "revisionHistoryLimit", 10),
                                  live_hashes=live - {""})
        try:
            await self._update_status(ds, nodes, view.pods, cur_hash, collisions)
        except ApiError as e:
            errors.append(e)
        if errors:
            raise errors[0]

    def _in_backoff(self, key: str, now: float) -> float | None:
        b = self._failed_backoff.get(key)
        if b is None or now - b.last > 2 * FAILED_POD_BACKOFF_MAX:
            return None
        return b.delay if now - b.last < b.delay else None

    def _backoff_next(self, key: str, now: float) -> None:
        b = self._failed_backoff.get(key)
        if b is None or now - b.last > 2 * FAILED_POD_BACKOFF_MAX:
            self._failed_backoff[key] = _Backoff(FAILED_POD_BACKOFF_INITIAL, now)
        else:
            b.delay = min(b.delay * 2, FAILED_POD_BACKOFF_MAX)
            b.last = now

    def _pods_should_be_on_node(self, ds: JsonDict, node: JsonDict, daemon_pods: list[JsonDict] | None,
                                cur_hash: str) -> tuple[bool, list[JsonDict]]:
        """podsShouldBeOnNode: (create a pod here?, pods to delete here)."""
        should_run, should_continue = node_should_run(ds, node)
        node_name = str(meta(node).get("name"))
        delete: list[JsonDict] = []
        if should_run and not daemon_pods:
            return True, delete
        if should_continue:
            running: list[JsonDict] = []
            for pod in daemon_pods or []:
                if is_deleting(pod):
                    continue
                phase = (pod.get("status") or {}).get("phase")
                if phase == "Failed":
                    key = f"{meta(ds).get('uid')}/{get_int(ds.get('status'), 'observedGeneration')}/{node_name}"
                    now = self._clock.monotonic()
                    delay = self._in_backoff(key, now)
                    if delay is not None:
                        self.queue.add_after(object_key(ds), delay)
                        continue
                    self._backoff_next(key, now)
                    self.recorder.event(ds, "Warning", "FailedDaemonPod",
                                        f"Found failed daemon pod {meta(pod).get('namespace')}/{meta(pod).get('name')}"
                                        f" on node {node_name}, will try to kill it")
                    delete.append(pod)
                elif phase == "Succeeded":
                    self.recorder.event(ds, "Normal", "SucceededDaemonPod",
                                        f"Found succeeded daemon pod {meta(pod).get('namespace')}/"
                                        f"{meta(pod).get('name')} on node {node_name}, will try to delete it")
                    delete.append(pod)
                else:
                    running.append(pod)
            running.sort(key=pod_age_key)
            if not allows_surge(ds):
                delete.extend(running[1:])
                return False, delete
            if len(running) <= 1:
                return (not running and should_run), delete
            oldest_new: JsonDict | None = None
            oldest_old: JsonDict | None = None
            for pod in running:
                if (meta(pod).get("labels") or {}).get(CONTROLLER_REVISION_HASH) == cur_hash:
                    if oldest_new is None:
                        oldest_new = pod
                        continue
                elif oldest_old is None:
                    oldest_old = pod
                    continue
                delete.append(pod)
            if oldest_new is not None and oldest_old is not None:
                if not is_pod_ready(oldest_old) or is_pod_available(
                        oldest_new, get_int(ds.get("spec"), "minReadySeconds"), self._clock.now()):
                    delete.append(oldest_old)
            return False, delete
        if daemon_pods:
            delete.extend(p for p in daemon_pods if not is_deleting(p))
        return False, delete

    async def _manage(self, ds: JsonDict, nodes: list[JsonDict], view: _PodView, cur_hash: str,
                      errors: list[BaseException]) -> None:
        node_to_pods = group_by_node(view.pods)
        create: list[str] = []
        delete: list[JsonDict] = []
        for node in nodes:
            need, gone = self._pods_should_be_on_node(ds, node, node_to_pods.get(str(meta(node).get("name"))),
                                                      cur_hash)
            if need:
                create.append(str(meta(node).get("name")))
            delete.extend(gone)
        # getUnscheduledPodsWithoutNode
        running = {str(meta(n).get("name")) for n in nodes}
        for node_name, pods in node_to_pods.items():
            if node_name not in running:
                delete.extend(p for p in pods if not (p.get("spec") or {}).get("nodeName"))
        await self._sync_nodes(ds, delete, create, cur_hash, view, errors)

    async def _sync_nodes(self, ds: JsonDict, delete: list[JsonDict], create: list[str], cur_hash: str,
                          view: _PodView, errors: list[BaseException]) -> None:
        """syncNodes: create on `create` nodes in slow-start batches (a failing batch skips the
        rest), then delete `delete`; at most burstReplicas of each per sync."""
        ns = meta(ds).get("namespace")
        create = create[:self._burst]
        delete = delete[:self._burst]
        pos = 0
        for batch in slow_start_batches(len(create)):
            results = await asyncio.gather(*(self._create(ds, n, cur_hash) for n in create[pos:pos + batch]),
                                           return_exceptions=True)
            pos += batch
            failed = False
            for r in results:
                if isinstance(r, asyncio.CancelledError):
                    raise r
                if isinstance(r, BaseException):
                    if not isinstance(r, ApiError):
                        raise r
                    if _namespace_terminating(r):
                        continue
                    errors.append(r)
                    failed = True
                elif r is not None:
                    view.add(r)
            if failed and pos < len(create):
                break

        async def rm(pod: JsonDict) -> None:
            name = str(meta(pod).get("name"))
            try:
                await self._client.delete(PODS, name, ns)
            except NotFoundError:
                view.remove(pod)
                return
            except ApiError as e:
                self.recorder.event(ds, "Warning", "FailedDelete", f"Error deleting: {e.message}")
                raise
            view.remove(pod)
            self.recorder.event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")

        results = await asyncio.gather(*(rm(p) for p in delete), return_exceptions=True)
        for r in results:
            if isinstance(r, asyncio.CancelledError):
                raise r
            if isinstance(r, BaseException):
                if not isinstance(r, ApiError):
                    raise r
                errors.append(r)

    async def _create(self, ds: JsonDict, node_name: str, cur_hash: str) -> JsonDict | None:
        try:
            # the stored object itself (read_only): this sync only reads it
            pod = await self._client.create(PODS, new_daemon_pod(ds, node_name, cur_hash), meta(ds).get("namespace"),
                                            read_only=True)
        except ApiError as e:
            if not _namespace_terminating(e):
                self.recorder.event(ds, "Warning", "FailedCreate", f"Error creating: {e.message}")
            raise
        self.recorder.event(ds, "Normal", "SuccessfulCreate", f"Created pod: {meta(pod).get('name')}")
        return pod

    async def _rolling_update(self, ds: JsonDict, nodes: list[JsonDict], view: _PodView, cur_hash: str,
                              errors: list[BaseException]) -> None:
        """rollingUpdate: replace old pods within maxUnavailable, or surge new ones first."""
        node_to_pods = group_by_node(view.pods)
        max_surge, max_unavailable, desired = updated_desired_node_counts(ds, nodes, node_to_pods)
        min_ready = get_int(ds.get("spec"), "minReadySeconds")
        now = self._clock.now()
        by_name = {str(meta(n).get("name")): n for n in nodes}

        def available(p: JsonDict) -> bool:
            return is_pod_available(p, min_ready, now)

        if max_surge == 0:
            unavailable = 0
            replacements: list[JsonDict] = []
            candidates: list[JsonDict] = []
            for _node, pods in sorted(node_to_pods.items()):
                new, old, ok = find_updated_pods_on_node(ds, pods, cur_hash)
                if not ok or (old is None) == (new is None):
                    unavailable += 1
                elif new is not None:
                    if not available(new):
                        unavailable += 1
                elif old is not None and not available(old):
                    replacements.append(old)
                    unavailable += 1
                elif old is not None and unavailable < max_unavailable:
                    candidates.append(old)
            remaining = min(max(0, max_unavailable - unavailable), len(candidates))
            await self._sync_nodes(ds, replacements + candidates[:remaining], [], cur_hash, view, errors)
            return
        to_delete: list[JsonDict] = []
        should_not_run: list[JsonDict] = []
        candidate_nodes: list[str] = []
        allowed_nodes: list[str] = []
        surging = 0
        n_available = 0
        for node_name, pods in sorted(node_to_pods.items()):
            new, old, ok = find_updated_pods_on_node(ds, pods, cur_hash)
            if not ok:
                surging += 1
                continue
            if old is not None:
                n_available += 1 if available(old) else 0
            elif new is not None:
                n_available += 1 if available(new) else 0
            if old is None:
                continue
            if new is None:
                node = by_name.get(node_name)
                if node is None:
                    raise ValueError(f"couldn't get node for nodeName {node_name!r}")
                if not available(old):
                    if not node_should_run(ds, node)[0]:
                        to_delete.append(old)
                        continue
                    allowed_nodes.append(node_name)
                    continue
                if not node_should_run(ds, node)[0]:
                    should_not_run.append(old)
                    continue
                if surging >= max_surge:
                    continue
                candidate_nodes.append(node_name)
                continue
            if not available(new):
                surging += 1
                continue
            to_delete.append(old)
        deletable = n_available - desired
        if deletable > 0:
            to_delete.extend(should_not_run[:deletable])
        remaining = min(max(0, max_surge - surging), len(candidate_nodes))
        await self._sync_nodes(ds, to_delete, allowed_nodes + candidate_nodes[:remaining], cur_hash, view, errors)

    async def _update_status(self, ds: JsonDict, nodes: list[JsonDict], pods: list[JsonDict], cur_hash: str,
                             collisions: int) -> None:
        """updateDaemonSetStatus: counted on each node's oldest pod; written when a count changed
        or the generation was not observed yet."""
        node_to_pods = group_by_node(pods)
        min_ready = get_int(ds.get("spec"), "minReadySeconds")
        now = self._clock.now()
        gen = effective_template_generation(ds)
        desired = current = mis = ready = updated = available = 0
        for node in nodes:
            should_run = node_should_run(ds, node)[0]
            on_node = node_to_pods.get(str(meta(node).get("name"))) or []
            if should_run:
                desired += 1
                if not on_node:
                    continue
                current += 1
                pod = sorted(on_node, key=pod_age_key)[0]
                if is_pod_ready(pod):
                    ready += 1
                    if is_pod_available(pod, min_ready, now):
                        available += 1
                if is_pod_updated(pod, cur_hash, gen):
                    updated += 1
            elif on_node:
                mis += 1
        counts: dict[str, Any] = {"desiredNumberScheduled": desired, "currentNumberScheduled": current,
                                  "numberMisscheduled": mis, "numberReady": ready, "updatedNumberScheduled": updated,
                                  "numberAvailable": available, "numberUnavailable": desired - available}
        old = ds.get("status") or {}
        generation = get_int(meta(ds), "generation")
        if all(get_int(old, k) == v for k, v in counts.items()) and get_int(old, "observedGeneration") >= generation \
                and get_int(old, "collisionCount") == collisions:
            if ready != available and min_ready > 0:
                self.queue.add_after(object_key(ds), float(min_ready))
            return
        # numberAvailable / numberUnavailable / updatedNumberScheduled / collisionCount are omitempty
        st = {k: v for k, v in counts.items() if v or k in ("desiredNumberScheduled", "currentNumberScheduled",
                                                             "numberMisscheduled", "numberReady")}
        st["observedGeneration"] = generation
        if collisions:
            st["collisionCount"] = collisions
        # storeDaemonSetStatus: one retry (StatusUpdateRetries) on a freshly read object
        cur = ds
        for attempt in range(STATUS_UPDATE_RETRIES + 1):
            body = copy.copy(cur)
            body["status"] = {**{k: v for k, v in (cur.get("status") or {}).items() if k == "conditions"}, **st}
            try:
                await self._client.update_status(DAEMONSETS, body, read_only=True)
                break
            except ApiError:
                if attempt >= STATUS_UPDATE_RETRIES:
                    raise
                m = meta(ds)
                cur = await self._client.get(DAEMONSETS, str(m.get("name")), m.get("namespace"))
        if ready != available and min_ready > 0:
            self.queue.add_after(object_key(ds), float(min_ready))


class _PodView:
    """The claimed pods as this sync left them: pods it created are added, pods it deleted gone
    (as upstream's unit tests see them through the fake pod control)."""

    def __init__(self, pods: list[JsonDict]) -> None:
        self.pods = list(pods)

    def add(self, pod: JsonDict) -> None:
        self.pods.append(pod)

    def remove(self, pod: JsonDict) -> None:
        self.pods = [p for p in self.pods if p is not pod]


def _selector(ds: JsonDict) -> LabelSelector | None:
    try:
        return label_selector_from_dict((ds.get("spec") or {}).get("selector"))
    except ValueError:
        return None


def _namespace_terminating(e: ApiError) -> bool:
    """apierrors.HasStatusCause(err, NamespaceTerminatingCause)."""
    return e.has_cause("NamespaceTerminating")


__all__ = [
    "DEFAULT_TOLERATIONS", "DaemonSetController", "add_or_update_toleration", "allows_surge", "create_pod_template",
    "daemon_tolerations", "effective_template_generation", "find_updated_pods_on_node", "group_by_node",
    "is_pod_updated", "new_daemon_pod", "node_should_run", "pin_to_node", "replace_node_name_affinity", "should_ignore_node_update",
    "surge_count", "target_node", "template_generation", "unavailable_count", "updated_desired_node_counts",
]
