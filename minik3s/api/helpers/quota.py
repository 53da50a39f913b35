"""ResourceQuota accounting (layer L2), shared by the apiserver's ResourceQuota admission plugin
and the resourcequota controller, after upstream's pkg/quota/v1 (the generic helpers and the
core evaluators for pods, services and persistentvolumeclaims, plus the object-count evaluator
every other namespaced resource gets).

A usage is `{resource name: Amount}`; an `Amount` is `(value, format)` with the exact value as
a Fraction and the Quantity format its first non-zero operand had, so sums print as upstream's
do ("500Mi" + "500Mi" -> "1000Mi", "100m" x 3 -> "300m").

| I want to... | Touch |
|---|---|
| change what an object of some resource is charged | `usage_of` (and `tracked_by`) |
| change which pods a scope selects | `_pod_matches_scope` |
| change the "must specify" rule | `pod_constraint_error` |

Example: a pod requesting cpu 100m, memory 500Mi with a cpu limit of 200m is charged
`pods=1, count/pods=1, cpu=100m, requests.cpu=100m, limits.cpu=200m, memory=500Mi,
requests.memory=500Mi`; a quota with hard `{pods: 2, requests.cpu: 1}` counts only those two.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any

from minik3s.api.helpers.persistent_volumes import claim_class
from minik3s.api.helpers.pods import is_sidecar
from minik3s.api.helpers.resources import effective_containers
from minik3s.api.quantity import QuantityError, format_canonical, parse_quantity, quantity_format
from minik3s.api.types import JsonDict

Amount = tuple[Fraction, str]
Usage = dict[str, Amount]

ONE: Amount = (Fraction(1), "DecimalSI")
ZERO: Amount = (Fraction(0), "DecimalSI")

REQUESTS = "requests."
LIMITS = "limits."
COUNT = "count/"
HUGEPAGES = "hugepages-"
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"

# pkg/apis/core/helper: the quota resource names that need no domain
STANDARD_QUOTA_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "services",
    "replicationcontrollers", "resourcequotas", "secrets", "persistentvolumeclaims", "configmaps",
    "services.nodeports", "services.loadbalancers",
})
# resources whose quantities must be whole numbers (IsIntegerResourceName's standard part)
INTEGER_RESOURCES = frozenset({
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})
# the names a ResourceQuota scope may restrict (IsResourceQuotaScopeValidForResource)
POD_SCOPE_RESOURCES = frozenset({
    "pods", "cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory",
})
POD_SCOPES = frozenset({"Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
                        "CrossNamespacePodAffinity"})
# IsStandardResourceQuotaScope (VolumeAttributesClass needs a feature gate that is off in v1.33)
STANDARD_SCOPES = POD_SCOPES
# scopes a scopeSelector may use only with the Exists operator
EXISTS_ONLY_SCOPES = frozenset({"Terminating", "NotTerminating", "BestEffort", "NotBestEffort",
                                "CrossNamespacePodAffinity"})
CONFLICTING_SCOPES = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))
# the quota's legacy names, charged with the object-count name (configmaps == count/configmaps)
LEGACY_COUNT_NAMES = {
    ("", "configmaps"): "configmaps", ("", "secrets"): "secrets",
    ("", "replicationcontrollers"): "replicationcontrollers", ("", "resourcequotas"): "resourcequotas",
    ("", "pods"): "pods", ("", "services"): "services", ("", "persistentvolumeclaims"): "persistentvolumeclaims",
}
# never charged (install.DefaultIgnoredResources)
IGNORED = frozenset({("", "events"), ("events.k8s.io", "events"), ("", "bindings"), ("", "componentstatuses"),
                     ("authentication.k8s.io", "tokenreviews"), ("authorization.k8s.io", "subjectaccessreviews"),
                     ("authorization.k8s.io", "selfsubjectaccessreviews"),
                     ("authorization.k8s.io", "localsubjectaccessreviews"),
                     ("authorization.k8s.io", "selfsubjectrulesreviews")})
_QOS_RESOURCES = ("cpu", "memory")
_POD_NAMES = frozenset({"pods", "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
                        "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage"})
# the names the pods evaluator asks every container to request or limit when a quota has them
_CONSTRAINED = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"})


def count_name(group: str, resource: str) -> str:
    """The object-count quota name of a resource: "count/pods", "count/deployments.apps"."""
    return f"{COUNT}{resource}.{group}" if group else f"{COUNT}{resource}"


def amount(q: Any) -> Amount:
    """A Quantity (string or JSON number) as an Amount; QuantityError if it does not parse."""
    return parse_quantity(q), quantity_format(q)


def add_amounts(a: Amount, b: Amount) -> Amount:
    """a + b in a's format (b's when a is zero, as Quantity.Add)."""
    return a[0] + b[0], (a[1] if a[0] != 0 else b[1])


def add(a: Usage, b: Usage) -> Usage:
    out = dict(a)
    for k, v in b.items():
        cur = out.get(k)
        out[k] = v if cur is None else add_amounts(cur, v)
    return out


def subtract(a: Usage, b: Usage) -> Usage:
    out = dict(a)
    for k, v in b.items():
        cur = out.get(k, (Fraction(0), v[1]))
        out[k] = (cur[0] - v[0], cur[1])
    return out


def text(a: Amount) -> str:
    return format_canonical(a[0], a[1])


def as_resource_list(u: Usage) -> JsonDict:
    return {k: text(v) for k, v in sorted(u.items())}


def parse_resource_list(rl: Any) -> Usage:
    """A stored ResourceList (status.hard/used); entries that do not parse are left out."""
    out: Usage = {}
    if isinstance(rl, dict):
        for k, v in rl.items():
            try:
                out[str(k)] = amount(v)
            except (QuantityError, TypeError):
                continue
    return out


def is_extended_resource(name: str) -> bool:
    """helper.IsExtendedResourceName: a domain-qualified name outside kubernetes.io, not a
    requests.* name."""
    if "/" not in name or name.startswith(REQUESTS):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def scope_valid_for(scope: str, name: str) -> bool:
    """IsResourceQuotaScopeValidForResource (asked only for standard quota names)."""
    if scope == "BestEffort":
        return name == "pods"
    if scope in POD_SCOPES:
        return name in POD_SCOPE_RESOURCES
    return True


def is_standard_quota_name(name: str) -> bool:
    return name in STANDARD_QUOTA_RESOURCES or name.startswith(HUGEPAGES) or name.startswith(REQUESTS + HUGEPAGES)


def is_integer_resource(name: str) -> bool:
    return name in INTEGER_RESOURCES or is_extended_resource(name)


# ------------------------------------------------------------------------------------------------
# what each resource's objects are charged
# ------------------------------------------------------------------------------------------------


def tracked_by(group: str, resource: str, name: str) -> bool:
    """Whether the evaluator of `group/resource` accounts the quota name `name`
    (its MatchingResources)."""
    if name == count_name(group, resource):
        return True
    if group != "":
        return False
    if resource == "pods":
        return name in _POD_NAMES or name.startswith((HUGEPAGES, REQUESTS + HUGEPAGES)) or (
            name.startswith(REQUESTS) and is_extended_resource(name[len(REQUESTS):]))
    if resource == "services":
        return name in ("services", "services.loadbalancers", "services.nodeports")
    if resource == "persistentvolumeclaims":
        return (name in ("persistentvolumeclaims", "requests.storage")
                or (STORAGE_CLASS_SUFFIX in name
                    and name.endswith((STORAGE_CLASS_SUFFIX + "requests.storage",
                                       STORAGE_CLASS_SUFFIX + "persistentvolumeclaims"))))
    return LEGACY_COUNT_NAMES.get((group, resource)) == name


def matching_names(group: str, resource: str, names: Iterable[str]) -> list[str]:
    return [n for n in names if tracked_by(group, resource, n)]


def _parse_into(out: Usage, key: str, q: Any) -> None:
    try:
        out[key] = amount(q)
    except (QuantityError, TypeError):
        pass


def _sum_lists(lists: Iterable[Any]) -> Usage:
    out: Usage = {}
    for rl in lists:
        out = add(out, parse_resource_list(rl))
    return out


def _max_lists(a: Usage, b: Usage) -> Usage:
    out = dict(a)
    for k, v in b.items():
        cur = out.get(k)
        if cur is None or v[0] > cur[0]:
            out[k] = v
    return out


def _container_requests(c: JsonDict) -> Any:
    res = c.get("resources") or {}
    req = res.get("requests")
    if req is None:
        return res.get("limits")
    if res.get("limits"):
        return {**res["limits"], **req}
    return req


def _pod_totals(spec: JsonDict, per_container: Any, *, limits: bool = False) -> Usage:
    """PodRequests/PodLimits over Amounts: regular containers and sidecars summed, at least each
    init container with the sidecars before it, plus the overhead (for limits only where a limit
    is set, as PodLimits)."""
    total = _sum_lists(per_container(c) for c in spec.get("containers") or () if isinstance(c, dict))
    sidecars: Usage = {}
    init_max: Usage = {}
    for c in spec.get("initContainers") or ():
        if not isinstance(c, dict):
            continue
        rl = parse_resource_list(per_container(c))
        if is_sidecar(c):
            sidecars = add(sidecars, rl)
            total = add(total, rl)
        else:
            init_max = _max_lists(init_max, add(rl, sidecars))
    total = _max_lists(total, init_max)
    overhead = parse_resource_list(spec.get("overhead"))
    if limits:
        overhead = {k: v for k, v in overhead.items() if total.get(k, ZERO)[0] != 0}
    return add(total, overhead)


def _compute_usage(requests: Usage, limits: Usage) -> Usage:
    """podComputeUsageHelper: the quota names charged for these requests and limits."""
    out: Usage = {"pods": ONE}
    for res in ("cpu", "memory", "ephemeral-storage"):
        if res in requests:
            out[res] = requests[res]
            out[REQUESTS + res] = requests[res]
        if res in limits:
            out[LIMITS + res] = limits[res]
    for res, q in requests.items():
        if res.startswith(HUGEPAGES):
            out[res] = q
            out[REQUESTS + res] = q
        if is_extended_resource(res):
            out[REQUESTS + res] = q
    return out


def pod_counts(pod: JsonDict, now: datetime) -> bool:
    """QuotaV1Pod: terminal pods are not charged, nor pods still present after their deletion
    timestamp plus their grace period (a lost node's)."""
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    deleted = meta.get("deletionTimestamp")
    grace = meta.get("deletionGracePeriodSeconds")
    if deleted and isinstance(grace, int) and not isinstance(grace, bool):
        try:
            at = datetime.fromisoformat(str(deleted).replace("Z", "+00:00"))
        except ValueError:
            return True
        if now > at + timedelta(seconds=grace):
            return False
    return True


def pod_usage(pod: JsonDict, now: datetime | None = None) -> Usage:
    """What a pod uses, every name the pods evaluator knows: a pod that no longer counts
    (`pod_counts` at `now`) is still charged its count/pods."""
    if now is not None and not pod_counts(pod, now):
        return {count_name("", "pods"): ONE}
    containers, inits = effective_containers(pod)  # a resizing container: max(desired, actual)
    spec = {**(pod.get("spec") or {}), "containers": containers, "initContainers": inits}
    out = _compute_usage(_pod_totals(spec, _container_requests),
                         _pod_totals(spec, lambda c: (c.get("resources") or {}).get("limits"), limits=True))
    out[count_name("", "pods")] = ONE
    return out


def service_usage(svc: JsonDict) -> Usage:
    spec = svc.get("spec") or {}
    out: Usage = {"services": ONE, count_name("", "services"): ONE, "services.loadbalancers": ZERO,
                  "services.nodeports": ZERO}
    ports = [p for p in spec.get("ports") or () if isinstance(p, dict)]
    kind = spec.get("type")
    if kind == "NodePort":
        out["services.nodeports"] = (Fraction(len(ports)), "DecimalSI")
    elif kind == "LoadBalancer":
        out["services.loadbalancers"] = ONE
        if spec.get("allocateLoadBalancerNodePorts") is not False:
            out["services.nodeports"] = (Fraction(len(ports)), "DecimalSI")
        else:  # only the ports given a node port explicitly
            out["services.nodeports"] = (Fraction(sum(1 for p in ports if p.get("nodePort"))), "DecimalSI")
    return out


def pvc_usage(pvc: JsonDict) -> Usage:
    out: Usage = {"persistentvolumeclaims": ONE, count_name("", "persistentvolumeclaims"): ONE}
    cls = claim_class(pvc)  # GetPersistentVolumeClaimClass, as upstream's quota evaluator
    if cls:
        out[cls + STORAGE_CLASS_SUFFIX + "persistentvolumeclaims"] = ONE
    requests = ((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}
    storage: Amount | None = None
    if "storage" in requests:
        try:
            storage = amount(requests["storage"])
        except (QuantityError, TypeError):
            storage = None
    allocated = ((pvc.get("status") or {}).get("allocatedResources") or {}).get("storage")
    if allocated is not None:
        try:
            alloc = amount(allocated)
        except (QuantityError, TypeError):
            alloc = None
        if alloc is not None and (storage is None or alloc[0] > storage[0]):
            storage = alloc
    if storage is not None:
        out["requests.storage"] = storage
        if cls:
            out[cls + STORAGE_CLASS_SUFFIX + "requests.storage"] = storage
    return out


def usage_of(group: str, resource: str, obj: JsonDict, now: datetime | None = None) -> Usage:
    """Everything an object of `group/resource` is charged (before masking to a quota's names);
    `now` decides whether a deleted pod still counts."""
    if group == "":
        if resource == "pods":
            return pod_usage(obj, now)
        if resource == "services":
            return service_usage(obj)
        if resource == "persistentvolumeclaims":
            return pvc_usage(obj)
    out: Usage = {count_name(group, resource): ONE}
    legacy = LEGACY_COUNT_NAMES.get((group, resource))
    if legacy:
        out[legacy] = ONE
    return out


def mask(u: Usage, names: Iterable[str]) -> Usage:
    keep = set(names)
    return {k: v for k, v in u.items() if k in keep}


# ------------------------------------------------------------------------------------------------
# scopes
# ------------------------------------------------------------------------------------------------


def scope_selectors(quota: JsonDict) -> list[JsonDict]:
    """The quota's scopes and scopeSelector requirements as one list of requirements
    (a bare scope is {scopeName, operator: Exists})."""
    spec = quota.get("spec") or {}
    out = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or () if isinstance(s, str)]
    sel = spec.get("scopeSelector") or {}
    out.extend(r for r in sel.get("matchExpressions") or () if isinstance(r, dict))
    return out


def _is_best_effort(pod: JsonDict) -> bool:
    given = (pod.get("status") or {}).get("qosClass")
    if given:
        return bool(given == "BestEffort")
    spec = pod.get("spec") or {}
    for c in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        res = (c or {}).get("resources") or {}
        for part in ("requests", "limits"):
            for name, q in (res.get(part) or {}).items():
                if name in _QOS_RESOURCES:
                    try:
                        if parse_quantity(q) != 0:
                            return False
                    except (QuantityError, TypeError):
                        continue
    return True


def _cross_namespace_affinity(pod: JsonDict) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        a = affinity.get(kind) or {}
        terms = list(a.get("requiredDuringSchedulingIgnoredDuringExecution") or ())
        terms += [(w or {}).get("podAffinityTerm") or {}
                  for w in a.get("preferredDuringSchedulingIgnoredDuringExecution") or ()]
        for t in terms:
            if isinstance(t, dict) and (t.get("namespaces") or t.get("namespaceSelector") is not None):
                return True
    return False


def _pod_matches_scope(pod: JsonDict, req: JsonDict) -> bool:
    scope = req.get("scopeName")
    spec = pod.get("spec") or {}
    if scope == "Terminating":
        d = spec.get("activeDeadlineSeconds")
        return isinstance(d, int) and d >= 0
    if scope == "NotTerminating":
        d = spec.get("activeDeadlineSeconds")
        return not (isinstance(d, int) and d >= 0)
    if scope == "BestEffort":
        return _is_best_effort(pod)
    if scope == "NotBestEffort":
        return not _is_best_effort(pod)
    if scope == "PriorityClass":
        name = spec.get("priorityClassName") or ""
        op = req.get("operator")
        values = [v for v in req.get("values") or () if isinstance(v, str)]
        if op == "Exists":
            return bool(name)
        if op == "DoesNotExist":
            return not name
        if op == "In":
            return name in values
        if op == "NotIn":
            return name not in values
        return False
    if scope == "CrossNamespacePodAffinity":
        return _cross_namespace_affinity(pod)
    return False


def matches_scopes(group: str, resource: str, obj: JsonDict, selectors: list[JsonDict]) -> bool:
    """Whether an object falls under every scope requirement of a quota (objects other than
    pods fall under a quota only without scopes: scoped quotas track pod resources only)."""
    if not selectors:
        return True
    if (group, resource) != ("", "pods"):
        return False
    return all(_pod_matches_scope(obj, r) for r in selectors)


def charged(group: str, resource: str, obj: JsonDict, quota: JsonDict, names: Iterable[str],
            now: datetime) -> Usage:
    """What `obj` adds to `quota` for the quota names `names` ({} if it does not fall under the
    quota's scopes)."""
    if not matches_scopes(group, resource, obj, scope_selectors(quota)):
        return {}
    return mask(usage_of(group, resource, obj, now), names)


# ------------------------------------------------------------------------------------------------
# the pods evaluator's constraint
# ------------------------------------------------------------------------------------------------


def pod_constraint_error(pod: JsonDict, required: Iterable[str]) -> str:
    """podEvaluator.Constraints: when a quota limits cpu or memory (requests or limits), every
    container and init container must state it. "" when satisfied, else e.g.
    "must specify limits.memory for: app; requests.cpu for: app,init"."""
    wanted = _CONSTRAINED.intersection(required)
    if not wanted:
        return ""
    spec = pod.get("spec") or {}
    missing: dict[str, set[str]] = {}
    for c in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        if not isinstance(c, dict):
            continue
        res = c.get("resources") or {}
        have = set(_compute_usage(parse_resource_list(res.get("requests")), parse_resource_list(res.get("limits"))))
        for name in wanted - have:
            missing.setdefault(name, set()).add(str(c.get("name") or ""))
    if not missing:
        return ""
    parts = [f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing)]
    return "must specify " + "; ".join(parts)


def pretty(u: Usage) -> str:
    """prettyPrint: "name=value" pairs, sorted by name, joined by commas."""
    return ",".join(f"{k}={text(v)}" for k, v in sorted(u.items()))
