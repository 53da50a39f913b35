"""REST mapping from the server's discovery documents (layer L5, CLI).

Data flow: `/api`, `/apis`, `/api[s]/<g>/<v>` -> `Discovery` -> `resolve("po")` / `for_kind(apiVersion, kind)`
-> `ApiResource.path(namespace, name)`; command arguments (`pods a b`, `pod/a`) become `Target`s.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass, field
from typing import TextIO

from minik3s.api.errors import ApiError
from minik3s.api.types import JsonDict
from minik3s.cli.kubectl.api import Api
from minik3s.cli.kubectl.errors import CommandError


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


def target_namespace(args: argparse.Namespace) -> str:
    return str(getattr(args, "namespace", None) or "default")




def no_resources(err: TextIO, args: argparse.Namespace, targets: list[Target]) -> None:
    if args.all_namespaces or not any(t.res.namespaced for t in targets):
        print("No resources found", file=err)
    else:
        print(f"No resources found in {target_namespace(args)} namespace.", file=err)
