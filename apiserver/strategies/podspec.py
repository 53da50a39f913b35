"""PodSpec defaulting and validation, shared by Pod and pod templates (layer L4, apiserver).

Why: Deployments and ReplicaSets embed a PodTemplateSpec that upstream defaults and validates
with the same code as a Pod (pkg/apis/core/v1/defaults.go SetDefaults_PodSpec/Container,
pkg/apis/core/validation ValidatePodSpec). Hand-written checks on the dict keep a typical pod's
default+validate in the tens of microseconds; messages and field paths are upstream's.

Example: `validate_pod_spec({"containers": []}, "spec")` ->
`[{"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers"}]`.
"""

from __future__ import annotations

import functools
from fractions import Fraction
from typing import Any, TypeGuard, cast

import orjson

from apiserver.strategies.memo import (
    SecondSightLRU,
    exact_json,
    same_but_token_name,
    without_token_volume_name,
)
from minik3s.api.helpers.pods import default_pull_policy
from minik3s.api.quantity import QuantityError, parse_quantity
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    duplicate,
    forbidden,
    invalid,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    not_supported,
    required,
    type_invalid,
    validate_label_name,
    validate_label_selector,
    validate_labels,
)

RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
PROTOCOLS = ("SCTP", "TCP", "UDP")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
SCHEDULE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
INCLUSION_POLICIES = ("Honor", "Ignore")
NODE_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
QOS_RESOURCES = ("cpu", "memory")


# =================================================================================================
# defaulting
# =================================================================================================


def _default_probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    http = probe.get("httpGet")
    if isinstance(http, dict):
        http.setdefault("path", "/")
        http.setdefault("scheme", "HTTP")


def default_container(c: Any) -> None:
    if not isinstance(c, dict):
        return
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = default_pull_policy(c.get("image"))
    if not c.get("terminationMessagePath"):
        c["terminationMessagePath"] = "/dev/termination-log"
    if not c.get("terminationMessagePolicy"):
        c["terminationMessagePolicy"] = "File"
    ports = c.get("ports")
    if isinstance(ports, list):
        for p in ports:
            if isinstance(p, dict) and not p.get("protocol"):
                p["protocol"] = "TCP"
    res = c.get("resources")
    if isinstance(res, dict):
        limits = res.get("limits")
        if isinstance(limits, dict) and limits:
            # SetDefaults_Pod: a limit without a request becomes the request
            reqs = res.get("requests")
            if not isinstance(reqs, dict):
                reqs = {}
                res["requests"] = reqs
            for k, v in limits.items():
                reqs.setdefault(k, v)
    else:
        c["resources"] = {}
    for name in ("livenessProbe", "readinessProbe", "startupProbe"):
        if name in c:
            _default_probe(c[name])
    env = c.get("env")
    if isinstance(env, list):
        for e in env:
            ref = (e.get("valueFrom") or {}).get("fieldRef") if isinstance(e, dict) else None
            if isinstance(ref, dict):
                ref.setdefault("apiVersion", "v1")


def default_pod_spec(spec: Any) -> None:
    """SetDefaults_PodSpec + per-container defaults (+ pod-level requests from limits)."""
    if not isinstance(spec, dict):
        return
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    host_network = bool(spec.get("hostNetwork"))
    for key in ("containers", "initContainers", "ephemeralContainers"):
        cs = spec.get(key)
        if isinstance(cs, list):
            for c in cs:
                default_container(c)
                if host_network and isinstance(c, dict):
                    # hostNetwork pods: hostPort defaults to containerPort
                    for p in c.get("ports") or []:
                        if isinstance(p, dict) and not p.get("hostPort") and p.get("containerPort"):
                            p["hostPort"] = p["containerPort"]
    for v in spec.get("volumes") or []:
        if isinstance(v, dict) and len(v) == 1 and "name" in v:
            v["emptyDir"] = {}  # a volume without a source is an emptyDir (SetDefaults_Volume)
        elif isinstance(v, dict):
            for src, defaults in (("configMap", 420), ("secret", 420)):
                s = v.get(src)
                if isinstance(s, dict):
                    s.setdefault("defaultMode", defaults)
            hp = v.get("hostPath")
            if isinstance(hp, dict):
                hp.setdefault("type", "")
    for ts in spec.get("topologySpreadConstraints") or []:
        # no defaults on the wire for nodeAffinityPolicy/nodeTaintsPolicy (nil means Honor/Ignore)
        _ = ts
    pres = spec.get("resources")
    if isinstance(pres, dict) and isinstance(pres.get("limits"), dict) and pres["limits"]:
        reqs = pres.setdefault("requests", {})
        if isinstance(reqs, dict):
            for k, v in pres["limits"].items():
                reqs.setdefault(k, v)


