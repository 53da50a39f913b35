"""RemovePodsViolatingTopologySpreadConstraint (balance), after sigs descheduler's
removepodsviolatingtopologyspreadconstraint (also registered as the shorter
`RemovePodsViolatingTopologySpread`).

Per namespace, the pods' distinct topologySpreadConstraints (`DoNotSchedule` only, unless
`constraints` lists `ScheduleAnyway` too) are checked one at a time. Domains are the values of
the topology key on the ready nodes the constraint's pods may use (nodeAffinityPolicy Honor:
their node selector / required affinity must match; nodeTaintsPolicy Honor: taints tolerated);
a domain's count is the matching pods (labelSelector + matchLabelKeys) on its nodes. An
unbalanced constraint (max - min > maxSkew) is balanced as upstream's balanceDomains does:
domains sorted by count, i from the smallest, j from the largest; j at or below the ideal
average moves down; skew(j, i) <= maxSkew moves i up; else min(ceil(j - avg), ceil(avg - i),
ceil((skew - maxSkew) / 2)) pods move from j to i, taken from j's most evictable, lowest
priority end. Worked example: counts [0, 0, 6] maxSkew 1, avg 2 -> move min(4, 2, 3) = 2 to the
first, then 2 to the second: [2, 2, 2]. With `topologyBalanceNodeFit` (default) a pod is only
moved if it fits some node of a below-average domain. `minDomains` is not supported (as upstream).
"""

from __future__ import annotations

import math
from typing import ClassVar, Literal

from pydantic import Field

from descheduler import podutil
from descheduler.framework.evict_loop import each_alone, evict_until_limit
from descheduler.framework.interface import SUCCESS, BalancePlugin, EvictOptions, Status
from descheduler.plugins.common import SelectorArgs
from minik3s.api.helpers.node_affinity import pod_matches_node_selector_and_affinity
from minik3s.api.selectors import label_selector_from_dict
from minik3s.api.types import JsonDict


class RemovePodsViolatingTopologySpreadConstraintArgs(SelectorArgs):
    constraints: list[Literal["DoNotSchedule", "ScheduleAnyway"]] = Field(default=["DoNotSchedule"])
    topology_balance_node_fit: bool = Field(True, alias="topologyBalanceNodeFit")


def _selector_for(constraint: JsonDict, pod: JsonDict) -> JsonDict:
    sel = dict(constraint.get("labelSelector") or {})
    keys = constraint.get("matchLabelKeys") or []
    if keys:
        labels = podutil.meta(pod).get("labels") or {}
        exprs = list(sel.get("matchExpressions") or [])
        for k in keys:
            if k in labels:
                exprs.append({"key": k, "operator": "In", "values": [labels[k]]})
        sel["matchExpressions"] = exprs
    return sel


