"""`minik3s apply` (layer L5, CLI): server-side apply of every manifest object.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from minik3s.api.errors import ApiError, NotFoundError
from minik3s.api.types import JsonDict
from minik3s.cli.kubectl.api import Api
from minik3s.cli.kubectl.discovery import (
    Discovery,
)
from minik3s.cli.kubectl.errors import format_error
from minik3s.cli.kubectl.manifests import load_manifests
from minik3s.cli.kubectl.palette import Palette

APPLY_CONTENT_TYPE = "application/apply-patch+yaml"
FIELD_MANAGER = "minik3s-apply"


async def run_apply(
    api: Api,
    disc: Discovery,
    args: argparse.Namespace,
    *,
    out: TextIO,
    err: TextIO,
    stdin: TextIO | None = None,
) -> int:
    """Create or update every object in the manifests.

    Implemented as server-side apply (PATCH `application/apply-patch+yaml`, fieldManager
    `minik3s-apply`, `force=true`) rather than kubectl's client-side three-way merge: the server
    already merges keyed lists for built-in kinds and custom resources, and prunes fields this
    manager applied before and no longer applies (field ownership), so the client needs no patch
    schemas and no last-applied annotation, and one request per object suffices. `force` makes
    the applied manifest win over fields last written by other managers, like a plain
    `kubectl apply`. Verdict: no object before → `created`; resourceVersion unchanged (a no-op
    apply is not written) → `unchanged`; otherwise `configured`, unless everything but status,
    resourceVersion and managedFields is identical (some controller wrote in between) →
    `unchanged`.
    """
    pal = Palette.for_stream(out)
    manifests = load_manifests(args.filename, recursive=args.recursive, stdin=stdin)
    rc = 0
    dry = args.dry_run == "server"
    for m in manifests:
        obj = m.obj
        meta = obj.setdefault("metadata", {})
        name = meta.get("name") or ""
        res = disc.for_kind(str(obj["apiVersion"]), str(obj["kind"]))
        if res is None:
            print(
                f'error: resource mapping not found for name: "{name}" namespace: "{meta.get("namespace", "")}" '
                f'from "{m.source}": no matches for kind "{obj["kind"]}" in version "{obj["apiVersion"]}"\n'
                "ensure CRDs are installed first",
                file=err,
            )
            rc = 1
            continue
        if not name:
            if meta.get("generateName"):
                print(f"error: from {meta['generateName']}: cannot use generate name with apply", file=err)
            else:
                print(
                    f'error: error when retrieving current configuration of "{m.source}": '
                    "resource name may not be empty",
                    file=err,
                )
            rc = 1
            continue
        ns: str | None = None
        if res.namespaced:
            ns = meta.get("namespace") or args.namespace or "default"
            if args.namespace and meta.get("namespace") and meta["namespace"] != args.namespace:
                print(
                    f'error: the namespace from the provided object "{meta["namespace"]}" does not match the '
                    f"namespace \"{args.namespace}\". You must pass '--namespace={meta['namespace']}' to perform "
                    "this operation.",
                    file=err,
                )
                rc = 1
                continue
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        path = res.path(ns, name)
        try:
            live: JsonDict | None = await api.call("GET", path)
        except NotFoundError:
            live = None
        except ApiError as e:
            print(format_error(e, source=m.source, verb="retrieving current configuration of"), file=err)
            rc = 1
            continue
        params = {"fieldManager": FIELD_MANAGER, "force": "true", "fieldValidation": "Strict"}
        if dry:
            params["dryRun"] = "All"
        try:
            result = await api.call("PATCH", path, params=params, body=obj, content_type=APPLY_CONTENT_TYPE)
        except ApiError as e:
            print(format_error(e, source=m.source, verb="creating" if live is None else "patching"), file=err)
            rc = 1
            continue
        verdict = (
            "created" if live is None else ("unchanged" if _same(live, result, dry_run=dry) else "configured")
        )
        colour = {"created": "green", "configured": "yellow", "unchanged": "dim"}[verdict]
        suffix = " (server dry run)" if dry else ""
        print(f"{res.kind_group}/{name} {pal.paint(colour, verdict)}{suffix}", file=out, flush=True)
    return rc


def _same(before: JsonDict, after: JsonDict, *, dry_run: bool = False) -> bool:
    """Did an apply leave the object as it was? (A dry run keeps the resourceVersion either way.)"""
    mb, ma = before.get("metadata") or {}, after.get("metadata") or {}
    if not dry_run and mb.get("resourceVersion") and mb.get("resourceVersion") == ma.get("resourceVersion"):
        return True

    def strip(o: JsonDict) -> JsonDict:
        c = {k: v for k, v in o.items() if k != "status"}
        c["metadata"] = {
            k: v
            for k, v in (o.get("metadata") or {}).items()
            if k not in ("resourceVersion", "managedFields")
        }
        return c

    return strip(before) == strip(after)
