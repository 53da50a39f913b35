"""Garbage collector (layer L4), after kube-controller-manager's `pkg/controller/garbagecollector`.

Keeps a uid -> node graph of every object of the watched kinds: each node knows its owner
references and its dependents. Two queues drive it, as upstream:

- attempt-to-delete: a dependent whose owners may be gone. The item is re-read from the API,
  its owners classified as solid (exist), dangling (absent, or a different uid) or waiting
  (being deleted in the foreground). Solid owners keep it (dangling/waiting references are
  removed); otherwise it is deleted with the policy its own finalizers imply (Background
  default, Foreground when a foreground owner waits and it has dependents of its own).
  Owners being deleted in the foreground are also processed here: when no dependent with
  `blockOwnerDeletion: true` remains, the `foregroundDeletion` finalizer is removed.
- orphan: an owner deleted with propagationPolicy Orphan (the API server put the `orphan`
  finalizer on it): the owner reference is removed from each dependent, then the finalizer.

Watched kinds, as upstream's `GetDeletableResources` + monitors: every built-in resource that
supports list, watch and delete (one version per resource, events excluded as upstream ignores
them), and every custom resource: the collector watches the CustomResourceDefinitions and runs
one monitor (an informer it owns) per established CRD, on its preferred served version
(Kubernetes version priority: v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > other names), started when
the CRD is established and stopped when it goes. So an object owned by a custom resource is
collected when that owner is deleted (Background, Foreground and Orphan as for any kind), and a
custom resource owned by a built-in object likewise. An owner of a kind never served is treated
as present (upstream retries on its REST-mapping error and never deletes because of it). When a
CRD goes (or is re-created with another kind), its monitor stops and the kind stops resolving, as
upstream's RESTMapper forgets it at the next discovery sync: an owner reference to that kind is
then an unknown kind (kept), except to an owner this collector saw deleted (its `gone` ghost in
the graph), which stays dangling: the CRD's cleanup finalizer deletes every custom object before
the CRD goes, and their dependents must still follow them.

Data flow: informers (built-in) / own monitors (custom resources, from the CRD informer) ->
graph updates (synchronous, in the handler) -> keys (uids) on the two queues -> workers ->
patch / delete through the Client.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, field

from minik3s.api.errors import ConflictError, NotFoundError
from minik3s.api.resources import CRDS, ResourceInfo, builtin_resources
from minik3s.api.types import JsonDict
from minik3s.client.informer import Informer, SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import meta, run_workers
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"

# kube-controller-manager's garbage collector ignores events (GarbageCollectorController's
# GCIgnoredResources); every other deletable resource is watched
MONITOR_SYNC_TIMEOUT = 30.0  # seconds the first monitors may take to list before the workers start
IGNORED_RESOURCES = frozenset({"events", "events.events.k8s.io"})
_DELETABLE_VERBS = frozenset({"list", "watch", "delete"})


def deletable_builtin_resources() -> list[ResourceInfo]:
    """Built-in resources the collector watches: list + watch + delete, not virtual, not ignored,
    one entry per resource (the stored version, not one served by conversion)."""
    out: dict[str, ResourceInfo] = {}
    for r in builtin_resources():
        if r.virtual or r.converted or r.qualified in IGNORED_RESOURCES or not _DELETABLE_VERBS <= set(r.verbs):
            continue
        out.setdefault(r.qualified, r)
    return list(out.values())


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key for Kubernetes' version priority (smaller first): GA before beta before alpha,
    higher numbers first within each, then versions not of that form alphabetically.
    Example: sorted(["v1beta1", "foo", "v2", "v1", "v1alpha1", "v10beta3"]) by this key ->
    v2, v1, v10beta3, v1beta1, v1alpha1, foo."""
    m = _KUBE_VERSION.fullmatch(version)
    if m is None:
        return (3, 0, 0, version)
    major, stage, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    rank = {"": 0, "beta": 1, "alpha": 2}[stage or ""]
    return (rank, -major, -minor, "")


_KUBE_VERSION = re.compile(r"v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?")


def crd_monitor_resource(crd: JsonDict) -> ResourceInfo | None:
    """The resource the collector watches for an established CRD (its served version of highest
    priority), or None while the CRD is not established or serves no version."""
    conditions = (crd.get("status") or {}).get("conditions") or []
    if not any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
        return None
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, plural, kind = spec.get("group") or "", names.get("plural") or "", names.get("kind") or ""
    served = [str(v.get("name")) for v in spec.get("versions") or [] if v.get("served", True) and v.get("name")]
    if not (group and plural and kind and served):
        return None
    version = min(served, key=version_priority)
    subs = next((v.get("subresources") or {} for v in spec.get("versions") or [] if v.get("name") == version), {})
    return ResourceInfo(group, version, plural, kind, spec.get("scope", "Namespaced") == "Namespaced",
                        subresources=tuple(n for n in ("status", "scale") if n in subs),
                        singular=names.get("singular") or kind.lower(), builtin=False)


