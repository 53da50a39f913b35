"""PodSpec defaulting and validation, shared by Pod and pod templates (layer L4, apiserver).

Why: Deployments and ReplicaSets embed a PodTemplateSpec that upstream defaults and validates
with the same code as a Pod (pkg/apis/core/v1/defaults.go SetDefaults_PodSpec/Container,
pkg/apis/core/validation ValidatePodSpec). Hand-written checks on the dict keep a typical pod's
default+validate in the tens of microseconds; messages and field paths are upstream's. Volume
sources are defaulted and validated by `apiserver.strategies.volume_validation`.

Example: `validate_pod_spec({"containers": []}, "spec")` ->
`[{"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers"}]`.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import re
from fractions import Fraction
from typing import Any, NamedTuple, TypeGuard, cast

import orjson

from apiserver.strategies.memo import (
    SecondSightLRU,
    exact_json,
    same_but_token_name,
    without_token_volume_name,
)
from apiserver.strategies.volume_validation import (
    default_volumes,
    object_field_selector,
    resource_field_selector,
    validate_local_descending_path,
    validate_volumes,
)
from minik3s.api.errors import cause
from minik3s.api.helpers.pods import default_pull_policy
from minik3s.api.quantity import QuantityError, parse_quantity
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    duplicate,
    forbidden,
    go_value,
    invalid,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    max_len_msg,
    not_supported,
    required,
    too_long,
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
    lifecycle = c.get("lifecycle")
    if isinstance(lifecycle, dict):
        for hook in ("postStart", "preStop"):
            http = lifecycle[hook].get("httpGet") if isinstance(lifecycle.get(hook), dict) else None
            if isinstance(http, dict):  # SetDefaults_HTTPGetAction holds for hooks too
                http.setdefault("path", "/")
                http.setdefault("scheme", "HTTP")
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
    default_volumes(spec.get("volumes"))  # SetDefaults_Volume and the volume sources' defaults
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


def _int0(v: Any) -> int:
    """An int32/int64 field as Go reads it: a missing field is its zero value."""
    return v if _is_int(v) else 0


def _str0(v: Any) -> str:
    return v if isinstance(v, str) else ""


# ---- apimachinery util/validation helpers the pod rules use -------------------------------------

_MAX_INT32 = 2**31 - 1
_PORT_NAME_CHARSET_RE = re.compile(r"^[-a-z0-9]+\Z")
_ONE_LETTER_RE = re.compile(r"[a-z]")
_ENV_VAR_NAME_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_ENV_VAR_NAME_RE = re.compile("^" + _ENV_VAR_NAME_FMT + r"\Z")
ENV_VAR_NAME_MSG = (
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
    "and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used "
    "for validation is '" + _ENV_VAR_NAME_FMT + "')"
)
RELAXED_ENV_VAR_NAME_MSG = (
    "a valid environment variable name must consist only of printable ASCII characters other than '='"
)
_CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_MAP_KEY_RE = re.compile("^" + _CONFIG_MAP_KEY_FMT + r"\Z")
_CONFIG_MAP_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
    "'KEY_NAME',  or 'key-name', regex used for validation is '" + _CONFIG_MAP_KEY_FMT + "')"
)
_HTTP_HEADER_FMT = "[-A-Za-z0-9]+"
_HTTP_HEADER_RE = re.compile("^" + _HTTP_HEADER_FMT + r"\Z")
_HTTP_HEADER_MSG = (
    "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used "
    "for validation is '" + _HTTP_HEADER_FMT + "')"
)
_DNS1123_LABEL_US_FMT = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_US_FMT = _DNS1123_LABEL_US_FMT + r"(\." + _DNS1123_LABEL_US_FMT + ")*"
_DNS1123_SUBDOMAIN_US_RE = re.compile("^" + _DNS1123_SUBDOMAIN_US_FMT + r"\Z")
_DNS1123_SUBDOMAIN_US_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '"
    + _DNS1123_SUBDOMAIN_US_FMT + "')"
)
_IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
_SYSCTL_SEGMENT_FMT = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_SYSCTL_FMT = "(" + _SYSCTL_SEGMENT_FMT + "[\\./])*" + _SYSCTL_SEGMENT_FMT
_SYSCTL_RE = re.compile("^" + _SYSCTL_FMT + "$")
_SYSCTL_MAX = 253
_IPC_SYSCTLS = frozenset({"kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.msgmax",
                          "kernel.msgmnb", "kernel.msgmni"})


def inclusive_range_msg(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def is_valid_port_num(port: Any) -> list[str]:
    if _is_int(port) and 1 <= port <= 65535:
        return []
    return [inclusive_range_msg(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    """IsValidPortName: an IANA_SVC_NAME (at most 15 characters, a-z0-9 and '-', a letter)."""
    errs: list[str] = []
    if len(port) > 15:
        errs.append(max_len_msg(15))
    if not _PORT_NAME_CHARSET_RE.match(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    elif not _ONE_LETTER_RE.search(port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _has_chdir_prefix(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def is_env_var_name(value: str) -> list[str]:
    errs = [] if _ENV_VAR_NAME_RE.match(value) else [ENV_VAR_NAME_MSG]
    return errs + _has_chdir_prefix(value)


def is_relaxed_env_var_name(value: str) -> list[str]:
    errs: list[str] = []
    if not value:
        errs.append("environment variable name must be non-empty")
    if any(ord(ch) > 126 or ord(ch) < 32 or ch == "=" for ch in value):
        errs.append(RELAXED_ENV_VAR_NAME_MSG)
    return errs


def is_config_map_key(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > 253:
        errs.append(max_len_msg(253))
    if not _CONFIG_MAP_KEY_RE.match(value):
        errs.append(_CONFIG_MAP_KEY_MSG)
    return errs + _has_chdir_prefix(value)


def is_valid_ip(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _valid_ip(value: Any, field: str) -> list[JsonDict]:
    return [] if is_valid_ip(value) else [invalid(field, value, _IP_MSG)]


def _qualified(value: Any, field: str) -> list[JsonDict]:
    """ValidateQualifiedName: each IsQualifiedName message as an Invalid error at `field`."""
    if not isinstance(value, str):
        return [type_invalid(field, value, "must be a string")]
    return [invalid(field, value, m) for m in is_qualified_name(value)]


def _label(value: str, field: str) -> list[JsonDict]:
    return [invalid(field, value, m) for m in is_dns1123_label(value)]


def _subdomain(value: str, field: str) -> list[JsonDict]:
    return [invalid(field, value, m) for m in is_dns1123_subdomain(value)]


# validateLocalDescendingPath (subPath, subPathExpr, seccomp's localhostProfile)
_local_descending_path = validate_local_descending_path


def _label_selector(sel: Any, field: str, *, allow_invalid_values: bool = False) -> list[JsonDict]:
    """metav1 ValidateLabelSelector, with the matchExpressions values checked as label values
    (unless `allow_invalid_values`, LabelSelectorValidationOptions.AllowInvalidLabelValueInSelector)."""
    errs = validate_label_selector(sel, field)
    if allow_invalid_values or not isinstance(sel, dict):
        return errs
    for i, req in enumerate(sel.get("matchExpressions") or []):
        if not isinstance(req, dict):
            continue
        for j, value in enumerate(req.get("values") or []):
            if isinstance(value, str):
                errs.extend(invalid(f"{field}.matchExpressions[{i}].values[{j}]", value, m)
                            for m in is_valid_label_value(value))
    return errs


# ---- resource names and quantities (pkg/apis/core/helper) ---------------------------------------

_STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers",
})
_INTEGER_RESOURCES = frozenset({
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})
POD_LEVEL_RESOURCES = ("cpu", "memory")


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _is_extended(name: str) -> bool:
    """IsExtendedResourceName: a prefixed, non-native name that stays qualified as a quota
    resource (`requests.<name>`)."""
    if _is_native(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def _overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not _is_hugepages(name)


def _is_standard_resource(name: str) -> bool:
    return name in _STANDARD_RESOURCES or name.startswith("hugepages-") or name.startswith("requests.hugepages-")


def validate_resource_name(value: str, field: str) -> list[JsonDict]:
    """validateResourceName: a qualified name; an unprefixed one must be a standard resource."""
    errs = [invalid(field, value, m) for m in is_qualified_name(value)]
    if errs:
        return errs
    if "/" not in value and not _is_standard_resource(value):
        return [invalid(field, value, "must be a standard resource type or fully qualified")]
    return []


def validate_container_resource_name(value: str, field: str) -> list[JsonDict]:
    """validateContainerResourceName: cpu, memory, ephemeral-storage, hugepages-* or an
    extended resource (`example.com/foo`)."""
    errs = validate_resource_name(value, field)
    if "/" not in value:
        if value not in STANDARD_CONTAINER_RESOURCES and not _is_hugepages(value):
            errs.append(invalid(field, value, "must be a standard resource for containers"))
    elif not _is_native(value) and not _is_extended(value):
        errs.append(invalid(field, value, "doesn't follow extended resource name standard"))
    return errs


def validate_pod_resource_name(value: str, field: str) -> list[JsonDict]:
    """validatePodResourceName (pod-level resources): cpu or memory."""
    errs = validate_resource_name(value, field)
    if errs:
        return errs
    if value not in POD_LEVEL_RESOURCES:
        return [not_supported(field, value, POD_LEVEL_RESOURCES)]
    return []


def _quantity(name: str, q: Any, field: str) -> tuple[list[JsonDict], Fraction | None]:
    """ValidateResourceQuantityValue on a raw quantity: parsable, non-negative, an integer for
    integer (extended, quota count) resources."""
    try:
        v = parse_quantity(q)
    except (QuantityError, TypeError):
        return [invalid(field, q, _QUANTITY_MSG)], None
    errs: list[JsonDict] = []
    if v < 0:
        errs.append(invalid(field, canonical_quantity(q), "must be greater than or equal to 0"))
    if (name in _INTEGER_RESOURCES or _is_extended(name)) and (v * 1000) % 1000 != 0:
        errs.append(invalid(field, canonical_quantity(q), "must be an integer"))
    return errs, v


def _hugepage_value_errors(name: str, v: Fraction, raw: Any, field: str) -> list[JsonDict]:
    """validateResourceQuantityHugePageValue: a positive integer multiple of the page size."""
    try:
        size = parse_quantity(name[len("hugepages-"):])
    except QuantityError:
        size = Fraction(0)
    ok = size > 0 and size.denominator == 1 and math.ceil(v) % int(size) == 0
    if ok:
        return []
    text = canonical_quantity(raw)
    return [invalid(field, text, f"{text} is not positive integer multiple of {name}")]


def validate_resource_list_values(
    rl: Any, field: str, *, container: bool = True
) -> tuple[list[JsonDict], dict[str, Fraction]]:
    """A resource list's names (container resource names when `container`) and quantities at
    `field[<name>]`, with the parsed values."""
    errs: list[JsonDict] = []
    parsed: dict[str, Fraction] = {}
    if rl is None:
        return errs, parsed
    if not isinstance(rl, dict):
        return [type_invalid(field, rl, "must be an object")], parsed
    for name, q in rl.items():
        p = f"{field}[{name}]"
        if container:
            errs.extend(validate_container_resource_name(name, p))
        qerrs, v = _quantity(name, q, p)
        errs.extend(qerrs)
        if v is not None:
            parsed[name] = v
    return errs, parsed


def validate_resource_requirements(res: Any, field: str, *, pod_level: bool = False,
                                   claim_names: frozenset[str] = frozenset()) -> list[JsonDict]:
    """validateResourceRequirements: names, quantities, hugepage multiples, requests <= limits
    (== for extended resources and hugepages), hugepages only beside cpu or memory, claims."""
    if res is None:
        return []
    if not isinstance(res, dict):
        return [type_invalid(field, res, "must be an object")]
    name_fn = validate_pod_resource_name if pod_level else validate_container_resource_name
    lim_path, req_path = f"{field}.limits", f"{field}.requests"
    raw_lim = res.get("limits") or {}
    raw_req = res.get("requests") or {}
    errs: list[JsonDict] = []
    for key, raw in (("limits", raw_lim), ("requests", raw_req)):
        if not isinstance(raw, dict):
            errs.append(type_invalid(f"{field}.{key}", raw, "must be an object"))
    if errs:
        return errs
    cpu_mem = hugepages = False
    limits: dict[str, Fraction] = {}
    for name, q in raw_lim.items():
        p = f"{lim_path}[{name}]"
        errs.extend(name_fn(name, p))
        qerrs, v = _quantity(name, q, p)
        errs.extend(qerrs)
        if v is not None:
            limits[name] = v
        if _is_hugepages(name):
            hugepages = True
            if v is not None:
                errs.extend(_hugepage_value_errors(name, v, q, p))
        cpu_mem = cpu_mem or name in QOS_RESOURCES
    for name, q in raw_req.items():
        p = f"{req_path}[{name}]"
        errs.extend(name_fn(name, p))
        qerrs, v = _quantity(name, q, p)
        errs.extend(qerrs)
        if name in raw_lim:
            lim = limits.get(name)
            if v is not None and lim is not None:
                if v != lim and not _overcommit_allowed(name):
                    errs.append(invalid(req_path, canonical_quantity(q),
                                        f"must be equal to {name} limit of {canonical_quantity(raw_lim[name])}"))
                elif v > lim:
                    errs.append(invalid(req_path, canonical_quantity(q), f"must be less than or equal to {name} "
                                        f"limit of {canonical_quantity(raw_lim[name])}"))
        elif not _overcommit_allowed(name):
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
        if _is_hugepages(name):
            hugepages = True
            if v is not None:
                errs.extend(_hugepage_value_errors(name, v, q, p))
        cpu_mem = cpu_mem or name in QOS_RESOURCES
    if hugepages and not cpu_mem:
        errs.append(forbidden(field, "HugePages require cpu or memory"))
    errs.extend(_validate_resource_claim_names(res.get("claims"), claim_names, f"{field}.claims"))
    return errs


def _validate_resource_claim_names(claims: Any, pod_claims: frozenset[str], field: str) -> list[JsonDict]:
    """validateResourceClaimNames: each claim names an entry of spec.resourceClaims, once."""
    errs: list[JsonDict] = []
    names: set[str] = set()
    for i, claim in enumerate(claims or []):
        p = f"{field}[{i}]"
        name = _str0(claim.get("name")) if isinstance(claim, dict) else ""
        if not name:
            errs.append(required(p, ""))
            continue
        request = _str0(claim.get("request"))
        if name in names:
            errs.append(duplicate(p, name))
        else:
            key = name
            if request:
                errs.extend(_label(request, f"{p}.request"))
                key += "/" + request
            if key in names:
                errs.append(duplicate(p, key))
            elif not request:
                errs.extend(duplicate(p, name) for k in sorted(names) if "/" in k and k.split("/", 1)[0] == name)
            names.add(key)
        if name not in pod_claims:
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += " which is empty" if not pod_claims else ": " + ", ".join(sorted(pod_claims))
            errs.append(cause(p, f'Not found: {go_value(name)}: {detail}', "FieldValueNotFound"))
    return errs



def _not_found(field: str, value: Any, detail: str = "") -> JsonDict:
    msg = f"Not found: {go_value(value)}"
    return cause(field, f"{msg}: {detail}" if detail else msg, "FieldValueNotFound")


# ---- containers -----------------------------------------------------------------------------------


def validate_container_ports(ports: Any, field: str) -> list[JsonDict]:
    """validateContainerPorts: unique IANA port names, ports in 1-65535, a known protocol."""
    if ports is None:
        return []
    if not isinstance(ports, list):
        return [type_invalid(field, ports, "must be an array")]
    errs: list[JsonDict] = []
    names: set[str] = set()
    for i, p in enumerate(ports):
        pp = f"{field}[{i}]"
        if not isinstance(p, dict):
            errs.append(type_invalid(pp, p, "must be an object"))
            continue
        name = p.get("name")
        if name:
            if not isinstance(name, str):
                errs.append(type_invalid(f"{pp}.name", name, "must be a string"))
            elif msgs := is_valid_port_name(name):
                errs.extend(invalid(f"{pp}.name", name, m) for m in msgs)
            elif name in names:
                errs.append(duplicate(f"{pp}.name", name))
            else:
                names.add(name)
        cp = p.get("containerPort")
        if cp in (0, None):
            errs.append(required(f"{pp}.containerPort", ""))
        else:
            errs.extend(invalid(f"{pp}.containerPort", cp, m) for m in is_valid_port_num(cp))
        hp = p.get("hostPort")
        if hp not in (0, None):
            errs.extend(invalid(f"{pp}.hostPort", hp, m) for m in is_valid_port_num(hp))
        proto = p.get("protocol")
        if not proto:
            errs.append(required(f"{pp}.protocol", ""))
        elif proto not in PROTOCOLS:
            errs.append(not_supported(f"{pp}.protocol", proto, PROTOCOLS))
    return errs


def _key_selector(ref: JsonDict, field: str) -> list[JsonDict]:
    """validateConfigMapKeySelector / validateSecretKeySelector."""
    name = _str0(ref.get("name"))
    errs = _subdomain(name, f"{field}.name")
    key = _str0(ref.get("key"))
    if not key:
        errs.append(required(f"{field}.key", ""))
    else:
        errs.extend(invalid(f"{field}.key", key, m) for m in is_config_map_key(key))
    return errs


def validate_env(env: Any, field: str, *, relaxed: bool = True) -> list[JsonDict]:
    """ValidateEnv: names (relaxed: printable ASCII but '=', as RelaxedEnvironmentVariableValidation
    does, on by default since v1.32; else C identifiers with '.' and '-') and valueFrom."""
    if env is None:
        return []
    if not isinstance(env, list):
        return [type_invalid(field, env, "must be an array")]
    errs: list[JsonDict] = []
    for i, ev in enumerate(env):
        p = f"{field}[{i}]"
        if not isinstance(ev, dict):
            errs.append(type_invalid(p, ev, "must be an object"))
            continue
        name = ev.get("name")
        if not name:
            errs.append(required(f"{p}.name", ""))
        elif not isinstance(name, str):
            errs.append(type_invalid(f"{p}.name", name, "must be a string"))
        else:
            msgs = is_relaxed_env_var_name(name) if relaxed else is_env_var_name(name)
            errs.extend(invalid(f"{p}.name", name, m) for m in msgs)
        source = ev.get("valueFrom")
        if source is None:
            continue
        vp = f"{p}.valueFrom"
        if not isinstance(source, dict):
            errs.append(type_invalid(vp, source, "must be an object"))
            continue
        count = 0
        for key, check in (("fieldRef", object_field_selector), ("resourceFieldRef", resource_field_selector),
                           ("configMapKeyRef", _key_selector), ("secretKeyRef", _key_selector)):
            ref = source.get(key)
            if ref is not None:
                count += 1
                errs.extend(check(ref if isinstance(ref, dict) else {}, f"{vp}.{key}"))
        if count == 0:
            errs.append(invalid(vp, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` "
                                "or `secretKeyRef`"))
        elif ev.get("value"):
            errs.append(invalid(vp, "", "may not be specified when `value` is not empty"))
        elif count > 1:
            errs.append(invalid(vp, "", "may not have more than one field specified at a time"))
    return errs


def validate_env_from(sources: Any, field: str, *, relaxed: bool = True) -> list[JsonDict]:
    """ValidateEnvFrom: a prefix that is an env var name, exactly one of configMapRef/secretRef."""
    if sources is None:
        return []
    if not isinstance(sources, list):
        return [type_invalid(field, sources, "must be an array")]
    errs: list[JsonDict] = []
    for i, src in enumerate(sources):
        p = f"{field}[{i}]"
        if not isinstance(src, dict):
            errs.append(type_invalid(p, src, "must be an object"))
            continue
        prefix = _str0(src.get("prefix"))
        if prefix:
            msgs = is_relaxed_env_var_name(prefix) if relaxed else is_env_var_name(prefix)
            errs.extend(invalid(f"{p}.prefix", prefix, m) for m in msgs)
        count = 0
        for key in ("configMapRef", "secretRef"):
            ref = src.get(key)
            if ref is None:
                continue
            count += 1
            name = _str0(ref.get("name")) if isinstance(ref, dict) else ""
            if not name:
                errs.append(required(f"{p}.{key}.name", ""))
            else:
                probe = name[:-1] if name.endswith("-") else name  # a generate-name prefix may end in '-'
                errs.extend(invalid(f"{p}.{key}.name", name, m) for m in is_dns1123_subdomain(probe))
        if count == 0:
            errs.append(invalid(field, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif count > 1:
            errs.append(invalid(field, "", "may not have more than one field specified at a time"))
    return errs


_MOUNT_PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")
_RECURSIVE_READ_ONLY = ("Disabled", "Enabled", "IfPossible")


def validate_volume_mounts(mounts: Any, volumes: dict[str, JsonDict], container: JsonDict | None, field: str,
                           devices: dict[str, str] | None = None) -> list[JsonDict]:
    """ValidateVolumeMounts: a known volume, a unique mountPath, safe subPath(Expr), the
    propagation a container may use, recursiveReadOnly's preconditions."""
    if mounts is None:
        return []
    if not isinstance(mounts, list):
        return [type_invalid(field, mounts, "must be an array")]
    devices = devices or {}
    errs: list[JsonDict] = []
    mountpoints: set[str] = set()
    for i, m in enumerate(mounts):
        mp = f"{field}[{i}]"
        if not isinstance(m, dict):
            errs.append(type_invalid(mp, m, "must be an object"))
            continue
        name, path = _str0(m.get("name")), _str0(m.get("mountPath"))
        if not name:
            errs.append(required(f"{mp}.name", ""))
        if name not in volumes:
            errs.append(_not_found(f"{mp}.name", name))
        if not path:
            errs.append(required(f"{mp}.mountPath", ""))
        if path in mountpoints:
            errs.append(invalid(f"{mp}.mountPath", path, "must be unique"))
        mountpoints.add(path)
        if name in devices:
            errs.append(invalid(f"{mp}.name", name, "must not already exist in volumeDevices"))
        if path in devices.values():
            errs.append(invalid(f"{mp}.mountPath", path, "must not already exist as a path in volumeDevices"))
        sub, expr = _str0(m.get("subPath")), _str0(m.get("subPathExpr"))
        if isinstance(volumes.get(name), dict) and volumes[name].get("image") is not None:
            if sub:
                errs.append(invalid(f"{mp}.subPath", sub, "not allowed in image volume sources"))
            if expr:
                errs.append(invalid(f"{mp}.subPathExpr", expr, "not allowed in image volume sources"))
        if sub:
            errs.extend(_local_descending_path(sub, f"{field}.subPath"))
        if expr:
            if sub:
                errs.append(invalid(f"{mp}.subPathExpr", expr, "subPathExpr and subPath are mutually exclusive"))
            errs.extend(_local_descending_path(expr, f"{field}.subPathExpr"))
        propagation = m.get("mountPropagation")
        if propagation is not None:
            pp = f"{field}.mountPropagation"
            if propagation not in _MOUNT_PROPAGATIONS:
                errs.append(not_supported(pp, propagation, _MOUNT_PROPAGATIONS))
            if container is not None:
                sc = container.get("securityContext")
                privileged = isinstance(sc, dict) and sc.get("privileged") is True
                if propagation == "Bidirectional" and not privileged:
                    errs.append(forbidden(pp, "Bidirectional mount propagation is available only to privileged "
                                          "containers"))
        rro = m.get("recursiveReadOnly")
        if rro is not None:
            rp = f"{field}.recursiveReadOnly"
            if rro in ("Enabled", "IfPossible"):
                if not m.get("readOnly"):
                    errs.append(forbidden(rp, "may only be specified when readOnly is true"))
                if propagation is not None and propagation != "None":
                    errs.append(forbidden(rp, "may only be specified when mountPropagation is None or not specified"))
            elif rro != "Disabled":
                errs.append(not_supported(rp, rro, _RECURSIVE_READ_ONLY))
    return errs


