"""Upstream's warning tables (kubernetes/kubernetes v1.33) for the kinds other than pods, workloads
and storage, ported onto the strategies' `warnings_on_create` / `warnings_on_update` and the
shared IP/CIDR helpers (`apiserver.strategies.net_warnings`).

Ported (case names as ids):
- apimachinery pkg/util/validation/ip_test.go: TestGetWarningsForIP, TestGetWarningsForCIDR, and
  the `legacyErr` column of TestIsValidIP / TestIsValidCIDR (StrictIPCIDRValidation is off in
  v1.33, so the legacy parse decides validity);
- pkg/api/service/warnings_test.go: TestGetWarningsForService, TestGetWarningsForServiceClusterIPs;
- pkg/registry/core/endpoint/strategy_test.go: Test_endpointsWarning (prefix comparison, as upstream);
- pkg/registry/discovery/endpointslice/strategy_test.go: TestWarningsOnEndpointSliceAddressType;
- pkg/registry/core/serviceaccount/strategy_test.go: TestWarningsOnCreate, TestWarningsOnUpdate.

Written here (upstream has no table for them, the behaviour is its strategy code): the Ingress
class annotation, NetworkPolicy ipBlock CIDRs, EndpointSlice addresses, Node deprecated fields,
TLS Secret key pairs (Go's tls.X509KeyPair texts), and the per-resource deprecation text.

Not ported: TestIsValidIP/TestIsValidCIDR's `err` and `legacyStrictErr` columns (strict
validation is off by default in v1.33); TestIsValidInterfaceAddress (no served field uses it).
"""

from __future__ import annotations

import base64
import copy
import datetime
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from apiserver.core import ApiCore
from apiserver.handlers.deprecation import Deprecation, warning_message
from apiserver.strategies import strategy_for
from apiserver.strategies.net_warnings import (
    get_warnings_for_cidr,
    get_warnings_for_ip,
    is_valid_cidr_legacy,
    is_valid_ip_legacy,
)
from apiserver.strategies.networking import network_policy_warnings
from apiserver.strategies.service import get_warnings_for_service
from minik3s.api.errors import InvalidError
from minik3s.api.options import WriteOptions
from minik3s.api.types import JsonDict

SVC = strategy_for("", "Service")
EP = strategy_for("", "Endpoints")
EPS = strategy_for("discovery.k8s.io", "EndpointSlice")
SA = strategy_for("", "ServiceAccount")
ING = strategy_for("networking.k8s.io", "Ingress")
NETPOL = strategy_for("networking.k8s.io", "NetworkPolicy")
NODE = strategy_for("", "Node")
SECRET = strategy_for("", "Secret")

CLUSTER_IPS0 = "spec.clusterIPs[0]"
LB_RANGES0 = "spec.loadBalancerSourceRanges[0]"


# ---- apimachinery: GetWarningsForIP / GetWarningsForCIDR -------------------------------------------

GET_WARNINGS_FOR_IP = [
    ("IPv4 No failures", "192.12.2.2", CLUSTER_IPS0, []),
    ("IPv6 No failures", "2001:db8::2", CLUSTER_IPS0, []),
    ("IPv4 with leading zeros", "192.012.2.2", CLUSTER_IPS0,
     ['spec.clusterIPs[0]: non-standard IP address "192.012.2.2" will be considered invalid in a future '
      'Kubernetes release: use "192.12.2.2"']),
    ("IPv4-mapped IPv6", "::ffff:192.12.2.2", CLUSTER_IPS0,
     ['spec.clusterIPs[0]: non-standard IP address "::ffff:192.12.2.2" will be considered invalid in a future '
      'Kubernetes release: use "192.12.2.2"']),
    ("IPv6 non-canonical format", "2001:db8:0:0::2", "spec.loadBalancerIP",
     ['spec.loadBalancerIP: IPv6 address "2001:db8:0:0::2" should be in RFC 5952 canonical format ("2001:db8::2")']),
]


@pytest.mark.parametrize(("address", "path", "want"), [c[1:] for c in GET_WARNINGS_FOR_IP],
                         ids=[c[0] for c in GET_WARNINGS_FOR_IP])
def test_get_warnings_for_ip(address: str, path: str, want: list[str]) -> None:
    assert get_warnings_for_ip(path, address) == want


