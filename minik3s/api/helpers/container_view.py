"""What a running container sees (layer L2): its process environment, the files the kubelet and
the runtime put in it, its hostname, working directory and user, as data for a simulated
`pods/exec` shell.

Why: `kubectl exec pod -- env`, `cat /etc/resolv.conf` or `ls /var/run/secrets/...` must print
what a real kubelet v1.33 + containerd node would. This module translates the kubelet's rules:

- environment: `makeEnvironmentVariables` (pkg/kubelet/kubelet_pods.go) with the service links of
  `getServiceEnvVarMap` / `envvars.FromServices`, `$(VAR)` expansion of
  third_party/forked/golang/expansion (`MappingFuncFor`, `Expand`), the downward API of
  `podFieldSelectorRuntimeValue` / `fieldpath.ExtractFieldPathAsString` and
  `resource.ExtractContainerResourceValue`; wrapped by what containerd and runc add (see
  `ENV ORDER` below);
- files: the volume plugins' payloads (pkg/volume/configmap, secret, downwardapi, projected
  `MakePayload`/`CollectData`), the kubelet's managed `/etc/hosts` (`managedHostsFileContent`,
  `nodeHostsFileContent`), containerd's `/etc/hostname` and `/etc/resolv.conf` built from the
  kubelet's DNS config (pkg/kubelet/network/dns `GetPodDNS`);
- hostname: `GeneratePodHostNameAndDomain` / `truncatePodHostnameIfNeeded`.

ENV ORDER. Upstream builds the kubelet's list by iterating Go maps (random order); the runtime
then starts from its default spec (`PATH=...`), sets `HOSTNAME=<sandbox hostname>`, appends the
image's env (unknown here: none) and the kubelet's list (replacing same-named entries in place),
and runc appends `HOME` (from /etc/passwd: `/root` for uid 0, `/` for an unknown uid) when unset.
This module keeps that shape with a deterministic order: PATH, HOSTNAME, then the kubelet's
variables in declaration order (`envFrom` sources in order with their keys sorted, then `env`),
then the remaining service variables (services sorted by name, FromServices order within one),
then HOME.

Errors: a missing non-optional ConfigMap/Secret (or key) raises `ContainerViewError` with the
kubelet's text: for `env`/`envFrom` the CreateContainerConfigError message (`configmap "x" not
found`, `couldn't find key k in ConfigMap ns/x`), for volumes the FailedMount event text
(`MountVolume.SetUp failed for volume "v" : configmap "x" not found`). Volumes are checked
first (the kubelet mounts every volume of the pod before it creates a container).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import math
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from minik3s.api.errors import go_quote
from minik3s.api.quantity import QuantityError, parse_quantity
from minik3s.api.types import JsonDict

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
DEFAULT_NODE_HOSTS = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
MANAGED_HOSTS_HEADER = "# Kubernetes-managed hosts file.\n"
MANAGED_HOSTS_HEADER_HOST_NETWORK = "# Kubernetes-managed hosts file (host network).\n"
ETC_HOSTS = "/etc/hosts"
ETC_HOSTNAME = "/etc/hostname"
ETC_RESOLV_CONF = "/etc/resolv.conf"
HOSTNAME_MAX_LEN = 63
MASTER_SERVICES = ("kubernetes",)
MAX_DNS_NAMESERVERS = 3
MAX_DNS_SEARCH_PATHS = 32  # ExpandedDNSConfig (GA since 1.28)
MAX_DNS_SEARCH_LIST_CHARS = 2048
DNS1123_SUBDOMAIN_MAX_LEN = 253
DEFAULT_DNS_OPTIONS = ("ndots:5",)
CREATE_CONTAINER_CONFIG_ERROR = "CreateContainerConfigError"
FAILED_MOUNT = "FailedMount"


class Lookup(Protocol):
    def get(self, resource: str, namespace: str, name: str) -> JsonDict | None: ...

    def services(self, namespace: str) -> list[JsonDict]: ...


@dataclass
class ContainerView:
    env: dict[str, str]
    files: dict[str, bytes]
    dirs: set[str]
    hostname: str
    workdir: str
    uid: int


class ContainerViewError(Exception):
    """The container cannot start: `reason` is the kubelet's (CreateContainerConfigError for env
    sources, FailedMount for volumes), `str(err)` its message."""

    def __init__(self, message: str, reason: str = CREATE_CONTAINER_CONFIG_ERROR) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class _Sources:
    """The ConfigMaps/Secrets read once per container (the kubelet's `configMaps`/`secrets` maps)."""

    lookup: Lookup
    namespace: str
    cache: dict[tuple[str, str], JsonDict | None] = field(default_factory=dict)

    def get(self, resource: str, name: str) -> JsonDict | None:
        key = (resource, name)
        if key not in self.cache:
            self.cache[key] = self.lookup.get(resource, self.namespace, name)
        return self.cache[key]


# ---- expansion (third_party/forked/golang/expansion) ------------------------------------------

def mapping_func_for(*contexts: Mapping[str, str]) -> Callable[[str], str]:
    """MappingFuncFor: the first context holding the name wins; unknown names stay `$(NAME)`."""
    def mapping(name: str) -> str:
        for ctx in contexts:
            if name in ctx:
                return ctx[name]
        return f"$({name})"
    return mapping


def _read_variable_name(rest: str) -> tuple[str, bool, int]:
    """tryReadVariableName on the text after a `$`: (text, is a variable, bytes consumed)."""
    if rest[0] == "$":
        return "$", False, 1
    if rest[0] == "(":
        close = rest.find(")", 1)
        if close != -1:
            return rest[1:close], True, close + 1
        return "$(", False, 1
    return "$" + rest[0], False, 1


def expand(text: str, mapping: Callable[[str], str]) -> str:
    """Expand: `$(VAR)` -> mapping(VAR), `$$` -> `$`, anything else after `$` kept as written.

    Examples: "$(A)-x" with A=1 -> "1-x"; "$$(A)" -> "$(A)"; "$(A" -> "$(A"; "$A" -> "$A"."""
    out: list[str] = []
    checkpoint = 0
    cursor = 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            read, is_var, advance = _read_variable_name(text[cursor + 1:])
            out.append(mapping(read) if is_var else read)
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(out) + text[checkpoint:]


# ---- service links (envvars.FromServices, getServiceEnvVarMap) --------------------------------

def _env_var_name(name: str) -> str:
    """makeEnvVariableName: upper case, `-` -> `_`. Example: "foo-bar" -> "FOO_BAR"."""
    return name.replace("-", "_").upper()


def _is_service_ip_set(service: JsonDict) -> bool:
    ip = (service.get("spec") or {}).get("clusterIP")
    return bool(ip) and ip != "None"


def _join_host_port(host: str, port: int) -> str:
    """net.JoinHostPort: IPv6 hosts in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _link_variables(prefix: str, ip: str, ports: list[JsonDict]) -> list[tuple[str, str]]:
    """makeLinkVariables: the Docker-compatible `<SVC>_PORT...` variables."""
    out: list[tuple[str, str]] = []
    for i, sp in enumerate(ports):
        protocol = str(sp.get("protocol") or "TCP")
        port = int(sp.get("port") or 0)
        url = f"{protocol.lower()}://{_join_host_port(ip, port)}"
        if i == 0:
            out.append((f"{prefix}_PORT", url))
        pp = f"{prefix}_PORT_{port}_{protocol.upper()}"
        out += [(pp, url), (f"{pp}_PROTO", protocol.lower()), (f"{pp}_PORT", str(port)), (f"{pp}_ADDR", ip)]
    return out


def from_services(services: list[JsonDict]) -> list[tuple[str, str]]:
    """FromServices: `<SVC>_SERVICE_HOST`, `_SERVICE_PORT`, `_SERVICE_PORT_<NAME>` per named
    port, then the link variables, for every service with a cluster IP, in the given order."""
    out: list[tuple[str, str]] = []
    for svc in services:
        if not _is_service_ip_set(svc):
            continue
        spec = svc.get("spec") or {}
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        if not ports:
            continue
        prefix = _env_var_name(str((svc.get("metadata") or {}).get("name") or ""))
        ip = str(spec["clusterIP"])
        out.append((f"{prefix}_SERVICE_HOST", ip))
        out.append((f"{prefix}_SERVICE_PORT", str(int(ports[0].get("port") or 0))))
        for sp in ports:
            if sp.get("name"):
                out.append((f"{prefix}_SERVICE_PORT_{_env_var_name(str(sp['name']))}", str(int(sp.get("port") or 0))))
        out += _link_variables(prefix, ip, ports)
    return out


def service_env_map(namespace: str, enable_service_links: bool, lookup: Lookup) -> dict[str, str]:
    """getServiceEnvVarMap: the `kubernetes` Service of `default` always, every Service of the
    pod's namespace when service links are on (a namespace's own `kubernetes` Service wins over
    the default one). Services are taken in name order (upstream: map order)."""
    chosen: dict[str, JsonDict] = {}
    for svc in lookup.services("default"):
        name = str((svc.get("metadata") or {}).get("name") or "")
        if name in MASTER_SERVICES and _is_service_ip_set(svc):
            chosen[name] = svc
    if enable_service_links:
        for svc in lookup.services(namespace):
            if _is_service_ip_set(svc):
                chosen[str((svc.get("metadata") or {}).get("name") or "")] = svc
    return dict(from_services([chosen[k] for k in sorted(chosen)]))


# ---- downward API (fieldpath, resource) -------------------------------------------------------

def format_map(values: Mapping[str, Any]) -> str:
    """FormatMap: `key="value"` lines in key order, no trailing newline."""
    return "\n".join(f"{k}={go_quote(str(values[k]))}" for k in sorted(values))


def _split_subscript(path: str) -> tuple[str, str] | None:
    """SplitMaybeSubscriptedPath: "metadata.labels['a']" -> ("metadata.labels", "a")."""
    if not path.endswith("']"):
        return None
    head, sep, sub = path[:-2].partition("['")
    return (head, sub) if sep and head else None


def extract_field_path(pod: JsonDict, path: str) -> str:
    """ExtractFieldPathAsString: metadata name/namespace/uid, labels, annotations (whole or one key)."""
    meta = pod.get("metadata") or {}
    sub = _split_subscript(path)
    if sub is not None:
        head, key = sub
        if head in ("metadata.labels", "metadata.annotations"):
            return str((meta.get(head.split(".")[1]) or {}).get(key, ""))
        raise ContainerViewError(f'fieldPath "{path}" does not support subscript')
    simple = {"metadata.name": "name", "metadata.namespace": "namespace", "metadata.uid": "uid"}
    if path in simple:
        return str(meta.get(simple[path]) or "")
    if path in ("metadata.labels", "metadata.annotations"):
        return format_map(meta.get(path.split(".")[1]) or {})
    raise ContainerViewError(f"unsupported fieldPath: {path}")


def _is_ipv4(ip: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(ip), ipaddress.IPv4Address)
    except ValueError:
        return False


def _is_ipv6(ip: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(ip), ipaddress.IPv6Address)
    except ValueError:
        return False


def sort_pod_ips(pod_ips: list[str], host_ips: list[str]) -> list[str]:
    """sortPodIPs: the first IP of the node's family, then the first of the other family.
    Example: node IPv4, ["fd00::6", "1.2.3.4"] -> ["1.2.3.4", "fd00::6"]."""
    v4_first = not host_ips or _is_ipv4(host_ips[0])
    checks = (_is_ipv4, _is_ipv6) if v4_first else (_is_ipv6, _is_ipv4)
    out: list[str] = []
    for check in checks:
        found = next((ip for ip in pod_ips if check(ip)), None)
        if found is not None:
            out.append(found)
    return out


def pod_ips_of(pod: JsonDict) -> list[str]:
    status = pod.get("status") or {}
    ips = [str(p.get("ip")) for p in status.get("podIPs") or [] if isinstance(p, dict) and p.get("ip")]
    return ips or ([str(status["podIP"])] if status.get("podIP") else [])


def host_ips_of(pod: JsonDict) -> list[str]:
    status = pod.get("status") or {}
    ips = [str(p.get("ip")) for p in status.get("hostIPs") or [] if isinstance(p, dict) and p.get("ip")]
    return ips or ([str(status["hostIP"])] if status.get("hostIP") else [])


def pod_field_value(pod: JsonDict, path: str, host_ips: list[str]) -> str:
    """podFieldSelectorRuntimeValue: spec/status fields, else ExtractFieldPathAsString."""
    spec = pod.get("spec") or {}
    ips = sort_pod_ips(pod_ips_of(pod), host_ips)
    values = {
        "spec.nodeName": str(spec.get("nodeName") or ""),
        "spec.serviceAccountName": str(spec.get("serviceAccountName") or ""),
        "status.hostIP": host_ips[0] if host_ips else "",
        "status.hostIPs": ",".join(host_ips),
        "status.podIP": ips[0] if ips else "",
        "status.podIPs": ",".join(ips),
    }
    if path in values:
        return values[path]
    return extract_field_path(pod, path)


def _quantity(value: Any) -> Fraction:
    try:
        return parse_quantity(value)
    except QuantityError:
        return Fraction(0)


def _merged_limits(container: JsonDict, node_allocatable: Mapping[str, Any] | None) -> dict[str, Any]:
    """MergeContainerResourceLimits: a missing or zero cpu/memory/ephemeral-storage limit becomes
    the node's allocatable (without one: the request, as this module's fallback)."""
    res = container.get("resources") or {}
    limits = dict(res.get("limits") or {})
    requests = res.get("requests") or {}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in limits and _quantity(limits[name]) != 0:
            continue
        if node_allocatable is not None and name in node_allocatable:
            limits[name] = node_allocatable[name]
        elif node_allocatable is None and name in requests:
            limits[name] = requests[name]
    return limits


def container_resource_value(selector: JsonDict, container: JsonDict,
                             node_allocatable: Mapping[str, Any] | None) -> str:
    """ExtractContainerResourceValue: ceil(value / divisor) (cpu in milli units), divisor 1 by default.
    Examples: limits.cpu 250m, divisor 1m -> "250"; limits.memory 64Mi, divisor 1Mi -> "64"; cpu 250m -> "1"."""
    resource = str(selector.get("resource") or "")
    kind, _, name = resource.partition(".")
    if kind not in ("limits", "requests") or not name:
        raise ContainerViewError(f"unsupported container resource : {resource}")
    source = _merged_limits(container, node_allocatable) if kind == "limits" else \
        ((container.get("resources") or {}).get("requests") or {})
    divisor = _quantity(selector.get("divisor") or 0) or Fraction(1)
    value = _quantity(source.get(name, 0))
    if name == "cpu":
        return str(math.ceil(math.ceil(value * 1000) / math.ceil(divisor * 1000)))
    if name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        return str(math.ceil(math.ceil(value) / math.ceil(divisor)))
    raise ContainerViewError(f"unsupported container resource : {resource}")


def _resource_container(pod: JsonDict, selector: JsonDict, default: JsonDict | None) -> JsonDict:
    """The container a resourceFieldRef names (findContainerInPod), or the current one."""
    name = selector.get("containerName")
    if not name and default is not None:
        return default
    spec = pod.get("spec") or {}
    for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        if isinstance(c, dict) and c.get("name") == name:
            return c
    raise ContainerViewError(f"container {name} not found")


# ---- environment (makeEnvironmentVariables) ---------------------------------------------------

def _decode_secret(value: Any) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        return str(value).encode()


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _is_optional(ref: JsonDict) -> bool:
    return ref.get("optional") is True


def _env_from(container: JsonDict, sources: _Sources) -> dict[str, str]:
    """The `envFrom` sources in order, each source's keys sorted, prefixed (no key is skipped:
    v1.30+ kubelets leave name checks to the API server)."""
    out: dict[str, str] = {}
    for ef in container.get("envFrom") or []:
        prefix = str(ef.get("prefix") or "")
        for ref_key, resource, singular in (("configMapRef", "configmaps", "configmap"),
                                            ("secretRef", "secrets", "secret")):
            ref = ef.get(ref_key)
            if not isinstance(ref, dict):
                continue
            obj = sources.get(resource, str(ref.get("name") or ""))
            if obj is None:
                if _is_optional(ref):
                    continue
                raise ContainerViewError(f'{singular} "{ref.get("name") or ""}" not found')
            for k, v in sorted(_string_data(obj, resource).items()):
                out[prefix + k] = v
    return out


def _string_data(obj: JsonDict, resource: str) -> dict[str, str]:
    """An env source's keys: a ConfigMap's `data`, a Secret's decoded `data`."""
    data = obj.get("data") or {}
    if resource == "secrets":
        return {str(k): _text(_decode_secret(v)) for k, v in data.items()}
    return {str(k): str(v) for k, v in data.items()}


