"""Which gang a pod belongs to, and what that gang asks for (layer L2, pure).

Shared by the scheduler's gang plugins and the group status controller, so both read the three
membership conventions the same way (see minik3s.api.gang):

    pod.spec.workloadRef {name, podGroup, podGroupReplicaKey}  -> Workload (KEP-4671)
    label  scheduling.x-k8s.io/pod-group: <name>                -> scheduler-plugins PodGroup
    annotation scheduling.k8s.io/group-name: <name>             -> Volcano PodGroup

A pod names at most one gang; if it carries several markers the first in this order wins.
`GroupRef.key` identifies a gang (one Workload podGroup replica is one gang):
`workload/ns/train/workers/r0`, `x-k8s/ns/pg1`, `volcano/ns/pg1`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minik3s.api.gang import VOLCANO_GROUP_NAME_ANNOTATION, XK8S_POD_GROUP_LABEL, GangApi
from minik3s.api.helpers.resources import resource_list_to_ints
from minik3s.api.types import JsonDict

# Volcano marks each pod with the name of its job task (minTaskMember keys)
VOLCANO_TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"


@dataclass(frozen=True, slots=True)
class GroupRef:
    api: GangApi
    namespace: str
    name: str  # the PodGroup or Workload object
    pod_group: str = ""  # Workload: spec.podGroups[].name
    replica_key: str = ""  # Workload: podGroupReplicaKey

    @property
    def key(self) -> str:
        if self.api == "workload":
            return f"workload/{self.namespace}/{self.name}/{self.pod_group}/{self.replica_key}"
        return f"{self.api}/{self.namespace}/{self.name}"

    @property
    def object_key(self) -> str:
        """The group object's informer key (`ns/name`)."""
        return f"{self.namespace}/{self.name}"

    def display(self) -> str:
        """How messages name the group: `ns/name` (Workload: `ns/name/podGroup[/replica]`)."""
        if self.api == "workload":
            tail = f"/{self.replica_key}" if self.replica_key else ""
            return f"{self.namespace}/{self.name}/{self.pod_group}{tail}"
        return self.object_key


def group_ref(pod: JsonDict) -> GroupRef | None:
    """The gang `pod` belongs to, or None (three cheap dict reads for an ordinary pod)."""
    spec = pod.get("spec") or {}
    meta = pod.get("metadata") or {}
    ref = spec.get("workloadRef")
    if isinstance(ref, dict) and ref.get("name") and ref.get("podGroup"):
        return GroupRef("workload", meta.get("namespace") or "default", str(ref["name"]), str(ref["podGroup"]),
                        str(ref.get("podGroupReplicaKey") or ""))
    labels = meta.get("labels")
    if labels:
        name = labels.get(XK8S_POD_GROUP_LABEL)
        if name:
            return GroupRef("x-k8s", meta.get("namespace") or "default", str(name))
    ann = meta.get("annotations")
    if ann:
        name = ann.get(VOLCANO_GROUP_NAME_ANNOTATION)
        if name:
            return GroupRef("volcano", meta.get("namespace") or "default", str(name))
    return None


def group_key(pod: JsonDict) -> str:
    """`group_ref(pod).key`, or "" for a pod outside any gang (an informer index function)."""
    ref = group_ref(pod)
    return ref.key if ref is not None else ""


# informer index of pods by gang key (scheduler and controller share the name and function)
GANG_INDEX = "minik3s.io/gang"


def gang_index(pod: JsonDict) -> list[str]:
    key = group_key(pod)
    return [key] if key else []


def task_name(pod: JsonDict) -> str:
    return str(((pod.get("metadata") or {}).get("annotations") or {}).get(VOLCANO_TASK_SPEC_ANNOTATION) or "")


@dataclass(frozen=True, slots=True)
class GroupPolicy:
    """What a gang asks for, read from its PodGroup / Workload object.

    `gang` is False for a Workload podGroup with the `basic` policy (no all-or-nothing rule).
    `min_resources` is in scheduler units (cpu milli-cores, bytes, counts)."""

    min_member: int
    gang: bool = True
    min_resources: dict[str, int] = field(default_factory=dict)
    min_task_member: dict[str, int] = field(default_factory=dict)
    schedule_timeout_seconds: float | None = None
    queue: str = ""
    priority_class_name: str = ""
    uid: str = ""
    creation_timestamp: str = ""


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def group_policy(ref: GroupRef, obj: JsonDict | None) -> GroupPolicy | None:
    """The policy of `ref` from its group object (None when the object, or the Workload's
    podGroup, does not exist)."""
    if obj is None:
        return None
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    uid = str(meta.get("uid") or "")
    created = str(meta.get("creationTimestamp") or "")
    if ref.api == "workload":
        for pg in spec.get("podGroups") or ():
            if isinstance(pg, dict) and pg.get("name") == ref.pod_group:
                policy = pg.get("policy") or {}
                gang = policy.get("gang")
                if isinstance(gang, dict):
                    return GroupPolicy(max(_int(gang.get("minCount")), 1), uid=uid, creation_timestamp=created)
                return GroupPolicy(1, gang=False, uid=uid, creation_timestamp=created)
        return None
    try:
        min_resources = resource_list_to_ints(spec.get("minResources") or None)
    except (ValueError, TypeError):
        min_resources = {}
    timeout = spec.get("scheduleTimeoutSeconds") if ref.api == "x-k8s" else None
    tasks = spec.get("minTaskMember") if ref.api == "volcano" else None
    return GroupPolicy(
        max(_int(spec.get("minMember")), 1) if ref.api == "x-k8s" else _int(spec.get("minMember")),
        min_resources=min_resources,
        min_task_member={str(k): _int(v) for k, v in tasks.items()} if isinstance(tasks, dict) else {},
        schedule_timeout_seconds=float(_int(timeout)) if _int(timeout) > 0 else None,
        queue=str(spec.get("queue") or "") if ref.api == "volcano" else "",
        priority_class_name=str(spec.get("priorityClassName") or ""),
        uid=uid,
        creation_timestamp=created,
    )
