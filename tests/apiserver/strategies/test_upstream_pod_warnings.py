"""Upstream's pod and pod-template warning tables (kubernetes/kubernetes v1.33), ported case by
case onto `apiserver.strategies.pod_warnings` and the strategies that call it.

- pkg/api/pod/warnings_test.go: TestWarnings (each case run twice, as upstream: `podspec_` through
  GetWarningsForPodTemplate with a nil path, `pod_` through GetWarningsForPod; compared as a
  multiset, as upstream compares length and set), TestTemplateOnlyWarnings, TestCheckForOverLap;
- pkg/registry/apps/statefulset/strategy_test.go: the revisionHistoryLimit warning case;
- pkg/registry/batch/cronjob/strategy_test.go: the TZ warning on update;
- the strategies' own rules (which update warns, under which path prefix), from
  pkg/registry/{apps/*,core/podtemplate,core/replicationcontroller,batch/*}/strategy.go.

Objects are written as the API stores them (JSON dicts); where upstream leaves a field at its Go
zero value the dict omits it. The GitRepoVolumeDriver gate is off by default in v1.33: the
"gitRepo" case (gate on) passes `git_repo_driver=True`.

Not ported: BenchmarkNoWarnings / BenchmarkWarnings as benchmarks (the first one's pod is asserted
below to warn nothing).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.strategies import strategy_for
from apiserver.strategies.net_warnings import get_warnings_for_ip
from apiserver.strategies.pod import apply_apparmor_version_skew
from apiserver.strategies.pod_warnings import (
    check_for_overlap,
    get_warnings_for_pod,
    get_warnings_for_pod_template,
    warnings_for_job_spec,
)
from minik3s.api.types import JsonDict

RES = {"cpu": "100m", "memory": "4m", "ephemeral-storage": "4m"}
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
               "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
ALWAYS = "Always"


def tmpl(spec: JsonDict | None = None, annotations: dict[str, str] | None = None) -> JsonDict:
    t: JsonDict = {"spec": spec or {}}
    if annotations is not None:
        t["metadata"] = {"annotations": annotations}
    return t


def vol(source: str, value: Any = None, name: str = "s") -> JsonDict:
    return {"name": name, source: {} if value is None else value}


def projected(*sources: JsonDict, name: str = "foo") -> JsonDict:
    return tmpl({"volumes": [{"name": name, "projected": {"sources": list(sources)}}]})


def cm(name: str, *paths: str) -> JsonDict:
    return {"configMap": {"name": name, "items": [{"key": f"k{i}", "path": p} for i, p in enumerate(paths)]}}


def secret(name: str, *paths: str) -> JsonDict:
    return {"secret": {"name": name, "items": [{"key": f"k{i}", "path": p} for i, p in enumerate(paths)]}}


def dapi(*paths: str) -> JsonDict:
    return {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}, "path": p}
                                      for p in paths]}}


def sat(path: str) -> JsonDict:
    return {"serviceAccountToken": {"path": path}}


def ports(*containers: list[JsonDict], init: bool = False, sidecar: bool = False) -> JsonDict:
    cs: list[JsonDict] = []
    for i, p in enumerate(containers):
        c: JsonDict = {"name": f"c{i}", "ports": p}
        if sidecar:
            c["restartPolicy"] = ALWAYS
        cs.append(c)
    return tmpl({"initContainers" if init else "containers": cs})


def port(cp: int, proto: str = "", hp: int = 0, ip: str = "", name: str = "") -> JsonDict:
    p: JsonDict = {"containerPort": cp}
    if proto:
        p["protocol"] = proto
    if hp:
        p["hostPort"] = hp
    if ip:
        p["hostIP"] = ip
    if name:
        p["name"] = name
    return p


NODE_LABELS = ["foo", "beta.kubernetes.io/arch", "beta.kubernetes.io/os", "failure-domain.beta.kubernetes.io/region",
               "failure-domain.beta.kubernetes.io/zone", "beta.kubernetes.io/instance-type"]
NODE_LABEL_MSGS = [
    'beta.kubernetes.io/arch is deprecated since v1.14; use "kubernetes.io/arch" instead',
    'beta.kubernetes.io/os is deprecated since v1.14; use "kubernetes.io/os" instead',
    'failure-domain.beta.kubernetes.io/region is deprecated since v1.17; use "topology.kubernetes.io/region" instead',
    'failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
    'beta.kubernetes.io/instance-type is deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
]
REQUIRED_TERM = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
PREFERRED_TERM = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference"
NULL_SEL = "a null labelSelector results in matching no pod"


def _affinity_null_selectors() -> JsonDict:
    terms = [{"labelSelector": {}}, {"topologyKey": "x"}]
    weighted = [{"weight": 1, "podAffinityTerm": {"labelSelector": {}}}, {"weight": 1, "podAffinityTerm": {}}]
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": terms,
                            "preferredDuringSchedulingIgnoredDuringExecution": weighted},
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": copy.deepcopy(terms),
                                "preferredDuringSchedulingIgnoredDuringExecution": copy.deepcopy(weighted)}}


def _nodeaffinity_value(value: str) -> JsonDict:
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
        "weight": 10, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": [value]}]}}]}}


def _dup_port_msgs(*pairs: tuple[str, str]) -> list[str]:
    return [f"{a}: duplicate port definition with {b}" for a, b in pairs]


def _dup_name(path: str, first: str) -> str:
    return (f'{path}: duplicate port name "test" with {first}, services and probes that select ports by name '
            f"will use {first}")


def _hostip(path: str, proto: str = "UDP") -> str:
    return f"{path}: hostIP set without hostPort: {{Name: HostPort:0 ContainerPort:80 Protocol:{proto} HostIP:10.0.0.1}}"


C00, C01, C02 = "spec.containers[0].ports[0]", "spec.containers[0].ports[1]", "spec.containers[0].ports[2]"
C10, C11 = "spec.containers[1].ports[0]", "spec.containers[1].ports[1]"
PROJ = 'volume "foo" (Projected): overlapping paths: '

# (name, template, old template, gitRepo driver on, expected)
CASES: list[tuple[str, JsonDict | None, JsonDict | None, bool, list[str]]] = [
    ("null", None, None, False, []),
    ("photon", tmpl({"volumes": [vol("photonPersistentDisk", name="p")]}), None, False,
     ["spec.volumes[0].photonPersistentDisk: deprecated in v1.11, non-functional in v1.16+"]),
    ("gitRepo", tmpl({"volumes": [vol("gitRepo")]}), None, True, ["spec.volumes[0].gitRepo: deprecated in v1.11"]),
    ("gitRepo plugin disabled", tmpl({"volumes": [vol("gitRepo")]}), None, False,
     ["spec.volumes[0].gitRepo: deprecated in v1.11, and disabled by default in v1.33+"]),
    ("scaleIO", tmpl({"volumes": [vol("scaleIO")]}), None, False,
     ["spec.volumes[0].scaleIO: deprecated in v1.16, non-functional in v1.22+"]),
    ("flocker", tmpl({"volumes": [vol("flocker")]}), None, False,
     ["spec.volumes[0].flocker: deprecated in v1.22, non-functional in v1.25+"]),
    ("storageOS", tmpl({"volumes": [vol("storageos")]}), None, False,
     ["spec.volumes[0].storageOS: deprecated in v1.22, non-functional in v1.25+"]),
    ("quobyte", tmpl({"volumes": [vol("quobyte")]}), None, False,
     ["spec.volumes[0].quobyte: deprecated in v1.22, non-functional in v1.25+"]),
    ("glusterfs", tmpl({"volumes": [vol("glusterfs")]}), None, False,
     ["spec.volumes[0].glusterfs: deprecated in v1.25, non-functional in v1.26+"]),
    ("CephFS", tmpl({"volumes": [vol("cephfs")]}), None, False,
     ["spec.volumes[0].cephfs: deprecated in v1.28, non-functional in v1.31+"]),
    ("rbd", tmpl({"volumes": [vol("rbd")]}), None, False,
     ["spec.volumes[0].rbd: deprecated in v1.28, non-functional in v1.31+"]),
    ("overlapping paths in a configmap volume",
     tmpl({"volumes": [{"name": "Test", "configMap": {"name": "foo", "items": [
         {"key": "foo", "path": "test"}, {"key": "bar", "path": "test"}]}}]}), None, False,
     ['volume "Test" (ConfigMap "foo"): overlapping paths: "test" with "test"']),
    ("overlapping paths in a configmap volume - try to mount dir path into a file",
     tmpl({"volumes": [{"name": "Test", "configMap": {"name": "foo", "items": [
         {"key": "foo", "path": "test"}, {"key": "bar", "path": "test/app"}]}}]}), None, False,
     ['volume "Test" (ConfigMap "foo"): overlapping paths: "test/app" with "test"']),
    ("overlapping paths in a configmap volume - try to mount file into a dir path",
     tmpl({"volumes": [{"name": "Test", "configMap": {"name": "foo", "items": [
         {"key": "bar", "path": "test/app"}, {"key": "foo", "path": "test"}]}}]}), None, False,
     ['volume "Test" (ConfigMap "foo"): overlapping paths: "test" with "test/app"']),
    ("overlapping paths in a secret volume",
     tmpl({"volumes": [{"name": "Test", "secret": {"secretName": "foo", "items": [
         {"key": "foo", "path": "test"}, {"key": "bar", "path": "test"}]}}]}), None, False,
     ['volume "Test" (Secret "foo"): overlapping paths: "test" with "test"']),
    ("overlapping paths in a downward api volume",
     tmpl({"volumes": [{"name": "Test", "downwardAPI": {"items": [
         {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}, "path": "test"},
         {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}, "path": "test"}]}}]}), None, False,
     ['volume "Test" (DownwardAPI): overlapping paths: "test" with "test"']),
    ("overlapping paths in projected volume - service account and config",
     projected(cm("Test", "test"), sat("test")), None, False,
     [PROJ + '"test" (ServiceAccountToken) with "test" (ConfigMap "Test")']),
    ("overlapping paths in projected volume volume: service account dir and config file",
     projected(cm("Test", "test"), sat("test/file")), None, False,
     [PROJ + '"test/file" (ServiceAccountToken) with "test" (ConfigMap "Test")']),
    ("overlapping paths in projected volume - service account file and config dir",
     projected(cm("Test", "test/file"), sat("test")), None, False,
     [PROJ + '"test" (ServiceAccountToken) with "test/file" (ConfigMap "Test")']),
    ("overlapping paths in projected volume - service account and secret",
     projected(secret("Test", "test"), sat("test")), None, False,
     [PROJ + '"test" (ServiceAccountToken) with "test" (Secret "Test")']),
    ("overlapping paths in projected volume - service account and downward api",
     projected(dapi("test"), sat("test")), None, False,
     [PROJ + '"test" (ServiceAccountToken) with "test" (DownwardAPI)']),
    ("overlapping paths in projected volume - service account and cluster trust bundle",
     projected({"clusterTrustBundle": {"name": "Test", "path": "test"}}, sat("test")), None, False,
     [PROJ + '"test" (ServiceAccountToken) with "test" (ClusterTrustBundle "Test")']),
    ("overlapping paths in projected volume - service account and cluster trust bundle with signer name",
     projected({"clusterTrustBundle": {"signerName": "Test", "path": "test"}}, sat("test")), None, False,
     [PROJ + '"test" (ServiceAccountToken) with "test" (ClusterTrustBundle "Test")']),
    ("overlapping paths in projected volume - secret and config map",
     projected(secret("TestSecret", "test"), cm("TestConfigMap", "test/test1")), None, False,
     [PROJ + '"test/test1" (ConfigMap "TestConfigMap") with "test" (Secret "TestSecret")']),
    ("overlapping paths in projected volume - config map and downward api",
     projected(secret("TestSecret", "test"), dapi("test/test2")), None, False,
     [PROJ + '"test/test2" (DownwardAPI) with "test" (Secret "TestSecret")']),
    ("overlapping paths in projected volume - downward api and cluster thrust bundle api",
     projected(dapi("test/test2"), {"clusterTrustBundle": {"name": "Test", "path": "test"}}), None, False,
     [PROJ + '"test" (ClusterTrustBundle "Test") with "test/test2" (DownwardAPI)']),
    ("overlapping paths in projected volume - multiple sources",
     projected({"clusterTrustBundle": {"signerName": "Test", "path": "test/test"}}, dapi("test"),
               secret("Test", "test"), sat("test")), None, False,
     [PROJ + '"test" (DownwardAPI) with "test/test" (ClusterTrustBundle "Test")',
      PROJ + '"test" (Secret "Test") with "test/test" (ClusterTrustBundle "Test")',
      PROJ + '"test" (Secret "Test") with "test" (DownwardAPI)',
      PROJ + '"test" (ServiceAccountToken) with "test/test" (ClusterTrustBundle "Test")',
      PROJ + '"test" (ServiceAccountToken) with "test" (DownwardAPI)',
      PROJ + '"test" (ServiceAccountToken) with "test" (Secret "Test")']),
    ("overlapping paths in projected volume - ServiceAccount vs. DownwardAPI",
     projected(sat("test/test2"), dapi("test", "test")), None, False,
     [PROJ + '"test" (DownwardAPI) with "test/test2" (ServiceAccountToken)',
      PROJ + '"test" (DownwardAPI) with "test/test2" (ServiceAccountToken)',
      PROJ + '"test" (DownwardAPI) with "test" (DownwardAPI)']),
    ("empty sources in projected volume", projected({}), None, False,
     ['volume "foo" (Projected) has no sources provided']),
    ("duplicate hostAlias", tmpl({"hostAliases": [{"ip": "1.1.1.1"}] * 3}), None, False,
     ['spec.hostAliases[1].ip: duplicate ip "1.1.1.1"', 'spec.hostAliases[2].ip: duplicate ip "1.1.1.1"']),
    ("duplicate imagePullSecret", tmpl({"imagePullSecrets": [{"name": "a"}] * 3}), None, False,
     ['spec.imagePullSecrets[1].name: duplicate name "a"', 'spec.imagePullSecrets[2].name: duplicate name "a"']),
    ("empty imagePullSecret", tmpl({"imagePullSecrets": [{}]}), None, False,
     ['spec.imagePullSecrets[0].name: invalid empty name ""']),
    ("duplicate env",
     tmpl({"initContainers": [{"env": [{"name": "a", "value": "a"}, {"name": "a", "value": "a"},
                                       {"name": "a", "value": "other"}, {"name": "a", "value": ""},
                                       {"name": "a", "value": "$(a)"}, {"name": "a", "valueFrom": {}},
                                       {"name": "a", "value": "$(a) $(a)"}]}],
           "containers": [{"env": [{"name": "b", "value": "b"}, {"name": "b", "value": "b"},
                                   {"name": "b", "value": "other"}, {"name": "b", "value": ""},
                                   {"name": "b", "value": "$(b)"}, {"name": "b", "valueFrom": {}},
                                   {"name": "b", "value": "$(b) $(b)"}]}]}), None, False,
     [f'spec.{kind}[0].env[{i}]: hides previous definition of "{n}", which may be dropped when using apply'
      for kind, n in (("initContainers", "a"), ("containers", "b")) for i in range(1, 6)]),
    ("fractional resources",
     tmpl({"initContainers": [{"resources": {"requests": RES, "limits": RES}}],
           "containers": [{"resources": {"requests": RES, "limits": RES}}], "overhead": RES}), None, False,
     [f'spec.{kind}[0].resources.{what}[{res}]: fractional byte value "4m" is invalid, must be an integer'
      for kind in ("initContainers", "containers") for what in ("requests", "limits")
      for res in ("ephemeral-storage", "memory")]
     + [f'spec.overhead[{res}]: fractional byte value "4m" is invalid, must be an integer'
        for res in ("ephemeral-storage", "memory")]),
    ("node labels in nodeSelector", tmpl({"nodeSelector": {k: "true" for k in NODE_LABELS[1:]}}), None, False,
     ['spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead',
      'spec.nodeSelector[beta.kubernetes.io/instance-type]: deprecated since v1.17; use '
      '"node.kubernetes.io/instance-type" instead',
      'spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead',
      'spec.nodeSelector[failure-domain.beta.kubernetes.io/region]: deprecated since v1.17; use '
      '"topology.kubernetes.io/region" instead',
      'spec.nodeSelector[failure-domain.beta.kubernetes.io/zone]: deprecated since v1.17; use '
      '"topology.kubernetes.io/zone" instead']),
    ("node labels in affinity requiredDuringSchedulingIgnoredDuringExecution",
     tmpl({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchExpressions": [{"key": k} for k in NODE_LABELS]}]}}}}), None, False,
     [f"{REQUIRED_TERM}.matchExpressions[{i + 1}].key: {m}" for i, m in enumerate(NODE_LABEL_MSGS)]),
    ("node labels in affinity preferredDuringSchedulingIgnoredDuringExecution",
     tmpl({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
         {"preference": {"matchExpressions": [{"key": k} for k in NODE_LABELS]}}]}}}), None, False,
     [f"{PREFERRED_TERM}.matchExpressions[{i + 1}].key: {m}" for i, m in enumerate(NODE_LABEL_MSGS)]),
    ("node labels in topologySpreadConstraints",
     tmpl({"topologySpreadConstraints": [{"topologyKey": k, "labelSelector": {}} for k in NODE_LABELS]}),
     None, False,
     [f"spec.topologySpreadConstraints[{i + 1}].topologyKey: {m}" for i, m in enumerate(NODE_LABEL_MSGS)]),
    ("annotations",
     tmpl({"containers": [{"name": "foo"}]}, {
         "foo": "bar", "scheduler.alpha.kubernetes.io/critical-pod": "true",
         "seccomp.security.alpha.kubernetes.io/pod": "default",
         "container.seccomp.security.alpha.kubernetes.io/foo": "default",
         "security.alpha.kubernetes.io/sysctls": "a,b,c", "security.alpha.kubernetes.io/unsafe-sysctls": "d,e,f"}),
     None, False,
     ['metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the '
      '"priorityClassName" field instead',
      'metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the '
      '"seccompProfile" field instead',
      'metadata.annotations[container.seccomp.security.alpha.kubernetes.io/foo]: non-functional in v1.27+; use the '
      '"seccompProfile" field instead',
      'metadata.annotations[security.alpha.kubernetes.io/sysctls]: non-functional in v1.11+; use the "sysctls" '
      "field instead",
      'metadata.annotations[security.alpha.kubernetes.io/unsafe-sysctls]: non-functional in v1.11+; use the '
      '"sysctls" field instead']),
    ("seccomp fields",
     tmpl({"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
           "containers": [{"name": "foo", "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}]},
          {"seccomp.security.alpha.kubernetes.io/pod": "default",
           "container.seccomp.security.alpha.kubernetes.io/foo": "default"}), None, False, []),
    ("pod with ephemeral volume source 200Mi",
     tmpl({"volumes": [{"name": "ephemeral-volume", "ephemeral": {"volumeClaimTemplate": {
         "spec": {"resources": {"requests": {"storage": "200Mi"}}}}}}]}), None, False, []),
    ("pod with ephemeral volume source 200m",
     tmpl({"volumes": [{"name": "ephemeral-volume", "ephemeral": {"volumeClaimTemplate": {
         "spec": {"resources": {"requests": {"storage": "200m"}}}}}}]}), None, False,
     ['spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]: fractional byte value '
      '"200m" is invalid, must be an integer']),
    ("terminationGracePeriodSeconds is negative", tmpl({"terminationGracePeriodSeconds": -1}), None, False,
     ["spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"]),
    ("null LabelSelector in topologySpreadConstraints",
     tmpl({"topologySpreadConstraints": [{"labelSelector": {}}, {}]}), None, False,
     [f"spec.topologySpreadConstraints[1].labelSelector: {NULL_SEL}"]),
    ("null LabelSelector in PodAffinity", tmpl({"affinity": _affinity_null_selectors()}), None, False,
     [f"spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[1].labelSelector: {NULL_SEL}",
      f"spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].podAffinityTerm.labelSelector: "
      f"{NULL_SEL}",
      f"spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[1].labelSelector: {NULL_SEL}",
      f"spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].podAffinityTerm."
      f"labelSelector: {NULL_SEL}"]),
    ("container no ports", ports([]), None, False, []),
    ("one container, one port", ports([port(80, hp=80)]), None, False, []),
    ("one container, two ports, same protocol, different ports", ports([port(80, "UDP"), port(81, "UDP")]),
     None, False, []),
    ("one container, two ports, different protocols, same port", ports([port(80, "UDP"), port(80, "TCP")]),
     None, False, []),
    ("one container, two ports, same protocol, same port, different hostport",
     ports([port(80, "TCP", 80), port(80, "TCP", 81)]), None, False, []),
    ("one container, two ports, same protocol, port and hostPort, different hostIP",
     ports([port(80, "TCP", 80, "10.0.0.1"), port(80, "TCP", 80, "10.0.0.2")]), None, False, []),
    ("two containers, one port each, same protocol, different ports", ports([port(80, "UDP")], [port(81, "UDP")]),
     None, False, []),
    ("two containers, one port each, different protocols, same port", ports([port(80, "UDP")], [port(80, "TCP")]),
     None, False, []),
    ("two containers, one port each, same protocol, same port, different hostport",
     ports([port(80, "TCP", 80)], [port(80, "TCP", 81)]), None, False, []),
    ("two containers, one port each, same protocol, port and hostPort, different hostIP",
     ports([port(80, "TCP", 80, "10.0.0.1")], [port(80, "TCP", 80, "10.0.0.2")]), None, False, []),
    ("duplicate container ports with same port and protocol", ports([port(80, "UDP"), port(80, "UDP")]),
     None, False, _dup_port_msgs((C01, C00))),
    ("duplicate container ports with same port, hostPort and protocol",
     ports([port(80, "UDP", 80), port(80, "UDP", 80)]), None, False, _dup_port_msgs((C01, C00))),
    ("duplicate container ports with same port, host port, host IP and protocol",
     ports([port(80, "UDP", 80, "10.0.0.1"), port(80, "UDP", 80, "10.0.0.1")]), None, False,
     _dup_port_msgs((C01, C00))),
    ("one container port hostIP set without host port set", ports([port(80, "UDP", ip="10.0.0.1")]), None, False,
     [_hostip(C00)]),
    ("duplicate container ports with one host port set and one without",
     ports([port(80, "UDP", 80, "10.0.0.1"), port(80, "UDP", ip="10.0.0.1")]), None, False,
     [f"{C01}: overlapping port definition with {C00}", _hostip(C01)]),
    ("duplicate container ports without one host IP set and two with",
     ports([port(80, "UDP", 80, "10.0.0.1"), port(80, "UDP", 80), port(80, "UDP", 80, "10.0.0.2")]), None, False,
     [f"{C01}: dangerously ambiguous port definition with {C00}",
      f"{C02}: dangerously ambiguous port definition with {C01}"]),
    ("duplicate container ports with one host IP set and one without",
     ports([port(80, "UDP", 80, "10.0.0.1"), port(80, "UDP", 80)]), None, False,
     [f"{C01}: dangerously ambiguous port definition with {C00}"]),
    ("duplicate containers with same port and protocol", ports([port(80, "UDP")], [port(80, "UDP")]), None, False,
     _dup_port_msgs((C10, C00))),
    ("duplicate containers with same port, hostPort and protocol",
     ports([port(80, "UDP", 80)], [port(80, "UDP", 80)]), None, False, _dup_port_msgs((C10, C00))),
    ("duplicate containers with same port, host port, host IP and protocol",
     ports([port(80, "UDP", 80, "10.0.0.1")], [port(80, "UDP", 80, "10.0.0.1")]), None, False,
     _dup_port_msgs((C10, C00))),
    ("duplicate containers with one host port set and one without",
     ports([port(80, "UDP", 80, "10.0.0.1")], [port(80, "UDP", ip="10.0.0.1")]), None, False,
     [f"{C10}: overlapping port definition with {C00}", _hostip(C10)]),
    ("duplicate container ports without one host IP set and one with (two containers)",
     ports([port(80, "UDP", 80)], [port(80, "UDP", 80, "10.0.0.1")]), None, False,
     [f"{C10}: dangerously ambiguous port definition with {C00}"]),
    ("duplicate container ports with one host IP set and one without (two containers)",
     ports([port(80, "UDP", 80, "10.0.0.1")], [port(80, "UDP", 80)]), None, False,
     [f"{C10}: dangerously ambiguous port definition with {C00}"]),
    ("create duplicate container ports in two containers",
     ports([port(80, "UDP", 80), port(180, "UDP", 80), port(80, "UDP", 80)], [port(80, "UDP", 80), port(80, "UDP", 80)]),
     None, False, _dup_port_msgs((C02, C00), (C10, C00), (C10, C02), (C11, C00), (C11, C02), (C11, C10))),
    ("update duplicate container ports in two containers",
     ports([port(80, "TCP", 80), port(180, "TCP", 80), port(80, "TCP", 80)], [port(80, "TCP", 80), port(80, "TCP", 80)]),
     ports([port(80, "TCP", 180), port(180, "TCP", 80), port(80, "TCP", 80)], [port(80, "TCP", 180), port(80, "TCP", 80)]),
     False, _dup_port_msgs((C02, C00), (C10, C00), (C10, C02), (C11, C00), (C11, C02), (C11, C10))),
    ("create duplicate container ports name in two containers",
     ports([port(80, "UDP", name="test")], [port(8090, "TCP", name="test")]), None, False, [_dup_name(C10, C00)]),
    ("update duplicate container ports name in two containers",
     ports([port(80, "UDP", name="test")], [port(8090, "UDP", name="test1"), port(8092, "UDP", name="test")]),
     ports([port(80, "UDP", name="test")], [port(8090, "UDP", name="test1")]), False, [_dup_name(C11, C00)]),
    ("create duplicate container ports name in two sidecar containers",
     ports([port(80, "UDP", name="test")], [port(8090, "TCP", name="test")], init=True, sidecar=True), None, False,
     [_dup_name("spec.initContainers[1].ports[0]", "spec.initContainers[0].ports[0]")]),
    ("update duplicate container ports name in two sidecar containers",
     ports([port(80, "UDP", name="test")], [port(8090, "UDP", name="test1"), port(8091, "UDP", name="test")],
           init=True, sidecar=True),
     ports([port(80, "UDP", name="test")], [port(8090, "UDP", name="test1")], sidecar=True), False,
     [_dup_name("spec.initContainers[1].ports[1]", "spec.initContainers[0].ports[0]")]),
    ("create duplicate container ports name in containers and sidecar containers",
     tmpl({"initContainers": [{"name": "foo1", "restartPolicy": ALWAYS, "ports": [port(80, "UDP", name="test")]}],
           "containers": [{"name": "foo", "ports": [port(8090, "TCP", name="test")]}]}), None, False,
     [_dup_name("spec.containers[0].ports[0]", "spec.initContainers[0].ports[0]")]),
    ("update duplicate container ports name in containers and sidecar containers",
     tmpl({"initContainers": [{"name": "foo1", "restartPolicy": ALWAYS, "ports": [port(80, "UDP", name="test")]}],
           "containers": [{"name": "foo", "ports": [port(8090, "UDP", name="test1"), port(8092, "UDP", name="test")]}]}),
     tmpl({"initContainers": [{"name": "foo1", "restartPolicy": ALWAYS, "ports": [port(80, "UDP", name="test")]}],
           "containers": [{"name": "foo", "ports": [port(8090, "UDP", name="test1")]}]}), False,
     [_dup_name("spec.containers[0].ports[1]", "spec.initContainers[0].ports[0]")]),
    ("creating pod with invalid value in nodeaffinity", tmpl({"affinity": _nodeaffinity_value("-1")}), None, False,
     [f"{PREFERRED_TERM}.matchExpressions[0].values[0]: -1 is invalid, {LABEL_VALUE}"]),
    ("updating pod with invalid value in nodeaffinity",
     tmpl({"affinity": _nodeaffinity_value("-1"), "schedulingGates": [{"name": "foo"}]}),
     tmpl({"affinity": _nodeaffinity_value("bar"), "schedulingGates": [{"name": "foo"}]}), False,
     [f"{PREFERRED_TERM}.matchExpressions[0].values[0]: -1 is invalid, {LABEL_VALUE}"]),
    ("dubious IP address formats",
     tmpl({"dnsConfig": {"nameservers": ["1.2.3.4", "05.06.07.08"]}, "hostAliases": [{"ip": "::ffff:1.2.3.4"}]}),
     None, False,
     ['spec.dnsConfig.nameservers[1]: non-standard IP address "05.06.07.08" will be considered invalid in a future '
      'Kubernetes release: use "5.6.7.8"',
      'spec.hostAliases[0].ip: non-standard IP address "::ffff:1.2.3.4" will be considered invalid in a future '
      'Kubernetes release: use "1.2.3.4"']),
]


@pytest.mark.parametrize(("name", "template", "old", "git_repo", "expected"), CASES, ids=[c[0] for c in CASES])
def test_warnings_podspec(name: str, template: JsonDict | None, old: JsonDict | None, git_repo: bool,
                          expected: list[str]) -> None:
    """TestWarnings, podspec_ half: GetWarningsForPodTemplate with a nil path."""
    actual = get_warnings_for_pod_template(None, template, old, git_repo_driver=git_repo)
    assert sorted(actual) == sorted(expected)


@pytest.mark.parametrize(("name", "template", "old", "git_repo", "expected"), CASES, ids=[c[0] for c in CASES])
def test_warnings_pod(name: str, template: JsonDict | None, old: JsonDict | None, git_repo: bool,
                      expected: list[str]) -> None:
    """TestWarnings, pod_ half: GetWarningsForPod on a pod with the template's metadata and spec."""
    pod = None if template is None else {"metadata": template.get("metadata") or {}, "spec": template["spec"]}
    assert sorted(get_warnings_for_pod(pod, {}, git_repo_driver=git_repo)) == sorted(expected)


