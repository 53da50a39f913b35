"""The RBAC authorizer (layer L4, apiserver, beside `core`): decides whether a user may do one
request from the stored Role/ClusterRole/RoleBinding/ClusterRoleBinding, as upstream's
plugin/pkg/auth/authorizer/rbac (the `RBACAuthorizer` over `DefaultRuleResolver`), with the
`system:masters` bypass in front of it (kube-apiserver's privileged-groups authorizer).

Data flow: the HTTP layer builds `Attributes` (upstream's RequestInfo + the user) ->
`Authorizer.authorize` -> a `Decision`; the access reviews ask the same object
(`authorize` for SubjectAccessReviews, `rules_for` for SelfSubjectRulesReview).

Rules (upstream `RuleAllows`):
  - verbs: `*` or the request's verb; apiGroups: `*` or the group;
  - resources: `*`, the exact `resource` or `resource/subresource`, or `*/subresource`
    (so `*/scale` allows `deployments/scale` but not `deployments`);
  - resourceNames: when set, the request's name must be one of them; a request without a name
    (create, list, watch, deletecollection) never matches such a rule;
  - nonResourceURLs: `*`, the exact path, or a prefix ending in `*` (`/healthz/*`).
Subjects: User by name, Group by membership, ServiceAccount as the user
`system:serviceaccount:<ns>:<name>` (a RoleBinding's subject without a namespace means the
binding's namespace; a ClusterRoleBinding's never matches). ClusterRoleBindings grant
everywhere; a RoleBinding grants its Role or a ClusterRole's rules in its namespace only.
Aggregated ClusterRoles are read as stored: the clusterrole-aggregation controller
(minik3s.controllers.clusterrole_aggregation) writes the selected roles' rules into them.

Cost per request: the policy is an in-memory snapshot of the four kinds, rebuilt only when one
of them changed. Change detection is O(1): the authorizer holds one store watcher per RBAC
prefix (created in the same synchronous step as the snapshot, so no write falls in between) and
rebuilds when any has an event. The snapshot indexes bindings by subject (user name, group
name), and the rules a (user, groups, namespace) gets are memoised, so an allowed request scans
only that user's rules, in upstream's visiting order (ClusterRoleBindings, then the namespace's
RoleBindings, each sorted by name).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from apiserver.storage.interface import Store, Watcher
from minik3s.api.resources import ResourceInfo, ResourceRegistry
from minik3s.api.types import JsonDict
from minik3s.api.user import MASTERS, UserInfo

logger = logging.getLogger(__name__)

RBAC_GROUP = "rbac.authorization.k8s.io"
SA_PREFIX = "system:serviceaccount:"
_MEMO_LIMIT = 4096


@dataclass(frozen=True, slots=True)
class Attributes:
    """upstream authorizer.Attributes: who, and what they ask for (a resource request, or a
    non-resource `path`)."""

    user: UserInfo
    verb: str
    resource_request: bool
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""
    path: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    """`allowed` or not; `reason` says which binding allowed it (or what failed while
    evaluating, on a denial), as upstream's authorizer reason string."""

    allowed: bool
    reason: str = ""


# ---- rule matching (upstream rbac.RuleAllows and the rbacv1helpers matchers) ------------------


def _strs(v: object) -> tuple[str, ...]:
    return tuple(x for x in v if isinstance(x, str)) if isinstance(v, list) else ()


@dataclass(frozen=True, slots=True)
class Rule:
    """One PolicyRule, read once per policy snapshot (not per request)."""

    verbs: tuple[str, ...]
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    resource_names: tuple[str, ...]
    non_resource_urls: tuple[str, ...]

    @classmethod
    def from_wire(cls, rule: JsonDict) -> Rule:
        return cls(_strs(rule.get("verbs")), _strs(rule.get("apiGroups")), _strs(rule.get("resources")),
                   _strs(rule.get("resourceNames")), _strs(rule.get("nonResourceURLs")))

    def verb_matches(self, verb: str) -> bool:
        return "*" in self.verbs or verb in self.verbs

    def api_group_matches(self, group: str) -> bool:
        return "*" in self.api_groups or group in self.api_groups

    def resource_matches(self, combined: str, subresource: str) -> bool:
        """`combined` is `resource` or `resource/subresource`."""
        for r in self.resources:
            if r == "*" or r == combined:
                return True
            if subresource and len(r) == len(subresource) + 2 and r.startswith("*/") and r.endswith(subresource):
                return True
        return False

    def resource_name_matches(self, name: str) -> bool:
        return not self.resource_names or name in self.resource_names

    def non_resource_url_matches(self, path: str) -> bool:
        for u in self.non_resource_urls:
            if u == "*" or u == path:
                return True
            if u.endswith("*") and path.startswith(u[:-1]):
                return True
        return False

    def allows(self, attrs: Attributes) -> bool:
        if attrs.resource_request:
            combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
            return (self.verb_matches(attrs.verb) and self.api_group_matches(attrs.api_group)
                    and self.resource_matches(combined, attrs.subresource)
                    and self.resource_name_matches(attrs.name))
        return self.verb_matches(attrs.verb) and self.non_resource_url_matches(attrs.path)


