"""Request authentication (layer L4, apiserver/handlers): who sent a request on the TLS
listener, as kube-apiserver's authenticator chain answers it
(staging/src/k8s.io/apiserver/pkg/authentication/ and pkg/kubeapiserver/authenticator).

In upstream's order, the first that recognises the request wins:
1. a client certificate the TLS handshake verified against the client CA (the listener asks
   for one, `CERT_OPTIONAL`): the user is the subject's CN, the groups its O values;
2. `Authorization: Bearer <token>`: a token of the static token file(s) (kube-apiserver's
   `--token-auth-file` CSV `token,user,uid,"group1,group2"`), else a service-account token this
   server signed (`strategies.service_account.authenticate_token`: signature, expiry, audience,
   the ServiceAccount and bound pod/secret still there). A bearer token none of them accepts is
   a 401 — it never falls back to anonymous (upstream's FailOnError union);
3. nothing presented: `system:anonymous` (group `system:unauthenticated`), let through only to
   `/healthz`, `/livez`, `/readyz` and `/version` (what upstream's `system:public-info-viewer`
   grants); anything else answers 401 with the Status kube-apiserver writes
   (`{"kind":"Status",...,"message":"Unauthorized","reason":"Unauthorized","code":401}`).
Every authenticated user also gets `system:authenticated`, as upstream's group adder does.

Without `AuthnSettings` (plain HTTP on loopback) the middleware passes requests through
untouched and `request[REQUEST_USER]` stays unset (= `ADMIN`, docs/security.md).

TokenReview (authentication.k8s.io/v1) answers from the same bearer-token authenticators.

Data flow: aiohttp -> `error_middleware` -> `authn_middleware` (sets `request[REQUEST_USER]`)
-> later middlewares (impersonation, authorization) -> `dispatch`.
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from aiohttp import web

from apiserver.core import ApiCore
from apiserver.keys import AUTHN, CORE, REQUEST_USER, AuthnSettings
from apiserver.strategies.service_account import TokenError, authenticate_token
from minik3s.api import errors
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.user import ANONYMOUS, AUTHENTICATED, UserInfo

logger = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# paths anonymous requests may reach (RBAC's system:public-info-viewer): each and its subpaths
PUBLIC_PATHS = ("/healthz", "/livez", "/readyz", "/version")
INVALID_TOKEN = "invalid bearer token"


class TokenFileError(ValueError):
    """A static token file that cannot be read (the server refuses to start, naming the line)."""


def parse_token_file(text: str, *, source: str = "token file") -> dict[str, UserInfo]:
    """kube-apiserver's `--token-auth-file`: CSV rows `token,user,uid[,"group1,group2"]`; blank
    lines are skipped; fewer than 3 columns is an error naming the line; a later duplicate
    token replaces an earlier one (logged)."""
    out: dict[str, UserInfo] = {}
    for lineno, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < 3:
            raise TokenFileError(f"{source}: line {lineno}: token file must have at least 3 columns "
                                 f"(token,user,uid), found {len(row)}")
        token, user, uid = row[0].strip(), row[1].strip(), row[2].strip()
        if not token or not user:
            raise TokenFileError(f"{source}: line {lineno}: token and user must not be empty")
        groups: tuple[str, ...] = ()
        if len(row) >= 4 and row[3].strip():
            groups = tuple(g.strip() for g in row[3].split(",") if g.strip())
        if token in out:
            logger.warning("duplicate token in token file, the later line wins source=%s line=%d", source, lineno)
        out[token] = UserInfo(user, uid=uid, groups=groups)
    return out


def _with_authenticated(user: UserInfo) -> UserInfo:
    if AUTHENTICATED in user.groups:
        return user
    return UserInfo(user.username, uid=user.uid, groups=(*user.groups, AUTHENTICATED), extra=user.extra)


def user_from_peercert(cert: Mapping[str, Any] | None) -> UserInfo | None:
    """CN -> user, every O -> a group (upstream's x509 `CommonNameUserConversion`), from the
    verified peer certificate as `ssl.SSLSocket.getpeercert()` decodes it."""
    if not cert:
        return None
    cn = ""
    orgs: list[str] = []
    for rdn in cert.get("subject") or ():
        for key, value in rdn:
            if key == "commonName" and not cn:
                cn = str(value)
            elif key == "organizationName":
                orgs.append(str(value))
    if not cn:
        return None
    return UserInfo(cn, groups=(*orgs, AUTHENTICATED))


def authenticate_bearer(core: ApiCore, settings: AuthnSettings, token: str, *,
                        audiences: Sequence[str] | None = None) -> tuple[UserInfo, list[str]]:
    """(user, audiences the token is good for) of a bearer token, or `TokenError` (upstream's
    message): the static token files first, then service-account tokens."""
    want = list(audiences) if audiences else list(settings.audiences)
    static = settings.tokens.get(token)
    if static is not None:
        # audience-agnostic: good for the API's own audiences only (WrapAudienceAgnosticToken)
        common = [a for a in want if a in settings.audiences]
        if not common:  # not for these audiences: as if unknown
            raise TokenError(INVALID_TOKEN)
        return _with_authenticated(static), common
    try:
        found = authenticate_token(core, token, audiences=want)
    except TokenError as e:
        # upstream aggregates the authenticators' errors: the service-account one and the
        # bearer-token default ("[invalid bearer token, service account token has expired]")
        raise TokenError(f"[{INVALID_TOKEN}, {e}]") from None
    if found is None:
        raise TokenError(INVALID_TOKEN)
    return found


def authenticate_request(request: web.Request, settings: AuthnSettings) -> UserInfo:
    """The request's user (ANONYMOUS when it presents nothing); `UnauthorizedError` for a
    rejected credential."""
    transport = request.transport
    peercert = transport.get_extra_info("peercert") if transport is not None else None
    user = user_from_peercert(peercert)
    if user is not None:
        return user
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() == "bearer" and token:
        try:
            return authenticate_bearer(request.app[CORE], settings, token)[0]
        except TokenError as e:
            logger.info("unable to authenticate the request reason=%s path=%s", e, request.path)
            raise errors.UnauthorizedError("Unauthorized") from None
    return ANONYMOUS


def is_public_path(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in PUBLIC_PATHS)


@web.middleware
async def authn_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    authn = request.app[AUTHN]
    if authn is None:  # plain HTTP on loopback: every request is the admin's
        return await handler(request)
    user = authenticate_request(request, authn)
    if user is ANONYMOUS and not is_public_path(request.path):
        raise errors.UnauthorizedError("Unauthorized")
    request[REQUEST_USER] = user
    return await handler(request)


def token_review(request: web.Request, info: ResourceInfo, body: Any) -> JsonDict:
    """POST authentication.k8s.io/v1 tokenreviews: the token authenticated by the same
    bearer-token authenticators as requests (upstream pkg/registry/authentication/tokenreview).
    Answered, never stored; an unknown token is `authenticated: false` with the error, not a
    failed request."""
    if not isinstance(body, dict):
        raise errors.BadRequestError("the object provided is not a JSON object")
    spec = body.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise errors.BadRequestError("spec must be an object")
    token = spec.get("token")
    if token is not None and not isinstance(token, str):
        raise errors.BadRequestError("spec.token must be a string")
    if not token:
        raise errors.BadRequestError("token is required for TokenReview in authentication")
    auds = spec.get("audiences")
    if auds is not None and (not isinstance(auds, list) or not all(isinstance(a, str) for a in auds)):
        raise errors.BadRequestError("spec.audiences must be a list of strings")
    settings = request.app[AUTHN] or AuthnSettings()
    status: JsonDict = {"user": {}}
    try:
        user, good_for = authenticate_bearer(request.app[CORE], settings, token, audiences=auds or None)
    except TokenError as e:
        status["authenticated"] = False
        status["error"] = str(e)
    else:
        status = {"authenticated": True, "user": user.to_wire(), "audiences": good_for}
    meta = body.get("metadata")
    return {"kind": info.kind, "apiVersion": info.api_version,
            "metadata": {"creationTimestamp": None, **(meta if isinstance(meta, dict) else {})},
            "spec": spec, "status": status}
