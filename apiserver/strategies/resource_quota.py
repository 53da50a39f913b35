"""core/v1 ResourceQuota: the kind's rules and the ResourceQuota admission plugin (layer L4,
apiserver), after kube-apiserver's pkg/registry/core/resourcequota, ValidateResourceQuota and
the apiserver's admission/plugin/resourcequota.

The strategy: status is cleared on create and kept on update (the status subresource keeps the
spec); spec.hard names must be standard quota resources or domain-qualified, quantities
non-negative and whole for countable names; scopes standard, valid for every hard resource, not
conflicting, and immutable.

The admission plugin runs last, after validation and the validating webhooks, on creates (and
on updates of services and persistentvolumeclaims) of namespaced objects: for each quota of the
namespace whose `status.hard` (what the resourcequota controller last observed; an unsynced
quota constrains nothing) names something the object is charged, it refuses with upstream's 403
messages ("failed quota", "status unknown for quota", "exceeded quota"), and otherwise adds the
charge to the quota's `status.used` before the object is stored, through the `charge` callback
the request core gives it (a status write that re-checks the limit on the current quota, so two
concurrent creates cannot both take the last unit).

Data flow: ApiCore.create/update reads the namespace's quotas from the store's memory (none in
the cluster: no call) -> ResourceQuotaAdmission.admit(..., quotas, charge) -> charge(namespace, name, mutate) for each quota charged.

Example: quota `compute` with status.hard {pods: "2"} and status.used {pods: "2"}; a third pod
-> 403 `pods "web-3" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2,
limited: pods=2`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from fractions import Fraction
from typing import Any

from minik3s.api import errors
from minik3s.api.helpers import quota as q
from minik3s.api.quantity import QuantityError, parse_quantity
from minik3s.api.types import JsonDict
from minik3s.api.validation import is_qualified_name

from .base import Strategy, as_dict

# charge(namespace, quota name, mutate): a status write of the current quota through mutate,
# which raises ForbiddenError when the charge no longer fits
Charge = Callable[[str, str, Callable[[JsonDict], None]], Awaitable[None]]

STANDARD_RESOURCES = q.STANDARD_QUOTA_RESOURCES | {"storage"}


# ------------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------------


def _go_quantity(value: Any) -> str:
    """How Go's %#v prints a resource.Quantity in a "must be an integer" error."""
    text = str(value)
    digits, _, frac = text.rstrip("numkKMGTPEi").partition(".")
    scale = -len(frac)
    suffix = text[len(text.rstrip("numkKMGTPEi")):]
    scale += {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}.get(suffix, 0)
    fmt = "BinarySI" if suffix.endswith("i") else "DecimalSI"
    try:
        mantissa = int(digits + frac)
    except ValueError:
        mantissa = 0
    return (f"resource.Quantity{{i:resource.int64Amount{{value:{mantissa}, scale:{scale}}}, "
            f"d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:\"{text}\", Format:\"{fmt}\"}}")


def _resource_name_errors(name: str, path: str) -> list[JsonDict]:
    """ValidateResourceQuotaResourceName."""
    msgs = is_qualified_name(name)
    if msgs:
        return [errors.cause(path, f"Invalid value: \"{name}\": {m}") for m in msgs]
    out: list[JsonDict] = []
    if "/" not in name:
        std = name in STANDARD_RESOURCES or name.startswith(q.HUGEPAGES) or name.startswith(q.REQUESTS + q.HUGEPAGES)
        if not std:
            out.append(errors.cause(path, f"Invalid value: \"{name}\": must be a standard resource type or fully "
                                          "qualified"))
        if not q.is_standard_quota_name(name):
            out.append(errors.cause(path, f"Invalid value: \"{name}\": must be a standard resource for quota"))
    return out


def _quantity_errors(name: str, value: Any, path: str) -> list[JsonDict]:
    """ValidateResourceQuantityValue (the value already decoded as a quantity)."""
    try:
        v = parse_quantity(value)
    except (QuantityError, TypeError):
        return []  # the decoder reported it
    if v < 0:
        return [errors.cause(path, f"Invalid value: \"{value}\": must be greater than or equal to 0")]
    if q.is_integer_resource(name) or name.startswith(q.COUNT) or q.STORAGE_CLASS_SUFFIX in name:
        if (v * 1000) % 1000 != 0:
            return [errors.cause(path, f"Invalid value: {_go_quantity(value)}: must be an integer")]
    return []


def _resource_list_errors(rl: Any, path: str) -> list[JsonDict]:
    out: list[JsonDict] = []
    for k, v in sorted(as_dict(rl).items()):
        p = f"{path}[{k}]"
        out += _resource_name_errors(str(k), p)
        out += _quantity_errors(str(k), v, p)
    return out


