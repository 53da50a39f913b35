"""Typed failures of patching and applying, and their upstream Status shapes (layer L4, apiserver).

kube-apiserver answers patch failures in three ways (k8s.io/apiserver handlers/patch.go):
a malformed patch document (and SMP content not matching `$retainKeys`) is 400 BadRequest; a
well-formed patch that cannot be applied (JSON-patch `test` failure, a missing path) is a
"generic server response" 422 whose message is fixed and whose single cause carries the real
reason; an SMP error it does not classify (a keyed item without its merge key) is a 500 Status
with the bare message and no reason.
Server-side apply conflicts are 409 Conflict with one `FieldManagerConflict` cause per field
(apimachinery managedfields/internal/conflict.go).
"""

from __future__ import annotations

from minik3s.api.errors import (
    ApiError,
    BadRequestError,
    ConflictError,
    InvalidError,
    RequestEntityTooLargeError,
)

GENERIC_422_MESSAGE = "the server rejected our request due to an error in our request"


class PatchError(Exception):
    """A patch that is malformed (`code` 400), too large (413) or cannot be applied (422, or 500 as upstream)."""

    def __init__(self, message: str, *, code: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def to_api_error(self) -> ApiError:
        """The ApiError kube-apiserver would answer with."""
        if self.code == 400:
            return BadRequestError(self.message)
        if self.code == 413:
            return RequestEntityTooLargeError(self.message)
        if self.code == 422:
            # errors.NewGenericServerResponse(422, "", GroupResource{}, "", msg, 0, false)
            return InvalidError(
                GENERIC_422_MESSAGE,
                details={"causes": [{"reason": "UnexpectedServerResponse", "message": self.message}]},
            )
        # a plain error the PATCH handler passes on: ErrorToAPIStatus's 500 with the bare message and
        # StatusReasonUnknown (kubectl prints "Error from server: <message>")
        return ApiError(self.message, code=500, reason="")


class ApplyConflictError(Exception):
    """Server-side apply found fields owned by other managers that it would change.

    `conflicts` holds `(manager, field)` pairs where `manager` is already rendered the way
    upstream prints it (`"kubectl-client-side-apply" using apps/v1`, or `"kubectl"` for an
    applier) and `field` is a structured-merge-diff path such as `.spec.replicas` or
    `.spec.containers[name="c"].image`.
    """

    def __init__(self, conflicts: list[tuple[str, str]]) -> None:
        self.conflicts = list(conflicts)
        super().__init__(self.message)

    @property
    def message(self) -> str:
        if len(self.conflicts) == 1:
            manager, field = self.conflicts[0]
            return f"Apply failed with 1 conflict: conflict with {manager}: {field}"
        by_manager: dict[str, list[str]] = {}
        for manager, field in self.conflicts:
            by_manager.setdefault(manager, []).append(field)
        lines: list[str] = []
        for manager in sorted(by_manager):
            lines.append(f"conflicts with {manager}:")
            lines.extend(f"- {field}" for field in by_manager[manager])
        return f"Apply failed with {len(self.conflicts)} conflicts: " + "\n".join(lines)

    def causes(self) -> list[dict[str, str]]:
        return [
            {"reason": "FieldManagerConflict", "message": f"conflict with {manager}", "field": field}
            for manager, field in self.conflicts
        ]

    def to_api_error(self) -> ApiError:
        """409 Conflict (errors.NewApplyConflict): no name/kind in details, only causes."""
        return ConflictError(self.message, details={"causes": self.causes()})
