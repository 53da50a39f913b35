"""Methods a path has no route for, answered as kube-apiserver answers them.

kube-apiserver serves API paths with go-restful: a method no route of the path takes (`PATCH` on
a collection, `POST` on an item, a made-up `FOO`) is the route selection's 405, rendered as a
`Status` (reason MethodNotAllowed, the fixed message, empty details) without an `Allow` header.
Go's HTTP server accepts any token as a method, so `FOO` is routed too: 405 on an API path, 404
on an unknown path (Go's plain `404 page not found` outside every API), `ok` from /healthz (a
plain handler). The connection stays usable."""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from minik3s.testing.server import ServerProcess

NOT_ALLOWED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "the server does not allow this method on the requested resource",
               "reason": "MethodNotAllowed", "details": {}, "code": 405}
NO_ROUTE = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the server could not find the requested resource", "reason": "NotFound",
            "details": {}, "code": 404}


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


@pytest.fixture(scope="module")
def ns(http: httpx.Client) -> str:
    name = "methods-" + uuid.uuid4().hex[:6]
    http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    http.post(f"/api/v1/namespaces/{name}/configmaps", json={"metadata": {"name": "cm"}}).raise_for_status()
    return name


def read_response(s: socket.socket, buf: bytes) -> tuple[int, dict[str, str], bytes, bytes]:
    """One Content-Length response from `s` (after `buf`); returns it and the bytes after it."""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        assert chunk, f"connection closed before a response: {buf!r}"
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
    size = int(headers["content-length"])
    while len(rest) < size:
        chunk = s.recv(65536)
        assert chunk, "connection closed inside a response body"
        rest += chunk
    return int(lines[0].split()[1]), headers, rest[:size], rest[size:]


@pytest.mark.parametrize(("method", "path"), [
    pytest.param("PATCH", "/api/v1/namespaces/{ns}/configmaps", id="patch-on-a-collection"),
    pytest.param("PUT", "/api/v1/namespaces/{ns}/configmaps", id="put-on-a-collection"),
    pytest.param("POST", "/api/v1/namespaces/{ns}/configmaps/cm", id="post-on-an-item"),
    pytest.param("POST", "/api/v1/namespaces/{ns}/configmaps/missing", id="post-on-a-missing-item"),
    pytest.param("POST", "/api/v1/namespaces/{ns}/pods/p/status", id="post-on-a-status-subresource"),
    pytest.param("TRACE", "/api/v1/namespaces/{ns}/configmaps", id="trace"),
    pytest.param("FOO", "/api/v1/namespaces/{ns}/configmaps", id="made-up-method-on-a-collection"),
    pytest.param("FOO", "/api/v1/namespaces/{ns}/configmaps/cm", id="made-up-method-on-an-item"),
    pytest.param("FOO", "/apis/apps/v1/namespaces/{ns}/deployments", id="made-up-method-on-a-group-resource"),
    pytest.param("POST", "/version", id="post-on-version"),
    pytest.param("POST", "/api", id="post-on-api-versions"),
    pytest.param("DELETE", "/api/v1", id="delete-on-a-resource-list"),
    pytest.param("POST", "/apis/apps/v1", id="post-on-a-group-version"),
    pytest.param("GET", "/api/v1/namespaces/{ns}/bindings", id="list-of-a-create-only-resource"),
    pytest.param("GET", "/api/v1/namespaces/{ns}/bindings?watch=1", id="watch-of-a-create-only-resource"),
    pytest.param("DELETE", "/api/v1/namespaces/{ns}/bindings", id="deletecollection-of-a-create-only-resource"),
    pytest.param("GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", id="list-of-a-review"),
])
def test_a_method_without_a_route_is_the_405_status(http: httpx.Client, ns: str, method: str, path: str) -> None:
    r = http.request(method, path.format(ns=ns))
    assert r.status_code == 405, r.text
    assert r.headers["content-type"] == "application/json"
    assert "allow" not in r.headers  # kube-apiserver's service error handler drops go-restful's Allow
    assert r.json() == NOT_ALLOWED
    assert http.get(f"/api/v1/namespaces/{ns}/configmaps/cm").status_code == 200  # nothing changed


@pytest.mark.parametrize("path", [
    pytest.param("/api/v1/namespaces/{ns}/bindings/b", id="binding-item"),
    pytest.param("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/r", id="review-item"),
])
@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_item_paths_of_create_only_resources_have_no_route(http: httpx.Client, ns: str, method: str,
                                                          path: str) -> None:
    """A create-only resource registers only POST on its collection: its item paths match no
    route at all (go-restful's 404, the generic message)."""
    r = http.request(method, path.format(ns=ns))
    assert r.status_code == 404, r.text
    assert r.json() == NO_ROUTE


@pytest.mark.parametrize("path", [
    pytest.param("/api/v1/foos", id="unknown-core-resource"),
    pytest.param("/api/v1/namespaces/{ns}/foos", id="unknown-namespaced-resource"),
    pytest.param("/apis/apps/v1/foos", id="unknown-group-resource"),
    pytest.param("/apis/apps/v9/deployments", id="unknown-group-version"),
    pytest.param("/api/v1/namespaces/{ns}/configmaps/cm/foo", id="unknown-subresource"),
])
def test_a_path_without_a_route_is_the_generic_404_status(http: httpx.Client, ns: str, path: str) -> None:
    """Byte for byte as kube-apiserver's service error handler writes it: Go's field order and
    the empty `details` object NewGenericServerResponse always sets."""
    r = http.get(path.format(ns=ns))
    assert r.status_code == 404, r.text
    assert r.headers["content-type"] == "application/json"
    assert r.content.rstrip(b"\n") == json.dumps(NO_ROUTE, separators=(",", ":")).encode()
    # an object that is not there is another 404: its own message and details naming it
    r = http.get(f"/api/v1/namespaces/{ns}/configmaps/missing")
    assert r.json()["details"] == {"name": "missing", "kind": "configmaps"}


