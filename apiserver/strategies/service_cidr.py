"""ServiceCIDR and IPAddress strategies (layer L4, apiserver): networking.k8s.io/v1, KEP-1880 (GA
and on by default in Kubernetes 1.33), pkg/apis/networking/validation and
pkg/registry/networking/{servicecidr,ipaddress}.

ServiceCIDR: `spec.cidrs` holds one or two CIDRs (one per IP family) in strict, canonical form;
on update a CIDR never changes, but a single-stack range may gain its second family (cidrs[0]
kept). Its status (the Ready condition) is written by the controllers through `status`, whose
conditions are not validated (the default one's condition has an empty reason). Overlapping
ServiceCIDRs are allowed. IPAddress: the name is an IP in canonical form, `spec.parentRef` names
the holder (resource and name required, group a DNS subdomain when set) and never changes.
Neither strategy clears status or fields on create or update, as upstream's.

Data flow: core create/update -> validate / validate_update -> storage; the Service strategy
allocates from ServiceCIDRs and keeps one IPAddress per cluster IP (`service.py`).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from minik3s.api.types import JsonDict
from minik3s.api.validation import invalid, is_dns1123_subdomain, required, validate_object_meta

from .base import Strategy, as_dict, as_list
from .net_warnings import _parse_addr_strict, _parse_prefix_strict, parse_cidr_sloppy, parse_ip_sloppy

IP_INVALID = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
CIDR_INVALID = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
IMMUTABLE = "field is immutable"
ONE_PER_FAMILY = "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"


def ip_problems(value: Any) -> list[str]:
    """apimachinery's strict IsValidIP: the detail messages (none for a canonical address)."""
    text = value if isinstance(value, str) else ""
    if parse_ip_sloppy(text) is None:
        return [IP_INVALID]
    addr = _parse_addr_strict(text)
    if addr is None:
        return ["must not have leading 0s"]
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return ["must not be an IPv4-mapped IPv6 address"]
    if str(addr) != text:
        return [f'must be in canonical form ("{addr}")']
    return []


def cidr_problems(value: Any) -> list[str]:
    """apimachinery's strict IsValidCIDR: the detail messages (none for a canonical prefix)."""
    text = value if isinstance(value, str) else ""
    if parse_cidr_sloppy(text) is None:
        return [CIDR_INVALID]
    parsed = _parse_prefix_strict(text)
    if parsed is None:
        return ["must not have leading 0s in IP or prefix length"]
    addr, ones = parsed
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return ["must not have an IPv4-mapped IPv6 address"]
    net = ipaddress.ip_network(f"{addr}/{ones}", strict=False)
    if net.network_address != addr:
        return ["must not have bits set beyond the prefix length"]
    if str(net) != text:
        return [f'must be in canonical form ("{net}")']
    return []


def cidr_family(value: str) -> int | None:
    try:
        return ipaddress.ip_network(value, strict=False).version
    except ValueError:
        return None


def _validate_cidrs(spec: JsonDict) -> list[JsonDict]:
    """validateServiceCIDRSpec."""
    cidrs = as_list(spec.get("cidrs"))
    if not cidrs:
        return [required("spec.cidrs", "at least one CIDR required")]
    if len(cidrs) > 2:
        return [invalid("spec.cidrs", spec, "may only hold up to 2 values")]
    errs: list[JsonDict] = []
    for i, c in enumerate(cidrs):
        errs.extend(invalid(f"spec.cidrs[{i}]", c, m) for m in cidr_problems(c))
    if not errs and len(cidrs) == 2 and cidr_family(str(cidrs[0])) == cidr_family(str(cidrs[1])):
        errs.append(invalid("spec.cidrs", cidrs, ONE_PER_FAMILY))
    return errs


class ServiceCIDRStrategy(Strategy):
    kind = "ServiceCIDR"
    has_status = True

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        return None  # upstream's PrepareForCreate keeps status (kubernetes#137680)

    def prepare_for_update(self, new: JsonDict, old: JsonDict) -> None:
        status = new.get("status")
        super().prepare_for_update(new, old)
        if status is not None:  # nor does PrepareForUpdate reset it
            new["status"] = status

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        return _validate_cidrs(as_dict(obj.get("spec")))

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        ncidrs, ocidrs = as_list(as_dict(new.get("spec")).get("cidrs")), as_list(as_dict(old.get("spec")).get("cidrs"))
        if len(ncidrs) == len(ocidrs):
            return [invalid(f"spec.cidrs[{i}]", n, IMMUTABLE) for i, (n, o) in enumerate(zip(ncidrs, ocidrs, strict=True))
                    if n != o]
        if len(ocidrs) == 1 and len(ncidrs) == 2:
            # single-stack to dual-stack: the existing range stays first
            if ncidrs[0] != ocidrs[0]:
                return [invalid("spec.cidrs[0]", ncidrs[0], IMMUTABLE)]
            return []
        return [invalid("spec.cidrs", ncidrs, IMMUTABLE)]

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return validate_object_meta(new.get("metadata"), name_format=self.name_format)


def _path_segment(value: str) -> list[str]:
    """IsValidPathSegmentName."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


class IPAddressStrategy(Strategy):
    kind = "IPAddress"
    name_format = "path"

    def validate(self, obj: JsonDict) -> list[JsonDict]:
        """ValidateIPAddress: the name is an IP (ValidateIPAddressName), then the spec."""
        meta = as_dict(obj.get("metadata"))
        errs = validate_object_meta(meta, name_format=self.name_format)
        name = meta.get("name")
        if isinstance(name, str) and name:
            errs.extend(invalid("metadata.name", name, m) for m in ip_problems(name))
        errs.extend(self._validate(obj))
        return errs

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        ref = as_dict(obj.get("spec")).get("parentRef")
        if not isinstance(ref, dict):
            return [required("spec.parentRef", "")]
        errs: list[JsonDict] = []
        group = ref.get("group")
        if group:
            errs.extend(invalid("spec.parentRef.group", group, m) for m in is_dns1123_subdomain(str(group)))
        for key in ("resource", "name"):
            v = ref.get(key)
            if not v:
                errs.append(required(f"spec.parentRef.{key}", ""))
            else:
                errs.extend(invalid(f"spec.parentRef.{key}", v, m) for m in _path_segment(str(v)))
        ns = ref.get("namespace")
        if ns:
            errs.extend(invalid("spec.parentRef.namespace", ns, m) for m in _path_segment(str(ns)))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        nref = as_dict(new.get("spec")).get("parentRef")
        if nref != as_dict(old.get("spec")).get("parentRef"):
            return [invalid("spec.parentRef", nref, IMMUTABLE)]
        return []
