"""Upstream's Job controller tables, ported (kubernetes v1.33 line, pkg/controller/job):
pod_failure_policy_test.go, success_policy_test.go, indexed_job_utils_test.go,
backoff_utils_test.go and the table-shaped parts of job_controller_test.go.

The stored upstream copies read were a mix of v1.30-v1.34 files; where their feature gates
differ, the expectations here are v1.33's defaults: JobBackoffLimitPerIndex, JobSuccessPolicy,
PodIndexLabel (GA, locked on), JobPodReplacementPolicy and JobManagedBy (beta, on). So a Job's
terminal condition is preceded by its interim one (SuccessCriteriaMet / FailureTarget), the
terminal one waits until no pod of the Job is terminating, and status.terminating is always
written (asserted only where upstream's case sets it).

How they are driven here:
  * the utility tables call the module's own functions (`match_pod_failure_policy`,
    `match_success_policy`, `calculate_succeeded_indexes`, `calculate_failed_indexes`,
    `is_index_failed`, `pods_with_delayed_deletion_per_index`, `new_index_failure_counts`,
    `first_pending_indexes`, `duplicated_index_pods_for_removal`, `pod_generate_name_with_index`,
    `index_failure_count`, `new_backoff_record`, `pod_finished_time`, `backoff_remaining`,
    `remaining_time_per_index`) with pods built as upstream's `buildPod()`.
  * TestControllerSyncJob / TestSyncJobPastDeadline run one `JobController.sync` against the real
    in-process API on the fake clock: the Job (spec, initial status, deletion) and its pods
    (phases, readiness, indexes, tracking finalizer, terminating) are stored through the API,
    the controller's expectations and backoff store are primed as upstream primes them, and
    the pod writes go through `PodControl`, a pass-through client that counts create / delete
    / patch calls on pods and can fail them as upstream's FakePodControl (Err, CreateLimit).
  * TestPastDeadlineJobFinished runs the controller's workers with the fake clock advanced.

Not ported (no observable counterpart here): the cases that switch a v1.33 GA (locked) gate
off ("FailIndex rule matched ...; JobBackoffLimitPerIndex disabled", "JobSuccessPolicy is
disabled", "indexed job with podIndexLabel feature disabled"), the pod failure policy rule
`name` (a post-v1.33 field: "expected matching rule returned"), TestIntervalsHaveIndex's
orderedIntervals type (ported as membership of the parsed interval list).
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from minik3s.api.errors import InternalError
from minik3s.api.resources import JOBS, NAMESPACES, PODS
from minik3s.controllers.common import make_controller_ref
from minik3s.controllers.job import (
    COMPLETION_INDEX,
    INDEX_FAILURE_COUNT,
    INDEX_IGNORED_FAILURE_COUNT,
    JOB_TRACKING_FINALIZER,
    BackoffRecord,
    JobController,
    backoff_remaining,
    calculate_failed_indexes,
    calculate_succeeded_indexes,
    duplicated_index_pods_for_removal,
    first_pending_indexes,
    format_indexes,
    index_failure_count,
    is_index_failed,
    match_pod_failure_policy,
    match_success_policy,
    new_backoff_record,
    new_index_failure_counts,
    parse_indexes,
    pod_finished_time,
    pod_generate_name_with_index,
    pods_with_delayed_deletion_per_index,
    remaining_time_per_index,
)
from minik3s.utils.clock import rfc3339

NS = "default"
T = "True"
F = "False"
U = "Unknown"
NO_INDEX = "-"


def go(t: datetime) -> str:
    """A metav1.Time as the API serves it (RFC 3339, second precision, Z)."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def go_ms(t: datetime) -> str:
    """RFC 3339 with fractional seconds (the tables' millisecond offsets)."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --------------------------------------------------------------------------- buildPod()


class PodBuilder:
    """upstream's buildPod(): uid, phase, index, failure-count annotations, tracking finalizer."""

    def __init__(self) -> None:
        self.pod: dict[str, Any] = {"metadata": {"name": "", "namespace": NS, "uid": ""}, "status": {}}

    def uid(self, uid: str) -> PodBuilder:
        self.pod["metadata"]["uid"] = uid
        self.pod["metadata"]["name"] = uid
        return self

    def phase(self, phase: str) -> PodBuilder:
        self.pod["status"]["phase"] = phase
        return self

    def status(self, status: dict[str, Any]) -> PodBuilder:
        self.pod["status"] = copy.deepcopy(status)
        return self

    def _annotate(self, key: str, value: str) -> PodBuilder:
        self.pod["metadata"].setdefault("annotations", {})[key] = value
        return self

    def index(self, ix: str) -> PodBuilder:
        return self._annotate(COMPLETION_INDEX, ix)

    def index_failure_count(self, n: str) -> PodBuilder:
        return self._annotate(INDEX_FAILURE_COUNT, n)

    def index_ignored_failure_count(self, n: str) -> PodBuilder:
        return self._annotate(INDEX_IGNORED_FAILURE_COUNT, n)

    def tracking_finalizer(self) -> PodBuilder:
        self.pod["metadata"].setdefault("finalizers", []).append(JOB_TRACKING_FINALIZER)
        return self

    def deletion_timestamp(self, t: datetime) -> PodBuilder:
        self.pod["metadata"]["deletionTimestamp"] = go_ms(t)
        return self


def build_pod() -> PodBuilder:
    return PodBuilder()