APPARMOR = "container.apparmor.security.beta.kubernetes.io/foo"
TEMPLATE_ONLY: list[tuple[str, JsonDict, list[str]]] = [
    ("annotations", tmpl({"containers": [{"name": "foo"}]}, {APPARMOR: "unconfined"}),
     [f'template.metadata.annotations[{APPARMOR}]: deprecated since v1.30; use the "appArmorProfile" field instead']),
    ("AppArmor pod field",
     tmpl({"securityContext": {"appArmorProfile": {"type": "Unconfined"}}, "containers": [{"name": "foo"}]},
          {APPARMOR: "unconfined"}), []),
    ("AppArmor container field",
     tmpl({"containers": [{"name": "foo", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}]},
          {APPARMOR: "unconfined"}), []),
]


@pytest.mark.parametrize(("name", "template", "expected"), TEMPLATE_ONLY, ids=[c[0] for c in TEMPLATE_ONLY])
def test_template_only_warnings(name: str, template: JsonDict, expected: list[str]) -> None:
    """TestTemplateOnlyWarnings: the AppArmor annotation warns for a template (under its path),
    never through GetWarningsForPod (pods warn from the version-skew handling instead)."""
    assert sorted(get_warnings_for_pod_template("template", template)) == sorted(expected)
    assert get_warnings_for_pod({"metadata": template["metadata"], "spec": template["spec"]}, {}) == []


