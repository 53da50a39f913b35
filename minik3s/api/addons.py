"""K3s' packaged add-ons that run as workloads in kube-system (layer L2: the manifests as data).

Why: a K3s server deploys its packaged manifests at start (`/var/lib/rancher/k3s/server/
manifests`), so every K3s cluster has a `coredns` Deployment behind the `kube-dns` Service
(10.43.0.10, the nameserver in every pod's resolv.conf) and a `metrics-server` Deployment in
kube-system; `kubectl get pods -A` lists their pods, `kubectl cluster-info` names them, and
client libraries' own end-to-end suites (lightkube's, run against K3s) look for the
metrics-server pod. minik3s serves DNS names nowhere and answers metrics.k8s.io itself
(apiserver/handlers/metrics_api.py), so the pods here are simulated like any other: they are
scheduled, run on a simulated node and use its resources, as on K3s.

The manifests follow K3s v1.33's (coredns 1.12, metrics-server 0.7), written for this project:
the objects, names, labels, ports, probes, resources, priority classes and tolerations a user
sees. `minik3s server --disable coredns` / `--disable metrics-server` leave them out, as K3s'
`--disable` does. The RBAC objects of those manifests are not created (the simulated pods make
no API calls).
"""

from __future__ import annotations

from minik3s.api.types import JsonDict

COREDNS = "coredns"
METRICS_SERVER = "metrics-server"
ADDONS = (COREDNS, METRICS_SERVER)
CLUSTER_DNS_IP = "10.43.0.10"
_NS = "kube-system"
# the add-ons tolerate what K3s' manifests tolerate: CriticalAddonsOnly and the control plane
_TOLERATIONS = [
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
]

COREFILE = """.:53 {
    errors
    health
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
      pods insecure
      fallthrough in-addr.arpa ip6.arpa
    }
    hosts /etc/coredns/NodeHosts {
      ttl 60
      reload 15s
      fallthrough
    }
    prometheus :9153
    forward . /etc/resolv.conf
    cache 30
    loop
    reload
    loadbalance
    import /etc/coredns/custom/*.override
}
import /etc/coredns/custom/*.server
"""


def _meta(name: str, labels: dict[str, str] | None = None,
          annotations: dict[str, str] | None = None) -> JsonDict:
    meta: JsonDict = {"name": name, "namespace": _NS}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return meta


def _http_probe(path: str, port: int | str, scheme: str = "HTTP", **extra: int) -> JsonDict:
    return {"httpGet": {"path": path, "port": port, "scheme": scheme}, **extra}