def hollow_pods(descs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """hollowPodsWithIndexPhase: pods with only a phase and (unless "-") an index annotation."""
    out = []
    for ix, phase in descs:
        pod: dict[str, Any] = {"metadata": {"name": f"p{len(out)}", "namespace": NS, "uid": f"u{len(out)}"},
                               "status": {"phase": phase}}
        if ix != NO_INDEX:
            pod["metadata"]["annotations"] = {COMPLETION_INDEX: ix}
        out.append(pod)
    return out


def index_phases(pods: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """toIndexPhases."""
    return [((p["metadata"].get("annotations") or {}).get(COMPLETION_INDEX, NO_INDEX), p["status"]["phase"])
            for p in pods]


def intervals(*pairs: tuple[int, int]) -> set[int]:
    """An orderedIntervals literal as the set of indexes it holds."""
    return {ix for first, last in pairs for ix in range(first, last + 1)}


def exited(code: int, name: str | None = None) -> dict[str, Any]:
    cs: dict[str, Any] = {"state": {"terminated": {"exitCode": code}}}
    if name is not None:
        cs["name"] = name
    return cs


def failed_pod(*, containers: list[dict[str, Any]] | None = None, init: list[dict[str, Any]] | None = None,
               conditions: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Failed"}
    if containers is not None:
        status["containerStatuses"] = containers
    if init is not None:
        status["initContainerStatuses"] = init
    if conditions is not None:
        status["conditions"] = [{"type": t, "status": s} for t, s in conditions]
    return {"metadata": {"namespace": "default", "name": "mypod"}, "status": status}


def on_codes(action: str, operator: str, values: list[int], container: str | None = None) -> dict[str, Any]:
    req: dict[str, Any] = {"operator": operator, "values": values}
    if container is not None:
        req["containerName"] = container
    return {"action": action, "onExitCodes": req}


def on_conds(action: str, *patterns: tuple[str, str]) -> dict[str, Any]:
    return {"action": action, "onPodConditions": [{"type": t, "status": s} for t, s in patterns]}


DT = "DisruptionTarget"

# --------------------------------------------------------------------------- TestMatchPodFailurePolicy

MATCH_POD_FAILURE_POLICY = [
    pytest.param([{"action": "UnknownAction", **on_codes("", "In", [1, 2])}, on_codes("FailJob", "In", [2, 3])],
                 failed_pod(containers=[exited(2, "main-container")]),
                 "Container main-container for pod default/mypod failed with exit code 2 matching FailJob rule at "
                 "index 1", True, "FailJob",
                 id="unknown action for rule matching by exit codes - skip rule with unknown action"),
    pytest.param([on_conds("UnkonwnAction", (DT, T)), on_conds("Ignore", (DT, T))],
                 failed_pod(conditions=[(DT, T)]), None, False, "Ignore",
                 id="unknown action for rule matching by pod conditions - skip rule with unknown action"),
    pytest.param([on_codes("Ignore", "UnknownOperator", [1, 2]), on_codes("FailJob", "In", [2, 3])],
                 failed_pod(containers=[exited(2, "main-container")]),
                 "Container main-container for pod default/mypod failed with exit code 2 matching FailJob rule at "
                 "index 1", True, "FailJob",
                 id="unknown operator - rule with unknown action is skipped for onExitCodes"),
    pytest.param(None, failed_pod(containers=[exited(2)]), None, True, None, id="no policy rules"),
    pytest.param([on_codes("Ignore", "In", [1, 2, 3])], failed_pod(containers=[exited(2)]), None, False, "Ignore",
                 id="ignore rule matched for exit codes"),
    pytest.param([on_codes("Ignore", "In", [-1073741676, -1073741510])],
                 failed_pod(containers=[exited(-1073741510)]), None, False, "Ignore",
                 id="ignore rule matched on negative exit codes - needed for Windows support"),
    pytest.param([on_codes("FailJob", "In", [1, 2, 3])], failed_pod(containers=[exited(2, "main-container")]),
                 "Container main-container for pod default/mypod failed with exit code 2 matching FailJob rule at "
                 "index 0", True, "FailJob", id="FailJob rule matched for exit codes"),
    pytest.param([on_codes("FailJob", "NotIn", [111])],
                 failed_pod(init=[exited(0, "init-container")],
                            containers=[exited(111, "main-container"), exited(0, "suppport-container")]),
                 None, True, None, id="successful containers are skipped by the rules"),
    pytest.param([on_codes("FailIndex", "In", [1, 2, 3])], failed_pod(containers=[exited(2)]), None, True,
                 "FailIndex", id="FailIndex rule matched for exit codes"),
    pytest.param([on_codes("FailJob", "NotIn", [0])],
                 failed_pod(containers=[exited(1, "main-container"), exited(0, "suppport-container")]),
                 "Container main-container for pod default/mypod failed with exit code 1 matching FailJob rule at "
                 "index 0", True, "FailJob", id="pod failure policy with NotIn operator and value 0"),
    pytest.param([on_codes("Count", "In", [1, 2, 3]), on_codes("FailJob", "In", [4, 5, 6])],
                 failed_pod(containers=[exited(6, "main-container")]),
                 "Container main-container for pod default/mypod failed with exit code 6 matching FailJob rule at "
                 "index 1", True, "FailJob", id="second jobfail rule matched for exit codes"),
    pytest.param([on_codes("Count", "In", [1, 2, 3])],
                 failed_pod(containers=[{"name": "foo"}, exited(2, "bar")]), None, True, "Count",
                 id="count rule matched for exit codes"),
    pytest.param([on_conds("FailIndex", (DT, T))], failed_pod(conditions=[(DT, T)]), None, True, "FailIndex",
                 id="FailIndex rule matched for pod conditions"),
    pytest.param([on_conds("Ignore", (DT, T))], failed_pod(conditions=[(DT, T)]), None, False, "Ignore",
                 id="ignore rule matched for pod conditions"),
    pytest.param([on_conds("Ignore", (DT, F))], failed_pod(conditions=[(DT, F)]), None, False, "Ignore",
                 id="ignore rule matches by the status=False"),
    pytest.param([on_conds("Ignore", (DT, U))], failed_pod(conditions=[(DT, U)]), None, False, "Ignore",
                 id="ignore rule matches by the status=Unknown"),
    pytest.param([on_conds("Ignore", (DT, F))], failed_pod(conditions=[(DT, T)]), None, True, None,
                 id="ignore rule does not match when status for pattern is False, but actual True"),
    pytest.param([on_conds("Ignore", (DT, T))], failed_pod(conditions=[(DT, F)]), None, True, None,
                 id="ignore rule does not match when status for pattern is True, but actual False"),
    pytest.param([on_conds("Ignore", (DT, T))], failed_pod(conditions=[(DT, F)]), None, True, None,
                 id="default - do not match condition with status=False"),
    pytest.param([on_conds("FailJob", (DT, T))], failed_pod(conditions=[(DT, T)]),
                 "Pod default/mypod has condition DisruptionTarget matching FailJob rule at index 0", True, "FailJob",
                 id="job fail rule matched for pod conditions"),
    pytest.param([on_conds("Count", (DT, T))], failed_pod(conditions=[(DT, T)]), None, True, "Count",
                 id="count rule matched for pod conditions"),
    pytest.param([on_codes("Count", "NotIn", [8]), on_codes("Ignore", "In", [1, 2, 3]),
                  on_codes("FailJob", "NotIn", [5, 6, 7]), on_conds("Count", ("ResourceLimitExceeded", T)),
                  on_conds("Ignore", (DT, T))],
                 failed_pod(containers=[exited(32)]), None, True, "Count", id="no rule matched"),
]


@pytest.mark.parametrize(("rules", "pod", "message", "count", "action"), MATCH_POD_FAILURE_POLICY)
def test_match_pod_failure_policy(rules: list[dict[str, Any]] | None, pod: dict[str, Any], message: str | None,
                                  count: bool, action: str | None) -> None:
    spec: dict[str, Any] = {"completionMode": "Indexed", "backoffLimitPerIndex": 1}
    if rules is not None:
        spec["podFailurePolicy"] = {"rules": rules}
    assert match_pod_failure_policy({"spec": spec}, pod) == (message, count, action)


# --------------------------------------------------------------------------- TestMatchSuccessPolicy


def rule(indexes: str | None = None, count: int | None = None) -> dict[str, Any]:
    r: dict[str, Any] = {}
    if indexes is not None:
        r["succeededIndexes"] = indexes
    if count is not None:
        r["succeededCount"] = count
    return r


MATCH_SUCCESS_POLICY = [
    pytest.param(None, intervals((0, 0)), None, id="successPolicy is null"),
    pytest.param([], intervals((0, 0)), None, id="any rules are nothing"),
    pytest.param([rule("invalid-form")], intervals((0, 0)), None, id="rules.succeededIndexes is invalid format"),
    pytest.param([rule("0-2")], intervals((0, 2), (4, 7)), "Matched rules at index 0",
                 id="rules.succeededIndexes is specified; succeededIndexes matched rules"),
    pytest.param([rule("3")], intervals((0, 2)), None,
                 id="rules.succeededIndexes is specified; succeededIndexes didn't match rules"),
    pytest.param([rule(count=2)], intervals((0, 2)), "Matched rules at index 0",
                 id="rules.succeededCount is specified; succeededIndexes matched rules"),
    pytest.param([rule(count=4)], intervals((0, 2)), None,
                 id="rules.succeededCount is specified; succeededIndexes didn't match rules"),
    pytest.param([rule("9"), rule("4,6")], intervals((0, 2), (4, 7)), "Matched rules at index 1",
                 id="multiple rules; rules.succeededIndexes is specified; succeededIndexes met one of rules"),
    pytest.param([rule("0,1"), rule("5")], intervals((0, 2), (4, 7)), "Matched rules at index 0",
                 id="multiple rules; rules.succeededIndexes is specified; succeededIndexes met all rules"),
    pytest.param([rule("3-6", 2)], intervals((0, 2), (4, 7)), "Matched rules at index 0",
                 id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes met all rules"),
    pytest.param([rule("3-6", 2)], intervals((0, 2), (6, 7)), None,
                 id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes didn't match "
                    "rules"),
    pytest.param([rule(count=4)], set(), None,
                 id="rules.succeededIndexes is specified; succeededIndexes are nothing"),
    pytest.param([rule("2-4,6-8")], intervals((1, 5), (6, 9)), "Matched rules at index 0",
                 id="rules.succeededIndexes is specified; succeededIndexes matched rules; rules is proper subset of "
                    "succeededIndexes"),
    pytest.param([rule("2-4,6-9")], intervals((2, 4), (6, 9)), "Matched rules at index 0",
                 id="rules.succeededIndexes is specified; succeededIndexes matched rules; rules equals "
                    "succeededIndexes"),
    pytest.param([rule("2-4,8-12")], intervals((2, 5), (7, 15)), "Matched rules at index 0",
                 id="rules.succeededIndexes is specified; succeededIndexes matched rules; rules is subset of "
                    "succeededIndexes"),
    pytest.param([rule("")], intervals((1, 3)), None,
                 id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules is an empty set"),
    pytest.param([rule("")], set(), None,
                 id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; succeededIndexes is an "
                    "empty set"),
    pytest.param([rule("")], set(), None,
                 id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules and "
                    "succeededIndexes are empty set"),
    pytest.param([rule("10-12,14-16")], intervals((1, 3), (5, 7)), None,
                 id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; all elements of "
                    "rules.succeededIndexes aren't included in succeededIndexes"),
    pytest.param([rule("1-3,5-7")], intervals((2, 4), (6, 8)), None,
                 id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps "
                    "succeededIndexes at first"),
    pytest.param([rule("1-3,5-7", 4)], intervals((2, 4), (6, 8)), "Matched rules at index 0",
                 id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; "
                    "rules overlaps succeededIndexes at first"),
    pytest.param([rule("2-4,6-9")], intervals((1, 3), (5, 7)), None,
                 id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps "
                    "succeededIndexes at last"),
    pytest.param([rule("2-4,6-9", 4)], intervals((1, 3), (5, 7)), "Matched rules at index 0",
                 id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; "
                    "rules overlaps succeededIndexes at last"),
    pytest.param([rule("0-4,6-9")], intervals((1, 3), (7, 8)), None,
                 id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules completely "
                    "overlaps succeededIndexes"),
    pytest.param([rule("0-4,6-9", 5)], intervals((1, 3), (7, 8)), "Matched rules at index 0",
                 id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; "
                    "rules completely overlaps succeededIndexes"),
    pytest.param([rule("0-6,8-9")], intervals((1, 3), (5, 9)), None,
                 id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps "
                    "multiple succeededIndexes at last"),
    pytest.param([rule("0-6,8-9", 7)], intervals((1, 3), (5, 9)), "Matched rules at index 0",
                 id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; "
                    "rules overlaps multiple succeededIndexes at last"),
    pytest.param([rule("0-5,7-9")], intervals((1, 5), (7, 10)), None,
                 id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps "
                    "succeededIndexes at first, and rules equals succeededIndexes at last"),
    pytest.param([rule("0-5,7-9", 8)], intervals((1, 5), (7, 10)), "Matched rules at index 0",
                 id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; "
                    "rules overlaps succeededIndexes at first, and rules equals succeededIndexes at last"),
    pytest.param([rule("0-3,6-9")], intervals((1, 10)), None,
                 id="rules.succeededIndexes is specified; succeededIndexes didn't match rules; the first rules "
                    "overlaps succeededIndexes at first"),
    pytest.param([rule("0-3,6-9", 7)], intervals((1, 10)), "Matched rules at index 0",
                 id="rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; "
                    "the first rules overlaps succeededIndexes at first"),
]


@pytest.mark.parametrize(("rules", "succeeded", "message"), MATCH_SUCCESS_POLICY)
def test_match_success_policy(rules: list[dict[str, Any]] | None, succeeded: set[int], message: str | None) -> None:
    spec: dict[str, Any] = {"completions": 10, "completionMode": "Indexed"}
    if rules is not None:
        spec["successPolicy"] = {"rules": rules}
    assert match_success_policy({"spec": spec}, succeeded) == message


# --------------------------------------------------------------------------- indexed_job_utils_test.go

S, FA, R, P = "Succeeded", "Failed", "Running", "Pending"

CALCULATE_SUCCEEDED_INDEXES = [
    pytest.param("", [("1", S)], 2, set(), intervals((1, 1)), id="one index"),
    pytest.param("", [("2", FA), ("5", S), ("5", S), ("10", FA), ("10", S)], 11, set(), intervals((5, 5), (10, 10)),
                 id="two separate"),
    pytest.param("", [("0", R), ("1", P), ("2", S), ("3", S), ("5", S), ("6", S), ("7", S)], 8, set(),
                 intervals((2, 3), (5, 7)), id="two intervals"),
    pytest.param("", [("0", S), ("1", FA), ("2", S), ("3", S), ("4", S), ("5", S), (NO_INDEX, S), ("-2", S)], 6,
                 set(), intervals((0, 0), (2, 5)), id="one index and one interval"),
    pytest.param("", [("0", S), ("1", S), ("2", S), ("3", FA), ("4", S), ("5", S), (NO_INDEX, S), ("-2", S)], 5,
                 set(), intervals((0, 2), (4, 4)), id="out of range"),
    pytest.param("0-5,8-10", [], 8, intervals((0, 5)), intervals((0, 5)), id="prev interval out of range"),
    pytest.param("0-5,8-10", [], 10, intervals((0, 5), (8, 9)), intervals((0, 5), (8, 9)),
                 id="prev interval partially out of range"),
    pytest.param("0,4,5,10-12", [("2", S), ("7", S), ("8", S)], 13, intervals((0, 0), (4, 5), (10, 12)),
                 intervals((0, 0), (2, 2), (4, 5), (7, 8), (10, 12)), id="prev and new separate"),
    pytest.param("3,4,6", [("2", S), ("7", S), ("8", S)], 9, intervals((3, 4), (6, 6)), intervals((2, 4), (6, 8)),
                 id="prev between new"),
    pytest.param("2,7,8", [("3", S), ("4", S), ("6", S)], 9, intervals((2, 2), (7, 8)), intervals((2, 4), (6, 8)),
                 id="new between prev"),
    pytest.param("2-7", [("0", S), ("3", S), ("5", S), ("9", S)], 10, intervals((2, 7)),
                 intervals((0, 0), (2, 7), (9, 9)), id="new within prev"),
    pytest.param("0,1-foo,bar", [("3", S)], 4, intervals((0, 0)), intervals((0, 0), (3, 3)),
                 id="corrupted interval"),
]


@pytest.mark.parametrize(("prev", "pods", "completions", "want_status", "want"), CALCULATE_SUCCEEDED_INDEXES)
def test_calculate_succeeded_indexes(prev: str, pods: list[tuple[str, str]], completions: int, want_status: set[int],
                                     want: set[int]) -> None:
    job = {"spec": {"completions": completions}, "status": {"completedIndexes": prev}}
    built = hollow_pods(pods)
    for p in built:
        p["metadata"]["finalizers"] = [JOB_TRACKING_FINALIZER]
    got_status, got = calculate_succeeded_indexes(job, built)
    assert (got_status, got) == (want_status, want)
    # the intervals as the controller writes them
    assert format_indexes(got) == format_indexes(want)


def pfp_fail_index_on_3() -> dict[str, Any]:
    return {"rules": [on_codes("FailIndex", "In", [3])]}


IS_INDEX_FAILED = [
    pytest.param({"completions": 2, "backoffLimitPerIndex": 0},
                 build_pod().index_failure_count("0").phase("Failed").index("0").tracking_finalizer().pod, True,
                 id="failed pod exceeding backoffLimitPerIndex, when backoffLimitPerIndex=0"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 1},
                 build_pod().index_failure_count("1").phase("Failed").index("1").tracking_finalizer().pod, True,
                 id="failed pod exceeding backoffLimitPerIndex, when backoffLimitPerIndex=1"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 1, "podFailurePolicy": pfp_fail_index_on_3()},
                 build_pod().index_failure_count("0").status({"phase": "Failed", "containerStatuses": [exited(3)]})
                 .index("0").tracking_finalizer().pod, True, id="matching FailIndex pod failure policy"),
]


@pytest.mark.parametrize(("spec", "pod", "want"), IS_INDEX_FAILED)
def test_is_index_failed(spec: dict[str, Any], pod: dict[str, Any], want: bool) -> None:
    assert is_index_failed({"spec": spec}, pod) is want


CALCULATE_FAILED_INDEXES = [
    pytest.param({"completions": 2, "backoffLimitPerIndex": 1}, None,
                 [build_pod().index_failure_count("0").phase("Failed").index("0").tracking_finalizer().pod,
                  build_pod().index_failure_count("1").phase("Failed").index("1").tracking_finalizer().pod],
                 intervals((1, 1)), id="one new index failed"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 0}, None,
                 [build_pod().index_failure_count("0").phase("Failed").index("0").pod], set(),
                 id="pod without finalizer is ignored"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 0}, None,
                 [build_pod().index_failure_count("0").phase("Failed").index("3").pod], set(),
                 id="pod outside completions is ignored"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 0}, "0",
                 [build_pod().index_failure_count("0").phase("Failed").index("1").tracking_finalizer().pod],
                 intervals((0, 1)), id="extend the failed indexes"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 0}, "",
                 [build_pod().index_failure_count("0").phase("Failed").index("1").tracking_finalizer().pod],
                 intervals((1, 1)), id="prev failed indexes empty"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 0}, "9",
                 [build_pod().index_failure_count("0").phase("Failed").index("1").tracking_finalizer().pod],
                 intervals((1, 1)), id="prev failed indexes outside the completions"),
]


