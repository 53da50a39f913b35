"""Warnings about pods and pod templates (layer L4, apiserver).

Why: kube-apiserver answers a create or update of a pod, or of a workload that carries a pod
template, with `Warning` headers about what is accepted but probably not what its author
meant: deprecated node labels, annotations and volume plugins, fractional byte quantities,
duplicate env vars, ports and host aliases that a later `kubectl apply` may drop, null label
selectors that match nothing, overlapping volume paths, IP addresses in non-standard forms.

Upstream (v1.33): pkg/api/pod/warnings.go (GetWarningsForPod, GetWarningsForPodTemplate,
warningsForOverlappingVirtualPaths), pkg/api/node/util.go (GetNodeLabelDeprecatedMessage,
GetWarningsForNodeSelectorTerm, GetWarningsForNodeSelector), pkg/api/persistentvolumeclaim
(GetWarningsForPersistentVolumeClaimSpec), pkg/registry/batch/job/warnings.go
(WarningsForJobSpec) and apimachinery's validation.GetWarningsForIP.

Objects are the JSON dicts the API stores (defaulted and validated). Field paths print as Go's
field.Path does (`spec.containers[0].env[1]`, `spec.nodeSelector[beta.kubernetes.io/arch]`) and
values as Go's `%q`. Warnings run on every pod create (controllers create pods in bursts), so
the common pod, which uses none of these features, costs a few dict lookups per field: paths
and messages are only built for a hit.

Data flow: PodStrategy / workload strategies .warnings_on_create / .warnings_on_update ->
get_warnings_for_pod / get_warnings_for_pod_template -> the request core's Warning headers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

from minik3s.api.errors import go_quote
from minik3s.api.quantity import QuantityError, canonical_quantity, parse_quantity
from minik3s.api.types import JsonDict
from minik3s.api.validation import is_dns1123_label, is_valid_label_value

from .net_warnings import get_warnings_for_ip

# features.GitRepoVolumeDriver: deprecated and off by default in v1.33 (KEP-5040)
GIT_REPO_VOLUME_DRIVER = False

SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"
APPARMOR_CONTAINER_PREFIX = "container.apparmor.security.beta.kubernetes.io/"

# pkg/api/node deprecatedNodeLabels
DEPRECATED_NODE_LABELS: Mapping[str, str] = {
    "beta.kubernetes.io/arch": 'deprecated since v1.14; use "kubernetes.io/arch" instead',
    "beta.kubernetes.io/os": 'deprecated since v1.14; use "kubernetes.io/os" instead',
    "failure-domain.beta.kubernetes.io/region": 'deprecated since v1.17; use "topology.kubernetes.io/region" instead',
    "failure-domain.beta.kubernetes.io/zone": 'deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
    "beta.kubernetes.io/instance-type": 'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
    "app.kubernetes.io/created-by": "deprecated since v1.9",
    "scheduler.alpha.kubernetes.io/preferAvoidPods": "deprecated since v1.22; use Taints and Tolerations instead",
    "node-role.kubernetes.io/master": 'use "node-role.kubernetes.io/control-plane" instead',
}

# deprecatedAnnotations (no entry has a prefix in v1.33)
_DEPRECATED_ANNOTATIONS = (
    ("scheduler.alpha.kubernetes.io/critical-pod", 'non-functional in v1.16+; use the "priorityClassName" field instead'),
    ("security.alpha.kubernetes.io/sysctls", 'non-functional in v1.11+; use the "sysctls" field instead'),
    ("security.alpha.kubernetes.io/unsafe-sysctls", 'non-functional in v1.11+; use the "sysctls" field instead'),
)

# deprecated and removed volume plugins: JSON key -> (rank in upstream's checks, path segment,
# message). "gitRepo" depends on the GitRepoVolumeDriver gate; "ephemeral" is checked for its
# claim template's quantities.
_VOLUME_PLUGINS: Mapping[str, tuple[int, str, str]] = {
    "photonPersistentDisk": (0, "photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"),
    "gitRepo": (1, "gitRepo", ""),
    "scaleIO": (2, "scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    "flocker": (3, "flocker", "deprecated in v1.22, non-functional in v1.25+"),
    "storageos": (4, "storageOS", "deprecated in v1.22, non-functional in v1.25+"),
    "quobyte": (5, "quobyte", "deprecated in v1.22, non-functional in v1.25+"),
    "glusterfs": (6, "glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
    "ephemeral": (7, "ephemeral", ""),
    "cephfs": (8, "cephfs", "deprecated in v1.28, non-functional in v1.31+"),
    "rbd": (9, "rbd", "deprecated in v1.28, non-functional in v1.31+"),
}

_SECCOMP_MSG = 'non-functional in v1.27+; use the "seccompProfile" field instead'
_APPARMOR_MSG = 'deprecated since v1.30; use the "appArmorProfile" field instead'
_NULL_SELECTOR_MSG = "a null labelSelector results in matching no pod"
_PROJECTION_KEYS = ("configMap", "secret", "downwardAPI", "serviceAccountToken", "clusterTrustBundle")


def _d(v: Any) -> JsonDict:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _s(v: Any) -> str:
    """A string field as Go reads it (missing or null: "")."""
    return v if isinstance(v, str) else ""


def _i(v: Any) -> int:
    """An integer field as Go reads it (missing or null: 0)."""
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


# ---- quantities, node labels, IPs ------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _fractional_text(value: str) -> str | None:
    """The canonical text of a quantity whose MilliValue() is not a multiple of 1000 (a
    fractional byte count), else None."""
    try:
        q = parse_quantity(value)
    except QuantityError:
        return None
    if math.ceil(q * 1000) % 1000 == 0:
        return None
    return canonical_quantity(value)


def fractional_bytes(value: Any) -> str | None:
    """Quantity.MilliValue() % 1000 != 0: the quantity's String() when `value` is a fractional
    number of bytes (e.g. "4m", "1.5"), else None."""
    if isinstance(value, str):
        return _fractional_text(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _fractional_text(str(value))
    return None


def _fractional_warning(path: str, value: Any) -> str | None:
    text = fractional_bytes(value)
    if text is None:
        return None
    return f"{path}: fractional byte value {go_quote(text)} is invalid, must be an integer"


def node_label_deprecated_message(key: Any) -> str | None:
    """GetNodeLabelDeprecatedMessage: why a node label key is deprecated, or None."""
    return DEPRECATED_NODE_LABELS.get(key) if isinstance(key, str) else None


def warnings_for_node_selector_term(term: Any, check_label_value: bool, path: str) -> list[str]:
    """GetWarningsForNodeSelectorTerm: deprecated node labels as matchExpressions keys and,
    with `check_label_value` (preferred terms, whose values validation does not check), values
    that are not valid label values. `path` is the term's path."""
    warnings: list[str] = []
    for i, expr in enumerate(_l(_d(term).get("matchExpressions"))):
        expr = _d(expr)
        key = expr.get("key")
        msg = node_label_deprecated_message(key)
        if msg is not None:
            warnings.append(f"{path}.matchExpressions[{i}].key: {key} is {msg}")
        if check_label_value:
            for j, value in enumerate(_l(expr.get("values"))):
                text = _s(value)
                for m in is_valid_label_value(text):
                    warnings.append(f"{path}.matchExpressions[{i}].values[{j}]: {text} is invalid, {m}")
    return warnings


