"""Informer event handlers: route API changes into the cache and the queue (layer L4).

Upstream: pkg/scheduler/eventhandlers.go. Pods: assigned ones feed the cache and wake
unschedulable pods (AssignedPod Add/Update/Delete events); unassigned pods whose
spec.schedulerName is one of our profiles feed the queue (a pod carrying a deletionTimestamp
leaves the queue); a pod that becomes assigned leaves the queue. Nodes feed the cache and wake
unschedulable pods (NodeAdd, node updates classified by `node_scheduling_property_changes`).
Gang objects (Volcano / x-k8s PodGroups, Workloads, Volcano Queues) wake the pods the gang
plugins rejected (PodGroup Add/Update events), when some profile registers for them. Storage
objects (PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities,
VolumeAttachments) do the same for the volume plugins: `<Kind>Add/Update/Delete` events, for
the actions some profile registered (upstream addAllEventHandlers' per-GVK handlers).
Handlers are synchronous and cheap; they never call the API.
"""

from __future__ import annotations

import logging
from collections.abc import Container, Mapping
from typing import Any, Protocol

from minik3s.api.gang import VOLCANO_PODGROUPS, VOLCANO_QUEUES, XK8S_PODGROUPS
from minik3s.api.resources import (
    CSIDRIVERS,
    CSINODES,
    CSISTORAGECAPACITIES,
    PERSISTENTVOLUMECLAIMS,
    PERSISTENTVOLUMES,
    STORAGECLASSES,
    VOLUMEATTACHMENTS,
    WORKLOADS,
    ResourceInfo,
)
from minik3s.api.types import JsonDict
from scheduler.backend.cache import Cache
from scheduler.backend.queue import (
    EVENT_NODE_ADD,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_DELETE,
    PriorityQueue,
    node_scheduling_property_changes,
    scheduler_name,
)
from scheduler.framework.interface import ActionType, ClusterEvent, EventResource

logger = logging.getLogger(__name__)

GANG_OBJECT_RESOURCES = (VOLCANO_PODGROUPS, XK8S_PODGROUPS, WORKLOADS, VOLCANO_QUEUES)
EVENT_POD_GROUP_ADD = ClusterEvent(EventResource.POD_GROUP, ActionType.ADD, "PodGroupAdd")
EVENT_POD_GROUP_UPDATE = ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE, "PodGroupUpdate")


# the storage kinds whose events plugins may register, and the resource each is watched as
STORAGE_OBJECT_RESOURCES: dict[EventResource, ResourceInfo] = {
    EventResource.PERSISTENT_VOLUME: PERSISTENTVOLUMES,
    EventResource.PERSISTENT_VOLUME_CLAIM: PERSISTENTVOLUMECLAIMS,
    EventResource.STORAGE_CLASS: STORAGECLASSES,
    EventResource.CSI_NODE: CSINODES,
    EventResource.CSI_DRIVER: CSIDRIVERS,
    EventResource.CSI_STORAGE_CAPACITY: CSISTORAGECAPACITIES,
    EventResource.VOLUME_ATTACHMENT: VOLUMEATTACHMENTS,
}


class _InformerLike(Protocol):
    def add_handler(self, *, on_add: Any = None, on_update: Any = None, on_delete: Any = None) -> None: ...


def assigned(pod: JsonDict) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def terminating(pod: JsonDict) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _uid(pod: JsonDict) -> str:
    return (pod.get("metadata") or {}).get("uid") or ""


