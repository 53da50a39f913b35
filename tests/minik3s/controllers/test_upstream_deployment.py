"""Upstream's Deployment controller tables, ported: pkg/controller/deployment/util/
deployment_util_test.go, rolling_test.go, sync_test.go (TestScale, cleanupDeployment and its
order), recreate_test.go and progress_test.go (Kubernetes v1.33 line; the stored copies read
were the apps/v1 + ktesting files, some a little newer than v1.33, noted where it matters).

How they are driven here:
  * deployment_util's tables call `minik3s.controllers.deployment_util` with the JSON shapes of
    upstream's Go fixtures (generateDeployment, generateRS, generatePodTemplateSpec).
  * the controller's tables (rolling, sync, recreate, progress) run the `DeploymentController`
    methods upstream's tests call (reconcileNewReplicaSet -> `_reconcile_new`, scale ->
    `_scale`, syncRolloutStatus -> `_sync_rollout_status`, ...) on the real in-process API
    (`real_api`: ApiCore + informers on a FakeClock). ReplicaSets are stored through the API
    (so they get a valid selector and template, which upstream's bare fixtures lack; creation
    order comes from advancing the fake clock between creates) and the results are read back
    from the API and from the recorded calls, as upstream reads its fake clientset's actions.
    Deployments upstream never stores (newDeployment with maxSurge = maxUnavailable = 0, which
    the API's validation refuses) are passed as dicts, as upstream passes them.

Not ported:
  * TestEqualIgnoreHashAndDroppedFields and FindNewReplicaSet's two dropped-field cases: newer
    than v1.33 (EqualIgnoreHashAndDroppedFields), and no field here is dropped by a feature gate.
  * GetTerminatingReplicaCountForReplicaSets (TestGetReplicaCountForReplicaSets' third column):
    the DeploymentReplicaSetTerminatingReplicas gate is alpha and off in v1.33.
  * TestRemoveCondition: no such helper here (conditions are filtered in place).
"""

from __future__ import annotations

import copy
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from minik3s.api.resources import DEPLOYMENTS, NAMESPACES, PODS, REPLICASETS
from minik3s.controllers import deployment_util as du
from minik3s.controllers.deployment import DeploymentController
from minik3s.utils.clock import FakeClock, rfc3339

NS = "default"
HASH = du.POD_TEMPLATE_HASH
MAX_INT32 = 2**31 - 1
NOW = datetime(2026, 1, 1, tzinfo=UTC)  # FakeClock's default start


# ------------------------------------------------------------------------------------------------
# fixtures shaped as upstream's helpers
# ------------------------------------------------------------------------------------------------


def generate_deployment(image: str) -> dict[str, Any]:
    """generateDeployment: one replica, labels {name: image}, one container."""
    labels = {"name": image}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": image, "annotations": {}},
            "spec": {"replicas": 1, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": image, "image": image,
                                                           "imagePullPolicy": "Always",
                                                           "terminationMessagePath": "/dev/termination-log"}],
                                           "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30,
                                           "restartPolicy": "Always", "securityContext": {},
                                           "enableServiceLinks": True}}}}


def generate_rs(d: dict[str, Any], *, created: str | None = None, hash_label: str | None = None,
                replicas: int = 0) -> dict[str, Any]:
    """generateRS: the Deployment's template; upstream shares the labels map between the RS and
    its template, so a pod-template-hash set on one is on both."""
    template = copy.deepcopy(d["spec"]["template"])
    if hash_label is not None:
        template["metadata"]["labels"][HASH] = hash_label
    m: dict[str, Any] = {"name": f"{d['metadata']['name']}-{uuid.uuid4().hex[:5]}", "uid": str(uuid.uuid4()),
                         "labels": template["metadata"]["labels"]}
    if created is not None:
        m["creationTimestamp"] = created
    return {"metadata": m, "spec": {"replicas": replicas, "template": template,
                                    "selector": {"matchLabels": template["metadata"]["labels"]}}}


def pod_template(name: str, node: str, annotations: dict[str, str], labels: dict[str, str]) -> dict[str, Any]:
    """generatePodTemplateSpec."""
    return {"metadata": {"name": name, "annotations": annotations, "labels": labels}, "spec": {"nodeName": node}}


def new_deployment(name: str = "foo", replicas: int = 1, rhl: int | None = None, surge: int | str | None = None,
                   unavail: int | str | None = None, selector: dict[str, str] | None = None) -> dict[str, Any]:
    """deployment_controller_test.go newDeployment: RollingUpdate with maxSurge and
    maxUnavailable 0 unless given."""
    spec: dict[str, Any] = {
        "strategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"maxUnavailable": 0 if unavail is None else unavail,
                                       "maxSurge": 0 if surge is None else surge}},
        "replicas": replicas, "selector": {"matchLabels": dict(selector or {})},
        "template": {"metadata": {"labels": dict(selector or {})},
                     "spec": {"containers": [{"name": "c", "image": "foo/bar"}]}}}
    if rhl is not None:
        spec["revisionHistoryLimit"] = rhl
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NS, "uid": str(uuid.uuid4()), "annotations": {}, "generation": 1},
            "spec": spec, "status": {}}


def rs_body(name: str, replicas: int, *, annotations: dict[str, str] | None = None,
            template_labels: dict[str, str] | None = None, finalizers: list[str] | None = None) -> dict[str, Any]:
    labels = template_labels or {"foo": "bar"}
    m: dict[str, Any] = {"name": name, "namespace": NS}
    if annotations:
        m["annotations"] = dict(annotations)
    if finalizers:
        m["finalizers"] = list(finalizers)
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": m,
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "c", "image": "foo/bar"}]}}}}


