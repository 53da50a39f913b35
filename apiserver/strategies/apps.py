"""Deployment and ReplicaSet strategies (layer L4, apiserver).

Upstream: pkg/apis/apps/v1/defaults.go (replicas 1; RollingUpdate 25%/25%; revisionHistoryLimit
10; progressDeadlineSeconds 600), pkg/apis/apps/validation (selector required and non-empty,
must match the template labels, template restartPolicy Always, selector immutable), and
pkg/registry/apps/*/strategy.go (status reset on create, generation bumped on spec change,
status subresource keeps spec and labels). Warnings (WarningsOnCreate / WarningsOnUpdate): the
pod template's (pod_warnings.get_warnings_for_pod_template under `spec.template`, `template` for
a PodTemplate) on create and on an update that changed the template (the generation; a
DaemonSet's templateGeneration), the name of a Deployment, ReplicaSet or ReplicationController
that is no DNS label, a StatefulSet's claim templates and negative revisionHistoryLimit.
"""

from __future__ import annotations

from typing import Any

from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    forbidden,
    int_or_percent_is_zero,
    invalid,
    not_supported,
    required,
    selector_is_empty,
    selector_matches,
    type_invalid,
    validate_annotations,
    validate_int_or_percent,
    validate_label_selector,
    validate_labels,
    validate_nonnegative,
    validate_object_meta,
)

from .base import Strategy, as_dict
from .pod import validate_pod_annotations
from .pod_warnings import dns_label_name_warning, get_warnings_for_pod_template, warnings_for_pvc_spec
from .podspec import default_pod_spec, validate_pod_spec

STRATEGY_TYPES = ("Recreate", "RollingUpdate")

# the name warning of workloads whose name prefixes their pods' names
POD_NAMES_AND_HOSTNAMES = "this is used in Pod names and hostnames"


def _generation(obj: JsonDict) -> Any:
    return as_dict(obj.get("metadata")).get("generation")


def _template_warnings(obj: JsonDict, old: JsonDict | None = None) -> list[str]:
    """GetWarningsForPodTemplate of `spec.template`, paths under `spec.template`."""
    new_t = as_dict(obj.get("spec")).get("template")
    old_t = as_dict(old.get("spec")).get("template") if old is not None else None
    return get_warnings_for_pod_template("spec.template", new_t, old_t)


def _workload_warnings_on_create(obj: JsonDict) -> list[str]:
    """WarningsOnCreate of Deployments, ReplicaSets and ReplicationControllers: the name, then
    the template."""
    return dns_label_name_warning(obj, POD_NAMES_AND_HOSTNAMES) + _template_warnings(obj)


def _template_warnings_on_update(new: JsonDict, old: JsonDict) -> list[str]:
    """WarningsOnUpdate of Deployments and ReplicaSets: the template's warnings when the update
    changed the generation (a spec change; for a Deployment its annotations too)."""
    if _generation(new) == _generation(old):
        return []
    return _template_warnings(new, old)


def default_template(spec: JsonDict) -> None:
    tmpl = spec.get("template")
    if isinstance(tmpl, dict) and isinstance(tmpl.get("spec"), dict):
        default_pod_spec(tmpl["spec"])


def _selector_repr(sel: Any) -> Any:
    """metav1.LabelSelector's String(), as upstream renders it in `field is immutable`."""

    class _Repr:
        def __str__(self) -> str:
            s = as_dict(sel)
            ml = s.get("matchLabels") or {}
            labels = ",".join(f"{k}: {ml[k]}" for k in sorted(ml))
            exprs = ",".join(
                f"LabelSelectorRequirement{{Key:{e.get('key')},Operator:{e.get('operator')},"
                f"Values:[]string{{{','.join(e.get('values') or [])}}},}}"
                for e in s.get("matchExpressions") or [] if isinstance(e, dict)
            )
            return (f"&LabelSelector{{MatchLabels:map[string]string{{{labels + ',' if labels else ''}}},"
                    f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}")
    return _Repr()


class NilMap:
    def __str__(self) -> str:
        return "map[string]string(nil)"