def _nonzero(q: Any) -> bool:
    if type(q) is str:
        return _nonzero_string(q)
    try:
        return parse_quantity(q) != 0
    except (QuantityError, TypeError):
        return False


@functools.lru_cache(maxsize=1024)
def _nonzero_string(q: str) -> bool:
    """`_nonzero` of a quantity string, memoised: the strings repeat ("100m", "500Mi") and a
    Fraction comparison is slow Python code."""
    try:
        return parse_quantity(q) != 0
    except QuantityError:
        return False


def _qos_quick(containers: list[Any]) -> str | None:
    """BestEffort / Burstable decided without summing: no cpu/memory request or limit at all is
    BestEffort; a container without both cpu and memory limits makes the pod Burstable when
    anything is set. None when the sums must be compared (a possible Guaranteed)."""
    any_set = False
    all_limited = True
    for c in containers:
        if not isinstance(c, dict):
            continue
        res = c.get("resources") or {}
        if not isinstance(res, dict):
            continue
        reqs = res.get("requests") or {}
        lims = res.get("limits") or {}
        if not isinstance(reqs, dict) or not isinstance(lims, dict):
            return None
        limited = 0
        for name in QOS_RESOURCES:
            if name in reqs and _nonzero(reqs[name]):
                any_set = True
            if name in lims and _nonzero(lims[name]):
                any_set = True
                limited += 1
        if limited != len(QOS_RESOURCES):
            all_limited = False
    if not any_set:
        return "BestEffort"
    if not all_limited:
        return "Burstable"
    return None


