"""DefaultEvictor (filter + preEvictionFilter), after sigs descheduler's
pkg/framework/plugins/defaultevictor. Decides *whether* a pod chosen by a strategy may go.

Filter, in order (the first failing rule names the reason, logged at DEBUG):
- the annotation `descheduler.alpha.kubernetes.io/evict` skips the rules below (PDBs still apply);
- a pod being deleted is never evicted again; nor a mirror or static pod;
- a pod without ownerReferences ("bare") only when failed and `evictFailedBarePods`;
- system-critical priority (>= 2000000000) unless `evictSystemCriticalPods` (which also turns
  off `priorityThreshold`); a pod at or above `priorityThreshold` (a value, or a
  PriorityClass name; default system-cluster-critical's value) stays;
- DaemonSet pods unless `evictDaemonSetPods`; emptyDir/hostPath pods unless
  `evictLocalStoragePods`; PVC pods when `ignorePvcPods`;
- `labelSelector` must match; `minPodAge` must have passed since the pod's status.startTime (a
  pod without one is too young); with `ignorePodsWithoutPDB` a PodDisruptionBudget must select
  the pod; `minReplicas`: a pod with exactly one owner reference needs at least that many pods
  referencing the same owner uid (pods with several owners are not checked, as upstream).
PreEvictionFilter: `namespaceLabelSelector` must match the pod's namespace; with `nodeFit` the
pod must fit on another ready node (node selector and affinity, taints, unschedulable, requests,
its own required pod anti-affinity),
among the nodes matching the evictor's `nodeSelector` when given.
`podProtections.defaultDisabled` / `extraEnabled` (newer upstream) map onto the booleans.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from descheduler import podutil
from descheduler.framework.interface import EvictorPlugin, Handle, PluginArgs
from descheduler.plugins.common import compile_selector
from minik3s.api.selectors import parse_label_selector
from minik3s.api.types import JsonDict
from minik3s.utils.clock import parse_time
from minik3s.utils.duration import parse_duration

logger = logging.getLogger(__name__)

class PriorityThreshold(PluginArgs):
    name: str | None = None
    value: int | None = None

    @model_validator(mode="after")
    def _one(self) -> PriorityThreshold:
        if self.name and self.value is not None:
            raise ValueError("only one of priorityThreshold fields can be set")
        return self


class PodProtections(PluginArgs):
    default_disabled: list[Literal["PodsWithLocalStorage", "DaemonSetPods", "SystemCriticalPods",
                                   "FailedBarePods"]] = Field(default_factory=list, alias="defaultDisabled")
    extra_enabled: list[Literal["PodsWithPVC", "PodsWithoutPDB", "PodsWithResourceClaims"]] = Field(
        default_factory=list, alias="extraEnabled")


class DefaultEvictorArgs(PluginArgs):
    node_selector: str | None = Field(None, alias="nodeSelector")
    evict_local_storage_pods: bool = Field(False, alias="evictLocalStoragePods")
    evict_daemon_set_pods: bool = Field(False, alias="evictDaemonSetPods")
    evict_system_critical_pods: bool = Field(False, alias="evictSystemCriticalPods")
    ignore_pvc_pods: bool = Field(False, alias="ignorePvcPods")
    evict_failed_bare_pods: bool = Field(False, alias="evictFailedBarePods")
    label_selector: dict[str, Any] | None = Field(None, alias="labelSelector")
    namespace_label_selector: dict[str, Any] | None = Field(None, alias="namespaceLabelSelector")
    priority_threshold: PriorityThreshold | None = Field(None, alias="priorityThreshold")
    node_fit: bool = Field(False, alias="nodeFit")
    min_replicas: int = Field(0, ge=0, alias="minReplicas")
    min_pod_age: str | None = Field(None, alias="minPodAge")
    ignore_pods_without_pdb: bool = Field(False, alias="ignorePodsWithoutPDB")
    pod_protections: PodProtections | None = Field(None, alias="podProtections")

    @field_validator("label_selector", "namespace_label_selector")
    @classmethod
    def _sel(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        compile_selector(v)
        return v

    @field_validator("node_selector")
    @classmethod
    def _nodes(cls, v: str | None) -> str | None:
        if v:
            parse_label_selector(v)
        return v

    @field_validator("min_pod_age")
    @classmethod
    def _age(cls, v: str | None) -> str | None:
        if v is not None:
            parse_duration(v)
        return v

    @model_validator(mode="after")
    def _protections(self) -> DefaultEvictorArgs:
        pp = self.pod_protections
        if pp is not None:
            dd = set(pp.default_disabled)
            self.evict_local_storage_pods |= "PodsWithLocalStorage" in dd
            self.evict_daemon_set_pods |= "DaemonSetPods" in dd
            self.evict_system_critical_pods |= "SystemCriticalPods" in dd
            self.evict_failed_bare_pods |= "FailedBarePods" in dd
            self.ignore_pvc_pods |= "PodsWithPVC" in pp.extra_enabled
            self.ignore_pods_without_pdb |= "PodsWithoutPDB" in pp.extra_enabled
        return self


class DefaultEvictor(EvictorPlugin):
    NAME: ClassVar[str] = "DefaultEvictor"
    Args = DefaultEvictorArgs

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        super().__init__(args or DefaultEvictorArgs(), handle)
        a = self.args
        assert isinstance(a, DefaultEvictorArgs)
        self.a = a
        self._labels = compile_selector(a.label_selector)
        self._ns_labels = compile_selector(a.namespace_label_selector)
        self._nodes = parse_label_selector(a.node_selector) if a.node_selector else None
        self._min_age = timedelta(seconds=parse_duration(a.min_pod_age)) if a.min_pod_age else None

    def _threshold(self) -> int | None:
        """The priority at or above which pods stay; None when priority filtering is off."""
        a = self.a
        if a.evict_system_critical_pods:
            return None
        pt = a.priority_threshold
        if pt is not None and pt.value is not None:
            return pt.value
        if pt is not None and pt.name:
            pc = self.handle.priority_class(pt.name)
            if pc is None:
                logger.warning("priorityThreshold class not found name=%s: no pod passes", pt.name)
                return -(2**31)
            return int(pc.get("value") or 0)
        return podutil.SYSTEM_CRITICAL_PRIORITY

    def reject_reason(self, pod: JsonDict) -> str:
        """'' when the pod may be evicted, else why not (upstream's constraint messages)."""
        m = podutil.meta(pod)
        if podutil.EVICT_ANNOTATION in (m.get("annotations") or {}):
            return ""
        a = self.a
        if podutil.is_terminating(pod):
            return "pod is terminating"
        if podutil.is_mirror_pod(pod):
            return "pod is a mirror pod"
        if podutil.is_static_pod(pod):
            return "pod is a static pod"
        if not podutil.owner_refs(pod):
            failed = (pod.get("status") or {}).get("phase") == "Failed"
            if not (a.evict_failed_bare_pods and failed):
                return "pod does not have any ownerRefs"
        if not a.evict_system_critical_pods and podutil.priority(pod) >= podutil.SYSTEM_CRITICAL_PRIORITY:
            return "pod has system critical priority"
        threshold = self._threshold()
        if threshold is not None and podutil.priority(pod) >= threshold:
            return "pod has higher priority than specified priority class threshold"
        if not a.evict_daemon_set_pods and podutil.is_daemonset_pod(pod):
            return "pod is related to daemonset and descheduler is not configured with evictDaemonSetPods"
        if not a.evict_local_storage_pods and podutil.has_local_storage(pod):
            return "pod has local storage and descheduler is not configured with evictLocalStoragePods"
        if a.ignore_pvc_pods and podutil.has_pvc(pod):
            return "pod has a PVC and descheduler is configured to ignore PVC pods"
        if self._labels is not None and not self._labels.matches(m.get("labels") or {}):
            return "pod labels do not match the labelSelector filter in the policy parameter"
        if self._min_age is not None:
            # upstream: the age since status.startTime; a pod not started yet is not old enough
            started = parse_time((pod.get("status") or {}).get("startTime"))
            if started is None or self.handle.now() - started < self._min_age:
                return f"pod age is not older than MinPodAge: {a.min_pod_age} seconds"
        if a.ignore_pods_without_pdb and not self.handle.pod_has_pdb(pod):
            return "no PodDisruptionBudget found for pod"
        owners = podutil.owner_refs(pod)
        if a.min_replicas > 1 and len(owners) == 1:
            # upstream indexes pods by each owner reference's uid; a pod with several owners is
            # not checked ("not supported for minReplicas check")
            uid = owners[0].get("uid")
            n = sum(1 for p in self.handle.all_pods() if any(o.get("uid") == uid for o in podutil.owner_refs(p)))
            if n < a.min_replicas:
                return f"owner has {n} replicas which is less than minReplicas of {a.min_replicas}"
        return ""

    def filter(self, pod: JsonDict) -> bool:
        why = self.reject_reason(pod)
        if why:
            logger.debug("pod fails the DefaultEvictor filter pod=%s reason=%s", podutil.key(pod), why)
        return not why

    def pre_eviction_filter(self, pod: JsonDict) -> bool:
        if self._ns_labels is not None:
            ns = self.handle.namespace(str(podutil.meta(pod).get("namespace") or ""))
            labels = podutil.meta(ns).get("labels") if ns is not None else {}
            if not self._ns_labels.matches(labels or {}):
                logger.debug("pod namespace does not match namespaceLabelSelector pod=%s", podutil.key(pod))
                return False
        nodes = self.handle.ready_nodes()
        if self._nodes is not None:
            nodes = [n for n in nodes if self._nodes.matches(podutil.meta(n).get("labels") or {})]
        if self.a.node_fit and not podutil.pod_fits_any_other_node(pod, nodes, pods_on=self.handle.pods_on_node):
            logger.debug("pod does not fit on any other node because of nodeSelector(s), Taint(s), or nodes "
                         "marked as unschedulable pod=%s", podutil.key(pod))
            return False
        return True
