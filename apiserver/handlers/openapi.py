"""/openapi/v2 and /openapi/v3[/<group-version>] over HTTP (layer L4).

Data flow: `dispatch` -> here -> the document builders in `apiserver.openapi` (from the live
registry) -> encoded once into `REGISTRY_DOCS` (cleared when CRDs change) -> the response.
"""

from __future__ import annotations

from aiohttp import web

from apiserver import openapi
from apiserver.handlers import codec
from apiserver.handlers.common import not_found_path
from apiserver.keys import CORE, REGISTRY_DOCS
from apiserver.protobuf.openapi_v2 import MEDIA_TYPE as OPENAPI_V2_PROTOBUF
from apiserver.protobuf.openapi_v2 import RESPONSE_TYPE, encode_document


def serve_openapi(request: web.Request, parts: list[str]) -> web.StreamResponse:
    core = request.app[CORE]
    cache = request.app[REGISTRY_DOCS]
    if len(parts) >= 2 and parts[1] == "v2":
        form = _v2_form(request.headers.get("Accept", ""))
        if form is None:  # kube-openapi answers 406 for a media type it does not offer
            return web.Response(status=406, text="406: Not Acceptable\n")
        if form == "protobuf":
            pb = cache.get("v2.pb")
            if pb is None:
                pb = cache["v2.pb"] = encode_document(openapi.openapi_v2(core.registry))
            return web.Response(body=pb, headers={"Content-Type": RESPONSE_TYPE})
        doc = cache.get("v2")
        if doc is None:
            doc = cache["v2"] = codec.dumps(openapi.openapi_v2(core.registry))
        return web.Response(body=doc, content_type="application/json")
    if len(parts) >= 2 and parts[1] == "v3":
        if len(parts) == 2:
            doc = cache.get("v3")
            if doc is None:
                doc = cache["v3"] = codec.dumps(openapi.openapi_v3_root(core.registry))
            return web.Response(body=doc, content_type="application/json")
        rest = parts[2:]
        if rest[0] == "api" and len(rest) == 2:
            group, version = "", rest[1]
        elif rest[0] == "apis" and len(rest) == 3:
            group, version = rest[1], rest[2]
        else:
            raise not_found_path()
        key = f"v3/{group}/{version}"
        doc = cache.get(key)
        if doc is None:
            if not core.registry.for_group_version(group, version):
                raise not_found_path()
            doc = cache[key] = codec.dumps(openapi.openapi_v3_group_version(core.registry, group, version))
        return web.Response(body=doc, content_type="application/json")
    raise not_found_path()


def _v2_form(accept: str) -> str | None:
    """"json" or "protobuf" (gnostic's Document) as the Accept header prefers, None when it
    admits neither. No header, */* and application/* mean JSON."""
    if not accept.strip():
        return "json"
    best: tuple[float, int, str] | None = None
    for i, part in enumerate(accept.split(",")):
        fields = [f.strip() for f in part.split(";")]
        media = fields[0].lower()
        q = 1.0
        for f in fields[1:]:
            if f.lower().startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = 0.0
        form = ("protobuf" if media in (OPENAPI_V2_PROTOBUF, RESPONSE_TYPE)
                else "json" if media in ("*/*", "application/*", "application/json") else None)
        if form is None or q <= 0:
            continue
        if best is None or (q, -i) > (best[0], best[1]):
            best = (q, -i, form)
    return best[2] if best else None
