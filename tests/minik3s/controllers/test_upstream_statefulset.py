"""Upstream's StatefulSet controller tables, ported: pkg/controller/statefulset/
stateful_set_utils_test.go and the table-shaped parts of stateful_set_control_test.go
(Kubernetes v1.33 line: claims controlled by the set or the condemned pod, start ordinals,
minReadySeconds, Parallel pods in slow-start batches).

How they are driven here:
  * the utils tables call the module's pure helpers (identity, storage, claim ownership);
  * the control tables run `StatefulSetController.sync` step by step against the real
    in-process API (`real_api`, fake clock), the way upstream drives UpdateStatefulSet through
    its fake object manager: the test moves pods forward (Running and Ready), emulates the
    kubelet removing terminating pods and the garbage collector removing claims owned by
    deleted pods, and checks upstream's invariants after every pass. Pods are bound to a node
    so a deletion is graceful and a terminating pod can be observed, as upstream's
    `addTerminatingPod` does. Write failures are injected per verb and resource with
    upstream's `after` counting (the request numbered `after` or later fails once).
    Upstream picks a random pod to move forward; here it is always the lowest ordinal that is
    not yet Running and Ready (the same transitions, deterministic).

Not ported (reason):
  * the StatefulSetAutoDeletePVCDisabled variants: minik3s has no feature gates (the GA
    behaviour is always on);
  * UpdatePodFailure: it renames a pod inside the informer cache ("goo-0"), which a real
    API cannot do;
  * TestGetStatefulSetMaxUnavailable, TestStatefulSetControlRollingUpdateWithMaxUnavailable*,
    TestStatefulSetControlRollingUpdateWithMaxUnavailableInOrderedModeVerifyInvariant: the
    alpha MaxUnavailableStatefulSet gate is off in v1.33 (spec.updateStrategy.rollingUpdate.
    maxUnavailable is ignored);
  * TestOverlappingStatefulSets, TestAscendingOrdinal, TestOwnerRefsChanged,
    TestGetClaimPodName: Go sort.Interface plumbing and test-only helpers;
  * TestParallelScale's 501- and 1000-pod cases (throughput; the 30- and 10-pod cases are
    ported).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest

from minik3s.api.errors import ApiError, ConflictError, InternalError, NotFoundError
from minik3s.api.resources import (
    CONTROLLERREVISIONS,
    NODES,
    PERSISTENTVOLUMECLAIMS,
    PODS,
    STATEFULSETS,
    ResourceInfo,
)
from minik3s.controllers.history import (
    CONTROLLER_REVISION_HASH,
    ensure_revision,
    owned_revisions,
    revision_data,
    revision_hash,
)
from minik3s.controllers.statefulset import (
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    StatefulSetController,
    apply_revision,
    get_ordinal,
    has_non_controller_owner,
    has_owner_ref,
    has_stale_owner_ref,
    has_unexpected_controller,
    identity_matches,
    is_claim_owner_up_to_date,
    is_member_of,
    is_running_and_ready,
    matches_ref,
    new_pod,
    parent_name_and_ordinal,
    persistent_volume_claims,
    pod_in_ordinal_range,
    pod_revision,
    retention_policy,
    storage_matches,
    update_claim_owner_refs,
    update_identity,
    update_storage,
)
from minik3s.utils.clock import rfc3339

NS = "default"
RETAIN, DELETE = "Retain", "Delete"
POLICIES = {
    "Retain": {"whenScaled": RETAIN, "whenDeleted": RETAIN},
    "ScaleDownOnly": {"whenScaled": DELETE, "whenDeleted": RETAIN},
    "SetDeleteOnly": {"whenScaled": RETAIN, "whenDeleted": DELETE},
    "Delete": {"whenScaled": DELETE, "whenDeleted": DELETE},
    "nullPolicy": None,
}


# =============================================================================================
# objects (upstream newStatefulSet / newStatefulSetWithVolumes / newPVC)


def new_pvc(name: str) -> dict:
    return {"metadata": {"namespace": NS, "name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1"}}}}


def new_statefulset(replicas: int, name: str = "foo", *, mount_claim: bool = False) -> dict:
    """newStatefulSet: claim template `datadir`, a hostPath volume `home`, selector foo=bar,
    service governingsvc, RollingUpdate, Retain/Retain, revisionHistoryLimit 2.

    Upstream's container also mounts `datadir` (the claim template); minik3s' API rejects that
    mount (see test_claim_template_mount_is_accepted), so it is left out unless asked for."""
    mounts = [{"name": "home", "mountPath": "/home"}]
    if mount_claim:
        mounts.insert(0, {"name": "datadir", "mountPath": "/tmp/zookeeper"})
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NS, "uid": "test"},
        "spec": {
            "selector": {"matchLabels": {"foo": "bar"}},
            "replicas": replicas,
            "template": {"metadata": {"labels": {"foo": "bar"}}, "spec": {
                "containers": [{"name": "nginx", "image": "nginx", "volumeMounts": mounts}],
                "volumes": [{"name": "home", "hostPath": {"path": "/tmp/home"}}]}},
            "volumeClaimTemplates": [new_pvc("datadir")],
            "serviceName": "governingsvc",
            "updateStrategy": {"type": "RollingUpdate"},
            "persistentVolumeClaimRetentionPolicy": {"whenScaled": RETAIN, "whenDeleted": RETAIN},
            "revisionHistoryLimit": 2,
        },
    }


def revision_for(sts: dict, number: int, collisions: int = 0) -> dict:
    """newRevision: the set's template patch, named by its hash."""
    data = revision_data(sts)
    h = revision_hash(data, collisions)
    labels = dict(sts["spec"]["template"]["metadata"].get("labels") or {})
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": f"{sts['metadata']['name']}-{h}", "namespace": NS,
                         "labels": {**labels, CONTROLLER_REVISION_HASH: h},
                         "annotations": dict(sts["metadata"].get("annotations") or {})},
            "data": data, "revision": number}


def new_statefulset_pod(sts: dict, ordinal: int) -> dict:
    """newStatefulSetPod: the set's own template at ordinal `ordinal`."""
    return new_pod(sts, {"metadata": {"name": "rev"}, "data": revision_data(sts)}, ordinal)


# =============================================================================================
# stateful_set_utils_test.go


def test_get_parent_name_and_ordinal():
    sts = new_statefulset(3)
    pod = new_statefulset_pod(sts, 1)
    assert parent_name_and_ordinal(pod) == ("foo", 1)
    pod["metadata"]["name"] = "1-bar"
    assert parent_name_and_ordinal(pod) == ("", -1)


def test_is_member_of():
    sts, sts2 = new_statefulset(3), new_statefulset(3)
    sts2["metadata"]["name"] = "foo2"
    pod = new_statefulset_pod(sts, 1)
    assert is_member_of(sts, pod)
    assert not is_member_of(sts2, pod)


@pytest.mark.parametrize("mutate,ok", [
    (lambda p: None, True),
    (lambda p: p["metadata"].update(name="foo"), False),
    (lambda p: p["metadata"].update(namespace=""), False),
    (lambda p: p["metadata"]["labels"].pop(POD_NAME_LABEL), False),
], ids=["fresh pod", "wrong name", "wrong namespace", "no pod-name label"])
def test_identity_matches(mutate, ok):
    sts = new_statefulset(3)
    pod = new_statefulset_pod(sts, 1)
    mutate(pod)
    assert identity_matches(sts, pod) is ok


def _no_volumes(p: dict) -> None:
    p["spec"]["volumes"] = None


def _no_claim_sources(p: dict) -> None:
    for v in p["spec"]["volumes"]:
        v.pop("persistentVolumeClaim", None)


def _wrong_claim_names(p: dict) -> None:
    for v in p["spec"]["volumes"]:
        if "persistentVolumeClaim" in v:
            v["persistentVolumeClaim"]["claimName"] = "foo"


