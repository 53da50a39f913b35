"""DaemonSet controller (layer L4), after kube-controller-manager's `pkg/controller/daemon`.

One pod per eligible node: a node is eligible when the pod template's nodeSelector and
required node affinity match it and every NoSchedule/NoExecute taint is tolerated by the
template's tolerations plus the ones upstream adds to every daemon pod (not-ready and
unreachable NoExecute; disk-, memory-, pid-pressure and unschedulable NoSchedule;
network-unavailable NoSchedule for hostNetwork pods). A pod already running on a node whose
new taint is only NoSchedule keeps running (upstream shouldContinueRunning). Pods are pinned
by replacing the required node affinity with `matchFields metadata.name In [<node>]`, so the
scheduler places them. RollingUpdate replaces old-revision pods within `maxUnavailable`
(or surges up to `maxSurge` new pods first); OnDelete replaces only pods the user deleted.
Pods carry `controller-revision-hash` and `pod-template-generation`; ControllerRevisions keep
the history. Status: desiredNumberScheduled, currentNumberScheduled, numberMisscheduled,
numberReady, updatedNumberScheduled, numberAvailable, numberUnavailable, observedGeneration.

Data flow: DaemonSet, Pod, Node and ControllerRevision informers -> handlers enqueue
`ns/name` -> `sync(key)` -> pod creates/deletes, ControllerRevisions and `daemonsets/status`
through the Client.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass, field
from typing import Any

from minik3s.api.errors import ApiError, ConflictError, NotFoundError
from minik3s.api.helpers.node_affinity import pod_matches_node_selector_and_affinity
from minik3s.api.helpers.pods import is_pod_ready
from minik3s.api.helpers.taints import find_untolerated_taint
from minik3s.api.resources import CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS
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
    meta,
    run_workers,
    scaled_value,
)
from minik3s.controllers.history import (
    CONTROLLER_REVISION_HASH,
    ensure_revision,
    owned_revisions,
    trim_history,
)
from minik3s.controllers.replicaset import NAMESPACE_INDEX, namespace_index, pod_from_template
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

POD_TEMPLATE_GENERATION = "pod-template-generation"


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


def daemon_tolerations(pod_spec: JsonDict) -> list[JsonDict]:
    """AddOrUpdateDaemonPodTolerations: the template's tolerations plus upstream's defaults
    (a default is skipped when one with the same key and effect is already there)."""
    tols = [dict(t) for t in pod_spec.get("tolerations") or []]
    extra = list(DEFAULT_TOLERATIONS)
    if pod_spec.get("hostNetwork"):
        extra.append(HOST_NETWORK_TOLERATION)
    for d in extra:
        if not any(t.get("key") == d["key"] and t.get("effect") == d["effect"] for t in tols):
            tols.append(dict(d))
    return tols


def pin_to_node(pod_spec: JsonDict, node_name: str) -> None:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes one term
    `metadata.name In [node]` (preferred terms and other affinities are kept)."""
    aff = pod_spec.setdefault("affinity", {})
    na = aff.setdefault("nodeAffinity", {})
    na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


def target_node(pod: JsonDict) -> str:
    """util.GetTargetNodeName: spec.nodeName, else the node named by the affinity term."""
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


