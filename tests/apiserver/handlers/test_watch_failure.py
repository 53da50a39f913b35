"""A watch that fails while streaming (a bug in encoding one event) ends its connection: the 200
and the events before are out, so no error answer can follow in the same response. Before, the
error middleware wrote a fresh `HTTP/1.1 500` into the chunked body, which clients read as a
corrupt stream. On the real app and core, over a real loopback connection; the failure is
injected into the event encoder."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

import apiserver.handlers.watch as watch_handler
from apiserver.app import create_app
from apiserver.core import ApiCore
from minik3s.api.options import ListOptions


@pytest.fixture
async def server(core: ApiCore) -> AsyncIterator[TestServer]:
    srv = TestServer(create_app(core), host="127.0.0.1")
    await srv.start_server()
    yield srv
    await srv.close()


async def test_a_failure_mid_stream_cuts_the_connection_without_a_second_status_line(
        core: ApiCore, server: TestServer, monkeypatch: pytest.MonkeyPatch) -> None:
    cms = core.registry.get("", "v1", "configmaps")
    assert cms is not None
    real = watch_handler.encode_event

    def failing(cache: Any, etype: str, obj: Any, api_version: str) -> bytes:
        if obj["metadata"]["name"] == "bad":
            raise RuntimeError("injected encoder failure")
        return real(cache, etype, obj, api_version)

    monkeypatch.setattr(watch_handler, "encode_event", failing)
    rv = core.list(cms, "default", ListOptions())["metadata"]["resourceVersion"]
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(f"GET /api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv} HTTP/1.1\r\n"
                 "Host: 127.0.0.1\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK")
    await core.create(cms, "default", {"metadata": {"name": "good"}})
    await core.create(cms, "default", {"metadata": {"name": "bad"}})
    async with asyncio.timeout(10):
        rest = await reader.read()  # until the server closes the connection
    writer.close()
    assert b'"name":"good"' in rest
    assert b"HTTP/1.1" not in rest  # no second response inside the stream
    assert b"bad" not in rest
