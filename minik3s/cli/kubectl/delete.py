"""`minik3s delete` (layer L5, CLI): DELETE each object, then wait until it is gone.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
from typing import TextIO

from minik3s.api.errors import ApiError, NotFoundError
from minik3s.api.types import JsonDict
from minik3s.cli.kubectl.api import LIST_CHUNK, Api, list_all
from minik3s.cli.kubectl.discovery import (
    ApiResource,
    Discovery,
    no_resources,
    parse_targets,
    target_namespace,
)
from minik3s.cli.kubectl.errors import CommandError, format_error
from minik3s.cli.kubectl.manifests import load_manifests
from minik3s.cli.kubectl.palette import Palette


@dataclass(slots=True)
class _Deleted:
    res: ApiResource
    namespace: str | None
    name: str
    uid: str


async def run_delete(
    api: Api,
    disc: Discovery,
    args: argparse.Namespace,
    *,
    out: TextIO,
    err: TextIO,
    stdin: TextIO | None = None,
) -> int:
    """DELETE each object (Background propagation), print `pod "x" deleted`, then wait for all of
    them to be gone (kubectl's `--wait=true`): list + watch on `metadata.name`, matching the UID."""
    ns = target_namespace(args)
    grace = args.grace_period
    if args.now:
        grace = 1
    if grace == 0 and not args.force:
        grace = 1  # kubectl: --grace-period=0 without --force means "as soon as possible"
    if args.force and grace < 0:
        grace = 0
    immediate = args.force and grace == 0
    if immediate:
        print(
            "Warning: Immediate deletion does not wait for confirmation that the running resource has been "
            "terminated. The resource may continue to run on the cluster indefinitely.",
            file=err,
        )
    work: list[tuple[ApiResource, str | None, str, str]] = []  # res, ns, name, source
    rc = 0
    if args.filename:
        for m in load_manifests(args.filename, recursive=args.recursive, stdin=stdin, verb="delete"):
            res = disc.for_kind(str(m.obj["apiVersion"]), str(m.obj["kind"]))
            meta = m.obj.get("metadata") or {}
            if res is None:
                print(
                    f'error: resource mapping not found for name: "{meta.get("name", "")}" namespace: '
                    f'"{meta.get("namespace", "")}" from "{m.source}": no matches for kind "{m.obj["kind"]}" in '
                    f'version "{m.obj["apiVersion"]}"\nensure CRDs are installed first',
                    file=err,
                )
                rc = 1
                continue
            work.append(
                (
                    res,
                    (meta.get("namespace") or args.namespace or "default") if res.namespaced else None,
                    str(meta.get("name") or ""),
                    m.source,
                )
            )
    else:
        if not args.resources:
            raise CommandError("You must provide one or more resources by argument or filename.")
        for t in parse_targets(disc, args.resources):
            tns = ns if t.res.namespaced else None
            if t.names:
                work.extend((t.res, tns, n, "") for n in t.names)
                continue
            if not (args.all or args.selector or args.field_selector):
                raise CommandError("resource(s) were provided, but no name was specified")
            params = {}
            if args.selector:
                params["labelSelector"] = args.selector
            if args.field_selector:
                params["fieldSelector"] = args.field_selector
            lst = await list_all(api, t.res.path(None if args.all_namespaces else tns), params)
            items = lst.get("items") or []
            if not items:
                no_resources(err, args, [t])
            for o in items:
                meta = o.get("metadata") or {}
                work.append(
                    (t.res, meta.get("namespace") if t.res.namespaced else None, meta.get("name", ""), "")
                )
    pal = Palette.for_stream(out)
    deleted: list[_Deleted] = []
    for res, wns, name, source in work:
        body: JsonDict = {
            "kind": "DeleteOptions",
            "apiVersion": "v1",
            "propagationPolicy": {"background": "Background", "foreground": "Foreground", "orphan": "Orphan"}[
                args.cascade
            ],
        }
        if grace >= 0:
            body["gracePeriodSeconds"] = grace
        try:
            resp = await api.call("DELETE", res.path(wns, name), body=body) or {}
        except NotFoundError as e:
            if not args.ignore_not_found:
                print(format_error(e, source=source, verb="deleting"), file=err)
                rc = 1
            continue
        except ApiError as e:
            print(format_error(e, source=source, verb="deleting"), file=err)
            rc = 1
            continue
        uid = (
            (resp.get("metadata") or {}).get("uid")
            if resp.get("kind") != "Status"
            else (resp.get("details") or {}).get("uid")
        )
        word = "force deleted" if immediate else "deleted"
        print(f'{res.kind_group} "{name}" {pal.paint("red", word)}', file=out, flush=True)
        deleted.append(_Deleted(res, wns, name, str(uid or "")))
    if args.wait and not immediate and deleted:
        timeout = args.timeout if args.timeout and args.timeout > 0 else None
        spinner = _Progress(err, f"waiting for {len(deleted)} object(s) to be deleted")
        try:
            async with asyncio.timeout(timeout):
                await asyncio.gather(*(wait_deleted(api, d) for d in deleted))
        except TimeoutError:
            spinner.stop()
            for d in deleted:
                print(
                    f"error: timed out waiting for the condition on {d.res.resource_group}/{d.name}", file=err
                )
            return 1
        finally:
            spinner.stop()
    return rc


async def wait_deleted(api: Api, d: _Deleted) -> None:
    """Until no object named `d.name` with `d.uid` exists: list, then watch from the list's RV
    (kubectl's `wait --for=delete`); a closed stream relists."""
    coll = d.res.path(d.namespace)
    sel = {"fieldSelector": f"metadata.name={d.name}"}
    while True:
        lst = await api.call("GET", coll, params=dict(sel, limit=LIST_CHUNK))
        items = lst.get("items") or []
        if not items or (d.uid and (items[0].get("metadata") or {}).get("uid") != d.uid):
            return
        rv = (lst.get("metadata") or {}).get("resourceVersion") or ""
        params = dict(sel, watch="true", allowWatchBookmarks="true", timeoutSeconds="300")
        if rv:
            params["resourceVersion"] = rv
        async for ev in api.stream(coll, params):
            meta = (ev.object or {}).get("metadata") or {}
            if ev.type == "DELETED" and (not d.uid or meta.get("uid") == d.uid):
                return
            if ev.type in ("ADDED", "MODIFIED") and d.uid and meta.get("uid") not in (None, d.uid):
                return
            if ev.type == "ERROR":
                break


class _Progress:
    """A one-line progress note on stderr while waiting, only on a terminal."""

    def __init__(self, stream: TextIO, text: str) -> None:
        self.stream = stream
        self.active = bool(getattr(stream, "isatty", lambda: False)())
        if self.active:
            stream.write(f"{text}…\r")
            stream.flush()
        self.width = len(text) + 1

    def stop(self) -> None:
        if self.active:
            self.stream.write(" " * self.width + "\r")
            self.stream.flush()
            self.active = False
