"""RFC 7386 JSON merge patch (`application/merge-patch+json`) on JSON dicts (layer L4, apiserver).

Used by `kubectl label/annotate/scale`, `kubectl patch --type=merge`, and `kubectl apply` for
custom resources. Rules: a patch that is an object merges key by key into the target (an
object, or `{}` if the target is not one); a `null` member deletes that key; any other value,
lists included, replaces the target wholesale.

Worked example: target `{"a": "b", "c": {"d": "e", "f": "g"}}`, patch
`{"a": "z", "c": {"f": null}}` → `{"a": "z", "c": {"d": "e"}}`.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver.patch.json_patch import json_copy


def merge_patch_value(target: Any, patch: Any) -> Any:
    """RFC 7386 MergePatch(Target, Patch) on any JSON values; never mutates its inputs."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result: dict[str, Any] = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch_value(result.get(key), value)
    return result


def apply_merge_patch(doc: dict[str, Any], patch: Any) -> Any:
    """Merge `patch` into `doc` per RFC 7386 and return a new value (a dict for object patches).

    A non-object patch replaces the document, as the RFC says; the handler then rejects a
    result that is not an object.
    """
    return merge_patch_value(json_copy(doc), patch)
