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

import json
import logging
from dataclasses import dataclass, field

from apiserver.storage.interface import Store, Watcher
from minik3s.api.errors import ForbiddenError, aggregate
from minik3s.api.options import WriteOptions
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

    def snapshot(self) -> _Snapshot:
        """The current policy (rebuilt first when it changed)."""
        return self._fresh()

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
        err = aggregate(errs)
        return resource, non_resource, err


# ---- escalation prevention on RBAC writes (upstream pkg/registry/rbac/*/policybased and
# ---- rbac/validation.ConfirmNoEscalation) --------------------------------------------------------


def _breakdown(rule: Rule) -> list[Rule]:
    """upstream BreakdownRule: one rule per (group, resource, verb[, name]) and (url, verb)."""
    out: list[Rule] = []
    for g in rule.api_groups:
        for r in rule.resources:
            for v in rule.verbs:
                if rule.resource_names:
                    out.extend(Rule((v,), (g,), (r,), (n,), ()) for n in rule.resource_names)
                else:
                    out.append(Rule((v,), (g,), (r,), (), ()))
    for u in rule.non_resource_urls:
        for v in rule.verbs:
            out.append(Rule((v,), (), (), (), (u,)))
    return out


def _resources_cover(owner: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    if "*" in owner:
        return True
    for path in wanted:
        if path in owner:
            continue
        if "/" not in path or "*/" + path.split("/", 1)[1] not in owner:
            return False
    return True


def _urls_cover(owner: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    return all(any(o == w or (o.endswith("*") and w.startswith(o.rstrip("*"))) for o in owner) for w in wanted)


def rule_covers(owner: Rule, sub: Rule) -> bool:
    """upstream ruleCovers: does `owner` grant everything the atomic rule `sub` does?"""
    verbs = "*" in owner.verbs or all(v in owner.verbs for v in sub.verbs)
    groups = "*" in owner.api_groups or all(g in owner.api_groups for g in sub.api_groups)
    if sub.resource_names:
        names = not owner.resource_names or all(n in owner.resource_names for n in sub.resource_names)
    else:
        names = not owner.resource_names
    return (verbs and groups and _resources_cover(owner.resources, sub.resources) and names
            and _urls_cover(owner.non_resource_urls, sub.non_resource_urls))


def uncovered_rules(owner: list[JsonDict], wanted: list[JsonDict]) -> list[JsonDict]:
    """upstream validation.Covers: the atomic rules of `wanted` (BreakdownRule) that no rule of
    `owner` covers, as wire PolicyRules in `wanted`'s order (what kube-apiserver's bootstrap
    reconciliation appends to a role)."""
    owners = [Rule.from_wire(r) for r in owner if isinstance(r, dict)]
    out: list[JsonDict] = []
    for rule in wanted:
        for sub in _breakdown(Rule.from_wire(rule)):
            if not any(rule_covers(o, sub) for o in owners):
                wire: JsonDict = {"verbs": list(sub.verbs)}
                if sub.non_resource_urls:
                    wire["nonResourceURLs"] = list(sub.non_resource_urls)
                else:
                    wire["apiGroups"], wire["resources"] = list(sub.api_groups), list(sub.resources)
                    if sub.resource_names:
                        wire["resourceNames"] = list(sub.resource_names)
                out.append(wire)
    return out


def _go_quoted(values: tuple[str, ...] | list[str]) -> str:
    """Go's %q of a []string: `["a" "b"]`."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


def _compact_string(r: Rule) -> str:
    """upstream rbacv1helpers.CompactString."""
    parts = [f"{label}:{_go_quoted(v)}" for label, v in (
        ("APIGroups", r.api_groups), ("Resources", r.resources), ("NonResourceURLs", r.non_resource_urls),
        ("ResourceNames", r.resource_names), ("Verbs", r.verbs)) if v]
    return "{" + ", ".join(parts) + "}"


def _compact(missing: list[Rule]) -> list[Rule]:
    """upstream CompactRules: single group/resource(/name) rules that differ only by verb merge."""
    out: list[Rule] = []
    simple: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    for r in missing:
        if len(r.api_groups) == 1 and len(r.resources) == 1 and len(r.resource_names) <= 1 and not r.non_resource_urls:
            simple.setdefault((r.api_groups[0], r.resources[0], r.resource_names), []).extend(r.verbs)
        else:
            out.append(r)
    out.extend(Rule(tuple(verbs), (g,), (res,), names, ()) for (g, res, names), verbs in simple.items())
    return out


_FULL_AUTHORITY = (Rule(("*",), ("*",), ("*",), (), ()), Rule(("*",), (), (), (), ("*",)))
_GC_FIELDS = ("ownerReferences", "finalizers", "managedFields", "resourceVersion", "generation")
_RBAC_WRITES = {"roles": "Role", "clusterroles": "ClusterRole", "rolebindings": "RoleBinding",
                "clusterrolebindings": "ClusterRoleBinding"}


def _only_gc_fields_changed(new: JsonDict, old: JsonDict) -> bool:
    """upstream IsOnlyMutatingGCFields (with the server-managed metadata set aside as well)."""
    def strip(o: JsonDict) -> JsonDict:
        meta = {k: v for k, v in (o.get("metadata") or {}).items() if k not in _GC_FIELDS}
        return {**{k: v for k, v in o.items() if k not in ("metadata", "status")}, "metadata": meta}
    return strip(new) == strip(old)


class EscalationCheck:
    """The write guard `create_app` registers on the core: a user may create or change a Role or
    ClusterRole only with every rule it grants (or the `escalate` verb on it), and a binding
    only with the bound role's rules (or `bind` on that role). Only writes the HTTP layer
    authorized are checked (`WriteOptions.authorize`): system:masters and the in-process
    components are trusted, as they bypass authorization altogether. A refusal is upstream's 403:
    `roles.rbac.authorization.k8s.io "r" is forbidden: user "bob" (groups=["system:authenticated"])
    is attempting to grant RBAC permissions not currently held:` + one compact rule per line."""

    def __init__(self, authorizer: Authorizer) -> None:
        self._authz = authorizer

    def __call__(self, info: ResourceInfo, obj: JsonDict, old: JsonDict | None, opts: WriteOptions) -> None:
        user = opts.user
        if (not opts.authorize or user is None or info.group != RBAC_GROUP or info.resource not in _RBAC_WRITES
                or MASTERS in user.groups):
            return
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        namespace = str(meta.get("namespace") or "") if info.namespaced else ""
        if info.resource in ("roles", "clusterroles"):
            # the request's own attributes, as upstream's RoleEscalationAuthorized (a create names none)
            escalate = Attributes(user=user, verb="escalate", resource_request=True, api_group=RBAC_GROUP,
                                  api_version=info.version, resource=info.resource,
                                  name=name if old is not None else "", namespace=namespace)
            if self._authz.authorize(escalate).allowed:
                return
            agg = obj.get("aggregationRule")
            if info.resource == "clusterroles" and agg is not None and (old is None or old.get("aggregationRule") != agg):
                # an aggregationRule can gather anything: setting one takes * on everything
                if self._missing(user, "", _FULL_AUTHORITY)[0]:
                    raise _forbidden_write(info, name, "must have cluster-admin privileges to use the aggregationRule")
            if old is not None and _only_gc_fields_changed(obj, old):
                return
            self._confirm(info, name, user, namespace, _rules(obj))
            return
        if old is not None and _only_gc_fields_changed(obj, old):
            return
        ref = obj.get("roleRef") or {}
        kind, role_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
        if kind in ("Role", "ClusterRole"):
            bind = Attributes(user=user, verb="bind", resource_request=True, api_group=str(ref.get("apiGroup") or ""),
                              resource="roles" if kind == "Role" else "clusterroles", name=role_name,
                              namespace=namespace)
            if self._authz.authorize(bind).allowed:
                return
        snap = self._authz.snapshot()
        if kind == "ClusterRole" and role_name in snap.cluster_roles:
            rules = snap.cluster_roles[role_name]
        elif kind == "Role" and (namespace, role_name) in snap.roles:
            rules = snap.roles[(namespace, role_name)]
        else:
            what = "clusterrole" if kind == "ClusterRole" else "role"
            raise _forbidden_write(info, name, f'{what}.rbac.authorization.k8s.io "{role_name}" not found'
                                   if kind in ("Role", "ClusterRole") else f'unsupported role reference kind: "{kind}"')
        self._confirm(info, name, user, namespace, rules)

    def _missing(self, user: UserInfo, namespace: str, rules: tuple[Rule, ...]) -> tuple[list[Rule], list[str]]:
        """upstream Covers: the atomic rules of `rules` that the user's own rules do not cover, and
        the errors met resolving the user's rules."""
        owner: list[Rule] = []
        errs: list[str] = []
        for g in self._authz.grants(user, namespace):
            owner.extend(g.rules)
            if g.error:
                errs.append(g.error)
        return [sub for r in rules for sub in _breakdown(r) if not any(rule_covers(o, sub) for o in owner)], errs

    def _confirm(self, info: ResourceInfo, name: str, user: UserInfo, namespace: str, rules: tuple[Rule, ...]
                 ) -> None:
        missing, errs = self._missing(user, namespace, rules)
        if not missing:
            return
        lines = sorted({_compact_string(r) for r in _compact(missing)})
        msg = (f'user "{user.username}" (groups={_go_quoted(user.groups)}) is attempting to grant RBAC permissions '
               "not currently held:\n" + "\n".join(lines))
        if errs:
            msg += f"; resolution errors: [{', '.join(errs)}]"
        raise _forbidden_write(info, name, msg)


def _forbidden_write(info: ResourceInfo, name: str, msg: str) -> ForbiddenError:
    details: JsonDict = {"name": name, "group": info.group, "kind": info.resource} if name else {
        "group": info.group, "kind": info.resource}
    prefix = f'{info.resource}.{info.group} "{name}"' if name else f"{info.resource}.{info.group}"
    return ForbiddenError(f"{prefix} is forbidden: {msg}", details=details)