@pytest.mark.parametrize(("spec", "prev", "pods", "want"), CALCULATE_FAILED_INDEXES)
def test_calculate_failed_indexes(spec: dict[str, Any], prev: str | None, pods: list[dict[str, Any]],
                                  want: set[int]) -> None:
    job: dict[str, Any] = {"spec": spec, "status": {}}
    if prev is not None:
        job["status"]["failedIndexes"] = prev
    assert calculate_failed_indexes(job, pods) == want


NOW = datetime(2026, 1, 1, tzinfo=UTC)

DELAYED_DELETION = [
    pytest.param({"completions": 3, "backoffLimitPerIndex": 1},
                 [build_pod().uid("a").index_failure_count("0").phase("Failed").index("0").tracking_finalizer().pod,
                  build_pod().uid("b").index_failure_count("1").phase("Failed").index("1").tracking_finalizer().pod,
                  build_pod().uid("c").index_failure_count("0").phase("Failed").index("2").tracking_finalizer().pod],
                 set(), ["a", "c"], id="failed pods are kept corresponding to non-failed indexes are kept"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 0},
                 [build_pod().uid("a").index_failure_count("0").phase("Failed").index("0").pod], set(), [],
                 id="failed pod without finalizer; the pod's deletion is not delayed as it already started"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 0},
                 [build_pod().uid("a").index_failure_count("0").phase("Failed").index("0").tracking_finalizer().pod],
                 {"a"}, [],
                 id="failed pod with expected finalizer removal; the pod's deletion is not delayed as it already "
                    "started"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 0},
                 [build_pod().uid("a").index_failure_count("0").phase("Failed").index("4").tracking_finalizer().pod],
                 set(), [], id="failed pod with index outside of completions; the pod's deletion is not delayed"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 1},
                 [build_pod().uid("a1").index_failure_count("0").phase("Failed").index("0").tracking_finalizer().pod,
                  build_pod().uid("a2").index_failure_count("1").phase("Running").index("0").tracking_finalizer().pod],
                 set(), [],
                 id="failed pod for active index; the pod's deletion is not delayed as it is already replaced"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 1},
                 [build_pod().uid("a1").index_failure_count("0").phase("Failed").index("0").tracking_finalizer().pod,
                  build_pod().uid("a2").index_failure_count("1").phase("Succeeded").index("0").tracking_finalizer()
                  .pod],
                 set(), [],
                 id="failed pod for succeeded index; the pod's deletion is not delayed as it is already replaced"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 4},
                 [build_pod().uid("a1").index_failure_count("0").phase("Failed").index("0").tracking_finalizer().pod,
                  build_pod().uid("a3").index_failure_count("2").phase("Failed").index("0").tracking_finalizer().pod,
                  build_pod().uid("a2").index_failure_count("1").phase("Failed").index("0").tracking_finalizer().pod],
                 set(), ["a3"],
                 id="multiple failed pods for index with different failure count; only the pod with highest failure "
                    "count is kept"),
    pytest.param({"completions": 2, "backoffLimitPerIndex": 4},
                 [build_pod().uid("a1").index_failure_count("1").phase("Failed").index("0")
                  .deletion_timestamp(NOW - timedelta(seconds=1)).tracking_finalizer().pod,
                  build_pod().uid("a3").index_failure_count("1").phase("Failed").index("0")
                  .deletion_timestamp(NOW).tracking_finalizer().pod,
                  build_pod().uid("a2").index_failure_count("1").phase("Failed").index("0")
                  .deletion_timestamp(NOW - timedelta(seconds=2)).tracking_finalizer().pod],
                 set(), ["a3"],
                 id="multiple failed pods for index with different finish times; only the last failed pod is kept"),
]


