"""What a container sees (`container_view`): the kubelet's environment (upstream's
TestMakeEnvironmentVariables and TestFromServices tables), the managed /etc/hosts
(TestManagedHostsFileContent), the pod's DNS (TestGetPodDNSCustom), volume files (configMap,
secret, downwardAPI, projected, subPath) and the kubelet's error texts."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from minik3s.api.helpers.container_view import (
    ContainerViewError,
    container_view,
    expand,
    from_services,
    make_environment_variables,
    managed_hosts_file_content,
    mapping_func_for,
    pod_dns_config,
    resolv_conf_content,
)
from minik3s.api.types import JsonDict

K8S_ENV = [("KUBERNETES_SERVICE_HOST", "1.2.3.1"), ("KUBERNETES_SERVICE_PORT", "8081"),
           ("KUBERNETES_PORT", "tcp://1.2.3.1:8081"), ("KUBERNETES_PORT_8081_TCP", "tcp://1.2.3.1:8081"),
           ("KUBERNETES_PORT_8081_TCP_PROTO", "tcp"), ("KUBERNETES_PORT_8081_TCP_PORT", "8081"),
           ("KUBERNETES_PORT_8081_TCP_ADDR", "1.2.3.1")]


def _svc_env(prefix: str, ip: str, port: int) -> list[tuple[str, str]]:
    url = f"tcp://{ip}:{port}"
    return [(f"{prefix}_SERVICE_HOST", ip), (f"{prefix}_SERVICE_PORT", str(port)), (f"{prefix}_PORT", url),
            (f"{prefix}_PORT_{port}_TCP", url), (f"{prefix}_PORT_{port}_TCP_PROTO", "tcp"),
            (f"{prefix}_PORT_{port}_TCP_PORT", str(port)), (f"{prefix}_PORT_{port}_TCP_ADDR", ip)]


def _service(name: str, ns: str, ip: str, port: int, protocol: str = "TCP") -> JsonDict:
    return {"metadata": {"name": name, "namespace": ns},
            "spec": {"clusterIP": ip, "ports": [{"protocol": protocol, "port": port}]}}


# upstream's buildService list in TestMakeEnvironmentVariables
UPSTREAM_SERVICES = [
    _service("kubernetes", "default", "1.2.3.1", 8081), _service("test", "test1", "1.2.3.3", 8083),
    _service("kubernetes", "test2", "1.2.3.4", 8084), _service("test", "test2", "1.2.3.5", 8085),
    _service("test", "test2", "None", 8085), _service("test", "test2", "", 8085),
    _service("not-special", "default", "1.2.3.8", 8088), _service("not-special", "default", "None", 8088),
    _service("not-special", "default", "", 8088),
]


class FakeLookup:
    """ConfigMaps/Secrets by (resource, namespace, name) and a flat Service list."""

    def __init__(self, objects: dict[tuple[str, str, str], JsonDict] | None = None,
                 services: list[JsonDict] | None = None) -> None:
        self.objects = objects or {}
        self.all_services = services or []

    def get(self, resource: str, namespace: str, name: str) -> JsonDict | None:
        return self.objects.get((resource, namespace, name))

    def services(self, namespace: str) -> list[JsonDict]:
        return [s for s in self.all_services if s["metadata"]["namespace"] == namespace]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _pod(ns: str = "test1", *, container: JsonDict | None = None, links: bool | None = False,
         **spec: Any) -> JsonDict:
    c = {"name": "c", "image": "busybox", **(container or {})}
    body: JsonDict = {"containers": [c], "nodeName": "node-name", "serviceAccountName": "special", **spec}
    if links is not None:
        body["enableServiceLinks"] = links
    return {"metadata": {"name": "dapi-test-pod-name", "namespace": ns, "uid": "uid-1",
                         "labels": {"app": "web"}},
            "spec": body, "status": {"podIP": "1.2.3.4", "podIPs": [{"ip": "1.2.3.4"}],
                                     "hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}]}}


def _cm(ns: str, name: str, data: dict[str, str]) -> dict[tuple[str, str, str], JsonDict]:
    return {("configmaps", ns, name): {"metadata": {"name": name, "namespace": ns}, "data": data}}


def _secret(ns: str, name: str, data: dict[str, str]) -> dict[tuple[str, str, str], JsonDict]:
    return {("secrets", ns, name): {"metadata": {"name": name, "namespace": ns},
                                    "data": {k: _b64(v) for k, v in data.items()}}}


def _fieldref(name: str, path: str) -> JsonDict:
    return {"name": name, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": path}}}


CM_CONTAINER = {"envFrom": [{"configMapRef": {"name": "test-config-map"}},
                            {"prefix": "p_", "configMapRef": {"name": "test-config-map"}}],
                "env": [{"name": "TEST_LITERAL", "value": "test-test-test"},
                        {"name": "EXPANSION_TEST", "value": "$(REPLACE_ME)"},
                        {"name": "DUPE_TEST", "value": "ENV_VAR"}]}
SECRET_CONTAINER = {"envFrom": [{"secretRef": {"name": "test-secret"}},
                                {"prefix": "p_", "secretRef": {"name": "test-secret"}}],
                    "env": CM_CONTAINER["env"]}
EXPANSION_ENV = [{"name": "TEST_LITERAL", "value": "test-test-test"}, _fieldref("POD_NAME", "metadata.name"),
                 {"name": "OUT_OF_ORDER_TEST", "value": "$(OUT_OF_ORDER_TARGET)"},
                 {"name": "OUT_OF_ORDER_TARGET", "value": "FOO"}, {"name": "EMPTY_VAR"},
                 {"name": "EMPTY_TEST", "value": "foo-$(EMPTY_VAR)"},
                 {"name": "POD_NAME_TEST2", "value": "test2-$(POD_NAME)"},
                 {"name": "POD_NAME_TEST3", "value": "$(POD_NAME_TEST2)-3"},
                 {"name": "LITERAL_TEST", "value": "literal-$(TEST_LITERAL)"}]
EXPANSION_EXPECTED = [("TEST_LITERAL", "test-test-test"), ("POD_NAME", "dapi-test-pod-name"),
                      ("POD_NAME_TEST2", "test2-dapi-test-pod-name"), ("POD_NAME_TEST3", "test2-dapi-test-pod-name-3"),
                      ("LITERAL_TEST", "literal-test-test-test"), ("OUT_OF_ORDER_TEST", "$(OUT_OF_ORDER_TARGET)"),
                      ("OUT_OF_ORDER_TARGET", "FOO"), ("TEST_UNDEFINED", "$(UNDEFINED_VAR)"), ("EMPTY_VAR", ""),
                      ("EMPTY_TEST", "foo-")]
DOWNWARD_ENV = [_fieldref("POD_IP", "status.podIP"), _fieldref("POD_IPS", "status.podIPs"),
                _fieldref("HOST_IP", "status.hostIP"), _fieldref("HOST_IPS", "status.hostIPs")]
DOWNWARD_EXPECTED = [("POD_IP", "1.2.3.4"), ("POD_IPS", "1.2.3.4,fd00::6"), ("HOST_IP", "127.0.0.1"),
                     ("HOST_IPS", "127.0.0.1,::1")]
CM_DATA = {"REPLACE_ME": "FROM_CONFIG_MAP", "DUPE_TEST": "CONFIG_MAP"}
SECRET_DATA = {"REPLACE_ME": "FROM_SECRET", "DUPE_TEST": "SECRET"}

# (id, namespace, enableServiceLinks, container, configMap data, secret data, pod IPs, no services,
#  expected env (compared as a sorted list, as upstream does))
DECLARED_TEST_ENV = [("FOO", "BAR"), *_svc_env("TEST", "1.2.3.3", 8083)]
MAKE_ENV_CASES: list[tuple[str, str, bool, JsonDict, dict[str, str] | None, dict[str, str] | None,
                           list[str] | None, bool, list[tuple[str, str]]]] = [
    ("api server = Y, kubelet = Y", "test1", False, {"env": [{"name": k, "value": v} for k, v in DECLARED_TEST_ENV]},
     None, None, None, False, [*DECLARED_TEST_ENV, *K8S_ENV]),
    ("api server = Y, kubelet = N", "test1", False, {"env": [{"name": k, "value": v} for k, v in DECLARED_TEST_ENV]},
     None, None, None, True, DECLARED_TEST_ENV),
    ("api server = N; kubelet = Y", "test1", False, {"env": [{"name": "FOO", "value": "BAZ"}]},
     None, None, None, False, [("FOO", "BAZ"), *K8S_ENV]),
    ("api server = N; kubelet = Y; service env vars", "test1", True, {"env": [{"name": "FOO", "value": "BAZ"}]},
     None, None, None, False, [("FOO", "BAZ"), *_svc_env("TEST", "1.2.3.3", 8083), *K8S_ENV]),
    ("master service in pod ns", "test2", False, {"env": [{"name": "FOO", "value": "ZAP"}]},
     None, None, None, False, [("FOO", "ZAP"), *K8S_ENV]),
    ("master service in pod ns, service env vars", "test2", True, {"env": [{"name": "FOO", "value": "ZAP"}]},
     None, None, None, False,
     [("FOO", "ZAP"), *_svc_env("TEST", "1.2.3.5", 8085), *_svc_env("KUBERNETES", "1.2.3.4", 8084)]),
    ("pod in master service ns", "default", False, {}, None, None, None, False, K8S_ENV),
    ("pod in master service ns, service env vars", "default", True, {}, None, None, None, False,
     [*_svc_env("NOT_SPECIAL", "1.2.3.8", 8088), *K8S_ENV]),
    ("downward api pod", "downward-api", False,
     {"env": [_fieldref("POD_NAME", "metadata.name"), _fieldref("POD_NAMESPACE", "metadata.namespace"),
              _fieldref("POD_NODE_NAME", "spec.nodeName"),
              _fieldref("POD_SERVICE_ACCOUNT_NAME", "spec.serviceAccountName"), *DOWNWARD_ENV]},
     None, None, ["1.2.3.4", "fd00::6"], True,
     [("POD_NAME", "dapi-test-pod-name"), ("POD_NAMESPACE", "downward-api"), ("POD_NODE_NAME", "node-name"),
      ("POD_SERVICE_ACCOUNT_NAME", "special"), *DOWNWARD_EXPECTED]),
    ("downward api pod ips reverse order", "downward-api", False, {"env": DOWNWARD_ENV}, None, None,
     ["fd00::6", "1.2.3.4"], True, DOWNWARD_EXPECTED),
    ("downward api pod ips multiple ips", "downward-api", False, {"env": DOWNWARD_ENV}, None, None,
     ["1.2.3.4", "192.168.1.1.", "fd00::6"], True, DOWNWARD_EXPECTED),
    ("env expansion", "test1", False, {"env": [*EXPANSION_ENV, {"name": "TEST_UNDEFINED", "value": "$(UNDEFINED_VAR)"}]},
     None, None, None, False, [*EXPANSION_EXPECTED, *K8S_ENV]),
    ("env expansion, service env vars", "test1", True,
     {"env": [*EXPANSION_ENV, {"name": "SERVICE_VAR_TEST", "value": "$(TEST_SERVICE_HOST):$(TEST_SERVICE_PORT)"},
              {"name": "TEST_UNDEFINED", "value": "$(UNDEFINED_VAR)"}]},
     None, None, None, False,
     [*EXPANSION_EXPECTED, ("SERVICE_VAR_TEST", "1.2.3.3:8083"), *_svc_env("TEST", "1.2.3.3", 8083), *K8S_ENV]),
    ("configmapkeyref_missing_optional", "test", False,
     {"env": [{"name": "POD_NAME", "valueFrom": {"configMapKeyRef": {"name": "missing-config-map", "key": "key",
                                                                     "optional": True}}}]},
     None, None, None, False, K8S_ENV),
    ("configmapkeyref_missing_key_optional", "test", False,
     {"env": [{"name": "POD_NAME", "valueFrom": {"configMapKeyRef": {"name": "test-config-map", "key": "key",
                                                                     "optional": True}}}]},
     {"a": "b"}, None, None, True, []),
    ("secretkeyref_missing_optional", "test", False,
     {"env": [{"name": "POD_NAME", "valueFrom": {"secretKeyRef": {"name": "missing-secret", "key": "key",
                                                                  "optional": True}}}]},
     None, None, None, False, K8S_ENV),
    ("secretkeyref_missing_key_optional", "test", False,
     {"env": [{"name": "POD_NAME", "valueFrom": {"secretKeyRef": {"name": "test-secret", "key": "key",
                                                                  "optional": True}}}]},
     None, {"a": "b"}, None, True, []),
    ("configmap", "test1", False, CM_CONTAINER, CM_DATA, None, None, False,
     [("TEST_LITERAL", "test-test-test"), ("REPLACE_ME", "FROM_CONFIG_MAP"), ("EXPANSION_TEST", "FROM_CONFIG_MAP"),
      ("DUPE_TEST", "ENV_VAR"), ("p_REPLACE_ME", "FROM_CONFIG_MAP"), ("p_DUPE_TEST", "CONFIG_MAP"), *K8S_ENV]),
    ("configmap, service env vars", "test1", True, CM_CONTAINER, CM_DATA, None, None, False,
     [("TEST_LITERAL", "test-test-test"), ("REPLACE_ME", "FROM_CONFIG_MAP"), ("EXPANSION_TEST", "FROM_CONFIG_MAP"),
      ("DUPE_TEST", "ENV_VAR"), ("p_REPLACE_ME", "FROM_CONFIG_MAP"), ("p_DUPE_TEST", "CONFIG_MAP"),
      *_svc_env("TEST", "1.2.3.3", 8083), *K8S_ENV]),
    ("configmap_missing_optional", "test", False,
     {"envFrom": [{"configMapRef": {"name": "missing-config-map", "optional": True}}]},
     None, None, None, False, K8S_ENV),
    ("configmap_invalid_keys_valid", "test", False,
     {"envFrom": [{"prefix": "p_", "configMapRef": {"name": "test-config-map"}}]},
     {"1234": "abc"}, None, None, False, [("p_1234", "abc"), *K8S_ENV]),
    ("secret", "test1", False, SECRET_CONTAINER, None, SECRET_DATA, None, False,
     [("TEST_LITERAL", "test-test-test"), ("REPLACE_ME", "FROM_SECRET"), ("EXPANSION_TEST", "FROM_SECRET"),
      ("DUPE_TEST", "ENV_VAR"), ("p_REPLACE_ME", "FROM_SECRET"), ("p_DUPE_TEST", "SECRET"), *K8S_ENV]),
    ("secret_missing_optional", "test", False,
     {"envFrom": [{"secretRef": {"name": "missing-secret", "optional": True}}]},
     None, None, None, False, K8S_ENV),
    ("secret_invalid_keys_valid", "test", False,
     {"envFrom": [{"prefix": "p_", "secretRef": {"name": "test-secret"}}]},
     None, {"1234.name": "abc"}, None, False, [("p_1234.name", "abc"), *K8S_ENV]),
]


@pytest.mark.parametrize("ns,links,container,cm,secret,pod_ips,no_services,expected",
                         [c[1:] for c in MAKE_ENV_CASES], ids=[c[0] for c in MAKE_ENV_CASES])
def test_make_environment_variables(ns: str, links: bool, container: JsonDict, cm: dict[str, str] | None,
                                    secret: dict[str, str] | None, pod_ips: list[str] | None,
                                    no_services: bool, expected: list[tuple[str, str]]) -> None:
    objects: dict[tuple[str, str, str], JsonDict] = {}
    if cm is not None:
        objects |= _cm(ns, "test-config-map", cm)
    if secret is not None:
        objects |= _secret(ns, "test-secret", secret)
    lookup = FakeLookup(objects, [] if no_services else UPSTREAM_SERVICES)
    pod = _pod(ns, container=container, links=links)
    if pod_ips is not None:
        pod["status"]["podIPs"] = [{"ip": ip} for ip in pod_ips]
    env = make_environment_variables(pod, pod["spec"]["containers"][0], lookup, host_ips=["127.0.0.1", "::1"])
    assert sorted(env.items()) == sorted(expected)


@pytest.mark.parametrize("ns,container,message", [
    ("test1", {"envFrom": [{"configMapRef": {"name": "test-config-map"}}]}, 'configmap "test-config-map" not found'),
    ("test1", {"envFrom": [{"secretRef": {"name": "test-secret"}}]}, 'secret "test-secret" not found'),
    ("ns", {"env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}]},
     'configmap "cm" not found'),
    ("ns", {"env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "have", "key": "nope"}}}]},
     "couldn't find key nope in ConfigMap ns/have"),
    ("ns", {"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "nope"}}}]},
     "couldn't find key nope in Secret ns/sec"),
], ids=["configmap_missing", "secret_missing", "configmapkeyref_missing", "configmapkeyref_missing_key",
        "secretkeyref_missing_key"])
def test_required_env_source_missing(ns: str, container: JsonDict, message: str) -> None:
    lookup = FakeLookup({**_cm(ns, "have", {"k": "v"}), **_secret(ns, "sec", {"k": "v"})}, UPSTREAM_SERVICES)
    pod = _pod(ns, container=container)
    with pytest.raises(ContainerViewError) as err:
        container_view(pod, "c", lookup, token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert str(err.value) == message
    assert err.value.reason == "CreateContainerConfigError"


def test_from_services() -> None:
    """TestFromServices (envvars_test.go): every service with a cluster IP, in order."""
    services = [
        {"metadata": {"name": "foo-bar"}, "spec": {"clusterIP": "1.2.3.4", "ports": [{"port": 8080, "protocol": "TCP"}]}},
        {"metadata": {"name": "abc-123"}, "spec": {"clusterIP": "5.6.7.8", "ports": [
            {"name": "u-d-p", "port": 8081, "protocol": "UDP"}, {"name": "t-c-p", "port": 8081, "protocol": "TCP"}]}},
        {"metadata": {"name": "q-u-u-x"}, "spec": {"clusterIP": "9.8.7.6", "ports": [
            {"port": 8082, "protocol": "TCP"}, {"name": "8083", "port": 8083, "protocol": "TCP"}]}},
        {"metadata": {"name": "svrc-clusterip-none"}, "spec": {"clusterIP": "None", "ports": [{"port": 8082}]}},
        {"metadata": {"name": "svrc-clusterip-empty"}, "spec": {"clusterIP": "", "ports": [{"port": 8082}]}},
    ]
    assert from_services(services) == [
        *_svc_env("FOO_BAR", "1.2.3.4", 8080),
        ("ABC_123_SERVICE_HOST", "5.6.7.8"), ("ABC_123_SERVICE_PORT", "8081"),
        ("ABC_123_SERVICE_PORT_U_D_P", "8081"), ("ABC_123_SERVICE_PORT_T_C_P", "8081"),
        ("ABC_123_PORT", "udp://5.6.7.8:8081"), ("ABC_123_PORT_8081_UDP", "udp://5.6.7.8:8081"),
        ("ABC_123_PORT_8081_UDP_PROTO", "udp"), ("ABC_123_PORT_8081_UDP_PORT", "8081"),
        ("ABC_123_PORT_8081_UDP_ADDR", "5.6.7.8"), ("ABC_123_PORT_8081_TCP", "tcp://5.6.7.8:8081"),
        ("ABC_123_PORT_8081_TCP_PROTO", "tcp"), ("ABC_123_PORT_8081_TCP_PORT", "8081"),
        ("ABC_123_PORT_8081_TCP_ADDR", "5.6.7.8"),
        ("Q_U_U_X_SERVICE_HOST", "9.8.7.6"), ("Q_U_U_X_SERVICE_PORT", "8082"), ("Q_U_U_X_SERVICE_PORT_8083", "8083"),
        ("Q_U_U_X_PORT", "tcp://9.8.7.6:8082"), ("Q_U_U_X_PORT_8082_TCP", "tcp://9.8.7.6:8082"),
        ("Q_U_U_X_PORT_8082_TCP_PROTO", "tcp"), ("Q_U_U_X_PORT_8082_TCP_PORT", "8082"),
        ("Q_U_U_X_PORT_8082_TCP_ADDR", "9.8.7.6"), ("Q_U_U_X_PORT_8083_TCP", "tcp://9.8.7.6:8083"),
        ("Q_U_U_X_PORT_8083_TCP_PROTO", "tcp"), ("Q_U_U_X_PORT_8083_TCP_PORT", "8083"),
        ("Q_U_U_X_PORT_8083_TCP_ADDR", "9.8.7.6"),
    ]


def test_from_services_ipv6_cluster_ip_is_bracketed() -> None:
    svc = {"metadata": {"name": "v6"}, "spec": {"clusterIP": "fd00::a", "ports": [{"port": 80}]}}
    assert dict(from_services([svc]))["V6_PORT"] == "tcp://[fd00::a]:80"


@pytest.mark.parametrize("text,expected", [
    ("$(VAR_A)", "A"), ("___$(VAR_B)___", "___B___"), ("$(VAR_A)-$(VAR_B)", "A-B"),
    ("$$(VAR_A)", "$(VAR_A)"), ("$$$(VAR_A)", "$A"), ("$(VAR_DNE)", "$(VAR_DNE)"),
    ("$(VAR_A", "$(VAR_A"), ("$VAR_A", "$VAR_A"), ("$", "$"), ("$$", "$"), ("$(", "$("),
    ("foo$", "foo$"), ("$()", ""), ("$(VAR_EMPTY)", ""),
], ids=["whole string", "substring", "consecutive", "escaped expansion", "escape then expansion",
        "undefined var", "incomplete expression", "shell syntax is not expansion", "trailing operator",
        "doubled operator", "opener alone", "operator at end", "empty name", "empty value"])
def test_expand(text: str, expected: str) -> None:
    """expand_test.go's rules: $(VAR), $$ escape, anything else kept as written."""
    mapping = mapping_func_for({"VAR_A": "A", "VAR_B": "B", "VAR_EMPTY": "", "": ""})
    assert expand(text, mapping) == expected