def validate_pod_template_spec(tmpl: JsonDict, path: str) -> list[JsonDict]:
    """ValidatePodTemplateSpec at `path` (e.g. "spec.template"): the template's labels and
    metadata, its pod spec (a missing one validated as the defaulted empty spec), and no
    ephemeral containers."""
    tmeta = as_dict(tmpl.get("metadata"))
    errs = validate_labels(tmeta.get("labels"), f"{path}.metadata.labels")
    errs.extend(e for e in validate_object_meta(tmeta, field=f"{path}.metadata") if not e["field"].endswith(".labels"))
    tspec = tmpl.get("spec")
    if tspec is None:
        tspec = {}
        default_pod_spec(tspec)
    errs.extend(validate_pod_spec(tspec, f"{path}.spec"))
    if as_dict(tspec).get("ephemeralContainers"):
        errs.append(forbidden(f"{path}.spec.ephemeralContainers", "ephemeral containers not allowed in pod template"))
    return errs


def selector_template_mismatch(sel: JsonDict, template: JsonDict, field: str) -> list[JsonDict]:
    """The "`selector` does not match template `labels`" error of workload validations (the
    template's labels printed as Go's map, nil when unset), or nothing."""
    labels = as_dict(template.get("metadata")).get("labels")
    if selector_matches(sel, labels if isinstance(labels, dict) else {}):
        return []
    return [invalid(f"{field}.template.metadata.labels", labels if labels else NilMap(),
                    "`selector` does not match template `labels`")]


def validate_template_for_statefulset(spec: JsonDict, field: str) -> list[JsonDict]:
    """ValidatePodTemplateSpecForStatefulSet and the spec's template rules: labels matched by the
    selector, the template's labels and annotations (at `<field>.template.labels` /
    `.annotations`, upstream's paths), restartPolicy Always, no activeDeadlineSeconds. The pod
    spec itself is not validated (upstream leaves it to the pods: its volume mounts may name
    volumeClaimTemplates, which no volume of the template carries)."""
    errs: list[JsonDict] = []
    sel = spec.get("selector")
    tmpl = spec.get("template")
    if tmpl is None:
        tmpl = {}
    if not isinstance(tmpl, dict):
        return [type_invalid(f"{field}.template", tmpl, "must be an object")]
    if isinstance(sel, dict) and not selector_is_empty(sel):
        errs.extend(selector_template_mismatch(sel, tmpl, field))
    tmeta = as_dict(tmpl.get("metadata"))
    tspec = as_dict(tmpl.get("spec"))
    errs.extend(validate_labels(tmeta.get("labels"), f"{field}.template.labels"))
    errs.extend(validate_annotations(tmeta.get("annotations"), f"{field}.template.annotations"))
    errs.extend(validate_pod_annotations(tmeta.get("annotations"), tspec, f"{field}.template.annotations"))
    rp = tspec.get("restartPolicy")
    if rp != "Always":
        errs.append(not_supported(f"{field}.template.spec.restartPolicy", rp or "", ("Always",)))
    if tspec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden(f"{field}.template.spec.activeDeadlineSeconds",
                              "activeDeadlineSeconds in StatefulSet is not Supported"))
    return errs


def validate_template_for_selector(spec: JsonDict, field: str) -> list[JsonDict]:
    """ValidatePodTemplateSpecForReplicaSet: template required, labels matched by the selector,
    restartPolicy Always, no activeDeadlineSeconds."""
    errs: list[JsonDict] = []
    sel = spec.get("selector")
    tmpl = spec.get("template")
    if tmpl is None:
        tmpl = {}  # the zero PodTemplateSpec
    if not isinstance(tmpl, dict):
        return [type_invalid(f"{field}.template", tmpl, "must be an object")]
    if isinstance(sel, dict) and not selector_is_empty(sel):
        errs.extend(selector_template_mismatch(sel, tmpl, field))
    errs.extend(validate_pod_template_spec(tmpl, f"{field}.template"))
    tspec = as_dict(tmpl.get("spec"))
    rp = tspec.get("restartPolicy")
    if rp and rp != "Always":
        errs.append(not_supported(f"{field}.template.spec.restartPolicy", rp, ("Always",)))
    if tspec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden(f"{field}.template.spec.activeDeadlineSeconds",
                              "activeDeadlineSeconds in ReplicaSet is not Supported"))
    return errs


