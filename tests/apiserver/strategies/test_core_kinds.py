"""Namespace, Node, Service, ConfigMap, Lease, CRD strategies."""

import copy

import pytest

from apiserver.strategies import strategy_for
from minik3s.api.errors import InvalidError
from minik3s.api.validation import QNAME_CHAR_MSG

NS = strategy_for("", "Namespace")
NODE = strategy_for("", "Node")
SVC = strategy_for("", "Service")
CM = strategy_for("", "ConfigMap")
LEASE = strategy_for("coordination.k8s.io", "Lease")
CRD = strategy_for("apiextensions.k8s.io", "CustomResourceDefinition")


def rendered(errs):
    return [f"{e['field']}: {e['message']}" for e in errs]


def test_namespace_create_golden():
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}, "status": {"phase": "Terminating"}}
    NS.default(ns)
    NS.prepare_for_create(ns)
    assert ns == {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "team-a", "labels": {"kubernetes.io/metadata.name": "team-a"}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
    assert NS.validate(ns) == []


def test_namespace_name_must_be_a_label():
    ns = {"metadata": {"name": "a.b"}}
    (err,) = NS.validate(ns)
    assert err["field"] == "metadata.name"
    assert err["message"] == 'Invalid value: "a.b": must not contain dots'
    (err,) = NS.validate({"metadata": {"name": "a_b"}})
    assert "RFC 1123 label" in err["message"]


def test_namespace_update_keeps_finalizers_and_status():
    old = {"metadata": {"name": "a", "uid": "u"}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    new = {"metadata": {"name": "a"}, "spec": {"finalizers": []}, "status": {"phase": "Terminating"}}
    NS.prepare_for_update(new, old)
    assert new["spec"] == {"finalizers": ["kubernetes"]}
    assert new["status"] == {"phase": "Active"}
    assert new["metadata"]["uid"] == "u"


def node(**spec):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": spec,
            "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}


def test_node_create_keeps_registered_status():
    n = node()
    NODE.prepare_for_create(n)
    assert n["status"]["capacity"]["cpu"] == "4"
    assert "generation" not in n["metadata"]


@pytest.mark.parametrize(
    "taints, expected",
    [
        pytest.param([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}], [], id="valid-taint"),
        pytest.param([{"key": "k", "effect": "Sometimes"}],
                     ['spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
                      '"PreferNoSchedule", "NoExecute"'], id="bad-effect"),
        pytest.param([{"key": "k"}], ["spec.taints[0].effect: Required value"], id="missing-effect"),
        pytest.param([{"key": "", "effect": "NoSchedule"}],
                     ['spec.taints[0].key: Invalid value: "": name part must be non-empty',
                      'spec.taints[0].key: Invalid value: "": name part ' + QNAME_CHAR_MSG], id="empty-key"),
        pytest.param([{"key": "k", "effect": "NoSchedule"}, {"key": "k", "value": "v", "effect": "NoSchedule"}],
                     ['spec.taints[1]: Duplicate value: "k=v:NoSchedule": taints must be unique by key and effect pair'],
                     id="duplicate-key-effect"),
        pytest.param([{"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoExecute"}], [],
                     id="same-key-other-effect-ok"),
    ],
)
def test_node_taints(taints, expected):
    assert rendered(NODE.validate(node(taints=taints))) == expected


def test_node_update_ignores_status_and_status_update_ignores_spec():
    old = node()
    old["metadata"]["uid"] = "u"
    new = copy.deepcopy(old)
    new["spec"]["unschedulable"] = True
    new["status"] = {"capacity": {"cpu": "1"}}
    NODE.prepare_for_update(new, old)
    assert new["spec"] == {"unschedulable": True}
    assert new["status"] == old["status"]
    new2 = copy.deepcopy(old)
    new2["spec"]["unschedulable"] = True
    new2["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    NODE.prepare_for_status_update(new2, old)
    assert new2["spec"] == {}
    assert new2["status"]["conditions"] == [{"type": "Ready", "status": "True"}]


def test_node_status_capacity_must_be_quantities():
    n = node()
    n["status"]["capacity"]["cpu"] = "lots"
    (err,) = NODE.validate(n)
    assert err["field"] == "status.capacity[cpu]"


def svc(**spec):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"}, "spec": spec}


def test_service_defaults():
    s = svc(selector={"app": "web"}, ports=[{"port": 80}])
    SVC.default(s)
    assert s["spec"] == {
        "selector": {"app": "web"},
        "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
        "type": "ClusterIP",
        "sessionAffinity": "None",
        "internalTrafficPolicy": "Cluster",
    }
    assert SVC.validate(s) == []


@pytest.mark.parametrize(
    "obj, expected",
    [
        pytest.param(svc(ports=[{"port": 80}, {"port": 81}]),
                     ["spec.ports[0].name: Required value", "spec.ports[1].name: Required value"],
                     id="multiple-ports-need-names"),
        pytest.param(svc(ports=[{"port": 0}]),
                     ["spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                      "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive"],
                     id="port-zero-and-defaulted-target-port"),
        pytest.param(svc(type="Magic", ports=[{"port": 80}]),
                     ['spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", '
                      '"LoadBalancer", "NodePort"'], id="bad-type"),
        pytest.param(svc(), ["spec.ports: Required value"], id="no-ports"),
        # found by fuzzing: each stored before; upstream's ValidateService refuses them
        pytest.param(svc(ports=[{"port": 80, "targetPort": "a-very-long-port-name"}]),
                     ['spec.ports[0].targetPort: Invalid value: "a-very-long-port-name": must be no more than 15 '
                      'characters'], id="target-port-name-too-long"),
        pytest.param(svc(ports=[{"port": 80}], ipFamilies=["IPv4", "IPv4"], ipFamilyPolicy="PreferDualStack"),
                     ['spec.ipFamilies[1]: Duplicate value: "IPv4"'], id="repeated-ip-family"),
        pytest.param(svc(ports=[{"port": 80}], clusterIP="None", type="LoadBalancer"),
                     ["spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for LoadBalancer "
                      "services"], id="headless-load-balancer"),
        pytest.param(svc(ports=[{"port": 80}], clusterIP="None", type="NodePort"),
                     ["spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services"],
                     id="headless-node-port"),
        pytest.param(svc(ports=[{"port": 80}], externalIPs=["0.0.0.0", "127.0.0.2", "169.254.1.1", "224.0.0.9", "x",
                                                            "fe80::1", "1.2.3.4"]),
                     ['spec.externalIPs[0]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)',
                      'spec.externalIPs[1]: Invalid value: "127.0.0.2": may not be in the loopback range '
                      '(127.0.0.0/8, ::1/128)',
                      'spec.externalIPs[2]: Invalid value: "169.254.1.1": may not be in the link-local range '
                      '(169.254.0.0/16, fe80::/10)',
                      'spec.externalIPs[3]: Invalid value: "224.0.0.9": may not be in the link-local multicast range '
                      '(224.0.0.0/24, ff02::/10)',
                      'spec.externalIPs[4]: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or '
                      '2001:db8::ffff)',
                      'spec.externalIPs[5]: Invalid value: "fe80::1": may not be in the link-local range '
                      '(169.254.0.0/16, fe80::/10)'], id="special-external-ips"),
        pytest.param(svc(ports=[{"port": 80}], sessionAffinity="ClientIP",
                         sessionAffinityConfig={"clientIP": {"timeoutSeconds": 0}}),
                     ["spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 "
                      "and less than 86400"], id="client-ip-timeout-zero"),
        pytest.param(svc(ports=[{"port": 80}], type="LoadBalancer", loadBalancerSourceRanges=["1.1.1.1/33"]),
                     ['spec.loadBalancerSourceRanges[0]: Invalid value: "1.1.1.1/33": must be a valid CIDR value, '
                      '(e.g. 10.9.8.0/24 or 2001:db8::/64)'], id="source-range-not-a-cidr"),
        pytest.param(svc(ports=[{"port": 80}], loadBalancerSourceRanges=["10.0.0.0/8"]),
                     ["spec.loadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'"],
                     id="source-ranges-need-a-load-balancer"),
        pytest.param(svc(type="ExternalName", externalName="a" * 254),
                     [f'spec.externalName: Invalid value: "{"a" * 254}": must be no more than 253 characters'],
                     id="external-name-too-long"),
        pytest.param(svc(ports=[{"port": 80}], type="LoadBalancer", loadBalancerSourceRanges=[" 10.0.0.0/8"],
                         externalIPs=["1.2.3.4"], sessionAffinity="ClientIP",
                         sessionAffinityConfig={"clientIP": {"timeoutSeconds": 86400}}), [],
                     id="valid-addresses-and-affinity"),
    ],
)
def test_service_validation(obj, expected):
    SVC.default(obj)
    assert rendered(SVC.validate(obj)) == expected


def test_service_name_is_dns1035():
    s = svc(ports=[{"port": 80}])
    s["metadata"]["name"] = "1web"
    SVC.default(s)
    (err,) = SVC.validate(s)
    assert err["field"] == "metadata.name"
    assert err["message"].startswith('Invalid value: "1web": a DNS-1035 label must consist of')


def test_configmap_immutable_data():
    old = {"metadata": {"name": "c"}, "immutable": True, "data": {"a": "1"}}
    new = {"metadata": {"name": "c"}, "immutable": True, "data": {"a": "2"}}
    assert rendered(CM.validate_update(new, old)) == ["data: Forbidden: field is immutable when `immutable` is set"]
    assert rendered(CM.validate({"metadata": {"name": "c"}, "data": {"bad key": "x"}}))[0].startswith(
        'data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters')


def test_lease_duration_positive():
    bad = {"metadata": {"name": "n1"}, "spec": {"leaseDurationSeconds": 0}}
    assert rendered(LEASE.validate(bad)) == ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"]


def crd(**over):
    obj = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object"}}}]},
    }
    obj["spec"].update(over)
    return obj


def test_crd_defaults_and_status():
    c = crd()
    CRD.default(c)
    CRD.prepare_for_create(c)
    assert c["spec"]["names"] == {"plural": "widgets", "kind": "Widget", "singular": "widget", "listKind": "WidgetList"}
    assert c["spec"]["conversion"] == {"strategy": "None"}
    assert c["status"]["storedVersions"] == ["v1"]
    assert CRD.validate(c) == []


@pytest.mark.parametrize(
    "over, field",
    [
        pytest.param({"group": "other.com"}, "metadata.name", id="name-must-be-plural-dot-group"),
        pytest.param({"scope": "Galaxy"}, "spec.scope", id="bad-scope"),
        pytest.param({"versions": [{"name": "v1", "served": True, "storage": False}]}, "spec.versions",
                     id="needs-one-storage-version"),
    ],
)
def test_crd_validation(over, field):
    c = crd(**over)
    CRD.default(c)
    assert field in [e["field"] for e in CRD.validate(c)]


def test_node_allocatable_defaults_to_capacity():
    n = node()
    NODE.default(n)
    assert n["status"]["allocatable"] == {"cpu": "4", "memory": "32Gi", "pods": "110"}


def test_service_create_fills_single_stack_ipv4():
    s = svc(ports=[{"port": 80}])
    SVC.default(s)
    SVC.prepare_for_create(s)
    assert s["spec"]["ipFamilyPolicy"] == "SingleStack" and s["spec"]["ipFamilies"] == ["IPv4"]
    assert s["status"] == {"loadBalancer": {}}


EV = strategy_for("", "Event")
EV1 = strategy_for("events.k8s.io", "Event")


@pytest.mark.parametrize(
    "obj, expected",
    [
        pytest.param({"metadata": {"name": "e", "namespace": "default"},
                      "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "reason": "Started"},
                     [], id="old-style-event-ok"),
        pytest.param({"metadata": {"name": "e", "namespace": "default"},
                      "involvedObject": {"kind": "Pod", "name": "p", "namespace": "other"}},
                     ['involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
                     id="namespace-mismatch"),
        pytest.param({"metadata": {"name": "e", "namespace": "default"}, "eventTime": "2026-01-01T00:00:00.000000Z",
                      "involvedObject": {"kind": "Node", "name": "n1"}},
                     # upstream's internal field name, and IsQualifiedName("")'s two messages
                     ["reportingController: Required value",
                      'reportingController: Invalid value: "": name part must be non-empty',
                      'reportingController: Invalid value: "": name part ' + QNAME_CHAR_MSG,
                      "reportingInstance: Required value", "action: Required value", "reason: Required value"],
                     id="new-style-core-event-needs-reporting"),
        pytest.param({"metadata": {"name": "e", "namespace": "default"}, "eventTime": "2026-01-01T00:00:00.000000Z",
                      "involvedObject": {"kind": "Node", "name": "n1"}, "reportingComponent": "kubelet",
                      "reportingInstance": "i" * 129, "action": "a" * 129, "reason": "Started", "message": "m" * 1025},
                     ['reportingInstance: Invalid value: "": can have at most 128 characters',
                      'action: Invalid value: "": can have at most 128 characters',
                      'message: Invalid value: "": can have at most 1024 characters'], id="new-style-limits"),
    ],
)
def test_core_event_validation(obj, expected):
    assert rendered(EV.validate(obj)) == expected


def test_events_v1_create_converts_to_the_stored_core_event_under_the_strict_rules():
    good = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"},
            "eventTime": "2026-01-01T00:00:00.000000Z", "type": "Normal", "reason": "Scheduled", "action": "Binding",
            "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-n1",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
            "note": "Successfully assigned default/p to n1"}
    stored = EV1.convert_to_storage("v1", copy.deepcopy(good), creating=True)
    assert stored == {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"},
                      "eventTime": "2026-01-01T00:00:00.000000Z", "type": "Normal", "reason": "Scheduled",
                      "action": "Binding", "reportingComponent": "default-scheduler",
                      "reportingInstance": "default-scheduler-n1",
                      "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
                      "message": "Successfully assigned default/p to n1"}
    assert EV.validate(stored) == []
    assert EV1.convert_from_storage("v1", stored) == good
    # upstream's causes: legacyValidateEvent's first, then ValidateEventCreate's strict ones
    bad = dict(good, type="Info", note="x" * 1025, deprecatedCount=3)
    with pytest.raises(InvalidError) as e:
        EV1.convert_to_storage("v1", copy.deepcopy(bad), creating=True)
    assert rendered(e.value.causes) == ['message: Invalid value: "": can have at most 1024 characters',
                                        'type: Invalid value: "": has invalid value: Info',
                                        'count: Invalid value: "": needs to be unset']
    # an update through events.k8s.io/v1 converts without the create rules
    assert EV1.convert_to_storage("v1", copy.deepcopy(bad))["count"] == 3


def test_events_v1_update_renders_immutable_values_as_upstream_field_errors():
    old = {"metadata": {"name": "e", "namespace": "default"}, "reason": "Pulled", "count": 1,
           "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p", "apiVersion": "v1"},
           "firstTimestamp": "2026-01-02T03:04:05Z", "eventTime": "2026-01-02T03:04:05.120000Z"}
    new = dict(old, involvedObject=dict(old["involvedObject"], name="q"), firstTimestamp="2026-01-02T03:04:06Z",
               count=2, eventTime=None, source={"component": "kubelet"})
    assert EV1.validate_served_update(old, old) == []
    assert rendered(EV1.validate_served_update(new, old)) == [
        'involvedObject: Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"default", Name:"q", UID:"", '
        'APIVersion:"v1", ResourceVersion:"", FieldPath:""}: field is immutable',
        'source: Invalid value: core.EventSource{Component:"kubelet", Host:""}: field is immutable',
        "firstTimestamp: Invalid value: 2026-01-02 03:04:06 +0000 UTC: field is immutable",
        "count: Invalid value: 2: field is immutable",
        "eventTime: Invalid value: 0001-01-01 00:00:00 +0000 UTC: field is immutable",
    ]
    # the core/v1 strategy has no such rules
    assert EV.validate_served_update(new, old) == []
