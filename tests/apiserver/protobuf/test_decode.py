"""Protobuf request decoding: real kubectl bodies, hand-assembled bytes, round trips, fuzzing."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from apiserver.protobuf import (
    ProtobufError,
    UnsupportedKindError,
    decode_message,
    decode_protobuf,
    encode_protobuf,
)
from apiserver.protobuf.wire import encode_key, encode_len, encode_varint, read_varint

_CASES = json.loads((Path(__file__).parent / "kubectl_v1_33_bodies.json").read_text())["cases"]


def _norm(v: Any) -> Any:
    """Go JSON prints `creationTimestamp: null`, `status: {}` placeholders; protobuf cannot tell."""
    if isinstance(v, dict):
        out = {k: _norm(x) for k, x in v.items()}
        return {k: x for k, x in out.items() if x is not None and x != {}}
    if isinstance(v, list):
        return [_norm(x) for x in v]
    return v


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in _CASES])
def test_kubectl_protobuf_body_decodes_to_the_same_object_as_its_json(case: dict[str, Any]) -> None:
    got = decode_protobuf(bytes.fromhex(case["protobuf_hex"]))
    assert _norm(got) == _norm(case["dry_run_json"])


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    tm = encode_len(1, api_version.encode()) + encode_len(2, kind.encode())
    return b"k8s\x00" + encode_len(1, tm) + encode_len(2, raw) + encode_len(3, b"") + encode_len(4, b"")


# Hand-assembled from the .proto numbering (not from minik3s' tables):
#   PriorityClass{1 metadata{1 name}, 2 value, 3 globalDefault, 4 description, 5 preemptionPolicy}
#   DeleteOptions{1 gracePeriodSeconds, 2 preconditions{1 uid, 2 resourceVersion}, 4 propagationPolicy, 5 dryRun}
#   Toleration{5 tolerationSeconds}, Deployment.spec{9 progressDeadlineSeconds}, ObjectMeta{8 creationTimestamp}
HAND_ASSEMBLED = [
    pytest.param(
        "scheduling.k8s.io/v1", "PriorityClass",
        b"\x0a\x06\x0a\x04high" + b"\x10\xe8\x07" + b"\x18\x01" + b"\x22\x02hi" + b"\x2a\x05Never",
        {"metadata": {"name": "high"}, "value": 1000, "globalDefault": True, "description": "hi",
         "preemptionPolicy": "Never"},
        id="priorityclass-fields-by-proto-number",
    ),
    pytest.param(
        "v1", "DeleteOptions",
        b"\x08\x07" + b"\x12\x09\x0a\x03abc\x12\x0242" + b"\x22\x0aForeground" + b"\x2a\x03All",
        {"gracePeriodSeconds": 7, "preconditions": {"uid": "abc", "resourceVersion": "42"},
         "propagationPolicy": "Foreground", "dryRun": ["All"]},
        id="delete-options-from-drain-fallback",
    ),
    pytest.param(
        "v1", "DeleteOptions", b"\x08\x00",
        {"gracePeriodSeconds": 0},
        id="delete-options-force-keeps-zero-grace-period",
    ),
    pytest.param(
        "policy/v1", "Eviction",
        b"\x0a\x0d\x0a\x05web-1\x1a\x04team" + b"\x12\x02\x08\x05",
        {"metadata": {"name": "web-1", "namespace": "team"}, "deleteOptions": {"gracePeriodSeconds": 5}},
        id="eviction-with-delete-options",
    ),
    pytest.param(
        "v1", "Namespace",
        b"\x0a\x12\x0a\x01x" + b"\x42\x06\x08\xc0\x8d\xe4\xb0\x06" + b"\x5a\x05\x0a\x01a\x12\x00",
        {"metadata": {"name": "x", "creationTimestamp": "2024-04-12T10:02:40Z", "labels": {"a": ""}}},
        id="namespace-time-and-empty-label-value",
    ),
    pytest.param(
        "v1", "ConfigMap",
        b"\x0a\x03\x0a\x01c" + b"\x1a\x09\x0a\x03bin\x12\x02\xff\x00" + b"\x20\x01",
        {"metadata": {"name": "c"}, "binaryData": {"bin": "/wA="}, "immutable": True},
        id="configmap-binary-data-base64",
    ),
]


@pytest.mark.parametrize(("api_version", "kind", "raw", "want"), HAND_ASSEMBLED)
def test_hand_assembled_messages(api_version: str, kind: str, raw: bytes, want: dict[str, Any]) -> None:
    got = decode_protobuf(_envelope(api_version, kind, raw))
    assert got == {"apiVersion": api_version, "kind": kind, **want}


def test_pod_spec_scheduling_fields_by_proto_number() -> None:
    """PodSpec{22 tolerations{1 key, 2 operator, 4 effect, 5 tolerationSeconds}, 25 priority,
    33 topologySpreadConstraints{1 maxSkew, 2 topologyKey, 3 whenUnsatisfiable}, 38 schedulingGates{1 name},
    39 resourceClaims{1 name, 3 resourceClaimName}} as numbered in k8s.io/api/core/v1/generated.proto."""
    toleration = b"\x0a\x01k" + b"\x12\x06Exists" + b"\x22\x09NoExecute" + b"\x28\x1e"
    spread = b"\x08\x01" + b"\x12\x04zone" + b"\x1a\x0dDoNotSchedule"
    spec = (b"\xb2\x01" + bytes([len(toleration)]) + toleration
            + b"\xc8\x01\x64"
            + b"\x8a\x02" + bytes([len(spread)]) + spread
            + b"\xb2\x02\x03\x0a\x01g"
            + b"\xba\x02\x08\x0a\x01c\x1a\x03rcn")
    assert decode_message("PodSpec", spec) == {
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
        "priority": 100,
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
        "schedulingGates": [{"name": "g"}],
        "resourceClaims": [{"name": "c", "resourceClaimName": "rcn"}],
    }


def test_negative_int32_sent_as_ten_byte_varint() -> None:
    raw = b"\x0a\x03\x0a\x01n" + b"\x10" + encode_varint(-5)
    assert len(encode_varint(-5)) == 10
    assert decode_protobuf(_envelope("scheduling.k8s.io/v1", "PriorityClass", raw))["value"] == -5


def test_embedded_structs_are_inlined_like_json() -> None:
    # EnvVar{1 name, 3 valueFrom{3 configMapKeyRef{1 LocalObjectReference{1 name}, 2 key}}}
    key_ref = encode_len(1, encode_len(1, b"cm")) + encode_len(2, b"k")
    env = encode_len(1, b"E") + encode_len(3, encode_len(3, key_ref))
    container = encode_len(1, b"c") + encode_len(7, env)
    # Volume{1 name, 2 VolumeSource{2 emptyDir{}}}
    volume = encode_len(1, b"scratch") + encode_len(2, encode_len(2, b""))
    spec = encode_len(1, volume) + encode_len(2, container)
    got = decode_message("PodSpec", spec)
    assert got == {
        "volumes": [{"name": "scratch", "emptyDir": {}}],
        "containers": [{"name": "c", "env": [{"name": "E", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}]}],
    }


RICH_DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "team", "labels": {"app": "web"},
                 "annotations": {"note": "x"}, "creationTimestamp": "2026-01-01T00:00:00Z",
                 "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "o", "uid": "u", "controller": True}]},
    "spec": {
        "replicas": 0,
        "selector": {"matchLabels": {"app": "web"},
                     "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "terminationGracePeriodSeconds": 30,
                "priorityClassName": "high",
                "nodeSelector": {"disk": "ssd"},
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
                "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                               "labelSelector": {"matchLabels": {"app": "web"}}}],
                "securityContext": {"runAsUser": 1000, "fsGroup": 2000},
                "containers": [{
                    "name": "c",
                    "image": "nginx",
                    "args": ["-g", "daemon off;"],
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "env": [{"name": "A", "value": "1"},
                            {"name": "P", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1"}},
                    "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
                    "readinessProbe": {"httpGet": {"path": "/healthz", "port": 80}, "periodSeconds": 5},
                    "livenessProbe": {"tcpSocket": {"port": "http"}},
                    "imagePullPolicy": "IfNotPresent",
                }],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}},
                            {"name": "cfg", "configMap": {"name": "cm", "defaultMode": 420}}],
            },
        },
    },
}


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(RICH_DEPLOYMENT, id="deployment-with-full-pod-template"),
        pytest.param({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque",
                      "data": {"k": "dmFsdWU="}, "stringData": {"x": "y"}}, id="secret-with-type"),
        pytest.param({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                      "spec": {"completions": 3, "parallelism": 2, "backoffLimit": 0, "suspend": False,
                               "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c"}]}}}},
                     id="job-pointer-zeros-kept"),
        pytest.param({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                      "spec": {"type": "LoadBalancer", "clusterIPs": ["10.0.0.1"],
                               "ports": [{"port": 443, "targetPort": "https", "protocol": "TCP"}]}},
                     id="service-named-target-port"),
        pytest.param({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                      "metadata": {"name": "rb", "namespace": "d"},
                      "subjects": [{"kind": "ServiceAccount", "name": "s", "namespace": "d"}],
                      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}},
                     id="rolebinding"),
        pytest.param({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"},
                      "spec": {"rules": [{"host": "a.io", "http": {"paths": [
                          {"path": "/x", "pathType": "Prefix",
                           "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}]}},
                     id="ingress"),
        pytest.param({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                      "spec": {"audiences": ["a"], "expirationSeconds": 600}},
                     id="tokenrequest"),
    ],
)
def test_round_trip_through_encoder(obj: dict[str, Any]) -> None:
    assert decode_protobuf(encode_protobuf(obj)) == obj


def test_unknown_fields_are_skipped() -> None:
    raw = b"\x0a\x03\x0a\x01n" + encode_key(99, 0) + encode_varint(5) + encode_len(98, b"zz")
    assert decode_protobuf(_envelope("v1", "Namespace", raw)) == {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}


def test_unsupported_kind_is_a_distinct_error() -> None:
    with pytest.raises(UnsupportedKindError) as exc:
        decode_protobuf(_envelope("networking.k8s.io/v1", "NetworkPolicy", b""))
    assert "NetworkPolicy" in str(exc.value)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"", id="empty-body"),
        pytest.param(b"{\"kind\":\"Namespace\"}", id="json-without-magic"),
        pytest.param(b"k8s\x00", id="magic-only-no-kind"),
        pytest.param(b"k8s\x00\x0a\xff\xff\xff\xff\x0f", id="huge-length"),
        pytest.param(b"k8s\x00\x0a", id="truncated-length"),
        pytest.param(b"k8s\x00\x0b", id="group-wire-type"),
        pytest.param(b"k8s\x00" + b"\x08" + b"\xff" * 11, id="overlong-varint"),
        pytest.param(_envelope("v1", "Namespace", b"\x0a\x05\x0a\x07abc"), id="nested-length-overrun"),
        pytest.param(_envelope("v1", "Namespace", b"\x0a\x03\x0a\x01\xff"), id="invalid-utf8-name"),
        pytest.param(_envelope("v1", "Namespace", b"\x0a\x02\x08\x01"), id="wrong-wire-type-for-string"),
    ],
)
def test_malformed_bodies_raise_protobuf_error(body: bytes) -> None:
    with pytest.raises(ProtobufError):
        decode_protobuf(body)


def test_fuzz_never_raises_anything_but_protobuf_error() -> None:
    rng = random.Random(1234)
    seeds = [bytes.fromhex(c["protobuf_hex"]) for c in _CASES] + [encode_protobuf(RICH_DEPLOYMENT)]
    for i in range(3000):
        seed = bytearray(rng.choice(seeds))
        mode = i % 3
        if mode == 0:  # truncate
            seed = seed[: rng.randrange(len(seed))]
        elif mode == 1:  # flip bytes after the magic
            for _ in range(rng.randint(1, 4)):
                pos = rng.randrange(4, len(seed))
                seed[pos] = rng.randrange(256)
        else:  # random tail
            seed = seed[:4] + bytearray(rng.randbytes(rng.randint(0, 64)))
        try:
            decode_protobuf(bytes(seed))
        except ProtobufError:
            pass


def test_varint_reference_value() -> None:
    assert read_varint(b"\xac\x02", 0) == (300, 2)


def _vi(number: int, value: int) -> bytes:
    return encode_key(number, 0) + encode_varint(value)


def test_autoscaling_hpas_by_proto_number() -> None:
    # k8s.io/api/autoscaling/v1: spec{1 scaleTargetRef{1 kind, 2 name}, 2 minReplicas, 3 maxReplicas,
    # 4 targetCPUUtilizationPercentage}; v2: spec{..., 4 metrics{1 type, 4 resource{1 name,
    # 2 target{1 type, 4 averageUtilization}}}, 5 behavior{2 scaleDown{3 stabilizationWindowSeconds}}}
    ref = encode_len(1, b"Deployment") + encode_len(2, b"web")
    meta = encode_len(1, encode_len(1, b"h"))
    v1 = meta + encode_len(2, encode_len(1, ref) + _vi(2, 3) + _vi(3, 9) + _vi(4, 50))
    assert decode_protobuf(_envelope("autoscaling/v1", "HorizontalPodAutoscaler", v1)) == {
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 3, "maxReplicas": 9,
                 "targetCPUUtilizationPercentage": 50}}
    target = encode_len(1, b"Utilization") + _vi(4, 50)
    metric = encode_len(1, b"Resource") + encode_len(4, encode_len(1, b"cpu") + encode_len(2, target))
    behavior = encode_len(2, _vi(3, 30))
    v2 = meta + encode_len(2, encode_len(1, ref) + _vi(3, 9) + encode_len(4, metric) + encode_len(5, behavior))
    assert decode_protobuf(_envelope("autoscaling/v2", "HorizontalPodAutoscaler", v2))["spec"] == {
        "scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 9,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 50}}}],
        "behavior": {"scaleDown": {"stabilizationWindowSeconds": 30}}}
