"""Job controller (upstream pkg/controller/job) and TTL-after-finished against a real in-process
API server; the test plays the kubelet by writing pod statuses."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

import pytest

from minik3s.api.errors import NotFoundError
from minik3s.api.resources import EVENTS, JOBS, PODS
from minik3s.controllers.garbage_collector import GarbageCollector
from minik3s.controllers.job import (
    COMPLETION_INDEX,
    INDEX_FAILURE_COUNT,
    JOB_TRACKING_FINALIZER,
    JobController,
    backoff_remaining,
    completion_index,
    format_indexes,
    match_pod_failure_policy,
    match_success_policy,
    parse_indexes,
    past_backoff_limit_on_failure,
    want_active,
)
from minik3s.utils.clock import rfc3339

T0 = datetime(2026, 1, 1, tzinfo=UTC)

# --------------------------------------------------------------------------- pure parts


@pytest.mark.parametrize(
    ("spec", "succeeded", "active", "want"),
    [
        pytest.param({"completions": 3, "parallelism": 2}, 0, 0, 2, id="parallelism-caps-a-fresh-job"),
        pytest.param({"completions": 3, "parallelism": 2}, 2, 1, 1, id="only-remaining-completions-run"),
        pytest.param(
            {"completions": 3, "parallelism": 2}, 4, 0, 0, id="never-negative-after-extra-successes"
        ),
        pytest.param({"parallelism": 3}, 0, 1, 3, id="work-queue-job-runs-parallelism-until-a-success"),
        pytest.param({"parallelism": 3}, 1, 2, 2, id="work-queue-job-leaves-running-pods-after-a-success"),
    ],
)
def test_want_active(spec, succeeded, active, want):
    assert want_active({"spec": spec}, succeeded, active) == want


@pytest.mark.parametrize(
    ("failures", "ago", "remaining"),
    [
        pytest.param(0, 0.0, 0.0, id="no-failure-no-backoff"),
        pytest.param(1, 4.0, 6.0, id="first-failure-waits-10s"),
        pytest.param(3, 15.0, 25.0, id="third-failure-waits-40s"),
        pytest.param(3, 50.0, 0.0, id="backoff-already-elapsed"),
        pytest.param(10, 0.0, 360.0, id="capped-at-6-minutes"),
    ],
)
def test_backoff_remaining(failures, ago, remaining):
    assert backoff_remaining(failures, T0 - timedelta(seconds=ago), T0) == pytest.approx(remaining)


def _pod(phase: str, restarts: int) -> dict:
    return {"status": {"phase": phase, "containerStatuses": [{"name": "c", "restartCount": restarts}]}}


@pytest.mark.parametrize(
    ("policy", "limit", "pods", "past"),
    [
        pytest.param(
            "OnFailure", 2, [_pod("Running", 1), _pod("Running", 1)], True, id="restarts-reach-limit"
        ),
        pytest.param(
            "OnFailure", 3, [_pod("Running", 1), _pod("Pending", 1)], False, id="restarts-below-limit"
        ),
        pytest.param("OnFailure", 0, [_pod("Running", 1)], True, id="limit-zero-any-restart-fails"),
        pytest.param("OnFailure", 1, [_pod("Succeeded", 5)], False, id="finished-pods-restarts-ignored"),
        pytest.param("Never", 1, [_pod("Running", 4)], False, id="restart-policy-never-not-counted"),
    ],
)
def test_past_backoff_limit_on_failure(policy, limit, pods, past):
    job = {"spec": {"backoffLimit": limit, "template": {"spec": {"restartPolicy": policy}}}}
    assert past_backoff_limit_on_failure(job, pods) is past


# --------------------------------------------------------------------------- against a server


def job_obj(
    name: str,
    *,
    completions: int | None = 1,
    parallelism: int | None = None,
    backoff_limit: int | None = None,
    restart_policy: str = "Never",
    hold: bool = True,
    **spec_extra,
) -> dict:
    spec: dict = {
        "template": {
            "metadata": {"annotations": {"test/hold": "1"} if hold else {}},
            "spec": {"restartPolicy": restart_policy, "containers": [{"name": "c", "image": "busybox"}]},
        }
    }
    if completions is not None:
        spec["completions"] = completions
    if parallelism is not None:
        spec["parallelism"] = parallelism
    if backoff_limit is not None:
        spec["backoffLimit"] = backoff_limit
    spec.update(spec_extra)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def start(harness) -> JobController:
    ctl = JobController(harness.client, harness.informers, sync_batch_period=0.02, pod_failure_backoff=0.2)
    harness.start(ctl.run, harness.kubelet)
    return ctl


async def live_pods(harness, job: str) -> list[dict]:
    return [
        p
        for p in await harness.pods(selector=f"batch.kubernetes.io/job-name={job}")
        if not p["metadata"].get("deletionTimestamp")
    ]


async def wait_pods(harness, job: str, n: int) -> list[dict]:
    async def check():
        pods = [
            p
            for p in await live_pods(harness, job)
            if p["status"].get("phase") not in ("Succeeded", "Failed")
        ]
        return pods if len(pods) == n else None

    return await harness.eventually(check, what=f"{n} active pods of {job}")


async def finish(harness, pod: dict, phase: str, exit_code: int, *conditions: str) -> None:
    """The pod's terminal status in one write (with extra True `conditions`, e.g. DisruptionTarget)."""
    body = copy.deepcopy(await harness.client.get(PODS, pod["metadata"]["name"], "default"))
    now = rfc3339(datetime.now(UTC))
    body["status"] = {
        "phase": phase,
        "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": now}]
        + [{"type": c, "status": "True", "lastTransitionTime": now} for c in conditions],
        "containerStatuses": [
            {
                "name": "c",
                "ready": False,
                "restartCount": 0,
                "state": {
                    "terminated": {
                        "exitCode": exit_code,
                        "reason": "Completed" if exit_code == 0 else "Error",
                        "startedAt": now,
                        "finishedAt": now,
                    }
                },
            }
        ],
    }
    await harness.client.update_status(PODS, body)