@pytest.mark.parametrize("mutate,ok", [
    (lambda p: None, True),
    (_no_volumes, False),
    (_no_claim_sources, False),
    (_wrong_claim_names, False),
    (lambda p: p["metadata"].update(name="bar"), False),
], ids=["fresh pod", "no volumes", "no claim sources", "wrong claim names", "no ordinal"])
def test_storage_matches(mutate, ok):
    sts = new_statefulset(3)
    pod = new_statefulset_pod(sts, 1)
    mutate(pod)
    assert storage_matches(sts, pod) is ok


def test_update_identity():
    sts = new_statefulset(3)
    pod = new_statefulset_pod(sts, 1)
    assert identity_matches(sts, pod)
    pod["metadata"]["namespace"] = ""
    assert not identity_matches(sts, pod)
    update_identity(sts, pod)
    assert identity_matches(sts, pod)
    del pod["metadata"]["labels"][POD_NAME_LABEL]
    update_identity(sts, pod)
    assert identity_matches(sts, pod)
    assert pod["metadata"]["labels"][POD_INDEX_LABEL] == "1"


@pytest.mark.parametrize("mutate", [_no_volumes, _no_claim_sources, _wrong_claim_names],
                         ids=["recreate volumes", "recreate claims", "recreate claim names"])
def test_update_storage(mutate):
    sts = new_statefulset(3)
    pod = new_statefulset_pod(sts, 1)
    assert storage_matches(sts, pod)
    mutate(pod)
    assert not storage_matches(sts, pod)
    update_storage(sts, pod)
    assert storage_matches(sts, pod)


def test_get_persistent_volume_claim_retention_policy():
    sts: dict = {"spec": {"persistentVolumeClaimRetentionPolicy": {"whenScaled": RETAIN, "whenDeleted": RETAIN}}}
    assert retention_policy(sts) == {"whenScaled": RETAIN, "whenDeleted": RETAIN}
    sts["spec"]["persistentVolumeClaimRetentionPolicy"] = {"whenScaled": DELETE, "whenDeleted": RETAIN}
    assert retention_policy(sts) == {"whenScaled": DELETE, "whenDeleted": RETAIN}
    assert retention_policy({"spec": {}}) == {"whenScaled": RETAIN, "whenDeleted": RETAIN}


def ref(api_version: str, kind: str, name: str, uid: str = "", controller: bool | None = None) -> dict:
    r: dict = {"apiVersion": api_version, "kind": kind, "name": name}
    if uid:
        r["uid"] = uid
    if controller is not None:
        r["controller"] = controller
    return r


def obj(name: str, uid: str, refs: list[dict] | None = None) -> dict:
    m: dict = {"name": name, "uid": uid}
    if refs is not None:
        m["ownerReferences"] = refs
    return {"metadata": m}


def set_obj(name: str, uid: str, *, replicas: int = 1, policy: dict | None = None) -> dict:
    spec: dict = {"replicas": replicas}
    if policy is not None:
        spec["persistentVolumeClaimRetentionPolicy"] = policy
    return {"metadata": {"name": name, "uid": uid}, "spec": spec}


