"""The built-in client commands `minik3s apply|get|delete|describe` (layer L5, CLI).

Why: people without kubectl still need to put manifests into the cluster and look at it. These
commands speak only the public HTTP API, exactly as kubectl 1.33 does, so what they show is what
kubectl would show:

- names are resolved through the server's discovery documents (`/api`, `/api/v1`, `/apis`,
  `/apis/<g>/<v>`): plural, singular, short name, kind, `resource.group`, `resource.version.group`;
- `get` asks for server-side Tables (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`) and
  lays the cells out with the same elastic tab stops kubectl uses (Go text/tabwriter with
  minwidth 6, padding 3, widths remembered across a watch);
- `apply` is server-side apply with field manager `minik3s-apply` and `force=true` (see
  `run_apply` for why), reporting created / configured / unchanged;
- `delete` waits for graceful deletion to finish (list + watch on `metadata.name`) unless
  `--wait=false`;
- `describe` prints kubectl's sections for pods and nodes, the generic describer's nested dump
  for every other kind, and the object's Events.

Data flow: argparse → `_cmd_*` (sync, runs the event loop via `minik3s.cli._run_async`) →
`run_*` coroutines → `Api` (HTTP through `minik3s.client.rest.HttpClient`'s session) →
renderers (`TabWriter`, YAML/JSON printers) → stdout; errors go to stderr as kubectl prints
them (`Error from server (NotFound): pods "nope" not found`) and the command exits 1.
Colour only when the stream is a terminal and `NO_COLOR` is unset.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

import orjson
import yaml

from minik3s.api.errors import ApiError, NotFoundError
from minik3s.api.types import JsonDict
from minik3s.client.rest import error_from_response
from minik3s.utils import clock as _clock

logger = logging.getLogger(__name__)

TABLE_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
    "application/json"
)
JSON = "application/json"
APPLY_CONTENT_TYPE = "application/apply-patch+yaml"
FIELD_MANAGER = "minik3s-apply"
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
LIST_CHUNK = "500"


class CommandError(Exception):
    """A client-side failure; printed as `error: <message>` like kubectl's `fatal`."""


class ConnectionRefusedError_(CommandError):
    """The server cannot be reached; kubectl prints this one without the `error: ` prefix."""


# ---------------------------------------------------------------------------------------------
# Terminal output: colour, Go-style elastic tab stops, durations


class Palette:
    """ANSI colour, enabled only for terminals and when NO_COLOR is unset (https://no-color.org)."""

    CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @staticmethod
    def for_stream(stream: TextIO) -> Palette:
        isatty = getattr(stream, "isatty", None)
        return Palette(bool(isatty and isatty()) and not os.environ.get("NO_COLOR"))

    def paint(self, style: str, text: str) -> str:
        if not self.enabled or not text or style not in self.CODES:
            return text
        return f"\033[{self.CODES[style]}m{text}\033[0m"


_GOOD = {"Running", "Ready", "Active", "Succeeded", "Completed", "Bound", "True", "Available"}
_WARN = {"Pending", "ContainerCreating", "Terminating", "Unknown", "PodInitializing", "SchedulingGated"}
_BAD = {
    "Failed",
    "Error",
    "CrashLoopBackOff",
    "ErrImagePull",
    "ImagePullBackOff",
    "Evicted",
    "OOMKilled",
    "NotReady",
    "False",
    "Unschedulable",
}


def status_style(text: str) -> str:
    """Colour for a STATUS-like cell: `Ready,SchedulingDisabled` → yellow, `Init:0/1` → yellow."""
    parts = [p for p in text.split(",") if p]
    if any(p in _BAD or p.startswith("Init:Err") or p.startswith("ExitCode:") for p in parts):
        return "red"
    if any(p in _WARN or p.startswith("Init:") or p == "SchedulingDisabled" for p in parts):
        return "yellow"
    if parts and all(p in _GOOD for p in parts):
        return "green"
    return ""


Styler = Callable[[int, int, str], str]


class TabWriter:
    """Go's text/tabwriter (elastic tab stops), as kubectl uses it (liggitt/tabwriter).

    Text is split into lines and cells at tabs; a cell terminated by a tab belongs to a column,
    the last cell of a line does not. A *column block* is a run of consecutive lines that all have
    a tab-terminated cell in that column; its width is max(minwidth, longest cell + padding).
    With `remember_widths` a column never shrinks across `render` calls (kubectl `get -w`).

    Worked example (minwidth 6, padding 3): lines "NAME\\tAGE" and "web-1\\t5m" give column 0 the
    width max(6, 5 + 3) = 8, so the output is "NAME    AGE" and "web-1   5m".
    """

    def __init__(self, *, minwidth: int = 6, padding: int = 3, remember_widths: bool = False) -> None:
        self.minwidth = minwidth
        self.padding = padding
        self.remember = remember_widths
        self._max_widths: list[int] = []

    def render(self, text: str, *, style: Styler | None = None) -> str:
        raw = text.split("\n")
        trailing_newline = raw and raw[-1] == ""
        if trailing_newline:
            raw.pop()
        lines = [ln.split("\t") for ln in raw]
        out: list[str] = []
        widths: list[int] = []

        def write_lines(line0: int, line1: int) -> None:
            for i in range(line0, line1):
                cells = lines[i]
                parts = []
                for j, c in enumerate(cells):
                    shown = style(i, j, c) if style else c
                    if j < len(widths):
                        parts.append(shown + " " * max(0, widths[j] - len(c)))
                    else:
                        parts.append(shown)
                out.append("".join(parts))

        def fmt(line0: int, line1: int) -> None:
            column = len(widths)
            this = line0
            while this < line1:
                if column >= len(lines[this]) - 1:
                    this += 1
                    continue
                write_lines(line0, this)
                line0 = this
                width = self.minwidth
                while this < line1 and column < len(lines[this]) - 1:
                    width = max(width, len(lines[this][column]) + self.padding)
                    this += 1
                if self.remember:
                    if column < len(self._max_widths):
                        width = max(width, self._max_widths[column])
                        self._max_widths[column] = width
                    else:
                        self._max_widths.append(width)
                widths.append(width)
                fmt(line0, this)
                widths.pop()
                line0 = this
            write_lines(line0, line1)

        fmt(0, len(lines))
        return "\n".join(out) + ("\n" if trailing_newline else "")


def human_duration(seconds: float) -> str:
    """apimachinery's `duration.HumanDuration` of a number of seconds (45s, 3m20s, 2d3h, ...)."""
    return _clock.human_duration(timedelta(seconds=seconds))


def _parse_time(s: Any) -> datetime | None:
    return _clock.parse_time(s)


def _age(ts: Any, now: datetime) -> str:
    t = _parse_time(ts)
    return "<unknown>" if t is None else human_duration((now - t).total_seconds())


# ---------------------------------------------------------------------------------------------
# Errors, as kubectl prints them


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


# ---------------------------------------------------------------------------------------------
# HTTP


