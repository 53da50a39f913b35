"""CronJob controller (layer L4), after kube-controller-manager's `cronjob_controllerv2.go`.

For each CronJob: finds the most recent unmet schedule time in `spec.timeZone` (UTC when
unset) since `status.lastScheduleTime` (or creation), bounded by `startingDeadlineSeconds`
(a start later than that is a `MissSchedule` event); honours `suspend`; with
`concurrencyPolicy` Forbid skips while a Job is active, with Replace deletes the active Jobs
first; creates Job `<cronjob>-<scheduled unix time in minutes>` from `jobTemplate` with a
controller ownerReference and the `batch.kubernetes.io/cronjob-scheduled-timestamp`
annotation; keeps `status.active`, `lastScheduleTime` and `lastSuccessfulTime` true; deletes
finished Jobs beyond `successfulJobsHistoryLimit` / `failedJobsHistoryLimit`; requeues itself
for the next schedule time. Time comes from the injected Clock.

Data flow: CronJob and Job informers -> handlers enqueue `ns/name` -> `sync(key)` -> Job
creates/deletes and `cronjobs/status` writes through the Client; `queue.add_after` wakes the
CronJob at its next schedule time.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from datetime import datetime, timedelta
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

    async def sync(self, key: str) -> None:
        cj = self._cj_inf.store.get(key)
        if cj is None:
            return
        ns = str(meta(cj).get("namespace") or "")
        uid = meta(cj).get("uid")
        jobs = [j for j in self._job_inf.by_index(NAMESPACE_INDEX, ns) if (controller_ref(j) or {}).get("uid") == uid]
        status = copy.deepcopy(cj.get("status") or {})
        wake: float | None = None
        try:
            self._reconcile_active(cj, jobs, status)
            if not is_deleting(cj):
                wake = await self._schedule(cj, jobs, status)
            await self._cleanup_history(cj, jobs)
        finally:
            await self._write_status(cj, status)
        if wake is not None:
            self._wake_after(key, wake)

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

    def _reconcile_active(self, cj: JsonDict, jobs: list[JsonDict], status: JsonDict) -> None:
        """syncCronJob's first half: drop finished/vanished Jobs from `active`, record the
        latest success, and list running owned Jobs the status missed."""
        by_uid = {meta(j).get("uid"): j for j in jobs}
        active = []
        for ref in status.get("active") or []:
            j = by_uid.get(ref.get("uid"))
            if j is None or finished(j) is not None:
                if j is not None:
                    self.recorder.event(cj, "Normal", "SawCompletedJob",
                                        f"Saw completed job: {meta(j).get('name')}, "
                                        f"condition: {finished(j)}")
                continue
            active.append(ref)
        have = {r.get("uid") for r in active}
        for j in jobs:
            if finished(j) is None and not is_deleting(j) and meta(j).get("uid") not in have:
                active.append(job_ref(j))
        last_ok = parse_time(status.get("lastSuccessfulTime"))
        for j in jobs:
            if finished(j) == "Complete":
                t = parse_time((j.get("status") or {}).get("completionTime"))
                if t is not None and (last_ok is None or t > last_ok):
                    last_ok = t
        if last_ok is not None:
            status["lastSuccessfulTime"] = rfc3339(last_ok)
        if active:
            status["active"] = active
        else:
            status.pop("active", None)

    async def _schedule(self, cj: JsonDict, jobs: list[JsonDict], status: JsonDict) -> float | None:
        """syncCronJob's second half; returns seconds until the next wake-up (None: never)."""
        spec = cj.get("spec") or {}
        tz = spec.get("timeZone")
        if tz is not None and time_zone_error(str(tz)) is not None:
            self.recorder.event(cj, "Warning", "UnknownTimeZone", f"invalid timeZone: {tz!r}")
            return None
        zone = load_zone(tz)
        raw = str(spec.get("schedule") or "")
        if raw.startswith(("TZ=", "CRON_TZ=")):  # grandfathered inline zone
            head, _, raw = raw.partition(" ")
            if tz is None:
                zname = head.split("=", 1)[1]
                if time_zone_error(zname) is not None:
                    self.recorder.event(cj, "Warning", "UnknownTimeZone", f"invalid timeZone: {zname!r}")
                    return None
                zone = load_zone(zname)
        try:
            sched = Schedule(raw.strip(), zone)
        except ValueError as e:
            self.recorder.event(cj, "Warning", "UnparseableSchedule", f"unparseable schedule: {raw!r} : {e}")
            return None
        now = self._clock.now()
        if spec.get("suspend"):
            return None
        earliest = parse_time(status.get("lastScheduleTime")) or creation_time(cj) or now
        sds = spec.get("startingDeadlineSeconds")
        if isinstance(sds, int):
            earliest = max(earliest, now - timedelta(seconds=sds))
        scheduled, missed = sched.most_recent(earliest, now)

        def until_next() -> float:
            return max(0.0, (sched.next_after(now) - now).total_seconds()) + NEXT_SCHEDULE_DELTA

        if scheduled is None:
            return until_next()
        if missed > 100:
            self.recorder.event(cj, "Warning", "TooManyMissedTimes",
                                "too many missed start times. Set or decrease .spec.startingDeadlineSeconds "
                                "or check clock skew")
        if isinstance(sds, int) and scheduled + timedelta(seconds=sds) < now:
            self.recorder.event(cj, "Warning", "MissSchedule",
                                f"Missed scheduled time to start a job: {go_rfc3339(scheduled)}")
            return until_next()
        name = job_name(cj, scheduled)
        if any(meta(j).get("name") == name for j in jobs) or any(
                r.get("name") == name for r in status.get("active") or []):
            return until_next()
        policy = spec.get("concurrencyPolicy", "Allow")
        active = list(status.get("active") or [])
        if policy == "Forbid" and active:
            self.recorder.event(cj, "Normal", "JobAlreadyActive",
                                "Not starting job because prior execution is running and concurrency policy "
                                "is Forbid")
            return until_next()
        ns = meta(cj).get("namespace")
        if policy == "Replace":
            for ref in active:
                try:
                    await self._client.delete(JOBS, str(ref.get("name")), ns, propagation_policy="Background")
                    self.recorder.event(cj, "Normal", "SuccessfulDelete", f"Deleted job {ref.get('name')}")
                except NotFoundError:
                    pass
            status.pop("active", None)
        body = job_from_template(cj, scheduled, zone)
        try:
            job = await self._client.create(JOBS, body, ns)
            self.recorder.event(cj, "Normal", "SuccessfulCreate", f"Created job {name}")
        except AlreadyExistsError:
            job = await self._client.get(JOBS, name, ns)
            if (controller_ref(job) or {}).get("uid") != meta(cj).get("uid"):
                return until_next()
        except ApiError as e:
            self.recorder.event(cj, "Warning", "FailedCreate", f"Error creating job: {e.message}")
            raise
        status["active"] = [r for r in status.get("active") or [] if r.get("uid") != meta(job).get("uid")] + [
            job_ref(job)]
        status["lastScheduleTime"] = rfc3339(scheduled)
        return until_next()

    async def _cleanup_history(self, cj: JsonDict, jobs: list[JsonDict]) -> None:
        spec = cj.get("spec") or {}
        ns = meta(cj).get("namespace")
        for kind, limit_key in (("Complete", "successfulJobsHistoryLimit"), ("Failed", "failedJobsHistoryLimit")):
            if spec.get(limit_key) is None:
                continue
            limit = get_int(spec, limit_key)
            done = [j for j in jobs if finished(j) == kind and not is_deleting(j)]
            done.sort(key=lambda j: (parse_time((j.get("status") or {}).get("startTime"))
                                     or creation_time(j) or datetime.min, str(meta(j).get("name"))))
            for j in done[:max(0, len(done) - limit)]:
                try:
                    await self._client.delete(JOBS, str(meta(j).get("name")), ns, propagation_policy="Background")
                    self.recorder.event(cj, "Normal", "SuccessfulDelete", f"Deleted job {meta(j).get('name')}")
                except NotFoundError:
                    pass

    async def _write_status(self, cj: JsonDict, status: JsonDict) -> None:
        if status == (cj.get("status") or {}):
            return
        body = copy.copy(cj)
        body["status"] = status
        try:
            await self._client.update_status(CRONJOBS, body, read_only=True)
        except NotFoundError:
            return
        except ConflictError:
            self.queue.add_rate_limited(object_key(cj))
