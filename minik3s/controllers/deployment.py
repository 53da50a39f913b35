"""Deployment controller (layer L4), after kube-controller-manager's `pkg/controller/deployment`.

A Deployment owns one ReplicaSet per pod template (`<deploy>-<pod-template-hash>`); the
controller creates the new one, moves replicas from old to new (RollingUpdate within
maxSurge/maxUnavailable, or Recreate: old to zero, wait for their pods, then new), scales
proportionally on spec.replicas changes (the scale subresource writes spec.replicas),
keeps `deployment.kubernetes.io/revision` in step, cleans up beyond revisionHistoryLimit and
reports status with the Available and Progressing conditions.

Data flow: Deployment, ReplicaSet and Pod informers -> `ns/name` keys -> `sync(key)` ->
ReplicaSet create/update/delete, Deployment annotation patch and `deployments/status`.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

from minik3s.api.errors import AlreadyExistsError, ConflictError, NotFoundError
from minik3s.api.resources import DEPLOYMENTS, PODS, REPLICASETS
from minik3s.api.selectors import LabelSelector, label_selector_from_dict
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory, object_key
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers import deployment_util as du
from minik3s.controllers.common import (
    controller_ref,
    get_int,
    is_deleting,
    is_pod_terminal,
    make_controller_ref,
    meta,
    now_str,
    run_workers,
)
from minik3s.controllers.replicaset import NAMESPACE_INDEX, namespace_index
from minik3s.utils.clock import Clock, parse_time

logger = logging.getLogger(__name__)

_ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)  # Go's zero metav1.Time: an unset lastUpdateTime


class DeploymentController:
    NAME = "deployment-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._d_inf = informers.informer(DEPLOYMENTS)
        self._rs_inf = informers.informer(REPLICASETS)
        self._pod_inf = informers.informer(PODS)
        for inf in (self._d_inf, self._rs_inf, self._pod_inf):
            inf.add_index(NAMESPACE_INDEX, namespace_index)
        self.queue = WorkQueue()
        self.recorder = EventRecorder(client, self.NAME, clock=self._clock)
        self._d_inf.add_handler(on_add=self._enqueue, on_update=lambda o, n: self._enqueue(n),
                                on_delete=self._enqueue)
        self._rs_inf.add_handler(on_add=self._rs_event, on_update=self._rs_updated, on_delete=self._rs_event)
        self._pod_inf.add_handler(on_delete=self._pod_deleted)

    # ---- handlers

    def _enqueue(self, d: JsonDict) -> None:
        self.queue.add(object_key(d))

    def _owner_of(self, rs: JsonDict) -> JsonDict | None:
        ref = controller_ref(rs)
        if not ref or ref.get("kind") != "Deployment":
            return None
        d = self._d_inf.store.get(f"{meta(rs).get('namespace')}/{ref.get('name')}")
        if d is None or meta(d).get("uid") != ref.get("uid"):
            return None
        return d

    def _rs_event(self, rs: JsonDict) -> None:
        d = self._owner_of(rs)
        if d is not None:
            self._enqueue(d)
            return
        if controller_ref(rs) is None:
            labels = meta(rs).get("labels") or {}
            for cand in self._d_inf.by_index(NAMESPACE_INDEX, meta(rs).get("namespace") or ""):
                try:
                    sel = label_selector_from_dict((cand.get("spec") or {}).get("selector"))
                except ValueError:
                    continue
                if not sel.empty and sel.matches(labels):
                    self._enqueue(cand)

    def _rs_updated(self, old: JsonDict, cur: JsonDict) -> None:
        if controller_ref(old) != controller_ref(cur):
            self._rs_event(old)
        self._rs_event(cur)

    def _pod_deleted(self, pod: JsonDict) -> None:
        ref = controller_ref(pod)
        if not ref or ref.get("kind") != "ReplicaSet":
            return
        rs = self._rs_inf.store.get(f"{meta(pod).get('namespace')}/{ref.get('name')}")
        if rs is None:
            return
        d = self._owner_of(rs)
        if d is not None and not du.is_rolling_update(d):
            self._enqueue(d)

    # ---- run

    async def run(self, workers: int = 5) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            for inf in (self._d_inf, self._rs_inf, self._pod_inf):
                await inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(run_workers(self.queue, self.sync, workers=workers, name=self.NAME),
                           name=f"{self.NAME}-workers")

    # ---- sync

    async def sync(self, key: str) -> None:
        cached = self._d_inf.store.get(key)
        if cached is None:
            return
        d = copy.deepcopy(cached)
        try:
            selector = label_selector_from_dict((d.get("spec") or {}).get("selector"))
        except ValueError as e:
            logger.info("%s: invalid selector deployment=%s err=%s", self.NAME, key, e)
            return
        if selector.empty:
            self.recorder.event(d, "Warning", "SelectingAll",
                                "This deployment is selecting all pods. A non-empty selector is required.")
            if get_int(d.get("status"), "observedGeneration") < get_int(meta(d), "generation"):
                d.setdefault("status", {})["observedGeneration"] = get_int(meta(d), "generation")
                await self._client.update_status(DEPLOYMENTS, d, read_only=True)
            return
        rses = await self._rses_for(d, selector)
        if is_deleting(d):
            await self._sync_status_only(d, rses)
            return
        await self._check_paused_conditions(d)
        if (d.get("spec") or {}).get("paused"):
            await self._sync_scale(d, rses)
            return
        if await self._is_scaling_event(d, rses):
            await self._sync_scale(d, rses)
            return
        if du.is_rolling_update(d):
            await self._rollout_rolling(d, rses)
        else:
            await self._rollout_recreate(d, rses)

    async def _rses_for(self, d: JsonDict, selector: LabelSelector) -> list[JsonDict]:
        """getReplicaSetsForDeployment: claim (adopt/release) ReplicaSets by selector."""
        uid = meta(d).get("uid")
        out: list[JsonDict] = []
        for rs in self._rs_inf.by_index(NAMESPACE_INDEX, meta(d).get("namespace") or ""):
            ref = controller_ref(rs)
            matches = selector.matches(meta(rs).get("labels") or {})
            if ref is not None:
                if ref.get("uid") != uid:
                    continue
                if matches:
                    out.append(rs)
                elif not is_deleting(d):
                    refs = [r for r in meta(rs).get("ownerReferences") or [] if r.get("uid") != uid]
                    await self._patch_rs_meta(rs, {"ownerReferences": refs or None})
                continue
            if matches and not is_deleting(d) and not is_deleting(rs):
                refs = [dict(r) for r in meta(rs).get("ownerReferences") or []]
                refs.append(make_controller_ref(d, api_version="apps/v1", kind="Deployment"))
                adopted = await self._patch_rs_meta(rs, {"ownerReferences": refs})
                if adopted is not None:
                    out.append(adopted)
        return out

    async def _patch_rs_meta(self, rs: JsonDict, patch_meta: JsonDict) -> JsonDict | None:
        m = meta(rs)
        body = {"metadata": {**patch_meta, "uid": m.get("uid"), "resourceVersion": m.get("resourceVersion")}}
        try:
            return await self._client.patch(REPLICASETS, m["name"], body, m.get("namespace"))
        except (NotFoundError, ConflictError):
            return None

    # ---- new / old ReplicaSets

    async def _get_all(self, d: JsonDict, rses: list[JsonDict], *, create: bool
                       ) -> tuple[JsonDict | None, list[JsonDict]]:
        """getAllReplicaSetsAndSyncRevision."""
        existing = du.find_new_rs(d, rses)
        old = [rs for rs in rses if rs is not existing]
        new_rs = await self._get_new_rs(d, rses, old, existing, create=create)
        return new_rs, old

    async def _get_new_rs(self, d: JsonDict, rses: list[JsonDict], old: list[JsonDict],
                          existing: JsonDict | None, *, create: bool) -> JsonDict | None:
        new_revision = str(du.max_revision(old) + 1)
        now = now_str(self._clock)
        status = d.setdefault("status", {})
        if existing is not None:
            # the two paths set_new_rs_annotations and the minReadySeconds fix may edit, copied;
            # the rest (the pod template) shared with the informer's object and never edited
            rs = dict(existing)
            rs["metadata"] = dict(meta(existing))
            rs["metadata"]["annotations"] = dict(rs["metadata"].get("annotations") or {})
            rs["spec"] = dict(existing.get("spec") or {})
            changed = du.set_new_rs_annotations(d, rs, new_revision, exists=True)
            min_ready = get_int(d.get("spec"), "minReadySeconds")
            if get_int(rs.get("spec"), "minReadySeconds") != min_ready:
                rs["spec"]["minReadySeconds"] = min_ready
                changed = True
            if changed:
                rs = await self._client.update(REPLICASETS, rs)
            await self._set_revision(d, (meta(rs).get("annotations") or {}).get(du.REVISION, ""))
            conds = status.setdefault("conditions", [])
            if du.progress_deadline(d) is not None and du.condition(status, "Progressing") is None:
                du.set_deployment_condition(conds, du.new_condition(
                    "Progressing", "True", du.FOUND_NEW_RS, f'Found new replica set "{meta(rs).get("name")}"', now))
                d.update(await self._client.update_status(DEPLOYMENTS, d))
            return rs
        if not create:
            return None
        collision = status.get("collisionCount")
        template = copy.deepcopy((d.get("spec") or {}).get("template") or {})
        h = du.compute_hash(template, collision)
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), du.POD_TEMPLATE_HASH: h}
        selector = copy.deepcopy((d.get("spec") or {}).get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), du.POD_TEMPLATE_HASH: h}
        dm = meta(d)
        name = f"{dm.get('name')}-{h}"
        new_rs: JsonDict = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": dm.get("namespace"),
                "labels": dict(tmeta["labels"]),
                "ownerReferences": [make_controller_ref(d, api_version="apps/v1", kind="Deployment")],
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": get_int(d.get("spec"), "minReadySeconds"),
                "selector": selector,
                "template": template,
            },
        }
        new_rs["spec"]["replicas"] = du.new_rs_new_replicas(d, old, new_rs)
        du.set_new_rs_annotations(d, new_rs, new_revision, exists=False)
        try:
            created = await self._client.create(REPLICASETS, new_rs, dm.get("namespace"))
        except AlreadyExistsError:
            other = await self._client.get(REPLICASETS, name, dm.get("namespace"))
            ref = controller_ref(other)
            if (ref is not None and ref.get("uid") == dm.get("uid")
                    and du.template_equal_ignore_hash((other.get("spec") or {}).get("template"),
                                                      (d.get("spec") or {}).get("template"))):
                return other
            status["collisionCount"] = int(collision or 0) + 1
            await self._client.update_status(DEPLOYMENTS, d, read_only=True)
            logger.info("%s: hash collision deployment=%s/%s collisionCount=%d", self.NAME,
                        dm.get("namespace"), dm.get("name"), status["collisionCount"])
            raise
        replicas = du.replicas_of(created, 0)
        if replicas > 0:
            self.recorder.event(d, "Normal", "ScalingReplicaSet",
                                f"Scaled up replica set {name} from 0 to {replicas}")
        await self._set_revision(d, new_revision)
        conds = status.setdefault("conditions", [])
        if du.progress_deadline(d) is not None:
            du.set_deployment_condition(conds, du.new_condition(
                "Progressing", "True", du.NEW_RS_CREATED, f'Created new replica set "{name}"', now))
            d.update(await self._client.update_status(DEPLOYMENTS, d))
        return created

    async def _set_revision(self, d: JsonDict, revision: str) -> None:
        """SetDeploymentRevision; upstream writes the annotation through UpdateStatus (the apps
        status strategy keeps annotation changes), so metadata.generation does not move."""
        if not revision or (meta(d).get("annotations") or {}).get(du.REVISION) == revision:
            return
        m = meta(d)
        patched = await self._client.patch(
            DEPLOYMENTS, m["name"], {"metadata": {"annotations": {du.REVISION: revision},
                                                  "resourceVersion": m.get("resourceVersion")}},
            m.get("namespace"), subresource="status")
        status = d.get("status")
        d.update(patched)
        if status is not None:
            d["status"] = status

    # ---- scaling

    async def _scale_rs(self, d: JsonDict, rs: JsonDict, new_scale: int, operation: str | None = None
                        ) -> JsonDict:
        """scaleReplicaSet (+ the ScalingReplicaSet event)."""
        old_scale = du.replicas_of(rs, 0)
        body = copy.deepcopy(rs)
        annotations_changed = du.set_replicas_annotations(body, du.replicas_of(d), du.replicas_of(d) + du.max_surge(d))
        if old_scale == new_scale and not annotations_changed:
            return rs
        body["spec"]["replicas"] = new_scale
        updated = await self._client.update(REPLICASETS, body)
        if old_scale != new_scale:
            op = operation or ("up" if new_scale > old_scale else "down")
            self.recorder.event(d, "Normal", "ScalingReplicaSet",
                                f"Scaled {op} replica set {meta(rs).get('name')} from {old_scale} to {new_scale}")
        return updated

    async def _scale(self, d: JsonDict, new_rs: JsonDict | None, old: list[JsonDict]) -> None:
        """scale(): proportional scaling across active ReplicaSets."""
        want = du.replicas_of(d)
        latest = du.find_active_or_latest(new_rs, old)
        if latest is not None:
            if du.replicas_of(latest, 0) != want:
                await self._scale_rs(d, latest, want)
            return
        if du.is_saturated(d, new_rs):
            for rs in du.filter_active(old):
                await self._scale_rs(d, rs, 0)
            return
        if not du.is_rolling_update(d):
            return
        active = du.filter_active(old + ([new_rs] if new_rs is not None else []))
        allowed = want + du.max_surge(d) if want > 0 else 0
        to_add = allowed - du.sum_spec_replicas(active)
        operation = None
        if to_add != 0:
            # ReplicaSetsBySizeNewer (scaling up) / BySizeOlder (down): largest first, ties by age
            active.sort(key=du.creation_key, reverse=to_add > 0)
            active.sort(key=lambda r: -du.replicas_of(r, 0))
            operation = "up" if to_add > 0 else "down"
        sizes: dict[str, int] = {}
        added = 0
        for rs in active:
            name = meta(rs).get("name") or ""
            if to_add != 0:
                p = du.proportion(rs, d, to_add, added)
                sizes[name] = du.replicas_of(rs, 0) + p
                added += p
            else:
                sizes[name] = du.replicas_of(rs, 0)
        if to_add != 0 and active:
            first = meta(active[0]).get("name") or ""
            sizes[first] = max(0, sizes[first] + to_add - added)
        for rs in active:
            await self._scale_rs(d, rs, sizes[meta(rs).get("name") or ""], operation)

    async def _is_scaling_event(self, d: JsonDict, rses: list[JsonDict]) -> bool:
        new_rs, old = await self._get_all(d, rses, create=False)
        for rs in du.filter_active(old + ([new_rs] if new_rs is not None else [])):
            desired = du.desired_annotation(rs)
            if desired is not None and desired != du.replicas_of(d):
                return True
        return False

    async def _sync_scale(self, d: JsonDict, rses: list[JsonDict]) -> None:
        """sync(): scaling while paused or on a scaling event, then status."""
        new_rs, old = await self._get_all(d, rses, create=False)
        await self._scale(d, new_rs, old)
        rses = self._fresh(d)
        new_rs = du.find_new_rs(d, rses)
        old = [rs for rs in rses if rs is not new_rs]
        if (d.get("spec") or {}).get("paused"):
            await self._cleanup(d, old)
        await self._sync_status(d, old + ([new_rs] if new_rs else []), new_rs)

    def _fresh(self, d: JsonDict) -> list[JsonDict]:
        uid = meta(d).get("uid")
        return [rs for rs in self._rs_inf.by_index(NAMESPACE_INDEX, meta(d).get("namespace") or "")
                if (controller_ref(rs) or {}).get("uid") == uid]

    async def _sync_status_only(self, d: JsonDict, rses: list[JsonDict]) -> None:
        new_rs, old = await self._get_all(d, rses, create=False)
        await self._sync_status(d, old + ([new_rs] if new_rs else []), new_rs)

    async def _sync_status(self, d: JsonDict, all_rses: Sequence[JsonDict], new_rs: JsonDict | None) -> None:
        status = du.calculate_status(d, all_rses, new_rs, now_str(self._clock))
        if status == (d.get("status") or {}):
            return
        d["status"] = status
        d.update(await self._client.update_status(DEPLOYMENTS, d))

    async def _check_paused_conditions(self, d: JsonDict) -> None:
        if du.progress_deadline(d) is None:
            return
        status = d.setdefault("status", {})
        cond = du.condition(status, "Progressing")
        if cond is not None and cond.get("reason") == du.TIMED_OUT:
            return
        paused = bool((d.get("spec") or {}).get("paused"))
        paused_cond = cond is not None and cond.get("reason") == du.PAUSED
        now = now_str(self._clock)
        if paused and not paused_cond:
            new = du.new_condition("Progressing", "Unknown", du.PAUSED, "Deployment is paused", now)
        elif not paused and paused_cond:
            new = du.new_condition("Progressing", "Unknown", du.RESUMED, "Deployment is resumed", now)
        else:
            return
        du.set_deployment_condition(status.setdefault("conditions", []), new)
        d.update(await self._client.update_status(DEPLOYMENTS, d))

    # ---- rolling update

    async def _rollout_rolling(self, d: JsonDict, rses: list[JsonDict]) -> None:
        new_rs, old = await self._get_all(d, rses, create=True)
        all_rses: list[JsonDict] = old + ([new_rs] if new_rs else [])
        if new_rs is not None and await self._reconcile_new(d, new_rs, all_rses):
            await self._sync_rollout_status(d, self._fresh(d))
            return
        if await self._reconcile_old(d, new_rs, old, all_rses):
            await self._sync_rollout_status(d, self._fresh(d))
            return
        if du.deployment_complete(d, d.get("status") or {}):
            await self._cleanup(d, old)
        await self._sync_rollout_status(d, all_rses)

    async def _reconcile_new(self, d: JsonDict, new_rs: JsonDict, all_rses: list[JsonDict]) -> bool:
        want = du.replicas_of(d)
        have = du.replicas_of(new_rs, 0)
        if have == want:
            return False
        if have > want:
            await self._scale_rs(d, new_rs, want)
            return True
        target = du.new_rs_new_replicas(d, all_rses, new_rs)
        if target == have:
            return False
        await self._scale_rs(d, new_rs, target)
        return True

    async def _reconcile_old(self, d: JsonDict, new_rs: JsonDict | None, old: list[JsonDict],
                             all_rses: list[JsonDict]) -> bool:
        """reconcileOldReplicaSets: clean up unhealthy replicas, then scale down within
        maxUnavailable. Example: replicas 10, maxUnavailable 2, all 10 available, new RS at 3
        with 0 available -> maxScaledDown = 13 - 8 - 3 = 2."""
        if du.sum_spec_replicas(old) == 0:
            return False
        all_pods = du.sum_spec_replicas(all_rses)
        min_available = du.replicas_of(d) - du.max_unavailable(d)
        new_unavailable = (du.replicas_of(new_rs, 0) - get_int((new_rs or {}).get("status"), "availableReplicas")
                           if new_rs else 0)
        max_scaled_down = all_pods - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        old, cleaned = await self._cleanup_unhealthy_replicas(d, old, max_scaled_down)
        scaled = await self._scale_down_old_for_rolling(d, old + ([new_rs] if new_rs else []), old)
        return cleaned + scaled > 0

    async def _cleanup_unhealthy_replicas(self, d: JsonDict, old: list[JsonDict], max_cleanup: int
                                          ) -> tuple[list[JsonDict], int]:
        """cleanupUnhealthyReplicas: scale the oldest ReplicaSets down by their unavailable
        replicas, at most `max_cleanup` in all. Returns the ReplicaSets (scaled ones replaced
        by the API's answer) and how many replicas went. Example: spec 10, 8 available,
        max_cleanup 1 -> 10 to 9, returns 1."""
        out = sorted(old, key=du.creation_key)
        cleaned = 0
        for i, rs in enumerate(out):
            if cleaned >= max_cleanup:
                break
            spec_r = du.replicas_of(rs, 0)
            if spec_r == 0:
                continue
            unhealthy = spec_r - get_int(rs.get("status"), "availableReplicas")
            if unhealthy <= 0:
                continue
            n = min(max_cleanup - cleaned, unhealthy)
            out[i] = await self._scale_rs(d, rs, spec_r - n)
            cleaned += n
        return out, cleaned

    async def _scale_down_old_for_rolling(self, d: JsonDict, all_rses: list[JsonDict], old: list[JsonDict]) -> int:
        """scaleDownOldReplicaSetsForRollingUpdate: with more available than minAvailable,
        scale the oldest ReplicaSets down by the excess. Returns the replicas removed.
        Example: replicas 10, maxUnavailable 2, 10 available -> 2 removed."""
        min_available = du.replicas_of(d) - du.max_unavailable(d)
        available = du.sum_status(all_rses, "availableReplicas")
        if available <= min_available:
            return 0
        total = available - min_available
        scaled = 0
        for rs in sorted(old, key=du.creation_key):
            if scaled >= total:
                break
            spec_r = du.replicas_of(rs, 0)
            if spec_r == 0:
                continue
            n = min(spec_r, total - scaled)
            await self._scale_rs(d, rs, spec_r - n)
            scaled += n
        return scaled

    # ---- recreate

    async def _rollout_recreate(self, d: JsonDict, rses: list[JsonDict]) -> None:
        new_rs, old = await self._get_all(d, rses, create=False)
        if await self._scale_down_old_for_recreate(d, old):
            await self._sync_rollout_status(d, self._fresh(d))
            return
        if self._old_pods_running(old):
            await self._sync_rollout_status(d, old + ([new_rs] if new_rs else []))
            return
        if new_rs is None:
            new_rs, old = await self._get_all(d, rses, create=True)
        if new_rs is not None and du.replicas_of(new_rs, 0) != du.replicas_of(d):
            await self._scale_rs(d, new_rs, du.replicas_of(d))
        if du.deployment_complete(d, d.get("status") or {}):
            await self._cleanup(d, old)
        await self._sync_rollout_status(d, self._fresh(d))

    async def _scale_down_old_for_recreate(self, d: JsonDict, old: list[JsonDict]) -> bool:
        """scaleDownOldReplicaSetsForRecreate: every active old ReplicaSet to 0."""
        scaled = False
        for rs in du.filter_active(old):
            await self._scale_rs(d, rs, 0)
            scaled = True
        return scaled

    def _old_pods_running(self, old: list[JsonDict]) -> bool:
        if du.sum_status(old, "replicas") > 0:
            return True
        uids = {meta(rs).get("uid") for rs in old}
        if not old:
            return False
        ns = meta(old[0]).get("namespace") or ""
        for pod in self._pod_inf.by_index(NAMESPACE_INDEX, ns):
            ref = controller_ref(pod)
            if ref is not None and ref.get("uid") in uids and not is_pod_terminal(pod):
                return True
        return False

    # ---- cleanup and rollout status

    async def _cleanup(self, d: JsonDict, old: list[JsonDict]) -> None:
        """cleanupDeployment: delete the oldest idle ReplicaSets beyond revisionHistoryLimit."""
        limit = (d.get("spec") or {}).get("revisionHistoryLimit", du.DEFAULT_REVISION_HISTORY_LIMIT)
        if limit is None:
            return
        alive = [rs for rs in old if not is_deleting(rs)]
        diff = len(alive) - int(limit)
        if diff <= 0:
            return
        for rs in sorted(alive, key=du.rs_by_revision_key)[:diff]:
            st = rs.get("status") or {}
            if (get_int(st, "replicas") != 0 or du.replicas_of(rs, 0) != 0
                    or get_int(meta(rs), "generation") > get_int(st, "observedGeneration")):
                continue
            m = meta(rs)
            try:
                await self._client.delete(REPLICASETS, m["name"], m.get("namespace"))
            except NotFoundError:
                pass

    async def _sync_rollout_status(self, d: JsonDict, all_rses: Sequence[JsonDict],
                                   new_rs: JsonDict | None | Literal["find"] = "find") -> None:
        """syncRolloutStatus: status plus the Progressing condition (removed without a progress
        deadline), the ReplicaSets' ReplicaFailure, and a requeue for the progress deadline
        when nothing changed. `new_rs` "find" looks the new ReplicaSet up in `all_rses`."""
        if new_rs == "find":
            new_rs = du.find_new_rs(d, all_rses)
        now_s = now_str(self._clock)
        now = self._clock.now()
        status = du.calculate_status(d, all_rses, new_rs, now_s)
        conds = status["conditions"]
        has_deadline = du.progress_deadline(d) is not None
        if not has_deadline:
            conds[:] = [c for c in conds if c.get("type") != "Progressing"]
        cur = du.condition(d.get("status") or {}, "Progressing")
        complete = (get_int(status, "replicas") == get_int(status, "updatedReplicas")
                    and cur is not None and cur.get("reason") == du.NEW_RS_AVAILABLE)
        if has_deadline and not complete:
            subject = f'ReplicaSet "{meta(new_rs).get("name")}"' if new_rs else f'Deployment "{meta(d).get("name")}"'
            if du.deployment_complete(d, status):
                du.set_deployment_condition(conds, du.new_condition(
                    "Progressing", "True", du.NEW_RS_AVAILABLE, f"{subject} has successfully progressed.", now_s))
            elif du.deployment_progressing(d, status):
                # a Progressing=True condition keeps its transition time; the rest is rewritten
                # even when the reason stays the same (lastUpdateTime records the progress)
                new = du.new_condition("Progressing", "True", du.RS_UPDATED, f"{subject} is progressing.", now_s)
                if cur is not None:
                    if cur.get("status") == "True":
                        new["lastTransitionTime"] = cur.get("lastTransitionTime", now_s)
                    conds[:] = [c for c in conds if c.get("type") != "Progressing"]
                du.set_deployment_condition(conds, new)
            elif du.deployment_timed_out(d, status, now):
                du.set_deployment_condition(conds, du.new_condition(
                    "Progressing", "False", du.TIMED_OUT, f"{subject} has timed out progressing.", now_s))
        # the ReplicaSets' ReplicaFailure (a pod create refused: quota, admission) moves onto the
        # Deployment, and leaves with it
        failure = du.replica_failure(all_rses, new_rs)
        if failure is not None:
            du.set_deployment_condition(conds, failure)
        else:
            conds[:] = [c for c in conds if c.get("type") != "ReplicaFailure"]
        if status == (d.get("status") or {}):
            self.requeue_stuck_deployment(d, status)
            return
        if du.condition(status, "Progressing") != du.condition(d.get("status") or {}, "Progressing"):
            cond = du.condition(status, "Progressing")
            if cond and cond.get("reason") == du.TIMED_OUT:
                self.recorder.event(d, "Warning", du.TIMED_OUT, str(cond.get("message")))
        d["status"] = status
        d.update(await self._client.update_status(DEPLOYMENTS, d))

    def requeue_stuck_deployment(self, d: JsonDict, new_status: JsonDict) -> float:
        """requeueStuckDeployment: with a progress deadline and a Progressing condition on the
        Deployment, an unfinished rollout is looked at again when its deadline passes. Returns
        the wait in seconds: -1 none, 0 now (rate limited), else the time left (queued a second
        later). Example: deadline 60 s, condition updated 30 s ago -> 30."""
        deadline = du.progress_deadline(d)
        cond = du.condition(d.get("status") or {}, "Progressing")
        if deadline is None or cond is None:
            return -1.0
        if du.deployment_complete(d, new_status) or cond.get("reason") == du.TIMED_OUT:
            return -1.0
        since = parse_time(cond.get("lastUpdateTime")) or _ZERO_TIME
        after = (since - self._clock.now()).total_seconds() + deadline
        key = object_key(d)
        if after < 1.0:
            self.queue.add_rate_limited(key)
            return 0.0
        self.queue.add_after(key, after + 1.0)
        return after