class Api:
    """Thin request layer over `HttpClient`'s session with the Accept header a command needs."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def _unreachable(self, e: BaseException) -> CommandError:
        host = self.client.base_url.split("://", 1)[-1]
        logger.debug("server unreachable url=%s error=%s", self.client.base_url, e)
        return ConnectionRefusedError_(
            f"The connection to the server {host} was refused - did you specify the right host or port?"
        )

    async def call(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: Any = None,
        content_type: str = JSON,
        accept: str = JSON,
    ) -> Any:
        headers = {"Accept": accept}
        data = None
        if body is not None:
            data = orjson.dumps(body)
            headers["Content-Type"] = content_type
        try:
            async with self.client.session.request(
                method, self.client.base_url + path, params=params, data=data, headers=headers
            ) as resp:
                payload = await resp.read()
                if resp.status >= 300:
                    raise error_from_response(resp.status, payload)
                return orjson.loads(payload) if payload else None
        except OSError as e:
            raise self._unreachable(e) from e

    async def stream(
        self, path: str, params: dict[str, str], *, accept: str = JSON
    ) -> AsyncIterator[JsonDict]:
        """A watch: one decoded event per line until the server closes the stream."""
        try:
            resp = await self.client.session.get(
                self.client.base_url + path, params=params, headers={"Accept": accept}, timeout=None
            )
        except OSError as e:
            raise self._unreachable(e) from e
        try:
            if resp.status >= 300:
                raise error_from_response(resp.status, await resp.read())
            buf = b""
            while True:
                try:
                    chunk = await resp.content.readany()
                except OSError:
                    return
                if not chunk:
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        yield orjson.loads(line)
        finally:
            resp.close()


# ---------------------------------------------------------------------------------------------
# Discovery and name resolution


@dataclass(slots=True)
class ApiResource:
    """One resource from an APIResourceList."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: list[str] = field(default_factory=list)
    verbs: list[str] = field(default_factory=list)
    preferred: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def kind_group(self) -> str:
        """What kubectl prints before a name: `pod`, `deployment.apps`, `priorityclass.scheduling.k8s.io`."""
        return self.kind.lower() + (f".{self.group}" if self.group else "")

    @property
    def resource_group(self) -> str:
        return self.resource + (f".{self.group}" if self.group else "")

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.resource}"
        return base + (f"/{name}" if name else "")


class Discovery:
    """The server's resources in kubectl's priority order: core first, then /apis order, preferred
    version before others."""

    def __init__(self, resources: list[ApiResource]) -> None:
        self.resources = resources

    @staticmethod
    async def load(api: Api) -> Discovery:
        gvs: list[tuple[str, str, bool]] = []
        core = await api.call("GET", "/api")
        for i, v in enumerate((core or {}).get("versions") or []):
            gvs.append(("", v, i == 0))
        groups = await api.call("GET", "/apis")
        for g in (groups or {}).get("groups") or []:
            preferred = (g.get("preferredVersion") or {}).get("version")
            versions = [str(v.get("version")) for v in g.get("versions") or []]
            ordered = ([str(preferred)] if preferred in versions else []) + [
                v for v in versions if v != preferred
            ]
            gvs.extend((str(g["name"]), v, v == ordered[0]) for v in ordered)

        async def fetch(group: str, version: str) -> JsonDict:
            path = f"/apis/{group}/{version}" if group else f"/api/{version}"
            try:
                return await api.call("GET", path) or {}
            except ApiError:
                return {}

        docs = await asyncio.gather(*(fetch(g, v) for g, v, _ in gvs))
        out: list[ApiResource] = []
        for (g, v, pref), doc in zip(gvs, docs, strict=True):
            for r in doc.get("resources") or []:
                if "/" in r.get("name", ""):
                    continue
                out.append(
                    ApiResource(
                        group=g,
                        version=v,
                        resource=r["name"],
                        kind=r.get("kind", ""),
                        namespaced=bool(r.get("namespaced")),
                        singular=r.get("singularName") or r.get("kind", "").lower(),
                        short_names=list(r.get("shortNames") or []),
                        verbs=list(r.get("verbs") or []),
                        preferred=pref,
                    )
                )
        return Discovery(out)

    def resolve(self, arg: str) -> ApiResource:
        """`po`, `pods`, `pod`, `Pod`, `deployments.apps`, `deploy.v1.apps` → the resource.

        Short names are expanded first (kubectl's shortcut expander), then plural, singular and
        kind are matched case-insensitively; preferred versions win.
        """
        name = arg.strip().lower()
        qualifier = ""
        if "." in name:
            name, qualifier = name.split(".", 1)

        def qualified(r: ApiResource) -> bool:
            return not qualifier or qualifier in (r.group, f"{r.version}.{r.group}", r.version)

        ordered = sorted(self.resources, key=lambda r: not r.preferred)
        for r in ordered:
            if qualified(r) and name in (s.lower() for s in r.short_names):
                return r
        for r in ordered:
            if qualified(r) and name in (r.resource, r.singular, r.kind.lower()):
                return r
        raise CommandError(f'the server doesn\'t have a resource type "{arg}"')

    def for_kind(self, api_version: str, kind: str) -> ApiResource | None:
        group, _, version = api_version.rpartition("/")
        for r in self.resources:
            if r.group == group and r.version == version and r.kind == kind:
                return r
        return None


# ---------------------------------------------------------------------------------------------
# Manifests


@dataclass(slots=True)
class Manifest:
    source: str
    obj: JsonDict


def _manifest_files(paths: Iterable[str], *, recursive: bool) -> list[str]:
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        path = Path(p)
        if path.is_dir():
            found = path.rglob("*") if recursive else path.iterdir()
            out.extend(str(f) for f in sorted(found) if f.is_file() and f.suffix in MANIFEST_SUFFIXES)
        elif path.exists():
            out.append(str(path))
        else:
            raise CommandError(f'the path "{p}" does not exist')
    return out


def load_manifests(
    paths: Iterable[str], *, recursive: bool = False, stdin: TextIO | None = None, verb: str = "apply"
) -> list[Manifest]:
    """Every object in FILE|DIR|- (multi-document YAML or JSON; `kind: List` is expanded)."""
    result: list[Manifest] = []
    for f in _manifest_files(paths, recursive=recursive):
        text = (stdin or sys.stdin).read() if f == "-" else Path(f).read_text()
        source = "STDIN" if f == "-" else f
        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError as e:
            raise CommandError(f"error parsing {source}: {e}") from e
        for doc in docs:
            if doc is None:
                continue
            if not isinstance(doc, dict):
                raise CommandError(f"error parsing {source}: a document is not an object")
            items = (
                doc.get("items") if str(doc.get("kind", "")).endswith("List") and "items" in doc else [doc]
            )
            for obj in items or []:
                if not obj.get("kind") or not obj.get("apiVersion"):
                    missing = "kind" if not obj.get("kind") else "apiVersion"
                    raise CommandError(
                        f'error validating "{source}": error validating data: {missing} not set'
                    )
                result.append(Manifest(source, _json_safe(obj)))
    if not result:
        raise CommandError(f"no objects passed to {verb}")
    return result


def _json_safe(v: Any) -> Any:
    """YAML can load dates and timestamps as Python objects; the API wants strings."""
    if isinstance(v, dict):
        return {str(k): _json_safe(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_safe(x) for x in v]
    if isinstance(v, datetime):
        return (
            v.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if v.tzinfo else v.strftime("%Y-%m-%dT%H:%M:%SZ")
        )
    if hasattr(v, "isoformat") and not isinstance(v, str | int | float | bool):
        return v.isoformat()
    return v


# ---------------------------------------------------------------------------------------------
# Output printers (-o yaml / json / name)


class _GoYamlDumper(yaml.SafeDumper):  # type: ignore[misc]
    """YAML the way kubectl prints it (sigs.k8s.io/yaml): keys sorted, sequences not indented,
    no line wrapping, double quotes where a plain scalar would be ambiguous, `|` for multi-line."""

    def choose_scalar_style(self) -> str:
        style = super().choose_scalar_style()
        return '"' if style == "'" else style


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data and not any(line != line.rstrip() for line in data.split("\n")):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_GoYamlDumper.add_representer(str, _str_representer)


def to_yaml(obj: Any) -> str:
    return str(
        yaml.dump(
            obj,
            Dumper=_GoYamlDumper,
            sort_keys=True,
            default_flow_style=False,
            allow_unicode=True,
            width=1 << 30,
        )
    )


def to_json(obj: Any) -> str:
    """Go's json.MarshalIndent(obj, "", "    "): sorted keys, HTML characters escaped."""
    text = json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _for_output(obj: JsonDict, res: ApiResource) -> JsonDict:
    o = copy.deepcopy(obj)
    o.setdefault("apiVersion", res.api_version)
    o.setdefault("kind", res.kind)
    meta = o.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)  # kubectl --show-managed-fields=false
    return dict(sorted(o.items()))


