"""`minik3s get [-w]` (layer L5, CLI): lists as server-side Tables or objects, then the watch.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from minik3s.api.errors import ApiError
from minik3s.api.types import JsonDict
from minik3s.cli.kubectl.api import JSON, TABLE_ACCEPT, Api, list_all
from minik3s.cli.kubectl.discovery import (
    ApiResource,
    Discovery,
    Target,
    no_resources,
    parse_targets,
    target_namespace,
)
from minik3s.cli.kubectl.errors import CommandError, format_error
from minik3s.cli.kubectl.palette import Palette
from minik3s.cli.kubectl.printers import (
    TablePrinter,
    as_list,
    for_output,
    to_json,
    to_yaml,
)


async def run_get(api: Api, disc: Discovery, args: argparse.Namespace, *, out: TextIO, err: TextIO) -> int:
    targets = parse_targets(disc, args.resources)
    output = args.output or ""
    if output not in ("", "wide", "yaml", "json", "name"):
        raise CommandError(
            f'unable to match a printer suitable for the output format "{output}", allowed '
            "formats are: json,name,wide,yaml"
        )
    if args.all_namespaces and any(t.names and t.res.namespaced for t in targets):
        raise CommandError("a resource cannot be retrieved by name across all namespaces")
    if args.watch or args.watch_only:
        if len(targets) != 1:
            raise CommandError("you may only specify a single resource type")
        return await _watch(api, targets[0], args, out=out, err=err)
    ns = target_namespace(args)
    pal = Palette.for_stream(out)
    rc = 0
    params = {}
    if args.selector:
        params["labelSelector"] = args.selector
    if args.field_selector:
        params["fieldSelector"] = args.field_selector

    if output in ("yaml", "json", "name"):
        objs: list[tuple[ApiResource, JsonDict]] = []
        single = len(targets) == 1 and len(targets[0].names) == 1
        for t in targets:
            if t.names:
                for n in t.names:
                    try:
                        objs.append((t.res, await api.call("GET", t.res.path(ns, n))))
                    except ApiError as e:
                        print(format_error(e), file=err)
                        rc = 1
            else:
                lst = await list_all(api, t.res.path(None if args.all_namespaces else ns), params)
                objs.extend((t.res, o) for o in lst.get("items") or [])
        if output == "name":
            for res, o in objs:
                print(f"{res.kind_group}/{(o.get('metadata') or {}).get('name', '')}", file=out)
        elif objs or not single:
            docs = [for_output(o, r) for r, o in objs]
            doc = docs[0] if single and docs else as_list(docs)
            out.write(to_yaml(doc) if output == "yaml" else to_json(doc) + "\n")
        if not objs and not any(t.names for t in targets) and output == "name":
            no_resources(err, args, targets)
        return rc

    printed_any = False
    for t in targets:
        printer = TablePrinter(
            out,
            pal,
            wide=output == "wide",
            all_namespaces=args.all_namespaces and t.res.namespaced,
            show_labels=args.show_labels,
            no_headers=args.no_headers,
            name_prefix=t.res.kind_group if len(targets) > 1 else "",
        )
        if t.names:
            table: JsonDict | None = None
            for n in t.names:
                try:
                    one = await api.call("GET", t.res.path(ns, n), accept=TABLE_ACCEPT)
                except ApiError as e:
                    print(format_error(e), file=err)
                    rc = 1
                    continue
                if one.get("kind") != "Table":
                    one = printer.fallback_table(one)
                if table is None:
                    table = one
                else:
                    table.setdefault("rows", []).extend(one.get("rows") or [])
            if table is not None and table.get("rows"):
                if printed_any:
                    out.write("\n")
                printer.print_table(table)
                printed_any = True
            continue
        path = t.res.path(None if args.all_namespaces else ns)
        table = await list_all(api, path, params, accept=TABLE_ACCEPT)
        rows = table.get("rows") if table.get("kind") == "Table" else table.get("items")
        if not rows:
            continue
        if printed_any:
            out.write("\n")
        printer.print_table(table)
        printed_any = True
    if not printed_any and not any(t.names for t in targets):
        no_resources(err, args, targets)
    return rc



async def _watch(api: Api, t: Target, args: argparse.Namespace, *, out: TextIO, err: TextIO) -> int:
    """`get -w`: the list (unless --watch-only), then every watch event's row until the server
    closes the stream (exit 0, as kubectl)."""
    ns = None if args.all_namespaces else target_namespace(args)
    output = args.output or ""
    table_mode = output in ("", "wide")
    accept = TABLE_ACCEPT if table_mode else JSON
    printer = TablePrinter(
        out,
        Palette.for_stream(out),
        wide=output == "wide",
        all_namespaces=args.all_namespaces and t.res.namespaced,
        show_labels=args.show_labels,
        no_headers=args.no_headers,
    )
    fields = [args.field_selector] if args.field_selector else []
    if len(t.names) > 1:
        raise CommandError(
            "watch is only supported on individual resources and resource collections, but "
            f"{len(t.names)} resources were found"
        )
    if t.names:
        fields.append(f"metadata.name={t.names[0]}")
    params: dict[str, str] = {}
    if args.selector:
        params["labelSelector"] = args.selector
    if fields:
        params["fieldSelector"] = ",".join(fields)
    first_doc = True

    def emit_obj(obj: JsonDict) -> None:
        nonlocal first_doc
        if output == "name":
            print(f"{t.res.kind_group}/{(obj.get('metadata') or {}).get('name', '')}", file=out, flush=True)
            return
        o = for_output(obj, t.res)
        if output == "yaml":
            out.write(("" if first_doc else "---\n") + to_yaml(o))
        else:
            out.write(to_json(o) + "\n")
        first_doc = False
        out.flush()

    # kubectl: a list watch starts at the list's resourceVersion (no initial events); a single
    # object watch starts at "0" and its first (synthetic ADDED) event is not printed.
    rv = "0"
    if t.names:
        if not args.watch_only:
            try:
                obj = await api.call("GET", t.res.path(ns, t.names[0]), accept=accept)
            except ApiError as e:
                print(format_error(e), file=err)
                return 1
            printer.print_table(obj) if table_mode else emit_obj(obj)
    else:
        lst = await list_all(api, t.res.path(ns), params, accept=accept)
        rv = str((lst.get("metadata") or {}).get("resourceVersion") or "0")
        if not args.watch_only:
            if table_mode:
                if lst.get("rows") or lst.get("items"):
                    printer.print_table(lst)
            else:
                for o in lst.get("items") or []:
                    emit_obj(o)
    wparams = dict(params, watch="true", resourceVersion=rv)
    skip_first = bool(t.names)
    async for ev in api.stream(t.res.path(ns), wparams, accept=accept):
        typ = ev.type
        obj = ev.object or {}
        if skip_first and typ != "ERROR":
            skip_first = False
            if table_mode:
                printer.column_defs = obj.get("columnDefinitions") or printer.column_defs
            continue
        if typ == "ERROR":
            printer.print_status_row(obj)
            return 0
        if typ == "BOOKMARK":
            continue
        if table_mode:
            printer.print_table(obj)
        else:
            emit_obj(obj)
    return 0