def coredns_objects(node_hosts: str = "") -> list[tuple[str, JsonDict]]:
    """(resource plural, object) for the coredns add-on, in creation order."""
    labels = {"k8s-app": "kube-dns"}
    deployment: JsonDict = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": _meta("coredns", {"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"}),
        "spec": {
            "revisionHistoryLimit": 0,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "priorityClassName": "system-cluster-critical",
                    "serviceAccountName": "coredns",
                    "tolerations": [dict(t) for t in _TOLERATIONS],
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "topologySpreadConstraints": [{
                        "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                        "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": dict(labels)}}],
                    "containers": [{
                        "name": "coredns",
                        "image": "rancher/mirrored-coredns-coredns:1.12.1",
                        "imagePullPolicy": "IfNotPresent",
                        "resources": {"limits": {"memory": "170Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}},
                        "args": ["-conf", "/etc/coredns/Corefile"],
                        "volumeMounts": [
                            {"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True},
                            {"name": "custom-config-volume", "mountPath": "/etc/coredns/custom", "readOnly": True}],
                        "ports": [{"containerPort": 53, "name": "dns", "protocol": "UDP"},
                                  {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
                                  {"containerPort": 9153, "name": "metrics", "protocol": "TCP"}],
                        "securityContext": {"allowPrivilegeEscalation": False,
                                            "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["all"]},
                                            "readOnlyRootFilesystem": True},
                        "livenessProbe": _http_probe("/health", 8080, initialDelaySeconds=60, periodSeconds=10,
                                                     timeoutSeconds=1, successThreshold=1, failureThreshold=3),
                        "readinessProbe": _http_probe("/ready", 8181, periodSeconds=2, timeoutSeconds=1,
                                                      successThreshold=1, failureThreshold=3),
                    }],
                    "dnsPolicy": "Default",
                    "volumes": [
                        {"name": "config-volume", "configMap": {
                            "name": "coredns",
                            "items": [{"key": "Corefile", "path": "Corefile"},
                                      {"key": "NodeHosts", "path": "NodeHosts"}]}},
                        {"name": "custom-config-volume", "configMap": {"name": "coredns-custom", "optional": True}}],
                },
            },
        },
    }
    service: JsonDict = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": _meta("kube-dns", {"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true",
                                       "kubernetes.io/name": "CoreDNS"},
                          {"prometheus.io/port": "9153", "prometheus.io/scrape": "true"}),
        "spec": {"selector": {"k8s-app": "kube-dns"}, "clusterIP": CLUSTER_DNS_IP, "clusterIPs": [CLUSTER_DNS_IP],
                 "ports": [{"name": "dns", "port": 53, "protocol": "UDP"},
                           {"name": "dns-tcp", "port": 53, "protocol": "TCP"},
                           {"name": "metrics", "port": 9153, "protocol": "TCP"}],
                 "ipFamilyPolicy": "SingleStack"},
    }
    return [
        ("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta("coredns")}),
        ("configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("coredns"),
                        "data": {"Corefile": COREFILE, "NodeHosts": node_hosts}}),
        ("deployments.apps", deployment),
        ("services", service),
    ]


def metrics_server_objects() -> list[tuple[str, JsonDict]]:
    """(resource plural, object) for the metrics-server add-on, in creation order."""
    labels = {"k8s-app": "metrics-server"}
    deployment: JsonDict = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": _meta("metrics-server", dict(labels)),
        "spec": {
            "revisionHistoryLimit": 0,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}},
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"name": "metrics-server", "labels": dict(labels)},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "serviceAccountName": "metrics-server",
                    "tolerations": [dict(t) for t in _TOLERATIONS],
                    "volumes": [{"name": "tmp-dir", "emptyDir": {}}],
                    "containers": [{
                        "name": "metrics-server",
                        "image": "rancher/mirrored-metrics-server:v0.7.2",
                        "args": ["--cert-dir=/tmp", "--secure-port=10250",
                                 "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
                                 "--kubelet-use-node-status-port", "--metric-resolution=15s"],
                        "resources": {"requests": {"cpu": "100m", "memory": "70Mi"}},
                        "ports": [{"name": "https", "containerPort": 10250, "protocol": "TCP"}],
                        "readinessProbe": _http_probe("/readyz", "https", "HTTPS", periodSeconds=2,
                                                      failureThreshold=3, initialDelaySeconds=2),
                        "livenessProbe": _http_probe("/livez", "https", "HTTPS", periodSeconds=10,
                                                     failureThreshold=3, initialDelaySeconds=60),
                        "securityContext": {"readOnlyRootFilesystem": True, "runAsNonRoot": True,
                                            "runAsUser": 1000, "allowPrivilegeEscalation": False},
                        "volumeMounts": [{"name": "tmp-dir", "mountPath": "/tmp"}],
                    }],
                },
            },
        },
    }
    service: JsonDict = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": _meta("metrics-server", {"kubernetes.io/cluster-service": "true",
                                             "kubernetes.io/name": "Metrics-server"}),
        "spec": {"selector": dict(labels),
                 "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": "https"}]},
    }
    return [
        ("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta("metrics-server")}),
        ("deployments.apps", deployment),
        ("services", service),
    ]
