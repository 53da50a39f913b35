"""Job controller and TTL-after-finished controller (layer L4), after kube-controller-manager's
`pkg/controller/job` and `pkg/controller/ttlafterfinished` (v1.33).

Why: batch/v1 Jobs are stored by the API server (which defaults completions/parallelism/
backoffLimit and generates `spec.selector` plus the `batch.kubernetes.io/controller-uid` /
`job-name` template labels); this module runs them. Per Job it keeps `parallelism` pods
running until `completions` pods succeeded (or, with completions unset, one pod succeeded and
the rest finished), recreates failed pods after an exponential backoff (10 s doubling, capped
at 6 min), and ends the Job:

* success -> condition `SuccessCriteriaMet` (CompletionsReached), then, once no pod of the Job
  is terminating and every finished pod is counted, `Complete` and `status.completionTime`;
* failures > backoffLimit (or, for restartPolicy OnFailure, container restarts >= backoffLimit)
  -> `FailureTarget` BackoffLimitExceeded, active pods deleted, then `Failed`;
* activeDeadlineSeconds elapsed since `status.startTime` -> the same with DeadlineExceeded;
* `spec.suspend` -> active pods deleted, condition `Suspended` (JobSuspended); resuming resets
  startTime.

Pods carry the `batch.kubernetes.io/job-tracking` finalizer while uncounted: a finished pod is
first listed in `status.uncountedTerminatedPods`, then its finalizer is removed, then it moves
into `status.succeeded` / `status.failed` (upstream's three-step tracking, so a pod deleted
right after finishing is still counted exactly once).

TTL: a finished Job with `spec.ttlSecondsAfterFinished` is deleted (propagation Foreground,
uid precondition, as upstream's ttlafterfinished controller) once
`finish time + ttl <= now`, the finish time being the lastTransitionTime of its Complete or
Failed condition. Example: Complete at 12:00:00, ttl 100 -> deleted at 12:01:40.

Indexed completion mode (indexed_job_utils): each pod gets a completion index in
[0, completions): annotation and label `batch.kubernetes.io/job-completion-index`, hostname
`<job>-<index>`, generateName `<job>-<index>-`, and env JOB_COMPLETION_INDEX (from that label) in
every container; the lowest pending indexes are created first, pods with a duplicate, missing
or out-of-range index are deleted, `status.completedIndexes` lists the succeeded indexes as
intervals ("0-2,4", a pair as "5,6") and `status.succeeded` counts them; the Job completes when
every index succeeded. Example: completions 3, parallelism 2 -> pods for 0 and 1; 0 succeeds ->
a pod for 2; completedIndexes "0", then "0-2" and Complete.

podFailurePolicy (pod_failure_policy.go): a failed pod is matched against the rules in order,
by a non-zero exit code of a terminated container (`onExitCodes`, In/NotIn, optionally one
container) or by a pod condition (`onPodConditions`: type and status); the first match decides:
`FailJob` fails the Job at once (FailureTarget/Failed reason PodFailurePolicy, "Container c for
pod ns/p failed with exit code 42 matching FailJob rule at index 0"), `Ignore` neither counts
the failure against backoffLimit nor the `failed` counter (the pod is replaced), `Count` (and no
match) counts it as usual. Example: rules [{FailJob, onExitCodes In [42]}, {Ignore,
onPodConditions DisruptionTarget}] -> an evicted pod is replaced for free, an exit 42 ends the Job.

successPolicy (success_policy.go, Indexed Jobs): the Job succeeds as soon as one rule holds:
every index of its `succeededIndexes` succeeded, or `succeededCount` of them (of all indexes
without `succeededIndexes`) did: condition SuccessCriteriaMet reason SuccessPolicy "Matched rules
at index 0", the remaining pods are deleted, then Complete with the same reason.

backoffLimitPerIndex (Indexed Jobs): each index has its own failure budget instead of the
Job's backoffLimit; every pod carries `batch.kubernetes.io/job-index-failure-count` (its index's
counted failures before it); a failed pod whose count reached the limit (or a FailIndex rule)
marks its index failed (`status.failedIndexes`, intervals as completedIndexes), else the index
gets a new pod (count + 1) after a per-index backoff (10 s doubling), the failed pod keeping its
finalizer until then; more than `maxFailedIndexes` failed indexes fail the Job
(MaxFailedIndexesExceeded), else once every index succeeded or failed it fails with
FailedIndexes. Example: limit 1 -> index 2 fails twice -> failedIndexes "2"; the others
succeed -> Failed "Job has failed indexes".

Not implemented: managedBy (Jobs managed by another controller are skipped, see `sync`).

Data flow: Job and Pod informers -> handlers enqueue `ns/name` (pod events batched by 1 s as
upstream) -> workers run `sync(key)` -> pod create/delete/patch, `jobs/status` writes and
events through the Client; a second queue runs `sync_ttl(key)` -> Job delete.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from minik3s.api.errors import ApiError, ConflictError, NotFoundError
from minik3s.api.helpers.indexes import format_indexes, go_atoi, parse_indexes
from minik3s.api.helpers.pods import is_pod_ready, pod_condition
from minik3s.api.resources import JOBS, PODS
from minik3s.api.selectors import LabelSelector, label_selector_from_dict
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory, object_key
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import (
    POD_CONTROLLER_UID_INDEX,
    controller_ref,
    get_int,
    is_deleting,
    is_pod_active,
    make_controller_ref,
    meta,
    pod_controller_uid_index,
    pods_by_owner,
    run_workers,
)
from minik3s.controllers.expectations import Expectations
from minik3s.controllers.replicaset import rank_pods_for_deletion, slow_start_batches
from minik3s.utils.clock import Clock, parse_time, rfc3339

logger = logging.getLogger(__name__)

JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
INDEX_FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
INDEX_IGNORED_FAILURE_COUNT = "batch.kubernetes.io/job-index-ignored-failure-count"
REASON_MAX_FAILED_INDEXES = "MaxFailedIndexesExceeded"
MSG_MAX_FAILED_INDEXES = "Job has exceeded the specified maximal number of failed indexes"
REASON_FAILED_INDEXES = "FailedIndexes"
MSG_FAILED_INDEXES = "Job has failed indexes"
MAX_GENERATED_NAME_LENGTH = 58  # names.MaxGeneratedNameLength: 63 minus the 5 random characters
SYNC_JOB_BATCH_PERIOD = 1.0
DEFAULT_POD_FAILURE_BACKOFF = 10.0
MAX_POD_FAILURE_BACKOFF = 360.0
MAX_POD_CREATE_DELETE_PER_SYNC = 500
MAX_UNCOUNTED_PODS = 500
NAMESPACE_INDEX = "namespace"

COMPLETE = "Complete"
FAILED = "Failed"
FAILURE_TARGET = "FailureTarget"
SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"
SUSPENDED = "Suspended"
REASON_COMPLETIONS_REACHED = "CompletionsReached"
MSG_COMPLETIONS_REACHED = "Reached expected number of succeeded pods"
REASON_BACKOFF_LIMIT = "BackoffLimitExceeded"
MSG_BACKOFF_LIMIT = "Job has reached the specified backoff limit"
REASON_DEADLINE = "DeadlineExceeded"
REASON_POD_FAILURE_POLICY = "PodFailurePolicy"
REASON_SUCCESS_POLICY = "SuccessPolicy"
MSG_DEADLINE = "Job was active longer than specified deadline"


def _namespace_index(obj: JsonDict) -> list[str]:
    return [meta(obj).get("namespace") or ""]


# --------------------------------------------------------------------------- pure parts


def find_condition(job: JsonDict, cond_type: str) -> JsonDict | None:
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") == cond_type:
            return c if isinstance(c, dict) else None
    return None


def is_job_finished(job: JsonDict) -> bool:
    """util.IsJobFinished: a Complete or Failed condition with status True."""
    return any(
        c.get("type") in (COMPLETE, FAILED) and c.get("status") == "True"
        for c in (job.get("status") or {}).get("conditions") or []
    )


def new_condition(cond_type: str, status: str, reason: str, message: str, now: str) -> JsonDict:
    """batch.JobCondition as newCondition builds it (reason/message omitted when empty)."""
    c: JsonDict = {"type": cond_type, "status": status, "lastProbeTime": now, "lastTransitionTime": now}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def ensure_condition(
    conditions: list[JsonDict], cond_type: str, status: str, reason: str, message: str, now: str
) -> bool:
    """ensureJobConditionStatus: replace a condition whose status/reason/message differ; never
    append a False condition. Returns True when the list changed."""
    for i, c in enumerate(conditions):
        if c.get("type") == cond_type:
            if (c.get("status"), c.get("reason") or "", c.get("message") or "") != (status, reason, message):
                conditions[i] = new_condition(cond_type, status, reason, message, now)
                return True
            return False
    if status != "False":
        conditions.append(new_condition(cond_type, status, reason, message, now))
        return True
    return False


def has_tracking_finalizer(pod: JsonDict) -> bool:
    return JOB_TRACKING_FINALIZER in (meta(pod).get("finalizers") or [])


def only_replace_failed_pods(job: JsonDict) -> bool:
    spec = job.get("spec") or {}
    return spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy") is not None


def is_pod_failed(pod: JsonDict, job: JsonDict) -> bool:
    """isPodFailed: phase Failed, or (unless only failed pods are replaced) deleted before it
    succeeded, so orphaned pods that never reach Failed still count."""
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Failed":
        return True
    if only_replace_failed_pods(job):
        return False
    return is_deleting(pod) and phase != "Succeeded"


def _exit_code_match(statuses: list[JsonDict], req: JsonDict) -> JsonDict | None:
    """getMatchingContainerFromList: a terminated container (of `req.containerName`, if set)
    whose non-zero exit code is In / NotIn `req.values` (an unknown operator matches nothing)."""
    values = set(req.get("values") or ())
    want = req.get("containerName")
    operator = req.get("operator")
    if operator not in ("In", "NotIn"):
        return None
    for cs in statuses:
        term = (cs.get("state") or {}).get("terminated")
        if not isinstance(term, dict) or (want is not None and cs.get("name") != want):
            continue
        code = get_int(term, "exitCode")
        if code != 0 and (code in values) == (operator == "In"):
            return cs
    return None


def match_pod_failure_policy(job: JsonDict, pod: JsonDict) -> tuple[str | None, bool, str | None]:
    """matchPodFailurePolicy for a failed pod: (the FailJob message or None, whether the failure
    counts, the matched rule's action or None). No policy or no match: (None, True, None)."""
    policy = (job.get("spec") or {}).get("podFailurePolicy")
    if not isinstance(policy, dict):
        return None, True, None
    status = pod.get("status") or {}
    m = meta(pod)
    for index, rule in enumerate(policy.get("rules") or ()):
        action = rule.get("action")
        # (FailIndex needs backoffLimitPerIndex: the API refuses it without, so no check here)
        on_codes = rule.get("onExitCodes")
        if isinstance(on_codes, dict):
            cs = (_exit_code_match(status.get("containerStatuses") or [], on_codes)
                  or _exit_code_match(status.get("initContainerStatuses") or [], on_codes))
            if cs is None:
                continue
            what = (f"Container {cs.get('name')} for pod {m.get('namespace')}/{m.get('name')} failed with exit "
                    f"code {cs['state']['terminated'].get('exitCode')}")
        elif rule.get("onPodConditions"):
            patterns = {(pt.get("type"), pt.get("status") or "True") for pt in rule["onPodConditions"]}
            cond = next((c for c in status.get("conditions") or () if (c.get("type"), c.get("status")) in patterns),
                        None)
            if cond is None:
                continue
            what = f"Pod {m.get('namespace')}/{m.get('name')} has condition {cond.get('type')}"
        else:
            continue
        if action == "Ignore":
            return None, False, action
        if action in ("Count", "FailIndex"):
            return None, True, action
        if action == "FailJob":
            return f"{what} matching FailJob rule at index {index}", True, action
    return None, True, None


def has_backoff_limit_per_index(job: JsonDict) -> bool:
    return is_indexed(job) and (job.get("spec") or {}).get("backoffLimitPerIndex") is not None


def _annotation_count(pod: JsonDict, key: str) -> int:
    """parseInt32 of a failure-count annotation: 0 when missing, malformed or out of range."""
    v = go_atoi((meta(pod).get("annotations") or {}).get(key))
    return v if v is not None and 0 <= v <= 2**31 - 1 else 0


def is_index_failed(job: JsonDict, pod: JsonDict) -> bool:
    """isIndexFailed: a failed pod that a FailIndex rule matches, or whose counted failure
    brings its index to backoffLimitPerIndex."""
    if not is_pod_failed(pod, job):
        return False
    _, counted, action = match_pod_failure_policy(job, pod)
    if action == "FailIndex":
        return True
    return counted and _annotation_count(pod, INDEX_FAILURE_COUNT) >= get_int(job.get("spec"), "backoffLimitPerIndex")


def counts_as_failure(job: JsonDict, pod: JsonDict) -> bool:
    return match_pod_failure_policy(job, pod)[1]


def fail_job_message(job: JsonDict, pods: list[JsonDict]) -> str | None:
    """getFailJobMessage: the message of the first failed pod a FailJob rule matches."""
    if (job.get("spec") or {}).get("podFailurePolicy") is None:
        return None
    for pod in pods:
        if is_pod_failed(pod, job):
            msg = match_pod_failure_policy(job, pod)[0]
            if msg is not None:
                return msg
    return None


def is_pod_terminating(pod: JsonDict) -> bool:
    """controller.CountTerminatingPods' predicate: deleted but not yet terminal."""
    return is_deleting(pod) and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


_GO_ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)


