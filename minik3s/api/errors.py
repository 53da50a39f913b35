"""One API error hierarchy shared by server and client (layer L2).

The server renders an `ApiError` as an upstream `Status` object (kind Status, apiVersion v1,
status Failure, message, reason, details, code); the client parses a `Status` back into the
same class with `ApiError.from_status`. Reason names and codes are kube-apiserver's
(k8s.io/apimachinery/pkg/api/errors).
"""

from __future__ import annotations

from minik3s.api.types import JsonDict


class ApiError(Exception):
    """Base of every API error; `code` is the HTTP status, `reason` the StatusReason."""

    code = 500
    reason = "InternalError"
    # Go renders a nil *StatusDetails as nothing and an empty one as `"details":{}`; the errors
    # upstream builds with NewGenericServerResponse (no route for a path or method) carry an
    # empty one, so their Status shows the empty object
    shows_empty_details = False

    def __init__(
        self,
        message: str,
        *,
        details: JsonDict | None = None,
        code: int | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if code is not None:
            self.code = code
        if reason is not None:
            self.reason = reason

    def to_status(self) -> JsonDict:
        status: JsonDict = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # StatusReasonUnknown ("") is omitted, as Go's omitempty
            status["reason"] = self.reason
        if self.details or self.shows_empty_details:
            status["details"] = self.details
        status["code"] = self.code  # after details: Go's field order for metav1.Status
        return status

    @property
    def causes(self) -> list[JsonDict]:
        return list(self.details.get("causes", []))

    def has_cause(self, reason: str) -> bool:
        """apierrors.HasStatusCause: a cause whose `reason` (StatusCause.Type's JSON name) is
        `reason`, e.g. NamespaceTerminating."""
        return any(isinstance(c, dict) and c.get("reason") == reason for c in self.details.get("causes") or ())

    @staticmethod
    def from_status(status: JsonDict, http_code: int | None = None) -> ApiError:
        code = int(status.get("code") or http_code or 500)
        reason = str(status.get("reason") or "")
        message = str(status.get("message") or reason or f"HTTP {code}")
        details = status.get("details") or {}
        cls = _BY_REASON.get(reason) or _BY_CODE.get(code) or ApiError
        err = cls(message, details=details, code=code, reason=reason or cls.reason)
        return err

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code} {self.reason}: {self.message})"


class BadRequestError(ApiError):
    code = 400
    reason = "BadRequest"


class UnauthorizedError(ApiError):
    code = 401
    reason = "Unauthorized"


class ForbiddenError(ApiError):
    code = 403
    reason = "Forbidden"


class NotFoundError(ApiError):
    code = 404
    reason = "NotFound"


class PathNotFoundError(NotFoundError):
    """The 404 for a path no route serves (an unknown resource, group version or subresource):
    kube-apiserver's service error handler answers it with NewGenericServerResponse(404, "",
    GroupResource{}, "", ...), the fixed message and an empty, but present, `details` object."""

    shows_empty_details = True

    def __init__(self) -> None:
        super().__init__("the server could not find the requested resource")


class MethodNotAllowedError(ApiError):
    code = 405
    reason = "MethodNotAllowed"


class NotAcceptableError(ApiError):
    code = 406
    reason = "NotAcceptable"


class AlreadyExistsError(ApiError):
    code = 409
    reason = "AlreadyExists"


class ConflictError(ApiError):
    code = 409
    reason = "Conflict"


class GoneError(ApiError):
    """410: `Expired` (too old resource version / expired continue) or `Gone`."""

    code = 410
    reason = "Expired"


class RequestEntityTooLargeError(ApiError):
    code = 413
    reason = "RequestEntityTooLarge"


class UnsupportedMediaTypeError(ApiError):
    code = 415
    reason = "UnsupportedMediaType"


class InvalidError(ApiError):
    """422 with `details.causes` carrying field paths."""

    code = 422
    reason = "Invalid"


class TooManyRequestsError(ApiError):
    code = 429
    reason = "TooManyRequests"


class InternalError(ApiError):
    code = 500
    reason = "InternalError"


class ServiceUnavailableError(ApiError):
    code = 503
    reason = "ServiceUnavailable"


class TimeoutError_(ApiError):
    code = 504
    reason = "Timeout"


_BY_REASON: dict[str, type[ApiError]] = {
    c.reason: c
    for c in (
        BadRequestError,
        UnauthorizedError,
        ForbiddenError,
        NotFoundError,
        MethodNotAllowedError,
        NotAcceptableError,
        AlreadyExistsError,
        ConflictError,
        RequestEntityTooLargeError,
        UnsupportedMediaTypeError,
        InvalidError,
        TooManyRequestsError,
        InternalError,
        ServiceUnavailableError,
        TimeoutError_,
    )
}
_BY_REASON["Expired"] = GoneError
_BY_REASON["Gone"] = GoneError
_BY_CODE: dict[int, type[ApiError]] = {c.code: c for c in _BY_REASON.values() if c is not ConflictError}
_BY_CODE[409] = ConflictError


