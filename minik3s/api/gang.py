"""Gang-scheduling APIs (layer L2): the three ways a pod joins an all-or-nothing group.

- Volcano `scheduling.volcano.sh/v1beta1` PodGroup (+ cluster-scoped Queue): pods join with the
  annotation `scheduling.k8s.io/group-name: <podgroup>`.
- scheduler-plugins Coscheduling `scheduling.x-k8s.io/v1alpha1` PodGroup: pods join with the
  label `scheduling.x-k8s.io/pod-group: <podgroup>`.
- Kubernetes v1.35 alpha `scheduling.k8s.io/v1alpha1` Workload (KEP-4671): pods join with
  `spec.workloadRef {name, podGroup, podGroupReplicaKey}`; each (podGroup, replica key) is
  its own gang.

In real clusters the two PodGroups are CRDs, so minik3s installs them (and Volcano's Queue) at
bootstrap as CustomResourceDefinitions (`builtin_crds()`, YAML files in `crds/`): validation,
defaults and `kubectl get` columns come from their OpenAPI schemas through the ordinary CRD
machinery. Workload is a built-in kind upstream and here (models in minik3s.api.scheduling,
resources row, apiserver/strategies/workload.py).

Data flow: bootstrap -> CRDs -> apiserver registry; components address the resources through
the descriptors below (VOLCANO_PODGROUPS, XK8S_PODGROUPS, VOLCANO_QUEUES, WORKLOADS).
"""

from __future__ import annotations

import functools
from importlib import resources as importlib_resources
from typing import Literal

import yaml

from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict

VOLCANO_GROUP = "scheduling.volcano.sh"
XK8S_GROUP = "scheduling.x-k8s.io"
WORKLOAD_GROUP = "scheduling.k8s.io"

# Volcano: v1beta1.KubeGroupNameAnnotationKey
VOLCANO_GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
# scheduler-plugins: v1alpha1.PodGroupLabel
XK8S_POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
# scheduler name Volcano's pods use; minik3s serves it with a gang profile
VOLCANO_SCHEDULER_NAME = "volcano"

# Volcano PodGroup phases (v1beta1.PodGroupPhase)
VOLCANO_PENDING, VOLCANO_RUNNING, VOLCANO_UNKNOWN = "Pending", "Running", "Unknown"
VOLCANO_INQUEUE, VOLCANO_COMPLETED = "Inqueue", "Completed"
# Volcano condition types and reasons
VOLCANO_UNSCHEDULABLE_TYPE, VOLCANO_SCHEDULED_TYPE = "Unschedulable", "Scheduled"
REASON_NOT_ENOUGH_RESOURCES, REASON_NOT_ENOUGH_TASKS = "NotEnoughResources", "NotEnoughTasks"
REASON_POD_FAILED, REASON_POD_DELETED = "PodFailed", "PodDeleted"
# scheduler-plugins PodGroup phases (v1alpha1.PodGroupPhase)
XK8S_PENDING, XK8S_SCHEDULING, XK8S_RUNNING = "Pending", "Scheduling", "Running"
XK8S_UNKNOWN, XK8S_FINISHED, XK8S_FAILED = "Unknown", "Finished", "Failed"

# Workload (v1.35 alpha): at most this many podGroups
WORKLOAD_MAX_POD_GROUPS = 8


def _crd_info(group: str, version: str, plural: str, kind: str, namespaced: bool,
              subresources: tuple[str, ...]) -> ResourceInfo:
    return ResourceInfo(group, version, plural, kind, namespaced, subresources=subresources, builtin=False)


# Client-side descriptors (the served entries come from the CRDs themselves)
VOLCANO_PODGROUPS = _crd_info(VOLCANO_GROUP, "v1beta1", "podgroups", "PodGroup", True, ())
VOLCANO_QUEUES = _crd_info(VOLCANO_GROUP, "v1beta1", "queues", "Queue", False, ("status",))
XK8S_PODGROUPS = _crd_info(XK8S_GROUP, "v1alpha1", "podgroups", "PodGroup", True, ("status",))

_CRD_FILES = (
    "podgroups.scheduling.volcano.sh.yaml",
    "queues.scheduling.volcano.sh.yaml",
    "podgroups.scheduling.x-k8s.io.yaml",
)


@functools.cache
def _crd_texts() -> tuple[str, ...]:
    base = importlib_resources.files("minik3s.api") / "crds"
    return tuple((base / name).read_text(encoding="utf-8") for name in _CRD_FILES)


def builtin_crds() -> list[JsonDict]:
    """Fresh copies of the gang CRDs the server installs at bootstrap."""
    # libyaml's loader where PyYAML has it (the same documents, ~10x less CPU at each start)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [yaml.load(t, Loader=loader) for t in _crd_texts()]  # noqa: S506 - a safe loader


def default_volcano_queue() -> JsonDict:
    """The `default` Queue Volcano's installation creates (PodGroups without `queue` use it)."""
    return {"apiVersion": f"{VOLCANO_GROUP}/v1beta1", "kind": "Queue", "metadata": {"name": "default"},
            "spec": {"weight": 1, "reclaimable": True}}


GangApi = Literal["volcano", "x-k8s", "workload"]
