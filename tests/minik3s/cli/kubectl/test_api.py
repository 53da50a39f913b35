"""The client commands' request layer (minik3s/cli/kubectl/api.py) over the client's HTTP
transport, against a real server: an ERROR event inside a watch is handed over as an event (so
`get -w` prints kubectl's STATUS/REASON/MESSAGE row), a failed watch request raises its error,
and an unreachable server becomes kubectl's connection-refused message."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from minik3s import server
from minik3s.api.errors import ApiError
from minik3s.api.resources import CONFIGMAPS
from minik3s.cli.kubectl.api import Api
from minik3s.cli.kubectl.errors import ConnectionRefusedError_, format_error
from minik3s.cli.kubectl.palette import Palette
from minik3s.cli.kubectl.printers import TablePrinter
from minik3s.client.rest import HttpClient
from minik3s.config import ServerConfig


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[tuple[server.RunningServer, Api]]:
    cfg = ServerConfig(port=0, data_dir=tmp_path, history_window=100, compact_interval=3600,
                       disable={"scheduler", "controllers", "kubelet", "descheduler"})
    rs = await server.start(cfg)
    http = HttpClient(rs.url)
    try:
        yield rs, Api(http)
    finally:
        await http.close()
        await server.stop(rs)


async def test_an_expired_watch_is_an_error_event_printed_as_kubectl_does(running):
    rs, api = running
    cm = await rs.client.create(CONFIGMAPS, {"metadata": {"name": "old"}}, "default")
    for i in range(300):
        await rs.client.create(CONFIGMAPS, {"metadata": {"name": f"churn-{i}"}}, "kube-system")
    await rs.store.compact()
    events = [ev async for ev in api.stream("/api/v1/namespaces/default/configmaps",
                                            {"watch": "true", "resourceVersion": cm["metadata"]["resourceVersion"]})]
    assert [(ev.type, ev.object.get("code"), ev.object.get("reason")) for ev in events] == [("ERROR", 410, "Expired")]
    out = io.StringIO()
    TablePrinter(out, Palette(False)).print_status_row(events[0].object)
    head, row = out.getvalue().splitlines()
    assert head.split() == ["STATUS", "REASON", "MESSAGE"]
    assert row.split()[:2] == ["Failure", "Expired"]


async def test_a_failed_watch_request_raises_its_error(running):
    _, api = running
    with pytest.raises(ApiError) as e:
        async for _ in api.stream("/api/v1/namespaces/default/configmaps",
                                  {"watch": "true", "fieldSelector": "spec.nope=1"}):
            pass
    assert e.value.code == 400
    assert format_error(e.value).startswith("Error from server (BadRequest): ")


async def test_an_unreachable_server_is_kubectls_connection_refused_message():
    http = HttpClient("http://127.0.0.1:1")
    try:
        with pytest.raises(ConnectionRefusedError_) as e:
            await Api(http).call("GET", "/api")
        assert format_error(e.value) == ("The connection to the server 127.0.0.1:1 was refused - did you specify "
                                         "the right host or port?")
        with pytest.raises(ConnectionRefusedError_):
            async for _ in Api(http).stream("/api/v1/pods", {"watch": "true"}):
                pass
    finally:
        await http.close()