def _block_volume(volume: Any) -> bool:
    return isinstance(volume, dict) and (volume.get("persistentVolumeClaim") is not None
                                         or volume.get("ephemeral") is not None)


def validate_volume_devices(devices: Any, mounts: dict[str, str], volumes: dict[str, JsonDict],
                            field: str) -> list[JsonDict]:
    """ValidateVolumeDevices: a PVC (or generic ephemeral) volume, unique name and path, no
    backsteps, no overlap with the container's volumeMounts."""
    if devices is None:
        return []
    if not isinstance(devices, list):
        return [type_invalid(field, devices, "must be an array")]
    errs: list[JsonDict] = []
    paths: set[str] = set()
    names: set[str] = set()
    for i, d in enumerate(devices):
        dp = f"{field}[{i}]"
        if not isinstance(d, dict):
            errs.append(type_invalid(dp, d, "must be an object"))
            continue
        name, path = _str0(d.get("name")), _str0(d.get("devicePath"))
        matched = name in volumes
        if not name:
            errs.append(required(f"{dp}.name", ""))
        if name in names:
            errs.append(invalid(f"{dp}.name", name, "must be unique"))
        if matched and not _block_volume(volumes[name]):
            errs.append(invalid(f"{dp}.name", name, "can only use volume source type of PersistentVolumeClaim "
                                "or Ephemeral for block mode"))
        if not matched:
            errs.append(_not_found(f"{dp}.name", name))
        if not path:
            errs.append(required(f"{dp}.devicePath", ""))
        if path in paths:
            errs.append(invalid(f"{dp}.devicePath", path, "must be unique"))
        if path and ".." in path.split("/"):
            errs.append(invalid(f"{dp}.devicePath", path, "can not contain backsteps ('..')"))
        else:
            paths.add(path)
        if name in mounts:
            errs.append(invalid(f"{dp}.name", name, "must not already exist in volumeMounts"))
        if path in mounts.values():
            errs.append(invalid(f"{dp}.devicePath", path, "must not already exist as a path in volumeMounts"))
        if name:
            names.add(name)
    return errs