@dataclass(slots=True)
class _Monitor:
    """A custom resource's informer, owned by the collector (upstream `monitor`)."""

    res: ResourceInfo
    informer: Informer
    task: asyncio.Task[None]


@dataclass(slots=True)
class Node:
    """One object in the ownership graph (upstream `node`); `virtual` until observed."""

    uid: str
    res: ResourceInfo | None
    namespace: str
    name: str
    owners: list[JsonDict] = field(default_factory=list)
    dependents: set[str] = field(default_factory=set)
    finalizers: tuple[str, ...] = ()
    deleting: bool = False
    virtual: bool = False
    # a ghost of an object this collector saw deleted (kept while dependents still point at it)
    gone: bool = False

    @property
    def deleting_dependents(self) -> bool:
        return self.deleting and FOREGROUND in self.finalizers


def _res_key(api_version: str, kind: str) -> tuple[str, str]:
    group = api_version.rpartition("/")[0]
    return group, kind


class GarbageCollector:
    NAME = "garbage-collector-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None,
                 resources: list[ResourceInfo] | None = None) -> None:
        self._client = client
        self._clock = clock or Clock()
        if resources is None:
            resources = deletable_builtin_resources()
        self._resources = resources
        self._by_kind: dict[tuple[str, str], ResourceInfo] = {
            (r.group, r.kind): r for r in builtin_resources()}
        self.graph: dict[str, Node] = {}
        self.attempt_to_delete = WorkQueue()
        self.attempt_to_orphan = WorkQueue()
        self._informers: list[Informer] = []
        for res in resources:
            inf = informers.informer(res)
            self._informers.append(inf)
            self._watch(inf, res)
        # custom resources: one monitor per established CRD, kept in step with the CRD informer
        self._crds = informers.informer(CRDS)
        self._crds_changed = asyncio.Event()
        self._crds.add_handler(on_add=lambda _o: self._crds_changed.set(),
                               on_update=lambda _o, _n: self._crds_changed.set(),
                               on_delete=lambda _o: self._crds_changed.set())
        self.monitors: dict[tuple[str, str], _Monitor] = {}  # (group, plural) -> monitor
        self._tg: asyncio.TaskGroup | None = None

    def _watch(self, inf: Informer, res: ResourceInfo) -> None:
        def on_add(obj: JsonDict) -> None:
            self._observe(res, obj)

        def on_update(_old: JsonDict, new: JsonDict) -> None:
            self._observe(res, new)

        def on_delete(obj: JsonDict) -> None:
            self._removed(res, obj)

        inf.add_handler(on_add=on_add, on_update=on_update, on_delete=on_delete)

    # ---- graph maintenance (GraphBuilder.processGraphChanges)

    def _observe(self, res: ResourceInfo, obj: JsonDict) -> None:
        m = meta(obj)
        uid = m.get("uid")
        if not uid:
            return
        node = self.graph.get(uid)
        if (node is not None and not node.virtual and not node.deleting and not m.get("deletionTimestamp")
                and node.owners == (m.get("ownerReferences") or [])
                and node.finalizers == tuple(m.get("finalizers") or ())):
            return  # an update that changes nothing the graph holds (a bind, a status write)
        owners = [dict(r) for r in m.get("ownerReferences") or []]
        old_owner_uids: set[str] = set()
        was_deleting_deps = False
        if node is None:
            node = Node(uid, res, m.get("namespace") or "", m.get("name") or "")
            self.graph[uid] = node
        else:
            old_owner_uids = {str(o.get("uid")) for o in node.owners}
            was_deleting_deps = node.deleting_dependents
            if node.virtual:
                node.virtual = node.gone = False
                node.res, node.namespace, node.name = res, m.get("namespace") or "", m.get("name") or ""
                # a virtual node was observed: its dependents need re-checking (uid may differ)
                for dep in node.dependents:
                    self.attempt_to_delete.add(dep)
        old_owners = node.owners
        node.owners = owners
        node.finalizers = tuple(m.get("finalizers") or ())
        node.deleting = bool(m.get("deletionTimestamp"))
        new_owner_uids = {str(o.get("uid")) for o in owners}
        for ouid in old_owner_uids - new_owner_uids:
            owner = self.graph.get(ouid)
            if owner is not None:
                owner.dependents.discard(uid)
                if owner.deleting_dependents:
                    self.attempt_to_delete.add(ouid)
        for ref in owners:
            ouid = str(ref.get("uid") or "")
            if not ouid:
                continue
            owner = self.graph.get(ouid)
            if owner is None:
                owner = Node(ouid, self._res_for(ref), node.namespace if self._namespaced(ref) else "",
                             ref.get("name") or "", virtual=True)
                self.graph[ouid] = owner
                self.attempt_to_delete.add(uid)  # the owner may not exist at all
            owner.dependents.add(uid)
            if owner.virtual:
                self.attempt_to_delete.add(uid)
        # blockOwnerDeletion dropped while the owner waits in the foreground
        if old_owners != owners:
            for ref in old_owners:
                owner = self.graph.get(ref.get("uid") or "")
                if owner is not None and owner.deleting_dependents:
                    self.attempt_to_delete.add(owner.uid)
        if node.deleting and ORPHAN in node.finalizers:
            self.attempt_to_orphan.add(uid)
        if node.deleting_dependents and not was_deleting_deps:
            for dep in node.dependents:
                self.attempt_to_delete.add(dep)
            self.attempt_to_delete.add(uid)
        elif node.deleting_dependents:
            self.attempt_to_delete.add(uid)

    def _removed(self, res: ResourceInfo, obj: JsonDict, *, gone: bool = True) -> None:
        """`obj` left the graph: deleted (`gone`), or only out of sight (its monitor restarts on
        another version, so the object may well exist)."""
        uid = meta(obj).get("uid")
        if not uid:
            return
        node = self.graph.pop(uid, None)
        if node is None:
            return
        for ref in node.owners:
            owner = self.graph.get(ref.get("uid") or "")
            if owner is None:
                continue
            owner.dependents.discard(uid)
            if owner.deleting_dependents:
                self.attempt_to_delete.add(owner.uid)
            if owner.virtual and not owner.dependents:
                self.graph.pop(owner.uid, None)
        # an object listed as its own owner is not its own dependent once it is gone
        dependents = node.dependents - {uid}
        for dep in dependents:
            self.attempt_to_delete.add(dep)
        if dependents:
            # keep the dependents pointing at a virtual node until they are re-checked
            ghost = Node(uid, res, node.namespace, node.name, dependents=dependents, virtual=True, gone=gone)
            self.graph[uid] = ghost

    def _res_for(self, ref: JsonDict) -> ResourceInfo | None:
        return self._by_kind.get(_res_key(str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")))

    def _namespaced(self, ref: JsonDict) -> bool:
        res = self._res_for(ref)
        return True if res is None else res.namespaced

    # ---- run

    async def run(self, workers: int = 5) -> None:
        for inf in (*self._informers, self._crds):
            await inf.wait_for_sync()
        logger.info("%s: caches synced", self.NAME)
        try:
            async with asyncio.TaskGroup() as tg:
                self._tg = tg
                self.sync_monitors()
                await self._wait_for_monitors()
                tg.create_task(self._follow_crds(), name=f"{self.NAME}-crds")
                self._start_workers(tg, workers)
        finally:
            self._tg = None

    # ---- custom-resource monitors (GarbageCollector.resyncMonitors, driven by CRD events)

    async def _wait_for_monitors(self) -> None:
        """Before the workers start, let the custom-resource monitors fill the graph (upstream
        waits for every monitor; a monitor that cannot list in time is waited for no longer)."""
        try:
            async with asyncio.timeout(MONITOR_SYNC_TIMEOUT):
                for mon in list(self.monitors.values()):
                    await mon.informer.wait_for_sync()
        except TimeoutError:
            logger.warning("%s: custom resource monitors not synced after %.0fs; starting anyway", self.NAME,
                           MONITOR_SYNC_TIMEOUT)

    async def _follow_crds(self) -> None:
        while True:
            await self._crds_changed.wait()
            self._crds_changed.clear()
            self.sync_monitors()

    def sync_monitors(self) -> None:
        """Start a monitor for each established CRD without one (or whose served resource
        changed), stop those whose CRD is gone. Objects of a stopped monitor leave the graph
        as if deleted, so their dependents are re-checked."""
        tg = self._tg
        if tg is None:
            return
        wanted: dict[tuple[str, str], ResourceInfo] = {}
        for crd in self._crds.store.list():
            res = crd_monitor_resource(crd)
            if res is not None:
                wanted[(res.group, res.resource)] = res
        for key, mon in list(self.monitors.items()):
            res = wanted.get(key)
            if res is not None and (res.version, res.kind, res.namespaced) == (
                    mon.res.version, mon.res.kind, mon.res.namespaced):
                continue
            mon.task.cancel()
            del self.monitors[key]
            logger.info("%s: stopped monitor resource=%s/%s", self.NAME, mon.res.qualified, mon.res.version)
            for obj in mon.informer.store.list():
                # the CRD is gone: so are its objects (purged with it); else the monitor only restarts
                self._removed(mon.res, obj, gone=res is None)
            if self._by_kind.get((mon.res.group, mon.res.kind)) is mon.res:
                # the kind no longer resolves (a re-created CRD serving it registers it again)
                del self._by_kind[(mon.res.group, mon.res.kind)]
        for key, res in wanted.items():
            if key in self.monitors:
                continue
            inf = Informer(self._client, res)
            self._watch(inf, res)
            self._by_kind[(res.group, res.kind)] = res  # resolvable while the monitor runs
            task = tg.create_task(inf.run(), name=f"{self.NAME}-monitor-{res.qualified}")
            self.monitors[key] = _Monitor(res, inf, task)
            logger.info("%s: started monitor resource=%s/%s", self.NAME, res.qualified, res.version)
        self._resolve_virtual_owners()

    def _resolve_virtual_owners(self) -> None:
        """Owners first seen when their kind was not served (no resource) get one once a monitor
        serves the kind, and their dependents are re-checked (upstream: the attempt that failed
        on the REST mapping succeeds on a retry after discovery caught up)."""
        for node in list(self.graph.values()):
            if not node.virtual or node.res is not None:
                continue
            for dep_uid in node.dependents:
                dep = self.graph.get(dep_uid)
                ref = next((r for r in dep.owners if r.get("uid") == node.uid), None) if dep is not None else None
                res = self._res_for(ref) if ref is not None else None
                if dep is None or res is None:
                    continue
                node.res = res
                node.namespace = dep.namespace if res.namespaced else ""
                for d in node.dependents:
                    self.attempt_to_delete.add(d)
                break

    def _start_workers(self, tg: asyncio.TaskGroup, workers: int) -> None:
        tg.create_task(run_workers(self.attempt_to_delete, self.process_attempt_to_delete,
                                   workers=workers, name=f"{self.NAME}-delete"), name=f"{self.NAME}-delete")
        tg.create_task(run_workers(self.attempt_to_orphan, self.process_orphan,
                                   workers=max(1, workers // 2), name=f"{self.NAME}-orphan"),
                       name=f"{self.NAME}-orphan")

    # ---- attempt to delete

    async def _get_live(self, node: Node) -> JsonDict | None:
        if node.res is None:
            return None
        try:
            return await self._client.get(node.res, node.name, node.namespace if node.res.namespaced else None)
        except NotFoundError:
            return None

    async def _owner_state(self, ref: JsonDict, namespace: str) -> str:
        """'solid', 'dangling' or 'waiting' for one owner reference (classifyReferences)."""
        owner_node = self.graph.get(ref.get("uid") or "")
        if owner_node is not None and owner_node.gone:
            return "dangling"  # seen deleted (upstream: its absent-owner cache), kind known or not
        res = self._res_for(ref)
        if res is None:
            return "solid"  # unknown kind (never served, or its CRD is gone): never delete because of it
        if owner_node is not None and not owner_node.virtual:
            if owner_node.deleting_dependents:
                return "waiting"
            return "solid"
        try:
            owner = await self._client.get(res, str(ref.get("name")), namespace if res.namespaced else None)
        except NotFoundError:
            return "dangling"
        m = meta(owner)
        if m.get("uid") != ref.get("uid"):
            return "dangling"
        if m.get("deletionTimestamp") and FOREGROUND in (m.get("finalizers") or []):
            return "waiting"
        return "solid"

    async def process_attempt_to_delete(self, uid: str) -> None:
        node = self.graph.get(uid)
        if node is None or node.virtual:
            if node is not None and node.virtual and node.res is not None and node.dependents:
                # a virtual owner: confirm it is absent, then let the dependents be re-checked
                live = await self._get_live(node)
                if live is None or meta(live).get("uid") != uid:
                    for dep in list(node.dependents):
                        if dep != uid:  # never re-queue itself: the worker would spin without yielding
                            self.attempt_to_delete.add(dep)
            return
        live = await self._get_live(node)
        if live is None or meta(live).get("uid") != uid:
            return
        lm = meta(live)
        finalizers = lm.get("finalizers") or []
        if lm.get("deletionTimestamp"):
            if FOREGROUND in finalizers:
                await self._process_deleting_dependents(node, live)
            return
        owners = lm.get("ownerReferences") or []
        if not owners:
            return
        solid: list[JsonDict] = []
        dangling: list[JsonDict] = []
        waiting: list[JsonDict] = []
        for ref in owners:
            state = await self._owner_state(ref, lm.get("namespace") or "")
            {"solid": solid, "dangling": dangling, "waiting": waiting}[state].append(ref)
        if solid:
            if dangling or waiting:
                gone = {r.get("uid") for r in dangling + waiting}
                keep = [r for r in owners if r.get("uid") not in gone]
                await self._patch_owner_refs(node, live, keep)
            return
        if waiting and node.dependents:
            policy = "Foreground"
        elif ORPHAN in finalizers:
            policy = "Orphan"
        elif FOREGROUND in finalizers:
            policy = "Foreground"
        else:
            policy = "Background"
        logger.info("%s: deleting dependent %s %s/%s uid=%s policy=%s", self.NAME,
                    node.res.kind if node.res else "?", node.namespace, node.name, uid, policy)
        assert node.res is not None
        try:
            await self._client.delete(node.res, node.name, node.namespace if node.res.namespaced else None,
                                      preconditions={"uid": uid}, propagation_policy=policy)
        except (NotFoundError, ConflictError):
            pass

    async def _process_deleting_dependents(self, node: Node, live: JsonDict) -> None:
        """processDeletingDependentsItem: remove `foregroundDeletion` once no dependent blocks."""
        blocking = []
        for dep_uid in node.dependents:
            dep = self.graph.get(dep_uid)
            if dep is None or dep.virtual:
                continue
            for ref in dep.owners:
                if ref.get("uid") == node.uid and ref.get("blockOwnerDeletion"):
                    blocking.append(dep)
        if not blocking:
            await self._remove_finalizer(node, FOREGROUND)
            return
        for dep in blocking:
            if not dep.deleting:
                self.attempt_to_delete.add(dep.uid)

    async def _patch_owner_refs(self, node: Node, live: JsonDict, keep: list[JsonDict]) -> None:
        assert node.res is not None
        lm = meta(live)
        body = {"metadata": {"ownerReferences": keep or None, "uid": lm.get("uid"),
                             "resourceVersion": lm.get("resourceVersion")}}
        try:
            await self._client.patch(node.res, node.name, body, node.namespace if node.res.namespaced else None, read_only=True)
        except NotFoundError:
            pass

    async def _remove_finalizer(self, node: Node, finalizer: str) -> None:
        """Drop one finalizer with a resourceVersion precondition, retrying on conflicts."""
        assert node.res is not None
        for _ in range(5):
            live = await self._get_live(node)
            if live is None or meta(live).get("uid") != node.uid:
                return
            lm = meta(live)
            fins = list(lm.get("finalizers") or [])
            if finalizer not in fins:
                return
            fins = [f for f in fins if f != finalizer]
            body = {"metadata": {"finalizers": fins or None, "resourceVersion": lm.get("resourceVersion")}}
            try:
                await self._client.patch(node.res, node.name, body,
                                         node.namespace if node.res.namespaced else None, read_only=True)
                logger.info("%s: removed finalizer %s from %s %s/%s", self.NAME, finalizer,
                            node.res.kind, node.namespace, node.name)
                return
            except ConflictError:
                continue
            except NotFoundError:
                return
        raise ConflictError(f"could not remove finalizer {finalizer} from {node.name}")

    # ---- orphan

    async def process_orphan(self, uid: str) -> None:
        """attemptToOrphanWorker: strip the owner reference from every dependent, then the
        `orphan` finalizer from the owner."""
        node = self.graph.get(uid)
        if node is None or node.virtual or node.res is None:
            return
        for dep_uid in list(node.dependents):
            dep = self.graph.get(dep_uid)
            if dep is None or dep.virtual or dep.res is None:
                continue
            for _ in range(5):
                live = await self._get_live(dep)
                if live is None or meta(live).get("uid") != dep_uid:
                    break
                refs = meta(live).get("ownerReferences") or []
                keep = [r for r in refs if r.get("uid") != uid]
                if len(keep) == len(refs):
                    break
                try:
                    await self._patch_owner_refs(dep, live, keep)
                    break
                except ConflictError:
                    continue
        await self._remove_finalizer(node, ORPHAN)
