"""Watch fan-out over HTTP: many watchers of one collection under concurrent writes each get
every event exactly once, in resourceVersion order, whether the server hands their events to
the connection directly (plain JSON watches while idle) or through the per-watcher path
(selectors, bookmarks, Table), over plain HTTP and TLS; streams end cleanly at timeoutSeconds."""

from __future__ import annotations

import asyncio
import json
import ssl
import uuid
from collections.abc import Iterator
from typing import Any

import aiohttp
import httpx
import pytest

from minik3s.testing.pytest_plugin import API_ONLY
from minik3s.testing.server import ServerProcess


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess):
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


def mkns(http: httpx.Client) -> str:
    n = "fan-" + uuid.uuid4().hex[:8]
    http.post("/api/v1/namespaces", json={"metadata": {"name": n}}).raise_for_status()
    return n


async def read_stream(session: aiohttp.ClientSession, url: str, params: dict[str, str], *,
                      until: int | None, opened: asyncio.Event | None = None,
                      headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Events of one watch (BOOKMARKs left out) until `until` have arrived (None: until the
    server ends the stream)."""
    out: list[dict[str, Any]] = []
    async with session.get(url, params={**params, "watch": "true"}, headers=headers) as r:
        assert r.status == 200
        if opened is not None:
            opened.set()
        async for line in r.content:
            if line.strip():
                ev = json.loads(line)
                if ev["type"] == "BOOKMARK":
                    continue
                out.append(ev)
                if until is not None and len(out) >= until:
                    break
    return out


async def write_load(session: aiohttp.ClientSession, url: str, names: list[str]) -> None:
    """Concurrent creates (so the store commits them in groups), then a patch and a delete of each."""
    async def one(name: str) -> None:
        body = {"metadata": {"name": name, "labels": {"app": "odd" if int(name[1:]) % 2 else "even"}}}
        async with session.post(url, json=body) as r:
            assert r.status == 201, await r.text()
        async with session.patch(f"{url}/{name}", data=b'{"data":{"k":"v"}}',
                                 headers={"Content-Type": "application/merge-patch+json"}) as r:
            assert r.status == 200, await r.text()
        async with session.delete(f"{url}/{name}") as r:
            assert r.status == 200, await r.text()

    await asyncio.gather(*(one(n) for n in names))


def summary(evs: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    return [(e["type"], e["object"]["metadata"]["name"], int(e["object"]["metadata"]["resourceVersion"]))
            for e in evs]


async def test_many_watchers_see_every_event_once_in_order(minik3s_api: ServerProcess, http: httpx.Client) -> None:
    n = mkns(http)
    path = f"/api/v1/namespaces/{n}/configmaps"
    rv = http.post(path, json={"metadata": {"name": "seed"}}).json()["metadata"]["resourceVersion"]
    url = minik3s_api.url + path
    names = [f"c{i}" for i in range(60)]
    total = 1 + 3 * len(names)  # ADDED seed (from rv - 1), then ADDED, MODIFIED, DELETED each
    plain, listing = 40, 10
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as s:
        opened = [asyncio.Event() for _ in range(plain + listing + 3)]
        since = {"resourceVersion": str(int(rv) - 1)}
        tasks = [asyncio.create_task(read_stream(s, url, since, until=total, opened=opened[i]))
                 for i in range(plain)]
        # no resourceVersion: a synthetic ADDED for the seed, then live events
        tasks += [asyncio.create_task(read_stream(s, url, {}, until=total, opened=opened[plain + i]))
                  for i in range(listing)]
        odd = asyncio.create_task(read_stream(s, url, {**since, "labelSelector": "app=odd"}, until=90,
                                              opened=opened[-3]))
        bookmarks = asyncio.create_task(read_stream(s, url, {**since, "allowWatchBookmarks": "true"},
                                                    until=total, opened=opened[-2]))
        table = asyncio.create_task(read_stream(s, url, since, until=total, opened=opened[-1], headers={
            "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}))
        async with asyncio.timeout(30):
            await asyncio.gather(*(o.wait() for o in opened))
        await write_load(s, url, names)
        async with asyncio.timeout(30):
            streams = await asyncio.gather(*tasks)
            odd_evs = await odd
            table_evs = await table
            bookmark_evs = await bookmarks

    first = summary(streams[0])
    assert len(first) == total
    assert [r for _, _, r in first] == sorted({r for _, _, r in first})  # strictly increasing
    assert first[0][:2] == ("ADDED", "seed")
    assert {(t, nm) for t, nm, _ in first[1:]} == {(t, nm) for nm in names for t in ("ADDED", "MODIFIED", "DELETED")}
    for evs in streams[1:plain]:
        assert summary(evs) == first
    for evs in streams[plain:]:
        assert summary(evs)[0][:2] == ("ADDED", "seed")
        assert summary(evs)[1:] == first[1:]
    # the per-watcher paths alongside: selector semantics and the same order
    odd_names = {nm for nm in names if int(nm[1:]) % 2}
    assert summary(odd_evs) == [e for e in first if e[1] in odd_names]
    assert summary(bookmark_evs) == first
    assert {e["object"]["kind"] for e in table_evs} == {"Table"}
    assert [(e["type"], e["object"]["rows"][0]["object"]["metadata"]["name"]) for e in table_evs] == [
        (t, nm) for t, nm, _ in first]


async def test_watch_ends_cleanly_at_timeout_seconds_after_direct_delivery(minik3s_api: ServerProcess,
                                                                             http: httpx.Client) -> None:
    n = mkns(http)
    path = f"/api/v1/namespaces/{n}/configmaps"
    rv = http.get(path).json()["metadata"]["resourceVersion"]
    url = minik3s_api.url + path
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as s:
        opened = asyncio.Event()
        reader = asyncio.create_task(read_stream(s, url, {"resourceVersion": rv, "timeoutSeconds": "3"},
                                                 until=None, opened=opened))
        await opened.wait()
        await write_load(s, url, [f"t{i}" for i in range(10)])
        evs = await reader  # the stream ended normally: a complete chunked body
    assert len(evs) == 30
    rvs = [r for _, _, r in summary(evs)]
    assert rvs == sorted(set(rvs))


@pytest.fixture(scope="module")
def tls_srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    s = ServerProcess(tmp_path_factory.mktemp("fanout-tls") / "data", nodes=0, tls=True, args=[*API_ONLY])
    s.start()
    yield s
    s.stop()


async def test_direct_delivery_over_tls_keeps_every_event_in_order(tls_srv: ServerProcess) -> None:
    ctx = ssl.create_default_context(cafile=str(tls_srv.ca_path))
    ctx.load_cert_chain(*tls_srv.admin_cert)
    n = "fan-" + uuid.uuid4().hex[:8]
    path = f"/api/v1/namespaces/{n}/configmaps"
    url = tls_srv.url + path
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60),
                                     connector=aiohttp.TCPConnector(ssl=ctx, limit=0)) as s:
        async with s.post(f"{tls_srv.url}/api/v1/namespaces", json={"metadata": {"name": n}}) as r:
            assert r.status == 201
        async with s.get(url) as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        opened = [asyncio.Event() for _ in range(8)]
        readers = [asyncio.create_task(read_stream(s, url, {"resourceVersion": rv}, until=60, opened=o))
                   for o in opened]
        async with asyncio.timeout(30):
            await asyncio.gather(*(o.wait() for o in opened))
        await write_load(s, url, [f"s{i}" for i in range(20)])
        async with asyncio.timeout(30):
            streams = await asyncio.gather(*readers)
    first = summary(streams[0])
    assert [r for _, _, r in first] == sorted({r for _, _, r in first})
    assert {(t, nm) for t, nm, _ in first} == {(t, f"s{i}") for i in range(20) for t in ("ADDED", "MODIFIED", "DELETED")}
    for evs in streams[1:]:
        assert summary(evs) == first