OVERLAP: list[tuple[str, list[tuple[str, str]], tuple[str, str], list[tuple[str, str]]]] = [
    ("exact match", [("path/path1", "src1")], ("path/path1", "src2"), [("path/path1", "src1")]),
    ("no match", [("path/path1", "src1")], ("path2/path1", "src2"), []),
    ("empty checkPaths", [], ("path2/path1", "src2"), []),
    ("empty string in checkPaths", [("", "src1")], ("path2/path1", "src2"), []),
    ("empty path", [("test", "src1")], ("", ""), []),
    ("empty strings in checkPaths and path", [("", "src1")], ("", ""), []),
    ("between file and dir", [("path/path1", "src1")], ("path", "src2"), [("path/path1", "src1")]),
    ("between dir and file", [("path", "src1")], ("path/path1", "src2"), [("path", "src1")]),
    ("multiple paths without overlap", [("path1/path", "src1"), ("path2/path", "src2"), ("path3/path", "src3")],
     ("path4/path", "src4"), []),
    ("multiple paths with 1 overlap", [("path1/path", "src1"), ("path2/path", "src2"), ("path3/path", "src3")],
     ("path3/path", "src4"), [("path3/path", "src3")]),
    ("multiple paths with multiple overlap", [("path/path1", "src1"), ("path/path2", "src2"), ("path/path3", "src3")],
     ("path", "src4"), [("path/path1", "src1"), ("path/path2", "src2"), ("path/path3", "src3")]),
    ("partial overlap", [("path1/path", "src1"), ("path2/path", "src2"), ("path3/path", "src3")],
     ("path101/path3", "src4"), []),
    ("partial overlap in path", [("dir/path1", "src1"), ("dir/path2", "src2"), ("dir/path3", "src3")],
     ("dir/path345", "src4"), []),
    ("trailing slash in path", [("path1/path3", "src1")], ("path1/path3/", "src2"), [("path1/path3", "src1")]),
    ("trailing slash in checkPaths", [("path1/path3/", "src1")], ("path1/path3", "src2"), [("path1/path3/", "src1")]),
]


