"""ServiceCIDRs and IPAddresses (Kubernetes 1.33 GA) on a real server with the real kubectl: the
default `kubernetes` range, one IPAddress per cluster IP, an extra range, a range whose deletion
waits for its addresses, the repair at start; and kubectl's default strategic merge patch on
kinds whose lists carry no patch strategy (StorageClass, ClusterRole, Ingress)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from minik3s.testing.wait import wait_for
from tests.e2e.test_kubectl import Kubectl

pytestmark = pytest.mark.usefixtures("kubectl_bin")

CIDRS = "/apis/networking.k8s.io/v1/servicecidrs"
IPS = "/apis/networking.k8s.io/v1/ipaddresses"


def _rows(out: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in out.splitlines() if line.strip()]


def test_service_cidrs_and_ip_addresses(kubectl_bin: Path, minik3s_server_factory, tmp_path: Path) -> None:
    srv = minik3s_server_factory(nodes=0)
    k = Kubectl(kubectl_bin, srv, tmp_path / "kc")

    with httpx.Client(base_url=srv.url, timeout=30) as http:
        default = wait_for(lambda: (o := http.get(f"{CIDRS}/kubernetes").json()).get("metadata", {}).get(
            "finalizers") and o, timeout=30)
        assert default["spec"]["cidrs"] == ["10.43.0.0/16"]
        assert default["metadata"]["finalizers"] == ["networking.k8s.io/service-cidr-finalizer"]
        [ready] = wait_for(lambda: [c for c in http.get(f"{CIDRS}/kubernetes").json()["status"]["conditions"]
                                    if c["message"] == "Kubernetes Service CIDR is ready"], timeout=30)
        assert ready["status"] == "True" and ready["reason"] == ""
        rows = _rows(k("get", "servicecidrs").stdout)
        assert rows[0] == ["NAME", "CIDRS", "AGE"] and rows[1][:2] == ["kubernetes", "10.43.0.0/16"]
        rows = _rows(k("get", "ipaddresses").stdout)
        assert rows[0] == ["NAME", "PARENTREF"]
        assert ["10.43.0.1", "services/default/kubernetes"] in rows
        # a Service pinned outside every range, then inside a new one
        r = k("create", "service", "clusterip", "pinned", "--tcp=80", "--clusterip=10.96.0.5", ok=False)
        assert "failed to allocate IP 10.96.0.5: the provided network does not match the current range" in r.stderr
        k("apply", "-f", "-", stdin="apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: extra}\n"
                                    "spec: {cidrs: [10.96.0.0/28]}\n")
        wait_for(lambda: "networking.k8s.io/service-cidr-finalizer" in
                 (http.get(f"{CIDRS}/extra").json()["metadata"].get("finalizers") or []), timeout=30)
        k("create", "service", "clusterip", "pinned", "--tcp=80", "--clusterip=10.96.0.5")
        assert ["10.96.0.5", "services/default/pinned"] in _rows(k("get", "ipaddresses").stdout)
        # deleting the range waits while a Service holds one of its addresses
        k("delete", "servicecidr", "extra", "--wait=false")
        cond = wait_for(lambda: next((c for c in http.get(f"{CIDRS}/extra").json().get("status", {}).get(
            "conditions") or [] if c["status"] == "False"), None), timeout=30)
        assert cond["reason"] == "Terminating"
        assert cond["message"] == ("There are still IPAddresses referencing the ServiceCIDR, please remove them or "
                                   "create a new ServiceCIDR")
        r = k("create", "service", "clusterip", "late", "--tcp=80", "--clusterip=10.96.0.6", ok=False)
        assert "does not match the current range" in r.stderr  # no allocation from a range being deleted
        k("delete", "service", "pinned")
        # the finalizer goes 10 s after the deletion began
        wait_for(lambda: http.get(f"{CIDRS}/extra").status_code == 404, timeout=40)
        # an IPAddress lost while the server ran on is written again by the repair at start
        k("create", "service", "clusterip", "web", "--tcp=80")
        ip = json.loads(k("get", "service", "web", "-o", "json").stdout)["spec"]["clusterIP"]
        assert http.delete(f"{IPS}/{ip}").status_code == 200
    assert srv.stop() == 0
    srv.start()
    with httpx.Client(base_url=srv.url, timeout=30) as http:
        got = http.get(f"{IPS}/{ip}").json()
        assert got["spec"]["parentRef"] == {"resource": "services", "namespace": "default", "name": "web"}
    k.close()


def test_kubectl_patch_defaults_to_strategic_merge_on_every_builtin_kind(kubectl_bin: Path, minik3s_server_factory,
                                                                          tmp_path: Path) -> None:
    srv = minik3s_server_factory(nodes=0)
    kubectl = Kubectl(kubectl_bin, srv, tmp_path / "kc")

    def k(*args: str) -> str:
        return kubectl(*args).stdout.strip()

    # K3s' documented way to change the default class
    assert k("patch", "storageclass", "local-path", "-p",
             '{"metadata":{"annotations":{"storageclass.kubernetes.io/is-default-class":"false"}}}') == \
        "storageclass.storage.k8s.io/local-path patched"
    assert k("get", "storageclass", "local-path", "-o",
             "jsonpath={.metadata.annotations.storageclass\\.kubernetes\\.io/is-default-class}") == "false"
    k("create", "clusterrole", "r", "--verb=get", "--resource=pods")
    # rules carry no patch strategy: the patch's list replaces the stored one
    k("patch", "clusterrole", "r", "-p", '{"rules":[{"apiGroups":[""],"resources":["nodes"],"verbs":["list"]}]}')
    assert json.loads(k("get", "clusterrole", "r", "-o", "json"))["rules"] == [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]
    k("create", "ingress", "ing", "--rule=foo.com/=web:80")
    k("patch", "ingress", "ing", "-p", '{"metadata":{"finalizers":["a/b"]}}')
    k("patch", "ingress", "ing", "-p", '{"metadata":{"finalizers":["c/d"]}}')  # finalizers merge as a set
    assert sorted(json.loads(k("get", "ingress", "ing", "-o", "json"))["metadata"]["finalizers"]) == ["a/b", "c/d"]
    k("patch", "ingress", "ing", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    kubectl.close()