def _port_num_or_name(port: Any, field: str) -> list[JsonDict]:
    """ValidatePortNumOrName: an IntOrString; a missing port is the int 0."""
    if isinstance(port, str):
        return [invalid(field, port, m) for m in is_valid_port_name(port)]
    value = port if _is_int(port) else 0
    return [invalid(field, value, m) for m in is_valid_port_num(value)]


def validate_handler(handler: JsonDict, field: str, grace: int | None, *, probe: bool) -> list[JsonDict]:
    """validateHandler: exactly one of exec, httpGet, tcpSocket, grpc (probes) or sleep
    (lifecycle hooks), each valid."""
    kinds = ("exec", "httpGet", "tcpSocket", "grpc") if probe else ("exec", "httpGet", "tcpSocket", "sleep")
    errs: list[JsonDict] = []
    count = 0
    for kind in kinds:
        action = handler.get(kind)
        if action is None:
            continue
        kp = f"{field}.{kind}"
        if count:
            errs.append(forbidden(kp, "may not specify more than 1 handler type"))
            continue
        count += 1
        action = action if isinstance(action, dict) else {}
        if kind == "exec":
            if not action.get("command"):
                errs.append(required(f"{kp}.command", ""))
        elif kind == "httpGet":
            if not action.get("path"):
                errs.append(required(f"{kp}.path", ""))
            errs.extend(_port_num_or_name(action.get("port"), f"{kp}.port"))
            scheme = _str0(action.get("scheme"))
            if scheme not in ("HTTP", "HTTPS"):
                errs.append(not_supported(f"{kp}.scheme", scheme, ("HTTP", "HTTPS")))
            for header in action.get("httpHeaders") or []:
                hname = _str0(header.get("name")) if isinstance(header, dict) else ""
                if not _HTTP_HEADER_RE.match(hname):
                    errs.append(invalid(f"{kp}.httpHeaders", hname, _HTTP_HEADER_MSG))
        elif kind == "tcpSocket":
            errs.extend(_port_num_or_name(action.get("port"), f"{kp}.port"))
        elif kind == "grpc":
            errs.extend(_port_num_or_name(_int0(action.get("port")), f"{kp}.port"))
        else:
            seconds = _int0(action.get("seconds"))
            if grace is not None and (seconds < 0 or seconds > grace):
                errs.append(invalid(kp, seconds, "must be non-negative and less than terminationGracePeriodSeconds "
                                    f"({grace})"))
    if count == 0:
        errs.append(required(field, "must specify a handler type"))
    return errs