@pytest.mark.parametrize(("spec", "pods", "expected_rm", "want"), DELAYED_DELETION)
def test_get_pods_with_delayed_deletion_per_index(spec: dict[str, Any], pods: list[dict[str, Any]],
                                                  expected_rm: set[str], want: list[str]) -> None:
    job = {"spec": spec, "status": {}}
    failed = calculate_failed_indexes(job, pods)
    _, succeeded = calculate_succeeded_indexes(job, pods)
    got = pods_with_delayed_deletion_per_index(job, pods, succeeded=succeeded, failed=failed, expected_rm=expected_rm)
    assert sorted({p["metadata"]["uid"] for p in got.values()}) == want


IGNORE_DISRUPTIONS = {"podFailurePolicy": {"rules": [on_conds("Ignore", (DT, T))]}}

NEW_INDEX_FAILURE_COUNTS = [
    pytest.param({}, None, (0, 0), id="first pod created"),
    pytest.param({}, build_pod().uid("a").index_failure_count("0").phase("Failed").index("0").tracking_finalizer().pod,
                 (1, 0), id="failed pod being replaced with 0 index failure count"),
    pytest.param({}, build_pod().uid("a").index_failure_count("3").phase("Failed").index("0").tracking_finalizer().pod,
                 (4, 0), id="failed pod being replaced with >0 index failure count"),
    pytest.param(IGNORE_DISRUPTIONS,
                 build_pod().uid("a").index_failure_count("3")
                 .status({"phase": "Failed", "conditions": [{"type": DT, "status": T}]}).index("3")
                 .tracking_finalizer().pod,
                 (3, 1), id="failed pod being replaced, matching the ignore rule"),
]


@pytest.mark.parametrize(("spec", "pod", "want"), NEW_INDEX_FAILURE_COUNTS)
def test_get_new_index_failure_count_value(spec: dict[str, Any], pod: dict[str, Any] | None,
                                           want: tuple[int, int]) -> None:
    assert new_index_failure_counts({"spec": spec}, pod) == want


@pytest.mark.parametrize(("intervals_", "index", "want"), [
    pytest.param([], 4, False, id="empty"),
    pytest.param([(2, 4), (5, 7)], 1, False, id="before all"),
    pytest.param([(2, 4), (6, 8)], 9, False, id="after all"),
    pytest.param([(2, 4), (6, 8)], 5, False, id="in between"),
    pytest.param([(2, 4), (6, 8)], 2, True, id="in first"),
    pytest.param([(2, 4), (6, 8)], 8, True, id="in second"),
])
def test_intervals_have_index(intervals_: list[tuple[int, int]], index: int, want: bool) -> None:
    text = ",".join(f"{a}-{b}" for a, b in intervals_)
    assert (index in parse_indexes(text, 100)) is want


FIRST_PENDING_INDEXES = [
    pytest.param(5, 3, [], set(), None, [0, 1, 2], id="cnt greater than completions"),
    pytest.param(2, 5, [], set(), None, [0, 1], id="cnt less than completions"),
    pytest.param(3, 10, [("0", R), ("1", P)], set(), None, [2, 3, 4], id="first pods active"),
    pytest.param(6, 6, [("6", P)], intervals((4, 5)), None, [0, 1, 2, 3], id="last pods active or succeeded"),
    pytest.param(5, 20, [("3", P), ("5", R), ("8", P), (NO_INDEX, R), ("-3", R)], intervals((2, 4), (9, 9)), None,
                 [0, 1, 6, 7, 10], id="mixed"),
    pytest.param(5, 20, [("3", P), ("9", P)], intervals((1, 1), (5, 5), (9, 9)), intervals((2, 2), (6, 7)),
                 [0, 4, 8, 10, 11], id="with failed indexes"),
]


@pytest.mark.parametrize(("cnt", "completions", "active", "succeeded", "failed", "want"), FIRST_PENDING_INDEXES)
def test_first_pending_indexes(cnt: int, completions: int, active: list[tuple[str, str]], succeeded: set[int],
                               failed: set[int] | None, want: list[int]) -> None:
    job = {"spec": {"parallelism": 1, "completions": 1, "backoffLimit": 1, "completionMode": "Indexed"}}
    pods = hollow_pods(active)
    assert first_pending_indexes(job, pods, pods, succeeded, failed, cnt, completions) == want


APPEND_DUPLICATED = [
    pytest.param([(NO_INDEX, P), ("2", P), ("5", R), ("6", R)], [(NO_INDEX, P), ("6", R)], [("2", P), ("5", R)], 6,
                 id="all unique"),
    pytest.param([("5", P), ("0", R), ("3", P), ("0", R), ("3", R), ("0", P), ("6", R), ("6", P)],
                 [("0", P), ("0", R), ("3", P), ("6", R), ("6", P)], [("0", R), ("3", R), ("5", P)], 6,
                 id="all with index"),
    pytest.param([(NO_INDEX, P), ("invalid", R), ("-2", R), ("0", P), ("1", P), ("1", P), ("1", R)],
                 [(NO_INDEX, P), ("invalid", R), ("-2", R), ("1", P), ("1", P)], [("0", P), ("1", R)], 6,
                 id="mixed"),
]


@pytest.mark.parametrize(("pods", "want_rm", "want_left", "completions"), APPEND_DUPLICATED)
def test_append_duplicated_index_pods_for_removal(pods: list[tuple[str, str]], want_rm: list[tuple[str, str]],
                                                  want_left: list[tuple[str, str]], completions: int) -> None:
    rm, left = duplicated_index_pods_for_removal(hollow_pods(pods), completions)
    assert index_phases(rm) == want_rm
    assert index_phases(left) == want_left


@pytest.mark.parametrize(("job_name", "index", "want"), [
    pytest.param("indexed-job", 1, "indexed-job-1-", id="short job name"),
    pytest.param("hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooo", 1,
                 "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-",
                 id="job name exceeds MaxGeneneratedNameLength"),
    pytest.param("hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhoo", 1,
                 "hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-",
                 id="job name with index suffix exceeds MaxGeneratedNameLength"),
])
def test_pod_generate_name_with_index(job_name: str, index: int, want: str) -> None:
    assert pod_generate_name_with_index(job_name, index) == want


@pytest.mark.parametrize(("pod", "want"), [
    pytest.param({"metadata": {}}, 0, id="no annotation"),
    pytest.param(build_pod().index_failure_count("2").pod, 2, id="valid value"),
    pytest.param(build_pod().index_failure_count(str(2**31 - 1)).pod, 2**31 - 1, id="valid maxint32 value"),
    pytest.param(build_pod().index_failure_count(str(2**31)).pod, 0, id="too large value"),
    pytest.param(build_pod().index_failure_count("-1").pod, 0, id="negative value"),
    pytest.param(build_pod().index_failure_count("xyz").pod, 0, id="invalid int value"),
])
def test_get_index_failure_count(pod: dict[str, Any], want: int) -> None:
    assert index_failure_count(pod) == want


# --------------------------------------------------------------------------- backoff_utils_test.go

DEFAULT_TEST_TIME = datetime(2009, 11, 10, 23, 0, 0, tzinfo=UTC)


def ms(n: int) -> datetime:
    return DEFAULT_TEST_TIME + timedelta(milliseconds=n)


def finished_pod(phase: str, t: datetime) -> dict[str, Any]:
    return {"metadata": {}, "status": {"phase": phase, "containerStatuses": [
        {"state": {"terminated": {"finishedAt": go_ms(t)}}}]}}


NEW_BACKOFF_RECORD = [
    pytest.param(None, [], [DEFAULT_TEST_TIME], BackoffRecord(1, DEFAULT_TEST_TIME),
                 id="Empty backoff store and one new failure"),
    pytest.param(None, [], [DEFAULT_TEST_TIME, ms(-1)], BackoffRecord(2, DEFAULT_TEST_TIME),
                 id="Empty backoff store and two new failures"),
    pytest.param(None, [DEFAULT_TEST_TIME], [ms(-2), ms(-1)], BackoffRecord(0, None),
                 id="Empty backoff store, two failures followed by success"),
    pytest.param(None, [ms(-2)], [DEFAULT_TEST_TIME, ms(-4), ms(-3), ms(-1)], BackoffRecord(2, DEFAULT_TEST_TIME),
                 id="Empty backoff store, two failures, one success and two more failures"),
    pytest.param(BackoffRecord(2, None), [], [DEFAULT_TEST_TIME], BackoffRecord(3, DEFAULT_TEST_TIME),
                 id="Backoff store having failure count 2 and one new failure"),
    pytest.param(None, [DEFAULT_TEST_TIME], [DEFAULT_TEST_TIME], BackoffRecord(0, None),
                 id="Empty backoff store with success and failure at same timestamp"),
    pytest.param(None, [], [], BackoffRecord(0, None), id="Empty backoff store with no success/failure"),
    pytest.param(None, [DEFAULT_TEST_TIME], [], BackoffRecord(0, None), id="Empty backoff store with one success"),
]


@pytest.mark.parametrize(("stored", "succeeded", "failed", "want"), NEW_BACKOFF_RECORD)
def test_new_backoff_record(stored: BackoffRecord | None, succeeded: list[datetime], failed: list[datetime],
                            want: BackoffRecord) -> None:
    got = new_backoff_record(stored, [finished_pod("Succeeded", t) for t in succeeded],
                             [finished_pod("Failed", t) for t in failed])
    assert got == want


def terminated(t: datetime | None) -> dict[str, Any]:
    term: dict[str, Any] = {} if t is None else {"finishedAt": go(t)}
    return {"state": {"terminated": term}}


RUNNING: dict[str, Any] = {"state": {"running": {}}}
MINUS_30S = DEFAULT_TEST_TIME - timedelta(seconds=30)