def test_a_create_only_resource_still_creates(http: httpx.Client) -> None:
    r = http.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json={
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}})
    assert r.status_code == 201, r.text
    assert r.json()["status"]["allowed"] is True


@pytest.mark.parametrize("path", [
    pytest.param("/no/such/path", id="outside-the-api"),
    pytest.param("/apis/nope.example.com", id="unserved-group"),
    pytest.param("/apis/nope.example.com/v1", id="unserved-group-version"),
    pytest.param("/apis/nope.example.com/v1/namespaces/{ns}/things/t", id="resource-of-an-unserved-group"),
])
def test_a_path_outside_every_api_is_go_s_plain_404(http: httpx.Client, ns: str, path: str) -> None:
    """kube-apiserver's NotFoundHandler (http.NotFound) answers paths no API web service owns;
    paths under a served group are go-restful's JSON 404 above."""
    r = http.get(path.format(ns=ns))
    assert r.status_code == 404
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.content == b"404 page not found\n"


def test_a_made_up_method_is_routed_and_the_connection_stays_usable(minik3s_api: ServerProcess, ns: str) -> None:
    u = urlsplit(minik3s_api.url)
    host = f"Host: {u.hostname}:{u.port}\r\n"
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall(f"FOO /api/v1/namespaces/{ns}/configmaps/cm HTTP/1.1\r\n{host}\r\n".encode())
        code, headers, body, rest = read_response(s, b"")
        assert (code, json.loads(body)) == (405, NOT_ALLOWED)
        assert headers.get("connection", "").lower() != "close"
        # the same connection: a made-up method with a body, an unknown path, /healthz, then a GET
        s.sendall(f"BREW /api/v1/namespaces/{ns}/configmaps HTTP/1.1\r\n{host}Content-Length: 2\r\n\r\n{{}}".encode())
        code, _, body, rest = read_response(s, rest)
        assert (code, json.loads(body)) == (405, NOT_ALLOWED)
        s.sendall(f"FOO /no/such/path HTTP/1.1\r\n{host}\r\n".encode())
        code, _, body, rest = read_response(s, rest)
        assert (code, body) == (404, b"404 page not found\n")
        s.sendall(f"FOO /healthz HTTP/1.1\r\n{host}\r\n".encode())
        code, _, body, rest = read_response(s, rest)
        assert (code, body) == (200, b"ok")
        s.sendall(f"GET /api/v1/namespaces/{ns}/configmaps/cm HTTP/1.1\r\n{host}\r\n".encode())
        code, _, body, rest = read_response(s, rest)
        assert code == 200 and json.loads(body)["metadata"]["name"] == "cm"


def test_a_made_up_method_after_a_known_one_on_a_kept_alive_connection(minik3s_api: ServerProcess, ns: str) -> None:
    u = urlsplit(minik3s_api.url)
    host = f"Host: {u.hostname}:{u.port}\r\n"
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall(f"GET /api/v1/namespaces/{ns}/configmaps/cm HTTP/1.1\r\n{host}\r\n".encode())
        code, _, _, rest = read_response(s, b"")
        assert code == 200
        s.sendall(f"FOO /api/v1/namespaces/{ns}/configmaps/cm HTTP/1.1\r\n{host}\r\n".encode())
        code, _, body, rest = read_response(s, rest)
        assert (code, json.loads(body)) == (405, NOT_ALLOWED)


@pytest.mark.parametrize("path", ["/apis", "/healthz", "/openapi/v2"])
def test_plain_handlers_answer_any_method(http: httpx.Client, path: str) -> None:
    """kube-apiserver serves these outside go-restful, with handlers that do not check the method."""
    r = http.request("FOO", path)
    assert r.status_code == 200, r.text


def test_not_http_is_still_a_400_status(minik3s_api: ServerProcess) -> None:
    u = urlsplit(minik3s_api.url)
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall(b"GARBAGE\r\n\r\n")
        code, _, body, _ = read_response(s, b"")
    st = json.loads(body)
    assert code == 400 and st["reason"] == "BadRequest"
    assert st["message"].startswith("the request could not be parsed: Invalid method encountered")


def test_a_refused_header_is_a_400_status_and_no_error_in_the_log(minik3s_api: ServerProcess) -> None:
    u = urlsplit(minik3s_api.url)
    before = minik3s_api.tail_log(100_000).count("Error handling request")
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Probe: a\x01b\r\n\r\n")
        code, _, body, _ = read_response(s, b"")
    st = json.loads(body)
    assert code == 400 and st["message"].startswith("the request could not be parsed: Invalid header value char")
    # Go's http.Server answers a malformed request without logging it; a traceback at ERROR per
    # request would let any client fill the server's log
    assert minik3s_api.tail_log(100_000).count("Error handling request") == before
