"""Service strategy (layer L4, apiserver): defaults (type ClusterIP, sessionAffinity None,
ports protocol TCP, targetPort = port, internalTrafficPolicy Cluster) and the common checks of
ValidateService. Service names are DNS-1035 labels. Cluster IP and node port allocation is the
registry's job: `service_alloc`, called by apiserver.core on create and update.

Warnings (GetWarningsForService, pkg/api/service/warnings.go, v1.33), on create and update: the
deprecated topology-aware-hints annotation, non-standard or non-canonical IPs in clusterIPs (when
set), externalIPs and loadBalancerIP and CIDRs in loadBalancerSourceRanges (`net_warnings`), and
externalIPs / externalName set where the type ignores them."""

from __future__ import annotations

from dataclasses import dataclass

from minik3s.api import errors
from minik3s.api.helpers.ip_addresses import cluster_ips, ip_address_object, service_ref
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    duplicate,
    forbidden,
    invalid,
    is_dns1123_label,
    is_dns1123_subdomain,
    not_supported,
    required,
    type_invalid,
    validate_labels,
)

from . import service_alloc
from .base import Strategy, as_dict, as_list
from .net_warnings import (
    CIDR_MSG,
    IP_MSG,
    get_warnings_for_cidr,
    get_warnings_for_ip,
    parse_cidr_sloppy,
    parse_ip_sloppy,
)
from .podspec import PROTOCOLS, is_valid_port_name
from .rest import FinishFunc, RegistryOps

SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
SESSION_AFFINITIES = ("ClientIP", "None")
TRAFFIC_POLICIES = ("Cluster", "Local")
# api.DeprecatedAnnotationTopologyAwareHints and the annotation that replaces it
DEPRECATED_TOPOLOGY_HINTS = "service.kubernetes.io/topology-aware-hints"
TOPOLOGY_MODE = "service.kubernetes.io/topology-mode"


@dataclass(slots=True)
class Reservations(service_alloc.Used):
    """Cluster IPs / node ports handed to Service creates that are not committed yet (one per
    registry, through `RegistryOps.hook_state`)."""


