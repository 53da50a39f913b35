"""Pod and node predicates the descheduler's plugins share (layer L4), after sigs descheduler's
pkg/utils and pkg/descheduler/{pod,node}. Pure functions over JSON objects; the scheduling
predicates themselves (taints, node affinity, requests) come from `minik3s.api.helpers`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from minik3s.api.helpers.node_affinity import pod_matches_node_selector_and_affinity
from minik3s.api.helpers.resources import CPU, MEMORY, PODS, node_allocatable, pod_requests
from minik3s.api.helpers.taints import find_untolerated_taint, is_no_schedule_or_no_execute, pod_tolerations
from minik3s.api.selectors import label_selector_from_dict
from minik3s.api.types import JsonDict

SYSTEM_CRITICAL_PRIORITY = 2_000_000_000  # scheduling.SystemCriticalPriority
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
CONFIG_SOURCE_ANNOTATION = "kubernetes.io/config.source"
EVICT_ANNOTATION = "descheduler.alpha.kubernetes.io/evict"

BEST_EFFORT, BURSTABLE, GUARANTEED = "BestEffort", "Burstable", "Guaranteed"
_QOS_RANK = {BEST_EFFORT: 0, BURSTABLE: 1, GUARANTEED: 2}


def meta(obj: JsonDict) -> JsonDict:
    m: JsonDict = obj.get("metadata") or {}
    return m


def key(pod: JsonDict) -> str:
    m = meta(pod)
    return f"{m.get('namespace')}/{m.get('name')}"


def node_name(pod: JsonDict) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def owner_refs(pod: JsonDict) -> list[JsonDict]:
    return list(meta(pod).get("ownerReferences") or [])


def is_daemonset_pod(pod: JsonDict) -> bool:
    return any(o.get("kind") == "DaemonSet" for o in owner_refs(pod))


def is_mirror_pod(pod: JsonDict) -> bool:
    return MIRROR_ANNOTATION in (meta(pod).get("annotations") or {})


def is_static_pod(pod: JsonDict) -> bool:
    src = (meta(pod).get("annotations") or {}).get(CONFIG_SOURCE_ANNOTATION)
    return src is not None and src != "api"


def has_local_storage(pod: JsonDict) -> bool:
    return any("emptyDir" in v or "hostPath" in v for v in (pod.get("spec") or {}).get("volumes") or [])


def has_pvc(pod: JsonDict) -> bool:
    return any("persistentVolumeClaim" in v for v in (pod.get("spec") or {}).get("volumes") or [])


def is_terminating(pod: JsonDict) -> bool:
    return bool(meta(pod).get("deletionTimestamp"))


def priority(pod: JsonDict) -> int:
    p = (pod.get("spec") or {}).get("priority")
    return int(p) if isinstance(p, int) else 0


def qos_class(pod: JsonDict) -> str:
    """core/v1 QoS: BestEffort (no requests or limits anywhere), Guaranteed (every container has
    cpu and memory limits equal to its requests), else Burstable. status.qosClass wins if set."""
    given = (pod.get("status") or {}).get("qosClass")
    if given in _QOS_RANK:
        return str(given)
    containers = list((pod.get("spec") or {}).get("containers") or []) + list(
        (pod.get("spec") or {}).get("initContainers") or [])
    any_set = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req = dict(res.get("requests") or {})
        lim = dict(res.get("limits") or {})
        if req or lim:
            any_set = True
        for r in (CPU, MEMORY):
            if r not in lim or str(req.get(r, lim[r])) != str(lim[r]):
                guaranteed = False
    if not any_set:
        return BEST_EFFORT
    return GUARANTEED if guaranteed else BURSTABLE


def sort_by_priority_low_first(pods: list[JsonDict]) -> list[JsonDict]:
    """Upstream SortPodsBasedOnPriorityLowToHigh: priority ascending, then BestEffort before
    Burstable before Guaranteed. Example: [g(p=0), be(p=10), bu(p=0)] -> [bu, g, be]."""
    return sorted(pods, key=lambda p: (priority(p), _QOS_RANK[qos_class(p)]))


def is_node_ready(node: JsonDict) -> bool:
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return bool(c.get("status") == "True")
    return False


def is_node_unschedulable(node: JsonDict) -> bool:
    return bool((node.get("spec") or {}).get("unschedulable"))


def node_usage(node: JsonDict, pods: Iterable[JsonDict], *, resources: Iterable[str]) -> dict[str, int]:
    """Sum of the pods' requests per resource (cpu in millicores), `pods` counting pods."""
    total: dict[str, int] = {r: 0 for r in resources}
    n = 0
    for p in pods:
        n += 1
        req = pod_requests(p)
        for r in total:
            if r != PODS:
                total[r] += req.get(r, 0)
    if PODS in total:
        total[PODS] = n
    return total


