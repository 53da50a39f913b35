"""The clusterrole-aggregation controller against a real in-process server with the bootstrap
policy: admin/edit/view receive the aggregate-to-* roles' rules, and a new labelled role
(a CRD author's) flows into them; its removal flows out."""

from __future__ import annotations

from minik3s.api.resources import CLUSTERROLES
from minik3s.api.types import JsonDict
from minik3s.controllers.clusterrole_aggregation import ClusterRoleAggregationController, aggregated_rules

AGG = "rbac.authorization.k8s.io/aggregate-to-"


def _role(name: str, rules: list[JsonDict], labels: dict[str, str] | None = None,
          selectors: list[JsonDict] | None = None) -> JsonDict:
    obj: JsonDict = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                     "metadata": {"name": name, "labels": labels or {}}, "rules": rules}
    if selectors is not None:
        obj["aggregationRule"] = {"clusterRoleSelectors": selectors}
    return obj


def test_aggregated_rules_order_and_dedup() -> None:
    a = _role("a", [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}], {"x": "1"})
    b = _role("b", [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": []},
                    {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}], {"x": "1"})
    c = _role("c", [{"verbs": ["watch"], "apiGroups": [""], "resources": ["pods"]}], {"y": "1"})
    agg = _role("agg", [], {"x": "1"}, [{"matchLabels": {"y": "1"}}, {"matchLabels": {"x": "1"}}])
    # selector order first, names sorted within a selector, itself skipped, equal rules once
    assert aggregated_rules(agg, [b, agg, a, c]) == [
        {"verbs": ["watch"], "apiGroups": [""], "resources": ["pods"]},
        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
        {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]},
    ]


async def test_bootstrap_roles_are_aggregated_and_follow_changes(harness) -> None:
    c = ClusterRoleAggregationController(harness.client, harness.informers)
    harness.start(c.run)
    agg_view = await harness.client.get(CLUSTERROLES, "system:aggregate-to-view")
    agg_edit = await harness.client.get(CLUSTERROLES, "system:aggregate-to-edit")

    async def view_rules() -> list[JsonDict] | None:
        rules = (await harness.client.get(CLUSTERROLES, "view")).get("rules") or []
        return rules if rules == agg_view["rules"] else None

    await harness.eventually(view_rules, what="view aggregated from system:aggregate-to-view")

    async def edit_has_view_and_edit() -> bool:
        rules = (await harness.client.get(CLUSTERROLES, "edit")).get("rules") or []
        return all(r in rules for r in agg_edit["rules"]) and all(r in rules for r in agg_view["rules"])

    await harness.eventually(edit_has_view_and_edit, what="edit aggregates edit and (through view) view")

    crd_rule = {"verbs": ["get", "list", "watch"], "apiGroups": ["example.com"], "resources": ["widgets"]}
    await harness.client.create(CLUSTERROLES, _role("widgets-view", [crd_rule], {f"{AGG}view": "true"}))

    async def admin_has_widgets() -> bool:
        return crd_rule in ((await harness.client.get(CLUSTERROLES, "admin")).get("rules") or [])

    await harness.eventually(admin_has_widgets, what="a labelled role flows view -> edit -> admin")
    admin = await harness.client.get(CLUSTERROLES, "admin")
    managers = {m["manager"] for m in admin["metadata"].get("managedFields") or []}
    assert "clusterrole-aggregation-controller" in managers

    await harness.client.delete(CLUSTERROLES, "widgets-view")

    async def admin_lost_widgets() -> bool:
        rules = (await harness.client.get(CLUSTERROLES, "admin")).get("rules") or []
        return bool(rules) and crd_rule not in rules

    await harness.eventually(admin_lost_widgets, what="rules of a deleted role leave the aggregate")
