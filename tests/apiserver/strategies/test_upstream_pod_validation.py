"""Upstream's Pod validation tables (kubernetes/kubernetes pkg/apis/core/validation/validation_test.go,
v1.33), ported case by case onto the API server's pod validation.

The cases drive `apiserver.strategies.podspec` (the PodSpec rules shared by pods and workload
templates) and `apiserver.strategies.pod` (the Pod strategy: create, update and status rules) with
JSON objects written as upstream's tests build their internal objects: no defaulting, every
field the test sets present. Where upstream compares error lists, so do these (as
`(type, field)` or as the full `field: message` text); where it checks only that an error
occurs, or that the aggregate error text contains a string, these check the same.

Upstream runs its unit tests with zero-valued PodValidationOptions; what an API server does with
v1.33's default feature gates differs in a few places, noted per case: environment variable names
are relaxed (RelaxedEnvironmentVariableValidation, beta in 1.32), DNS search domains too
(RelaxedDNSSearchValidation, beta in 1.33), sidecars may carry a resizePolicy
(InPlacePodVerticalScaling, beta in 1.33). Those cases assert the default-gate answer and, where
the module offers the strict variant, the strict answer as well.

Not ported (no observable meaning here, or outside the pod validation module):
- TestValidatePod "bad name" / "bad namespace", TestValidatePodUpdate "ids", "deletion timestamp
  removed/added", "deletion grace period seconds changed": ObjectMeta rules the request handler and
  the generic update preparation own (the stored metadata is copied over before validation);
- TestValidatePod ClusterTrustBundle projections, "final PVC name for ephemeral volume must be
  valid", "PersistentVolumeClaimVolumeSource must not reference a generated PVC": volume source
  validation (TestValidateVolumes' scope);
- TestValidateContainers "privilege disabled": the cluster allows privileged containers (K3s's
  --allow-privileged);
- TestValidateTopologySpreadConstraints' AllowInvalidTopologySpreadConstraintLabelSelector=true
  case, TestValidatePodResourceConsistency (PodLevelResources is alpha, off by default in v1.33),
  TestValidateEphemeralContainers / TestValidatePodEphemeralContainersUpdate (covered by
  test_ephemeral_containers.py), Windows/host-process, seccomp/AppArmor/sysctl/PodIPs tables other
  than the TestValidatePod cases below.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.strategies import podspec as ps
from apiserver.strategies import strategy_for
from apiserver.strategies.pod import POD_UPDATE_FORBIDDEN
from minik3s.api.types import JsonDict

S = strategy_for("", "Pod")

KIND = {"FieldValueRequired": "Required", "FieldValueInvalid": "Invalid", "FieldValueNotSupported": "NotSupported",
        "FieldValueDuplicate": "Duplicate", "FieldValueForbidden": "Forbidden", "FieldValueNotFound": "NotFound",
        "FieldValueTooLong": "TooLong", "FieldValueTypeInvalid": "Invalid"}
QNAME = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
         "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
               "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
DNS_SUBDOMAIN = "a lowercase RFC 1123 subdomain"
ENV_VAR_NAME = "a valid environment variable name must consist of"
RELAXED_ENV_VAR_NAME = "a valid environment variable name must consist only of printable ASCII characters other than '='"
ENV_FIELD_PATHS = ('supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", '
                   '"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"')


def kinds(errs: list[JsonDict]) -> list[tuple[str, str]]:
    return [(KIND[e["reason"]], e["field"]) for e in errs]


def texts(errs: list[JsonDict]) -> list[str]:
    return [f"{e['field']}: {e['message']}" for e in errs]


def aggregate(errs: list[JsonDict]) -> str:
    return ", ".join(texts(errs))


def ctr(name: str = "ctr", **kw: Any) -> JsonDict:
    """podtest.MakeContainer: an image and the two policies defaulting would set."""
    return {"name": name, "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File", **kw}


def spec(**kw: Any) -> JsonDict:
    """podtest.MakePodSpec: one container, restartPolicy Always, dnsPolicy ClusterFirst, grace 30."""
    base: JsonDict = {"containers": [ctr()], "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
                      "terminationGracePeriodSeconds": 30}
    base.update(kw)
    return base


def pod(name: str = "123", *, annotations: JsonDict | None = None, labels: JsonDict | None = None,
        namespace: str = "ns", status: JsonDict | None = None, **kw: Any) -> JsonDict:
    """podtest.MakePod."""
    meta: JsonDict = {"name": name, "namespace": namespace, "resourceVersion": "1"}
    if annotations is not None:
        meta["annotations"] = annotations
    if labels is not None:
        meta["labels"] = labels
    p: JsonDict = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec(**kw)}
    if status is not None:
        p["status"] = status
    return p


def spec_errors(s: JsonDict, *, resource_is_pod: bool = True) -> list[JsonDict]:
    return ps.validate_pod_spec(copy.deepcopy(s), "spec", ps.POD_OPTIONS if resource_is_pod else ps.DEFAULT_OPTIONS)


def create_errors(p: JsonDict) -> list[JsonDict]:
    return S.validate(copy.deepcopy(p))


def res(limits: JsonDict | None = None, requests: JsonDict | None = None) -> JsonDict:
    out: JsonDict = {}
    if limits is not None:
        out["limits"] = limits
    if requests is not None:
        out["requests"] = requests
    return out


def get_resources(cpu: str = "", memory: str = "", ephemeral: str = "", storage: str = "") -> JsonDict:
    """upstream's getResources helper."""
    out: JsonDict = {}
    for name, q in (("cpu", cpu), ("memory", memory), ("ephemeral-storage", ephemeral), ("storage", storage)):
        if q:
            out[name] = q
    return out


TCP80 = {"tcpSocket": {"port": 80}}


# =================================================================================================
# TestValidatePorts
# =================================================================================================


def test_validate_ports_success() -> None:
    ok = [
        {"name": "abc", "containerPort": 80, "hostPort": 80, "protocol": "TCP"},
        {"name": "easy", "containerPort": 82, "protocol": "TCP"},
        {"name": "as", "containerPort": 83, "protocol": "UDP"},
        {"name": "do-re-me", "containerPort": 84, "protocol": "SCTP"},
        {"containerPort": 85, "protocol": "TCP"},
    ]
    assert ps.validate_container_ports(ok, "field") == []
    assert ps.validate_container_ports([{"containerPort": 80, "protocol": "TCP"}], "field") == []


@pytest.mark.parametrize(("ports", "kind", "field", "detail"), [
    pytest.param([{"name": "a" * 16, "containerPort": 80, "protocol": "TCP"}], "Invalid", "name", "15",
                 id="name > 15 characters"),
    pytest.param([{"name": "a.b.c", "containerPort": 80, "protocol": "TCP"}], "Invalid", "name", "alpha-numeric",
                 id="name contains invalid characters"),
    pytest.param([{"name": "80", "containerPort": 80, "protocol": "TCP"}], "Invalid", "name", "at least one letter",
                 id="name is a number"),
    pytest.param([{"name": "abc", "containerPort": 80, "protocol": "TCP"},
                  {"name": "abc", "containerPort": 81, "protocol": "TCP"}], "Duplicate", "[1].name", "",
                 id="name not unique"),
    pytest.param([{"containerPort": 0, "protocol": "TCP"}], "Required", "containerPort", "", id="zero container port"),
    pytest.param([{"containerPort": 65536, "protocol": "TCP"}], "Invalid", "containerPort", "between",
                 id="invalid container port"),
    pytest.param([{"containerPort": 80, "hostPort": 65536, "protocol": "TCP"}], "Invalid", "hostPort", "between",
                 id="invalid host port"),
    pytest.param([{"containerPort": 80, "protocol": "tcp"}], "NotSupported", "protocol",
                 'supported values: "SCTP", "TCP", "UDP"', id="invalid protocol case"),
    pytest.param([{"containerPort": 80, "protocol": "ICMP"}], "NotSupported", "protocol",
                 'supported values: "SCTP", "TCP", "UDP"', id="invalid protocol"),
    pytest.param([{"name": "abc", "containerPort": 80}], "Required", "protocol", "", id="protocol required"),
])
def test_validate_ports_errors(ports: list[JsonDict], kind: str, field: str, detail: str) -> None:
    errs = ps.validate_container_ports(ports, "field")
    assert errs
    for e in errs:
        assert KIND[e["reason"]] == kind
        assert field in e["field"]
        assert detail in e["message"]


# =================================================================================================
# TestLocalStorageEnvWithFeatureGate, TestHugePagesEnv, TestValidateEnv, TestRelaxedValidateEnv
# =================================================================================================


def field_ref(path: str, api_version: str = "v1") -> JsonDict:
    ref: JsonDict = {}
    if api_version:
        ref["apiVersion"] = api_version
    if path:
        ref["fieldPath"] = path
    return {"fieldRef": ref}


def resource_ref(resource: str) -> JsonDict:
    return {"resourceFieldRef": {"containerName": "test-container", "resource": resource}}


SECRET_REF = {"secretKeyRef": {"name": "a-secret", "key": "a-key"}}
CONFIG_REF = {"configMapKeyRef": {"name": "some-config-map", "key": "some-key"}}


@pytest.mark.parametrize("resource", ["limits.ephemeral-storage", "requests.ephemeral-storage",
                                      "limits.hugepages-2Mi", "requests.hugepages-2Mi"])
def test_resource_field_ref_env_success(resource: str) -> None:
    assert ps.validate_env([{"name": "x", "valueFrom": resource_ref(resource)}], "field") == []


ENV_SUCCESS = [
    {"name": "abc", "value": "value"}, {"name": "ABC", "value": "value"}, {"name": "AbC_123", "value": "value"},
    {"name": "abc", "value": ""}, {"name": "a.b.c", "value": "value"}, {"name": "a-b-c", "value": "value"},
    *({"name": "abc", "valueFrom": field_ref(p)} for p in (
        "metadata.annotations['key']", "metadata.labels['key']", "metadata.name", "metadata.namespace",
        "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.podIP",
        "status.podIPs")),
    {"name": "secret_value", "valueFrom": {"secretKeyRef": {"name": "some-secret", "key": "secret-key"}}},
    {"name": "ENV_VAR_1", "valueFrom": CONFIG_REF},
]
RELAXED_NAMES = ["!\"#$%&'()", "* +,-./0123456789", ":;<>?@", "ABCDEFG", "abcdefghijklmn", "[\\]^_`{}|~"]


def test_validate_env_success() -> None:
    assert ps.validate_env(ENV_SUCCESS, "field", relaxed=False) == []
    assert ps.validate_env(ENV_SUCCESS, "field") == []


def test_relaxed_env_names_pass_with_default_gates() -> None:
    envs = [{"name": n, "value": "value"} for n in RELAXED_NAMES]
    assert ps.validate_env(envs, "field") == []
    relaxed_refs = [
        {"name": "!\"#$%&'()", "valueFrom": field_ref("metadata.annotations['key']")},
        {"name": "* +,-./0123456789", "valueFrom": field_ref("metadata.uid")},
        {"name": ":;<>?@", "valueFrom": field_ref("status.hostIP")},
        {"name": "abcdefghijklmn", "valueFrom": {"secretKeyRef": {"name": "some-secret", "key": "secret-key"}}},
        {"name": "!\"#$%&'()", "valueFrom": CONFIG_REF},
    ]
    assert ps.validate_env(relaxed_refs, "field") == []


@pytest.mark.parametrize(("name", "expected"), [
    pytest.param("!\"#$%&'()", 'field[0].name: Invalid value: "!\\"#$%&\'()": ' + ENV_VAR_NAME, id="invalid name a"),
    pytest.param("* +,-./0123456789", 'field[0].name: Invalid value: "* +,-./0123456789": ' + ENV_VAR_NAME,
                 id="invalid name b"),
    pytest.param(":;<>?@", 'field[0].name: Invalid value: ":;<>?@": ' + ENV_VAR_NAME, id="invalid name c"),
    pytest.param("[\\]^_{}|~", 'field[0].name: Invalid value: "[\\\\]^_{}|~": ' + ENV_VAR_NAME, id="invalid name d"),
])
def test_strict_env_names(name: str, expected: str) -> None:
    """TestValidateEnv's updateErrorCase: strict names (RelaxedEnvironmentVariableValidation off)."""
    errs = ps.validate_env([{"name": name, "value": "value"}], "field", relaxed=False)
    assert errs and all(expected in t for t in texts(errs))


ENV_ERRORS = [
    pytest.param([{"name": ""}], "[0].name: Required value", id="zero-length name"),
    pytest.param([{"name": "abc", "value": "foo", "valueFrom": field_ref("metadata.name")}],
                 '[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
                 id="value and valueFrom specified"),
    pytest.param([{"name": "abc", "valueFrom": {}}],
                 '[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, '
                 "`configMapKeyRef` or `secretKeyRef`", id="valueFrom without a source"),
    pytest.param([{"name": "abc", "valueFrom": {**field_ref("metadata.name"), **SECRET_REF}}],
                 '[0].valueFrom: Invalid value: "": may not have more than one field specified at a time',
                 id="valueFrom.fieldRef and valueFrom.secretKeyRef specified"),
    pytest.param([{"name": "some_var_name", "valueFrom": {**field_ref("metadata.name"), **CONFIG_REF}}],
                 '[0].valueFrom: Invalid value: "": may not have more than one field specified at a time',
                 id="valueFrom.fieldRef and valueFrom.configMapKeyRef set"),
    pytest.param([{"name": "abc", "valueFrom": {**field_ref("metadata.name"), **SECRET_REF, **CONFIG_REF}}],
                 '[0].valueFrom: Invalid value: "": may not have more than one field specified at a time',
                 id="valueFrom.fieldRef, secretKeyRef and configMapKeyRef specified"),
    pytest.param([{"name": "abc", "valueFrom": {"secretKeyRef": {"name": "$%^&*#", "key": "a-key"}}}], "",
                 id="valueFrom.secretKeyRef.name invalid"),
    pytest.param([{"name": "abc", "valueFrom": {"configMapKeyRef": {"name": "$%^&*#", "key": "some-key"}}}], "",
                 id="valueFrom.configMapKeyRef.name invalid"),
    pytest.param([{"name": "abc", "valueFrom": field_ref("")}], "[0].valueFrom.fieldRef.fieldPath: Required value",
                 id="missing FieldPath on ObjectFieldSelector"),
    pytest.param([{"name": "abc", "valueFrom": field_ref("metadata.name", "")}],
                 "[0].valueFrom.fieldRef.apiVersion: Required value", id="missing APIVersion on ObjectFieldSelector"),
    pytest.param([{"name": "abc", "valueFrom": field_ref("metadata.whoops")}],
                 '[0].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.whoops": error converting fieldPath',
                 id="invalid fieldPath"),
    pytest.param([{"name": "labels", "valueFrom": field_ref("metadata.name['key']")}],
                 '[0].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.name[\'key\']": error converting '
                 "fieldPath: field label does not support subscript", id="metadata.name with subscript"),
    pytest.param([{"name": "labels", "valueFrom": field_ref("metadata.labels")}],
                 '[0].valueFrom.fieldRef.fieldPath: Unsupported value: "metadata.labels": ' + ENV_FIELD_PATHS,
                 id="metadata.labels without subscript"),
    pytest.param([{"name": "abc", "valueFrom": field_ref("metadata.annotations")}],
                 '[0].valueFrom.fieldRef.fieldPath: Unsupported value: "metadata.annotations": ' + ENV_FIELD_PATHS,
                 id="metadata.annotations without subscript"),
    pytest.param([{"name": "abc", "valueFrom": field_ref("metadata.annotations['invalid~key']")}],
                 'field[0].valueFrom.fieldRef: Invalid value: "invalid~key"',
                 id="metadata.annotations with invalid key"),
    pytest.param([{"name": "abc", "valueFrom": field_ref("metadata.labels['Www.k8s.io/test']")}],
                 'field[0].valueFrom.fieldRef: Invalid value: "Www.k8s.io/test"', id="metadata.labels with invalid key"),
    pytest.param([{"name": "abc", "valueFrom": field_ref("status.phase")}],
                 'valueFrom.fieldRef.fieldPath: Unsupported value: "status.phase": ' + ENV_FIELD_PATHS,
                 id="unsupported fieldPath"),
]


@pytest.mark.parametrize("relaxed", [False, True], ids=["strict", "relaxed"])
@pytest.mark.parametrize(("envs", "expected"), ENV_ERRORS)
def test_validate_env_errors(envs: list[JsonDict], expected: str, relaxed: bool) -> None:
    """TestValidateEnv's and TestRelaxedValidateEnv's errorCases: each error contains the text."""
    errs = ps.validate_env(envs, "field", relaxed=relaxed)
    assert errs
    assert all(expected in t for t in texts(errs))


def test_relaxed_env_illegal_character() -> None:
    errs = ps.validate_env([{"name": "=abc"}], "field")
    assert texts(errs) == [f'field[0].name: Invalid value: "=abc": {RELAXED_ENV_VAR_NAME}']


# =================================================================================================
# TestValidateEnvFrom, TestRelaxedValidateEnvFrom
# =================================================================================================


def cm_ref(name: str = "abc", prefix: str = "") -> JsonDict:
    out: JsonDict = {"configMapRef": {"name": name}}
    if prefix:
        out["prefix"] = prefix
    return out


def secret_ref(name: str = "abc", prefix: str = "") -> JsonDict:
    out: JsonDict = {"secretRef": {"name": name}}
    if prefix:
        out["prefix"] = prefix
    return out


def test_validate_env_from_success() -> None:
    ok = [cm_ref(), cm_ref(prefix="pre_"), cm_ref(prefix="a.b"), secret_ref(), secret_ref(prefix="pre_"),
          secret_ref(prefix="a.b")]
    assert ps.validate_env_from(ok, "field", relaxed=False) == []
    relaxed = [cm_ref(), cm_ref(prefix="* +,-./0123456789"), cm_ref(prefix=":;<>?@"), secret_ref(),
               secret_ref(prefix="abcdefghijklmn"), secret_ref(prefix="[\\]^_`{}|~"), cm_ref(prefix="!\"#$%&'()")]
    assert ps.validate_env_from(relaxed, "field") == []