def _key_ref_value(ref: JsonDict, resource: str, sources: _Sources) -> str | None:
    """configMapKeyRef / secretKeyRef: the value, None when optional and missing."""
    singular, kind = ("configmap", "ConfigMap") if resource == "configmaps" else ("secret", "Secret")
    name = str(ref.get("name") or "")
    key = str(ref.get("key") or "")
    obj = sources.get(resource, name)
    if obj is None:
        if _is_optional(ref):
            return None
        raise ContainerViewError(f'{singular} "{name}" not found')
    data = _string_data(obj, resource)
    if key not in data:
        if _is_optional(ref):
            return None
        raise ContainerViewError(f"couldn't find key {key} in {kind} {sources.namespace}/{name}")
    return data[key]


def _value_from(pod: JsonDict, container: JsonDict, source: JsonDict, sources: _Sources,
                host_ips: list[str], node_allocatable: Mapping[str, Any] | None) -> str | None:
    """One `valueFrom` (None: an optional source that is missing, the variable is left out)."""
    if isinstance(source.get("fieldRef"), dict):
        return pod_field_value(pod, str(source["fieldRef"].get("fieldPath") or ""), host_ips)
    if isinstance(source.get("resourceFieldRef"), dict):
        sel = source["resourceFieldRef"]
        return container_resource_value(sel, _resource_container(pod, sel, container), node_allocatable)
    if isinstance(source.get("configMapKeyRef"), dict):
        return _key_ref_value(source["configMapKeyRef"], "configmaps", sources)
    if isinstance(source.get("secretKeyRef"), dict):
        return _key_ref_value(source["secretKeyRef"], "secrets", sources)
    return ""


