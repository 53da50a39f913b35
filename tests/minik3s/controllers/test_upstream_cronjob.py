"""Upstream's CronJob controller tables, ported (kubernetes v1.33 line, pkg/controller/cronjob):
utils_test.go (TestGetJobFromTemplate2, TestNextScheduleTime, TestByJobStartTime,
TestMostRecentScheduleTime, TestNextScheduleTimeDuration) and cronjob_controllerv2_test.go
(TestControllerV2SyncCronJob, TestControllerV2GetJobsToBeReconciled,
TestControllerV2CleanupFinishedJobs, TestControllerV2JobAlreadyExistsButNotInActiveStatus,
TestControllerV2JobAlreadyExistsButDifferentOwner). The stored copies read were the v1.27+
files (named-field table, @every and time-zone cases, requeue durations).

How they are driven here:
  * the utils tables call the module's functions (`job_from_template`, `next_schedule_time`,
    `sort_by_job_start_time`, `most_recent_schedule_time`, `next_schedule_time_duration`) with the
    schedule parsed by `parse_schedule` (upstream's cron.ParseStandard(formatSchedule(cj))).
  * TestControllerV2SyncCronJob calls `CronJobController.sync_cron_job(cj, jobs)` as upstream calls
    syncCronJob(cj, jobs): the CronJob and the Jobs are stored in the real in-process API (the
    fake clock at the CronJob's creation time), the CronJob handed in is the test's copy of it
    (creation time, lastScheduleTime, active list as the case sets them), the Jobs handed in are
    the lister's (a Job "still not found in lister" is in the API only). Job creates, gets and
    deletes go to the API: a create that upstream's fake fails with AlreadyExists meets a real
    Job of that name (a copy of the previous run's Job), the terminating-namespace case a
    namespace really being deleted, the failing get an injected BadRequest. The controller's
    own clock is the case's `now`; its Events are counted at `recorder.event`.

Not ported: TestControllerV2UpdateCronJob (the update handler's AddAfter delay: here an update
enqueues the CronJob at once and its sync schedules the same wake-up), the tests of the
controller's plumbing (queue, informer wiring). In TestControllerV2SyncCronJob upstream's
`expectActive` is checked against fake status updates that syncCronJob never makes, so it is
asserted here on the CronJob copy except where syncCronJob swaps to a freshly read CronJob
(the "not present in cronjob active list" / terminating-namespace cases).
TestGetJobsToBeReaped / TestIsJobFinished are not in the v1.33 utils_test.go.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from minik3s.api.errors import BadRequestError, InvalidError
from minik3s.api.resources import CRONJOBS, JOBS, NAMESPACES
from minik3s.controllers.cronjob import (
    MISSED_FEW,
    MISSED_MANY,
    MISSED_NONE,
    NEXT_SCHEDULE_DELTA,
    SCHEDULED_TIMESTAMP,
    CronJobController,
    job_from_template,
    job_name,
    job_ref,
    most_recent_schedule_time,
    next_schedule_time,
    next_schedule_time_duration,
    parse_schedule,
    sort_by_job_start_time,
)
from minik3s.utils.clock import FakeClock, rfc3339

NS = "snazzycats"
H = 3600.0
M = 60.0
DELTA = NEXT_SCHEDULE_DELTA


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


TOP = at("2016-05-19T10:00:00Z")  # topOfTheHour (a Thursday)


def delta_after_top(seconds: float) -> datetime:
    return TOP + timedelta(seconds=seconds)


JUST_A_SECOND_BEFORE_THE_HOUR = at("2016-05-19T09:59:59Z")
JUST_AFTER_THE_PRIOR_HOUR = at("2016-05-19T09:01:00Z")
JUST_BEFORE_THE_PRIOR_HOUR = at("2016-05-19T08:59:00Z")
JUST_AFTER_THE_HOUR = at("2016-05-19T10:01:00Z")
JUST_BEFORE_THE_HOUR = at("2016-05-19T09:59:00Z")
JUST_BEFORE_THE_NEXT_HOUR = at("2016-05-19T10:59:00Z")
WEEK_AFTER_THE_HOUR = at("2016-05-26T10:00:00Z")


def cron_job(schedule: str = "* * * * ?", *, creation: datetime | None = None, last: datetime | None = None,
             **spec: Any) -> dict[str, Any]:
    """cronJob(): the test CronJob (as the API would hold it)."""
    cj: dict[str, Any] = {
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "mycronjob", "namespace": NS, "uid": "1a2b3c",
                     "creationTimestamp": rfc3339(creation or JUST_BEFORE_THE_HOUR)},
        "spec": {"schedule": schedule, "concurrencyPolicy": "Allow", **spec,
                 "jobTemplate": {"metadata": {"labels": {"a": "b"}, "annotations": {"x": "y"}},
                                 "spec": {"parallelism": 1, "completions": 1, "template": {
                                     "metadata": {"labels": {"foo": "bar"}},
                                     "spec": {"restartPolicy": "Never",
                                              "containers": [{"name": "c", "image": "foo/bar"}]}}}}},
        "status": {}}
    if last is not None:
        cj["status"]["lastScheduleTime"] = rfc3339(last)
    return cj


def sched_of(cj: dict[str, Any]) -> Any:
    return parse_schedule(cj)[0]


# --------------------------------------------------------------------------- utils_test.go


@pytest.mark.parametrize(("tz", "annotations", "want_time", "want_annotations"), [
    pytest.param("UTC", {"x": "y"}, "2016-05-19T10:00:00Z", 2, id="UTC timezone and one annotation"),
    pytest.param(None, {"x": "y"}, "2016-05-19T10:00:00Z", 2, id="nil timezone and one annotation"),
    pytest.param("Europe/Rome", {"x": "y", "z": "x"}, "2016-05-19T12:00:00+02:00", 3,
                 id="correct timezone and multiple annotation"),
])
def test_get_job_from_template2(tz: str | None, annotations: dict[str, str], want_time: str,
                                want_annotations: int) -> None:
    cj = cron_job()
    cj["spec"]["jobTemplate"]["metadata"]["annotations"] = annotations
    zone = ZoneInfo(tz) if tz else UTC
    job = job_from_template(cj, TOP, zone)
    assert job["metadata"]["name"].startswith("mycronjob-")
    assert len(job["metadata"]["labels"]) == 1
    assert len(job["metadata"]["annotations"]) == want_annotations
    assert job["metadata"]["annotations"][SCHEDULED_TIMESTAMP] == want_time


def test_next_schedule_time() -> None:
    """TestNextScheduleTime's eight sequential cases on an hourly schedule."""
    t1, t2 = TOP, TOP + timedelta(hours=1)
    # Case 1: no known start times, and none needed yet
    cj = cron_job("0 * * * ?", creation=t1 - timedelta(minutes=10))
    assert next_schedule_time(cj, t1 - timedelta(minutes=7), sched_of(cj))[0] is None
    # Case 2: no known start times, and one needed
    assert next_schedule_time(cj, t1 + timedelta(seconds=2), sched_of(cj))[0] == t1
    # Case 3: known LastScheduleTime, no start needed
    cj = cron_job("0 * * * ?", creation=t1 - timedelta(minutes=10), last=t1)
    assert next_schedule_time(cj, t1 + timedelta(minutes=2), sched_of(cj))[0] is None
    # Case 4: known LastScheduleTime, a start needed
    assert next_schedule_time(cj, t2 + timedelta(minutes=5), sched_of(cj))[0] == t2
    # Case 5: known LastScheduleTime, two starts needed
    cj = cron_job("0 * * * ?", creation=t1 - timedelta(hours=2), last=t1 - timedelta(hours=1))
    assert next_schedule_time(cj, t2 + timedelta(minutes=5), sched_of(cj))[0] == t2
    # Case 6: now is way way ahead of last start time, and there is no deadline
    assert next_schedule_time(cj, t2 + timedelta(days=10), sched_of(cj))[0] is not None
    # Case 7: now is way way ahead of last start time, but there is a short deadline
    cj["spec"]["startingDeadlineSeconds"] = 2 * 60 * 60
    assert next_schedule_time(cj, t2 + timedelta(days=10), sched_of(cj))[0] is not None
    # Case 8: the error from mostRecentScheduleTime is passed up (a rogue schedule)
    cj = cron_job("59 23 31 2 *", creation=t1 + timedelta(seconds=10))
    scheduled, _, err = next_schedule_time(cj, t1 + timedelta(hours=1), sched_of(cj))
    assert scheduled is None and err is not None