def rule_allows(attrs: Attributes, rule: JsonDict) -> bool:
    return Rule.from_wire(rule).allows(attrs)


# ---- service-account user names (upstream serviceaccount.MakeUsername / SplitUsername) --------


def service_account_username(namespace: str, name: str) -> str:
    return f"{SA_PREFIX}{namespace}:{name}"


def split_service_account_username(username: str) -> tuple[str, str] | None:
    """`system:serviceaccount:ns:name` -> (ns, name); None when it is not one."""
    if not username.startswith(SA_PREFIX):
        return None
    parts = username[len(SA_PREFIX):].split(":")
    if len(parts) != 2 or not parts[0] or not parts[1]:
        return None
    return parts[0], parts[1]


def service_account_groups(namespace: str) -> tuple[str, ...]:
    return ("system:serviceaccounts", f"system:serviceaccounts:{namespace}")


# ---- the policy snapshot ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Grant:
    """One binding that applies to a user: what to say when it allows (`describe`), and the
    rules it grants (or why they could not be read)."""

    describe: str
    rules: tuple[Rule, ...]
    error: str = ""


@dataclass(slots=True)
class _Binding:
    order: tuple[int, str, str]  # (0 = cluster / 1 = namespaced, namespace, name): visiting order
    obj: JsonDict
    namespace: str  # "" for a ClusterRoleBinding


@dataclass(slots=True)
class _Snapshot:
    cluster_roles: dict[str, tuple[Rule, ...]] = field(default_factory=dict)
    roles: dict[tuple[str, str], tuple[Rule, ...]] = field(default_factory=dict)
    # subject key ("u:<name>" or "g:<group>") -> bindings naming it, per namespace ("" = cluster)
    index: dict[tuple[str, str], list[_Binding]] = field(default_factory=dict)

    def add_binding(self, b: _Binding) -> None:
        for s in b.obj.get("subjects") or []:
            key = _subject_key(s, b.namespace)
            if key is not None:
                lst = self.index.setdefault((b.namespace, key), [])
                if not lst or lst[-1] is not b:
                    lst.append(b)


def _subject_key(s: object, binding_ns: str) -> str | None:
    if not isinstance(s, dict):
        return None
    kind, name = s.get("kind"), s.get("name")
    if not isinstance(name, str):
        return None
    if kind == "User":
        return f"u:{name}"
    if kind == "Group":
        return f"g:{name}"
    if kind == "ServiceAccount":
        ns = s.get("namespace") or binding_ns
        return f"u:{service_account_username(ns, name)}" if isinstance(ns, str) and ns else None
    return None


def _applies(s: object, user: UserInfo, binding_ns: str) -> bool:
    key = _subject_key(s, binding_ns)
    if key is None:
        return False
    return key == f"u:{user.username}" if key.startswith("u:") else key[2:] in user.groups