class PodTemplateStrategy(Strategy):
    """core/v1 PodTemplate (pkg/registry/core/podtemplate): the template's pod spec defaulted
    as a pod's; ValidatePodTemplate (its metadata, labels and pod spec; no ephemeral
    containers); metadata.generation 1 on create and one more whenever the template changes."""

    kind = "PodTemplate"
    tracks_generation = True

    def _default(self, obj: JsonDict) -> None:
        default_template(obj)

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        tmpl = obj.get("template")
        if tmpl is None:
            tmpl = {}  # the zero PodTemplateSpec
        if not isinstance(tmpl, dict):
            return [type_invalid("template", tmpl, "must be an object")]
        return validate_pod_template_spec(tmpl, "template")

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        """podTemplateStrategy.WarningsOnCreate: the template's warnings under `template`."""
        return get_warnings_for_pod_template("template", obj.get("template"))

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        """WarningsOnUpdate: the template's warnings when the template changed (the generation)."""
        if _generation(new) == _generation(old):
            return []
        return get_warnings_for_pod_template("template", new.get("template"), old.get("template"))


def _validate_selector(spec: JsonDict, field: str, what: str) -> list[JsonDict]:
    sel = spec.get("selector")
    if sel is None:
        return [required(f"{field}.selector", "")]
    errs = validate_label_selector(sel, f"{field}.selector")
    if isinstance(sel, dict) and selector_is_empty(sel):
        errs.append(invalid(f"{field}.selector", _selector_repr(sel), f"empty selector is invalid for {what}"))
    return errs


def _immutable_selector(new: JsonDict, old: JsonDict) -> list[JsonDict]:
    ns, os_ = as_dict(new.get("spec")).get("selector"), as_dict(old.get("spec")).get("selector")
    if ns != os_:
        return [invalid("spec.selector", _selector_repr(ns), "field is immutable")]
    return []