def fits_requests(pod: JsonDict, node: JsonDict, *, pods_on_node: Iterable[JsonDict]) -> str:
    """'' when the node's allocatable minus its pods' requests covers the pod's requests, else
    why not ("insufficient cpu"). Counts pods as a resource as well."""
    alloc = node_allocatable(node)
    req = pod_requests(pod)
    on = list(pods_on_node)
    used = node_usage(node, on, resources=set(req) | {PODS})
    if alloc.get(PODS, 0) and used.get(PODS, 0) + 1 > alloc[PODS]:
        return "insufficient pods"
    for r, v in req.items():
        if v and used.get(r, 0) + v > alloc.get(r, 0):
            return f"insufficient {r}"
    return ""


def pod_fits_node(pod: JsonDict, node: JsonDict, *, pods_on_node: Iterable[JsonDict]) -> str:
    """Upstream NodeFit: '' when the pod could be scheduled on `node` (node selector and required
    affinity, NoSchedule/NoExecute taints tolerated, not unschedulable, requests fit), else the
    first reason it could not."""
    if not pod_matches_node_selector_and_affinity(pod, node):
        return "pod node selector does not match the node label"
    taint = find_untolerated_taint((node.get("spec") or {}).get("taints"), pod_tolerations(pod),
                                   is_no_schedule_or_no_execute)
    if taint is not None:
        return f"pod does not tolerate taints on the node ({taint.get('key')})"
    if is_node_unschedulable(node):
        return "node is not schedulable"
    return fits_requests(pod, node, pods_on_node=pods_on_node)


def anti_affinity_violated_on(pod: JsonDict, node: JsonDict, nodes: Iterable[JsonDict], *,
                              pods_on: Callable[[str], list[JsonDict]]) -> bool:
    """Would `pod`'s required pod anti-affinity be broken on `node`? A term is broken when a pod
    (other than `pod`) in the term's namespaces matching its selector runs on a node with the
    same `topologyKey` value as `node`. Example: term hostname/app=db, `node` runs an app=db pod
    -> True. A term whose selector does not parse is treated as not matching."""
    aff = ((pod.get("spec") or {}).get("affinity") or {}).get("podAntiAffinity") or {}
    terms = aff.get("requiredDuringSchedulingIgnoredDuringExecution") or []
    if not terms:
        return False
    node_list = list(nodes)
    uid = meta(pod).get("uid")
    for term in terms:
        tkey = term.get("topologyKey") or ""
        value = (meta(node).get("labels") or {}).get(tkey)
        if value is None:
            continue
        try:
            sel = label_selector_from_dict(term.get("labelSelector"))
        except ValueError:
            continue
        namespaces = set(term.get("namespaces") or []) or {meta(pod).get("namespace")}
        for n in node_list:
            if (meta(n).get("labels") or {}).get(tkey) != value:
                continue
            for other in pods_on(str(meta(n).get("name"))):
                om = meta(other)
                if om.get("uid") != uid and om.get("namespace") in namespaces and sel.matches(om.get("labels") or {}):
                    return True
    return False


def pod_fits_any_other_node(pod: JsonDict, nodes: Iterable[JsonDict], *,
                            pods_on: Callable[[str], list[JsonDict]]) -> bool:
    """Upstream PodFitsAnyOtherNode: some node but the pod's own passes `pod_fits_node` and does
    not break the pod's required anti-affinity."""
    own = node_name(pod)
    node_list = list(nodes)
    for n in node_list:
        name = meta(n).get("name")
        if name == own:
            continue
        if pod_fits_node(pod, n, pods_on_node=pods_on(str(name))):
            continue
        if not anti_affinity_violated_on(pod, n, node_list, pods_on=pods_on):
            return True
    return False


def pod_tolerates_node_taints(pod: JsonDict, node: JsonDict) -> bool:
    return find_untolerated_taint((node.get("spec") or {}).get("taints"), pod_tolerations(pod),
                                  is_no_schedule_or_no_execute) is None


def pod_tolerates_all_taints(pod: JsonDict, node: JsonDict) -> bool:
    """Upstream utils.PodToleratesTaints: every taint of the node, whatever its effect."""
    return find_untolerated_taint((node.get("spec") or {}).get("taints"), pod_tolerations(pod)) is None


def namespace_allowed(pod: JsonDict, namespaces: Any) -> bool:
    """Plugin `namespaces: {include, exclude}` (at most one of them set)."""
    if namespaces is None:
        return True
    ns = meta(pod).get("namespace")
    include = getattr(namespaces, "include", None) or []
    exclude = getattr(namespaces, "exclude", None) or []
    if include:
        return ns in include
    return ns not in exclude


def labels_match(selector: Any, labels: Mapping[str, str] | None) -> bool:
    """`selector` a compiled minik3s.api.selectors.LabelSelector or None (matches all)."""
    if selector is None:
        return True
    return bool(selector.matches(labels or {}))