def _as_list(items: list[JsonDict]) -> JsonDict:
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


# ---------------------------------------------------------------------------------------------
# Shared argument handling


@dataclass(slots=True)
class Target:
    res: ApiResource
    names: list[str]


def parse_targets(disc: Discovery, args: list[str]) -> list[Target]:
    """`pods`, `pods a b`, `pod/a deploy/b`, `pods,nodes` → resources with names."""
    if not args:
        raise CommandError("You must specify the type of resource, e.g. pods, nodes, deployments")
    if any("/" in a for a in args):
        out: list[Target] = []
        for a in args:
            if "/" not in a:
                raise CommandError(
                    "there is no need to specify a resource type as a separate argument when "
                    "passing arguments in resource/name form (e.g. 'minik3s get resource/<name>' "
                    "instead of 'minik3s get resource resource/<name>'"
                )
            kind, _, name = a.partition("/")
            res = disc.resolve(kind)
            if out and out[-1].res is res:
                out[-1].names.append(name)
            else:
                out.append(Target(res, [name]))
        return out
    kinds = [k for k in args[0].split(",") if k]
    if len(kinds) > 1 and args[1:]:
        raise CommandError("arguments in resource/name form must have a single resource and name")
    return [Target(disc.resolve(k), list(args[1:])) for k in kinds]


def _namespace(args: argparse.Namespace) -> str:
    return str(getattr(args, "namespace", None) or "default")


async def _list_all(api: Api, path: str, params: dict[str, str], *, accept: str = JSON) -> JsonDict:
    """A paginated list (limit=500 + continue), pages concatenated."""
    merged: JsonDict | None = None
    cont = ""
    while True:
        p = dict(params, limit=LIST_CHUNK)
        if cont:
            p["continue"] = cont
        page = await api.call("GET", path, params=p, accept=accept)
        key = "rows" if page.get("kind") == "Table" else "items"
        if merged is None:
            merged = page
        else:
            merged.setdefault(key, []).extend(page.get(key) or [])
        cont = (page.get("metadata") or {}).get("continue") or ""
        if not cont:
            (merged.setdefault("metadata", {})).pop("continue", None)
            return merged


# ---------------------------------------------------------------------------------------------
# apply


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


# ---------------------------------------------------------------------------------------------
# get


@dataclass(slots=True)
class TablePrinter:
    """Prints server-side Tables like kubectl's table printer: upper-cased headers, priority-1
    columns only with `-o wide`, NAMESPACE first with `-A`, LABELS last with `--show-labels`."""

    out: TextIO
    pal: Palette
    wide: bool = False
    all_namespaces: bool = False
    show_labels: bool = False
    no_headers: bool = False
    name_prefix: str = ""
    writer: TabWriter = field(default_factory=lambda: TabWriter(minwidth=6, padding=3, remember_widths=True))
    header_done: bool = False
    column_defs: list[JsonDict] = field(default_factory=list)
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    def _columns(self, table: JsonDict) -> list[tuple[int, JsonDict]]:
        # watch events after the first carry `columnDefinitions: null`: keep the last ones seen
        cols = table.get("columnDefinitions") or self.column_defs
        self.column_defs = cols
        return [(i, c) for i, c in enumerate(cols) if self.wide or not c.get("priority")]

    def print_table(self, table: JsonDict) -> None:
        if table.get("kind") != "Table":
            table = self.fallback_table(table)
        cols = self._columns(table)
        header = [str(c.get("name", "")).upper() for _, c in cols]
        if self.all_namespaces:
            header.insert(0, "NAMESPACE")
        if self.show_labels:
            header.append("LABELS")
        status_cols = {j for j, h in enumerate(header) if h == "STATUS"}
        lines: list[str] = []
        if not self.header_done and not self.no_headers:
            lines.append("\t".join(header))
        for row in table.get("rows") or []:
            cells = row.get("cells") or []
            meta = ((row.get("object") or {}).get("metadata")) or {}
            vals = []
            for i, c in cols:
                v = cells[i] if i < len(cells) else None
                text = self._cell(v)
                if c.get("format") == "name" and self.name_prefix:
                    text = f"{self.name_prefix}/{text}"
                vals.append(text)
            if self.all_namespaces:
                vals.insert(0, str(meta.get("namespace") or ""))
            if self.show_labels:
                labels = meta.get("labels") or {}
                vals.append(",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>")
            lines.append("\t".join(vals))
        header_line = 0 if lines and not self.header_done and not self.no_headers else -1
        self.header_done = True
        if not lines:
            return

        def style(line: int, col: int, text: str) -> str:
            if line == header_line:
                return self.pal.paint("bold", text)
            if col in status_cols:
                return self.pal.paint(status_style(text), text)
            return text

        self.out.write(self.writer.render("\n".join(lines) + "\n", style=style if self.pal.enabled else None))
        self.out.flush()

    @staticmethod
    def _cell(v: Any) -> str:
        if v is None:
            return ""
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        text = str(v)
        for i, ch in enumerate(text):
            if ch in "\f\n\r":
                return text[:i] + "..."
        return text

    def fallback_table(self, lst: JsonDict) -> JsonDict:
        """A plain list or object (server without Tables): NAME and AGE, as kubectl does."""
        items = lst.get("items") if "items" in lst else [lst]
        now = self.now()
        rows = [
            {
                "cells": [
                    (o.get("metadata") or {}).get("name", ""),
                    _age((o.get("metadata") or {}).get("creationTimestamp"), now),
                ],
                "object": {"metadata": o.get("metadata") or {}},
            }
            for o in items or []
        ]
        return {
            "kind": "Table",
            "columnDefinitions": [
                {"name": "Name", "format": "name", "priority": 0},
                {"name": "Age", "priority": 0},
            ],
            "rows": rows,
        }

    def print_status_row(self, status: JsonDict) -> None:
        """An ERROR watch event, printed as kubectl does (STATUS REASON MESSAGE)."""
        text = (
            "STATUS\tREASON\tMESSAGE\n"
            + "\t".join(str(status.get(k, "")) for k in ("status", "reason", "message"))
            + "\n"
        )
        self.out.write(TabWriter().render(text))
        self.out.flush()


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
    ns = _namespace(args)
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
                lst = await _list_all(api, t.res.path(None if args.all_namespaces else ns), params)
                objs.extend((t.res, o) for o in lst.get("items") or [])
        if output == "name":
            for res, o in objs:
                print(f"{res.kind_group}/{(o.get('metadata') or {}).get('name', '')}", file=out)
        elif objs or not single:
            docs = [_for_output(o, r) for r, o in objs]
            doc = docs[0] if single and docs else _as_list(docs)
            out.write(to_yaml(doc) if output == "yaml" else to_json(doc) + "\n")
        if not objs and not any(t.names for t in targets) and output == "name":
            _no_resources(err, args, targets)
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
        table = await _list_all(api, path, params, accept=TABLE_ACCEPT)
        rows = table.get("rows") if table.get("kind") == "Table" else table.get("items")
        if not rows:
            continue
        if printed_any:
            out.write("\n")
        printer.print_table(table)
        printed_any = True
    if not printed_any and not any(t.names for t in targets):
        _no_resources(err, args, targets)
    return rc


def _no_resources(err: TextIO, args: argparse.Namespace, targets: list[Target]) -> None:
    if args.all_namespaces or not any(t.res.namespaced for t in targets):
        print("No resources found", file=err)
    else:
        print(f"No resources found in {_namespace(args)} namespace.", file=err)