GET_WARNINGS_FOR_CIDR = [
    ("IPv4 No failures", "192.12.2.0/24", []),
    ("IPv6 No failures", "2001:db8::/64", []),
    ("IPv4 with leading zeros", "192.012.2.0/24",
     ['spec.loadBalancerSourceRanges[0]: non-standard CIDR value "192.012.2.0/24" will be considered invalid in a '
      'future Kubernetes release: use "192.12.2.0/24"']),
    ("leading zeros in prefix length", "192.12.2.0/024",
     ['spec.loadBalancerSourceRanges[0]: non-standard CIDR value "192.12.2.0/024" will be considered invalid in a '
      'future Kubernetes release: use "192.12.2.0/24"']),
    ("IPv4-mapped IPv6", "::ffff:192.12.2.0/120",
     ['spec.loadBalancerSourceRanges[0]: non-standard CIDR value "::ffff:192.12.2.0/120" will be considered '
      'invalid in a future Kubernetes release: use "192.12.2.0/24"']),
    ("bits after prefix length", "192.12.2.8/24",
     ['spec.loadBalancerSourceRanges[0]: CIDR value "192.12.2.8/24" is ambiguous in this context (should be '
      '"192.12.2.0/24" or "192.12.2.8/32"?)']),
    ("multiple problems", "192.012.2.8/24",
     ['spec.loadBalancerSourceRanges[0]: CIDR value "192.012.2.8/24" is ambiguous in this context (should be '
      '"192.12.2.0/24" or "192.12.2.8/32"?)',
      'spec.loadBalancerSourceRanges[0]: non-standard CIDR value "192.012.2.8/24" will be considered invalid in a '
      'future Kubernetes release: use "192.12.2.0/24"']),
    ("IPv6 non-canonical format", "2001:db8:0:0::/64",
     ['spec.loadBalancerSourceRanges[0]: IPv6 CIDR value "2001:db8:0:0::/64" should be in RFC 5952 canonical '
      'format ("2001:db8::/64")']),
]


@pytest.mark.parametrize(("cidr", "want"), [c[1:] for c in GET_WARNINGS_FOR_CIDR],
                         ids=[c[0] for c in GET_WARNINGS_FOR_CIDR])
def test_get_warnings_for_cidr(cidr: str, want: list[str]) -> None:
    assert get_warnings_for_cidr(LB_RANGES0, cidr) == want


# TestIsValidIP: (name, value, the legacy (non-strict) error or "")
IS_VALID_IP_LEGACY = [
    ("ipv4", "1.2.3.4", ""), ("ipv4, all zeros", "0.0.0.0", ""), ("ipv4, max", "255.255.255.255", ""),
    ("ipv6", "1234::abcd", ""), ("ipv6, all zeros, collapsed", "::", ""),
    ("ipv6, max", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""),
    ("ipv6, all zeros, expanded (non-canonical)", "0:0:0:0:0:0:0:0", ""),
    ("ipv6, leading 0s (non-canonical)", "0001:002:03:4::", ""),
    ("ipv6, capital letters (non-canonical)", "1234::ABCD", ""),
    ("ipv4 with leading 0s", "1.1.1.01", ""), ("ipv4-in-ipv6 value", "::ffff:1.1.1.1", ""),
    ("empty string", "", "must be a valid IP address"), ("junk", "aaaaaaa", "must be a valid IP address"),
    ("domain name", "myhost.mydomain", "must be a valid IP address"),
    ("cidr", "1.2.3.0/24", "must be a valid IP address"),
    ("ipv4 with out-of-range octets", "1.2.3.400", "must be a valid IP address"),
    ("ipv4 with negative octets", "-1.0.0.0", "must be a valid IP address"),
    ("ipv6 with out-of-range segment", "2001:db8::10005", "must be a valid IP address"),
    ("ipv4:port", "1.2.3.4:80", "must be a valid IP address"),
    ("ipv6 with brackets", "[2001:db8::1]", "must be a valid IP address"),
    ("[ipv6]:port", "[2001:db8::1]:80", "must be a valid IP address"),
    ("host:port", "example.com:80", "must be a valid IP address"),
    ("ipv6 with zone", "1234::abcd%eth0", "must be a valid IP address"),
    ("ipv4 with zone", "169.254.0.0%eth0", "must be a valid IP address"),
]


