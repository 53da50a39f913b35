"""Small fluent builders for API objects in tests (upstream pkg/scheduler/testing wrappers.go).

`make_pod("p").req(cpu="100m").node("n1").labels(app="web").obj()` and
`make_node("n1").capacity(cpu="4", memory="16Gi", pods=110).labels(zone="a").taints(("k", "v", "NoSchedule")).obj()`
return plain JSON dicts (fresh deep copies), as the API would serve them. Defaults: namespace
"default", uid derived from namespace/name, phase Pending for pods, Ready condition for nodes.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, cast

from minik3s.api.types import JsonDict

Taint = JsonDict | tuple[str, str, str]


def _rl(extra: Mapping[str, Any] | None, kw: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in {**(extra or {}), **kw}.items():
        out[k.replace("_", "-") if k == "ephemeral_storage" else k] = str(v)
    return out


def _selector(sel: Mapping[str, Any] | None) -> JsonDict | None:
    """Accept either a metav1.LabelSelector dict or a plain {label: value} map."""
    if sel is None:
        return None
    if "matchLabels" in sel or "matchExpressions" in sel or not sel:
        return dict(sel)
    return {"matchLabels": dict(sel)}


class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self._pod: JsonDict = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"uid-{namespace}-{name}",
                "creationTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": {"containers": [], "schedulerName": "default-scheduler"},
            "status": {"phase": "Pending"},
        }

    @property
    def _meta(self) -> JsonDict:
        return cast(JsonDict, self._pod["metadata"])

    @property
    def _spec(self) -> JsonDict:
        return cast(JsonDict, self._pod["spec"])

    def namespace(self, ns: str) -> PodBuilder:
        self._meta["namespace"] = ns
        self._meta["uid"] = f"uid-{ns}-{self._meta['name']}"
        return self

    def uid(self, uid: str) -> PodBuilder:
        self._meta["uid"] = uid
        return self

    def labels(self, labels: Mapping[str, str] | None = None, /, **kw: str) -> PodBuilder:
        self._meta.setdefault("labels", {}).update({**(labels or {}), **kw})
        return self

    def annotations(self, ann: Mapping[str, str]) -> PodBuilder:
        self._meta.setdefault("annotations", {}).update(ann)
        return self

    def created(self, ts: str) -> PodBuilder:
        self._meta["creationTimestamp"] = ts
        return self

    def start_time(self, ts: str) -> PodBuilder:
        self._pod["status"]["startTime"] = ts
        return self

    def terminating(self, ts: str = "2026-01-01T00:00:10Z") -> PodBuilder:
        self._meta["deletionTimestamp"] = ts
        return self

    def owner(
        self,
        kind: str,
        name: str,
        *,
        uid: str | None = None,
        api_version: str = "apps/v1",
        controller: bool = True,
    ) -> PodBuilder:
        self._meta.setdefault("ownerReferences", []).append(
            {
                "apiVersion": api_version,
                "kind": kind,
                "name": name,
                "uid": uid or f"uid-{kind}-{name}",
                "controller": controller,
            }
        )
        return self

    def container(
        self,
        image: str = "registry.k8s.io/pause:3.10",
        *,
        name: str | None = None,
        requests: Mapping[str, Any] | None = None,
        limits: Mapping[str, Any] | None = None,
        ports: list[JsonDict] | None = None,
    ) -> PodBuilder:
        c: JsonDict = {"name": name or f"c{len(self._spec['containers'])}", "image": image}
        res: JsonDict = {}
        if requests:
            res["requests"] = _rl(requests, {})
        if limits:
            res["limits"] = _rl(limits, {})
        if res:
            c["resources"] = res
        if ports:
            c["ports"] = ports
        self._spec["containers"].append(c)
        return self

    def req(self, resources: Mapping[str, Any] | None = None, /, **kw: Any) -> PodBuilder:
        """Add one container requesting `resources` (cpu="100m", memory="1Gi", {"nvidia.com/gpu": 1})."""
        return self.container(requests=_rl(resources, kw))

    def init_req(
        self, resources: Mapping[str, Any] | None = None, /, *, sidecar: bool = False, **kw: Any
    ) -> PodBuilder:
        inits = self._spec.setdefault("initContainers", [])
        c: JsonDict = {
            "name": f"init{len(inits)}",
            "image": "busybox",
            "resources": {"requests": _rl(resources, kw)},
        }
        if sidecar:
            c["restartPolicy"] = "Always"
        inits.append(c)
        return self

    def images(self, *images: str) -> PodBuilder:
        for img in images:
            self.container(img)
        return self

    def init_image(self, image: str) -> PodBuilder:
        inits = self._spec.setdefault("initContainers", [])
        inits.append({"name": f"init{len(inits)}", "image": image})
        return self

    def overhead(self, **kw: Any) -> PodBuilder:
        self._spec["overhead"] = _rl(None, kw)
        return self

    def node(self, name: str) -> PodBuilder:
        self._spec["nodeName"] = name
        return self

    def nominated(self, node: str) -> PodBuilder:
        self._pod["status"]["nominatedNodeName"] = node
        return self

    def phase(self, phase: str) -> PodBuilder:
        self._pod["status"]["phase"] = phase
        return self

    def condition(
        self, ctype: str, status: str = "True", *, reason: str = "", message: str = ""
    ) -> PodBuilder:
        c = {"type": ctype, "status": status}
        if reason:
            c["reason"] = reason
        if message:
            c["message"] = message
        self._pod["status"].setdefault("conditions", []).append(c)
        return self

    def priority(self, p: int) -> PodBuilder:
        self._spec["priority"] = p
        return self

    def preemption_policy(self, policy: str) -> PodBuilder:
        self._spec["preemptionPolicy"] = policy
        return self

    def scheduler_name(self, name: str) -> PodBuilder:
        self._spec["schedulerName"] = name
        return self

    def scheduling_gates(self, *gates: str) -> PodBuilder:
        self._spec["schedulingGates"] = [{"name": g} for g in gates]
        return self

    def toleration(
        self,
        key: str = "",
        value: str = "",
        effect: str = "",
        *,
        operator: str | None = None,
        seconds: int | None = None,
    ) -> PodBuilder:
        t: JsonDict = {}
        if key:
            t["key"] = key
        t["operator"] = operator or ("Equal" if value else "Exists")
        if value:
            t["value"] = value
        if effect:
            t["effect"] = effect
        if seconds is not None:
            t["tolerationSeconds"] = seconds
        self._spec.setdefault("tolerations", []).append(t)
        return self

    def tolerations(self, tols: Iterable[JsonDict]) -> PodBuilder:
        self._spec.setdefault("tolerations", []).extend(copy.deepcopy(list(tols)))
        return self

    def node_selector(self, sel: Mapping[str, str] | None = None, /, **kw: str) -> PodBuilder:
        self._spec["nodeSelector"] = {**(sel or {}), **kw}
        return self

    def _node_affinity(self) -> JsonDict:
        return cast(JsonDict, self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {}))

    def node_affinity_terms(self, *terms: JsonDict) -> PodBuilder:
        """Required node affinity with the given raw NodeSelectorTerms (ORed)."""
        req = self._node_affinity().setdefault(
            "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []}
        )
        req["nodeSelectorTerms"].extend(copy.deepcopy(list(terms)))
        return self

    def node_affinity_in(self, key: str, values: list[str], *, op: str = "In") -> PodBuilder:
        return self.node_affinity_terms(
            {"matchExpressions": [{"key": key, "operator": op, "values": values}]}
        )

    def node_affinity_not_in(self, key: str, values: list[str]) -> PodBuilder:
        return self.node_affinity_in(key, values, op="NotIn")

    def preferred_node_affinity(
        self, weight: int, expressions: list[JsonDict] | None = None, *, fields: list[JsonDict] | None = None
    ) -> PodBuilder:
        pref: JsonDict = {}
        if expressions:
            pref["matchExpressions"] = copy.deepcopy(expressions)
        if fields:
            pref["matchFields"] = copy.deepcopy(fields)
        self._node_affinity().setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
            {"weight": weight, "preference": pref}
        )
        return self

    def _pod_aff(
        self,
        kind: str,
        topology_key: str,
        selector: Mapping[str, Any] | None,
        *,
        weight: int | None,
        namespaces: list[str] | None,
        namespace_selector: Mapping[str, Any] | None,
        match_label_keys: list[str] | None = None,
    ) -> PodBuilder:
        term: JsonDict = {"topologyKey": topology_key}
        if selector is not None:
            term["labelSelector"] = _selector(selector)
        if namespaces:
            term["namespaces"] = list(namespaces)
        if namespace_selector is not None:
            term["namespaceSelector"] = _selector(namespace_selector)
        if match_label_keys:
            term["matchLabelKeys"] = list(match_label_keys)
        aff = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        if weight is None:
            aff.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            aff.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term}
            )
        return self

    def pod_affinity(
        self,
        topology_key: str,
        selector: Mapping[str, Any] | None,
        *,
        weight: int | None = None,
        namespaces: list[str] | None = None,
        namespace_selector: Mapping[str, Any] | None = None,
        match_label_keys: list[str] | None = None,
    ) -> PodBuilder:
        """Required (weight None) or preferred pod affinity; `selector` a plain label map or LabelSelector."""
        return self._pod_aff(
            "podAffinity",
            topology_key,
            selector,
            weight=weight,
            namespaces=namespaces,
            namespace_selector=namespace_selector,
            match_label_keys=match_label_keys,
        )

    def pod_anti_affinity(
        self,
        topology_key: str,
        selector: Mapping[str, Any] | None,
        *,
        weight: int | None = None,
        namespaces: list[str] | None = None,
        namespace_selector: Mapping[str, Any] | None = None,
    ) -> PodBuilder:
        return self._pod_aff(
            "podAntiAffinity",
            topology_key,
            selector,
            weight=weight,
            namespaces=namespaces,
            namespace_selector=namespace_selector,
        )

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        when: str = "DoNotSchedule",
        selector: Mapping[str, Any] | None = None,
        *,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: list[str] | None = None,
    ) -> PodBuilder:
        c: JsonDict = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when}
        if selector is not None:
            c["labelSelector"] = _selector(selector)
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys:
            c["matchLabelKeys"] = list(match_label_keys)
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodBuilder:
        p: JsonDict = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        return self.container(ports=[p])

    def obj(self) -> JsonDict:
        pod = copy.deepcopy(self._pod)
        if not pod["spec"]["containers"]:
            pod["spec"]["containers"] = [{"name": "c0", "image": "registry.k8s.io/pause:3.10"}]
        return pod


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._node: JsonDict = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-node-{name}", "labels": {}},
            "spec": {},
            "status": {
                "capacity": {},
                "allocatable": {},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }

    def labels(self, labels: Mapping[str, str] | None = None, /, **kw: str) -> NodeBuilder:
        self._node["metadata"]["labels"].update({**(labels or {}), **kw})
        return self

    def capacity(self, resources: Mapping[str, Any] | None = None, /, **kw: Any) -> NodeBuilder:
        """Sets capacity and allocatable (pods=110 unless given)."""
        rl = _rl(resources, kw)
        rl.setdefault("pods", "110")
        self._node["status"]["capacity"] = dict(rl)
        self._node["status"]["allocatable"] = dict(rl)
        return self

    def allocatable(self, resources: Mapping[str, Any] | None = None, /, **kw: Any) -> NodeBuilder:
        self._node["status"]["allocatable"] = _rl(resources, kw)
        return self

    def taints(self, *taints: Taint) -> NodeBuilder:
        out = self._node["spec"].setdefault("taints", [])
        for t in taints:
            if isinstance(t, tuple):
                d: JsonDict = {"key": t[0], "effect": t[2]}
                if t[1]:
                    d["value"] = t[1]
                out.append(d)
            else:
                out.append(dict(t))
        return self

    def unschedulable(self, value: bool = True) -> NodeBuilder:
        self._node["spec"]["unschedulable"] = value
        return self

    def images(self, *images: tuple[list[str] | str, int]) -> NodeBuilder:
        """(names, sizeBytes) pairs into status.images."""
        self._node["status"]["images"] = [
            {"names": [n] if isinstance(n, str) else list(n), "sizeBytes": size} for n, size in images
        ]
        return self

    def obj(self) -> JsonDict:
        return copy.deepcopy(self._node)


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)
