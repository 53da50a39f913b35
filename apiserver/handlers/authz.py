"""Authorization and impersonation on the HTTP side (layer L4, apiserver handlers).

- `request_attributes`: upstream's RequestInfoFactory, from the path, method and query alone
  (no registry: an unknown resource is authorized, then 404s, as upstream):
    /api/v1/namespaces/ns/pods/p/log  -> verb get, group "", resource pods, subresource log
    GET on a collection -> list, or watch with `?watch=true` (`/api/v1/watch/...` too);
    DELETE on a collection -> deletecollection; `fieldSelector=metadata.name=x` names `x`;
    anything outside /api/<v>/... and /apis/<g>/<v>/... is a non-resource path (verb = method).
- `authorize_request` (called by `dispatch` first): only when authentication or impersonation
  set `request[REQUEST_USER]`; a plain-HTTP loopback request is `system:admin` and is not checked.
  A denial is upstream's 403 (`responsewriters.Forbidden` + `apierrors.NewForbidden`).
- `impersonation_middleware`: upstream's WithImpersonation filter. `Impersonate-User`,
  `Impersonate-Group` (repeatable), `Impersonate-Uid`, `Impersonate-Extra-<key>`; each one
  needs the `impersonate` verb on users / groups / serviceaccounts (core group) or uids /
  userextras (authentication.k8s.io). The new user gets `system:authenticated` (unless a group
  given is it or system:unauthenticated) and, for a service account named without groups, the
  service-account groups.

Data flow: authentication (sets REQUEST_USER) -> impersonation_middleware (may replace it) ->
dispatch -> authorize_request -> `apiserver.rbac.Authorizer` -> handlers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import replace
from types import MappingProxyType
from urllib.parse import unquote

from aiohttp import web

from apiserver.handlers.common import bool_param, request_user
from apiserver.keys import AUTHORIZER, REQUEST_USER
from apiserver.rbac import (
    Attributes,
    service_account_groups,
    service_account_username,
    split_service_account_username,
)
from minik3s.api.errors import BadRequestError, ForbiddenError, status_details
from minik3s.api.types import JsonDict
from minik3s.api.user import AUTHENTICATED, UNAUTHENTICATED, UserInfo
from minik3s.api.validation import is_dns1123_label, is_dns1123_subdomain

logger = logging.getLogger(__name__)

_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch",
                 "DELETE": "delete"}
_SPECIAL_VERBS = ("proxy", "watch")
_NAMESPACE_SUBRESOURCES = ("status", "finalize")
_WEBSOCKET_SUBRESOURCES = ("exec", "attach", "portforward")
_SANITIZE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_NAME_SELECTOR = re.compile(r"^metadata\.name(==?)(.*)$")


def _name_from_field_selector(selector: str) -> str:
    """upstream: a fieldSelector that requires an exact metadata.name names the request."""
    for term in selector.split(","):
        m = _NAME_SELECTOR.match(term.strip())
        if m and m.group(2) and "/" not in m.group(2) and m.group(2) not in (".", ".."):
            return m.group(2)
    return ""


# the request's attributes once parsed: the authorizer and the request metrics both read them
_REQUEST_ATTRIBUTES = web.RequestKey("minik3s.request_attributes", Attributes)


def request_attributes(request: web.Request, user: UserInfo) -> Attributes:
    """The request's attributes for `user`, parsed from the request once (then reused)."""
    attrs = request.get(_REQUEST_ATTRIBUTES)
    if attrs is None:
        attrs = request[_REQUEST_ATTRIBUTES] = _parse_attributes(request, user)
    elif attrs.user is not user:
        attrs = replace(attrs, user=user)
    return attrs


def parsed_request_attributes(request: web.Request, default_user: UserInfo) -> Attributes:
    """The request's attributes with whichever user parsed them first (`default_user` if it
    is parsed now): for readers that use the request's shape, not its user (the metrics)."""
    attrs = request.get(_REQUEST_ATTRIBUTES)
    if attrs is None:
        attrs = request[_REQUEST_ATTRIBUTES] = _parse_attributes(request, default_user)
    return attrs