@pytest.mark.parametrize(("value", "legacy_err"), [c[1:] for c in IS_VALID_IP_LEGACY],
                         ids=[c[0] for c in IS_VALID_IP_LEGACY])
def test_is_valid_ip_for_legacy_field(value: str, legacy_err: str) -> None:
    err = is_valid_ip_legacy(value)
    if legacy_err:
        assert err is not None and legacy_err in err
    else:
        assert err is None


IS_VALID_CIDR_LEGACY = [
    ("ipv4", "1.0.0.0/8", ""), ("ipv4, all IPs", "0.0.0.0/0", ""), ("ipv4, single IP", "1.1.1.1/32", ""),
    ("ipv6", "2001:4860:4860::/48", ""), ("ipv6, all IPs", "::/0", ""), ("ipv6, single IP", "::1/128", ""),
    ("ipv6, extra 0s (non-canonical)", "2a00:79e0:2:0::/64", ""),
    ("ipv6, capital letters (non-canonical)", "2001:DB8::/64", ""),
    ("ipv4 with leading 0s", "1.1.01.0/24", ""),
    ("ipv4-in-ipv6 with ipv4-sized prefix", "::ffff:1.1.1.0/24", ""),
    ("ipv4-in-ipv6 with ipv6-sized prefix", "::ffff:1.1.1.0/120", ""),
    ("ipv4 ifaddr", "1.2.3.4/24", ""), ("ipv6 ifaddr", "2001:db8::1/64", ""),
    ("prefix length with leading 0s", "192.168.0.0/016", ""),
    ("empty string", "", "must be a valid CIDR value"), ("junk", "aaaaaaa", "must be a valid CIDR value"),
    ("IP address", "1.2.3.4", "must be a valid CIDR value"),
    ("partial URL", "192.168.0.1/healthz", "must be a valid CIDR value"),
    ("partial URL 2", "192.168.0.1/0/99", "must be a valid CIDR value"),
    ("negative prefix length", "192.168.0.0/-16", "must be a valid CIDR value"),
    ("prefix length with sign", "192.168.0.0/+16", "must be a valid CIDR value"),
]


@pytest.mark.parametrize(("value", "legacy_err"), [c[1:] for c in IS_VALID_CIDR_LEGACY],
                         ids=[c[0] for c in IS_VALID_CIDR_LEGACY])
def test_is_valid_cidr_for_legacy_field(value: str, legacy_err: str) -> None:
    err = is_valid_cidr_legacy(value)
    if legacy_err:
        assert err is not None and legacy_err in err
    else:
        assert err is None


# ---- pkg/api/service: GetWarningsForService ---------------------------------------------------------

def _tweaked(annotations: dict[str, str] | None = None, **spec: Any) -> JsonDict:
    svc: JsonDict = {"metadata": {}, "spec": dict(spec)}
    if annotations is not None:
        svc["metadata"]["annotations"] = annotations
    return svc


GET_WARNINGS_FOR_SERVICE = [
    ("new topology mode set", _tweaked({"service.kubernetes.io/topology-mode": "foo"}), 0),
    ("deprecated hints annotation set", _tweaked({"service.kubernetes.io/topology-aware-hints": "foo"}), 1),
    ("externalIPs set when type is ExternalName", _tweaked(type="ExternalName", externalIPs=["1.2.3.4"]), 1),
    ("externalName set when type is not ExternalName", _tweaked(type="ClusterIP", externalName="example.com"), 1),
]


@pytest.mark.parametrize(("svc", "num"), [c[1:] for c in GET_WARNINGS_FOR_SERVICE],
                         ids=[c[0] for c in GET_WARNINGS_FOR_SERVICE])
def test_get_warnings_for_service(svc: JsonDict, num: int) -> None:
    assert len(get_warnings_for_service(svc)) == num


def test_deprecated_hints_annotation_text() -> None:
    assert get_warnings_for_service(_tweaked({"service.kubernetes.io/topology-aware-hints": "auto"})) == [
        "annotation service.kubernetes.io/topology-aware-hints is deprecated, please use "
        "service.kubernetes.io/topology-mode instead"]


