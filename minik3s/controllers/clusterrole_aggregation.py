"""ClusterRole aggregation controller (layer L4): kube-controller-manager's
clusterrole-aggregation controller. A ClusterRole with `aggregationRule.clusterRoleSelectors`
gets, as its `rules`, the rules of every other ClusterRole its selectors match, so that the
bootstrap `admin`, `edit` and `view` roles carry what the `aggregate-to-*` roles (and any
CRD author's role labelled `rbac.authorization.k8s.io/aggregate-to-view: "true"`) grant, and
`kubectl get clusterrole admin -o yaml` shows it. The RBAC authorizer reads only the stored
rules, exactly as upstream's does.

Order, as upstream: for each selector in turn, the matching roles sorted by name (the role
itself skipped); their rules concatenated with duplicates dropped (a rule equal to one already
taken, empty and missing lists counting as equal). Written only when the result differs.

Data flow: clusterroles informer -> any change enqueues every aggregated ClusterRole ->
`sync(name)` -> PUT with the informer's resourceVersion (a conflict requeues).
"""

from __future__ import annotations

import logging

from minik3s.api.errors import NotFoundError
from minik3s.api.resources import CLUSTERROLES
from minik3s.api.selectors import label_selector_from_dict
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import run_workers

logger = logging.getLogger(__name__)

FIELD_MANAGER = "clusterrole-aggregation-controller"


def _normal(rule: object) -> JsonDict:
    """A rule with empty lists dropped (upstream's semantic equality: nil == empty)."""
    if not isinstance(rule, dict):
        return {}
    return {k: v for k, v in rule.items() if v not in (None, [], {})}


def aggregated_rules(role: JsonDict, all_roles: list[JsonDict]) -> list[JsonDict]:
    """The rules `role`'s aggregationRule selects from `all_roles`."""
    name = (role.get("metadata") or {}).get("name")
    selectors = ((role.get("aggregationRule") or {}).get("clusterRoleSelectors")) or []
    picked: list[JsonDict] = []
    for sel in selectors:
        if not isinstance(sel, dict):
            continue
        try:
            selector = label_selector_from_dict(sel)
        except ValueError:
            continue  # an invalid selector selects nothing (validation refuses it on write)
        matched = [r for r in all_roles
                   if (r.get("metadata") or {}).get("name") != name
                   and selector.matches((r.get("metadata") or {}).get("labels") or {})]
        picked.extend(sorted(matched, key=lambda r: str((r.get("metadata") or {}).get("name") or "")))
    out: list[JsonDict] = []
    seen: list[JsonDict] = []
    for r in picked:
        for rule in r.get("rules") or []:
            n = _normal(rule)
            if n not in seen:
                seen.append(n)
                out.append(rule)
    return out


class ClusterRoleAggregationController:
    NAME = "clusterrole-aggregation-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory) -> None:
        self._client = client
        self._roles = informers.informer(CLUSTERROLES)
        self.queue = WorkQueue()
        self._roles.add_handler(on_add=lambda _o: self._enqueue_all(), on_update=lambda _o, _n: self._enqueue_all(),
                                on_delete=lambda _o: self._enqueue_all())

    def _enqueue_all(self) -> None:
        for r in self._roles.store.list():
            if (r.get("aggregationRule") or {}).get("clusterRoleSelectors") is not None:
                self.queue.add(str((r.get("metadata") or {}).get("name") or ""))

    async def sync(self, name: str) -> None:
        role = self._roles.store.get(name)
        if role is None or not isinstance(role.get("aggregationRule"), dict):
            return
        rules = aggregated_rules(role, self._roles.store.list())
        if [_normal(r) for r in rules] == [_normal(r) for r in role.get("rules") or []]:
            return
        updated = {**role, "rules": rules}
        try:
            await self._client.update(CLUSTERROLES, updated, field_manager=FIELD_MANAGER, read_only=True)
        except NotFoundError:
            return
        logger.info("%s: aggregated clusterrole=%s rules=%d", self.NAME, name, len(rules))

    async def run(self, workers: int = 1) -> None:
        await self._roles.wait_for_sync()
        logger.info("%s: caches synced", self.NAME)
        self._enqueue_all()
        await run_workers(self.queue, self.sync, workers=workers, name=self.NAME)
