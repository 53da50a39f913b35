"""Pod strategy: status reset, QoS, spec immutability (layer L4, apiserver).

Why: upstream pkg/registry/core/pod/strategy.go resets status on create (phase Pending, QoS
class computed from requests/limits), keeps the spec nearly immutable on update
(ValidatePodUpdate: only images, activeDeadlineSeconds, added tolerations,
terminationGracePeriodSeconds and removal of scheduling gates may change), and lets the
status subresource change only status. A create warns (WarningsOnCreate: a name that is no DNS
label, pod_warnings.get_warnings_for_pod) and turns deprecated AppArmor annotations into fields
(applyAppArmorVersionSkew), which warns too; updates never warn.

Data flow: handlers -> PodStrategy -> podspec helpers (defaulting/validation), pod_warnings.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, ClassVar

from minik3s.api.options import DeleteOptions
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    duplicate,
    forbidden,
    go_value,
    invalid,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    required,
    validate_object_meta,
)
from minik3s.utils.clock import rfc3339

from .base import Strategy, as_dict, as_list
from .pod_resize import PodResizeREST
from .pod_rest import POD_SUBRESOURCES
from .pod_warnings import dns_label_name_warning, get_warnings_for_pod
from .podspec import (
    POD_OPTIONS,
    PodSpecOptions,
    default_pod_spec,
    qos_class,
    validate_containers_only_for_pod,
    validate_pod_spec,
    validate_tolerations,
)
from .rest import Subresource
from .volume_validation import has_non_local_projected_token_path

# upstream DefaultTerminationGracePeriodSeconds
POD_DEFAULT_GRACE = 30

POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
    "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
    "(allow it to be set to 1 if it was previously negative)"
)


# the AppArmor deprecation warnings applyAppArmorVersionSkew found while preparing the pod being
# created (upstream adds them to the request's warnings from PrepareForCreate); the request core
# prepares, validates and then asks for warnings within one task, so the prepared pod's warnings
# are still here when `warnings_on_create` runs
_APPARMOR_SKEW_WARNINGS: ContextVar[tuple[str, ...]] = ContextVar("apparmor_skew_warnings", default=())


def _resized_pod_errors(new: JsonDict, old: JsonDict) -> list[JsonDict]:
    """validatePodMetadataAndSpec of a resized pod (ValidatePodResize's first part), with the
    update options of the stored pod."""
    strategy = PodStrategy()
    errs = validate_object_meta(new.get("metadata"), name_format=strategy.name_format)
    errs.extend(strategy._pod_errors(new, update_options(as_dict(old.get("spec")))))
    return errs


class PodStrategy(Strategy):
    kind = "Pod"
    has_status = True
    tracks_generation = True
    return_deleted_object = True
    subresources: ClassVar[Mapping[str, Subresource]] = MappingProxyType(
        {**POD_SUBRESOURCES, "resize": PodResizeREST(_resized_pod_errors)})

    def graceful_delete_seconds(self, obj: JsonDict, options: DeleteOptions) -> int | None:
        """Upstream podStrategy.CheckGracefulDelete: the request's gracePeriodSeconds, else the
        pod's terminationGracePeriodSeconds, else 30; 0 for a pod that never ran on a node or
        has finished (nothing to stop)."""
        spec = as_dict(obj.get("spec"))
        phase = as_dict(obj.get("status")).get("phase")
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        if options.grace_period_seconds is not None:
            return max(0, options.grace_period_seconds)
        tg = spec.get("terminationGracePeriodSeconds")
        return int(tg) if tg is not None else POD_DEFAULT_GRACE

    def _default(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if spec is None:
            return
        default_pod_spec(spec)

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            tgps = spec.get("terminationGracePeriodSeconds")
            if isinstance(tgps, int) and tgps < 0:
                spec["terminationGracePeriodSeconds"] = 1
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}
        if isinstance(spec, dict) and spec.get("schedulingGates"):
            # upstream applySchedulingGatedCondition (pkg/registry/core/pod/strategy.go). The
            # request core stamps creationTimestamp from its injected clock just before this
            # (the same instant, at the seconds both are written in); a caller of the strategy
            # alone, without one, gets the wall clock
            stamp = (obj.get("metadata") or {}).get("creationTimestamp")
            obj["status"]["conditions"] = [{
                "type": "PodScheduled", "status": "False", "lastProbeTime": None,
                "lastTransitionTime": stamp if isinstance(stamp, str) and stamp else rfc3339(datetime.now(UTC)),
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates"}]

    def prepare_for_create(self, obj: JsonDict) -> None:
        super().prepare_for_create(obj)
        _APPARMOR_SKEW_WARNINGS.set(tuple(apply_apparmor_version_skew(obj)))

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        """podStrategy.WarningsOnCreate: the AppArmor annotations PrepareForCreate turned into
        fields, a name that is no DNS label (it becomes the hostname), GetWarningsForPod."""
        warnings = list(_APPARMOR_SKEW_WARNINGS.get())
        _APPARMOR_SKEW_WARNINGS.set(())
        warnings.extend(dns_label_name_warning(obj, "this is used in the Pod's hostname"))
        warnings.extend(get_warnings_for_pod(obj))
        return warnings

    # WarningsOnUpdate: none (pods are updated often, mostly by controllers), as upstream

    def prepare_for_update(self, new: JsonDict, old: JsonDict) -> None:
        super().prepare_for_update(new, old)
        # qosClass is computed once, at creation
        old_q = (old.get("status") or {}).get("qosClass")
        if old_q and isinstance(new.get("status"), dict):
            new["status"]["qosClass"] = old_q

    def _status_reset_meta(self) -> tuple[str, ...]:
        # the pods/status endpoint may change labels/annotations (kubelet mirror pods) but
        # never ownerReferences or deletionTimestamp
        return ("deletionTimestamp", "ownerReferences", "generation")

    def prepare_for_status_update(self, new: JsonDict, old: JsonDict) -> None:
        super().prepare_for_status_update(new, old)
        old_status = old.get("status") or {}
        status = new.get("status")
        if isinstance(status, dict):
            if old_status.get("qosClass"):
                status["qosClass"] = old_status["qosClass"]
            # KEP-5067: clearing observedGeneration keeps the previous value
            if not status.get("observedGeneration") and old_status.get("observedGeneration"):
                status["observedGeneration"] = old_status["observedGeneration"]

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        return self._pod_errors(obj, POD_OPTIONS)

    def _pod_errors(self, obj: JsonDict, opts: PodSpecOptions) -> list[JsonDict]:
        """validatePodMetadataAndSpec after the object meta: the pod's annotations, its spec,
        token projections beside a service account, images without surrounding whitespace."""
        spec = obj.get("spec")
        if spec is None:
            # a missing spec decodes as the zero PodSpec, which defaulting fills
            spec = {}
            default_pod_spec(spec)
        errs = validate_pod_annotations(as_dict(obj.get("metadata")).get("annotations"), as_dict(spec))
        name = as_dict(obj.get("metadata")).get("name")
        errs.extend(validate_pod_spec(spec, "spec", opts, pod_name=name if isinstance(name, str) else ""))
        if isinstance(spec, dict):
            if not spec.get("serviceAccountName"):
                for vi, volume in enumerate(as_list(spec.get("volumes"))):
                    projected = as_dict(volume).get("projected") if isinstance(volume, dict) else None
                    for si, source in enumerate(as_list(as_dict(projected).get("sources"))):
                        if isinstance(source, dict) and source.get("serviceAccountToken") is not None:
                            errs.append(forbidden(f"spec.volumes[{vi}].projected.sources[{si}].serviceAccountToken",
                                                  "must not be specified when serviceAccountName is not set"))
            errs.extend(validate_containers_only_for_pod(spec))
        return errs

    def validate(self, obj: JsonDict) -> list[JsonDict]:
        """ValidatePodCreate: the pod rules plus "no ephemeral containers", "no nodeName while
        gated" and seccomp/AppArmor fields agreeing with their annotations."""
        errs = super().validate(obj)
        spec = as_dict(obj.get("spec"))
        if spec.get("ephemeralContainers"):
            errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
        if spec.get("nodeName") and spec.get("schedulingGates"):
            errs.append(forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
        annotations = as_dict(as_dict(obj.get("metadata")).get("annotations"))
        errs.extend(_seccomp_fields_match_annotations(annotations, spec))
        errs.extend(_apparmor_fields_match_annotations(annotations, spec))
        return errs

    def validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        """ValidatePodUpdate: the pod rules (relaxed where the old pod already broke them), the
        annotation rules of updates, then what of the spec may change."""
        errs = validate_object_meta(new.get("metadata"), name_format=self.name_format)
        errs.extend(self._pod_errors(new, update_options(as_dict(old.get("spec")))))
        errs.extend(validate_pod_annotation_updates(as_dict(new.get("metadata")).get("annotations"),
                                                    as_dict(old.get("metadata")).get("annotations")))
        errs.extend(self._validate_update(new, old))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return validate_pod_update(as_dict(new.get("spec")), as_dict(old.get("spec")))

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        """ValidatePodStatusUpdate: nodeName and qosClass kept, a changed nominatedNodeName a
        node name, custom condition types qualified names, no terminated container running
        again unless the pod (or a sidecar) restarts it."""
        errs = super().validate_status_update(new, old)
        errs.extend(validate_pod_annotation_updates(as_dict(new.get("metadata")).get("annotations"),
                                                    as_dict(old.get("metadata")).get("annotations")))
        status, old_status = as_dict(new.get("status")), as_dict(old.get("status"))
        new_spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
        for i, c in enumerate(as_list(status.get("conditions"))):
            ctype = c.get("type") if isinstance(c, dict) else None
            if ctype in ("PodScheduled", "Ready", "Initialized"):
                continue
            # upstream's path for these is metadata.conditions[i].Type (sic)
            if not isinstance(ctype, str):
                errs.append(required(f"status.conditions[{i}].type", ""))
                continue
            errs.extend(invalid(f"metadata.conditions[{i}].Type", ctype, m) for m in is_qualified_name(ctype))
        if (new_spec.get("nodeName") or "") != (old_spec.get("nodeName") or ""):
            errs.append(forbidden("status.nodeName", "may not be changed directly"))
        nnn = status.get("nominatedNodeName")
        if nnn and nnn != old_status.get("nominatedNodeName"):
            errs.extend(invalid("status.nominatedNodeName", nnn, m) for m in is_dns1123_subdomain(str(nnn)))
        if (status.get("qosClass") or "") != (old_status.get("qosClass") or ""):
            errs.append(invalid("status.qosClass", status.get("qosClass") or "", "field is immutable"))
        restart = old_spec.get("restartPolicy") or ""
        errs.extend(_state_transitions(status.get("containerStatuses"), old_status.get("containerStatuses"),
                                       "status.containerStatuses", restart))
        errs.extend(_state_transitions(status.get("initContainerStatuses"), old_status.get("initContainerStatuses"),
                                       "status.initContainerStatuses", restart,
                                       sidecars=_sidecar_names(old_spec)))
        errs.extend(_state_transitions(status.get("ephemeralContainerStatuses"),
                                       old_status.get("ephemeralContainerStatuses"),
                                       "status.ephemeralContainerStatuses", "Never"))
        errs.extend(_resource_claim_statuses(status.get("resourceClaimStatuses"), new_spec.get("resourceClaims")))
        return errs


def _resource_claim_statuses(statuses: Any, claims: Any) -> list[JsonDict]:
    """validatePodResourceClaimStatuses: each names an entry of spec.resourceClaims, once, and a
    generated claim name is an object name."""
    names = {as_dict(c).get("name") for c in as_list(claims)}
    seen: set[Any] = set()
    errs: list[JsonDict] = []
    for i, st in enumerate(as_list(statuses)):
        st = as_dict(st)
        name, path = st.get("name"), f"status.resourceClaimStatuses[{i}].name"
        if name not in names:
            errs.append(invalid(path, name or "", "must match the name of an entry in `spec.resourceClaims`"))
        if name in seen:
            errs.append(duplicate(path, name))
        seen.add(name)
        claim = st.get("resourceClaimName")
        if claim is not None:
            errs.extend(invalid(path, claim, m) for m in is_dns1123_subdomain(str(claim)))
    return errs


def _sidecar_names(spec: JsonDict) -> set[Any]:
    return {c.get("name") for c in as_list(spec.get("initContainers"))
            if isinstance(c, dict) and c.get("restartPolicy") == "Always"}


def _state_transitions(new: Any, old: Any, field: str, restart_policy: str,
                       sidecars: set[Any] | None = None) -> list[JsonDict]:
    """ValidateContainerStateTransition / ValidateInitContainerStateTransition: a terminated
    container stays terminated unless the pod always restarts it (or restarts failed ones on
    OnFailure, or it is a sidecar)."""
    if restart_policy == "Always":
        return []
    errs: list[JsonDict] = []
    for i, os_ in enumerate(as_list(old)):
        terminated = as_dict(as_dict(os_).get("state")).get("terminated")
        if terminated is None:
            continue
        if as_dict(terminated).get("exitCode", 0) != 0 and restart_policy == "OnFailure":
            continue
        name = as_dict(os_).get("name")
        if sidecars and name in sidecars:
            continue
        for ns in as_list(new):
            if as_dict(ns).get("name") == name and as_dict(as_dict(ns).get("state")).get("terminated") is None:
                errs.append(forbidden(f"{field}[{i}].state", "may not be transitioned to non-terminated state"))
    return errs


MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"
APPARMOR_CONTAINER_PREFIX = "container.apparmor.security.beta.kubernetes.io/"


def _valid_deletion_cost(value: str) -> bool:
    """GetDeletionCostFromPodAnnotations: a 32-bit integer without '+' or leading zeros."""
    if not value or not (value[0] == "-" or value == "0" or "1" <= value[0] <= "9"):
        return False
    try:
        number = int(value, 10)
    except ValueError:
        return False
    return -(2**31) <= number < 2**31 and value.lstrip("-").isdigit()


def _seccomp_profile_annotation(value: str, field: str) -> list[JsonDict]:
    """ValidateSeccompProfile (annotation form)."""
    if value in ("runtime/default", "docker/default", "unconfined"):
        return []
    if value.startswith("localhost/"):
        target = value[len("localhost/"):]
        errs: list[JsonDict] = []
        if target.startswith("/"):
            errs.append(invalid(field, target, "must be a relative path"))
        if ".." in target.split("/"):
            errs.append(invalid(field, target, "must not contain '..'"))
        return errs
    return [invalid(field, value, "must be a valid seccomp profile")]


def _containers(spec: JsonDict) -> list[tuple[JsonDict, str]]:
    """VisitContainersWithPath: init, regular, then ephemeral containers with their paths."""
    out: list[tuple[JsonDict, str]] = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for i, c in enumerate(as_list(spec.get(key))):
            if isinstance(c, dict):
                out.append((c, f"spec.{key}[{i}]"))
    return out


def validate_pod_annotations(annotations: Any, spec: JsonDict, field: str = "metadata.annotations") -> list[JsonDict]:
    """ValidatePodSpecificAnnotations at `field`: a mirror pod names its node, a
    pod-deletion-cost is a 32-bit integer, seccomp annotations name profiles, AppArmor
    annotations name a container of the pod and a profile."""
    annotations = as_dict(annotations)
    errs: list[JsonDict] = []
    if MIRROR_POD_ANNOTATION in annotations and not spec.get("nodeName"):
        errs.append(invalid(f"{field}[{MIRROR_POD_ANNOTATION}]", annotations[MIRROR_POD_ANNOTATION],
                            "must set spec.nodeName if mirror pod annotation is set"))
    if DELETION_COST_ANNOTATION in annotations and not _valid_deletion_cost(str(annotations[DELETION_COST_ANNOTATION])):
        errs.append(invalid(f"{field}[{DELETION_COST_ANNOTATION}]", annotations[DELETION_COST_ANNOTATION],
                            "must be a 32bit integer"))
    if SECCOMP_POD_ANNOTATION in annotations:
        errs.extend(_seccomp_profile_annotation(str(annotations[SECCOMP_POD_ANNOTATION]),
                                                f"{field}.{SECCOMP_POD_ANNOTATION}"))
    for key, value in annotations.items():
        if key.startswith(SECCOMP_CONTAINER_PREFIX):
            errs.extend(_seccomp_profile_annotation(str(value), f"{field}.{key}"))
    names = {c.get("name") for c, _ in _containers(spec)}
    for key, value in annotations.items():
        if not key.startswith(APPARMOR_CONTAINER_PREFIX):
            continue
        container = key[len(APPARMOR_CONTAINER_PREFIX):]
        if container not in names:
            errs.append(invalid(f"{field}[{key}]", container, "container not found"))
        if value not in ("", "runtime/default", "unconfined") and not str(value).startswith("localhost/"):
            errs.append(invalid(f"{field}[{key}]", value, f"invalid AppArmor profile name: {go_value(value)}"))
    return errs


def validate_pod_annotation_updates(new: Any, old: Any) -> list[JsonDict]:
    """ValidatePodSpecificAnnotationUpdates: the mirror-pod and AppArmor annotations never change."""
    new, old = as_dict(new), as_dict(old)
    errs: list[JsonDict] = []
    for key, value in old.items():
        if key in new and new[key] == value:
            continue
        if key.startswith(APPARMOR_CONTAINER_PREFIX):
            errs.append(forbidden(f"metadata.annotations[{key}]", "may not remove or update AppArmor annotations"))
        if key == MIRROR_POD_ANNOTATION:
            errs.append(forbidden(f"metadata.annotations[{key}]", "may not remove or update mirror pod annotation"))
    for key in new:
        if key in old:
            continue
        if key.startswith(APPARMOR_CONTAINER_PREFIX):
            errs.append(forbidden(f"metadata.annotations[{key}]", "may not add AppArmor annotations"))
        if key == MIRROR_POD_ANNOTATION:
            errs.append(forbidden(f"metadata.annotations[{key}]", "may not add mirror pod annotation"))
    return errs


def _seccomp_match(annotation: str, profile: JsonDict, field: str) -> list[JsonDict]:
    kind = profile.get("type")
    if kind == "Unconfined" and annotation != "unconfined":
        return [forbidden(f"{field}.type", "seccomp type in annotation and field must match")]
    if kind == "RuntimeDefault" and annotation not in ("runtime/default", "docker/default"):
        return [forbidden(f"{field}.type", "seccomp type in annotation and field must match")]
    if kind == "Localhost":
        if not annotation.startswith("localhost/"):
            return [forbidden(f"{field}.type", "seccomp type in annotation and field must match")]
        if profile.get("localhostProfile") != annotation[len("localhost/"):]:
            return [forbidden(f"{field}.localhostProfile", "seccomp profile in annotation and field must match")]
    return []


def _seccomp_fields_match_annotations(annotations: JsonDict, spec: JsonDict) -> list[JsonDict]:
    """validateSeccompAnnotationsAndFields: where a profile field and its annotation both exist."""
    errs: list[JsonDict] = []
    pod_profile = as_dict(spec.get("securityContext")).get("seccompProfile")
    if isinstance(pod_profile, dict) and SECCOMP_POD_ANNOTATION in annotations:
        errs.extend(_seccomp_match(str(annotations[SECCOMP_POD_ANNOTATION]), pod_profile,
                                   "spec.securityContext.seccompProfile"))
    for c, path in _containers(spec):
        profile = as_dict(c.get("securityContext")).get("seccompProfile")
        key = SECCOMP_CONTAINER_PREFIX + str(c.get("name"))
        if isinstance(profile, dict) and key in annotations:
            errs.extend(_seccomp_match(str(annotations[key]), profile, f"{path}.securityContext.seccompProfile"))
    return errs


def _apparmor_fields_match_annotations(annotations: JsonDict, spec: JsonDict) -> list[JsonDict]:
    """validateAppArmorAnnotationsAndFieldsMatchOnCreate (not for Windows pods)."""
    if as_dict(spec.get("os")).get("name") == "windows":
        return []
    errs: list[JsonDict] = []
    pod_profile = as_dict(spec.get("securityContext")).get("appArmorProfile")
    for c, path in _containers(spec):
        profile = as_dict(c.get("securityContext")).get("appArmorProfile") or pod_profile
        key = "container.apparmor.security.beta.kubernetes.io/" + str(c.get("name"))
        if not isinstance(profile, dict) or key not in annotations:
            continue
        annotation, kind, ap = str(annotations[key]), profile.get("type"), f"{path}.securityContext.appArmorProfile"
        if (kind == "Unconfined" and annotation != "unconfined") or \
                (kind == "RuntimeDefault" and annotation != "runtime/default") or \
                (kind == "Localhost" and not annotation.startswith("localhost/")):
            errs.append(forbidden(f"{ap}.type", "apparmor type in annotation and field must match"))
        elif kind == "Localhost" and profile.get("localhostProfile") != annotation[len("localhost/"):]:
            errs.append(forbidden(f"{ap}.localhostProfile", "apparmor profile in annotation and field must match"))
    return errs


def _apparmor_field_for_annotation(annotation: Any) -> JsonDict | None:
    """ApparmorFieldForAnnotation: the appArmorProfile a deprecated annotation value names, or
    None (an unknown value, or "localhost/" without a profile name)."""
    if annotation == "unconfined":
        return {"type": "Unconfined"}
    if annotation == "runtime/default":
        return {"type": "RuntimeDefault"}
    if isinstance(annotation, str) and annotation.startswith("localhost/") and annotation != "localhost/":
        profile = annotation[len("localhost/"):]
        # ValidateAppArmorProfileField: no surrounding whitespace, at most 4095 bytes
        if profile.strip() != profile or len(profile.encode()) > 4095:
            return None
        return {"type": "Localhost", "localhostProfile": profile}
    return None


def apply_apparmor_version_skew(pod: JsonDict) -> list[str]:
    """applyAppArmorVersionSkew (PrepareForCreate): each container with a deprecated AppArmor
    annotation and no appArmorProfile of its own gets the field the annotation names, unless
    that equals the pod's profile; the annotation then warns (as it does when it names no valid
    profile). Windows pods are left alone. Returns the warnings."""
    spec = pod.get("spec")
    annotations = as_dict(as_dict(pod.get("metadata")).get("annotations"))
    if not isinstance(spec, dict) or not annotations or as_dict(spec.get("os")).get("name") == "windows":
        return []
    pod_profile = as_dict(spec.get("securityContext")).get("appArmorProfile")
    pod_profile = {k: v for k, v in pod_profile.items() if v is not None} if isinstance(pod_profile, dict) else None
    warnings: list[str] = []
    for c, _ in _containers(spec):
        key = APPARMOR_CONTAINER_PREFIX + str(c.get("name") or "")
        if key not in annotations:
            continue
        sc = c.get("securityContext")
        if isinstance(sc, dict) and sc.get("appArmorProfile") is not None:
            continue
        field = _apparmor_field_for_annotation(annotations[key])
        warn = field is None
        if field is not None and field != pod_profile:
            if not isinstance(sc, dict):
                sc = {}
                c["securityContext"] = sc
            sc["appArmorProfile"] = field
            warn = True
        if warn:
            warnings.append(f'metadata.annotations[{key}]: deprecated since v1.30; use the "appArmorProfile" '
                            "field instead")
    return warnings


def _required_node_affinity_values_invalid(spec: JsonDict) -> bool:
    na = as_dict(as_dict(spec.get("affinity")).get("nodeAffinity"))
    for term in as_list(as_dict(na.get("requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms")):
        for rq in as_list(as_dict(term).get("matchExpressions")):
            if any(isinstance(v, str) and is_valid_label_value(v) for v in as_list(as_dict(rq).get("values"))):
                return True
    return False


def _affinity_selector_values_invalid(spec: JsonDict) -> bool:
    aff = as_dict(spec.get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = as_dict(aff.get(kind))
        terms = as_list(pa.get("requiredDuringSchedulingIgnoredDuringExecution"))
        terms += [as_dict(w).get("podAffinityTerm") for w in as_list(pa.get("preferredDuringSchedulingIgnoredDuringExecution"))]
        for term in terms:
            for key in ("labelSelector", "namespaceSelector"):
                for rq in as_list(as_dict(as_dict(term).get(key)).get("matchExpressions")):
                    if any(isinstance(v, str) and is_valid_label_value(v) for v in as_list(as_dict(rq).get("values"))):
                        return True
    return False


def _namespaced_sysctls_with_host_namespaces(spec: JsonDict) -> bool:
    for s in as_list(as_dict(spec.get("securityContext")).get("sysctls")):
        name = str(as_dict(s).get("name") or "")
        if spec.get("hostNetwork") is True and name.startswith("net."):
            return True
        if spec.get("hostIPC") is True and (name.startswith(("kernel.shm", "kernel.msg", "fs.mqueue.")) or name == "kernel.sem"):
            return True
    return False


def update_options(old: JsonDict) -> PodSpecOptions:
    """GetValidationOptionsFromPodSpecAndMeta on an update: what the old pod already holds stays
    allowed."""
    return POD_OPTIONS._replace(
        allow_invalid_node_affinity_values=_required_node_affinity_values_invalid(old),
        allow_invalid_selector_values=_affinity_selector_values_invalid(old),
        allow_namespaced_sysctls=_namespaced_sysctls_with_host_namespaces(old),
        allow_non_local_projected_token_path=has_non_local_projected_token_path(old.get("spec")),
    )


def _toleration_key(t: Any) -> tuple[str, str, str, str]:
    t = as_dict(t)
    return (t.get("key") or "", t.get("operator") or "", t.get("value") or "", t.get("effect") or "")


def _only_added_tolerations(new: list[Any], old: list[Any]) -> list[JsonDict]:
    """validateOnlyAddedTolerations: every old toleration is still there (its tolerationSeconds
    may change); then the new list is validated (again)."""
    keys = {_toleration_key(t) for t in new}
    for ot in old:
        if _toleration_key(ot) not in keys:
            return [forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds")]
    return validate_tolerations(new, "spec.tolerations")


def _normal(v: Any) -> Any:
    """A JSON value as apiequality.Semantic compares it: unset, null, empty lists and maps alike."""
    if isinstance(v, dict):
        out = {k: _normal(x) for k, x in v.items()}
        return {k: x for k, x in out.items() if x not in (None, [], {})}
    if isinstance(v, list):
        return [_normal(x) for x in v]
    return v


class _GoNilMap:
    def __str__(self) -> str:
        return "map[string]string(nil)"


def _node_selector_mutation(new: Any, old: Any) -> list[JsonDict]:
    """validateNodeSelectorMutation: a gated pod may only add node selector entries."""
    new_d = as_dict(new)
    for k, v in as_dict(old).items():
        if new_d.get(k) != v:
            return [invalid("spec.nodeSelector", new if isinstance(new, dict) else _GoNilMap(),
                            "only additions to spec.nodeSelector are allowed (no mutations or deletions)")]
    return []


def _term_only_additions(new: JsonDict, old: JsonDict) -> bool:
    """validateNodeSelectorTermHasOnlyAdditions."""
    old_exprs, old_fields = as_list(old.get("matchExpressions")), as_list(old.get("matchFields"))
    new_exprs, new_fields = as_list(new.get("matchExpressions")), as_list(new.get("matchFields"))
    if not old_exprs and not old_fields and (new_exprs or new_fields):
        return False
    for olds, news in ((old_exprs, new_exprs), (old_fields, new_fields)):
        if olds and (len(news) < len(olds) or _normal(news[:len(olds)]) != _normal(olds)):
            return False
    return True


def _node_affinity_mutation(new: Any, old: Any) -> list[JsonDict]:
    """validateNodeAffinityMutation: a gated pod's required node selector terms stay (only
    requirements may be added to them); preferred terms may change."""
    old_req = as_dict(old).get("requiredDuringSchedulingIgnoredDuringExecution")
    if old is None or old_req is None:
        return []
    old_terms = as_list(as_dict(old_req).get("nodeSelectorTerms"))
    new_terms = as_list(as_dict(as_dict(new).get("requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms"))
    path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    if old_terms and len(old_terms) != len(new_terms):
        return [invalid(path, new_terms, "no additions/deletions to non-empty NodeSelectorTerms list are allowed")]
    return [invalid(f"{path}[{i}]", new_terms[i], "only additions are allowed (no mutations or deletions)")
            for i in range(len(old_terms)) if not _term_only_additions(as_dict(new_terms[i]), as_dict(old_terms[i]))]


def validate_pod_update(new: JsonDict, old: JsonDict) -> list[JsonDict]:
    """ValidatePodUpdate's spec part: only images, activeDeadlineSeconds (set or lowered),
    added tolerations, deleted scheduling gates, a negative grace period raised to 1 and, while
    the pod is gated, added node selector entries and node affinity requirements may change."""
    errs: list[JsonDict] = []
    for key in ("containers", "initContainers"):
        news, olds = as_list(new.get(key)), as_list(old.get(key))
        if len(news) != len(olds):
            errs.append(forbidden(f"spec.{key}", "pod updates may not add or remove containers"))
            return errs
        for i, c in enumerate(news):
            image = as_dict(c).get("image")
            if not image:
                errs.append(required(f"spec.{key}[{i}].image", ""))
            if isinstance(image, str) and image != image.strip():
                errs.append(invalid(f"spec.{key}[{i}].image", image, "must not have leading or trailing whitespace"))
    ads_new, ads_old = new.get("activeDeadlineSeconds"), old.get("activeDeadlineSeconds")
    if ads_new is not None:
        if not isinstance(ads_new, int) or ads_new < 0 or ads_new > 2**31 - 1:
            errs.append(invalid("spec.activeDeadlineSeconds", ads_new, "must be between 0 and 2147483647, inclusive"))
            return errs
        if isinstance(ads_old, int) and ads_old < ads_new:
            errs.append(invalid("spec.activeDeadlineSeconds", ads_new, "must be less than or equal to previous value"))
            return errs
    elif ads_old is not None:
        errs.append(invalid("spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil value"))
    errs.extend(_only_added_tolerations(as_list(new.get("tolerations")), as_list(old.get("tolerations"))))
    new_gates = [as_dict(g).get("name") for g in as_list(new.get("schedulingGates"))]
    old_gates = {as_dict(g).get("name") for g in as_list(old.get("schedulingGates"))}
    added: dict[Any, int] = {}
    for i, name in enumerate(new_gates):
        added[name] = i
    errs.extend(forbidden(f"spec.schedulingGates[{i}].name", f"only deletion is allowed, but found new scheduling gate '{name}'")
                for name, i in sorted(added.items(), key=lambda kv: kv[1]) if name not in old_gates)
    if _normal(new) == _normal(old):
        return errs
    munged = copy.deepcopy(new)
    for key in ("containers", "initContainers"):
        for nc, oc in zip(as_list(munged.get(key)), as_list(old.get(key)), strict=False):
            if isinstance(nc, dict) and isinstance(oc, dict):
                _set_or_pop(nc, oc, "image")
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        _set_or_pop(munged, old, key)
    old_tgps, new_tgps = old.get("terminationGracePeriodSeconds"), munged.get("terminationGracePeriodSeconds")
    if isinstance(old_tgps, int) and old_tgps < 0 and new_tgps == 1:
        munged["terminationGracePeriodSeconds"] = old_tgps
    if as_list(old.get("schedulingGates")):
        if _normal(munged.get("nodeSelector")) != _normal(old.get("nodeSelector")):
            errs.extend(_node_selector_mutation(munged.get("nodeSelector"), old.get("nodeSelector")))
            _set_or_pop(munged, old, "nodeSelector")
        old_aff = old.get("affinity")
        old_na = as_dict(old_aff).get("nodeAffinity")
        new_aff = munged.get("affinity")
        new_na = as_dict(new_aff).get("nodeAffinity")
        if _normal(old_na) != _normal(new_na):
            errs.extend(_node_affinity_mutation(new_na, old_na))
            if new_aff is None and old_na is None:
                pass
            elif new_aff is None:
                munged["affinity"] = {"nodeAffinity": old_na}
            elif old_aff is None and new_aff.get("podAffinity") is None and new_aff.get("podAntiAffinity") is None:
                munged.pop("affinity", None)
            else:
                _set_or_pop(new_aff, as_dict(old_aff), "nodeAffinity")
    if _normal(munged.get("workloadRef")) != _normal(old.get("workloadRef")):
        # KEP-4671: the gang a pod belongs to never changes (its own error, not the generic one)
        errs.append(invalid("spec.workloadRef", munged.get("workloadRef"), "field is immutable"))
        _set_or_pop(munged, old, "workloadRef")
    if _normal(munged) != _normal(old):
        errs.append(forbidden("spec", POD_UPDATE_FORBIDDEN))
    return errs


def _set_or_pop(dst: JsonDict, src: JsonDict, key: str) -> None:
    if key in src:
        dst[key] = src[key]
    else:
        dst.pop(key, None)