def _svc_ips(cluster_ips: list[str]) -> JsonDict:
    spec: JsonDict = {"type": "ClusterIP"}
    if cluster_ips:
        spec["clusterIP"], spec["clusterIPs"] = cluster_ips[0], cluster_ips
    return {"metadata": {"name": "svc-test", "namespace": "ns"}, "spec": spec}


def _leading(path: str, value: str, use: str) -> str:
    return (f'{path}: non-standard IP address "{value}" will be considered invalid in a future Kubernetes release: '
            f'use "{use}"')


def _rfc5952(path: str, value: str, canonical: str) -> str:
    return f'{path}: IPv6 address "{value}" should be in RFC 5952 canonical format ("{canonical}")'


CLUSTER_IPS = [
    ("IPv4 No failures", _svc_ips(["192.12.2.2"]), []),
    ("IPv6 No failures", _svc_ips(["2001:db8::2"]), []),
    ("IPv4 with leading zeros", _svc_ips(["192.012.2.2"]),
     [_leading("spec.clusterIPs[0]", "192.012.2.2", "192.12.2.2")]),
    ("Dual Stack IPv4-IPv6 and IPv4 with leading zeros", _svc_ips(["192.012.2.2", "2001:db8::2"]),
     [_leading("spec.clusterIPs[0]", "192.012.2.2", "192.12.2.2")]),
    ("Dual Stack IPv6-IPv4 and IPv4 with leading zeros", _svc_ips(["2001:db8::2", "192.012.2.2"]),
     [_leading("spec.clusterIPs[1]", "192.012.2.2", "192.12.2.2")]),
    ("IPv6 non canonical format", _svc_ips(["2001:db8:0:0::2"]),
     [_rfc5952("spec.clusterIPs[0]", "2001:db8:0:0::2", "2001:db8::2")]),
    ("Dual Stack IPv4-IPv6 and IPv6 non-canonical format", _svc_ips(["192.12.2.2", "2001:db8:0:0::2"]),
     [_rfc5952("spec.clusterIPs[1]", "2001:db8:0:0::2", "2001:db8::2")]),
    ("Dual Stack IPv6-IPv4 and IPv6 non-canonical formats", _svc_ips(["2001:db8:0:0::2", "192.12.2.2"]),
     [_rfc5952("spec.clusterIPs[0]", "2001:db8:0:0::2", "2001:db8::2")]),
    ("Dual Stack IPv4-IPv6 and IPv4 with leading zeros and IPv6 non-canonical format",
     _svc_ips(["192.012.2.2", "2001:db8:0:0::2"]),
     [_leading("spec.clusterIPs[0]", "192.012.2.2", "192.12.2.2"),
      _rfc5952("spec.clusterIPs[1]", "2001:db8:0:0::2", "2001:db8::2")]),
    ("Dual Stack IPv6-IPv4 and IPv4 with leading zeros and IPv6 non-canonical format",
     _svc_ips(["2001:db8:0:0::2", "192.012.2.2"]),
     [_rfc5952("spec.clusterIPs[0]", "2001:db8:0:0::2", "2001:db8::2"),
      _leading("spec.clusterIPs[1]", "192.012.2.2", "192.12.2.2")]),
    ("Service with all IPs fields with errors",
     {"metadata": {"name": "svc-test", "namespace": "ns"},
      "spec": {"clusterIP": "2001:db8:0:0::2", "clusterIPs": ["2001:db8:0:0::2", "192.012.2.2"],
               "externalIPs": ["2001:db8:1:0::2", "10.012.2.2"], "loadBalancerIP": "10.001.1.1",
               "loadBalancerSourceRanges": ["2001:db8:1:0::/64", "10.012.2.0/24"], "type": "ClusterIP"}},
     [_rfc5952("spec.clusterIPs[0]", "2001:db8:0:0::2", "2001:db8::2"),
      _leading("spec.clusterIPs[1]", "192.012.2.2", "192.12.2.2"),
      _rfc5952("spec.externalIPs[0]", "2001:db8:1:0::2", "2001:db8:1::2"),
      _leading("spec.externalIPs[1]", "10.012.2.2", "10.12.2.2"),
      _leading("spec.loadBalancerIP", "10.001.1.1", "10.1.1.1"),
      'spec.loadBalancerSourceRanges[0]: IPv6 CIDR value "2001:db8:1:0::/64" should be in RFC 5952 canonical '
      'format ("2001:db8:1::/64")',
      'spec.loadBalancerSourceRanges[1]: non-standard CIDR value "10.012.2.0/24" will be considered invalid in a '
      'future Kubernetes release: use "10.12.2.0/24"']),
]