@pytest.mark.parametrize(("name", "haystack", "needle", "expected"), OVERLAP, ids=[c[0] for c in OVERLAP])
def test_check_for_overlap(name: str, haystack: list[tuple[str, str]], needle: tuple[str, str],
                           expected: list[tuple[str, str]]) -> None:
    """TestCheckForOverLap (the sources are opaque labels here)."""
    def wrap(ps: tuple[str, str]) -> tuple[str, tuple[str, str | None]]:
        return (ps[0], (ps[1], None))

    found = check_for_overlap([wrap(h) for h in haystack], wrap(needle))
    assert found == [wrap(e) for e in expected]


def test_no_warnings_for_the_benchmark_pod() -> None:
    """BenchmarkNoWarnings' pod: every checked feature in use, none in a way that warns."""
    res = {"cpu": "100m", "memory": "4M", "ephemeral-storage": "4G"}
    env = [{"name": "a"}, {"name": "b"}]
    pod = {"metadata": {"annotations": {"foo": "bar"}}, "spec": {
        "nodeSelector": {"foo": "bar", "baz": "quux"},
        "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "foo"}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [{"preference": {"matchExpressions": [
                {"key": "foo"}]}}]}},
        "topologySpreadConstraints": [{"topologyKey": "foo", "labelSelector": {}}],
        "hostAliases": [{"ip": "1.1.1.1"}, {"ip": "2.2.2.2"}],
        "imagePullSecrets": [{"name": "secret1"}, {"name": "secret2"}],
        "initContainers": [{"name": f"init{i}", "env": env, "resources": {"requests": res, "limits": res}}
                           for i in (1, 2)],
        "containers": [{"name": f"container{i}", "env": env, "resources": {"requests": res, "limits": res}}
                       for i in (1, 2)],
        "overhead": res, "volumes": [{"name": "a"}, {"name": "b"}]}}
    assert get_warnings_for_pod(pod, {}) == []


