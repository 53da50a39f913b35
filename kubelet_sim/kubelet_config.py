"""The KubeletConfiguration a simulated kubelet runs with (layer L4, kubelet_sim), as its
`/configz` endpoint shows it under `kubeletconfig`.

Why: a kubelet registers its effective configuration with configz (cmd/kubelet initConfigz):
the internal config converted to kubelet.config.k8s.io/v1beta1, without kind/apiVersion, encoded
in the Go struct's field order. The conversion back from the internal type makes every
pointer field whose internal counterpart is a plain value non-nil, so `false` and `0` defaults
of those fields show (enableSystemLogQuery, seccompDefault, ...); plain fields with
`omitempty` drop their zero values; struct fields always show (`memorySwap: {}`,
`crashLoopBackOff: {}`, `imageMaximumGCAge: "0s"`).

What is in it: v1.33's SetDefaults_KubeletConfiguration (pkg/kubelet/apis/config/v1beta1),
with the feature gates at their v1.33 defaults (KubeletCrashLoopBackOffMax and
KubeletEnsureSecretPulledImages are alpha, off: their fields stay unset), then what the
simulation itself runs with: `maxPods` from the node's pod capacity (a kubelet reports its
maxPods as capacity), the lease duration, status update and report periods and the image cap of
the fleet's options, and the node's taints as `registerWithTaints`.

Worked example: a fleet node with capacity pods "32" renewing every 2 s shows
`"nodeStatusUpdateFrequency":"2s"`, `"maxPods":32`, everything else upstream's default.
"""

from __future__ import annotations

from typing import Any

from minik3s.api.quantity import QuantityError, int_value
from minik3s.api.types import JsonDict
from minik3s.utils.duration import format_duration

DEFAULT_MAX_PODS = 110
# v1.33 DefaultEvictionHard (pkg/kubelet/apis/config/v1beta1/defaults_linux.go), keys in the
# order Go encodes a map: sorted
DEFAULT_EVICTION_HARD = {"imagefs.available": "15%", "memory.available": "100Mi", "nodefs.available": "10%",
                         "nodefs.inodesFree": "5%"}


def _taint(t: JsonDict) -> JsonDict:
    """core/v1 Taint in its field order (key, value, effect, timeAdded; empty ones omitted)."""
    out: JsonDict = {"key": t.get("key", "")}
    if t.get("value"):
        out["value"] = t["value"]
    out["effect"] = t.get("effect", "")
    if t.get("timeAdded"):
        out["timeAdded"] = t["timeAdded"]
    return out


def max_pods(node: JsonDict) -> int:
    """The kubelet's maxPods: the node's `pods` capacity (the kubelet sets one from the other)."""
    raw: Any = ((node.get("status") or {}).get("capacity") or {}).get("pods")
    try:
        return int_value(raw) if raw is not None else DEFAULT_MAX_PODS
    except (QuantityError, TypeError, ValueError):
        return DEFAULT_MAX_PODS


def kubelet_configuration(node: JsonDict, *, node_status_update_frequency: float = 10.0,
                          node_status_report_frequency: float = 300.0, node_lease_duration_seconds: int = 40,
                          node_status_max_images: int = 50) -> JsonDict:
    """The configz view (v1beta1 KubeletConfiguration JSON, Go field order) of the kubelet of
    `node` (its manifest: capacity, taints) running with the given fleet figures."""
    taints = [_taint(t) for t in (node.get("spec") or {}).get("taints") or ()]
    cfg: JsonDict = {
        "enableServer": True,
        "podLogsDir": "/var/log/pods",
        "syncFrequency": "1m0s",
        "fileCheckFrequency": "20s",
        "httpCheckFrequency": "20s",
        "address": "0.0.0.0",
        "port": 10250,
        "authentication": {"x509": {}, "webhook": {"enabled": True, "cacheTTL": "2m0s"},
                           "anonymous": {"enabled": False}},
        "authorization": {"mode": "Webhook", "webhook": {"cacheAuthorizedTTL": "5m0s",
                                                          "cacheUnauthorizedTTL": "30s"}},
        "registryPullQPS": 5,
        "registryBurst": 10,
        "eventRecordQPS": 50,
        "eventBurst": 100,
        "enableDebuggingHandlers": True,
        "healthzPort": 10248,
        "healthzBindAddress": "127.0.0.1",
        "oomScoreAdj": -999,
        "streamingConnectionIdleTimeout": "4h0m0s",
        "nodeStatusUpdateFrequency": format_duration(node_status_update_frequency),
        "nodeStatusReportFrequency": format_duration(node_status_report_frequency),
        "nodeLeaseDurationSeconds": node_lease_duration_seconds,
        "imageMinimumGCAge": "2m0s",
        "imageMaximumGCAge": "0s",
        "imageGCHighThresholdPercent": 85,
        "imageGCLowThresholdPercent": 80,
        "volumeStatsAggPeriod": "1m0s",
        "cgroupsPerQOS": True,
        "cgroupDriver": "cgroupfs",
        "cpuManagerPolicy": "none",
        "cpuManagerReconcilePeriod": "10s",
        "memoryManagerPolicy": "None",
        "topologyManagerPolicy": "none",
        "topologyManagerScope": "container",
        "runtimeRequestTimeout": "2m0s",
        "hairpinMode": "promiscuous-bridge",
        "maxPods": max_pods(node),
        "podPidsLimit": -1,
        "resolvConf": "/etc/resolv.conf",
        "cpuCFSQuota": True,
        "cpuCFSQuotaPeriod": "100ms",
        "nodeStatusMaxImages": node_status_max_images,
        "maxOpenFiles": 1000000,
        "contentType": "application/vnd.kubernetes.protobuf",
        "kubeAPIQPS": 50,
        "kubeAPIBurst": 100,
        "serializeImagePulls": True,
        "evictionHard": dict(DEFAULT_EVICTION_HARD),
        "evictionPressureTransitionPeriod": "5m0s",
        "enableControllerAttachDetach": True,
        "makeIPTablesUtilChains": True,
        "iptablesMasqueradeBit": 14,
        "iptablesDropBit": 15,
        "failSwapOn": True,
        "memorySwap": {},
        "containerLogMaxSize": "10Mi",
        "containerLogMaxFiles": 5,
        "containerLogMaxWorkers": 1,
        "containerLogMonitorInterval": "10s",
        "configMapAndSecretChangeDetectionStrategy": "Watch",
        "enforceNodeAllocatable": ["pods"],
        "volumePluginDir": "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/",
        "logging": {"format": "text", "flushFrequency": "5s", "verbosity": 0,
                    "options": {"text": {"infoBufferSize": "0"}, "json": {"infoBufferSize": "0"}}},
        "enableSystemLogHandler": True,
        "enableSystemLogQuery": False,
        "shutdownGracePeriod": "0s",
        "shutdownGracePeriodCriticalPods": "0s",
        "crashLoopBackOff": {},
        "enableProfilingHandler": True,
        "enableDebugFlagsHandler": True,
        "seccompDefault": False,
        "memoryThrottlingFactor": 0.9,
    }
    if taints:
        cfg["registerWithTaints"] = taints
    cfg["registerNode"] = True
    cfg["localStorageCapacityIsolation"] = True
    cfg["containerRuntimeEndpoint"] = "unix:///run/containerd/containerd.sock"
    cfg["failCgroupV1"] = False
    return cfg