@pytest.mark.parametrize(("svc", "want"), [c[1:] for c in CLUSTER_IPS], ids=[c[0] for c in CLUSTER_IPS])
def test_get_warnings_for_service_cluster_ips(svc: JsonDict, want: list[str]) -> None:
    assert SVC.warnings_on_create(copy.deepcopy(svc)) == want
    assert SVC.warnings_on_update(copy.deepcopy(svc), _svc_ips([])) == want


def test_headless_cluster_ip_none_is_not_checked() -> None:
    # helper.IsServiceIPSet: "None" is no IP, so clusterIPs are not looked at
    svc = {"spec": {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["192.012.2.2"]}}
    assert get_warnings_for_service(svc) == []


# ---- pkg/registry/core/endpoint: endpointsWarnings ------------------------------------------------

def _endpoints(*subsets: JsonDict, labels: dict[str, str] | None = None) -> JsonDict:
    obj: JsonDict = {"metadata": {"name": "e"}, "subsets": list(subsets)}
    if labels is not None:
        obj["metadata"]["labels"] = labels
    return obj


def _addrs(*ips: str) -> list[JsonDict]:
    return [{"ip": ip} for ip in ips]


ENDPOINTS_WARNING = [
    ("empty Endpoints", {"metadata": {"name": "e"}}, []),
    ("valid Endpoints", _endpoints({"addresses": _addrs("1.2.3.4", "fd00::1234")}), []),
    ("bad Endpoints",
     _endpoints({"addresses": _addrs("fd00::1234", "01.02.03.04")}, {"addresses": _addrs("::ffff:1.2.3.4")},
                {"addresses": _addrs("1.2.3.4"), "notReadyAddresses": _addrs("::ffff:1.2.3.4")}),
     ["subsets[0].addresses[1].ip", "subsets[1].addresses[0].ip", "subsets[2].notReadyAddresses[0].ip"]),
    ("bad Endpoints ignored because of label",
     _endpoints({"addresses": _addrs("fd00::1234", "01.02.03.04")},
                labels={"endpoints.kubernetes.io/managed-by": "endpoint-controller"}),
     []),
]


@pytest.mark.parametrize(("endpoints", "prefixes"), [c[1:] for c in ENDPOINTS_WARNING],
                         ids=[c[0] for c in ENDPOINTS_WARNING])
def test_endpoints_warning(endpoints: JsonDict, prefixes: list[str]) -> None:
    for warnings in (EP.warnings_on_create(endpoints), EP.warnings_on_update(endpoints, {})):
        assert len(warnings) == len(prefixes), warnings
        assert all(w.startswith(p) for w, p in zip(warnings, prefixes, strict=True)), warnings


def test_endpoints_warning_text() -> None:
    assert EP.warnings_on_create(_endpoints({"addresses": _addrs("01.02.03.04")})) == [
        _leading("subsets[0].addresses[0].ip", "01.02.03.04", "1.2.3.4")]


# ---- pkg/registry/discovery/endpointslice ---------------------------------------------------------

ADDRESS_TYPE = [("AddressType = FQDN", "FQDN", True), ("AddressType = IPV4", "IPv4", False),
                ("AddressType = IPV6", "IPv6", False)]


@pytest.mark.parametrize(("address_type", "want_warning"), [c[1:] for c in ADDRESS_TYPE],
                         ids=[c[0] for c in ADDRESS_TYPE])
def test_warnings_on_endpoint_slice_address_type(address_type: str, want_warning: bool) -> None:
    got = EPS.warnings_on_create({"addressType": address_type})
    assert got == (["spec.addressType: FQDN endpoints are deprecated"] if want_warning else [])
    assert EPS.warnings_on_update({"addressType": address_type}, {}) == []  # create only