_PROBE_COUNTERS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                   "failureThreshold")


def validate_probe(probe: Any, field: str, grace: int | None = 30, *, kind: str = "") -> list[JsonDict]:
    """validateProbe (+ validateLivenessProbe / validateReadinessProbe / validateStartupProbe by
    `kind`): one handler, non-negative counters, a positive probe grace period; liveness and
    startup probes need successThreshold 1, readiness probes no terminationGracePeriodSeconds."""
    if probe is None:
        return []
    if not isinstance(probe, dict):
        return [type_invalid(field, probe, "must be an object")]
    errs = validate_handler(probe, field, grace, probe=True)
    for key in _PROBE_COUNTERS:
        value = _int0(probe.get(key))
        if value < 0:
            errs.append(invalid(f"{field}.{key}", value, "must be greater than or equal to 0"))
    tgps = probe.get("terminationGracePeriodSeconds")
    if tgps is not None and _int0(tgps) <= 0:
        errs.append(invalid(f"{field}.terminationGracePeriodSeconds", tgps, "must be greater than 0"))
    if kind in ("liveness", "startup") and _int0(probe.get("successThreshold")) != 1:
        errs.append(invalid(f"{field}.successThreshold", _int0(probe.get("successThreshold")), "must be 1"))
    if kind == "readiness" and tgps is not None:
        errs.append(invalid(f"{field}.terminationGracePeriodSeconds", tgps, "must not be set for readinessProbes"))
    return errs


def validate_lifecycle(lifecycle: Any, field: str, grace: int | None = 30) -> list[JsonDict]:
    """validateLifecycle: postStart and preStop handlers."""
    if not isinstance(lifecycle, dict):
        return []
    errs: list[JsonDict] = []
    for hook in ("postStart", "preStop"):
        handler = lifecycle.get(hook)
        if handler is not None:
            errs.extend(validate_handler(handler if isinstance(handler, dict) else {}, f"{field}.{hook}", grace, probe=False))
    return errs


_RESIZE_RESOURCES = ("cpu", "memory")
_RESIZE_POLICIES = ("NotRequired", "RestartContainer")


def validate_resize_policy(policies: Any, field: str, pod_restart_policy: str) -> list[JsonDict]:
    """validateResizePolicy: cpu/memory once each, a known policy, NotRequired for Never pods."""
    if not isinstance(policies, list):
        return []
    errs: list[JsonDict] = []
    seen: set[str] = set()
    for i, p in enumerate(policies):
        p = p if isinstance(p, dict) else {}
        name, policy = _str0(p.get("resourceName")), _str0(p.get("restartPolicy"))
        if name in seen:
            errs.append(duplicate(f"{field}[{i}]", name))
        seen.add(name)
        if not name:
            errs.append(required(field, ""))
        elif name not in _RESIZE_RESOURCES:
            errs.append(not_supported(field, name, _RESIZE_RESOURCES))
        if not policy:
            errs.append(required(field, ""))
        elif policy not in _RESIZE_POLICIES:
            errs.append(not_supported(field, policy, _RESIZE_POLICIES))
        if pod_restart_policy == "Never" and policy != "NotRequired":
            errs.append(invalid(field, policy, "must be 'NotRequired' when `restartPolicy` is 'Never'"))
    return errs


_SECCOMP_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
_APPARMOR_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")


def _seccomp_profile(sp: Any, field: str) -> list[JsonDict]:
    if not isinstance(sp, dict):
        return []
    errs: list[JsonDict] = []
    kind = _str0(sp.get("type"))
    if not kind:
        errs.append(required(f"{field}.type", "type is required when seccompProfile is set"))
    elif kind not in _SECCOMP_TYPES:
        errs.append(not_supported(f"{field}.type", kind, _SECCOMP_TYPES))
    profile = sp.get("localhostProfile")
    if kind == "Localhost":
        if profile is None:
            errs.append(required(f"{field}.localhostProfile", "must be set when seccomp type is Localhost"))
        else:
            errs.extend(_local_descending_path(_str0(profile), f"{field}.localhostProfile"))
    elif profile is not None:
        errs.append(invalid(f"{field}.localhostProfile", sp, "can only be set when seccomp type is Localhost"))
    return errs


def _apparmor_profile(profile: Any, field: str) -> list[JsonDict]:
    if not isinstance(profile, dict):
        return []
    kind = _str0(profile.get("type"))
    local = profile.get("localhostProfile")
    errs: list[JsonDict] = []
    if kind == "Localhost":
        if local is None:
            errs.append(required(f"{field}.localhostProfile", "must be set when AppArmor type is Localhost"))
        else:
            local = _str0(local)
            if local.strip() != local:
                errs.append(invalid(f"{field}.localhostProfile", local, "must not be padded with whitespace"))
            elif not local:
                errs.append(required(f"{field}.localhostProfile", "must be set when AppArmor type is Localhost"))
            if len(local) > 4095:
                errs.append(too_long(f"{field}.localhostProfile", 4095))
    elif kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            errs.append(invalid(f"{field}.localhostProfile", local, "can only be set when AppArmor type is Localhost"))
    elif not kind:
        errs.append(required(f"{field}.type", "type is required when appArmorProfile is set"))
    else:
        errs.append(not_supported(f"{field}.type", kind, _APPARMOR_TYPES))
    return errs


def _id_errors(value: Any, field: str) -> list[JsonDict]:
    """IsValidUserID / IsValidGroupID: 0..2147483647."""
    if _is_int(value) and 0 <= value <= _MAX_INT32:
        return []
    return [invalid(field, value, inclusive_range_msg(0, _MAX_INT32))]