class DeploymentStrategy(Strategy):
    kind = "Deployment"
    group = "apps"
    has_status = True
    tracks_generation = True

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        strat = spec.get("strategy")
        if not isinstance(strat, dict):
            strat = {}
            spec["strategy"] = strat
        if not strat.get("type"):
            strat["type"] = "RollingUpdate"
        if strat["type"] == "RollingUpdate":
            ru = strat.get("rollingUpdate")
            if not isinstance(ru, dict):
                ru = {}
                strat["rollingUpdate"] = ru
            if ru.get("maxUnavailable") is None:
                ru["maxUnavailable"] = "25%"
            if ru.get("maxSurge") is None:
                ru["maxSurge"] = "25%"
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        if spec.get("progressDeadlineSeconds") is None:
            spec["progressDeadlineSeconds"] = 600
        default_template(spec)

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj["status"] = {}

    def _spec_changed(self, new: JsonDict, old: JsonDict) -> bool:
        # annotations are copied to the ReplicaSets, so they bump the generation too
        return new.get("spec") != old.get("spec") or (new.get("metadata") or {}).get("annotations") != (
            old.get("metadata") or {}
        ).get("annotations")

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec", "")] if spec is None else [type_invalid("spec", spec, "must be an object")]
        errs = validate_nonnegative(spec.get("replicas"), "spec.replicas")
        errs.extend(_validate_selector(spec, "spec", "deployment"))
        errs.extend(validate_template_for_selector(spec, "spec"))
        strat = as_dict(spec.get("strategy"))
        stype = strat.get("type")
        if stype not in STRATEGY_TYPES:
            if not stype:
                errs.append(required("spec.strategy.type", ""))
            else:
                errs.append(not_supported("spec.strategy.type", stype, STRATEGY_TYPES))
        ru = strat.get("rollingUpdate")
        if stype == "Recreate" and ru is not None:
            errs.append(forbidden("spec.strategy.rollingUpdate",
                                  "may not be specified when strategy `type` is 'Recreate'"))
        elif stype == "RollingUpdate" and isinstance(ru, dict):
            mu, ms = ru.get("maxUnavailable"), ru.get("maxSurge")
            errs.extend(validate_int_or_percent(mu, "spec.strategy.rollingUpdate.maxUnavailable", max_100_percent=True))
            errs.extend(validate_int_or_percent(ms, "spec.strategy.rollingUpdate.maxSurge"))
            if int_or_percent_is_zero(mu) and int_or_percent_is_zero(ms):
                errs.append(invalid("spec.strategy.rollingUpdate.maxUnavailable", mu,
                                    "may not be 0 when `maxSurge` is 0"))
        errs.extend(validate_nonnegative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit"))
        mrs = spec.get("minReadySeconds")
        errs.extend(validate_nonnegative(mrs, "spec.minReadySeconds"))
        pds = spec.get("progressDeadlineSeconds")
        if pds is not None:
            perrs = validate_nonnegative(pds, "spec.progressDeadlineSeconds")
            errs.extend(perrs)
            if not perrs and isinstance(mrs, int) and pds <= mrs:
                errs.append(invalid("spec.progressDeadlineSeconds", pds, "must be greater than minReadySeconds"))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return _immutable_selector(new, old)

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        """deploymentStrategy.WarningsOnCreate."""
        return _workload_warnings_on_create(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        """deploymentStrategy.WarningsOnUpdate."""
        return _template_warnings_on_update(new, old)

    def _status_reset_meta(self) -> tuple[str, ...]:
        # deploymentStatusStrategy resets only spec and metadata.labels: the controller records
        # `deployment.kubernetes.io/revision` through UpdateStatus, without bumping the generation
        return DEPLOYMENT_STATUS_RESET_META

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return super().validate_status_update(new, old) + validate_replica_status(new.get("status"))


# rest.BeforeUpdate keeps generation (and selfLink is never user-set); the rest is per strategy
DEPLOYMENT_STATUS_RESET_META = ("generation", "selfLink", "labels")
REPLICASET_STATUS_RESET_META = ("generation", "selfLink")


def validate_replica_status(status: Any) -> list[JsonDict]:
    status = as_dict(status)
    errs: list[JsonDict] = []
    for key in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas",
                "fullyLabeledReplicas", "observedGeneration", "terminatingReplicas"):
        errs.extend(validate_nonnegative(status.get(key), f"status.{key}"))
    ready, avail = status.get("readyReplicas"), status.get("availableReplicas")
    replicas = status.get("replicas")
    if isinstance(ready, int) and isinstance(replicas, int) and ready > replicas:
        errs.append(invalid("status.readyReplicas", ready, "cannot be greater than status.replicas"))
    if isinstance(avail, int) and isinstance(ready, int) and avail > ready and "fullyLabeledReplicas" in status:
        errs.append(invalid("status.availableReplicas", avail, "cannot be greater than readyReplicas"))
    return errs


class ReplicaSetStrategy(Strategy):
    kind = "ReplicaSet"
    group = "apps"
    has_status = True
    tracks_generation = True

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        default_template(spec)

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj["status"] = {"replicas": 0}

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec", "")] if spec is None else [type_invalid("spec", spec, "must be an object")]
        errs = validate_nonnegative(spec.get("replicas"), "spec.replicas")
        errs.extend(validate_nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds"))
        errs.extend(_validate_selector(spec, "spec", "deployment"))
        errs.extend(validate_template_for_selector(spec, "spec"))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return _immutable_selector(new, old)

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        """rsStrategy.WarningsOnCreate."""
        return _workload_warnings_on_create(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        """rsStrategy.WarningsOnUpdate."""
        return _template_warnings_on_update(new, old)

    def _status_reset_meta(self) -> tuple[str, ...]:
        # rsStatusStrategy resets only spec (metadata changes through status are kept)
        return REPLICASET_STATUS_RESET_META

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return super().validate_status_update(new, old) + validate_replica_status(new.get("status"))





# --------------------------------------------------------------------------- StatefulSet / DaemonSet
# Upstream pkg/apis/apps/v1/defaults.go SetDefaults_StatefulSet / SetDefaults_DaemonSet and
# pkg/apis/apps/validation ValidateStatefulSet / ValidateDaemonSet.

STS_POLICIES = ("OrderedReady", "Parallel")
STS_UPDATE_TYPES = ("RollingUpdate", "OnDelete")
PVC_RETENTION = ("Retain", "Delete")


def _default_claim_template(claim: Any) -> None:
    if not isinstance(claim, dict):
        return
    cspec = claim.setdefault("spec", {})
    if isinstance(cspec, dict):
        cspec.setdefault("volumeMode", "Filesystem")
    st = claim.setdefault("status", {})
    if isinstance(st, dict):
        st.setdefault("phase", "Pending")


def _default_rolling_update(spec: JsonDict, **rolling: Any) -> None:
    """`spec.updateStrategy` defaulted as StatefulSet/DaemonSet v1 do: type RollingUpdate, and
    for that type the given `rollingUpdate` fields where unset (null counts as unset)."""
    us = spec.get("updateStrategy")
    if not isinstance(us, dict):
        us = spec["updateStrategy"] = {}
    if not us.get("type"):
        us["type"] = "RollingUpdate"
    if us["type"] == "RollingUpdate":
        ru = us.get("rollingUpdate")
        if not isinstance(ru, dict):
            ru = us["rollingUpdate"] = {}
        for key, value in rolling.items():
            if ru.get(key) is None:
                ru[key] = value


class StatefulSetStrategy(Strategy):
    kind = "StatefulSet"
    group = "apps"
    has_status = True
    tracks_generation = True

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        if not spec.get("podManagementPolicy"):
            spec["podManagementPolicy"] = "OrderedReady"
        _default_rolling_update(spec, partition=0)
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        pol = spec.get("persistentVolumeClaimRetentionPolicy")
        if not isinstance(pol, dict):
            pol = spec["persistentVolumeClaimRetentionPolicy"] = {}
        pol.setdefault("whenDeleted", "Retain")
        pol.setdefault("whenScaled", "Retain")
        for c in spec.get("volumeClaimTemplates") or []:
            _default_claim_template(c)
        default_template(spec)

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj["status"] = {"replicas": 0, "availableReplicas": 0}

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec", "")] if spec is None else [type_invalid("spec", spec, "must be an object")]
        errs = validate_nonnegative(spec.get("replicas"), "spec.replicas")
        errs.extend(validate_nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds"))
        errs.extend(validate_nonnegative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit"))
        errs.extend(_validate_selector(spec, "spec", "statefulset"))
        errs.extend(validate_template_for_statefulset(spec, "spec"))
        pmp = spec.get("podManagementPolicy")
        if pmp not in STS_POLICIES:
            errs.append(not_supported("spec.podManagementPolicy", pmp, STS_POLICIES))
        us = as_dict(spec.get("updateStrategy"))
        ut = us.get("type")
        if ut not in STS_UPDATE_TYPES:
            errs.append(not_supported("spec.updateStrategy.type", ut, STS_UPDATE_TYPES))
        if ut == "OnDelete" and us.get("rollingUpdate") is not None:
            errs.append(invalid("spec.updateStrategy.rollingUpdate", us.get("rollingUpdate"),
                                "only allowed for updateStrategy 'RollingUpdate'"))
        if ut == "RollingUpdate":
            errs.extend(validate_nonnegative(as_dict(us.get("rollingUpdate")).get("partition"),
                                             "spec.updateStrategy.rollingUpdate.partition"))
        pol = as_dict(spec.get("persistentVolumeClaimRetentionPolicy"))
        for k in ("whenDeleted", "whenScaled"):
            if pol.get(k) not in PVC_RETENTION:
                errs.append(not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{k}", pol.get(k),
                                          PVC_RETENTION))
        ords = spec.get("ordinals")
        if ords is not None:
            errs.extend(validate_nonnegative(as_dict(ords).get("start"), "spec.ordinals.start"))
        for i, c in enumerate(spec.get("volumeClaimTemplates") or []):
            if not as_dict(as_dict(c).get("metadata")).get("name"):
                errs.append(required(f"spec.volumeClaimTemplates[{i}].metadata.name", "name or generateName is required"))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        mutable = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                   "minReadySeconds", "revisionHistoryLimit")
        ns, os_ = as_dict(new.get("spec")), as_dict(old.get("spec"))
        rest_new = {k: v for k, v in ns.items() if k not in mutable}
        rest_old = {k: v for k, v in os_.items() if k not in mutable}
        if rest_new != rest_old:
            return [forbidden("spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                                      "'template', 'updateStrategy', 'revisionHistoryLimit', "
                                      "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")]
        return []

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        """statefulSetStrategy.WarningsOnCreate: the template, each volumeClaimTemplate's
        quantities (paths `spec.volumeClaimTemplates[i]`, without `.spec`, as upstream), a
        negative revisionHistoryLimit. No name warning."""
        return _template_warnings(obj) + _statefulset_warnings(obj, "")

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        """statefulSetStrategy.WarningsOnUpdate: the template when the generation changed, then
        the claim templates (paths `spec.volumeClaimTemplates[i].Spec`, as upstream) and the
        revisionHistoryLimit whatever changed."""
        warnings = _template_warnings(new, old) if _generation(new) != _generation(old) else []
        return warnings + _statefulset_warnings(new, ".Spec")

    def _status_reset_meta(self) -> tuple[str, ...]:
        return REPLICASET_STATUS_RESET_META


TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"


def _template_generation(obj: JsonDict) -> int:
    """A DaemonSet's spec.templateGeneration as the v1 conversion reads it (0 when absent or not
    a number)."""
    raw = as_dict(as_dict(obj.get("metadata")).get("annotations")).get(TEMPLATE_GENERATION_ANNOTATION)
    try:
        return int(str(raw)) if raw is not None else 0
    except ValueError:
        return 0


def _set_template_generation(obj: JsonDict, gen: int) -> None:
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta.get("annotations"), dict):
        meta["annotations"] = {}
    meta["annotations"][TEMPLATE_GENERATION_ANNOTATION] = str(gen)


def _statefulset_warnings(obj: JsonDict, claim_segment: str) -> list[str]:
    """The claim templates' fractional storage and a negative revisionHistoryLimit."""
    spec = as_dict(obj.get("spec"))
    warnings: list[str] = []
    for i, claim in enumerate(spec.get("volumeClaimTemplates") or []):
        warnings.extend(warnings_for_pvc_spec(f"spec.volumeClaimTemplates[{i}]{claim_segment}",
                                              as_dict(claim).get("spec")))
    limit = spec.get("revisionHistoryLimit")
    if isinstance(limit, int) and limit < 0:
        warnings.append("spec.revisionHistoryLimit: a negative value retains all historical revisions; "
                        "a value >= 0 is recommended")
    return warnings


class DaemonSetStrategy(Strategy):
    kind = "DaemonSet"
    group = "apps"
    has_status = True
    tracks_generation = True

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        _default_rolling_update(spec, maxUnavailable=1, maxSurge=0)
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        default_template(spec)

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj["status"] = {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                         "numberReady": 0}

    def prepare_for_create(self, obj: JsonDict) -> None:
        """spec.templateGeneration starts at 1, shown in v1 as the
        `deprecated.daemonset.template.generation` annotation (whatever the body said)."""
        super().prepare_for_create(obj)
        _set_template_generation(obj, 1)

    def _prepare_for_update(self, new: JsonDict, old: JsonDict) -> None:
        """The template generation is the stored one, plus one when the template changed (an
        update cannot set it)."""
        gen = _template_generation(old)
        if as_dict(new.get("spec")).get("template") != as_dict(old.get("spec")).get("template"):
            gen += 1
        _set_template_generation(new, gen)

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec", "")] if spec is None else [type_invalid("spec", spec, "must be an object")]
        errs = _validate_selector(spec, "spec", "daemonset")
        errs.extend(validate_template_for_selector(spec, "spec"))
        errs.extend(validate_nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds"))
        errs.extend(validate_nonnegative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit"))
        us = as_dict(spec.get("updateStrategy"))
        ut = us.get("type")
        if ut not in STS_UPDATE_TYPES:
            errs.append(not_supported("spec.updateStrategy.type", ut, STS_UPDATE_TYPES))
        if ut == "RollingUpdate":
            ru = as_dict(us.get("rollingUpdate"))
            mu, ms = ru.get("maxUnavailable"), ru.get("maxSurge")
            errs.extend(validate_int_or_percent(mu, "spec.updateStrategy.rollingUpdate.maxUnavailable",
                                                max_100_percent=True))
            errs.extend(validate_int_or_percent(ms, "spec.updateStrategy.rollingUpdate.maxSurge",
                                                max_100_percent=True))
            if int_or_percent_is_zero(mu) and int_or_percent_is_zero(ms):
                errs.append(invalid("spec.updateStrategy.rollingUpdate.maxUnavailable", mu,
                                    "may not be 0 when `maxSurge` is 0"))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return _immutable_selector(new, old)

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        """daemonSetStrategy.WarningsOnCreate: the template (no name warning)."""
        return _template_warnings(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        """daemonSetStrategy.WarningsOnUpdate: the template, when its templateGeneration moved."""
        if _template_generation(new) == _template_generation(old):
            return []
        return _template_warnings(new, old)

    def _status_reset_meta(self) -> tuple[str, ...]:
        return REPLICASET_STATUS_RESET_META


class ReplicationControllerStrategy(Strategy):
    """core/v1 ReplicationController: SetDefaults_ReplicationController (selector and object
    labels default to the template's labels; replicas 1) and ValidateReplicationController
    (an equality selector map, required, matching the template labels)."""

    kind = "ReplicationController"
    group = ""
    has_status = True
    tracks_generation = True

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        tmpl = spec.get("template")
        labels = as_dict(as_dict(tmpl).get("metadata")).get("labels") if isinstance(tmpl, dict) else None
        if isinstance(labels, dict) and labels:
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            m = obj.get("metadata")
            if isinstance(m, dict) and not m.get("labels"):
                m["labels"] = dict(labels)
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        default_template(spec)

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj["status"] = {"replicas": 0}

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec", "")] if spec is None else [type_invalid("spec", spec, "must be an object")]
        errs = validate_nonnegative(spec.get("replicas"), "spec.replicas")
        errs.extend(validate_nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds"))
        sel = spec.get("selector")
        if not sel:
            errs.append(required("spec.selector", ""))
        elif not isinstance(sel, dict):
            errs.append(type_invalid("spec.selector", sel, "must be a map of strings"))
        else:
            errs.extend(validate_labels(sel, "spec.selector"))
        tmpl = spec.get("template")
        if tmpl is None:
            errs.append(required("spec.template", ""))
            return errs
        tlabels = as_dict(as_dict(tmpl).get("metadata")).get("labels") or {}
        if isinstance(sel, dict) and sel and not all(
                isinstance(tlabels, dict) and tlabels.get(k) == v for k, v in sel.items()):
            errs.append(invalid("spec.template.metadata.labels", tlabels or NilMap(),
                                "selector does not match template labels"))
        errs.extend(e for e in validate_template_for_selector({"template": tmpl}, "spec"))
        return errs

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        """rcStrategy.WarningsOnCreate."""
        return _workload_warnings_on_create(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        """rcStrategy.WarningsOnUpdate: when the generation changed, the warnings of the OLD
        template (upstream passes the templates swapped)."""
        if _generation(new) == _generation(old):
            return []
        return get_warnings_for_pod_template("spec.template", as_dict(old.get("spec")).get("template"),
                                             as_dict(new.get("spec")).get("template"))

    def _status_reset_meta(self) -> tuple[str, ...]:
        return REPLICASET_STATUS_RESET_META

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return super().validate_status_update(new, old) + validate_replica_status(new.get("status"))