def _parse_attributes(request: web.Request, user: UserInfo) -> Attributes:
    path = request.path
    parts = [p for p in path.split("/") if p]
    if len(parts) < 3 or parts[0] not in ("api", "apis") or (parts[0] == "apis" and len(parts) < 4):
        return Attributes(user=user, verb=request.method.lower(), resource_request=False, path=path)
    cur = parts[1:]
    group = ""
    if parts[0] == "apis":
        group, cur = cur[0], cur[1:]
    version, cur = cur[0], cur[1:]
    if cur[0] in _SPECIAL_VERBS:
        if len(cur) < 2:
            raise BadRequestError(f"unable to determine kind and namespace from url, {request.rel_url}")
        verb, cur = cur[0], cur[1:]
    else:
        verb = _METHOD_VERBS.get(request.method, "")
    namespace = ""
    if cur[0] == "namespaces":
        if len(cur) > 1:
            namespace = cur[1]
            if len(cur) > 2 and cur[2] not in _NAMESPACE_SUBRESOURCES:
                cur = cur[2:]
    resource = cur[0]
    name = cur[1] if len(cur) >= 2 else ""
    subresource = cur[2] if len(cur) >= 3 and verb != "proxy" else ""
    q = request.query
    if not name and verb == "get":
        verb = "watch" if bool_param(q.get("watch")) else "list"
        if q.get("fieldSelector"):
            name = _name_from_field_selector(q.get("fieldSelector") or "")
    if not name and verb == "delete":
        verb = "deletecollection"
    if (verb == "get" and not group and resource == "pods" and subresource in _WEBSOCKET_SUBRESOURCES
            and request.headers.get("Upgrade", "").lower() == "websocket"):
        # AuthorizePodWebsocketUpgradeCreatePermission (on since v1.31): a WebSocket upgrade of
        # pods/exec, attach or portforward needs `create`, as the SPDY POST always did
        verb = "create"
    return Attributes(user=user, verb=verb, resource_request=True, api_group=group, api_version=version,
                      resource=resource, subresource=subresource, name=name, namespace=namespace, path=path)


def forbidden_message(attrs: Attributes) -> str:
    """upstream responsewriters.forbiddenMessage."""
    who = attrs.user.username
    if not attrs.resource_request:
        return f'User "{who}" cannot {attrs.verb} path "{attrs.path}"'
    res = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if attrs.namespace:
        return (f'User "{who}" cannot {attrs.verb} resource "{res}" in API group "{attrs.api_group}" '
                f'in the namespace "{attrs.namespace}"')
    return f'User "{who}" cannot {attrs.verb} resource "{res}" in API group "{attrs.api_group}" at the cluster scope'


def forbidden(attrs: Attributes, reason: str = "") -> ForbiddenError:
    """upstream responsewriters.Forbidden -> apierrors.NewForbidden(group resource, name, msg)."""
    msg = forbidden_message(attrs).translate(_SANITIZE)
    if reason:
        msg = f"{msg}: {reason}"
    details: JsonDict = {}
    if attrs.resource:
        qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
        message = f'{qualified} "{attrs.name}" is forbidden: {msg}' if attrs.name else f"{qualified} is forbidden: {msg}"
        details = status_details(attrs.resource, attrs.api_group, attrs.name)
    else:
        message = f"forbidden: {msg}"
    return _Forbidden(message, details=details)


class _Forbidden(ForbiddenError):
    """Upstream always sends `details`, `{}` for a non-resource path."""

    def to_status(self) -> JsonDict:
        status = super().to_status()
        if "details" not in status:
            code = status.pop("code")
            status["details"] = {}
            status["code"] = code
        return status


def authorize_request(request: web.Request) -> None:
    """Raise upstream's Forbidden unless the request's user may do it. No-op without a
    REQUEST_USER (plain HTTP on loopback: the admin)."""
    user = request.get(REQUEST_USER)
    if not isinstance(user, UserInfo):
        return
    attrs = request_attributes(request, user)
    decision = request.app[AUTHORIZER].authorize(attrs)
    if not decision.allowed:
        logger.debug("forbidden user=%s verb=%s resource=%s path=%s reason=%s", user.username, attrs.verb,
                     attrs.resource, attrs.path, decision.reason)
        raise forbidden(attrs, decision.reason)