async def _watch(api: Api, t: Target, args: argparse.Namespace, *, out: TextIO, err: TextIO) -> int:
    """`get -w`: the list (unless --watch-only), then every watch event's row until the server
    closes the stream (exit 0, as kubectl)."""
    ns = None if args.all_namespaces else _namespace(args)
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
        o = _for_output(obj, t.res)
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
        lst = await _list_all(api, t.res.path(ns), params, accept=accept)
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
        typ = ev.get("type")
        obj = ev.get("object") or {}
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


# ---------------------------------------------------------------------------------------------
# delete


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
    ns = _namespace(args)
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
            lst = await _list_all(api, t.res.path(None if args.all_namespaces else tns), params)
            items = lst.get("items") or []
            if not items:
                _no_resources(err, args, [t])
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
            meta = (ev.get("object") or {}).get("metadata") or {}
            if ev.get("type") == "DELETED" and (not d.uid or meta.get("uid") == d.uid):
                return
            if ev.get("type") in ("ADDED", "MODIFIED") and d.uid and meta.get("uid") not in (None, d.uid):
                return
            if ev.get("type") == "ERROR":
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


# ---------------------------------------------------------------------------------------------
# describe


class PrefixWriter:
    """kubectl's describe writer: `write(level, "Key:\\tvalue\\n")`, two spaces per level, then the
    whole text aligned by a tabwriter with minwidth 0, padding 2."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, level: int, text: str) -> None:
        self.parts.append("  " * level + text)

    def render(self) -> str:
        return TabWriter(minwidth=0, padding=2).render("".join(self.parts))


def _describe_time(ts: Any) -> str:
    t = _parse_time(ts)
    return t.astimezone().strftime("%a, %d %b %Y %H:%M:%S %z") if t else "<unknown>"


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
MAX_ANNOTATION_LEN = 140


def _multiline_map(
    w: PrefixWriter, level: int, title: str, m: dict[str, Any] | None, *, sep: str = "="
) -> None:
    """Labels (`k=v`) or annotations (`k: v`, sep ": "; the last-applied annotation hidden, long
    values cut at 140 characters), one per line, the first on the title's line."""
    w.write(level, f"{title}:\t")
    if m and sep != "=":
        m = {
            k: (str(v)[:MAX_ANNOTATION_LEN] + "..." if len(str(v)) > MAX_ANNOTATION_LEN else v)
            for k, v in m.items()
            if k != LAST_APPLIED
        }
    if not m:
        w.write(0, "<none>\n")
        return
    for i, k in enumerate(sorted(m)):
        line = f"{k}{sep}{m[k]}\n"
        w.write(0, line) if i == 0 else w.write(level, "\t" + line)


def smart_label(key: str) -> str:
    """kubectl's generic describer label: minMember → "Min Member", uid → "UID"; keys with
    characters other than letters and '-' (label keys like app.kubernetes.io/name) stay as they are."""
    if any(not (ch.isalpha() or ch == "-") for ch in key):
        return key
    words: list[str] = []
    cur = ""
    for i, ch in enumerate(key):
        boundary = (
            ch.isupper() and cur and (not key[i - 1].isupper() or (i + 1 < len(key) and key[i + 1].islower()))
        )
        if boundary:
            words.append(cur)
            cur = ""
        cur += ch
    if cur:
        words.append(cur)
    acronyms = {"API", "URL", "UID", "OSB", "GUID"}
    return " ".join(w.upper() if w.upper() in acronyms else w[:1].upper() + w[1:] for w in words)


def _unstructured(w: PrefixWriter, level: int, value: Any, skip: set[str], prefix: str = "") -> None:
    if isinstance(value, dict):
        for k in sorted(value):
            path = f"{prefix}.{k}"
            if path in skip:
                continue
            v = value[k]
            label = smart_label(k)
            if isinstance(v, dict):
                w.write(level, f"{label}:\n")
                _unstructured(w, level + 1, v, skip, path)
            elif isinstance(v, list):
                w.write(level, f"{label}:\n")
                for item in v:
                    if isinstance(item, dict):
                        _unstructured(w, level + 1, item, skip, path)
                    else:
                        w.write(level + 1, f"{_scalar(item)}\n")
            else:
                w.write(level, f"{label}:\t{_scalar(v)}\n")


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return "<nil>" if v is None else str(v)


def _toleration(t: JsonDict) -> str:
    s = str(t.get("key") or "")
    if t.get("value"):
        s += f"={t['value']}"
    if t.get("effect"):
        s += f":{t['effect']}"
    if t.get("operator") == "Exists" and not t.get("value"):
        s += " op=Exists" if (t.get("key") or t.get("effect")) else "op=Exists"
    if t.get("tolerationSeconds") is not None:
        s += f" for {t['tolerationSeconds']}s"
    return s


def _write_list(w: PrefixWriter, level: int, title: str, values: list[str]) -> None:
    w.write(level, f"{title}:\t")
    if not values:
        w.write(0, "<none>\n")
        return
    for i, v in enumerate(values):
        w.write(0, v + "\n") if i == 0 else w.write(level, "\t" + v + "\n")


def _container_state(w: PrefixWriter, title: str, st: JsonDict | None) -> None:
    st = st or {}
    if "running" in st:
        w.write(2, f"{title}:\tRunning\n")
        w.write(3, f"Started:\t{_describe_time((st['running'] or {}).get('startedAt'))}\n")
    elif "waiting" in st:
        w.write(2, f"{title}:\tWaiting\n")
        if (st["waiting"] or {}).get("reason"):
            w.write(3, f"Reason:\t{st['waiting']['reason']}\n")
    elif "terminated" in st:
        t = st["terminated"] or {}
        w.write(2, f"{title}:\tTerminated\n")
        if t.get("reason"):
            w.write(3, f"Reason:\t{t['reason']}\n")
        if t.get("message"):
            w.write(3, f"Message:\t{t['message']}\n")
        w.write(3, f"Exit Code:\t{t.get('exitCode', 0)}\n")
        w.write(3, f"Started:\t{_describe_time(t.get('startedAt'))}\n")
        w.write(3, f"Finished:\t{_describe_time(t.get('finishedAt'))}\n")
    else:
        w.write(2, f"{title}:\tWaiting\n")


def _describe_containers(
    w: PrefixWriter,
    title: str,
    containers: list[JsonDict],
    statuses: dict[Any, JsonDict] | None,
    *,
    template: bool,
) -> None:
    """kubectl's describeContainers: a pod's containers (with their state) or a pod template's
    (`template=True`: indented under "Pod Template:", no state)."""
    head, name_indent = ("  ", "   ") if template else ("", "  ")
    w.write(0, f"{head}{title}:\n")
    for c in containers:
        cs = (statuses or {}).get(c.get("name")) or {}
        w.write(0, f"{name_indent}{c.get('name')}:\n")
        if cs.get("containerID"):
            w.write(2, f"Container ID:\t{cs['containerID']}\n")
        w.write(2, f"Image:\t{c.get('image', '')}\n")
        if not template:
            w.write(2, f"Image ID:\t{cs.get('imageID', '')}\n")
        ports = c.get("ports") or []
        w.write(
            2,
            "Port:\t"
            + (", ".join(f"{p.get('containerPort')}/{p.get('protocol', 'TCP')}" for p in ports) or "<none>")
            + "\n",
        )
        w.write(
            2,
            "Host Port:\t"
            + (", ".join(f"{p.get('hostPort', 0)}/{p.get('protocol', 'TCP')}" for p in ports) or "<none>")
            + "\n",
        )
        if c.get("command"):
            _write_list(w, 2, "Command", [str(x) for x in c["command"]])
        if c.get("args"):
            _write_list(w, 2, "Args", [str(x) for x in c["args"]])
        if not template:
            _container_state(w, "State", cs.get("state"))
            if cs.get("lastState"):
                _container_state(w, "Last State", cs.get("lastState"))
            w.write(2, f"Ready:\t{'True' if cs.get('ready') else 'False'}\n")
            w.write(2, f"Restart Count:\t{cs.get('restartCount', 0)}\n")
        res = c.get("resources") or {}
        for rk, rt in (("limits", "Limits"), ("requests", "Requests")):
            if res.get(rk):
                w.write(2, f"{rt}:\n")
                for name in sorted(res[rk]):
                    w.write(3, f"{name}:\t{res[rk][name]}\n")
        env = c.get("env") or []
        if env:
            w.write(2, "Environment:\n")
            for e in env:
                w.write(3, f"{e.get('name')}:\t{e.get('value', '')}\n")
        else:
            w.write(2, "Environment:\t<none>\n")
        mounts = c.get("volumeMounts") or []
        if mounts:
            w.write(2, "Mounts:\n")
            for m in mounts:
                w.write(
                    3, f"{m.get('mountPath')} from {m.get('name')} ({'ro' if m.get('readOnly') else 'rw'})\n"
                )
        else:
            w.write(2, "Mounts:\t<none>\n")