def _finish_time_of(statuses: list[JsonDict], prev: datetime | None,
                    only: set[str] | None = None) -> datetime | None:
    """latestFinishTime: the latest finishedAt of the statuses (those named in `only`, if
    given), starting from `prev`; None as soon as one of them has not terminated with a time."""
    latest = prev
    for cs in statuses:
        if only is not None and cs.get("name") not in only:
            continue
        term = (cs.get("state") or {}).get("terminated")
        t = parse_time(term.get("finishedAt")) if isinstance(term, dict) else None
        if t is None or t == _GO_ZERO_TIME:  # Go's zero time counts as unset
            return None
        latest = t if latest is None or t > latest else latest
    return latest


def pod_finished_time(pod: JsonDict) -> datetime:
    """getFinishedTime: latest container finishedAt when all terminated (restartable init
    containers, i.e. sidecars, included: they stop last), else the Ready=False transition,
    else deletionTimestamp - grace period, else creation time."""
    status = pod.get("status") or {}
    latest = _finish_time_of(status.get("containerStatuses") or [], None)
    sidecars = {str(c.get("name")) for c in (pod.get("spec") or {}).get("initContainers") or ()
                if isinstance(c, dict) and c.get("restartPolicy") == "Always"}
    latest = _finish_time_of(status.get("initContainerStatuses") or [], latest, sidecars)
    if latest is not None:
        return latest
    ready = pod_condition(pod, "Ready")
    if ready and ready.get("status") == "False":
        t = parse_time(ready.get("lastTransitionTime"))
        if t is not None and t != _GO_ZERO_TIME:
            return t
    m = meta(pod)
    deleted = parse_time(m.get("deletionTimestamp"))
    if deleted is not None:
        return deleted - timedelta(seconds=get_int(m, "deletionGracePeriodSeconds"))
    return parse_time(m.get("creationTimestamp")) or datetime.min.replace(tzinfo=UTC)


def backoff_remaining(
    failures: int,
    last_failure: datetime | None,
    now: datetime,
    *,
    base: float = DEFAULT_POD_FAILURE_BACKOFF,
    cap: float = MAX_POD_FAILURE_BACKOFF,
) -> float:
    """getRemainingTimeForFailuresCount: base * 2^(failures-1) capped, minus time since the last
    failure. Example: 3 failures, last 15 s ago -> 40 - 15 = 25 s."""
    if failures <= 0 or last_failure is None:
        return 0.0
    delay = base
    for _ in range(1, failures):
        delay *= 2
        if delay >= cap:
            delay = cap
            break
    elapsed = (now - last_failure).total_seconds()
    return 0.0 if delay < elapsed else delay - elapsed


def past_backoff_limit_on_failure(job: JsonDict, pods: list[JsonDict]) -> bool:
    """pastBackoffLimitOnFailure: with restartPolicy OnFailure, the container restarts of
    running/pending pods reach backoffLimit (any restart when the limit is 0)."""
    spec = job.get("spec") or {}
    if ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") != "OnFailure":
        return False
    total = 0
    for p in pods:
        st = p.get("status") or {}
        if st.get("phase") in ("Running", "Pending"):
            for cs in (st.get("initContainerStatuses") or []) + (st.get("containerStatuses") or []):
                total += int(cs.get("restartCount") or 0)
    limit = get_int(spec, "backoffLimit", 6)
    return total > 0 if limit == 0 else total >= limit