GET_FINISHED_TIME = [
    pytest.param({"status": {"containerStatuses": [terminated(DEFAULT_TEST_TIME - timedelta(seconds=1)),
                                                   terminated(DEFAULT_TEST_TIME),
                                                   terminated(DEFAULT_TEST_TIME - timedelta(seconds=2))]}},
                 DEFAULT_TEST_TIME, id="Pod with multiple containers and all containers terminated"),
    pytest.param({"metadata": {"deletionTimestamp": go(DEFAULT_TEST_TIME)},
                  "status": {"containerStatuses": [terminated(DEFAULT_TEST_TIME - timedelta(seconds=1)), RUNNING,
                                                   terminated(DEFAULT_TEST_TIME - timedelta(seconds=2))]}},
                 DEFAULT_TEST_TIME,
                 id="Pod with multiple containers; two containers in terminated state and one in running state; "
                    "fallback to deletionTimestamp"),
    pytest.param({"metadata": {"deletionTimestamp": go(DEFAULT_TEST_TIME)}, "status": {"containerStatuses": [RUNNING]}},
                 DEFAULT_TEST_TIME, id="fallback to deletionTimestamp"),
    pytest.param({"metadata": {"deletionTimestamp": go(DEFAULT_TEST_TIME), "deletionGracePeriodSeconds": 30},
                  "status": {"containerStatuses": [RUNNING]}},
                 MINUS_30S, id="fallback to deletionTimestamp, decremented by grace period"),
    pytest.param({"status": {"containerStatuses": [terminated(None)], "conditions": [
        {"type": "Ready", "status": "False", "reason": "PodFailed", "lastTransitionTime": go(DEFAULT_TEST_TIME)}]}},
                 DEFAULT_TEST_TIME, id="fallback to PodReady.LastTransitionTime when status of the condition is False"),
    pytest.param({"metadata": {"deletionTimestamp": go(DEFAULT_TEST_TIME)},
                  "status": {"containerStatuses": [terminated(None)], "conditions": [
                      {"type": "Ready", "status": "True", "lastTransitionTime": go(MINUS_30S)}]}},
                 DEFAULT_TEST_TIME,
                 id="skip fallback to PodReady.LastTransitionTime when status of the condition is True"),
    pytest.param({"metadata": {"creationTimestamp": go(DEFAULT_TEST_TIME)},
                  "status": {"containerStatuses": [terminated(None)]}},
                 DEFAULT_TEST_TIME, id="fallback to creationTimestamp"),
    pytest.param({"spec": {"initContainers": [{"name": "sidecar", "restartPolicy": "Always"}]},
                  "status": {"containerStatuses": [terminated(DEFAULT_TEST_TIME - timedelta(seconds=1))],
                             "initContainerStatuses": [{"name": "sidecar", **terminated(DEFAULT_TEST_TIME)}]}},
                 DEFAULT_TEST_TIME, id="Pod with sidecar container and all containers terminated"),
]


@pytest.mark.parametrize(("pod", "want"), GET_FINISHED_TIME)
def test_get_finished_time(pod: dict[str, Any], want: datetime) -> None:
    pod.setdefault("metadata", {})
    assert pod_finished_time(pod) == want


GET_REMAINING_BACKOFF_TIME = [
    pytest.param(0, None, None, 5, 700, 0, id="no failures"),
    pytest.param(1, DEFAULT_TEST_TIME, DEFAULT_TEST_TIME, 5, 700, 5,
                 id="one failure; current time and failure time are same"),
    pytest.param(1, DEFAULT_TEST_TIME, DEFAULT_TEST_TIME + timedelta(seconds=1), 5, 700, 4,
                 id="one failure; current time == 1 second + failure time"),
    pytest.param(1, DEFAULT_TEST_TIME, DEFAULT_TEST_TIME + timedelta(seconds=5), 5, 700, 0,
                 id="one failure; current time == expected backoff time"),
    pytest.param(1, DEFAULT_TEST_TIME, DEFAULT_TEST_TIME + timedelta(seconds=6), 5, 700, 0,
                 id="one failure; current time == expected backoff time + 1 Second"),
    pytest.param(3, DEFAULT_TEST_TIME, DEFAULT_TEST_TIME, 5, 700, 20,
                 id="three failures; current time and failure time are same"),
    pytest.param(8, DEFAULT_TEST_TIME, DEFAULT_TEST_TIME, 5, 700, 640,
                 id="eight failures; current time and failure time are same; backoff not exceeding maxBackoff"),
    pytest.param(9, DEFAULT_TEST_TIME, DEFAULT_TEST_TIME, 5, 700, 700,
                 id="nine failures; current time and failure time are same; backoff exceeding maxBackoff"),
]


@pytest.mark.parametrize(("failures", "last", "now", "default", "maximum", "want"), GET_REMAINING_BACKOFF_TIME)
def test_get_remaining_backoff_time(failures: int, last: datetime | None, now: datetime | None, default: float,
                                    maximum: float, want: float) -> None:
    now = now or datetime(1, 1, 1, tzinfo=UTC)
    assert backoff_remaining(failures, last, now, base=default, cap=maximum) == want


GET_REMAINING_BACKOFF_TIME_PER_INDEX = [
    pytest.param(None, None, 0, id="no failures"),
    pytest.param(build_pod().phase("Failed").index_failure_count("2").deletion_timestamp(DEFAULT_TEST_TIME).pod,
                 DEFAULT_TEST_TIME, 20, id="two prev failures; current time and failure time are same"),
    pytest.param(build_pod().phase("Failed").index_failure_count("1").index_ignored_failure_count("1")
                 .deletion_timestamp(DEFAULT_TEST_TIME).pod,
                 DEFAULT_TEST_TIME, 20,
                 id="one prev failure counted and one ignored; current time and failure time are same"),
]


@pytest.mark.parametrize(("last_failed", "now", "want"), GET_REMAINING_BACKOFF_TIME_PER_INDEX)
def test_get_remaining_backoff_time_per_index(last_failed: dict[str, Any] | None, now: datetime | None,
                                              want: float) -> None:
    now = now or datetime(1, 1, 1, tzinfo=UTC)
    assert remaining_time_per_index(last_failed, now, base=5, cap=700) == want


# --------------------------------------------------------------------------- job_controller_test.go


class PodControl:
    """upstream's controller.FakePodControl over the real API: pod creates, deletes and patches
    pass through (and are recorded, as Templates / DeletePodName / Patches); `err` fails each of
    them after recording it, `create_limit` fails creates past that many (unrecorded)."""

    def __init__(self, api: Any, *, err: Exception | None = None, create_limit: int = 0) -> None:
        self._api = api
        self.err = err
        self.create_limit = create_limit
        self.templates: list[dict[str, Any]] = []
        self.deleted: list[str] = []
        self.patches: list[str] = []
        self.create_calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api, name)

    async def create(self, res: Any, obj: dict[str, Any], namespace: str | None = None, **kw: Any) -> Any:
        if res is PODS:
            self.create_calls += 1
            if self.create_limit and self.create_calls > self.create_limit:
                raise InternalError(f"not creating pod, limit {self.create_limit} already reached")
            self.templates.append(copy.deepcopy(obj))
            if self.err is not None:
                raise self.err
        return await self._api.create(res, obj, namespace, **kw)

    async def delete(self, res: Any, name: str, namespace: str | None = None, **kw: Any) -> Any:
        if res is PODS:
            self.deleted.append(name)
            if self.err is not None:
                raise self.err
        return await self._api.delete(res, name, namespace, **kw)

    async def patch(self, res: Any, name: str, patch: Any, namespace: str | None = None, **kw: Any) -> Any:
        if res is PODS:
            self.patches.append(name)
            if self.err is not None:
                raise self.err
        return await self._api.patch(res, name, patch, namespace, **kw)


TEST_FINISHED_AT = "0001-01-01T00:00:01Z"  # testFinishedAt: a second after Go's zero time, no backoff


def job_body(name: str, parallelism: int, completions: int, backoff_limit: int, mode: str = "", *,
             suspend: bool = False, deleting: bool = False, **spec: Any) -> dict[str, Any]:
    """newJob: -1 leaves parallelism / completions unset; the API generates the selector."""
    body: dict[str, Any] = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"backoffLimit": backoff_limit, "suspend": suspend,
                 "template": {"metadata": {"labels": {"foo": "bar"}},
                              "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "foo/bar"}]}},
                 **spec}}
    if completions >= 0:
        body["spec"]["completions"] = completions
    if parallelism >= 0:
        body["spec"]["parallelism"] = parallelism
    if mode:
        body["spec"]["completionMode"] = mode
    if deleting:
        body["metadata"]["finalizers"] = ["test.io/hold"]
    return body


async def add_pod(api: Any, job: dict[str, Any], phase: str, *, ready: bool = False, terminating: bool = False,
                  index: str | None = None, container_status: bool = True) -> dict[str, Any]:
    """newPod / newPodList / setPodsStatusesWithIndexes: a pod the Job controls, with the
    tracking finalizer, the phase, a terminated container (finished at testFinishedAt)."""
    tmeta = job["spec"]["template"]["metadata"]
    body: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": "pod-", "namespace": NS, "labels": dict(tmeta.get("labels") or {}),
                     "finalizers": [JOB_TRACKING_FINALIZER],
                     "ownerReferences": [make_controller_ref(job, api_version="batch/v1", kind="Job")]},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "foo/bar"}]}}
    if index is not None and index != NO_INDEX:
        body["metadata"]["annotations"] = {COMPLETION_INDEX: index}
        body["spec"]["hostname"] = f"{job['metadata']['name']}-{index}"
    pod = await api.create(PODS, body, NS)
    status: dict[str, Any] = {"phase": phase}
    if container_status:
        status["containerStatuses"] = [{"name": "c", "ready": False, "restartCount": 0, "image": "foo/bar",
                                        "imageID": "", "state": {"terminated": {"exitCode": 0,
                                                                               "finishedAt": TEST_FINISHED_AT}}}]
    if ready:
        status["conditions"] = [{"type": "Ready", "status": "True"}]
    pod["status"] = status
    pod = await api.update_status(PODS, pod)
    if terminating:
        await api.delete(PODS, pod["metadata"]["name"], NS)
    return pod