# ---- impersonation (upstream filters.WithImpersonation) ---------------------------------------

_EXTRA_PREFIX = "impersonate-extra-"


def _valid_sa(namespace: str, name: str) -> bool:
    return not is_dns1123_label(namespace) and not is_dns1123_subdomain(name)


def impersonated_user(request: web.Request, requester: UserInfo) -> UserInfo | None:
    """The user the impersonation headers ask for, after checking the requester may act as each
    part; None when the request carries no impersonation header."""
    wanted_user, uid = "", ""
    groups_given: list[str] = []
    extras: dict[str, list[str]] = {}
    for k, v in request.headers.items():  # one pass; most requests carry no Impersonate-* header
        if len(k) < 15 or k[:12].lower() != "impersonate-":
            continue
        kl = k.lower()
        if kl == "impersonate-user":
            wanted_user = wanted_user or v
        elif kl == "impersonate-group":
            groups_given.append(v)
        elif kl == "impersonate-uid":
            uid = uid or v
        elif kl.startswith(_EXTRA_PREFIX):
            extras.setdefault(unquote(kl[len(_EXTRA_PREFIX):]), []).append(v)
    if not wanted_user and not groups_given and not extras and not uid:
        return None
    if not wanted_user:
        asked = [*(f"Group {g}" for g in groups_given), *(f"UserExtra {k}={v}" for k, vs in extras.items() for v in vs),
                 *([f"UID {uid}"] if uid else [])]
        raise BadRequestError(f"requested [{', '.join(asked)}] without impersonating a user")
    authorizer = request.app[AUTHORIZER]
    checks: list[Attributes] = []
    groups: list[str] = []
    sa = split_service_account_username(wanted_user)
    if sa is not None and _valid_sa(*sa):
        username = service_account_username(*sa)
        checks.append(Attributes(user=requester, verb="impersonate", resource_request=True, api_version="v1",
                                 resource="serviceaccounts", namespace=sa[0], name=sa[1]))
        if not groups_given:
            groups.extend(service_account_groups(sa[0]))
    else:
        username = wanted_user
        checks.append(Attributes(user=requester, verb="impersonate", resource_request=True, api_version="v1",
                                 resource="users", name=wanted_user))
    for g in groups_given:
        checks.append(Attributes(user=requester, verb="impersonate", resource_request=True, api_version="v1",
                                 resource="groups", name=g))
        groups.append(g)
    for key, values in extras.items():
        for v in values:
            checks.append(Attributes(user=requester, verb="impersonate", resource_request=True,
                                     api_group="authentication.k8s.io", api_version="v1", resource="userextras",
                                     subresource=key, name=v))
    if uid:
        checks.append(Attributes(user=requester, verb="impersonate", resource_request=True,
                                 api_group="authentication.k8s.io", api_version="v1", resource="uids", name=uid))
    for attrs in checks:
        decision = authorizer.authorize(attrs)
        if not decision.allowed:
            raise forbidden(attrs, decision.reason)
    if username != "system:anonymous":
        if not any(g in (AUTHENTICATED, UNAUTHENTICATED) for g in groups):
            groups.append(AUTHENTICATED)
    elif UNAUTHENTICATED not in groups:
        groups.append(UNAUTHENTICATED)
    return UserInfo(username, uid=uid, groups=tuple(groups),
                    extra=MappingProxyType({k: tuple(v) for k, v in extras.items()}))


@web.middleware
async def impersonation_middleware(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> web.StreamResponse:
    requester = request_user(request)
    user = impersonated_user(request, requester)
    if user is not None:
        logger.debug("impersonation requester=%s user=%s groups=%s", requester.username, user.username, user.groups)
        request[REQUEST_USER] = user
    return await handler(request)
