"""RBAC escalation prevention on the real core with the guard `create_app` registers: a user
writes Roles/ClusterRoles only with the rules they grant (or `escalate`), bindings only with the
bound role's rules (or `bind`), as upstream's policy-based RBAC storage."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.app import create_app
from apiserver.core import ApiCore
from apiserver.rbac import Rule, rule_covers
from minik3s.api.errors import ForbiddenError
from minik3s.api.options import WriteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.user import ADMIN, AUTHENTICATED, UserInfo

RBAC = "rbac.authorization.k8s.io"
BOB = UserInfo("bob", groups=(AUTHENTICATED,))


def _info(core: ApiCore, resource: str) -> ResourceInfo:
    info = core.registry.get(RBAC, "v1", resource)
    assert info is not None
    return info


def _rule(verbs: list[str], resources: list[str], **kw: Any) -> JsonDict:
    return {"apiGroups": [""], "resources": resources, "verbs": verbs, **kw}


@pytest.fixture
async def guarded(core: ApiCore) -> ApiCore:
    create_app(core)  # registers the escalation check on the core
    # bob may manage roles and rolebindings in "default", and read pods there
    await core.create(_info(core, "roles"), "default", {"metadata": {"name": "bob"}, "rules": [
        {"apiGroups": [RBAC], "resources": ["roles", "rolebindings"], "verbs": ["create", "update", "get"]},
        _rule(["get", "list"], ["pods"])]})
    await core.create(_info(core, "rolebindings"), "default", {
        "metadata": {"name": "bob"}, "subjects": [{"kind": "User", "apiGroup": RBAC, "name": "bob"}],
        "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "bob"}})
    return core


def _as(user: UserInfo) -> WriteOptions:
    return WriteOptions(user=user, authorize=True)  # what the HTTP layer sends for an authorized user


async def test_role_within_own_rights_is_created(guarded: ApiCore) -> None:
    role = {"metadata": {"name": "reader"}, "rules": [_rule(["get"], ["pods"])]}
    out = await guarded.create(_info(guarded, "roles"), "default", role, _as(BOB))
    assert out["metadata"]["name"] == "reader"


async def test_role_granting_more_is_forbidden_with_upstreams_message(guarded: ApiCore) -> None:
    role = {"metadata": {"name": "deleter"}, "rules": [_rule(["get", "delete", "patch"], ["pods", "secrets"])]}
    with pytest.raises(ForbiddenError) as e:
        await guarded.create(_info(guarded, "roles"), "default", role, _as(BOB))
    assert e.value.message == (
        'roles.rbac.authorization.k8s.io "deleter" is forbidden: user "bob" (groups=["system:authenticated"]) is '
        "attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "patch"]}\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete" "patch"]}')
    assert e.value.details == {"name": "deleter", "group": RBAC, "kind": "roles"}
    # refused before anything was written
    assert guarded.store.get(_info(guarded, "roles").key("default", "deleter")) is None


async def test_update_that_adds_rules_is_checked(guarded: ApiCore) -> None:
    roles = _info(guarded, "roles")
    await guarded.create(roles, "default", {"metadata": {"name": "r"}, "rules": [_rule(["get"], ["pods"])]}, _as(BOB))
    cur = copy.deepcopy(guarded.get(roles, "default", "r"))  # the store's own object: never mutate
    cur["rules"] = [_rule(["get", "delete"], ["pods"])]
    with pytest.raises(ForbiddenError):
        await guarded.update(roles, "default", "r", cur, _as(BOB))
    cur = copy.deepcopy(guarded.get(roles, "default", "r"))  # the store's own object: never mutate
    cur["metadata"]["finalizers"] = ["example.com/keep"]  # a GC-only change needs no rights
    await guarded.update(roles, "default", "r", cur, _as(BOB))


async def test_escalate_verb_and_masters_skip_the_check(guarded: ApiCore) -> None:
    roles = _info(guarded, "roles")
    big = {"metadata": {"name": "big"}, "rules": [_rule(["*"], ["*"])]}
    await guarded.create(roles, "default", dict(big), _as(ADMIN))
    await guarded.create(roles, "default", {"metadata": {"name": "esc"}, "rules": [
        {"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["escalate"]}]})
    await guarded.create(_info(guarded, "rolebindings"), "default", {
        "metadata": {"name": "esc"}, "subjects": [{"kind": "User", "apiGroup": RBAC, "name": "bob"}],
        "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "esc"}})
    await guarded.create(roles, "default", {"metadata": {"name": "big2"}, "rules": [_rule(["*"], ["*"])]}, _as(BOB))


async def test_binding_needs_the_roles_rights_or_bind(guarded: ApiCore) -> None:
    crs, rbs = _info(guarded, "clusterroles"), _info(guarded, "rolebindings")
    await guarded.create(crs, None, {"metadata": {"name": "admin-ish"}, "rules": [_rule(["*"], ["*"])]})
    await guarded.create(crs, None, {"metadata": {"name": "pod-reader"}, "rules": [_rule(["get"], ["pods"])]})

    def rb(name: str, role: str) -> JsonDict:
        return {"metadata": {"name": name}, "subjects": [{"kind": "User", "apiGroup": RBAC, "name": "eve"}],
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role}}

    await guarded.create(rbs, "default", rb("ok", "pod-reader"), _as(BOB))  # bob holds get pods here
    with pytest.raises(ForbiddenError) as e:
        await guarded.create(rbs, "default", rb("too-much", "admin-ish"), _as(BOB))
    assert e.value.message.startswith(
        'rolebindings.rbac.authorization.k8s.io "too-much" is forbidden: user "bob" (groups=["system:authenticated"]) '
        "is attempting to grant RBAC permissions not currently held:\n")
    with pytest.raises(ForbiddenError) as e:
        await guarded.create(rbs, "default", rb("dangling", "nope"), _as(BOB))
    assert e.value.message == ('rolebindings.rbac.authorization.k8s.io "dangling" is forbidden: '
                               'clusterrole.rbac.authorization.k8s.io "nope" not found')
    # `bind` on that ClusterRole (in this namespace) is enough
    await guarded.create(crs, None, {"metadata": {"name": "binder"}, "rules": [
        {"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["bind"], "resourceNames": ["admin-ish"]}]})
    await guarded.create(rbs, "default", {
        "metadata": {"name": "binder"}, "subjects": [{"kind": "User", "apiGroup": RBAC, "name": "bob"}],
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "binder"}})
    await guarded.create(rbs, "default", rb("too-much", "admin-ish"), _as(BOB))


async def test_in_process_callers_are_trusted(guarded: ApiCore) -> None:
    crs = _info(guarded, "clusterroles")
    await guarded.create(crs, None, {"metadata": {"name": "anything"}, "rules": [_rule(["*"], ["*"])]})
    # an embedded component names its identity but is not authorized (the aggregation controller)
    kcm = UserInfo("system:kube-controller-manager", groups=(AUTHENTICATED,))
    await guarded.create(crs, None, {"metadata": {"name": "agg"}, "rules": [_rule(["*"], ["*"])]},
                         WriteOptions(user=kcm))


COVER_CASES = [
    pytest.param(_rule(["*"], ["pods"]), _rule(["delete"], ["pods"]), True, id="verb-star"),
    pytest.param(_rule(["get"], ["*/scale"]), _rule(["get"], ["deployments/scale"]), True, id="star-subresource"),
    pytest.param(_rule(["get"], ["*/scale"]), _rule(["get"], ["deployments"]), False, id="star-sub-not-resource"),
    pytest.param(_rule(["get"], ["pods"], resourceNames=["a"]), _rule(["get"], ["pods"]), False,
                 id="named-does-not-cover-all"),
    pytest.param(_rule(["get"], ["pods"]), _rule(["get"], ["pods"], resourceNames=["a"]), True,
                 id="all-covers-named"),
    pytest.param({"verbs": ["get"], "nonResourceURLs": ["/logs/*"]}, {"verbs": ["get"], "nonResourceURLs": ["/logs/x"]},
                 True, id="url-prefix"),
    pytest.param(_rule(["get"], ["pods"]), {"verbs": ["get"], "nonResourceURLs": ["/x"]}, False,
                 id="resource-rule-not-a-url"),
]


@pytest.mark.parametrize(("owner", "sub", "covered"), COVER_CASES)
def test_rule_covers(owner: JsonDict, sub: JsonDict, covered: bool) -> None:
    assert rule_covers(Rule.from_wire(owner), Rule.from_wire(sub)) is covered


async def test_aggregation_rule_needs_full_authority(guarded: ApiCore) -> None:
    crs, crbs = _info(guarded, "clusterroles"), _info(guarded, "clusterrolebindings")
    # carol may write clusterroles and holds get pods cluster-wide
    await guarded.create(crs, None, {"metadata": {"name": "carol"}, "rules": [
        {"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["create", "update"]},
        _rule(["get"], ["pods"])]})
    await guarded.create(crbs, None, {"metadata": {"name": "carol"}, "subjects": [
        {"kind": "User", "apiGroup": RBAC, "name": "carol"}],
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "carol"}})
    carol = UserInfo("carol", groups=(AUTHENTICATED,))
    await guarded.create(crs, None, {"metadata": {"name": "plain"}, "rules": [_rule(["get"], ["pods"])]}, _as(carol))
    with pytest.raises(ForbiddenError) as e:
        await guarded.create(crs, None, {"metadata": {"name": "agg"}, "rules": [], "aggregationRule": {
            "clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}}, _as(carol))
    assert e.value.message == ('clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin '
                               "privileges to use the aggregationRule")