async def wait_condition(harness, name: str, cond_type: str, *, timeout: float = 20.0) -> dict:
    async def check():
        job = await harness.client.get(JOBS, name, "default")
        conds = {c["type"]: c for c in job["status"].get("conditions") or []}
        return job if conds.get(cond_type, {}).get("status") == "True" else None

    return await harness.eventually(check, timeout=timeout, what=f"{name} {cond_type}")


def conditions(status: dict) -> list[tuple[str, str, str]]:
    return [(c["type"], c["reason"], c["message"]) for c in status["conditions"]]


def index_pod(pods: list[dict], ix: int) -> dict:
    """The pod of completion index `ix` among `pods`."""
    return next(p for p in pods if p["metadata"]["annotations"][COMPLETION_INDEX] == str(ix))


async def job_events(harness, name: str) -> list[tuple[str, str, str]]:
    evs = (await harness.client.list(EVENTS, "default"))["items"]
    return [
        (e["type"], e["reason"], e["message"])
        for e in evs
        if e["involvedObject"].get("kind") == "Job" and e["involvedObject"]["name"] == name
    ]


async def test_job_runs_parallel_pods_until_completions_succeed(harness):
    start(harness)
    job = await harness.client.create(JOBS, job_obj("calc", completions=3, parallelism=2))
    uid = job["metadata"]["uid"]
    pods = await wait_pods(harness, "calc", 2)
    for p in pods:
        m = p["metadata"]
        assert m["name"].startswith("calc-") and len(m["name"]) == len("calc-") + 5
        assert m["finalizers"] == [JOB_TRACKING_FINALIZER]
        assert m["ownerReferences"] == [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": "calc",
                "uid": uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        assert m["labels"] == {
            "batch.kubernetes.io/controller-uid": uid,
            "controller-uid": uid,
            "batch.kubernetes.io/job-name": "calc",
            "job-name": "calc",
        }
    await finish(harness, pods[0], "Succeeded", 0)
    await finish(harness, pods[1], "Succeeded", 0)
    # only one more completion is needed: exactly one replacement pod
    third = await wait_pods(harness, "calc", 1)
    assert third[0]["metadata"]["name"] not in {p["metadata"]["name"] for p in pods}
    await finish(harness, third[0], "Succeeded", 0)

    done = await wait_condition(harness, "calc", "Complete")
    st = done["status"]
    assert [c["type"] for c in st["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    for c in st["conditions"]:
        assert (c["status"], c["reason"], c["message"]) == (
            "True",
            "CompletionsReached",
            "Reached expected number of succeeded pods",
        )
    assert (st["succeeded"], st["active"], st["ready"], st["terminating"]) == (3, 0, 0, 0)
    assert st.get("failed", 0) == 0
    assert st["uncountedTerminatedPods"] == {}
    assert st["startTime"] and st["completionTime"] == st["conditions"][1]["lastTransitionTime"]
    assert len(await harness.pods(selector="job-name=calc")) == 3
    for p in await harness.pods(selector="job-name=calc"):
        assert JOB_TRACKING_FINALIZER not in (p["metadata"].get("finalizers") or [])

    async def events():
        evs = await job_events(harness, "calc")
        return evs if ("Normal", "Completed", "Job completed") in evs else None

    evs = await harness.eventually(events, what="Completed event")
    assert sum(1 for e in evs if e[1] == "SuccessfulCreate") == 3


async def test_failed_pods_beyond_backoff_limit_fail_the_job(harness):
    start(harness)
    await harness.client.create(JOBS, job_obj("flaky", backoff_limit=1))
    first = await wait_pods(harness, "flaky", 1)
    await finish(harness, first[0], "Failed", 1)

    async def replacement():
        pods = await wait_pods(harness, "flaky", 1)
        return pods if pods[0]["metadata"]["name"] != first[0]["metadata"]["name"] else None

    second = await harness.eventually(replacement, what="replacement after backoff")

    async def counted() -> dict | None:  # the controller writes status after creating the pod
        job = await harness.client.get(JOBS, "flaky", "default")
        return job if job["status"].get("failed") == 1 else None

    job = await harness.eventually(counted, what="first failure counted")
    assert "conditions" not in job["status"]
    await finish(harness, second[0], "Failed", 1)

    failed = await wait_condition(harness, "flaky", "Failed")
    st = failed["status"]
    assert conditions(st) == [
        ("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
    ]
    assert (st["failed"], st["active"]) == (2, 0)
    assert "completionTime" not in st

    async def events():
        evs = await job_events(harness, "flaky")
        return (
            evs
            if ("Warning", "BackoffLimitExceeded", "Job has reached the specified backoff limit") in evs
            else None
        )

    await harness.eventually(events, what="BackoffLimitExceeded event")


async def test_active_deadline_deletes_running_pods_and_fails(harness):
    start(harness)
    # a 3 s deadline: the running pod must be seen before the deadline deletes it (with 1 s a
    # loaded CI machine once created and deleted it between two polls)
    await harness.client.create(JOBS, job_obj("slow", hold=False, activeDeadlineSeconds=3))
    await wait_pods(harness, "slow", 1)
    failed = await wait_condition(harness, "slow", "Failed", timeout=20)
    st = failed["status"]
    assert [(c["type"], c["reason"]) for c in st["conditions"]] == [
        ("FailureTarget", "DeadlineExceeded"),
        ("Failed", "DeadlineExceeded"),
    ]
    assert st["conditions"][1]["message"] == "Job was active longer than specified deadline"
    assert (st["failed"], st["active"], st["terminating"]) == (1, 0, 0)

    async def no_pods():
        return not await harness.pods(selector="job-name=slow")

    await harness.eventually(no_pods, what="deleted pod gone")


async def test_suspend_deletes_active_pods_and_resume_recreates(harness):
    start(harness)
    await harness.client.create(JOBS, job_obj("batch", completions=2, parallelism=2, hold=False))
    await wait_pods(harness, "batch", 2)
    await harness.mutate(JOBS, "batch", lambda j: j["spec"].update(suspend=True))
    suspended = await wait_condition(harness, "batch", "Suspended")
    cond = next(c for c in suspended["status"]["conditions"] if c["type"] == "Suspended")
    assert (cond["reason"], cond["message"]) == ("JobSuspended", "Job suspended")

    async def none_left():
        return not await harness.pods(selector="job-name=batch")

    await harness.eventually(none_left, what="pods of the suspended job removed")
    job = await harness.client.get(JOBS, "batch", "default")
    assert job["status"]["active"] == 0 and job["status"].get("failed", 0) == 0
    await harness.mutate(JOBS, "batch", lambda j: j["spec"].update(suspend=False))
    await wait_pods(harness, "batch", 2)

    async def resumed():
        j = await harness.client.get(JOBS, "batch", "default")
        c = next(c for c in j["status"]["conditions"] if c["type"] == "Suspended")
        return c if c["status"] == "False" else None

    c = await harness.eventually(resumed, what="Suspended=False")
    assert (c["reason"], c["message"]) == ("JobResumed", "Job resumed")


async def test_job_created_suspended_has_no_start_time(harness):
    start(harness)
    await harness.client.create(JOBS, job_obj("later", suspend=True))
    job = await wait_condition(harness, "later", "Suspended")
    assert "startTime" not in job["status"]
    assert not await harness.pods(selector="job-name=later")


async def test_ttl_after_finished_deletes_the_job_and_its_pods(harness):
    ctl = JobController(harness.client, harness.informers, sync_batch_period=0.02)
    gc = GarbageCollector(harness.client, harness.informers)
    harness.start(ctl.run, gc.run, harness.kubelet)
    await harness.client.create(JOBS, job_obj("short", ttlSecondsAfterFinished=3))  # Complete stays visible long enough to be seen
    pods = await wait_pods(harness, "short", 1)
    await finish(harness, pods[0], "Succeeded", 0)
    await wait_condition(harness, "short", "Complete")

    async def gone():
        try:
            await harness.client.get(JOBS, "short", "default")
        except NotFoundError:
            return not await harness.pods(selector="job-name=short")
        return False

    await harness.eventually(gone, timeout=20, what="job deleted after its TTL")


async def test_orphan_matching_pod_is_adopted_with_tracking_finalizer(harness):
    ctl = JobController(harness.client, harness.informers, sync_batch_period=0.02)
    job = await harness.client.create(JOBS, job_obj("adopt", completions=1))
    labels = job["spec"]["template"]["metadata"]["labels"]
    await harness.client.create(
        PODS,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "stray", "labels": dict(labels), "annotations": {"test/hold": "1"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"},
        },
        "default",
    )
    harness.start(ctl.run, harness.kubelet)

    async def adopted():
        try:
            p = await harness.client.get(PODS, "stray", "default")
        except NotFoundError:
            return None
        refs = p["metadata"].get("ownerReferences") or []
        return p if refs and refs[0]["uid"] == job["metadata"]["uid"] else None

    p = await harness.eventually(adopted, what="orphan adopted")
    assert JOB_TRACKING_FINALIZER in p["metadata"]["finalizers"]
    await finish(harness, p, "Succeeded", 0)
    done = await wait_condition(harness, "adopt", "Complete")
    assert done["status"]["succeeded"] == 1
    # the adopted pod filled the only slot: no pod was created for the Job
    assert [p["metadata"]["name"] for p in await harness.pods(selector="job-name=adopt")] == ["stray"]


# --------------------------------------------------------------------------- Indexed completion mode


@pytest.mark.parametrize(
    ("indexes", "text"),
    [
        pytest.param(set(), "", id="none"),
        pytest.param({0, 1, 2, 4}, "0-2,4", id="interval-and-single"),
        pytest.param({5, 6}, "5,6", id="a-pair-is-two-singles"),
        pytest.param({0, 2, 3, 4, 9, 10}, "0,2-4,9,10", id="mixed"),
    ],
)
def test_completed_indexes_are_written_as_upstreams_intervals(indexes, text):
    assert format_indexes(indexes) == text
    assert parse_indexes(text, 100) == indexes


def test_parsing_completed_indexes_keeps_the_range_and_skips_corruption():
    assert parse_indexes("0-2,x,4-9,12", 6) == {0, 1, 2, 4, 5}
    assert parse_indexes("1,a-3,3", 10) == {1, 3}


@pytest.mark.parametrize(
    ("value", "index"),
    [("0", 0), ("17", 17), ("+3", 3), ("-1", None), ("1_0", None), (" 1", None), ("x", None)],
)
def test_completion_index_reads_the_annotation_as_go_atoi(value, index):
    assert completion_index({"metadata": {"annotations": {COMPLETION_INDEX: value}}}) == index


async def test_indexed_job_gives_each_pod_an_index_and_completes_when_every_index_succeeded(harness):
    start(harness)
    job_body = job_obj("idx", completions=3, parallelism=2, completionMode="Indexed")
    job_body["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "KEEP", "value": "1"}]
    await harness.client.create(JOBS, job_body)
    pods = sorted(await wait_pods(harness, "idx", 2), key=lambda p: p["metadata"]["name"])
    for ix, p in enumerate(pods):
        m, spec = p["metadata"], p["spec"]
        assert m["name"].startswith(f"idx-{ix}-") and len(m["name"]) == len(f"idx-{ix}-") + 5
        assert m["annotations"][COMPLETION_INDEX] == str(ix) and m["labels"][COMPLETION_INDEX] == str(ix)
        assert spec["hostname"] == f"idx-{ix}"
        assert spec["containers"][0]["env"] == [
            {"name": "KEEP", "value": "1"},
            {"name": "JOB_COMPLETION_INDEX",
             "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                        "fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}},
        ]
    # index 1 fails: replaced by a pod for the same index; index 0 succeeds: index 2 starts
    await finish(harness, pods[1], "Failed", 1)
    await finish(harness, pods[0], "Succeeded", 0)

    async def indexes_running():
        live = [p for p in await live_pods(harness, "idx") if p["status"].get("phase") not in ("Succeeded", "Failed")]
        got = sorted(p["metadata"]["annotations"][COMPLETION_INDEX] for p in live)
        return live if got == ["1", "2"] else None

    live = await harness.eventually(indexes_running, what="pods for indexes 1 and 2")

    async def counted():  # the status is written after the pods are created
        job = await harness.client.get(JOBS, "idx", "default")
        return job if job["status"].get("completedIndexes") == "0" else None

    job = await harness.eventually(counted, what="index 0 listed as completed")
    assert job["status"]["succeeded"] == 1
    for p in live:
        await finish(harness, p, "Succeeded", 0)
    done = await wait_condition(harness, "idx", "Complete")
    st = done["status"]
    assert (st["completedIndexes"], st["succeeded"], st["failed"], st["active"]) == ("0-2", 3, 1, 0)


async def test_indexed_job_deletes_pods_with_a_repeated_or_foreign_index(harness):
    start(harness)
    job = await harness.client.create(JOBS, job_obj("dup", completions=2, parallelism=2, completionMode="Indexed"))
    pods = await wait_pods(harness, "dup", 2)
    # a second pod claiming index 0, and one claiming an index past completions, adopted by the Job
    extra = []
    for ix in ("0", "7"):
        body = {"metadata": {"name": f"dup-extra-{ix}", "namespace": "default",
                             "labels": dict(pods[0]["metadata"]["labels"]) | {COMPLETION_INDEX: ix},
                             "annotations": {COMPLETION_INDEX: ix, "test/hold": "1"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
        extra.append(await harness.client.create(PODS, body))

    async def settled():
        live = await live_pods(harness, "dup")
        names = {p["metadata"]["name"] for p in live}
        return live if "dup-extra-7" not in names and len(live) == 2 else None

    live = await harness.eventually(settled, what="the foreign and repeated indexes deleted")
    assert sorted(p["metadata"]["annotations"][COMPLETION_INDEX] for p in live) == ["0", "1"]
    assert (await harness.client.get(JOBS, "dup", "default"))["metadata"]["uid"] == job["metadata"]["uid"]


# --------------------------------------------------------------------------- podFailurePolicy

POLICY = {"rules": [
    {"action": "FailJob", "onExitCodes": {"containerName": "c", "operator": "In", "values": [42]}},
    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
]}


def test_the_first_matching_rule_decides():
    job = {"spec": {"podFailurePolicy": POLICY}}

    def pod(code: int, *conds: str) -> dict:
        return {"metadata": {"name": "p", "namespace": "ns"},
                "status": {"phase": "Failed", "conditions": [{"type": c, "status": "True"} for c in conds],
                           "containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": code}}}]}}

    assert match_pod_failure_policy(job, pod(42)) == (
        "Container c for pod ns/p failed with exit code 42 matching FailJob rule at index 0", True, "FailJob")
    assert match_pod_failure_policy(job, pod(42, "DisruptionTarget"))[2] == "FailJob"
    assert match_pod_failure_policy(job, pod(1, "DisruptionTarget")) == (None, False, "Ignore")
    assert match_pod_failure_policy(job, pod(1)) == (None, True, None)
    # NotIn matches any other non-zero code; a zero exit never matches an exit-code rule
    not_in = {"spec": {"podFailurePolicy": {"rules": [{"action": "Count", "onExitCodes": {"operator": "NotIn",
                                                                                         "values": [1]}}]}}}
    assert match_pod_failure_policy(not_in, pod(2))[2] == "Count"
    assert match_pod_failure_policy(not_in, pod(1))[2] is None
    assert match_pod_failure_policy(not_in, pod(0))[2] is None


async def test_pod_failure_policy_ignores_disruptions_and_fails_the_job_on_its_exit_code(harness):
    start(harness)
    await harness.client.create(JOBS, job_obj("policy", backoff_limit=0, podFailurePolicy=POLICY))
    first = await wait_pods(harness, "policy", 1)
    # a disruption: not counted (backoffLimit 0 is not exceeded), the pod is replaced
    await finish(harness, first[0], "Failed", 137, "DisruptionTarget")

    async def replacement():
        pods = await wait_pods(harness, "policy", 1)
        return pods if pods[0]["metadata"]["name"] != first[0]["metadata"]["name"] else None

    second = await harness.eventually(replacement, what="a replacement for the disrupted pod")
    job = await harness.client.get(JOBS, "policy", "default")
    assert job["status"].get("failed", 0) == 0 and "conditions" not in job["status"]
    # exit code 42: the Job fails at once, whatever its backoffLimit
    await finish(harness, second[0], "Failed", 42)
    failed = await wait_condition(harness, "policy", "Failed")
    message = f"Container c for pod default/{second[0]['metadata']['name']} failed with exit code 42 matching " \
              "FailJob rule at index 0"
    assert conditions(failed["status"]) == [
        ("FailureTarget", "PodFailurePolicy", message), ("Failed", "PodFailurePolicy", message)]
    assert failed["status"]["failed"] == 1


# --------------------------------------------------------------------------- successPolicy


@pytest.mark.parametrize(
    ("rules", "succeeded", "matched"),
    [
        pytest.param([{"succeededIndexes": "0"}], {0}, "Matched rules at index 0", id="leader-index"),
        pytest.param([{"succeededIndexes": "0-2"}], {0, 2}, None, id="not-every-index-yet"),
        pytest.param([{"succeededIndexes": "0-2", "succeededCount": 2}], {0, 2}, "Matched rules at index 0",
                     id="count-of-the-named-indexes"),
        pytest.param([{"succeededIndexes": "0-2", "succeededCount": 2}], {0, 5, 6}, None, id="others-do-not-count"),
        pytest.param([{"succeededIndexes": "5"}, {"succeededCount": 3}], {0, 5, 6}, "Matched rules at index 0",
                     id="first-rule-wins"),
        pytest.param([{"succeededIndexes": "7"}, {"succeededCount": 3}], {0, 5, 6}, "Matched rules at index 1",
                     id="count-of-all-indexes"),
        pytest.param([{"succeededCount": 1}], set(), None, id="nothing-succeeded"),
    ],
)
def test_success_policy_rules(rules, succeeded, matched):
    job = {"spec": {"completions": 8, "completionMode": "Indexed", "successPolicy": {"rules": rules}}}
    assert match_success_policy(job, succeeded) == matched


async def test_success_policy_completes_an_indexed_job_when_its_leader_succeeds(harness):
    start(harness)
    await harness.client.create(JOBS, job_obj("leader", completions=3, parallelism=3, completionMode="Indexed",
                                              successPolicy={"rules": [{"succeededIndexes": "0"}]}))
    pods = await wait_pods(harness, "leader", 3)
    leader = index_pod(pods, 0)
    await finish(harness, leader, "Succeeded", 0)
    done = await wait_condition(harness, "leader", "Complete")
    st = done["status"]
    assert conditions(st) == [
        ("SuccessCriteriaMet", "SuccessPolicy", "Matched rules at index 0"),
        ("Complete", "SuccessPolicy", "Matched rules at index 0")]
    assert (st["completedIndexes"], st["succeeded"], st["active"]) == ("0", 1, 0)
    # the other indexes' pods were deleted
    assert all(p["metadata"].get("deletionTimestamp") or p["metadata"]["name"] == leader["metadata"]["name"]
               for p in await harness.pods(selector="job-name=leader"))


# --------------------------------------------------------------------------- backoffLimitPerIndex


async def _index_pods(harness, job: str, ix: str) -> list[dict]:
    return [p for p in await harness.pods(selector=f"batch.kubernetes.io/job-name={job}")
            if p["metadata"]["annotations"].get(COMPLETION_INDEX) == ix]


async def test_each_index_has_its_own_failure_budget_and_failed_indexes_fail_the_job(harness):
    start(harness)
    created = await harness.client.create(JOBS, job_obj("per", completions=2, parallelism=2, completionMode="Indexed",
                                                        backoffLimitPerIndex=1))
    assert created["spec"]["backoffLimit"] == 2147483647  # the Job-wide limit is off
    pods = await wait_pods(harness, "per", 2)
    assert {p["metadata"]["annotations"][INDEX_FAILURE_COUNT] for p in pods} == {"0"}
    one = index_pod(pods, 1)
    await finish(harness, one, "Failed", 1)

    async def replaced():
        live = [p for p in await _index_pods(harness, "per", "1") if p["status"].get("phase") != "Failed"]
        return live if live else None

    second = (await harness.eventually(replaced, what="index 1 recreated after its backoff"))[0]
    assert second["metadata"]["annotations"][INDEX_FAILURE_COUNT] == "1"
    # the first failure is counted; the index is not failed yet
    job = await harness.client.get(JOBS, "per", "default")
    assert job["status"].get("failedIndexes", "") == ""
    await finish(harness, second, "Failed", 1)  # the second failure of index 1 reaches the limit

    async def index_failed():
        j = await harness.client.get(JOBS, "per", "default")
        return j if j["status"].get("failedIndexes") == "1" else None

    await harness.eventually(index_failed, what="index 1 listed as failed")
    assert len(await _index_pods(harness, "per", "1")) == 2  # not recreated again
    zero = index_pod(pods, 0)
    await finish(harness, zero, "Succeeded", 0)
    failed = await wait_condition(harness, "per", "Failed")
    st = failed["status"]
    assert conditions(st) == [
        ("FailureTarget", "FailedIndexes", "Job has failed indexes"),
        ("Failed", "FailedIndexes", "Job has failed indexes")]
    assert (st["completedIndexes"], st["failedIndexes"], st["succeeded"], st["failed"]) == ("0", "1", 1, 2)


async def test_max_failed_indexes_and_the_fail_index_rule(harness):
    start(harness)
    await harness.client.create(JOBS, job_obj(
        "maxf", completions=3, parallelism=3, completionMode="Indexed", backoffLimitPerIndex=5, maxFailedIndexes=0,
        podFailurePolicy={"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [7]}}]}))
    pods = await wait_pods(harness, "maxf", 3)
    # exit 7: FailIndex fails index 2 at once, despite its budget of 5; more than 0 failed indexes
    two = index_pod(pods, 2)
    await finish(harness, two, "Failed", 7)
    failed = await wait_condition(harness, "maxf", "Failed")
    st = failed["status"]
    assert st["conditions"][-1]["reason"] == "MaxFailedIndexesExceeded"
    assert st["conditions"][-1]["message"] == "Job has exceeded the specified maximal number of failed indexes"
    assert st["failedIndexes"] == "2" and st["active"] == 0
