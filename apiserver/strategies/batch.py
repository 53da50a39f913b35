"""Job and CronJob strategies (layer L4, apiserver).

Upstream: pkg/apis/batch/v1/defaults.go (parallelism 1, completions 1 when both are unset,
backoffLimit 6, completionMode NonIndexed, suspend false, podReplacementPolicy
TerminatingOrFailed; CronJob concurrencyPolicy Allow, suspend false, history limits 3 / 1) and
pkg/registry/batch/job/strategy.go: unless `spec.manualSelector` is true, the Job's selector is
generated from its uid (`batch.kubernetes.io/controller-uid`) and the template gets the
controller-uid and job-name labels (both the `batch.kubernetes.io/` and the legacy names).
Validation follows pkg/apis/batch/validation's ValidateJob: the template as any pod template
(ValidatePodTemplateSpec), a restartPolicy of OnFailure or Never, the selector matching the
template's labels, and the completion mode's rules. Warnings: a name that is no DNS label and
WarningsForJobSpec (the pod template, Indexed Jobs past the soft limits) on create, and on an
update that changed the spec; a CronJob's update also warns while its schedule names TZ.
"""

from __future__ import annotations

import itertools
from typing import Any

from minik3s.api.helpers.cron import schedule_error, time_zone_error
from minik3s.api.helpers.indexes import indexes_format_error
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    duplicate,
    invalid,
    invalid_omit_value,
    is_dns1123_label,
    is_qualified_name,
    not_supported,
    required,
    too_long,
    too_many,
    validate_label_selector,
    validate_nonnegative,
    validate_object_meta,
)

from .apps import default_template, selector_template_mismatch, validate_pod_template_spec
from .base import Strategy, as_dict
from .pod_warnings import dns_label_name_warning, warnings_for_job_spec

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
    if spec.get("backoffLimit") is None:
        # with a per-index limit the Job-wide one is off (math.MaxInt32), else 6
        spec["backoffLimit"] = 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy",
                    "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed")
    pfp = spec.get("podFailurePolicy")
    if isinstance(pfp, dict):
        for rule in pfp.get("rules") or ():
            for pattern in (rule.get("onPodConditions") or ()) if isinstance(rule, dict) else ():
                if isinstance(pattern, dict) and not pattern.get("status"):
                    pattern["status"] = "True"
    default_template(spec)


MAX_PARALLELISM_INDEXED = 100_000
MAX_FAILED_INDEXES = 100_000
MAX_MANAGED_BY_LENGTH = 63
POD_REPLACEMENT_POLICIES = ("Failed", "TerminatingOrFailed")


