"""CronJob controller (layer L4), after kube-controller-manager's `cronjob_controllerv2.go` and
`utils.go` (v1.33).

Per CronJob `sync` first deletes the oldest (by startTime, unstarted last) finished Jobs beyond
`successfulJobsHistoryLimit` / `failedJobsHistoryLimit`, then runs `sync_cron_job` (upstream's
syncCronJob) on a copy: finished Jobs leave `status.active` (SawCompletedJob) and move
`lastSuccessfulTime`; an unfinished owned Job missing from `active` is checked against a fresh
read of the CronJob (else an UnexpectedJob warning); an active entry whose Job the lister lacks
is dropped only when the API no longer has it (MissingJob). A deleted, suspended or unknown-zone
CronJob stops there. The schedule is evaluated in `spec.timeZone` (UTC when unset), or in the
zone of a grandfathered `TZ=` / `CRON_TZ=` prefix (with an UnsupportedSchedule warning); the
time to start is upstream's `mostRecentScheduleTime` estimate (the interval between the first
two fire times after lastScheduleTime / creation / now - startingDeadlineSeconds gives the
missed count, > 100 is TooManyMissedTimes); a start later than startingDeadlineSeconds is a
MissSchedule warning (RFC 1123Z time); a run already in `active` or equal to lastScheduleTime
is skipped; `concurrencyPolicy` Forbid skips while a Job is active (JobAlreadyActive), Replace
deletes the active Jobs first; the Job `<cronjob>-<scheduled unix minutes>` is created from
`jobTemplate` with a controller ownerReference and the
`batch.kubernetes.io/cronjob-scheduled-timestamp` annotation (RFC 3339 in spec.timeZone); when
that name exists and the CronJob controls it, it is put (back) into `active`. The status is
written once when the cleanup or the sync changed it, and the CronJob wakes at the next fire
time + 100 ms (`next_schedule_time_duration`). Time comes from the injected Clock.

Data flow: CronJob and Job informers -> handlers enqueue `ns/name` -> `sync(key)` -> Job
creates/deletes and `cronjobs/status` writes through the Client; a timer on the clock
re-enqueues the CronJob at its next schedule time.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from minik3s.api.errors import AlreadyExistsError, ApiError, ConflictError, NotFoundError
from minik3s.api.helpers.cron import Schedule, load_zone, time_zone_error
from minik3s.api.resources import CRONJOBS, JOBS
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory, object_key
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import (
    controller_ref,
    creation_time,
    get_int,
    is_deleting,
    make_controller_ref,
    meta,
    run_workers,
)
from minik3s.controllers.job import find_condition
from minik3s.controllers.replicaset import NAMESPACE_INDEX, namespace_index
from minik3s.utils.clock import Clock, parse_time, rfc3339

logger = logging.getLogger(__name__)

SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
NEXT_SCHEDULE_DELTA = 0.1  # upstream's nextScheduleDelta: wake just after the schedule time


def job_name(cronjob: JsonDict, scheduled: datetime) -> str:
    """getJobName: `<cronjob>-<unix minutes>`."""
    return f"{meta(cronjob).get('name')}-{int(scheduled.timestamp()) // 60}"


def finished(job: JsonDict) -> str | None:
    """"Complete" or "Failed" when the Job has that condition True, else None."""
    for t in ("Complete", "Failed"):
        c = find_condition(job, t)
        if c is not None and c.get("status") == "True":
            return t
    return None


def go_rfc3339(t: datetime) -> str:
    """Go's time.RFC3339 layout: a zero offset prints as `Z`."""
    s = t.replace(microsecond=0).isoformat()
    return s[:-6] + "Z" if s.endswith("+00:00") else s


def job_from_template(cronjob: JsonDict, scheduled: datetime, zone: Any) -> JsonDict:
    """getJobFromTemplate2: the template's labels/annotations/spec, the owner ref and the
    scheduled-timestamp annotation (RFC 3339 in the CronJob's zone)."""
    jt = (cronjob.get("spec") or {}).get("jobTemplate") or {}
    jmeta = jt.get("metadata") or {}
    annotations = dict(jmeta.get("annotations") or {})
    annotations[SCHEDULED_TIMESTAMP] = go_rfc3339(scheduled.astimezone(zone))
    m: JsonDict = {"name": job_name(cronjob, scheduled), "namespace": meta(cronjob).get("namespace"),
                   "labels": dict(jmeta.get("labels") or {}), "annotations": annotations,
                   "ownerReferences": [make_controller_ref(cronjob, api_version="batch/v1", kind="CronJob")]}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": m, "spec": copy.deepcopy(jt.get("spec") or {})}