# ---- other inputs the tables do not cover -----------------------------------------------------------------


def test_projected_source_without_paths_rechecks_the_previous_one() -> None:
    """Upstream keeps the previous source's paths when a source yields none (its variable lives
    outside the loop): a configMap without items after a token re-checks the token's path."""
    t = projected(sat("token"), {"configMap": {"name": "ca"}})
    assert get_warnings_for_pod_template(None, t) == [
        PROJ + '"token" (ServiceAccountToken) with "token" (ServiceAccountToken)']


def test_kube_api_access_volume_warns_nothing() -> None:
    t = projected(sat("token"), cm("kube-root-ca.crt", "ca.crt"), dapi("namespace"), name="kube-api-access-x")
    assert get_warnings_for_pod_template(None, t) == []


@pytest.mark.parametrize(("value", "expected"), [
    ("1.2.3.4", []),
    ("2001:db8::1", []),
    ("2001:DB8::1", ['f: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical format ("2001:db8::1")']),
    ("2001:db8:0:0:0:0:0:1", ['f: IPv6 address "2001:db8:0:0:0:0:0:1" should be in RFC 5952 canonical format '
                              '("2001:db8::1")']),
    ("010.0.0.1", ['f: non-standard IP address "010.0.0.1" will be considered invalid in a future Kubernetes '
                   'release: use "10.0.0.1"']),
    ("not-an-ip", []),
    ("fe80::1%eth0", []),
])
def test_ip_warnings(value: str, expected: list[str]) -> None:
    """validation.GetWarningsForIP (apimachinery ip_test.go's TestGetWarningsForIP forms)."""
    assert get_warnings_for_ip("f", value) == expected