def validate_job_spec(spec: JsonDict, field: str = "spec") -> list[JsonDict]:
    """validateJobSpec (pkg/apis/batch/validation): counters non-negative, the completion
    mode's rules (Indexed needs completions; per-index limits need it), podReplacementPolicy,
    ValidatePodTemplateSpec of the template, and a restartPolicy of OnFailure or Never (unset
    or Always: Required)."""
    errs: list[JsonDict] = []
    for k in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished",
              "backoffLimitPerIndex", "maxFailedIndexes"):
        errs.extend(validate_nonnegative(spec.get(k), f"{field}.{k}"))
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        errs.append(required(f"{field}.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    managed_by = spec.get("managedBy")
    if isinstance(managed_by, str) and len(managed_by) > MAX_MANAGED_BY_LENGTH:
        errs.append(too_long(f"{field}.managedBy", MAX_MANAGED_BY_LENGTH))
    mode = spec.get("completionMode")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        errs.append(not_supported(f"{field}.completionMode", mode, ("NonIndexed", "Indexed")))
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    max_failed = spec.get("maxFailedIndexes")
    if mode == "Indexed":
        if completions is None:
            errs.append(required(f"{field}.completions", "when completion mode is Indexed"))
        if isinstance(parallelism, int) and parallelism > MAX_PARALLELISM_INDEXED:
            errs.append(invalid(f"{field}.parallelism", parallelism,
                                f"must be less than or equal to {MAX_PARALLELISM_INDEXED} when completion mode is Indexed"))
        if isinstance(completions, int) and isinstance(max_failed, int) and max_failed > completions:
            errs.append(invalid(f"{field}.maxFailedIndexes", max_failed, "must be less than or equal to completions"))
        if isinstance(max_failed, int) and max_failed > MAX_FAILED_INDEXES:
            errs.append(invalid(f"{field}.maxFailedIndexes", max_failed,
                                f"must be less than or equal to {MAX_FAILED_INDEXES}"))
    else:
        for k in ("backoffLimitPerIndex", "maxFailedIndexes"):
            if spec.get(k) is not None:
                errs.append(invalid(f"{field}.{k}", spec[k], "requires indexed completion mode"))
    success = spec.get("successPolicy")
    if success is not None:
        if mode != "Indexed":
            errs.append(invalid(f"{field}.successPolicy", success, "requires indexed completion mode"))
        else:
            errs.extend(validate_success_policy(spec, f"{field}.successPolicy"))
    has_failure_policy = spec.get("podFailurePolicy") is not None
    if has_failure_policy:
        errs.extend(validate_pod_failure_policy(spec, f"{field}.podFailurePolicy"))
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        allowed = ("Failed",) if has_failure_policy else POD_REPLACEMENT_POLICIES
        if replacement not in allowed:
            errs.append(not_supported(f"{field}.podReplacementPolicy", replacement, allowed))
    tmpl = spec.get("template")
    if not isinstance(tmpl, dict):
        tmpl = {}  # the zero PodTemplateSpec
    errs.extend(validate_pod_template_spec(tmpl, f"{field}.template"))
    rp = as_dict(tmpl.get("spec")).get("restartPolicy")
    rp_field = f"{field}.template.spec.restartPolicy"
    if rp in (None, "", "Always"):
        errs.append(required(rp_field, 'valid values: "OnFailure", "Never"'))
    elif rp not in JOB_RESTART_POLICIES:
        errs.append(not_supported(rp_field, rp, JOB_RESTART_POLICIES))
    elif has_failure_policy and rp != "Never":
        errs.append(invalid(rp_field, rp, 'only "Never" is supported when podFailurePolicy is specified'))
    return errs


class Int32s:
    """A []int32 as field.Error prints it (%#v): []int32{1, 2}, or []int32(nil)."""

    def __init__(self, values: list[Any] | None) -> None:
        self.values = values

    def __str__(self) -> str:
        if self.values is None:
            return "[]int32(nil)"
        return "[]int32{" + ", ".join(str(v) for v in self.values) + "}"


POD_FAILURE_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
MAX_POD_FAILURE_RULES = 20
MAX_EXIT_CODE_VALUES = 255
MAX_CONDITION_PATTERNS = 20


def validate_pod_failure_policy(spec: JsonDict, field: str) -> list[JsonDict]:
    """validatePodFailurePolicy: at most 20 rules, each with a known action and exactly one of
    onExitCodes (an operator, a container of the template, 1-255 ordered unique values, no 0 for
    In) and onPodConditions (at most 20 patterns of a qualified type and a known status)."""
    policy = as_dict(spec.get("podFailurePolicy"))
    rules = policy.get("rules") or []
    errs: list[JsonDict] = []
    if not isinstance(rules, list):
        return [invalid(f"{field}.rules", rules, "must be a list")]
    if len(rules) > MAX_POD_FAILURE_RULES:
        errs.append(too_many(f"{field}.rules", len(rules), MAX_POD_FAILURE_RULES))
    tspec = as_dict(as_dict(spec.get("template")).get("spec"))
    names = {c.get("name") for key in ("containers", "initContainers") for c in tspec.get(key) or ()
             if isinstance(c, dict)}
    for i, rule in enumerate(rules):
        path = f"{field}.rules[{i}]"
        rule = as_dict(rule)
        action = rule.get("action")
        if not action:
            errs.append(required(f"{path}.action", 'valid values: ["Count" "FailIndex" "FailJob" "Ignore"]'))
        elif action == "FailIndex":
            if spec.get("backoffLimitPerIndex") is None:
                errs.append(invalid(f"{path}.action", action, "requires the backoffLimitPerIndex to be set"))
        elif action not in POD_FAILURE_ACTIONS:
            errs.append(not_supported(f"{path}.action", action, POD_FAILURE_ACTIONS))
        codes, conds = rule.get("onExitCodes"), rule.get("onPodConditions")
        if isinstance(codes, dict):
            errs.extend(_validate_on_exit_codes(codes, f"{path}.onExitCodes", names))
        if conds:
            errs.extend(_validate_on_pod_conditions(conds, f"{path}.onPodConditions"))
        if isinstance(codes, dict) and conds:
            errs.append(invalid_omit_value(path, "specifying both OnExitCodes and OnPodConditions is not supported"))
        if not isinstance(codes, dict) and not conds:
            errs.append(invalid_omit_value(path, "specifying one of OnExitCodes and OnPodConditions is required"))
    return errs


def _validate_on_exit_codes(req: JsonDict, path: str, names: set[object]) -> list[JsonDict]:
    errs: list[JsonDict] = []
    op = req.get("operator")
    if not op:
        errs.append(required(f"{path}.operator", 'valid values: ["In" "NotIn"]'))
    elif op not in ("In", "NotIn"):
        errs.append(not_supported(f"{path}.operator", op, ("In", "NotIn")))
    name = req.get("containerName")
    if name is not None and name not in names:
        errs.append(invalid(f"{path}.containerName", name,
                            "must be one of the container or initContainer names in the pod template"))
    raw = req.get("values")
    if raw is not None and not isinstance(raw, list):
        return errs + [invalid(f"{path}.values", raw, "must be a list")]
    values = raw or []
    if not values:
        errs.append(invalid(f"{path}.values", Int32s(raw), "at least one value is required"))
    elif len(values) > MAX_EXIT_CODE_VALUES:
        errs.append(too_many(f"{path}.values", len(values), MAX_EXIT_CODE_VALUES))
    seen: set[object] = set()
    for j, v in enumerate(values):
        if op == "In" and v == 0:
            errs.append(invalid(f"{path}.values[{j}]", v, "must not be 0 for the In operator"))
        if v in seen:
            errs.append(duplicate(f"{path}.values[{j}]", v))
        seen.add(v)
    if any(isinstance(a, int) and isinstance(b, int) and a > b for a, b in itertools.pairwise(values)):
        errs.append(invalid(f"{path}.values", Int32s(values), "must be ordered"))
    return errs


def _validate_on_pod_conditions(patterns: object, path: str) -> list[JsonDict]:
    if not isinstance(patterns, list):
        return [invalid(path, patterns, "must be a list")]
    errs: list[JsonDict] = []
    if len(patterns) > MAX_CONDITION_PATTERNS:
        errs.append(too_many(path, len(patterns), MAX_CONDITION_PATTERNS))
    for j, pattern in enumerate(patterns):
        pattern = as_dict(pattern)
        ctype = str(pattern.get("type") or "")
        for msg in is_qualified_name(ctype):
            errs.append(invalid(f"{path}[{j}].type", ctype, msg))
        status = pattern.get("status")
        if not status:
            errs.append(required(f"{path}[{j}].status", 'valid values: ["False" "True" "Unknown"]'))
        elif status not in ("False", "True", "Unknown"):
            errs.append(not_supported(f"{path}[{j}].status", status, ("False", "True", "Unknown")))
    return errs


MAX_SUCCESS_RULES = 20
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024


def validate_success_policy(spec: JsonDict, field: str) -> list[JsonDict]:
    """validateSuccessPolicy: 1-20 rules, each with succeededIndexes (well-formed, within
    completions) and/or succeededCount (non-negative, at most completions and at most the
    indexes it names)."""
    rules = as_dict(spec.get("successPolicy")).get("rules") or []
    errs: list[JsonDict] = []
    if not isinstance(rules, list) or not rules:
        return [required(f"{field}.rules", "at least one rules must be specified when the successPolicy is specified")]
    if len(rules) > MAX_SUCCESS_RULES:
        errs.append(too_many(f"{field}.rules", len(rules), MAX_SUCCESS_RULES))
    raw_completions = spec.get("completions")
    completions = raw_completions if isinstance(raw_completions, int) else 0
    for i, rule in enumerate(rules):
        path = f"{field}.rules[{i}]"
        rule = as_dict(rule)
        indexes, count = rule.get("succeededIndexes"), rule.get("succeededCount")
        if indexes is None and count is None:
            errs.append(required(path, "at least one of succeededCount or succeededIndexes must be specified"))
        total = 0
        if indexes is not None:
            text = str(indexes)
            if len(text) > MAX_SUCCEEDED_INDEXES_LENGTH:
                errs.append(too_long(f"{path}.succeededIndexes", MAX_SUCCEEDED_INDEXES_LENGTH))
            total, perr = indexes_format_error(text, completions)
            if perr is not None:
                errs.append(invalid(f"{path}.succeededIndexes", text, f"error parsing succeededIndexes: {perr}"))
        if count is not None:
            errs.extend(validate_nonnegative(count, f"{path}.succeededCount"))
            if isinstance(count, int) and count > completions:
                errs.append(invalid(f"{path}.succeededCount", count,
                                    f"must be less than or equal to {completions} (the number of specified completions)"))
            if indexes is not None and isinstance(count, int) and count > total:
                errs.append(invalid(f"{path}.succeededCount", count, f"must be less than or equal to {total} "
                                    "(the number of indexes in the specified succeededIndexes field)"))
    return errs


def validate_selector_matches_template(spec: JsonDict, field: str = "spec") -> list[JsonDict]:
    """ValidateJobSpec's selector checks: a valid label selector that matches the template's labels."""
    sel = spec.get("selector")
    errs = validate_label_selector(sel, f"{field}.selector")
    if not errs and isinstance(sel, dict):
        errs.extend(selector_template_mismatch(sel, as_dict(spec.get("template")), field))
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
        else:
            errs.extend(validate_selector_matches_template(spec))
            if spec.get("manualSelector") is not True:
                uid = as_dict(obj.get("metadata")).get("uid")
                if as_dict(sel).get("matchLabels") != {CONTROLLER_UID: uid}:
                    errs.append(invalid("spec.selector", sel, "`selector` will be auto-generated"))
        completions = spec.get("completions")
        if spec.get("completionMode") == "Indexed" and isinstance(completions, int) and completions > 0:
            # the highest index's pod hostname must be a DNS label
            name = str(as_dict(obj.get("metadata")).get("name") or "")
            hostname = f"{name}-{completions - 1}"
            if name and is_dns1123_label(hostname):
                errs.append(invalid("metadata.name", name,
                                    f"will not able to create pod with invalid DNS label: {hostname}"))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        """ValidateJobSpecUpdate: selector, completion mode, podFailurePolicy,
        backoffLimitPerIndex, managedBy and successPolicy immutable; completions too, except
        for an Indexed Job changing it in tandem with parallelism (elastic Indexed Jobs); the
        template immutable, except the scheduling directives of a suspended Job that never
        started (validatePodTemplateUpdate)."""
        ns, os_ = as_dict(new.get("spec")), as_dict(old.get("spec"))
        errs: list[JsonDict] = []
        for k in ("selector", "completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy",
                  "successPolicy"):
            if ns.get(k) != os_.get(k):
                errs.append(invalid(f"spec.{k}", ns.get(k), "field is immutable"))
        completions = ns.get("completions")
        if completions != os_.get("completions"):
            if ns.get("completionMode") != "Indexed":
                errs.append(invalid("spec.completions", completions, "field is immutable"))
            elif completions is not None and completions != ns.get("parallelism"):
                errs.append(invalid("spec.completions", completions,
                                    "can only be modified in tandem with spec.parallelism"))
        new_t, old_t = as_dict(ns.get("template")), as_dict(os_.get("template"))
        if new_t != old_t:
            suspended_unstarted = bool(ns.get("suspend")) and not as_dict(old.get("status")).get("startTime")
            if not suspended_unstarted or _without_scheduling_directives(new_t) != _without_scheduling_directives(old_t):
                errs.append(invalid("spec.template", new_t, "field is immutable"))
        return errs

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        """jobStrategy.WarningsOnCreate: a name that is no DNS label, WarningsForJobSpec."""
        return dns_label_name_warning(obj, POD_NAMES_AND_HOSTNAMES) + warnings_for_job_spec("spec", obj.get("spec"))

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        """jobStrategy.WarningsOnUpdate: WarningsForJobSpec when the spec changed (generation)."""
        if _generation(new) == _generation(old):
            return []
        return warnings_for_job_spec("spec", new.get("spec"), as_dict(old.get("spec")))


def _generation(obj: JsonDict) -> Any:
    return as_dict(obj.get("metadata")).get("generation")


POD_NAMES_AND_HOSTNAMES = "this is used in Pod names and hostnames"


def _without_scheduling_directives(template: JsonDict) -> JsonDict:
    """A template without what a suspended, never started Job may change: labels, annotations,
    nodeSelector, tolerations, schedulingGates and node affinity."""
    out = {k: v for k, v in template.items() if k != "metadata"}
    tmeta = {k: v for k, v in as_dict(template.get("metadata")).items() if k not in ("labels", "annotations")}
    if tmeta:
        out["metadata"] = tmeta
    spec = {k: v for k, v in as_dict(template.get("spec")).items()
            if k not in ("nodeSelector", "tolerations", "schedulingGates", "affinity")}
    affinity = {k: v for k, v in as_dict(as_dict(template.get("spec")).get("affinity")).items() if k != "nodeAffinity"}
    if affinity:
        spec["affinity"] = affinity
    out["spec"] = spec
    return out


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

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        """cronJobStrategy.WarningsOnCreate: a name that is no DNS label, WarningsForJobSpec of
        the job template (a TZ in the schedule is a validation error on create)."""
        job_spec = as_dict(as_dict(obj.get("spec")).get("jobTemplate")).get("spec")
        return dns_label_name_warning(obj, POD_NAMES_AND_HOSTNAMES) + warnings_for_job_spec(
            "spec.jobTemplate.spec", job_spec)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        """cronJobStrategy.WarningsOnUpdate: the job template's warnings when the spec changed,
        and, whatever changed, a schedule still naming TZ / CRON_TZ (allowed on an object that
        already had it). Upstream's path there reads `spec.spec.schedule`."""
        spec = as_dict(new.get("spec"))
        warnings: list[str] = []
        if _generation(new) != _generation(old):
            warnings = warnings_for_job_spec("spec.jobTemplate.spec", as_dict(spec.get("jobTemplate")).get("spec"),
                                             as_dict(as_dict(old.get("spec")).get("jobTemplate")).get("spec"))
        schedule = spec.get("schedule")
        if isinstance(schedule, str) and "TZ" in schedule:
            warnings.append("cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
                            "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details")
        return warnings