NOW = at("2018-01-01T02:03:04.000000005Z".replace(".000000005", ""))
LATER = at("2019-01-01T02:03:04Z")


def job_at(name: str, start: datetime | None) -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {} if start is None else {"startTime": rfc3339(start)}}


@pytest.mark.parametrize(("given", "want"), [
    pytest.param([("b", None), ("a", None)], ["a", "b"], id="both have nil start times"),
    pytest.param([("a", None), ("b", NOW)], ["b", "a"], id="only the first has a nil start time"),
    pytest.param([("a", NOW), ("b", None)], ["a", "b"], id="only the second has a nil start time"),
    pytest.param([("b", NOW), ("a", NOW)], ["a", "b"], id="both have non-nil, equal start time"),
    pytest.param([("a", LATER), ("b", NOW)], ["b", "a"], id="both have non-nil, different start time"),
])
def test_by_job_start_time(given: list[tuple[str, datetime | None]], want: list[str]) -> None:
    assert [j["metadata"]["name"] for j in sort_by_job_start_time([job_at(n, t) for n, t in given])] == want


MOST_RECENT = [
    pytest.param(cron_job("0 * * * *", creation=TOP), False, TOP + timedelta(seconds=30), TOP, None, MISSED_NONE,
                 False, id="now before next schedule"),
    pytest.param(cron_job("0 * * * *", creation=TOP), False, TOP + timedelta(minutes=61), TOP, delta_after_top(H),
                 MISSED_NONE, False, id="now just after next schedule"),
    pytest.param(cron_job("0 * * * *", creation=delta_after_top(10)), False, delta_after_top(301 * M),
                 delta_after_top(10), delta_after_top(300 * M), MISSED_FEW, False, id="missed 5 schedules"),
    pytest.param(cron_job("30 6-16/4 * * 1-5", creation=TOP, last=delta_after_top(30 * M)), False,
                 delta_after_top(24 * H + 31 * M), delta_after_top(30 * M), delta_after_top(24 * H + 30 * M),
                 MISSED_FEW, False, id="complex schedule"),
    pytest.param(cron_job("30 10,11,12 * * 1-5", creation=TOP, last=delta_after_top(30 * M)), False,
                 delta_after_top(30 * H + 30 * M), delta_after_top(30 * M), None, MISSED_FEW, False,
                 id="another complex schedule"),
    pytest.param(cron_job("30 6-16/4 * * 1-5", creation=TOP, last=delta_after_top(30 * M)), False,
                 delta_after_top(96 * H + 31 * M), delta_after_top(30 * M), delta_after_top(96 * H + 30 * M),
                 MISSED_FEW, False, id="complex schedule with longer diff between executions"),
    pytest.param(cron_job("30 6-16/4 * * 1-5", creation=TOP), False, delta_after_top(24 * H + 31 * M), TOP,
                 delta_after_top(24 * H + 30 * M), MISSED_FEW, False,
                 id="complex schedule with shorter diff between executions"),
    pytest.param(cron_job("@every 1h", creation=delta_after_top(-59 * M), last=delta_after_top(M),
                          startingDeadlineSeconds=10), False,
                 delta_after_top(7 * 24 * H), delta_after_top(M), delta_after_top(6 * 24 * H + 23 * H + M),
                 MISSED_MANY, False, id="@every schedule"),
    pytest.param(cron_job("59 23 31 2 *", creation=delta_after_top(10)), False, delta_after_top(H), None, None,
                 MISSED_NONE, True, id="rogue cronjob"),
    pytest.param(cron_job("0 * * * *", creation=TOP, last=TOP), False, delta_after_top(30), TOP, None, MISSED_NONE,
                 False, id="earliestTime being CreationTimestamp and LastScheduleTime"),
    pytest.param(cron_job("*/5 * * * *", creation=TOP, last=delta_after_top(30 * M)), False,
                 delta_after_top(31 * M), delta_after_top(30 * M), None, MISSED_NONE, False,
                 id="earliestTime being LastScheduleTime"),
    pytest.param(cron_job("*/5 * * * *", creation=TOP, last=delta_after_top(30 * M), startingDeadlineSeconds=60),
                 False, delta_after_top(31 * M), delta_after_top(30 * M), None, MISSED_NONE, False,
                 id="earliestTime being LastScheduleTime (within StartingDeadlineSeconds)"),
    pytest.param(cron_job("*/5 * * * *", creation=TOP, last=delta_after_top(30 * M), startingDeadlineSeconds=60),
                 True, delta_after_top(32 * M), delta_after_top(31 * M), None, MISSED_NONE, False,
                 id="earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)"),
]