def _go_scopes(scopes: list[Any]) -> str:
    return "[]core.ResourceQuotaScope{" + ", ".join(f"\"{s}\"" for s in scopes) + "}"


def _scope_errors(spec: JsonDict) -> list[JsonDict]:
    """validateResourceQuotaScopes and the scope selector's requirements."""
    out: list[JsonDict] = []
    hard = [str(k) for k in sorted(as_dict(spec.get("hard")))]
    scopes = [s for s in spec.get("scopes") or () if isinstance(s, str)]
    shown = _go_scopes(scopes)
    for s in scopes:
        if s not in q.STANDARD_SCOPES:
            out.append(errors.cause("spec.scopes", f"Invalid value: {shown}: unsupported scope"))
        for k in hard:
            if q.is_standard_quota_name(k) and not q.scope_valid_for(s, k):
                out.append(errors.cause("spec.scopes", f"Invalid value: {shown}: unsupported scope applied to resource"))
    for a, b in q.CONFLICTING_SCOPES:
        if a in scopes and b in scopes:
            out.append(errors.cause("spec.scopes", f"Invalid value: {shown}: conflicting scopes"))
    selector = spec.get("scopeSelector")
    if not isinstance(selector, dict):
        return out
    base = "spec.scopeSelector.matchExpressions"
    names: list[str] = []
    for req in selector.get("matchExpressions") or ():
        if not isinstance(req, dict):
            continue
        scope, op, values = req.get("scopeName"), req.get("operator"), req.get("values") or []
        names.append(str(scope))
        if scope not in q.STANDARD_SCOPES:
            out.append(errors.cause(f"{base}.scopeName", f"Invalid value: \"{scope}\": unsupported scope"))
        for k in hard:
            if q.is_standard_quota_name(k) and isinstance(scope, str) and not q.scope_valid_for(scope, k):
                out.append(errors.cause(base, "Invalid value: core.ScopeSelector: unsupported scope applied to "
                                              "resource"))
        if scope in q.EXISTS_ONLY_SCOPES and op != "Exists":
            out.append(errors.cause(f"{base}.operator", f"Invalid value: \"{op}\": must be 'Exists' when scope is any "
                                    "of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
                                    "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
                                    "ResourceQuotaScopeCrossNamespacePodAffinity"))
        if op in ("In", "NotIn"):
            if not values:
                out.append(errors.cause(f"{base}.values", "Required value: must be at least one value when "
                                        "`operator` is 'In' or 'NotIn' for scope selector", "FieldValueRequired"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                listed = "[]string{" + ", ".join(f"\"{v}\"" for v in values) + "}"
                out.append(errors.cause(f"{base}.values", f"Invalid value: {listed}: must be no value when "
                                        "`operator` is 'Exist' or 'DoesNotExist' for scope selector"))
        else:
            out.append(errors.cause(f"{base}.operator", f"Invalid value: \"{op}\": not a valid selector operator"))
    for a, b in q.CONFLICTING_SCOPES:
        if a in names and b in names:
            out.append(errors.cause(base, f"Invalid value: {shown}: conflicting scopes"))
    return out


class ResourceQuotaStrategy(Strategy):
    """core/v1 ResourceQuota (pkg/registry/core/resourcequota)."""

    kind = "ResourceQuota"
    has_status = True

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj.pop("status", None)

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = as_dict(obj.get("spec"))
        errs = _resource_list_errors(spec.get("hard"), "spec.hard")
        errs += _scope_errors(spec)
        status = as_dict(obj.get("status"))
        errs += _resource_list_errors(status.get("hard"), "status.hard")
        errs += _resource_list_errors(status.get("used"), "status.used")
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        new_scopes = [s for s in as_dict(new.get("spec")).get("scopes") or ()]
        old_scopes = [s for s in as_dict(old.get("spec")).get("scopes") or ()]
        if set(map(str, new_scopes)) != set(map(str, old_scopes)):
            return [errors.cause("spec.scopes", f"Invalid value: {_go_scopes(new_scopes)}: field is immutable")]
        return []

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs = super().validate_status_update(new, old)
        status = as_dict(new.get("status"))
        errs += _resource_list_errors(status.get("hard"), "status.hard")
        errs += _resource_list_errors(status.get("used"), "status.used")
        return errs


# ------------------------------------------------------------------------------------------------
# admission
# ------------------------------------------------------------------------------------------------


def _handles(group: str, resource: str, operation: str, subresource: str | None = None) -> bool:
    """The evaluators' Handles: every create; updates of Services and claims; of pods only the
    resize subresource (podEvaluator.Handles)."""
    if (group, resource) in q.IGNORED:
        return False
    if subresource is not None:
        return operation == "UPDATE" and (group, resource, subresource) == ("", "pods", "resize")
    if operation == "CREATE":
        return True
    return operation == "UPDATE" and group == "" and resource in ("services", "persistentvolumeclaims")


def _forbidden(resource: str, group: str, name: str, why: str) -> errors.ForbiddenError:
    return errors.forbidden(resource, group, name, why)


class ResourceQuotaAdmission:
    """The ResourceQuota admission plugin (see the module text). `now` is the API's clock (for
    a deleted pod's grace period)."""

    def __init__(self, now: Callable[[], datetime]) -> None:
        self._now = now

    def _plan(self, group: str, resource: str, obj: JsonDict, old: JsonDict | None, quota: JsonDict,
              name: str) -> q.Usage:
        """What this request adds to `quota` ({} when the quota does not constrain it); raises
        the constraint and unknown-status refusals."""
        status = as_dict(quota.get("status"))
        hard = q.parse_resource_list(status.get("hard"))
        names = q.matching_names(group, resource, hard)
        if not names or not q.matches_scopes(group, resource, obj, q.scope_selectors(quota)):
            return {}
        qname = str(as_dict(quota.get("metadata")).get("name") or "")
        if (group, resource) == ("", "pods"):
            why = q.pod_constraint_error(obj, names)
            if why:
                raise _forbidden(resource, group, name, f"failed quota: {qname}: {why}")
        used = q.parse_resource_list(status.get("used"))
        if any(n not in used for n in names):
            raise _forbidden(resource, group, name,
                             f"status unknown for quota: {qname}, resources: {','.join(sorted(names))}")
        now = self._now()
        delta = q.mask(q.usage_of(group, resource, obj, now), names)
        if old is not None and q.matches_scopes(group, resource, old, q.scope_selectors(quota)):
            before = q.mask(q.usage_of(group, resource, old, now), names)
            delta = {k: (max(v[0] - before.get(k, q.ZERO)[0], Fraction(0)), v[1]) for k, v in delta.items()}
        return {k: v for k, v in delta.items() if v[0] != 0}

    @staticmethod
    def _check(quota: JsonDict, delta: q.Usage, resource: str, group: str, name: str) -> q.Usage:
        """The quota's new status.used with `delta` added; raises "exceeded quota"."""
        status = as_dict(quota.get("status"))
        hard = q.parse_resource_list(status.get("hard"))
        used = q.parse_resource_list(status.get("used"))
        new = q.add(used, delta)
        exceeded = sorted(k for k in delta if k in hard and new[k][0] > hard[k][0])
        if exceeded:
            qname = str(as_dict(quota.get("metadata")).get("name") or "")
            raise _forbidden(resource, group, name, (
                f"exceeded quota: {qname}, requested: {q.pretty(q.mask(delta, exceeded))}, "
                f"used: {q.pretty(q.mask(used, exceeded))}, limited: {q.pretty(q.mask(hard, exceeded))}"))
        return new

    async def admit(self, group: str, resource: str, operation: str, obj: JsonDict, old: JsonDict | None,
                    quotas: list[JsonDict], charge: Charge, *, dry_run: bool = False,
                    subresource: str | None = None) -> None:
        """Admit one write of an object of `group/resource` against `quotas`, the namespace's
        ResourceQuotas (stored objects, never mutated)."""
        if not _handles(group, resource, operation, subresource):
            return
        meta = as_dict(obj.get("metadata"))
        namespace = meta.get("namespace")
        if not namespace:
            return
        if not quotas:
            return
        name = str(meta.get("name") or meta.get("generateName") or "Unknown")
        plans: list[tuple[str, q.Usage]] = []
        for quota in sorted((x for x in quotas if isinstance(x, dict)),
                            key=lambda x: str(as_dict(x.get("metadata")).get("name"))):
            delta = self._plan(group, resource, obj, old, quota, name)
            if delta:
                self._check(quota, delta, resource, group, name)
                plans.append((str(as_dict(quota.get("metadata")).get("name")), delta))
        if dry_run:
            return  # checked, never charged
        for qname, delta in plans:

            def mutate(current: JsonDict, delta: q.Usage = delta) -> None:
                new = self._check(current, delta, resource, group, name)
                status = current.setdefault("status", {})
                used = dict(as_dict(status.get("used")))
                for k in delta:
                    used[k] = q.text(new[k])
                status["used"] = used

            await charge(str(namespace), qname, mutate)
