"""The request core's update path (`record_updated_fields`, in place, keeping untouched entries)
records exactly what the general algorithm (`update_managed_fields`: decode every entry,
compare, strip, encode every entry) records, and `compare` gives what the plain recursive
comparison it replaced gave.

The writes are sequences a cluster produces: a controller creates, the scheduler and the
kubelet write status, users label and edit, fields are removed, keyed list items come and go;
plus seeded random edits of the same objects by several managers."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from apiserver.patch.apply import (
    _MISSING,
    DEDUCED,
    Comparison,
    _granular_list,
    _index_items,
    compare,
    record_updated_fields,
    update_managed_fields,
)
from apiserver.patch.json_patch import json_equal
from apiserver.patch.strategic_merge import PatchMeta, patch_meta_for

POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "uid": "u", "resourceVersion": "5",
                 "labels": {"app": "x"}, "ownerReferences": [
                     {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "ru", "controller": True}]},
    "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
                             "resources": {"requests": {"cpu": "100m"}}}],
             "restartPolicy": "Always", "tolerations": [{"key": "k", "operator": "Exists"}]},
    "status": {"phase": "Pending"},
}

LEASE = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
         "metadata": {"name": "n", "namespace": "kube-node-lease"},
         "spec": {"holderIdentity": "n", "leaseDurationSeconds": 40, "renewTime": "2026-01-01T00:00:00.000000Z"}}

CUSTOM = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"},
          "spec": {"size": 3, "items": [{"name": "a"}], "nested": {"deep": {"x": 1}}}}

T = iter(f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z" for i in range(10**6))


def _both(old: dict, new: dict, *, manager: str, subresource: str | None = None,
          reset: tuple[str, ...] = (), operation: str = "Update") -> dict:
    """Run both paths on copies; assert the fast one took the write and agrees; return the
    object as stored."""
    now = next(T)
    api_version = new["apiVersion"]
    general = update_managed_fields(copy.deepcopy(old), copy.deepcopy(new), manager=manager, operation=operation,
                                    api_version=api_version, now=now, subresource=subresource,
                                    reset_fields=reset, share_created_fields=True)
    fast = copy.deepcopy(new)
    assert record_updated_fields(copy.deepcopy(old), fast, manager=manager, operation=operation,
                                 api_version=api_version, now=now, subresource=subresource, reset_fields=reset)
    assert fast["metadata"].get("managedFields") == general["metadata"].get("managedFields")
    return fast


def _created(obj: dict, manager: str) -> dict:
    return update_managed_fields(None, copy.deepcopy(obj), manager=manager, now=next(T),
                                 reset_fields=("status",) if obj["kind"] == "Pod" else ())


def _edit(obj: dict, fn: Any) -> dict:
    new = copy.deepcopy(obj)
    fn(new)
    return new


def test_a_pods_life_records_what_the_general_algorithm_records():
    live = _created(POD, "kube-controller-manager")
    steps: list[tuple[str, str | None, Any]] = [
        ("kube-scheduler", "status", lambda o: o["status"].setdefault("conditions", []).append(
            {"type": "PodScheduled", "status": "True"})),
        ("kubelet", "status", lambda o: o["status"].update(
            hostIP="10.0.0.1", conditions=[*o["status"]["conditions"], {"type": "Ready", "status": "False"}],
            containerStatuses=[{"name": "c", "ready": False, "state": {"waiting": {"reason": "ContainerCreating"}}}])),
        ("kubelet", "status", lambda o: o["status"].update(
            phase="Running", podIP="10.1.0.5",
            conditions=[{**c, "status": "True"} for c in o["status"]["conditions"]],
            containerStatuses=[{"name": "c", "ready": True, "state": {"running": {"startedAt": "T"}}}])),
        ("kubelet", "status", lambda o: None),  # an unchanged status write: nothing moves
        ("kubectl-label", None, lambda o: o["metadata"]["labels"].update(tier="web")),
        ("kubectl-edit", None, lambda o: o["spec"]["containers"][0].update(image="nginx:2")),
        ("kubectl-edit", None, lambda o: o["metadata"]["labels"].pop("app")),  # removed from its owner
        ("kubectl-edit", None, lambda o: o["spec"]["containers"][0]["ports"].clear()),
        ("kube-controller-manager", None, lambda o: o["metadata"]["ownerReferences"].clear()),
        ("kubectl-edit", None, lambda o: o["spec"]["containers"].append({"name": "side", "image": "busybox"})),
        ("kubelet", "status", lambda o: o["status"].pop("containerStatuses")),
    ]
    for manager, sub, fn in steps:
        reset = ("spec",) if sub == "status" else ("status",)
        live = _both(live, _edit(live, fn), manager=manager, subresource=sub, reset=reset)
    managers = [e["manager"] for e in live["metadata"]["managedFields"]]
    assert "kubelet" in managers and "kubectl-edit" in managers


def test_a_lease_renewal_moves_only_its_holders_time():
    live = _created(LEASE, "kubelet")
    before = live["metadata"]["managedFields"][0]
    renewed = _both(live, _edit(live, lambda o: o["spec"].update(renewTime="2026-01-01T00:00:10.000000Z")),
                    manager="kubelet")
    after = renewed["metadata"]["managedFields"][0]
    assert after["time"] != before["time"]
    assert after["fieldsV1"] == before["fieldsV1"]


def test_an_unchanged_write_keeps_the_live_entries_as_they_are():
    live = _created(LEASE, "kubelet")
    new = copy.deepcopy(live)
    new["metadata"].pop("managedFields")  # a client that does not send them keeps the live ones
    assert record_updated_fields(live, new, manager="other", operation="Update",
                                 api_version="coordination.k8s.io/v1", now="later")
    assert new["metadata"]["managedFields"] is live["metadata"]["managedFields"]


def test_a_field_taken_from_another_manager_leaves_its_entry():
    live = _created(LEASE, "kubelet")
    taken = _both(live, _edit(live, lambda o: o["spec"].update(holderIdentity="other")), manager="kcm")
    by = {e["manager"]: e["fieldsV1"] for e in taken["metadata"]["managedFields"]}
    assert "f:holderIdentity" not in by["kubelet"]["f:spec"]
    assert by["kcm"] == {"f:spec": {"f:holderIdentity": {}}}


def test_entries_that_lose_every_field_are_dropped():
    live = _created(CUSTOM, "a")
    live = _both(live, _edit(live, lambda o: o["spec"].update(size=4)), manager="b")
    gone = _both(live, _edit(live, lambda o: o["spec"].pop("size")), manager="c")
    assert [e["manager"] for e in gone["metadata"]["managedFields"]] == ["a"]


@pytest.mark.parametrize("sent", [
    pytest.param(lambda mf: [{**mf[0], "manager": "renamed"}], id="edited-entries"),
    pytest.param(lambda mf: [{}], id="reset-marker"),
    pytest.param(lambda mf: [{**mf[0], "extra": "x"}], id="unknown-key"),
])
def test_writes_sending_other_entries_take_the_general_path(sent):
    live = _created(LEASE, "kubelet")
    new = _edit(live, lambda o: o["spec"].update(renewTime="later"))
    new["metadata"]["managedFields"] = sent(live["metadata"]["managedFields"])
    before = copy.deepcopy(new)
    assert not record_updated_fields(live, new, manager="kubelet", operation="Update",
                                     api_version="coordination.k8s.io/v1", now="later")
    assert new == before


def test_live_entries_this_server_would_not_write_take_the_general_path():
    live = _created(LEASE, "kubelet")
    live["metadata"]["managedFields"] = [{**live["metadata"]["managedFields"][0], "fieldsType": "Other"}]
    new = _edit(live, lambda o: o["spec"].update(renewTime="later"))
    assert not record_updated_fields(live, new, manager="kubelet", operation="Update",
                                     api_version="coordination.k8s.io/v1", now="later")


# ---- seeded random edits by several managers ---------------------------------------------------

_VALUES: list[Any] = ["a", "b", "", 0, 1, True, None, {}, [], {"x": "y"}, [{"name": "a"}], ["s", "t"]]


def _random_edit(obj: Any, rng: random.Random, depth: int = 0) -> None:
    if isinstance(obj, dict):
        keys = [k for k in obj if not (depth == 0 and k in ("apiVersion", "kind", "metadata"))]
        roll = rng.random()
        if keys and roll < 0.45:
            k = rng.choice(keys)
            if isinstance(obj[k], (dict, list)) and obj[k] and rng.random() < 0.7:
                _random_edit(obj[k], rng, depth + 1)
            else:
                obj[k] = copy.deepcopy(rng.choice(_VALUES))
        elif keys and roll < 0.6:
            obj.pop(rng.choice(keys))
        else:
            obj[rng.choice(["name", "image", "extra", "labels", "size", "ready"])] = copy.deepcopy(rng.choice(_VALUES))
    elif isinstance(obj, list):
        roll = rng.random()
        if obj and roll < 0.5:
            i = rng.randrange(len(obj))
            if isinstance(obj[i], (dict, list)):
                _random_edit(obj[i], rng, depth + 1)
            else:
                obj[i] = copy.deepcopy(rng.choice(_VALUES))
        elif obj and roll < 0.7:
            obj.pop(rng.randrange(len(obj)))
        else:
            obj.append({"name": rng.choice("abcd"), "image": rng.choice("xy")})


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("base", [POD, LEASE, CUSTOM], ids=["pod", "lease", "custom"])
def test_random_edits_by_several_managers_agree_with_the_general_algorithm(base, seed):
    rng = random.Random(seed)
    live = _created(base, "creator")
    for _ in range(25):
        manager = rng.choice(["creator", "a", "b", "c"])
        sub = rng.choice([None, "status"]) if base["kind"] == "Pod" else None
        reset = (("spec",) if sub == "status" else ("status",)) if base["kind"] == "Pod" else ()
        new = _edit(live, lambda o: _random_edit(o, rng))
        live = _both(live, new, manager=manager, subresource=sub, reset=reset)


# ---- compare against the plain recursion it replaced ------------------------------------------

def _reference_cmp(lhs: Any, rhs: Any, meta: PatchMeta, path: tuple[str, ...], res: Comparison) -> None:
    """typed.Compare as one plain recursion over every member, with no shortcut."""
    if lhs is rhs or (isinstance(lhs, (dict, list)) and type(lhs) is type(rhs) and lhs == rhs):
        return

    def empty(v: Any) -> bool:
        return v is _MISSING or v is None or v == {} or v == []

    def mark(lv: Any, rv: Any, p: tuple[str, ...]) -> None:
        if lv is _MISSING:
            res.added.add(p)
        elif rv is _MISSING:
            res.removed.add(p)

    both_empty = empty(lhs) and empty(rhs)
    if not both_empty and not meta.atomic and (lhs is _MISSING or isinstance(lhs, dict)) \
            and (rhs is _MISSING or isinstance(rhs, dict)):
        lm = {} if lhs is _MISSING else lhs
        rm = {} if rhs is _MISSING else rhs
        for k in [*lm, *(k for k in rm if k not in lm)]:
            _reference_cmp(lm.get(k, _MISSING), rm.get(k, _MISSING), meta.child(k), (*path, f"f:{k}"), res)
        if path and not meta.struct:
            mark(lhs, rhs, path)
        return
    if not both_empty and _granular_list(meta) and (lhs is _MISSING or isinstance(lhs, list)) \
            and (rhs is _MISSING or isinstance(rhs, list)):
        li = _index_items([] if lhs is _MISSING else lhs, meta)
        ri = _index_items([] if rhs is _MISSING else rhs, meta)
        for pe in [*li, *(pe for pe in ri if pe not in li)]:
            a, b = li.get(pe, _MISSING), ri.get(pe, _MISSING)
            _reference_cmp(a, b, meta.element(), (*path, pe), res)
            if isinstance(a, dict) or isinstance(b, dict):
                mark(a, b, (*path, pe))
        if path and not meta.always_present:
            mark(lhs, rhs, path)
        return
    if lhs is _MISSING:
        res.added.add(path)
    elif rhs is _MISSING:
        res.removed.add(path)
    elif not json_equal(lhs, rhs):
        res.modified.add(path)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("base", [POD, LEASE, CUSTOM], ids=["pod", "lease", "custom"])
def test_compare_gives_the_plain_recursions_answer(base, seed):
    rng = random.Random(seed)
    old = copy.deepcopy(base)
    for _ in range(rng.randrange(4)):
        _random_edit(old, rng)
    new = _edit(old, lambda o: [_random_edit(o, rng) for _ in range(rng.randrange(1, 4))])
    schema = patch_meta_for(base["apiVersion"], base["kind"]) or DEDUCED
    want = Comparison()
    _reference_cmp(old, new, schema, (), want)
    for a, b in ((old, new), (new, old), ({}, new), (old, {})):
        want = Comparison()
        _reference_cmp(a, b, schema, (), want)
        got = compare(a, b, schema)
        assert (got.added, got.modified, got.removed) == (want.added, want.modified, want.removed)


def test_an_empty_entry_resets_managed_fields_as_documented():
    """kubernetes.io, Server-Side Apply, "Clearing managedFields": a write whose managedFields is
    `[{}]` strips them; combined with other changes, its manager then owns just those. An empty
    list is not a reset (the live entries stay)."""
    live = _created(CUSTOM, "creator")
    alone = copy.deepcopy(live)
    alone["metadata"]["managedFields"] = [{}]
    out = update_managed_fields(live, alone, manager="kubectl", now="T2")
    assert "managedFields" not in out["metadata"]
    changed = _edit(live, lambda o: o["spec"].update(size=9))
    changed["metadata"]["managedFields"] = [{}]
    out = update_managed_fields(live, changed, manager="kubectl", now="T2")
    assert [(e["manager"], e["fieldsV1"]) for e in out["metadata"]["managedFields"]] == [
        ("kubectl", {"f:spec": {"f:size": {}}})]
    kept = copy.deepcopy(live)
    kept["metadata"]["managedFields"] = []
    out = update_managed_fields(live, kept, manager="kubectl", now="T2")
    assert out["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_an_update_through_another_version_is_another_manager_entry():
    # upstream's manager identity holds the API version for Updates: one manager writing a
    # multi-version custom resource through v1 and then v2 keeps two entries, the v1 one
    # losing only the fields the v2 write took over
    live = _created(CUSTOM, "op")
    live = _both(live, _edit(live, lambda o: o["spec"].update(size=4)), manager="op")
    v2 = _edit(live, lambda o: (o.update(apiVersion="example.com/v2"), o["spec"]["nested"]["deep"].update(x=2)))
    out = _both(live, v2, manager="op")
    entries = {e["apiVersion"]: e for e in out["metadata"]["managedFields"]}
    assert sorted(entries) == ["example.com/v1", "example.com/v2"]
    assert {e["manager"] for e in entries.values()} == {"op"}
    assert entries["example.com/v2"]["fieldsV1"] == {"f:spec": {"f:nested": {"f:deep": {"f:x": {}}}}}
    v1_spec = entries["example.com/v1"]["fieldsV1"]["f:spec"]
    assert "f:size" in v1_spec and "f:x" not in v1_spec.get("f:nested", {}).get("f:deep", {})
    # back through v1: the v1 entry is this manager's again (no third entry)
    again = _both(out, _edit(out, lambda o: (o.update(apiVersion="example.com/v1"), o["spec"].update(size=5))),
                  manager="op")
    assert sorted(e["apiVersion"] for e in again["metadata"]["managedFields"]) == ["example.com/v1", "example.com/v2"]