Cond = tuple[str, str, str, str]
SCM: Cond = ("SuccessCriteriaMet", T, "CompletionsReached", "Reached expected number of succeeded pods")
COMPLETE: Cond = ("Complete", T, "CompletionsReached", "Reached expected number of succeeded pods")
FT_BACKOFF: Cond = ("FailureTarget", T, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
FAILED_BACKOFF: Cond = ("Failed", T, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
FT_DEADLINE: Cond = ("FailureTarget", T, "DeadlineExceeded", "Job was active longer than specified deadline")
FAILED_DEADLINE: Cond = ("Failed", T, "DeadlineExceeded", "Job was active longer than specified deadline")
SUSPENDED: Cond = ("Suspended", T, "JobSuspended", "Job suspended")
RESUMED: Cond = ("Suspended", F, "JobResumed", "Job resumed")


@dataclass
class SyncCase:
    parallelism: int
    completions: int
    backoff_limit: int = 0
    deleting: bool = False
    pod_limit: int = 0
    completion_mode: str = ""
    was_suspended: bool = False
    suspend: bool = False
    pod_replacement_policy: str | None = None
    pod_failure_policy: dict[str, Any] | None = None
    initial_status: dict[str, Any] | None = None  # active, succeed, failed, start (seconds before now), conditions
    backoff_record: tuple[int, float] | None = None  # failuresAfterLastSuccess, lastFailure (seconds before now)
    pod_controller_error: bool = False
    pending: int = 0
    active: int = 0
    ready: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int = 0
    with_indexes: list[tuple[str, str]] = field(default_factory=list)
    fake_expectation: int = 0  # negative: ExpectDeletions, positive: ExpectCreations
    exp_creations: int = 0
    exp_deletions: int = 0
    exp_active: int = 0
    exp_ready: int = 0
    exp_succeeded: int = 0
    exp_completed: str = ""
    exp_failed: int = 0
    exp_terminating: int | None = None
    exp_conditions: list[Cond] = field(default_factory=list)
    exp_created_indexes: set[int] = field(default_factory=set)
    exp_patches: int = 0
    job_pod_replacement_policy: bool = False


MANUAL_FAILURE_TARGET: Cond = ("FailureTarget", F, "ConditionAddedManually", "Testing")
MANUAL_SUCCESS_CRITERIA: Cond = ("SuccessCriteriaMet", F, "ConditionAddedManually", "Testing")

# Expectations are v1.33's default gates (see the module docstring): where a case turns
# JobPodReplacementPolicy / JobManagedBy off, its terminal conditions are those its "enabled"
# twin expects (interim condition first; the terminal one delayed while pods terminate).
SYNC_CASES = {
    "job start": SyncCase(2, 5, 6, exp_creations=2, exp_active=2),
    "WQ job start": SyncCase(2, -1, 6, exp_creations=2, exp_active=2),
    "pending pods": SyncCase(2, 5, 6, pending=2, exp_active=2),
    "correct # of pods": SyncCase(3, 5, 6, active=3, ready=2, exp_active=3, exp_ready=2),
    "WQ job: correct # of pods": SyncCase(2, -1, 6, active=2, exp_active=2),
    "too few active pods": SyncCase(2, 5, 6, active=1, succeeded=1, exp_creations=1, exp_active=2, exp_succeeded=1,
                                    exp_patches=1),
    "WQ job: recreate pods when failed": SyncCase(1, -1, 6, active=1, failed=1, pod_replacement_policy="Failed",
                                                  job_pod_replacement_policy=True, terminating=1, exp_terminating=1,
                                                  exp_patches=1, exp_failed=1, exp_active=1),
    "WQ job: turn on PodReplacementPolicy but not set PodReplacementPolicy": SyncCase(
        1, 1, 6, active=1, failed=1, job_pod_replacement_policy=True, exp_terminating=1, terminating=1, exp_active=1,
        exp_patches=2, exp_failed=2),
    "WQ job: recreate pods when terminating or failed": SyncCase(
        1, -1, 6, active=1, failed=1, pod_replacement_policy="TerminatingOrFailed", job_pod_replacement_policy=True,
        terminating=1, exp_terminating=1, exp_active=1, exp_patches=2, exp_failed=2),
    "more terminating pods than parallelism": SyncCase(
        1, 1, 6, active=2, terminating=4, pod_replacement_policy="Failed", job_pod_replacement_policy=True,
        exp_terminating=5, exp_active=1, exp_deletions=1, exp_patches=1),
    "more terminating pods than parallelism; PodFailurePolicy used": SyncCase(
        # upstream's &PodFailurePolicy{}: written {"rules": []}, as the API defaults an empty object wrongly
        # (test_empty_pod_failure_policy_defaults_replacement_to_failed)
        1, 1, 6, active=2, terminating=4, pod_failure_policy={"rules": []}, exp_active=1, exp_deletions=1,
        exp_patches=1),
    "too few active pods and active back-off": SyncCase(
        1, 1, 6, backoff_record=(1, 0.0), initial_status={"start": 0.0}),
    "too few active pods and no back-offs": SyncCase(1, 1, 6, backoff_record=(0, 0.0), exp_creations=1,
                                                     exp_active=1),
    "too few active pods with a dynamic job": SyncCase(2, -1, 6, active=1, exp_creations=1, exp_active=2),
    "too few active pods, with controller error": SyncCase(2, 5, 6, pod_controller_error=True, active=1, succeeded=1,
                                                           exp_creations=1, exp_active=1, exp_patches=1),
    "too many active pods": SyncCase(2, 5, 6, active=3, exp_deletions=1, exp_active=2, exp_patches=1),
    "too many active pods; PodReplacementPolicy enabled": SyncCase(
        2, 5, 6, active=3, job_pod_replacement_policy=True, exp_deletions=1, exp_active=2, exp_patches=1,
        exp_terminating=1),
    "too many active pods, with controller error": SyncCase(2, 5, 6, pod_controller_error=True, active=3,
                                                            exp_patches=1, exp_active=3),
    "count ready pods when too many active pods": SyncCase(2, 5, 6, active=3, ready=3, exp_deletions=1, exp_active=2,
                                                           exp_patches=1, exp_ready=2),
    "failed + succeed pods: reset backoff delay": SyncCase(2, 5, 6, active=1, succeeded=1, failed=1, exp_creations=1,
                                                           exp_active=2, exp_succeeded=1, exp_failed=1,
                                                           exp_patches=2),
    "new failed pod": SyncCase(2, 5, 6, active=1, failed=1, exp_creations=1, exp_active=2, exp_failed=1,
                               exp_patches=1),
    "no new pod; possible finalizer update of failed pod": SyncCase(
        1, 1, 6, initial_status={"active": 1, "succeed": 0, "failed": 1}, active=1, exp_active=1, exp_failed=1),
    "only new failed pod with controller error": SyncCase(2, 5, 6, pod_controller_error=True, active=1, failed=1,
                                                          exp_creations=1, exp_active=1, exp_patches=1),
    "job finish": SyncCase(2, 5, 6, succeeded=5, exp_succeeded=5, exp_conditions=[SCM, COMPLETE], exp_patches=5),
    "WQ job finishing": SyncCase(2, -1, 6, active=1, succeeded=1, exp_active=1, exp_succeeded=1, exp_patches=1),
    "WQ job all finished": SyncCase(2, -1, 6, succeeded=2, exp_succeeded=2, exp_conditions=[SCM, COMPLETE],
                                    exp_patches=2),
    "WQ job all finished despite one failure": SyncCase(2, -1, 6, succeeded=1, failed=1, exp_succeeded=1,
                                                        exp_failed=1, exp_conditions=[SCM, COMPLETE], exp_patches=2),
    "more active pods than parallelism": SyncCase(2, 5, 6, active=10, exp_deletions=8, exp_active=2, exp_patches=8),
    "more active pods than remaining completions": SyncCase(3, 4, 6, active=3, succeeded=2, exp_deletions=1,
                                                            exp_active=2, exp_succeeded=2, exp_patches=3),
    "status change": SyncCase(2, 5, 6, active=2, succeeded=2, exp_active=2, exp_succeeded=2, exp_patches=2),
    "deleting job": SyncCase(2, 5, 6, deleting=True, pending=1, active=1, succeeded=1, exp_active=2, exp_succeeded=1,
                             exp_patches=3),
    "limited pods": SyncCase(100, 200, 6, pod_limit=10, exp_creations=10, exp_active=10),
    "too many job failures": SyncCase(2, 5, deleting=True, failed=1, exp_failed=1,
                                      exp_conditions=[FT_BACKOFF, FAILED_BACKOFF], exp_patches=1),
    "job failures, unsatisfied expectations": SyncCase(2, 5, deleting=True, failed=1, fake_expectation=1,
                                                       exp_failed=1, exp_patches=1),
    "indexed job start": SyncCase(2, 5, 6, completion_mode="Indexed", exp_creations=2, exp_active=2,
                                  exp_created_indexes={0, 1}),
    "indexed job with some pods deleted, podReplacementPolicy Failed": SyncCase(
        2, 5, 6, completion_mode="Indexed", exp_creations=1, exp_active=1, exp_created_indexes={0},
        pod_replacement_policy="Failed", job_pod_replacement_policy=True, terminating=1, exp_terminating=1),
    "indexed job with some pods deleted, podReplacementPolicy TerminatingOrFailed": SyncCase(
        2, 5, 6, completion_mode="Indexed", exp_creations=2, exp_active=2, exp_created_indexes={0, 1},
        pod_replacement_policy="TerminatingOrFailed", job_pod_replacement_policy=True, terminating=1,
        exp_terminating=1, exp_patches=1),
    "indexed job completed": SyncCase(2, 3, 6, completion_mode="Indexed",
                                      with_indexes=[("0", S), ("1", FA), ("1", S), ("2", S)], exp_succeeded=3,
                                      exp_failed=1, exp_completed="0-2", exp_conditions=[SCM, COMPLETE],
                                      exp_patches=4),
    "indexed job failed": SyncCase(2, 3, 0, completion_mode="Indexed", with_indexes=[("0", S), ("1", FA), ("2", R)],
                                   exp_succeeded=1, exp_failed=2, exp_completed="0", exp_conditions=[FT_BACKOFF],
                                   exp_patches=3, exp_deletions=1),
    "count terminating pods when indexed job fails and PodReplacementPolicy enabled": SyncCase(
        2, 3, 0, completion_mode="Indexed", with_indexes=[("0", S), ("1", FA), ("2", R)],
        job_pod_replacement_policy=True, exp_succeeded=1, exp_failed=2, exp_completed="0",
        exp_conditions=[FT_BACKOFF], exp_patches=3, exp_deletions=1, exp_terminating=1),
    "count ready pods when job fails": SyncCase(2, 3, 0, active=2, ready=2, failed=1, exp_failed=3,
                                                exp_conditions=[FT_BACKOFF], exp_patches=3, exp_deletions=2),
    "indexed job repeated completed index": SyncCase(2, 3, 6, completion_mode="Indexed",
                                                     with_indexes=[("0", S), ("1", S), ("1", S)], exp_creations=1,
                                                     exp_active=1, exp_succeeded=2, exp_completed="0,1",
                                                     exp_created_indexes={2}, exp_patches=3),
    "indexed job some running and completed pods": SyncCase(
        8, 20, 6, completion_mode="Indexed",
        with_indexes=[("0", R), ("2", S), ("3", P), ("4", S), ("5", S), ("7", S), ("8", S), ("9", S)],
        exp_creations=6, exp_active=8, exp_succeeded=6, exp_completed="2,4,5,7-9",
        exp_created_indexes={1, 6, 10, 11, 12, 13}, exp_patches=6),
    "indexed job some failed pods": SyncCase(3, 4, 6, completion_mode="Indexed",
                                             with_indexes=[("0", FA), ("1", P), ("2", FA)], exp_creations=2,
                                             exp_active=3, exp_failed=2, exp_created_indexes={0, 2}, exp_patches=2),
    "indexed job some pods without index": SyncCase(
        2, 5, 6, completion_mode="Indexed", active=1, succeeded=1, failed=1,
        with_indexes=[("invalid", R), ("invalid", S), ("invalid", FA), ("invalid", P), ("0", S), ("1", R), ("2", R)],
        exp_deletions=3, exp_active=2, exp_succeeded=1, exp_completed="0", exp_patches=8),
    "indexed job repeated indexes": SyncCase(
        5, 5, 6, completion_mode="Indexed", succeeded=1, failed=1,
        with_indexes=[("invalid", R), ("0", S), ("1", R), ("2", R), ("2", P)], exp_deletions=2, exp_active=2,
        exp_succeeded=1, exp_completed="0", exp_patches=5),
    "indexed job with indexes outside of range": SyncCase(
        2, 5, 6, completion_mode="Indexed", with_indexes=[("0", S), ("5", R), ("6", S), ("7", P), ("8", FA)],
        exp_succeeded=1, exp_deletions=2, exp_completed="0", exp_patches=5),
    "suspending a job with satisfied expectations": SyncCase(2, 4, 6, suspend=True, active=2, exp_deletions=2,
                                                             exp_conditions=[SUSPENDED], exp_patches=2),
    "suspending a job with satisfied expectations; PodReplacementPolicy enabled": SyncCase(
        2, 4, 6, suspend=True, active=2, job_pod_replacement_policy=True, exp_deletions=2,
        exp_conditions=[SUSPENDED], exp_patches=2, exp_terminating=2),
    "count ready pods when suspending a job with satisfied expectations": SyncCase(
        2, 4, 6, suspend=True, active=2, ready=2, exp_deletions=2, exp_conditions=[SUSPENDED], exp_patches=2),
    "suspending a job with unsatisfied expectations": SyncCase(2, 4, 6, suspend=True, active=3, fake_expectation=-1,
                                                               exp_active=3),
    "count ready pods when suspending a job with unsatisfied expectations": SyncCase(
        2, 4, 6, suspend=True, active=3, ready=3, fake_expectation=-1, exp_active=3, exp_ready=3),
    "suspending a job with unsatisfied expectations; PodReplacementPolicy enabled": SyncCase(
        2, 4, 6, suspend=True, active=3, fake_expectation=-1, job_pod_replacement_policy=True, exp_active=3,
        exp_terminating=0),
    "resuming a suspended job": SyncCase(2, 4, 6, was_suspended=True, exp_creations=2, exp_active=2,
                                         exp_conditions=[RESUMED]),
    "suspending a deleted job": SyncCase(2, 4, 6, suspend=True, deleting=True, active=2, exp_active=2,
                                         exp_patches=2),
    "suspending a deleted job; PodReplacementPolicy enabled": SyncCase(
        2, 4, 6, suspend=True, deleting=True, active=2, job_pod_replacement_policy=True, exp_active=2, exp_patches=2,
        exp_terminating=0),
    "FailureTarget=False condition added manually is ignored": SyncCase(
        1, 1, active=1, ready=1, initial_status={"active": 1, "start": 0.0, "conditions": [MANUAL_FAILURE_TARGET]},
        exp_active=1, exp_ready=1, exp_conditions=[MANUAL_FAILURE_TARGET]),
    "SuccessCriteriaMet=False condition added manually is ignored": SyncCase(
        1, 1, active=1, ready=1, initial_status={"active": 1, "start": 0.0, "conditions": [MANUAL_SUCCESS_CRITERIA]},
        exp_active=1, exp_ready=1, exp_conditions=[MANUAL_SUCCESS_CRITERIA]),
    "backoff limit exceeded; JobManagedBy enabled": SyncCase(
        2, 3, 0, completion_mode="Indexed", with_indexes=[("0", S), ("1", FA), ("2", R)], exp_succeeded=1,
        exp_failed=2, exp_completed="0", exp_conditions=[FT_BACKOFF], exp_patches=3, exp_deletions=1),
}


def conds(status: dict[str, Any]) -> list[Cond]:
    return [(c["type"], c["status"], c.get("reason", ""), c.get("message", ""))
            for c in status.get("conditions") or []]


async def setup_sync_case(api: Any, tc: SyncCase, *, name: str = "foobar",
                          **spec: Any) -> tuple[JobController, PodControl, dict[str, Any]]:
    """The test's job & pods setup through the real API, and a controller whose informers hold them."""
    err = InternalError("fake error") if tc.pod_controller_error else None
    control = PodControl(api, err=err, create_limit=tc.pod_limit)
    ctl = JobController(control, api.factory, clock=api.clock)
    api.informer(JOBS)
    api.informer(PODS)
    extra = dict(spec)
    if tc.job_pod_replacement_policy and tc.pod_replacement_policy is not None:
        extra["podReplacementPolicy"] = tc.pod_replacement_policy
    if tc.pod_failure_policy is not None:
        extra["podFailurePolicy"] = tc.pod_failure_policy
    job = await api.create(JOBS, job_body(name, tc.parallelism, tc.completions, tc.backoff_limit, tc.completion_mode,
                                          suspend=tc.suspend, deleting=tc.deleting, **extra), NS)
    now = api.clock.now()
    status: dict[str, Any] = {}
    if tc.initial_status is not None:
        ist = tc.initial_status
        status["startTime"] = rfc3339(now - timedelta(seconds=ist.get("start", 0.0)))
        for k, src in (("active", "active"), ("succeeded", "succeed"), ("failed", "failed")):
            if ist.get(src):
                status[k] = ist[src]
        status["conditions"] = [
            {"type": c[0], "status": c[1], "reason": c[2], "message": c[3], "lastProbeTime": rfc3339(now),
             "lastTransitionTime": rfc3339(now)} for c in ist.get("conditions") or []]
    if tc.was_suspended:
        status.setdefault("conditions", []).append(
            {"type": "Suspended", "status": "True", "reason": "JobSuspended", "message": "Job suspended",
             "lastProbeTime": rfc3339(now), "lastTransitionTime": rfc3339(now)})
    if status:
        job["status"] = status
        job = await api.update_status(JOBS, job)
    for _ in range(tc.pending):
        await add_pod(api, job, P)
    for i in range(tc.active):
        await add_pod(api, job, R, ready=i < tc.ready)
    for _ in range(tc.succeeded):
        await add_pod(api, job, S)
    for _ in range(tc.failed):
        await add_pod(api, job, FA)
    for _ in range(tc.terminating):
        await add_pod(api, job, R, terminating=True)
    for ix, phase in tc.with_indexes:
        await add_pod(api, job, phase, index=ix, container_status=phase in (S, FA))
    if tc.deleting:
        await api.delete(JOBS, name, NS)
    key = f"{NS}/{name}"
    if tc.backoff_record is not None:
        failures, ago = tc.backoff_record
        ctl.backoff_store[key] = BackoffRecord(failures, now - timedelta(seconds=ago))
    if tc.fake_expectation < 0:
        ctl.expectations.expect_deletions(key, [f"{NS}/expected-{i}" for i in range(-tc.fake_expectation)])
    elif tc.fake_expectation > 0:
        ctl.expectations.expect_creations(key, tc.fake_expectation)
    await api.settle()
    job = await api.get(JOBS, name, NS)
    return ctl, control, job


def check_indexed_job_pods(control: PodControl, want: set[int], job_name: str) -> None:
    """checkIndexedJobPods: every created pod has its index (annotation, label, env var),
    hostname `<job>-<index>` and generateName `<job>-<index>-`."""
    got = set()
    for p in control.templates:
        ix = int(p["metadata"]["annotations"][COMPLETION_INDEX])
        got.add(ix)
        assert p["metadata"]["labels"][COMPLETION_INDEX] == str(ix)
        env = p["spec"]["containers"][0]["env"]
        assert {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
            "fieldPath": f"metadata.labels['{COMPLETION_INDEX}']"}}} in env
        assert p["spec"]["hostname"] == f"{job_name}-{ix}"
        assert p["metadata"]["generateName"] == f"{job_name}-{ix}-"
    assert got == want


