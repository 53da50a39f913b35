"""apiserver_request_total's labels per request, as kube-apiserver's metrics derive them from
its RequestInfo: (verb, dry_run, group, version, resource, subresource, scope); None for a path
that names no served resource (so junk URLs cannot grow the label sets). On the real app."""

from __future__ import annotations

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from multidict import CIMultiDict

from apiserver.app import create_app
from apiserver.core import ApiCore
from apiserver.handlers.metrics import request_labels


@pytest.fixture
def app(core: ApiCore) -> web.Application:
    return create_app(core)


@pytest.mark.parametrize(("method", "path", "headers", "expected"), [
    pytest.param("GET", "/api/v1/namespaces/ns1/pods", {}, ("LIST", "", "", "v1", "pods", "", "namespace"), id="list"),
    pytest.param("GET", "/api/v1/pods", {}, ("LIST", "", "", "v1", "pods", "", "cluster"), id="list-all"),
    # upstream CleanScope: a list naming one object by fieldSelector (RequestInfo.Name) is "resource"
    pytest.param("GET", "/api/v1/namespaces/ns1/pods?fieldSelector=metadata.name%3Dp", {},
                 ("LIST", "", "", "v1", "pods", "", "resource"), id="list-by-name"),
    pytest.param("GET", "/api/v1/namespaces/ns1/pods?watch=true", {},
                 ("WATCH", "", "", "v1", "pods", "", "namespace"), id="watch-query"),
    pytest.param("GET", "/api/v1/watch/namespaces/ns1/pods", {},
                 ("WATCH", "", "", "v1", "pods", "", "namespace"), id="watch-prefix"),
    pytest.param("GET", "/api/v1/namespaces/ns1/pods/p", {}, ("GET", "", "", "v1", "pods", "", "resource"), id="get"),
    pytest.param("GET", "/api/v1/namespaces/ns1/pods/p/log", {},
                 ("GET", "", "", "v1", "pods", "log", "resource"), id="subresource"),
    pytest.param("POST", "/api/v1/namespaces/ns1/pods/p/exec", {},
                 ("CONNECT", "", "", "v1", "pods", "exec", "resource"), id="connect"),
    pytest.param("POST", "/api/v1/namespaces/ns1/pods?dryRun=All", {},
                 ("POST", "All", "", "v1", "pods", "", "resource"), id="create-dry-run"),
    pytest.param("PATCH", "/apis/apps/v1/namespaces/ns1/deployments/d",
                 {"Content-Type": "application/apply-patch+yaml"},
                 ("APPLY", "", "apps", "v1", "deployments", "", "resource"), id="apply"),
    pytest.param("PATCH", "/apis/apps/v1/namespaces/ns1/deployments/d",
                 {"Content-Type": "application/merge-patch+json"},
                 ("PATCH", "", "apps", "v1", "deployments", "", "resource"), id="patch"),
    pytest.param("DELETE", "/api/v1/namespaces/ns1/configmaps", {},
                 ("DELETECOLLECTION", "", "", "v1", "configmaps", "", "namespace"), id="deletecollection"),
    pytest.param("PUT", "/api/v1/namespaces/ns1/finalize", {},
                 ("PUT", "", "", "v1", "namespaces", "finalize", "resource"), id="namespace-subresource"),
    pytest.param("GET", "/api/v1/namespaces/ns1", {}, ("GET", "", "", "v1", "namespaces", "", "resource"),
                 id="namespace"),
    pytest.param("GET", "/healthz", {}, ("GET", "", "", "", "", "/healthz", ""), id="non-resource"),
    pytest.param("GET", "/api/v1", {}, ("GET", "", "", "", "", "/api/v1", ""), id="discovery"),
    pytest.param("GET", "/api/v1/namespaces/ns1/nosuchthings", {}, None, id="unknown-resource"),
    pytest.param("GET", "/no/such/path", {}, None, id="junk-path"),
])
def test_request_labels(app: web.Application, method: str, path: str, headers: dict[str, str],
                        expected: tuple[str, ...] | None) -> None:
    req = make_mocked_request(method, path, headers=CIMultiDict(headers), app=app)
    assert request_labels(req) == expected