def cause(field: str, message: str, reason: str = "FieldValueInvalid") -> JsonDict:
    """One `StatusCause`; reasons as upstream field errors: FieldValueRequired, FieldValueInvalid,
    FieldValueNotSupported, FieldValueDuplicate, FieldValueForbidden, FieldValueTooLong."""
    return {"reason": reason, "message": message, "field": field}


def go_quote(text: str) -> str:
    """Go's `%q` of a string (strconv.Quote): double quotes, backslash escapes for `"`, `\\` and
    the C escapes, `\\xNN`/`\\uNNNN` for other unprintable characters; printable Unicode kept.
    Example: `a"b` -> `"a\\"b"`; a tab -> `"\\t"`."""
    out = ['"']
    for ch in text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {'"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n",
               "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def aggregate(messages: list[str]) -> str:
    """Go's utilerrors.NewAggregate(...).Error(): each distinct message once, in order; one bare,
    several as `[a, b]`, none ""."""
    distinct = list(dict.fromkeys(messages))
    if not distinct:
        return ""
    return distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"


def qualified_kind(kind: str, group: str) -> str:
    """`Pod` or `Deployment.apps`: a GroupKind as upstream prints it (schema.GroupKind.String)."""
    return f"{kind}.{group}" if group else kind


def invalid(kind: str, name: str, causes: list[JsonDict], group: str = "") -> InvalidError:
    """Build upstream's 422 (apierrors.NewInvalid): `<Kind>.<group> "<name>" is invalid: <errors>`,
    the group omitted for the core group (`Pod "p" is invalid: ...`, `Deployment.apps "d" is
    invalid: ...`), the name as Go's `%q`.

    The errors are the causes rendered as upstream field.Error does (`spec.containers: Required
    value`, `metadata.name: Invalid value: "A": a lowercase RFC 1123 ...`), aggregated as
    `ErrorList.ToAggregate` does: repeated messages once, one error bare, several in `[a, b]`;
    with no causes the message ends at "is invalid".
    """
    parts: list[str] = []
    for c in causes:
        part = f"{c['field']}: {c['message']}" if c.get("field") else str(c["message"])
        if part not in parts:
            parts.append(part)
    message = f"{qualified_kind(kind, group)} {go_quote(name)} is invalid"
    if parts:
        message += ": " + aggregate(parts)
    details = status_details(kind, group, name)
    if causes:
        details["causes"] = causes
    return InvalidError(message, details=details)


def qualified(resource: str, group: str) -> str:
    """`pods` or `deployments.apps`, as upstream messages name a resource."""
    return f"{resource}.{group}" if group else resource


def forbidden(resource: str, group: str, name: str, reason: str, *,
              causes: list[JsonDict] | None = None) -> ForbiddenError:
    """apierrors.NewForbidden(group resource, name, err): `<resource>.<group> "<name>" is
    forbidden: <reason>` (no name: `<resource>.<group> is forbidden: ...`), details {name,
    group, kind: the resource} and `causes` when given."""
    what = qualified(resource, group)
    message = f"{what} {go_quote(name)} is forbidden: {reason}" if name else f"{what} is forbidden: {reason}"
    details = status_details(resource, group, name)
    if causes:
        details["causes"] = causes
    return ForbiddenError(message, details=details)


def status_details(resource: str, group: str, name: str) -> JsonDict:
    """metav1.StatusDetails of a group resource's error, in Go's field order (name, group, kind)
    with its omitempty fields left out when empty, as the bytes upstream sends."""
    details: JsonDict = {"name": name} if name else {}
    if group:
        details["group"] = group
    if resource:
        details["kind"] = resource
    return details


def not_found(resource: str, group: str, name: str) -> NotFoundError:
    return NotFoundError(f'{qualified(resource, group)} "{name}" not found', details=status_details(resource, group, name))


def already_exists(resource: str, group: str, name: str) -> AlreadyExistsError:
    return AlreadyExistsError(f'{qualified(resource, group)} "{name}" already exists',
                              details=status_details(resource, group, name))


def generate_name_conflict(resource: str, group: str, name: str) -> AlreadyExistsError:
    """errors.NewGenerateNameConflict: the name the server generated from generateName is taken
    (after its retries); the client may try again in a second."""
    details = status_details(resource, group, name)
    details["retryAfterSeconds"] = 1
    return AlreadyExistsError(f'{qualified(resource, group)} "{name}" already exists, the server was not able '
                              "to generate a unique name for the object", details=details)


def conflict(resource: str, group: str, name: str, why: str | None = None) -> ConflictError:
    details = status_details(resource, group, name)
    why = why or "the object has been modified; please apply your changes to the latest version and try again"
    return ConflictError(
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {why}', details=details
    )


def too_large_resource_version(requested: int, current: int) -> TimeoutError_:
    """storage.NewTooLargeResourceVersionError: a list at a resourceVersion the store has not
    reached after the wait (504, retry after a second)."""
    return TimeoutError_(f"Timeout: Too large resource version: {requested}, current: {current}", details={
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1})


def too_old(requested: int, oldest: int) -> GoneError:
    return GoneError(f"too old resource version: {requested} ({oldest})")
