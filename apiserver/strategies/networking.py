"""networking.k8s.io/v1 strategies (layer L4, apiserver): pkg/apis/networking/validation.

Ingress: either `defaultBackend` or `rules`; hosts are DNS names (a leading `*.` wildcard
allowed, IPs refused); every HTTP path has a pathType (Exact, Prefix, ImplementationSpecific),
Exact/Prefix paths are absolute; a backend is a service (name + port name or number) or a
resource, never both. The status subresource carries the load balancer addresses.
IngressClass: `spec.controller` is a required, immutable domain-prefixed path; parameters
need kind and name, scope Cluster or Namespace (namespace only with Namespace).
NetworkPolicy: podSelector and peers' selectors are label selectors, a peer is an ipBlock or
selectors (not both), ports have TCP/UDP/SCTP and numbers 1-65535 (endPort >= port),
policyTypes are Ingress/Egress (defaulted as upstream: Ingress, plus Egress when rules exist);
ipBlock CIDRs are parsed as upstream's legacy fields are (IsValidCIDRForLegacyField: leading zeros
and IPv4-mapped values accepted, `net_warnings`).
Warnings (v1.33): an Ingress created with the deprecated `kubernetes.io/ingress.class` annotation
and no spec.ingressClassName (ingressStrategy.WarningsOnCreate; updates warn nothing); a
NetworkPolicy's non-standard ipBlock CIDRs, on create and update (networkPolicyWarnings).
Data flow: core create/update -> default -> validate / validate_update -> storage.
"""

from __future__ import annotations

import re
from typing import Any

from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    forbidden,
    invalid,
    is_dns1035_label,
    is_dns1123_subdomain,
    not_supported,
    required,
    validate_label_selector,
)

from .base import Strategy, as_dict, as_list
from .net_warnings import CIDR_MSG, get_warnings_for_cidr, parse_cidr_sloppy, parse_ip_sloppy

PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
PROTOCOLS = ("SCTP", "TCP", "UDP")
_PORT_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?\Z")
ANNOTATION_INGRESS_CLASS = "kubernetes.io/ingress.class"