def want_active(job: JsonDict, succeeded: int, active: int) -> int:
    """manageJob's target: completions unset -> parallelism until one success, then leave the
    running pods; else min(parallelism, completions - succeeded), never negative.
    Example: completions 3, parallelism 2, 2 succeeded -> 1."""
    spec = job.get("spec") or {}
    parallelism = get_int(spec, "parallelism", 1)
    if spec.get("completions") is None:
        return active if succeeded > 0 else parallelism
    return max(0, min(parallelism, get_int(spec, "completions") - succeeded))


def is_indexed(job: JsonDict) -> bool:
    return (job.get("spec") or {}).get("completionMode") == "Indexed"


def completion_index(pod: JsonDict) -> int | None:
    """getCompletionIndex: the pod's index annotation as a non-negative integer, else None."""
    ix = go_atoi((meta(pod).get("annotations") or {}).get(COMPLETION_INDEX))
    return ix if ix is not None and ix >= 0 else None


def match_success_policy(job: JsonDict, succeeded: set[int]) -> str | None:
    """matchSuccessPolicy: "Matched rules at index <i>" for the first rule the succeeded
    indexes satisfy, else None (no policy, or nothing succeeded yet)."""
    policy = (job.get("spec") or {}).get("successPolicy")
    if not isinstance(policy, dict) or not succeeded:
        return None
    completions = get_int(job.get("spec"), "completions")
    for index, rule in enumerate(policy.get("rules") or ()):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            wanted = parse_indexes(str(rule["succeededIndexes"]), completions)
            if not wanted:
                continue
            have = len(wanted & succeeded)
            if have == len(wanted) or (isinstance(count, int) and have >= count):
                return f"Matched rules at index {index}"
        elif isinstance(count, int) and len(succeeded) >= count:
            return f"Matched rules at index {index}"
    return None


def _indexes_of(pods: list[JsonDict]) -> set[int]:
    """getIndexes: the valid completion indexes of the pods."""
    return {ix for p in pods if (ix := completion_index(p)) is not None}


def first_pending_indexes(job: JsonDict, pods: list[JsonDict], active_pods: list[JsonDict], succeeded: set[int],
                          failed: set[int] | None, count: int, completions: int) -> list[int]:
    """firstPendingIndexes: the lowest `count` indexes below `completions` that neither an
    active pod holds nor succeeded nor failed (nor, when only failed pods are replaced, a
    terminating pod still holds)."""
    taken = succeeded | _indexes_of(active_pods) | (failed or set())
    if only_replace_failed_pods(job):
        taken |= _indexes_of([p for p in pods if is_pod_terminating(p)])
    out: list[int] = []
    ix = 0
    while len(out) < count and ix < completions:
        if ix not in taken:
            out.append(ix)
        ix += 1
    return out


def pod_generate_name_with_index(job_name: str, index: int) -> str:
    """podGenerateNameWithIndex: `<job>-<index>-`, the job name cut so that the prefix stays
    within names.MaxGeneratedNameLength."""
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = prefix[:MAX_GENERATED_NAME_LENGTH - len(suffix)] + suffix
    return prefix


def index_failure_count(pod: JsonDict) -> int:
    """getIndexFailureCount: the pod's job-index-failure-count annotation (0 when missing,
    malformed, negative or past int32)."""
    return _annotation_count(pod, INDEX_FAILURE_COUNT)


def index_absolute_failure_count(pod: JsonDict) -> int:
    """getIndexAbsoluteFailureCount: counted plus ignored failures of the pod's index."""
    return _annotation_count(pod, INDEX_FAILURE_COUNT) + _annotation_count(pod, INDEX_IGNORED_FAILURE_COUNT)


def new_index_failure_counts(job: JsonDict, replacing: JsonDict | None) -> tuple[int, int]:
    """getNewIndexFailureCounts: the (counted, ignored) failure counts of the pod that replaces
    `replacing` (its counts, one more where its failure falls); (0, 0) for a first pod."""
    if replacing is None:
        return 0, 0
    failures = _annotation_count(replacing, INDEX_FAILURE_COUNT)
    ignored = _annotation_count(replacing, INDEX_IGNORED_FAILURE_COUNT)
    if counts_as_failure(job, replacing):
        return failures + 1, ignored
    return failures, ignored + 1


def remaining_time_per_index(last_failed: JsonDict | None, now: datetime, *, base: float = DEFAULT_POD_FAILURE_BACKOFF,
                             cap: float = MAX_POD_FAILURE_BACKOFF) -> float:
    """getRemainingTimePerIndex: the backoff left for an index whose last failed pod is
    `last_failed` (its absolute failure count + 1 failures, from its finish time)."""
    if last_failed is None:
        return 0.0
    return backoff_remaining(index_absolute_failure_count(last_failed) + 1, pod_finished_time(last_failed), now,
                             base=base, cap=cap)


def calculate_succeeded_indexes(job: JsonDict, pods: list[JsonDict]) -> tuple[set[int], set[int]]:
    """calculateSucceededIndexes: (the indexes status.completedIndexes lists, those plus the
    valid indexes of succeeded pods still carrying the tracking finalizer)."""
    completions = get_int(job.get("spec"), "completions")
    prev = parse_indexes(str((job.get("status") or {}).get("completedIndexes") or ""), completions)
    new = {ix for p in pods if (p.get("status") or {}).get("phase") == "Succeeded" and has_tracking_finalizer(p)
           and (ix := completion_index(p)) is not None and ix < completions}
    return prev, prev | new


def calculate_failed_indexes(job: JsonDict, pods: list[JsonDict]) -> set[int]:
    """calculateFailedIndexes: status.failedIndexes plus the valid indexes of tracked pods
    whose failure fails their index."""
    completions = get_int(job.get("spec"), "completions")
    failed = parse_indexes(str((job.get("status") or {}).get("failedIndexes") or ""), completions)
    for pod in pods:
        ix = completion_index(pod)
        if ix is not None and ix < completions and has_tracking_finalizer(pod) and is_index_failed(job, pod):
            failed.add(ix)
    return failed


def pods_with_delayed_deletion_per_index(job: JsonDict, pods: list[JsonDict], *, succeeded: set[int],
                                         failed: set[int], expected_rm: set[str] | None = None
                                         ) -> dict[int, JsonDict]:
    """getPodsWithDelayedDeletionPerIndex: per index still to be retried (neither succeeded,
    failed nor held by an active pod), its last failed pod (highest absolute failure count,
    latest finish), which keeps its finalizer until the index is replaced."""
    completions = get_int(job.get("spec"), "completions")
    active = _indexes_of([p for p in pods if is_pod_active(p)])
    out: dict[int, JsonDict] = {}
    for pod in pods:
        if not has_tracking_finalizer(pod) or _uid(pod) in (expected_rm or ()):
            continue
        ix = completion_index(pod)
        if (ix is None or ix >= completions or not is_pod_failed(pod, job) or ix in succeeded or ix in failed
                or ix in active):
            continue
        last = out.get(ix)
        if last is None or (index_absolute_failure_count(last) <= index_absolute_failure_count(pod)
                            and pod_finished_time(pod) >= pod_finished_time(last)):
            out[ix] = pod
    return out


def duplicated_index_pods_for_removal(pods: list[JsonDict], completions: int) -> tuple[list[JsonDict], list[JsonDict]]:
    """appendDuplicatedIndexPodsForRemoval: (pods to delete, pods kept), by index order: pods
    without a valid index or past `completions` go, and of each index only the pod the
    ActivePods order deletes last stays."""
    ordered = sorted(pods, key=lambda p: -1 if (ix := completion_index(p)) is None else ix)
    rm: list[JsonDict] = []
    left: list[JsonDict] = []

    def settle_group(group: list[JsonDict], ix: int | None) -> None:
        if not group:
            return
        if ix is None:
            rm.extend(group)
        elif len(group) == 1:
            left.append(group[0])
        else:
            ranked = rank_pods_for_deletion(group, [])
            rm.extend(ranked[:-1])
            left.append(ranked[-1])

    group: list[JsonDict] = []
    current: int | None = None
    for i, pod in enumerate(ordered):
        ix = completion_index(pod)
        if ix is not None and ix >= completions:
            rm.extend(ordered[i:])
            break
        if group and ix != current:
            settle_group(group, current)
            group = []
        current = ix
        group.append(pod)
    settle_group(group, current)
    return rm, left


