"""/healthz, /livez and /readyz as kube-apiserver's healthz package answers them, on the real app
and a real port: `ok`, the verbose list of named checks, `exclude`, one check by path, and a
500 listing every check (reasons withheld) while the bootstrap has not finished or once the
store stopped."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from apiserver.app import READY, create_app
from apiserver.core import ApiCore


@pytest.fixture
async def app_and_http(core: ApiCore) -> AsyncIterator[tuple[Any, TestClient[Any, Any]]]:
    app = create_app(core)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        yield app, client


async def body(http: TestClient[Any, Any], path: str) -> tuple[int, str]:
    r = await http.get(path)
    assert r.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    return r.status, await r.text()


async def test_ready_answers_ok_and_verbose_lists_the_checks(app_and_http) -> None:
    app, http = app_and_http
    app[READY].set()
    for kind in ("healthz", "livez", "readyz"):
        assert await body(http, f"/{kind}") == (200, "ok")
    status, text = await body(http, "/readyz?verbose")
    lines = text.splitlines()
    assert status == 200 and lines[-1] == "readyz check passed"
    assert lines[:5] == ["[+]ping ok", "[+]log ok", "[+]etcd ok", "[+]etcd-readiness ok", "[+]informer-sync ok"]
    assert "[+]poststarthook/rbac/bootstrap-roles ok" in lines and lines[-2] == "[+]shutdown ok"
    status, text = await body(http, "/livez?verbose=1")
    assert "[+]shutdown ok\n" not in text and "[+]informer-sync ok\n" not in text
    assert text.endswith("livez check passed\n")
    status, text = await body(http, "/healthz?verbose&exclude=etcd&exclude=nope")
    assert "[+]etcd excluded: ok\n" in text
    assert text.endswith('warn: some health checks cannot be excluded: no matches for "nope"\nhealthz check passed\n')
    assert await body(http, "/readyz/etcd") == (200, "ok")
    assert await body(http, "/readyz/poststarthook/rbac/bootstrap-roles") == (200, "ok")
    assert (await http.get("/readyz/nope")).status == 404


async def test_not_ready_until_the_bootstrap_finished_and_after_the_store_stopped(app_and_http, core) -> None:
    app, http = app_and_http
    status, text = await body(http, "/readyz")  # failures are always verbose
    assert status == 500
    assert "[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n" in text
    assert "[-]informer-sync failed: reason withheld\n" in text and "[+]etcd ok\n" in text
    assert text.endswith("readyz check failed\n")
    status, text = await body(http, "/readyz?exclude=informer-sync")
    assert status == 500 and "[+]informer-sync excluded: ok\n" in text
    assert (await body(http, "/readyz/poststarthook/rbac/bootstrap-roles"))[0] == 500
    app[READY].set()
    assert await body(http, "/readyz") == (200, "ok")
    await core.store.close()
    status, text = await body(http, "/livez")
    assert status == 500 and "[-]etcd failed: reason withheld\n" in text and text.endswith("livez check failed\n")
    assert await body(http, "/readyz/etcd") == (500, "internal server error: the store is not running\n")
