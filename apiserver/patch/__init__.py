"""Patch and apply semantics of kube-apiserver as pure functions on JSON dicts (layer L4, apiserver).

Row of the architecture table: "change how PATCH / server-side apply behave" → touch
`apiserver/patch/`, test at `tests/apiserver/patch/`.

Data flow: the PATCH handler decodes the body, picks the function by Content-Type
(`application/json-patch+json` → `apply_json_patch`, `application/merge-patch+json` →
`apply_merge_patch`, `application/strategic-merge-patch+json` → `apply_strategic_merge_patch`
with `patch_meta_for(apiVersion, kind)`, `application/apply-patch+yaml` → `server_side_apply`),
then defaults, validates and stores the result. Ordinary writes call `update_managed_fields` so
that field ownership is recorded as upstream's field manager does. Nothing here does I/O and no
input is ever mutated.

Errors: `PatchError` carries the HTTP code kube-apiserver answers with (400 malformed patch,
422 a patch that cannot be applied, 500 for SMP errors upstream does not classify);
`ApplyConflictError` is the 409 of server-side apply. Both convert to `minik3s.api.errors`
exceptions with `.to_api_error()`.
"""

from apiserver.patch.apply import server_side_apply, update_managed_fields
from apiserver.patch.errors import ApplyConflictError, PatchError
from apiserver.patch.json_patch import apply_json_patch
from apiserver.patch.merge_patch import apply_merge_patch
from apiserver.patch.strategic_merge import PatchMeta, apply_strategic_merge_patch, patch_meta_for

__all__ = [
    "ApplyConflictError",
    "PatchError",
    "PatchMeta",
    "apply_json_patch",
    "apply_merge_patch",
    "apply_strategic_merge_patch",
    "patch_meta_for",
    "server_side_apply",
    "update_managed_fields",
]
