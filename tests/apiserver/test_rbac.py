"""The RBAC authorizer against the real request core: policy objects are created through
`ApiCore` (validation, storage), then `Authorizer` decides requests from the store, as
kube-apiserver's RBAC authorizer does."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.core import ApiCore
from apiserver.rbac import Attributes, Authorizer
from minik3s.api.rbac import bootstrap_cluster_role_bindings, bootstrap_cluster_roles
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.user import ADMIN, AUTHENTICATED, UserInfo

RBAC = "rbac.authorization.k8s.io"
V1 = "rbac.authorization.k8s.io/v1"


def _info(core: ApiCore, resource: str) -> ResourceInfo:
    info = core.registry.get(RBAC, "v1", resource)
    assert info is not None
    return info


async def _create(core: ApiCore, resource: str, obj: JsonDict, namespace: str | None = None) -> JsonDict:
    return await core.create(_info(core, resource), namespace, obj)


def role(name: str, *rules: JsonDict, kind: str = "Role", labels: dict[str, str] | None = None,
         aggregation: list[JsonDict] | None = None) -> JsonDict:
    obj: JsonDict = {"apiVersion": V1, "kind": kind, "metadata": {"name": name, **({"labels": labels} if labels else {})},
                     "rules": list(rules)}
    if aggregation is not None:
        obj["aggregationRule"] = {"clusterRoleSelectors": aggregation}
    return obj


def binding(name: str, role_kind: str, role_name: str, *subjects: JsonDict, kind: str = "RoleBinding") -> JsonDict:
    return {"apiVersion": V1, "kind": kind, "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role_name}, "subjects": list(subjects)}


def user_subject(name: str) -> JsonDict:
    return {"kind": "User", "apiGroup": RBAC, "name": name}


def group_subject(name: str) -> JsonDict:
    return {"kind": "Group", "apiGroup": RBAC, "name": name}


def sa_subject(name: str, namespace: str | None = None) -> JsonDict:
    return {"kind": "ServiceAccount", "name": name, **({"namespace": namespace} if namespace else {})}


def rule(verbs: list[str], resources: list[str], groups: list[str] | None = None, **extra: Any) -> JsonDict:
    return {"verbs": verbs, "apiGroups": groups if groups is not None else [""], "resources": resources, **extra}


ALICE = UserInfo("alice", groups=(AUTHENTICATED,))
SA = UserInfo("system:serviceaccount:default:sa", groups=("system:serviceaccounts",
                                                          "system:serviceaccounts:default", AUTHENTICATED))


def req(verb: str, resource: str, *, user: UserInfo = ALICE, ns: str = "default", name: str = "",
        sub: str = "", group: str = "") -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=True, api_group=group, api_version="v1",
                      resource=resource, subresource=sub, name=name, namespace=ns)


def path_req(verb: str, path: str, user: UserInfo = ALICE) -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=False, path=path)


# (rules of a Role bound to alice in "default", request, allowed?)
RULE_CASES = [
    pytest.param([rule(["get"], ["pods"])], req("get", "pods", name="p"), True, id="exact-verb-and-resource"),
    pytest.param([rule(["get"], ["pods"])], req("list", "pods"), False, id="other-verb-denied"),
    pytest.param([rule(["*"], ["pods"])], req("deletecollection", "pods"), True, id="verb-star"),
    pytest.param([rule(["get"], ["pods"])], req("get", "pods", name="p", group="apps"), False,
                 id="other-api-group-denied"),
    pytest.param([rule(["get"], ["deployments"], ["*"])], req("get", "deployments", name="d", group="apps"), True,
                 id="api-group-star"),
    pytest.param([rule(["get"], ["*"])], req("get", "secrets", name="s"), True, id="resource-star"),
    pytest.param([rule(["get"], ["pods"])], req("get", "pods", name="p", sub="log"), False,
                 id="resource-rule-does-not-cover-subresource"),
    pytest.param([rule(["get"], ["pods/log"])], req("get", "pods", name="p", sub="log"), True,
                 id="resource-slash-subresource"),
    pytest.param([rule(["get"], ["pods/log"])], req("get", "pods", name="p"), False,
                 id="subresource-rule-does-not-cover-resource"),
    pytest.param([rule(["update"], ["*/scale"], ["*"])], req("update", "deployments", name="d", sub="scale",
                                                            group="apps"), True, id="star-slash-scale"),
    pytest.param([rule(["update"], ["*/scale"], ["*"])], req("update", "deployments", name="d", group="apps"), False,
                 id="star-slash-scale-not-the-resource"),
    pytest.param([rule(["update"], ["*/scale"], ["*"])], req("update", "deployments", name="d", sub="status",
                                                            group="apps"), False, id="star-slash-scale-not-status"),
    pytest.param([rule(["get"], ["configmaps"], resourceNames=["a"])], req("get", "configmaps", name="a"), True,
                 id="resource-name-listed"),
    pytest.param([rule(["get"], ["configmaps"], resourceNames=["a"])], req("get", "configmaps", name="b"), False,
                 id="resource-name-not-listed"),
    pytest.param([rule(["list"], ["configmaps"], resourceNames=["a"])], req("list", "configmaps"), False,
                 id="resource-names-never-allow-list"),
    pytest.param([rule(["create"], ["configmaps"], resourceNames=["a"])], req("create", "configmaps"), False,
                 id="resource-names-never-allow-create"),
    pytest.param([rule(["get"], ["pods"]), rule(["delete"], ["pods"])], req("delete", "pods", name="p"), True,
                 id="second-rule-allows"),
]


@pytest.mark.parametrize(("rules", "attrs", "allowed"), RULE_CASES)
async def test_role_rules(core: ApiCore, rules: list[JsonDict], attrs: Attributes, allowed: bool) -> None:
    await _create(core, "roles", role("r", *rules), "default")
    await _create(core, "rolebindings", binding("rb", "Role", "r", user_subject("alice")), "default")
    decision = Authorizer(core.store, core.registry).authorize(attrs)
    assert decision.allowed is allowed
    if allowed:
        assert decision.reason == 'RBAC: allowed by RoleBinding "rb/default" of Role "r" to User "alice"'
    else:
        assert decision.reason == ""


NON_RESOURCE_CASES = [
    pytest.param(["/healthz"], "/healthz", True, id="exact-path"),
    pytest.param(["/healthz"], "/healthz/etcd", False, id="exact-path-not-a-prefix"),
    pytest.param(["/healthz/*"], "/healthz/etcd", True, id="trailing-star-prefix"),
    pytest.param(["/healthz/*"], "/healthz", False, id="trailing-star-needs-the-slash"),
    pytest.param(["*"], "/anything", True, id="star-everything"),
]


@pytest.mark.parametrize(("urls", "path", "allowed"), NON_RESOURCE_CASES)
async def test_non_resource_urls(core: ApiCore, urls: list[str], path: str, allowed: bool) -> None:
    await _create(core, "clusterroles", role("urls", {"verbs": ["get"], "nonResourceURLs": urls}, kind="ClusterRole"))
    await _create(core, "clusterrolebindings",
                  binding("urls", "ClusterRole", "urls", user_subject("alice"), kind="ClusterRoleBinding"))
    authz = Authorizer(core.store, core.registry)
    assert authz.authorize(path_req("get", path)).allowed is allowed
    assert authz.authorize(path_req("post", path)).allowed is False


SUBJECT_CASES = [
    pytest.param(user_subject("alice"), ALICE, True, id="user-by-name"),
    pytest.param(user_subject("bob"), ALICE, False, id="other-user"),
    pytest.param(group_subject(AUTHENTICATED), ALICE, True, id="group-membership"),
    pytest.param(group_subject("devs"), ALICE, False, id="group-not-member"),
    pytest.param(sa_subject("sa", "default"), SA, True, id="service-account-with-namespace"),
    pytest.param(sa_subject("sa"), SA, True, id="service-account-defaults-to-binding-namespace"),
    pytest.param(sa_subject("sa", "other"), SA, False, id="service-account-other-namespace"),
    pytest.param(user_subject("system:serviceaccount:default:sa"), SA, True, id="service-account-as-user-name"),
    pytest.param(group_subject("system:serviceaccounts:default"), SA, True, id="service-accounts-group"),
]


@pytest.mark.parametrize(("subject", "user", "allowed"), SUBJECT_CASES)
async def test_subjects(core: ApiCore, subject: JsonDict, user: UserInfo, allowed: bool) -> None:
    await _create(core, "roles", role("r", rule(["get"], ["pods"])), "default")
    await _create(core, "rolebindings", binding("rb", "Role", "r", subject), "default")
    assert Authorizer(core.store, core.registry).authorize(req("get", "pods", user=user, name="p")).allowed is allowed


async def test_service_account_in_cluster_role_binding_needs_namespace(core: ApiCore) -> None:
    await _create(core, "clusterroles", role("c", rule(["get"], ["pods"]), kind="ClusterRole"))
    await _create(core, "clusterrolebindings", binding("with-ns", "ClusterRole", "c", sa_subject("sa", "default"),
                                                       kind="ClusterRoleBinding"))
    authz = Authorizer(core.store, core.registry)
    decision = authz.authorize(req("get", "pods", user=SA, ns="elsewhere", name="p"))
    assert decision == decision.__class__(
        True, 'RBAC: allowed by ClusterRoleBinding "with-ns" of ClusterRole "c" to ServiceAccount "sa/default"')


async def test_role_binding_grants_cluster_role_in_its_namespace_only(core: ApiCore) -> None:
    await _create(core, "clusterroles", role("pod-reader", rule(["get", "list"], ["pods"]), kind="ClusterRole"))
    await _create(core, "rolebindings", binding("read", "ClusterRole", "pod-reader", user_subject("alice")), "default")
    authz = Authorizer(core.store, core.registry)
    d = authz.authorize(req("list", "pods"))
    assert d.allowed and d.reason == 'RBAC: allowed by RoleBinding "read/default" of ClusterRole "pod-reader" to User "alice"'
    assert not authz.authorize(req("list", "pods", ns="kube-system")).allowed
    assert not authz.authorize(req("list", "pods", ns="")).allowed  # all namespaces: cluster scope


async def test_cluster_role_binding_grants_everywhere(core: ApiCore) -> None:
    await _create(core, "clusterroles", role("node-reader", rule(["get"], ["nodes"]), kind="ClusterRole"))
    await _create(core, "clusterrolebindings", binding("nr", "ClusterRole", "node-reader", group_subject("ops"),
                                                       kind="ClusterRoleBinding"))
    authz = Authorizer(core.store, core.registry)
    ops = UserInfo("carol", groups=("ops",))
    assert authz.authorize(req("get", "nodes", user=ops, ns="", name="n1")).reason == \
        'RBAC: allowed by ClusterRoleBinding "nr" of ClusterRole "node-reader" to Group "ops"'
    assert not authz.authorize(req("get", "nodes", ns="", name="n1")).allowed


async def test_missing_role_is_reported_in_the_denial(core: ApiCore) -> None:
    await _create(core, "rolebindings", binding("dangling", "Role", "nope", user_subject("alice")), "default")
    d = Authorizer(core.store, core.registry).authorize(req("get", "pods", name="p"))
    assert (d.allowed, d.reason) == (False, 'RBAC: role.rbac.authorization.k8s.io "nope" not found')


async def test_masters_bypass_without_any_binding(core: ApiCore) -> None:
    d = Authorizer(core.store, core.registry).authorize(req("delete", "nodes", user=ADMIN, ns="", name="n1"))
    assert d.allowed and d.reason == ""


async def test_policy_changes_are_seen_by_the_next_request(core: ApiCore) -> None:
    authz = Authorizer(core.store, core.registry)
    assert not authz.authorize(req("get", "pods", name="p")).allowed
    rebuilds = authz.rebuilds
    assert not authz.authorize(req("get", "pods", name="p")).allowed
    assert authz.rebuilds == rebuilds  # unchanged policy: no rebuild
    await _create(core, "roles", role("r", rule(["get"], ["pods"])), "default")
    rb = await _create(core, "rolebindings", binding("rb", "Role", "r", user_subject("alice")), "default")
    assert authz.authorize(req("get", "pods", name="p")).allowed
    await core.delete(_info(core, "rolebindings"), "default", rb["metadata"]["name"])
    assert not authz.authorize(req("get", "pods", name="p")).allowed


async def test_writes_to_other_kinds_do_not_rebuild(core: ApiCore) -> None:
    authz = Authorizer(core.store, core.registry)
    authz.authorize(req("get", "pods", name="p"))
    rebuilds = authz.rebuilds
    cm = core.registry.get("", "v1", "configmaps")
    assert cm is not None
    await core.create(cm, "default", {"metadata": {"name": "c"}})
    authz.authorize(req("get", "pods", name="p"))
    assert authz.rebuilds == rebuilds


async def test_rules_for_lists_what_the_bindings_grant(core: ApiCore) -> None:
    await _create(core, "roles", role("r", rule(["get"], ["configmaps"], resourceNames=["a"])), "default")
    await _create(core, "rolebindings", binding("rb", "Role", "r", user_subject("alice")), "default")
    await _create(core, "clusterroles", role("urls", {"verbs": ["get"], "nonResourceURLs": ["/x"]}, kind="ClusterRole"))
    await _create(core, "clusterrolebindings",
                  binding("urls", "ClusterRole", "urls", user_subject("alice"), kind="ClusterRoleBinding"))
    await _create(core, "rolebindings", binding("dangling", "Role", "gone", user_subject("alice")), "default")
    resource, non_resource, err = Authorizer(core.store, core.registry).rules_for(ALICE, "default")
    assert resource == [{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"]}]
    assert non_resource == [{"verbs": ["get"], "nonResourceURLs": ["/x"]}]
    assert err == 'role.rbac.authorization.k8s.io "gone" not found'


async def test_bootstrap_policy_answers_for_the_components(core: ApiCore) -> None:
    crs, crbs = _info(core, "clusterroles"), _info(core, "clusterrolebindings")
    for obj in bootstrap_cluster_roles():
        await core.create(crs, None, obj)
    for obj in bootstrap_cluster_role_bindings():
        await core.create(crbs, None, obj)
    authz = Authorizer(core.store, core.registry)
    sched = UserInfo("system:kube-scheduler", groups=(AUTHENTICATED,))
    assert authz.authorize(req("create", "pods", user=sched, name="p", sub="binding")).allowed
    assert authz.authorize(req("list", "nodes", user=sched, ns="")).allowed
    assert not authz.authorize(req("create", "pods", user=sched)).allowed
    kcm = UserInfo("system:kube-controller-manager", groups=(AUTHENTICATED,))
    assert authz.authorize(req("watch", "deployments", user=kcm, ns="", group="apps")).allowed
    assert not authz.authorize(req("delete", "pods", user=kcm, name="p")).allowed
    # system:basic-user / system:discovery for every authenticated user
    assert authz.authorize(req("create", "selfsubjectaccessreviews", ns="", group="authorization.k8s.io")).allowed
    assert authz.authorize(path_req("get", "/apis/apps")).allowed
    assert not authz.authorize(path_req("get", "/metrics")).allowed
    node = core.get(crbs, None, "system:node")
    assert "subjects" not in node  # upstream keeps it without subjects (the Node authorizer's job)


async def test_controller_and_namespace_bootstrap_policy(core: ApiCore) -> None:
    """kube-apiserver's controller roles and the kube-system / kube-public Roles: each
    controller's ServiceAccount may do its controller's work and nothing beyond it, the
    leader-locking and authentication-reader Roles answer for the components' users, and every
    rule's lists are sorted sets as bootstrappolicy builds them."""
    from minik3s.api.rbac_controllers import (
        CONTROLLER_NAMES,
        controller_cluster_role_bindings,
        controller_cluster_roles,
        namespace_role_bindings,
        namespace_roles,
    )
    ns_info = core.registry.get("", "v1", "namespaces")
    assert ns_info is not None
    for ns in ("kube-system", "kube-public"):
        await core.create(ns_info, None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for resource, objs in (("clusterroles", bootstrap_cluster_roles() + controller_cluster_roles()),
                           ("clusterrolebindings", bootstrap_cluster_role_bindings()
                            + controller_cluster_role_bindings()),
                           ("roles", namespace_roles()), ("rolebindings", namespace_role_bindings())):
        for obj in objs:
            md: Any = obj["metadata"]
            await _create(core, resource, obj, md.get("namespace"))
    assert len(CONTROLLER_NAMES) == 35 and len(set(CONTROLLER_NAMES)) == 35
    for name in ("resource-claim-controller", "volumeattributesclass-protection-controller",
                 "storage-version-garbage-collector"):  # feature gates off in 1.33
        assert name not in CONTROLLER_NAMES
    crs = _info(core, "clusterroles")
    for name in ("system:controller:deployment-controller", "system:controller:service-cidrs-controller",
                 "system:kube-scheduler", "system:node"):
        stored = core.get(crs, None, name)
        assert stored["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults"}
        assert stored["metadata"]["annotations"] == {"rbac.authorization.kubernetes.io/autoupdate": "true"}
        for r in stored["rules"]:
            for key in ("verbs", "apiGroups", "resources", "resourceNames"):
                if key in r:
                    assert r[key] == sorted(set(r[key])), (name, r)

    authz = Authorizer(core.store, core.registry)

    def sa(name: str) -> UserInfo:
        return UserInfo(f"system:serviceaccount:kube-system:{name}",
                        groups=("system:serviceaccounts", "system:serviceaccounts:kube-system", AUTHENTICATED))

    dc = sa("deployment-controller")
    assert authz.authorize(req("update", "deployments", user=dc, name="d", sub="status", group="apps")).allowed
    assert authz.authorize(req("create", "replicasets", user=dc, group="apps")).allowed
    assert authz.authorize(req("patch", "events", user=dc, name="e", group="events.k8s.io")).allowed
    assert not authz.authorize(req("get", "secrets", user=dc, name="s")).allowed
    assert not authz.authorize(req("create", "pods", user=dc)).allowed
    rs = sa("replicaset-controller")
    assert authz.authorize(req("create", "pods", user=rs)).allowed
    assert not authz.authorize(req("update", "pods", user=rs, name="p")).allowed
    gc = sa("generic-garbage-collector")
    assert authz.authorize(req("delete", "widgets", user=gc, name="w", group="example.com")).allowed
    assert not authz.authorize(req("create", "widgets", user=gc, group="example.com")).allowed
    cleaner = sa("legacy-service-account-token-cleaner")
    assert authz.authorize(req("get", "configmaps", user=cleaner, ns="kube-system",
                               name="kube-apiserver-legacy-service-account-token-tracking")).allowed
    assert not authz.authorize(req("get", "configmaps", user=cleaner, ns="kube-system", name="other")).allowed
    # namespaced Roles: only in their namespace
    sched = UserInfo("system:kube-scheduler", groups=(AUTHENTICATED,))
    assert authz.authorize(req("get", "configmaps", user=sched, ns="kube-system",
                               name="extension-apiserver-authentication")).allowed
    assert not authz.authorize(req("get", "configmaps", user=sched, ns="default",
                                   name="extension-apiserver-authentication")).allowed
    assert authz.authorize(req("create", "leasecandidates", user=sa("kube-scheduler"), ns="kube-system",
                               group="coordination.k8s.io")).allowed
    signer = sa("bootstrap-signer")
    assert authz.authorize(req("update", "configmaps", user=signer, ns="kube-public", name="cluster-info")).allowed
    assert not authz.authorize(req("update", "configmaps", user=signer, ns="kube-public", name="x")).allowed
    assert authz.authorize(req("list", "secrets", user=signer, ns="kube-system")).allowed
    assert not authz.authorize(req("list", "secrets", user=signer, ns="default")).allowed


def test_uncovered_rules_are_upstreams_covers() -> None:
    """validation.Covers as the bootstrap reconciliation uses it: the atomic rules of the wanted
    rules no owner rule covers (wildcards, subresource wildcards, resource names, URL prefixes)."""
    from apiserver.rbac import uncovered_rules

    owner = [rule(["get", "list"], ["pods", "*/status"]), rule(["*"], ["*"], ["apps"]),
             rule(["update"], ["configmaps"], resourceNames=["a"]),
             {"verbs": ["get"], "nonResourceURLs": ["/healthz/*"]}]
    wanted = [rule(["get", "watch"], ["pods", "nodes/status"]), rule(["delete"], ["deployments"], ["apps"]),
              rule(["update"], ["configmaps"], resourceNames=["a", "b"]), rule(["update"], ["configmaps"]),
              {"verbs": ["get"], "nonResourceURLs": ["/healthz/ping", "/metrics"]}]
    assert uncovered_rules(owner, wanted) == [
        {"verbs": ["watch"], "apiGroups": [""], "resources": ["pods"]},
        {"verbs": ["watch"], "apiGroups": [""], "resources": ["nodes/status"]},
        {"verbs": ["update"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["b"]},
        {"verbs": ["update"], "apiGroups": [""], "resources": ["configmaps"]},
        {"verbs": ["get"], "nonResourceURLs": ["/metrics"]}]
    assert uncovered_rules(wanted, []) == []