def validate_security_context(sc: Any, field: str) -> list[JsonDict]:
    """ValidateSecurityContext (a container's); privileged containers are allowed (the cluster
    runs with allow-privileged, as K3s does)."""
    if not isinstance(sc, dict):
        return []
    errs: list[JsonDict] = []
    for key in ("runAsUser", "runAsGroup"):
        if sc.get(key) is not None:
            errs.extend(_id_errors(sc[key], f"{field}.{key}"))
    proc = sc.get("procMount")
    if proc is not None and proc not in ("Default", "Unmasked"):
        errs.append(not_supported(f"{field}.procMount", proc, ("Default", "Unmasked")))
    errs.extend(_seccomp_profile(sc.get("seccompProfile"), f"{field}.seccompProfile"))
    if sc.get("allowPrivilegeEscalation") is False:
        if sc.get("privileged") is True:
            errs.append(invalid(field, sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
        caps = sc.get("capabilities")
        for cap in (caps.get("add") or []) if isinstance(caps, dict) else []:
            if cap == "CAP_SYS_ADMIN":
                errs.append(invalid(field, sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` "
                                    "CAP_SYS_ADMIN"))
    errs.extend(_apparmor_profile(sc.get("appArmorProfile"), f"{field}.appArmorProfile"))
    return errs


def _validate_container_common(c: JsonDict, field: str, volumes: dict[str, JsonDict],
                               restart_policy: str, claims: frozenset[str] = frozenset()) -> list[JsonDict]:
    """validateContainerCommon: what every container kind shares."""
    errs: list[JsonDict] = []
    name = c.get("name")
    if not name:
        errs.append(required(f"{field}.name", ""))
    elif not isinstance(name, str):
        errs.append(type_invalid(f"{field}.name", name, "must be a string"))
    else:
        errs.extend(_label(name, f"{field}.name"))
    if not c.get("image"):
        errs.append(required(f"{field}.image", ""))
    tmp = c.get("terminationMessagePolicy")
    if not tmp:
        errs.append(required(f"{field}.terminationMessagePolicy", ""))
    elif tmp not in TERMINATION_MESSAGE_POLICIES:
        errs.append(not_supported(f"{field}.terminationMessagePolicy", tmp, TERMINATION_MESSAGE_POLICIES))
    mounts = [m for m in c.get("volumeMounts") or [] if isinstance(m, dict)] \
        if isinstance(c.get("volumeMounts"), list) else []
    devices = [d for d in c.get("volumeDevices") or [] if isinstance(d, dict)] \
        if isinstance(c.get("volumeDevices"), list) else []
    mount_map = {_str0(m.get("name")): _str0(m.get("mountPath")) for m in mounts}
    device_map = {_str0(d.get("name")): _str0(d.get("devicePath")) for d in devices}
    if "ports" in c:
        errs.extend(validate_container_ports(c.get("ports"), f"{field}.ports"))
    if "env" in c:
        errs.extend(validate_env(c.get("env"), f"{field}.env"))
    if "envFrom" in c:
        errs.extend(validate_env_from(c.get("envFrom"), f"{field}.envFrom"))
    if "volumeMounts" in c:
        errs.extend(validate_volume_mounts(c.get("volumeMounts"), volumes, c, f"{field}.volumeMounts", device_map))
    if "volumeDevices" in c:
        errs.extend(validate_volume_devices(c.get("volumeDevices"), mount_map, volumes, f"{field}.volumeDevices"))
    pull = c.get("imagePullPolicy")
    if not pull:
        errs.append(required(f"{field}.imagePullPolicy", ""))
    elif pull not in PULL_POLICIES:
        errs.append(not_supported(f"{field}.imagePullPolicy", pull, PULL_POLICIES))
    if "resources" in c:
        errs.extend(validate_resource_requirements(c.get("resources"), f"{field}.resources", claim_names=claims))
    if "resizePolicy" in c:
        errs.extend(validate_resize_policy(c.get("resizePolicy"), f"{field}.resizePolicy", restart_policy))
    if "securityContext" in c:
        errs.extend(validate_security_context(c.get("securityContext"), f"{field}.securityContext"))
    return errs


def _host_port_conflicts(containers: list[Any], field: str) -> list[JsonDict]:
    """checkHostPortConflicts: a protocol/hostIP/hostPort used once across the containers."""
    errs: list[JsonDict] = []
    seen: set[str] = set()
    for ci, c in enumerate(containers):
        if not isinstance(c, dict) or not isinstance(c.get("ports"), list):
            continue
        for pi, p in enumerate(c["ports"]):
            if not isinstance(p, dict) or p.get("hostPort") in (0, None):
                continue
            key = f"{_str0(p.get('protocol'))}/{_str0(p.get('hostIP'))}/{p.get('hostPort')}"
            if key in seen:
                errs.append(duplicate(f"{field}[{ci}].ports[{pi}].hostPort", key))
            seen.add(key)
    return errs


def _probes_and_lifecycle(c: JsonDict, field: str, grace: int | None) -> list[JsonDict]:
    errs: list[JsonDict] = []
    if c.get("lifecycle") is not None:
        errs.extend(validate_lifecycle(c.get("lifecycle"), f"{field}.lifecycle", grace))
    for key, kind in (("livenessProbe", "liveness"), ("readinessProbe", "readiness"), ("startupProbe", "startup")):
        errs.extend(validate_probe(c.get(key), f"{field}.{key}", grace, kind=kind))
    return errs


def validate_containers(containers: Any, field: str, volumes: dict[str, JsonDict] | None = None, *,
                        grace: int | None = 30, restart_policy: str = "Always",
                        claims: frozenset[str] = frozenset()) -> list[JsonDict]:
    """validateContainers: at least one; each valid with a unique name, probes and hooks, no
    restartPolicy; host ports unique across them."""
    if not containers:
        return [required(field, "")]
    if not isinstance(containers, list):
        return [type_invalid(field, containers, "must be an array")]
    volumes = volumes or {}
    errs: list[JsonDict] = []
    names: set[Any] = set()
    for i, c in enumerate(containers):
        p = f"{field}[{i}]"
        if not isinstance(c, dict):
            errs.append(type_invalid(p, c, "must be an object"))
            continue
        errs.extend(_validate_container_common(c, p, volumes, restart_policy, claims))
        name = c.get("name")
        if isinstance(name, str) or name is None:
            if (name or "") in names:
                errs.append(duplicate(f"{p}.name", name or ""))
            names.add(name or "")
        errs.extend(_probes_and_lifecycle(c, p, grace))
        if c.get("restartPolicy") is not None:
            errs.append(forbidden(f"{p}.restartPolicy", "may not be set for non-init containers"))
    errs.extend(_host_port_conflicts(containers, field))
    return errs


_INIT_FORBIDDEN_MSG = "may not be set for init containers without restartPolicy=Always"


def validate_init_containers(init: Any, containers: Any, field: str, volumes: dict[str, JsonDict] | None = None,
                             *, grace: int | None = 30, restart_policy: str = "Always",
                             allow_sidecar_resize_policy: bool = True,
                             claims: frozenset[str] = frozenset()) -> list[JsonDict]:
    """validateInitContainers: each valid, named apart from every other container; a sidecar
    (restartPolicy Always) may have probes and hooks, other init containers not."""
    if init is None:
        return []
    if not isinstance(init, list):
        return [type_invalid(field, init, "must be an array")]
    volumes = volumes or {}
    names = {c.get("name") for c in containers if isinstance(c, dict)} if isinstance(containers, list) else set()
    errs: list[JsonDict] = []
    for i, c in enumerate(init):
        p = f"{field}[{i}]"
        if not isinstance(c, dict):
            errs.append(type_invalid(p, c, "must be an object"))
            continue
        errs.extend(_validate_container_common(c, p, volumes, restart_policy, claims))
        policy = c.get("restartPolicy")
        if policy is not None and policy != "Always":
            errs.append(not_supported(f"{p}.restartPolicy", policy, ("Always",)))
        name = c.get("name")
        if name in names:
            errs.append(duplicate(f"{p}.name", name))
        elif name:
            names.add(name)
        # each init container on its own (they run one by one): its index in the error is 0
        errs.extend(_host_port_conflicts([c], field))
        if policy == "Always":
            errs.extend(_probes_and_lifecycle(c, p, grace))
        else:
            for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if c.get(key) is not None:
                    errs.append(forbidden(f"{p}.{key}", _INIT_FORBIDDEN_MSG))
        if not allow_sidecar_resize_policy and c.get("resizePolicy"):
            errs.append(invalid(f"{p}.resizePolicy", c.get("resizePolicy"), "must not be set for init containers"))
    return errs


def validate_containers_only_for_pod(spec: JsonDict, field: str = "spec") -> list[JsonDict]:
    """validateContainersOnlyForPod: a pod's (not a template's) images have no surrounding
    whitespace."""
    errs: list[JsonDict] = []
    for key in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(key) or [] if isinstance(spec.get(key), list) else []):
            image = c.get("image") if isinstance(c, dict) else None
            if isinstance(image, str) and image != image.strip():
                errs.append(invalid(f"{field}.{key}[{i}].image", image, "must not have leading or trailing whitespace"))
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
    _, volumes = _validate_volumes(spec.get("volumes"), "spec.volumes")
    restart_policy = _str0(spec.get("restartPolicy"))
    old_names = {c.get("name") for c in old_list}
    for i, c in enumerate(new_list):
        path = f"{field}[{i}]"
        if c.get("name") in old_names:
            names.add(str(c.get("name")))
            continue
        allowed = {k: v for k, v in c.items() if k not in _EPHEMERAL_FORBIDDEN and k not in ("resources", "restartPolicy")}
        errs.extend(_validate_container_common(allowed, path, volumes, restart_policy))
        name = c.get("name")
        if name in names:
            errs.append(duplicate(f"{path}.name", name))
        elif isinstance(name, str):
            names.add(name)
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
            errs.append(_not_found(f"{path}.targetContainerName", target))
    return errs



# ---- scheduling constraints -----------------------------------------------------------------------


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
                errs.append(invalid(f"{p}.operator", value, "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(f"{p}.operator", op, TOLERATION_OPERATORS))
        if effect and effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{p}.effect", effect, TAINT_EFFECTS))
    return errs


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


def _validate_node_selector_requirement(rq: Any, field: str, *, allow_invalid_values: bool = False
                                        ) -> list[JsonDict]:
    """ValidateNodeSelectorRequirement: values by operator, a label key, label values (unless
    `allow_invalid_values`: preferred terms, or an update of a pod that already had them)."""
    if not isinstance(rq, dict):
        return [type_invalid(field, rq, "must be an object")]
    errs: list[JsonDict] = []
    op = rq.get("operator") or ""
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
    errs.extend(validate_label_name(rq.get("key", ""), f"{field}.key"))
    if not allow_invalid_values and isinstance(values, list):
        for j, value in enumerate(values):
            if isinstance(value, str):
                errs.extend(invalid(f"{field}.values[{j}]", value, m) for m in is_valid_label_value(value))
    return errs


def _validate_node_field_selector_requirement(rq: Any, field: str) -> list[JsonDict]:
    """ValidateNodeFieldSelectorRequirement: `metadata.name` In/NotIn exactly one node name."""
    if not isinstance(rq, dict):
        return [type_invalid(field, rq, "must be an object")]
    errs: list[JsonDict] = []
    op = rq.get("operator") or ""
    values = rq.get("values") or []
    if op in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(required(f"{field}.values",
                                 "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
    else:
        errs.append(invalid(f"{field}.operator", op, "not a valid selector operator"))
    key = rq.get("key") or ""
    if key != "metadata.name":
        errs.append(invalid(f"{field}.key", key, "not a valid field selector key"))
    else:
        for j, value in enumerate(values):
            errs.extend(_subdomain(_str0(value), f"{field}.values[{j}]"))
    return errs


def _validate_node_selector_term(term: Any, field: str, *, allow_invalid_values: bool = False) -> list[JsonDict]:
    if not isinstance(term, dict):
        return [type_invalid(field, term, "must be an object")]
    errs: list[JsonDict] = []
    for j, rq in enumerate(term.get("matchExpressions") or []):
        errs.extend(_validate_node_selector_requirement(rq, f"{field}.matchExpressions[{j}]",
                                                        allow_invalid_values=allow_invalid_values))
    for j, rq in enumerate(term.get("matchFields") or []):
        errs.extend(_validate_node_field_selector_requirement(rq, f"{field}.matchFields[{j}]"))
    return errs


def _label_keys(keys: Any, selector: Any, field: str) -> list[JsonDict]:
    """validateLabelKeys: matchLabelKeys / mismatchLabelKeys need a labelSelector and label keys."""
    if not keys:
        return []
    if selector is None:
        return [forbidden(field, "must not be specified when labelSelector is not set")]
    errs: list[JsonDict] = []
    for i, key in enumerate(keys):
        errs.extend(validate_label_name(key, f"{field}[{i}]"))
    return errs


def _match_label_keys(term: JsonDict, field: str) -> list[JsonDict]:
    """validateMatchLabelKeysAndMismatchLabelKeys (pod affinity terms). The label selector
    already holds the requirements the create merged from matchLabelKeys, so a key found twice in
    it was also set by the user. Upstream reports that at `<term>[<i>]` (sic)."""
    match_keys = [k for k in term.get("matchLabelKeys") or [] if isinstance(k, str)]
    mismatch_keys = [k for k in term.get("mismatchLabelKeys") or [] if isinstance(k, str)]
    selector = term.get("labelSelector")
    errs = _label_keys(term.get("matchLabelKeys"), selector, f"{field}.matchLabelKeys")
    errs.extend(_label_keys(term.get("mismatchLabelKeys"), selector, f"{field}.mismatchLabelKeys"))
    if isinstance(selector, dict):
        index = {k: i for i, k in enumerate(match_keys)}
        seen = set((selector.get("matchLabels") or {}).keys()) if isinstance(selector.get("matchLabels"), dict) \
            else set()
        for req in selector.get("matchExpressions") or []:
            key = req.get("key") if isinstance(req, dict) else None
            if key in index and key in seen:
                errs.append(invalid(f"{field}[{index[key]}]", key, "exists in both matchLabelKeys and labelSelector"))
            seen.add(key)
    mismatch = set(mismatch_keys)
    for i, key in enumerate(match_keys):
        if key in mismatch:
            errs.append(invalid(f"{field}.matchLabelKeys[{i}]", key, "exists in both matchLabelKeys and mismatchLabelKeys"))
    return errs


def _validate_pod_affinity_term(term: Any, field: str, *, allow_invalid_values: bool = False) -> list[JsonDict]:
    if not isinstance(term, dict):
        return [type_invalid(field, term, "must be an object")]
    errs = _label_selector(term.get("labelSelector"), f"{field}.labelSelector",
                           allow_invalid_values=allow_invalid_values)
    errs.extend(_label_selector(term.get("namespaceSelector"), f"{field}.namespaceSelector",
                                allow_invalid_values=allow_invalid_values))
    for ns in term.get("namespaces") or []:
        errs.extend(_label(_str0(ns), f"{field}.namespace"))
    errs.extend(_match_label_keys(term, field))
    key = term.get("topologyKey") or ""
    if not key:
        errs.append(required(f"{field}.topologyKey", "can not be empty"))
    errs.extend(validate_label_name(key, f"{field}.topologyKey"))
    return errs


def _validate_weight(w: Any, field: str) -> list[JsonDict]:
    w = w if _is_int(w) else 0
    if not 1 <= w <= 100:
        return [invalid(field, w, "must be in the range 1-100")]
    return []


def validate_affinity(aff: Any, field: str, *, allow_invalid_node_affinity_values: bool = False,
                      allow_invalid_selector_values: bool = False) -> list[JsonDict]:
    """validateAffinity: node affinity (required terms with label values, preferred terms with
    weights) and pod (anti-)affinity terms."""
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
                errs.extend(_validate_node_selector_term(term, f"{rp}[{i}]",
                                                         allow_invalid_values=allow_invalid_node_affinity_values))
        for i, pref in enumerate(na.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            pp = f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            if not isinstance(pref, dict):
                errs.append(type_invalid(pp, pref, "must be an object"))
                continue
            errs.extend(_validate_weight(pref.get("weight"), f"{pp}.weight"))
            # preferred terms may name label values no node has (they only score)
            errs.extend(_validate_node_selector_term(pref.get("preference") or {}, f"{pp}.preference",
                                                     allow_invalid_values=True))
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = aff.get(kind)
        if not isinstance(pa, dict):
            continue
        base = f"{field}.{kind}"
        for i, term in enumerate(pa.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            errs.extend(_validate_pod_affinity_term(term, f"{base}.requiredDuringSchedulingIgnoredDuringExecution[{i}]",
                                                    allow_invalid_values=allow_invalid_selector_values))
        for i, w in enumerate(pa.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            wp = f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            if not isinstance(w, dict):
                errs.append(type_invalid(wp, w, "must be an object"))
                continue
            errs.extend(_validate_weight(w.get("weight"), f"{wp}.weight"))
            errs.extend(_validate_pod_affinity_term(w.get("podAffinityTerm") or {}, f"{wp}.podAffinityTerm",
                                                    allow_invalid_values=allow_invalid_selector_values))
    return errs


def validate_topology_spread(tscs: Any, field: str) -> list[JsonDict]:
    """validateTopologySpreadConstraints: maxSkew > 0, a topologyKey, a known action, each
    {topologyKey, whenUnsatisfiable} once (reported at the first of a pair), minDomains > 0 and
    only with DoNotSchedule, known node inclusion policies, matchLabelKeys beside a label
    selector, the selector itself."""
    if tscs is None:
        return []
    if not isinstance(tscs, list):
        return [type_invalid(field, tscs, "must be an array")]
    errs: list[JsonDict] = []
    for i, c in enumerate(tscs):
        p = f"{field}[{i}]"
        if not isinstance(c, dict):
            errs.append(type_invalid(p, c, "must be an object"))
            continue
        skew = _int0(c.get("maxSkew"))
        if skew <= 0:
            errs.append(invalid(f"{p}.maxSkew", skew, "must be greater than zero"))
        key = c.get("topologyKey") or ""
        if not key:
            errs.append(required(f"{p}.topologyKey", "can not be empty"))
        action = c.get("whenUnsatisfiable") or ""
        if action not in SCHEDULE_ACTIONS:
            errs.append(not_supported(f"{p}.whenUnsatisfiable", action, SCHEDULE_ACTIONS))
        for later in tscs[i + 1:]:
            if isinstance(later, dict) and (later.get("topologyKey") or "") == key \
                    and (later.get("whenUnsatisfiable") or "") == action:
                errs.append(duplicate(f"{p}.{{topologyKey, whenUnsatisfiable}}", f"{{{key}, {action}}}"))
                break
        md = c.get("minDomains")
        if md is not None:
            if _int0(md) <= 0:
                errs.append(invalid(f"{p}.minDomains", md, "must be greater than zero"))
            if action != "DoNotSchedule":
                errs.append(invalid(f"{p}.minDomains", md,
                                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"))
        for pol in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            v = c.get(pol)
            if v is not None and v not in INCLUSION_POLICIES:
                errs.append(not_supported(f"{p}.{pol}", v, ("Honor", "Ignore")))
        mlk = c.get("matchLabelKeys")
        selector = c.get("labelSelector")
        if mlk:
            mp = f"{p}.matchLabelKeys"
            keys: set[Any] = set()
            if isinstance(selector, dict):
                keys.update((selector.get("matchLabels") or {}).keys())
                keys.update(r.get("key") for r in selector.get("matchExpressions") or [] if isinstance(r, dict))
            else:
                errs.append(forbidden(mp, "must not be specified when labelSelector is not set"))
            for j, k in enumerate(mlk):
                errs.extend(validate_label_name(k, f"{mp}[{j}]"))
                if k in keys:
                    errs.append(invalid(f"{mp}[{j}]", k, "exists in both matchLabelKeys and labelSelector"))
        errs.extend(_label_selector(selector, f"{p}.labelSelector"))
    return errs


def validate_pod_dns_config(cfg: Any, policy: Any, field: str, *, relaxed_search: bool = True) -> list[JsonDict]:
    """validatePodDNSConfig: dnsPolicy None needs a config with a nameserver; at most 3
    nameservers (IPs), 32 search domains of 2048 characters in all (DNS subdomains; with
    RelaxedDNSSearchValidation, on by default since v1.33, '_' allowed and '.' alone), named
    options."""
    if policy == "None":
        if cfg is None:
            return [required(field, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not (cfg.get("nameservers") if isinstance(cfg, dict) else None):
            return [required(f"{field}.nameservers", "must provide at least one DNS nameserver when `dnsPolicy` is None")]
    if cfg is None:
        return []
    if not isinstance(cfg, dict):
        return [type_invalid(field, cfg, "must be an object")]
    errs: list[JsonDict] = []
    nameservers = cfg.get("nameservers") or []
    if len(nameservers) > 3:
        errs.append(invalid(f"{field}.nameservers", nameservers, "must not have more than 3 nameservers"))
    for i, ns in enumerate(nameservers):
        errs.extend(_valid_ip(ns, f"{field}.nameservers[{i}]"))
    searches = [s for s in cfg.get("searches") or [] if isinstance(s, str)]
    if len(searches) > 32:
        errs.append(invalid(f"{field}.searches", searches, "must not have more than 32 search paths"))
    if len(" ".join(searches)) > 2048:
        errs.append(invalid(f"{field}.searches", searches,
                            "must not have more than 2048 characters (including spaces) in the search list"))
    for i, search in enumerate(searches):
        sp = f"{field}.searches[{i}]"
        if relaxed_search:
            if search == ".":
                continue
            search = search.removesuffix(".")
            if len(search) > 253:
                errs.append(invalid(sp, search, max_len_msg(253)))
            if not _DNS1123_SUBDOMAIN_US_RE.match(search):
                errs.append(invalid(sp, search, _DNS1123_SUBDOMAIN_US_MSG))
        else:
            errs.extend(_subdomain(search.removesuffix("."), sp))
    for i, option in enumerate(cfg.get("options") or []):
        if not (option.get("name") if isinstance(option, dict) else None):
            errs.append(required(f"{field}.options[{i}]", "must not be empty"))
    return errs


def validate_scheduling_gates(gates: Any, field: str) -> list[JsonDict]:
    """validateSchedulingGates: qualified names, each once (errors at the gate's index)."""
    if not isinstance(gates, list):
        return []
    errs: list[JsonDict] = []
    seen: set[Any] = set()
    for i, g in enumerate(gates):
        name = g.get("name") if isinstance(g, dict) else None
        errs.extend(_qualified(name or "", f"{field}[{i}]"))
        if name in seen:
            errs.append(duplicate(f"{field}[{i}]", name))
        seen.add(name)
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




# ---- the pod spec ----------------------------------------------------------------------------------

def _validate_volumes(volumes: Any, field: str, opts: PodSpecOptions | None = None,
                      pod_name: str = "") -> tuple[list[JsonDict], dict[str, JsonDict]]:
    """ValidateVolumes (`apiserver.strategies.volume_validation`): the errors and the valid
    volumes by name. `pod_name`: the pod's (a template has none), for its ephemeral volumes'
    claim names."""
    opts = opts or DEFAULT_OPTIONS
    return validate_volumes(volumes, field, pod_name=pod_name, resource_is_pod=opts.resource_is_pod,
                            allow_non_local_token_path=opts.allow_non_local_projected_token_path)


def _validate_host_aliases(aliases: Any, field: str) -> list[JsonDict]:
    errs: list[JsonDict] = []
    for i, alias in enumerate(aliases if isinstance(aliases, list) else []):
        alias = alias if isinstance(alias, dict) else {}
        errs.extend(_valid_ip(alias.get("ip") or "", f"{field}[{i}].ip"))
        for j, host in enumerate(alias.get("hostnames") or []):
            errs.extend(_subdomain(_str0(host), f"{field}[{i}].hostnames[{j}]"))
    return errs


def _sysctl_namespace(name: str) -> str:
    if name.startswith("net."):
        return "net"
    if name in _IPC_SYSCTLS or name.startswith("fs.mqueue."):
        return "ipc"
    return ""


def _validate_pod_security_context(spec: JsonDict, field: str, opts: PodSpecOptions) -> list[JsonDict]:
    """validatePodSpecSecurityContext: ids in range, shareProcessNamespace apart from hostPID,
    sysctls, fsGroupChangePolicy, seccomp and AppArmor profiles."""
    sc = spec.get("securityContext")
    errs: list[JsonDict] = []
    sp = f"{field}.securityContext"
    sc = sc if isinstance(sc, dict) else {}
    for key in ("fsGroup", "runAsUser", "runAsGroup"):
        if sc.get(key) is not None:
            errs.extend(_id_errors(sc[key], f"{sp}.{key}"))
    for g, gid in enumerate(sc.get("supplementalGroups") or []):
        errs.extend(_id_errors(gid, f"{sp}.supplementalGroups[{g}]"))
    if spec.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        errs.append(invalid(f"{sp}.shareProcessNamespace", True, "ShareProcessNamespace and HostPID cannot both be enabled"))
    names: set[str] = set()
    for i, s in enumerate(sc.get("sysctls") or []):
        name = _str0(s.get("name")) if isinstance(s, dict) else ""
        np = f"{sp}.sysctls[{i}].name"
        if not name:
            errs.append(required(np, ""))
        elif len(name) > _SYSCTL_MAX or not _SYSCTL_RE.match(name):
            errs.append(invalid(np, name, f"must have at most {_SYSCTL_MAX} characters and match regex "
                                f"{_SYSCTL_RE.pattern}"))
        elif name in names:
            errs.append(duplicate(np, name))
        if not opts.allow_namespaced_sysctls:
            ns = _sysctl_namespace(name)
            if spec.get("hostNetwork") is True and ns == "net":
                errs.append(invalid(np, name, "may not be specified when 'hostNetwork' is true"))
            elif spec.get("hostIPC") is True and ns == "ipc":
                errs.append(invalid(np, name, "may not be specified when 'hostIPC' is true"))
        names.add(name)
    policy = sc.get("fsGroupChangePolicy")
    if policy is not None and policy not in ("Always", "OnRootMismatch"):
        errs.append(not_supported(f"{sp}.fsGroupChangePolicy", policy, ("Always", "OnRootMismatch")))
    errs.extend(_seccomp_profile(sc.get("seccompProfile"), f"{sp}.seccompProfile"))
    errs.extend(_apparmor_profile(sc.get("appArmorProfile"), f"{sp}.appArmorProfile"))
    sgp = sc.get("supplementalGroupsPolicy")
    if sgp is not None and sgp not in ("Merge", "Strict"):
        errs.append(not_supported(f"{sp}.supplementalGroupsPolicy", sgp, ("Merge", "Strict")))
    slcp = sc.get("seLinuxChangePolicy")
    if slcp is not None and slcp not in ("MountOption", "Recursive"):
        errs.append(not_supported(f"{sp}.seLinuxChangePolicy", slcp, ("MountOption", "Recursive")))
    return errs


def _each_container(spec: JsonDict, field: str) -> list[tuple[JsonDict, str]]:
    """podshelper.VisitContainersWithPath: init, regular, then ephemeral containers."""
    out: list[tuple[JsonDict, str]] = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        cs = spec.get(key)
        for i, c in enumerate(cs if isinstance(cs, list) else []):
            if isinstance(c, dict):
                out.append((c, f"{field}.{key}[{i}]"))
    return out


_WINDOWS_POD_FORBIDDEN = (
    ("appArmorProfile", True), ("seLinuxOptions", True), ("seccompProfile", True), ("fsGroup", True),
    ("fsGroupChangePolicy", True), ("sysctls", True), ("runAsUser", True), ("runAsGroup", True),
    ("supplementalGroups", True), ("supplementalGroupsPolicy", True), ("seLinuxChangePolicy", True),
)
_WINDOWS_CONTAINER_FORBIDDEN = ("appArmorProfile", "seLinuxOptions", "seccompProfile", "capabilities",
                                "readOnlyRootFilesystem", "privileged", "allowPrivilegeEscalation", "procMount",
                                "runAsUser", "runAsGroup")


def _validate_os(spec: JsonDict, field: str) -> list[JsonDict]:
    """validateOS and then validateLinux / validateWindows."""
    os_ = spec.get("os")
    if os_ is None:
        return []
    name = _str0(os_.get("name")) if isinstance(os_, dict) else ""
    if not name:
        return [required(f"{field}.os.name", "cannot be empty")]
    if name not in ("linux", "windows"):
        return [not_supported(f"{field}.os", name, ("linux", "windows"))]
    sc: JsonDict = spec["securityContext"] if isinstance(spec.get("securityContext"), dict) else {}
    errs: list[JsonDict] = []
    if name == "linux":
        if sc.get("windowsOptions") is not None:
            errs.append(forbidden(f"{field}.securityContext.windowsOptions", "windows options cannot be set for a linux pod"))
        for c, cp in _each_container(spec, field):
            csc = c.get("securityContext")
            if isinstance(csc, dict) and csc.get("windowsOptions") is not None:
                errs.append(forbidden(f"{cp}.securityContext.windowsOptions",
                                      "windows options cannot be set for a linux pod"))
        return errs
    msg = "cannot be set for a windows pod"
    for key in ("appArmorProfile", "seLinuxOptions"):
        if sc.get(key) is not None:
            errs.append(forbidden(f"{field}.securityContext.{key}", msg))
    if spec.get("hostUsers") is not None:
        errs.append(forbidden(f"{field}.hostUsers", msg))
    if spec.get("hostPID") is True:
        errs.append(forbidden(f"{field}.hostPID", msg))
    if spec.get("hostIPC") is True:
        errs.append(forbidden(f"{field}.hostIPC", msg))
    for key in ("seccompProfile", "fsGroup", "fsGroupChangePolicy"):
        if sc.get(key) is not None:
            errs.append(forbidden(f"{field}.securityContext.{key}", msg))
    if sc.get("sysctls"):
        errs.append(forbidden(f"{field}.securityContext.sysctls", msg))
    if spec.get("shareProcessNamespace") is not None:
        errs.append(forbidden(f"{field}.shareProcessNamespace", msg))
    for key in ("runAsUser", "runAsGroup", "supplementalGroups", "supplementalGroupsPolicy", "seLinuxChangePolicy"):
        if sc.get(key) is not None:
            errs.append(forbidden(f"{field}.securityContext.{key}", msg))
    for c, cp in _each_container(spec, field):
        csc = c.get("securityContext")
        if isinstance(csc, dict):
            errs.extend(forbidden(f"{cp}.securityContext.{key}", msg) for key in _WINDOWS_CONTAINER_FORBIDDEN
                        if csc.get(key) is not None)
    return errs


class PodSpecOptions(NamedTuple):
    """The PodValidationOptions that change what a pod spec may hold.

    - `resource_is_pod`: the spec is a Pod's (a template's hostNetwork ports may leave hostPort
      unset, it is defaulted when the pod is made);
    - `allow_invalid_node_affinity_values` / `allow_invalid_selector_values`: an update of a
      pod that already holds invalid label values in required node affinity / pod affinity
      selectors keeps validating;
    - `allow_namespaced_sysctls`: likewise for namespaced sysctls of hostNetwork/hostIPC pods;
    - `allow_non_local_projected_token_path`: likewise for a projected token path that is not
      local (`volume_validation.has_non_local_projected_token_path` of the old spec)."""

    resource_is_pod: bool = False
    allow_invalid_node_affinity_values: bool = False
    allow_invalid_selector_values: bool = False
    allow_namespaced_sysctls: bool = False
    allow_non_local_projected_token_path: bool = False


DEFAULT_OPTIONS = PodSpecOptions()
POD_OPTIONS = PodSpecOptions(resource_is_pod=True)



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
        self._lru: SecondSightLRU[tuple[str, PodSpecOptions, bytes], tuple[Any, bytes]] = SecondSightLRU(size)

    @property
    def size(self) -> int:
        return self._lru.size

    def causes(self, spec: JsonDict, field: str, opts: PodSpecOptions = DEFAULT_OPTIONS) -> list[JsonDict]:
        data = exact_json(spec, _MEMO_MAX_BYTES)
        if data is None:
            return _walk(spec, field, opts)
        key_data, token_name = without_token_volume_name(spec, data)
        key = (field, opts, key_data)
        entry = self._lru.get(key)
        if entry is None:
            if self._lru.first_sighting(key):
                return _walk(spec, field, opts)
            plain = orjson.loads(key_data)
            entry = (plain, orjson.dumps(_walk(plain, field, opts)))
            self._lru.put(key, entry)
        plain, causes = entry
        if token_name:
            # the entry is the same spec with another token volume name: a valid answer holds
            # for every such name (an invalid one could quote the name)
            if causes != b"[]" or not same_but_token_name(spec, plain, token_name):
                return _walk(spec, field, opts)
            return []
        if spec != plain:
            return _walk(spec, field, opts)
        return [] if causes == b"[]" else cast(list[JsonDict], orjson.loads(causes))


def _walk(spec: Any, field: str, opts: PodSpecOptions) -> list[JsonDict]:
    return _validate_pod_spec(spec, field) if opts == DEFAULT_OPTIONS else _validate_pod_spec(spec, field, opts)


# the process's memo (a cache of a pure function, as functools.lru_cache would be)
_MEMO = SpecValidationMemo()


def validate_pod_spec(spec: Any, field: str = "spec", opts: PodSpecOptions = DEFAULT_OPTIONS, *,
                      pod_name: str = "") -> list[JsonDict]:
    """ValidatePodSpec: volumes, containers, policies, scheduling constraints, resources.
    Memoised (`SpecValidationMemo`): the same causes as the walk, as fresh dicts. `pod_name`
    (ValidatePodSpec's podMeta; a Pod's, never a template's) matters only to ephemeral volumes,
    so a spec with one is walked with it, not memoised."""
    if pod_name and _has_ephemeral_volume(spec):
        return _validate_pod_spec(spec, field, opts, pod_name=pod_name)
    if isinstance(spec, dict):
        return _MEMO.causes(spec, field, opts)
    return _walk(spec, field, opts)


def _has_ephemeral_volume(spec: Any) -> bool:
    volumes = spec.get("volumes") if isinstance(spec, dict) else None
    return isinstance(volumes, list) and any(isinstance(v, dict) and v.get("ephemeral") is not None for v in volumes)


def _validate_pod_spec(spec: Any, field: str, opts: PodSpecOptions = DEFAULT_OPTIONS, *,
                       pod_name: str = "") -> list[JsonDict]:
    """ValidatePodSpec, in upstream's order (and the checks this server adds: types, workloadRef,
    pod-level resources)."""
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        return [type_invalid(field, spec, "must be an object")]
    errs: list[JsonDict] = []
    tgps = spec.get("terminationGracePeriodSeconds")
    if tgps is not None and not _is_int(tgps):
        errs.append(type_invalid(f"{field}.terminationGracePeriodSeconds", tgps, "must be an integer"))
    grace = tgps if _is_int(tgps) else None
    restart_policy = _str0(spec.get("restartPolicy"))
    verrs, volumes = _validate_volumes(spec.get("volumes"), f"{field}.volumes", opts, pod_name)
    errs.extend(verrs)
    claims = frozenset(_str0(c.get("name")) for c in spec.get("resourceClaims") or []
                       if isinstance(c, dict) and c.get("name"))
    containers = spec.get("containers")
    errs.extend(validate_containers(containers, f"{field}.containers", volumes, grace=grace,
                                    restart_policy=restart_policy, claims=claims))
    errs.extend(validate_init_containers(spec.get("initContainers"), containers, f"{field}.initContainers",
                                         volumes, grace=grace, restart_policy=restart_policy, claims=claims))
    if spec.get("hostNetwork") is True:
        for i, c in enumerate(containers if isinstance(containers, list) else []):
            for j, p in enumerate((c.get("ports") or []) if isinstance(c, dict) else []):
                if not isinstance(p, dict):
                    continue
                hp, cp = _int0(p.get("hostPort")), _int0(p.get("containerPort"))
                if (opts.resource_is_pod or hp != 0) and hp != cp:
                    errs.append(invalid(f"{field}.containers[{i}].ports[{j}].hostPort", hp,
                                        "must match `containerPort` when `hostNetwork` is true"))
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
    errs.extend(validate_labels(spec.get("nodeSelector"), f"{field}.nodeSelector"))
    errs.extend(_validate_pod_security_context(spec, field, opts))
    errs.extend(validate_affinity(spec.get("affinity"), f"{field}.affinity",
                                  allow_invalid_node_affinity_values=opts.allow_invalid_node_affinity_values,
                                  allow_invalid_selector_values=opts.allow_invalid_selector_values))
    errs.extend(validate_pod_dns_config(spec.get("dnsConfig"), dp, f"{field}.dnsConfig"))
    for i, gate in enumerate(spec.get("readinessGates") or []):
        ctype = gate.get("conditionType") if isinstance(gate, dict) else None
        errs.extend(_qualified(ctype or "", f"{field}.readinessGates[{i}].conditionType"))
    errs.extend(validate_scheduling_gates(spec.get("schedulingGates"), f"{field}.schedulingGates"))
    errs.extend(validate_topology_spread(spec.get("topologySpreadConstraints"), f"{field}.topologySpreadConstraints"))
    if spec.get("hostUsers") is False:
        for key, path in (("hostNetwork", "hostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC")):
            if spec.get(key) is True:
                errs.append(forbidden(f"{field}.{path}", "when `pod.Spec.HostUsers` is false"))
    for key in ("serviceAccountName", "nodeName"):
        v = spec.get(key)
        if v:
            if not isinstance(v, str):
                errs.append(type_invalid(f"{field}.{key}", v, "must be a string"))
            else:
                errs.extend(_subdomain(v, f"{field}.{key}"))
    ads = spec.get("activeDeadlineSeconds")
    if ads is not None and (not _is_int(ads) or not 1 <= ads <= _MAX_INT32):
        errs.append(invalid(f"{field}.activeDeadlineSeconds", ads, inclusive_range_msg(1, _MAX_INT32)))
    for key in ("hostname", "subdomain"):
        v = spec.get(key)
        if v and isinstance(v, str):
            errs.extend(_label(v, f"{field}.{key}"))
    errs.extend(validate_tolerations(spec.get("tolerations"), f"{field}.tolerations"))
    errs.extend(_validate_host_aliases(spec.get("hostAliases"), f"{field}.hostAliases"))
    for key in ("priorityClassName", "runtimeClassName"):
        v = spec.get(key)
        if v is None or (key == "priorityClassName" and not v):
            continue
        if not isinstance(v, str):
            errs.append(type_invalid(f"{field}.{key}", v, "must be a string"))
        else:
            errs.extend(_subdomain(v, f"{field}.{key}"))
    pp = spec.get("preemptionPolicy")
    if pp is not None:
        if not pp:
            errs.append(required(f"{field}.preemptionPolicy", ""))
        elif pp not in PREEMPTION_POLICIES:
            errs.append(not_supported(f"{field}.preemptionPolicy", pp, PREEMPTION_POLICIES))
    if "overhead" in spec and spec.get("overhead") is not None:
        # validateOverhead reuses the container rules on {limits: overhead}
        errs.extend(validate_resource_requirements({"limits": spec.get("overhead")}, f"{field}.overhead"))
    errs.extend(_validate_os(spec, field))
    prio = spec.get("priority")
    if prio is not None and not _is_int(prio):
        errs.append(type_invalid(f"{field}.priority", prio, "must be an integer"))
    if spec.get("workloadRef") is not None:
        errs.extend(validate_workload_ref(spec.get("workloadRef"), f"{field}.workloadRef"))
    if "resources" in spec:
        errs.extend(validate_resource_requirements(spec.get("resources"), f"{field}.resources"))
    return errs