def job_ref(job: JsonDict) -> JsonDict:
    m = meta(job)
    return {"apiVersion": "batch/v1", "kind": "Job", "name": m.get("name"), "namespace": m.get("namespace"),
            "uid": m.get("uid"), "resourceVersion": m.get("resourceVersion")}


# --------------------------------------------------------------------------- schedule times (utils.go)

MISSED_NONE, MISSED_FEW, MISSED_MANY = 0, 1, 2  # missedSchedulesType
UNSUPPORTED_SCHEDULE = ("CRON_TZ or TZ used in schedule {} is not officially supported, see "
                        "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details")


def go_quote(s: str) -> str:
    """Go's %q for the plain strings of a schedule or zone name."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_schedule(cronjob: JsonDict) -> tuple[Schedule, bool]:
    """cron.ParseStandard(formatSchedule(cj)): the schedule in `spec.timeZone` (UTC when unset
    or unknown), or in the zone of a grandfathered `TZ=` / `CRON_TZ=` prefix, which wins over
    timeZone; the bool says the schedule mentions TZ (the UnsupportedSchedule warning).
    Raises ValueError with robfig's message when the schedule does not parse."""
    spec = cronjob.get("spec") or {}
    raw = str(spec.get("schedule") or "")
    tz = spec.get("timeZone")
    if "TZ" in raw:
        zone: Any = UTC
        if raw.startswith(("TZ=", "CRON_TZ=")):
            head, _, raw = raw.partition(" ")
            name = head.split("=", 1)[1]
            if time_zone_error(name) is not None:
                raise ValueError(f"provided bad location {name}: unknown time zone {name}")
            zone = load_zone(name)
        return Schedule(raw.strip(), zone), True
    zone = load_zone(tz) if isinstance(tz, str) and time_zone_error(tz) is None else UTC
    return Schedule(raw, zone), False


def _next(sched: Schedule, t: datetime) -> datetime | None:
    """schedule.Next, None where robfig returns the zero time (no fire time within reach, as
    for "59 23 31 2 *")."""
    try:
        return sched.next_after(t)
    except Exception:  # noqa: BLE001 - croniter's "failed to find next date"
        return None


def most_recent_schedule_time(cronjob: JsonDict, now: datetime, sched: Schedule, include_sds: bool
                              ) -> tuple[datetime, datetime | None, int, str | None]:
    """mostRecentScheduleTime: (the earliest time considered: lastScheduleTime, else creation,
    moved up to now - startingDeadlineSeconds when `include_sds`; the most recent fire time in
    (earliest, now] or None; none / few / many (> 100) missed; the error of a schedule whose two
    next fire times are not a second apart). The count and the walk are upstream's estimate:
    the interval between the first two fire times after `earliest` sets how many fit until now,
    and the walk starts that many intervals (less two) later."""
    status = cronjob.get("status") or {}
    earliest = parse_time(status.get("lastScheduleTime")) or creation_time(cronjob) or now
    sds = (cronjob.get("spec") or {}).get("startingDeadlineSeconds")
    if include_sds and isinstance(sds, int):
        deadline = now - timedelta(seconds=sds)
        if deadline > earliest:
            earliest = deadline
    t1 = _next(sched, earliest)
    t2 = _next(sched, t1) if t1 is not None else None
    if t1 is not None and now < t1:
        return earliest, None, MISSED_NONE, None
    if t1 is not None and t2 is not None and now < t2:
        return earliest, t1, MISSED_NONE, None
    between = round((t2 - t1).total_seconds()) if t1 is not None and t2 is not None else 0
    if t1 is None or between < 1:
        return earliest, None, MISSED_NONE, "time difference between two schedules is less than 1 second"
    missed = int((now - t1).total_seconds()) // between + 1
    recent: datetime | None = None
    t = _next(sched, t1 + timedelta(seconds=(missed - 2) * between))
    while t is not None and t <= now:
        recent = t
        t = _next(sched, t)
    kind = MISSED_MANY if missed > 100 else MISSED_FEW if missed > 0 else MISSED_NONE
    return earliest, recent, kind, None


def next_schedule_time_duration(cronjob: JsonDict, now: datetime, sched: Schedule) -> float:
    """nextScheduleTimeDuration: seconds until the fire time after the most recent one (after
    `now` when that failed or fire times were missed, else after the earliest time), plus
    nextScheduleDelta."""
    earliest, recent, missed, err = most_recent_schedule_time(cronjob, now, sched, False)
    base = now if err is not None or (recent is None and missed != MISSED_NONE) else recent or earliest
    nxt = _next(sched, base)
    if nxt is None:
        return NEXT_SCHEDULE_DELTA
    return (nxt - now).total_seconds() + NEXT_SCHEDULE_DELTA