def warnings_for_node_selector(selector: Any, path: str) -> list[str]:
    """GetWarningsForNodeSelector: deprecated node labels in a label selector's
    matchExpressions keys and matchLabels (the latter printed as `path.matchLabels.<key>`)."""
    if not isinstance(selector, dict):
        return []
    warnings: list[str] = []
    for i, expr in enumerate(_l(selector.get("matchExpressions"))):
        key = _d(expr).get("key")
        msg = node_label_deprecated_message(key)
        if msg is not None:
            warnings.append(f"{path}.matchExpressions[{i}].key: {key} is {msg}")
    for label in _d(selector.get("matchLabels")):
        msg = node_label_deprecated_message(label)
        if msg is not None:
            warnings.append(f"{path}.matchLabels.{label}: {msg}")
    return warnings


def warnings_for_pvc_spec(path: str, spec: Any) -> list[str]:
    """GetWarningsForPersistentVolumeClaimSpec: fractional storage requests and limits."""
    resources = _d(_d(spec).get("resources"))
    warnings: list[str] = []
    for kind in ("requests", "limits"):
        values = resources.get(kind)
        if isinstance(values, dict) and "storage" in values:
            w = _fractional_warning(f"{path}.resources.{kind}[storage]", values["storage"])
            if w is not None:
                warnings.append(w)
    return warnings