async def store_rs(c: Any, name: str, replicas: int, *, status_replicas: int | None = None, available: int = 0,
                   annotations: dict[str, str] | None = None, finalizers: list[str] | None = None,
                   template_labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A ReplicaSet stored through the API with the given status (observed, so cleanup may
    delete it); readyReplicas follow availableReplicas and status.replicas covers both, which
    the API's status validation requires."""
    created = await c.create(REPLICASETS, rs_body(name, replicas, annotations=annotations, finalizers=finalizers,
                                                  template_labels=template_labels), NS)
    sr = max(available, replicas if status_replicas is None else status_replicas)
    created["status"] = {"replicas": sr, "readyReplicas": available, "availableReplicas": available,
                         "observedGeneration": created["metadata"]["generation"]}
    return dict(await c.update_status(REPLICASETS, created))


def controller(c: Any, *, clock: Any = None) -> DeploymentController:
    return DeploymentController(c, c, clock=clock or c.clock)


def spec_replicas(c: Any, name: str) -> int:
    obj = c.obj(REPLICASETS, name, NS)
    assert obj is not None, name
    return int(obj["spec"]["replicas"])


def rs_updates(c: Any) -> list[tuple[Any, ...]]:
    return [x for x in c.calls if x[0] == "update" and x[1] == "replicasets"]


# ------------------------------------------------------------------------------------------------
# deployment_util_test.go
# ------------------------------------------------------------------------------------------------

_H = {HASH: "value-1", "something": "else"}


@pytest.mark.parametrize(("former", "latter", "expected"), [
    pytest.param(pod_template("foo", "foo-node", {}, dict(_H)), pod_template("foo", "foo-node", {}, dict(_H)), True,
                 id="Same spec, same labels"),
    pytest.param(pod_template("foo", "foo-node", {}, dict(_H)),
                 pod_template("foo", "foo-node", {}, {HASH: "value-2", "something": "else"}), True,
                 id="Same spec, only pod-template-hash label value is different"),
    pytest.param(pod_template("foo", "foo-node", {}, {"something": "else"}),
                 pod_template("foo", "foo-node", {}, {HASH: "value-2", "something": "else"}), True,
                 id="Same spec, the former doesn't have pod-template-hash label"),
    pytest.param(pod_template("foo", "foo-node", {}, {"something": "else"}),
                 pod_template("foo", "foo-node", {}, {HASH: "value-2"}), False,
                 id="Same spec, the label is different, the former doesn't have pod-template-hash label, "
                    "same number of labels"),
    pytest.param(pod_template("foo", "foo-node", {}, {HASH: "value-1"}),
                 pod_template("foo", "foo-node", {}, {"something": "else"}), False,
                 id="Same spec, the label is different, the latter doesn't have pod-template-hash label, "
                    "same number of labels"),
    pytest.param(pod_template("foo", "foo-node", {}, {HASH: "value-1"}),
                 pod_template("foo", "foo-node", {}, dict(_H)), False,
                 id="Same spec, the label is different, and the pod-template-hash label value is the same"),
    pytest.param(pod_template("foo", "foo-node", {"former": "value"}, dict(_H)),
                 pod_template("foo", "foo-node", {"latter": "value"}, dict(_H)), False,
                 id="Different spec, same labels"),
    pytest.param(pod_template("foo-1", "foo-node", {}, dict(_H)),
                 pod_template("foo-2", "foo-node", {}, {HASH: "value-2", "something": "else"}), False,
                 id="Different spec, different pod-template-hash label value"),
    pytest.param(pod_template("foo-1", "foo-node-1", {}, {"something": "else"}),
                 pod_template("foo-2", "foo-node-2", {}, {HASH: "value-2", "something": "else"}), False,
                 id="Different spec, the former doesn't have pod-template-hash label"),
    pytest.param(pod_template("foo", "foo-node-1", {}, {"something": "else"}),
                 pod_template("foo", "foo-node-2", {}, {"nothing": "else"}), False,
                 id="Different spec, different labels"),
])
def test_equal_ignore_hash(former: dict[str, Any], latter: dict[str, Any], expected: bool) -> None:
    for a, b in ((former, latter), (latter, former)):  # and in reverse order
        before = (copy.deepcopy(a), copy.deepcopy(b))
        assert du.template_equal_ignore_hash(a, b) is expected
        assert (a, b) == before  # the labels are not touched


def _find_fixtures() -> dict[str, Any]:
    now = rfc3339(NOW)
    later = rfc3339(NOW + timedelta(minutes=1))
    before = rfc3339(NOW - timedelta(minutes=1))
    d = generate_deployment("nginx")
    new_rs = generate_rs(d, created=later, hash_label="hash")
    new_rs_dup = generate_rs(d, created=now, hash_label="different-hash")
    old_d = generate_deployment("nginx")
    old_d["spec"]["template"]["spec"]["containers"][0]["name"] = "nginx-old-1"
    old_rs = generate_rs(old_d)
    return {"d": d, "new": new_rs, "dup": new_rs_dup, "old": old_rs, "before": before}


@pytest.mark.parametrize(("names", "expected"), [
    pytest.param(["new", "old"], "new",
                 id="Get new ReplicaSet with the same template as Deployment spec but different pod-template-hash value"),
    pytest.param(["new", "old", "dup"], "dup",
                 id="Get the oldest new ReplicaSet when there are more than one ReplicaSet with the same template"),
    pytest.param(["old"], None, id="Get nil new ReplicaSet"),
])
def test_find_new_replica_set(names: list[str], expected: str | None) -> None:
    f = _find_fixtures()
    got = du.find_new_rs(f["d"], [f[n] for n in names])
    assert got is (f[expected] if expected else None)


@pytest.mark.parametrize(("names", "expected", "expected_require"), [
    pytest.param(["new", "old"], ["old"], [], id="Get old ReplicaSets"),
    pytest.param(["old"], ["old"], [], id="Get old ReplicaSets with no new ReplicaSet"),
    pytest.param(["old", "new", "dup"], ["old", "new"], ["new"],
                 id="Get old ReplicaSets with two new ReplicaSets, only the oldest new ReplicaSet is seen as new "
                    "ReplicaSet"),
    pytest.param(["new"], [], [], id="Get empty old ReplicaSets"),
])
def test_find_old_replica_sets(names: list[str], expected: list[str], expected_require: list[str]) -> None:
    """FindOldReplicaSets as the controller splits them (`_get_all`): every ReplicaSet but the
    new one is old; the required ones are those with replicas (filter_active)."""
    f = _find_fixtures()
    f["new"]["spec"]["replicas"] = 1
    f["old"]["metadata"]["creationTimestamp"] = f["before"]
    rses = [f[n] for n in names]
    new = du.find_new_rs(f["d"], rses)
    old = sorted((rs for rs in rses if rs is not new), key=du.creation_key)
    assert old == sorted((f[n] for n in expected), key=du.creation_key)
    assert du.filter_active(old) == [f[n] for n in expected_require]


def _count_fixtures() -> dict[str, dict[str, Any]]:
    def rs(replicas: int, status: int) -> dict[str, Any]:
        return {"metadata": {"name": "x"}, "spec": {"replicas": replicas}, "status": {"replicas": status}}
    return {"rs1": rs(1, 2), "rs2": rs(2, 3), "rs3": rs(3, 0), "rs4": rs(1, 1)}


@pytest.mark.parametrize(("sets", "count", "actual"), [
    pytest.param(["rs1"], 1, 2, id="scaling down rs1"),
    pytest.param(["rs1", "rs2"], 3, 5, id="scaling down rs1 and rs2"),
    pytest.param(["rs3"], 3, 0, id="scaling up rs3"),
    pytest.param(["rs1", "rs2", "rs3"], 6, 5, id="scaling down rs1 and rs2 and scaling up rs3"),
    pytest.param(["rs4"], 1, 1, id="invalid/unknown terminating status for rs4"),
    pytest.param(["rs1", "rs2", "rs3", "rs4"], 7, 6,
                 id="invalid/unknown terminating status for rs4 with rs1, rs2 and rs3"),
])
def test_get_replica_count_for_replica_sets(sets: list[str], count: int, actual: int) -> None:
    f = _count_fixtures()
    rses = [f[n] for n in sets]
    assert du.sum_spec_replicas(rses) == count
    assert du.sum_status(rses, "replicas") == actual


@pytest.mark.parametrize(("surge", "unavail", "desired", "want"), [
    pytest.param("0%", "0%", 0, (0, 1), id="0"),
    pytest.param("39%", "39%", 10, (4, 3), id="1"),
    pytest.param("oops", "39%", 10, None, id="2"),
    pytest.param("55%", "urg", 10, None, id="3"),
    pytest.param(None, "39%", 10, (0, 3), id="4"),
    pytest.param("39%", None, 10, (4, 0), id="5"),
    pytest.param(None, None, 10, (0, 1), id="6"),
])
def test_resolve_fenceposts(surge: str | None, unavail: str | None, desired: int,
                            want: tuple[int, int] | None) -> None:
    if want is None:
        with pytest.raises(ValueError):
            du.resolve_fenceposts(surge, unavail, desired)
    else:
        assert du.resolve_fenceposts(surge, unavail, desired) == want


@pytest.mark.parametrize(("strategy", "dep_replicas", "new_rs_replicas", "surge", "expected"), [
    pytest.param("RollingUpdate", 1, 5, 1, 5, id="can not scale up - to newRSReplicas"),
    pytest.param("RollingUpdate", 6, 2, 10, 6, id="scale up - to depReplicas"),
    pytest.param("Recreate", 3, 1, 1, 3, id="recreate - to depReplicas"),
])
def test_new_rs_new_replicas(strategy: str, dep_replicas: int, new_rs_replicas: int, surge: int,
                             expected: int) -> None:
    d = generate_deployment("nginx")
    d["spec"]["replicas"] = dep_replicas
    d["spec"]["strategy"] = {"type": strategy, "rollingUpdate": {"maxUnavailable": 1, "maxSurge": surge}}
    new_rc = generate_rs(d, replicas=new_rs_replicas)
    rs5 = generate_rs(d, replicas=5)
    assert du.new_rs_new_replicas(d, [rs5], new_rc) == expected


def _cond(ctype: str, status: str, reason: str) -> dict[str, Any]:
    return {"type": ctype, "status": status, "reason": reason}


COND_PROGRESSING = _cond("Progressing", "False", "ForSomeReason")
COND_PROGRESSING2 = _cond("Progressing", "True", "BecauseItIs")
COND_AVAILABLE = _cond("Available", "True", "AwesomeController")


@pytest.mark.parametrize(("ctype", "expected"), [
    pytest.param("Available", True, id="condition exists"),
    pytest.param("ReplicaFailure", False, id="condition does not exist"),
])
def test_get_condition(ctype: str, expected: bool) -> None:
    status = {"conditions": [dict(COND_PROGRESSING), dict(COND_AVAILABLE)]}
    assert (du.condition(status, ctype) is not None) is expected


@pytest.mark.parametrize(("conditions", "cond", "expected"), [
    pytest.param([], COND_AVAILABLE, [COND_AVAILABLE], id="set for the first time"),
    pytest.param([COND_PROGRESSING], COND_AVAILABLE, [COND_PROGRESSING, COND_AVAILABLE], id="simple set"),
    pytest.param([COND_PROGRESSING], COND_PROGRESSING2, [COND_PROGRESSING2], id="overwrite"),
])
def test_set_condition(conditions: list[dict[str, Any]], cond: dict[str, Any],
                       expected: list[dict[str, Any]]) -> None:
    conds = [dict(c) for c in conditions]
    du.set_deployment_condition(conds, dict(cond))
    assert conds == expected


def _complete_d(desired: int, current: int, updated: int, available: int, unavail: int, surge: int) -> dict[str, Any]:
    return {"metadata": {}, "spec": {"replicas": desired, "strategy": {
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": unavail, "maxSurge": surge}}},
        "status": {"replicas": current, "updatedReplicas": updated, "availableReplicas": available}}


@pytest.mark.parametrize(("d", "expected"), [
    pytest.param(_complete_d(5, 5, 5, 4, 1, 0), False, id="not complete: min but not all pods become available"),
    pytest.param(_complete_d(5, 5, 5, 3, 1, 0), False, id="not complete: min availability is not honored"),
    pytest.param(_complete_d(5, 5, 5, 5, 0, 0), True, id="complete"),
    pytest.param(_complete_d(5, 5, 4, 5, 0, 0), False, id="not complete: all pods are available but not updated"),
    pytest.param(_complete_d(1, 2, 1, 1, 0, 1), False, id="not complete: still running old pods"),
    pytest.param(_complete_d(1, 1, 1, 0, 1, 1), False, id="not complete: one replica deployment never comes up"),
])
def test_deployment_complete(d: dict[str, Any], expected: bool) -> None:
    assert du.deployment_complete(d, d["status"]) is expected


def _st(current: int, updated: int, ready: int, available: int) -> dict[str, Any]:
    return {"replicas": current, "updatedReplicas": updated, "readyReplicas": ready, "availableReplicas": available}


@pytest.mark.parametrize(("old", "new", "expected"), [
    pytest.param(_st(10, 4, 4, 4), _st(10, 6, 4, 4), True, id="progressing: updated pods"),
    pytest.param(_st(10, 4, 4, 4), _st(10, 4, 4, 4), False, id="not progressing"),
    pytest.param(_st(10, 4, 6, 6), _st(8, 4, 6, 6), True, id="progressing: old pods removed"),
    pytest.param(_st(10, 7, 3, 3), _st(10, 6, 3, 3), False, id="not progressing: less new pods"),
    pytest.param(_st(10, 4, 7, 7), _st(8, 8, 5, 5), True, id="progressing: less overall but more new pods"),
    pytest.param(_st(10, 10, 9, 8), _st(10, 10, 10, 8), True, id="progressing: more ready pods"),
    pytest.param(_st(10, 10, 10, 9), _st(10, 10, 10, 10), True, id="progressing: more available pods"),
])
def test_deployment_progressing(old: dict[str, Any], new: dict[str, Any], expected: bool) -> None:
    assert du.deployment_progressing({"status": old}, new) is expected


def _timed_d(reason: str, pds: int | None, last_update: datetime | None) -> dict[str, Any]:
    cond: dict[str, Any] = {"type": "Progressing", "status": "True", "reason": reason}
    if last_update is not None:
        cond["lastUpdateTime"] = rfc3339(last_update)
    spec: dict[str, Any] = {} if pds is None else {"progressDeadlineSeconds": pds}
    return {"spec": spec, "status": {"conditions": [cond]}}


def _t(minute: int, sec: int) -> datetime:
    return datetime(2016, 1, 1, 0, minute, sec, tzinfo=UTC)


@pytest.mark.parametrize(("d", "now", "expected"), [
    pytest.param(_timed_d("", None, _t(1, 9)), _t(1, 20), False,
                 id="nil progressDeadlineSeconds specified - no timeout"),
    pytest.param(_timed_d("", MAX_INT32, _t(1, 9)), _t(1, 20), False,
                 id="infinite progressDeadlineSeconds specified - no timeout"),
    pytest.param(_timed_d("", 10, _t(1, 9)), _t(1, 20), True,
                 id="progressDeadlineSeconds: 10s, now - started => 00:01:20 - 00:01:09 => 11s"),
    pytest.param(_timed_d("", 10, _t(1, 11)), _t(1, 20), False,
                 id="progressDeadlineSeconds: 10s, now - started => 00:01:20 - 00:01:11 => 9s"),
    pytest.param(_timed_d(du.NEW_RS_AVAILABLE, None, None), _t(1, 20), False,
                 id="previous status was a complete deployment"),
])
def test_deployment_timed_out(d: dict[str, Any], now: datetime, expected: bool) -> None:
    assert du.deployment_timed_out(d, d["status"], now) is expected


def _mu_d(replicas: int, unavail: int | str, surge: int | str = 1) -> dict[str, Any]:
    return {"spec": {"replicas": replicas, "strategy": {
        "type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavail}}}}


@pytest.mark.parametrize(("d", "expected"), [
    pytest.param(_mu_d(10, 5), 5, id="maxUnavailable less than replicas"),
    pytest.param(_mu_d(10, 10), 10, id="maxUnavailable equal replicas"),
    pytest.param(_mu_d(5, 10), 5, id="maxUnavailable greater than replicas"),
    pytest.param(_mu_d(0, 10), 0, id="maxUnavailable with replicas is 0"),
    pytest.param({"spec": {"strategy": {"type": "Recreate"}}}, 0, id="maxUnavailable with Recreate deployment strategy"),
    pytest.param(_mu_d(10, "50%"), 5, id="maxUnavailable less than replicas with percents"),
    pytest.param(_mu_d(10, "100%"), 10, id="maxUnavailable equal replicas with percents"),
    pytest.param(_mu_d(5, "100%"), 5, id="maxUnavailable greater than replicas with percents"),
])
def test_max_unavailable(d: dict[str, Any], expected: int) -> None:
    assert du.max_unavailable(d) == expected


@pytest.mark.parametrize(("d", "expected"), [
    pytest.param(_mu_d(10, 5), 5, id="replicas greater than maxUnavailable"),
    pytest.param(_mu_d(10, 10), 0, id="replicas equal maxUnavailable"),
    pytest.param(_mu_d(5, 10), 0, id="replicas less than maxUnavailable"),
    pytest.param(_mu_d(0, 10), 0, id="replicas is 0"),
    pytest.param({"spec": {"replicas": 10, "strategy": {"type": "Recreate"}}}, 0,
                 id="minAvailable with Recreate deployment strategy"),
    pytest.param(_mu_d(10, "60%"), 4, id="replicas greater than maxUnavailable with percents"),
    pytest.param(_mu_d(10, "100%"), 0, id="replicas equal maxUnavailable with percents"),
    pytest.param(_mu_d(5, "100%"), 0, id="replicas less than maxUnavailable with percents"),
])
def test_min_available(d: dict[str, Any], expected: int) -> None:
    assert du.min_available(d) == expected


@pytest.mark.parametrize(("annotations", "value"), [
    pytest.param(None, None, id="invalid empty"),
    pytest.param({"test": "invalid", "foo": "2"}, None, id="invalid"),
    pytest.param({"test": "-1", "foo": "2"}, None, id="invalid negative "),
    pytest.param({"test": "0", "foo": "2"}, 0, id="valid zero"),
    pytest.param({"test": "13", "foo": "2"}, 13, id="valid"),
    pytest.param({"test": str(MAX_INT32), "foo": "2"}, MAX_INT32, id="valid max"),
    pytest.param({"test": str(MAX_INT32 + 1), "foo": "2"}, None, id="invalid max out of range"),
    pytest.param({"test": str(2**32), "foo": "2"}, None, id="invalid max out of range 2"),
])
def test_get_non_negative_int32_from_annotation(annotations: dict[str, str] | None, value: int | None) -> None:
    """getNonNegativeInt32FromAnnotation, read here through the two annotations it serves
    (desired-replicas and max-replicas); None is upstream's (0, invalid)."""
    for key, read in ((du.DESIRED_REPLICAS, du.desired_annotation), (du.MAX_REPLICAS, du.max_replicas_annotation)):
        ann = None if annotations is None else {(key if k == "test" else k): v for k, v in annotations.items()}
        rs = {"metadata": {"annotations": ann} if ann is not None else {}}
        assert read(rs) == value


def test_annotation_utils() -> None:
    d = generate_deployment("nginx")
    rs = generate_rs(d)
    d["metadata"]["annotations"][du.REVISION] = "1"
    # SetNewReplicaSetAnnotations: revisions 11 to 20, history kept within 5 characters
    for i in range(10, 20):
        nxt = str(i + 1)
        du.set_new_rs_annotations(d, rs, nxt, exists=True, rev_history_limit_in_chars=5)
        if i >= 12:
            assert rs["metadata"]["annotations"][du.REVISION_HISTORY] == f"{i - 1},{i}"
        assert rs["metadata"]["annotations"][du.REVISION] == nxt
    # SetReplicasAnnotations
    assert du.set_replicas_annotations(rs, 10, 11)
    assert rs["metadata"]["annotations"][du.DESIRED_REPLICAS] == "10"
    assert rs["metadata"]["annotations"][du.MAX_REPLICAS] == "11"
    # IsSaturated
    rs["metadata"]["annotations"][du.DESIRED_REPLICAS] = "1"
    rs["status"] = {"availableReplicas": 1}
    rs["spec"]["replicas"] = 1
    assert du.is_saturated(d, rs)


@pytest.mark.parametrize(("annotations", "expected"), [
    pytest.param(None, True, id="test Annotations nil"),
    pytest.param({du.DESIRED_REPLICAS: "8", du.MAX_REPLICAS: "20"}, True, id="test desiredReplicas update"),
    pytest.param({du.DESIRED_REPLICAS: "10", du.MAX_REPLICAS: "16"}, True, id="test maxReplicas update"),
    pytest.param({du.DESIRED_REPLICAS: "10", du.MAX_REPLICAS: "20"}, False, id="test needn't update"),
])
def test_replicas_annotations_need_update(annotations: dict[str, str] | None, expected: bool) -> None:
    rs: dict[str, Any] = {"metadata": {"name": "hello", "namespace": "test"},
                          "spec": {"selector": {"matchLabels": {"foo": "bar"}}}}
    if annotations is not None:
        rs["metadata"]["annotations"] = annotations
    assert du.replicas_annotations_need_update(rs, 10, 20) is expected
    assert du.set_replicas_annotations(copy.deepcopy(rs), 10, 20) is expected


@pytest.mark.parametrize(("i", "expected"), [
    pytest.param(0, ["test/deployment-0"], id="GetDeploymentsForReplicaSet for rs-0"),
    pytest.param(1, ["test/deployment-1"], id="GetDeploymentsForReplicaSet for rs-1"),
    pytest.param(2, ["test/deployment-2"], id="GetDeploymentsForReplicaSet for rs-2"),
    pytest.param(3, [], id="GetDeploymentsForReplicaSet for rs-3"),
    pytest.param(4, [], id="GetDeploymentsForReplicaSet for rs-4"),
])
async def test_get_deployments_for_replica_set(real_api: Any, i: int, expected: list[str]) -> None:
    """An orphan ReplicaSet's event queues the Deployments whose selector matches its labels
    (upstream's error for none found = nothing queued)."""
    c = real_api
    await c.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "test"}})
    for n in range(3):
        body = new_deployment(f"deployment-{n}", 1, surge=1, selector={"app": f"test-{n}"})
        del body["metadata"]["uid"], body["metadata"]["generation"], body["status"]
        body["metadata"]["namespace"] = "test"
        await c.create(DEPLOYMENTS, body, "test")
    dc = controller(c)
    await c.settle()
    while len(dc.queue):  # the Deployments' own add events
        dc.queue.done(await dc.queue.get())
    rs = {"metadata": {"namespace": "test", "name": f"test-replicaSet-{i}",
                       "labels": {"app": f"test-{i}", "label": f"label-{i}"}}}
    dc._rs_event(rs)
    got = []
    while len(dc.queue):
        got.append(await dc.queue.get())
    assert got == expected


def _fraction_d(replicas: int, status_replicas: int, surge: int) -> dict[str, Any]:
    d = generate_deployment("nginx")
    d["status"] = {"replicas": status_replicas}
    d["spec"]["replicas"] = replicas
    d["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": 1}}
    return d


@pytest.mark.parametrize(("replicas", "status_replicas", "surge", "rs_replicas", "annotations", "expected"), [
    pytest.param(0, 0, 0, 10, None, -10, id="empty deployment always scales to 0"),
    pytest.param(10, 0, 0, 5, None, 0,
                 id="unsynced deployment does not scale when max-replicas annotation is missing (removed by a 3rd party)"),
    pytest.param(10, 0, 0, 5, {du.MAX_REPLICAS: "0"}, 0,
                 id="unsynced deployment does not scale when max-replicas annotation is incorrectly set to 0 "
                    "(by a 3rd party)"),
    pytest.param(120, 100, 0, 50, None, 10,
                 id="scale up by 1/5 should increase RS replicas by 1/5 when max-replicas annotation is missing "
                    "(removed by a 3rd party)"),
    pytest.param(120, 100, 0, 50, {du.MAX_REPLICAS: "0"}, 10,
                 id="scale up by 1/5 should increase RS replicas by 1/5 when max-replicas annotation is incorrectly "
                    "set to 0 (by a 3rd party)"),
    pytest.param(120, 0, 0, 50, {du.MAX_REPLICAS: "100"}, 10, id="scale up by 1/5 should increase RS replicas by 1/5"),
    pytest.param(120, 0, 10, 50, {du.MAX_REPLICAS: "110"}, 9,
                 id="scale up with maxSurge by 1/5 should increase RS replicas approximately by 1/5"),
    pytest.param(10, 0, 0, 6, {du.MAX_REPLICAS: "12"}, -1, id="scale down by 1/6 should decrease RS replicas by 1/6"),
    pytest.param(100, 0, 10, 50, {du.MAX_REPLICAS: "130"}, -8,
                 id="scale down with maxSurge by 1/6 should decrease RS replicas approximately by 1/6"),
])
def test_get_replica_set_fraction(replicas: int, status_replicas: int, surge: int, rs_replicas: int,
                                  annotations: dict[str, str] | None, expected: int) -> None:
    d = _fraction_d(replicas, status_replicas, surge)
    rs = generate_rs(d, replicas=rs_replicas)
    if annotations is not None:
        rs["metadata"]["annotations"] = annotations
    assert du.replica_set_fraction(rs, d) == expected


# ------------------------------------------------------------------------------------------------
# rolling_test.go
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("dep_replicas", "surge", "old", "new", "scale_expected", "expected_new"), [
    pytest.param(10, 0, 10, 0, False, None, id="0"),  # should not scale up
    pytest.param(10, 2, 10, 0, True, 2, id="1"),
    pytest.param(10, 2, 5, 0, True, 7, id="2"),
    pytest.param(10, 2, 10, 2, False, None, id="3"),
    pytest.param(10, 2, 2, 11, True, 10, id="4"),  # should scale down
])
async def test_reconcile_new_replica_set(real_api: Any, dep_replicas: int, surge: int, old: int, new: int,
                                         scale_expected: bool, expected_new: int | None) -> None:
    c = real_api
    new_rs = await store_rs(c, "foo-v2", new)
    old_rs = await store_rs(c, "foo-v1", old)  # upstream names both "foo-v2": names are unique in the API
    d = new_deployment("foo", dep_replicas, surge=surge, unavail=0, selector={"foo": "bar"})
    dc = controller(c)
    c.calls.clear()
    scaled = await dc._reconcile_new(d, new_rs, [new_rs, old_rs])
    assert scaled is scale_expected
    if not scale_expected:
        assert rs_updates(c) == []
        return
    assert len(rs_updates(c)) == 1
    assert spec_replicas(c, "foo-v2") == expected_new


@pytest.mark.parametrize(("dep_replicas", "unavail", "old", "new", "ready_old", "ready_new", "scale_expected",
                          "expected_old"), [
    pytest.param(10, 0, 10, 0, 10, 0, True, 9, id="0"),
    pytest.param(10, 2, 10, 0, 10, 0, True, 8, id="1"),
    pytest.param(10, 2, 10, 0, 8, 0, True, 8, id="2"),  # unhealthy replicas of old RSes cleaned up
    pytest.param(10, 2, 10, 0, 9, 0, True, 8, id="3"),  # 1 unhealthy cleaned up, 1 ready scaled down
    pytest.param(10, 2, 8, 2, 8, 0, False, 8, id="4"),  # the new RS's unavailable pods hold the old back
])
async def test_reconcile_old_replica_sets(real_api: Any, dep_replicas: int, unavail: int, old: int, new: int,
                                          ready_old: int, ready_new: int, scale_expected: bool,
                                          expected_old: int) -> None:
    c = real_api
    old_rs = await store_rs(c, "foo-old", old, available=ready_old)
    new_rs = await store_rs(c, "foo-new", new, available=ready_new)
    d = new_deployment("foo", dep_replicas, surge=0, unavail=unavail, selector={"foo": "new"})
    dc = controller(c)
    scaled = await dc._reconcile_old(d, new_rs, [old_rs], [old_rs, new_rs])
    assert scaled is scale_expected
    assert spec_replicas(c, "foo-old") == expected_old


@pytest.mark.parametrize(("old", "ready", "max_cleanup", "expected"), [
    pytest.param(10, 8, 1, 1, id="0"),
    pytest.param(10, 8, 3, 2, id="1"),
    pytest.param(10, 8, 0, 0, id="2"),
    pytest.param(10, 10, 3, 0, id="3"),
])
async def test_cleanup_unhealthy_replicas(real_api: Any, old: int, ready: int, max_cleanup: int,
                                          expected: int) -> None:
    c = real_api
    old_rs = await store_rs(c, "foo-v2", old, available=ready)
    d = new_deployment("foo", 10, surge=2, unavail=2)
    dc = controller(c)
    _, cleaned = await dc._cleanup_unhealthy_replicas(d, [old_rs], max_cleanup)
    assert cleaned == expected
    assert spec_replicas(c, "foo-v2") == old - expected


@pytest.mark.parametrize(("dep_replicas", "unavail", "ready", "old", "scale_expected", "expected_old"), [
    pytest.param(10, 0, 10, 10, True, 9, id="0"),
    pytest.param(10, 2, 10, 10, True, 8, id="1"),
    pytest.param(10, 2, 8, 10, False, None, id="2"),
    pytest.param(10, 2, 10, 0, False, None, id="3"),
    pytest.param(10, 2, 1, 10, False, None, id="4"),
])
async def test_scale_down_old_replica_sets_for_rolling_update(real_api: Any, dep_replicas: int, unavail: int,
                                                              ready: int, old: int, scale_expected: bool,
                                                              expected_old: int | None) -> None:
    c = real_api
    old_rs = await store_rs(c, "foo-v2", old, available=ready)
    d = new_deployment("foo", dep_replicas, surge=0, unavail=unavail, selector={"foo": "bar"})
    dc = controller(c)
    c.calls.clear()
    scaled = await dc._scale_down_old_for_rolling(d, [old_rs], [old_rs])
    if not scale_expected:
        assert scaled == 0
        return
    assert scaled > 0
    assert len(rs_updates(c)) == 1
    assert spec_replicas(c, "foo-v2") == expected_old


# ------------------------------------------------------------------------------------------------
# sync_test.go
# ------------------------------------------------------------------------------------------------

NEW_T, OLD_T, OLDER_T = 2, 1, 0  # hours after the test's start: creation order newest > old > older


def _updated_template(replicas: int) -> dict[str, Any]:
    d = new_deployment("foo", replicas, selector={"foo": "bar"})
    d["spec"]["template"]["metadata"]["labels"]["another"] = "label"
    return d


SCALE_CASES = [
    # name, deployment, old deployment, new RS (name, size, t), old RSes, expected new, expected old,
    # desiredReplicasAnnotations, new RS available (every RS here has 0 available, as upstream's)
    ("normal scaling event: 10 -> 12", new_deployment("foo", 12), new_deployment("foo", 10),
     ("foo-v1", 10, NEW_T), [], 12, [], {}, None),
    ("normal scaling event: 10 -> 5", new_deployment("foo", 5), new_deployment("foo", 10),
     ("foo-v1", 10, NEW_T), [], 5, [], {}, None),
    ("proportional scaling: 5 -> 10", new_deployment("foo", 10), new_deployment("foo", 5),
     ("foo-v2", 2, NEW_T), [("foo-v1", 3, OLD_T)], 4, [6], {}, None),
    ("proportional scaling: 5 -> 3", new_deployment("foo", 3), new_deployment("foo", 5),
     ("foo-v2", 2, NEW_T), [("foo-v1", 3, OLD_T)], 1, [2], {}, None),
    ("proportional scaling: 9 -> 4", new_deployment("foo", 4), new_deployment("foo", 9),
     ("foo-v2", 8, NEW_T), [("foo-v1", 1, OLD_T)], 4, [0], {}, None),
    ("proportional scaling: 7 -> 10", new_deployment("foo", 10), new_deployment("foo", 7),
     ("foo-v3", 2, NEW_T), [("foo-v2", 3, OLD_T), ("foo-v1", 2, OLDER_T)], 3, [4, 3], {}, None),
    ("proportional scaling: 13 -> 8", new_deployment("foo", 8), new_deployment("foo", 13),
     ("foo-v3", 2, NEW_T), [("foo-v2", 8, OLD_T), ("foo-v1", 3, OLDER_T)], 1, [5, 2], {}, None),
    ("leftover distribution: 3 -> 4", new_deployment("foo", 4), new_deployment("foo", 3),
     ("foo-v3", 1, NEW_T), [("foo-v2", 1, OLD_T), ("foo-v1", 1, OLDER_T)], 2, [1, 1], {}, None),
    ("leftover distribution: 3 -> 2", new_deployment("foo", 2), new_deployment("foo", 3),
     ("foo-v3", 1, NEW_T), [("foo-v2", 1, OLD_T), ("foo-v1", 1, OLDER_T)], 1, [1, 0], {}, None),
    ("proportional scaling (no new rs): 4 -> 5", new_deployment("foo", 5), new_deployment("foo", 4),
     None, [("foo-v2", 2, OLD_T), ("foo-v1", 2, OLDER_T)], None, [3, 2], {}, None),
    ("proportional scaling: 6 -> 0", new_deployment("foo", 0), new_deployment("foo", 6),
     ("foo-v3", 3, NEW_T), [("foo-v2", 2, OLD_T), ("foo-v1", 1, OLDER_T)], 0, [0, 0], {}, None),
    ("proportional scaling: 0 -> 6", new_deployment("foo", 6), new_deployment("foo", 6),
     ("foo-v3", 0, NEW_T), [("foo-v2", 0, OLD_T), ("foo-v1", 0, OLDER_T)], 6, [0, 0], {}, None),
    ("failed rs update", new_deployment("foo", 5), new_deployment("foo", 5),
     ("foo-v3", 2, NEW_T), [("foo-v2", 1, OLD_T), ("foo-v1", 1, OLDER_T)], 2, [2, 1], {"foo-v2": 3}, None),
    ("deployment with surge pods", new_deployment("foo", 20, surge=2), new_deployment("foo", 10, surge=2),
     ("foo-v2", 6, NEW_T), [("foo-v1", 6, OLD_T)], 11, [11], {}, None),
    ("change both surge and size", new_deployment("foo", 50, surge=6), new_deployment("foo", 10, surge=3),
     ("foo-v2", 5, NEW_T), [("foo-v1", 8, OLD_T)], 22, [34], {}, None),
    ("change both size and template", _updated_template(14), new_deployment("foo", 10, selector={"foo": "bar"}),
     None, [("foo-v2", 7, NEW_T), ("foo-v1", 3, OLD_T)], None, [10, 4], {}, None),
    ("saturated but broken new replica set does not affect old pods",
     new_deployment("foo", 2, surge=1, unavail=1), new_deployment("foo", 2, surge=1, unavail=1),
     ("foo-v2", 2, NEW_T), [("foo-v1", 1, OLD_T)], 2, [1], {}, 0),
]


@pytest.mark.parametrize(("d", "old_d", "new", "olds", "expected_new", "expected_old", "desired", "new_available"),
                         [pytest.param(*case[1:], id=case[0]) for case in SCALE_CASES])
async def test_scale(real_api: Any, d: dict[str, Any], old_d: dict[str, Any], new: tuple[str, int, int] | None,
                     olds: list[tuple[str, int, int]], expected_new: int | None, expected_old: list[int],
                     desired: dict[str, int], new_available: int | None) -> None:
    """dc.scale: the ReplicaSets carry the replicas annotations of the Deployment before the
    scaling event (desired = old size, max = old size + old maxSurge)."""
    c = real_api
    specs = ([new] if new else []) + list(olds)
    stored: dict[str, dict[str, Any]] = {}
    start = c.clock.now()
    for name, size, t in sorted(specs, key=lambda s: s[2]):
        c.clock.advance((start + timedelta(hours=t) - c.clock.now()).total_seconds())
        want = desired.get(name, du.replicas_of(old_d))
        ann = {du.DESIRED_REPLICAS: str(want), du.MAX_REPLICAS: str(want + du.max_surge(old_d))}
        stored[name] = await store_rs(c, name, size, annotations=ann, available=0)
    dc = controller(c)
    new_rs = stored[new[0]] if new else None
    await dc._scale(copy.deepcopy(d), new_rs, [stored[o[0]] for o in olds])
    if new is not None and expected_new is not None:
        assert spec_replicas(c, new[0]) == expected_new
    assert [spec_replicas(c, o[0]) for o in olds] == expected_old


CLEANUP_CASES = [
    ([("foo-1", 0, 0), ("foo-2", 0, 0), ("foo-3", 0, 0)], 1, 2),
    ([("foo-1", 0, 0), ("foo-2", 0, 1), ("foo-3", 1, 0), ("foo-4", 1, 1)], 0, 1),  # only spec = status = 0
    ([("foo-1", 0, 0), ("foo-2", 0, 0)], 0, 2),
    ([("foo-1", 1, 1), ("foo-2", 1, 1)], 0, 0),
    ("already-deleted", 0, 0),
    ([("foo-1", 0, 0), ("foo-2", 0, 0), ("foo-3", 0, 0)], MAX_INT32, 0),  # unlimited revisionHistoryLimit
]


@pytest.mark.parametrize(("old", "limit", "expected_deletions"),
                         [pytest.param(*case, id=str(i)) for i, case in enumerate(CLEANUP_CASES)])
async def test_cleanup_deployment(real_api: Any, old: Any, limit: int, expected_deletions: int) -> None:
    c = real_api
    rses = []
    if old == "already-deleted":
        await store_rs(c, "foo-1", 0, status_replicas=0, finalizers=["test.minik3s.io/hold"])
        await c.delete(REPLICASETS, "foo-1", NS)
        rses.append(c.obj(REPLICASETS, "foo-1", NS))
        assert rses[0]["metadata"].get("deletionTimestamp")
    else:
        for name, spec, status in old:
            rses.append(await store_rs(c, name, spec, status_replicas=status))
    d = new_deployment("foo", 1, limit, selector={"foo": "bar"})
    dc = controller(c)
    c.calls.clear()
    await dc._cleanup(d, rses)
    assert len([x for x in c.calls if x[0] == "delete" and x[1] == "replicasets"]) == expected_deletions


ORDER_CASES = [
    ([("foo-1", 0, "1"), ("foo-2", 0, "2")], 1, {"foo-1"}, "revision order: rs1 < rs2, delete rs1"),
    ([("foo-1", 0, "2"), ("foo-2", 0, "1")], 1, {"foo-2"}, "revision order: rs2 < rs1, delete rs2"),
    ([("foo-1", 0, "1"), ("foo-2", 0, "")], 1, {"foo-2"}, "rs1 has revision but rs2 doesn't have revision, delete rs2"),
    ([("foo-1", 0, ""), ("foo-2", 0, "2")], 1, {"foo-1"}, "rs1 doesn't have revision while rs2 has revision, delete rs1"),
    ([("foo-1", 1, "1"), ("foo-2", 0, "2"), ("foo-3", 0, "3")], 1, {"foo-2"},
     "revision order: rs1 < rs2 < r3, but rs1 has replicas, delete rs2"),
    ([("foo-1", 1, "1"), ("foo-2", 1, "2"), ("foo-3", 0, "3")], 1, set(),
     "revision order: rs1 < rs2 < r3, both rs1 && rs2 have replicas, don't delete"),
    ([("foo-1", 0, "3"), ("foo-2", 0, "1"), ("foo-3", 0, "4"), ("foo-4", 0, "2")], 2, {"foo-2", "foo-4"},
     "revision order: rs2 < rs4 < rs1 < rs3, delete rs2 && rs4"),
]


@pytest.mark.parametrize(("old", "limit", "expected"), [pytest.param(*case[:3], id=case[3]) for case in ORDER_CASES])
async def test_cleanup_deployment_order(real_api: Any, old: list[tuple[str, int, str]], limit: int,
                                        expected: set[str]) -> None:
    """Creation order rs1 < rs2 < rs3 < rs4, one minute apart."""
    c = real_api
    rses = []
    for name, replicas, revision in old:
        rses.append(await store_rs(c, name, replicas, annotations={du.REVISION: revision} if revision else None))
        c.clock.advance(60)
    d = new_deployment("foo", 1, limit, selector={"foo": "bar"})
    dc = controller(c)
    c.calls.clear()
    await dc._cleanup(d, rses)
    deleted = {x[2].split("/")[1] for x in c.calls if x[0] == "delete" and x[1] == "replicasets"}
    assert deleted == expected


# ------------------------------------------------------------------------------------------------
# recreate_test.go
# ------------------------------------------------------------------------------------------------


async def test_scale_down_old_replica_sets(real_api: Any) -> None:
    c = real_api
    d = new_deployment("foo", 3, selector={"foo": "bar"})
    old = [await store_rs(c, "foo-0", 3)]
    dc = controller(c)
    assert await dc._scale_down_old_for_recreate(d, old)
    assert spec_replicas(c, "foo-0") == 0


OLD_PODS_CASES = [
    # name, old RSes (name, spec, status replicas), pods per RS name (phases; None = as created), expected
    ("no old RSs", [], {}, False),
    ("old RSs with running pods", [("foo-some-uid", 0, 0), ("foo-other-uid", 0, 0)],
     {"foo-some-uid": [None, None], "foo-other-uid": [None, None]}, True),
    ("old RSs without pods but with non-zero status replicas", [("rs-1", 0, 1)], {}, True),
    ("old RSs without pods or non-zero status replicas", [("rs-1", 0, 0)], {}, False),
    ("old RSs with zero status replicas but pods in terminal state are present", [("rs-1", 0, 0)],
     {"rs-1": ["Failed", "Succeeded"]}, False),
    ("old RSs with zero status replicas but pod in unknown phase present", [("rs-1", 0, 0)],
     {"rs-1": ["Unknown"]}, True),
    ("old RSs with zero status replicas with pending pod present", [("rs-1", 0, 0)], {"rs-1": ["Pending"]}, True),
    ("old RSs with zero status replicas with running pod present", [("rs-1", 0, 0)], {"rs-1": ["Running"]}, True),
    ("old RSs with zero status replicas but pods in terminal state and pending are present",
     [("rs-1", 0, 0), ("rs-2", 0, 0), ("rs-3", 0, 0)],
     {"rs-1": ["Failed", "Succeeded"], "rs-2": [], "rs-3": ["Pending"]}, True),
]


@pytest.mark.parametrize(("old", "pods", "expected"), [pytest.param(*case[1:], id=case[0]) for case in OLD_PODS_CASES])
async def test_old_pods_running(real_api: Any, old: list[tuple[str, int, int]], pods: dict[str, list[str | None]],
                                expected: bool) -> None:
    """oldPodsRunning: upstream's podMap (pods by ReplicaSet uid) is the pods stored here with a
    controller reference to the old ReplicaSet they are listed under."""
    c = real_api
    rses = {}
    for name, spec, status in old:
        rses[name] = await store_rs(c, name, spec, status_replicas=status)
    for rs_name, phases in pods.items():
        rs = rses[rs_name]
        for i, phase in enumerate(phases):
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": f"{rs_name}-{i}", "namespace": NS, "ownerReferences": [{
                       "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs_name,
                       "uid": rs["metadata"]["uid"], "controller": True}]},
                   "spec": {"containers": [{"name": "c", "image": "foo/bar"}]}}
            created = await c.create(PODS, pod, NS)
            if phase is not None:
                created["status"] = {"phase": phase}
                await c.update_status(PODS, created)
    dc = controller(c)
    await c.settle()
    assert dc._old_pods_running(list(rses.values())) is expected