@pytest.mark.parametrize(("cj", "include_sds", "now", "want_earliest", "want_recent", "want_missed", "want_err"),
                         MOST_RECENT)
def test_most_recent_schedule_time(cj: dict[str, Any], include_sds: bool, now: datetime,
                                   want_earliest: datetime | None, want_recent: datetime | None, want_missed: int,
                                   want_err: bool) -> None:
    earliest, recent, missed, err = most_recent_schedule_time(cj, now, sched_of(cj), include_sds)
    if want_err:
        assert err is not None
        return
    assert err is None
    assert earliest == want_earliest
    assert recent == want_recent
    assert missed == want_missed


@pytest.mark.parametrize(("cj", "now", "want"), [
    pytest.param(cron_job("30 6-16/4 * * 1-5", creation=TOP, last=delta_after_top(30 * M)),
                 delta_after_top(24 * H + 31 * M), 3 * H + 59 * M + DELTA, id="complex schedule skipping weekend"),
    pytest.param(cron_job("30 10,11,12 * * 1-5", creation=TOP, last=delta_after_top(30 * M)),
                 delta_after_top(30 * H + 30 * M), 66 * H + DELTA, id="another complex schedule skipping weekend"),
    pytest.param(cron_job("0 12 * * 4", creation=TOP, last=delta_after_top(2 * H)),
                 delta_after_top(19 * 24 * H + H + 30 * M), 48 * H + 30 * M + DELTA,
                 id="once a week cronjob, missed two runs"),
    pytest.param(cron_job("0 12 * * 5", creation=TOP), delta_after_top(6 * H), 20 * H + DELTA,
                 id="no previous run of a cronjob"),
])
def test_next_schedule_time_duration(cj: dict[str, Any], now: datetime, want: float) -> None:
    got = next_schedule_time_duration(cj, now, sched_of(cj))
    assert got >= 0
    assert got == pytest.approx(want, abs=1e-6)


# --------------------------------------------------------------------------- cronjob_controllerv2_test.go

SHORT_DEAD, MEDIUM_DEAD, LONG_DEAD, NO_DEAD = 10, 2 * 60 * 60, 1000000, None
ERROR_SCHEDULE = "obvious error schedule"
ON_THE_HOUR = "0 * * * ?"
EVERY_HOUR = "@every 1h"
ERROR_TIME_ZONE = "bad timezone"
NEW_YORK = "America/New_York"


@dataclass
class SyncCase:
    policy: str
    schedule: str
    now: datetime
    deadline: int | None = None
    suspend: bool = False
    time_zone: str | None = None
    ran_previously: bool = False
    still_active: bool = False
    cronjob_creation_time: datetime | None = None
    job_creation_time: datetime = JUST_AFTER_THE_PRIOR_HOUR
    last_schedule_time: datetime | None = None
    job_create_error: str | None = None  # "AlreadyExists" or "NamespaceTerminating"
    job_get_error: bool = False
    expect_create: bool = False
    expect_delete: bool = False
    expect_active: int = 0
    expected_warnings: int = 0
    expect_err: bool = False
    expect_requeue_after: bool = False
    expected_requeue: float = 0.0
    expect_update_status: bool = False
    job_still_not_found_in_lister: bool = False
    job_present_in_cj_active_status: bool = False


def case(policy: str, schedule: str, now: datetime, **kw: Any) -> SyncCase:
    return SyncCase(policy, schedule, now, **kw)


A, FB, R = "Allow", "Forbid", "Replace"
NOT_TIME = JUST_BEFORE_THE_HOUR
IS_TIME = JUST_AFTER_THE_HOUR
MS100 = timedelta(milliseconds=100)