# ---- the pod spec ------------------------------------------------------------------------------


def get_warnings_for_pod(pod: JsonDict | None, old_pod: JsonDict | None = None, *,
                         git_repo_driver: bool = GIT_REPO_VOLUME_DRIVER) -> list[str]:
    """GetWarningsForPod: the pod's warnings, paths from `spec` / `metadata` (the old pod is
    not consulted, as upstream)."""
    if pod is None:
        return []
    return _warnings_for_spec_and_meta(None, _d(pod.get("spec")), _d(pod.get("metadata")), git_repo_driver)


def get_warnings_for_pod_template(field_path: str | None, template: Any, old_template: Any = None, *,
                                  git_repo_driver: bool = GIT_REPO_VOLUME_DRIVER) -> list[str]:
    """GetWarningsForPodTemplate: a template's warnings, paths under `field_path` (e.g.
    `spec.template`). None (a nil field.Path upstream) prints them from `spec` and, as for a
    pod, leaves out the template-only AppArmor annotation warning."""
    if not isinstance(template, dict):
        return []
    return _warnings_for_spec_and_meta(field_path, _d(template.get("spec")), _d(template.get("metadata")),
                                       git_repo_driver)


def _warnings_for_spec_and_meta(field_path: str | None, spec: JsonDict, meta: JsonDict,
                                git_repo_driver: bool) -> list[str]:
    """warningsForPodSpecAndMeta. `field_path` None is a pod (AppArmor annotations are then
    reported by the pod strategy's version-skew handling instead)."""
    p = f"{field_path}." if field_path else ""
    annotations = meta.get("annotations")
    annotations = annotations if isinstance(annotations, dict) and annotations else None
    warnings: list[str] = []

    _node_label_warnings(p, spec, warnings)
    if annotations is not None:
        for key, message in _DEPRECATED_ANNOTATIONS:
            if key in annotations:
                warnings.append(f"{p}metadata.annotations[{key}]: {message}")
    volumes = spec.get("volumes")
    if volumes:
        _volume_warnings(p, _l(volumes), git_repo_driver, warnings)
        warnings.extend(warnings_for_overlapping_virtual_paths(_l(volumes)))
    host_aliases = _l(spec.get("hostAliases"))
    if len(host_aliases) > 1:
        _duplicates(host_aliases, "ip", f"{p}spec.hostAliases", "ip", "duplicate ip", warnings)
    pull_secrets = _l(spec.get("imagePullSecrets"))
    if pull_secrets:
        if len(pull_secrets) > 1:
            _duplicates(pull_secrets, "name", f"{p}spec.imagePullSecrets", "name", "duplicate name", warnings)
        for i, item in enumerate(pull_secrets):
            if not _s(_d(item).get("name")):
                warnings.append(f'{p}spec.imagePullSecrets[{i}].name: invalid empty name ""')
    overhead = spec.get("overhead")
    if isinstance(overhead, dict) and overhead:
        for res in ("memory", "ephemeral-storage"):
            if res in overhead:
                w = _fractional_warning(f"{p}spec.overhead[{res}]", overhead[res])
                if w is not None:
                    warnings.append(w)
    security = _d(spec.get("securityContext"))
    if annotations is not None and SECCOMP_POD_ANNOTATION in annotations and security.get("seccompProfile") is None:
        warnings.append(f"{p}metadata.annotations[{SECCOMP_POD_ANNOTATION}]: {_SECCOMP_MSG}")
    containers = _containers(spec)
    if _container_warnings(p, containers, annotations, field_path is not None,
                           security.get("appArmorProfile") is not None, warnings):
        _port_warnings(p, containers, warnings)
    tgps = spec.get("terminationGracePeriodSeconds")
    if isinstance(tgps, int) and tgps < 0:
        warnings.append(f"{p}spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid "
                        "and will be treated as 1")
    affinity = spec.get("affinity")
    if isinstance(affinity, dict):
        _pod_affinity_warnings(p, affinity, warnings)
    dns = spec.get("dnsConfig")
    if isinstance(dns, dict):
        for i, ns in enumerate(_l(dns.get("nameservers"))):
            if isinstance(ns, str):
                warnings.extend(get_warnings_for_ip(f"{p}spec.dnsConfig.nameservers[{i}]", ns))
    for i, alias in enumerate(host_aliases):
        ip = _d(alias).get("ip")
        if isinstance(ip, str):
            warnings.extend(get_warnings_for_ip(f"{p}spec.hostAliases[{i}].ip", ip))
    return warnings


