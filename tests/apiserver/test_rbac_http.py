"""The HTTP side of authorization on the real app (`create_app` over the real core): request
attributes as upstream's RequestInfoFactory, Forbidden rendering, and impersonation checked
for a requester that is not the loopback admin (what an authenticated user sends)."""

from __future__ import annotations

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from multidict import CIMultiDict

from apiserver.app import create_app
from apiserver.core import ApiCore
from apiserver.handlers.authz import forbidden, impersonated_user, request_attributes
from apiserver.rbac import Attributes
from minik3s.api.errors import BadRequestError, ForbiddenError
from minik3s.api.user import ADMIN, AUTHENTICATED, UserInfo

ALICE = UserInfo("alice", groups=(AUTHENTICATED,))


def _request(app: web.Application, method: str, path: str, headers: list[tuple[str, str]] | None = None
             ) -> web.Request:
    return make_mocked_request(method, path, headers=CIMultiDict(headers or []), app=app)


@pytest.fixture
def app(core: ApiCore) -> web.Application:
    return create_app(core)


ATTRIBUTE_CASES = [
    pytest.param("GET", "/api/v1/namespaces/ns1/pods", ("list", "", "pods", "", "", "ns1"), id="list-namespaced"),
    pytest.param("GET", "/api/v1/pods?watch=true", ("watch", "", "pods", "", "", ""), id="watch-query"),
    pytest.param("GET", "/api/v1/watch/namespaces/ns1/pods", ("watch", "", "pods", "", "", "ns1"), id="watch-prefix"),
    pytest.param("GET", "/api/v1/namespaces/ns1/pods/p/log", ("get", "", "pods", "log", "p", "ns1"),
                 id="subresource"),
    pytest.param("PUT", "/apis/apps/v1/namespaces/ns1/deployments/d/scale",
                 ("update", "apps", "deployments", "scale", "d", "ns1"), id="scale"),
    pytest.param("PATCH", "/apis/apps/v1/namespaces/ns1/deployments/d", ("patch", "apps", "deployments", "", "d", "ns1"),
                 id="patch"),
    pytest.param("DELETE", "/api/v1/namespaces/ns1/configmaps", ("deletecollection", "", "configmaps", "", "", "ns1"),
                 id="deletecollection"),
    pytest.param("POST", "/api/v1/namespaces/ns1/configmaps", ("create", "", "configmaps", "", "", "ns1"),
                 id="create"),
    pytest.param("GET", "/api/v1/namespaces/ns1", ("get", "", "namespaces", "", "ns1", "ns1"), id="namespace-itself"),
    pytest.param("PUT", "/api/v1/namespaces/ns1/finalize", ("update", "", "namespaces", "finalize", "ns1", "ns1"),
                 id="namespace-finalize"),
    pytest.param("GET", "/api/v1/namespaces/ns1/pods?fieldSelector=metadata.name%3Dweb",
                 ("list", "", "pods", "", "web", "ns1"), id="field-selector-names-the-object"),
    pytest.param("GET", "/apis/example.com/v1/widgets", ("list", "example.com", "widgets", "", "", ""),
                 id="unknown-resource-still-a-resource-request"),
]


@pytest.mark.parametrize(("method", "path", "want"), ATTRIBUTE_CASES)
def test_request_attributes(app: web.Application, method: str, path: str,
                            want: tuple[str, str, str, str, str, str]) -> None:
    a = request_attributes(_request(app, method, path), ALICE)
    assert a.resource_request
    assert (a.verb, a.api_group, a.resource, a.subresource, a.name, a.namespace) == want


@pytest.mark.parametrize("path", ["/healthz", "/api", "/api/v1", "/apis/apps", "/openapi/v2", "/version"])
def test_non_resource_paths(app: web.Application, path: str) -> None:
    a = request_attributes(_request(app, "GET", path), ALICE)
    assert (a.resource_request, a.verb, a.path) == (False, "get", path)


def test_forbidden_messages() -> None:
    cluster = Attributes(user=ALICE, verb="list", resource_request=True, api_group="apps", resource="deployments")
    assert forbidden(cluster).to_status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group '
                   '"apps" at the cluster scope',
        "reason": "Forbidden", "details": {"group": "apps", "kind": "deployments"}, "code": 403}
    path = Attributes(user=UserInfo("<b>"), verb="get", resource_request=False, path="/x&y")
    assert forbidden(path, "RBAC: x").message == 'forbidden: User "&lt;b&gt;" cannot get path "/x&amp;y": RBAC: x'


