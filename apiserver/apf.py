"""API Priority and Fairness classification (layer: core, beside rbac): which FlowSchema and
PriorityLevelConfiguration a request belongs to, as upstream's apf_controller matches it
(staging/src/k8s.io/apiserver/pkg/util/flowcontrol/{apf_controller,match}.go).

Why: every response of a real API server names them by UID (`X-Kubernetes-PF-FlowSchema-UID`,
`X-Kubernetes-PF-PriorityLevel-UID`); `kubectl -v=8` prints them, and operators read them to see
which schema their component's traffic falls into. minik3s classifies but does not queue or reject:
one process serves one user's workload, so the seats APF shares out are never short.

The FlowSchemas are tried by matchingPrecedence, then name; a schema whose priority level does
not exist is skipped; the first whose rule matches (a subject AND a resource rule for a resource
request, a non-resource rule otherwise) wins, else `catch-all`. A subject matches the user by
name, a group, or a ServiceAccount (namespace and name, `*` for any name); a resource rule by
verb, API group, `resource[/subresource]` and namespace (clusterScope for cluster-scoped
requests); a non-resource rule by verb and URL (`*`, exact, or a `/prefix/*`). A `*` counts only
as the list's sole member. The compiled table is rebuilt when either kind changes (store
watchers, as the RBAC authorizer's).

Data flow: a response about to be sent -> `Classifier.classify(attributes)` -> (FlowSchema UID,
PriorityLevel UID) -> headers (apiserver.app).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from minik3s.api.resources import ResourceInfo, ResourceRegistry
from minik3s.api.types import JsonDict

from .rbac import Attributes
from .storage.interface import Store, Watcher

logger = logging.getLogger(__name__)

GROUP = "flowcontrol.apiserver.k8s.io"
SA_PREFIX = "system:serviceaccount:"
MEMO_SIZE = 4096


def _has(values: list[str], v: str) -> bool:
    """containsString with upstream's wildcard rule: `*` counts only as the sole member."""
    return values == ["*"] or v in values


@dataclass(frozen=True, slots=True)
class _Rule:
    users: tuple[str, ...]
    groups: tuple[str, ...]
    service_accounts: tuple[tuple[str, str], ...]
    resource_rules: tuple[JsonDict, ...]
    non_resource_rules: tuple[JsonDict, ...]

    def subject_matches(self, attrs: Attributes) -> bool:
        user = attrs.user
        if "*" in self.users or user.username in self.users:
            return True
        if "*" in self.groups or any(g in self.groups for g in user.groups):
            return True
        if self.service_accounts and user.username.startswith(SA_PREFIX):
            ns, _, name = user.username[len(SA_PREFIX):].partition(":")
            return any(sns == ns and sname in ("*", name) for sns, sname in self.service_accounts)
        return False

    def request_matches(self, attrs: Attributes) -> bool:
        if attrs.resource_request:
            resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
            for r in self.resource_rules:
                if not _has(r.get("verbs") or [], attrs.verb) or not _has(r.get("resources") or [], resource) \
                        or not _has(r.get("apiGroups") or [], attrs.api_group):
                    continue
                if not attrs.namespace:
                    if r.get("clusterScope"):
                        return True
                elif _has(r.get("namespaces") or [], attrs.namespace):
                    return True
            return False
        for r in self.non_resource_rules:
            if not _has(r.get("verbs") or [], attrs.verb):
                continue
            for url in r.get("nonResourceURLs") or []:
                if url == "*" or url == attrs.path:
                    return True
                if url.endswith("*"):
                    prefix = url[:-1] if url[:-1].endswith("/") else url[:-1] + "/"
                    if attrs.path.startswith(prefix):
                        return True
        return False


@dataclass(frozen=True, slots=True)
class _Schema:
    name: str
    uid: str
    level_uid: str
    rules: tuple[_Rule, ...]