def test_fractional_values_print_canonically() -> None:
    t = tmpl({"containers": [{"name": "c", "resources": {"requests": {"memory": "1.5"}, "limits": {"memory": "0.5Ki"}}}]})
    assert get_warnings_for_pod_template("spec.template", t) == [
        'spec.template.spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, '
        "must be an integer"]


def test_template_paths_are_prefixed() -> None:
    t = tmpl({"nodeSelector": {"beta.kubernetes.io/os": "linux"}}, {"scheduler.alpha.kubernetes.io/critical-pod": ""})
    assert get_warnings_for_pod_template("spec.jobTemplate.spec.template", t) == [
        'spec.jobTemplate.spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use '
        '"kubernetes.io/os" instead',
        "spec.jobTemplate.spec.template.metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: "
        'non-functional in v1.16+; use the "priorityClassName" field instead']


def test_job_spec_soft_limits() -> None:
    """WarningsForJobSpec: an Indexed Job past 10^5 completions and 10^4 parallelism."""
    spec = {"completionMode": "Indexed", "completions": 100_001, "parallelism": 10_001, "template": {"spec": {}}}
    assert warnings_for_job_spec("spec", spec) == [
        "spec: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, "
        "Kubernetes might not be able to track completedIndexes when a big number of indexes fail"]
    spec["parallelism"] = 10_000
    assert warnings_for_job_spec("spec", spec) == []


