"""Requests of the client commands (layer L5, CLI) over `minik3s.client.rest.HttpClient` (L3).

The commands address resources by the paths discovery gives them, ask for the representation
they print (`Accept` a server-side Table, or JSON) and read watches as events; the transport,
its watch framing and the `ApiError` mapping are the client layer's. A server that cannot be
reached becomes kubectl's "The connection to the server ... was refused" message.

Data flow: `run_*` -> `Api.call` / `Api.stream` / `list_all` -> `HttpClient.request` /
`HttpClient.watch_path` -> decoded JSON or `WatchEvent`s.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from minik3s.api.errors import ApiError
from minik3s.api.types import JsonDict
from minik3s.cli.kubectl.errors import CommandError, ConnectionRefusedError_
from minik3s.client.interface import WatchEvent
from minik3s.client.rest import HttpClient, ServerUnreachableError

logger = logging.getLogger(__name__)

TABLE_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
    "application/json"
)
JSON = "application/json"
LIST_CHUNK = "500"


class Api:
    """The requests a command makes, by path, with the Accept header it needs."""

    def __init__(self, client: HttpClient) -> None:
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
        try:
            return await self.client.request(
                method, path, params=params, body=body, content_type=content_type, accept=accept
            )
        except ServerUnreachableError as e:
            raise self._unreachable(e) from e

    async def stream(self, path: str, params: dict[str, str], *, accept: str = JSON) -> AsyncIterator[WatchEvent]:
        """A watch until the server closes it. An ERROR event inside the stream (e.g. 410 Expired)
        is handed over as a `WatchEvent("ERROR", <Status>)` and ends the stream, so a command can
        print it as kubectl does; a failed watch request raises its `ApiError`."""
        watch = self.client.watch_path(path, params, accept=accept)
        try:
            async for ev in watch:
                yield ev
        except ServerUnreachableError as e:
            raise self._unreachable(e) from e
        except ApiError as e:
            if not watch.established:
                raise
            yield WatchEvent("ERROR", e.to_status())
        finally:
            await watch.close()


async def list_all(api: Api, path: str, params: dict[str, str], *, accept: str = JSON) -> JsonDict:
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
