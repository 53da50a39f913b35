"""Service-account tokens end to end on the real in-process API: TokenRequest signs RS256 with
the registry's key, `authenticate_token` accepts exactly the tokens upstream accepts (signature,
issuer, iat/nbf/exp on the server's clock, audience, the ServiceAccount and bound pod/secret
still there with the same uid) and names the user and groups upstream names."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from apiserver.strategies.service_account import (
    ServiceAccountKeys,
    TokenError,
    authenticate_token,
)
from minik3s.api.options import WriteOptions
from minik3s.api.resources import NODES, PODS, SERVICEACCOUNTS, ResourceRegistry
from minik3s.api.types import JsonDict
from minik3s.testing.builders import make_pod
from minik3s.utils.clock import FakeClock

NS = "default"
SECRETS = ResourceRegistry().get("", "v1", "secrets")
assert SECRETS is not None


async def _token(api: Any, name: str, spec: JsonDict | None = None) -> str:
    core = api.core
    tr = await core.subresource(SERVICEACCOUNTS, "token").create(
        core, SERVICEACCOUNTS, NS, name, {"kind": "TokenRequest", "spec": spec or {}}, WriteOptions())
    return str(tr["status"]["token"])


def _parts(token: str) -> tuple[JsonDict, JsonDict]:
    head, body, _ = token.split(".")
    dec = [json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))) for p in (head, body)]
    return dec[0], dec[1]


@pytest.fixture
async def sa(real_api: Any) -> JsonDict:
    return dict(await real_api.create(SERVICEACCOUNTS, {"metadata": {"name": "bot"}}, NS))


async def test_token_is_rs256_with_upstream_claims_and_authenticates_as_the_service_account(
        real_api: Any, sa: JsonDict) -> None:
    token = await _token(real_api, "bot")
    header, claims = _parts(token)
    assert header == {"alg": "RS256", "kid": real_api.core.hook_state(ServiceAccountKeys).kid}
    assert claims["sub"] == "system:serviceaccount:default:bot"
    assert claims["kubernetes.io"] == {"namespace": NS, "serviceaccount": {"name": "bot", "uid": sa["metadata"]["uid"]}}
    found = authenticate_token(real_api.core, token)
    assert found is not None
    user, auds = found
    assert auds == ["https://kubernetes.default.svc.cluster.local", "k3s"]
    assert user.username == "system:serviceaccount:default:bot"
    assert user.uid == sa["metadata"]["uid"]
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated")
    assert dict(user.extra) == {"authentication.kubernetes.io/credential-id": (f"JTI={claims['jti']}",)}


async def test_expired_token_is_rejected_on_the_servers_clock(real_api: Any, clock: FakeClock, sa: JsonDict) -> None:
    token = await _token(real_api, "bot", {"expirationSeconds": 600})
    clock.advance(600 + 60)  # go-jose's one-minute leeway past exp
    assert authenticate_token(real_api.core, token) is not None
    clock.advance(2)
    with pytest.raises(TokenError, match="service account token has expired"):
        authenticate_token(real_api.core, token)


async def test_token_of_a_deleted_or_recreated_service_account_is_rejected(real_api: Any, sa: JsonDict) -> None:
    token = await _token(real_api, "bot")
    await real_api.delete(SERVICEACCOUNTS, "bot", NS)
    with pytest.raises(TokenError, match='^serviceaccounts "bot" not found$'):
        authenticate_token(real_api.core, token)
    await real_api.create(SERVICEACCOUNTS, {"metadata": {"name": "bot"}}, NS)
    with pytest.raises(TokenError, match=r"service account UID \(.+\) does not match claim"):
        authenticate_token(real_api.core, token)


async def test_pod_bound_token_names_the_pod_and_node_and_dies_with_the_pod(real_api: Any, sa: JsonDict) -> None:
    node = await real_api.create(NODES, {"metadata": {"name": "n1"}})
    pod = await real_api.create(PODS, make_pod("web").node("n1").obj(), NS)
    token = await _token(real_api, "bot", {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "web"}})
    _, claims = _parts(token)
    assert claims["kubernetes.io"]["pod"] == {"name": "web", "uid": pod["metadata"]["uid"]}
    assert claims["kubernetes.io"]["node"] == {"name": "n1", "uid": node["metadata"]["uid"]}
    found = authenticate_token(real_api.core, token)
    assert found is not None
    user = found[0]
    assert user.extra["authentication.kubernetes.io/pod-name"] == ("web",)
    assert user.extra["authentication.kubernetes.io/pod-uid"] == (pod["metadata"]["uid"],)
    assert user.extra["authentication.kubernetes.io/node-name"] == ("n1",)
    await real_api.delete(PODS, "web", NS, grace_period_seconds=0)
    with pytest.raises(TokenError, match="^service account token has been invalidated$"):
        authenticate_token(real_api.core, token)
    await real_api.create(PODS, make_pod("web").node("n1").obj(), NS)  # same name, new uid: still dead
    with pytest.raises(TokenError, match=r"^pod UID \(.+\) does not match service account pod ref claim"):
        authenticate_token(real_api.core, token)


async def test_secret_bound_token_dies_with_the_secret(real_api: Any, sa: JsonDict) -> None:
    await real_api.create(SECRETS, {"metadata": {"name": "s"}}, NS)
    token = await _token(real_api, "bot", {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "s"}})
    assert authenticate_token(real_api.core, token) is not None
    await real_api.delete(SECRETS, "s", NS)
    with pytest.raises(TokenError, match="^service account token has been invalidated$"):
        authenticate_token(real_api.core, token)


async def test_audience_must_be_one_of_the_apis(real_api: Any, sa: JsonDict) -> None:
    token = await _token(real_api, "bot", {"audiences": ["vault"]})
    with pytest.raises(TokenError, match=r'^token audiences \["vault"\] is invalid for the target audiences '
                                         r'\["https://kubernetes.default.svc.cluster.local" "k3s"\]$'):
        authenticate_token(real_api.core, token)
    found = authenticate_token(real_api.core, token, audiences=["other", "vault"])
    assert found is not None and found[1] == ["vault"]


async def test_node_bound_token_dies_with_the_node(real_api: Any, sa: JsonDict) -> None:
    await real_api.create(NODES, {"metadata": {"name": "n2"}})
    token = await _token(real_api, "bot", {"boundObjectRef": {"kind": "Node", "apiVersion": "v1", "name": "n2"}})
    found = authenticate_token(real_api.core, token)
    assert found is not None and found[0].extra["authentication.kubernetes.io/node-name"] == ("n2",)
    await real_api.delete(NODES, "n2")
    with pytest.raises(TokenError, match="^service account token has been invalidated$"):
        authenticate_token(real_api.core, token)


@pytest.mark.parametrize("mangle", [
    pytest.param(lambda t: t[:-4] + ("AAAA" if not t.endswith("AAAA") else "BBBB"), id="tampered-signature"),
    pytest.param(lambda t: "not-a-jwt", id="not-a-jwt"),
    pytest.param(lambda t: "a.b.c", id="garbage-segments"),
])
async def test_tokens_not_signed_by_this_server_are_not_ours(real_api: Any, sa: JsonDict, mangle: Any) -> None:
    token = await _token(real_api, "bot")
    assert authenticate_token(real_api.core, mangle(token)) is None


async def test_token_signed_by_another_key_is_not_ours(real_api: Any, sa: JsonDict) -> None:
    token = await _token(real_api, "bot")
    real_api.core.provide_hook_state(ServiceAccountKeys())  # what a server with another service.key holds
    assert authenticate_token(real_api.core, token) is None
