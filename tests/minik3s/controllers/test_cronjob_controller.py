"""CronJob controller on the real in-process API with a fake clock: time only moves when the
test advances it, so schedule semantics are exact."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from minik3s.api.errors import InvalidError
from minik3s.api.resources import CRONJOBS, EVENTS, JOBS
from minik3s.controllers.cronjob import SCHEDULED_TIMESTAMP, CronJobController
from minik3s.utils.clock import rfc3339

START = datetime(2026, 1, 1, tzinfo=UTC)  # the FakeClock's start


def cj_obj(name: str = "tick", schedule: str = "*/5 * * * *", **spec) -> dict:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedule": schedule, **spec, "jobTemplate": {
                "metadata": {"labels": {"team": "a"}},
                "spec": {"template": {"spec": {"restartPolicy": "Never",
                                               "containers": [{"name": "c", "image": "busybox"}]}}}}}}


async def start(api):
    ctl = CronJobController(api, api.factory, clock=api.clock)
    api.spawn(ctl.run(), "cronjob")
    await api.settle()
    return ctl


async def jobs(api) -> dict[str, dict]:
    return {j["metadata"]["name"]: j for j in (await api.list(JOBS, "default"))["items"]}


async def advance(api, seconds: float) -> None:
    api.clock.advance(seconds)
    await api.settle()


async def reasons(api) -> list[str]:
    return [e["reason"] for e in (await api.list(EVENTS, "default"))["items"]
            if e["involvedObject"]["kind"] == "CronJob"]


async def test_fires_on_schedule_with_upstream_name_annotation_and_status(real_api):
    api = real_api
    await start(api)
    await api.create(CRONJOBS, cj_obj())
    await advance(api, 60)
    assert await jobs(api) == {}  # 00:01: nothing due yet
    await advance(api, 4 * 60 + 1)  # past 00:05
    js = await jobs(api)
    due = datetime(2026, 1, 1, 0, 5, tzinfo=UTC)
    name = f"tick-{int(due.timestamp()) // 60}"
    assert list(js) == [name]
    job = js[name]
    assert job["metadata"]["annotations"][SCHEDULED_TIMESTAMP] == "2026-01-01T00:05:00Z"
    assert job["metadata"]["labels"]["team"] == "a"
    ref = job["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["controller"]) == ("CronJob", "tick", True)
    cj = await api.get(CRONJOBS, "tick", "default")
    assert cj["status"]["lastScheduleTime"] == rfc3339(due)
    assert [a["name"] for a in cj["status"]["active"]] == [name]
    # Allow: the next tick starts a second job although the first still runs
    await advance(api, 5 * 60)
    assert len(await jobs(api)) == 2
    assert len((await api.get(CRONJOBS, "tick", "default"))["status"]["active"]) == 2


async def test_forbid_skips_and_replace_replaces(real_api):
    api = real_api
    await start(api)
    await api.create(CRONJOBS, cj_obj("forbid", concurrencyPolicy="Forbid"))
    await api.create(CRONJOBS, cj_obj("replace", concurrencyPolicy="Replace"))
    await advance(api, 5 * 60 + 1)
    first = await jobs(api)
    assert len(first) == 2
    await advance(api, 5 * 60)
    second = await jobs(api)
    forbid = sorted(n for n in second if n.startswith("forbid-"))
    replace = sorted(n for n in second if n.startswith("replace-") and not second[n]["metadata"].get(
        "deletionTimestamp"))
    assert forbid == sorted(n for n in first if n.startswith("forbid-"))
    assert len(replace) == 1 and replace[0] not in first
    assert "JobAlreadyActive" in await reasons(api)
    cj = await api.get(CRONJOBS, "replace", "default")
    assert [a["name"] for a in cj["status"]["active"]] == replace


async def test_starting_deadline_misses_late_starts_and_suspend_stops(real_api):
    api = real_api
    await api.create(CRONJOBS, cj_obj("late", startingDeadlineSeconds=30))
    await api.create(CRONJOBS, cj_obj("paused", suspend=True))
    api.clock.advance(5 * 60 + 45)  # the controller was down: it comes up 45 s after the tick
    await start(api)
    assert await jobs(api) == {}  # the 00:05 start is more than 30 s late: skipped
    await advance(api, 5 * 60 - 45 + 10)  # 10 s after the next tick: inside the deadline
    assert [n.split("-")[0] for n in await jobs(api)] == ["late"]  # and "paused" never runs
    await api.patch(CRONJOBS, "paused", {"spec": {"suspend": False}}, "default")
    await advance(api, 5 * 60)
    assert sorted(n.split("-")[0] for n in await jobs(api)) == ["late", "late", "paused"]


async def test_time_zone_and_history_limits(real_api):
    api = real_api
    await start(api)
    # 09:00 in Tokyo is 00:00 UTC; creation at 2026-01-01T00:00Z means the first is the next day
    await api.create(CRONJOBS, cj_obj("tokyo", "0 9 * * *", timeZone="Asia/Tokyo",
                                      successfulJobsHistoryLimit=1))
    await advance(api, 24 * 3600 + 1)
    js = await jobs(api)
    assert len(js) == 1
    (job,) = js.values()
    assert job["metadata"]["annotations"][SCHEDULED_TIMESTAMP] == "2026-01-02T09:00:00+09:00"
    assert job["metadata"]["name"] == f"tokyo-{int(datetime(2026, 1, 2, tzinfo=UTC).timestamp()) // 60}"

    async def complete(name):
        j = await api.get(JOBS, name, "default")
        now = rfc3339(api.clock.now())
        j["status"] = {"startTime": now, "completionTime": now, "succeeded": 1, "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now},
            {"type": "Complete", "status": "True", "lastTransitionTime": now}]}
        await api.update_status(JOBS, j)

    await complete(job["metadata"]["name"])
    await advance(api, 1)
    cj = await api.get(CRONJOBS, "tokyo", "default")
    assert "active" not in cj["status"] and cj["status"]["lastSuccessfulTime"]
    await advance(api, 24 * 3600)
    newest = [n for n, j in (await jobs(api)).items() if not j["metadata"].get("deletionTimestamp")]
    assert len(newest) == 2
    second = max(newest)
    await complete(second)
    await advance(api, 1)
    live = [n for n, j in (await jobs(api)).items() if not j["metadata"].get("deletionTimestamp")]
    assert live == [second]  # successfulJobsHistoryLimit 1 removed the older finished job


@pytest.mark.parametrize(("spec", "field", "detail"), [
    ({"schedule": "CRON_TZ=UTC 0 * * * *"}, "spec.schedule", "cannot use TZ or CRON_TZ in schedule, use timeZone "
                                                              "field instead"),
    ({"schedule": "0 0 * * * *"}, "spec.schedule", "expected exactly 5 fields, found 6"),
    ({"schedule": "0 * * * *", "timeZone": "Mars/Olympus"}, "spec.timeZone", "unknown time zone Mars/Olympus"),
    ({"schedule": "0 * * * *", "startingDeadlineSeconds": -1}, "spec.startingDeadlineSeconds", "must be greater"),
])
async def test_validation(real_api, spec, field, detail):
    body = cj_obj()
    body["spec"].update(spec)
    with pytest.raises(InvalidError) as ei:
        await real_api.create(CRONJOBS, body)
    causes = {c["field"]: c["message"] for c in ei.value.causes}
    assert field in causes and detail in causes[field]
