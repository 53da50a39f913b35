"""RemovePodsViolatingTopologySpreadConstraint (balance), after sigs descheduler's
removepodsviolatingtopologyspreadconstraint (also registered as the shorter
`RemovePodsViolatingTopologySpread`).

As upstream, only the pods the evictor's filter admits, matching the plugin's `labelSelector`
and `namespaces`, on the cycle's nodes, are looked at. Per namespace, their distinct
topologySpreadConstraints (`DoNotSchedule` only, unless `constraints` lists `ScheduleAnyway`
too) are balanced one at a time. Two constraints are the same when maxSkew, topologyKey, the
selector (labelSelector merged with the pod's `matchLabelKeys` values), the inclusion policies
and, under nodeAffinityPolicy Honor (the default), the pod's nodeSelector / required affinity,
and under nodeTaintsPolicy Honor (default Ignore), its tolerations, are. Domains are the
topology values of the nodes the inclusion policies admit, plus the value of the node of any
counted pod; a domain's count is the looked-at, non-terminating pods matching the selector. An
unbalanced constraint (max - min > maxSkew) is balanced as upstream's balanceDomains does:
domains sorted by count, i from the smallest, j from the largest; j at or below the ideal
average moves down; skew(j, i) <= maxSkew moves i up; else min(ceil(j - avg), ceil(avg - i),
ceil((skew - maxSkew) / 2)) pods move from j to i. Within a domain, pods with a node selector or
node affinity and higher priorities go last (lowest priority unpinned pods move first); before
a move, the pods that fit some admitted node of a below-average domain are put last (stably),
and the last `move` pods are taken. With `topologyBalanceNodeFit` (default) a taken pod that
fits no such node still counts as moved but is not evicted. Worked example: counts [0, 0, 6]
maxSkew 1, avg 2 -> move min(4, 2, 3) = 2 to the first, then 2 to the second: [2, 2, 2].
`minDomains` is not supported (as upstream).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import Field

from descheduler import podutil
from descheduler.framework.evict_loop import each_alone, evict_until_limit
from descheduler.framework.interface import SUCCESS, BalancePlugin, EvictOptions, Status
from descheduler.plugins.common import SelectorArgs
from minik3s.api.helpers.node_affinity import pod_matches_node_selector_and_affinity
from minik3s.api.selectors import LabelSelector, label_selector_from_dict
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


@dataclass(slots=True)
class _Constraint:
    """Upstream's internal topologySpreadConstraint: the parsed selector and the pod's terms
    the inclusion policies need."""

    max_skew: int
    key: str
    selector: LabelSelector
    honor_affinity: bool
    honor_taints: bool
    owner: JsonDict  # the pod whose nodeSelector / affinity / tolerations the policies use
    ident: str

    def admits(self, node: JsonDict) -> bool:
        """Upstream matchNodeInclusionPolicies."""
        if self.honor_affinity and not pod_matches_node_selector_and_affinity(self.owner, node):
            return False
        return not (self.honor_taints and not podutil.pod_tolerates_node_taints(self.owner, node))


def _constraint(c: JsonDict, pod: JsonDict) -> _Constraint | None:
    sel = _selector_for(c, pod)
    try:
        selector = label_selector_from_dict(sel)
    except ValueError:
        return None
    honor_affinity = (c.get("nodeAffinityPolicy") or "Honor") == "Honor"
    honor_taints = (c.get("nodeTaintsPolicy") or "Ignore") == "Honor"
    spec = pod.get("spec") or {}
    affinity = None
    if honor_affinity:
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution")
        affinity = [spec.get("nodeSelector") or {}, required]
    tolerations = spec.get("tolerations") or [] if honor_taints else None
    ident = json.dumps([c.get("maxSkew"), c.get("topologyKey"), sel, honor_affinity, honor_taints, affinity,
                        tolerations], sort_keys=True)
    return _Constraint(int(c.get("maxSkew") or 1), str(c.get("topologyKey") or ""), selector, honor_affinity,
                       honor_taints, pod, ident)


class RemovePodsViolatingTopologySpreadConstraint(BalancePlugin):
    NAME: ClassVar[str] = "RemovePodsViolatingTopologySpreadConstraint"
    Args = RemovePodsViolatingTopologySpreadConstraintArgs

    async def balance(self, nodes: list[JsonDict], *, profile: str) -> Status:
        a = self.args
        assert isinstance(a, RemovePodsViolatingTopologySpreadConstraintArgs)
        selector = a.selector()
        pods_by_node = {str(podutil.meta(n).get("name")): self.handle.pods_on_node(str(podutil.meta(n).get("name")))
                        for n in nodes}
        by_ns: dict[str, list[JsonDict]] = {}
        for ps in pods_by_node.values():
            for p in ps:
                if (podutil.namespace_allowed(p, a.namespaces)
                        and podutil.labels_match(selector, podutil.meta(p).get("labels"))
                        and self.handle.filter(p)):
                    by_ns.setdefault(str(podutil.meta(p).get("namespace")), []).append(p)
        to_evict: dict[str, JsonDict] = {}
        for _ns, ns_pods in sorted(by_ns.items()):
            constraints: dict[str, _Constraint] = {}
            for pod in ns_pods:
                for c in (pod.get("spec") or {}).get("topologySpreadConstraints") or []:
                    if c.get("whenUnsatisfiable", "DoNotSchedule") not in a.constraints:
                        continue
                    tsc = _constraint(c, pod)
                    if tsc is not None:
                        constraints.setdefault(tsc.ident, tsc)
            for tsc in constraints.values():
                self._balance_constraint(tsc, ns_pods=ns_pods, nodes=nodes, pods_by_node=pods_by_node,
                                         to_evict=to_evict)
        chosen = (pod for pod in to_evict.values() if not self.handle.node_limit_reached(podutil.node_name(pod)))
        await evict_until_limit(self.handle, each_alone(chosen), EvictOptions(profile, self.NAME))
        return SUCCESS

    def _balance_constraint(self, tsc: _Constraint, *, ns_pods: list[JsonDict], nodes: list[JsonDict],
                            pods_by_node: dict[str, list[JsonDict]], to_evict: dict[str, JsonDict]) -> None:
        a = self.args
        assert isinstance(a, RemovePodsViolatingTopologySpreadConstraintArgs)
        node_value: dict[str, str] = {}
        eligible: dict[str, list[JsonDict]] = {}
        domains: dict[str, list[JsonDict]] = {}
        for n in nodes:
            value = (podutil.meta(n).get("labels") or {}).get(tsc.key)
            if value is None:
                continue
            node_value[str(podutil.meta(n).get("name"))] = value
            if tsc.admits(n):
                eligible.setdefault(value, []).append(n)
                domains.setdefault(value, [])
        for p in ns_pods:
            if podutil.is_terminating(p) or not tsc.selector.matches(podutil.meta(p).get("labels") or {}):
                continue
            d = node_value.get(podutil.node_name(p))
            if d is not None:
                domains.setdefault(d, []).append(p)
        counts = [len(v) for v in domains.values()]
        if not counts or max(counts) - min(counts) <= tsc.max_skew:
            return

        # upstream sortDomains: the pods to move come last — not evictable first, then pods with a
        # node selector or node affinity, then the rest; higher priority before lower in each group
        def order(p: JsonDict) -> tuple[int, int, int]:
            spec = p.get("spec") or {}
            pinned = spec.get("nodeSelector") is not None or bool((spec.get("affinity") or {}).get("nodeAffinity"))
            return (1 if self.handle.filter(p) else 0, 0 if pinned else 1, -podutil.priority(p))

        sorted_domains: list[list[JsonDict]] = sorted((sorted(ps, key=order) for ps in domains.values()), key=len)
        avg = sum(counts) / len(sorted_domains)
        below_nodes = [n for d, ps in domains.items() if len(ps) < avg for n in eligible.get(d, [])]

        def fits(pod: JsonDict) -> bool:
            return podutil.pod_fits_any_other_node(pod, below_nodes, pods_on=lambda n: pods_by_node.get(n, []))

        i, j = 0, len(sorted_domains) - 1
        while i < j:
            if len(sorted_domains[j]) <= avg:
                j -= 1  # upstream goes on with the next domain in the same round
            dj, di = sorted_domains[j], sorted_domains[i]
            skew = len(dj) - len(di)
            if skew <= tsc.max_skew:
                i += 1
                continue
            move = min(math.ceil(len(dj) - avg), math.ceil(avg - len(di)), math.ceil((skew - tsc.max_skew) / 2))
            if move <= 0:
                i += 1
                continue
            dj.sort(key=fits)  # stable: the pods that fit a below-average domain are taken first
            taken = dj[len(dj) - move:]
            for pod in taken:
                if a.topology_balance_node_fit and not fits(pod):
                    continue
                to_evict[str(podutil.meta(pod).get("uid") or podutil.key(pod))] = pod
            del dj[len(dj) - move:]
            di.extend(taken)


class RemovePodsViolatingTopologySpread(RemovePodsViolatingTopologySpreadConstraint):
    """The seed's shorter name for the same plugin (its events and metrics say this name)."""

    NAME: ClassVar[str] = "RemovePodsViolatingTopologySpread"