class EventHandlers:
    def __init__(self, cache: Cache, queue: PriorityQueue, profiles: Container[str], *,
                 reject_waiting_pod: Any = None) -> None:
        self.cache = cache
        self.queue = queue
        self.profiles = profiles
        self._reject_waiting_pod = reject_waiting_pod

    def register(self, pod_informer: _InformerLike, node_informer: _InformerLike) -> None:
        pod_informer.add_handler(on_add=self.on_pod_add, on_update=self.on_pod_update,
                                 on_delete=self.on_pod_delete)
        node_informer.add_handler(on_add=self.on_node_add, on_update=self.on_node_update,
                                  on_delete=self.on_node_delete)

    def register_gang_informers(self, informers: Any, frameworks: Mapping[str, Any]) -> None:
        """Watch the gang objects when a profile's plugins registered PodGroup events (so a
        scheduler without gang plugins never lists CRDs its server may not serve)."""
        wanted = any(reg.event.resource == EventResource.POD_GROUP
                     for fw in frameworks.values() for regs in fw.events_to_register().values() for reg in regs)
        if not wanted:
            return
        for res in GANG_OBJECT_RESOURCES:
            informers.informer(res).add_handler(on_add=self.on_gang_object_add, on_update=self.on_gang_object_update)

    def register_storage_informers(self, informers: Any, frameworks: Mapping[str, Any]) -> list[Any]:
        """Watch the storage kinds some profile's plugins registered events for, delivering only
        the registered actions (a scheduler whose plugins want none watches none). Returns the
        informers, for the scheduler to wait for before its first cycle."""
        wanted: dict[EventResource, ActionType] = {}
        for fw in frameworks.values():
            for regs in fw.events_to_register().values():
                for reg in regs:
                    res = reg.event.resource
                    if res in STORAGE_OBJECT_RESOURCES:
                        wanted[res] = wanted.get(res, ActionType(0)) | reg.event.action
        out = []
        for res, actions in wanted.items():
            inf = informers.informer(STORAGE_OBJECT_RESOURCES[res])
            add = ClusterEvent(res, ActionType.ADD, f"{res.value}Add")
            update = ClusterEvent(res, ActionType.UPDATE, f"{res.value}Update")
            delete = ClusterEvent(res, ActionType.DELETE, f"{res.value}Delete")
            move = self.queue.move_all_to_active_or_backoff
            inf.add_handler(
                on_add=(lambda obj, e=add, m=move: m(e, None, obj)) if actions & ActionType.ADD else None,
                on_update=(lambda old, new, e=update, m=move: m(e, old, new)) if actions & ActionType.UPDATE
                else None,
                on_delete=(lambda obj, e=delete, m=move: m(e, obj, None)) if actions & ActionType.DELETE else None)
            out.append(inf)
        return out

    def on_gang_object_add(self, obj: JsonDict) -> None:
        self.queue.move_all_to_active_or_backoff(EVENT_POD_GROUP_ADD, None, obj)

    def on_gang_object_update(self, old: JsonDict, new: JsonDict) -> None:
        if old.get("spec") != new.get("spec") or (old.get("metadata") or {}).get("labels") != \
                (new.get("metadata") or {}).get("labels"):
            self.queue.move_all_to_active_or_backoff(EVENT_POD_GROUP_UPDATE, old, new)

    def responsible(self, pod: JsonDict) -> bool:
        return scheduler_name(pod) in self.profiles

    # ---- pods -------------------------------------------------------------------------
    def on_pod_add(self, pod: JsonDict) -> None:
        if assigned(pod):
            self.cache.add_pod(pod)
            self.queue.assigned_pod_added(pod)
        elif self.responsible(pod):
            if terminating(pod):
                return
            self.queue.add(pod)
            self.queue.move_all_to_active_or_backoff(EVENT_UNSCHEDULED_POD_ADD, None, pod)

    def on_pod_update(self, old: JsonDict, new: JsonDict) -> None:
        if assigned(new):
            if not assigned(old):
                if self.responsible(old):
                    self.queue.delete(old)
                self.cache.add_pod(new)
                self.queue.assigned_pod_added(new)
            else:
                self.cache.update_pod(old, new)
                self.queue.assigned_pod_updated(old, new)
            return
        if not self.responsible(new):
            return
        if terminating(new):
            self.queue.delete(new)
            return
        self.queue.update(old, new)

    def on_pod_delete(self, pod: JsonDict) -> None:
        if assigned(pod):
            self.cache.remove_pod(pod)
            self.queue.assigned_pod_deleted(pod)
            return
        if not self.responsible(pod):
            return
        self.queue.delete(pod)
        if self._reject_waiting_pod is not None:
            self._reject_waiting_pod(_uid(pod))
        self.queue.move_all_to_active_or_backoff(EVENT_UNSCHEDULED_POD_DELETE, pod, None)

    # ---- nodes ------------------------------------------------------------------------
    def on_node_add(self, node: JsonDict) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, node)

    def on_node_update(self, old: JsonDict, new: JsonDict) -> None:
        self.cache.update_node(old, new)
        for evt in node_scheduling_property_changes(new, old):
            self.queue.move_all_to_active_or_backoff(evt, old, new)

    def on_node_delete(self, node: JsonDict) -> None:
        self.cache.remove_node(node)