def qos_class(spec: Any) -> str:
    """GetPodQOS over cpu and memory of all containers and init containers.

    BestEffort: no requests or limits at all; Guaranteed: every container limits cpu and memory
    and the summed requests equal the summed limits; Burstable: otherwise.
    Example: one container with limits cpu=1, memory=1Gi (requests defaulted) -> Guaranteed."""
    spec = spec if isinstance(spec, dict) else {}
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    quick = _qos_quick(containers)
    if quick is not None:
        return quick
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for c in containers:
        if not isinstance(c, dict):
            continue
        res = c.get("resources") or {}
        for name, q in (res.get("requests") or {}).items():
            if name in QOS_RESOURCES:
                try:
                    v = parse_quantity(q)
                except (QuantityError, TypeError):
                    continue
                if v != 0:
                    requests[name] = requests.get(name, Fraction(0)) + v
        found: set[str] = set()
        for name, q in (res.get("limits") or {}).items():
            if name in QOS_RESOURCES:
                try:
                    v = parse_quantity(q)
                except (QuantityError, TypeError):
                    continue
                if v != 0:
                    found.add(name)
                    limits[name] = limits.get(name, Fraction(0)) + v
        if len(found) != len(QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and len(requests) == len(limits):
        if all(limits.get(k) == v for k, v in requests.items()):
            return "Guaranteed"
    return "Burstable"


# =================================================================================================
# validation
# =================================================================================================

_QUANTITY_MSG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


_DEC_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BIN_SUFFIX = {0: "", 10: "Ki", 20: "Mi", 30: "Gi", 40: "Ti", 50: "Pi", 60: "Ei"}


def canonical_quantity(raw: Any) -> str:
    """Quantity.String() as upstream prints it in messages: the parsed value in the format
    of the input (binary SI, decimal SI or decimal exponent) with the largest exact suffix,
    rounded up to nano units.

    Examples: "1000m" -> "1", "1.5" -> "1500m", "0.5Gi" -> "512Mi", "1536Mi" -> "1536Mi",
    "1e3" -> "1e3", "512" -> "512"."""
    try:
        v = parse_quantity(raw)
    except (QuantityError, TypeError):
        return str(raw)
    text = raw if isinstance(raw, str) else ""
    sign = "-" if v < 0 else ""
    v = abs(v)
    binary = any(text.endswith(x) for x in ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))
    exponent_form = "e" in text.lower() and not binary
    if binary and v.denominator == 1 and v >= 1024:
        n, e = int(v), 0
        while n % 1024 == 0 and e < 60:
            n //= 1024
            e += 10
        return f"{sign}{n}{_BIN_SUFFIX[e]}"
    nano = -((-v.numerator * 10**9) // v.denominator)  # ceil(v * 1e9)
    if nano == 0:
        return "0"
    e = -9
    while nano % 1000 == 0 and e < 18:
        nano //= 1000
        e += 3
    if exponent_form:
        return f"{sign}{nano}" + (f"e{e}" if e else "")
    return f"{sign}{nano}{_DEC_SUFFIX[e]}"


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_extended(name: str) -> bool:
    if "/" not in name:
        return False
    return not (name.startswith("kubernetes.io/") or name.startswith("requests."))


def _overcommit_allowed(name: str) -> bool:
    return not (name.startswith("hugepages-") or _is_extended(name))


def validate_resource_list_values(
    rl: Any, field: str, *, container: bool = True
) -> tuple[list[JsonDict], dict[str, Fraction]]:
    errs: list[JsonDict] = []
    parsed: dict[str, Fraction] = {}
    if rl is None:
        return errs, parsed
    if not isinstance(rl, dict):
        return [type_invalid(field, rl, "must be an object")], parsed
    for name, q in rl.items():
        p = f"{field}[{name}]"
        if container and name not in STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            qerrs = is_qualified_name(name)
            if qerrs:
                errs.extend(invalid(p, name, m) for m in qerrs)
            elif not _is_extended(name):
                errs.append(invalid(p, name, "must be a standard resource for containers"))
        try:
            v = parse_quantity(q)
        except (QuantityError, TypeError):
            errs.append(invalid(p, q, _QUANTITY_MSG))
            continue
        if v < 0:
            errs.append(invalid(p, canonical_quantity(q), "must be greater than or equal to 0"))
        elif _is_extended(name) and v.denominator != 1:
            errs.append(invalid(p, canonical_quantity(q), "must be an integer"))
        parsed[name] = v
    return errs, parsed


def validate_resource_requirements(res: Any, field: str) -> list[JsonDict]:
    """ValidateResourceRequirements: names, non-negative quantities, requests <= limits
    (== for extended resources and hugepages)."""
    if res is None:
        return []
    if not isinstance(res, dict):
        return [type_invalid(field, res, "must be an object")]
    lerrs, limits = validate_resource_list_values(res.get("limits"), f"{field}.limits")
    rerrs, requests = validate_resource_list_values(res.get("requests"), f"{field}.requests")
    errs = lerrs + rerrs
    raw_req = res.get("requests") or {}
    raw_lim = res.get("limits") or {}
    for name, v in requests.items():
        lim = limits.get(name)
        if lim is not None:
            if v != lim and not _overcommit_allowed(name):
                errs.append(invalid(f"{field}.requests", canonical_quantity(raw_req[name]),
                                    f"must be equal to {name} limit of {canonical_quantity(raw_lim[name])}"))
            elif v > lim:
                errs.append(invalid(f"{field}.requests", canonical_quantity(raw_req[name]),
                                    f"must be less than or equal to {name} limit of "
                                    f"{canonical_quantity(raw_lim[name])}"))
        elif name not in raw_lim and not _overcommit_allowed(name):
            errs.append(required(f"{field}.limits", "Limit must be set for non overcommitable resources"))
    return errs


def _validate_port_num(v: Any, field: str) -> list[JsonDict]:
    if not _is_int(v):
        return [type_invalid(field, v, "must be an integer")]
    if not 1 <= v <= 65535:
        return [invalid(field, v, "must be between 1 and 65535, inclusive")]
    return []


def _validate_ports(ports: Any, field: str) -> list[JsonDict]:
    errs: list[JsonDict] = []
    names: set[str] = set()
    for i, p in enumerate(ports or []):
        pp = f"{field}[{i}]"
        if not isinstance(p, dict):
            errs.append(type_invalid(pp, p, "must be an object"))
            continue
        name = p.get("name")
        if name:
            if len(name) > 15 or not isinstance(name, str):
                errs.append(invalid(f"{pp}.name", name, "must be no more than 15 characters"))
            elif name in names:
                errs.append(duplicate(f"{pp}.name", name))
            names.add(name)
        if "containerPort" not in p or p.get("containerPort") in (0, None):
            errs.append(required(f"{pp}.containerPort", ""))
        else:
            errs.extend(_validate_port_num(p["containerPort"], f"{pp}.containerPort"))
        if p.get("hostPort"):
            errs.extend(_validate_port_num(p["hostPort"], f"{pp}.hostPort"))
        proto = p.get("protocol")
        if not proto:
            errs.append(required(f"{pp}.protocol", ""))
        elif proto not in PROTOCOLS:
            errs.append(not_supported(f"{pp}.protocol", proto, PROTOCOLS))
    return errs


def _validate_container(
    c: JsonDict, field: str, names: set[str], volumes: set[str], *, init: bool = False
) -> list[JsonDict]:
    errs: list[JsonDict] = []
    name = c.get("name")
    if not name:
        errs.append(required(f"{field}.name", ""))
    elif not isinstance(name, str):
        errs.append(type_invalid(f"{field}.name", name, "must be a string"))
    else:
        errs.extend(invalid(f"{field}.name", name, m) for m in is_dns1123_label(name))
        if name in names:
            errs.append(duplicate(f"{field}.name", name))
        names.add(name)
    if not c.get("image"):
        errs.append(required(f"{field}.image", ""))
    pull = c.get("imagePullPolicy")
    if not pull:
        errs.append(required(f"{field}.imagePullPolicy", ""))
    elif pull not in PULL_POLICIES:
        errs.append(not_supported(f"{field}.imagePullPolicy", pull, PULL_POLICIES))
    tmp = c.get("terminationMessagePolicy")
    if not tmp:
        errs.append(required(f"{field}.terminationMessagePolicy", ""))
    elif tmp not in TERMINATION_MESSAGE_POLICIES:
        errs.append(not_supported(f"{field}.terminationMessagePolicy", tmp, TERMINATION_MESSAGE_POLICIES))
    rp = c.get("restartPolicy")
    if rp is not None:
        if not init:
            errs.append(forbidden(f"{field}.restartPolicy", "may not be set for non-init containers"))
        elif rp != "Always":
            errs.append(not_supported(f"{field}.restartPolicy", rp, ("Always",)))
    if "ports" in c:
        errs.extend(_validate_ports(c.get("ports"), f"{field}.ports"))
    for i, e in enumerate(c.get("env") or []):
        if isinstance(e, dict) and not e.get("name"):
            errs.append(required(f"{field}.env[{i}].name", ""))
    for i, m in enumerate(c.get("volumeMounts") or []):
        if not isinstance(m, dict):
            continue
        mp = f"{field}.volumeMounts[{i}]"
        mname = m.get("name")
        if not mname:
            errs.append(required(f"{mp}.name", ""))
        elif mname not in volumes:
            errs.append({"reason": "FieldValueNotFound", "message": f'Not found: "{mname}"', "field": f"{mp}.name"})
        if not m.get("mountPath"):
            errs.append(required(f"{mp}.mountPath", ""))
    if "resources" in c:
        errs.extend(validate_resource_requirements(c.get("resources"), f"{field}.resources"))
    return errs


# EphemeralContainerCommon fields an ephemeral container may not set (validateEphemeralContainers)
_EPHEMERAL_FORBIDDEN = ("ports", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "resizePolicy")


def validate_ephemeral_containers(spec: JsonDict, old: JsonDict, field: str = "spec.ephemeralContainers"
                                  ) -> list[JsonDict]:
    """ValidatePodEphemeralContainersUpdate: the existing ephemeral containers unchanged and not
    removed, each new one a valid container (a DNS-label name unique among all the pod's
    containers, an image, the defaulted policies) without the fields an ephemeral container may
    not have (ports, probes, lifecycle, resources, a resize or restart policy, a subPath mount),
    its targetContainerName one of the pod's containers."""
    errs: list[JsonDict] = []
    new_list = [c for c in spec.get("ephemeralContainers") or [] if isinstance(c, dict)]
    old_list = [c for c in old.get("ephemeralContainers") or [] if isinstance(c, dict)]
    by_name = {c.get("name"): c for c in new_list}
    for oc in old_list:
        nc = by_name.get(oc.get("name"))
        if nc is None:
            errs.append(forbidden(field, f'existing ephemeral containers "{oc.get("name")}" may not be removed\n'))
        elif nc != oc:
            errs.append(forbidden(f"{field}[{oc.get('name')}]",
                                  f'existing ephemeral containers "{oc.get("name")}" may not be changed\n'))
    names: set[str] = {str(c.get("name")) for key in ("containers", "initContainers")
                       for c in spec.get(key) or [] if isinstance(c, dict) and c.get("name")}
    targets = set(names)
    volumes = {str(v.get("name")) for v in spec.get("volumes") or [] if isinstance(v, dict) and v.get("name")}
    old_names = {c.get("name") for c in old_list}
    for i, c in enumerate(new_list):
        path = f"{field}[{i}]"
        if c.get("name") in old_names:
            names.add(str(c.get("name")))
            continue
        errs.extend(_validate_container({k: v for k, v in c.items() if k not in _EPHEMERAL_FORBIDDEN
                                         and k not in ("resources", "restartPolicy")}, path, names, volumes))
        for key in _EPHEMERAL_FORBIDDEN:
            if c.get(key):
                errs.append(forbidden(f"{path}.{key}", "cannot be set for an Ephemeral Container"))
        res = c.get("resources")
        if isinstance(res, dict) and any(res.values()):
            errs.append(forbidden(f"{path}.resources", "cannot be set for an Ephemeral Container"))
        if c.get("restartPolicy") is not None:
            errs.append(forbidden(f"{path}.restartPolicy", "cannot be set for an Ephemeral Container"))
        for j, m in enumerate(c.get("volumeMounts") or []):
            if isinstance(m, dict) and m.get("subPath"):
                errs.append(forbidden(f"{path}.volumeMounts[{j}].subPath",
                                      "cannot be set for an Ephemeral Container"))
        target = c.get("targetContainerName")
        if target and target not in targets:
            errs.append({"reason": "FieldValueNotFound", "message": f'Not found: "{target}"',
                         "field": f"{path}.targetContainerName"})
    return errs


def validate_tolerations(tols: Any, field: str) -> list[JsonDict]:
    """ValidateTolerations (pkg/apis/core/validation)."""
    if tols is None:
        return []
    if not isinstance(tols, list):
        return [type_invalid(field, tols, "must be an array")]
    errs: list[JsonDict] = []
    for i, t in enumerate(tols):
        p = f"{field}[{i}]"
        if not isinstance(t, dict):
            errs.append(type_invalid(p, t, "must be an object"))
            continue
        key = t.get("key") or ""
        op = t.get("operator") or ""
        value = t.get("value") or ""
        effect = t.get("effect") or ""
        if key:
            errs.extend(validate_label_name(key, f"{p}.key"))
        if not key and op != "Exists":
            errs.append(invalid(f"{p}.operator", op,
                                'operator must be Exists when `key` is empty, which means "match all values and all keys"'))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(invalid(f"{p}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if op in ("Equal", ""):
            lv = is_valid_label_value(value) if isinstance(value, str) else ["must be a string"]
            if lv:
                errs.append(invalid(f"{p}.operator", value, ";".join(lv)))
        elif op == "Exists":
            if value:
                errs.append(invalid(f"{p}.operator", _toleration_repr(t), "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(f"{p}.operator", op, TOLERATION_OPERATORS))
        if effect and effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{p}.effect", effect, TAINT_EFFECTS))
    return errs


def _toleration_repr(t: JsonDict) -> Any:
    class _Repr:
        def __str__(self) -> str:
            secs = t.get("tolerationSeconds")
            secs_s = "(*int64)(nil)" if secs is None else f"&{secs}"
            return (f'core.Toleration{{Key:"{t.get("key") or ""}", Operator:"{t.get("operator") or ""}", '
                    f'Value:"{t.get("value") or ""}", Effect:"{t.get("effect") or ""}", TolerationSeconds:{secs_s}}}')
    return _Repr()


def validate_taints(taints: Any, field: str) -> list[JsonDict]:
    """validateNodeTaints: key, value, effect required/enum, unique by (key, effect)."""
    if taints is None:
        return []
    if not isinstance(taints, list):
        return [type_invalid(field, taints, "must be an array")]
    errs: list[JsonDict] = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(taints):
        p = f"{field}[{i}]"
        if not isinstance(t, dict):
            errs.append(type_invalid(p, t, "must be an object"))
            continue
        key, value, effect = t.get("key") or "", t.get("value") or "", t.get("effect") or ""
        errs.extend(validate_label_name(key, f"{p}.key"))
        lv = is_valid_label_value(value) if isinstance(value, str) else ["must be a string"]
        if lv:
            errs.append(invalid(f"{p}.value", value, ";".join(lv)))
        if not effect:
            errs.append(required(f"{p}.effect", ""))
        elif effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{p}.effect", effect, TAINT_EFFECTS))
        if (key, effect) in seen:
            d = duplicate(p, f"{key}={value}:{effect}")
            d["message"] += ": taints must be unique by key and effect pair"
            errs.append(d)
            continue
        seen.add((key, effect))
    return errs


def _validate_node_selector_requirement(rq: Any, field: str, *, fields: bool = False) -> list[JsonDict]:
    if not isinstance(rq, dict):
        return [type_invalid(field, rq, "must be an object")]
    errs: list[JsonDict] = []
    op = rq.get("operator")
    values = rq.get("values") or []
    if op in ("In", "NotIn"):
        if not values:
            errs.append(required(f"{field}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(forbidden(f"{field}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(required(f"{field}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(invalid(f"{field}.operator", op, "not a valid selector operator"))
    if fields:
        if rq.get("key") != "metadata.name":
            errs.append(not_supported(f"{field}.key", rq.get("key"), ("metadata.name",)))
    else:
        errs.extend(validate_label_name(rq.get("key", ""), f"{field}.key"))
    return errs


def _validate_node_selector_term(term: Any, field: str) -> list[JsonDict]:
    if not isinstance(term, dict):
        return [type_invalid(field, term, "must be an object")]
    errs: list[JsonDict] = []
    for j, rq in enumerate(term.get("matchExpressions") or []):
        errs.extend(_validate_node_selector_requirement(rq, f"{field}.matchExpressions[{j}]"))
    for j, rq in enumerate(term.get("matchFields") or []):
        errs.extend(_validate_node_selector_requirement(rq, f"{field}.matchFields[{j}]", fields=True))
    return errs


def _validate_pod_affinity_term(term: Any, field: str) -> list[JsonDict]:
    if not isinstance(term, dict):
        return [type_invalid(field, term, "must be an object")]
    errs = validate_label_selector(term.get("labelSelector"), f"{field}.labelSelector")
    errs.extend(validate_label_selector(term.get("namespaceSelector"), f"{field}.namespaceSelector"))
    for ns in term.get("namespaces") or []:
        errs.extend(invalid(f"{field}.namespace", ns, m) for m in is_dns1123_label(ns))
    if not term.get("topologyKey"):
        errs.append(required(f"{field}.topologyKey", "can not be empty"))
    else:
        errs.extend(validate_label_name(term["topologyKey"], f"{field}.topologyKey"))
    return errs


def _validate_weight(w: Any, field: str) -> list[JsonDict]:
    if not _is_int(w) or not 1 <= w <= 100:
        return [invalid(field, w, "must be in the range 1-100")]
    return []


def validate_affinity(aff: Any, field: str) -> list[JsonDict]:
    if aff is None:
        return []
    if not isinstance(aff, dict):
        return [type_invalid(field, aff, "must be an object")]
    errs: list[JsonDict] = []
    na = aff.get("nodeAffinity")
    if isinstance(na, dict):
        base = f"{field}.nodeAffinity"
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(req, dict):
            rp = f"{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
            terms = req.get("nodeSelectorTerms") or []
            if not terms:
                errs.append(required(rp, "must have at least one node selector term"))
            for i, term in enumerate(terms):
                errs.extend(_validate_node_selector_term(term, f"{rp}[{i}]"))
        for i, pref in enumerate(na.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            pp = f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            if not isinstance(pref, dict):
                errs.append(type_invalid(pp, pref, "must be an object"))
                continue
            errs.extend(_validate_weight(pref.get("weight"), f"{pp}.weight"))
            errs.extend(_validate_node_selector_term(pref.get("preference") or {}, f"{pp}.preference"))
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = aff.get(kind)
        if not isinstance(pa, dict):
            continue
        base = f"{field}.{kind}"
        for i, term in enumerate(pa.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            errs.extend(_validate_pod_affinity_term(term, f"{base}.requiredDuringSchedulingIgnoredDuringExecution[{i}]"))
        for i, w in enumerate(pa.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            wp = f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            if not isinstance(w, dict):
                errs.append(type_invalid(wp, w, "must be an object"))
                continue
            errs.extend(_validate_weight(w.get("weight"), f"{wp}.weight"))
            errs.extend(_validate_pod_affinity_term(w.get("podAffinityTerm") or {}, f"{wp}.podAffinityTerm"))
    return errs


def validate_topology_spread(tscs: Any, field: str) -> list[JsonDict]:
    """validateTopologySpreadConstraints."""
    if tscs is None:
        return []
    if not isinstance(tscs, list):
        return [type_invalid(field, tscs, "must be an array")]
    errs: list[JsonDict] = []
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(tscs):
        p = f"{field}[{i}]"
        if not isinstance(c, dict):
            errs.append(type_invalid(p, c, "must be an object"))
            continue
        skew = c.get("maxSkew")
        if not _is_int(skew) or skew <= 0:
            errs.append(invalid(f"{p}.maxSkew", skew if skew is not None else 0, "must be greater than zero"))
        key = c.get("topologyKey") or ""
        if not key:
            errs.append(required(f"{p}.topologyKey", "can not be empty"))
        else:
            errs.extend(validate_label_name(key, f"{p}.topologyKey"))
        action = c.get("whenUnsatisfiable") or ""
        if action not in SCHEDULE_ACTIONS:
            errs.append(not_supported(f"{p}.whenUnsatisfiable", action, SCHEDULE_ACTIONS))
        if (key, action) in seen:
            errs.append(duplicate(f"{p}.{{topologyKey, whenUnsatisfiable}}", f"{{{key}, {action}}}"))
        seen.add((key, action))
        md = c.get("minDomains")
        if md is not None:
            if not _is_int(md) or md <= 0:
                errs.append(invalid(f"{p}.minDomains", md, "must be greater than zero"))
            if action != "DoNotSchedule":
                errs.append(invalid(f"{p}.minDomains", md,
                                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"))
        for pol in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            v = c.get(pol)
            if v is not None and v not in INCLUSION_POLICIES:
                errs.append(not_supported(f"{p}.{pol}", v, INCLUSION_POLICIES))
        mlk = c.get("matchLabelKeys")
        if mlk:
            if c.get("labelSelector") is None:
                errs.append(forbidden(f"{p}.matchLabelKeys", "must not be specified when labelSelector is not set"))
            for j, k in enumerate(mlk):
                errs.extend(validate_label_name(k, f"{p}.matchLabelKeys[{j}]"))
        errs.extend(validate_label_selector(c.get("labelSelector"), f"{p}.labelSelector"))
    return errs


def validate_workload_ref(ref: Any, field: str) -> list[JsonDict]:
    """pod.spec.workloadRef (v1.35 alpha, KEP-4671): the Workload's name is an object name
    (DNS subdomain); podGroup and the optional podGroupReplicaKey are DNS labels."""
    if not isinstance(ref, dict):
        return [type_invalid(field, ref, "must be an object")]
    errs: list[JsonDict] = []
    for key, check, needed in (("name", is_dns1123_subdomain, True), ("podGroup", is_dns1123_label, True),
                               ("podGroupReplicaKey", is_dns1123_label, False)):
        v = ref.get(key)
        if v is None or v == "":
            if needed:
                errs.append(required(f"{field}.{key}", ""))
            continue
        if not isinstance(v, str):
            errs.append(type_invalid(f"{field}.{key}", v, "must be a string"))
            continue
        errs.extend(invalid(f"{field}.{key}", v, m) for m in check(v))
    return errs


# Specs whose JSON is larger than this are never memo keys (the memo holds a copy of each).
_MEMO_MAX_BYTES = 16 * 1024


class SpecValidationMemo:
    """Pod spec validation memoised on the spec's JSON and value (a cache: the answers are
    `_validate_pod_spec`'s). A spec enters on its second sighting (the first costs only its JSON
    encoding, so a stream of specs unlike each other pays little); a hit needs the bytes and
    Python's equality both to match the entry's spec (a private copy): the bytes tell apart
    what Python's equality does not (1, 1.0 and True; key order), the equality what the bytes
    do not (a tuple for a list; NaN, which orjson writes as null). Bounded: `size` entries and
    `size` sightings, least recently used out first (`apiserver.strategies.memo`)."""

    __slots__ = ("_lru",)

    def __init__(self, size: int = 128) -> None:
        self._lru: SecondSightLRU[tuple[str, bytes], tuple[Any, bytes]] = SecondSightLRU(size)

    @property
    def size(self) -> int:
        return self._lru.size

    def causes(self, spec: JsonDict, field: str) -> list[JsonDict]:
        data = exact_json(spec, _MEMO_MAX_BYTES)
        if data is None:
            return _validate_pod_spec(spec, field)
        key_data, token_name = without_token_volume_name(spec, data)
        key = (field, key_data)
        entry = self._lru.get(key)
        if entry is None:
            if self._lru.first_sighting(key):
                return _validate_pod_spec(spec, field)
            plain = orjson.loads(key_data)
            entry = (plain, orjson.dumps(_validate_pod_spec(plain, field)))
            self._lru.put(key, entry)
        plain, causes = entry
        if token_name:
            # the entry is the same spec with another token volume name: a valid answer holds
            # for every such name (an invalid one could quote the name)
            if causes != b"[]" or not same_but_token_name(spec, plain, token_name):
                return _validate_pod_spec(spec, field)
            return []
        if spec != plain:
            return _validate_pod_spec(spec, field)
        return [] if causes == b"[]" else cast(list[JsonDict], orjson.loads(causes))


# the process's memo (a cache of a pure function, as functools.lru_cache would be)
_MEMO = SpecValidationMemo()


def validate_pod_spec(spec: Any, field: str = "spec") -> list[JsonDict]:
    """ValidatePodSpec: containers, policies, scheduling constraints, resources. Memoised
    (`SpecValidationMemo`): the same causes as the walk, as fresh dicts."""
    if isinstance(spec, dict):
        return _MEMO.causes(spec, field)
    return _validate_pod_spec(spec, field)


def _validate_pod_spec(spec: Any, field: str) -> list[JsonDict]:
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        return [type_invalid(field, spec, "must be an object")]
    errs: list[JsonDict] = []
    volumes: set[str] = set()
    for i, v in enumerate(spec.get("volumes") or []):
        vp = f"{field}.volumes[{i}]"
        if not isinstance(v, dict):
            errs.append(type_invalid(vp, v, "must be an object"))
            continue
        vn = v.get("name")
        if not vn:
            errs.append(required(f"{vp}.name", ""))
        else:
            errs.extend(invalid(f"{vp}.name", vn, m) for m in is_dns1123_label(str(vn)))
            if vn in volumes:
                errs.append(duplicate(f"{vp}.name", vn))
            volumes.add(vn)
    names: set[str] = set()
    containers = spec.get("containers")
    if not containers:
        errs.append(required(f"{field}.containers", ""))
    elif not isinstance(containers, list):
        errs.append(type_invalid(f"{field}.containers", containers, "must be an array"))
    else:
        for i, c in enumerate(containers):
            if not isinstance(c, dict):
                errs.append(type_invalid(f"{field}.containers[{i}]", c, "must be an object"))
                continue
            errs.extend(_validate_container(c, f"{field}.containers[{i}]", names, volumes))
    for i, c in enumerate(spec.get("initContainers") or []):
        if isinstance(c, dict):
            errs.extend(_validate_container(c, f"{field}.initContainers[{i}]", names, volumes, init=True))
    rp = spec.get("restartPolicy")
    if not rp:
        errs.append(required(f"{field}.restartPolicy", ""))
    elif rp not in RESTART_POLICIES:
        errs.append(not_supported(f"{field}.restartPolicy", rp, RESTART_POLICIES))
    dp = spec.get("dnsPolicy")
    if not dp:
        errs.append(required(f"{field}.dnsPolicy", ""))
    elif dp not in DNS_POLICIES:
        errs.append(not_supported(f"{field}.dnsPolicy", dp, DNS_POLICIES))
    if dp == "None" and not spec.get("dnsConfig"):
        errs.append(required(f"{field}.dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None"))
    tgps = spec.get("terminationGracePeriodSeconds")
    if tgps is not None and not _is_int(tgps):
        errs.append(type_invalid(f"{field}.terminationGracePeriodSeconds", tgps, "must be an integer"))
    ads = spec.get("activeDeadlineSeconds")
    if ads is not None and (not _is_int(ads) or not 1 <= ads <= 2**31 - 1):
        errs.append(invalid(f"{field}.activeDeadlineSeconds", ads, "must be between 1 and 2147483647, inclusive"))
    errs.extend(validate_labels(spec.get("nodeSelector"), f"{field}.nodeSelector"))
    for key in ("nodeName", "serviceAccountName", "priorityClassName", "schedulerName", "runtimeClassName"):
        v = spec.get(key)
        if v:
            if not isinstance(v, str):
                errs.append(type_invalid(f"{field}.{key}", v, "must be a string"))
            else:
                errs.extend(invalid(f"{field}.{key}", v, m) for m in is_dns1123_subdomain(v))
    for key in ("hostname", "subdomain"):
        v = spec.get(key)
        if v and isinstance(v, str):
            errs.extend(invalid(f"{field}.{key}", v, m) for m in is_dns1123_label(v))
    pp = spec.get("preemptionPolicy")
    if pp is not None and pp not in PREEMPTION_POLICIES:
        errs.append(not_supported(f"{field}.preemptionPolicy", pp, PREEMPTION_POLICIES))
    prio = spec.get("priority")
    if prio is not None and not _is_int(prio):
        errs.append(type_invalid(f"{field}.priority", prio, "must be an integer"))
    errs.extend(validate_tolerations(spec.get("tolerations"), f"{field}.tolerations"))
    errs.extend(validate_affinity(spec.get("affinity"), f"{field}.affinity"))
    errs.extend(validate_topology_spread(spec.get("topologySpreadConstraints"), f"{field}.topologySpreadConstraints"))
    gates = spec.get("schedulingGates")
    if gates:
        seen: set[str] = set()
        for i, g in enumerate(gates):
            gname = g.get("name") if isinstance(g, dict) else None
            gp = f"{field}.schedulingGates[{i}].name"
            errs.extend(validate_label_name(gname or "", gp))
            if gname in seen:
                errs.append(duplicate(gp, gname))
            seen.add(gname or "")
    if spec.get("workloadRef") is not None:
        errs.extend(validate_workload_ref(spec.get("workloadRef"), f"{field}.workloadRef"))
    if "overhead" in spec:
        oerrs, _ = validate_resource_list_values(spec.get("overhead"), f"{field}.overhead", container=False)
        errs.extend(oerrs)
    if "resources" in spec:
        errs.extend(validate_resource_requirements(spec.get("resources"), f"{field}.resources"))
    return errs
