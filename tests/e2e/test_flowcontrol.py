"""API Priority and Fairness objects and response headers on a real server, read with the real
kubectl 1.33 and plain HTTP."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from minik3s.testing.wait import wait_for
from tests.e2e.test_kubectl import Kubectl

pytestmark = pytest.mark.usefixtures("kubectl_bin")
FS = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas"
PL = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations"


def test_kubectl_lists_the_bootstrap_configuration_and_responses_name_it(kubectl_bin: Path, minik3s_server_factory,
                                                                          tmp_path: Path) -> None:
    srv = minik3s_server_factory(nodes=0)
    kubectl = Kubectl(kubectl_bin, srv, tmp_path / "kc")

    def k(*args: str) -> str:
        return kubectl(*args).stdout

    with httpx.Client(base_url=srv.url, timeout=30) as http:
        wait_for(lambda: len(http.get(FS).json()["items"]) == 13 and all(
            (o.get("status") or {}).get("conditions") for o in http.get(FS).json()["items"]), timeout=30)
        rows = [re.split(r"\s{2,}", line.strip()) for line in k("get", "flowschemas").splitlines()]
        assert rows[0] == ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"]
        # sorted by precedence, then name (the printer's order, not the store's)
        assert [r[0] for r in rows[1:]] == [
            "exempt", "probes", "system-leader-election", "endpoint-controller", "workload-leader-election",
            "system-node-high", "system-nodes", "kube-controller-manager", "kube-scheduler",
            "kube-system-service-accounts", "service-accounts", "global-default", "catch-all"]
        assert rows[1][1:4] == ["exempt", "1", "<none>"] and rows[1][5] == "False"
        rows = [re.split(r"\s{2,}", line.strip()) for line in k("get", "prioritylevelconfigurations").splitlines()]
        assert rows[0] == ["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT", "AGE"]
        by_name = {r[0]: r for r in rows[1:]}
        assert by_name["catch-all"][1:6] == ["Limited", "5", "<none>", "<none>", "<none>"]
        assert by_name["workload-low"][1:6] == ["Limited", "100", "128", "6", "50"]
        assert by_name["exempt"][1:3] == ["Exempt", "<none>"]
        # the plain-HTTP listener's requests are the admin's: the exempt schema and level
        exempt_fs = http.get(f"{FS}/exempt").json()["metadata"]["uid"]
        exempt_pl = http.get(f"{PL}/exempt").json()["metadata"]["uid"]
        for path in ("/api/v1/namespaces", "/healthz", "/version"):
            r = http.get(path)
            assert r.headers["X-Kubernetes-PF-FlowSchema-UID"] == exempt_fs
            assert r.headers["X-Kubernetes-PF-PriorityLevel-UID"] == exempt_pl
        with http.stream("GET", "/api/v1/namespaces", params={"watch": "1", "timeoutSeconds": "1"}) as r:
            assert r.headers["X-Kubernetes-PF-FlowSchema-UID"] == exempt_fs  # watches are classified too
        assert "X-Kubernetes-PF-FlowSchema-UID" in http.get("/api/v1/namespaces/default/pods/none").headers
    kubectl.close()