@pytest.mark.parametrize(("prefix", "expected"), [
    pytest.param("!\"#$%&'()", 'field[0].prefix: Invalid value: "!\\"#$%&\'()": ' + ENV_VAR_NAME, id="invalid name a"),
    pytest.param("* +,-./0123456789", 'field[0].prefix: Invalid value: "* +,-./0123456789": ' + ENV_VAR_NAME,
                 id="invalid name b"),
    pytest.param(":;<>?@", 'field[0].prefix: Invalid value: ":;<>?@": ' + ENV_VAR_NAME, id="invalid name c"),
    pytest.param("[\\]^_{}|~", 'field[0].prefix: Invalid value: "[\\\\]^_{}|~": ' + ENV_VAR_NAME, id="invalid name d"),
])
def test_strict_env_from_prefixes(prefix: str, expected: str) -> None:
    errs = ps.validate_env_from([secret_ref(prefix=prefix)], "field", relaxed=False)
    assert errs and all(expected in t for t in texts(errs))


ENV_FROM_ERRORS = [
    pytest.param([cm_ref("")], "field[0].configMapRef.name: Required value", id="zero-length configmap name"),
    pytest.param([cm_ref("$")], "field[0].configMapRef.name: Invalid value", id="invalid configmap name"),
    pytest.param([secret_ref("")], "field[0].secretRef.name: Required value", id="zero-length secret name"),
    pytest.param([secret_ref("&")], "field[0].secretRef.name: Invalid value", id="invalid secret name"),
    pytest.param([{}], 'field: Invalid value: "": must specify one of: `configMapRef` or `secretRef`', id="no refs"),
    pytest.param([{**secret_ref(), **cm_ref()}],
                 'field: Invalid value: "": may not have more than one field specified at a time', id="multiple refs"),
    pytest.param([secret_ref("$%^&*#")], 'field[0].secretRef.name: Invalid value: "$%^&*#": ' + DNS_SUBDOMAIN,
                 id="invalid secret ref name"),
    pytest.param([cm_ref("$%^&*#")], 'field[0].configMapRef.name: Invalid value: "$%^&*#": ' + DNS_SUBDOMAIN,
                 id="invalid config ref name"),
]


@pytest.mark.parametrize("relaxed", [False, True], ids=["strict", "relaxed"])
@pytest.mark.parametrize(("sources", "expected"), ENV_FROM_ERRORS)
def test_validate_env_from_errors(sources: list[JsonDict], expected: str, relaxed: bool) -> None:
    errs = ps.validate_env_from(sources, "field", relaxed=relaxed)
    assert errs
    assert all(expected in t for t in texts(errs))


def test_relaxed_env_from_invalid_prefix() -> None:
    errs = ps.validate_env_from([cm_ref(prefix="=abc")], "field")
    assert texts(errs) == [f'field[0].prefix: Invalid value: "=abc": {RELAXED_ENV_VAR_NAME}']


# =================================================================================================
# TestValidateVolumeMounts, TestValidateSubpathMutuallyExclusive, TestValidateDisabledSubpathExpr,
# TestValidateMountPropagation, TestAlphaValidateVolumeDevices
# =================================================================================================