def test_env_order_is_runtime_then_declaration_then_services() -> None:
    lookup = FakeLookup(_cm("test1", "cfg", {"B": "2", "A": "1"}), UPSTREAM_SERVICES)
    pod = _pod(container={"envFrom": [{"configMapRef": {"name": "cfg"}}],
                          "env": [{"name": "Z", "value": "z"}, {"name": "A", "value": "over"}]}, links=True)
    view = container_view(pod, "c", lookup, token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert list(view.env)[:5] == ["PATH", "HOSTNAME", "A", "B", "Z"]
    assert view.env["A"] == "over"
    assert list(view.env)[-1] == "HOME"
    assert view.env["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert view.env["HOSTNAME"] == "dapi-test-pod-name" and view.env["HOME"] == "/root"
    assert [k for k in view.env if k.startswith(("KUBERNETES_", "TEST_"))] == \
        [k for k, _ in [*K8S_ENV, *_svc_env("TEST", "1.2.3.3", 8083)]]


def test_non_root_user_home_and_workdir() -> None:
    pod = _pod(container={"workingDir": "/app", "securityContext": {"runAsUser": 1001}},
               securityContext={"runAsUser": 5})
    view = container_view(pod, "c", FakeLookup(), token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert (view.uid, view.workdir, view.env["HOME"]) == (1001, "/app", "/")
    pod = _pod(securityContext={"runAsUser": 5})
    view = container_view(pod, "c", FakeLookup(), token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert (view.uid, view.workdir) == (5, "/")


@pytest.mark.parametrize("resources,selector,expected", [
    ({"limits": {"cpu": "250m"}}, {"resource": "limits.cpu", "divisor": "1m"}, "250"),
    ({"limits": {"cpu": "250m"}}, {"resource": "limits.cpu"}, "1"),
    ({"limits": {"memory": "64Mi"}}, {"resource": "limits.memory", "divisor": "1Mi"}, "64"),
    ({"requests": {"memory": "64Mi"}}, {"resource": "requests.memory"}, "67108864"),
    ({}, {"resource": "requests.cpu"}, "0"),
    ({}, {"resource": "limits.cpu"}, "4"),
    ({}, {"resource": "limits.memory", "divisor": "1Gi"}, "8"),
], ids=["limit cpu millis", "limit cpu rounded up to cores", "limit memory Mi", "request memory bytes",
        "no request", "no limit: node allocatable cpu", "no limit: node allocatable memory"])
def test_resource_field_ref(resources: JsonDict, selector: JsonDict, expected: str) -> None:
    pod = _pod(container={"resources": resources,
                          "env": [{"name": "V", "valueFrom": {"resourceFieldRef": selector}}]})
    env = make_environment_variables(pod, pod["spec"]["containers"][0], FakeLookup(),
                                     node_allocatable={"cpu": "4", "memory": "8Gi"})
    assert env["V"] == expected


@pytest.mark.parametrize("ips,hostname,domain,aliases,expected", [
    (["123.45.67.89"], "podFoo", "", [], "123.45.67.89\tpodFoo\n"),
    (["203.0.113.1"], "podFoo", "domainFoo", [], "203.0.113.1\tpodFoo.domainFoo\tpodFoo\n"),
    (["203.0.113.1"], "podFoo", "domainFoo", [{"ip": "123.45.67.89", "hostnames": ["foo", "bar", "baz"]}],
     "203.0.113.1\tpodFoo.domainFoo\tpodFoo\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\tbaz\n"),
    (["203.0.113.1"], "podFoo", "domainFoo", [{"ip": "123.45.67.89", "hostnames": ["foo", "bar", "baz"]},
                                              {"ip": "456.78.90.123", "hostnames": ["park", "doo", "boo"]}],
     "203.0.113.1\tpodFoo.domainFoo\tpodFoo\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\tbaz\n"
     "456.78.90.123\tpark\tdoo\tboo\n"),
    (["203.0.113.1", "fd00::6"], "podFoo", "domainFoo", [],
     "203.0.113.1\tpodFoo.domainFoo\tpodFoo\nfd00::6\tpodFoo.domainFoo\tpodFoo\n"),
], ids=[f"TestManagedHostsFileContent/{i}" for i in range(5)])
def test_managed_hosts_file_content(ips: list[str], hostname: str, domain: str, aliases: list[JsonDict],
                                    expected: str) -> None:
    head = ("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            "fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
    assert managed_hosts_file_content(ips, hostname, domain, aliases) == head + expected


def test_etc_files_of_a_subdomain_pod() -> None:
    pod = _pod("team", hostname="web-0", subdomain="web", hostAliases=[{"ip": "10.1.1.1", "hostnames": ["db"]}])
    view = container_view(pod, "c", FakeLookup(), token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert view.hostname == "web-0"
    assert view.files["/etc/hostname"] == b"web-0\n"
    hosts = view.files["/etc/hosts"].decode()
    assert "1.2.3.4\tweb-0.web.team.svc.cluster.local\tweb-0\n" in hosts
    assert hosts.endswith("\n# Entries added by HostAliases.\n10.1.1.1\tdb\n")
    assert view.files["/etc/resolv.conf"] == (
        b"search team.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.43.0.10\noptions ndots:5\n")


def test_long_pod_name_hostname_is_truncated() -> None:
    pod = _pod()
    pod["metadata"]["name"] = "a" * 62 + "-b"
    view = container_view(pod, "c", FakeLookup(), token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert view.hostname == "a" * 62 and view.env["HOSTNAME"] == "a" * 62


def test_host_network_pod_sees_node_files() -> None:
    pod = _pod(hostNetwork=True)
    view = container_view(pod, "c", FakeLookup(), token=None, ca_crt=None, cluster_dns="10.43.0.10",
                          host_resolv_conf="nameserver 8.8.8.8\nsearch example.com\n",
                          node_hosts="127.0.0.1 localhost\n")
    assert view.hostname == "node-name"
    assert view.files["/etc/hosts"] == b"# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n"
    assert view.files["/etc/resolv.conf"] == b"search example.com\nnameserver 8.8.8.8\n"


HOST_RESOLV = "nameserver 8.8.8.8\nsearch host.domain\n"
DNS_EXTRA = {"nameservers": ["10.0.0.11"], "searches": ["my.domain"],
             "options": [{"name": "ndots", "value": "3"}, {"name": "debug"}]}


@pytest.mark.parametrize("policy,host_network,dns_config,servers,searches,options", [
    ("None", False, None, [], [], []),
    ("None", False, {"nameservers": ["203.0.113.1"], "searches": ["my.domain", "second.domain"],
                     "options": [{"name": "ndots", "value": "3"}, {"name": "debug"}]},
     ["203.0.113.1"], ["my.domain", "second.domain"], ["ndots:3", "debug"]),
    ("ClusterFirst", False, DNS_EXTRA, ["10.0.0.10", "10.0.0.11"],
     ["testNS.svc.kubernetes.io", "svc.kubernetes.io", "kubernetes.io", "host.domain", "my.domain"],
     ["ndots:3", "debug"]),
    ("ClusterFirstWithHostNet", True, DNS_EXTRA, ["10.0.0.10", "10.0.0.11"],
     ["testNS.svc.kubernetes.io", "svc.kubernetes.io", "kubernetes.io", "host.domain", "my.domain"],
     ["ndots:3", "debug"]),
    ("Default", False, DNS_EXTRA, ["8.8.8.8", "10.0.0.11"], ["host.domain", "my.domain"], ["ndots:3", "debug"]),
    ("ClusterFirst", True, None, ["8.8.8.8"], ["host.domain"], []),
], ids=["DNSNone without DNSConfig should have empty DNS settings",
        "DNSNone with DNSConfig should have a merged DNS settings",
        "DNSClusterFirst with DNSConfig should have a merged DNS settings",
        "DNSClusterFirstWithHostNet with DNSConfig should have a merged DNS settings",
        "DNSDefault with DNSConfig should have a merged DNS settings",
        "ClusterFirst on the host network falls back to Default"])
def test_get_pod_dns_custom(policy: str, host_network: bool, dns_config: JsonDict | None, servers: list[str],
                            searches: list[str], options: list[str]) -> None:
    """TestGetPodDNSCustom (dns_test.go); options compared as a set, as upstream does."""
    pod: JsonDict = {"metadata": {"name": "test_pod", "namespace": "testNS"},
                     "spec": {"dnsPolicy": policy, "hostNetwork": host_network}}
    if dns_config is not None:
        pod["spec"]["dnsConfig"] = dns_config
    cfg = pod_dns_config(pod, "10.0.0.10", "kubernetes.io", HOST_RESOLV)
    assert (cfg.servers, cfg.searches, sorted(cfg.options)) == (servers, searches, sorted(options))


def test_resolv_conf_rendering_and_empty_config_copies_host_file() -> None:
    pod = _pod(dnsPolicy="None", dnsConfig={"nameservers": ["1.1.1.1", "9.9.9.9"], "searches": ["a.b"],
                                            "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]})
    view = container_view(pod, "c", FakeLookup(), token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert view.files["/etc/resolv.conf"] == b"search a.b\nnameserver 1.1.1.1\nnameserver 9.9.9.9\noptions ndots:2 edns0\n"
    pod = _pod(dnsPolicy="Default")
    view = container_view(pod, "c", FakeLookup(), token=None, ca_crt=None, cluster_dns="10.43.0.10",
                          host_resolv_conf="# nothing here\n")
    assert view.files["/etc/resolv.conf"] == b"# nothing here\n"
    assert resolv_conf_content(pod_dns_config(_pod(), "10.43.0.10", "", "")) == \
        "nameserver 10.43.0.10\noptions ndots:5\n"


def _vol_pod(volumes: list[JsonDict], mounts: list[JsonDict], **meta: Any) -> JsonDict:
    pod = _pod("ns", container={"volumeMounts": mounts}, volumes=volumes)
    pod["metadata"].update(meta)
    return pod


def test_downward_api_volume_files() -> None:
    pod = _vol_pod([{"name": "info", "downwardAPI": {"items": [
        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
        {"path": "annotations", "fieldRef": {"fieldPath": "metadata.annotations"}},
        {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
        {"path": "tier", "fieldRef": {"fieldPath": "metadata.labels['tier']"}},
        {"path": "cpu_limit", "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu", "divisor": "1m"}},
    ]}}], [{"name": "info", "mountPath": "/etc/podinfo"}],
        labels={"zone": "us-est-coast", "tier": "front-end", "cluster": "test-cluster1"},
        annotations={"build": "two", "quote": 'say "hi"\n\ttab', "uni": "é\u00a0"})
    pod["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "500m"}}
    view = container_view(pod, "c", FakeLookup(), token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert view.files["/etc/podinfo/labels"] == b'cluster="test-cluster1"\ntier="front-end"\nzone="us-est-coast"'
    assert view.files["/etc/podinfo/annotations"] == \
        'build="two"\nquote="say \\"hi\\"\\n\\ttab"\nuni="é\\u00a0"'.encode()
    assert view.files["/etc/podinfo/name"] == b"dapi-test-pod-name"
    assert view.files["/etc/podinfo/tier"] == b"front-end"
    assert view.files["/etc/podinfo/cpu_limit"] == b"500"
    assert "/etc/podinfo" in view.dirs


def test_configmap_and_secret_volumes_items_and_subpath() -> None:
    objects = {**_cm("ns", "cfg", {"a.conf": "A", "b.conf": "B"}),
               **_secret("ns", "sec", {"user": "admin", "pass": "s3cret"})}
    pod = _vol_pod(
        [{"name": "all", "configMap": {"name": "cfg"}},
         {"name": "some", "configMap": {"name": "cfg", "items": [{"key": "b.conf", "path": "sub/dir/b"}]}},
         {"name": "sec", "secret": {"secretName": "sec"}},
         {"name": "scratch", "emptyDir": {}}],
        [{"name": "all", "mountPath": "/etc/all"}, {"name": "some", "mountPath": "/etc/some"},
         {"name": "sec", "mountPath": "/etc/sec", "readOnly": True},
         {"name": "all", "mountPath": "/etc/app/a.conf", "subPath": "a.conf"},
         {"name": "scratch", "mountPath": "/scratch"}])
    view = container_view(pod, "c", FakeLookup(objects), token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert view.files["/etc/all/a.conf"] == b"A" and view.files["/etc/all/b.conf"] == b"B"
    assert view.files["/etc/some/sub/dir/b"] == b"B" and "/etc/some/a.conf" not in view.files
    assert {"/etc/some", "/etc/some/sub", "/etc/some/sub/dir"} <= view.dirs
    assert view.files["/etc/sec/user"] == b"admin" and view.files["/etc/sec/pass"] == b"s3cret"
    assert view.files["/etc/app/a.conf"] == b"A" and "/etc/app/b.conf" not in view.files
    assert "/scratch" in view.dirs


def test_projected_service_account_volume() -> None:
    objects = _cm("ns", "kube-root-ca.crt", {"ca.crt": "---CA---"})
    pod = _vol_pod([{"name": "kube-api-access-x", "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                      "fieldPath": "metadata.namespace"}}]}}]}}],
        [{"name": "kube-api-access-x", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
          "readOnly": True}])
    view = container_view(pod, "c", FakeLookup(objects), token="tok.en", ca_crt=None, cluster_dns="10.43.0.10")
    base = "/var/run/secrets/kubernetes.io/serviceaccount"
    assert (view.files[f"{base}/token"], view.files[f"{base}/ca.crt"], view.files[f"{base}/namespace"]) == \
        (b"tok.en", b"---CA---", b"ns")
    view = container_view(pod, "c", FakeLookup(), token="t", ca_crt=b"PEM", cluster_dns="10.43.0.10")
    assert view.files[f"{base}/ca.crt"] == b"PEM"


@pytest.mark.parametrize("volume,message", [
    ({"name": "cfg", "configMap": {"name": "missing"}},
     'MountVolume.SetUp failed for volume "cfg" : configmap "missing" not found'),
    ({"name": "sec", "secret": {"secretName": "missing"}},
     'MountVolume.SetUp failed for volume "sec" : secret "missing" not found'),
    ({"name": "cfg", "configMap": {"name": "have", "items": [{"key": "nope", "path": "p"}]}},
     'MountVolume.SetUp failed for volume "cfg" : configmap references non-existent config key: nope'),
    ({"name": "sec", "secret": {"secretName": "sec", "items": [{"key": "nope", "path": "p"}]}},
     'MountVolume.SetUp failed for volume "sec" : references non-existent secret key: nope'),
    ({"name": "proj", "projected": {"sources": [{"configMap": {"name": "kube-root-ca.crt"}}]}},
     'MountVolume.SetUp failed for volume "proj" : configmap "kube-root-ca.crt" not found'),
], ids=["configmap missing", "secret missing", "configmap item key missing", "secret item key missing",
        "projected configmap missing"])
def test_required_volume_source_missing(volume: JsonDict, message: str) -> None:
    lookup = FakeLookup({**_cm("ns", "have", {"k": "v"}), **_secret("ns", "sec", {"k": "v"})})
    pod = _vol_pod([volume], [])  # not even mounted by this container: the pod cannot start
    with pytest.raises(ContainerViewError) as err:
        container_view(pod, "c", lookup, token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert (str(err.value), err.value.reason) == (message, "FailedMount")


def test_optional_volume_sources_missing_mount_empty() -> None:
    lookup = FakeLookup(_cm("ns", "have", {"k": "v"}))
    pod = _vol_pod([{"name": "a", "configMap": {"name": "missing", "optional": True}},
                    {"name": "b", "secret": {"secretName": "missing", "optional": True}},
                    {"name": "c", "configMap": {"name": "have", "optional": True,
                                                "items": [{"key": "nope", "path": "p"}, {"key": "k", "path": "k"}]}}],
                   [{"name": "a", "mountPath": "/a"}, {"name": "b", "mountPath": "/b"},
                    {"name": "c", "mountPath": "/c"}])
    view = container_view(pod, "c", lookup, token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert {"/a", "/b", "/c"} <= view.dirs
    assert not any(p.startswith(("/a/", "/b/")) for p in view.files)
    assert view.files["/c/k"] == b"v" and "/c/p" not in view.files


def test_volume_mounted_on_etc_hosts_replaces_managed_file() -> None:
    lookup = FakeLookup(_cm("ns", "hosts", {"hosts": "1.1.1.1 custom\n"}))
    pod = _vol_pod([{"name": "h", "configMap": {"name": "hosts"}}],
                   [{"name": "h", "mountPath": "/etc/hosts", "subPath": "hosts"}])
    view = container_view(pod, "c", lookup, token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert view.files["/etc/hosts"] == b"1.1.1.1 custom\n"


def test_pod_without_ip_gets_no_managed_hosts_file() -> None:
    pod = _pod()
    pod["status"] = {}
    view = container_view(pod, "c", FakeLookup(), token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert "/etc/hosts" not in view.files and "/etc/hostname" in view.files


def test_declared_variable_wins_over_service_link() -> None:
    """A container's own variable keeps its value; the service's is not appended after it."""
    pod = _pod("test1", container={"env": [{"name": "KUBERNETES_SERVICE_HOST", "value": "mine"}]})
    env = make_environment_variables(pod, pod["spec"]["containers"][0], FakeLookup(services=UPSTREAM_SERVICES))
    assert env["KUBERNETES_SERVICE_HOST"] == "mine"
    assert list(env)[0] == "KUBERNETES_SERVICE_HOST"


def test_subpath_naming_a_directory_of_the_volume() -> None:
    lookup = FakeLookup(_cm("ns", "cfg", {"b.conf": "B", "a.conf": "A"}))
    pod = _vol_pod([{"name": "v", "configMap": {"name": "cfg", "items": [
        {"key": "b.conf", "path": "sub/dir/b"}, {"key": "a.conf", "path": "top"}]}}],
        [{"name": "v", "mountPath": "/mnt", "subPath": "sub"}, {"name": "v", "mountPath": "/new", "subPath": "absent"}])
    view = container_view(pod, "c", lookup, token=None, ca_crt=None, cluster_dns="10.43.0.10")
    assert view.files["/mnt/dir/b"] == b"B"
    assert not any(p.startswith("/mnt/") and p != "/mnt/dir/b" for p in view.files)
    assert {"/mnt", "/mnt/dir", "/new"} <= view.dirs