def _describe_volumes(w: PrefixWriter, vols: list[JsonDict], *, head: str = "") -> None:
    if not vols:
        w.write(0, f"{head}Volumes:\t<none>\n")
        return
    w.write(0, f"{head}Volumes:\n")
    for v in vols:
        w.write(0, f"{head}  {v.get('name')}:\n")
        kinds = [k for k in v if k != "name"]
        w.write(0, f"{head}    Type:\t{kinds[0] if kinds else '<unknown>'}\n")


def describe_pod(pod: JsonDict, events: list[JsonDict] | None, now: datetime) -> str:
    """kubectl's pod describer (the sections and their order)."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    if spec.get("priority") is not None:
        w.write(0, f"Priority:\t{spec['priority']}\n")
    if spec.get("priorityClassName"):
        w.write(0, f"Priority Class Name:\t{spec['priorityClassName']}\n")
    w.write(0, f"Service Account:\t{spec.get('serviceAccountName') or ''}\n")
    node = spec.get("nodeName")
    w.write(0, f"Node:\t{node + '/' + status.get('hostIP', '') if node else '<none>'}\n")
    if status.get("startTime"):
        w.write(0, f"Start Time:\t{_describe_time(status['startTime'])}\n")
    _multiline_map(w, 0, "Labels", meta.get("labels"))
    _multiline_map(w, 0, "Annotations", meta.get("annotations"), sep=": ")
    if meta.get("deletionTimestamp") and status.get("phase") not in ("Succeeded", "Failed"):
        dt = _parse_time(meta["deletionTimestamp"])
        lasts = human_duration((dt - now).total_seconds()) if dt else "<unknown>"
        w.write(0, f"Status:\tTerminating (lasts {lasts})\n")
        w.write(0, f"Termination Grace Period:\t{meta.get('deletionGracePeriodSeconds', 0)}s\n")
    else:
        w.write(0, f"Status:\t{status.get('phase', '')}\n")
    if status.get("reason"):
        w.write(0, f"Reason:\t{status['reason']}\n")
    if status.get("message"):
        w.write(0, f"Message:\t{status['message'].strip()}\n")
    w.write(0, f"IP:\t{status.get('podIP') or ''}\n")
    ips = [i.get("ip", "") for i in status.get("podIPs") or []]
    if ips:
        w.write(0, "IPs:\n")
        for ip in ips:
            w.write(1, f"IP:\t{ip}\n")
    else:
        w.write(0, "IPs:\t<none>\n")
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller"):
            w.write(0, f"Controlled By:\t{ref.get('kind')}/{ref.get('name')}\n")
    if status.get("nominatedNodeName"):
        w.write(0, f"NominatedNodeName:\t{status['nominatedNodeName']}\n")
    for title, key, skey in (
        ("Init Containers", "initContainers", "initContainerStatuses"),
        ("Containers", "containers", "containerStatuses"),
    ):
        containers = spec.get(key) or []
        if containers or key == "containers":
            _describe_containers(
                w, title, containers, {st.get("name"): st for st in status.get(skey) or []}, template=False
            )
    if spec.get("readinessGates"):
        w.write(0, "Readiness Gates:\n")
        w.write(1, "Type\tStatus\n")
        gate_status = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        for g in spec["readinessGates"]:
            w.write(1, f"{g.get('conditionType')} \t{gate_status.get(g.get('conditionType'), '<none>')} \n")
    conds = status.get("conditions") or []
    if conds:
        w.write(0, "Conditions:\n")
        w.write(1, "Type\tStatus\n")
        for c in conds:
            w.write(1, f"{c.get('type')} \t{c.get('status')} \n")
    _describe_volumes(w, spec.get("volumes") or [])
    if status.get("qosClass"):
        w.write(0, f"QoS Class:\t{status['qosClass']}\n")
    _multiline_map(w, 0, "Node-Selectors", spec.get("nodeSelector"))
    _write_list(w, 0, "Tolerations", [_toleration(t) for t in spec.get("tolerations") or []])
    tscs = spec.get("topologySpreadConstraints") or []
    if tscs:
        _write_list(
            w,
            0,
            "Topology Spread Constraints",
            [
                f"{t.get('topologyKey')}:{t.get('whenUnsatisfiable')} when max skew {t.get('maxSkew')} is "
                "exceeded for selector " + _selector_text(t.get("labelSelector"))
                for t in tscs
            ],
        )
    if spec.get("schedulingGates"):
        _write_list(w, 0, "Scheduling Gates", [g.get("name", "") for g in spec["schedulingGates"]])
    if events is not None:
        _events(w, events, now)
    return w.render()


def _selector_text(sel: JsonDict | None) -> str:
    if not sel:
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        op = e.get("operator")
        if op in ("In", "NotIn"):
            parts.append(f"{e.get('key')} {op.lower()} ({','.join(e.get('values') or [])})")
        elif op == "Exists":
            parts.append(str(e.get("key")))
        else:
            parts.append(f"!{e.get('key')}")
    return ",".join(parts) or "<none>"


def describe_node(node: JsonDict, pods: list[JsonDict], events: list[JsonDict] | None, now: datetime) -> str:
    """kubectl's node describer: roles, taints, conditions, capacity, the pods on it and what
    they request."""
    from minik3s.api.helpers.resources import node_allocatable, pod_requests
    from minik3s.api.quantity import format_milli, format_quantity

    meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    labels = meta.get("labels") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    roles = sorted(
        k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and "/" in k
    )
    w.write(0, f"Roles:\t{','.join(roles) or '<none>'}\n")
    _multiline_map(w, 0, "Labels", labels)
    _multiline_map(w, 0, "Annotations", meta.get("annotations"), sep=": ")
    w.write(0, f"CreationTimestamp:\t{_describe_time(meta.get('creationTimestamp'))}\n")
    _write_list(
        w,
        0,
        "Taints",
        [
            f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect')}"
            for t in spec.get("taints") or []
        ],
    )
    w.write(0, f"Unschedulable:\t{'true' if spec.get('unschedulable') else 'false'}\n")
    conds = status.get("conditions") or []
    if conds:
        w.write(0, "Conditions:\n")
        w.write(1, "Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n")
        w.write(1, "----\t------\t-----------------\t------------------\t------\t-------\n")
        for c in conds:
            w.write(
                1,
                f"{c.get('type')} \t{c.get('status')} \t{_describe_time(c.get('lastHeartbeatTime'))} \t"
                f"{_describe_time(c.get('lastTransitionTime'))} \t{c.get('reason', '')} \t"
                f"{c.get('message', '')}\n",
            )
    addrs = status.get("addresses") or []
    if addrs:
        w.write(0, "Addresses:\n")
        for a in addrs:
            w.write(1, f"{a.get('type')}:\t{a.get('address')}\n")
    for key, title in (("capacity", "Capacity"), ("allocatable", "Allocatable")):
        if status.get(key):
            w.write(0, f"{title}:\n")
            for k in sorted(status[key]):
                w.write(1, f"{k}:\t{status[key][k]}\n")
    info = status.get("nodeInfo") or {}
    if info:
        w.write(0, "System Info:\n")
        for k, title in (
            ("machineID", "Machine ID"),
            ("systemUUID", "System UUID"),
            ("bootID", "Boot ID"),
            ("kernelVersion", "Kernel Version"),
            ("osImage", "OS Image"),
            ("operatingSystem", "Operating System"),
            ("architecture", "Architecture"),
            ("containerRuntimeVersion", "Container Runtime Version"),
            ("kubeletVersion", "Kubelet Version"),
            ("kubeProxyVersion", "Kube-Proxy Version"),
        ):
            w.write(1, f"{title}:\t{info.get(k, '')}\n")
    if spec.get("podCIDR"):
        w.write(0, f"PodCIDR:\t{spec['podCIDR']}\n")
        w.write(0, f"PodCIDRs:\t{','.join(spec.get('podCIDRs') or [spec['podCIDR']])}\n")
    if spec.get("providerID"):
        w.write(0, f"ProviderID:\t{spec['providerID']}\n")
    running = [p for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    alloc = node_allocatable(node)
    w.write(0, f"Non-terminated Pods:\t({len(running)} in total)\n")
    w.write(1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n")
    w.write(1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n")

    def pct(v: int, total: int) -> str:
        return f"{(v * 100 // total) if total else 0}%"

    def limits(p: JsonDict) -> dict[str, int]:
        from minik3s.api.helpers.resources import resource_list_to_ints

        acc: dict[str, int] = {}
        for c in (p.get("spec") or {}).get("containers") or []:
            for k, v in resource_list_to_ints((c.get("resources") or {}).get("limits")).items():
                acc[k] = acc.get(k, 0) + v
        return acc

    tot_req: dict[str, int] = {}
    tot_lim: dict[str, int] = {}
    for p in running:
        pm = p.get("metadata") or {}
        req, lim = pod_requests(p), limits(p)
        for k, v in req.items():
            tot_req[k] = tot_req.get(k, 0) + v
        for k, v in lim.items():
            tot_lim[k] = tot_lim.get(k, 0) + v
        cpu_r, cpu_l = req.get("cpu", 0), lim.get("cpu", 0)
        mem_r, mem_l = req.get("memory", 0), lim.get("memory", 0)
        w.write(
            1,
            f"{pm.get('namespace')}\t{pm.get('name')}\t\t"
            f"{format_milli(cpu_r)} ({pct(cpu_r, alloc.get('cpu', 0))})\t"
            f"{format_milli(cpu_l)} ({pct(cpu_l, alloc.get('cpu', 0))})\t"
            f"{format_quantity(mem_r)} ({pct(mem_r, alloc.get('memory', 0))})\t"
            f"{format_quantity(mem_l)} ({pct(mem_l, alloc.get('memory', 0))})\t"
            f"{_age(pm.get('creationTimestamp'), now)}\n",
        )
    w.write(0, "Allocated resources:\n")
    w.write(1, "(Total limits may be over 100 percent, i.e., overcommitted.)\n")
    w.write(1, "Resource\tRequests\tLimits\n")
    w.write(1, "--------\t--------\t------\n")
    for r in ("cpu", "memory", "ephemeral-storage"):
        fmt = format_milli if r == "cpu" else format_quantity
        rq, lm = tot_req.get(r, 0), tot_lim.get(r, 0)
        w.write(1, f"{r}\t{fmt(rq)} ({pct(rq, alloc.get(r, 0))})\t{fmt(lm)} ({pct(lm, alloc.get(r, 0))})\n")
    if events is not None:
        _events(w, events, now)
    return w.render()


def _pod_template(w: PrefixWriter, tmpl: JsonDict | None) -> None:
    """kubectl's DescribePodTemplate."""
    w.write(0, "Pod Template:\n")
    if not tmpl:
        w.write(1, "<unset>")
        return
    tmeta, tspec = tmpl.get("metadata") or {}, tmpl.get("spec") or {}
    _multiline_map(w, 0, "  Labels", tmeta.get("labels"))
    if tmeta.get("annotations"):
        _multiline_map(w, 0, "  Annotations", tmeta.get("annotations"), sep=": ")
    if tspec.get("serviceAccountName"):
        w.write(1, f"Service Account:\t{tspec['serviceAccountName']}\n")
    if tspec.get("initContainers"):
        _describe_containers(w, "Init Containers", tspec["initContainers"], None, template=True)
    _describe_containers(w, "Containers", tspec.get("containers") or [], None, template=True)
    _describe_volumes(w, tspec.get("volumes") or [], head="  ")
    if tspec.get("priorityClassName"):
        w.write(1, f"Priority Class Name:\t{tspec['priorityClassName']}\n")
    _multiline_map(w, 0, "  Node-Selectors", tspec.get("nodeSelector"))
    _write_list(w, 0, "  Tolerations", [_toleration(t) for t in tspec.get("tolerations") or []])