# ------------------------------------------------------------------------------------------------
# progress_test.go
# ------------------------------------------------------------------------------------------------

TEST_TIME = "2017-02-15T18:49:00Z"


def current_deployment(pds: int | None, replicas: int, status_replicas: int, updated: int, available: int,
                       conditions: list[dict[str, Any]] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": replicas, "strategy": {"type": "Recreate"}}
    if pds is not None:
        spec["progressDeadlineSeconds"] = pds
    status: dict[str, Any] = {"replicas": status_replicas, "updatedReplicas": updated,
                              "availableReplicas": available}
    if conditions is not None:
        status["conditions"] = [dict(x) for x in conditions]
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "progress-test", "namespace": NS},
            "spec": spec, "status": status}


FAILED = [{"type": "Progressing", "status": "False", "reason": du.TIMED_OUT}]
STUCK = [{"type": "Progressing", "status": "True", "lastUpdateTime": TEST_TIME}]


def _at(h: int, m: int, s: int, us: int = 0) -> datetime:
    return datetime(2017, 2, 15, h, m, s, us, tzinfo=UTC)


@pytest.mark.parametrize(("d", "status", "now", "expected"), [
    pytest.param(current_deployment(None, 4, 3, 3, 2, None), (3, 3, 2), None, -1,
                 id="nil progressDeadlineSeconds specified"),
    pytest.param(current_deployment(MAX_INT32, 4, 3, 3, 2, None), (3, 3, 2), None, -1,
                 id="infinite progressDeadlineSeconds specified"),
    pytest.param(current_deployment(60, 4, 3, 3, 2, None), (3, 3, 2), None, -1, id="no progressing condition found"),
    pytest.param(current_deployment(60, 3, 3, 3, 3, None), (3, 3, 3), None, -1,
                 id="complete deployment does not need to be requeued"),
    pytest.param(current_deployment(60, 3, 3, 3, 0, FAILED), (3, 3, 0), None, -1,
                 id="already failed deployment does not need to be requeued"),
    pytest.param(current_deployment(60, 3, 3, 3, 1, STUCK), (3, 3, 1), _at(18, 49, 30), 30,
                 id="stuck deployment - 30s"),
    pytest.param(current_deployment(60, 3, 3, 3, 1, STUCK), (3, 3, 1), _at(18, 49, 59), 1,
                 id="stuck deployment - 1s"),
    pytest.param(current_deployment(60, 3, 3, 3, 1, STUCK), (3, 3, 1), _at(18, 49, 59, 1), 0,
                 id="failed deployment - less than a second => now"),  # 1 ns upstream, 1 us here
    pytest.param(current_deployment(60, 3, 3, 3, 1, STUCK), (3, 3, 1), _at(18, 50, 0), 0,
                 id="failed deployment - now"),
    pytest.param(current_deployment(60, 3, 3, 3, 1, STUCK), (3, 3, 1), _at(18, 50, 1), 0,
                 id="failed deployment - 1s after deadline"),
    pytest.param(current_deployment(60, 3, 3, 3, 1, STUCK), (3, 3, 1), _at(18, 51, 0), 0,
                 id="failed deployment - 60s after deadline"),
])
async def test_requeue_stuck_deployment(real_api: Any, d: dict[str, Any], status: tuple[int, int, int],
                                        now: datetime | None, expected: float) -> None:
    d["metadata"]["generation"] = 0
    dc = controller(real_api, clock=FakeClock(now or _at(18, 49, 0)))
    new_status = {"replicas": status[0], "updatedReplicas": status[1], "availableReplicas": status[2]}
    got = dc.requeue_stuck_deployment(d, new_status)
    assert got == pytest.approx(expected, abs=1e-5)
    assert (len(dc.queue) > 0 or bool(dc.queue._timers)) is (expected >= 0)


