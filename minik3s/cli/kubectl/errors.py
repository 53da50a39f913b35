"""Client-side errors and kubectl's wording for every error it prints (layer L5, CLI).
"""

from __future__ import annotations

from minik3s.api.errors import ApiError


class CommandError(Exception):
    """A client-side failure; printed as `error: <message>` like kubectl's `fatal`."""


class ConnectionRefusedError_(CommandError):
    """The server cannot be reached; kubectl prints this one without the `error: ` prefix."""


def format_error(e: BaseException, *, source: str = "", verb: str = "") -> str:
    """kubectl's `StandardErrorMessage` / `checkErr` wording.

    NotFound → `Error from server (NotFound): pods "nope" not found`; Invalid with causes →
    `The Pod "bad" is invalid: spec.containers: Required value`; with a source file the server
    message gets `error when creating "pod.yaml": ` in front (`AddSourceToErr`).
    """
    if isinstance(e, ApiError):
        msg = e.message
        if source and verb:
            msg = f'error when {verb} "{source}": {msg}'
        if e.reason == "Invalid" and e.code == 422:
            kind = e.details.get("kind") or ""
            name = e.details.get("name") or ""
            head = f'The {kind} "{name}" is invalid' if kind or name else "The request is invalid"
            causes = [
                f"{c['field']}: {c.get('message', '')}" if c.get("field") else str(c.get("message", ""))
                for c in e.causes
            ]
            if not causes:
                return head
            if len(causes) == 1:
                return f"{head}: {causes[0]}"
            return f"{head}: \n" + "\n".join(f"* {c}" for c in causes)
        if e.reason in ("", "Unknown") or e.code == 0:
            return f"Error from server: {msg}"
        return f"Error from server ({e.reason}): {msg}"
    text = str(e)
    if isinstance(e, ConnectionRefusedError_) or text.startswith("error: "):
        return text
    return f"error: {text}"