def _replica_sets_text(rss: list[JsonDict]) -> str:
    parts = [
        f"{(r.get('metadata') or {}).get('name')} ({(r.get('status') or {}).get('replicas', 0)}/"
        f"{(r.get('spec') or {}).get('replicas', 0)} replicas created)"
        for r in rss
    ]
    return ", ".join(parts) or "<none>"


def describe_deployment(
    d: JsonDict, rss: list[JsonDict], events: list[JsonDict] | None, now: datetime
) -> str:
    """kubectl's deployment describer; `rss` are the ReplicaSets the deployment controls (the
    one whose template matches is the new one)."""
    meta, spec, status = d.get("metadata") or {}, d.get("spec") or {}, d.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"CreationTimestamp:\t{_describe_time(meta.get('creationTimestamp'))}\n")
    _multiline_map(w, 0, "Labels", meta.get("labels"))
    _multiline_map(w, 0, "Annotations", meta.get("annotations"), sep=": ")
    w.write(0, f"Selector:\t{_selector_text(spec.get('selector'))}\n")
    w.write(
        0,
        f"Replicas:\t{spec.get('replicas', 1)} desired | {status.get('updatedReplicas', 0)} updated | "
        f"{status.get('replicas', 0)} total | {status.get('availableReplicas', 0)} available | "
        f"{status.get('unavailableReplicas', 0)} unavailable\n",
    )
    strategy = spec.get("strategy") or {}
    w.write(0, f"StrategyType:\t{strategy.get('type', '')}\n")
    w.write(0, f"MinReadySeconds:\t{spec.get('minReadySeconds', 0)}\n")
    ru = strategy.get("rollingUpdate")
    if ru is not None:
        w.write(
            0,
            f"RollingUpdateStrategy:\t{ru.get('maxUnavailable', '25%')} max unavailable, "
            f"{ru.get('maxSurge', '25%')} max surge\n",
        )
    _pod_template(w, spec.get("template"))
    conds = status.get("conditions") or []
    if conds:
        w.write(0, "Conditions:\n  Type\tStatus\tReason\n")
        w.write(1, "----\t------\t------\n")
        for c in conds:
            w.write(1, f"{c.get('type')} \t{c.get('status')}\t{c.get('reason', '')}\n")
    tmpl = _template_without_hash(spec.get("template"))
    new = [r for r in rss if _template_without_hash((r.get("spec") or {}).get("template")) == tmpl][:1]
    old = [r for r in rss if r not in new and ((r.get("spec") or {}).get("replicas") or 0) > 0]
    w.write(0, f"OldReplicaSets:\t{_replica_sets_text(old)}\n")
    w.write(0, f"NewReplicaSet:\t{_replica_sets_text(new)}\n")
    if events is not None:
        _events(w, events, now)
    return w.render()


