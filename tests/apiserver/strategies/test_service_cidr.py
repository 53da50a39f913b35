"""networking.k8s.io/v1 ServiceCIDR and IPAddress on the real request core: validation messages
(strict CIDR/IP forms), update rules, and the Service allocator's use of them (cluster IPs only
from ready ranges, one IPAddress per cluster IP, released on delete)."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.core import ApiCore
from minik3s.api import errors


def _info(core: ApiCore, resource: str, group: str = "networking.k8s.io") -> Any:
    info = core.registry.get(group, "v1", resource)
    assert info is not None
    return info


def _causes(e: pytest.ExceptionInfo[errors.InvalidError]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in e.value.details["causes"]]


@pytest.mark.parametrize("cidrs, expected", [
    ([], [("spec.cidrs", "Required value: at least one CIDR required")]),
    (["10.0.0.0/24", "fd00::/64", "10.1.0.0/24"],
     [("spec.cidrs", 'Invalid value: {"cidrs":["10.0.0.0/24","fd00::/64","10.1.0.0/24"]}: may only hold up to 2 values')]),
    (["10.0.0.0/24", "10.1.0.0/24"],
     [("spec.cidrs", 'Invalid value: []string{"10.0.0.0/24", "10.1.0.0/24"}: may specify no more than one IP for each IP '
                     'family, i.e 192.168.0.0/24 and 2001:db8::/64')]),
    (["10.0.0.0"], [("spec.cidrs[0]", 'Invalid value: "10.0.0.0": must be a valid CIDR value, '
                                      '(e.g. 10.9.8.0/24 or 2001:db8::/64)')]),
    (["10.0.0.1/24"], [("spec.cidrs[0]", 'Invalid value: "10.0.0.1/24": must not have bits set beyond the prefix '
                                         'length')]),
    (["010.0.0.0/24"], [("spec.cidrs[0]", 'Invalid value: "010.0.0.0/24": must not have leading 0s in IP or prefix '
                                          'length')]),
    (["fd00:0::/64"], [("spec.cidrs[0]", 'Invalid value: "fd00:0::/64": must be in canonical form ("fd00::/64")')]),
])
async def test_service_cidr_validation(core: ApiCore, cidrs: list[str], expected: list[tuple[str, str]]) -> None:
    with pytest.raises(errors.InvalidError) as e:
        await core.create(_info(core, "servicecidrs"), None, {"metadata": {"name": "x"}, "spec": {"cidrs": cidrs}})
    assert _causes(e) == expected


async def test_service_cidr_update_rules_and_kept_status(core: ApiCore) -> None:
    info = _info(core, "servicecidrs")
    created = await core.create(info, None, {"metadata": {"name": "x"}, "spec": {"cidrs": ["10.0.0.0/24"]},
                                             "status": {"conditions": [{"type": "Ready", "status": "True",
                                                                        "reason": "", "message": "m",
                                                                        "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
    assert created["status"]["conditions"][0]["message"] == "m"  # PrepareForCreate keeps status
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(info, None, "x", "merge", {"spec": {"cidrs": ["10.1.0.0/24"]}})
    assert _causes(e) == [("spec.cidrs[0]", 'Invalid value: "10.1.0.0/24": field is immutable')]
    # single-stack to dual-stack is allowed, the first range kept
    got = await core.patch(info, None, "x", "merge", {"spec": {"cidrs": ["10.0.0.0/24", "fd00::/108"]}})
    assert got["spec"]["cidrs"] == ["10.0.0.0/24", "fd00::/108"]
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(info, None, "x", "merge", {"spec": {"cidrs": ["10.0.0.0/24"]}})
    assert _causes(e) == [("spec.cidrs", 'Invalid value: []string{"10.0.0.0/24"}: field is immutable')]


@pytest.mark.parametrize("name, spec, expected", [
    ("10.0.0.1", {}, [("spec.parentRef", "Required value")]),
    ("10.00.0.1", {"parentRef": {"resource": "services", "name": "a"}},
     [("metadata.name", 'Invalid value: "10.00.0.1": must not have leading 0s')]),
    ("fd00:0::1", {"parentRef": {"resource": "services", "name": "a"}},
     [("metadata.name", 'Invalid value: "fd00:0::1": must be in canonical form ("fd00::1")')]),
    ("web", {"parentRef": {"resource": "services", "name": "a"}},
     [("metadata.name", 'Invalid value: "web": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')]),
    ("10.0.0.1", {"parentRef": {"group": "Bad_Group", "resource": "", "name": "a/b"}},
     [("spec.parentRef.group", 'Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist of lower '
                               "case alphanumeric characters, '-' or '.', and must start and end with an "
                               "alphanumeric character (e.g. 'example.com', regex used for validation is "
                               "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
      ("spec.parentRef.resource", "Required value"),
      ("spec.parentRef.name", "Invalid value: \"a/b\": may not contain '/'")]),
])
async def test_ip_address_validation(core: ApiCore, name: str, spec: dict, expected: list[tuple[str, str]]) -> None:
    with pytest.raises(errors.InvalidError) as e:
        await core.create(_info(core, "ipaddresses"), None, {"metadata": {"name": name}, "spec": spec})
    assert _causes(e) == expected


async def test_ip_address_parent_ref_is_immutable(core: ApiCore) -> None:
    info = _info(core, "ipaddresses")
    await core.create(info, None, {"metadata": {"name": "10.0.0.1"},
                                   "spec": {"parentRef": {"resource": "services", "namespace": "a", "name": "b"}}})
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(info, None, "10.0.0.1", "merge", {"spec": {"parentRef": {"name": "c"}}})
    assert _causes(e)[0][0] == "spec.parentRef" and _causes(e)[0][1].endswith("field is immutable")


async def test_services_allocate_from_ready_service_cidrs_and_keep_ip_addresses(core: ApiCore) -> None:
    cidrs, ips = _info(core, "servicecidrs"), _info(core, "ipaddresses")
    services = core.registry.get("", "v1", "services")
    assert services is not None
    await core.create(cidrs, None, {"metadata": {"name": "kubernetes"}, "spec": {"cidrs": ["10.43.0.0/16"]}})
    svc = await core.create(services, "default", {"metadata": {"name": "web"},
                                                  "spec": {"ports": [{"port": 80}]}})
    ip = svc["spec"]["clusterIP"]
    assert ip.startswith("10.43.")
    held = core.get(ips, None, ip)
    assert held["spec"] == {"parentRef": {"resource": "services", "namespace": "default", "name": "web"}}
    assert held["metadata"]["labels"] == {"ipaddress.kubernetes.io/ip-family": "IPv4",
                                          "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}
    # an address outside every ServiceCIDR, then inside a new one
    body = {"metadata": {"name": "pinned"}, "spec": {"clusterIP": "10.96.0.5", "ports": [{"port": 80}]}}
    with pytest.raises(errors.InvalidError) as e:
        await core.create(services, "default", body)
    assert _causes(e) == [("spec.clusterIPs", 'Invalid value: []string{"10.96.0.5"}: failed to allocate IP 10.96.0.5: the '
                                              'provided network does not match the current range')]
    await core.create(cidrs, None, {"metadata": {"name": "extra"}, "spec": {"cidrs": ["10.96.0.0/29"]}})
    await core.create(services, "default", body)
    assert core.get(ips, None, "10.96.0.5")["spec"]["parentRef"]["name"] == "pinned"
    # the IP another Service holds, and the range's network/broadcast addresses
    for taken, why in (("10.96.0.5", "provided IP is already allocated"),
                       ("10.96.0.7", "the provided network does not match the current range")):
        with pytest.raises(errors.InvalidError) as e:
            await core.create(services, "default", {"metadata": {"name": "again"},
                                                    "spec": {"clusterIP": taken, "ports": [{"port": 80}]}})
        assert _causes(e)[0][1].endswith(f"failed to allocate IP {taken}: {why}")
    # a Service's deletion releases its IPAddress
    await core.delete(services, "default", "pinned")
    with pytest.raises(errors.NotFoundError):
        core.get(ips, None, "10.96.0.5")
    # a range marked not ready is not allocated from
    await core.patch(cidrs, None, "extra", "merge", {"status": {"conditions": [
        {"type": "Ready", "status": "False", "reason": "Terminating", "message": "x",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}, subresource="status")
    with pytest.raises(errors.InvalidError):
        await core.create(services, "default", body)


async def test_a_full_range_is_an_internal_error(core: ApiCore) -> None:
    cidrs = _info(core, "servicecidrs")
    services = core.registry.get("", "v1", "services")
    assert services is not None
    await core.create(cidrs, None, {"metadata": {"name": "tiny"}, "spec": {"cidrs": ["10.96.0.0/30"]}})
    for name in ("a", "b"):
        await core.create(services, "default", {"metadata": {"name": name}, "spec": {"ports": [{"port": 80}]}})
    with pytest.raises(errors.InternalError) as e:
        await core.create(services, "default", {"metadata": {"name": "c"}, "spec": {"ports": [{"port": 80}]}})
    assert e.value.message == "Internal error occurred: failed to allocate a serviceIP: range is full"


async def test_a_service_turned_external_name_releases_its_ip_address(core: ApiCore) -> None:
    ips = _info(core, "ipaddresses")
    services = core.registry.get("", "v1", "services")
    assert services is not None
    svc = await core.create(services, "default", {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}})
    ip = svc["spec"]["clusterIP"]
    assert core.get(ips, None, ip)["spec"]["parentRef"]["name"] == "web"
    # a label change keeps it (no new object, nothing released)
    before = core.get(ips, None, ip)["metadata"]["resourceVersion"]
    await core.patch(services, "default", "web", "merge", {"metadata": {"labels": {"a": "b"}}})
    assert core.get(ips, None, ip)["metadata"]["resourceVersion"] == before
    await core.patch(services, "default", "web", "merge", {"spec": {
        "type": "ExternalName", "externalName": "example.com", "clusterIP": None, "clusterIPs": None, "ports": None}})
    with pytest.raises(errors.NotFoundError):
        core.get(ips, None, ip)