def _add_index_env(container: JsonDict) -> None:
    env = container.setdefault("env", [])
    if any(isinstance(e, dict) and e.get("name") == COMPLETION_INDEX_ENV for e in env):
        return
    env.append({"name": COMPLETION_INDEX_ENV,
                "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{COMPLETION_INDEX}']"}}})


def pod_from_job_template(job: JsonDict, index: int | None = None,
                          replacing: JsonDict | None = None) -> JsonDict:
    """GetPodFromTemplate plus the tracking finalizer: generateName `<job>-`, a controller
    ownerReference (batch/v1 Job, blockOwnerDeletion); with a completion `index` (Indexed Jobs)
    also its annotation and label, hostname `<job>-<index>`, generateName `<job>-<index>-` and
    the JOB_COMPLETION_INDEX env var in every (init) container."""
    m = meta(job)
    template = (job.get("spec") or {}).get("template") or {}
    tmeta = template.get("metadata") or {}
    finalizers = list(tmeta.get("finalizers") or [])
    if JOB_TRACKING_FINALIZER not in finalizers:
        finalizers.append(JOB_TRACKING_FINALIZER)
    pod_meta: JsonDict = {
        "generateName": f"{m.get('name')}-",
        "namespace": m.get("namespace"),
        "labels": dict(tmeta.get("labels") or {}),
        "finalizers": finalizers,
        "ownerReferences": [make_controller_ref(job, api_version="batch/v1", kind="Job")],
    }
    if tmeta.get("annotations"):
        pod_meta["annotations"] = dict(tmeta["annotations"])
    spec = copy.deepcopy(template.get("spec") or {})
    if index is not None:
        for key in ("initContainers", "containers"):
            for c in spec.get(key) or ():
                if isinstance(c, dict):
                    _add_index_env(c)
        pod_meta.setdefault("annotations", {})[COMPLETION_INDEX] = str(index)
        if has_backoff_limit_per_index(job):
            # addIndexFailureCountAnnotation: the replaced pod's counts, one more where it failed
            failures, ignored = new_index_failure_counts(job, replacing)
            pod_meta["annotations"][INDEX_FAILURE_COUNT] = str(failures)
            if ignored > 0:
                pod_meta["annotations"][INDEX_IGNORED_FAILURE_COUNT] = str(ignored)
        pod_meta["labels"][COMPLETION_INDEX] = str(index)
        spec["hostname"] = f"{m.get('name')}-{index}"
        pod_meta["generateName"] = pod_generate_name_with_index(str(m.get("name") or ""), index)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": pod_meta,
        "spec": spec,
    }


REMOVE_FINALIZER_PATCH: JsonDict = {
    "metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}
}


# --------------------------------------------------------------------------- controller state


@dataclass(slots=True)
class BackoffRecord:
    """backoffRecord: failures since the last success and the time of the latest one."""

    failures_after_last_success: int = 0
    last_failure: datetime | None = None


def new_backoff_record(old: BackoffRecord | None, succeeded: list[JsonDict], failed: list[JsonDict]) -> BackoffRecord:
    """backoffStore.newBackoffRecord: the stored record (or an empty one) updated with the newly
    finished pods: failures only add up; a success resets the count to the failures that
    finished after the latest success."""
    old = old or BackoffRecord()
    failed_times = sorted(pod_finished_time(p) for p in failed)
    if not succeeded:
        if not failed_times:
            return BackoffRecord(old.failures_after_last_success, old.last_failure)
        return BackoffRecord(old.failures_after_last_success + len(failed_times), failed_times[-1])
    rec = BackoffRecord()
    last_success = max(pod_finished_time(p) for p in succeeded)
    for t in reversed(failed_times):
        if t <= last_success:
            break
        if rec.last_failure is None:
            rec.last_failure = t
        rec.failures_after_last_success += 1
    return rec


@dataclass(slots=True)
class _Ctx:
    """syncJobCtx: what one sync learnt about a Job and its pods."""

    job: JsonDict
    pods: list[JsonDict]
    active_pods: list[JsonDict]
    ready: int
    terminating: int
    succeeded: int = 0
    failed: int = 0
    uncounted_succeeded: set[str] = field(default_factory=set)
    uncounted_failed: set[str] = field(default_factory=set)
    expected_rm: set[str] = field(default_factory=set)
    finished: JsonDict | None = None
    backoff: BackoffRecord = field(default_factory=BackoffRecord)
    # Indexed Jobs: the indexes status.completedIndexes lists, and with the pods that succeeded since
    prev_succeeded_indexes: set[int] = field(default_factory=set)
    succeeded_indexes: set[int] = field(default_factory=set)
    # backoffLimitPerIndex: the failed indexes, and per pending index its last failed pod
    failed_indexes: set[int] | None = None
    delayed_deletion: dict[int, JsonDict] = field(default_factory=dict)


def _valid_index(job: JsonDict, pod: JsonDict) -> bool:
    """True for every pod of a NonIndexed Job; for an Indexed one, a pod whose index is in range."""
    if not is_indexed(job):
        return True
    ix = completion_index(pod)
    return ix is not None and ix < get_int(job.get("spec"), "completions")


def _uid(obj: JsonDict) -> str:
    return str(meta(obj).get("uid") or "")


