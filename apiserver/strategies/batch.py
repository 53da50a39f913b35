"""Job and CronJob strategies (layer L4, apiserver).

Upstream: pkg/apis/batch/v1/defaults.go (parallelism 1, completions 1 when both are unset,
backoffLimit 6, completionMode NonIndexed, suspend false, podReplacementPolicy
TerminatingOrFailed; CronJob concurrencyPolicy Allow, suspend false, history limits 3 / 1) and
pkg/registry/batch/job/strategy.go: unless `spec.manualSelector` is true, the Job's selector is
generated from its uid (`batch.kubernetes.io/controller-uid`) and the template gets the
controller-uid and job-name labels (both the `batch.kubernetes.io/` and the legacy names).
A Job template's restartPolicy must be OnFailure or Never.
"""

from __future__ import annotations

from minik3s.api.helpers.cron import schedule_error, time_zone_error
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    invalid,
    not_supported,
    required,
    validate_nonnegative,
    validate_object_meta,
)

from .apps import default_template
from .base import Strategy, as_dict
from .podspec import validate_pod_spec

CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID = "controller-uid"
LEGACY_JOB_NAME = "job-name"
JOB_RESTART_POLICIES = ("OnFailure", "Never")


def default_job_spec(spec: JsonDict) -> None:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    if spec.get("backoffLimit") is None and spec.get("backoffLimitPerIndex") is None:
        spec["backoffLimit"] = 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    default_template(spec)


def validate_job_spec(spec: JsonDict, field: str = "spec") -> list[JsonDict]:
    errs: list[JsonDict] = []
    for k in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"):
        errs.extend(validate_nonnegative(spec.get(k), f"{field}.{k}"))
    if spec.get("completionMode") not in ("NonIndexed", "Indexed"):
        errs.append(not_supported(f"{field}.completionMode", spec.get("completionMode"), ("NonIndexed", "Indexed")))
    tmpl = spec.get("template")
    if not isinstance(tmpl, dict) or not isinstance(tmpl.get("spec"), dict):
        errs.append(required(f"{field}.template.spec"))
        return errs
    pspec = tmpl["spec"]
    errs.extend(validate_pod_spec(pspec, f"{field}.template.spec"))
    rp = pspec.get("restartPolicy")
    if rp not in JOB_RESTART_POLICIES:
        errs.append(not_supported(f"{field}.template.spec.restartPolicy", rp, JOB_RESTART_POLICIES))
    return errs


class JobStrategy(Strategy):
    kind = "Job"
    group = "batch"
    has_status = True
    tracks_generation = True

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            default_job_spec(spec)

    def prepare_for_create(self, obj: JsonDict) -> None:
        super().prepare_for_create(obj)
        spec = obj.get("spec")
        meta = as_dict(obj.get("metadata"))
        if not isinstance(spec, dict) or spec.get("manualSelector") is True:
            return
        uid, name = meta.get("uid") or "", meta.get("name") or ""
        tmpl = spec.get("template")
        if isinstance(tmpl, dict):
            tmeta = tmpl.setdefault("metadata", {})
            if isinstance(tmeta, dict):
                labels = tmeta.setdefault("labels", {})
                if isinstance(labels, dict):
                    labels.update({CONTROLLER_UID: uid, LEGACY_CONTROLLER_UID: uid,
                                   JOB_NAME: name, LEGACY_JOB_NAME: name})
        if spec.get("selector") is None:
            spec["selector"] = {"matchLabels": {CONTROLLER_UID: uid}}

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj["status"] = {}

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec")]
        errs = validate_job_spec(spec)
        sel = spec.get("selector")
        if sel is None:
            errs.append(required("spec.selector"))
        elif spec.get("manualSelector") is not True:
            uid = as_dict(obj.get("metadata")).get("uid")
            if as_dict(sel).get("matchLabels") != {CONTROLLER_UID: uid}:
                errs.append(invalid("spec.selector", sel, "`selector` will be auto-generated"))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        ns, os_ = as_dict(new.get("spec")), as_dict(old.get("spec"))
        errs: list[JsonDict] = []
        for k in ("selector", "completions", "completionMode"):
            if ns.get(k) != os_.get(k) and not (k == "completions" and ns.get("completionMode") == "Indexed"):
                errs.append(invalid(f"spec.{k}", ns.get(k), "field is immutable"))
        return errs


class CronJobStrategy(Strategy):
    kind = "CronJob"
    group = "batch"
    has_status = True
    tracks_generation = True

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        jt = spec.get("jobTemplate")
        if isinstance(jt, dict) and isinstance(jt.get("spec"), dict):
            default_job_spec(jt["spec"])

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj["status"] = {}

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec")]
        return self._validate_spec(spec, allow_tz=False)

    def _validate_spec(self, spec: JsonDict, *, allow_tz: bool) -> list[JsonDict]:
        """ValidateCronJobSpec: schedule (robfig ParseStandard syntax; TZ=/CRON_TZ= only on an
        object that already had it), timeZone, concurrencyPolicy, deadlines, history limits."""
        errs: list[JsonDict] = []
        sched = spec.get("schedule")
        tz = spec.get("timeZone")
        if not sched:
            errs.append(required("spec.schedule"))
        elif not isinstance(sched, str):
            errs.append(invalid("spec.schedule", sched, "must be a string"))
        else:
            body = sched
            if allow_tz and sched.startswith(("TZ=", "CRON_TZ=")):
                body = sched.split(None, 1)[1] if len(sched.split(None, 1)) > 1 else ""
            perr = schedule_error(body)
            if perr is not None:
                errs.append(invalid("spec.schedule", sched, perr))
            if allow_tz and "TZ" in sched and tz is not None:
                errs.append(invalid("spec.schedule", sched, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
            elif not allow_tz and "TZ" in sched:
                errs.append(invalid("spec.schedule", sched, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
        if tz is not None:
            terr = time_zone_error(tz) if isinstance(tz, str) else "must be a string"
            if terr is not None:
                errs.append(invalid("spec.timeZone", tz, terr))
        errs.extend(validate_nonnegative(spec.get("startingDeadlineSeconds"), "spec.startingDeadlineSeconds"))
        errs.extend(validate_nonnegative(spec.get("successfulJobsHistoryLimit"), "spec.successfulJobsHistoryLimit"))
        errs.extend(validate_nonnegative(spec.get("failedJobsHistoryLimit"), "spec.failedJobsHistoryLimit"))
        if spec.get("concurrencyPolicy") not in ("Allow", "Forbid", "Replace"):
            errs.append(not_supported("spec.concurrencyPolicy", spec.get("concurrencyPolicy"),
                                      ("Allow", "Forbid", "Replace")))
        jt = as_dict(spec.get("jobTemplate"))
        errs.extend(validate_job_spec(as_dict(jt.get("spec")), "spec.jobTemplate.spec"))
        return errs

    def validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        # an inline TZ= stays allowed on an object created before upstream forbade it
        allow_tz = "TZ" in str(as_dict(old.get("spec")).get("schedule") or "")
        if not allow_tz:
            return super().validate_update(new, old)
        spec = new.get("spec")
        errs = validate_object_meta(new.get("metadata"), name_format=self.name_format)
        if not isinstance(spec, dict):
            return errs + [required("spec")]
        return errs + self._validate_spec(spec, allow_tz=True)
