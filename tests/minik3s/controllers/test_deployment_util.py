"""Deployment arithmetic tables, modelled on upstream deployment_util_test.go / rolling_test.go."""

from __future__ import annotations

import pytest

from minik3s.controllers import deployment_util as du
from minik3s.controllers.common import scaled_value


@pytest.mark.parametrize(("value", "total", "round_up", "want"), [
    pytest.param("25%", 10, True, 3, id="quarter-of-ten-rounds-up-to-3"),
    pytest.param("25%", 10, False, 2, id="quarter-of-ten-rounds-down-to-2"),
    pytest.param("50%", 3, True, 2, id="half-of-three-up"),
    pytest.param("50%", 3, False, 1, id="half-of-three-down"),
    pytest.param(4, 10, True, 4, id="plain-int-passes-through"),
    pytest.param("7", 10, False, 7, id="int-string-parses"),
    pytest.param("0%", 10, True, 0, id="zero-percent"),
    pytest.param("100%", 7, False, 7, id="all"),
])
def test_scaled_value(value, total, round_up, want):
    assert scaled_value(value, total, round_up=round_up) == want


def test_scaled_value_rejects_garbage():
    with pytest.raises(ValueError):
        scaled_value("abc%", 10, round_up=True)


@pytest.mark.parametrize(("surge", "unavail", "desired", "want"), [
    pytest.param("25%", "25%", 10, (3, 2), id="defaults-of-ten"),
    pytest.param("25%", "25%", 1, (1, 0), id="defaults-of-one-surge-one"),
    pytest.param(0, 0, 5, (0, 1), id="both-zero-forces-one-unavailable"),
    pytest.param("0%", "0%", 5, (0, 1), id="both-zero-percent-forces-one-unavailable"),
    pytest.param(2, "50%", 5, (2, 2), id="mixed"),
])
def test_resolve_fenceposts(surge, unavail, desired, want):
    assert du.resolve_fenceposts(surge, unavail, desired) == want


