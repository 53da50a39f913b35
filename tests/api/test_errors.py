"""minik3s.api.errors.invalid renders upstream's NewInvalid message byte for byte."""

from __future__ import annotations

import pytest

from minik3s.api import errors


def cause(field: str, message: str) -> dict:
    return {"reason": "FieldValueInvalid", "field": field, "message": message}


@pytest.mark.parametrize(("kind", "group", "name", "causes", "message"), [
    pytest.param("Pod", "", "p", [cause("spec.containers", "Required value")],
                 'Pod "p" is invalid: spec.containers: Required value', id="core-group-bare-kind"),
    pytest.param("Deployment", "apps", "x", [cause("spec.replicas", "Invalid value: -1: must be greater than or "
                                                                   "equal to 0")],
                 'Deployment.apps "x" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal '
                 "to 0", id="group-suffix"),
    pytest.param("Widget", "example.com", "w", [cause("a", "A"), cause("b", "B")],
                 'Widget.example.com "w" is invalid: [a: A, b: B]', id="several-errors-bracketed"),
    pytest.param("Pod", "", "p", [cause("a", "A"), cause("a", "A"), cause("b", "B")],
                 'Pod "p" is invalid: [a: A, b: B]', id="repeated-error-once-as-ToAggregate"),
    pytest.param("Pod", "", "p", [cause("a", "A"), cause("a", "A")],
                 'Pod "p" is invalid: a: A', id="duplicates-collapse-to-one-bare-error"),
    pytest.param("ConfigMap", "", "c", [], 'ConfigMap "c" is invalid', id="no-errors-no-colon"),
    pytest.param("Pod", "", 'a"b\tc', [cause("metadata.name", "x")],
                 'Pod "a\\"b\\tc" is invalid: metadata.name: x', id="name-quoted-as-go-percent-q"),
    pytest.param("", "", "", [cause("patch", "Invalid value")], ' "" is invalid: patch: Invalid value',
                 id="empty-group-kind-as-patch-errors"),
])
def test_invalid_message(kind, group, name, causes, message):
    err = errors.invalid(kind, name, causes, group)
    assert err.message == message
    status = err.to_status()
    assert status["code"] == 422 and status["reason"] == "Invalid" and status["message"] == message
    # omitempty: an empty kind or cause list is left out, as Go encodes StatusDetails
    assert status["details"].get("kind", "") == kind and status["details"].get("causes", []) == causes
    assert status["details"].get("group") == (group or None)


@pytest.mark.parametrize(("text", "quoted"), [
    pytest.param("plain", '"plain"', id="plain"),
    pytest.param('q"\\', '"q\\"\\\\"', id="quote-and-backslash"),
    pytest.param("\n\r\t\x07\x08\x0c\x0b", '"\\n\\r\\t\\a\\b\\f\\v"', id="c-escapes"),
    pytest.param("\x01\x7f", '"\\x01\\x7f"', id="ascii-control-as-hex"),
    pytest.param("ä日", '"ä日"', id="printable-unicode-kept"),
    pytest.param("\u200b", '"\\u200b"', id="unprintable-unicode-as-u"),
])
def test_go_quote(text, quoted):
    assert errors.go_quote(text) == quoted


@pytest.mark.parametrize(("messages", "text"), [
    pytest.param([], "", id="none"),
    pytest.param(["a"], "a", id="one-bare"),
    pytest.param(["a", "b"], "[a, b]", id="several-bracketed"),
])
def test_aggregate_is_gos_aggregate_error(messages, text):
    assert errors.aggregate(messages) == text


def test_forbidden_is_new_forbidden():
    e = errors.forbidden("deployments", "apps", 'we"b', "denied", causes=[{"message": "denied"}])
    assert (e.code, e.reason) == (403, "Forbidden")
    assert e.message == 'deployments.apps "we\\"b" is forbidden: denied'
    assert list(e.details) == ["name", "group", "kind", "causes"]  # metav1.StatusDetails' field order
    nameless = errors.forbidden("pods", "", "", "no")
    assert nameless.message == "pods is forbidden: no" and nameless.details == {"kind": "pods"}


@pytest.mark.parametrize(("err", "wire"), [
    (errors.not_found("deployments", "apps", "web"),
     b'{"name":"web","group":"apps","kind":"deployments"}'),
    (errors.not_found("pods", "", "p"), b'{"name":"p","kind":"pods"}'),
    (errors.already_exists("configmaps", "", "c"), b'{"name":"c","kind":"configmaps"}'),
    (errors.conflict("replicasets", "apps", "r"), b'{"name":"r","group":"apps","kind":"replicasets"}'),
    (errors.invalid("Deployment", "d", [errors.cause("spec.replicas", "Invalid value: -1")], "apps"),
     b'{"name":"d","group":"apps","kind":"Deployment","causes":[{"reason":"FieldValueInvalid",'
     b'"message":"Invalid value: -1","field":"spec.replicas"}]}'),
    (errors.invalid("Pod", "p", []), b'{"name":"p","kind":"Pod"}'),
])
def test_status_details_are_gos_bytes(err, wire):
    """metav1.StatusDetails encodes name, group, kind, causes in that order, each omitted when
    empty (omitempty): the bytes a client reading the raw body (the Python client's
    ApiException.body) sees from kube-apiserver."""
    import orjson

    assert orjson.dumps(err.to_status()["details"]) == wire