@pytest.mark.parametrize("name", list(SYNC_CASES))
async def test_controller_sync_job(real_api: Any, name: str) -> None:
    tc = SYNC_CASES[name]
    ctl, control, job = await setup_sync_case(real_api, tc)
    error: Exception | None = None
    try:
        await ctl.sync(f"{NS}/foobar")
    except Exception as e:  # noqa: BLE001 - upstream checks only that syncJob failed
        error = e
    if tc.pod_controller_error or (tc.pod_limit and control.create_calls > tc.pod_limit):
        assert error is not None
    else:
        assert error is None
    await real_api.settle()
    assert len(control.templates) == tc.exp_creations
    for p in control.templates:
        ref = p["metadata"]["ownerReferences"][0]
        assert (ref["apiVersion"], ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
            "batch/v1", "Job", "foobar", job["metadata"]["uid"], True)
    if tc.completion_mode == "Indexed":
        check_indexed_job_pods(control, tc.exp_created_indexes, "foobar")
    else:
        assert all(p["metadata"]["generateName"] == "foobar-" and "hostname" not in p["spec"]
                   for p in control.templates)
    assert len(control.deleted) == tc.exp_deletions
    st = (await real_api.get(JOBS, "foobar", NS))["status"]
    assert st.get("active", 0) == tc.exp_active
    assert st.get("ready") == tc.exp_ready
    assert st.get("succeeded", 0) == tc.exp_succeeded
    assert st.get("completedIndexes", "") == tc.exp_completed
    assert st.get("failed", 0) == tc.exp_failed
    if tc.exp_terminating is not None:
        assert st.get("terminating") == tc.exp_terminating
    assert ("startTime" in st) is not tc.suspend
    assert conds(st) == tc.exp_conditions
    assert len(control.patches) == tc.exp_patches