# ---- the pod strategy: AppArmor version skew and the name ------------------------------------------------


def test_pod_create_copies_apparmor_annotations_and_warns() -> None:
    """applyAppArmorVersionSkew: the annotation becomes the container's field and warns; one
    equal to the pod's profile is not copied and does not warn; an invalid one only warns."""
    pod: JsonDict = {"metadata": {"name": "p", "annotations": {
        "container.apparmor.security.beta.kubernetes.io/a": "localhost/prof",
        "container.apparmor.security.beta.kubernetes.io/b": "runtime/default",
        "container.apparmor.security.beta.kubernetes.io/c": "localhost/"}},
        "spec": {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
                 "containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}
    warnings = apply_apparmor_version_skew(pod)
    cs = pod["spec"]["containers"]
    assert cs[0]["securityContext"] == {"appArmorProfile": {"type": "Localhost", "localhostProfile": "prof"}}
    assert "securityContext" not in cs[1] and "securityContext" not in cs[2]
    assert warnings == [
        f'metadata.annotations[container.apparmor.security.beta.kubernetes.io/{n}]: deprecated since v1.30; use the '
        '"appArmorProfile" field instead' for n in ("a", "c")]
    windows: JsonDict = {"metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/a": "unconfined"}},
               "spec": {"os": {"name": "windows"}, "containers": [{"name": "a"}]}}
    assert apply_apparmor_version_skew(windows) == [] and "securityContext" not in windows["spec"]["containers"][0]