def _compile(fs: JsonDict, level_uid: str) -> _Schema:
    rules: list[_Rule] = []
    for rule in (fs.get("spec") or {}).get("rules") or ():
        if not isinstance(rule, dict):
            continue
        users, groups, sas = [], [], []
        for s in rule.get("subjects") or ():
            if not isinstance(s, dict):
                continue
            kind = s.get("kind")
            if kind == "User":
                users.append(str((s.get("user") or {}).get("name") or ""))
            elif kind == "Group":
                groups.append(str((s.get("group") or {}).get("name") or ""))
            elif kind == "ServiceAccount":
                sa = s.get("serviceAccount") or {}
                sas.append((str(sa.get("namespace") or ""), str(sa.get("name") or "")))
        rules.append(_Rule(tuple(users), tuple(groups), tuple(sas),
                           tuple(r for r in rule.get("resourceRules") or () if isinstance(r, dict)),
                           tuple(r for r in rule.get("nonResourceRules") or () if isinstance(r, dict))))
    meta = fs.get("metadata") or {}
    return _Schema(str(meta.get("name") or ""), str(meta.get("uid") or ""), level_uid, tuple(rules))


class Classifier:
    def __init__(self, store: Store, registry: ResourceRegistry) -> None:
        self._store = store
        self._infos: tuple[ResourceInfo, ...] = tuple(
            info for r in ("flowschemas", "prioritylevelconfigurations")
            if (info := registry.get_resource(GROUP, r)) is not None)
        self._watchers: list[Watcher] = []
        self._schemas: tuple[_Schema, ...] | None = None
        self._catch_all: _Schema | None = None
        # classification memo: a client sends the same kinds of request again and again (cleared
        # with the table, bounded)
        self._memo: dict[tuple[object, ...], tuple[str, str] | None] = {}

    def _fresh(self) -> tuple[_Schema, ...]:
        if self._schemas is not None and self._watchers and not any(w.ready() for w in self._watchers):
            return self._schemas
        return self._rebuild()

    def _rebuild(self) -> tuple[_Schema, ...]:
        for w in self._watchers:
            w.close()
        self._watchers = []
        rev = self._store.revision
        if len(self._infos) < 2:
            self._schemas = ()
            return ()
        schemas_info, levels_info = self._infos
        levels = {str((o.get("metadata") or {}).get("name")): str((o.get("metadata") or {}).get("uid") or "")
                  for o in self._store.list(levels_info.list_prefix(None))[0]}
        flows = self._store.list(schemas_info.list_prefix(None))[0]
        ordered = sorted(flows, key=lambda o: ((o.get("spec") or {}).get("matchingPrecedence") or 0,
                                               str((o.get("metadata") or {}).get("name") or "")))
        out: list[_Schema] = []
        self._catch_all = None
        for fs in ordered:
            level = str(((fs.get("spec") or {}).get("priorityLevelConfiguration") or {}).get("name") or "")
            if level not in levels:
                continue  # dangling: ignored
            schema = _compile(fs, levels[level])
            out.append(schema)
            if schema.name == "catch-all":
                self._catch_all = schema
        try:
            self._watchers = [self._store.watch(info.key_prefix, rev, queue_size=64) for info in self._infos]
        except Exception as e:  # noqa: BLE001 - a closing store: rebuild per request
            logger.debug("apf: cannot watch the configuration, rebuilding per request err=%r", e)
            self._watchers = []
        self._schemas = tuple(out)
        self._memo.clear()
        return self._schemas

    def classify(self, attrs: Attributes) -> tuple[str, str] | None:
        """(FlowSchema UID, PriorityLevelConfiguration UID), or None before the configuration
        exists."""
        schemas = self._fresh()
        user = attrs.user
        key = (user.username, user.groups, attrs.verb, attrs.resource_request, attrs.api_group, attrs.resource,
               attrs.subresource, attrs.namespace, "" if attrs.resource_request else attrs.path)
        try:
            return self._memo[key]
        except KeyError:
            pass
        if len(self._memo) >= MEMO_SIZE:
            self._memo.clear()
        got = self._memo[key] = self._match(schemas, attrs)
        return got

    def _match(self, schemas: tuple[_Schema, ...], attrs: Attributes) -> tuple[str, str] | None:
        for schema in schemas:
            for rule in schema.rules:
                if rule.subject_matches(attrs) and rule.request_matches(attrs):
                    return schema.uid, schema.level_uid
        if self._catch_all is not None:
            return self._catch_all.uid, self._catch_all.level_uid
        return None

    def close(self) -> None:
        for w in self._watchers:
            w.close()
        self._watchers = []
