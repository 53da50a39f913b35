"""Decoding's spec memo (SchemaIndex._decode_spec): a spec known to decode to itself skips the
walk; every other spec is walked as before, however often it repeats (unknown fields dropped
and reported, quantities written canonically)."""

import copy

from apiserver.strategies.schema import DECODE_MEMO_SIZE, SchemaIndex


def pod(**extra):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}], **extra}}


def test_canonical_spec_is_unchanged_every_time():
    idx = SchemaIndex()
    for _ in range(3):
        p = pod()
        assert idx.decode("", "Pod", p) == []
        assert p == pod()


def test_unknown_fields_dropped_and_reported_on_every_repeat():
    idx = SchemaIndex()
    idx.decode("", "Pod", pod())
    for _ in range(3):
        p = pod(foo=1)
        p["spec"]["containers"][0]["bar"] = 2
        p["metadata"]["baz"] = 3
        assert idx.decode("", "Pod", p) == ["metadata.baz", "spec.containers[0].bar", "spec.foo"]
        assert p == {**pod(), "metadata": {"name": "p", "labels": {"a": "b"}}}


def test_quantities_written_canonically_on_every_repeat():
    idx = SchemaIndex()
    for _ in range(3):
        p = pod()
        p["spec"]["containers"][0]["resources"]["requests"] = {"cpu": 0.5, "memory": "0.5Gi"}
        assert idx.decode("", "Pod", p) == []
        assert p["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "512Mi"}


def test_memo_is_bounded_and_evicted_specs_still_decode():
    idx = SchemaIndex()
    idx.decode("", "Pod", pod(hostname="once"))
    assert len(idx._unchanged) == 0  # a spec enters on its second sighting
    for i in range(DECODE_MEMO_SIZE + 10):
        idx.decode("", "Pod", pod(hostname=f"h{i}"))
        idx.decode("", "Pod", pod(hostname=f"h{i}"))
    assert len(idx._unchanged) == DECODE_MEMO_SIZE
    assert len(idx._unchanged._seen) <= DECODE_MEMO_SIZE
    p = pod(hostname="h0", foo=1)
    assert idx.decode("", "Pod", p) == ["spec.foo"]
    first = pod(hostname="h0")
    assert idx.decode("", "Pod", copy.deepcopy(first)) == []


def test_template_kinds_keep_their_paths():
    idx = SchemaIndex()
    d = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
         "spec": {"selector": {"matchLabels": {"a": "b"}},
                  "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod()["spec"]}}}
    assert idx.decode("apps", "Deployment", copy.deepcopy(d)) == []
    d["spec"]["template"]["spec"]["x"] = 1
    assert idx.decode("apps", "Deployment", d) == ["spec.template.spec.x"]


def token_pod(name, **extra):
    p = pod(**extra)
    p["spec"]["volumes"] = [{"name": name, "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}]
    p["spec"]["containers"][0]["volumeMounts"] = [{"name": name, "mountPath": "/var/run/secrets/x"}]
    return p


def test_pods_alike_but_for_their_token_volume_name_share_one_entry():
    idx = SchemaIndex()
    for name in ("kube-api-access-bcdfg", "kube-api-access-hjklm", "kube-api-access-npqrs"):
        p = token_pod(name)
        assert idx.decode("", "Pod", p) == [] and p == token_pod(name)
    assert len(idx._unchanged) == 1
    # an unknown field in a later one is still dropped and reported, its quantities canonical
    p = token_pod("kube-api-access-tvwxz", foo=1)
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = 0.5
    assert idx.decode("", "Pod", p) == ["spec.foo"]
    assert p["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "500m"
    assert p["spec"]["volumes"][0]["name"] == "kube-api-access-tvwxz"