def next_schedule_time(cronjob: JsonDict, now: datetime, sched: Schedule) -> tuple[datetime | None, int, str | None]:
    """nextScheduleTime (without its event): the fire time to start now, if any (the most
    recent unmet one, startingDeadlineSeconds honoured), how many were missed, the error."""
    _, recent, missed, err = most_recent_schedule_time(cronjob, now, sched, True)
    if recent is None or recent > now:
        return None, missed, err
    return recent, missed, err


def sort_by_job_start_time(jobs: list[JsonDict]) -> list[JsonDict]:
    """byJobStartTime: by status.startTime (jobs without one last), then by name."""
    def key(j: JsonDict) -> tuple[bool, datetime, str]:
        start = parse_time((j.get("status") or {}).get("startTime"))
        return start is None, start or datetime.min.replace(tzinfo=UTC), str(meta(j).get("name") or "")

    return sorted(jobs, key=key)


def is_job_succeeded(job: JsonDict) -> bool:
    c = find_condition(job, "Complete")
    return c is not None and c.get("status") == "True"


def _in_active(cronjob: JsonDict, uid: Any) -> bool:
    return any(r.get("uid") == uid for r in (cronjob.get("status") or {}).get("active") or ())


def _delete_from_active(cronjob: JsonDict, uid: Any) -> None:
    status = cronjob.setdefault("status", {})
    active = [r for r in status.get("active") or () if r.get("uid") != uid]
    if active:
        status["active"] = active
    else:
        status.pop("active", None)  # an empty list is omitted (omitempty)