def _template_without_hash(tmpl: JsonDict | None) -> JsonDict:
    t = copy.deepcopy(tmpl or {})
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop("pod-template-hash", None)
    return t


def describe_replicaset(
    rs: JsonDict, pods: list[JsonDict], events: list[JsonDict] | None, now: datetime
) -> str:
    """kubectl's replica set describer; `pods` are the pods it controls."""
    meta, spec, status = rs.get("metadata") or {}, rs.get("spec") or {}, rs.get("status") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"Selector:\t{_selector_text(spec.get('selector'))}\n")
    _multiline_map(w, 0, "Labels", meta.get("labels"))
    _multiline_map(w, 0, "Annotations", meta.get("annotations"), sep=": ")
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller"):
            w.write(0, f"Controlled By:\t{ref.get('kind')}/{ref.get('name')}\n")
    w.write(0, f"Replicas:\t{status.get('replicas', 0)} current / {spec.get('replicas', 1)} desired\n")
    phases = [(p.get("status") or {}).get("phase") for p in pods]
    w.write(
        0,
        f"Pods Status:\t{phases.count('Running')} Running / {phases.count('Pending')} Waiting / "
        f"{phases.count('Succeeded')} Succeeded / {phases.count('Failed')} Failed\n",
    )
    _pod_template(w, spec.get("template"))
    conds = status.get("conditions") or []
    if conds:
        w.write(0, "Conditions:\n  Type\tStatus\tReason\n")
        w.write(1, "----\t------\t------\n")
        for c in conds:
            w.write(1, f"{c.get('type')} \t{c.get('status')}\t{c.get('reason', '')}\n")
    if events is not None:
        _events(w, events, now)
    return w.render()


def describe_configmap(cm: JsonDict, events: list[JsonDict] | None, now: datetime) -> str:
    """kubectl's config map describer: each key, a `----` rule, the value."""
    meta = cm.get("metadata") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    _multiline_map(w, 0, "Labels", meta.get("labels"))
    _multiline_map(w, 0, "Annotations", meta.get("annotations"), sep=": ")
    w.write(0, "\nData\n====\n")
    for k, v in sorted((cm.get("data") or {}).items()):
        w.write(0, f"{k}:\n----\n{v}\n\n")
    w.write(0, "\nBinaryData\n====\n")
    for k, v in sorted((cm.get("binaryData") or {}).items()):
        w.write(0, f"{k}: {len(v) * 3 // 4 - v.count('=')} bytes\n")
    w.write(0, "\n")
    if events is not None:
        _events(w, events, now)
    return w.render()


def describe_generic(obj: JsonDict, events: list[JsonDict] | None, now: datetime) -> str:
    """kubectl's generic describer (custom resources and kinds without a dedicated describer)."""
    meta = obj.get("metadata") or {}
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    if meta.get("namespace"):
        w.write(0, f"Namespace:\t{meta['namespace']}\n")
    _multiline_map(w, 0, "Labels", meta.get("labels"))
    _multiline_map(w, 0, "Annotations", meta.get("annotations"), sep=": ")
    skip = {
        ".metadata.name",
        ".metadata.namespace",
        ".metadata.labels",
        ".metadata.annotations",
        ".metadata.managedFields",
    }
    rest = {k: v for k, v in obj.items()}
    w.write(0, f"API Version:\t{rest.pop('apiVersion', '')}\n")
    w.write(0, f"Kind:\t{rest.pop('kind', '')}\n")
    _unstructured(w, 0, {"metadata": rest.pop("metadata", {})}, skip)
    _unstructured(w, 0, rest, skip)
    if events is not None:
        _events(w, events, now)
    return w.render()


def _events(w: PrefixWriter, events: list[JsonDict], now: datetime) -> None:
    """The Events section: oldest first, `Age` as `5s` or `2m (x3 over 5m)`."""
    if not events:
        w.write(0, "Events:\t<none>\n")
        return

    def last(e: JsonDict) -> str:
        return str(
            e.get("lastTimestamp")
            or e.get("eventTime")
            or (e.get("metadata") or {}).get("creationTimestamp")
            or ""
        )

    w.write(0, "Events:\n")
    w.write(1, "Type\tReason\tAge\tFrom\tMessage\n")
    w.write(1, "----\t------\t----\t----\t-------\n")
    for e in sorted(events, key=last):
        age = _age(last(e), now)
        count = int(e.get("count") or (e.get("series") or {}).get("count") or 1)
        first = e.get("firstTimestamp") or e.get("eventTime")
        if count > 1 and first:
            age = f"{age} (x{count} over {_age(first, now)})"
        src = (
            (e.get("source") or {}).get("component")
            or e.get("reportingComponent")
            or e.get("reportingController")
            or ""
        )
        w.write(
            1,
            f"{e.get('type', '')}\t{e.get('reason', '')}\t{age}\t{src}\t"
            f"{str(e.get('message', '')).strip()}\n",
        )


async def _events_for(api: Api, disc: Discovery, obj: JsonDict, res: ApiResource) -> list[JsonDict] | None:
    """kubectl's `SearchEvents`: core/v1 events whose involvedObject is `obj` (name, namespace,
    kind and uid). Nodes are asked twice, as kubectl does, because kubelets record node events
    with the node's name as the uid."""
    meta = obj.get("metadata") or {}
    ev = next((r for r in disc.resources if r.group == "" and r.resource == "events"), None)
    if ev is None:
        return None
    base = [
        f"involvedObject.name={meta.get('name', '')}",
        f"involvedObject.namespace={meta.get('namespace', '')}",
        f"involvedObject.kind={obj.get('kind') or res.kind}",
    ]
    uids = [str(meta["uid"])] if meta.get("uid") else [""]
    if (obj.get("kind") or res.kind) == "Node" and meta.get("name"):
        uids.append(str(meta["name"]))
    found: dict[str, JsonDict] = {}
    for uid in uids:
        sel = base + ([f"involvedObject.uid={uid}"] if uid else [])
        try:
            lst = await _list_all(
                api, ev.path(meta.get("namespace") or None), {"fieldSelector": ",".join(sel)}
            )
        except ApiError:
            continue  # kubectl tolerates a failing events query
        for e in lst.get("items") or []:
            em = e.get("metadata") or {}
            found[str(em.get("uid") or f"{em.get('namespace')}/{em.get('name')}")] = e
    return list(found.values())