SYNC_CASES = {
    "never ran, not valid schedule, A": case(A, ERROR_SCHEDULE, NOT_TIME, expected_warnings=1,
                                             job_present_in_cj_active_status=True),
    "never ran, not valid schedule, F": case(FB, ERROR_SCHEDULE, NOT_TIME, expected_warnings=1,
                                             job_present_in_cj_active_status=True),
    "never ran, not valid schedule, R": case(FB, ERROR_SCHEDULE, NOT_TIME, expected_warnings=1,
                                             job_present_in_cj_active_status=True),
    "never ran, not valid time zone": case(A, ON_THE_HOUR, NOT_TIME, time_zone=ERROR_TIME_ZONE, expected_warnings=1,
                                           job_present_in_cj_active_status=True),
    "never ran, not time, A": case(A, ON_THE_HOUR, NOT_TIME, expect_requeue_after=True, expected_requeue=M + DELTA,
                                   job_present_in_cj_active_status=True),
    "never ran, not time, F": case(FB, ON_THE_HOUR, NOT_TIME, expect_requeue_after=True, expected_requeue=M + DELTA,
                                   job_present_in_cj_active_status=True),
    "never ran, not time, R": case(R, ON_THE_HOUR, NOT_TIME, expect_requeue_after=True, expected_requeue=M + DELTA,
                                   job_present_in_cj_active_status=True),
    "never ran, not time in zone": case(A, ON_THE_HOUR, NOT_TIME, time_zone=NEW_YORK, expect_requeue_after=True,
                                        expected_requeue=M + DELTA, job_present_in_cj_active_status=True),
    "never ran, is time, A": case(A, ON_THE_HOUR, IS_TIME, expect_create=True, expect_active=1,
                                  expect_requeue_after=True, expected_requeue=H - M + DELTA,
                                  expect_update_status=True, job_present_in_cj_active_status=True),
    "never ran, is time, F": case(FB, ON_THE_HOUR, IS_TIME, expect_create=True, expect_active=1,
                                  expect_requeue_after=True, expected_requeue=H - M + DELTA,
                                  expect_update_status=True, job_present_in_cj_active_status=True),
    "never ran, is time, R": case(R, ON_THE_HOUR, IS_TIME, expect_create=True, expect_active=1,
                                  expect_requeue_after=True, expected_requeue=H - M + DELTA,
                                  expect_update_status=True, job_present_in_cj_active_status=True),
    "never ran, is time in zone, but time zone disabled": case(
        A, ON_THE_HOUR, IS_TIME, time_zone=NEW_YORK, expect_create=True, expect_active=1, expect_requeue_after=True,
        expected_requeue=H - M + DELTA, expect_update_status=True, job_present_in_cj_active_status=True),
    "never ran, is time in zone": case(
        A, ON_THE_HOUR, IS_TIME, time_zone=NEW_YORK, expect_create=True, expect_active=1, expect_requeue_after=True,
        expected_requeue=H - M + DELTA, expect_update_status=True, job_present_in_cj_active_status=True),
    "never ran, is time in zone, but TZ is also set in schedule": case(
        A, "TZ=UTC " + ON_THE_HOUR, IS_TIME, time_zone=NEW_YORK, expect_create=True, expected_warnings=1,
        expect_requeue_after=True, expected_requeue=H - M + DELTA, expect_update_status=True,
        job_present_in_cj_active_status=True),
    "never ran, is time, suspended": case(A, ON_THE_HOUR, IS_TIME, suspend=True, job_present_in_cj_active_status=True),
    "never ran, is time, past deadline": case(
        A, ON_THE_HOUR, IS_TIME + timedelta(minutes=SHORT_DEAD + 1), deadline=SHORT_DEAD, expect_requeue_after=True,
        expected_requeue=H - M - (SHORT_DEAD + 1) * M + DELTA, job_present_in_cj_active_status=True),
    "never ran, is time, not past deadline": case(
        A, ON_THE_HOUR, IS_TIME, deadline=LONG_DEAD, expect_create=True, expect_active=1, expect_requeue_after=True,
        expected_requeue=H - M + DELTA, expect_update_status=True, job_present_in_cj_active_status=True),

    "prev ran but done, not time, A": case(A, ON_THE_HOUR, NOT_TIME, ran_previously=True, expect_requeue_after=True,
                                           expected_requeue=M + DELTA, expect_update_status=True,
                                           job_present_in_cj_active_status=True),
    "prev ran but done, not time, F": case(FB, ON_THE_HOUR, NOT_TIME, ran_previously=True, expect_requeue_after=True,
                                           expected_requeue=M + DELTA, expect_update_status=True,
                                           job_present_in_cj_active_status=True),
    "prev ran but done, not time, R": case(R, ON_THE_HOUR, NOT_TIME, ran_previously=True, expect_requeue_after=True,
                                           expected_requeue=M + DELTA, expect_update_status=True,
                                           job_present_in_cj_active_status=True),
    "prev ran but done, is time, A": case(A, ON_THE_HOUR, IS_TIME, ran_previously=True, expect_create=True,
                                          expect_active=1, expect_requeue_after=True, expected_requeue=H - M + DELTA,
                                          expect_update_status=True, job_present_in_cj_active_status=True),
    "prev ran but done, is time, create job failed, A": case(
        A, ON_THE_HOUR, IS_TIME, ran_previously=True, job_create_error="AlreadyExists", expect_update_status=True,
        job_present_in_cj_active_status=True),
    "prev ran but done, is time, job not present in CJ active status, create job failed, A": case(
        A, ON_THE_HOUR, IS_TIME, ran_previously=True, job_create_error="AlreadyExists", expect_update_status=True),
    "prev ran but done, is time, F": case(FB, ON_THE_HOUR, IS_TIME, ran_previously=True, expect_create=True,
                                          expect_active=1, expect_requeue_after=True, expected_requeue=H - M + DELTA,
                                          expect_update_status=True, job_present_in_cj_active_status=True),
    "prev ran but done, is time, R": case(R, ON_THE_HOUR, IS_TIME, ran_previously=True, expect_create=True,
                                          expect_active=1, expect_requeue_after=True, expected_requeue=H - M + DELTA,
                                          expect_update_status=True, job_present_in_cj_active_status=True),
    "prev ran but done, is time, suspended": case(A, ON_THE_HOUR, IS_TIME, suspend=True, ran_previously=True,
                                                  expect_update_status=True, job_present_in_cj_active_status=True),
    "prev ran but done, is time, past deadline": case(
        A, ON_THE_HOUR, IS_TIME, deadline=SHORT_DEAD, ran_previously=True, expect_requeue_after=True,
        expected_requeue=H - M + DELTA, expect_update_status=True, job_present_in_cj_active_status=True),
    "prev ran but done, is time, not past deadline": case(
        A, ON_THE_HOUR, IS_TIME, deadline=LONG_DEAD, ran_previously=True, expect_create=True, expect_active=1,
        expect_requeue_after=True, expected_requeue=H - M + DELTA, expect_update_status=True,
        job_present_in_cj_active_status=True),

    "still active, not time, A": case(A, ON_THE_HOUR, NOT_TIME, ran_previously=True, still_active=True,
                                      expect_active=1, expect_requeue_after=True, expected_requeue=M + DELTA,
                                      job_present_in_cj_active_status=True),
    "still active, not time, F": case(FB, ON_THE_HOUR, NOT_TIME, ran_previously=True, still_active=True,
                                      expect_active=1, expect_requeue_after=True, expected_requeue=M + DELTA,
                                      job_present_in_cj_active_status=True),
    "still active, not time, R": case(R, ON_THE_HOUR, NOT_TIME, ran_previously=True, still_active=True,
                                      expect_active=1, expect_requeue_after=True, expected_requeue=M + DELTA,
                                      job_present_in_cj_active_status=True),
    "still active, is time, A": case(A, ON_THE_HOUR, IS_TIME, ran_previously=True, still_active=True,
                                     expect_create=True, expect_active=2, expect_requeue_after=True,
                                     expected_requeue=H - M + DELTA, expect_update_status=True,
                                     job_present_in_cj_active_status=True),
    "still active, is time, F": case(FB, ON_THE_HOUR, IS_TIME, ran_previously=True, still_active=True,
                                     expect_active=1, expect_requeue_after=True, expected_requeue=H - M + DELTA,
                                     job_present_in_cj_active_status=True),
    "still active, is time, R": case(R, ON_THE_HOUR, IS_TIME, ran_previously=True, still_active=True,
                                     expect_create=True, expect_delete=True, expect_active=1,
                                     expect_requeue_after=True, expected_requeue=H - M + DELTA,
                                     expect_update_status=True, job_present_in_cj_active_status=True),
    "still active, is time, get job failed, R": case(R, ON_THE_HOUR, IS_TIME, ran_previously=True, still_active=True,
                                                     job_get_error=True, expect_active=1, expected_warnings=1,
                                                     job_present_in_cj_active_status=True),
    "still active, is time, suspended": case(A, ON_THE_HOUR, IS_TIME, suspend=True, ran_previously=True,
                                             still_active=True, expect_active=1,
                                             job_present_in_cj_active_status=True),
    "still active, is time, past deadline": case(A, ON_THE_HOUR, IS_TIME, deadline=SHORT_DEAD, ran_previously=True,
                                                 still_active=True, expect_active=1, expect_requeue_after=True,
                                                 expected_requeue=H - M + DELTA,
                                                 job_present_in_cj_active_status=True),
    "still active, is time, not past deadline": case(
        A, ON_THE_HOUR, IS_TIME, deadline=LONG_DEAD, ran_previously=True, still_active=True, expect_create=True,
        expect_active=2, expect_requeue_after=True, expected_requeue=H - M + DELTA, expect_update_status=True,
        job_present_in_cj_active_status=True),
}
for _policy, _p in (("Allow", "A"), ("Replace", "R"), ("Forbid", "F")):
    for _dead, _label in ((LONG_DEAD, "not past deadline"), (NO_DEAD, "no deadline")):
        SYNC_CASES[f"prev ran but done, long overdue, {_label}, {_p}"] = case(
            _policy, ON_THE_HOUR, WEEK_AFTER_THE_HOUR, deadline=_dead, ran_previously=True, expect_create=True,
            expect_active=1, expected_warnings=1, expect_requeue_after=True, expected_requeue=H + DELTA,
            expect_update_status=True, job_present_in_cj_active_status=True)
    for _dead, _label in ((MEDIUM_DEAD, "past medium deadline"), (SHORT_DEAD, "past short deadline")):
        SYNC_CASES[f"prev ran but done, long overdue, {_label}, {_p}"] = case(
            _policy, ON_THE_HOUR, WEEK_AFTER_THE_HOUR, deadline=_dead, ran_previously=True, expect_create=True,
            expect_active=1, expect_requeue_after=True, expected_requeue=H + DELTA, expect_update_status=True,
            job_present_in_cj_active_status=True)