def make_environment_variables(pod: JsonDict, container: JsonDict, lookup: Lookup, *,
                               host_ips: list[str] | None = None,
                               node_allocatable: Mapping[str, Any] | None = None) -> dict[str, str]:
    """makeEnvironmentVariables: envFrom, then env (expanded against the variables so far and the
    service variables), then the service variables not already set."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    namespace = str(meta.get("namespace") or "default")
    hips = host_ips if host_ips is not None else host_ips_of(pod)
    service_env = service_env_map(namespace, spec.get("enableServiceLinks") is not False, lookup)
    sources = _Sources(lookup, namespace)
    env = _env_from(container, sources)
    mapping = mapping_func_for(env, service_env)
    for var in container.get("env") or []:
        value: str | None = str(var.get("value") or "")
        if value:
            value = expand(value, mapping)
        elif isinstance(var.get("valueFrom"), dict):
            value = _value_from(pod, container, var["valueFrom"], sources, hips, node_allocatable)
        if value is not None:
            env[str(var.get("name") or "")] = value
    for k, v in service_env.items():
        env.setdefault(k, v)
    return env


# ---- hostname and /etc/hosts ------------------------------------------------------------------

def truncate_hostname(hostname: str) -> str:
    """truncatePodHostnameIfNeeded: at most 63 characters, no trailing `-` or `.`."""
    if len(hostname) <= HOSTNAME_MAX_LEN:
        return hostname
    return hostname[:HOSTNAME_MAX_LEN].rstrip("-.")


def pod_hostname_and_domain(pod: JsonDict, cluster_domain: str) -> tuple[str, str]:
    """GeneratePodHostNameAndDomain: (spec.hostname or name, `<subdomain>.<ns>.svc.<domain>` or "")."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    hostname = truncate_hostname(str(spec.get("hostname") or meta.get("name") or ""))
    domain = ""
    if spec.get("subdomain"):
        domain = f"{spec['subdomain']}.{meta.get('namespace') or 'default'}.svc.{cluster_domain}"
    return hostname, domain


