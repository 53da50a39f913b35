"""422 messages over HTTP as upstream's apierrors.NewInvalid builds them: the kind qualified by
its group (`Deployment.apps "d" is invalid: ...`), the core group without a suffix, the name as
Go's %q, against a real API server."""

from __future__ import annotations

import uuid

import httpx
import pytest

from minik3s.testing.server import ServerProcess


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess):
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


@pytest.fixture(scope="module")
def ns(http) -> str:
    name = "inv-" + uuid.uuid4().hex[:6]
    http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    return name


def invalid_status(r: httpx.Response) -> dict:
    assert r.status_code == 422, r.text
    st = r.json()
    assert st["kind"] == "Status" and st["reason"] == "Invalid"
    return st


TEMPLATE = {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


@pytest.mark.parametrize(("path", "body", "message", "group"), [
    pytest.param("/api/v1/namespaces/{ns}/pods", {"metadata": {"name": "p"}, "spec": {"containers": []}},
                 'Pod "p" is invalid: spec.containers: Required value', None, id="core-group-has-no-suffix"),
    pytest.param("/apis/apps/v1/namespaces/{ns}/deployments",
                 {"metadata": {"name": "d"}, "spec": {"replicas": -1, "selector": {"matchLabels": {"app": "d"}},
                                                      "template": TEMPLATE}},
                 'Deployment.apps "d" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal '
                 "to 0", "apps", id="apps-kind-qualified-by-group"),
    pytest.param("/apis/scheduling.k8s.io/v1/priorityclasses", {"metadata": {"name": "Bad"}, "value": 1},
                 'PriorityClass.scheduling.k8s.io "Bad" is invalid: metadata.name: Invalid value: "Bad": a lowercase '
                 "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
                 "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                 "scheduling.k8s.io", id="dotted-group"),
])
def test_invalid_message_names_the_group_kind(http, ns, path, body, message, group):
    st = invalid_status(http.post(path.format(ns=ns), json=body))
    assert st["message"] == message
    assert st["details"].get("group") == group


def test_invalid_delete_options_are_meta_k8s_io(http, ns):
    http.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "cm"}}).raise_for_status()
    r = http.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps/cm", json={"propagationPolicy": "Bogus"})
    st = invalid_status(r)
    assert st["message"] == ('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
                             '"Bogus": supported values: "Foreground", "Background", "Orphan", "nil"')
    assert st["details"]["group"] == "meta.k8s.io" and st["details"]["kind"] == "DeleteOptions"
    assert http.get(f"/api/v1/namespaces/{ns}/configmaps/cm").status_code == 200