def test_pod_strategy_warns_skew_then_name_then_spec() -> None:
    s = strategy_for("", "Pod")
    pod = {"metadata": {"name": "a.b", "annotations": {"container.apparmor.security.beta.kubernetes.io/c": "unconfined"}},
           "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "X"}, {"name": "X", "value": "y"}]}]}}
    s.prepare_for_create(pod)
    assert s.warnings_on_create(pod) == [
        'metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: deprecated since v1.30; use the '
        '"appArmorProfile" field instead',
        "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is "
        "recommended: [must not contain dots]",
        'spec.containers[0].env[1]: hides previous definition of "X", which may be dropped when using apply']
    assert s.warnings_on_update(pod, pod) == []  # pods never warn on update


# ---- workload strategies -----------------------------------------------------------------------------------


DUP_ENV = {"spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "X"}, {"name": "X", "value": "y"}]}]}}


def _workload(kind: str, name: str = "w", generation: int = 1) -> JsonDict:
    meta = {"name": name, "generation": generation}
    if kind == "PodTemplate":
        return {"metadata": meta, "template": copy.deepcopy(DUP_ENV)}
    spec: JsonDict = {"template": copy.deepcopy(DUP_ENV)}
    if kind == "CronJob":
        spec = {"schedule": "* * * * *", "jobTemplate": {"spec": spec}}
    return {"metadata": meta, "spec": spec}


DUP_ENV_MSG = 'env[1]: hides previous definition of "X", which may be dropped when using apply'
NAME_MSG = ("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS "
            "label is recommended: [")
WORKLOADS = [
    # (group, kind, template path prefix, name warning)
    ("apps", "Deployment", "spec.template", True),
    ("apps", "ReplicaSet", "spec.template", True),
    ("apps", "StatefulSet", "spec.template", False),
    ("apps", "DaemonSet", "spec.template", False),
    ("", "ReplicationController", "spec.template", True),
    ("", "PodTemplate", "template", False),
    ("batch", "Job", "spec.template", True),
    ("batch", "CronJob", "spec.jobTemplate.spec.template", True),
]


@pytest.mark.parametrize(("group", "kind", "prefix", "named"), WORKLOADS, ids=[w[1] for w in WORKLOADS])
def test_workload_create_warnings(group: str, kind: str, prefix: str, named: bool) -> None:
    s = strategy_for(group, kind)
    warnings = s.warnings_on_create(_workload(kind, name="a.b"))
    assert f"{prefix}.spec.containers[0].{DUP_ENV_MSG}" in warnings
    assert any(w.startswith(NAME_MSG) for w in warnings) == named


@pytest.mark.parametrize(("group", "kind", "prefix", "named"), WORKLOADS, ids=[w[1] for w in WORKLOADS])
def test_workload_update_warns_only_when_the_template_changed(group: str, kind: str, prefix: str, named: bool) -> None:
    s = strategy_for(group, kind)
    old, new = _workload(kind), _workload(kind)
    assert s.warnings_on_update(new, old) == []
    new["metadata"]["generation"] = 2
    if kind == "DaemonSet":  # a DaemonSet counts template changes in its templateGeneration
        assert s.warnings_on_update(new, old) == []
        new["metadata"]["annotations"] = {"deprecated.daemonset.template.generation": "2"}
    assert s.warnings_on_update(new, old) == [f"{prefix}.spec.containers[0].{DUP_ENV_MSG}"]


def test_replication_controller_update_warns_about_the_old_template() -> None:
    """rcStrategy.WarningsOnUpdate passes the templates swapped: the old template is checked."""
    s = strategy_for("", "ReplicationController")
    old = _workload("ReplicationController")
    new = copy.deepcopy(old)
    new["metadata"]["generation"] = 2
    new["spec"]["template"]["spec"]["containers"][0]["env"] = []
    assert s.warnings_on_update(new, old) == [f"spec.template.spec.containers[0].{DUP_ENV_MSG}"]
    assert s.warnings_on_update(old | {"metadata": {"generation": 3}}, new) == []


def test_statefulset_revision_history_limit_and_claim_templates() -> None:
    """statefulset strategy_test "revisionHistoryLimit field validations on creation and
    updation", plus the claim templates' paths (no `.spec` on create, `.Spec` on update)."""
    s = strategy_for("apps", "StatefulSet")
    sts = {"metadata": {"name": "abc", "generation": 1}, "spec": {
        "revisionHistoryLimit": -2, "template": {"spec": {}},
        "volumeClaimTemplates": [{"metadata": {"name": "d"}, "spec": {"resources": {"requests": {"storage": "1.5"}}}}]}}
    limit = "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended"
    assert s.warnings_on_create(sts) == [
        'spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value "1500m" is invalid, must be '
        "an integer", limit]
    old = copy.deepcopy(sts)
    old["spec"]["revisionHistoryLimit"] = 2
    assert s.warnings_on_update(sts, old) == [
        'spec.volumeClaimTemplates[0].Spec.resources.requests[storage]: fractional byte value "1500m" is invalid, '
        "must be an integer", limit]


def test_cronjob_update_with_tz_schedule_warns() -> None:
    """cronjob strategy_test: an update of a CronJob whose schedule still names TZ warns."""
    s = strategy_for("batch", "CronJob")
    old: JsonDict = {"metadata": {"name": "c", "generation": 1},
                     "spec": {"schedule": "TZ=UTC 0 * * * *", "jobTemplate": {"spec": {"template": {"spec": {}}}}}}
    new = copy.deepcopy(old)
    assert s.warnings_on_update(new, old) == [
        "cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
        "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"]
    new["spec"]["schedule"] = "0 * * * *"
    assert s.warnings_on_update(new, old) == []