def _describe_subject(s: JsonDict, binding_ns: str) -> str:
    kind, name = str(s.get("kind") or ""), str(s.get("name") or "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{s.get("namespace") or binding_ns}"'
    return f'{kind} "{name}"'


def _rules(obj: JsonDict | None) -> tuple[Rule, ...]:
    rules = (obj or {}).get("rules")
    return tuple(Rule.from_wire(r) for r in rules if isinstance(r, dict)) if isinstance(rules, list) else ()


class Authorizer:
    """RBAC over the store's current objects, plus the system:masters bypass."""

    def __init__(self, store: Store, registry: ResourceRegistry) -> None:
        self._store = store
        self._infos: tuple[ResourceInfo, ...] = tuple(
            info for r in ("clusterroles", "roles", "clusterrolebindings", "rolebindings")
            if (info := registry.get_resource(RBAC_GROUP, r)) is not None)
        self._watchers: list[Watcher] = []
        self._snapshot: _Snapshot | None = None
        self._memo: dict[tuple[str, tuple[str, ...], str], tuple[Grant, ...]] = {}
        self.rebuilds = 0  # how often the snapshot was rebuilt (observability, tests)

    # -- freshness
    def _fresh(self) -> _Snapshot:
        snap = self._snapshot
        if snap is not None and self._watchers and not any(w.ready() for w in self._watchers):
            return snap
        return self._rebuild()

    def _rebuild(self) -> _Snapshot:
        for w in self._watchers:
            w.close()
        self._watchers = []
        rev = self._store.revision
        snap = _Snapshot()
        by_resource: dict[str, list[JsonDict]] = {
            info.resource: self._store.list(info.list_prefix(None))[0] for info in self._infos}
        for obj in by_resource.get("clusterroles", []):
            snap.cluster_roles[str(obj["metadata"]["name"])] = _rules(obj)
        for obj in by_resource.get("roles", []):
            snap.roles[(str(obj["metadata"].get("namespace") or ""), str(obj["metadata"]["name"]))] = _rules(obj)
        for obj in by_resource.get("clusterrolebindings", []):
            snap.add_binding(_Binding((0, "", str(obj["metadata"]["name"])), obj, ""))
        for obj in by_resource.get("rolebindings", []):
            ns = str(obj["metadata"].get("namespace") or "")
            snap.add_binding(_Binding((1, ns, str(obj["metadata"]["name"])), obj, ns))
        try:
            self._watchers = [self._store.watch(info.key_prefix, rev, queue_size=64) for info in self._infos]
        except Exception as e:  # noqa: BLE001 - a closing store: stay correct by rebuilding every time
            logger.debug("rbac: cannot watch policy, rebuilding per request err=%r", e)
            self._watchers = []
        self._snapshot = snap
        self._memo.clear()
        self.rebuilds += 1
        return snap

    def close(self) -> None:
        for w in self._watchers:
            w.close()
        self._watchers = []

    # -- rule resolution (upstream DefaultRuleResolver.VisitRulesFor)
    def grants(self, user: UserInfo, namespace: str) -> tuple[Grant, ...]:
        """The bindings that apply to `user` in `namespace` ("" = cluster scope only), in
        upstream's order, each with the rules its roleRef names."""
        snap = self._fresh()
        memo_key = (user.username, user.groups, namespace)
        hit = self._memo.get(memo_key)
        if hit is not None:
            return hit
        keys = [f"u:{user.username}", *(f"g:{g}" for g in user.groups)]
        found: dict[int, _Binding] = {}
        for scope in ("", namespace) if namespace else ("",):
            for k in keys:
                for b in snap.index.get((scope, k), ()):
                    found[id(b)] = b
        out: list[Grant] = []
        for b in sorted(found.values(), key=lambda x: x.order):
            subject = next(s for s in b.obj.get("subjects") or [] if _applies(s, user, b.namespace))
            out.append(self._grant(snap, b, subject))
        result = tuple(out)
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        self._memo[memo_key] = result
        return result

    def _grant(self, snap: _Snapshot, b: _Binding, subject: JsonDict) -> Grant:
        ref = b.obj.get("roleRef") or {}
        kind, role_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
        name = str(b.obj["metadata"]["name"])
        if b.namespace:
            describe = (f'RoleBinding "{name}/{b.namespace}" of {kind} "{role_name}" to '
                        f'{_describe_subject(subject, b.namespace)}')
        else:
            describe = f'ClusterRoleBinding "{name}" of {kind} "{role_name}" to {_describe_subject(subject, "")}'
        if kind == "ClusterRole":
            role = snap.cluster_roles.get(role_name)
            if role is None:
                return Grant(describe, (), f'clusterrole.rbac.authorization.k8s.io "{role_name}" not found')
            return Grant(describe, role)
        if kind == "Role" and b.namespace:
            nsrole = snap.roles.get((b.namespace, role_name))
            if nsrole is None:
                return Grant(describe, (), f'role.rbac.authorization.k8s.io "{role_name}" not found')
            return Grant(describe, nsrole)
        return Grant(describe, (), f'unsupported role reference kind: "{kind}"')

    # -- decisions
    def authorize(self, attrs: Attributes) -> Decision:
        if MASTERS in attrs.user.groups:
            return Decision(True)
        errs: list[str] = []
        for g in self.grants(attrs.user, attrs.namespace):
            if g.error:
                errs.append(g.error)
                continue
            for rule in g.rules:
                if rule.allows(attrs):
                    return Decision(True, f"RBAC: allowed by {g.describe}")
        if not errs:
            return Decision(False)
        return Decision(False, f"RBAC: {errs[0]}" if len(errs) == 1 else "RBAC: [" + ", ".join(errs) + "]")

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[JsonDict], list[JsonDict], str]:
        """SelfSubjectRulesReview's answer: (resourceRules, nonResourceRules, evaluationError)."""
        resource: list[JsonDict] = []
        non_resource: list[JsonDict] = []
        errs: list[str] = []
        for g in self.grants(user, namespace):
            if g.error:
                errs.append(g.error)
            for rule in g.rules:
                if rule.resources:
                    rr: JsonDict = {"verbs": list(rule.verbs)}
                    for k, v in (("apiGroups", rule.api_groups), ("resources", rule.resources),
                                 ("resourceNames", rule.resource_names)):
                        if v:
                            rr[k] = list(v)
                    resource.append(rr)
                if rule.non_resource_urls:
                    non_resource.append({"verbs": list(rule.verbs), "nonResourceURLs": list(rule.non_resource_urls)})
        err = "" if not errs else errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
        return resource, non_resource, err