class GoLiteral:
    """A value rendered verbatim in a field error (Go's %#v of a struct or nil slice)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def _host_errors(host: str, path: str) -> list[JsonDict]:
    if parse_ip_sloppy(host) is not None:  # netutils.ParseIPSloppy: 010.1.2.3 is an IP too
        return [invalid(path, host, "must be a DNS name, not an IP address")]
    if host.startswith("*."):
        msgs = is_dns1123_subdomain(host[2:])
        if msgs:
            return [invalid(path, host, "a wildcard DNS-1123 subdomain must start with '*.', followed by a "
                                        "valid DNS subdomain, which must consist of lower case alphanumeric "
                                        "characters, '-' or '.' and end with an alphanumeric character "
                                        "(e.g. '*.example.com', regex used for validation is "
                                        "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]
        return []
    return [invalid(path, host, m) for m in is_dns1123_subdomain(host)]


def port_name_errors(name: str, path: str) -> list[JsonDict]:
    """IsValidPortName (IANA_SVC_NAME)."""
    msgs = []
    if len(name) > 15:
        msgs.append("must be no more than 15 characters")
    if not _PORT_NAME.match(name):
        msgs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in name:
        msgs.append("must not contain consecutive hyphens")
    if not re.search(r"[a-z]", name):
        msgs.append("must contain at least one letter (a-z)")
    return [invalid(path, name, m) for m in msgs]


def _port_number_errors(n: Any, path: str) -> list[JsonDict]:
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 65535:
        return [invalid(path, n, "must be between 1 and 65535, inclusive")]
    return []


def _validate_backend(b: Any, path: str) -> list[JsonDict]:
    b = as_dict(b)
    svc, res = b.get("service"), b.get("resource")
    if svc is not None and res is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if res is not None:
        r = as_dict(res)
        errs: list[JsonDict] = []
        if not r.get("kind"):
            errs.append(required(f"{path}.resource.kind"))
        if not r.get("name"):
            errs.append(required(f"{path}.resource.name"))
        return errs
    if svc is None:
        return [invalid(path, "", "resource or service backend is required")]
    s = as_dict(svc)
    errs = []
    name = s.get("name") or ""
    if not name:
        errs.append(required(f"{path}.service.name"))
    else:
        errs.extend(invalid(f"{path}.service.name", name, m) for m in is_dns1035_label(str(name)))
    port = as_dict(s.get("port"))
    pname, pnum = port.get("name") or "", port.get("number") or 0
    if pname and pnum:
        errs.append(invalid(path, "", "cannot set both port name & port number"))
    elif pname:
        errs.extend(port_name_errors(str(pname), f"{path}.service.port.name"))
    elif pnum:
        errs.extend(_port_number_errors(pnum, f"{path}.service.port.number"))
    else:
        errs.append(required(path, "port name or number is required"))
    return errs


def _validate_rule(rule: Any, path: str) -> list[JsonDict]:
    rule = as_dict(rule)
    errs: list[JsonDict] = []
    host = rule.get("host") or ""
    if host:
        errs.extend(_host_errors(str(host), f"{path}.host"))
    http = rule.get("http")
    if http is None:
        return errs
    paths = as_list(as_dict(http).get("paths"))
    if not paths:
        errs.append(required(f"{path}.http.paths"))
    for i, p in enumerate(paths):
        pp = f"{path}.http.paths[{i}]"
        p = as_dict(p)
        ptype = p.get("pathType")
        value = p.get("path") or ""
        if not ptype:
            errs.append(required(f"{pp}.pathType", "pathType must be specified"))
        elif ptype not in PATH_TYPES:
            errs.append(not_supported(f"{pp}.pathType", ptype, PATH_TYPES))
        elif ptype in ("Exact", "Prefix") and not str(value).startswith("/"):
            errs.append(invalid(f"{pp}.path", value, "must be an absolute path"))
        errs.extend(_validate_backend(p.get("backend"), f"{pp}.backend"))
    return errs


class IngressStrategy(Strategy):
    kind = "Ingress"
    group = "networking.k8s.io"
    has_status = True
    tracks_generation = True

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = as_dict(obj.get("spec"))
        errs: list[JsonDict] = []
        rules = spec.get("rules")
        if not as_list(rules) and spec.get("defaultBackend") is None:
            shown = GoLiteral("[]networking.IngressRule(nil)") if rules is None else rules
            errs.append(invalid("spec.rules", shown, "either `defaultBackend` or `rules` must be specified"))
        if spec.get("defaultBackend") is not None:
            errs.extend(_validate_backend(spec["defaultBackend"], "spec.defaultBackend"))
        for i, rule in enumerate(as_list(rules)):
            errs.extend(_validate_rule(rule, f"spec.rules[{i}]"))
        for i, tls in enumerate(as_list(spec.get("tls"))):
            tls = as_dict(tls)
            for j, h in enumerate(as_list(tls.get("hosts"))):
                errs.extend(_host_errors(str(h), f"spec.tls[{i}].hosts[{j}]"))
            secret = tls.get("secretName")
            if secret:
                errs.extend(invalid(f"spec.tls[{i}].secretName", secret, m) for m in is_dns1123_subdomain(str(secret)))
        cls = spec.get("ingressClassName")
        if cls:
            errs.extend(invalid("spec.ingressClassName", cls, m) for m in is_dns1123_subdomain(str(cls)))
        return errs

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        """ingressStrategy.WarningsOnCreate: the class annotation without spec.ingressClassName."""
        annotations = as_dict(as_dict(obj.get("metadata")).get("annotations"))
        if ANNOTATION_INGRESS_CLASS in annotations and as_dict(obj.get("spec")).get("ingressClassName") is None:
            return [f'annotation "{ANNOTATION_INGRESS_CLASS}" is deprecated, please use \'spec.ingressClassName\' '
                    "instead"]
        return []


def _controller_errors(controller: Any, path: str) -> list[JsonDict]:
    if not controller:
        return [required(path)]
    c = str(controller)
    if len(c) > 253:
        return [invalid(path, c, "must be no more than 253 characters")]
    domain, sep, rest = c.partition("/")
    if not sep or not rest or is_dns1123_subdomain(domain):
        return [invalid(path, c, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    return []


class IngressClassStrategy(Strategy):
    kind = "IngressClass"
    group = "networking.k8s.io"
    tracks_generation = True

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = as_dict(obj.get("spec"))
        errs = _controller_errors(spec.get("controller"), "spec.controller")
        params = spec.get("parameters")
        if params is not None:
            p = as_dict(params)
            if not p.get("kind"):
                errs.append(required("spec.parameters.kind"))
            if not p.get("name"):
                errs.append(required("spec.parameters.name"))
            scope = p.get("scope") or "Cluster"
            if scope not in ("Cluster", "Namespace"):
                errs.append(not_supported("spec.parameters.scope", scope, ("Cluster", "Namespace")))
            elif scope == "Namespace" and not p.get("namespace"):
                errs.append(required("spec.parameters.namespace", "`parameters.scope` is set to 'Namespace'"))
            elif scope == "Cluster" and p.get("namespace"):
                errs.append(forbidden("spec.parameters.namespace", "`parameters.scope` is set to 'Cluster'"))
        return errs

    def _default(self, obj: JsonDict) -> None:
        params = as_dict(obj.get("spec")).get("parameters")
        if isinstance(params, dict) and not params.get("scope"):
            params["scope"] = "Cluster"

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        nc = as_dict(new.get("spec")).get("controller")
        if nc != as_dict(old.get("spec")).get("controller"):
            return [invalid("spec.controller", nc, "field is immutable")]
        return []


def _validate_np_ports(ports: Any, path: str) -> list[JsonDict]:
    errs: list[JsonDict] = []
    for i, p in enumerate(as_list(ports)):
        pp = f"{path}[{i}]"
        p = as_dict(p)
        proto = p.get("protocol")
        if proto is not None and proto not in PROTOCOLS:
            errs.append(not_supported(f"{pp}.protocol", proto, PROTOCOLS))
        port = p.get("port")
        if isinstance(port, int) and not isinstance(port, bool):
            errs.extend(_port_number_errors(port, f"{pp}.port"))
        elif isinstance(port, str):
            errs.extend(port_name_errors(port, f"{pp}.port"))
        end = p.get("endPort")
        if end is not None:
            if not isinstance(port, int) or isinstance(port, bool):
                errs.append(forbidden(f"{pp}.endPort", "may not be specified when `port` is non-numeric"))
            elif not isinstance(end, int) or end < port:
                errs.append(invalid(f"{pp}.endPort", end, "must be greater than or equal to `port`"))
    return errs


def _validate_peers(peers: Any, path: str) -> list[JsonDict]:
    errs: list[JsonDict] = []
    for i, peer in enumerate(as_list(peers)):
        pp = f"{path}[{i}]"
        peer = as_dict(peer)
        n = sum(1 for k in ("podSelector", "namespaceSelector", "ipBlock") if peer.get(k) is not None)
        if n == 0:
            errs.append(required(pp, "must specify a peer"))
        elif peer.get("ipBlock") is not None and n > 1:
            errs.append(forbidden(pp, "may not specify both ipBlock and another peer"))
        for k in ("podSelector", "namespaceSelector"):
            if peer.get(k) is not None:
                errs.extend(validate_label_selector(peer[k], f"{pp}.{k}"))
        block = peer.get("ipBlock")
        if block is not None:
            errs.extend(_validate_ip_block(as_dict(block), f"{pp}.ipBlock"))
    return errs


def _validate_ip_block(block: JsonDict, path: str) -> list[JsonDict]:
    """ValidateIPBlock: a legacy-parsed cidr, and each except a legacy-parsed CIDR inside it with a
    longer prefix."""
    cidr = block.get("cidr") or ""
    if not cidr:
        return [required(f"{path}.cidr")]
    net = parse_cidr_sloppy(str(cidr))
    if net is None:
        return [invalid(f"{path}.cidr", cidr, CIDR_MSG)]
    errs: list[JsonDict] = []
    for i, ex in enumerate(as_list(block.get("except"))):
        ep = f"{path}.except[{i}]"
        exn = parse_cidr_sloppy(str(ex))
        if exn is None:
            errs.append(invalid(ep, ex, CIDR_MSG))
            continue
        if not net.contains(exn.network) or net.ones >= exn.ones:
            errs.append(invalid(ep, ex, "must be a strict subset of `cidr`"))
    return errs


def _peer_warnings(peers: object, path: str) -> list[str]:
    warnings: list[str] = []
    for j, peer in enumerate(as_list(peers)):
        block = as_dict(peer).get("ipBlock")
        if not isinstance(block, dict):
            continue
        bp = f"{path}[{j}].ipBlock"
        if isinstance(block.get("cidr"), str):
            warnings.extend(get_warnings_for_cidr(f"{bp}.cidr", block["cidr"]))
        for k, ex in enumerate(as_list(block.get("except"))):
            if isinstance(ex, str):
                warnings.extend(get_warnings_for_cidr(f"{bp}.except[{k}]", ex))
    return warnings


def network_policy_warnings(obj: JsonDict) -> list[str]:
    """networkPolicyWarnings: GetWarningsForCIDR on every ipBlock cidr and except, ingress rules
    first."""
    spec = as_dict(obj.get("spec"))
    warnings: list[str] = []
    for i, rule in enumerate(as_list(spec.get("ingress"))):
        warnings.extend(_peer_warnings(as_dict(rule).get("from"), f"spec.ingress[{i}].from"))
    for i, rule in enumerate(as_list(spec.get("egress"))):
        warnings.extend(_peer_warnings(as_dict(rule).get("to"), f"spec.egress[{i}].to"))
    return warnings


class NetworkPolicyStrategy(Strategy):
    kind = "NetworkPolicy"
    group = "networking.k8s.io"
    tracks_generation = True

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        for rules in (spec.get("ingress"), spec.get("egress")):
            for rule in as_list(rules):
                for p in as_list(as_dict(rule).get("ports")):
                    if isinstance(p, dict) and not p.get("protocol"):
                        p["protocol"] = "TCP"
        if not spec.get("policyTypes"):
            types = ["Ingress"]
            if spec.get("egress"):
                types.append("Egress")
            spec["policyTypes"] = types

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = as_dict(obj.get("spec"))
        errs = validate_label_selector(spec.get("podSelector") or {}, "spec.podSelector")
        for i, rule in enumerate(as_list(spec.get("ingress"))):
            rule = as_dict(rule)
            errs.extend(_validate_np_ports(rule.get("ports"), f"spec.ingress[{i}].ports"))
            errs.extend(_validate_peers(rule.get("from"), f"spec.ingress[{i}].from"))
        for i, rule in enumerate(as_list(spec.get("egress"))):
            rule = as_dict(rule)
            errs.extend(_validate_np_ports(rule.get("ports"), f"spec.egress[{i}].ports"))
            errs.extend(_validate_peers(rule.get("to"), f"spec.egress[{i}].to"))
        types = as_list(spec.get("policyTypes"))
        for i, t in enumerate(types):
            if t not in ("Ingress", "Egress"):
                errs.append(not_supported(f"spec.policyTypes[{i}]", t, ("Egress", "Ingress")))
        if len(types) > 2:
            errs.append(invalid("spec.policyTypes", types, "may not specify more than two policyTypes"))
        return errs

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        return network_policy_warnings(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        return network_policy_warnings(new)