def host_aliases_entries(aliases: list[JsonDict]) -> str:
    """hostsEntriesFromHostAliases: a blank line, a comment, one tab-separated line per IP."""
    if not aliases:
        return ""
    lines = [f"{a.get('ip') or ''}\t" + "\t".join(a.get("hostnames") or []) for a in aliases]
    return "\n# Entries added by HostAliases.\n" + "".join(line + "\n" for line in lines)


def managed_hosts_file_content(host_ips: list[str], hostname: str, domain: str,
                               aliases: list[JsonDict]) -> str:
    """managedHostsFileContent: localhost lines, the pod's IPs with its (fully qualified) name."""
    text = (MANAGED_HOSTS_HEADER + "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            "fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
    for ip in host_ips:
        text += f"{ip}\t{hostname}.{domain}\t{hostname}\n" if domain else f"{ip}\t{hostname}\n"
    return text + host_aliases_entries(aliases)


def node_hosts_file_content(node_hosts: str, aliases: list[JsonDict]) -> str:
    """nodeHostsFileContent: a host-network pod sees the node's /etc/hosts under a header."""
    return MANAGED_HOSTS_HEADER_HOST_NETWORK + node_hosts + host_aliases_entries(aliases)


# ---- DNS (GetPodDNS + containerd's resolv.conf) -----------------------------------------------

@dataclass
class DnsConfig:
    servers: list[str]
    searches: list[str]
    options: list[str]


def parse_resolv_conf(text: str) -> DnsConfig:
    """parseResolvConf: nameservers accumulate; the last `search`/`options` line wins."""
    cfg = DnsConfig([], [], [])
    for line in text.split("\n"):
        fields = line.strip().split()
        if not fields or fields[0].startswith("#"):
            continue
        if fields[0] == "nameserver" and len(fields) >= 2:
            cfg.servers.append(fields[1])
        elif fields[0] == "search":
            cfg.searches = [s.removesuffix(".") for s in fields[1:]]
        elif fields[0] == "options":
            cfg.options = fields[1:]
    return cfg


def _omit_duplicates(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _merge_dns_options(existing: list[str], extra: list[JsonDict]) -> list[str]:
    """mergeDNSOptions: the pod's options override same-named ones (upstream order: map order;
    here existing options first, new ones after)."""
    opts: dict[str, str] = {}
    for text in existing:
        name, _, value = text.partition(":")
        opts[name] = value
    for op in extra:
        opts[str(op.get("name") or "")] = str(op.get("value") or "")
    return [f"{k}:{v}" if v else k for k, v in opts.items()]


def _fit_searches(searches: list[str]) -> list[str]:
    """formDNSSearchFitsLimits: at most 32 paths, none over 253 chars, the line within 2048."""
    kept = [s for s in searches[:MAX_DNS_SEARCH_PATHS] if len(s) <= DNS1123_SUBDOMAIN_MAX_LEN]
    while kept and len(" ".join(kept)) > MAX_DNS_SEARCH_LIST_CHARS:
        kept.pop()
    return kept


def pod_dns_config(pod: JsonDict, cluster_dns: str, cluster_domain: str, host_resolv_conf: str) -> DnsConfig:
    """GetPodDNS: None -> empty base; ClusterFirst (not host network) / ClusterFirstWithHostNet ->
    cluster DNS with the cluster search path and ndots:5; Default (or ClusterFirst on the host
    network) -> the host's resolv.conf; then `dnsConfig` appended."""
    spec = pod.get("spec") or {}
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    host = parse_resolv_conf(host_resolv_conf)
    cluster = policy == "ClusterFirstWithHostNet" or (policy == "ClusterFirst" and not spec.get("hostNetwork"))
    if policy == "None":
        cfg = DnsConfig([], [], [])
    elif cluster and cluster_dns:
        search = host.searches
        if cluster_domain:
            ns = (pod.get("metadata") or {}).get("namespace") or "default"
            search = _omit_duplicates([f"{ns}.svc.{cluster_domain}", f"svc.{cluster_domain}", cluster_domain]
                                      + host.searches)
        cfg = DnsConfig([cluster_dns], search, list(DEFAULT_DNS_OPTIONS))
    else:
        cfg = host
    extra = spec.get("dnsConfig")
    if isinstance(extra, dict):
        cfg = DnsConfig(_omit_duplicates(cfg.servers + list(extra.get("nameservers") or [])),
                        _omit_duplicates(cfg.searches + list(extra.get("searches") or [])),
                        _merge_dns_options(cfg.options, list(extra.get("options") or [])))
    return DnsConfig(cfg.servers[:MAX_DNS_NAMESERVERS], _fit_searches(cfg.searches), cfg.options)


def resolv_conf_content(cfg: DnsConfig) -> str:
    """containerd's parseDNSOptions: `search`, one `nameserver` line each, `options`."""
    text = f"search {' '.join(cfg.searches)}\n" if cfg.searches else ""
    text += "".join(f"nameserver {s}\n" for s in cfg.servers)
    return text + (f"options {' '.join(cfg.options)}\n" if cfg.options else "")


# ---- volumes (MakePayload / CollectData) ------------------------------------------------------

def _mount_error(volume: str, message: str) -> ContainerViewError:
    return ContainerViewError(f'MountVolume.SetUp failed for volume "{volume}" : {message}', FAILED_MOUNT)


def _configmap_data(obj: JsonDict) -> dict[str, bytes]:
    data = {str(k): str(v).encode() for k, v in (obj.get("data") or {}).items()}
    for k, v in (obj.get("binaryData") or {}).items():
        data[str(k)] = _decode_secret(v)
    return data


def _key_payload(data: dict[str, bytes], items: list[JsonDict], optional: bool, missing_key: str) -> dict[str, bytes]:
    """MakePayload: every key, or only `items` (key -> path); a missing item key fails unless optional."""
    if not items:
        return dict(data)
    out: dict[str, bytes] = {}
    for item in items:
        key = str(item.get("key") or "")
        if key not in data:
            if optional:
                continue
            raise ContainerViewError(f"{missing_key}: {key}")
        out[str(item.get("path") or key)] = data[key]
    return out


def _object_payload(src: JsonDict, resource: str, sources: _Sources, ca_crt: bytes | None) -> dict[str, bytes]:
    """A configMap/secret volume source (or projection): its files."""
    name_field = "secretName" if resource == "secrets" and "secretName" in src else "name"
    name = str(src.get(name_field) or "")
    obj = sources.get(resource, name)
    optional = _is_optional(src)
    if obj is None and resource == "configmaps" and name == "kube-root-ca.crt" and ca_crt is not None:
        obj = {"data": {"ca.crt": ca_crt.decode()}}
    if obj is None:
        if optional:
            return {}
        raise ContainerViewError(f'{"secret" if resource == "secrets" else "configmap"} "{name}" not found')
    if resource == "secrets":
        data = {str(k): _decode_secret(v) for k, v in (obj.get("data") or {}).items()}
        return _key_payload(data, list(src.get("items") or []), optional, "references non-existent secret key")
    return _key_payload(_configmap_data(obj), list(src.get("items") or []), optional,
                        "configmap references non-existent config key")


def _downward_payload(pod: JsonDict, items: list[JsonDict],
                      node_allocatable: Mapping[str, Any] | None) -> dict[str, bytes]:
    """downwardapi CollectData: fieldRef (metadata only) and resourceFieldRef items."""
    out: dict[str, bytes] = {}
    for item in items:
        path = str(item.get("path") or "")
        if isinstance(item.get("fieldRef"), dict):
            out[path] = extract_field_path(pod, str(item["fieldRef"].get("fieldPath") or "")).encode()
        elif isinstance(item.get("resourceFieldRef"), dict):
            sel = item["resourceFieldRef"]
            out[path] = container_resource_value(sel, _resource_container(pod, sel, None), node_allocatable).encode()
    return out


def _projected_payload(pod: JsonDict, src: JsonDict, sources: _Sources, token: str | None,
                       ca_crt: bytes | None, node_allocatable: Mapping[str, Any] | None) -> dict[str, bytes]:
    """projected collectData: each source's files, in order (later paths overwrite)."""
    out: dict[str, bytes] = {}
    for s in src.get("sources") or []:
        if isinstance(s.get("secret"), dict):
            out.update(_object_payload(s["secret"], "secrets", sources, ca_crt))
        elif isinstance(s.get("configMap"), dict):
            out.update(_object_payload(s["configMap"], "configmaps", sources, ca_crt))
        elif isinstance(s.get("downwardAPI"), dict):
            out.update(_downward_payload(pod, list(s["downwardAPI"].get("items") or []), node_allocatable))
        elif isinstance(s.get("serviceAccountToken"), dict) and token is not None:
            out[str(s["serviceAccountToken"].get("path") or "token")] = token.encode()
    return out


def volume_payload(pod: JsonDict, volume: JsonDict, sources: _Sources, *, token: str | None,
                   ca_crt: bytes | None, node_allocatable: Mapping[str, Any] | None) -> dict[str, bytes]:
    """The files a volume holds (relative path -> content); {} for directory-only volumes."""
    name = str(volume.get("name") or "")
    try:
        if isinstance(volume.get("configMap"), dict):
            return _object_payload(volume["configMap"], "configmaps", sources, ca_crt)
        if isinstance(volume.get("secret"), dict):
            return _object_payload(volume["secret"], "secrets", sources, ca_crt)
        if isinstance(volume.get("downwardAPI"), dict):
            return _downward_payload(pod, list(volume["downwardAPI"].get("items") or []), node_allocatable)
        if isinstance(volume.get("projected"), dict):
            return _projected_payload(pod, volume["projected"], sources, token, ca_crt, node_allocatable)
    except ContainerViewError as err:
        raise _mount_error(name, str(err)) from None
    return {}


def _parent_dirs(path: str, root: str) -> set[str]:
    """The directories between `root` (included) and `path` (excluded)."""
    out = {root}
    parent = posixpath.dirname(path)
    while parent.startswith(root) and parent != root:
        out.add(parent)
        parent = posixpath.dirname(parent)
    return out


def _mount(view: ContainerView, mount_path: str, sub_path: str, payload: dict[str, bytes]) -> None:
    """Place a volume's payload at its mount point (a subPath mounts one file or directory)."""
    prefix = sub_path.strip("/")
    if prefix and prefix in payload:
        view.files[mount_path] = payload[prefix]
        view.dirs |= _parent_dirs(mount_path, posixpath.dirname(mount_path) or "/") - {"/"}
        return
    view.dirs.add(mount_path)
    for rel, content in payload.items():
        if prefix:
            if not rel.startswith(prefix + "/"):
                continue
            rel = rel[len(prefix) + 1:]
        full = posixpath.join(mount_path, rel)
        view.files[full] = content
        view.dirs |= _parent_dirs(full, mount_path)


# ---- the view ---------------------------------------------------------------------------------

def _find_container(pod: JsonDict, name: str) -> JsonDict:
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict) and c.get("name") == name:
                return c
    raise ContainerViewError(f'container "{name}" not found in pod', "NotFound")


def _run_as_user(pod: JsonDict, container: JsonDict) -> int:
    for ctx in (container.get("securityContext"), (pod.get("spec") or {}).get("securityContext")):
        if isinstance(ctx, dict) and isinstance(ctx.get("runAsUser"), int):
            return int(ctx["runAsUser"])
    return 0


def _volume_payloads(pod: JsonDict, sources: _Sources, **kw: Any) -> dict[str, dict[str, bytes]]:
    """Every pod volume's payload (the kubelet mounts them all before any container starts)."""
    return {str(v.get("name") or ""): volume_payload(pod, v, sources, **kw)
            for v in (pod.get("spec") or {}).get("volumes") or [] if isinstance(v, dict)}


def _system_files(view: ContainerView, pod: JsonDict, container: JsonDict, domain: str, *,
                  cluster_dns: str, cluster_domain: str, host_resolv_conf: str, node_hosts: str) -> None:
    """/etc/hosts (kubelet), /etc/hostname and /etc/resolv.conf (containerd), unless a volume
    is mounted there."""
    spec = pod.get("spec") or {}
    mounted = {str(m.get("mountPath") or "") for m in container.get("volumeMounts") or []}
    aliases = [a for a in spec.get("hostAliases") or [] if isinstance(a, dict)]
    ips = pod_ips_of(pod)
    if ETC_HOSTS not in mounted and (ips or spec.get("hostNetwork")):
        text = node_hosts_file_content(node_hosts, aliases) if spec.get("hostNetwork") else \
            managed_hosts_file_content(ips, view.hostname, domain, aliases)
        view.files[ETC_HOSTS] = text.encode()
    if ETC_HOSTNAME not in mounted:
        view.files[ETC_HOSTNAME] = (view.hostname + "\n").encode()
    if ETC_RESOLV_CONF not in mounted:
        text = resolv_conf_content(pod_dns_config(pod, cluster_dns, cluster_domain, host_resolv_conf))
        view.files[ETC_RESOLV_CONF] = (text or host_resolv_conf).encode()


def _runtime_env(kubelet_env: dict[str, str], hostname: str, uid: int) -> dict[str, str]:
    """containerd + runc around the kubelet's list: PATH, HOSTNAME first, HOME last if unset."""
    env = {"PATH": DEFAULT_PATH, "HOSTNAME": hostname}
    env.update(kubelet_env)
    env.setdefault("HOME", "/root" if uid == 0 else "/")
    return env


def container_view(pod: JsonDict, container_name: str, lookup: Lookup, *, token: str | None,
                   ca_crt: bytes | None, cluster_dns: str, cluster_domain: str = "cluster.local",
                   node_allocatable: Mapping[str, Any] | None = None, host_ips: list[str] | None = None,
                   host_resolv_conf: str = "", node_hosts: str = DEFAULT_NODE_HOSTS,
                   node_hostname: str | None = None) -> ContainerView:
    """What `container_name` of `pod` sees once started (GenerateRunContainerOptions + the
    runtime). `host_ips` default to status.hostIPs; `node_allocatable` is the node's
    status.allocatable (limits fallback of resourceFieldRef); `host_resolv_conf`/`node_hosts`
    are the node's files (Default DNS policy, host network); `node_hostname` (default
    spec.nodeName) is the hostname of host-network pods."""
    container = _find_container(pod, container_name)
    spec = pod.get("spec") or {}
    namespace = str((pod.get("metadata") or {}).get("namespace") or "default")
    sources = _Sources(lookup, namespace)
    payloads = _volume_payloads(pod, sources, token=token, ca_crt=ca_crt, node_allocatable=node_allocatable)
    hostname, domain = pod_hostname_and_domain(pod, cluster_domain)
    if spec.get("hostNetwork"):
        hostname = node_hostname or str(spec.get("nodeName") or hostname)
    uid = _run_as_user(pod, container)
    kubelet_env = make_environment_variables(pod, container, lookup, host_ips=host_ips,
                                             node_allocatable=node_allocatable)
    view = ContainerView(env=_runtime_env(kubelet_env, hostname, uid), files={}, dirs=set(),
                         hostname=hostname, workdir=str(container.get("workingDir") or "/"), uid=uid)
    for m in container.get("volumeMounts") or []:
        if isinstance(m, dict):
            _mount(view, str(m.get("mountPath") or ""), str(m.get("subPath") or ""),
                   payloads.get(str(m.get("name") or ""), {}))
    _system_files(view, pod, container, domain, cluster_dns=cluster_dns, cluster_domain=cluster_domain,
                  host_resolv_conf=host_resolv_conf, node_hosts=node_hosts)
    return view