SYNC_CASES.update({
    "this ran but done, time drifted back, F": case(
        FB, ON_THE_HOUR, NOT_TIME, ran_previously=True, job_creation_time=JUST_AFTER_THE_HOUR,
        job_create_error="AlreadyExists", expect_requeue_after=True, expected_requeue=M + DELTA,
        expect_update_status=True),
})
for _policy, _p in (("Allow", "A"), ("Forbid", "f"), ("Replace", "R")):
    SYNC_CASES[f"this started but went missing, not past deadline, {_p}"] = case(
        _policy, ON_THE_HOUR, IS_TIME + MS100, deadline=LONG_DEAD, ran_previously=True, still_active=True,
        job_creation_time=TOP + MS100, expect_active=1, expect_requeue_after=True,
        expected_requeue=H - M - 0.1 + DELTA, job_still_not_found_in_lister=True,
        job_present_in_cj_active_status=True)
for _policy, _p in (("Allow", "A"), ("Forbid", "f"), ("Replace", "R")):
    SYNC_CASES[f"this started but is not present in cronjob active list, not past deadline, {_p}"] = case(
        _policy, ON_THE_HOUR, IS_TIME + MS100, deadline=LONG_DEAD, ran_previously=True, still_active=True,
        job_creation_time=TOP + MS100, expect_active=1, expect_requeue_after=True,
        expected_requeue=H - M - 0.1 + DELTA)
