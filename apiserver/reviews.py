"""Access and identity reviews (layer L4, apiserver): answered from the RBAC authorizer, never
stored, as upstream's pkg/registry/authorization/* and authentication/selfsubjectreview REST.

- SelfSubjectAccessReview: may the requesting user do this? (`kubectl auth can-i`)
- SubjectAccessReview: may `spec.user` / `spec.groups` do this? (cluster-scoped)
- LocalSubjectAccessReview: the same, in the namespace of the URL (its resourceAttributes'
  namespace must match it; no nonResourceAttributes)
- SelfSubjectRulesReview: what RBAC gives the requesting user in `spec.namespace`
  (`kubectl auth can-i --list`)
- SelfSubjectReview: who the requesting user is (`kubectl auth whoami`)

On plain HTTP on loopback the requesting user is `system:admin` (system:masters); with
`Impersonate-*` headers it is the impersonated user.

Data flow: handlers.verbs.create (virtual kinds) -> `review(info, body, user=..., ...)` ->
`apiserver.rbac.Authorizer` -> the review object with its status (201).
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from apiserver.rbac import Attributes, Authorizer
from minik3s.api.errors import BadRequestError, cause, invalid
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.user import UserInfo
from minik3s.api.validation import go_value


def _go_struct(type_name: str, value: Any, fields: tuple[tuple[str, str], ...]) -> str:
    """How upstream prints a struct bad value (`%#v`): `authorization.NonResourceAttributes{Path:"/x", Verb:"get"}`."""
    v = value if isinstance(value, dict) else {}
    inner = ", ".join(f"{go}:{go_value(v.get(js) or '')}" for go, js in fields)
    return f"authorization.{type_name}{{{inner}}}"


_NON_RESOURCE_FIELDS = (("Path", "path"), ("Verb", "verb"))


def _invalid(info: ResourceInfo, causes: list[JsonDict]) -> Exception:
    err = invalid(info.kind, "", causes, info.group)
    err.details["kind"] = info.kind
    return err


def _spec_causes(spec: JsonDict) -> list[JsonDict]:
    """upstream ValidateSelfSubjectAccessReviewSpec: exactly one kind of attributes."""
    ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    out: list[JsonDict] = []
    if ra is not None and nra is not None:
        out.append(cause("spec.nonResourceAttributes",
                         f"Invalid value: {_go_struct('NonResourceAttributes', nra, _NON_RESOURCE_FIELDS)}: "
                         "cannot be specified in combination with resourceAttributes"))
    if ra is None and nra is None:
        out.append(cause("spec.resourceAttributes", 'Invalid value: "null": exactly one of nonResourceAttributes '
                                                    "or resourceAttributes must be specified"))
    for k in ("resourceAttributes", "nonResourceAttributes"):
        if spec.get(k) is not None and not isinstance(spec.get(k), dict):
            raise BadRequestError(f"json: cannot unmarshal {type(spec.get(k)).__name__} into Go struct field "
                                  f"SubjectAccessReviewSpec.spec.{k} of type v1.{k[0].upper()}{k[1:]}")
    return out


def _str(d: JsonDict, key: str) -> str:
    v = d.get(key)
    return v if isinstance(v, str) else ""


def _attributes(user: UserInfo, spec: JsonDict) -> Attributes:
    ra = spec.get("resourceAttributes")
    if isinstance(ra, dict):
        return Attributes(user=user, verb=_str(ra, "verb"), resource_request=True, api_group=_str(ra, "group"),
                          api_version=_str(ra, "version"), resource=_str(ra, "resource"),
                          subresource=_str(ra, "subresource"), name=_str(ra, "name"),
                          namespace=_str(ra, "namespace"))
    nra = spec.get("nonResourceAttributes") or {}
    return Attributes(user=user, verb=_str(nra, "verb"), resource_request=False, path=_str(nra, "path"))


def _access_status(authorizer: Authorizer, attrs: Attributes) -> JsonDict:
    decision = authorizer.authorize(attrs)
    status: JsonDict = {"allowed": decision.allowed}
    if decision.reason:
        status["reason"] = decision.reason
    return status


def _spec_user(spec: JsonDict) -> UserInfo:
    groups = spec.get("groups") if isinstance(spec.get("groups"), list) else []
    extra_raw = spec.get("extra") if isinstance(spec.get("extra"), dict) else {}
    extra = {str(k): tuple(str(x) for x in v) for k, v in (extra_raw or {}).items() if isinstance(v, list)}
    return UserInfo(_str(spec, "user"), uid=_str(spec, "uid"), groups=tuple(str(g) for g in groups or []),
                    extra=MappingProxyType(extra))


def _self_access(info: ResourceInfo, spec: JsonDict, user: UserInfo, authorizer: Authorizer,
                 namespace: str | None) -> JsonDict:
    causes = _spec_causes(spec)
    if causes:
        raise _invalid(info, causes)
    return _access_status(authorizer, _attributes(user, spec))


def _subject_access(info: ResourceInfo, spec: JsonDict, user: UserInfo, authorizer: Authorizer,
                    namespace: str | None) -> JsonDict:
    causes = _spec_causes(spec)
    if not _str(spec, "user") and not spec.get("groups"):
        causes.append(cause("spec.user", f"Invalid value: {go_value(_str(spec, 'user'))}: "
                                         "at least one of user or group must be specified"))
    if namespace is not None:  # LocalSubjectAccessReview
        ra = spec.get("resourceAttributes")
        if isinstance(ra, dict) and _str(ra, "namespace") != namespace:
            causes.append(cause("spec.resourceAttributes.namespace",
                                f"Invalid value: {go_value(_str(ra, 'namespace'))}: must match metadata.namespace"))
        nra = spec.get("nonResourceAttributes")
        if nra is not None:
            causes.append(cause("spec.nonResourceAttributes",
                                f"Invalid value: {_go_struct('NonResourceAttributes', nra, _NON_RESOURCE_FIELDS)}: "
                                "disallowed on this kind of request"))
    if causes:
        raise _invalid(info, causes)
    return _access_status(authorizer, _attributes(_spec_user(spec), spec))


def _self_rules(info: ResourceInfo, spec: JsonDict, user: UserInfo, authorizer: Authorizer,
                namespace: str | None) -> JsonDict:
    ns = _str(spec, "namespace")
    if not ns:
        raise BadRequestError("no namespace on request")
    resource, non_resource, err = authorizer.rules_for(user, ns)
    status: JsonDict = {"resourceRules": resource, "nonResourceRules": non_resource, "incomplete": False}
    if err:
        status["evaluationError"] = err
    return status


_StatusFn = Callable[[ResourceInfo, JsonDict, UserInfo, Authorizer, "str | None"], JsonDict]
_ACCESS: dict[str, _StatusFn] = {
    "selfsubjectaccessreviews": _self_access,
    "subjectaccessreviews": _subject_access,
    "localsubjectaccessreviews": _subject_access,
    "selfsubjectrulesreviews": _self_rules,
}


def review(info: ResourceInfo, body: Any, *, user: UserInfo, authorizer: Authorizer,
           namespace: str | None = None) -> JsonDict:
    """Answer one review. `namespace` is the URL's (LocalSubjectAccessReview only)."""
    if not isinstance(body, dict):
        raise BadRequestError("the object provided is not a JSON object")
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    if info.namespaced:
        body_ns = (meta or {}).get("namespace")
        if body_ns and body_ns != namespace:
            raise BadRequestError("the namespace of the provided object does not match the namespace sent on the "
                                  "request")
        meta = {**(meta or {}), "namespace": namespace}
    out: JsonDict = {"kind": info.kind, "apiVersion": info.api_version,
                     "metadata": {"creationTimestamp": None, **(meta or {})}}
    if info.resource == "selfsubjectreviews":
        out["status"] = {"userInfo": user.to_wire()}
        return out
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    out["spec"] = spec
    fn = _ACCESS.get(info.resource)
    if fn is None:
        raise BadRequestError(f"{info.resource} cannot be reviewed")
    out["status"] = fn(info, spec or {}, user, authorizer, namespace if info.namespaced else None)
    return out