def node_should_run(ds: JsonDict, node: JsonDict) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod: (shouldRun, shouldContinueRunning)."""
    tspec = copy.deepcopy(((ds.get("spec") or {}).get("template") or {}).get("spec") or {})
    probe = {"spec": tspec}
    if tspec.get("nodeName") and tspec["nodeName"] != meta(node).get("name"):
        return False, False
    if not pod_matches_node_selector_and_affinity(probe, node):
        return False, False
    tols = daemon_tolerations(tspec)
    taints = (node.get("spec") or {}).get("taints") or []
    if find_untolerated_taint(taints, tols, lambda t: t.get("effect") == "NoExecute") is not None:
        return False, False
    if find_untolerated_taint(taints, tols, lambda t: t.get("effect") == "NoSchedule") is not None:
        return False, True
    return True, True


def new_daemon_pod(ds: JsonDict, node_name: str, revision_hash: str) -> JsonDict:
    """The template's pod (controller.GetPodFromTemplate) with the daemon tolerations, pinned
    to `node_name`, labelled with the revision and template generation."""
    pod = pod_from_template(ds, api_version="apps/v1", kind="DaemonSet")
    spec = pod["spec"]
    spec["tolerations"] = daemon_tolerations(spec)
    pin_to_node(spec, node_name)
    pod["metadata"]["labels"].update({CONTROLLER_REVISION_HASH: revision_hash,
                                      POD_TEMPLATE_GENERATION: str(get_int(meta(ds), "generation"))})
    return pod


def _hash_of(pod: JsonDict) -> str:
    return str((meta(pod).get("labels") or {}).get(CONTROLLER_REVISION_HASH) or "")


@dataclass(slots=True)
class _NodePlan:
    should_run: bool
    keep_running: bool
    pods: list[JsonDict] = field(default_factory=list)


class DaemonSetController:
    NAME = "daemonset-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._ds_inf = informers.informer(DAEMONSETS)
        self._pod_inf = informers.informer(PODS)
        self._node_inf = informers.informer(NODES)
        self._rev_inf = informers.informer(CONTROLLERREVISIONS)
        for inf in (self._ds_inf, self._pod_inf, self._rev_inf):
            inf.add_index(NAMESPACE_INDEX, namespace_index)
        self.queue = WorkQueue()
        self.recorder = EventRecorder(client, self.NAME, clock=self._clock)
        self._ds_inf.add_handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n),
                                 on_delete=self._enqueue)
        self._pod_inf.add_handler(on_add=self._pod_event, on_update=self._pod_updated, on_delete=self._pod_event)
        self._node_inf.add_handler(on_add=self._node_event, on_update=self._node_updated,
                                   on_delete=self._node_event)

    def _enqueue(self, ds: JsonDict) -> None:
        self.queue.add(object_key(ds))

    def _pod_event(self, pod: JsonDict) -> None:
        ref = controller_ref(pod)
        if ref and ref.get("kind") == "DaemonSet":
            self.queue.add(f"{meta(pod).get('namespace')}/{ref.get('name')}")

    def _pod_updated(self, old: JsonDict, cur: JsonDict) -> None:
        self._pod_event(cur)
        min_ready = 0
        ref = controller_ref(cur)
        if ref and ref.get("kind") == "DaemonSet":
            ds = self._ds_inf.store.get(f"{meta(cur).get('namespace')}/{ref.get('name')}")
            min_ready = get_int((ds or {}).get("spec"), "minReadySeconds")
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(cur) and ds is not None:
                self.queue.add_after(object_key(ds), float(min_ready) + 1.0)

    def _node_event(self, _node: JsonDict) -> None:
        for ds in self._ds_inf.store.list():
            self.queue.add(object_key(ds))

    def _node_updated(self, old: JsonDict, cur: JsonDict) -> None:
        if (meta(old).get("labels"), old.get("spec")) != (meta(cur).get("labels"), cur.get("spec")):
            self._node_event(cur)

    async def run(self, workers: int = 2) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            for inf in (self._ds_inf, self._pod_inf, self._node_inf, self._rev_inf):
                await inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(run_workers(self.queue, self.sync, workers=workers, name=self.NAME),
                           name=f"{self.NAME}-workers")

    # ---- sync

    def _plan(self, ds: JsonDict) -> dict[str, _NodePlan]:
        ns = str(meta(ds).get("namespace") or "")
        uid = meta(ds).get("uid")
        plans: dict[str, _NodePlan] = {}
        for node in self._node_inf.store.list():
            run, keep = node_should_run(ds, node)
            plans[str(meta(node).get("name"))] = _NodePlan(run, keep)
        for p in self._pod_inf.by_index(NAMESPACE_INDEX, ns):
            if (controller_ref(p) or {}).get("uid") != uid:
                continue
            node_name = target_node(p)
            plans.setdefault(node_name, _NodePlan(False, False)).pods.append(p)
        for plan in plans.values():
            plan.pods.sort(key=lambda p: (creation_time(p) or self._clock.now(), str(meta(p).get("name"))))
        return plans

    async def sync(self, key: str) -> None:
        ds = self._ds_inf.store.get(key)
        if ds is None or is_deleting(ds):
            return
        ns = str(meta(ds).get("namespace") or "")
        revisions = owned_revisions(self._rev_inf.by_index(NAMESPACE_INDEX, ns), ds)
        selector_labels = dict(((ds.get("spec") or {}).get("selector") or {}).get("matchLabels") or {})
        rev, collisions = await ensure_revision(self._client, ds, revisions, kind="DaemonSet",
                                                selector_labels=selector_labels)
        cur_hash = str((meta(rev).get("labels") or {}).get(CONTROLLER_REVISION_HASH) or "")
        try:
            await self._manage(ds, self._plan(ds), cur_hash)
            strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
            if strategy.get("type", "RollingUpdate") == "RollingUpdate":
                await self._rolling_update(ds, self._plan(ds), cur_hash)
        finally:
            plans = self._plan(ds)
            await self._update_status(ds, plans, cur_hash, collisions)
            live = {f"{meta(ds).get('name')}-{_hash_of(p)}" for pl in plans.values() for p in pl.pods}
            live.add(str(meta(rev).get("name")))
            await trim_history(self._client, owned_revisions(self._rev_inf.by_index(NAMESPACE_INDEX, ns), ds),
                               keep=get_int(ds.get("spec"), "revisionHistoryLimit", 10), live=live)

    def _surge(self, ds: JsonDict, desired: int) -> tuple[int, int]:
        strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
        ru = strategy.get("rollingUpdate") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return 0, 1
        try:
            surge = scaled_value(ru.get("maxSurge"), desired, round_up=True)
            unavailable = scaled_value(ru.get("maxUnavailable", 1), desired, round_up=True)
        except ValueError:
            return 0, 1
        if surge == 0 and unavailable == 0:
            unavailable = 1
        return surge, unavailable

    async def _manage(self, ds: JsonDict, plans: dict[str, _NodePlan], cur_hash: str) -> None:
        surge, _ = self._surge(ds, sum(1 for p in plans.values() if p.should_run))
        create: list[str] = []
        delete: list[JsonDict] = []
        for node_name, plan in plans.items():
            live = [p for p in plan.pods if not is_deleting(p)]
            if plan.should_run or (plan.keep_running and live):
                failed = [p for p in live if (p.get("status") or {}).get("phase") == "Failed"]
                if failed:
                    delete.extend(failed)  # replaced on the next pass, as upstream backs off
                    continue
                if not live and not [p for p in plan.pods if is_deleting(p)]:
                    if plan.should_run:
                        create.append(node_name)
                    continue
                if len(live) > 1:
                    if surge > 0:
                        # keep the oldest pod of the old revision and the newest of the current one
                        old = [p for p in live if _hash_of(p) != cur_hash]
                        new = [p for p in live if _hash_of(p) == cur_hash]
                        keep = {id(x) for x in (old[:1] + new[-1:])}
                    else:
                        keep = {id(live[0])}
                    delete.extend(p for p in live if id(p) not in keep)
            else:
                delete.extend(live)
        await self._create_and_delete(ds, create, delete, cur_hash)

    async def _create_and_delete(self, ds: JsonDict, create: list[str], delete: list[JsonDict],
                                 cur_hash: str) -> None:
        ns = meta(ds).get("namespace")
        dsname = meta(ds).get("name")

        async def mk(node_name: str) -> None:
            try:
                pod = await self._client.create(PODS, new_daemon_pod(ds, node_name, cur_hash), ns, read_only=True)
            except ApiError as e:
                self.recorder.event(ds, "Warning", "FailedCreate", f"Error creating: {e.message}")
                raise
            self.recorder.event(ds, "Normal", "SuccessfulCreate", f"Created pod: {meta(pod).get('name')}")

        async def rm(pod: JsonDict) -> None:
            try:
                await self._client.delete(PODS, str(meta(pod).get("name")), ns)
            except NotFoundError:
                return
            self.recorder.event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {meta(pod).get('name')}")

        results = await asyncio.gather(*(mk(n) for n in create), *(rm(p) for p in delete), return_exceptions=True)
        for r in results:
            if isinstance(r, asyncio.CancelledError):
                raise r
        errs = [r for r in results if isinstance(r, BaseException)]
        if errs:
            logger.info("%s: ds=%s/%s %d create/delete errors, first=%r", self.NAME, ns, dsname, len(errs), errs[0])
            self.queue.add_rate_limited(object_key(ds))

    async def _rolling_update(self, ds: JsonDict, plans: dict[str, _NodePlan], cur_hash: str) -> None:
        """rollingUpdate: replace old-revision pods within the maxUnavailable / maxSurge budget."""
        desired = [pl for pl in plans.values() if pl.should_run]
        surge, max_unavailable = self._surge(ds, len(desired))
        min_ready = get_int(ds.get("spec"), "minReadySeconds")
        now = self._clock.now()
        ns = meta(ds).get("namespace")

        def avail(p: JsonDict) -> bool:
            return not is_deleting(p) and is_pod_available(p, min_ready, now)

        create: list[str] = []
        delete: list[JsonDict] = []
        if surge == 0:
            unavailable = 0
            candidates: list[JsonDict] = []
            for pl in desired:
                live = [p for p in pl.pods if not is_deleting(p)]
                if not live or not avail(live[0]):
                    unavailable += 1
                    if live and _hash_of(live[0]) != cur_hash:
                        delete.append(live[0])  # an unavailable old pod costs nothing to replace
                    continue
                if _hash_of(live[0]) != cur_hash:
                    candidates.append(live[0])
            budget = max(0, max_unavailable - unavailable)
            delete.extend(candidates[:budget])
        else:
            surging = 0
            want_surge: list[str] = []
            for node_name, pl in plans.items():
                if not pl.should_run:
                    continue
                live = [p for p in pl.pods if not is_deleting(p)]
                old = [p for p in live if _hash_of(p) != cur_hash]
                new = [p for p in live if _hash_of(p) == cur_hash]
                if not old:
                    continue
                if new:
                    if avail(new[-1]):
                        delete.extend(old)
                    else:
                        surging += 1
                    continue
                if not avail(old[0]):
                    delete.extend(old)  # nothing is served there anyway
                    continue
                want_surge.append(node_name)
            create = want_surge[:max(0, surge - surging)]
        if create or delete:
            logger.debug("%s: rolling update ds=%s/%s create=%d delete=%d", self.NAME, ns, meta(ds).get("name"),
                         len(create), len(delete))
            await self._create_and_delete(ds, create, delete, cur_hash)

    async def _update_status(self, ds: JsonDict, plans: dict[str, _NodePlan], cur_hash: str,
                             collisions: int) -> None:
        min_ready = get_int(ds.get("spec"), "minReadySeconds")
        now = self._clock.now()
        desired = current = mis = ready = updated = available = 0
        for pl in plans.values():
            live = [p for p in pl.pods if not is_deleting(p)]
            if pl.should_run:
                desired += 1
                if live:
                    current += 1
                    newest = live[-1]
                    if is_pod_ready(newest):
                        ready += 1
                        if is_pod_available(newest, min_ready, now):
                            available += 1
                    if any(_hash_of(p) == cur_hash for p in live):
                        updated += 1
            elif live:
                mis += 1
        st: dict[str, Any] = {"desiredNumberScheduled": desired, "currentNumberScheduled": current,
                              "numberMisscheduled": mis, "numberReady": ready, "updatedNumberScheduled": updated,
                              "numberAvailable": available, "numberUnavailable": desired - available,
                              "observedGeneration": get_int(meta(ds), "generation")}
        if collisions:
            st["collisionCount"] = collisions
        # numberAvailable / numberUnavailable / updatedNumberScheduled are omitempty upstream
        st = {k: v for k, v in st.items() if v or k in ("desiredNumberScheduled", "currentNumberScheduled",
                                                         "numberMisscheduled", "numberReady")}
        old = dict(ds.get("status") or {})
        keep = {k: v for k, v in old.items() if k == "conditions"}
        new = {**keep, **st}
        if new == old:
            if ready != available and min_ready > 0:
                self.queue.add_after(object_key(ds), float(min_ready))
            return
        body = copy.copy(ds)
        body["status"] = new
        try:
            await self._client.update_status(DAEMONSETS, body, read_only=True)
        except NotFoundError:
            return
        except ConflictError:
            self.queue.add_rate_limited(object_key(ds))
        if ready != available and min_ready > 0:
            self.queue.add_after(object_key(ds), float(min_ready))


__all__ = ["DEFAULT_TOLERATIONS", "DaemonSetController", "daemon_tolerations", "node_should_run"]