NEW_RS_AVAILABLE = {"type": "Progressing", "status": "True", "reason": du.NEW_RS_AVAILABLE,
                    "lastUpdateTime": TEST_TIME, "lastTransitionTime": TEST_TIME}
RS_UPDATED = {"type": "Progressing", "status": "True", "reason": du.RS_UPDATED,
              "lastUpdateTime": TEST_TIME, "lastTransitionTime": TEST_TIME}
FAILED_TIMED_OUT = {"type": "Progressing", "status": "False", "reason": du.TIMED_OUT}


def rs_available(name: str, spec: int, status: int, available: int) -> dict[str, Any]:
    """newRSWithAvailable."""
    return {"metadata": {"name": name, "namespace": NS}, "spec": {"replicas": spec},
            "status": {"replicas": status, "availableReplicas": available}}


SYNC_ROLLOUT_CASES = [
    ("General: remove Progressing condition and do not estimate progress if deployment has no Progress Deadline",
     (None, 3, 2, 2, 2, [RS_UPDATED]), [rs_available("bar", 0, 1, 1)], rs_available("foo", 3, 2, 2),
     None, False, False),
    ("General: do not estimate progress of deployment with only one active ReplicaSet",
     (60, 3, 3, 3, 3, [NEW_RS_AVAILABLE]), [rs_available("bar", 3, 3, 3)], None,
     ("True", du.NEW_RS_AVAILABLE), True, True),
    ("DeploymentProgressing: dont update lastTransitionTime if deployment already has Progressing=True",
     (60, 3, 2, 2, 2, [RS_UPDATED]), [rs_available("bar", 0, 1, 1)], rs_available("foo", 3, 2, 2),
     ("True", du.RS_UPDATED), False, True),
    ("DeploymentProgressing: update everything if deployment has Progressing=False",
     (60, 3, 2, 2, 2, [FAILED_TIMED_OUT]), [rs_available("bar", 0, 1, 1)], rs_available("foo", 3, 2, 2),
     ("True", du.RS_UPDATED), False, False),
    ("DeploymentProgressing: create Progressing condition if it does not exist",
     (60, 3, 2, 2, 2, []), [rs_available("bar", 0, 1, 1)], rs_available("foo", 3, 2, 2),
     ("True", du.RS_UPDATED), False, False),
    ("DeploymentComplete: dont update lastTransitionTime if deployment already has Progressing=True",
     (60, 3, 3, 3, 3, [RS_UPDATED]), [], rs_available("foo", 3, 3, 3), ("True", du.NEW_RS_AVAILABLE), False, True),
    ("DeploymentComplete: update everything if deployment has Progressing=False",
     (60, 3, 3, 3, 3, [FAILED_TIMED_OUT]), [], rs_available("foo", 3, 3, 3),
     ("True", du.NEW_RS_AVAILABLE), False, False),
    ("DeploymentComplete: create Progressing condition if it does not exist",
     (60, 3, 3, 3, 3, []), [], rs_available("foo", 3, 3, 3), ("True", du.NEW_RS_AVAILABLE), False, False),
    ("DeploymentComplete: defend against NPE when newRS=nil",
     (60, 0, 3, 3, 3, [RS_UPDATED]), [rs_available("foo", 0, 0, 0)], None,
     ("True", du.NEW_RS_AVAILABLE), False, False),
    ("DeploymentTimedOut: update status if rollout exceeds Progress Deadline",
     (60, 3, 2, 2, 2, [RS_UPDATED]), [], rs_available("foo", 3, 2, 2), ("False", du.TIMED_OUT), False, False),
    ("DeploymentTimedOut: do not update status if deployment has existing timedOut condition",
     (60, 3, 2, 2, 2, [FAILED_TIMED_OUT]), [], rs_available("foo", 3, 2, 2), ("False", du.TIMED_OUT), True, True),
]