MOUNT_VOLUMES: dict[str, JsonDict] = {
    "abc": {"name": "abc", "persistentVolumeClaim": {"claimName": "testclaim1"}},
    "abc-123": {"name": "abc-123", "persistentVolumeClaim": {"claimName": "testclaim2"}},
    "123": {"name": "123", "hostPath": {"path": "/foo/baz", "type": ""}},
    "ephemeral": {"name": "ephemeral", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10G"}}}}}},
    "image-volume": {"name": "image-volume", "image": {"reference": "quay.io/my/artifact:v1",
                                                       "pullPolicy": "IfNotPresent"}},
}
GOOD_DEVICES = {"xyz": "/foofoo", "uvw": "/foofoo/share/test"}
BAD_DEVICES = {"xyz": "/mnt/exists"}


def test_volumes_of_the_mount_tests_are_valid() -> None:
    errs, valid = ps._validate_volumes(list(MOUNT_VOLUMES.values()), "field")
    assert errs == [] and set(valid) == set(MOUNT_VOLUMES)


def test_validate_volume_mounts_success() -> None:
    mounts = [
        {"name": "abc", "mountPath": "/foo"}, {"name": "123", "mountPath": "/bar"},
        {"name": "abc-123", "mountPath": "/baz"}, {"name": "abc-123", "mountPath": "/baa", "subPath": ""},
        {"name": "abc-123", "mountPath": "/bab", "subPath": "baz"}, {"name": "abc-123", "mountPath": "d:"},
        {"name": "abc-123", "mountPath": "F:"}, {"name": "abc-123", "mountPath": "G:\\mount"},
        {"name": "abc-123", "mountPath": "/bac", "subPath": ".baz"},
        {"name": "abc-123", "mountPath": "/bad", "subPath": "..baz"}, {"name": "ephemeral", "mountPath": "/foobar"},
        {"name": "123", "mountPath": "/rro-nil", "readOnly": True},
        {"name": "123", "mountPath": "/rro-disabled", "readOnly": True, "recursiveReadOnly": "Disabled"},
        {"name": "123", "mountPath": "/rro-disabled-2", "readOnly": False, "recursiveReadOnly": "Disabled"},
        {"name": "123", "mountPath": "/rro-ifpossible", "readOnly": True, "recursiveReadOnly": "IfPossible"},
        {"name": "123", "mountPath": "/rro-enabled", "readOnly": True, "recursiveReadOnly": "Enabled"},
        {"name": "123", "mountPath": "/rro-enabled-2", "readOnly": True, "recursiveReadOnly": "Enabled",
         "mountPropagation": "None"},
        {"name": "image-volume", "mountPath": "/image-volume"},
    ]
    assert ps.validate_volume_mounts(mounts, MOUNT_VOLUMES, {}, "field", GOOD_DEVICES) == []


@pytest.mark.parametrize("mounts", [
    pytest.param([{"name": "", "mountPath": "/foo"}], id="empty name"),
    pytest.param([{"name": "", "mountPath": "/foo"}], id="name not found"),
    pytest.param([{"name": "abc", "mountPath": ""}], id="empty mountpath"),
    pytest.param([{"name": "foo", "mountPath": "/path/a"}, {"name": "bar", "mountPath": "/path/a"}],
                 id="mountpath collision"),
    pytest.param([{"name": "abc", "mountPath": "/bar", "subPath": "/baz"}], id="absolute subpath"),
    pytest.param([{"name": "abc", "mountPath": "/bar", "subPath": "../baz"}], id="subpath in .."),
    pytest.param([{"name": "abc", "mountPath": "/bar", "subPath": "baz/../bat"}], id="subpath contains .."),
    pytest.param([{"name": "abc", "mountPath": "/bar", "subPath": "./.."}], id="subpath ends in .."),
    pytest.param([{"name": "abc", "mountPath": "/bar", "mountPropagation": "Bidirectional"}],
                 id="disabled MountPropagation feature gate"),
    pytest.param([{"name": "xyz", "mountPath": "/bar"}], id="name exists in volumeDevice"),
    pytest.param([{"name": "uvw", "mountPath": "/mnt/exists"}], id="mountpath exists in volumeDevice"),
    pytest.param([{"name": "xyz", "mountPath": "/mnt/exists"}], id="both exist in volumeDevice"),
    pytest.param([{"name": "123", "mountPath": "/rro-bad1", "readOnly": False, "recursiveReadOnly": "Enabled"}],
                 id="rro but not ro"),
    pytest.param([{"name": "123", "mountPath": "/rro-bad2", "readOnly": True, "recursiveReadOnly": "Enabled",
                   "mountPropagation": "HostToContainer"}], id="rro with incompatible propagation"),
    pytest.param([{"name": "123", "mountPath": "/rro-bad1", "readOnly": False, "recursiveReadOnly": "IfPossible"}],
                 id="rro-if-possible but not ro"),
    pytest.param([{"name": "image-volume", "mountPath": "/image-volume-err-1", "subPath": "/foo"}],
                 id="subPath not allowed for image volume sources"),
    pytest.param([{"name": "image-volume", "mountPath": "/image-volume-err-2", "subPathExpr": "$(POD_NAME)"}],
                 id="subPathExpr not allowed for image volume sources"),
])
def test_validate_volume_mounts_errors(mounts: list[JsonDict]) -> None:
    assert ps.validate_volume_mounts(mounts, MOUNT_VOLUMES, {}, "field", BAD_DEVICES)


@pytest.mark.parametrize(("mount", "fails"), [
    pytest.param({"name": "abc-123", "mountPath": "/bab"}, False, id="subpath and subpathexpr not specified"),
    pytest.param({"name": "abc-123", "mountPath": "/bab", "subPathExpr": "$(POD_NAME)"}, False,
                 id="subpath expr specified"),
    pytest.param({"name": "abc-123", "mountPath": "/bab", "subPath": "baz"}, False, id="subpath specified"),
    pytest.param({"name": "abc-123", "mountPath": "/bab", "subPath": "baz", "subPathExpr": "$(POD_NAME)"}, True,
                 id="subpath and subpathexpr specified"),
])
def test_subpath_mutually_exclusive(mount: JsonDict, fails: bool) -> None:
    assert bool(ps.validate_volume_mounts([mount], MOUNT_VOLUMES, {}, "field", GOOD_DEVICES)) is fails


PRIVILEGED = {"securityContext": {"privileged": True}}
NON_PRIVILEGED = {"securityContext": {"privileged": False}}


@pytest.mark.parametrize(("propagation", "container", "fails"), [
    (None, {}, False), ("HostToContainer", {}, False), ("None", {}, False), ("Bidirectional", {}, True),
    (None, NON_PRIVILEGED, False), ("HostToContainer", NON_PRIVILEGED, False), ("Bidirectional", NON_PRIVILEGED, True),
    (None, PRIVILEGED, False), ("HostToContainer", PRIVILEGED, False), ("Bidirectional", PRIVILEGED, False),
    ("invalid", PRIVILEGED, True), ("Bidirectional", None, False),
])
def test_validate_mount_propagation(propagation: str | None, container: JsonDict | None, fails: bool) -> None:
    mount: JsonDict = {"name": "foo", "mountPath": "/foo"}
    if propagation is not None:
        mount["mountPropagation"] = propagation
    volumes = {"foo": {"name": "foo", "hostPath": {"path": "/foo/baz", "type": ""}}}
    assert bool(ps.validate_volume_mounts([mount], volumes, container, "field")) is fails


DEVICE_VOLUMES: dict[str, JsonDict] = {
    "abc": MOUNT_VOLUMES["abc"], "abc-123": MOUNT_VOLUMES["abc-123"],
    "def": {"name": "def", "hostPath": {"path": "/foo/baz", "type": ""}}, "ephemeral": MOUNT_VOLUMES["ephemeral"],
}


def test_validate_volume_devices_success() -> None:
    devices = [{"name": "abc", "devicePath": "/foo"}, {"name": "abc-123", "devicePath": "/usr/share/test"},
               {"name": "ephemeral", "devicePath": "/disk"}]
    good_mounts = {"xyz": "/foofoo", "ghi": "/foo/usr/share/test"}
    assert ps.validate_volume_devices(devices, good_mounts, DEVICE_VOLUMES, "field") == []


@pytest.mark.parametrize("devices", [
    pytest.param([{"name": "", "devicePath": "/foo"}], id="empty name"),
    pytest.param([{"name": "abc", "devicePath": "/foo"}, {"name": "abc", "devicePath": "/foo/bar"}],
                 id="duplicate name"),
    pytest.param([{"name": "not-found", "devicePath": "/usr/share/test"}], id="name not found"),
    pytest.param([{"name": "def", "devicePath": "/usr/share/test"}], id="name found but invalid source"),
    pytest.param([{"name": "abc", "devicePath": ""}], id="empty devicepath"),
    pytest.param([{"name": "abc-123", "devicePath": "baz"}], id="relative devicepath"),
    pytest.param([{"name": "abc", "devicePath": "/foo"}, {"name": "abc-123", "devicePath": "/foo"}],
                 id="duplicate devicepath"),
    pytest.param([{"name": "def", "devicePath": "/baz/../"}], id="no backsteps"),
    pytest.param([{"name": "abc", "devicePath": "/baz/../"}], id="name exists in volumemounts"),
    pytest.param([{"name": "xyz", "devicePath": "/this/path/exists"}], id="path exists in volumemounts"),
    pytest.param([{"name": "abc", "devicePath": "/this/path/exists"}], id="both exist in volumemounts"),
])
def test_validate_volume_devices_errors(devices: list[JsonDict]) -> None:
    # upstream requires no absolute devicePath: "relative devicepath" fails on 'abc-123' being a volumeMount
    bad_mounts = {"abc": "/foo", "abc-123": "/this/path/exists"}
    assert ps.validate_volume_devices(devices, bad_mounts, DEVICE_VOLUMES, "field")


# =================================================================================================
# TestValidateProbe, Test_validateProbe, TestValidateHandler
# =================================================================================================

EXEC = {"exec": {"command": ["echo"]}}
PROBE_FIELDS = ["initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"]


@pytest.mark.parametrize("probe", [None, *({**EXEC, f: 10} for f in PROBE_FIELDS)])
def test_validate_probe_success(probe: JsonDict | None) -> None:
    assert ps.validate_probe(probe, "field", 30) == []


@pytest.mark.parametrize("probe", [{"timeoutSeconds": 10, "initialDelaySeconds": 10},
                                   *({**EXEC, f: -10} for f in PROBE_FIELDS)])
def test_validate_probe_errors(probe: JsonDict) -> None:
    assert ps.validate_probe(probe, "field", 30)


@pytest.mark.parametrize(("probe", "want"), [
    ({}, [("Required", "test")]),
    (EXEC, []),
    *(({**EXEC, f: -1}, [("Invalid", f"test.{f}")]) for f in PROBE_FIELDS),
    ({**EXEC, "terminationGracePeriodSeconds": -1}, [("Invalid", "test.terminationGracePeriodSeconds")]),
    ({**EXEC, "terminationGracePeriodSeconds": 0}, [("Invalid", "test.terminationGracePeriodSeconds")]),
    ({**EXEC, "terminationGracePeriodSeconds": 1}, []),
])
def test_validate_probe_table(probe: JsonDict, want: list[tuple[str, str]]) -> None:
    assert kinds(ps.validate_probe(probe, "test", 30)) == want


@pytest.mark.parametrize("handler", [
    EXEC,
    {"httpGet": {"path": "/", "port": 1, "host": "", "scheme": "HTTP"}},
    {"httpGet": {"path": "/foo", "port": 65535, "host": "host", "scheme": "HTTP"}},
    {"httpGet": {"path": "/", "port": "port", "host": "", "scheme": "HTTP"}},
    {"httpGet": {"path": "/", "port": "port", "scheme": "HTTP", "httpHeaders": [{"name": "Host", "value": "foo.example.com"}]}},
    {"httpGet": {"path": "/", "port": "port", "scheme": "HTTP", "httpHeaders": [
        {"name": "X-Forwarded-For", "value": "1.2.3.4"}, {"name": "X-Forwarded-For", "value": "5.6.7.8"}]}},
])
def test_validate_handler_success(handler: JsonDict) -> None:
    assert ps.validate_handler(handler, "field", 30, probe=True) == []


@pytest.mark.parametrize("handler", [
    {}, {"exec": {"command": []}}, {"httpGet": {"path": "", "port": 0, "host": ""}},
    {"httpGet": {"path": "/foo", "port": 65536, "host": "host"}}, {"httpGet": {"path": "", "port": "", "host": ""}},
    {"httpGet": {"path": "/", "port": "port", "scheme": "HTTP", "httpHeaders": [{"name": "Host:", "value": "x"}]}},
    {"httpGet": {"path": "/", "port": "port", "scheme": "HTTP",
                 "httpHeaders": [{"name": "X_Forwarded_For", "value": "foo.example.com"}]}},
])
def test_validate_handler_errors(handler: JsonDict) -> None:
    assert ps.validate_handler(handler, "field", 30, probe=True)


# =================================================================================================
# TestValidatePullPolicy, TestValidateResizePolicy
# =================================================================================================


@pytest.mark.parametrize(("name", "image", "policy"), [
    ("abc", "image:latest", "IfNotPresent"), ("abc1", "image", "IfNotPresent"), ("123", "image:latest", "Always"),
    ("1234", "image", "Always"), ("abc-123", "image:latest", "Never"), ("abc-1234", "image", "Never"),
])
def test_validate_pull_policy(name: str, image: str, policy: str) -> None:
    c = ctr(name, image=image, imagePullPolicy=policy)
    assert spec_errors(spec(containers=[c])) == []
    assert c["imagePullPolicy"] == policy


NR, RC = "NotRequired", "RestartContainer"


def rp(resource: str, policy: str) -> JsonDict:
    return {"resourceName": resource, "restartPolicy": policy}


@pytest.mark.parametrize(("policies", "pod_policy", "want"), [
    pytest.param([rp("cpu", NR), rp("memory", RC)], "Always", [], id="ValidCPUandMemoryPolicies"),
    pytest.param([rp("cpu", RC)], "Always", [], id="ValidCPUPolicy"),
    pytest.param([rp("memory", NR)], "Always", [], id="ValidMemoryPolicy"),
    pytest.param([], "Always", [], id="NoPolicy"),
    pytest.param([rp("cpu", NR), rp("memory", "Restarrrt")], "Always",
                 ['field: Unsupported value: "Restarrrt": supported values: "NotRequired", "RestartContainer"'],
                 id="ValidCPUandInvalidMemoryPolicy"),
    pytest.param([rp("cpu", "RestartNotRequirrred"), rp("memory", RC)], "Always",
                 ['field: Unsupported value: "RestartNotRequirrred": supported values: "NotRequired", '
                  '"RestartContainer"'], id="ValidMemoryandInvalidCPUPolicy"),
    pytest.param([rp("cpuuu", NR)], "Always", ['field: Unsupported value: "cpuuu": supported values: "cpu", "memory"'],
                 id="InvalidResourceNameValidPolicy"),
    pytest.param([rp("memory", "")], "Always", ["field: Required value"], id="ValidResourceNameMissingPolicy"),
    pytest.param([rp("cpu", NR), rp("memory", RC), rp("cpu", RC)], "Always", ['field[2]: Duplicate value: "cpu"'],
                 id="RepeatedPolicies"),
    pytest.param([rp("cpu", NR), rp("memory", RC)], "Never",
                 ["field: Invalid value: \"RestartContainer\": must be 'NotRequired' when `restartPolicy` is 'Never'"],
                 id="InvalidCPUPolicyWithPodRestartPolicy"),
    pytest.param([rp("cpu", RC), rp("memory", NR)], "Never",
                 ["field: Invalid value: \"RestartContainer\": must be 'NotRequired' when `restartPolicy` is 'Never'"],
                 id="InvalidMemoryPolicyWithPodRestartPolicy"),
    pytest.param([rp("cpu", RC), rp("memory", RC)], "Never",
                 ["field: Invalid value: \"RestartContainer\": must be 'NotRequired' when `restartPolicy` is 'Never'"] * 2,
                 id="InvalidMemoryCPUPolicyWithPodRestartPolicy"),
    pytest.param([rp("cpu", NR), rp("memory", NR)], "Never", [], id="ValidMemoryCPUPolicyWithPodRestartPolicy"),
])
def test_validate_resize_policy(policies: list[JsonDict], pod_policy: str, want: list[str]) -> None:
    assert texts(ps.validate_resize_policy(policies, "field", pod_policy)) == want


# =================================================================================================
# TestValidateContainers
# =================================================================================================

CONTAINERS_SUCCESS = [
    ctr("abc"), ctr("def", image=" "), ctr("ghi", image=" some  "), ctr("123"), ctr("abc-123"),
    ctr("life-123", lifecycle={"preStop": {"exec": {"command": ["ls", "-l"]}}}),
    ctr("resources-test", resources=res(limits={"cpu": "10", "memory": "10G", "my.org/resource": "10"})),
    ctr("resources-test-with-request-and-limit", resources=res(requests={"cpu": "10", "memory": "10G"},
                                                              limits={"cpu": "10", "memory": "10G"})),
    ctr("resources-request-limit-simple", resources=res(requests={"cpu": "8"}, limits={"cpu": "10"})),
    ctr("resources-request-limit-edge", resources=res(
        requests={"cpu": "10", "memory": "10G", "my.org/resource": "10"},
        limits={"cpu": "10", "memory": "10G", "my.org/resource": "10"})),
    ctr("resources-request-limit-partials", resources=res(requests={"cpu": "9.5", "memory": "10G"},
                                                         limits={"cpu": "10", "my.org/resource": "10"})),
    ctr("resources-request", resources=res(requests={"cpu": "9.5", "memory": "10G"})),
    ctr("resources-resize-policy", resizePolicy=[rp("cpu", NR), rp("memory", RC)]),
    ctr("same-host-port-different-protocol", ports=[{"containerPort": 80, "hostPort": 80, "protocol": "TCP"},
                                                    {"containerPort": 80, "hostPort": 80, "protocol": "UDP"}]),
    ctr("fallback-to-logs-termination-message", terminationMessagePolicy="FallbackToLogsOnError"),
    ctr("file-termination-message"),
    ctr("env-from-source", envFrom=[{"configMapRef": {"name": "test"}}]),
    ctr("abc-1234", securityContext={"privileged": True}),
    ctr("live-123", livenessProbe={**TCP80, "successThreshold": 1}),
    ctr("startup-123", startupProbe={**TCP80, "successThreshold": 1}),
    ctr("resize-policy-cpu", resizePolicy=[rp("cpu", NR)]),
    ctr("resize-policy-mem", resizePolicy=[rp("memory", RC)]),
    ctr("resize-policy-cpu-and-mem", resizePolicy=[rp("memory", NR), rp("cpu", RC)]),
]


def test_validate_containers_success() -> None:
    # validateContainers is shared by templates: surrounding whitespace in an image is checked for pods only
    assert spec_errors(spec(containers=copy.deepcopy(CONTAINERS_SUCCESS)), resource_is_pod=False) == []


NEG_PROBE = {**TCP80, "initialDelaySeconds": -1, "timeoutSeconds": -1, "periodSeconds": -1,
             "successThreshold": -1, "failureThreshold": -1, "terminationGracePeriodSeconds": -1}


def probe_neg(kind: str, name: str) -> list[tuple[str, str]]:
    base = [("Invalid", f"containers[0].{kind}.{f}") for f in
            (*PROBE_FIELDS, "terminationGracePeriodSeconds")]
    extra = "terminationGracePeriodSeconds" if kind == "readinessProbe" else "successThreshold"
    return [*base, ("Invalid", f"containers[0].{kind}.{extra}")]


CONTAINER_ERRORS = [
    pytest.param([ctr("")], [("Required", "containers[0].name")], id="zero-length name"),
    pytest.param([ctr("abc", image="")], [("Required", "containers[0].image")], id="zero-length-image"),
    pytest.param([ctr("a" * 64)], [("Invalid", "containers[0].name")], id="name > 63 characters"),
    pytest.param([ctr("a.b.c")], [("Invalid", "containers[0].name")], id="name not a DNS label"),
    pytest.param([ctr("abc"), ctr("abc")], [("Duplicate", "containers[1].name")], id="name not unique"),
    pytest.param([ctr("abc", image="")], [("Required", "containers[0].image")], id="zero-length image"),
    pytest.param([ctr("abc", ports=[{"containerPort": 80, "hostPort": 80, "protocol": "TCP"}]),
                  ctr("def", ports=[{"containerPort": 81, "hostPort": 80, "protocol": "TCP"}])],
                 [("Duplicate", "containers[1].ports[0].hostPort")], id="host port not unique"),
    pytest.param([ctr("abc", volumeMounts=[{"name": "anything", "mountPath": "/foo"}])],
                 [("NotFound", "containers[0].volumeMounts[0].name")], id="unknown volume name"),
    pytest.param([ctr("life-123", lifecycle={"preStop": {"exec": {}}})],
                 [("Required", "containers[0].lifecycle.preStop.exec.command")], id="invalid lifecycle, no exec command."),
    pytest.param([ctr("life-123", lifecycle={"preStop": {"httpGet": {"port": 80, "scheme": "HTTP"}}})],
                 [("Required", "containers[0].lifecycle.preStop.httpGet.path")], id="invalid lifecycle, no http path."),
    pytest.param([ctr("life-123", lifecycle={"preStop": {"httpGet": {"path": "/", "scheme": "HTTP"}}})],
                 [("Invalid", "containers[0].lifecycle.preStop.httpGet.port")], id="invalid lifecycle, no http port."),
    pytest.param([ctr("life-123", lifecycle={"preStop": {"httpGet": {"path": "/", "port": 80}}})],
                 [("NotSupported", "containers[0].lifecycle.preStop.httpGet.scheme")],
                 id="invalid lifecycle, no http scheme."),
    pytest.param([ctr("life-123", lifecycle={"preStop": {"tcpSocket": {}}})],
                 [("Invalid", "containers[0].lifecycle.preStop.tcpSocket.port")],
                 id="invalid lifecycle, no tcp socket port."),
    pytest.param([ctr("life-123", lifecycle={"preStop": {"tcpSocket": {"port": 0}}})],
                 [("Invalid", "containers[0].lifecycle.preStop.tcpSocket.port")],
                 id="invalid lifecycle, zero tcp socket port."),
    pytest.param([ctr("life-123", lifecycle={"preStop": {}})], [("Required", "containers[0].lifecycle.preStop")],
                 id="invalid lifecycle, no action."),
    pytest.param([ctr("life-123", readinessProbe={**TCP80, "terminationGracePeriodSeconds": 10})],
                 [("Invalid", "containers[0].readinessProbe.terminationGracePeriodSeconds")],
                 id="invalid readiness probe, terminationGracePeriodSeconds set."),
    pytest.param([ctr("live-123", livenessProbe={"tcpSocket": {}, "successThreshold": 1})],
                 [("Invalid", "containers[0].livenessProbe.tcpSocket.port")],
                 id="invalid liveness probe, no tcp socket port."),
    pytest.param([ctr("live-123", livenessProbe={"successThreshold": 1})], [("Required", "containers[0].livenessProbe")],
                 id="invalid liveness probe, no action."),
    pytest.param([ctr("live-123", livenessProbe={**TCP80, "successThreshold": 2})],
                 [("Invalid", "containers[0].livenessProbe.successThreshold")],
                 id="invalid liveness probe, successThreshold != 1"),
    pytest.param([ctr("startup-123", startupProbe={**TCP80, "successThreshold": 2})],
                 [("Invalid", "containers[0].startupProbe.successThreshold")],
                 id="invalid startup probe, successThreshold != 1"),
    pytest.param([ctr("live-123", livenessProbe=NEG_PROBE)], probe_neg("livenessProbe", "live-123"),
                 id="invalid liveness probe, negative numbers"),
    pytest.param([ctr("ready-123", readinessProbe=NEG_PROBE)], probe_neg("readinessProbe", "ready-123"),
                 id="invalid readiness probe, negative numbers"),
    pytest.param([ctr("startup-123", startupProbe=NEG_PROBE)], probe_neg("startupProbe", "startup-123"),
                 id="invalid startup probe, negative numbers"),
    pytest.param([ctr("life-123", terminationMessagePolicy="Unknown")],
                 [("NotSupported", "containers[0].terminationMessagePolicy")], id="invalid message termination policy"),
    pytest.param([ctr("life-123", terminationMessagePolicy="")], [("Required", "containers[0].terminationMessagePolicy")],
                 id="empty message termination policy"),
    pytest.param([ctr("abc-123", resources=res(limits={"disk": "10G"}))],
                 [("Invalid", "containers[0].resources.limits[disk]")] * 2, id="invalid compute resource"),
    pytest.param([ctr("abc-123", resources=res(limits=get_resources("-10", "0")))],
                 [("Invalid", "containers[0].resources.limits[cpu]")], id="Resource CPU invalid"),
    pytest.param([ctr("abc-123", resources=res(requests=get_resources("-10", "0")))],
                 [("Invalid", "containers[0].resources.requests[cpu]")], id="Resource Requests CPU invalid"),
    pytest.param([ctr("abc-123", resources=res(limits=get_resources("0", "-10")))],
                 [("Invalid", "containers[0].resources.limits[memory]")], id="Resource Memory invalid"),
    pytest.param([ctr("abc-123", resources=res(limits=get_resources("5", "3"), requests=get_resources("6", "3")))],
                 [("Invalid", "containers[0].resources.requests")], id="Request limit simple invalid"),
    pytest.param([ctr("abc-123", resources=res(limits={"attachable-volumes-aws-ebs": 10}))],
                 [("Invalid", "containers[0].resources.limits[attachable-volumes-aws-ebs]")] * 2,
                 id="Invalid storage limit request"),
    pytest.param([ctr("abc-123", resources=res(limits=get_resources("5", "3"), requests=get_resources("6", "3")))],
                 [("Invalid", "containers[0].resources.requests")], id="CPU request limit multiple invalid"),
    pytest.param([ctr("abc-123", resources=res(limits=get_resources("5", "3"), requests=get_resources("5", "4")))],
                 [("Invalid", "containers[0].resources.requests")], id="Memory request limit multiple invalid"),
    pytest.param([ctr("env-from-source", envFrom=[{"configMapRef": {"name": "$%^&*#"}}])],
                 [("Invalid", "containers[0].envFrom[0].configMapRef.name")], id="Invalid env from"),
    pytest.param([ctr("resize-policy-mem-invalid", resizePolicy=[rp("memory", "RestartContainerrrr")])],
                 [("NotSupported", "containers[0].resizePolicy")], id="Unsupported resize policy for memory"),
    pytest.param([ctr("resize-policy-cpu-invalid", resizePolicy=[rp("cpu", "RestartNotRequired")])],
                 [("NotSupported", "containers[0].resizePolicy")], id="Unsupported resize policy for CPU"),
    *(pytest.param([ctr("foo", restartPolicy=policy)], [("Forbidden", "containers[0].restartPolicy")],
                   id=f"Forbidden RestartPolicy: {label}")
      for policy, label in (("Always", "Always"), ("OnFailure", "OnFailure"), ("Never", "Never"),
                            ("invalid", "invalid"), ("", "empty"))),
]


@pytest.mark.parametrize(("containers", "want"), CONTAINER_ERRORS)
def test_validate_containers_errors(containers: list[JsonDict], want: list[tuple[str, str]]) -> None:
    errs = spec_errors(spec(containers=containers))
    assert kinds(errs) == [(k, f"spec.{f}") for k, f in want]


def test_invalid_env_var_name_in_a_container() -> None:
    """"invalid env var name" (ev!1): upstream's unit test runs strict names; with v1.33's default gates
    (RelaxedEnvironmentVariableValidation) the API server accepts the name."""
    assert spec_errors(spec(containers=[ctr("abc", env=[{"name": "ev!1"}])])) == []
    assert kinds(ps.validate_env([{"name": "ev!1"}], "containers[0].env", relaxed=False)) == [
        ("Invalid", "containers[0].env[0].name")]


# =================================================================================================
# TestValidateInitContainers
# =================================================================================================

APP = ctr("app", image="nginx")
INIT_SUCCESS = [
    ctr("container-1-same-host-port-different-protocol", ports=[
        {"containerPort": 80, "hostPort": 80, "protocol": "TCP"}, {"containerPort": 80, "hostPort": 80, "protocol": "UDP"}]),
    ctr("container-2-same-host-port-different-protocol", ports=[
        {"containerPort": 80, "hostPort": 80, "protocol": "TCP"}, {"containerPort": 80, "hostPort": 80, "protocol": "UDP"}]),
    ctr("container-3-restart-always-with-lifecycle-hook-and-probes", restartPolicy="Always", lifecycle={
        "postStart": {"exec": {"command": ["echo", "post start"]}}, "preStop": {"exec": {"command": ["echo", "pre stop"]}}},
        livenessProbe={**TCP80, "successThreshold": 1}, readinessProbe=TCP80, startupProbe={**TCP80, "successThreshold": 1}),
    ctr("container-4-allowed-resize-policy", resizePolicy=[rp("cpu", NR)]),
]


def test_validate_init_containers_success() -> None:
    errs = spec_errors(spec(containers=[APP], initContainers=copy.deepcopy(INIT_SUCCESS), restartPolicy="Never"))
    assert errs == []


INIT_ERRORS = [
    pytest.param([ctr("")], [("Required", "initContainers[0].name")], id="empty name"),
    pytest.param([ctr("app")], [("Duplicate", "initContainers[0].name")], id="name collision with regular container"),
    pytest.param([ctr("init", terminationMessagePolicy="Unknown")],
                 [("NotSupported", "initContainers[0].terminationMessagePolicy")], id="invalid termination message policy"),
    pytest.param([ctr("init"), ctr("init")], [("Duplicate", "initContainers[1].name")], id="duplicate names"),
    pytest.param([ctr("abc", ports=[{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"},
                                    {"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}])],
                 [("Duplicate", "initContainers[0].ports[1].hostPort")], id="duplicate ports"),
    pytest.param([ctr("debug", lifecycle={"preStop": {"exec": {"command": ["ls", "-l"]}}})],
                 [("Forbidden", "initContainers[0].lifecycle")], id="uses disallowed field: Lifecycle"),
    pytest.param([ctr("debug", livenessProbe={**TCP80, "successThreshold": 1})],
                 [("Forbidden", "initContainers[0].livenessProbe")], id="uses disallowed field: LivenessProbe"),
    pytest.param([ctr("debug", readinessProbe=TCP80)], [("Forbidden", "initContainers[0].readinessProbe")],
                 id="uses disallowed field: ReadinessProbe"),
    pytest.param([ctr("debug", startupProbe={**TCP80, "successThreshold": 1})],
                 [("Forbidden", "initContainers[0].startupProbe")], id="Container uses disallowed field: StartupProbe"),
    pytest.param([ctr("debug", startupProbe=NEG_PROBE)], [("Forbidden", "initContainers[0].startupProbe")],
                 id="Disallowed field with other errors should only return a single Forbidden"),
    *(pytest.param([ctr("init", restartPolicy=policy)], [("NotSupported", "initContainers[0].restartPolicy")],
                   id=f"Not supported RestartPolicy: {label}")
      for policy, label in (("OnFailure", "OnFailure"), ("Never", "Never"), ("invalid", "invalid"), ("", "empty"))),
    pytest.param([ctr("restartable-init", restartPolicy="Always", startupProbe={**TCP80, "successThreshold": 2})],
                 [("Invalid", "initContainers[0].startupProbe.successThreshold")],
                 id="invalid startup probe in restartable container, successThreshold != 1"),
    pytest.param([ctr("life-123", restartPolicy="Always", readinessProbe={**TCP80, "terminationGracePeriodSeconds": 10})],
                 [("Invalid", "initContainers[0].readinessProbe.terminationGracePeriodSeconds")],
                 id="invalid readiness probe, terminationGracePeriodSeconds set."),
    pytest.param([ctr("live-123", restartPolicy="Always", livenessProbe={**TCP80, "successThreshold": 2})],
                 [("Invalid", "initContainers[0].livenessProbe.successThreshold")],
                 id="invalid liveness probe, successThreshold != 1"),
    pytest.param([ctr("life-123", restartPolicy="Always", lifecycle={"preStop": {"exec": {}}})],
                 [("Required", "initContainers[0].lifecycle.preStop.exec.command")],
                 id="invalid lifecycle, no exec command."),
    pytest.param([ctr("life-123", restartPolicy="Always", lifecycle={"preStop": {"httpGet": {"port": 80, "scheme": "HTTP"}}})],
                 [("Required", "initContainers[0].lifecycle.preStop.httpGet.path")], id="invalid lifecycle, no http path."),
    pytest.param([ctr("life-123", restartPolicy="Always", lifecycle={"preStop": {"httpGet": {"path": "/", "scheme": "HTTP"}}})],
                 [("Invalid", "initContainers[0].lifecycle.preStop.httpGet.port")], id="invalid lifecycle, no http port."),
    pytest.param([ctr("life-123", restartPolicy="Always", lifecycle={"preStop": {"httpGet": {"path": "/", "port": 80}}})],
                 [("NotSupported", "initContainers[0].lifecycle.preStop.httpGet.scheme")],
                 id="invalid lifecycle, no http scheme."),
    pytest.param([ctr("life-123", restartPolicy="Always", lifecycle={"preStop": {"tcpSocket": {}}})],
                 [("Invalid", "initContainers[0].lifecycle.preStop.tcpSocket.port")],
                 id="invalid lifecycle, no tcp socket port."),
    pytest.param([ctr("life-123", restartPolicy="Always", lifecycle={"preStop": {"tcpSocket": {"port": 0}}})],
                 [("Invalid", "initContainers[0].lifecycle.preStop.tcpSocket.port")],
                 id="invalid lifecycle, zero tcp socket port."),
    pytest.param([ctr("life-123", restartPolicy="Always", lifecycle={"preStop": {}})],
                 [("Required", "initContainers[0].lifecycle.preStop")], id="invalid lifecycle, no action."),
]


@pytest.mark.parametrize(("init", "want"), INIT_ERRORS)
def test_validate_init_containers_errors(init: list[JsonDict], want: list[tuple[str, str]]) -> None:
    errs = spec_errors(spec(containers=[APP], initContainers=init, restartPolicy="Never"))
    assert kinds(errs) == [(k, f"spec.{f}") for k, f in want]


def test_init_container_resize_policy() -> None:
    """"Not supported ResizePolicy: invalid": upstream's test runs AllowSidecarResizePolicy off; v1.33's
    default gates (InPlacePodVerticalScaling) turn it on, so a pod may carry it."""
    init = [ctr("init", resizePolicy=[rp("cpu", NR)])]
    assert spec_errors(spec(containers=[APP], initContainers=init, restartPolicy="Never")) == []
    errs = ps.validate_init_containers(init, [APP], "initContainers", restart_policy="Never",
                                       allow_sidecar_resize_policy=False)
    assert kinds(errs) == [("Invalid", "initContainers[0].resizePolicy")]


# =================================================================================================
# TestValidateRestartPolicy, TestValidateDNSPolicy, TestValidatePodDNSConfig
# =================================================================================================


@pytest.mark.parametrize("policy", ["Always", "OnFailure", "Never"])
def test_restart_policy_success(policy: str) -> None:
    assert spec_errors(spec(restartPolicy=policy)) == []


@pytest.mark.parametrize(("policy", "want"), [
    ("", ["spec.restartPolicy: Required value"]),
    ("newpolicy", ['spec.restartPolicy: Unsupported value: "newpolicy": supported values: "Always", "OnFailure", '
                   '"Never"']),
])
def test_restart_policy_errors(policy: str, want: list[str]) -> None:
    assert texts(spec_errors(spec(restartPolicy=policy))) == want


@pytest.mark.parametrize("policy", ["ClusterFirst", "Default", "ClusterFirstWithHostNet"])
def test_dns_policy_success(policy: str) -> None:
    assert spec_errors(spec(dnsPolicy=policy)) == []


def test_dns_policy_none_needs_a_config() -> None:
    assert spec_errors(spec(dnsPolicy="None", dnsConfig={"nameservers": ["1.2.3.4"]})) == []


@pytest.mark.parametrize(("policy", "want"), [
    ("invalid", ['spec.dnsPolicy: Unsupported value: "invalid": supported values: "ClusterFirstWithHostNet", '
                 '"ClusterFirst", "Default", "None"']),
    ("", ["spec.dnsPolicy: Required value"]),
])
def test_dns_policy_errors(policy: str, want: list[str]) -> None:
    assert texts(spec_errors(spec(dnsPolicy=policy))) == want


def paths(*lengths: int) -> list[str]:
    return ["a" * n for n in lengths]


DNS_CASES = [
    pytest.param({}, None, False, id="valid: empty DNSConfig"),
    pytest.param({"options": [{"name": "ndots", "value": "2"}]}, None, False, id="valid: 1 option"),
    pytest.param({"nameservers": ["127.0.0.1"]}, None, False, id="valid: 1 nameserver"),
    pytest.param({"nameservers": ["127.0.0.1"]}, "None", False, id="valid: DNSNone with 1 nameserver"),
    pytest.param({"searches": ["custom"]}, None, False, id="valid: 1 search path"),
    pytest.param({"searches": ["custom."]}, None, False, id="valid: 1 search path with trailing period"),
    pytest.param({"nameservers": ["127.0.0.1", "10.0.0.10", "8.8.8.8"],
                  "searches": ["custom", "mydomain.com", "local", "cluster.local", "svc.cluster.local",
                               "default.svc.cluster.local."]}, None, False,
                 id="valid: 3 nameservers and 6 search paths(legacy)"),
    pytest.param({"nameservers": ["127.0.0.1", "10.0.0.10", "8.8.8.8"],
                  "searches": ["custom", "mydomain.com", "local", "cluster.local", "svc.cluster.local",
                               "default.svc.cluster.local.", *(str(i) for i in range(7, 33))]}, None, False,
                 id="valid: 3 nameservers and 32 search paths"),
    pytest.param({"searches": paths(1, 50, 50, 50, 50, 50)}, None, False,
                 id="valid: 256 characters in search path list(legacy)"),
    pytest.param({"searches": paths(64, *([63] * 31))}, None, False, id="valid: 2048 characters in search path list"),
    pytest.param({"nameservers": ["FE80::0202:B3FF:FE1E:8329"]}, None, False, id="valid: ipv6 nameserver"),
    pytest.param({"nameservers": ["127.0.0.1", "10.0.0.10", "8.8.8.8", "1.2.3.4"]}, None, True,
                 id="invalid: 4 nameservers"),
    pytest.param({"searches": ["custom", "mydomain.com", "local", "cluster.local", "svc.cluster.local",
                               "default.svc.cluster.local", "exceeded"]}, None, False, id="valid: 7 search paths"),
    pytest.param({"searches": ["custom", "mydomain.com", "local", "cluster.local", "svc.cluster.local",
                               "default.svc.cluster.local.", *(str(i) for i in range(7, 34))]}, None, True,
                 id="invalid: 33 search paths"),
    pytest.param({"searches": paths(2, 50, 50, 50, 50, 50)}, None, False,
                 id="valid: 257 characters in search path list"),
    pytest.param({"searches": paths(65, *([63] * 31))}, None, True, id="invalid: 2049 characters in search path list"),
    pytest.param({"searches": ["custom?"]}, None, True, id="invalid search path"),
    pytest.param({"nameservers": ["invalid"]}, None, True, id="invalid nameserver"),
    pytest.param({"options": [{"value": "2"}]}, None, True, id="invalid empty option name"),
    pytest.param({"searches": ["custom"]}, "None", True, id="invalid: DNSNone with 0 nameserver"),
]


@pytest.mark.parametrize("relaxed", [False, True], ids=["strict", "relaxed"])
@pytest.mark.parametrize(("cfg", "policy", "fails"), DNS_CASES)
def test_validate_pod_dns_config(cfg: JsonDict, policy: str | None, fails: bool, relaxed: bool) -> None:
    errs = ps.validate_pod_dns_config(cfg, policy or "ClusterFirst", "dnsConfig", relaxed_search=relaxed)
    assert bool(errs) is fails, texts(errs)


# =================================================================================================
# TestValidatePodSpec
# =================================================================================================

AFFINITY_BASIC = {"nodeAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
        "matchExpressions": [{"key": "key2", "operator": "In", "values": ["value1", "value2"]}],
        "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["host1"]}]}]},
    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": {
        "matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}}]}}

POD_SPEC_SUCCESS = [
    pytest.param({}, id="populate basic fields, leave defaults for most"),
    pytest.param({"initContainers": [ctr("ictr")], "volumes": [{"name": "vol", "emptyDir": {}}],
                  "nodeSelector": {"key": "value"}, "nodeName": "foobar", "activeDeadlineSeconds": 2**31 - 1,
                  "serviceAccountName": "acct"}, id="populate all fields"),
    pytest.param({"containers": [ctr(ports=[{"hostPort": 8080, "containerPort": 8080, "protocol": "TCP"}])],
                  "hostNetwork": True}, id="populate HostNetwork"),
    pytest.param({"securityContext": {"supplementalGroups": [0], "runAsUser": 0, "fsGroup": 0}},
                 id="populate RunAsUser SupplementalGroups FSGroup with minID 0"),
    pytest.param({"securityContext": {"supplementalGroups": [2147483647], "runAsUser": 2147483647,
                                      "fsGroup": 2147483647}},
                 id="populate RunAsUser SupplementalGroups FSGroup with maxID 2147483647"),
    pytest.param({"hostIPC": True}, id="populate HostIPC"),
    pytest.param({"hostPID": True}, id="populate HostPID"),
    pytest.param({"affinity": AFFINITY_BASIC}, id="populate Affinity"),
    pytest.param({"hostAliases": [{"ip": "12.34.56.78", "hostnames": ["host1", "host2"]}]}, id="populate HostAliases"),
    pytest.param({"hostAliases": [{"ip": "12.34.56.78", "hostnames": ["host1.foo", "host2.bar"]}]},
                 id="populate HostAliases with `foo.bar` hostnames"),
    pytest.param({"hostAliases": [{"ip": "12.34.56.78", "hostnames": ["host1.foo", "host2.bar"]}], "hostNetwork": True},
                 id="populate HostAliases with HostNetwork"),
    pytest.param({"priorityClassName": "valid-name"}, id="populate PriorityClassName"),
    pytest.param({"shareProcessNamespace": True}, id="populate ShareProcessNamespace"),
    pytest.param({"runtimeClassName": "valid-sandbox"}, id="populate RuntimeClassName"),
    pytest.param({"overhead": {}}, id="populate Overhead"),
    pytest.param({"securityContext": {"fsGroupChangePolicy": "Always"}}, id="populate FSGroupChangePolicy"),
    pytest.param({"containers": [ctr(resizePolicy=[rp("cpu", NR)])]}, id="resources resize policy for containers"),
]


@pytest.mark.parametrize("fields", POD_SPEC_SUCCESS)
def test_validate_pod_spec_success(fields: JsonDict) -> None:
    assert spec_errors(spec(**fields)) == []


POD_SPEC_FAILURES = [
    pytest.param({"volumes": [{}]}, id="bad volume"),
    pytest.param({"containers": []}, id="no containers"),
    pytest.param({"containers": [{}]}, id="bad container"),
    pytest.param({"initContainers": [{}]}, id="bad init container"),
    pytest.param({"dnsPolicy": "invalid"}, id="bad DNS policy"),
    pytest.param({"serviceAccountName": "invalidName"}, id="bad service account name"),
    pytest.param({"restartPolicy": "UnknowPolicy"}, id="bad restart policy"),
    pytest.param({"containers": [ctr(ports=[{"hostPort": 0, "containerPort": 2600, "protocol": "TCP"}])],
                  "hostNetwork": True}, id="with hostNetwork hostPort unspecified"),
    pytest.param({"containers": [ctr(ports=[{"hostPort": 8080, "containerPort": 2600, "protocol": "TCP"}])],
                  "hostNetwork": True}, id="with hostNetwork hostPort not equal to containerPort"),
    pytest.param({"hostAliases": [{"ip": "999.999.999.999", "hostnames": ["host1", "host2"]}]},
                 id="with hostAliases with invalid IP"),
    pytest.param({"hostAliases": [{"ip": "12.34.56.78", "hostnames": ["@#$^#@#$"]}]},
                 id="with hostAliases with invalid hostname"),
    pytest.param({"securityContext": {"supplementalGroups": [2147483648, 1234]}},
                 id="bad supplementalGroups large than math.MaxInt32"),
    pytest.param({"securityContext": {"supplementalGroups": [-1, 1234]}}, id="bad supplementalGroups less than 0"),
    pytest.param({"securityContext": {"runAsUser": 2147483648}}, id="bad runAsUser large than math.MaxInt32"),
    pytest.param({"securityContext": {"runAsUser": -1}}, id="bad runAsUser less than 0"),
    pytest.param({"securityContext": {"fsGroup": 2147483648}}, id="bad fsGroup large than math.MaxInt32"),
    pytest.param({"securityContext": {"fsGroup": -1}}, id="bad fsGroup less than 0"),
    pytest.param({"activeDeadlineSeconds": 0}, id="bad-active-deadline-seconds"),
    pytest.param({"activeDeadlineSeconds": 2**31}, id="active-deadline-seconds-too-large"),
    pytest.param({"nodeName": "node name"}, id="bad nodeName"),
    pytest.param({"priorityClassName": "InvalidName"}, id="bad PriorityClassName"),
    pytest.param({"hostPID": True, "shareProcessNamespace": True}, id="ShareProcessNamespace and HostPID both set"),
    pytest.param({"runtimeClassName": "invalid/sandbox"}, id="bad RuntimeClassName"),
    pytest.param({"securityContext": {"fsGroupChangePolicy": ""}}, id="bad empty fsGroupchangepolicy"),
    pytest.param({"securityContext": {"fsGroupChangePolicy": "invalid"}}, id="bad invalid fsgroupchangepolicy"),
]


@pytest.mark.parametrize("fields", POD_SPEC_FAILURES)
def test_validate_pod_spec_failures(fields: JsonDict) -> None:
    assert spec_errors(spec(**fields))


def test_overhead() -> None:
    """TestValidateOverhead: cpu and memory are fine, `my.org` is no container resource (validateOverhead
    reuses the container rules on {limits: overhead}, so the path reads overhead.limits[...])."""
    assert spec_errors(spec(overhead={"cpu": "10", "memory": "10G"})) == []
    assert kinds(spec_errors(spec(overhead={"my.org": "10m"}))) == [("Invalid", "spec.overhead.limits[my.org]")] * 2


# =================================================================================================
# TestValidatePod (create): success and error cases
# =================================================================================================


def term(key: str, op: str, *values: str) -> JsonDict:
    out: JsonDict = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def pod_term(*exprs: JsonDict, topology: str = "k8s.io/zone", match: list[str] | None = None,
             mismatch: list[str] | None = None, **extra: Any) -> JsonDict:
    out: JsonDict = {"labelSelector": {"matchExpressions": list(exprs)}, **extra}
    if topology:
        out["topologyKey"] = topology
    if match is not None:
        out["matchLabelKeys"] = match
    if mismatch is not None:
        out["mismatchLabelKeys"] = mismatch
    return out


def affinity(kind: str, mode: str, t: JsonDict, weight: int = 10) -> JsonDict:
    key = f"{mode}DuringSchedulingIgnoredDuringExecution"
    if mode == "preferred":
        return {kind: {key: [{"weight": weight, "podAffinityTerm": t}]}}
    return {kind: {key: [t]}}


MATCH_MISMATCH = pod_term(term("key", "NotIn", "value1", "value2"), term("key2", "In", "value1"),
                          term("key3", "NotIn", "value1"), match=["key2"], mismatch=["key3"])

POD_SUCCESS = [
    pytest.param(pod("123"), id="basic fields"),
    pytest.param(pod("abc.123.do-re-mi", initContainers=[ctr("ictr")], volumes=[{"name": "vol", "emptyDir": {}}],
                     nodeSelector={"key": "value"}, nodeName="foobar", serviceAccountName="acct"),
                 id="just about everything"),
    pytest.param(pod(affinity=AFFINITY_BASIC), id="serialized node affinity requirements"),
    pytest.param(pod(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": []}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": {"matchExpressions": []}}]}}),
                 id="serialized node affinity requirements, II"),
    pytest.param(pod(affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            pod_term(term("key2", "In", "value1", "value2"), topology="zone", namespaces=["ns"],
                     namespaceSelector={"matchExpressions": [term("key", "In", "value1", "value2")]})],
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": pod_term(
            term("key2", "NotIn", "value1", "value2"), topology="region", namespaces=["ns"])}]}}),
                 id="serialized pod affinity in affinity requirements in annotations"),
    pytest.param(pod(affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [pod_term(term("key2", "Exists"), topology="zone",
                                                                    namespaces=["ns"])],
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": pod_term(
            term("key2", "DoesNotExist"), topology="region", namespaces=["ns"])}]}}),
                 id="serialized pod anti affinity with different Label Operators in affinity requirements in annotations"),
    pytest.param(pod(tolerations=[{"key": "foo", "operator": "Exists", "value": "", "effect": "NoExecute",
                                   "tolerationSeconds": 60}]),
                 id="populate forgiveness tolerations with exists operator in annotations."),
    pytest.param(pod(tolerations=[{"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoExecute",
                                   "tolerationSeconds": 60}]),
                 id="populate forgiveness tolerations with equal operator in annotations."),
    pytest.param(pod(tolerations=[{"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}]),
                 id="populate tolerations equal operator in annotations."),
    pytest.param(pod(volumes=[{"name": "vol", "emptyDir": {}}]), id="populate tolerations exists operator in annotations."),
    pytest.param(pod(tolerations=[{"operator": "Exists", "effect": "NoSchedule"}]),
                 id="empty key with Exists operator is OK for toleration, empty toleration key means match all taint keys."),
    pytest.param(pod(tolerations=[{"key": "foo", "value": "bar", "effect": "NoSchedule"}]),
                 id="empty operator is OK for toleration, defaults to Equal."),
    pytest.param(pod(tolerations=[{"key": "foo", "operator": "Equal", "value": "bar"}]),
                 id="empty effect is OK for toleration, empty toleration effect means match all taint effects."),
    pytest.param(pod(tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                                   "tolerationSeconds": -2}]), id="negative tolerationSeconds is OK for toleration."),
    pytest.param(pod(annotations={"seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}),
                 id="runtime default seccomp profile"),
    pytest.param(pod(annotations={"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}),
                 id="docker default seccomp profile"),
    pytest.param(pod(annotations={"seccomp.security.alpha.kubernetes.io/pod": "localhost/foo"}),
                 id="localhost seccomp profile"),
    pytest.param(pod(annotations={"container.seccomp.security.alpha.kubernetes.io/foo": "localhost/foo"}),
                 id="localhost seccomp profile for a container"),
    pytest.param(pod(securityContext={"seccompProfile": {"type": "RuntimeDefault"}}),
                 id="runtime default seccomp profile for a pod"),
    pytest.param(pod(containers=[ctr(securityContext={"seccompProfile": {"type": "Unconfined"}})]),
                 id="runtime default seccomp profile for a container"),
    pytest.param(pod(securityContext={"seccompProfile": {"type": "RuntimeDefault"}}),
                 id="unconfined seccomp profile for a pod"),
    pytest.param(pod(containers=[ctr(securityContext={"seccompProfile": {"type": "Unconfined"}})]),
                 id="unconfined seccomp profile for a container"),
    pytest.param(pod(securityContext={"seccompProfile": {"type": "Localhost", "localhostProfile": "filename.json"}}),
                 id="localhost seccomp profile for a pod"),
    pytest.param(pod(containers=[ctr(securityContext={"seccompProfile": {"type": "Localhost",
                                                                         "localhostProfile": "filename.json"}})]),
                 id="localhost seccomp profile for a container, II"),
    pytest.param(pod(annotations={"container.apparmor.security.beta.kubernetes.io/ctr": "runtime/default"}),
                 id="default AppArmor annotation for a container"),
    pytest.param(pod(initContainers=[ctr("init-ctr")],
                     annotations={"container.apparmor.security.beta.kubernetes.io/init-ctr": "runtime/default"}),
                 id="default AppArmor annotation for an init container"),
    pytest.param(pod(annotations={"container.apparmor.security.beta.kubernetes.io/ctr": "localhost/foo"}),
                 id="localhost AppArmor annotation for a container"),
    pytest.param(pod(securityContext={"appArmorProfile": {"type": "RuntimeDefault"}}),
                 id="runtime default AppArmor profile for a pod"),
    pytest.param(pod(containers=[ctr(securityContext={"appArmorProfile": {"type": "RuntimeDefault"}})]),
                 id="runtime default AppArmor profile for a container"),
    pytest.param(pod(securityContext={"appArmorProfile": {"type": "Unconfined"}}), id="unconfined AppArmor profile for a pod"),
    pytest.param(pod(containers=[ctr(securityContext={"appArmorProfile": {"type": "Unconfined"}})]),
                 id="unconfined AppArmor profile for a container"),
    pytest.param(pod(securityContext={"appArmorProfile": {"type": "Localhost",
                                                          "localhostProfile": "example-org/application-foo"}}),
                 id="localhost AppArmor profile for a pod"),
    pytest.param(pod(containers=[ctr(securityContext={"appArmorProfile": {
        "type": "Localhost", "localhostProfile": "example-org/application-foo"}})]),
                 id="localhost AppArmor profile for a container field"),
    pytest.param(pod(annotations={"container.apparmor.security.beta.kubernetes.io/ctr": "localhost/foo"},
                     containers=[ctr(securityContext={"appArmorProfile": {"type": "Localhost",
                                                                          "localhostProfile": "foo"}})]),
                 id="matching AppArmor fields and annotations"),
    pytest.param(pod(annotations={"container.apparmor.security.beta.kubernetes.io/ctr": "localhost/foo"},
                     securityContext={"appArmorProfile": {"type": "Localhost", "localhostProfile": "foo"}}),
                 id="matching AppArmor pod field and annotations"),
    pytest.param(pod(securityContext={"sysctls": [{"name": "kernel.shmmni", "value": "32768"},
                                                  {"name": "kernel.shmmax", "value": "1000000000"},
                                                  {"name": "knet.ipv4.route.min_pmtu", "value": "1000"}]}),
                 id="syntactically valid sysctls"),
    pytest.param(pod("valid-extended", initContainers=[ctr("valid-extended", resources=res(
        requests={"example.com/a": "10"}, limits={"example.com/a": "10"}))]),
                 id="valid extended resources for init container"),
    pytest.param(pod("valid-extended", containers=[ctr("valid-extended", resources=res(
        requests={"example.com/a": "10"}, limits={"example.com/a": "10"}))]),
                 id="valid extended resources for regular container"),
    pytest.param(pod("valid-extended", serviceAccountName="some-service-account", volumes=[{
        "name": "projected-volume", "projected": {"sources": [{"serviceAccountToken": {
            "audience": "foo-audience", "expirationSeconds": 6000, "path": "foo-path"}}]}}]),
                 id="valid serviceaccount token projected volume with serviceaccount name specified"),
    pytest.param(pod(annotations={"controller.kubernetes.io/pod-deletion-cost": "-100"}), id="negative pod-deletion-cost"),
    pytest.param(pod(annotations={"controller.kubernetes.io/pod-deletion-cost": "100"}), id="positive pod-deletion-cost"),
    pytest.param(pod(affinity=affinity("podAffinity", "required", MATCH_MISMATCH)),
                 id="MatchLabelKeys/MismatchLabelKeys in required PodAffinity"),
    pytest.param(pod(affinity=affinity("podAffinity", "preferred", MATCH_MISMATCH)),
                 id="MatchLabelKeys/MismatchLabelKeys in preferred PodAffinity"),
    pytest.param(pod(affinity=affinity("podAntiAffinity", "required", MATCH_MISMATCH)),
                 id="MatchLabelKeys/MismatchLabelKeys in required PodAntiAffinity"),
    pytest.param(pod(affinity=affinity("podAntiAffinity", "preferred", MATCH_MISMATCH)),
                 id="MatchLabelKeys/MismatchLabelKeys in preferred PodAntiAffinity"),
    pytest.param(pod(affinity=affinity("podAffinity", "required", pod_term(
        term("key", "NotIn", "value1", "value2"), term("key2", "In", "value1"), term("key2", "NotIn", "value1"),
        mismatch=["key2"]))), id="LabelSelector can have the same key as MismatchLabelKeys"),
]


@pytest.mark.parametrize("p", POD_SUCCESS)
def test_validate_pod_success(p: JsonDict) -> None:
    assert texts(create_errors(p)) == []


def required_na(*exprs: JsonDict, fields: list[JsonDict] | None = None) -> JsonDict:
    t: JsonDict = {}
    if exprs:
        t["matchExpressions"] = list(exprs)
    if fields is not None:
        t["matchFields"] = fields
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [t]}}}


BOTH_KEYS = pod_term(term("key", "In", "value1"), term("key", "NotIn", "value2"), match=["key"])
SAME_KEY = pod_term(term("key", "NotIn", "value1", "value2"), match=["samekey"], mismatch=["samekey"])
SIMPLE = pod_term(term("key", "NotIn", "value1", "value2"))

POD_ERRORS = [
    pytest.param(pod("123", containers=[ctr(image=" ")]), "spec.containers[0].image", id="image whitespace"),
    pytest.param(pod("123", containers=[ctr(image=" something ")]), "spec.containers[0].image",
                 id="image leading and trailing whitespace"),
    pytest.param(pod("123", containers=[{}]), "spec.containers[0].name", id="bad spec"),
    pytest.param(pod("123", labels={"NoUppercaseOrSpecialCharsLike=Equals": "bar"}),
                 "NoUppercaseOrSpecialCharsLike=Equals", id="bad label"),
    pytest.param(pod(affinity=required_na({"key": "key1"})),
                 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchExpressions[0].operator",
                 id="invalid node selector requirement in node affinity, operator can't be null"),
    pytest.param(pod(affinity=required_na(term("invalid key ___@#", "Exists"))),
                 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchExpressions[0].key", id="invalid node selector requirement in node affinity, key is invalid"),
    pytest.param(pod(affinity=required_na(fields=[term("metadata.name", "In", "host1", "host2")])),
                 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchFields[0].values",
                 id="invalid node field selector requirement in node affinity, more values for field selector"),
    pytest.param(pod(affinity=required_na(fields=[term("metadata.name", "Exists")])),
                 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchFields[0].operator",
                 id="invalid node field selector requirement in node affinity, invalid operator"),
    pytest.param(pod(affinity=required_na(fields=[term("metadata.namespace", "In", "ns1")])),
                 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchFields[0].key", id="invalid node field selector requirement in node affinity, invalid key"),
    pytest.param(pod(affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
        "weight": 199, "preference": {"matchExpressions": [term("foo", "In", "bar")]}}]}}),
                 "must be in the range 1-100",
                 id="invalid preferredSchedulingTerm in node affinity, weight should be in range 1-100"),
    pytest.param(pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": []}}}),
                 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                 id="invalid requiredDuringSchedulingIgnoredDuringExecution node selector, nodeSelectorTerms must "
                    "have at least one term"),
    pytest.param(pod(affinity=affinity("podAffinity", "preferred", pod_term(
        term("key2", "NotIn", "value1", "value2"), topology="region", namespaces=["ns"]), weight=109)),
                 "must be in the range 1-100",
                 id="invalid weight in preferredDuringSchedulingIgnoredDuringExecution in pod affinity annotations, "
                    "weight should be in range 1-100"),
    pytest.param(pod(affinity=affinity("podAntiAffinity", "preferred", pod_term(
        term("key2", "Exists", "value1", "value2"), topology="region", namespaces=["ns"]))),
                 "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm."
                 "labelSelector.matchExpressions[0].values",
                 id="invalid labelSelector in preferredDuringSchedulingIgnoredDuringExecution in podaffinity "
                    "annotations, values should be empty if the operator is Exists"),
    pytest.param(pod(affinity=affinity("podAntiAffinity", "preferred", {
        "namespaceSelector": {"matchExpressions": [term("key2", "In")]}, "namespaces": ["ns"], "topologyKey": "region"})),
                 "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm."
                 "namespaceSelector.matchExpressions[0].values",
                 id="invalid namespaceSelector in preferredDuringSchedulingIgnoredDuringExecution in podaffinity, "
                    "In operator must include Values"),
    pytest.param(pod(affinity=affinity("podAntiAffinity", "preferred", {
        "namespaceSelector": {"matchExpressions": [term("key2", "Exists", "value1", "value2")]}, "namespaces": ["ns"],
        "topologyKey": "region"})),
                 "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm."
                 "namespaceSelector.matchExpressions[0].values",
                 id="invalid namespaceSelector in preferredDuringSchedulingIgnoredDuringExecution in podaffinity, "
                    "Exists operator can not have values"),
    pytest.param(pod(affinity=affinity("podAffinity", "preferred", pod_term(
        term("key2", "Exists"), topology="region", namespaces=["INVALID_NAMESPACE"]))),
                 "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespace",
                 id="invalid name space in preferredDuringSchedulingIgnoredDuringExecution in podaffinity "
                    "annotations, namespace should be valid"),
    pytest.param(pod(affinity=affinity("podAffinity", "required", pod_term(
        term("key2", "In", "value1", "value2"), topology="", namespaces=["ns"]))), "can not be empty",
                 id="invalid hard pod affinity, empty topologyKey is not allowed for hard pod affinity"),
    pytest.param(pod(affinity=affinity("podAntiAffinity", "required", pod_term(
        term("key2", "In", "value1", "value2"), topology="", namespaces=["ns"]))), "can not be empty",
                 id="invalid hard pod anti-affinity, empty topologyKey is not allowed for hard pod anti-affinity"),
    pytest.param(pod(affinity=affinity("podAffinity", "preferred", pod_term(
        term("key2", "NotIn", "value1", "value2"), topology="", namespaces=["ns"]))), "can not be empty",
                 id="invalid soft pod affinity, empty topologyKey is not allowed for soft pod affinity"),
    pytest.param(pod(affinity=affinity("podAntiAffinity", "preferred", pod_term(
        term("key2", "NotIn", "value1", "value2"), topology="", namespaces=["ns"]))), "can not be empty",
                 id="invalid soft pod anti-affinity, empty topologyKey is not allowed for soft pod anti-affinity"),
    *(pytest.param(pod(affinity=affinity(kind, mode, {**SIMPLE, keys: ["/simple"]})), "prefix part must be non-empty",
                   id=f"invalid {'hard' if mode == 'required' else 'soft'} pod "
                      f"{'affinity' if kind == 'podAffinity' else 'anti-affinity'}, key in "
                      f"{'MatchLabelKeys' if keys == 'matchLabelKeys' else 'MismatchLabelKeys'} isn't correctly defined")
      for keys in ("matchLabelKeys", "mismatchLabelKeys") for kind in ("podAffinity", "podAntiAffinity")
      for mode in ("preferred", "required")),
    *(pytest.param(pod(affinity=affinity(kind, mode, BOTH_KEYS), labels={"key": "value1"}),
                   "exists in both matchLabelKeys and labelSelector",
                   id=f"invalid {'hard' if mode == 'required' else 'soft'} pod "
                      f"{'affinity' if kind == 'podAffinity' else 'anti-affinity'}, key exists in both matchLabelKeys "
                      "and labelSelector")
      for kind in ("podAffinity", "podAntiAffinity") for mode in ("preferred", "required")),
    *(pytest.param(pod(affinity=affinity(kind, mode, SAME_KEY)), "exists in both matchLabelKeys and mismatchLabelKeys",
                   id=f"invalid {'hard' if mode == 'required' else 'soft'} pod "
                      f"{'affinity' if kind == 'podAffinity' else 'anti-affinity'}, key exists in both MatchLabelKeys "
                      "and MismatchLabelKeys")
      for kind in ("podAffinity", "podAntiAffinity") for mode in ("preferred", "required")),
    pytest.param(pod(tolerations=[{"key": "nospecialchars^=@", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}]),
                 "spec.tolerations[0].key", id="invalid toleration key"),
    pytest.param(pod(tolerations=[{"key": "foo", "operator": "In", "value": "bar", "effect": "NoSchedule"}]),
                 "spec.tolerations[0].operator", id="invalid toleration operator"),
    pytest.param(pod(tolerations=[{"key": "foo", "operator": "Exists", "value": "bar", "effect": "NoSchedule"}]),
                 "spec.tolerations[0].operator", id="value must be empty when `operator` is 'Exists'"),
    pytest.param(pod(tolerations=[{"operator": "Equal", "value": "bar", "effect": "NoSchedule"}]),
                 "spec.tolerations[0].operator", id="operator must be 'Exists' when `key` is empty"),
    pytest.param(pod("pod-forgiveness-invalid", tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                                             "effect": "NoSchedule", "tolerationSeconds": 20}]),
                 "spec.tolerations[0].effect", id="effect must be 'NoExecute' when `TolerationSeconds` is set"),
    pytest.param(pod(annotations={"seccomp.security.alpha.kubernetes.io/pod": "foo"}), "must be a valid seccomp profile",
                 id="must be a valid pod seccomp profile"),
    pytest.param(pod(annotations={"container.seccomp.security.alpha.kubernetes.io/foo": "foo"}),
                 "must be a valid seccomp profile", id="must be a valid container seccomp profile"),
    pytest.param(pod(annotations={"container.seccomp.security.alpha.kubernetes.io/": "foo"}),
                 "name part must be non-empty", id="must be a non-empty container name in seccomp annotation"),
    pytest.param(pod(annotations={"container.seccomp.security.alpha.kubernetes.io/foo": ""}),
                 "must be a valid seccomp profile", id="must be a non-empty container profile in seccomp annotation"),
    pytest.param(pod(annotations={"seccomp.security.alpha.kubernetes.io/pod": "unconfined"},
                     securityContext={"seccompProfile": {"type": "RuntimeDefault"}}),
                 "seccomp type in annotation and field must match", id="must match seccomp profile type and pod annotation"),
    pytest.param(pod(annotations={"container.seccomp.security.alpha.kubernetes.io/ctr": "unconfined"},
                     containers=[ctr(securityContext={"seccompProfile": {"type": "RuntimeDefault"}})]),
                 "seccomp type in annotation and field must match",
                 id="must match seccomp profile type and container annotation"),
    pytest.param(pod(annotations={"seccomp.security.alpha.kubernetes.io/pod": "localhost//foo"}),
                 "must be a relative path", id="must be a relative path in a node-local seccomp profile annotation"),
    pytest.param(pod(annotations={"seccomp.security.alpha.kubernetes.io/pod": "localhost/../foo"}),
                 "must not contain '..'", id="must not start with '../'"),
    pytest.param(pod(initContainers=[ctr("init-ctr")], annotations={
        "container.apparmor.security.beta.kubernetes.io/ctr": "runtime/default",
        "container.apparmor.security.beta.kubernetes.io/init-ctr": "runtime/default",
        "container.apparmor.security.beta.kubernetes.io/fake-ctr": "runtime/default"}),
                 "metadata.annotations[container.apparmor.security.beta.kubernetes.io/fake-ctr]",
                 id="AppArmor profile must apply to a container"),
    pytest.param(pod(annotations={"container.apparmor.security.beta.kubernetes.io/ctr": "bad-name"}),
                 "invalid AppArmor profile name", id="AppArmor profile format must be valid"),
    pytest.param(pod(annotations={"container.apparmor.security.beta.kubernetes.io/ctr": "runtime/foo"}),
                 "invalid AppArmor profile name", id="only default AppArmor profile may start with runtime/"),
    pytest.param(pod(securityContext={"appArmorProfile": {"type": "test"}}), 'Unsupported value: "test"',
                 id="unsupported pod AppArmor profile type"),
    pytest.param(pod(containers=[ctr(securityContext={"appArmorProfile": {"type": "test"}})]), 'Unsupported value: "test"',
                 id="unsupported container AppArmor profile type"),
    pytest.param(pod(securityContext={"appArmorProfile": {"type": ""}}),
                 "Required value: type is required when appArmorProfile is set", id="missing pod AppArmor profile type"),
    pytest.param(pod(securityContext={"appArmorProfile": {"type": "Localhost"}}),
                 "Required value: must be set when AppArmor type is Localhost", id="missing AppArmor localhost profile"),
    pytest.param(pod(securityContext={"appArmorProfile": {"type": "Localhost", "localhostProfile": ""}}),
                 "Required value: must be set when AppArmor type is Localhost", id="empty AppArmor localhost profile"),
    pytest.param(pod(securityContext={"appArmorProfile": {"type": "RuntimeDefault", "localhostProfile": "foo-bar"}}),
                 'Invalid value: "foo-bar"', id="invalid AppArmor localhost profile type"),
    pytest.param(pod(securityContext={"appArmorProfile": {"type": "Localhost", "localhostProfile": "foo-bar "}}),
                 'Invalid value: "foo-bar "', id="invalid AppArmor localhost profile"),
    pytest.param(pod(securityContext={"appArmorProfile": {"type": "Localhost", "localhostProfile": "a" * 4096}}),
                 "Too long: may not be more than 4095 bytes", id="too long AppArmor localhost profile"),
    pytest.param(pod(annotations={"container.apparmor.security.beta.kubernetes.io/ctr": "runtime/default"},
                     containers=[ctr(securityContext={"appArmorProfile": {"type": "Unconfined"}})]),
                 "Forbidden: apparmor type in annotation and field must match",
                 id="mismatched AppArmor field and annotation types"),
    pytest.param(pod(annotations={"container.apparmor.security.beta.kubernetes.io/ctr": "runtime/default"},
                     securityContext={"appArmorProfile": {"type": "Unconfined"}}),
                 "Forbidden: apparmor type in annotation and field must match",
                 id="mismatched AppArmor pod field and annotation types"),
    pytest.param(pod(annotations={"container.apparmor.security.beta.kubernetes.io/ctr": "localhost/foo"},
                     containers=[ctr(securityContext={"appArmorProfile": {"type": "Localhost", "localhostProfile": "bar"}})]),
                 "Forbidden: apparmor profile in annotation and field must match",
                 id="mismatched AppArmor localhost profiles"),
    pytest.param(pod(containers=[ctr("invalid", resources=res(requests={"invalid-name": "2"},
                                                              limits={"invalid-name": "2"}))]),
                 "must be a standard resource for containers", id="invalid extended resource name in container request"),
    pytest.param(pod(containers=[ctr("invalid", resources=res(requests={"example.com/a": "2"},
                                                              limits={"example.com/a": "1"}))]),
                 "must be equal to example.com/a", id="invalid extended resource requirement: request must be == limit"),
    pytest.param(pod(containers=[ctr("invalid", resources=res(requests={"example.com/a": "2"}, limits={}))]),
                 "Limit must be set", id="invalid extended resource requirement without limit"),
    pytest.param(pod(containers=[ctr("invalid", resources=res(requests={"example.com/a": "500m"}, limits={}))]),
                 "must be an integer", id="invalid fractional extended resource in container request"),
    pytest.param(pod(initContainers=[ctr("invalid", resources=res(requests={"example.com/a": "500m"}, limits={}))]),
                 "must be an integer", id="invalid fractional extended resource in init container request"),
    pytest.param(pod(containers=[ctr("invalid", resources=res(requests={"example.com/a": "5"},
                                                              limits={"example.com/a": "2.5"}))]),
                 "must be an integer", id="invalid fractional extended resource in container limit"),
    pytest.param(pod(initContainers=[ctr("invalid", resources=res(requests={"example.com/a": "2.5"},
                                                                  limits={"example.com/a": "2.5"}))]),
                 "must be an integer", id="invalid fractional extended resource in init container limit"),
    pytest.param(pod(annotations={"kubernetes.io/config.mirror": ""}), "mirror",
                 id="mirror-pod present without nodeName"),
    pytest.param(pod(annotations={"kubernetes.io/config.mirror": "foo"}), "mirror",
                 id="mirror-pod populated without nodeName"),
    pytest.param(pod(volumes=[{"name": "projected-volume", "projected": {"sources": [{"serviceAccountToken": {
        "audience": "foo-audience", "expirationSeconds": 6000, "path": "foo-path"}}]}}]),
                 "must not be specified when serviceAccountName is not set",
                 id="serviceaccount token projected volume with no serviceaccount name specified"),
    pytest.param(pod(annotations={"controller.kubernetes.io/pod-deletion-cost": "text"}),
                 'metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "text": must be a '
                 "32bit integer", id="invalid pod-deletion-cost"),
    pytest.param(pod(annotations={"controller.kubernetes.io/pod-deletion-cost": "008"}),
                 'metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "008": must be a '
                 "32bit integer", id="invalid leading zeros pod-deletion-cost"),
    pytest.param(pod(annotations={"controller.kubernetes.io/pod-deletion-cost": "+10"}),
                 'metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "+10": must be a '
                 "32bit integer", id="invalid leading plus sign pod-deletion-cost"),
    pytest.param(pod(affinity=required_na(term("foo", "In", "-1"))),
                 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 'matchExpressions[0].values[0]: Invalid value: "-1": ' + LABEL_VALUE,
                 id="invalid required node affinity, value of NodeSelectorRequirement should be a valid label value"),
]