class RemovePodsViolatingTopologySpreadConstraint(BalancePlugin):
    NAME: ClassVar[str] = "RemovePodsViolatingTopologySpreadConstraint"
    Args = RemovePodsViolatingTopologySpreadConstraintArgs

    async def balance(self, nodes: list[JsonDict], *, profile: str) -> Status:
        a = self.args
        assert isinstance(a, RemovePodsViolatingTopologySpreadConstraintArgs)
        pods_by_node = {str(podutil.meta(n).get("name")): self.handle.pods_on_node(str(podutil.meta(n).get("name")))
                        for n in nodes}
        all_pods = [p for ps in pods_by_node.values() for p in ps]
        by_ns: dict[str, list[JsonDict]] = {}
        for p in all_pods:
            by_ns.setdefault(str(podutil.meta(p).get("namespace")), []).append(p)
        to_evict: dict[str, JsonDict] = {}
        for _ns, ns_pods in sorted(by_ns.items()):
            if not podutil.namespace_allowed(ns_pods[0], a.namespaces):
                continue
            seen: set[str] = set()
            for pod in ns_pods:
                for c in (pod.get("spec") or {}).get("topologySpreadConstraints") or []:
                    if c.get("whenUnsatisfiable", "DoNotSchedule") not in a.constraints:
                        continue
                    sel = _selector_for(c, pod)
                    ident = repr((c.get("topologyKey"), c.get("maxSkew"), sorted(sel.items(), key=str),
                                  c.get("nodeAffinityPolicy"), c.get("nodeTaintsPolicy")))
                    if ident in seen:
                        continue
                    seen.add(ident)
                    self._balance_constraint(c, sel, owner=pod, ns_pods=ns_pods, nodes=nodes,
                                             pods_by_node=pods_by_node, to_evict=to_evict)
        selector = a.selector()
        chosen = (pod for pod in to_evict.values()
                  if podutil.labels_match(selector, podutil.meta(pod).get("labels"))
                  and not self.handle.node_limit_reached(podutil.node_name(pod)))
        await evict_until_limit(self.handle, each_alone(chosen), EvictOptions(profile, self.NAME))
        return SUCCESS

    def _balance_constraint(self, c: JsonDict, sel: JsonDict, *, owner: JsonDict, ns_pods: list[JsonDict],
                            nodes: list[JsonDict], pods_by_node: dict[str, list[JsonDict]],
                            to_evict: dict[str, JsonDict]) -> None:
        a = self.args
        assert isinstance(a, RemovePodsViolatingTopologySpreadConstraintArgs)
        tkey = str(c.get("topologyKey") or "")
        max_skew = int(c.get("maxSkew") or 1)
        try:
            selector = label_selector_from_dict(sel)
        except ValueError:
            return
        honor_affinity = c.get("nodeAffinityPolicy", "Honor") == "Honor"
        honor_taints = c.get("nodeTaintsPolicy", "Ignore") == "Honor"
        domain_nodes: dict[str, list[JsonDict]] = {}
        node_domain: dict[str, str] = {}
        for n in nodes:
            value = (podutil.meta(n).get("labels") or {}).get(tkey)
            if value is None:
                continue
            if honor_affinity and not pod_matches_node_selector_and_affinity(owner, n):
                continue
            if honor_taints and not podutil.pod_tolerates_node_taints(owner, n):
                continue
            domain_nodes.setdefault(value, []).append(n)
            node_domain[str(podutil.meta(n).get("name"))] = value
        if len(domain_nodes) < 2:
            return
        domains: dict[str, list[JsonDict]] = {d: [] for d in domain_nodes}
        for p in ns_pods:
            d = node_domain.get(podutil.node_name(p))
            if d is None or podutil.is_terminating(p):
                continue
            if selector.matches(podutil.meta(p).get("labels") or {}):
                domains[d].append(p)
        counts = [len(v) for v in domains.values()]
        if max(counts) - min(counts) <= max_skew:
            return
        # upstream sortDomains: the pods to move come last — not evictable first, then pods with a
        # node selector or node affinity, then the rest; higher priority before lower in each group
        def order(p: JsonDict) -> tuple[int, int, int]:
            spec = p.get("spec") or {}
            pinned = bool(spec.get("nodeSelector")) or bool((spec.get("affinity") or {}).get("nodeAffinity"))
            return (1 if self.handle.filter(p) else 0, 0 if pinned else 1, -podutil.priority(p))

        sorted_domains: list[tuple[str, list[JsonDict]]] = sorted(
            ((d, sorted(ps, key=order)) for d, ps in domains.items()), key=lambda x: len(x[1]))
        total = sum(counts)
        avg = total / len(sorted_domains)
        below = [d for d, ps in sorted_domains if len(ps) < avg]
        i, j = 0, len(sorted_domains) - 1
        while i < j:
            dj = sorted_domains[j][1]
            di = sorted_domains[i][1]
            if len(dj) <= avg:
                j -= 1
                continue
            skew = len(dj) - len(di)
            if skew <= max_skew:
                i += 1
                continue
            move = min(math.ceil(len(dj) - avg), math.ceil(avg - len(di)), math.ceil((skew - max_skew) / 2))
            if move <= 0:
                i += 1
                continue
            for _ in range(move):
                pod = dj.pop()
                di.append(pod)
                if not self.handle.filter(pod):
                    continue
                if a.topology_balance_node_fit and not any(
                        not podutil.pod_fits_node(
                            pod, n, pods_on_node=pods_by_node.get(str(podutil.meta(n).get("name")), []))
                        for d in below for n in domain_nodes[d]):
                    continue
                to_evict[str(podutil.meta(pod).get("uid") or podutil.key(pod))] = pod


class RemovePodsViolatingTopologySpread(RemovePodsViolatingTopologySpreadConstraint):
    """The seed's shorter name for the same plugin (its events and metrics say this name)."""

    NAME: ClassVar[str] = "RemovePodsViolatingTopologySpread"