async def _grant_impersonate(core: ApiCore, resources: list[str], group: str = "", names: list[str] | None = None
                             ) -> None:
    crs = core.registry.get("rbac.authorization.k8s.io", "v1", "clusterroles")
    crbs = core.registry.get("rbac.authorization.k8s.io", "v1", "clusterrolebindings")
    assert crs is not None and crbs is not None
    rule = {"verbs": ["impersonate"], "apiGroups": [group], "resources": resources,
            **({"resourceNames": names} if names else {})}
    name = "imp-" + "-".join(r.replace("/", "-") for r in resources)
    await core.create(crs, None, {"metadata": {"name": name}, "rules": [rule]})
    await core.create(crbs, None, {"metadata": {"name": name}, "subjects": [
        {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}})


async def test_impersonation_without_rights_is_forbidden(app: web.Application) -> None:
    req = _request(app, "GET", "/api/v1/pods", [("Impersonate-User", "bob")])
    with pytest.raises(ForbiddenError) as e:
        impersonated_user(req, ALICE)
    assert e.value.message == ('users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API '
                               'group "" at the cluster scope')
    req = _request(app, "GET", "/api/v1/pods", [("Impersonate-User", "system:serviceaccount:ns1:robot")])
    with pytest.raises(ForbiddenError) as e:
        impersonated_user(req, ALICE)
    assert e.value.message == ('serviceaccounts "robot" is forbidden: User "alice" cannot impersonate resource '
                               '"serviceaccounts" in API group "" in the namespace "ns1"')


async def test_impersonation_checks_every_part(core: ApiCore, app: web.Application) -> None:
    await _grant_impersonate(core, ["users"], names=["bob"])
    headers = [("Impersonate-User", "bob")]
    assert impersonated_user(_request(app, "GET", "/", headers), ALICE) == UserInfo("bob", groups=(AUTHENTICATED,))
    with pytest.raises(ForbiddenError) as e:
        impersonated_user(_request(app, "GET", "/", [("Impersonate-User", "carl")]), ALICE)
    assert e.value.message.startswith('users "carl" is forbidden')
    headers += [("Impersonate-Group", "devs"), ("Impersonate-Group", "ops")]
    with pytest.raises(ForbiddenError) as e:
        impersonated_user(_request(app, "GET", "/", headers), ALICE)
    assert e.value.message == ('groups "devs" is forbidden: User "alice" cannot impersonate resource "groups" in API '
                               'group "" at the cluster scope')
    await _grant_impersonate(core, ["groups"])
    assert impersonated_user(_request(app, "GET", "/", headers), ALICE) == UserInfo(
        "bob", groups=("devs", "ops", AUTHENTICATED))
    headers += [("Impersonate-Extra-Acme.com%2FReason", "on%20call")]  # the key is unescaped, the value not
    with pytest.raises(ForbiddenError) as e:
        impersonated_user(_request(app, "GET", "/", headers), ALICE)
    assert e.value.message == ('userextras.authentication.k8s.io "on%20call" is forbidden: User "alice" cannot '
                               'impersonate resource "userextras/acme.com/reason" in API group "authentication.k8s.io" '
                               'at the cluster scope')
    await _grant_impersonate(core, ["userextras/acme.com/reason"], "authentication.k8s.io")
    u = impersonated_user(_request(app, "GET", "/", headers), ALICE)
    assert u is not None and dict(u.extra) == {"acme.com/reason": ("on%20call",)}


async def test_impersonation_by_the_admin_and_group_rules(app: web.Application) -> None:
    req = _request(app, "GET", "/", [("Impersonate-User", "system:serviceaccount:ns1:robot")])
    assert impersonated_user(req, ADMIN) == UserInfo(
        "system:serviceaccount:ns1:robot",
        groups=("system:serviceaccounts", "system:serviceaccounts:ns1", AUTHENTICATED))
    req = _request(app, "GET", "/", [("Impersonate-User", "system:anonymous")])
    assert impersonated_user(req, ADMIN) == UserInfo("system:anonymous", groups=("system:unauthenticated",))
    req = _request(app, "GET", "/", [("Impersonate-User", "x"), ("Impersonate-Group", "system:unauthenticated")])
    assert impersonated_user(req, ADMIN) == UserInfo("x", groups=("system:unauthenticated",))
    assert impersonated_user(_request(app, "GET", "/"), ADMIN) is None
    with pytest.raises(BadRequestError):
        impersonated_user(_request(app, "GET", "/", [("Impersonate-Uid", "1")]), ADMIN)