@pytest.mark.parametrize(("p", "expected"), POD_ERRORS)
def test_validate_pod_errors(p: JsonDict, expected: str) -> None:
    errs = create_errors(p)
    assert errs
    assert expected in aggregate(errs)


def test_key_in_both_match_label_keys_and_label_selector_field_path() -> None:
    """Upstream reports "exists in both matchLabelKeys and labelSelector" at the term's path indexed by
    the key's position in matchLabelKeys (fldPath.Index(i) on the term)."""
    errs = create_errors(pod(affinity=affinity("podAffinity", "required", BOTH_KEYS)))
    path = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
    assert texts(errs) == [f'{path}[0]: Invalid value: "key": exists in both matchLabelKeys and labelSelector']


# =================================================================================================
# TestValidateTopologySpreadConstraints
# =================================================================================================

F0 = "field[0]"
NOT_POSITIVE = "must be greater than zero"
ACTIONS = 'supported values: "DoNotSchedule", "ScheduleAnyway"'


def tsc(**kw: Any) -> JsonDict:
    base: JsonDict = {"maxSkew": 1, "topologyKey": "k8s.io/zone", "whenUnsatisfiable": "DoNotSchedule"}
    base.update(kw)
    return {k: v for k, v in base.items() if v is not None}


TSC_CASES = [
    pytest.param([tsc(minDomains=3)], [], id="all required fields ok"),
    pytest.param([tsc(maxSkew=None)], [f"{F0}.maxSkew: Invalid value: 0: {NOT_POSITIVE}"], id="missing MaxSkew"),
    pytest.param([tsc(maxSkew=-1)], [f"{F0}.maxSkew: Invalid value: -1: {NOT_POSITIVE}"], id="negative MaxSkew"),
    pytest.param([tsc(whenUnsatisfiable="ScheduleAnyway")], [],
                 id="can use MinDomains with ScheduleAnyway, when MinDomains = nil"),
    pytest.param([tsc(minDomains=-1)], [f"{F0}.minDomains: Invalid value: -1: {NOT_POSITIVE}"],
                 id="negative minDomains is invalid"),
    pytest.param([tsc(whenUnsatisfiable="ScheduleAnyway", minDomains=10)],
                 [f"{F0}.minDomains: Invalid value: 10: can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                  "not ScheduleAnyway"], id="cannot use non-nil MinDomains with ScheduleAnyway"),
    pytest.param([tsc(whenUnsatisfiable="ScheduleAnyway", minDomains=-1)],
                 [f"{F0}.minDomains: Invalid value: -1: {NOT_POSITIVE}",
                  f"{F0}.minDomains: Invalid value: -1: can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                  "not ScheduleAnyway"], id="use negative MinDomains with ScheduleAnyway(invalid)"),
    pytest.param([tsc(topologyKey=None)], [f"{F0}.topologyKey: Required value: can not be empty"],
                 id="missing TopologyKey"),
    pytest.param([tsc(whenUnsatisfiable=None)], [f'{F0}.whenUnsatisfiable: Unsupported value: "": {ACTIONS}'],
                 id="missing scheduling mode"),
    pytest.param([tsc(whenUnsatisfiable="N/A")], [f'{F0}.whenUnsatisfiable: Unsupported value: "N/A": {ACTIONS}'],
                 id="unsupported scheduling mode"),
    pytest.param([tsc(), tsc(maxSkew=2, topologyKey="k8s.io/node", whenUnsatisfiable="ScheduleAnyway")], [],
                 id="multiple constraints ok with all required fields"),
    pytest.param([tsc(topologyKey=None, whenUnsatisfiable="ScheduleAnyway"), tsc(maxSkew=2)],
                 [f"{F0}.topologyKey: Required value: can not be empty"],
                 id="multiple constraints missing TopologyKey on partial ones"),
    pytest.param([tsc(), tsc(maxSkew=2)],
                 [f'{F0}.{{topologyKey, whenUnsatisfiable}}: Duplicate value: "{{k8s.io/zone, DoNotSchedule}}"'],
                 id="duplicate constraints"),
    pytest.param([tsc(nodeAffinityPolicy="Honor", nodeTaintsPolicy="Ignore")], [],
                 id="supported policy name set on NodeAffinityPolicy and NodeTaintsPolicy"),
    pytest.param([tsc(nodeAffinityPolicy="Unknown", nodeTaintsPolicy="Ignore")],
                 [f'{F0}.nodeAffinityPolicy: Unsupported value: "Unknown": supported values: "Honor", "Ignore"'],
                 id="unsupported policy name set on NodeAffinityPolicy"),
    pytest.param([tsc(nodeAffinityPolicy="Honor", nodeTaintsPolicy="Unknown")],
                 [f'{F0}.nodeTaintsPolicy: Unsupported value: "Unknown": supported values: "Honor", "Ignore"'],
                 id="unsupported policy name set on NodeTaintsPolicy"),
    pytest.param([tsc(labelSelector={}, matchLabelKeys=["/simple"])],
                 [f'{F0}.matchLabelKeys[0]: Invalid value: "/simple": prefix part must be non-empty'],
                 id="key in MatchLabelKeys isn't correctly defined"),
    pytest.param([tsc(matchLabelKeys=["foo"], labelSelector={"matchExpressions": [term("foo", "NotIn", "value1", "value2")]})],
                 [f'{F0}.matchLabelKeys[0]: Invalid value: "foo": exists in both matchLabelKeys and labelSelector'],
                 id="key exists in both matchLabelKeys and labelSelector"),
    pytest.param([tsc(matchLabelKeys=["foo"])],
                 [f"{F0}.matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"],
                 id="key in MatchLabelKeys is forbidden to be specified when labelSelector is not set"),
    pytest.param([tsc(labelSelector={"matchLabels": {"NoUppercaseOrSpecialCharsLike=Equals": "foo"}})],
                 [f'{F0}.labelSelector.matchLabels: Invalid value: "NoUppercaseOrSpecialCharsLike=Equals": {QNAME}'],
                 id="invalid matchLabels set on labelSelector when AllowInvalidTopologySpreadConstraintLabelSelector "
                    "is false"),
    pytest.param([tsc(labelSelector={"matchLabels": {"foo": "foo"}})], [],
                 id="valid matchLabels set on labelSelector when AllowInvalidTopologySpreadConstraintLabelSelector "
                    "is false"),
]


@pytest.mark.parametrize(("constraints", "want"), TSC_CASES)
def test_validate_topology_spread_constraints(constraints: list[JsonDict], want: list[str]) -> None:
    assert texts(ps.validate_topology_spread(constraints, "field")) == want


# =================================================================================================
# TestValidateResourceRequirements, TestValidatePodResourceNames, TestValidateResourceNames
# =================================================================================================


@pytest.mark.parametrize(("requirements", "pod_level"), [
    pytest.param(res(limits={"cpu": "10", "hugepages-2Mi": "2Mi"}, requests={"cpu": "10", "hugepages-2Mi": "2Mi"}),
                 False, id="limits and requests of hugepage resource are equal"),
    pytest.param(res(limits={"memory": "2Mi"}, requests={"memory": "2Mi"}), False,
                 id="limits and requests of memory resource are equal"),
    pytest.param(res(limits={"cpu": "10"}, requests={"cpu": "10"}), False,
                 id="limits and requests of cpu resource are equal"),
    pytest.param(res(limits={"memory": "2Mi"}, requests={"memory": "2Mi"}), True,
                 id="pod-level limits and requests of memory resource are equal"),
    pytest.param(res(limits={"cpu": "10"}, requests={"cpu": "10"}), True,
                 id="pod-level limits and requests of cpu resource are equal"),
])
def test_validate_resource_requirements_success(requirements: JsonDict, pod_level: bool) -> None:
    assert ps.validate_resource_requirements(requirements, "resources", pod_level=pod_level) == []


@pytest.mark.parametrize(("requirements", "pod_level"), [
    pytest.param(res(limits={"hugepages-2Mi": "2Mi"}, requests={"hugepages-2Mi": "2Mi"}), False,
                 id="hugepage resource without cpu or memory"),
    pytest.param(res(limits={"hugepages-2Mi": "2Mi"}, requests={"hugepages-2Mi": "2Mi"}), True,
                 id="pod resource with hugepages"),
    pytest.param(res(limits={"ephemeral-storage": "2Mi"}, requests={"ephemeral-storage2Mi": "2Mi"}), True,
                 id="pod resource with ephemeral-storage"),
    pytest.param(res(limits={"kubernetesio/cpu": "2"}, requests={"kubernetesio/memory": "2"}), True,
                 id="pod resource with unsupported prefixed resources"),
    pytest.param(res(limits={"kubernetes.io/" + "a" * 63: "2"}, requests={"kubernetes.io/" + "a" * 63: "2"}), True,
                 id="pod resource with unsupported native resources"),
    pytest.param(res(limits={"kubernetes.io/": "2"}, requests={"kubernetes.io": "2"}), True,
                 id="pod resource with unsupported empty native resource name"),
])
def test_validate_resource_requirements_errors(requirements: JsonDict, pod_level: bool) -> None:
    assert ps.validate_resource_requirements(requirements, "resources", pod_level=pod_level)


def test_hugepages_require_cpu_or_memory_message() -> None:
    errs = ps.validate_resource_requirements(res(limits={"hugepages-2Mi": "2Mi"}, requests={"hugepages-2Mi": "2Mi"}),
                                             "resources")
    assert texts(errs) == ["resources: Forbidden: HugePages require cpu or memory"]


# upstream's resource name with nested slashes (its last segment "work"), built from pieces
NESTED_SLASHES = "/".join(("kubernetes.io", "will", "not", "work", ""))


@pytest.mark.parametrize(("name", "fails"), [
    ("memory", False), ("cpu", False), ("storage", True), ("requests.cpu", True), ("requests.memory", True),
    ("requests.storage", True), ("limits.cpu", True), ("limits.memory", True), ("limits.storage", True),
    ("network", True), ("disk", True), ("", True), (".", True), ("..", True), ("my.favorite.app.co/12345", True),
    ("my.favorite.app.co/_12345", True), ("my.favorite.app.co/12345_", True), ("kubernetes.io/..", True),
    ("kubernetes.io/" + "a" * 64, True), ("kubernetes.io/cpu", True), ("kubernetes.io/memory", True),
    ("kubernetes.io//", True), ("kubernetes.io", True), (NESTED_SLASHES, True),
])
def test_validate_pod_resource_names(name: str, fails: bool) -> None:
    assert bool(ps.validate_pod_resource_name(name, "field")) is fails


@pytest.mark.parametrize(("name", "ok"), [
    ("memory", True), ("cpu", True), ("storage", True), ("requests.cpu", True), ("requests.memory", True),
    ("requests.storage", True), ("limits.cpu", True), ("limits.memory", True), ("network", False), ("disk", False),
    ("", False), (".", False), ("..", False), ("my.favorite.app.co/12345", True), ("my.favorite.app.co/_12345", False),
    ("my.favorite.app.co/12345_", False), ("kubernetes.io/..", False), ("kubernetes.io/" + "a" * 63, True),
    ("kubernetes.io/" + "a" * 64, False), ("kubernetes.io//", False), ("kubernetes.io", False),
    (NESTED_SLASHES, False),
])
def test_validate_resource_names(name: str, ok: bool) -> None:
    assert (ps.validate_resource_name(name, "field") == []) is ok


# =================================================================================================
# HugePages (TestHugePagesIsolation: ValidatePodCreate)
# =================================================================================================


@pytest.mark.parametrize(("requests", "limits", "fails"), [
    pytest.param({"cpu": "10", "memory": "10G", "hugepages-2Mi": "1Gi"},
                 {"cpu": "10", "memory": "10G", "hugepages-2Mi": "1Gi"}, False, id="Valid: request hugepages-2Mi"),
    pytest.param({"cpu": "10", "memory": "10G", "hugepages-2Mi": "1Gi", "hugepages-1Gi": "2Gi"},
                 {"cpu": "10", "memory": "10G", "hugepages-2Mi": "1Gi", "hugepages-1Gi": "2Gi"}, False,
                 id="Valid: request more than one hugepages size"),
    pytest.param({"hugepages-2Mi": "1Gi"}, {"hugepages-2Mi": "1Gi"}, True, id="Invalid: not requesting cpu and memory"),
    pytest.param({"cpu": "10", "memory": "10G", "hugepages-2Mi": "1Gi"},
                 {"cpu": "10", "memory": "10G", "hugepages-2Mi": "2Gi"}, True,
                 id="Invalid: request 1Gi hugepages-2Mi but limit 2Gi"),
])
def test_hugepages_isolation(requests: JsonDict, limits: JsonDict, fails: bool) -> None:
    p = pod(containers=[ctr(resources=res(limits=limits, requests=requests))])
    assert bool(create_errors(p)) is fails


# =================================================================================================
# TestValidatePodCreateWithSchedulingGates, scheduling gate names
# =================================================================================================


def test_create_with_node_name_and_scheduling_gates() -> None:
    errs = create_errors(pod("pod", nodeName="node", schedulingGates=[{"name": "foo"}]))
    assert texts(errs) == ["spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"]


def test_create_with_scheduling_gates() -> None:
    assert create_errors(pod("pod", schedulingGates=[{"name": "foo"}])) == []


def test_scheduling_gate_names() -> None:
    """validateSchedulingGates: qualified names at the gate's index, each once."""
    errs = spec_errors(spec(schedulingGates=[{"name": "foo"}, {"name": "foo"}, {"name": "Bad Name"}]))
    assert texts(errs) == ['spec.schedulingGates[1]: Duplicate value: "foo"',
                           f'spec.schedulingGates[2]: Invalid value: "Bad Name": {QNAME}']


# =================================================================================================
# TestValidatePodUpdate
# =================================================================================================


def tol(key: str, value: str, op: str = "", effect: str = "", seconds: int | None = None) -> JsonDict:
    out: JsonDict = {"key": key, "value": value}
    if op:
        out["operator"] = op
    if effect:
        out["effect"] = effect
    if seconds is not None:
        out["tolerationSeconds"] = seconds
    return out


def limits_pod(limits: JsonDict | None = None, requests: JsonDict | None = None, **kw: Any) -> JsonDict:
    return pod("pod", containers=[ctr("container", resources=res(limits=limits, requests=requests))], **kw)


def na_required(*exprs: JsonDict, fields: list[JsonDict] | None = None, terms: list[JsonDict] | None = None) -> JsonDict:
    if terms is None:
        t: JsonDict = {}
        if exprs:
            t["matchExpressions"] = list(exprs)
        if fields is not None:
            t["matchFields"] = fields
        terms = [t]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def na_preferred(*exprs: JsonDict, fields: list[JsonDict] | None = None) -> JsonDict:
    pref: JsonDict = {"matchExpressions": list(exprs)}
    if fields is not None:
        pref["matchFields"] = fields
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": pref}]}}


GATE = [{"name": "baz"}]
EXPR = term("expr", "In", "foo")
EXPR2 = term("expr2", "In", "foo2")
NAME_FOO = term("metadata.name", "In", "foo")
NAME_BAR = term("metadata.name", "In", "bar")
FORBIDDEN = "Forbidden: pod updates may not change fields other than"
FORBIDDEN_IMAGE = "Forbidden: pod updates may not change fields other than `spec.containers[*].image"
SPEC_FORBIDDEN = "spec: Forbidden: pod updates may not change fields"
TERMS = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
TERM0 = TERMS + "[0]: Invalid value:"


def img(name: str, image: str) -> JsonDict:
    return ctr(name, image=image)


UPDATE_CASES = [
    pytest.param(pod(""), pod(""), "", id="nothing"),
    pytest.param(pod("foo", labels={"foo": "bar"}), pod("foo", labels={"bar": "foo"}), "", id="labels"),
    pytest.param(pod("foo", annotations={"foo": "bar"}), pod("foo", annotations={"bar": "foo"}), "", id="annotations"),
    pytest.param(pod("foo", containers=[img("foo", "foo:V2")]),
                 pod("foo", containers=[img("foo", "foo:V1"), img("bar", "bar:V1")]),
                 "may not add or remove containers", id="less containers"),
    pytest.param(pod("foo", containers=[img("foo", "foo:V2"), img("bar", "bar:V2")]),
                 pod("foo", containers=[img("foo", "foo:V1")]), "may not add or remove containers", id="more containers"),
    pytest.param(pod("foo", initContainers=[img("foo", "foo:V2")]),
                 pod("foo", initContainers=[img("foo", "foo:V1"), img("bar", "bar:V1")]),
                 "may not add or remove containers", id="more init containers"),
    pytest.param(pod("foo", containers=[img("container", "foo:V1")]), pod("foo", containers=[img("container", "foo:V2")]),
                 "", id="image change"),
    pytest.param(pod("foo", initContainers=[img("container", "foo:V1")]),
                 pod("foo", initContainers=[img("container", "foo:V2")]), "", id="init container image change"),
    pytest.param(pod("foo", containers=[img("container", "")]), pod("foo", containers=[img("container", "foo:V2")]),
                 "spec.containers[0].image", id="image change to empty"),
    pytest.param(pod("foo", initContainers=[img("container", "")]),
                 pod("foo", initContainers=[img("container", "foo:V2")]),
                 "spec.initContainers[0].image", id="init container image change to empty"),
    pytest.param(pod("foo", ephemeralContainers=[{"name": "ephemeral", "image": "busybox"}]), pod("foo"),
                 FORBIDDEN, id="ephemeralContainer changes are not allowed via normal pod update"),
    pytest.param(pod(""), pod(""), "", id="activeDeadlineSeconds no change, nil"),
    pytest.param(pod("", activeDeadlineSeconds=30), pod("", activeDeadlineSeconds=30), "",
                 id="activeDeadlineSeconds no change, set"),
    pytest.param(pod("", activeDeadlineSeconds=30), pod(""), "", id="activeDeadlineSeconds change to positive from nil"),
    pytest.param(pod("", activeDeadlineSeconds=30), pod("", activeDeadlineSeconds=31), "",
                 id="activeDeadlineSeconds change to smaller positive"),
    pytest.param(pod("", activeDeadlineSeconds=31), pod("", activeDeadlineSeconds=30), "spec.activeDeadlineSeconds",
                 id="activeDeadlineSeconds change to larger positive"),
    pytest.param(pod("", activeDeadlineSeconds=-30), pod(""), "spec.activeDeadlineSeconds",
                 id="activeDeadlineSeconds change to negative from nil"),
    pytest.param(pod("", activeDeadlineSeconds=-30), pod("", activeDeadlineSeconds=30), "spec.activeDeadlineSeconds",
                 id="activeDeadlineSeconds change to negative from positive"),
    pytest.param(pod("", activeDeadlineSeconds=0), pod("", activeDeadlineSeconds=30), "spec.activeDeadlineSeconds",
                 id="activeDeadlineSeconds change to zero from positive"),
    pytest.param(pod("", activeDeadlineSeconds=0), pod(""), "spec.activeDeadlineSeconds",
                 id="activeDeadlineSeconds change to zero from nil"),
    pytest.param(pod(""), pod("", activeDeadlineSeconds=30), "spec.activeDeadlineSeconds",
                 id="activeDeadlineSeconds change to nil from positive"),
    pytest.param(limits_pod(get_resources("200m", "0", "1Gi")), limits_pod(get_resources("100m", "0", "1Gi")),
                 SPEC_FORBIDDEN, id="cpu limit change"),
    pytest.param(limits_pod(get_resources("100m", "100Mi")), limits_pod(get_resources("100m", "200Mi")),
                 SPEC_FORBIDDEN, id="memory limit change"),
    pytest.param(limits_pod(get_resources("100m", "100Mi", "1Gi")), limits_pod(get_resources("100m", "100Mi", "2Gi")),
                 FORBIDDEN, id="storage limit change"),
    pytest.param(limits_pod(requests=get_resources("100m", "0")), limits_pod(requests=get_resources("200m", "0")),
                 SPEC_FORBIDDEN, id="cpu request change"),
    pytest.param(limits_pod(requests=get_resources("0", "200Mi")), limits_pod(requests=get_resources("0", "100Mi")),
                 SPEC_FORBIDDEN, id="memory request change"),
    pytest.param(limits_pod(requests=get_resources("100m", "0", "2Gi")), limits_pod(requests=get_resources("100m", "0", "1Gi")),
                 FORBIDDEN, id="storage request change"),
    pytest.param(limits_pod(get_resources("200m", "400Mi", "1Gi"), get_resources("200m", "400Mi", "1Gi")),
                 limits_pod(get_resources("100m", "100Mi", "1Gi"), get_resources("100m", "100Mi", "1Gi")),
                 SPEC_FORBIDDEN, id="Pod QoS unchanged, guaranteed -> guaranteed"),
    pytest.param(limits_pod(get_resources("200m", "200Mi", "2Gi"), get_resources("100m", "100Mi", "1Gi")),
                 limits_pod(get_resources("400m", "400Mi", "2Gi"), get_resources("200m", "200Mi", "1Gi")),
                 SPEC_FORBIDDEN, id="Pod QoS unchanged, burstable -> burstable"),
    pytest.param(limits_pod(get_resources("200m", "200Mi"), get_resources("100m", "100Mi")),
                 limits_pod(requests=get_resources("100m", "100Mi")),
                 SPEC_FORBIDDEN, id="Pod QoS unchanged, burstable -> burstable, add limits"),
    pytest.param(limits_pod(requests=get_resources("100m", "100Mi")),
                 limits_pod(get_resources("200m", "200Mi"), get_resources("100m", "100Mi")),
                 SPEC_FORBIDDEN, id="Pod QoS unchanged, burstable -> burstable, remove limits"),
    pytest.param(limits_pod(get_resources("400m", "", "1Gi"), get_resources("300m", "", "1Gi")),
                 limits_pod(get_resources("200m", "500Mi", "1Gi")),
                 SPEC_FORBIDDEN, id="Pod QoS unchanged, burstable -> burstable, add requests"),
    pytest.param(limits_pod(get_resources("400m", "500Mi", "2Gi")),
                 limits_pod(get_resources("200m", "300Mi", "2Gi"), get_resources("100m", "200Mi")),
                 SPEC_FORBIDDEN, id="Pod QoS unchanged, burstable -> burstable, remove requests"),
    pytest.param(limits_pod(get_resources("200m", "200Mi"), get_resources("100m", "100Mi")),
                 limits_pod(get_resources("100m", "100Mi"), get_resources("100m", "100Mi")),
                 SPEC_FORBIDDEN, id="Pod QoS change, guaranteed -> burstable"),
    pytest.param(limits_pod(get_resources("100m", "100Mi"), get_resources("100m", "100Mi")),
                 limits_pod(requests=get_resources("100m", "100Mi")),
                 SPEC_FORBIDDEN, id="Pod QoS change, burstable -> guaranteed"),
    pytest.param(limits_pod(get_resources("200m", "200Mi"), get_resources("100m", "100Mi")), pod("pod"),
                 SPEC_FORBIDDEN, id="Pod QoS change, besteffort -> burstable"),
    pytest.param(pod("pod"), limits_pod(get_resources("200m", "200Mi"), get_resources("100m", "100Mi")),
                 SPEC_FORBIDDEN, id="Pod QoS change, burstable -> besteffort"),
    pytest.param(pod("pod", securityContext={"fsGroupChangePolicy": "OnRootMismatch"}), pod("pod", securityContext={}),
                 SPEC_FORBIDDEN, id="fsGroupChangePolicy change"),
    pytest.param(pod("pod", containers=[ctr("container", ports=[{"hostPort": 8080, "containerPort": 80}])]),
                 pod("pod", containers=[ctr("container", ports=[{"hostPort": 8000, "containerPort": 80}])]),
                 SPEC_FORBIDDEN, id="port change"),
    pytest.param(pod("foo", labels={"foo": "bar"}), pod("foo", labels={"bar": "foo"}), "", id="bad label change"),
    pytest.param(pod("foo", nodeName="node1", tolerations=[tol("key1", "value2")]),
                 pod("foo", nodeName="node1", tolerations=[tol("key1", "value1")]), "spec.tolerations: Forbidden",
                 id="existing toleration value modified in pod spec updates"),
    pytest.param(pod("foo", nodeName="node1", tolerations=[tol("key1", "value2", "Equal", "NoExecute")]),
                 pod("foo", nodeName="node1", tolerations=[tol("key1", "value1", "Equal", "NoExecute", 10)]),
                 "spec.tolerations: Forbidden",
                 id="existing toleration value modified in pod spec updates with modified tolerationSeconds"),
    pytest.param(pod("foo", nodeName="node1", tolerations=[tol("key1", "value1", "Equal", "NoExecute", 10)]),
                 pod("foo", nodeName="node1", tolerations=[tol("key1", "value1", "Equal", "NoExecute", 20)]), "",
                 id="modified tolerationSeconds in existing toleration value in pod spec updates"),
    pytest.param(pod("foo", tolerations=[tol("key1", "value2")]), pod("foo", tolerations=[tol("key1", "value1")]),
                 "spec.tolerations: Forbidden", id="toleration modified in updates to an unscheduled pod"),
    pytest.param(pod("foo", nodeName="node1", tolerations=[tol("key1", "value1")]),
                 pod("foo", nodeName="node1", tolerations=[tol("key1", "value1")]), "",
                 id="tolerations unmodified in updates to a scheduled pod"),
    pytest.param(pod("foo", nodeName="node1", tolerations=[tol("key1", "value1", "Equal", "NoExecute", 20),
                                                           tol("key2", "value2", "Equal", "NoExecute", 30)]),
                 pod("foo", nodeName="node1", tolerations=[tol("key1", "value1", "Equal", "NoExecute", 10)]), "",
                 id="added valid new toleration to existing tolerations in pod spec updates"),
    pytest.param(pod("foo", nodeName="node1", tolerations=[tol("key1", "value1", "Equal", "NoExecute", 20),
                                                           tol("key2", "value2", "Equal", "NoSchedule", 30)]),
                 pod("foo", nodeName="node1", tolerations=[tol("key1", "value1", "Equal", "NoExecute", 10)]),
                 "spec.tolerations[1].effect", id="added invalid new toleration to existing tolerations in pod spec updates"),
    pytest.param(pod("foo", nodeName="foo"), pod("foo"), SPEC_FORBIDDEN, id="removed nodeName from pod spec"),
    pytest.param(pod("foo", nodeName="foo", annotations={"kubernetes.io/config.mirror": ""}), pod("foo", nodeName="foo"),
                 "metadata.annotations[kubernetes.io/config.mirror]", id="added mirror pod annotation"),
    pytest.param(pod("foo", nodeName="foo"), pod("foo", nodeName="foo", annotations={"kubernetes.io/config.mirror": ""}),
                 "metadata.annotations[kubernetes.io/config.mirror]", id="removed mirror pod annotation"),
    pytest.param(pod("foo", nodeName="foo", annotations={"kubernetes.io/config.mirror": "foo"}),
                 pod("foo", nodeName="foo", annotations={"kubernetes.io/config.mirror": "bar"}),
                 "metadata.annotations[kubernetes.io/config.mirror]", id="changed mirror pod annotation"),
    pytest.param(pod("foo", nodeName="node1", priorityClassName="bar-priority"),
                 pod("foo", nodeName="node1", priorityClassName="foo-priority"), "spec: Forbidden: pod updates",
                 id="changed priority class name"),
    pytest.param(pod("foo", nodeName="node1", priorityClassName=""),
                 pod("foo", nodeName="node1", priorityClassName="foo-priority"), "spec: Forbidden: pod updates",
                 id="removed priority class name"),
    pytest.param(pod("foo", terminationGracePeriodSeconds=1), pod("foo", terminationGracePeriodSeconds=-1), "",
                 id="update termination grace period seconds"),
    pytest.param(pod("foo", terminationGracePeriodSeconds=0), pod("foo", terminationGracePeriodSeconds=-1),
                 "spec: Forbidden: pod updates", id="update termination grace period seconds not 1"),
    pytest.param(pod("foo", os={"name": "windows"}, securityContext={"seLinuxOptions": {"role": "dummy"}}),
                 pod("foo", os={"name": "linux"}, securityContext={"seLinuxOptions": {"role": "dummy"}}),
                 FORBIDDEN_IMAGE, id="pod OS changing from Linux to Windows, IdentifyPodOS featuregate set"),
    pytest.param(pod("foo", os={"name": "windows"}, securityContext={"seLinuxOptions": {"role": "dummy"}}),
                 pod("foo", os={"name": "linux"}, securityContext={"seLinuxOptions": {"role": "dummy"}}),
                 "spec.securityContext.seLinuxOptions: Forbidden",
                 id="pod OS changing from Linux to Windows, IdentifyPodOS featuregate set, we'd get SELinux errors as well"),
    pytest.param(pod("foo", os={"name": "dummy"}), pod("foo"), FORBIDDEN_IMAGE,
                 id="invalid PodOS update, IdentifyPodOS featuregate set"),
    pytest.param(pod("foo", os={"name": "linux"}), pod("foo", os={"name": "windows"}), FORBIDDEN,
                 id="update pod spec OS to a valid value, featuregate disabled"),
    pytest.param(pod("foo", schedulingGates=[{"name": "foo"}]), pod("foo"),
                 "Forbidden: only deletion is allowed, but found new scheduling gate 'foo'",
                 id="update pod spec schedulingGates: add new scheduling gate"),
    pytest.param(pod("foo", schedulingGates=[{"name": "bar"}]), pod("foo", schedulingGates=[{"name": "foo"}]),
                 "Forbidden: only deletion is allowed, but found new scheduling gate 'bar'",
                 id="update pod spec schedulingGates: mutating an existing scheduling gate"),
    pytest.param(pod("foo", schedulingGates=[{"name": "baz"}]),
                 pod("foo", schedulingGates=[{"name": "foo"}, {"name": "bar"}]),
                 "Forbidden: only deletion is allowed, but found new scheduling gate 'baz'",
                 id="update pod spec schedulingGates: mutating an existing scheduling gate along with deletion"),
    pytest.param(pod("foo"), pod("foo", schedulingGates=[{"name": "foo"}]), "",
                 id="update pod spec schedulingGates: legal deletion"),
    pytest.param(pod("foo", nodeSelector={"foo": "bar"}, schedulingGates=GATE), pod("foo", schedulingGates=GATE), "",
                 id="adding node selector is allowed for gated pods"),
    pytest.param(pod("foo", nodeSelector={"foo": "bar", "foo2": "bar2"}), pod("foo", nodeSelector={"foo": "bar"}),
                 FORBIDDEN_IMAGE, id="adding node selector is not allowed for non-gated pods"),
    pytest.param(pod("foo", schedulingGates=GATE), pod("foo", nodeSelector={"foo": "bar"}, schedulingGates=GATE),
                 "spec.nodeSelector: Invalid value:", id="removing node selector is not allowed for gated pods"),
    pytest.param(pod("foo"), pod("foo", nodeSelector={"foo": "bar"}), FORBIDDEN_IMAGE,
                 id="removing node selector is not allowed for non-gated pods"),
    pytest.param(pod("foo", nodeSelector={"foo": "bar", "foo2": "bar2"}),
                 pod("foo", nodeSelector={"foo": "bar"}, schedulingGates=GATE), "",
                 id="old pod spec has scheduling gate, new pod spec does not, and node selector is added"),
    pytest.param(pod("foo", nodeSelector={"foo": "new value"}, schedulingGates=GATE),
                 pod("foo", nodeSelector={"foo": "bar"}, schedulingGates=GATE), "spec.nodeSelector: Invalid value:",
                 id="modifying value of existing node selector is not allowed"),
    pytest.param(pod("foo", affinity=na_required(EXPR, EXPR2, fields=[NAME_FOO]), schedulingGates=GATE),
                 pod("foo", affinity=na_required(EXPR), schedulingGates=GATE), "",
                 id="addition to nodeAffinity is allowed for gated pods"),
    pytest.param(pod("foo", affinity={"nodeAffinity": {}}, schedulingGates=GATE),
                 pod("foo", affinity=na_required(EXPR), schedulingGates=GATE), TERMS + ": Invalid value:",
                 id="old RequiredDuringSchedulingIgnoredDuringExecution is non-nil, new "
                    "RequiredDuringSchedulingIgnoredDuringExecution is nil, pod is gated"),
    pytest.param(pod("foo", affinity=na_required(EXPR, EXPR2, fields=[NAME_FOO])), pod("foo", affinity=na_required(EXPR)),
                 FORBIDDEN_IMAGE, id="addition to nodeAffinity is not allowed for non-gated pods"),
    pytest.param(pod("foo", affinity=na_required(EXPR, EXPR2, fields=[NAME_FOO])),
                 pod("foo", affinity=na_required(EXPR), schedulingGates=GATE), "",
                 id="old pod spec has scheduling gate, new pod spec does not, and node affinity addition occurs"),
    pytest.param(pod("foo", affinity=na_required(fields=[NAME_FOO]), schedulingGates=GATE),
                 pod("foo", affinity=na_required(EXPR), schedulingGates=GATE), TERM0,
                 id="nodeAffinity deletion from MatchExpressions not allowed"),
    pytest.param(pod("foo", affinity=na_required(EXPR), schedulingGates=GATE),
                 pod("foo", affinity=na_required(EXPR, fields=[NAME_FOO]), schedulingGates=GATE), TERM0,
                 id="nodeAffinity deletion from MatchFields not allowed"),
    pytest.param(pod("foo", affinity=na_required(term("expr", "In", "bar"), fields=[NAME_FOO]), schedulingGates=GATE),
                 pod("foo", affinity=na_required(EXPR, fields=[NAME_FOO]), schedulingGates=GATE), TERM0,
                 id="nodeAffinity modification of item in MatchExpressions not allowed"),
    pytest.param(pod("foo", affinity=na_required(EXPR, fields=[NAME_BAR]), schedulingGates=GATE),
                 pod("foo", affinity=na_required(EXPR, fields=[NAME_FOO]), schedulingGates=GATE), TERM0,
                 id="nodeAffinity modification of item in MatchFields not allowed"),
    pytest.param(pod("foo", affinity=na_required(terms=[
        {"matchExpressions": [EXPR], "matchFields": [NAME_BAR]},
        {"matchExpressions": [term("expr", "In", "foo2")], "matchFields": [term("metadata.name", "In", "bar2")]}]),
                     schedulingGates=GATE),
                 pod("foo", affinity=na_required(EXPR, fields=[NAME_FOO]), schedulingGates=GATE),
                 TERMS + ": Invalid value:", id="nodeSelectorTerms addition on gated pod should fail"),
    pytest.param(pod("foo", affinity=na_preferred(term("expr", "In", "foo2")), schedulingGates=GATE),
                 pod("foo", affinity=na_preferred(EXPR), schedulingGates=GATE), "",
                 id="preferredDuringSchedulingIgnoredDuringExecution can modified for gated pods"),
    pytest.param(pod("foo", affinity=na_preferred(EXPR, EXPR2, fields=[NAME_BAR]), schedulingGates=GATE),
                 pod("foo", affinity=na_preferred(EXPR), schedulingGates=GATE), "",
                 id="preferredDuringSchedulingIgnoredDuringExecution can have additions for gated pods"),
    pytest.param(pod("foo", schedulingGates=GATE), pod("foo", affinity=na_preferred(EXPR), schedulingGates=GATE), "",
                 id="preferredDuringSchedulingIgnoredDuringExecution can have removals for gated pods"),
    pytest.param(pod("foo", affinity={}, schedulingGates=GATE),
                 pod("foo", affinity=na_required(EXPR), schedulingGates=GATE), TERMS + ": Invalid value:",
                 id="new node affinity is nil"),
    pytest.param(pod("foo", affinity=na_required(EXPR), schedulingGates=GATE),
                 pod("foo", affinity=na_required(terms=[{}]), schedulingGates=GATE), TERM0,
                 id="empty NodeSelectorTerm (selects nothing) cannot become populated (selects something)"),
    pytest.param(pod("foo", affinity=na_required(EXPR), schedulingGates=GATE), pod("foo", schedulingGates=GATE), "",
                 id="nil affinity can be mutated for gated pods"),
    pytest.param(pod("foo", affinity={**na_required(EXPR), "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "foo", "labelSelector": {"matchLabels": {"foo": "bar"}}}]}}, schedulingGates=GATE),
                 pod("foo", schedulingGates=GATE), "pod updates may not change fields other than",
                 id="the podAffinity cannot be updated on gated pods"),
    pytest.param(pod("foo", affinity={**na_required(EXPR), "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "foo", "labelSelector": {"matchLabels": {"foo": "bar"}}}]}}, schedulingGates=GATE),
                 pod("foo", schedulingGates=GATE), "pod updates may not change fields other than",
                 id="the podAntiAffinity cannot be updated on gated pods"),
    pytest.param(pod("foo", affinity=na_required(term("expr", "In", "-1"))),
                 pod("foo", affinity=na_required(term("expr", "In", "-1")), schedulingGates=GATE), "",
                 id="allow update pod if old pod already has invalid label-value in node affinity"),
    pytest.param(pod("foo", affinity=na_required(term("expr", "In", "-1")), schedulingGates=GATE),
                 pod("foo", affinity=na_required(term("expr", "In", "bar")), schedulingGates=GATE),
                 "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'",
                 id="not allow update node affinity to an invalid label-value"),
    pytest.param(limits_pod(get_resources("200m", "0", "1Gi"), resources=res(limits=get_resources("100m", "200Mi"))),
                 limits_pod(get_resources("100m", "0", "1Gi")), "pod updates may not change fields other than",
                 id="cpu limit change with pod-level resources"),
    pytest.param(limits_pod(get_resources("100m", "100Mi")),
                 limits_pod(get_resources("100m", "200Mi"), resources=res(limits=get_resources("100m", "200Mi"))),
                 "pod updates may not change fields other than", id="memory limit change with pod-level resources"),
]


@pytest.mark.parametrize(("new", "old", "err"), UPDATE_CASES)
def test_validate_pod_update(new: JsonDict, old: JsonDict, err: str) -> None:
    if not new["metadata"]["name"] and not old["metadata"]["name"]:
        new["metadata"]["name"] = old["metadata"]["name"] = "name"
    errs = S.validate_update(copy.deepcopy(new), copy.deepcopy(old))
    if not err:
        assert texts(errs) == []
    else:
        assert err in aggregate(errs)


def test_spec_change_message_is_upstreams() -> None:
    errs = S.validate_update(pod("foo", nodeName="foo"), pod("foo"))
    assert texts(errs) == [f"spec: Forbidden: {POD_UPDATE_FORBIDDEN}"]
    assert POD_UPDATE_FORBIDDEN == (
        "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
        "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")


def test_scheduling_gate_addition_path() -> None:
    errs = S.validate_update(pod("foo", schedulingGates=[{"name": "foo"}]), pod("foo"))
    assert texts(errs) == ["spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new "
                           "scheduling gate 'foo'"]


# =================================================================================================
# TestValidatePodStatusUpdate
# =================================================================================================


def cstatus(name: str, image: str, state: JsonDict, **kw: Any) -> JsonDict:
    return {"containerID": "docker://numbers", "image": image, "name": name, "state": state, **kw}


WAITING = {"waiting": {"reason": "PodInitializing"}}
RUNNING = {"running": {"startedAt": "2024-01-01T00:00:00Z"}}
COMPLETED = {"terminated": {"containerID": "docker://numbers", "reason": "Completed"}}
IMAGE_ID = "docker-pullable://nginx@sha256:d0gf00d"
NGINX_RUNNING = cstatus("nginx", "nginx:alpine", RUNNING, imageID=IMAGE_ID, ready=True, started=True)
DEBUG_WAITING = cstatus("debug", "busybox", WAITING, ready=False)
DEBUG_RUNNING = cstatus("debug", "busybox", RUNNING, imageID="docker-pullable://busybox@sha256:d0gf00d", ready=False)
DEBUG_DONE = cstatus("debug", "busybox", COMPLETED, imageID="docker-pullable://busybox@sha256:d0gf00d", ready=False)
INIT_DONE = cstatus("init", "alpine", COMPLETED, imageID=IMAGE_ID, ready=True)
INIT_RUNNING = cstatus("init", "alpine", RUNNING, imageID=IMAGE_ID, ready=True)
SIDECAR = [ctr("restartable-init", restartPolicy="Always")]
SIDECAR_RUNNING = cstatus("restartable-init", "alpine", RUNNING, imageID=IMAGE_ID, ready=True)
SIDECAR_DONE = cstatus("restartable-init", "alpine", COMPLETED, imageID=IMAGE_ID, ready=False)

STATUS_CASES = [
    pytest.param(pod("foo", nodeName="node1", status={"nominatedNodeName": "node1"}), pod("foo", nodeName="node1",
                                                                                         status={}),
                 "", id="removed nominatedNodeName"),
    pytest.param(pod("foo", nodeName="node1"), pod("foo", nodeName="node1", status={"nominatedNodeName": "node1"}), "",
                 id="add valid nominatedNodeName"),
    pytest.param(pod("foo", nodeName="node1", status={"nominatedNodeName": "Node1"}), pod("foo", nodeName="node1"),
                 "nominatedNodeName", id="Add invalid nominatedNodeName"),
    pytest.param(pod("foo", nodeName="node1", status={"nominatedNodeName": "node1"}),
                 pod("foo", nodeName="node1", status={"nominatedNodeName": "node2"}), "", id="Update nominatedNodeName"),
    pytest.param(pod("foo", status={
        "initContainerStatuses": [cstatus("init", "alpine", WAITING, ready=False, started=False)],
        "containerStatuses": [cstatus("main", "nginx:alpine", WAITING, ready=False, started=False)]}), pod("foo"), "",
                 id="Container statuses pending"),
    pytest.param(pod("foo", status={"initContainerStatuses": [INIT_DONE], "containerStatuses": [NGINX_RUNNING]}),
                 pod("foo", status={"initContainerStatuses": [cstatus("init", "alpine", WAITING, ready=False)],
                                    "containerStatuses": [cstatus("main", "nginx:alpine", WAITING, ready=False,
                                                                  started=False)]}), "",
                 id="Container statuses running"),
    pytest.param(pod("foo", status={"containerStatuses": [NGINX_RUNNING], "ephemeralContainerStatuses": [DEBUG_WAITING]}),
                 pod("foo", status={"containerStatuses": [NGINX_RUNNING]}), "",
                 id="Container statuses add ephemeral container"),
    pytest.param(pod("foo", status={"containerStatuses": [NGINX_RUNNING], "ephemeralContainerStatuses": [DEBUG_RUNNING]}),
                 pod("foo", status={"containerStatuses": [NGINX_RUNNING], "ephemeralContainerStatuses": [DEBUG_WAITING]}),
                 "", id="Container statuses ephemeral container running"),
    pytest.param(pod("foo", status={"containerStatuses": [NGINX_RUNNING], "ephemeralContainerStatuses": [DEBUG_DONE]}),
                 pod("foo", status={"containerStatuses": [NGINX_RUNNING], "ephemeralContainerStatuses": [DEBUG_RUNNING]}),
                 "", id="Container statuses ephemeral container exited"),
    pytest.param(pod("foo", status={"initContainerStatuses": [INIT_DONE],
                                    "containerStatuses": [cstatus("nginx", "nginx:alpine", COMPLETED, imageID=IMAGE_ID,
                                                                  ready=True, started=True)],
                                    "ephemeralContainerStatuses": [DEBUG_DONE]}),
                 pod("foo", status={"initContainerStatuses": [INIT_DONE], "containerStatuses": [NGINX_RUNNING],
                                    "ephemeralContainerStatuses": [DEBUG_RUNNING]}), "",
                 id="Container statuses all containers terminated"),
    pytest.param(pod("foo", status={"resourceClaimStatuses": [{"name": "no-such-claim", "resourceClaimName": "my-claim"}]}),
                 pod("foo"), 'status.resourceClaimStatuses[0].name: Invalid value: "no-such-claim": must match the name '
                             "of an entry in `spec.resourceClaims`", id="Non-existent PodResourceClaim"),
    pytest.param(pod("foo", resourceClaims=[{"name": "my-claim"}], status={"resourceClaimStatuses": [
        {"name": "my-claim", "resourceClaimName": "%$!#"}]}), pod("foo", resourceClaims=[{"name": "my-claim"}]),
                 'status.resourceClaimStatuses[0].name: Invalid value: "%$!#": a lowercase RFC 1123 subdomain must '
                 "consist of", id="Invalid ResourceClaim name"),
    pytest.param(pod("foo", resourceClaims=[{"name": "my-claim"}, {"name": "my-other-claim"}], status={
        "resourceClaimStatuses": [{"name": "my-claim", "resourceClaimName": "foo-my-claim-12345"},
                                  {"name": "my-other-claim"}, {"name": "my-other-claim"}]}),
                 pod("foo", resourceClaims=[{"name": "my-claim"}]),
                 'status.resourceClaimStatuses[2].name: Duplicate value: "my-other-claim"',
                 id="Duplicate ResourceClaimStatuses.Name"),
    pytest.param(pod("foo", resourceClaims=[{"name": "my-claim"}, {"name": "my-other-claim"}], status={
        "resourceClaimStatuses": [{"name": "my-claim", "resourceClaimName": "foo-my-claim-12345"},
                                  {"name": "my-other-claim"}]}),
                 pod("foo", resourceClaims=[{"name": "my-claim"}]), "", id="ResourceClaimStatuses okay"),
    pytest.param(pod("foo", initContainers=[ctr("init")], status={"initContainerStatuses": [INIT_RUNNING],
                                                                  "containerStatuses": [NGINX_RUNNING]}),
                 pod("foo", initContainers=[ctr("init")], restartPolicy="Never", status={
                     "initContainerStatuses": [cstatus("init", "alpine", COMPLETED, imageID=IMAGE_ID, ready=False)],
                     "containerStatuses": [NGINX_RUNNING]}),
                 "status.initContainerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state",
                 id="init container cannot restart if RestartPolicyNever"),
    *(pytest.param(pod("foo", initContainers=SIDECAR, restartPolicy=policy, status={
        "initContainerStatuses": [SIDECAR_RUNNING], "containerStatuses": [NGINX_RUNNING]}),
        pod("foo", initContainers=SIDECAR, restartPolicy=policy, status={
            "initContainerStatuses": [SIDECAR_DONE], "containerStatuses": [NGINX_RUNNING]}), "",
        id=f"restartable init container can restart if RestartPolicy{policy}")
      for policy in ("Never", "OnFailure", "Always")),
    pytest.param(pod("foo", status={"qosClass": "Burstable"}), pod("foo", status={"qosClass": "Guaranteed"}),
                 'tatus.qosClass: Invalid value: "Burstable": field is immutable', id="qosClass can not be changed"),
    pytest.param(pod("foo", status={"qosClass": "Burstable"}), pod("foo", status={"qosClass": "Burstable"}), "",
                 id="qosClass no change"),
]


@pytest.mark.parametrize(("new", "old", "err"), STATUS_CASES)
def test_validate_pod_status_update(new: JsonDict, old: JsonDict, err: str) -> None:
    errs = S.validate_status_update(copy.deepcopy(new), copy.deepcopy(old))
    if not err:
        assert texts(errs) == []
    else:
        assert err in aggregate(errs)


# =================================================================================================
# Through the in-process API (what kubectl users read)
# =================================================================================================


async def test_api_reports_upstreams_message(core: Any) -> None:
    from minik3s.api import errors
    from minik3s.api.options import WriteOptions

    pods = core.registry.get("", "v1", "pods")
    bad = {"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c"}]}}
    with pytest.raises(errors.InvalidError) as e:
        await core.create(pods, "default", bad, WriteOptions())
    assert str(e.value) == 'Pod "x" is invalid: spec.containers[0].image: Required value'


async def test_api_defaults_hook_http_get_before_validating(core: Any) -> None:
    """SetDefaults_HTTPGetAction holds for lifecycle hooks as for probes: path "/" and scheme HTTP."""
    from minik3s.api.options import WriteOptions

    pods = core.registry.get("", "v1", "pods")
    p = {"metadata": {"name": "hooks"}, "spec": {"containers": [{
        "name": "c", "image": "i", "lifecycle": {"preStop": {"httpGet": {"port": 80}}},
        "readinessProbe": {"httpGet": {"port": "http"}}, "ports": [{"name": "http", "containerPort": 80}]}]}}
    got = await core.create(pods, "default", p, WriteOptions())
    assert got["spec"]["containers"][0]["lifecycle"]["preStop"]["httpGet"] == {"port": 80, "path": "/", "scheme": "HTTP"}


@pytest.mark.parametrize(("volume", "want"), [
    pytest.param({"name": "v", "hostPath": {"path": "/p"}, "emptyDir": {}},
                 "spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type",
                 id="emptyDir-first-hostPath-forbidden"),
    pytest.param({"name": "v", "persistentVolumeClaim": {"claimName": "c"}, "downwardAPI": {}},
                 "spec.volumes[0].downwarAPI: Forbidden: may not specify more than 1 volume type",
                 id="upstreams-downwarAPI-spelling"),
    pytest.param({"name": "v", "configMap": {"name": "c"}, "downwardAPI": {}},
                 "spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type",
                 id="order-is-upstreams-not-the-bodys"),
])
async def test_api_one_source_per_volume(core: Any, volume: JsonDict, want: str) -> None:
    """validateVolumeSource: the first source in upstream's order is the volume's, every later
    one is Forbidden at its own path (a volume with no source is defaulted to emptyDir first)."""
    from minik3s.api import errors
    from minik3s.api.options import WriteOptions

    pods = core.registry.get("", "v1", "pods")
    p = {"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": [volume]}}
    with pytest.raises(errors.InvalidError) as e:
        await core.create(pods, "default", p, WriteOptions())
    assert want in str(e.value)
