"""Server-side apply and field ownership, told as the stories users meet with kubectl."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.patch import ApplyConflictError, PatchError
from apiserver.patch.apply import (
    decode_fields,
    encode_fields,
    path_string,
    server_side_apply,
    update_managed_fields,
)
from apiserver.patch.strategic_merge import patch_meta_for

T0, T1, T2, T3 = (
    "2026-01-01T00:00:00Z",
    "2026-01-01T00:01:00Z",
    "2026-01-01T00:02:00Z",
    "2026-01-01T00:03:00Z",
)
DEPLOY = patch_meta_for("apps/v1", "Deployment")
CM = patch_meta_for("v1", "ConfigMap")


def _deploy(
    replicas: int | None = 3,
    *,
    containers: list[dict[str, Any]] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {},
    }
    if labels is not None:
        obj["metadata"]["labels"] = labels
    if replicas is not None:
        obj["spec"]["replicas"] = replicas
    if containers is not None:
        obj["spec"]["template"] = {"spec": {"containers": containers}}
    return obj


def _apply(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    manager: str,
    now: str,
    *,
    force: bool = False,
    schema: Any = DEPLOY,
) -> dict[str, Any]:
    return server_side_apply(live, applied, manager=manager, force=force, schema=schema, now=now)


def _owners(obj: dict[str, Any]) -> dict[str, Any]:
    return {(e["manager"], e["operation"]): e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


def test_first_apply_creates_object_owned_by_the_applier() -> None:
    applied = _deploy(
        3,
        containers=[{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}],
        labels={"app": "web"},
    )
    created = _apply(None, applied, "kubectl", T0)
    assert created["spec"] == applied["spec"]
    assert created["metadata"]["labels"] == {"app": "web"}
    assert created["metadata"]["managedFields"] == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "apps/v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:template": {
                        "f:spec": {
                            "f:containers": {
                                'k:{"name":"c"}': {
                                    ".": {},
                                    "f:image": {},
                                    "f:name": {},
                                    "f:ports": {
                                        'k:{"containerPort":80,"protocol":"TCP"}': {
                                            ".": {},
                                            "f:containerPort": {},
                                        }
                                    },
                                }
                            }
                        }
                    },
                },
            },
        }
    ]


def test_reapplying_unchanged_config_is_a_noop() -> None:
    applied = _deploy(3, labels={"app": "web"})
    live = _apply(None, applied, "kubectl", T0)
    again = _apply(live, applied, "kubectl", T1)
    assert again == live  # same object, same managedFields, time not bumped


@pytest.mark.parametrize(
    ("first_manager_via", "printed"),
    [
        pytest.param("apply", '"alice"', id="conflict-with-another-applier"),
        pytest.param("update", '"alice" using apps/v1', id="conflict-with-an-updater-names-its-api-version"),
    ],
)
def test_two_managers_conflict_on_the_same_field(first_manager_via: str, printed: str) -> None:
    if first_manager_via == "apply":
        live = _apply(None, _deploy(3), "alice", T0)
    else:
        live = update_managed_fields(None, _deploy(3), manager="alice", api_version="apps/v1", now=T0)
    with pytest.raises(ApplyConflictError) as info:
        _apply(live, _deploy(5), "bob", T1)
    err = info.value
    assert err.conflicts == [(printed, ".spec.replicas")]
    status = err.to_api_error().to_status()
    assert (status["code"], status["reason"]) == (409, "Conflict")
    assert status["message"] == f"Apply failed with 1 conflict: conflict with {printed}: .spec.replicas"
    assert status["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": f"conflict with {printed}", "field": ".spec.replicas"}
    ]


def test_conflicts_with_several_fields_are_listed_per_manager() -> None:
    live = _apply(None, _deploy(3, containers=[{"name": "c", "image": "a"}]), "alice", T0)
    with pytest.raises(ApplyConflictError) as info:
        _apply(live, _deploy(5, containers=[{"name": "c", "image": "b"}]), "bob", T1)
    assert info.value.message == (
        'Apply failed with 2 conflicts: conflicts with "alice":\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="c"].image'
    )


def test_applying_the_same_value_shares_ownership_without_conflict() -> None:
    live = _apply(None, _deploy(3), "alice", T0)
    shared = _apply(live, _deploy(3), "bob", T1)
    owners = _owners(shared)
    assert owners[("alice", "Apply")] == {"f:spec": {"f:replicas": {}}}
    assert owners[("bob", "Apply")] == {"f:spec": {"f:replicas": {}}}
    assert shared["spec"]["replicas"] == 3


def test_force_takes_ownership_from_the_other_manager() -> None:
    live = _apply(None, _deploy(3, labels={"team": "a"}), "alice", T0)
    forced = _apply(live, _deploy(5), "bob", T1, force=True)
    assert forced["spec"]["replicas"] == 5
    owners = _owners(forced)
    assert owners[("alice", "Apply")] == {"f:metadata": {"f:labels": {"f:team": {}}}}
    assert owners[("bob", "Apply")] == {"f:spec": {"f:replicas": {}}}


def test_a_field_the_applier_stops_applying_is_pruned() -> None:
    live = _apply(None, _deploy(3, labels={"app": "web", "tier": "fe"}), "kubectl", T0)
    pruned = _apply(live, _deploy(3, labels={"app": "web"}), "kubectl", T1)
    assert pruned["metadata"]["labels"] == {"app": "web"}
    assert _owners(pruned)[("kubectl", "Apply")]["f:metadata"] == {"f:labels": {"f:app": {}}}


def test_dropping_every_label_removes_the_empty_map() -> None:
    live = _apply(None, _deploy(3, labels={"tier": "fe"}), "kubectl", T0)
    pruned = _apply(live, _deploy(3), "kubectl", T1)
    assert "labels" not in pruned["metadata"]


def test_a_field_shared_with_another_manager_is_kept_when_one_drops_it() -> None:
    live = _apply(None, _deploy(3, labels={"tier": "fe"}), "alice", T0)
    live = _apply(live, _deploy(3, labels={"tier": "fe"}), "bob", T1)
    after = _apply(live, _deploy(None, labels={"tier": "fe"}), "alice", T2)
    assert after["spec"]["replicas"] == 3  # bob still owns it
    owners = _owners(after)
    assert "f:spec" not in owners[("alice", "Apply")]
    assert owners[("bob", "Apply")]["f:spec"] == {"f:replicas": {}}


def test_dropped_container_is_pruned_but_server_defaults_are_kept() -> None:
    applied = _deploy(1, containers=[{"name": "c", "image": "a"}, {"name": "side", "image": "s"}])
    live = _apply(None, applied, "kubectl", T0)
    # the server defaulted a field nobody applied
    live["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent"
    after = _apply(live, _deploy(1, containers=[{"name": "c", "image": "a"}]), "kubectl", T1)
    assert after["spec"]["template"]["spec"]["containers"] == [
        {"name": "c", "image": "a", "imagePullPolicy": "IfNotPresent"}
    ]


def test_keyed_list_items_merge_by_key_with_other_managers_items() -> None:
    live = _apply(None, _deploy(1, containers=[{"name": "a", "image": "a"}]), "alice", T0)
    both = _apply(live, _deploy(None, containers=[{"name": "b", "image": "b"}]), "bob", T1)
    assert both["spec"]["template"]["spec"]["containers"] == [
        {"name": "a", "image": "a"},
        {"name": "b", "image": "b"},
    ]


def test_an_update_takes_fields_without_conflict_and_then_conflicts_with_the_applier() -> None:
    live = _apply(None, _deploy(3), "kubectl", T0)
    edited = copy.deepcopy(live)
    edited["spec"]["replicas"] = 4
    edited = update_managed_fields(live, edited, manager="kubectl-edit", api_version="apps/v1", now=T1)
    owners = _owners(edited)
    assert ("kubectl", "Apply") not in owners  # its only field was taken
    assert owners[("kubectl-edit", "Update")] == {"f:spec": {"f:replicas": {}}}
    with pytest.raises(ApplyConflictError) as info:
        _apply(edited, _deploy(3), "kubectl", T2)
    assert info.value.conflicts == [('"kubectl-edit" using apps/v1', ".spec.replicas")]


def test_update_records_new_map_with_its_own_member_and_removal_clears_ownership() -> None:
    old = _deploy(3)
    new = _deploy(3, labels={"app": "web"})
    created = update_managed_fields(None, old, manager="kubectl-create", api_version="apps/v1", now=T0)
    labelled = update_managed_fields(
        created,
        {**new, "metadata": {**new["metadata"], "managedFields": created["metadata"]["managedFields"]}},
        manager="kubectl-label",
        api_version="apps/v1",
        now=T1,
    )
    assert _owners(labelled)[("kubectl-label", "Update")] == {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}}
    }
    unlabelled_body = copy.deepcopy(labelled)
    del unlabelled_body["metadata"]["labels"]
    unlabelled = update_managed_fields(
        labelled, unlabelled_body, manager="kubectl-label", api_version="apps/v1", now=T2
    )
    assert ("kubectl-label", "Update") not in _owners(unlabelled)
    assert _owners(unlabelled)[("kubectl-create", "Update")] == {"f:spec": {"f:replicas": {}}}


def test_update_that_changes_nothing_keeps_managed_fields() -> None:
    created = update_managed_fields(None, _deploy(3), manager="a", api_version="apps/v1", now=T0)
    same = update_managed_fields(created, copy.deepcopy(created), manager="b", api_version="apps/v1", now=T1)
    assert same["metadata"]["managedFields"] == created["metadata"]["managedFields"]


def test_first_apply_on_an_object_without_managed_fields_conflicts_with_before_first_apply() -> None:
    live = {**_deploy(3), "metadata": {"name": "web", "namespace": "default", "uid": "u1"}}
    with pytest.raises(ApplyConflictError) as info:
        _apply(live, _deploy(5), "kubectl", T1)
    assert info.value.conflicts == [('"before-first-apply" using apps/v1', ".spec.replicas")]


def test_custom_resources_treat_lists_as_atomic_and_maps_as_granular() -> None:
    cr = {
        "apiVersion": "x.io/v1",
        "kind": "Thing",
        "metadata": {"name": "t"},
        "spec": {"items": [{"a": 1}], "size": 1},
    }
    created = _apply(None, cr, "kubectl", T0, schema=None)
    assert created["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:spec": {".": {}, "f:items": {}, "f:size": {}}
    }
    other = _apply(
        created,
        {"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {"items": [{"b": 2}]}},
        "bob",
        T1,
        schema=None,
        force=True,
    )
    assert other["spec"] == {"items": [{"b": 2}], "size": 1}


def test_status_is_ignored_when_reset_for_the_main_resource() -> None:
    applied = {**_deploy(1), "status": {"replicas": 9}}
    created = server_side_apply(
        None, applied, manager="kubectl", force=False, schema=DEPLOY, now=T0, reset_fields=("status",)
    )
    assert "status" not in created
    assert "f:status" not in created["metadata"]["managedFields"][0]["fieldsV1"]


@pytest.mark.parametrize(
    "applied",
    [
        pytest.param(["not", "an", "object"], id="body-not-an-object"),
        pytest.param(
            {**_deploy(1), "metadata": {"name": "web", "managedFields": [{"manager": "x"}]}},
            id="managed-fields-must-be-nil",
        ),
    ],
)
def test_bad_apply_bodies_are_bad_requests(applied: Any) -> None:
    with pytest.raises(PatchError) as info:
        _apply(None, applied, "kubectl", T0)
    assert info.value.code == 400


def test_configmap_data_keys_are_owned_individually() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    live = _apply(None, cm, "alice", T0, schema=CM)
    both = _apply(live, {**cm, "data": {"b": "2"}}, "bob", T1, schema=CM)
    assert both["data"] == {"a": "1", "b": "2"}
    pruned = _apply(both, {**cm, "data": {}}, "alice", T2, schema=CM)
    assert pruned["data"] == {"b": "2"}


@pytest.mark.parametrize(
    ("path", "text"),
    [
        pytest.param(("f:spec", "f:replicas"), ".spec.replicas", id="fields"),
        pytest.param(("f:spec", 'k:{"name":"c"}', "f:image"), '.spec[name="c"].image', id="keyed-item"),
        pytest.param(
            ("f:ports", 'k:{"containerPort":80,"protocol":"TCP"}'),
            '.ports[containerPort=80,protocol="TCP"]',
            id="multi-key-item",
        ),
        pytest.param(("f:metadata", "f:finalizers", 'v:"x"'), '.metadata.finalizers[="x"]', id="set-member"),
    ],
)
def test_path_strings_match_structured_merge_diff(path: tuple[str, ...], text: str) -> None:
    assert path_string(path) == text


def test_fields_v1_round_trips() -> None:
    fields = {
        ("f:metadata", "f:labels"),
        ("f:metadata", "f:labels", "f:a"),
        ("f:spec", "f:replicas"),
        ("f:metadata", "f:finalizers", 'v:"x"'),
    }
    encoded = encode_fields(fields)
    assert encoded["f:metadata"]["f:labels"] == {".": {}, "f:a": {}}
    assert decode_fields(encoded) == fields


def test_dropped_item_is_kept_with_what_another_manager_owns_below_it() -> None:
    applied = _deploy(1, containers=[{"name": "c", "image": "a"}, {"name": "side", "image": "s"}])
    live = _apply(None, applied, "kubectl", T0)
    edited = copy.deepcopy(live)
    edited["spec"]["template"]["spec"]["containers"][1]["env"] = [{"name": "X", "value": "1"}]
    edited = update_managed_fields(live, edited, manager="kubectl-edit", api_version="apps/v1", now=T1)
    after = _apply(edited, _deploy(1, containers=[{"name": "c", "image": "a"}]), "kubectl", T2)
    assert after["spec"]["template"]["spec"]["containers"] == [
        {"name": "c", "image": "a"},
        {"name": "side", "env": [{"name": "X", "value": "1"}]},
    ]