SYNC_CASES.update({
    "with @every schedule, never ran, not time": case(
        A, EVERY_HOUR, TOP, cronjob_creation_time=JUST_BEFORE_THE_HOUR, job_creation_time=JUST_BEFORE_THE_HOUR,
        expect_requeue_after=True, expected_requeue=H - M + DELTA, job_present_in_cj_active_status=True),
    "with @every schedule, never ran, is time": case(
        A, EVERY_HOUR, JUST_BEFORE_THE_HOUR, cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR, expect_requeue_after=True, expected_requeue=H + DELTA,
        job_present_in_cj_active_status=True, expect_create=True, expect_active=1, expect_update_status=True),
    "with @every schedule, never ran, is time, past deadline": case(
        A, EVERY_HOUR, JUST_BEFORE_THE_HOUR + timedelta(seconds=SHORT_DEAD + 1), deadline=SHORT_DEAD,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR, job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        expect_requeue_after=True, expected_requeue=H - (SHORT_DEAD + 1) + DELTA,
        job_present_in_cj_active_status=True),
    "with @every schedule, never ran, is time, not past deadline": case(
        A, EVERY_HOUR, JUST_BEFORE_THE_HOUR + timedelta(seconds=SHORT_DEAD - 1), deadline=LONG_DEAD,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR, job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        expect_create=True, expect_active=1, expect_requeue_after=True,
        expected_requeue=H - (SHORT_DEAD - 1) + DELTA, expect_update_status=True,
        job_present_in_cj_active_status=True),
    "with @every schedule, prev ran but done, not time": case(
        A, EVERY_HOUR, TOP, ran_previously=True, cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR, last_schedule_time=JUST_BEFORE_THE_HOUR,
        expect_requeue_after=True, expected_requeue=H - M + DELTA, expect_update_status=True,
        job_present_in_cj_active_status=True),
    "with @every schedule, prev ran but done, is time": case(
        A, EVERY_HOUR, TOP + timedelta(hours=1), ran_previously=True, cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR, last_schedule_time=JUST_BEFORE_THE_HOUR, expect_create=True,
        expect_active=1, expect_requeue_after=True, expected_requeue=H - M + DELTA, expect_update_status=True,
        job_present_in_cj_active_status=True),
    "with @every schedule, prev ran but done, is time, past deadline": case(
        A, EVERY_HOUR, JUST_BEFORE_THE_NEXT_HOUR + timedelta(seconds=SHORT_DEAD + 1), deadline=SHORT_DEAD,
        ran_previously=True, cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR, last_schedule_time=JUST_BEFORE_THE_HOUR,
        expect_requeue_after=True, expected_requeue=H - (SHORT_DEAD + 1) + DELTA, expect_update_status=True,
        job_present_in_cj_active_status=True),
    "with @every schedule, still active, not time": case(
        A, EVERY_HOUR, TOP, ran_previously=True, still_active=True, cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_HOUR, last_schedule_time=JUST_BEFORE_THE_HOUR, expect_active=1,
        expect_requeue_after=True, expected_requeue=H - M + DELTA, job_present_in_cj_active_status=True),
    "with @every schedule, still active, is time": case(
        A, EVERY_HOUR, IS_TIME, ran_previously=True, still_active=True,
        cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR, job_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        last_schedule_time=JUST_BEFORE_THE_PRIOR_HOUR, expect_create=True, expect_active=2,
        expect_requeue_after=True, expected_requeue=H - 2 * M + DELTA, expect_update_status=True,
        job_present_in_cj_active_status=True),
    "with @every schedule, still active, is time, past deadline": case(
        A, EVERY_HOUR, JUST_BEFORE_THE_NEXT_HOUR + timedelta(seconds=SHORT_DEAD + 1), deadline=SHORT_DEAD,
        ran_previously=True, still_active=True, cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_HOUR, last_schedule_time=JUST_BEFORE_THE_HOUR, expect_active=1,
        expect_requeue_after=True, expected_requeue=H - (SHORT_DEAD + 1) + DELTA,
        job_present_in_cj_active_status=True),
    "with @every schedule, still active, is time, not past deadline": case(
        A, EVERY_HOUR, JUST_BEFORE_THE_NEXT_HOUR + timedelta(seconds=SHORT_DEAD - 1), deadline=LONG_DEAD,
        ran_previously=True, still_active=True, cronjob_creation_time=JUST_BEFORE_THE_PRIOR_HOUR,
        job_creation_time=JUST_BEFORE_THE_HOUR, last_schedule_time=JUST_BEFORE_THE_HOUR, expect_create=True,
        expect_active=2, expect_requeue_after=True, expected_requeue=H - (SHORT_DEAD - 1) + DELTA,
        expect_update_status=True, job_present_in_cj_active_status=True),
    "with @every schedule, prev ran but done, long overdue, no deadline": case(
        A, EVERY_HOUR, WEEK_AFTER_THE_HOUR, ran_previously=True, cronjob_creation_time=JUST_AFTER_THE_PRIOR_HOUR,
        last_schedule_time=JUST_AFTER_THE_HOUR, job_creation_time=JUST_AFTER_THE_PRIOR_HOUR, expect_create=True,
        expect_active=1, expected_warnings=1, expect_requeue_after=True, expected_requeue=M + DELTA,
        expect_update_status=True, job_present_in_cj_active_status=True),
    "with @every schedule, prev ran but done, long overdue, past deadline": case(
        A, EVERY_HOUR, WEEK_AFTER_THE_HOUR + timedelta(minutes=1, seconds=SHORT_DEAD + 1), deadline=SHORT_DEAD,
        ran_previously=True, cronjob_creation_time=JUST_AFTER_THE_PRIOR_HOUR, last_schedule_time=JUST_AFTER_THE_HOUR,
        job_creation_time=JUST_AFTER_THE_PRIOR_HOUR, expect_active=1, expect_requeue_after=True,
        expected_requeue=H - (SHORT_DEAD + 1) + DELTA, expect_update_status=True,
        job_present_in_cj_active_status=True),
    "do nothing if the namespace is terminating": case(
        A, ON_THE_HOUR, IS_TIME, job_create_error="NamespaceTerminating", ran_previously=True, still_active=True,
        expect_err=True),
})


# upstream's expectActive is never compared (its check needs status updates syncCronJob does not
# make); in these cases the table's value contradicts the flow it describes (a Job is created or
# re-adopted with expectActive 0; none is created with expectActive 1)
ACTIVE_NOT_MEANINGFUL = {
    "never ran, is time in zone, but TZ is also set in schedule",
    "prev ran but done, is time, create job failed, A",
    "prev ran but done, is time, job not present in CJ active status, create job failed, A",
    "with @every schedule, prev ran but done, long overdue, past deadline",
}


@pytest.fixture
def clock() -> FakeClock:
    """The API's clock starts at cronJob()'s creation time (justBeforeTheHour)."""
    return FakeClock(JUST_BEFORE_THE_HOUR)


async def store_cronjob(api: Any, cj: dict[str, Any]) -> dict[str, Any]:
    """The CronJob in the API (upstream's realCJ); a spec the API refuses (a bad schedule or zone,
    TZ= beside timeZone) is stored with a plain hourly schedule instead: only the copy handed to
    syncCronJob carries it."""
    try:
        await api.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    except Exception:  # noqa: BLE001 - already there
        pass
    body = copy.deepcopy(cj)
    for k in ("uid", "creationTimestamp"):
        body["metadata"].pop(k)
    body.pop("status")
    try:
        return await api.create(CRONJOBS, body, NS)
    except InvalidError:
        body["spec"]["schedule"] = ON_THE_HOUR
        body["spec"].pop("timeZone", None)
        return await api.create(CRONJOBS, body, NS)