def _node_label_warnings(p: str, spec: JsonDict, warnings: list[str]) -> None:
    """Deprecated node labels in the node selector, node affinity and topology spread
    constraints (and their null label selectors)."""
    node_selector = spec.get("nodeSelector")
    if node_selector:
        for key in _d(node_selector):
            msg = DEPRECATED_NODE_LABELS.get(key)
            if msg is not None:
                warnings.append(f"{p}spec.nodeSelector[{key}]: {msg}")
    affinity = spec.get("affinity")
    node_affinity = _d(affinity).get("nodeAffinity") if affinity else None
    if isinstance(node_affinity, dict):
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(required, dict):
            base = f"{p}spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
            for i, term in enumerate(_l(required.get("nodeSelectorTerms"))):
                warnings.extend(warnings_for_node_selector_term(term, False, f"{base}[{i}]"))
        base = f"{p}spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
        for i, pref in enumerate(_l(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            warnings.extend(warnings_for_node_selector_term(_d(pref).get("preference"), True,
                                                            f"{base}[{i}].preference"))
    for i, tsc in enumerate(_l(spec.get("topologySpreadConstraints"))):
        tsc = _d(tsc)
        topology_key = tsc.get("topologyKey")
        msg = node_label_deprecated_message(topology_key)
        if msg is not None:
            warnings.append(f"{p}spec.topologySpreadConstraints[{i}].topologyKey: {topology_key} is {msg}")
        if tsc.get("labelSelector") is None:
            warnings.append(f"{p}spec.topologySpreadConstraints[{i}].labelSelector: {_NULL_SELECTOR_MSG}")


def _volume_warnings(p: str, volumes: list[Any], git_repo_driver: bool, warnings: list[str]) -> None:
    """Deprecated and removed volume plugins, and an ephemeral volume's claim template."""
    for i, volume in enumerate(volumes):
        if not isinstance(volume, dict):
            continue
        hits = [k for k in volume if k in _VOLUME_PLUGINS and volume[k] is not None]
        if not hits:
            continue
        hits.sort(key=lambda k: _VOLUME_PLUGINS[k][0])
        for key in hits:
            _, segment, message = _VOLUME_PLUGINS[key]
            path = f"{p}spec.volumes[{i}].{segment}"
            if key == "gitRepo":
                message = "deprecated in v1.11" if git_repo_driver else \
                    "deprecated in v1.11, and disabled by default in v1.33+"
            elif key == "ephemeral":
                template = _d(volume[key]).get("volumeClaimTemplate")
                if isinstance(template, dict):
                    warnings.extend(warnings_for_pvc_spec(f"{path}.volumeClaimTemplate.spec", template.get("spec")))
                continue
            warnings.append(f"{path}: {message}")


def _duplicates(items: list[Any], key: str, base: str, leaf: str, what: str, warnings: list[str]) -> None:
    """Items whose `key` repeats an earlier one's (hostAliases' ip, imagePullSecrets' name)."""
    seen: set[str] = set()
    for i, item in enumerate(items):
        value = _s(_d(item).get(key))
        if value in seen:
            warnings.append(f"{base}[{i}].{leaf}: {what} {go_quote(value)}")
        else:
            seen.add(value)


def _containers(spec: JsonDict) -> list[tuple[str, int, JsonDict]]:
    """VisitContainersWithPath's order: init, regular, then ephemeral containers, as (list
    name, index, container); paths are formatted only for a warning."""
    out: list[tuple[str, int, JsonDict]] = []
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        items = spec.get(kind)
        if items and isinstance(items, list):
            out.extend((kind, i, c) for i, c in enumerate(items) if isinstance(c, dict))
    return out


def _container_warnings(p: str, containers: list[tuple[str, int, JsonDict]], annotations: JsonDict | None,
                        is_template: bool, pod_apparmor: bool, warnings: list[str]) -> bool:
    """Per container: seccomp (and, for a template, AppArmor) annotations without their field,
    fractional memory / ephemeral-storage, env vars that hide an earlier one. True when some
    container declares ports."""
    has_ports = False
    for kind, i, c in containers:
        if c.get("ports"):
            has_ports = True
        if annotations is not None:
            name = _s(c.get("name"))
            sc = _d(c.get("securityContext"))
            key = SECCOMP_CONTAINER_PREFIX + name
            if key in annotations and sc.get("seccompProfile") is None:
                warnings.append(f"{p}metadata.annotations[{key}]: {_SECCOMP_MSG}")
            key = APPARMOR_CONTAINER_PREFIX + name
            if is_template and key in annotations and not pod_apparmor and sc.get("appArmorProfile") is None:
                warnings.append(f"{p}metadata.annotations[{key}]: {_APPARMOR_MSG}")
        resources = c.get("resources")
        if resources and isinstance(resources, dict):
            _resource_warnings(p, kind, i, resources, warnings)
        env = c.get("env")
        if env and isinstance(env, list) and len(env) > 1:
            _env_warnings(p, kind, i, env, warnings)
    return has_ports


def _resource_warnings(p: str, kind: str, index: int, resources: JsonDict, warnings: list[str]) -> None:
    """Fractional memory / ephemeral-storage limits and requests, in upstream's order."""
    limits, requests = resources.get("limits"), resources.get("requests")
    fractional = False
    for values in (limits, requests):
        if values and isinstance(values, dict):
            for res in _BYTE_RESOURCES:
                if res in values and fractional_bytes(values[res]) is not None:
                    fractional = True
    if not fractional:
        return
    for res in _BYTE_RESOURCES:
        for what, values in (("limits", limits), ("requests", requests)):
            if isinstance(values, dict) and res in values:
                text = fractional_bytes(values[res])
                if text is not None:
                    warnings.append(f"{p}spec.{kind}[{index}].resources.{what}[{res}]: fractional byte value "
                                    f"{go_quote(text)} is invalid, must be an integer")


_BYTE_RESOURCES = ("memory", "ephemeral-storage")


def _env_warnings(p: str, kind: str, index: int, env: list[Any], warnings: list[str]) -> None:
    """A repeated env var warns unless its value refers to the earlier one ($(X)) and is not
    just `$(X)` or a valueFrom."""
    if len({item.get("name") if isinstance(item, dict) else None for item in env}) == len(env):
        return  # no name repeats
    seen: set[str] = set()
    for i, item in enumerate(env):
        item = _d(item)
        name = _s(item.get("name"))
        if name not in seen:
            seen.add(name)
            continue
        ref = f"$({name})"
        value = _s(item.get("value"))
        if item.get("valueFrom") is not None or value == ref or ref not in value:
            warnings.append(f"{p}spec.{kind}[{index}].env[{i}]: hides previous definition of {go_quote(name)}, "
                            "which may be dropped when using apply")


def _port_text(port: JsonDict) -> str:
    """A ContainerPort as Go's `%+v` prints the struct (fields in declaration order)."""
    return (f"{{Name:{_s(port.get('name'))} HostPort:{_i(port.get('hostPort'))} "
            f"ContainerPort:{_i(port.get('containerPort'))} Protocol:{_s(port.get('protocol'))} "
            f"HostIP:{_s(port.get('hostIP'))}}}")


def _port_warnings(p: str, containers: list[tuple[str, int, JsonDict]], warnings: list[str]) -> None:
    """hostIP without hostPort; ports that duplicate, overlap or ambiguously repeat another
    container port of the same number and protocol; then port names used twice."""
    ports: list[tuple[str, int, int, JsonDict]] = []  # (list name, container index, port index, port)
    for kind, ci, c in containers:
        items = c.get("ports")
        if items and isinstance(items, list):
            ports.extend((kind, ci, i, port) for i, port in enumerate(items) if isinstance(port, dict))
    if len(ports) == 1:  # alone, a port can only lack its hostPort
        kind, ci, i, port = ports[0]
        if port.get("hostIP") and not _i(port.get("hostPort")):
            warnings.append(f"{p}spec.{kind}[{ci}].ports[{i}]: hostIP set without hostPort: {_port_text(port)}")
        return
    seen: dict[tuple[int, str], list[tuple[str, JsonDict]]] = {}
    names: dict[str, str] = {}
    paths: list[str] = []
    for kind, ci, i, port in ports:
        path = f"{p}spec.{kind}[{ci}].ports[{i}]"
        paths.append(path)
        host_ip, host_port = _s(port.get("hostIP")), _i(port.get("hostPort"))
        if host_ip and host_port == 0:
            warnings.append(f"{path}: hostIP set without hostPort: {_port_text(port)}")
        others = seen.setdefault((_i(port.get("containerPort")), _s(port.get("protocol"))), [])
        for other_path, other in others:
            other_ip, other_port = _s(other.get("hostIP")), _i(other.get("hostPort"))
            if host_ip == other_ip and host_port == other_port:
                warnings.append(f"{path}: duplicate port definition with {other_path}")
            elif host_port == 0 or other_port == 0:
                warnings.append(f"{path}: overlapping port definition with {other_path}")
            elif host_port == other_port and (host_ip == "") != (other_ip == ""):
                warnings.append(f"{path}: dangerously ambiguous port definition with {other_path}")
        others.append((path, port))
    for path, (_, _, _, port) in zip(paths, ports, strict=True):
        name = _s(port.get("name"))
        if not name:
            continue
        first = names.get(name)
        if first is not None:
            warnings.append(f"{path}: duplicate port name {go_quote(name)} with {first}, services and probes "
                            f"that select ports by name will use {first}")
        else:
            names[name] = path


def _pod_affinity_warnings(p: str, affinity: JsonDict, warnings: list[str]) -> None:
    """warningsForPodAffinityTerms / warningsForWeightedPodAffinityTerms: null label selectors."""
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind)
        if not isinstance(terms, dict):
            continue
        base = f"{p}spec.affinity.{kind}"
        for i, term in enumerate(_l(terms.get("requiredDuringSchedulingIgnoredDuringExecution"))):
            if _d(term).get("labelSelector") is None:
                warnings.append(f"{base}.requiredDuringSchedulingIgnoredDuringExecution[{i}].labelSelector: "
                                f"{_NULL_SELECTOR_MSG}")
        for i, weighted in enumerate(_l(terms.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            if _d(_d(weighted).get("podAffinityTerm")).get("labelSelector") is None:
                warnings.append(f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}].podAffinityTerm."
                                f"labelSelector: {_NULL_SELECTOR_MSG}")


# ---- overlapping paths in configMap / secret / downwardAPI / projected volumes --------------------


# pathAndSource: a path and where it came from. The source is kept as (kind, name) and
# printed only for a warning: "" for a plain volume's items, ("ConfigMap", name) as
# `ConfigMap "name"`, ("DownwardAPI", None) as `DownwardAPI`.
Source = tuple[str, str | None]
PathAndSource = tuple[str, Source]
_NO_SOURCE: Source = ("", None)


def _ps_text(ps: PathAndSource) -> str:
    path, (kind, name) = ps
    if not kind:
        return go_quote(path)
    return f"{go_quote(path)} ({kind} {go_quote(name)})" if name is not None else f"{go_quote(path)} ({kind})"


def _item_paths(items: list[Any], source: Source) -> list[PathAndSource]:
    """extractPaths / extractPathsDownwardAPI."""
    return [(_s(item.get("path")) if isinstance(item, dict) else "", source) for item in items]


def check_for_overlap(haystack: list[PathAndSource], needle: PathAndSource) -> list[PathAndSource]:
    """checkForOverlap: the entries of `haystack` that `needle` collides with (the same path, or
    one a directory of the other); an empty path collides with nothing."""
    path = needle[0]
    if not path:
        return []
    slashed = path + "/"
    result: list[PathAndSource] = []
    for item in haystack:
        other = item[0]
        if not other:
            continue
        if item == needle or (other + "/").startswith(slashed) or slashed.startswith(other + "/"):
            result.append(item)
    return result


def check_volume_mapping_for_overlap(paths: list[PathAndSource]) -> list[str]:
    """checkVolumeMappingForOverlap: each path (trailing slashes trimmed) against the ones
    before it, as `"a" with "b"` bodies."""
    warnings: list[str] = []
    seen: list[PathAndSource] = []
    for path, source in paths:
        ps = (path.rstrip("/"), source)
        for collision in check_for_overlap(seen, ps):
            warnings.append(f"{_ps_text(ps)} with {_ps_text(collision)}")
        seen.append(ps)
    return warnings


def warnings_for_overlapping_virtual_paths(volumes: list[Any]) -> list[str]:
    """warningsForOverlappingVirtualPaths: items of one configMap, secret or downwardAPI volume
    that write the same file or a file inside another's directory, and the same across the
    sources of a projected volume (where an empty source also warns). As upstream, a projected
    source that yields no paths (e.g. a configMap without items) re-checks the previous
    source's paths."""
    warnings: list[str] = []
    for v in volumes:
        if not isinstance(v, dict):
            continue
        for key, src in v.items():
            if key in _ITEM_VOLUMES and isinstance(src, dict):
                items = src.get("items")
                if items and isinstance(items, list) and len(items) > 1:
                    _item_volume_overlaps(v, key, src, items, warnings)
            elif key == "projected" and isinstance(src, dict):
                sources = src.get("sources")
                if sources and isinstance(sources, list) and not _projection_paths_are_disjoint(sources):
                    _projected_overlaps(v, sources, warnings)
    return warnings


_ITEM_VOLUMES: Mapping[str, str] = {"configMap": "ConfigMap", "secret": "Secret", "downwardAPI": "DownwardAPI"}


def _item_volume_overlaps(volume: JsonDict, key: str, src: JsonDict, items: list[Any], warnings: list[str]) -> None:
    """A configMap, secret or downwardAPI volume's items against each other."""
    for body in check_volume_mapping_for_overlap(_item_paths(items, _NO_SOURCE)):
        ref = "" if key == "downwardAPI" else " " + go_quote(_s(src.get("name" if key == "configMap" else "secretName")))
        warnings.append(f"volume {go_quote(_s(volume.get('name')))} ({_ITEM_VOLUMES[key]}{ref}): overlapping paths: "
                        f"{body}")


def _projection_paths(source: JsonDict) -> list[PathAndSource] | None:
    """The paths one projected source writes (None when no case of upstream's switch applies)."""
    cm = source.get("configMap")
    if isinstance(cm, dict) and cm.get("items") is not None:
        return _item_paths(_l(cm.get("items")), ("ConfigMap", _s(cm.get("name"))))
    secret = source.get("secret")
    if isinstance(secret, dict) and secret.get("items") is not None:
        return _item_paths(_l(secret.get("items")), ("Secret", _s(secret.get("name"))))
    dapi = source.get("downwardAPI")
    if isinstance(dapi, dict) and dapi.get("items") is not None:
        return _item_paths(_l(dapi.get("items")), ("DownwardAPI", None))
    sat = source.get("serviceAccountToken")
    if isinstance(sat, dict):
        return [(_s(sat.get("path")), ("ServiceAccountToken", None))]
    ctb = source.get("clusterTrustBundle")
    if isinstance(ctb, dict):
        ref = ctb.get("name") if ctb.get("name") is not None else ctb.get("signerName")
        return [(_s(ctb.get("path")), ("ClusterTrustBundle", _s(ref)))]
    return None


def _projection_paths_are_disjoint(sources: list[Any]) -> bool:
    """The common case, cheaply: every source is one known kind that yields its paths, and the
    paths are distinct top-level names (so nothing can collide and nothing warns)."""
    seen: set[str] = set()
    for source in sources:
        if not isinstance(source, dict) or len(source) != 1:
            return False
        for kind, value in source.items():
            if not isinstance(value, dict):
                return False
            if kind in _SINGLE_PATH_PROJECTIONS:
                path = value.get("path")
                if not path or not isinstance(path, str) or "/" in path or path in seen:
                    return False
                seen.add(path)
            elif kind in _ITEM_PROJECTIONS:
                items = value.get("items")
                if not items or not isinstance(items, list):
                    return False
                for item in items:
                    path = item.get("path") if isinstance(item, dict) else None
                    if not path or not isinstance(path, str) or "/" in path or path in seen:
                        return False
                    seen.add(path)
            else:
                return False
    return True


_SINGLE_PATH_PROJECTIONS = frozenset(("serviceAccountToken", "clusterTrustBundle"))
_ITEM_PROJECTIONS = frozenset(("configMap", "secret", "downwardAPI"))


def _projected_overlaps(volume: JsonDict, sources: list[Any], warnings: list[str]) -> None:
    source_paths: list[PathAndSource] = []  # declared outside the loop upstream: a miss keeps it
    all_paths: list[PathAndSource] = []
    for source in sources:
        source = _d(source)
        if all(source.get(k) is None for k in _PROJECTION_KEYS):
            warnings.append(f"volume {go_quote(_s(volume.get('name')))} (Projected) has no sources provided")
            continue
        found = _projection_paths(source)
        if found is not None:
            source_paths = found
        if not source_paths:
            continue
        for path, src in source_paths:
            ps = (path.rstrip("/"), src)
            if all_paths:
                for collision in check_for_overlap(all_paths, ps):
                    warnings.append(f"volume {go_quote(_s(volume.get('name')))} (Projected): overlapping paths: "
                                    f"{_ps_text(ps)} with {_ps_text(collision)}")
            all_paths.append(ps)


# ---- jobs ----------------------------------------------------------------------------------------


def warnings_for_job_spec(path: str, spec: Any, old_spec: Any = None, *,
                          git_repo_driver: bool = GIT_REPO_VOLUME_DRIVER) -> list[str]:
    """WarningsForJobSpec (pkg/registry/batch/job/warnings.go): an Indexed Job past the soft
    limits of completions (10^5) and parallelism (10^4), then its pod template's warnings."""
    spec = _d(spec)
    warnings: list[str] = []
    if spec.get("completionMode") == "Indexed" and _i(spec.get("completions")) > 100_000 \
            and _i(spec.get("parallelism")) > 10_000:
        warnings.append(f"{path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism "
                        "higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number "
                        "of indexes fail")
    old_template = _d(old_spec).get("template") if old_spec is not None else None
    warnings.extend(get_warnings_for_pod_template(f"{path}.template", _d(spec.get("template")), old_template,
                                                  git_repo_driver=git_repo_driver))
    return warnings


def dns_label_name_warning(obj: JsonDict, what: str) -> list[str]:
    """The `metadata.name` warning of workloads whose name becomes a hostname (`what` says how:
    "this is used in the Pod's hostname" / "this is used in Pod names and hostnames"); the
    IsDNS1123Label messages print as Go's `%v` of a []string."""
    name = _s(_d(obj.get("metadata")).get("name"))
    msgs = is_dns1123_label(name)
    if not msgs:
        return []
    return [f"metadata.name: {what}, which can result in surprising behavior; a DNS label is recommended: "
            f"[{' '.join(msgs)}]"]