class ServiceStrategy(Strategy):
    kind = "Service"
    has_status = True
    name_format = "dns1035"
    return_deleted_object = True

    def begin_create(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> FinishFunc | None:
        """The service REST's allocation step: a cluster IP and node ports for a new Service,
        reserved until the create is committed or failed (so concurrent creates never get the
        same IP); 422 when a requested IP/port is taken or out of range."""
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return None
        reserved = ops.hook_state(Reservations)
        used = service_alloc.used_from_services(ops.stored(info))
        used.ips |= reserved.ips | _ip_addresses(ops)
        used.node_ports |= reserved.node_ports
        before = service_alloc.Used(set(used.ips), set(used.node_ports))
        causes = service_alloc.allocate(spec, used, ops.rng, _ranges(ops))
        if causes:
            raise errors.invalid(info.kind, as_dict(obj.get("metadata")).get("name") or "", causes, info.group)
        mine = service_alloc.Used(used.ips - before.ips, used.node_ports - before.node_ports)
        reserved.ips |= mine.ips
        reserved.node_ports |= mine.node_ports

        def release(_committed: bool) -> None:
            reserved.ips.difference_update(mine.ips)
            reserved.node_ports.difference_update(mine.node_ports)

        return release

    def begin_update(self, ops: RegistryOps, info: ResourceInfo, new: JsonDict, old: JsonDict) -> None:
        """Keep/allocate node ports and the cluster IP when a Service changes type or ports.
        (The write that follows is a compare-and-swap on this object, so nothing is reserved.)"""
        nspec, ospec = new.get("spec"), old.get("spec")
        if not isinstance(nspec, dict) or not isinstance(ospec, dict):
            return
        uid = as_dict(old.get("metadata")).get("uid")
        others = [s for s in ops.stored(info) if as_dict(s.get("metadata")).get("uid") != uid]
        used = service_alloc.used_from_services(others)
        reserved = ops.hook_state(Reservations)
        own = {str(ip) for ip in ospec.get("clusterIPs") or [ospec.get("clusterIP")] if ip and ip != "None"}
        used.ips |= reserved.ips | (_ip_addresses(ops) - own)
        used.node_ports |= reserved.node_ports
        causes = service_alloc.allocate_update(nspec, ospec, used, ops.rng, _ranges(ops))
        if causes:
            raise errors.invalid(info.kind, as_dict(new.get("metadata")).get("name") or "", causes, info.group)

    async def after_create(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> JsonDict:
        await _sync_ip_addresses(ops, obj, None)
        return obj

    async def after_update(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> None:
        await _sync_ip_addresses(ops, obj, None)

    async def after_delete(self, ops: RegistryOps, info: ResourceInfo, obj: JsonDict) -> None:
        await _sync_ip_addresses(ops, None, obj)

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if not spec.get("type"):
            spec["type"] = "ClusterIP"
        if not spec.get("sessionAffinity"):
            spec["sessionAffinity"] = "None"
        for p in as_list(spec.get("ports")):
            if not isinstance(p, dict):
                continue
            if not p.get("protocol"):
                p["protocol"] = "TCP"
            if p.get("targetPort") in (None, 0, "") and isinstance(p.get("port"), int):
                p["targetPort"] = p["port"]
        if spec["type"] != "ExternalName" and not spec.get("internalTrafficPolicy"):
            spec["internalTrafficPolicy"] = "Cluster"
        if spec["type"] in ("NodePort", "LoadBalancer") and not spec.get("externalTrafficPolicy"):
            spec["externalTrafficPolicy"] = "Cluster"
        if spec.get("sessionAffinity") == "ClientIP" and not spec.get("sessionAffinityConfig"):
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj["status"] = {"loadBalancer": {}}
        spec = obj.get("spec")
        if isinstance(spec, dict) and spec.get("type") != "ExternalName":
            # what the service REST layer fills for a single-stack IPv4 cluster
            if not spec.get("ipFamilyPolicy"):
                spec["ipFamilyPolicy"] = "SingleStack"
            if not spec.get("ipFamilies"):
                spec["ipFamilies"] = ["IPv4"]

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [type_invalid("spec", spec, "must be an object")] if spec is not None else []
        errs: list[JsonDict] = []
        stype = spec.get("type")
        if stype not in SERVICE_TYPES:
            errs.append(not_supported("spec.type", stype, SERVICE_TYPES))
        ports = as_list(spec.get("ports"))
        if not ports and stype != "ExternalName" and spec.get("clusterIP") != "None":
            errs.append(required("spec.ports", ""))
        names: set[str] = set()
        seen: set[tuple[object, object]] = set()
        for i, p in enumerate(ports):
            pp = f"spec.ports[{i}]"
            if not isinstance(p, dict):
                errs.append(type_invalid(pp, p, "must be an object"))
                continue
            name = p.get("name") or ""
            if len(ports) > 1 and not name:
                errs.append(required(f"{pp}.name", ""))
            elif name:
                errs.extend(invalid(f"{pp}.name", name, m) for m in is_dns1123_label(name))
                if name in names:
                    errs.append(duplicate(f"{pp}.name", name))
                names.add(name)
            port = p.get("port")
            if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
                errs.append(invalid(f"{pp}.port", port, "must be between 1 and 65535, inclusive"))
            proto = p.get("protocol")
            if proto not in PROTOCOLS:
                errs.append(not_supported(f"{pp}.protocol", proto, PROTOCOLS))
            if (port, proto) in seen:
                errs.append(duplicate(pp, {"port": port, "protocol": proto}))
            seen.add((port, proto))
            tp = p.get("targetPort")
            if isinstance(tp, int) and not isinstance(tp, bool) and not 1 <= tp <= 65535:
                errs.append(invalid(f"{pp}.targetPort", tp, "must be between 1 and 65535, inclusive"))
            elif isinstance(tp, str) and tp:
                errs.extend(invalid(f"{pp}.targetPort", tp, m) for m in is_valid_port_name(tp))
        sa = spec.get("sessionAffinity")
        if sa not in SESSION_AFFINITIES:
            errs.append(not_supported("spec.sessionAffinity", sa, SESSION_AFFINITIES))
        elif sa == "ClientIP":
            timeout = as_dict(as_dict(spec.get("sessionAffinityConfig")).get("clientIP")).get("timeoutSeconds")
            if isinstance(timeout, int) and not isinstance(timeout, bool) and not 0 < timeout <= MAX_CLIENT_IP_SECONDS:
                errs.append(invalid("spec.sessionAffinityConfig.clientIP.timeoutSeconds", timeout,
                                    f"must be greater than 0 and less than {MAX_CLIENT_IP_SECONDS}"))
        errs.extend(_address_errors(spec, stype))
        for key in ("internalTrafficPolicy", "externalTrafficPolicy"):
            v = spec.get(key)
            if v is not None and v not in TRAFFIC_POLICIES:
                errs.append(not_supported(f"spec.{key}", v, TRAFFIC_POLICIES))
        errs.extend(validate_labels(spec.get("selector"), "spec.selector"))
        if stype == "ExternalName":
            en = spec.get("externalName")
            if not en:
                errs.append(required("spec.externalName", ""))
            elif isinstance(en, str):
                errs.extend(invalid("spec.externalName", en, m) for m in is_dns1123_subdomain(en))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        ns, os_ = as_dict(new.get("spec")), as_dict(old.get("spec"))
        old_ip = os_.get("clusterIP")
        if old_ip and ns.get("clusterIP") not in (None, "", old_ip) and ns.get("type") != "ExternalName":
            return [invalid("spec.clusterIPs[0]", ns.get("clusterIP"), "may not change once set")]
        return []

    def _prepare_for_update(self, new: JsonDict, old: JsonDict) -> None:
        ns, os_ = new.get("spec"), as_dict(old.get("spec"))
        if isinstance(ns, dict):
            for key in ("clusterIP", "clusterIPs"):
                if key in os_ and not ns.get(key):
                    ns[key] = os_[key]

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        return get_warnings_for_service(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        return get_warnings_for_service(new)


MAX_CLIENT_IP_SECONDS = 86400  # core.MaxClientIPServiceAffinitySeconds


def _special_ip(ip: bytes, text: str) -> str | None:
    """ValidateNonSpecialIP's refusal of an address (packed, 4 or 16 bytes; `text` as sent), or
    None."""
    v4 = ip[12:] if len(ip) == 16 and ip[:12] == b"\0" * 10 + b"\xff\xff" else ip if len(ip) == 4 else None
    if (v4 is not None and v4 == b"\0\0\0\0") or ip == b"\0" * 16:
        return f"may not be unspecified ({text})"
    if (v4 is not None and v4[0] == 127) or ip == b"\0" * 15 + b"\1":
        return "may not be in the loopback range (127.0.0.0/8, ::1/128)"
    if (v4 is not None and v4[:2] == b"\xa9\xfe") or (v4 is None and ip[0] == 0xfe and ip[1] & 0xc0 == 0x80):
        return "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
    if (v4 is not None and v4[:3] == b"\xe0\0\0") or (v4 is None and ip[0] == 0xff and ip[1] & 0x0f == 0x02):
        return "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
    return None


def _address_errors(spec: JsonDict, stype: object) -> list[JsonDict]:
    """ValidateService's address rules: a headless Service is neither NodePort nor LoadBalancer,
    ipFamilies has no repeated family, externalIPs are valid and not special, and
    loadBalancerSourceRanges (LoadBalancer only) are CIDRs."""
    errs: list[JsonDict] = []
    if spec.get("clusterIP") == "None" and stype in ("LoadBalancer", "NodePort"):
        errs.append(invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {stype} services"))
    seen: set[object] = set()
    for i, fam in enumerate(as_list(spec.get("ipFamilies"))):
        if fam in seen:
            errs.append(duplicate(f"spec.ipFamilies[{i}]", fam))
        seen.add(fam)
    for i, ip in enumerate(as_list(spec.get("externalIPs"))):
        path = f"spec.externalIPs[{i}]"
        packed = parse_ip_sloppy(ip) if isinstance(ip, str) else None
        if packed is None:
            errs.append(invalid(path, ip, IP_MSG))
        elif (problem := _special_ip(packed, ip)) is not None:
            errs.append(invalid(path, ip, problem))
    ranges = as_list(spec.get("loadBalancerSourceRanges"))
    if ranges:
        if stype != "LoadBalancer":
            errs.append(forbidden("spec.loadBalancerSourceRanges", "may only be used when `type` is 'LoadBalancer'"))
        for i, cidr in enumerate(ranges):
            if not isinstance(cidr, str) or parse_cidr_sloppy(cidr.strip()) is None:
                errs.append(invalid(f"spec.loadBalancerSourceRanges[{i}]", cidr, CIDR_MSG))
    return errs


# ---- the IPAddress objects of the multi-CIDR allocator (KEP-1880) ----------------------------------

def _info(ops: RegistryOps, resource: str) -> ResourceInfo | None:
    return ops.registry.get("networking.k8s.io", "v1", resource)


def _ranges(ops: RegistryOps) -> list[service_alloc.Network] | None:
    """The ready ServiceCIDRs' ranges; None (K3s' default range) while none exists at all (an API
    without the server's bootstrap)."""
    info = _info(ops, "servicecidrs")
    if info is None:
        return None
    cidrs = ops.stored(info)
    return service_alloc.ready_cidrs(cidrs) if cidrs else None


def _ip_addresses(ops: RegistryOps) -> set[str]:
    info = _info(ops, "ipaddresses")
    if info is None:
        return set()
    return {str(as_dict(o.get("metadata")).get("name")) for o in ops.stored(info)}


async def _sync_ip_addresses(ops: RegistryOps, svc: JsonDict | None, gone: JsonDict | None) -> None:
    """Keep one IPAddress per cluster IP of `svc` (created once the Service is stored; looked up
    by name, no scan) and delete the ones a deleted Service `gone` held (Release). A Service
    updated to hold none (ExternalName) releases what still names it (the only scan, and rare)."""
    info = _info(ops, "ipaddresses")
    if info is None:
        return
    owner = svc if svc is not None else gone
    meta = as_dict(as_dict(owner).get("metadata"))
    ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    ref = service_ref(ns, name)
    want = cluster_ips(svc)
    for ip in want:
        try:
            ops.get(info, None, ip)
            continue
        except errors.NotFoundError:
            pass
        try:
            await ops.create(info, None, ip_address_object(ip, ns, name))
        except errors.AlreadyExistsError:
            pass  # the repair at start (or an earlier holder) wrote it
    if gone is not None:
        release = [ip for ip in cluster_ips(gone) if _held_by(ops, info, ip, ref)]
    elif not want:
        release = [str(as_dict(o.get("metadata")).get("name")) for o in ops.stored(info)
                   if as_dict(o.get("spec")).get("parentRef") == ref]
    else:
        release = []
    for ip in release:
        try:
            await ops.delete(info, None, ip)
        except errors.NotFoundError:
            pass


def _held_by(ops: RegistryOps, info: ResourceInfo, ip: str, ref: JsonDict) -> bool:
    try:
        return as_dict(ops.get(info, None, ip).get("spec")).get("parentRef") == ref
    except errors.NotFoundError:
        return False


def _ip_list_warnings(values: object, path: str) -> list[str]:
    return [w for i, ip in enumerate(values if isinstance(values, list) else [])
            if isinstance(ip, str) for w in get_warnings_for_ip(f"{path}[{i}]", ip)]


def get_warnings_for_service(svc: JsonDict) -> list[str]:
    """GetWarningsForService, in upstream's order."""
    warnings: list[str] = []
    annotations = as_dict(as_dict(svc.get("metadata")).get("annotations"))
    if DEPRECATED_TOPOLOGY_HINTS in annotations:
        warnings.append(f"annotation {DEPRECATED_TOPOLOGY_HINTS} is deprecated, please use {TOPOLOGY_MODE} instead")
    spec = as_dict(svc.get("spec"))
    cluster_ip = spec.get("clusterIP")
    if isinstance(cluster_ip, str) and cluster_ip not in ("", "None"):  # helper.IsServiceIPSet
        warnings.extend(_ip_list_warnings(spec.get("clusterIPs"), "spec.clusterIPs"))
    warnings.extend(_ip_list_warnings(spec.get("externalIPs"), "spec.externalIPs"))
    lb_ip = spec.get("loadBalancerIP")
    if isinstance(lb_ip, str) and lb_ip:
        warnings.extend(get_warnings_for_ip("spec.loadBalancerIP", lb_ip))
    for i, cidr in enumerate(as_list(spec.get("loadBalancerSourceRanges"))):
        if isinstance(cidr, str):
            warnings.extend(get_warnings_for_cidr(f"spec.loadBalancerSourceRanges[{i}]", cidr))
    stype = spec.get("type")
    if stype == "ExternalName" and as_list(spec.get("externalIPs")):
        warnings.append('spec.externalIPs is ignored when spec.type is "ExternalName"')
    if stype != "ExternalName" and spec.get("externalName"):
        warnings.append('spec.externalName is ignored when spec.type is not "ExternalName"')
    return warnings