async def store_job(api: Any, stored_cj: dict[str, Any], created: datetime, *, name: str | None = None,
                    done: bool) -> dict[str, Any]:
    """getJobFromTemplate2(cj, jobCreationTime) in the API: finished (Complete, completionTime
    10 s after its nominal creation) or running."""
    body = job_from_template(stored_cj, created, UTC)
    if name is not None:
        body["metadata"]["name"] = name
    job = await api.create(JOBS, body, NS)
    if done:
        t = rfc3339(created)
        job["status"] = {"startTime": t, "completionTime": rfc3339(created + timedelta(seconds=10)), "succeeded": 1,
                         "conditions": [
                             {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": t},
                             {"type": "Complete", "status": "True", "lastTransitionTime": t}]}
        job = await api.update_status(JOBS, job)
    return job


class EventSpy:
    """Counts what the controller records, then lets the real recorder write it."""

    def __init__(self, ctl: CronJobController) -> None:
        self.events: list[tuple[str, str, str]] = []
        self._record = ctl.recorder.event
        ctl.recorder.event = self._event  # type: ignore[method-assign]

    def _event(self, obj: Any, event_type: str, reason: str, message: str, **kw: Any) -> None:
        self.events.append((event_type, reason, message))
        self._record(obj, event_type, reason, message, **kw)


@pytest.mark.parametrize("name", list(SYNC_CASES))
async def test_controller_v2_sync_cron_job(real_api: Any, name: str) -> None:
    tc = SYNC_CASES[name]
    api = real_api
    spec: dict[str, Any] = {"concurrencyPolicy": tc.policy, "suspend": tc.suspend}
    if tc.time_zone is not None:
        spec["timeZone"] = tc.time_zone
    if tc.deadline is not None:
        spec["startingDeadlineSeconds"] = tc.deadline
    cj = cron_job(tc.schedule, **spec)
    real_cj = await store_cronjob(api, cj)
    cj["metadata"]["uid"] = real_cj["metadata"]["uid"]
    jobs: list[dict[str, Any]] = []
    job: dict[str, Any] | None = None
    if tc.ran_previously:
        cj["metadata"]["creationTimestamp"] = rfc3339(tc.cronjob_creation_time or JUST_BEFORE_THE_PRIOR_HOUR)
        cj["status"]["lastScheduleTime"] = rfc3339(tc.last_schedule_time or JUST_AFTER_THE_PRIOR_HOUR)
        job = await store_job(api, cj, tc.job_creation_time, done=not tc.still_active)
        if tc.still_active:
            ref = job_ref(job)
            if tc.job_present_in_cj_active_status:
                cj["status"]["active"] = [ref]
            real_cj["status"] = {"active": [ref]}
            real_cj = await api.update_status(CRONJOBS, real_cj)
        if not tc.job_still_not_found_in_lister:
            jobs.append(job)
    elif tc.cronjob_creation_time is not None:
        cj["metadata"]["creationTimestamp"] = rfc3339(tc.cronjob_creation_time)
    if tc.job_create_error == "AlreadyExists" and job is not None:
        # the name this sync would create, taken by a copy of the previous run's Job (which
        # upstream's fake job control returns for any name)
        scheduled = next_schedule_time(cj, tc.now, parse_schedule(cj)[0])[0]
        if scheduled is not None:
            await store_job(api, cj, tc.job_creation_time, name=job_name(cj, scheduled), done=not tc.still_active)
    if tc.job_create_error == "NamespaceTerminating":
        await api.delete(NAMESPACES, NS)
    ctl = CronJobController(api, api.factory, clock=FakeClock(tc.now))
    spy = EventSpy(ctl)
    await api.settle()
    before = {j["metadata"]["name"] for j in (await api.list(JOBS, NS))["items"]}
    api.calls.clear()
    if tc.job_get_error:
        api.fail_next["get"] = [BadRequestError("request is invalid")]
    work = copy.deepcopy(cj)
    requeue, updated, err = await ctl.sync_cron_job(work, jobs)

    if tc.expect_err:
        assert err is not None
    if tc.expect_requeue_after:
        assert requeue == pytest.approx(tc.expected_requeue, abs=1e-6)
    assert updated is tc.expect_update_status
    if tc.ran_previously and not tc.still_active:
        assert work["status"]["lastSuccessfulTime"] == rfc3339(tc.job_creation_time + timedelta(seconds=10))
    after = (await api.list(JOBS, NS))["items"]
    created = [j for j in after if j["metadata"]["name"] not in before]
    assert len(created) == (1 if tc.expect_create else 0)
    for j in created:
        ref = j["metadata"]["ownerReferences"][0]
        assert (ref["apiVersion"], ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
            "batch/v1", "CronJob", "mycronjob", real_cj["metadata"]["uid"], True)
    deletes = [c for c in api.calls if c[0] == "delete" and c[1] == "jobs"]
    assert len(deletes) == (1 if tc.expect_delete else 0)
    expected_events = int(tc.expect_create) + int(tc.expect_delete) + tc.expected_warnings
    if name == "still active, is time, F":
        expected_events += 1  # the only case raising an event for not scheduling (JobAlreadyActive)
    assert len(spy.events) == expected_events, spy.events
    assert sum(1 for e in spy.events if e[0] == "Warning") == tc.expected_warnings
    swapped = tc.still_active and not tc.job_present_in_cj_active_status
    if not swapped and name not in ACTIVE_NOT_MEANINGFUL:
        assert len(work["status"].get("active") or []) == tc.expect_active


# ---- the tests driving the whole sync (cleanup, syncCronJob, the status update)


def owned_job(name: str, owner: str, start: datetime | None = None, *, labels: dict[str, str] | None = None,
              complete: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": "foo-ns", "labels": labels or {}},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}
    if owner:
        body["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "CronJob", "name": owner,
                                                "uid": f"uid-{owner}", "controller": True}]
    status: dict[str, Any] = {}
    if start is not None:
        status["startTime"] = rfc3339(start)
    if complete:
        t = rfc3339(start or TOP)
        status.update({"completionTime": t, "succeeded": 1, "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": t},
            {"type": "Complete", "status": "True", "lastTransitionTime": t}]})
    body["status"] = status
    return body


async def put_jobs(api: Any, jobs: list[dict[str, Any]], *, namespaces: tuple[str, ...] = ("foo-ns",)) -> None:
    for ns in namespaces:
        await api.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for j in jobs:
        status = j.pop("status")
        created = await api.create(JOBS, j, j["metadata"]["namespace"])
        if status:
            created["status"] = status
            await api.update_status(JOBS, created)


