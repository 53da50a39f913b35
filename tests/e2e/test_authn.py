"""Authentication over HTTPS on an embedded cluster (`minik3s.embed.Cluster(tls=True)`) with
simulated time: a service-account token works until it expires on the server's clock, a
pod-bound token dies with its pod, and the embedding API's own client reaches the TLS listener
with the kubeconfig it wrote."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator

import httpx
import pytest

from minik3s.api.errors import UnauthorizedError
from minik3s.api.resources import NAMESPACES, PODS, SERVICEACCOUNTS
from minik3s.client.kubeconfig import ClusterAccess
from minik3s.client.rest import HttpClient
from minik3s.embed import Cluster
from minik3s.testing.builders import make_pod

SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


@pytest.fixture
async def cluster() -> AsyncIterator[Cluster]:
    async with Cluster(nodes=0, tls=True, simulated_time=True, disable=["scheduler", "kubelet"]) as c:
        yield c


async def _token(cluster: Cluster, name: str, spec: dict[str, object]) -> str:
    tr = await cluster.client.request("POST", f"/api/v1/namespaces/default/serviceaccounts/{name}/token",
                                      body={"kind": "TokenRequest", "spec": spec})
    return str(tr["status"]["token"])


def _ca(cluster: Cluster) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cluster.data_dir / "server" / "tls" / "server-ca.crt"))


async def test_embedded_client_uses_tls_and_the_admin_certificate(cluster: Cluster) -> None:
    assert cluster.tls and cluster.url.startswith("https://127.0.0.1:")
    names = {n["metadata"]["name"] for n in (await cluster.client.list(NAMESPACES))["items"]}
    assert "kube-system" in names
    async with httpx.AsyncClient(base_url=cluster.url, verify=_ca(cluster)) as anon:
        assert (await anon.get("/api/v1/namespaces")).status_code == 401


async def test_service_account_token_expires_on_the_servers_clock(cluster: Cluster) -> None:
    await cluster.client.create(SERVICEACCOUNTS, {"metadata": {"name": "bot"}}, "default")
    token = await _token(cluster, "bot", {"expirationSeconds": 600})
    bot = HttpClient.for_access(ClusterAccess(cluster.url, ca_data=(cluster.data_dir / "server/tls/server-ca.crt")
                                              .read_bytes(), token=token))
    try:
        # whoami: allowed to every authenticated user (system:basic-user), so it shows authentication alone
        who = await bot.request("POST", SSR, body={"kind": "SelfSubjectReview"})
        assert who["status"]["userInfo"]["username"] == "system:serviceaccount:default:bot"
        await cluster.advance_time(600 + 61)  # past exp and go-jose's one-minute leeway
        with pytest.raises(UnauthorizedError, match="Unauthorized"):
            await bot.request("POST", SSR, body={"kind": "SelfSubjectReview"})
    finally:
        await bot.close()


async def test_pod_bound_token_dies_with_the_pod(cluster: Cluster) -> None:
    await cluster.client.create(SERVICEACCOUNTS, {"metadata": {"name": "bot"}}, "default")
    await cluster.client.create(PODS, make_pod("web").obj(), "default")
    token = await _token(cluster, "bot", {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "web"}})
    auth = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=cluster.url, verify=_ca(cluster)) as c:
        who = await c.post(SSR, headers=auth, json={"kind": "SelfSubjectReview"})
        assert who.status_code == 201, who.text
        assert who.json()["status"]["userInfo"]["extra"]["authentication.kubernetes.io/pod-name"] == ["web"]
        await cluster.client.delete(PODS, "web", "default", grace_period_seconds=0)
        r = await c.post(SSR, headers=auth, json={"kind": "SelfSubjectReview"})
        assert r.status_code == 401 and r.json()["message"] == "Unauthorized"