def controller_ref_to(owner: dict, api_version: str, kind: str) -> dict:
    return {"apiVersion": api_version, "kind": kind, "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def add_controller_ref(refs: list[dict], owner: dict, api_version: str, kind: str) -> list[dict]:
    if any(r.get("uid") == owner["metadata"]["uid"] for r in refs):
        return refs
    return [*refs, controller_ref_to(owner, api_version, kind)]


@pytest.mark.parametrize("r,o,match", [
    (ref("v1", "Pod", "fred", "abc"), obj("fred", "abc"), True),
    (ref("v1", "Pod", "fred", "abc"), obj("fred", "not-matching"), True),
    (ref("v1", "Pod", "fred", "abc"), obj("joan", "abc"), False),
    (ref("beta2", "Pod", "fred", "abc"), obj("fred", "abc"), False),
], ids=["full match", "match without UID", "mismatch name", "wrong schema"])
def test_matches_ref(r, o, match):
    assert matches_ref(r, o, "v1", "Pod") is match


IS_UP_TO_DATE = [
    ("retain", RETAIN, RETAIN, False, False, 0, 0),
    ("on SS delete", RETAIN, DELETE, False, True, 0, 0),
    ("on scaledown only, condemned", DELETE, RETAIN, True, False, 2, 2),
    ("on scaledown only, remains", DELETE, RETAIN, False, False, 2, 1),
    ("on both, condemned", DELETE, DELETE, True, False, 2, 2),
    ("on both, remains", DELETE, DELETE, False, True, 2, 1),
]


@pytest.mark.parametrize("name,scaled,deleted,needs_pod,needs_set,replicas,ordinal", IS_UP_TO_DATE,
                         ids=[c[0] for c in IS_UP_TO_DATE])
@pytest.mark.parametrize("others", [False, True], ids=["no-others", "others"])
@pytest.mark.parametrize("pod_ref", [False, True], ids=["no-podref", "podref"])
@pytest.mark.parametrize("set_ref", [False, True], ids=["no-setref", "setref"])
def test_is_claim_owner_up_to_date(name, scaled, deleted, needs_pod, needs_set, replicas, ordinal, others, pod_ref,
                                   set_ref):
    pod = obj(f"pod-{ordinal}", "pod-123")
    sts = set_obj("stateful-set", "ss-456", replicas=replicas, policy={"whenScaled": scaled, "whenDeleted": deleted})
    refs: list[dict] = []
    if pod_ref:
        refs = add_controller_ref(refs, pod, "v1", "Pod")
    if set_ref:
        refs = add_controller_ref(refs, sts, "apps/v1", "StatefulSet")
    if others:
        refs += [ref("v1", "Pod", "rand1", "rand1-uid"), ref("v1", "Pod", "rand2", "rand2-uid")]
    claim = obj("target-claim", "", refs)
    assert is_claim_owner_up_to_date(claim, sts, pod) is (pod_ref == needs_pod and set_ref == needs_set)


EDGE_CASES = [
    ("normal controller, pod", [ref("v1", "Pod", "pod-1", "pod-123", True)], DELETE, DELETE, True),
    ("non-controller causes policy mismatch, pod", [ref("v1", "Pod", "pod-1", "pod-123")], DELETE, DELETE, False),
    ("stale controller does not affect policy, pod", [ref("v1", "Pod", "pod-1", "pod-stale", True)], DELETE, DELETE,
     True),
    ("unexpected controller causes policy mismatch, pod",
     [ref("v1", "Pod", "pod-1", "pod-123", True), ref("v1", "Pod", "Random", "random", True)], DELETE, DELETE, False),
    ("normal controller, set", [ref("apps/v1", "StatefulSet", "stateful-set", "ss-456", True)], RETAIN, DELETE, True),
    ("non-controller causes policy mismatch, set", [ref("appsv1", "StatefulSet", "stateful-set", "ss-456")], RETAIN,
     DELETE, False),
    ("stale controller ignored, set", [ref("apps/v1", "StatefulSet", "stateful-set", "set-stale", True)], RETAIN,
     DELETE, True),
    ("unexpected controller causes policy mismatch, set",
     [ref("apps/v1", "StatefulSet", "stateful-set", "ss-456", True),
      ref("apps/v1", "StatefulSet", "Random", "random", True)], RETAIN, DELETE, False),
]


@pytest.mark.parametrize("name,refs,scaled,deleted,match", EDGE_CASES, ids=[c[0] for c in EDGE_CASES])
def test_claim_owner_up_to_date_edge_cases(name, refs, scaled, deleted, match):
    pod = obj("pod-1", "pod-123")
    sts = set_obj("stateful-set", "ss-456", replicas=1, policy={"whenScaled": scaled, "whenDeleted": deleted})
    assert is_claim_owner_up_to_date(obj("target-claim", "", refs), sts, pod) is match


UPDATE_OWNER = [
    ("retain", RETAIN, RETAIN, False, False, False, False),
    ("delete with set", RETAIN, DELETE, False, False, True, False),
    ("delete with scaledown, not condemned", DELETE, RETAIN, False, False, False, False),
    ("delete on scaledown, condemned", DELETE, RETAIN, True, True, False, False),
    ("delete on both, not condemned", DELETE, DELETE, False, False, True, False),
    ("delete on both, condemned", DELETE, DELETE, True, True, False, False),
    ("unexpected controller", DELETE, DELETE, True, False, False, True),
]


@pytest.mark.parametrize("name,scaled,deleted,condemned,needs_pod,needs_set,unexpected", UPDATE_OWNER,
                         ids=[c[0] for c in UPDATE_OWNER])
@pytest.mark.parametrize("variation", range(8))
def test_update_claim_owner_ref_for_set_and_pod(name, scaled, deleted, condemned, needs_pod, needs_set, unexpected,
                                                variation):
    has_pod_ref, has_set_ref, extra_owner = bool(variation & 1), bool(variation & 2), bool(variation & 3)
    sts = set_obj("ss", "ss-123", replicas=5, policy={"whenScaled": scaled, "whenDeleted": deleted})
    pod = obj("pod-8" if condemned else "pod-1", "pod-456")
    refs: list[dict] = []
    if has_pod_ref:
        refs = add_controller_ref(refs, pod, "v1", "Pod")
    if has_set_ref:
        refs = add_controller_ref(refs, sts, "apps/v1", "StatefulSet")
    if extra_owner:
        refs.append(ref("custom/v1", "random", "random", "abc"))
    if unexpected:
        refs.append(ref("custom/v1", "Unknown", "unknown", "xyz", True))
    claim = obj("", "", refs)
    update_claim_owner_refs(claim, sts, pod)

    def check(owner: dict) -> bool:
        for r in claim["metadata"]["ownerReferences"]:
            if r.get("uid") == owner["metadata"]["uid"]:
                return bool(r.get("controller"))
        return False

    assert check(pod) is needs_pod
    assert check(sts) is needs_set


def _kinds(refs: list[dict]) -> list[tuple[str, str, str]]:
    return sorted((r.get("apiVersion", ""), r.get("kind", ""), r.get("name", "")) for r in refs)


STS_CTRL = ref("apps/v1", "StatefulSet", "sts", "123", True)
CONTROLLER_REF = [
    ("set correctly", [STS_CTRL, ref("someone", "Else", "foo")], [STS_CTRL, ref("someone", "Else", "foo")]),
    ("missing controller", [ref("apps/v1", "StatefulSet", "sts", "123")], [STS_CTRL]),
    ("matching name but missing", [ref("someone", "else", "sts", "456")], [ref("someone", "else", "sts", "456"),
                                                                           STS_CTRL]),
    ("not present", [], [STS_CTRL]),
    ("controller, but no UID", [ref("apps/v1", "StatefulSet", "sts", "", True)], []),
    ("neither controller nor UID", [ref("apps/v1", "StatefulSet", "sts")], []),
]


@pytest.mark.parametrize("name,original,expected", CONTROLLER_REF, ids=[c[0] for c in CONTROLLER_REF])
def test_update_claim_controller_ref(name, original, expected):
    sts = set_obj("sts", "123", replicas=1, policy={"whenScaled": DELETE, "whenDeleted": DELETE})
    pod = obj("pod-0", "456")
    claim = obj("", "", copy.deepcopy(original))
    update_claim_owner_refs(claim, sts, pod)
    assert _kinds(claim["metadata"]["ownerReferences"]) == _kinds(expected)


@pytest.mark.parametrize("uid,has", [("123", True), ("456", True), ("789", True), ("012", False)])
def test_has_owner_ref(uid, has):
    target = obj("", "", [{"uid": "123", "controller": True}, {"uid": "456", "controller": False}, {"uid": "789"}])
    assert has_owner_ref(target, obj("", uid)) is has


UNEXPECTED = [
    ("custom controller", [ref("chipmunks/v1", "CustomController", "simon", "other-uid", True)], True),
    ("custom non-controller", [ref("chipmunks/v1", "CustomController", "simon", "other-uid", False)], False),
    ("custom unspecified controller", [ref("chipmunks/v1", "CustomController", "simon", "other-uid")], False),
    ("other pod controller", [ref("v1", "Pod", "simon", "other-uid", True)], True),
    ("other set controller", [ref("apps/v1", "Set", "simon", "other-uid", True)], True),
    ("own set controller", [ref("apps/v1", "StatefulSet", "set", "set-uid", True)], False),
    ("own set controller, stale uid", [ref("apps/v1", "StatefulSet", "set", "stale-uid", True)], True),
    ("own pod controller", [ref("v1", "Pod", "pod", "pod-uid", True)], False),
    ("own pod controller, stale uid", [ref("v1", "Pod", "pod", "stale-uid", True)], True),
    ("own controller and another", [ref("v1", "Pod", "pod", "pod-uid", True),
                                    ref("chipmunks/v1", "CustomController", "simon", "other-uid", True)], True),
    ("own controller and a non-controller", [ref("v1", "Pod", "pod", "pod-uid", True),
                                             ref("chipmunks/v1", "CustomController", "simon", "other-uid", False)],
     False),
]


@pytest.mark.parametrize("name,refs,unexpected", UNEXPECTED, ids=[c[0] for c in UNEXPECTED])
def test_has_unexpected_controller(name, refs, unexpected):
    target = obj("", "", refs)
    pod = obj("pod", "pod-uid")
    # no retention policy (retain behaviour): any controller is allowed
    assert not has_unexpected_controller(target, set_obj("set", "set-uid"), pod)
    for policy in ({"whenDeleted": RETAIN, "whenScaled": DELETE}, {"whenDeleted": DELETE, "whenScaled": RETAIN},
                   {"whenDeleted": DELETE, "whenScaled": DELETE}):
        assert has_unexpected_controller(target, set_obj("set", "set-uid", policy=policy), pod) is unexpected


NON_CONTROLLER = [
    ("set and pod controller", [ref("v1", "Pod", "pod", "pod", True), ref("apps/v1", "Set", "set", "set", True)],
     False),
    ("set controller, pod noncontroller", [ref("v1", "Pod", "pod", "pod"), ref("apps/v1", "Set", "set", "set", True)],
     True),
    ("set noncontroller, pod controller", [ref("v1", "Pod", "pod", "pod", True), ref("apps/v1", "Set", "set", "set")],
     True),
    ("set controller", [ref("apps/v1", "Set", "set", "set", True)], False),
    ("pod controller", [ref("v1", "Pod", "pod", "pod", True)], False),
    ("nothing", [], False),
    ("set noncontroller", [ref("apps/v1", "Set", "set", "set")], True),
    ("set noncontroller with ptr", [ref("apps/v1", "Set", "set", "set", False)], True),
    ("pod noncontroller", [ref("v1", "pod", "pod", "pod")], True),
    ("other noncontroller", [ref("v1", "pod", "pod", "not-matching")], False),
]


@pytest.mark.parametrize("name,refs,non_controller", NON_CONTROLLER, ids=[c[0] for c in NON_CONTROLLER])
def test_non_controller(name, refs, non_controller):
    assert has_non_controller_owner(obj("", "", refs), set_obj("set", "set"), obj("pod", "pod")) is non_controller


def test_has_stale_owner_ref():
    target = obj("", "", [ref("v1", "Pod", "bob", "123"), ref("v1", "Pod", "shirley", "456")])
    assert not has_stale_owner_ref(target, obj("bob", "123"), "v1", "Pod")
    assert has_stale_owner_ref(target, obj("shirley", "789"), "v1", "Pod")
    assert not has_stale_owner_ref(target, obj("yvonne", "345"), "v1", "Pod")


def test_is_running_and_ready():
    pod = new_statefulset_pod(new_statefulset(3), 1)
    assert not is_running_and_ready(pod)
    pod["status"] = {"phase": "Running"}
    assert not is_running_and_ready(pod)
    pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    assert is_running_and_ready(pod)


def test_new_pod_controller_ref():
    sts = new_statefulset(1)
    pod = new_statefulset_pod(sts, 0)
    refs = [r for r in pod["metadata"]["ownerReferences"] if r.get("controller")]
    assert len(refs) == 1
    r = refs[0]
    assert (r["apiVersion"], r["kind"], r["name"], r["uid"], r["controller"]) == (
        "apps/v1", "StatefulSet", "foo", "test", True)


def test_rolling_update_apply_revision():
    sts = new_statefulset(1)
    current = copy.deepcopy(sts)
    current_rev = revision_for(sts, 1)
    sts["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "foo", "value": "bar"}]
    update = copy.deepcopy(sts)
    update_rev = revision_for(sts, 2)
    assert apply_revision(sts, current_rev)["spec"]["template"] == current["spec"]["template"]
    assert apply_revision(sts, update_rev)["spec"]["template"] == update["spec"]["template"]


def test_get_persistent_volume_claims():
    pod = {"metadata": {"name": "foo-0", "namespace": NS}, "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}
    sts = new_statefulset(1)
    pvc = new_pvc("datadir-foo-0")
    # nil matchLabels: the template's (absent) labels stay absent
    sts["spec"]["selector"]["matchLabels"] = None
    assert persistent_volume_claims(sts, pod) == {"datadir": pvc}
    # the selector's labels when the template has none
    sts["spec"]["selector"]["matchLabels"] = {"test": "test"}
    pvc["metadata"]["labels"] = {"test": "test"}
    assert persistent_volume_claims(sts, pod) == {"datadir": pvc}
    # non-overlapping labels are merged
    sts["spec"]["selector"]["matchLabels"] = {"name": "foo"}
    sts["spec"]["volumeClaimTemplates"][0]["metadata"]["labels"] = {"test": "test"}
    pvc["metadata"]["labels"] = {"test": "test", "name": "foo"}
    assert persistent_volume_claims(sts, pod) == {"datadir": pvc}
    # overlapping labels: the selector's win
    sts["spec"]["selector"]["matchLabels"] = {"test": "foo"}
    sts["spec"]["volumeClaimTemplates"][0]["metadata"]["labels"] = {"test": "test"}
    pvc["metadata"]["labels"] = {"test": "foo"}
    assert persistent_volume_claims(sts, pod) == {"datadir": pvc}


# =============================================================================================
# the control loop against the real API


class Faults:
    """The Client the controller gets: the test's RealCluster, with upstream's request trackers.

    `fail(verb, resource, err, after)` makes the request numbered `after` or later (counting
    from the start of the test) of that verb on that resource fail once, as upstream's
    requestTracker.incWithOptionalError."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self.requests: dict[tuple[str, str], int] = {}
        self.rules: dict[tuple[str, str], tuple[ApiError, int]] = {}
        self.in_flight: dict[tuple[str, str], int] = {}
        self.max_in_flight: dict[tuple[str, str], int] = {}

    def fail(self, verb: str, res: ResourceInfo, err: ApiError, after: int = 0) -> None:
        self.rules[(verb, res.resource)] = (err, after)

    def count(self, verb: str, res: ResourceInfo) -> int:
        return self.requests.get((verb, res.resource), 0)

    async def _track(self, verb: str, res: ResourceInfo, call: Awaitable[Any]) -> Any:
        key = (verb, res.resource)
        n = self.requests[key] = self.requests.get(key, 0) + 1
        rule = self.rules.get(key)
        if rule is not None and n >= rule[1]:
            del self.rules[key]
            call.close()  # type: ignore[attr-defined]
            raise rule[0]
        self.in_flight[key] = self.in_flight.get(key, 0) + 1
        self.max_in_flight[key] = max(self.max_in_flight.get(key, 0), self.in_flight[key])
        try:
            await asyncio.sleep(0)  # let concurrent requests of a batch overlap
            return await call
        finally:
            self.in_flight[key] -= 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    async def create(self, res: ResourceInfo, obj: dict, namespace: str | None = None, **kw: Any) -> Any:
        return await self._track("create", res, self.api.create(res, obj, namespace, **kw))

    async def update(self, res: ResourceInfo, obj: dict, **kw: Any) -> Any:
        return await self._track("update", res, self.api.update(res, obj, **kw))

    async def update_status(self, res: ResourceInfo, obj: dict, **kw: Any) -> Any:
        return await self._track("update_status", res, self.api.update_status(res, obj, **kw))

    async def delete(self, res: ResourceInfo, name: str, namespace: str | None = None, **kw: Any) -> Any:
        return await self._track("delete", res, self.api.delete(res, name, namespace, **kw))


class Env:
    def __init__(self, api: Any) -> None:
        self.api = api
        self.client = Faults(api)
        for res in (STATEFULSETS, PODS, CONTROLLERREVISIONS, PERSISTENTVOLUMECLAIMS):
            api.informer(res)
        self.ctl = StatefulSetController(self.client, api.factory, clock=api.clock)
        self.events: list[tuple[str, str, str]] = []
        self.ctl.recorder.event = lambda _o, t, r, m, **_kw: self.events.append((t, r, m))  # type: ignore[method-assign]
        self.name = "foo"

    # ---- objects

    async def create(self, sts: dict) -> dict:
        body = copy.deepcopy(sts)
        body["metadata"].pop("uid", None)
        if body["spec"].get("persistentVolumeClaimRetentionPolicy") is None:
            body["spec"].pop("persistentVolumeClaimRetentionPolicy", None)
        self.name = body["metadata"]["name"]
        created = await self.api.create(STATEFULSETS, body)
        await self.api.settle()
        return created

    def sts(self) -> dict:
        s = self.api.obj(STATEFULSETS, self.name, NS)
        assert s is not None
        return s

    def pods(self) -> list[dict]:
        pods = [p for k, p in self.api.objects(PODS).items()
                if k.startswith(f"{NS}/") and (p["metadata"].get("labels") or {}).get("foo") == "bar"]
        return sorted(pods, key=get_ordinal)

    def claims(self) -> dict[str, dict]:
        return {p["metadata"]["name"]: p for k, p in self.api.objects(PERSISTENTVOLUMECLAIMS).items()
                if k.startswith(f"{NS}/")}

    def revisions(self) -> list[dict]:
        return owned_revisions(self.api.objects(CONTROLLERREVISIONS).values(), self.sts())

    async def update_spec(self, fn: Callable[[dict], None]) -> None:
        for _ in range(10):
            s = self.sts()
            fn(s)
            try:
                await self.api.update(STATEFULSETS, s)
                break
            except ConflictError:
                continue
        await self.api.settle()

    # ---- what upstream's fake object manager does to pods

    async def _status(self, pod: dict, fn: Callable[[dict], None]) -> None:
        if not pod["spec"].get("nodeName"):
            await self.api.bind(NS, pod["metadata"]["name"], "node-0")
        cur = self.api.obj(PODS, pod["metadata"]["name"], NS)
        assert cur is not None
        fn(cur)
        await self.api.update_status(PODS, cur)

    async def set_phase(self, pod: dict, phase: str) -> None:
        await self._status(pod, lambda p: p["status"].update(phase=phase))
        await self.api.settle()

    async def set_running_ready(self, pod: dict, *, since: Any = None) -> None:
        when = rfc3339(since or self.api.clock.now())

        def fn(p: dict) -> None:
            conds = [c for c in p["status"].get("conditions") or [] if c.get("type") != "Ready"]
            conds.append({"type": "Ready", "status": "True", "lastTransitionTime": when})
            p["status"].update(phase="Running", conditions=conds)

        await self._status(pod, fn)
        await self.api.settle()

    async def reap(self) -> None:
        """The kubelet finishing terminating pods (upstream's fake deletes at once)."""
        for p in self.pods():
            if p["metadata"].get("deletionTimestamp"):
                try:
                    await self.api.delete(PODS, p["metadata"]["name"], NS, grace_period_seconds=0)
                except NotFoundError:
                    pass
        await self.api.settle()

    async def gc_claims(self) -> None:
        """The garbage collector: claims whose controlling pod is gone are deleted."""
        live = {p["metadata"]["name"] for p in self.pods()}
        for name, c in self.claims().items():
            for r in c["metadata"].get("ownerReferences") or []:
                if r.get("kind") == "Pod" and r.get("name") not in live:
                    await self.api.delete(PERSISTENTVOLUMECLAIMS, name, NS)
                    break
        await self.api.settle()

    async def sync(self, *, reap: bool = True) -> ApiError | None:
        """One UpdateStatefulSet pass; returns the error it raised."""
        err: ApiError | None = None
        try:
            await self.ctl.sync(f"{NS}/{self.name}")
        except ApiError as e:
            err = e
        await self.api.settle()
        if reap:
            await self.reap()
        return err


async def test_claim_template_mount_is_accepted(real_api):
    """upstream newStatefulSet: the container mounts the claim template `datadir`."""
    body = new_statefulset(3, mount_claim=True)
    body["metadata"].pop("uid")
    await real_api.create(STATEFULSETS, body)


@pytest.fixture
async def env(real_api):
    await real_api.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-0"}})
    return Env(real_api)


# ---- upstream's invariants


def check_claim_invariants(sts: dict, pod: dict, claim: dict | None) -> str | None:
    policy = retention_policy(sts)
    if claim is None:
        return f"claim for Pod {pod['metadata']['name']} was not created" if policy["whenScaled"] == RETAIN else None
    if not is_running_and_ready(pod):
        return None
    s, p = has_owner_ref(claim, sts), has_owner_ref(claim, pod)
    scaled, deleted = policy["whenScaled"], policy["whenDeleted"]
    in_range = pod_in_ordinal_range(pod, sts)
    if scaled == RETAIN and deleted == RETAIN and (s or p):
        return f"claim {claim['metadata']['name']} has an owner ref under Retain"
    if scaled == RETAIN and deleted == DELETE and (not s or p):
        return f"claim {claim['metadata']['name']} lacks the set ref or has a pod ref (SetDeleteOnly)"
    if scaled == DELETE and deleted == RETAIN and (s or (not in_range and not p) or (in_range and p)):
        return f"claim {claim['metadata']['name']} has bad owner refs (ScaleDownOnly): {claim['metadata']}"
    if scaled == DELETE and deleted == DELETE and ((not in_range and (not p or s)) or (in_range and (p or not s))):
        return f"claim {claim['metadata']['name']} has bad owner refs (Delete): {claim['metadata']}"
    return None


def _storage_and_identity(env: Env, sts: dict, pod: dict, *, claims_must_exist: bool) -> str | None:
    if not storage_matches(sts, pod):
        return f"pod {pod['metadata']['name']} does not match the storage specification"
    claims = env.claims()
    for c in persistent_volume_claims(sts, pod).values():
        claim = claims.get(c["metadata"]["name"])
        if claim is None and claims_must_exist:
            return f"claim {c['metadata']['name']} is missing"
        err = check_claim_invariants(sts, pod, claim)
        if err:
            return err
    if not identity_matches(sts, pod):
        return f"pod {pod['metadata']['name']} does not match the identity specification"
    return None


def monotonic_invariants(env: Env) -> str | None:
    sts, pods = env.sts(), env.pods()
    start = ((sts["spec"].get("ordinals") or {}).get("start") or 0)
    for i, pod in enumerate(pods):
        if i > 0 and is_running_and_ready(pod) and not is_running_and_ready(pods[i - 1]):
            return f"successor {pod['metadata']['name']} is Running and Ready while its predecessor is not"
        if get_ordinal(pod) != i + start:
            return f"pod {pod['metadata']['name']} deployed in the wrong order {i + start}"
        err = _storage_and_identity(env, sts, pod, claims_must_exist=False)
        if err:
            return err
    return None


def burst_invariants(env: Env) -> str | None:
    sts = env.sts()
    for pod in env.pods():
        err = _storage_and_identity(env, sts, pod, claims_must_exist=retention_policy(sts)["whenScaled"] == RETAIN)
        if err:
            return err
    return None


def update_invariants(env: Env) -> str | None:
    sts, pods = env.sts(), env.pods()
    for pod in pods:
        err = _storage_and_identity(env, sts, pod, claims_must_exist=retention_policy(sts)["whenScaled"] == RETAIN)
        if err:
            return err
    strategy = sts["spec"].get("updateStrategy") or {}
    if strategy.get("type") == "RollingUpdate":
        st = sts.get("status") or {}
        for i in range(min(st.get("currentReplicas") or 0, len(pods))):
            if pod_revision(pods[i]) != st.get("currentRevision"):
                return f"pod {pods[i]['metadata']['name']} want current revision {st.get('currentRevision')}"
        for j in range(st.get("updatedReplicas") or 0):
            pod = pods[len(pods) - 1 - j]
            if pod_revision(pod) != st.get("updateRevision"):
                return f"pod {pod['metadata']['name']} want update revision {st.get('updateRevision')}"
    return None


Invariants = Callable[[Env], str | None]


def invariants_for(sts: dict) -> Invariants:
    return burst_invariants if sts["spec"].get("podManagementPolicy") == "Parallel" else monotonic_invariants


# ---- upstream's drivers


class ControlError(Exception):
    pass


async def scale_up(env: Env, invariants: Invariants, *, limit: int = 200) -> None:
    """scaleUpStatefulSetControl: move one pod forward and sync until every replica is Ready."""
    for _ in range(limit):
        sts = env.sts()
        if (sts.get("status") or {}).get("readyReplicas", 0) >= sts["spec"]["replicas"] and \
                (sts.get("status") or {}).get("observedGeneration") == sts["metadata"]["generation"]:
            break
        pod = next((p for p in env.pods() if not is_running_and_ready(p)
                    and not p["metadata"].get("deletionTimestamp")), None)
        if pod is not None:
            await env.set_running_ready(pod)
        err = await env.sync()
        if err is not None:
            raise ControlError(err)
        problem = invariants(env)
        if problem:
            raise AssertionError(problem)
    else:
        raise AssertionError("scale up did not finish")
    problem = invariants(env)
    if problem:
        raise AssertionError(problem)


async def scale_down(env: Env, invariants: Invariants, *, limit: int = 100) -> None:
    """scaleDownStatefulSetControl: sync, let the deleted pod linger terminating for a second
    pass, then remove it; finally the claims of removed pods go (garbage collector)."""
    for _ in range(limit):
        sts = env.sts()
        if (sts.get("status") or {}).get("replicas", 0) <= sts["spec"]["replicas"]:
            break
        if env.pods():
            err = await env.sync(reap=False)
            if err is not None:
                raise ControlError(err)
            err = await env.sync(reap=False)
            if err is not None:
                raise ControlError(err)
            await env.reap()
        err = await env.sync()
        if err is not None:
            raise ControlError(err)
        problem = invariants(env)
        if problem:
            raise AssertionError(problem)
    else:
        raise AssertionError("scale down did not finish")
    await env.gc_claims()
    problem = invariants(env)
    if problem:
        raise AssertionError(problem)


def update_complete(sts: dict, pods: list[dict]) -> bool:
    spec, st = sts["spec"], sts.get("status") or {}
    if len(pods) != spec["replicas"] or (st.get("readyReplicas") or 0) != spec["replicas"]:
        return False
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("type") == "OnDelete":
        return True
    partition = (strategy.get("rollingUpdate") or {}).get("partition") or 0
    if partition <= 0:
        if (st.get("currentReplicas") or 0) < spec["replicas"]:
            return False
        return all(pod_revision(p) == st.get("currentRevision") for p in pods)
    if len(pods) < partition:
        return False
    return all(pod_revision(p) == st.get("updateRevision") for p in pods[partition:])


async def update_control(env: Env, invariants: Invariants, *, limit: int = 200) -> None:
    """updateStatefulSetControl: sync, then move pods forward and sync until the update is done."""
    err = await env.sync()
    if err is not None:
        raise ControlError(err)
    for _ in range(limit):
        if update_complete(env.sts(), env.pods()):
            break
        pod = next((p for p in env.pods() if not is_running_and_ready(p)
                    and not p["metadata"].get("deletionTimestamp")), None)
        if pod is not None:
            await env.set_running_ready(pod)
        err = await env.sync()
        if err is not None:
            raise ControlError(err)
        problem = invariants(env)
        if problem:
            raise AssertionError(problem)
    else:
        raise AssertionError("update did not finish")
    problem = invariants(env)
    if problem:
        raise AssertionError(problem)


def with_policy(sts: dict, policy: str) -> dict:
    sts["spec"]["persistentVolumeClaimRetentionPolicy"] = copy.deepcopy(POLICIES[policy])
    return sts


def burst(sts: dict) -> dict:
    sts["spec"]["podManagementPolicy"] = "Parallel"
    return sts


def images(env: Env) -> list[str]:
    return [p["spec"]["containers"][0]["image"] for p in env.pods()]


# ---- TestStatefulSetControl


async def creates_pods(env: Env, sts: dict, inv: Invariants) -> None:
    await env.create(sts)
    await scale_up(env, inv)
    st = env.sts()["status"]
    assert (st["replicas"], st["readyReplicas"], st["updatedReplicas"]) == (3, 3, 3)
    pods = env.pods()
    assert len(pods) == 3
    for p in pods:
        assert p["metadata"]["labels"][POD_INDEX_LABEL] == str(get_ordinal(p))


async def scales_up(env: Env, sts: dict, inv: Invariants) -> None:
    await env.create(sts)
    await scale_up(env, inv)
    await env.update_spec(lambda s: s["spec"].update(replicas=4))
    await scale_up(env, inv)
    st = env.sts()["status"]
    assert (st["replicas"], st["readyReplicas"], st["updatedReplicas"]) == (4, 4, 4)


async def scales_down(env: Env, sts: dict, inv: Invariants) -> None:
    await env.create(sts)
    await scale_up(env, inv)
    await env.update_spec(lambda s: s["spec"].update(replicas=0))
    await scale_down(env, inv)
    st = env.sts()["status"]
    assert (st["replicas"], st.get("readyReplicas", 0), st.get("updatedReplicas", 0)) == (0, 0, 0)


async def replaces_pods(env: Env, sts: dict, inv: Invariants) -> None:
    await env.create(sts)
    await scale_up(env, inv)
    assert env.sts()["status"]["replicas"] == 5
    claims = env.claims()
    for pod in env.pods():
        for c in persistent_volume_claims(env.sts(), pod).values():
            assert not has_owner_ref(claims[c["metadata"]["name"]], pod), f"unexpected ownerRef on {c}"
    pods = env.pods()
    for i in (0, 2, 4):
        await env.api.delete(PODS, pods[i]["metadata"]["name"], NS, grace_period_seconds=0)
    await env.api.settle()
    for i in range(0, 5, 2):
        assert await env.sync() is None
        pod = next((p for p in env.pods() if get_ordinal(p) == i), None)
        if pod is not None:
            await env.set_phase(pod, "Running")
        assert await env.sync() is None
        pod = next((p for p in env.pods() if get_ordinal(p) == i), None)
        if pod is not None:
            await env.set_running_ready(pod)
    assert await env.sync() is None
    assert env.sts()["status"]["replicas"] == 5


async def recreates_pod(env: Env, sts: dict, inv: Invariants, phase: str, delete_failure: bool) -> None:
    await env.create(sts)
    assert await env.sync() is None
    assert inv(env) is None
    assert env.client.count("delete", PODS) == 0
    pods = env.pods()
    terminal = pods[0]
    old_uid = terminal["metadata"]["uid"]
    await env.set_phase(terminal, phase)
    for p in pods[1:]:
        await env.set_phase(p, "Pending")
    deletes = 0
    if delete_failure:
        env.client.fail("delete", PODS, InternalError("API server failed"), 0)
        deletes += 1
        err = await env.sync()
        assert isinstance(err, InternalError)
        assert inv(env) is None
        assert env.client.count("delete", PODS) == deletes
    deletes += 1
    assert await env.sync() is None  # the terminal pod is deleted
    assert inv(env) is None
    assert env.client.count("delete", PODS) == deletes
    assert await env.sync() is None  # and recreated, no further deletes
    assert inv(env) is None
    assert env.client.count("delete", PODS) == deletes
    recreated = next((p for p in env.pods() if get_ordinal(p) == get_ordinal(terminal)), None)
    assert recreated is not None and recreated["metadata"]["uid"] != old_uid
    assert recreated["status"]["phase"] == "Pending"
    creates = 2 if sts["spec"].get("podManagementPolicy") != "Parallel" else sts["spec"]["replicas"] + 1
    assert env.client.count("create", PODS) == creates


async def recreates_failed_pod(env: Env, sts: dict, inv: Invariants) -> None:
    await recreates_pod(env, sts, inv, "Failed", False)


async def recreates_succeeded_pod(env: Env, sts: dict, inv: Invariants) -> None:
    await recreates_pod(env, sts, inv, "Succeeded", False)


async def recreates_failed_pod_with_delete_failure(env: Env, sts: dict, inv: Invariants) -> None:
    await recreates_pod(env, sts, inv, "Failed", True)


async def recreates_succeeded_pod_with_delete_failure(env: Env, sts: dict, inv: Invariants) -> None:
    await recreates_pod(env, sts, inv, "Succeeded", True)


async def create_pod_failure(env: Env, sts: dict, inv: Invariants) -> None:
    await env.create(sts)
    env.client.fail("create", PODS, InternalError("API server failed"), 2)
    with pytest.raises(ControlError) as ei:
        await scale_up(env, inv)
    assert isinstance(ei.value.args[0], InternalError)
    await scale_up(env, inv)
    st = env.sts()["status"]
    assert (st["replicas"], st["readyReplicas"], st["updatedReplicas"]) == (3, 3, 3)


async def update_set_status_failure(env: Env, sts: dict, inv: Invariants) -> None:
    await env.create(sts)
    env.client.fail("update_status", STATEFULSETS, InternalError("API server failed"), 2)
    with pytest.raises(ControlError) as ei:
        await scale_up(env, inv)
    assert isinstance(ei.value.args[0], InternalError)
    await scale_up(env, inv)
    st = env.sts()["status"]
    assert (st["replicas"], st["readyReplicas"], st["updatedReplicas"]) == (3, 3, 3)


async def new_revision_delete_pod_failure(env: Env, sts: dict, inv: Invariants) -> None:
    await env.create(sts)
    await scale_up(env, inv)
    assert env.sts()["status"]["replicas"] == 3
    await env.update_spec(lambda s: s["spec"]["template"]["spec"]["containers"][0].update(image="nginx-new"))
    env.client.fail("delete", PODS, InternalError("API server failed"), 0)
    assert await env.sync() is not None
    assert inv(env) is None
    st = env.sts()["status"]
    assert st["currentReplicas"] == 3, "a failed pod deletion must not lower currentReplicas"
    assert st["currentRevision"] != st["updateRevision"]
    assert await env.sync(reap=False) is None
    assert env.sts()["status"]["currentReplicas"] == 2, "the deletion lowers currentReplicas"
    assert inv(env) is None


async def recreates_pvc_for_pending_pod(env: Env, sts: dict, inv: Invariants) -> None:
    await env.create(sts)
    assert await env.sync() is None
    assert inv(env) is None
    pod = env.pods()[0]
    for c in persistent_volume_claims(env.sts(), pod).values():
        await env.api.delete(PERSISTENTVOLUMECLAIMS, c["metadata"]["name"], NS)
    await env.set_phase(pod, "Pending")
    assert await env.sync() is None
    # the invariants check that no claim of a pod is missing
    for c in persistent_volume_claims(env.sts(), pod).values():
        assert c["metadata"]["name"] in env.claims()
    assert inv(env) is None


CONTROL = [creates_pods, scales_up, scales_down, replaces_pods, recreates_failed_pod, recreates_succeeded_pod,
           recreates_failed_pod_with_delete_failure, recreates_succeeded_pod_with_delete_failure, create_pod_failure,
           update_set_status_failure, new_revision_delete_pod_failure, recreates_pvc_for_pending_pod]
UPSTREAM_NAMES = {
    "creates_pods": "CreatesPods", "scales_up": "ScalesUp", "scales_down": "ScalesDown",
    "replaces_pods": "ReplacesPods", "recreates_failed_pod": "RecreatesFailedPod",
    "recreates_succeeded_pod": "RecreatesSucceededPod",
    "recreates_failed_pod_with_delete_failure": "RecreatesFailedPodWithDeleteFailure",
    "recreates_succeeded_pod_with_delete_failure": "RecreatesSucceededPodWithDeleteFailure",
    "create_pod_failure": "CreatePodFailure", "update_set_status_failure": "UpdateSetStatusFailure",
    "new_revision_delete_pod_failure": "NewRevisionDeletePodFailure",
    "recreates_pvc_for_pending_pod": "RecreatesPVCForPendingPod",
}
LARGE = {"replaces_pods"}


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("mode", ["Monotonic", "Burst"])
@pytest.mark.parametrize("fn", CONTROL, ids=[UPSTREAM_NAMES[f.__name__] for f in CONTROL])
async def test_statefulset_control(env, fn, mode, policy):
    sts = with_policy(new_statefulset(5 if fn.__name__ in LARGE else 3), policy)
    if mode == "Burst":
        burst(sts)
    await fn(env, sts, invariants_for(sts))


async def test_statefulset_control_with_start_ordinal(env):
    sts = new_statefulset(3)
    sts["spec"]["ordinals"] = {"start": 2}
    await env.create(sts)
    await scale_up(env, lambda _e: None)
    st = env.sts()["status"]
    assert (st["replicas"], st["readyReplicas"], st["updatedReplicas"]) == (3, 3, 3)
    assert [get_ordinal(p) for p in env.pods()] == [2, 3, 4]


@pytest.mark.parametrize("policy", list(POLICIES))
async def test_statefulset_control_scale_down_delete_error(env, policy):
    sts = with_policy(new_statefulset(3), policy)
    await env.create(sts)
    await scale_up(env, monotonic_invariants)
    await env.update_spec(lambda s: s["spec"].update(replicas=0))
    env.client.fail("delete", PODS, InternalError("API server failed"), 2)
    with pytest.raises(ControlError) as ei:
        await scale_down(env, monotonic_invariants)
    assert isinstance(ei.value.args[0], InternalError)
    await scale_down(env, monotonic_invariants)
    st = env.sts()["status"]
    assert (st["replicas"], st.get("readyReplicas", 0), st.get("updatedReplicas", 0)) == (0, 0, 0)


# ---- TestStatefulSetControl_getSetRevisions


def _set_revisions(sts: dict) -> tuple[dict, dict, dict, dict, dict]:
    rev0 = revision_for(sts, 1)
    set1 = copy.deepcopy(sts)
    set1["spec"]["template"]["spec"]["containers"][0]["image"] = "foo"
    rev1 = revision_for(set1, 2)
    set2 = copy.deepcopy(set1)
    set2["spec"]["template"]["metadata"]["labels"]["new"] = "label"
    rev2 = revision_for(set2, 3)
    return rev0, set1, rev1, set2, rev2


GET_SET_REVISIONS = [
    # name, set (0 or 1), existing, expected count, expected current, expected update, update's number
    ("creates initial revision", 0, [], 1, "rev0", "rev0", 1),
    ("creates revision on update", 1, ["rev0"], 2, "rev0", "rev1", 2),
    ("must not recreate a new revision of same set", 1, ["rev0", "rev1"], 2, "rev0", "rev1", 2),
    ("must rollback to a previous revision", 1, ["rev0", "rev1", "rev2"], 3, "rev0", "rev1", 4),
]


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("name,which,existing,count,current,update,number", GET_SET_REVISIONS,
                         ids=[c[0] for c in GET_SET_REVISIONS])
async def test_statefulset_control_get_set_revisions(env, policy, name, which, existing, count, current, update,
                                                     number):
    await env.create(with_policy(new_statefulset(3), policy))
    rev0, set1, rev1, _set2, rev2 = _set_revisions(env.sts())  # revisions of the API's (defaulted) templates
    revs = {"rev0": rev0, "rev1": rev1, "rev2": rev2}
    if which:
        await env.update_spec(lambda s: s["spec"].update(template=set1["spec"]["template"]))
        cur = env.sts()
        cur["status"] = {**(cur.get("status") or {}), "currentRevision": rev0["metadata"]["name"]}
        await env.api.update_status(STATEFULSETS, cur)
    uid = env.sts()["metadata"]["uid"]
    for key in existing:
        body = copy.deepcopy(revs[key])
        body["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "foo",
                                                "uid": uid, "controller": True, "blockOwnerDeletion": True}]
        await env.api.create(CONTROLLERREVISIONS, body)
    await env.api.settle()
    sts = env.sts()
    revisions = owned_revisions(env.api.objects(CONTROLLERREVISIONS).values(), sts)
    got_update, _collisions = await ensure_revision(env.api, sts, revisions, kind="StatefulSet")
    by_name = {r["metadata"]["name"]: r for r in revisions}
    got_current = by_name.get((sts.get("status") or {}).get("currentRevision") or "", got_update)
    await env.api.settle()
    assert len(env.revisions()) == count
    assert got_current["data"] == revs[current]["data"]
    assert got_update["data"] == revs[update]["data"]
    assert got_update["revision"] == number
    assert got_current["revision"] == revs[current]["revision"]


# ---- rolling updates, OnDelete, partitions, rollback


def _image_foo(s: dict) -> None:
    s["spec"]["template"]["spec"]["containers"][0]["image"] = "foo"


def _scale_and_foo(n: int) -> Callable[[dict], None]:
    def fn(s: dict) -> None:
        s["spec"]["replicas"] = n
        _image_foo(s)
    return fn


UPDATE_CASES = [
    ("monotonic image update", False, 3, _image_foo),
    ("monotonic image update and scale up", False, 3, _scale_and_foo(5)),
    ("monotonic image update and scale down", False, 5, _scale_and_foo(3)),
    ("burst image update", True, 3, _image_foo),
    ("burst image update and scale up", True, 3, _scale_and_foo(5)),
    ("burst image update and scale down", True, 5, _scale_and_foo(3)),
]


@pytest.mark.parametrize("name,is_burst,replicas,update", UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES])
async def test_statefulset_control_rolling_update(env, name, is_burst, replicas, update):
    sts = new_statefulset(replicas)
    if is_burst:
        burst(sts)
    await env.create(sts)
    await scale_up(env, invariants_for(sts))
    await env.update_spec(update)
    await update_control(env, update_invariants)
    assert images(env) and all(i == "foo" for i in images(env))


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("name,is_burst,replicas,update", UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES])
async def test_statefulset_control_on_delete_update(env, policy, name, is_burst, replicas, update):
    sts = with_policy(new_statefulset(replicas), policy)
    sts["spec"]["updateStrategy"] = {"type": "OnDelete"}
    if is_burst:
        burst(sts)
    inv = invariants_for(sts)
    await env.create(sts)
    await scale_up(env, inv)
    await env.update_spec(update)
    await update_control(env, update_invariants)
    await env.gc_claims()  # pods may have been deleted in the update
    got = images(env)
    if "scale up" in name:
        assert got == ["nginx"] * 3 + ["foo"] * 2
    else:
        assert got and all(i == "nginx" for i in got)
    for c in env.claims().values():
        assert not any(r.get("name", "").startswith("foo-") for r in c["metadata"].get("ownerReferences") or []), \
            f"unexpected pod reference on {c['metadata']['name']}"
    want = env.sts()["spec"]["replicas"]
    await env.update_spec(lambda s: s["spec"].update(replicas=0))
    await scale_down(env, inv)
    for c in env.claims().values():
        assert not any(r.get("name", "").startswith("foo-") for r in c["metadata"].get("ownerReferences") or []), \
            f"unexpected pod reference on {c['metadata']['name']}"
    await env.update_spec(lambda s: s["spec"].update(replicas=want))
    await scale_up(env, inv)
    got = images(env)
    assert got and all(i == "foo" for i in got)


PARTITION_CASES = [
    ("monotonic image update", False, 3, _image_foo),
    ("monotonic image update and scale up", False, 3, _scale_and_foo(5)),
    ("burst image update", True, 3, _image_foo),
    ("burst image update and scale up", True, 3, _scale_and_foo(5)),
]


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("name,is_burst,replicas,update", PARTITION_CASES, ids=[c[0] for c in PARTITION_CASES])
async def test_statefulset_control_rolling_update_with_partition(env, policy, name, is_burst, replicas, update):
    sts = with_policy(new_statefulset(replicas), policy)
    sts["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    if is_burst:
        burst(sts)
    await env.create(sts)
    await scale_up(env, invariants_for(sts))
    await env.update_spec(update)
    await update_control(env, update_invariants)
    got = images(env)
    assert got[:2] == ["nginx", "nginx"] and all(i == "foo" for i in got[2:])


@pytest.mark.parametrize("policy", list(POLICIES))
async def test_statefulset_honor_revision_history_limit(env, policy):
    sts = with_policy(new_statefulset(3), policy)
    await env.create(sts)
    await scale_up(env, monotonic_invariants)
    limit = env.sts()["spec"]["revisionHistoryLimit"]
    for i in range(limit + 5):
        await env.update_spec(lambda s, i=i: s["spec"]["template"]["spec"]["containers"][0].update(image=f"foo-{i}"))
        # upstream's after=2 counts every status write of the test: the next one fails
        env.client.fail("update_status", STATEFULSETS, InternalError("API server failed"), 2)
        try:
            await update_control(env, update_invariants)
        except ControlError:
            pass
        # upstream asserts at most limit + 2 (its undefaulted set has no rollingUpdate, so a
        # recreated pod comes back at the current revision and only the current and update
        # revisions are live); with the API's defaulted partition 0 it comes back at the update
        # revision, which is live as well: what truncateHistory guarantees is at most `limit`
        # revisions that are not live
        st = env.sts().get("status") or {}
        revs = env.revisions()
        newest = max(revs, key=lambda r: r["revision"])["metadata"]["name"]  # this sync's update revision
        live = {pod_revision(p) for p in env.pods()} | {st.get("currentRevision"), newest}
        assert len([r for r in revs if r["metadata"]["name"] not in live]) <= limit
        assert len(revs) <= limit + len(live)


@pytest.mark.parametrize("name,is_burst", [("monotonic update", False), ("burst update", True)])
async def test_statefulset_control_limits_history(env, name, is_burst):
    sts = new_statefulset(3)
    if is_burst:
        burst(sts)
    await env.create(sts)
    await scale_up(env, invariants_for(sts))
    for i in range(10):
        await env.update_spec(lambda s, i=i: s["spec"]["template"]["spec"]["containers"][0].update(image=f"foo-{i}"))
        await update_control(env, update_invariants)
        assert await env.sync() is None
        assert len(env.revisions()) <= env.sts()["spec"]["revisionHistoryLimit"] + 2


@pytest.mark.parametrize("name,is_burst,replicas,update", UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES])
async def test_statefulset_control_rollback(env, name, is_burst, replicas, update):
    sts = new_statefulset(replicas)
    if is_burst:
        burst(sts)
    await env.create(sts)
    await scale_up(env, invariants_for(sts))
    await env.update_spec(update)
    await update_control(env, update_invariants)
    assert all(i == "foo" for i in images(env))
    first = sorted(env.revisions(), key=lambda r: r["revision"])[0]
    await env.update_spec(lambda s: s["spec"].update(template=apply_revision(s, first)["spec"]["template"]))
    await update_control(env, update_invariants)
    got = images(env)
    assert got and all(i == "nginx" for i in got)


def test_create_apply_revision_copies_annotations_and_restores_the_template():
    """TestCreateApplyRevision: a revision applied to a changed set restores its template."""
    sts = new_statefulset(1)
    revision = revision_for(sts, 1)
    sts["spec"]["template"]["spec"]["containers"][0]["name"] = "foo"
    sts["metadata"]["annotations"] = {"foo": "bar"}
    restored = apply_revision(sts, revision)
    assert revision_data(restored) == revision["data"]
    assert revision_for(restored, 2)["metadata"]["annotations"] == {"foo": "bar"}


async def test_create_apply_revision_revision_carries_the_set_annotations(env):
    """TestCreateApplyRevision, through the controller: the ControllerRevision it writes
    carries the set's annotations and the template's labels."""
    sts = new_statefulset(1)
    sts["metadata"]["annotations"] = {"foo": "bar"}
    await env.create(sts)
    assert await env.sync() is None
    revs = env.revisions()
    assert len(revs) == 1
    assert revs[0]["metadata"]["annotations"] == {"foo": "bar"}
    assert revs[0]["metadata"]["labels"]["foo"] == "bar"


AVAILABILITY = [
    ("replicas running for required time, when minReadySeconds is enabled", -120, 1),
    ("replicas not running for required time, when minReadySeconds is enabled", -30, 0),
]


@pytest.mark.parametrize("name,ready_minutes,available", AVAILABILITY, ids=[c[0] for c in AVAILABILITY])
async def test_statefulset_availability(env, name, ready_minutes, available):
    sts = new_statefulset(1)
    sts["spec"]["minReadySeconds"] = 3600
    await env.create(sts)
    await scale_up(env, burst_invariants)
    pod = env.pods()[0]
    await env.set_running_ready(pod, since=env.api.clock.now() + timedelta(minutes=ready_minutes))
    assert await env.sync() is None
    assert (env.sts()["status"].get("availableReplicas") or 0) == available


STATUS_UPDATE = [
    ("no error", False, False, None),
    ("sync error", True, False, "sync"),
    ("status error", False, True, "status"),
    ("sync and status error", True, True, "sync"),
]


@pytest.mark.parametrize("desc,sync_err,status_err,expected", STATUS_UPDATE, ids=[c[0] for c in STATUS_UPDATE])
async def test_statefulset_status_update(env, desc, sync_err, status_err, expected):
    await env.create(new_statefulset(3))
    errors = {"sync": InternalError("sync error"), "status": InternalError("status error")}
    if sync_err:
        env.client.fail("create", PODS, errors["sync"], 0)
    if status_err:
        env.client.fail("update_status", STATEFULSETS, errors["status"], 0)
    err = await env.sync()
    assert env.client.count("update_status", STATEFULSETS) == 1, "did not update status"
    assert err is (errors[expected] if expected else None)


PARALLEL_SCALE = [("scale up from 3 to 30", 3, 30, 2), ("scale down from 10 to 1", 10, 1, 2)]


@pytest.mark.parametrize("desc,replicas,desired,min_parallel", PARALLEL_SCALE, ids=[c[0] for c in PARALLEL_SCALE])
async def test_parallel_scale(env, desc, replicas, desired, min_parallel):
    sts = burst(new_statefulset(replicas))
    sts["spec"]["volumeClaimTemplates"][0]["metadata"]["labels"] = {"test": "test"}
    await env.create(sts)
    for _ in range(2):
        assert await env.sync() is None
        if env.sts()["status"]["replicas"] >= replicas:
            break
    assert env.sts()["status"]["replicas"] == replicas
    await env.update_spec(lambda s: s["spec"].update(replicas=desired))
    for _ in range(2):
        assert await env.sync() is None
        if env.sts()["status"]["replicas"] == desired:
            break
        if desired < replicas:
            assert await env.sync() is None
    assert env.sts()["status"]["replicas"] == desired
    assert burst_invariants(env) is None
    assert env.client.max_in_flight.get(("create", "pods"), 0) >= min_parallel


async def test_api_accepts_the_usual_statefulset_with_a_claim_template_mount_and_leaves_the_pod_spec_to_the_pods(
        real_api):
    """ValidatePodTemplateSpecForStatefulSet does not validate the pod spec: a container mounting
    a volumeClaimTemplate (no template volume carries that name) is the usual StatefulSet and is
    accepted, while the template's restartPolicy must still be Always."""
    body = {"metadata": {"name": "web"}, "spec": {
        "serviceName": "web", "replicas": 1, "selector": {"matchLabels": {"app": "w"}},
        "template": {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [
            {"name": "c", "image": "nginx", "volumeMounts": [{"name": "www", "mountPath": "/usr/share/nginx/html"}]}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "www"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
    created = await real_api.create(STATEFULSETS, copy.deepcopy(body), NS)
    assert created["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "www"
    bad = copy.deepcopy(body)
    bad["metadata"]["name"] = "web2"
    bad["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    with pytest.raises(ApiError) as e:
        await real_api.create(STATEFULSETS, bad, NS)
    assert 'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"' in str(e.value)
