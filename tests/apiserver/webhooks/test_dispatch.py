"""Admission webhooks called by the real request core (ApiCore over SQLite, fake clock) against
a real HTTPS webhook server on 127.0.0.1 with a throwaway CA (minik3s.testing.webhook_server):
which requests reach a webhook (rules, subresources, scopes, selectors, matchPolicy), what the
AdmissionReview carries, failurePolicy on a webhook that is down, slow or untrusted, denials,
JSON patches in order, IfNeeded reinvocation, dry run, warnings, and service references."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any

import pytest

from apiserver.core import ApiCore
from minik3s.api import errors
from minik3s.api.options import DeleteOptions, WriteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.user import UserInfo
from minik3s.testing.webhook_server import WebhookServer, allow, json_patch, make_ca_and_cert

POD = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
GROUP = "admissionregistration.k8s.io"


def _info(core: ApiCore, resource: str, group: str = "", version: str = "v1") -> ResourceInfo:
    info = core.registry.get(group, version, resource)
    assert info is not None
    return info


def _rule(resources: list[str], *, ops: list[str] | None = None, groups: list[str] | None = None,
          versions: list[str] | None = None, scope: str | None = None) -> dict[str, Any]:
    r: dict[str, Any] = {"operations": ops or ["*"], "apiGroups": groups if groups is not None else [""],
                         "apiVersions": versions or ["v1"], "resources": resources}
    if scope:
        r["scope"] = scope
    return r


def _hook(name: str, server: WebhookServer, path: str, rules: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": server.url(path), "caBundle": server.ca_bundle}, "rules": rules, **extra}


async def _configure(core: ApiCore, kind: str, name: str, *hooks: dict[str, Any]) -> None:
    resource = "validatingwebhookconfigurations" if kind == "validating" else "mutatingwebhookconfigurations"
    await core.create(_info(core, resource, GROUP), None, {"metadata": {"name": name}, "webhooks": list(hooks)})


@pytest.fixture
def server() -> Iterator[WebhookServer]:
    with WebhookServer() as s:
        yield s


async def _pod(core: ApiCore, name: str = "p", ns: str = "default", opts: WriteOptions | None = None,
               labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"labels": labels} if labels else {})}
    return await core.create(_info(core, "pods"), ns, {"metadata": meta, **POD}, opts)


# ------------------------------------------------------------------------------------ the review
async def test_create_review_carries_upstreams_fields(core: ApiCore, server: WebhookServer) -> None:
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v", [_rule(["pods"])]))
    user = UserInfo("alice", uid="u-1", groups=("dev", "system:authenticated"))
    await _pod(core, opts=WriteOptions(field_manager="kubectl-create", user=user))
    [req] = server.requests("/v")
    assert req["uid"] and req["operation"] == "CREATE"
    assert req["kind"] == req["requestKind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert req["resource"] == req["requestResource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert (req["name"], req["namespace"]) == ("p", "default")
    assert "subResource" not in req
    assert req["userInfo"] == {"username": "alice", "uid": "u-1", "groups": ["dev", "system:authenticated"]}
    assert req["object"]["kind"] == "Pod" and req["object"]["apiVersion"] == "v1"
    assert req["object"]["spec"]["containers"][0]["image"] == "busybox"
    assert req["oldObject"] is None and req["dryRun"] is False
    assert req["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1",
                              "fieldManager": "kubectl-create"}


async def test_in_process_caller_without_identity_is_system_apiserver(core: ApiCore, server: WebhookServer) -> None:
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v", [_rule(["pods"])]))
    await _pod(core)
    assert server.requests()[0]["userInfo"] == {"username": "system:apiserver",
                                               "groups": ["system:masters", "system:authenticated"]}


async def test_update_and_delete_reviews(core: ApiCore, server: WebhookServer) -> None:
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v",
                                                    [_rule(["pods"], ops=["UPDATE", "DELETE"])]))
    pods = _info(core, "pods")
    created = await _pod(core)
    assert server.requests() == []  # CREATE is not in the rule
    await core.patch(pods, "default", "p", "merge", {"metadata": {"labels": {"x": "1"}}})
    await core.delete(pods, "default", "p", DeleteOptions(grace_period_seconds=0, propagation_policy="Background"))
    upd, dele = server.requests()
    assert upd["operation"] == "UPDATE" and upd["options"]["kind"] == "UpdateOptions"
    assert upd["oldObject"]["metadata"].get("labels") is None and upd["object"]["metadata"]["labels"] == {"x": "1"}
    assert dele["operation"] == "DELETE" and dele["object"] is None
    assert dele["oldObject"]["metadata"]["uid"] == created["metadata"]["uid"]
    assert dele["options"] == {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "gracePeriodSeconds": 0,
                               "propagationPolicy": "Background"}


async def test_delete_denied_keeps_the_object(core: ApiCore, server: WebhookServer) -> None:
    server.answer = lambda _p, _r: {"allowed": False, "status": {"message": "protected", "code": 403,
                                                                 "reason": "Forbidden"}}
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v", [_rule(["pods"], ops=["DELETE"])]))
    await _pod(core)
    with pytest.raises(errors.ApiError) as e:
        await core.delete(_info(core, "pods"), "default", "p")
    assert (e.value.code, e.value.reason) == (403, "Forbidden")
    assert e.value.message == 'admission webhook "v.example.com" denied the request: protected'
    assert core.get(_info(core, "pods"), "default", "p")["metadata"]["name"] == "p"


# ------------------------------------------------------------------------------------ denials
@pytest.mark.parametrize(("status", "code", "reason", "message"), [
    pytest.param({"message": "no latest tags"}, 400, "", 'admission webhook "v.example.com" denied the request: '
                 "no latest tags", id="message-default-code-400"),
    pytest.param({"code": 403, "reason": "Forbidden", "message": "nope"}, 403, "Forbidden",
                 'admission webhook "v.example.com" denied the request: nope', id="webhook-code-and-reason-kept"),
    pytest.param({"code": 200, "message": "x"}, 400, "", 'admission webhook "v.example.com" denied the request: x',
                 id="code-below-400-becomes-400"),
    pytest.param({"reason": "Conflict"}, 400, "Conflict",
                 'admission webhook "v.example.com" denied the request: Conflict', id="reason-as-message"),
    pytest.param(None, 400, "", 'admission webhook "v.example.com" denied the request without explanation',
                 id="no-status"),
])
async def test_denial_is_upstreams_status(core: ApiCore, server: WebhookServer, status: dict[str, Any] | None,
                                          code: int, reason: str, message: str) -> None:
    server.answer = lambda _p, _r: {"allowed": False, **({"status": status} if status else {})}
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v", [_rule(["pods"])]))
    with pytest.raises(errors.ApiError) as e:
        await _pod(core)
    assert (e.value.code, e.value.message) == (code, message)
    st = e.value.to_status()
    assert st.get("reason", "") == reason and st["status"] == "Failure"
    with pytest.raises(errors.NotFoundError):
        core.get(_info(core, "pods"), "default", "p")


# ------------------------------------------------------------------------------------ failure policy
async def test_webhook_down_fail_is_500_and_ignore_admits(core: ApiCore) -> None:
    dead = WebhookServer()  # never started: the port is closed after stop
    dead.start()
    dead.stop()
    await _configure(core, "validating", "v", _hook("v.example.com", dead, "/v", [_rule(["pods"])]))
    with pytest.raises(errors.InternalError) as e:
        await _pod(core)
    assert e.value.code == 500
    assert e.value.message == (
        f'Internal error occurred: failed calling webhook "v.example.com": failed to call webhook: Post '
        f'"https://127.0.0.1:{dead.port}/v?timeout=10s": dial tcp 127.0.0.1:{dead.port}: connect: connection refused')
    cfg = _info(core, "validatingwebhookconfigurations", GROUP)
    await core.patch(cfg, None, "v", "json", [{"op": "replace", "path": "/webhooks/0/failurePolicy",
                                                "value": "Ignore"}])
    assert (await _pod(core))["metadata"]["name"] == "p"


async def test_timeout_fails_fast(core: ApiCore, server: WebhookServer) -> None:
    server.hold = True
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v", [_rule(["pods"])],
                                                    timeoutSeconds=1))
    t0 = time.monotonic()
    with pytest.raises(errors.InternalError) as e:
        await _pod(core)
    assert time.monotonic() - t0 < 5
    assert e.value.message.endswith(f'Post "https://127.0.0.1:{server.port}/v?timeout=1s": context deadline exceeded')


async def test_timeout_with_ignore_admits(core: ApiCore, server: WebhookServer) -> None:
    server.hold = True
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v", [_rule(["pods"])],
                                                    timeoutSeconds=1, failurePolicy="Ignore"))
    assert (await _pod(core))["metadata"]["name"] == "p"


@pytest.mark.parametrize(("bundle", "why"), [
    pytest.param(base64.b64encode(make_ca_and_cert()[0]).decode(),
                 "tls: failed to verify certificate: x509: certificate signed by unknown authority", id="other-ca"),
    pytest.param(base64.b64encode(b"not a certificate").decode(),
                 "unable to load root certificates: unable to parse bytes as PEM block", id="garbage-bundle"),
    pytest.param("", "tls: failed to verify certificate: x509: certificate signed by unknown authority",
                 id="empty-bundle-uses-system-roots"),
])
async def test_untrusted_certificate_fails_closed(core: ApiCore, server: WebhookServer, bundle: str, why: str) -> None:
    hook = _hook("v.example.com", server, "/v", [_rule(["pods"])])
    hook["clientConfig"]["caBundle"] = bundle
    await _configure(core, "validating", "v", hook)
    with pytest.raises(errors.InternalError) as e:
        await _pod(core)
    assert e.value.message.endswith(why)
    assert server.requests() == []


@pytest.mark.parametrize(("answer", "why"), [
    pytest.param({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "response": {"uid": "other",
                                                                                                "allowed": True}},
                 'received invalid webhook response: expected response.uid=', id="uid-mismatch"),
    pytest.param({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"},
                 "received invalid webhook response: webhook response was absent", id="no-response"),
    pytest.param({"allowed": True, **json_patch([{"op": "add", "path": "/metadata/labels", "value": {}}])},
                 "received invalid webhook response: validating webhook may not return response.patch",
                 id="validating-webhook-returns-patch"),
])
async def test_invalid_response_fails_closed(core: ApiCore, server: WebhookServer, answer: dict[str, Any],
                                             why: str) -> None:
    server.answer = lambda _p, _r: answer
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v", [_rule(["pods"])]))
    with pytest.raises(errors.InternalError) as e:
        await _pod(core)
    assert why in e.value.message


# ------------------------------------------------------------------------------------ mutation
async def test_mutating_webhooks_patch_in_order_then_validating_sees_the_result(core: ApiCore,
                                                                                 server: WebhookServer) -> None:
    def answer(path: str, req: dict[str, Any]) -> dict[str, Any]:
        labels = req["object"]["metadata"].get("labels") or {}
        if path == "/m1":
            return json_patch([{"op": "add", "path": "/metadata/labels", "value": {"step": "1"}}])
        if path == "/m2":
            return json_patch([{"op": "replace", "path": "/metadata/labels/step", "value": labels["step"] + "2"}])
        return allow(path, req)

    server.answer = answer
    await _configure(core, "mutating", "a", _hook("m1.example.com", server, "/m1", [_rule(["pods"])]))
    await _configure(core, "mutating", "b", _hook("m2.example.com", server, "/m2", [_rule(["pods"])]))
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v", [_rule(["pods"])]))
    created = await _pod(core, opts=WriteOptions(field_manager="me"))
    assert created["metadata"]["labels"] == {"step": "12"}
    assert core.get(_info(core, "pods"), "default", "p")["metadata"]["labels"] == {"step": "12"}
    assert server.requests("/v")[0]["object"]["metadata"]["labels"] == {"step": "12"}
    # as upstream: managedFields are recorded before mutating admission, so no manager owns the label
    [entry] = created["metadata"]["managedFields"]
    assert entry["manager"] == "me" and "f:labels" not in entry["fieldsV1"].get("f:metadata", {})


async def test_patch_that_breaks_validation_is_refused(core: ApiCore, server: WebhookServer) -> None:
    server.answer = lambda _p, _r: json_patch([{"op": "replace", "path": "/spec/containers/0/name", "value": "Bad_Name"}])
    await _configure(core, "mutating", "m", _hook("m.example.com", server, "/m", [_rule(["pods"])]))
    with pytest.raises(errors.InvalidError) as e:
        await _pod(core)
    assert any(c["field"] == "spec.containers[0].name" for c in e.value.causes)


async def test_patch_that_does_not_apply_is_500_even_with_ignore(core: ApiCore, server: WebhookServer) -> None:
    server.answer = lambda _p, _r: json_patch([{"op": "remove", "path": "/metadata/nothing/here"}])
    await _configure(core, "mutating", "m", _hook("m.example.com", server, "/m", [_rule(["pods"])],
                                                  failurePolicy="Ignore"))
    with pytest.raises(errors.InternalError):
        await _pod(core)


async def test_reinvocation_if_needed(core: ApiCore, server: WebhookServer) -> None:
    def answer(path: str, req: dict[str, Any]) -> dict[str, Any]:
        labels = req["object"]["metadata"].get("labels") or {}
        if path == "/first":  # copies the label the second one sets, once it is there
            if "b" in labels and "copy" not in labels:
                return json_patch([{"op": "add", "path": "/metadata/labels/copy", "value": labels["b"]}])
            return allow(path, req)
        return json_patch([{"op": "add", "path": "/metadata/labels", "value": {**labels, "b": "x"}}])

    server.answer = answer
    await _configure(core, "mutating", "a", _hook("first.example.com", server, "/first", [_rule(["pods"])],
                                                  reinvocationPolicy="IfNeeded"))
    await _configure(core, "mutating", "b", _hook("second.example.com", server, "/second", [_rule(["pods"])]))
    created = await _pod(core)
    assert created["metadata"]["labels"] == {"b": "x", "copy": "x"}
    assert len(server.requests("/first")) == 2 and len(server.requests("/second")) == 1


async def test_never_policy_is_not_reinvoked(core: ApiCore, server: WebhookServer) -> None:
    server.answer = lambda p, r: allow(p, r) if p == "/first" else json_patch(
        [{"op": "add", "path": "/metadata/labels", "value": {"b": "x"}}])
    await _configure(core, "mutating", "a", _hook("first.example.com", server, "/first", [_rule(["pods"])]))
    await _configure(core, "mutating", "b", _hook("second.example.com", server, "/second", [_rule(["pods"])]))
    await _pod(core)
    assert len(server.requests("/first")) == 1


async def test_warnings_reach_the_response(core: ApiCore, server: WebhookServer) -> None:
    server.answer = lambda _p, _r: {"allowed": True, "warnings": ["image uses latest tag"]}
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v", [_rule(["pods"])]))
    opts = WriteOptions()
    await _pod(core, opts=opts)
    assert opts.warnings == ["image uses latest tag"]


# ------------------------------------------------------------------------------------ dry run
async def test_dry_run_reaches_side_effect_free_webhooks_and_stores_nothing(core: ApiCore,
                                                                            server: WebhookServer) -> None:
    server.answer = lambda _p, _r: json_patch([{"op": "add", "path": "/metadata/labels", "value": {"m": "1"}}])
    await _configure(core, "mutating", "m", _hook("m.example.com", server, "/m", [_rule(["pods"])],
                                                  sideEffects="NoneOnDryRun"))
    out = await _pod(core, opts=WriteOptions(dry_run=True))
    assert out["metadata"]["labels"] == {"m": "1"}
    [req] = server.requests()
    assert req["dryRun"] is True and req["options"]["dryRun"] == ["All"]
    with pytest.raises(errors.NotFoundError):
        core.get(_info(core, "pods"), "default", "p")


# ------------------------------------------------------------------------------------ matching
async def test_namespace_selector_uses_the_namespaces_labels(core: ApiCore, server: WebhookServer) -> None:
    nss = _info(core, "namespaces")
    await core.create(nss, None, {"metadata": {"name": "watched", "labels": {"webhooks": "on"}}})
    await core.create(nss, None, {"metadata": {"name": "other"}})
    sel = {"matchLabels": {"webhooks": "on"}}
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v", [_rule(["pods", "namespaces"])],
                                                    namespaceSelector=sel))
    await _pod(core, ns="watched")
    await _pod(core, ns="other")
    # a namespace request is matched against the namespace object itself
    await core.create(nss, None, {"metadata": {"name": "third", "labels": {"webhooks": "on"}}})
    await core.create(nss, None, {"metadata": {"name": "fourth"}})
    got = [(r["resource"]["resource"], r.get("namespace")) for r in server.requests()]
    assert got == [("pods", "watched"), ("namespaces", "third")]


async def test_object_selector_matches_old_or_new_labels(core: ApiCore, server: WebhookServer) -> None:
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v", [_rule(["pods"])],
                                                    objectSelector={"matchLabels": {"team": "a"}}))
    pods = _info(core, "pods")
    await _pod(core, "plain")
    await _pod(core, "labelled", labels={"team": "a"})
    # removing the label: the old object still matches
    await core.patch(pods, "default", "labelled", "merge", {"metadata": {"labels": {"team": None}}})
    await core.patch(pods, "default", "plain", "merge", {"metadata": {"labels": {"other": "x"}}})
    assert [(r["operation"], r["name"]) for r in server.requests()] == [("CREATE", "labelled"), ("UPDATE", "labelled")]


async def test_subresource_rules(core: ApiCore, server: WebhookServer) -> None:
    await _configure(core, "validating", "s", _hook("status.example.com", server, "/s", [_rule(["pods/status"])]))
    await _configure(core, "validating", "all", _hook("all.example.com", server, "/all", [_rule(["*/*"])]))
    await _configure(core, "validating", "main", _hook("main.example.com", server, "/main", [_rule(["*"])]))
    pods = _info(core, "pods")
    await _pod(core)
    await core.patch(pods, "default", "p", "merge", {"status": {"phase": "Running"}}, subresource="status")
    [st] = server.requests("/s")
    assert st["subResource"] == st["requestSubResource"] == "status" and st["kind"]["kind"] == "Pod"
    assert [r["subResource"] if "subResource" in r else "" for r in server.requests("/all")] == ["", "status"]
    assert ["subResource" in r for r in server.requests("/main")] == [False]


async def test_scope_rules(core: ApiCore, server: WebhookServer) -> None:
    await _configure(core, "validating", "c", _hook("cluster.example.com", server, "/cluster",
                                                    [_rule(["*"], scope="Cluster")]))
    await _configure(core, "validating", "n", _hook("ns.example.com", server, "/ns",
                                                    [_rule(["*"], scope="Namespaced")]))
    await core.create(_info(core, "namespaces"), None, {"metadata": {"name": "n1"}})
    await core.create(_info(core, "configmaps"), "default", {"metadata": {"name": "cm"}})
    assert [r["resource"]["resource"] for r in server.requests("/cluster")] == ["namespaces"]
    assert [r["resource"]["resource"] for r in server.requests("/ns")] == ["configmaps"]


async def test_webhook_configurations_are_exempt(core: ApiCore, server: WebhookServer) -> None:
    server.answer = lambda _p, _r: {"allowed": False}
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v",
                                                    [_rule(["*/*"], groups=["*"], versions=["*"])]))
    # a webhook denying everything cannot lock its own configuration
    await _configure(core, "mutating", "m", _hook("m.example.com", server, "/m", [_rule(["pods"])]))
    await core.delete(_info(core, "validatingwebhookconfigurations", GROUP), None, "v")
    assert server.requests() == []


async def test_match_policy_equivalent_converts_to_the_named_version(core: ApiCore, server: WebhookServer) -> None:
    hpa = {"metadata": {"name": "h"}, "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                                                  "name": "d"}, "minReplicas": 1, "maxReplicas": 3}}
    rule = _rule(["horizontalpodautoscalers"], groups=["autoscaling"], versions=["v1"])
    await _configure(core, "validating", "eq", _hook("eq.example.com", server, "/eq", [rule]))
    await _configure(core, "validating", "ex", _hook("ex.example.com", server, "/ex", [rule], matchPolicy="Exact"))
    await core.create(_info(core, "horizontalpodautoscalers", "autoscaling", "v2"), "default", hpa)
    assert server.requests("/ex") == []
    [req] = server.requests("/eq")
    assert req["kind"] == {"group": "autoscaling", "version": "v1", "kind": "HorizontalPodAutoscaler"}
    assert req["requestKind"]["version"] == "v2"
    assert req["object"]["apiVersion"] == "autoscaling/v1" and req["object"]["spec"]["maxReplicas"] == 3


async def test_match_conditions_choose_the_requests_the_webhook_sees(core: ApiCore, server: WebhookServer) -> None:
    """CEL over object / oldObject / request: every condition true -> called; one false ->
    skipped, even when an earlier one failed (a DELETE has no object: the label condition errs,
    the operation condition is false, so the webhook is skipped and the request goes on)."""
    cond = [{"name": "team-a", "expression": "has(object.metadata.labels) && object.metadata.labels['team'] == 'a'"},
            {"name": "writes", "expression": "request.operation in ['CREATE', 'UPDATE'] && "
                                             "request.resource.resource.lowerAscii() == 'pods'"}]
    await _configure(core, "validating", "m", _hook("m.example.com", server, "/m", [_rule(["pods"])],
                                                    matchConditions=cond))
    await _pod(core, "mine", labels={"team": "a"})
    await _pod(core, "theirs", labels={"team": "b"})
    await _pod(core, "bare")
    assert [r["name"] for r in server.requests("/m")] == ["mine"]
    await core.delete(_info(core, "pods"), "default", "mine", DeleteOptions(grace_period_seconds=0))
    assert [r["operation"] for r in server.requests("/m")] == ["CREATE"]


async def test_match_condition_errors_follow_failure_policy(core: ApiCore, server: WebhookServer) -> None:
    bad = [{"name": "typo", "expression": "object.metadata.labels.tema == 'a'"}]
    await _configure(core, "validating", "i", _hook("ignore.example.com", server, "/i", [_rule(["pods"])],
                                                    matchConditions=bad, failurePolicy="Ignore"))
    await _pod(core, "a", labels={"team": "a"})
    assert server.requests() == []  # Ignore: skipped, the request goes on
    await _configure(core, "validating", "f", _hook("fail.example.com", server, "/f", [_rule(["pods"])],
                                                    matchConditions=bad))
    with pytest.raises(errors.ForbiddenError) as e:
        await _pod(core, "b", labels={"team": "a"})
    assert e.value.code == 403
    assert e.value.message == ('pods "b" is forbidden: expression \'object.metadata.labels.tema == \'a\'\' '
                               "resulted in error: no such key: tema")
    assert e.value.details == {"name": "b", "kind": "pods"}
    assert server.requests() == []


# ------------------------------------------------------------------------------------ service references
async def test_service_reference_maps_to_local_endpoints(core: ApiCore) -> None:
    with WebhookServer(dns_names=["hook.default.svc"]) as server:
        await core.create(_info(core, "services"), "default", {"metadata": {"name": "hook"}, "spec": {
            "ports": [{"name": "https", "port": 443, "targetPort": server.port}]}})
        await core.create(_info(core, "endpoints"), "default", {"metadata": {"name": "hook"}, "subsets": [{
            "addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": server.port}]}]})
        hook = _hook("svc.example.com", server, "/", [_rule(["configmaps"])])
        hook["clientConfig"] = {"service": {"namespace": "default", "name": "hook", "path": "/validate"},
                                "caBundle": server.ca_bundle}
        await _configure(core, "validating", "svc", hook)
        await core.create(_info(core, "configmaps"), "default", {"metadata": {"name": "cm"}})
        assert [r["name"] for r in server.requests("/validate")] == ["cm"]


async def test_service_without_endpoints_fails_with_upstreams_text(core: ApiCore, server: WebhookServer) -> None:
    await core.create(_info(core, "services"), "default", {"metadata": {"name": "hook"}, "spec": {
        "ports": [{"port": 443}]}})
    hook = _hook("svc.example.com", server, "/", [_rule(["configmaps"])])
    hook["clientConfig"] = {"service": {"namespace": "default", "name": "hook", "path": "/v"}}
    await _configure(core, "validating", "svc", hook)
    with pytest.raises(errors.InternalError) as e:
        await core.create(_info(core, "configmaps"), "default", {"metadata": {"name": "cm"}})
    assert e.value.message == (
        'Internal error occurred: failed calling webhook "svc.example.com": failed to call webhook: Post '
        '"https://hook.default.svc:443/v?timeout=10s": no endpoints available for service "hook"')


# ------------------------------------------------------------------------------------ subresource creates
async def test_eviction_is_a_create_of_pods_eviction_with_the_eviction(core: ApiCore, server: WebhookServer) -> None:
    server.answer = lambda _p, _r: {"allowed": False, "status": {"code": 429, "reason": "TooManyRequests",
                                                                 "message": "not now"}}
    await _configure(core, "validating", "e", _hook("evict.example.com", server, "/e",
                                                    [_rule(["pods/eviction"], ops=["CREATE"])]))
    await _pod(core)
    with pytest.raises(errors.ApiError) as e:
        await core.evict("default", "p", {"metadata": {"name": "p", "namespace": "default"}})
    assert (e.value.code, e.value.message) == (429, 'admission webhook "evict.example.com" denied the request: not now')
    [req] = server.requests()
    assert req["kind"] == req["requestKind"] == {"group": "policy", "version": "v1", "kind": "Eviction"}
    assert req["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert (req["subResource"], req["operation"], req["name"]) == ("eviction", "CREATE", "p")
    assert req["object"]["kind"] == "Eviction" and req["oldObject"] is None
    assert core.get(_info(core, "pods"), "default", "p")["metadata"].get("deletionTimestamp") is None


async def test_binding_is_a_create_of_pods_binding_not_an_update(core: ApiCore, server: WebhookServer) -> None:
    await core.create(_info(core, "nodes"), None, {"metadata": {"name": "n1"}})
    await _configure(core, "validating", "b", _hook("bind.example.com", server, "/b",
                                                    [_rule(["pods/binding", "pods"], ops=["*"])]))
    await _pod(core)
    await core.bind("default", "p", {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}})
    assert core.get(_info(core, "pods"), "default", "p")["spec"]["nodeName"] == "n1"
    got = [(r["operation"], r.get("subResource", ""), r["kind"]["kind"]) for r in server.requests()]
    assert got == [("CREATE", "", "Pod"), ("CREATE", "binding", "Binding")]


async def test_configuration_changes_apply_to_the_next_request(core: ApiCore, server: WebhookServer) -> None:
    server.answer = lambda _p, _r: {"allowed": False}
    cfg = _info(core, "validatingwebhookconfigurations", GROUP)
    await _configure(core, "validating", "v", _hook("v.example.com", server, "/v", [_rule(["configmaps"])]))
    cms = _info(core, "configmaps")
    with pytest.raises(errors.ApiError, match="denied the request"):
        await core.create(cms, "default", {"metadata": {"name": "a"}})
    # a new resource in the rules is matched at once
    await core.patch(cfg, None, "v", "json", [{"op": "replace", "path": "/webhooks/0/rules/0/resources",
                                                "value": ["secrets"]}])
    await core.create(cms, "default", {"metadata": {"name": "a"}})
    with pytest.raises(errors.ApiError, match="denied the request"):
        await core.create(_info(core, "secrets"), "default", {"metadata": {"name": "s"}})
    await core.delete(cfg, None, "v")
    await core.create(_info(core, "secrets"), "default", {"metadata": {"name": "s"}})
    assert [r["resource"]["resource"] for r in server.requests()] == ["configmaps", "secrets"]


async def test_mutation_cannot_change_system_fields_or_status(core: ApiCore, server: WebhookServer) -> None:
    server.answer = lambda _p, _r: json_patch([
        {"op": "replace", "path": "/metadata/uid", "value": "forged"},
        {"op": "replace", "path": "/metadata/name", "value": "renamed"},
        {"op": "add", "path": "/status", "value": {"phase": "Running"}},
        {"op": "add", "path": "/metadata/annotations", "value": {"kept": "yes"}}])
    await _configure(core, "mutating", "m", _hook("m.example.com", server, "/m", [_rule(["pods"])]))
    created = await _pod(core)
    meta = created["metadata"]
    assert (meta["name"], meta["annotations"]) == ("p", {"kept": "yes"})
    assert meta["uid"] != "forged" and created["status"].get("phase") == "Pending"


async def test_spec_mutation_on_update_bumps_generation(core: ApiCore, server: WebhookServer) -> None:
    deps = _info(core, "deployments", "apps")
    body = {"metadata": {"name": "d"}, "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}, "template": {
        "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    created = await core.create(deps, "default", body)
    assert created["metadata"]["generation"] == 1
    server.answer = lambda _p, _r: json_patch([{"op": "replace", "path": "/spec/replicas", "value": 5}])
    await _configure(core, "mutating", "m", _hook("m.example.com", server, "/m",
                                                  [_rule(["deployments"], ops=["UPDATE"], groups=["apps"])]))
    # a label-only change by the user; the webhook changes the spec
    out = await core.patch(deps, "default", "d", "merge", {"metadata": {"labels": {"x": "y"}}})
    assert (out["spec"]["replicas"], out["metadata"]["generation"]) == (5, 2)


async def test_k3d_host_alias_reaches_a_webhook_server_on_this_machine(core: ApiCore) -> None:
    """kopf's WebhookAutoServer on a K3s-named cluster registers `https://host.k3d.internal:PORT`
    with a certificate for that name: the API server reaches it on this machine, verifying the
    certificate against the name, as a k3d cluster's API server reaches its host."""
    with WebhookServer(dns_names=["host.k3d.internal"]) as s:
        hook = _hook("alias.example.com", s, "/v", [_rule(["pods"], ops=["CREATE"])])
        hook["clientConfig"]["url"] = f"https://host.k3d.internal:{s.port}/v"
        await _configure(core, "validating", "alias", hook)
        await _pod(core, "aliased")
        assert [r["name"] for r in s.requests("/v")] == ["aliased"]