def _rfc1123z(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")


class CronJobController:
    NAME = "cronjob-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._cj_inf = informers.informer(CRONJOBS)
        self._job_inf = informers.informer(JOBS)
        for inf in (self._cj_inf, self._job_inf):
            inf.add_index(NAMESPACE_INDEX, namespace_index)
        self.queue = WorkQueue()
        self._timers: dict[str, tuple[float, asyncio.Task[None]]] = {}
        self.recorder = EventRecorder(client, self.NAME, clock=self._clock)
        self._cj_inf.add_handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n),
                                 on_delete=self._enqueue)
        self._job_inf.add_handler(on_add=self._job_event, on_update=lambda _o, n: self._job_event(n),
                                  on_delete=self._job_event)

    def _enqueue(self, cj: JsonDict) -> None:
        self.queue.add(object_key(cj))

    def _job_event(self, job: JsonDict) -> None:
        ref = controller_ref(job)
        if ref and ref.get("kind") == "CronJob":
            self.queue.add(f"{meta(job).get('namespace')}/{ref.get('name')}")

    async def run(self, workers: int = 5) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            await self._cj_inf.wait_for_sync()
            await self._job_inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            tg.create_task(run_workers(self.queue, self.sync, workers=workers, name=self.NAME),
                           name=f"{self.NAME}-workers")
            try:
                await asyncio.Event().wait()
            finally:
                for _, t in self._timers.values():
                    t.cancel()

    # ---- sync

    def jobs_to_be_reconciled(self, cronjob: JsonDict) -> list[JsonDict]:
        """getJobsToBeReconciled: the namespace's Jobs whose controller reference names the
        CronJob (whatever their labels)."""
        m = meta(cronjob)
        return [j for j in self._job_inf.by_index(NAMESPACE_INDEX, str(m.get("namespace") or ""))
                if (ref := controller_ref(j)) is not None and ref.get("name") == m.get("name")]

    async def sync(self, key: str) -> None:
        """sync: clean up finished Jobs beyond the history limits, then syncCronJob; the status
        is written once when either changed it; a wake-up is scheduled for the next fire time
        (an error is then only logged, as upstream returns it only without a requeue)."""
        cj = self._cj_inf.store.get(key)
        if cj is None:
            return
        jobs = self.jobs_to_be_reconciled(cj)
        work = copy.deepcopy(cj)
        work.setdefault("status", {})
        cleaned = await self.cleanup_finished_jobs(work, jobs)
        requeue, updated, err = await self.sync_cron_job(work, jobs)
        if cleaned or updated:
            await self._write_status(cj, work["status"])
        if requeue is not None:
            self._wake_after(key, requeue)
            if err is not None:
                logger.info("%s: sync error cronjob=%s err=%s", self.NAME, key, err)
            return
        if err is not None:
            raise err

    def _wake_after(self, key: str, delay: float) -> None:
        """queue.AddAfter on the injected clock (so fake time drives schedules in tests);
        one pending timer per CronJob, the earliest wins."""
        due = self._clock.monotonic() + delay
        cur = self._timers.get(key)
        if cur is not None and not cur[1].done():
            if cur[0] <= due:
                return
            cur[1].cancel()

        async def fire() -> None:
            await self._clock.sleep(delay)
            self._timers.pop(key, None)
            self.queue.add(key)

        self._timers[key] = (due, asyncio.get_running_loop().create_task(fire(), name=f"{self.NAME}-wake"))

    async def sync_cron_job(self, cronjob: JsonDict, jobs: list[JsonDict]
                            ) -> tuple[float | None, bool, Exception | None]:
        """syncCronJob on `cronjob` (a copy it edits): (seconds until the next wake-up or None,
        whether the status changed, the error)."""
        now = self._clock.now()
        update = False
        ns = str(meta(cronjob).get("namespace") or "")
        children = {meta(j).get("uid") for j in jobs}
        for j in jobs:
            uid = meta(j).get("uid")
            found = _in_active(cronjob, uid)
            done = finished(j)
            if not found and done is None:
                try:
                    fresh = await self._client.get(CRONJOBS, str(meta(cronjob).get("name")), ns)
                except ApiError as e:
                    return None, update, e
                if _in_active(fresh, uid):
                    cronjob = fresh  # as upstream: later edits go to the fresh copy
                    continue
                self.recorder.event(cronjob, "Warning", "UnexpectedJob",
                                    f"Saw a job that the controller did not create or forgot: {meta(j).get('name')}")
            elif done is not None:
                if found:
                    _delete_from_active(cronjob, uid)
                    self.recorder.event(cronjob, "Normal", "SawCompletedJob",
                                        f"Saw completed job: {meta(j).get('name')}, condition: {done}")
                    update = True
                if is_job_succeeded(j):
                    status = cronjob.setdefault("status", {})
                    completed = (j.get("status") or {}).get("completionTime")
                    last = parse_time(status.get("lastSuccessfulTime"))
                    if last is None:
                        if completed is not None:
                            status["lastSuccessfulTime"] = completed
                        update = True
                    elif completed is not None and (t := parse_time(completed)) is not None and t > last:
                        status["lastSuccessfulTime"] = completed
                        update = True
        for ref in list((cronjob.get("status") or {}).get("active") or ()):
            if ref.get("uid") in children:
                continue
            try:
                await self._client.get(JOBS, str(ref.get("name")), ref.get("namespace") or ns)
            except NotFoundError:
                self.recorder.event(cronjob, "Normal", "MissingJob", f"Active job went missing: {ref.get('name')}")
                _delete_from_active(cronjob, ref.get("uid"))
                update = True
            except ApiError as e:
                return None, update, e
        if is_deleting(cronjob):
            return None, update, None
        spec = cronjob.get("spec") or {}
        tz = spec.get("timeZone")
        if tz is not None and (tz_err := time_zone_error(str(tz))) is not None:
            self.recorder.event(cronjob, "Warning", "UnknownTimeZone", f"invalid timeZone: {go_quote(str(tz))}: {tz_err}")
            return None, update, None
        if spec.get("suspend"):
            return None, update, None
        schedule = str(spec.get("schedule") or "")
        if "TZ" in schedule:
            self.recorder.event(cronjob, "Warning", "UnsupportedSchedule", UNSUPPORTED_SCHEDULE.format(go_quote(schedule)))
        try:
            sched, _ = parse_schedule(cronjob)
        except ValueError as e:
            self.recorder.event(cronjob, "Warning", "UnparseableSchedule",
                                f"unparseable schedule: {go_quote(schedule)} : {e}")
            return None, update, None
        scheduled, missed, sched_err = next_schedule_time(cronjob, now, sched)
        if scheduled is None:
            if sched_err is not None:
                self.recorder.event(cronjob, "Warning", "InvalidSchedule", f"invalid schedule: {schedule} : {sched_err}")
                return None, update, None
            return next_schedule_time_duration(cronjob, now, sched), update, None
        if missed == MISSED_MANY:
            self.recorder.event(cronjob, "Warning", "TooManyMissedTimes",
                                "too many missed start times. Set or decrease .spec.startingDeadlineSeconds "
                                "or check clock skew")
        sds = spec.get("startingDeadlineSeconds")
        if isinstance(sds, int) and scheduled + timedelta(seconds=sds) < now:
            self.recorder.event(cronjob, "Warning", "MissSchedule",
                                f"Missed scheduled time to start a job: {_rfc1123z(scheduled)}")
            return next_schedule_time_duration(cronjob, now, sched), update, None
        name = job_name(cronjob, scheduled)
        status = cronjob.setdefault("status", {})
        if (any(r.get("name") == name and (r.get("namespace") or ns) == ns for r in status.get("active") or ())
                or parse_time(status.get("lastScheduleTime")) == scheduled):
            return next_schedule_time_duration(cronjob, now, sched), update, None
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and status.get("active"):
            self.recorder.event(cronjob, "Normal", "JobAlreadyActive",
                                "Not starting job because prior execution is running and concurrency policy "
                                "is Forbid")
            return next_schedule_time_duration(cronjob, now, sched), update, None
        if policy == "Replace":
            for ref in list(status.get("active") or ()):
                try:
                    job = await self._client.get(JOBS, str(ref.get("name")), ref.get("namespace") or ns)
                except ApiError as e:
                    self.recorder.event(cronjob, "Warning", "FailedGet", f"Get job: {e.message}")
                    return None, update, e
                if not await self._delete_job(cronjob, job):
                    return None, update, RuntimeError(f"could not replace job {ns}/{meta(job).get('name')}")
                update = True
        zone = load_zone(str(tz)) if tz is not None else UTC  # the annotation's zone: spec.timeZone only
        body = job_from_template(cronjob, scheduled, zone)
        already = False
        try:
            job = await self._client.create(JOBS, body, ns)
        except AlreadyExistsError:
            already = True
            try:
                job = await self._client.get(JOBS, name, ns)
            except ApiError as e:
                return None, update, e
            if (controller_ref(job) or {}).get("uid") != meta(cronjob).get("uid"):
                return None, update, None
            if _in_active(cronjob, meta(job).get("uid")):
                return None, update, None
        except ApiError as e:
            if e.has_cause("NamespaceTerminating"):
                return None, update, e
            self.recorder.event(cronjob, "Warning", "FailedCreate", f"Error creating job: {e.message}")
            return None, update, e
        if already:
            logger.info("%s: job already exists cronjob=%s job=%s", self.NAME, object_key(cronjob), name)
        else:
            self.recorder.event(cronjob, "Normal", "SuccessfulCreate", f"Created job {name}")
        status = cronjob.setdefault("status", {})
        status["active"] = list(status.get("active") or ()) + [job_ref(job)]
        status["lastScheduleTime"] = rfc3339(scheduled)
        return next_schedule_time_duration(cronjob, now, sched), True, None

    async def _delete_job(self, cronjob: JsonDict, job: JsonDict) -> bool:
        """deleteJob: DELETE the Job (background propagation), drop it from the active list."""
        m = meta(job)
        try:
            await self._client.delete(JOBS, str(m.get("name")), m.get("namespace"), propagation_policy="Background")
        except ApiError as e:
            self.recorder.event(cronjob, "Warning", "FailedDelete", f"Deleted job: {e.message}")
            return False
        _delete_from_active(cronjob, m.get("uid"))
        self.recorder.event(cronjob, "Normal", "SuccessfulDelete", f"Deleted job {m.get('name')}")
        return True

    async def cleanup_finished_jobs(self, cronjob: JsonDict, jobs: list[JsonDict]) -> bool:
        """cleanupFinishedJobs: delete the oldest (byJobStartTime) Complete / Failed Jobs beyond
        successfulJobsHistoryLimit / failedJobsHistoryLimit; True when one was deleted."""
        spec = cronjob.get("spec") or {}
        updated = False
        for kind, limit_key in (("Complete", "successfulJobsHistoryLimit"), ("Failed", "failedJobsHistoryLimit")):
            if spec.get(limit_key) is None:
                continue
            done = [j for j in jobs if finished(j) == kind]
            excess = len(done) - get_int(spec, limit_key)
            for j in sort_by_job_start_time(done)[:max(0, excess)]:
                if await self._delete_job(cronjob, j):
                    updated = True
        return updated

    async def _write_status(self, cj: JsonDict, status: JsonDict) -> None:
        body = copy.copy(cj)
        body["status"] = status
        try:
            await self._client.update_status(CRONJOBS, body, read_only=True)
        except NotFoundError:
            return
        except ConflictError:
            self.queue.add_rate_limited(object_key(cj))