def _slice(*addresses: list[str], managed_by: str | None = None) -> JsonDict:
    obj: JsonDict = {"metadata": {"name": "s"}, "addressType": "IPv6",
                     "endpoints": [{"addresses": a} for a in addresses]}
    if managed_by is not None:
        obj["metadata"]["labels"] = {"endpointslice.kubernetes.io/managed-by": managed_by}
    return obj


def test_endpoint_slice_bad_ips_warn_on_create_and_update() -> None:
    sl = _slice(["fd00::1234"], ["fd00:0::1", "::ffff:1.2.3.4"])
    want = [_rfc5952("endpoints[1].addresses[0]", "fd00:0::1", "fd00::1"),
            _leading("endpoints[1].addresses[1]", "::ffff:1.2.3.4", "1.2.3.4")]
    assert EPS.warnings_on_create(sl) == want
    assert EPS.warnings_on_update(sl, _slice()) == want


@pytest.mark.parametrize("controller", ["endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io"])
def test_endpoint_slice_of_the_controllers_is_not_checked(controller: str) -> None:
    assert EPS.warnings_on_create(_slice(["fd00:0::1"], managed_by=controller)) == []
    assert EPS.warnings_on_create(_slice(["fd00:0::1"], managed_by="someone-else")) != []


# ---- pkg/registry/core/serviceaccount -------------------------------------------------------------

ENFORCE = "kubernetes.io/enforce-mountable-secrets"
ENFORCE_WARNING = (f"metadata.annotations[{ENFORCE}]: deprecated in v1.32+; prefer separate namespaces to isolate "
                   "access to mounted secrets")


def _sa(annotated: bool) -> JsonDict:
    return {"metadata": {"name": "sa", "annotations": {ENFORCE: "true"}}} if annotated else {"metadata": {"name": "sa"}}


def test_service_account_warnings_on_create() -> None:
    assert SA.warnings_on_create(_sa(False)) == []
    assert SA.warnings_on_create(_sa(True)) == [ENFORCE_WARNING]


def test_service_account_warnings_on_update() -> None:
    assert SA.warnings_on_update(_sa(False), _sa(False)) == []
    assert SA.warnings_on_update(_sa(True), _sa(False)) == [ENFORCE_WARNING]
    # no warning if the request isn't newly setting the annotation
    assert SA.warnings_on_update(_sa(True), _sa(True)) == []


# ---- networking.k8s.io: Ingress, NetworkPolicy ----------------------------------------------------

INGRESS_CLASS_WARNING = "annotation \"kubernetes.io/ingress.class\" is deprecated, please use 'spec.ingressClassName' instead"