@dataclass
class DeadlineCase:
    parallelism: int
    completions: int
    active_deadline_seconds: int
    start_time: int  # seconds before now
    backoff_limit: int = 0
    suspend: bool = False
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    exp_deletions: int = 0
    exp_active: int = 0
    exp_succeeded: int = 0
    exp_failed: int = 0
    exp_conditions: list[Cond] = field(default_factory=list)


# v1.33 defaults: the "JobPodReplacementPolicy / JobManagedBy enabled" expectations everywhere
SYNC_PAST_DEADLINE = {
    "activeDeadlineSeconds less than single pod execution": DeadlineCase(
        1, 1, 10, 15, 6, active=1, exp_deletions=1, exp_failed=1, exp_conditions=[FT_DEADLINE]),
    "activeDeadlineSeconds bigger than single pod execution": DeadlineCase(
        1, 2, 10, 15, 6, active=1, succeeded=1, exp_deletions=1, exp_succeeded=1, exp_failed=1,
        exp_conditions=[FT_DEADLINE]),
    "activeDeadlineSeconds times-out before any pod starts": DeadlineCase(
        1, 1, 10, 10, 6, exp_conditions=[FT_DEADLINE, FAILED_DEADLINE]),
    "activeDeadlineSeconds with backofflimit reach": DeadlineCase(
        1, 1, 1, 10, failed=1, exp_failed=1, exp_conditions=[FT_BACKOFF, FAILED_BACKOFF]),
    "activeDeadlineSeconds is not triggered when Job is suspended": DeadlineCase(
        1, 2, 10, 15, 6, suspend=True, exp_conditions=[SUSPENDED]),
    "activeDeadlineSeconds exceeded; JobPodReplacementPolicy enabled": DeadlineCase(
        1, 2, 10, 15, 6, active=1, succeeded=1, exp_deletions=1, exp_succeeded=1, exp_failed=1,
        exp_conditions=[FT_DEADLINE]),
    "activeDeadlineSeconds exceeded; JobManagedBy enabled": DeadlineCase(
        1, 2, 10, 15, 6, active=1, succeeded=1, exp_deletions=1, exp_succeeded=1, exp_failed=1,
        exp_conditions=[FT_DEADLINE]),
    "activeDeadlineSeconds exceeded and backofflimit reached; JobManagedBy enabled": DeadlineCase(
        1, 1, 1, 10, failed=1, exp_failed=1, exp_conditions=[FT_BACKOFF, FAILED_BACKOFF]),
}


@pytest.mark.parametrize("name", list(SYNC_PAST_DEADLINE))
async def test_sync_job_past_deadline(real_api: Any, name: str) -> None:
    dc = SYNC_PAST_DEADLINE[name]
    tc = SyncCase(dc.parallelism, dc.completions, dc.backoff_limit, suspend=dc.suspend,
                  initial_status={"start": float(dc.start_time)}, active=dc.active, succeeded=dc.succeeded,
                  failed=dc.failed)
    ctl, control, _ = await setup_sync_case(real_api, tc, activeDeadlineSeconds=dc.active_deadline_seconds)
    await ctl.sync(f"{NS}/foobar")
    await real_api.settle()
    assert control.templates == []
    assert len(control.deleted) == dc.exp_deletions
    st = (await real_api.get(JOBS, "foobar", NS))["status"]
    assert (st.get("active", 0), st.get("succeeded", 0), st.get("failed", 0)) == (
        dc.exp_active, dc.exp_succeeded, dc.exp_failed)
    assert "startTime" in st
    assert conds(st) == dc.exp_conditions


@pytest.mark.parametrize(("set_start_time", "job_name"), [
    pytest.param(False, "job1", id="New job created without start time being set"),
    pytest.param(True, "job2", id="New job created with start time being set"),
])
async def test_past_deadline_job_finished(real_api: Any, set_start_time: bool, job_name: str) -> None:
    """TestPastDeadlineJobFinished: tracked until activeDeadlineSeconds (1 s) passed, then
    Failed with DeadlineExceeded, never earlier (expectations always satisfied: no pods run)."""
    api = real_api
    ctl = JobController(api, api.factory, clock=api.clock, sync_batch_period=0.01)
    api.informer(JOBS)
    api.informer(PODS)
    api.spawn(ctl.run(), "job-controller")
    body = job_body(job_name, 1, 1, 6, activeDeadlineSeconds=1)
    job = await api.create(JOBS, body, NS)
    if set_start_time:
        job["status"] = {"startTime": rfc3339(api.clock.now())}
        await api.update_status(JOBS, job)

    async def job_now() -> dict[str, Any]:
        return await api.get(JOBS, job_name, NS)

    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while "startTime" not in (await job_now()).get("status", {}):
        assert loop.time() < deadline, "startTime never set"
        await asyncio.sleep(0.01)
    while True:
        j = await job_now()
        failed = [c for c in j["status"].get("conditions") or []
                  if c["type"] == "Failed" and c["status"] == T and c["reason"] == "DeadlineExceeded"]
        if failed:
            start = datetime.fromisoformat(j["status"]["startTime"].replace("Z", "+00:00"))
            assert (api.clock.now() - start).total_seconds() >= 1, "DeadlineExceeded earlier than expected"
            break
        assert loop.time() < deadline, f"no DeadlineExceeded: {j['status']}"
        api.clock.advance(0.1)  # manager.clock.Sleep(100 ms)
        await asyncio.sleep(0.05)


@pytest.mark.parametrize(("job_ns", "selector", "pod_ns", "pod_labels", "want"), [
    pytest.param("default", None, "default", {}, None, id="pods without labels don't match any job"),
    pytest.param("default", {"matchLabels": {"foo": "bar"}}, "ns", {"foo": "bar"}, None,
                 id="matching labels, different namespace"),
    pytest.param("ns", {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}, "ns",
                 {"foo": "bar"}, "bar", id="matching ns and labels returns"),
])
async def test_job_pod_lookup(real_api: Any, job_ns: str, selector: dict[str, Any] | None, pod_ns: str,
                              pod_labels: dict[str, str], want: str | None) -> None:
    """TestJobPodLookup: an orphan pod's Jobs, by namespace and the Jobs' selectors."""
    api = real_api
    ctl = JobController(api, api.factory, clock=api.clock)
    api.informer(JOBS)
    for ns in {job_ns, pod_ns} - {"default"}:
        await api.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    name = want or "foo"
    body = job_body(name, 1, 1, 6)
    body["metadata"]["namespace"] = job_ns
    if selector is not None:
        body["spec"]["manualSelector"] = True
        body["spec"]["selector"] = selector
    await api.create(JOBS, body, job_ns)
    await api.settle()
    pod = {"metadata": {"name": "foo1", "namespace": pod_ns, "labels": pod_labels}}
    got = [j["metadata"]["name"] for j in ctl.get_pod_jobs(pod)]
    assert got == ([want] if want else [])


async def test_empty_pod_failure_policy_defaults_replacement_to_failed(real_api: Any) -> None:
    job = await real_api.create(JOBS, job_body("foobar", 1, 1, 6, podFailurePolicy={}), NS)
    assert job["spec"]["podReplacementPolicy"] == "Failed"