async def _describe_apps(
    api: Api, disc: Discovery, o: JsonDict, res: ApiResource, events: list[JsonDict] | None, now: datetime
) -> str:
    """Deployments need their ReplicaSets, ReplicaSets their pods: the objects in the namespace
    matching the selector whose controller reference is `o`."""
    meta = o.get("metadata") or {}
    sel = ((o.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    params = {"labelSelector": ",".join(f"{k}={v}" for k, v in sorted(sel.items()))} if sel else {}
    child = disc.resolve("replicasets.apps" if res.resource == "deployments" else "pods")
    lst = await _list_all(api, child.path(meta.get("namespace")), params)
    owned = [
        c
        for c in lst.get("items") or []
        if any(
            r.get("controller") and r.get("uid") == meta.get("uid")
            for r in (c.get("metadata") or {}).get("ownerReferences") or []
        )
    ]
    if res.resource == "deployments":
        return describe_deployment(o, owned, events, now)
    return describe_replicaset(o, owned, events, now)


async def run_describe(
    api: Api,
    disc: Discovery,
    args: argparse.Namespace,
    *,
    out: TextIO,
    err: TextIO,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> int:
    targets = parse_targets(disc, args.resources)
    ns = _namespace(args)
    rc = 0
    docs: list[str] = []
    for t in targets:
        tns = (None if args.all_namespaces else ns) if t.res.namespaced else None
        objs: list[JsonDict] = []
        if not t.names:
            params = {"labelSelector": args.selector} if args.selector else {}
            lst = await _list_all(api, t.res.path(tns), params)
            objs = list(lst.get("items") or [])
            if not objs:
                _no_resources(err, args, [t])
        for n in t.names:
            try:
                objs.append(await api.call("GET", t.res.path(tns, n)))
            except NotFoundError as e:
                # kubectl falls back to a prefix match on the name
                lst = await _list_all(api, t.res.path(tns), {})
                matches = [
                    o
                    for o in lst.get("items") or []
                    if (o.get("metadata") or {}).get("name", "").startswith(n)
                ]
                if not matches:
                    print(format_error(e), file=err)
                    rc = 1
                objs.extend(matches)
            except ApiError as e:
                print(format_error(e), file=err)
                rc = 1
        for o in objs:
            o.setdefault("kind", t.res.kind)
            o.setdefault("apiVersion", t.res.api_version)
            events = await _events_for(api, disc, o, t.res) if args.show_events else None
            if t.res.group == "" and t.res.resource == "pods":
                docs.append(describe_pod(o, events, now()))
            elif t.res.group == "" and t.res.resource == "nodes":
                name = (o.get("metadata") or {}).get("name", "")
                pods_res = disc.resolve("pods")
                lst = await _list_all(api, pods_res.path(None), {"fieldSelector": f"spec.nodeName={name}"})
                docs.append(describe_node(o, list(lst.get("items") or []), events, now()))
            elif t.res.group == "apps" and t.res.resource in ("deployments", "replicasets"):
                docs.append(await _describe_apps(api, disc, o, t.res, events, now()))
            elif t.res.group == "" and t.res.resource == "configmaps":
                docs.append(describe_configmap(o, events, now()))
            else:
                docs.append(describe_generic(o, events, now()))
    out.write("\n\n".join(docs))
    out.flush()
    return rc


# ---------------------------------------------------------------------------------------------
# argparse wiring


def _bool(v: str) -> bool:
    if v.lower() in ("true", "1", "yes", "y"):
        return True
    if v.lower() in ("false", "0", "no", "n"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean value {v!r}")


def _cmd(run: Callable[..., Any]) -> Callable[[argparse.Namespace], int]:
    def func(args: argparse.Namespace) -> int:
        from minik3s.cli import _run_async, _server_url
        from minik3s.client.rest import HttpClient

        url = _server_url(args)
        err_pal = Palette.for_stream(sys.stderr)

        async def main() -> int:
            client = HttpClient(url, user_agent="minik3s-cli")
            api = Api(client)
            try:
                disc = await Discovery.load(api)
                return int(await run(api, disc, args, out=sys.stdout, err=sys.stderr))
            except (ApiError, CommandError) as e:
                print(err_pal.paint("red", format_error(e)), file=sys.stderr)
                return 1
            finally:
                await client.close()

        return _run_async(main)

    return func


class _IntermixedParser(argparse.ArgumentParser):
    """Options may come between the names, as with kubectl: `get pods -n kube-system web-1`
    (argparse's intermixed parsing, used when the top-level parser hands over to the subcommand)."""

    _inner = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self._inner:
            return super().parse_known_args(args, namespace)
        self._inner = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._inner = False


def add_subcommands(subparsers: Any, client_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """Register `apply`, `get`, `delete`, `describe` on the `minik3s` parser's subparsers."""
    saved = subparsers._parser_class
    subparsers._parser_class = _IntermixedParser
    try:
        _add_subcommands(subparsers, client_args)
    finally:
        subparsers._parser_class = saved


def _add_subcommands(subparsers: Any, client_args: Callable[[argparse.ArgumentParser], None]) -> None:

    def common(p: argparse.ArgumentParser, *, all_ns: bool = True) -> None:
        client_args(p)
        p.add_argument("-n", "--namespace", default=None, help="namespace (default: default)")
        if all_ns:
            p.add_argument("-A", "--all-namespaces", action="store_true", help="across all namespaces")

    def files(p: argparse.ArgumentParser, *, required: bool) -> None:
        p.add_argument(
            "-f",
            "--filename",
            action="append",
            required=required,
            default=None,
            help="a manifest file, a directory of them, or - for stdin (repeatable)",
        )
        p.add_argument(
            "-R", "--recursive", action="store_true", help="descend into directories given with -f"
        )

    a = subparsers.add_parser(
        "apply",
        help="create or update objects from manifests (server-side apply)",
        usage="minik3s apply -f FILE|DIR|- [-f ...] [-R] [-n NS] [--dry-run=server]",
    )
    common(a, all_ns=False)
    files(a, required=True)
    a.add_argument("--dry-run", choices=("none", "server"), default="none")
    a.set_defaults(func=_cmd(run_apply))

    g = subparsers.add_parser(
        "get",
        help="list objects as kubectl does (server-side tables)",
        usage="minik3s get KIND[,KIND...] [NAME...] | KIND/NAME... [-n NS | -A] "
        "[-o wide|yaml|json|name] [-l SELECTOR] [-w]",
    )
    common(g)
    g.add_argument("resources", nargs="+", metavar="ARG")
    g.add_argument("-o", "--output", default=None, help="wide | yaml | json | name")
    g.add_argument("-l", "--selector", default=None, help="label selector, e.g. app=web,tier!=db")
    g.add_argument("--field-selector", default=None)
    g.add_argument("-w", "--watch", action="store_true", help="after listing, watch for changes")
    g.add_argument("--watch-only", action="store_true", help="watch without listing first")
    g.add_argument("--show-labels", action="store_true")
    g.add_argument("--no-headers", action="store_true")
    g.set_defaults(func=_cmd(run_get))

    d = subparsers.add_parser(
        "delete",
        help="delete objects and wait until they are gone",
        usage="minik3s delete KIND NAME... | KIND/NAME... | -f FILE | KIND -l SEL | KIND --all "
        "[-n NS] [--grace-period N] [--wait=false]",
    )
    common(d)
    d.add_argument("resources", nargs="*", metavar="ARG")
    files(d, required=False)
    d.add_argument("-l", "--selector", default=None)
    d.add_argument("--field-selector", default=None)
    d.add_argument("--all", action="store_true", help="every object of the kind in the namespace")
    d.add_argument(
        "--grace-period", type=int, default=-1, help="seconds to terminate gracefully (-1: the object's)"
    )
    d.add_argument("--now", action="store_true", help="same as --grace-period=1")
    d.add_argument("--force", action="store_true", help="with --grace-period=0: remove at once, do not wait")
    d.add_argument(
        "--wait",
        nargs="?",
        const=True,
        default=True,
        type=_bool,
        help="wait until the objects are gone (default true; --wait=false or --no-wait to skip)",
    )
    d.add_argument("--no-wait", dest="wait", action="store_false")
    d.add_argument("--timeout", type=float, default=0.0, help="seconds to wait (0: no limit)")
    d.add_argument("--cascade", choices=("background", "foreground", "orphan"), default="background")
    d.add_argument("--ignore-not-found", action="store_true")
    d.set_defaults(func=_cmd(run_delete))

    s = subparsers.add_parser(
        "describe",
        help="show an object in detail, with its events",
        usage="minik3s describe KIND [NAME_PREFIX...] | KIND/NAME... [-n NS | -A] [-l SELECTOR]",
    )
    common(s)
    s.add_argument("resources", nargs="+", metavar="ARG")
    s.add_argument("-l", "--selector", default=None)
    s.add_argument("--show-events", nargs="?", const=True, default=True, type=_bool)
    s.set_defaults(func=_cmd(run_describe))