class JobController:
    """Upstream job.Controller plus ttlafterfinished.Controller, one worker pass per Job key."""

    NAME = "job-controller"
    TTL_NAME = "ttl-after-finished-controller"

    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        *,
        clock: Clock | None = None,
        sync_batch_period: float = SYNC_JOB_BATCH_PERIOD,
        pod_failure_backoff: float = DEFAULT_POD_FAILURE_BACKOFF,
        max_pod_failure_backoff: float = MAX_POD_FAILURE_BACKOFF,
        ttl_propagation_policy: str = "Foreground",
    ) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._batch = sync_batch_period
        self._backoff_base = pod_failure_backoff
        self._backoff_cap = max_pod_failure_backoff
        self._ttl_policy = ttl_propagation_policy
        self._job_inf = informers.informer(JOBS)
        self._pod_inf = informers.informer(PODS)
        self._job_inf.add_index(NAMESPACE_INDEX, _namespace_index)
        self._pod_inf.add_index(NAMESPACE_INDEX, _namespace_index)
        self._pod_inf.add_index(POD_CONTROLLER_UID_INDEX, pod_controller_uid_index)
        self.expectations = Expectations(self._clock)
        self._finalizer_expectations: dict[str, set[str]] = {}
        self.backoff_store: dict[str, BackoffRecord] = {}
        self.queue = WorkQueue()
        self.orphan_queue = WorkQueue()
        self.ttl_queue = WorkQueue()
        self.recorder = EventRecorder(client, self.NAME, clock=self._clock)
        self._job_inf.add_handler(
            on_add=self._job_added, on_update=self._job_updated, on_delete=self._job_deleted
        )
        self._pod_inf.add_handler(
            on_add=self._pod_added,
            on_update=self._pod_updated,
            on_delete=lambda p: self._pod_deleted(p, final=True),
        )

    # ---- handlers (fast: enqueue only)

    def _enqueue_batched(self, job: JsonDict) -> None:
        self.queue.add_after(object_key(job), self._batch)

    def _job_added(self, job: JsonDict) -> None:
        self.queue.add(object_key(job))
        self._ttl_maybe_enqueue(job)

    def _job_updated(self, old: JsonDict, cur: JsonDict) -> None:
        key = object_key(cur)
        if get_int(meta(cur), "generation") == get_int(meta(old), "generation"):
            self._enqueue_batched(cur)
        else:
            self.queue.add(key)
        if is_job_finished(cur):
            self._cleanup_pod_finalizers(cur)
        start = parse_time((cur.get("status") or {}).get("startTime"))
        ads = (cur.get("spec") or {}).get("activeDeadlineSeconds")
        old_ads = (old.get("spec") or {}).get("activeDeadlineSeconds")
        if start is not None and ads is not None and ads != old_ads:
            passed = (self._clock.now() - start).total_seconds()
            self.queue.add_after(key, float(ads) - passed)
        self._ttl_maybe_enqueue(cur)

    def _job_deleted(self, job: JsonDict) -> None:
        self.queue.add(object_key(job))
        self._cleanup_pod_finalizers(job)

    def _cleanup_pod_finalizers(self, job: JsonDict) -> None:
        for pod in pods_by_owner(self._pod_inf, job, include_orphans=False):
            if has_tracking_finalizer(pod):
                self.orphan_queue.add(object_key(pod))

    def _resolve(self, namespace: str, ref: JsonDict | None) -> JsonDict | None:
        if not ref or ref.get("kind") != "Job":
            return None
        job = self._job_inf.store.get(f"{namespace}/{ref.get('name')}")
        if job is None or _uid(job) != ref.get("uid"):
            return None
        return job

    def get_pod_jobs(self, pod: JsonDict) -> list[JsonDict]:
        """getPodJobs: the Jobs of the pod's namespace whose selector matches its labels (none
        for a pod without labels)."""
        labels = meta(pod).get("labels") or {}
        if not labels:
            return []
        out = []
        for job in self._job_inf.by_index(NAMESPACE_INDEX, meta(pod).get("namespace") or ""):
            try:
                sel = label_selector_from_dict((job.get("spec") or {}).get("selector"))
            except ValueError:
                continue
            if not sel.empty and sel.matches(labels):
                out.append(job)
        return out

    def _finalizer_removal_observed(self, key: str, uid: str) -> None:
        s = self._finalizer_expectations.get(key)
        if s is not None:
            s.discard(uid)

    def _pod_added(self, pod: JsonDict) -> None:
        if is_deleting(pod):
            self._pod_deleted(pod, final=False)
            return
        ref = controller_ref(pod)
        if ref is not None:
            job = self._resolve(meta(pod).get("namespace") or "", ref)
            if job is not None:
                self.expectations.creation_observed(object_key(job))
                self._enqueue_batched(job)
            return
        if has_tracking_finalizer(pod):
            self.orphan_queue.add(object_key(pod))
        for job in self.get_pod_jobs(pod):
            self._enqueue_batched(job)

    def _pod_updated(self, old: JsonDict, cur: JsonDict) -> None:
        if meta(old).get("resourceVersion") == meta(cur).get("resourceVersion"):
            return
        if is_deleting(cur):
            self._pod_deleted(cur, final=False)
            return
        ns = meta(cur).get("namespace") or ""
        removed = not has_tracking_finalizer(cur)
        cur_ref, old_ref = controller_ref(cur), controller_ref(old)
        if old_ref is not None and old_ref != cur_ref:
            job = self._resolve(ns, old_ref)
            if job is not None:
                if removed:
                    self._finalizer_removal_observed(object_key(job), _uid(cur))
                self._enqueue_batched(job)
        if cur_ref is not None:
            job = self._resolve(ns, cur_ref)
            if job is None:
                return
            if removed:
                self._finalizer_removal_observed(object_key(job), _uid(cur))
            self._enqueue_batched(job)
            return
        if has_tracking_finalizer(cur):
            self.orphan_queue.add(object_key(cur))
        if meta(old).get("labels") != meta(cur).get("labels") or old_ref != cur_ref:
            for job in self.get_pod_jobs(cur):
                self._enqueue_batched(job)

    def _pod_deleted(self, pod: JsonDict, *, final: bool) -> None:
        ref = controller_ref(pod)
        has_fin = has_tracking_finalizer(pod)
        if ref is None:
            if has_fin and not final:
                self.orphan_queue.add(object_key(pod))
            return
        job = self._resolve(meta(pod).get("namespace") or "", ref)
        if job is None or is_job_finished(job):
            if has_fin and not final:
                self.orphan_queue.add(object_key(pod))
            return
        key = object_key(job)
        self.expectations.deletion_observed(key, object_key(pod))
        if final or not has_fin:
            self._finalizer_removal_observed(key, _uid(pod))
        self._enqueue_batched(job)

    # ---- run

    async def run(self, workers: int = 5) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            await self._job_inf.wait_for_sync()
            await self._pod_inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(
                run_workers(self.queue, self.sync, workers=workers, name=self.NAME),
                name=f"{self.NAME}-workers",
            )
            tg.create_task(
                run_workers(self.orphan_queue, self.sync_orphan_pod, workers=1, name=f"{self.NAME}-orphans"),
                name=f"{self.NAME}-orphan-workers",
            )
            tg.create_task(
                run_workers(self.ttl_queue, self.sync_ttl, workers=workers, name=self.TTL_NAME),
                name=f"{self.TTL_NAME}-workers",
            )

    # ---- orphan pods

    async def sync_orphan_pod(self, key: str) -> None:
        """syncOrphanPod: drop the tracking finalizer of a pod no unfinished Job controls."""
        pod = self._pod_inf.store.get(key)
        if pod is None or not has_tracking_finalizer(pod):
            return
        ref = controller_ref(pod)
        if ref is not None:
            if ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
                return
            job = self._resolve(meta(pod).get("namespace") or "", ref)
            if job is not None and not is_job_finished(job):
                return
        m = meta(pod)
        try:
            await self._client.patch(
                PODS, m["name"], REMOVE_FINALIZER_PATCH, m.get("namespace"), patch_type="strategic", read_only=True)
        except NotFoundError:
            pass

    # ---- sync

    async def sync(self, key: str) -> None:
        shared = self._job_inf.store.get(key)
        if shared is None:
            self.expectations.delete(key)
            self._finalizer_expectations.pop(key, None)
            self.backoff_store.pop(key, None)
            return
        if is_job_finished(shared):
            self.backoff_store.pop(key, None)
            return
        spec = shared.get("spec") or {}
        if spec.get("managedBy") not in (None, "kubernetes.io/job-controller"):
            return
        if spec.get("completionMode") not in (None, "NonIndexed", "Indexed"):
            logger.info(
                "%s: completion mode not supported job=%s mode=%s", self.NAME, key, spec.get("completionMode")
            )
            return
        job = copy.deepcopy(shared)
        status = job.setdefault("status", {})
        uncounted = status.get("uncountedTerminatedPods") or {}
        status["uncountedTerminatedPods"] = uncounted
        now_dt = self._clock.now()
        now = rfc3339(now_dt)

        satisfied = self.expectations.satisfied(key)
        pods = await self._get_pods_for_job(job)
        active_pods = [p for p in pods if is_pod_active(p)]
        ctx = _Ctx(
            job=job,
            pods=pods,
            active_pods=active_pods,
            ready=sum(1 for p in active_pods if is_pod_ready(p)),
            terminating=sum(1 for p in pods if is_pod_terminating(p)),
            uncounted_succeeded=set(uncounted.get("succeeded") or []),
            uncounted_failed=set(uncounted.get("failed") or []),
            expected_rm=set(self._finalizer_expectations.get(key) or ()),
        )
        active = len(active_pods)
        new_succeeded = [
            p
            for p in self._uncounted_candidates(ctx, ctx.uncounted_succeeded)
            if (p.get("status") or {}).get("phase") == "Succeeded"
        ]
        new_failed = [
            p for p in self._uncounted_candidates(ctx, ctx.uncounted_failed) if is_pod_failed(p, job)
        ]
        if is_indexed(job):
            ctx.prev_succeeded_indexes, ctx.succeeded_indexes = calculate_succeeded_indexes(job, pods)
            ctx.succeeded = len(ctx.succeeded_indexes)
        else:
            ctx.succeeded = get_int(status, "succeeded") + len(new_succeeded) + len(ctx.uncounted_succeeded)
        ctx.failed = (get_int(status, "failed") + sum(1 for p in new_failed if counts_as_failure(job, p))
                      + len(ctx.uncounted_failed))
        suspended = bool(spec.get("suspend"))

        if status.get("startTime") is None and not suspended:
            status["startTime"] = now
        ctx.backoff = new_backoff_record(self.backoff_store.get(key), new_succeeded, new_failed)

        manage_error: Exception | None = None
        ctx.finished = self._condition_true(job, SUCCESS_CRITERIA_MET)
        if ctx.finished is None:
            target = self._condition_true(job, FAILURE_TARGET)
            if target is not None:
                ctx.finished = new_condition(
                    FAILED, "True", target.get("reason") or "", target.get("message") or "", now
                )
        if ctx.finished is None:
            message = fail_job_message(job, pods)
            if message is not None:
                ctx.finished = new_condition(FAILURE_TARGET, "True", REASON_POD_FAILURE_POLICY, message, now)
        if has_backoff_limit_per_index(job):
            self._per_index_failures(job, ctx, now)
        if ctx.finished is None:
            if ctx.failed > get_int(spec, "backoffLimit", 6) or past_backoff_limit_on_failure(job, pods):
                ctx.finished = new_condition(
                    FAILURE_TARGET, "True", REASON_BACKOFF_LIMIT, MSG_BACKOFF_LIMIT, now
                )
            elif self._past_active_deadline(job, now_dt):
                ctx.finished = new_condition(FAILURE_TARGET, "True", REASON_DEADLINE, MSG_DEADLINE, now)
            elif spec.get("activeDeadlineSeconds") is not None and not suspended:
                start = parse_time(status.get("startTime")) or now_dt
                remaining = float(spec["activeDeadlineSeconds"]) - (now_dt - start).total_seconds()
                self.queue.add_after(key, remaining)
        if ctx.finished is None and is_indexed(job):
            matched = match_success_policy(job, ctx.succeeded_indexes)
            if matched is not None:
                ctx.finished = new_condition(SUCCESS_CRITERIA_MET, "True", REASON_SUCCESS_POLICY, matched, now)

        suspend_changed = False
        if ctx.finished is not None:
            deleted_ready, deleted, err = await self._delete_active_pods(job, ctx.active_pods)
            if deleted != active or not satisfied:
                ctx.finished = None
            active -= deleted
            ctx.terminating += deleted
            ctx.ready -= deleted_ready
            manage_error = err
        else:
            manage_called = False
            if satisfied and not is_deleting(job):
                active, manage_error = await self._manage_job(job, ctx, key)
                manage_called = True
            if spec.get("completions") is None:
                complete = ctx.succeeded > 0 and active == 0
            else:
                complete = ctx.succeeded >= get_int(spec, "completions") and active == 0
            if complete:
                ctx.finished = new_condition(
                    SUCCESS_CRITERIA_MET, "True", REASON_COMPLETIONS_REACHED, MSG_COMPLETIONS_REACHED, now
                )
            elif manage_called:
                conds = status.setdefault("conditions", [])
                if suspended:
                    if ensure_condition(conds, SUSPENDED, "True", "JobSuspended", "Job suspended", now):
                        suspend_changed = True
                        self.recorder.event(job, "Normal", "Suspended", "Job suspended")
                elif ensure_condition(conds, SUSPENDED, "False", "JobResumed", "Job resumed", now):
                    suspend_changed = True
                    self.recorder.event(job, "Normal", "Resumed", "Job resumed")
                    status["startTime"] = now
                if not conds:
                    status.pop("conditions", None)

        needs_update = (
            suspend_changed
            or active != get_int(status, "active")
            or status.get("ready") != ctx.ready
            or status.get("terminating") != ctx.terminating
        )
        status["active"] = active
        status["ready"] = ctx.ready
        status["terminating"] = ctx.terminating
        await self._track_status_and_remove_finalizers(ctx, key, needs_update)
        if manage_error is not None:
            raise manage_error

    @staticmethod
    def _per_index_failures(job: JsonDict, ctx: _Ctx, now: str) -> None:
        """calculateFailedIndexes, the two per-index finish conditions, and
        getPodsWithDelayedDeletionPerIndex (the last failed pod of each index to be recreated)."""
        spec = job.get("spec") or {}
        completions = get_int(spec, "completions")
        failed = calculate_failed_indexes(job, ctx.pods)
        ctx.failed_indexes = failed
        if ctx.finished is None:
            max_failed = spec.get("maxFailedIndexes")
            if isinstance(max_failed, int) and len(failed) > max_failed:
                ctx.finished = new_condition(FAILURE_TARGET, "True", REASON_MAX_FAILED_INDEXES,
                                             MSG_MAX_FAILED_INDEXES, now)
            elif failed and len(failed) + len(ctx.succeeded_indexes) >= completions:
                ctx.finished = new_condition(FAILURE_TARGET, "True", REASON_FAILED_INDEXES, MSG_FAILED_INDEXES, now)
        ctx.delayed_deletion = pods_with_delayed_deletion_per_index(
            job, ctx.pods, succeeded=ctx.succeeded_indexes, failed=failed, expected_rm=ctx.expected_rm)

    def _uncounted_candidates(self, ctx: _Ctx, uncounted: set[str]) -> list[JsonDict]:
        """getValidPodsWithFilter's precondition: pods still carrying the finalizer, neither
        listed as uncounted nor expected to lose their finalizer (and, for an Indexed Job, with
        a valid index)."""
        return [
            p
            for p in ctx.pods
            if has_tracking_finalizer(p) and _uid(p) not in uncounted and _uid(p) not in ctx.expected_rm
            and _valid_index(ctx.job, p)
        ]

    @staticmethod
    def _condition_true(job: JsonDict, cond_type: str) -> JsonDict | None:
        c = find_condition(job, cond_type)
        return c if c is not None and c.get("status") == "True" else None

    def _past_active_deadline(self, job: JsonDict, now: datetime) -> bool:
        spec = job.get("spec") or {}
        ads = spec.get("activeDeadlineSeconds")
        start = parse_time((job.get("status") or {}).get("startTime"))
        if ads is None or start is None or spec.get("suspend"):
            return False
        return (now - start).total_seconds() >= float(ads)

    async def _get_pods_for_job(self, job: JsonDict) -> list[JsonDict]:
        """getPodsForJob: owned pods that still match, plus adopted orphans (ownerReference and
        tracking finalizer added); owned pods that stopped matching are released."""
        try:
            selector: LabelSelector | None = label_selector_from_dict((job.get("spec") or {}).get("selector"))
        except ValueError:
            selector = None
        uid = _uid(job)
        out: list[JsonDict] = []
        adopt: list[JsonDict] = []
        for pod in pods_by_owner(self._pod_inf, job, include_orphans=True):
            labels = meta(pod).get("labels") or {}
            matches = selector is not None and not selector.empty and selector.matches(labels)
            ref = controller_ref(pod)
            if ref is not None:
                if ref.get("uid") != uid:
                    continue
                if matches:
                    out.append(pod)
                elif not is_deleting(job):
                    await self._patch_pod(
                        pod,
                        {
                            "metadata": {
                                "ownerReferences": [
                                    r for r in meta(pod).get("ownerReferences") or [] if r.get("uid") != uid
                                ]
                                or None,
                                "uid": meta(pod).get("uid"),
                            }
                        },
                    )
                continue
            if matches and not is_deleting(job) and not is_deleting(pod):
                adopt.append(pod)
        if adopt and await self._can_adopt(job):
            for pod in adopt:
                refs = [dict(r) for r in meta(pod).get("ownerReferences") or []]
                refs.append(make_controller_ref(job, api_version="batch/v1", kind="Job"))
                fins = list(meta(pod).get("finalizers") or [])
                if JOB_TRACKING_FINALIZER not in fins:
                    fins.append(JOB_TRACKING_FINALIZER)
                adopted = await self._patch_pod(
                    pod,
                    {
                        "metadata": {
                            "ownerReferences": refs,
                            "finalizers": fins,
                            "uid": meta(pod).get("uid"),
                            "resourceVersion": meta(pod).get("resourceVersion"),
                        }
                    },
                )
                if adopted is not None:
                    out.append(adopted)
        return out

    async def _can_adopt(self, job: JsonDict) -> bool:
        m = meta(job)
        try:
            fresh = await self._client.get(JOBS, m["name"], m.get("namespace"))
        except NotFoundError:
            return False
        return _uid(fresh) == m.get("uid") and not is_deleting(fresh)

    async def _patch_pod(self, pod: JsonDict, patch: JsonDict) -> JsonDict | None:
        m = meta(pod)
        try:
            return await self._client.patch(PODS, m["name"], patch, m.get("namespace"))
        except (NotFoundError, ConflictError):
            return None

    async def _delete_pod(self, job: JsonDict, pod: JsonDict) -> None:
        m = meta(pod)
        await self._client.delete(PODS, m["name"], m.get("namespace"))
        self.recorder.event(job, "Normal", "SuccessfulDelete", f"Deleted pod: {m.get('name')}")

    async def _delete_active_pods(
        self, job: JsonDict, pods: list[JsonDict]
    ) -> tuple[int, int, Exception | None]:
        """deleteActivePods: DELETE each active pod, keeping its finalizer (counted later)."""
        results = await asyncio.gather(*(self._delete_pod(job, p) for p in pods), return_exceptions=True)
        deleted = deleted_ready = 0
        error: Exception | None = None
        for pod, r in zip(pods, results, strict=True):
            if isinstance(r, asyncio.CancelledError):
                raise r
            if isinstance(r, Exception) and not isinstance(r, NotFoundError):
                error = error or r
            else:
                deleted += 1
            if is_pod_ready(pod):
                deleted_ready += 1
        return deleted_ready, deleted, error

    async def _delete_job_pods(
        self, job: JsonDict, key: str, pods: list[JsonDict]
    ) -> tuple[int, int, Exception | None]:
        """deleteJobPods: remove the finalizer (the pod will not count) then DELETE."""

        async def one(pod: JsonDict) -> None:
            m = meta(pod)
            try:
                if has_tracking_finalizer(pod):
                    await self._client.patch(
                        PODS, m["name"], REMOVE_FINALIZER_PATCH, m.get("namespace"), patch_type="strategic", read_only=True)
                await self._delete_pod(job, pod)
            except Exception:
                self.expectations.deletion_observed(key, object_key(pod))
                raise

        results = await asyncio.gather(*(one(p) for p in pods), return_exceptions=True)
        deleted = deleted_ready = 0
        error: Exception | None = None
        for pod, r in zip(pods, results, strict=True):
            if isinstance(r, asyncio.CancelledError):
                raise r
            if isinstance(r, Exception) and not isinstance(r, NotFoundError):
                error = error or r
            else:
                deleted += 1
            if is_pod_ready(pod):
                deleted_ready += 1
        return deleted_ready, deleted, error

    async def _manage_job(self, job: JsonDict, ctx: _Ctx, key: str) -> tuple[int, Exception | None]:
        """manageJob: delete surplus (or all, when suspended) active pods, else create the
        missing ones in slow-start batches, honouring the pod-failure backoff."""
        active = len(ctx.active_pods)
        spec = job.get("spec") or {}
        if spec.get("suspend"):
            victims = rank_pods_for_deletion(ctx.active_pods, [], now=self._clock.now())
            self.expectations.expect_deletions(key, [object_key(p) for p in victims])
            ready, removed, err = await self._delete_job_pods(job, key, victims)
            ctx.terminating += removed
            ctx.ready -= ready
            return active - removed, err
        want = want_active(job, ctx.succeeded, active)
        surplus = max(0, active - want)
        victims = self._pods_for_removal(job, ctx.active_pods, surplus)
        if victims:
            victims = victims[:MAX_POD_CREATE_DELETE_PER_SYNC]
            self.expectations.expect_deletions(key, [object_key(p) for p in victims])
            ready, removed, err = await self._delete_job_pods(job, key, victims)
            ctx.terminating += removed
            ctx.ready -= ready
            return active - removed, err
        terminating = ctx.terminating if only_replace_failed_pods(job) else 0
        diff = want - terminating - active
        if diff <= 0:
            return active, None
        per_index = has_backoff_limit_per_index(job)
        remaining = 0.0 if per_index else backoff_remaining(
            ctx.backoff.failures_after_last_success,
            ctx.backoff.last_failure,
            self._clock.now(),
            base=self._backoff_base,
            cap=self._backoff_cap,
        )
        if remaining > 0:
            self.queue.add_after(key, max(remaining, self._batch))
            return 0, None
        diff = min(diff, MAX_POD_CREATE_DELETE_PER_SYNC)
        indexes: list[int | None] = [None] * diff
        if is_indexed(job):
            pending = first_pending_indexes(job, ctx.pods, ctx.active_pods, ctx.succeeded_indexes, ctx.failed_indexes,
                                            diff, get_int(spec, "completions"))
            if per_index:
                pending, wait = self._indexes_ready(ctx, pending)
                if not pending:
                    self.queue.add_after(key, max(wait, self._batch))
                    return 0, None
            indexes = list(pending)
            diff = len(indexes)
            if diff == 0:
                return active, None
        self.expectations.expect_creations(key, diff)
        created = 0
        error: Exception | None = None
        for batch in slow_start_batches(diff):
            chunk, indexes = indexes[:batch], indexes[batch:]
            results = await asyncio.gather(
                *(self._create_pod(job, ix, ctx.delayed_deletion.get(ix) if ix is not None else None)
                  for ix in chunk), return_exceptions=True
            )
            for r in results:
                if isinstance(r, asyncio.CancelledError):
                    raise r
            failures = [r for r in results if isinstance(r, Exception)]
            created += batch - len(failures)
            if failures:
                error = failures[0]
                break
        if created < diff:
            self.expectations.lower_creations(key, diff - created)
        return active + created, error

    @staticmethod
    def _pods_for_removal(job: JsonDict, active: list[JsonDict], at_least: int) -> list[JsonDict]:
        """activePodsForRemoval: for an Indexed Job first every active pod without a valid index
        or repeating one (of each index the pod ActivePods ranks best stays), then, up to
        `at_least`, the pods ActivePods orders first (no logarithmic time buckets: Jobs sort
        with controller.ActivePods, not the ReplicaSet's ranking)."""
        if is_indexed(job):
            rm, left = duplicated_index_pods_for_removal(active, get_int(job.get("spec"), "completions"))
        else:
            rm, left = [], list(active)
        if len(rm) < at_least:
            rm.extend(rank_pods_for_deletion(left, [])[:at_least - len(rm)])
        return rm

    def _indexes_ready(self, ctx: _Ctx, pending: list[int]) -> tuple[list[int], float]:
        """getPodCreationInfoForIndependentIndexes: the pending indexes whose own backoff (10 s
        doubling per absolute failure of the index) is over, else the shortest wait."""
        ready: list[int] = []
        wait = float("inf")
        now = self._clock.now()
        for ix in pending:
            left = remaining_time_per_index(ctx.delayed_deletion.get(ix), now, base=self._backoff_base,
                                            cap=self._backoff_cap)
            if left <= 0:
                ready.append(ix)
            else:
                wait = min(wait, left)
        return ready, (0.0 if ready else wait)

    async def _create_pod(self, job: JsonDict, index: int | None = None,
                          replacing: JsonDict | None = None) -> JsonDict:
        m = meta(job)
        try:
            pod = await self._client.create(PODS, pod_from_job_template(job, index, replacing), m.get("namespace"),
                                            read_only=True)
        except ApiError as e:
            self.recorder.event(job, "Warning", "FailedCreate", f"Error creating: {e.message}")
            raise
        self.recorder.event(job, "Normal", "SuccessfulCreate", f"Created pod: {meta(pod).get('name')}")
        return pod

    # ---- status tracking

    async def _track_status_and_remove_finalizers(self, ctx: _Ctx, key: str, needs_flush: bool) -> None:
        """trackJobStatusAndRemoveFinalizers: list newly finished pods as uncounted, flush,
        remove their finalizers, move them into the counters, then enact the finish."""
        job = ctx.job
        status = job["status"]
        uncounted = status["uncountedTerminatedPods"]
        indexed = is_indexed(job)
        per_index = has_backoff_limit_per_index(job)
        completions = get_int(job.get("spec"), "completions")
        new_indexes: set[int] = set()
        with_finalizer = {
            _uid(p) for p in ctx.pods if has_tracking_finalizer(p) and _uid(p) not in ctx.expected_rm
        }
        if self._clean_uncounted(status, with_finalizer):
            needs_flush = True
        to_remove: list[JsonDict] = []
        for pod in ctx.pods:
            uid = _uid(pod)
            if not has_tracking_finalizer(pod) or uid in ctx.expected_rm:
                continue
            failed = is_pod_failed(pod, job)
            can_remove = (
                is_deleting(job)
                or ctx.finished is not None
                or (pod.get("status") or {}).get("phase") == "Succeeded"
                or failed
            )
            if can_remove and failed and not is_deleting(job) and ctx.finished is None and per_index:
                # canRemoveFinalizer: an index's last failed pod stays until its replacement exists
                ix = completion_index(pod)
                kept = ctx.delayed_deletion.get(ix) if ix is not None else None
                can_remove = kept is None or _uid(kept) != uid
            if not can_remove:
                continue
            to_remove.append(pod)
            succ_list = uncounted.setdefault("succeeded", [])
            fail_list = uncounted.setdefault("failed", [])
            if (pod.get("status") or {}).get("phase") == "Succeeded" and uid not in ctx.uncounted_failed:
                if indexed:
                    # the completion index is enough not to count a pod twice: no uid tracked
                    ix = completion_index(pod)
                    if ix is not None and ix < completions and ix not in ctx.prev_succeeded_indexes:
                        new_indexes.add(ix)
                        needs_flush = True
                elif uid not in ctx.uncounted_succeeded and uid not in succ_list:
                    succ_list.append(uid)
                    needs_flush = True
            elif failed or (ctx.finished is not None and ctx.finished.get("type") != SUCCESS_CRITERIA_MET):
                if (uid not in ctx.uncounted_failed and uid not in fail_list and _valid_index(job, pod)
                        and counts_as_failure(job, pod)):
                    fail_list.append(uid)
                    needs_flush = True
            if not succ_list:
                uncounted.pop("succeeded", None)
            if not fail_list:
                uncounted.pop("failed", None)
            if (
                len(uncounted.get("succeeded") or []) + len(uncounted.get("failed") or [])
                >= MAX_UNCOUNTED_PODS
            ):
                break
        if indexed:
            done = format_indexes(ctx.prev_succeeded_indexes | new_indexes)
            if done != (status.get("completedIndexes") or ""):
                needs_flush = True
            status["succeeded"] = len(ctx.prev_succeeded_indexes | new_indexes)
            if done:
                status["completedIndexes"] = done
            else:
                status.pop("completedIndexes", None)
        if per_index:
            failed_text = format_indexes(ctx.failed_indexes or set())
            if status.get("failedIndexes") != failed_text:
                status["failedIndexes"] = failed_text
                needs_flush = True
        now = rfc3339(self._clock.now())
        conds = status.setdefault("conditions", [])
        if ctx.finished is not None and ctx.finished.get("type") == FAILURE_TARGET:
            conds.append(ctx.finished)
            needs_flush = True
            ctx.finished = new_condition(
                FAILED, "True", ctx.finished.get("reason") or "", ctx.finished.get("message") or "", now
            )
        if ctx.finished is not None and ctx.finished.get("type") == SUCCESS_CRITERIA_MET:
            if self._condition_true(job, SUCCESS_CRITERIA_MET) is None:
                conds.append(ctx.finished)
                needs_flush = True
            ctx.finished = new_condition(
                COMPLETE, "True", ctx.finished.get("reason") or "", ctx.finished.get("message") or "", now
            )
        if not conds:
            status.pop("conditions", None)

        # flush uncounted pods, then remove finalizers, then fold them into the counters
        if needs_flush:
            job = await self._update_status(job)
            self.backoff_store[key] = ctx.backoff
            needs_flush = False
        rm_error: Exception | None = None
        if to_remove:
            self._finalizer_expectations.setdefault(key, set()).update(_uid(p) for p in to_remove)
            results = await asyncio.gather(
                *(
                    self._client.patch(
                        PODS,
                        meta(p)["name"],
                        REMOVE_FINALIZER_PATCH,
                        meta(p).get("namespace"),
                        patch_type="strategic",
                    )
                    for p in to_remove
                ),
                return_exceptions=True,
            )
            for pod, r in zip(to_remove, results, strict=True):
                if isinstance(r, asyncio.CancelledError):
                    raise r
                if isinstance(r, Exception):
                    self._finalizer_removal_observed(key, _uid(pod))
                    if not isinstance(r, NotFoundError):
                        rm_error = rm_error or r
                        continue
                with_finalizer.discard(_uid(pod))
        status = job.setdefault("status", {})
        status.setdefault("uncountedTerminatedPods", {})
        if self._clean_uncounted(status, with_finalizer):
            needs_flush = True
        if rm_error is not None:
            if needs_flush:
                await self._update_status(job)
            raise rm_error
        finished = self._enact_finished(ctx, job)
        if finished or needs_flush:
            job = await self._update_status(job)
            if finished and ctx.finished is not None:
                self._record_finished(job, ctx.finished)

    @staticmethod
    def _clean_uncounted(status: JsonDict, with_finalizer: set[str]) -> bool:
        """cleanUncountedPodsWithoutFinalizers: uids whose finalizer is gone become counts."""
        uncounted = status.setdefault("uncountedTerminatedPods", {})
        changed = False
        for field_name, counter in (("succeeded", "succeeded"), ("failed", "failed")):
            cur = list(uncounted.get(field_name) or [])
            keep = [u for u in cur if u in with_finalizer]
            if len(keep) != len(cur):
                changed = True
                status[counter] = get_int(status, counter) + len(cur) - len(keep)
                if keep:
                    uncounted[field_name] = keep
                else:
                    uncounted.pop(field_name, None)
        return changed

    def _enact_finished(self, ctx: _Ctx, job: JsonDict) -> bool:
        """enactJobFinished: the terminal condition waits for uncounted and terminating pods."""
        if ctx.finished is None:
            return False
        status = job.setdefault("status", {})
        uncounted = status.get("uncountedTerminatedPods") or {}
        if uncounted.get("succeeded") or uncounted.get("failed"):
            return False
        if ctx.terminating > 0:
            return False
        fin = ctx.finished
        conds = status.setdefault("conditions", [])
        ensure_condition(
            conds,
            fin["type"],
            fin["status"],
            fin.get("reason") or "",
            fin.get("message") or "",
            rfc3339(self._clock.now()),
        )
        if fin["type"] == COMPLETE:
            done = next(c for c in conds if c.get("type") == COMPLETE)
            status["completionTime"] = done.get("lastTransitionTime")
        return True

    def _record_finished(self, job: JsonDict, fin: JsonDict) -> None:
        spec = job.get("spec") or {}
        if fin.get("type") == COMPLETE:
            completions = spec.get("completions")
            if completions is not None and get_int(job.get("status"), "succeeded") > completions:
                self.recorder.event(
                    job,
                    "Warning",
                    "TooManySucceededPods",
                    "Too many succeeded pods running after completion count reached",
                )
            self.recorder.event(job, "Normal", "Completed", "Job completed")
            logger.info("%s: job completed job=%s", self.NAME, object_key(job))
        else:
            self.recorder.event(job, "Warning", fin.get("reason") or "", fin.get("message") or "")
            logger.info("%s: job failed job=%s reason=%s", self.NAME, object_key(job), fin.get("reason"))

    async def _update_status(self, job: JsonDict) -> JsonDict:
        """PUT jobs/status; a conflict propagates so the worker requeues (as upstream)."""
        body: dict[str, Any] = dict(job)
        updated = await self._client.update_status(JOBS, body)
        # keep working on our status (the server stores it verbatim) with the new resourceVersion
        out = copy.deepcopy(job)
        out["metadata"] = dict(meta(updated))
        return out

    # ---- ttl after finished

    def _ttl_maybe_enqueue(self, job: JsonDict) -> None:
        if not is_deleting(job) and self._needs_cleanup(job):
            self.ttl_queue.add(object_key(job))

    @staticmethod
    def _needs_cleanup(job: JsonDict) -> bool:
        return (job.get("spec") or {}).get("ttlSecondsAfterFinished") is not None and is_job_finished(job)

    def _ttl_left(self, job: JsonDict) -> float | None:
        """Seconds until the TTL expires (<= 0: expired); None when the Job needs no cleanup."""
        if is_deleting(job) or not self._needs_cleanup(job):
            return None
        finish: datetime | None = None
        for c in (job.get("status") or {}).get("conditions") or []:
            if c.get("type") in (COMPLETE, FAILED) and c.get("status") == "True":
                finish = parse_time(c.get("lastTransitionTime"))
                break
        if finish is None:
            return None
        ttl = get_int(job.get("spec"), "ttlSecondsAfterFinished")
        return (finish + timedelta(seconds=ttl) - self._clock.now()).total_seconds()

    async def sync_ttl(self, key: str) -> None:
        """ttlafterfinished processJob: re-check on a fresh read, then delete (uid precondition)."""
        job = self._job_inf.store.get(key)
        if job is None:
            return
        left = self._ttl_left(job)
        if left is None:
            return
        if left > 0:
            self.ttl_queue.add_after(key, left)
            return
        m = meta(job)
        try:
            fresh = await self._client.get(JOBS, m["name"], m.get("namespace"))
        except NotFoundError:
            return
        left = self._ttl_left(fresh)
        if left is None:
            return
        if left > 0:
            self.ttl_queue.add_after(key, left)
            return
        logger.info("%s: cleaning up job=%s", self.TTL_NAME, key)
        try:
            await self._client.delete(
                JOBS,
                m["name"],
                m.get("namespace"),
                propagation_policy=self._ttl_policy,
                preconditions={"uid": meta(fresh).get("uid")},
            )
        except NotFoundError:
            pass


__all__ = [
    "JOB_TRACKING_FINALIZER",
    "JobController",
    "backoff_remaining",
    "ensure_condition",
    "is_job_finished",
    "past_backoff_limit_on_failure",
    "pod_finished_time",
    "want_active",
]
