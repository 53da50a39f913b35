"""The request authenticators apart from TLS: the static token file format (kube-apiserver's
--token-auth-file), the x509 subject -> user mapping, bearer tokens against the real
in-process API (static tokens first, then service-account tokens; audiences), and the
authenticated user handed to the core in the write/delete options."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest
from aiohttp.test_utils import make_mocked_request

from apiserver.handlers.authn import (
    TokenFileError,
    authenticate_bearer,
    is_public_path,
    parse_token_file,
    user_from_peercert,
)
from apiserver.handlers.common import delete_options, write_options
from apiserver.keys import REQUEST_USER, AuthnSettings
from apiserver.strategies.service_account import TokenError
from minik3s.api.options import WriteOptions
from minik3s.api.resources import SERVICEACCOUNTS
from minik3s.api.user import ADMIN, UserInfo


def test_token_file_rows_become_users_with_their_groups() -> None:
    text = 'tok1,alice,uid-1,"dev,ops"\n\ntok2,bob,uid-2\n'
    assert parse_token_file(text) == {
        "tok1": UserInfo("alice", uid="uid-1", groups=("dev", "ops")),
        "tok2": UserInfo("bob", uid="uid-2"),
    }


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("tok,alice\n", "line 1: token file must have at least 3 columns", id="two-columns"),
    pytest.param("ok,a,1\n,bob,2\n", "line 2: token and user must not be empty", id="empty-token"),
])
def test_bad_token_file_names_the_line(text: str, message: str) -> None:
    with pytest.raises(TokenFileError, match=message):
        parse_token_file(text, source="tokens.csv")


def test_later_duplicate_token_wins() -> None:
    assert parse_token_file("t,a,1\nt,b,2\n")["t"].username == "b"


def test_client_certificate_subject_cn_is_the_user_and_o_the_groups() -> None:
    cert = {"subject": ((("organizationName", "system:masters"),), (("organizationName", "dev"),),
                        (("commonName", "system:admin"),))}
    assert user_from_peercert(cert) == UserInfo("system:admin", groups=("system:masters", "dev", "system:authenticated"))
    assert user_from_peercert({}) is None
    assert user_from_peercert({"subject": ((("organizationName", "x"),),)}) is None  # no CN: not a user


@pytest.mark.parametrize(("path", "public"), [
    ("/healthz", True), ("/readyz/ping", True), ("/livez", True), ("/version", True), ("/version/", True),
    ("/versions", False), ("/api", False), ("/", False), ("/metrics", False), ("/healthzx", False),
])
def test_only_health_and_version_are_public(path: str, public: bool) -> None:
    assert is_public_path(path) is public


async def test_bearer_tokens_static_then_service_account(real_api: Any) -> None:
    settings = AuthnSettings(tokens=MappingProxyType({"static": UserInfo("alice", uid="1", groups=("dev",))}))
    user, auds = authenticate_bearer(real_api.core, settings, "static")
    assert user == UserInfo("alice", uid="1", groups=("dev", "system:authenticated"))
    assert auds == list(settings.audiences)
    with pytest.raises(TokenError, match="^invalid bearer token$"):  # audience-agnostic: not for "vault"
        authenticate_bearer(real_api.core, settings, "static", audiences=["vault"])
    with pytest.raises(TokenError, match="^invalid bearer token$"):
        authenticate_bearer(real_api.core, settings, "nope")
    await real_api.create(SERVICEACCOUNTS, {"metadata": {"name": "bot"}}, "default")
    core = real_api.core
    tr = await core.subresource(SERVICEACCOUNTS, "token").create(core, SERVICEACCOUNTS, "default", "bot",
                                                                 {"kind": "TokenRequest"}, WriteOptions())
    user, auds = authenticate_bearer(core, settings, tr["status"]["token"])
    assert user.username == "system:serviceaccount:default:bot"
    assert auds == list(settings.audiences)
    await real_api.delete(SERVICEACCOUNTS, "bot", "default")
    with pytest.raises(TokenError, match=r'^\[invalid bearer token, serviceaccounts "bot" not found\]$'):
        authenticate_bearer(core, settings, tr["status"]["token"])


def test_the_request_user_reaches_write_and_delete_options() -> None:
    alice = UserInfo("alice", groups=("dev", "system:authenticated"))
    req = make_mocked_request("POST", "/api/v1/namespaces/default/configmaps")
    assert write_options(req).user is ADMIN and delete_options(req, b"").user is ADMIN  # plain loopback
    req[REQUEST_USER] = alice
    assert write_options(req).user is alice and delete_options(req, b"").user is alice