@pytest.mark.parametrize(("cur", "all_rses", "new_rs", "want", "same_update", "same_transition"),
                         [pytest.param(*case[1:], id=case[0]) for case in SYNC_ROLLOUT_CASES])
async def test_sync_rollout_status(real_api: Any, cur: tuple[Any, ...], all_rses: list[dict[str, Any]],
                                   new_rs: dict[str, Any] | None, want: tuple[str, str] | None,
                                   same_update: bool, same_transition: bool) -> None:
    """The Deployment is stored (a selector and template added; an unset deadline is dropped
    from the object handed to the controller, the API would default it), its status set as the
    case's; the Progressing condition is read back from the API."""
    c = real_api
    pds, replicas, status_replicas, updated, available, conditions = cur
    body = current_deployment(pds, replicas, status_replicas, updated, available, conditions)
    status = body.pop("status")
    body["spec"].update(selector={"matchLabels": {"app": "progress"}},
                        template={"metadata": {"labels": {"app": "progress"}},
                                  "spec": {"containers": [{"name": "c", "image": "foo/bar"}]}})
    stored = await c.create(DEPLOYMENTS, body, NS)
    stored["status"] = status
    d = dict(await c.update_status(DEPLOYMENTS, stored))
    if pds is None:
        d["spec"] = {k: v for k, v in d["spec"].items() if k != "progressDeadlineSeconds"}
    dc = controller(c)
    rses = [copy.deepcopy(x) for x in all_rses] + ([copy.deepcopy(new_rs)] if new_rs else [])
    await dc._sync_rollout_status(d, rses, copy.deepcopy(new_rs) if new_rs else None)
    got = c.obj(DEPLOYMENTS, "progress-test", NS)
    assert got is not None
    cond = du.condition(got.get("status") or {}, "Progressing")
    if want is None:
        assert cond is None
        return
    assert cond is not None
    assert (cond["status"], cond["reason"]) == want
    if same_update:
        assert cond.get("lastUpdateTime") == next(x for x in conditions if x["type"] == "Progressing").get(
            "lastUpdateTime")
    if same_transition:
        assert cond.get("lastTransitionTime") == next(x for x in conditions if x["type"] == "Progressing").get(
            "lastTransitionTime")