@pytest.mark.parametrize(("jobs", "cj_labels", "want"), [
    pytest.param([owned_job("foo", ""), owned_job("foo1", ""), owned_job("foo2", "")], None, [],
                 id="test getting jobs in namespace without controller reference"),
    pytest.param([owned_job("foo", ""), owned_job("foo1", "fooer"), owned_job("foo2", "")], None, ["foo1"],
                 id="test getting jobs in namespace with a controller reference"),
    pytest.param("other-ns", None, [], id="test getting jobs in other namespaces"),
    pytest.param([owned_job("foo-fooer-owner-ref", "fooer", labels={"key": "different-value"}),
                  owned_job("foo-other-owner-ref", "another-cronjob", labels={"key": "different-value"})],
                 {"key": "value"}, ["foo-fooer-owner-ref"],
                 id="test getting jobs whose labels do not match job template"),
])
async def test_controller_v2_get_jobs_to_be_reconciled(real_api: Any, jobs: Any, cj_labels: dict[str, str] | None,
                                                       want: list[str]) -> None:
    api = real_api
    ctl = CronJobController(api, api.factory, clock=FakeClock(TOP))
    api.informer(JOBS)
    if jobs == "other-ns":
        built = [owned_job(n, "") for n in ("foo", "foo1", "foo2")]
        for j in built:
            j["metadata"]["namespace"] = "bar-ns"
        await put_jobs(api, built, namespaces=("foo-ns", "bar-ns"))
    else:
        await put_jobs(api, jobs)
    await api.settle()
    cj = {"metadata": {"namespace": "foo-ns", "name": "fooer"},
          "spec": {"jobTemplate": {"metadata": {"labels": cj_labels or {}}}}}
    assert sorted(j["metadata"]["name"] for j in ctl.jobs_to_be_reconciled(cj)) == want


@pytest.mark.parametrize(("now", "limit", "jobs", "create_error", "want_deleted"), [
    pytest.param(JUST_AFTER_THE_HOUR, 1, [("finished-job-started-hour-ago", JUST_BEFORE_THE_PRIOR_HOUR),
                                          ("finished-job-started-minute-ago", JUST_BEFORE_THE_HOUR)], True,
                 ["finished-job-started-hour-ago"],
                 id="jobs are still deleted when a cronjob can't create jobs due to jobs quota being reached "
                    "(avoiding a deadlock)"),
    pytest.param(JUST_BEFORE_THE_HOUR, 2, [("finished-job-started-hour-ago", JUST_BEFORE_THE_PRIOR_HOUR)], False,
                 [], id="jobs are not deleted if history limit not reached"),
])
async def test_controller_v2_cleanup_finished_jobs(real_api: Any, now: datetime, limit: int,
                                                   jobs: list[tuple[str, datetime]], create_error: bool,
                                                   want_deleted: list[str]) -> None:
    api = real_api
    await api.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "foo-ns"}})
    body = cron_job(ON_THE_HOUR, successfulJobsHistoryLimit=limit)
    body["metadata"] = {"name": "fooer", "namespace": "foo-ns"}
    body["spec"]["jobTemplate"]["metadata"] = {"labels": {"key": "value"}}
    body.pop("status")
    cj = await api.create(CRONJOBS, body, "foo-ns")
    cj["status"] = {"lastScheduleTime": rfc3339(JUST_AFTER_THE_PRIOR_HOUR)}
    cj = await api.update_status(CRONJOBS, cj)
    built = [owned_job(n, "fooer", start, complete=True) for n, start in jobs]
    for j in built:
        j["metadata"]["ownerReferences"][0]["uid"] = cj["metadata"]["uid"]
    await put_jobs(api, built, namespaces=())
    ctl = CronJobController(api, api.factory, clock=FakeClock(now))
    api.informer(JOBS)
    api.informer(CRONJOBS)
    await api.settle()
    api.calls.clear()
    if create_error:
        from minik3s.api.errors import InternalError
        api.fail_next["create"] = [InternalError("quota for # of jobs reached")]
    try:
        await ctl.sync("foo-ns/fooer")
    except Exception:  # noqa: BLE001,S110 - the failed create is the point of the case
        pass
    deleted = sorted(c[2].split("/")[1] for c in api.calls if c[0] == "delete" and c[1] == "jobs")
    assert deleted == sorted(want_deleted)


@pytest.mark.parametrize("owned", [
    pytest.param(True, id="TestControllerV2JobAlreadyExistsButNotInActiveStatus"),
    pytest.param(False, id="TestControllerV2JobAlreadyExistsButDifferentOwner"),
])
async def test_controller_v2_job_already_exists(real_api: Any, owned: bool) -> None:
    """A Job of the name the sync would create already exists: the CronJob's own one is put
    (back) in the active list with one status update; another owner's is ignored."""
    api = real_api
    await api.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    body = cron_job(EVERY_HOUR, concurrencyPolicy="Forbid")
    for k in ("uid", "creationTimestamp"):
        body["metadata"].pop(k)
    body.pop("status")
    cj = await api.create(CRONJOBS, body, NS)
    cj["status"] = {"lastScheduleTime": rfc3339(JUST_BEFORE_THE_PRIOR_HOUR)}
    cj = await api.update_status(CRONJOBS, cj)
    # @every 1h after 08:59 -> 09:59: the Job a previous sync created for that run
    job_body = job_from_template(cj, JUST_BEFORE_THE_HOUR, UTC)
    if not owned:
        job_body["metadata"].pop("ownerReferences")
    job = await api.create(JOBS, job_body, NS)
    ctl = CronJobController(api, api.factory, clock=FakeClock(JUST_BEFORE_THE_HOUR))
    api.informer(JOBS)
    api.informer(CRONJOBS)
    await api.settle()
    api.calls.clear()
    await ctl.sync(f"{NS}/mycronjob")
    updates = [c for c in api.calls if c[0] == "update_status" and c[1] == "cronjobs"]
    if owned:
        assert len(updates) == 1
        active = (await api.get(CRONJOBS, "mycronjob", NS))["status"]["active"]
        assert [(a["name"], a["uid"]) for a in active] == [(job["metadata"]["name"], job["metadata"]["uid"])]
    else:
        assert updates == []