def d(replicas=10, *, surge="25%", unavail="25%", strategy="RollingUpdate", generation=1, status=None):
    spec = {"replicas": replicas, "strategy": {"type": strategy}}
    if strategy == "RollingUpdate":
        spec["strategy"]["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavail}
    return {"metadata": {"name": "web", "generation": generation}, "spec": spec, "status": status or {}}


def rs(replicas, available=None, *, name="rs", created="2026-01-01T00:00:00Z", revision=None):
    m = {"name": name, "creationTimestamp": created}
    if revision is not None:
        m["annotations"] = {du.REVISION: str(revision)}
    return {"metadata": m, "spec": {"replicas": replicas},
            "status": {"replicas": replicas, "availableReplicas": replicas if available is None else available}}


@pytest.mark.parametrize(("dep", "all_rs", "new", "want"), [
    pytest.param(d(10, surge=3), [rs(10, name="old")], rs(0, name="new"), 3, id="surge-3-from-scratch"),
    pytest.param(d(10, surge=3), [rs(10, name="old")], rs(3, name="new"), 3,
                 id="already-at-max-total-stays"),
    pytest.param(d(10, surge=3), [rs(5, name="old")], rs(5, name="new"), 8, id="room-after-old-shrank"),
    pytest.param(d(10, surge=30), [rs(10, name="old")], rs(0, name="new"), 10, id="never-above-replicas"),
    pytest.param(d(4, strategy="Recreate"), [rs(4, name="old")], rs(0, name="new"), 4, id="recreate-jumps"),
])
def test_new_rs_new_replicas(dep, all_rs, new, want):
    assert du.new_rs_new_replicas(dep, [*all_rs, new], new) == want


@pytest.mark.parametrize(("dep", "want"), [
    pytest.param(d(10), 2, id="default-25-percent-of-ten"),
    pytest.param(d(3, unavail=5), 3, id="capped-at-replicas"),
    pytest.param(d(0), 0, id="zero-replicas"),
    pytest.param(d(4, strategy="Recreate"), 0, id="recreate-has-none"),
])
def test_max_unavailable(dep, want):
    assert du.max_unavailable(dep) == want


def test_safe_encode_string_uses_upstream_alphabet():
    assert du.safe_encode_string("1234") == "5678"
    assert du.safe_encode_string("0") == "4"


def test_fnv32a_matches_reference_vectors():
    assert du.fnv32a(b"") == 0x811C9DC5
    assert du.fnv32a(b"a") == 0xE40C292C
    assert du.fnv32a(b"foobar") == 0xBF9CF968


TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def test_compute_hash_is_stable_and_template_sensitive():
    h = du.compute_hash(TEMPLATE)
    assert h == du.compute_hash({"spec": TEMPLATE["spec"], "metadata": TEMPLATE["metadata"]})
    assert set(h) <= set("bcdfghjklmnpqrstvwxz2456789") and 1 <= len(h) <= 10
    changed = {**TEMPLATE, "spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}
    assert du.compute_hash(changed) != h
    assert du.compute_hash(TEMPLATE, 1) != h
    labelled = {"metadata": {"labels": {"app": "web", du.POD_TEMPLATE_HASH: h}}, "spec": TEMPLATE["spec"]}
    assert du.compute_hash(labelled) == h


def test_template_equal_ignores_only_the_hash_label():
    labelled = {"metadata": {"labels": {"app": "web", du.POD_TEMPLATE_HASH: "x"}}, "spec": TEMPLATE["spec"]}
    assert du.template_equal_ignore_hash(labelled, TEMPLATE)
    other = {"metadata": {"labels": {"app": "api"}}, "spec": TEMPLATE["spec"]}
    assert not du.template_equal_ignore_hash(other, TEMPLATE)


def test_a_null_creation_timestamp_is_the_same_template():
    # kubectl rollout undo sends a ReplicaSet's template back as Go serialised it
    undone = {"metadata": {"creationTimestamp": None, "labels": {"app": "web", du.POD_TEMPLATE_HASH: "x"}},
              "spec": TEMPLATE["spec"]}
    assert du.template_equal_ignore_hash(undone, TEMPLATE) and du.template_equal_ignore_hash(TEMPLATE, undone)
    assert du.compute_hash(undone) == du.compute_hash(TEMPLATE)
    stamped = {"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"app": "web"}},
               "spec": TEMPLATE["spec"]}
    assert not du.template_equal_ignore_hash(stamped, TEMPLATE)


@pytest.mark.parametrize(("replicas", "available", "want"), [
    pytest.param(10, 8, ("True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
                 id="within-max-unavailable"),
    pytest.param(10, 7, ("False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability."),
                 id="below-minimum"),
])
def test_calculate_status_available_condition(replicas, available, want):
    status = du.calculate_status(d(replicas), [rs(replicas, available)], None, "2026-01-01T00:00:00Z")
    cond = du.condition(status, "Available")
    assert (cond["status"], cond["reason"], cond["message"]) == want
    assert status.get("unavailableReplicas", 0) == replicas - available


def test_set_deployment_condition_keeps_transition_time_on_same_status():
    conds = [du.new_condition("Progressing", "True", du.NEW_RS_CREATED, "a", "t0")]
    assert du.set_deployment_condition(conds, du.new_condition("Progressing", "True", du.RS_UPDATED, "b", "t1"))
    assert conds[0]["lastTransitionTime"] == "t0" and conds[0]["lastUpdateTime"] == "t1"
    assert not du.set_deployment_condition(conds, du.new_condition("Progressing", "True", du.RS_UPDATED, "c", "t2"))


def test_proportional_scaling_fraction():
    # a deployment of 10 (+3 surge, annotated max 13) scaled to 20 (+5 surge = 25):
    dep = d(20, surge="25%")
    old = rs(6, name="a")
    old["metadata"]["annotations"] = {du.MAX_REPLICAS: "13"}
    # 6 * 25 / 13 = 11.54 -> 12, i.e. +6 of the 12 to add
    assert du.proportion(old, dep, 12, 0) == 6


def test_deployment_timed_out():
    from datetime import UTC, datetime
    dep = d(3)
    dep["spec"]["progressDeadlineSeconds"] = 60
    status = {"conditions": [du.new_condition("Progressing", "True", du.RS_UPDATED, "m", "2026-01-01T00:00:00Z")]}
    assert not du.deployment_timed_out(dep, status, datetime(2026, 1, 1, 0, 0, 59, tzinfo=UTC))
    assert du.deployment_timed_out(dep, status, datetime(2026, 1, 1, 0, 1, 1, tzinfo=UTC))