def _ingress(annotated: bool, class_name: str | None = None) -> JsonDict:
    ing: JsonDict = {"metadata": {"name": "i"}, "spec": {"defaultBackend": {"service": {"name": "s", "port": {
        "number": 80}}}}}
    if annotated:
        ing["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "nginx"}
    if class_name is not None:
        ing["spec"]["ingressClassName"] = class_name
    return ing


@pytest.mark.parametrize(("annotated", "class_name", "want"), [
    (True, None, [INGRESS_CLASS_WARNING]),
    (True, "nginx", []),
    (True, "", []),  # a pointer to "" is set
    (False, None, []),
])
def test_ingress_class_annotation_warns_on_create_only(annotated: bool, class_name: str | None,
                                                       want: list[str]) -> None:
    assert ING.warnings_on_create(_ingress(annotated, class_name)) == want
    assert ING.warnings_on_update(_ingress(annotated, class_name), _ingress(False)) == []


def _netpol(*, ingress: list[JsonDict] | None = None, egress: list[JsonDict] | None = None) -> JsonDict:
    spec: JsonDict = {"podSelector": {}}
    if ingress is not None:
        spec["ingress"] = ingress
    if egress is not None:
        spec["egress"] = egress
    return {"metadata": {"name": "np", "namespace": "default"}, "spec": spec}


def test_network_policy_warns_about_every_ip_block_cidr() -> None:
    np = _netpol(ingress=[{"from": [{"podSelector": {}}, {"ipBlock": {"cidr": "10.0.0.1/8", "except": [
        "10.1.0.0/16", "010.2.0.0/16"]}}]}],
                 egress=[{"to": [{"ipBlock": {"cidr": "2001:db8:0:0::/64"}}]}])
    want = ['spec.ingress[0].from[1].ipBlock.cidr: CIDR value "10.0.0.1/8" is ambiguous in this context (should be '
            '"10.0.0.0/8" or "10.0.0.1/32"?)',
            'spec.ingress[0].from[1].ipBlock.except[1]: non-standard CIDR value "010.2.0.0/16" will be considered '
            'invalid in a future Kubernetes release: use "10.2.0.0/16"',
            'spec.egress[0].to[0].ipBlock.cidr: IPv6 CIDR value "2001:db8:0:0::/64" should be in RFC 5952 canonical '
            'format ("2001:db8::/64")']
    assert network_policy_warnings(np) == want
    assert NETPOL.warnings_on_create(np) == want
    assert NETPOL.warnings_on_update(np, _netpol()) == want


def test_network_policy_accepts_legacy_cidrs_it_warns_about() -> None:
    # IsValidCIDRForLegacyField (StrictIPCIDRValidation off): leading zeros are valid, with a warning
    np = _netpol(ingress=[{"from": [{"ipBlock": {"cidr": "010.0.0.0/8", "except": ["010.1.0.0/16"]}}]}])
    NETPOL.default(np)
    assert NETPOL.validate(np) == []
    bad = _netpol(ingress=[{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16", "10.0.0.0/8"]}}]}])
    assert [(e["field"], e["message"]) for e in NETPOL.validate(bad)] == [
        ("spec.ingress[0].from[0].ipBlock.except[0]", 'Invalid value: "11.0.0.0/16": must be a strict subset of `cidr`'),
        ("spec.ingress[0].from[0].ipBlock.except[1]", 'Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`')]


# ---- core/v1 Node ---------------------------------------------------------------------------------

def test_node_deprecated_fields() -> None:
    node: JsonDict = {"metadata": {"name": "n"}, "spec": {"externalID": "i-123", "configSource": {"configMap": {}}}}
    created = copy.deepcopy(node)
    NODE.prepare_for_create(created)
    assert "configSource" not in created["spec"]  # dropDisabledFields on create
    assert NODE.warnings_on_create(created) == [
        "spec.externalID: this field is deprecated, and is unused by Kubernetes"]
    # an update keeps configSource only when the stored node has it, and then warns about it
    updated = copy.deepcopy(node)
    NODE.prepare_for_update(updated, node)
    assert NODE.warnings_on_update(updated, node) == [
        "spec.configSource: the feature is removed",
        "spec.externalID: this field is deprecated, and is unused by Kubernetes"]
    fresh = copy.deepcopy(node)
    NODE.prepare_for_update(fresh, created)
    assert "configSource" not in fresh["spec"]


# ---- core/v1 Secret: tls.X509KeyPair --------------------------------------------------------------

def _pem_pair(key: Any) -> tuple[bytes, bytes]:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "example.com")])
    now = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
RSA_CERT, RSA_KEY_PEM = _pem_pair(RSA_KEY)
EC_CERT, EC_KEY_PEM = _pem_pair(EC_KEY)
OTHER_RSA_KEY_PEM = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _tls_secret(cert: bytes, key: bytes, secret_type: str = "kubernetes.io/tls") -> JsonDict:
    return {"metadata": {"name": "tls"}, "type": secret_type,
            "data": {"tls.crt": base64.b64encode(cert).decode(), "tls.key": base64.b64encode(key).decode()}}


TLS_SECRETS = [
    ("matching RSA pair", RSA_CERT, RSA_KEY_PEM, []),
    ("matching ECDSA pair", EC_CERT, EC_KEY_PEM, []),
    ("placeholder data", b"cert", b"key", ["tls: failed to find any PEM data in certificate input"]),
    ("no key", RSA_CERT, b"", ["tls: failed to find any PEM data in key input"]),
    ("inputs switched", RSA_KEY_PEM, RSA_CERT,
     ["tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may "
      "have been switched"]),
    ("certificate as key", RSA_CERT, RSA_CERT,
     ["tls: found a certificate rather than a key in the PEM for the private key"]),
    ("key of another pair", RSA_CERT, OTHER_RSA_KEY_PEM, ["tls: private key does not match public key"]),
    ("key of another type", RSA_CERT, EC_KEY_PEM, ["tls: private key type does not match public key type"]),
]


@pytest.mark.parametrize(("cert", "key", "want"), [c[1:] for c in TLS_SECRETS], ids=[c[0] for c in TLS_SECRETS])
def test_tls_secret_key_pair(cert: bytes, key: bytes, want: list[str]) -> None:
    assert SECRET.warnings_on_create(_tls_secret(cert, key)) == want
    assert SECRET.warnings_on_update(_tls_secret(cert, key), _tls_secret(RSA_CERT, RSA_KEY_PEM)) == want


def test_only_tls_secrets_are_checked() -> None:
    assert SECRET.warnings_on_create(_tls_secret(b"cert", b"key", "Opaque")) == []


# ---- per-resource deprecation (deprecation.WarningMessage) ----------------------------------------

def test_deprecation_messages() -> None:
    assert warning_message("", "v1", "Endpoints", Deprecation((1, 33), replacement="discovery.k8s.io/v1 EndpointSlice")) \
        == "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
    assert warning_message("", "v1", "ComponentStatus", Deprecation((1, 19))) == "v1 ComponentStatus is deprecated in v1.19+"
    assert warning_message("flowcontrol.apiserver.k8s.io", "v1beta3", "FlowSchema",
                           Deprecation((1, 29), (1, 32), "flowcontrol.apiserver.k8s.io/v1 FlowSchema")) == (
        "flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema is deprecated in v1.29+, unavailable in v1.32+; "
        "use flowcontrol.apiserver.k8s.io/v1 FlowSchema")


# ---- through the request core ---------------------------------------------------------------------

async def test_core_returns_the_strategy_warnings(core: ApiCore) -> None:
    svc_info = core.registry.get("", "v1", "services")
    ep_info = core.registry.get("", "v1", "endpoints")
    assert svc_info is not None and ep_info is not None
    opts = WriteOptions()
    await core.create(svc_info, "default", {"metadata": {"name": "web"}, "spec": {
        "ports": [{"port": 80}], "externalIPs": ["192.168.001.10", "192.168.1.11"]}}, opts)
    assert opts.warnings == [_leading("spec.externalIPs[0]", "192.168.001.10", "192.168.1.10")]

    # an Endpoints the endpoints controller labels is not checked (the controller pays nothing)
    managed = _endpoints({"addresses": _addrs("10.0.0.01")},
                         labels={"endpoints.kubernetes.io/managed-by": "endpoint-controller"})
    opts = WriteOptions()
    await core.create(ep_info, "default", managed, opts)
    assert opts.warnings == []
    opts = WriteOptions()
    mine = _endpoints({"addresses": _addrs("10.0.0.01")})
    mine["metadata"]["name"] = "mine"
    await core.create(ep_info, "default", mine, opts)
    assert opts.warnings == [_leading("subsets[0].addresses[0].ip", "10.0.0.01", "10.0.0.1")]


async def test_core_warns_nothing_for_an_invalid_object(core: ApiCore) -> None:
    np_info = core.registry.get("networking.k8s.io", "v1", "networkpolicies")
    assert np_info is not None
    opts = WriteOptions()
    with pytest.raises(InvalidError):
        await core.create(np_info, "default", _netpol(ingress=[{"from": [{"ipBlock": {
            "cidr": "010.0.0.1/8", "except": ["nope"]}}]}]), opts)
    assert opts.warnings == []


def test_endpoint_slice_generation() -> None:
    # endpointSliceStrategy.PrepareForCreate / PrepareForUpdate: generation 1, bumped when anything
    # but metadata changes, or the labels do
    sl = _slice(["fd00::1"])
    EPS.prepare_for_create(sl)
    assert sl["metadata"]["generation"] == 1
    same = copy.deepcopy(sl)
    same["metadata"]["annotations"] = {"a": "b"}
    EPS.prepare_for_update(same, sl)
    assert same["metadata"]["generation"] == 1
    relabelled = copy.deepcopy(sl)
    relabelled["metadata"]["labels"] = {"x": "y"}
    EPS.prepare_for_update(relabelled, sl)
    assert relabelled["metadata"]["generation"] == 2
    moved = copy.deepcopy(sl)
    moved["endpoints"][0]["addresses"] = ["fd00::2"]
    EPS.prepare_for_update(moved, sl)
    assert moved["metadata"]["generation"] == 2
